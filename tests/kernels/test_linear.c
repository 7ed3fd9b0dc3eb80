/* test_linear.c - the oneDNN linear against a double reference over Kokoro's shapes, its determinism, the reference loop, rejections. */
#include <float.h>
#include <math.h>
#include <string.h>
#include <omp.h>
#include <stdint.h>

#include "ck_status.h"
#include "ck_check.h"
#include "ck_test.h"
#include "linear.h"

/* Legend: T rows, K in_features, N out_features. */

/* Deterministic values in [-scale, scale) from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *v, size_t n, uint64_t seed, double scale)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)(scale * (2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0));
    }
}

/* One problem: x [T,K] stride xs, W [N,K], b [N] or none, y [T,N] stride ys (canary-filled). */
typedef struct {
    size_t rows, in, out, xs, ys;
    float *x, *w, *b, *y;
    ck_onednn *ctx;
    ck_linear *lin;
} problem;

static problem problem_new(size_t rows, size_t in, size_t out, int with_bias, size_t xs, size_t ys)
{
    problem p = {rows, in, out, xs, ys, NULL, NULL, NULL, NULL, NULL, NULL};
    p.x = malloc((rows * xs + 1) * sizeof(float));
    p.w = malloc(in * out * sizeof(float));
    p.b = with_bias ? malloc(out * sizeof(float)) : NULL;
    p.y = malloc((rows * ys + 1) * sizeof(float));
    fill(p.x, rows * xs + 1, rows + in, 2.0);   /* activations of LayerNorm-like size */
    fill(p.w, in * out, in * 7 + out, 0.05);   /* the synthetic weight scale (DESIGN section 7) */
    if (p.b != NULL) {
        fill(p.b, out, out, 0.05);
    }
    ck_test_fill_canary(p.y, rows * ys + 1);
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&p.ctx, 1), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_init(&p.lin, p.ctx, &(ck_linear_desc){
            .weight = p.w, .weight_count = in * out, .bias = p.b, .bias_count = out,
            .in_features = in, .out_features = out}), CK_OK);
    return p;
}

static void problem_free(problem *p)
{
    ck_linear_free(p->lin);
    ck_onednn_free(p->ctx);
    free(p->x);
    free(p->w);
    free(p->b);
    free(p->y);
}

static int forward(problem *p)
{
    return ck_linear_forward_f32(p->lin, 0, p->x, p->rows * p->xs, p->xs, p->y, p->rows * p->ys, p->ys, p->rows);
}

/* Counts elements of row t outside the bound, comparing with the formula summed in double.
 * Bound for float accumulation (sum_terms = K): any order of K products summed in float errs by
 * <= K * 2^-24 * sum_k |x_k w_k| (the classic gamma_K bound; FMA only tightens it), plus the bias
 * add and final rounding, 2^-23 |y|. For a double accumulation pass sum_terms = 0 (final rounding only). */
static size_t ref_row_mismatches(const problem *p, size_t t, size_t sum_terms)
{
    size_t bad = 0;
    for (size_t o = 0; o < p->out; o++) {
        double acc = p->b ? p->b[o] : 0.0, mag = 0.0;
        for (size_t i = 0; i < p->in; i++) {
            acc += (double)p->x[t * p->xs + i] * p->w[o * p->in + i];
            mag += fabs((double)p->x[t * p->xs + i] * p->w[o * p->in + i]);
        }
        double got = p->y[t * p->ys + o], tol = (double)sum_terms * 0x1p-24 * mag + 0x1p-23 * fabs(acc);
        if (!(fabs(got - acc) <= tol) && bad++ == 0) {
            fprintf(stderr, "    row %zu col %zu: got %.9g want %.9g tol %.3g\n", t, o, got, acc, tol);
        }
    }
    return bad;
}

/* Runs one shape and checks it; with T = 512 every 7th row and the last are compared (oneDNN computes
 * all rows; the sample keeps the double reference under a second). Pad columns keep the canary. */
static void expect_shape(size_t rows, size_t in, size_t out, int with_bias, size_t xs, size_t ys)
{
    problem p = problem_new(rows, in, out, with_bias, xs, ys);
    CU_ASSERT_EQUAL(forward(&p), CK_OK);
    size_t bad = 0, step = rows > 64 ? 7 : 1;
    for (size_t t = 0; t < rows; t++) {
        if (t % step == 0 || t == rows - 1) {
            bad += ref_row_mismatches(&p, t, in);
        }
        CU_ASSERT_TRUE(ck_test_canary_intact(p.y + t * ys + out, ys - out));
    }
    CU_ASSERT_TRUE(ck_test_canary_intact(p.y + rows * ys, 1));
    CU_ASSERT_EQUAL(bad, 0);
    problem_free(&p);
}

/* Kokoro's five shapes, each at T = 1, 3, 37 and 512. */
static void expect_all_rows(size_t in, size_t out)
{
    const size_t rows[4] = {1, 3, 37, 512};
    for (int r = 0; r < 4; r++) {
        expect_shape(rows[r], in, out, 1, in, out);
    }
}

static void test_128_to_768(void) { expect_all_rows(128, 768); }
static void test_768_to_768(void) { expect_all_rows(768, 768); }
static void test_768_to_2048(void) { expect_all_rows(768, 2048); }
static void test_2048_to_768(void) { expect_all_rows(2048, 768); }
static void test_768_to_512(void) { expect_all_rows(768, 512); }
static void test_no_bias(void) { expect_shape(37, 768, 512, 0, 768, 512); }
static void test_wide_strides_keep_pads(void) { expect_shape(37, 128, 768, 1, 136, 776); }

static void test_zero_rows_is_a_no_op(void)
{
    problem p = problem_new(3, 128, 768, 1, 128, 768);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(p.lin, 0, NULL, 0, 128, p.y, 0, 768, 0), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(p.y, 3 * 768 + 1));
    problem_free(&p);
}

/* The plain reference loop against the test's own double reference: only the final rounding differs. */
static void test_reference_loop(void)
{
    problem p = problem_new(37, 768, 512, 1, 770, 520);
    CU_ASSERT_EQUAL(ck_linear_ref_f32(p.x, 37 * 770, 770, p.w, 768 * 512, p.b, 512, p.y, 37 * 520, 520, 37, 768,
                                      512), CK_OK);
    size_t bad = 0;
    for (size_t t = 0; t < 37; t++) {
        bad += ref_row_mismatches(&p, t, 0);
        CU_ASSERT_TRUE(ck_test_canary_intact(p.y + t * 520 + 512, 8));
    }
    CU_ASSERT_EQUAL(bad, 0);
    problem_free(&p);
}

/* Max |a - b| over n floats, and whether a and b are bit-identical. */
static double max_abs_diff(const float *a, const float *b, size_t n, int *identical)
{
    double worst = 0.0;
    *identical = memcmp(a, b, n * sizeof(float)) == 0;
    for (size_t i = 0; i < n; i++) {
        worst = fmax(worst, fabs((double)a[i] - (double)b[i]));
    }
    return worst;
}

/* Row 100 computed alone (T = 1) and inside T = 512: bit-identical (oneDNN 2.6 brgemm tiles,
 * AVX-512). If a oneDNN update changes that, this test says so. */
static void test_row_does_not_depend_on_rows(void)
{
    problem p = problem_new(512, 768, 768, 1, 768, 768);
    float alone[768];
    int identical;
    CU_ASSERT_EQUAL(forward(&p), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(p.lin, 0, p.x + 100 * 768, 768, 768, alone, 768, 768, 1), CK_OK);
    double d = max_abs_diff(alone, p.y + 100 * 768, 768, &identical);
    fprintf(stderr, "    row alone vs in T=512: max abs diff %.3g, identical %d\n", d, identical);
    CU_ASSERT_TRUE(identical);
    problem_free(&p);
}

/* T = 512 with one and with two OpenMP threads: measured bit-identical (oneDNN splits rows and
 * columns between threads, never the K sum). */
static void test_rows_do_not_depend_on_threads(void)
{
    problem p = problem_new(512, 768, 2048, 1, 768, 2048);
    float *one = malloc(512 * 2048 * sizeof(float));
    int before = omp_get_max_threads(), identical;
    omp_set_num_threads(1);
    CU_ASSERT_EQUAL(forward(&p), CK_OK);
    memcpy(one, p.y, 512 * 2048 * sizeof(float));
    omp_set_num_threads(2);
    CU_ASSERT_EQUAL(forward(&p), CK_OK);
    omp_set_num_threads(before);
    double d = max_abs_diff(one, p.y, 512 * 2048, &identical);
    fprintf(stderr, "    1 vs 2 threads: max abs diff %.3g, identical %d\n", d, identical);
    CU_ASSERT_TRUE(identical);
    free(one);
    problem_free(&p);
}

/* Rows [0, 300) of one shape computed in one call (tiles 256 + 32 + 8 + 4) and again in pieces of
 * 1, 3, 37, 100 and 159 rows (other tiles, other positions inside them): every row bit-identical.
 * This is what makes features independent of batch composition and thread count. */
static void expect_rows_independent_of_tiles(size_t in, size_t out, ck_linear_activation act)
{
    const size_t rows = 300, cuts[6] = {0, 1, 4, 41, 141, 300};
    problem p = problem_new(rows, in, out, 1, in, out);
    ck_linear *lin = NULL;
    float *pieces = malloc(rows * out * sizeof(float));
    int identical;
    CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin, p.ctx, &(ck_linear_desc){
            .weight = p.w, .weight_count = in * out, .bias = p.b, .bias_count = out,
            .in_features = in, .out_features = out, .activation = act}),
                          CK_OK);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, p.x, rows * in, in, p.y, rows * out, out, rows), CK_OK);
    for (int c = 0; c < 5; c++) {
        size_t first = cuts[c], count = cuts[c + 1] - cuts[c];
        CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, p.x + first * in, count * in, in, pieces + first * out,
                                              count * out, out, count), CK_OK);
    }
    double d = max_abs_diff(pieces, p.y, rows * out, &identical);
    if (!identical) {
        fprintf(stderr, "    %zu -> %zu (activation %d): pieces vs one call max abs diff %.3g\n", in, out,
                (int)act, d);
    }
    CU_ASSERT_TRUE(identical);
    ck_linear_free(lin);
    free(pieces);
    problem_free(&p);
}

static void test_rows_do_not_depend_on_tiles(void)
{
    expect_rows_independent_of_tiles(128, 768, CK_LINEAR_PLAIN);
    expect_rows_independent_of_tiles(768, 768, CK_LINEAR_PLAIN);
    expect_rows_independent_of_tiles(768, 2048, CK_LINEAR_PLAIN);
    expect_rows_independent_of_tiles(768, 2048, CK_LINEAR_GELU_TANH);
    expect_rows_independent_of_tiles(2048, 768, CK_LINEAR_PLAIN);
    expect_rows_independent_of_tiles(768, 512, CK_LINEAR_PLAIN);
}

/* Two lanes used at once from two OpenMP threads, each on its half of T = 700 rows, with the linear
 * made for one thread (as the executor makes it): bit-identical to one call on one lane. */
static void test_two_lanes_at_once(void)
{
    const size_t rows = 700, in = 768, out = 2048;
    problem p = problem_new(rows, in, out, 1, in, out);
    ck_onednn *ctx = NULL;
    ck_linear *lin = NULL;
    float *split = malloc(rows * out * sizeof(float));
    int before = omp_get_max_threads(), identical, status[2] = {-1, -1};
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 2), CK_OK);
    omp_set_num_threads(1);
    CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin, ctx, &(ck_linear_desc){
            .weight = p.w, .weight_count = in * out, .bias = p.b, .bias_count = out,
            .in_features = in, .out_features = out}), CK_OK);
    omp_set_num_threads(before);
    CU_ASSERT_EQUAL(forward(&p), CK_OK);
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        size_t first = t == 0 ? 0 : 333, count = t == 0 ? 333 : rows - 333;
        if (omp_get_num_threads() == 2) {
            status[t] = ck_linear_forward_f32(lin, t, p.x + first * in, count * in, in, split + first * out,
                                              count * out, out, count);
        }
    }
    CU_ASSERT_EQUAL(status[0], CK_OK);
    CU_ASSERT_EQUAL(status[1], CK_OK);
    double d = max_abs_diff(split, p.y, rows * out, &identical);
    fprintf(stderr, "    two lanes vs one call: max abs diff %.3g, identical %d\n", d, identical);
    CU_ASSERT_TRUE(identical);
    ck_linear_free(lin);
    ck_onednn_free(ctx);
    free(split);
    problem_free(&p);
}

static void test_lane_out_of_range(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 4);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(p.lin, 1, p.x, 24, 8, p.y, 12, 4, 3), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(p.lin, -1, p.x, 24, 8, p.y, 12, 4, 3), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(p.y, 3 * 4 + 1));
    ck_onednn *ctx = (ck_onednn *)&ctx;
    CU_ASSERT_EQUAL(ck_onednn_init(&ctx, 0), CK_E_ARG);
    CU_ASSERT_PTR_NULL(ctx);
    CU_ASSERT_EQUAL(ck_onednn_init(&ctx, CK_ONEDNN_MAX_LANES + 1), CK_E_ARG);
    problem_free(&p);
}

/* init rejections: each returns the code and leaves *out NULL. */
static void expect_init_rejected(ck_onednn *ctx, const float *w, size_t w_count, const float *b, size_t b_count,
                                 size_t in, size_t out, int code)
{
    ck_linear *lin = (ck_linear *)&lin; /* any non-NULL value: init must reset it */
    CU_ASSERT_EQUAL(ck_linear_init(&lin, ctx, &(ck_linear_desc){
            .weight = w, .weight_count = w_count, .bias = b, .bias_count = b_count,
            .in_features = in, .out_features = out}), code);
    CU_ASSERT_PTR_NULL(lin);
}

static void test_init_rejections(void)
{
    problem p = problem_new(1, 8, 4, 1, 8, 4);
    expect_init_rejected(NULL, p.w, 32, p.b, 4, 8, 4, CK_E_ARG);
    expect_init_rejected(p.ctx, NULL, 32, p.b, 4, 8, 4, CK_E_ARG);
    CU_ASSERT_EQUAL(ck_linear_init(NULL, p.ctx, &(ck_linear_desc){
            .weight = p.w, .weight_count = 32, .bias = p.b, .bias_count = 4, .in_features = 8,
            .out_features = 4}), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_onednn_init(NULL, 1), CK_E_ARG);
    problem_free(&p);
}

static void test_init_zero_features(void)
{
    problem p = problem_new(1, 8, 4, 1, 8, 4);
    expect_init_rejected(p.ctx, p.w, 32, p.b, 4, 0, 4, CK_E_SIZE);
    expect_init_rejected(p.ctx, p.w, 32, p.b, 4, 8, 0, CK_E_SIZE);
    problem_free(&p);
}

static void test_init_weight_count_one_short(void)
{
    problem p = problem_new(1, 8, 4, 1, 8, 4);
    expect_init_rejected(p.ctx, p.w, 31, p.b, 4, 8, 4, CK_E_SIZE);
    problem_free(&p);
}

static void test_init_bias_count_one_short(void)
{
    problem p = problem_new(1, 8, 4, 1, 8, 4);
    expect_init_rejected(p.ctx, p.w, 32, p.b, 3, 8, 4, CK_E_SIZE);
    problem_free(&p);
}

static void test_init_features_overflow(void)
{
    problem p = problem_new(1, 8, 4, 1, 8, 4);
    expect_init_rejected(p.ctx, p.w, SIZE_MAX, p.b, 4, SIZE_MAX / 2, 4, CK_E_SIZE);
    problem_free(&p);
}

static void test_init_nan_weight(void)
{
    problem p = problem_new(1, 8, 4, 1, 8, 4);
    p.w[31] = NAN;
    expect_init_rejected(p.ctx, p.w, 32, p.b, 4, 8, 4, CK_E_NONFINITE);
    problem_free(&p);
}

static void test_init_inf_bias(void)
{
    problem p = problem_new(1, 8, 4, 1, 8, 4);
    p.b[0] = -INFINITY;
    expect_init_rejected(p.ctx, p.w, 32, p.b, 4, 8, 4, CK_E_NONFINITE);
    problem_free(&p);
}

/* forward rejections on a 3 x (8 -> 4) problem with y stride 6: code asserted, y untouched. */
static void expect_forward_rejected(problem *p, const float *x, size_t x_count, size_t xs, size_t y_count,
                                    size_t ys, int code)
{
    CU_ASSERT_EQUAL(ck_linear_forward_f32(p->lin, 0, x, x_count, xs, p->y, y_count, ys, 3), code);
    CU_ASSERT_TRUE(ck_test_canary_intact(p->y, 3 * 6 + 1));
}

static void test_forward_null_x(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    expect_forward_rejected(&p, NULL, 24, 8, 18, 6, CK_E_ARG);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(NULL, 0, p.x, 24, 8, p.y, 18, 6, 3), CK_E_ARG);
    problem_free(&p);
}

static void test_forward_x_stride_below_in(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    expect_forward_rejected(&p, p.x, 24, 7, 18, 6, CK_E_SIZE);
    problem_free(&p);
}

static void test_forward_y_stride_below_out(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    expect_forward_rejected(&p, p.x, 24, 8, 18, 3, CK_E_SIZE);
    problem_free(&p);
}

static void test_forward_y_stride_size_max(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    expect_forward_rejected(&p, p.x, 24, 8, SIZE_MAX, SIZE_MAX, CK_E_SIZE);
    problem_free(&p);
}

static void test_forward_y_count_one_short(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    expect_forward_rejected(&p, p.x, 24, 8, 2 * 6 + 4 - 1, 6, CK_E_SIZE);
    problem_free(&p);
}

static void test_forward_x_count_one_short(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    expect_forward_rejected(&p, p.x, 23, 8, 18, 6, CK_E_SIZE);
    problem_free(&p);
}

/* Values are the caller's to check (linear.h): a NaN in row 2 of x poisons row 2 of y only. */
static void test_forward_nan_in_x_poisons_its_row_only(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    p.x[2 * 8 + 7] = NAN;
    CU_ASSERT_EQUAL(ck_linear_forward_f32(p.lin, 0, p.x, 24, 8, p.y, 18, 6, 3), CK_OK);
    CU_ASSERT_TRUE(ck_all_finite(p.y, 2, 4, 6));
    for (size_t n = 0; n < 4; n++) {
        CU_ASSERT_TRUE(isnan(p.y[2 * 6 + n]));
    }
    CU_ASSERT_TRUE(ck_test_canary_intact(p.y + 4, 2));
    problem_free(&p);
}

static void test_forward_x_overlaps_y(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    ck_test_fill_canary(p.x, 25);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(p.lin, 0, p.x, 24, 8, p.x + 4, 20, 6, 3), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(p.x, 25));
    problem_free(&p);
}

static void test_reference_loop_y_count_one_short(void)
{
    problem p = problem_new(3, 8, 4, 1, 8, 6);
    CU_ASSERT_EQUAL(ck_linear_ref_f32(p.x, 24, 8, p.w, 32, p.b, 4, p.y, 15, 6, 3, 8, 4), CK_E_SIZE);
    CU_ASSERT_TRUE(ck_test_canary_intact(p.y, 3 * 6 + 1));
    problem_free(&p);
}

/* ck_bf16_from_f32: round to nearest, ties to even (PyTorch's c10::BFloat16 round_to_nearest_even):
 * exact values, ties both ways, the largest finite rounding up to Inf, Inf, NaN kept quiet. */
static void test_bf16_rounding(void)
{
    static const struct {
        uint32_t f;
        uint16_t h;
    } cases[] = {
        {0x3f800000u, 0x3f80u}, /* 1.0 exact */
        {0x3f808000u, 0x3f80u}, /* 1.00390625: tie, 0x3f80 is even: down */
        {0x3f818000u, 0x3f82u}, /* tie, 0x3f81 is odd: up */
        {0x3f808001u, 0x3f81u}, /* just above the tie: up */
        {0xbf807fffu, 0xbf80u}, /* just below the tie, negative: down in magnitude */
        {0x7f7fffffu, 0x7f80u}, /* FLT_MAX rounds to +Inf */
        {0x7f800000u, 0x7f80u}, /* +Inf */
        {0xff800000u, 0xff80u}, /* -Inf */
        {0x00000001u, 0x0000u}, /* smallest subnormal rounds to +0 */
        {0x7f800001u, 0x7fc0u}, /* signalling NaN becomes quiet */
        {0xffc00000u, 0xffc0u}, /* negative quiet NaN keeps its sign */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float f;
        memcpy(&f, &cases[i].f, sizeof f);
        CU_ASSERT_EQUAL(ck_bf16_from_f32(f), cases[i].h);
        uint16_t row = 0;
        ck_bf16_from_f32_rows(&f, 1, &row, 1, 1, 1);
        CU_ASSERT_EQUAL(row, cases[i].h);
    }
    /* the same cases 16 at a time, through the vector path of the rows converter */
    enum { N_CASES = sizeof cases / sizeof cases[0], LANES = 3 * 16 };
    float many[LANES];
    uint16_t got[LANES];
    for (size_t i = 0; i < LANES; i++) {
        memcpy(&many[i], &cases[i % N_CASES].f, sizeof many[i]);
    }
    ck_bf16_from_f32_rows(many, LANES, got, LANES, 1, LANES);
    for (size_t i = 0; i < LANES; i++) {
        CU_ASSERT_EQUAL(got[i], cases[i % N_CASES].h);
    }
    /* bf16 -> f32 is exact: every finite bf16 survives a round trip */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = ck_bf16_to_f32((uint16_t)h);
        if ((h & 0x7f80u) != 0x7f80u) {
            CU_ASSERT_EQUAL(ck_bf16_from_f32(f), (uint16_t)h);
        }
    }
}

/* The rows converter gives ck_bf16_from_f32's bits for every value of a strided block. */
static void test_bf16_rows_match_scalar(void)
{
    enum { R = 7, C = 131, XS = 140, YS = 133 };
    float *x = malloc(R * XS * sizeof *x);
    uint16_t *y = malloc(R * YS * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    fill(x, R * XS, 99, 1e3);
    memset(y, 0xab, R * YS * sizeof *y);
    ck_bf16_from_f32_rows(x, XS, y, YS, R, C);
    size_t bad = 0;
    for (size_t r = 0; r < R; r++) {
        for (size_t c = 0; c < YS; c++) {
            uint16_t want = c < C ? ck_bf16_from_f32(x[r * XS + c]) : 0xababu;
            bad += y[r * YS + c] != want;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(y);
}

/* bf16: a row's bits do not depend on how many rows are computed with it (1 row, tails of 17, 64,
 * 127 rows, full tiles), for every Kokoro shape, plain and with the GELU post-op, on one thread per
 * lane as the executor runs them (a bf16 primitive made for two threads may split K between them);
 * the error against the f32 reference is a bf16 one (relative RMSE between 1e-4 and 1%). */
static void test_bf16_rows_do_not_depend_on_tiles(void)
{
    static const size_t shapes[][2] = {{128, 768}, {768, 768}, {768, 2048}, {2048, 768}, {768, 512}};
    const size_t T = 300;
    int before = omp_get_max_threads();
    omp_set_num_threads(1);
    ck_onednn *ctx = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 1), CK_OK);
    for (size_t si = 0; si < 5; si++) {
        for (int act = 0; act < 2; act++) {
            size_t K = shapes[si][0], N = shapes[si][1];
            float *x = malloc(T * K * sizeof *x), *w = malloc(K * N * sizeof *w), *b = malloc(N * sizeof *b);
            float *all = malloc(T * N * sizeof *all), *part = malloc(T * N * sizeof *part);
            float *ref = malloc(T * N * sizeof *ref);
            CU_ASSERT_FATAL(x && w && b && all && part && ref);
            fill(x, T * K, K + 1, 2.0);
            fill(w, K * N, K * 7 + N, 0.05);
            fill(b, N, N, 0.05);
            ck_linear *lin = NULL;
            CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin, ctx, &(ck_linear_desc){
                    .weight = w, .weight_count = K * N, .bias = b, .bias_count = N,
                    .in_features = K, .out_features = N, .activation = (ck_linear_activation)act,
                    .compute = CK_DTYPE_BF16}), CK_OK);
            CU_ASSERT_EQUAL(ck_linear_compute_dtype(lin), CK_DTYPE_BF16);
            CU_ASSERT_EQUAL_FATAL(ck_linear_forward_f32(lin, 0, x, T * K, K, all, T * N, N, T), CK_OK);
            static const size_t chunks[] = {1, 17, 64, 127, 128, 256};
            for (size_t ci = 0; ci < 6; ci++) {
                for (size_t t = 0; t < T; t += chunks[ci]) {
                    size_t m = T - t < chunks[ci] ? T - t : chunks[ci];
                    CU_ASSERT_EQUAL_FATAL(ck_linear_forward_f32(lin, 0, x + t * K, m * K, K, part + t * N,
                                                                m * N, N, m), CK_OK);
                }
                CU_ASSERT_EQUAL(memcmp(part, all, T * N * sizeof *all), 0);
            }
            /* the same rows already in bf16 (what a LayerNorm's bf16 copy holds): the same bits,
             * read in place (dense) or copied to the staging (strided, and the 44-row tail) */
            uint16_t *x16 = malloc(T * (K + 8) * sizeof *x16);
            CU_ASSERT_FATAL(x16 != NULL);
            ck_bf16_from_f32_rows(x, K, x16, K, T, K);
            CU_ASSERT_EQUAL_FATAL(ck_linear_forward_bf16_f32(lin, 0, x16, T * K, K, part, T * N, N, T), CK_OK);
            CU_ASSERT_EQUAL(memcmp(part, all, T * N * sizeof *all), 0);
            ck_bf16_from_f32_rows(x, K, x16, K + 8, T, K);
            memset(part, 0, T * N * sizeof *part);
            CU_ASSERT_EQUAL_FATAL(ck_linear_forward_bf16_f32(lin, 0, x16, T * (K + 8), K + 8, part, T * N, N, T),
                                  CK_OK);
            CU_ASSERT_EQUAL(memcmp(part, all, T * N * sizeof *all), 0);
            CU_ASSERT_EQUAL(ck_linear_forward_bf16_f32(lin, 0, x16, (T - 1) * (K + 8) + K - 1, K + 8, part, T * N, N, T),
                            CK_E_SIZE);
            /* writing bf16 (ck_linear_desc dst): each y is the f32 result rounded to nearest even,
             * exactly for K <= 768 (the FFN in, the one the executor makes); for K = 2048 oneDNN's
             * bf16-writing kernel sums in another order, and 1-2 of 230,400 values land one bf16
             * step away. Its rows do not depend on the chunking. */
            ck_linear *lin16 = NULL;
            uint16_t *y16 = malloc(T * N * sizeof *y16), *c16 = malloc(T * N * sizeof *c16);
            CU_ASSERT_FATAL(y16 != NULL && c16 != NULL);
            CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin16, ctx, &(ck_linear_desc){
                    .weight = w, .weight_count = K * N, .bias = b, .bias_count = N,
                    .in_features = K, .out_features = N, .activation = (ck_linear_activation)act,
                    .compute = CK_DTYPE_BF16, .dst = CK_DTYPE_BF16}), CK_OK);
            CU_ASSERT_EQUAL_FATAL(ck_linear_forward_bf16(lin16, 0, x16, T * (K + 8), K + 8, y16, T * N, N, T),
                                  CK_OK);
            size_t off = 0, far = 0;
            for (size_t i = 0; i < T * N; i++) {
                int d = (int)y16[i] - (int)ck_bf16_from_f32(all[i]);
                off += d != 0;
                far += d > 1 || d < -1;
            }
            CU_ASSERT_EQUAL(far, 0);
            CU_ASSERT(K > 768 ? off <= 4 : off == 0);
            for (size_t t = 0; t < T; t += 37) {
                size_t m = T - t < 37 ? T - t : 37;
                CU_ASSERT_EQUAL_FATAL(ck_linear_forward_bf16(lin16, 0, x16 + t * (K + 8), m * (K + 8), K + 8,
                                                             c16 + t * N, m * N, N, m), CK_OK);
            }
            CU_ASSERT_EQUAL(memcmp(c16, y16, T * N * sizeof *y16), 0);
            CU_ASSERT_EQUAL(ck_linear_forward_f32(lin16, 0, x, T * K, K, part, T * N, N, T), CK_E_ARG);
            CU_ASSERT_EQUAL(ck_linear_forward_bf16_f32(lin16, 0, x16, T * (K + 8), K + 8, part, T * N, N, T), CK_E_ARG);
            CU_ASSERT_EQUAL(ck_linear_forward_bf16(lin, 0, x16, T * (K + 8), K + 8, y16, T * N, N, T), CK_E_ARG);
            ck_linear *bad = NULL;
            CU_ASSERT_EQUAL(ck_linear_init(&bad, ctx, &(ck_linear_desc){
                    .weight = w, .weight_count = K * N, .bias = b, .bias_count = N,
                    .in_features = K, .out_features = N, .dst = CK_DTYPE_BF16}), CK_E_ARG);
            CU_ASSERT_PTR_NULL(bad);
            ck_linear_free(lin16);
            free(y16);
            free(c16);
            free(x16);
            if (act == 0) {
                CU_ASSERT_EQUAL(ck_linear_ref_f32(x, T * K, K, w, K * N, b, N, ref, T * N, N, T, K, N), CK_OK);
                double d = 0, r = 0;
                for (size_t i = 0; i < T * N; i++) {
                    d += ((double)all[i] - ref[i]) * ((double)all[i] - ref[i]);
                    r += (double)ref[i] * ref[i];
                }
                CU_ASSERT(sqrt(d / r) > 1e-4 && sqrt(d / r) < 0.01);
            }
            ck_linear_free(lin);
            free(x), free(w), free(b), free(all), free(part), free(ref);
        }
    }
    ck_onednn_free(ctx);
    omp_set_num_threads(before);
}

static void test_free_accepts_null(void)
{
    ck_linear_free(NULL);
    ck_onednn_free(NULL);
    CU_PASS("freeing NULL returns");
}

CK_TEST_MAIN("linear", {"128 -> 768", test_128_to_768}, {"768 -> 768", test_768_to_768},
             {"768 -> 2048", test_768_to_2048}, {"2048 -> 768", test_2048_to_768}, {"768 -> 512", test_768_to_512},
             {"no bias", test_no_bias}, {"wide strides keep pads", test_wide_strides_keep_pads},
             {"zero rows is a no-op", test_zero_rows_is_a_no_op}, {"reference loop", test_reference_loop},
             {"row does not depend on rows", test_row_does_not_depend_on_rows},
             {"rows do not depend on threads", test_rows_do_not_depend_on_threads},
             {"rows do not depend on tiles", test_rows_do_not_depend_on_tiles},
             {"two lanes at once", test_two_lanes_at_once}, {"lane out of range", test_lane_out_of_range},
             {"init null arguments", test_init_rejections}, {"init zero features", test_init_zero_features},
             {"init weight_count one short", test_init_weight_count_one_short},
             {"init bias_count one short", test_init_bias_count_one_short},
             {"init features overflow", test_init_features_overflow}, {"init NaN weight", test_init_nan_weight},
             {"init Inf bias", test_init_inf_bias}, {"forward null x or lin", test_forward_null_x},
             {"forward x stride < in", test_forward_x_stride_below_in},
             {"forward y stride < out", test_forward_y_stride_below_out},
             {"forward y stride SIZE_MAX", test_forward_y_stride_size_max},
             {"forward y_count one short", test_forward_y_count_one_short},
             {"forward x_count one short", test_forward_x_count_one_short},
             {"forward NaN in x poisons its row only", test_forward_nan_in_x_poisons_its_row_only}, {"forward x overlaps y", test_forward_x_overlaps_y},
             {"reference loop y_count one short", test_reference_loop_y_count_one_short},
             {"bf16 rounding", test_bf16_rounding}, {"bf16 rows match the scalar", test_bf16_rows_match_scalar},
             {"bf16 rows do not depend on the tile", test_bf16_rows_do_not_depend_on_tiles},
             {"free accepts NULL", test_free_accepts_null})
