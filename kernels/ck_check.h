/* ck_check.h - the shared argument checks of every kernel: spans, overlap, finiteness. No I/O, no state. */
#ifndef CK_CHECK_H
#define CK_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* Finiteness without a branch per element: the IEEE-754 bits of |v| (sign cleared) are >=
 * CK_F32_INF_BITS exactly when v is +-Inf or NaN (exponent all ones). A running unsigned max of them
 * is an exact, order-free reduction, so the compiler vectorises it (vpmaxud) with no -ffast-math,
 * and the caller tests once at the end instead of branching on every element. */
#define CK_F32_INF_BITS 0x7f800000u

/* The bits of |v|, as above. */
static inline uint32_t ck_f32_abs_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u & 0x7fffffffu;
}

/* max(worst, ck_f32_abs_bits(v)): the step of every finiteness probe. */
static inline uint32_t ck_finite_probe(uint32_t worst, float v)
{
    uint32_t u = ck_f32_abs_bits(v);
    return u > worst ? u : worst;
}

/* 1 when every element of the strided [rows, cols] view is finite. Reads every element (no early
 * exit): the error path is rare and the branch-free scan is several times faster. */
static inline int ck_all_finite(const float *x, size_t rows, size_t cols, size_t stride)
{
    uint32_t worst = 0;
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * stride;
        for (size_t c = 0; c < cols; c++) {
            worst = ck_finite_probe(worst, row[c]);
        }
    }
    return worst < CK_F32_INF_BITS;
}

#endif
