/* xray.c - X-Ray metrics, profiles and the report (the table as text, JSON file). Reads no capture and
 * runs nothing: xray_files.c pairs captures, xray_run.c runs the engine. */
#include "xray.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "json.h"

/* circuits/kokoro_phoneme_encoder.bf16_budget.json, embedded by cmake/EmbedFile.cmake (NUL-terminated) */
extern const unsigned char ck_xray_bf16_budget_bytes[];
#define ck_xray_bf16_budget_json ((const char *)ck_xray_bf16_budget_bytes)
/* circuits/kokoro_phoneme_encoder.int8_budget.json, embedded the same way */
extern const unsigned char ck_xray_int8_budget_bytes[];
#define ck_xray_int8_budget_json ((const char *)ck_xray_int8_budget_bytes)
/* circuits/kokoro_speech.xray_budget.json, embedded the same way */
extern const unsigned char ck_xray_speech_budget_bytes[];
#define ck_xray_speech_budget_json ((const char *)ck_xray_speech_budget_bytes)
/* circuits/kokoro_token_edges.xray_budget.json, embedded the same way */
extern const unsigned char ck_xray_token_edges_budget_bytes[];
#define ck_xray_token_edges_budget_json ((const char *)ck_xray_token_edges_budget_bytes)

static const char build_flags[] = "compiler " __VERSION__
#ifdef __OPTIMIZE__
    ", optimized"
#endif
#ifdef NDEBUG
    ", NDEBUG"
#endif
#ifdef __SANITIZE_ADDRESS__
    ", ASan"
#endif
    ;

const char *ck_xray_build_flags(void)
{
    return build_flags;
}

ck_xray_budget ck_xray_default_budget(void)
{
    ck_xray_budget b = {0.99999, 2e-5, 2e-5, 2e-5};
    return b;
}

/* Reads the four budget keys of obj over b; a present key must be a number. */
static int read_budget(const cJSON *obj, ck_xray_budget *b, const char *path, const char *where,
                       ck_error *err)
{
    static const char *const keys[] = {"cosine_min", "rmse", "rel_rmse", "max_abs"};
    double *dst[] = {&b->cosine_min, &b->rmse_max, &b->rel_rmse_max, &b->max_abs_max};
    if (!cJSON_IsObject(obj)) {
        return ck_fail(err, CK_E_FORMAT, "%s: %s: expected an object", path, where);
    }
    for (size_t i = 0; i < 4; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, keys[i]);
        if (v != NULL && !cJSON_IsNumber(v)) {
            return ck_fail(err, CK_E_FORMAT, "%s: %s: \"%s\" must be a number", path, where, keys[i]);
        }
        if (v != NULL) {
            *dst[i] = v->valuedouble;
        }
    }
    return CK_OK;
}

/* The budget object of p's dtype inside a per-dtype object {"F32": B, "BF16": B}, or NULL. */
static const cJSON *dtype_item(const ck_xray_profile *p, const cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive(obj, ck_dtype_name(p->dtype));
}

/* 1 when obj is per dtype ({"F32": ..., "BF16": ...}) rather than a bare budget. */
static int per_dtype(const cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive(obj, "F32") != NULL ||
           cJSON_GetObjectItemCaseSensitive(obj, "BF16") != NULL ||
           cJSON_GetObjectItemCaseSensitive(obj, "I8") != NULL;
}

static int read_overrides(ck_xray_profile *p, const cJSON *cps, const char *path, ck_error *err)
{
    size_t n = (size_t)cJSON_GetArraySize(cps);
    p->overrides = calloc(n ? n : 1, sizeof *p->overrides);
    if (p->overrides == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    const cJSON *item = NULL;
    cJSON_ArrayForEach(item, cps) {
        ck_xray_override *o = &p->overrides[p->n_overrides];
        if (strlen(item->string) >= sizeof o->checkpoint) {
            return ck_fail(err, CK_E_FORMAT, "%s: checkpoints: id too long", path);
        }
        /* a bare budget is F32's (the format before dtypes); per-dtype objects give each theirs */
        const cJSON *b = per_dtype(item) ? dtype_item(p, item) : p->dtype == CK_DTYPE_F32 ? item : NULL;
        if (b == NULL) {
            continue;
        }
        strcpy(o->checkpoint, item->string);
        o->budget = p->base;
        int rc = read_budget(b, &o->budget, path, item->string, err);
        if (rc != CK_OK) {
            return rc;
        }
        p->n_overrides++;
    }
    return CK_OK;
}

static int parse_profile(ck_xray_profile *p, const cJSON *root, const char *path, ck_error *err)
{
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(root, "thresholds");
    const cJSON *prof = th != NULL ? th : root;
    const cJSON *dtypes = cJSON_GetObjectItemCaseSensitive(prof, "dtypes");
    const cJSON *base = dtype_item(p, dtypes);
    const cJSON *cps = cJSON_GetObjectItemCaseSensitive(prof, "checkpoints");
    if (!cJSON_IsObject(prof) || (dtypes == NULL && cps == NULL)) {
        return ck_fail(err, CK_E_FORMAT, "%s: expected \"dtypes\" and/or \"checkpoints\"", path);
    }
    char where[32];
    snprintf(where, sizeof where, "dtypes.%s", ck_dtype_name(p->dtype));
    int rc = base != NULL ? read_budget(base, &p->base, path, where, err) : CK_OK;
    if (rc == CK_OK && cps != NULL) {
        rc = cJSON_IsObject(cps) ? read_overrides(p, cps, path, err)
                                 : ck_fail(err, CK_E_FORMAT, "%s: \"checkpoints\" must be an object",
                                           path);
    }
    return rc;
}

#define CK_XRAY_PROFILE_MAX (1u << 20) /* budgets per checkpoint: a few KiB in practice */

static int parse_text(ck_xray_profile *p, const char *text, const char *path, ck_error *err)
{
    size_t at = 0;
    const char *why = NULL;
    cJSON *root = ck_json_parse(text, strlen(text), &at, &why);
    int rc = root == NULL ? ck_fail(err, CK_E_FORMAT, "%s: not valid JSON: %s at byte %zu (line %zu)",
                                    path, why, at, ck_json_line(text, at))
                          : parse_profile(p, root, path, err);
    cJSON_Delete(root);
    return rc;
}

/* The dtype's default, then the embedded budget text `builtin` (NULL: none; named `builtin_name`),
 * then the file's on top. */
static int profile_load(ck_xray_profile *p, const char *path, ck_dtype dtype, const char *builtin,
                        const char *builtin_name, ck_error *err)
{
    if (p == NULL) {
        return ck_fail(err, CK_E_ARG, "profile: null");
    }
    memset(p, 0, sizeof *p);
    if (dtype != CK_DTYPE_F32 && dtype != CK_DTYPE_BF16 && dtype != CK_DTYPE_I8) {
        return ck_fail(err, CK_E_ARG, "profile: no budgets for dtype %s", ck_dtype_name(dtype));
    }
    p->dtype = dtype;
    p->base = ck_xray_default_budget();
    int rc = CK_OK;
    if (builtin != NULL) { /* the published budget is the default a file's own keys refine */
        rc = parse_text(p, builtin, builtin_name, err);
    }
    if (rc == CK_OK && path != NULL) {
        char *text = NULL;
        rc = ck_file_read_all(path, "X-Ray profile", CK_XRAY_PROFILE_MAX, &text, NULL, err);
        if (rc == CK_OK) {
            /* a file's overrides come first, so they win over the embedded ones */
            ck_xray_profile embedded = *p;
            p->overrides = NULL;
            p->n_overrides = 0;
            rc = parse_text(p, text, path, err);
            free(text);
            if (rc == CK_OK && embedded.n_overrides > 0) {
                ck_xray_override *all = realloc(p->overrides, (p->n_overrides + embedded.n_overrides + 1) *
                                                                  sizeof *all);
                if (all == NULL) {
                    rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
                } else {
                    memcpy(all + p->n_overrides, embedded.overrides,
                           embedded.n_overrides * sizeof *all);
                    p->overrides = all;
                    p->n_overrides += embedded.n_overrides;
                }
            }
            free(embedded.overrides);
        }
    }
    if (rc != CK_OK) {
        ck_xray_profile_free(p);
    }
    return rc;
}

int ck_xray_profile_load(ck_xray_profile *p, const char *path, ck_dtype dtype, ck_error *err)
{
    /* bf16 and int8: their published budgets (F32: the contract alone) */
    return dtype == CK_DTYPE_BF16
               ? profile_load(p, path, dtype, ck_xray_bf16_budget_json,
                              "kokoro_phoneme_encoder.bf16_budget.json", err)
           : dtype == CK_DTYPE_I8
               ? profile_load(p, path, dtype, ck_xray_int8_budget_json,
                              "kokoro_phoneme_encoder.int8_budget.json", err)
               : profile_load(p, path, dtype, NULL, NULL, err);
}

int ck_xray_profile_load_speech(ck_xray_profile *p, const char *path, ck_error *err)
{
    return profile_load(p, path, CK_DTYPE_F32, ck_xray_speech_budget_json,
                        "kokoro_speech.xray_budget.json", err);
}

int ck_xray_profile_load_token_edges(ck_xray_profile *p, const char *path, ck_error *err)
{
    return profile_load(p, path, CK_DTYPE_F32, ck_xray_token_edges_budget_json,
                        "kokoro_token_edges.xray_budget.json", err);
}

ck_xray_budget ck_xray_profile_budget(const ck_xray_profile *p, const char *checkpoint)
{
    for (size_t i = 0; i < p->n_overrides; i++) {
        if (strcmp(p->overrides[i].checkpoint, checkpoint) == 0) {
            return p->overrides[i].budget;
        }
    }
    return p->base;
}

void ck_xray_profile_free(ck_xray_profile *p)
{
    if (p != NULL) {
        free(p->overrides);
        p->overrides = NULL;
        p->n_overrides = 0;
    }
}

/* Sets status and reason from the metrics: the first violated bound is named. */
static void judge(ck_xray_result *r)
{
    const ck_xray_budget *b = &r->budget;
    r->status = CK_XRAY_FAIL;
    if (!r->candidate_finite || !r->oracle_finite) {
        snprintf(r->reason, sizeof r->reason, "non-finite value in the %s",
                 r->candidate_finite ? "oracle" : "candidate");
    } else if (!(r->cosine >= b->cosine_min)) {
        snprintf(r->reason, sizeof r->reason, "cosine %.9f < %.9f", r->cosine, b->cosine_min);
    } else if (!(r->max_abs <= b->max_abs_max)) {
        snprintf(r->reason, sizeof r->reason, "max abs %.3g > %.3g", r->max_abs, b->max_abs_max);
    } else if (!(r->rmse <= b->rmse_max)) {
        snprintf(r->reason, sizeof r->reason, "rmse %.3g > %.3g", r->rmse, b->rmse_max);
    } else if (!(r->rel_rmse <= b->rel_rmse_max)) {
        snprintf(r->reason, sizeof r->reason, "relative rmse %.3g > %.3g", r->rel_rmse,
                 b->rel_rmse_max);
    } else {
        r->status = CK_XRAY_PASS;
        r->reason[0] = '\0';
    }
}

int ck_xray_compare(const float *candidate, const float *oracle, size_t rows, size_t cols,
                    const size_t *row_seq, const size_t *row_token, const ck_xray_budget *b,
                    ck_xray_result *r)
{
    if (!candidate || !oracle || !row_seq || !row_token || !b || !r || rows == 0 || cols == 0) {
        return CK_E_ARG;
    }
    double dot = 0, cc = 0, oo = 0, sq = 0, worst = -1;
    size_t at = 0;
    r->candidate_finite = r->oracle_finite = 1;
    for (size_t i = 0; i < rows * cols; i++) {
        double c = candidate[i], o = oracle[i], d = fabs(c - o);
        r->candidate_finite &= isfinite(c) != 0;
        r->oracle_finite &= isfinite(o) != 0;
        dot += c * o;
        cc += c * c;
        oo += o * o;
        sq += d * d;
        if (!(d <= worst)) { /* NaN lands here and sticks as infinity */
            worst = isnan(d) ? INFINITY : d;
            at = i;
        }
    }
    double n = (double)(rows * cols);
    r->rows = rows;
    r->cols = cols;
    r->budget = *b;
    r->cosine = (cc == 0 && oo == 0) ? 1.0 : dot / (sqrt(cc) * sqrt(oo));
    r->rmse = sqrt(sq / n);
    r->rel_rmse = oo > 0 ? r->rmse / sqrt(oo / n) : (r->rmse == 0 ? 0.0 : INFINITY);
    r->max_abs = worst;
    r->worst_sequence = row_seq[at / cols];
    r->worst_token = row_token[at / cols];
    r->worst_channel = at % cols;
    if (!r->candidate_finite || !r->oracle_finite) {
        r->max_abs = r->rmse = r->rel_rmse = INFINITY;
        r->cosine = isfinite(r->cosine) ? r->cosine : 0.0;
    }
    judge(r);
    return CK_OK;
}

int ck_xray_report_add(ck_xray_report *rep, const ck_xray_result *r, ck_error *err)
{
    if (rep->n == rep->cap) {
        size_t cap = rep->cap ? rep->cap * 2 : 128;
        ck_xray_result *items = realloc(rep->items, cap * sizeof *items);
        if (items == NULL) {
            return ck_fail(err, CK_E_MEMORY, "xray: out of memory for the report");
        }
        rep->items = items;
        rep->cap = cap;
    }
    rep->items[rep->n++] = *r;
    rep->passed += r->status == CK_XRAY_PASS;
    rep->failed += r->status == CK_XRAY_FAIL;
    rep->not_tested += r->status == CK_XRAY_NOT_TESTED;
    return CK_OK;
}

int ck_xray_report_not_tested(ck_xray_report *rep, const char *case_name, const char *checkpoint,
                              const char *reason, ck_error *err)
{
    ck_xray_result r;
    memset(&r, 0, sizeof r);
    r.status = CK_XRAY_NOT_TESTED;
    snprintf(r.case_name, sizeof r.case_name, "%s", case_name);
    snprintf(r.checkpoint, sizeof r.checkpoint, "%s", checkpoint);
    snprintf(r.reason, sizeof r.reason, "%s", reason);
    return ck_xray_report_add(rep, &r, err);
}

void ck_xray_report_free(ck_xray_report *rep)
{
    if (rep != NULL) {
        free(rep->items);
        memset(rep, 0, sizeof *rep);
    }
}

int ck_xray_report_status(const ck_xray_report *rep)
{
    return rep->failed == 0 && rep->passed > 0 ? CK_OK : CK_E_PARITY;
}

/* -20 log10(rel_rmse): the signal-to-error ratio in dB (infinite for equal signals). */
static double ser_db(double rel_rmse)
{
    return rel_rmse > 0.0 ? -20.0 * log10(rel_rmse) : INFINITY;
}

static const char *status_name(ck_xray_status s)
{
    return s == CK_XRAY_PASS ? "pass" : s == CK_XRAY_FAIL ? "fail" : "NOT_TESTED";
}

void ck_xray_report_print(const ck_xray_report *rep, FILE *f)
{
    fprintf(f, "%-8s %-48s %-10s %12s %9s %9s %9s  %s\n", "case", "checkpoint", "status", "cosine",
            "rmse", "rel_rmse", "max_abs", "at (seq,token,channel) rows/tokens");
    for (size_t i = 0; i < rep->n; i++) {
        const ck_xray_result *r = &rep->items[i];
        if (r->status == CK_XRAY_NOT_TESTED) {
            fprintf(f, "%-8s %-48s %-10s %s\n", r->case_name, r->checkpoint, "NOT_TESTED", r->reason);
            continue;
        }
        fprintf(f, "%-8s %-48s %-10s %12.9f %9.3g %9.3g %9.3g  (%zu,%zu,%zu) %zu/%zu",
                r->case_name, r->checkpoint, status_name(r->status), r->cosine, r->rmse,
                r->rel_rmse, r->max_abs, r->worst_sequence, r->worst_token, r->worst_channel,
                r->rows, r->tokens);
        if (r->signal_to_error) {
            fprintf(f, "  SER %.1f dB (>= %.1f)", ser_db(r->rel_rmse), ser_db(r->budget.rel_rmse_max));
        }
        if (r->channel_stride > 1) {
            fprintf(f, "  channels 0, %zu, ... of %zu", r->channel_stride,
                    r->cols * r->channel_stride);
        }
        fprintf(f, "%s%s\n", r->reason[0] ? "  " : "", r->reason);
    }
    fprintf(f, "xray: %s: %zu pass, %zu fail, %zu NOT_TESTED\n",
            ck_xray_report_status(rep) == CK_OK ? "pass" : "fail", rep->passed, rep->failed,
            rep->not_tested);
}

int ck_xray_report_log(const ck_xray_report *rep, ck_log_fn log, void *log_ctx, ck_error *err)
{
    if (log == NULL) {
        return CK_OK;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: cannot allocate the table");
    }
    ck_xray_report_print(rep, f);
    int bad = fclose(f) != 0;
    if (!bad) {
        log(log_ctx, CK_LOG_REPORT, text);
    }
    free(text);
    return bad ? ck_fail(err, CK_E_MEMORY, "xray: cannot allocate the table") : CK_OK;
}

/* JSON has no infinity: non-finite metrics are written as null. */
static void add_metric(cJSON *o, const char *key, double v)
{
    cJSON_AddItemToObject(o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

static cJSON *result_json(const ck_xray_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "case", r->case_name);
    cJSON_AddStringToObject(o, "checkpoint", r->checkpoint);
    cJSON_AddStringToObject(o, "status", status_name(r->status));
    if (r->status != CK_XRAY_NOT_TESTED) {
        cJSON_AddNumberToObject(o, "rows_compared", (double)r->rows);
        cJSON_AddNumberToObject(o, "tokens", (double)r->tokens);
        cJSON_AddNumberToObject(o, "channels", (double)r->cols);
        if (r->channel_stride > 1) { /* channels compared: 0, k, 2k, ... of channels_total */
            cJSON_AddNumberToObject(o, "channel_stride", (double)r->channel_stride);
            cJSON_AddNumberToObject(o, "channels_total", (double)(r->cols * r->channel_stride));
        }
        add_metric(o, "cosine", r->cosine);
        add_metric(o, "rmse", r->rmse);
        add_metric(o, "rel_rmse", r->rel_rmse);
        add_metric(o, "max_abs", r->max_abs);
        cJSON *at = cJSON_AddObjectToObject(o, "max_abs_at");
        cJSON_AddNumberToObject(at, "sequence", (double)r->worst_sequence);
        cJSON_AddNumberToObject(at, "token", (double)r->worst_token);
        cJSON_AddNumberToObject(at, "channel", (double)r->worst_channel);
        cJSON_AddBoolToObject(o, "finite", r->candidate_finite && r->oracle_finite);
        if (r->signal_to_error) { /* dB; null when infinite (equal signals) or not finite */
            add_metric(o, "ser_db", ser_db(r->rel_rmse));
        }
        cJSON *b = cJSON_AddObjectToObject(o, "budget");
        cJSON_AddNumberToObject(b, "cosine_min", r->budget.cosine_min);
        cJSON_AddNumberToObject(b, "rmse", r->budget.rmse_max);
        cJSON_AddNumberToObject(b, "rel_rmse", r->budget.rel_rmse_max);
        cJSON_AddNumberToObject(b, "max_abs", r->budget.max_abs_max);
    }
    if (r->reason[0] != '\0') {
        cJSON_AddStringToObject(o, "reason", r->reason);
    }
    return o;
}

static cJSON *identity_json(const ck_xray_identity *id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "engine_version", id->engine_version ? id->engine_version : "");
    cJSON_AddStringToObject(o, "build_flags", id->build_flags ? id->build_flags : "");
    cJSON_AddStringToObject(o, "weights", id->weights_identity ? id->weights_identity : "");
    cJSON_AddStringToObject(o, "weights_sha256", id->weights_sha256 ? id->weights_sha256 : "");
    cJSON_AddStringToObject(o, "candidate", id->candidate_path ? id->candidate_path : "");
    cJSON_AddStringToObject(o, "oracle_capture", id->oracle_path ? id->oracle_path : "");
    cJSON_AddBoolToObject(o, "parity", id->parity);
    cJSON_AddStringToObject(o, "backend", id->backend ? id->backend : "interpreted");
    cJSON_AddStringToObject(o, "library", id->library_path ? id->library_path : "");
    cJSON_AddStringToObject(o, "library_sha256", id->library_sha256 ? id->library_sha256 : "");
    cJSON_AddStringToObject(o, "library_key", id->library_key ? id->library_key : "");
    cJSON *oracle = id->oracle_manifest_json ? cJSON_Parse(id->oracle_manifest_json) : NULL;
    cJSON_AddItemToObject(o, "oracle", oracle ? oracle : cJSON_CreateNull());
    return o;
}

int ck_xray_report_write(const ck_xray_report *rep, const ck_xray_identity *id, const char *path,
                         ck_error *err)
{
    if (rep == NULL || id == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "xray report: null argument");
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "status", ck_xray_report_status(rep) == CK_OK ? "pass" : "fail");
    cJSON_AddItemToObject(root, "identity", identity_json(id));
    cJSON *counts = cJSON_AddObjectToObject(root, "counts");
    cJSON_AddNumberToObject(counts, "pass", (double)rep->passed);
    cJSON_AddNumberToObject(counts, "fail", (double)rep->failed);
    cJSON_AddNumberToObject(counts, "NOT_TESTED", (double)rep->not_tested);
    cJSON *items = cJSON_AddArrayToObject(root, "checkpoints");
    for (size_t i = 0; i < rep->n; i++) {
        cJSON_AddItemToArray(items, result_json(&rep->items[i]));
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    int rc = ck_file_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}
