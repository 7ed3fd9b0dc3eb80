/* executor.h - binds a validated circuit to weights and a memory plan, then runs packed ragged
 * batches op by op (rows and (sequence, head) pairs through the scheduler, linears through oneDNN).
 * Reads no files.
 *
 * Legend: T tokens in the packed batch, S sequences, cols the buffer's per-token width. */
#ifndef CK_EXECUTOR_H
#define CK_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "circuit.h"
#include "ck_error.h"
#include "compiled_abi.h"
#include "weights.h"

typedef struct {
    int threads;              /* compute workers (OpenMP and oneDNN), >= 1 */
    size_t max_batch_tokens;  /* T of the largest batch the arena is planned for */
    size_t max_seq_len;       /* longest sequence, <= the circuit's max positions */
    int fuse_gelu;            /* 1: a linear whose output only a gelu_new reads runs as one oneDNN
                                 matmul with a GELU post-op (faster; the linear's own checkpoint,
                                 e.g. layer.NN.ffn, is then not captured). 0 (parity): every op runs
                                 its own kernel */
    ck_dtype precision;       /* CK_DTYPE_F32 (0, the default) or bf16 (ck_precision_dtype):
                                 the program's; each op's row says what its steps run then
                                 (ck_executor_op_dtype). bf16 refuses to start (CK_E_BACKEND)
                                 unless oneDNN runs every bf16 linear natively (AMX or
                                 AVX512-BF16) and the self-check passes */
    const ck_compiled_circuit *compiled; /* a loaded generated library (compiled_abi.h)
                                 for this circuit and these options, run instead of the steps;
                                 NULL: interpret. Init refuses one whose arena, weights or outputs
                                 differ from this circuit's (CK_E_CIRCUIT) */
} ck_executor_options;

/* The default frames planned per token of max_batch_tokens: 8 frames (200 ms) a phoneme, about
 * three times Kokoro's mean at speed 1 (docs/speech-design.md). */
#define CK_EXECUTOR_FRAMES_PER_TOKEN 8

/* Called after an op that carries an X-Ray checkpoint id: data is that op's output, token-major
 * [tokens, cols] f32 with row stride cols, valid only during the call. */
typedef void (*ck_capture_fn)(void *ctx, const char *checkpoint, const float *data, size_t tokens,
                              size_t cols);

typedef struct ck_executor ck_executor;

/* Binds every weight reference of c to a tensor of w (by checkpoint name, shapes checked: a missing
 * tensor or a shape mismatch is CK_E_WEIGHTS naming both), plans and allocates the arenas, and builds
 * the oneDNN linears (one per distinct weight, so the 12 applications share them).
 * Errors: CK_E_ARG, CK_E_WEIGHTS, CK_E_SIZE, CK_E_MEMORY, CK_E_BACKEND. c and w must outlive it. */
int ck_executor_init(ck_executor **out, const ck_circuit *c, const ck_weights *w,
                     const ck_executor_options *opt, ck_error *err);

/* ck_executor_init with the frame limit of a circuit with frames dims: max_batch_frames F of the
 * largest batch its frame-row buffers are planned for (0: opt->max_batch_tokens times
 * CK_EXECUTOR_FRAMES_PER_TOKEN; ignored without frames dims). A batch whose durations sum to more
 * fails CK_E_SIZE, naming the sequence, before any frame-rate op runs. */
int ck_executor_init_frames(ck_executor **out, const ck_circuit *c, const ck_weights *w,
                            const ck_executor_options *opt, size_t max_batch_frames,
                            ck_error *err);

/* The frames F the next runs' batches may hold (until set again), at most the plan's
 * (ck_executor_plan_max_frames); 0: the plan's (the default). A run whose durations sum to more
 * fails CK_E_SIZE after the duration op, before any frame-rate op runs, naming the sequence: a
 * caller splits the batch and runs it again (ck_model_speak). Lets a caller keep a batch's frame
 * rows, and so the arena pages it touches, under a budget without planning a smaller arena.
 * Errors: CK_E_ARG (null ex), CK_E_RANGE (above the plan's max_frames; 0 without frames dims). */
int ck_executor_set_max_frames(ck_executor *ex, size_t max_frames, ck_error *err);

/* The plan's max_frames: F of the largest batch the frame-row buffers are planned for
 * (ck_executor_init_frames); 0 for a circuit without frames dims or a null ex. */
size_t ck_executor_plan_max_frames(const ck_executor *ex);

/* The per-sequence inputs of the next runs (until set again): style [rows, cols] (row s for the
 * batch's sequence s; Kokoro: the voice row's predictor half, 128 wide) and speed [rows] or NULL,
 * caller-owned, read by concat_style and ada_layer_norm steps (a generated library gets them
 * each run through its set_inputs, compiled_abi.h, with the noise and the frames machinery). style NULL (rows 0) clears them; a step that needs them then fails CK_E_ARG.
 * A run of more than `rows` sequences fails CK_E_ARG. Values are checked by the kernels.
 * Errors: CK_E_ARG (ex null, style without rows or cols, speed without style). */
int ck_executor_set_sequence_inputs(ck_executor *ex, const float *style, size_t rows, size_t cols,
                                    const float *speed, ck_error *err);

/* Durations to use instead of the duration op's (the X-Ray path: "durations forced downstream of
 * the duration head", since a float difference at x.5 flips a rounding): durations[count] int32,
 * one per token of the next runs' packed batches (count must equal their tokens), each >= 1;
 * caller-owned, read by the runs until set again. The duration op still runs; its i32 output is
 * then overwritten with these before the frame offsets are taken, so the circuit's durations
 * output shows them. NULL (count 0) clears them. A run whose tokens differ from count fails
 * CK_E_ARG; a value below 1 fails CK_E_RANGE (both before any frame-rate op runs).
 * Errors: CK_E_ARG (null ex, durations without count or count without durations). */
int ck_executor_set_durations(ck_executor *ex, const int32_t *durations, size_t count,
                              ck_error *err);

/* After a successful interpreted run of a circuit with a duration op: the durations that op
 * computed, int32 [*count] (the batch's T tokens), as they were before forced durations
 * (ck_executor_set_durations) replaced them: X-Ray compares these with the capture's pred_dur while
 * the stages downstream run on the forced ones. Valid until the next run or free. NULL when the
 * last run failed, ran a generated library, or the circuit has no duration op. count may be NULL. */
const int32_t *ck_executor_predicted_durations(const ck_executor *ex, size_t *count);

/* The generator's source noise of the next runs (until set again): counter noise
 * (ck_noise_normal_f32) keyed by seed and, for the batch's sequence s, line[s] and chunk[s] (either
 * NULL: 0 for every sequence), so a sequence's noise is the same bits alone or in any batch and at
 * any thread count, times noise_scale (Kokoro 1; 0 removes it). Clears an explicit noise input.
 * The default before any call: seed 0, keys 0, scale 1. A run of more than n_seqs sequences with
 * line or chunk set fails CK_E_ARG. Arrays caller-owned, read by the runs.
 * Errors: CK_E_ARG (ex null, line or chunk without n_seqs, a line above 2^32 - 1: the counter's
 * line word is 32 bits), CK_E_RANGE (noise_scale negative or not finite). */
int ck_executor_set_noise(ck_executor *ex, uint64_t seed, const uint64_t *line, const uint32_t *chunk,
                          size_t n_seqs, float noise_scale, ck_error *err);

/* An explicit source noise tensor for the next runs instead of the counter's (parity: Kokoro's
 * randn_like as the capture records it): noise [rows, 9] f32, N(0,1) values, the packed batch's
 * samples with each sequence's 600 x frames rows back to back (ck_executor_row_offsets of the
 * circuit's samples dim gives them), times noise_scale. A run whose samples differ from rows fails
 * CK_E_SIZE when the harmonic source runs. NULL (rows 0) returns to the counter noise.
 * Errors: CK_E_ARG (ex null, noise without rows or rows without noise), CK_E_RANGE (noise_scale
 * negative or not finite). */
int ck_executor_set_noise_input(ck_executor *ex, const float *noise, size_t rows, float noise_scale,
                                ck_error *err);

/* After a successful run of a circuit with frames dims: the per-sequence row offsets of the rows
 * of `frames` (ck_buffer frames: 0 tokens, else the code K + CK_FRAMES_ADD_UNIT B of a
 * "frames*K+B" dim, K f + B rows for a sequence of f frames): offsets[S + 1], sequence s owning
 * rows [offsets[s], offsets[s + 1]) (K times its durations' sum for frames), valid until the next
 * run or free; *n_seqs (may be NULL) gets S. NULL when the last run failed or the circuit has no
 * such rows. */
const size_t *ck_executor_row_offsets(const ck_executor *ex, size_t frames, size_t *n_seqs);

/* After a successful run: the rows [*rows, cols] of any buffer with role output (durations, f0,
 * n, asr, features, ...) in the arena, no copy, their per-sequence offsets by
 * ck_executor_row_offsets(buffer's frames); valid until the next run or free. An i32 buffer's
 * elements are int32 bits. NULL when the last run failed or buffer is not an output. rows may be
 * NULL. */
const void *ck_executor_output_rows(const ck_executor *ex, int buffer, size_t *rows);

/* (An i32 output buffer, the circuit's "durations", is copied into out as it is: out's elements
 * then hold int32 bits, 4 bytes each, and the caller reads them as int32_t.) */
/* Runs one packed batch: ids[offsets[S]] holds S sequences back to back, each [0, ..., 0] as the
 * reader makes them; offsets[S+1] ascending, offsets[0] = 0. Copies the rows of `output_buffer`
 * (the circuit's features or hidden buffer; a frame-row output (f0, n, asr) gives its F or 2F
 * rows, known only once the duration op has run, and out_count is checked then, still before out
 * is written) into out[rows, cols] (row stride cols); out may be NULL (out_count ignored): the rows then stay in the arena for ck_executor_rows.
 * capture (may be NULL) sees every checkpoint. Checks ids (CK_E_RANGE), lengths and capacity
 * (CK_E_SIZE) before any op runs, and the output rows for NaN/Inf (CK_E_NONFINITE) before copying
 * them; on error out is untouched. The OpenMP thread count is the executor's during the run and the
 * caller's again when it returns, whatever the outcome. */
int ck_executor_run(ck_executor *ex, const int32_t *ids, const size_t *offsets, size_t n_seqs,
                    int output_buffer, float *out, size_t out_count, ck_capture_fn capture,
                    void *capture_ctx, ck_error *err);

/* The rows [*tokens, cols] f32 of `buffer` (*tokens: its rows, frames for a frame-row buffer) that
 * the last successful ck_executor_run checked as its output_buffer, in the arena (no copy); valid until the next run or free. NULL when the last run
 * failed or named another buffer. tokens may be NULL. */
const float *ck_executor_rows(const ck_executor *ex, int buffer, size_t *tokens);

/* 1 when running batches reads t's values: t is bound to a weight that a non-linear op uses (the
 * embedding tables, LayerNorm gamma and beta). 0 when only linears use t (init copied it into
 * oneDNN's layout, ck_linear_init) and when the circuit does not use t at all: the caller may then
 * release it (ck_weights_release) to keep one copy of the weights in memory. */
int ck_executor_reads_weight(const ck_executor *ex, const ck_tensor *t);

/* Bytes of the activation arena (every planned buffer of one batch of max_batch_tokens) and of
 * each worker's scratch arena (*scratch, may be NULL), as allocated by init. */
size_t ck_executor_arena_bytes(const ck_executor *ex, size_t *scratch);

/* Columns of a buffer (features 512, hidden 768). */
size_t ck_executor_cols(const ck_executor *ex, int buffer);

/* The dtype ops of `kind` compute in under ex's precision (its first step's): the linears' (f32
 * or bf16); the attention heads' (bf16 on AMX in bf16 precision where the CPU has it, else f32);
 * f32 for the embedding, LayerNorm and gelu_new (docs/precision.md says why). Every circuit
 * buffer is f32; a bf16 program adds bf16 copies that LayerNorms write beside their rows and that
 * some linears and AMX heads read or write instead of them (ck_step in_copy, out_copy). */
ck_dtype ck_executor_op_dtype(const ck_executor *ex, ck_op_kind kind);

/* Seconds (ck_executor_op_seconds) of the op kinds whose row counts them as op_class; OTHER also
 * has the rest of each run. ck_model_op_seconds. */
double ck_executor_class_seconds(const ck_executor *ex, ck_op_class op_class);
/* Floating-point operations (a multiply-add is 2) of the op kinds whose row counts them as
 * op_class, over every interpreted run since init or the last ck_executor_reset_op_seconds: the
 * table's flops column times the rows each step wrote. 0 for a generated library's runs and for
 * NULL. ck_model_op_flops. */
double ck_executor_class_flops(const ck_executor *ex, ck_op_class op_class);

/* "linear=bf16 attention=f32 layer_norm=f32 gelu_new=f32": NAME=ck_executor_op_dtype for each kind
 * whose row has a dispatch_name, in kind order, then "+DTYPE" for each other dtype a step of that
 * kind computes in (an int8 program: "linear=bf16+i8"); for a program with a duration op (speech)
 * then "; speech token_side=f32 conv1d=bf16 conv_transpose=bf16 lstm_input=bf16
 * lstm_recurrence=f32 other=f32": the dtypes of its steps per class, the token side being every
 * step up to the duration op. Into buf[cap] (NUL-terminated, truncated). */
void ck_executor_dispatch_dtypes(const ck_executor *ex, char *buf, size_t cap);

/* Wall seconds ex spent running ops of `kind` (a linear fused with its gelu_new counts as linear)
 * since init or the last ck_executor_reset_op_seconds; kind CK_OP_KIND_COUNT: the rest of each run
 * (inputs, the finite check of the output, the copy-out; with opt.compiled, the generated
 * library's calls less the steps it timed per kind). 0 for other kinds. */
double ck_executor_op_seconds(const ck_executor *ex, ck_op_kind kind);
void ck_executor_reset_op_seconds(ck_executor *ex);

/* The distinct oneDNN implementation strings of ex's linears, in first-use order, joined by ", "
 * into buf (NUL-terminated, truncated to cap > 0). */
void ck_executor_linear_impls(const ck_executor *ex, char *buf, size_t cap);

/* Releases everything init built; accepts NULL. */
void ck_executor_free(ck_executor *ex);

#endif
