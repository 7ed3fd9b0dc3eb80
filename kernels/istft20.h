/* istft20.h - the generator's output iSTFT: exp magnitude and sin phase from conv_post, inverse real DFT of 20, window, overlap-add, envelope. No I/O, no allocation, no threads. */
#ifndef CK_ISTFT20_H
#define CK_ISTFT20_H

#include <stddef.h>

/* Legend: T frames of one sequence (Kokoro: 120F + 1), L = 5 (T - 1) samples (600F), 11 bins.
 *
 * Kokoro's output (istftnet.py:321-325, TorchSTFT.inverse 96-100; SYNTHESIS.md 1.7 "Output"):
 * spec = exp(x[:, 0:11]), phase = sin(x[:, 11:22]), torch.istft(spec e^{i phase}, 20, 5, 20, periodic Hann,
 * center=True), written out as SYNTHESIS.md's verified recipe: per frame t
 *   m_k = exp(x[t,k]), p_k = sin(x[t,11+k]), re_k = m_k cos p_k, im_k = m_k sin p_k,
 *   f_t[j] = (re_0 + (-1)^j re_10 + 2 sum_{k=1..9} (re_k cos(2 pi j k/20) - im_k sin(2 pi j k/20))) / 20
 *   (the imaginary parts of bins 0 and 10 are ignored, as the inverse real FFT ignores them),
 * then y[n] = sum_t f_t[j] w[j] / sum_t w[j]^2 over the frames t covering padded sample n + 10 = 5t + j,
 * 0 <= j < 20, for samples n of [sample_begin, sample_end) (the first 10 padded samples dropped, L kept).
 * w is torch's float32 periodic Hann window (ck_hann20.h). Everything runs in double (frames in
 * ascending order per sample) and each sample is rounded to FP32 once, so any split of the sample range
 * gives the same bits.
 * x [T, 22] rows of stride x_stride >= 22 (conv_post's output in the packed-row layout: rows 0..10 of
 * Kokoro's [22, T] are columns 0..10 here), T >= 2; y [L] (count >= sample_end).
 * Errors, before the first write (y untouched):
 *   CK_E_ARG       x or y null (range not empty), y overlapping x;
 *   CK_E_RANGE     sample_begin > sample_end, sample_end > L;
 *   CK_E_SIZE      T < 2, x_stride < 22, x_count below the span, y_count < sample_end, overflow;
 *   CK_E_NONFINITE NaN or Inf in x (in the frames the range reads), or an exp that overflows. */
int ck_istft20_f32(const float *x, size_t x_count, size_t x_stride, size_t frames, float *y, size_t y_count,
                   size_t sample_begin, size_t sample_end);

#endif
