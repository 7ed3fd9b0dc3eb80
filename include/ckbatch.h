/* ckbatch.h - the public API of ckbatch, the batch inference engine for the phoneme encoder of
 * Kokoro-82M: the only header a program that embeds ckbatch includes (C11, no other header of ours).
 *
 * Thread safety. A ck_model is used by one thread at a time: ck_model_encode_ids,
 * ck_model_encode_lines and ck_run_corpus on the same model must not overlap (each call runs its own
 * OpenMP team of params.threads workers inside). Different models may be used from different threads
 * at once. ck_version, ck_status_name, the *_default_params functions and ck_error_clear are safe
 * from any thread; ck_model_tokenize is safe on one model from many threads for the phonemes and ids
 * formats and the text format (g2p "espeak" serialises on espeak-ng's one global lock; "misaki"
 * shares read-only lexicons, loaded once per process, and takes that lock only for the rare words
 * the lexicons lack).
 *
 * Process-wide state. The library never writes to stdout or stderr (everything it says goes through
 * the log and progress callbacks), never calls exit, installs no signal handler, leaves the
 * allocator policy and the floating-point environment alone, and gives the caller back its OpenMP
 * thread count when each call returns.
 *
 * Errors. Every function that can fail returns CK_OK (0) or a negative CK_E_* code and, when `err`
 * is not NULL, fills it with that code and one message naming the file, line and field
 * ("quotes.txt:12: column 7: symbol U+0078 'x' not in vocab"). The first error wins; a function
 * called with an err already holding one keeps that message.
 *
 * Shapes and units. Tensors are float32, token-major: a packed batch of S sequences is T = sum of
 * their lengths rows, each `cols` floats (ck_model_cols: 512 for the features, 768 for the last
 * hidden state). Token ids are Kokoro's (int32): a model input sequence is [0, id..., 0], the zeros
 * being the boundary tokens Kokoro's KModel adds (kokoro/model.py, forward_with_tokens), at most
 * ck_model_max_tokens (512) long. */
#ifndef CKBATCH_H
#define CKBATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CK_BUILDING_LIBRARY) && defined(__GNUC__)
#define CK_API __attribute__((visibility("default")))
#else
#define CK_API
#endif

#define CKBATCH_VERSION_MAJOR 0
#define CKBATCH_VERSION_MINOR 1
#define CKBATCH_VERSION_PATCH 0

/* ---- status and errors ---- */

/* The one status list of ckbatch: 0 or a negative code. Only grows at the end. */
enum {
    CK_OK = 0,
    CK_E_ARG = -1,        /* null pointer, aliasing buffers, bad scalar or option value */
    CK_E_SIZE = -2,       /* geometry or capacity: count below span, overflow, arena too small,
                             a sequence longer than the model takes */
    CK_E_NONFINITE = -3,  /* NaN or Inf in an input, weight or result */
    CK_E_RANGE = -4,      /* id or index out of range */
    CK_E_IO = -5,         /* open, read, write, fsync or rename failed */
    CK_E_FORMAT = -6,     /* malformed file: safetensors, JSON, pickle, ZIP */
    CK_E_CIRCUIT = -7,    /* circuit rejected by validation */
    CK_E_MEMORY = -8,     /* allocation failed */
    CK_E_HASH = -9,       /* SHA-256 mismatch against a manifest */
    CK_E_PARITY = -10,    /* X-Ray comparison failed, or a weight changed during a parity run */
    CK_E_INPUT = -11,     /* bad corpus line: invalid UTF-8, unknown symbol (strict), bad ids */
    CK_E_BACKEND = -12,   /* oneDNN or espeak-ng reported an error */
    CK_E_WEIGHTS = -13,   /* missing weight, shape or dtype mismatch against the circuit */
    CK_E_CANCELLED = -14, /* the caller's cancel callback (ck_model_params.cancel) stopped the call
                             between two batches */
    CK_E_STATE = -15      /* resume refused: the output's progress record belongs to another run
                             (a differing input, option, weights, rank count or plan; the message
                             names the field). Start again without resume, or resume that run */
};

typedef struct {
    int code;           /* CK_OK or a CK_E_* code */
    char message[256];  /* "file:line: field: got X, expected Y"; empty when code is CK_OK */
} ck_error;

/* Short stable name of a status code ("CK_OK", "CK_E_SIZE", ...); "CK_E_UNKNOWN" for others. */
CK_API const char *ck_status_name(int code);

/* Clears err (may be NULL) to CK_OK with an empty message. */
CK_API void ck_error_clear(ck_error *err);

/* The library's version, "0.1.0" (the CKBATCH_VERSION_* of the build). */
CK_API const char *ck_version(void);

/* Which native kernels run: "avx512" (the CPU has AVX-512F and the environment variable
 * CK_MAX_CPU_ISA is not "portable") or "portable" (baseline x86-64 C). Chosen once, at the first
 * call of any kernel; both give the same bits (docs/isa.md). oneDNN picks its own ISA
 * (ONEDNN_MAX_CPU_ISA). */
CK_API const char *ck_kernels_isa(void);

/* The CPUs this process may run on (its affinity mask: taskset, cpuset, Slurm binding), >= 1: what
 * ck_model_params.threads = 0 resolves to. */
CK_API int ck_available_cpus(void);

/* ---- callbacks ---- */

typedef enum {
    CK_LOG_INFO = 0,     /* what a run holds and does: weights, memory, parity, resume */
    CK_LOG_WARNING = 1,  /* a dropped symbol, an undefined id kept, a skipped line */
    CK_LOG_REPORT = 2    /* a multi-line report meant to be shown as is (the X-Ray table): every
                            line ends in '\n' */
} ck_log_level;

/* One message (INFO and WARNING: one line without its newline), valid during the call only.
 * Errors are not logged: they come back in ck_error. */
typedef void (*ck_log_fn)(void *ctx, ck_log_level level, const char *message);

typedef struct {
    unsigned long long input_bytes; /* size of the input file, 0 when unknown (a stream) */
    unsigned long long bytes_done;  /* input bytes whose sequences are written (an estimate inside
                                       a window of batches); input_bytes in the final call */
    unsigned long long bytes_read;  /* input bytes the reader has consumed */
    size_t lines;                   /* lines read so far */
    size_t tokens;                  /* tokens written so far, resumed ones included */
    double seconds;                 /* since the run started */
    double tokens_per_second;       /* this run's tokens (not resumed ones) per second */
    double eta_seconds;             /* estimated seconds left, < 0 when unknown */
    int final;                      /* 1 in the last call of a run (after the last batch) */
} ck_progress;

/* Called at most once per progress_interval seconds while a corpus runs (at a line read, a batch
 * done, or an X-Ray checkpoint inside a batch, so a long batch still moves it), and once with
 * final = 1 when the corpus has been read to its end or the run stopped on an error. */
typedef void (*ck_progress_fn)(void *ctx, const ck_progress *progress);

/* Asked on the calling thread (never from a compute worker, never inside a parallel region) before
 * each packed batch of ck_model_encode_ids, ck_model_encode_lines and ck_run_corpus: nonzero stops
 * the call there with CK_E_CANCELLED, so it returns within one batch's time (at most
 * max_batch_tokens tokens). What is left is what any error after that batch leaves (see each
 * function); the model stays usable. A binding uses it to honour Ctrl-C. */
typedef int (*ck_cancel_fn)(void *ctx);

/* ---- the model ---- */

typedef struct ck_model ck_model;

typedef enum {
    CK_INPUT_PHONEMES = 0, /* Kokoro phoneme strings (one symbol per code point) */
    CK_INPUT_IDS = 1,      /* JSON arrays of token ids without the boundary zeros: "[50, 157, 43]" */
    CK_INPUT_TEXT = 2      /* English text through a G2P: misaki (default) or espeak-ng */
} ck_input_format;

typedef enum {
    CK_LAYER_FEATURES = 0, /* bert_encoder output, [T, 512]: what Kokoro's predictor reads */
    CK_LAYER_HIDDEN = 1,   /* the ALBERT last hidden state, [T, 768] */
    CK_LAYER_PROSODY = 2   /* the prosody circuit's durations (circuits/kokoro_prosody_tokens.json,
                              ck_prosody_circuit_path): int32 frames per token [T], BOS and EOS
                              included, from the per-sequence voice style and speed of the run
                              (docs/prosody.md). Needs a circuit with a "durations" output */
} ck_layer;

/* The compute precision of a model (docs/precision.md). Only grows at the end. */
typedef enum {
    CK_PRECISION_FP32 = 0, /* everything f32 (the default; what parity runs) */
    CK_PRECISION_BF16 = 1, /* the linears take bf16 inputs and weights and accumulate in f32 (oneDNN
                              on AMX or AVX512-BF16); embedding, attention, LayerNorm, GELU and the
                              residual stream stay f32. Load refuses it (CK_E_BACKEND) on a CPU
                              without native bf16 and when the start-up self-check fails */
    CK_PRECISION_INT8 = 2  /* the linears in int8: weights s8 per output channel (quantized once at
                              load), inputs u8 per row with the row's own zero point (quantized as
                              each tile is staged), s32 accumulation on oneDNN's int8 matmul
                              (AVX512-VNNI, AVX-VNNI or AMX-INT8), scales, bias and GELU in f32;
                              attention, LayerNorm, GELU and the residual stream stay f32. Load
                              refuses it (CK_E_BACKEND) on a CPU without an int8 dot product
                              instruction and when the start-up self-check fails
                              (docs/precision.md) */
} ck_precision;

typedef struct {
    const char *weights;          /* Kokoro .pth or .safetensors path; NULL: synthetic demo
                                     weights (NOT Kokoro's) from `seed` */
    const char *weights_manifest; /* `ckbatch weights hash` JSON every tensor is verified against
                                     before use, or NULL */
    const char *circuit;          /* circuit JSON path; NULL: the embedded Kokoro phoneme encoder */
    const char *config;           /* Kokoro config.json path: its vocab replaces the embedded
                                     Kokoro-82M v1.0 one and its dims are checked against the
                                     weights (CK_E_WEIGHTS naming the field); NULL: none */
    uint64_t seed;                /* synthetic weights seed (default 20261129) */
    int threads;                  /* compute workers (scheduler and oneDNN); 0 (default): the CPUs
                                     this process may run on (its affinity mask) */
    size_t max_batch_tokens;      /* tokens per packed batch, >= ck_model_max_tokens (default
                                     2048); the arenas are planned for it */
    int parity;                   /* 1: one worker whatever `threads` says, unfused kernels (the
                                     X-Ray contract); the weights are kept to be hashed by runs */
    ck_log_fn log;                /* model messages (weights identity, memory); NULL: silent */
    void *log_ctx;
    ck_cancel_fn cancel;          /* asked before every batch of every call on this model;
                                     NULL (default): never cancelled */
    void *cancel_ctx;
    ck_precision precision;       /* CK_PRECISION_FP32 (default), CK_PRECISION_BF16 or
                                     CK_PRECISION_INT8; parity runs only fp32 (CK_E_ARG
                                     otherwise) */
    const char *compiled;         /* a library `ckbatch compile` (ck_compile) built for this
                                     circuit, precision, parity and max_batch_tokens, run instead
                                     of the interpreter with the same results; NULL (default): the
                                     interpreter. Its SHA-256 must match its manifest (PATH.json)
                                     before it is loaded (CK_E_HASH) and its provenance (circuit
                                     hash, emitter version, key, precision, parity, tokens) what
                                     this model asks for after (CK_E_CIRCUIT) */
} ck_model_params;

/* The defaults above: embedded circuit, demo weights, seed 20261129, threads 0, 2048 tokens. */
CK_API ck_model_params ck_model_default_params(void);

/* ---- generated C ---- */

typedef struct {
    const char *circuit;      /* circuit JSON; NULL: the embedded Kokoro phoneme encoder */
    ck_precision precision;   /* the linears' dtype, as ck_model_params.precision */
    int parity;               /* 1: unfused, every op its own step (for a parity model) */
    size_t max_batch_tokens;  /* the arena is planned for it (default 2048, the model's) */
    const char *out_dir;      /* an existing directory: DIR/NAME.c, DIR/NAME.so, DIR/NAME.so.json */
    const char *cc;           /* the C compiler; NULL (default): $CC, else the one that built
                                 ckbatch (a sanitizer build needs its own) */
    const char *extra_flags;  /* one more compiler flag after the recipe (part of the key), or
                                 NULL (default) */
} ck_compile_params;

typedef struct {
    char source[512];         /* DIR/NAME.c, the generated translation unit */
    char library[512];        /* DIR/NAME.so */
    char manifest[512];       /* DIR/NAME.so.json: sha256, key, circuit hash, compiler */
    char key[65];             /* hex cache key */
    char sha256[65];          /* hex SHA-256 of the library */
    char circuit_sha256[65];  /* hex SHA-256 of the canonical circuit JSON */
    int cache_hit;            /* 1: the library for this key was already there: no compiler ran */
    char kit[640];            /* where the headers and archives it builds from were found:
                                 "installed DIR", "build tree DIR" or "installed (configured
                                 prefix) DIR" */
} ck_compile_result;

/* The defaults above (out_dir NULL: must be set). */
CK_API ck_compile_params ck_compile_default_params(void);

/* Lowers the circuit, emits it as one C11 translation unit (a bad plan is refused before anything
 * is written: CK_E_SIZE naming the buffer and offsets) and builds the shared library with
 * cc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -fPIC -shared (no fast-math), linking the
 * kernels. Cached by a key over the canonical circuit JSON, the emitter version, the compiler id
 * and version, the flags, the target ISA and the linked library versions: a second compile with
 * the same key runs no compiler. Safe to run concurrently (temporary names, fsync, rename).
 * Errors: CK_E_ARG, CK_E_IO, CK_E_FORMAT, CK_E_CIRCUIT, CK_E_SIZE, CK_E_BACKEND (compiler). */
CK_API int ck_compile(const ck_compile_params *params, ck_compile_result *result, ck_error *err);

/* "interpreted", or "generated" for a model running a compiled library. */
CK_API const char *ck_model_backend(const ck_model *model);

/* The compiled library's path, SHA-256 and cache key; "" for an interpreted model. */
CK_API const char *ck_model_library_path(const ck_model *model);
CK_API const char *ck_model_library_sha256(const ck_model *model);
CK_API const char *ck_model_library_key(const ck_model *model);

/* Loads the config (when given), the circuit and the weights (verified against the manifest when
 * given), binds them and plans the arenas: after it returns nothing of the model is read from disk
 * again. Logs "weights: <identity>" and "memory: ..." at CK_LOG_INFO. Outside parity, the weight
 * tensors only linears read are released once oneDNN holds its copies (one copy in memory).
 * Errors: CK_E_ARG (null, max_batch_tokens below the longest sequence, threads < 0), CK_E_IO,
 * CK_E_FORMAT, CK_E_HASH, CK_E_CIRCUIT, CK_E_WEIGHTS, CK_E_SIZE, CK_E_MEMORY, CK_E_BACKEND. On error
 * *out is NULL. Free with ck_model_free. */
CK_API int ck_model_load(ck_model **out, const ck_model_params *params, ck_error *err);

/* Releases the model; accepts NULL. */
CK_API void ck_model_free(ck_model *model);

/* Columns of one token's row of `layer` (512 features, 768 hidden, 1 prosody: one int32 per
 * token); 0 when the circuit has no such output or model is NULL. */
CK_API size_t ck_model_cols(const ck_model *model, ck_layer layer);

/* Longest model input sequence, boundaries included (the position table's rows, 512). */
CK_API size_t ck_model_max_tokens(const ck_model *model);

/* Rows of the word-embedding table: ids 1..rows-1 are accepted (178 for Kokoro-82M). */
CK_API size_t ck_model_vocab_rows(const ck_model *model);

/* What the model computes in, for output metadata and reports (say what ran, not what was
 * asked): "fp32", "bf16" or "int8" for precision; for dispatch one line
 * "linear=bf16 attention=f32 layer_norm=f32 gelu_new=f32; onednn <version> <impl>[, <impl>...];
 * cpu <features>; kernels <isa>" (int8 models: linear=i8, and "; int8 u8 rows x s8 channels, s32,
 * dot <instruction>" at the end; a speech circuit adds after the op kinds "; speech token_side=f32
 * conv1d=bf16 conv_transpose=bf16 lstm_input=bf16 lstm_recurrence=f32 other=f32", the dtypes per
 * speech class, docs/precision.md "Speech"). Both strings are owned by the model; "" for NULL. */
CK_API const char *ck_model_precision(const ck_model *model);
CK_API const char *ck_model_dispatch(const ck_model *model);

/* Where a model's time goes: wall seconds per op class, summed over every batch since load or the
 * last ck_model_reset_op_seconds (the clock is read around each op of a batch: two reads per op).
 * CK_OP_CLASS_OTHER is the rest of each batch: filling the inputs, the finite check of the output
 * and the copy-out, and any op of none of the classes above (a circuit's op says which class it
 * counts in). A linear fused with its GELU counts as linear. Only grows at the end. */
typedef enum {
    CK_OP_CLASS_EMBEDDING = 0,  /* embedding_three_table_layer_norm */
    CK_OP_CLASS_LINEAR = 1,     /* oneDNN matmuls (with fused GELU) */
    CK_OP_CLASS_ATTENTION = 2,  /* scores, softmax, context per (sequence, head) */
    CK_OP_CLASS_LAYER_NORM = 3, /* residual add + LayerNorm */
    CK_OP_CLASS_GELU = 4,       /* gelu_new when not fused (parity) */
    CK_OP_CLASS_OTHER = 5,
    CK_OP_CLASS_CONVOLUTION = 6, /* conv1d (im2col + oneDNN matmul), conv_transpose1d (oneDNN
                                    matmul + col2im, and the depthwise k3 s2 upsample): the speech
                                    circuits' convolutions */
    CK_OP_CLASS_LSTM = 7,        /* the BiLSTMs' recurrent steps (their input projections are
                                    linears) */
    CK_OP_CLASS_COUNT
} ck_op_class;

/* "embedding", "linear", "attention", "layer_norm", "gelu_new", "other", "convolution", "lstm";
 * "" outside the enum. */
CK_API const char *ck_op_class_name(ck_op_class op_class);
/* Seconds (see ck_op_class); 0 for NULL or a class outside the enum. */
CK_API double ck_model_op_seconds(const ck_model *model, ck_op_class op_class);
/* Floating-point operations (a multiply-add counts 2) the model's ops of op_class performed over
 * the same span as ck_model_op_seconds, counted from each op's shape and the rows it wrote (the
 * matmuls, the attention products, the convolutions and the LSTM steps; the norms, activations
 * and the rest count 0), so ck_model_op_flops / ck_model_op_seconds is the class's achieved
 * FLOP/s. Interpreted runs only: 0 on a model opened with a generated library, for NULL or a class
 * outside the enum. Reset with ck_model_reset_op_seconds. */
CK_API double ck_model_op_flops(const ck_model *model, ck_op_class op_class);
CK_API void ck_model_reset_op_seconds(ck_model *model);

/* "sha256:<hex> (<file>)" of the loaded weights, or the demo weights' name and seed. */
CK_API const char *ck_model_weights_identity(const ck_model *model);

/* Multiply-adds x 2 per token of a sequence of seq_len tokens through the whole encoder (linears
 * plus attention's QK^T and PV), for throughput reports. */
CK_API double ck_model_flops_per_token(const ck_model *model, size_t seq_len);

/* Encodes S packed model input sequences: ids[offsets[S]] holds them back to back, each
 * [0, id..., 0] (2..ck_model_max_tokens ids), offsets[S + 1] ascending from offsets[0] = 0.
 * Writes out[offsets[S], cols] (cols = ck_model_cols(model, layer), row stride cols), token-major
 * in input order; out_rows is out's capacity in rows. Batches of at most max_batch_tokens run in
 * input order. On an AVX-512 CPU rows are bit-identical whatever the thread count, batch mates
 * and batch size (docs/parity.md, "Invariance"); where oneDNN runs AVX2 matmuls they may differ
 * from a solo run by ~1e-6 (docs/isa.md). Errors: CK_E_ARG (null, unknown layer), CK_E_SIZE (a sequence
 * shorter than 2 or longer than ck_model_max_tokens, out_rows < offsets[S], offsets not
 * ascending), CK_E_RANGE (an id outside 0..ck_model_vocab_rows-1), CK_E_NONFINITE, CK_E_MEMORY,
 * CK_E_BACKEND, CK_E_CANCELLED (the model's cancel callback: the rows of the batches before it are
 * written, the others untouched); out is untouched on a check error before any batch ran. */
CK_API int ck_model_encode_ids(ck_model *model, const int32_t *ids, const size_t *offsets,
                               size_t n_seqs, ck_layer layer, float *out, size_t out_rows,
                               ck_error *err);

/* ---- lines: phonemes, ids or text -> sequences ---- */

typedef struct {
    ck_input_format format;   /* default CK_INPUT_PHONEMES */
    const char *lang;         /* text: "en-us" (default, NULL) or "en-gb" */
    int strict_symbols;       /* 1: a symbol outside the vocab (ids: an id it does not define) is
                                 an error; 0 (default): dropped (ids: kept) and warned */
    ck_log_fn log;            /* warnings (dropped symbols, words sent to espeak-ng); NULL: silent */
    void *log_ctx;
    const char *g2p;          /* text: "misaki" (default, NULL): Kokoro's own English G2P (misaki
                                 0.9.4's lexicons and rules, espeak-ng only for words they lack);
                                 "espeak": espeak-ng on everything (the front end before misaki) */
    const char *lexicon_dir;  /* misaki: a directory holding {us,gb}_{gold,silver}.json (e.g. an
                                 installed misaki's data/); NULL: the copy shipped with ckbatch.
                                 Each file's SHA-256 must be misaki 0.9.4's */
} ck_lines_params;

/* The defaults above. */
CK_API ck_lines_params ck_lines_default_params(void);

/* Sequences made from lines, and (after ck_model_encode_lines) their rows. Every array is malloc'd
 * and owned by the struct; free with ck_sequence_set_free. */
typedef struct {
    size_t n_sequences;
    size_t n_tokens;     /* offsets[n_sequences] */
    int32_t *ids;        /* [n_tokens] model input sequences back to back, each [0, id..., 0] */
    size_t *offsets;     /* [n_sequences + 1] */
    size_t *line;        /* [n_sequences] 0-based index of the line each sequence came from */
    size_t *chunk;       /* [n_sequences] 0-based chunk within its line (lines longer than the
                            model takes are split at punctuation, then spaces) */
    char **phonemes;     /* [n_sequences] the UTF-8 phoneme string of each sequence */
    size_t cols;         /* row width of `rows`; 0 until encoded */
    float *rows;         /* [n_tokens, cols] after ck_model_encode_lines; NULL before */
} ck_sequence_set;

/* Turns n_lines lines (UTF-8, no '\n' inside; edge spaces and tabs trimmed) into sequences with
 * the model's vocabulary and limits. An empty (or blank) line gives no sequence. Errors: CK_E_ARG
 * (null, a line holding '\n', bad params), CK_E_INPUT (the first bad line: "<lines>:N: column C:
 * what", N 1-based), CK_E_BACKEND (espeak-ng), CK_E_MEMORY. On error *out is
 * zeroed. */
CK_API int ck_model_tokenize(const ck_model *model, const char *const *lines, size_t n_lines,
                             const ck_lines_params *params, ck_sequence_set *out, ck_error *err);

/* ck_model_tokenize, then ck_model_encode_ids of every sequence into out->rows. On any error
 * (CK_E_CANCELLED included) *out is freed and zeroed. */
CK_API int ck_model_encode_lines(ck_model *model, const char *const *lines, size_t n_lines,
                                 const ck_lines_params *params, ck_layer layer, ck_sequence_set *out,
                                 ck_error *err);

/* Frees every array of s and zeroes it; accepts NULL and a zeroed struct. */
CK_API void ck_sequence_set_free(ck_sequence_set *s);

/* ---- voices and the prosody circuit (layer prosody) ---- */

/* Loads the voice spec (ck_corpus_params.voice) and frees it again: CK_OK when a run could use it.
 * Errors: CK_E_ARG (null or empty spec, a bad mix weight, a name with other characters than
 * a-z 0-9 _), CK_E_IO (no such shipped voice or file: the message lists the shipped names),
 * CK_E_FORMAT (a pack of another size or shape: both sizes named), CK_E_NONFINITE (a NaN or Inf:
 * part, row and column named), CK_E_MEMORY. */
CK_API int ck_voice_check(const char *voice, ck_error *err);

/* The voice a prosody run of this model uses when ck_corpus_params.voice is NULL: "af_heart"
 * (Kokoro's default) for weights read from a file, "synthetic" (the synthetic pack the speech
 * capture uses, NOT a Kokoro voice) for the synthetic demo weights. "" for NULL. */
CK_API const char *ck_model_default_voice(const ck_model *model);

/* Path of the shipped prosody circuit, circuits/kokoro_prosody_tokens.json of the source tree
 * ckbatch was built from: what ck_model_params.circuit names for layer prosody. */
CK_API const char *ck_prosody_circuit_path(void);

/* One word of a sequence (a run of non-space code points of its phoneme string) and its times. */
typedef struct {
    size_t byte, bytes;  /* the word is phonemes[byte, byte + bytes) of its sequence */
    double start, end;   /* seconds from the start of the sequence's audio (Kokoro's
                            join_timestamps, docs/prosody.md); NaN where Kokoro gives none */
} ck_word_time;

/* What ck_model_prosody computed for a sequence set. Every array is malloc'd and owned by the
 * struct; free with ck_prosody_free. */
typedef struct {
    size_t n_sequences, n_tokens, n_words;
    int32_t *durations;      /* [n_tokens] frames (1/40 s) per token, BOS and EOS included; the
                                sequence set's offsets give each sequence's tokens */
    size_t *frame_offsets;   /* [n_sequences + 1] sequence s is frames frame_offsets[s] ..
                                frame_offsets[s + 1] */
    size_t *word_offsets;    /* [n_sequences + 1] sequence s has words word_offsets[s] ..
                                word_offsets[s + 1] */
    ck_word_time *words;     /* [n_words] */
    float *f0, *n;           /* [2 * frame_offsets[n_sequences]] F0 and N curves, 2 values per frame
                                (Kokoro's F0Ntrain, SYNTHESIS.md): sequence s is values
                                2 frame_offsets[s] .. 2 frame_offsets[s + 1]; NULL when the circuit
                                has no "f0" / "n" output */
} ck_prosody;

/* Durations, word times and (circuit outputs "f0", "n") F0 and N of the sequences of `seqs` (from ck_model_tokenize) through the
 * model's prosody circuit (ck_prosody_circuit_path: loaded with ck_model_params.circuit), with
 * voice (NULL: ck_model_default_voice) and speed (finite, > 0), exactly as a corpus run with layer
 * prosody writes them (same bits, any batch and thread count). Batches of consecutive sequences
 * up to max_batch_tokens. Errors: CK_E_ARG (null, a speed that is not finite and > 0, a circuit
 * without a "durations" output), ck_voice_check's errors, CK_E_SIZE, CK_E_RANGE (as
 * ck_model_encode_ids), CK_E_MEMORY, CK_E_BACKEND, CK_E_CANCELLED. On error *out is zeroed. */
CK_API int ck_model_prosody(ck_model *model, const ck_sequence_set *seqs, const char *voice,
                            double speed, ck_prosody *out, ck_error *err);

/* Frees every array of p and zeroes it; accepts NULL and a zeroed struct. */
CK_API void ck_prosody_free(ck_prosody *p);

/* ---- speech (ck_model_speak, docs/speak.md) ---- */

/* Audio samples per second of ck_model_speak's audio (Kokoro's 24 kHz; 600 samples per frame). */
#define CK_SPEECH_SAMPLE_RATE 24000

/* Path of the shipped speech circuit, circuits/kokoro_speech.json of the source tree ckbatch was
 * built from (PL-BERT, durations, F0/N, decoder and generator; output "audio"): what
 * ck_model_params.circuit names for ck_model_speak. */
CK_API const char *ck_speech_circuit_path(void);

/* Options of ck_model_speak. Zero-initialise, then set; ck_speak_options_init gives the defaults. */
typedef struct {
    const char *voice;   /* voice spec (docs/voices.md); NULL: ck_model_default_voice */
    double speed;        /* speaking rate, finite and > 0 (Kokoro's default 1) */
    uint64_t seed;       /* key of the generator's counter noise with (line, chunk, sample): the
                            same seed gives the same bits alone, in any batch, at any thread count */
    float noise_scale;   /* scale of the source noise, finite and >= 0 (Kokoro 1; 0 removes it) */
    size_t max_batch_frames; /* frames (40 per second of audio) one batch may hold: lines are
                            sorted by length into batches whose estimated frames (3 per token /
                            speed, before the durations exist) fit it, and a batch whose real
                            durations exceed it is split in halves and run again; a line alone
                            always runs, up to the model's planned limit (8 frames per token of
                            max_batch_tokens). 0 (default): 1024 x the model's threads. 1: one
                            line at a time. Changes no bit of the audio or the word times */
} ck_speak_options;

/* Sets o to the defaults: voice NULL, speed 1, seed 0, noise_scale 1, max_batch_frames 0.
 * Accepts NULL. */
CK_API void ck_speak_options_init(ck_speak_options *o);

/* One line's speech as ck_model_speak hands it over; every pointer valid only during the call. */
typedef struct {
    size_t line;              /* 0-based line index (ck_sequence_set.line) */
    size_t chunks;            /* how many sequences (chunks) of the line were joined */
    size_t first_sequence;    /* the line's chunk c is sequence first_sequence + c of the set */
    const float *audio;       /* [samples] float32, 24,000 Hz mono, nominal range [-1, 1] (not
                                 clipped): the line's chunks back to back, as Kokoro joins them (no
                                 overlap, no crossfade; SYNTHESIS.md §1.0) */
    size_t samples;
    const ck_word_time *words; /* [n_words] the words of every chunk in order; byte offsets into
                                 the chunk's phoneme string, times in seconds from the start of the
                                 line's audio (a chunk's own times shifted by its start sample /
                                 24000); NaN where Kokoro gives none */
    const size_t *chunk_words; /* [chunks + 1] chunk c owns words[chunk_words[c], chunk_words[c+1]) */
    const size_t *chunk_samples; /* [chunks + 1] chunk c owns audio[chunk_samples[c], ...[c+1]) */
    size_t n_words;
} ck_speech_line;

/* Called by ck_model_speak once per line, in line order. Return CK_OK to go on; any other value
 * stops ck_model_speak, which returns it (a message set in err is kept). */
typedef int (*ck_speak_fn)(void *user, const ck_speech_line *line, ck_error *err);

/* Speaks the sequences of `seqs` (from ck_model_tokenize: a line longer than 510 phonemes is
 * already split into chunks, as Kokoro's pipeline splits it) through the model's speech circuit
 * (ck_speech_circuit_path, loaded with ck_model_params.circuit, at the model's precision): batches
 * of similar lengths under opt->max_batch_frames and max_batch_tokens (from windows of about four
 * budgets of consecutive sequences, so the audio held waiting for its turn stays bounded), the
 * voice row of each chunk's phoneme count, the counter noise keyed by (opt->seed, line, chunk).
 * Each line's audio (its chunks joined) and word times go to fn, in order; a line's bits do not depend on the batch or the thread count.
 * opt NULL: the defaults (ck_speak_options_init). Errors: CK_E_ARG (null model, seqs or fn, a
 * speed that is not finite and > 0, a circuit without an "audio" or "durations" output: named),
 * CK_E_RANGE (noise_scale negative or not finite), ck_voice_check's errors, CK_E_SIZE,
 * CK_E_RANGE (as ck_model_encode_ids), CK_E_MEMORY, CK_E_BACKEND, CK_E_CANCELLED, or what fn
 * returned. */
CK_API int ck_model_speak(ck_model *model, const ck_sequence_set *seqs,
                          const ck_speak_options *opt, ck_speak_fn fn, void *user, ck_error *err);

/* Where a ck_model_speak_file run stands, as its progress callback sees it. */
typedef struct {
    size_t lines;            /* lines of the input */
    size_t lines_done;       /* lines recorded in the sidecar so far (spoken, without phonemes or
                                skipped), in input order: lines[0, lines_done) are done */
    double audio_seconds;    /* audio this call wrote so far: samples / 24000 (resumed lines
                                not counted) */
    double seconds;          /* wall seconds since the call started */
    double real_time_factor; /* seconds / audio_seconds (below 1: faster than real time); 0 before
                                any audio */
    int final;               /* 1 in the last call: every line done, or the run stopped on an
                                error */
} ck_speak_progress;

/* Called on the calling thread after a line is recorded, at most once per progress_interval
 * seconds, and once more with final = 1 when the call ends. */
typedef void (*ck_speak_progress_fn)(void *ctx, const ck_speak_progress *progress);

/* What ck_model_speak_file writes (`ckbatch speak`, docs/speak.md). */
typedef struct {
    const char *input;        /* corpus file: one line per utterance (lines.format) */
    const char *output;       /* ending in ".wav": one file, every line's audio in input order, and
                                 OUTPUT.jsonl beside it; else a directory: OUTPUT/NNNNNN.wav per line
                                 (0-based line number, zero-padded to 6) and OUTPUT/timestamps.jsonl */
    int sample_format_f32;    /* 0: 16-bit PCM (clipped samples counted), 1: IEEE float 32 */
    ck_speak_options speak;
    ck_lines_params lines;
    ck_speak_progress_fn progress; /* NULL (default): none */
    void *progress_ctx;
    double progress_interval;      /* seconds between progress calls at most (0: after every line) */
    int skip_bad_lines;            /* 1: a line the reader rejects (CK_E_INPUT: a symbol or id
                                      refused, over the line-length limit) gets a record {"line":N,
                                      "error":"INPUT:N+1: ..."} and no audio, warned through
                                      lines.log, and the run goes on; 0 (default): the first one
                                      is the error, nothing written */
    int resume;                    /* 1: continue the run that was stopped. Directory: the one
                                      that left OUT/timestamps.jsonl.partial (or a finished
                                      OUT/timestamps.jsonl): a line with a record whose WAV exists
                                      is not spoken again. One .wav: the one that left OUT.partial
                                      and OUT.jsonl.partial: the lines its journal records are
                                      kept, the WAV and journal cut back to the last whole record,
                                      the rest spoken (neither there: every line spoken). The
                                      result is byte for byte an uninterrupted run's. Its settings
                                      record must equal this run's (CK_E_STATE naming the key, the
                                      files left as they were); none: every line spoken */
    size_t shard_count;            /* 0 (default): every line. N >= 1: only the lines of range
                                      shard_index of ck_shard_split(input, shard_index, N) (the
                                      encoder's split), their records and file names keeping the
                                      input's global line numbers. A .wav output goes to
                                      ck_shard_path(output, I, N) and its sidecar to that + ".jsonl";
                                      a directory output keeps OUTPUT/NNNNNN.wav (shards may share
                                      the directory: no merge needed) and writes its records to
                                      ck_shard_path(OUTPUT/timestamps.jsonl, I, N). The settings
                                      record ends with "shard":{index, count, first_line, lines,
                                      byte_start, byte_end}; ck_merge_speak_shards joins them */
    size_t shard_index;            /* 0 .. shard_count - 1 */
} ck_speak_params;

typedef struct {
    size_t lines, lines_skipped;   /* lines written; lines that gave no phonemes (no file) */
    uint64_t samples, clipped;     /* samples written (24 kHz), s16 samples clipped */
    double seconds;                /* wall time of the call */
    size_t lines_failed;           /* skip_bad_lines: lines the reader rejected (no file) */
    size_t lines_resumed;          /* resume: lines with a WAV an earlier run wrote (not in
                                      lines, samples, clipped) */
    uint64_t clipped_resumed;      /* resume of one .wav: s16 samples clipped in the resumed
                                      lines (from the journal), so clipped + clipped_resumed is
                                      the whole file's count, an uninterrupted run's clipped;
                                      0 for a directory (its records do not keep it) */
} ck_speak_summary;

/* Reads params->input, speaks every line through ck_model_speak and writes the WAVs (RIFF, 24,000 Hz
 * mono, LIST/INFO: ISFT "ckbatch VERSION", ICMT "weights=... voice=... voice_sha256=HEX
 * voice_row=clamp(phonemes-1,0,509) speed=... seed=... noise_scale=... precision=...
 * sample_rate=24000", voice_sha256 the SHA-256 of the [510, 256] f32 pack used, after mixing) and
 * the JSON-lines sidecar: first a settings record {"settings":true, ...} (the same identity, the
 * sample format and the input's SHA-256; readers of line records skip it), then per line: line,
 * file or start/end sample, samples, words with phonemes, start, end in seconds (null for a time
 * Kokoro gives none).
 * Every file appears complete or not at all (written to a temporary name, renamed); a directory
 * output also keeps the journal OUTPUT/timestamps.jsonl.partial while it runs, left with the WAVs
 * done when the call fails (what resume continues); a .wav output is written as OUTPUT.partial
 * with the journal OUTPUT.jsonl.partial, both left when the call fails (what resume continues),
 * and renamed to OUTPUT when complete. Errors: CK_E_ARG (null, a bad option: as
 * ck_model_speak), CK_E_IO (input unreadable, output not writable:
 * nothing written), CK_E_STATE (resume over records of other settings: the key named),
 * CK_E_FORMAT (a journal record that is not one of this input's lines; resume of a .wav whose
 * OUTPUT.partial is not the WAV its journal describes: another header, shorter), ck_model_tokenize's
 * (CK_E_INPUT naming params->input and the 1-based line) and ck_model_speak's errors. */
CK_API int ck_model_speak_file(ck_model *model, const ck_speak_params *params,
                               ck_speak_summary *summary, ck_error *err);

/* ---- the corpus job (what `ckbatch -i IN -o OUT` runs) ---- */

typedef struct {
    const char *input;          /* corpus path, one item per line; "-" reads stdin */
    const char *output;         /* safetensors path: features F32 [T, cols], offsets I64 [S + 1],
                                   sequences and skipped U8 (JSON Lines); written under a temporary
                                   name and renamed when complete. Layer prosody: durations I32
                                   [T], offsets, frame_offsets I64 [S + 1], f0 and n F32 [2F] (F0
                                   and N, 2 values per frame, F = frame_offsets[S]; absent for a
                                   circuit without "f0"/"n" outputs: the bits ck_model_prosody
                                   gives), and records with "frames" and "words" (start and end
                                   seconds, docs/prosody.md) */
    ck_input_format format;
    const char *lang;           /* text: "en-us" (default) or "en-gb" */
    ck_layer layer;             /* default CK_LAYER_FEATURES */
    int strict_symbols;         /* see ck_lines_params */
    int skip_bad_lines;         /* 1: bad lines are warned, skipped and listed in `skipped`;
                                   0 (default): the first one ends the run with CK_E_INPUT */
    int resume;                 /* 1: continue from output's progress record (input, options and
                                   weights must be the interrupted run's; threads and
                                   max_batch_tokens may differ); without a record the run starts
                                   from the beginning and says so. Not with stdin (CK_E_ARG) */
    ck_log_fn log;              /* info and warnings of the run; NULL: silent */
    void *log_ctx;
    ck_progress_fn progress;    /* NULL: none */
    void *progress_ctx;
    double progress_interval;   /* seconds between progress calls at most (default 0.5; 0: at
                                   every line, batch and checkpoint) */
    const char *g2p;            /* see ck_lines_params (default NULL: "misaki") */
    const char *lexicon_dir;    /* see ck_lines_params */
    size_t shard_count;         /* 0 (default): the whole input into `output`. N >= 1: only range
                                   shard_index of ck_shard_split(input, shard_index, N) into the
                                   shard file ck_shard_path(output, shard_index, N), whose records
                                   carry the input's global line numbers (ck_merge_shards joins
                                   N of them into the file a whole run writes). Not with stdin */
    size_t shard_index;         /* 0 .. shard_count - 1 */
    const char *voice;          /* layer prosody: the voice spec (docs/voices.md): a shipped name
                                   ("af_heart"), a .bin or .pt file, a mix "a:2,b:1" or "a,b", or
                                   "synthetic". NULL (default): ck_model_default_voice */
    double speed;               /* layer prosody: speaking rate, finite and > 0 (default 1; the
                                   durations are the predictor's sums / speed, Kokoro's rule) */
} ck_corpus_params;

/* The defaults above (input and output NULL: both must be set). */
CK_API ck_corpus_params ck_corpus_default_params(void);

typedef struct {
    size_t lines, sequences, tokens, chunked_lines, skipped_lines, empty_lines, dropped_symbols;
    size_t resumed_tokens;      /* of tokens, those a resumed run found already done */
    double seconds;             /* wall time from the first line read to the file renamed */
    double g2p_seconds;         /* text: of seconds, the time spent in the G2P */
    size_t g2p_fallback_words;  /* text, misaki: words phonemized by espeak-ng (each warned) */
} ck_corpus_summary;

/* Encodes the corpus at params->input into params->output (layer prosody: the model's circuit
 * must have a "durations" output, CK_E_CIRCUIT otherwise; its voice and speed are loaded and
 * checked before the output is opened: CK_E_ARG for a speed that is not finite and > 0, and
 * ck_voice_check's errors). Progress is committed (fsynced) after
 * every window of batches, so a killed run continues with resume = 1 and ends with the same bytes
 * as an uninterrupted one. A parity model hashes every weight before and after the run
 * (CK_E_PARITY naming the tensor that changed, no output). On any error no file appears at
 * params->output (an existing one is left as it was); the progress files stay when a later run
 * can resume them (logged), else they are removed. Errors: every CK_E_* of the parts, err naming
 * the file, line and field; CK_E_ARG for resume with stdin; CK_E_STATE for resume over another
 * run's progress (another input, options or weights; the message names the field); CK_E_FORMAT
 * for a progress journal edited since its commit; CK_E_CANCELLED from the model's cancel callback
 * (the progress committed so far stays, so resume = 1 continues). */
CK_API int ck_run_corpus(ck_model *model, const ck_corpus_params *params,
                         ck_corpus_summary *summary, ck_error *err);

/* ---- more than one machine: shards and their merge ---- */

#define CK_SHARDS_MAX 1000000 /* shards of one input at most */

/* The split every distributed mode shares. Shard i of N of an input of S bytes owns every line
 * whose first byte offset o satisfies floor(i*S/N) <= o < floor((i+1)*S/N) (a line starts at byte 0
 * or after a '\n'): contiguous byte ranges, balanced by bytes (tokens follow bytes far better than
 * line counts), covering the input once, never cutting a line. A shard may be empty (N above the
 * line count, or a line longer than S/N). A pure function of the file's bytes and (i, N). */
typedef struct {
    unsigned long long start, end;  /* [start, end): input bytes of the shard, both line starts
                                       (or S) */
    unsigned long long input_bytes; /* S, the input's size */
    size_t first_line;              /* 1-based number, in the whole input, of the line at start */
    size_t lines;                   /* lines starting in [start, end) (a last line without '\n'
                                       counts) */
} ck_shard_range;

/* Range `index` of `count` of the regular file at `input`. Reads the input's bytes up to `end`
 * once, counting newlines. Errors: CK_E_ARG (null, count 0 or above CK_SHARDS_MAX, index >= count),
 * CK_E_IO (cannot open or read; not a regular file). */
CK_API int ck_shard_split(const char *input, size_t index, size_t count, ck_shard_range *out,
                          ck_error *err);

/* The shard file of shard `index` of `count` for output path `output`, "OUT.shard-IIIII-of-NNNNN"
 * (5 digits at least, zero-padded, as sharded safetensors are named), into buf[cap]. Returns the
 * length it needs (snprintf's rule: >= cap means cut). */
CK_API size_t ck_shard_path(char *buf, size_t cap, const char *output, size_t index, size_t count);

/* What ck_merge_shards did. */
typedef struct {
    size_t shards, sequences, tokens, skipped_lines;
    unsigned long long bytes;  /* size of the merged file */
    double seconds;            /* wall time of the merge */
} ck_merge_summary;

/* Joins the shard files paths[0..n) (any order) into one features file at `output` whose bytes
 * equal those a single ck_run_corpus of the same input and options writes: rows, sequences and
 * skipped are copied as stored (their line numbers are global already), offsets shifted by the
 * earlier shards' tokens, and the header carries shard 0's metadata without the "shard" entry.
 * Before writing anything it checks that the files are exactly shards 0..N-1 of one split (each
 * once, byte ranges contiguous from 0 to the input's size, line numbers following on) of the same
 * input (SHA-256 and size), options, weights, engine build (version and kernel ISA), metadata,
 * rows tensor and width; the message names the first shard and field that differ ("shard 2/3
 * (PATH): field \"input_sha256\" differs from shard 0's ..."), a missing shard with the input bytes
 * it owned (and whether its partial files show an unfinished run). Writes under a temporary name,
 * renamed when complete: on any error nothing appears at output. No single read or write moves
 * more than 1 GiB (copy_file_range, looped over short counts). log: INFO lines, may be NULL.
 * Errors: CK_E_ARG (null, n 0, shards that do not fit together, as above), CK_E_IO, CK_E_FORMAT (a
 * file that is not a ckbatch shard: no or a malformed "shard" entry, offsets inconsistent with
 * rows), CK_E_MEMORY. summary may be NULL. */
CK_API int ck_merge_shards(const char *output, const char *const *paths, size_t n,
                           ck_log_fn log, void *log_ctx, ck_merge_summary *summary,
                           ck_error *err);

/* What ck_merge_speak_shards did. */
typedef struct {
    size_t shards, lines;          /* shards joined; line records in the merged sidecar */
    unsigned long long samples;    /* frames of the merged WAV (0 for a directory) */
    unsigned long long bytes;      /* size of the merged WAV, or of the merged timestamps.jsonl */
    double seconds;                /* wall time of the merge */
} ck_speak_merge_summary;

/* Joins the shards of ck_model_speak_file (params.shard_count = N) into what one unsharded run
 * writes, byte for byte. output ending in ".wav": paths[0..n) (any order) are the shards' WAVs
 * (OUTPUT.shard-IIIII-of-NNNNN), each with its sidecar PATH.jsonl; OUTPUT gets the samples in
 * shard order under shard 0's header (sizes patched) and OUTPUT.jsonl the settings record without
 * its "shard" entry, then every shard's line records, start_sample and end_sample shifted by the
 * samples of the shards before it (word times are from the line's start: unchanged). Any other
 * output is a directory: paths are its shards' record files (OUTPUT/timestamps.jsonl.shard-I-of-N)
 * and only OUTPUT/timestamps.jsonl is written (the WAVs are already the single run's). Before
 * anything is written it checks that the shards are exactly 0..N-1 of one split (each once, lines
 * following on, each shard's record count its line count), with equal settings records (input
 * SHA-256, weights, voice, speed, seed, noise scale, precision, sample format, on_error, engine)
 * and equal WAV headers apart from their sizes; the message names the shard, its path and the
 * field ("shard 1/2 (PATH): field \"seed\" differs from shard 0's"), or the missing shard.
 * Every file is written under a temporary name and renamed when complete. log: INFO lines, may
 * be NULL; summary may be NULL. Errors: CK_E_ARG (null, n 0, shards that do not fit together),
 * CK_E_IO, CK_E_FORMAT (not a speak shard: no settings record or "shard" entry, a malformed
 * record, a WAV that is not ck_model_speak_file's), CK_E_SIZE (the joined WAV would pass 4 GiB),
 * CK_E_MEMORY. */
CK_API int ck_merge_speak_shards(const char *output, const char *const *paths, size_t n,
                                 ck_log_fn log, void *log_ctx, ck_speak_merge_summary *summary,
                                 ck_error *err);

/* ---- more than one machine: ranks writing one file in place (ckbatch-mpi) ----
 *
 * The library side of MPI mode. It links no MPI: the front end (engine/cli/mpi_main.c, built with
 * -DCK_MPI=ON) passes rank and size as two integers and moves the few numbers below between the
 * ranks (MPI_Exscan, MPI_Allreduce, MPI_Bcast). Each of N ranks, in this order:
 *   1. ck_rank_plan: reads range `rank` of ck_shard_split(input, rank, N) and runs the G2P over
 *      it, keeping every sequence's ids and record in memory (about 4 bytes per token plus the
 *      JSON Lines): how many rows and record bytes the rank will write is known before any row is.
 *   2. the front end agrees on a bad line (--on-error stop: the lowest first_bad_line is the run's
 *      error, printed once by the rank that holds it; nothing has been written), then gives every
 *      rank the counts of the ranks before it (exclusive prefix sum) and of all of them;
 *   3. ck_rank_layout: the header, equal on every rank (ck_rank_header_sha256: the front end
 *      checks that), and where this rank's rows, offsets and records lie;
 *   4. rank 0: ck_rank_create (lock, OUT.partial.mpi at its final size with the header, the job's
 *      record); then every rank: ck_rank_open (writes its offsets and records in place, reads its
 *      progress record on resume);
 *   5. ck_rank_encode: windows of batches, each batch's rows pwritten at their final place;
 *      after each window fdatasync and the rank's progress record (OUT.partial.rank-R-of-N.json);
 *   6. when every rank encoded: rank 0 ck_rank_finish (renames OUT.partial.mpi onto OUT), then
 *      every rank ck_rank_cleanup (removes its record). The file is byte for byte what one
 *      ck_run_corpus of the same input and options writes (no rank appears in it).
 * Not with stdin or shard_count (CK_E_ARG). */

typedef struct ck_rank_job ck_rank_job;

/* What a rank's plan holds: the four numbers the ranks exchange, as an array of
 * CK_RANK_COUNTS_N unsigned long long (MPI_UNSIGNED_LONG_LONG) in this order. */
typedef struct {
    unsigned long long sequences;     /* S: sequences of the range */
    unsigned long long tokens;        /* T: their rows */
    unsigned long long seq_bytes;     /* bytes of their "sequences" JSON Lines */
    unsigned long long skipped_bytes; /* bytes of the range's "skipped" JSON Lines */
} ck_rank_counts;
#define CK_RANK_COUNTS_N 4

/* What ck_rank_plan found. */
typedef struct {
    ck_rank_counts counts;
    unsigned long long first_bad_line; /* --on-error stop: 1-based input line of the range's first
                                          bad line (ck_rank_plan returned CK_E_INPUT), else 0 */
    size_t lines, empty_lines, chunked_lines, skipped_lines, dropped_symbols;
    size_t first_line;                 /* 1-based input line the range starts at */
    unsigned long long byte_start, byte_end; /* the range: input bytes [byte_start, byte_end) */
    double g2p_seconds;                /* text: time in the G2P */
} ck_rank_plan_info;

/* Step 1: the plan of range `rank` (0-based) of `ranks` of params->input. params as for
 * ck_run_corpus (input, output, format, options; resume: continue the run's records if there are
 * any); the model is used from here to ck_rank_encode. Logs the range at CK_LOG_INFO. *info is
 * filled on CK_OK and on CK_E_INPUT (first_bad_line set, err holding the line's message exactly
 * as ck_run_corpus reports it). Errors: CK_E_ARG (null, rank >= ranks, ranks 0 or above
 * CK_SHARDS_MAX, stdin, shard_count set), CK_E_INPUT, CK_E_IO, CK_E_MEMORY, CK_E_BACKEND (G2P).
 * *out is NULL on any error; else free it with ck_rank_job_free. */
CK_API int ck_rank_plan(ck_model *model, const ck_corpus_params *params, size_t rank,
                        size_t ranks, ck_rank_job **out, ck_rank_plan_info *info, ck_error *err);

/* Step 3: before = the sums of the counts of ranks 0..rank-1 (zeros on rank 0), total = of all
 * ranks. Builds the header. Errors: CK_E_ARG (null, before + this rank's counts above total),
 * CK_E_SIZE (a size that overflows), CK_E_MEMORY. */
CK_API int ck_rank_layout(ck_rank_job *job, const ck_rank_counts *before,
                          const ck_rank_counts *total, ck_error *err);

/* 64 hex digits of the SHA-256 of the header bytes (after ck_rank_layout; "" before). Ranks that
 * disagree on it would write different files: other input, options, weights or binary. */
CK_API const char *ck_rank_header_sha256(const ck_rank_job *job);

/* Step 4, rank 0 only, before any other rank's ck_rank_open: takes OUT.partial.lock, and either
 * starts fresh (removes any earlier records, creates OUT.partial.mpi at its final size with the
 * header at byte 0, writes the job record OUT.partial.mpi.json: ranks, identity, header SHA-256)
 * or, with params->resume and a job record, checks the record (same number of ranks, input,
 * options, weights, header) and the header bytes in the file. *resumed: 1 when continuing.
 * Errors: CK_E_STATE (resume refused: the message names the field, "ranks" for another N),
 * CK_E_IO (lock held by another run, create, write), CK_E_FORMAT (a record or file edited),
 * CK_E_MEMORY. */
CK_API int ck_rank_create(ck_rank_job *job, int *resumed, ck_error *err);

/* Step 4, every rank after rank 0's ck_rank_create (resumed: what it returned): opens the file,
 * writes this rank's offsets, sequences and skipped records at their places (pwrite, looped over
 * short writes, at most 1 GiB a call, 64-bit offsets), and when resumed continues from its
 * progress record (none: from its first sequence). Errors: CK_E_STATE (the record is another
 * plan's: the input changed), CK_E_IO, CK_E_FORMAT, CK_E_MEMORY. */
CK_API int ck_rank_open(ck_rank_job *job, int resumed, ck_error *err);

/* Step 5: encodes the rank's sequences from its mark in windows of batches (the model's
 * max_batch_tokens and threads; rows do not depend on them), pwrites each batch's rows at their
 * final place, and after each window fdatasyncs and replaces the rank's progress record. The
 * model's cancel callback is asked before every batch (CK_E_CANCELLED: what was committed stays
 * for a resume). Errors: CK_E_IO, CK_E_NONFINITE, CK_E_MEMORY, CK_E_BACKEND, CK_E_CANCELLED. */
CK_API int ck_rank_encode(ck_rank_job *job, ck_error *err);

/* Rows this run encoded (not those a resumed record held) and the seconds ck_rank_encode took. */
CK_API size_t ck_rank_encoded_tokens(const ck_rank_job *job);
CK_API double ck_rank_encode_seconds(const ck_rank_job *job);

/* Step 6, rank 0 only, once every rank's ck_rank_encode returned CK_OK: fsyncs OUT.partial.mpi,
 * renames it onto OUT, fsyncs the directory, removes the job record, every rank's record (and any
 * temporary record a killed rank left) and the lock. Errors: CK_E_IO. */
CK_API int ck_rank_finish(ck_rank_job *job, ck_error *err);

/* Step 6, every rank after rank 0's ck_rank_finish: removes the rank's progress record (already
 * gone when rank 0's ck_rank_finish removed it; kept so each rank tidies up after itself). */
CK_API void ck_rank_cleanup(ck_rank_job *job);

/* Closes the files (records stay) and frees the job; accepts NULL. */
CK_API void ck_rank_job_free(ck_rank_job *job);

/* ---- more than one machine: ranks speaking one .wav in place (ckbatch-mpi speak) ----
 *
 * The speech twin of the ck_rank_* steps above, for a params->output ending in ".wav": the file
 * and its sidecar are written where one ck_model_speak_file run would put every byte, by the rank
 * that speaks it, and renamed when complete. A line's sample count is fixed by its durations (600
 * samples a frame), which the token side gives before the generator runs. Each of N ranks:
 *   1. ck_speak_rank_plan: tokenizes range `rank` of ck_shard_split(input, rank, N) and runs the
 *      token side (circuits/kokoro_prosody_tokens.json, a model of its own, freed before it
 *      returns) for its lines' durations: info->samples;
 *   2. the front end agrees on a bad line (skip_bad_lines 0: the lowest rank returning
 *      CK_E_INPUT holds the input's first, nothing written) and gives every rank the samples of
 *      the ranks before it (exclusive prefix sum) and of all;
 *   3. ck_speak_rank_layout (with the speech model): the WAV header of the total, the settings
 *      record, the rank's line records at their global sample ranges (info->record_bytes); the
 *      front end checks ck_speak_rank_header_sha256 against rank 0's and sums the record bytes
 *      the same way;
 *   4. rank 0: ck_speak_rank_create (OUTPUT.partial.mpi at its final size with the header, and
 *      OUTPUT.jsonl.partial.mpi with the settings record); then every rank ck_speak_rank_open
 *      (its records written at their place);
 *   5. ck_speak_rank_speak: each line's samples pwritten at their place as it is spoken, its
 *      record made again from the run and compared with the planned one (CK_E_PARITY when they
 *      differ: the durations of the plan were not the run's), fdatasync at the end;
 *   6. when every rank spoke: rank 0 ck_speak_rank_finish (publishes OUTPUT, then
 *      OUTPUT.jsonl); on a failure anywhere rank 0 ck_speak_rank_discard removes both partial
 *      files. No resume (params->resume is CK_E_ARG). */

typedef struct ck_speak_rank ck_speak_rank;

/* What a rank planned and spoke. */
typedef struct {
    unsigned long long samples;      /* 24 kHz samples of the rank's lines (their planned frames
                                        x 600): what the ranks' prefix sum adds up */
    unsigned long long record_bytes; /* bytes of its line records (after ck_speak_rank_layout) */
    size_t lines;                    /* lines of the range */
    size_t first_line;               /* 0-based input line the range starts at */
    size_t lines_spoken, lines_skipped, lines_failed; /* with audio; without phonemes; rejected
                                        by the reader (skip_bad_lines) */
    unsigned long long clipped;      /* s16 samples clipped (after ck_speak_rank_speak) */
    double plan_seconds, speak_seconds;
} ck_speak_rank_info;

/* Step 1, every rank: the plan of range `rank` (0-based) of `ranks` of params->input (output
 * ending in ".wav"; params as for ck_model_speak_file, shard_count 0, resume 0). model_params are
 * the speech model's: a model of the token circuit is loaded from them (circuit and compiled
 * replaced), run over the range's sequences and freed. *info filled on CK_OK; on CK_E_INPUT
 * (skip_bad_lines 0: the range's first bad line) err holds the line's message exactly as
 * ck_model_speak_file reports it. Errors: CK_E_ARG (null, rank >= ranks, ranks 0 or above
 * CK_SHARDS_MAX, shard_count, resume, an output not ending in ".wav"), CK_E_INPUT, CK_E_IO,
 * ck_model_load's and ck_model_prosody's. *out NULL on error; else free with
 * ck_speak_rank_free. */
CK_API int ck_speak_rank_plan(const ck_model_params *model_params, const ck_speak_params *params,
                              size_t rank, size_t ranks, ck_speak_rank **out,
                              ck_speak_rank_info *info, ck_error *err);

/* Step 3, every rank, with the speech model (loaded from the same model_params; it speaks in step
 * 5): samples_before = the samples of ranks 0..rank-1, samples_total = of all. Builds the WAV
 * header and the settings record (as ck_model_speak_file makes them) and the rank's line records;
 * info->record_bytes gets their bytes. Errors: CK_E_ARG (null, before + this rank's above total),
 * CK_E_SIZE (past RIFF's 4 GiB), CK_E_MEMORY, the identity's (voice). */
CK_API int ck_speak_rank_layout(ck_speak_rank *job, ck_model *model,
                                unsigned long long samples_before,
                                unsigned long long samples_total, ck_speak_rank_info *info,
                                ck_error *err);

/* 64 hex digits of the SHA-256 of the WAV header and the settings record (after
 * ck_speak_rank_layout; "" before): ranks that disagree would write different files. */
CK_API const char *ck_speak_rank_header_sha256(const ck_speak_rank *job);

/* Step 4, rank 0 only, after step 3 and before any rank's ck_speak_rank_open: creates
 * OUTPUT.partial.mpi at its final size with the header and OUTPUT.jsonl.partial.mpi at its final
 * size (record_total: the line record bytes of all ranks) with the settings record, replacing
 * any left by an earlier run. Errors: CK_E_ARG, CK_E_IO. */
CK_API int ck_speak_rank_create(ck_speak_rank *job, unsigned long long record_total,
                                ck_error *err);

/* Step 4, every rank after rank 0's ck_speak_rank_create: opens both files and writes the rank's
 * line records at the sidecar's settings record + records_before (the record bytes of ranks
 * 0..rank-1). Errors: CK_E_ARG, CK_E_IO. */
CK_API int ck_speak_rank_open(ck_speak_rank *job, unsigned long long records_before,
                              ck_error *err);

/* Step 5: speaks the range (ck_model_speak with params->speak), each line's samples converted to
 * the sample format and pwritten at header + its first sample x block, its record compared with
 * the planned one; fdatasyncs both files at the end. Errors: CK_E_PARITY (a line whose samples or
 * word times differ from the plan's: named, with both sample counts), CK_E_IO, ck_model_speak's
 * (CK_E_CANCELLED, CK_E_NONFINITE, ...). info: lines_spoken, clipped, speak_seconds. */
CK_API int ck_speak_rank_speak(ck_speak_rank *job, ck_model *model, ck_speak_rank_info *info,
                               ck_error *err);

/* Step 6, rank 0 only, once every rank's ck_speak_rank_speak returned CK_OK: publishes
 * OUTPUT.partial.mpi as OUTPUT, then OUTPUT.jsonl.partial.mpi as OUTPUT.jsonl (ck_file_publish:
 * fsync, rename, directory fsync). Errors: CK_E_IO. */
CK_API int ck_speak_rank_finish(ck_speak_rank *job, ck_error *err);

/* Rank 0 after a failure on any rank: removes both partial files (nothing is resumed). */
CK_API void ck_speak_rank_discard(ck_speak_rank *job);

/* Closes the files and frees the job; accepts NULL. */
CK_API void ck_speak_rank_free(ck_speak_rank *job);

/* ---- reading a features file back ---- */

/* One tensor of an open file, as stored. */
typedef struct {
    const char *name;
    const char *dtype;     /* "F32", "F16", "BF16", "I32", "I64", "U8"; "OTHER" for the
                              format's other types */
    size_t rank;
    size_t shape[8];
    size_t elements;       /* product of shape */
    const void *data;      /* little-endian, not necessarily aligned; valid until close */
    size_t bytes;
} ck_tensor_view;

typedef struct ck_features_file ck_features_file;

/* Opens (maps read-only) a safetensors file, such as ck_run_corpus writes: features F32
 * [T, cols] (or hidden), offsets I64 [S + 1], sequences and skipped U8 (JSON Lines), metadata
 * (format, engine, layer, circuit, weights, source, ...). The whole header is validated first.
 * Errors: CK_E_ARG, CK_E_IO, CK_E_FORMAT (names the tensor and field), CK_E_MEMORY. */
CK_API int ck_features_open(ck_features_file **out, const char *path, ck_error *err);

/* The tensor called name, or NULL. */
CK_API const ck_tensor_view *ck_features_tensor(const ck_features_file *f, const char *name);

/* The metadata value of key, or NULL. */
CK_API const char *ck_features_metadata(const ck_features_file *f, const char *key);

/* Unmaps and frees; accepts NULL. */
CK_API void ck_features_close(ck_features_file *f);

/* ---- weights tools ---- */

/* Writes the synthetic demo weights of `seed` to path (safetensors, atomically): a whole synthetic
 * Kokoro-82M, every stored tensor of its five groups (548 tensors, 81.8 M parameters, about 327 MB;
 * weight-normed layers as weight_g/weight_v), NOT Kokoro's weights (docs/synthetic-weights.md).
 * The encoder's tensors are those the embedded default generates in memory, bit for bit.
 * *identity (may be NULL) gets a malloc'd identity string of what was written.
 * Errors: CK_E_IO, CK_E_MEMORY, CK_E_ARG. */
CK_API int ck_demo_weights_write(const char *path, uint64_t seed, char **identity, ck_error *err);

/* The tensors of a weights file as stored (name, dtype, shape, bytes; tab-separated lines) in a
 * malloc'd string *text, without converting anything. Errors: CK_E_IO, CK_E_FORMAT, CK_E_MEMORY. */
CK_API int ck_weights_describe(const char *path, char **text, ck_error *err);

/* The manifest of a weights file (every tensor's dtype, shape and SHA-256 as JSON, what
 * ck_model_params.weights_manifest verifies) in a malloc'd string *json. Errors: those of loading
 * the weights, CK_E_BACKEND (hashing), CK_E_MEMORY. */
CK_API int ck_weights_manifest(const char *path, char **json, ck_error *err);

/* Frees a string the library returned (identity, text, json); accepts NULL. */
CK_API void ck_free(void *p);

/* ---- X-Ray: checkpoint-by-checkpoint parity with a pinned PyTorch capture ---- */

typedef struct {
    const char *oracle;      /* capture (safetensors); its manifest is verified first when it
                                exists. An encoder capture (tests/fixtures/kokoro_capture) or a
                                speech capture (tests/fixtures/speech, recognised by its
                                <case>.pred_dur tensors: each case alone with its style, speed,
                                durations forced and noise fed, every stage compared, and the
                                generator fed the capture's F0 and decode.3; a token-side one
                                without noise, tests/fixtures/speech/kokoro_token_edges: the
                                token side, alignment and F0/N, the rest NOT_TESTED;
                                docs/parity.md) */
    const char *manifest;    /* NULL: derived from the oracle's name */
    const char *profile;     /* thresholds JSON; NULL: the manifest's, else the default contract */
    const char *report;      /* JSON report path, NULL for none */
    const char *capture_out; /* write the candidate's capture here, NULL for none */
    const char *capture_ids; /* "all" (or NULL) or comma-separated checkpoint ids to capture */
    const char *circuit;     /* NULL: the embedded Kokoro phoneme encoder (a speech capture:
                                ck_speech_circuit_path; a token-side one:
                                ck_prosody_circuit_path) */
    const char *weights;     /* NULL: synthetic weights with the manifest's seed */
    uint64_t seed;           /* synthetic seed when the manifest gives none */
    ck_log_fn log;           /* notes (INFO) and the comparison table (REPORT); NULL: silent */
    void *log_ctx;
    ck_precision precision;     /* CK_PRECISION_FP32 (default): the parity run; BF16: the same
                                   cases with bf16 linears against the FP32 oracle, under the bf16
                                   budget (docs/precision.md) unless `profile` gives one */
    const char *compiled;       /* a library from `ckbatch compile` with --parity (fp32) or
                                   --precision bf16 and --max-batch-tokens at least the longest
                                   case, run instead of the interpreter (the report says
                                   "generated" and names it); NULL (default): the interpreter */
} ck_xray_params;

/* The defaults above (oracle NULL: must be set; seed 20261129). */
CK_API ck_xray_params ck_xray_default_params(void);

/* Parity run of every case of the oracle on one thread, compared checkpoint by checkpoint; what is
 * not compared is reported NOT_TESTED. A speech capture runs fp32 and interpreted only (CK_E_ARG for
 * precision bf16 or int8, `compiled` or `capture_out`), under the published speech budget
 * (circuits/kokoro_speech.xray_budget.json; a token-side capture's:
 * circuits/kokoro_token_edges.xray_budget.json; `profile` adds to it). CK_OK when every compared
 * checkpoint passed, CK_E_PARITY when one failed (err says how many), or the first error. */
CK_API int ck_xray_run(const ck_xray_params *params, ck_error *err);

/* Compares two capture files (candidate against oracle, whose manifest is verified when it has
 * one: else logged as not verified) with the profile's thresholds (NULL: default), writes the
 * report (NULL: none) and logs the table. CK_OK, CK_E_PARITY or the first error. */
CK_API int ck_xray_compare_captures(const char *candidate, const char *oracle,
                                    const char *profile, const char *report,
                                    const char *manifest, ck_log_fn log, void *log_ctx,
                                    ck_error *err);

#ifdef __cplusplus
}
#endif

#endif
