/* ck_instance_stats.h - per-channel instance-norm statistics of one sequence in double, shared by the AdaIN kernels. No I/O, no state. */
#ifndef CK_INSTANCE_STATS_H
#define CK_INSTANCE_STATS_H

#include <math.h>
#include <stddef.h>

/* Channels per block: the frame loop reads 16 adjacent floats of each row (one cache line) while the
 * block's statistics stay in registers; each channel's sums still run over frames in order. */
enum { CK_INSTANCE_BLOCK = 16 };

/* For channels [c0, c0 + nb) (nb <= 16) of the n frames at x (row stride x_stride): mean[c] = sum_f x / n
 * (first pass), then scale[c] = (1 + gamma[c0 + c]) / sqrt(sum_f (x - mean)^2 / n + eps) (second pass,
 * biased variance), all in double, frames in order (SYNTHESIS.md 1.5 AdaIN1d: InstanceNorm1d, then 1 + gamma). */
static inline void ck_instance_stats(const float *x, size_t x_stride, const float *gamma, size_t n, size_t c0,
                                     size_t nb, double eps, double mean[CK_INSTANCE_BLOCK],
                                     double scale[CK_INSTANCE_BLOCK])
{
    double sq[CK_INSTANCE_BLOCK] = {0};
    for (size_t c = 0; c < nb; c++) {
        mean[c] = 0.0;
    }
    for (size_t f = 0; f < n; f++) {
        for (size_t c = 0; c < nb; c++) {
            mean[c] += (double)x[f * x_stride + c0 + c];
        }
    }
    for (size_t c = 0; c < nb; c++) {
        mean[c] /= (double)n;
    }
    for (size_t f = 0; f < n; f++) {
        for (size_t c = 0; c < nb; c++) {
            double d = (double)x[f * x_stride + c0 + c] - mean[c];
            sq[c] += d * d;
        }
    }
    for (size_t c = 0; c < nb; c++) {
        scale[c] = (1.0 + (double)gamma[c0 + c]) / sqrt(sq[c] / (double)n + eps);
    }
}

#endif
