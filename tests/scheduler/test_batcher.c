/* test_batcher.c - length-sorted packing: exact orders and spans, and every rejection. */
#include "batcher.h"
#include "ck_status.h"
#include "ck_test.h"

static void test_packs_longest_first_with_stable_ties(void)
{
    const size_t lengths[] = {3, 17, 64, 17, 255, 130};
    size_t order[6];
    ck_batch_span spans[6];
    size_t n_spans = 0;
    CU_ASSERT_EQUAL_FATAL(ck_batch_plan(lengths, 6, 300, order, spans, &n_spans), CK_OK);
    const size_t want_order[] = {4, 5, 2, 1, 3, 0};
    for (size_t i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(order[i], want_order[i]);
    }
    /* 255 | 130+64+17+17+3 = 231 */
    CU_ASSERT_EQUAL_FATAL(n_spans, 2);
    CU_ASSERT_EQUAL(spans[0].first, 0);
    CU_ASSERT_EQUAL(spans[0].count, 1);
    CU_ASSERT_EQUAL(spans[0].tokens, 255);
    CU_ASSERT_EQUAL(spans[1].first, 1);
    CU_ASSERT_EQUAL(spans[1].count, 5);
    CU_ASSERT_EQUAL(spans[1].tokens, 231);
}

static void test_exact_fit_and_one_over(void)
{
    const size_t lengths[] = {4, 4, 4};
    size_t order[3];
    ck_batch_span spans[3];
    size_t n_spans = 0;
    CU_ASSERT_EQUAL(ck_batch_plan(lengths, 3, 8, order, spans, &n_spans), CK_OK);
    CU_ASSERT_EQUAL(n_spans, 2);
    CU_ASSERT_EQUAL(spans[0].tokens, 8);
    CU_ASSERT_EQUAL(spans[1].tokens, 4);
}

static void test_empty_window(void)
{
    size_t order[1];
    ck_batch_span spans[1];
    size_t n_spans = 99;
    CU_ASSERT_EQUAL(ck_batch_plan((const size_t[]){1}, 0, 8, order, spans, &n_spans), CK_OK);
    CU_ASSERT_EQUAL(n_spans, 0);
}

static void test_rejections(void)
{
    size_t order[2];
    ck_batch_span spans[2];
    size_t n_spans = 0;
    CU_ASSERT_EQUAL(ck_batch_plan((const size_t[]){3, 0}, 2, 8, order, spans, &n_spans), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_batch_plan((const size_t[]){3, 9}, 2, 8, order, spans, &n_spans), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_batch_plan((const size_t[]){3, 4}, 2, 0, order, spans, &n_spans), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_batch_plan(NULL, 2, 8, order, spans, &n_spans), CK_E_ARG);
}

CK_TEST_MAIN("batcher", {"packs longest first with stable ties", test_packs_longest_first_with_stable_ties},
             {"exact fit and one over", test_exact_fit_and_one_over},
             {"empty window", test_empty_window}, {"rejections", test_rejections})
