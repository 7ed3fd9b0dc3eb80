/* test_batcher.c - length-sorted packing: exact orders and spans, every rejection, and the copy of a
 * batch's ids. */
#include <string.h>

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

/* The planned batch's ids back to back in member order, with their bounds. */
static void test_pack_copies_members_in_order(void)
{
    const int32_t a[] = {0, 5, 0}, b[] = {0, 0}, c[] = {0, 7, 8, 0};
    const int32_t *const seqs[] = {a, b, c};
    const size_t lengths[] = {3, 2, 4}, members[] = {2, 0};
    int32_t ids[7] = {0};
    size_t offsets[3] = {9, 9, 9};
    CU_ASSERT_EQUAL(ck_batch_pack(seqs, lengths, members, 2, ids, offsets), 7);
    const int32_t want[] = {0, 7, 8, 0, 0, 5, 0};
    CU_ASSERT_EQUAL(memcmp(ids, want, sizeof want), 0);
    CU_ASSERT_EQUAL(offsets[0], 0);
    CU_ASSERT_EQUAL(offsets[1], 4);
    CU_ASSERT_EQUAL(offsets[2], 7);
}

/* In input order: as many sequences as fit, bounds relative to the first one's start. */
static void test_consecutive_takes_what_fits(void)
{
    const size_t offsets[] = {0, 3, 5, 9, 11};
    size_t batch[5];
    CU_ASSERT_EQUAL(ck_batch_consecutive(offsets, 4, 0, 5, batch), 2);
    CU_ASSERT_EQUAL(batch[1], 3);
    CU_ASSERT_EQUAL(batch[2], 5);
    CU_ASSERT_EQUAL(ck_batch_consecutive(offsets, 4, 2, 6, batch), 2);
    CU_ASSERT_EQUAL(batch[1], 4);
    CU_ASSERT_EQUAL(batch[2], 6);
    CU_ASSERT_EQUAL(ck_batch_consecutive(offsets, 4, 2, 3, batch), 0); /* 4 tokens > 3 */
    CU_ASSERT_EQUAL(ck_batch_consecutive(offsets, 4, 4, 8, batch), 0);
}

CK_TEST_MAIN("batcher", {"packs longest first with stable ties", test_packs_longest_first_with_stable_ties},
             {"exact fit and one over", test_exact_fit_and_one_over},
             {"empty window", test_empty_window}, {"rejections", test_rejections},
             {"pack copies members in order", test_pack_copies_members_in_order},
             {"consecutive takes what fits", test_consecutive_takes_what_fits})
