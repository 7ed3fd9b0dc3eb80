/* model.c - the public model handle: circuit + weights + executor loaded once, then packed ids or
 * lines encoded through it. Logs through the caller's callback; prints nothing. */
#include "model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batcher.h"
#include "circuit_default.h"
#include "ck_isa.h"
#include "linear.h"
#include "op_table.h"
#include "parallel.h"
#include "reader.h"
#include "synth_weights.h"
#include "weights_manifest.h"

const char *ck_version(void)
{
    return CK_VERSION;
}

int ck_available_cpus(void)
{
    return ck_parallel_available_cpus();
}

ck_model_params ck_model_default_params(void)
{
    ck_model_params p;
    memset(&p, 0, sizeof p);
    p.seed = CK_SYNTH_DEFAULT_SEED;
    p.max_batch_tokens = CK_DEFAULT_MAX_BATCH_TOKENS;
    return p;
}

int ck_model_buffer(const ck_model *m, ck_layer layer)
{
    if (m == NULL) {
        return -1;
    }
    switch (layer) {
    case CK_LAYER_FEATURES: return m->circuit.features_buffer;
    case CK_LAYER_HIDDEN: return m->circuit.hidden_buffer;
    case CK_LAYER_PROSODY: return m->circuit.durations_buffer;
    default: return -1;
    }
}

int ck_model_check_cancel(const ck_model *m, const char *what, size_t done, ck_error *err)
{
    if (m->params.cancel == NULL || m->params.cancel(m->params.cancel_ctx) == 0) {
        return CK_OK;
    }
    return ck_fail(err, CK_E_CANCELLED, "%s: cancelled by the caller after %zu sequences", what,
                   done);
}

size_t ck_model_max_phonemes(const ck_model *m)
{
    size_t positions = m->circuit.max_positions;
    if (positions < 3) {
        return 1;
    }
    return positions - 2 < CK_READER_MAX_PHONEMES ? positions - 2 : CK_READER_MAX_PHONEMES;
}

/* The checkpoint groups (first name segments, e.g. "bert") the circuit's weights come from, each
 * once, into groups[] (NULL-terminated, pointing into `names`, which holds copies). */
static void circuit_groups(const ck_circuit *c, char names[][CK_WEIGHT_NAME_MAX],
                           const char **groups)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_weights; i++) {
        const char *name = c->weights[i].checkpoint_name;
        size_t len = strcspn(name, ".");
        int seen = 0;
        for (size_t k = 0; k < n && !seen; k++) {
            seen = strlen(groups[k]) == len && strncmp(groups[k], name, len) == 0;
        }
        if (!seen) {
            snprintf(names[n], CK_WEIGHT_NAME_MAX, "%.*s", (int)len, name);
            groups[n] = names[n];
            n++;
        }
    }
    groups[n] = NULL;
}

/* Reads only the groups the circuit needs (a Kokoro .pth's decoder is not read for the encoder), and
 * names a group the file lacks before any tensor of it is bound. */
static int load_file_weights(ck_model *m, const char *path, ck_error *err)
{
    const ck_circuit *c = &m->circuit;
    char (*names)[CK_WEIGHT_NAME_MAX] = calloc(c->n_weights + 1, sizeof *names);
    const char **groups = calloc(c->n_weights + 1, sizeof *groups);
    int rc = names != NULL && groups != NULL ? CK_OK
                                             : ck_fail(err, CK_E_MEMORY, "weights: out of memory");
    if (rc == CK_OK) {
        circuit_groups(c, names, groups);
        rc = ck_weights_load_groups(&m->weights, path, groups, err);
    }
    for (size_t k = 0; rc == CK_OK && groups[k] != NULL; k++) {
        if (!ck_weights_has_group(m->weights, groups[k])) {
            const char *first = "";
            for (size_t i = 0; first[0] == '\0' && i < c->n_weights; i++) {
                const char *name = c->weights[i].checkpoint_name;
                size_t len = strlen(groups[k]);
                first = strncmp(name, groups[k], len) == 0 && (name[len] == '.' || !name[len])
                            ? name : "";
            }
            rc = ck_fail(err, CK_E_WEIGHTS, "%s: group \"%s\" missing: the circuit %s needs its "
                         "tensors (\"%s\", ...)", path, groups[k], c->path, first);
        }
    }
    free(names);
    free(groups);
    return rc;
}

static int load_weights(ck_model *m, ck_error *err)
{
    const ck_model_params *p = &m->params;
    m->synthetic_weights = p->weights == NULL;
    int rc = p->weights != NULL ? load_file_weights(m, p->weights, err)
                                : ck_circuit_synthetic_weights(&m->weights, &m->circuit, p->seed, err);
    if (rc == CK_OK && p->weights_manifest != NULL) {
        rc = ck_weights_manifest_verify(m->weights, p->weights_manifest, err);
    }
    return rc;
}

/* Keeps one copy of the weights: the tensors only linears use now live in oneDNN's layout inside
 * the executor, so their source (owned buffer or file pages) is released. Parity keeps them all,
 * to hash them again at the end of each run. */
static void release_copied_weights(ck_model *m)
{
    for (size_t i = 0; i < ck_weights_count(m->weights); i++) {
        if (!ck_executor_reads_weight(m->executor, ck_weights_at(m->weights, i))) {
            (void)ck_weights_release(m->weights, i); /* i < count: cannot fail */
        }
    }
}

/* What the model holds for its whole life (docs/memory.md): the weights (one copy unless parity
 * keeps the sources beside oneDNN's), the activation and scratch arenas. */
static void log_memory(const ck_model *m)
{
    const double mib = 1024.0 * 1024.0;
    size_t weights = 0, released = 0, scratch = 0;
    for (size_t i = 0; i < ck_weights_count(m->weights); i++) {
        const ck_tensor *t = ck_weights_at(m->weights, i);
        weights += t->elements * sizeof(float);
        released += t->data == NULL;
    }
    size_t arena = ck_executor_arena_bytes(m->executor, &scratch);
    ck_log(m->params.log, m->params.log_ctx, CK_LOG_INFO,
           "memory: weights %.1f MiB (%zu of %zu tensors held only as oneDNN's copies), activation "
           "arena %.1f MiB, scratch %d x %.2f MiB", (double)weights / mib, released,
           ck_weights_count(m->weights), (double)arena / mib, m->workers, (double)scratch / mib);
}

/* m->dispatch: the dtype each op class computes in, then oneDNN's version and the implementation
 * of the linears, the CPU's features and the native kernels' ISA (ck_model_dispatch). */
static void describe_dispatch(ck_model *m)
{
    char impls[256], dtypes[256];
    ck_executor_linear_impls(m->executor, impls, sizeof impls);
    ck_executor_dispatch_dtypes(m->executor, dtypes, sizeof dtypes);
    snprintf(m->dispatch, sizeof m->dispatch, "%s; onednn %s %s; cpu %s; kernels %s", dtypes,
             ck_onednn_version(), impls, ck_cpu_features(), ck_kernels_isa());
    if (m->params.precision == CK_PRECISION_INT8) { /* the quantization and the instruction */
        size_t used = strlen(m->dispatch);
        snprintf(m->dispatch + used, sizeof m->dispatch - used, "; int8 u8 rows x s8 channels, "
                 "s32, dot %s", ck_cpu_int8_dot());
    }
}

/* Loads params.compiled for this circuit, precision, fusion and batch size (codegen.h checks its
 * SHA-256 before dlopen and its provenance after) and hands its entry table to the executor. An
 * X-Ray model takes a library of any batch size that holds the longest case, planned as
 * compiled. */
static int load_compiled(ck_model *m, ck_executor_options *eo, ck_error *err)
{
    char circuit_sha[65];
    int rc = ck_codegen_circuit_sha256(m->params.circuit, circuit_sha, err);
    const ck_compiled_want want = {.circuit_sha256 = circuit_sha,
                                   .precision = eo->precision,
                                   .fuse_gelu = eo->fuse_gelu,
                                   .max_batch_tokens = m->xray_longest ? 0 : eo->max_batch_tokens};
    rc = rc ? rc : ck_codegen_load(&m->library, m->params.compiled, &want, err);
    if (rc != CK_OK) {
        return rc;
    }
    if (m->xray_longest) {
        size_t planned = m->library.table->provenance->max_batch_tokens;
        if (planned < eo->max_batch_tokens) {
            return ck_fail(err, CK_E_SIZE, "%s: compiled for %zu batch tokens, the longest case "
                           "has %zu", m->params.compiled, planned, eo->max_batch_tokens);
        }
        eo->max_batch_tokens = m->params.max_batch_tokens = planned;
    }
    eo->compiled = m->library.table;
    return CK_OK;
}

/* Everything that can reject the model, in the order the CLI has always checked it: config,
 * circuit, weights, manifest, batch size, binding, config dims. */
static int prepare(ck_model *m, ck_error *err)
{
    const ck_model_params *p = &m->params;
    int rc = CK_OK;
    if (p->config != NULL) {
        rc = ck_kokoro_config_load(&m->config, p->config, err);
        m->has_config = rc == CK_OK;
    }
    if (rc == CK_OK) {
        rc = ck_circuit_load_default(&m->circuit, p->circuit, err);
    }
    if (rc == CK_OK) {
        rc = load_weights(m, err);
    }
    if (rc != CK_OK) {
        return rc;
    }
    size_t max_seq = m->circuit.max_positions;
    if (m->xray_longest) { /* X-Ray: every case is one batch, however long */
        m->params.max_batch_tokens = m->xray_longest > max_seq ? m->xray_longest : max_seq;
    }
    if (p->max_batch_tokens < max_seq) {
        return ck_fail(err, CK_E_ARG, "max_batch_tokens %zu: must be at least the longest "
                       "sequence, %zu", p->max_batch_tokens, max_seq);
    }
    /* int8 is the encoder's precision (issue 32): the token side and speech stay fp32 or bf16 */
    if (p->precision == CK_PRECISION_INT8 &&
        (m->circuit.durations_buffer >= 0 || m->circuit.max_frames_scale > 0)) {
        return ck_fail(err, CK_E_ARG, "model: precision int8 is the encoder's only: the circuit %s "
                       "computes durations or frames; use precision fp32 or bf16", m->circuit.path);
    }
    /* parity: one worker, so the scheduler and oneDNN's OpenMP team both run on one thread */
    ck_executor_options eo = {
        .threads = m->workers,
        .max_batch_tokens = p->max_batch_tokens,
        .max_seq_len = max_seq,
        .fuse_gelu = !m->parity,
        .precision = ck_precision_dtype(p->precision),
    };
    if (p->compiled != NULL) {
        rc = load_compiled(m, &eo, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    rc = ck_executor_init_frames(&m->executor, &m->circuit, m->weights, &eo, m->xray_frames, err);
    /* the executor has bound every weight to the circuit's shapes: these dims are the weights' */
    ck_model_dims_of_circuit(&m->circuit, &m->dims);
    if (rc == CK_OK && m->has_config) {
        rc = ck_kokoro_config_check(&m->config, &m->dims, err);
    }
    if (rc == CK_OK && !m->parity) {
        release_copied_weights(m);
    }
    return rc;
}

/* ck_model_load, and ck_model_open_for_xray when xray_longest > 0. */
static int open_model(ck_model **out, const ck_model_params *params, size_t xray_longest,
                      size_t xray_frames, ck_error *err)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (out == NULL || params == NULL) {
        return ck_fail(err, CK_E_ARG, "model: null %s", out == NULL ? "out" : "params");
    }
    if (params->threads < 0) {
        return ck_fail(err, CK_E_ARG, "model: threads %d: expected 0 (the available CPUs) or more",
                       params->threads);
    }
    if (params->precision != CK_PRECISION_FP32 && params->precision != CK_PRECISION_BF16 &&
        params->precision != CK_PRECISION_INT8) {
        return ck_fail(err, CK_E_ARG, "model: precision %d: expected CK_PRECISION_FP32, "
                       "CK_PRECISION_BF16 or CK_PRECISION_INT8", (int)params->precision);
    }
    if (params->parity && params->precision != CK_PRECISION_FP32 && xray_longest == 0) {
        return ck_fail(err, CK_E_ARG, "model: parity runs fp32 only (the X-Ray contract): precision "
                       "%s and parity cannot be combined",
                       params->precision == CK_PRECISION_INT8 ? "int8" : "bf16");
    }
    if (params->precision == CK_PRECISION_INT8 && params->compiled != NULL) {
        return ck_fail(err, CK_E_ARG, "model: precision int8 runs through the interpreter only: "
                       "generated libraries are fp32 and bf16");
    }
    ck_model *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return ck_fail(err, CK_E_MEMORY, "model: cannot allocate");
    }
    m->params = *params;
    m->xray_longest = xray_longest;
    m->xray_frames = xray_frames;
    m->parity = params->parity != 0;
    m->threads = params->threads > 0 ? params->threads : ck_parallel_available_cpus();
    m->workers = m->parity ? 1 : m->threads;
    int rc = CK_OK;
    if (params->circuit != NULL && (m->circuit_path = strdup(params->circuit)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "model: cannot copy the circuit path");
    }
    rc = rc == CK_OK ? prepare(m, err) : rc;
    /* paths are the caller's: a model does not keep pointers it was only lent during load */
    m->params.weights = m->params.weights_manifest = m->params.circuit = m->params.config = NULL;
    m->params.compiled = NULL; /* ck_model_library_path keeps its copy */
    if (rc != CK_OK) {
        ck_model_free(m);
        return rc;
    }
    ck_log(params->log, params->log_ctx, CK_LOG_INFO, "weights: %s", ck_weights_identity(m->weights));
    describe_dispatch(m);
    if (params->precision != CK_PRECISION_FP32) {
        ck_log(params->log, params->log_ctx, CK_LOG_INFO, "precision: %s (%s)",
               ck_model_precision(m), m->dispatch);
    }
    if (m->library.table != NULL) {
        ck_log(params->log, params->log_ctx, CK_LOG_INFO, "backend: generated %s (sha256 %.16s..., "
               "key %.16s...)", m->library.path, m->library.sha256, m->library.key);
    }
    log_memory(m);
    *out = m;
    return CK_OK;
}

int ck_model_load(ck_model **out, const ck_model_params *params, ck_error *err)
{
    return open_model(out, params, 0, 0, err);
}

int ck_model_open_for_xray(ck_model **out, const ck_model_params *params, size_t longest,
                           size_t frames, ck_error *err)
{
    if (longest == 0 || params == NULL || !params->parity) {
        if (out != NULL) {
            *out = NULL;
        }
        return ck_fail(err, CK_E_ARG, "model: an X-Ray model runs in parity with a longest case");
    }
    return open_model(out, params, longest, frames, err);
}

void ck_model_free(ck_model *m)
{
    if (m == NULL) {
        return;
    }
    ck_executor_free(m->executor);
    ck_codegen_unload(&m->library); /* after the executor, which ran it */
    ck_weights_free(m->weights);
    ck_circuit_free(&m->circuit);
    ck_kokoro_config_free(&m->config);
    free(m->circuit_path);
    free(m);
}

const char *ck_op_class_name(ck_op_class c)
{
    static const char *const names[CK_OP_CLASS_COUNT] = {
        "embedding", "linear", "attention", "layer_norm", "gelu_new", "other", "convolution", "lstm"};
    return (unsigned)c < CK_OP_CLASS_COUNT ? names[c] : "";
}

/* The op table says each kind's class (ck_op_def.op_class). */
double ck_model_op_seconds(const ck_model *m, ck_op_class c)
{
    return m != NULL && (unsigned)c < CK_OP_CLASS_COUNT ? ck_executor_class_seconds(m->executor, c)
                                                        : 0.0;
}

/* The op table's flops column (ck_op_def.flops) times the rows each step wrote. */
double ck_model_op_flops(const ck_model *m, ck_op_class c)
{
    return m != NULL && (unsigned)c < CK_OP_CLASS_COUNT ? ck_executor_class_flops(m->executor, c)
                                                        : 0.0;
}

void ck_model_reset_op_seconds(ck_model *m)
{
    if (m != NULL) {
        ck_executor_reset_op_seconds(m->executor);
    }
}

const char *ck_model_backend(const ck_model *m)
{
    return m != NULL && m->library.table != NULL ? "generated" : "interpreted";
}

const char *ck_model_library_path(const ck_model *m)
{
    return m != NULL ? m->library.path : "";
}

const char *ck_model_library_sha256(const ck_model *m)
{
    return m != NULL ? m->library.sha256 : "";
}

const char *ck_model_library_key(const ck_model *m)
{
    return m != NULL ? m->library.key : "";
}

const char *ck_model_precision(const ck_model *m)
{
    if (m == NULL) {
        return "";
    }
    return m->params.precision == CK_PRECISION_BF16   ? "bf16"
           : m->params.precision == CK_PRECISION_INT8 ? "int8"
                                                      : "fp32";
}

const char *ck_model_dispatch(const ck_model *m)
{
    return m == NULL ? "" : m->dispatch;
}

size_t ck_model_cols(const ck_model *m, ck_layer layer)
{
    int b = ck_model_buffer(m, layer);
    return b >= 0 ? m->circuit.buffers[b].cols : 0;
}

size_t ck_model_max_tokens(const ck_model *m)
{
    return m != NULL ? m->circuit.max_positions : 0;
}

size_t ck_model_vocab_rows(const ck_model *m)
{
    return m != NULL ? m->dims.word_rows : 0;
}

const char *ck_model_weights_identity(const ck_model *m)
{
    return m != NULL ? ck_weights_identity(m->weights) : "";
}

double ck_model_flops_per_token(const ck_model *m, size_t seq_len)
{
    if (m == NULL) {
        return 0.0;
    }
    return ck_circuit_flops_per_token(&m->circuit, seq_len); /* the op table's flops column */
}

/* Every check of ck_model_encode_ids that needs no batch to run. */
static int check_ids(const ck_model *m, const int32_t *ids, const size_t *offsets, size_t n_seqs,
                     size_t out_rows, ck_error *err)
{
    if (offsets[0] != 0) {
        return ck_fail(err, CK_E_SIZE, "encode: offsets[0] is %zu, expected 0", offsets[0]);
    }
    for (size_t s = 0; s < n_seqs; s++) {
        size_t len = offsets[s + 1] >= offsets[s] ? offsets[s + 1] - offsets[s] : 0;
        if (len < 2 || len > m->circuit.max_positions) {
            return ck_fail(err, CK_E_SIZE, "encode: sequence %zu has %zu tokens, expected 2..%zu "
                           "(boundaries included)", s, len, m->circuit.max_positions);
        }
    }
    if (out_rows < offsets[n_seqs]) {
        return ck_fail(err, CK_E_SIZE, "encode: out holds %zu rows, the sequences have %zu",
                       out_rows, offsets[n_seqs]);
    }
    for (size_t t = 0; t < offsets[n_seqs]; t++) {
        if (ids[t] < 0 || (size_t)ids[t] >= m->dims.word_rows) {
            return ck_fail(err, CK_E_RANGE, "encode: token %zu: id %ld outside 0..%zu", t,
                           (long)ids[t], m->dims.word_rows - 1);
        }
    }
    return CK_OK;
}

int ck_model_encode_ids(ck_model *m, const int32_t *ids, const size_t *offsets, size_t n_seqs,
                        ck_layer layer, float *out, size_t out_rows, ck_error *err)
{
    if (m == NULL || offsets == NULL || (n_seqs > 0 && (ids == NULL || out == NULL))) {
        return ck_fail(err, CK_E_ARG, "encode: null argument");
    }
    if (layer != CK_LAYER_FEATURES && layer != CK_LAYER_HIDDEN) {
        return ck_fail(err, CK_E_ARG, "encode: layer %d: expected 0 (features) or 1 (hidden)",
                       (int)layer);
    }
    int buffer = ck_model_buffer(m, layer);
    if (buffer < 0) {
        return ck_fail(err, CK_E_ARG, "encode: the circuit has no %s output",
                       layer == CK_LAYER_HIDDEN ? "hidden" : "features");
    }
    int rc = check_ids(m, ids, offsets, n_seqs, out_rows, err);
    size_t cols = m->circuit.buffers[buffer].cols, cap = m->params.max_batch_tokens;
    size_t *batch = rc == CK_OK ? malloc((n_seqs + 1) * sizeof *batch) : NULL;
    if (rc == CK_OK && batch == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "encode: cannot allocate %zu offsets", n_seqs + 1);
    }
    /* consecutive sequences, in input order, as long as they fit one planned batch */
    for (size_t first = 0; rc == CK_OK && first < n_seqs;) {
        size_t base = offsets[first];
        size_t count = ck_batch_consecutive(offsets, n_seqs, first, cap, batch);
        rc = ck_model_check_cancel(m, "encode", first, err);
        rc = rc == CK_OK ? ck_executor_run(m->executor, ids + base, batch, count, buffer,
                                           out + base * cols, batch[count] * cols, NULL, NULL, err)
                         : rc;
        first += count;
    }
    free(batch);
    return rc;
}

ck_lines_params ck_lines_default_params(void)
{
    ck_lines_params p;
    memset(&p, 0, sizeof p);
    p.format = CK_INPUT_PHONEMES;
    return p;
}

void ck_sequence_set_free(ck_sequence_set *s)
{
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; s->phonemes != NULL && i < s->n_sequences; i++) {
        free(s->phonemes[i]);
    }
    free(s->phonemes);
    free(s->ids);
    free(s->offsets);
    free(s->line);
    free(s->chunk);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

typedef struct {
    ck_log_fn fn;
    void *ctx;
} warn_sink;

static void warn_to_log(void *ctx, const char *message)
{
    const warn_sink *w = ctx;
    ck_log(w->fn, w->ctx, CK_LOG_WARNING, "warning: %s", message);
}

/* Refuses a NULL line or one holding a newline, before any line is converted. */
static int check_lines(const char *const *lines, size_t n, ck_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (lines[i] == NULL) {
            return ck_fail(err, CK_E_ARG, "tokenize: line %zu is NULL", i + 1);
        }
        if (strchr(lines[i], '\n') != NULL) {
            return ck_fail(err, CK_E_ARG, "tokenize: line %zu holds a newline", i + 1);
        }
    }
    return CK_OK;
}

/* Appends the reader's sequences of one line to out (arrays grown by doubling). */
static int append_sequences(ck_sequence_set *out, size_t *cap, size_t *id_cap, ck_sequence *seqs,
                            size_t n, ck_error *err)
{
    for (size_t i = 0; i < n; i++) {
        ck_sequence *q = &seqs[i];
        if (out->n_sequences == *cap) {
            size_t c = *cap ? 2 * *cap : 16;
            size_t *off = realloc(out->offsets, (c + 1) * sizeof *off);
            out->offsets = off != NULL ? off : out->offsets;
            size_t *line = off ? realloc(out->line, c * sizeof *line) : NULL;
            out->line = line != NULL ? line : out->line;
            size_t *chunk = line ? realloc(out->chunk, c * sizeof *chunk) : NULL;
            out->chunk = chunk != NULL ? chunk : out->chunk;
            char **ph = chunk ? realloc(out->phonemes, c * sizeof *ph) : NULL;
            out->phonemes = ph != NULL ? ph : out->phonemes;
            if (ph == NULL) {
                return ck_fail(err, CK_E_MEMORY, "tokenize: cannot grow to %zu sequences", c);
            }
            *cap = c;
        }
        if (out->n_tokens + q->n_ids > *id_cap) {
            size_t c = *id_cap ? 2 * *id_cap : 1024;
            while (c < out->n_tokens + q->n_ids) {
                c *= 2;
            }
            int32_t *ids = realloc(out->ids, c * sizeof *ids);
            if (ids == NULL) {
                return ck_fail(err, CK_E_MEMORY, "tokenize: cannot grow to %zu ids", c);
            }
            out->ids = ids;
            *id_cap = c;
        }
        size_t s = out->n_sequences++;
        memcpy(out->ids + out->n_tokens, q->ids, q->n_ids * sizeof *q->ids);
        out->n_tokens += q->n_ids;
        out->offsets[s + 1] = out->n_tokens;
        out->line[s] = q->line - 1;
        out->chunk[s] = q->chunk;
        out->phonemes[s] = q->phonemes; /* moved */
        q->phonemes = NULL;
    }
    return CK_OK;
}

int ck_model_tokenize(const ck_model *m, const char *const *lines, size_t n_lines,
                      const ck_lines_params *params, ck_sequence_set *out, ck_error *err)
{
    return ck_model_tokenize_named(m, lines, n_lines, params, "<lines>", NULL, NULL, out, err);
}

/* One line through the reader: its sequences appended to out, or (CK_E_INPUT with on_bad) the
 * line handed to on_bad. */
static int tokenize_line(ck_reader *r, const char *line, size_t i, ck_bad_line_fn on_bad,
                         void *ctx, ck_sequence_set *out, size_t *cap, size_t *id_cap,
                         ck_error *err)
{
    ck_sequence *seqs = NULL;
    size_t n = 0;
    ck_error line_err = {0};
    int got = ck_reader_line(r, line, strlen(line), &seqs, &n, on_bad ? &line_err : err);
    int rc = got == 1 ? append_sequences(out, cap, id_cap, seqs, n, err) : got;
    ck_sequences_free(seqs, n);
    if (on_bad != NULL && got < 0) {
        rc = got == CK_E_INPUT ? on_bad(ctx, i, line_err.message, err)
                               : ck_fail(err, got, "%s", line_err.message);
    }
    return rc;
}

int ck_model_tokenize_named(const ck_model *m, const char *const *lines, size_t n_lines,
                            const ck_lines_params *params, const char *name, ck_bad_line_fn on_bad,
                            void *ctx, ck_sequence_set *out, ck_error *err)
{
    if (out != NULL) {
        memset(out, 0, sizeof *out);
    }
    if (m == NULL || out == NULL || (n_lines > 0 && lines == NULL)) {
        return ck_fail(err, CK_E_ARG, "tokenize: null argument");
    }
    ck_lines_params p = params != NULL ? *params : ck_lines_default_params();
    size_t cap = 0, id_cap = 0;
    int rc = check_lines(lines, n_lines, err);
    if (rc != CK_OK) {
        return rc;
    }
    if (n_lines == 0) { /* no lines: no sequences, and no reader (its options are not checked) */
        out->offsets = calloc(1, sizeof *out->offsets);
        return out->offsets != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "tokenize: cannot allocate");
    }
    warn_sink sink = {p.log, p.log_ctx};
    ck_reader_options ro = {p.format, p.lang, p.strict_symbols, ck_model_max_phonemes(m),
                            warn_to_log, &sink, m->has_config ? m->config.vocab : NULL,
                            m->dims.word_rows, p.g2p, p.lexicon_dir};
    ck_reader *r = NULL;
    rc = ck_reader_open_lines(&r, name, &ro, err);
    if (rc == CK_OK && (out->offsets = calloc(1, sizeof *out->offsets)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "tokenize: cannot allocate");
    }
    for (size_t i = 0; rc == CK_OK && i < n_lines; i++) {
        rc = tokenize_line(r, lines[i], i, on_bad, ctx, out, &cap, &id_cap, err);
    }
    ck_reader_close(r);
    if (rc != CK_OK) {
        ck_sequence_set_free(out);
    }
    return rc;
}

int ck_model_encode_lines(ck_model *m, const char *const *lines, size_t n_lines,
                          const ck_lines_params *params, ck_layer layer, ck_sequence_set *out,
                          ck_error *err)
{
    if (layer != CK_LAYER_FEATURES && layer != CK_LAYER_HIDDEN) {
        if (out != NULL) {
            memset(out, 0, sizeof *out);
        }
        return ck_fail(err, CK_E_ARG, "encode: layer %d: expected 0 (features) or 1 (hidden)",
                       (int)layer);
    }
    int rc = ck_model_tokenize(m, lines, n_lines, params, out, err);
    size_t cols = rc == CK_OK ? ck_model_cols(m, layer) : 0;
    if (rc == CK_OK && cols == 0) {
        rc = ck_fail(err, CK_E_ARG, "encode: the circuit has no %s output",
                     layer == CK_LAYER_HIDDEN ? "hidden" : "features");
    }
    if (rc == CK_OK && out->n_tokens > 0 &&
        (out->rows = malloc(out->n_tokens * cols * sizeof *out->rows)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "encode: cannot allocate %zu rows", out->n_tokens);
    }
    if (rc == CK_OK) {
        out->cols = cols;
        rc = ck_model_encode_ids(m, out->ids, out->offsets, out->n_sequences, layer, out->rows,
                                 out->n_tokens, err);
    }
    if (rc != CK_OK && out != NULL) {
        ck_sequence_set_free(out);
    }
    return rc;
}
