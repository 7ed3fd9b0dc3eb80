/* program.h - the lowered program: the flat array of steps made once from circuit + op table +
 * plan + weights (the steps' offsets, bf16 copies, row-local runs), which the executor runs and
 * the emitter prints. Parses no JSON, opens no files, runs no kernel.
 *
 * Legend: T tokens in the packed batch, S sequences, H heads, cols the buffer's per-token width. */
#ifndef CK_PROGRAM_H
#define CK_PROGRAM_H

#include <stddef.h>

#include "circuit.h"
#include "linear.h"
#include "op_table.h"
#include "plan.h"
#include "steps.h"
#include "weights.h"

/* One lowered step: what runs, in what dtype, on which arena bytes, with which tensors. */
typedef struct ck_step ck_step;
struct ck_step {
    const ck_op_def *def;
    const ck_op_variant *variant;    /* what it runs (ck_op_variant_of the plan's precision and
                                        CPU): its function, row-range form and their C names */
    ck_op_kind kind;
    ck_dtype dtype;                  /* what the op computes in (variant->computes) */
    int fused_gelu;                  /* 1: a linear that also applies the gelu_new after it */
    size_t op;                       /* index in the circuit's unrolled ops (the linear, if fused) */
    size_t n_in;                     /* input slots used */
    int in[CK_MAX_SLOTS];            /* buffer per input slot */
    size_t in_offset[CK_MAX_SLOTS];  /* its byte offset in the activation arena */
    size_t in_cols[CK_MAX_SLOTS];
    int out;                         /* buffer written (a fused linear: its gelu_new's) */
    size_t out_offset, out_cols;
    size_t rows_frames;              /* the rows it runs over, its first input's (ck_buffer
                                        frames): 0 tokens, K frames times K; the executor passes
                                        the batch of those rows */
    size_t out_frames;               /* its output's rows, likewise (differs from rows_frames only
                                        for the alignment and the x2 upsamples) */
    /* bf16 copies (bf16 precision; byte offsets in the program's copy arena, CK_NO_COPY for none).
     * A linear whose input a residual_layer_norm wrote reads the bf16 copy that LayerNorm writes
     * beside its f32 rows (ck_residual_layer_norm_f32_f32bf16), so q, k and v round their shared input
     * once; a fused linear + gelu_new whose output only linears read (the FFN in) writes that copy
     * instead of its f32 rows, and its reader reads it; with fusion on, q, k and v linears whose
     * outputs only an AMX attention step reads write bf16 only too and the heads read those
     * (ck_attention_head_bf16_f32__amx), and that step writes its context only in bf16 when only linears
     * (the output projection) read it (ck_attention_head_bf16__amx). Every copy rounds as its
     * consumer would (round to nearest even), so the features keep their bits. */
    size_t in_copy[CK_MAX_SLOTS];    /* the copy input slot k reads instead of its f32 buffer */
    size_t out_copy;                 /* the copy written: a residual_layer_norm beside out, a linear
                                        or an AMX attention step instead of out (a linear's matmul
                                        then writes bf16) */
    ck_dtype out_dtype;              /* what its kernel writes as the result: the copy's dtype
                                        when it writes only its copy (row copy_beside 0), else
                                        f32 */
    size_t n_weights;                /* weight slots used */
    int weight[CK_MAX_SLOTS];        /* circuit weight index per weight slot */
    const ck_tensor *w[CK_MAX_SLOTS];/* the bound tensor per weight slot; NULL (weight -1) for an
                                        optional slot the circuit left out */
    size_t linear_slot;              /* CK_OP_LINEAR: its linear among the program's n_linears,
                                        one per (weight, fused gelu, bf16 out) in step order */
    float eps;                       /* LayerNorm epsilon */
    size_t heads, head_dim;          /* attention geometry */
    float scale;                     /* attention score scale */
    size_t style_offset;             /* ck_op style_offset */
    const ck_op *op_ptr;             /* the circuit op (its generator params: dilation, stride,
                                        padding) */
    ck_split split;
    const char *checkpoint;          /* X-Ray id captured after the step (a fused linear: its
                                        gelu_new's), NULL when none */
    int capture_widen;               /* 1: an X-Ray capture widens out_copy into out first (the
                                        step wrote only its bf16 copy) */
    size_t run_first;                /* the first step of this step's row-local run
                                        (ck_program_row_runs); the step's own index when alone */
    ck_step_args args;               /* its operands, bound once by the lowering: what the
                                        interpreter runs and generated code writes as constants
                                        (args.linear: set by the executor, per linear_slot) */
};

typedef struct {
    ck_step *steps;   /* [n_steps] in execution order */
    size_t n_steps;   /* ops minus the gelu_news fused into their linears */
    size_t vocab;     /* rows of the embedding's word table (0 without one): ids must be below */
    size_t copies_bytes; /* the bf16 copy arena the steps' in_copy/out_copy point into (0: none) */
    size_t n_linears;    /* distinct linear_slots of the linear steps */
} ck_program;

/* Lowers circuit c once: weights[i] is the tensor bound to circuit weight i, plan the planned
 * arena layout (offsets, liveness) and, in its limits, the precision and CPU each step's variant
 * is picked for (ck_op_variant_of). fuse_gelu: a linear whose output only the next gelu_new reads
 * (plan liveness, not an output) becomes one step with fused_gelu 1 (its own checkpoint is then
 * not captured). A bf16 plan also schedules the steps' bf16 copies (ck_step in_copy/out_copy),
 * one per copied buffer of plan rows x cols, 64-byte aligned. Sets the linear slots, the
 * row-local runs (ck_program_row_runs) and binds each step's args (args.linear left NULL).
 * Errors: CK_E_ARG, CK_E_MEMORY. */
int ck_program_lower(ck_program *p, const ck_circuit *c, const ck_plan *plan,
                     const ck_tensor *const *weights, int fuse_gelu, ck_error *err);

/* Sets every step's run_first: the row-local runs (scheduler/steps.h, ck_step_rows) that runs
 * without an X-Ray capture take, in the interpreter and in generated code alike. A run is a
 * longest sequence of consecutive steps whose kind has a row-range form (ck_op_def.rows) in
 * which every two buffers or bf16 copies of different steps that share arena bytes, one of them
 * written, share them row for row (same offset, same row stride): with the rows shared out over
 * workers, any other sharing of the plan's reused bytes would be a race. A linear counts as
 * writing its input (it zeroes the padding rows). Spans cover the plan's rows (ck_plan_rows).
 * ck_program_lower calls it; call it again after changing offsets. */
void ck_program_row_runs(ck_program *p, const ck_plan *plan);

/* Most steps in one row-local run (a longer sequence is cut into runs of this many). */
#define CK_ROW_RUN_MAX_STEPS 64

/* Releases the steps; accepts a zeroed program. */
void ck_program_free(ck_program *p);

#endif
