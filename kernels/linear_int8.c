/* linear_int8.c - per-channel weight and per-row activation quantization and the s32 -> f32
 * epilogue of the int8 linear (linear_int8.h). Each hot loop has a portable twin performing the
 * same IEEE operations in the same order, so both give the same bits. */
#include "linear_int8.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "ck_check.h"
#include "ck_isa.h"
#include "ck_status.h"

/* 1.5 * 2^23: (v + M) - M is v rounded to the nearest integer, ties to even, for |v| < 2^22 (the
 * default rounding mode; every value rounded here is within [-256, 256]). */
#define ROUND_MAGIC 12582912.0f

static inline float round_even(float v)
{
    return (v + ROUND_MAGIC) - ROUND_MAGIC; /* not folded: -ffp-contract=off, no -ffast-math */
}

int ck_quantize_weight_f32_i8(const float *w, size_t n_rows, size_t k, int8_t *q, float *scale,
                          int32_t *colsum)
{
    if (w == NULL || q == NULL || scale == NULL || colsum == NULL) {
        return CK_E_ARG;
    }
    if (k == 0 || n_rows == 0 || k > CK_INT8_MAX_K) {
        return CK_E_SIZE;
    }
    if (!ck_all_finite(w, n_rows, k, k)) {
        return CK_E_NONFINITE;
    }
    for (size_t n = 0; n < n_rows; n++) {
        const float *wr = w + n * k;
        float amax = 0.0f;
        for (size_t i = 0; i < k; i++) {
            float a = fabsf(wr[i]);
            amax = a > amax ? a : amax;
        }
        float factor = amax > 0.0f ? 127.0f / amax : 1.0f;
        scale[n] = amax > 0.0f ? amax / 127.0f : 1.0f;
        int32_t sum = 0;
        for (size_t i = 0; i < k; i++) {
            float r = round_even(wr[i] * factor);
            r = r <= 127.0f ? r : 127.0f;
            r = r >= -127.0f ? r : -127.0f;
            q[n * k + i] = (int8_t)(int32_t)r;
            sum += (int32_t)r;
        }
        colsum[n] = sum;
    }
    return CK_OK;
}

/* ---- activations ---- */

/* The row's scale, 255 / range and zero point from its lo <= 0 <= hi; bad: it held NaN or Inf. */
static inline void row_params(float lo, float hi, int bad, float *scale, float *inv, float *zero)
{
    if (bad || !(hi - lo <= 3.4e38f)) { /* NaN, Inf, or a range beyond float */
        *scale = NAN;
        *inv = 0.0f;
        *zero = 0.0f;
    } else if (hi - lo == 0.0f) { /* all zeros */
        *scale = 1.0f;
        *inv = 1.0f;
        *zero = 0.0f;
    } else {
        *scale = (hi - lo) / 255.0f;
        *inv = 255.0f / (hi - lo);
        float z = round_even(-lo * *inv);
        *zero = z <= 255.0f ? z : 255.0f;
    }
}

/* q = clamp(round(x * inv) + zero, 0, 255) for one value (NaN goes to 0). */
static inline uint8_t quantize_one(float x, float inv, float zero)
{
    float r = round_even(x * inv) + zero;
    r = r > 0.0f ? r : 0.0f;
    r = r < 255.0f ? r : 255.0f;
    return (uint8_t)(int32_t)r;
}

static void quantize_rows_portable(const float *x, size_t x_stride, uint8_t *q, size_t q_stride,
                                   size_t rows, size_t k, float *scale, int32_t *zero)
{
    for (size_t t = 0; t < rows; t++) {
        const float *xr = x + t * x_stride;
        float lo = 0.0f, hi = 0.0f;
        int bad = 0;
        for (size_t i = 0; i < k; i++) {
            lo = xr[i] < lo ? xr[i] : lo;
            hi = xr[i] > hi ? xr[i] : hi;
            bad |= xr[i] != xr[i];
        }
        float inv, z;
        row_params(lo, hi, bad, &scale[t], &inv, &z);
        zero[t] = (int32_t)z;
        for (size_t i = 0; i < k; i++) {
            q[t * q_stride + i] = quantize_one(xr[i], inv, z);
        }
    }
}

CK_TARGET_AVX512 static void quantize_rows_avx512(const float *x, size_t x_stride, uint8_t *q,
                                                  size_t q_stride, size_t rows, size_t k,
                                                  float *scale, int32_t *zero)
{
    const __m512 magic = _mm512_set1_ps(ROUND_MAGIC), zero_v = _mm512_setzero_ps(),
                 top = _mm512_set1_ps(255.0f);
    for (size_t t = 0; t < rows; t++) {
        const float *xr = x + t * x_stride;
        __m512 lo_v = zero_v, hi_v = zero_v;
        __mmask16 bad_m = 0;
        size_t i = 0;
        for (; i + 16 <= k; i += 16) {
            __m512 v = _mm512_loadu_ps(xr + i);
            lo_v = _mm512_min_ps(v, lo_v); /* v < lo ? v : lo */
            hi_v = _mm512_max_ps(v, hi_v); /* v > hi ? v : hi */
            bad_m |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        }
        float lo_l[16], hi_l[16];
        _mm512_storeu_ps(lo_l, lo_v);
        _mm512_storeu_ps(hi_l, hi_v);
        float lo = 0.0f, hi = 0.0f;
        int bad = bad_m != 0;
        for (int l = 0; l < 16; l++) {
            lo = lo_l[l] < lo ? lo_l[l] : lo;
            hi = hi_l[l] > hi ? hi_l[l] : hi;
        }
        for (size_t j = i; j < k; j++) {
            lo = xr[j] < lo ? xr[j] : lo;
            hi = xr[j] > hi ? xr[j] : hi;
            bad |= xr[j] != xr[j];
        }
        float inv, z;
        row_params(lo, hi, bad, &scale[t], &inv, &z);
        zero[t] = (int32_t)z;
        const __m512 inv_v = _mm512_set1_ps(inv), z_v = _mm512_set1_ps(z);
        uint8_t *qr = q + t * q_stride;
        for (i = 0; i + 16 <= k; i += 16) {
            __m512 r = _mm512_mul_ps(_mm512_loadu_ps(xr + i), inv_v);
            r = _mm512_sub_ps(_mm512_add_ps(r, magic), magic);
            r = _mm512_add_ps(r, z_v);
            r = _mm512_max_ps(r, zero_v); /* r > 0 ? r : 0: NaN goes to 0 */
            r = _mm512_min_ps(r, top);    /* r < 255 ? r : 255 */
            _mm_storeu_si128((__m128i *)(void *)(qr + i), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(r)));
        }
        for (; i < k; i++) {
            qr[i] = quantize_one(xr[i], inv, z);
        }
    }
}

void ck_quantize_rows_f32_u8(const float *x, size_t x_stride, uint8_t *q, size_t q_stride, size_t rows,
                         size_t k, float *scale, int32_t *zero)
{
    if (ck_kernels_isa_level() == CK_ISA_AVX512) {
        quantize_rows_avx512(x, x_stride, q, q_stride, rows, k, scale, zero);
    } else {
        quantize_rows_portable(x, x_stride, q, q_stride, rows, k, scale, zero);
    }
}

/* ---- the epilogue ---- */

static void dequantize_portable(const int32_t *acc, size_t acc_stride, const float *scale,
                                const int32_t *zero, const float *w_scale, const int32_t *colsum,
                                const float *bias, float *y, size_t y_stride, size_t rows, size_t n)
{
    for (size_t t = 0; t < rows; t++) {
        const int32_t *ar = acc + t * acc_stride;
        float *yr = y + t * y_stride;
        for (size_t j = 0; j < n; j++) {
            float v = (float)(ar[j] - zero[t] * colsum[j]) * (scale[t] * w_scale[j]);
            yr[j] = bias != NULL ? v + bias[j] : v;
        }
    }
}

CK_TARGET_AVX512 static void dequantize_avx512(const int32_t *acc, size_t acc_stride,
                                               const float *scale, const int32_t *zero,
                                               const float *w_scale, const int32_t *colsum,
                                               const float *bias, float *y, size_t y_stride,
                                               size_t rows, size_t n)
{
    for (size_t t = 0; t < rows; t++) {
        const int32_t *ar = acc + t * acc_stride;
        float *yr = y + t * y_stride;
        const __m512i z_v = _mm512_set1_epi32(zero[t]);
        const __m512 s_v = _mm512_set1_ps(scale[t]);
        size_t j = 0;
        for (; j + 16 <= n; j += 16) {
            __m512i d = _mm512_sub_epi32(_mm512_loadu_si512(ar + j),
                                         _mm512_mullo_epi32(z_v, _mm512_loadu_si512(colsum + j)));
            __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(d), _mm512_mul_ps(s_v, _mm512_loadu_ps(w_scale + j)));
            if (bias != NULL) {
                v = _mm512_add_ps(v, _mm512_loadu_ps(bias + j));
            }
            _mm512_storeu_ps(yr + j, v);
        }
        for (; j < n; j++) {
            float v = (float)(ar[j] - zero[t] * colsum[j]) * (scale[t] * w_scale[j]);
            yr[j] = bias != NULL ? v + bias[j] : v;
        }
    }
}

void ck_dequantize_rows_i32_f32(const int32_t *acc, size_t acc_stride, const float *scale,
                            const int32_t *zero, const float *w_scale, const int32_t *colsum,
                            const float *bias, float *y, size_t y_stride, size_t rows, size_t n)
{
    if (ck_kernels_isa_level() == CK_ISA_AVX512) {
        dequantize_avx512(acc, acc_stride, scale, zero, w_scale, colsum, bias, y, y_stride, rows, n);
    } else {
        dequantize_portable(acc, acc_stride, scale, zero, w_scale, colsum, bias, y, y_stride, rows, n);
    }
}
