/* executor.c - binds circuit + weights + plan + arenas once, then runs packed batches op by op.
 * Allocates only at init; a batch allocates nothing. */
#include "executor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_isa.h"
#include "executor_internal.h"
#include "parallel.h"

/* Binds weight reference i to the tensor of the same checkpoint name with the same shape. */
static int bind_weight(ck_executor *ex, const ck_weights *w, size_t i, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    const ck_weight_ref *ref = &c->weights[i];
    const ck_tensor *t = ck_weights_find(w, ref->checkpoint_name);
    if (t == NULL) {
        return ck_fail(err, CK_E_WEIGHTS, "%s: weight \"%s\": checkpoint tensor \"%s\" missing",
                       c->path, ref->name, ref->checkpoint_name);
    }
    int same = t->rank == ref->rank;
    for (size_t d = 0; same && d < ref->rank; d++) {
        same = t->shape[d] == ref->shape[d];
    }
    if (!same) {
        return ck_fail(err, CK_E_WEIGHTS,
                       "%s: weight \"%s\": checkpoint tensor \"%s\" has %zu elements in rank %zu, "
                       "circuit expects %zu in rank %zu",
                       c->path, ref->name, ref->checkpoint_name, t->elements, t->rank,
                       ref->elements, ref->rank);
    }
    ex->weights[i] = t;
    return CK_OK;
}

/* 1 when op i is a linear whose output only the gelu_new at i + 1 reads: no later op needs that
 * value (plan liveness) and it is not a circuit output. */
static int fusable(const ck_executor *ex, size_t i)
{
    const ck_circuit *c = ex->circuit;
    if (!ex->opt.fuse_gelu || i + 1 >= c->n_ops || c->ops[i].kind != CK_OP_LINEAR ||
        c->ops[i + 1].kind != CK_OP_GELU_NEW || c->ops[i + 1].inputs[0] != c->ops[i].output) {
        return 0;
    }
    int b = c->ops[i].output;
    return c->buffers[b].role == CK_BUFFER_ACTIVATION &&
           (i + 2 >= c->n_ops || !ex->plan.live[(i + 2) * ex->plan.n_buffers + (size_t)b]);
}

/* The linear of op i, made on first use: one per (weight matrix, activation), so the 12
 * applications of the shared layer reuse them. */
static int linear_for(ck_executor *ex, size_t i, ck_linear_activation act, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    const ck_op *op = &c->ops[i];
    ck_linear **slot = act == CK_LINEAR_PLAIN ? &ex->linears[op->weights[0]]
                                              : &ex->gelu_linears[op->weights[0]];
    if (*slot == NULL) {
        const ck_tensor *w = ex->weights[op->weights[0]], *b = ex->weights[op->weights[1]];
        int rc = ck_linear_init_typed(slot, ex->onednn, w->data, w->elements, b->data, b->elements,
                                      w->shape[1], w->shape[0], act, ex->opt.precision);
        if (rc != CK_OK) {
            return ck_fail(err, rc, "%s: op %zu \"linear\": oneDNN matmul for \"%s\" [%zu,%zu]: %s",
                           c->path, op->decl_index, c->weights[op->weights[0]].name, w->shape[0],
                           w->shape[1], ck_status_name(rc));
        }
    }
    ex->op_linear[i] = *slot;
    return CK_OK;
}

/* Decides per op what runs (fusion), builds the linears, and records the vocabulary size (word
 * table rows) that batch ids are checked against. */
static int schedule_ops(ck_executor *ex, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    int rc = CK_OK;
    for (size_t i = 0; rc == CK_OK && i < c->n_ops; i++) {
        const ck_op *op = &c->ops[i];
        ex->op_output[i] = op->output;
        if (op->kind == CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM) {
            ex->vocab = ex->weights[op->weights[0]]->shape[0];
        }
        if (op->kind != CK_OP_LINEAR || ex->op_fused[i] == 2) {
            continue;
        }
        if (fusable(ex, i)) {
            ex->op_fused[i] = 1;
            ex->op_fused[i + 1] = 2;
            ex->op_output[i] = c->ops[i + 1].output;
        }
        rc = linear_for(ex, i, ex->op_fused[i] ? CK_LINEAR_GELU_TANH : CK_LINEAR_PLAIN, err);
    }
    return rc;
}

/* 1 when every op after `writer` that reads buffer b before b is written again is of `kind` and
 * reads it as one of its first `slots` inputs (a linear's x: 1; an attention's q, k, v: 3), and b
 * is an activation (not a circuit output). */
static int only_read_by(const ck_executor *ex, size_t writer, int b, ck_op_kind kind, int slots)
{
    const ck_circuit *c = ex->circuit;
    if (c->buffers[b].role != CK_BUFFER_ACTIVATION) {
        return 0;
    }
    for (size_t k = writer + 1; k < c->n_ops; k++) {
        if (ex->op_fused[k] == 2) {
            continue;
        }
        for (int s = 0; s < CK_MAX_SLOTS; s++) {
            if (c->ops[k].inputs[s] == b && !(c->ops[k].kind == kind && s < slots)) {
                return 0;
            }
        }
        if (ex->op_output[k] == b) {
            return 1;
        }
    }
    return 1;
}

/* Op i's linear (with its GELU when fused) remade to write bf16 (one per weight matrix and
 * activation, as the others). */
static int bf16_out_linear(ck_executor *ex, size_t i, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    const ck_op *op = &c->ops[i];
    ck_linear_activation act = ex->op_fused[i] == 1 ? CK_LINEAR_GELU_TANH : CK_LINEAR_PLAIN;
    ck_linear **slot = act == CK_LINEAR_PLAIN ? &ex->bf16_out_linears[op->weights[0]]
                                              : &ex->gelu_bf16_linears[op->weights[0]];
    if (*slot == NULL) {
        const ck_tensor *w = ex->weights[op->weights[0]], *b = ex->weights[op->weights[1]];
        int rc = ck_linear_init_dst(slot, ex->onednn, w->data, w->elements, b->data, b->elements,
                                    w->shape[1], w->shape[0], act, CK_DTYPE_BF16, CK_DTYPE_BF16);
        if (rc != CK_OK) {
            return ck_fail(err, rc, "%s: op %zu \"linear\": oneDNN bf16 matmul writing bf16 for "
                           "\"%s\": %s", c->path, op->decl_index, c->weights[op->weights[0]].name,
                           ck_status_name(rc));
        }
    }
    ex->op_linear[i] = *slot;
    return CK_OK;
}

/* The shadow of buffer b (shadow_of[b]), made on first use. */
static int shadow_for(ck_executor *ex, int b, int *shadow_of, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    if (shadow_of[b] >= 0) {
        return CK_OK;
    }
    size_t cols = c->buffers[b].cols, bytes = ck_plan_rows(&ex->plan) * cols * sizeof(uint16_t);
    uint16_t *mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (mem == NULL) {
        return ck_fail(err, CK_E_MEMORY, "executor: bf16 copy of \"%s\" (%zu bytes)", c->buffers[b].name,
                       bytes);
    }
    ex->shadows[ex->n_shadows] = mem;
    ex->shadow_cols[ex->n_shadows] = cols;
    shadow_of[b] = (int)ex->n_shadows++;
    return CK_OK;
}

/* The op before `i` that last wrote buffer b (a fused gelu_new's output counts as its linear's),
 * or -1. */
static int last_writer(const ck_executor *ex, size_t i, int b)
{
    while (i > 0 && !(ex->op_output[i - 1] == b && ex->op_fused[i - 1] != 2)) {
        i--;
    }
    return (int)i - 1;
}

/* An attention op a on AMX whose q, k and v each come from an unfused linear that already reads a
 * bf16 copy and whose output only attention ops read: those linears write bf16 only, and a reads
 * the three copies (ck_attention_head_bf16_in; the same bits, since oneDNN rounds q, k, v as the
 * head would). */
static int schedule_attention_shadows(ck_executor *ex, size_t a, int *shadow_of, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    int w[3];
    if (c->ops[a].kind != CK_OP_ATTENTION) {
        return CK_OK;
    }
    for (int s = 0; s < 3; s++) {
        int b = c->ops[a].inputs[s];
        w[s] = last_writer(ex, a, b);
        if (w[s] < 0 || c->ops[w[s]].kind != CK_OP_LINEAR || ex->op_fused[w[s]] != 0 ||
            ex->op_shadow_in[w[s]] < 0 || !only_read_by(ex, (size_t)w[s], b, CK_OP_ATTENTION, 3)) {
            return CK_OK;
        }
    }
    for (int s = 0; s < 3; s++) {
        int b = c->ops[a].inputs[s];
        int rc = shadow_for(ex, b, shadow_of, err);
        if (rc == CK_OK && ex->op_shadow_out[w[s]] < 0) {
            rc = bf16_out_linear(ex, (size_t)w[s], err);
        }
        if (rc != CK_OK) {
            return rc;
        }
        ex->op_shadow_out[w[s]] = shadow_of[b];
        ex->op_attention_in[a][s] = shadow_of[b];
    }
    return CK_OK;
}

/* bf16 only: each linear whose input was last written by a residual_layer_norm reads a bf16 copy of
 * it that the LayerNorm writes in the same pass (ck_residual_layer_norm_f32_bf16), so q, k and v
 * round their shared input once instead of three times and no linear re-reads those f32 rows to
 * round them (the same bits: the copy rounds as the linear's staging would). A linear fused with
 * its GELU whose output only linears read (the FFN in) writes that output in bf16 only, and its
 * reader (the FFN out) reads it in place: no f32 [T, 2048] written and read back. One copy per
 * buffer, sized like the plan's rows (allocated here, at init). */
static int schedule_shadows(ck_executor *ex, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    int *shadow_of = malloc(c->n_buffers * sizeof *shadow_of);
    if (shadow_of == NULL) {
        return ck_fail(err, CK_E_MEMORY, "executor: out of memory");
    }
    for (size_t b = 0; b < c->n_buffers; b++) {
        shadow_of[b] = -1;
    }
    for (size_t i = 0; i < c->n_ops; i++) {
        ex->op_shadow_in[i] = ex->op_shadow_out[i] = -1;
        ex->op_attention_in[i][0] = ex->op_attention_in[i][1] = ex->op_attention_in[i][2] = -1;
    }
    int rc = CK_OK;
    for (size_t i = 0; rc == CK_OK && ex->opt.precision == CK_DTYPE_BF16 && i < c->n_ops; i++) {
        if (c->ops[i].kind != CK_OP_LINEAR || ex->op_fused[i] == 2) {
            continue;
        }
        int b = c->ops[i].inputs[0];
        size_t j = (size_t)(last_writer(ex, i, b) + 1);
        if (j == 0) {
            continue;
        }
        int writer_is_fused_linear = c->ops[j - 1].kind == CK_OP_LINEAR && ex->op_fused[j - 1] == 1;
        if (c->ops[j - 1].kind != CK_OP_RESIDUAL_LAYER_NORM &&
            !(writer_is_fused_linear && only_read_by(ex, j - 1, b, CK_OP_LINEAR, 1) &&
              ex->op_shadow_in[j - 1] >= 0)) {
            continue;
        }
        if (writer_is_fused_linear && ex->op_shadow_out[j - 1] < 0) {
            rc = bf16_out_linear(ex, j - 1, err);
            if (rc != CK_OK) {
                break;
            }
        }
        rc = shadow_for(ex, b, shadow_of, err);
        if (rc != CK_OK) {
            break;
        }
        ex->op_shadow_out[j - 1] = shadow_of[b];
        ex->op_shadow_in[i] = shadow_of[b];
    }
    for (size_t a = 0; rc == CK_OK && ex->attention == CK_DTYPE_BF16 && a < c->n_ops; a++) {
        rc = schedule_attention_shadows(ex, a, shadow_of, err);
    }
    free(shadow_of);
    return rc;
}

/* 1 when oneDNN's implementation string names a native bf16 kernel (AMX or AVX512-BF16): oneDNN
 * 2.6 emulates bf16 on plain AVX-512 ("brg:avx512_core"), slower than f32, and says so only there. */
static int native_bf16(const char *impl)
{
    return strstr(impl, "bf16") != NULL;
}

/* bf16 runs only where it is native and sane: every linear's kernel is a bf16 one, and the fixed
 * self-check is finite with cosine >= 0.9999 against the f32 reference. */
static int check_bf16(ck_executor *ex, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    for (size_t i = 0; i < c->n_ops; i++) {
        const char *impl = ex->op_linear[i] != NULL ? ck_linear_impl(ex->op_linear[i]) : NULL;
        if (impl != NULL && !native_bf16(impl)) {
            return ck_fail(err, CK_E_BACKEND, "precision bf16: oneDNN has no native bf16 matmul here "
                           "(it chose \"%s\", which emulates bf16 and runs slower than fp32): the CPU "
                           "(or ONEDNN_MAX_CPU_ISA) lacks AVX512-BF16 and AMX-BF16; use precision fp32",
                           impl);
        }
    }
    double cosine = 0.0;
    const char *impl = "unknown";
    int rc = ck_executor_bf16_self_check(ex, &cosine, &impl);
    if (rc != CK_OK) {
        return ck_fail(err, rc, "precision bf16: self-check matmul failed: %s", ck_status_name(rc));
    }
    if (!(cosine >= 0.9999)) { /* also NaN */
        return ck_fail(err, CK_E_BACKEND, "precision bf16: self-check 64x768x768 matmul (%s) has "
                       "cosine %.6f against f32, below 0.9999: refusing to run in bf16", impl, cosine);
    }
    return CK_OK;
}

/* BF16 when bf16 precision can run the heads on AMX tiles: the CPU has AMX-BF16 (and
 * CK_MAX_CPU_ISA allows it) and every attention op's head dim is a multiple of 32. */
static ck_dtype attention_dtype(const ck_executor *ex)
{
    const ck_circuit *c = ex->circuit;
    int ok = ex->opt.precision == CK_DTYPE_BF16 && ck_kernels_amx_bf16();
    for (size_t i = 0; ok && i < c->n_ops; i++) {
        ok = c->ops[i].kind != CK_OP_ATTENTION || c->ops[i].head_dim % 32 == 0;
    }
    return ok ? CK_DTYPE_BF16 : CK_DTYPE_F32;
}

static int setup(ck_executor *ex, const ck_weights *w, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    size_t nw = c->n_weights ? c->n_weights : 1, no = c->n_ops ? c->n_ops : 1;
    ex->weights = calloc(nw, sizeof *ex->weights);
    ex->linears = calloc(nw, sizeof *ex->linears);
    ex->gelu_linears = calloc(nw, sizeof *ex->gelu_linears);
    ex->gelu_bf16_linears = calloc(nw, sizeof *ex->gelu_bf16_linears);
    ex->bf16_out_linears = calloc(nw, sizeof *ex->bf16_out_linears);
    ex->op_attention_in = calloc(no, sizeof *ex->op_attention_in);
    ex->op_linear = calloc(no, sizeof *ex->op_linear);
    ex->op_output = calloc(no, sizeof *ex->op_output);
    ex->op_fused = calloc(no, sizeof *ex->op_fused);
    ex->op_shadow_in = calloc(no, sizeof *ex->op_shadow_in);
    ex->op_shadow_out = calloc(no, sizeof *ex->op_shadow_out);
    ex->shadows = calloc(c->n_buffers ? c->n_buffers : 1, sizeof *ex->shadows);
    ex->shadow_cols = calloc(c->n_buffers ? c->n_buffers : 1, sizeof *ex->shadow_cols);
    if (!ex->weights || !ex->linears || !ex->gelu_linears || !ex->gelu_bf16_linears ||
        !ex->bf16_out_linears || !ex->op_attention_in || !ex->op_linear ||
        !ex->op_output ||
        !ex->op_fused || !ex->op_shadow_in || !ex->op_shadow_out || !ex->shadows || !ex->shadow_cols) {
        return ck_fail(err, CK_E_MEMORY, "executor: out of memory");
    }
    for (size_t i = 0; i < c->n_weights; i++) {
        int rc = bind_weight(ex, w, i, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    ex->attention = attention_dtype(ex);
    ck_plan_limits limits = {ex->opt.max_batch_tokens, ex->opt.max_seq_len, ex->opt.threads,
                             CK_LINEAR_ROW_BLOCK, ex->attention};
    int rc = ck_plan_build(&ex->plan, c, &limits, err);
    if (rc != CK_OK) {
        return rc;
    }
    rc = ck_arenas_init(&ex->arenas, ex->plan.arena_bytes, ex->plan.scratch_bytes, ex->opt.threads);
    if (rc != CK_OK) {
        return ck_fail(err, rc, "executor: arenas of %zu + %d x %zu bytes: %s",
                       ex->plan.arena_bytes, ex->opt.threads, ex->plan.scratch_bytes,
                       ck_status_name(rc));
    }
    /* One oneDNN lane per worker: ck_parallel_for numbers at most CK_PARALLEL_MAX_WORKERS. */
    _Static_assert(CK_PARALLEL_MAX_WORKERS <= CK_ONEDNN_MAX_LANES, "a lane for every worker");
    int lanes = ex->opt.threads < CK_PARALLEL_MAX_WORKERS ? ex->opt.threads : CK_PARALLEL_MAX_WORKERS;
    rc = ck_onednn_init(&ex->onednn, lanes);
    if (rc != CK_OK) {
        return ck_fail(err, rc, "executor: oneDNN engine with %d lanes: %s", lanes,
                       ck_status_name(rc));
    }
    /* Every worker runs its own rows' matmuls single-threaded (linear.h): made for one thread. */
    int threads = ck_parallel_set_threads(1);
    rc = schedule_ops(ex, err);
    rc = rc == CK_OK ? schedule_shadows(ex, err) : rc;
    if (rc == CK_OK && ex->opt.precision == CK_DTYPE_BF16) {
        rc = check_bf16(ex, err);
    }
    ck_parallel_set_threads(threads);
    return rc;
}

int ck_executor_init(ck_executor **out, const ck_circuit *c, const ck_weights *w,
                     const ck_executor_options *opt, ck_error *err)
{
    if (out == NULL || c == NULL || w == NULL || opt == NULL) {
        return ck_fail(err, CK_E_ARG, "executor: null argument");
    }
    *out = NULL;
    if (opt->precision != CK_DTYPE_F32 && opt->precision != CK_DTYPE_BF16) {
        return ck_fail(err, CK_E_ARG, "executor: precision %s: expected f32 or bf16",
                       ck_dtype_info(opt->precision)->lower);
    }
    if (opt->threads < 1 || opt->max_batch_tokens == 0 || opt->max_seq_len == 0) {
        return ck_fail(err, CK_E_ARG, "executor: threads %d, max batch tokens %zu, max sequence "
                       "length %zu: each must be at least 1", opt->threads, opt->max_batch_tokens,
                       opt->max_seq_len);
    }
    ck_executor *ex = calloc(1, sizeof *ex);
    if (ex == NULL) {
        return ck_fail(err, CK_E_MEMORY, "executor: out of memory");
    }
    ex->circuit = c;
    ex->opt = *opt;
    ex->output_ready = -1;
    int rc = setup(ex, w, err);
    if (rc != CK_OK) {
        ck_executor_free(ex);
        return rc;
    }
    *out = ex;
    return CK_OK;
}

/* Everything a batch can get wrong, checked before the first op writes anything. */
static int check_batch(const ck_executor *ex, const int32_t *ids, const size_t *offsets,
                       size_t n_seqs, int output_buffer, int has_out, size_t out_count,
                       ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    if (ids == NULL || offsets == NULL || n_seqs == 0 || offsets[0] != 0 || output_buffer < 0 ||
        (size_t)output_buffer >= c->n_buffers) {
        return ck_fail(err, CK_E_ARG, "batch: null ids/offsets, no sequences, offsets[0] != 0 or "
                       "bad output buffer");
    }
    for (size_t s = 0; s < n_seqs; s++) {
        size_t len = offsets[s + 1] - offsets[s];
        if (offsets[s + 1] <= offsets[s] || len > ex->opt.max_seq_len) {
            return ck_fail(err, CK_E_SIZE, "batch: sequence %zu has %zu tokens, limits are 1..%zu",
                           s, offsets[s + 1] > offsets[s] ? len : 0, ex->opt.max_seq_len);
        }
    }
    size_t tokens = offsets[n_seqs], vocab = ex->vocab;
    for (size_t t = 0; t < tokens; t++) {
        if (ids[t] < 0 || (size_t)ids[t] >= vocab) {
            return ck_fail(err, CK_E_RANGE, "batch: token %zu: id %d outside the vocabulary 0..%zu",
                           t, (int)ids[t], vocab - 1);
        }
    }
    if (has_out && out_count / c->buffers[output_buffer].cols < tokens) {
        return ck_fail(err, CK_E_SIZE, "batch: output holds %zu floats, %zu tokens need %zu",
                       out_count, tokens, tokens * c->buffers[output_buffer].cols);
    }
    return ck_plan_check_arena(&ex->plan, ex->arenas.activations.base, ex->arenas.activations.bytes,
                               tokens, err);
}

static void fill_inputs(ck_executor *ex, const int32_t *ids)
{
    const ck_circuit *c = ex->circuit;
    int32_t *dst_ids = ck_exec_buffer(ex, c->ids_buffer);
    int32_t *positions = ck_exec_buffer(ex, c->positions_buffer);
    memcpy(dst_ids, ids, ex->tokens * sizeof *ids);
    for (size_t s = 0; s < ex->n_seqs; s++) {
        for (size_t t = ex->offsets[s]; t < ex->offsets[s + 1]; t++) {
            positions[t] = (int32_t)(t - ex->offsets[s]);
        }
    }
}

/* Monotonic seconds, for the per-op-kind times. */
static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs every op of the circuit on the filled inputs, capture seeing each checkpoint. */
static int run_ops(ck_executor *ex, ck_capture_fn capture, void *capture_ctx, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    for (size_t i = 0; i < c->n_ops; i++) {
        const ck_op *op = &c->ops[i];
        int rc = CK_OK;
        if (ex->op_fused[i] != 2) { /* a fused gelu_new ran inside its linear */
            double t0 = seconds_now();
            rc = ck_exec_op(ex, op);
            ex->op_seconds[op->kind] += seconds_now() - t0;
        }
        if (rc != CK_OK) {
            return ck_fail(err, rc, "%s: op %zu \"%s\" (application %d): %s", c->path,
                           op->decl_index, ck_op_kind_name(op->kind), op->repeat_index,
                           ck_status_name(rc));
        }
        size_t w = ex->op_fused[i] == 2 ? i - 1 : i; /* the op that computed this output */
        if (capture != NULL && op->checkpoint[0] != '\0' && ex->op_fused[i] != 1 &&
            c->ops[w].kind == CK_OP_LINEAR && ex->op_shadow_out[w] >= 0) {
            /* the linear wrote only bf16: show those values */
            const uint16_t *h = ex->shadows[ex->op_shadow_out[w]];
            float *y = ck_exec_buffer(ex, op->output);
            for (size_t e = 0; e < ex->tokens * c->buffers[op->output].cols; e++) {
                y[e] = ck_bf16_to_f32(h[e]);
            }
        }
        if (capture != NULL && op->checkpoint[0] != '\0' && ex->op_fused[i] != 1) {
            capture(capture_ctx, op->checkpoint, ck_exec_buffer(ex, op->output), ex->tokens,
                    c->buffers[op->output].cols);
        }
    }
    return CK_OK;
}

int ck_executor_run(ck_executor *ex, const int32_t *ids, const size_t *offsets, size_t n_seqs,
                    int output_buffer, float *out, size_t out_count, ck_capture_fn capture,
                    void *capture_ctx, ck_error *err)
{
    if (ex == NULL) {
        return ck_fail(err, CK_E_ARG, "batch: null executor");
    }
    ex->output_ready = -1;
    int rc = check_batch(ex, ids, offsets, n_seqs, output_buffer, out != NULL, out_count, err);
    if (rc != CK_OK) {
        return rc;
    }
    const ck_circuit *c = ex->circuit;
    ex->tokens = offsets[n_seqs];
    ex->offsets = offsets;
    ex->n_seqs = n_seqs;
    double t0 = seconds_now();
    fill_inputs(ex, ids);
    ex->op_seconds[CK_OP_KIND_COUNT] += seconds_now() - t0;
    /* oneDNN's OpenMP team follows the thread count: set it for the run, give the caller back its own */
    int caller_threads = ck_parallel_set_threads(ex->opt.threads);
    rc = run_ops(ex, capture, capture_ctx, err);
    t0 = seconds_now();
    if (rc == CK_OK && ck_exec_check_finite(ex, output_buffer) != CK_OK) {
        rc = ck_fail(err, CK_E_NONFINITE, "%s: output \"%s\" holds NaN or Inf (overflow)",
                     c->path, c->buffers[output_buffer].name);
    }
    ck_parallel_set_threads(caller_threads);
    if (rc != CK_OK) {
        return rc;
    }
    ex->output_ready = output_buffer;
    if (out != NULL) {
        memcpy(out, ck_exec_buffer(ex, output_buffer),
               ex->tokens * c->buffers[output_buffer].cols * sizeof(float));
    }
    ex->op_seconds[CK_OP_KIND_COUNT] += seconds_now() - t0;
    return CK_OK;
}

double ck_executor_op_seconds(const ck_executor *ex, ck_op_kind kind)
{
    return ex != NULL && (unsigned)kind <= CK_OP_KIND_COUNT ? ex->op_seconds[kind] : 0.0;
}

void ck_executor_reset_op_seconds(ck_executor *ex)
{
    if (ex != NULL) {
        memset(ex->op_seconds, 0, sizeof ex->op_seconds);
    }
}

const float *ck_executor_rows(const ck_executor *ex, int buffer, size_t *tokens)
{
    if (ex == NULL || buffer < 0 || buffer != ex->output_ready) {
        return NULL;
    }
    if (tokens != NULL) {
        *tokens = ex->tokens;
    }
    return ck_exec_buffer(ex, buffer);
}

/* Linear ops never read their tensors after init: ck_linear_init copies them and keeps no pointer
 * (linear.h). Should a linear ever use the caller's weights in place, it must count here. */
int ck_executor_reads_weight(const ck_executor *ex, const ck_tensor *t)
{
    const ck_circuit *c = ex->circuit;
    for (size_t i = 0; i < c->n_ops; i++) {
        for (size_t s = 0; c->ops[i].kind != CK_OP_LINEAR && s < CK_MAX_SLOTS; s++) {
            int w = c->ops[i].weights[s];
            if (w >= 0 && ex->weights[w] == t) {
                return 1;
            }
        }
    }
    return 0;
}

size_t ck_executor_arena_bytes(const ck_executor *ex, size_t *scratch)
{
    if (scratch != NULL) {
        *scratch = ex->arenas.workers > 0 ? ex->arenas.scratch[0].bytes : 0;
    }
    return ex->arenas.activations.bytes;
}

ck_dtype ck_executor_op_dtype(const ck_executor *ex, ck_op_kind kind)
{
    return kind == CK_OP_LINEAR ? ex->opt.precision : kind == CK_OP_ATTENTION ? ex->attention : CK_DTYPE_F32;
}

void ck_executor_linear_impls(const ck_executor *ex, char *buf, size_t cap)
{
    const char *seen[16];
    size_t n_seen = 0, used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ex->circuit->n_ops && n_seen < 16; i++) {
        const char *impl = ex->op_linear[i] != NULL ? ck_linear_impl(ex->op_linear[i]) : NULL;
        int dup = impl == NULL;
        for (size_t j = 0; !dup && j < n_seen; j++) {
            dup = strcmp(seen[j], impl) == 0;
        }
        if (dup) {
            continue;
        }
        seen[n_seen++] = impl;
        int n = snprintf(buf + used, cap - used, "%s%s", used > 0 ? ", " : "", impl);
        if (n < 0 || (size_t)n >= cap - used) {
            return; /* truncated, still terminated */
        }
        used += (size_t)n;
    }
}

/* splitmix64 (Steele, Lea, Flood 2014) as a uniform in [-1, 1): the self-check's fixed data. */
static float splitmix_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)((double)(z >> 40) / 8388608.0 - 1.0);
}

int ck_executor_bf16_self_check(const ck_executor *ex, double *cosine, const char **impl)
{
    enum { M = 64, K = 768, N = 768 };
    float *x = malloc(sizeof(float) * (M * K + K * N + 2 * M * N));
    ck_linear *lin = NULL;
    if (x == NULL) {
        return CK_E_MEMORY;
    }
    float *w = x + M * K, *y = w + K * N, *ref = y + M * N;
    uint64_t state = 20261201;
    for (size_t i = 0; i < (size_t)M * K + (size_t)K * N; i++) {
        x[i] = splitmix_uniform(&state);
    }
    int rc = ck_linear_init_typed(&lin, ex->onednn, w, (size_t)K * N, NULL, 0, K, N, CK_LINEAR_PLAIN,
                                  CK_DTYPE_BF16);
    rc = rc ? rc : ck_linear_forward_f32(lin, 0, x, (size_t)M * K, K, y, (size_t)M * N, N, M);
    rc = rc ? rc : ck_linear_ref_f32(x, (size_t)M * K, K, w, (size_t)K * N, NULL, 0, ref,
                                     (size_t)M * N, N, M, K, N);
    if (rc == CK_OK) {
        double dot = 0.0, yy = 0.0, rr = 0.0;
        for (size_t i = 0; i < (size_t)M * N; i++) {
            dot += (double)y[i] * ref[i];
            yy += (double)y[i] * y[i];
            rr += (double)ref[i] * ref[i];
        }
        *cosine = dot / sqrt(yy * rr); /* NaN when y is not finite */
        *impl = ck_linear_impl(lin);
    }
    ck_linear_free(lin);
    free(x);
    return rc;
}

size_t ck_executor_cols(const ck_executor *ex, int buffer)
{
    return ex->circuit->buffers[buffer].cols;
}

void ck_executor_free(ck_executor *ex)
{
    if (ex == NULL) {
        return;
    }
    for (size_t i = 0; ex->linears != NULL && i < ex->circuit->n_weights; i++) {
        ck_linear_free(ex->linears[i]);
        ck_linear_free(ex->gelu_linears != NULL ? ex->gelu_linears[i] : NULL);
        ck_linear_free(ex->gelu_bf16_linears != NULL ? ex->gelu_bf16_linears[i] : NULL);
        ck_linear_free(ex->bf16_out_linears != NULL ? ex->bf16_out_linears[i] : NULL);
    }
    free(ex->gelu_linears);
    free(ex->gelu_bf16_linears);
    free(ex->bf16_out_linears);
    free(ex->op_attention_in);
    free(ex->op_linear);
    free(ex->op_output);
    free(ex->op_fused);
    for (size_t k = 0; ex->shadows != NULL && k < ex->n_shadows; k++) {
        free(ex->shadows[k]);
    }
    free(ex->shadows);
    free(ex->shadow_cols);
    free(ex->op_shadow_in);
    free(ex->op_shadow_out);
    ck_onednn_free(ex->onednn);
    ck_arenas_free(&ex->arenas);
    ck_plan_free(&ex->plan);
    free(ex->linears);
    free(ex->weights);
    free(ex);
}
