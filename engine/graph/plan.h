/* plan.h - the memory planner: one activation arena layout for the worst-case batch (every buffer
 * 64-byte aligned, two buffers sharing space only when no op needs both) plus the per-worker
 * scratch size.
 * Plans; never allocates arenas or runs ops. */
#ifndef CK_PLAN_H
#define CK_PLAN_H

#include <stddef.h>

#include "circuit.h"
#include "ck_error.h"

#define CK_ARENA_ALIGN 64

typedef struct {
    size_t max_tokens;   /* T: tokens in the largest packed batch */
    size_t max_seq_len;  /* longest sequence (<= circuit max_positions) */
    int threads;         /* workers, each with its own scratch arena */
    size_t row_block;    /* buffers hold max_tokens rounded up to a multiple of row_block rows, so
                            an op may compute whole blocks past a batch's last token (the linears:
                            CK_LINEAR_ROW_BLOCK); 0 or 1: exactly max_tokens rows */
    ck_dtype precision;  /* the program's: f32 (0) or bf16 */
    int amx_bf16;        /* 1: the CPU offers AMX-BF16 tiles (ck_kernels_amx_bf16). With precision,
                            what each op's step runs (ck_op_variant_of), so what scratch it needs;
                            the lowering picks the same */
} ck_plan_limits;

/* The limits the executor and the compiler plan with: row_block CK_LINEAR_ROW_BLOCK, and amx_bf16
 * asked of this CPU under bf16 precision (0 under f32, which never asks). */
ck_plan_limits ck_plan_limits_for(ck_dtype precision, size_t max_tokens, size_t max_seq_len,
                                  int threads);

typedef struct {
    size_t n_buffers;
    size_t *offsets;      /* [n_buffers] byte offset in the activation arena, multiple of 64 */
    size_t *bytes;        /* [n_buffers] capacity in bytes at ck_plan_rows rows */
    size_t n_ops;         /* unrolled ops of the circuit */
    unsigned char *live;  /* [n_ops, n_buffers]: 1 when buffer b holds a value needed at op i (it
                             is read or written there, or read later before being written again);
                             inputs and outputs are live at every op */
    size_t arena_bytes;   /* activation arena size, multiple of 64 */
    size_t scratch_bytes; /* per-worker scratch arena size, multiple of 64 */
    ck_plan_limits limits;
    size_t max_frames;    /* F: frames in the largest batch (ck_plan_build_frames; a "frames*K"
                             buffer holds K max_frames rows, rounded up to row_block); 0 without
                             frames dims */
} ck_plan;

/* Builds the plan for circuit c under limits. Errors: CK_E_ARG (zero limits, a circuit with frames
 * dims (ck_plan_build_frames), max_seq_len above the circuit's max positions), CK_E_SIZE
 * (overflow), CK_E_MEMORY. The result is checked with
 * ck_plan_validate before it is returned. */
int ck_plan_build(ck_plan *plan, const ck_circuit *c, const ck_plan_limits *limits, ck_error *err);

/* ck_plan_build with max_frames F for the frame-row buffers of a circuit with frames dims (> 0
 * there; ignored, kept 0, without them). */
int ck_plan_build_frames(ck_plan *plan, const ck_circuit *c, const ck_plan_limits *limits,
                         size_t max_frames, ck_error *err);

/* Rejects a plan whose offsets are misaligned, exceed arena_bytes, or collide for two buffers live
 * at the same op (CK_E_SIZE, message naming both buffers and the op). */
int ck_plan_validate(const ck_plan *plan, const ck_circuit *c, ck_error *err);

/* Checks an arena before a run: base 64-byte aligned and at least arena_bytes, and tokens within
 * max_tokens. Returns CK_E_SIZE (nothing written) otherwise. */
int ck_plan_check_arena(const ck_plan *plan, const void *arena, size_t arena_bytes, size_t tokens,
                        ck_error *err);

/* Rows every token buffer holds: limits.max_tokens rounded up to a multiple of limits.row_block. */
size_t ck_plan_rows(const ck_plan *plan);

/* Rows a buffer of `frames` (ck_buffer frames: 0 tokens, else the code K + CK_FRAMES_ADD_UNIT B:
 * K max_frames + B max_tokens rows) holds: ck_plan_rows for
 * tokens, else K max_frames rounded up to a multiple of limits.row_block (SIZE_MAX on
 * overflow). */
size_t ck_plan_dim_rows(const ck_plan *plan, size_t frames);

/* 1 when buffers a and b are both live at some op (they must not share bytes). */
int ck_plan_conflict(const ck_plan *plan, size_t a, size_t b, size_t *at_op);

/* Releases the plan's arrays; accepts a zeroed plan. */
void ck_plan_free(ck_plan *plan);

#endif
