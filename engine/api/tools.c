/* tools.c - the weights tools of ckbatch.h (demo weights, describe, manifest): each returns what
 * the CLI prints as a malloc'd string, so the library writes to no stream of the caller's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckbatch.h"
#include "ck_error.h"
#include "kokoro_layout.h"
#include "weights.h"
#include "weights_manifest.h"

void ck_free(void *p)
{
    free(p);
}

int ck_demo_weights_write(const char *path, uint64_t seed, char **identity, ck_error *err)
{
    if (identity != NULL) {
        *identity = NULL;
    }
    if (path == NULL) {
        return ck_fail(err, CK_E_ARG, "demo weights: null path");
    }
    ck_weight_spec *specs = NULL;
    size_t n = 0;
    ck_weights *w = NULL;
    int rc = ck_kokoro_weight_specs(&specs, &n, NULL, err);
    if (rc == CK_OK) {
        rc = ck_weights_synthetic(&w, specs, n, seed, err);
        free(specs);
    }
    if (rc == CK_OK) {
        rc = ck_weights_save(w, path, err);
    }
    if (rc == CK_OK && identity != NULL && (*identity = strdup(ck_weights_identity(w))) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "demo weights: cannot copy the identity");
    }
    ck_weights_free(w);
    return rc;
}

/* Runs write(f, ...) into a memory stream and hands its bytes over as *text. */
typedef int (*stream_writer)(FILE *f, void *ctx, ck_error *err);

static int to_string(stream_writer write, void *ctx, char **text, ck_error *err)
{
    size_t len = 0;
    *text = NULL;
    FILE *f = open_memstream(text, &len);
    if (f == NULL) {
        return ck_fail(err, CK_E_MEMORY, "cannot allocate a memory stream");
    }
    int rc = write(f, ctx, err);
    if (fclose(f) != 0 && rc == CK_OK) {
        rc = ck_fail(err, CK_E_MEMORY, "cannot allocate the text");
    }
    if (rc != CK_OK) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

static int write_inspect(FILE *f, void *ctx, ck_error *err)
{
    return ck_weights_inspect(f, ctx, err);
}

int ck_weights_describe(const char *path, char **text, ck_error *err)
{
    if (path == NULL || text == NULL) {
        return ck_fail(err, CK_E_ARG, "weights describe: null argument");
    }
    return to_string(write_inspect, (void *)path, text, err);
}

typedef struct {
    ck_weights *w;
    const char *path;
} manifest_ctx;

static int write_manifest(FILE *f, void *ctx, ck_error *err)
{
    const manifest_ctx *m = ctx;
    return ck_weights_manifest_write(f, m->w, m->path, err);
}

int ck_weights_manifest(const char *path, char **json, ck_error *err)
{
    if (path == NULL || json == NULL) {
        return ck_fail(err, CK_E_ARG, "weights manifest: null argument");
    }
    *json = NULL;
    manifest_ctx m = {NULL, path};
    int rc = ck_weights_load(&m.w, path, err);
    rc = rc == CK_OK ? to_string(write_manifest, &m, json, err) : rc;
    ck_weights_free(m.w);
    return rc;
}
