/* batcher.c - length-sorted packing of a bounded window of sequences, and the copy of a batch's
 * ids; no allocation. */
#include "batcher.h"

#include <string.h>

#include "ck_status.h"

/* Stable insertion of index i into order[0..n) sorted by decreasing length: windows are a few
 * hundred sequences, and input order must break ties for determinism. Merge sort is not needed. */
static void sort_longest_first(const size_t *lengths, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && lengths[order[j - 1]] < lengths[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}

int ck_batch_plan(const size_t *lengths, size_t n, size_t max_tokens, size_t *order,
                  ck_batch_span *spans, size_t *n_spans)
{
    if (lengths == NULL || order == NULL || spans == NULL || n_spans == NULL || max_tokens == 0) {
        return CK_E_ARG;
    }
    for (size_t i = 0; i < n; i++) {
        if (lengths[i] == 0 || lengths[i] > max_tokens) {
            return CK_E_SIZE;
        }
    }
    sort_longest_first(lengths, n, order);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = lengths[order[i]];
        if (count == 0 || spans[count - 1].tokens + len > max_tokens) {
            spans[count].first = i;
            spans[count].count = 0;
            spans[count].tokens = 0;
            count++;
        }
        spans[count - 1].count++;
        spans[count - 1].tokens += len;
    }
    *n_spans = count;
    return CK_OK;
}

size_t ck_batch_pack(const int32_t *const *seqs, const size_t *lengths, const size_t *members,
                     size_t count, int32_t *batch_ids, size_t *batch_offsets)
{
    batch_offsets[0] = 0;
    for (size_t k = 0; k < count; k++) {
        size_t i = members[k];
        memcpy(batch_ids + batch_offsets[k], seqs[i], lengths[i] * sizeof *batch_ids);
        batch_offsets[k + 1] = batch_offsets[k] + lengths[i];
    }
    return batch_offsets[count];
}

size_t ck_batch_consecutive(const size_t *offsets, size_t n, size_t first, size_t max_tokens,
                            size_t *batch_offsets)
{
    size_t count = 0, base = first < n ? offsets[first] : 0;
    batch_offsets[0] = 0;
    while (first + count < n && offsets[first + count + 1] - base <= max_tokens) {
        count++;
        batch_offsets[count] = offsets[first + count] - base;
    }
    return count;
}
