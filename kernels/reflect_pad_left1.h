/* reflect_pad_left1.h - the generator's ReflectionPad1d((1, 0)) before its last residual stage: prepend frame 1. No I/O, no allocation, no threads. */
#ifndef CK_REFLECT_PAD_LEFT1_H
#define CK_REFLECT_PAD_LEFT1_H

#include <stddef.h>

/* Legend: R input frames of the packed batch, sequence s owning rows [offsets[s], offsets[s+1]) of x and
 * rows [offsets[s] + s, offsets[s+1] + s + 1) of y (one more frame each), S sequences, C channels
 * (Kokoro: 128 after ups.1, so 120F frames become 120F + 1; SYNTHESIS.md 1.7 stage 1).
 *
 * nn.ReflectionPad1d((1, 0)) on each sequence alone: y[0] = x[1], y[i + 1] = x[i] for i = 0 .. L-1 (a
 * copy: bit-exact). x [R, C] row stride x_stride >= C, y [R + S, C] row stride y_stride >= C, columns past
 * C never written; counts cover offsets[seq_end] rows of x and offsets[seq_end] + seq_end rows of y.
 * Errors, before the first write (y untouched):
 *   CK_E_ARG   x or y null (range has rows), y overlapping x;
 *   CK_E_RANGE bad sequence range or decreasing offsets (ck_packed.h);
 *   CK_E_SIZE  C == 0, a sequence in the range with fewer than 2 frames (torch needs pad < L), a stride
 *              below C, a count below its span, overflow. */
int ck_reflect_pad_left1_f32(const float *x, size_t x_count, size_t x_stride, float *y, size_t y_count,
                             size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin, size_t seq_end,
                             size_t channels);

#endif
