/* gelu_new.c - gelu_new elementwise through x / (1 + e^(-2u)) with a vectorizable exp. No allocation, no I/O. */
#include "gelu_new.h"

#include "ck_check.h"
#include "ck_exp.h"
#include "ck_isa.h"

/* CK_E_NONFINITE if any x[i] is not finite, else y[i] = gelu_new(x[i]) for i < n (x == y allowed).
 * Instantiated per ISA below: both loops vectorize, with SSE2 registers in the baseline build and
 * AVX-512 ones in gelu_avx512; no FMA contraction, so both give the same bits. */
CK_ALWAYS_INLINE int gelu_loop(const float *x, float *y, size_t n)
{
    if (!ck_all_finite(x, 1, n, n)) {
        return CK_E_NONFINITE;
    }
    const float k = 0.7978845608028654f; /* sqrt(2 / pi) */
    for (size_t i = 0; i < n; i++) {
        /* Below x = -10 gelu_new is within 1.7e-37 of 0; clamping x there keeps x^3 finite and y tiny
         * (an unclamped -3e38 / (1 + e^87) would be -2e0). Large positive x^3 may overflow to Inf:
         * the z clamp maps it to -87 and y = x exactly. */
        float v = x[i] < -10.0f ? -10.0f : x[i];
        float z = -2.0f * k * (v + 0.044715f * v * v * v);
        z = z < -87.0f ? -87.0f : z;
        z = z > 87.0f ? 87.0f : z;
        y[i] = v / (1.0f + ck_exp_f32(z));
    }
    return 0;
}

static int gelu_portable(const float *x, float *y, size_t n)
{
    return gelu_loop(x, y, n);
}

CK_TARGET_AVX512 static int gelu_avx512(const float *x, float *y, size_t n)
{
    return gelu_loop(x, y, n);
}

int ck_gelu_new_f32(const float *x, size_t x_count, float *y, size_t y_count, size_t n)
{
    if (n > 0 && (x == NULL || y == NULL)) {
        return CK_E_ARG;
    }
    if (x_count < n || y_count < n || n > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (x != y && ck_overlap(x, n * sizeof(float), y, n * sizeof(float))) {
        return CK_E_ARG;
    }
    return ck_kernels_isa_level() == CK_ISA_AVX512 ? gelu_avx512(x, y, n) : gelu_portable(x, y, n);
}
