/* noise_normal.c - Philox4x32-10 from the published round function and constants, Box-Muller in double. No allocation, no I/O. */
#include "noise_normal.h"

#include <math.h>

#include "ck_check.h"

enum { PHILOX_ROUNDS = 10 };

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void ck_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < PHILOX_ROUNDS; r++) {
        if (r > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0, hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

void ck_box_muller4(const uint32_t w[4], float z[4])
{
    const double two_pi = 6.283185307179586476925286766559;
    const double inv32 = 1.0 / 4294967296.0;
    for (int p = 0; p < 2; p++) {
        double u1 = ((double)w[2 * p] + 1.0) * inv32, u2 = (double)w[2 * p + 1] * inv32;
        double r = sqrt(-2.0 * log(u1)), t = two_pi * u2;
        z[2 * p] = (float)(r * cos(t));
        z[2 * p + 1] = (float)(r * sin(t));
    }
}

int ck_noise_normal_f32(uint64_t seed, uint32_t line, uint32_t chunk, float *out, size_t out_count,
                        size_t out_stride, size_t row_begin, size_t row_end, size_t harmonics)
{
    if (row_begin > row_end || (uint64_t)row_end > ((uint64_t)1 << 32)) {
        return CK_E_RANGE;
    }
    if (harmonics == 0 || out_stride < harmonics) {
        return CK_E_SIZE;
    }
    if (row_begin == row_end) {
        return 0;
    }
    if (!ck_span_fits(row_end, harmonics, out_stride, out_count)) {
        return CK_E_SIZE;
    }
    if (out == NULL) {
        return CK_E_ARG;
    }
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (size_t n = row_begin; n < row_end; n++) {
        float *row = out + n * out_stride;
        for (size_t h0 = 0; h0 < harmonics; h0 += 4) {
            const uint32_t ctr[4] = {(uint32_t)n, (uint32_t)(h0 / 4), line, chunk};
            uint32_t w[4];
            float z[4];
            ck_philox4x32_10(ctr, key, w);
            ck_box_muller4(w, z);
            for (size_t j = 0; j < 4 && h0 + j < harmonics; j++) {
                row[h0 + j] = z[j];
            }
        }
    }
    return 0;
}
