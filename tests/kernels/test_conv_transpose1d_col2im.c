/* test_conv_transpose1d_col2im.c - the generator's strided ConvTranspose1d as a GEMM (naive here, and ck_linear) + col2im,
 * against torch for Kokoro's two shapes (K 20 s 10 p 5, K 12 s 6 p 3); splits, stride, rejections. */
#include <math.h>
#include <string.h>

#include "ck_status.h"
#include "conv_transpose1d_col2im.h"
#include "kernel_fixture.h"
#include "linear.h"

enum { CIN = 6, COUT = 5, S = 3, R = 8 }; /* lengths 1, 3, 4 */

/* z = x Wt^T with Wt[j C + c, ci] = W[ci, c, j]: what ck_linear gives the kernel, here naively in double,
 * rounded to float as a float GEMM's output would be. */
static void naive_gemm(const float *x, const float *w, size_t k, float *z)
{
    for (size_t l = 0; l < R; l++) {
        for (size_t j = 0; j < k; j++) {
            for (size_t c = 0; c < COUT; c++) {
                double acc = 0.0;
                for (size_t ci = 0; ci < CIN; ci++) {
                    acc += (double)x[l * CIN + ci] * (double)w[(ci * COUT + c) * k + j];
                }
                z[l * k * COUT + j * COUT + c] = (float)acc;
            }
        }
    }
}

/* Bound: z is rounded once (half an ulp of each partial product sum) and the col2im adds at most 2 terms and
 * the bias in double, one rounding: a few ulp of the largest term. Measured: 2.38e-7 (k20 and k12)
 * against torch's float64 result. Asserted: 1e-6 absolute (values up to ~6). */
static void check_shape(size_t k, size_t stride)
{
    ck_st_file *f = ck_kfix_open("conv_transpose1d_col2im.safetensors");
    CU_ASSERT_FATAL(f != NULL);
    size_t offsets[S + 1];
    CU_ASSERT_FATAL(ck_kfix_offsets(f, offsets, S + 1) == S && offsets[S] == R);
    char name[32];
    snprintf(name, sizeof name, "k%zu.x", k);
    float *x = ck_kfix_f32(f, name, NULL);
    snprintf(name, sizeof name, "k%zu.weight", k);
    float *w = ck_kfix_f32(f, name, NULL);
    snprintf(name, sizeof name, "k%zu.bias", k);
    float *b = ck_kfix_f32(f, name, NULL);
    snprintf(name, sizeof name, "k%zu.y", k);
    size_t ny = 0;
    float *want = ck_kfix_f32(f, name, &ny);
    CU_ASSERT_FATAL(x && w && b && want && ny == stride * R * COUT);
    size_t zn = R * k * COUT, yn = stride * R * COUT, wide = COUT + 3;
    float *z = malloc(zn * sizeof(float)), *y = malloc(yn * sizeof(float)), *part = malloc(stride * R * wide * 4);
    CU_ASSERT_FATAL(z && y && part);
    naive_gemm(x, w, k, z);
    size_t pad = (k - stride) / 2;
    /* the engine's form: Wt [K C, Cin] (Wt[j C + c, ci] = W[ci, c, j]) through ck_linear (oneDNN), no bias; the
     * col2im of its z must match torch as well (its float sums are oneDNN's, not the naive ones) */
    float *wt = malloc(k * COUT * CIN * sizeof(float)), *zl = malloc(zn * sizeof(float)), *yl = malloc(yn * 4);
    CU_ASSERT_FATAL(wt && zl && yl);
    for (size_t ci = 0; ci < CIN; ci++) {
        for (size_t c = 0; c < COUT; c++) {
            for (size_t j = 0; j < k; j++) {
                wt[(j * COUT + c) * CIN + ci] = w[(ci * COUT + c) * k + j];
            }
        }
    }
    ck_onednn *ctx = NULL;
    ck_linear *lin = NULL;
    ck_linear_desc d = {.weight = wt, .weight_count = k * COUT * CIN, .in_features = CIN, .out_features = k * COUT};
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 1), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin, ctx, &d), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, x, R * CIN, CIN, zl, zn, k * COUT, R), CK_OK);
    CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_f32(zl, zn, k * COUT, b, COUT, yl, yn, COUT, offsets, S, 0, S, COUT, k,
                                                   stride, pad), CK_OK);
    double lin_err, lin_rel;
    ck_kfix_errors(yl, want, yn, 1.0, &lin_err, &lin_rel);
    fprintf(stderr, "    K %zu stride %zu with ck_linear's GEMM: max abs %.3g vs torch\n", k, stride, lin_err);
    CU_ASSERT_TRUE(lin_err <= 1e-6);
    ck_linear_free(lin);
    ck_onednn_free(ctx);
    free(wt);
    free(zl);
    free(yl);
    CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_f32(z, zn, k * COUT, b, COUT, y, yn, COUT, offsets, S, 0, S, COUT, k,
                                                   stride, pad), CK_OK);
    double abs_err, rel_err;
    ck_kfix_errors(y, want, yn, 1.0, &abs_err, &rel_err);
    fprintf(stderr, "    K %zu stride %zu: %zu outputs, max abs %.3g vs torch (float64)\n", k, stride, yn, abs_err);
    CU_ASSERT_TRUE(abs_err <= 1e-6);
    /* each split of the sequences, into a wider stride: the same bits, columns past C untouched */
    for (size_t cut = 0; cut <= S; cut++) {
        ck_test_fill_canary(part, stride * R * wide);
        CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_f32(z, zn, k * COUT, b, COUT, part, stride * R * wide, wide, offsets,
                                                       S, cut, S, COUT, k, stride, pad), CK_OK);
        CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_f32(z, zn, k * COUT, b, COUT, part, stride * R * wide, wide, offsets,
                                                       S, 0, cut, COUT, k, stride, pad), CK_OK);
        for (size_t r = 0; r < stride * R; r++) {
            CU_ASSERT_EQUAL(memcmp(part + r * wide, y + r * COUT, COUT * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(part + r * wide + COUT, wide - COUT));
        }
    }
    /* bias NULL: the same sums without it (y_nobias + bias within rounding of y) */
    CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_f32(z, zn, k * COUT, NULL, 0, part, yn, COUT, offsets, S, 0, S, COUT, k,
                                                   stride, pad), CK_OK);
    size_t off = 0;
    for (size_t i = 0; i < yn; i++) {
        off += fabs((double)part[i] + (double)b[i % COUT] - (double)y[i]) > 1e-6;
    }
    CU_ASSERT_EQUAL(off, 0);
    free(x);
    free(w);
    free(b);
    free(want);
    free(z);
    free(y);
    free(part);
    ck_st_close(f);
}

static void test_ups0_shape(void)
{
    check_shape(20, 10);
}

static void test_ups1_shape(void)
{
    check_shape(12, 6);
}

static void test_rejections(void)
{
    enum { K = 4, ST = 2, P = 1, C = 2, RR = 3 };
    size_t off[3] = {0, 1, 3}, bad[3] = {0, 2, 1};
    float z[RR * K * C] = {0}, b[C] = {0}, y[RR * ST * C];
#define CT_EXPECT(code, call) CK_KFIX_REJECTS(y, RR * ST * C, code, call)
    CT_EXPECT(CK_E_RANGE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 2, 1, C, K, ST, P));
    CT_EXPECT(CK_E_RANGE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, bad, 2, 0, 2, C, K, ST, P));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 2, C, K, ST, 0));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 2, C, 1, ST, 0));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 2, 0, K, ST, P));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_col2im_f32(z, RR * K * C - 1, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 2, C, K, ST, P));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C - 1, b, C, y, RR * ST * C, C, off, 2, 0, 2, C, K, ST, P));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C - 1, C, off, 2, 0, 2, C, K, ST, P));
    CT_EXPECT(CK_E_SIZE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, 1, y, RR * ST * C, C, off, 2, 0, 2, C, K, ST, P));
    CT_EXPECT(CK_E_ARG, ck_conv_transpose1d_col2im_f32(NULL, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 2, C, K, ST, P));
    CT_EXPECT(CK_E_ARG, ck_conv_transpose1d_col2im_f32(y, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 1, C, K, ST, P));
    b[1] = NAN;
    CT_EXPECT(CK_E_NONFINITE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 2, C, K, ST, P));
    b[1] = 0.0f;
    z[RR * K * C - 1] = INFINITY; /* in sequence 1: sequence 0 alone is fine */
    CT_EXPECT(CK_E_NONFINITE, ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 2, C, K, ST, P));
    ck_test_fill_canary(y, RR * ST * C);
    CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_f32(z, RR * K * C, K * C, b, C, y, RR * ST * C, C, off, 2, 0, 1, C, K, ST, P), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(y + ST * C, (RR - 1) * ST * C));
#undef CT_EXPECT
}

/* The engine's step: Wt packed by ck_conv_transpose1d_pack_weight_f32 equals the layout above, and the
 * col2im of a sequence cut into output tiles (each from only the z rows it reads) gives the whole
 * kernel's bits; a tile missing a row it reads is refused. */
static void test_pack_and_tiles(void)
{
    enum { K = 12, ST = 6, P = 3, L = 7, C2 = 3, CI = 4 };
    float w[CI * C2 * K], wt[K * C2 * CI], z[L * K * C2], b[C2], whole[ST * L * C2], tiled[ST * L * C2];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        w[i] = (float)((int)(i * 37 % 23) - 11) / 8.0f;
    }
    CU_ASSERT_EQUAL(ck_conv_transpose1d_pack_weight_f32(w, CI * C2 * K, wt, K * C2 * CI, CI, C2, K), CK_OK);
    for (size_t ci = 0; ci < CI; ci++) {
        for (size_t c = 0; c < C2; c++) {
            for (size_t j = 0; j < K; j++) {
                CU_ASSERT_EQUAL(wt[(j * C2 + c) * CI + ci], w[(ci * C2 + c) * K + j]);
            }
        }
    }
    for (size_t i = 0; i < sizeof z / sizeof z[0]; i++) {
        z[i] = (float)sin((double)i * 0.37) * 3.0f;
    }
    for (size_t c = 0; c < C2; c++) {
        b[c] = 0.25f * (float)c - 0.1f;
    }
    size_t off[2] = {0, L};
    CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_f32(z, L * K * C2, K * C2, b, C2, whole, ST * L * C2, C2, off, 1,
                                                   0, 1, C2, K, ST, P), CK_OK);
    for (size_t o0 = 0; o0 < ST * L; o0 += 5) { /* tiles of 5 outputs, from their rows only */
        size_t o1 = o0 + 5 < ST * L ? o0 + 5 : ST * L, q0 = o0 + P, q1 = o1 - 1 + P;
        size_t l0 = q0 + 1 > K ? (q0 + 1 - K + ST - 1) / ST : 0, l1 = q1 / ST < L - 1 ? q1 / ST : L - 1;
        CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_tile_f32(z + l0 * K * C2, (l1 + 1 - l0) * K * C2, K * C2, l0, L,
                                                            b, C2, tiled, ST * L * C2, C2, o0, o1, C2, K, ST, P),
                        CK_OK);
        if (l0 > 0) { /* claiming the tile starts one row later: a row it reads is missing */
            CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_tile_f32(z + (l0 + 1) * K * C2, (l1 - l0) * K * C2, K * C2,
                                                                l0 + 1, L, b, C2, tiled, ST * L * C2, C2, o0, o1,
                                                                C2, K, ST, P),
                            CK_E_SIZE);
        }
    }
    CU_ASSERT_EQUAL(memcmp(whole, tiled, sizeof whole), 0);
    CU_ASSERT_EQUAL(ck_conv_transpose1d_col2im_tile_f32(z, L * K * C2, K * C2, 0, L, b, C2, tiled, ST * L * C2, C2,
                                                        0, ST * L + 1, C2, K, ST, P), CK_E_RANGE);
}

CK_TEST_MAIN("conv_transpose1d_col2im", {"pack and output tiles give the whole kernel's bits", test_pack_and_tiles}, {"ups.0 shape (K 20, s 10, p 5) vs torch", test_ups0_shape},
             {"ups.1 shape (K 12, s 6, p 3) vs torch", test_ups1_shape},
             {"rejections leave y untouched", test_rejections})
