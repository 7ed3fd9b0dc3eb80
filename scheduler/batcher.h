/* batcher.h - packs a window of sequences (lengths in input order) into ragged batches of at most
 * max_tokens tokens, longest first inside the window so similar lengths share a batch, and copies a
 * planned batch's ids back to back. Never sees files or threads. */
#ifndef CK_BATCHER_H
#define CK_BATCHER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t first;   /* first position in `order` */
    size_t count;   /* sequences in the batch */
    size_t tokens;  /* sum of their lengths (<= max_tokens) */
} ck_batch_span;

/* Plans batches over n sequences with lengths[n] (tokens each, 1 <= length <= max_tokens).
 * order[n] receives the sequence indices sorted by length, longest first (ties keep input order);
 * spans[n] receives the batches as runs of `order`, *n_spans their number. Deterministic: depends
 * only on lengths and max_tokens. Errors: CK_E_ARG (null, max_tokens 0), CK_E_SIZE (a length of 0
 * or above max_tokens). */
int ck_batch_plan(const size_t *lengths, size_t n, size_t max_tokens, size_t *order,
                  ck_batch_span *spans, size_t *n_spans);

/* Copies the ids of the batch's sequences members[0..count) (sequence i: lengths[i] ids at seqs[i])
 * back to back into batch_ids, in that order, and their bounds into batch_offsets[count + 1]
 * (batch_offsets[0] = 0). batch_ids must hold the span's tokens. Returns the tokens copied. */
size_t ck_batch_pack(const int32_t *const *seqs, const size_t *lengths, const size_t *members,
                     size_t count, int32_t *batch_ids, size_t *batch_offsets);

/* In input order, without copying: how many sequences from `first` of the n bounded by offsets[n +
 * 1] fit one batch of max_tokens (at least one when first < n and that one fits), their bounds
 * relative to offsets[first] in batch_offsets[count + 1]. Returns the count (0 when first >= n or
 * sequence `first` alone is longer than max_tokens). */
size_t ck_batch_consecutive(const size_t *offsets, size_t n, size_t first, size_t max_tokens,
                            size_t *batch_offsets);

#endif
