/* lstm_recurrence.c - one LSTM direction's time loop over packed sequences, FP32, the matvec vectorised over W_hh^T. No allocation, no I/O. */
#include "lstm_recurrence.h"

#include <math.h>

#include "ck_check.h"
#include "ck_isa.h"
#include "ck_packed.h"

int ck_lstm_recurrence_scratch(size_t hidden, size_t *elements)
{
    if (elements == NULL) {
        return CK_E_ARG;
    }
    /* 6H + 4H^2 without overflow, in bytes too: H <= sqrt(SIZE_MAX / 8 / sizeof(float)) suffices */
    if (hidden == 0 || hidden > ((size_t)1 << (sizeof(size_t) * 4 - 3))) {
        return CK_E_SIZE;
    }
    *elements = 6 * hidden + 4 * hidden * hidden;
    return 0;
}

static float sigmoid(float a)
{
    return 1.0f / (1.0f + expf(-a));
}

/* pre[j] = sum_k wt[k, j] h[k] over j < g, each j's sum in k order from 0.0f: the same sums, in the same
 * order, as a dot product of W_hh's row j with h, but the inner loop runs over contiguous j, so it
 * vectorises with no reassociation. Instantiated per ISA below; both give the same bits. */
CK_ALWAYS_INLINE void matvec_loop(const float *restrict wt, const float *restrict hp, float *restrict pre,
                                  size_t hidden, size_t g)
{
    for (size_t j = 0; j < g; j++) {
        pre[j] = 0.0f;
    }
    for (size_t k = 0; k < hidden; k++) {
        const float *restrict row = wt + k * g;
        float hk = hp[k];
        for (size_t j = 0; j < g; j++) {
            pre[j] += row[j] * hk;
        }
    }
}

static void matvec_portable(const float *wt, const float *hp, float *pre, size_t hidden, size_t g)
{
    matvec_loop(wt, hp, pre, hidden, g);
}

CK_TARGET_AVX512 static void matvec_avx512(const float *wt, const float *hp, float *pre, size_t hidden, size_t g)
{
    matvec_loop(wt, hp, pre, hidden, g);
}

/* One sequence, rows [first, first + n): the recurrence of the header. scratch = c [H], h_prev [H],
 * pre [4H], then W_hh^T [H, 4H] (filled by the caller). */
static void lstm_sequence(const float *gates, size_t gates_stride, const float *b_hh, float *h, size_t h_stride,
                          float *scratch, size_t first, size_t n, size_t hidden, int reverse, int avx512)
{
    float *c = scratch, *hp = scratch + hidden, *pre = scratch + 2 * hidden, *wt = scratch + 6 * hidden;
    for (size_t k = 0; k < hidden; k++) {
        c[k] = 0.0f;
        hp[k] = 0.0f;
    }
    for (size_t step = 0; step < n; step++) {
        size_t r = reverse ? first + n - 1 - step : first + step;
        const float *g = gates + r * gates_stride;
        if (avx512) {
            matvec_avx512(wt, hp, pre, hidden, 4 * hidden);
        } else {
            matvec_portable(wt, hp, pre, hidden, 4 * hidden);
        }
        for (size_t j = 0; j < 4 * hidden; j++) {
            pre[j] = g[j] + (pre[j] + b_hh[j]);
        }
        float *out = h + r * h_stride;
        for (size_t k = 0; k < hidden; k++) {
            float i = sigmoid(pre[k]), f = sigmoid(pre[hidden + k]);
            float gg = tanhf(pre[2 * hidden + k]), o = sigmoid(pre[3 * hidden + k]);
            c[k] = f * c[k] + i * gg;
            hp[k] = o * tanhf(c[k]);
            out[k] = hp[k];
        }
    }
}

/* Geometry and value checks of ck_lstm_recurrence_f32; *rows_begin, *rows_end: the rows it touches. */
static int lstm_check(const float *gates, size_t gates_count, size_t gates_stride, const float *w_hh,
                      size_t w_hh_count, const float *b_hh, size_t b_hh_count, const float *h, size_t h_count,
                      size_t h_stride, const float *scratch, size_t scratch_count, const size_t *offsets,
                      size_t n_seq, size_t seq_begin, size_t seq_end, size_t hidden, size_t *rows_begin,
                      size_t *rows_end)
{
    size_t need, g_span, h_span;
    int rc = ck_packed_check(offsets, n_seq, seq_begin, seq_end, rows_end);
    if (rc != 0) {
        return rc;
    }
    *rows_begin = seq_begin < seq_end ? offsets[seq_begin] : 0;
    if ((rc = ck_lstm_recurrence_scratch(hidden, &need)) != 0) {
        return rc;
    }
    if (*rows_end == *rows_begin) {
        return 0;
    }
    if (gates == NULL || w_hh == NULL || b_hh == NULL || h == NULL || scratch == NULL) {
        return CK_E_ARG;
    }
    if (ck_span(*rows_end, 4 * hidden, gates_stride, &g_span) != 0 || g_span > gates_count ||
        ck_span(*rows_end, hidden, h_stride, &h_span) != 0 || h_span > h_count || hidden > SIZE_MAX / 4 / hidden ||
        w_hh_count < 4 * hidden * hidden || b_hh_count < 4 * hidden || scratch_count < need) {
        return CK_E_SIZE;
    }
    size_t fb = sizeof(float);
    size_t hb = h_span * fb, sb = need * fb, wb = 4 * hidden * hidden * fb, bb = 4 * hidden * fb;
    if (ck_overlap(h, hb, gates, g_span * fb) || ck_overlap(h, hb, w_hh, wb) || ck_overlap(h, hb, b_hh, bb) ||
        ck_overlap(h, hb, scratch, sb) || ck_overlap(scratch, sb, gates, g_span * fb) ||
        ck_overlap(scratch, sb, w_hh, wb) || ck_overlap(scratch, sb, b_hh, bb)) {
        return CK_E_ARG;
    }
    if (!ck_all_finite(gates + *rows_begin * gates_stride, *rows_end - *rows_begin, 4 * hidden, gates_stride) ||
        !ck_all_finite(w_hh, 1, 4 * hidden * hidden, 4 * hidden * hidden) ||
        !ck_all_finite(b_hh, 1, 4 * hidden, 4 * hidden)) {
        return CK_E_NONFINITE;
    }
    return 0;
}

int ck_lstm_recurrence_f32(const float *gates, size_t gates_count, size_t gates_stride, const float *w_hh,
                           size_t w_hh_count, const float *b_hh, size_t b_hh_count, float *h, size_t h_count,
                           size_t h_stride, float *scratch, size_t scratch_count, const size_t *offsets,
                           size_t n_seq, size_t seq_begin, size_t seq_end, size_t hidden, int reverse)
{
    size_t rows_begin, rows_end;
    int rc = lstm_check(gates, gates_count, gates_stride, w_hh, w_hh_count, b_hh, b_hh_count, h, h_count, h_stride,
                        scratch, scratch_count, offsets, n_seq, seq_begin, seq_end, hidden, &rows_begin, &rows_end);
    if (rc != 0 || rows_end == rows_begin) {
        return rc;
    }
    /* W_hh^T once per call, amortised over every step of every sequence of the call */
    float *wt = scratch + 6 * hidden;
    for (size_t j = 0; j < 4 * hidden; j++) {
        for (size_t k = 0; k < hidden; k++) {
            wt[k * 4 * hidden + j] = w_hh[j * hidden + k];
        }
    }
    int avx512 = ck_kernels_isa_level() == CK_ISA_AVX512;
    for (size_t s = seq_begin; s < seq_end; s++) {
        lstm_sequence(gates, gates_stride, b_hh, h, h_stride, scratch, offsets[s], offsets[s + 1] - offsets[s], hidden,
                      reverse, avx512);
    }
    return 0;
}
