/* ada_layer_norm.c - per-row LayerNorm in double with a per-sequence style affine. No allocation, no I/O. */
#include "ada_layer_norm.h"

#include "ck_style_norm.h"

/* One row of C channels; y may be x (each element is read before it is written). */
static void norm_row(const float *x, const float *gamma, const float *beta, float *y, size_t channels, double eps)
{
    double mean = 0.0, sq = 0.0;
    for (size_t c = 0; c < channels; c++) {
        mean += (double)x[c];
    }
    mean /= (double)channels;
    for (size_t c = 0; c < channels; c++) {
        double d = (double)x[c] - mean;
        sq += d * d;
    }
    double rstd = 1.0 / sqrt(sq / (double)channels + eps);
    for (size_t c = 0; c < channels; c++) {
        double n = ((double)x[c] - mean) * rstd;
        y[c] = (float)((1.0 + (double)gamma[c]) * n + (double)beta[c]);
    }
}

int ck_ada_layer_norm_f32(const float *x, size_t x_count, size_t x_stride, const float *gamma, size_t gamma_count,
                          const float *beta, size_t beta_count, float *y, size_t y_count, size_t y_stride,
                          const size_t *offsets, size_t n_seq, size_t seq_begin, size_t seq_end, size_t channels,
                          float eps)
{
    size_t rows_begin, rows_end;
    int rc = ck_style_norm_check(x, x_count, x_stride, gamma, gamma_count, beta, beta_count, y, y_count, y_stride,
                                 offsets, n_seq, seq_begin, seq_end, channels, eps, &rows_begin, &rows_end);
    if (rc != 0) {
        return rc;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        for (size_t r = offsets[s]; r < offsets[s + 1]; r++) {
            norm_row(x + r * x_stride, gamma + s * channels, beta + s * channels, y + r * y_stride, channels,
                     (double)eps);
        }
    }
    return 0;
}
