/* conv_transpose1d_col2im.c - col2im of a strided transposed convolution per output frame, in double. No allocation, no I/O. */
#include "conv_transpose1d_col2im.h"

#include "ck_packed.h"

static int col2im_check(const float *z, size_t z_count, size_t z_stride, const float *bias, size_t bias_count,
                        const float *y, size_t y_count, size_t y_stride, const size_t *offsets, size_t n_seq,
                        size_t seq_begin, size_t seq_end, size_t channels, size_t kernel, size_t stride,
                        size_t padding, size_t *rows_begin, size_t *rows_end)
{
    int rc = ck_packed_check(offsets, n_seq, seq_begin, seq_end, rows_end);
    if (rc != 0) {
        return rc;
    }
    *rows_begin = seq_begin < seq_end ? offsets[seq_begin] : 0;
    if (channels == 0 || kernel == 0 || stride == 0 || kernel < stride || kernel - stride != 2 * padding ||
        kernel > SIZE_MAX / channels || *rows_end > SIZE_MAX / stride) {
        return CK_E_SIZE;
    }
    size_t zs, ys, width = kernel * channels, out_rows = *rows_end * stride;
    if (ck_span(*rows_end, width, z_stride, &zs) != 0 || zs > z_count || ck_span(out_rows, channels, y_stride, &ys) != 0 ||
        ys > y_count || zs > SIZE_MAX / sizeof(float) || ys > SIZE_MAX / sizeof(float) ||
        (bias != NULL && bias_count < channels)) {
        return CK_E_SIZE;
    }
    if (*rows_end == *rows_begin) {
        return 0;
    }
    if (z == NULL || y == NULL) {
        return CK_E_ARG;
    }
    if (ck_overlap(y, ys * sizeof(float), z, zs * sizeof(float)) ||
        (bias != NULL && ck_overlap(y, ys * sizeof(float), bias, channels * sizeof(float)))) {
        return CK_E_ARG;
    }
    if ((bias != NULL && !ck_all_finite(bias, 1, channels, channels)) ||
        !ck_all_finite(z + *rows_begin * z_stride, *rows_end - *rows_begin, width, z_stride)) {
        return CK_E_NONFINITE;
    }
    return 0;
}

int ck_conv_transpose1d_col2im_f32(const float *z, size_t z_count, size_t z_stride, const float *bias,
                                   size_t bias_count, float *y, size_t y_count, size_t y_stride,
                                   const size_t *offsets, size_t n_seq, size_t seq_begin, size_t seq_end,
                                   size_t channels, size_t kernel, size_t stride, size_t padding)
{
    size_t rows_begin, rows_end;
    int rc = col2im_check(z, z_count, z_stride, bias, bias_count, y, y_count, y_stride, offsets, n_seq, seq_begin,
                          seq_end, channels, kernel, stride, padding, &rows_begin, &rows_end);
    if (rc != 0 || rows_begin == rows_end) {
        return rc;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        size_t first = offsets[s], len = offsets[s + 1] - first;
        const float *zs = z + first * z_stride;
        for (size_t o = 0; o < len * stride; o++) {
            /* taps j = o + p - l s in [0, K): l from ceil((o + p - K + 1) / s) to floor((o + p) / s) */
            size_t q = o + padding, l_hi = q / stride, l_lo = q + 1 > kernel ? (q + 1 - kernel + stride - 1) / stride : 0;
            l_hi = l_hi < len - 1 ? l_hi : len - 1;
            float *yr = y + (first * stride + o) * y_stride;
            for (size_t c = 0; c < channels; c++) {
                double acc = bias != NULL ? (double)bias[c] : 0.0;
                for (size_t l = l_lo; l <= l_hi; l++) {
                    acc += (double)zs[l * z_stride + (q - l * stride) * channels + c];
                }
                yr[c] = (float)acc;
            }
        }
    }
    return 0;
}

int ck_conv_transpose1d_pack_weight_f32(const float *w, size_t w_count, float *packed, size_t packed_count,
                                        size_t cin, size_t cout, size_t kernel)
{
    if (w == NULL || packed == NULL) {
        return CK_E_ARG;
    }
    if (cin == 0 || cout == 0 || kernel == 0 || cout > SIZE_MAX / kernel || cin > SIZE_MAX / (cout * kernel) ||
        cin * cout * kernel > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    size_t n = cin * cout * kernel;
    if (w_count < n || packed_count < n) {
        return CK_E_SIZE;
    }
    if (ck_overlap(w, n * sizeof(float), packed, n * sizeof(float))) {
        return CK_E_ARG;
    }
    for (size_t ci = 0; ci < cin; ci++) {
        for (size_t c = 0; c < cout; c++) {
            for (size_t j = 0; j < kernel; j++) {
                packed[(j * cout + c) * cin + ci] = w[(ci * cout + c) * kernel + j];
            }
        }
    }
    return 0;
}

int ck_conv_transpose1d_col2im_tile_f32(const float *z, size_t z_count, size_t z_stride, size_t z_first,
                                        size_t len, const float *bias, size_t bias_count, float *y, size_t y_count,
                                        size_t y_stride, size_t out_begin, size_t out_end, size_t channels,
                                        size_t kernel, size_t stride, size_t padding)
{
    if (channels == 0 || kernel == 0 || stride == 0 || kernel < stride || kernel - stride != 2 * padding ||
        kernel > SIZE_MAX / channels || len > SIZE_MAX / stride || (bias != NULL && bias_count < channels)) {
        return CK_E_SIZE;
    }
    if (out_begin > out_end || out_end > len * stride) {
        return CK_E_RANGE;
    }
    if (out_begin == out_end) {
        return 0;
    }
    if (z == NULL || y == NULL) {
        return CK_E_ARG;
    }
    size_t width = kernel * channels, q0 = out_begin + padding, q1 = out_end - 1 + padding;
    size_t l_first = q0 + 1 > kernel ? (q0 + 1 - kernel + stride - 1) / stride : 0;
    size_t l_last = q1 / stride < len - 1 ? q1 / stride : len - 1, zs, ys;
    if (l_first < z_first || ck_span(l_last + 1 - z_first, width, z_stride, &zs) != 0 || zs > z_count ||
        ck_span(out_end, channels, y_stride, &ys) != 0 || ys > y_count) {
        return CK_E_SIZE;
    }
    if (ck_overlap(y, ys * sizeof(float), z, zs * sizeof(float))) {
        return CK_E_ARG;
    }
    if ((bias != NULL && !ck_all_finite(bias, 1, channels, channels)) ||
        !ck_all_finite(z + (l_first - z_first) * z_stride, l_last + 1 - l_first, width, z_stride)) {
        return CK_E_NONFINITE;
    }
    for (size_t o = out_begin; o < out_end; o++) {
        /* as ck_conv_transpose1d_col2im_f32: l ascending, in double, one rounding */
        size_t q = o + padding, l_hi = q / stride, l_lo = q + 1 > kernel ? (q + 1 - kernel + stride - 1) / stride : 0;
        l_hi = l_hi < len - 1 ? l_hi : len - 1;
        float *yr = y + o * y_stride;
        for (size_t c = 0; c < channels; c++) {
            double acc = bias != NULL ? (double)bias[c] : 0.0;
            for (size_t l = l_lo; l <= l_hi; l++) {
                acc += (double)z[(l - z_first) * z_stride + (q - l * stride) * channels + c];
            }
            yr[c] = (float)acc;
        }
    }
    return 0;
}
