/* pth.c - torch.save checkpoints: finds data.pkl, unpickles it (restricted), names and checks every
 * tensor view against its storage entry. Must not read a storage before its tensor is viewed. */
#include "pth.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pth_pickle.h"
#include "zip.h"

struct ck_pth_file {
    char *path;
    ck_zip *zip;
    ck_pickle pickle;
    char *dir;                 /* "<dir>/" prefix of every entry */
    ck_pth_tensor *tensors;
    size_t n, cap;
    unsigned char *verified;   /* [zip entries]: CRC already checked */
};

/* O_NONBLOCK and regular files only: a FIFO with no writer must not block here (0: the caller's
 * own open refuses it). */
int ck_pth_sniff(const char *path)
{
    unsigned char magic[4] = {0};
    struct stat st;
    int fd = path != NULL ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    if (fd < 0) {
        return 0;
    }
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, magic, sizeof magic) : 0;
    close(fd);
    return got == 4 && memcmp(magic, "PK\x03\x04", 4) == 0;
}

/* Sets f->dir from the single entry named "<dir>/data.pkl" and returns that entry, or NULL. */
static const ck_zip_entry *find_pickle(ck_pth_file *f, ck_error *err)
{
    const ck_zip_entry *found = NULL;
    for (size_t i = 0; i < ck_zip_count(f->zip); i++) {
        const char *name = ck_zip_at(f->zip, i)->name;
        const char *slash = strchr(name, '/');
        if (slash != NULL && slash != name && strcmp(slash, "/data.pkl") == 0) {
            if (found != NULL) {
                ck_fail(err, CK_E_FORMAT, "%s: two data.pkl entries", f->path);
                return NULL;
            }
            found = ck_zip_at(f->zip, i);
        }
    }
    if (found == NULL) {
        ck_fail(err, CK_E_FORMAT, "%s: no \"<dir>/data.pkl\" entry (not a torch.save archive)",
                f->path);
        return NULL;
    }
    f->dir = strndup(found->name, strlen(found->name) - strlen("data.pkl"));
    if (f->dir == NULL) {
        ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
    }
    return f->dir != NULL ? found : NULL;
}

/* Entry "<dir><rest>", or NULL (also when out of memory: the caller reports it missing). */
static const ck_zip_entry *dir_entry(const ck_pth_file *f, const char *rest, size_t rest_len)
{
    size_t n = strlen(f->dir) + rest_len + 1;
    char *name = malloc(n);
    if (name == NULL) {
        return NULL;
    }
    snprintf(name, n, "%s%.*s", f->dir, (int)rest_len, rest);
    const ck_zip_entry *e = ck_zip_find(f->zip, name);
    free(name);
    return e;
}

static int check_byteorder(const ck_pth_file *f, ck_error *err)
{
    const ck_zip_entry *e = dir_entry(f, "byteorder", 9);
    if (e != NULL && !(e->size == 6 && memcmp(e->data, "little", 6) == 0)) {
        return ck_fail(err, CK_E_FORMAT, "%s: byteorder: got \"%.*s\", expected \"little\"", f->path,
                       (int)(e->size > 16 ? 16 : e->size), (const char *)e->data);
    }
    return CK_OK;
}

/* Shape, contiguity, bounds and storage size of tensor t whose storage is s. */
static int check_view(const ck_pth_file *f, ck_pth_tensor *t, const ck_pv *s, ck_error *err)
{
    size_t elements = 1, expect = 1, esize = ck_dtype_size(t->dtype);
    for (size_t d = t->rank; d-- > 0;) {
        if (t->shape[d] != 1 && t->stride[d] != expect) {
            return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": stride[%zu] = %zu, expected %zu "
                           "(non-contiguous views are not read)", f->path, t->name, d, t->stride[d],
                           expect);
        }
        if (t->shape[d] != 0 && expect > SIZE_MAX / esize / t->shape[d]) {
            return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": shape overflows", f->path, t->name);
        }
        expect *= t->shape[d];
        elements *= t->shape[d];
    }
    t->elements = elements;
    if (s->numel > SIZE_MAX / esize || t->offset > s->numel || elements > s->numel - t->offset) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": offset %zu + %zu elements exceeds its "
                       "storage \"%.*s\" of %zu elements", f->path, t->name, t->offset, elements,
                       (int)s->key->len, s->key->s, s->numel);
    }
    return CK_OK;
}

/* Finds tensor t's storage entry and checks it holds exactly numel x dtype-size bytes. */
static int bind_storage(const ck_pth_file *f, ck_pth_tensor *t, const ck_pv *s, ck_error *err)
{
    char rest[96];
    int len = snprintf(rest, sizeof rest, "data/%.*s", (int)(s->key->len > 80 ? 80 : s->key->len),
                       s->key->s);
    const ck_zip_entry *e = s->key->len <= 80 ? dir_entry(f, rest, (size_t)len) : NULL;
    if (e == NULL) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": storage key \"%s\" has no entry %s%s",
                       f->path, t->name, rest + 5, f->dir, rest);
    }
    if (e->size != s->numel * ck_dtype_size(t->dtype)) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": storage %s holds %zu bytes, its %zu "
                       "elements need %zu", f->path, t->name, e->name, e->size, s->numel,
                       s->numel * ck_dtype_size(t->dtype));
    }
    t->storage = e->name;
    return CK_OK;
}

/* Appends tensor value v named prefix + "." + key (or key alone at the top level). */
static int add_tensor(ck_pth_file *f, const char *prefix, const ck_pv *key, const ck_pv *v,
                      const char *group, ck_error *err)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        ck_pth_tensor *t = realloc(f->tensors, cap * sizeof *t);
        if (t == NULL) {
            return ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
        }
        f->tensors = t;
        f->cap = cap;
    }
    ck_pth_tensor *t = &f->tensors[f->n++];
    memset(t, 0, sizeof *t);
    size_t n = strlen(prefix) + key->len + 2;
    t->name = malloc(n);
    t->group = group != NULL ? strdup(group) : NULL;
    if (t->name == NULL || (group != NULL && t->group == NULL)) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
    }
    snprintf(t->name, n, "%s%s%.*s", prefix, prefix[0] ? "." : "", (int)key->len, key->s);
    t->dtype = v->dtype;
    t->rank = v->rank;
    memcpy(t->shape, v->shape, sizeof t->shape);
    memcpy(t->stride, v->stride, sizeof t->stride);
    t->offset = v->offset;
    int rc = check_view(f, t, v->key, err);
    return rc == CK_OK ? bind_storage(f, t, v->key, err) : rc;
}

/* Names every tensor under dict d; `group` is the top-level key of the sub-dict being walked. */
static int walk(ck_pth_file *f, ck_pv *d, const char *prefix, const char *group, size_t depth,
                ck_error *err)
{
    if (depth > CK_PICKLE_MAX_DEPTH || d->seen) {
        /* a dict reached twice (shared or cyclic) would multiply the walk: state dicts never share */
        return ck_fail(err, CK_E_FORMAT, "%s: \"%s\": dicts nested deeper than %d, shared or "
                       "cyclic", f->path, prefix, CK_PICKLE_MAX_DEPTH);
    }
    d->seen = 1;
    int rc = CK_OK;
    for (size_t i = 0; i + 1 < d->n && rc == CK_OK; i += 2) {
        const ck_pv *key = d->items[i];
        ck_pv *v = d->items[i + 1];
        if (key->kind != CK_PV_STR || memchr(key->s, '\0', key->len) != NULL || key->len > 4096) {
            return ck_fail(err, CK_E_FORMAT, "%s: \"%s\": key %zu is not a string", f->path, prefix,
                           i / 2);
        }
        if (v->kind == CK_PV_TENSOR) {
            rc = add_tensor(f, prefix, key, v, group, err);
        } else if (v->kind == CK_PV_DICT) {
            size_t n = strlen(prefix) + key->len + 2;
            char *sub = malloc(n);
            if (sub == NULL) {
                return ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
            }
            snprintf(sub, n, "%s%s%.*s", prefix, prefix[0] ? "." : "", (int)key->len, key->s);
            rc = walk(f, v, sub, depth == 0 ? sub : group, depth + 1, err);
            free(sub);
        }
    }
    return rc;
}

/* Reads the archive at f->path, or bytes[n] when bytes is not NULL. */
static int read_checkpoint(ck_pth_file *f, const void *bytes, size_t n, ck_error *err)
{
    int rc = bytes != NULL ? ck_zip_open_memory(&f->zip, bytes, n, f->path, err)
                           : ck_zip_open(&f->zip, f->path, err);
    const ck_zip_entry *pkl = rc == CK_OK ? find_pickle(f, err) : NULL;
    if (pkl == NULL) {
        return rc != CK_OK ? rc : err != NULL && err->code != CK_OK ? err->code : CK_E_FORMAT;
    }
    rc = check_byteorder(f, err);
    rc = rc == CK_OK ? ck_zip_verify(f->zip, pkl, err) : rc;
    rc = rc == CK_OK ? ck_pickle_load(&f->pickle, pkl->data, pkl->size, f->path, err) : rc;
    ck_pv_kind top = rc == CK_OK ? f->pickle.root->kind : CK_PV_DICT;
    if (top != CK_PV_DICT && top != CK_PV_TENSOR) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: data.pkl: top level is neither a dict nor a tensor",
                     f->path);
    }
    f->verified = rc == CK_OK ? calloc(ck_zip_count(f->zip) + 1, 1) : NULL;
    if (rc == CK_OK && f->verified == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
    }
    if (rc == CK_OK && top == CK_PV_TENSOR) {
        ck_pv unnamed = {.kind = CK_PV_STR, .s = "", .len = 0};
        return add_tensor(f, "", &unnamed, f->pickle.root, NULL, err);
    }
    return rc == CK_OK ? walk(f, f->pickle.root, "", NULL, 0, err) : rc;
}

/* A checkpoint named `name`: the file at that path, or bytes[n] when bytes is not NULL. */
static int open_checkpoint(ck_pth_file **out, const char *name, const void *bytes, size_t n,
                           ck_error *err)
{
    *out = NULL;
    ck_pth_file *f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(name)) == NULL) {
        ck_pth_close(f);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", name);
    }
    int rc = read_checkpoint(f, bytes, n, err);
    if (rc != CK_OK) {
        ck_pth_close(f);
        return rc;
    }
    *out = f;
    return CK_OK;
}

int ck_pth_open(ck_pth_file **out, const char *path, ck_error *err)
{
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "pth: null out or path");
    }
    return open_checkpoint(out, path, NULL, 0, err);
}

int ck_pth_open_memory(ck_pth_file **out, const void *bytes, size_t n, const char *name,
                       ck_error *err)
{
    if (out == NULL || bytes == NULL) {
        return ck_fail(err, CK_E_ARG, "pth: null out or bytes");
    }
    return open_checkpoint(out, name != NULL ? name : "<memory>", bytes, n, err);
}

void ck_pth_close(ck_pth_file *f)
{
    if (f == NULL) {
        return;
    }
    for (size_t i = 0; f->tensors != NULL && i < f->n; i++) {
        free(f->tensors[i].name);
        free(f->tensors[i].group);
    }
    free(f->tensors);
    ck_pickle_free(&f->pickle);
    ck_zip_close(f->zip);
    free(f->verified);
    free(f->dir);
    free(f->path);
    free(f);
}

size_t ck_pth_count(const ck_pth_file *f)
{
    return f != NULL ? f->n : 0;
}

const ck_pth_tensor *ck_pth_at(const ck_pth_file *f, size_t i)
{
    return f != NULL && i < f->n ? &f->tensors[i] : NULL;
}

int ck_pth_view(ck_pth_file *f, size_t i, ck_st_tensor *view, ck_error *err)
{
    if (f == NULL || view == NULL || i >= f->n) {
        return ck_fail(err, CK_E_ARG, "pth: view: null file or view, or index out of range");
    }
    const ck_pth_tensor *t = &f->tensors[i];
    const ck_zip_entry *e = ck_zip_find(f->zip, t->storage);
    size_t k = (size_t)(e - ck_zip_at(f->zip, 0));
    if (!f->verified[k]) {
        int rc = ck_zip_verify(f->zip, e, err);
        if (rc != CK_OK) {
            return rc;
        }
        f->verified[k] = 1;
    }
    memset(view, 0, sizeof *view);
    view->name = t->name;
    view->dtype = t->dtype;
    view->rank = t->rank;
    memcpy(view->shape, t->shape, sizeof view->shape);
    view->elements = t->elements;
    view->bytes = t->elements * ck_dtype_size(t->dtype);
    view->data = e->data + t->offset * ck_dtype_size(t->dtype);
    return CK_OK;
}
