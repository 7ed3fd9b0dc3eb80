/* test_adain_instance_norm.c - AdaIN1d's instance norm over each sequence's frames vs torch.nn.InstanceNorm1d, a double
 * reference, batch, split and in-place invariance, rejections. */
#include "adain_instance_norm.h"
#include "style_norm_cases.h"

/* ref_adain_instance_norm: two passes in double per (sequence, channel), straight from the formula. */
static void ref_adain(const float *x, const float *gamma, const float *beta, double *y, const size_t *offsets,
                      size_t n_seq, size_t channels, double eps)
{
    for (size_t s = 0; s < n_seq; s++) {
        size_t o = offsets[s], n = offsets[s + 1] - o;
        for (size_t c = 0; c < channels; c++) {
            double mean = 0.0, var = 0.0;
            for (size_t f = 0; f < n; f++) {
                mean += x[(o + f) * channels + c];
            }
            mean /= (double)n;
            for (size_t f = 0; f < n; f++) {
                var += (x[(o + f) * channels + c] - mean) * (x[(o + f) * channels + c] - mean);
            }
            var /= (double)n;
            for (size_t f = 0; f < n; f++) {
                double xn = (x[(o + f) * channels + c] - mean) / sqrt(var + eps);
                y[(o + f) * channels + c] = (1.0 + gamma[s * channels + c]) * xn + beta[s * channels + c];
            }
        }
    }
}

/* Bound: the error here is torch's. Its CPU instance norm folds the statistics into y = x * invstd +
 * (-mean * invstd), two float terms of size |x| / std, which reaches 104 in the two-frame sequence (its
 * offset of ~15 against a std of ~0.15), so it rounds at ulp(104) = 7.6e-6 scaled down by the
 * cancellation: measured 1.92e-6 against float64 torch, 1.91e-6 against us, while we stay within half an
 * ulp of the double reference (next case). 4e-6 absolute. */
static void test_matches_torch(void)
{
    sn_case_torch(ck_adain_instance_norm_f32, "instance_norm", 4e-6);
}

/* Bound: one rounding of a double value below 8 (half an ulp: 4.8e-7). */
static void test_matches_double_reference(void)
{
    sn_case_reference(ck_adain_instance_norm_f32, ref_adain, "instance_norm", 4.8e-7);
}

static void test_batch_split_in_place_stride(void)
{
    sn_case_invariance(ck_adain_instance_norm_f32, "instance_norm");
}

static void test_rejections(void)
{
    sn_case_rejections(ck_adain_instance_norm_f32);
}

/* One frame: var 0, so y = beta exactly, for any x. */
static void test_one_frame_gives_beta(void)
{
    const size_t offsets[2] = {0, 1};
    const float x[3] = {5.0f, -2.0f, 1e30f}, g[3] = {0.5f, 1.0f, -0.25f}, b[3] = {0.125f, -3.0f, 7.0f};
    float y[3];
    CU_ASSERT_EQUAL(ck_adain_instance_norm_f32(x, 3, 3, g, 3, b, 3, y, 3, 3, offsets, 1, 0, 1, 3, 1e-5f), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, b, sizeof y), 0);
}

CK_TEST_MAIN("adain_instance_norm", {"matches torch InstanceNorm1d + style", test_matches_torch},
             {"matches the double reference", test_matches_double_reference},
             {"alone, split, in place and wide stride are bit-identical", test_batch_split_in_place_stride},
             {"rejections leave y untouched", test_rejections}, {"one frame gives beta", test_one_frame_gives_beta})
