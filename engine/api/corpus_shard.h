/* corpus_shard.h - what the corpus job needs to run one shard (corpus_shard.c): the shard's byte
 * range, its file name and the "shard" metadata entry ck_merge_shards reads back. Private to
 * engine/api. */
#ifndef CK_CORPUS_SHARD_H
#define CK_CORPUS_SHARD_H

#include <stdio.h>

#include "ckbatch.h"

/* The metadata key of a shard file's description (absent from every merged or whole-run file). */
#define CK_SHARD_META_KEY "shard"

/* Splits the open input `in` (named input) for shard index/count of p, positions `in` at the
 * range's start, and sets *path to the malloc'd shard file name. Errors: CK_E_ARG (stdin, index
 * out of range), CK_E_IO, CK_E_MEMORY. */
int ck_corpus_shard_open(const ck_corpus_params *p, FILE *in, ck_shard_range *range, char **path,
                         ck_error *err);

/* The "shard" entry's value, compact JSON {"index","count","byte_start","byte_end","first_line",
 * "lines","input_sha256","input_bytes","options","isa"}, malloc'd; NULL when out of memory. */
char *ck_corpus_shard_meta(const ck_corpus_params *p, const ck_shard_range *range,
                           const char *input_sha256, const char *options);

#endif
