/* program.c - the lowering of circuit + op table + plan + weights into the flat step array: fusion,
 * offsets, bound tensors, the bf16 copies of a bf16 program, the row-local runs, and each step's
 * bound operands. Never parses JSON, never runs a kernel itself. */
#include "program.h"

_Static_assert(CK_STEP_MAX_SLOTS == CK_MAX_SLOTS, "ck_step_args holds every slot of a ck_op");

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- lowering ---- */

/* 1 when op i + 1 is of the kind op i's row may absorb (fuses_next: a linear's gelu_new) and
 * reads op i's output, which no later op needs (plan liveness) and which is not a circuit output. */
static int fusable(const ck_circuit *c, const ck_plan *plan, size_t i)
{
    const char *next = ck_op_defs[c->ops[i].kind].fuses_next;
    if (i + 1 >= c->n_ops || next == NULL ||
        strcmp(ck_op_defs[c->ops[i + 1].kind].name, next) != 0 ||
        c->ops[i + 1].inputs[0] != c->ops[i].output) {
        return 0;
    }
    int b = c->ops[i].output;
    return c->buffers[b].role == CK_BUFFER_ACTIVATION &&
           (i + 2 >= c->n_ops || !plan->live[(i + 2) * plan->n_buffers + (size_t)b]);
}

static void lower_op(ck_step *s, const ck_circuit *c, const ck_plan *plan,
                     const ck_tensor *const *weights, size_t i)
{
    const ck_op *op = &c->ops[i];
    const ck_op_def *def = &ck_op_defs[op->kind];
    memset(s, 0, sizeof *s);
    s->def = def;
    s->variant = ck_op_variant_of(op, ck_op_precision_at(c, i, plan->limits.precision),
                                  plan->limits.amx_bf16);
    s->kind = op->kind;
    s->dtype = s->variant->computes;
    s->op = i;
    for (; s->n_in < CK_MAX_SLOTS && def->in[s->n_in] != NULL; s->n_in++) {
        int b = op->inputs[s->n_in];
        s->in[s->n_in] = b;
        s->in_offset[s->n_in] = plan->offsets[b];
        s->in_cols[s->n_in] = c->buffers[b].cols;
    }
    for (; s->n_weights < CK_MAX_SLOTS && def->weights[s->n_weights] != NULL; s->n_weights++) {
        s->weight[s->n_weights] = op->weights[s->n_weights];
        s->w[s->n_weights] = op->weights[s->n_weights] >= 0 ? weights[op->weights[s->n_weights]]
                                                            : NULL;
    }
    for (size_t k = 0; k < CK_MAX_SLOTS; k++) {
        s->in_copy[k] = CK_NO_COPY;
    }
    s->out_copy = CK_NO_COPY;
    s->out = op->output;
    s->out_offset = plan->offsets[op->output];
    s->out_cols = c->buffers[op->output].cols;
    s->out_frames = c->buffers[op->output].frames;
    s->rows_frames = c->buffers[op->inputs[0]].frames;
    s->eps = op->eps;
    s->heads = op->heads;
    s->head_dim = op->head_dim;
    s->scale = op->scale;
    s->style_offset = op->style_offset;
    s->op_ptr = op;
    s->split = def->split;
    s->checkpoint = op->checkpoint[0] != '\0' ? op->checkpoint : NULL;
}

/* ---- bf16 copies (bf16 precision; ck_step in_copy/out_copy) ---- */

/* The step before `i` that last wrote buffer b, or -1. */
static int last_writer(const ck_program *p, size_t i, int b)
{
    while (i > 0 && p->steps[i - 1].out != b) {
        i--;
    }
    return (int)i - 1;
}

/* 1 when every step after `writer` that reads buffer b, before b is written again, is of `kind`
 * and reads it in one of its first `slots` input slots, and b is an activation (no output). */
static int only_read_by(const ck_program *p, const ck_circuit *c, size_t writer, int b,
                        ck_op_kind kind, size_t slots)
{
    if (c->buffers[b].role != CK_BUFFER_ACTIVATION) {
        return 0;
    }
    for (size_t k = writer + 1; k < p->n_steps; k++) {
        const ck_step *s = &p->steps[k];
        for (size_t slot = 0; slot < s->n_in; slot++) {
            if (s->in[slot] == b && !(s->kind == kind && slot < slots)) {
                return 0;
            }
        }
        if (s->out == b) {
            return 1;
        }
    }
    return 1;
}

/* The copy of buffer b (copy_of[b]), placed at the end of the copy arena on first use. */
static size_t copy_for(ck_program *p, const ck_circuit *c, const ck_plan *plan, int b,
                       size_t *copy_of)
{
    if (copy_of[b] == CK_NO_COPY) {
        size_t bytes = ck_plan_dim_rows(plan, c->buffers[b].frames) * c->buffers[b].cols *
                       sizeof(uint16_t);
        copy_of[b] = p->copies_bytes;
        p->copies_bytes += (bytes + CK_ARENA_ALIGN - 1) / CK_ARENA_ALIGN * CK_ARENA_ALIGN;
    }
    return copy_of[b];
}

/* Linear step i reads the copy its input's writer makes: a residual_layer_norm, or a fused
 * linear that itself reads a copy and whose output only linears read. */
static void copy_linear_input(ck_program *p, const ck_circuit *c, const ck_plan *plan, size_t i,
                              size_t *copy_of)
{
    int b = p->steps[i].in[CK_LIN_IN_X], j = last_writer(p, i, b);
    if (j < 0) {
        return;
    }
    const ck_step *w = &p->steps[j];
    int fused_writer = w->kind == CK_OP_LINEAR && w->fused_gelu &&
                       w->in_copy[CK_LIN_IN_X] != CK_NO_COPY &&
                       only_read_by(p, c, (size_t)j, b, CK_OP_LINEAR, 1);
    if (w->kind == CK_OP_RESIDUAL_LAYER_NORM || fused_writer) {
        p->steps[j].out_copy = p->steps[i].in_copy[CK_LIN_IN_X] = copy_for(p, c, plan, b, copy_of);
    }
}

/* An AMX attention step a whose q, k and v each come from an unfused linear that reads a copy
 * and whose output only attention steps read: those linears write bf16 only, a reads them; and a
 * writes its context only in bf16 when only linears read it. */
static void copy_attention_inputs(ck_program *p, const ck_circuit *c, const ck_plan *plan,
                                  size_t a, size_t *copy_of)
{
    ck_step *st = p->steps;
    int w[3];
    if (st[a].kind != CK_OP_ATTENTION || st[a].dtype == CK_DTYPE_F32) {
        return;
    }
    for (int k = 0; k < 3; k++) {
        int b = st[a].in[k];
        w[k] = last_writer(p, a, b);
        if (w[k] < 0 || st[w[k]].kind != CK_OP_LINEAR || st[w[k]].fused_gelu ||
            st[w[k]].in_copy[CK_LIN_IN_X] == CK_NO_COPY ||
            !only_read_by(p, c, (size_t)w[k], b, CK_OP_ATTENTION, 3)) {
            return;
        }
    }
    for (int k = 0; k < 3; k++) {
        st[w[k]].out_copy = st[a].in_copy[k] = copy_for(p, c, plan, st[a].in[k], copy_of);
    }
    /* and its context, when only linears read it (the output projection), in bf16 only: rounded as
     * their own staging would round it (ck_attention_head_bf16__amx) */
    int b = st[a].out;
    if (!only_read_by(p, c, a, b, CK_OP_LINEAR, 1)) {
        return;
    }
    st[a].out_copy = copy_for(p, c, plan, b, copy_of);
    for (size_t r = a + 1; r < p->n_steps && st[r].out != b; r++) {
        if (st[r].kind == CK_OP_LINEAR && st[r].in[CK_LIN_IN_X] == b) {
            st[r].in_copy[CK_LIN_IN_X] = st[a].out_copy;
        }
    }
}

static int schedule_copies(ck_program *p, const ck_circuit *c, const ck_plan *plan, int fuse_gelu,
                           ck_error *err)
{
    size_t *copy_of = malloc((c->n_buffers ? c->n_buffers : 1) * sizeof *copy_of);
    if (copy_of == NULL) {
        return ck_fail(err, CK_E_MEMORY, "lower: out of memory for the bf16 copies");
    }
    for (size_t b = 0; b < c->n_buffers; b++) {
        copy_of[b] = CK_NO_COPY;
    }
    for (size_t i = 0; i < p->n_steps; i++) {
        if (p->steps[i].kind == CK_OP_LINEAR && p->steps[i].dtype == CK_DTYPE_BF16) {
            copy_linear_input(p, c, plan, i, copy_of);
        }
    }
    for (size_t a = 0; fuse_gelu && a < p->n_steps; a++) {
        copy_attention_inputs(p, c, plan, a, copy_of);
    }
    free(copy_of);
    return CK_OK;
}

/* ---- int8 programs: which linears quantize ---- */

/* Steps of p whose first weight slot is bound to the tensor `w` (a repeated layer's linears share
 * theirs: ALBERT's 12 layers are one set of weights). */
static size_t weight_uses(const ck_program *p, const ck_tensor *w)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        n += p->steps[i].kind == CK_OP_LINEAR && p->steps[i].w[0] == w;
    }
    return n;
}

/* In an int8 program a linear runs in int8 where its output is damped before it reaches the
 * residual stream: read only by attention (q, k, v: through the softmax and the average over keys)
 * or by its GELU, fused or not (the FFN in). The others write the residual stream or the features
 * directly. Those of a repeated layer (the attention dense, the FFN out) run in bf16, which the
 * executor turns into f32 on a CPU without native bf16; those whose weights serve one step only
 * (the 128->768 projection and the 768->512 features: 0.7% of the encoder's MACs) run in f32.
 * Measured on every pinned case (docs/precision.md): all linears in int8 gives the features 2.3%
 * relative RMSE; q, k, v, FFN-in in int8 and the rest in bf16 1.51% (solo3 on AMX); with the two
 * single-use projections in f32 1.28%. */
static void choose_int8_linears(ck_program *p, const ck_circuit *c)
{
    for (size_t i = 0; i < p->n_steps; i++) {
        ck_step *s = &p->steps[i];
        if (s->kind == CK_OP_LINEAR && s->dtype == CK_DTYPE_I8 && !s->fused_gelu &&
            !only_read_by(p, c, i, s->out, CK_OP_ATTENTION, 3) &&
            !only_read_by(p, c, i, s->out, CK_OP_GELU_NEW, 1)) { /* unfused runs (X-Ray) */
            s->dtype = weight_uses(p, s->w[0]) > 1 ? CK_DTYPE_BF16 : CK_DTYPE_F32;
        }
    }
}

/* ---- row-local runs ---- */

/* Bytes a step touches, in the activation arena (copy 0) or the bf16 copy arena (copy 1). */
typedef struct {
    int copy;
    size_t offset, bytes, stride; /* stride: one row's bytes */
    int write;
} span;

#define MAX_SPANS (2 * CK_MAX_SLOTS + 2)
#define MAX_RUN_SPANS (CK_ROW_RUN_MAX_STEPS * MAX_SPANS)

/* A step's spans over the plan's rows: each input and its copy (a linear also writes zeros into
 * their padding rows), the output and its copy. */
static size_t step_spans(const ck_step *s, size_t rows, span *out)
{
    size_t n = 0;
    int linear = s->kind == CK_OP_LINEAR;
    for (size_t k = 0; k < s->n_in && k < CK_MAX_SLOTS; k++) {
        size_t f32 = s->in_cols[k] * sizeof(float), bf16 = s->in_cols[k] * sizeof(uint16_t);
        out[n++] = (span){0, s->in_offset[k], rows * f32, f32, linear};
        if (s->in_copy[k] != CK_NO_COPY) {
            out[n++] = (span){1, s->in_copy[k], rows * bf16, bf16, linear};
        }
    }
    size_t f32 = s->out_cols * sizeof(float), bf16 = s->out_cols * sizeof(uint16_t);
    out[n++] = (span){0, s->out_offset, rows * f32, f32, 1};
    if (s->out_copy != CK_NO_COPY) {
        out[n++] = (span){1, s->out_copy, rows * bf16, bf16, 1};
    }
    return n;
}

/* Two spans of different steps of one run conflict when one writes bytes the other touches and
 * they do not share them row for row: with the rows split over workers, worker A's rows of one
 * would then be worker B's rows of the other. */
static int spans_conflict(const span *a, const span *b)
{
    return a->copy == b->copy && (a->write || b->write) && a->offset < b->offset + b->bytes &&
           b->offset < a->offset + a->bytes &&
           !(a->offset == b->offset && a->stride == b->stride);
}

void ck_program_row_runs(ck_program *p, const ck_plan *plan)
{
    span in_run[MAX_RUN_SPANS]; /* 46 KiB */
    size_t n_run = 0, start = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        ck_step *s = &p->steps[i];
        span mine[MAX_SPANS];
        size_t rows = ck_plan_dim_rows(plan, s->rows_frames);
        size_t n = s->variant->rows != NULL ? step_spans(s, rows, mine) : 0;
        int joins = n > 0 && i > 0 && p->steps[i - 1].variant->rows != NULL &&
                    p->steps[i - 1].rows_frames == s->rows_frames && /* one batch of rows */
                    i - start < CK_ROW_RUN_MAX_STEPS;
        for (size_t a = 0; joins && a < n; a++) {
            for (size_t b = 0; joins && b < n_run; b++) {
                joins = !spans_conflict(&mine[a], &in_run[b]);
            }
        }
        if (!joins) {
            start = i;
            n_run = 0;
        }
        s->run_first = start;
        memcpy(in_run + n_run, mine, n * sizeof *mine);
        n_run += n;
    }
}

/* The linear slots: one per (weight, fused gelu, bf16 out, compute dtype) in step order, over the steps whose
 * row uses a linear (linear, conv1d). */
static void assign_linear_slots(ck_program *p)
{
    for (size_t i = 0; i < p->n_steps; i++) {
        ck_step *s = &p->steps[i];
        size_t k = 0;
        for (; s->def->uses_linear && k < i; k++) {
            const ck_step *o = &p->steps[k];
            if (o->def->uses_linear && o->weight[CK_LIN_WEIGHT] == s->weight[CK_LIN_WEIGHT] &&
                o->fused_gelu == s->fused_gelu && o->out_dtype == s->out_dtype &&
                o->dtype == s->dtype) {
                s->linear_slot = o->linear_slot;
                break;
            }
        }
        if (s->def->uses_linear && k == i) {
            s->linear_slot = p->n_linears++;
        }
    }
}

/* The operands step s runs on (steps.h): its offsets, copies, bound tensors' data and table rows,
 * scalars. */
static void bind(ck_step *s)
{
    ck_step_args *a = &s->args;
    *a = (ck_step_args){
        .linear_in_cols = s->kind == CK_OP_LINEAR ? s->in_cols[CK_LIN_IN_X] : 0,
        .taps = s->kind == CK_OP_CONV1D ? s->w[CK_LIN_WEIGHT]->shape[2] : 0,
        .out = s->out_offset, .cols = s->out_cols, .out_copy = s->out_copy, .heads = s->heads,
        .head_dim = s->head_dim, .eps = s->eps, .scale = s->scale,
        .style_offset = s->style_offset,
    };
    for (size_t k = 0; k < CK_MAX_SLOTS; k++) {
        a->in[k] = k < s->n_in ? s->in_offset[k] : 0;
        a->in_copy[k] = s->in_copy[k];
        a->w[k] = k < s->n_weights && s->w[k] != NULL ? s->w[k]->data : NULL;
        a->w_rows[k] = k < s->n_weights && s->w[k] != NULL ? s->w[k]->shape[0] : 0;
    }
    if (s->kind == CK_OP_CONV1D) { /* its linear's K: the im2col row, K taps of `in` */
        a->linear_in_cols = a->taps * s->in_cols[CK_LIN_IN_X];
    }
    if (s->kind == CK_OP_CONCAT_COLS) { /* x's cols (z's: cols less these) */
        a->linear_in_cols = s->in_cols[0];
    }
    if (s->kind == CK_OP_CONCAT_STYLE) { /* the style columns appended */
        a->linear_in_cols = s->out_cols - s->in_cols[0];
    }
    if (s->kind == CK_OP_DURATION) { /* the bins */
        a->linear_in_cols = s->in_cols[0];
    }
    if (s->kind == CK_OP_CONV1D) { /* the generator's: dilation, stride, padding ('same') */
        const ck_op *op = s->op_ptr;
        a->dilation = op->dilation ? op->dilation : 1;
        a->stride = op->stride ? op->stride : 1;
        a->padding = op->padding == SIZE_MAX ? a->dilation * (a->taps - 1) / 2 : op->padding;
    }
    if (s->kind == CK_OP_CONV_TRANSPOSE1D_COL2IM) { /* Cin, K taps, stride, padding (K - s) / 2 */
        a->linear_in_cols = s->in_cols[0];
        a->taps = s->w[CK_LIN_WEIGHT]->shape[2];
        a->stride = s->op_ptr->stride;
        a->padding = (a->taps - a->stride) / 2;
    }
    if (s->kind == CK_OP_ADA_LAYER_NORM || s->kind == CK_OP_ADAIN_INSTANCE_NORM ||
        s->kind == CK_OP_ADAIN_SNAKE) { /* its fc's K */
        a->linear_in_cols = s->w[CK_LIN_WEIGHT]->shape[1];
    }
}

int ck_program_lower(ck_program *p, const ck_circuit *c, const ck_plan *plan,
                     const ck_tensor *const *weights, int fuse_gelu, ck_error *err)
{
    if (p == NULL || c == NULL || plan == NULL || (c->n_weights > 0 && weights == NULL)) {
        return ck_fail(err, CK_E_ARG, "lower: null program, circuit, plan or weights");
    }
    if (!ck_op_precision_supported(plan->limits.precision)) {
        return ck_fail(err, CK_E_ARG, "lower: the plan's precision is not f32, bf16 or i8");
    }
    memset(p, 0, sizeof *p);
    p->steps = calloc(c->n_ops ? c->n_ops : 1, sizeof *p->steps);
    if (p->steps == NULL) {
        return ck_fail(err, CK_E_MEMORY, "lower: out of memory for %zu steps", c->n_ops);
    }
    for (size_t i = 0; i < c->n_ops; i++) {
        ck_step *s = &p->steps[p->n_steps++];
        lower_op(s, c, plan, weights, i);
        int vocab = ck_op_weight_slot(s->def, s->def->vocab_weight);
        if (vocab >= 0) {
            p->vocab = s->w[vocab]->shape[0];
        }
        if (fuse_gelu && fusable(c, plan, i)) { /* the gelu_new at i + 1 runs inside this step */
            const ck_op *gelu = &c->ops[++i];
            s->fused_gelu = 1;
            s->out = gelu->output;
            s->out_offset = plan->offsets[gelu->output];
            s->out_cols = c->buffers[gelu->output].cols;
            s->checkpoint = gelu->checkpoint[0] != '\0' ? gelu->checkpoint : NULL;
        }
    }
    /* bf16 copies only: an int8 linear quantizes its f32 input as it stages each tile */
    int rc = plan->limits.precision == CK_DTYPE_BF16 ? schedule_copies(p, c, plan, fuse_gelu, err)
                                                     : CK_OK;
    if (plan->limits.precision == CK_DTYPE_I8) {
        choose_int8_linears(p, c);
    }
    if (rc != CK_OK) {
        ck_program_free(p);
        return rc;
    }
    for (size_t i = 0; i < p->n_steps; i++) {
        ck_step *s = &p->steps[i];
        s->out_dtype = s->out_copy != CK_NO_COPY && !s->def->copy_beside ? plan->limits.precision
                                                                          : CK_DTYPE_F32;
        s->capture_widen = s->checkpoint != NULL && s->out_dtype != CK_DTYPE_F32;
        bind(s);
    }
    assign_linear_slots(p);
    ck_program_row_runs(p, plan);
    return CK_OK;
}

void ck_program_free(ck_program *p)
{
    if (p != NULL) {
        free(p->steps);
        memset(p, 0, sizeof *p);
    }
}
