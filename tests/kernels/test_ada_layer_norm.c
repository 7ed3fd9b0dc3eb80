/* test_ada_layer_norm.c - AdaLayerNorm (LayerNorm over channels, style affine per sequence) vs torch F.layer_norm, a
 * double reference, batch, split and in-place invariance, rejections. */
#include "ada_layer_norm.h"
#include "style_norm_cases.h"

/* ref_ada_layer_norm: two passes in double per row, straight from the formula. */
static void ref_ada_ln(const float *x, const float *gamma, const float *beta, double *y, const size_t *offsets,
                       size_t n_seq, size_t channels, double eps)
{
    for (size_t s = 0; s < n_seq; s++) {
        for (size_t r = offsets[s]; r < offsets[s + 1]; r++) {
            double mean = 0.0, var = 0.0;
            for (size_t c = 0; c < channels; c++) {
                mean += x[r * channels + c];
            }
            mean /= (double)channels;
            for (size_t c = 0; c < channels; c++) {
                var += (x[r * channels + c] - mean) * (x[r * channels + c] - mean);
            }
            var /= (double)channels;
            for (size_t c = 0; c < channels; c++) {
                double xn = (x[r * channels + c] - mean) / sqrt(var + eps);
                y[r * channels + c] = (1.0 + gamma[s * channels + c]) * xn + beta[s * channels + c];
            }
        }
    }
}

/* Bound: |y| < 8 here; torch rounds the normalised x, (1 + gamma), the product and the sum in float (four
 * roundings below 8, ulp <= 9.5e-7) while we round once from double: 2e-6 absolute. Measured 4.8e-7. */
static void test_matches_torch(void)
{
    sn_case_torch(ck_ada_layer_norm_f32, "layer_norm", 2e-6);
}

/* Bound: one rounding of a double value below 8 (half an ulp: 4.8e-7). */
static void test_matches_double_reference(void)
{
    sn_case_reference(ck_ada_layer_norm_f32, ref_ada_ln, "layer_norm", 4.8e-7);
}

static void test_batch_split_in_place_stride(void)
{
    sn_case_invariance(ck_ada_layer_norm_f32, "layer_norm");
}

static void test_rejections(void)
{
    sn_case_rejections(ck_ada_layer_norm_f32);
}

CK_TEST_MAIN("ada_layer_norm", {"matches torch layer_norm + style", test_matches_torch},
             {"matches the double reference", test_matches_double_reference},
             {"alone, split, in place and wide stride are bit-identical", test_batch_split_in_place_stride},
             {"rejections leave y untouched", test_rejections})
