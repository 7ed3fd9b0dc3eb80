/* duration_frames.h - Kokoro's durations: max(1, round_half_even(sum(sigmoid(logits)) / speed)). No I/O, no allocation. */
#ifndef CK_DURATION_FRAMES_H
#define CK_DURATION_FRAMES_H

#include <stddef.h>
#include <stdint.h>

/* Legend: T tokens of the packed batch (sequence s owns rows [offsets[s], offsets[s+1])), S sequences,
 * B duration bins (Kokoro: max_dur = 50).
 *
 * For each token t of each sequence s of [seq_begin, seq_end):
 *   duration[t] = (sum_b sigmoid(logits[t,b])) / speed[s]
 *   frames[t]   = max(1, round_half_to_even(duration[t]))
 * Kokoro model.py:108-109 (SYNTHESIS.md 1.4): torch.sigmoid(duration_proj(x)).sum(axis=-1) / speed, then
 * torch.round (half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2), clamp(min=1), long.
 * logits [T, B] with row stride logits_stride (>= B); speed [S], one per sequence; frames [T] int32;
 * duration [T] (optional: NULL and duration_count 0 skip it). Counts cover offsets[seq_end] tokens.
 * Numerics: sigmoid(a) = 1 / (1 + expf(-a)) in FP32, as torch rounds each sigmoid to float; the B
 * values are summed in double, bins in order, and the sum rounded to float once (torch's float sum may
 * differ by an ulp, so it can round the other way only within an ulp of a .5 tie); then divided by
 * speed in float, as torch does; the rounding is exact half-to-even on that float, independent of the
 * FPU rounding mode. Sums of exactly representable sigmoids (0, 0.5, 1) are exact, so true ties go to even.
 * Each token depends only on its own logits and its sequence's speed.
 * Errors, before the first write (frames and duration untouched):
 *   CK_E_ARG       null pointer (when the range has tokens), speed <= 0 (or so small that B / speed
 *                  >= 2^30, which would not fit the frame counts), frames or duration overlapping an input;
 *   CK_E_RANGE     bad sequence range or decreasing offsets (ck_packed.h);
 *   CK_E_SIZE      B == 0, a stride below B, a count below its span, overflow;
 *   CK_E_NONFINITE NaN or Inf in the range's logits or speeds. */
int ck_duration_frames_f32(const float *logits, size_t logits_count, size_t logits_stride, const float *speed,
                           size_t speed_count, int32_t *frames, size_t frames_count, float *duration,
                           size_t duration_count, const size_t *offsets, size_t n_seq, size_t seq_begin,
                           size_t seq_end, size_t bins);

#endif
