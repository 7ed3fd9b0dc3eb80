/* snake.h - the Snake activation of Kokoro's generator: x + sin^2(alpha x) / alpha, alpha per channel. No I/O, no allocation, no threads. */
#ifndef CK_SNAKE_H
#define CK_SNAKE_H

#include <stddef.h>

/* Legend: R rows (frames) of the packed batch, C channels (Kokoro's generator: 256, 128).
 *
 * y[r,c] = x[r,c] + sin(alpha[c] x[r,c])^2 / alpha[c] for rows r of [row_begin, row_end): Kokoro's
 * AdaINResBlock1, x + (1 / alpha) * sin(alpha * x) ** 2 (istftnet.py; SYNTHESIS.md 1.7), alpha the
 * [1, C, 1] parameters alpha1.j / alpha2.j flattened to [C]. Elementwise: no sequence boundaries, and any
 * split of the row range gives the same bits.
 * x, y [R, C] row strides x_stride, y_stride (>= C), y == x (same stride) allowed; alpha [C], non-zero.
 * Numerics: torch's float32 chain, y = fl(x + fl(fl(1 / alpha) * sin^2(fl(alpha x)))), with sin^2 from
 * ck_sin2_f32 (kernels/ck_sin.h: Cephes polynomial, within 1.5e-7 of sin^2 in double; no libm), so
 * within 1.5e-7 / alpha + an ulp of y of the formula in double. Vectorized (SSE2, or AVX-512 where
 * ck_kernels_isa() says so); every element gets the bits of the scalar ck_snake1_f32 whatever the ISA,
 * the row range or the element's place in a vector.
 * Errors, before the first write (y untouched):
 *   CK_E_ARG       null pointer (when the range is not empty), a zero alpha, y overlapping alpha or
 *                  partially overlapping x;
 *   CK_E_RANGE     row_begin > row_end;
 *   CK_E_SIZE      C == 0, a stride below C, a count below its span, overflow;
 *   CK_E_NONFINITE NaN or Inf in the range's x rows or in alpha. */
int ck_snake_f32(const float *x, size_t x_count, size_t x_stride, const float *alpha, size_t alpha_count, float *y,
                 size_t y_count, size_t y_stride, size_t row_begin, size_t row_end, size_t channels);

#endif
