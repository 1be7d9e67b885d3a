/* Everything in this module is a static inline function in include/idtk_byte_scan.h; a C target needs one
 * source file. */
#include "idtk_byte_scan.h"
