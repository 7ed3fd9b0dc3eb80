/* weights.c - builds read-only f32 weight sets from safetensors files or the synthetic generator.
 * Must not know circuits or model layout, and must never write a tensor after it is built. */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED (not in POSIX; posix_madvise's DONTNEED is a no-op) */
#include "weights.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pth.h"
#include "safetensors.h"
#include "sha256.h"
#include "synth_weights.h"

struct ck_weights {
    ck_tensor *tensors;  /* [n] (capacity fixed at creation) */
    float **owned;       /* [capacity]: tensor i's own buffer, or NULL when it lives in `file` */
    size_t n;
    ck_st_file *file;    /* kept open while in-place tensors point into its mapping */
    ck_pth_file *pth;    /* the same for a torch.save checkpoint */
    char *identity;
    int synthetic;
    uint64_t seed;
};

/* An empty set with room for `cap` tensors, or NULL. */
static ck_weights *weights_new(size_t cap)
{
    ck_weights *w = calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    w->tensors = calloc(cap + 1, sizeof *w->tensors);
    w->owned = calloc(cap + 1, sizeof *w->owned);
    if (w->tensors == NULL || w->owned == NULL) {
        ck_weights_free(w);
        return NULL;
    }
    return w;
}

/* snprintf into a fresh malloc'd string of at most `cap` bytes, or NULL. */
static char *format_identity(size_t cap, const char *fmt, const char *a, const char *b)
{
    char *s = malloc(cap);
    if (s != NULL) {
        snprintf(s, cap, fmt, a, b);
    }
    return s;
}

/* `name` without its "module" segments, malloc'd ("module.bert.module.x" -> "bert.x"), or NULL. */
static char *normalise_name(const char *name)
{
    char *out = malloc(strlen(name) + 1);
    size_t len = 0;
    if (out == NULL) {
        return NULL;
    }
    for (const char *seg = name;;) {
        const char *dot = strchr(seg, '.');
        size_t n = dot != NULL ? (size_t)(dot - seg) : strlen(seg);
        if (!(n == 6 && memcmp(seg, "module", 6) == 0)) {
            if (len > 0) {
                out[len++] = '.';
            }
            memcpy(out + len, seg, n);
            len += n;
        }
        if (dot == NULL) {
            break;
        }
        seg = dot + 1;
    }
    out[len] = '\0';
    return out;
}

/* Index of the first NaN or Inf in x[n], or n when all are finite. */
static size_t first_nonfinite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            return i;
        }
    }
    return n;
}

/* Points (aligned F32) or converts (unaligned F32, F16, BF16) `t` into dst; dst->name is set. */
static int bind_tensor(ck_weights *w, const char *path, const ck_st_tensor *t, ck_tensor *dst,
                       ck_error *err)
{
    dst->rank = t->rank;
    memcpy(dst->shape, t->shape, sizeof dst->shape);
    dst->elements = t->elements;
    if (t->dtype == CK_DTYPE_F32 && (uintptr_t)t->data % sizeof(float) == 0) {
        dst->data = t->data;
    } else {
        float *copy = malloc(t->elements ? t->elements * sizeof(float) : 1);
        if (copy == NULL) {
            return ck_fail(err, CK_E_MEMORY, "%s: tensor \"%s\": out of memory", path, t->name);
        }
        w->owned[w->n - 1] = copy;
        dst->data = copy;
        int rc = ck_st_to_f32(t, copy, t->elements, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    size_t bad = first_nonfinite(dst->data, dst->elements);
    if (bad < dst->elements) {
        return ck_fail(err, CK_E_NONFINITE, "%s: tensor \"%s\": element %zu is %s", path, t->name,
                       bad, isnan(dst->data[bad]) ? "NaN" : "Inf");
    }
    return CK_OK;
}

/* Adds file tensor t (floating dtypes only) under its normalised name. */
static int add_file_tensor(ck_weights *w, const char *path, const ck_st_tensor *t, ck_error *err)
{
    char *name = normalise_name(t->name);
    if (name == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    if (name[0] == '\0' || ck_weights_find(w, name) != NULL) {
        int rc = ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": name: %s after dropping \"module\"",
                         path, t->name, name[0] ? "duplicate" : "empty");
        free(name);
        return rc;
    }
    ck_tensor *dst = &w->tensors[w->n++];
    dst->name = name;
    return bind_tensor(w, path, t, dst, err);
}

/* Sets the identity "file <path> sha256 <hex>" from one pass over the whole file; a safetensors file
 * that ckbatch wrote from synthetic weights (metadata "identity" starting "synthetic") keeps saying
 * so, so demo weights are never presented as Kokoro's. */
static int set_file_identity(ck_weights *w, const char *path, ck_error *err)
{
    char hex[65], file[200];
    int rc = ck_sha256_file(path, hex, err);
    if (rc != CK_OK) {
        return rc;
    }
    const char *origin = w->file != NULL ? ck_st_metadata(w->file, "identity") : NULL;
    snprintf(file, sizeof file, "%.120s sha256 %s", path, hex);
    if (origin != NULL && strncmp(origin, "synthetic ", 10) == 0) {
        w->identity = format_identity(strlen(origin) + sizeof file + 16, "file %s: %s", file,
                                      origin);
    } else {
        w->identity = format_identity(sizeof file + 8, "file %s%s", file, "");
    }
    return w->identity != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
}

/* Every F32/F16/BF16 tensor of a safetensors file into a new *w (set even on error, for freeing). */
static int load_safetensors(ck_weights **w, const char *path, ck_error *err)
{
    ck_st_file *f = NULL;
    int rc = ck_st_open(&f, path, err);
    if (rc != CK_OK) {
        return rc;
    }
    *w = weights_new(ck_st_count(f));
    if (*w == NULL) {
        ck_st_close(f);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    (*w)->file = f;
    for (size_t i = 0; i < ck_st_count(f) && rc == CK_OK; i++) {
        const ck_st_tensor *t = ck_st_at(f, i);
        if (t->dtype == CK_DTYPE_F32 || t->dtype == CK_DTYPE_F16 || t->dtype == CK_DTYPE_BF16) {
            rc = add_file_tensor(*w, path, t, err);
        }
    }
    return rc;
}

/* The phoneme encoder's floating tensors of a torch.save checkpoint (ck_pth_kokoro_encoder_wants;
 * I64 buffers such as position_ids skipped) into a new *w (set even on error); the storages of every
 * other group are never read. */
static int load_pth(ck_weights **w, const char *path, ck_error *err)
{
    ck_pth_file *f = NULL;
    int rc = ck_pth_open(&f, path, err);
    if (rc != CK_OK) {
        return rc;
    }
    *w = weights_new(ck_pth_count(f));
    if (*w == NULL) {
        ck_pth_close(f);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    (*w)->pth = f;
    for (size_t i = 0; i < ck_pth_count(f) && rc == CK_OK; i++) {
        ck_st_tensor view;
        const ck_pth_tensor *t = ck_pth_at(f, i);
        if (ck_pth_kokoro_encoder_wants(t) && t->dtype != CK_DTYPE_I64) {
            rc = ck_pth_view(f, i, &view, err);
            rc = rc == CK_OK ? add_file_tensor(*w, path, &view, err) : rc;
        }
    }
    return rc;
}

/* Dispatches by content, not by name: a torch.save archive starts "PK\x03\x04" (ck_pth_sniff),
 * anything else is read as safetensors. */
int ck_weights_load(ck_weights **out, const char *path, ck_error *err)
{
    ck_weights *w = NULL;
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "weights: null out or path");
    }
    *out = NULL;
    int rc = ck_pth_sniff(path) ? load_pth(&w, path, err) : load_safetensors(&w, path, err);
    if (rc == CK_OK) {
        rc = set_file_identity(w, path, err);
    }
    if (rc != CK_OK) {
        ck_weights_free(w);
        return rc;
    }
    *out = w;
    return CK_OK;
}

/* Adds one generated tensor for spec s. */
static int add_synthetic(ck_weights *w, const ck_weight_spec *s, size_t i, uint64_t seed, ck_error *err)
{
    size_t elements = 1;
    if (s->name == NULL || s->name[0] == '\0' || ck_weights_find(w, s->name) != NULL ||
        s->rank > 8) {
        return ck_fail(err, CK_E_ARG, "synthetic weights: spec %zu \"%s\": null, empty or duplicate "
                       "name, or rank > 8", i, s->name != NULL ? s->name : "(null)");
    }
    for (size_t d = 0; d < s->rank; d++) {
        if (s->shape[d] != 0 && elements > SIZE_MAX / sizeof(float) / s->shape[d]) {
            return ck_fail(err, CK_E_SIZE, "synthetic weights: spec %zu \"%s\": shape: overflows", i,
                           s->name);
        }
        elements *= s->shape[d];
    }
    ck_tensor *t = &w->tensors[w->n++];
    float *data = malloc(elements ? elements * sizeof(float) : 1);
    t->name = strdup(s->name);
    w->owned[w->n - 1] = data;
    if (data == NULL || t->name == NULL) {
        return ck_fail(err, CK_E_MEMORY, "synthetic weights: \"%s\": out of memory", s->name);
    }
    t->rank = s->rank;
    memcpy(t->shape, s->shape, sizeof t->shape);
    t->elements = elements;
    t->data = data;
    return ck_synth_tensor_f32(s->name, seed, data, elements);
}

int ck_weights_synthetic(ck_weights **out, const ck_weight_spec *specs, size_t n, uint64_t seed,
                         ck_error *err)
{
    char seed_text[24];
    int rc = CK_OK;
    if (out == NULL || (specs == NULL && n > 0)) {
        return ck_fail(err, CK_E_ARG, "synthetic weights: null out or specs");
    }
    *out = NULL;
    ck_weights *w = weights_new(n);
    if (w == NULL) {
        return ck_fail(err, CK_E_MEMORY, "synthetic weights: out of memory");
    }
    w->synthetic = 1;
    w->seed = seed;
    for (size_t i = 0; i < n && rc == CK_OK; i++) {
        rc = add_synthetic(w, &specs[i], i, seed, err);
    }
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)seed);
    w->identity = format_identity(128, "synthetic %s seed %s (demo weights, NOT Kokoro's)",
                                  CK_SYNTH_GENERATOR, seed_text);
    if (rc == CK_OK && w->identity == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "synthetic weights: out of memory");
    }
    if (rc != CK_OK) {
        ck_weights_free(w);
        return rc;
    }
    *out = w;
    return CK_OK;
}

const ck_tensor *ck_weights_find(const ck_weights *w, const char *name)
{
    for (size_t i = 0; w != NULL && name != NULL && i < w->n; i++) {
        if (w->tensors[i].name != NULL && strcmp(w->tensors[i].name, name) == 0) {
            return &w->tensors[i];
        }
    }
    return NULL;
}

size_t ck_weights_count(const ck_weights *w)
{
    return w != NULL ? w->n : 0;
}

const ck_tensor *ck_weights_at(const ck_weights *w, size_t i)
{
    return w != NULL && i < w->n ? &w->tensors[i] : NULL;
}

const char *ck_weights_identity(const ck_weights *w)
{
    return w != NULL && w->identity != NULL ? w->identity : "";
}

/* The name of the first released tensor of w, or NULL when none is. */
static const char *first_released(const ck_weights *w)
{
    for (size_t i = 0; i < w->n; i++) {
        if (w->tensors[i].data == NULL) {
            return w->tensors[i].name;
        }
    }
    return NULL;
}

int ck_weights_save(const ck_weights *w, const char *path, ck_error *err)
{
    char seed_text[24];
    if (w == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "weights: save: null weights or path");
    }
    if (first_released(w) != NULL) {
        return ck_fail(err, CK_E_ARG, "%s: tensor \"%s\" was released: nothing to save", path,
                       first_released(w));
    }
    ck_st_entry *e = calloc(w->n + 1, sizeof *e);
    if (e == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    for (size_t i = 0; i < w->n; i++) {
        e[i].name = w->tensors[i].name;
        e[i].dtype = CK_DTYPE_F32;
        e[i].rank = w->tensors[i].rank;
        memcpy(e[i].shape, w->tensors[i].shape, sizeof e[i].shape);
        e[i].data = w->tensors[i].data;
    }
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)w->seed);
    const ck_st_meta meta[3] = {{"identity", ck_weights_identity(w)},
                                {"generator", CK_SYNTH_GENERATOR},
                                {"seed", seed_text}};
    int rc = ck_st_write(path, e, w->n, meta, w->synthetic ? 3 : 1, err);
    free(e);
    return rc;
}

int ck_weights_hash(ck_weights *w, ck_error *err)
{
    if (w == NULL) {
        return ck_fail(err, CK_E_ARG, "weights: hash: null weights");
    }
    if (first_released(w) != NULL) {
        return ck_fail(err, CK_E_ARG, "tensor \"%s\": SHA-256: the tensor was released",
                       first_released(w));
    }
    for (size_t i = 0; i < w->n; i++) {
        ck_tensor *t = &w->tensors[i];
        if (ck_sha256(t->data, t->elements * sizeof(float), t->sha256) != CK_OK) {
            return ck_fail(err, CK_E_BACKEND, "tensor \"%s\": SHA-256 failed", t->name);
        }
        t->has_sha256 = 1;
    }
    return CK_OK;
}

/* Drops the whole pages inside [p, p + bytes) of a read-only private file mapping from the
 * process. Pages shared with a neighbouring tensor stay. Advice only: a failure changes nothing
 * but the resident size, so it is not an error. */
static void drop_mapped_pages(const void *p, size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) {
        return;
    }
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes, ps = (uintptr_t)page;
    lo = (lo + ps - 1) / ps * ps;
    hi = hi / ps * ps;
    if (hi > lo) {
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
}

int ck_weights_release(ck_weights *w, size_t i)
{
    if (w == NULL || i >= w->n) {
        return CK_E_ARG;
    }
    ck_tensor *t = &w->tensors[i];
    if (w->owned[i] != NULL) {
        free(w->owned[i]);
        w->owned[i] = NULL;
    } else if (t->data != NULL) {
        drop_mapped_pages(t->data, t->elements * sizeof(float));
    }
    t->data = NULL;
    return CK_OK;
}

void ck_weights_free(ck_weights *w)
{
    if (w == NULL) {
        return;
    }
    for (size_t i = 0; w->tensors != NULL && i < w->n; i++) {
        free(w->tensors[i].name);
    }
    for (size_t i = 0; w->owned != NULL && i < w->n; i++) {
        free(w->owned[i]);
    }
    ck_st_close(w->file);
    ck_pth_close(w->pth);
    free(w->tensors);
    free(w->owned);
    free(w->identity);
    free(w);
}
