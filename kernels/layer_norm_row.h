/* layer_norm_row.h - the shared LayerNorm of one contiguous row, in place; kernels only. No checks, no I/O. */
#ifndef CK_LAYER_NORM_ROW_H
#define CK_LAYER_NORM_ROW_H

#include <math.h>
#include <stddef.h>

/* row[c] = (row[c] - mean) / sqrt(var + eps) * gamma[c] + beta[c] over c < n (n >= 1), population
 * variance (torch.nn.LayerNorm). Two passes, mean and variance accumulated in double, normalisation in
 * double, rounded to float once. The caller has checked every value and eps > 0. */
static inline void ck_layer_norm_row_inplace(float *row, const float *gamma, const float *beta, size_t n,
                                             float eps)
{
    double sum = 0.0;
    for (size_t c = 0; c < n; c++) {
        sum += (double)row[c];
    }
    double mean = sum / (double)n;
    double sq = 0.0;
    for (size_t c = 0; c < n; c++) {
        double d = (double)row[c] - mean;
        sq += d * d;
    }
    double rstd = 1.0 / sqrt(sq / (double)n + (double)eps);
    for (size_t c = 0; c < n; c++) {
        row[c] = (float)(((double)row[c] - mean) * rstd * (double)gamma[c] + (double)beta[c]);
    }
}

#endif
