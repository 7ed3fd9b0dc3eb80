/* ck_sin.h - a branch-free, vectorizable sin^2 for Snake (snake, adain_snake). No checks, no state, no I/O. */
#ifndef CK_SIN_H
#define CK_SIN_H

#include <stdint.h>
#include <string.h>

/* take ? a : b through the bits (GCC 12 if-converts a float ?: for AVX-512 but not for the baseline's
 * SSE2 under -ftrapping-math; an integer mask vectorizes in both). NaN a or b pass through unchanged. */
static inline float ck_sin_select(int take, float a, float b)
{
    uint32_t ua, ub, m = -(uint32_t)(take != 0);
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    ub = (ua & m) | (ub & ~m);
    memcpy(&b, &ub, sizeof b);
    return b;
}

/* sin(u)^2 for a float u, in float, without libm. Cephes sinf (Moshier, cephes/single/sinf.c):
 *   j = round(u * 2/pi) by the 1.5 * 2^23 trick (exact for |u * 2/pi| < 2^22);
 *   r = u - j pi/2 by a 3-constant Cody-Waite split (Cephes' DP1..DP3 for pi/4, doubled: 1.5703125 has
 *       8 significant bits and 4.837512969970703125e-4 has 11, so j*P1 and j*P2 are exact for
 *       |j| < 2^13, i.e. |u| < 12867), r in [-pi/4, pi/4] (up to the rounding of u * 2/pi);
 *   s = sin(r) by Cephes' degree-7 minimax polynomial r + r^3 (c3 + r^2 (c5 + r^2 c7));
 *   sin(u)^2 = s^2 for even j, cos(r)^2 = 1 - s^2 for odd j (s^2 <= 0.5: no cancellation).
 * Written without calls or branches (the parity of j and the clamp select bits by an integer mask) so
 * loops over it vectorize (GCC 12 -O3: SSE2 in the baseline build, AVX-512 under CK_TARGET_AVX512);
 * no FMA contraction (C11 mode, -ffp-contract=off), so scalar, SSE2 and AVX-512 code give the same
 * bits for the same u.
 * Accuracy (tests/kernels/test_sin.c against sin in double, sin(u)^2 of the same float u): max abs
 * error 1.24e-7 over |u| <= 512 (dense sweep), 1.22e-7 near |u| = 1e4; asserted 1.5e-7. The demo's
 * Snake (synthetic weights, alpha in [0.5, 1.5]) sees |alpha x| up to 9.0 (docs/speech-kernels.md);
 * real weights may go further. Past |u| = 12867 the products j*P1, j*P2 round: measured 5.8e-7 from
 * 3e4, 1.0e-6 from 1e5 (asserted 2e-6), 3.1e-2 from 1e6 (where ulp(u) is already 0.06 rad); past
 * |u| ~ 6.6e6 (ulp(u) >= 0.5: no phase information left in u) j is no longer round(u 2/pi) and the
 * result is an arbitrary value in [0, 1]: r is clamped to |r| <= 1 (it exceeds pi/4 by the rounding
 * of u * 2/pi, about 6e-8 |j|), so the result never leaves [0, 1] (Snake adds sin^2 / alpha to x there,
 * below an ulp or two of x).
 * NaN and +-Inf give NaN; 0, -0 and denormals give 0 (s^2 underflows). */
static inline float ck_sin2_f32(float u)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float j = (u * 0.636619772367581343f + magic) - magic;
    float r = ((u - j * 1.5703125f) - j * 4.837512969970703125e-4f) - j * 7.54978995489188216e-8f;
    r = ck_sin_select(r > 1.0f, 1.0f, r);
    r = ck_sin_select(r < -1.0f, -1.0f, r);
    float z = r * r;
    float s = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
    float s2 = s * s;
    float h = j * 0.5f; /* j odd: h = k + 0.5, and rounding h moves it; j even (any |j| >= 2^24): it does not */
    float hr = (h + magic) - magic;
    return ck_sin_select(h != hr, 1.0f - s2, s2);
}

/* One Snake element as torch computes it in float32 (istftnet.py: x + (1 / alpha) * sin(alpha * x) ** 2):
 * fl(x + fl(fl(1 / a) * sin^2(fl(a x)))), sin^2 from ck_sin2_f32 (torch: fl(fl(sin)^2)). */
static inline float ck_snake1_f32(float x, float a)
{
    return x + (1.0f / a) * ck_sin2_f32(a * x);
}

#endif
