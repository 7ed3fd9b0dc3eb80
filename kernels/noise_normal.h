/* noise_normal.h - counter-based N(0,1) noise for the generator's source: Philox4x32-10 and Box-Muller. No I/O, no allocation, no threads. */
#ifndef CK_NOISE_NORMAL_H
#define CK_NOISE_NORMAL_H

#include <stddef.h>
#include <stdint.h>

/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011;
 * the Random123 library's philox4x32 with 10 rounds): out = the 128-bit block of counter ctr[4] under
 * key key[2]. One round: (hi0, lo0) = 0xD2511F53 * ctr[0], (hi1, lo1) = 0xCD9E8D57 * ctr[2] (32 x 32 ->
 * 64 bits), ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}; between rounds the key is
 * bumped by the Weyl constants key[0] += 0x9E3779B9, key[1] += 0xBB67AE85. Pure function; out may not
 * alias ctr or key (it is written after both are read, so aliasing is harmless, but not needed). */
void ck_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* Box-Muller of one Philox block: the 4 uint32 words w[0..3] give two pairs (w0, w1), (w2, w3);
 * u1 = (w_even + 1) / 2^32 in (0, 1], u2 = w_odd / 2^32 in [0, 1), r = sqrt(-2 ln u1),
 * z[2p] = r cos(2 pi u2), z[2p+1] = r sin(2 pi u2), evaluated in double (libm) and rounded to float once.
 * |z| <= sqrt(-2 ln 2^-32) = 6.66. */
void ck_box_muller4(const uint32_t w[4], float z[4]);

/* The generator's source noise, N(0,1) (SYNTHESIS.md 1.7 step 2: Kokoro's randn_like [600F, 9], drawn
 * here from a counter instead of torch's stream). Value (seed, line, chunk, sample n, harmonic h) is
 * element h % 4 of ck_box_muller4(philox(ctr, key)) with
 *   key = {seed & 0xffffffff, seed >> 32},  ctr = {n, h / 4, line, chunk},
 * so every value depends only on its own coordinates: the same bits for any batch, any split of the
 * sample range between calls or threads, and any number of harmonics asked (h < harmonics).
 * out [rows, harmonics] with row stride out_stride (>= harmonics) is the noise of one (seed, line,
 * chunk): rows [row_begin, row_end) are written, row n holding sample n; columns past harmonics are
 * never written. out_count must cover row_end rows.
 * Errors, before the first write (out untouched):
 *   CK_E_ARG   out null when the range is not empty;
 *   CK_E_RANGE row_begin > row_end, or row_end > 2^32 (the sample counter is 32 bits: 49 hours at 24 kHz);
 *   CK_E_SIZE  harmonics == 0, a stride below harmonics, out_count below the span, overflow. */
int ck_noise_normal_f32(uint64_t seed, uint32_t line, uint32_t chunk, float *out, size_t out_count,
                        size_t out_stride, size_t row_begin, size_t row_end, size_t harmonics);

#endif
