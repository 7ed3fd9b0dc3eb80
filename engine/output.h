/* output.h - the features file: rows appended in input order to a named, durable partial file
 * beside the output, then one safetensors file (features F32 [T,cols], offsets I64 [S+1], metadata)
 * written to a temporary name and renamed when complete. Nothing is visible at the final path before
 * that. Knows no model and no corpus format.
 *
 * Partial state (all beside PATH, removed when the final file is in place):
 *   PATH.partial       feature rows, f32 little-endian [tokens, cols], appended
 *   PATH.partial.seqs  sequence metadata journal: one JSON object + "," per sequence, appended
 *   PATH.partial.json  progress record, replaced atomically (temp + fsync + rename) at each commit:
 *                      {"version":1, "identity":{...}, "cols", "sequences", "tokens", "rows_bytes",
 *                       "seqs_bytes", "next_line", "next_chunk", "skipped":[...]}
 * Only what a record names is committed: a resumed run truncates both files to the recorded sizes. */
#ifndef CK_OUTPUT_H
#define CK_OUTPUT_H

#include <stddef.h>

#include "ck_error.h"

typedef struct ck_output ck_output;

/* The run's identity: a resumed run must match every field. Strings are not copied by open. */
typedef struct {
    const char *input_sha256;   /* 64 hex of the input file, "" for stdin */
    size_t input_bytes;
    const char *options;        /* every option that changes the bytes, e.g. "format=ids ..." */
    const char *weights;        /* ck_weights_identity */
} ck_output_identity;

/* Where the next sequence to append lies in the input: line (1-based) and chunk (0-based). A fresh
 * run starts at {1, 0}; a resumed one at the record's mark, and sequences before it are dropped. */
typedef struct {
    size_t line, chunk;
} ck_output_mark;

/* Creates (resume 0: truncating any earlier partial state) or reopens (resume 1) the partial files
 * beside `path`. cols: features per token (512, or 768 for the hidden state). On resume the record
 * is validated against `id` and cols, both files are truncated to the committed sizes, sequences
 * and skipped lines committed so far are restored and *mark is set to the record's mark.
 * Errors: CK_E_ARG (resume: the record's identity differs; the message names the field), CK_E_IO
 * (create/open; resume without PATH.partial.json), CK_E_FORMAT (record or journal unreadable or
 * inconsistent with the files; names the field), CK_E_MEMORY. On error *out is NULL. */
int ck_output_open(ck_output **out, const char *path, size_t cols, const ck_output_identity *id,
                   int resume, ck_output_mark *mark, ck_error *err);

/* Appends one sequence: rows [tokens, cols] f32, and its metadata (source line, chunk index,
 * chunks of that line, phoneme string). Not durable until ck_output_commit.
 * Errors: CK_E_IO (write failed, e.g. disk full), CK_E_MEMORY. */
int ck_output_append(ck_output *o, const float *rows, size_t tokens, size_t line, size_t chunk,
                     size_t chunks, const char *phonemes, ck_error *err);

/* Records a skipped line and why (listed in the metadata under "skipped"). Errors: CK_E_MEMORY. */
int ck_output_skip(ck_output *o, size_t line, const char *why, ck_error *err);

/* Sets a string metadata entry (weights identity, g2p version, ...); the value is copied.
 * Errors: CK_E_ARG (more than 16 entries), CK_E_MEMORY. */
int ck_output_meta(ck_output *o, const char *key, const char *value, ck_error *err);

/* Makes everything appended so far durable: flushes and fsyncs both files, then replaces the
 * record (temp + fsync + rename) with `next` as the mark. Errors: CK_E_IO (names the file). */
int ck_output_commit(ck_output *o, ck_output_mark next, ck_error *err);

/* Writes the final file atomically and removes the partial state. Errors: CK_E_IO, CK_E_MEMORY;
 * on error no file at path changes and the partial state of the last commit stays. */
int ck_output_finish(ck_output *o, ck_error *err);

/* Removes the partial files (a run that can never be resumed, e.g. a bad line under stop). */
void ck_output_discard(ck_output *o);

/* Sequences and tokens appended so far; commits made by this run. */
size_t ck_output_sequences(const ck_output *o);
size_t ck_output_tokens(const ck_output *o);
size_t ck_output_commits(const ck_output *o);

/* Closes the files and releases the output (the partial files stay); accepts NULL. */
void ck_output_free(ck_output *o);

#endif
