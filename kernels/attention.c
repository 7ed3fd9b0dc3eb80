/* attention.c - softmax(q k^T * scale) v for one (sequence, head), staged in caller scratch. No allocation, no I/O. */
#include "attention.h"

#include <math.h>
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ck_check.h"
#include "ck_dtype.h"
#include "ck_exp.h"
#include "ck_isa.h"

/* Instruction sets (ck_isa.h): the passes are written once, as CK_ALWAYS_INLINE bodies taking a
 * constant `isa`, and instantiated twice: attend_portable (baseline x86-64) and attend_avx512
 * (CK_TARGET_AVX512: the intrinsic blocks below, and the compiler vectorises the softmax, max and
 * finiteness loops with AVX-512 registers). Both perform the same IEEE operations in the same order,
 * so they give the same bits (tests/kernels/test_attention.c compares them). */

/* Keys per score block, and the padding of the key count: 16 float accumulators stay in registers
 * across the d loop, and a row computes at most 15 scores past its last key (a 64-key padding
 * cost a third more score work on the corpus mix, whose sequences average ~90 tokens). */
#define KEY_BLOCK 16
/* Context columns per p.v block: 64 accumulators, the whole head for D = 64. */
#define VALUE_BLOCK 64

/* Query rows per pass: each key and value row loaded from cache serves ROW_BLOCK queries, which
 * makes the passes compute-bound instead of L2-bound (one row per pass re-read all of K and V). */
#define ROW_BLOCK 4

/* The scratch areas for one call (see ck_attention_scratch). */
typedef struct {
    float *kt;      /* [D, Lp] keys transposed, key columns [L, Lp) zero */
    float *scores;  /* [ROW_BLOCK, Lp] rows of scores, then probabilities */
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
    /* D * Lp + 4 Lp + L * D <= (2D + 4) * Lp, kept below SIZE_MAX bytes so overlap checks cannot wrap. */
    if (head_dim == 0 || head_dim > SIZE_MAX / 4 || seq_len > SIZE_MAX - KEY_BLOCK) {
        return CK_E_SIZE;
    }
    lp = padded_len(seq_len);
    if (lp > SIZE_MAX / sizeof(float) / (2 * head_dim + ROW_BLOCK)) {
        return CK_E_SIZE;
    }
    *elements = head_dim * lp + ROW_BLOCK * lp + seq_len * head_dim;
    return 0;
}

/* kt[c * kt_stride + r] = k[r * stride + c] for r, c < 16: one 16 x 16 block transposed in
 * registers (the usual unpack / 128-bit lane shuffle network). Moves bits only. */
CK_TARGET_AVX512 static void transpose_block16(const float *k, size_t stride, float *kt, size_t kt_stride)
{
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) {
        r[i] = _mm512_loadu_ps(k + (size_t)i * stride);
    }
    for (int i = 0; i < 16; i += 2) { /* per 128-bit lane: rows i, i+1 interleaved */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { /* r[i + c], lane l: rows i..i+3 of column 4l + c */
        __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
        __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int g = 0; g < 16; g += 8) { /* t[g + c]: columns c, c + 8; t[g + 4 + c]: c + 4, c + 12 */
        for (int c = 0; c < 4; c++) {
            t[g + c] = _mm512_shuffle_f32x4(r[g + c], r[g + 4 + c], 0x88);
            t[g + 4 + c] = _mm512_shuffle_f32x4(r[g + c], r[g + 4 + c], 0xdd);
        }
    }
    for (int c = 0; c < 8; c++) {
        _mm512_storeu_ps(kt + (size_t)c * kt_stride, _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88));
        _mm512_storeu_ps(kt + (size_t)(c + 8) * kt_stride, _mm512_shuffle_f32x4(t[c], t[8 + c], 0xdd));
    }
}

/* Pass 1: kt[d, j] = k[j, d] (this head), zero for j in [L, Lp); 16 x 16 register blocks on AVX-512. */
static void transpose_keys(const float *k, size_t stride, size_t seq_len, size_t head_dim, attention_scratch *s,
                           ck_isa isa)
{
    size_t j_first = 0;
    if (isa == CK_ISA_AVX512 && head_dim % 16 == 0) {
        j_first = seq_len / 16 * 16;
        for (size_t j0 = 0; j0 < j_first; j0 += 16) {
            for (size_t d0 = 0; d0 < head_dim; d0 += 16) {
                transpose_block16(k + j0 * stride + d0, stride, s->kt + d0 * s->padded + j0, s->padded);
            }
        }
    }
    for (size_t d = 0; d < head_dim; d++) {
        float *row = s->kt + d * s->padded;
        for (size_t j = j_first; j < seq_len; j++) {
            row[j] = k[j * stride + d];
        }
        for (size_t j = seq_len; j < s->padded; j++) {
            row[j] = 0.0f;
        }
    }
}

/* Pass 2, portable: scores[j] = scale * sum_d q[d] kt[d, j] for one query row, KEY_BLOCK keys at a time. */
CK_ALWAYS_INLINE void score_row(const float *q, size_t head_dim, float scale, const attention_scratch *s,
                                float *scores)
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
            scores[j0 + j] = acc[j] * scale;
        }
    }
}

/* Lanes for the row max: an elementwise max over 16 lanes vectorizes, a scalar max chain does not. */
#define MAX_LANES 16

/* Max of p[0..n) (n >= 1) into *max; CK_E_NONFINITE when any p[j] is NaN or Inf (p - p is then NaN,
 * else 0; summed per lane so the check vectorizes with the max). The max is exact, so it does not
 * depend on the lane count. */
CK_ALWAYS_INLINE int row_max(const float *p, size_t n, float *max)
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

/* Pass 3: p[j] = softmax over j < L of finite scores with row max m. The sum runs in MAX_LANES float
 * lanes (lane l adds j = l, l + 16, ... over whole blocks of 16), then the lanes in order, then the
 * tail j in order: a fixed order, so the bits depend only on the row, and it vectorizes (one serial
 * chain of L adds cost more than the scores themselves). */
CK_ALWAYS_INLINE void softmax_row(float *p, size_t seq_len, float m)
{
    for (size_t j = 0; j < seq_len; j++) {
        float z = p[j] - m;
        p[j] = ck_exp_f32(z < -87.0f ? -87.0f : z);  /* z <= 0 */
    }
    float lane[MAX_LANES] = {0}, sum = 0.0f;
    size_t j = 0;
    for (; j + MAX_LANES <= seq_len; j += MAX_LANES) {
        for (size_t l = 0; l < MAX_LANES; l++) {
            lane[l] += p[j + l];
        }
    }
    for (size_t l = 0; l < MAX_LANES; l++) {
        sum += lane[l];
    }
    for (; j < seq_len; j++) {
        sum += p[j];
    }
    const float inv = 1.0f / sum;
    for (size_t j = 0; j < seq_len; j++) {
        p[j] *= inv;
    }
}

/* Pass 4: out[d] = sum_j p[j] v[j, d], j in order. VALUE_BLOCK columns at a time keep their
 * accumulators in registers; leftover columns (D not a multiple of it) sum the same way, one by one. */
CK_ALWAYS_INLINE void weighted_values(const float *p, const float *v, size_t stride, size_t seq_len,
                                      size_t head_dim, float *out)
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

/* 0 when the [L, cols] view at `stride` fits in count elements of `size` bytes; sets *bytes. */
static int view_bytes(size_t rows, size_t cols, size_t stride, size_t count, size_t size, size_t *bytes)
{
    size_t span;
    if (ck_span(rows, cols, stride, &span) != 0 || span > count || span > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    *bytes = span * size;
    return 0;
}

/* The scratch size function of one kernel (ck_attention_scratch, ck_attention_scratch__amx). */
typedef int (*scratch_fn)(size_t seq_len, size_t head_dim, size_t *elements);

/* q, k and v hold elements of qkv_size bytes (4: f32, 2: bf16), context of ctx_size bytes; scratch
 * is f32. */
static int check_geometry(const void *q, size_t q_count, const void *k, size_t k_count, const void *v,
                          size_t v_count, size_t qkv_stride, size_t qkv_size, const void *context,
                          size_t context_count, size_t context_stride, size_t ctx_size, const float *scratch,
                          size_t scratch_count, size_t seq_len, size_t head, size_t head_dim,
                          scratch_fn scratch_of, attention_geometry *g)
{
    size_t need, b;
    if (seq_len > 0 && (q == NULL || k == NULL || v == NULL || context == NULL || scratch == NULL)) {
        return CK_E_ARG;
    }
    if (scratch_of(seq_len, head_dim, &need) != 0 || head > SIZE_MAX / head_dim - 1 ||
        scratch_count < need) {
        return CK_E_SIZE;
    }
    g->col0 = head * head_dim;
    g->cols = g->col0 + head_dim;
    if (view_bytes(seq_len, g->cols, qkv_stride, q_count, qkv_size, &g->qkv_bytes) != 0 ||
        view_bytes(seq_len, g->cols, qkv_stride, k_count, qkv_size, &b) != 0 ||
        view_bytes(seq_len, g->cols, qkv_stride, v_count, qkv_size, &b) != 0 ||
        view_bytes(seq_len, g->cols, context_stride, context_count, ctx_size, &g->ctx_bytes) != 0) {
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

/* context[i, col0:col0+D] = out[i, :] for i < L: the staged head, written only once it is
 * known to be finite. */
static void copy_context(float *context, size_t context_stride, size_t col0, const float *out, size_t seq_len,
                         size_t head_dim)
{
    for (size_t i = 0; i < seq_len; i++) {
        memcpy(context + i * context_stride + col0, out + i * head_dim, head_dim * sizeof(float));
    }
}

/* Pass 2 for ROW_BLOCK query rows at once, 32 keys per step (the last 16 alone): 8 accumulators, each key vector loaded
 * once for 4 queries. Same FMA chain per (row, key) as score_row (d in order, then * scale), so the
 * bits are identical to the portable path. q[r] for r >= nr repeats a real row; it is not stored. */
CK_TARGET_AVX512 static void score_rows_avx512(const float *const q[ROW_BLOCK], size_t nr, size_t head_dim,
                                               float scale, const attention_scratch *s)
{
    const __m512 vs = _mm512_set1_ps(scale);
    size_t j0 = 0;
    for (; j0 + 32 <= s->padded; j0 += 32) {
        __m512 a[ROW_BLOCK][2];
        for (size_t r = 0; r < ROW_BLOCK; r++) {
            a[r][0] = _mm512_setzero_ps();
            a[r][1] = _mm512_setzero_ps();
        }
        for (size_t d = 0; d < head_dim; d++) {
            const float *kr = s->kt + d * s->padded + j0;
            const __m512 k0 = _mm512_loadu_ps(kr), k1 = _mm512_loadu_ps(kr + 16);
            for (size_t r = 0; r < ROW_BLOCK; r++) {
                const __m512 b = _mm512_set1_ps(q[r][d]);
                a[r][0] = _mm512_fmadd_ps(b, k0, a[r][0]);
                a[r][1] = _mm512_fmadd_ps(b, k1, a[r][1]);
            }
        }
        for (size_t r = 0; r < nr; r++) {
            _mm512_storeu_ps(s->scores + r * s->padded + j0, _mm512_mul_ps(a[r][0], vs));
            _mm512_storeu_ps(s->scores + r * s->padded + j0 + 16, _mm512_mul_ps(a[r][1], vs));
        }
    }
    if (j0 < s->padded) { /* the last 16 keys (padded is a multiple of 16) */
        __m512 a[ROW_BLOCK];
        for (size_t r = 0; r < ROW_BLOCK; r++) {
            a[r] = _mm512_setzero_ps();
        }
        for (size_t d = 0; d < head_dim; d++) {
            const __m512 k0 = _mm512_loadu_ps(s->kt + d * s->padded + j0);
            for (size_t r = 0; r < ROW_BLOCK; r++) {
                a[r] = _mm512_fmadd_ps(_mm512_set1_ps(q[r][d]), k0, a[r]);
            }
        }
        for (size_t r = 0; r < nr; r++) {
            _mm512_storeu_ps(s->scores + r * s->padded + j0, _mm512_mul_ps(a[r], vs));
        }
    }
}

/* Pass 4 for ROW_BLOCK rows and one 64-column block: 16 accumulators, each value row loaded once for
 * 4 queries; j in order with one FMA per (row, column), as weighted_values. */
CK_TARGET_AVX512 static void weighted_values_avx512(const float *const p[ROW_BLOCK], size_t nr, const float *v,
                                                    size_t stride, size_t seq_len, float *const out[ROW_BLOCK])
{
    __m512 a[ROW_BLOCK][4];
    for (size_t r = 0; r < ROW_BLOCK; r++) {
        for (size_t c = 0; c < 4; c++) {
            a[r][c] = _mm512_setzero_ps();
        }
    }
    for (size_t j = 0; j < seq_len; j++) {
        const float *vr = v + j * stride;
        const __m512 v0 = _mm512_loadu_ps(vr), v1 = _mm512_loadu_ps(vr + 16);
        const __m512 v2 = _mm512_loadu_ps(vr + 32), v3 = _mm512_loadu_ps(vr + 48);
        for (size_t r = 0; r < ROW_BLOCK; r++) {
            const __m512 b = _mm512_set1_ps(p[r][j]);
            a[r][0] = _mm512_fmadd_ps(b, v0, a[r][0]);
            a[r][1] = _mm512_fmadd_ps(b, v1, a[r][1]);
            a[r][2] = _mm512_fmadd_ps(b, v2, a[r][2]);
            a[r][3] = _mm512_fmadd_ps(b, v3, a[r][3]);
        }
    }
    for (size_t r = 0; r < nr; r++) {
        for (size_t c = 0; c < 4; c++) {
            _mm512_storeu_ps(out[r] + 16 * c, a[r][c]);
        }
    }
}

/* Passes 2 and 4 for query rows [i, i + nr): the AVX-512 blocks on that level, else one row at a
 * time; both give the same bits. */
CK_ALWAYS_INLINE void score_rows(const float *q, size_t stride, size_t nr, size_t head_dim, float scale,
                                 const attention_scratch *s, ck_isa isa)
{
    if (isa == CK_ISA_AVX512) {
        const float *rows[ROW_BLOCK];
        for (size_t r = 0; r < ROW_BLOCK; r++) {
            rows[r] = q + (r < nr ? r : 0) * stride;
        }
        score_rows_avx512(rows, nr, head_dim, scale, s);
        return;
    }
    for (size_t r = 0; r < nr; r++) {
        score_row(q + r * stride, head_dim, scale, s, s->scores + r * s->padded);
    }
}

CK_ALWAYS_INLINE void weighted_rows(const attention_scratch *s, size_t nr, const float *v, size_t stride,
                                    size_t seq_len, size_t head_dim, float *out, ck_isa isa)
{
    if (isa == CK_ISA_AVX512 && head_dim % VALUE_BLOCK == 0) {
        for (size_t d0 = 0; d0 < head_dim; d0 += VALUE_BLOCK) {
            const float *p[ROW_BLOCK];
            float *o[ROW_BLOCK];
            for (size_t r = 0; r < ROW_BLOCK; r++) {
                p[r] = s->scores + (r < nr ? r : 0) * s->padded;
                o[r] = out + (r < nr ? r : 0) * head_dim + d0;
            }
            weighted_values_avx512(p, nr, v + d0, stride, seq_len, o);
        }
        return;
    }
    for (size_t r = 0; r < nr; r++) {
        weighted_values(s->scores + r * s->padded, v, stride, seq_len, head_dim, out + r * head_dim);
    }
}

/* Passes 2-4 for every query row into s->out; CK_E_NONFINITE if a score or the result is not finite. */
CK_ALWAYS_INLINE int attend(const float *q, const float *v, size_t stride, size_t seq_len, size_t head_dim,
                            float scale, attention_scratch *s, ck_isa isa)
{
    for (size_t i = 0; i < seq_len; i += ROW_BLOCK) {
        size_t nr = seq_len - i < ROW_BLOCK ? seq_len - i : ROW_BLOCK;
        score_rows(q + i * stride, stride, nr, head_dim, scale, s, isa);
        for (size_t r = 0; r < nr; r++) {
            float m, *p = s->scores + r * s->padded;
            if (row_max(p, seq_len, &m) != 0) {
                return CK_E_NONFINITE;
            }
            softmax_row(p, seq_len, m);
        }
        weighted_rows(s, nr, v, stride, seq_len, head_dim, s->out + i * head_dim, isa);
    }
    return ck_all_finite(s->out, seq_len, head_dim, head_dim) ? 0 : CK_E_NONFINITE;
}

static int attend_portable(const float *q, const float *v, size_t stride, size_t seq_len, size_t head_dim,
                           float scale, attention_scratch *s)
{
    return attend(q, v, stride, seq_len, head_dim, scale, s, CK_ISA_PORTABLE);
}

CK_TARGET_AVX512 static int attend_avx512(const float *q, const float *v, size_t stride, size_t seq_len,
                                          size_t head_dim, float scale, attention_scratch *s)
{
    return attend(q, v, stride, seq_len, head_dim, scale, s, CK_ISA_AVX512);
}

int ck_attention_head_f32_isa(ck_isa isa, const float *q, size_t q_count, const float *k, size_t k_count,
                              const float *v, size_t v_count, size_t qkv_stride, float *context,
                              size_t context_count, size_t context_stride, float *scratch, size_t scratch_count,
                              size_t seq_len, size_t head, size_t head_dim, float scale)
{
    attention_geometry g;
    int rc = check_geometry(q, q_count, k, k_count, v, v_count, qkv_stride, sizeof *q, context, context_count,
                            context_stride, sizeof *context, scratch, scratch_count, seq_len, head, head_dim,
                            ck_attention_scratch, &g);
    if (rc != 0) {
        return rc;
    }
    if (!(scale > 0.0f) || !isfinite(scale)) {
        return CK_E_ARG;
    }
    if (seq_len == 0) {
        return 0;
    }
    /* No separate pass checks q, k and v: a NaN or Inf there reaches a checked value. A non-finite
     * q[i, d] or k[j, d] makes score (i, j) NaN or +-Inf for every key j or query i (x * Inf is Inf
     * or, for x = 0, NaN; sums keep it), caught by row_max; a non-finite v[j, d] makes every
     * out[i, d] non-finite (p[i, j] >= 0 times it), caught by the check of s.out. Both are in
     * scratch, before context is written. */
    const float *qh = q + g.col0, *kh = k + g.col0, *vh = v + g.col0;
    attention_scratch s;
    s.padded = padded_len(seq_len);
    s.kt = scratch;
    s.scores = s.kt + head_dim * s.padded;
    s.out = s.scores + ROW_BLOCK * s.padded;
    isa = ck_isa_clamp(isa);
    transpose_keys(kh, qkv_stride, seq_len, head_dim, &s, isa);
    rc = isa == CK_ISA_AVX512 ? attend_avx512(qh, vh, qkv_stride, seq_len, head_dim, scale, &s)
                              : attend_portable(qh, vh, qkv_stride, seq_len, head_dim, scale, &s);
    if (rc != 0) {
        return rc;
    }
    copy_context(context, context_stride, g.col0, s.out, seq_len, head_dim);
    return 0;
}

int ck_attention_head_f32(const float *q, size_t q_count, const float *k, size_t k_count, const float *v,
                          size_t v_count, size_t qkv_stride, float *context, size_t context_count,
                          size_t context_stride, float *scratch, size_t scratch_count, size_t seq_len,
                          size_t head, size_t head_dim, float scale)
{
    return ck_attention_head_f32_isa(ck_kernels_isa_level(), q, q_count, k, k_count, v, v_count, qkv_stride,
                                     context, context_count, context_stride, scratch, scratch_count, seq_len,
                                     head, head_dim, scale);
}

/* ---- bf16 on AMX (ck_attention_head_f32__amx) ----
 *
 * q, k and v are rounded to bf16 once per call; q k^T and p v run as AMX tile products (TDPBF16PS:
 * bf16 pairs, f32 accumulation); the scale, the row max, the softmax and the context stay f32, as
 * in the f32 kernel (the same row_max and softmax_row). The probabilities are rounded to bf16
 * before p v. Every tile operation runs in the same order for a given (L, D), so a head's bits
 * depend on its q, k and v only. */

/* Rows of every tile, and the bf16 elements of one tile row (64 bytes) along the reduction. */
#define AMX_ROWS 16
#define AMX_K 32
#define AMX_TILE_WORDS (AMX_ROWS * AMX_K / 2) /* uint32 pairs in one 16 x 64-byte tile */

/* n rounded up to a multiple of m (callers keep n far below SIZE_MAX). */
static size_t round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

int ck_attention_scratch__amx(size_t seq_len, size_t head_dim, size_t *elements)
{
    if (elements == NULL) {
        return CK_E_ARG;
    }
    if (head_dim == 0 || head_dim % AMX_K != 0 || seq_len > SIZE_MAX / 4) {
        return CK_E_SIZE;
    }
    size_t lq = round_up(seq_len, AMX_ROWS), lk = round_up(seq_len, AMX_K);
    /* (lq + lq + lk) D / 2 + 16 lk + 8 lk + lq D <= lk (3 D + 24), kept below SIZE_MAX bytes */
    if (lk > SIZE_MAX / sizeof(float) / (3 * head_dim + 24)) {
        return CK_E_SIZE;
    }
    *elements = (2 * lq + lk) * head_dim / 2 + 24 * lk + lq * head_dim;
    return 0;
}

/* The scratch of one bf16 call, in this order (each part a multiple of 64 bytes). */
typedef struct {
    uint16_t *q;      /* [lq, D] query rows in bf16 (f32 input; bf16 input: only the last block,
                         whole blocks are read in place); rows [L, lq) zero */
    uint32_t *kt;     /* key tiles [lq / 16][D / 32]: tile (n, s) row r, column j holds the bf16 pair
                         (k[16n + j, 32s + 2r], k[16n + j, 32s + 2r + 1]); keys [L, lq) zero */
    uint32_t *vt;     /* value tiles [lk / 32][D / 16]: tile (t, c) row r, column j holds the pair
                         (v[32t + 2r, 16c + j], v[32t + 2r + 1, 16c + j]); keys [L, lk) zero */
    float *scores;    /* [16, lk] one block of query rows: scores, then probabilities */
    uint16_t *p;      /* [16, lk] the probabilities in bf16; keys [L, lk) and rows past L zero */
    float *out;       /* [lq, D] the staged context (first used to stage k and v in bf16) */
    size_t lq, lk;
} amx_scratch;

/* AMX tile configuration (Intel SDM vol. 1, 3.2 "TILECFG"): palette 1, every tile used here is
 * 16 rows of 64 bytes. */
typedef struct {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_config;

/* GCC's tile intrinsics are asm statements that do not tell the compiler which memory they read or
 * write: a compiler barrier orders them against the plain loads and stores around them. */
#define AMX_BARRIER() __asm__ __volatile__("" ::: "memory")

#define CK_TARGET_AMX __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16")))

/* Rows of the head's q, k or v columns: f32 (f != NULL) or already bf16 (h), row stride `stride`. */
typedef struct {
    const float *f;
    const uint16_t *h;
} amx_rows;

/* count rows from row `first` of src into dst (dense, head_dim bf16 each): rounded, or copied. */
CK_TARGET_AMX static void amx_rows_bf16(amx_rows src, size_t first, size_t stride, size_t count, size_t head_dim,
                                        uint16_t *dst)
{
    if (src.f != NULL) {
        ck_bf16_from_f32_rows(src.f + first * stride, stride, dst, head_dim, count, head_dim);
        return;
    }
    for (size_t r = 0; r < count; r++) { /* 64-byte moves inline: a call per 128-byte row cost more */
        const uint16_t *from = src.h + (first + r) * stride;
        for (size_t d = 0; d < head_dim; d += AMX_K) {
            _mm512_storeu_si512((void *)(dst + r * head_dim + d), _mm512_loadu_si512((const void *)(from + d)));
        }
    }
}

/* tile row = the bf16 pairs (even[j], odd[j]) for j < 16, even in the low half: two key rows
 * interleaved word by word (a permutation; moves bits only). */
CK_TARGET_AMX static inline void amx_interleave_rows(const uint16_t *even, const uint16_t *odd, uint32_t *tile_row)
{
    static const uint16_t order[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                       8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i idx = _mm512_loadu_si512((const void *)order);
    const __m512i e = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)even));
    const __m512i o = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)odd));
    _mm512_storeu_si512((void *)tile_row, _mm512_permutex2var_epi16(e, idx, o));
}

/* kt and vt from the head's k and v columns. Whole blocks of bf16 rows (16 keys for kt, 32 for
 * vt) are read in place; f32 rows and the last, partial block are first staged as dense bf16 rows
 * in s->out, zero past L. Either way each tile holds the same bits. */
CK_TARGET_AMX static void amx_pack_keys_values(amx_rows k, amx_rows v, size_t stride, size_t seq_len,
                                               size_t head_dim, const amx_scratch *s)
{
    uint16_t *rows = (uint16_t *)(void *)s->out; /* [32, D] bf16: 64 D bytes, within out's 64 D lq */
    const size_t steps = head_dim / AMX_K, col_blocks = head_dim / 16;
    for (size_t n = 0; n < s->lq / AMX_ROWS; n++) {
        size_t first = n * AMX_ROWS, count = seq_len - first < AMX_ROWS ? seq_len - first : AMX_ROWS;
        const uint16_t *src = rows;
        size_t src_stride = head_dim;
        if (k.h != NULL && count == AMX_ROWS && stride % 2 == 0) {
            src = k.h + first * stride;
            src_stride = stride;
        } else {
            amx_rows_bf16(k, first, stride, count, head_dim, rows);
            memset(rows + count * head_dim, 0, (AMX_ROWS - count) * head_dim * sizeof *rows);
        }
        for (size_t st = 0; st < steps; st++) { /* a 16 x 16 block of pairs, transposed */
            transpose_block16((const float *)(const void *)(src + st * AMX_K), src_stride / 2,
                              (float *)(void *)(s->kt + (n * steps + st) * AMX_TILE_WORDS), AMX_ROWS);
        }
    }
    for (size_t t = 0; t < s->lk / AMX_K; t++) {
        size_t first = t * AMX_K, count = seq_len - first < AMX_K ? seq_len - first : AMX_K;
        const uint16_t *src = rows;
        size_t src_stride = head_dim;
        if (v.h != NULL && count == AMX_K) {
            src = v.h + first * stride;
            src_stride = stride;
        } else {
            amx_rows_bf16(v, first, stride, count, head_dim, rows);
            memset(rows + count * head_dim, 0, (AMX_K - count) * head_dim * sizeof *rows);
        }
        for (size_t c = 0; c < col_blocks; c++) {
            uint32_t *tile = s->vt + (t * col_blocks + c) * AMX_TILE_WORDS;
            for (size_t r = 0; r < AMX_ROWS; r++) {
                const uint16_t *even = src + 2 * r * src_stride + 16 * c;
                amx_interleave_rows(even, even + src_stride, tile + r * 16);
            }
        }
    }
}

/* Scores of the 16 query rows at q (bf16, q_stride bytes apart) against every key block:
 * s->scores[r, j] = q_r . k_j. */
CK_TARGET_AMX static void amx_scores(const amx_scratch *s, const uint16_t *q, long q_stride, size_t head_dim)
{
    const size_t steps = head_dim / AMX_K, blocks = s->lq / AMX_ROWS;
    const long sc_stride = (long)(s->lk * sizeof *s->scores);
    size_t n = 0;
    if (steps == 2) { /* D = 64: both query tiles stay loaded, two key blocks in flight */
        _tile_loadd(1, q, q_stride);
        _tile_loadd(2, q + AMX_K, q_stride);
        for (; n + 2 <= blocks; n += 2) {
            const uint32_t *kt = s->kt + n * 2 * AMX_TILE_WORDS;
            _tile_zero(0);
            _tile_zero(5);
            _tile_loadd(3, kt, 64);
            _tile_loadd(6, kt + 2 * AMX_TILE_WORDS, 64);
            _tile_dpbf16ps(0, 1, 3);
            _tile_dpbf16ps(5, 1, 6);
            _tile_loadd(4, kt + AMX_TILE_WORDS, 64);
            _tile_loadd(7, kt + 3 * AMX_TILE_WORDS, 64);
            _tile_dpbf16ps(0, 2, 4);
            _tile_dpbf16ps(5, 2, 7);
            _tile_stored(0, s->scores + n * AMX_ROWS, sc_stride);
            _tile_stored(5, s->scores + (n + 1) * AMX_ROWS, sc_stride);
        }
    }
    for (; n < blocks; n++) { /* the same sums, one key block at a time */
        _tile_zero(0);
        for (size_t st = 0; st < steps; st++) {
            _tile_loadd(1, q + st * AMX_K, q_stride);
            _tile_loadd(2, s->kt + (n * steps + st) * AMX_TILE_WORDS, 64);
            _tile_dpbf16ps(0, 1, 2);
        }
        _tile_stored(0, s->scores + n * AMX_ROWS, sc_stride);
    }
}

/* s->out rows [i0, i0 + 16) = s->p v, four 16-column blocks per pass over the keys. */
CK_TARGET_AMX static void amx_context(const amx_scratch *s, size_t i0, size_t head_dim)
{
    const size_t col_blocks = head_dim / 16, p_stride = s->lk * sizeof *s->p;
    const long out_stride = (long)(head_dim * sizeof(float));
    for (size_t c0 = 0; c0 < col_blocks; c0 += 4) {
        const size_t nc = col_blocks - c0 < 4 ? col_blocks - c0 : 4; /* 2 or 4: D is a multiple of 32 */
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (size_t t = 0; t < s->lk / AMX_K; t++) {
            const uint32_t *vt = s->vt + (t * col_blocks + c0) * AMX_TILE_WORDS;
            _tile_loadd(4, s->p + t * AMX_K, (long)p_stride);
            _tile_loadd(5, vt, 64);
            _tile_dpbf16ps(0, 4, 5);
            _tile_loadd(6, vt + AMX_TILE_WORDS, 64);
            _tile_dpbf16ps(1, 4, 6);
            if (nc == 4) {
                _tile_loadd(7, vt + 2 * AMX_TILE_WORDS, 64);
                _tile_dpbf16ps(2, 4, 7);
                _tile_loadd(5, vt + 3 * AMX_TILE_WORDS, 64);
                _tile_dpbf16ps(3, 4, 5);
            }
        }
        float *out = s->out + i0 * head_dim + c0 * 16;
        _tile_stored(0, out, out_stride);
        _tile_stored(1, out + 16, out_stride);
        if (nc == 4) {
            _tile_stored(2, out + 32, out_stride);
            _tile_stored(3, out + 48, out_stride);
        }
    }
}

/* 2^f for f in [-0.5, 0.5] times 2^n: Taylor series of e^(f ln 2) to degree 5 (relative error
 * <= 0.347^6 / 720 = 2.4e-6, far below bf16's 2^-9 rounding), in FMA steps. */
CK_TARGET_AMX static inline __m512 amx_exp2(__m512 x)
{
    const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(x, n);
    __m512 p = _mm512_set1_ps(1.3333558146e-3f);                    /* ln2^5 / 120 */
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291076e-3f));    /* ln2^4 / 24 */
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504108665e-2f));    /* ln2^3 / 6 */
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022650696e-1f));    /* ln2^2 / 2 */
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718056e-1f));    /* ln2 */
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* One row of raw scores s[0..L): its max m (CK_E_NONFINITE when a score is NaN or Inf), then
 * p[j] = bf16(e^(scale (s[j] - m))) and *sum = the sum of those e in f32 (16 lanes, then
 * _mm512_reduce_add_ps's fixed tree). The probabilities are left unnormalised: the context row
 * is divided by the sum after p v (L D multiplies fewer; the largest p is exactly 1). */
CK_TARGET_AMX static int amx_softmax_row(const float *s, size_t seq_len, float scale, uint16_t *p, float *sum)
{
    __m512 vmax = _mm512_set1_ps(s[0]), bad = _mm512_setzero_ps();
    size_t j = 0;
    for (; j + 16 <= seq_len; j += 16) {
        __m512 x = _mm512_loadu_ps(s + j);
        vmax = _mm512_max_ps(vmax, x);
        bad = _mm512_add_ps(bad, _mm512_sub_ps(x, x));
    }
    __mmask16 tail = (__mmask16)((1u << (seq_len - j)) - 1u);
    if (tail != 0) {
        __m512 x = _mm512_mask_loadu_ps(_mm512_set1_ps(s[0]), tail, s + j);
        vmax = _mm512_max_ps(vmax, x);
        bad = _mm512_add_ps(bad, _mm512_sub_ps(x, x));
    }
    if (_mm512_reduce_add_ps(bad) != 0.0f) { /* NaN for a NaN or an infinite score */
        return CK_E_NONFINITE;
    }
    const float m = _mm512_reduce_max_ps(vmax);
    const __m512 vm = _mm512_set1_ps(m), k = _mm512_set1_ps(scale * 1.44269504088896341f);
    __m512 acc = _mm512_setzero_ps();
    for (j = 0; j + 16 <= seq_len; j += 16) {
        __m512 e = amx_exp2(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(s + j), vm), k));
        acc = _mm512_add_ps(acc, e);
        _mm256_storeu_si256((__m256i *)(void *)(p + j), (__m256i)_mm512_cvtneps_pbh(e));
    }
    if (tail != 0) {
        __m512 e = amx_exp2(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, s + j), vm), k));
        e = _mm512_maskz_mov_ps(tail, e);
        acc = _mm512_add_ps(acc, e);
        _mm256_mask_storeu_epi16(p + j, tail, (__m256i)_mm512_cvtneps_pbh(e));
    }
    *sum = _mm512_reduce_add_ps(acc);
    return 0;
}

/* Every query block: scores on AMX, the softmax per row, p v on AMX, each context row divided by
 * its sum. */
CK_TARGET_AMX static int amx_attend(amx_rows q, amx_rows k, amx_rows v, size_t stride, size_t seq_len,
                                    size_t head_dim, float scale, const amx_scratch *s)
{
    amx_config saved, cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = AMX_ROWS;
    }
    /* Whole 16-row blocks of bf16 queries are tile-loaded in place; f32 queries and the last,
     * partial block are staged in s->q (zero past L). */
    const size_t q_first = q.h != NULL ? seq_len / AMX_ROWS * AMX_ROWS : 0;
    amx_rows_bf16(q, q_first, stride, seq_len - q_first, head_dim, s->q + q_first * head_dim);
    memset(s->q + seq_len * head_dim, 0, (s->lq - seq_len) * head_dim * sizeof *s->q);
    amx_pack_keys_values(k, v, stride, seq_len, head_dim, s);
    memset(s->p, 0, AMX_ROWS * s->lk * sizeof *s->p);
    AMX_BARRIER();
    _tile_storeconfig(&saved); /* oneDNN's kernels configure tiles too: give them back theirs */
    _tile_loadconfig(&cfg);
    int rc = 0;
    float sums[AMX_ROWS];
    __m512 bad = _mm512_setzero_ps();
    for (size_t i0 = 0; rc == 0 && i0 < seq_len; i0 += AMX_ROWS) {
        size_t nr = seq_len - i0 < AMX_ROWS ? seq_len - i0 : AMX_ROWS;
        if (i0 < q_first) {
            amx_scores(s, q.h + i0 * stride, (long)(stride * sizeof *q.h), head_dim);
        } else {
            amx_scores(s, s->q + i0 * head_dim, (long)(head_dim * sizeof *s->q), head_dim);
        }
        AMX_BARRIER();
        for (size_t r = 0; rc == 0 && r < nr; r++) {
            rc = amx_softmax_row(s->scores + r * s->lk, seq_len, scale, s->p + r * s->lk, &sums[r]);
        }
        AMX_BARRIER();
        if (rc == 0) {
            amx_context(s, i0, head_dim);
        }
        AMX_BARRIER();
        for (size_t r = 0; rc == 0 && r < nr; r++) {
            const __m512 inv = _mm512_set1_ps(1.0f / sums[r]);
            float *row = s->out + (i0 + r) * head_dim;
            for (size_t d = 0; d < head_dim; d += 16) {
                __m512 x = _mm512_mul_ps(_mm512_loadu_ps(row + d), inv);
                bad = _mm512_add_ps(bad, _mm512_sub_ps(x, x)); /* NaN once any x is NaN or Inf */
                _mm512_storeu_ps(row + d, x);
            }
        }
    }
    if (saved.palette != 0) {
        _tile_loadconfig(&saved);
    } else {
        _tile_release();
    }
    if (rc != 0 || _mm512_reduce_add_ps(bad) != 0.0f) {
        return CK_E_NONFINITE;
    }
    return 0;
}

/* context[i, col0:col0+D] = out[i, :] for i < L (D a multiple of 32), as copy_context with the
 * 64-byte moves inline: a call per 256-byte row cost more than the row. */
CK_TARGET_AMX static void amx_copy_context(float *context, size_t context_stride, size_t col0, const float *out,
                                           size_t seq_len, size_t head_dim)
{
    for (size_t i = 0; i < seq_len; i++) {
        float *to = context + i * context_stride + col0;
        for (size_t d = 0; d < head_dim; d += 16) {
            _mm512_storeu_ps(to + d, _mm512_loadu_ps(out + i * head_dim + d));
        }
    }
}

/* ck_attention_head_f32__amx, _bf16_in and _bf16_io: q, k, v as f32 (q16 NULL) or bf16 rows; the
 * context as f32 (context16 NULL) or bf16. */
static int head_bf16(const float *q, const uint16_t *q16, size_t q_count, const void *k, size_t k_count,
                     const void *v, size_t v_count, size_t qkv_stride, float *context, uint16_t *context16,
                     size_t context_count, size_t context_stride, float *scratch, size_t scratch_count,
                     size_t seq_len, size_t head, size_t head_dim, float scale)
{
    attention_geometry g;
    if (!ck_kernels_amx_bf16()) {
        return CK_E_ARG;
    }
    const void *qv = q16 != NULL ? (const void *)q16 : (const void *)q;
    const void *cv = context16 != NULL ? (const void *)context16 : (const void *)context;
    int rc = check_geometry(qv, q_count, k, k_count, v, v_count, qkv_stride, q16 != NULL ? 2 : 4, cv,
                            context_count, context_stride, context16 != NULL ? 2 : 4, scratch, scratch_count,
                            seq_len, head, head_dim, ck_attention_scratch__amx, &g);
    if (rc != 0) {
        return rc;
    }
    if (!(scale > 0.0f) || !isfinite(scale)) {
        return CK_E_ARG;
    }
    if (seq_len == 0) {
        return 0;
    }
    amx_scratch s;
    s.lq = round_up(seq_len, AMX_ROWS);
    s.lk = round_up(seq_len, AMX_K);
    s.q = (uint16_t *)(void *)scratch;
    s.kt = (uint32_t *)(void *)(s.q + s.lq * head_dim);
    s.vt = s.kt + s.lq * head_dim / 2;
    s.scores = (float *)(void *)(s.vt + s.lk * head_dim / 2);
    s.p = (uint16_t *)(void *)(s.scores + AMX_ROWS * s.lk);
    s.out = (float *)(void *)(s.p + AMX_ROWS * s.lk);
    amx_rows qr = {NULL, NULL}, kr = {NULL, NULL}, vr = {NULL, NULL};
    if (q16 != NULL) {
        qr.h = q16 + g.col0;
        kr.h = (const uint16_t *)k + g.col0;
        vr.h = (const uint16_t *)v + g.col0;
    } else {
        qr.f = q + g.col0;
        kr.f = (const float *)k + g.col0;
        vr.f = (const float *)v + g.col0;
    }
    rc = amx_attend(qr, kr, vr, qkv_stride, seq_len, head_dim, scale, &s);
    if (rc != 0) {
        return rc;
    }
    if (context16 != NULL) { /* rounded as a bf16 linear's own staging of the f32 rows would */
        ck_bf16_from_f32_rows(s.out, head_dim, context16 + g.col0, context_stride, seq_len, head_dim);
    } else {
        amx_copy_context(context, context_stride, g.col0, s.out, seq_len, head_dim);
    }
    return 0;
}

int ck_attention_head_f32__amx(const float *q, size_t q_count, const float *k, size_t k_count, const float *v,
                               size_t v_count, size_t qkv_stride, float *context, size_t context_count,
                               size_t context_stride, float *scratch, size_t scratch_count, size_t seq_len,
                               size_t head, size_t head_dim, float scale)
{
    return head_bf16(q, NULL, q_count, k, k_count, v, v_count, qkv_stride, context, NULL, context_count,
                     context_stride, scratch, scratch_count, seq_len, head, head_dim, scale);
}

int ck_attention_head_bf16_f32__amx(const uint16_t *q, size_t q_count, const uint16_t *k, size_t k_count,
                                    const uint16_t *v, size_t v_count, size_t qkv_stride, float *context,
                                    size_t context_count, size_t context_stride, float *scratch, size_t scratch_count,
                                    size_t seq_len, size_t head, size_t head_dim, float scale)
{
    if (seq_len > 0 && q == NULL) {
        return CK_E_ARG;
    }
    return head_bf16(NULL, q, q_count, k, k_count, v, v_count, qkv_stride, context, NULL, context_count,
                     context_stride, scratch, scratch_count, seq_len, head, head_dim, scale);
}

int ck_attention_head_bf16__amx(const uint16_t *q, size_t q_count, const uint16_t *k, size_t k_count,
                                const uint16_t *v, size_t v_count, size_t qkv_stride, uint16_t *context,
                                size_t context_count, size_t context_stride, float *scratch, size_t scratch_count,
                                size_t seq_len, size_t head, size_t head_dim, float scale)
{
    if (seq_len > 0 && (q == NULL || context == NULL)) {
        return CK_E_ARG;
    }
    return head_bf16(NULL, q, q_count, k, k_count, v, v_count, qkv_stride, NULL, context, context_count,
                     context_stride, scratch, scratch_count, seq_len, head, head_dim, scale);
}
