/* test_snake.c - Snake vs torch (x + (1 / alpha) * sin(alpha * x) ** 2), a double reference, splits, in place, rejections. */
#include "ck_sin.h"
#include "ck_status.h"
#include "kernel_fixture.h"
#include "snake.h"

enum { R = 11, C = 6, N = R * C, WIDE = C + 2 };

/* Bound, per element: we compute torch's float chain fl(x + fl(fl(1 / a) * sin^2(fl(a x)))), so the two
 * differ by the two sin^2 (ours within 1.5e-7 of the exact one, test_sin; torch's Sleef sinf squared in
 * float about as close) divided by alpha, and the roundings after it (ulp(y)). Allowed: 2 ulp of
 * max(|x|, |y|, 1), i.e. 2.4e-7 max(|x|, |y|, 1). Measured: 1.06e-7 of that scale (9.5e-7 absolute;
 * 1.11e-7 with the earlier libm sin in double). Against the formula in double at the float fl(a x)
 * (sin^2 exact): within 1.5e-7 / alpha + one ulp of y. */
static void test_matches_torch_and_reference(void)
{
    ck_st_file *f = ck_kfix_open("snake.safetensors");
    CU_ASSERT_FATAL(f != NULL);
    float *x = ck_kfix_f32(f, "x", NULL), *alpha = ck_kfix_f32(f, "alpha", NULL), *want = ck_kfix_f32(f, "y", NULL);
    CU_ASSERT_FATAL(x && alpha && want);
    float y[N];
    CU_ASSERT_EQUAL(ck_snake_f32(x, N, C, alpha, C, y, N, C, 0, R, C), CK_OK);
    double worst = 0.0, abs_err, rel_err;
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        double scale = fmax(1.0, fmax(fabs((double)x[i]), fabs((double)want[i])));
        double d = fabs((double)y[i] - (double)want[i]) / scale;
        worst = d > worst ? d : worst;
        bad += !(d <= 2.4e-7);
        /* the definition, element by element: ck_snake1_f32 */
        float one = ck_snake1_f32(x[i], alpha[i % C]);
        CU_ASSERT_EQUAL(memcmp(&y[i], &one, sizeof one), 0);
        double a = alpha[i % C], s = sin((double)(alpha[i % C] * x[i])), ref = (double)x[i] + s * s / a;
        CU_ASSERT_TRUE(fabs((double)y[i] - ref) <= 1.5e-7 / fabs(a) + 1.2e-7 * fmax(1.0, fabs(ref)));
    }
    ck_kfix_errors(y, want, N, 1e-2, &abs_err, &rel_err);
    fprintf(stderr, "    vs torch: max abs %.3g, max rel %.3g; in units of max(|x|, |y|, 1): %.3g\n", abs_err,
            rel_err, worst);
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(alpha);
    free(want);
    ck_st_close(f);
}

static void test_split_in_place_stride(void)
{
    float x[N], alpha[C], one[N], y[R * WIDE];
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)((int)(i * 37 % 101) - 50) * 0.173f;
    }
    for (size_t c = 0; c < C; c++) {
        alpha[c] = 0.3f + 0.41f * (float)c;
    }
    CU_ASSERT_EQUAL(ck_snake_f32(x, N, C, alpha, C, one, N, C, 0, R, C), CK_OK);
    for (size_t cut = 0; cut <= R; cut++) {
        ck_test_fill_canary(y, R * WIDE);
        CU_ASSERT_EQUAL(ck_snake_f32(x, N, C, alpha, C, y, R * WIDE, WIDE, cut, R, C), CK_OK);
        CU_ASSERT_EQUAL(ck_snake_f32(x, N, C, alpha, C, y, R * WIDE, WIDE, 0, cut, C), CK_OK);
        for (size_t r = 0; r < R; r++) {
            CU_ASSERT_EQUAL(memcmp(y + r * WIDE, one + r * C, C * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(y + r * WIDE + C, WIDE - C));
        }
    }
    CU_ASSERT_EQUAL(ck_snake_f32(x, N, C, alpha, C, x, N, C, 0, R, C), CK_OK);
    CU_ASSERT_EQUAL(memcmp(x, one, sizeof x), 0);
}

/* Wide rows (37 channels: AVX-512 and SSE2 bodies plus remainders, at every row offset via the stride 41)
 * give each element the bits of the scalar ck_snake1_f32: vector lanes and remainder compute alike, and
 * the ISA the suite runs under (kernels_portable.* repeats it) does not matter. */
static void test_wide_rows_equal_scalar(void)
{
    enum { WR = 9, WC = 37, WS = 41 };
    static float x[WR * WS], alpha[WC], y[WR * WS];
    for (size_t i = 0; i < WR * WS; i++) {
        x[i] = (float)((int)(i * 7919 % 1009) - 504) * 0.0917f;
    }
    for (size_t c = 0; c < WC; c++) {
        alpha[c] = 0.11f + 0.23f * (float)c; /* alpha x up to about 400 */
    }
    CU_ASSERT_EQUAL(ck_snake_f32(x, WR * WS, WS, alpha, WC, y, WR * WS, WS, 0, WR, WC), CK_OK);
    size_t bad = 0;
    for (size_t r = 0; r < WR; r++) {
        for (size_t c = 0; c < WC; c++) {
            float one = ck_snake1_f32(x[r * WS + c], alpha[c]);
            bad += memcmp(&y[r * WS + c], &one, sizeof one) != 0;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_rejections(void)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, a[2] = {1.0f, 0.5f}, y[8];
#define SK_EXPECT(code, call) CK_KFIX_REJECTS(y, 8, code, call)
    SK_EXPECT(CK_E_SIZE, ck_snake_f32(x, 5, 2, a, 2, y, 6, 2, 0, 3, 2));
    SK_EXPECT(CK_E_SIZE, ck_snake_f32(x, 6, 2, a, 2, y, 5, 2, 0, 3, 2));
    SK_EXPECT(CK_E_SIZE, ck_snake_f32(x, 6, 2, a, 1, y, 6, 2, 0, 3, 2));
    SK_EXPECT(CK_E_SIZE, ck_snake_f32(x, 6, 1, a, 2, y, 6, 2, 0, 3, 2));
    SK_EXPECT(CK_E_SIZE, ck_snake_f32(x, 6, 2, a, 2, y, 6, 2, 0, 3, 0));
    SK_EXPECT(CK_E_RANGE, ck_snake_f32(x, 6, 2, a, 2, y, 6, 2, 2, 1, 2));
    SK_EXPECT(CK_E_ARG, ck_snake_f32(NULL, 6, 2, a, 2, y, 6, 2, 0, 3, 2));
    SK_EXPECT(CK_E_ARG, ck_snake_f32(x, 6, 2, NULL, 2, y, 6, 2, 0, 3, 2));
    SK_EXPECT(CK_E_ARG, ck_snake_f32(y + 1, 6, 2, a, 2, y, 6, 2, 0, 3, 2)); /* partial overlap */
    SK_EXPECT(CK_E_ARG, ck_snake_f32(x, 6, 2, y + 4, 2, y, 6, 2, 0, 3, 2)); /* alpha inside y */
    a[1] = 0.0f;
    SK_EXPECT(CK_E_ARG, ck_snake_f32(x, 6, 2, a, 2, y, 6, 2, 0, 3, 2));
    a[1] = NAN;
    SK_EXPECT(CK_E_NONFINITE, ck_snake_f32(x, 6, 2, a, 2, y, 6, 2, 0, 3, 2));
    a[1] = 0.5f;
    x[4] = INFINITY;
    SK_EXPECT(CK_E_NONFINITE, ck_snake_f32(x, 6, 2, a, 2, y, 6, 2, 0, 3, 2));
    /* the Inf is in row 2: rows 0..1 alone are fine and row 2 of y keeps the canary */
    ck_test_fill_canary(y, 8);
    CU_ASSERT_EQUAL(ck_snake_f32(x, 6, 2, a, 2, y, 6, 2, 0, 2, 2), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(y + 4, 4));
#undef SK_EXPECT
}

CK_TEST_MAIN("snake", {"matches torch and the double reference", test_matches_torch_and_reference},
             {"any split, in place, wide stride: same bits", test_split_in_place_stride},
             {"37 channels: every element equals the scalar ck_snake1_f32", test_wide_rows_equal_scalar},
             {"rejections leave y untouched", test_rejections})
