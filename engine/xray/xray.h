/* xray.h - X-Ray parity: checkpoint-by-checkpoint comparison of a candidate capture against a pinned
 * oracle capture (metrics, profile budgets, pass/fail/NOT_TESTED, JSON report, the text table), the
 * fixture-vs-manifest check, and parity runs of the oracle's cases. Never changes a run's numbers.
 *
 * Capture format (both sides; tools/capture_kokoro.py writes it, ck_xray_session_run too), per case:
 *   <case>.offsets I64 [S+1]  sequence boundaries in the packed token axis, offsets[S] = T
 *   <case>.rows    I64 [R]    packed token indices whose rows are stored, ascending
 *   <case>.ids     I32 [T]    packed ids, each sequence [0, *phoneme_ids, 0]
 *   <case>.<checkpoint id> F32 [R, cols]  token-major rows of that checkpoint, axes [token, channel]
 * Only the stored rows are compared; the report says how many of the case's tokens that is.
 *
 * Legend: T tokens of a case, S sequences, R stored rows, cols the checkpoint's channels. */
#ifndef CK_XRAY_H
#define CK_XRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "circuit.h"
#include "ck_error.h"
#include "ck_log.h"
#include "codegen.h"
#include "executor.h"
#include "safetensors.h"
#include "weights.h"

#define CK_XRAY_CASE_MAX 64

typedef enum { CK_XRAY_PASS = 0, CK_XRAY_FAIL = 1, CK_XRAY_NOT_TESTED = 2 } ck_xray_status;

/* Budget of one checkpoint: pass iff all values finite, cosine >= cosine_min, rmse <= rmse_max,
 * rel_rmse <= rel_rmse_max and max_abs <= max_abs_max. */
typedef struct {
    double cosine_min, rmse_max, rel_rmse_max, max_abs_max;
} ck_xray_budget;

typedef struct {
    char checkpoint[CK_CHECKPOINT_MAX];
    ck_xray_budget budget;
} ck_xray_override;

/* Thresholds of one compute dtype (the candidate's: F32 for parity, BF16 for a bf16 run; the
 * oracle is always the FP32 capture): the default and per-checkpoint overrides. */
typedef struct {
    ck_dtype dtype;
    ck_xray_budget base;
    ck_xray_override *overrides; /* [n_overrides], owned */
    size_t n_overrides;
} ck_xray_profile;

/* One (case, checkpoint) row of the report. Errors are in double. worst_* locate max_abs:
 * sequence index in the case, token position inside that sequence, channel. */
typedef struct {
    char case_name[CK_XRAY_CASE_MAX];
    char checkpoint[CK_CHECKPOINT_MAX];
    ck_xray_status status;
    size_t rows, tokens, cols;    /* compared rows of the case's T tokens, channels */
    double cosine, rmse, rel_rmse, max_abs;
    size_t worst_sequence, worst_token, worst_channel;
    int candidate_finite, oracle_finite;
    int signal_to_error;          /* 1: audio; the table and report add its signal-to-error ratio,
                                     10 log10(sum o^2 / sum (c - o)^2) = -20 log10(rel_rmse) dB */
    size_t channel_stride;        /* k > 1: the oracle stores channels 0, k, 2k, ... only; cols
                                     counts those compared, worst_channel is ours (a multiple of
                                     k), and the table and report say so (0 or 1: every channel) */
    ck_xray_budget budget;
    char reason[160];             /* what failed, or why NOT_TESTED; "" on pass */
} ck_xray_result;

/* Everything the report states about who computed what. Strings are borrowed. */
typedef struct {
    const char *engine_version, *build_flags; /* CK_VERSION, compiler and flags */
    const char *weights_identity;
    const char *weights_sha256;     /* hex SHA-256 over every tensor's SHA-256 in load order */
    const char *candidate_path, *oracle_path;
    const char *oracle_manifest_json; /* the manifest's "oracle" object as JSON text, or NULL */
    int parity;                     /* 1 when the candidate was computed in parity mode here */
    const char *backend;            /* "generated" or "interpreted" */
    const char *library_path, *library_sha256, *library_key; /* generated: the library; else "" */
} ck_xray_identity;

typedef struct {
    ck_xray_result *items; /* [n], owned */
    size_t n, cap;
    size_t passed, failed, not_tested;
} ck_xray_report;

/* Compiler and the flags this build was made with ("compiler <version>, optimized, NDEBUG, ASan"). */
const char *ck_xray_build_flags(void);

/* The default FP32 contract (docs/parity.md): cosine >= 0.99999, RMSE, relative RMSE, max abs <= 2e-5. */
ck_xray_budget ck_xray_default_budget(void);

/* Loads the budgets of `dtype` (CK_DTYPE_F32, CK_DTYPE_BF16 or CK_DTYPE_I8) from a profile: a JSON object
 * {"dtypes": {"F32": B, "BF16": B}, "checkpoints": {"id": B | {"F32": B, "BF16": B}, ...}} with
 * B = {"cosine_min", "rmse", "rel_rmse", "max_abs"} (numbers; a missing key keeps the default; a bare
 * B under "checkpoints" is an F32 budget), or a capture manifest holding that object under
 * "thresholds". Defaults, and the whole profile when path is NULL: for F32 the FP32 contract
 * (ck_xray_default_budget); for BF16 the published bf16 budget
 * (circuits/kokoro_phoneme_encoder.bf16_budget.json, embedded; docs/precision.md); for I8 (key
 * "I8") the published int8 budget (circuits/kokoro_phoneme_encoder.int8_budget.json, embedded).
 * Errors: CK_E_IO, CK_E_FORMAT (bad JSON, a non-number; message names the file and key), CK_E_MEMORY,
 * CK_E_ARG (another dtype). */
int ck_xray_profile_load(ck_xray_profile *p, const char *path, ck_dtype dtype, ck_error *err);

/* The FP32 budgets of the speech capture's stages (circuits/kokoro_speech.xray_budget.json, embedded;
 * docs/parity.md "Speech"), then a profile file's on top (path may be NULL): keys are stage names
 * ("d_en", "fed.gen.har", "audio") or "<case>.<stage>" for one case. Errors: those of
 * ck_xray_profile_load. */
int ck_xray_profile_load_speech(ck_xray_profile *p, const char *path, ck_error *err);

/* The FP32 budgets of the token-side edge capture's stages
 * (circuits/kokoro_token_edges.xray_budget.json, embedded; docs/parity.md "Speech X-Ray"), then a
 * profile file's on top (path may be NULL), keyed as ck_xray_profile_load_speech's. Errors: those
 * of ck_xray_profile_load. */
int ck_xray_profile_load_token_edges(ck_xray_profile *p, const char *path, ck_error *err);

/* Budget of `checkpoint`: its override, else the dtype's default. */
ck_xray_budget ck_xray_profile_budget(const ck_xray_profile *p, const char *checkpoint);

/* Frees the overrides; accepts a zeroed profile. */
void ck_xray_profile_free(ck_xray_profile *p);

/* Compares candidate vs oracle, both [rows, cols] f32, and fills r's metrics and status under b.
 * cosine = <c,o> / (|c| |o|) (1 when both are zero); rmse = sqrt(mean (c - o)^2); rel_rmse =
 * rmse / sqrt(mean o^2); max_abs with the first worst element. row_seq[r] / row_token[r] locate stored
 * row r. Any non-finite value fails (max_abs and rmse become infinite). r->case_name and checkpoint are
 * left to the caller. Errors: CK_E_ARG (null pointer, rows or cols 0). */
int ck_xray_compare(const float *candidate, const float *oracle, size_t rows, size_t cols,
                    const size_t *row_seq, const size_t *row_token, const ck_xray_budget *b,
                    ck_xray_result *r);

/* Appends a copy of r to the report and counts its status. Errors: CK_E_MEMORY. */
int ck_xray_report_add(ck_xray_report *rep, const ck_xray_result *r, ck_error *err);

/* Appends a NOT_TESTED row with `reason`. Errors: CK_E_MEMORY. */
int ck_xray_report_not_tested(ck_xray_report *rep, const char *case_name, const char *checkpoint,
                              const char *reason, ck_error *err);

/* Frees the rows; accepts a zeroed report. */
void ck_xray_report_free(ck_xray_report *rep);

/* CK_OK when no compared checkpoint failed and at least one passed, else CK_E_PARITY. */
int ck_xray_report_status(const ck_xray_report *rep);

/* Writes the compact table (one line per checkpoint, worst case first among failures) to f. */
void ck_xray_report_print(const ck_xray_report *rep, FILE *f);

/* The same table as one CK_LOG_REPORT message to log (nothing when log is NULL).
 * Errors: CK_E_MEMORY. */
int ck_xray_report_log(const ck_xray_report *rep, ck_log_fn log, void *log_ctx, ck_error *err);

/* Writes the JSON report {"status", "identity", "counts", "checkpoints": [...]} atomically (temp +
 * rename). Errors: CK_E_ARG, CK_E_IO (message names the path), CK_E_MEMORY. */
int ck_xray_report_write(const ck_xray_report *rep, const ck_xray_identity *id, const char *path,
                         ck_error *err);

/* Checks a capture against its manifest before anything reads the capture: SHA-256 of the file bytes
 * must equal manifest "fixture"."sha256". On success *manifest (may be NULL) owns the parsed manifest
 * (cJSON *, free with ck_xray_manifest_free). Errors: CK_E_IO (either file), CK_E_FORMAT (manifest
 * not JSON or without fixture.sha256), CK_E_HASH (bytes differ; message gives both digests). */
int ck_xray_verify_fixture(const char *capture_path, const char *manifest_path, void **manifest,
                           ck_error *err);

/* Frees a manifest from ck_xray_verify_fixture; accepts NULL. */
void ck_xray_manifest_free(void *manifest);

/* "<capture without .safetensors>.manifest.json" into out[cap]. Errors: CK_E_ARG (too long). */
int ck_xray_manifest_path(const char *capture_path, char *out, size_t cap, ck_error *err);

/* Compares every case of `oracle` (cases found by their <case>.rows tensor) with the same case of
 * `candidate`: inputs (ids, offsets, rows) must be equal, else every checkpoint of the case fails.
 * Each id of `checkpoints` (the circuit's, in order) is compared when both sides hold it, else stamped
 * NOT_TESTED with the reason. Errors: CK_E_FORMAT (a case tensor of the wrong dtype or shape; message
 * names the file and tensor), CK_E_MEMORY. Failing checkpoints are not an error: see the report. */
int ck_xray_compare_files(const ck_st_file *candidate, const ck_st_file *oracle,
                          const char *const *checkpoints, size_t n_checkpoints,
                          const ck_xray_profile *profile, ck_xray_report *rep, ck_error *err);

/* Every X-Ray checkpoint id of c in run order (op checkpoints, then aliases) into a new array of
 * borrowed strings (free the array only). Errors: CK_E_MEMORY. */
int ck_xray_circuit_checkpoints(const ck_circuit *c, const char ***ids, size_t *n, ck_error *err);

/* Options of a parity run of an oracle's cases (ck_xray_session_open). The model it runs on (circuit,
 * weights, compiled library) is the caller's: the api room opens it like every other model. */
typedef struct {
    const char *oracle;      /* capture path; its manifest is verified first when it exists */
    const char *manifest;    /* NULL: derived with ck_xray_manifest_path */
    const char *profile;     /* NULL: the manifest's thresholds, else the default contract */
    const char *report;      /* JSON report path, NULL for none */
    const char *capture_out; /* write the candidate capture here, NULL for none */
    const char *capture_ids; /* "all" (or NULL) or comma-separated checkpoint ids to capture */
    unsigned long long seed; /* synthetic seed when the manifest gives none */
    ck_log_fn log;           /* the parity note (INFO) and the table (REPORT); NULL: silent */
    void *log_ctx;
    ck_dtype precision;      /* CK_DTYPE_F32 (0): the parity run; CK_DTYPE_BF16: the same cases
                                on one thread with bf16 linears, against the FP32 oracle under the
                                bf16 budget (docs/precision.md); CK_DTYPE_I8: the same with int8
                                linears under the int8 budget */
} ck_xray_run_options;

/* A parity run in two steps around the model it runs on: open (oracle and cases), then run. */
typedef struct ck_xray_session ck_xray_session;

/* What a parity run computes with, lent by the caller for ck_xray_session_run: a model set up with
 * one worker and unfused kernels, planned for at least the longest case (ck_xray_session_longest),
 * its weights all kept (they are hashed before and after). */
typedef struct {
    const ck_circuit *circuit;
    ck_weights *weights;
    ck_executor *executor;
    const ck_compiled_library *library; /* its table NULL when interpreting */
} ck_xray_engine;

/* Logs the parity note, verifies the oracle against its manifest (before reading it), loads its
 * profile and every case. opt must outlive the session. Errors: CK_E_ARG (no oracle), CK_E_HASH,
 * CK_E_IO, CK_E_FORMAT, CK_E_MEMORY; on error *out is NULL. */
int ck_xray_session_open(ck_xray_session **out, const ck_xray_run_options *opt, ck_error *err);

/* 1 when the session's oracle is a speech capture (tests/fixtures/speech: <case>.pred_dur tensors):
 * its run needs the speech circuit (circuits/kokoro_speech.json), interpreted in fp32. */
int ck_xray_session_is_speech(const ck_xray_session *x);

/* 1 when the session's oracle is a token-side speech capture (tests/fixtures/speech/
 * kokoro_token_edges.safetensors: no case holds noise; token side, alignment and F0/N only): its
 * run needs no decoder or generator, so the prosody circuit (circuits/kokoro_prosody.json). */
int ck_xray_session_is_token_side(const ck_xray_session *x);

/* Tokens of the session's longest case: the model's batch must hold them. */
size_t ck_xray_session_longest(const ck_xray_session *x);

/* Frames of the session's longest speech case (the sum of its pred_dur): the model's batch must
 * hold them; 0 for an encoder capture. */
size_t ck_xray_session_frames(const ck_xray_session *x);

/* Seed of the synthetic weights: the manifest's "weights"."seed" when it is an exact integer in
 * 0..2^53, else opt->seed. */
uint64_t ck_xray_session_seed(const ck_xray_session *x);

/* Runs each case as one packed batch on the engine (ONE thread, scheduler and oneDNN), captures the
 * stored rows of every checkpoint, hashes every weight tensor before and after (CK_E_PARITY naming
 * the tensor if a byte changed), compares, prints the table and writes the report and capture.
 * A speech capture's cases run each alone instead, their stages compared as ck_xray_speech_run
 * says (xray_internal.h); no capture is written (CK_E_ARG when capture_out is set), the engine
 * must interpret (CK_E_ARG for a generated library) in fp32 (CK_E_ARG otherwise).
 * Returns CK_OK when every compared checkpoint passed, CK_E_PARITY when one failed, or the first
 * error (err set). */
int ck_xray_session_run(ck_xray_session *x, const ck_xray_engine *engine, ck_error *err);

/* Frees the session (not the engine it was lent); accepts NULL. */
void ck_xray_session_free(ck_xray_session *x);

/* SHA-256 of every tensor of w into sha[n][32] (n = ck_weights_count) and their combined digest
 * (SHA-256 over the n digests) as hex. Errors: CK_E_ARG, CK_E_BACKEND, CK_E_MEMORY. */
int ck_xray_weights_digest(ck_weights *w, unsigned char (**sha)[32], char hex[65], ck_error *err);

/* CK_OK when every tensor of w still hashes to before[i], else CK_E_PARITY naming the first tensor
 * that changed. Errors also: those of ck_weights_hash. */
int ck_xray_weights_unchanged(ck_weights *w, const unsigned char (*before)[32], ck_error *err);

#endif
