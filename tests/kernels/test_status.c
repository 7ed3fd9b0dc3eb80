/* test_status.c - the status list keeps its names and its order (codes only grow at the end). */
#include "ck_check.h"
#include "ck_status.h"
#include "ck_test.h"

static void test_names_follow_codes(void)
{
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_OK), "CK_OK");
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_SIZE), "CK_E_SIZE");
    CU_ASSERT_EQUAL(CK_E_SIZE, -2);
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_WEIGHTS), "CK_E_WEIGHTS");
    CU_ASSERT_STRING_EQUAL(ck_status_name(1), "CK_E_UNKNOWN");
    CU_ASSERT_STRING_EQUAL(ck_status_name(-1000), "CK_E_UNKNOWN");
}

static void test_span_rejects_narrow_stride_and_overflow(void)
{
    size_t span = 0;
    CU_ASSERT_EQUAL(ck_span(3, 128, 136, &span), CK_OK);
    CU_ASSERT_EQUAL(span, 2 * 136 + 128);
    CU_ASSERT_EQUAL(ck_span(3, 128, 127, &span), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_span(SIZE_MAX / 2, 4, SIZE_MAX / 4, &span), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_span(0, 4, 4, &span), CK_OK);
    CU_ASSERT_EQUAL(span, 0);
}

static void test_overlap(void)
{
    float a[8];
    CU_ASSERT_TRUE(ck_overlap(a, sizeof a, a + 4, 4 * sizeof(float)));
    CU_ASSERT_FALSE(ck_overlap(a, 4 * sizeof(float), a + 4, 4 * sizeof(float)));
    CU_ASSERT_FALSE(ck_overlap(a, 0, a, 8));
}

CK_TEST_MAIN("status", {"names follow codes", test_names_follow_codes},
             {"span rejects narrow stride and overflow", test_span_rejects_narrow_stride_and_overflow},
             {"overlap", test_overlap})
