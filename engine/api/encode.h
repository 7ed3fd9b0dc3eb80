/* encode.h - the corpus job behind `ckbatch`: corpus lines -> sequences -> length-sorted packed
 * batches -> executor -> features file in input order. Owns the run's I/O and its stderr reports. */
#ifndef CK_ENCODE_H
#define CK_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"
#include "circuit.h"
#include "reader.h"
#include "weights.h"

typedef struct {
    const char *input;          /* corpus path, "-" for stdin */
    const char *output;         /* safetensors path */
    const char *weights;        /* .pth or .safetensors path, NULL for the synthetic demo weights */
    const char *weights_manifest; /* ckbatch weights hash output verified before use, or NULL */
    const char *circuit;        /* circuit JSON path, NULL for the embedded Kokoro encoder */
    const char *config;         /* Kokoro config.json path (kokoro_config.h): its vocab replaces the
                                   embedded one, its dims are checked against the weights; NULL
                                   for the embedded Kokoro-82M v1.0 vocabulary, unchecked */
    uint64_t seed;              /* synthetic weights seed */
    ck_input_format format;
    const char *lang;           /* text format language, "en-us" */
    int threads;                /* compute workers */
    size_t max_batch_tokens;    /* tokens per packed batch */
    int strict_symbols;         /* symbols outside the vocab are line errors */
    int skip_bad_lines;         /* 1: skip and report bad lines; 0: stop at the first */
    int hidden;                 /* 1: write the [T,768] last hidden state instead of features */
    int progress;               /* 1: a progress line on stderr */
    double progress_interval;   /* seconds between progress redraws at most (0: every event: each
                                   line read, batch and X-Ray checkpoint); the CLI's default 0.5 */
    int quiet;                  /* 1: stderr gets errors only (no weights, memory, parity, resume,
                                   dropped-symbol or skipped-line lines; `skipped` still lists
                                   skipped lines) */
    int parity;                 /* 1: one thread whatever `threads` says; weights hashed before and
                                   after the run (CK_E_PARITY if a byte changed, no output) */
    int resume;                 /* 1: continue from output's partial state (output.h); input, the
                                   options above and the weights must be the interrupted run's.
                                   The lines before the mark are passed over unconverted. Without
                                   a progress record the run starts from the beginning (and says
                                   so), so a job script may always pass it */
} ck_encode_options;

typedef struct {
    size_t lines, sequences, tokens, chunked_lines, skipped_lines, empty_lines, dropped_symbols;
    size_t resumed_tokens;      /* of tokens, those a resumed run found already done (0 otherwise) */
    double seconds;             /* wall time from the first line read to the file renamed */
} ck_encode_summary;

/* Runs the whole job. The circuit, weights, executor and opt->config (read, and checked against the
 * weights: CK_E_WEIGHTS naming the field) are ready before the corpus is opened; with a config the
 * output metadata gains "config" = "sha256:<hex of the file>" (none without, so those bytes equal
 * earlier versions'). Ids-format ids may be any row of the loaded word-embedding table.
 * Progress is committed (fsynced, output.h) after every window, so a killed run continues with
 * opt->resume and ends with the same bytes as an uninterrupted one. A stdin run cannot be resumed:
 * it writes no progress record. On any error no file appears at opt->output (an existing one is
 * left as it was); the partial state is removed after a bad line under stop and after any failed
 * stdin run (said so on stderr), kept (and said so) after other errors once a commit was made.
 * Memory: outside parity mode the weight tensors only linears read are released once oneDNN holds
 * its copies (ck_weights_release). The job changes no process-wide state: the allocator policy is
 * the program's (the ckbatch CLI fixes glibc's mmap threshold, docs/memory.md), and the OpenMP
 * thread count is the caller's again when each batch returns.
 * Errors: every CK_E_* the parts return, with err naming the file, line and field; CK_E_ARG for
 * --resume with stdin or with a different input, options or weights (names the field);
 * CK_E_FORMAT for --resume over a journal changed since its commit (names the file). */
int ck_encode_corpus(const ck_encode_options *opt, ck_encode_summary *summary, ck_error *err);

#endif
