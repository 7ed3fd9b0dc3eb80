/* adain_snake.h - AdaIN1d then Snake in one pass (the generator's AdaINResBlock1: norm, affine, x + sin^2(a x)/a). No I/O, no allocation, no threads. */
#ifndef CK_ADAIN_SNAKE_H
#define CK_ADAIN_SNAKE_H

#include <stddef.h>

/* Legend: as ck_adain_instance_norm_f32 (adain_instance_norm.h): R frames of the packed batch, sequence s
 * owning rows [offsets[s], offsets[s+1]), S sequences, C channels (Kokoro's generator: 256, 128).
 *
 * The first two steps of each AdaINResBlock1 branch (istftnet.py:34-77; SYNTHESIS.md 1.7), fused so the
 * activation is read twice for the statistics and written once:
 *   t[f,c] = fl((1 + gamma[s,c]) (x[f,c] - mean) / sqrt(var + eps) + beta[s,c])      (AdaIN1d, as
 *            ck_adain_instance_norm_f32: statistics over the sequence's frames in double, ck_instance_stats.h)
 *   y[f,c] = ck_snake1_f32(t, alpha[c]) = fl(t + fl(fl(1/alpha[c]) sin^2(fl(alpha[c] t))))  (Snake, as ck_snake_f32)
 * t is rounded to FP32 before the Snake as torch's two ops round it, so y is bit for bit
 * ck_adain_instance_norm_f32 followed by ck_snake_f32 (the test checks it).
 * x, y [R, C] row strides x_stride, y_stride (>= C), y == x (same stride) allowed; gamma, beta [S, C]
 * (the style fc's halves), alpha [C] (alpha1.j / alpha2.j), eps > 0 (Kokoro 1e-5). A sequence's rows
 * depend only on its own frames: the same bits alone, in any batch, and for any split of the range.
 * Errors, before the first write (y untouched): those of ck_adain_instance_norm_f32, and CK_E_ARG for a
 * null or zero alpha or one overlapping y, CK_E_SIZE for alpha_count < C, CK_E_NONFINITE for NaN or Inf
 * in alpha. */
int ck_adain_snake_f32(const float *x, size_t x_count, size_t x_stride, const float *gamma, size_t gamma_count,
                       const float *beta, size_t beta_count, const float *alpha, size_t alpha_count, float *y,
                       size_t y_count, size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin,
                       size_t seq_end, size_t channels, float eps);

#endif
