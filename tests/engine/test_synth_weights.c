/* test_synth_weights.c - splitmix64-uniform-v1 gives exactly the bits an independent implementation gives. */
#include <stdint.h>
#include <string.h>

#include "ck_status.h"
#include "ck_test.h"
#include "synth_weights.h"

/* Bits of a float, so comparisons are exact (no tolerance: the generator is specified to the bit). */
static uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static void test_fnv1a64_known_values(void)
{
    CU_ASSERT_EQUAL(ck_fnv1a64(""), 0xcbf29ce484222325ULL);
    CU_ASSERT_EQUAL(ck_fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

/* Expected bit patterns made with /usr/bin/python3 (arbitrary-precision ints masked to 64 bits,
 * u = (z >> 40) / 2**24, v = scale * (2*u - 1) + offset in Python floats, then
 * struct.unpack('<I', struct.pack('<f', v))), seed 20261129:
 *   st = (seed ^ fnv(name)) & M; per value: st = (st + 0x9E3779B97F4A7C15) & M; z = st;
 *   z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M; z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M;
 *   z ^= z >> 31   with M = 2**64 - 1 and fnv the same FNV-1a as above. */
static void check_first_four(const char *name, const uint32_t want[4])
{
    float got[4];
    CU_ASSERT_EQUAL_FATAL(ck_synth_tensor_f32(name, CK_SYNTH_DEFAULT_SEED, got, 4), 0);
    for (size_t i = 0; i < 4; i++) {
        if (bits(got[i]) != want[i]) {
            fprintf(stderr, "    %s[%zu]: got 0x%08x want 0x%08x\n", name, i, bits(got[i]), want[i]);
        }
        CU_ASSERT_EQUAL(bits(got[i]), want[i]);
    }
}

static void test_gamma_first_values(void)
{
    static const uint32_t want[4] = {0x3f823f7a, 0x3f812a99, 0x3f6f1f24, 0x3f7193da};
    check_first_four("bert.embeddings.LayerNorm.weight", want);
}

static void test_beta_first_values(void)
{
    static const uint32_t want[4] = {0xbd2f248d, 0xbd235228, 0xbd34bb5b, 0x3c95a0ea};
    check_first_four("bert.embeddings.LayerNorm.bias", want);
}

static void test_matrix_first_values(void)
{
    static const uint32_t want[4] = {0x3bc9cd0d, 0x3d1264db, 0xbc9eeda0, 0x3d36ae58};
    check_first_four("bert_encoder.weight", want);
}

static void test_scales(void)
{
    double s = 0, o = 0;
    ck_synth_scale("bert.embeddings.LayerNorm.weight", &s, &o);
    CU_ASSERT(s == 0.1 && o == 1.0);
    ck_synth_scale("x.full_layer_layer_norm.weight", &s, &o);
    CU_ASSERT(s == 0.1 && o == 1.0);
    ck_synth_scale("bert.embeddings.LayerNorm.bias", &s, &o);
    CU_ASSERT(s == 0.05 && o == 0.0);
    ck_synth_scale("bert.embeddings.word_embeddings.weight", &s, &o);
    CU_ASSERT(s == 0.05 && o == 0.0);
    ck_synth_scale("LayerNorm.weights", &s, &o);  /* suffix must match exactly */
    CU_ASSERT(s == 0.05 && o == 0.0);
}

/* Gamma lies in [0.9, 1.1), everything else in [-0.05, 0.05), over a long stream; and the stream
 * depends on the seed and the name. */
static void test_ranges_and_stream_identity(void)
{
    enum { N = 4096 };
    static float g[N], b[N], b2[N], b3[N];
    CU_ASSERT_EQUAL(ck_synth_tensor_f32("l.LayerNorm.weight", 7, g, N), 0);
    CU_ASSERT_EQUAL(ck_synth_tensor_f32("l.LayerNorm.bias", 7, b, N), 0);
    CU_ASSERT_EQUAL(ck_synth_tensor_f32("l.LayerNorm.bias", 8, b2, N), 0);
    CU_ASSERT_EQUAL(ck_synth_tensor_f32("l.LayerNorm.bias", 7, b3, N), 0);
    int in_range = 1;
    for (size_t i = 0; i < N; i++) {
        in_range &= g[i] >= 0.9f && g[i] < 1.1f && b[i] >= -0.05f && b[i] < 0.05f;
    }
    CU_ASSERT_TRUE(in_range);
    CU_ASSERT_NOT_EQUAL(memcmp(b, b2, sizeof b), 0);
    CU_ASSERT_EQUAL(memcmp(b, b3, sizeof b), 0);
}

static void test_rejects_null(void)
{
    float x[1] = {CK_CANARY};
    CU_ASSERT_EQUAL(ck_synth_tensor_f32(NULL, 1, x, 1), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_synth_tensor_f32("w", 1, NULL, 1), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_synth_tensor_f32("w", 1, NULL, 0), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(x, 1));
}

CK_TEST_MAIN("synth_weights", {"fnv1a64 known values", test_fnv1a64_known_values},
             {"gamma first values", test_gamma_first_values},
             {"beta first values", test_beta_first_values},
             {"matrix first values", test_matrix_first_values}, {"scales", test_scales},
             {"ranges and stream identity", test_ranges_and_stream_identity},
             {"rejects null", test_rejects_null})
