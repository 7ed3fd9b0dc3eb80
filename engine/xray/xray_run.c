/* xray_run.c - parity runs of an oracle capture's cases through a model's executor (one thread, set
 * up by the api room like every other model), capturing the oracle's stored rows of every
 * checkpoint, then X-Ray comparison and report. Holds no kernels and sets up no model. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "xray_internal.h"

/* What a parity run holds for all cases: the oracle, the model it runs on (lent), and per case the
 * captured stored rows. */
struct ck_xray_session {
    const ck_xray_run_options *opt;
    ck_xray_engine engine;       /* lent by ck_xray_session_run */
    ck_st_file *oracle;
    cJSON *manifest;
    ck_xray_profile profile;
    const char **ids;            /* [n_ids] circuit checkpoint ids, run order */
    size_t n_ids;
    unsigned char (*sha)[32];    /* per weight tensor, before the run */
    char weights_hex[65];
    ck_xray_case *cases;         /* [n_cases] */
    float **rows;                /* [n_cases * n_ids] captured [R, cols], NULL when not captured */
    size_t *cols;                /* [n_ids] */
    size_t n_cases;
    size_t longest;              /* tokens of the longest case */
    ck_xray_speech_case *speech; /* [n_speech] a speech capture's cases (then n_cases is 0) */
    size_t n_speech;
};

typedef ck_xray_session xrun;

typedef struct {
    xrun *x;
    size_t case_index;
} capture_ctx;

static int wanted(const char *list, const char *id)
{
    if (list == NULL || strcmp(list, "all") == 0) {
        return 1;
    }
    size_t n = strlen(id);
    for (const char *p = strstr(list, id); p != NULL; p = strstr(p + 1, id)) {
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) {
            return 1;
        }
    }
    return 0;
}

/* Copies the stored rows of one checkpoint; a repeated id (none in a valid circuit) keeps the first. */
static void store_rows(xrun *x, size_t ci, size_t k, const float *data, size_t cols)
{
    const ck_xray_case *xc = &x->cases[ci];
    float **slot = &x->rows[ci * x->n_ids + k];
    if (*slot != NULL || !wanted(x->opt->capture_ids, x->ids[k])) {
        return;
    }
    *slot = malloc(xc->n_rows * cols * sizeof **slot);
    for (size_t r = 0; *slot != NULL && r < xc->n_rows; r++) {
        memcpy(*slot + r * cols, data + xc->rows[r] * cols, cols * sizeof **slot);
    }
    x->cols[k] = cols;
}

static void on_capture(void *ctx, const char *checkpoint, const float *data, size_t tokens,
                       size_t cols)
{
    capture_ctx *cc = ctx;
    (void)tokens;
    for (size_t k = 0; k < cc->x->n_ids; k++) {
        if (strcmp(cc->x->ids[k], checkpoint) == 0) {
            store_rows(cc->x, cc->case_index, k, data, cols);
        }
    }
}

/* Runs case ci as one packed batch; the first alias's buffer is the run's output, so it is captured
 * too (other aliases stay NOT_TESTED). */
static int run_case(xrun *x, size_t ci, ck_error *err)
{
    const ck_xray_case *xc = &x->cases[ci];
    const ck_circuit *c = x->engine.circuit;
    int out_buffer = c->n_aliases ? c->aliases[0].buffer : c->features_buffer;
    size_t cols = ck_executor_cols(x->engine.executor, out_buffer);
    float *out = malloc(xc->tokens * cols * sizeof *out);
    if (out == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: out of memory for case \"%s\"", xc->name);
    }
    capture_ctx ctx = {x, ci};
    int rc = ck_executor_run(x->engine.executor, xc->ids, xc->offsets, xc->n_seqs, out_buffer, out,
                             xc->tokens * cols, on_capture, &ctx, err);
    if (rc == CK_OK && c->n_aliases) {
        on_capture(&ctx, c->aliases[0].checkpoint, out, xc->tokens, cols);
    }
    free(out);
    return rc;
}

/* Seed of the synthetic weights: the manifest's "weights"."seed" when it is an exact integer in
 * 0..2^53 (a JSON number holds no more exactly), else the option. */
static uint64_t manifest_seed(const xrun *x)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(x->manifest, "weights"), "seed");
    size_t seed = 0;
    return ck_json_size(s, 0, SIZE_MAX, &seed) ? (uint64_t)seed : (uint64_t)x->opt->seed;
}

static int open_oracle(xrun *x, ck_error *err)
{
    char mpath[4096];
    const char *manifest = x->opt->manifest;
    int rc = CK_OK;
    if (manifest == NULL) {
        rc = ck_xray_manifest_path(x->opt->oracle, mpath, sizeof mpath, err);
        manifest = mpath;
    }
    if (rc == CK_OK) {
        rc = ck_xray_verify_fixture(x->opt->oracle, manifest, (void **)&x->manifest, err);
    }
    if (rc == CK_OK) {
        rc = ck_st_open(&x->oracle, x->opt->oracle, err);
    }
    if (rc == CK_OK && ck_xray_speech_count(x->oracle) > 0) {
        /* a speech capture's manifest holds no thresholds: load_speech loads the published one */
        if (x->opt->precision != CK_DTYPE_F32) {
            return ck_fail(err, CK_E_ARG, "xray: %s is a speech capture: its X-Ray runs fp32 parity "
                           "only", x->opt->oracle);
        }
        if (x->opt->capture_out != NULL) {
            return ck_fail(err, CK_E_ARG, "xray: %s is a speech capture: --xray-out writes encoder "
                           "captures only", x->opt->oracle);
        }
        return CK_OK;
    }
    if (rc == CK_OK) {
        rc = ck_xray_profile_load(&x->profile, x->opt->profile ? x->opt->profile : manifest,
                                  x->opt->precision, err);
    }
    return rc;
}

/* A speech capture's cases, the longest one's tokens, and the published budget: the speech
 * capture's, or the token-side edge capture's when no case holds noise. */
static int load_speech(xrun *x, ck_error *err)
{
    int rc = ck_xray_speech_load(&x->speech, &x->n_speech, x->oracle, x->manifest, x->opt->oracle,
                                 err);
    for (size_t i = 0; rc == CK_OK && i < x->n_speech; i++) {
        x->longest = x->speech[i].tokens > x->longest ? x->speech[i].tokens : x->longest;
    }
    if (rc == CK_OK) {
        rc = ck_xray_speech_token_side(x->speech, x->n_speech)
                 ? ck_xray_profile_load_token_edges(&x->profile, x->opt->profile, err)
                 : ck_xray_profile_load_speech(&x->profile, x->opt->profile, err);
    }
    return rc;
}

/* Loads every case of the oracle (they need no circuit) and the longest one's tokens. */
static int load_cases(xrun *x, ck_error *err)
{
    char name[CK_XRAY_CASE_MAX];
    while (ck_xray_case_name(x->oracle, x->n_cases, name)) {
        x->n_cases++;
    }
    x->cases = calloc(x->n_cases + 1, sizeof *x->cases);
    if (x->cases == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    }
    for (size_t i = 0; i < x->n_cases; i++) {
        ck_xray_case_name(x->oracle, i, name);
        int rc = ck_xray_case_load(&x->cases[i], x->oracle, x->opt->oracle, name, err);
        if (rc != CK_OK) {
            return rc;
        }
        x->longest = x->cases[i].tokens > x->longest ? x->cases[i].tokens : x->longest;
    }
    return x->n_cases ? CK_OK : ck_fail(err, CK_E_FORMAT, "%s: no case (no <case>.rows tensor)",
                                        x->opt->oracle);
}

int ck_xray_session_open(ck_xray_session **out, const ck_xray_run_options *opt, ck_error *err)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (out == NULL || opt == NULL || opt->oracle == NULL) {
        return ck_fail(err, CK_E_ARG, "xray: no oracle capture given");
    }
    xrun *x = calloc(1, sizeof *x);
    if (x == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    }
    x->opt = opt;
    if (opt->precision == CK_DTYPE_BF16) {
        ck_log(opt->log, opt->log_ctx, CK_LOG_INFO, "X-Ray bf16: 1 thread, unfused kernels, bf16 "
               "linears (and attention heads where the CPU has AMX), against the FP32 oracle under "
               "the bf16 budget");
    } else if (opt->precision == CK_DTYPE_I8) {
        ck_log(opt->log, opt->log_ctx, CK_LOG_INFO, "X-Ray int8: 1 thread, unfused kernels, int8 "
               "linears (u8 rows x s8 channels), against the FP32 oracle under the int8 budget");
    } else {
        ck_log(opt->log, opt->log_ctx, CK_LOG_INFO,
               "parity mode: 1 thread (scheduler and oneDNN), deterministic kernels");
    }
    int rc = open_oracle(x, err);
    if (rc == CK_OK) {
        rc = ck_xray_speech_count(x->oracle) > 0 ? load_speech(x, err) : load_cases(x, err);
    }
    if (rc != CK_OK) {
        ck_xray_session_free(x);
        return rc;
    }
    *out = x;
    return CK_OK;
}

int ck_xray_session_is_speech(const ck_xray_session *x)
{
    return x != NULL && x->speech != NULL;
}

int ck_xray_session_is_token_side(const ck_xray_session *x)
{
    return x != NULL && ck_xray_speech_token_side(x->speech, x->n_speech);
}

size_t ck_xray_session_longest(const ck_xray_session *x)
{
    return x != NULL ? x->longest : 0;
}

size_t ck_xray_session_frames(const ck_xray_session *x)
{
    size_t frames = 0;
    for (size_t i = 0; x != NULL && i < x->n_speech; i++) {
        frames = x->speech[i].frames > frames ? x->speech[i].frames : frames;
    }
    return frames;
}

uint64_t ck_xray_session_seed(const ck_xray_session *x)
{
    return manifest_seed(x);
}

/* Everything before the first case runs on the lent model: checkpoints listed, weights hashed. */
static int prepare(xrun *x, ck_error *err)
{
    int rc = ck_xray_circuit_checkpoints(x->engine.circuit, &x->ids, &x->n_ids, err);
    if (rc == CK_OK) {
        x->rows = calloc(x->n_cases * x->n_ids + 1, sizeof *x->rows);
        x->cols = calloc(x->n_ids + 1, sizeof *x->cols);
        if (x->rows == NULL || x->cols == NULL) {
            rc = ck_fail(err, CK_E_MEMORY, "xray: out of memory");
        }
    }
    if (rc == CK_OK) {
        rc = ck_xray_weights_digest(x->engine.weights, &x->sha, x->weights_hex, err);
    }
    return rc;
}

static ck_st_tensor view(const char *name, const float *data, size_t rows, size_t cols)
{
    ck_st_tensor t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.dtype = CK_DTYPE_F32;
    t.rank = 2;
    t.shape[0] = rows;
    t.shape[1] = cols;
    t.elements = rows * cols;
    t.data = data;
    t.bytes = t.elements * sizeof(float);
    return t;
}

static int compare_all(xrun *x, ck_xray_report *rep, ck_error *err)
{
    int rc = CK_OK;
    for (size_t ci = 0; rc == CK_OK && ci < x->n_cases; ci++) {
        const ck_xray_case *xc = &x->cases[ci];
        for (size_t k = 0; rc == CK_OK && k < x->n_ids; k++) {
            char key[CK_XRAY_CASE_MAX + CK_CHECKPOINT_MAX + 2];
            snprintf(key, sizeof key, "%s.%s", xc->name, x->ids[k]);
            const float *got = x->rows[ci * x->n_ids + k];
            ck_st_tensor cand = view(key, got, xc->n_rows, x->cols[k]);
            rc = ck_xray_compare_tensors(xc, x->ids[k], got ? &cand : NULL,
                                         ck_st_find(x->oracle, key), &x->profile, rep, err);
        }
    }
    return rc;
}

void ck_xray_session_free(ck_xray_session *x)
{
    if (x == NULL) {
        return;
    }
    for (size_t i = 0; x->rows != NULL && i < x->n_cases * x->n_ids; i++) {
        free(x->rows[i]);
    }
    for (size_t i = 0; x->cases != NULL && i < x->n_cases; i++) {
        ck_xray_case_free(&x->cases[i]);
    }
    free(x->rows);
    free(x->cols);
    free(x->cases);
    ck_xray_speech_free(x->speech, x->n_speech);
    free(x->sha);
    free(x->ids);
    ck_xray_profile_free(&x->profile);
    ck_st_close(x->oracle);
    cJSON_Delete(x->manifest);
    free(x);
}

/* Case inputs as I64/I32 entries (2 owned I64 arrays per case in keep[]). */
static int input_entries(const ck_xray_case *xc, ck_st_entry *e, int64_t **keep, char (*names)[96])
{
    const size_t *src[2] = {xc->offsets, xc->rows};
    size_t n[2] = {xc->n_seqs + 1, xc->n_rows};
    static const char *const suffix[3] = {"offsets", "rows", "ids"};
    for (size_t j = 0; j < 3; j++) {
        snprintf(names[j], sizeof names[j], "%s.%s", xc->name, suffix[j]);
        e[j].name = names[j];
        e[j].rank = 1;
        e[j].shape[0] = j < 2 ? n[j] : xc->tokens;
        e[j].dtype = j < 2 ? CK_DTYPE_I64 : CK_DTYPE_I32;
        e[j].data = xc->ids;
        if (j < 2 && (keep[j] = malloc(n[j] * sizeof **keep)) == NULL) {
            return CK_E_MEMORY;
        }
        for (size_t i = 0; j < 2 && i < n[j]; i++) {
            keep[j][i] = (int64_t)src[j][i];
        }
        e[j].data = j < 2 ? (const void *)keep[j] : (const void *)xc->ids;
    }
    return CK_OK;
}

/* The candidate capture in the oracle's format: inputs, then every captured checkpoint. */
static int write_capture(xrun *x, ck_error *err)
{
    size_t per = 3 + x->n_ids, cap = x->n_cases * per;
    ck_st_entry *e = calloc(cap, sizeof *e);
    char (*names)[96] = calloc(cap, sizeof *names);
    int64_t **keep = calloc(2 * x->n_cases, sizeof *keep);
    size_t n = 0;
    int rc = e && names && keep ? CK_OK : ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    for (size_t ci = 0; rc == CK_OK && ci < x->n_cases; ci++) {
        const ck_xray_case *xc = &x->cases[ci];
        if (input_entries(xc, e + n, keep + 2 * ci, names + n) != CK_OK) {
            rc = ck_fail(err, CK_E_MEMORY, "xray: out of memory");
        }
        n += 3;
        for (size_t k = 0; rc == CK_OK && k < x->n_ids; k++) {
            if (x->rows[ci * x->n_ids + k] != NULL) {
                snprintf(names[n], sizeof names[n], "%s.%s", xc->name, x->ids[k]);
                ck_st_entry en = {names[n], CK_DTYPE_F32, 2, {xc->n_rows, x->cols[k]},
                                  x->rows[ci * x->n_ids + k], NULL, 0};
                e[n++] = en;
            }
        }
    }
    if (rc == CK_OK) {
        int bf16 = x->opt->precision == CK_DTYPE_BF16, int8 = x->opt->precision == CK_DTYPE_I8;
        ck_st_meta meta[2] = {{"engine_version", CK_VERSION},
                              {bf16 || int8 ? "precision" : "parity", bf16 ? "bf16" : int8 ? "int8" : "1"}};
        rc = ck_st_write(x->opt->capture_out, e, n, meta, 2, err);
    }
    for (size_t i = 0; keep != NULL && i < 2 * x->n_cases; i++) {
        free(keep[i]);
    }
    free(keep);
    free(names);
    free(e);
    return rc;
}

static int finish(xrun *x, ck_xray_report *rep, ck_error *err)
{
    int rc = ck_xray_report_log(rep, x->opt->log, x->opt->log_ctx, err);
    rc = rc == CK_OK && x->opt->capture_out ? write_capture(x, err) : CK_OK;
    if (rc == CK_OK && x->opt->report != NULL) {
        char *oracle = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(x->manifest, "oracle"));
        const ck_compiled_library *lib = x->engine.library;
        ck_xray_identity id = {CK_VERSION, ck_xray_build_flags(),
                               ck_weights_identity(x->engine.weights), x->weights_hex,
                               "(computed in this run)", x->opt->oracle, oracle,
                               x->opt->precision == CK_DTYPE_F32,
                               lib->table != NULL ? "generated" : "interpreted", lib->path,
                               lib->sha256, lib->key};
        rc = ck_xray_report_write(rep, &id, x->opt->report, err);
        free(oracle);
    }
    if (rc == CK_OK && ck_xray_report_status(rep) != CK_OK) {
        rc = ck_fail(err, CK_E_PARITY, "xray: %zu of %zu compared checkpoints failed", rep->failed,
                     rep->failed + rep->passed);
    }
    return rc;
}

int ck_xray_session_run(ck_xray_session *x, const ck_xray_engine *engine, ck_error *err)
{
    if (x == NULL || engine == NULL || engine->circuit == NULL || engine->weights == NULL ||
        engine->executor == NULL || engine->library == NULL) {
        return ck_fail(err, CK_E_ARG, "xray: null session or model");
    }
    x->engine = *engine;
    if (x->speech != NULL && engine->library->table != NULL) {
        return ck_fail(err, CK_E_ARG, "xray: %s is a speech capture: its X-Ray interprets the "
                       "speech circuit (no --compiled)", x->opt->oracle);
    }
    ck_xray_report rep = {0};
    int rc = prepare(x, err);
    for (size_t ci = 0; rc == CK_OK && ci < x->n_cases; ci++) {
        rc = run_case(x, ci, err);
    }
    if (rc == CK_OK && x->speech != NULL) { /* its runs compare as they go */
        rc = ck_xray_speech_run(x->speech, x->n_speech, x->oracle, x->opt->oracle, &x->engine,
                                &x->profile, &rep, err);
    }
    if (rc == CK_OK) {
        rc = ck_xray_weights_unchanged(x->engine.weights, (const unsigned char (*)[32])x->sha, err);
    }
    if (rc == CK_OK) {
        rc = compare_all(x, &rep, err);
    }
    if (rc == CK_OK) {
        rc = finish(x, &rep, err);
    }
    ck_xray_report_free(&rep);
    return rc;
}
