/* linear_int8.h - the arithmetic around an int8 matmul (the matmul itself is oneDNN's, linear.h):
 * weights quantized once per output channel (symmetric s8), activations per row (asymmetric u8 with
 * the row's own zero point), and the s32 accumulators turned back into f32 with bias. No threads, no
 * I/O, no allocation.
 *
 * Legend: T rows, K in_features, N out_features. The matmul computes acc[t,n] = sum_k xq[t,k] wq[n,k]
 * (u8 x s8, s32 accumulation: AVX512-VNNI VPDPBUSD, AMX-INT8 TDPBUSD); with x ~ sx[t] (xq - zx[t])
 * and w ~ sw[n] wq, y[t,n] = sx[t] sw[n] (acc[t,n] - zx[t] colsum[n]) + b[n], where colsum[n] =
 * sum_k wq[n,k] (the zero point's compensation, exact in int32: |acc|, |zx colsum| <= 255 * 127 * K
 * < 2^31 for K <= 66,000).
 *
 * Every function here computes each row from that row alone with fixed IEEE operations (no FMA
 * contraction, no reduction order: min and max are order-free), so a row's bits depend neither on
 * the rows beside it nor on the ISA path (AVX-512 or portable: tests/kernels/test_linear_int8.c). */
#ifndef CK_LINEAR_INT8_H
#define CK_LINEAR_INT8_H

#include <stddef.h>
#include <stdint.h>

/* Largest K the int8 path accepts (the s32 accumulator and the compensation cannot overflow). */
#define CK_INT8_MAX_K 65536

/* Weight quantization, symmetric per output channel: scale[n] = max_k |w[n,k]| / 127 (1 for an
 * all-zero row), q[n,k] = round_half_even(w[n,k] / scale[n]) in [-127, 127] (computed as
 * w * (127 / max) in float), colsum[n] = sum_k q[n,k].
 * w [N,K] row-major f32 (PyTorch Linear layout); q [N,K] row-major; scale, colsum [N].
 * Errors: CK_E_ARG (a null pointer), CK_E_SIZE (K or N == 0, K > CK_INT8_MAX_K),
 * CK_E_NONFINITE (NaN or Inf in w: nothing written). */
int ck_quantize_weight_f32_i8(const float *w, size_t n_rows, size_t k, int8_t *q, float *scale,
                          int32_t *colsum);

/* Activation quantization, asymmetric per row (the row's range including 0, mapped onto 0..255):
 * lo = min(0, min_k x), hi = max(0, max_k x), scale[t] = (hi - lo) / 255, zero[t] =
 * round_half_even(-lo * 255 / (hi - lo)) in [0, 255], q[t,k] = clamp(round_half_even(x[t,k] *
 * (255 / (hi - lo))) + zero[t], 0, 255); an all-zero row gets scale 1, zero 0, q 0 (so 0 is exact).
 * A row holding NaN or Inf gets scale NaN (so the dequantized row is NaN and the executor's finite
 * check reports it) and some q in range; no error. About half the step of a symmetric s8 row.
 * x [T,K] row stride x_stride >= K; q [T,K] row stride q_stride >= K; scale, zero [T]. The caller
 * checks sizes (an internal kernel: linear.c). */
void ck_quantize_rows_f32_u8(const float *x, size_t x_stride, uint8_t *q, size_t q_stride, size_t rows,
                         size_t k, float *scale, int32_t *zero);

/* y[t,n] = (float)(acc[t,n] - zero[t] colsum[n]) * (scale[t] * w_scale[n]) + bias[n] (bias NULL:
 * no bias), in that order, each operation rounded to f32. acc [T,N] row stride acc_stride; y [T,N]
 * row stride y_stride (acc and y may be the same memory: an s32 row is read before it is written).
 * The caller checks sizes. */
void ck_dequantize_rows_i32_f32(const int32_t *acc, size_t acc_stride, const float *scale,
                            const int32_t *zero, const float *w_scale, const int32_t *colsum,
                            const float *bias, float *y, size_t y_stride, size_t rows, size_t n);

#endif
