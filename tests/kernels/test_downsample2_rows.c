/* test_downsample2_rows.c - every second row: exact copies, a row range, the stride-2 conv identity
 * (a 'same' k3 conv's even rows are the stride-2 pad-1 conv), rejections before any write. */
#include "ck_status.h"
#include "ck_test.h"
#include "downsample2_rows.h"

static void test_exact_rows(void)
{
    const float x[12] = {0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51}; /* [6, 2] */
    float y[6] = {-1, -1, -1, -1, -1, -1};
    CU_ASSERT_EQUAL_FATAL(ck_downsample2_rows_f32(x, 12, 2, y, 6, 2, 1, 3, 2), CK_OK);
    const float want[6] = {-1, -1, 20, 21, 40, 41};
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
    /* the last output row reads row 2 row_end - 2 only: 2 row_end - 1 rows of x suffice */
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(x, 10, 2, y, 6, 2, 0, 3, 2), CK_OK);
    CU_ASSERT(y[0] == 0.0f && y[1] == 1.0f);
}

/* torch: conv1d(x, w, stride=2, padding=1)[m] = w0 x[2m-1] + w1 x[2m] + w2 x[2m+1] (+ b), the
 * 'same' stride-1 conv's row 2m, zero padding included. */
static void test_stride2_conv_identity(void)
{
    const float x[6] = {1, -2, 3, 0.5f, -1, 4}, w[3] = {0.25f, -1.5f, 2.0f};
    float same[6], y[3];
    for (int i = 0; i < 6; i++) {
        float l = i > 0 ? x[i - 1] : 0.0f, r = i < 5 ? x[i + 1] : 0.0f;
        same[i] = w[0] * l + w[1] * x[i] + w[2] * r;
    }
    CU_ASSERT_EQUAL_FATAL(ck_downsample2_rows_f32(same, 6, 1, y, 3, 1, 0, 3, 1), CK_OK);
    for (int m = 0; m < 3; m++) {
        float l = m > 0 ? x[2 * m - 1] : 0.0f;
        CU_ASSERT_EQUAL(y[m], w[0] * l + w[1] * x[2 * m] + w[2] * x[2 * m + 1]);
    }
}

static void test_rejections_leave_y_untouched(void)
{
    float x[8] = {0}, y[8];
    ck_test_fill_canary(y, 8);
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(x, 8, 1, y, 4, 1, 3, 2, 1), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(x, 8, 1, y, 4, 1, 0, 4, 0), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(x, 6, 1, y, 4, 1, 0, 4, 1), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(x, 8, 1, y, 3, 1, 0, 4, 1), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(NULL, 8, 1, y, 4, 1, 0, 4, 1), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(y + 1, 8, 1, y, 4, 1, 0, 4, 1), CK_E_ARG);
    CU_ASSERT(ck_test_canary_intact(y, 8));
    CU_ASSERT_EQUAL(ck_downsample2_rows_f32(NULL, 0, 1, NULL, 0, 1, 2, 2, 1), CK_OK);
}

CK_TEST_MAIN("downsample2_rows",
             {"exact rows", test_exact_rows},
             {"stride-2 conv identity", test_stride2_conv_identity},
             {"rejections leave y untouched", test_rejections_leave_y_untouched})
