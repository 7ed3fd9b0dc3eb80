/* layer_norm_row.h - the shared LayerNorm of one row of a two- or three-term sum; kernels only. No checks, no I/O.
 * Two passes over the row: pass 1 stages the sum in y and accumulates the statistics, pass 2 normalises
 * y in place. Each pass has a portable loop and an AVX-512 loop (compiled with CK_TARGET_AVX512, run
 * only where ck_isa.h says the CPU has it) that performs the same IEEE operations on the same lanes
 * in the same order, so both give identical bits (tests/kernels/test_layer_norm_row.c compares them).
 * That needs every multiply and add rounded on its own: the build passes -ffp-contract=off
 * (cmake/CkFlags.cmake), and clang also gets the pragma below in case a caller's build does not. */
#ifndef CK_LAYER_NORM_ROW_H
#define CK_LAYER_NORM_ROW_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <immintrin.h>

#include "ck_dtype.h"
#include "ck_isa.h"
#include "ck_status.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Independent double accumulators per statistic. Element i always goes to lane i % CK_LN_LANES and
 * the lanes are reduced in one fixed tree, so a row's bits depend on the row alone (not on threads,
 * batch mates, alignment or instruction set); 16 lanes are 2 AVX-512 registers per statistic. */
#define CK_LN_LANES 16

/* Lane sums of d = s - shift and d^2 over the elements pass 1 has seen. */
typedef struct {
    double sum[CK_LN_LANES], sq[CK_LN_LANES];
} ck_ln_lanes;

/* The row's staged value: (a + b) + c in float (HF AlbertEmbeddings' order), or a + b when c is NULL
 * (the residual sum, as PyTorch adds it). */
static inline float ck_ln_term(const float *a, const float *b, const float *c, size_t i)
{
    return c != NULL ? (a[i] + b[i]) + c[i] : a[i] + b[i];
}

/* Pass 1, portable, elements [from, n) with `from` a multiple of CK_LN_LANES: y[i] = term(i), and
 * lane i % CK_LN_LANES accumulates d = term(i) - shift and d^2. */
static inline void ck_ln_stage_portable(float *restrict y, const float *a, const float *b, const float *c,
                                        size_t from, size_t n, double shift, ck_ln_lanes *acc)
{
    for (size_t i = from; i < n; i++) {
        float s = ck_ln_term(a, b, c, i);
        double d = (double)s - shift;
        y[i] = s;
        acc->sum[i % CK_LN_LANES] += d;
        acc->sq[i % CK_LN_LANES] += d * d;
    }
}

/* Pass 2, portable, elements [from, n): y[i] = (y[i] - mean) * rstd * gamma[i] + beta[i] in double,
 * rounded to float once. */
static inline void ck_ln_normalize_portable(float *restrict y, const float *gamma, const float *beta, size_t from,
                                            size_t n, double mean, double rstd)
{
    for (size_t i = from; i < n; i++) {
        y[i] = (float)(((double)y[i] - mean) * rstd * (double)gamma[i] + (double)beta[i]);
    }
}

/* Pass 1 over whole blocks of 16: lanes 0-7 are the block's low half, 8-15 its high half (as
 * i % 16); the remainder goes through the portable loop, which continues the same lanes. */
CK_TARGET_AVX512 static inline void ck_ln_stage_avx512(float *restrict y, const float *a, const float *b,
                                                       const float *c, size_t n, double shift, ck_ln_lanes *acc)
{
    size_t full = n - n % CK_LN_LANES;
    __m512d k = _mm512_set1_pd(shift), sum_lo = _mm512_setzero_pd(), sum_hi = sum_lo, sq_lo = sum_lo,
            sq_hi = sum_lo;
    for (size_t i = 0; i < full; i += CK_LN_LANES) {
        __m512 s = _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
        if (c != NULL) {
            s = _mm512_add_ps(s, _mm512_loadu_ps(c + i));
        }
        _mm512_storeu_ps(y + i, s);
        __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1));
        __m512d d_lo = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(s)), k);
        __m512d d_hi = _mm512_sub_pd(_mm512_cvtps_pd(hi), k);
        sum_lo = _mm512_add_pd(sum_lo, d_lo);
        sum_hi = _mm512_add_pd(sum_hi, d_hi);
        sq_lo = _mm512_add_pd(sq_lo, _mm512_mul_pd(d_lo, d_lo));
        sq_hi = _mm512_add_pd(sq_hi, _mm512_mul_pd(d_hi, d_hi));
    }
    _mm512_storeu_pd(acc->sum, sum_lo);
    _mm512_storeu_pd(acc->sum + 8, sum_hi);
    _mm512_storeu_pd(acc->sq, sq_lo);
    _mm512_storeu_pd(acc->sq + 8, sq_hi);
    ck_ln_stage_portable(y, a, b, c, full, n, shift, acc);
}

/* Pass 2 eight elements at a time in double (as the portable loop: sub, mul, mul, add, one rounding). */
CK_TARGET_AVX512 static inline void ck_ln_normalize_avx512(float *restrict y, const float *gamma,
                                                           const float *beta, size_t n, double mean, double rstd)
{
    size_t full = n - n % 8;
    __m512d m = _mm512_set1_pd(mean), r = _mm512_set1_pd(rstd);
    for (size_t i = 0; i < full; i += 8) {
        __m512d t = _mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(y + i)), m), r);
        t = _mm512_mul_pd(t, _mm512_cvtps_pd(_mm256_loadu_ps(gamma + i)));
        t = _mm512_add_pd(t, _mm512_cvtps_pd(_mm256_loadu_ps(beta + i)));
        _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(t));
    }
    ck_ln_normalize_portable(y, gamma, beta, full, n, mean, rstd);
}

/* Fixed-order pairwise reduction of CK_LN_LANES partial sums (destroys them). */
static inline double ck_ln_reduce(double *lane)
{
    for (size_t width = CK_LN_LANES / 2; width > 0; width /= 2) {
        for (size_t l = 0; l < width; l++) {
            lane[l] += lane[l + width];
        }
    }
    return lane[0];
}

/* Pass 1 on the path `isa` names (a level this CPU runs: ck_kernels_isa_level or ck_isa_clamp). */
static inline void ck_ln_stage(float *restrict y, const float *a, const float *b, const float *c, size_t n,
                               double shift, ck_ln_lanes *acc, ck_isa isa)
{
    if (isa == CK_ISA_AVX512) {
        ck_ln_stage_avx512(y, a, b, c, n, shift, acc);
    } else {
        ck_ln_stage_portable(y, a, b, c, 0, n, shift, acc);
    }
}

/* Pass 2, chosen as pass 1. */
static inline void ck_ln_normalize(float *restrict y, const float *gamma, const float *beta, size_t n,
                                   double mean, double rstd, ck_isa isa)
{
    if (isa == CK_ISA_AVX512) {
        ck_ln_normalize_avx512(y, gamma, beta, n, mean, rstd);
    } else {
        ck_ln_normalize_portable(y, gamma, beta, 0, n, mean, rstd);
    }
}

/* y[i] = LayerNorm(s)[i] = (s[i] - mean) / sqrt(var + eps) * gamma[i] + beta[i] over i < n (n >= 1),
 * population variance (torch.nn.LayerNorm), s[i] = ck_ln_term(a, b, c, i) rounded to float.
 * Statistics in double from ONE pass of shifted sums (Chan, Golub & LeVeque 1983, "Algorithms for
 * computing the sample variance"): with K = s[0] and d = s - K, mean = K + sum(d)/n and
 * var = sum(d^2)/n - (sum(d)/n)^2. The cancellation is bounded because K is a sample:
 * (mean - K)^2 <= n var, so sum(d^2)/n <= (n + 1) var and the relative error of var is about
 * (2n + 1) * 2^-53 (~1.7e-13 at n = 768) plus the lane sums' own, far below float resolution even for
 * rows like 1e4 + noise. Pass 2 normalises in double and rounds to float once.
 * `isa` is a compile-time constant in both wrappers below, so each keeps only its own passes.
 * y must not overlap a, b, c, gamma or beta; the caller has checked every term finite and eps > 0. */
CK_ALWAYS_INLINE void ck_ln_row_body(float *restrict y, const float *a, const float *b, const float *c,
                                     const float *gamma, const float *beta, size_t n, float eps, ck_isa isa)
{
    ck_ln_lanes acc = {{0}, {0}};
    double shift = (double)ck_ln_term(a, b, c, 0);
    ck_ln_stage(y, a, b, c, n, shift, &acc, isa);
    double mean_d = ck_ln_reduce(acc.sum) / (double)n;
    double var = ck_ln_reduce(acc.sq) / (double)n - mean_d * mean_d;
    double rstd = 1.0 / sqrt((var > 0.0 ? var : 0.0) + (double)eps);
    ck_ln_normalize(y, gamma, beta, n, shift + mean_d, rstd, isa);
}

/* The row on the portable loops. */
static inline void ck_layer_norm_row_portable(float *restrict y, const float *a, const float *b, const float *c,
                                              const float *gamma, const float *beta, size_t n, float eps)
{
    ck_ln_row_body(y, a, b, c, gamma, beta, n, eps, CK_ISA_PORTABLE);
}

/* The row on the AVX-512 loops (only where ck_cpu_isa() is CK_ISA_AVX512). */
CK_TARGET_AVX512 static inline void ck_layer_norm_row_avx512(float *restrict y, const float *a, const float *b,
                                                             const float *c, const float *gamma,
                                                             const float *beta, size_t n, float eps)
{
    ck_ln_row_body(y, a, b, c, gamma, beta, n, eps, CK_ISA_AVX512);
}

/* The row on the path `isa` names (a level this CPU runs: ck_kernels_isa_level or ck_isa_clamp). */
static inline void ck_layer_norm_row_impl(float *restrict y, const float *a, const float *b, const float *c,
                                          const float *gamma, const float *beta, size_t n, float eps,
                                          ck_isa isa)
{
    if (isa == CK_ISA_AVX512) {
        ck_layer_norm_row_avx512(y, a, b, c, gamma, beta, n, eps);
    } else {
        ck_layer_norm_row_portable(y, a, b, c, gamma, beta, n, eps);
    }
}

/* The LayerNorm row the kernels use: ck_layer_norm_row_impl on the level chosen at run time. */
static inline void ck_layer_norm_row_f32(float *restrict y, const float *a, const float *b, const float *c,
                                         const float *gamma, const float *beta, size_t n, float eps)
{
    ck_layer_norm_row_impl(y, a, b, c, gamma, beta, n, eps, ck_kernels_isa_level());
}

/* ---- float statistics (the LayerNorm of bf16 steps: ck_residual_layer_norm_f32_f32bf16) ----
 *
 * The same LayerNorm of a + b with everything in float: three passes over the row, the last two
 * over y while it is in L1. With K = s[0] and d = s - K (shifted, so a constant row has d = 0 and
 * gives exactly beta): pass 1 stages s in y and sums d; mean_d = sum / n; pass 2 sums
 * e^2 with e = (y - K) - mean_d (two-pass variance); pass 3 writes
 * y = e * rstd * gamma + beta (multiply, multiply, add: no FMA), rstd = 1 / sqrtf(var + eps), and
 * its bf16 copy. Each sum runs in CK_LN_LANES float lanes (element i in lane i % CK_LN_LANES)
 * reduced in ck_ln32_reduce's fixed tree, so the portable and AVX-512 loops give the same bits. */

/* Fixed-order pairwise reduction of CK_LN_LANES float partial sums (destroys them). */
static inline float ck_ln32_reduce(float *lane)
{
    for (size_t width = CK_LN_LANES / 2; width > 0; width /= 2) {
        for (size_t l = 0; l < width; l++) {
            lane[l] += lane[l + width];
        }
    }
    return lane[0];
}

/* Pass 1, portable, from `from` (a multiple of CK_LN_LANES): y[i] = a[i] + b[i], lane sums of y[i] - k.
 * Returns the sum of y[i] - y[i]: 0 when every staged value is finite, else NaN. */
static inline float ck_ln32_stage_portable(float *restrict y, const float *a, const float *b, size_t from,
                                           size_t n, float k, float *sum)
{
    float bad = 0.0f;
    for (size_t i = from; i < n; i++) {
        float s = a[i] + b[i];
        y[i] = s;
        sum[i % CK_LN_LANES] += s - k;
        bad += s - s;
    }
    return bad;
}

/* Pass 2, portable: lane sums of e^2, e = (y[i] - k) - mean_d. */
static inline void ck_ln32_square_portable(const float *y, size_t from, size_t n, float k, float mean_d, float *sq)
{
    for (size_t i = from; i < n; i++) {
        float e = (y[i] - k) - mean_d;
        sq[i % CK_LN_LANES] += e * e;
    }
}

/* Pass 3, portable: y[i] = e * rstd * gamma[i] + beta[i] and, with y16, its bf16 copy. Returns the
 * sum of y[i] - y[i] (NaN once a result is not finite: a float overflow in the statistics). */
static inline float ck_ln32_normalize_portable(float *restrict y, uint16_t *restrict y16, const float *gamma,
                                               const float *beta, size_t from, size_t n, float k, float mean_d,
                                               float rstd)
{
    float bad = 0.0f;
    for (size_t i = from; i < n; i++) {
        float v = (((y[i] - k) - mean_d) * rstd) * gamma[i] + beta[i];
        y[i] = v;
        bad += v - v;
        if (y16 != NULL) {
            y16[i] = ck_bf16_from_f32(v);
        }
    }
    return bad;
}

/* bf16(v) for 16 floats (round to nearest even, quiet NaN: ck_bf16_from_f32) in AVX-512F integer
 * lanes, as ck_bf16_from_f32_rows does (not VCVTNEPS2BF16, which flushes denormals). */
CK_TARGET_AVX512 static inline __m256i ck_ln32_bf16_avx512(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x0040));
    return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));
}

/* The three passes, 16 elements (one per lane) per step; the remainder continues in the portable
 * loops on the same lanes. Returns 0, or CK_E_NONFINITE when an element of a + b is NaN or Inf
 * (after pass 1) or a result is not (after pass 3); y's row is then partly written. The checks
 * ride on the passes that load and store the row, so a and b are read from memory once. */
CK_TARGET_AVX512 static inline int ck_ln32_row_avx512(float *restrict y, uint16_t *restrict y16, const float *a,
                                                      const float *b, const float *gamma, const float *beta,
                                                      size_t n, float eps)
{
    const size_t full = n - n % CK_LN_LANES;
    const float k = a[0] + b[0];
    const __m512 vk = _mm512_set1_ps(k);
    float sum[CK_LN_LANES], sq[CK_LN_LANES];
    __m512 acc = _mm512_setzero_ps(), bad = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += CK_LN_LANES) {
        __m512 s = _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
        _mm512_storeu_ps(y + i, s);
        acc = _mm512_add_ps(acc, _mm512_sub_ps(s, vk));
        bad = _mm512_add_ps(bad, _mm512_sub_ps(s, s));
    }
    _mm512_storeu_ps(sum, acc);
    if (ck_ln32_stage_portable(y, a, b, full, n, k, sum) != 0.0f || _mm512_reduce_add_ps(bad) != 0.0f) {
        return CK_E_NONFINITE;
    }
    const float mean_d = ck_ln32_reduce(sum) / (float)n;
    const __m512 vm = _mm512_set1_ps(mean_d);
    acc = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += CK_LN_LANES) {
        __m512 e = _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(y + i), vk), vm);
        acc = _mm512_add_ps(acc, _mm512_mul_ps(e, e));
    }
    _mm512_storeu_ps(sq, acc);
    ck_ln32_square_portable(y, full, n, k, mean_d, sq);
    const float var = ck_ln32_reduce(sq) / (float)n;
    const float rstd = 1.0f / sqrtf(var + eps);
    const __m512 vr = _mm512_set1_ps(rstd);
    bad = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += CK_LN_LANES) {
        __m512 e = _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(y + i), vk), vm);
        __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(e, vr), _mm512_loadu_ps(gamma + i)),
                                 _mm512_loadu_ps(beta + i));
        _mm512_storeu_ps(y + i, v);
        bad = _mm512_add_ps(bad, _mm512_sub_ps(v, v));
        if (y16 != NULL) {
            _mm256_storeu_si256((__m256i *)(void *)(y16 + i), ck_ln32_bf16_avx512(v));
        }
    }
    if (ck_ln32_normalize_portable(y, y16, gamma, beta, full, n, k, mean_d, rstd) != 0.0f ||
        _mm512_reduce_add_ps(bad) != 0.0f) {
        return CK_E_NONFINITE;
    }
    return 0;
}

/* The three passes on the portable loops; returns as ck_ln32_row_avx512. */
static inline int ck_ln32_row_portable(float *restrict y, uint16_t *restrict y16, const float *a, const float *b,
                                       const float *gamma, const float *beta, size_t n, float eps)
{
    const float k = a[0] + b[0];
    float sum[CK_LN_LANES] = {0}, sq[CK_LN_LANES] = {0};
    if (ck_ln32_stage_portable(y, a, b, 0, n, k, sum) != 0.0f) {
        return CK_E_NONFINITE;
    }
    const float mean_d = ck_ln32_reduce(sum) / (float)n;
    ck_ln32_square_portable(y, 0, n, k, mean_d, sq);
    const float var = ck_ln32_reduce(sq) / (float)n;
    return ck_ln32_normalize_portable(y, y16, gamma, beta, 0, n, k, mean_d, 1.0f / sqrtf(var + eps)) != 0.0f
               ? CK_E_NONFINITE : 0;
}

#endif
