/* ops_emit.c - the emit column of the op table: one generated C call per step, its planned
 * offsets, weight indices and scalars printed as constants (floats as exact hex literals). The
 * calls name the gen_step runners of the generated prelude (codegen/emit_c.c). Writes only to
 * the FILE it is given. */
#include <stdio.h>

#include "ops.h"

/* ".in = {o0 /_* b0 *_/, ...}" for the step's input slots. */
static void emit_inputs(FILE *f, const ck_circuit *c, const ck_step *s)
{
    fputs(".in = {", f);
    for (size_t k = 0; k < s->n_in; k++) {
        fprintf(f, "%s%zu /* %s */", k ? ", " : "", s->in_offset[k], c->buffers[s->in[k]].name);
    }
    fprintf(f, "},\n        .out = %zu /* %s */, .cols = %zuu", s->out_offset,
            c->buffers[s->out].name, s->out_cols);
}

/* ".w = {i0, ...}": circuit weight indices, which the generated WEIGHTS[] table names. */
static void emit_weights(FILE *f, const ck_step *s)
{
    fputs(",\n        .w = {", f);
    for (size_t k = 0; k < s->n_weights; k++) {
        fprintf(f, "%s%d", k ? ", " : "", s->weight[k]);
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
    fputs("});\n", f);
    return ferror(f) ? CK_E_IO : CK_OK;
}

int ck_emit_embedding(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    (void)linear_slot;
    fputs("    rc = run_embedding(st, &(const gen_step){", f);
    emit_inputs(f, c, s);
    emit_weights(f, s);
    emit_float(f, "eps", s->eps);
    return finish(f);
}

int ck_emit_linear(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    fputs("    rc = run_linear(st, &(const gen_step){", f);
    emit_inputs(f, c, s);
    fprintf(f, ", .in_cols = %zuu, .linear = %zuu", s->in_cols[CK_LIN_IN_X], linear_slot);
    return finish(f);
}

int ck_emit_attention(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    (void)linear_slot;
    fputs("    rc = run_attention(st, &(const gen_step){", f);
    emit_inputs(f, c, s);
    fprintf(f, ",\n        .heads = %zuu, .head_dim = %zuu, .bf16_heads = %d", s->heads, s->head_dim,
            s->dtype == CK_DTYPE_BF16);
    emit_float(f, "scale", s->scale);
    return finish(f);
}

int ck_emit_residual_layer_norm(FILE *f, const ck_circuit *c, const ck_step *s,
                                size_t linear_slot)
{
    (void)linear_slot;
    fputs("    rc = run_residual_layer_norm(st, &(const gen_step){", f);
    emit_inputs(f, c, s);
    emit_weights(f, s);
    emit_float(f, "eps", s->eps);
    return finish(f);
}

int ck_emit_gelu_new(FILE *f, const ck_circuit *c, const ck_step *s, size_t linear_slot)
{
    (void)linear_slot;
    fputs("    rc = run_gelu_new(st, &(const gen_step){", f);
    emit_inputs(f, c, s);
    return finish(f);
}
