/* expand_rows.c - token rows copied to their frames (alignment as a gather). No allocation, no I/O. */
#include "expand_rows.h"

#include "ck_packed.h"

int ck_expand_rows_frames(const int32_t *frames, size_t frames_count, size_t token_begin, size_t token_end,
                          size_t *total)
{
    if (total == NULL) {
        return CK_E_ARG;
    }
    if (token_begin > token_end) {
        return CK_E_RANGE;
    }
    if (token_begin == token_end) {
        *total = 0;
        return 0;
    }
    if (frames == NULL) {
        return CK_E_ARG;
    }
    if (frames_count < token_end) {
        return CK_E_SIZE;
    }
    size_t sum = 0;
    for (size_t t = token_begin; t < token_end; t++) {
        if (frames[t] < 0) {
            return CK_E_RANGE;
        }
        if ((size_t)frames[t] > SIZE_MAX - sum) {
            return CK_E_SIZE;
        }
        sum += (size_t)frames[t];
    }
    *total = sum;
    return 0;
}

int ck_expand_rows_f32(const float *x, size_t x_count, size_t x_stride, const int32_t *frames, size_t frames_count,
                       float *y, size_t y_count, size_t y_stride, size_t token_begin, size_t token_end,
                       size_t frame_begin, size_t cols)
{
    size_t total, ys = 0;
    int rc = ck_expand_rows_frames(frames, frames_count, token_begin, token_end, &total);
    if (rc != 0) {
        return rc;
    }
    if (cols == 0) {
        return CK_E_SIZE;
    }
    if (total > SIZE_MAX - frame_begin) {
        return CK_E_SIZE;
    }
    rc = ck_rows_io_check(x, x_count, x_stride, y, y_count, y_stride, total > 0 ? token_end : 0,
                          total > 0 ? frame_begin + total : 0, cols, 0);
    if (rc != 0 || total == 0) {
        return rc;
    }
    (void)ck_span(frame_begin + total, cols, y_stride, &ys); /* checked above */
    if (ck_overlap(y, ys * sizeof(float), frames, token_end * sizeof(int32_t))) {
        return CK_E_ARG;
    }
    size_t f = frame_begin;
    for (size_t t = token_begin; t < token_end; t++) {
        for (int32_t k = 0; k < frames[t]; k++, f++) {
            memcpy(y + f * y_stride, x + t * x_stride, cols * sizeof(float));
        }
    }
    return 0;
}
