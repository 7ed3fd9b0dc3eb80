/* parallel.h - the only place ckbatch opens OpenMP parallel regions: splits work items (token rows
 * or (sequence, head) pairs) over N workers, each computing whole items with the same kernel a
 * single thread would run. Knows nothing of circuits or files. */
#ifndef CK_PARALLEL_H
#define CK_PARALLEL_H

#include <stddef.h>

/* Most workers a parallel call uses: more are clamped to this (worker indices stay below it). */
#define CK_PARALLEL_MAX_WORKERS 256

/* A slice of work: items [first, first + count) for worker `worker` (0-based, < workers).
 * Returns 0 or a negative CK_E_* code; `ctx` is the caller's. */
typedef int (*ck_slice_fn)(void *ctx, size_t first, size_t count, int worker);

/* Runs fn over items [0, items) split into `workers` contiguous slices (static schedule, so which
 * worker computes which item depends only on items and workers). workers <= 1 runs fn once on the
 * calling thread. Returns 0, or the failing code of the lowest-numbered failing worker.
 * Errors: CK_E_ARG (fn null, workers < 1). */
int ck_parallel_for(size_t items, int workers, ck_slice_fn fn, void *ctx);

/* Runs fn on every item of [0, items) one at a time (count 1), item i on worker i % workers:
 * round robin, so neighbouring items of similar cost (the heads of one sequence) spread over all
 * workers even when the items are sorted by cost. Deterministic assignment, as ck_parallel_for.
 * Returns 0, or the first failing code of the lowest-numbered failing worker. Errors: CK_E_ARG. */
int ck_parallel_for_interleaved(size_t items, int workers, ck_slice_fn fn, void *ctx);

/* Runs fn over items [0, items) in slices of `chunk` items (the last may be shorter), each slice
 * taken by whichever worker is free next: for work whose results do not depend on the worker that
 * computes them (each row of a row-local run), so a worker the machine slows down takes fewer
 * slices instead of holding the others at the end. Which worker takes which slice varies from
 * run to run. workers <= 1 runs the slices in order on the calling thread. Returns 0, or the
 * first failing code of the lowest-numbered failing worker (a failing worker takes no more
 * slices). Errors: CK_E_ARG (fn null, workers < 1, chunk 0). */
int ck_parallel_for_dynamic(size_t items, size_t chunk, int workers, ck_slice_fn fn, void *ctx);

/* Sets the number of threads OpenMP (and oneDNN's OpenMP runtime) may use from this thread on;
 * threads < 1 changes nothing (so 0 reads the count). Call outside any parallel region. Returns
 * the previous value. */
int ck_parallel_set_threads(int threads);

/* CPUs this process may run on: the count of its affinity mask (sched_getaffinity), so a
 * `taskset -c 0`, a container's cpuset or a Slurm/MPI binding gives the workers it can really use;
 * the online CPUs when the mask cannot be read. At least 1. */
int ck_parallel_available_cpus(void);

#endif
