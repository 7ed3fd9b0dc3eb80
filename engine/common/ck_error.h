/* ck_error.h - the engine's error record: a status code and one message naming what and where. */
#ifndef CK_ERROR_H
#define CK_ERROR_H

#include "ck_status.h"

typedef struct {
    int code;           /* CK_OK or a CK_E_* code from ck_status.h */
    char message[256];  /* "file:line: field: got X, expected Y"; empty when code is CK_OK */
} ck_error;

/* Records the error if `err` is non-null and holds none yet (the first error wins), and returns
 * `code`, so call sites read `return ck_fail(err, CK_E_IO, "%s: cannot open", path);`. */
int ck_fail(ck_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Clears `err` to CK_OK with an empty message. */
void ck_error_clear(ck_error *err);

#endif
