/* add_scaled.c - (x + residual) * scale elementwise, vectorized per ISA. No allocation, no I/O. */
#include "add_scaled.h"

#include <math.h>

#include "ck_check.h"
#include "ck_isa.h"

/* CK_E_NONFINITE if an input is not finite, else y = (x + r) * scale. Instantiated per ISA below;
 * an add and a multiply, each rounded (the build never contracts them: -ffp-contract=off), so both
 * give the same bits. */
CK_ALWAYS_INLINE int add_scaled_loop(const float *x, const float *r, float *y, size_t n, float scale)
{
    if (!ck_all_finite(x, 1, n, n) || !ck_all_finite(r, 1, n, n)) {
        return CK_E_NONFINITE;
    }
    for (size_t i = 0; i < n; i++) {
        y[i] = (x[i] + r[i]) * scale;
    }
    return 0;
}

static int add_scaled_portable(const float *x, const float *r, float *y, size_t n, float scale)
{
    return add_scaled_loop(x, r, y, n, scale);
}

CK_TARGET_AVX512 static int add_scaled_avx512(const float *x, const float *r, float *y, size_t n,
                                              float scale)
{
    return add_scaled_loop(x, r, y, n, scale);
}

int ck_add_scaled_f32(const float *x, size_t x_count, const float *residual, size_t residual_count,
                      float *y, size_t y_count, size_t n, float scale)
{
    if ((n > 0 && (x == NULL || residual == NULL || y == NULL)) || !isfinite(scale)) {
        return CK_E_ARG;
    }
    if (x_count < n || residual_count < n || y_count < n || n > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    const size_t bytes = n * sizeof(float);
    if ((y != x && ck_overlap(x, bytes, y, bytes)) ||
        (y != residual && ck_overlap(residual, bytes, y, bytes))) {
        return CK_E_ARG;
    }
    return ck_kernels_isa_level() == CK_ISA_AVX512 ? add_scaled_avx512(x, residual, y, n, scale)
                                                   : add_scaled_portable(x, residual, y, n, scale);
}
