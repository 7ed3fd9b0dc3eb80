/* zip.c - ZIP reader for stored (uncompressed) entries over a read-only mapping or bytes in memory,
 * CRC-32 on demand. Must not trust one byte of the file: every offset and length is checked against
 * the bytes. */
#include "zip.h"

#include "byte_order.h"
#include "file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define END_BYTES 22u
#define LOCATOR64_BYTES 20u
#define END64_BYTES 56u
#define CENTRAL_BYTES 46u
#define LOCAL_BYTES 30u

struct ck_zip {
    char *path;
    const unsigned char *map; /* the whole archive: the mapping (ck_zip_open) or the caller's bytes */
    size_t map_bytes;
    ck_file_map file;         /* owned mapping; empty for ck_zip_open_memory */
    ck_zip_entry *entries;
    size_t n;
    const ck_zip_entry **by_name; /* [n]: the entries sorted by name (strcmp), for ck_zip_find */
};

/* 1 when [off, off + len) lies inside [0, limit), overflow-safe. */
static int inside(uint64_t off, uint64_t len, uint64_t limit)
{
    return off <= limit && len <= limit - off;
}

/* The central directory's (offset, size, entry count): from the end record, or from the ZIP64 end
 * record when a locator sits right before it. */
static int find_directory(const ck_zip *z, uint64_t *cd_off, uint64_t *cd_size, uint64_t *count,
                          ck_error *err)
{
    const unsigned char *m = z->map;
    size_t end = SIZE_MAX;
    for (size_t back = 0; z->map_bytes >= END_BYTES && back <= 65535 + END_BYTES; back++) {
        size_t at = z->map_bytes - END_BYTES - back;
        if (ck_le(m + at, 4) == SIG_END && at + END_BYTES + ck_le(m + at + 20, 2) == z->map_bytes) {
            end = at;
            break;
        }
        if (at == 0) {
            break;
        }
    }
    if (end == SIZE_MAX) {
        return ck_fail(err, CK_E_FORMAT, "%s: not a ZIP archive (no end of central directory record;"
                       " truncated?)", z->path);
    }
    *count = ck_le(m + end + 10, 2);
    *cd_size = ck_le(m + end + 12, 4);
    *cd_off = ck_le(m + end + 16, 4);
    if (end >= LOCATOR64_BYTES && ck_le(m + end - LOCATOR64_BYTES, 4) == SIG_LOCATOR64) {
        uint64_t off64 = ck_le(m + end - LOCATOR64_BYTES + 8, 8);
        if (!inside(off64, END64_BYTES, end - LOCATOR64_BYTES) || ck_le(m + off64, 4) != SIG_END64) {
            return ck_fail(err, CK_E_FORMAT, "%s: ZIP64 end record: offset %llu: bad or outside the "
                           "file", z->path, (unsigned long long)off64);
        }
        *count = ck_le(m + off64 + 32, 8);
        *cd_size = ck_le(m + off64 + 40, 8);
        *cd_off = ck_le(m + off64 + 48, 8);
    }
    if (!inside(*cd_off, *cd_size, end) || *count > *cd_size / CENTRAL_BYTES) {
        return ck_fail(err, CK_E_FORMAT, "%s: central directory: offset %llu size %llu entries %llu:"
                       " outside the file", z->path, (unsigned long long)*cd_off,
                       (unsigned long long)*cd_size, (unsigned long long)*count);
    }
    return CK_OK;
}

/* Replaces 0xFFFFFFFF sizes/offset by their ZIP64 extra field values (APPNOTE 4.5.3 order). */
static int apply_zip64(const ck_zip *z, const unsigned char *extra, size_t extra_len,
                       uint64_t *usize, uint64_t *csize, uint64_t *offset, const char *name,
                       ck_error *err)
{
    uint64_t *fields[3] = {usize, csize, offset};
    for (size_t at = 0; at + 4 <= extra_len;) {
        size_t id = ck_le(extra + at, 2), len = ck_le(extra + at + 2, 2);
        if (len > extra_len - at - 4) {
            break;
        }
        for (size_t f = 0, used = 0; id == 1 && f < 3; f++) {
            if (*fields[f] == 0xFFFFFFFFu) {
                if (used + 8 > len) {
                    return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": ZIP64 extra field too "
                                   "short", z->path, name);
                }
                *fields[f] = ck_le(extra + at + 4 + used, 8);
                used += 8;
            }
        }
        at += 4 + len;
    }
    return CK_OK;
}

/* Checks the local header at `offset` against the central one and sets e->data. */
static int bind_local(const ck_zip *z, ck_zip_entry *e, uint64_t offset, size_t name_len,
                      ck_error *err)
{
    const unsigned char *m = z->map;
    if (!inside(offset, LOCAL_BYTES, z->map_bytes) || ck_le(m + offset, 4) != SIG_LOCAL) {
        return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": local header at %llu: missing or "
                       "outside the file", z->path, e->name, (unsigned long long)offset);
    }
    uint64_t data = offset + LOCAL_BYTES + ck_le(m + offset + 26, 2) + ck_le(m + offset + 28, 2);
    if (ck_le(m + offset + 26, 2) != name_len || !inside(offset + LOCAL_BYTES, name_len, z->map_bytes) ||
        memcmp(m + offset + LOCAL_BYTES, e->name, name_len) != 0) {
        return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": local header name differs from the "
                       "central directory", z->path, e->name);
    }
    if (!inside(data, e->size, z->map_bytes)) {
        return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": data [%llu, +%zu) outside the file "
                       "(%zu bytes; truncated?)", z->path, e->name, (unsigned long long)data,
                       e->size, z->map_bytes);
    }
    e->data = m + data;
    return CK_OK;
}

/* Parses the central header at *at into e and advances *at past it. */
static int parse_central(const ck_zip *z, uint64_t *at, uint64_t cd_end, ck_zip_entry *e,
                         ck_error *err)
{
    const unsigned char *h = z->map + *at;
    if (!inside(*at, CENTRAL_BYTES, cd_end) || ck_le(h, 4) != SIG_CENTRAL) {
        return ck_fail(err, CK_E_FORMAT, "%s: central header at %llu: bad signature or truncated",
                       z->path, (unsigned long long)*at);
    }
    size_t name_len = ck_le(h + 28, 2), extra_len = ck_le(h + 30, 2), comment_len = ck_le(h + 32, 2);
    if (!inside(*at + CENTRAL_BYTES, name_len + extra_len + comment_len, cd_end)) {
        return ck_fail(err, CK_E_FORMAT, "%s: central header at %llu: name/extra outside the "
                       "directory", z->path, (unsigned long long)*at);
    }
    e->name = strndup((const char *)h + CENTRAL_BYTES, name_len);
    if (e->name == NULL || strlen(e->name) != name_len) {
        return ck_fail(err, e->name ? CK_E_FORMAT : CK_E_MEMORY, "%s: central header at %llu: name:"
                       " NUL byte or out of memory", z->path, (unsigned long long)*at);
    }
    uint64_t usize = ck_le(h + 24, 4), csize = ck_le(h + 20, 4), offset = ck_le(h + 42, 4);
    int rc = apply_zip64(z, h + CENTRAL_BYTES + name_len, extra_len, &usize, &csize, &offset,
                         e->name, err);
    if (rc != CK_OK) {
        return rc;
    }
    if (ck_le(h + 10, 2) != 0 || (ck_le(h + 8, 2) & 1u) != 0 || csize != usize || usize > SIZE_MAX) {
        return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": method %u flags 0x%x: only stored, "
                       "unencrypted entries are read", z->path, e->name, (unsigned)ck_le(h + 10, 2),
                       (unsigned)ck_le(h + 8, 2));
    }
    e->size = (size_t)usize;
    e->crc32 = (uint32_t)ck_le(h + 16, 4);
    *at += CENTRAL_BYTES + name_len + extra_len + comment_len;
    return bind_local(z, e, offset, name_len, err);
}

static int by_name_cmp(const void *a, const void *b)
{
    const ck_zip_entry *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* z->by_name: the entries sorted by name, O(n log n); two of one name are refused (they sort side
 * by side). */
static int index_names(ck_zip *z, ck_error *err)
{
    z->by_name = malloc((z->n + 1) * sizeof *z->by_name);
    if (z->by_name == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", z->path);
    }
    for (size_t i = 0; i < z->n; i++) {
        z->by_name[i] = &z->entries[i];
    }
    qsort(z->by_name, z->n, sizeof *z->by_name, by_name_cmp);
    for (size_t i = 1; i < z->n; i++) {
        if (strcmp(z->by_name[i - 1]->name, z->by_name[i]->name) == 0) {
            return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": duplicate name", z->path,
                           z->by_name[i]->name);
        }
    }
    return CK_OK;
}

/* Parses every central header and rejects duplicate names. */
static int read_directory(ck_zip *z, ck_error *err)
{
    uint64_t cd_off = 0, cd_size = 0, count = 0;
    int rc = find_directory(z, &cd_off, &cd_size, &count, err);
    if (rc != CK_OK) {
        return rc;
    }
    z->entries = calloc(count + 1, sizeof *z->entries);
    if (z->entries == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", z->path);
    }
    for (uint64_t at = cd_off; z->n < count && rc == CK_OK;) {
        ck_zip_entry *e = &z->entries[z->n++];
        rc = parse_central(z, &at, cd_off + cd_size, e, err);
    }
    return rc == CK_OK ? index_names(z, err) : rc;
}

/* An archive named `name` over bytes[n]; with map, it owns that mapping (closed on error too). */
static int open_bytes(ck_zip **out, const char *name, const ck_file_map *map, const void *bytes,
                      size_t n, ck_error *err)
{
    *out = NULL;
    ck_zip *z = calloc(1, sizeof *z);
    if (z == NULL || (z->path = strdup(name)) == NULL) {
        ck_zip_close(z);
        ck_file_map file = map != NULL ? *map : (ck_file_map){NULL, 0};
        ck_file_map_close(&file);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", name);
    }
    if (map != NULL) {
        z->file = *map;
    }
    z->map = bytes;
    z->map_bytes = n;
    int rc = n > 0 ? read_directory(z, err)
                   : ck_fail(err, CK_E_FORMAT, "%s: empty: not a ZIP archive", name);
    if (rc != CK_OK) {
        ck_zip_close(z);
        return rc;
    }
    *out = z;
    return CK_OK;
}

int ck_zip_open(ck_zip **out, const char *path, ck_error *err)
{
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "zip: null out or path");
    }
    ck_file_map map;
    int rc = ck_file_map_open(&map, path, err);
    return rc == CK_OK ? open_bytes(out, path, &map, map.data, map.bytes, err) : (*out = NULL, rc);
}

int ck_zip_open_memory(ck_zip **out, const void *bytes, size_t n, const char *name, ck_error *err)
{
    if (out == NULL || (bytes == NULL && n > 0)) {
        return ck_fail(err, CK_E_ARG, "zip: null out or bytes");
    }
    return open_bytes(out, name != NULL ? name : "<memory>", NULL, bytes, n, err);
}

void ck_zip_close(ck_zip *z)
{
    if (z == NULL) {
        return;
    }
    for (size_t i = 0; z->entries != NULL && i < z->n; i++) {
        free(z->entries[i].name);
    }
    ck_file_map_close(&z->file);
    free(z->entries);
    free(z->by_name);
    free(z->path);
    free(z);
}

size_t ck_zip_count(const ck_zip *z)
{
    return z != NULL ? z->n : 0;
}

const ck_zip_entry *ck_zip_at(const ck_zip *z, size_t i)
{
    return z != NULL && i < z->n ? &z->entries[i] : NULL;
}

const ck_zip_entry *ck_zip_find(const ck_zip *z, const char *name)
{
    if (z == NULL || name == NULL || z->n == 0 || z->by_name == NULL) {
        return NULL;
    }
    const ck_zip_entry key = {.name = (char *)name}, *kp = &key;
    const ck_zip_entry *const *hit = bsearch(&kp, z->by_name, z->n, sizeof *z->by_name,
                                             by_name_cmp);
    return hit != NULL ? *hit : NULL;
}

uint32_t ck_zip_crc32(const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) {
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        table[i] = c;
    }
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc = table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
    }
    return crc ^ 0xFFFFFFFFu;
}

int ck_zip_verify(const ck_zip *z, const ck_zip_entry *e, ck_error *err)
{
    if (z == NULL || e == NULL) {
        return ck_fail(err, CK_E_ARG, "zip: verify: null archive or entry");
    }
    uint32_t got = ck_zip_crc32(e->data, e->size);
    if (got != e->crc32) {
        return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": bad CRC-32: stored %08x, data has %08x",
                       z->path, e->name, (unsigned)e->crc32, (unsigned)got);
    }
    return CK_OK;
}
