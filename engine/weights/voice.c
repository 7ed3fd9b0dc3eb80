/* voice.c - loads, checks and mixes Kokoro voice packs (voice.h). Must not keep a pack that holds
 * a non-finite value or has the wrong size, and must never run code from a .pt file. */
#include "voice.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "byte_order.h"
#include "file.h"
#include "pth.h"
#include "sha256.h"
#include "synth_weights.h"

/* One part of a spec: its text (file path or name) and weight. */
typedef struct {
    char text[256];
    double weight;
} voice_part;

const char *ck_voice_default_dir(void)
{
#ifdef CK_VOICES_INSTALL_DIR
    struct stat st;
    if (stat(CK_VOICES_INSTALL_DIR "/" CK_VOICE_DEFAULT ".bin", &st) == 0) {
        return CK_VOICES_INSTALL_DIR;
    }
#endif
#ifdef CK_VOICES_SOURCE_DIR
    return CK_VOICES_SOURCE_DIR;
#else
    return "data/voices";
#endif
}

size_t ck_voice_row(size_t phonemes)
{
    if (phonemes == 0) {
        return 0;
    }
    return phonemes - 1 < CK_VOICE_ROWS ? phonemes - 1 : CK_VOICE_ROWS - 1;
}

const float *ck_voice_style(const ck_voice *v, size_t phonemes)
{
    return v != NULL ? v->pack + ck_voice_row(phonemes) * CK_VOICE_DIM : NULL;
}

void ck_voice_free(ck_voice *v)
{
    free(v);
}

static int is_file_part(const char *text)
{
    size_t n = strlen(text);
    return strchr(text, '/') != NULL || (n > 4 && strcmp(text + n - 4, ".bin") == 0) ||
           (n > 3 && strcmp(text + n - 3, ".pt") == 0);
}

static int is_name(const char *text)
{
    for (const char *c = text; *c != '\0'; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) {
            return 0;
        }
    }
    return text[0] != '\0';
}

/* Splits spec into parts[] (count in *n): "A:2,B" -> {A, 2}, {B, 1}. */
static int parse_spec(const char *spec, voice_part *parts, size_t *n, ck_error *err)
{
    *n = 0;
    for (const char *p = spec;;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (*n == CK_VOICE_MAX_PARTS) {
            return ck_fail(err, CK_E_ARG, "voice \"%s\": more than %d parts", spec,
                           CK_VOICE_MAX_PARTS);
        }
        voice_part *part = &parts[(*n)++];
        if (len == 0 || len >= sizeof part->text) {
            return ck_fail(err, CK_E_ARG, "voice \"%s\": part %zu is %s", spec, *n,
                           len == 0 ? "empty" : "too long");
        }
        memcpy(part->text, p, len);
        part->text[len] = '\0';
        part->weight = 1.0;
        char *colon = strrchr(part->text, ':');
        if (colon != NULL && !(colon[1] == '/' || strchr(colon + 1, '/') != NULL)) {
            char *stop = NULL;
            double w = strtod(colon + 1, &stop);
            /* a decimal: strtod alone also takes hex ("0x10") and leading blanks */
            int decimal = strspn(colon + 1, "0123456789.eE+-") == strlen(colon + 1);
            if (colon[1] == '\0' || !decimal || *stop != '\0' || !isfinite(w) || !(w > 0.0)) {
                return ck_fail(err, CK_E_ARG, "voice \"%s\": part \"%s\": weight \"%s\" is not a "
                               "positive number", spec, part->text, colon + 1);
            }
            part->weight = w;
            *colon = '\0';
            if (colon == part->text) {
                return ck_fail(err, CK_E_ARG, "voice \"%s\": part %zu has a weight but no voice",
                               spec, *n);
            }
        }
        if (end == NULL) {
            return CK_OK;
        }
        p = end + 1;
    }
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "af_bella, af_heart, ..." of the *.bin names in dir, into out[cap] ("none" when empty). */
static void shipped_names(const char *dir, char *out, size_t cap)
{
    char *names[64];
    size_t n = 0, used = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && n < 64 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".bin") == 0) {
            names[n] = strndup(e->d_name, len - 4);
            n += names[n] != NULL;
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    qsort(names, n, sizeof names[0], compare_strings);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", names[i]);
        used = w > 0 && (size_t)w < cap - used ? used + (size_t)w : used;
        free(names[i]);
    }
    if (n == 0) {
        snprintf(out, cap, "none in %s", dir);
    }
}

/* A raw pack: exactly CK_VOICE_BYTES little-endian f32. */
static int read_bin(const char *path, float *pack, ck_error *err)
{
    char *bytes = NULL;
    size_t len = 0;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > CK_VOICE_BYTES) {
        return ck_fail(err, CK_E_FORMAT, "%s: voice pack of %lld bytes; a pack is float32 "
                       "[510, 1, 256], %zu bytes", path, (long long)st.st_size, CK_VOICE_BYTES);
    }
    int rc = ck_file_read_all(path, "voice pack", CK_VOICE_BYTES, &bytes, &len, err);
    if (rc == CK_OK && len != CK_VOICE_BYTES) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: voice pack of %zu bytes; a pack is float32 "
                     "[510, 1, 256], %zu bytes", path, len, CK_VOICE_BYTES);
    }
    for (size_t i = 0; rc == CK_OK && i < (size_t)CK_VOICE_ROWS * CK_VOICE_DIM; i++) {
        uint32_t u = (uint32_t)ck_le((const unsigned char *)bytes + 4 * i, 4);
        memcpy(&pack[i], &u, sizeof u);
    }
    free(bytes);
    return rc;
}

/* A torch.save file holding one tensor of 510 x 256 elements. */
static int read_pt(const char *path, float *pack, ck_error *err)
{
    ck_pth_file *f = NULL;
    ck_st_tensor view;
    int rc = ck_pth_open(&f, path, err);
    if (rc != CK_OK) {
        return rc;
    }
    const ck_pth_tensor *t = ck_pth_at(f, 0);
    int shape_ok = t != NULL && ck_pth_count(f) == 1 &&
                   t->elements == (size_t)CK_VOICE_ROWS * CK_VOICE_DIM && t->rank >= 2 && t->shape[0] == CK_VOICE_ROWS &&
                   t->shape[t->rank - 1] == CK_VOICE_DIM;
    int dtype_ok = t != NULL && ck_dtype_info(t->dtype)->is_float;
    if (!shape_ok || !dtype_ok) {
        char got[160] = "";  /* "I64 [2, 3]": what makes it no voice may be the dtype */
        size_t used = 0;
        for (size_t d = 0; t != NULL && d <= t->rank && used < sizeof got; d++) {
            int w = d == 0 ? snprintf(got, sizeof got, " %s [", ck_dtype_name(t->dtype))
                           : snprintf(got + used, sizeof got - used, "%zu%s", t->shape[d - 1],
                                      d < t->rank ? ", " : "");
            used += w > 0 ? (size_t)w : 0;
        }
        rc = ck_fail(err, CK_E_FORMAT, "%s: a voice file holds one floating tensor [510, 1, 256]; "
                     "this one holds %zu tensor(s), the first%s]", path, ck_pth_count(f),
                     t != NULL ? got : " none [");
    }
    rc = rc == CK_OK ? ck_pth_view(f, 0, &view, err) : rc;
    rc = rc == CK_OK ? ck_st_to_f32(&view, pack, (size_t)CK_VOICE_ROWS * CK_VOICE_DIM, err) : rc;
    ck_pth_close(f);
    return rc;
}

/* Reads part p (file or shipped name) into pack, checked finite. */
static int read_part(const voice_part *p, const char *dir, float *pack, ck_error *err)
{
    char path[4096];
    int rc;
    if (is_file_part(p->text)) {
        snprintf(path, sizeof path, "%s", p->text);
        rc = ck_pth_sniff(path) ? read_pt(path, pack, err) : read_bin(path, pack, err);
    } else if (strcmp(p->text, CK_VOICE_SYNTHETIC) == 0) {
        rc = ck_synth_tensor_f32("voice.synthetic", CK_SYNTH_DEFAULT_SEED, pack,
                                 (size_t)CK_VOICE_ROWS * CK_VOICE_DIM);
    } else if (!is_name(p->text)) {
        return ck_fail(err, CK_E_ARG, "voice \"%s\": neither a file (a path with '/', or ending in "
                       ".bin or .pt) nor a shipped name (letters a-z, digits, '_')", p->text);
    } else {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.bin", dir, p->text);
        if (stat(path, &st) != 0) {
            char names[1024];
            shipped_names(dir, names, sizeof names);
            return ck_fail(err, CK_E_IO, "voice \"%s\": no such shipped voice (shipped: %s)",
                           p->text, names);
        }
        rc = read_bin(path, pack, err);
    }
    for (size_t i = 0; rc == CK_OK && i < (size_t)CK_VOICE_ROWS * CK_VOICE_DIM; i++) {
        if (!isfinite(pack[i])) {
            rc = ck_fail(err, CK_E_NONFINITE, "voice \"%s\": row %zu, column %zu is %s", p->text,
                         i / CK_VOICE_DIM, i % CK_VOICE_DIM, isnan(pack[i]) ? "NaN" : "Inf");
        }
    }
    return rc;
}

/* "a:2,b:1" from the parts (weights as %g), into v->spec; cut with "..." where the first part that
 * does not fit starts, so no part is left out unseen. */
static void resolved_spec(ck_voice *v, const voice_part *parts, size_t n)
{
    size_t used = 0, room = sizeof v->spec - 3; /* keeps 3 bytes for "..." */
    v->spec[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = n == 1 ? snprintf(v->spec + used, room - used, "%s", parts[i].text)
                       : snprintf(v->spec + used, room - used, "%s%s:%g", i ? "," : "",
                                  parts[i].text, parts[i].weight);
        if (w < 0 || (size_t)w >= room - used) {
            memcpy(v->spec + used, "...", 4);
            return;
        }
        used += (size_t)w;
    }
}

int ck_voice_load(ck_voice **out, const char *spec, const char *voices_dir, ck_error *err)
{
    voice_part parts[CK_VOICE_MAX_PARTS];
    size_t n = 0;
    if (out != NULL) {
        *out = NULL;
    }
    if (out == NULL || spec == NULL) {
        return ck_fail(err, CK_E_ARG, "voice: null out or spec");
    }
    int rc = parse_spec(spec, parts, &n, err);
    if (rc != CK_OK) {
        return rc;
    }
    const char *dir = voices_dir != NULL ? voices_dir : ck_voice_default_dir();
    const size_t count = (size_t)CK_VOICE_ROWS * CK_VOICE_DIM;
    ck_voice *v = calloc(1, sizeof *v);
    float *one = malloc(count * sizeof *one);
    double *sum = calloc(count, sizeof *sum);
    double total = 0.0, largest = 0.0;
    int exponent = 0;
    rc = v != NULL && one != NULL && sum != NULL ? CK_OK
                                                 : ck_fail(err, CK_E_MEMORY, "voice: out of memory");
    for (size_t k = 0; k < n; k++) {
        largest = parts[k].weight > largest ? parts[k].weight : largest;
    }
    (void)frexp(largest, &exponent);
    for (size_t k = 0; k < n && rc == CK_OK; k++) {
        /* weights over the largest's power of two (exact, so the same bits as sum(w x) / sum(w)),
         * at most 1: 1e308 + 1e308 cannot overflow the sums to Inf, nor 5e-324 x a value
         * underflow to 0 */
        double weight = ldexp(parts[k].weight, -exponent);
        rc = read_part(&parts[k], dir, n == 1 ? v->pack : one, err);
        for (size_t i = 0; rc == CK_OK && n > 1 && i < count; i++) {
            sum[i] += weight * (double)one[i];
        }
        total += weight;
    }
    for (size_t i = 0; rc == CK_OK && n > 1 && i < count; i++) {
        v->pack[i] = (float)(sum[i] / total);
    }
    if (rc == CK_OK && ck_sha256(v->pack, sizeof v->pack, v->sha256) != CK_OK) {
        rc = ck_fail(err, CK_E_BACKEND, "voice \"%s\": SHA-256 failed", spec);
    }
    free(one);
    free(sum);
    if (rc != CK_OK) {
        free(v);
        return rc;
    }
    resolved_spec(v, parts, n);
    *out = v;
    return CK_OK;
}
