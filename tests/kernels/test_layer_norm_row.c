/* test_layer_norm_row.c - the shared LayerNorm row against a long-double reference (within one float ulp,
 * large means included), its AVX-512 and portable paths bit for bit, and position independence. */
#include <float.h>
#include <stdint.h>

#include "ck_status.h"
#include "ck_test.h"
#include "layer_norm_row.h"
#include "residual_layer_norm.h"

/* Legend: N the longest row tested; rows are [n] with n <= N. */
enum { N = 1040 };

/* Values in [-scale, scale) + offset from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *v, size_t n, uint64_t seed, double scale, double offset)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)(scale * (2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0) + offset);
    }
}

/* ref_layer_norm_row: the formula in long double (x87 extended, 64-bit mantissa), two passes, from the
 * float sum s = (a + b) [+ c] the kernel is specified to normalise. */
static void ref_layer_norm_row(const float *a, const float *b, const float *c, const float *gamma,
                               const float *beta, size_t n, float eps, float *want)
{
    static long double s[N];
    long double mean = 0.0L, var = 0.0L;
    for (size_t i = 0; i < n; i++) {
        s[i] = c != NULL ? (a[i] + b[i]) + c[i] : a[i] + b[i];
        mean += s[i];
    }
    mean /= (long double)n;
    for (size_t i = 0; i < n; i++) {
        var += (s[i] - mean) * (s[i] - mean);
    }
    long double rstd = 1.0L / sqrtl(var / (long double)n + (long double)eps);
    for (size_t i = 0; i < n; i++) {
        want[i] = (float)((s[i] - mean) * rstd * gamma[i] + beta[i]);
    }
}

/* 1 when every |got - want| <= one float ulp of want plus 1e-12 (for outputs where t * gamma and beta
 * cancel to near 0, the double path's ~1e-16 relative error is measured against |beta|, not |y|).
 * Why one ulp: the kernel's statistics are good to ~1e-13 relative, so its double result lies within
 * that of the exact one and rounds to the same float or a neighbour. Prints the worst case. */
static int within_one_ulp(const char *what, const float *got, const float *want, size_t n)
{
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double ulp = (double)nextafterf(fabsf(want[i]), INFINITY) - fabs((double)want[i]);
        double excess = fabs((double)got[i] - (double)want[i]) / (ulp + 1e-12);
        if (!(excess <= worst)) {
            worst = isnan(excess) ? INFINITY : excess;
            at = i;
        }
    }
    if (!(worst <= 1.0)) {
        fprintf(stderr, "    %s: %.3g ulps at %zu (got %.9g, want %.9g)\n", what, worst, at, (double)got[at],
                (double)want[at]);
        return 0;
    }
    return 1;
}

/* Values U(-1, 1) * 2^k with k uniform in [-20, 20]: sums of these in double are inexact, so a change
 * in which lane or in which order an element is added, or an FMA, shows in the bits. */
static void fill_wide(float *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = 2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0;
        v[i] = (float)ldexp(u, (int)((seed >> 20) % 41) - 20);
    }
}

typedef struct {
    float a[N], b[N], c[N], gamma[N], beta[N];
} row_inputs;

/* a = offset + U(-scale, scale), b and c small, gamma ~ 1, beta ~ 0: seeds differ per call. */
static void row_inputs_fill(row_inputs *in, size_t n, uint64_t seed, double scale, double offset)
{
    fill(in->a, n, seed, scale, offset);
    fill(in->b, n, seed + 1, 0.5, -0.1);
    fill(in->c, n, seed + 2, 0.05, 0.0);
    fill(in->gamma, n, seed + 3, 0.1, 1.0);
    fill(in->beta, n, seed + 4, 0.05, 0.0);
}

/* Runs the row (two terms, then three) on the default path and checks it against the reference. */
static void expect_reference(const char *what, row_inputs *in, size_t n)
{
    static float got[N], want[N];
    for (int terms = 2; terms <= 3; terms++) {
        const float *c = terms == 3 ? in->c : NULL;
        ck_layer_norm_row_f32(got, in->a, in->b, c, in->gamma, in->beta, n, 1e-12f);
        ref_layer_norm_row(in->a, in->b, c, in->gamma, in->beta, n, 1e-12f, want);
        CU_ASSERT_TRUE(within_one_ulp(what, got, want, n));
    }
}

static void test_random_rows_match_long_double(void)
{
    static row_inputs in;
    const size_t lengths[] = {1, 2, 7, 16, 17, 128, 768, 777};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        for (uint64_t seed = 1; seed <= 20; seed++) {
            row_inputs_fill(&in, lengths[k], seed * 101, 2.0, 0.3);
            expect_reference("random", &in, lengths[k]);
        }
    }
}

/* The variance is tiny next to mean^2 (1e4 + U(-1, 1): var/mean^2 ~ 3e-9; 1e6 + U(-64, 64): ~1e-9),
 * the case a naive one-pass sum(s^2)/n - mean^2 gets wrong. */
static void test_large_mean_rows_match_long_double(void)
{
    static row_inputs in;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        row_inputs_fill(&in, 768, seed * 7, 1.0, 1e4);
        expect_reference("mean 1e4", &in, 768);
        row_inputs_fill(&in, 768, seed * 7, 64.0, 1e6);
        expect_reference("mean 1e6", &in, 768);
        row_inputs_fill(&in, 777, seed * 7, 1.0, -3e4);
        expect_reference("mean -3e4", &in, 777);
    }
}

/* The shift is s[0]: an outlier there is the worst case of the shifted sums, (mean - s0)^2 near n var. */
static void test_outlier_first_matches_long_double(void)
{
    static row_inputs in;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        row_inputs_fill(&in, 768, seed * 13, 1.0, 0.0);
        in.a[0] = 1e4f;
        expect_reference("outlier first", &in, 768);
        in.a[0] = -1e30f;
        expect_reference("huge outlier first", &in, 768);
    }
}

/* Tiny and huge magnitudes: d^2 stays a normal double for |s| from 1e-30 to 1e30. */
static void test_extreme_scales_match_long_double(void)
{
    static row_inputs in;
    row_inputs_fill(&in, 768, 5, 1e-30, 0.0);
    memset(in.b, 0, sizeof in.b);
    memset(in.c, 0, sizeof in.c);
    expect_reference("scale 1e-30", &in, 768);
    row_inputs_fill(&in, 768, 6, 1e30, 0.0);
    expect_reference("scale 1e30", &in, 768);
}

/* var = 0: d = 0 everywhere, so y = 0 * rstd * gamma + beta = beta exactly. */
static void test_constant_row_gives_beta(void)
{
    static row_inputs in;
    static float y[N];
    row_inputs_fill(&in, 768, 9, 1.0, 0.0);
    for (size_t i = 0; i < 768; i++) {
        in.a[i] = 3.25f;
        in.b[i] = -1.0f;
    }
    ck_layer_norm_row_f32(y, in.a, in.b, NULL, in.gamma, in.beta, 768, 1e-12f);
    CU_ASSERT_EQUAL(memcmp(y, in.beta, 768 * sizeof(float)), 0);
}

/* Pass 1 on both paths over the same row: the staged y and every lane sum must match bit for bit. The
 * lanes are compared, not just y: the statistics are good to ~1e-13, so a lane or order mistake
 * almost never reaches a float output, yet it would make bits depend on the instruction set. */
static int stage_paths_identical(const row_inputs *in, size_t at, size_t n, const float *c)
{
    static float y_fast[N + 16], y_portable[N + 16];
    ck_ln_lanes fast = {{0}, {0}}, portable = {{0}, {0}};
    double shift = (double)ck_ln_term(in->a + at, in->b + at, c, 0);
    ck_ln_stage(y_fast + at, in->a + at, in->b + at, c, n, shift, &fast, ck_isa_clamp(CK_ISA_AVX512));
    ck_ln_stage(y_portable + at, in->a + at, in->b + at, c, n, shift, &portable, CK_ISA_PORTABLE);
    return memcmp(&fast, &portable, sizeof fast) == 0 &&
           memcmp(y_fast + at, y_portable + at, n * sizeof(float)) == 0;
}

/* Whole rows on both paths: same output bits. */
static int row_paths_identical(const row_inputs *in, size_t at, size_t n, const float *c)
{
    static float fast[N + 16], portable[N + 16];
    ck_layer_norm_row_impl(fast + at, in->a + at, in->b + at, c, in->gamma + at, in->beta + at, n, 1e-12f,
                           ck_isa_clamp(CK_ISA_AVX512));
    ck_layer_norm_row_impl(portable + at, in->a + at, in->b + at, c, in->gamma + at, in->beta + at, n, 1e-12f,
                           CK_ISA_PORTABLE);
    return memcmp(fast + at, portable + at, n * sizeof(float)) == 0;
}

/* The AVX-512 path and the portable path agree bit for bit for every length around the 16-lane and
 * 8-wide block edges, two and three terms, at several alignments, with wide-range values (fill_wide)
 * whose double sums are inexact, so lane or order mistakes change bits. Both paths are called
 * directly, whatever CK_MAX_CPU_ISA says; on a CPU without AVX-512 both calls take the portable path
 * and this checks only determinism (and says so). */
static void test_avx512_and_portable_paths_identical(void)
{
    static row_inputs in;
    size_t mismatches = 0, checked = 0;
    for (size_t n = 1; n <= 1040; n += (n < 140 ? 1 : 63)) {
        row_inputs_fill(&in, n + 15, n, 2.0, 0.3);
        fill_wide(in.a, n + 15, n);
        fill_wide(in.c, n + 15, n + 7);
        for (size_t at = 0; at < 16; at += 5) {
            for (int terms = 2; terms <= 3; terms++) {
                const float *c = terms == 3 ? in.c + at : NULL;
                mismatches += !stage_paths_identical(&in, at, n, c) + !row_paths_identical(&in, at, n, c);
                checked++;
            }
        }
    }
    if (ck_cpu_isa() == CK_ISA_AVX512) {
        fprintf(stderr, "    AVX-512 path: %zu rows compared with the portable path\n", checked);
    } else {
        fprintf(stderr, "    no AVX-512 on this CPU: portable path only (%zu rows)\n", checked);
    }
    CU_ASSERT_EQUAL(mismatches, 0);
}

/* The same row gives the same bits wherever it sits in memory (the lanes follow the index in the row). */
static void test_bits_independent_of_address(void)
{
    static row_inputs in;
    static float ref[N], y[N + 16];
    static float a[N + 16], b[N + 16];
    row_inputs_fill(&in, 768, 77, 2.0, 0.3);
    ck_layer_norm_row_f32(ref, in.a, in.b, NULL, in.gamma, in.beta, 768, 1e-12f);
    for (size_t at = 1; at < 16; at++) {
        memcpy(a + at, in.a, 768 * sizeof(float));
        memcpy(b + at, in.b, 768 * sizeof(float));
        ck_layer_norm_row_f32(y + at, a + at, b + at, NULL, in.gamma, in.beta, 768, 1e-12f);
        CU_ASSERT_EQUAL(memcmp(y + at, ref, 768 * sizeof(float)), 0);
    }
}

/* Through the public kernel: T rows of x ~ 1e4 + U(-1, 1) plus a small residual, wide strides. */
static void test_residual_kernel_large_mean_matches_long_double(void)
{
    enum { T = 9, C = 768, XS = 770, YS = 776 };
    static float x[T * XS], r[T * C], gamma[C], beta[C], y[T * YS], want[C];
    fill(x, T * XS, 31, 1.0, 1e4);
    fill(r, T * C, 32, 0.01, 0.0);
    fill(gamma, C, 33, 0.1, 1.0);
    fill(beta, C, 34, 0.05, 0.0);
    ck_test_fill_canary(y, T * YS);
    CU_ASSERT_EQUAL(ck_residual_layer_norm_f32_f64acc(x, T * XS, XS, r, T * C, C, gamma, beta, y, T * YS, YS, T, C, 1e-12f),
                    CK_OK);
    for (size_t t = 0; t < T; t++) {
        ref_layer_norm_row(x + t * XS, r + t * C, NULL, gamma, beta, C, 1e-12f, want);
        CU_ASSERT_TRUE(within_one_ulp("residual kernel, mean 1e4", y + t * YS, want, C));
        CU_ASSERT_TRUE(ck_test_canary_intact(y + t * YS + C, YS - C));
    }
}

CK_TEST_MAIN("layer_norm_row", {"random rows match long double", test_random_rows_match_long_double},
             {"large-mean rows match long double", test_large_mean_rows_match_long_double},
             {"outlier first matches long double", test_outlier_first_matches_long_double},
             {"extreme scales match long double", test_extreme_scales_match_long_double},
             {"constant row gives beta", test_constant_row_gives_beta},
             {"AVX-512 and portable paths identical", test_avx512_and_portable_paths_identical},
             {"bits independent of address", test_bits_independent_of_address},
             {"residual kernel, large mean, long double", test_residual_kernel_large_mean_matches_long_double})
