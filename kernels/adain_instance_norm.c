/* adain_instance_norm.c - per-sequence, per-channel statistics in double, 16 channels a block, then the style affine. No I/O. */
#include "adain_instance_norm.h"

#include "ck_instance_stats.h"
#include "ck_style_norm.h"

/* Channels [c0, c0 + nb) of one sequence of n frames starting at x and y. */
static void norm_block(const float *x, size_t x_stride, const float *gamma, const float *beta, float *y,
                       size_t y_stride, size_t n, size_t c0, size_t nb, double eps)
{
    double mean[CK_INSTANCE_BLOCK], scale[CK_INSTANCE_BLOCK];
    ck_instance_stats(x, x_stride, gamma, n, c0, nb, eps, mean, scale);
    /* y may be x: every read of this block happened above */
    for (size_t f = 0; f < n; f++) {
        for (size_t c = 0; c < nb; c++) {
            double d = (double)x[f * x_stride + c0 + c] - mean[c];
            y[f * y_stride + c0 + c] = (float)(d * scale[c] + (double)beta[c0 + c]);
        }
    }
}

int ck_adain_instance_norm_f32(const float *x, size_t x_count, size_t x_stride, const float *gamma,
                               size_t gamma_count, const float *beta, size_t beta_count, float *y, size_t y_count,
                               size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin,
                               size_t seq_end, size_t channels, float eps)
{
    size_t rows_begin, rows_end;
    int rc = ck_style_norm_check(x, x_count, x_stride, gamma, gamma_count, beta, beta_count, y, y_count, y_stride,
                                 offsets, n_seq, seq_begin, seq_end, channels, eps, &rows_begin, &rows_end);
    if (rc != 0) {
        return rc;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        size_t first = offsets[s], n = offsets[s + 1] - first;
        for (size_t c0 = 0; n > 0 && c0 < channels; c0 += CK_INSTANCE_BLOCK) {
            size_t nb = channels - c0 < CK_INSTANCE_BLOCK ? channels - c0 : CK_INSTANCE_BLOCK;
            norm_block(x + first * x_stride, x_stride, gamma + s * channels, beta + s * channels,
                       y + first * y_stride, y_stride, n, c0, nb, (double)eps);
        }
    }
    return 0;
}
