/* conv_transpose1d_depthwise_k3s2.h - AdainResBlk1d's upsampling pool: depthwise ConvTranspose1d k 3 s 2, L -> 2L. No I/O, no allocation. */
#ifndef CK_CONV_TRANSPOSE1D_DEPTHWISE_K3S2_H
#define CK_CONV_TRANSPOSE1D_DEPTHWISE_K3S2_H

#include <stddef.h>

/* Legend: R input frames of the packed batch (sequence s owns rows [offsets[s], offsets[s+1]) of x and
 * rows [2 offsets[s], 2 offsets[s+1]) of y), S sequences, C channels (Kokoro: 512 in F0Ntrain, 1090 in
 * the decoder's decode.3).
 *
 * nn.ConvTranspose1d(C, C, kernel_size=3, stride=2, padding=1, output_padding=1, groups=C) on each
 * sequence alone (istftnet.py:340-381, SYNTHESIS.md 1.5): output length 2L, and with y[2i - 1 + k] +=
 * w[k] x[i], per channel c of a sequence of L frames, m = 0 .. L-1:
 *   y[2m, c]     = w[c,1] x[m, c] + b[c]
 *   y[2m + 1, c] = w[c,2] x[m, c] + w[c,0] x[m + 1, c] + b[c]    (the x[m + 1] term only when m + 1 < L)
 * so a sequence never reads its neighbour's frames. weight [C, 3] (torch's [C, 1, 3], weight norm already
 * folded by the caller), bias [C]. x [R, C] row stride x_stride (>= C); y [2R, C] row stride y_stride
 * (>= C), columns [0, C) of rows 2 offsets[seq_begin] .. 2 offsets[seq_end] - 1 written. Counts cover
 * offsets[seq_end] rows of x and 2 offsets[seq_end] rows of y.
 * Numerics: each output is evaluated in double (products and sum) and rounded to FP32 once. Each output
 * row depends only on its own sequence's rows: the same bits alone, in any batch, for any split.
 * Errors, before the first write (y untouched):
 *   CK_E_ARG       null pointer (when the range has rows), y overlapping x, weight or bias;
 *   CK_E_RANGE     bad sequence range or decreasing offsets (ck_packed.h);
 *   CK_E_SIZE      C == 0, a stride below C, a count below its span, overflow;
 *   CK_E_NONFINITE NaN or Inf in the range's x rows, in weight or in bias. */
int ck_conv_transpose1d_depthwise_k3s2_f32(const float *x, size_t x_count, size_t x_stride, const float *weight,
                                           size_t weight_count, const float *bias, size_t bias_count, float *y,
                                           size_t y_count, size_t y_stride, const size_t *offsets, size_t n_seq,
                                           size_t seq_begin, size_t seq_end, size_t channels);

#endif
