/* steps.h - the one slicing of each op kind's work over the workers, which the interpreter
 * (engine/graph/executor_ops.c) and every generated library (engine/codegen/prelude.inc) call: a
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
} ck_step_batch;

/* One step's operands: what the lowered program says (ck_step) with its bound tensors. */
typedef struct {
    size_t in[3];        /* byte offsets of the input slots in the arena */
    size_t in_copy[3];   /* byte offset in the copy arena of the bf16 copy a slot reads instead of
                            its f32 buffer, or CK_NO_COPY (a linear's x; attention's q, k, v) */
    size_t in_cols;      /* linear: K */
    size_t out, cols;    /* byte offset of the output in the arena and its cols */
    size_t out_copy;     /* byte offset of the bf16 copy written, or CK_NO_COPY: a LayerNorm
                            writes it beside its f32 rows, a linear or an AMX attention step
                            instead of them */
    const float *w[5];   /* embedding: word, position, token type, gamma, beta; LayerNorm: gamma,
                            beta */
    size_t w_rows[3];    /* embedding: rows of the word, position and token type tables */
    ck_linear *linear;   /* linear: its matmul (writing bf16 when out_copy is set) */
    size_t heads, head_dim;
    float eps, scale;
    int bf16_heads;      /* attention with f32 q, k, v: 1 runs the AMX heads */
    int stats_f32;       /* residual_layer_norm: 1 takes float statistics (bf16 programs:
                            ck_residual_layer_norm_f32acc), 0 double (f32 and parity) */
} ck_step_args;

/* Each runs one step over the batch and returns 0 or the kernel's CK_E_* code (the lowest
 * failing worker's). */
int ck_step_embedding(const ck_step_batch *b, const ck_step_args *s);
/* Zeroes x's (or its copy's) rows from T to the end of the last CK_LINEAR_ROW_BLOCK block first:
 * the blocks compute those padding rows (never read) from defined, finite values. */
int ck_step_linear(const ck_step_batch *b, const ck_step_args *s);
int ck_step_attention(const ck_step_batch *b, const ck_step_args *s);
int ck_step_residual_layer_norm(const ck_step_batch *b, const ck_step_args *s);
int ck_step_gelu_new(const ck_step_batch *b, const ck_step_args *s);

/* CK_E_NONFINITE when a row of the f32 buffer at byte offset `offset` ([T, cols]) holds NaN or
 * Inf, else 0 (rows split over the workers). */
int ck_step_check_finite(const ck_step_batch *b, size_t offset, size_t cols);

/* Widens the bf16 copy at `copy` into the f32 buffer at `out` ([T, cols]): what X-Ray sees of a
 * linear that wrote only its copy. */
void ck_step_widen_copy(const ck_step_batch *b, size_t copy, size_t out, size_t cols);

#endif
