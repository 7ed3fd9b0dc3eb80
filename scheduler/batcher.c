/* batcher.c - length-sorted packing of a bounded window of sequences; no allocation. */
#include "batcher.h"

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
