/* line_reader.c - getline-based line reader: endings, BOM, NUL bytes; must not interpret content. */
#include "line_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct ck_line_reader {
    FILE *in;
    char *source;
    char *buf;       /* getline's buffer, grown by getline */
    size_t cap;
    size_t line_no;  /* lines returned so far */
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
    *out = r;
    return CK_OK;
}

/* Drops the "\n" / "\r\n" ending and, on line 1, a UTF-8 byte order mark. */
static char *trim_line(ck_line_reader *r, size_t *len)
{
    char *s = r->buf;
    if (*len > 0 && s[*len - 1] == '\n') {
        (*len)--;
        if (*len > 0 && s[*len - 1] == '\r') {
            (*len)--;
        }
    }
    s[*len] = '\0';
    if (r->line_no == 1 && *len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
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
    errno = 0;
    ssize_t got = getline(&r->buf, &r->cap, r->in);
    if (got < 0) {
        if (errno == ENOMEM) {
            return ck_fail(err, CK_E_MEMORY, "%s:%zu: line too large for memory", r->source,
                           r->line_no + 1);
        }
        if (ferror(r->in)) {
            return ck_fail(err, CK_E_IO, "%s: read error after line %zu: %s", r->source, r->line_no,
                           strerror(errno));
        }
        return 0;
    }
    r->line_no++;
    *line_no = r->line_no;
    size_t n = (size_t)got;
    const char *s = trim_line(r, &n);
    const char *nul = memchr(s, '\0', n);
    if (nul != NULL) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: byte %zu: NUL byte in line", r->source, r->line_no,
                       (size_t)(nul - s) + 1);
    }
    *line = s;
    *len = n;
    return 1;
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
