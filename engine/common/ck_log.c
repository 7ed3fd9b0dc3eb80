/* ck_log.c - formatted messages to the caller's log callback. */
#include "ck_log.h"

#include <stdarg.h>
#include <stdio.h>

void ck_log(ck_log_fn fn, void *ctx, ck_log_level level, const char *fmt, ...)
{
    if (fn == NULL) {
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fn(ctx, level, msg);
}
