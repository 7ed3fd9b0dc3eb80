/* test_residual_layer_norm.c - LN(x + residual) against a hand case and a double reference, plus every rejection. */
#include <stdint.h>

#include "ck_dtype.h"
#include "ck_isa.h"
#include "ck_status.h"
#include "ck_test.h"
#include "layer_norm_row.h"
#include "residual_layer_norm.h"

/* Legend: T rows, C channels; x, residual and y each get a different stride wider than C. */
enum { T = 37, C = 768, XS = 770, RS = 768, YS = 776 };

typedef struct {
    float x[T * XS], residual[T * RS], gamma[C], beta[C], y[T * YS];
    size_t x_count, residual_count, y_count, x_stride, y_stride, rows, channels;
    float eps;
} fixture;

/* Deterministic values in [-scale, scale) + offset from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *v, size_t n, uint64_t seed, double scale, double offset)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)(scale * (2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0) + offset);
    }
}

static fixture *fixture_new(void)
{
    fixture *f = calloc(1, sizeof *f);
    fill(f->x, T * XS, 11, 2.0, 0.3);
    fill(f->residual, T * RS, 12, 1.0, -0.1);
    fill(f->gamma, C, 13, 0.1, 1.0);
    fill(f->beta, C, 14, 0.05, 0.0);
    ck_test_fill_canary(f->y, T * YS);
    f->x_count = T * XS;
    f->residual_count = T * RS;
    f->y_count = T * YS;
    f->x_stride = XS;
    f->y_stride = YS;
    f->rows = T;
    f->channels = C;
    f->eps = 1e-12f;
    return f;
}

static int run(fixture *f)
{
    return ck_residual_layer_norm_f32_f64acc(f->x, f->x_count, f->x_stride, f->residual, f->residual_count, RS,
                                             f->gamma, f->beta, f->y, f->y_count, f->y_stride, f->rows,
                                             f->channels, f->eps);
}

/* ref_residual_layer_norm: the formula in double, two passes. want is [T,C]. */
static void ref_residual_layer_norm(const fixture *f, float *want)
{
    for (int t = 0; t < T; t++) {
        double s[C], mean = 0.0, var = 0.0;
        for (int c = 0; c < C; c++) {
            s[c] = (double)f->x[t * XS + c] + f->residual[t * RS + c];
            mean += s[c] / C;
        }
        for (int c = 0; c < C; c++) {
            var += (s[c] - mean) * (s[c] - mean) / C;
        }
        for (int c = 0; c < C; c++) {
            want[t * C + c] = (float)((s[c] - mean) / sqrt(var + 1e-12) * f->gamma[c] + f->beta[c]);
        }
    }
}

static void test_hand_case(void)
{
    /* s = x + r = [1 2 3 4]: mean 2.5, var 1.25, sqrt 1.11803399. */
    const float x[4] = {0.5f, 3, 1, 4}, r[4] = {0.5f, -1, 2, 0}, gamma[4] = {1, 1, 2, 1},
                beta[4] = {0, 0, 1, 0};
    float y[4];
    CU_ASSERT_EQUAL(ck_residual_layer_norm_f32_f64acc(x, 4, 4, r, 4, 4, gamma, beta, y, 4, 4, 1, 4, 1e-12f), CK_OK);
    const float want[4] = {-1.5f / 1.11803399f, -0.5f / 1.11803399f, 2.0f * 0.5f / 1.11803399f + 1.0f,
                           1.5f / 1.11803399f};
    CU_ASSERT_TRUE(ck_test_close("hand", y, want, 4, 1e-6));
}

/* Tolerance 2e-6: the kernel rounds s = x + r to float (|s| < 3.5, <= 1.2e-7), LN scales by rstd
 * (~1/1.3) and gamma (<= 1.1), plus one float rounding of |y| < 4 (2.4e-7): ~4e-7; margin 5. */
static void test_reference_with_wide_strides(void)
{
    fixture *f = fixture_new();
    static float want[T * C], got[T * C];
    CU_ASSERT_EQUAL(run(f), CK_OK);
    ref_residual_layer_norm(f, want);
    for (int t = 0; t < T; t++) {
        memcpy(got + t * C, f->y + t * YS, C * sizeof(float));
        CU_ASSERT_TRUE(ck_test_canary_intact(f->y + t * YS + C, YS - C));
    }
    CU_ASSERT_TRUE(ck_test_close("residual_layer_norm", got, want, T * C, 2e-6));
    free(f);
}

static void test_zero_rows_is_a_no_op(void)
{
    fixture *f = fixture_new();
    f->rows = 0;
    f->x_count = f->y_count = f->residual_count = 0;
    CU_ASSERT_EQUAL(run(f), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->y, T * YS));
    free(f);
}

/* Runs the fixture after one bad change; asserts the exact code and that y is untouched. */
static void expect_rejected(fixture *f, int code)
{
    CU_ASSERT_EQUAL(run(f), code);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->y, T * YS));
    free(f);
}

static void test_x_stride_below_channels(void)
{
    fixture *f = fixture_new();
    f->x_stride = C - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_y_stride_size_max(void)
{
    fixture *f = fixture_new();
    f->y_stride = SIZE_MAX;
    expect_rejected(f, CK_E_SIZE);
}

static void test_y_count_one_short(void)
{
    fixture *f = fixture_new();
    f->y_count = (T - 1) * YS + C - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_x_count_one_short(void)
{
    fixture *f = fixture_new();
    f->x_count = (T - 1) * XS + C - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_residual_count_one_short(void)
{
    fixture *f = fixture_new();
    f->residual_count = T * RS - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_zero_channels(void)
{
    fixture *f = fixture_new();
    f->channels = 0;
    expect_rejected(f, CK_E_SIZE);
}

static void test_eps_zero(void)
{
    fixture *f = fixture_new();
    f->eps = 0.0f;
    expect_rejected(f, CK_E_ARG);
}

static void test_eps_negative(void)
{
    fixture *f = fixture_new();
    f->eps = -1e-12f;
    expect_rejected(f, CK_E_ARG);
}

static void test_nan_in_x(void)
{
    fixture *f = fixture_new();
    f->x[(T - 1) * XS + C - 1] = NAN;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_inf_in_residual(void)
{
    fixture *f = fixture_new();
    f->residual[5 * RS + 100] = -INFINITY;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_nan_in_beta(void)
{
    fixture *f = fixture_new();
    f->beta[0] = NAN;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_sum_overflow(void)
{
    fixture *f = fixture_new();
    f->x[3 * XS + 7] = 3e38f;
    f->residual[3 * RS + 7] = 3e38f;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_nan_in_x_pad_is_not_read(void)
{
    fixture *f = fixture_new();
    f->x[XS - 1] = NAN; /* column 769 of row 0: outside [0, C) */
    CU_ASSERT_EQUAL(run(f), CK_OK);
    free(f);
}

static void test_null_residual(void)
{
    fixture *f = fixture_new();
    CU_ASSERT_EQUAL(ck_residual_layer_norm_f32_f64acc(f->x, f->x_count, XS, NULL, f->residual_count, RS, f->gamma,
                                                      f->beta, f->y, f->y_count, YS, T, C, 1e-12f), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->y, T * YS));
    free(f);
}

/* y aliasing an input: the input must come back bit-identical (nothing written). */
static void expect_alias_rejected(fixture *f, float *input, size_t stride)
{
    ck_test_fill_canary(input, T * stride);
    CU_ASSERT_EQUAL(ck_residual_layer_norm_f32_f64acc(f->x, T * XS, XS, f->residual, T * RS, RS, f->gamma, f->beta,
                                                      input, T * stride, stride, T, C, 1e-12f), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(input, T * stride));
    free(f);
}

static void test_y_is_x(void)
{
    fixture *f = fixture_new();
    expect_alias_rejected(f, f->x, XS);
}

static void test_y_is_residual(void)
{
    fixture *f = fixture_new();
    expect_alias_rejected(f, f->residual, RS);
}

/* The bf16 copy: each element is ck_bf16_from_f32 of the f32 y written beside it (y's bits as
 * without the copy), pad columns of the copy untouched; a short or overlapping copy is refused
 * before anything is written. */
static void test_bf16_copy(void)
{
    enum { S16 = C + 4 };
    fixture *f = fixture_new(), *g = fixture_new();
    static uint16_t y16[T * S16];
    memset(y16, 0xAB, sizeof y16);
    CU_ASSERT_EQUAL_FATAL(run(g), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_residual_layer_norm_f32_f32bf16_f64acc(f->x, f->x_count, f->x_stride, f->residual,
                                                                    f->residual_count, RS, f->gamma, f->beta, f->y,
                                                                    f->y_count, f->y_stride, y16, T * S16, S16, T, C,
                                                                    f->eps), CK_OK);
    CU_ASSERT_EQUAL(memcmp(f->y, g->y, sizeof f->y), 0);
    size_t bad = 0;
    for (size_t r = 0; r < T; r++) {
        for (size_t c = 0; c < S16; c++) {
            uint16_t want = c < C ? ck_bf16_from_f32(f->y[r * YS + c]) : 0xABAB;
            bad += y16[r * S16 + c] != want;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    fixture *h = fixture_new();
    memset(y16, 0xAB, sizeof y16);
    CU_ASSERT_EQUAL(ck_residual_layer_norm_f32_f32bf16_f64acc(h->x, h->x_count, h->x_stride, h->residual, h->residual_count,
                                                              RS, h->gamma, h->beta, h->y, h->y_count, h->y_stride, y16,
                                                              T * S16 - 5, S16, T, C, h->eps), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_residual_layer_norm_f32_f32bf16_f64acc(h->x, h->x_count, h->x_stride, h->residual, h->residual_count,
                                                              RS, h->gamma, h->beta, h->y, h->y_count, h->y_stride,
                                                              (uint16_t *)(void *)h->y, T * S16, S16, T, C, h->eps),
                    CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(h->y, T * YS));
    CU_ASSERT_EQUAL(y16[0], 0xABAB);
    free(f);
    free(g);
    free(h);
}

/* ---- float statistics (ck_residual_layer_norm_f32_f32bf16, the LayerNorm of bf16 programs) ---- */

static int run_f32acc(fixture *f, uint16_t *y16, size_t y16_count, size_t y16_stride)
{
    return ck_residual_layer_norm_f32_f32bf16(f->x, f->x_count, f->x_stride, f->residual, f->residual_count, RS,
                                              f->gamma, f->beta, f->y, f->y_count, f->y_stride, y16, y16_count,
                                              y16_stride, f->rows, f->channels, f->eps);
}

/* Against the double reference: float sums over 768 values in 16 lanes (48 terms each, then a
 * 16-way tree) and float normalisation put |y| < 4 within a few float ulps of it. Measured max
 * abs 7.2e-7; held to 4e-6 (the double kernel is held to 2e-6). Canary pads intact,
 * and the bf16 copy is ck_bf16_from_f32 of y, its pad untouched. */
static void test_f32acc_reference(void)
{
    enum { S16 = C + 4 };
    fixture *f = fixture_new();
    static float want[T * C], got[T * C];
    static uint16_t y16[T * S16];
    memset(y16, 0xAB, sizeof y16);
    CU_ASSERT_EQUAL_FATAL(run_f32acc(f, y16, T * S16, S16), CK_OK);
    ref_residual_layer_norm(f, want);
    size_t bad16 = 0;
    for (int t = 0; t < T; t++) {
        memcpy(got + t * C, f->y + t * YS, C * sizeof(float));
        CU_ASSERT_TRUE(ck_test_canary_intact(f->y + t * YS + C, YS - C));
        for (int c = 0; c < S16; c++) {
            bad16 += y16[t * S16 + c] != (c < C ? ck_bf16_from_f32(f->y[t * YS + c]) : 0xABAB);
        }
    }
    CU_ASSERT_TRUE(ck_test_close("residual_layer_norm_f32acc", got, want, T * C, 4e-6));
    CU_ASSERT_EQUAL(bad16, 0);
    /* not the double kernel's bits: the test would pass for a kernel that ignored f32acc otherwise */
    fixture *g = fixture_new();
    CU_ASSERT_EQUAL_FATAL(run(g), CK_OK);
    CU_ASSERT_NOT_EQUAL(memcmp(f->y, g->y, sizeof f->y), 0);
    free(f);
    free(g);
}

/* A constant row (s the same everywhere) gives exactly beta: the shift K = s[0] makes every
 * d = s - K zero, so mean_d, var and (s - K) - mean_d are exact zeros. Rows of 1e4 + noise of
 * 2e-2 (mean 5e5 times the spread) stay as close to the reference as ordinary rows, thanks to the
 * shift and the second pass: measured 8.3e-7, held to 4e-6. */
static void test_f32acc_constant_and_large_mean_rows(void)
{
    fixture *f = fixture_new();
    for (int t = 0; t < T; t++) {
        for (int c = 0; c < C; c++) {
            f->x[t * XS + c] = t == 0 ? 0.1f : 1e4f + f->x[t * XS + c] * 1e-2f;
            f->residual[t * RS + c] = t == 0 ? 0.2f : 0.0f;
        }
    }
    static float want[T * C], got[T * C];
    CU_ASSERT_EQUAL_FATAL(run_f32acc(f, NULL, 0, 0), CK_OK);
    CU_ASSERT_EQUAL(memcmp(f->y, f->beta, C * sizeof(float)), 0);
    ref_residual_layer_norm(f, want);
    for (int t = 0; t < T; t++) {
        memcpy(got + t * C, f->y + t * YS, C * sizeof(float));
    }
    CU_ASSERT_TRUE(ck_test_close("large mean", got + C, want + C, (T - 1) * C, 4e-6));
    free(f);
}

/* The AVX-512 and portable rows give the same bits (y and y16), for a length with a remainder
 * past the last 16-lane block too. */
static void test_f32acc_isa_paths_agree(void)
{
    if (ck_cpu_isa() != CK_ISA_AVX512) {
        fprintf(stderr, "    (no AVX-512 on this CPU: only the portable path runs)\n");
        return;
    }
    fixture *f = fixture_new();
    static float ya[C], yp[C];
    static uint16_t ha[C], hp[C];
    for (int t = 0; t < T; t++) {
        const float *x = f->x + t * XS, *r = f->residual + t * RS;
        CU_ASSERT_EQUAL(ck_ln32_row_avx512(ya, ha, x, r, f->gamma, f->beta, C, f->eps), 0);
        CU_ASSERT_EQUAL(ck_ln32_row_portable(yp, hp, x, r, f->gamma, f->beta, C, f->eps), 0);
        CU_ASSERT_EQUAL(memcmp(ya, yp, sizeof ya), 0);
        CU_ASSERT_EQUAL(memcmp(ha, hp, sizeof ha), 0);
    }
    for (int t = 0; t < T; t++) { /* 761: 47 blocks of 16 and 9 left over */
        const float *x = f->x + t * XS, *r = f->residual + t * RS;
        memset(ya, 0, sizeof ya);
        memset(yp, 0, sizeof yp);
        CU_ASSERT_EQUAL(ck_ln32_row_avx512(ya, ha, x, r, f->gamma, f->beta, 761, f->eps), 0);
        CU_ASSERT_EQUAL(ck_ln32_row_portable(yp, hp, x, r, f->gamma, f->beta, 761, f->eps), 0);
        CU_ASSERT_EQUAL(memcmp(ya, yp, sizeof ya), 0);
        CU_ASSERT_EQUAL(memcmp(ha, hp, 761 * sizeof *ha), 0);
    }
    free(f);
}

/* The errors: geometry and eps before any write (y untouched); NaN or Inf in x + residual, an
 * overflowing sum, or NaN in gamma/beta give CK_E_NONFINITE, and the rows after the bad row are
 * untouched (x + residual is checked row by row in the staging pass). */
static void test_f32acc_errors(void)
{
    fixture *f = fixture_new();
    f->y_count = T * YS - 1 - (YS - C);
    CU_ASSERT_EQUAL(run_f32acc(f, NULL, 0, 0), CK_E_SIZE);
    f->y_count = T * YS;
    f->eps = 0.0f;
    CU_ASSERT_EQUAL(run_f32acc(f, NULL, 0, 0), CK_E_ARG);
    f->eps = 1e-12f;
    f->beta[5] = NAN;
    CU_ASSERT_EQUAL(run_f32acc(f, NULL, 0, 0), CK_E_NONFINITE);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->y, T * YS));
    f->beta[5] = 0.0f;
    const struct {
        float x, r;
    } bad[] = {{NAN, 0.0f}, {0.0f, INFINITY}, {3e38f, 3e38f}};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        fixture *g = fixture_new();
        g->x[10 * XS + 700] = bad[b].x;
        g->residual[10 * RS + 700] = bad[b].r;
        CU_ASSERT_EQUAL(run_f32acc(g, NULL, 0, 0), CK_E_NONFINITE);
        CU_ASSERT_TRUE(ck_test_canary_intact(g->y + 11 * YS, (T - 11) * YS));
        free(g);
    }
    free(f);
}

CK_TEST_MAIN("residual_layer_norm", {"hand case", test_hand_case}, {"bf16 copy", test_bf16_copy},
             {"reference, wide strides, canary pads", test_reference_with_wide_strides},
             {"zero rows is a no-op", test_zero_rows_is_a_no_op},
             {"x stride < channels", test_x_stride_below_channels}, {"y stride SIZE_MAX", test_y_stride_size_max},
             {"y_count one short", test_y_count_one_short}, {"x_count one short", test_x_count_one_short},
             {"residual_count one short", test_residual_count_one_short}, {"channels 0", test_zero_channels},
             {"eps 0", test_eps_zero}, {"eps negative", test_eps_negative}, {"NaN in x", test_nan_in_x},
             {"Inf in residual", test_inf_in_residual}, {"NaN in beta", test_nan_in_beta},
             {"x + residual overflows", test_sum_overflow}, {"NaN in x pad is not read", test_nan_in_x_pad_is_not_read},
             {"null residual", test_null_residual}, {"y is x", test_y_is_x}, {"y is residual", test_y_is_residual},
             {"f32acc: reference and bf16 copy", test_f32acc_reference},
             {"f32acc: constant row is beta, large mean", test_f32acc_constant_and_large_mean_rows},
             {"f32acc: AVX-512 and portable agree", test_f32acc_isa_paths_agree},
             {"f32acc: errors", test_f32acc_errors})
