// ThreadSanitizer's annotation interface (compiler-rt's tsan_interface.h), declared here so that Swift can tell
// ThreadSanitizer about synchronisation it cannot see. Only builds made with -DIDTK_TSAN (scripts/sanitize thread)
// call these; other builds never reference them, so nothing needs to link the sanitizer runtime.
#ifndef IDTK_CTHREADSANITIZER_SHIM_H
#define IDTK_CTHREADSANITIZER_SHIM_H

/// Everything this thread did so far happens before whatever a later `__tsan_acquire(addr)` is followed by.
void __tsan_release(void *addr);
/// Synchronises with every earlier `__tsan_release(addr)`.
void __tsan_acquire(void *addr);

#endif
