/* ck_hann20.h - the generator's STFT constants: n_fft 20, hop 5, torch's float32 periodic Hann window, a DFT table. No I/O, no state. */
#ifndef CK_HANN20_H
#define CK_HANN20_H

#include <math.h>

#define CK_STFT_NFFT 20
#define CK_STFT_HOP 5
#define CK_STFT_BINS 11 /* onesided: n_fft / 2 + 1 */

/* torch.hann_window(20, periodic=True) as float32, bit for bit: w[j] = fl(0.5 - fl(0.5 fl(cos(fl(j fl(2 pi / 20)))))),
 * torch's hamming form (alpha = beta = 0.5) in float (checked against torch 1.13 for all 20 values). */
static inline void ck_hann20(double w[CK_STFT_NFFT])
{
    const float step = (float)(2.0 * 3.14159265358979323846 / CK_STFT_NFFT);
    for (int j = 0; j < CK_STFT_NFFT; j++) {
        float c = (float)cos((double)((float)j * step));
        w[j] = (double)(0.5f - 0.5f * c);
    }
}

/* cos and sin of 2 pi m / 20 for m = 0..19 in double, with the exact zeros and ones (m = 0, 5, 10, 15) exact. */
static inline void ck_dft20_table(double cs[CK_STFT_NFFT], double sn[CK_STFT_NFFT])
{
    for (int m = 0; m < CK_STFT_NFFT; m++) {
        double a = 2.0 * 3.14159265358979323846 * (double)m / CK_STFT_NFFT;
        cs[m] = m % 5 == 0 ? (m == 0 ? 1.0 : m == 10 ? -1.0 : 0.0) : cos(a);
        sn[m] = m % 5 == 0 ? (m == 5 ? 1.0 : m == 15 ? -1.0 : 0.0) : sin(a);
    }
}

#endif
