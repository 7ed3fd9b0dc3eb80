/* leaky_relu.h - the leaky ReLU (torch.nn.LeakyReLU), elementwise. No I/O, no allocation. */
#ifndef CK_LEAKY_RELU_H
#define CK_LEAKY_RELU_H

#include <stddef.h>

/* y[i] = x[i] if x[i] >= 0, else slope * x[i], for i < n (torch.nn.functional.leaky_relu with
 * negative_slope = slope: one float multiply, so the bits are torch's; -0 stays -0).
 * x, y [n] contiguous FP32. y == x (exactly in place) is allowed. Errors, before the first write
 * (y untouched):
 *   CK_E_ARG (null pointer when n > 0, partial overlap of x and y, slope not finite),
 *   CK_E_SIZE (x_count or y_count < n), CK_E_NONFINITE (NaN or Inf in x). */
int ck_leaky_relu_f32(const float *x, size_t x_count, float *y, size_t y_count, size_t n,
                      float slope);

#endif
