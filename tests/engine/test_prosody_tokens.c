/* test_prosody_tokens.c - circuits/kokoro_prosody_tokens.json against the pinned PyTorch capture
 * (tests/fixtures/speech/kokoro_speech_capture.safetensors, tools/kokoro_reference.py) on the
 * synthetic whole Kokoro (engine/weights/kokoro_layout.c + ck_weights_synthetic), style = voice
 * "synthetic" row len(phonemes) - 1, its predictor half (the row equal to the case's ref_s): d_en (PL-BERT + bert_encoder), t_en (the
 * TextEncoder), d (the DurationEncoder), dur_lstm and the duration logits of every case within
 * tolerances measured from the data; the durations (the circuit's i32 output, with the case's
 * speed) equal the capture's pred_dur exactly; and the 4 cases in one batch give each case's solo
 * bits (t_en, logits, durations) at 1 and 2 threads, fused and in parity. */
#include <math.h>

#include "ck_test.h"
#include "executor.h"
#include "speech_fixture.h"

#define CIRCUIT "circuits/kokoro_prosody_tokens.json"
#define CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"

static const char *const CASES[] = {"speech4", "speech8", "speech20", "speech40"};
enum { N_CASES = 4, MAX_T = 40, C = 512 };

typedef ck_speech_fixture fixture;

static int setup(fixture *f)
{
    return ck_speech_fixture_open(f, CIRCUIT, CAPTURE, CASES, N_CASES, 128, MAX_T, SIZE_MAX, 0);
}

/* max |ours[t, c] - capture[t, c]| over the case's capture tensor `what` ([T, cols], or [cols, T]
 * when transposed: d_en, t_en), and the largest |capture| (*scale). */
static double worst_vs_capture(const fixture *f, size_t k, const char *what, const float *ours,
                               size_t cols, int transposed, double *scale)
{
    const ck_st_tensor *t = ck_speech_tensor(f, k, what);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    size_t n = f->tokens[k];
    CU_ASSERT_FATAL(t->rank == 2 && t->shape[transposed ? 0 : 1] == cols &&
                    t->shape[transposed ? 1 : 0] == n);
    float *ref = malloc(t->elements * sizeof *ref);
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_to_f32(t, ref, t->elements, &err), CK_OK);
    double worst = 0.0;
    *scale = 0.0;
    for (size_t tok = 0; tok < n; tok++) {
        for (size_t ch = 0; ch < cols; ch++) {
            double want = transposed ? ref[ch * n + tok] : ref[tok * cols + ch];
            worst = fmax(worst, fabs((double)ours[tok * cols + ch] - want));
            *scale = fmax(*scale, fabs(want));
        }
    }
    free(ref);
    return worst;
}

typedef struct {
    float d_en[MAX_T * C], d[MAX_T * 640], dur_lstm[MAX_T * C];
} captured;

static void capture(void *ctx, const char *checkpoint, const float *data, size_t tokens, size_t cols)
{
    captured *k = ctx;
    float *to = strcmp(checkpoint, "kokoro.bert_encoder.d_en") == 0    ? k->d_en
                : strcmp(checkpoint, "kokoro.predictor.d") == 0        ? k->d
                : strcmp(checkpoint, "kokoro.predictor.dur_lstm") == 0 ? k->dur_lstm
                                                                        : NULL;
    if (to != NULL) {
        memcpy(to, data, tokens * cols * sizeof *data);
    }
}

/* Each case alone against the capture. Tolerances from the data (f32 oneDNN matmuls and double
 * LayerNorms against torch's f32 ones), measured worst over the 4 cases, bounds about 4x that:
 *   d_en 2.86e-6 (|d_en| <= 3.3), t_en 1.13e-6 (<= 0.73), d 1.96e-5 (<= 3.6), dur_lstm 2.82e-6
 *   (<= 0.72; captured for speech4 only), logits 1.43e-5 (<= 17). */
static void test_matches_capture(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    ck_executor *ex = NULL;
    ck_error err = {0};
    ck_executor_options o = {1, 64, 64, 0, CK_DTYPE_F32, NULL};
    int rc = ck_executor_init(&ex, &f.c, f.w, &o, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    static float t_en[MAX_T * C], logits[MAX_T * 50];
    static captured cap;
    for (size_t k = 0; k < N_CASES; k++) {
        size_t n = f.tokens[k], offsets[2] = {0, n};
        CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, ck_speech_style(&f, k),
                                                              1, 128, &f.speed[k],
                                                              &err), CK_OK);
        rc = ck_executor_run(ex, f.ids[k], offsets, 1, f.c.features_buffer, t_en, n * C, capture,
                             &cap, &err);
        if (rc != CK_OK) {
            fprintf(stderr, "\n    %s\n", err.message);
        }
        CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], offsets, 1, f.c.hidden_buffer, logits,
                                              n * 50, NULL, NULL, &err), CK_OK);
        double s1, s2, s3, s4, s5;
        double wt = worst_vs_capture(&f, k, "t_en", t_en, C, 1, &s1);
        double wd = worst_vs_capture(&f, k, "d_en", cap.d_en, C, 1, &s2);
        double wdd = worst_vs_capture(&f, k, "d", cap.d, 640, 0, &s3);
        char lstm_name[64];
        snprintf(lstm_name, sizeof lstm_name, "%s.dur_lstm", CASES[k]); /* the full tier only */
        double wl = ck_st_find(f.cap[k], lstm_name) != NULL
                        ? worst_vs_capture(&f, k, "dur_lstm", cap.dur_lstm, C, 0, &s4)
                        : (s4 = 1.0, 0.0);
        double wg = worst_vs_capture(&f, k, "dur_logits", logits, 50, 0, &s5);
        char lstm[64] = "not stored";
        if (ck_st_find(f.cap[k], lstm_name) != NULL) {
            snprintf(lstm, sizeof lstm, "%.3g (<= %.3g)", wl, s4);
        }
        fprintf(stderr, "\n    %s (T %zu): d_en %.3g (|d_en| <= %.3g) t_en %.3g (<= %.3g) d %.3g "
                "(<= %.3g) dur_lstm %s dur_logits %.3g (<= %.3g)", CASES[k], n, wd, s2, wt, s1,
                wdd, s3, lstm, wg, s5);
        CU_ASSERT(wt < 5e-6 && s1 > 0.1);
        CU_ASSERT(wd < 1.2e-5 && s2 > 1.0);
        CU_ASSERT(wdd < 8e-5 && s3 > 1.0);
        CU_ASSERT(wl < 1.2e-5 && s4 > 0.1);
        CU_ASSERT(wg < 6e-5 && s5 > 1.0);
        /* durations: the circuit's i32 output, against pred_dur (int64), exactly */
        int32_t frames[MAX_T];
        _Static_assert(sizeof(int32_t) == sizeof(float), "frames ride in a float array");
        CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], offsets, 1, f.c.durations_buffer,
                                              (float *)(void *)frames, n, NULL, NULL, &err), CK_OK);
        char name[64];
        snprintf(name, sizeof name, "%s.pred_dur", CASES[k]);
        const ck_st_tensor *pd = ck_st_find(f.cap[k], name);
        CU_ASSERT_FATAL(pd != NULL && pd->dtype == CK_DTYPE_I64 && pd->elements == n);
        for (size_t t = 0; t < n; t++) {
            int64_t want;
            memcpy(&want, (const char *)pd->data + t * sizeof want, sizeof want);
            CU_ASSERT_EQUAL(frames[t], want);
        }
    }
    fprintf(stderr, "\n    ");
    ck_executor_free(ex);
    ck_speech_fixture_close(&f);
}

/* The 4 cases in one batch give each case's solo rows bit for bit, at 1 and 2 threads, fused and in
 * parity, for both outputs. */
static void test_batch_invariant(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    static int32_t ids[N_CASES * MAX_T];
    static float batch[N_CASES * MAX_T * C], solo[MAX_T * C];
    size_t offsets[N_CASES + 1];
    ck_speech_batch(&f, ids, offsets);
    ck_error err = {0};
    for (int parity = 0; parity <= 1; parity++) {
        for (int threads = 1; threads <= 2; threads++) {
            ck_executor *ex = NULL;
            ck_executor_options o = {threads, 128, 64, !parity, CK_DTYPE_F32, NULL};
            CU_ASSERT_EQUAL_FATAL(ck_executor_init(&ex, &f.c, f.w, &o, &err), CK_OK);
            for (int out = 0; out <= 2; out++) {
                int buffer = out == 2 ? f.c.durations_buffer
                                      : out ? f.c.hidden_buffer : f.c.features_buffer;
                size_t cols = out == 2 ? 1 : out ? 50 : C;
                CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, f.style, N_CASES, 128,
                                                                      f.speed, &err), CK_OK);
                CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, N_CASES, buffer, batch,
                                                      offsets[N_CASES] * cols, NULL, NULL, &err),
                                      CK_OK);
                for (size_t k = 0; k < N_CASES; k++) {
                    size_t n = f.tokens[k], one[2] = {0, n};
                    const float *style = ck_speech_style(&f, k);
                    CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, style, 1, 128,
                                                                          &f.speed[k], &err), CK_OK);
                    CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], one, 1, buffer, solo,
                                                          n * cols, NULL, NULL, &err), CK_OK);
                    CU_ASSERT_EQUAL(memcmp(solo, batch + offsets[k] * cols,
                                           n * cols * sizeof(float)), 0);
                }
            }
            ck_executor_free(ex);
        }
    }
    ck_speech_fixture_close(&f);
}

/* The durations output must be i32 [T]; a run without the sequence inputs its ops read fails
 * CK_E_ARG (no style), and so does one of more sequences than they hold. */
static void test_inputs_and_durations_checked(void)
{
    static char text[1 << 17], edited[1 << 17];
    FILE *in = fopen(ck_test_path(CIRCUIT), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    const char *from = "\"durations\": {\"shape\": [\"T\"], \"dtype\": \"i32\"";
    char *at = strstr(text, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    snprintf(edited, sizeof edited, "%.*s\"durations\": {\"shape\": [\"T\"], \"dtype\": \"f32\"%s",
             (int)(at - text), text, at + strlen(from));
    ck_circuit c = {0};
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_circuit_parse(&c, edited, strlen(edited), "prosody.json", &err), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "durations"));
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    ck_executor *ex = NULL;
    ck_executor_options o = {1, 64, 64, 1, CK_DTYPE_F32, NULL};
    err = (ck_error){0};
    CU_ASSERT_EQUAL_FATAL(ck_executor_init(&ex, &f.c, f.w, &o, &err), CK_OK);
    size_t offsets[3] = {0, f.tokens[0], 2 * f.tokens[0]};
    int32_t ids[2 * MAX_T];
    memcpy(ids, f.ids[0], f.tokens[0] * sizeof *ids);
    memcpy(ids + f.tokens[0], f.ids[0], f.tokens[0] * sizeof *ids);
    CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 1, f.c.features_buffer, NULL, 0, NULL, NULL,
                                    &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_executor_set_sequence_inputs(ex, ck_speech_style(&f, 0),
                                                    1, 128, &f.speed[0], &err), CK_OK);
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 2, f.c.features_buffer, NULL, 0, NULL, NULL,
                                    &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sequence inputs"));
    CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 1, f.c.features_buffer, NULL, 0, NULL, NULL,
                                    &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_set_sequence_inputs(ex, NULL, 0, 0, &f.speed[0], &err), CK_E_ARG);
    ck_executor_free(ex);
    ck_speech_fixture_close(&f);
}

CK_TEST_MAIN("prosody_tokens",
             {"inputs and durations checked", test_inputs_and_durations_checked},
             {"d_en, t_en, d, logits match the capture; durations exact", test_matches_capture},
             {"batch invariant", test_batch_invariant})
