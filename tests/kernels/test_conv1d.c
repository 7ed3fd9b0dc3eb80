/* test_conv1d.c - the conv1d's pieces: the weight packing (exact), the per-sequence im2col (exact,
 * zeros at each sequence's ends, never a neighbour's row), im2col + linear against torch's formula in
 * double, the same bits whatever the tile, and rejections before any write. */
#include <math.h>
#include <string.h>

#include "ck_status.h"
#include "ck_test.h"
#include "conv1d.h"
#include "linear.h"

static void test_pack_is_exact(void)
{
    enum { O = 3, I = 2, K = 5 };
    float w[O * I * K], p[O * I * K];
    for (size_t i = 0; i < O * I * K; i++) {
        w[i] = (float)i;
    }
    CU_ASSERT_EQUAL_FATAL(ck_conv1d_pack_weight_f32(w, O * I * K, p, O * I * K, O, I, K), CK_OK);
    for (size_t o = 0; o < O; o++) {
        for (size_t c = 0; c < I; c++) {
            for (size_t j = 0; j < K; j++) {
                CU_ASSERT_EQUAL(p[o * K * I + j * I + c], w[(o * I + c) * K + j]);
            }
        }
    }
    CU_ASSERT_EQUAL(p[1], 5.0f); /* o 0, tap 0, channel 1: w[0, 1, 0] */
    CU_ASSERT_EQUAL(ck_conv1d_pack_weight_f32(w, O * I * K - 1, p, O * I * K, O, I, K), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_conv1d_pack_weight_f32(w, O * I * K, p, O * I * K - 1, O, I, K), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_conv1d_pack_weight_f32(w, O * I * K, w + 1, O * I * K, O, I, K), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_conv1d_pack_weight_f32(NULL, O * I * K, p, O * I * K, O, I, K), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_conv1d_pack_weight_f32(w, O * I * K, p, O * I * K, O, 0, K), CK_E_SIZE);
}

/* Sequences of 3, 0 and 2 rows, Cin 2, K 3 (pad 1): x[t, c] = 10 t + c + 1, so 0 means padding. */
static void test_im2col_pads_per_sequence(void)
{
    const size_t offsets[4] = {0, 3, 3, 5};
    float x[5 * 2], cols[5 * 6];
    for (size_t t = 0; t < 5; t++) {
        x[2 * t] = (float)(10 * t + 1);
        x[2 * t + 1] = (float)(10 * t + 2);
    }
    CU_ASSERT_EQUAL_FATAL(ck_conv1d_im2col_f32(x, 10, 2, offsets, 3, 0, 5, 2, 3, cols, 30), CK_OK);
    const float want[5][6] = {
        {0, 0, 1, 2, 11, 12},    /* row 0: first of sequence 0 */
        {1, 2, 11, 12, 21, 22},
        {11, 12, 21, 22, 0, 0},  /* row 2: last of sequence 0, never row 3 */
        {0, 0, 31, 32, 41, 42},  /* row 3: first of sequence 2, never row 2 */
        {31, 32, 41, 42, 0, 0},
    };
    CU_ASSERT_EQUAL(memcmp(cols, want, sizeof want), 0);
    /* a tile of rows 2..3 gives the same rows */
    float tile[2 * 6];
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 10, 2, offsets, 3, 2, 2, 2, 3, tile, 12), CK_OK);
    CU_ASSERT_EQUAL(memcmp(tile, want[2], sizeof tile), 0);
}

/* im2col + ck_linear_forward_f32 against the double formula of torch.nn.Conv1d (padding 2), and
 * the same bits for a sequence alone as inside a batch and for any tiling of the rows. */
static void test_conv_matches_formula_and_tiles(void)
{
    enum { I = 16, O = 8, K = 5, T = 23 };
    const size_t offsets[4] = {0, 7, 8, 23}, alone_offsets[2] = {0, 15};
    static float x[T * I], w[O * I * K], p[O * I * K], b[O], cols[T * K * I], y[T * O],
        y2[T * O], alone[15 * O];
    for (size_t i = 0; i < T * I; i++) {
        x[i] = sinf((float)i * 0.37f);
    }
    for (size_t i = 0; i < O * I * K; i++) {
        w[i] = cosf((float)i * 0.11f) * 0.2f;
    }
    for (size_t o = 0; o < O; o++) {
        b[o] = (float)o * 0.01f - 0.03f;
    }
    ck_onednn *ctx = NULL;
    ck_linear *lin = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 1), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_conv1d_pack_weight_f32(w, O * I * K, p, O * I * K, O, I, K), CK_OK);
    const ck_linear_desc d = {.weight = p, .weight_count = O * I * K, .bias = b, .bias_count = O,
                              .in_features = K * I, .out_features = O};
    CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin, ctx, &d), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_conv1d_im2col_f32(x, T * I, I, offsets, 3, 0, T, I, K, cols, T * K * I),
                          CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_linear_forward_f32(lin, 0, cols, T * K * I, K * I, y, T * O, O, T), CK_OK);
    double worst = 0.0;
    for (size_t s = 0; s < 3; s++) {
        for (size_t t = offsets[s]; t < offsets[s + 1]; t++) {
            for (size_t o = 0; o < O; o++) {
                double acc = b[o];
                for (size_t j = 0; j < K; j++) {
                    long src = (long)t + (long)j - 2;
                    if (src < (long)offsets[s] || src >= (long)offsets[s + 1]) {
                        continue;
                    }
                    for (size_t c = 0; c < I; c++) {
                        acc += (double)w[(o * I + c) * K + j] * (double)x[(size_t)src * I + c];
                    }
                }
                worst = fmax(worst, fabs(acc - (double)y[t * O + o]));
            }
        }
    }
    CU_ASSERT(worst < 1e-5); /* f32 sums of 80 products of |.| < 0.2: measured 2.1e-6 */
    CU_ASSERT(worst > 0.0);  /* oneDNN sums in f32, not in double */
    /* rows 3..17 in tiles of 5, and sequence 2 alone */
    for (size_t row = 3; row < 18; row += 5) {
        CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, T * I, I, offsets, 3, row, 5, I, K, cols, 5 * K * I), CK_OK);
        CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, cols, 5 * K * I, K * I, y2 + row * O, 5 * O, O, 5),
                        CK_OK);
    }
    CU_ASSERT_EQUAL(memcmp(y2 + 3 * O, y + 3 * O, 15 * O * sizeof(float)), 0);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x + 8 * I, 15 * I, I, alone_offsets, 1, 0, 15, I, K, cols,
                                         15 * K * I), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, cols, 15 * K * I, K * I, alone, 15 * O, O, 15), CK_OK);
    CU_ASSERT_EQUAL(memcmp(alone, y + 8 * O, sizeof alone), 0);
    ck_linear_free(lin);
    ck_onednn_free(ctx);
}

static void test_im2col_rejections_leave_cols_untouched(void)
{
    const size_t offsets[3] = {0, 2, 4}, bad[3] = {0, 3, 2}, late[3] = {1, 2, 4};
    float x[4 * 2] = {1, 2, 3, 4, 5, 6, 7, 8}, cols[4 * 6];
    ck_test_fill_canary(cols, 24);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(NULL, 8, 2, offsets, 2, 0, 4, 2, 3, cols, 24), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, NULL, 2, 0, 4, 2, 3, cols, 24), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, offsets, 2, 0, 4, 2, 4, cols, 32), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, bad, 2, 0, 4, 2, 3, cols, 24), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, late, 2, 0, 4, 2, 3, cols, 24), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, offsets, 2, 3, 2, 2, 3, cols, 24), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 7, 2, offsets, 2, 0, 4, 2, 3, cols, 24), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 1, offsets, 2, 0, 4, 2, 3, cols, 24), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, offsets, 2, 0, 4, 2, 3, cols, 23), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, offsets, 2, 0, 4, 0, 3, cols, 24), CK_E_SIZE);
    x[6] = NAN; /* row 3: read by rows 2 and 3 only */
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, offsets, 2, 2, 1, 2, 3, cols, 24), CK_E_NONFINITE);
    CU_ASSERT(ck_test_canary_intact(cols, 24));
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, 8, 2, offsets, 2, 0, 2, 2, 3, cols, 24), CK_OK);
    CU_ASSERT(ck_test_canary_intact(cols + 12, 12));
}

/* The general im2col: 'same' stride 1 equals ck_conv1d_im2col_f32; a dilation reads x[o + j d - pad];
 * noise_convs.0's K 12, stride 6, pad 3 over two sequences of 7 and 13 rows gives (L + 6 - 12) / 6 + 1
 * rows each, never a neighbour's row. */
static void test_im2col_general(void)
{
    enum { CIN = 2, N = 20 };
    float x[N * CIN], a[N * 3 * CIN], b[N * 3 * CIN], cols[N * 12 * CIN];
    for (size_t i = 0; i < N * CIN; i++) {
        x[i] = (float)i + 1.0f;
    }
    size_t off[3] = {0, 7, N};
    CU_ASSERT_EQUAL(ck_conv1d_im2col_f32(x, N * CIN, CIN, off, 2, 0, N, CIN, 3, a, N * 3 * CIN), CK_OK);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_general_f32(x, N * CIN, CIN, off, off, 2, 0, N, CIN, 3, 1, 1, 1, b,
                                                 N * 3 * CIN), CK_OK);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
    /* dilation 3, K 3, pad 3: row o reads o - 3, o, o + 3 of its own sequence */
    CU_ASSERT_EQUAL(ck_conv1d_im2col_general_f32(x, N * CIN, CIN, off, off, 2, 0, N, CIN, 3, 3, 1, 3, b,
                                                 N * 3 * CIN), CK_OK);
    CU_ASSERT_EQUAL(b[(8 * 3 + 0) * CIN], 0.0f);                  /* row 8 = sequence 1's 1: o - 3 < 0 */
    CU_ASSERT_EQUAL(b[(8 * 3 + 1) * CIN], x[8 * CIN]);
    CU_ASSERT_EQUAL(b[(8 * 3 + 2) * CIN], x[11 * CIN]);
    CU_ASSERT_EQUAL(b[(5 * 3 + 2) * CIN], 0.0f);                  /* row 5 + 3 is sequence 1's */
    /* stride 6, K 12, pad 3: 7 rows -> 1, 13 rows -> 2 (torch's L_out) */
    size_t out[3] = {0, 1, 3};
    CU_ASSERT_EQUAL(ck_conv1d_im2col_general_f32(x, N * CIN, CIN, off, out, 2, 0, 3, CIN, 12, 1, 6, 3, cols,
                                                 N * 12 * CIN), CK_OK);
    CU_ASSERT_EQUAL(cols[0], 0.0f);                               /* i = -3 */
    CU_ASSERT_EQUAL(cols[3 * CIN], x[0]);                         /* j 3: i = 0 */
    CU_ASSERT_EQUAL(cols[11 * CIN], 0.0f);                        /* i = 8 >= 7: padding, not row 8 */
    CU_ASSERT_EQUAL(cols[(12 + 3) * CIN], x[7 * CIN]);            /* sequence 1, o 0, j 3 */
    CU_ASSERT_EQUAL(cols[(24 + 9) * CIN], x[(7 + 12) * CIN]);     /* o 1, j 9: i = 6 + 9 - 3 = 12 */
    CU_ASSERT_EQUAL(cols[(24 + 10) * CIN], 0.0f);                 /* i = 13: past its end */
    CU_ASSERT_EQUAL(ck_conv1d_im2col_general_f32(x, N * CIN, CIN, off, out, 2, 0, 4, CIN, 12, 1, 6, 3, cols,
                                                 N * 12 * CIN), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_conv1d_im2col_general_f32(x, N * CIN, CIN, off, out, 2, 0, 3, CIN, 12, 1, 0, 3, cols,
                                                 N * 12 * CIN), CK_E_SIZE);
    x[0] = NAN;
    CU_ASSERT_EQUAL(ck_conv1d_im2col_general_f32(x, N * CIN, CIN, off, out, 2, 0, 1, CIN, 12, 1, 6, 3, cols,
                                                 N * 12 * CIN), CK_E_NONFINITE);
}

CK_TEST_MAIN("conv1d",
             {"general im2col: dilation, stride, padding per sequence", test_im2col_general},
             {"pack is exact", test_pack_is_exact},
             {"im2col pads per sequence", test_im2col_pads_per_sequence},
             {"conv matches the formula, any tiling", test_conv_matches_formula_and_tiles},
             {"im2col rejections leave cols untouched", test_im2col_rejections_leave_cols_untouched})
