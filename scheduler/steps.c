/* steps.c - each op kind's step sliced over the workers (steps.h); the interpreter and generated
 * libraries call these same functions. No I/O, no allocation. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "steps.h"

#include <string.h>
#include <time.h>

#include "attention.h"
#include "ck_check.h"
#include "ck_dtype.h"
#include "ck_status.h"
#include "ada_layer_norm.h"
#include "adain_instance_norm.h"
#include "add_scaled.h"
#include "conv_transpose1d_depthwise_k3s2.h"
#include "expand_rows.h"
#include "upsample_nearest2_rows.h"
#include "concat_cols.h"
#include "concat_style.h"
#include "conv1d.h"
#include "adain_snake.h"
#include "conv_transpose1d_col2im.h"
#include "harmonic_source.h"
#include "istft20.h"
#include "noise_normal.h"
#include "reflect_pad_left1.h"
#include "stft20.h"
#include "downsample2_rows.h"
#include "duration_frames.h"
#include "embedding.h"
#include "embedding_three_table_layer_norm.h"
#include "gelu_new.h"
#include "layer_norm.h"
#include "leaky_relu.h"
#include "lstm_recurrence.h"
#include "parallel.h"
#include "residual_layer_norm.h"

typedef struct {
    const ck_step_batch *b;
    const ck_step_args *s;
    int bf16; /* the step's variant: attention on AMX tiles, LayerNorm with float statistics */
} step_ctx;

static void *at(const ck_step_batch *b, size_t offset)
{
    return (char *)b->arena + offset;
}

static uint16_t *copy_at(const ck_step_batch *b, size_t offset)
{
    return offset == CK_NO_COPY ? NULL : (uint16_t *)((char *)b->copies + offset);
}

static int embedding_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    const int32_t *ids = at(c->b, s->in[0]), *positions = at(c->b, s->in[1]);
    ck_embedding_tables tables = {
        .word = s->w[0], .word_rows = s->w_rows[0], .position = s->w[1],
        .position_rows = s->w_rows[1], .token_type = s->w[2], .token_type_rows = s->w_rows[2],
        .gamma = s->w[3], .beta = s->w[4], .channels = s->cols,
    };
    (void)worker;
    return ck_embedding_three_table_layer_norm_f32(ids + first, positions + first, NULL, count,
                                                   &tables, (float *)at(c->b, s->out) +
                                                   first * s->cols, count * s->cols, s->cols,
                                                   s->eps);
}

static int embedding_table_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    (void)worker;
    return ck_embedding_f32((const int32_t *)at(c->b, s->in[0]) + first, count, s->w[0], s->w_rows[0],
                            s->cols, (float *)at(c->b, s->out) + first * s->cols, count * s->cols,
                            s->cols);
}

/* Also writes the bf16 copy of its rows that the next linears read, where the step has one. */
static int residual_layer_norm_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t n = count * s->cols, at_row = first * s->cols;
    uint16_t *y16 = copy_at(c->b, s->out_copy);
    (void)worker;
    /* bf16 programs: float statistics, x and the residual read once */
    return (c->bf16 ? ck_residual_layer_norm_f32_f32bf16 : ck_residual_layer_norm_f32_f32bf16_f64acc)(
        (const float *)at(c->b, s->in[0]) + at_row, n, s->cols, (const float *)at(c->b, s->in[1]) + at_row, n,
        s->cols, s->w[0], s->w[1], (float *)at(c->b, s->out) + at_row, n, s->cols,
        y16 != NULL ? y16 + at_row : NULL, n, s->cols, count, s->cols, s->eps);
}

static int gelu_new_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    size_t n = count * c->s->cols, at_row = first * c->s->cols;
    (void)worker;
    return ck_gelu_new_f32((const float *)at(c->b, c->s->in[0]) + at_row, n,
                           (float *)at(c->b, c->s->out) + at_row, n, n);
}

static int leaky_relu_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    size_t n = count * c->s->cols, at_row = first * c->s->cols;
    (void)worker;
    return ck_leaky_relu_f32((const float *)at(c->b, c->s->in[0]) + at_row, n,
                             (float *)at(c->b, c->s->out) + at_row, n, n, c->s->scale);
}

static int add_scaled_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    size_t n = count * c->s->cols, at_row = first * c->s->cols;
    (void)worker;
    return ck_add_scaled_f32((const float *)at(c->b, c->s->in[0]) + at_row, n,
                             (const float *)at(c->b, c->s->in[1]) + at_row, n,
                             (float *)at(c->b, c->s->out) + at_row, n, n, c->s->scale);
}

static int concat_cols_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t a = s->linear_in_cols, z = s->cols - a, rows = first + count;
    (void)worker;
    return ck_concat_cols_f32((const float *)at(c->b, s->in[0]), rows * a, a, a,
                              (const float *)at(c->b, s->in[1]), rows * z, z, z,
                              (float *)at(c->b, s->out), rows * s->cols, s->cols, first, rows);
}

static int layer_norm_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t n = count * s->cols, at_row = first * s->cols;
    (void)worker;
    return ck_layer_norm_f32_f64acc((const float *)at(c->b, s->in[0]) + at_row, n, s->cols, s->w[0],
                                    s->w[1], (float *)at(c->b, s->out) + at_row, n, s->cols, count,
                                    s->cols, s->eps);
}

/* One (sequence, head) pair from bf16 copies of q, k, v (AMX heads), into the f32 context or,
 * where the step has one, only into its bf16 copy (what the output projection reads). */
static int head_bf16_in(const step_ctx *c, const ck_arena *scratch, size_t row, size_t len,
                        size_t head)
{
    const ck_step_batch *b = c->b;
    const ck_step_args *s = c->s;
    size_t cols = s->cols, avail = (b->tokens - row) * cols, first = row * cols;
    const uint16_t *q = copy_at(b, s->in_copy[0]) + first, *k = copy_at(b, s->in_copy[1]) + first,
                   *v = copy_at(b, s->in_copy[2]) + first;
    if (s->out_copy != CK_NO_COPY) {
        return ck_attention_head_bf16__amx(q, avail, k, avail, v, avail, cols, copy_at(b, s->out_copy) + first,
                                           avail, cols, scratch->base, scratch->bytes / sizeof(float), len, head,
                                           s->head_dim, s->scale);
    }
    return ck_attention_head_bf16_f32__amx(q, avail, k, avail, v, avail, cols, (float *)at(b, s->out) + first, avail,
                                           cols, scratch->base, scratch->bytes / sizeof(float), len, head,
                                           s->head_dim, s->scale);
}

/* One (sequence, head) pair from f32 q, k, v: the AMX heads in the bf16 variant, else f32. */
static int head_f32_in(const step_ctx *c, const ck_arena *scratch, size_t row, size_t len,
                       size_t head)
{
    const ck_step_batch *b = c->b;
    const ck_step_args *s = c->s;
    size_t cols = s->cols, avail = (b->tokens - row) * cols, first = row * cols;
    return (c->bf16 ? ck_attention_head_f32__amx : ck_attention_head_f32)(
        (const float *)at(b, s->in[0]) + first, avail, (const float *)at(b, s->in[1]) + first,
        avail, (const float *)at(b, s->in[2]) + first, avail, cols, (float *)at(b, s->out) + first,
        avail, cols, scratch->base, scratch->bytes / sizeof(float), len, head, s->head_dim,
        s->scale);
}

/* Item p is (sequence p / heads, head p % heads): each head of each sequence is computed whole by
 * one worker in its own scratch arena, so its bits do not depend on the thread count. */
static int attention_pairs(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    const ck_arena *scratch = &c->b->scratch[worker];
    int copies = s->in_copy[0] != CK_NO_COPY;
    for (size_t p = first; p < first + count; p++) {
        size_t seq = p / s->heads, row = c->b->offsets[seq];
        size_t len = c->b->offsets[seq + 1] - row;
        int rc = copies ? head_bf16_in(c, scratch, row, len, p % s->heads)
                        : head_f32_in(c, scratch, row, len, p % s->heads);
        if (rc != CK_OK) {
            return rc;
        }
    }
    return CK_OK;
}

/* Each worker multiplies its own contiguous blocks of CK_LINEAR_ROW_BLOCK rows on its own oneDNN
 * lane, single-threaded (M = its rows, in full tiles). The last block may run past the batch's
 * last token into the rows the planner added (plan row_block): those results are never read. A
 * row's bits do not depend on which worker or tile computes it (linear.h). */
static int linear_blocks(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t in = s->linear_in_cols, out = s->cols;
    size_t row = first * CK_LINEAR_ROW_BLOCK, rows = count * CK_LINEAR_ROW_BLOCK;
    const uint16_t *x16 = copy_at(c->b, s->in_copy[0]);
    uint16_t *y16 = copy_at(c->b, s->out_copy);
    float *y = (float *)at(c->b, s->out) + row * out;
    if (x16 != NULL && y16 != NULL) { /* bf16 in, bf16 out: the FFN in, q, k, v */
        return ck_linear_forward_bf16(s->linear, worker, x16 + row * in, rows * in, in,
                                      y16 + row * out, rows * out, out, rows);
    }
    if (x16 != NULL) {
        return ck_linear_forward_bf16_f32(s->linear, worker, x16 + row * in, rows * in, in, y,
                                          rows * out, out, rows);
    }
    return ck_linear_forward_f32(s->linear, worker, (const float *)at(c->b, s->in[0]) + row * in,
                                 rows * in, in, y, rows * out, out, rows);
}

/* A worker's rows in tiles of CK_CONV1D_TILE_ROWS: the tile's im2col rows (per-sequence 'same'
 * padding) into its scratch, then the packed-weight linear on its own lane. Each output row is the
 * linear of its own im2col row, so its bits depend on neither the tile, the batch nor the worker. */
static int conv1d_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    const ck_arena *scratch = &c->b->scratch[worker];
    size_t width = s->linear_in_cols, cin = width / s->taps, out = s->cols;
    const float *x = at(c->b, s->in[0]);
    float *y = at(c->b, s->out);
    const size_t tile = c->bf16 ? CK_CONV1D_TILE_ROWS_BF16 : CK_CONV1D_TILE_ROWS;
    int rc = CK_OK;
    for (size_t row = first; rc == CK_OK && row < first + count; row += tile) {
        size_t n = first + count - row < tile ? first + count - row : tile;
        /* dilation 0: args without the generator's fields (generated code): 'same' */
        rc = s->dilation == 0 || (s->out_offsets == NULL && s->dilation == 1 && s->stride == 1 &&
                                  s->padding == (s->taps - 1) / 2)
                 ? ck_conv1d_im2col_f32(x, c->b->tokens * cin, cin, c->b->offsets, c->b->n_seqs,
                                        row, n, cin, s->taps, scratch->base,
                                        scratch->bytes / sizeof(float))
                 : ck_conv1d_im2col_general_f32(
                       x, c->b->tokens * cin, cin, c->b->offsets,
                       s->out_offsets != NULL ? s->out_offsets : c->b->offsets, c->b->n_seqs, row,
                       n, cin, s->taps, s->dilation ? s->dilation : 1, s->stride ? s->stride : 1,
                       s->padding, scratch->base, scratch->bytes / sizeof(float));
        rc = rc ? rc : ck_linear_forward_f32(s->linear, worker, scratch->base, n * width, width,
                                             y + row * out, n * out, out, n);
    }
    return rc;
}

/* Item p is (direction p % 2, sequence p / 2): the forward recurrence into the left half of h
 * [T, 2H], the reverse one into the right half, each sequence whole by one worker in its scratch. */
static int lstm_items(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    const ck_arena *scratch = &c->b->scratch[worker];
    size_t hidden = s->cols / 2, t = c->b->tokens;
    float *h = at(c->b, s->out);
    int rc = CK_OK;
    for (size_t p = first; rc == CK_OK && p < first + count; p++) {
        size_t seq = p / 2, dir = p % 2;
        rc = ck_lstm_recurrence_f32((const float *)at(c->b, s->in[dir]), t * 4 * hidden, 4 * hidden,
                                    s->w[2 * dir], 4 * hidden * hidden, s->w[2 * dir + 1],
                                    4 * hidden, h + dir * hidden, t * s->cols - dir * hidden,
                                    s->cols, scratch->base, scratch->bytes / sizeof(float),
                                    c->b->offsets, c->b->n_seqs, seq, seq + 1, hidden, (int)dir);
    }
    return rc;
}

int ck_step_lstm_recurrence(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for_interleaved(b->n_seqs * 2, b->threads, lstm_items, &ctx);
}

int ck_step_embedding_table(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, embedding_table_rows, &ctx);
}

/* Sequences [first, first + count): rows followed by the sequence's style columns
 * [style_offset, style_offset + D), one kernel call per sequence (its style row at that column). */
static int concat_style_seqs(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    const ck_step_batch *b = c->b;
    size_t d = s->linear_in_cols, in = s->cols - d, t = b->tokens;
    int rc = CK_OK;
    (void)worker;
    for (size_t q = first; rc == CK_OK && q < first + count; q++) {
        const size_t one[2] = {b->offsets[q], b->offsets[q + 1]};
        rc = ck_concat_style_f32((const float *)at(b, s->in[0]), t * in, in,
                                 b->style + q * b->style_cols + s->style_offset, d, d,
                                 (float *)at(b, s->out), t * s->cols, s->cols, one, 1, 0, 1, in);
    }
    return rc;
}

int ck_step_concat_style(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    if (b->style == NULL || s->linear_in_cols == 0 || s->linear_in_cols >= s->cols ||
        b->style_cols < s->style_offset + s->linear_in_cols) {
        return CK_E_ARG; /* the circuit wants a style the batch does not carry, or a wider one */
    }
    return ck_parallel_for(b->n_seqs, b->threads, concat_style_seqs, &ctx);
}

/* Sequence by sequence: gamma | beta = fc(style[s]) (its linear, one row, into the worker's
 * scratch [2C]), then ck_ada_layer_norm_f32 over the sequence's rows. */
static int ada_layer_norm_seqs(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    const ck_step_batch *b = c->b;
    float *gb = b->scratch[worker].base;
    size_t ch = s->cols, t = b->tokens, d = s->linear_in_cols;
    int rc = CK_OK;
    for (size_t q = first; rc == CK_OK && q < first + count; q++) {
        const size_t one[2] = {b->offsets[q], b->offsets[q + 1]};
        rc = ck_linear_forward_f32(s->linear, worker, b->style + q * b->style_cols + s->style_offset,
                                   d, d, gb, 2 * ch, 2 * ch, 1);
        rc = rc ? rc : ck_ada_layer_norm_f32((const float *)at(b, s->in[0]), t * ch, ch, gb, ch,
                                             gb + ch, ch, (float *)at(b, s->out), t * ch, ch, one,
                                             1, 0, 1, ch, s->eps);
    }
    return rc;
}

/* Channels per block of the AdaIN steps (adain_instance_norm, adain_snake): a sequence's
 * statistics are per channel, so blocks give the same bits as whole sequences and a batch of fewer
 * sequences than workers still fills them. A multiple of CK_INSTANCE_BLOCK. */
#define ADAIN_CHANNEL_BLOCK 32

/* The AdaIN steps' work (adain_instance_norm, adain_snake): worker w of W owns the rows
 * [w T / W, (w + 1) T / W) of the batch, as the row-split steps before it wrote them. A sequence
 * inside one worker's rows is that worker's, every channel; a sequence across the boundary of
 * several is split between them by channel blocks (B blocks of ADAIN_CHANNEL_BLOCK channels), in
 * proportion to the rows each owns: worker w gets blocks [B (a - o) / len, B (z - o) / len) of
 * sequence rows [o, o + len), [a, z) its part of them. So each worker gets about T / W rows' worth
 * whatever the lengths, mostly rows it wrote itself (in its cache), and computes gamma | beta =
 * fc(style[q]) (its linear, one row, into its scratch [2C]) once per sequence it has a part of. */
typedef struct {
    step_ctx step;
    int snake; /* 1: ck_adain_snake_f32 (w[2] alpha), 0: ck_adain_instance_norm_f32 */
    size_t shares; /* W */
} adain_ctx;

static int adain_shares(void *ctx, size_t first, size_t count, int worker)
{
    const adain_ctx *a = ctx;
    const ck_step_args *s = a->step.s;
    const ck_step_batch *b = a->step.b;
    float *gb = b->scratch[worker].base;
    const size_t ch = s->cols, t = b->tokens, d = s->linear_in_cols, w_n = a->shares;
    const size_t blocks = (ch + ADAIN_CHANNEL_BLOCK - 1) / ADAIN_CHANNEL_BLOCK;
    const float *x = at(b, s->in[0]);
    float *y = at(b, s->out);
    int rc = CK_OK;
    for (size_t w = first; w < first + count; w++) {
        const size_t r0 = w * t / w_n, r1 = (w + 1) * t / w_n;
        for (size_t q = 0; rc == CK_OK && q < b->n_seqs; q++) {
            const size_t o = b->offsets[q], len = b->offsets[q + 1] - o;
            const size_t from = r0 > o ? r0 : o, to = r1 < o + len ? r1 : o + len;
            const size_t one[2] = {o, o + len};
            if (from >= to) {
                continue;
            }
            const size_t lo = blocks * (from - o) / len, hi = blocks * (to - o) / len;
            if (lo == hi) {
                continue;
            }
            rc = ck_linear_forward_f32(s->linear, worker,
                                       b->style + q * b->style_cols + s->style_offset, d, d, gb,
                                       2 * ch, 2 * ch, 1);
            for (size_t k = lo; rc == CK_OK && k < hi; k++) {
                const size_t c0 = k * ADAIN_CHANNEL_BLOCK;
                const size_t n = ch - c0 < ADAIN_CHANNEL_BLOCK ? ch - c0 : ADAIN_CHANNEL_BLOCK;
                rc = a->snake ? ck_adain_snake_f32(x + c0, t * ch - c0, ch, gb + c0, n,
                                                   gb + ch + c0, n, s->w[2] + c0, n, y + c0,
                                                   t * ch - c0, ch, one, 1, 0, 1, n, s->eps)
                              : ck_adain_instance_norm_f32(x + c0, t * ch - c0, ch, gb + c0, n,
                                                           gb + ch + c0, n, y + c0, t * ch - c0,
                                                           ch, one, 1, 0, 1, n, s->eps);
            }
        }
    }
    return rc;
}

static int adain_run(const ck_step_batch *b, const ck_step_args *s, int snake)
{
    if (b->style == NULL || b->style_cols < s->style_offset + s->linear_in_cols) {
        return CK_E_ARG;
    }
    size_t shares = b->threads > 1 ? (size_t)b->threads : 1;
    adain_ctx ctx = {{b, s, 0}, snake, shares};
    return ck_parallel_for(shares, b->threads, adain_shares, &ctx);
}

int ck_step_adain_instance_norm(const ck_step_batch *b, const ck_step_args *s)
{
    return adain_run(b, s, 0);
}

/* Sequences [first, first + count) of the token batch: their tokens' rows into their frames, the
 * first frame after the frames of every token before them. */
static int expand_seqs(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    const ck_step_batch *b = c->b;
    const int32_t *frames = at(b, s->in[1]);
    size_t begin = b->offsets[first], end = b->offsets[first + count], before = 0, span = 0;
    (void)worker;
    int rc = ck_expand_rows_frames(frames, b->tokens, 0, begin, &before);
    rc = rc ? rc : ck_expand_rows_frames(frames, b->tokens, begin, end, &span);
    return rc ? rc : ck_expand_rows_f32((const float *)at(b, s->in[0]), b->tokens * s->cols,
                                        s->cols, frames, b->tokens, (float *)at(b, s->out),
                                        (before + span) * s->cols, s->cols, begin, end, before,
                                        s->cols);
}

int ck_step_expand_rows(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->n_seqs, b->threads, expand_seqs, &ctx);
}

static int upsample_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t rows = c->b->tokens;
    (void)worker;
    return ck_upsample_nearest2_rows_f32((const float *)at(c->b, s->in[0]), rows * s->cols, s->cols,
                                         (float *)at(c->b, s->out), 2 * rows * s->cols, s->cols,
                                         first, first + count, s->cols);
}

int ck_step_upsample_nearest2_rows(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, upsample_rows, &ctx);
}

static int conv_transpose_seqs(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t rows = c->b->tokens, ch = s->cols;
    (void)worker;
    return ck_conv_transpose1d_depthwise_k3s2_f32((const float *)at(c->b, s->in[0]), rows * ch, ch,
                                                  s->w[0], 3 * ch, s->w[1], ch,
                                                  (float *)at(c->b, s->out), 2 * rows * ch, ch,
                                                  c->b->offsets, c->b->n_seqs, first, first + count,
                                                  ch);
}

int ck_step_conv_transpose1d_depthwise_k3s2(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->n_seqs, b->threads, conv_transpose_seqs, &ctx);
}

int ck_step_ada_layer_norm(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    if (b->style == NULL || b->style_cols < s->style_offset + s->linear_in_cols) {
        return CK_E_ARG; /* no style, or not the fc's width */
    }
    return ck_parallel_for(b->n_seqs, b->threads, ada_layer_norm_seqs, &ctx);
}

/* Sequences [first, first + count): frames per token from the logits and the sequence's speed. */
static int duration_seqs(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t bins = s->linear_in_cols, t = c->b->tokens;
    (void)worker;
    return ck_duration_frames_f32((const float *)at(c->b, s->in[0]), t * bins, bins, c->b->speed,
                                  c->b->n_seqs, (int32_t *)at(c->b, s->out), t, NULL, 0,
                                  c->b->offsets, c->b->n_seqs, first, first + count, bins);
}

int ck_step_duration(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    if (b->speed == NULL) {
        return CK_E_ARG; /* the batch carries no speed */
    }
    return ck_parallel_for(b->n_seqs, b->threads, duration_seqs, &ctx);
}

static int conv1d_run(const ck_step_batch *b, const ck_step_args *s, int bf16)
{
    step_ctx ctx = {b, s, bf16};
    /* out's rows: the batch's, or a strided conv's fewer */
    size_t rows = s->out_offsets != NULL ? s->out_offsets[b->n_seqs] : b->tokens;
    return ck_parallel_for(rows, b->threads, conv1d_rows, &ctx);
}

int ck_step_conv1d(const ck_step_batch *b, const ck_step_args *s)
{
    return conv1d_run(b, s, 0);
}

int ck_step_conv1d_bf16(const ck_step_batch *b, const ck_step_args *s)
{
    return conv1d_run(b, s, 1);
}

/* ---- row-local runs ---- */

/* Zeroes x's rows [from, to) (to: the end of the last block, past T), and its copy's: the copy is
 * what a bf16 linear reads. */
static void zero_pad_rows(const ck_step_batch *b, const ck_step_args *s, size_t from, size_t to)
{
    uint16_t *x16 = copy_at(b, s->in_copy[0]);
    size_t k = s->linear_in_cols;
    memset((float *)at(b, s->in[0]) + from * k, 0, (to - from) * k * sizeof(float));
    if (x16 != NULL) {
        memset(x16 + from * k, 0, (to - from) * k * sizeof *x16);
    }
}

int ck_step_linear(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    size_t blocks = (b->tokens + CK_LINEAR_ROW_BLOCK - 1) / CK_LINEAR_ROW_BLOCK;
    zero_pad_rows(b, s, b->tokens, blocks * CK_LINEAR_ROW_BLOCK);
    return ck_parallel_for(blocks, b->threads, linear_blocks, &ctx);
}

int ck_step_linear_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                        int worker)
{
    step_ctx ctx = {b, s, 0};
    if (row + rows > b->tokens) { /* the last block: its padding rows from zeros, as ck_step_linear */
        zero_pad_rows(b, s, row > b->tokens ? row : b->tokens, row + rows);
    }
    return linear_blocks(&ctx, row / CK_LINEAR_ROW_BLOCK, rows / CK_LINEAR_ROW_BLOCK, worker);
}

/* how many rows of [row, row + rows) are below T */
static size_t real_rows(const ck_step_batch *b, size_t row, size_t rows)
{
    return row >= b->tokens ? 0 : row + rows > b->tokens ? b->tokens - row : rows;
}

int ck_step_residual_layer_norm_rows(const ck_step_batch *b, const ck_step_args *s, size_t row,
                                     size_t rows, int worker)
{
    step_ctx ctx = {b, s, 0};
    size_t n = real_rows(b, row, rows);
    return n > 0 ? residual_layer_norm_rows(&ctx, row, n, worker) : CK_OK;
}

int ck_step_residual_layer_norm_bf16_rows(const ck_step_batch *b, const ck_step_args *s,
                                          size_t row, size_t rows, int worker)
{
    step_ctx ctx = {b, s, 1};
    size_t n = real_rows(b, row, rows);
    return n > 0 ? residual_layer_norm_rows(&ctx, row, n, worker) : CK_OK;
}

int ck_step_gelu_new_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                          int worker)
{
    step_ctx ctx = {b, s, 0};
    size_t n = real_rows(b, row, rows);
    return n > 0 ? gelu_new_rows(&ctx, row, n, worker) : CK_OK;
}

int ck_step_leaky_relu_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                            int worker)
{
    step_ctx ctx = {b, s, 0};
    size_t n = real_rows(b, row, rows);
    return n > 0 ? leaky_relu_rows(&ctx, row, n, worker) : CK_OK;
}

int ck_step_add_scaled_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                            int worker)
{
    step_ctx ctx = {b, s, 0};
    size_t n = real_rows(b, row, rows);
    return n > 0 ? add_scaled_rows(&ctx, row, n, worker) : CK_OK;
}

int ck_step_concat_cols_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                             int worker)
{
    step_ctx ctx = {b, s, 0};
    size_t n = real_rows(b, row, rows);
    return n > 0 ? concat_cols_rows(&ctx, row, n, worker) : CK_OK;
}

int ck_step_layer_norm_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                            int worker)
{
    step_ctx ctx = {b, s, 0};
    size_t n = real_rows(b, row, rows);
    return n > 0 ? layer_norm_rows(&ctx, row, n, worker) : CK_OK;
}

typedef struct {
    const ck_step_batch *b;
    const ck_step_row_item *items;
    size_t n;
    double *seconds;
} rows_ctx;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One slice, blocks [first, first + count) (at most CK_LINEAR_TILE_ROWS rows), through every item */
static int run_blocks(void *ctx, size_t first, size_t count, int worker)
{
    const rows_ctx *c = ctx;
    double *seconds = worker == 0 ? c->seconds : NULL;
    for (size_t i = 0; i < c->n; i++) {
        const ck_step_row_item *it = &c->items[i];
        double t0 = seconds != NULL ? now_seconds() : 0.0;
        int rc = it->rows(c->b, it->args, first * CK_LINEAR_ROW_BLOCK, count * CK_LINEAR_ROW_BLOCK,
                          worker);
        if (seconds != NULL) {
            seconds[it->timer] += now_seconds() - t0;
        }
        if (rc != CK_OK) {
            return rc;
        }
    }
    return CK_OK;
}

size_t ck_step_rows_slice(size_t tokens, int threads)
{
    const size_t tile = CK_LINEAR_TILE_ROWS / CK_LINEAR_ROW_BLOCK;
    size_t blocks = (tokens + CK_LINEAR_ROW_BLOCK - 1) / CK_LINEAR_ROW_BLOCK;
    if (threads <= 1 || blocks == 0) {
        return tile;
    }
    /* one slice per worker when the rows are few: the even split (a worker the machine holds up
     * leaves its slice to the others, who take it when they are done) */
    size_t chunk = (blocks + (size_t)threads - 1) / (size_t)threads;
    return chunk > tile ? tile : chunk;
}

int ck_step_rows(const ck_step_batch *b, const ck_step_row_item *items, size_t n,
                 double *seconds)
{
    if (b == NULL || (items == NULL && n > 0)) {
        return CK_E_ARG;
    }
    for (size_t i = 0; i < n; i++) {
        if (items[i].rows == NULL || items[i].args == NULL || items[i].timer < 0) {
            return CK_E_ARG;
        }
    }
    rows_ctx ctx = {b, items, n, seconds};
    size_t blocks = (b->tokens + CK_LINEAR_ROW_BLOCK - 1) / CK_LINEAR_ROW_BLOCK;
    return n > 0 ? ck_parallel_for_dynamic(blocks, ck_step_rows_slice(b->tokens, b->threads),
                                           b->threads, run_blocks, &ctx)
                 : CK_OK;
}

int ck_step_embedding(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, embedding_rows, &ctx);
}

int ck_step_attention(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for_interleaved(b->n_seqs * s->heads, b->threads, attention_pairs, &ctx);
}

int ck_step_attention_bf16(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 1};
    return ck_parallel_for_interleaved(b->n_seqs * s->heads, b->threads, attention_pairs, &ctx);
}

int ck_step_residual_layer_norm(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, residual_layer_norm_rows, &ctx);
}

int ck_step_residual_layer_norm_bf16(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 1};
    return ck_parallel_for(b->tokens, b->threads, residual_layer_norm_rows, &ctx);
}

int ck_step_gelu_new(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, gelu_new_rows, &ctx);
}

int ck_step_leaky_relu(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, leaky_relu_rows, &ctx);
}

int ck_step_add_scaled(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, add_scaled_rows, &ctx);
}

int ck_step_concat_cols(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, concat_cols_rows, &ctx);
}

/* Output rows [first, first + count) of the halved batch (the batch is the input's 2R rows). */
static int downsample_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_args *s = c->s;
    size_t rows = c->b->tokens;
    (void)worker;
    return ck_downsample2_rows_f32((const float *)at(c->b, s->in[0]), rows * s->cols, s->cols,
                                   (float *)at(c->b, s->out), rows / 2 * s->cols, s->cols, first,
                                   first + count, s->cols);
}

int ck_step_downsample2_rows(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens / 2, b->threads, downsample_rows, &ctx);
}

int ck_step_layer_norm(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->tokens, b->threads, layer_norm_rows, &ctx);
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

int ck_step_check_finite(const ck_step_batch *b, size_t offset, size_t cols)
{
    finite_ctx ctx = {at(b, offset), cols};
    return ck_parallel_for(b->tokens, b->threads, finite_rows, &ctx);
}

void ck_step_widen_copy(const ck_step_batch *b, size_t copy, size_t out, size_t cols)
{
    const uint16_t *h = copy_at(b, copy);
    float *y = at(b, out);
    for (size_t e = 0; e < b->tokens * cols; e++) {
        y[e] = ck_bf16_to_f32(h[e]);
    }
}

/* ---- the generator ---- */

/* Rows of out in the batch being run (its per-sequence offsets, else the batch's). */
static const size_t *out_offsets_of(const ck_step_batch *b, const ck_step_args *s)
{
    return s->out_offsets != NULL ? s->out_offsets : b->offsets;
}

/* The sequence owning out row t (offsets ascending, t below the last). */
static size_t seq_of_row(const size_t *o, size_t n, size_t t)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (o[mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Out rows [first, first + count) (samples of the batch): each sequence's part of them, the fed
 * rows copied or its counter noise drawn for those samples (a value depends only on its own
 * (seed, line, chunk, sample, harmonic): any split gives the same bits). */
static int noise_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_batch *b = c->b;
    const size_t *o = out_offsets_of(b, c->s), end = first + count;
    float *y = at(b, c->s->out);
    int rc = CK_OK;
    (void)worker;
    for (size_t q = count ? seq_of_row(o, b->n_seqs, first) : b->n_seqs;
         rc == CK_OK && q < b->n_seqs && o[q] < end; q++) {
        size_t len = o[q + 1] - o[q];
        size_t lo = first > o[q] ? first - o[q] : 0, hi = end < o[q + 1] ? end - o[q] : len;
        if (b->noise != NULL) {
            memcpy(y + (o[q] + lo) * 9, b->noise + (o[q] + lo) * 9, (hi - lo) * 9 * sizeof(float));
            continue;
        }
        uint64_t line = b->noise_line != NULL ? b->noise_line[q] : 0;
        rc = line > UINT32_MAX ? CK_E_ARG
                               : ck_noise_normal_f32(b->noise_seed, (uint32_t)line,
                                                     b->noise_chunk != NULL ? b->noise_chunk[q] : 0,
                                                     y + o[q] * 9, len * 9, 9, lo, hi, 9);
    }
    return rc;
}

int ck_step_noise_normal(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    const size_t *o = out_offsets_of(b, s);
    if (s->cols != 9 || (b->noise != NULL && b->noise_rows != o[b->n_seqs])) {
        return CK_E_SIZE;
    }
    return ck_parallel_for(o[b->n_seqs], b->threads, noise_rows, &ctx);
}

static int source_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_batch *b = c->b;
    const ck_step_args *s = c->s;
    const size_t *o = out_offsets_of(b, s), end = first + count;
    const ck_arena *scratch = &b->scratch[worker];
    const float *f0 = at(b, s->in[0]), *noise = at(b, s->in[1]);
    float *y = at(b, s->out);
    int rc = CK_OK;
    for (size_t q = count ? seq_of_row(o, b->n_seqs, first) : b->n_seqs;
         rc == CK_OK && q < b->n_seqs && o[q] < end; q++) {
        size_t p = b->offsets[q + 1] - b->offsets[q], len = o[q + 1] - o[q];
        size_t lo = first > o[q] ? first - o[q] : 0, hi = end < o[q + 1] ? end - o[q] : len;
        rc = ck_harmonic_source_f32(f0 + b->offsets[q], p, p, noise + o[q] * 9, len * 9, 9,
                                    b->noise_scale, s->w[0], s->w[1], scratch->base,
                                    scratch->bytes / sizeof(float), y + o[q], len, lo, hi);
    }
    return rc;
}

int ck_step_harmonic_source(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(out_offsets_of(b, s)[b->n_seqs], b->threads, source_rows, &ctx);
}

static int stft_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_batch *b = c->b;
    const ck_step_args *s = c->s;
    const size_t *o = out_offsets_of(b, s), end = first + count;
    const float *x = at(b, s->in[0]);
    float *y = at(b, s->out);
    int rc = CK_OK;
    (void)worker;
    for (size_t q = count ? seq_of_row(o, b->n_seqs, first) : b->n_seqs;
         rc == CK_OK && q < b->n_seqs && o[q] < end; q++) {
        size_t len = b->offsets[q + 1] - b->offsets[q], frames = o[q + 1] - o[q];
        size_t lo = first > o[q] ? first - o[q] : 0, hi = end < o[q + 1] ? end - o[q] : frames;
        rc = ck_stft20_f32(x + b->offsets[q], len, len, y + o[q] * s->cols, frames * s->cols,
                           s->cols, lo, hi);
    }
    return rc;
}

int ck_step_stft20(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(out_offsets_of(b, s)[b->n_seqs], b->threads, stft_rows, &ctx);
}

static int istft_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_batch *b = c->b;
    const ck_step_args *s = c->s;
    const size_t *o = out_offsets_of(b, s), end = first + count, in_cols = 22;
    const float *x = at(b, s->in[0]);
    float *y = at(b, s->out);
    int rc = CK_OK;
    (void)worker;
    for (size_t q = count ? seq_of_row(o, b->n_seqs, first) : b->n_seqs;
         rc == CK_OK && q < b->n_seqs && o[q] < end; q++) {
        size_t frames = b->offsets[q + 1] - b->offsets[q], len = o[q + 1] - o[q];
        size_t lo = first > o[q] ? first - o[q] : 0, hi = end < o[q + 1] ? end - o[q] : len;
        rc = ck_istft20_f32(x + b->offsets[q] * in_cols, frames * in_cols, in_cols, frames,
                            y + o[q], len, lo, hi);
    }
    return rc;
}

int ck_step_istft20(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(out_offsets_of(b, s)[b->n_seqs], b->threads, istft_rows, &ctx);
}

static int reflect_seqs(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_batch *b = c->b;
    size_t ch = c->s->cols;
    (void)worker;
    return ck_reflect_pad_left1_f32((const float *)at(b, c->s->in[0]), b->tokens * ch, ch,
                                    (float *)at(b, c->s->out), (b->tokens + b->n_seqs) * ch, ch,
                                    b->offsets, b->n_seqs, first, first + count, ch);
}

int ck_step_reflect_pad_left1(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(b->n_seqs, b->threads, reflect_seqs, &ctx);
}

int ck_step_adain_snake(const ck_step_batch *b, const ck_step_args *s)
{
    return adain_run(b, s, 1);
}

/* Out rows [first, first + count) in tiles of CK_CONV1D_TILE_ROWS input frames' worth: the GEMM of
 * the input frames a tile reads into the worker's scratch, then the tile's col2im. */
static int conv_transpose_col2im_rows(void *ctx, size_t first, size_t count, int worker)
{
    const step_ctx *c = ctx;
    const ck_step_batch *b = c->b;
    const ck_step_args *s = c->s;
    const ck_arena *scratch = &b->scratch[worker];
    const size_t st = s->stride, k = s->taps, p = s->padding, ch = s->cols, width = k * ch;
    const size_t cin = s->linear_in_cols, end = first + count;
    /* input frames a tile covers: bf16, so that the GEMM's rows (the tile's plus k / st + 2 that
     * overlap it) fill one 256-row tile of the bf16 linear */
    const size_t tile = c->bf16 ? CK_CONV1D_TILE_ROWS_BF16 - k / st - 2 : CK_CONV1D_TILE_ROWS;
    const float *x = at(b, s->in[0]);
    float *y = at(b, s->out), *z = scratch->base;
    int rc = CK_OK;
    for (size_t q = count ? seq_of_row(b->offsets, b->n_seqs, first / st) : b->n_seqs;
         rc == CK_OK && q < b->n_seqs && st * b->offsets[q] < end; q++) {
        size_t len = b->offsets[q + 1] - b->offsets[q], base = st * b->offsets[q];
        size_t lo = first > base ? first - base : 0, hi = end < base + st * len ? end - base : st * len;
        for (size_t o0 = lo; rc == CK_OK && o0 < hi; o0 += tile * st) {
            size_t o1 = hi - o0 < tile * st ? hi : o0 + tile * st;
            size_t q0 = o0 + p, q1 = o1 - 1 + p;
            size_t l0 = q0 + 1 > k ? (q0 + 1 - k + st - 1) / st : 0;
            size_t l1 = q1 / st < len - 1 ? q1 / st : len - 1, n = l1 + 1 - l0;
            if (n * width > scratch->bytes / sizeof(float)) {
                return CK_E_SIZE;
            }
            rc = ck_linear_forward_f32(s->linear, worker, x + (b->offsets[q] + l0) * cin, n * cin,
                                       cin, z, n * width, width, n);
            rc = rc ? rc : ck_conv_transpose1d_col2im_tile_f32(z, n * width, width, l0, len, s->w[1],
                                                               ch, y + base * ch, st * len * ch, ch,
                                                               o0, o1, ch, k, st, p);
        }
    }
    return rc;
}

int ck_step_conv_transpose1d_col2im(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 0};
    return ck_parallel_for(s->stride * b->tokens, b->threads, conv_transpose_col2im_rows, &ctx);
}

int ck_step_conv_transpose1d_col2im_bf16(const ck_step_batch *b, const ck_step_args *s)
{
    step_ctx ctx = {b, s, 1};
    return ck_parallel_for(s->stride * b->tokens, b->threads, conv_transpose_col2im_rows, &ctx);
}
