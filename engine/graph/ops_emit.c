/* ops_emit.c - the emit column of the op table: the generated operands of each step, for the
 * step runners the interpreter runs too (scheduler/steps.h): its planned offsets, bf16 copies,
 * weight indices and scalars printed as constants (floats as exact hex literals). Writes only to
 * the FILE it is given. */
#include <stdio.h>

#include "ops_emit.h"

/* A copy offset, CK_NO_COPY by name. */
static void emit_copy(FILE *f, size_t copy)
{
    if (copy == CK_NO_COPY) {
        fputs("CK_NO_COPY", f);
    } else {
        fprintf(f, "%zuu", copy);
    }
}

/* "&(const ck_step_args){.in = {o0 /_* b0 *_/, ...}, .in_copy = {...}, .out = o /_* b *_/,
 * .cols = n, .out_copy = c" from the step's bound args (every in_copy slot: an unprinted one
 * would read 0, not CK_NO_COPY). */
static void emit_operands(FILE *f, const ck_circuit *c, const ck_step *s)
{
    const ck_step_args *a = &s->args;
    fputs("&(const ck_step_args){.in = {", f);
    for (size_t k = 0; k < s->n_in; k++) {
        fprintf(f, "%s%zuu /* %s */", k ? ", " : "", a->in[k], c->buffers[s->in[k]].name);
    }
    fputs("}, .in_copy = {", f);
    for (size_t k = 0; k < CK_STEP_MAX_SLOTS; k++) {
        fputs(k ? ", " : "", f);
        emit_copy(f, a->in_copy[k]);
    }
    fprintf(f, "},\n        .out = %zuu /* %s */, .cols = %zuu, .out_copy = ", a->out,
            c->buffers[s->out].name, a->cols);
    emit_copy(f, a->out_copy);
}

/* ".w = {st->w[i0], ...}, .w_rows = {r0, ...}": circuit weight indices, which the generated
 * WEIGHTS[] table names, and their rows. */
static void emit_weights(FILE *f, const ck_step *s)
{
    fputs(",\n        .w = {", f);
    for (size_t k = 0; k < s->n_weights; k++) {
        fprintf(f, "%sst->w[%d]", k ? ", " : "", s->weight[k]);
    }
    fputs("}, .w_rows = {", f);
    for (size_t k = 0; k < s->n_weights; k++) {
        fprintf(f, "%s%zuu", k ? ", " : "", s->args.w_rows[k]);
    }
    fputc('}', f);
}

/* A float constant that reads back to the same bits: hex, with the decimal in a comment. */
static void emit_float(FILE *f, const char *field, float v)
{
    fprintf(f, ", .%s = %af /* %.9g */", field, (double)v, (double)v);
}

static int finish(FILE *f)
{
    fputc('}', f);
    return ferror(f) ? CK_E_IO : CK_OK;
}

static int emit_embedding(FILE *f, const ck_circuit *c, const ck_step *s)
{
    emit_operands(f, c, s);
    emit_weights(f, s);
    emit_float(f, "eps", s->args.eps);
    return finish(f);
}

static int emit_linear(FILE *f, const ck_circuit *c, const ck_step *s)
{
    emit_operands(f, c, s); /* its weights live in its linear */
    fprintf(f, ",\n        .linear_in_cols = %zuu, .linear = st->linear[%zu]",
            s->args.linear_in_cols, s->linear_slot);
    return finish(f);
}

static int emit_lstm_recurrence(FILE *f, const ck_circuit *c, const ck_step *s)
{
    emit_operands(f, c, s);
    emit_weights(f, s);
    return finish(f);
}

static int emit_attention(FILE *f, const ck_circuit *c, const ck_step *s)
{
    emit_operands(f, c, s);
    fprintf(f, ",\n        .heads = %zuu, .head_dim = %zuu", s->args.heads, s->args.head_dim);
    emit_float(f, "scale", s->args.scale);
    return finish(f);
}

static int emit_residual_layer_norm(FILE *f, const ck_circuit *c, const ck_step *s)
{
    emit_operands(f, c, s);
    emit_weights(f, s);
    emit_float(f, "eps", s->args.eps);
    return finish(f);
}

static int emit_gelu_new(FILE *f, const ck_circuit *c, const ck_step *s)
{
    emit_operands(f, c, s);
    return finish(f);
}

static int emit_leaky_relu(FILE *f, const ck_circuit *c, const ck_step *s)
{
    emit_operands(f, c, s);
    emit_float(f, "scale", s->args.scale); /* the slope */
    return finish(f);
}

/* The speech circuit's ops (per-sequence style or speed, the generator's noise, frame rows): every
 * operand the lowering binds (program.c), so the step runs on exactly the interpreter's args. The
 * weights are st->w[] (NULL for a slot the circuit left out), the linear the slot's, and the
 * per-sequence out offsets of a rate change the frame batch's (st->fb[k].offsets, set once the
 * durations are known: prelude's gen_frames). */
static int emit_all_operands(FILE *f, const ck_circuit *c, const ck_step *s)
{
    const ck_step_args *a = &s->args;
    emit_operands(f, c, s);
    fputs(",\n        .w = {", f);
    for (size_t k = 0; k < CK_STEP_MAX_SLOTS; k++) {
        if (k < s->n_weights && s->w[k] != NULL) {
            fprintf(f, "%sst->w[%d]", k ? ", " : "", s->weight[k]);
        } else {
            fprintf(f, "%sNULL", k ? ", " : "");
        }
    }
    fputs("}, .w_rows = {", f);
    for (size_t k = 0; k < CK_STEP_MAX_SLOTS; k++) {
        fprintf(f, "%s%zuu", k ? ", " : "", a->w_rows[k]);
    }
    fprintf(f, "},\n        .linear_in_cols = %zuu, .taps = %zuu, .heads = %zuu, .head_dim = %zuu",
            a->linear_in_cols, a->taps, a->heads, a->head_dim);
    emit_float(f, "eps", a->eps);
    emit_float(f, "scale", a->scale);
    fprintf(f, ",\n        .style_offset = %zuu, .dilation = %zuu, .stride = %zuu, .padding = %zuu",
            a->style_offset, a->dilation, a->stride, a->padding);
    if (s->def->uses_linear) {
        fprintf(f, ", .linear = st->linear[%zu]", s->linear_slot);
    }
    int slot = ck_circuit_frame_slot(c, s->out_frames);
    if (s->out_frames != s->rows_frames && s->out_frames != 0 && slot >= 0) {
        fprintf(f, ", .out_offsets = st->fb[%d].offsets", slot);
    }
    return finish(f);
}

const ck_op_emit_fn ck_op_emit[] = {
    [CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM] = emit_embedding,
    [CK_OP_LINEAR] = emit_linear,
    [CK_OP_ATTENTION] = emit_attention,
    [CK_OP_RESIDUAL_LAYER_NORM] = emit_residual_layer_norm,
    [CK_OP_GELU_NEW] = emit_gelu_new,
    [CK_OP_LEAKY_RELU] = emit_leaky_relu,
    [CK_OP_LAYER_NORM] = emit_residual_layer_norm, /* the same operands: x, gamma, beta, eps */
    [CK_OP_CONV1D] = emit_all_operands, /* dilation, stride, padding, out offsets */
    [CK_OP_LSTM_RECURRENCE] = emit_all_operands,
    [CK_OP_EMBEDDING] = emit_lstm_recurrence, /* operands and weights */
    [CK_OP_CONCAT_STYLE] = emit_all_operands,
    [CK_OP_ADA_LAYER_NORM] = emit_all_operands,
    [CK_OP_DURATION] = emit_all_operands,
    [CK_OP_EXPAND_ROWS] = emit_all_operands,
    [CK_OP_UPSAMPLE_NEAREST2_ROWS] = emit_all_operands,
    [CK_OP_CONV_TRANSPOSE1D_DEPTHWISE_K3S2] = emit_all_operands,
    [CK_OP_ADAIN_INSTANCE_NORM] = emit_all_operands,
    [CK_OP_ADD_SCALED] = emit_all_operands,
    [CK_OP_CONCAT_COLS] = emit_all_operands,
    [CK_OP_DOWNSAMPLE2_ROWS] = emit_all_operands,
    [CK_OP_NOISE_NORMAL] = emit_all_operands,
    [CK_OP_HARMONIC_SOURCE] = emit_all_operands,
    [CK_OP_STFT20] = emit_all_operands,
    [CK_OP_ISTFT20] = emit_all_operands,
    [CK_OP_REFLECT_PAD_LEFT1] = emit_all_operands,
    [CK_OP_ADAIN_SNAKE] = emit_all_operands,
    [CK_OP_CONV_TRANSPOSE1D_COL2IM] = emit_all_operands,
};
_Static_assert(sizeof ck_op_emit / sizeof ck_op_emit[0] == CK_OP_KIND_COUNT,
               "ck_op_emit: one emitter per ck_op_kind");
