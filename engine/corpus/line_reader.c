/* line_reader.c - bounded line reader: endings, BOM, NUL bytes, the line-length limit; must not
 * interpret content. */
#include "line_reader.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct ck_line_reader {
    FILE *in;
    char *source;
    char *buf;       /* the current line, grown as needed up to CK_LINE_MAX_BYTES + 1 */
    size_t cap;
    size_t line_no;  /* number of the last line returned (first_line - 1 before the first) */
    unsigned long long offset; /* bytes consumed from `in` so far */
    unsigned long long limit;  /* bytes the reader may consume (a shard's range; ULLONG_MAX) */
    int bom_line;    /* 1 while the next line starts at byte 0 of the file */
};

int ck_line_reader_open(ck_line_reader **out, FILE *in, const char *source_name, ck_error *err)
{
    if (out == NULL || in == NULL) {
        return ck_fail(err, CK_E_ARG, "line reader: null %s", out == NULL ? "out" : "input stream");
    }
    *out = NULL;
    ck_line_reader *r = calloc(1, sizeof *r);
    const char *name = source_name != NULL ? source_name : "<input>";
    if (r == NULL || (r->source = strdup(name)) == NULL) {
        free(r);
        return ck_fail(err, CK_E_MEMORY, "%s: cannot allocate the line reader", name);
    }
    r->in = in;
    r->limit = ULLONG_MAX;
    r->bom_line = 1;
    *out = r;
    return CK_OK;
}

int ck_line_reader_open_range(ck_line_reader **out, FILE *in, const char *source_name,
                              unsigned long long start, unsigned long long limit,
                              size_t first_line, ck_error *err)
{
    if (first_line == 0) {
        return ck_fail(err, CK_E_ARG, "line reader: first_line must be at least 1");
    }
    int rc = ck_line_reader_open(out, in, source_name, err);
    if (rc == CK_OK) {
        (*out)->limit = limit;
        (*out)->line_no = first_line - 1;
        (*out)->bom_line = start == 0;
    }
    return rc;
}

/* Reads one line into r->buf: its bytes, then its "\n" if it has one; *got counts both, 0 at end of
 * input. Past CK_LINE_MAX_BYTES bytes before the "\n" the rest of the line is read and thrown away
 * (*too_long 1), so no line costs more memory than the limit. */
static int read_line(ck_line_reader *r, size_t *got, int *too_long, ck_error *err)
{
    size_t n = 0;
    int c = EOF;
    *too_long = 0;
    while (r->offset < r->limit && (c = getc_unlocked(r->in)) != EOF) {
        r->offset++;
        if (c != '\n' && n == CK_LINE_MAX_BYTES) {
            *too_long = 1;
            continue;
        }
        if (n + 2 > r->cap) { /* room for this byte and the terminating NUL */
            size_t cap = r->cap ? r->cap * 2 : 256;
            cap = cap > CK_LINE_MAX_BYTES + 2 ? CK_LINE_MAX_BYTES + 2 : cap;
            char *grown = realloc(r->buf, cap);
            if (grown == NULL) {
                return ck_fail(err, CK_E_MEMORY, "%s:%zu: out of memory for the line", r->source,
                               r->line_no + 1);
            }
            r->buf = grown;
            r->cap = cap;
        }
        r->buf[n++] = (char)c;
        if (c == '\n') {
            break;
        }
    }
    if (c == EOF && ferror(r->in)) {
        return ck_fail(err, CK_E_IO, "%s: read error after line %zu: %s", r->source, r->line_no,
                       strerror(errno));
    }
    *got = n;
    return CK_OK;
}

/* Drops the "\n" / "\r\n" ending and, on the line at byte 0 of the file, a UTF-8 byte order mark. */
static char *trim_line(ck_line_reader *r, size_t *len, int bom_line)
{
    char *s = r->buf;
    if (*len > 0 && s[*len - 1] == '\n') {
        (*len)--;
        if (*len > 0 && s[*len - 1] == '\r') {
            (*len)--;
        }
    }
    s[*len] = '\0';
    if (bom_line && *len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
        s += 3;
        *len -= 3;
    }
    return s;
}

int ck_line_reader_next(ck_line_reader *r, const char **line, size_t *len, size_t *line_no,
                        ck_error *err)
{
    if (r == NULL || line == NULL || len == NULL || line_no == NULL) {
        return ck_fail(err, CK_E_ARG, "line reader: null argument");
    }
    size_t n = 0;
    int too_long = 0;
    errno = 0;
    int rc = read_line(r, &n, &too_long, err);
    if (rc != CK_OK) {
        return rc;
    }
    if (n == 0 && !too_long) {
        return 0;
    }
    r->line_no++;
    *line_no = r->line_no;
    int bom_line = r->bom_line;
    r->bom_line = 0;
    if (too_long) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: line longer than %d bytes (the 1 MiB line limit)",
                       r->source, r->line_no, CK_LINE_MAX_BYTES);
    }
    const char *s = trim_line(r, &n, bom_line);
    const char *nul = memchr(s, '\0', n);
    if (nul != NULL) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: byte %zu: NUL byte in line", r->source, r->line_no,
                       (size_t)(nul - s) + 1);
    }
    *line = s;
    *len = n;
    return 1;
}

unsigned long long ck_line_reader_offset(const ck_line_reader *r)
{
    return r != NULL ? r->offset : 0;
}

const char *ck_line_reader_source(const ck_line_reader *r)
{
    return r != NULL ? r->source : "<input>";
}

void ck_line_reader_close(ck_line_reader *r)
{
    if (r != NULL) {
        free(r->buf);
        free(r->source);
        free(r);
    }
}
