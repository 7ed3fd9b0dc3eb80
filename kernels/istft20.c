/* istft20.c - per sample overlap-add of at most 4 frames, each frame's 20 samples computed once into a ring. No allocation, no I/O. */
#include "istft20.h"

#include <math.h>

#include "ck_check.h"
#include "ck_hann20.h"

enum { RING = 4 }; /* frames covering one sample: 20 / 5 */

/* The 20 windowed time samples of frame row xr (SYNTHESIS.md 1.7's inverse real DFT), times w. */
static void frame_samples(const float *xr, const double *w, const double *cs, const double *sn, double *out)
{
    double re[CK_STFT_BINS], im[CK_STFT_BINS];
    for (int k = 0; k < CK_STFT_BINS; k++) {
        double m = exp((double)xr[k]), p = sin((double)xr[CK_STFT_BINS + k]);
        re[k] = m * cos(p);
        im[k] = m * sin(p);
    }
    for (int j = 0; j < CK_STFT_NFFT; j++) {
        double acc = 0.0;
        for (int k = 1; k < CK_STFT_BINS - 1; k++) {
            int q = (j * k) % CK_STFT_NFFT;
            acc += re[k] * cs[q] - im[k] * sn[q];
        }
        double v = re[0] + (j % 2 ? -re[CK_STFT_BINS - 1] : re[CK_STFT_BINS - 1]) + 2.0 * acc;
        out[j] = v / CK_STFT_NFFT * w[j];
    }
}

/* The first and last frame covering output sample n (padded sample n + 10 = 5t + j, 0 <= j < 20). */
static size_t istft_first_frame(size_t n)
{
    size_t p = n + CK_STFT_NFFT / 2;
    return p >= CK_STFT_NFFT - 1 ? (p - (CK_STFT_NFFT - 1) + CK_STFT_HOP - 1) / CK_STFT_HOP : 0;
}

static size_t istft_last_frame(size_t n, size_t frames)
{
    size_t t = (n + CK_STFT_NFFT / 2) / CK_STFT_HOP;
    return t < frames - 1 ? t : frames - 1;
}

int ck_istft20_f32(const float *x, size_t x_count, size_t x_stride, size_t frames, float *y, size_t y_count,
                   size_t sample_begin, size_t sample_end)
{
    if (frames < 2 || x_stride < 2 * CK_STFT_BINS) {
        return CK_E_SIZE;
    }
    size_t length = (frames - 1) * CK_STFT_HOP, span;
    if (sample_begin > sample_end || sample_end > length) {
        return CK_E_RANGE;
    }
    if (ck_span(frames, 2 * CK_STFT_BINS, x_stride, &span) != 0 || span > x_count || y_count < sample_end ||
        span > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (sample_begin == sample_end) {
        return 0;
    }
    if (x == NULL || y == NULL) {
        return CK_E_ARG;
    }
    if (ck_overlap(x, span * sizeof(float), y, sample_end * sizeof(float))) {
        return CK_E_ARG;
    }
    /* the frames the range reads: t with 0 <= n + 10 - 5t < 20 */
    size_t t_lo = istft_first_frame(sample_begin), t_hi = istft_last_frame(sample_end - 1, frames);
    if (!ck_all_finite(x + t_lo * x_stride, t_hi - t_lo + 1, 2 * CK_STFT_BINS, x_stride)) {
        return CK_E_NONFINITE;
    }
    for (size_t t = t_lo; t <= t_hi; t++) {
        for (int k = 0; k < CK_STFT_BINS; k++) {
            if (!isfinite(exp((double)x[t * x_stride + (size_t)k]))) {
                return CK_E_NONFINITE;
            }
        }
    }
    double w[CK_STFT_NFFT], cs[CK_STFT_NFFT], sn[CK_STFT_NFFT], ring[RING][CK_STFT_NFFT];
    size_t have[RING] = {0};
    int filled[RING] = {0};
    ck_hann20(w);
    ck_dft20_table(cs, sn);
    for (size_t n = sample_begin; n < sample_end; n++) {
        size_t p = n + CK_STFT_NFFT / 2, first = istft_first_frame(n), last = istft_last_frame(n, frames);
        double acc = 0.0, env = 0.0;
        for (size_t t = first; t <= last; t++) {
            size_t slot = t % RING, j = p - t * CK_STFT_HOP;
            if (!filled[slot] || have[slot] != t) {
                frame_samples(x + t * x_stride, w, cs, sn, ring[slot]);
                have[slot] = t;
                filled[slot] = 1;
            }
            acc += ring[slot][j];
            env += w[j] * w[j];
        }
        y[n] = (float)(acc / env);
    }
    return 0;
}
