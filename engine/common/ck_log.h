/* ck_log.h - how the engine speaks to the caller's ck_log_fn (ckbatch.h): formatted, one message
 * per call, nothing when no callback was given. The library prints nothing itself. */
#ifndef CK_LOG_H
#define CK_LOG_H

#include "ckbatch.h"

/* printf-style message to fn at level (nothing when fn is NULL); cut at 1 KiB, except at
 * CK_LOG_REPORT, whose text is passed whole by ck_log_text. */
void ck_log(ck_log_fn fn, void *ctx, ck_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
