/* test_add_scaled.c - (x + residual) * scale: exact values (the sum rounded before the multiply,
 * torch's two float ops), in place on either input, rejections before any write. */
#include <math.h>

#include "add_scaled.h"
#include "ck_status.h"
#include "ck_test.h"

/* torch.rsqrt(torch.tensor(2.0)) in float32: 0x3f3504f3 */
static const float RSQRT2 = 0x1.6a09e6p-1f;

/* Each value exactly; the sum is rounded to float first: 1 + 2^-24 rounds to 1 before scaling. */
static void test_exact_values(void)
{
    const float x[6] = {1.0f, 1.0f, -3.0f, 0.0f, 3e38f, 0x1p-24f};
    const float r[6] = {1.0f, 0x1p-24f, 1.0f, -0.0f, 3e38f, 0x1p-24f};
    float y[6];
    CU_ASSERT_EQUAL(RSQRT2, (float)(1.0 / sqrt(2.0)));
    CU_ASSERT_EQUAL_FATAL(ck_add_scaled_f32(x, 6, r, 6, y, 6, 6, RSQRT2), CK_OK);
    CU_ASSERT_EQUAL(y[0], 2.0f * RSQRT2);
    CU_ASSERT_EQUAL(y[1], RSQRT2); /* (1 + 2^-24) rounds to 1 */
    CU_ASSERT_EQUAL(y[2], -2.0f * RSQRT2);
    CU_ASSERT(y[3] == 0.0f && !signbit(y[3])); /* 0 + -0 = +0 */
    CU_ASSERT(isinf(y[4])); /* the float sum overflows, as torch's does */
    CU_ASSERT_EQUAL(y[5], 0x1p-23f * RSQRT2);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 6, r, 6, y, 6, 3, 0.5f), CK_OK);
    CU_ASSERT_EQUAL(y[2], -1.0f);
}

/* A long run (vector body and tail) equals the scalar formula, in place on x and on residual. */
static void test_long_run_and_in_place(void)
{
    enum { N = 1037 };
    static float x[N], r[N], y[N], z[N];
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)((double)i - 500.0) / 7.0f;
        r[i] = (float)((double)(i * 7 % 13) - 6.0) / 3.0f;
    }
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, N, r, N, y, N, N, RSQRT2), CK_OK);
    for (size_t i = 0; i < N; i++) {
        float sum = x[i] + r[i];
        CU_ASSERT_EQUAL(y[i], sum * RSQRT2);
    }
    memcpy(z, x, sizeof z);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(z, N, r, N, z, N, N, RSQRT2), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, z, sizeof y), 0);
    memcpy(z, r, sizeof z);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, N, z, N, z, N, N, RSQRT2), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, z, sizeof y), 0);
}

static void test_rejections_leave_y_untouched(void)
{
    float x[4] = {1.0f, -1.0f, 2.0f, -2.0f}, r[4] = {0.5f, 0.5f, 0.5f, 0.5f}, y[8];
    ck_test_fill_canary(y, 8);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(NULL, 4, r, 4, y, 4, 4, 1.0f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, NULL, 4, y, 4, 4, 1.0f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, r, 4, NULL, 4, 4, 1.0f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, r, 4, y, 4, 4, NAN), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 3, r, 4, y, 4, 4, 1.0f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, r, 3, y, 4, 4, 1.0f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, r, 4, y, 3, 4, 1.0f), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_add_scaled_f32(y + 1, 4, r, 4, y, 4, 4, 1.0f), CK_E_ARG); /* overlap */
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, y + 1, 4, y, 4, 4, 1.0f), CK_E_ARG);
    r[1] = NAN;
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, r, 4, y, 4, 4, 1.0f), CK_E_NONFINITE);
    r[1] = 0.5f;
    x[3] = -INFINITY;
    CU_ASSERT_EQUAL(ck_add_scaled_f32(x, 4, r, 4, y, 4, 4, 1.0f), CK_E_NONFINITE);
    CU_ASSERT(ck_test_canary_intact(y, 8));
    CU_ASSERT_EQUAL(ck_add_scaled_f32(NULL, 0, NULL, 0, NULL, 0, 0, 1.0f), CK_OK);
}

CK_TEST_MAIN("add_scaled",
             {"exact values", test_exact_values},
             {"long run and in place", test_long_run_and_in_place},
             {"rejections leave y untouched", test_rejections_leave_y_untouched})
