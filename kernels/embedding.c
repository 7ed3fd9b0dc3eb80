/* embedding.c - the plain embedding lookup (embedding.h). No allocation, no I/O. */
#include "embedding.h"

#include <string.h>

#include "ck_check.h"
#include "ck_status.h"

int ck_embedding_f32(const int32_t *ids, size_t n, const float *table, size_t table_rows,
                     size_t channels, float *y, size_t y_count, size_t y_stride)
{
    size_t ys = 0;
    if (table == NULL || (n > 0 && (ids == NULL || y == NULL))) {
        return CK_E_ARG;
    }
    if (table_rows == 0 || channels == 0 || channels > SIZE_MAX / sizeof(float) / table_rows ||
        ck_span(n, channels, y_stride, &ys) != 0 || ys > y_count || ys > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    size_t f = sizeof(float);
    if (ck_overlap(y, ys * f, ids, n * sizeof *ids) ||
        ck_overlap(y, ys * f, table, table_rows * channels * f)) {
        return CK_E_ARG;
    }
    for (size_t t = 0; t < n; t++) { /* every id and picked row first: nothing written on error */
        if (ids[t] < 0 || (size_t)ids[t] >= table_rows) {
            return CK_E_RANGE;
        }
        if (!ck_all_finite(table + (size_t)ids[t] * channels, 1, channels, channels)) {
            return CK_E_NONFINITE;
        }
    }
    for (size_t t = 0; t < n; t++) {
        memcpy(y + t * y_stride, table + (size_t)ids[t] * channels, channels * f);
    }
    return CK_OK;
}
