/* ops_emit.c - the emit column of the op table: the generated operands of each step, for the
 * step runners the interpreter runs too (scheduler/steps.h): its planned offsets, bf16 copies,
 * weight indices and scalars printed as constants (floats as exact hex literals). Writes only to
 * the FILE it is given. */
#include <stdio.h>

#include "program.h"

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
 * .cols = n, .out_copy = c" for the step's slots. */
static void emit_operands(FILE *f, const ck_circuit *c, const ck_step *s)
{
    fputs("&(const ck_step_args){.in = {", f);
    for (size_t k = 0; k < s->n_in && k < 3; k++) {
        fprintf(f, "%s%zuu /* %s */", k ? ", " : "", s->in_offset[k], c->buffers[s->in[k]].name);
    }
    fputs("}, .in_copy = {", f);
    for (size_t k = 0; k < 3; k++) {
        fputs(k ? ", " : "", f);
        emit_copy(f, s->in_copy[k]);
    }
    fprintf(f, "},\n        .out = %zuu /* %s */, .cols = %zuu, .out_copy = ", s->out_offset,
            c->buffers[s->out].name, s->out_cols);
    emit_copy(f, s->out_copy);
}

/* ".w = {st->w[i0], ...}": circuit weight indices, which the generated WEIGHTS[] table names. */
static void emit_weights(FILE *f, const ck_step *s)
{
    fputs(",\n        .w = {", f);
    for (size_t k = 0; k < s->n_weights; k++) {
        fprintf(f, "%sst->w[%d]", k ? ", " : "", s->weight[k]);
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

int ck_emit_embedding(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    (void)linear_slot;
    emit_operands(f, c, s);
    emit_weights(f, s);
    fprintf(f, ",\n        .w_rows = {%zuu, %zuu, %zuu}", s->w[CK_EMB_WORD]->shape[0],
            s->w[CK_EMB_POSITION]->shape[0], s->w[CK_EMB_TOKEN_TYPE]->shape[0]);
    emit_float(f, "eps", s->eps);
    return finish(f);
}

int ck_emit_linear(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    emit_operands(f, c, s);
    fprintf(f, ",\n        .in_cols = %zuu, .linear = st->linear[%zu]", s->in_cols[CK_LIN_IN_X],
            linear_slot);
    return finish(f);
}

int ck_emit_attention(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    (void)linear_slot;
    emit_operands(f, c, s);
    fprintf(f, ",\n        .heads = %zuu, .head_dim = %zuu, .bf16_heads = %d", s->heads, s->head_dim,
            s->dtype == CK_DTYPE_BF16);
    emit_float(f, "scale", s->scale);
    return finish(f);
}

int ck_emit_residual_layer_norm(FILE *f, const ck_circuit *c, const ck_step *s,
                                size_t linear_slot)
{
    (void)linear_slot;
    emit_operands(f, c, s);
    emit_weights(f, s);
    emit_float(f, "eps", s->eps);
    fprintf(f, ", .stats_f32 = %d", s->stats_f32);
    return finish(f);
}

int ck_emit_gelu_new(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    (void)linear_slot;
    emit_operands(f, c, s);
    return finish(f);
}
