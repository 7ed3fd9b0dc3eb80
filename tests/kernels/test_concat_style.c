/* test_concat_style.c - rows followed by their sequence's style: exact values per sequence (an
 * empty sequence skipped), a sub-range of sequences, rejections before any write. */
#include <math.h>

#include "ck_status.h"
#include "ck_test.h"
#include "concat_style.h"

static void test_exact_rows(void)
{
    const size_t offsets[4] = {0, 2, 2, 3};
    const float x[3 * 2] = {1, 2, 3, 4, 5, 6}, style[3 * 3] = {10, 11, 12, 20, 21, 22, 30, 31, 32};
    float y[3 * 6];
    ck_test_fill_canary(y, 18);
    CU_ASSERT_EQUAL_FATAL(ck_concat_style_f32(x, 6, 2, style, 9, 3, y, 18, 6, offsets, 3, 0, 3, 2),
                          CK_OK);
    const float want[3][5] = {{1, 2, 10, 11, 12}, {3, 4, 10, 11, 12}, {5, 6, 30, 31, 32}};
    for (size_t r = 0; r < 3; r++) {
        CU_ASSERT_EQUAL(memcmp(y + r * 6, want[r], sizeof want[r]), 0);
        CU_ASSERT(ck_test_canary_intact(y + r * 6 + 5, 1)); /* the pad column */
    }
    /* sequence 2 alone (range [2, 3)) writes row 2 only */
    ck_test_fill_canary(y, 18);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 6, 2, style, 9, 3, y, 18, 6, offsets, 3, 2, 3, 2), CK_OK);
    CU_ASSERT(ck_test_canary_intact(y, 12));
    CU_ASSERT_EQUAL(memcmp(y + 12, want[2], sizeof want[2]), 0);
}

static void test_rejections_leave_y_untouched(void)
{
    const size_t offsets[3] = {0, 1, 2}, bad[3] = {0, 2, 1};
    float x[2 * 2] = {1, 2, 3, 4}, style[2 * 2] = {5, 6, 7, 8}, y[2 * 4];
    ck_test_fill_canary(y, 8);
    CU_ASSERT_EQUAL(ck_concat_style_f32(NULL, 4, 2, style, 4, 2, y, 8, 4, offsets, 2, 0, 2, 2), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, NULL, 4, 2, y, 8, 4, offsets, 2, 0, 2, 2), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 2, x, 4, 4, offsets, 2, 0, 2, 2), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 2, y, 8, 4, bad, 2, 0, 2, 2), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 2, y, 8, 4, offsets, 2, 1, 3, 2), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 3, 2, y, 8, 4, offsets, 2, 0, 2, 2), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 2, y, 7, 4, offsets, 2, 0, 2, 2), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 2, y, 8, 3, offsets, 2, 0, 2, 2), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 0, y, 8, 4, offsets, 2, 0, 2, 2), CK_E_SIZE);
    style[3] = NAN;
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 2, y, 8, 4, offsets, 2, 0, 2, 2),
                    CK_E_NONFINITE);
    CU_ASSERT(ck_test_canary_intact(y, 8));
    CU_ASSERT_EQUAL(ck_concat_style_f32(x, 4, 2, style, 4, 2, y, 8, 4, offsets, 2, 0, 1, 2), CK_OK);
    CU_ASSERT(ck_test_canary_intact(y + 4, 4)); /* sequence 1 (the NaN style) untouched */
}

CK_TEST_MAIN("concat_style",
             {"exact rows", test_exact_rows},
             {"rejections leave y untouched", test_rejections_leave_y_untouched})
