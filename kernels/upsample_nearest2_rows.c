/* upsample_nearest2_rows.c - every row copied to two output rows. No allocation, no I/O. */
#include "upsample_nearest2_rows.h"

#include "ck_packed.h"

int ck_upsample_nearest2_rows_f32(const float *x, size_t x_count, size_t x_stride, float *y, size_t y_count,
                                  size_t y_stride, size_t row_begin, size_t row_end, size_t cols)
{
    if (row_begin > row_end) {
        return CK_E_RANGE;
    }
    if (cols == 0 || row_end > SIZE_MAX / 2) {
        return CK_E_SIZE;
    }
    int rc = ck_rows_io_check(x, x_count, x_stride, y, y_count, y_stride, row_end > row_begin ? row_end : 0,
                              row_end > row_begin ? 2 * row_end : 0, cols, 0);
    if (rc != 0) {
        return rc;
    }
    for (size_t r = row_begin; r < row_end; r++) {
        memcpy(y + 2 * r * y_stride, x + r * x_stride, cols * sizeof(float));
        memcpy(y + (2 * r + 1) * y_stride, x + r * x_stride, cols * sizeof(float));
    }
    return 0;
}
