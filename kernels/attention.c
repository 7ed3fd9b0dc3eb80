/* attention.c - softmax(q k^T * scale) v for one (sequence, head), staged in caller scratch. No allocation, no I/O. */
#include "attention.h"

#include <math.h>
#include <string.h>

#include "ck_check.h"
#include "ck_exp.h"

/* Keys per score block: 64 float accumulators stay in registers across the d loop. */
#define KEY_BLOCK 64
/* Context columns per p.v block: 64 accumulators, the whole head for D = 64. */
#define VALUE_BLOCK 64

/* The scratch areas for one call (see ck_attention_scratch). */
typedef struct {
    float *kt;      /* [D, Lp] keys transposed, key columns [L, Lp) zero */
    float *scores;  /* [Lp] one row of scores, then probabilities */
    float *out;     /* [L, D] the staged context */
    size_t padded;  /* Lp */
} attention_scratch;

/* L rounded up to KEY_BLOCK (callers have checked L <= SIZE_MAX - KEY_BLOCK). */
static size_t padded_len(size_t seq_len)
{
    return (seq_len + KEY_BLOCK - 1) / KEY_BLOCK * KEY_BLOCK;
}

int ck_attention_scratch(size_t seq_len, size_t head_dim, size_t *elements)
{
    size_t lp;
    if (elements == NULL) {
        return CK_E_ARG;
    }
    /* D * Lp + Lp + L * D <= (2D + 1) * Lp, kept below SIZE_MAX bytes so overlap checks cannot wrap. */
    if (head_dim == 0 || head_dim > SIZE_MAX / 4 || seq_len > SIZE_MAX - KEY_BLOCK) {
        return CK_E_SIZE;
    }
    lp = padded_len(seq_len);
    if (lp > SIZE_MAX / sizeof(float) / (2 * head_dim + 1)) {
        return CK_E_SIZE;
    }
    *elements = head_dim * lp + lp + seq_len * head_dim;
    return 0;
}

/* Pass 1: kt[d, j] = k[j, d] (this head), zero for j in [L, Lp). */
static void transpose_keys(const float *k, size_t stride, size_t seq_len, size_t head_dim, attention_scratch *s)
{
    for (size_t d = 0; d < head_dim; d++) {
        float *row = s->kt + d * s->padded;
        for (size_t j = 0; j < seq_len; j++) {
            row[j] = k[j * stride + d];
        }
        for (size_t j = seq_len; j < s->padded; j++) {
            row[j] = 0.0f;
        }
    }
}

/* Pass 2: scores[j] = scale * sum_d q[d] kt[d, j] for one query row, KEY_BLOCK keys at a time. */
static void score_row(const float *q, size_t head_dim, float scale, attention_scratch *s)
{
    for (size_t j0 = 0; j0 < s->padded; j0 += KEY_BLOCK) {
        float acc[KEY_BLOCK] = {0};
        for (size_t d = 0; d < head_dim; d++) {
            const float qd = q[d], *kr = s->kt + d * s->padded + j0;
            for (size_t j = 0; j < KEY_BLOCK; j++) {
                acc[j] = fmaf(qd, kr[j], acc[j]);
            }
        }
        for (size_t j = 0; j < KEY_BLOCK; j++) {
            s->scores[j0 + j] = acc[j] * scale;
        }
    }
}

/* Lanes for the row max: an elementwise max over 16 lanes vectorizes, a scalar max chain does not. */
#define MAX_LANES 16

/* Max of p[0..n) (n >= 1) into *max; CK_E_NONFINITE when any p[j] is NaN or Inf (p - p is then NaN,
 * else 0; summed per lane so the check vectorizes with the max). The max is exact, so it does not
 * depend on the lane count. */
static int row_max(const float *p, size_t n, float *max)
{
    float lane[MAX_LANES], bad[MAX_LANES] = {0};
    size_t j = 0;
    for (size_t l = 0; l < MAX_LANES; l++) {
        lane[l] = p[0];
    }
    for (; j + MAX_LANES <= n; j += MAX_LANES) {
        for (size_t l = 0; l < MAX_LANES; l++) {
            lane[l] = p[j + l] > lane[l] ? p[j + l] : lane[l];
            bad[l] += p[j + l] - p[j + l];
        }
    }
    float m = p[0], b = 0.0f;
    for (size_t l = 0; l < MAX_LANES; l++) {
        m = lane[l] > m ? lane[l] : m;
        b += bad[l];
    }
    for (; j < n; j++) {
        m = p[j] > m ? p[j] : m;
        b += p[j] - p[j];
    }
    *max = m;
    return b == 0.0f ? 0 : CK_E_NONFINITE;
}

/* Pass 3: p[j] = softmax over j < L of finite scores with row max m, sum in float j in order. */
static void softmax_row(float *p, size_t seq_len, float m)
{
    for (size_t j = 0; j < seq_len; j++) {
        float z = p[j] - m;
        p[j] = ck_exp_f32(z < -87.0f ? -87.0f : z);  /* z <= 0 */
    }
    float sum = 0.0f;
    for (size_t j = 0; j < seq_len; j++) {
        sum += p[j];
    }
    const float inv = 1.0f / sum;
    for (size_t j = 0; j < seq_len; j++) {
        p[j] *= inv;
    }
}

/* Pass 4: out[d] = sum_j p[j] v[j, d], j in order. VALUE_BLOCK columns at a time keep their
 * accumulators in registers; leftover columns (D not a multiple of it) sum the same way, one by one. */
static void weighted_values(const float *p, const float *v, size_t stride, size_t seq_len, size_t head_dim,
                            float *out)
{
    size_t d0 = 0;
    for (; d0 + VALUE_BLOCK <= head_dim; d0 += VALUE_BLOCK) {
        float acc[VALUE_BLOCK] = {0};
        for (size_t j = 0; j < seq_len; j++) {
            const float pj = p[j], *vr = v + j * stride + d0;
            for (size_t d = 0; d < VALUE_BLOCK; d++) {
                acc[d] = fmaf(pj, vr[d], acc[d]);
            }
        }
        memcpy(out + d0, acc, sizeof acc);
    }
    for (size_t d = d0; d < head_dim; d++) {
        float acc = 0.0f;
        for (size_t j = 0; j < seq_len; j++) {
            acc = fmaf(p[j], v[j * stride + d], acc);
        }
        out[d] = acc;
    }
}

/* The geometry of one call, derived once by check_geometry. */
typedef struct {
    size_t col0, cols;            /* first column of the head, (h+1)*D columns spanned */
    size_t qkv_bytes, ctx_bytes;  /* bytes each strided view spans */
} attention_geometry;

/* 0 when the [L, cols] view at `stride` fits in count floats; sets *bytes. */
static int view_bytes(size_t rows, size_t cols, size_t stride, size_t count, size_t *bytes)
{
    size_t span;
    if (ck_span(rows, cols, stride, &span) != 0 || span > count) {
        return CK_E_SIZE;
    }
    *bytes = span * sizeof(float);
    return 0;
}

static int check_geometry(const float *q, size_t q_count, const float *k, size_t k_count, const float *v,
                          size_t v_count, size_t qkv_stride, const float *context, size_t context_count,
                          size_t context_stride, const float *scratch, size_t scratch_count, size_t seq_len,
                          size_t head, size_t head_dim, attention_geometry *g)
{
    size_t need, b;
    if (seq_len > 0 && (q == NULL || k == NULL || v == NULL || context == NULL || scratch == NULL)) {
        return CK_E_ARG;
    }
    if (ck_attention_scratch(seq_len, head_dim, &need) != 0 || head > SIZE_MAX / head_dim - 1 ||
        scratch_count < need) {
        return CK_E_SIZE;
    }
    g->col0 = head * head_dim;
    g->cols = g->col0 + head_dim;
    if (view_bytes(seq_len, g->cols, qkv_stride, q_count, &g->qkv_bytes) != 0 ||
        view_bytes(seq_len, g->cols, qkv_stride, k_count, &b) != 0 ||
        view_bytes(seq_len, g->cols, qkv_stride, v_count, &b) != 0 ||
        view_bytes(seq_len, g->cols, context_stride, context_count, &g->ctx_bytes) != 0) {
        return CK_E_SIZE;
    }
    size_t qb = g->qkv_bytes, cb = g->ctx_bytes, sb = need * sizeof(float);
    if (ck_overlap(context, cb, q, qb) || ck_overlap(context, cb, k, qb) || ck_overlap(context, cb, v, qb) ||
        ck_overlap(scratch, sb, q, qb) || ck_overlap(scratch, sb, k, qb) || ck_overlap(scratch, sb, v, qb) ||
        ck_overlap(scratch, sb, context, cb)) {
        return CK_E_ARG;
    }
    return 0;
}

/* Passes 2-4 for every query row into s->out; CK_E_NONFINITE if a score or the result is not finite. */
static int attend(const float *q, const float *v, size_t stride, size_t seq_len, size_t head_dim, float scale,
                  attention_scratch *s)
{
    for (size_t i = 0; i < seq_len; i++) {
        float m;
        score_row(q + i * stride, head_dim, scale, s);
        if (row_max(s->scores, seq_len, &m) != 0) {
            return CK_E_NONFINITE;
        }
        softmax_row(s->scores, seq_len, m);
        weighted_values(s->scores, v, stride, seq_len, head_dim, s->out + i * head_dim);
    }
    return ck_all_finite(s->out, seq_len, head_dim, head_dim) ? 0 : CK_E_NONFINITE;
}

int ck_attention_head_f32(const float *q, size_t q_count, const float *k, size_t k_count, const float *v,
                          size_t v_count, size_t qkv_stride, float *context, size_t context_count,
                          size_t context_stride, float *scratch, size_t scratch_count, size_t seq_len,
                          size_t head, size_t head_dim, float scale)
{
    attention_geometry g;
    int rc = check_geometry(q, q_count, k, k_count, v, v_count, qkv_stride, context, context_count,
                            context_stride, scratch, scratch_count, seq_len, head, head_dim, &g);
    if (rc != 0) {
        return rc;
    }
    if (!(scale > 0.0f) || !isfinite(scale)) {
        return CK_E_ARG;
    }
    if (seq_len == 0) {
        return 0;
    }
    const float *qh = q + g.col0, *kh = k + g.col0, *vh = v + g.col0;
    if (!ck_all_finite(qh, seq_len, head_dim, qkv_stride) || !ck_all_finite(kh, seq_len, head_dim, qkv_stride) ||
        !ck_all_finite(vh, seq_len, head_dim, qkv_stride)) {
        return CK_E_NONFINITE;
    }
    attention_scratch s;
    s.padded = padded_len(seq_len);
    s.kt = scratch;
    s.scores = s.kt + head_dim * s.padded;
    s.out = s.scores + s.padded;
    transpose_keys(kh, qkv_stride, seq_len, head_dim, &s);
    rc = attend(qh, vh, qkv_stride, seq_len, head_dim, scale, &s);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < seq_len; i++) {
        memcpy(context + i * context_stride + g.col0, s.out + i * head_dim, head_dim * sizeof(float));
    }
    return 0;
}
