/* features_read.c - ckbatch.h's reader of features files (ck_features_*): the safetensors reader
 * of formats/ behind the public tensor view. */
#include <stdlib.h>
#include <string.h>

#include "ckbatch.h"
#include "safetensors.h"

struct ck_features_file {
    ck_st_file *st;
    ck_tensor_view *views;  /* [n] in header order */
    size_t n;
};

int ck_features_open(ck_features_file **out, const char *path, ck_error *err)
{
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "features: null %s", out == NULL ? "out" : "path");
    }
    *out = NULL;
    ck_features_file *f = calloc(1, sizeof *f);
    if (f == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: cannot allocate", path);
    }
    int rc = ck_st_open(&f->st, path, err);
    f->n = rc == CK_OK ? ck_st_count(f->st) : 0;
    if (rc == CK_OK && f->n > 0 && (f->views = calloc(f->n, sizeof *f->views)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: cannot allocate %zu tensor views", path, f->n);
    }
    for (size_t i = 0; rc == CK_OK && i < f->n; i++) {
        const ck_st_tensor *t = ck_st_at(f->st, i);
        ck_tensor_view *v = &f->views[i];
        v->name = t->name;
        v->dtype = ck_dtype_name(t->dtype);
        v->rank = t->rank;
        memcpy(v->shape, t->shape, sizeof v->shape);
        v->elements = t->elements;
        v->data = t->data;
        v->bytes = t->bytes;
    }
    if (rc != CK_OK) {
        ck_features_close(f);
        return rc;
    }
    *out = f;
    return CK_OK;
}

const ck_tensor_view *ck_features_tensor(const ck_features_file *f, const char *name)
{
    for (size_t i = 0; f != NULL && name != NULL && i < f->n; i++) {
        if (strcmp(f->views[i].name, name) == 0) {
            return &f->views[i];
        }
    }
    return NULL;
}

const char *ck_features_metadata(const ck_features_file *f, const char *key)
{
    return f != NULL ? ck_st_metadata(f->st, key) : NULL;
}

void ck_features_close(ck_features_file *f)
{
    if (f != NULL) {
        ck_st_close(f->st);
        free(f->views);
        free(f);
    }
}
