/* ck_packed.h - the shared check of packed ragged sequences (offsets [S+1]) for the speech kernels. No I/O, no state. */
#ifndef CK_PACKED_H
#define CK_PACKED_H

#include <stddef.h>

#include "ck_status.h"

/* Packed ragged layout: sequence s owns rows [offsets[s], offsets[s+1]) of a [rows, C] buffer, the
 * sequences back to back. A kernel is called for sequences [seq_begin, seq_end) of n_seq; this checks
 * that range and that offsets[seq_begin .. seq_end] never decreases. *rows_end is set to
 * offsets[seq_end] (0 for an empty range), the rows the call's buffers must cover.
 * Errors: CK_E_ARG (offsets or rows_end null), CK_E_RANGE (seq_begin > seq_end, seq_end > n_seq,
 * a decreasing offset). */
static inline int ck_packed_check(const size_t *offsets, size_t n_seq, size_t seq_begin, size_t seq_end,
                                  size_t *rows_end)
{
    if (offsets == NULL || rows_end == NULL) {
        return CK_E_ARG;
    }
    if (seq_begin > seq_end || seq_end > n_seq) {
        return CK_E_RANGE;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        if (offsets[s + 1] < offsets[s]) {
            return CK_E_RANGE;
        }
    }
    *rows_end = seq_begin < seq_end ? offsets[seq_end] : 0;
    return 0;
}

#endif
