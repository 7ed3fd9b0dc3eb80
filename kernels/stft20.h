/* stft20.h - the generator's STFT of the harmonic source: n_fft 20, hop 5, periodic Hann, reflect padding, magnitude and phase. No I/O, no allocation, no threads. */
#ifndef CK_STFT20_H
#define CK_STFT20_H

#include <stddef.h>

/* Legend: L samples of one sequence (Kokoro: 600F), T = L / 5 + 1 frames (120F + 1), 11 bins.
 *
 * Kokoro's TorchSTFT.transform (istftnet.py:89-94; SYNTHESIS.md 1.7 step 4): torch.stft(x, n_fft 20, hop 5,
 * win 20, hann_window(20, periodic=True), center=True, pad_mode reflect, onesided), then |X| and angle(X),
 * har = cat[mag, phase]. For frames t of [frame_begin, frame_end):
 *   X[t,k] = sum_{j<20} x[r(5t + j - 10)] w[j] e^{-2 pi i j k / 20},  k = 0..10,
 *   r(i) = -i for i < 0, 2 (L - 1) - i for i >= L (reflect, edge not repeated),
 *   y[t, k] = |X[t,k]|, y[t, 11 + k] = atan2(Im X, Re X) in (-pi, pi].
 * w is torch's float32 window (ck_hann20.h). The DFT, hypot and atan2 run in double; each output is
 * rounded to FP32 once. The phase of a bin near zero is ill-conditioned (torch's float FFT and this agree
 * to 1e-7 in X, so the angle of a bin with |X| ~ 1e-7 is arbitrary): compare phases modulo 2 pi on bins
 * with a magnitude well above that.
 * x [L] (count >= L), L >= 11 (the reflect padding of 10 needs 11 samples); y [T, 22] rows of stride
 * y_stride >= 22 (the packed-row layout: one row per frame), columns past 22 never written. Each frame
 * depends on x alone: the same bits for any split of the frame range.
 * Errors, before the first write (y untouched):
 *   CK_E_ARG       x or y null (range not empty), y overlapping x;
 *   CK_E_RANGE     frame_begin > frame_end, frame_end > T;
 *   CK_E_SIZE      L < 11, L not a multiple of 5, x_count < L, y_stride < 22, y_count below the span, overflow;
 *   CK_E_NONFINITE NaN or Inf in x. */
int ck_stft20_f32(const float *x, size_t x_count, size_t length, float *y, size_t y_count, size_t y_stride,
                  size_t frame_begin, size_t frame_end);

#endif
