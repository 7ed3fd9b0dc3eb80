/* weights_manifest.c - writes and verifies SHA-256 weight manifests; lists a weights file's tensors.
 * Must not modify a tensor, and must check every manifest field's type before using it. */
#include "weights_manifest.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "pth.h"
#include "safetensors.h"
#include "sha256.h"
#include "json.h"

#define MAX_MANIFEST_BYTES (64u << 20)  /* far above 25 tensors' entries; bounds a hostile file */

/* JSON array of the first `rank` sizes, or NULL. */
static cJSON *shape_json(const size_t *shape, size_t rank)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t d = 0; a != NULL && d < rank; d++) {
        if (!cJSON_AddItemToArray(a, cJSON_CreateNumber((double)shape[d]))) {
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

static cJSON *tensor_json(const ck_tensor *t)
{
    char hex[65];
    cJSON *o = cJSON_CreateObject();
    cJSON *shape = shape_json(t->shape, t->rank);
    ck_sha256_hex(t->sha256, hex);
    if (o == NULL || shape == NULL || !cJSON_AddItemToObject(o, "name", cJSON_CreateString(t->name)) ||
        !cJSON_AddItemToObject(o, "dtype", cJSON_CreateString("F32")) ||
        !cJSON_AddItemToObject(o, "shape", shape) ||
        !cJSON_AddItemToObject(o, "sha256", cJSON_CreateString(hex))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The manifest document of hashed w, or NULL when out of memory. */
static cJSON *manifest_json(const ck_weights *w, const char *path, const char *file_hex)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *tensors = cJSON_CreateArray();
    if (doc == NULL || tensors == NULL ||
        !cJSON_AddItemToObject(doc, "format", cJSON_CreateString(CK_MANIFEST_FORMAT)) ||
        !cJSON_AddItemToObject(doc, "file", cJSON_CreateString(path)) ||
        !cJSON_AddItemToObject(doc, "file_sha256", cJSON_CreateString(file_hex)) ||
        !cJSON_AddItemToObject(doc, "tensors", tensors)) {
        cJSON_Delete(doc);
        return NULL;
    }
    for (size_t i = 0; i < ck_weights_count(w); i++) {
        if (ck_weights_at(w, i)->derived) {
            continue;
        }
        if (!cJSON_AddItemToArray(tensors, tensor_json(ck_weights_at(w, i)))) {
            cJSON_Delete(doc);
            return NULL;
        }
    }
    return doc;
}

int ck_weights_manifest_write(FILE *out, ck_weights *w, const char *path, ck_error *err)
{
    char file_hex[65];
    if (out == NULL || w == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "manifest: null out, weights or path");
    }
    int rc = ck_weights_hash(w, err);
    rc = rc == CK_OK ? ck_sha256_file(path, file_hex, err) : rc;
    if (rc != CK_OK) {
        return rc;
    }
    cJSON *doc = manifest_json(w, path, file_hex);
    char *text = doc != NULL ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "manifest of %s: out of memory", path);
    }
    if (fprintf(out, "%s\n", text) < 0 || fflush(out) != 0) {
        rc = ck_fail(err, CK_E_IO, "manifest of %s: write failed", path);
    }
    free(text);
    return rc;
}

/* Checks tensor t against manifest entry e (object with name, shape, sha256). */
static int check_entry(const char *mpath, const ck_tensor *t, const cJSON *e, ck_error *err)
{
    char hex[65];
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(e, "sha256");
    if (!cJSON_IsArray(shape) || !cJSON_IsString(sha)) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": shape or sha256: missing or wrong type",
                       mpath, t->name);
    }
    int same_shape = (size_t)cJSON_GetArraySize(shape) == t->rank;
    for (size_t d = 0; same_shape && d < t->rank; d++) {
        const cJSON *v = cJSON_GetArrayItem(shape, (int)d);
        same_shape = cJSON_IsNumber(v) && v->valuedouble == (double)t->shape[d];
    }
    if (!same_shape) {
        return ck_fail(err, CK_E_HASH, "%s: tensor \"%s\": shape differs from the manifest", mpath,
                       t->name);
    }
    ck_sha256_hex(t->sha256, hex);
    if (strcmp(hex, sha->valuestring) != 0) {
        return ck_fail(err, CK_E_HASH, "%s: tensor \"%s\": sha256 %.16s..., manifest has %.16s...",
                       mpath, t->name, hex, sha->valuestring);
    }
    return CK_OK;
}

/* Entry named `name` in the tensors array, or NULL; *twice set when a second entry has it too. */
static const cJSON *find_entry(const cJSON *tensors, const char *name, int *twice)
{
    const cJSON *e, *found = NULL;
    *twice = 0;
    cJSON_ArrayForEach(e, tensors) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
            *twice = found != NULL;
            if (*twice) {
                break;
            }
            found = e;
        }
    }
    return found;
}

static int verify_doc(ck_weights *w, const char *mpath, const cJSON *doc, ck_error *err)
{
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
    const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(doc, "tensors");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, CK_MANIFEST_FORMAT) != 0 ||
        !cJSON_IsArray(tensors)) {
        return ck_fail(err, CK_E_FORMAT, "%s: format or tensors: expected \"%s\" and an array", mpath,
                       CK_MANIFEST_FORMAT);
    }
    int rc = ck_weights_hash(w, err);
    for (size_t i = 0; i < ck_weights_count(w) && rc == CK_OK; i++) {
        const ck_tensor *t = ck_weights_at(w, i);
        if (t->derived) {
            continue;
        }
        int twice = 0;
        const cJSON *e = find_entry(tensors, t->name, &twice);
        rc = twice ? ck_fail(err, CK_E_HASH, "%s: tensor \"%s\": listed twice in the manifest",
                             mpath, t->name)
             : e != NULL ? check_entry(mpath, t, e, err)
                         : ck_fail(err, CK_E_HASH, "%s: tensor \"%s\": not in the manifest", mpath,
                                   t->name);
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, tensors) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        const ck_tensor *t = cJSON_IsString(n) ? ck_weights_find(w, n->valuestring) : NULL;
        int expected = cJSON_IsString(n) && ck_weights_read_group(w, n->valuestring);
        if (rc == CK_OK && (!cJSON_IsString(n) || (t == NULL && expected) ||
                            (t != NULL && t->derived))) {
            /* a derived (folded) weight is not stored, so never hashed against its entry */
            rc = ck_fail(err, CK_E_HASH, "%s: tensor \"%s\": in the manifest, not in the weights%s",
                         mpath, cJSON_IsString(n) ? n->valuestring : "(no name)",
                         t != NULL ? " (derived at load from its g and v)" : "");
        }
    }
    return rc;
}

int ck_weights_manifest_verify(ck_weights *w, const char *manifest_path, ck_error *err)
{
    char *text = NULL;
    if (w == NULL || manifest_path == NULL) {
        return ck_fail(err, CK_E_ARG, "manifest: null weights or path");
    }
    int rc = ck_file_read_all(manifest_path, "manifest", MAX_MANIFEST_BYTES, &text, NULL, err);
    size_t at = 0;
    const char *why = NULL;
    cJSON *doc = rc == CK_OK ? ck_json_parse(text, strlen(text), &at, &why) : NULL;
    if (rc == CK_OK && doc == NULL) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: not valid JSON: %s at byte %zu (line %zu)",
                     manifest_path, why, at, ck_json_line(text, at));
    }
    rc = rc == CK_OK ? verify_doc(w, manifest_path, doc, err) : rc;
    cJSON_Delete(doc);
    free(text);
    return rc;
}

/* One "name\tdtype\t[shape]\tbytes" line. */
static int print_line(FILE *out, const char *name, const char *dtype, const size_t *shape,
                      size_t rank, size_t bytes)
{
    int bad = fprintf(out, "%s\t%s\t[", name, dtype) < 0;
    for (size_t d = 0; d < rank; d++) {
        bad |= fprintf(out, d ? ",%zu" : "%zu", shape[d]) < 0;
    }
    bad |= fprintf(out, "]\t%zu\n", bytes) < 0;
    return bad ? CK_E_IO : CK_OK;
}

int ck_weights_inspect(FILE *out, const char *path, ck_error *err)
{
    ck_pth_file *p = NULL;
    ck_st_file *s = NULL;
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "inspect: null out or path");
    }
    int rc = ck_pth_sniff(path) ? ck_pth_open(&p, path, err) : ck_st_open(&s, path, err);
    for (size_t i = 0; rc == CK_OK && i < ck_pth_count(p); i++) {
        const ck_pth_tensor *t = ck_pth_at(p, i);
        rc = print_line(out, t->name, ck_dtype_name(t->dtype), t->shape, t->rank,
                        t->elements * ck_dtype_size(t->dtype));
    }
    for (size_t i = 0; rc == CK_OK && i < ck_st_count(s); i++) {
        const ck_st_tensor *t = ck_st_at(s, i);
        rc = print_line(out, t->name, ck_dtype_name(t->dtype), t->shape, t->rank, t->bytes);
    }
    if (rc == CK_E_IO) {
        ck_fail(err, CK_E_IO, "inspect %s: write failed", path);
    }
    ck_pth_close(p);
    ck_st_close(s);
    return rc;
}
