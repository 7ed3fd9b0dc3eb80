/* steps.h - the one slicing of each op kind's work over the workers, which the interpreter
 * (engine/graph/executor.c) and every generated library (engine/codegen/prelude.inc) call: a
 * step's token rows, row blocks or (sequence, head) pairs go to the workers through
 * ck_parallel_for and each worker calls the kernel a single thread would. Knows buffers by arena
 * offset only: no circuits, no names, no allocation.
 *
 * Legend: T tokens in the packed batch, S sequences, K a linear's input cols, cols a buffer's
 * per-token width. Every buffer is [T, cols] row-major with row stride cols. */
#ifndef CK_STEPS_H
#define CK_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "linear.h"

/* An input slot or output without a bf16 copy. */
#define CK_NO_COPY SIZE_MAX

/* The batch being run and where its buffers live. */
typedef struct {
    void *arena;             /* activation arena: the planned f32/i32 buffers at byte offsets */
    void *copies;            /* bf16 copy arena (the lowered program's copies), NULL when none */
    const ck_arena *scratch; /* [threads] per-worker scratch (attention) */
    int threads;             /* workers */
    size_t tokens;           /* T */
    const size_t *offsets;   /* [S + 1] first token of each sequence, then T */
    size_t n_seqs;           /* S */
    const float *style;      /* [S, style_cols] per-sequence style (concat_style, ada_layer_norm),
                                NULL when the batch has none */
    size_t style_cols;
    const float *speed;      /* [S] per-sequence speed (duration), NULL when none */
    const float *noise;      /* the generator's source noise fed as a tensor [noise_rows, 9]:
                                the batch's samples, sequences back to back (600 x each
                                sequence's frames rows); NULL: drawn by ck_noise_normal_f32 */
    size_t noise_rows;
    uint64_t noise_seed;     /* counter noise: the key (ck_noise_normal_f32) */
    const uint64_t *noise_line;  /* [S] each sequence's line, NULL: 0 */
    const uint32_t *noise_chunk; /* [S] each sequence's chunk, NULL: 0 */
    float noise_scale;       /* multiplies the noise (Kokoro 1, 0 none) */
} ck_step_batch;

/* Input and weight slots a step may have (engine/graph asserts it equals its CK_MAX_SLOTS). */
#define CK_STEP_MAX_SLOTS 6

/* One step's operands: what the lowered program says (ck_step) with its bound tensors, bound once
 * when the program is lowered; generated code writes the same values as constants. */
typedef struct {
    size_t in[CK_STEP_MAX_SLOTS];      /* byte offsets of the input slots in the arena */
    size_t in_copy[CK_STEP_MAX_SLOTS]; /* byte offset in the copy arena of the bf16 copy a slot
                                          reads instead of its f32 buffer, or CK_NO_COPY (a
                                          linear's x; attention's q, k, v) */
    size_t linear_in_cols; /* linear: K */
    size_t out, cols;      /* byte offset of the output in the arena and its cols */
    size_t out_copy;       /* byte offset of the bf16 copy written, or CK_NO_COPY: a LayerNorm
                              writes it beside its f32 rows, a linear or an AMX attention step
                              instead of them */
    const float *w[CK_STEP_MAX_SLOTS]; /* embedding: word, position, token type, gamma, beta;
                                          LayerNorm: gamma, beta */
    size_t w_rows[CK_STEP_MAX_SLOTS];  /* embedding: rows of the word, position and token type
                                          tables */
    ck_linear *linear;     /* linear: its matmul (writing bf16 when out_copy is set); conv1d: the
                              matmul of its packed weight [Cout, K*Cin] */
    size_t taps;           /* conv1d: K (its linear_in_cols is K*Cin) */
    size_t heads, head_dim;
    float eps;
    float scale;           /* attention: the score scale; leaky_relu: the negative slope */
    size_t style_offset;   /* concat_style, ada_layer_norm, adain_instance_norm: the first column of
                              the batch's style row they read (linear_in_cols of them) */
    const size_t *out_offsets; /* [S + 1] per-sequence rows of out when they differ from the batch's
                                  (the generator's rate changes: the executor's offsets of out's
                                  frames dim, filled each run), else NULL */
    size_t dilation, stride, padding; /* conv1d (1, 1, (K - 1) / 2: 'same'; dilation 0, as generated
                                         code leaves it: 'same'); conv_transpose1d_col2im (stride,
                                         padding) */
} ck_step_args;

/* Each runs one step over the batch and returns 0 or the kernel's CK_E_* code (the lowest
 * failing worker's). */
int ck_step_embedding(const ck_step_batch *b, const ck_step_args *s);
/* Zeroes x's (or its copy's) rows from T to the end of the last CK_LINEAR_ROW_BLOCK block first:
 * the blocks compute those padding rows (never read) from defined, finite values. */
int ck_step_linear(const ck_step_batch *b, const ck_step_args *s);
/* Attention heads in f32 (ck_attention_head_f32). */
int ck_step_attention(const ck_step_batch *b, const ck_step_args *s);
/* Attention heads on AMX tiles: from the bf16 copies of q, k, v where the step reads them
 * (ck_attention_head_bf16_f32__amx, or _bf16_io when it writes only its context's copy), else from f32
 * q, k, v (ck_attention_head_f32__amx). Only where ck_kernels_amx_bf16(). */
int ck_step_attention_bf16(const ck_step_batch *b, const ck_step_args *s);
/* LayerNorm with double statistics (f32 programs and parity; ck_residual_layer_norm_f32_f32bf16_f64acc). */
int ck_step_residual_layer_norm(const ck_step_batch *b, const ck_step_args *s);
/* LayerNorm with float statistics, x and the residual read once (bf16 programs;
 * ck_residual_layer_norm_f32_f32bf16). Both write the step's bf16 copy beside y where it has one. */
int ck_step_residual_layer_norm_bf16(const ck_step_batch *b, const ck_step_args *s);
int ck_step_gelu_new(const ck_step_batch *b, const ck_step_args *s);
int ck_step_leaky_relu(const ck_step_batch *b, const ck_step_args *s);
/* conv1d per sequence: im2col tiles of out's rows in each worker's scratch, then its linear
 * (ck_conv1d_im2col_f32 for 'same', ck_conv1d_im2col_general_f32 with s->dilation, stride, padding
 * and out's offsets s->out_offsets; ck_linear_forward_f32); x is never read across a sequence's
 * ends. */
int ck_step_conv1d(const ck_step_batch *b, const ck_step_args *s);
/* ck_step_conv1d for a bf16 linear (s->linear computes in bf16, precision bf16): im2col tiles of
 * CK_CONV1D_TILE_ROWS_BF16 rows, which the linear rounds to bf16 as it stages them (f32
 * accumulation); the scratch is one such tile. */
int ck_step_conv1d_bf16(const ck_step_batch *b, const ck_step_args *s);
/* The plain embedding lookup (ck_embedding_f32): in[0] ids (i32), w[0] the table of w_rows[0] rows. */
int ck_step_embedding_table(const ck_step_batch *b, const ck_step_args *s);
/* Rows followed by their sequence's style (ck_concat_style_f32): out [T, C + D] from in[0] [T, C]
 * and columns [style_offset, style_offset + D) of the batch's style rows, D = linear_in_cols.
 * CK_E_ARG when the batch has no style or it is narrower than style_offset + D. */
int ck_step_concat_style(const ck_step_batch *b, const ck_step_args *s);
/* AdaLayerNorm (ck_ada_layer_norm_f32) with gamma | beta = fc(style[s]) per sequence, the fc its
 * linear (linear_in_cols = D) on one row into the worker's scratch [2C]. CK_E_ARG when the batch's
 * style is missing or not D wide. */
int ck_step_ada_layer_norm(const ck_step_batch *b, const ck_step_args *s);
/* Kokoro's durations (ck_duration_frames_f32): out i32 [T] frames from in[0] logits [T, B]
 * (linear_in_cols = B) and the batch's speed [S]. CK_E_ARG when the batch has no speed. */
int ck_step_duration(const ck_step_batch *b, const ck_step_args *s);
/* One BiLSTM layer's recurrences (ck_lstm_recurrence_f32): in[0], in[1] the forward and reverse
 * gate pre-activations x W_ih^T + b_ih [T, 4H]; w: w_hh, b_hh, w_hh_reverse, b_hh_reverse; out
 * [T, 2H] = [forward h | reverse h]. (sequence, direction) pairs over the workers, each in its
 * scratch: a sequence's bits depend on it alone. */
int ck_step_lstm_recurrence(const ck_step_batch *b, const ck_step_args *s);
/* Channel LayerNorm of one input, double statistics (ck_layer_norm_f32_f64acc); w: gamma, beta. */
int ck_step_layer_norm(const ck_step_batch *b, const ck_step_args *s);

/* ---- the generator's steps (b: the batch of the first input's rows; s->out_offsets the out's) ----
 * Source noise [600F, 9] per sequence: the batch's explicit noise rows copied (CK_E_SIZE when
 * noise_rows is not the batch's samples), else ck_noise_normal_f32 keyed by the batch's seed and the
 * sequence's line and chunk; samples split over the workers (a value depends on its own sample,
 * not on the split). */
int ck_step_noise_normal(const ck_step_batch *b, const ck_step_args *s);
/* ck_harmonic_source_f32: in[0] F0 [2F, 1], in[1] noise [600F, 9] (times b->noise_scale), w[0] the
 * l_linear weight [9], w[1] its bias; samples split over the workers (scratch 9 x 2F each). */
int ck_step_harmonic_source(const ck_step_batch *b, const ck_step_args *s);
/* ck_stft20_f32 per sequence: in[0] [600F, 1] -> out [120F + 1, 22], frames over the workers. */
int ck_step_stft20(const ck_step_batch *b, const ck_step_args *s);
/* ck_istft20_f32 per sequence: in[0] [120F + 1, 22] -> out [600F, 1], samples over the workers. */
int ck_step_istft20(const ck_step_batch *b, const ck_step_args *s);
/* ck_reflect_pad_left1_f32: in[0] [R, C] -> out [R + S, C], sequences over the workers. */
int ck_step_reflect_pad_left1(const ck_step_batch *b, const ck_step_args *s);
/* AdaIN + Snake (ck_adain_snake_f32) with gamma | beta = fc(style[s]) as adain_instance_norm, w[2]
 * alpha [C], split as adain_instance_norm (statistics are per channel: the same bits as whole
 * sequences). CK_E_ARG when the batch's style is missing or not wide enough. */
int ck_step_adain_snake(const ck_step_batch *b, const ck_step_args *s);
/* Strided ConvTranspose1d: per sequence and tile of output rows, the GEMM of the input rows the tile
 * reads (its linear of the packed Wt [K C, Cin]) into the worker's scratch, then
 * ck_conv_transpose1d_col2im_tile_f32; out [stride R, C]. */
int ck_step_conv_transpose1d_col2im(const ck_step_batch *b, const ck_step_args *s);
/* The same for a bf16 linear: tiles of CK_CONV1D_TILE_ROWS_BF16 - K / stride - 2 input frames, so
 * a tile's GEMM rows fill one 256-row bf16 tile; col2im and the bias stay f32. */
int ck_step_conv_transpose1d_col2im_bf16(const ck_step_batch *b, const ck_step_args *s);

/* ---- frame-rate steps: b is the batch of the step's first input's rows (tokens, or frames
 * times K: tokens and offsets then count those rows), as the executor passes it ---- */

/* Kokoro's alignment (ck_expand_rows_f32): in[0] x [T, C] and in[1] durations i32 [T] of the token
 * batch; out [F, C], token t's row repeated durations[t] times, sequences back to back (the
 * caller checked that F rows fit). Sequences over the workers. */
int ck_step_expand_rows(const ck_step_batch *b, const ck_step_args *s);
/* Nearest x2 over time (ck_upsample_nearest2_rows_f32): in[0] [R, C] -> out [2R, C]. */
int ck_step_upsample_nearest2_rows(const ck_step_batch *b, const ck_step_args *s);
/* Depthwise ConvTranspose1d k3 s2 per sequence (ck_conv_transpose1d_depthwise_k3s2_f32): in[0]
 * [R, C], w: weight [C, 1, 3], bias [C] -> out [2R, C]. Sequences over the workers. */
int ck_step_conv_transpose1d_depthwise_k3s2(const ck_step_batch *b, const ck_step_args *s);
/* AdaIN1d (ck_adain_instance_norm_f32) with gamma | beta = fc(style[s]) per sequence, the fc its
 * linear (linear_in_cols = D) on one row into the worker's scratch [2C]; statistics over each
 * sequence's own rows, per channel. Worker w takes the sequences in its T / W rows of the batch
 * whole and a sequence across workers' rows in blocks of 32 channels in proportion to them (the
 * same bits as whole sequences: statistics are per channel), running the fc once per sequence it
 * has a part of. CK_E_ARG when the batch's style is missing or not D wide. */
int ck_step_adain_instance_norm(const ck_step_batch *b, const ck_step_args *s);
/* (in[0] + in[1]) * scale (ck_add_scaled_f32), rows over the workers. */
int ck_step_add_scaled(const ck_step_batch *b, const ck_step_args *s);
/* [in[0] | in[1]] (ck_concat_cols_f32): in[0] linear_in_cols wide, in[1] the rest of cols. */
int ck_step_concat_cols(const ck_step_batch *b, const ck_step_args *s);
/* Every second row (ck_downsample2_rows_f32): in[0] [2R, C] of the batch (R = tokens / 2 rows) ->
 * out [R, C]. */
int ck_step_downsample2_rows(const ck_step_batch *b, const ck_step_args *s);

/* ---- row-local runs: several steps over one pass of the rows (generated libraries) ----
 *
 * The linear, residual_layer_norm, gelu_new, leaky_relu and layer_norm steps compute token row t
 * from row t of their inputs only. A run of them whose buffers may be computed row range by row range (every two
 * buffers of the run that share arena bytes share them row for row: same offset, same row
 * stride; the emitter checks this against the plan) runs as one ck_step_rows: the workers take
 * contiguous blocks of CK_LINEAR_ROW_BLOCK rows as a linear step would, and each carries its
 * rows through every step of the run, at most CK_LINEAR_TILE_ROWS rows at a time
 * (ck_step_rows_slice), before the next chunk. Each row meets the same kernels in the same order
 * as step by step, so its bits are the same; what goes is a barrier per step and a pass over
 * [T, cols] through memory per step. */

/* Step s over token rows [row, row + rows) on `worker`: row and rows are multiples of
 * CK_LINEAR_ROW_BLOCK and end at most at the last block's end; rows past T are a linear's
 * padding (its x rows there zeroed first, as ck_step_linear) and the other kinds skip them. */
typedef int (*ck_step_rows_fn)(const ck_step_batch *b, const ck_step_args *s, size_t row,
                               size_t rows, int worker);
int ck_step_linear_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                        int worker);
int ck_step_residual_layer_norm_rows(const ck_step_batch *b, const ck_step_args *s, size_t row,
                                     size_t rows, int worker);
int ck_step_residual_layer_norm_bf16_rows(const ck_step_batch *b, const ck_step_args *s,
                                          size_t row, size_t rows, int worker);
int ck_step_gelu_new_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                          int worker);
int ck_step_leaky_relu_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                            int worker);
int ck_step_layer_norm_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                            int worker);
int ck_step_add_scaled_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                            int worker);
int ck_step_concat_cols_rows(const ck_step_batch *b, const ck_step_args *s, size_t row, size_t rows,
                             int worker);

/* One step of a row-local run. */
typedef struct {
    ck_step_rows_fn rows;
    const ck_step_args *args;
    int timer;               /* index into ck_step_rows's seconds */
} ck_step_row_item;

/* Blocks of CK_LINEAR_ROW_BLOCK rows per slice of a row-local run over `tokens` rows with `threads`
 * workers: a whole CK_LINEAR_TILE_ROWS tile (16 blocks) at 1 thread or when the rows give every
 * worker such a slice, else the blocks / threads rounded up (at least 1), so that a batch of fewer
 * rows than threads tiles (the speech circuit's token side: a few hundred rows) is shared by every
 * worker instead of running whole on one. Rows' bits do not depend on it (linear.h). */
size_t ck_step_rows_slice(size_t tokens, int threads);

/* Runs items[0..n) as one row-local run (above), in slices of ck_step_rows_slice blocks.
 * seconds[item.timer] gains worker 0's time in each item (NULL: not timed). Returns 0 or the
 * lowest failing worker's first CK_E_* code (that worker stops at it). Errors: CK_E_ARG (items
 * NULL with n > 0, an item without rows or args). */
int ck_step_rows(const ck_step_batch *b, const ck_step_row_item *items, size_t n,
                 double *seconds);

/* CK_E_NONFINITE when a row of the f32 buffer at byte offset `offset` ([T, cols]) holds NaN or
 * Inf, else 0 (rows split over the workers). */
int ck_step_check_finite(const ck_step_batch *b, size_t offset, size_t cols);

/* Widens the bf16 copy at `copy` into the f32 buffer at `out` ([T, cols]): what X-Ray sees of a
 * linear that wrote only its copy. */
void ck_step_widen_copy(const ck_step_batch *b, size_t copy, size_t out, size_t cols);

#endif
