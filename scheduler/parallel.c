/* parallel.c - static OpenMP partitioning of work items over workers; no allocation. */
#include "parallel.h"

#include <omp.h>

#include "ck_status.h"

#define CK_MAX_WORKERS CK_PARALLEL_MAX_WORKERS

/* At most CK_MAX_WORKERS, at most one per item, at least one. */
static int clamp_workers(int workers, size_t items)
{
    if (workers > CK_MAX_WORKERS) {
        workers = CK_MAX_WORKERS;
    }
    if ((size_t)workers > items) {
        workers = items > 0 ? (int)items : 1;
    }
    return workers;
}

static int first_failure(const int *status, int workers)
{
    for (int w = 0; w < workers; w++) {
        if (status[w] != CK_OK) {
            return status[w];
        }
    }
    return CK_OK;
}

int ck_parallel_for(size_t items, int workers, ck_slice_fn fn, void *ctx)
{
    if (fn == NULL || workers < 1) {
        return CK_E_ARG;
    }
    workers = clamp_workers(workers, items);
    if (workers == 1) {
        return items > 0 ? fn(ctx, 0, items, 0) : CK_OK;
    }
    int status[CK_MAX_WORKERS] = {0};
#pragma omp parallel num_threads(workers)
    {
        int w = omp_get_thread_num();
        int n = omp_get_num_threads();
        /* Even split, the first (items % n) workers take one extra item. */
        size_t base = items / (size_t)n, extra = items % (size_t)n;
        size_t first = (size_t)w * base + ((size_t)w < extra ? (size_t)w : extra);
        size_t count = base + ((size_t)w < extra ? 1 : 0);
        status[w] = count > 0 ? fn(ctx, first, count, w) : CK_OK;
    }
    return first_failure(status, workers);
}

/* Runs fn on items first, first + stride, ... stopping at the first failure. */
static int run_strided(ck_slice_fn fn, void *ctx, size_t items, size_t first, size_t stride,
                       int worker)
{
    for (size_t i = first; i < items; i += stride) {
        int rc = fn(ctx, i, 1, worker);
        if (rc != CK_OK) {
            return rc;
        }
    }
    return CK_OK;
}

int ck_parallel_for_interleaved(size_t items, int workers, ck_slice_fn fn, void *ctx)
{
    if (fn == NULL || workers < 1) {
        return CK_E_ARG;
    }
    workers = clamp_workers(workers, items);
    if (workers == 1) {
        return run_strided(fn, ctx, items, 0, 1, 0);
    }
    int status[CK_MAX_WORKERS] = {0};
#pragma omp parallel num_threads(workers)
    {
        int w = omp_get_thread_num();
        status[w] = run_strided(fn, ctx, items, (size_t)w, (size_t)omp_get_num_threads(), w);
    }
    return first_failure(status, workers);
}

int ck_parallel_set_threads(int threads)
{
    int previous = omp_get_max_threads();
    if (threads >= 1) {
        omp_set_num_threads(threads);
    }
    return previous;
}
