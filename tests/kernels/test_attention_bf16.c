/* test_attention_bf16.c - the AMX bf16 attention head: against a double emulation of its rounding
 * (tight) and against exact attention (the bf16 error), one key copies bf16(v) exactly, its bits do
 * not depend on the other heads or on a oneDNN bf16 matmul run before it, oneDNN's tiles survive
 * it, and its rejections leave the context untouched. Without AMX (CK_MAX_CPU_ISA=portable in the
 * kernels_portable run) every call is CK_E_ARG. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "ck_dtype.h"
#include "ck_status.h"
#include "ck_test.h"
#include "linear.h"

/* L tokens, H heads, D head dim, C = H * D; q, k, v are column windows of one [L, 3C] buffer. */
enum { H = 12, D = 64, C = H * D, QKV = 3 * C, CS = C + 8, LMAX = 130 };
#define SCALE 0.125f

static float qkv[LMAX * QKV], context[LMAX * CS], *scratch;
static size_t scratch_count;

/* Deterministic values in [-scale, scale) from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *v, size_t n, uint64_t seed, double scale)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)(scale * (2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0));
    }
}

static int run(size_t seq_len, size_t head)
{
    return ck_attention_head_f32__amx(qkv, seq_len * QKV, qkv + C, seq_len * QKV - C, qkv + 2 * C,
                                      seq_len * QKV - 2 * C, QKV, context, seq_len * CS, CS, scratch,
                                      scratch_count, seq_len, head, D, SCALE);
}

static int setup(void)
{
    if (ck_attention_scratch__amx(LMAX, D, &scratch_count) != CK_OK) {
        return 1;
    }
    scratch = malloc(scratch_count * sizeof(float));
    return scratch == NULL;
}

static float bf16(float x)
{
    return ck_bf16_to_f32(ck_bf16_from_f32(x));
}

/* want[i, d] for one head in double: exact (rounded = 0), or from bf16 q, k, v and bf16
 * unnormalised probabilities e_j (rounded = 1; the context is then divided by the sum of the e_j):
 * the kernel's roundings without its f32 sums and its exp's 2.4e-6. */
static void reference(size_t n, size_t head, int rounded, double *want)
{
    const float *q = qkv + head * D, *k = q + C, *v = q + 2 * C;
    double *s = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double m = -INFINITY, sum = 0.0;
        for (size_t j = 0; j < n; j++) {
            s[j] = 0.0;
            for (size_t d = 0; d < D; d++) {
                float a = q[i * QKV + d], b = k[j * QKV + d];
                s[j] += rounded ? (double)bf16(a) * bf16(b) : (double)a * b;
            }
            s[j] *= SCALE;
            m = fmax(m, s[j]);
        }
        for (size_t j = 0; j < n; j++) {
            s[j] = exp(s[j] - m);
            sum += s[j];
        }
        for (size_t j = 0; j < n; j++) { /* the kernel rounds e_j, then divides p v by the sum */
            s[j] = rounded ? bf16((float)s[j]) / sum : s[j] / sum;
        }
        for (size_t d = 0; d < D; d++) {
            double acc = 0.0;
            for (size_t j = 0; j < n; j++) {
                acc += s[j] * (rounded ? bf16(v[j * QKV + d]) : v[j * QKV + d]);
            }
            want[i * D + d] = acc;
        }
    }
    free(s);
}

/* Every length around the 16-row, 16-key and 32-key tiles, three heads: the largest difference from
 * the emulation (the kernel's f32 sums, and an e_j that its exp's 2.4e-6 rounds to the other bf16
 * neighbour, which moves a term by 2^-8 e_j |v_j| / sum: measured 4.2e-4, held to 1e-3 for
 * |v| <= 2) and from exact attention (the bf16 error: measured 9.3e-3 and 0.33% relative RMSE,
 * held to 1.5e-2 and 0.6%), other columns untouched. A tile laid out wrong misses by O(1). */
static void test_matches_reference(void)
{
    static const size_t lens[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 37, 48, 64, 100, 130};
    double *emulated = malloc(LMAX * D * sizeof(double)), *exact = malloc(LMAX * D * sizeof(double));
    double worst_emulated = 0.0, worst_exact = 0.0, worst_rel = 0.0;
    if (!ck_kernels_amx_bf16()) {
        fill(qkv, LMAX * QKV, 7, 2.0);
        CU_ASSERT_EQUAL(run(17, 0), CK_E_ARG);
        fprintf(stderr, "    no AMX-BF16 here (or CK_MAX_CPU_ISA): the kernel refuses, as it must\n");
        free(emulated);
        free(exact);
        return;
    }
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (size_t head = 0; head < H; head += 5) {
            size_t n = lens[i];
            fill(qkv, LMAX * QKV, n * 31 + head, 2.0);
            ck_test_fill_canary(context, LMAX * CS);
            CU_ASSERT_EQUAL_FATAL(run(n, head), CK_OK);
            reference(n, head, 1, emulated);
            reference(n, head, 0, exact);
            double err2 = 0.0, ref2 = 0.0;
            for (size_t t = 0; t < n; t++) {
                const float *row = context + t * CS;
                for (size_t d = 0; d < D; d++) {
                    double got = row[head * D + d];
                    worst_emulated = fmax(worst_emulated, fabs(got - emulated[t * D + d]));
                    worst_exact = fmax(worst_exact, fabs(got - exact[t * D + d]));
                    err2 += (got - exact[t * D + d]) * (got - exact[t * D + d]);
                    ref2 += exact[t * D + d] * exact[t * D + d];
                }
                CU_ASSERT_TRUE(ck_test_canary_intact(row, head * D));
                CU_ASSERT_TRUE(ck_test_canary_intact(row + (head + 1) * D, CS - (head + 1) * D));
            }
            worst_rel = fmax(worst_rel, sqrt(err2 / ref2));
            CU_ASSERT_TRUE(ck_test_canary_intact(context + n * CS, (LMAX - n) * CS));
        }
    }
    fprintf(stderr, "    max |bf16 - emulation| %.2e, max |bf16 - exact| %.2e, worst relative RMSE %.3f%%\n",
            worst_emulated, worst_exact, 100.0 * worst_rel);
    CU_ASSERT(worst_emulated <= 1e-3);
    CU_ASSERT(worst_exact <= 1.5e-2);
    CU_ASSERT(worst_rel <= 0.006);
    free(emulated);
    free(exact);
}

/* One key: the softmax is exactly 1.0 (C12), so the context is bf16(v) bit for bit. */
static void test_one_key_copies_bf16_v(void)
{
    if (!ck_kernels_amx_bf16()) {
        return; /* test_matches_reference checks the refusal */
    }
    fill(qkv, LMAX * QKV, 99, 2.0);
    CU_ASSERT_EQUAL_FATAL(run(1, 5), CK_OK);
    size_t bad = 0;
    for (size_t d = 0; d < D; d++) {
        float want = bf16(qkv[2 * C + 5 * D + d]);
        bad += memcmp(&context[5 * D + d], &want, sizeof want) != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* A head's bits: the same whatever the other heads hold, and the same after a oneDNN bf16 matmul
 * (its AMX kernels load their own tile configuration); that matmul gives the same bits before and
 * after an attention call (ours is restored). */
static void test_bits_independent_of_neighbours_and_onednn(void)
{
    enum { L = 77, M = 128, K = 768, N = 768 };
    static float first[L * D], again[L * D];
    if (!ck_kernels_amx_bf16()) {
        return;
    }
    fill(qkv, LMAX * QKV, 1234, 2.0);
    CU_ASSERT_EQUAL_FATAL(run(L, 3), CK_OK);
    for (size_t t = 0; t < L; t++) {
        memcpy(first + t * D, context + t * CS + 3 * D, D * sizeof(float));
    }
    ck_onednn *ctx = NULL;
    ck_linear *lin = NULL;
    float *x = malloc(sizeof(float) * (M * K + K * N + 2 * M * N)), *w = x + M * K;
    float *y0 = w + K * N, *y1 = y0 + M * N;
    fill(x, M * K + K * N, 5, 1.0);
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 1), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin, ctx, &(ck_linear_desc){
            .weight = w, .weight_count = (size_t)K * N, .bias = NULL, .bias_count = 0,
            .in_features = K, .out_features = N, .compute = CK_DTYPE_BF16}), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, x, M * K, K, y0, M * N, N, M), CK_OK);
    for (size_t i = 0; i < LMAX * QKV; i++) { /* every other head's columns change */
        if ((i % QKV) % C / D != 3) {
            qkv[i] = -qkv[i] * 0.5f;
        }
    }
    CU_ASSERT_EQUAL(run(L, 3), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, x, M * K, K, y1, M * N, N, M), CK_OK);
    for (size_t t = 0; t < L; t++) {
        memcpy(again + t * D, context + t * CS + 3 * D, D * sizeof(float));
    }
    CU_ASSERT_EQUAL(memcmp(first, again, sizeof first), 0);
    CU_ASSERT_EQUAL(memcmp(y0, y1, M * N * sizeof(float)), 0);
    ck_linear_free(lin);
    ck_onednn_free(ctx);
    free(x);
}

/* q, k and v handed over in bf16 (as bf16-writing linears hold them) give the bits of the f32 entry
 * on the rows they round from; a count one short is refused. */
static void test_bf16_input_same_bits(void)
{
    static uint16_t qkv16[LMAX * QKV];
    static float want[LMAX * CS];
    if (!ck_kernels_amx_bf16()) {
        CU_ASSERT_EQUAL(ck_attention_head_bf16_f32__amx(qkv16, 3 * QKV, qkv16 + C, 3 * QKV - C, qkv16 + 2 * C,
                                                        3 * QKV - 2 * C, QKV, context, 3 * CS, CS, scratch,
                                                        scratch_count, 3, 0, D, SCALE), CK_E_ARG);
        return;
    }
    static const size_t lens[] = {1, 15, 16, 17, 33, 100, 130};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = lens[i], head = (i * 5) % H;
        fill(qkv, LMAX * QKV, 4000 + n, 2.0);
        ck_bf16_from_f32_rows(qkv, QKV, qkv16, QKV, LMAX, QKV);
        ck_test_fill_canary(context, LMAX * CS);
        CU_ASSERT_EQUAL_FATAL(run(n, head), CK_OK);
        memcpy(want, context, sizeof want);
        ck_test_fill_canary(context, LMAX * CS);
        CU_ASSERT_EQUAL_FATAL(ck_attention_head_bf16_f32__amx(qkv16, n * QKV, qkv16 + C, n * QKV - C, qkv16 + 2 * C,
                                                              n * QKV - 2 * C, QKV, context, n * CS, CS, scratch,
                                                              scratch_count, n, head, D, SCALE), CK_OK);
        CU_ASSERT_EQUAL(memcmp(want, context, sizeof want), 0);
    }
    ck_test_fill_canary(context, LMAX * CS);
    CU_ASSERT_EQUAL(ck_attention_head_bf16_f32__amx(qkv16, 130 * QKV, qkv16 + C, 130 * QKV - C, qkv16 + 2 * C,
                                                    129 * QKV + 2 * C + 3 * D - 1 - 2 * C, QKV, context, 130 * CS, CS,
                                                    scratch, scratch_count, 130, 2, D, SCALE), CK_E_SIZE);
    CU_ASSERT_TRUE(ck_test_canary_intact(context, LMAX * CS));
}

static void test_scratch_sizes(void)
{
    size_t n = 0;
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(512, 64, &n), CK_OK);
    CU_ASSERT_EQUAL(n, (2 * 512 + 512) * 64 / 2 + 24 * 512 + 512 * 64); /* 94208: 368 KiB */
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(17, 64, &n), CK_OK);      /* Lq 32, Lk 32 */
    CU_ASSERT_EQUAL(n, (2 * 32 + 32) * 64 / 2 + 24 * 32 + 32 * 64);
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(33, 64, &n), CK_OK);      /* Lq 48, Lk 64 */
    CU_ASSERT_EQUAL(n, (2 * 48 + 64) * 64 / 2 + 24 * 64 + 48 * 64);
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(0, 64, &n), CK_OK);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(3, 48, &n), CK_E_SIZE);   /* not a multiple of 32 */
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(3, 0, &n), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(SIZE_MAX, 64, &n), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(SIZE_MAX / 256, 64, &n), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(3, 64, NULL), CK_E_ARG);
}

/* NaN or Inf in the head's q, k or v, overflowing scores, a short scratch: an error code and the
 * context untouched. */
static void test_rejections_leave_context(void)
{
    struct {
        size_t at;
        float value;
        int code;
    } cases[] = {
        {40 * QKV + 2 * D + 7, NAN, CK_E_NONFINITE},               /* q, query 40 */
        {120 * QKV + C + 2 * D + 63, INFINITY, CK_E_NONFINITE},    /* k, the last key block */
        {3 * QKV + 2 * C + 2 * D, -INFINITY, CK_E_NONFINITE},      /* v */
        {5 * QKV + 2 * D, 3e38f, CK_E_NONFINITE},                  /* q so large a score overflows */
    };
    if (!ck_kernels_amx_bf16()) {
        return;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fill(qkv, LMAX * QKV, 77, 2.0);
        if (i == 3) {
            qkv[5 * QKV + 2 * D + 1] = 3e38f;
            for (size_t t = 0; t < 130; t++) {
                qkv[t * QKV + C + 2 * D] = 3e38f;  /* every key's dims 0 and 1 huge */
                qkv[t * QKV + C + 2 * D + 1] = 3e38f;
            }
        }
        qkv[cases[i].at] = cases[i].value;
        ck_test_fill_canary(context, LMAX * CS);
        CU_ASSERT_EQUAL(run(130, 2), cases[i].code);
        CU_ASSERT_TRUE(ck_test_canary_intact(context, LMAX * CS));
    }
    fill(qkv, LMAX * QKV, 77, 2.0);
    ck_test_fill_canary(context, LMAX * CS);
    size_t need = 0;
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(130, D, &need), CK_OK);
    CU_ASSERT_EQUAL(ck_attention_head_f32__amx(qkv, 130 * QKV, qkv + C, 130 * QKV - C, qkv + 2 * C, 130 * QKV - 2 * C,
                                               QKV, context, 130 * CS, CS, scratch, need - 1, 130, 2, D, SCALE),
                    CK_E_SIZE);
    CU_ASSERT_TRUE(ck_test_canary_intact(context, LMAX * CS));
}

/* The bf16 context (ck_attention_head_bf16__amx) is ck_bf16_from_f32 of the f32 context, element
 * for element, in the head's columns only (the rest keep their fill); a short context count, or
 * a NaN in v, is refused with the context untouched. */
static void test_bf16_context_is_rounded_f32_context(void)
{
    static uint16_t qkv16[LMAX * QKV], ctx16[LMAX * CS];
    if (!ck_kernels_amx_bf16()) {
        CU_ASSERT_EQUAL(ck_attention_head_bf16__amx(qkv16, 3 * QKV, qkv16 + C, 3 * QKV - C, qkv16 + 2 * C,
                                                    3 * QKV - 2 * C, QKV, ctx16, 3 * CS, CS, scratch, scratch_count,
                                                    3, 0, D, SCALE), CK_E_ARG);
        return;
    }
    static const size_t lens[] = {1, 16, 17, 100, 130};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = lens[i], head = (i * 7) % H, bad = 0;
        fill(qkv, LMAX * QKV, 5000 + n, 2.0);
        ck_bf16_from_f32_rows(qkv, QKV, qkv16, QKV, LMAX, QKV);
        ck_test_fill_canary(context, LMAX * CS);
        CU_ASSERT_EQUAL_FATAL(ck_attention_head_bf16_f32__amx(qkv16, n * QKV, qkv16 + C, n * QKV - C, qkv16 + 2 * C,
                                                              n * QKV - 2 * C, QKV, context, n * CS, CS, scratch,
                                                              scratch_count, n, head, D, SCALE), CK_OK);
        memset(ctx16, 0xAB, sizeof ctx16);
        CU_ASSERT_EQUAL_FATAL(ck_attention_head_bf16__amx(qkv16, n * QKV, qkv16 + C, n * QKV - C, qkv16 + 2 * C,
                                                          n * QKV - 2 * C, QKV, ctx16, n * CS, CS, scratch,
                                                          scratch_count, n, head, D, SCALE), CK_OK);
        for (size_t r = 0; r < LMAX; r++) {
            for (size_t c = 0; c < CS; c++) {
                int mine = r < n && c >= head * D && c < (head + 1) * D;
                bad += ctx16[r * CS + c] != (mine ? ck_bf16_from_f32(context[r * CS + c]) : 0xABAB);
            }
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
    memset(ctx16, 0xAB, sizeof ctx16);
    CU_ASSERT_EQUAL(ck_attention_head_bf16__amx(qkv16, 130 * QKV, qkv16 + C, 130 * QKV - C, qkv16 + 2 * C,
                                                130 * QKV - 2 * C, QKV, ctx16, 129 * CS + 3 * D - 1, CS, scratch,
                                                scratch_count, 130, 2, D, SCALE), CK_E_SIZE);
    qkv16[5 * QKV + 2 * C + 3 * D + 1] = 0x7fc0; /* a NaN in head 3's v */
    CU_ASSERT_EQUAL(ck_attention_head_bf16__amx(qkv16, 130 * QKV, qkv16 + C, 130 * QKV - C, qkv16 + 2 * C,
                                                130 * QKV - 2 * C, QKV, ctx16, 130 * CS, CS, scratch, scratch_count,
                                                130, 3, D, SCALE), CK_E_NONFINITE);
    size_t touched = 0;
    for (size_t e = 0; e < LMAX * CS; e++) {
        touched += ctx16[e] != 0xABAB;
    }
    CU_ASSERT_EQUAL(touched, 0);
}

int main(void)
{
    if (setup() != 0) {
        return 1;
    }
    static const ck_test_case cases[] = {
        {"matches the bf16 emulation and exact attention", test_matches_reference},
        {"one key copies bf16(v)", test_one_key_copies_bf16_v},
        {"bits independent of other heads and of oneDNN", test_bits_independent_of_neighbours_and_onednn},
        {"bf16 input gives the same bits", test_bf16_input_same_bits},
        {"bf16 context is the rounded f32 context", test_bf16_context_is_rounded_f32_context},
        {"scratch sizes", test_scratch_sizes},
        {"rejections leave the context untouched", test_rejections_leave_context},
    };
    int rc = ck_test_run("attention_bf16", cases, sizeof cases / sizeof cases[0]);
    free(scratch);
    return rc;
}
