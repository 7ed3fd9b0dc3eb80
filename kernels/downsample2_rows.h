/* downsample2_rows.h - every second row: y[m] = x[2m]. No I/O, no allocation, no threads. */
#ifndef CK_DOWNSAMPLE2_ROWS_H
#define CK_DOWNSAMPLE2_ROWS_H

#include <stddef.h>

/* y[m] = x[2m] for rows m of [row_begin, row_end). With x a 'same'-padded stride-1 Conv1d k 3 over a
 * sequence of 2L rows, y is that conv with stride 2, padding 1 (L rows): both are
 * sum_k w[k] x[2m + k - 1] with the same zero padding at the ends. Kokoro's decoder F0_conv and
 * N_conv (istftnet.py:400-401; SYNTHESIS.md 1.6). In a packed batch a sequence at rows [2o, 2o + 2L)
 * of x lands at rows [o, o + L) of y, so no sequence boundaries are needed. x [2R, C] row stride
 * x_stride (>= C) needs 2 row_end - 1 rows; y [R, C] row stride y_stride (>= C) needs row_end rows;
 * only columns [0, C) are written. Bits are copied. Errors, before the first write (y untouched):
 * CK_E_ARG (null when the range is not empty, y overlapping x), CK_E_RANGE (row_begin > row_end),
 * CK_E_SIZE (C == 0, a stride below C, a count below its span, overflow). */
int ck_downsample2_rows_f32(const float *x, size_t x_count, size_t x_stride, float *y, size_t y_count,
                            size_t y_stride, size_t row_begin, size_t row_end, size_t cols);

#endif
