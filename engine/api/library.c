/* library.c - the one source of libckbatch.so itself: the rooms' objects are linked in whole
 * (engine/CMakeLists.txt); this file only proves the public header compiles as part of the library
 * with the exports turned on. */
#include "ckbatch.h"

#if !defined(CK_BUILDING_LIBRARY)
#error "libckbatch is built with CK_BUILDING_LIBRARY (cmake/CkFlags.cmake)"
#endif
