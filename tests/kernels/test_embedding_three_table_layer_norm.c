/* test_embedding_three_table_layer_norm.c - the embedding op against a hand case and a double reference, plus every rejection. */
#include <stdint.h>

#include "ck_status.h"
#include "ck_test.h"
#include "embedding_three_table_layer_norm.h"

/* Legend: T tokens, E channels, V vocab, P positions, K token types (Kokoro's sizes). */
enum { V = 178, P = 512, K = 2, E = 128, T = 37, STRIDE = 136 };

typedef struct {
    float word[V * E], position[P * E], token_type[K * E], gamma[E], beta[E];
    int32_t ids[T], positions[T], types[T];
    ck_embedding_tables tb;
    float y[T * STRIDE];
    size_t tokens, y_count, y_stride;
    float eps;
} fixture;

/* Deterministic values in [-scale, scale) + offset from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *x, size_t n, uint64_t seed, double scale, double offset)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(seed >> 40) / 16777216.0;
        x[i] = (float)(scale * (2.0 * u - 1.0) + offset);
    }
}

/* A fixture with Kokoro-sized tables, T tokens of mixed ids and types, y canary-filled at stride 136. */
static fixture *fixture_new(void)
{
    fixture *f = calloc(1, sizeof *f);
    fill(f->word, V * E, 1, 0.05, 0.0);
    fill(f->position, P * E, 2, 0.05, 0.0);
    fill(f->token_type, K * E, 3, 0.05, 0.0);
    fill(f->gamma, E, 4, 0.1, 1.0);
    fill(f->beta, E, 5, 0.05, 0.0);
    for (int t = 0; t < T; t++) {
        f->ids[t] = (t * 53 + 7) % V;
        f->positions[t] = (t * 97 + 3) % P;
        f->types[t] = t % 2;
    }
    f->ids[0] = V - 1;
    f->positions[1] = P - 1;
    f->tb = (ck_embedding_tables){f->word, V, f->position, P, f->token_type, K, f->gamma, f->beta, E};
    f->tokens = T;
    f->y_stride = STRIDE;
    f->y_count = T * STRIDE;
    f->eps = 1e-12f;
    ck_test_fill_canary(f->y, T * STRIDE);
    return f;
}

static int run(fixture *f, const int32_t *types)
{
    return ck_embedding_three_table_layer_norm_f32(f->ids, f->positions, types, f->tokens, &f->tb, f->y,
                                                   f->y_count, f->y_stride, f->eps);
}

/* ref_embedding: the formula in double, two passes, independent of the kernel. want is [T,E]. */
static void ref_embedding(const fixture *f, const int32_t *types, float *want)
{
    for (int t = 0; t < T; t++) {
        double x[E], mean = 0.0, var = 0.0;
        int k = types ? types[t] : 0;
        for (int c = 0; c < E; c++) {
            x[c] = (double)f->word[f->ids[t] * E + c] + f->token_type[k * E + c] +
                   f->position[f->positions[t] * E + c];
            mean += x[c] / E;
        }
        for (int c = 0; c < E; c++) {
            var += (x[c] - mean) * (x[c] - mean) / E;
        }
        for (int c = 0; c < E; c++) {
            want[t * E + c] = (float)((x[c] - mean) / sqrt(var + 1e-12) * f->gamma[c] + f->beta[c]);
        }
    }
}

/* Compares y (stride 136) with the reference and checks every pad column still holds the canary.
 * Tolerance 2e-6: the kernel sums the three rows in float (|x| < 0.15, rounding <= 1.5e-8 per channel)
 * and LN scales that by rstd (~1/0.05 = 20) and gamma (<= 1.1): ~3.3e-7, plus one float rounding of
 * |y| < 4 (2.4e-7); 2e-6 leaves a margin of 3. */
static void expect_matches_reference(fixture *f, const int32_t *types)
{
    float want[T * E], got[T * E];
    ref_embedding(f, types, want);
    for (int t = 0; t < T; t++) {
        memcpy(got + t * E, f->y + t * STRIDE, E * sizeof(float));
        CU_ASSERT_TRUE(ck_test_canary_intact(f->y + t * STRIDE + E, STRIDE - E));
    }
    CU_ASSERT_TRUE(ck_test_close("embedding", got, want, T * E, 2e-6));
}

static void test_hand_case(void)
{
    /* E = 4, word row [1 2 3 4], zero position and type rows: mean 2.5, var 1.25. */
    const float word[8] = {9, 9, 9, 9, 1, 2, 3, 4}, zero[4] = {0}, gamma[4] = {1, 1, 2, 1},
                beta[4] = {0, 0, 1, 0};
    const int32_t ids[1] = {1}, pos[1] = {0};
    ck_embedding_tables tb = {word, 2, zero, 1, zero, 1, gamma, beta, 4};
    float y[4];
    CU_ASSERT_EQUAL(ck_embedding_three_table_layer_norm_f32(ids, pos, NULL, 1, &tb, y, 4, 4, 1e-12f), CK_OK);
    const float want[4] = {-1.5f / 1.11803399f, -0.5f / 1.11803399f, 2.0f * 0.5f / 1.11803399f + 1.0f,
                           1.5f / 1.11803399f};
    CU_ASSERT_TRUE(ck_test_close("hand", y, want, 4, 1e-6));
}

static void test_reference_with_types_and_wide_stride(void)
{
    fixture *f = fixture_new();
    CU_ASSERT_EQUAL(run(f, f->types), CK_OK);
    expect_matches_reference(f, f->types);
    free(f);
}

static void test_null_types_mean_type_zero(void)
{
    fixture *f = fixture_new();
    CU_ASSERT_EQUAL(run(f, NULL), CK_OK);
    expect_matches_reference(f, NULL);
    free(f);
}

static void test_zero_tokens_is_a_no_op(void)
{
    fixture *f = fixture_new();
    f->tokens = 0;
    f->y_count = 0;
    CU_ASSERT_EQUAL(run(f, f->types), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->y, T * STRIDE));
    free(f);
}

/* Runs the fixture after one bad change; asserts the exact code and that y is untouched. */
static void expect_rejected(fixture *f, int code)
{
    CU_ASSERT_EQUAL(run(f, f->types), code);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->y, T * STRIDE));
    free(f);
}

static void test_id_equal_vocab(void)
{
    fixture *f = fixture_new();
    f->ids[T - 1] = V;
    expect_rejected(f, CK_E_RANGE);
}

static void test_id_negative(void)
{
    fixture *f = fixture_new();
    f->ids[5] = -1;
    expect_rejected(f, CK_E_RANGE);
}

static void test_position_equal_max(void)
{
    fixture *f = fixture_new();
    f->positions[T - 1] = P;
    expect_rejected(f, CK_E_RANGE);
}

static void test_type_negative(void)
{
    fixture *f = fixture_new();
    f->types[3] = -1;
    expect_rejected(f, CK_E_RANGE);
}

static void test_type_equal_rows(void)
{
    fixture *f = fixture_new();
    f->types[3] = K;
    expect_rejected(f, CK_E_RANGE);
}

static void test_stride_below_channels(void)
{
    fixture *f = fixture_new();
    f->y_stride = E - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_stride_size_max(void)
{
    fixture *f = fixture_new();
    f->y_stride = SIZE_MAX;
    expect_rejected(f, CK_E_SIZE);
}

static void test_y_count_one_short(void)
{
    fixture *f = fixture_new();
    f->y_count = (T - 1) * STRIDE + E - 1;
    expect_rejected(f, CK_E_SIZE);
}

static void test_zero_channels(void)
{
    fixture *f = fixture_new();
    f->tb.channels = 0;
    expect_rejected(f, CK_E_SIZE);
}

static void test_eps_zero(void)
{
    fixture *f = fixture_new();
    f->eps = 0.0f;
    expect_rejected(f, CK_E_ARG);
}

static void test_eps_nan(void)
{
    fixture *f = fixture_new();
    f->eps = NAN;
    expect_rejected(f, CK_E_ARG);
}

static void test_nan_in_used_word_row(void)
{
    fixture *f = fixture_new();
    f->word[f->ids[9] * E + 17] = NAN;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_inf_in_used_position_row(void)
{
    fixture *f = fixture_new();
    f->position[f->positions[2] * E + 127] = INFINITY;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_nan_in_unused_row_is_not_read(void)
{
    fixture *f = fixture_new();
    f->word[2 * E] = NAN; /* id 2 is never selected: (t * 53 + 7) % 178 != 2 for t < 37, and ids[0] = 177 */
    CU_ASSERT_EQUAL(run(f, f->types), CK_OK);
    free(f);
}

static void test_nan_in_gamma(void)
{
    fixture *f = fixture_new();
    f->gamma[64] = NAN;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_row_sum_overflow(void)
{
    fixture *f = fixture_new();
    f->word[f->ids[4] * E] = 3e38f;
    f->position[f->positions[4] * E] = 3e38f;
    expect_rejected(f, CK_E_NONFINITE);
}

static void test_null_ids(void)
{
    fixture *f = fixture_new();
    CU_ASSERT_EQUAL(ck_embedding_three_table_layer_norm_f32(NULL, f->positions, f->types, T, &f->tb, f->y,
                                                            f->y_count, STRIDE, f->eps), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->y, T * STRIDE));
    free(f);
}

static void test_null_table(void)
{
    fixture *f = fixture_new();
    f->tb.token_type = NULL;
    expect_rejected(f, CK_E_ARG);
}

static void test_y_overlaps_table(void)
{
    fixture *f = fixture_new();
    ck_test_fill_canary(f->position, STRIDE);
    CU_ASSERT_EQUAL(ck_embedding_three_table_layer_norm_f32(f->ids, f->positions, f->types, 1, &f->tb,
                                                            f->position, STRIDE, STRIDE, f->eps), CK_E_ARG);
    CU_ASSERT_TRUE(ck_test_canary_intact(f->position, STRIDE));
    free(f);
}

CK_TEST_MAIN("embedding_three_table_layer_norm", {"hand case", test_hand_case},
             {"reference, types, stride 136", test_reference_with_types_and_wide_stride},
             {"NULL types mean type 0", test_null_types_mean_type_zero},
             {"zero tokens is a no-op", test_zero_tokens_is_a_no_op},
             {"id = vocab", test_id_equal_vocab}, {"id = -1", test_id_negative},
             {"position = P", test_position_equal_max}, {"type = -1", test_type_negative},
             {"type = K", test_type_equal_rows}, {"stride < channels", test_stride_below_channels},
             {"stride SIZE_MAX", test_stride_size_max}, {"y_count one short", test_y_count_one_short},
             {"channels 0", test_zero_channels}, {"eps 0", test_eps_zero}, {"eps NaN", test_eps_nan},
             {"NaN in a used word row", test_nan_in_used_word_row},
             {"Inf in a used position row", test_inf_in_used_position_row},
             {"NaN in an unused row is not read", test_nan_in_unused_row_is_not_read},
             {"NaN in gamma", test_nan_in_gamma}, {"row sum overflow", test_row_sum_overflow},
             {"null ids", test_null_ids}, {"null table", test_null_table},
             {"y overlaps a table", test_y_overlaps_table})
