#include "idtk_build_info.h"

#ifndef IDTK_BUILD_COMMIT
#define IDTK_BUILD_COMMIT ""
#endif

const char *idtk_build_commit(void) { return IDTK_BUILD_COMMIT; }
