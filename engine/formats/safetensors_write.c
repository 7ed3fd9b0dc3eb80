/* safetensors_write.c - the safetensors writer: header built here, data from memory or a spool, written
 * to a temporary name and renamed; must never leave a half-written file at the target path. */
#define _GNU_SOURCE /* copy_file_range */
#include "file.h"
#include "strbuf.h"
#include "safetensors.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static void buf_put_size(ck_strbuf *b, size_t v)
{
    char num[32];
    ck_strbuf_append(b, num, (size_t)snprintf(num, sizeof num, "%zu", v));
}

/* A JSON string literal (RFC 8259): quote, backslash and control characters escaped; other bytes,
 * UTF-8 included, copied as they are. */
static void buf_put_string(ck_strbuf *b, const char *s)
{
    ck_strbuf_append(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
        char esc[8];
        if (*c == '"' || *c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*c;
            ck_strbuf_append(b, esc, 2);
        } else if (*c < 0x20) {
            ck_strbuf_append(b, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", *c));
        } else {
            ck_strbuf_append(b, (const char *)c, 1);
        }
    }
    ck_strbuf_append(b, "\"", 1);
}

/* Checks one entry and sets *bytes = elements x dtype size; `segmented`: its bytes come from
 * segments (data and spool unused). */
static int check_entry(const char *path, const ck_st_entry *e, int segmented, size_t *bytes,
                       ck_error *err)
{
    const char *name = e->name != NULL ? e->name : "(null)";
    size_t elements = 1;
    if (e->name == NULL || e->name[0] == '\0' || strcmp(e->name, "__metadata__") == 0) {
        return ck_fail(err, CK_E_ARG, "%s: tensor \"%s\": name: null, empty or reserved", path, name);
    }
    if (e->dtype >= CK_DTYPE_OTHER || e->rank > CK_ST_MAX_RANK) {
        return ck_fail(err, CK_E_ARG, "%s: tensor \"%s\": dtype or rank: not writable", path, name);
    }
    if (!segmented && e->data == NULL && (e->spool == NULL || e->spool_offset < 0)) {
        return ck_fail(err, CK_E_ARG, "%s: tensor \"%s\": data: neither memory nor a spool", path,
                       name);
    }
    for (size_t i = 0; i < e->rank; i++) {
        if (e->shape[i] != 0 && elements > SIZE_MAX / e->shape[i]) {
            return ck_fail(err, CK_E_SIZE, "%s: tensor \"%s\": shape: overflows", path, name);
        }
        elements *= e->shape[i];
    }
    if (elements > SIZE_MAX / 8) {
        return ck_fail(err, CK_E_SIZE, "%s: tensor \"%s\": shape: bytes overflow", path, name);
    }
    *bytes = elements * ck_dtype_size(e->dtype);
    return CK_OK;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* CK_E_ARG naming a tensor name that two entries share, found by sorting the names (O(n log n)). */
static int check_unique_names(const char *path, const ck_st_entry *entries, size_t n, ck_error *err)
{
    const char **names = malloc((n + 1) * sizeof *names);
    int rc = CK_OK;
    if (names == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = entries[i].name;
    }
    qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 1; i < n && rc == CK_OK; i++) {
        if (strcmp(names[i - 1], names[i]) == 0) {
            rc = ck_fail(err, CK_E_ARG, "%s: tensor \"%s\": name: duplicate", path, names[i]);
        }
    }
    free(names);
    return rc;
}

/* Validates everything (names unique, meta keys unique) and fills bytes[i]. */
static int check_request(const char *path, const ck_st_entry *entries,
                         const ck_st_segments *segs, size_t n, const ck_st_meta *meta,
                         size_t n_meta, size_t *bytes, int layout_only, ck_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = check_entry(path, &entries[i], segs != NULL || layout_only, &bytes[i], err);
        if (rc != CK_OK) {
            return rc;
        }
        size_t sum = 0;
        for (size_t k = 0; segs != NULL && k < segs[i].n; k++) {
            sum += segs[i].segments[k].bytes;
        }
        if (segs != NULL && sum != bytes[i]) {
            return ck_fail(err, CK_E_SIZE, "%s: tensor \"%s\": segments hold %zu bytes, its shape "
                           "%zu", path, entries[i].name, sum, bytes[i]);
        }
        if (bytes[i] > SIZE_MAX - total) {
            return ck_fail(err, CK_E_SIZE, "%s: total data size overflows", path);
        }
        total += bytes[i];
    }
    int rc = check_unique_names(path, entries, n, err);
    if (rc != CK_OK) {
        return rc;
    }
    for (size_t i = 0; i < n_meta; i++) {
        if (meta[i].key == NULL || meta[i].value == NULL) {
            return ck_fail(err, CK_E_ARG, "%s: __metadata__[%zu]: null key or value", path, i);
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(meta[i].key, meta[j].key) == 0) {
                return ck_fail(err, CK_E_ARG, "%s: __metadata__: \"%s\": duplicate key", path,
                               meta[i].key);
            }
        }
    }
    return CK_OK;
}

/* {"__metadata__":{...},"name":{"dtype":..,"shape":[..],"data_offsets":[b,e]},...} + space padding. */
static void build_header(ck_strbuf *b, const ck_st_entry *entries, size_t n, const size_t *bytes,
                         const ck_st_meta *meta, size_t n_meta)
{
    size_t offset = 0;
    ck_strbuf_puts(b, "{");
    if (n_meta > 0) {
        ck_strbuf_puts(b, "\"__metadata__\":{");
        for (size_t i = 0; i < n_meta; i++) {
            ck_strbuf_puts(b, i ? "," : "");
            buf_put_string(b, meta[i].key);
            ck_strbuf_puts(b, ":");
            buf_put_string(b, meta[i].value);
        }
        ck_strbuf_puts(b, n > 0 ? "}," : "}");
    }
    for (size_t i = 0; i < n; i++) {
        ck_strbuf_puts(b, i ? "," : "");
        buf_put_string(b, entries[i].name);
        ck_strbuf_puts(b, ":{\"dtype\":");
        buf_put_string(b, ck_dtype_name(entries[i].dtype));
        ck_strbuf_puts(b, ",\"shape\":[");
        for (size_t d = 0; d < entries[i].rank; d++) {
            ck_strbuf_puts(b, d ? "," : "");
            buf_put_size(b, entries[i].shape[d]);
        }
        ck_strbuf_puts(b, "],\"data_offsets\":[");
        buf_put_size(b, offset);
        ck_strbuf_puts(b, ",");
        buf_put_size(b, offset + bytes[i]);
        ck_strbuf_puts(b, "]}");
        offset += bytes[i];
    }
    ck_strbuf_puts(b, "}");
    while (b->len % 8 != 0) {
        ck_strbuf_puts(b, " ");
    }
}

/* Copies `bytes` bytes of e's spool (from spool_offset) to fp. */
static int copy_spool(FILE *fp, const ck_st_entry *e, size_t bytes)
{
    char chunk[1 << 16];
    if (fseek(e->spool, e->spool_offset, SEEK_SET) != 0) {
        return CK_E_IO;
    }
    while (bytes > 0) {
        size_t want = bytes < sizeof chunk ? bytes : sizeof chunk;
        if (fread(chunk, 1, want, e->spool) != want || fwrite(chunk, 1, want, fp) != want) {
            return CK_E_IO;
        }
        bytes -= want;
    }
    return CK_OK;
}

/* pread/pwrite copy of `left` bytes from fd at *in to out at *out, in pieces of 64 KiB. */
static int copy_plain(int fd, off_t *in, int out, off_t *at, size_t left)
{
    char chunk[1 << 16];
    while (left > 0) {
        size_t want = left < sizeof chunk ? left : sizeof chunk;
        ssize_t got = pread(fd, chunk, want, *in);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            errno = got == 0 ? EIO : errno;
            return -1;
        }
        for (ssize_t done = 0; done < got;) {
            ssize_t w = pwrite(out, chunk + done, (size_t)(got - done), *at);
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w <= 0) {
                errno = w == 0 ? ENOSPC : errno;
                return -1;
            }
            done += w;
            *at += w;
        }
        *in += got;
        left -= (size_t)got;
    }
    return 0;
}

/* Appends segment g to the file under fp (flushed; positioned at its end afterwards):
 * copy_file_range in calls of at most CK_IO_MAX_CALL bytes, looping over short counts; where the
 * kernel or file systems cannot (EXDEV, ENOSYS, EINVAL, EOPNOTSUPP), pread/pwrite. 0 or -1. */
static int copy_segment(FILE *fp, const ck_st_segment *g)
{
    int out = fileno(fp);
    off_t at = ftello(fp), in = (off_t)g->offset;
    size_t left = g->bytes;
    if (at < 0) {
        return -1;
    }
    while (left > 0) {
        size_t want = left < CK_IO_MAX_CALL ? left : CK_IO_MAX_CALL;
        ssize_t got = copy_file_range(g->fd, &in, out, &at, want, 0);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                        errno == EOPNOTSUPP)) {
            if (copy_plain(g->fd, &in, out, &at, left) != 0) {
                return -1;
            }
            break;
        }
        if (got <= 0) {
            errno = got == 0 ? EIO : errno; /* 0: the source ended before the segment did */
            return -1;
        }
        left -= (size_t)got;
    }
    return fseeko(fp, at, SEEK_SET);
}

/* Tensor i's bytes: from memory, its spool, or (segs) its segments. 1 when all were written. */
static int write_tensor(FILE *fp, const ck_st_entry *e, const ck_st_segments *segs, size_t bytes)
{
    if (segs != NULL) {
        int ok = fflush(fp) == 0;
        for (size_t k = 0; ok && k < segs->n; k++) {
            ok = copy_segment(fp, &segs->segments[k]) == 0;
        }
        return ok;
    }
    if (e->data != NULL) {
        const char *p = e->data;
        for (size_t done = 0; done < bytes;) {
            size_t want = bytes - done < CK_IO_MAX_CALL ? bytes - done : CK_IO_MAX_CALL;
            if (fwrite(p + done, 1, want, fp) != want) {
                return 0;
            }
            done += want;
        }
        return 1;
    }
    return copy_spool(fp, e, bytes) == CK_OK;
}

static int write_body(FILE *fp, const char *tmp, const ck_strbuf *h, const ck_st_entry *entries,
                      const ck_st_segments *segs, size_t n, const size_t *bytes, ck_error *err)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++) {
        len[i] = (unsigned char)((uint64_t)h->len >> (8 * i));
    }
    if (fwrite(len, 1, 8, fp) != 8 || fwrite(h->data, 1, h->len, fp) != h->len) {
        return ck_fail(err, CK_E_IO, "%s: write failed: %s", tmp, strerror(errno));
    }
    for (size_t i = 0; i < n; i++) {
        if (!write_tensor(fp, &entries[i], segs != NULL ? &segs[i] : NULL, bytes[i])) {
            return ck_fail(err, CK_E_IO, "%s: tensor \"%s\": data: write or source read failed: %s",
                           tmp, entries[i].name, strerror(errno));
        }
    }
    return CK_OK;
}

/* Writes the file under a temporary name (PATH.tmp.<pid>), then renames it onto path (file.h). */
static int write_atomic(const char *path, const ck_strbuf *h, const ck_st_entry *entries,
                        const ck_st_segments *segs, size_t n, const size_t *bytes, ck_error *err)
{
    ck_atomic_file a;
    int rc = ck_atomic_open(&a, path, NULL, err);
    if (rc != CK_OK) {
        return rc;
    }
    rc = write_body(a.f, a.tmp, h, entries, segs, n, bytes, err);
    if (rc != CK_OK) {
        ck_atomic_abort(&a);
        return rc;
    }
    return ck_atomic_commit(&a, err);
}

static int write_file(const char *path, const ck_st_entry *entries, const ck_st_segments *segs,
                      size_t n_entries, const ck_st_meta *meta, size_t n_meta, ck_error *err);

int ck_st_write(const char *path, const ck_st_entry *entries, size_t n_entries,
                const ck_st_meta *meta, size_t n_meta, ck_error *err)
{
    return write_file(path, entries, NULL, n_entries, meta, n_meta, err);
}

int ck_st_write_segments(const char *path, const ck_st_entry *entries, const ck_st_segments *segs,
                         size_t n_entries, const ck_st_meta *meta, size_t n_meta, ck_error *err)
{
    if (segs == NULL && n_entries > 0) {
        return ck_fail(err, CK_E_ARG, "safetensors: write: null segments");
    }
    return write_file(path, entries, segs, n_entries, meta, n_meta, err);
}

static int write_file(const char *path, const ck_st_entry *entries, const ck_st_segments *segs,
                      size_t n_entries, const ck_st_meta *meta, size_t n_meta, ck_error *err)
{
    ck_strbuf header = {0};
    size_t *bytes = NULL;
    int rc;
    if (path == NULL || (entries == NULL && n_entries > 0) || (meta == NULL && n_meta > 0)) {
        return ck_fail(err, CK_E_ARG, "safetensors: write: null path, entries or meta");
    }
    bytes = calloc(n_entries + 1, sizeof *bytes);
    if (bytes == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
        goto done;
    }
    rc = check_request(path, entries, segs, n_entries, meta, n_meta, bytes, 0, err);
    if (rc != CK_OK) {
        goto done;
    }
    build_header(&header, entries, n_entries, bytes, meta, n_meta);
    if (header.failed) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory building the header", path);
        goto done;
    }
    rc = write_atomic(path, &header, entries, segs, n_entries, bytes, err);
done:
    ck_strbuf_free(&header);
    free(bytes);
    return rc;
}

int ck_st_header(const ck_st_entry *entries, size_t n_entries, const ck_st_meta *meta,
                 size_t n_meta, unsigned char **out, size_t *len, ck_error *err)
{
    ck_strbuf header = {0};
    if (out == NULL || len == NULL || (entries == NULL && n_entries > 0) ||
        (meta == NULL && n_meta > 0)) {
        return ck_fail(err, CK_E_ARG, "safetensors: header: null entries, meta or out");
    }
    *out = NULL;
    *len = 0;
    size_t *bytes = calloc(n_entries + 1, sizeof *bytes);
    int rc = bytes != NULL ? check_request("safetensors header", entries, NULL, n_entries, meta,
                                           n_meta, bytes, 1, err)
                           : ck_fail(err, CK_E_MEMORY, "safetensors: header: out of memory");
    if (rc == CK_OK) {
        build_header(&header, entries, n_entries, bytes, meta, n_meta);
        unsigned char *b = header.failed ? NULL : malloc(8 + header.len);
        if (b == NULL) {
            rc = ck_fail(err, CK_E_MEMORY, "safetensors: header: out of memory");
        } else {
            for (int i = 0; i < 8; i++) {
                b[i] = (unsigned char)((uint64_t)header.len >> (8 * i));
            }
            memcpy(b + 8, header.data, header.len);
            *out = b;
            *len = 8 + header.len;
        }
    }
    ck_strbuf_free(&header);
    free(bytes);
    return rc;
}
