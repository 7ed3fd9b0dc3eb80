/* conv_transpose1d_col2im.h - the generator's strided ConvTranspose1d after its GEMM: overlap-add of per-frame columns, padding trim, bias. No I/O, no allocation, no threads. */
#ifndef CK_CONV_TRANSPOSE1D_COL2IM_H
#define CK_CONV_TRANSPOSE1D_COL2IM_H

#include <stddef.h>

/* Legend: R input frames of the packed batch (sequence s owns rows [offsets[s], offsets[s+1]) of z and
 * rows [stride offsets[s], stride offsets[s+1]) of y), S sequences, C output channels, K kernel taps,
 * stride s, padding p with K - s = 2p, so a sequence of L frames gives s L output frames. Kokoro's
 * generator: ups.0 K 20, s 10, p 5, 512 -> 256; ups.1 K 12, s 6, p 3, 256 -> 128 (SYNTHESIS.md 1.7).
 *
 * nn.ConvTranspose1d(Cin, C, K, stride s, padding p) on each sequence alone is
 *   y[o, c] = bias[c] + sum_{l, j: l s + j - p = o} sum_ci x[l, ci] W[ci, c, j]
 * (W the torch weight [Cin, C, K], weight norm folded). The caller does the inner sum as one matmul over
 * all rows, z = x Wt^T with Wt [K C, Cin], Wt[j C + c, ci] = W[ci, c, j] (ck_linear, no bias), so
 *   z [R, K C], z[l, j C + c] = sum_ci x[l, ci] W[ci, c, j],
 * and this kernel does the rest (col2im): for each output frame o of a sequence,
 *   y[o, c] = bias[c] + sum over l ascending, 0 <= l < L, 0 <= j = o + p - l s < K, of z[l, j C + c]
 * (at most ceil(K / s) terms), in double, rounded to FP32 once. Frames never mix across sequences.
 * z row stride z_stride >= K C; y [s R, C] row stride y_stride >= C, columns past C never written.
 * bias [C] or NULL (no bias). Each output row depends only on its own sequence: the same bits alone, in
 * any batch, and for any split of the sequence range.
 * Errors, before the first write (y untouched):
 *   CK_E_ARG       z or y null (range has rows), y overlapping z or bias;
 *   CK_E_RANGE     bad sequence range or decreasing offsets (ck_packed.h);
 *   CK_E_SIZE      C, K or s zero, K < s, K - s odd or != 2p, a stride below its row, a count below its span,
 *                  overflow;
 *   CK_E_NONFINITE NaN or Inf in the range's z rows or in bias. */
int ck_conv_transpose1d_col2im_f32(const float *z, size_t z_count, size_t z_stride, const float *bias,
                                   size_t bias_count, float *y, size_t y_count, size_t y_stride,
                                   const size_t *offsets, size_t n_seq, size_t seq_begin, size_t seq_end,
                                   size_t channels, size_t kernel, size_t stride, size_t padding);

/* Wt [K C, Cin] for the GEMM above from the torch weight w [Cin, C, K] (folded weight norm):
 * Wt[j C + c, ci] = w[ci, c, j]. A copy, exact.
 * Errors, before any write: CK_E_ARG (null, overlap), CK_E_SIZE (a dim 0, a count short, overflow). */
int ck_conv_transpose1d_pack_weight_f32(const float *w, size_t w_count, float *packed, size_t packed_count,
                                        size_t cin, size_t cout, size_t kernel);

/* The same col2im for output frames [out_begin, out_end) of ONE sequence of len input frames, its z
 * rows given as a tile: z row i holds the sequence's frame z_first + i (the tile must hold every frame
 * those outputs read: l from ceil((out_begin + p - K + 1) / s) to floor((out_end - 1 + p) / s), clipped
 * to [0, len)); y [s len, C] the sequence's output rows (row o at y + o y_stride). Same sums in the same
 * order as ck_conv_transpose1d_col2im_f32, so the same bits for any tiling.
 * Errors, before the first write: CK_E_SIZE (as above, or a tile missing a frame read), CK_E_RANGE
 * (out_begin > out_end or out_end > s len), CK_E_ARG (null, y overlapping z), CK_E_NONFINITE. */
int ck_conv_transpose1d_col2im_tile_f32(const float *z, size_t z_count, size_t z_stride, size_t z_first,
                                        size_t len, const float *bias, size_t bias_count, float *y, size_t y_count,
                                        size_t y_stride, size_t out_begin, size_t out_end, size_t channels,
                                        size_t kernel, size_t stride, size_t padding);

#endif
