/* concat_cols.h - two row-major blocks side by side: y = [x | z] per row. No I/O, no allocation. */
#ifndef CK_CONCAT_COLS_H
#define CK_CONCAT_COLS_H

#include <stddef.h>

/* y[r, 0:A] = x[r, :], y[r, A:A+B] = z[r, :] for rows r of [row_begin, row_end): torch.cat([x, z],
 * dim=1) on [B, C, L] tensors, i.e. over channels (Kokoro's decoder: cat[asr, F0, N] and
 * cat[x, asr_res, F0, N], istftnet.py:406-418; SYNTHESIS.md 1.6). Rows are independent, so any split
 * of the row range between callers writes disjoint rows. x [R, A] row stride x_stride >= A, z [R, B]
 * row stride z_stride >= B, y [R, A + B] row stride y_stride >= A + B; counts cover row_end rows.
 * Bits are copied (NaN and Inf pass through). Errors, before the first write (y untouched): CK_E_ARG
 * (null when the range is not empty, y overlapping x or z), CK_E_RANGE (row_begin > row_end),
 * CK_E_SIZE (A or B 0, a stride below its width, a count below its span, overflow). */
int ck_concat_cols_f32(const float *x, size_t x_count, size_t x_stride, size_t x_cols,
                       const float *z, size_t z_count, size_t z_stride, size_t z_cols, float *y,
                       size_t y_count, size_t y_stride, size_t row_begin, size_t row_end);

#endif
