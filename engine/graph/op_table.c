/* op_table.c - the op table (op_table.h): one row per op kind with its slots, params, geometry
 * check, scratch, split and run per dtype. Never parses JSON, never runs a kernel itself. */
#include "op_table.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "conv1d.h"
#include "lstm_recurrence.h"

/* ---- geometry checks ---- */

/* Buffer b in slot field/slot must have dtype and (cols != 0) cols. */
static int want_buffer(const ck_circuit *c, const char *field, const char *slot, int b,
                       ck_dtype dtype, size_t cols, char *msg, size_t cap)
{
    const ck_buffer *buf = &c->buffers[b];
    char where[48] = "";
    if (slot != NULL) {
        snprintf(where, sizeof where, " \"%s\"", slot);
    }
    if (buf->dtype != dtype) {
        snprintf(msg, cap, "%s%s: buffer \"%s\" has dtype %s, expected %s", field, where, buf->name,
                 ck_dtype_info(buf->dtype)->lower, ck_dtype_info(dtype)->lower);
        return CK_E_CIRCUIT;
    }
    if (cols != 0 && buf->cols != cols) {
        snprintf(msg, cap, "%s%s: buffer \"%s\" has %zu cols, expected %zu", field, where,
                 buf->name, buf->cols, cols);
        return CK_E_CIRCUIT;
    }
    return CK_OK;
}

/* Weight in slot i must have the given rank and shape (a 0 in want matches any size). */
static int want_weight(const ck_circuit *c, const ck_op *op, size_t i, size_t rank, size_t d0,
                       size_t d1, char *msg, size_t cap)
{
    const ck_weight_ref *w = &c->weights[op->weights[i]];
    const size_t want[2] = {d0, d1};
    int ok = w->rank == rank;
    for (size_t k = 0; ok && k < rank; k++) {
        ok = want[k] == 0 || w->shape[k] == want[k];
    }
    if (ok) {
        return CK_OK;
    }
    char got[64] = "", expected[64] = "";
    for (size_t k = 0; k < w->rank; k++) {
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", k ? "," : "", w->shape[k]);
    }
    for (size_t k = 0; k < rank; k++) {
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected),
                 want[k] ? "%s%zu" : "%s?", k ? "," : "", want[k]);
    }
    snprintf(msg, cap, "weights \"%s\": \"%s\" has shape [%s], expected [%s]",
             ck_op_defs[op->kind].weights[i], w->name, got, expected);
    return CK_E_CIRCUIT;
}

/* The f32 input slots [from, to) all have `cols` columns (0: any). */
static int want_inputs(const ck_circuit *c, const ck_op *op, size_t from, size_t to, size_t cols,
                       char *msg, size_t cap)
{
    int rc = CK_OK;
    for (size_t i = from; rc == CK_OK && i < to; i++) {
        rc = want_buffer(c, "in", ck_op_defs[op->kind].in[i], op->inputs[i], CK_DTYPE_F32, cols,
                         msg, cap);
    }
    return rc;
}

/* ids, positions [T] i32; word [V,E], position [P,E], token type [K,E], gamma, beta [E] */
static int check_embedding(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = CK_OK;
    for (size_t i = CK_EMB_IN_IDS; rc == CK_OK && i <= CK_EMB_IN_POSITIONS; i++) {
        rc = want_buffer(c, "in", ck_op_defs[op->kind].in[i], op->inputs[i], CK_DTYPE_I32, 1, msg,
                         cap);
    }
    for (size_t i = CK_EMB_WORD; rc == CK_OK && i <= CK_EMB_BETA; i++) {
        rc = i < CK_EMB_GAMMA ? want_weight(c, op, i, 2, 0, cols, msg, cap)
                              : want_weight(c, op, i, 1, cols, 0, msg, cap);
    }
    return rc;
}

/* y [T,out] = x [T,in] W^T + b: weight [out,in], bias [out] */
static int check_linear(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, CK_LIN_IN_X, CK_LIN_IN_X + 1, 0, msg, cap);
    rc = rc ? rc : want_weight(c, op, CK_LIN_WEIGHT, 2, cols,
                               c->buffers[op->inputs[CK_LIN_IN_X]].cols, msg, cap);
    return rc ? rc : want_weight(c, op, CK_LIN_BIAS, 1, cols, 0, msg, cap);
}

/* q, k, v, context all [T, H*D] */
static int check_attention(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    if (op->heads * op->head_dim != cols) {
        snprintf(msg, cap, "params \"heads\" x \"head_dim\": %zu x %zu, but out \"%s\" has %zu cols",
                 op->heads, op->head_dim, c->buffers[op->output].name, cols);
        return CK_E_CIRCUIT;
    }
    return want_inputs(c, op, CK_ATT_IN_Q, CK_ATT_IN_V + 1, cols, msg, cap);
}

/* x, residual, gamma, beta all [.., C] */
static int check_residual_layer_norm(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, CK_RLN_IN_X, CK_RLN_IN_RESIDUAL + 1, cols, msg, cap);
    rc = rc ? rc : want_weight(c, op, CK_RLN_GAMMA, 1, cols, 0, msg, cap);
    return rc ? rc : want_weight(c, op, CK_RLN_BETA, 1, cols, 0, msg, cap);
}

/* y [T,out] = conv1d(x [T,in]): weight [out,in,K] with K odd ('same' padding (K-1)/2), bias [out] */
static int check_conv1d(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols, in = c->buffers[op->inputs[0]].cols;
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    int rc = want_inputs(c, op, 0, 1, 0, msg, cap);
    if (rc == CK_OK && (w->rank != 3 || w->shape[0] != cols || w->shape[1] != in ||
                        w->shape[2] % 2 == 0)) {
        snprintf(msg, cap, "weights \"weight\": \"%s\" must be [%zu,%zu,K] with K odd (out, in, "
                 "taps)", w->name, cols, in);
        return CK_E_CIRCUIT;
    }
    return rc ? rc : want_weight(c, op, CK_LIN_BIAS, 1, cols, 0, msg, cap);
}

/* gates, gates_reverse [T,4H]; w_hh, w_hh_reverse [4H,H]; b_hh, b_hh_reverse [4H]; out [T,2H] */
static int check_lstm_recurrence(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols, h = cols / 2;
    if (cols % 2 != 0) {
        snprintf(msg, cap, "out \"%s\" has %zu cols, expected 2H (forward | reverse)",
                 c->buffers[op->output].name, cols);
        return CK_E_CIRCUIT;
    }
    int rc = want_inputs(c, op, 0, 2, 4 * h, msg, cap);
    for (size_t i = 0; rc == CK_OK && i < 4; i += 2) {
        rc = want_weight(c, op, i, 2, 4 * h, h, msg, cap);
        rc = rc ? rc : want_weight(c, op, i + 1, 1, 4 * h, 0, msg, cap);
    }
    return rc;
}

/* ids [T] i32; table [V,C]; out [T,C] */
static int check_embedding_table(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    int rc = want_buffer(c, "in", "ids", op->inputs[0], CK_DTYPE_I32, 1, msg, cap);
    return rc ? rc : want_weight(c, op, 0, 2, 0, c->buffers[op->output].cols, msg, cap);
}

/* x [T,C]; out [T,C+D], D > 0 the style's width (checked against the batch when it runs) */
static int check_concat_style(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols, in = c->buffers[op->inputs[0]].cols;
    int rc = want_inputs(c, op, 0, 1, 0, msg, cap);
    if (rc == CK_OK && cols <= in) {
        snprintf(msg, cap, "out \"%s\" has %zu cols, expected more than in \"x\"'s %zu (x | style)",
                 c->buffers[op->output].name, cols, in);
        return CK_E_CIRCUIT;
    }
    return rc;
}

/* x [T,C]; fc weight [2C,D], fc bias [2C]; out [T,C] */
static int check_ada_layer_norm(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, 0, 1, cols, msg, cap);
    rc = rc ? rc : want_weight(c, op, 0, 2, 2 * cols, 0, msg, cap);
    return rc ? rc : want_weight(c, op, 1, 1, 2 * cols, 0, msg, cap);
}

/* logits [T,B] f32; out frames [T] i32 (the row's out_dtype, checked first) */
static int check_duration(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    int rc = want_inputs(c, op, 0, 1, 0, msg, cap);
    return rc ? rc : want_buffer(c, "out", NULL, op->output, CK_DTYPE_I32, 1, msg, cap);
}

/* x, gamma, beta all [.., C] */
static int check_layer_norm(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, 0, 1, cols, msg, cap);
    rc = rc ? rc : want_weight(c, op, 0, 1, cols, 0, msg, cap);
    return rc ? rc : want_weight(c, op, 1, 1, cols, 0, msg, cap);
}

/* elementwise (gelu_new and any op of one input x): x has out's cols */
static int check_elementwise(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    return want_inputs(c, op, 0, 1, c->buffers[op->output].cols, msg, cap);
}

/* ---- params and scratch ---- */

/* softmax(q k^T / sqrt(head_dim)): "Attention Is All You Need" eq. 1, as in HF AlbertAttention */
static float default_scale(const ck_op *op)
{
    return (float)(1.0 / sqrt((double)op->head_dim));
}

/* The AMX heads: the CPU has AMX-BF16 and the head dim is a multiple of 32 (the tiles' K). */
static int amx_heads(const ck_op *op, int amx_bf16)
{
    return amx_bf16 && op->head_dim % 32 == 0;
}

/* torch.nn.LeakyReLU's negative_slope default (Kokoro's decoder asks for 0.2 and 0.1) */
static float default_slope(const ck_op *op)
{
    (void)op;
    return 0.01f;
}

static int attention_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                             size_t *floats)
{
    (void)c;
    return dtype == CK_DTYPE_BF16 ? ck_attention_scratch__amx(max_seq_len, op->head_dim, floats)
                                  : ck_attention_scratch(max_seq_len, op->head_dim, floats);
}

/* one im2col tile: CK_CONV1D_TILE_ROWS rows of K*in floats */
static int conv1d_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                          size_t *floats)
{
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    (void)max_seq_len;
    (void)dtype;
    *floats = CK_CONV1D_TILE_ROWS * w->shape[1] * w->shape[2]; /* dims <= 2^24 each: no overflow */
    return CK_OK;
}

/* the recurrence's state and W_hh^T: ck_lstm_recurrence_scratch(H) */
static int lstm_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                        size_t *floats)
{
    (void)max_seq_len;
    (void)dtype;
    return ck_lstm_recurrence_scratch(c->buffers[op->output].cols / 2, floats);
}

/* gamma | beta of one sequence: 2C floats */
static int ada_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                       size_t *floats)
{
    (void)max_seq_len;
    (void)dtype;
    *floats = 2 * c->buffers[op->output].cols;
    return CK_OK;
}

/* ---- flops per token ---- */

/* x W^T: 2 K N per token */
static double linear_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    (void)seq_len;
    return 2.0 * (double)c->buffers[op->inputs[CK_LIN_IN_X]].cols *
           (double)c->buffers[op->output].cols;
}

/* q k^T and p v: 2 L C multiply-adds each per token */
static double attention_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    return 4.0 * (double)c->buffers[op->output].cols * (double)seq_len;
}

/* im2col rows times the packed weight: 2 K in out per token */
static double conv1d_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    (void)seq_len;
    return 2.0 * (double)w->shape[0] * (double)w->shape[1] * (double)w->shape[2];
}

/* ---- the table ---- */

#define EPS_PARAM {"eps", CK_PARAM_FLOAT, offsetof(ck_op, eps), NULL}
/* A variant's function and its C name; with its row-range form (steps.h: FN_rows) */
#define F32_STEP(fn) fn, #fn, NULL, NULL, CK_DTYPE_F32, NULL
#define ROW_STEP(fn) fn, #fn, fn##_rows, #fn "_rows"

const ck_op_def ck_op_defs[] = {
    [CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM] = {
        .name = "embedding_three_table_layer_norm",
        .in = {"ids", "positions", NULL},
        .weights = {"word", "position", "token_type", "gamma", "beta", NULL},
        .params = {EPS_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_embedding, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_embedding)}},
        .op_class = CK_OP_CLASS_EMBEDDING,
        .vocab_weight = "word", .positions_weight = "position",
    },
    [CK_OP_LINEAR] = {
        .name = "linear",
        .in = {"x", NULL},
        .weights = {"weight", "bias", NULL},
        .check = check_linear, .split = CK_SPLIT_ROW_BLOCKS,
        /* one step function: the dtype is the oneDNN matmul's (ck_step.args.linear, made per
         * step.linear_slot), the I/O form the step's copies */
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_linear), CK_DTYPE_F32, NULL},
                [CK_DTYPE_BF16] = {ROW_STEP(ck_step_linear), CK_DTYPE_BF16, NULL},
                [CK_DTYPE_I8] = {ROW_STEP(ck_step_linear), CK_DTYPE_I8, NULL}},
        .op_class = CK_OP_CLASS_LINEAR, .dispatch_name = "linear",
        .fuses_next = "gelu_new", .uses_linear = 1, .weights_copied_at_init = 1,
        .flops = linear_flops,
    },
    [CK_OP_ATTENTION] = {
        .name = "attention",
        .in = {"q", "k", "v", NULL},
        .params = {{"heads", CK_PARAM_SIZE, offsetof(ck_op, heads), NULL},
                   {"head_dim", CK_PARAM_SIZE, offsetof(ck_op, head_dim), NULL},
                   {"scale", CK_PARAM_FLOAT, offsetof(ck_op, scale), default_scale},
                   {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_attention, .scratch = attention_scratch, .split = CK_SPLIT_SEQUENCE_HEADS,
        /* bf16: q k^T and p v on AMX tiles, where this CPU has them (else the f32 heads) */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_attention)},
                [CK_DTYPE_BF16] = {ck_step_attention_bf16, "ck_step_attention_bf16", NULL, NULL,
                                   CK_DTYPE_BF16, amx_heads}},
        .op_class = CK_OP_CLASS_ATTENTION, .dispatch_name = "attention",
        .flops = attention_flops,
    },
    [CK_OP_RESIDUAL_LAYER_NORM] = {
        .name = "residual_layer_norm",
        .in = {"x", "residual", NULL},
        .weights = {"gamma", "beta", NULL},
        .params = {EPS_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_residual_layer_norm, .split = CK_SPLIT_ROWS,
        /* bf16 programs: float statistics (the f32 rows and the bf16 copy stay f32 math) */
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_residual_layer_norm), CK_DTYPE_F32, NULL},
                [CK_DTYPE_BF16] = {ROW_STEP(ck_step_residual_layer_norm_bf16), CK_DTYPE_F32,
                                   NULL}},
        .op_class = CK_OP_CLASS_LAYER_NORM, .dispatch_name = "layer_norm", .copy_beside = 1,
    },
    [CK_OP_GELU_NEW] = {
        .name = "gelu_new",
        .in = {"x", NULL},
        .check = check_elementwise, .split = CK_SPLIT_ROWS, .in_place = 1,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_gelu_new), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_GELU, .dispatch_name = "gelu_new",
    },
    [CK_OP_LEAKY_RELU] = {
        .name = "leaky_relu",
        .in = {"x", NULL},
        .params = {{"slope", CK_PARAM_FLOAT, offsetof(ck_op, scale), default_slope},
                   {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_elementwise, .split = CK_SPLIT_ROWS, .in_place = 1,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_leaky_relu), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_OTHER,
    },
    [CK_OP_LAYER_NORM] = {
        .name = "layer_norm",
        .in = {"x", NULL},
        .weights = {"gamma", "beta", NULL},
        .params = {EPS_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_layer_norm, .split = CK_SPLIT_ROWS, .in_place = 1,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_layer_norm), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_LAYER_NORM,
    },
    [CK_OP_CONV1D] = {
        .name = "conv1d",
        .in = {"x", NULL},
        .weights = {"weight", "bias", NULL},
        .check = check_conv1d, .scratch = conv1d_scratch, .split = CK_SPLIT_ROWS,
        /* f32 under every precision: the im2col rows are f32, its linear an f32 matmul */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_conv1d)}},
        .op_class = CK_OP_CLASS_OTHER,
        .uses_linear = 1, .weights_copied_at_init = 1, .flops = conv1d_flops,
    },
    [CK_OP_EMBEDDING] = {
        .name = "embedding",
        .in = {"ids", NULL},
        .weights = {"table", NULL},
        .check = check_embedding_table, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_embedding_table)}},
        .op_class = CK_OP_CLASS_EMBEDDING, .vocab_weight = "table",
    },
    [CK_OP_CONCAT_STYLE] = {
        .name = "concat_style",
        .in = {"x", NULL},
        .check = check_concat_style, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_concat_style)}},
        .op_class = CK_OP_CLASS_OTHER, .sequence_inputs = 1,
    },
    [CK_OP_ADA_LAYER_NORM] = {
        .name = "ada_layer_norm",
        .in = {"x", NULL},
        .weights = {"fc_weight", "fc_bias", NULL},
        .params = {EPS_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_ada_layer_norm, .scratch = ada_scratch,
        .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_ada_layer_norm)}},
        .op_class = CK_OP_CLASS_LAYER_NORM, .sequence_inputs = 1,
        .uses_linear = 1, .weights_copied_at_init = 1,
    },
    [CK_OP_DURATION] = {
        .name = "duration",
        .in = {"logits", NULL},
        .check = check_duration, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_duration)}},
        .op_class = CK_OP_CLASS_OTHER, .out_dtype = CK_DTYPE_I32, .sequence_inputs = 1,
    },
    [CK_OP_LSTM_RECURRENCE] = {
        .name = "lstm_recurrence",
        .in = {"gates", "gates_reverse", NULL},
        .weights = {"w_hh", "b_hh", "w_hh_reverse", "b_hh_reverse", NULL},
        .check = check_lstm_recurrence, .scratch = lstm_scratch,
        .split = CK_SPLIT_SEQUENCE_HEADS, /* (sequence, direction) pairs, interleaved */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_lstm_recurrence)}},
        .op_class = CK_OP_CLASS_OTHER,
    },
};
_Static_assert(sizeof ck_op_defs / sizeof ck_op_defs[0] == CK_OP_KIND_COUNT,
               "ck_op_defs: one row per ck_op_kind");

const ck_op_def *ck_op_def_of(ck_op_kind kind)
{
    return (unsigned)kind < CK_OP_KIND_COUNT ? &ck_op_defs[kind] : NULL;
}

const char *ck_op_kind_name(ck_op_kind kind)
{
    return (unsigned)kind < CK_OP_KIND_COUNT ? ck_op_defs[kind].name : "unknown";
}

const ck_op_variant *ck_op_variant_of(const ck_op *op, ck_dtype precision, int amx_bf16)
{
    const ck_op_def *def = op != NULL ? ck_op_def_of(op->kind) : NULL;
    if (def == NULL || (unsigned)precision >= CK_DTYPE_COUNT) {
        return NULL;
    }
    const ck_op_variant *v = &def->run[precision];
    return v->fn != NULL && (v->usable == NULL || v->usable(op, amx_bf16)) ? v : &def->run[CK_DTYPE_F32];
}

ck_dtype ck_op_dtype(ck_op_kind kind, ck_dtype precision)
{
    const ck_op_def *def = ck_op_def_of(kind);
    return def != NULL && (unsigned)precision < CK_DTYPE_COUNT && def->run[precision].fn != NULL
               ? def->run[precision].computes : CK_DTYPE_F32;
}

int ck_op_weight_slot(const ck_op_def *def, const char *slot)
{
    for (int k = 0; slot != NULL && k < CK_MAX_SLOTS && def->weights[k] != NULL; k++) {
        if (strcmp(def->weights[k], slot) == 0) {
            return k;
        }
    }
    return -1;
}

double ck_circuit_flops_per_token(const ck_circuit *c, size_t seq_len)
{
    double flops = 0.0; /* integers below 2^53: exact in any order */
    for (size_t i = 0; i < c->n_ops; i++) {
        const ck_op_def *def = ck_op_def_of(c->ops[i].kind);
        flops += def != NULL && def->flops != NULL ? def->flops(c, &c->ops[i], seq_len) : 0.0;
    }
    return flops;
}

void ck_op_in_place_kinds(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < CK_OP_KIND_COUNT && used < cap; k++) {
        if (ck_op_defs[k].in_place) {
            int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", ck_op_defs[k].name);
            used += n > 0 ? (size_t)n : 0;
        }
    }
}

ck_dtype ck_precision_dtype(ck_precision precision)
{
    return precision == CK_PRECISION_BF16   ? CK_DTYPE_BF16
           : precision == CK_PRECISION_INT8 ? CK_DTYPE_I8
                                            : CK_DTYPE_F32;
}

int ck_op_precision_supported(ck_dtype precision)
{
    int ok = precision == CK_DTYPE_F32;
    for (int k = 0; !ok && (unsigned)precision < CK_DTYPE_COUNT && k < CK_OP_KIND_COUNT; k++) {
        ok = ck_op_defs[k].run[precision].fn != NULL;
    }
    return ok;
}

int ck_op_check(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    int rc = want_buffer(c, "out", NULL, op->output, ck_op_defs[op->kind].out_dtype, 0, msg, cap);
    return rc ? rc : ck_op_defs[op->kind].check(c, op, msg, cap);
}
