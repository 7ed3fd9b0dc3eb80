/* gelu_new.h - the tanh-approximated GELU of HF transformers (NewGELUActivation), elementwise. No I/O, no allocation. */
#ifndef CK_GELU_NEW_H
#define CK_GELU_NEW_H

#include <stddef.h>

/* y[i] = gelu_new(x[i]) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) for i < n (HF transformers
 * activations.py NewGELUActivation; Hendrycks & Gimpel 2016). Computed through the exact identity
 * 0.5 (1 + tanh(u)) = 1 / (1 + e^(-2u)), i.e. y = x / (1 + e^(-2u)), which has no cancellation for
 * negative x; e^z uses ck_exp_f32 with z clamped to [-87, 87], and x < -10 is taken as -10
 * (y = -1.65e-37 there; the true |y| is smaller still). Finite x always gives finite y.
 * x, y [n] contiguous FP32; FP32 arithmetic throughout, vectorized. Accuracy (test_gelu_new, dense
 * sweep of [-20, 20] against the double formula): |y - ref| <= 1e-7 * max(1, |x|), i.e. the
 * implied tanh is within 2e-7 of the double tanh.
 * y == x (exactly in place) is allowed. Errors, before the first write (y untouched):
 *   CK_E_ARG (null pointer when n > 0, partial overlap of x and y), CK_E_SIZE (x_count or y_count < n),
 *   CK_E_NONFINITE (NaN or Inf in x). */
int ck_gelu_new_f32(const float *x, size_t x_count, float *y, size_t y_count, size_t n);

#endif
