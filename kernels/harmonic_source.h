/* harmonic_source.h - Kokoro's SineGen + SourceModuleHnNSF: F0 curve -> har_source at 24 kHz. No I/O, no allocation, no threads. */
#ifndef CK_HARMONIC_SOURCE_H
#define CK_HARMONIC_SOURCE_H

#include <stddef.h>

#define CK_SOURCE_HARMONICS 9    /* harmonic_num 8 -> the fundamental and 8 overtones */
#define CK_SOURCE_UPSAMPLE 300   /* samples per F0 value (24000 Hz / 80 Hz) */
#define CK_SOURCE_RATE 24000.0f  /* sampling rate, Hz */

/* Legend: P = frames2 F0 values of one sequence (Kokoro's F0 curve [2F], 80 per second), L = 300 P
 * samples, H = 9 harmonics.
 *
 * har_source[n] for samples n of [sample_begin, sample_end), exactly as Kokoro computes it
 * (istftnet.py SineGen/SourceModuleHnNSF; SYNTHESIS.md 1.7; tools/kokoro_reference.py sine_source):
 *   rad[i,h]  = fl(fl(f0[i] (h+1)) / 24000) mod 1 (torch remainder: x - floor x, in [0, 1), negative F0 wraps)
 *               (the linear 1/300 downsample reads two equal samples of frame i: it is rad of frame i)
 *   cum[i,h]  = sum_{j<=i} rad[j,h], accumulated in double, rounded to float (torch's CPU cumsum
 *               accumulates float in double)
 *   ph[i,h]   = fl(fl(fl(2 cum) * fl(pi)) * 300)                                  (cumsum * 2 * pi, * 300)
 *   the linear x300 upsample (align_corners False), as torch 1.13's CPU kernel rounds it:
 *     src = max(0, (double)fl(1/300) (n + 0.5) - 0.5), i0 = floor(src), i1 = min(i0 + 1, P - 1),
 *     l1 = fl(src - i0), l0 = fl(1 - l1), phi[n,h] = fmaf(l0, ph[i0,h], fl(l1 ph[i1,h]))
 *   uv[n]     = f0[n / 300] > 10 (voiced); amp = 0.003 voiced, fl(0.1 / 3) unvoiced
 *   wave[n,h] = fl(fl(sin phi) * 0.1) uv + amp fl(noise[n,h] noise_scale)                     (float)
 *   out[n]    = tanh(bias + sum_h weight[h] wave[n,h])       (l_linear 9 -> 1; in double, one rounding)
 * so the phase is torch's float32 phase bit for bit (it reaches 1e4-1e6 rad in long utterances, where a
 * float ulp is 1e-3-0.1 rad: matching the rounding matters more than precision). sin is libm's in double,
 * rounded to float (torch uses SLEEF's 1-ulp sinf).
 * f0 [P]: Hz, finite. noise [L, noise_stride >= 9]: N(0,1) (Kokoro's randn_like, or the counter-based
 * ck_noise_normal_f32), row n for sample n; noise_scale multiplies it (1 = Kokoro, 0 = no noise).
 * weight [9], bias [1]: m_source.l_linear. scratch [P, 9] floats (ph, recomputed each call from frame 0,
 * so any split of the sample range gives the same bits). out [L]: out[n] for sample n, others untouched.
 * Errors, before the first write (out untouched):
 *   CK_E_ARG       a null pointer (when the range is not empty), noise_scale not finite, scratch or out
 *                  overlapping an input or each other;
 *   CK_E_RANGE     sample_begin > sample_end, sample_end > 300 P;
 *   CK_E_SIZE      a count below its span (f0 P, noise L rows, scratch 9 P, out sample_end), noise_stride < 9,
 *                  overflow;
 *   CK_E_NONFINITE NaN or Inf in f0, weight, bias or the range's noise rows. */
int ck_harmonic_source_f32(const float *f0, size_t f0_count, size_t frames2, const float *noise, size_t noise_count,
                           size_t noise_stride, float noise_scale, const float *weight, const float *bias,
                           float *scratch, size_t scratch_count, float *out, size_t out_count, size_t sample_begin,
                           size_t sample_end);

#endif
