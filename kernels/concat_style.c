/* concat_style.c - rows followed by their sequence's style (concat_style.h). No allocation, no I/O. */
#include "concat_style.h"

#include <string.h>

#include "ck_check.h"
#include "ck_packed.h"
#include "ck_status.h"

int ck_concat_style_f32(const float *x, size_t x_count, size_t x_stride, const float *style,
                        size_t style_count, size_t style_cols, float *y, size_t y_count,
                        size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin,
                        size_t seq_end, size_t channels)
{
    size_t end = 0, xs = 0, ys = 0;
    int rc = ck_packed_check(offsets, n_seq, seq_begin, seq_end, &end);
    if (rc != 0) {
        return rc;
    }
    size_t first = seq_begin < seq_end ? offsets[seq_begin] : 0, rows = end - first;
    if (rows > 0 && (x == NULL || style == NULL || y == NULL)) {
        return CK_E_ARG;
    }
    if (channels == 0 || style_cols == 0 || channels > SIZE_MAX / 4 - style_cols ||
        ck_span(end, channels, x_stride, &xs) != 0 || xs > x_count ||
        ck_span(end, channels + style_cols, y_stride, &ys) != 0 || ys > y_count ||
        seq_end > SIZE_MAX / style_cols || seq_end * style_cols > style_count) {
        return CK_E_SIZE;
    }
    if (rows == 0) {
        return CK_OK;
    }
    size_t f = sizeof(float);
    if (ck_overlap(y, ys * f, x, xs * f) || ck_overlap(y, ys * f, style, seq_end * style_cols * f)) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(x + first * x_stride, rows, channels, x_stride) ||
        !ck_all_finite(style + seq_begin * style_cols, seq_end - seq_begin, style_cols, style_cols)) {
        return CK_E_NONFINITE;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        for (size_t r = offsets[s]; r < offsets[s + 1]; r++) {
            memcpy(y + r * y_stride, x + r * x_stride, channels * f);
            memcpy(y + r * y_stride + channels, style + s * style_cols, style_cols * f);
        }
    }
    return CK_OK;
}
