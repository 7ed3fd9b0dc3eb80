/* op_table.h - the op table: one row per op kind holds everything about that op (name, named
 * slots, params with defaults, geometry check, scratch, how it splits over workers, the run
 * function per dtype, whether it may run in place; its emit column is ops_emit.h). Knows no plan
 * and no lowered program (program.h). Parses no JSON, opens no files.
 *
 * Legend: T tokens in the packed batch, S sequences, H heads, cols the buffer's per-token width. */
#ifndef CK_OP_TABLE_H
#define CK_OP_TABLE_H

#include <stddef.h>

#include "circuit.h"
#include "steps.h"

/* Slot names as numbers, per kind, in the order of the row's `in` and `weights` lists. */
enum { CK_EMB_IN_IDS, CK_EMB_IN_POSITIONS };
enum { CK_EMB_WORD, CK_EMB_POSITION, CK_EMB_TOKEN_TYPE, CK_EMB_GAMMA, CK_EMB_BETA };
enum { CK_LIN_IN_X };
enum { CK_LIN_WEIGHT, CK_LIN_BIAS };
enum { CK_ATT_IN_Q, CK_ATT_IN_K, CK_ATT_IN_V };
enum { CK_RLN_IN_X, CK_RLN_IN_RESIDUAL };
enum { CK_RLN_GAMMA, CK_RLN_BETA };
enum { CK_GELU_IN_X };

typedef enum {
    CK_PARAM_FLOAT = 0, /* a finite number > 0, stored as float */
    CK_PARAM_SIZE = 1,  /* an integer in 1..CK_OP_PARAM_SIZE_MAX, stored as size_t */
    CK_PARAM_OFFSET = 2 /* an integer in 0..CK_OP_PARAM_SIZE_MAX, stored as size_t; 0 when absent */
} ck_param_type;

#define CK_OP_PARAM_SIZE_MAX 4096
#define CK_OP_PARAMS_MAX 4

typedef struct {
    const char *name;                   /* JSON key in "params"; NULL ends the list */
    ck_param_type type;
    size_t field;                       /* offsetof(ck_op, ...) of the value */
    float (*fallback)(const ck_op *op); /* the default from params parsed before it; NULL: required */
} ck_op_param;

/* How an op's out rows follow from its inputs' (ck_buffer frames: tokens, or frames times K). */
typedef enum {
    CK_ROWS_SAME = 0,   /* every input and out have the same rows (T, or frames times K) */
    CK_ROWS_EXPAND = 1, /* inputs token rows (one of them the circuit's durations), out frame rows
                           (K 1): the alignment */
    CK_ROWS_DOUBLE = 2, /* input frames times K, out frames times 2K: the x2 upsamples */
    CK_ROWS_HALF = 3,   /* input frames times 2K, out frames times K: downsample2_rows */
    CK_ROWS_OWN = 4     /* the generator's rate changes: frame rows in and out, the row's check
                           says how they relate */
} ck_rows;

/* How a step's work is cut over the workers (scheduler/parallel.h). */
typedef enum {
    CK_SPLIT_ROWS = 0,           /* token rows, contiguous ranges (ck_parallel_for) */
    CK_SPLIT_ROW_BLOCKS = 1,     /* blocks of CK_LINEAR_ROW_BLOCK rows, contiguous ranges */
    CK_SPLIT_SEQUENCE_HEADS = 2  /* (sequence, head) pairs, interleaved (ck_parallel_for_interleaved) */
} ck_split;

/* Runs one step (its operands bound once by the lowering, ck_step.args) over a batch, sliced over
 * the workers as the row's `split` says: one of scheduler/steps.h's, which generated libraries call
 * too. 0 or a CK_E_* code. */
typedef int (*ck_op_run_fn)(const ck_step_batch *batch, const ck_step_args *step);

/* Geometry check of one op against the circuit's buffers and weights: CK_OK, or CK_E_CIRCUIT with
 * msg[cap] saying which slot and what was expected (the loader adds file and op). */
typedef int (*ck_op_check_fn)(const ck_circuit *c, const ck_op *op, char *msg, size_t cap);

/* Per-worker scratch floats the op of circuit c needs for sequences up to max_seq_len when it
 * computes in `dtype` (the attention heads on AMX need more than the f32 ones; a conv1d one im2col
 * tile). */
typedef int (*ck_op_scratch_fn)(const ck_circuit *c, const ck_op *op, size_t max_seq_len,
                                ck_dtype dtype, size_t *floats);

/* What a step of the op runs in a program of one precision (ck_op_def.run). */
typedef struct {
    ck_op_run_fn fn;          /* NULL: no variant of its own; the f32 program's runs */
    const char *fn_name;      /* fn's C name, for the emitter */
    ck_step_rows_fn rows;     /* its row-range form (steps.h), which lets a run of such steps carry
                                 rows through all of them (ck_program_row_runs); NULL: not offered
                                 (the op reads other tokens' rows, or runs once a batch) */
    const char *rows_name;    /* rows' C name, for the emitter */
    ck_dtype computes;        /* what its arithmetic runs in: the step's dtype, which
                                 ck_executor_op_dtype reports */
    int (*usable)(const ck_op *op, int amx_bf16); /* NULL, or 0 where the CPU (amx_bf16: it has
                                                     AMX-BF16 tiles) or the op's geometry rules
                                                     the variant out (the f32 one runs instead) */
} ck_op_variant;

typedef struct {
    const char *name;                          /* JSON "op" string = kernel file name */
    const char *in[CK_MAX_SLOTS + 1];          /* input slot names, NULL-terminated */
    const char *weights[CK_MAX_SLOTS + 1];     /* weight slot names, NULL-terminated */
    ck_op_param params[CK_OP_PARAMS_MAX];      /* in parse order, name NULL-terminated */
    ck_op_check_fn check;
    ck_op_scratch_fn scratch;                  /* NULL: no scratch */
    ck_split split;
    int in_place;                              /* 1: out may also be an in */
    int copy_beside;                           /* 1: the bf16 copy of its output it writes for
                                                  the next linears goes beside its f32 rows
                                                  (LayerNorm); else it writes only the copy */
    ck_op_variant run[CK_DTYPE_COUNT];         /* per program precision (f32 always present) */
    ck_op_class op_class;                      /* where its time and flops count
                                                  (ck_model_op_seconds, ck_model_op_flops); the
                                                  public classes only grow at the end, a new op
                                                  may count as CK_OP_CLASS_OTHER */
    const char *dispatch_name;                 /* its NAME=dtype in ck_model_dispatch; NULL: not
                                                  listed */
    const char *vocab_weight;                  /* weight slot whose rows are the vocabulary (the
                                                  ids must be below); NULL: none */
    const char *positions_weight;              /* weight slot whose rows are the longest sequence
                                                  (the circuit's max positions); NULL: none */
    const char *fuses_next;                    /* name of a kind that, as the next op and sole
                                                  reader of its output, runs inside its step
                                                  (linear: gelu_new, the oneDNN post-op) */
    ck_dtype out_dtype;                        /* its out buffer's dtype: f32 (0, the default),
                                                  or i32 (duration's frames) */
    int sequence_inputs;                       /* 1: its step reads the batch's per-sequence
                                                  style (ck_step_batch.style): the interpreter
                                                  only (ck_executor_set_sequence_inputs) */
    int uses_linear;                           /* 1: its step runs a ck_linear made once from its
                                                  weight and bias slots (ck_step linear_slot): the
                                                  linear; conv1d with its weight [out,in,K] packed
                                                  to [out, K*in] (ck_conv1d_pack_weight_f32) */
    int weights_copied_at_init;                /* 1: its steps never read their weight tensors
                                                  after init (linear: oneDNN's copy), so the
                                                  caller may release them */
    double (*flops)(const ck_circuit *c, const ck_op *op, size_t seq_len); /* per row of its
                                                  output (a token of a sequence of seq_len, or a
                                                  frame row: seq_len 0); NULL: none counted */
    ck_rows rows;                              /* its out rows from its inputs' (CK_ROWS_SAME, 0,
                                                  the default); a step runs over the rows of its
                                                  first input (executor) */
    int tokens_only;                           /* 1: its buffers must be token rows (attention's
                                                  scratch is sized by tokens, the embeddings read
                                                  ids, duration writes per token) */
    const char *optional_weight;               /* a weight slot the circuit may leave out (its
                                                  ck_op weights[] entry is then -1): conv1d's bias
                                                  (Kokoro's conv1x1 has none); NULL: none */
} ck_op_def;

/* The table, one row per ck_op_kind, indexed by kind. Declared unsized so that op_table.c's
 * _Static_assert sees the size its initializer gives: a kind added without a row fails to build. */
extern const ck_op_def ck_op_defs[];

/* The row of kind, NULL for an unknown kind. */
const ck_op_def *ck_op_def_of(ck_op_kind kind);


/* What a step of op runs in a program of `precision` on a CPU with (amx_bf16 1) or without
 * AMX-BF16 tiles: the row's variant for that precision when it has one usable for op there, else
 * its f32 one. NULL for an unknown kind or precision. The plan sizes scratch and the lowering
 * picks each step's function with it (ck_plan_limits precision, amx_bf16). */
const ck_op_variant *ck_op_variant_of(const ck_op *op, ck_dtype precision, int amx_bf16);

/* The precision op i of c is lowered (and its scratch sized) for in a program of `precision`: f32
 * for an op at or before c's duration op (the token side of a speech circuit: text encoder,
 * duration encoder, LSTMs and duration head, so a bf16 run predicts the fp32 durations bit for
 * bit), else `precision`. A circuit without a duration op (the encoder) keeps `precision`. */
ck_dtype ck_op_precision_at(const ck_circuit *c, size_t i, ck_dtype precision);

/* The dtype an op of `kind` computes in under `precision` where its variant is usable (the AMX
 * heads need AMX-BF16: ck_op_variant_of says per op). */
ck_dtype ck_op_dtype(ck_op_kind kind, ck_dtype precision);

/* The index of def's weight slot named `slot`, -1 when slot is NULL or not one of them. */
int ck_op_weight_slot(const ck_op_def *def, const char *slot);

/* Floating-point operations per token of a sequence of seq_len tokens over every op of c (the rows'
 * flops column: the matmuls and the attention products). */
double ck_circuit_flops_per_token(const ck_circuit *c, size_t seq_len);

/* "the kinds a, b" whose rows allow in place, into buf[cap] (for messages). */
void ck_op_in_place_kinds(char *buf, size_t cap);

/* The program dtype of a public precision: the bf16 column for CK_PRECISION_BF16, the i8 one for
 * CK_PRECISION_INT8, else CK_DTYPE_F32 (callers reject other values first). The one mapping the api, X-Ray and the
 * compiler use. */
ck_dtype ck_precision_dtype(ck_precision precision);

/* 1 when a program may be lowered for `precision`: f32, or a dtype some row has a variant for. */
int ck_op_precision_supported(ck_dtype precision);

/* The out buffer must have the row's out_dtype (f32 but for duration), then the row's check. Same
 * contract as ck_op_check_fn. */
int ck_op_check(const ck_circuit *c, const ck_op *op, char *msg, size_t cap);

#endif
