#ifndef IDTK_CFUZZDRIVER_H
#define IDTK_CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry point for programs that have their own main (compiler-rt FuzzerInterface.h).
// SwiftPM gives every executable target a Swift `main`, so the fuzz targets start libFuzzer through this.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
