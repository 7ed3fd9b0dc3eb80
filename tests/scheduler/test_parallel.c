/* test_parallel.c - static, interleaved and dynamic partitioning cover every item exactly once and
 * report the first failing worker's code, and arenas are aligned and released. */
#include <stdint.h>

#include "arena.h"
#include "ck_status.h"
#include "ck_test.h"
#include "parallel.h"
#include "steps.h"

typedef struct {
    int hits[1000];
    int fail_at;  /* item whose slice fails with CK_E_RANGE, -1 for none */
} count_ctx;

static int mark_slice(void *ctx, size_t first, size_t count, int worker)
{
    count_ctx *c = ctx;
    (void)worker;
    for (size_t i = first; i < first + count; i++) {
        c->hits[i]++;
        if ((int)i == c->fail_at) {
            return CK_E_RANGE;
        }
    }
    return CK_OK;
}

static void check_cover(size_t items, int workers)
{
    static count_ctx c;
    memset(&c, 0, sizeof c);
    c.fail_at = -1;
    CU_ASSERT_EQUAL(ck_parallel_for(items, workers, mark_slice, &c), CK_OK);
    for (size_t i = 0; i < items; i++) {
        CU_ASSERT_EQUAL(c.hits[i], 1);
    }
    CU_ASSERT_EQUAL(c.hits[items], 0);
}

static void test_every_item_once(void)
{
    check_cover(0, 2);
    check_cover(1, 4);
    check_cover(7, 2);
    check_cover(999, 3);
    check_cover(5, 1);
}

typedef struct {
    int worker_of[100];
} owner_ctx;

static int record_owner(void *ctx, size_t first, size_t count, int worker)
{
    owner_ctx *c = ctx;
    for (size_t i = first; i < first + count; i++) {
        c->worker_of[i] = worker + 1;
    }
    return count == 1 ? CK_OK : CK_E_SIZE;
}

static void test_interleaved_round_robin(void)
{
    static owner_ctx c;
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(ck_parallel_for_interleaved(99, 2, record_owner, &c), CK_OK);
    for (size_t i = 0; i < 99; i++) {
        CU_ASSERT_EQUAL(c.worker_of[i], (int)(i % 2) + 1);
    }
    CU_ASSERT_EQUAL(c.worker_of[99], 0);
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(ck_parallel_for_interleaved(5, 1, record_owner, &c), CK_OK);
    CU_ASSERT_EQUAL(c.worker_of[4], 1);
    static count_ctx f;
    memset(&f, 0, sizeof f);
    f.fail_at = 7;
    CU_ASSERT_EQUAL(ck_parallel_for_interleaved(20, 2, mark_slice, &f), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_parallel_for_interleaved(20, 0, mark_slice, &f), CK_E_ARG);
}

static void test_failure_code_returned(void)
{
    static count_ctx c;
    memset(&c, 0, sizeof c);
    c.fail_at = 600;
    CU_ASSERT_EQUAL(ck_parallel_for(999, 2, mark_slice, &c), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_parallel_for(10, 0, mark_slice, &c), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_parallel_for(10, 2, NULL, &c), CK_E_ARG);
}

typedef struct {
    size_t len_at[1001]; /* count of the slice starting at each item, 0 elsewhere */
    int hits[1000];
} slice_ctx;

static int record_slice(void *ctx, size_t first, size_t count, int worker)
{
    slice_ctx *c = ctx;
    (void)worker;
    c->len_at[first] = count;
    for (size_t i = first; i < first + count; i++) {
        c->hits[i]++;
    }
    return CK_OK;
}

/* Dynamic slices: every item once, in slices of `chunk` starting at multiples of it (the last
 * shorter), whatever the worker count; failures and bad arguments as the static split. */
static void test_dynamic_slices(void)
{
    static const size_t items[] = {0, 1, 7, 16, 17, 999};
    static const size_t chunks[] = {1, 3, 16};
    static const int workers[] = {1, 2, 3, 5};
    static slice_ctx c;
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
            for (size_t w = 0; w < sizeof workers / sizeof workers[0]; w++) {
                memset(&c, 0, sizeof c);
                size_t n = items[i], chunk = chunks[k];
                CU_ASSERT_EQUAL(ck_parallel_for_dynamic(n, chunk, workers[w], record_slice, &c),
                                CK_OK);
                for (size_t t = 0; t < n; t++) {
                    CU_ASSERT_EQUAL(c.hits[t], 1);
                    size_t want = t % chunk != 0 ? 0 : n - t < chunk ? n - t : chunk;
                    CU_ASSERT_EQUAL(c.len_at[t], want);
                }
                CU_ASSERT_EQUAL(c.hits[n], 0);
            }
        }
    }
    static count_ctx f;
    memset(&f, 0, sizeof f);
    f.fail_at = 600;
    CU_ASSERT_EQUAL(ck_parallel_for_dynamic(999, 16, 2, mark_slice, &f), CK_E_RANGE);
    CU_ASSERT_EQUAL(f.hits[600], 1);
    CU_ASSERT_EQUAL(f.hits[601], 0); /* the slice stopped at its failing item */
    memset(&f, 0, sizeof f);
    f.fail_at = 600;
    CU_ASSERT_EQUAL(ck_parallel_for_dynamic(999, 16, 1, mark_slice, &f), CK_E_RANGE);
    CU_ASSERT_EQUAL(f.hits[599], 1);
    CU_ASSERT_EQUAL(f.hits[700], 0); /* one worker: no slice after the failing one */
    CU_ASSERT_EQUAL(ck_parallel_for_dynamic(10, 0, 2, mark_slice, &f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_parallel_for_dynamic(10, 4, 0, mark_slice, &f), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_parallel_for_dynamic(10, 4, 2, NULL, &f), CK_E_ARG);
}

static void test_arenas_aligned(void)
{
    ck_arenas a;
    CU_ASSERT_EQUAL_FATAL(ck_arenas_init(&a, 1000, 65, 3), CK_OK);
    CU_ASSERT_EQUAL((uintptr_t)a.activations.base % 64, 0);
    CU_ASSERT_EQUAL(a.activations.bytes, 1024);
    for (int w = 0; w < 3; w++) {
        CU_ASSERT_EQUAL((uintptr_t)a.scratch[w].base % 64, 0);
        CU_ASSERT_EQUAL(a.scratch[w].bytes, 128);
    }
    ck_arenas_free(&a);
    ck_arenas_free(&a);
    /* 2 MiB and up: on a 2 MiB boundary (huge pages, ck_memory.h), bytes still rounded to 64 only */
    CU_ASSERT_EQUAL_FATAL(ck_arenas_init(&a, (3u << 20) + 1, 64, 1), CK_OK);
    CU_ASSERT_EQUAL((uintptr_t)a.activations.base % (2u << 20), 0);
    CU_ASSERT_EQUAL(a.activations.bytes, (3u << 20) + 64);
    ck_arenas_free(&a);
    CU_ASSERT_EQUAL(ck_arenas_init(&a, 64, 64, 0), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_arenas_init(&a, SIZE_MAX, 64, 1), CK_E_SIZE);
}

/* Row-local runs: a whole 256-row tile (16 blocks of 16 rows) per slice at 1 thread or on many
 * rows, else one slice per worker, so a few hundred rows (the speech token side) are shared. */
static void test_row_run_slices(void)
{
    CU_ASSERT_EQUAL(ck_step_rows_slice(200, 1), 16);  /* 13 blocks, one worker: one tile */
    CU_ASSERT_EQUAL(ck_step_rows_slice(200, 2), 7);   /* 13 blocks: slices 7, 6 */
    CU_ASSERT_EQUAL(ck_step_rows_slice(256, 2), 8);   /* was one 16-block slice: one worker */
    CU_ASSERT_EQUAL(ck_step_rows_slice(4096, 2), 16); /* 256 blocks: whole tiles, 16 slices */
    CU_ASSERT_EQUAL(ck_step_rows_slice(512, 2), 16);  /* 32 blocks: one tile each */
    CU_ASSERT_EQUAL(ck_step_rows_slice(500, 2), 16);  /* 32 blocks, the last part padding */
    CU_ASSERT_EQUAL(ck_step_rows_slice(600, 3), 13);  /* 38 blocks: ceil(38 / 3) */
    CU_ASSERT_EQUAL(ck_step_rows_slice(16, 8), 1);    /* fewer blocks than workers: 1 */
    CU_ASSERT_EQUAL(ck_step_rows_slice(0, 2), 16);
    CU_ASSERT_EQUAL(ck_step_rows_slice(17, 0), 16);   /* threads < 1: as one */
}

CK_TEST_MAIN("parallel", {"every item once", test_every_item_once},
             {"failure code returned", test_failure_code_returned},
             {"interleaved round robin", test_interleaved_round_robin},
             {"dynamic slices", test_dynamic_slices},
             {"arenas aligned", test_arenas_aligned},
             {"row-local run slices", test_row_run_slices})
