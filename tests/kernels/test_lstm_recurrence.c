/* test_lstm_recurrence.c - one LSTM direction vs torch.nn.LSTM (packed BiLSTM), a double reference, batch and split
 * invariance, rejections. */
#include <stdint.h>

#include "ck_status.h"
#include "kernel_fixture.h"
#include "lstm_recurrence.h"

enum { H = 8, IN = 6, G = 4 * H, ROWS = 15, SEQS = 3, SCRATCH = 6 * H + 4 * H * H };

typedef struct {
    ck_st_file *file;
    size_t offsets[SEQS + 1];
    float *gates[2], *w_hh[2], *b_hh[2], *h;
} lstm_fixture;

static int load(lstm_fixture *fx)
{
    static const char *suffix[2] = {"fwd", "rev"};
    char name[32];
    memset(fx, 0, sizeof *fx);
    fx->file = ck_kfix_open("lstm_recurrence.safetensors");
    if (fx->file == NULL || ck_kfix_offsets(fx->file, fx->offsets, SEQS + 1) != SEQS) {
        return 0;
    }
    for (int d = 0; d < 2; d++) {
        snprintf(name, sizeof name, "gates_%s", suffix[d]);
        fx->gates[d] = ck_kfix_f32(fx->file, name, NULL);
        snprintf(name, sizeof name, "w_hh_%s", suffix[d]);
        fx->w_hh[d] = ck_kfix_f32(fx->file, name, NULL);
        snprintf(name, sizeof name, "b_hh_%s", suffix[d]);
        fx->b_hh[d] = ck_kfix_f32(fx->file, name, NULL);
    }
    fx->h = ck_kfix_f32(fx->file, "h", NULL);
    return fx->gates[1] && fx->w_hh[1] && fx->b_hh[1] && fx->h;
}

static void unload(lstm_fixture *fx)
{
    for (int d = 0; d < 2; d++) {
        free(fx->gates[d]);
        free(fx->w_hh[d]);
        free(fx->b_hh[d]);
    }
    free(fx->h);
    ck_st_close(fx->file);
}

/* Both directions of the fixture's BiLSTM over sequences [s0, s1) into out [ROWS, 2H]. */
static int run_bilstm(const lstm_fixture *fx, float *out, size_t s0, size_t s1)
{
    float scratch[SCRATCH];
    int rc = 0;
    for (int d = 0; d < 2 && rc == 0; d++) {
        rc = ck_lstm_recurrence_f32(fx->gates[d], ROWS * G, G, fx->w_hh[d], G * H, fx->b_hh[d], G, out + d * H,
                                    ROWS * 2 * H - d * H, 2 * H, scratch, SCRATCH, fx->offsets, SEQS, s0, s1, H, d);
    }
    return rc;
}

static double sigmoid_d(double a)
{
    return 1.0 / (1.0 + exp(-a));
}

/* ref_lstm_recurrence: the torch cell in double, one direction, one sequence of n rows. */
static void ref_lstm(const float *gates, const float *w_hh, const float *b_hh, size_t n, int reverse, double *h,
                     size_t h_stride)
{
    double c[H] = {0}, hp[H] = {0}, a[G];
    for (size_t step = 0; step < n; step++) {
        size_t r = reverse ? n - 1 - step : step;
        for (size_t j = 0; j < G; j++) {
            a[j] = (double)gates[r * G + j] + (double)b_hh[j];
            for (size_t k = 0; k < H; k++) {
                a[j] += (double)w_hh[j * H + k] * hp[k];
            }
        }
        for (size_t k = 0; k < H; k++) {
            c[k] = sigmoid_d(a[H + k]) * c[k] + sigmoid_d(a[k]) * tanh(a[2 * H + k]);
            hp[k] = sigmoid_d(a[3 * H + k]) * tanh(c[k]);
            h[r * h_stride + k] = hp[k];
        }
    }
}

/* Bound: h is in (-1, 1) and each step is a handful of float ops on O(1) values (H = 8 products of
 * weights |w| < 0.36 and |h| < 1), so torch's rounding and ours each stay within a few ulps of 1
 * (ulp(1) = 1.2e-7) over 9 steps: 2.5e-7 absolute (~2 ulps). Measured: 5.96e-8 (printed). */
static void test_matches_torch_bilstm(void)
{
    lstm_fixture fx;
    float out[ROWS * 2 * H];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run_bilstm(&fx, out, 0, SEQS), CK_OK);
    double abs_err, rel_err;
    ck_kfix_errors(out, fx.h, ROWS * 2 * H, 1e-2, &abs_err, &rel_err);
    fprintf(stderr, "    vs torch: max abs %.3g, max rel %.3g (|want| floored at 1e-2)\n", abs_err, rel_err);
    CU_ASSERT_TRUE(ck_test_close("bilstm vs torch", out, fx.h, ROWS * 2 * H, 2.5e-7));
    unload(&fx);
}

static void test_matches_double_reference(void)
{
    lstm_fixture fx;
    float out[ROWS * 2 * H];
    double ref[ROWS * 2 * H];
    float reff[ROWS * 2 * H];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run_bilstm(&fx, out, 0, SEQS), CK_OK);
    for (size_t s = 0; s < SEQS; s++) {
        size_t o = fx.offsets[s], n = fx.offsets[s + 1] - o;
        for (int d = 0; d < 2; d++) {
            ref_lstm(fx.gates[d] + o * G, fx.w_hh[d], fx.b_hh[d], n, d, ref + o * 2 * H + d * H, 2 * H);
        }
    }
    for (size_t i = 0; i < ROWS * 2 * H; i++) {
        reff[i] = (float)ref[i];
    }
    CU_ASSERT_TRUE(ck_test_close("bilstm vs double", out, reff, ROWS * 2 * H, 2.5e-7));
    unload(&fx);
}

/* The bits the header promises on every ISA (ctest runs this suite again with CK_MAX_CPU_ISA=portable):
 * one direction over one sequence of n rows, each gate's dot product in float, k in order from 0, then
 * + b_hh, then + G; expf and tanhf. out: rows of out_stride. */
static void ordered_float_lstm(const float *gates, const float *w_hh, const float *b_hh, size_t n, int reverse,
                               size_t hidden, float *out, size_t out_stride)
{
    size_t g = 4 * hidden;
    float *c = calloc(2 * hidden + g, sizeof(float)), *hp = c + hidden, *a = hp + hidden;
    for (size_t step = 0; c != NULL && step < n; step++) {
        size_t r = reverse ? n - 1 - step : step;
        for (size_t j = 0; j < g; j++) {
            float acc = 0.0f;
            for (size_t k = 0; k < hidden; k++) {
                acc += w_hh[j * hidden + k] * hp[k];
            }
            a[j] = gates[r * g + j] + (acc + b_hh[j]);
        }
        for (size_t k = 0; k < hidden; k++) {
            float i = 1.0f / (1.0f + expf(-a[k])), f = 1.0f / (1.0f + expf(-a[hidden + k]));
            float o = 1.0f / (1.0f + expf(-a[3 * hidden + k]));
            c[k] = f * c[k] + i * tanhf(a[2 * hidden + k]);
            hp[k] = o * tanhf(c[k]);
            out[r * out_stride + k] = hp[k];
        }
    }
    free(c);
}

static void test_bits_equal_the_ordered_float_loop(void)
{
    lstm_fixture fx;
    float out[ROWS * 2 * H], ref[ROWS * 2 * H];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run_bilstm(&fx, out, 0, SEQS), CK_OK);
    for (size_t s = 0; s < SEQS; s++) {
        size_t o = fx.offsets[s], n = fx.offsets[s + 1] - o;
        for (int d = 0; d < 2; d++) {
            ordered_float_lstm(fx.gates[d] + o * G, fx.w_hh[d], fx.b_hh[d], n, d, H, ref + o * 2 * H + d * H, 2 * H);
        }
    }
    CU_ASSERT_EQUAL(memcmp(out, ref, sizeof out), 0);
    unload(&fx);
}

/* Each sequence run alone from its own buffers gives the same bits as in the batch. */
static void test_sequence_alone_is_bit_identical(void)
{
    lstm_fixture fx;
    float batch[ROWS * 2 * H], alone[ROWS * 2 * H], scratch[SCRATCH];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run_bilstm(&fx, batch, 0, SEQS), CK_OK);
    for (size_t s = 0; s < SEQS; s++) {
        size_t o = fx.offsets[s], n = fx.offsets[s + 1] - o, one[2] = {0, n};
        for (int d = 0; d < 2; d++) {
            float g[ROWS * G];
            memcpy(g, fx.gates[d] + o * G, n * G * sizeof(float));
            CU_ASSERT_EQUAL(ck_lstm_recurrence_f32(g, n * G, G, fx.w_hh[d], G * H, fx.b_hh[d], G, alone + d * H,
                                                   n * 2 * H - d * H, 2 * H, scratch, SCRATCH, one, 1, 0, 1, H, d),
                            CK_OK);
        }
        CU_ASSERT_EQUAL(memcmp(alone, batch + o * 2 * H, n * 2 * H * sizeof(float)), 0);
    }
    unload(&fx);
}

/* Sequences split between calls ({0}, {1, 2}; {0, 1}, {2}) give the same bits as one call. */
static void test_split_is_bit_identical(void)
{
    lstm_fixture fx;
    float one[ROWS * 2 * H], split[ROWS * 2 * H];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run_bilstm(&fx, one, 0, SEQS), CK_OK);
    for (size_t cut = 0; cut <= SEQS; cut++) {
        ck_test_fill_canary(split, ROWS * 2 * H);
        CU_ASSERT_EQUAL(run_bilstm(&fx, split, cut, SEQS), CK_OK);
        CU_ASSERT_EQUAL(run_bilstm(&fx, split, 0, cut), CK_OK);
        CU_ASSERT_EQUAL(memcmp(one, split, sizeof one), 0);
    }
    unload(&fx);
}

/* The forward direction alone leaves the right half (the reverse direction's columns) untouched. */
static void test_other_half_untouched(void)
{
    lstm_fixture fx;
    float out[ROWS * 2 * H], scratch[SCRATCH];
    CU_ASSERT_FATAL(load(&fx));
    ck_test_fill_canary(out, ROWS * 2 * H);
    CU_ASSERT_EQUAL(ck_lstm_recurrence_f32(fx.gates[0], ROWS * G, G, fx.w_hh[0], G * H, fx.b_hh[0], G, out,
                                           ROWS * 2 * H, 2 * H, scratch, SCRATCH, fx.offsets, SEQS, 0, SEQS, H, 0),
                    CK_OK);
    for (size_t r = 0; r < ROWS; r++) {
        CU_ASSERT_TRUE(ck_test_canary_intact(out + r * 2 * H + H, H));
    }
    unload(&fx);
}

/* tools/make_kernel_fixtures.py hash_values: (k - 2048) / 2048 * scale, k the top 12 bits of a 32-bit mix. */
static void hash_values(float *out, size_t n, uint32_t seed, float scale)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t x = (uint32_t)i * 0x9E3779B1u + seed * 0x85EBCA77u;
        x ^= x >> 15;
        x *= 0x2C1B3C6Du;
        x ^= x >> 12;
        out[i] = (float)((int)(x >> 20) - 2048) / 2048.0f * scale;
    }
}

/* Kokoro's H = 256, lengths 2 and 30, weights and gates from hash_values (torch got the same values:
 * W_ih = I hands the gates over exactly). Bound: each pre-activation sums 256 products in float in an
 * order torch does not share (|w| <= 1/16, |h| < 1), and h feeds back for 30 steps: 5e-7 absolute (4 ulps
 * of 1). Measured: 1.49e-7. */
static void test_matches_torch_at_kokoro_size(void)
{
    enum { KH = 256, KG = 4 * KH, KR = 32 };
    size_t offsets[3];
    ck_st_file *f = ck_kfix_open("lstm_recurrence_kokoro.safetensors");
    CU_ASSERT_FATAL(f != NULL && ck_kfix_offsets(f, offsets, 3) == 2 && offsets[2] == KR);
    enum { KS = 6 * KH + 4 * KH * KH };
    float *want = ck_kfix_f32(f, "h", NULL), *gates = malloc(KR * KG * sizeof(float));
    float *w = malloc(2 * KG * KH * sizeof(float)), *out = malloc(KR * 2 * KH * sizeof(float));
    float *scratch = malloc(KS * sizeof(float)), b[2][KG];
    CU_ASSERT_FATAL(want && gates && w && out && scratch);
    hash_values(gates, KR * KG, 3, 2.0f);
    for (int d = 0; d < 2; d++) {
        hash_values(w + d * KG * KH, KG * KH, 1 + (uint32_t)d, 1.0f / 16);
        hash_values(b[d], KG, 11 + (uint32_t)d, 1.0f / 16);
        CU_ASSERT_EQUAL(ck_lstm_recurrence_f32(gates, KR * KG, KG, w + d * KG * KH, KG * KH, b[d], KG, out + d * KH,
                                               KR * 2 * KH - d * KH, 2 * KH, scratch, KS, offsets, 2, 0, 2, KH,
                                               d), CK_OK);
    }
    double abs_err, rel_err;
    ck_kfix_errors(out, want, KR * 2 * KH, 1e-2, &abs_err, &rel_err);
    fprintf(stderr, "    vs torch, H 256: max abs %.3g, max rel %.3g (|want| floored at 1e-2)\n", abs_err, rel_err);
    CU_ASSERT_TRUE(ck_test_close("bilstm H 256 vs torch", out, want, KR * 2 * KH, 5e-7));
    /* and the exact bits of the ordered float loop, at this size too (vector tails: 4H = 1024 = 64 x 16) */
    float *ref = malloc(KR * 2 * KH * sizeof(float));
    CU_ASSERT_FATAL(ref != NULL);
    for (size_t s = 0; s < 2; s++) {
        for (int d = 0; d < 2; d++) {
            ordered_float_lstm(gates + offsets[s] * KG, w + d * KG * KH, b[d], offsets[s + 1] - offsets[s], d, KH,
                               ref + offsets[s] * 2 * KH + d * KH, 2 * KH);
        }
    }
    CU_ASSERT_EQUAL(memcmp(out, ref, KR * 2 * KH * sizeof(float)), 0);
    free(ref);
    free(want);
    free(gates);
    free(w);
    free(out);
    free(scratch);
    ck_st_close(f);
}

/* One bad call on a 2-sequence toy (rows 0..4, H = 8); h (canary) must come back untouched. */
typedef struct {
    float gates[5 * G], w_hh[G * H], b_hh[G], h[5 * H], scratch[SCRATCH];
    size_t offsets[3];
} toy;

static void toy_init(toy *t)
{
    for (size_t i = 0; i < 5 * G; i++) {
        t->gates[i] = (float)((int)(i % 7) - 3) * 0.1f;
    }
    for (size_t i = 0; i < G * H; i++) {
        t->w_hh[i] = (float)((int)(i % 5) - 2) * 0.05f;
    }
    for (size_t i = 0; i < G; i++) {
        t->b_hh[i] = 0.01f * (float)i;
    }
    ck_test_fill_canary(t->h, 5 * H);
    t->offsets[0] = 0;
    t->offsets[1] = 2;
    t->offsets[2] = 5;
}

static int toy_run(toy *t, size_t gates_count, size_t gates_stride, size_t h_count, size_t h_stride,
                   size_t scratch_count, size_t seq_end, size_t hidden)
{
    return ck_lstm_recurrence_f32(t->gates, gates_count, gates_stride, t->w_hh, G * H, t->b_hh, G, t->h, h_count,
                                  h_stride, t->scratch, scratch_count, t->offsets, 2, 0, seq_end, hidden, 0);
}

static void expect_toy(toy *t, int code, int rc)
{
    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_TRUE(ck_test_canary_intact(t->h, 5 * H));
}

static void test_rejections(void)
{
    toy t;
    toy_init(&t);
    expect_toy(&t, CK_E_SIZE, toy_run(&t, 5 * G - 1, G, 5 * H, H, SCRATCH, 2, H));  /* gates short */
    expect_toy(&t, CK_E_SIZE, toy_run(&t, 5 * G, G - 1, 5 * H, H, SCRATCH, 2, H));  /* gates stride < 4H */
    expect_toy(&t, CK_E_SIZE, toy_run(&t, 5 * G, G, 5 * H - 1, H, SCRATCH, 2, H));  /* h short */
    expect_toy(&t, CK_E_SIZE, toy_run(&t, 5 * G, G, 5 * H, H - 1, SCRATCH, 2, H));  /* h stride < H */
    expect_toy(&t, CK_E_SIZE, toy_run(&t, 5 * G, G, 5 * H, H, SCRATCH - 1, 2, H));  /* scratch short */
    expect_toy(&t, CK_E_SIZE, toy_run(&t, 5 * G, G, 5 * H, H, SCRATCH, 2, 0));      /* H = 0 */
    expect_toy(&t, CK_E_RANGE, toy_run(&t, 5 * G, G, 5 * H, H, SCRATCH, 3, H));     /* seq_end > S */
    t.offsets[1] = 6;
    expect_toy(&t, CK_E_RANGE, toy_run(&t, 5 * G, G, 5 * H, H, SCRATCH, 2, H));     /* offsets decrease */
    t.offsets[1] = 2;
    t.gates[4 * G + 3] = NAN;
    expect_toy(&t, CK_E_NONFINITE, toy_run(&t, 5 * G, G, 5 * H, H, SCRATCH, 2, H)); /* NaN in a gate */
    toy_init(&t);
    t.w_hh[7] = INFINITY;
    expect_toy(&t, CK_E_NONFINITE, toy_run(&t, 5 * G, G, 5 * H, H, SCRATCH, 2, H)); /* Inf in W_hh */
    toy_init(&t);
    expect_toy(&t, CK_E_ARG, ck_lstm_recurrence_f32(t.gates, 5 * G, G, NULL, G * H, t.b_hh, G, t.h, 5 * H, H, t.scratch,
                                                    SCRATCH, t.offsets, 2, 0, 2, H, 0));
    expect_toy(&t, CK_E_ARG, ck_lstm_recurrence_f32(t.gates, 5 * G, G, t.w_hh, G * H, t.b_hh, G, t.h, 5 * H, H, t.h,
                                                    SCRATCH, t.offsets, 2, 0, 2, H, 0)); /* scratch is h */
    float big[G * H + SCRATCH];
    memcpy(big, t.w_hh, sizeof t.w_hh);
    expect_toy(&t, CK_E_ARG, ck_lstm_recurrence_f32(t.gates, 5 * G, G, big, G * H, t.b_hh, G, t.h, 5 * H, H, big + 8,
                                                    SCRATCH, t.offsets, 2, 0, 2, H, 0)); /* scratch over W_hh */
}

static void test_empty_range_is_a_no_op(void)
{
    toy t;
    toy_init(&t);
    expect_toy(&t, CK_OK, toy_run(&t, 5 * G, G, 5 * H, H, SCRATCH, 0, H));
    expect_toy(&t, CK_OK, ck_lstm_recurrence_f32(NULL, 0, G, NULL, 0, NULL, 0, t.h, 0, H, NULL, 0, t.offsets, 2, 1, 1,
                                                 H, 1));
}

CK_TEST_MAIN("lstm_recurrence", {"matches torch BiLSTM (packed, lengths 1 5 9)", test_matches_torch_bilstm},
             {"matches torch at Kokoro's H 256 (lengths 2, 30)", test_matches_torch_at_kokoro_size},
             {"matches the double reference", test_matches_double_reference},
             {"bits equal the ordered float loop", test_bits_equal_the_ordered_float_loop},
             {"a sequence alone is bit-identical", test_sequence_alone_is_bit_identical},
             {"any split of the sequences is bit-identical", test_split_is_bit_identical},
             {"the other half of a BiLSTM row is untouched", test_other_half_untouched},
             {"rejections leave h untouched", test_rejections}, {"empty range is a no-op", test_empty_range_is_a_no_op})
