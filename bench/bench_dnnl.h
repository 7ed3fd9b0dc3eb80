/* bench_dnnl.h - oneDNN's own speed, for the peaks ckbench holds ckbatch to (ckbench.c: matmul,
 * ckbench_speech.c: convolution). */
#ifndef CK_BENCH_DNNL_H
#define CK_BENCH_DNNL_H

#include <oneapi/dnnl/dnnl.h>

/* Runs the forward primitive of pd on the engine it was made for: its src, weights and dst in the
 * layouts pd chose, src and weights zero-filled (the timing does not depend on the values), once to
 * warm up and then `reps` times on one stream. Wall seconds per execution; -1 when the primitive,
 * its memory or a run fails. The caller keeps pd and the engine. */
double ck_bench_dnnl_seconds(dnnl_engine_t engine, const_dnnl_primitive_desc_t pd, int reps);

#endif
