/* bench_dnnl.c - see bench_dnnl.h. */
#include "bench_dnnl.h"

#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double ck_bench_dnnl_seconds(dnnl_engine_t engine, const_dnnl_primitive_desc_t pd, int reps)
{
    static const dnnl_query_t queries[3] = {dnnl_query_src_md, dnnl_query_weights_md,
                                            dnnl_query_dst_md};
    static const int arg_ids[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    dnnl_stream_t stream = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t mem[3] = {NULL, NULL, NULL};
    dnnl_exec_arg_t args[3];
    double seconds = -1.0;
    int ok = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) == dnnl_success &&
             dnnl_primitive_create(&prim, pd) == dnnl_success;
    for (int i = 0; ok && i < 3; i++) {
        const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, queries[i], 0);
        void *p = NULL;
        ok = md != NULL &&
             dnnl_memory_create(&mem[i], md, engine, DNNL_MEMORY_ALLOCATE) == dnnl_success &&
             dnnl_memory_get_data_handle(mem[i], &p) == dnnl_success;
        if (ok && i < 2) {
            memset(p, 0, dnnl_memory_desc_get_size(md));
        }
        args[i] = (dnnl_exec_arg_t){arg_ids[i], mem[i]};
    }
    if (ok && dnnl_primitive_execute(prim, stream, 3, args) == dnnl_success &&
        dnnl_stream_wait(stream) == dnnl_success) {
        double t0 = now();
        for (int r = 0; ok && r < reps; r++) {
            ok = dnnl_primitive_execute(prim, stream, 3, args) == dnnl_success;
        }
        ok = ok && dnnl_stream_wait(stream) == dnnl_success;
        seconds = ok && reps > 0 ? (now() - t0) / reps : -1.0;
    }
    for (int i = 0; i < 3; i++) {
        if (mem[i] != NULL) {
            dnnl_memory_destroy(mem[i]);
        }
    }
    if (prim != NULL) {
        dnnl_primitive_destroy(prim);
    }
    if (stream != NULL) {
        dnnl_stream_destroy(stream);
    }
    return seconds;
}
