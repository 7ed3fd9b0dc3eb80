/* test_conv_transpose1d_depthwise_k3s2.c - Kokoro's depthwise transposed-conv pool vs torch nn.ConvTranspose1d, a
 * double reference from the scatter definition, batch, split and stride invariance, rejections. */
#include "ck_status.h"
#include "conv_transpose1d_depthwise_k3s2.h"
#include "kernel_fixture.h"

enum { C = 5, S = 3, R = 12, WIDE = C + 2 };

typedef struct {
    ck_st_file *file;
    size_t offsets[S + 1];
    float *x, *w, *b, *want;
} ct_fixture;

static int load(ct_fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->file = ck_kfix_open("conv_transpose1d_depthwise.safetensors");
    if (fx->file == NULL || ck_kfix_offsets(fx->file, fx->offsets, S + 1) != S || fx->offsets[S] != R) {
        return 0;
    }
    fx->x = ck_kfix_f32(fx->file, "x", NULL);
    fx->w = ck_kfix_f32(fx->file, "weight", NULL);
    fx->b = ck_kfix_f32(fx->file, "bias", NULL);
    fx->want = ck_kfix_f32(fx->file, "y", NULL);
    return fx->x && fx->w && fx->b && fx->want;
}

static void unload(ct_fixture *fx)
{
    free(fx->x);
    free(fx->w);
    free(fx->b);
    free(fx->want);
    ck_st_close(fx->file);
}

static int run(const ct_fixture *fx, float *y, size_t y_stride, size_t s0, size_t s1)
{
    return ck_conv_transpose1d_depthwise_k3s2_f32(fx->x, R * C, C, fx->w, 3 * C, fx->b, C, y, 2 * R * y_stride,
                                                  y_stride, fx->offsets, S, s0, s1, C);
}

/* ref_conv_transpose1d: torch's definition as a scatter, y[i * stride - padding + k] += w[k] x[i], kept
 * where 0 <= index < 2L (output_padding extends the length to 2L), in double. */
static void ref_convt(const ct_fixture *fx, double *y)
{
    for (size_t s = 0; s < S; s++) {
        size_t o = fx->offsets[s], n = fx->offsets[s + 1] - o;
        for (size_t j = 0; j < 2 * n * C; j++) {
            y[2 * o * C + j] = fx->b[j % C];
        }
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; k < 3; k++) {
                long at = 2 * (long)i - 1 + (long)k;
                for (size_t c = 0; at >= 0 && at < 2 * (long)n && c < C; c++) {
                    y[(2 * o + (size_t)at) * C + c] += (double)fx->w[3 * c + k] * fx->x[(o + i) * C + c];
                }
            }
        }
    }
}

/* Bound: |y| < 4 here; torch's float products and sums (up to three terms, ulp(4) = 4.8e-7) against our
 * one rounding: 1e-6 absolute. Against the double reference: half an ulp, 2.4e-7. */
static void test_matches_torch_and_reference(void)
{
    ct_fixture fx;
    float y[2 * R * C], reff[2 * R * C];
    double ref[2 * R * C];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run(&fx, y, C, 0, S), CK_OK);
    double abs_err, rel_err;
    ck_kfix_errors(y, fx.want, 2 * R * C, 1e-2, &abs_err, &rel_err);
    fprintf(stderr, "    vs torch: max abs %.3g, max rel %.3g (|want| floored at 1e-2)\n", abs_err, rel_err);
    CU_ASSERT_TRUE(ck_test_close("vs torch", y, fx.want, 2 * R * C, 1e-6));
    ref_convt(&fx, ref);
    for (size_t i = 0; i < 2 * R * C; i++) {
        reff[i] = (float)ref[i];
    }
    CU_ASSERT_TRUE(ck_test_close("vs double reference", y, reff, 2 * R * C, 2.4e-7));
    unload(&fx);
}

static void test_alone_split_and_stride(void)
{
    ct_fixture fx;
    float batch[2 * R * C], y[2 * R * WIDE];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run(&fx, batch, C, 0, S), CK_OK);
    for (size_t cut = 0; cut <= S; cut++) {
        ck_test_fill_canary(y, 2 * R * WIDE);
        CU_ASSERT_EQUAL(run(&fx, y, WIDE, cut, S), CK_OK);
        CU_ASSERT_EQUAL(run(&fx, y, WIDE, 0, cut), CK_OK);
        for (size_t r = 0; r < 2 * R; r++) {
            CU_ASSERT_EQUAL(memcmp(y + r * WIDE, batch + r * C, C * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(y + r * WIDE + C, WIDE - C));
        }
    }
    for (size_t s = 0; s < S; s++) {
        size_t o = fx.offsets[s], n = fx.offsets[s + 1] - o, one[2] = {0, n};
        float x[R * C];
        memcpy(x, fx.x + o * C, n * C * sizeof(float));
        CU_ASSERT_EQUAL(ck_conv_transpose1d_depthwise_k3s2_f32(x, n * C, C, fx.w, 3 * C, fx.b, C, y, 2 * n * C, C,
                                                               one, 1, 0, 1, C), CK_OK);
        CU_ASSERT_EQUAL(memcmp(y, batch + 2 * o * C, 2 * n * C * sizeof(float)), 0);
    }
    unload(&fx);
}

static void test_rejections(void)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 1, 1, 1, 1, 1}, b[2] = {0, 0}, y[12];
    size_t offsets[3] = {0, 1, 3}, bad[3] = {0, 4, 3};
#define CT_EXPECT(code, call) CK_KFIX_REJECTS(y, 12, code, call)
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 5, 2, w, 6, b, 2, y, 12, 2, offsets, 2, 0, 2, 2));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 2, y, 11, 2, offsets, 2, 0, 2, 2));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 5, b, 2, y, 12, 2, offsets, 2, 0, 2, 2));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 1, y, 12, 2, offsets, 2, 0, 2, 2));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 1, w, 6, b, 2, y, 12, 2, offsets, 2, 0, 2, 2));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 2, y, 12, 2, offsets, 2, 0, 2, 0));
    CT_EXPECT(CK_E_RANGE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 2, y, 12, 2, offsets, 2, 0, 3, 2));
    CT_EXPECT(CK_E_RANGE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 2, y, 12, 2, bad, 2, 0, 2, 2));
    CT_EXPECT(CK_E_ARG, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, NULL, 6, b, 2, y, 12, 2, offsets, 2, 0, 2, 2));
    CT_EXPECT(CK_E_ARG, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 2, y, 12, 2, NULL, 2, 0, 2, 2));
    CT_EXPECT(CK_E_ARG, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, y + 4, 6, b, 2, y, 12, 2, offsets, 2, 0, 2,
                                                               2)); /* weight inside y */
    CT_EXPECT(CK_E_ARG, ck_conv_transpose1d_depthwise_k3s2_f32(y + 2, 6, 2, w, 6, b, 2, y, 12, 2, offsets, 2, 0, 2,
                                                               2)); /* x inside y */
    w[4] = NAN;
    CT_EXPECT(CK_E_NONFINITE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 2, y, 12, 2, offsets, 2, 0, 2,
                                                                     2));
    w[4] = 1.0f;
    x[5] = -INFINITY;
    CT_EXPECT(CK_E_NONFINITE, ck_conv_transpose1d_depthwise_k3s2_f32(x, 6, 2, w, 6, b, 2, y, 12, 2, offsets, 2, 0, 2,
                                                                     2));
#undef CT_EXPECT
}

/* Hand case, one channel, L = 2, w = (1, 2, 3), b = 0.5, x = (10, 100):
 * y = (2*10, 3*10 + 1*100, 2*100, 3*100) + 0.5. */
static void test_hand_values(void)
{
    const float x[2] = {10.0f, 100.0f}, w[3] = {1.0f, 2.0f, 3.0f}, b[1] = {0.5f};
    const float want[4] = {20.5f, 130.5f, 200.5f, 300.5f};
    const size_t offsets[2] = {0, 2};
    float y[4];
    CU_ASSERT_EQUAL(ck_conv_transpose1d_depthwise_k3s2_f32(x, 2, 1, w, 3, b, 1, y, 4, 1, offsets, 1, 0, 1, 1), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
}

CK_TEST_MAIN("conv_transpose1d_depthwise_k3s2", {"hand values", test_hand_values},
             {"matches torch ConvTranspose1d and the reference", test_matches_torch_and_reference},
             {"alone, any split, wide stride: same bits", test_alone_split_and_stride},
             {"rejections leave y untouched", test_rejections})
