/* executor.c - binds circuit + weights + plan + arenas once, then runs packed batches op by op.
 * Allocates only at init; a batch allocates nothing. */
#include "executor.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_isa.h"
#include "conv1d.h"
#include "conv_transpose1d_col2im.h"
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

/* The linear of a step's slot (ck_step linear_slot), made on first use: one per (weight matrix,
 * fused gelu, output dtype), so the 12 applications of the shared layer reuse them. A step whose
 * output is a bf16 copy (ck_step out_copy) writes its y in bf16. A conv1d's weight [out,in,K] is
 * packed to [out, K*in] first (ck_conv1d_pack_weight_f32), into memory freed once the linear has
 * copied it. */
static int linear_for(ck_executor *ex, ck_step *s, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    int wi = s->weight[CK_LIN_WEIGHT];
    ck_dtype dst = s->out_dtype;
    ck_linear **slot = &ex->linears[s->linear_slot];
    if (*slot == NULL) {
        const ck_tensor *w = s->w[CK_LIN_WEIGHT], *b = s->w[CK_LIN_BIAS];
        const int transpose = s->kind == CK_OP_CONV_TRANSPOSE1D_COL2IM;
        size_t in = transpose ? w->shape[0] : w->rank == 3 ? w->shape[1] * w->shape[2] : w->shape[1];
        size_t out_features = transpose ? w->shape[1] * w->shape[2] : w->shape[0];
        float *packed = w->rank == 3 ? malloc(w->elements * sizeof *packed) : NULL;
        int rc = w->rank == 3 && packed == NULL ? CK_E_MEMORY : CK_OK;
        if (rc == CK_OK && packed != NULL && transpose) { /* Wt [K C, Cin]; the bias in col2im */
            rc = ck_conv_transpose1d_pack_weight_f32(w->data, w->elements, packed, w->elements,
                                                     w->shape[0], w->shape[1], w->shape[2]);
            b = NULL;
        } else if (rc == CK_OK && packed != NULL) {
            rc = ck_conv1d_pack_weight_f32(w->data, w->elements, packed, w->elements, w->shape[0],
                                           w->shape[1], w->shape[2]);
        }
        const ck_linear_desc d = {
            .weight = packed != NULL ? packed : w->data, .weight_count = w->elements,
            .bias = b != NULL ? b->data : NULL, .bias_count = b != NULL ? b->elements : 0,
            .in_features = in,
            .out_features = out_features,
            .activation = s->fused_gelu ? CK_LINEAR_GELU_TANH : CK_LINEAR_PLAIN,
            .compute = s->dtype, .dst = dst,
        };
        rc = rc ? rc : ck_linear_init(slot, ex->onednn, &d);
        if (rc == CK_OK && ex->opt.precision == CK_DTYPE_I8 && s->dtype == CK_DTYPE_BF16 &&
            strstr(ck_linear_impl(*slot), "bf16") == NULL) {
            /* an int8 program's bf16 linear on a CPU without native bf16: f32 instead */
            ck_linear_free(*slot);
            *slot = NULL;
            ck_linear_desc f = d;
            f.compute = CK_DTYPE_F32;
            rc = ck_linear_init(slot, ex->onednn, &f);
        }
        free(packed);
        if (rc != CK_OK) {
            return ck_fail(err, rc, "%s: op %zu \"%s\": oneDNN %s matmul writing %s for \"%s\" "
                           "[%zu,%zu]: %s", c->path, c->ops[s->op].decl_index, s->def->name,
                           ck_dtype_info(s->dtype)->lower, ck_dtype_info(dst)->lower,
                           c->weights[wi].name, out_features, in, ck_status_name(rc));
        }
    }
    s->args.linear = *slot;
    s->dtype = ck_linear_compute_dtype(*slot); /* what it computes in (int8 programs: above) */
    return CK_OK;
}

/* Lowers the circuit once (fusion, offsets, bound tensors, bf16 copies, each step's operands) and,
 * to interpret it, builds the steps' linears and the copy arena. */
static int lower(ck_executor *ex, ck_error *err)
{
    int rc = ck_program_lower(&ex->program, ex->circuit, &ex->plan, ex->weights, ex->opt.fuse_gelu,
                              err);
    if (rc != CK_OK || ex->opt.compiled != NULL) {
        return rc;
    }
    ex->linears = calloc(ex->program.n_linears ? ex->program.n_linears : 1, sizeof *ex->linears);
    if (ex->linears == NULL) {
        return ck_fail(err, CK_E_MEMORY, "executor: out of memory");
    }
    ex->n_linears = ex->program.n_linears;
    for (size_t i = 0; rc == CK_OK && i < ex->program.n_steps; i++) {
        ck_step *s = &ex->program.steps[i];
        if (s->def->uses_linear) {
            rc = linear_for(ex, s, err);
        }
        int slot = ck_circuit_frame_slot(ex->circuit, s->out_frames);
        if (s->out_frames != s->rows_frames && s->out_frames != 0 && slot >= 0) {
            s->args.out_offsets = ex->row_offsets[slot]; /* filled by each run's set_frames */
        }
    }
    if (rc == CK_OK && (rc = ck_arena_init(&ex->copies, ex->program.copies_bytes)) != CK_OK) {
        return ck_fail(err, rc, "executor: bf16 copies of %zu bytes: %s", ex->program.copies_bytes,
                       ck_status_name(rc));
    }
    return rc;
}

/* oneDNN's implementation string of the i-th linear (ck_step linear_slot; the generated
 * library's i-th linear), NULL when i is past the last. */
static const char *linear_impl_at(const ck_executor *ex, size_t i)
{
    if (ex->opt.compiled != NULL) {
        return ex->compiled != NULL ? ex->opt.compiled->linear_impl(ex->compiled, i) : NULL;
    }
    return i < ex->n_linears && ex->linears[i] != NULL ? ck_linear_impl(ex->linears[i]) : NULL;
}

/* The generated library must be made for this circuit's plan: same arena, weights, outputs. */
static int check_compiled(const ck_executor *ex, ck_error *err)
{
    const ck_compiled_circuit *t = ex->opt.compiled;
    const ck_circuit *c = ex->circuit;
    int same = t->arena_bytes == ex->plan.arena_bytes && t->n_weights == c->n_weights &&
               t->features_buffer == c->features_buffer && t->hidden_buffer == c->hidden_buffer &&
               t->vocab == ex->program.vocab;
    for (size_t i = 0; same && i < c->n_weights; i++) {
        same = strcmp(t->weights[i].name, c->weights[i].checkpoint_name) == 0 &&
               t->weights[i].elements == c->weights[i].elements;
    }
    if (!same) {
        return ck_fail(err, CK_E_CIRCUIT, "%s: the compiled library was made for another circuit "
                       "or plan (arena %zu bytes, %zu weights; this one: %zu, %zu)", c->path,
                       t->arena_bytes, t->n_weights, ex->plan.arena_bytes, c->n_weights);
    }
    return CK_OK;
}

/* Binds the generated library to our arena and the bound weights. */
static int init_compiled(ck_executor *ex, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    const float **data = calloc(c->n_weights ? c->n_weights : 1, sizeof *data);
    int rc = check_compiled(ex, err);
    if (data == NULL) {
        return ck_fail(err, CK_E_MEMORY, "executor: out of memory");
    }
    for (size_t i = 0; i < c->n_weights; i++) {
        data[i] = ex->weights[i]->data;
    }
    if (rc == CK_OK) {
        rc = ex->opt.compiled->init(&ex->compiled, ex->arenas.activations.base,
                                    ex->arenas.activations.bytes, data, c->n_weights,
                                    ex->opt.threads);
        rc = rc == CK_OK ? CK_OK : ck_fail(err, rc, "%s: compiled library: init: %s", c->path,
                                           ck_status_name(rc));
    }
    free(data);
    return rc;
}

/* 1 when oneDNN's implementation string names a native bf16 kernel (AMX or AVX512-BF16): oneDNN
 * 2.6 emulates bf16 on plain AVX-512 ("brg:avx512_core"), slower than f32, and says so only there. */
static int native_bf16(const char *impl)
{
    return strstr(impl, "bf16") != NULL;
}

/* What the lowering says linear slot i computes in (a generated library makes its linears so). */
static ck_dtype slot_dtype(const ck_program *p, size_t i)
{
    for (size_t k = 0; k < p->n_steps; k++) {
        if (p->steps[k].def->uses_linear && p->steps[k].linear_slot == i) {
            return p->steps[k].dtype;
        }
    }
    return CK_DTYPE_F32;
}

/* bf16 runs only where it is native and sane: every bf16 linear's kernel is a bf16 one (a speech
 * circuit's token side and its fc layers stay f32: ck_op_precision_at), and the fixed self-check
 * is finite with cosine >= 0.9999 against the f32 reference. */
static int check_bf16(ck_executor *ex, ck_error *err)
{
    for (size_t i = 0; i < ex->program.n_steps; i++) {
        const char *impl = linear_impl_at(ex, i);
        int bf16 = ex->opt.compiled != NULL /* generated: its linear i is slot i's, as lowered */
                       ? slot_dtype(&ex->program, i) == CK_DTYPE_BF16
                       : i < ex->n_linears &&
                             ck_linear_compute_dtype(ex->linears[i]) == CK_DTYPE_BF16;
        if (impl != NULL && bf16 && !native_bf16(impl)) {
            return ck_fail(err, CK_E_BACKEND, "precision bf16: oneDNN has no native bf16 matmul here "
                           "(it chose \"%s\", which emulates bf16 and runs slower than fp32): the CPU "
                           "(or ONEDNN_MAX_CPU_ISA) lacks AVX512-BF16 and AMX-BF16; use precision fp32",
                           impl);
        }
    }
    double cosine = 0.0;
    const char *impl = "unknown";
    int rc = ck_linear_bf16_self_check(ex->onednn, &cosine, &impl);
    if (rc != CK_OK) {
        return ck_fail(err, rc, "precision bf16: self-check matmul failed: %s", ck_status_name(rc));
    }
    if (!(cosine >= 0.9999)) { /* also NaN */
        return ck_fail(err, CK_E_BACKEND, "precision bf16: self-check 64x768x768 matmul (%s) has "
                       "cosine %.6f against f32, below 0.9999: refusing to run in bf16", impl, cosine);
    }
    return CK_OK;
}

/* A circuit with frames dims: the plan's max_frames (the option, or its default from the tokens)
 * and the per-sequence offsets of each frames*K row dim, [max_batch_tokens + 1] each (a sequence
 * has at least one token). */
static int frame_limits(ck_executor *ex, ck_error *err)
{
    const size_t scale = ex->circuit->max_frames_scale, tokens = ex->opt.max_batch_tokens;
    if (scale == 0) {
        ex->max_frames = 0;
        return CK_OK;
    }
    if (ex->max_frames == 0) {
        if (tokens > SIZE_MAX / CK_EXECUTOR_FRAMES_PER_TOKEN) {
            return ck_fail(err, CK_E_SIZE, "executor: %zu max batch tokens x %d frames overflows",
                           tokens, CK_EXECUTOR_FRAMES_PER_TOKEN);
        }
        ex->max_frames = tokens * CK_EXECUTOR_FRAMES_PER_TOKEN;
    }
    for (size_t k = 0; k <= ex->circuit->n_frame_dims; k++) {
        ex->row_offsets[k] = tokens < SIZE_MAX / sizeof(size_t) - 1
                                 ? calloc(tokens + 1, sizeof(size_t)) : NULL;
        if (ex->row_offsets[k] == NULL) {
            return ck_fail(err, CK_E_MEMORY, "executor: out of memory for frame offsets");
        }
    }
    ex->predicted = calloc(tokens ? tokens : 1, sizeof *ex->predicted);
    return ex->predicted != NULL ? CK_OK
                                 : ck_fail(err, CK_E_MEMORY, "executor: out of memory for durations");
}

/* int8 runs only on an int8 dot-product instruction (without one oneDNN 2.6 uses VPMADDUBSW, whose
 * 16-bit pair sums saturate on u8 x s8 products): the CPU has AVX512-VNNI, AVX-VNNI or AMX-INT8,
 * every linear's kernel is oneDNN's VNNI or AMX one, and the fixed self-check is finite with cosine
 * >= 0.999 against the f32 reference. */
static int check_int8(ck_executor *ex, ck_error *err)
{
    const char *dot = ck_cpu_int8_dot();
    if (dot[0] == '\0') {
        return ck_fail(err, CK_E_BACKEND, "precision int8: this CPU has no int8 dot product "
                       "instruction (AVX512-VNNI, AVX-VNNI or AMX-INT8; cpu %s): use precision "
                       "bf16 or fp32", ck_cpu_features());
    }
    for (size_t i = 0; i < ex->n_linears; i++) {
        const char *impl = ck_linear_compute_dtype(ex->linears[i]) == CK_DTYPE_I8
                               ? ck_linear_impl(ex->linears[i]) : NULL;
        if (impl != NULL && strstr(impl, "vnni") == NULL && strstr(impl, "amx") == NULL) {
            return ck_fail(err, CK_E_BACKEND, "precision int8: oneDNN has no VNNI or AMX int8 "
                           "matmul here (it chose \"%s\"; the CPU has %s): ONEDNN_MAX_CPU_ISA "
                           "may cap it; use precision bf16 or fp32", impl, dot);
        }
    }
    double cosine = 0.0;
    const char *impl = "unknown";
    int rc = ck_linear_int8_self_check(ex->onednn, &cosine, &impl);
    if (rc != CK_OK) {
        return ck_fail(err, rc, "precision int8: self-check matmul failed: %s", ck_status_name(rc));
    }
    if (!(cosine >= 0.999)) { /* also NaN */
        return ck_fail(err, CK_E_BACKEND, "precision int8: self-check 64x768x768 matmul (%s) has "
                       "cosine %.6f against f32, below 0.999: refusing to run in int8", impl, cosine);
    }
    return CK_OK;
}

static int setup(ck_executor *ex, const ck_weights *w, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    size_t nw = c->n_weights ? c->n_weights : 1;
    ex->weights = calloc(nw, sizeof *ex->weights);
    if (!ex->weights) {
        return ck_fail(err, CK_E_MEMORY, "executor: out of memory");
    }
    for (size_t i = 0; i < c->n_weights; i++) {
        int rc = bind_weight(ex, w, i, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    ck_plan_limits limits = ck_plan_limits_for(ex->opt.precision, ex->opt.max_batch_tokens,
                                               ex->opt.max_seq_len, ex->opt.threads);
    int rc = frame_limits(ex, err);
    rc = rc ? rc : ck_plan_build_frames(&ex->plan, c, &limits, ex->max_frames, err);
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
    rc = lower(ex, err);
    if (rc == CK_OK && ex->opt.compiled != NULL) {
        rc = init_compiled(ex, err);
    }
    if (rc == CK_OK && ex->opt.precision == CK_DTYPE_BF16) {
        rc = check_bf16(ex, err);
    }
    if (rc == CK_OK && ex->opt.precision == CK_DTYPE_I8) {
        rc = check_int8(ex, err);
    }
    ck_parallel_set_threads(threads);
    return rc;
}

int ck_executor_init(ck_executor **out, const ck_circuit *c, const ck_weights *w,
                     const ck_executor_options *opt, ck_error *err)
{
    return ck_executor_init_frames(out, c, w, opt, 0, err);
}

int ck_executor_init_frames(ck_executor **out, const ck_circuit *c, const ck_weights *w,
                            const ck_executor_options *opt, size_t max_batch_frames,
                            ck_error *err)
{
    if (out == NULL || c == NULL || w == NULL || opt == NULL) {
        return ck_fail(err, CK_E_ARG, "executor: null argument");
    }
    *out = NULL;
    if (!ck_op_precision_supported(opt->precision)) {
        return ck_fail(err, CK_E_ARG, "executor: precision %s: expected f32, bf16 or i8",
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
    ex->max_frames = max_batch_frames;
    ex->noise_scale = 1.0f;
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
    size_t tokens = offsets[n_seqs], vocab = ex->program.vocab;
    for (size_t t = 0; t < tokens; t++) {
        if (ids[t] < 0 || (size_t)ids[t] >= vocab) {
            return ck_fail(err, CK_E_RANGE, "batch: token %zu: id %d outside the vocabulary 0..%zu",
                           t, (int)ids[t], vocab - 1);
        }
    }
    if (has_out && c->buffers[output_buffer].frames == 0 && /* frame rows: checked after the run */
        out_count / c->buffers[output_buffer].cols < tokens) {
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

/* The batch over rows of `frames` (ck_buffer frames): the tokens', or frames times K. */
static const ck_step_batch *batch_of(const ck_executor *ex, size_t frames)
{
    int slot = ck_circuit_frame_slot(ex->circuit, frames);
    return frames == 0 || slot < 0 ? &ex->batch : &ex->frame_batch[slot];
}

/* Rows of `frames` in the batch being run (frames: only once frames_ready). */
static size_t rows_of(const ck_executor *ex, size_t frames)
{
    return frames == 0 ? ex->tokens
                       : ck_frames_k(frames) * ex->frames + ck_frames_b(frames) * ex->n_seqs;
}

/* After the op writing the circuit's durations: the forced durations over them where set, then
 * each sequence's frames (the sum of its durations) and the offsets and batch of every frames*K
 * row dim. Refuses a batch whose frames exceed the plan's max_frames, before any frame op runs. */
static int set_frames(ck_executor *ex, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    int32_t *dur = ck_exec_buffer(ex, c->durations_buffer);
    const size_t max = ex->limit_frames != 0 ? ex->limit_frames : ex->plan.max_frames;
    if (ex->forced != NULL && ex->forced_count != ex->tokens) {
        return ck_fail(err, CK_E_ARG, "batch: %zu tokens, but the forced durations hold %zu",
                       ex->tokens, ex->forced_count);
    }
    for (size_t t = 0; ex->forced != NULL && t < ex->tokens; t++) {
        if (ex->forced[t] < 1) {
            return ck_fail(err, CK_E_RANGE, "batch: forced duration of token %zu is %d, expected "
                           ">= 1 frame", t, (int)ex->forced[t]);
        }
    }
    memcpy(ex->predicted, dur, ex->tokens * sizeof *dur); /* the op's own, for X-Ray */
    ex->predicted_ready = 1;
    if (ex->forced != NULL) {
        memcpy(dur, ex->forced, ex->tokens * sizeof *dur);
    }
    size_t *o = ex->row_offsets[c->n_frame_dims]; /* frames (f per sequence), then each dim's */
    o[0] = 0;
    for (size_t q = 0; q < ex->n_seqs; q++) {
        size_t f = 0;
        for (size_t t = ex->offsets[q]; t < ex->offsets[q + 1]; t++) {
            f += dur[t] > 0 ? (size_t)dur[t] : 0; /* the duration op writes >= 1 */
            if (f > max - o[q]) {
                return ck_fail(err, CK_E_SIZE, "batch: sequence %zu needs more than %zu frames "
                               "(%zu before it in the batch), above max_batch_frames %zu: raise "
                               "it or split the batch", q, f, o[q], max);
            }
        }
        o[q + 1] = o[q] + f;
    }
    ex->frames = o[ex->n_seqs];
    for (size_t k = 0; k < c->n_frame_dims; k++) {
        const size_t code = c->frame_dims[k], ks = ck_frames_k(code), bs = ck_frames_b(code);
        for (size_t q = 0; q <= ex->n_seqs; q++) {
            ex->row_offsets[k][q] = ks * o[q] + bs * q;
        }
        ex->frame_batch[k] = ex->batch;
        ex->frame_batch[k].tokens = rows_of(ex, code);
        ex->frame_batch[k].offsets = ex->row_offsets[k];
    }
    ex->frames_ready = 1;
    return CK_OK;
}

/* Floating-point operations of step s over the batch being run: the table's flops column (per row
 * of its output) times the output's rows; on token rows per sequence, since attention's depend on
 * the sequence's length. 0 for an op without a flops column. */
static double step_flops(const ck_executor *ex, const ck_step *s)
{
    const ck_op *op = &ex->circuit->ops[s->op];
    if (s->def->flops == NULL) {
        return 0.0;
    }
    if (s->out_frames != 0) {
        return (double)rows_of(ex, s->out_frames) * s->def->flops(ex->circuit, op, 0);
    }
    double flops = 0.0;
    for (size_t q = 0; q < ex->batch.n_seqs; q++) {
        size_t len = ex->batch.offsets[q + 1] - ex->batch.offsets[q];
        flops += (double)len * s->def->flops(ex->circuit, op, len);
    }
    return flops;
}

/* Steps [first, end) as one row-local run (steps.h, ck_step_rows). */
static int run_rows(ck_executor *ex, size_t first, size_t end, ck_error *err)
{
    ck_step_row_item items[CK_ROW_RUN_MAX_STEPS];
    size_t n = end - first; /* at most CK_ROW_RUN_MAX_STEPS (ck_program_row_runs) */
    for (size_t j = 0; j < n; j++) {
        const ck_step *s = &ex->program.steps[first + j];
        items[j] = (ck_step_row_item){s->variant->rows, &s->args, (int)s->kind};
        ex->op_flops[s->kind] += step_flops(ex, s);
    }
    int rc = ck_step_rows(batch_of(ex, ex->program.steps[first].rows_frames), items, n,
                          ex->op_seconds);
    if (rc != CK_OK) {
        const ck_op *a = &ex->circuit->ops[ex->program.steps[first].op];
        const ck_op *b = &ex->circuit->ops[ex->program.steps[end - 1].op];
        return ck_fail(err, rc, "%s: ops %zu-%zu (a row-local run, applications %d-%d): %s",
                       ex->circuit->path, a->decl_index, b->decl_index, a->repeat_index,
                       b->repeat_index, ck_status_name(rc));
    }
    return CK_OK;
}

/* Runs every step of the lowered program on the filled inputs, capture seeing each checkpoint. */
static int run_steps(ck_executor *ex, ck_capture_fn capture, void *capture_ctx, ck_error *err)
{
    const ck_circuit *c = ex->circuit;
    for (size_t i = 0; i < ex->program.n_steps; i++) {
        const ck_step *s = &ex->program.steps[i];
        size_t end = i + 1;
        while (capture == NULL && end < ex->program.n_steps &&
               ex->program.steps[end].run_first == i) {
            end++;
        }
        if (end - i > 1) { /* no capture: the row-local run in one pass (ck_program_row_runs) */
            int rc = run_rows(ex, i, end, err);
            if (rc != CK_OK) {
                return rc;
            }
            i = end - 1;
            continue;
        }
        if ((s->rows_frames != 0 || s->out_frames != 0) && !ex->frames_ready) {
            return ck_fail(err, CK_E_ARG, "%s: op %zu \"%s\" runs on frames before the durations "
                           "are known", c->path, c->ops[s->op].decl_index, s->def->name);
        }
        double t0 = seconds_now();
        int rc = s->variant->fn(batch_of(ex, s->rows_frames), &s->args);
        ex->op_seconds[s->kind] += seconds_now() - t0;
        ex->op_flops[s->kind] += step_flops(ex, s);
        if (rc != CK_OK) {
            const ck_op *op = &c->ops[s->op];
            return ck_fail(err, rc, "%s: op %zu \"%s\" (application %d): %s", c->path,
                           op->decl_index, s->def->name, op->repeat_index, ck_status_name(rc));
        }
        if (s->out == c->durations_buffer && c->max_frames_scale > 0 &&
            (rc = set_frames(ex, err)) != CK_OK) {
            return rc;
        }
        if (capture != NULL && s->capture_widen) { /* the step wrote only bf16: show those values */
            ck_step_widen_copy(&ex->batch, s->out_copy, s->out_offset, s->out_cols);
        }
        if (capture != NULL && s->checkpoint != NULL) {
            capture(capture_ctx, s->checkpoint, ck_exec_at(ex, s->out_offset),
                    rows_of(ex, s->out_frames), s->out_cols);
        }
    }
    return CK_OK;
}

/* The generated library's frames callback (ck_compiled_run_inputs frames): set_frames over the
 * durations the library wrote into our arena, then each frame dim's rows and offsets. */
static int compiled_frames(void *ctx, size_t *rows, const size_t **offsets)
{
    ck_executor *ex = ctx;
    int rc = set_frames(ex, ex->compiled_err);
    ex->compiled_frames_failed = rc != CK_OK;
    for (size_t k = 0; rc == CK_OK && k < ex->circuit->n_frame_dims; k++) {
        rows[k] = ex->frame_batch[k].tokens;
        offsets[k] = ex->row_offsets[k];
    }
    return rc;
}

/* The generated library runs the batch (it fills the inputs, runs its steps, checks and copies the
 * output itself), with this run's style, speed and noise and our frames machinery (set_frames:
 * forced durations, the frame limit); the whole call counts into the last slot, from which
 * ck_executor_op_seconds takes what the library timed per op kind. */
static int run_compiled(ck_executor *ex, const int32_t *ids, const size_t *offsets, size_t n_seqs,
                        int output_buffer, float *out, size_t out_count, ck_capture_fn capture,
                        void *capture_ctx, ck_error *err)
{
    const ck_step_batch *b = &ex->batch;
    const ck_compiled_run_inputs in = {
        b->style, b->style_cols, b->speed, b->noise, b->noise_rows, b->noise_seed, b->noise_line,
        b->noise_chunk, b->noise_scale,
        ex->circuit->n_frame_dims > 0 ? compiled_frames : NULL, ex};
    ex->opt.compiled->set_inputs(ex->compiled, &in);
    ex->compiled_err = err;
    ex->compiled_frames_failed = 0;
    double t0 = seconds_now(); /* the library sets the thread count for the run and restores it */
    int rc = ex->opt.compiled->run(ex->compiled, ids, offsets, n_seqs, output_buffer, out,
                                   out_count, capture, capture_ctx);
    ex->op_seconds[CK_OP_KIND_COUNT] += seconds_now() - t0;
    ex->compiled_err = NULL;
    if (rc != CK_OK && ex->compiled_frames_failed) {
        return rc; /* set_frames said why */
    }
    if (rc != CK_OK) {
        return ck_fail(err, rc, "%s: compiled library: batch of %zu sequences: %s",
                       ex->circuit->path, n_seqs, ck_status_name(rc));
    }
    ex->output_ready = output_buffer;
    return CK_OK;
}

int ck_executor_set_sequence_inputs(ck_executor *ex, const float *style, size_t rows, size_t cols,
                                    const float *speed, ck_error *err)
{
    if (ex == NULL || (style == NULL && (rows != 0 || speed != NULL)) ||
        (style != NULL && (rows == 0 || cols == 0))) {
        return ck_fail(err, CK_E_ARG, "sequence inputs: null executor, or style [%zu, %zu] "
                       "without rows or data", rows, cols);
    }
    ex->style = style;
    ex->style_rows = rows;
    ex->style_cols = cols;
    ex->speed = speed;
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
    ex->frames_ready = 0;
    ex->predicted_ready = 0;
    int rc = check_batch(ex, ids, offsets, n_seqs, output_buffer, out != NULL, out_count, err);
    if (rc != CK_OK) {
        return rc;
    }
    const ck_circuit *c = ex->circuit;
    ex->tokens = offsets[n_seqs];
    ex->offsets = offsets;
    ex->n_seqs = n_seqs;
    ex->batch = (ck_step_batch){ex->arenas.activations.base, ex->copies.base, ex->arenas.scratch,
                                ex->opt.threads, ex->tokens, offsets, n_seqs, NULL, 0, NULL,
                                NULL, 0, 0, NULL, NULL, 1.0f};
    if (ex->style != NULL) {
        if (n_seqs > ex->style_rows) {
            return ck_fail(err, CK_E_ARG, "batch: %zu sequences, but the sequence inputs hold %zu",
                           n_seqs, ex->style_rows);
        }
        ex->batch.style = ex->style;
        ex->batch.style_cols = ex->style_cols;
        ex->batch.speed = ex->speed;
    }
    if (ex->noise_keys != 0 && n_seqs > ex->noise_keys) {
        return ck_fail(err, CK_E_ARG, "batch: %zu sequences, but the noise keys hold %zu", n_seqs,
                       ex->noise_keys);
    }
    ex->batch.noise = ex->noise;
    ex->batch.noise_rows = ex->noise_rows;
    ex->batch.noise_seed = ex->noise_seed;
    ex->batch.noise_line = ex->noise_line;
    ex->batch.noise_chunk = ex->noise_chunk;
    ex->batch.noise_scale = ex->noise_scale;
    if (ex->compiled != NULL) {
        return run_compiled(ex, ids, offsets, n_seqs, output_buffer, out, out_count, capture,
                            capture_ctx, err);
    }
    double t0 = seconds_now();
    fill_inputs(ex, ids);
    ex->op_seconds[CK_OP_KIND_COUNT] += seconds_now() - t0;
    /* oneDNN's OpenMP team follows the thread count: set it for the run, give the caller back its own */
    int caller_threads = ck_parallel_set_threads(ex->opt.threads);
    rc = run_steps(ex, capture, capture_ctx, err);
    t0 = seconds_now();
    const ck_buffer *ob = &c->buffers[output_buffer];
    if (rc == CK_OK && ob->frames != 0 && !ex->frames_ready) {
        rc = ck_fail(err, CK_E_ARG, "%s: output \"%s\" has frame rows, but no op wrote the "
                     "durations", c->path, ob->name);
    }
    const size_t rows = rc == CK_OK ? rows_of(ex, ob->frames) : 0;
    if (rc == CK_OK && out != NULL && out_count / ob->cols < rows) {
        rc = ck_fail(err, CK_E_SIZE, "batch: output holds %zu floats, %zu rows of \"%s\" need "
                     "%zu", out_count, rows, ob->name, rows * ob->cols);
    }
    if (rc == CK_OK && ob->dtype == CK_DTYPE_F32 && /* not the frames */
        ck_step_check_finite(batch_of(ex, ob->frames), ex->plan.offsets[output_buffer],
                             ob->cols) != CK_OK) {
        rc = ck_fail(err, CK_E_NONFINITE, "%s: output \"%s\" holds NaN or Inf (overflow)",
                     c->path, ob->name);
    }
    ck_parallel_set_threads(caller_threads);
    if (rc != CK_OK) {
        return rc;
    }
    ex->output_ready = output_buffer;
    if (out != NULL) {
        memcpy(out, ck_exec_buffer(ex, output_buffer), rows * ob->cols * sizeof(float));
    }
    ex->op_seconds[CK_OP_KIND_COUNT] += seconds_now() - t0;
    return CK_OK;
}

/* What the generated library timed for op kind k (0 for a kind it does not know). */
static double compiled_op_seconds(const ck_executor *ex, int k)
{
    return k < ex->opt.compiled->n_op_kinds ? ex->opt.compiled->op_seconds(ex->compiled, k) : 0.0;
}

double ck_executor_op_seconds(const ck_executor *ex, ck_op_kind kind)
{
    if (ex == NULL || (unsigned)kind > CK_OP_KIND_COUNT) {
        return 0.0;
    }
    if (ex->compiled == NULL) {
        return ex->op_seconds[kind];
    }
    if (kind < CK_OP_KIND_COUNT) {
        return compiled_op_seconds(ex, (int)kind);
    }
    double rest = ex->op_seconds[CK_OP_KIND_COUNT]; /* the library's calls, less its steps */
    for (int k = 0; k < CK_OP_KIND_COUNT; k++) {
        rest -= compiled_op_seconds(ex, k);
    }
    return rest > 0.0 ? rest : 0.0;
}

void ck_executor_reset_op_seconds(ck_executor *ex)
{
    if (ex != NULL) {
        memset(ex->op_seconds, 0, sizeof ex->op_seconds);
        memset(ex->op_flops, 0, sizeof ex->op_flops);
    }
    if (ex != NULL && ex->compiled != NULL) {
        ex->opt.compiled->reset_op_seconds(ex->compiled);
    }
}

const float *ck_executor_rows(const ck_executor *ex, int buffer, size_t *tokens)
{
    if (ex == NULL || buffer < 0 || buffer != ex->output_ready) {
        return NULL;
    }
    if (ex->compiled != NULL) {
        return ex->opt.compiled->rows(ex->compiled, buffer, tokens);
    }
    if (tokens != NULL) {
        *tokens = rows_of(ex, ex->circuit->buffers[buffer].frames);
    }
    return ck_exec_buffer(ex, buffer);
}

int ck_executor_set_durations(ck_executor *ex, const int32_t *durations, size_t count,
                              ck_error *err)
{
    if (ex == NULL || (durations == NULL) != (count == 0)) {
        return ck_fail(err, CK_E_ARG, "forced durations: null executor, or %zu durations at %p",
                       count, (const void *)durations);
    }
    ex->forced = durations;
    ex->forced_count = count;
    return CK_OK;
}

const int32_t *ck_executor_predicted_durations(const ck_executor *ex, size_t *count)
{
    if (ex == NULL || !ex->predicted_ready || ex->output_ready < 0) {
        return NULL;
    }
    if (count != NULL) {
        *count = ex->tokens;
    }
    return ex->predicted;
}

int ck_executor_set_max_frames(ck_executor *ex, size_t max_frames, ck_error *err)
{
    if (ex == NULL) {
        return ck_fail(err, CK_E_ARG, "max frames: null executor");
    }
    if (max_frames > ex->plan.max_frames) {
        return ck_fail(err, CK_E_RANGE, "max frames %zu: above the plan's %zu", max_frames,
                       ex->plan.max_frames);
    }
    ex->limit_frames = max_frames;
    return CK_OK;
}

size_t ck_executor_plan_max_frames(const ck_executor *ex)
{
    return ex != NULL ? ex->plan.max_frames : 0;
}

static int noise_scale_ok(float scale)
{
    return scale >= 0.0f && scale <= FLT_MAX;
}

int ck_executor_set_noise(ck_executor *ex, uint64_t seed, const uint64_t *line, const uint32_t *chunk,
                          size_t n_seqs, float noise_scale, ck_error *err)
{
    if (ex == NULL || ((line != NULL || chunk != NULL) && n_seqs == 0)) {
        return ck_fail(err, CK_E_ARG, "noise: null executor, or keys without sequences");
    }
    for (size_t q = 0; line != NULL && q < n_seqs; q++) {
        if (line[q] > UINT32_MAX) {
            return ck_fail(err, CK_E_ARG, "noise: line %llu of sequence %zu above 2^32 - 1",
                           (unsigned long long)line[q], q);
        }
    }
    if (!noise_scale_ok(noise_scale)) {
        return ck_fail(err, CK_E_RANGE, "noise: scale %g, expected finite and >= 0",
                       (double)noise_scale);
    }
    ex->noise_seed = seed;
    ex->noise_line = line;
    ex->noise_chunk = chunk;
    ex->noise_keys = line != NULL || chunk != NULL ? n_seqs : 0;
    ex->noise_scale = noise_scale;
    ex->noise = NULL;
    ex->noise_rows = 0;
    return CK_OK;
}

int ck_executor_set_noise_input(ck_executor *ex, const float *noise, size_t rows, float noise_scale,
                                ck_error *err)
{
    if (ex == NULL || (noise == NULL) != (rows == 0)) {
        return ck_fail(err, CK_E_ARG, "noise input: null executor, or %zu rows at %p", rows,
                       (const void *)noise);
    }
    if (!noise_scale_ok(noise_scale)) {
        return ck_fail(err, CK_E_RANGE, "noise input: scale %g, expected finite and >= 0",
                       (double)noise_scale);
    }
    ex->noise = noise;
    ex->noise_rows = rows;
    ex->noise_scale = noise_scale;
    return CK_OK;
}

const size_t *ck_executor_row_offsets(const ck_executor *ex, size_t frames, size_t *n_seqs)
{
    if (ex == NULL || ex->output_ready < 0 ||
        (frames != 0 && (ck_circuit_frame_slot(ex->circuit, frames) < 0 || !ex->frames_ready))) {
        return NULL;
    }
    if (n_seqs != NULL) {
        *n_seqs = ex->n_seqs;
    }
    return frames == 0 ? ex->offsets
                       : ex->row_offsets[ck_circuit_frame_slot(ex->circuit, frames)];
}

const void *ck_executor_output_rows(const ck_executor *ex, int buffer, size_t *rows)
{
    if (ex == NULL || ex->output_ready < 0 || buffer < 0 ||
        (size_t)buffer >= ex->circuit->n_buffers ||
        ex->circuit->buffers[buffer].role != CK_BUFFER_OUTPUT ||
        (ex->circuit->buffers[buffer].frames != 0 && !ex->frames_ready)) {
        return NULL;
    }
    if (rows != NULL) {
        *rows = rows_of(ex, ex->circuit->buffers[buffer].frames);
    }
    return ck_exec_buffer(ex, buffer);
}

/* Steps whose row says weights_copied_at_init (the linears: ck_linear_init copies them and keeps
 * no pointer, linear.h) never read their tensors after init. */
int ck_executor_reads_weight(const ck_executor *ex, const ck_tensor *t)
{
    for (size_t i = 0; i < ex->program.n_steps; i++) {
        const ck_step *s = &ex->program.steps[i];
        for (size_t k = 0; !s->def->weights_copied_at_init && k < s->n_weights; k++) {
            if (s->w[k] == t) {
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
    for (size_t i = 0; i < ex->program.n_steps; i++) {
        if (ex->program.steps[i].kind == kind) {
            return ex->program.steps[i].dtype;
        }
    }
    return ck_op_dtype(kind, ex->opt.precision);
}

double ck_executor_class_seconds(const ck_executor *ex, ck_op_class op_class)
{
    double t = op_class == CK_OP_CLASS_OTHER ? ck_executor_op_seconds(ex, CK_OP_KIND_COUNT) : 0.0;
    for (int k = 0; k < CK_OP_KIND_COUNT; k++) {
        t += ck_op_defs[k].op_class == op_class ? ck_executor_op_seconds(ex, (ck_op_kind)k) : 0.0;
    }
    return t;
}

double ck_executor_class_flops(const ck_executor *ex, ck_op_class op_class)
{
    double flops = 0.0;
    for (int k = 0; ex != NULL && k < CK_OP_KIND_COUNT; k++) {
        flops += ck_op_defs[k].op_class == op_class ? ex->op_flops[k] : 0.0;
    }
    return flops;
}

/* ---- the speech part of the dispatch ---- */

enum { SPEECH_TOKENS, SPEECH_CONV1D, SPEECH_CONV_T, SPEECH_LSTM_IN, SPEECH_LSTM, SPEECH_OTHER,
       SPEECH_CLASSES };
static const char *const SPEECH_CLASS[SPEECH_CLASSES] = {
    "token_side", "conv1d", "conv_transpose", "lstm_input", "lstm_recurrence", "other"};

/* Step i's class in a speech program whose duration op is step d: the token side up to d, then
 * the GEMM-backed ops (an LSTM input GEMM is a linear whose output an lstm_recurrence reads), the
 * recurrence, and the rest (norms, Snake, the source, STFT/iSTFT, the residual stream). */
static int speech_class(const ck_program *p, size_t i, size_t d)
{
    const ck_step *s = &p->steps[i];
    if (i <= d) {
        return SPEECH_TOKENS;
    }
    if (s->kind == CK_OP_LINEAR) {
        for (size_t k = i + 1; k < p->n_steps; k++) {
            if (p->steps[k].kind == CK_OP_LSTM_RECURRENCE &&
                (p->steps[k].in[0] == s->out || p->steps[k].in[1] == s->out)) {
                return SPEECH_LSTM_IN;
            }
        }
    }
    return s->kind == CK_OP_CONV1D                   ? SPEECH_CONV1D
           : s->kind == CK_OP_CONV_TRANSPOSE1D_COL2IM ? SPEECH_CONV_T
           : s->kind == CK_OP_LSTM_RECURRENCE        ? SPEECH_LSTM
                                                     : SPEECH_OTHER;
}

/* "; speech token_side=f32 conv1d=bf16 ...": per class of a program with a duration op, the
 * dtypes its steps compute in (f32 first); nothing for a program without one (the encoder). */
static void speech_dispatch(const ck_executor *ex, char *buf, size_t cap)
{
    const ck_program *p = &ex->program;
    size_t d = 0, used = 0;
    while (d < p->n_steps && p->steps[d].kind != CK_OP_DURATION) {
        d++;
    }
    unsigned seen[SPEECH_CLASSES] = {0};
    for (size_t i = 0; d < p->n_steps && i < p->n_steps; i++) {
        seen[speech_class(p, i, d)] |= 1u << p->steps[i].dtype;
    }
    for (int k = 0; k < SPEECH_CLASSES && used < cap; k++) {
        int n = seen[k] ? snprintf(buf + used, cap - used, "%s%s=", k ? " " : "; speech ",
                                   SPEECH_CLASS[k]) : 0;
        used += n > 0 ? (size_t)n : 0;
        for (int t = 0, first = 1; t < CK_DTYPE_COUNT && used < cap; t++) {
            n = seen[k] >> t & 1u ? snprintf(buf + used, cap - used, "%s%s", first ? "" : "+",
                                             ck_dtype_info((ck_dtype)t)->lower) : 0;
            first = first && n <= 0;
            used += n > 0 ? (size_t)n : 0;
        }
    }
}

void ck_executor_dispatch_dtypes(const ck_executor *ex, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < CK_OP_KIND_COUNT && used < cap; k++) {
        const char *name = ck_op_defs[k].dispatch_name;
        int n = name == NULL ? 0 : snprintf(buf + used, cap - used, "%s%s=%s", used ? " " : "",
                                            name, ck_dtype_info(ck_executor_op_dtype(ex, (ck_op_kind)k))->lower);
        used += n > 0 ? (size_t)n : 0;
        /* the other dtypes steps of this kind compute in, in step order (int8 programs: i8+bf16) */
        unsigned seen = 1u << ck_executor_op_dtype(ex, (ck_op_kind)k);
        for (size_t i = 0; name != NULL && i < ex->program.n_steps && used < cap; i++) {
            const ck_step *s = &ex->program.steps[i];
            if (s->kind == (ck_op_kind)k && !(seen >> s->dtype & 1u)) {
                seen |= 1u << s->dtype;
                n = snprintf(buf + used, cap - used, "+%s", ck_dtype_info(s->dtype)->lower);
                used += n > 0 ? (size_t)n : 0;
            }
        }
    }
    if (used < cap) {
        speech_dispatch(ex, buf + used, cap - used);
    }
}

void ck_executor_linear_impls(const ck_executor *ex, char *buf, size_t cap)
{
    const char *seen[16];
    size_t n_seen = 0, used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ex->program.n_steps && n_seen < 16; i++) {
        const char *impl = linear_impl_at(ex, i);
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

size_t ck_executor_cols(const ck_executor *ex, int buffer)
{
    return ex->circuit->buffers[buffer].cols;
}

void ck_executor_free(ck_executor *ex)
{
    if (ex == NULL) {
        return;
    }
    for (size_t i = 0; i < ex->n_linears; i++) {
        ck_linear_free(ex->linears[i]);
    }
    ck_arena_free(&ex->copies);
    if (ex->compiled != NULL) {
        ex->opt.compiled->free(ex->compiled);
    }
    ck_program_free(&ex->program);
    ck_onednn_free(ex->onednn);
    ck_arenas_free(&ex->arenas);
    ck_plan_free(&ex->plan);
    for (size_t k = 0; k <= CK_FRAME_DIMS_MAX; k++) {
        free(ex->row_offsets[k]);
    }
    free(ex->predicted);
    free(ex->linears);
    free(ex->weights);
    free(ex);
}
