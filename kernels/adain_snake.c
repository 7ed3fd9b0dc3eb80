/* adain_snake.c - instance statistics in double (ck_instance_stats.h), then affine and Snake (ck_sin.h) per element, 16 channels a block. No I/O. */
#include "adain_snake.h"

#include "ck_instance_stats.h"
#include "ck_isa.h"
#include "ck_sin.h"
#include "ck_style_norm.h"

/* Instantiated per ISA below (the frame loop's channel loop vectorizes; every lane and the remainder do
 * the same IEEE operations, so both paths give the same bits). */
CK_ALWAYS_INLINE void adain_snake_block(const float *x, size_t x_stride, const float *gamma, const float *beta,
                                        const float *alpha, float *y, size_t y_stride, size_t n, size_t c0,
                                        size_t nb, double eps)
{
    double mean[CK_INSTANCE_BLOCK], scale[CK_INSTANCE_BLOCK];
    ck_instance_stats(x, x_stride, gamma, n, c0, nb, eps, mean, scale);
    /* y may be x: every read of this block happened above */
    for (size_t f = 0; f < n; f++) {
        for (size_t c = 0; c < nb; c++) {
            double d = (double)x[f * x_stride + c0 + c] - mean[c];
            float t = (float)(d * scale[c] + (double)beta[c0 + c]);
            y[f * y_stride + c0 + c] = ck_snake1_f32(t, alpha[c0 + c]);
        }
    }
}

CK_ALWAYS_INLINE void adain_snake_seqs(const float *x, size_t x_stride, const float *gamma, const float *beta,
                                       const float *alpha, float *y, size_t y_stride, const size_t *offsets,
                                       size_t seq_begin, size_t seq_end, size_t channels, double eps)
{
    for (size_t s = seq_begin; s < seq_end; s++) {
        size_t first = offsets[s], n = offsets[s + 1] - first;
        for (size_t c0 = 0; n > 0 && c0 < channels; c0 += CK_INSTANCE_BLOCK) {
            size_t nb = channels - c0 < CK_INSTANCE_BLOCK ? channels - c0 : CK_INSTANCE_BLOCK;
            adain_snake_block(x + first * x_stride, x_stride, gamma + s * channels, beta + s * channels, alpha,
                              y + first * y_stride, y_stride, n, c0, nb, eps);
        }
    }
}

static void adain_snake_portable(const float *x, size_t x_stride, const float *gamma, const float *beta,
                                 const float *alpha, float *y, size_t y_stride, const size_t *offsets,
                                 size_t seq_begin, size_t seq_end, size_t channels, double eps)
{
    adain_snake_seqs(x, x_stride, gamma, beta, alpha, y, y_stride, offsets, seq_begin, seq_end, channels, eps);
}

CK_TARGET_AVX512 static void adain_snake_avx512(const float *x, size_t x_stride, const float *gamma,
                                                const float *beta, const float *alpha, float *y, size_t y_stride,
                                                const size_t *offsets, size_t seq_begin, size_t seq_end,
                                                size_t channels, double eps)
{
    adain_snake_seqs(x, x_stride, gamma, beta, alpha, y, y_stride, offsets, seq_begin, seq_end, channels, eps);
}

int ck_adain_snake_f32(const float *x, size_t x_count, size_t x_stride, const float *gamma, size_t gamma_count,
                       const float *beta, size_t beta_count, const float *alpha, size_t alpha_count, float *y,
                       size_t y_count, size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin,
                       size_t seq_end, size_t channels, float eps)
{
    size_t rows_begin, rows_end;
    int rc = ck_style_norm_check(x, x_count, x_stride, gamma, gamma_count, beta, beta_count, y, y_count, y_stride,
                                 offsets, n_seq, seq_begin, seq_end, channels, eps, &rows_begin, &rows_end);
    if (rc != 0 || rows_begin == rows_end) {
        return rc;
    }
    if (alpha == NULL) {
        return CK_E_ARG;
    }
    if (alpha_count < channels) {
        return CK_E_SIZE;
    }
    if (ck_overlap(y, ((rows_end - 1) * y_stride + channels) * sizeof(float), alpha, channels * sizeof(float))) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(alpha, 1, channels, channels)) {
        return CK_E_NONFINITE;
    }
    for (size_t c = 0; c < channels; c++) {
        if (alpha[c] == 0.0f) {
            return CK_E_ARG;
        }
    }
    if (ck_kernels_isa_level() == CK_ISA_AVX512) {
        adain_snake_avx512(x, x_stride, gamma, beta, alpha, y, y_stride, offsets, seq_begin, seq_end, channels,
                           (double)eps);
    } else {
        adain_snake_portable(x, x_stride, gamma, beta, alpha, y, y_stride, offsets, seq_begin, seq_end, channels,
                             (double)eps);
    }
    return 0;
}
