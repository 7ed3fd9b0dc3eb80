/* test_noise_normal.c - Philox4x32-10 against Random123's published known-answer vectors; the source noise's
 * distribution, split invariance and keying; rejections. */
#include "ck_status.h"
#include "kernel_fixture.h"
#include "noise_normal.h"

/* Random123's kat_vectors, philox4x32 with 10 rounds: counter, key -> output (the three published rows). */
static const uint32_t KAT[3][10] = {
    {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
     0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
     0x6d5451fd},
    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
     0x24126ea1},
};

static void test_known_answers(void)
{
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        ck_philox4x32_10(KAT[i], KAT[i] + 4, out);
        for (int j = 0; j < 4; j++) {
            CU_ASSERT_EQUAL(out[j], KAT[i][6 + j]);
        }
    }
}

/* Box-Muller written out independently: the first 4 values of seed 0, line 0, chunk 0, sample 0 are the
 * transform of the all-zero KAT row (counter 0, key 0). */
static void test_noise_is_box_muller_of_philox(void)
{
    float z[9];
    CU_ASSERT_EQUAL(ck_noise_normal_f32(0, 0, 0, z, 9, 9, 0, 1, 9), CK_OK);
    const uint32_t *w = KAT[0] + 6;
    for (int p = 0; p < 2; p++) {
        double u1 = ((double)w[2 * p] + 1.0) / 4294967296.0, u2 = (double)w[2 * p + 1] / 4294967296.0;
        double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586476925286766559 * u2;
        CU_ASSERT_EQUAL(z[2 * p], (float)(r * cos(t)));
        CU_ASSERT_EQUAL(z[2 * p + 1], (float)(r * sin(t)));
    }
    /* harmonics 4..7 come from counter {0, 1, 0, 0}, harmonic 8 from {0, 2, 0, 0} */
    uint32_t out[4], ctr[4] = {0, 1, 0, 0}, key[2] = {0, 0};
    float b[4];
    ck_philox4x32_10(ctr, key, out);
    ck_box_muller4(out, b);
    CU_ASSERT_EQUAL(memcmp(z + 4, b, sizeof b), 0);
    ctr[1] = 2;
    ck_philox4x32_10(ctr, key, out);
    ck_box_muller4(out, b);
    CU_ASSERT_EQUAL(z[8], b[0]);
}

/* 1e6 draws (111,112 samples x 9 harmonics): mean and variance of N(0,1) within 6 standard errors
 * (mean: 6 / 1000; variance: 6 sqrt(2 / n) = 0.0085), the tail mass beyond 3 sigma (0.27 %) within
 * 0.02 %, and neighbouring draws uncorrelated (|rho| < 0.006). */
static void test_distribution(void)
{
    enum { ROWS = 111112, H = 9 };
    size_t n = (size_t)ROWS * H;
    float *z = malloc(n * sizeof(float));
    CU_ASSERT_FATAL(z != NULL);
    CU_ASSERT_EQUAL(ck_noise_normal_f32(20261205u, 7, 0, z, n, H, 0, ROWS, H), CK_OK);
    double sum = 0.0, sq = 0.0, lag = 0.0;
    size_t tail = 0;
    for (size_t i = 0; i < n; i++) {
        sum += z[i];
        sq += (double)z[i] * z[i];
        tail += fabs(z[i]) > 3.0;
        lag += i ? (double)z[i] * z[i - 1] : 0.0;
    }
    double mean = sum / (double)n, var = sq / (double)n - mean * mean, rho = lag / (double)(n - 1) / var;
    double tail_frac = (double)tail / (double)n;
    fprintf(stderr, "    %zu draws: mean %.5f var %.5f P(|z|>3) %.5f lag-1 rho %.5f\n", n, mean, var, tail_frac, rho);
    CU_ASSERT_TRUE(fabs(mean) < 0.006);
    CU_ASSERT_TRUE(fabs(var - 1.0) < 0.0085);
    CU_ASSERT_TRUE(fabs(tail_frac - 0.0026998) < 0.0002);
    CU_ASSERT_TRUE(fabs(rho) < 0.006);
    free(z);
}

/* Any split of the sample range, any harmonic count, a wider stride: the same bits per (n, h). */
static void test_split_invariance(void)
{
    enum { ROWS = 37, H = 9, WIDE = 12 };
    float whole[ROWS * H], part[ROWS * WIDE], few[ROWS * 5];
    CU_ASSERT_EQUAL(ck_noise_normal_f32(0x123456789abcdefULL, 3, 1, whole, sizeof whole / 4, H, 0, ROWS, H), CK_OK);
    for (size_t cut = 0; cut <= ROWS; cut += 4) {
        ck_test_fill_canary(part, ROWS * WIDE);
        CU_ASSERT_EQUAL(ck_noise_normal_f32(0x123456789abcdefULL, 3, 1, part, ROWS * WIDE, WIDE, cut, ROWS, H), CK_OK);
        CU_ASSERT_EQUAL(ck_noise_normal_f32(0x123456789abcdefULL, 3, 1, part, ROWS * WIDE, WIDE, 0, cut, H), CK_OK);
        for (size_t r = 0; r < ROWS; r++) {
            CU_ASSERT_EQUAL(memcmp(part + r * WIDE, whole + r * H, H * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(part + r * WIDE + H, WIDE - H));
        }
    }
    CU_ASSERT_EQUAL(ck_noise_normal_f32(0x123456789abcdefULL, 3, 1, few, sizeof few / 4, 5, 0, ROWS, 5), CK_OK);
    for (size_t r = 0; r < ROWS; r++) {
        CU_ASSERT_EQUAL(memcmp(few + r * 5, whole + r * H, 5 * sizeof(float)), 0);
    }
    /* one sample alone, at its own row of a bigger buffer */
    ck_test_fill_canary(part, ROWS * WIDE);
    CU_ASSERT_EQUAL(ck_noise_normal_f32(0x123456789abcdefULL, 3, 1, part, ROWS * WIDE, WIDE, 30, 31, H), CK_OK);
    CU_ASSERT_EQUAL(memcmp(part + 30 * WIDE, whole + 30 * H, H * sizeof(float)), 0);
    CU_ASSERT_TRUE(ck_test_canary_intact(part, 30 * WIDE));
}

/* Each key coordinate changes every value: seed (both halves), line, chunk. */
static void test_keying(void)
{
    enum { ROWS = 8, H = 9, N = ROWS * H };
    float base[N], other[N];
    const struct {
        uint64_t seed;
        uint32_t line, chunk;
    } keys[] = {{1, 0, 0}, {(uint64_t)1 << 32, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    CU_ASSERT_EQUAL(ck_noise_normal_f32(0, 0, 0, base, N, H, 0, ROWS, H), CK_OK);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        CU_ASSERT_EQUAL(ck_noise_normal_f32(keys[k].seed, keys[k].line, keys[k].chunk, other, N, H, 0, ROWS, H), CK_OK);
        size_t same = 0;
        for (size_t i = 0; i < N; i++) {
            same += other[i] == base[i];
        }
        CU_ASSERT_EQUAL(same, 0);
    }
    /* within one stream no two samples repeat */
    for (size_t a = 0; a < ROWS; a++) {
        for (size_t b = a + 1; b < ROWS; b++) {
            CU_ASSERT_NOT_EQUAL(memcmp(base + a * H, base + b * H, H * sizeof(float)), 0);
        }
    }
}

static void test_rejections(void)
{
    float y[8];
#define NZ_EXPECT(code, call) CK_KFIX_REJECTS(y, 8, code, call)
    NZ_EXPECT(CK_E_RANGE, ck_noise_normal_f32(1, 0, 0, y, 8, 2, 3, 2, 2));
    NZ_EXPECT(CK_E_RANGE, ck_noise_normal_f32(1, 0, 0, y, 8, 2, ((size_t)1 << 32), ((size_t)1 << 32) + 1, 2));
    NZ_EXPECT(CK_E_SIZE, ck_noise_normal_f32(1, 0, 0, y, 8, 2, 0, 4, 0));
    NZ_EXPECT(CK_E_SIZE, ck_noise_normal_f32(1, 0, 0, y, 8, 1, 0, 4, 2));
    NZ_EXPECT(CK_E_SIZE, ck_noise_normal_f32(1, 0, 0, y, 7, 2, 0, 4, 2));
    NZ_EXPECT(CK_E_ARG, ck_noise_normal_f32(1, 0, 0, NULL, 8, 2, 0, 4, 2));
    NZ_EXPECT(CK_OK, ck_noise_normal_f32(1, 0, 0, NULL, 0, 2, 3, 3, 2)); /* empty range writes nothing */
#undef NZ_EXPECT
}

CK_TEST_MAIN("noise_normal", {"Philox4x32-10 known-answer vectors (Random123)", test_known_answers},
             {"noise = Box-Muller of the Philox block", test_noise_is_box_muller_of_philox},
             {"N(0,1) over 1e6 draws", test_distribution},
             {"any split, harmonic count or stride: same bits", test_split_invariance},
             {"seed, line and chunk each change the stream", test_keying},
             {"rejections leave out untouched", test_rejections})
