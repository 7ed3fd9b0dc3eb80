/* executor_internal.h - the executor's state, shared by executor.c (binding, batches) and
 * executor_ops.c (one dispatch per op kind). Not a public header. */
#ifndef CK_EXECUTOR_INTERNAL_H
#define CK_EXECUTOR_INTERNAL_H

#include "arena.h"
#include "executor.h"
#include "linear.h"
#include "ops.h"
#include "plan.h"

struct ck_executor {
    const ck_circuit *circuit;
    ck_executor_options opt;
    const ck_tensor **weights;  /* [n_weights] bound tensors, in circuit weight order */
    ck_linear **linears;        /* [n_weights] one linear per weight matrix used by a linear op */
    ck_linear **gelu_linears;   /* [n_weights] the same with the GELU post-op, where fused */
    ck_linear **bf16_out_linears;  /* [n_weights] bf16 linears writing bf16 (q, k, v) */
    ck_linear **gelu_bf16_linears; /* [n_weights] the same with the GELU post-op (the FFN in) */
    /* bf16 copies of activations (interpreter, bf16 precision; executor.c schedule_shadows): */
    int *step_shadow_out;       /* [n_steps] a residual_layer_norm step that also writes its output
                                   in bf16 into shadows[k] (k), or a linear that writes its output
                                   only there (its f32 buffer is then not written), else -1 */
    int *step_shadow_in;        /* [n_steps] a linear whose input is shadows[k] (k), else -1 */
    int (*step_attention_in)[3];/* [n_steps] an attention step whose q, k, v are shadows, else -1 */
    uint16_t **shadows;         /* [n_shadows] [plan rows, cols] bf16, allocated at init */
    size_t n_shadows;
    ck_onednn *onednn;
    ck_plan plan;
    ck_program program;         /* the lowered steps: what run executes, in order */
    ck_compiled_state *compiled;/* opt.compiled's state (its init on our arena), NULL: interpret */
    ck_arenas arenas;
    size_t tokens;              /* T of the batch being run */
    int output_ready;           /* buffer whose rows the last successful run checked, -1 if none */
    const size_t *offsets;      /* [n_seqs + 1] of the batch being run */
    size_t n_seqs;
    double op_seconds[CK_OP_KIND_COUNT + 1]; /* wall time per op kind since init or reset; the last
                                                slot: filling inputs, the finite check, copy-out */
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

/* The run functions of the op table (ck_op_run_fn): one step over the current batch, split over
 * the workers as the step's `split` says. Return 0 or a CK_E_* code. */
int ck_exec_embedding(const ck_executor *ex, const ck_step *step);
int ck_exec_linear(const ck_executor *ex, const ck_step *step);
int ck_exec_attention(const ck_executor *ex, const ck_step *step);
int ck_exec_residual_layer_norm(const ck_executor *ex, const ck_step *step);
int ck_exec_gelu_new(const ck_executor *ex, const ck_step *step);

/* CK_E_NONFINITE when any row of `buffer` in the current batch holds NaN or Inf (rows split over the
 * workers): the linears do not check values, so an overflow is caught here before it is copied out. */
int ck_exec_check_finite(const ck_executor *ex, int buffer);

#endif
