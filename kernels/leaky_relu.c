/* leaky_relu.c - the leaky ReLU elementwise, vectorized per ISA. No allocation, no I/O. */
#include "leaky_relu.h"

#include <math.h>

#include "ck_check.h"
#include "ck_isa.h"

/* CK_E_NONFINITE if any x[i] is not finite, else y[i] = leaky_relu(x[i]) for i < n (x == y
 * allowed). Instantiated per ISA below; one multiply and a select, so both give the same bits. */
CK_ALWAYS_INLINE int leaky_relu_loop(const float *x, float *y, size_t n, float slope)
{
    if (!ck_all_finite(x, 1, n, n)) {
        return CK_E_NONFINITE;
    }
    for (size_t i = 0; i < n; i++) {
        y[i] = x[i] >= 0.0f ? x[i] : slope * x[i];
    }
    return 0;
}

static int leaky_relu_portable(const float *x, float *y, size_t n, float slope)
{
    return leaky_relu_loop(x, y, n, slope);
}

CK_TARGET_AVX512 static int leaky_relu_avx512(const float *x, float *y, size_t n, float slope)
{
    return leaky_relu_loop(x, y, n, slope);
}

int ck_leaky_relu_f32(const float *x, size_t x_count, float *y, size_t y_count, size_t n,
                      float slope)
{
    if ((n > 0 && (x == NULL || y == NULL)) || !isfinite(slope)) {
        return CK_E_ARG;
    }
    if (x_count < n || y_count < n || n > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (x != y && ck_overlap(x, n * sizeof(float), y, n * sizeof(float))) {
        return CK_E_ARG;
    }
    return ck_kernels_isa_level() == CK_ISA_AVX512 ? leaky_relu_avx512(x, y, n, slope)
                                                   : leaky_relu_portable(x, y, n, slope);
}
