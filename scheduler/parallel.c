/* parallel.c - static OpenMP partitioning of work items over workers; no allocation (but for the
 * CPU set ck_parallel_available_cpus reads). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ALLOC, CPU_COUNT_S (Linux) */
#include "parallel.h"

#include <errno.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

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

int ck_parallel_for_dynamic(size_t items, size_t chunk, int workers, ck_slice_fn fn, void *ctx)
{
    if (fn == NULL || workers < 1 || chunk == 0) {
        return CK_E_ARG;
    }
    size_t slices = (items + chunk - 1) / chunk;
    workers = clamp_workers(workers, slices);
    if (workers == 1) {
        for (size_t first = 0; first < items; first += chunk) {
            int rc = fn(ctx, first, items - first < chunk ? items - first : chunk, 0);
            if (rc != CK_OK) {
                return rc;
            }
        }
        return CK_OK;
    }
    int status[CK_MAX_WORKERS] = {0};
    size_t next = 0;
#pragma omp parallel num_threads(workers)
    {
        int w = omp_get_thread_num();
        for (;;) {
            size_t slice;
#pragma omp atomic capture
            slice = next++;
            if (slice >= slices || status[w] != CK_OK) {
                break;
            }
            size_t first = slice * chunk;
            status[w] = fn(ctx, first, items - first < chunk ? items - first : chunk, w);
        }
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

int ck_parallel_available_cpus(void)
{
    /* The mask may name more CPUs than a cpu_set_t holds (EINVAL): grow until it fits. */
    for (int n = 1024; n <= (1 << 20); n *= 4) {
        cpu_set_t *set = CPU_ALLOC((size_t)n);
        if (set == NULL) {
            break;
        }
        size_t size = CPU_ALLOC_SIZE((size_t)n);
        int rc = sched_getaffinity(0, size, set);
        int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
        int again = rc != 0 && errno == EINVAL;
        CPU_FREE(set);
        if (count > 0) {
            return count;
        }
        if (!again) {
            break;
        }
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}
