/* line_reader.h - reads corpus lines of any length from a FILE*; knows nothing of UTF-8 or formats. */
#ifndef CK_LINE_READER_H
#define CK_LINE_READER_H

#include <stdio.h>

#include "ck_error.h"

typedef struct ck_line_reader ck_line_reader;

/* Opens a reader over `in` (not owned, not closed). `source_name` (copied; NULL reads "<input>")
 * prefixes messages. Errors: CK_E_ARG (null out or in), CK_E_MEMORY. */
int ck_line_reader_open(ck_line_reader **out, FILE *in, const char *source_name, ck_error *err);

/* Reads the next line into *line (NUL-terminated, owned by the reader, valid until the next call)
 * with its length in bytes *len, without the "\n" or "\r\n" ending; the file's leading UTF-8 BOM
 * (EF BB BF) is removed from line 1; a last line without a newline is returned as any other.
 * *line_no is 1-based. Lines grow the buffer as needed (no length limit but memory).
 * Returns 1 for a line, 0 at end of input, CK_E_INPUT when the line holds a NUL byte (message
 * "source:line: byte B: NUL byte in line", B 1-based; the line is consumed, *line_no set, the next call goes on),
 * CK_E_IO on a read error, CK_E_MEMORY, CK_E_ARG for null pointers. */
int ck_line_reader_next(ck_line_reader *r, const char **line, size_t *len, size_t *line_no,
                        ck_error *err);

/* Source name given at open (never NULL). */
const char *ck_line_reader_source(const ck_line_reader *r);

/* Frees the reader; accepts NULL. Does not close the FILE. */
void ck_line_reader_close(ck_line_reader *r);

#endif
