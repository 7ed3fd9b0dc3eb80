/* test_stft20.c - the generator's STFT and iSTFT against the pinned capture: gen.har from gen.har_source (magnitude,
 * phase modulo 2 pi), audio from gen.conv_post for all four cases; splits; rejections. */
#include "ck_status.h"
#include "istft20.h"
#include "kernel_fixture.h"
#include "speech_capture.h"
#include "stft20.h"

#define TWO_PI 6.283185307179586476925286766559

/* Phase bins are compared only where torch's |X| > 1e-3: below that angle() is dominated by the FFT's
 * float rounding (tools/README.md "Cross-check"); how many bins that leaves out is printed. Measured on this
 * machine: magnitude 2.38e-7 (speech4) / 1.44e-7 (sinegen), phase 4.76e-5 / 3.26e-5 (the float FFT's error
 * over |X| on the smallest bins kept); of the bins left out, those whose phase differs by more than 0.1 rad
 * (flips) are counted and printed. Asserted: magnitude 5e-7, phase 2e-4. */
static void check_stft(const char *source_name, const char *har_name)
{
    ck_st_file *f = ck_cap_open();
    CU_ASSERT_FATAL(f != NULL);
    size_t len = 0, nh = 0;
    float *x = ck_cap_f32(f, source_name, &len), *har = ck_cap_f32(f, har_name, &nh);
    CU_ASSERT_FATAL(x && har);
    size_t frames = len / 5 + 1;
    CU_ASSERT_FATAL(nh == frames * 22);
    float *y = malloc(frames * 22 * sizeof(float)), *part = malloc(frames * 24 * sizeof(float));
    CU_ASSERT_FATAL(y && part);
    CU_ASSERT_EQUAL(ck_stft20_f32(x, len, len, y, frames * 22, 22, 0, frames), CK_OK);
    double mag_err = 0.0, ph_err = 0.0;
    size_t skipped = 0, flips = 0;
    for (size_t t = 0; t < frames; t++) {
        for (size_t k = 0; k < 11; k++) {
            double mw = har[k * frames + t], pw = har[(11 + k) * frames + t];
            double dm = fabs((double)y[t * 22 + k] - mw);
            mag_err = dm > mag_err ? dm : mag_err;
            double dp = fmod(fabs((double)y[t * 22 + 11 + k] - pw), TWO_PI);
            dp = dp > TWO_PI - dp ? TWO_PI - dp : dp;
            if (mw <= 1e-3) {
                skipped++;
                flips += dp > 0.1;
                continue;
            }
            ph_err = dp > ph_err ? dp : ph_err;
        }
    }
    fprintf(stderr, "    %s: %zu frames, magnitude max abs %.3g, phase mod 2 pi %.3g (%zu of %zu bins under 1e-3 left out, %zu of them flipped)\n",
            har_name, frames, mag_err, ph_err, skipped, frames * 11, flips);
    CU_ASSERT_TRUE(mag_err <= 5e-7);
    CU_ASSERT_TRUE(ph_err <= 2e-4);
    CU_ASSERT_TRUE(skipped < frames * 11 / 4);
    for (size_t cut = 0; cut <= frames; cut += frames / 5) {
        ck_test_fill_canary(part, frames * 24);
        CU_ASSERT_EQUAL(ck_stft20_f32(x, len, len, part, frames * 24, 24, cut, frames), CK_OK);
        CU_ASSERT_EQUAL(ck_stft20_f32(x, len, len, part, frames * 24, 24, 0, cut), CK_OK);
        for (size_t t = 0; t < frames; t++) {
            CU_ASSERT_EQUAL(memcmp(part + t * 24, y + t * 22, 22 * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(part + t * 24 + 22, 2));
        }
    }
    free(x);
    free(har);
    free(y);
    free(part);
    ck_st_close(f);
}

static void test_stft_speech4(void)
{
    check_stft("speech4.gen.har_source", "speech4.gen.har");
}

static void test_stft_sinegen(void)
{
    check_stft("sinegen.har_source", "sinegen.har");
}

/* Measured: max abs 4.47e-8 (speech4, speech8), 5.22e-8 (speech20), 5.96e-8 (speech40); peaks 0.14-0.17.
 * Asserted: 2e-7 absolute. */
static void test_istft_cases(void)
{
    const char *cases[] = {"speech4", "speech8", "speech20", "speech40"};
    ck_st_file *f = ck_cap_open();
    CU_ASSERT_FATAL(f != NULL);
    for (size_t c = 0; c < 4; c++) {
        char name[64];
        size_t nx = 0, len = 0;
        snprintf(name, sizeof name, "%s.gen.conv_post", cases[c]);
        float *post = ck_cap_f32(f, name, &nx);
        snprintf(name, sizeof name, "%s.audio", cases[c]);
        float *want = ck_cap_f32(f, name, &len);
        CU_ASSERT_FATAL(post && want);
        size_t frames = nx / 22;
        CU_ASSERT_FATAL(len == (frames - 1) * 5);
        float *rows = malloc(nx * sizeof(float)), *y = malloc(len * sizeof(float)), *part = malloc(len * sizeof(float));
        CU_ASSERT_FATAL(rows && y && part);
        for (size_t t = 0; t < frames; t++) {
            for (size_t k = 0; k < 22; k++) {
                rows[t * 22 + k] = post[k * frames + t];
            }
        }
        CU_ASSERT_EQUAL(ck_istft20_f32(rows, nx, 22, frames, y, len, 0, len), CK_OK);
        double abs_err, rel_err, peak = 0.0;
        ck_kfix_errors(y, want, len, 1e-2, &abs_err, &rel_err);
        for (size_t i = 0; i < len; i++) {
            peak = fabs(want[i]) > peak ? fabs(want[i]) : peak;
        }
        fprintf(stderr, "    %s: %zu samples, peak %.3g, max abs %.3g vs torch.istft\n", cases[c], len, peak, abs_err);
        CU_ASSERT_TRUE(abs_err <= 2e-7);
        const size_t cuts[] = {0, 1, 4, 5, 9, 10, 11, 19, 20, len / 3, len - 7, len - 1, len};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            ck_test_fill_canary(part, len);
            CU_ASSERT_EQUAL(ck_istft20_f32(rows, nx, 22, frames, part, len, cuts[i], len), CK_OK);
            CU_ASSERT_TRUE(ck_test_canary_intact(part, cuts[i]));
            CU_ASSERT_EQUAL(ck_istft20_f32(rows, nx, 22, frames, part, len, 0, cuts[i]), CK_OK);
            CU_ASSERT_EQUAL(memcmp(part, y, len * sizeof(float)), 0);
        }
        free(post);
        free(want);
        free(rows);
        free(y);
        free(part);
    }
    ck_st_close(f);
}

/* Bin 0 alone (log magnitude 0, the others -80: e^-80 = 1.8e-35) makes every frame the constant 1/20, so
 * y[n] = sum_t w[j_t] / (20 sum_t w[j_t]^2): 2 / (20 * 1.5) = 1/15 in the interior, where four hops of the
 * periodic Hann sum to 2 and its squares to 1.5; at the edges the same sums over the frames that exist. */
static void test_istft_constant(void)
{
    enum { T = 9, L = (T - 1) * 5 };
    float x[T * 22] = {0}, y[L];
    for (size_t t = 0; t < T; t++) {
        for (size_t k = 1; k < 11; k++) {
            x[t * 22 + k] = -80.0f;
        }
    }
    CU_ASSERT_EQUAL(ck_istft20_f32(x, T * 22, 22, T, y, L, 0, L), CK_OK);
    for (size_t n = 0; n < L; n++) {
        double sw = 0.0, sw2 = 0.0;
        for (size_t t = 0; t < T; t++) {
            long j = (long)(n + 10) - 5 * (long)t;
            if (j >= 0 && j < 20) {
                double w = 0.5 - 0.5 * cos(TWO_PI * (double)j / 20.0);
                sw += w;
                sw2 += w * w;
            }
        }
        CU_ASSERT_TRUE(fabs(y[n] - sw / (20.0 * sw2)) < 1e-7);
        if (n >= 10 && n + 10 < L) {
            CU_ASSERT_TRUE(fabs(y[n] - 1.0 / 15.0) < 1e-7);
        }
    }
}

static void test_rejections(void)
{
    enum { L = 20, T = L / 5 + 1 };
    float x[L], y[T * 22];
    for (int i = 0; i < L; i++) {
        x[i] = (float)i * 0.1f;
    }
#define ST_EXPECT(code, call) CK_KFIX_REJECTS(y, T * 22, code, call)
    ST_EXPECT(CK_E_SIZE, ck_stft20_f32(x, L, 10, y, T * 22, 22, 0, 1));
    ST_EXPECT(CK_E_SIZE, ck_stft20_f32(x, L, 18, y, T * 22, 22, 0, 1));
    ST_EXPECT(CK_E_SIZE, ck_stft20_f32(x, L - 1, L, y, T * 22, 22, 0, T));
    ST_EXPECT(CK_E_SIZE, ck_stft20_f32(x, L, L, y, T * 22, 21, 0, T));
    ST_EXPECT(CK_E_SIZE, ck_stft20_f32(x, L, L, y, T * 22 - 1, 22, 0, T));
    ST_EXPECT(CK_E_RANGE, ck_stft20_f32(x, L, L, y, T * 22, 22, 2, 1));
    ST_EXPECT(CK_E_RANGE, ck_stft20_f32(x, L, L, y, T * 22, 22, 0, T + 1));
    ST_EXPECT(CK_E_ARG, ck_stft20_f32(NULL, L, L, y, T * 22, 22, 0, T));
    ST_EXPECT(CK_E_ARG, ck_stft20_f32(y, L, L, y + 5, T * 22 - 5, 22, 0, 2));
    x[3] = NAN;
    ST_EXPECT(CK_E_NONFINITE, ck_stft20_f32(x, L, L, y, T * 22, 22, 0, T));
    float post[T * 22] = {0}, a[L];
#define IS_EXPECT(code, call) CK_KFIX_REJECTS(a, L, code, call)
    IS_EXPECT(CK_E_SIZE, ck_istft20_f32(post, T * 22, 22, 1, a, L, 0, 0));
    IS_EXPECT(CK_E_SIZE, ck_istft20_f32(post, T * 22, 21, T, a, L, 0, L));
    IS_EXPECT(CK_E_SIZE, ck_istft20_f32(post, T * 22 - 1, 22, T, a, L, 0, L));
    IS_EXPECT(CK_E_SIZE, ck_istft20_f32(post, T * 22, 22, T, a, L - 1, 0, L));
    IS_EXPECT(CK_E_RANGE, ck_istft20_f32(post, T * 22, 22, T, a, L, 3, 2));
    IS_EXPECT(CK_E_RANGE, ck_istft20_f32(post, T * 22, 22, T, a, L, 0, L + 1));
    IS_EXPECT(CK_E_ARG, ck_istft20_f32(NULL, T * 22, 22, T, a, L, 0, L));
    IS_EXPECT(CK_E_ARG, ck_istft20_f32(post, T * 22, 22, T, NULL, L, 0, L));
    post[T * 22 - 1] = INFINITY; /* the last frame: read by the last samples only */
    IS_EXPECT(CK_E_NONFINITE, ck_istft20_f32(post, T * 22, 22, T, a, L, 0, L));
    CU_ASSERT_EQUAL(ck_istft20_f32(post, T * 22, 22, T, a, L, 0, 2), CK_OK); /* samples 0, 1 read frames 0..2 */
    post[T * 22 - 1] = 0.0f;
    post[(T - 1) * 22] = 100.0f; /* exp overflows to Inf in float, and in the kernel's double it is 2.7e43: fine */
    CU_ASSERT_EQUAL(ck_istft20_f32(post, T * 22, 22, T, a, L, 0, L), CK_OK);
    post[(T - 1) * 22] = 800.0f; /* exp overflows double */
    IS_EXPECT(CK_E_NONFINITE, ck_istft20_f32(post, T * 22, 22, T, a, L, 0, L));
#undef ST_EXPECT
#undef IS_EXPECT
}

CK_TEST_MAIN("stft20", {"STFT: speech4 gen.har from gen.har_source", test_stft_speech4},
             {"STFT: sinegen har (unvoiced, negative F0)", test_stft_sinegen},
             {"iSTFT: audio from gen.conv_post, four cases", test_istft_cases},
             {"iSTFT: bin 0 alone gives the window sums' ratio", test_istft_constant},
             {"rejections leave outputs untouched", test_rejections})
