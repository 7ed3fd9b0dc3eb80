/* linear.h - y = x W^T + b through oneDNN matmul (the one kernel holding state), plus its plain reference loop. No threads of its own, no I/O. */
#ifndef CK_LINEAR_H
#define CK_LINEAR_H

#include <stddef.h>
#include <stdint.h>

#include "ck_dtype.h"

/* Legend: T rows (tokens of the packed batch), K in_features, N out_features.
 * Shapes used by Kokoro: 128->768, 768->768 (q, k, v, dense), 768->2048, 2048->768, 768->512. */

/* Rows of the largest matmul tile. A forward call covers its rows with tiles of 256, 128, 64, 32
 * and 16 rows (largest first) and what is left one row at a time, each tile a primitive of fixed
 * shape made at init. oneDNN 2.6 picks its brgemm kernel for these (brg:avx512_core here), whose K
 * order does not depend on M: a row's result is the same bits whichever tile computes it, so
 * features do not depend on batch composition or on how rows are split over callers
 * (tests/kernels/test_linear.c proves it for every Kokoro shape). */
#define CK_LINEAR_TILE_ROWS 256

/* Rows of the smallest multi-row tile. A dense row count that is a multiple of it runs in full
 * tiles only; callers that own their buffers round their counts up to it (the executor computes up
 * to 15 padding rows rather than leave 1-15 rows to single-row tiles, each of which streams the
 * whole weight matrix). */
#define CK_LINEAR_ROW_BLOCK 16

/* Most lanes one context may have (as many as the scheduler has workers at most). */
#define CK_ONEDNN_MAX_LANES 256

/* A oneDNN CPU engine (index 0) and `lanes` lanes: lane i is an in-order stream plus a scratchpad,
 * for one caller at a time. Callers running linears at the same time use different lanes. */
typedef struct ck_onednn ck_onednn;

/* Creates the engine and `lanes` lanes into *out (NULL on failure).
 * Errors: CK_E_ARG (out null, lanes < 1 or > CK_ONEDNN_MAX_LANES), CK_E_MEMORY, CK_E_BACKEND (any
 * dnnl status other than success). */
int ck_onednn_init(ck_onednn **out, int lanes);

/* Releases the stream and engine; accepts NULL. Free every ck_linear made on it first. */
void ck_onednn_free(ck_onednn *ctx);

/* One linear layer: the tile primitives (one per tile size) and the weights reordered once into the
 * layout they share, with bias copied. oneDNN plans each primitive's work split for
 * omp_get_max_threads() threads when the linear is made; inside a parallel region it runs on the
 * calling thread alone. A linear meant for lanes (callers inside a parallel region) is best made
 * while that is 1, so the plan is the one that runs (the executor does so). */
typedef struct ck_linear ck_linear;

/* What oneDNN applies to y after the bias. */
typedef enum {
    CK_LINEAR_PLAIN = 0,     /* y = x W^T + b */
    CK_LINEAR_GELU_TANH = 1  /* y = gelu_new(x W^T + b): oneDNN eltwise_gelu_tanh as a post-op,
                                0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), the formula of
                                gelu_new.h computed by oneDNN's own code (differs from
                                ck_gelu_new_f32 by a few ulp; bit-stable across rows and threads) */
} ck_linear_activation;

/* One linear layer, y = act(x W^T + b); a zeroed field takes the first choice listed. */
typedef struct {
    const float *weight;      /* [N,K] row-major (PyTorch Linear layout), weight_count >= N*K */
    size_t weight_count;
    const float *bias;        /* [N], or NULL (no bias; bias_count is then ignored) */
    size_t bias_count;
    size_t in_features;       /* K */
    size_t out_features;      /* N */
    ck_linear_activation activation; /* CK_LINEAR_PLAIN, or an activation fused into the matmul
                                        (the FFN: one pass over [T,F] instead of two) */
    ck_dtype compute;         /* CK_DTYPE_F32: f32 x and W, f32 accumulation (fpmath mode strict).
                                 bf16: W rounded to bf16 once here (round to nearest
                                 even) into oneDNN's blocked layout for the bf16 matmul (AMX or
                                 AVX512-BF16 where the CPU has them; oneDNN emulates it otherwise:
                                 ck_linear_impl says which), each tile of x rounded to bf16 by
                                 ck_bf16_from_f32_rows into a per-lane staging buffer, products
                                 accumulated in f32, bias added and the activation applied in f32.
                                 A bf16 row's bits also depend only on that row of x when the
                                 linear is made and run with one OpenMP thread per lane, as the
                                 executor does (tests/kernels/test_linear.c).
                                 CK_DTYPE_I8: W quantized here once per output channel (symmetric
                                 s8, ck_quantize_weight_f32_i8), each tile of x quantized per row
                                 (asymmetric u8 with the row's zero point, ck_quantize_rows_f32_u8) into
                                 a per-lane staging buffer, oneDNN's u8 x s8 matmul with s32
                                 accumulation (VNNI or AMX-INT8 where the CPU has them:
                                 ck_linear_impl says which), then y = scales x (acc - zero point
                                 compensation) + bias in f32 and the activation (ck_gelu_new_f32)
                                 after (linear_int8.h). Integer products are exact, so a row's
                                 bits depend only on that row of x, whichever tile or thread
                                 count. K <= CK_INT8_MAX_K; dst f32 only */
    ck_dtype dst;             /* y's dtype: CK_DTYPE_F32, or bf16 with compute bf16: bias
                                 and activation in f32 as there, then each y rounded to bf16 by
                                 oneDNN (round to nearest even; AVX512-BF16's conversion treats a
                                 denormal result as zero), for a consumer that is itself a bf16
                                 linear (ck_linear_forward_bf16) */
} ck_linear_desc;

/* Prepares the linear d describes. Weights and bias are copied (reordered) into oneDNN-owned
 * memory: the caller's buffers are not referenced after this returns.
 * Errors (*out NULL on error): CK_E_ARG (out, ctx, d or weight null; an unknown activation or
 * compute dtype; dst bf16 without compute bf16), CK_E_SIZE (K or N == 0, N*K overflow or beyond
 * int64, weight_count < N*K, bias_count < N, K > CK_INT8_MAX_K for int8), CK_E_NONFINITE (NaN/Inf in weight or bias),
 * CK_E_MEMORY, CK_E_BACKEND (also: the tile primitives want different weight layouts). */
int ck_linear_init(ck_linear **out, ck_onednn *ctx, const ck_linear_desc *d);

/* ck_linear_forward_f32 for a bf16 linear (ck_linear_desc compute bf16) whose input
 * is already bf16: x [T,K] bf16 with row stride x_stride (elements) in x_count elements, y as there.
 * Gives the same bits as ck_linear_forward_f32 on the f32 rows these bf16 rows round from (the same
 * tiles; dense rows are read in place instead of staged). Errors as ck_linear_forward_f32, and
 * CK_E_ARG for an f32 linear. */
int ck_linear_forward_bf16_f32(ck_linear *lin, int lane, const uint16_t *x, size_t x_count, size_t x_stride,
                               float *y, size_t y_count, size_t y_stride, size_t rows);

/* ck_linear_forward_bf16_f32 for a linear made with ck_linear_desc dst bf16: y [T,N]
 * bf16, row stride y_stride (elements) in y_count elements. The same tiles, so a row's bits do not
 * depend on the rows beside it. ck_linear_forward_f32 and ck_linear_forward_bf16_f32 refuse such a
 * linear (CK_E_ARG), and this refuses any other. */
int ck_linear_forward_bf16(ck_linear *lin, int lane, const uint16_t *x, size_t x_count, size_t x_stride,
                           uint16_t *y, size_t y_count, size_t y_stride, size_t rows);

/* oneDNN's version as "2.6.3" (dnnl_version), static. */
const char *ck_onednn_version(void);

/* The compute dtype lin was made with (CK_DTYPE_OTHER for NULL). */
ck_dtype ck_linear_compute_dtype(const ck_linear *lin);

/* oneDNN's implementation string for lin's largest tile ("brg:avx512_core_amx_bf16",
 * "brg:avx512_core", ...), owned by lin; "unknown" when oneDNN does not say or lin is NULL. */
const char *ck_linear_impl(const ck_linear *lin);

/* y[t, n] = sum_k x[t, k] W[n, k] + b[n] for t < rows (torch.nn.functional.linear), on `lane`.
 * x [T,K] row stride x_stride >= K; y [T,N] row stride y_stride >= N (oneDNN writes only columns
 * [0, N): pad columns stay untouched). Dense rows (strides K and N) go in tiles of up to
 * CK_LINEAR_TILE_ROWS rows, the last rows % CK_LINEAR_ROW_BLOCK one at a time; strided rows one at
 * a time (same bits, slower). FP32 in and out; accumulation
 * order and blocking are oneDNN's (f32 brgemm, FMA): not bit-comparable with ck_linear_ref_f32, but
 * a row's bits depend only on that row of x. rows == 0 is a no-op returning CK_OK.
 * Errors, before the first write (y untouched): CK_E_ARG (lin, x or y null when rows > 0, lane
 * outside [0, lanes), x and y overlapping), CK_E_SIZE (stride below width, span overflow or beyond
 * int64, count below span); CK_E_BACKEND (oneDNN failed while executing: y unspecified).
 * Values are NOT checked here: scanning x costs a serial pass over [T,K] per call (7% of a
 * one-thread run), and in the executor every x is the output of a kernel that checked finiteness.
 * A non-finite x[t] gives non-finite y[t] (and only that row); a finite x can overflow to Inf in y.
 * Callers with untrusted x check it with ck_all_finite (ck_check.h) first. */
int ck_linear_forward_f32(ck_linear *lin, int lane, const float *x, size_t x_count,
                          size_t x_stride, float *y, size_t y_count, size_t y_stride, size_t rows);

/* The bf16 start-up self-check: a fixed 64x768x768 linear (splitmix64-uniform inputs and weights,
 * no bias) in bf16 on ctx against the f32 reference loop (ck_linear_ref_f32); *cosine gets the
 * cosine of the two results (over all 64 x 768 values) and *impl oneDNN's implementation string.
 * Errors: CK_E_BACKEND (oneDNN), CK_E_MEMORY. A finite result with cosine < 0.9999 is not an error
 * here: the executor refuses to run bf16 on it. */
int ck_linear_bf16_self_check(ck_onednn *ctx, double *cosine, const char **impl);

/* The same fixed linear in int8 (ck_linear_desc compute CK_DTYPE_I8) against the f32 reference:
 * the int8 start-up self-check (the executor refuses int8 below cosine 0.999). Errors as there. */
int ck_linear_int8_self_check(ck_onednn *ctx, double *cosine, const char **impl);

/* Releases the primitives and the weight copies; accepts NULL and half-built objects. */
void ck_linear_free(ck_linear *lin);

/* The algorithmic reference (llm.c matmul_forward_naive): the same y = x W^T + b with plain loops,
 * sum over k in order accumulated in double, plus bias, rounded to float once. Same buffers and
 * errors as ck_linear_init + ck_linear_forward_f32 (without CK_E_MEMORY and CK_E_BACKEND); weights
 * are checked finite on every call. Slow (no blocking): for tests and awkward shapes. */
int ck_linear_ref_f32(const float *x, size_t x_count, size_t x_stride, const float *weight,
                      size_t weight_count, const float *bias, size_t bias_count, float *y, size_t y_count,
                      size_t y_stride, size_t rows, size_t in_features, size_t out_features);

#endif
