/* xray_files.c - reads captures for X-Ray: the fixture-vs-manifest hash check, case inputs, and the
 * pairing of candidate and oracle tensors by (case, checkpoint). Computes no model output. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "sha256.h"
#include "xray_internal.h"
#include "json.h"

/* A capture manifest lists hashes and thresholds: larger is refused, never read in part. */
#define CK_XRAY_MANIFEST_MAX (16u << 20)

int ck_xray_manifest_path(const char *capture_path, char *out, size_t cap, ck_error *err)
{
    static const char suffix[] = ".safetensors";
    size_t n = strlen(capture_path), s = sizeof suffix - 1;
    if (n >= s && strcmp(capture_path + n - s, suffix) == 0) {
        n -= s;
    }
    if (n + sizeof ".manifest.json" > cap) {
        return ck_fail(err, CK_E_ARG, "%s: path too long", capture_path);
    }
    memcpy(out, capture_path, n);
    strcpy(out + n, ".manifest.json");
    return CK_OK;
}

int ck_xray_verify_fixture(const char *capture_path, const char *manifest_path, void **manifest,
                           ck_error *err)
{
    char *text = NULL;
    size_t n = 0;
    int read = ck_file_read_all(manifest_path, "manifest", CK_XRAY_MANIFEST_MAX, &text, &n, err);
    if (read != CK_OK) {
        return read;
    }
    size_t at = 0;
    const char *why = NULL;
    cJSON *m = ck_json_parse(text, n, &at, &why); /* NULL: no "fixture" string, refused below */
    free(text);
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "fixture"), "sha256");
    char hex[65];
    int rc = !cJSON_IsString(want)
                 ? ck_fail(err, CK_E_FORMAT, "%s: no \"fixture\".\"sha256\" string", manifest_path)
                 : ck_sha256_file(capture_path, hex, err);
    if (rc == CK_OK && strcmp(hex, want->valuestring) != 0) {
        rc = ck_fail(err, CK_E_HASH, "fixture bytes changed, nothing compared: %s: sha256 %.16s..., "
                     "manifest says %.16s...", capture_path, hex, want->valuestring);
    }
    if (rc == CK_OK && manifest != NULL) {
        *manifest = m;
        return CK_OK;
    }
    cJSON_Delete(m);
    return rc;
}

void ck_xray_manifest_free(void *manifest)
{
    cJSON_Delete(manifest);
}

int ck_xray_case_name(const ck_st_file *f, size_t i, char out[CK_XRAY_CASE_MAX])
{
    for (size_t k = 0; k < ck_st_count(f); k++) {
        const char *name = ck_st_at(f, k)->name;
        size_t n = strlen(name);
        if (n > 5 && n - 5 < CK_XRAY_CASE_MAX && strcmp(name + n - 5, ".rows") == 0 && i-- == 0) {
            memcpy(out, name, n - 5);
            out[n - 5] = '\0';
            return 1;
        }
    }
    return 0;
}

/* <case>.<suffix> must exist with the dtype and rank 1; returns it or NULL with err set. */
static const ck_st_tensor *case_tensor(const ck_st_file *f, const char *path, const char *name,
                                       const char *suffix, ck_dtype dtype, ck_error *err)
{
    char key[CK_XRAY_CASE_MAX + 16];
    snprintf(key, sizeof key, "%s.%s", name, suffix);
    const ck_st_tensor *t = ck_st_find(f, key);
    if (t == NULL || t->dtype != dtype || t->rank != 1 || t->elements == 0) {
        ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": missing, not %s or not a non-empty vector",
                path, key, ck_dtype_name(dtype));
        return NULL;
    }
    return t;
}

static size_t *copy_i64(const ck_st_tensor *t)
{
    size_t *out = malloc(t->elements * sizeof *out);
    for (size_t i = 0; out != NULL && i < t->elements; i++) {
        int64_t v;
        memcpy(&v, (const unsigned char *)t->data + 8 * i, 8);
        out[i] = v < 0 ? SIZE_MAX : (size_t)v;
    }
    return out;
}

/* Offsets ascending from 0 to T, rows ascending below T; fills row_seq / row_token. */
static int check_case(ck_xray_case *xc, const char *path, ck_error *err)
{
    int ok = xc->offsets[0] == 0 && xc->offsets[xc->n_seqs] == xc->tokens;
    for (size_t s = 0; ok && s < xc->n_seqs; s++) {
        ok = xc->offsets[s] < xc->offsets[s + 1];
    }
    size_t seq = 0;
    for (size_t r = 0; ok && r < xc->n_rows; r++) {
        ok = xc->rows[r] < xc->tokens && (r == 0 || xc->rows[r] > xc->rows[r - 1]);
        while (ok && xc->rows[r] >= xc->offsets[seq + 1]) {
            seq++;
        }
        xc->row_seq[r] = seq;
        xc->row_token[r] = ok ? xc->rows[r] - xc->offsets[seq] : 0;
    }
    return ok ? CK_OK : ck_fail(err, CK_E_FORMAT, "%s: case \"%s\": offsets must ascend from 0 to "
                                "%zu and rows ascend below it", path, xc->name, xc->tokens);
}

int ck_xray_case_load(ck_xray_case *xc, const ck_st_file *f, const char *path, const char *name,
                      ck_error *err)
{
    memset(xc, 0, sizeof *xc);
    if (strlen(name) >= sizeof xc->name) {
        return ck_fail(err, CK_E_ARG, "%s: case name \"%s\" too long", path, name);
    }
    strcpy(xc->name, name);
    const ck_st_tensor *off = case_tensor(f, path, name, "offsets", CK_DTYPE_I64, err);
    const ck_st_tensor *rows = off ? case_tensor(f, path, name, "rows", CK_DTYPE_I64, err) : NULL;
    const ck_st_tensor *ids = rows ? case_tensor(f, path, name, "ids", CK_DTYPE_I32, err) : NULL;
    if (ids == NULL) {
        return CK_E_FORMAT;
    }
    xc->n_seqs = off->elements - 1;
    xc->tokens = ids->elements;
    xc->n_rows = rows->elements;
    xc->offsets = copy_i64(off);
    xc->rows = copy_i64(rows);
    xc->ids = malloc(ids->bytes);
    xc->row_seq = calloc(xc->n_rows, sizeof *xc->row_seq);
    xc->row_token = calloc(xc->n_rows, sizeof *xc->row_token);
    if (!xc->offsets || !xc->rows || !xc->ids || !xc->row_seq || !xc->row_token) {
        ck_xray_case_free(xc);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    memcpy(xc->ids, ids->data, ids->bytes);
    int rc = xc->n_seqs == 0 ? ck_fail(err, CK_E_FORMAT, "%s: %s.offsets: no sequence", path, name)
                             : check_case(xc, path, err);
    if (rc != CK_OK) {
        ck_xray_case_free(xc);
    }
    return rc;
}

void ck_xray_case_free(ck_xray_case *xc)
{
    free(xc->offsets);
    free(xc->ids);
    free(xc->rows);
    free(xc->row_seq);
    free(xc->row_token);
    memset(xc, 0, sizeof *xc);
}

static float *tensor_f32(const ck_st_tensor *t)
{
    float *out = malloc(t->elements * sizeof *out);
    ck_error ignored = {0};
    if (out != NULL && ck_st_to_f32(t, out, t->elements, &ignored) != CK_OK) {
        free(out);
        return NULL;
    }
    return out;
}

static int shape_ok(const ck_st_tensor *t, size_t rows)
{
    return t->dtype == CK_DTYPE_F32 && t->rank == 2 && t->shape[0] == rows && t->shape[1] > 0;
}

int ck_xray_compare_tensors(const ck_xray_case *xc, const char *checkpoint,
                            const ck_st_tensor *cand, const ck_st_tensor *oracle,
                            const ck_xray_profile *profile, ck_xray_report *rep, ck_error *err)
{
    if (cand == NULL || oracle == NULL) {
        return ck_xray_report_not_tested(rep, xc->name, checkpoint, cand == NULL && oracle == NULL
                                         ? "in neither capture" : cand == NULL
                                         ? "absent from the candidate" : "absent from the oracle",
                                         err);
    }
    if (!shape_ok(oracle, xc->n_rows) || !shape_ok(cand, xc->n_rows) ||
        cand->shape[1] != oracle->shape[1]) {
        return ck_fail(err, CK_E_FORMAT, "case \"%s\": checkpoint \"%s\": expected F32 [%zu, C] on "
                       "both sides with the same C", xc->name, checkpoint, xc->n_rows);
    }
    float *c = tensor_f32(cand), *o = tensor_f32(oracle);
    ck_xray_budget b = ck_xray_profile_budget(profile, checkpoint);
    ck_xray_result r;
    memset(&r, 0, sizeof r);
    int rc = c && o ? ck_xray_compare(c, o, xc->n_rows, oracle->shape[1], xc->row_seq,
                                      xc->row_token, &b, &r)
                    : ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    free(c);
    free(o);
    if (rc != CK_OK) {
        return rc;
    }
    snprintf(r.case_name, sizeof r.case_name, "%s", xc->name);
    snprintf(r.checkpoint, sizeof r.checkpoint, "%s", checkpoint);
    r.tokens = xc->tokens;
    return ck_xray_report_add(rep, &r, err);
}

static int same_inputs(const ck_xray_case *a, const ck_xray_case *b)
{
    return a->n_seqs == b->n_seqs && a->tokens == b->tokens && a->n_rows == b->n_rows &&
           memcmp(a->offsets, b->offsets, (a->n_seqs + 1) * sizeof *a->offsets) == 0 &&
           memcmp(a->ids, b->ids, a->tokens * sizeof *a->ids) == 0 &&
           memcmp(a->rows, b->rows, a->n_rows * sizeof *a->rows) == 0;
}

/* One case: identical inputs on both sides, then every checkpoint id. */
static int compare_case(const ck_st_file *cand, const ck_st_file *oracle, const ck_xray_case *oc,
                        const char *const *ids, size_t n_ids, const ck_xray_profile *profile,
                        ck_xray_report *rep, ck_error *err)
{
    ck_xray_case cc;
    ck_error ignored = {0};
    int have = ck_xray_case_load(&cc, cand, "candidate", oc->name, &ignored) == CK_OK;
    int rc = CK_OK;
    for (size_t i = 0; rc == CK_OK && i < n_ids; i++) {
        char key[CK_XRAY_CASE_MAX + CK_CHECKPOINT_MAX + 2];
        snprintf(key, sizeof key, "%s.%s", oc->name, ids[i]);
        if (have && !same_inputs(&cc, oc)) {
            ck_xray_result r;
            memset(&r, 0, sizeof r);
            r.status = CK_XRAY_FAIL;
            snprintf(r.case_name, sizeof r.case_name, "%s", oc->name);
            snprintf(r.checkpoint, sizeof r.checkpoint, "%s", ids[i]);
            snprintf(r.reason, sizeof r.reason, "candidate inputs (ids, offsets, rows) differ");
            rc = ck_xray_report_add(rep, &r, err);
        } else {
            rc = ck_xray_compare_tensors(oc, ids[i], have ? ck_st_find(cand, key) : NULL,
                                         ck_st_find(oracle, key), profile, rep, err);
        }
    }
    if (have) {
        ck_xray_case_free(&cc);
    }
    return rc;
}

int ck_xray_compare_files(const ck_st_file *candidate, const ck_st_file *oracle,
                          const char *const *checkpoints, size_t n_checkpoints,
                          const ck_xray_profile *profile, ck_xray_report *rep, ck_error *err)
{
    char name[CK_XRAY_CASE_MAX];
    int rc = CK_OK;
    for (size_t i = 0; rc == CK_OK && ck_xray_case_name(oracle, i, name); i++) {
        ck_xray_case oc;
        rc = ck_xray_case_load(&oc, oracle, "oracle", name, err);
        if (rc == CK_OK) {
            rc = compare_case(candidate, oracle, &oc, checkpoints, n_checkpoints, profile, rep, err);
            ck_xray_case_free(&oc);
        }
    }
    return rc;
}

int ck_xray_circuit_checkpoints(const ck_circuit *c, const char ***ids, size_t *n, ck_error *err)
{
    *ids = calloc(c->n_ops + c->n_aliases + 1, sizeof **ids);
    if (*ids == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    }
    *n = 0;
    for (size_t i = 0; i < c->n_ops; i++) {
        if (c->ops[i].checkpoint[0] != '\0') {
            (*ids)[(*n)++] = c->ops[i].checkpoint;
        }
    }
    for (size_t i = 0; i < c->n_aliases; i++) {
        (*ids)[(*n)++] = c->aliases[i].checkpoint;
    }
    return CK_OK;
}

int ck_xray_weights_digest(ck_weights *w, unsigned char (**sha)[32], char hex[65], ck_error *err)
{
    size_t n = ck_weights_count(w);
    int rc = ck_weights_hash(w, err);
    if (rc != CK_OK) {
        return rc;
    }
    *sha = calloc(n ? n : 1, sizeof **sha);
    if (*sha == NULL) {
        return ck_fail(err, CK_E_MEMORY, "weights: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        memcpy((*sha)[i], ck_weights_at(w, i)->sha256, 32);
    }
    unsigned char all[32];
    rc = ck_sha256(*sha, n * 32, all);
    if (rc != CK_OK) {
        return ck_fail(err, rc, "weights: SHA-256 failed");
    }
    ck_sha256_hex(all, hex);
    return CK_OK;
}

int ck_xray_weights_unchanged(ck_weights *w, const unsigned char (*before)[32], ck_error *err)
{
    int rc = ck_weights_hash(w, err);
    for (size_t i = 0; rc == CK_OK && i < ck_weights_count(w); i++) {
        if (memcmp(ck_weights_at(w, i)->sha256, before[i], 32) != 0) {
            rc = ck_fail(err, CK_E_PARITY, "weights: tensor \"%s\" changed during the run "
                         "(SHA-256 before and after differ)", ck_weights_at(w, i)->name);
        }
    }
    return rc;
}
