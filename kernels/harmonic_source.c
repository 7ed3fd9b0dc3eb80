/* harmonic_source.c - the harmonic source with torch's float32 phase rounding reproduced step by step. No allocation, no I/O. */
#include "harmonic_source.h"

#include <math.h>

#include "ck_check.h"

static int source_check(const float *f0, size_t f0_count, size_t frames2, const float *noise, size_t noise_count,
                        size_t noise_stride, float noise_scale, const float *weight, const float *bias,
                        const float *scratch, size_t scratch_count, const float *out, size_t out_count,
                        size_t sample_begin, size_t sample_end)
{
    if (sample_begin > sample_end) {
        return CK_E_RANGE;
    }
    if (frames2 > SIZE_MAX / CK_SOURCE_UPSAMPLE / CK_SOURCE_HARMONICS) {
        return CK_E_SIZE;
    }
    if (sample_end > frames2 * CK_SOURCE_UPSAMPLE) {
        return CK_E_RANGE;
    }
    if (sample_begin == sample_end) {
        return 0;
    }
    if (f0_count < frames2 || noise_stride < CK_SOURCE_HARMONICS ||
        !ck_span_fits(sample_end, CK_SOURCE_HARMONICS, noise_stride, noise_count) ||
        scratch_count < frames2 * CK_SOURCE_HARMONICS || out_count < sample_end) {
        return CK_E_SIZE;
    }
    if (f0 == NULL || noise == NULL || weight == NULL || bias == NULL || scratch == NULL || out == NULL ||
        !isfinite(noise_scale)) {
        return CK_E_ARG;
    }
    size_t nb = ((sample_end - 1) * noise_stride + CK_SOURCE_HARMONICS) * sizeof(float);
    size_t sb = frames2 * CK_SOURCE_HARMONICS * sizeof(float), ob = sample_end * sizeof(float);
    const size_t fb = frames2 * sizeof(float), wb = CK_SOURCE_HARMONICS * sizeof(float);
    if (ck_overlap(scratch, sb, f0, fb) || ck_overlap(scratch, sb, noise, nb) || ck_overlap(scratch, sb, weight, wb) ||
        ck_overlap(scratch, sb, bias, sizeof(float)) || ck_overlap(scratch, sb, out, ob) || ck_overlap(out, ob, f0, fb) ||
        ck_overlap(out, ob, noise, nb) || ck_overlap(out, ob, weight, wb) || ck_overlap(out, ob, bias, sizeof(float))) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(f0, 1, frames2, frames2) || !ck_all_finite(weight, 1, CK_SOURCE_HARMONICS, CK_SOURCE_HARMONICS) ||
        !isfinite(bias[0]) ||
        !ck_all_finite(noise + sample_begin * noise_stride, sample_end - sample_begin, CK_SOURCE_HARMONICS,
                       noise_stride)) {
        return CK_E_NONFINITE;
    }
    return 0;
}

/* ph[i,h] for frames 0..upto (SYNTHESIS.md 1.7: rad per frame, cumsum in double, * 2 * pi, * 300). */
static void source_phase(const float *f0, size_t upto, float *ph)
{
    double cum[CK_SOURCE_HARMONICS] = {0};
    const float pi_f = 3.14159265358979323846f;
    for (size_t i = 0; i <= upto; i++) {
        for (int h = 0; h < CK_SOURCE_HARMONICS; h++) {
            float fn = f0[i] * (float)(h + 1);
            float r = fn / CK_SOURCE_RATE;
            r = r - floorf(r);
            cum[h] += (double)r;
            float c = (float)cum[h];
            ph[i * CK_SOURCE_HARMONICS + (size_t)h] = ((c * 2.0f) * pi_f) * (float)CK_SOURCE_UPSAMPLE;
        }
    }
}

int ck_harmonic_source_f32(const float *f0, size_t f0_count, size_t frames2, const float *noise, size_t noise_count,
                           size_t noise_stride, float noise_scale, const float *weight, const float *bias,
                           float *scratch, size_t scratch_count, float *out, size_t out_count, size_t sample_begin,
                           size_t sample_end)
{
    int rc = source_check(f0, f0_count, frames2, noise, noise_count, noise_stride, noise_scale, weight, bias, scratch,
                          scratch_count, out, out_count, sample_begin, sample_end);
    if (rc != 0 || sample_begin == sample_end) {
        return rc;
    }
    size_t upto = (sample_end - 1) / CK_SOURCE_UPSAMPLE + 1;
    upto = upto < frames2 ? upto : frames2 - 1;
    source_phase(f0, upto, scratch);
    const double scale = (double)(float)(1.0 / CK_SOURCE_UPSAMPLE); /* torch: (float)(1 / scale_factor) */
    const float unvoiced_amp = (1.0f * 0.1f) / 3.0f;
    for (size_t n = sample_begin; n < sample_end; n++) {
        double src = scale * ((double)n + 0.5) - 0.5;
        src = src < 0.0 ? 0.0 : src;
        size_t i0 = (size_t)src, i1 = i0 + 1 < frames2 ? i0 + 1 : i0;
        float l1 = (float)(src - (double)i0), l0 = 1.0f - l1;
        int voiced = f0[n / CK_SOURCE_UPSAMPLE] > 10.0f;
        float amp = voiced ? 0.003f : unvoiced_amp;
        const float *p0 = scratch + i0 * CK_SOURCE_HARMONICS, *p1 = scratch + i1 * CK_SOURCE_HARMONICS;
        const float *z = noise + n * noise_stride;
        double acc = (double)bias[0];
        for (int h = 0; h < CK_SOURCE_HARMONICS; h++) {
            float phi = fmaf(l0, p0[h], l1 * p1[h]);
            float s = (float)sin((double)phi) * 0.1f;
            float wave = (voiced ? s : 0.0f) + amp * (z[h] * noise_scale);
            acc += (double)weight[h] * (double)wave;
        }
        out[n] = (float)tanh(acc);
    }
    return 0;
}
