/* compiled_abi.h - the one entry table a generated circuit library (`ckbatch compile`) exports,
 * versioned. The emitter prints code against it, the executor calls through it. Plain C11 and
 * self-contained: a generated library includes this and the kernel and scheduler headers only.
 *
 * Legend: T tokens in the packed batch, S sequences, cols the buffer's per-token width. */
#ifndef CK_COMPILED_ABI_H
#define CK_COMPILED_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Grows when the table below changes; a loader refuses any other. */
#define CK_COMPILED_ABI_VERSION 3u /* 2: op_seconds; 3: run inputs (style, speed, noise, frames) */
/* The exported symbol: a const ck_compiled_circuit of that version. */
#define CK_COMPILED_SYMBOL "ck_compiled_circuit_v1"

/* Where a library came from. Every string is NUL-terminated and static in the library. */
typedef struct {
    const char *circuit_name;    /* the circuit's "name" */
    const char *circuit_sha256;  /* hex SHA-256 of the canonical circuit JSON */
    const char *emitter_version; /* CK_EMITTER_VERSION of the emitter that wrote it */
    const char *key;             /* hex cache key (circuit, emitter, compiler, flags, ISA, libs) */
    const char *precision;       /* "f32" or "bf16": the linears' compute dtype */
    int fuse_gelu;               /* 1: FFN linear + gelu_new as one step (not --parity) */
    size_t max_batch_tokens;     /* T the arena is planned for */
    size_t max_seq_len;          /* longest sequence */
    const char *libraries_sha256; /* hex SHA-256 over the kernel and scheduler archives it
                                    linked: a loader refuses it once those were rebuilt */
} ck_compiled_provenance;

/* One weight the library binds, in circuit weight order: f32 row-major. */
typedef struct {
    const char *name;  /* checkpoint tensor name */
    size_t rank;
    size_t shape[4];
    size_t elements;
} ck_compiled_weight;

typedef void (*ck_compiled_capture_fn)(void *ctx, const char *checkpoint, const float *data,
                                       size_t tokens, size_t cols);

typedef struct ck_compiled_state ck_compiled_state;

/* The per-run inputs of a circuit whose steps read per-sequence style or speed, the generator's
 * noise, or frame rows (the speech circuit), as the executor holds them
 * (ck_executor_set_sequence_inputs, ck_executor_set_noise, ck_executor_set_noise_input): the
 * same fields as the interpreter's ck_step_batch (scheduler/steps.h), which the library's steps
 * get. Pointers are the caller's and are read only during the runs that follow set_inputs. */
typedef struct {
    const float *style;            /* [S, style_cols] or NULL */
    size_t style_cols;
    const float *speed;            /* [S] or NULL */
    const float *noise;            /* [noise_rows, 9] fed noise, or NULL: counter noise */
    size_t noise_rows;
    uint64_t noise_seed;           /* counter noise: the key ... */
    const uint64_t *noise_line;    /* ... and each sequence's line [S] (NULL: 0) */
    const uint32_t *noise_chunk;   /* ... and chunk [S] (NULL: 0) */
    float noise_scale;             /* multiplies the noise (1 Kokoro's, 0 none) */
    /* Called once per run, right after the step that writes the circuit's durations buffer (i32
     * [T] in the arena): the caller's frames machinery (forced durations, the frame limit) sets,
     * for each frame dim k below n_frame_dims, rows[k] (the rows of that dim in the batch) and
     * offsets[k] ([S + 1] per-sequence first rows, valid until the next run). 0 or a CK_E_* code,
     * at which the run stops. NULL in a circuit without frames. */
    int (*frames)(void *ctx, size_t *rows, const size_t **offsets);
    void *frames_ctx;
} ck_compiled_run_inputs;

typedef struct {
    unsigned abi_version;                     /* CK_COMPILED_ABI_VERSION */
    const ck_compiled_provenance *provenance;
    size_t arena_bytes;                       /* activation arena init needs, multiple of 64 */
    size_t n_weights;
    const ck_compiled_weight *weights;        /* [n_weights] */
    int features_buffer, hidden_buffer;       /* circuit buffer indices; hidden -1 when none */
    size_t vocab;                             /* ids must be below it */
    /* Binds the arena (64-byte aligned, >= arena_bytes: else CK_E_SIZE -2, nothing written) and
     * the weights (weights[i] holds weights[i].elements floats; read during init and, for the
     * embedding and LayerNorm tables, during every run), makes the linears and per-worker scratch
     * for `threads` workers. 0 or a negative CK_E_* code; *out NULL on error. */
    int (*init)(ck_compiled_state **out, void *arena, size_t arena_bytes,
                const float *const *weights, size_t n_weights, int threads);
    /* One packed batch, as ck_executor_run: ids[offsets[S]], offsets[S+1] ascending from 0; checks
     * ids (CK_E_RANGE), lengths and tokens (CK_E_SIZE) before any step runs and the output rows (of
     * an f32 buffer) for NaN/Inf (CK_E_NONFINITE) before copying them into out[rows, cols] (may be
     * NULL; rows the tokens, or a frame-rows buffer's rows: CK_E_SIZE after the run when out is too
     * small); on error out is untouched. output_buffer: any circuit buffer. capture (may be NULL)
     * sees every checkpoint. A circuit with sequence inputs or frames reads the last set_inputs. */
    int (*run)(ck_compiled_state *st, const int32_t *ids, const size_t *offsets, size_t n_seqs,
               int output_buffer, float *out, size_t out_count, ck_compiled_capture_fn capture,
               void *capture_ctx);
    /* The rows [*tokens, cols] (*tokens: its rows) of the last successful run's output buffer, in
     * the arena; NULL
     * when the last run failed or named another buffer. */
    const float *(*rows)(const ck_compiled_state *st, int buffer, size_t *tokens);
    /* Columns of a circuit buffer, 0 for an unknown one. */
    size_t (*cols)(int buffer);
    /* oneDNN's implementation string of linear i (in step order), NULL past the last. */
    const char *(*linear_impl)(const ck_compiled_state *st, size_t i);
    /* Releases what init made (not the arena or the weights); accepts NULL. */
    void (*free)(ck_compiled_state *st);
    int n_op_kinds;                           /* op kinds op_seconds knows (the emitter's) */
    /* Wall seconds of the steps of op kind `kind` (the emitter's ck_op_kind numbers, below
     * n_op_kinds) over the runs since init or the last reset; 0 for another kind or NULL. */
    double (*op_seconds)(const ck_compiled_state *st, int kind);
    void (*reset_op_seconds)(ck_compiled_state *st);
    size_t n_frame_dims;                      /* the circuit's frame dims (0: the encoder) */
    int sequence_inputs;                      /* 1: some step reads the style, speed or noise */
    /* Copies *in (NULL: all zero, noise scale 1) for the runs that follow. */
    void (*set_inputs)(ck_compiled_state *st, const ck_compiled_run_inputs *in);
} ck_compiled_circuit;

#endif
