/* layer_norm.h - LayerNorm over the channels of each row, y = LN(x) * gamma + beta. No I/O, no allocation. */
#ifndef CK_LAYER_NORM_H
#define CK_LAYER_NORM_H

#include <stddef.h>

/* Legend: R rows (tokens of the packed batch), C channels.
 *
 * y[r, c] = (x[r, c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c], with mean_r and the biased
 * var_r of row r over its C channels (torch.nn.functional.layer_norm over the last axis; Kokoro's
 * channel LayerNorm, modules.py LayerNorm, transposes [B, C, T] so that it is this over C per token,
 * SYNTHESIS.md 1.1, eps 1e-5).
 * Numerics: mean and var accumulate in double in channel order (two passes: sum, then the squared
 * deviations), y in double rounded to float once; a row's bits depend on that row alone.
 * x [R, C] row stride x_stride >= C in x_count elements; y likewise; gamma, beta [C]. y == x with
 * equal strides (exactly in place) is allowed, any other overlap is not.
 * Errors, before the first write (y untouched):
 *   CK_E_ARG (null pointer when rows > 0, gamma or beta null, partial overlap, eps not finite or <= 0),
 *   CK_E_SIZE (C == 0, a stride below C, a count below its span, overflow),
 *   CK_E_NONFINITE (NaN or Inf in x, gamma or beta). */
int ck_layer_norm_f32_f64acc(const float *x, size_t x_count, size_t x_stride, const float *gamma,
                             const float *beta, float *y, size_t y_count, size_t y_stride,
                             size_t rows, size_t channels, float eps);

#endif
