/* test_prosody_tokens.c - circuits/kokoro_prosody_tokens.json against the pinned PyTorch capture
 * (tests/fixtures/speech/kokoro_speech_capture.safetensors, tools/kokoro_reference.py) on the
 * synthetic whole Kokoro (engine/api/kokoro_layout.c + ck_weights_synthetic): d_en (PL-BERT +
 * bert_encoder) and t_en (the TextEncoder: embedding, 3 x conv1d + layer_norm + leaky_relu 0.2,
 * BiLSTM) of every case within tolerances measured from the data, and the 4 cases in one batch
 * giving each case's solo bits at 1 and 2 threads, fused and in parity. */
#include <math.h>

#include "ck_test.h"
#include "executor.h"
#include "kokoro_layout.h"
#include "safetensors.h"
#include "weights.h"
#include "synth_weights.h"

#define CIRCUIT "circuits/kokoro_prosody_tokens.json"
#define CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"

static const char *const CASES[] = {"speech4", "speech8", "speech20", "speech40"};
enum { N_CASES = 4, MAX_T = 40, C = 512 };

typedef struct {
    ck_circuit c;
    ck_weights *w;
    ck_st_file *cap;
    int32_t ids[N_CASES][MAX_T];
    size_t tokens[N_CASES];
} fixture;

static int setup(fixture *f)
{
    ck_error err = {0};
    ck_weight_spec *specs = NULL;
    size_t n = 0;
    memset(f, 0, sizeof *f);
    if (ck_circuit_load(&f->c, ck_test_path(CIRCUIT), &err) != CK_OK ||
        ck_kokoro_weight_specs(&specs, &n, NULL, &err) != CK_OK ||
        ck_weights_synthetic(&f->w, specs, n, CK_SYNTH_DEFAULT_SEED, &err) != CK_OK ||
        ck_st_open(&f->cap, ck_test_path(CAPTURE), &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
        free(specs);
        return 0;
    }
    free(specs);
    for (size_t k = 0; k < N_CASES; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s.ids", CASES[k]);
        const ck_st_tensor *t = ck_st_find(f->cap, name);
        if (t == NULL || t->dtype != CK_DTYPE_I32 || t->elements > MAX_T) {
            return 0;
        }
        memcpy(f->ids[k], t->data, t->bytes);
        f->tokens[k] = t->elements;
    }
    return 1;
}

static void teardown(fixture *f)
{
    ck_st_close(f->cap);
    ck_weights_free(f->w);
    ck_circuit_free(&f->c);
}

/* max |ours[t, c] - capture[c, t]| over the case's [C, T] capture tensor `what`, and the largest
 * |capture| (for the report). */
static double worst_vs_capture(const fixture *f, size_t k, const char *what, const float *ours,
                               double *scale)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", CASES[k], what);
    const ck_st_tensor *t = ck_st_find(f->cap, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    size_t n = f->tokens[k];
    CU_ASSERT_FATAL(t->rank == 2 && t->shape[0] == C && t->shape[1] == n);
    float *ref = malloc(t->elements * sizeof *ref);
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_to_f32(t, ref, t->elements, &err), CK_OK);
    double worst = 0.0;
    *scale = 0.0;
    for (size_t tok = 0; tok < n; tok++) {
        for (size_t ch = 0; ch < C; ch++) {
            double want = ref[ch * n + tok];
            worst = fmax(worst, fabs((double)ours[tok * C + ch] - want));
            *scale = fmax(*scale, fabs(want));
        }
    }
    free(ref);
    return worst;
}

/* Each case alone: d_en and t_en against the capture. Tolerances from the data (the f32 oneDNN
 * matmuls and double LayerNorms against torch's f32 ones), measured worst over the 4 cases:
 * t_en 1.13e-6 (|t_en| <= 0.73), d_en 2.86e-6 (|d_en| <= 3.3); bounds about 4x that. */
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
    static float t_en[MAX_T * C], d_en[MAX_T * C];
    for (size_t k = 0; k < N_CASES; k++) {
        size_t n = f.tokens[k], offsets[2] = {0, n};
        CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], offsets, 1, f.c.features_buffer, t_en,
                                              n * C, NULL, NULL, &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], offsets, 1, f.c.hidden_buffer, d_en,
                                              n * C, NULL, NULL, &err), CK_OK);
        double st, sd;
        double wt = worst_vs_capture(&f, k, "t_en", t_en, &st);
        double wd = worst_vs_capture(&f, k, "d_en", d_en, &sd);
        CU_ASSERT(wt < 5e-6 && st > 0.1);
        CU_ASSERT(wd < 1.2e-5 && sd > 1.0);
    }
    ck_executor_free(ex);
    teardown(&f);
}

/* The 4 cases in one batch give each case's solo rows bit for bit, at 1 and 2 threads, fused and in
 * parity, for both outputs. */
static void test_batch_invariant(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    static int32_t ids[N_CASES * MAX_T];
    static float batch[N_CASES * MAX_T * C], solo[MAX_T * C];
    size_t offsets[N_CASES + 1] = {0};
    for (size_t k = 0; k < N_CASES; k++) {
        memcpy(ids + offsets[k], f.ids[k], f.tokens[k] * sizeof *ids);
        offsets[k + 1] = offsets[k] + f.tokens[k];
    }
    ck_error err = {0};
    for (int parity = 0; parity <= 1; parity++) {
        for (int threads = 1; threads <= 2; threads++) {
            ck_executor *ex = NULL;
            ck_executor_options o = {threads, 128, 64, !parity, CK_DTYPE_F32, NULL};
            CU_ASSERT_EQUAL_FATAL(ck_executor_init(&ex, &f.c, f.w, &o, &err), CK_OK);
            for (int out = 0; out <= 1; out++) {
                int buffer = out ? f.c.hidden_buffer : f.c.features_buffer;
                CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, N_CASES, buffer, batch,
                                                      offsets[N_CASES] * C, NULL, NULL, &err), CK_OK);
                for (size_t k = 0; k < N_CASES; k++) {
                    size_t n = f.tokens[k], one[2] = {0, n};
                    CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], one, 1, buffer, solo, n * C,
                                                          NULL, NULL, &err), CK_OK);
                    CU_ASSERT_EQUAL(memcmp(solo, batch + offsets[k] * C, n * C * sizeof(float)), 0);
                }
            }
            ck_executor_free(ex);
        }
    }
    teardown(&f);
}

CK_TEST_MAIN("prosody_tokens",
             {"d_en and t_en match the capture", test_matches_capture},
             {"batch invariant", test_batch_invariant})
