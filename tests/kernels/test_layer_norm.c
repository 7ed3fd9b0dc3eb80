/* test_layer_norm.c - the channel LayerNorm: exact values against a double reference, in place,
 * strides (pad columns untouched), rejections before any write. */
#include <math.h>

#include "ck_status.h"
#include "ck_test.h"
#include "layer_norm.h"

/* The kernel's formula written out in double, rounded once. */
static float reference(const float *x, size_t c, size_t n, const float *g, const float *b, float eps)
{
    double sum = 0.0, sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
    }
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) {
        sq += ((double)x[i] - mean) * ((double)x[i] - mean);
    }
    double rstd = 1.0 / sqrt(sq / (double)n + (double)eps);
    return (float)(((double)x[c] - mean) * rstd * (double)g[c] + (double)b[c]);
}

/* x = {1, 2, 3, 4}: mean 2.5, var 1.25; gamma 1, beta 0 gives (x - 2.5) / sqrt(1.25 + eps). */
static void test_exact_values(void)
{
    const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f}, one[4] = {1, 1, 1, 1}, zero[4] = {0};
    float y[4];
    CU_ASSERT_EQUAL_FATAL(ck_layer_norm_f32_f64acc(x, 4, 4, one, zero, y, 4, 4, 1, 4, 1e-5f), CK_OK);
    for (size_t c = 0; c < 4; c++) {
        double want = ((double)x[c] - 2.5) / sqrt(1.25 + (double)1e-5f);
        CU_ASSERT_EQUAL(y[c], (float)want);
    }
    CU_ASSERT(y[0] < 0.0f && y[3] > 0.0f && y[0] == -y[3]);
}

/* Three rows of 37 channels with stride 40: each equals the reference, pads keep their canary,
 * in place gives the same bits, and a row's bits do not depend on the rows beside it. */
static void test_rows_strides_in_place(void)
{
    enum { R = 3, C = 37, S = 40 };
    float x[R * S], y[R * S], g[C], b[C], alone[S];
    for (size_t i = 0; i < R * S; i++) {
        x[i] = (float)(((i * 2654435761u) % 1000u) / 100.0 - 5.0);
    }
    for (size_t c = 0; c < C; c++) {
        g[c] = 0.5f + (float)c / 37.0f;
        b[c] = (float)c / 10.0f - 1.0f;
    }
    ck_test_fill_canary(y, R * S);
    CU_ASSERT_EQUAL_FATAL(ck_layer_norm_f32_f64acc(x, R * S, S, g, b, y, R * S, S, R, C, 1e-5f), CK_OK);
    for (size_t r = 0; r < R; r++) {
        for (size_t c = 0; c < C; c++) {
            CU_ASSERT_EQUAL(y[r * S + c], reference(x + r * S, c, C, g, b, 1e-5f));
        }
        CU_ASSERT(ck_test_canary_intact(y + r * S + C, S - C));
    }
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x + S, S, S, g, b, alone, S, S, 1, C, 1e-5f), CK_OK);
    CU_ASSERT_EQUAL(memcmp(alone, y + S, C * sizeof(float)), 0);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, R * S, S, g, b, x, R * S, S, R, C, 1e-5f), CK_OK);
    for (size_t r = 0; r < R; r++) {
        CU_ASSERT_EQUAL(memcmp(x + r * S, y + r * S, C * sizeof(float)), 0);
    }
}

static void test_rejections_leave_y_untouched(void)
{
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, g[4] = {1, 1, 1, 1}, b[4] = {0}, y[8];
    ck_test_fill_canary(y, 8);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(NULL, 8, 4, g, b, y, 8, 4, 2, 4, 1e-5f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, NULL, b, y, 8, 4, 2, 4, 1e-5f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, g, NULL, y, 8, 4, 2, 4, 1e-5f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, g, b, y, 8, 4, 2, 4, 0.0f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, g, b, y, 8, 4, 2, 4, NAN), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, g, b, y, 8, 4, 2, 0, 1e-5f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 7, 4, g, b, y, 8, 4, 2, 4, 1e-5f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, g, b, y, 7, 4, 2, 4, 1e-5f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 3, g, b, y, 8, 4, 2, 4, 1e-5f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(y + 1, 7, 3, g, b, y, 8, 4, 1, 3, 1e-5f), CK_E_ARG);
    x[5] = NAN;
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, g, b, y, 8, 4, 2, 4, 1e-5f), CK_E_NONFINITE);
    x[5] = 6.0f;
    g[2] = INFINITY;
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(x, 8, 4, g, b, y, 8, 4, 2, 4, 1e-5f), CK_E_NONFINITE);
    CU_ASSERT(ck_test_canary_intact(y, 8));
    g[2] = 1.0f;
    CU_ASSERT_EQUAL(ck_layer_norm_f32_f64acc(NULL, 0, 4, g, b, NULL, 0, 4, 0, 4, 1e-5f), CK_OK);
}

CK_TEST_MAIN("layer_norm",
             {"exact values", test_exact_values},
             {"rows, strides and in place", test_rows_strides_in_place},
             {"rejections leave y untouched", test_rejections_leave_y_untouched})
