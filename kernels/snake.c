/* snake.c - Snake elementwise in float as torch computes it, sin^2 from ck_sin.h (vectorized, no libm). No allocation, no I/O. */
#include "snake.h"

#include "ck_isa.h"
#include "ck_packed.h"
#include "ck_sin.h"

static int snake_check(const float *x, size_t x_count, size_t x_stride, const float *alpha, size_t alpha_count,
                       const float *y, size_t y_count, size_t y_stride, size_t row_begin, size_t row_end,
                       size_t channels)
{
    if (row_begin > row_end) {
        return CK_E_RANGE;
    }
    if (channels == 0) {
        return CK_E_SIZE;
    }
    if (row_begin == row_end) {
        return 0;
    }
    int rc = ck_rows_io_check(x, x_count, x_stride, y, y_count, y_stride, row_end, row_end, channels, 1);
    if (rc != 0) {
        return rc;
    }
    if (alpha == NULL) {
        return CK_E_ARG;
    }
    if (alpha_count < channels) {
        return CK_E_SIZE;
    }
    size_t yb = ((row_end - 1) * y_stride + channels) * sizeof(float);
    if (ck_overlap(y, yb, alpha, channels * sizeof(float))) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(alpha, 1, channels, channels) ||
        !ck_all_finite(x + row_begin * x_stride, row_end - row_begin, channels, x_stride)) {
        return CK_E_NONFINITE;
    }
    for (size_t c = 0; c < channels; c++) {
        if (alpha[c] == 0.0f) {
            return CK_E_ARG;
        }
    }
    return 0;
}

/* Instantiated per ISA below: the channel loop vectorizes (SSE2 in the baseline build, AVX-512 in
 * snake_avx512); ck_snake1_f32 is the same IEEE operations in every lane and in the remainder, so
 * both paths and any split give the same bits. */
CK_ALWAYS_INLINE int snake_rows(const float *x, size_t x_stride, const float *alpha, float *y, size_t y_stride,
                                size_t row_begin, size_t row_end, size_t channels)
{
    for (size_t r = row_begin; r < row_end; r++) {
        const float *xr = x + r * x_stride;
        float *yr = y + r * y_stride;
        for (size_t c = 0; c < channels; c++) {
            yr[c] = ck_snake1_f32(xr[c], alpha[c]);
        }
    }
    return 0;
}

static int snake_portable(const float *x, size_t x_stride, const float *alpha, float *y, size_t y_stride,
                          size_t row_begin, size_t row_end, size_t channels)
{
    return snake_rows(x, x_stride, alpha, y, y_stride, row_begin, row_end, channels);
}

CK_TARGET_AVX512 static int snake_avx512(const float *x, size_t x_stride, const float *alpha, float *y,
                                         size_t y_stride, size_t row_begin, size_t row_end, size_t channels)
{
    return snake_rows(x, x_stride, alpha, y, y_stride, row_begin, row_end, channels);
}

int ck_snake_f32(const float *x, size_t x_count, size_t x_stride, const float *alpha, size_t alpha_count, float *y,
                 size_t y_count, size_t y_stride, size_t row_begin, size_t row_end, size_t channels)
{
    int rc = snake_check(x, x_count, x_stride, alpha, alpha_count, y, y_count, y_stride, row_begin, row_end,
                         channels);
    if (rc != 0) {
        return rc;
    }
    return ck_kernels_isa_level() == CK_ISA_AVX512
               ? snake_avx512(x, x_stride, alpha, y, y_stride, row_begin, row_end, channels)
               : snake_portable(x, x_stride, alpha, y, y_stride, row_begin, row_end, channels);
}
