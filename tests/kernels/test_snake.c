/* test_snake.c - Snake vs torch (x + (1 / alpha) * sin(alpha * x) ** 2), a double reference, splits, in place, rejections. */
#include "ck_status.h"
#include "kernel_fixture.h"
#include "snake.h"

enum { R = 11, C = 6, N = R * C, WIDE = C + 2 };

/* Bound, per element: torch rounds alpha x to float before sin, which moves sin^2(alpha x) / alpha by
 * |sin(2 alpha x)| * ulp(alpha x) / (2 alpha) <= ulp(x) (one ulp of x), plus its own float roundings of
 * the square, the division and the sum (ulp(y)); ours is one rounding. Allowed: 2 ulp of max(|x|, |y|, 1),
 * i.e. 2.4e-7 max(|x|, |y|, 1). Measured: 1.11e-7 of that scale (9.5e-7 absolute). */
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
        /* ref_snake: the formula in double, rounded once: must be the same float */
        double a = alpha[i % C], s = sin(a * x[i]);
        CU_ASSERT_EQUAL(y[i], (float)((double)x[i] + s * s / a));
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
             {"rejections leave y untouched", test_rejections})
