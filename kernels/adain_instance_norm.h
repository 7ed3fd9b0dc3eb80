/* adain_instance_norm.h - AdaIN1d: instance norm over each sequence's frames, then the style's (1 + gamma), beta. No I/O, no allocation. */
#ifndef CK_ADAIN_INSTANCE_NORM_H
#define CK_ADAIN_INSTANCE_NORM_H

#include <stddef.h>

/* Legend: R frames of the packed batch (sequence s owns rows [offsets[s], offsets[s+1])), S sequences,
 * C channels (Kokoro: 512, 256, 514, 1090, 1024, ...).
 *
 * For each sequence s of [seq_begin, seq_end) and each channel c, over that sequence's frames only:
 *   mean = sum_f x[f,c] / L,  var = sum_f (x[f,c] - mean)^2 / L  (biased), L = the sequence's frames
 *   y[f,c] = (1 + gamma[s,c]) * (x[f,c] - mean) / sqrt(var + eps) + beta[s,c]
 * torch.nn.InstanceNorm1d(C, affine=False) (its affine weight and bias are not in Kokoro's checkpoint
 * and stay 1 and 0), inside Kokoro's AdaIN1d (istftnet.py:20-31; SYNTHESIS.md 1.5): gamma, beta are the
 * halves of the style fc, computed elsewhere. Kokoro uses eps 1e-5.
 * x, y [R, C] with row strides x_stride, y_stride (>= C); y == x (same stride) is allowed. gamma, beta
 * [S, C] contiguous, row s for sequence s. Counts must cover offsets[seq_end] rows and seq_end rows.
 * Numerics: x is FP32; mean (first pass) and the sum of squared deviations (second pass) accumulate in
 * double, frames in order; y is evaluated in double and rounded to FP32 once. A one-frame sequence has
 * var 0, so its y is beta (torch refuses one frame in training mode). An empty sequence is skipped.
 * A sequence's rows depend only on its own frames, gamma and beta: the same bits alone, in any batch,
 * and for any split of the sequence range between calls.
 * Errors, all before the first write (y untouched):
 *   CK_E_ARG       null pointer (when the range has rows), eps not finite or <= 0, y partially overlapping
 *                  x or overlapping gamma, beta;
 *   CK_E_RANGE     bad sequence range or decreasing offsets (ck_packed.h);
 *   CK_E_SIZE      C == 0, a stride below C, a count below its span, overflow;
 *   CK_E_NONFINITE NaN or Inf in the range's x rows or its gamma, beta rows. */
int ck_adain_instance_norm_f32(const float *x, size_t x_count, size_t x_stride, const float *gamma,
                               size_t gamma_count, const float *beta, size_t beta_count, float *y, size_t y_count,
                               size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin,
                               size_t seq_end, size_t channels, float eps);

#endif
