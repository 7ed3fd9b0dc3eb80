/* output.h - the features file: rows appended in input order to a spool in the output's directory,
 * then one safetensors file (features F32 [T,cols], offsets I64 [S+1], metadata) written to a
 * temporary name and renamed when complete. Nothing is visible at the final path before that. */
#ifndef CK_OUTPUT_H
#define CK_OUTPUT_H

#include <stddef.h>

#include "ck_error.h"

typedef struct ck_output ck_output;

/* Opens the spool beside `path` (unlinked at once, so a crash leaves nothing behind).
 * cols: features per token (512, or 768 for the hidden state). Errors: CK_E_IO, CK_E_MEMORY. */
int ck_output_open(ck_output **out, const char *path, size_t cols, ck_error *err);

/* Appends one sequence: rows [tokens, cols] f32, and its metadata (source line, chunk index,
 * chunks of that line, phoneme string). Errors: CK_E_IO (spool write), CK_E_MEMORY. */
int ck_output_append(ck_output *o, const float *rows, size_t tokens, size_t line, size_t chunk,
                     size_t chunks, const char *phonemes, ck_error *err);

/* Records a skipped line and why (listed in the metadata under "skipped"). */
int ck_output_skip(ck_output *o, size_t line, const char *why, ck_error *err);

/* Sets a string metadata entry (weights identity, g2p version, ...); the value is copied. */
int ck_output_meta(ck_output *o, const char *key, const char *value, ck_error *err);

/* Writes the final file atomically. Errors: CK_E_IO, CK_E_MEMORY; on error no file at path changes. */
int ck_output_finish(ck_output *o, ck_error *err);

/* Sequences and tokens appended so far. */
size_t ck_output_sequences(const ck_output *o);
size_t ck_output_tokens(const ck_output *o);

/* Releases the output (the spool vanishes with it); accepts NULL. */
void ck_output_free(ck_output *o);

#endif
