/* test_ops.c - the op table and the lowered program: every kind has a complete row, names and
 * dtypes come from the table, and lowering turns circuit + plan + weights into steps whose offsets
 * are the plan's, whose tensors are the bound ones, with linear + gelu_new fused only when asked,
 * and row-local runs cut wherever the plan's reused bytes would race. */
#include "ck_test.h"
#include "circuit_default.h"
#include "ops_emit.h"

#define TINY "tests/fixtures/circuits/tiny.json"
#define KOKORO "circuits/kokoro_phoneme_encoder.json"

static void test_every_kind_has_a_complete_row(void)
{
    for (int k = 0; k < CK_OP_KIND_COUNT; k++) {
        const ck_op_def *def = ck_op_def_of((ck_op_kind)k);
        CU_ASSERT_PTR_NOT_NULL_FATAL(def);
        CU_ASSERT_PTR_NOT_NULL_FATAL(def->name);
        CU_ASSERT_PTR_NOT_NULL(def->check);
        CU_ASSERT_PTR_NOT_NULL(def->in[0]);
        CU_ASSERT_PTR_NOT_NULL(ck_op_emit[k]);
        CU_ASSERT_PTR_NOT_NULL(def->run[CK_DTYPE_F32].fn);
        for (int d = 0; d < CK_DTYPE_COUNT; d++) { /* every variant named, rows as the split */
            const ck_op_variant *v = &def->run[d];
            CU_ASSERT_EQUAL(v->fn == NULL, v->fn_name == NULL);
            CU_ASSERT_EQUAL(v->rows == NULL, v->rows_name == NULL);
            CU_ASSERT(v->rows == NULL || (def->split != CK_SPLIT_SEQUENCE_HEADS &&
                                          k != CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM &&
                                          k != CK_OP_CONV1D && k != CK_OP_EMBEDDING));
        }
        /* row-local: all but those reading other rows (attention, conv1d) or running once */
        CU_ASSERT_EQUAL(def->run[CK_DTYPE_F32].rows != NULL,
                        def->split != CK_SPLIT_SEQUENCE_HEADS &&
                            k != CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM && k != CK_OP_CONV1D &&
                            k != CK_OP_EMBEDDING && def->rows == CK_ROWS_SAME);
        CU_ASSERT_STRING_EQUAL(ck_op_kind_name((ck_op_kind)k), def->name);
        for (int j = 0; j < k; j++) {
            CU_ASSERT_STRING_NOT_EQUAL(ck_op_defs[j].name, def->name);
        }
    }
    CU_ASSERT_PTR_NULL(ck_op_def_of(CK_OP_KIND_COUNT));
    CU_ASSERT_STRING_EQUAL(ck_op_kind_name(CK_OP_KIND_COUNT), "unknown");
}

/* The linears and the attention heads have a bf16 run (the heads' dtype is then the plan's,
 * ck_op_variant_of: bf16 only with AMX); everything else computes in f32 under bf16 precision. */
static void test_dtype_comes_from_the_row(void)
{
    CU_ASSERT_EQUAL(ck_op_dtype(CK_OP_LINEAR, CK_DTYPE_BF16), CK_DTYPE_BF16);
    CU_ASSERT_EQUAL(ck_op_dtype(CK_OP_LINEAR, CK_DTYPE_F32), CK_DTYPE_F32);
    CU_ASSERT_EQUAL(ck_op_dtype(CK_OP_ATTENTION, CK_DTYPE_BF16), CK_DTYPE_BF16);
    CU_ASSERT_EQUAL(ck_op_dtype(CK_OP_ATTENTION, CK_DTYPE_F32), CK_DTYPE_F32);
    CU_ASSERT_EQUAL(ck_op_dtype(CK_OP_GELU_NEW, CK_DTYPE_BF16), CK_DTYPE_F32);
    CU_ASSERT_EQUAL(ck_op_dtype(CK_OP_RESIDUAL_LAYER_NORM, CK_DTYPE_BF16), CK_DTYPE_F32);
    CU_ASSERT_EQUAL(ck_op_dtype(CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM, CK_DTYPE_BF16),
                    CK_DTYPE_F32);
    /* per op: the AMX heads need AMX-BF16 and a head dim that is a multiple of 32 */
    ck_op att = {.kind = CK_OP_ATTENTION, .heads = 12, .head_dim = 64};
    CU_ASSERT_PTR_EQUAL(ck_op_variant_of(&att, CK_DTYPE_BF16, 1)->fn, ck_step_attention_bf16);
    CU_ASSERT_PTR_EQUAL(ck_op_variant_of(&att, CK_DTYPE_BF16, 0)->fn, ck_step_attention);
    CU_ASSERT_PTR_EQUAL(ck_op_variant_of(&att, CK_DTYPE_F32, 1)->fn, ck_step_attention);
    att.head_dim = 48;
    CU_ASSERT_EQUAL(ck_op_variant_of(&att, CK_DTYPE_BF16, 1)->computes, CK_DTYPE_F32);
    ck_op ln = {.kind = CK_OP_RESIDUAL_LAYER_NORM};
    CU_ASSERT_PTR_EQUAL(ck_op_variant_of(&ln, CK_DTYPE_BF16, 0)->fn,
                        ck_step_residual_layer_norm_bf16);
    CU_ASSERT_PTR_EQUAL(ck_op_variant_of(&ln, CK_DTYPE_F32, 0)->fn, ck_step_residual_layer_norm);
    ck_op gelu = {.kind = CK_OP_GELU_NEW};
    CU_ASSERT_PTR_EQUAL(ck_op_variant_of(&gelu, CK_DTYPE_BF16, 1), &ck_op_defs[CK_OP_GELU_NEW].run[0]);
    CU_ASSERT_PTR_NULL(ck_op_variant_of(&gelu, CK_DTYPE_COUNT, 0));
}

/* The columns that replaced per-kind cases: classes, dispatch names, the vocabulary and position
 * tables, fusion, weights kept by oneDNN, flops. */
static void test_columns_replace_kind_cases(void)
{
    const ck_op_def *emb = ck_op_def_of(CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM);
    CU_ASSERT_EQUAL(ck_op_weight_slot(emb, emb->vocab_weight), CK_EMB_WORD);
    CU_ASSERT_EQUAL(ck_op_weight_slot(emb, emb->positions_weight), CK_EMB_POSITION);
    CU_ASSERT_EQUAL(ck_op_weight_slot(emb, NULL), -1);
    CU_ASSERT_EQUAL(ck_op_weight_slot(emb, "gammas"), -1);
    CU_ASSERT_STRING_EQUAL(ck_op_defs[CK_OP_LINEAR].fuses_next, "gelu_new");
    char kinds[64];
    ck_op_in_place_kinds(kinds, sizeof kinds);
    CU_ASSERT_EQUAL(strncmp(kinds, "gelu_new", 8), 0);
    for (int k = 0; k < CK_OP_KIND_COUNT; k++) {
        CU_ASSERT_EQUAL(strstr(kinds, ck_op_defs[k].name) != NULL, ck_op_defs[k].in_place);
        CU_ASSERT(ck_op_defs[k].op_class < CK_OP_CLASS_COUNT);
        /* adain_snake reads alpha, conv_transpose1d_col2im its bias, after init */
        int reads_after = k == CK_OP_ADAIN_SNAKE || k == CK_OP_CONV_TRANSPOSE1D_COL2IM;
        int linear = k == CK_OP_LINEAR || k == CK_OP_CONV1D || k == CK_OP_ADA_LAYER_NORM ||
                     k == CK_OP_ADAIN_INSTANCE_NORM || reads_after;
        CU_ASSERT_EQUAL(ck_op_defs[k].weights_copied_at_init, linear && !reads_after);
        CU_ASSERT_EQUAL(ck_op_defs[k].uses_linear, linear);
        CU_ASSERT_EQUAL(ck_op_defs[k].sequence_inputs,
                        k == CK_OP_CONCAT_STYLE || k == CK_OP_ADA_LAYER_NORM ||
                            k == CK_OP_DURATION || k == CK_OP_ADAIN_INSTANCE_NORM ||
                            k == CK_OP_ADAIN_SNAKE);
        CU_ASSERT_EQUAL(ck_op_defs[k].out_dtype, k == CK_OP_DURATION ? CK_DTYPE_I32 : CK_DTYPE_F32);
    }
    /* Kokoro: 12 x (4 C^2 + 2 C F) + E C + C O matmul flops, 12 x 4 C L in attention */
    ck_circuit c = {0};
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, ck_test_path(KOKORO), &err), CK_OK);
    double want = 2.0 * (128.0 * 768 + 12 * (4.0 * 768 * 768 + 2.0 * 768 * 2048) + 768.0 * 512) +
                  12 * 4.0 * 768 * 100;
    CU_ASSERT_EQUAL(ck_circuit_flops_per_token(&c, 100), want);
    ck_circuit_free(&c);
}

typedef struct {
    ck_circuit c;
    ck_plan plan;
    ck_weights *w;
    const ck_tensor **bound;
} lowered;

static int setup(lowered *l, const char *rel)
{
    ck_error err = {0};
    const ck_plan_limits limits = {64, 16, 2, 16, CK_DTYPE_F32, 0};
    memset(l, 0, sizeof *l);
    if (ck_circuit_load(&l->c, ck_test_path(rel), &err) != CK_OK ||
        ck_plan_build(&l->plan, &l->c, &limits, &err) != CK_OK ||
        ck_circuit_synthetic_weights(&l->w, &l->c, 7, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
        return 0;
    }
    l->bound = calloc(l->c.n_weights, sizeof *l->bound);
    for (size_t i = 0; l->bound != NULL && i < l->c.n_weights; i++) {
        l->bound[i] = ck_weights_find(l->w, l->c.weights[i].checkpoint_name);
    }
    return l->bound != NULL;
}

static void teardown(lowered *l)
{
    free(l->bound);
    ck_weights_free(l->w);
    ck_plan_free(&l->plan);
    ck_circuit_free(&l->c);
}

/* Lowers l's circuit for `precision` (the plan's limits say it: offsets and rows do not depend on
 * it). */
static int lower_as(ck_program *p, lowered *l, int fuse_gelu, ck_dtype precision, ck_error *err)
{
    l->plan.limits.precision = precision;
    return ck_program_lower(p, &l->c, &l->plan, l->bound, fuse_gelu, err);
}

/* Every step's offsets, cols and tensors are the plan's and the circuit's for its op. */
static void check_steps(const lowered *l, const ck_program *p)
{
    for (size_t i = 0; i < p->n_steps; i++) {
        const ck_step *s = &p->steps[i];
        const ck_op *op = &l->c.ops[s->op];
        CU_ASSERT_EQUAL(s->kind, op->kind);
        CU_ASSERT_PTR_EQUAL(s->def, &ck_op_defs[op->kind]);
        for (size_t k = 0; k < s->n_in; k++) {
            CU_ASSERT_EQUAL(s->in[k], op->inputs[k]);
            CU_ASSERT_EQUAL(s->in_offset[k], l->plan.offsets[op->inputs[k]]);
            CU_ASSERT_EQUAL(s->in_cols[k], l->c.buffers[op->inputs[k]].cols);
        }
        for (size_t k = 0; k < s->n_weights; k++) {
            CU_ASSERT_PTR_EQUAL(s->w[k], l->bound[op->weights[k]]);
        }
        CU_ASSERT_EQUAL(s->out_offset, l->plan.offsets[s->out]);
        CU_ASSERT_EQUAL(s->out_cols, l->c.buffers[s->out].cols);
        /* the operands bound once: what the step runs with, every batch */
        CU_ASSERT_PTR_EQUAL(s->variant, ck_op_variant_of(op, l->plan.limits.precision,
                                                         l->plan.limits.amx_bf16));
        CU_ASSERT_EQUAL(s->dtype, s->variant->computes);
        for (size_t k = 0; k < CK_MAX_SLOTS; k++) {
            CU_ASSERT_EQUAL(s->args.in[k], k < s->n_in ? s->in_offset[k] : 0);
            CU_ASSERT_EQUAL(s->args.in_copy[k], s->in_copy[k]);
            CU_ASSERT_PTR_EQUAL(s->args.w[k], k < s->n_weights ? s->w[k]->data : NULL);
        }
        CU_ASSERT_EQUAL(s->args.out, s->out_offset);
        CU_ASSERT_EQUAL(s->args.cols, s->out_cols);
        CU_ASSERT_EQUAL(s->args.out_copy, s->out_copy);
        CU_ASSERT_PTR_NULL(s->args.linear);
        /* one linear slot per (weight, fused gelu, bf16 out), numbered in step order */
        for (size_t j = 0; s->kind == CK_OP_LINEAR && j < p->n_steps; j++) {
            const ck_step *o = &p->steps[j];
            int same = o->kind == CK_OP_LINEAR && o->weight[0] == s->weight[0] &&
                       o->fused_gelu == s->fused_gelu &&
                       (o->out_copy == CK_NO_COPY) == (s->out_copy == CK_NO_COPY);
            CU_ASSERT(o->kind != CK_OP_LINEAR || same == (o->linear_slot == s->linear_slot));
        }
        CU_ASSERT(s->kind != CK_OP_LINEAR || s->linear_slot < p->n_linears);
    }
}

static void test_lower_unfused_is_one_step_per_op(void)
{
    lowered l;
    ck_program p = {0};
    ck_error err = {0};
    CU_ASSERT_FATAL(setup(&l, TINY));
    CU_ASSERT_EQUAL_FATAL(lower_as(&p, &l, 0, CK_DTYPE_F32, &err),
                          CK_OK);
    CU_ASSERT_EQUAL(p.n_steps, l.c.n_ops);
    CU_ASSERT_EQUAL(p.vocab, 10);
    check_steps(&l, &p);
    for (size_t i = 0; i < p.n_steps; i++) {
        CU_ASSERT_EQUAL(p.steps[i].fused_gelu, 0);
        if (p.steps[i].kind == CK_OP_ATTENTION) { /* tiny.json gives no scale: 1/sqrt(4) */
            CU_ASSERT_EQUAL(p.steps[i].scale, 0.5f);
            CU_ASSERT_EQUAL(p.steps[i].split, CK_SPLIT_SEQUENCE_HEADS);
        }
    }
    ck_program_free(&p);
    ck_program_free(&p);
    teardown(&l);
}

/* Kokoro: each of the 12 FFN linears absorbs its gelu_new; the step writes the gelu's buffer and
 * carries the gelu's checkpoint; linears compute in bf16 under bf16, the rest in f32. */
static void test_lower_fuses_ffn_gelu(void)
{
    lowered l;
    ck_program p = {0};
    ck_error err = {0};
    CU_ASSERT_FATAL(setup(&l, KOKORO));
    CU_ASSERT_EQUAL_FATAL(lower_as(&p, &l, 1, CK_DTYPE_BF16, &err),
                          CK_OK);
    size_t fused = 0, gelus = 0;
    for (size_t i = 0; i < l.c.n_ops; i++) {
        gelus += l.c.ops[i].kind == CK_OP_GELU_NEW;
    }
    for (size_t i = 0; i < p.n_steps; i++) {
        const ck_step *s = &p.steps[i];
        CU_ASSERT_EQUAL(s->dtype, s->kind == CK_OP_LINEAR ? CK_DTYPE_BF16 : CK_DTYPE_F32);
        if (s->fused_gelu) {
            const ck_op *gelu = &l.c.ops[s->op + 1];
            fused++;
            CU_ASSERT_EQUAL(gelu->kind, CK_OP_GELU_NEW);
            CU_ASSERT_EQUAL(s->out, gelu->output);
            CU_ASSERT(s->checkpoint == NULL ? gelu->checkpoint[0] == '\0'
                                            : strcmp(s->checkpoint, gelu->checkpoint) == 0);
        }
    }
    CU_ASSERT_EQUAL(gelus, 12);
    CU_ASSERT_EQUAL(fused, gelus);
    CU_ASSERT_EQUAL(p.n_steps, l.c.n_ops - fused);
    check_steps(&l, &p);
    ck_program_free(&p);
    teardown(&l);
}

/* Every bf16 copy a step reads is the one its input's last writer writes, inside the copy arena;
 * counts the steps of `kind` reading a copy and the linears writing bf16 only. */
static void check_copies(const ck_program *p, ck_op_kind kind, size_t *readers, size_t *bf16_out)
{
    *readers = *bf16_out = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        const ck_step *s = &p->steps[i];
        *bf16_out += s->kind == CK_OP_LINEAR && s->out_copy != CK_NO_COPY;
        CU_ASSERT(s->out_copy == CK_NO_COPY || s->out_copy < p->copies_bytes);
        for (size_t k = 0; k < s->n_in; k++) {
            if (s->in_copy[k] == CK_NO_COPY) {
                continue;
            }
            size_t w = i;
            while (w > 0 && p->steps[w - 1].out != s->in[k]) {
                w--;
            }
            CU_ASSERT_FATAL(w > 0);
            CU_ASSERT_EQUAL(p->steps[w - 1].out_copy, s->in_copy[k]);
            *readers += s->kind == kind && k == 0;
        }
    }
}

/* Steps of `kind` with a bf16 out copy, and LayerNorm steps with float statistics. */
static void count_flags(const ck_program *p, ck_op_kind kind, size_t *out_copies, size_t *stats_f32)
{
    *out_copies = *stats_f32 = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        int f32acc = p->steps[i].variant->fn == ck_step_residual_layer_norm_bf16;
        *out_copies += p->steps[i].kind == kind && p->steps[i].out_copy != CK_NO_COPY;
        *stats_f32 += f32acc;
        CU_ASSERT(!f32acc || p->steps[i].kind == CK_OP_RESIDUAL_LAYER_NORM);
    }
}

/* Kokoro under bf16: the linears after a LayerNorm (q, k, v of layers 1-11, the FFN in, the
 * 768->512 output) read the LayerNorm's bf16 copy, the FFN out reads the FFN in's bf16-only output;
 * with AMX heads q, k, v of layers 1-11 write bf16 only for the attention; f32 has no copies. */
static void test_lower_schedules_bf16_copies(void)
{
    lowered l;
    ck_program p = {0};
    ck_error err = {0};
    size_t readers = 0, bf16_out = 0;
    CU_ASSERT_FATAL(setup(&l, KOKORO));
    CU_ASSERT_EQUAL_FATAL(lower_as(&p, &l, 1, CK_DTYPE_F32, &err), CK_OK);
    check_copies(&p, CK_OP_LINEAR, &readers, &bf16_out);
    CU_ASSERT_EQUAL(p.copies_bytes, 0);
    CU_ASSERT_EQUAL(readers + bf16_out, 0);
    size_t contexts = 0, stats = 0;
    count_flags(&p, CK_OP_ATTENTION, &contexts, &stats);
    CU_ASSERT_EQUAL(contexts + stats, 0); /* f32: double-statistics LayerNorm everywhere */
    ck_program_free(&p);
    CU_ASSERT_EQUAL_FATAL(lower_as(&p, &l, 1, CK_DTYPE_BF16, &err), CK_OK);
    check_copies(&p, CK_OP_LINEAR, &readers, &bf16_out);
    CU_ASSERT_EQUAL(readers, 11 * 3 + 12 + 12 + 1);
    CU_ASSERT_EQUAL(bf16_out, 12);
    CU_ASSERT(p.copies_bytes > 0);
    ck_program_free(&p);
    l.plan.limits.amx_bf16 = 1; /* the heads on AMX tiles */
    CU_ASSERT_EQUAL_FATAL(lower_as(&p, &l, 1, CK_DTYPE_BF16, &err), CK_OK);
    check_copies(&p, CK_OP_ATTENTION, &readers, &bf16_out);
    CU_ASSERT_EQUAL(readers, 11);
    CU_ASSERT_EQUAL(bf16_out, 12 + 11 * 3);
    /* those 11 heads write their context only in bf16, and the output projection reads it */
    count_flags(&p, CK_OP_ATTENTION, &contexts, &stats);
    CU_ASSERT_EQUAL(contexts, 11);
    CU_ASSERT_EQUAL(stats, 24); /* both LayerNorms of all 12 applications */
    check_copies(&p, CK_OP_LINEAR, &readers, &bf16_out);
    CU_ASSERT_EQUAL(readers, 11 * 3 + 12 + 12 + 1 + 11);
    ck_program_free(&p);
    CU_ASSERT_EQUAL_FATAL(lower_as(&p, &l, 0, CK_DTYPE_BF16, &err), CK_OK);
    check_copies(&p, CK_OP_ATTENTION, &readers, &bf16_out); /* parity: no bf16-only q, k, v */
    CU_ASSERT_EQUAL(readers, 0);
    count_flags(&p, CK_OP_ATTENTION, &contexts, &stats); /* unfused (X-Ray): the f32 context */
    CU_ASSERT_EQUAL(contexts, 0);
    ck_program_free(&p);
    teardown(&l);
}

/* ---- row-local runs ---- */

/* The Kokoro circuit lowered (fp32, fused GELU) on shape-only weights, at 2048 tokens. */
typedef struct {
    ck_circuit c;
    ck_plan plan;
    ck_tensor t[64];
    const ck_tensor *bound[64];
    ck_program p;
} kokoro_program;

static int lower_kokoro(kokoro_program *k)
{
    ck_error err = {0};
    memset(k, 0, sizeof *k);
    const ck_plan_limits limits = {2048, 512, 1, 16, CK_DTYPE_F32, 0};
    if (ck_circuit_load(&k->c, ck_test_path(KOKORO), &err) != CK_OK ||
        k->c.n_weights > 64 || ck_plan_build(&k->plan, &k->c, &limits, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
        return 0;
    }
    for (size_t i = 0; i < k->c.n_weights; i++) {
        k->t[i].rank = k->c.weights[i].rank;
        memcpy(k->t[i].shape, k->c.weights[i].shape, sizeof k->c.weights[i].shape);
        k->t[i].elements = k->c.weights[i].elements;
        k->bound[i] = &k->t[i];
    }
    return ck_program_lower(&k->p, &k->c, &k->plan, k->bound, 1, &err) == CK_OK;
}

static void unlower_kokoro(kokoro_program *k)
{
    ck_program_free(&k->p);
    ck_plan_free(&k->plan);
    ck_circuit_free(&k->c);
}

/* Layer 0 of Kokoro's plan: q, k, v one run; attention alone; output projection + LayerNorm one
 * run; FFN in, FFN out, LayerNorm and layer 1's q and k one run, cut before v (v's bytes are the
 * FFN in's, row for row at another stride). Moving a LayerNorm's output onto bytes its run's
 * linear reads at another offset cuts the run there; onto the same offset and stride it does not. */
static void test_row_runs_follow_the_plan(void)
{
    kokoro_program k;
    CU_ASSERT_FATAL(lower_kokoro(&k));
    size_t first[256];
    CU_ASSERT_FATAL(k.p.n_steps <= 256 && k.p.n_steps > 14);
    ck_program_row_runs(&k.p, &k.plan);
    for (size_t i = 0; i < k.p.n_steps; i++) {
        first[i] = k.p.steps[i].run_first;
    }
    static const size_t want[15] = {0, 1, 2, 2, 2, 5, 6, 6, 8, 8, 8, 8, 8, 13, 14};
    for (size_t i = 0; i < 15; i++) {
        CU_ASSERT_EQUAL(first[i], want[i]);
        if (first[i] != want[i]) {
            fprintf(stderr, "\n    step %zu (%s): run from %zu, expected %zu\n", i,
                    k.p.steps[i].def->name, first[i], want[i]);
        }
    }
    CU_ASSERT_EQUAL(k.p.steps[5].kind, CK_OP_ATTENTION);
    CU_ASSERT_EQUAL(k.p.steps[7].kind, CK_OP_RESIDUAL_LAYER_NORM);
    ck_step *norm = &k.p.steps[7], *proj = &k.p.steps[6];
    size_t kept = norm->out_offset;
    norm->out_offset = proj->in_offset[0] + 64; /* inside the context the projection reads */
    ck_program_row_runs(&k.p, &k.plan);
    CU_ASSERT_EQUAL(k.p.steps[7].run_first, 7);
    norm->out_offset = proj->out_offset; /* its own input's bytes, row for row: in place */
    ck_program_row_runs(&k.p, &k.plan);
    CU_ASSERT_EQUAL(k.p.steps[7].run_first, 6);
    norm->out_offset = kept;
    unlower_kokoro(&k);
}

static void test_lower_rejects_null(void)
{
    ck_program p = {0};
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_program_lower(&p, NULL, NULL, NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "lower"));
}

CK_TEST_MAIN("ops",
             {"every kind has a complete row", test_every_kind_has_a_complete_row},
             {"dtype comes from the row", test_dtype_comes_from_the_row},
             {"columns replace kind cases", test_columns_replace_kind_cases},
             {"lower unfused is one step per op", test_lower_unfused_is_one_step_per_op},
             {"lower fuses ffn gelu", test_lower_fuses_ffn_gelu},
             {"lower schedules bf16 copies", test_lower_schedules_bf16_copies},
             {"lower rejects null", test_lower_rejects_null},
             {"row runs follow the plan", test_row_runs_follow_the_plan})
