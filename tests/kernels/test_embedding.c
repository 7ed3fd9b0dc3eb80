/* test_embedding.c - the plain embedding lookup: exact rows, stride (pads untouched), rejections
 * before any write. */
#include <math.h>

#include "ck_status.h"
#include "ck_test.h"
#include "embedding.h"

static void test_exact_rows(void)
{
    float table[5 * 3], y[4 * 4];
    for (size_t i = 0; i < 15; i++) {
        table[i] = (float)i * 0.5f - 1.0f;
    }
    const int32_t ids[4] = {4, 0, 2, 4};
    ck_test_fill_canary(y, 16);
    CU_ASSERT_EQUAL_FATAL(ck_embedding_f32(ids, 4, table, 5, 3, y, 16, 4), CK_OK);
    for (size_t t = 0; t < 4; t++) {
        CU_ASSERT_EQUAL(memcmp(y + t * 4, table + (size_t)ids[t] * 3, 3 * sizeof(float)), 0);
        CU_ASSERT(ck_test_canary_intact(y + t * 4 + 3, 1));
    }
}

static void test_rejections_leave_y_untouched(void)
{
    float table[5 * 3] = {0}, y[4 * 3];
    int32_t ids[4] = {1, 2, 3, 4};
    ck_test_fill_canary(y, 12);
    CU_ASSERT_EQUAL(ck_embedding_f32(NULL, 4, table, 5, 3, y, 12, 3), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, NULL, 5, 3, y, 12, 3), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 5, 3, NULL, 12, 3), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 5, 3, table, 15, 3), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 0, 3, y, 12, 3), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 5, 3, y, 11, 3), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 5, 3, y, 12, 2), CK_E_SIZE);
    ids[3] = 5;
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 5, 3, y, 12, 3), CK_E_RANGE);
    ids[3] = -1;
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 5, 3, y, 12, 3), CK_E_RANGE);
    ids[3] = 4;
    table[3 * 3 + 1] = NAN; /* row 3, picked by ids[2] */
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 4, table, 5, 3, y, 12, 3), CK_E_NONFINITE);
    CU_ASSERT(ck_test_canary_intact(y, 12));
    CU_ASSERT_EQUAL(ck_embedding_f32(ids, 2, table, 5, 3, y, 12, 3), CK_OK); /* rows 1, 2 only */
    CU_ASSERT_EQUAL(ck_embedding_f32(NULL, 0, table, 5, 3, NULL, 0, 3), CK_OK);
}

CK_TEST_MAIN("embedding",
             {"exact rows", test_exact_rows},
             {"rejections leave y untouched", test_rejections_leave_y_untouched})
