/* add_scaled.h - a residual sum times a constant, elementwise: AdainResBlk1d's output. No I/O, no
 * allocation. */
#ifndef CK_ADD_SCALED_H
#define CK_ADD_SCALED_H

#include <stddef.h>

/* y[i] = (x[i] + residual[i]) * scale for i < n, both operations in float (one rounding each), as
 * torch's `(out + self._shortcut(x)) * torch.rsqrt(torch.tensor(2.0))` in Kokoro's AdainResBlk1d
 * (istftnet.py:380; SYNTHESIS.md 1.5; scale = rsqrt(2) rounded to float, 0x1.6a09e6p-1).
 * x, residual, y [n] contiguous FP32; y may equal x or residual exactly (in place), no other
 * overlap. Errors, before the first write (y untouched):
 *   CK_E_ARG (null pointer when n > 0, partial overlap of y with x or residual, scale not finite),
 *   CK_E_SIZE (a count < n), CK_E_NONFINITE (NaN or Inf in x or residual). */
int ck_add_scaled_f32(const float *x, size_t x_count, const float *residual, size_t residual_count,
                      float *y, size_t y_count, size_t n, float scale);

#endif
