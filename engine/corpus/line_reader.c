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

static int open_any(ck_line_reader **out, FILE *in, const char *source_name, ck_error *err);

int ck_line_reader_open(ck_line_reader **out, FILE *in, const char *source_name, ck_error *err)
{
    if (out == NULL || in == NULL) {
        return ck_fail(err, CK_E_ARG, "line reader: null %s", out == NULL ? "out" : "input stream");
    }
    return open_any(out, in, source_name, err);
}

int ck_line_reader_open_lines(ck_line_reader **out, const char *source_name, ck_error *err)
{
    if (out == NULL) {
        return ck_fail(err, CK_E_ARG, "line reader: null out");
    }
    return open_any(out, NULL, source_name, err);
}

/* The reader over `in`, or over the caller's lines when in is NULL. */
static int open_any(ck_line_reader **out, FILE *in, const char *source_name, ck_error *err)
{
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

/* Grows r->buf to hold at least `need` bytes (never beyond CK_LINE_MAX_BYTES + 2). */
static int grow(ck_line_reader *r, size_t need, ck_error *err)
{
    if (need <= r->cap) {
        return CK_OK;
    }
    size_t cap = r->cap ? r->cap * 2 : 256;
    while (cap < need) {
        cap *= 2;
    }
    cap = cap > CK_LINE_MAX_BYTES + 2 ? CK_LINE_MAX_BYTES + 2 : cap;
    char *grown = realloc(r->buf, cap);
    if (grown == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s:%zu: out of memory for the line", r->source,
                       r->line_no + 1);
    }
    r->buf = grown;
    r->cap = cap;
    return CK_OK;
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
        int rc = grow(r, n + 2, err); /* room for this byte and the terminating NUL */
        if (rc != CK_OK) {
            return rc;
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

static int finish_line(ck_line_reader *r, size_t n, int too_long, const char **line, size_t *len,
                       size_t *line_no, ck_error *err);

int ck_line_reader_next(ck_line_reader *r, const char **line, size_t *len, size_t *line_no,
                        ck_error *err)
{
    if (r == NULL || line == NULL || len == NULL || line_no == NULL) {
        return ck_fail(err, CK_E_ARG, "line reader: null argument");
    }
    if (r->in == NULL) {
        return ck_fail(err, CK_E_ARG, "%s: lines come from the caller, not a stream", r->source);
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
    return finish_line(r, n, too_long, line, len, line_no, err);
}

int ck_line_reader_take(ck_line_reader *r, const char *text, size_t len, const char **line,
                        size_t *out_len, size_t *line_no, ck_error *err)
{
    if (r == NULL || text == NULL || line == NULL || out_len == NULL || line_no == NULL) {
        return ck_fail(err, CK_E_ARG, "line reader: null argument");
    }
    if (r->in != NULL) {
        return ck_fail(err, CK_E_ARG, "%s: lines come from the stream, not the caller", r->source);
    }
    int too_long = len > CK_LINE_MAX_BYTES;
    size_t n = too_long ? 0 : len + 1;
    int rc = too_long ? CK_OK : grow(r, n + 1, err);
    if (rc != CK_OK) {
        return rc;
    }
    if (!too_long) {
        memcpy(r->buf, text, len);
        r->buf[len] = '\n';
    }
    r->offset += len + 1;
    return finish_line(r, n, too_long, line, out_len, line_no, err);
}

/* Numbers the line read into r->buf (n bytes, its "\n" included) and trims it; the tail shared by
 * ck_line_reader_next and ck_line_reader_take. */
static int finish_line(ck_line_reader *r, size_t n, int too_long, const char **line, size_t *len,
                       size_t *line_no, ck_error *err)
{
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
