/* test_linear_int8.c - the int8 linear: quantizers on hand-computed rows, a pinned checksum both ISA
 * paths must give, the oneDNN int8 matmul against the double reference on Kokoro's shapes, a row's
 * bits independent of the rows beside it, the self-check, rejections. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ck_isa.h"
#include "ck_status.h"
#include "ck_test.h"
#include "linear.h"
#include "linear_int8.h"

/* Deterministic values in [-scale, scale) from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *v, size_t n, uint64_t seed, double scale)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)(scale * (2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0));
    }
}

static void test_weight_quantization_by_hand(void)
{
    const float w[6] = {0.5f, -1.0f, 0.25f, 0.0f, 0.0f, 0.0f};
    int8_t q[6];
    float scale[2];
    int32_t colsum[2];
    CU_ASSERT_EQUAL_FATAL(ck_quantize_weight_f32_i8(w, 2, 3, q, scale, colsum), CK_OK);
    /* 0.5 * 127 = 63.5 -> 64 (ties to even), 0.25 * 127 = 31.75 -> 32 */
    CU_ASSERT(q[0] == 64 && q[1] == -127 && q[2] == 32);
    CU_ASSERT_EQUAL(colsum[0], 64 - 127 + 32);
    CU_ASSERT_EQUAL(scale[0], 1.0f / 127.0f);
    CU_ASSERT(q[3] == 0 && q[4] == 0 && q[5] == 0 && scale[1] == 1.0f && colsum[1] == 0);
    const float bad[2] = {1.0f, NAN};
    CU_ASSERT_EQUAL(ck_quantize_weight_f32_i8(bad, 1, 2, q, scale, colsum), CK_E_NONFINITE);
    CU_ASSERT_EQUAL(ck_quantize_weight_f32_i8(w, 0, 3, q, scale, colsum), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_quantize_weight_f32_i8(NULL, 2, 3, q, scale, colsum), CK_E_ARG);
}

static void test_row_quantization_by_hand(void)
{
    /* row 0: lo -1, hi 3, 255 / 4 = 63.75, zero round(63.75) = 64; row 1 all zeros; row 2 NaN;
     * row 3 all positive: lo is 0 (the range holds 0), zero 0 */
    const float x[16] = {-1.0f, 0.0f, 0.5f, 3.0f, 0, 0, 0, 0, 1.0f, NAN, 2.0f, 0, 1.0f, 2.0f, 4.0f, 0.5f};
    uint8_t q[16];
    float scale[4];
    int32_t zero[4];
    ck_quantize_rows_f32_u8(x, 4, q, 4, 4, 4, scale, zero);
    CU_ASSERT_EQUAL(zero[0], 64);
    CU_ASSERT_EQUAL(scale[0], 4.0f / 255.0f);
    CU_ASSERT(q[0] == 0 && q[1] == 64 && q[2] == 96 && q[3] == 255); /* -63.75 -> -64; 31.875 -> 32 */
    CU_ASSERT(zero[1] == 0 && scale[1] == 1.0f && q[4] == 0 && q[7] == 0);
    CU_ASSERT(isnan(scale[2]));
    CU_ASSERT(zero[3] == 0 && q[12] == 64 && q[13] == 128 && q[14] == 255 && q[15] == 32);
    /* 63.75 -> 64, 127.5 -> 128 (ties to even), 31.875 -> 32 */
}

/* FNV-1a over bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ULL;
    }
    return h;
}

/* Quantize 37 rows of 2048 (an outlier in each; then one row of 45 values, 13 of them in the tail) and
 * dequantize them: the bytes hash to one pinned value, which the portable run of this suite
 * (kernels_portable.test_linear_int8, CK_MAX_CPU_ISA=portable) must give too. */
static void test_paths_give_pinned_bits(void)
{
    enum { T = 37, K = 2048, N = 45 };
    float *x = malloc(sizeof(float) * T * K), *ws = malloc(sizeof(float) * N), *bias = malloc(sizeof(float) * N);
    float *y = malloc(sizeof(float) * T * N), scale[T];
    uint8_t *q = malloc((size_t)T * K);
    int32_t *acc = malloc(sizeof(int32_t) * T * N), colsum[N], zero[T];
    fill(x, (size_t)T * K, 7, 3.0);
    for (int t = 0; t < T; t++) {
        x[t * K + (t * 31) % K] = 40.0f + (float)t; /* an outlier per row */
    }
    fill(ws, N, 11, 0.01);
    fill(bias, N, 13, 0.5);
    for (int i = 0; i < T * N; i++) {
        acc[i] = (int32_t)((i * 2654435761u) % 2000003u) - 1000001;
    }
    for (int n = 0; n < N; n++) {
        colsum[n] = n * 97 - 2000;
    }
    ck_quantize_rows_f32_u8(x, K, q, K, T, K, scale, zero);
    ck_quantize_rows_f32_u8(x, K, q, K, 1, 45, scale, zero); /* a row whose length has a tail */
    ck_dequantize_rows_i32_f32(acc, N, scale, zero, ws, colsum, bias, y, N, T, N);
    uint64_t h = fnv(1469598103934665603ULL, q, (size_t)T * K);
    h = fnv(h, scale, sizeof scale);
    h = fnv(h, zero, sizeof zero);
    h = fnv(h, y, sizeof(float) * T * N);
    printf("\n  isa %s: hash %016llx\n", ck_kernels_isa(), (unsigned long long)h);
    CU_ASSERT_EQUAL(h, 0xd08765f2853cfb53ULL);
    free(x);
    free(ws);
    free(bias);
    free(y);
    free(q);
    free(acc);
}

/* y of an int8 linear against the double reference, per row: cosine and relative RMSE. */
static void check_shape(size_t rows, size_t in, size_t out, ck_linear_activation act)
{
    float *x = malloc(sizeof(float) * rows * in), *w = malloc(sizeof(float) * in * out);
    float *b = malloc(sizeof(float) * out), *y = malloc(sizeof(float) * rows * out);
    float *ref = malloc(sizeof(float) * rows * out), *one = malloc(sizeof(float) * out);
    fill(x, rows * in, rows + in, 2.0);
    fill(w, in * out, in * 7 + out, 0.05);
    fill(b, out, out, 0.05);
    ck_onednn *ctx = NULL;
    ck_linear *lin = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 1), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_linear_init(&lin, ctx, &(ck_linear_desc){
            .weight = w, .weight_count = in * out, .bias = b, .bias_count = out, .in_features = in,
            .out_features = out, .activation = act, .compute = CK_DTYPE_I8}), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_compute_dtype(lin), CK_DTYPE_I8);
    CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, x, rows * in, in, y, rows * out, out, rows), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_ref_f32(x, rows * in, in, w, in * out, b, out, ref, rows * out, out, rows,
                                      in, out), CK_OK);
    double worst_cos = 1.0, worst_rel = 0.0;
    for (size_t t = 0; t < rows; t++) {
        double dot = 0, yy = 0, rr = 0, dd = 0;
        for (size_t n = 0; n < out; n++) {
            double r = ref[t * out + n];
            if (act == CK_LINEAR_GELU_TANH) {
                r = 0.5 * r * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (r + 0.044715 * r * r * r)));
            }
            double v = y[t * out + n];
            dot += v * r;
            yy += v * v;
            rr += r * r;
            dd += (v - r) * (v - r);
        }
        double cs = dot / sqrt(yy * rr), rel = sqrt(dd / rr);
        worst_cos = cs < worst_cos ? cs : worst_cos;
        worst_rel = rel > worst_rel ? rel : worst_rel;
    }
    printf("\n  int8 %zu x %zu -> %zu%s: per-row cosine min %.6f, relative RMSE max %.3f%%, %s", rows, in,
           out, act ? " + gelu" : "", worst_cos, 100.0 * worst_rel, ck_linear_impl(lin));
    CU_ASSERT(worst_cos >= 0.9995);
    CU_ASSERT(worst_rel <= 0.03);
    /* a row alone gives the bits it got among the others (any tile: exact integer products) */
    for (size_t t = 0; t < rows; t += rows / 5 + 1) {
        CU_ASSERT_EQUAL(ck_linear_forward_f32(lin, 0, x + t * in, in, in, one, out, out, 1), CK_OK);
        CU_ASSERT(memcmp(one, y + t * out, out * sizeof *one) == 0);
    }
    ck_linear_free(lin);
    ck_onednn_free(ctx);
    free(x);
    free(w);
    free(b);
    free(y);
    free(ref);
    free(one);
}

static void test_128_to_768(void) { check_shape(301, 128, 768, CK_LINEAR_PLAIN); }
static void test_768_to_768(void) { check_shape(77, 768, 768, CK_LINEAR_PLAIN); }
static void test_768_to_2048_gelu(void) { check_shape(40, 768, 2048, CK_LINEAR_GELU_TANH); }
static void test_2048_to_768(void) { check_shape(19, 2048, 768, CK_LINEAR_PLAIN); }

/* The self-check the executor runs, and what oneDNN chose: VNNI or AMX where the CPU has them. */
static void test_self_check(void)
{
    ck_onednn *ctx = NULL;
    double cosine = 0.0;
    const char *impl = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 1), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_int8_self_check(ctx, &cosine, &impl), CK_OK);
    printf("\n  int8 self-check cosine %.6f (%s), cpu int8 dot: %s", cosine, impl, ck_cpu_int8_dot());
    CU_ASSERT(cosine >= 0.999);
    if (ck_cpu_int8_dot()[0] != '\0' && getenv("ONEDNN_MAX_CPU_ISA") == NULL) {
        CU_ASSERT(strstr(impl, "vnni") != NULL || strstr(impl, "amx") != NULL);
    }
    ck_onednn_free(ctx);
}

static void test_rejections(void)
{
    float w[4] = {1, 2, 3, 4};
    ck_onednn *ctx = NULL;
    ck_linear *lin = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_onednn_init(&ctx, 1), CK_OK);
    CU_ASSERT_EQUAL(ck_linear_init(&lin, ctx, &(ck_linear_desc){.weight = w, .weight_count = 4,
            .in_features = 2, .out_features = 2, .compute = CK_DTYPE_I8, .dst = CK_DTYPE_BF16}), CK_E_ARG);
    CU_ASSERT_PTR_NULL(lin);
    CU_ASSERT_EQUAL(ck_linear_init(&lin, ctx, &(ck_linear_desc){.weight = w, .weight_count = 4,
            .in_features = 2, .out_features = 2, .compute = CK_DTYPE_I8}), CK_OK);
    uint16_t x16[2] = {0, 0};
    float y[2];
    CU_ASSERT_EQUAL(ck_linear_forward_bf16_f32(lin, 0, x16, 2, 2, y, 2, 2, 1), CK_E_ARG);
    ck_linear_free(lin);
    ck_onednn_free(ctx);
}

CK_TEST_MAIN("linear_int8", {"weight quantization by hand", test_weight_quantization_by_hand},
             {"row quantization by hand", test_row_quantization_by_hand},
             {"both ISA paths give the pinned bits", test_paths_give_pinned_bits},
             {"128 -> 768", test_128_to_768}, {"768 -> 768", test_768_to_768},
             {"768 -> 2048 + gelu", test_768_to_2048_gelu}, {"2048 -> 768", test_2048_to_768},
             {"self-check", test_self_check}, {"rejections", test_rejections})
