/* conv1d.h - a 'same' 1-D convolution over packed ragged sequences as im2col + linear: the weight
 * packing and the im2col of a row tile (the matmul is ck_linear_forward_f32). No I/O, no allocation. */
#ifndef CK_CONV1D_H
#define CK_CONV1D_H

#include <stddef.h>

/* Legend: R rows of the packed batch (sequence s owns rows [offsets[s], offsets[s+1]), ck_packed.h),
 * Cin input channels, Cout output channels, K taps (odd), pad = (K - 1) / 2.
 *
 * torch.nn.Conv1d(Cin, Cout, K, padding=pad) over one sequence [Cin, L] (Kokoro's TextEncoder cnn:
 * K 5, pad 2, 512 -> 512; SYNTHESIS.md 1.1) is, per output row t:
 *   y[t, o] = b[o] + sum_{j < K, c < Cin} W[o, c, j] x[t + j - pad, c]     (x = 0 outside the sequence)
 * = b + cols[t] . Wp[o] with cols[t, j*Cin + c] = x[t + j - pad, c] and Wp[o, j*Cin + c] = W[o, c, j]:
 * a linear of K*Cin inputs on the im2col rows. */

/* Rows of one im2col tile the engine's conv1d step builds per worker (its scratch: TILE * K * Cin). */
#define CK_CONV1D_TILE_ROWS 64

/* Rows of one im2col tile of a bf16 conv step (precision bf16, frame side): the bf16 linear runs
 * only 256- and 128-row tiles (linear.h: fewer rows are padded to 128), so a 64-row tile would
 * waste half its products; 256 rows keep the f32 tile and its bf16 staging copy in L2. */
#define CK_CONV1D_TILE_ROWS_BF16 256

/* packed [Cout, K*Cin] from w [Cout, Cin, K] (torch Conv1d weight, the folded weight norm):
 * packed[o, j*Cin + c] = w[o, c, j]. A copy, exact.
 * Errors, before any write: CK_E_ARG (null, overlap), CK_E_SIZE (a dim 0, overflow, a count short). */
int ck_conv1d_pack_weight_f32(const float *w, size_t w_count, float *packed, size_t packed_count,
                              size_t cout, size_t cin, size_t taps);

/* cols [rows, K*Cin] (dense) for rows [row, row + rows) of x [R, Cin] (row stride x_stride):
 * cols[r, j*Cin + c] = x[t + j - pad, c] with t = row + r where t + j - pad lies in t's own sequence,
 * else 0 ('same' zero padding per sequence: a sequence never sees its neighbour's rows). The rows may
 * span several sequences. Exact copies, so the conv's bits are the linear's: they do not depend on
 * the tile, the batch or the thread count.
 * Errors, before any write (cols untouched): CK_E_ARG (null pointer, taps even, overlap),
 * CK_E_RANGE (bad offsets, row + rows beyond offsets[n_seq]), CK_E_SIZE (Cin or taps 0, stride below
 * Cin, a count short, overflow), CK_E_NONFINITE (NaN or Inf in the x rows read). */
int ck_conv1d_im2col_f32(const float *x, size_t x_count, size_t x_stride, const size_t *offsets,
                         size_t n_seq, size_t row, size_t rows, size_t cin, size_t taps, float *cols,
                         size_t cols_count);

/* The general form for the generator: cols [rows, K*Cin] for output rows [row, row + rows) of
 * y (the rows may span sequences; sequence s owns in rows [in_offsets[s], in_offsets[s+1]) of x and
 * out rows [out_offsets[s], out_offsets[s+1]) of y):
 *   cols[r, j*Cin + c] = x[in_offsets[s] + i, c] with i = o stride + j dilation - pad, o the row's
 *   index in its sequence, where 0 <= i < the sequence's in rows, else 0
 * (torch.nn.Conv1d(Cin, Cout, K, stride, padding pad, dilation) on each sequence alone; the caller
 * sizes out_offsets by torch's L_out = (L + 2 pad - dilation (K - 1) - 1) / stride + 1). K may be
 * even (Kokoro's noise_convs.0: K 12, stride 6, pad 3). Exact copies: the conv's bits are the
 * linear's, whatever the tile, batch or thread count. cols may be written before CK_E_NONFINITE.
 * Errors: CK_E_ARG (null pointer, overlap), CK_E_RANGE (bad offsets, rows past out_offsets[n_seq]),
 * CK_E_SIZE (Cin, taps, dilation or stride 0, a stride below Cin, a count short, overflow),
 * CK_E_NONFINITE (NaN or Inf in the x rows copied). */
int ck_conv1d_im2col_general_f32(const float *x, size_t x_count, size_t x_stride,
                                 const size_t *in_offsets, const size_t *out_offsets, size_t n_seq,
                                 size_t row, size_t rows, size_t cin, size_t taps, size_t dilation,
                                 size_t stride, size_t pad, float *cols, size_t cols_count);

#endif
