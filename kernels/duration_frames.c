/* duration_frames.c - per-token sigmoid sums, divided by the sequence's speed, rounded half to even. No allocation, no I/O. */
#include "duration_frames.h"

#include <math.h>

#include "ck_packed.h"

/* Half to even without the FPU rounding mode: d >= 0 and d < 2^30 here, so floorf and the difference
 * are exact. */
static int32_t round_half_even(float d)
{
    float f = floorf(d), rest = d - f;
    int32_t n = (int32_t)f;
    if (rest > 0.5f || (rest == 0.5f && (n & 1))) {
        n++;
    }
    return n;
}

static int duration_check(const float *logits, size_t logits_count, size_t logits_stride, const float *speed,
                          size_t speed_count, const int32_t *frames, size_t frames_count, const float *duration,
                          size_t duration_count, size_t rows_begin, size_t rows_end, size_t seq_begin,
                          size_t seq_end, size_t bins)
{
    size_t span;
    if (bins == 0) {
        return CK_E_SIZE;
    }
    if (rows_end == rows_begin) {
        return 0;
    }
    if (logits == NULL || speed == NULL || frames == NULL) {
        return CK_E_ARG;
    }
    if (ck_span(rows_end, bins, logits_stride, &span) != 0 || span > logits_count || speed_count < seq_end ||
        frames_count < rows_end || (duration != NULL && duration_count < rows_end) ||
        span > SIZE_MAX / sizeof(float) || rows_end > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    size_t lb = span * sizeof(float), ob = rows_end * sizeof(float), sb = seq_end * sizeof(float);
    if (ck_overlap(frames, ob, logits, lb) || ck_overlap(frames, ob, speed, sb) ||
        (duration != NULL && (ck_overlap(duration, ob, logits, lb) || ck_overlap(duration, ob, speed, sb) ||
                              ck_overlap(duration, ob, frames, ob)))) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(logits + rows_begin * logits_stride, rows_end - rows_begin, bins, logits_stride) ||
        !ck_all_finite(speed + seq_begin, 1, seq_end - seq_begin, seq_end - seq_begin)) {
        return CK_E_NONFINITE;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        if (!(speed[s] > 0.0f) || (double)bins / (double)speed[s] >= 1073741824.0) {
            return CK_E_ARG;
        }
    }
    return 0;
}

int ck_duration_frames_f32(const float *logits, size_t logits_count, size_t logits_stride, const float *speed,
                           size_t speed_count, int32_t *frames, size_t frames_count, float *duration,
                           size_t duration_count, const size_t *offsets, size_t n_seq, size_t seq_begin,
                           size_t seq_end, size_t bins)
{
    size_t rows_end;
    int rc = ck_packed_check(offsets, n_seq, seq_begin, seq_end, &rows_end);
    if (rc != 0) {
        return rc;
    }
    size_t rows_begin = seq_begin < seq_end ? offsets[seq_begin] : 0;
    rc = duration_check(logits, logits_count, logits_stride, speed, speed_count, frames, frames_count, duration,
                        duration_count, rows_begin, rows_end, seq_begin, seq_end, bins);
    if (rc != 0) {
        return rc;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        for (size_t t = offsets[s]; t < offsets[s + 1]; t++) {
            const float *l = logits + t * logits_stride;
            double sum = 0.0;
            for (size_t b = 0; b < bins; b++) {
                sum += (double)(1.0f / (1.0f + expf(-l[b])));
            }
            float d = (float)sum / speed[s];
            int32_t n = round_half_even(d);
            frames[t] = n < 1 ? 1 : n;
            if (duration != NULL) {
                duration[t] = d;
            }
        }
    }
    return 0;
}
