/* test_xray_speech.c - X-Ray of the speech capture (tests/fixtures/speech, ck_xray_run as
 * `ckbatch --parity --xray-oracle` runs it): every stage of the 4 pinned cases passes under the
 * published budget (circuits/kokoro_speech.xray_budget.json) with the durations equal to pred_dur
 * and the audio's signal-to-error ratio reported; canaries on a one-case copy of the capture: t_en
 * scaled by 1.001 fails at t_en alone, and two durations moved by one frame fail pred_dur naming
 * the token; bf16 and a capture to write are refused (CK_E_ARG). The token-side edge capture
 * (kokoro_token_edges: edge1, 3 tokens; edge510, 512 tokens at speed 0.85, its wide stages on every
 * 8th channel) the same way on the prosody circuit: its 12 token-side stages pass under
 * circuits/kokoro_token_edges.xray_budget.json with the durations equal, the strided stages say so,
 * the decoder, generator and audio are NOT_TESTED saying why; on an edge1 copy f0n_shared scaled by
 * 1.001 fails at f0n_shared alone and a moved frame fails pred_dur naming the token. */
#include <cjson/cJSON.h>
#include <math.h>
#include <unistd.h>

#include "ck_test.h"
#include "ckbatch.h"
#include "safetensors.h"
#include "sha256.h"

#define FIXTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"
#define EDGES "tests/fixtures/speech/kokoro_token_edges.safetensors"

enum { N_CASES = 4, N_STAGES = 31 };
static const char *const CASES[N_CASES] = {"speech4", "speech8", "speech20", "speech40"};
static const size_t TOKENS[N_CASES] = {4, 8, 20, 40};
static const size_t FRAMES[N_CASES] = {7, 15, 31, 66};

static void tmp_path(char *out, const char *name)
{
    snprintf(out, 256, "/tmp/ck_test_xray_speech_%ld_%s", (long)getpid(), name);
}

static int parity_run(const char *oracle, const char *report, ck_error *err)
{
    ck_xray_params o = ck_xray_default_params();
    o.oracle = oracle;
    o.report = report;
    return ck_xray_run(&o, err);
}

static cJSON *load_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    static char text[1 << 20];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) {
        fclose(f);
    }
    text[n] = '\0';
    return cJSON_Parse(text);
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The report's row of (case, checkpoint), or NULL. */
static const cJSON *row(const cJSON *rep, const char *case_name, const char *checkpoint)
{
    const cJSON *r = NULL;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(rep, "checkpoints")) {
        if (strcmp(str(r, "case"), case_name) == 0 && strcmp(str(r, "checkpoint"), checkpoint) == 0) {
            return r;
        }
    }
    return NULL;
}

/* The parity run of `fixture` (its report at `report`, read back): it passes, with N_STAGES rows
 * for each of its n_cases cases, `pass` of them compared and passed, the rest NOT_TESTED. */
static cJSON *passing_report(const char *fixture, const char *report, size_t n_cases, size_t pass)
{
    ck_error err = {0};
    int rc = parity_run(ck_test_path(fixture), report, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    cJSON *rep = load_json(report);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
    CU_ASSERT_STRING_EQUAL(str(rep, "status"), "pass");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(rep, "counts");
    CU_ASSERT_EQUAL(num(counts, "pass"), pass);
    CU_ASSERT_EQUAL(num(counts, "fail"), 0);
    CU_ASSERT_EQUAL(num(counts, "NOT_TESTED"), n_cases * N_STAGES - pass);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rep, "checkpoints")),
                    n_cases * N_STAGES);
    CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(rep, "identity"), "parity")));
    return rep;
}

static void test_every_stage_passes(void)
{
    char report[256];
    tmp_path(report, "report.json");
    /* speech4 holds all 31 stages, speech8/20/40 (the light tier) 16 each: 79 pass, 45 untested */
    cJSON *rep = passing_report(FIXTURE, report, N_CASES, 79);
    for (size_t k = 0; k < N_CASES; k++) {
        /* the duration op's own frames equal pred_dur exactly, on every token */
        const cJSON *d = row(rep, CASES[k], "pred_dur");
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        CU_ASSERT_STRING_EQUAL(str(d, "status"), "pass");
        CU_ASSERT_EQUAL(num(d, "max_abs"), 0.0);
        CU_ASSERT_EQUAL(num(d, "rows_compared"), TOKENS[k]);
        CU_ASSERT_EQUAL(num(cJSON_GetObjectItemCaseSensitive(d, "budget"), "max_abs"), 0.0);
        const cJSON *t = row(rep, CASES[k], "t_en");
        CU_ASSERT(t != NULL && num(t, "rows_compared") == TOKENS[k] && num(t, "channels") == 512);
        const cJSON *f0 = row(rep, CASES[k], "F0");
        CU_ASSERT(f0 != NULL && num(f0, "rows_compared") == 2 * FRAMES[k]);
        /* the audio's SER, reported as -20 log10(rel_rmse), end to end and fed */
        for (int fed = 0; fed <= 1; fed++) {
            const cJSON *a = row(rep, CASES[k], fed ? "fed.audio" : "audio");
            CU_ASSERT_PTR_NOT_NULL_FATAL(a);
            CU_ASSERT_EQUAL(num(a, "rows_compared"), 600 * FRAMES[k]);
            CU_ASSERT(fabs(num(a, "ser_db") + 20.0 * log10(num(a, "rel_rmse"))) < 1e-9);
        }
        CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(row(rep, CASES[k], "t_en"), "ser_db"));
    }
    /* pinned: the generator's ops alone give speech4's and speech8's audio above 100 dB (measured
     * 106.8 and 105.8); end to end speech4 61.5 dB; the light tier has no dur_lstm */
    CU_ASSERT(num(row(rep, "speech4", "fed.audio"), "ser_db") > 100.0);
    CU_ASSERT(num(row(rep, "speech8", "fed.audio"), "ser_db") > 100.0);
    CU_ASSERT(fabs(num(row(rep, "speech4", "audio"), "ser_db") - 61.5) < 3.0);
    CU_ASSERT_STRING_EQUAL(str(row(rep, "speech8", "dur_lstm"), "status"), "NOT_TESTED");
    CU_ASSERT_STRING_EQUAL(str(row(rep, "speech4", "fed.gen.har"), "status"), "pass");
    cJSON_Delete(rep);
    remove(report);
}

/* A copy of one case's tensors (`tensors` of them) of the capture `fixture` at `path` with its
 * manifest beside it (`cases`, when not NULL, its "cases" object as JSON text): `scale_name` scaled
 * by `scale` (NULL: none), and when move_frame is set pred_dur's token 1 one frame longer and token
 * 2 one shorter (the frames, so the noise, unchanged). */
static void one_case_copy(const char *fixture, const char *case_name, size_t tensors,
                          const char *path, const char *manifest, const char *cases,
                          const char *scale_name, float scale, int move_frame)
{
    ck_error err = {0};
    ck_st_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, ck_test_path(fixture), &err), CK_OK);
    ck_st_entry e[64];
    void *owned[64] = {0};
    size_t n = 0, len = strlen(case_name);
    for (size_t i = 0; i < ck_st_count(f); i++) {
        const ck_st_tensor *t = ck_st_at(f, i);
        if (strncmp(t->name, case_name, len) != 0 || t->name[len] != '.') {
            continue;
        }
        CU_ASSERT_FATAL(n < 64);
        ck_st_entry x = {t->name, t->dtype, t->rank, {0}, t->data, NULL, 0};
        memcpy(x.shape, t->shape, sizeof x.shape);
        if (scale_name != NULL && strcmp(t->name, scale_name) == 0) {
            float *v = malloc(t->bytes);
            CU_ASSERT_FATAL(v != NULL && ck_st_to_f32(t, v, t->elements, &err) == CK_OK);
            for (size_t j = 0; j < t->elements; j++) {
                v[j] *= scale;
            }
            x.data = owned[n] = v;
        }
        if (move_frame && strcmp(t->name + len, ".pred_dur") == 0) {
            int64_t *d = malloc(t->bytes);
            CU_ASSERT_FATAL(d != NULL && t->elements > 2);
            memcpy(d, t->data, t->bytes);
            CU_ASSERT_FATAL(d[2] >= 2);
            d[1] += 1;
            d[2] -= 1;
            x.data = owned[n] = d;
        }
        e[n++] = x;
    }
    CU_ASSERT_EQUAL_FATAL(n, tensors);
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, e, n, NULL, 0, &err), CK_OK);
    for (size_t i = 0; i < n; i++) {
        free(owned[i]);
    }
    ck_st_close(f);
    char hex[65];
    CU_ASSERT_EQUAL_FATAL(ck_sha256_file(path, hex, &err), CK_OK);
    FILE *m = fopen(manifest, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    fprintf(m, "{\"fixture\": {\"sha256\": \"%s\"}, \"weights\": {\"seed\": 20261129}%s%s}\n", hex,
            cases ? ", \"cases\": " : "", cases ? cases : "");
    CU_ASSERT_EQUAL_FATAL(fclose(m), 0);
}

/* The parity run of the copy at `fixture` (its report at `report`, read back into *rep) fails,
 * with `message` in the error when not NULL; the row (case_name, stage) is there, failed. */
static const cJSON *failed_row(const char *fixture, const char *report, const char *message,
                               const char *case_name, const char *stage, cJSON **rep)
{
    ck_error err = {0};
    CU_ASSERT_EQUAL(parity_run(fixture, report, &err), CK_E_PARITY);
    CU_ASSERT(message == NULL || strstr(err.message, message) != NULL);
    *rep = load_json(report);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*rep);
    const cJSON *r = row(*rep, case_name, stage);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(str(r, "status"), "fail");
    return r;
}

static void test_scaled_oracle_fails_at_that_stage(void)
{
    char fx[256], mf[256], report[256];
    tmp_path(fx, "scaled.safetensors");
    tmp_path(mf, "scaled.manifest.json");
    tmp_path(report, "scaled_report.json");
    /* ids, ref_s, speed, noise; 30 stages (audio: 2 rows) */
    one_case_copy(FIXTURE, "speech4", 34, fx, mf, NULL, "speech4.t_en", 1.001f, 0);
    cJSON *rep = NULL;
    const cJSON *t = failed_row(fx, report, "1 of 31 compared checkpoints failed", "speech4",
                                "t_en", &rep);
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(rep, "counts");
    CU_ASSERT_EQUAL(num(counts, "pass"), 30);
    CU_ASSERT_EQUAL(num(counts, "fail"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(str(t, "reason"), "max abs")); /* a scale keeps the cosine */
    CU_ASSERT(num(t, "max_abs") > 5e-4 && num(t, "max_abs") < 1e-3); /* 0.001 x |t_en| <= 0.73 */
    cJSON_Delete(rep);
    remove(fx);
    remove(mf);
    remove(report);
}

static void test_moved_duration_fails_pred_dur(void)
{
    char fx[256], mf[256], report[256];
    tmp_path(fx, "moved.safetensors");
    tmp_path(mf, "moved.manifest.json");
    tmp_path(report, "moved_report.json");
    one_case_copy(FIXTURE, "speech4", 34, fx, mf, NULL, NULL, 1.0f, 1); /* 2, 2 -> 3, 1 */
    cJSON *rep = NULL;
    const cJSON *d = failed_row(fx, report, NULL, "speech4", "pred_dur", &rep);
    CU_ASSERT_EQUAL(num(d, "max_abs"), 1.0);
    CU_ASSERT_STRING_EQUAL(str(d, "reason"), "durations differ: token 1 ours 2, the capture's 3");
    /* upstream of the duration head nothing moved */
    CU_ASSERT_STRING_EQUAL(str(row(rep, "speech4", "dur_logits"), "status"), "pass");
    cJSON_Delete(rep);
    remove(fx);
    remove(mf);
    remove(report);
}

/* The token-side edge capture: the 12 stages it holds per case, in run order. */
enum { N_EDGES = 2, N_EDGE_STAGES = 12 };
static const char *const EDGE_CASES[N_EDGES] = {"edge1", "edge510"};
static const size_t EDGE_TOKENS[N_EDGES] = {3, 512};
static const size_t EDGE_FRAMES[N_EDGES] = {8, 1538};
static const char *const EDGE_STAGES[N_EDGE_STAGES] = {
    "d_en", "t_en", "d", "dur_lstm", "dur_logits", "dur", "pred_dur", "en", "asr", "f0n_shared",
    "F0", "N"};
/* per stage: channels of ours (1: a column), and whether edge510 stores every 8th of them */
static const size_t EDGE_COLS[N_EDGE_STAGES] = {512, 512, 640, 512, 50, 1, 1, 640, 512, 512, 1, 1};
static const int EDGE_STRIDED[N_EDGE_STAGES] = {1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0};

static void test_edges_pass(void)
{
    char report[256];
    tmp_path(report, "edges_report.json");
    cJSON *rep = passing_report(EDGES, report, N_EDGES, N_EDGES * N_EDGE_STAGES);
    for (size_t k = 0; k < N_EDGES; k++) {
        for (size_t i = 0; i < N_EDGE_STAGES; i++) {
            const cJSON *r = row(rep, EDGE_CASES[k], EDGE_STAGES[i]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            CU_ASSERT_STRING_EQUAL(str(r, "status"), "pass");
            /* every token, frame or 2 x frame; edge510's wide stages on channels 0, 8, ... */
            size_t want_rows = i < 7    ? EDGE_TOKENS[k]
                               : i < 10 ? EDGE_FRAMES[k]
                                        : 2 * EDGE_FRAMES[k];
            size_t stride = k == 1 && EDGE_STRIDED[i] ? 8 : 1;
            CU_ASSERT_EQUAL(num(r, "rows_compared"), want_rows);
            CU_ASSERT_EQUAL(num(r, "channels"), EDGE_COLS[i] / stride);
            const cJSON *cs = cJSON_GetObjectItemCaseSensitive(r, "channel_stride");
            CU_ASSERT(stride > 1 ? cJSON_IsNumber(cs) && cs->valuedouble == 8.0 &&
                                       num(r, "channels_total") == EDGE_COLS[i]
                                 : cs == NULL);
            CU_ASSERT_EQUAL(fmod(num(cJSON_GetObjectItemCaseSensitive(r, "max_abs_at"), "channel"),
                                 (double)stride), 0.0);
        }
        /* the durations equal pred_dur on every token */
        const cJSON *d = row(rep, EDGE_CASES[k], "pred_dur");
        CU_ASSERT_EQUAL(num(d, "max_abs"), 0.0);
        CU_ASSERT_EQUAL(num(cJSON_GetObjectItemCaseSensitive(d, "budget"), "max_abs"), 0.0);
        /* what the capture does not hold, and why */
        static const char *const absent[] = {"dec.encode", "dec.decode.3", "audio", "fed.gen.har",
                                             "fed.audio"};
        for (size_t j = 0; j < sizeof absent / sizeof absent[0]; j++) {
            const cJSON *r = row(rep, EDGE_CASES[k], absent[j]);
            CU_ASSERT_STRING_EQUAL(str(r, "status"), "NOT_TESTED");
            CU_ASSERT_PTR_NOT_NULL(strstr(str(r, "reason"), "a token-side capture (no noise)"));
            CU_ASSERT_PTR_NOT_NULL(strstr(str(r, "reason"), "no decoder, generator or audio"));
        }
    }
    cJSON_Delete(rep);
    remove(report);
}

static void test_edges_canaries(void)
{
    char fx[256], mf[256], report[256];
    tmp_path(fx, "edge1.safetensors");
    tmp_path(mf, "edge1.manifest.json");
    tmp_path(report, "edge1_report.json");
    /* ids, ref_s, speed and the 12 stages */
    one_case_copy(EDGES, "edge1", 15, fx, mf, NULL, "edge1.f0n_shared", 1.001f, 0);
    cJSON *rep = NULL;
    const cJSON *t = failed_row(fx, report, "1 of 12 compared checkpoints failed", "edge1",
                                "f0n_shared", &rep);
    CU_ASSERT_PTR_NOT_NULL(strstr(str(t, "reason"), "max abs"));
    cJSON_Delete(rep);
    /* edge1's pred_dur 2, 3, 3 -> 2, 4, 2 */
    one_case_copy(EDGES, "edge1", 15, fx, mf, NULL, NULL, 1.0f, 1);
    const cJSON *d = failed_row(fx, report, NULL, "edge1", "pred_dur", &rep);
    CU_ASSERT_EQUAL(num(d, "max_abs"), 1.0);
    CU_ASSERT_STRING_EQUAL(str(d, "reason"), "durations differ: token 1 ours 3, the capture's 4");
    CU_ASSERT_STRING_EQUAL(str(row(rep, "edge1", "dur_logits"), "status"), "pass");
    CU_ASSERT_STRING_EQUAL(str(row(rep, "edge1", "dur"), "status"), "pass");
    cJSON_Delete(rep);
    /* the manifest's strides are checked before any model opens: d is stored [T, C/k] */
    one_case_copy(EDGES, "edge1", 15, fx, mf,
                  "{\"edge1\": {\"channel_stride\": 2, \"strided\": {\"edge1.d\": \"rows\"}}}",
                  NULL, 1.0f, 0);
    ck_error err = {0};
    CU_ASSERT_EQUAL(parity_run(fx, report, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err.message, "cases.edge1.strided.\"edge1.d\": expected \"columns\""));
    /* a manifest claiming a stride the capture does not have: that stage fails on its shape */
    one_case_copy(EDGES, "edge1", 15, fx, mf,
                  "{\"edge1\": {\"channel_stride\": 2, \"strided\": {\"edge1.asr\": \"rows\"}}}",
                  NULL, 1.0f, 0);
    const cJSON *a = failed_row(fx, report, "1 of 12 compared checkpoints failed", "edge1", "asr",
                                &rep);
    CU_ASSERT_STRING_EQUAL(str(a, "reason"),
                           "shape: the capture's 4096 values (rank 2) are not ours [8, 512] "
                           "(channel stride 2)");
    cJSON_Delete(rep);
    remove(fx);
    remove(mf);
    remove(report);
}

/* What the speech X-Ray does not do is refused before any model opens: bf16, a capture to write. */
static void test_refusals(void)
{
    ck_xray_params o = ck_xray_default_params();
    o.oracle = ck_test_path(FIXTURE);
    o.precision = CK_PRECISION_BF16;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_xray_run(&o, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "fp32 parity only"));
    o.precision = CK_PRECISION_FP32;
    o.capture_out = "/tmp/ck_test_xray_speech_never.safetensors";
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_xray_run(&o, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "encoder captures only"));
    CU_ASSERT_EQUAL(access(o.capture_out, F_OK), -1);
}

CK_TEST_MAIN("xray_speech", {"bf16 and --xray-out refused", test_refusals},
             {"every stage of the 4 cases passes; durations equal; SER reported",
              test_every_stage_passes},
             {"t_en scaled by 1.001 in the oracle fails at t_en alone",
              test_scaled_oracle_fails_at_that_stage},
             {"a duration moved by one frame fails pred_dur naming the token",
              test_moved_duration_fails_pred_dur},
             {"edge1 and edge510 (token-side capture) pass; durations equal; strides reported",
              test_edges_pass},
             {"edge1: f0n_shared scaled fails there alone; a moved frame fails pred_dur; strides "
              "checked",
              test_edges_canaries})
