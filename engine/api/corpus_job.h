/* corpus_job.h - what the corpus job (corpus_run.c) shares with the ranks of ckbatch-mpi
 * (corpus_rank.c), so both write the same bytes: the options identity, the metadata entries and
 * the reader options of a run. Private to engine/api. */
#ifndef CK_CORPUS_JOB_H
#define CK_CORPUS_JOB_H

#include <stddef.h>

#include "model_internal.h"
#include "reader.h"

/* "features", "hidden" or "prosody": the layer's name in options and metadata ("?" outside the
 * enum). */
const char *ck_corpus_layer_name(ck_layer layer);

/* Every option that changes the output bytes, as one string ("format=ids lang=en-us ..."), for
 * the resume identity (threads and max_batch_tokens change no bit, so they are not in it). */
void ck_corpus_options_identity(const ck_corpus_params *o, const ck_model *m, char *buf,
                                size_t cap);

/* One metadata entry of the output file; CK_OK or a CK_E_* code with err set. */
typedef int (*ck_corpus_meta_fn)(void *ctx, const char *key, const char *value, ck_error *err);

/* Calls put for every metadata entry a whole run's file carries, in the file's order ("format",
 * "engine", ..., "config"; the writer adds "sequences_format" and "skipped_format" after them).
 * Stops at put's first error and returns it. */
int ck_corpus_meta_each(const ck_corpus_params *opt, const ck_model *m, const ck_reader *reader,
                        int is_stdin, ck_corpus_meta_fn put, void *ctx, ck_error *err);

/* The reader options of a run of opt on model m (its vocab, id rows and longest sequence). */
ck_reader_options ck_corpus_reader_options(const ck_corpus_params *opt, const ck_model *m,
                                           void (*warn)(void *, const char *), void *warn_ctx);

#endif
