/* ck_error.c - fills ck_error records; never prints, never exits. */
#include "ck_error.h"

#include <stdarg.h>
#include <stdio.h>

int ck_fail(ck_error *err, int code, const char *fmt, ...)
{
    if (err != NULL && err->code == CK_OK) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

void ck_error_clear(ck_error *err)
{
    if (err != NULL) {
        err->code = CK_OK;
        err->message[0] = '\0';
    }
}
