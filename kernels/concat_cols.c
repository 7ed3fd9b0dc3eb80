/* concat_cols.c - two blocks of columns side by side, row by row. No allocation, no I/O. */
#include "concat_cols.h"

#include "ck_check.h"
#include "ck_status.h"

#include <string.h>

int ck_concat_cols_f32(const float *x, size_t x_count, size_t x_stride, size_t x_cols,
                       const float *z, size_t z_count, size_t z_stride, size_t z_cols, float *y,
                       size_t y_count, size_t y_stride, size_t row_begin, size_t row_end)
{
    if (row_begin > row_end) {
        return CK_E_RANGE;
    }
    const size_t rows = row_end > row_begin ? row_end : 0;
    size_t xs = 0, zs = 0, ys = 0;
    if (x_cols == 0 || z_cols == 0 || x_cols > SIZE_MAX - z_cols ||
        ck_span(rows, x_cols, x_stride, &xs) != 0 || xs > x_count ||
        ck_span(rows, z_cols, z_stride, &zs) != 0 || zs > z_count ||
        ck_span(rows, x_cols + z_cols, y_stride, &ys) != 0 || ys > y_count ||
        ys > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (rows > 0 && (x == NULL || z == NULL || y == NULL)) {
        return CK_E_ARG;
    }
    if (ck_overlap(x, xs * sizeof(float), y, ys * sizeof(float)) ||
        ck_overlap(z, zs * sizeof(float), y, ys * sizeof(float))) {
        return CK_E_ARG;
    }
    for (size_t r = row_begin; r < row_end; r++) {
        memcpy(y + r * y_stride, x + r * x_stride, x_cols * sizeof(float));
        memcpy(y + r * y_stride + x_cols, z + r * z_stride, z_cols * sizeof(float));
    }
    return 0;
}
