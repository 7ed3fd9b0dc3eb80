/* executor_ops.c - the run functions of the op table (ops.c), one per op kind: each slices a
 * step's rows or (sequence, head) pairs over the workers through the scheduler and calls the same
 * kernel a single thread would. No I/O, no allocation. */
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
    const ck_step *step;
} op_ctx;

static const float *in_f32(const op_ctx *c, int slot)
{
    return ck_exec_at(c->ex, c->step->in_offset[slot]);
}

static float *out_f32(const op_ctx *c)
{
    return ck_exec_at(c->ex, c->step->out_offset);
}

static int embedding_rows(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_step *s = c->step;
    const ck_tensor *const *w = s->w;
    const int32_t *ids = ck_exec_at(c->ex, s->in_offset[CK_EMB_IN_IDS]);
    const int32_t *positions = ck_exec_at(c->ex, s->in_offset[CK_EMB_IN_POSITIONS]);
    size_t cols = s->out_cols;
    float *y = out_f32(c) + first * cols;
    ck_embedding_tables tables = {
        .word = w[CK_EMB_WORD]->data, .word_rows = w[CK_EMB_WORD]->shape[0],
        .position = w[CK_EMB_POSITION]->data, .position_rows = w[CK_EMB_POSITION]->shape[0],
        .token_type = w[CK_EMB_TOKEN_TYPE]->data, .token_type_rows = w[CK_EMB_TOKEN_TYPE]->shape[0],
        .gamma = w[CK_EMB_GAMMA]->data, .beta = w[CK_EMB_BETA]->data, .channels = cols,
    };
    (void)worker;
    return ck_embedding_three_table_layer_norm_f32(ids + first, positions + first, NULL, count,
                                                   &tables, y, count * cols, cols, s->eps);
}

/* The index of step s in the executor's program (the bf16 copies are per step). */
static size_t step_index(const op_ctx *c)
{
    return (size_t)(c->step - c->ex->program.steps);
}

/* Also writes the bf16 copy of its rows that the next linears read, where the executor keeps one
 * (step_shadow_out). */
static int residual_layer_norm_rows(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_step *s = c->step;
    int k = c->ex->step_shadow_out[step_index(c)];
    size_t cols = s->out_cols;
    size_t n = count * cols, at = first * cols;
    (void)worker;
    /* bf16 programs take float statistics (ck_residual_layer_norm_f32acc: one read of x and the
     * residual); f32 and parity keep double */
    int (*ln)(const float *, size_t, size_t, const float *, size_t, size_t, const float *, const float *,
              float *, size_t, size_t, uint16_t *, size_t, size_t, size_t, size_t, float) =
        c->ex->opt.precision == CK_DTYPE_BF16 ? ck_residual_layer_norm_f32acc : ck_residual_layer_norm_f32_bf16;
    return ln(in_f32(c, CK_RLN_IN_X) + at, n, cols, in_f32(c, CK_RLN_IN_RESIDUAL) + at, n, cols,
              s->w[CK_RLN_GAMMA]->data, s->w[CK_RLN_BETA]->data, out_f32(c) + at, n, cols,
              k >= 0 ? c->ex->shadows[k] + at : NULL, n, cols, count, cols, s->eps);
}

static int gelu_new_rows(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    size_t cols = c->step->out_cols;
    size_t n = count * cols, at = first * cols;
    (void)worker;
    return ck_gelu_new_f32(in_f32(c, CK_GELU_IN_X) + at, n, out_f32(c) + at, n, n);
}

/* Item p is (sequence p / heads, head p % heads): each head of each sequence is computed whole by
 * one worker in its own scratch arena, so its bits do not depend on the thread count. */
static int attention_pairs(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_step *s = c->step;
    const ck_executor *ex = c->ex;
    size_t cols = s->out_cols;
    const ck_arena *scratch = &ex->arenas.scratch[worker];
    const int *sh = ex->step_attention_in[step_index(c)], ko = ex->step_shadow_out[step_index(c)];
    for (size_t p = first; sh[0] >= 0 && p < first + count; p++) { /* q, k, v in bf16 copies */
        size_t seq = p / s->heads, head = p % s->heads;
        size_t row = ex->offsets[seq], len = ex->offsets[seq + 1] - row;
        size_t avail = (ex->tokens - row) * cols;
        const uint16_t *q = ex->shadows[sh[0]] + row * cols, *k = ex->shadows[sh[1]] + row * cols,
                       *v = ex->shadows[sh[2]] + row * cols;
        int rc = ko >= 0 /* the context in bf16 only, for the projection that reads it */
                     ? ck_attention_head_bf16_io(q, avail, k, avail, v, avail, cols, ex->shadows[ko] + row * cols,
                                                 avail, cols, scratch->base, scratch->bytes / sizeof(float), len,
                                                 head, s->head_dim, s->scale)
                     : ck_attention_head_bf16_in(q, avail, k, avail, v, avail, cols, out_f32(c) + row * cols,
                                                 avail, cols, scratch->base, scratch->bytes / sizeof(float), len,
                                                 head, s->head_dim, s->scale);
        if (rc != CK_OK) {
            return rc;
        }
    }
    /* f32 q, k, v: the AMX heads where the step computes in bf16, else the f32 ones */
    int (*head_fn)(const float *, size_t, const float *, size_t, const float *, size_t, size_t,
                   float *, size_t, size_t, float *, size_t, size_t, size_t, size_t, float) =
        s->dtype == CK_DTYPE_BF16 ? ck_attention_head_bf16 : ck_attention_head_f32;
    for (size_t p = first; sh[0] < 0 && p < first + count; p++) {
        size_t seq = p / s->heads, head = p % s->heads;
        size_t row = ex->offsets[seq], len = ex->offsets[seq + 1] - row;
        size_t avail = (ex->tokens - row) * cols;
        int rc = head_fn(in_f32(c, CK_ATT_IN_Q) + row * cols, avail,
                         in_f32(c, CK_ATT_IN_K) + row * cols, avail,
                         in_f32(c, CK_ATT_IN_V) + row * cols, avail, cols,
                         out_f32(c) + row * cols, avail, cols, scratch->base,
                         scratch->bytes / sizeof(float), len, head, s->head_dim, s->scale);
        if (rc != CK_OK) {
            return rc;
        }
    }
    return CK_OK;
}

/* Each worker multiplies its own contiguous blocks of CK_LINEAR_ROW_BLOCK rows on its own oneDNN
 * lane, single-threaded (M = its rows, in full tiles); into the step's output (when fused, the
 * output of the gelu_new it absorbed). The last block may run past the batch's last token into
 * the rows the planner added (plan row_block; zeroed by ck_exec_linear): those results are never
 * read. A row's bits do not depend on which worker or tile computes it (linear.h). */
static int linear_blocks(void *ctx, size_t first, size_t count, int worker)
{
    const op_ctx *c = ctx;
    const ck_step *s = c->step;
    size_t in = s->in_cols[CK_LIN_IN_X], out = s->out_cols;
    size_t row = first * CK_LINEAR_ROW_BLOCK, rows = count * CK_LINEAR_ROW_BLOCK;
    const ck_executor *ex = c->ex;
    int k = ex->step_shadow_in[step_index(c)], ko = ex->step_shadow_out[step_index(c)];
    if (k >= 0 && ko >= 0) { /* bf16 in, bf16 out: the FFN in, q, k, v */
        return ck_linear_forward_bf16_io(s->linear, worker, ex->shadows[k] + row * in, rows * in, in,
                                         ex->shadows[ko] + row * out, rows * out, out, rows);
    }
    if (k >= 0) {
        return ck_linear_forward_bf16_in(s->linear, worker, ex->shadows[k] + row * in, rows * in, in,
                                         out_f32(c) + row * out, rows * out, out, rows);
    }
    return ck_linear_forward_f32(s->linear, worker, in_f32(c, CK_LIN_IN_X) + row * in, rows * in,
                                 in, out_f32(c) + row * out, rows * out, out, rows);
}

/* Zeroes the input rows between the last token and the end of its block (so the padding rows a
 * linear computes are defined and finite), then runs the blocks over the workers. */
int ck_exec_linear(const ck_executor *ex, const ck_step *step)
{
    op_ctx ctx = {ex, step};
    size_t blocks = (ex->tokens + CK_LINEAR_ROW_BLOCK - 1) / CK_LINEAR_ROW_BLOCK;
    size_t pad = blocks * CK_LINEAR_ROW_BLOCK - ex->tokens, in = step->in_cols[CK_LIN_IN_X];
    float *x = ck_exec_at(ex, step->in_offset[CK_LIN_IN_X]);
    memset(x + ex->tokens * in, 0, pad * in * sizeof(float));
    int k = ex->step_shadow_in[(size_t)(step - ex->program.steps)];
    if (k >= 0) { /* the bf16 copy's pad rows too: it is what the linear reads */
        memset(ex->shadows[k] + ex->tokens * in, 0, pad * in * sizeof *ex->shadows[k]);
    }
    return ck_parallel_for(blocks, ex->opt.threads, linear_blocks, &ctx);
}

int ck_exec_embedding(const ck_executor *ex, const ck_step *step)
{
    op_ctx ctx = {ex, step};
    return ck_parallel_for(ex->tokens, ex->opt.threads, embedding_rows, &ctx);
}

int ck_exec_attention(const ck_executor *ex, const ck_step *step)
{
    op_ctx ctx = {ex, step};
    return ck_parallel_for_interleaved(ex->n_seqs * step->heads, ex->opt.threads, attention_pairs,
                                       &ctx);
}

int ck_exec_residual_layer_norm(const ck_executor *ex, const ck_step *step)
{
    op_ctx ctx = {ex, step};
    return ck_parallel_for(ex->tokens, ex->opt.threads, residual_layer_norm_rows, &ctx);
}

int ck_exec_gelu_new(const ck_executor *ex, const ck_step *step)
{
    op_ctx ctx = {ex, step};
    return ck_parallel_for(ex->tokens, ex->opt.threads, gelu_new_rows, &ctx);
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
