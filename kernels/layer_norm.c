/* layer_norm.c - LayerNorm over each row's channels with double statistics. No allocation, no I/O. */
#include "layer_norm.h"

#include <math.h>
#include <stdint.h>

#include "ck_check.h"
#include "ck_status.h"

static int check_args(const float *x, size_t x_count, size_t x_stride, const float *gamma,
                      const float *beta, const float *y, size_t y_count, size_t y_stride,
                      size_t rows, size_t channels, float eps)
{
    size_t xs = 0, ys = 0;
    if (gamma == NULL || beta == NULL || (rows > 0 && (x == NULL || y == NULL)) || !isfinite(eps) ||
        eps <= 0.0f) {
        return CK_E_ARG;
    }
    if (channels == 0 || channels > SIZE_MAX / sizeof(float) ||
        ck_span(rows, channels, x_stride, &xs) != 0 || xs > x_count ||
        ck_span(rows, channels, y_stride, &ys) != 0 || ys > y_count) {
        return CK_E_SIZE;
    }
    size_t f = sizeof(float), cb = channels * f;
    int same = (const float *)y == x && x_stride == y_stride;
    if ((!same && ck_overlap(y, ys * f, x, xs * f)) || ck_overlap(y, ys * f, gamma, cb) ||
        ck_overlap(y, ys * f, beta, cb)) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(gamma, 1, channels, channels) || !ck_all_finite(beta, 1, channels, channels) ||
        (rows > 0 && !ck_all_finite(x, rows, channels, x_stride))) {
        return CK_E_NONFINITE;
    }
    return CK_OK;
}

int ck_layer_norm_f32_f64acc(const float *x, size_t x_count, size_t x_stride, const float *gamma,
                             const float *beta, float *y, size_t y_count, size_t y_stride,
                             size_t rows, size_t channels, float eps)
{
    int rc = check_args(x, x_count, x_stride, gamma, beta, y, y_count, y_stride, rows, channels, eps);
    if (rc != CK_OK) {
        return rc;
    }
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_stride;
        float *yr = y + r * y_stride;
        double sum = 0.0, sq = 0.0;
        for (size_t c = 0; c < channels; c++) { /* pass 1: the mean */
            sum += (double)xr[c];
        }
        double mean = sum / (double)channels;
        for (size_t c = 0; c < channels; c++) { /* pass 2: the biased variance */
            double d = (double)xr[c] - mean;
            sq += d * d;
        }
        double rstd = 1.0 / sqrt(sq / (double)channels + (double)eps);
        for (size_t c = 0; c < channels; c++) { /* pass 3: y, one rounding to float */
            yr[c] = (float)(((double)xr[c] - mean) * rstd * (double)gamma[c] + (double)beta[c]);
        }
    }
    return CK_OK;
}
