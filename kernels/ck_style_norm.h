/* ck_style_norm.h - the shared checks of the style-conditioned norms (adain_instance_norm, ada_layer_norm); kernels only. No I/O. */
#ifndef CK_STYLE_NORM_H
#define CK_STYLE_NORM_H

#include <math.h>

#include "ck_packed.h"

/* Geometry and values of a style norm over sequences [seq_begin, seq_end): x and y [R, C] (y == x allowed),
 * gamma and beta [S, C], eps finite and > 0. Sets *rows_begin, *rows_end: the rows the call touches.
 * Errors as the kernels document them; nothing is written. */
static inline int ck_style_norm_check(const float *x, size_t x_count, size_t x_stride, const float *gamma,
                                      size_t gamma_count, const float *beta, size_t beta_count, const float *y,
                                      size_t y_count, size_t y_stride, const size_t *offsets, size_t n_seq,
                                      size_t seq_begin, size_t seq_end, size_t channels, float eps,
                                      size_t *rows_begin, size_t *rows_end)
{
    int rc = ck_packed_check(offsets, n_seq, seq_begin, seq_end, rows_end);
    if (rc != 0) {
        return rc;
    }
    *rows_begin = seq_begin < seq_end ? offsets[seq_begin] : 0;
    if (!(eps > 0.0f) || !isfinite(eps)) {
        return CK_E_ARG;
    }
    if (channels == 0) {
        return CK_E_SIZE;
    }
    if ((rc = ck_rows_io_check(x, x_count, x_stride, y, y_count, y_stride, *rows_end, *rows_end, channels, 1)) != 0) {
        return rc;
    }
    size_t y_bytes = *rows_end > 0 ? ((*rows_end - 1) * y_stride + channels) * sizeof(float) : 0;
    if ((rc = ck_per_sequence_check(gamma, gamma_count, y, y_bytes, seq_begin, seq_end, channels)) != 0 ||
        (rc = ck_per_sequence_check(beta, beta_count, y, y_bytes, seq_begin, seq_end, channels)) != 0) {
        return rc;
    }
    if (!ck_all_finite(x + *rows_begin * x_stride, *rows_end - *rows_begin, channels, x_stride)) {
        return CK_E_NONFINITE;
    }
    return 0;
}

#endif
