/* upsample_nearest2_rows.h - nearest-neighbour x2 upsampling over time: each row written twice. No I/O, no allocation, no threads. */
#ifndef CK_UPSAMPLE_NEAREST2_ROWS_H
#define CK_UPSAMPLE_NEAREST2_ROWS_H

#include <stddef.h>

/* y[2r] = y[2r + 1] = x[r] for rows r of [row_begin, row_end): F.interpolate(x, scale_factor=2,
 * mode='nearest') over the time axis of [B, C, L] (the shortcut of Kokoro's upsampling AdainResBlk1d,
 * istftnet.py:328-337; SYNTHESIS.md 1.5). In a packed batch a sequence at rows [o, o + L) of x lands at
 * rows [2o, 2o + 2L) of y, so no sequence boundaries are needed and any split of the row range between
 * callers writes disjoint rows. x [R, C] row stride x_stride (>= C) needs row_end rows; y [2R, C] row
 * stride y_stride (>= C) needs 2 row_end rows; only columns [0, C) are written. Bits are copied.
 * Errors, before the first write (y untouched): CK_E_ARG (null when the range is not empty, y overlapping
 * x), CK_E_RANGE (row_begin > row_end), CK_E_SIZE (C == 0, a stride below C, a count below its span,
 * overflow). */
int ck_upsample_nearest2_rows_f32(const float *x, size_t x_count, size_t x_stride, float *y, size_t y_count,
                                  size_t y_stride, size_t row_begin, size_t row_end, size_t cols);

#endif
