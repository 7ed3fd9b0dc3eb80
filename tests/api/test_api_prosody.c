/* test_api_prosody.c - ck_model_prosody as an embedding program sees it (ckbatch.h only): on the
 * prosody circuit and the embedded synthetic weights (the speech capture's, tests/fixtures/speech),
 * voice "synthetic", the durations of speech4, speech8 (speed 1.4) and speech20 (speed 1.3) equal
 * the capture's pred_dur (its manifest, copied below), frame offsets their sums, speech20's word
 * times the hand-worked values of tests/engine/test_prosody_words.c; the three in one call give
 * each one's durations alone (batch invariance); bad speed, voice and circuit are refused with the
 * output zeroed. */
#include <math.h>
#include <stdint.h>

#include "ck_test.h"
#include "ckbatch.h"

static const struct {
    const char *phonemes;
    double speed;
    int32_t pred_dur[20];
    size_t tokens, frames;
} k_cases[] = {
    {"\xc3\xb0i", 1.0, {1, 2, 2, 2}, 4, 7},                                   /* ði */
    {"\xc3\xb0i \xcb\x88" "As", 1.4, {1, 1, 2, 2, 2, 2, 2, 3}, 8, 15},        /* ði ˈAs */
    {"\xc3\xb0i d\xcb\x88\xc9\x94\xc9\xa1 \xc9\xb9\xcb\x88\xc3\xa6n h\xcb\x88Om.", 1.3,
     {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1}, 20, 31},   /* ði dˈɔɡ ɹˈæn hˈOm. */
};

static ck_model *open_prosody_with(int threads, int parity)
{
    ck_model_params p = ck_model_default_params();
    p.circuit = ck_prosody_circuit_path();
    p.threads = threads;
    p.parity = parity;
    ck_model *m = NULL;
    ck_error err = {0};
    if (ck_model_load(&m, &p, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    return m;
}

static ck_model *open_prosody(void)
{
    return open_prosody_with(2, 0);
}

static void tokenize(ck_model *m, const char *const *lines, size_t n, ck_sequence_set *set)
{
    ck_lines_params lp = ck_lines_default_params();
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_tokenize(m, lines, n, &lp, set, &err), CK_OK);
}

static void test_durations_and_times(void)
{
    ck_model *m = open_prosody();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_STRING_EQUAL(ck_model_default_voice(m), "synthetic");
    for (size_t k = 0; k < 3; k++) {
        ck_sequence_set set;
        tokenize(m, &k_cases[k].phonemes, 1, &set);
        ck_prosody p;
        ck_error err = {0};
        CU_ASSERT_EQUAL_FATAL(ck_model_prosody(m, &set, "synthetic", k_cases[k].speed, &p, &err),
                              CK_OK);
        CU_ASSERT_EQUAL_FATAL(p.n_tokens, k_cases[k].tokens);
        CU_ASSERT_EQUAL(memcmp(p.durations, k_cases[k].pred_dur, p.n_tokens * sizeof(int32_t)), 0);
        CU_ASSERT_EQUAL(p.frame_offsets[0], 0);
        CU_ASSERT_EQUAL(p.frame_offsets[1], k_cases[k].frames);
        CU_ASSERT_EQUAL(p.word_offsets[1], p.n_words);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p.f0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p.n);
        for (size_t v = 0; v < 2 * k_cases[k].frames; v++) {
            CU_ASSERT_FATAL(isfinite(p.f0[v]) && isfinite(p.n[v]));
        }
        if (k == 2) { /* test_prosody_words.c, test_capture_case */
            static const double want[4][2] = {{0, 0.0625}, {0.0625, 0.2}, {0.2, 0.45},
                                              {0.45, 0.725}};
            CU_ASSERT_EQUAL_FATAL(p.n_words, 4);
            for (size_t w = 0; w < 4; w++) {
                CU_ASSERT(fabs(p.words[w].start - want[w][0]) < 1e-12);
                CU_ASSERT(fabs(p.words[w].end - want[w][1]) < 1e-12);
            }
            CU_ASSERT_EQUAL(p.words[3].byte, 20); /* "ði dˈɔɡ ɹˈæn " is 20 bytes */
            CU_ASSERT_EQUAL(p.words[3].bytes, 6);
        }
        ck_prosody_free(&p);
        ck_sequence_set_free(&set);
    }
    ck_model_free(m);
}

/* The three lines in one call at one speed: each sequence's durations equal its call alone. */
static void test_batch_invariant(void)
{
    ck_model *m = open_prosody();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *lines[3] = {k_cases[0].phonemes, k_cases[1].phonemes, k_cases[2].phonemes};
    ck_sequence_set all;
    tokenize(m, lines, 3, &all);
    ck_prosody batch;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_prosody(m, &all, NULL, 1.3, &batch, &err), CK_OK);
    for (size_t k = 0; k < 3; k++) {
        ck_sequence_set one;
        tokenize(m, &lines[k], 1, &one);
        ck_prosody alone;
        CU_ASSERT_EQUAL_FATAL(ck_model_prosody(m, &one, NULL, 1.3, &alone, &err), CK_OK);
        CU_ASSERT_EQUAL(memcmp(alone.durations, batch.durations + all.offsets[k],
                               alone.n_tokens * sizeof(int32_t)), 0);
        CU_ASSERT_EQUAL(alone.frame_offsets[1],
                        batch.frame_offsets[k + 1] - batch.frame_offsets[k]);
        ck_prosody_free(&alone);
        ck_sequence_set_free(&one);
    }
    CU_ASSERT_EQUAL(memcmp(batch.durations + all.offsets[2], k_cases[2].pred_dur,
                           20 * sizeof(int32_t)), 0); /* speech20 is at its own speed here */
    ck_prosody_free(&batch);
    ck_sequence_set_free(&all);
    ck_model_free(m);
}

/* F0 and N (2 values per frame) of each sequence: the same bits alone as in one call of the three,
 * at 1 and 2 threads, fused (default) and in parity; the thread count changes no bit either. */
static void test_f0n_invariant(void)
{
    const char *lines[3] = {k_cases[0].phonemes, k_cases[1].phonemes, k_cases[2].phonemes};
    for (int parity = 0; parity < 2; parity++) {
        float *first_f0 = NULL, *first_n = NULL;
        for (int threads = 1; threads <= 2; threads++) {
            ck_model *m = open_prosody_with(threads, parity);
            CU_ASSERT_PTR_NOT_NULL_FATAL(m);
            ck_sequence_set all;
            tokenize(m, lines, 3, &all);
            ck_prosody batch;
            ck_error err = {0};
            CU_ASSERT_EQUAL_FATAL(ck_model_prosody(m, &all, NULL, 1.3, &batch, &err), CK_OK);
            size_t values = 2 * batch.frame_offsets[3];
            CU_ASSERT_PTR_NOT_NULL_FATAL(batch.f0);
            CU_ASSERT_PTR_NOT_NULL_FATAL(batch.n);
            for (size_t k = 0; k < 3; k++) {
                ck_sequence_set one;
                tokenize(m, &lines[k], 1, &one);
                ck_prosody alone;
                CU_ASSERT_EQUAL_FATAL(ck_model_prosody(m, &one, NULL, 1.3, &alone, &err), CK_OK);
                size_t from = 2 * batch.frame_offsets[k], count = 2 * alone.frame_offsets[1];
                CU_ASSERT_EQUAL_FATAL(count, 2 * batch.frame_offsets[k + 1] - from);
                CU_ASSERT_EQUAL(memcmp(alone.f0, batch.f0 + from, count * sizeof(float)), 0);
                CU_ASSERT_EQUAL(memcmp(alone.n, batch.n + from, count * sizeof(float)), 0);
                ck_prosody_free(&alone);
                ck_sequence_set_free(&one);
            }
            if (first_f0 == NULL) {
                first_f0 = malloc(values * sizeof *first_f0);
                first_n = malloc(values * sizeof *first_n);
                CU_ASSERT_PTR_NOT_NULL_FATAL(first_f0);
                CU_ASSERT_PTR_NOT_NULL_FATAL(first_n);
                memcpy(first_f0, batch.f0, values * sizeof *first_f0);
                memcpy(first_n, batch.n, values * sizeof *first_n);
            } else {
                CU_ASSERT_EQUAL(memcmp(first_f0, batch.f0, values * sizeof *first_f0), 0);
                CU_ASSERT_EQUAL(memcmp(first_n, batch.n, values * sizeof *first_n), 0);
            }
            ck_prosody_free(&batch);
            ck_sequence_set_free(&all);
            ck_model_free(m);
        }
        free(first_f0);
        free(first_n);
    }
}

static void test_refusals(void)
{
    ck_model *m = open_prosody();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ck_sequence_set set;
    tokenize(m, &k_cases[0].phonemes, 1, &set);
    ck_prosody p;
    ck_error err = {0};
    const double bad[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t i = 0; i < 4; i++) {
        ck_error_clear(&err);
        memset(&p, 0xAB, sizeof p);
        CU_ASSERT_EQUAL(ck_model_prosody(m, &set, NULL, bad[i], &p, &err), CK_E_ARG);
        CU_ASSERT_PTR_NULL(p.durations);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "speed"));
    }
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_prosody(m, &set, "af_nobody", 1.0, &p, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "af_heart"));
    CU_ASSERT_EQUAL(ck_voice_check("af_nobody", NULL), CK_E_IO);
    CU_ASSERT_EQUAL(ck_voice_check("af_bella,af_sky", NULL), CK_OK);
    ck_model_free(m);
    /* the encoder has no durations output */
    ck_model_params ep = ck_model_default_params();
    ep.threads = 1;
    CU_ASSERT_EQUAL_FATAL(ck_model_load(&m, &ep, NULL), CK_OK);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_prosody(m, &set, NULL, 1.0, &p, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "durations"));
    CU_ASSERT_EQUAL(ck_model_cols(m, CK_LAYER_PROSODY), 0);
    ck_model_free(m);
    ck_sequence_set_free(&set);
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"durations and word times equal the capture", test_durations_and_times},
        {"one call equals each sequence alone", test_batch_invariant},
        {"F0 and N: alone = in a batch, 1 = 2 threads, default and parity", test_f0n_invariant},
        {"bad speed, voice and circuit", test_refusals},
    };
    return ck_test_run("api_prosody", cases, sizeof cases / sizeof cases[0]);
}
