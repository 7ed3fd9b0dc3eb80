/* test_attention.c - one (sequence, head) of attention against a double reference, other heads' columns untouched, rejections. */
#include <stdint.h>
#include <string.h>

#include "attention.h"
#include "ck_status.h"
#include "ck_test.h"

/* Legend: L tokens, H heads, D head dim, C = H * D. q, k, v are column windows of one fused [L, 3C]
 * buffer (stride QKV); context has a stride wider than C so pad columns are checked too. */
enum { H = 12, D = 64, C = H * D, QKV = 3 * C, CS = C + 8, LMAX = 130 };
#define SCALE 0.125f

typedef struct {
    float qkv[LMAX * QKV], context[LMAX * CS], *scratch;
    size_t seq_len, head, scratch_count, context_count, context_stride, q_count;
    float scale;
} fixture;

/* Deterministic values in [-scale, scale) from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *v, size_t n, uint64_t seed, double scale)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)(scale * (2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0));
    }
}

static fixture *fixture_new(size_t seq_len, size_t head)
{
    fixture *f = calloc(1, sizeof *f);
    fill(f->qkv, LMAX * QKV, seq_len * 31 + head, 2.0); /* scores of std ~1.2: a peaked softmax */
    ck_test_fill_canary(f->context, LMAX * CS);
    CU_ASSERT_EQUAL(ck_attention_scratch(seq_len, D, &f->scratch_count), CK_OK);
    f->scratch = malloc((f->scratch_count + 1) * sizeof(float));
    f->seq_len = seq_len;
    f->head = head;
    f->context_count = seq_len * CS;
    f->context_stride = CS;
    f->q_count = seq_len * QKV;
    f->scale = SCALE;
    return f;
}

static void fixture_free(fixture *f)
{
    free(f->scratch);
    free(f);
}

static int run(fixture *f)
{
    return ck_attention_head_f32(f->qkv, f->q_count, f->qkv + C, f->seq_len * QKV - C, f->qkv + 2 * C,
                                 f->seq_len * QKV - 2 * C, QKV, f->context, f->context_count,
                                 f->context_stride, f->scratch, f->scratch_count, f->seq_len, f->head, D,
                                 f->scale);
}

/* ref_attention: softmax(scale q k^T) v for one head, in double, from the formula. want is [L, D]. */
static void ref_attention(const fixture *f, double *want)
{
    const float *q = f->qkv + f->head * D, *k = q + C, *v = q + 2 * C;
    size_t n = f->seq_len;
    double *s = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double m = -INFINITY, sum = 0.0;
        for (size_t j = 0; j < n; j++) {
            s[j] = 0.0;
            for (size_t d = 0; d < D; d++) {
                s[j] += (double)q[i * QKV + d] * k[j * QKV + d];
            }
            s[j] *= SCALE;
            m = fmax(m, s[j]);
        }
        for (size_t j = 0; j < n; j++) {
            s[j] = exp(s[j] - m);
            sum += s[j];
        }
        for (size_t d = 0; d < D; d++) {
            want[i * D + d] = 0.0;
            for (size_t j = 0; j < n; j++) {
                want[i * D + d] += s[j] / sum * v[j * QKV + d];
            }
        }
    }
    free(s);
}

/* Tolerance 4e-6: a score's float dot product errs by <= D * 2^-24 * sum|q k| * scale ~ 64 * 6e-8 * 4 *
 * 0.125 ~ 2e-6 (worst case, typical 10x less), which moves p relatively by as much; the output is a
 * convex combination of |v| <= 2, and exp, 1/sum and the p.v sums add ~1e-7 each. */
static void expect_head_matches(size_t seq_len, size_t head)
{
    fixture *f = fixture_new(seq_len, head);
    double *want = malloc(seq_len * D * sizeof(double));
    CU_ASSERT_EQUAL(run(f), CK_OK);
    ref_attention(f, want);
    size_t bad = 0;
    for (size_t i = 0; i < seq_len; i++) {
        const float *row = f->context + i * CS;
        for (size_t d = 0; d < D; d++) {
            bad += !(fabs((double)row[head * D + d] - want[i * D + d]) <= 4e-6);
        }
        CU_ASSERT_TRUE(ck_test_canary_intact(row, head * D));
        CU_ASSERT_TRUE(ck_test_canary_intact(row + (head + 1) * D, CS - (head + 1) * D));
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->context + seq_len * CS, (LMAX - seq_len) * CS));
    free(want);
    fixture_free(f);
}

static void test_len_1_head_0(void) { expect_head_matches(1, 0); }
static void test_len_3_head_11(void) { expect_head_matches(3, 11); }
static void test_len_37_head_0(void) { expect_head_matches(37, 0); }
static void test_len_37_head_11(void) { expect_head_matches(37, 11); }
static void test_len_130_head_0(void) { expect_head_matches(130, 0); }
static void test_len_130_head_11(void) { expect_head_matches(130, 11); }
static void test_len_16_and_48_head_2(void) /* whole 16-key blocks only: 16 alone, 32 + 16 */
{
    expect_head_matches(16, 2);
    expect_head_matches(48, 2);
}

static void test_len_1_copies_v(void)
{
    /* One key: softmax is exactly 1 (e^0 / e^0), so context = v bit for bit. */
    fixture *f = fixture_new(1, 5);
    CU_ASSERT_EQUAL(run(f), CK_OK);
    CU_ASSERT_EQUAL(memcmp(f->context + 5 * D, f->qkv + 2 * C + 5 * D, D * sizeof(float)), 0);
    fixture_free(f);
}

/* ck_attention_head_f32_isa on `isa` into a copy of f's context. */
static int run_on(fixture *f, ck_isa isa, float *context)
{
    memcpy(context, f->context, sizeof f->context);
    return ck_attention_head_f32_isa(isa, f->qkv, f->q_count, f->qkv + C, f->seq_len * QKV - C, f->qkv + 2 * C,
                                     f->seq_len * QKV - 2 * C, QKV, context, f->context_count, f->context_stride,
                                     f->scratch, f->scratch_count, f->seq_len, f->head, D, f->scale);
}

/* The AVX-512 and the portable loops give the same bits (same FMA chains, same softmax order),
 * called directly whatever CK_MAX_CPU_ISA says: lengths around the 4-row, 16-key and 32-key blocks,
 * and the public entry matches whichever path ck_kernels_isa() names. */
static void test_avx512_and_portable_paths_identical(void)
{
    static const size_t lens[] = {1, 2, 3, 4, 5, 15, 16, 17, 31, 32, 33, 37, 48, 64, 100, 130};
    static float fast[LMAX * CS], portable[LMAX * CS];
    size_t mismatches = 0;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (size_t head = 0; head < H; head += 5) {
            fixture *f = fixture_new(lens[i], head);
            CU_ASSERT_EQUAL(run_on(f, CK_ISA_AVX512, fast), CK_OK);
            CU_ASSERT_EQUAL(run_on(f, CK_ISA_PORTABLE, portable), CK_OK);
            CU_ASSERT_EQUAL(run(f), CK_OK);
            mismatches += memcmp(fast, portable, sizeof fast) != 0;
            mismatches += memcmp(f->context, fast, sizeof fast) != 0;
            fixture_free(f);
        }
    }
    fprintf(stderr, "    CPU %s, kernels run %s\n", ck_cpu_isa() == CK_ISA_AVX512 ? "has AVX-512" : "has no AVX-512",
            ck_kernels_isa());
    CU_ASSERT_EQUAL(mismatches, 0);
}

static void test_scratch_sizes(void)
{
    size_t n = 0;
    CU_ASSERT_EQUAL(ck_attention_scratch(512, 64, &n), CK_OK);
    CU_ASSERT_EQUAL(n, 64 * 512 + 4 * 512 + 512 * 64);
    CU_ASSERT_EQUAL(ck_attention_scratch(3, 64, &n), CK_OK); /* keys padded to 16 */
    CU_ASSERT_EQUAL(n, 64 * 16 + 4 * 16 + 3 * 64);
    CU_ASSERT_EQUAL(ck_attention_scratch(17, 64, &n), CK_OK);
    CU_ASSERT_EQUAL(n, 64 * 32 + 4 * 32 + 17 * 64);
    CU_ASSERT_EQUAL(ck_attention_scratch(0, 64, &n), CK_OK);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(ck_attention_scratch(3, 0, &n), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_attention_scratch(SIZE_MAX, 64, &n), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_attention_scratch(SIZE_MAX / 256, 64, &n), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_attention_scratch(3, 64, NULL), CK_E_ARG);
}

static void test_zero_len_is_a_no_op(void)
{
    fixture *f = fixture_new(0, 0);
    CU_ASSERT_EQUAL(run(f), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->context, LMAX * CS));
    fixture_free(f);
}

/* Runs after one bad change; asserts the exact code and that all of context is untouched. */
static void expect_rejected(fixture *f, int code)
{
    CU_ASSERT_EQUAL(run(f), code);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->context, LMAX * CS));
    fixture_free(f);
}

static void test_scratch_one_short(void)
{
    fixture *f = fixture_new(37, 3);
    f->scratch_count--;
    expect_rejected(f, CK_E_SIZE);
}

static void test_context_stride_below_columns(void)
{
    fixture *f = fixture_new(37, 11);
    f->context_stride = 11 * D + D - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_head_past_context_width(void)
{
    fixture *f = fixture_new(37, 12);
    f->context_stride = C;
    expect_rejected(f, CK_E_SIZE);
}

static void test_context_count_one_short(void)
{
    fixture *f = fixture_new(37, 11);
    f->context_count = 36 * CS + C - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_q_count_one_short(void)
{
    fixture *f = fixture_new(37, 11);
    f->q_count = 36 * QKV + C - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_head_size_max(void)
{
    fixture *f = fixture_new(37, SIZE_MAX);
    expect_rejected(f, CK_E_SIZE);
}

static void test_scale_zero(void)
{
    fixture *f = fixture_new(37, 0);
    f->scale = 0.0f;
    expect_rejected(f, CK_E_ARG);
}

static void test_scale_nan(void)
{
    fixture *f = fixture_new(37, 0);
    f->scale = NAN;
    expect_rejected(f, CK_E_ARG);
}

static void test_nan_in_head_key(void)
{
    fixture *f = fixture_new(37, 4);
    f->qkv[20 * QKV + C + 4 * D + 63] = NAN;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_inf_in_head_value(void)
{
    fixture *f = fixture_new(37, 4);
    f->qkv[36 * QKV + 2 * C + 4 * D] = INFINITY;
    expect_rejected(f, CK_E_NONFINITE);
}

/* q and k are not scanned in a pass of their own: a bad query reaches its score row, a bad key in
 * the rows past the last whole 16-key block reaches its score column (row_max catches both). */
static void test_nan_in_head_query(void)
{
    fixture *f = fixture_new(37, 4);
    f->qkv[7 * QKV + 4 * D + 1] = NAN;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_inf_in_head_query_and_tail_key(void)
{
    fixture *f = fixture_new(37, 4);
    f->qkv[36 * QKV + 4 * D + 5] = -INFINITY;
    expect_rejected(f, CK_E_NONFINITE);
    f = fixture_new(37, 4);
    f->qkv[35 * QKV + C + 4 * D + 9] = INFINITY;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_nan_in_other_head_is_not_read(void)
{
    fixture *f = fixture_new(37, 4);
    f->qkv[20 * QKV + C + 5 * D] = NAN; /* head 5's first key column */
    CU_ASSERT_EQUAL(run(f), CK_OK);
    fixture_free(f);
}

static void test_overflowing_scores(void)
{
    fixture *f = fixture_new(3, 0);
    for (size_t d = 0; d < D; d++) {
        f->qkv[d] = 1e19f;        /* q row 0 */
        f->qkv[C + d] = 1e19f;    /* k row 0: q.k = 6.4e39 overflows float */
    }
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_null_scratch(void)
{
    fixture *f = fixture_new(37, 0);
    free(f->scratch);
    f->scratch = NULL;
    expect_rejected(f, CK_E_ARG);
}

static void test_context_overlaps_qkv(void)
{
    fixture *f = fixture_new(3, 0);
    ck_test_fill_canary(f->qkv, 3 * QKV);
    CU_ASSERT_EQUAL(ck_attention_head_f32(f->qkv, 3 * QKV, f->qkv + C, 3 * QKV - C, f->qkv + 2 * C,
                                          3 * QKV - 2 * C, QKV, f->qkv + 2 * C, 3 * QKV - 2 * C, QKV,
                                          f->scratch, f->scratch_count, 3, 0, D, SCALE), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->qkv, 3 * QKV));
    fixture_free(f);
}

static void test_scratch_overlaps_context(void)
{
    fixture *f = fixture_new(3, 0);
    CU_ASSERT_EQUAL(ck_attention_head_f32(f->qkv, 3 * QKV, f->qkv + C, 3 * QKV - C, f->qkv + 2 * C,
                                          3 * QKV - 2 * C, QKV, f->context, 3 * CS, CS, f->context + CS,
                                          f->scratch_count, 3, 0, D, SCALE), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->context, LMAX * CS));
    fixture_free(f);
}

CK_TEST_MAIN("attention", {"L 1 head 0", test_len_1_head_0}, {"L 3 head 11", test_len_3_head_11},
             {"L 37 head 0", test_len_37_head_0}, {"L 37 head 11", test_len_37_head_11},
             {"L 130 head 0", test_len_130_head_0}, {"L 130 head 11", test_len_130_head_11},
             {"L 1 copies v exactly", test_len_1_copies_v}, {"scratch sizes", test_scratch_sizes},
             {"L 0 is a no-op", test_zero_len_is_a_no_op}, {"scratch one short", test_scratch_one_short},
             {"context stride < columns", test_context_stride_below_columns},
             {"head past context width", test_head_past_context_width},
             {"context_count one short", test_context_count_one_short},
             {"q_count one short", test_q_count_one_short}, {"head SIZE_MAX", test_head_size_max},
             {"scale 0", test_scale_zero}, {"scale NaN", test_scale_nan},
             {"NaN in the head's keys", test_nan_in_head_key}, {"Inf in the head's values", test_inf_in_head_value},
             {"L 16 and 48, head 2", test_len_16_and_48_head_2},
             {"NaN in the head's query", test_nan_in_head_query},
             {"Inf in the head's query and in a tail key", test_inf_in_head_query_and_tail_key},
             {"NaN in another head is not read", test_nan_in_other_head_is_not_read},
             {"overflowing scores", test_overflowing_scores}, {"null scratch", test_null_scratch},
             {"context overlaps qkv", test_context_overlaps_qkv},
             {"scratch overlaps context", test_scratch_overlaps_context},
             {"AVX-512 and portable paths identical", test_avx512_and_portable_paths_identical})
