/* executor_internal.h - the executor's state (executor.c). Not a public header. */
#ifndef CK_EXECUTOR_INTERNAL_H
#define CK_EXECUTOR_INTERNAL_H

#include "arena.h"
#include "executor.h"
#include "linear.h"
#include "program.h"
#include "plan.h"

struct ck_executor {
    const ck_circuit *circuit;
    ck_executor_options opt;
    const ck_tensor **weights;  /* [n_weights] bound tensors, in circuit weight order */
    ck_linear **linears;        /* [program.n_linears] per ck_step linear_slot (interpreted) */
    size_t n_linears;           /* of linears (the program's, once lowered) */
    ck_arena copies;            /* the program's bf16 copies (copies_bytes; bf16, interpreted) */
    ck_onednn *onednn;
    ck_plan plan;
    ck_program program;         /* the lowered steps: what run executes, in order */
    ck_compiled_state *compiled;/* opt.compiled's state (its init on our arena), NULL: interpret */
    ck_arenas arenas;
    ck_step_batch batch;        /* the batch being run, as the steps see it */
    size_t tokens;              /* T of the batch being run */
    int output_ready;           /* buffer whose rows the last successful run checked, -1 if none */
    const size_t *offsets;      /* [n_seqs + 1] of the batch being run */
    size_t n_seqs;
    const float *style;         /* ck_executor_set_sequence_inputs: [style_rows, style_cols] */
    size_t style_rows, style_cols;
    const float *speed;         /* [style_rows] or NULL */
    const int32_t *forced;      /* ck_executor_set_durations: [forced_count] or NULL */
    size_t forced_count;
    int32_t *predicted;         /* [max_batch_tokens] the duration op's own values of the last run,
                                   before forced ones replaced them (circuits with frames dims) */
    int predicted_ready;        /* 1 once this run's duration op has run */
    uint64_t noise_seed;        /* ck_executor_set_noise: the key and per-sequence line, chunk */
    const uint64_t *noise_line;
    const uint32_t *noise_chunk;
    size_t noise_keys;          /* rows of noise_line and noise_chunk (0: all keys 0) */
    float noise_scale;          /* 1 until set */
    const float *noise;         /* ck_executor_set_noise_input: [noise_rows, 9] or NULL */
    size_t noise_rows;
    size_t *row_offsets[CK_FRAME_DIMS_MAX + 1]; /* per frames dim of the circuit (its frame_dims
                                               slot): [max_batch_tokens + 1] per-sequence offsets
                                               of its K f + B rows; the last used: f */
    ck_step_batch frame_batch[CK_FRAME_DIMS_MAX]; /* per slot: the batch over those rows */
    size_t frames;              /* F of the batch being run, once its durations are known */
    size_t max_frames;          /* the plan's max_frames (ck_executor_init_frames) */
    size_t limit_frames;        /* ck_executor_set_max_frames: a run's F limit (0: the plan's) */
    int frames_ready;           /* 1 once this run's frame offsets are set */
    ck_error *compiled_err;     /* a generated library's run: where its frames callback says why */
    int compiled_frames_failed; /* 1: that callback (set_frames) failed and said so there */
    double op_seconds[CK_OP_KIND_COUNT + 1]; /* wall time per op kind since init or reset; the last
                                                slot: filling inputs, the finite check, copy-out */
    double op_flops[CK_OP_KIND_COUNT]; /* floating-point operations per op kind since init or reset,
                                          from the table's flops column (interpreted runs only) */
};

/* Base of a buffer in the activation arena. */
static inline void *ck_exec_buffer(const ck_executor *ex, int buffer)
{
    return (char *)ex->arenas.activations.base + ex->plan.offsets[buffer];
}

/* Bytes at a step's planned arena offset. */
static inline void *ck_exec_at(const ck_executor *ex, size_t offset)
{
    return (char *)ex->arenas.activations.base + offset;
}

#endif
