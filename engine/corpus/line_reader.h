/* line_reader.h - reads corpus lines (up to CK_LINE_MAX_BYTES) from a FILE*, or takes them one at a
 * time from the caller; knows nothing of UTF-8 or formats. */
#ifndef CK_LINE_READER_H
#define CK_LINE_READER_H

#include <stdio.h>

#include "ck_error.h"

/* Longest line accepted: bytes before its "\n" (a "\r" before it counts). Any real
 * line is far shorter (a line gives at most 510 phonemes per chunk; the longest paragraph of the
 * shared novels is about 5 KB); a longer one is an error line, never a buffer that grows with it. */
#define CK_LINE_MAX_BYTES (1 << 20)

typedef struct ck_line_reader ck_line_reader;

/* Opens a reader over `in` (not owned, not closed). `source_name` (copied; NULL reads "<input>")
 * prefixes messages. Errors: CK_E_ARG (null out or in), CK_E_MEMORY. */
int ck_line_reader_open(ck_line_reader **out, FILE *in, const char *source_name, ck_error *err);

/* The same over one byte range of a file (a shard: engine/corpus/shard.h): `in` is already
 * positioned at the range's first byte, `start` (a line start); at most `limit` bytes are read from
 * there (the range's size, ending at a line start or at the end of the file; ULLONG_MAX: to the
 * end); lines are numbered from first_line (1-based, global), and the BOM is stripped only when
 * start is 0 (byte 0 of the file, not the range's first line). Errors: as ck_line_reader_open, and
 * CK_E_ARG for first_line 0. */
int ck_line_reader_open_range(ck_line_reader **out, FILE *in, const char *source_name,
                              unsigned long long start, unsigned long long limit,
                              size_t first_line, ck_error *err);

/* Opens a reader without a stream: the caller hands it lines with ck_line_reader_take (an API
 * caller's array of lines), numbered from 1. Errors: CK_E_ARG (null out), CK_E_MEMORY. */
int ck_line_reader_open_lines(ck_line_reader **out, const char *source_name, ck_error *err);

/* Reads the next line into *line (NUL-terminated, owned by the reader, valid until the next call)
 * with its length in bytes *len, without the "\n" or "\r\n" ending; the file's leading UTF-8 BOM
 * (EF BB BF) is removed from the file's first line (at byte 0); a last line without a newline is returned as any other.
 * *line_no is 1-based. A line of more than CK_LINE_MAX_BYTES bytes before its "\n" is read
 * to its end and thrown away, never held: CK_E_INPUT "source:line: line longer than 1048576 bytes
 * (the 1 MiB line limit)". Returns 1 for a line, 0 at end of input, CK_E_INPUT for that or when the
 * line holds a NUL byte (message "source:line: byte B: NUL byte in line", B 1-based); after either
 * the line is consumed, *line_no set, and the next call goes on;
 * CK_E_IO on a read error, CK_E_MEMORY, CK_E_ARG for null pointers or a reader without a stream. */
int ck_line_reader_next(ck_line_reader *r, const char **line, size_t *len, size_t *line_no,
                        ck_error *err);

/* Takes text[0..len) as the next line of a reader opened by ck_line_reader_open_lines, as if it
 * were read from a stream with a "\n" after it: the same *line, *len, *line_no, returns and
 * messages as ck_line_reader_next (a trailing "\r" dropped, the BOM of line 1, the length limit, a
 * NUL byte), never 0. A "\n" inside text is the caller's to refuse. Errors: as
 * ck_line_reader_next; CK_E_ARG also for a reader over a stream. */
int ck_line_reader_take(ck_line_reader *r, const char *text, size_t len, const char **line,
                        size_t *out_len, size_t *line_no, ck_error *err);

/* Bytes consumed from the stream so far: the end of the last line returned (for progress). */
unsigned long long ck_line_reader_offset(const ck_line_reader *r);

/* Source name given at open (never NULL). */
const char *ck_line_reader_source(const ck_line_reader *r);

/* Frees the reader; accepts NULL. Does not close the FILE. */
void ck_line_reader_close(ck_line_reader *r);

#endif
