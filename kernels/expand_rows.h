/* expand_rows.h - Kokoro's alignment as a gather: each token row repeated for its frames. No I/O, no allocation, no threads. */
#ifndef CK_EXPAND_ROWS_H
#define CK_EXPAND_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* Legend: T tokens of the packed batch, F frames (the sum of the tokens' frame counts), C columns.
 *
 * Frames of tokens [token_begin, token_end): *total = sum frames[t]. The caller's prefix for
 * ck_expand_rows_f32's frame_begin (the frames of the tokens before token_begin).
 * Errors: CK_E_ARG (total null, frames null with a non-empty range), CK_E_RANGE (token_begin >
 * token_end, a negative count), CK_E_SIZE (frames_count < token_end, overflow). */
int ck_expand_rows_frames(const int32_t *frames, size_t frames_count, size_t token_begin, size_t token_end,
                          size_t *total);

/* y[f] = x[token_of_frame[f]]: token t's row is copied to frames[t] consecutive rows of y, tokens in order,
 * token_begin's first frame at row frame_begin. This is Kokoro's en = d^T A and asr = t_en A with the
 * one-hot alignment A of repeat_interleave(arange(T), pred_dur) (model.py:110-117; SYNTHESIS.md 1.4): a
 * plain row gather, no arithmetic. The sequences of a packed batch need no boundaries: their tokens and
 * frames are both back to back, so a split of the token range between callers (each with its frame_begin
 * from ck_expand_rows_frames) writes disjoint rows of y.
 * x [T, C] row stride x_stride (>= C), needs token_end rows; frames [T] int32 (>= 0; Kokoro's are >= 1);
 * y [F, C] row stride y_stride (>= C), needs frame_begin + (frames of the range) rows. Only columns
 * [0, C) of those rows are written. Bits are copied: any value, NaN included, passes through unchanged.
 * Errors, before the first write (y untouched): CK_E_ARG (null when there is something to copy, y
 * overlapping x or frames), CK_E_RANGE (as ck_expand_rows_frames), CK_E_SIZE (C == 0, a stride below C,
 * a count below its span, overflow). */
int ck_expand_rows_f32(const float *x, size_t x_count, size_t x_stride, const int32_t *frames, size_t frames_count,
                       float *y, size_t y_count, size_t y_stride, size_t token_begin, size_t token_end,
                       size_t frame_begin, size_t cols);

#endif
