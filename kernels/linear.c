/* linear.c - oneDNN matmul wrapper (row tiles of fixed sizes, weights reordered once, one stream and
 * scratchpad per lane) and the plain reference loop. No threads of its own, no I/O. */
#include "linear.h"

#include <immintrin.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_check.h"
#include "ck_isa.h"
#include "ck_memory.h"
#include "gelu_new.h"
#include "linear_int8.h"

/* Rows of tile j: CK_LINEAR_TILE_ROWS down to CK_LINEAR_ROW_BLOCK by halves, then single rows (for
 * strided rows and for the remainder of a count that is not a multiple of CK_LINEAR_ROW_BLOCK).
 * No tiles of 2..8 rows: each such tile streams the whole weight matrix for a few rows, and every
 * primitive holds about 60 KiB of oneDNN state; callers pad their counts instead (linear.h). */
static const int64_t TILE_ROWS[] = {CK_LINEAR_TILE_ROWS, 128, 64, 32, CK_LINEAR_ROW_BLOCK, 1};
#define TILE_KINDS ((int)(sizeof TILE_ROWS / sizeof TILE_ROWS[0]))
_Static_assert(CK_LINEAR_TILE_ROWS == 256 && CK_LINEAR_ROW_BLOCK == 16,
               "TILE_ROWS lists the halvings from CK_LINEAR_TILE_ROWS to CK_LINEAR_ROW_BLOCK");

/* bf16 runs only the tiles of 256 and 128 rows: oneDNN 2.6's AMX bf16 brgemm blocks K differently
 * below 128 rows for K = 2048 (the FFN output), so a 64-row tile gives other bits than a 128-row
 * one (tests/kernels/test_linear.c, "bf16 rows do not depend on the tile"). Fewer rows are staged
 * into a zero-padded 128-row tile whose extra output rows are dropped. */
#define BF16_TAIL_ROWS 128
#define BF16_TAIL_TILE 1 /* TILE_ROWS[1] */

struct ck_onednn {
    dnnl_engine_t engine;
    int lanes;
    dnnl_stream_t *streams;       /* [lanes] */
    dnnl_memory_t *scratchpads;   /* [lanes] user scratchpads of scratchpad_bytes, or NULL while 0 */
    size_t scratchpad_bytes;      /* the largest any primitive made on this context asked for */
    uint16_t **staging;           /* [lanes] bf16 copies of one tile of x, or NULL while 0 */
    size_t staging_elems;         /* the largest tile (rows x K) any bf16 linear on it needs */
    float **staging_y;            /* [lanes] one BF16_TAIL_ROWS tile of y for padded tails */
    size_t staging_y_elems;
    uint8_t **staging_u8;         /* [lanes] int8 linears: one tile of x quantized to u8 */
    size_t staging_u8_elems;
    int32_t **staging_s32;        /* [lanes] int8 linears: one tile's s32 accumulators */
    size_t staging_s32_elems;
    float *row_scale;             /* [lanes * CK_LINEAR_TILE_ROWS] one tile's activation scales */
    int32_t *row_zero;            /* [lanes * CK_LINEAR_TILE_ROWS] and zero points */
};

struct ck_linear {
    ck_onednn *ctx;
    size_t in, out;                       /* K, N */
    ck_linear_activation activation;
    ck_dtype compute;                     /* F32: f32 x and W; BF16: bf16 x and W, f32 accumulation;
                                             I8: u8 x (per row) and s8 W (per channel), s32 */
    ck_dtype dst;                         /* y's dtype: F32, or BF16 (bf16 compute only) */
    dnnl_primitive_t prim[TILE_KINDS];    /* matmul of exactly TILE_ROWS[j] dense rows */
    dnnl_memory_t weights;                /* [K,N] in the layout every tile primitive asked for */
    dnnl_memory_t bias;                   /* [1,N] copy, or NULL */
    void *weights_buf, *bias_buf;         /* their ck_large_alloc blocks (ck_memory.h) */
    float *w_scale;                       /* I8: [N] per-channel weight scales */
    int32_t *colsum;                      /* I8: [N] sum_k of the quantized weights */
    float *bias_f32;                      /* I8: [N] the bias for the epilogue, or NULL */
};

/* Any oneDNN failure is CK_E_BACKEND; the dnnl status itself is not kept (kernels know no messages). */
#define DNNL_TRY(call)                       \
    do {                                     \
        if ((call) != dnnl_success) {        \
            rc = CK_E_BACKEND;               \
            goto done;                       \
        }                                    \
    } while (0)

int ck_onednn_init(ck_onednn **out, int lanes)
{
    int rc = 0;
    if (out == NULL) {
        return CK_E_ARG;
    }
    *out = NULL;
    if (lanes < 1 || lanes > CK_ONEDNN_MAX_LANES) {
        return CK_E_ARG;
    }
    ck_onednn *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        return CK_E_MEMORY;
    }
    ctx->lanes = lanes;
    ctx->streams = calloc((size_t)lanes, sizeof *ctx->streams);
    ctx->scratchpads = calloc((size_t)lanes, sizeof *ctx->scratchpads);
    ctx->staging = calloc((size_t)lanes, sizeof *ctx->staging);
    ctx->staging_y = calloc((size_t)lanes, sizeof *ctx->staging_y);
    ctx->staging_u8 = calloc((size_t)lanes, sizeof *ctx->staging_u8);
    ctx->staging_s32 = calloc((size_t)lanes, sizeof *ctx->staging_s32);
    ctx->row_scale = calloc((size_t)lanes * CK_LINEAR_TILE_ROWS, sizeof *ctx->row_scale);
    ctx->row_zero = calloc((size_t)lanes * CK_LINEAR_TILE_ROWS, sizeof *ctx->row_zero);
    if (ctx->streams == NULL || ctx->scratchpads == NULL || ctx->staging == NULL ||
        ctx->staging_y == NULL || ctx->staging_u8 == NULL || ctx->staging_s32 == NULL ||
        ctx->row_scale == NULL || ctx->row_zero == NULL) {
        rc = CK_E_MEMORY;
        goto done;
    }
    DNNL_TRY(dnnl_engine_create(&ctx->engine, dnnl_cpu, 0));
    for (int l = 0; l < lanes; l++) {
        DNNL_TRY(dnnl_stream_create(&ctx->streams[l], ctx->engine, dnnl_stream_default_flags));
    }
    *out = ctx;
    ctx = NULL;
done:
    ck_onednn_free(ctx);
    return rc;
}

static void free_scratchpads(ck_onednn *ctx)
{
    for (int l = 0; l < ctx->lanes; l++) {
        if (ctx->scratchpads[l] != NULL) {
            dnnl_memory_destroy(ctx->scratchpads[l]);
            ctx->scratchpads[l] = NULL;
        }
    }
}

void ck_onednn_free(ck_onednn *ctx)
{
    if (ctx == NULL) {
        return;
    }
    for (int l = 0; ctx->streams != NULL && l < ctx->lanes; l++) {
        if (ctx->streams[l] != NULL) {
            dnnl_stream_destroy(ctx->streams[l]);
        }
    }
    if (ctx->scratchpads != NULL) {
        free_scratchpads(ctx);
    }
    for (int l = 0; ctx->staging != NULL && l < ctx->lanes; l++) {
        ck_large_free(ctx->staging[l]);
    }
    for (int l = 0; ctx->staging_y != NULL && l < ctx->lanes; l++) {
        ck_large_free(ctx->staging_y[l]);
    }
    for (int l = 0; ctx->staging_u8 != NULL && l < ctx->lanes; l++) {
        ck_large_free(ctx->staging_u8[l]);
    }
    for (int l = 0; ctx->staging_s32 != NULL && l < ctx->lanes; l++) {
        ck_large_free(ctx->staging_s32[l]);
    }
    free(ctx->staging);
    free(ctx->staging_y);
    free(ctx->staging_u8);
    free(ctx->staging_s32);
    free(ctx->row_scale);
    free(ctx->row_zero);
    if (ctx->engine != NULL) {
        dnnl_engine_destroy(ctx->engine);
    }
    free(ctx->streams);
    free(ctx->scratchpads);
    free(ctx);
}

/* Grows every lane's scratchpad to `bytes` (at init only: a batch never allocates). */
static int reserve_scratchpad(ck_onednn *ctx, size_t bytes)
{
    int rc = 0;
    if (bytes <= ctx->scratchpad_bytes) {
        return 0;
    }
    free_scratchpads(ctx);
    const dnnl_dims_t dims = {(int64_t)bytes};
    dnnl_memory_desc_t md;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_u8, dnnl_a));
    for (int l = 0; l < ctx->lanes; l++) {
        DNNL_TRY(dnnl_memory_create(&ctx->scratchpads[l], &md, ctx->engine, DNNL_MEMORY_ALLOCATE));
    }
    ctx->scratchpad_bytes = bytes;
done:
    if (rc != 0) {
        free_scratchpads(ctx);
        ctx->scratchpad_bytes = 0;
    }
    return rc;
}

/* Grows every lane's buffer bufs[l] of `size`-byte elements to `elems` (at init only). */
static int reserve_lane_buffers(ck_onednn *ctx, void **bufs, size_t *have, size_t elems, size_t size)
{
    if (elems <= *have) {
        return 0;
    }
    size_t bytes = (elems * size + 63) / 64 * 64;
    for (int l = 0; l < ctx->lanes; l++) {
        void *b = ck_large_alloc(bytes);
        if (b == NULL) {
            return CK_E_MEMORY;
        }
        ck_large_free(bufs[l]);
        bufs[l] = b;
    }
    *have = elems;
    return 0;
}

/* 1 when v fits a oneDNN dimension (int64). */
static int fits_dim(size_t v)
{
    return (uint64_t)v <= (uint64_t)INT64_MAX;
}

/* Geometry and values of W [N,K] and b [N] (b may be NULL). */
static int check_weights(const float *weight, size_t weight_count, const float *bias, size_t bias_count,
                         size_t in, size_t out)
{
    size_t span;
    if (weight == NULL) {
        return CK_E_ARG;
    }
    if (in == 0 || out == 0 || ck_span(out, in, in, &span) != 0 || span > weight_count || !fits_dim(span) ||
        (bias != NULL && bias_count < out)) {
        return CK_E_SIZE;
    }
    if (!ck_all_finite(weight, out, in, in) || (bias != NULL && !ck_all_finite(bias, 1, out, out))) {
        return CK_E_NONFINITE;
    }
    return 0;
}

/* Geometry and overlap of x [T,K] and y [T,N]; the caller has handled T == 0. */
/* x and y of x_size- and y_size-byte elements (4: f32, 2: bf16): within their counts, not
 * overlapping. */
static int check_io_sized(const void *x, size_t x_size, size_t x_count, size_t x_stride, const void *y,
                          size_t y_size, size_t y_count, size_t y_stride, size_t rows, size_t in, size_t out)
{
    size_t xs, ys;
    if (x == NULL || y == NULL) {
        return CK_E_ARG;
    }
    if (ck_span(rows, in, x_stride, &xs) != 0 || xs > x_count || ck_span(rows, out, y_stride, &ys) != 0 ||
        ys > y_count || !fits_dim(xs) || !fits_dim(ys) || xs > SIZE_MAX / sizeof(float) ||
        ys > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (ck_overlap(x, xs * x_size, y, ys * y_size)) {
        return CK_E_ARG;
    }
    return 0;
}

static int check_io(const float *x, size_t x_count, size_t x_stride, const float *y, size_t y_count,
                    size_t y_stride, size_t rows, size_t in, size_t out)
{
    return check_io_sized(x, sizeof *x, x_count, x_stride, y, sizeof *y, y_count, y_stride, rows, in, out);
}

/* oneDNN's type for a ck_dtype (f32, bf16, u8, s8, s32). */
static dnnl_data_type_t dnnl_type(ck_dtype dtype)
{
    switch (dtype) {
    case CK_DTYPE_BF16:
        return dnnl_bf16;
    case CK_DTYPE_U8:
        return dnnl_u8;
    case CK_DTYPE_I8:
        return dnnl_s8;
    case CK_DTYPE_I32:
        return dnnl_s32;
    default:
        return dnnl_f32;
    }
}

/* A [rows, cols] descriptor of `dtype` with row stride `stride`. */
static dnnl_status_t typed_md(dnnl_memory_desc_t *md, int64_t rows, int64_t cols, int64_t stride,
                              ck_dtype dtype)
{
    const dnnl_dims_t dims = {rows, cols}, strides = {stride, 1};
    return dnnl_memory_desc_init_by_strides(md, 2, dims, dnnl_type(dtype), strides);
}

/* The matmul operands' dtypes of a linear computing in `compute` and writing `dst`: an int8 one
 * reads u8 x and writes s32 accumulators (its epilogue makes y). */
static ck_dtype src_dtype(ck_dtype compute)
{
    return compute == CK_DTYPE_I8 ? CK_DTYPE_U8 : compute;
}

static ck_dtype acc_dtype(ck_dtype compute, ck_dtype dst)
{
    return compute == CK_DTYPE_I8 ? CK_DTYPE_I32 : dst;
}

/* A [rows, cols] f32 descriptor with row stride `stride`. */
static dnnl_status_t plain_md(dnnl_memory_desc_t *md, int64_t rows, int64_t cols, int64_t stride)
{
    return typed_md(md, rows, cols, stride, CK_DTYPE_F32);
}

/* Copies the user buffer described by src_md into new memory of layout dst_md, placed by
 * ck_large_alloc (2 MiB pages for the large weights: ck_memory.h) in *buf, which the caller frees
 * after destroying *dst (also on error). */
static int copy_into(ck_onednn *ctx, const dnnl_memory_desc_t *src_md, const void *src,
                     const dnnl_memory_desc_t *dst_md, dnnl_memory_t *dst, void **buf)
{
    int rc = 0;
    dnnl_memory_t user = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t reorder = NULL;
    if ((*buf = ck_large_alloc(dnnl_memory_desc_get_size(dst_md))) == NULL) {
        return CK_E_MEMORY;
    }
    DNNL_TRY(dnnl_memory_create(dst, dst_md, ctx->engine, *buf));
    DNNL_TRY(dnnl_memory_create(&user, src_md, ctx->engine, (void *)(uintptr_t)src)); /* read only */
    DNNL_TRY(dnnl_reorder_primitive_desc_create(&pd, src_md, ctx->engine, dst_md, ctx->engine, NULL));
    DNNL_TRY(dnnl_primitive_create(&reorder, pd));
    const dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, *dst}};
    DNNL_TRY(dnnl_primitive_execute(reorder, ctx->streams[0], 2, args));
    DNNL_TRY(dnnl_stream_wait(ctx->streams[0]));
done:
    if (reorder != NULL) {
        dnnl_primitive_destroy(reorder);
    }
    if (pd != NULL) {
        dnnl_primitive_desc_destroy(pd);
    }
    if (user != NULL) {
        dnnl_memory_destroy(user);
    }
    return rc;
}

/* The primitive attributes: a user scratchpad (each lane brings its own), fpmath mode strict (set
 * explicitly, so ONEDNN_DEFAULT_FPMATH_MODE=BF16 in the environment, or a newer oneDNN's implicit
 * down-conversion, can never make an f32 matmul round its inputs: test_linear runs with it set), and
 * optionally GELU (tanh form) applied to y by oneDNN as a post-op. */
static int make_attr(ck_linear_activation activation, dnnl_primitive_attr_t *attr)
{
    int rc = 0;
    dnnl_post_ops_t po = NULL;
    DNNL_TRY(dnnl_primitive_attr_create(attr));
    DNNL_TRY(dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user));
    DNNL_TRY(dnnl_primitive_attr_set_fpmath_mode(*attr, dnnl_fpmath_mode_strict));
    if (activation == CK_LINEAR_GELU_TANH) {
        DNNL_TRY(dnnl_post_ops_create(&po));
        DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_tanh, 0.0f, 0.0f));
        DNNL_TRY(dnnl_primitive_attr_set_post_ops(*attr, po));
    }
done:
    if (po != NULL) {
        dnnl_post_ops_destroy(po);
    }
    return rc;
}

/* Creates the tile primitive j (exactly TILE_ROWS[j] dense rows, weights "any") and
 * returns its weights layout in *w_md; reserves the scratchpad it needs on every lane. */
static int build_tile(ck_linear *lin, int j, const dnnl_primitive_attr_t attr, int with_bias,
                      dnnl_memory_desc_t *w_md)
{
    int rc = 0;
    const int64_t k = (int64_t)lin->in, n = (int64_t)lin->out, m = TILE_ROWS[j];
    const dnnl_dims_t wdims = {k, n};
    dnnl_memory_desc_t src_md, dst_md, w_any, b_md;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    const dnnl_data_type_t wt = dnnl_type(lin->compute);
    DNNL_TRY(typed_md(&src_md, m, k, k, src_dtype(lin->compute)));
    DNNL_TRY(typed_md(&dst_md, m, n, n, acc_dtype(lin->compute, lin->dst)));
    DNNL_TRY(plain_md(&b_md, 1, n, n));
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&w_any, 2, wdims, wt, dnnl_format_tag_any));
    DNNL_TRY(dnnl_matmul_desc_init(&desc, &src_md, &w_any, with_bias ? &b_md : NULL, &dst_md));
    DNNL_TRY(dnnl_primitive_desc_create(&pd, &desc, attr, lin->ctx->engine, NULL));
    DNNL_TRY(dnnl_primitive_create(&lin->prim[j], pd));
    const dnnl_memory_desc_t *w = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *sp = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (w == NULL) {
        rc = CK_E_BACKEND;
        goto done;
    }
    *w_md = *w;
    rc = reserve_scratchpad(lin->ctx, sp != NULL ? dnnl_memory_desc_get_size(sp) : 0);
    if (rc == 0 && lin->compute == CK_DTYPE_BF16) {
        rc = reserve_lane_buffers(lin->ctx, (void **)lin->ctx->staging, &lin->ctx->staging_elems,
                                  (size_t)m * lin->in, sizeof(uint16_t));
    }
    if (rc == 0 && lin->compute == CK_DTYPE_BF16 && m == BF16_TAIL_ROWS) {
        rc = reserve_lane_buffers(lin->ctx, (void **)lin->ctx->staging_y, &lin->ctx->staging_y_elems,
                                  (size_t)m * lin->out, sizeof(float));
    }
    if (rc == 0 && lin->compute == CK_DTYPE_I8) {
        rc = reserve_lane_buffers(lin->ctx, (void **)lin->ctx->staging_u8, &lin->ctx->staging_u8_elems,
                                  (size_t)m * lin->in, sizeof(uint8_t));
    }
    if (rc == 0 && lin->compute == CK_DTYPE_I8) {
        rc = reserve_lane_buffers(lin->ctx, (void **)lin->ctx->staging_s32,
                                  &lin->ctx->staging_s32_elems, (size_t)m * lin->out, sizeof(int32_t));
    }
done:
    if (pd != NULL) {
        dnnl_primitive_desc_destroy(pd);
    }
    return rc;
}

/* The int8 weights: W quantized per output channel (ck_quantize_weight_f32_i8) into a temporary
 * [N,K] s8 copy, reordered into w_md; the scales, column sums and bias kept for the epilogue. */
static int build_int8_weights(ck_linear *lin, const float *weight, const float *bias,
                              const dnnl_memory_desc_t *w_md)
{
    int rc = 0;
    const int64_t k = (int64_t)lin->in, n = (int64_t)lin->out;
    const dnnl_dims_t wdims = {k, n}, wstrides = {1, k};
    dnnl_memory_desc_t w_user;
    int8_t *q = malloc(lin->in * lin->out);
    lin->w_scale = malloc(lin->out * sizeof *lin->w_scale);
    lin->colsum = malloc(lin->out * sizeof *lin->colsum);
    lin->bias_f32 = bias != NULL ? malloc(lin->out * sizeof *lin->bias_f32) : NULL;
    if (q == NULL || lin->w_scale == NULL || lin->colsum == NULL || (bias != NULL && lin->bias_f32 == NULL)) {
        rc = CK_E_MEMORY;
        goto done;
    }
    if (bias != NULL) {
        memcpy(lin->bias_f32, bias, lin->out * sizeof *bias);
    }
    rc = ck_quantize_weight_f32_i8(weight, lin->out, lin->in, q, lin->w_scale, lin->colsum);
    if (rc != 0) {
        goto done;
    }
    DNNL_TRY(dnnl_memory_desc_init_by_strides(&w_user, 2, wdims, dnnl_s8, wstrides));
    rc = copy_into(lin->ctx, &w_user, q, w_md, &lin->weights, &lin->weights_buf);
done:
    free(q);
    return rc;
}

/* Builds every tile primitive, checks they agree on one weights layout (one copy serves them
 * all), and copies W (as [K,N] with strides {1, K}: PyTorch's [N,K] read transposed) and b. */
static int build(ck_linear *lin, const float *weight, const float *bias)
{
    int rc = 0;
    dnnl_primitive_attr_t attr = NULL;
    const int64_t k = (int64_t)lin->in, n = (int64_t)lin->out;
    const dnnl_dims_t wdims = {k, n}, wstrides = {1, k};
    dnnl_memory_desc_t w_md, w_tile, w_user, b_md;
    int int8 = lin->compute == CK_DTYPE_I8; /* bias and activation in its own epilogue */
    rc = make_attr(int8 ? CK_LINEAR_PLAIN : lin->activation, &attr);
    for (int j = 0; rc == 0 && j < TILE_KINDS; j++) {
        rc = build_tile(lin, j, attr, bias != NULL && !int8, j == 0 ? &w_md : &w_tile);
        if (rc == 0 && j > 0 && !dnnl_memory_desc_equal(&w_md, &w_tile)) {
            rc = CK_E_BACKEND; /* tiles would need different weight layouts */
        }
    }
    if (rc != 0) {
        goto done;
    }
    if (int8) {
        rc = build_int8_weights(lin, weight, bias, &w_md);
        goto done;
    }
    DNNL_TRY(plain_md(&b_md, 1, n, n));
    DNNL_TRY(dnnl_memory_desc_init_by_strides(&w_user, 2, wdims, dnnl_f32, wstrides));
    rc = copy_into(lin->ctx, &w_user, weight, &w_md, &lin->weights, &lin->weights_buf);
    if (rc == 0 && bias != NULL) {
        rc = copy_into(lin->ctx, &b_md, bias, &b_md, &lin->bias, &lin->bias_buf);
    }
done:
    if (attr != NULL) {
        dnnl_primitive_attr_destroy(attr);
    }
    return rc;
}

int ck_linear_init(ck_linear **out, ck_onednn *ctx, const ck_linear_desc *d)
{
    if (out == NULL) {
        return CK_E_ARG;
    }
    *out = NULL;
    if (d == NULL) {
        return CK_E_ARG;
    }
    const float *weight = d->weight, *bias = d->bias;
    size_t weight_count = d->weight_count, bias_count = d->bias_count;
    size_t in_features = d->in_features, out_features = d->out_features;
    ck_linear_activation activation = d->activation;
    ck_dtype compute = d->compute, dst = d->dst;
    if (ctx == NULL || (activation != CK_LINEAR_PLAIN && activation != CK_LINEAR_GELU_TANH) ||
        (compute != CK_DTYPE_F32 && compute != CK_DTYPE_BF16 && compute != CK_DTYPE_I8) ||
        !(dst == CK_DTYPE_F32 || (dst == CK_DTYPE_BF16 && compute == CK_DTYPE_BF16))) {
        return CK_E_ARG;
    }
    int rc = check_weights(weight, weight_count, bias, bias_count, in_features, out_features);
    if (rc == 0 && compute == CK_DTYPE_I8 && in_features > CK_INT8_MAX_K) {
        rc = CK_E_SIZE;
    }
    if (rc != 0) {
        return rc;
    }
    ck_linear *lin = calloc(1, sizeof *lin);
    if (lin == NULL) {
        return CK_E_MEMORY;
    }
    lin->ctx = ctx;
    lin->in = in_features;
    lin->out = out_features;
    lin->activation = activation;
    lin->compute = compute;
    lin->dst = dst;
    rc = build(lin, weight, bias);
    if (rc != 0) {
        ck_linear_free(lin);
        return rc;
    }
    *out = lin;
    return 0;
}

void ck_linear_free(ck_linear *lin)
{
    if (lin == NULL) {
        return;
    }
    for (int j = 0; j < TILE_KINDS; j++) {
        if (lin->prim[j] != NULL) {
            dnnl_primitive_destroy(lin->prim[j]);
        }
    }
    if (lin->weights != NULL) {
        dnnl_memory_destroy(lin->weights);
    }
    if (lin->bias != NULL) {
        dnnl_memory_destroy(lin->bias);
    }
    ck_large_free(lin->weights_buf);
    ck_large_free(lin->bias_buf);
    free(lin->w_scale);
    free(lin->colsum);
    free(lin->bias_f32);
    free(lin);
}

/* One tile: m = TILE_ROWS[j] rows, dense, on `lane`. */
static int run_tile(const ck_linear *lin, int lane, int j, const void *x, void *y)
{
    int rc = 0;
    const int64_t m = TILE_ROWS[j];
    dnnl_memory_desc_t src_md, dst_md;
    dnnl_memory_t src = NULL, dst = NULL;
    const ck_onednn *ctx = lin->ctx;
    DNNL_TRY(typed_md(&src_md, m, (int64_t)lin->in, (int64_t)lin->in, src_dtype(lin->compute)));
    DNNL_TRY(typed_md(&dst_md, m, (int64_t)lin->out, (int64_t)lin->out, acc_dtype(lin->compute, lin->dst)));
    DNNL_TRY(dnnl_memory_create(&src, &src_md, ctx->engine, (void *)(uintptr_t)x)); /* read only */
    DNNL_TRY(dnnl_memory_create(&dst, &dst_md, ctx->engine, y));
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, lin->weights},
                               {DNNL_ARG_DST, dst}};
    int n_args = 3;
    if (lin->bias != NULL) {
        args[n_args++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, lin->bias};
    }
    if (ctx->scratchpads[lane] != NULL) {
        args[n_args++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, ctx->scratchpads[lane]};
    }
    DNNL_TRY(dnnl_primitive_execute(lin->prim[j], ctx->streams[lane], n_args, args));
    DNNL_TRY(dnnl_stream_wait(ctx->streams[lane]));
done:
    if (src != NULL) {
        dnnl_memory_destroy(src);
    }
    if (dst != NULL) {
        dnnl_memory_destroy(dst);
    }
    return rc;
}

/* The bf16 forward: tiles of 256 rows, then 128. An f32 x (x16 NULL) is staged to bf16 (dense) on
 * the lane tile by tile; a bf16 x16 with dense rows is read in place, else its rows are copied to
 * the staging. The last rows (fewer than 128, or all rows when y is strided) go through a
 * zero-padded 128-row tile into the lane's f32 output staging, copied out row by row. */
static int forward_bf16(ck_linear *lin, int lane, const float *x, const uint16_t *x16, size_t x_stride,
                        void *y_void, size_t y_stride, size_t rows)
{
    uint16_t *xs = lin->ctx->staging[lane];
    char *ys = (char *)lin->ctx->staging_y[lane], *y = y_void;
    const size_t y_size = ck_dtype_size(lin->dst);
    int rc = 0;
    for (size_t done = 0; rc == 0 && done < rows;) {
        size_t left = rows - done;
        int j = left >= (size_t)TILE_ROWS[0] ? 0 : BF16_TAIL_TILE;
        size_t m = left < (size_t)TILE_ROWS[j] ? left : (size_t)TILE_ROWS[j];
        int direct = m == (size_t)TILE_ROWS[j] && y_stride == lin->out;
        const uint16_t *src = xs;
        if (x16 != NULL && m == (size_t)TILE_ROWS[j] && x_stride == lin->in) {
            src = x16 + done * x_stride;
        } else if (x16 != NULL) {
            for (size_t r = 0; r < m; r++) {
                memcpy(xs + r * lin->in, x16 + (done + r) * x_stride, lin->in * sizeof *xs);
            }
        } else {
            ck_bf16_from_f32_rows(x + done * x_stride, x_stride, xs, lin->in, m, lin->in);
        }
        if (m < (size_t)TILE_ROWS[j]) {
            memset(xs + m * lin->in, 0, ((size_t)TILE_ROWS[j] - m) * lin->in * sizeof *xs);
        }
        rc = run_tile(lin, lane, j, src, direct ? y + done * y_stride * y_size : ys);
        for (size_t r = 0; rc == 0 && !direct && r < m; r++) {
            memcpy(y + (done + r) * y_stride * y_size, ys + r * lin->out * y_size, lin->out * y_size);
        }
        done += m;
    }
    return rc;
}

/* The int8 forward: tiles of 256 rows down to 16, then single rows (any tile gives a row the same
 * bits: its products are exact integers). Each tile of x is quantized per row into the lane's u8
 * staging, multiplied into its s32 staging, and dequantized (+ bias) into y; GELU after, in place. */
static int forward_int8(ck_linear *lin, int lane, const float *x, size_t x_stride, float *y,
                        size_t y_stride, size_t rows)
{
    ck_onednn *ctx = lin->ctx;
    uint8_t *xq = ctx->staging_u8[lane];
    int32_t *acc = ctx->staging_s32[lane];
    float *scale = ctx->row_scale + (size_t)lane * CK_LINEAR_TILE_ROWS;
    int32_t *zero = ctx->row_zero + (size_t)lane * CK_LINEAR_TILE_ROWS;
    int rc = 0;
    for (size_t done = 0; rc == 0 && done < rows;) {
        int j = 0;
        while ((size_t)TILE_ROWS[j] > rows - done) {
            j++;
        }
        size_t m = (size_t)TILE_ROWS[j];
        ck_quantize_rows_f32_u8(x + done * x_stride, x_stride, xq, lin->in, m, lin->in, scale, zero);
        rc = run_tile(lin, lane, j, xq, acc);
        if (rc == 0) {
            ck_dequantize_rows_i32_f32(acc, lin->out, scale, zero, lin->w_scale, lin->colsum, lin->bias_f32,
                                   y + done * y_stride, y_stride, m, lin->out);
        }
        for (size_t r = 0; rc == 0 && lin->activation == CK_LINEAR_GELU_TANH && r < m; r++) {
            float *yr = y + (done + r) * y_stride;
            rc = ck_gelu_new_f32(yr, lin->out, yr, lin->out, lin->out);
        }
        done += m;
    }
    return rc;
}

int ck_linear_forward_f32(ck_linear *lin, int lane, const float *x, size_t x_count,
                          size_t x_stride, float *y, size_t y_count, size_t y_stride, size_t rows)
{
    if (lin == NULL || lane < 0 || lane >= lin->ctx->lanes) {
        return CK_E_ARG;
    }
    if (rows == 0) {
        return 0;
    }
    if (lin->dst != CK_DTYPE_F32) {
        return CK_E_ARG;
    }
    int rc = check_io(x, x_count, x_stride, y, y_count, y_stride, rows, lin->in, lin->out);
    if (rc == 0 && lin->compute == CK_DTYPE_BF16) {
        return forward_bf16(lin, lane, x, NULL, x_stride, y, y_stride, rows);
    }
    if (rc == 0 && lin->compute == CK_DTYPE_I8) {
        return forward_int8(lin, lane, x, x_stride, y, y_stride, rows);
    }
    int dense = x_stride == lin->in && y_stride == lin->out;
    for (size_t done = 0; rc == 0 && done < rows;) {
        /* The largest tile that fits what is left; strided rows go one at a time. */
        int j = dense ? 0 : TILE_KINDS - 1;
        while ((size_t)TILE_ROWS[j] > rows - done) {
            j++;
        }
        rc = run_tile(lin, lane, j, x + done * x_stride, y + done * y_stride);
        done += (size_t)TILE_ROWS[j];
    }
    return rc;
}

/* A bf16 linear writing `dst` (y's elements of ck_dtype_size(dst) bytes) on bf16 rows x: checked,
 * then forward_bf16. */
static int forward_bf16_in(ck_linear *lin, int lane, const uint16_t *x, size_t x_count, size_t x_stride,
                           void *y, ck_dtype dst, size_t y_count, size_t y_stride, size_t rows)
{
    if (lin == NULL || lane < 0 || lane >= lin->ctx->lanes || lin->compute != CK_DTYPE_BF16 ||
        lin->dst != dst) {
        return CK_E_ARG;
    }
    if (rows == 0) {
        return 0;
    }
    int rc = check_io_sized(x, sizeof *x, x_count, x_stride, y, ck_dtype_size(dst), y_count, y_stride, rows,
                            lin->in, lin->out);
    return rc != 0 ? rc : forward_bf16(lin, lane, NULL, x, x_stride, y, y_stride, rows);
}

int ck_linear_forward_bf16_f32(ck_linear *lin, int lane, const uint16_t *x, size_t x_count, size_t x_stride,
                               float *y, size_t y_count, size_t y_stride, size_t rows)
{
    return forward_bf16_in(lin, lane, x, x_count, x_stride, y, CK_DTYPE_F32, y_count, y_stride, rows);
}

int ck_linear_forward_bf16(ck_linear *lin, int lane, const uint16_t *x, size_t x_count, size_t x_stride,
                           uint16_t *y, size_t y_count, size_t y_stride, size_t rows)
{
    return forward_bf16_in(lin, lane, x, x_count, x_stride, y, CK_DTYPE_BF16, y_count, y_stride, rows);
}

const char *ck_onednn_version(void)
{
    static char text[32];
    static atomic_int ready;
    if (!atomic_load_explicit(&ready, memory_order_acquire)) {
        const dnnl_version_t *v = dnnl_version();
        char local[32];
        snprintf(local, sizeof local, "%d.%d.%d", v->major, v->minor, v->patch);
        memcpy(text, local, sizeof text);
        atomic_store_explicit(&ready, 1, memory_order_release);
    }
    return text;
}

ck_dtype ck_linear_compute_dtype(const ck_linear *lin)
{
    return lin != NULL ? lin->compute : CK_DTYPE_OTHER;
}

const char *ck_linear_impl(const ck_linear *lin)
{
    const_dnnl_primitive_desc_t pd = NULL;
    const char *impl = NULL;
    if (lin == NULL || lin->prim[0] == NULL || dnnl_primitive_get_primitive_desc(lin->prim[0], &pd) !=
        dnnl_success || dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success) {
        return "unknown";
    }
    return impl != NULL ? impl : "unknown";
}

int ck_linear_ref_f32(const float *x, size_t x_count, size_t x_stride, const float *weight,
                      size_t weight_count, const float *bias, size_t bias_count, float *y, size_t y_count,
                      size_t y_stride, size_t rows, size_t in_features, size_t out_features)
{
    int rc = check_weights(weight, weight_count, bias, bias_count, in_features, out_features);
    if (rc != 0 || rows == 0) {
        return rc;
    }
    rc = check_io(x, x_count, x_stride, y, y_count, y_stride, rows, in_features, out_features);
    if (rc != 0) {
        return rc;
    }
    for (size_t t = 0; t < rows; t++) {
        const float *xr = x + t * x_stride;
        for (size_t o = 0; o < out_features; o++) {
            const float *wr = weight + o * in_features;
            double acc = 0.0;
            for (size_t i = 0; i < in_features; i++) {
                acc += (double)xr[i] * (double)wr[i];
            }
            y[t * y_stride + o] = (float)(acc + (bias != NULL ? (double)bias[o] : 0.0));
        }
    }
    return 0;
}

/* splitmix64 (Steele, Lea, Flood 2014) as a uniform in [-1, 1): the self-check's fixed data. */
static float splitmix_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)((double)(z >> 40) / 8388608.0 - 1.0);
}

/* The fixed 64x768x768 linear in `compute` against the f32 reference loop. */
static int self_check(ck_onednn *ctx, ck_dtype compute, double *cosine, const char **impl)
{
    enum { M = 64, K = 768, N = 768 };
    float *x = malloc(sizeof(float) * (M * K + K * N + 2 * M * N));
    ck_linear *lin = NULL;
    if (x == NULL) {
        return CK_E_MEMORY;
    }
    float *w = x + M * K, *y = w + K * N, *ref = y + M * N;
    uint64_t state = 20261201;
    for (size_t i = 0; i < (size_t)M * K + (size_t)K * N; i++) {
        x[i] = splitmix_uniform(&state);
    }
    const ck_linear_desc d = {.weight = w, .weight_count = (size_t)K * N, .in_features = K,
                              .out_features = N, .compute = compute};
    int rc = ck_linear_init(&lin, ctx, &d);
    rc = rc ? rc : ck_linear_forward_f32(lin, 0, x, (size_t)M * K, K, y, (size_t)M * N, N, M);
    rc = rc ? rc : ck_linear_ref_f32(x, (size_t)M * K, K, w, (size_t)K * N, NULL, 0, ref,
                                     (size_t)M * N, N, M, K, N);
    if (rc == CK_OK) {
        double dot = 0.0, yy = 0.0, rr = 0.0;
        for (size_t i = 0; i < (size_t)M * N; i++) {
            dot += (double)y[i] * ref[i];
            yy += (double)y[i] * y[i];
            rr += (double)ref[i] * ref[i];
        }
        *cosine = dot / sqrt(yy * rr); /* NaN when y is not finite */
        *impl = ck_linear_impl(lin);
    }
    ck_linear_free(lin);
    free(x);
    return rc;
}

int ck_linear_bf16_self_check(ck_onednn *ctx, double *cosine, const char **impl)
{
    return self_check(ctx, CK_DTYPE_BF16, cosine, impl);
}

int ck_linear_int8_self_check(ck_onednn *ctx, double *cosine, const char **impl)
{
    return self_check(ctx, CK_DTYPE_I8, cosine, impl);
}
