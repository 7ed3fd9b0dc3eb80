/* conv1d.c - the conv1d's weight packing and per-sequence im2col (conv1d.h). No allocation, no I/O. */
#include "conv1d.h"

#include <stdint.h>
#include <string.h>

#include "ck_check.h"
#include "ck_packed.h"
#include "ck_status.h"

int ck_conv1d_pack_weight_f32(const float *w, size_t w_count, float *packed, size_t packed_count,
                              size_t cout, size_t cin, size_t taps)
{
    if (w == NULL || packed == NULL) {
        return CK_E_ARG;
    }
    if (cout == 0 || cin == 0 || taps == 0 || cin > SIZE_MAX / taps ||
        cout > SIZE_MAX / (cin * taps) / sizeof(float)) {
        return CK_E_SIZE;
    }
    size_t n = cout * cin * taps;
    if (w_count < n || packed_count < n) {
        return CK_E_SIZE;
    }
    if (ck_overlap(w, n * sizeof(float), packed, n * sizeof(float))) {
        return CK_E_ARG;
    }
    for (size_t o = 0; o < cout; o++) {
        for (size_t c = 0; c < cin; c++) {
            for (size_t j = 0; j < taps; j++) {
                packed[(o * taps + j) * cin + c] = w[(o * cin + c) * taps + j];
            }
        }
    }
    return CK_OK;
}

/* The sequence that owns row t (offsets never decrease; t < offsets[n_seq]). */
static size_t sequence_of(const size_t *offsets, size_t n_seq, size_t t)
{
    size_t lo = 0, hi = n_seq; /* offsets[lo] <= t < offsets[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int check_im2col(const float *x, size_t x_count, size_t x_stride, const size_t *offsets,
                        size_t n_seq, size_t row, size_t rows, size_t cin, size_t taps,
                        const float *cols, size_t cols_count)
{
    size_t end = 0, xs = 0;
    if (offsets == NULL || (rows > 0 && (x == NULL || cols == NULL))) {
        return CK_E_ARG;
    }
    if (cin == 0 || taps == 0 || cin > SIZE_MAX / taps / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (taps % 2 == 0) {
        return CK_E_ARG;
    }
    if (ck_packed_check(offsets, n_seq, 0, n_seq, &end) != 0 || offsets[0] != 0 || row > end ||
        rows > end - row) {
        return CK_E_RANGE;
    }
    if (ck_span(end, cin, x_stride, &xs) != 0 || xs > x_count || rows > SIZE_MAX / (cin * taps) ||
        rows * cin * taps > cols_count) {
        return CK_E_SIZE;
    }
    size_t f = sizeof(float);
    if (rows > 0 && ck_overlap(x, xs * f, cols, rows * cin * taps * f)) {
        return CK_E_ARG;
    }
    /* the x rows the tile reads: its own, widened by pad and clipped to the sequences it touches */
    if (rows > 0) {
        size_t pad = (taps - 1) / 2;
        size_t first = offsets[sequence_of(offsets, n_seq, row)];
        size_t last_seq = sequence_of(offsets, n_seq, row + rows - 1);
        size_t lo = row - first > pad ? row - pad : first;
        size_t hi = offsets[last_seq + 1] - (row + rows) > pad ? row + rows + pad
                                                                : offsets[last_seq + 1];
        if (!ck_all_finite(x + lo * x_stride, hi - lo, cin, x_stride)) {
            return CK_E_NONFINITE;
        }
    }
    return CK_OK;
}

int ck_conv1d_im2col_f32(const float *x, size_t x_count, size_t x_stride, const size_t *offsets,
                         size_t n_seq, size_t row, size_t rows, size_t cin, size_t taps, float *cols,
                         size_t cols_count)
{
    int rc = check_im2col(x, x_count, x_stride, offsets, n_seq, row, rows, cin, taps, cols,
                          cols_count);
    if (rc != CK_OK || rows == 0) {
        return rc;
    }
    size_t pad = (taps - 1) / 2, width = taps * cin;
    size_t seq = sequence_of(offsets, n_seq, row);
    for (size_t r = 0; r < rows; r++) {
        size_t t = row + r;
        while (t >= offsets[seq + 1]) { /* the next non-empty sequence */
            seq++;
        }
        size_t begin = offsets[seq], end = offsets[seq + 1];
        float *out = cols + r * width;
        for (size_t j = 0; j < taps; j++) {
            /* source row t + j - pad, inside [begin, end) or zeros */
            int inside = t + j >= begin + pad && t + j < end + pad;
            if (inside) {
                memcpy(out + j * cin, x + (t + j - pad) * x_stride, cin * sizeof(float));
            } else {
                memset(out + j * cin, 0, cin * sizeof(float));
            }
        }
    }
    return CK_OK;
}

int ck_conv1d_im2col_general_f32(const float *x, size_t x_count, size_t x_stride,
                                 const size_t *in_offsets, const size_t *out_offsets, size_t n_seq,
                                 size_t row, size_t rows, size_t cin, size_t taps, size_t dilation,
                                 size_t stride, size_t pad, float *cols, size_t cols_count)
{
    size_t in_end = 0, out_end = 0, xs = 0;
    if (in_offsets == NULL || out_offsets == NULL || (rows > 0 && (x == NULL || cols == NULL))) {
        return CK_E_ARG;
    }
    if (cin == 0 || taps == 0 || dilation == 0 || stride == 0 || cin > SIZE_MAX / taps / sizeof(float)) {
        return CK_E_SIZE;
    }
    if (ck_packed_check(in_offsets, n_seq, 0, n_seq, &in_end) != 0 ||
        ck_packed_check(out_offsets, n_seq, 0, n_seq, &out_end) != 0 || in_offsets[0] != 0 ||
        out_offsets[0] != 0 || row > out_end || rows > out_end - row) {
        return CK_E_RANGE;
    }
    if (ck_span(in_end, cin, x_stride, &xs) != 0 || xs > x_count || rows > SIZE_MAX / (cin * taps) ||
        rows * cin * taps > cols_count) {
        return CK_E_SIZE;
    }
    if (rows > 0 && ck_overlap(x, xs * sizeof(float), cols, rows * cin * taps * sizeof(float))) {
        return CK_E_ARG;
    }
    size_t q = rows > 0 ? sequence_of(out_offsets, n_seq, row) : 0;
    for (size_t r = 0; r < rows; r++) {
        size_t t = row + r;
        while (t >= out_offsets[q + 1]) {
            q++;
        }
        size_t o = t - out_offsets[q], len = in_offsets[q + 1] - in_offsets[q];
        float *dst = cols + r * taps * cin;
        for (size_t j = 0; j < taps; j++) {
            size_t at = o * stride + j * dilation; /* input index + pad */
            if (at >= pad && at - pad < len) {
                memcpy(dst + j * cin, x + (in_offsets[q] + at - pad) * x_stride, cin * sizeof(float));
            } else {
                memset(dst + j * cin, 0, cin * sizeof(float));
            }
        }
    }
    return rows == 0 || ck_all_finite(cols, rows, taps * cin, taps * cin) ? CK_OK : CK_E_NONFINITE;
}
