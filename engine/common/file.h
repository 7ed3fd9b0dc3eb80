/* file.h - whole-file reads with one cap policy: the one way ckbatch reads a small file (circuit,
 * config.json, manifest, X-Ray profile) into memory. Knows no format. */
#ifndef CK_FILE_H
#define CK_FILE_H

#include <stddef.h>

#include "ck_error.h"

/* Reads the whole regular file at `path` into *text (malloc'd, NUL-terminated after its *len bytes;
 * the caller frees it). `what` names the file's role in messages ("circuit", "config.json", ...).
 * At most max_bytes are read: a longer file is refused, not truncated; the size is not trusted
 * from stat, the bytes are counted as read. A directory, FIFO or device is refused before any read
 * (a FIFO without a writer does not block). len may be NULL.
 * Errors: CK_E_ARG (null path, what or text); CK_E_IO "PATH: cannot open WHAT: REASON" (missing,
 * no permission), "PATH: WHAT is not a regular file", "PATH: read error: REASON"; CK_E_FORMAT
 * "PATH: larger than MAX bytes, the limit for a WHAT"; CK_E_MEMORY. On error *text is NULL. */
int ck_file_read_all(const char *path, const char *what, size_t max_bytes, char **text,
                     size_t *len, ck_error *err);

#endif
