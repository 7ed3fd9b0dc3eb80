/* residual_layer_norm.h - LayerNorm of a residual sum, y = LN(x + residual), row by row. No I/O, no allocation. */
#ifndef CK_RESIDUAL_LAYER_NORM_H
#define CK_RESIDUAL_LAYER_NORM_H

#include <stddef.h>
#include <stdint.h>

/* y = LayerNorm(x + residual) * gamma + beta over the last axis: s = x + residual (float add, as
 * PyTorch), y = (s - mean) / sqrt(var + eps) * gamma + beta, population variance (HF transformers
 * AlbertAttention: LayerNorm(hidden_states + projected_context); AlbertLayer:
 * full_layer_layer_norm(ffn_output + attention_output); torch.nn.LayerNorm; ALBERT eps 1e-12).
 * Legend: T rows (tokens), C channels (768). x [T,C] row stride x_stride in x_count floats; residual
 * [T,C] stride residual_stride; gamma, beta [C]; y [T,C] stride y_stride; columns [C, stride) of y are
 * never written. FP32 in and out; mean and variance accumulate in double (shifted one-pass sums in 16
 * fixed lanes: bits independent of threads, batch mates and instruction set; layer_norm_row.h),
 * normalisation in double.
 * y may not overlap x or residual (s is staged in y's row); x and residual may overlap each other.
 * Errors, all before the first write (y untouched):
 *   CK_E_ARG       null pointer (when T > 0), eps <= 0 or NaN, y overlapping x, residual, gamma or beta;
 *   CK_E_SIZE      C == 0, a stride < C, span overflow, a count below its span;
 *   CK_E_NONFINITE NaN or Inf in x, residual, gamma or beta, or x + residual overflowing.
 * T == 0 is a no-op returning CK_OK. */
int ck_residual_layer_norm_f32_f64acc(const float *x, size_t x_count, size_t x_stride, const float *residual,
                                      size_t residual_count, size_t residual_stride, const float *gamma,
                                      const float *beta, float *y, size_t y_count, size_t y_stride, size_t rows,
                                      size_t channels, float eps);

/* ck_residual_layer_norm_f32_f64acc, and with y16 not NULL also y16[r, c] = bf16(y[r, c]) (round to nearest
 * even, ck_bf16_from_f32: the bits a bf16 linear's own staging would give) written right after each
 * row, for the bf16 linears that read y (ck_linear_forward_bf16_f32). y16 [T,C] bf16 with row stride
 * y16_stride in y16_count elements. Extra errors, before any write: CK_E_SIZE y16's span over its
 * count, CK_E_ARG y16 overlapping x, residual or y. */
int ck_residual_layer_norm_f32_f32bf16_f64acc(const float *x, size_t x_count, size_t x_stride, const float *residual,
                                              size_t residual_count, size_t residual_stride, const float *gamma,
                                              const float *beta, float *y, size_t y_count, size_t y_stride, uint16_t *y16,
                                              size_t y16_count, size_t y16_stride, size_t rows, size_t channels, float eps);

/* The LayerNorm of bf16 steps: ck_residual_layer_norm_f32_f32bf16_f64acc's arguments, checks, errors (all
 * before the first write) and bf16 copy, with the statistics and the normalisation in float
 * instead of double (layer_norm_row.h, "float statistics"): s = x + residual staged in y, shift
 * K = s[0], mean = K + sum(s - K) / C, var = sum(((s - K) - sum(s - K) / C)^2) / C (two passes over
 * the row in L1, 16 fixed lanes each), y = (s - mean) / sqrtf(var + eps) * gamma + beta. A constant
 * row gives exactly beta. Its bits differ from ck_residual_layer_norm_f32_f64acc's by float rounding
 * (relative ~1e-6, far below bf16's 2^-9 steps: tests/kernels/test_residual_layer_norm.c), and
 * do not depend on threads, batch mates or instruction set.
 * One difference in the errors: x + residual is checked row by row in the pass that stages it (x
 * and residual are read from memory once, not twice), and each row's results are checked too
 * (a float overflow in the statistics). So CK_E_NONFINITE comes after the rows before the bad one
 * are written, and y's contents are then unspecified; every other error is still found before the
 * first write. Callers that need y untouched on CK_E_NONFINITE use ck_residual_layer_norm_f32_f32bf16_f64acc. */
int ck_residual_layer_norm_f32_f32bf16(const float *x, size_t x_count, size_t x_stride, const float *residual,
                                       size_t residual_count, size_t residual_stride, const float *gamma,
                                       const float *beta, float *y, size_t y_count, size_t y_stride, uint16_t *y16,
                                       size_t y16_count, size_t y16_stride, size_t rows, size_t channels, float eps);

#endif
