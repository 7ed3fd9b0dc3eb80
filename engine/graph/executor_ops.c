/* executor_ops.c - one dispatch per op kind: slices rows or (sequence, head) pairs over workers
 * through the scheduler and calls the same kernel a single thread would. No I/O, no allocation. */
#include <string.h>

#include "attention.h"
#include "ck_check.h"
#include "embedding_three_table_layer_norm.h"
#include "executor_internal.h"
#include "gelu_new.h"
#include "parallel.h"
#include "residual_layer_norm.h"

typedef struct {
    const ck_executor *ex;
    const ck_op *op;
} op_ctx;

static const float *in_f32(const op_ctx *c, int slot)
{
    return ck_exec_buffer(c->ex, c->op->inputs[slot]);
}

static size_t cols_of(const op_ctx *c, int buffer)
{
    return c->ex->circuit->buffers[buffer].cols;
}

static int embedding_rows(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_op *op = c->op;
    const ck_tensor *const *w = c->ex->weights;
    const int32_t *ids = ck_exec_buffer(c->ex, op->inputs[0]);
    const int32_t *positions = ck_exec_buffer(c->ex, op->inputs[1]);
    size_t cols = cols_of(c, op->output);
    float *y = (float *)ck_exec_buffer(c->ex, op->output) + first * cols;
    ck_embedding_tables tables = {
        .word = w[op->weights[0]]->data, .word_rows = w[op->weights[0]]->shape[0],
        .position = w[op->weights[1]]->data, .position_rows = w[op->weights[1]]->shape[0],
        .token_type = w[op->weights[2]]->data, .token_type_rows = w[op->weights[2]]->shape[0],
        .gamma = w[op->weights[3]]->data, .beta = w[op->weights[4]]->data, .channels = cols,
    };
    (void)worker;
    return ck_embedding_three_table_layer_norm_f32(ids + first, positions + first, NULL, count,
                                                   &tables, y, count * cols, cols, op->eps);
}

/* Also writes the bf16 copy of its rows that the next linears read, where the executor keeps one
 * (op_shadow_out). */
static int residual_layer_norm_rows(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_op *op = c->op;
    const ck_executor *ex = c->ex;
    int k = ex->op_shadow_out[(size_t)(op - ex->circuit->ops)];
    size_t cols = cols_of(c, op->output);
    size_t n = count * cols, at = first * cols;
    (void)worker;
    return ck_residual_layer_norm_f32_bf16(in_f32(c, 0) + at, n, cols, in_f32(c, 1) + at, n, cols,
                                           ex->weights[op->weights[0]]->data,
                                           ex->weights[op->weights[1]]->data,
                                           (float *)ck_exec_buffer(ex, op->output) + at, n, cols,
                                           k >= 0 ? ex->shadows[k] + at : NULL, n, cols, count, cols,
                                           op->eps);
}

static int gelu_new_rows(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    size_t cols = cols_of(c, c->op->output);
    size_t n = count * cols, at = first * cols;
    (void)worker;
    return ck_gelu_new_f32(in_f32(c, 0) + at, n, (float *)ck_exec_buffer(c->ex, c->op->output) + at,
                           n, n);
}

/* Item p is (sequence p / heads, head p % heads): each head of each sequence is computed whole by
 * one worker in its own scratch arena, so its bits do not depend on the thread count. */
static int attention_pairs(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_op *op = c->op;
    const ck_executor *ex = c->ex;
    size_t cols = cols_of(c, op->output);
    const ck_arena *scratch = &ex->arenas.scratch[worker];
    int (*head_fn)(const float *, size_t, const float *, size_t, const float *, size_t, size_t,
                   float *, size_t, size_t, float *, size_t, size_t, size_t, size_t, float) =
        ex->attention == CK_DTYPE_BF16 ? ck_attention_head_bf16 : ck_attention_head_f32;
    const int *sh = ex->op_attention_in[(size_t)(op - ex->circuit->ops)];
    for (size_t p = first; sh[0] >= 0 && p < first + count; p++) { /* q, k, v in bf16 copies */
        size_t s = p / op->heads, head = p % op->heads;
        size_t row = ex->offsets[s], len = ex->offsets[s + 1] - row;
        size_t avail = (ex->tokens - row) * cols;
        int rc = ck_attention_head_bf16_in(ex->shadows[sh[0]] + row * cols, avail, ex->shadows[sh[1]] + row * cols,
                                           avail, ex->shadows[sh[2]] + row * cols, avail, cols,
                                           (float *)ck_exec_buffer(ex, op->output) + row * cols, avail, cols,
                                           scratch->base, scratch->bytes / sizeof(float), len, head,
                                           op->head_dim, op->scale);
        if (rc != CK_OK) {
            return rc;
        }
    }
    for (size_t p = first; sh[0] < 0 && p < first + count; p++) {
        size_t s = p / op->heads, head = p % op->heads;
        size_t row = ex->offsets[s], len = ex->offsets[s + 1] - row;
        size_t avail = (ex->tokens - row) * cols;
        int rc = head_fn(in_f32(c, 0) + row * cols, avail, in_f32(c, 1) + row * cols, avail,
                         in_f32(c, 2) + row * cols, avail, cols,
                         (float *)ck_exec_buffer(ex, op->output) + row * cols, avail, cols,
                         scratch->base, scratch->bytes / sizeof(float), len, head, op->head_dim,
                         op->scale);
        if (rc != CK_OK) {
            return rc;
        }
    }
    return CK_OK;
}

/* Each worker multiplies its own contiguous blocks of CK_LINEAR_ROW_BLOCK rows on its own oneDNN
 * lane, single-threaded (M = its rows, in full tiles); into the op's output or, when fused, into
 * the output of the gelu_new it absorbed. The last block may run past the batch's last token into
 * the rows the planner added (plan row_block; zeroed by linear_op): those results are never read.
 * A row's bits do not depend on which worker or tile computes it (linear.h). */
static int linear_blocks(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_executor *ex = c->ex;
    size_t i = (size_t)(c->op - ex->circuit->ops);
    int y = ex->op_output[i];
    size_t in = cols_of(c, c->op->inputs[0]), out = cols_of(c, y);
    size_t row = first * CK_LINEAR_ROW_BLOCK, rows = count * CK_LINEAR_ROW_BLOCK;
    int k = ex->op_shadow_in[i], ko = ex->op_shadow_out[i];
    if (k >= 0 && ko >= 0) { /* bf16 in, bf16 out (a fused FFN in) */
        return ck_linear_forward_bf16_io(ex->op_linear[i], worker, ex->shadows[k] + row * in, rows * in, in,
                                         ex->shadows[ko] + row * out, rows * out, out, rows);
    }
    if (k >= 0) {
        return ck_linear_forward_bf16_in(ex->op_linear[i], worker, ex->shadows[k] + row * in, rows * in, in,
                                         (float *)ck_exec_buffer(ex, y) + row * out, rows * out, out, rows);
    }
    return ck_linear_forward_f32(ex->op_linear[i], worker, in_f32(c, 0) + row * in, rows * in, in,
                                 (float *)ck_exec_buffer(ex, y) + row * out, rows * out, out, rows);
}

/* Zeroes the input rows between the last token and the end of its block (so the padding rows a
 * linear computes are defined and finite), then runs the blocks over the workers. */
static int linear_op(op_ctx *c)
{
    const ck_executor *ex = c->ex;
    size_t blocks = (ex->tokens + CK_LINEAR_ROW_BLOCK - 1) / CK_LINEAR_ROW_BLOCK;
    size_t pad = blocks * CK_LINEAR_ROW_BLOCK - ex->tokens, in = cols_of(c, c->op->inputs[0]);
    float *x = ck_exec_buffer(ex, c->op->inputs[0]);
    memset(x + ex->tokens * in, 0, pad * in * sizeof(float));
    int k = ex->op_shadow_in[(size_t)(c->op - ex->circuit->ops)];
    if (k >= 0) { /* the bf16 copy's pad rows too: it is what the linear reads */
        memset(ex->shadows[k] + ex->tokens * in, 0, pad * in * sizeof *ex->shadows[k]);
    }
    return ck_parallel_for(blocks, ex->opt.threads, linear_blocks, c);
}

typedef struct {
    const float *rows;
    size_t cols;
} finite_ctx;

static int finite_rows(void *ctx, size_t first, size_t count, int worker)
{
    const finite_ctx *c = ctx;
    (void)worker;
    return ck_all_finite(c->rows + first * c->cols, count, c->cols, c->cols) ? CK_OK
                                                                           : CK_E_NONFINITE;
}

int ck_exec_check_finite(const ck_executor *ex, int buffer)
{
    finite_ctx ctx = {ck_exec_buffer(ex, buffer), ex->circuit->buffers[buffer].cols};
    return ck_parallel_for(ex->tokens, ex->opt.threads, finite_rows, &ctx);
}

int ck_exec_op(ck_executor *ex, const ck_op *op)
{
    op_ctx ctx = {ex, op};
    int workers = ex->opt.threads;
    switch (op->kind) {
    case CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM:
        return ck_parallel_for(ex->tokens, workers, embedding_rows, &ctx);
    case CK_OP_LINEAR:
        return linear_op(&ctx);
    case CK_OP_ATTENTION:
        return ck_parallel_for_interleaved(ex->n_seqs * op->heads, workers, attention_pairs, &ctx);
    case CK_OP_RESIDUAL_LAYER_NORM:
        return ck_parallel_for(ex->tokens, workers, residual_layer_norm_rows, &ctx);
    case CK_OP_GELU_NEW:
        return ck_parallel_for(ex->tokens, workers, gelu_new_rows, &ctx);
    case CK_OP_KIND_COUNT:
        break;
    }
    return CK_E_ARG;
}
