/* test_gelu_new.c - gelu_new against the double formula over a dense sweep, in-place equality, rejections. */
#include <float.h>

#include "ck_status.h"
#include "ck_test.h"
#include "gelu_new.h"

enum { SWEEP = 400001 }; /* [-20, 20] in steps of 1e-4 */

/* ref_gelu_new: the formula as HF writes it, in double. */
static double ref_gelu_new(double x)
{
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

static void sweep(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(-20.0 + 40.0 * (double)i / (double)(n - 1));
    }
}

static void test_hand_values(void)
{
    const float x[4] = {0.0f, 1.0f, -1.0f, 2.5f};
    const float want[4] = {0.0f, 0.8411919906f, -0.1588080094f, 2.4849157339f};
    float y[4];
    CU_ASSERT_EQUAL(ck_gelu_new_f32(x, 4, y, 4, 4), CK_OK);
    CU_ASSERT_TRUE(ck_test_close("hand", y, want, 4, 2.5e-7));
}

/* Bound: the brief allows the tanh term an error of 2e-7, which moves y = 0.5 x (1 + tanh) by
 * 1e-7 |x|; the float result adds half an ulp of |y| <= |x| (6e-8 |x|): 1.6e-7 max(1, |x|).
 * Measured worst: 1.18e-7 |x| at x = 4.053 (one ulp of y); implied tanh error 1.96e-7. */
static void test_dense_sweep_against_double(void)
{
    float *x = malloc(SWEEP * sizeof(float)), *y = malloc(SWEEP * sizeof(float));
    sweep(x, SWEEP);
    CU_ASSERT_EQUAL(ck_gelu_new_f32(x, SWEEP, y, SWEEP, SWEEP), CK_OK);
    size_t bad = 0;
    for (size_t i = 0; i < SWEEP; i++) {
        double d = fabs((double)y[i] - ref_gelu_new(x[i]));
        if (!(d <= 1.6e-7 * fmax(1.0, fabs((double)x[i])))) {
            if (bad++ == 0) {
                fprintf(stderr, "    x = %.9g: got %.9g want %.9g\n", (double)x[i], (double)y[i],
                        ref_gelu_new(x[i]));
            }
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(y);
}

static void test_in_place_is_bit_identical(void)
{
    enum { N = 1003 }; /* odd, so the vector loop's tail runs too */
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i - 500) * 0.013f;
    }
    CU_ASSERT_EQUAL(ck_gelu_new_f32(x, N, y, N, N), CK_OK);
    CU_ASSERT_EQUAL(ck_gelu_new_f32(x, N, x, N, N), CK_OK);
    CU_ASSERT_EQUAL(memcmp(x, y, sizeof x), 0);
}

static void test_huge_inputs_stay_finite(void)
{
    const float x[4] = {1e20f, -1e20f, FLT_MAX, -FLT_MAX};
    float y[4];
    CU_ASSERT_EQUAL(ck_gelu_new_f32(x, 4, y, 4, 4), CK_OK);
    CU_ASSERT_EQUAL(y[0], 1e20f);
    CU_ASSERT_EQUAL(y[2], FLT_MAX);
    /* The true values round to -0; the kernel returns gelu_new at its -10 clamp, -1.65e-37. */
    CU_ASSERT_TRUE(y[1] <= 0.0f && y[1] > -2e-37f);
    CU_ASSERT_TRUE(y[3] <= 0.0f && y[3] > -2e-37f);
}

static void test_zero_n_is_a_no_op(void)
{
    float y[2];
    ck_test_fill_canary(y, 2);
    CU_ASSERT_EQUAL(ck_gelu_new_f32(NULL, 0, y, 0, 0), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(y, 2));
}

/* One bad call; y (canary-filled, 8 floats) must come back untouched. */
static void expect_rejected(const float *x, size_t x_count, size_t y_count, size_t n, int code)
{
    float y[8];
    ck_test_fill_canary(y, 8);
    CU_ASSERT_EQUAL(ck_gelu_new_f32(x, x_count, y, y_count, n), code);
    CU_ASSERT_TRUE(ck_test_canary_intact(y, 8));
}

static const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};

static void test_x_count_short(void)
{
    expect_rejected(ones, 7, 8, 8, CK_E_SIZE);
}

static void test_y_count_short(void)
{
    expect_rejected(ones, 8, 7, 8, CK_E_SIZE);
}

static void test_null_x(void)
{
    expect_rejected(NULL, 8, 8, 8, CK_E_ARG);
}

static void test_nan_in_x(void)
{
    float x[8] = {1, 2, 3, 4, 5, 6, 7, NAN};
    expect_rejected(x, 8, 8, 8, CK_E_NONFINITE);
}

static void test_inf_in_x(void)
{
    float x[8] = {-INFINITY, 2, 3, 4, 5, 6, 7, 8};
    expect_rejected(x, 8, 8, 8, CK_E_NONFINITE);
}

static void test_partial_overlap(void)
{
    float buf[12];
    ck_test_fill_canary(buf, 12);
    CU_ASSERT_EQUAL(ck_gelu_new_f32(buf, 8, buf + 4, 8, 8), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(buf, 12));
}

CK_TEST_MAIN("gelu_new", {"hand values", test_hand_values},
             {"dense sweep vs double formula", test_dense_sweep_against_double},
             {"in place is bit-identical", test_in_place_is_bit_identical},
             {"huge inputs stay finite", test_huge_inputs_stay_finite}, {"n 0 is a no-op", test_zero_n_is_a_no_op},
             {"x_count short", test_x_count_short}, {"y_count short", test_y_count_short},
             {"null x", test_null_x}, {"NaN in x", test_nan_in_x}, {"Inf in x", test_inf_in_x},
             {"partial overlap", test_partial_overlap})
