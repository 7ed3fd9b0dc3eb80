/* ada_layer_norm.h - AdaLayerNorm: LayerNorm over each row's channels, then the style's (1 + gamma), beta. No I/O, no allocation. */
#ifndef CK_ADA_LAYER_NORM_H
#define CK_ADA_LAYER_NORM_H

#include <stddef.h>

/* Legend: R rows of the packed batch (sequence s owns rows [offsets[s], offsets[s+1])), S sequences,
 * C channels (Kokoro's DurationEncoder: 512).
 *
 * For each row r of each sequence s of [seq_begin, seq_end), over the row's C channels:
 *   mean = sum_c x[r,c] / C,  var = sum_c (x[r,c] - mean)^2 / C  (biased)
 *   y[r,c] = (1 + gamma[s,c]) * (x[r,c] - mean) / sqrt(var + eps) + beta[s,c]
 * Kokoro's AdaLayerNorm (modules.py:72-88; SYNTHESIS.md 1.3): F.layer_norm(x, (C,), eps) with no weight
 * or bias, then (1 + gamma) * x + beta with gamma, beta the halves of the style fc (computed elsewhere).
 * Kokoro uses eps 1e-5. Shapes, strides, in-place rule and errors exactly as ck_adain_instance_norm_f32
 * (adain_instance_norm.h). Numerics: mean and the sum of squared deviations accumulate in double,
 * channels in order (two passes); y is evaluated in double and rounded to FP32 once. Each row depends
 * only on itself and its sequence's gamma, beta: the same bits alone, in any batch, for any split. */
int ck_ada_layer_norm_f32(const float *x, size_t x_count, size_t x_stride, const float *gamma, size_t gamma_count,
                          const float *beta, size_t beta_count, float *y, size_t y_count, size_t y_stride,
                          const size_t *offsets, size_t n_seq, size_t seq_begin, size_t seq_end, size_t channels,
                          float eps);

#endif
