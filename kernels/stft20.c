/* stft20.c - direct 20-point DFT per frame in double (11 bins), reflect padding by index. No allocation, no I/O. */
#include "stft20.h"

#include <math.h>

#include "ck_check.h"
#include "ck_hann20.h"

static size_t reflect_index(long long i, size_t length)
{
    if (i < 0) {
        return (size_t)(-i);
    }
    if ((size_t)i >= length) {
        return 2 * (length - 1) - (size_t)i;
    }
    return (size_t)i;
}

int ck_stft20_f32(const float *x, size_t x_count, size_t length, float *y, size_t y_count, size_t y_stride,
                  size_t frame_begin, size_t frame_end)
{
    if (length < CK_STFT_NFFT / 2 + 1 || length % CK_STFT_HOP != 0 || x_count < length ||
        y_stride < 2 * CK_STFT_BINS) {
        return CK_E_SIZE;
    }
    size_t frames = length / CK_STFT_HOP + 1;
    if (frame_begin > frame_end || frame_end > frames) {
        return CK_E_RANGE;
    }
    if (frame_begin == frame_end) {
        return 0;
    }
    size_t span;
    if (ck_span(frame_end, 2 * CK_STFT_BINS, y_stride, &span) != 0 || span > y_count ||
        span > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (x == NULL || y == NULL) {
        return CK_E_ARG;
    }
    if (ck_overlap(x, length * sizeof(float), y, span * sizeof(float))) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(x, 1, length, length)) {
        return CK_E_NONFINITE;
    }
    double w[CK_STFT_NFFT], cs[CK_STFT_NFFT], sn[CK_STFT_NFFT];
    ck_hann20(w);
    ck_dft20_table(cs, sn);
    for (size_t t = frame_begin; t < frame_end; t++) {
        double seg[CK_STFT_NFFT];
        for (int j = 0; j < CK_STFT_NFFT; j++) {
            long long i = (long long)(t * CK_STFT_HOP) + j - CK_STFT_NFFT / 2;
            seg[j] = (double)x[reflect_index(i, length)] * w[j];
        }
        float *row = y + t * y_stride;
        for (int k = 0; k < CK_STFT_BINS; k++) {
            double re = 0.0, im = 0.0;
            for (int j = 0; j < CK_STFT_NFFT; j++) {
                int m = (j * k) % CK_STFT_NFFT;
                re += seg[j] * cs[m];
                im -= seg[j] * sn[m];
            }
            row[k] = (float)hypot(re, im);
            row[CK_STFT_BINS + k] = (float)atan2(im, re);
        }
    }
    return 0;
}
