/* concat_style.h - each row's channels followed by its sequence's style vector. No I/O, no allocation. */
#ifndef CK_CONCAT_STYLE_H
#define CK_CONCAT_STYLE_H

#include <stddef.h>

/* Legend: R rows of the packed batch (sequence s owns rows [offsets[s], offsets[s+1]), ck_packed.h),
 * S sequences, C channels of x, D style channels (Kokoro: 128, the voice's predictor half).
 *
 * For each row r of each sequence s of [seq_begin, seq_end):
 *   y[r, 0:C] = x[r, :],  y[r, C:C+D] = style[s, :]
 * Kokoro's DurationEncoder, torch.cat([x, s.expand(...)], axis=-1) (modules.py:137-176; SYNTHESIS.md
 * 1.3). Exact copies. x [R, C] row stride x_stride >= C; style [S, D] dense; y [R, C + D] row stride
 * y_stride >= C + D. Counts cover offsets[seq_end] rows (style: seq_end rows).
 * Errors, before the first write (y untouched): CK_E_ARG (null pointer when the range has rows, y
 * overlapping x or style), CK_E_RANGE (bad sequence range, decreasing offsets), CK_E_SIZE (C or D 0,
 * a stride below its width, a count short, overflow), CK_E_NONFINITE (NaN or Inf in the range's x
 * rows or style rows). */
int ck_concat_style_f32(const float *x, size_t x_count, size_t x_stride, const float *style,
                        size_t style_count, size_t style_cols, float *y, size_t y_count,
                        size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin,
                        size_t seq_end, size_t channels);

#endif
