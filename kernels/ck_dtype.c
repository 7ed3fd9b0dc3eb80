/* ck_dtype.c - the dtype traits table. */
#include "ck_dtype.h"

#include <immintrin.h>
#include <string.h>

#include "ck_isa.h"

static const ck_dtype_traits TRAITS[CK_DTYPE_COUNT] = {
    [CK_DTYPE_F32] = {"F32", "f32", 4, 1},  [CK_DTYPE_F16] = {"F16", "f16", 2, 1},
    [CK_DTYPE_BF16] = {"BF16", "bf16", 2, 1}, [CK_DTYPE_I32] = {"I32", "i32", 4, 0},
    [CK_DTYPE_I64] = {"I64", "i64", 8, 0},  [CK_DTYPE_U8] = {"U8", "u8", 1, 0},
    [CK_DTYPE_I8] = {"I8", "i8", 1, 0},
    [CK_DTYPE_OTHER] = {"OTHER", "other", 0, 0},
};
_Static_assert(CK_DTYPE_COUNT == 8, "a traits row for every dtype");

const ck_dtype_traits *ck_dtype_info(ck_dtype d)
{
    return (unsigned)d < CK_DTYPE_COUNT ? &TRAITS[d] : &TRAITS[CK_DTYPE_OTHER];
}

const char *ck_dtype_name(ck_dtype d)
{
    return ck_dtype_info(d)->name;
}

size_t ck_dtype_size(ck_dtype d)
{
    return ck_dtype_info(d)->size;
}

ck_dtype ck_dtype_from_lower(const char *lower)
{
    for (int d = 0; lower != NULL && d < CK_DTYPE_OTHER; d++) {
        if (strcmp(TRAITS[d].lower, lower) == 0) {
            return (ck_dtype)d;
        }
    }
    return CK_DTYPE_OTHER;
}

ck_dtype ck_dtype_from_name(const char *name)
{
    for (int d = 0; name != NULL && d < CK_DTYPE_OTHER; d++) {
        if (strcmp(TRAITS[d].name, name) == 0) {
            return (ck_dtype)d;
        }
    }
    return CK_DTYPE_OTHER;
}

/* Rows of x (stride x_stride) rounded to bf16 into y (stride y_stride), cols each, by
 * ck_bf16_from_f32 written branch-free so it vectorizes; the AVX-512 twin gives the same bits. */
CK_ALWAYS_INLINE void bf16_rows_loop(const float *x, size_t x_stride, uint16_t *y, size_t y_stride,
                                     size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_stride;
        uint16_t *yr = y + r * y_stride;
        for (size_t c = 0; c < cols; c++) {
            uint32_t u;
            memcpy(&u, &xr[c], sizeof u);
            uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
            uint32_t quiet = (u >> 16) | 0x0040u;
            yr[c] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
        }
    }
}

static void bf16_rows_portable(const float *x, size_t x_stride, uint16_t *y, size_t y_stride,
                               size_t rows, size_t cols)
{
    bf16_rows_loop(x, x_stride, y, y_stride, rows, cols);
}

/* The same rounding, 16 values per step in AVX-512F integer lanes (no AVX512-BF16 instruction:
 * VCVTNEPS2BF16 treats denormal inputs as zero, ck_bf16_from_f32 does not), so both paths give the
 * same bits (tests/kernels/test_linear.c compares them). */
CK_TARGET_AVX512 static void bf16_rows_avx512(const float *x, size_t x_stride, uint16_t *y,
                                              size_t y_stride, size_t rows, size_t cols)
{
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1);
    const __m512i quiet = _mm512_set1_epi32(0x0040);
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * x_stride;
        uint16_t *yr = y + r * y_stride;
        size_t c = 0;
        for (; c + 16 <= cols; c += 16) {
            __m512i u = _mm512_loadu_si512((const void *)(xr + c));
            __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
            __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, bias), lsb), 16);
            __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs_mask), inf);
            __m512i q = _mm512_or_si512(_mm512_srli_epi32(u, 16), quiet);
            __m512i h = _mm512_mask_blend_epi32(nan, rounded, q);
            _mm256_storeu_si256((__m256i *)(void *)(yr + c), _mm512_cvtepi32_epi16(h));
        }
        bf16_rows_loop(xr + c, x_stride, yr + c, y_stride, 1, cols - c);
    }
}

void ck_bf16_from_f32_rows(const float *x, size_t x_stride, uint16_t *y, size_t y_stride, size_t rows,
                           size_t cols)
{
    if (ck_kernels_isa_level() == CK_ISA_AVX512) {
        bf16_rows_avx512(x, x_stride, y, y_stride, rows, cols);
    } else {
        bf16_rows_portable(x, x_stride, y, y_stride, rows, cols);
    }
}
