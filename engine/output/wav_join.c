/* wav_join.c - ck_wav_join: WAV parts made by wav.c with one header joined into one file (the merge
 * of `speak --shard` outputs). Reads the chunk layout back, compares the headers, copies samples;
 * knows no model and no sidecar. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file.h"
#include "wav.h"

#define HEAD_MAX ((size_t)(1u << 20) + 4096) /* INFO's limit (wav.c) plus RIFF, fmt and fact */
#define COPY_BYTES ((size_t)1 << 20)

/* One part: its header bytes (everything before the samples) and where its sizes lie. */
typedef struct {
    FILE *f;
    unsigned char *head;
    size_t head_bytes;
    size_t fact_at;        /* offset of the fact chunk's frame count, 0 when none */
    size_t data_size_at;   /* offset of the data chunk's size */
    uint32_t block;        /* bytes per frame */
    uint64_t data_bytes;
} wav_part;

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_u32(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i) & 0xff);
    }
}

/* Walks the chunks of w->head[got] up to "data": fills fact_at, data_size_at, block, head_bytes. */
static int find_chunks(const char *path, wav_part *w, size_t got, ck_error *err)
{
    if (got < 12 || memcmp(w->head, "RIFF", 4) != 0 || memcmp(w->head + 8, "WAVE", 4) != 0) {
        return ck_fail(err, CK_E_FORMAT, "%s: not a RIFF/WAVE file", path);
    }
    for (size_t at = 12; at + 8 <= got;) {
        uint32_t size = get_u32(w->head + at + 4);
        if (memcmp(w->head + at, "data", 4) == 0) {
            w->data_size_at = at + 4;
            w->head_bytes = at + 8;
            return w->block > 0 ? CK_OK
                                : ck_fail(err, CK_E_FORMAT, "%s: WAV: no fmt chunk before data",
                                          path);
        }
        if (memcmp(w->head + at, "fmt ", 4) == 0 && size >= 16 && at + 8 + 16 <= got) {
            w->block = (uint32_t)w->head[at + 20] | (uint32_t)w->head[at + 21] << 8;
        } else if (memcmp(w->head + at, "fact", 4) == 0 && size == 4) {
            w->fact_at = at + 8;
        }
        at += 8 + (size_t)size + (size & 1);
    }
    return ck_fail(err, CK_E_FORMAT, "%s: WAV: no data chunk in the first %zu bytes", path, got);
}

/* Opens a part and reads its header; its sizes must agree with the file's size. */
static int open_part(const char *path, wav_part *w, ck_error *err)
{
    struct stat st;
    w->f = fopen(path, "rb");
    if (w->f == NULL || fstat(fileno(w->f), &st) != 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    size_t want = (uint64_t)st.st_size < HEAD_MAX ? (size_t)st.st_size : HEAD_MAX;
    if ((w->head = malloc(want + 1)) == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: cannot allocate", path);
    }
    size_t got = fread(w->head, 1, want, w->f);
    int rc = got == want ? find_chunks(path, w, got, err)
                         : ck_fail(err, CK_E_IO, "%s: read error", path);
    if (rc != CK_OK) {
        return rc;
    }
    w->data_bytes = (uint64_t)st.st_size - w->head_bytes;
    if (get_u32(w->head + 4) != (uint64_t)st.st_size - 8
        || get_u32(w->head + w->data_size_at) != w->data_bytes || w->data_bytes % w->block != 0
        || (w->fact_at > 0 && get_u32(w->head + w->fact_at) != w->data_bytes / w->block)) {
        return ck_fail(err, CK_E_FORMAT, "%s: WAV: RIFF, fact or data size disagrees with the "
                       "file's %llu bytes (cut or edited?)", path, (unsigned long long)st.st_size);
    }
    return fseek(w->f, (long)w->head_bytes, SEEK_SET) == 0
               ? CK_OK : ck_fail(err, CK_E_IO, "%s: cannot seek: %s", path, strerror(errno));
}

/* 1 when b's header equals a's apart from the three sizes. */
static int same_header(const wav_part *a, const wav_part *b)
{
    if (a->head_bytes != b->head_bytes || a->fact_at != b->fact_at
        || a->data_size_at != b->data_size_at) {
        return 0;
    }
    for (size_t i = 0; i < a->head_bytes; i++) {
        int size_byte = (i >= 4 && i < 8)
                        || (a->fact_at > 0 && i >= a->fact_at && i < a->fact_at + 4)
                        || (i >= a->data_size_at && i < a->data_size_at + 4);
        if (!size_byte && a->head[i] != b->head[i]) {
            return 0;
        }
    }
    return 1;
}

/* Writes the joined file: parts[0]'s header with the totals, then each part's samples. */
static int write_joined(const char *output, wav_part *parts, size_t n, uint64_t data,
                        ck_error *err)
{
    wav_part *h = &parts[0];
    set_u32(h->head + 4, h->head_bytes + data - 8);
    set_u32(h->head + h->data_size_at, data);
    if (h->fact_at > 0) {
        set_u32(h->head + h->fact_at, data / h->block);
    }
    ck_atomic_file a = {0};
    char *buf = malloc(COPY_BYTES);
    int rc = buf != NULL ? ck_atomic_open(&a, output, NULL, err)
                         : ck_fail(err, CK_E_MEMORY, "%s: cannot allocate", output);
    int ok = rc == CK_OK && fwrite(h->head, 1, h->head_bytes, a.f) == h->head_bytes;
    for (size_t i = 0; ok && i < n; i++) {
        for (uint64_t left = parts[i].data_bytes; ok && left > 0;) {
            size_t want = left < COPY_BYTES ? (size_t)left : COPY_BYTES;
            ok = fread(buf, 1, want, parts[i].f) == want && fwrite(buf, 1, want, a.f) == want;
            left -= want;
        }
    }
    free(buf);
    if (rc == CK_OK && !ok) {
        ck_atomic_abort(&a);
        return ck_fail(err, CK_E_IO, "%s: copying the samples failed: %s", output,
                       strerror(errno ? errno : EIO));
    }
    return rc == CK_OK ? ck_atomic_commit(&a, err) : rc;
}

int ck_wav_join(const char *output, const char *const *paths, size_t n, const uint64_t *expect,
                ck_error *err)
{
    if (output == NULL || paths == NULL || n == 0) {
        return ck_fail(err, CK_E_ARG, "WAV join: null output or paths, or no parts");
    }
    wav_part *parts = calloc(n, sizeof *parts);
    if (parts == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: cannot allocate", output);
    }
    int rc = CK_OK;
    uint64_t data = 0;
    for (size_t i = 0; rc == CK_OK && i < n; i++) {
        rc = paths[i] != NULL ? open_part(paths[i], &parts[i], err)
                              : ck_fail(err, CK_E_ARG, "WAV join: null path %zu", i);
        if (rc == CK_OK && i > 0 && !same_header(&parts[0], &parts[i])) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: WAV header (format, rate or LIST/INFO) differs "
                         "from %s's", paths[i], paths[0]);
        }
        if (rc == CK_OK && expect != NULL && parts[i].data_bytes / parts[i].block != expect[i]) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: %llu frames, expected %llu (its records say so)",
                         paths[i], (unsigned long long)(parts[i].data_bytes / parts[i].block),
                         (unsigned long long)expect[i]);
        }
        data += rc == CK_OK ? parts[i].data_bytes : 0;
    }
    if (rc == CK_OK && parts[0].head_bytes + data - 8 > UINT32_MAX) {
        rc = ck_fail(err, CK_E_SIZE, "%s: the joined WAV (%llu bytes of samples) would pass "
                     "RIFF's 4 GiB", output, (unsigned long long)data);
    }
    rc = rc == CK_OK ? write_joined(output, parts, n, data, err) : rc;
    for (size_t i = 0; i < n; i++) {
        if (parts[i].f != NULL) {
            fclose(parts[i].f);
        }
        free(parts[i].head);
    }
    free(parts);
    return rc;
}
