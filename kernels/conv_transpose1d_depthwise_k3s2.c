/* conv_transpose1d_depthwise_k3s2.c - per-sequence depthwise transposed convolution, two output rows per input row. No I/O. */
#include "conv_transpose1d_depthwise_k3s2.h"

#include "ck_packed.h"

static int convt_check(const float *x, size_t x_count, size_t x_stride, const float *weight, size_t weight_count,
                       const float *bias, size_t bias_count, const float *y, size_t y_count, size_t y_stride,
                       size_t rows_begin, size_t rows_end, size_t channels)
{
    if (channels == 0 || rows_end > SIZE_MAX / 2 || channels > SIZE_MAX / 3 / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (rows_end == rows_begin) {
        return 0;
    }
    int rc = ck_rows_io_check(x, x_count, x_stride, y, y_count, y_stride, rows_end, 2 * rows_end, channels, 0);
    if (rc != 0) {
        return rc;
    }
    if (weight == NULL || bias == NULL) {
        return CK_E_ARG;
    }
    if (weight_count < 3 * channels || bias_count < channels) {
        return CK_E_SIZE;
    }
    size_t yb = ((2 * rows_end - 1) * y_stride + channels) * sizeof(float);
    if (ck_overlap(y, yb, weight, 3 * channels * sizeof(float)) || ck_overlap(y, yb, bias, channels * sizeof(float))) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(x + rows_begin * x_stride, rows_end - rows_begin, channels, x_stride) ||
        !ck_all_finite(weight, 1, 3 * channels, 3 * channels) || !ck_all_finite(bias, 1, channels, channels)) {
        return CK_E_NONFINITE;
    }
    return 0;
}

int ck_conv_transpose1d_depthwise_k3s2_f32(const float *x, size_t x_count, size_t x_stride, const float *weight,
                                           size_t weight_count, const float *bias, size_t bias_count, float *y,
                                           size_t y_count, size_t y_stride, const size_t *offsets, size_t n_seq,
                                           size_t seq_begin, size_t seq_end, size_t channels)
{
    size_t rows_end;
    int rc = ck_packed_check(offsets, n_seq, seq_begin, seq_end, &rows_end);
    if (rc != 0) {
        return rc;
    }
    size_t rows_begin = seq_begin < seq_end ? offsets[seq_begin] : 0;
    rc = convt_check(x, x_count, x_stride, weight, weight_count, bias, bias_count, y, y_count, y_stride, rows_begin,
                     rows_end, channels);
    if (rc != 0) {
        return rc;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        for (size_t m = offsets[s]; m < offsets[s + 1]; m++) {
            const float *xm = x + m * x_stride, *xn = m + 1 < offsets[s + 1] ? xm + x_stride : NULL;
            float *even = y + 2 * m * y_stride, *odd = even + y_stride;
            for (size_t c = 0; c < channels; c++) {
                const float *w = weight + 3 * c;
                double o = (double)w[2] * (double)xm[c] + (double)bias[c];
                even[c] = (float)((double)w[1] * (double)xm[c] + (double)bias[c]);
                odd[c] = (float)(xn != NULL ? o + (double)w[0] * (double)xn[c] : o);
            }
        }
    }
    return 0;
}
