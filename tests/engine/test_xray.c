/* test_xray.c - X-Ray against the pinned PyTorch capture (supersedes test_kokoro_capture.c): every
 * checkpoint of every case passes in parity mode; batched vs solo and two parity runs are bit-identical;
 * a flipped fixture byte is rejected before computing; a perturbed candidate fails at the right
 * (checkpoint, sequence, token, channel); metrics and profile rejections on hand-checkable inputs. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <unistd.h>

#include "ck_test.h"
#include "ckbatch.h"
#include "circuit_default.h"
#include "safetensors.h"
#include "sha256.h"
#include "synth_weights.h"
#include "xray.h"

#define FIXTURE "tests/fixtures/kokoro_capture.safetensors"
#define MANIFEST "tests/fixtures/kokoro_capture.manifest.json"
#define N_CASES 8
#define N_CHECKPOINTS 124

static char cap_a[256], cap_b[256], report[256];

static void tmp_path(char *out, const char *name)
{
    snprintf(out, 256, "/tmp/ck_test_xray_%ld_%s", (long)getpid(), name);
}

static int parity_run(const char *oracle, const char *capture, const char *rep, ck_error *err)
{
    ck_xray_params o = ck_xray_default_params();
    o.oracle = oracle;
    o.report = rep;
    o.capture_out = capture;
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

static double count_of(const cJSON *rep, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rep, "counts"), key)
        ->valuedouble;
}

static void test_every_checkpoint_passes(void)
{
    ck_error err = {0};
    int rc = parity_run(ck_test_path(FIXTURE), cap_a, report, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    cJSON *rep = load_json(report);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(rep, "status")->valuestring, "pass");
    CU_ASSERT_EQUAL(count_of(rep, "pass"), N_CASES * N_CHECKPOINTS);
    CU_ASSERT_EQUAL(count_of(rep, "fail"), 0);
    CU_ASSERT_EQUAL(count_of(rep, "NOT_TESTED"), 0);
    cJSON_Delete(rep);
}

static void test_two_parity_runs_identical(void)
{
    ck_error err = {0};
    char ha[65], hb[65];
    CU_ASSERT_EQUAL_FATAL(parity_run(ck_test_path(FIXTURE), cap_b, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_sha256_file(cap_a, ha, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_sha256_file(cap_b, hb, &err), CK_OK);
    CU_ASSERT_STRING_EQUAL(ha, hb);
}

/* batch5's stored rows of sequence s are the rows soloN stores (same positions in the sequence):
 * our packed batch must give the same bits as each sequence alone. */
static void test_batched_equals_solo(void)
{
    static const char *const solos[] = {"solo3", "solo17", "solo64", "solo130", "solo255"};
    static const size_t solo_rows[] = {3, 3, 3, 3, 3};
    ck_error err = {0};
    ck_st_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, cap_a, &err), CK_OK);
    double worst = 0;
    for (size_t i = 0; i < ck_st_count(f); i++) {
        const ck_st_tensor *t = ck_st_at(f, i);
        if (strncmp(t->name, "batch5.kokoro.", 14) != 0) {
            continue;
        }
        size_t cols = t->shape[1], row = 0;
        for (size_t s = 0; s < 5; s++) {
            char key[256];
            snprintf(key, sizeof key, "%s.%s", solos[s], t->name + 7);
            const ck_st_tensor *u = ck_st_find(f, key);
            CU_ASSERT_FATAL(u != NULL && u->shape[0] == solo_rows[s] && u->shape[1] == cols);
            const float *a = (const float *)t->data + row * cols, *b = u->data;
            for (size_t k = 0; k < solo_rows[s] * cols; k++) {
                double d = fabs((double)a[k] - (double)b[k]);
                worst = d > worst ? d : worst;
            }
            row += solo_rows[s];
        }
    }
    fprintf(stderr, "\n    batched vs solo, every checkpoint: max abs %.3g (goal 0)\n", worst);
    CU_ASSERT_EQUAL(worst, 0.0);
    ck_st_close(f);
}

static int copy_file(const char *from, const char *to, long flip_at)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int ch, ok = in && out;
    for (long i = 0; ok && (ch = fgetc(in)) != EOF; i++) {
        fputc(i == flip_at ? ch ^ 1 : ch, out);
    }
    if (in) {
        fclose(in);
    }
    return (out && fclose(out) == 0 && ok) ? 0 : -1;
}

static void test_flipped_byte_rejected_before_computing(void)
{
    char fx[256], mf[256], rep[256];
    tmp_path(fx, "flip.safetensors");
    tmp_path(mf, "flip.manifest.json");
    tmp_path(rep, "flip_report.json");
    CU_ASSERT_EQUAL_FATAL(copy_file(ck_test_path(FIXTURE), fx, 1000000), 0);
    CU_ASSERT_EQUAL_FATAL(copy_file(ck_test_path(MANIFEST), mf, -1), 0);
    ck_error err = {0};
    CU_ASSERT_EQUAL(parity_run(fx, NULL, rep, &err), CK_E_HASH);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, fx));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "nothing compared"));
    CU_ASSERT_EQUAL(access(rep, F_OK), -1); /* no report: nothing ran */
    remove(fx);
    remove(mf);
}

/* Adds delta to element (row, channel) of tensor `name` in a copy of `from`, written to `to`. */
static int perturb(const char *from, const char *to, const char *name, size_t row, size_t ch,
                   float delta)
{
    FILE *f = fopen(from, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)n);
    CU_ASSERT_FATAL(bytes != NULL && fread(bytes, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    uint64_t hlen = 0;
    memcpy(&hlen, bytes, 8);
    cJSON *h = cJSON_ParseWithLength((const char *)bytes + 8, (size_t)hlen);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(h, name);
    size_t begin = (size_t)cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "data_offsets"), 0)
                       ->valuedouble;
    size_t cols = (size_t)cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "shape"), 1)
                      ->valuedouble;
    float v;
    size_t at = 8 + hlen + begin + (row * cols + ch) * sizeof v;
    memcpy(&v, bytes + at, sizeof v);
    v += delta;
    memcpy(bytes + at, &v, sizeof v);
    f = fopen(to, "wb");
    int ok = f != NULL && fwrite(bytes, 1, (size_t)n, f) == (size_t)n;
    ok = f != NULL && fclose(f) == 0 && ok;
    cJSON_Delete(h);
    free(bytes);
    return ok ? 0 : -1;
}

static void test_perturbed_candidate_named(void)
{
    char bad[256];
    tmp_path(bad, "perturbed.safetensors");
    /* utt36 stores rows 0, 18, 35: stored row 1 is token 18 of sequence 0 */
    CU_ASSERT_EQUAL_FATAL(perturb(cap_a, bad, "utt36.kokoro.phoneme_encoder.layer.05.ffn_gelu", 1,
                                  100, 1e-3f), 0);
    ck_error err = {0};
    ck_st_file *cand = NULL, *oracle = NULL;
    ck_circuit c;
    const char **ids = NULL;
    size_t n_ids = 0;
    ck_xray_profile p;
    ck_xray_report rep = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&cand, bad, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&oracle, ck_test_path(FIXTURE), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load_default(&c, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_xray_circuit_checkpoints(&c, &ids, &n_ids, &err), CK_OK);
    CU_ASSERT_EQUAL(n_ids, N_CHECKPOINTS);
    CU_ASSERT_EQUAL_FATAL(ck_xray_profile_load(&p, NULL, CK_DTYPE_F32, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_xray_compare_files(cand, oracle, ids, n_ids, &p, &rep, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_xray_report_status(&rep), CK_E_PARITY);
    CU_ASSERT_EQUAL(rep.failed, 1);
    CU_ASSERT_EQUAL(rep.passed, N_CASES * N_CHECKPOINTS - 1);
    for (size_t i = 0; i < rep.n; i++) {
        const ck_xray_result *r = &rep.items[i];
        if (r->status == CK_XRAY_FAIL) {
            CU_ASSERT_STRING_EQUAL(r->case_name, "utt36");
            CU_ASSERT_STRING_EQUAL(r->checkpoint, "kokoro.phoneme_encoder.layer.05.ffn_gelu");
            CU_ASSERT_EQUAL(r->worst_sequence, 0);
            CU_ASSERT_EQUAL(r->worst_token, 18);
            CU_ASSERT_EQUAL(r->worst_channel, 100);
            CU_ASSERT_TRUE(fabs(r->max_abs - 1e-3) < 1e-5);
            CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "max abs"));
        }
    }
    ck_xray_report_free(&rep);
    ck_xray_profile_free(&p);
    free(ids);
    ck_circuit_free(&c);
    ck_st_close(cand);
    ck_st_close(oracle);
    remove(bad);
}

/* Hand-checkable: c = [1,2,3,4], o = [1,2,3,5]: dot 34, |c|^2 30, |o|^2 39; rmse = sqrt(1/4) = 0.5;
 * rel = 0.5 / sqrt(39/4); max abs 1 at row 1 channel 1. */
static void test_compare_metrics(void)
{
    const float c[] = {1, 2, 3, 4}, o[] = {1, 2, 3, 5};
    const size_t seq[] = {0, 1}, tok[] = {7, 2};
    ck_xray_budget b = ck_xray_default_budget();
    ck_xray_result r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(ck_xray_compare(c, o, 2, 2, seq, tok, &b, &r), CK_OK);
    CU_ASSERT_DOUBLE_EQUAL(r.cosine, 34.0 / (sqrt(30.0) * sqrt(39.0)), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.rmse, 0.5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.rel_rmse, 0.5 / sqrt(39.0 / 4.0), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.max_abs, 1.0, 0);
    CU_ASSERT_EQUAL(r.worst_sequence, 1);
    CU_ASSERT_EQUAL(r.worst_token, 2);
    CU_ASSERT_EQUAL(r.worst_channel, 1);
    CU_ASSERT_EQUAL(r.status, CK_XRAY_FAIL);
    CU_ASSERT_EQUAL(ck_xray_compare(c, c, 2, 2, seq, tok, &b, &r), CK_OK);
    CU_ASSERT_EQUAL(r.status, CK_XRAY_PASS);
    CU_ASSERT_EQUAL(ck_xray_compare(c, o, 0, 2, seq, tok, &b, &r), CK_E_ARG);
}

static void test_compare_nonfinite_fails(void)
{
    const float c[] = {1, NAN}, o[] = {1, 2};
    const size_t z[] = {0};
    ck_xray_budget b = ck_xray_default_budget();
    ck_xray_result r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(ck_xray_compare(c, o, 1, 2, z, z, &b, &r), CK_OK);
    CU_ASSERT_EQUAL(r.status, CK_XRAY_FAIL);
    CU_ASSERT_FALSE(r.candidate_finite);
    CU_ASSERT_TRUE(isinf(r.max_abs));
    CU_ASSERT_EQUAL(r.worst_channel, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "candidate"));
}

static void test_profile_override_and_rejection(void)
{
    char path[256];
    tmp_path(path, "profile.json");
    FILE *f = fopen(path, "wb");
    fputs("{\"dtypes\": {\"F32\": {\"max_abs\": 3e-5}}, \"checkpoints\": "
          "{\"kokoro.bert_encoder.features\": {\"rmse\": 1e-4}}}", f);
    fclose(f);
    ck_error err = {0};
    ck_xray_profile p;
    CU_ASSERT_EQUAL_FATAL(ck_xray_profile_load(&p, path, CK_DTYPE_F32, &err), CK_OK);
    CU_ASSERT_DOUBLE_EQUAL(ck_xray_profile_budget(&p, "x").max_abs_max, 3e-5, 0);
    CU_ASSERT_DOUBLE_EQUAL(ck_xray_profile_budget(&p, "kokoro.bert_encoder.features").rmse_max,
                           1e-4, 0);
    CU_ASSERT_DOUBLE_EQUAL(ck_xray_profile_budget(&p, "kokoro.bert_encoder.features").max_abs_max,
                           3e-5, 0);
    ck_xray_profile_free(&p);
    f = fopen(path, "wb");
    fputs("{\"dtypes\": {\"F32\": {\"rmse\": \"small\"}}}", f);
    fclose(f);
    CU_ASSERT_EQUAL(ck_xray_profile_load(&p, path, CK_DTYPE_F32, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "\"rmse\""));
    remove(path);
}

static void test_generator_matches_manifest_hashes(void)
{
    cJSON *m = load_json(ck_test_path(MANIFEST));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "weights"), "tensors");
    ck_error err = {0};
    ck_circuit c;
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load_default(&c, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, CK_SYNTH_DEFAULT_SEED, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_hash(w, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), (size_t)cJSON_GetArraySize(tensors));
    for (size_t i = 0; i < ck_weights_count(w); i++) {
        char hex[65];
        ck_sha256_hex(ck_weights_at(w, i)->sha256, hex);
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(tensors, ck_weights_at(w, i)->name), "sha256");
        CU_ASSERT_TRUE(cJSON_IsString(want) && strcmp(want->valuestring, hex) == 0);
    }
    ck_weights_free(w);
    ck_circuit_free(&c);
    cJSON_Delete(m);
}

static void test_cleanup(void)
{
    CU_ASSERT_EQUAL(remove(cap_a), 0);
    CU_ASSERT_EQUAL(remove(cap_b), 0);
    CU_ASSERT_EQUAL(remove(report), 0);
}

static void test_fixture_matches_manifest(void)
{
    tmp_path(cap_a, "a.safetensors");
    tmp_path(cap_b, "b.safetensors");
    tmp_path(report, "report.json");
    ck_error err = {0};
    char fixture[4096];
    snprintf(fixture, sizeof fixture, "%s", ck_test_path(FIXTURE)); /* ck_test_path is one buffer */
    CU_ASSERT_EQUAL(ck_xray_verify_fixture(fixture, ck_test_path(MANIFEST), NULL, &err), CK_OK);
}

CK_TEST_MAIN("xray", {"fixture matches manifest", test_fixture_matches_manifest},
             {"generator matches manifest hashes", test_generator_matches_manifest_hashes},
             {"every checkpoint of every case passes (parity)", test_every_checkpoint_passes},
             {"two parity runs byte-identical", test_two_parity_runs_identical},
             {"batched equals solo, bit for bit", test_batched_equals_solo},
             {"flipped fixture byte rejected before computing",
              test_flipped_byte_rejected_before_computing},
             {"perturbed candidate: checkpoint, token, channel named", test_perturbed_candidate_named},
             {"metrics on a hand-checkable pair", test_compare_metrics},
             {"non-finite candidate fails", test_compare_nonfinite_fails},
             {"profile override and rejection", test_profile_override_and_rejection},
             {"cleanup", test_cleanup})
