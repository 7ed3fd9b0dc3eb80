/* test_adain_snake.c - the fused AdaIN1d + Snake vs torch, bit-equal to ck_adain_instance_norm_f32 then ck_snake_f32;
 * splits, in place, rejections. */
#include "adain_instance_norm.h"
#include "adain_snake.h"
#include "ck_status.h"
#include "kernel_fixture.h"
#include "snake.h"

enum { S = 3, R = 22, C = 20, WIDE = 23 }; /* lengths 2, 7, 13; 20 channels: one full 16-block and a partial one */

/* Bound: torch's AdaIN loses up to ~2e-6 on the two-frame sequence (adain_instance_norm's test), and the
 * Snake's slope 1 + sin(2 alpha t) <= 2 carries it (times 2). Measured: 4.4e-6 max abs. Asserted: 8e-6 absolute. */
static void test_matches_torch_and_composition(void)
{
    ck_st_file *f = ck_kfix_open("adain_snake.safetensors");
    CU_ASSERT_FATAL(f != NULL);
    size_t offsets[S + 1];
    CU_ASSERT_FATAL(ck_kfix_offsets(f, offsets, S + 1) == S && offsets[S] == R);
    float *x = ck_kfix_f32(f, "x", NULL), *gamma = ck_kfix_f32(f, "gamma", NULL), *beta = ck_kfix_f32(f, "beta", NULL);
    float *alpha = ck_kfix_f32(f, "alpha", NULL), *want = ck_kfix_f32(f, "y", NULL);
    CU_ASSERT_FATAL(x && gamma && beta && alpha && want);
    static float y[R * C], two[R * C], part[R * WIDE], inplace[R * C];
    CU_ASSERT_EQUAL(ck_adain_snake_f32(x, R * C, C, gamma, S * C, beta, S * C, alpha, C, y, R * C, C, offsets, S, 0, S,
                                       C, 1e-5f), CK_OK);
    double abs_err, rel_err;
    ck_kfix_errors(y, want, R * C, 1.0, &abs_err, &rel_err);
    fprintf(stderr, "    max abs %.3g vs torch (InstanceNorm1d, affine, x + sin^2(a x) / a)\n", abs_err);
    CU_ASSERT_TRUE(abs_err <= 8e-6);
    /* the unfused pair gives the same bits */
    CU_ASSERT_EQUAL(ck_adain_instance_norm_f32(x, R * C, C, gamma, S * C, beta, S * C, two, R * C, C, offsets, S, 0, S,
                                               C, 1e-5f), CK_OK);
    CU_ASSERT_EQUAL(ck_snake_f32(two, R * C, C, alpha, C, two, R * C, C, 0, R, C), CK_OK);
    CU_ASSERT_EQUAL(memcmp(two, y, sizeof y), 0);
    for (size_t cut = 0; cut <= S; cut++) {
        ck_test_fill_canary(part, R * WIDE);
        CU_ASSERT_EQUAL(ck_adain_snake_f32(x, R * C, C, gamma, S * C, beta, S * C, alpha, C, part, R * WIDE, WIDE,
                                           offsets, S, cut, S, C, 1e-5f), CK_OK);
        CU_ASSERT_EQUAL(ck_adain_snake_f32(x, R * C, C, gamma, S * C, beta, S * C, alpha, C, part, R * WIDE, WIDE,
                                           offsets, S, 0, cut, C, 1e-5f), CK_OK);
        for (size_t r = 0; r < R; r++) {
            CU_ASSERT_EQUAL(memcmp(part + r * WIDE, y + r * C, C * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(part + r * WIDE + C, WIDE - C));
        }
    }
    memcpy(inplace, x, sizeof inplace);
    CU_ASSERT_EQUAL(ck_adain_snake_f32(inplace, R * C, C, gamma, S * C, beta, S * C, alpha, C, inplace, R * C, C,
                                       offsets, S, 0, S, C, 1e-5f), CK_OK);
    CU_ASSERT_EQUAL(memcmp(inplace, y, sizeof y), 0);
    free(x);
    free(gamma);
    free(beta);
    free(alpha);
    free(want);
    ck_st_close(f);
}

static void test_rejections(void)
{
    size_t off[3] = {0, 2, 3};
    float x[6] = {1, 2, 3, 4, 5, 6}, g[4] = {0}, b[4] = {0}, a[2] = {1.0f, 0.5f}, y[6];
#define AS_EXPECT(code, call) CK_KFIX_REJECTS(y, 6, code, call)
    AS_EXPECT(CK_E_ARG, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, NULL, 2, y, 6, 2, off, 2, 0, 2, 2, 1e-5f));
    AS_EXPECT(CK_E_SIZE, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, a, 1, y, 6, 2, off, 2, 0, 2, 2, 1e-5f));
    AS_EXPECT(CK_E_ARG, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, y + 4, 2, y, 6, 2, off, 2, 0, 2, 2, 1e-5f));
    AS_EXPECT(CK_E_ARG, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, a, 2, y, 6, 2, off, 2, 0, 2, 2, 0.0f));
    AS_EXPECT(CK_E_RANGE, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, a, 2, y, 6, 2, off, 2, 1, 3, 2, 1e-5f));
    AS_EXPECT(CK_E_SIZE, ck_adain_snake_f32(x, 5, 2, g, 4, b, 4, a, 2, y, 6, 2, off, 2, 0, 2, 2, 1e-5f));
    a[1] = 0.0f;
    AS_EXPECT(CK_E_ARG, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, a, 2, y, 6, 2, off, 2, 0, 2, 2, 1e-5f));
    a[1] = INFINITY;
    AS_EXPECT(CK_E_NONFINITE, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, a, 2, y, 6, 2, off, 2, 0, 2, 2, 1e-5f));
    a[1] = 0.5f;
    x[5] = NAN;
    AS_EXPECT(CK_E_NONFINITE, ck_adain_snake_f32(x, 6, 2, g, 4, b, 4, a, 2, y, 6, 2, off, 2, 0, 2, 2, 1e-5f));
#undef AS_EXPECT
}

CK_TEST_MAIN("adain_snake", {"matches torch; equals adain_instance_norm then snake; splits; in place",
                             test_matches_torch_and_composition},
             {"rejections leave y untouched", test_rejections})
