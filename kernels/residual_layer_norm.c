/* residual_layer_norm.c - y = LayerNorm(x + residual) row by row, staging the sum in y. No allocation, no I/O. */
#include "residual_layer_norm.h"

#include <stdint.h>

#include "ck_check.h"
#include "ck_dtype.h"
#include "ck_isa.h"
#include "layer_norm_row.h"

/* Span of a strided [rows, C] view, checked against its count. */
static int span_within(size_t rows, size_t channels, size_t stride, size_t count, size_t *span)
{
    return ck_span(rows, channels, stride, span) == 0 && *span <= count ? 0 : CK_E_SIZE;
}

static int check_geometry(const float *x, size_t x_count, size_t x_stride, const float *residual,
                          size_t residual_count, size_t residual_stride, const float *gamma, const float *beta,
                          const float *y, size_t y_count, size_t y_stride, size_t rows, size_t channels)
{
    size_t xs, rs, ys;
    if (gamma == NULL || beta == NULL || (rows > 0 && (x == NULL || residual == NULL || y == NULL))) {
        return CK_E_ARG;
    }
    if (channels == 0 || span_within(rows, channels, x_stride, x_count, &xs) != 0 ||
        span_within(rows, channels, residual_stride, residual_count, &rs) != 0 ||
        span_within(rows, channels, y_stride, y_count, &ys) != 0 || channels > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    size_t f = sizeof(float), cb = channels * f;
    if (ck_overlap(y, ys * f, x, xs * f) || ck_overlap(y, ys * f, residual, rs * f) ||
        ck_overlap(y, ys * f, gamma, cb) || ck_overlap(y, ys * f, beta, cb)) {
        return CK_E_ARG;
    }
    return 0;
}

/* One call's arguments once its geometry is checked. */
typedef struct {
    const float *x, *residual, *gamma, *beta;
    float *y;
    size_t x_stride, residual_stride, y_stride, rows, channels;
    float eps;
    uint16_t *y16;       /* NULL, or the bf16 copy of y (stride y16_stride) */
    size_t y16_stride;
    int f32acc;          /* 1: float statistics (ck_ln32_row_*), else double (ck_layer_norm_row_impl) */
} ln_call;

/* A finite float sum implies finite terms (NaN and Inf propagate), and rules out overflow. Branch-free
 * probes (ck_check.h), tested once: on error nothing has been written. */
CK_ALWAYS_INLINE int check_values(const float *x, size_t x_stride, const float *residual, size_t residual_stride,
                                  const float *gamma, const float *beta, size_t rows, size_t channels)
{
    if (!ck_all_finite(gamma, 1, channels, channels) || !ck_all_finite(beta, 1, channels, channels)) {
        return CK_E_NONFINITE;
    }
    uint32_t worst = 0;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_stride, *rr = residual + r * residual_stride;
        for (size_t c = 0; c < channels; c++) {
            worst = ck_finite_probe(worst, xr[c] + rr[c]);
        }
    }
    return worst < CK_F32_INF_BITS ? 0 : CK_E_NONFINITE;
}

/* The value checks, then every row: instantiated per ISA below (the probe loops vectorize too, and
 * they cost about a third of the kernel in baseline SSE2, which has no unsigned max). */
CK_ALWAYS_INLINE int check_and_normalize(const ln_call *a, ck_isa isa)
{
    if (a->f32acc) { /* gamma and beta first; x + residual row by row, in the pass that stages it */
        if (!ck_all_finite(a->gamma, 1, a->channels, a->channels) ||
            !ck_all_finite(a->beta, 1, a->channels, a->channels)) {
            return CK_E_NONFINITE;
        }
        for (size_t r = 0; r < a->rows; r++) {
            float *y = a->y + r * a->y_stride;
            uint16_t *y16 = a->y16 != NULL ? a->y16 + r * a->y16_stride : NULL;
            const float *x = a->x + r * a->x_stride, *res = a->residual + r * a->residual_stride;
            int rc = isa == CK_ISA_AVX512 ? ck_ln32_row_avx512(y, y16, x, res, a->gamma, a->beta, a->channels, a->eps)
                                          : ck_ln32_row_portable(y, y16, x, res, a->gamma, a->beta, a->channels,
                                                                 a->eps);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    }
    int rc = check_values(a->x, a->x_stride, a->residual, a->residual_stride, a->gamma, a->beta, a->rows,
                          a->channels);
    if (rc != 0) {
        return rc;
    }
    for (size_t r = 0; r < a->rows; r++) {
        ck_layer_norm_row_impl(a->y + r * a->y_stride, a->x + r * a->x_stride, a->residual + r * a->residual_stride,
                               NULL, a->gamma, a->beta, a->channels, a->eps, isa);
        if (a->y16 != NULL) { /* the row is still in L1 */
            ck_bf16_from_f32_rows(a->y + r * a->y_stride, a->y_stride, a->y16 + r * a->y16_stride, a->y16_stride,
                                  1, a->channels);
        }
    }
    return 0;
}

static int check_and_normalize_portable(const ln_call *a)
{
    return check_and_normalize(a, CK_ISA_PORTABLE);
}

CK_TARGET_AVX512 static int check_and_normalize_avx512(const ln_call *a)
{
    return check_and_normalize(a, CK_ISA_AVX512);
}

int ck_residual_layer_norm_f32_f64acc(const float *x, size_t x_count, size_t x_stride, const float *residual,
                                      size_t residual_count, size_t residual_stride, const float *gamma,
                                      const float *beta, float *y, size_t y_count, size_t y_stride, size_t rows,
                                      size_t channels, float eps)
{
    return ck_residual_layer_norm_f32_f32bf16_f64acc(x, x_count, x_stride, residual, residual_count, residual_stride,
                                                     gamma, beta, y, y_count, y_stride, NULL, 0, 0, rows, channels, eps);
}

/* Both exported kernels: the checks, then the rows with double (f32acc 0) or float statistics. */
static int residual_layer_norm(const float *x, size_t x_count, size_t x_stride, const float *residual,
                               size_t residual_count, size_t residual_stride, const float *gamma,
                               const float *beta, float *y, size_t y_count, size_t y_stride, uint16_t *y16,
                               size_t y16_count, size_t y16_stride, size_t rows, size_t channels, float eps,
                               int f32acc)
{
    int rc = check_geometry(x, x_count, x_stride, residual, residual_count, residual_stride, gamma, beta, y,
                            y_count, y_stride, rows, channels);
    if (rc != 0) {
        return rc;
    }
    if (y16 != NULL && rows > 0) {
        size_t s16 = 0, xs = 0, rs = 0, ys = 0;
        if (span_within(rows, channels, y16_stride, y16_count, &s16) != 0) {
            return CK_E_SIZE;
        }
        (void)span_within(rows, channels, x_stride, x_count, &xs);
        (void)span_within(rows, channels, residual_stride, residual_count, &rs);
        (void)span_within(rows, channels, y_stride, y_count, &ys);
        size_t f = sizeof(float), h = sizeof *y16;
        if (ck_overlap(y16, s16 * h, x, xs * f) || ck_overlap(y16, s16 * h, residual, rs * f) ||
            ck_overlap(y16, s16 * h, y, ys * f)) {
            return CK_E_ARG;
        }
    }
    if (!(eps > 0.0f)) {
        return CK_E_ARG;
    }
    const ln_call a = {x, residual, gamma, beta, y, x_stride, residual_stride, y_stride, rows, channels, eps,
                       y16, y16_stride, f32acc};
    return ck_kernels_isa_level() == CK_ISA_AVX512 ? check_and_normalize_avx512(&a)
                                                   : check_and_normalize_portable(&a);
}

int ck_residual_layer_norm_f32_f32bf16_f64acc(const float *x, size_t x_count, size_t x_stride, const float *residual,
                                              size_t residual_count, size_t residual_stride, const float *gamma,
                                              const float *beta, float *y, size_t y_count, size_t y_stride, uint16_t *y16,
                                              size_t y16_count, size_t y16_stride, size_t rows, size_t channels, float eps)
{
    return residual_layer_norm(x, x_count, x_stride, residual, residual_count, residual_stride, gamma, beta, y,
                               y_count, y_stride, y16, y16_count, y16_stride, rows, channels, eps, 0);
}

int ck_residual_layer_norm_f32_f32bf16(const float *x, size_t x_count, size_t x_stride, const float *residual,
                                       size_t residual_count, size_t residual_stride, const float *gamma,
                                       const float *beta, float *y, size_t y_count, size_t y_stride, uint16_t *y16,
                                       size_t y16_count, size_t y16_stride, size_t rows, size_t channels, float eps)
{
    return residual_layer_norm(x, x_count, x_stride, residual, residual_count, residual_stride, gamma, beta, y,
                               y_count, y_stride, y16, y16_count, y16_stride, rows, channels, eps, 1);
}
