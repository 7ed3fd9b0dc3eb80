/* shard.c - the split of an input into N line-aligned byte ranges (ck_shard_split); reads bytes
 * and counts newlines, interprets nothing else. */
#define _POSIX_C_SOURCE 200809L /* pread */
#include "shard.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (1 << 16)

/* floor(i * S / N) without overflow: (S / N) * i + ((S % N) * i) / N, exact for i <= N < 2^32. */
static unsigned long long boundary(unsigned long long S, size_t i, size_t n)
{
    unsigned long long q = S / n, r = S % n;
    return q * i + (r * i) / n;
}

/* Reads up to `want` bytes at `at` (looping over short reads). Bytes read, or -1 (errno set). */
static long long read_at(int fd, unsigned char *buf, size_t want, unsigned long long at)
{
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(fd, buf + got, want - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return -1;
        }
        if (r == 0) {
            break;
        }
        got += (size_t)r;
    }
    return (long long)got;
}

/* The first line start at or after b: b itself when b is 0 or byte b-1 is '\n', else the byte
 * after the next '\n' at or after b, else S. */
static int line_start_from(int fd, unsigned long long b, unsigned long long S,
                           unsigned long long *out)
{
    unsigned char buf[CHUNK];
    if (b == 0 || b >= S) {
        *out = b == 0 ? 0 : S;
        return 0;
    }
    for (unsigned long long at = b - 1; at < S;) {
        long long got = read_at(fd, buf, CHUNK, at);
        if (got <= 0) {
            return -1;
        }
        const unsigned char *nl = memchr(buf, '\n', (size_t)got);
        if (nl != NULL) {
            *out = at + (unsigned long long)(nl - buf) + 1;
            return 0;
        }
        at += (unsigned long long)got;
    }
    *out = S;
    return 0;
}

/* Counts '\n' in [from, to); *last is the byte at to-1 ('\n' when the span is empty). */
static int count_newlines(int fd, unsigned long long from, unsigned long long to, size_t *n,
                          int *last)
{
    unsigned char buf[CHUNK];
    *n = 0;
    *last = '\n';
    while (from < to) {
        size_t want = to - from < CHUNK ? (size_t)(to - from) : CHUNK;
        long long got = read_at(fd, buf, want, from);
        if (got <= 0) {
            return -1;
        }
        for (const unsigned char *p = buf, *e = buf + got; (p = memchr(p, '\n', (size_t)(e - p)));
             p++) {
            (*n)++;
        }
        *last = buf[got - 1];
        from += (unsigned long long)got;
    }
    return 0;
}

int ck_shard_split_file(FILE *in, const char *name, size_t index, size_t count, ck_shard_range *out,
                   ck_error *err)
{
    if (in == NULL || out == NULL || count == 0 || index >= count || count > CK_SHARDS_MAX) {
        return ck_fail(err, CK_E_ARG, "shard %zu/%zu: expected 0 <= index < count <= %d and an "
                       "input", index, count, CK_SHARDS_MAX);
    }
    memset(out, 0, sizeof *out);
    const char *src = name != NULL ? name : "<input>";
    int fd = fileno(in);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return ck_fail(err, CK_E_IO, "%s: a shard needs a regular input file", src);
    }
    unsigned long long S = (unsigned long long)st.st_size, start = 0, end = 0;
    size_t before = 0, inside = 0;
    int last_before = '\n', last = '\n';
    if (line_start_from(fd, boundary(S, index, count), S, &start) != 0 ||
        line_start_from(fd, boundary(S, index + 1, count), S, &end) != 0 ||
        count_newlines(fd, 0, start, &before, &last_before) != 0 ||
        count_newlines(fd, start, end, &inside, &last) != 0) {
        return ck_fail(err, CK_E_IO, "%s: read failed while splitting it: %s", src,
                       strerror(errno ? errno : EIO));
    }
    out->start = start;
    out->end = end;
    out->input_bytes = S;
    out->first_line = before + 1;
    /* a last line without its '\n' still counts (only the range that ends at S can hold one) */
    out->lines = inside + (end > start && last != '\n');
    return CK_OK;
}
