/* weights.c - builds read-only f32 weight sets from safetensors or .pth files or the synthetic
 * generator, folding weight normalisation once. Must not know circuits, and must never write a
 * tensor after the set is built. */
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
    size_t *slots;       /* name index: open addressing over fnv1a64(name), tensor index + 1, 0 empty */
    size_t slot_mask;    /* slots has slot_mask + 1 entries, a power of two >= 2 x capacity */
    ck_st_file *file;    /* kept open while in-place tensors point into its mapping */
    ck_pth_file *pth;    /* the same for a torch.save checkpoint */
    char *identity;
    int synthetic;
    uint64_t seed;
    char **groups;       /* NULL-terminated copy of the groups the load read; NULL: every group */
};

/* An empty set with room for `stored` tensors and the weights their g/v pairs derive (at most one
 * per two stored), or NULL. */
static ck_weights *weights_new(size_t stored)
{
    ck_weights *w = calloc(1, sizeof *w);
    if (w == NULL) {
        return NULL;
    }
    size_t cap = stored + stored / 2 + 1, slots = 2;
    while (slots < 2 * cap) {
        slots *= 2;
    }
    w->tensors = calloc(cap, sizeof *w->tensors);
    w->owned = calloc(cap, sizeof *w->owned);
    w->slots = calloc(slots, sizeof *w->slots);
    w->slot_mask = slots - 1;
    if (w->tensors == NULL || w->owned == NULL || w->slots == NULL) {
        ck_weights_free(w);
        return NULL;
    }
    return w;
}

/* Enters tensor i (its name set) into the name index; the table is never more than half full. */
static void index_name(ck_weights *w, size_t i)
{
    size_t h = (size_t)ck_fnv1a64(w->tensors[i].name) & w->slot_mask;
    while (w->slots[h] != 0) {
        h = (h + 1) & w->slot_mask;
    }
    w->slots[h] = i + 1;
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

/* 1 when the first dot-separated segment of `name` is `group`. */
static int in_group(const char *name, const char *group)
{
    size_t n = strlen(group);
    return strncmp(name, group, n) == 0 && (name[n] == '.' || name[n] == '\0');
}

/* 1 when the load reads tensors of normalised `name`: its group is listed, or no list was given. */
static int wanted(const char *const *groups, const char *name)
{
    for (size_t i = 0; groups != NULL && groups[i] != NULL; i++) {
        if (in_group(name, groups[i])) {
            return 1;
        }
    }
    return groups == NULL;
}

/* 1 when file tensor `name` (as stored) is floating and its group is wanted; -1 out of memory. */
static int file_tensor_wanted(const char *const *groups, const char *name, ck_dtype dtype)
{
    if (!ck_dtype_info(dtype)->is_float) {
        return 0;
    }
    char *norm = normalise_name(name);
    if (norm == NULL) {
        return -1;
    }
    int yes = wanted(groups, norm);
    free(norm);
    return yes;
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
    index_name(w, w->n - 1);
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

/* Every F32/F16/BF16 tensor of the wanted groups of a safetensors file into a new *w (set even on
 * error, for freeing). */
static int load_safetensors(ck_weights **w, const char *path, const char *const *groups,
                            ck_error *err)
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
        int want = file_tensor_wanted(groups, t->name, t->dtype);
        rc = want < 0 ? ck_fail(err, CK_E_MEMORY, "%s: out of memory", path)
                      : want ? add_file_tensor(*w, path, t, err) : CK_OK;
    }
    return rc;
}

/* The floating tensors of the wanted groups of a torch.save checkpoint (I64 buffers such as
 * position_ids skipped) into a new *w (set even on error); other storages are never read. */
static int load_pth(ck_weights **w, const char *path, const char *const *groups, ck_error *err)
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
        int want = file_tensor_wanted(groups, t->name, t->dtype);
        if (want < 0) {
            rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
        } else if (want) {
            rc = ck_pth_view(f, i, &view, err);
            rc = rc == CK_OK ? add_file_tensor(*w, path, &view, err) : rc;
        }
    }
    return rc;
}

/* P of a weight-norm magnitude name "P.weight_g" or "P.parametrizations.weight.original0" (its
 * direction's name in *v_name), malloc'd; NULL when `name` is neither (or out of memory: *oom). */
static char *weight_norm_prefix(const char *name, char **v_name, int *oom)
{
    static const char *const forms[2][2] = {{".weight_g", ".weight_v"},
                                            {".parametrizations.weight.original0",
                                             ".parametrizations.weight.original1"}};
    size_t len = strlen(name);
    for (size_t f = 0; f < 2; f++) {
        size_t sl = strlen(forms[f][0]);
        if (len > sl && strcmp(name + len - sl, forms[f][0]) == 0) {
            char *p = strndup(name, len - sl);
            *v_name = malloc(len + 1);
            if (p == NULL || *v_name == NULL) {
                free(p);
                free(*v_name);
                *v_name = NULL;
                *oom = 1;
                return NULL;
            }
            snprintf(*v_name, len + 1, "%s%s", p, forms[f][1]);
            return p;
        }
    }
    return NULL;
}

/* 1 when `name` is a weight-norm direction ("P.weight_v", "P.parametrizations.weight.original1"). */
static int is_weight_norm_direction(const char *name)
{
    static const char *const ends[2] = {".weight_v", ".parametrizations.weight.original1"};
    size_t len = strlen(name);
    for (size_t f = 0; f < 2; f++) {
        size_t sl = strlen(ends[f]);
        if (len > sl && strcmp(name + len - sl, ends[f]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* W[r, :] = g[r] * v[r, :] / ||v[r, :]|| for every dim-0 row r of v, in double, into a new owned
 * derived tensor named `name`. */
static int add_folded(ck_weights *w, const char *path, char *name, const ck_tensor *g,
                      const ck_tensor *v, ck_error *err)
{
    size_t rows = v->rank > 0 ? v->shape[0] : 1;
    size_t cols = rows > 0 ? v->elements / rows : 0;
    if (g->elements != rows) {
        int rc = ck_fail(err, CK_E_FORMAT, "%s: \"%s\": weight norm: g has %zu elements, v's dim 0 "
                         "is %zu", path, g->name, g->elements, rows);
        free(name);
        return rc;
    }
    float *out = malloc(v->elements ? v->elements * sizeof(float) : 1);
    if (out == NULL) {
        free(name);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    ck_tensor *t = &w->tensors[w->n++];
    t->name = name;
    index_name(w, w->n - 1);
    w->owned[w->n - 1] = out;
    t->rank = v->rank;
    memcpy(t->shape, v->shape, sizeof t->shape);
    t->elements = v->elements;
    t->data = out;
    t->derived = 1;
    for (size_t r = 0; r < rows; r++) {
        const float *vr = v->data + r * cols;
        double ss = 0.0;
        for (size_t c = 0; c < cols; c++) {
            ss += (double)vr[c] * (double)vr[c];
        }
        if (!(ss > 0.0)) {
            return ck_fail(err, CK_E_NONFINITE, "%s: \"%s\": weight norm: row %zu of v has norm 0",
                           path, v->name, r);
        }
        double scale = (double)g->data[r] / sqrt(ss);
        for (size_t c = 0; c < cols; c++) {
            out[r * cols + c] = (float)((double)vr[c] * scale);
        }
    }
    return CK_OK;
}

/* Adds P.weight for every weight-norm pair of w (see ck_weights_load_groups). */
static int fold_weight_norm(ck_weights *w, const char *path, ck_error *err)
{
    size_t stored = w->n;
    for (size_t i = 0; i < stored; i++) {
        const ck_tensor *g = &w->tensors[i];
        char *v_name = NULL;
        int oom = 0;
        char *prefix = weight_norm_prefix(g->name, &v_name, &oom);
        if (oom) {
            return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
        }
        if (prefix == NULL) {
            continue;
        }
        size_t n = strlen(prefix) + sizeof ".weight";
        char *name = malloc(n);
        const ck_tensor *v = ck_weights_find(w, v_name);
        int rc = CK_OK;
        if (name == NULL) {
            rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
        } else if (snprintf(name, n, "%s.weight", prefix), v == NULL) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: \"%s\": weight norm: no \"%s\" beside it", path,
                         g->name, v_name);
        } else if (ck_weights_find(w, name) != NULL && ck_weights_find(w, name)->derived) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: \"%s\": weight norm: \"%s\" is also derived from "
                         "another g and v", path, g->name, name);
        } else if (ck_weights_find(w, name) != NULL) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: \"%s\": stored beside its weight-norm g and v",
                         path, name);
        }
        free(prefix);
        free(v_name);
        if (rc != CK_OK) {
            free(name);
            return rc;
        }
        rc = add_folded(w, path, name, g, v, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    for (size_t i = 0; i < stored; i++) {
        const char *name = w->tensors[i].name;
        if (is_weight_norm_direction(name)) {
            size_t len = strlen(name);
            char *g_name = strdup(name);
            if (g_name == NULL) {
                return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
            }
            g_name[len - 1] = g_name[len - 1] == 'v' ? 'g' : '0';
            int found = ck_weights_find(w, g_name) != NULL;
            free(g_name);
            if (!found) {
                return ck_fail(err, CK_E_FORMAT, "%s: \"%s\": weight norm: no magnitude (g) beside it",
                               path, name);
            }
        }
    }
    return CK_OK;
}

/* A NULL-terminated copy of groups into w->groups (NULL stays NULL). */
static int keep_groups(ck_weights *w, const char *const *groups)
{
    size_t n = 0;
    while (groups != NULL && groups[n] != NULL) {
        n++;
    }
    if (groups == NULL) {
        return CK_OK;
    }
    w->groups = calloc(n + 1, sizeof *w->groups);
    for (size_t i = 0; w->groups != NULL && i < n; i++) {
        if ((w->groups[i] = strdup(groups[i])) == NULL) {
            return CK_E_MEMORY;
        }
    }
    return w->groups != NULL ? CK_OK : CK_E_MEMORY;
}

/* Dispatches by content, not by name: a torch.save archive starts "PK\x03\x04" (ck_pth_sniff),
 * anything else is read as safetensors. */
int ck_weights_load_groups(ck_weights **out, const char *path, const char *const *groups,
                           ck_error *err)
{
    ck_weights *w = NULL;
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "weights: null out or path");
    }
    *out = NULL;
    int rc = ck_pth_sniff(path) ? load_pth(&w, path, groups, err)
                                : load_safetensors(&w, path, groups, err);
    rc = rc == CK_OK ? fold_weight_norm(w, path, err) : rc;
    if (rc == CK_OK && keep_groups(w, groups) != CK_OK) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
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

int ck_weights_load(ck_weights **out, const char *path, ck_error *err)
{
    return ck_weights_load_groups(out, path, NULL, err);
}

int ck_weights_has_group(const ck_weights *w, const char *group)
{
    for (size_t i = 0; w != NULL && group != NULL && i < w->n; i++) {
        if (in_group(w->tensors[i].name, group)) {
            return 1;
        }
    }
    return 0;
}

int ck_weights_read_group(const ck_weights *w, const char *group)
{
    return w != NULL && group != NULL && wanted((const char *const *)w->groups, group);
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
    index_name(w, w->n - 1);
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
    rc = rc == CK_OK ? fold_weight_norm(w, "synthetic weights", err) : rc;
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
    if (w == NULL || name == NULL) {
        return NULL;
    }
    for (size_t h = (size_t)ck_fnv1a64(name) & w->slot_mask; w->slots[h] != 0;
         h = (h + 1) & w->slot_mask) {
        const ck_tensor *t = &w->tensors[w->slots[h] - 1];
        if (strcmp(t->name, name) == 0) {
            return t;
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
    size_t n = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (!w->tensors[i].derived) {
            e[n].name = w->tensors[i].name;
            e[n].dtype = CK_DTYPE_F32;
            e[n].rank = w->tensors[i].rank;
            memcpy(e[n].shape, w->tensors[i].shape, sizeof e[n].shape);
            e[n].data = w->tensors[i].data;
            n++;
        }
    }
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)w->seed);
    const ck_st_meta meta[3] = {{"identity", ck_weights_identity(w)},
                                {"generator", CK_SYNTH_GENERATOR},
                                {"seed", seed_text}};
    int rc = ck_st_write(path, e, n, meta, w->synthetic ? 3 : 1, err);
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
    for (size_t i = 0; w->groups != NULL && w->groups[i] != NULL; i++) {
        free(w->groups[i]);
    }
    free(w->groups);
    free(w->tensors);
    free(w->owned);
    free(w->slots);
    free(w->identity);
    free(w);
}
