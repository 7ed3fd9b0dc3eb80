/* test_leaky_relu.c - the leaky ReLU: exact values (one multiply, torch's bits), in place, the
 * default-free slope argument, rejections before any write. */
#include <math.h>

#include "ck_status.h"
#include "ck_test.h"
#include "leaky_relu.h"

/* Each value exactly: x for x >= 0 (and -0 kept), slope * x rounded once below. */
static void test_exact_values(void)
{
    const float x[8] = {0.0f, -0.0f, 1.5f, -2.0f, 3e38f, -3e38f, -1e-40f, -0.75f};
    float y[8];
    CU_ASSERT_EQUAL_FATAL(ck_leaky_relu_f32(x, 8, y, 8, 8, 0.2f), CK_OK);
    CU_ASSERT_EQUAL(y[0], 0.0f);
    CU_ASSERT(!signbit(y[0]));
    CU_ASSERT(y[1] == 0.0f && signbit(y[1]));
    CU_ASSERT_EQUAL(y[2], 1.5f);
    CU_ASSERT_EQUAL(y[3], 0.2f * -2.0f);
    CU_ASSERT_EQUAL(y[3], -0.4f);
    CU_ASSERT_EQUAL(y[4], 3e38f);
    CU_ASSERT_EQUAL(y[5], 0.2f * -3e38f);
    CU_ASSERT_EQUAL(y[6], 0.2f * -1e-40f); /* subnormal in, subnormal out */
    CU_ASSERT_EQUAL(y[7], -0.15f);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 8, y, 8, 8, 0.01f), CK_OK);
    CU_ASSERT_EQUAL(y[3], -0.02f);
    CU_ASSERT_EQUAL(y[7], 0.01f * -0.75f);
}

/* A long run (the vector body and its tail) equals the scalar formula bit for bit, in place too. */
static void test_long_run_and_in_place(void)
{
    enum { N = 1037 };
    float x[N], y[N], z[N];
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)((double)i - 500.0) / 7.0f;
    }
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, N, y, N, N, 0.1f), CK_OK);
    for (size_t i = 0; i < N; i++) {
        float want = x[i] >= 0.0f ? x[i] : 0.1f * x[i];
        CU_ASSERT_EQUAL(y[i], want);
        z[i] = x[i];
    }
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(z, N, z, N, N, 0.1f), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, z, sizeof y), 0);
}

static void test_rejections_leave_y_untouched(void)
{
    float x[4] = {1.0f, -1.0f, 2.0f, -2.0f}, y[8];
    ck_test_fill_canary(y, 8);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(NULL, 4, y, 4, 4, 0.1f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 4, NULL, 4, 4, 0.1f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 4, y, 4, 4, NAN), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 4, y, 4, 4, INFINITY), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 3, y, 4, 4, 0.1f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 4, y, 3, 4, 0.1f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(y + 1, 4, y, 4, 4, 0.1f), CK_E_ARG); /* partial overlap */
    x[2] = NAN;
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 4, y, 4, 4, 0.1f), CK_E_NONFINITE);
    x[2] = INFINITY;
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(x, 4, y, 4, 4, 0.1f), CK_E_NONFINITE);
    CU_ASSERT(ck_test_canary_intact(y, 8));
    CU_ASSERT_EQUAL(ck_leaky_relu_f32(NULL, 0, NULL, 0, 0, 0.1f), CK_OK);
}

CK_TEST_MAIN("leaky_relu",
             {"exact values", test_exact_values},
             {"long run and in place", test_long_run_and_in_place},
             {"rejections leave y untouched", test_rejections_leave_y_untouched})
