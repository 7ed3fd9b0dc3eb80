/* ck_packed.h - the shared check of packed ragged sequences (offsets [S+1]) for the speech kernels. No I/O, no state. */
#ifndef CK_PACKED_H
#define CK_PACKED_H

#include <stddef.h>

#include "ck_check.h"
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

/* The [rows, cols] input x and output y of a row kernel: x needs x_rows rows of stride x_stride, y needs
 * y_rows rows of stride y_stride. y may be x exactly (same pointer, stride and rows) when in_place is 1;
 * any other overlap is refused. Errors: CK_E_ARG (null x or y when there are rows, a refused overlap),
 * CK_E_SIZE (a stride below cols, a count below its span, overflow). */
static inline int ck_rows_io_check(const float *x, size_t x_count, size_t x_stride, const float *y, size_t y_count,
                                   size_t y_stride, size_t x_rows, size_t y_rows, size_t cols, int in_place)
{
    size_t xs, ys;
    if (ck_span(x_rows, cols, x_stride, &xs) != 0 || xs > x_count || ck_span(y_rows, cols, y_stride, &ys) != 0 ||
        ys > y_count || xs > SIZE_MAX / sizeof(float) || ys > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if ((xs > 0 && x == NULL) || (ys > 0 && y == NULL)) {
        return CK_E_ARG;
    }
    int same = in_place && x == y && x_stride == y_stride && x_rows == y_rows;
    if (!same && ck_overlap(x, xs * sizeof(float), y, ys * sizeof(float))) {
        return CK_E_ARG;
    }
    return 0;
}

/* Per-sequence [S, cols] parameters (AdaIN's gamma and beta, a speed): rows seq_begin .. seq_end - 1 of
 * p (row stride cols) must fit p_count, be finite, and not overlap y (y_bytes). Errors: CK_E_ARG (null when
 * the range is not empty, overlap with y), CK_E_SIZE, CK_E_NONFINITE. */
static inline int ck_per_sequence_check(const float *p, size_t p_count, const void *y, size_t y_bytes,
                                        size_t seq_begin, size_t seq_end, size_t cols)
{
    size_t span;
    if (seq_begin == seq_end || cols == 0) {
        return 0;
    }
    if (p == NULL) {
        return CK_E_ARG;
    }
    if (ck_span(seq_end, cols, cols, &span) != 0 || span > p_count || span > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (ck_overlap(p, span * sizeof(float), y, y_bytes)) {
        return CK_E_ARG;
    }
    return ck_all_finite(p + seq_begin * cols, seq_end - seq_begin, cols, cols) ? 0 : CK_E_NONFINITE;
}

#endif
