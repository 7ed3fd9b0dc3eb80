/* wav.c - the streaming WAV writer of wav.h: header with zero sizes at open, samples converted in
 * blocks as they come, sizes patched and the file published at close. Every multi-byte field is
 * written byte by byte little-endian, whatever the host. */
#include "wav.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

#define INFO_MAX (1u << 20) /* bytes of a LIST/INFO chunk */
#define BLOCK_SAMPLES 4096  /* samples converted per fwrite */

struct ck_wav {
    ck_atomic_file file;
    ck_wav_format format;
    uint32_t block;         /* bytes per frame: 2 (s16) or 4 (f32) */
    uint64_t header_bytes;  /* everything before the samples */
    long fact_at;           /* offset of the fact chunk's frame count (f32), else 0 */
    long data_size_at;      /* offset of the data chunk's size */
    uint64_t frames, clipped;
    int failed;             /* CK_E_IO when an append's write failed (the file is then unknown), else 0 */
};

static void put_u16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)(v >> 8 & 0xff);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i) & 0xff);
    }
}

int16_t ck_wav_s16(float x, int *clipped)
{
    double d = (double)x * 32768.0; /* exact: a float times a power of two, in double */
    double r = floor(d), frac = d - r;
    if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0.0)) {
        r += 1.0;
    }
    *clipped = r > 32767.0 || r < -32768.0;
    return (int16_t)(r > 32767.0 ? 32767 : r < -32768.0 ? -32768 : (int)r);
}

/* 1 when id is four characters of A-Z, 0-9 or space. */
static int info_id_ok(const char *id)
{
    for (size_t i = 0; i < 4; i++) {
        char c = id[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ')) {
            return 0;
        }
    }
    return id[4] == '\0';
}

/* Bytes of the LIST chunk (8 + 4 + entries), or 0 when there is none; checks every entry. */
static int info_bytes(const char *path, const ck_wav_info *info, size_t n, size_t *bytes,
                      ck_error *err)
{
    size_t total = n > 0 ? 12 : 0;
    if (info == NULL && n > 0) {
        return ck_fail(err, CK_E_ARG, "%s: WAV: null info with %zu entries", path, n);
    }
    for (size_t i = 0; i < n; i++) {
        if (info[i].id == NULL || !info_id_ok(info[i].id) || info[i].text == NULL) {
            return ck_fail(err, CK_E_ARG, "%s: WAV: info entry %zu (\"%s\"): the id must be 4 "
                           "characters of A-Z, 0-9 or space, with a text", path, i,
                           info[i].id != NULL ? info[i].id : "(null)");
        }
        size_t len = strlen(info[i].text) + 1;
        if (len > INFO_MAX || total > INFO_MAX) {
            return ck_fail(err, CK_E_SIZE, "%s: WAV: the INFO chunk passes %u bytes", path,
                           INFO_MAX);
        }
        total += 8 + len + (len & 1);
    }
    if (total > INFO_MAX) {
        return ck_fail(err, CK_E_SIZE, "%s: WAV: the INFO chunk passes %u bytes", path, INFO_MAX);
    }
    *bytes = total;
    return CK_OK;
}

/* The whole header for w into h[header_bytes] (sizes zero until close). */
static void build_header(ck_wav *w, unsigned char *h, uint32_t rate, const ck_wav_info *info,
                         size_t n_info, size_t list_bytes)
{
    size_t at = 0;
    int is_float = w->format == CK_WAV_F32;
    memcpy(h, "RIFF\0\0\0\0WAVEfmt ", 16);
    put_u32(h + 16, is_float ? 18 : 16);
    put_u16(h + 20, (uint32_t)w->format);
    put_u16(h + 22, 1);
    put_u32(h + 24, rate);
    put_u32(h + 28, rate * w->block);
    put_u16(h + 32, w->block);
    put_u16(h + 34, 8 * w->block);
    at = 36;
    if (is_float) {
        put_u16(h + at, 0); /* cbSize */
        memcpy(h + at + 2, "fact", 4);
        put_u32(h + at + 6, 4);
        put_u32(h + at + 10, 0);
        w->fact_at = (long)(at + 10);
        at += 14;
    }
    if (n_info > 0) {
        memcpy(h + at, "LIST", 4);
        put_u32(h + at + 4, (uint32_t)(list_bytes - 8));
        memcpy(h + at + 8, "INFO", 4);
        at += 12;
        for (size_t i = 0; i < n_info; i++) {
            size_t len = strlen(info[i].text) + 1;
            memcpy(h + at, info[i].id, 4);
            put_u32(h + at + 4, (uint32_t)len);
            memcpy(h + at + 8, info[i].text, len); /* with its NUL */
            at += 8 + len;
            if (len & 1) {
                h[at++] = 0;
            }
        }
    }
    memcpy(h + at, "data\0\0\0\0", 8);
    w->data_size_at = (long)(at + 4);
    w->header_bytes = at + 8;
}

/* Checks the arguments and makes w with its header h (malloc'd, header_bytes long, sizes zero). */
static int wav_new(const char *path, ck_wav_format format, uint32_t rate, const ck_wav_info *info,
                   size_t n_info, ck_wav **w_out, unsigned char **h_out, ck_error *err)
{
    size_t list_bytes = 0;
    if (format != CK_WAV_S16 && format != CK_WAV_F32) {
        return ck_fail(err, CK_E_ARG, "%s: WAV: format %d is neither s16 (1) nor f32 (3)", path,
                       (int)format);
    }
    if (rate == 0 || rate > (1u << 31) / 4) {
        return ck_fail(err, CK_E_ARG, "%s: WAV: sample rate %u out of range", path, rate);
    }
    int rc = info_bytes(path, info, n_info, &list_bytes, err);
    if (rc != CK_OK) {
        return rc;
    }
    ck_wav *w = calloc(1, sizeof *w);
    unsigned char *h = malloc(64 + list_bytes);
    if (w == NULL || h == NULL) {
        free(w);
        free(h);
        return ck_fail(err, CK_E_MEMORY, "%s: WAV: out of memory", path);
    }
    w->format = format;
    w->block = format == CK_WAV_F32 ? 4 : 2;
    build_header(w, h, rate, info, n_info, list_bytes);
    *w_out = w;
    *h_out = h;
    return CK_OK;
}

int ck_wav_open_partial(ck_wav **out, const char *path, const char *partial, ck_wav_format format,
                        uint32_t rate, const ck_wav_info *info, size_t n_info, ck_error *err)
{
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "WAV: null out or path");
    }
    *out = NULL;
    ck_wav *w = NULL;
    unsigned char *h = NULL;
    int rc = wav_new(path, format, rate, info, n_info, &w, &h, err);
    if (rc != CK_OK) {
        return rc;
    }
    rc = ck_atomic_open(&w->file, path, partial, err);
    if (rc == CK_OK && fwrite(h, 1, w->header_bytes, w->file.f) != w->header_bytes) {
        rc = ck_file_io_failed(w->file.tmp, "writing the WAV header", err);
        ck_atomic_abort(&w->file);
    }
    free(h);
    if (rc != CK_OK) {
        free(w);
        return rc;
    }
    *out = w;
    return CK_OK;
}

int ck_wav_open(ck_wav **out, const char *path, ck_wav_format format, uint32_t rate,
                const ck_wav_info *info, size_t n_info, ck_error *err)
{
    return ck_wav_open_partial(out, path, NULL, format, rate, info, n_info, err);
}

/* 1 when the header bytes got equal the header h, the size fields (RIFF, fact, data: zero in h,
 * patched by a close that may have begun) aside. */
static int same_header(const ck_wav *w, const unsigned char *h, const unsigned char *got)
{
    for (uint64_t i = 0; i < w->header_bytes; i++) {
        long at = (long)i;
        int size_field = (at >= 4 && at < 8) || (w->fact_at != 0 && at >= w->fact_at
                                                 && at < w->fact_at + 4)
                         || (at >= w->data_size_at && at < w->data_size_at + 4);
        if (!size_field && h[i] != got[i]) {
            return 0;
        }
    }
    return 1;
}

int ck_wav_resume(ck_wav **out, const char *path, const char *partial, ck_wav_format format,
                  uint32_t rate, const ck_wav_info *info, size_t n_info, uint64_t frames,
                  ck_error *err)
{
    if (out == NULL || path == NULL || partial == NULL) {
        return ck_fail(err, CK_E_ARG, "WAV: resume: null out, path or partial");
    }
    *out = NULL;
    ck_wav *w = NULL;
    unsigned char *h = NULL, *got = NULL;
    int rc = wav_new(path, format, rate, info, n_info, &w, &h, err);
    if (rc != CK_OK) {
        return rc;
    }
    uint64_t keep = w->header_bytes + frames * w->block;
    struct stat st;
    w->file.path = ck_file_suffixed(path, "");
    w->file.tmp = ck_file_suffixed(partial, "");
    got = malloc(w->header_bytes);
    if (w->file.path == NULL || w->file.tmp == NULL || got == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: WAV: out of memory", path);
    } else if (frames > UINT32_MAX / w->block) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: WAV: %llu frames pass RIFF's 4 GiB", partial,
                     (unsigned long long)frames);
    } else if ((w->file.f = fopen(partial, "r+b")) == NULL) {
        rc = ck_fail(err, CK_E_IO, "%s: cannot open: %s", partial, strerror(errno));
    } else if (fstat(fileno(w->file.f), &st) != 0) {
        rc = ck_file_io_failed(partial, "reading the WAV header", err);
    } else if ((uint64_t)st.st_size < w->header_bytes) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: WAV: %lld bytes, shorter than its %llu-byte header",
                     partial, (long long)st.st_size, (unsigned long long)w->header_bytes);
    } else if (ck_file_pread_all(fileno(w->file.f), got, w->header_bytes, 0) != 0) {
        rc = ck_file_io_failed(partial, "reading the WAV header", err);
    } else if (!same_header(w, h, got)) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: WAV: its header is not the one of this format, rate "
                     "and info (another run's file?)", partial);
    } else if ((uint64_t)st.st_size < keep) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: WAV: %lld bytes, shorter than the %llu frames "
                     "resumed (%llu bytes)", partial, (long long)st.st_size,
                     (unsigned long long)frames, (unsigned long long)keep);
    } else if (ftruncate(fileno(w->file.f), (off_t)keep) != 0
               || fseek(w->file.f, 0, SEEK_END) != 0) {
        rc = ck_file_io_failed(partial, "cutting the WAV back", err);
    }
    free(h);
    free(got);
    if (rc != CK_OK) {
        if (w->file.f != NULL) {
            fclose(w->file.f);
        }
        free(w->file.path);
        free(w->file.tmp);
        free(w);
        return rc;
    }
    w->frames = frames;
    *out = w;
    return CK_OK;
}

/* Converts samples[m] to format's little-endian bytes in out[m x block]; returns the clipped count
 * (s16). The samples must be finite. */
static uint64_t encode_samples(ck_wav_format format, const float *samples, size_t m,
                               unsigned char *out)
{
    uint64_t clip = 0;
    for (size_t i = 0; i < m; i++) {
        if (format == CK_WAV_S16) {
            int c;
            put_u16(out + 2 * i, (uint16_t)ck_wav_s16(samples[i], &c));
            clip += (uint64_t)c;
        } else {
            uint32_t bits;
            memcpy(&bits, &samples[i], sizeof bits);
            put_u32(out + 4 * i, bits);
        }
    }
    return clip;
}

/* CK_E_NONFINITE naming the first sample of samples[n] that is NaN or Inf, else CK_OK. */
static int check_finite(const char *path, const float *samples, size_t n, ck_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(samples[i])) {
            return ck_fail(err, CK_E_NONFINITE, "%s: WAV: sample %zu of this append is %s", path,
                           i, isnan(samples[i]) ? "NaN" : "Inf");
        }
    }
    return CK_OK;
}

int ck_wav_encode(ck_wav_format format, const float *samples, size_t n, unsigned char *out,
                  uint64_t *clipped, ck_error *err)
{
    if ((format != CK_WAV_S16 && format != CK_WAV_F32) || ((samples == NULL || out == NULL) && n > 0)
        || clipped == NULL) {
        return ck_fail(err, CK_E_ARG, "WAV: encode: a format that is neither s16 nor f32, or null "
                       "samples, out or clipped");
    }
    int rc = check_finite("WAV", samples, n, err);
    *clipped = rc == CK_OK ? encode_samples(format, samples, n, out) : 0;
    return rc;
}

int ck_wav_header(ck_wav_format format, uint32_t rate, const ck_wav_info *info, size_t n_info,
                  uint64_t frames, unsigned char **out, size_t *bytes, ck_error *err)
{
    if (out == NULL || bytes == NULL) {
        return ck_fail(err, CK_E_ARG, "WAV: header: null out or bytes");
    }
    *out = NULL;
    *bytes = 0;
    ck_wav *w = NULL;
    unsigned char *h = NULL;
    int rc = wav_new("WAV", format, rate, info, n_info, &w, &h, err);
    if (rc != CK_OK) {
        return rc;
    }
    uint64_t limit = (uint64_t)UINT32_MAX - (w->header_bytes - 8); /* RIFF's size field */
    if (frames > limit / w->block) {
        free(w);
        free(h);
        return ck_fail(err, CK_E_SIZE, "WAV: %llu frames pass RIFF's 4 GiB",
                       (unsigned long long)frames);
    }
    uint64_t data = frames * w->block; /* the sizes ck_wav_close patches */
    put_u32(h + 4, (uint32_t)(w->header_bytes - 8 + data));
    if (w->fact_at != 0) {
        put_u32(h + w->fact_at, (uint32_t)frames);
    }
    put_u32(h + w->data_size_at, (uint32_t)data);
    *out = h;
    *bytes = (size_t)w->header_bytes;
    free(w);
    return CK_OK;
}

int ck_wav_append(ck_wav *w, const float *samples, size_t n, uint64_t *clipped, ck_error *err)
{
    unsigned char buf[BLOCK_SAMPLES * 4];
    uint64_t clip = 0;
    if (clipped != NULL) {
        *clipped = 0;
    }
    if (w == NULL || (samples == NULL && n > 0) || w->failed) {
        return ck_fail(err, CK_E_ARG, "WAV: append: %s", w == NULL ? "null writer"
                       : w->failed ? "an earlier append failed" : "null samples");
    }
    uint64_t limit = (uint64_t)UINT32_MAX - (w->header_bytes - 8); /* RIFF's size field */
    if ((uint64_t)n > (limit - w->frames * w->block) / w->block) {
        return ck_fail(err, CK_E_SIZE, "%s: WAV: %llu + %zu frames pass RIFF's 4 GiB", w->file.path,
                       (unsigned long long)w->frames, n);
    }
    int rc = check_finite(w->file.path, samples, n, err);
    if (rc != CK_OK) {
        return rc;
    }
    for (size_t at = 0; at < n; at += BLOCK_SAMPLES) {
        size_t m = n - at < BLOCK_SAMPLES ? n - at : BLOCK_SAMPLES;
        clip += encode_samples(w->format, samples + at, m, buf);
        if (fwrite(buf, w->block, m, w->file.f) != m) {
            w->failed = CK_E_IO;
            return ck_file_io_failed(w->file.tmp, "writing WAV samples", err);
        }
    }
    w->frames += n;
    w->clipped += clip;
    if (clipped != NULL) {
        *clipped = clip;
    }
    return CK_OK;
}

uint64_t ck_wav_frames(const ck_wav *w)
{
    return w != NULL ? w->frames : 0;
}

uint64_t ck_wav_clipped(const ck_wav *w)
{
    return w != NULL ? w->clipped : 0;
}

/* Writes the u32 v at offset `at` of w's temporary file. */
static int patch(ck_wav *w, long at, uint32_t v)
{
    unsigned char b[4];
    put_u32(b, v);
    return fseek(w->file.f, at, SEEK_SET) == 0 && fwrite(b, 1, 4, w->file.f) == 4 ? 0 : -1;
}

int ck_wav_close(ck_wav *w, ck_error *err)
{
    if (w == NULL) {
        return ck_fail(err, CK_E_ARG, "WAV: close: null writer");
    }
    int rc = CK_OK;
    if (w->failed) {
        rc = ck_fail(err, w->failed, "%s: WAV: not published: an append failed", w->file.path);
    } else {
        uint64_t data = w->frames * w->block;
        if (patch(w, 4, (uint32_t)(w->header_bytes - 8 + data)) != 0 ||
            (w->fact_at != 0 && patch(w, w->fact_at, (uint32_t)w->frames) != 0) ||
            patch(w, w->data_size_at, (uint32_t)data) != 0) {
            rc = ck_file_io_failed(w->file.tmp, "patching the WAV sizes", err);
        }
    }
    if (rc == CK_OK) {
        rc = ck_atomic_commit(&w->file, err);
    } else {
        ck_atomic_abort(&w->file);
    }
    free(w);
    return rc;
}

int ck_wav_sync(ck_wav *w, ck_error *err)
{
    if (w == NULL || w->failed) {
        return ck_fail(err, CK_E_ARG, "WAV: sync: %s", w == NULL ? "null writer"
                       : "an earlier append failed");
    }
    if (fflush(w->file.f) != 0 || fdatasync(fileno(w->file.f)) != 0) {
        w->failed = CK_E_IO;
        return ck_file_io_failed(w->file.tmp, "syncing WAV samples", err);
    }
    return CK_OK;
}

void ck_wav_keep(ck_wav *w)
{
    if (w != NULL) {
        fclose(w->file.f);
        free(w->file.path);
        free(w->file.tmp);
        free(w);
    }
}

void ck_wav_abort(ck_wav *w)
{
    if (w != NULL) {
        ck_atomic_abort(&w->file);
        free(w);
    }
}
