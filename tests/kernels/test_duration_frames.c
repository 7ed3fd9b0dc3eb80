/* test_duration_frames.c - Kokoro's durations vs torch (exact frame counts, .5 ties included), a double reference,
 * batch and split invariance, rejections. */
#include <stdint.h>

#include "duration_frames.h"
#include "kernel_fixture.h"

enum { B = 50, T = 15, S = 3 };

typedef struct {
    ck_st_file *file;
    size_t offsets[S + 1];
    float *logits, *speed, *duration, *frames;
} dur_fixture;

static int load(dur_fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->file = ck_kfix_open("duration_frames.safetensors");
    if (fx->file == NULL || ck_kfix_offsets(fx->file, fx->offsets, S + 1) != S || fx->offsets[S] != T) {
        return 0;
    }
    fx->logits = ck_kfix_f32(fx->file, "logits", NULL);
    fx->speed = ck_kfix_f32(fx->file, "speed", NULL);
    fx->duration = ck_kfix_f32(fx->file, "duration", NULL);
    fx->frames = ck_kfix_f32(fx->file, "frames", NULL);
    return fx->logits && fx->speed && fx->duration && fx->frames;
}

static void unload(dur_fixture *fx)
{
    free(fx->logits);
    free(fx->speed);
    free(fx->duration);
    free(fx->frames);
    ck_st_close(fx->file);
}

static int run(const dur_fixture *fx, int32_t *frames, float *duration, size_t s0, size_t s1)
{
    return ck_duration_frames_f32(fx->logits, T * B, B, fx->speed, S, frames, T, duration, duration ? T : 0,
                                  fx->offsets, S, s0, s1, B);
}

/* Frames must equal torch's exactly: the fixture's rows 0-3, 10 and 12 sit exactly on .5 ties (0.5, 1.5,
 * 2.5, 2.5 at speed 1; 2.5 and 0.5 at speed 2) and the random rows are at least 0.1 from one. Durations:
 * torch sums 50 floats in float (its own order) and we in double, then both divide in float:
 * 2 ulps, 2.4e-7 relative. Measured: 1.18e-7 (one ulp, 3.8e-6 absolute at 32). */
static void test_matches_torch(void)
{
    dur_fixture fx;
    int32_t frames[T];
    float duration[T];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run(&fx, frames, duration, 0, S), CK_OK);
    for (size_t t = 0; t < T; t++) {
        if (frames[t] != (int32_t)fx.frames[t]) {
            fprintf(stderr, "    token %zu: frames %d, torch %d (duration %.9g, torch %.9g)\n", t, frames[t],
                    (int32_t)fx.frames[t], (double)duration[t], (double)fx.duration[t]);
        }
        CU_ASSERT_EQUAL(frames[t], (int32_t)fx.frames[t]);
    }
    double abs_err, rel_err;
    ck_kfix_errors(duration, fx.duration, T, 1.0, &abs_err, &rel_err);
    fprintf(stderr, "    durations vs torch: max abs %.3g, max rel %.3g\n", abs_err, rel_err);
    CU_ASSERT_TRUE(rel_err <= 2.4e-7);
    unload(&fx);
}

/* ref_duration_frames: sigmoid and the sum in double, the division in double, rint (the default
 * rounding mode is to nearest, ties to even). */
static void test_matches_double_reference(void)
{
    dur_fixture fx;
    int32_t frames[T];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run(&fx, frames, NULL, 0, S), CK_OK);
    for (size_t s = 0; s < S; s++) {
        for (size_t t = fx.offsets[s]; t < fx.offsets[s + 1]; t++) {
            double sum = 0.0;
            for (size_t b = 0; b < B; b++) {
                sum += 1.0 / (1.0 + exp(-(double)fx.logits[t * B + b]));
            }
            double r = rint(sum / fx.speed[s]);
            CU_ASSERT_EQUAL(frames[t], r < 1.0 ? 1 : (int32_t)r);
        }
    }
    unload(&fx);
}

/* Hand-built ties: k logits at 0 (sigmoid 0.5 exactly), m at 40 (1 exactly), the rest at -200 (0). */
static void test_hand_ties(void)
{
    static const struct {
        int halves, ones;
        float speed;
        int32_t want;
    } cases[] = {{1, 0, 1.0f, 1}, {3, 0, 1.0f, 2}, {5, 0, 1.0f, 2}, {7, 0, 1.0f, 4}, {1, 3, 1.0f, 4},
                 {0, 0, 1.0f, 1}, {0, 50, 1.0f, 50}, {1, 49, 1.0f, 50}, {0, 5, 2.0f, 2}, {0, 7, 2.0f, 4},
                 {1, 0, 0.5f, 1}, {3, 0, 0.25f, 6}, {2, 2, 4.0f, 1}, {0, 6, 4.0f, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float l[B];
        size_t offsets[2] = {0, 1};
        int32_t frames = -5;
        for (int b = 0; b < B; b++) {
            l[b] = b < cases[i].halves ? 0.0f : b < cases[i].halves + cases[i].ones ? 40.0f : -200.0f;
        }
        CU_ASSERT_EQUAL(ck_duration_frames_f32(l, B, B, &cases[i].speed, 1, &frames, 1, NULL, 0, offsets, 1, 0, 1,
                                               B), CK_OK);
        if (frames != cases[i].want) {
            fprintf(stderr, "    case %zu: %d, want %d\n", i, frames, cases[i].want);
        }
        CU_ASSERT_EQUAL(frames, cases[i].want);
    }
}

static void test_batch_and_split_invariance(void)
{
    dur_fixture fx;
    int32_t batch[T], part[T];
    float dbatch[T], dpart[T];
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(run(&fx, batch, dbatch, 0, S), CK_OK);
    for (size_t cut = 0; cut <= S; cut++) {
        memset(part, 0, sizeof part);
        CU_ASSERT_EQUAL(run(&fx, part, dpart, cut, S), CK_OK);
        CU_ASSERT_EQUAL(run(&fx, part, dpart, 0, cut), CK_OK);
        CU_ASSERT_EQUAL(memcmp(part, batch, sizeof part), 0);
        CU_ASSERT_EQUAL(memcmp(dpart, dbatch, sizeof dpart), 0);
    }
    for (size_t s = 0; s < S; s++) {
        size_t o = fx.offsets[s], n = fx.offsets[s + 1] - o, one[2] = {0, n};
        CU_ASSERT_EQUAL(ck_duration_frames_f32(fx.logits + o * B, n * B, B, fx.speed + s, 1, part, n, dpart, n, one,
                                               1, 0, 1, B), CK_OK);
        CU_ASSERT_EQUAL(memcmp(part, batch + o, n * sizeof(int32_t)), 0);
        CU_ASSERT_EQUAL(memcmp(dpart, dbatch + o, n * sizeof(float)), 0);
    }
    unload(&fx);
}

/* One bad call on 2 sequences of 1 and 2 tokens, 4 bins; frames (sentinel) untouched. */
static void test_rejections(void)
{
    float l[12] = {0}, sp[2] = {1.0f, 2.0f}, d[3];
    size_t offsets[3] = {0, 1, 3}, bad[3] = {0, 4, 3};
    int32_t f[3];
#define DUR_EXPECT(code, call)                                                                                       \
    do {                                                                                                             \
        f[0] = f[1] = f[2] = -9;                                                                                     \
        CU_ASSERT_EQUAL((call), (code));                                                                             \
        CU_ASSERT_TRUE(f[0] == -9 && f[1] == -9 && f[2] == -9);                                                      \
    } while (0)
    DUR_EXPECT(CK_E_SIZE, ck_duration_frames_f32(l, 11, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_SIZE, ck_duration_frames_f32(l, 12, 3, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_SIZE, ck_duration_frames_f32(l, 12, 4, sp, 1, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_SIZE, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 2, NULL, 0, offsets, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_SIZE, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, d, 2, offsets, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_SIZE, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 0));
    DUR_EXPECT(CK_E_RANGE, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 3, 4));
    DUR_EXPECT(CK_E_RANGE, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, bad, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_ARG, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, NULL, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_ARG, ck_duration_frames_f32(NULL, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    DUR_EXPECT(CK_E_ARG, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, l, 3, offsets, 2, 0, 2, 4));
    sp[1] = 0.0f;
    DUR_EXPECT(CK_E_ARG, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    sp[1] = -1.0f;
    DUR_EXPECT(CK_E_ARG, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    sp[1] = 1e-9f;
    DUR_EXPECT(CK_E_ARG, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    sp[1] = NAN;
    DUR_EXPECT(CK_E_NONFINITE, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
    sp[1] = 2.0f;
    l[9] = INFINITY;
    DUR_EXPECT(CK_E_NONFINITE, ck_duration_frames_f32(l, 12, 4, sp, 2, f, 3, NULL, 0, offsets, 2, 0, 2, 4));
#undef DUR_EXPECT
}

CK_TEST_MAIN("duration_frames", {"matches torch exactly, .5 ties included", test_matches_torch},
             {"matches the double reference", test_matches_double_reference},
             {"hand-built ties round half to even", test_hand_ties},
             {"batch and split invariance", test_batch_and_split_invariance},
             {"rejections leave frames untouched", test_rejections})
