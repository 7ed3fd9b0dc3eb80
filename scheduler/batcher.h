/* batcher.h - packs a window of sequences (lengths in input order) into ragged batches of at most
 * max_tokens tokens, longest first inside the window so similar lengths share a batch. Plans
 * indices only: it never sees ids, files or threads. */
#ifndef CK_BATCHER_H
#define CK_BATCHER_H

#include <stddef.h>

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

#endif
