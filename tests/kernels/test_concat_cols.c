/* test_concat_cols.c - [x | z] per row: exact copies, strides, a row range, rejections before any
 * write. */
#include "ck_status.h"
#include "ck_test.h"
#include "concat_cols.h"

static void test_exact_rows(void)
{
    /* x [3, 2] stride 3, z [3, 1] stride 1, y [3, 3] stride 4 */
    const float x[9] = {1, 2, -9, 3, 4, -9, 5, 6, -9}, z[3] = {7, 8, 9};
    float y[12];
    for (size_t i = 0; i < 12; i++) {
        y[i] = -1.0f;
    }
    CU_ASSERT_EQUAL_FATAL(ck_concat_cols_f32(x, 9, 3, 2, z, 3, 1, 1, y, 12, 4, 1, 3), CK_OK);
    const float want[12] = {-1, -1, -1, -1, 3, 4, 8, -1, 5, 6, 9, -1};
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(x, 9, 3, 2, z, 3, 1, 1, y, 12, 4, 0, 1), CK_OK);
    CU_ASSERT(y[0] == 1.0f && y[1] == 2.0f && y[2] == 7.0f && y[3] == -1.0f);
}

static void test_rejections_leave_y_untouched(void)
{
    float x[8] = {0}, z[8] = {0}, y[16];
    ck_test_fill_canary(y, 16);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(x, 8, 2, 2, z, 8, 2, 2, y, 16, 4, 2, 1), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(x, 8, 2, 0, z, 8, 2, 2, y, 16, 4, 0, 4), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(x, 8, 2, 2, z, 8, 2, 2, y, 16, 3, 0, 4), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(x, 7, 2, 2, z, 8, 2, 2, y, 16, 4, 0, 4), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(x, 8, 2, 2, z, 8, 2, 2, y, 15, 4, 0, 4), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(NULL, 8, 2, 2, z, 8, 2, 2, y, 16, 4, 0, 4), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(x, 8, 2, 2, z, 8, 2, 2, NULL, 16, 4, 0, 4), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_concat_cols_f32(y + 8, 8, 2, 2, z, 8, 2, 2, y, 16, 4, 0, 4), CK_E_ARG);
    CU_ASSERT(ck_test_canary_intact(y, 16));
    CU_ASSERT_EQUAL(ck_concat_cols_f32(NULL, 0, 2, 2, NULL, 0, 2, 2, NULL, 0, 4, 3, 3), CK_OK);
}

CK_TEST_MAIN("concat_cols",
             {"exact rows", test_exact_rows},
             {"rejections leave y untouched", test_rejections_leave_y_untouched})
