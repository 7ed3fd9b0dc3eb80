/* downsample2_rows.c - every second row copied. No allocation, no I/O. */
#include "downsample2_rows.h"

#include "ck_packed.h"

int ck_downsample2_rows_f32(const float *x, size_t x_count, size_t x_stride, float *y, size_t y_count,
                            size_t y_stride, size_t row_begin, size_t row_end, size_t cols)
{
    if (row_begin > row_end) {
        return CK_E_RANGE;
    }
    if (cols == 0 || row_end > SIZE_MAX / 2) {
        return CK_E_SIZE;
    }
    const int rows = row_end > row_begin;
    int rc = ck_rows_io_check(x, x_count, x_stride, y, y_count, y_stride, rows ? 2 * row_end - 1 : 0,
                              rows ? row_end : 0, cols, 0);
    if (rc != 0) {
        return rc;
    }
    for (size_t m = row_begin; m < row_end; m++) {
        memcpy(y + m * y_stride, x + 2 * m * x_stride, cols * sizeof(float));
    }
    return 0;
}
