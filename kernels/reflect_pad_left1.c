/* reflect_pad_left1.c - row copies with one reflected row in front of each sequence. No allocation, no I/O. */
#include "reflect_pad_left1.h"

#include <string.h>

#include "ck_packed.h"

int ck_reflect_pad_left1_f32(const float *x, size_t x_count, size_t x_stride, float *y, size_t y_count,
                             size_t y_stride, const size_t *offsets, size_t n_seq, size_t seq_begin, size_t seq_end,
                             size_t channels)
{
    size_t rows_end;
    int rc = ck_packed_check(offsets, n_seq, seq_begin, seq_end, &rows_end);
    if (rc != 0) {
        return rc;
    }
    if (channels == 0) {
        return CK_E_SIZE;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        if (offsets[s + 1] - offsets[s] < 2) {
            return CK_E_SIZE;
        }
    }
    if (seq_begin == seq_end) {
        return 0;
    }
    if (rows_end > SIZE_MAX - seq_end) {
        return CK_E_SIZE;
    }
    if ((rc = ck_rows_io_check(x, x_count, x_stride, y, y_count, y_stride, rows_end, rows_end + seq_end, channels, 0)) !=
        0) {
        return rc;
    }
    for (size_t s = seq_begin; s < seq_end; s++) {
        size_t first = offsets[s], len = offsets[s + 1] - first;
        float *ys = y + (first + s) * y_stride;
        memcpy(ys, x + (first + 1) * x_stride, channels * sizeof(float));
        for (size_t i = 0; i < len; i++) {
            memcpy(ys + (i + 1) * y_stride, x + (first + i) * x_stride, channels * sizeof(float));
        }
    }
    return 0;
}
