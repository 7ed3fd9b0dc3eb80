/* executor_internal.h - the executor's state, shared by executor.c (binding, batches) and
 * executor_ops.c (one dispatch per op kind). Not a public header. */
#ifndef CK_EXECUTOR_INTERNAL_H
#define CK_EXECUTOR_INTERNAL_H

#include "arena.h"
#include "executor.h"
#include "linear.h"
#include "plan.h"

struct ck_executor {
    const ck_circuit *circuit;
    ck_executor_options opt;
    const ck_tensor **weights;  /* [n_weights] bound tensors, in circuit weight order */
    ck_linear **linears;        /* [n_weights] one linear per weight matrix used by a linear op */
    ck_linear **gelu_linears;   /* [n_weights] the same with the GELU post-op, where fused */
    ck_linear **gelu_bf16_linears; /* [n_weights] the same writing bf16 (a shadow), bf16 only */
    ck_linear **bf16_out_linears;  /* [n_weights] plain linears writing bf16 (q, k, v), bf16 only */
    ck_linear **op_linear;      /* [n_ops] the linear op i runs, NULL for other kinds */
    int *op_output;             /* [n_ops] the buffer op i writes (a fused linear writes its GELU's) */
    unsigned char *op_fused;    /* [n_ops] 1: a linear fused with the gelu_new after it (no capture);
                                   2: that gelu_new, already computed (its checkpoint is captured) */
    int *op_shadow_out;         /* [n_ops] a residual_layer_norm that also writes its output in bf16
                                   into shadows[k] (k), or a fused linear that writes its output
                                   only there, in bf16 (its f32 buffer is then not written), else -1 */
    int *op_shadow_in;          /* [n_ops] a bf16 linear whose input is that bf16 copy, shadows[k]
                                   (k), else -1 (it rounds its f32 input tile by tile) */
    int (*op_attention_in)[3];  /* [n_ops] an attention op whose q, k, v are all bf16 shadows (k), else
                                   -1: the linears that make them write only there */
    uint16_t **shadows;         /* [n_shadows] [plan rows, shadow_cols[k]] bf16, bf16 precision only */
    size_t *shadow_cols;
    size_t n_shadows;
    ck_dtype attention;         /* what the attention heads compute in: BF16 (AMX tiles,
                                   ck_attention_head_bf16) in bf16 precision where the CPU has
                                   AMX-BF16 and every head dim is a multiple of 32, else F32 */
    ck_onednn *onednn;
    ck_plan plan;
    ck_arenas arenas;
    size_t vocab;               /* rows of the word table: ids must be below it */
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

/* Runs one op of the unrolled circuit over the current batch. Returns 0 or a CK_E_* code. */
int ck_exec_op(ck_executor *ex, const ck_op *op);

/* CK_E_NONFINITE when any row of `buffer` in the current batch holds NaN or Inf (rows split over the
 * workers): the linears do not check values, so an overflow is caught here before it is copied out. */
int ck_exec_check_finite(const ck_executor *ex, int buffer);

#endif
