/* ck_error.h - how the engine fills the public ck_error: ck_fail, the first error wins. */
#ifndef CK_ERROR_H
#define CK_ERROR_H

#include "ck_status.h"

/* ck_error (code + message) and ck_error_clear are public: include/ckbatch.h. */

/* Records the error if `err` is non-null and holds none yet (the first error wins), and returns
 * `code`, so call sites read `return ck_fail(err, CK_E_IO, "%s: cannot open", path);`. */
int ck_fail(ck_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
