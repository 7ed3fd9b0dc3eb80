/* ck_check.h - the shared argument checks of every kernel: spans, overlap, finiteness. No I/O, no state. */
#ifndef CK_CHECK_H
#define CK_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ck_status.h"

/* Elements a strided [rows, cols] view needs: (rows - 1) * stride + cols, 0 when rows or cols is 0.
 * Returns 0 and sets *span, or CK_E_SIZE when stride < cols or the product overflows. */
static inline int ck_span(size_t rows, size_t cols, size_t stride, size_t *span)
{
    if (stride < cols) {
        return CK_E_SIZE;
    }
    if (rows == 0 || cols == 0) {
        *span = 0;
        return 0;
    }
    if (rows - 1 > (SIZE_MAX - cols) / (stride ? stride : 1)) {
        return CK_E_SIZE;
    }
    *span = (rows - 1) * stride + cols;
    return 0;
}

/* 1 when a strided [rows, cols] view of `count` elements fits, else 0. */
static inline int ck_span_fits(size_t rows, size_t cols, size_t stride, size_t count)
{
    size_t span;
    return ck_span(rows, cols, stride, &span) == 0 && span <= count;
}

/* 1 when the byte ranges [a, a + a_bytes) and [b, b + b_bytes) overlap. Empty ranges never overlap. */
static inline int ck_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    if (a_bytes == 0 || b_bytes == 0) {
        return 0;
    }
    return pa < pb + b_bytes && pb < pa + a_bytes;
}

/* 1 when every element of the strided [rows, cols] view is finite. */
static inline int ck_all_finite(const float *x, size_t rows, size_t cols, size_t stride)
{
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * stride;
        for (size_t c = 0; c < cols; c++) {
            if (!isfinite(row[c])) {
                return 0;
            }
        }
    }
    return 1;
}

#endif
