/* model_internal.h - what a ck_model holds, for the api room's own files (model.c, corpus_run.c,
 * xray_model.c). Not installed; outside engine/api nothing includes it (scripts/check-rooms.sh). */
#ifndef CK_MODEL_INTERNAL_H
#define CK_MODEL_INTERNAL_H

#include "ckbatch.h"
#include "ck_log.h"
#include "circuit.h"
#include "codegen.h"
#include "executor.h"
#include "kokoro_config.h"
#include "weights.h"

/* max_batch_tokens of ck_model_default_params and ck_compile_default_params: a library compiled
 * with the defaults loads into a model opened with the defaults. */
#define CK_DEFAULT_MAX_BATCH_TOKENS 2048

struct ck_model {
    ck_model_params params;     /* as given; the paths are not kept past load */
    int parity;
    size_t xray_longest;        /* ck_model_open_for_xray: tokens of its longest case; 0 otherwise */
    size_t xray_frames;         /* ck_model_open_for_xray: frames of its longest case (speech), the
                                   executor's max_batch_frames; 0: the default per token */
    int threads;                /* params.threads resolved (0: the available CPUs) */
    int workers;                /* compute workers: 1 in parity, else threads */
    char *circuit_path;         /* copy of params.circuit, NULL for the embedded one (resume
                                   identity) */
    ck_circuit circuit;
    ck_weights *weights;
    int synthetic_weights;      /* 1: the synthetic demo weights (no params.weights file) */
    ck_executor *executor;
    ck_kokoro_config config;    /* params.config, zeroed when none */
    int has_config;
    ck_model_dims dims;         /* of the circuit the weights matched */
    char dispatch[768];         /* ck_model_dispatch: what each op class ran on */
    ck_compiled_library library;/* params.compiled, loaded and verified; zeroed when interpreted */
};

/* ck_model_load for X-Ray's parity run (params->parity set; xray_model.c): one worker and unfused
 * kernels in either precision (bf16 included), max_batch_tokens the larger of `longest` and the
 * circuit's positions, a circuit with frames planned for `frames` per batch (0: the executor's
 * default per token), and params->compiled taken at its own max batch tokens when they hold the
 * longest case (else CK_E_SIZE "PATH: compiled for N batch tokens, the longest case has M"). The
 * model keeps every weight (X-Ray hashes them after the run). */
int ck_model_open_for_xray(ck_model **out, const ck_model_params *params, size_t longest,
                           size_t frames, ck_error *err);

/* The circuit buffer of `layer` (features, hidden or the prosody durations), or -1 when the circuit
 * has none. */
int ck_model_buffer(const ck_model *m, ck_layer layer);

/* CK_E_CANCELLED (err: "<what>: cancelled by the caller after <done> sequences") when the model's
 * cancel callback returns nonzero, else CK_OK. Called on the calling thread before a batch,
 * outside any parallel region. */
int ck_model_check_cancel(const ck_model *m, const char *what, size_t done, ck_error *err);

/* The longest phoneme run one sequence may hold: the position table minus the two boundaries,
 * at most 510. */
size_t ck_model_max_phonemes(const ck_model *m);

/* A line the reader rejected (CK_E_INPUT; message "NAME:N: column C: what"), line 0-based: return
 * CK_OK to go on without it, or the code to stop with (an error set in err). */
typedef int (*ck_bad_line_fn)(void *ctx, size_t line, const char *message, ck_error *err);

/* ck_model_tokenize, its messages naming `name` (ck_model_tokenize: "<lines>"), each bad line
 * handed to on_bad when it is not NULL (NULL: the first one is the error). */
int ck_model_tokenize_named(const ck_model *m, const char *const *lines, size_t n_lines,
                            const ck_lines_params *params, const char *name, ck_bad_line_fn on_bad,
                            void *ctx, ck_sequence_set *out, ck_error *err);

#endif
