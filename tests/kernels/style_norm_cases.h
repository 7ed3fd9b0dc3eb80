/* style_norm_cases.h - the cases test_adain_instance_norm.c and test_ada_layer_norm.c share: the two kernels have one
 * signature, so each file passes its kernel, fixture tensor, double reference and tolerance. Tests only. */
#ifndef CK_STYLE_NORM_CASES_H
#define CK_STYLE_NORM_CASES_H

#include "ck_status.h"
#include "kernel_fixture.h"

/* The kernel under test and its double reference, passed by the including file. */
typedef int (*style_norm_fn)(const float *, size_t, size_t, const float *, size_t, const float *, size_t, float *,
                             size_t, size_t, const size_t *, size_t, size_t, size_t, size_t, float);
typedef void (*style_ref_fn)(const float *x, const float *gamma, const float *beta, double *y, const size_t *offsets,
                             size_t n_seq, size_t channels, double eps);

enum { SN_C = 20, SN_S = 3, SN_ROWS = 22, SN_N = SN_ROWS * SN_C, SN_WIDE = SN_C + 3 };

typedef struct {
    ck_st_file *file;
    size_t offsets[SN_S + 1];
    float *x, *gamma, *beta, *want;
} sn_fixture;

static int sn_load(sn_fixture *fx, const char *want)
{
    memset(fx, 0, sizeof *fx);
    fx->file = ck_kfix_open("adain.safetensors");
    if (fx->file == NULL || ck_kfix_offsets(fx->file, fx->offsets, SN_S + 1) != SN_S ||
        fx->offsets[SN_S] != SN_ROWS) {
        return 0;
    }
    fx->x = ck_kfix_f32(fx->file, "x", NULL);
    fx->gamma = ck_kfix_f32(fx->file, "gamma", NULL);
    fx->beta = ck_kfix_f32(fx->file, "beta", NULL);
    fx->want = ck_kfix_f32(fx->file, want, NULL);
    return fx->x && fx->gamma && fx->beta && fx->want;
}

static void sn_unload(sn_fixture *fx)
{
    free(fx->x);
    free(fx->gamma);
    free(fx->beta);
    free(fx->want);
    ck_st_close(fx->file);
}

static int sn_run(style_norm_fn fn, const sn_fixture *fx, float *y, size_t s0, size_t s1)
{
    return fn(fx->x, SN_N, SN_C, fx->gamma, SN_S * SN_C, fx->beta, SN_S * SN_C, y, SN_N, SN_C, fx->offsets, SN_S, s0,
              s1, SN_C, 1e-5f);
}

/* Against the torch fixture (tolerance `tol` absolute, reason beside it in the including file). */
static void sn_case_torch(style_norm_fn fn, const char *want, double tol)
{
    sn_fixture fx;
    float y[SN_N];
    CU_ASSERT_FATAL(sn_load(&fx, want));
    CU_ASSERT_EQUAL(sn_run(fn, &fx, y, 0, SN_S), CK_OK);
    double abs_err, rel_err;
    ck_kfix_errors(y, fx.want, SN_N, 1e-2, &abs_err, &rel_err);
    fprintf(stderr, "    vs torch: max abs %.3g, max rel %.3g (|want| floored at 1e-2)\n", abs_err, rel_err);
    CU_ASSERT_TRUE(ck_test_close(want, y, fx.want, SN_N, tol));
    sn_unload(&fx);
}

/* Against the including file's double reference, within tol. */
static void sn_case_reference(style_norm_fn fn, style_ref_fn ref, const char *want, double tol)
{
    sn_fixture fx;
    float y[SN_N], reff[SN_N];
    double refd[SN_N];
    CU_ASSERT_FATAL(sn_load(&fx, want));
    CU_ASSERT_EQUAL(sn_run(fn, &fx, y, 0, SN_S), CK_OK);
    ref(fx.x, fx.gamma, fx.beta, refd, fx.offsets, SN_S, SN_C, 1e-5);
    for (size_t i = 0; i < SN_N; i++) {
        reff[i] = (float)refd[i];
    }
    CU_ASSERT_TRUE(ck_test_close("vs double reference", y, reff, SN_N, tol));
    sn_unload(&fx);
}

/* Alone (own buffers, offsets {0, n}), split at every cut, in place, and into a wider stride whose pad
 * columns keep the canary: all the same bits as one batched call. */
static void sn_case_invariance(style_norm_fn fn, const char *want)
{
    sn_fixture fx;
    float batch[SN_N], y[SN_N], wide[SN_ROWS * SN_WIDE];
    CU_ASSERT_FATAL(sn_load(&fx, want));
    CU_ASSERT_EQUAL(sn_run(fn, &fx, batch, 0, SN_S), CK_OK);
    for (size_t s = 0; s < SN_S; s++) {
        size_t o = fx.offsets[s], n = fx.offsets[s + 1] - o, one[2] = {0, n};
        float x[SN_N];
        memcpy(x, fx.x + o * SN_C, n * SN_C * sizeof(float));
        CU_ASSERT_EQUAL(fn(x, n * SN_C, SN_C, fx.gamma + s * SN_C, SN_C, fx.beta + s * SN_C, SN_C, y, n * SN_C, SN_C,
                           one, 1, 0, 1, SN_C, 1e-5f), CK_OK);
        CU_ASSERT_EQUAL(memcmp(y, batch + o * SN_C, n * SN_C * sizeof(float)), 0);
    }
    for (size_t cut = 0; cut <= SN_S; cut++) {
        ck_test_fill_canary(y, SN_N);
        CU_ASSERT_EQUAL(sn_run(fn, &fx, y, cut, SN_S), CK_OK);
        CU_ASSERT_EQUAL(sn_run(fn, &fx, y, 0, cut), CK_OK);
        CU_ASSERT_EQUAL(memcmp(y, batch, sizeof y), 0);
    }
    memcpy(y, fx.x, sizeof y);
    CU_ASSERT_EQUAL(fn(y, SN_N, SN_C, fx.gamma, SN_S * SN_C, fx.beta, SN_S * SN_C, y, SN_N, SN_C, fx.offsets, SN_S,
                       0, SN_S, SN_C, 1e-5f), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, batch, sizeof y), 0);
    ck_test_fill_canary(wide, SN_ROWS * SN_WIDE);
    CU_ASSERT_EQUAL(fn(fx.x, SN_N, SN_C, fx.gamma, SN_S * SN_C, fx.beta, SN_S * SN_C, wide, SN_ROWS * SN_WIDE,
                       SN_WIDE, fx.offsets, SN_S, 0, SN_S, SN_C, 1e-5f), CK_OK);
    for (size_t r = 0; r < SN_ROWS; r++) {
        CU_ASSERT_EQUAL(memcmp(wide + r * SN_WIDE, batch + r * SN_C, SN_C * sizeof(float)), 0);
        CU_ASSERT_TRUE(ck_test_canary_intact(wide + r * SN_WIDE + SN_C, SN_WIDE - SN_C));
    }
    sn_unload(&fx);
}

/* One bad thing per call; y (canary) must come back untouched with the exact code. */
static void sn_case_rejections(style_norm_fn fn)
{
    static const size_t offsets[3] = {0, 2, 5}, bad_offsets[3] = {0, 6, 5};
    float x[5 * 4], g[2 * 4] = {0}, b[2 * 4] = {0}, y[5 * 4], buf[5 * 4 + 8];
    for (int i = 0; i < 20; i++) {
        x[i] = (float)(i % 7);
    }
#define SN_EXPECT(code, call) CK_KFIX_REJECTS(y, 20, code, call)
    SN_EXPECT(CK_E_SIZE, fn(x, 19, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, 1e-5f));
    SN_EXPECT(CK_E_SIZE, fn(x, 20, 4, g, 8, b, 8, y, 19, 4, offsets, 2, 0, 2, 4, 1e-5f));
    SN_EXPECT(CK_E_SIZE, fn(x, 20, 3, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, 1e-5f));
    SN_EXPECT(CK_E_SIZE, fn(x, 20, 4, g, 7, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, 1e-5f));
    SN_EXPECT(CK_E_SIZE, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 0, 1e-5f));
    SN_EXPECT(CK_E_ARG, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, 0.0f));
    SN_EXPECT(CK_E_ARG, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, NAN));
    SN_EXPECT(CK_E_ARG, fn(x, 20, 4, NULL, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, 1e-5f));
    SN_EXPECT(CK_E_ARG, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, NULL, 2, 0, 2, 4, 1e-5f));
    SN_EXPECT(CK_E_RANGE, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 3, 4, 1e-5f));
    SN_EXPECT(CK_E_RANGE, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 2, 1, 4, 1e-5f));
    SN_EXPECT(CK_E_RANGE, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, bad_offsets, 2, 0, 2, 4, 1e-5f));
    g[5] = INFINITY;
    SN_EXPECT(CK_E_NONFINITE, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, 1e-5f));
    g[5] = 0.0f;
    x[17] = NAN;
    SN_EXPECT(CK_E_NONFINITE, fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 2, 4, 1e-5f));
    /* the NaN is in sequence 1: sequence 0 alone is fine and writes only its rows */
    ck_test_fill_canary(y, 20);
    CU_ASSERT_EQUAL(fn(x, 20, 4, g, 8, b, 8, y, 20, 4, offsets, 2, 0, 1, 4, 1e-5f), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(y + 8, 12));
    x[17] = 1.0f;
    /* y overlapping gamma: gamma is the last row of y and beyond */
    ck_test_fill_canary(buf, 28);
    memset(buf + 20, 0, 8 * sizeof(float));
    CU_ASSERT_EQUAL(fn(x, 20, 4, buf + 16, 8, b, 8, buf, 20, 4, offsets, 2, 0, 2, 4, 1e-5f), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(buf, 20));
    /* y partially overlapping x (one row down) */
    ck_test_fill_canary(buf, 28);
    memcpy(buf, x, sizeof x);
    CU_ASSERT_EQUAL(fn(buf, 20, 4, g, 8, b, 8, buf + 4, 20, 4, offsets, 2, 0, 2, 4, 1e-5f), CK_E_ARG);
    CU_ASSERT_EQUAL(memcmp(buf, x, sizeof x), 0);
#undef SN_EXPECT
}

#endif
