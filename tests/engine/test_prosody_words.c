/* test_prosody_words.c - ck_prosody_words (engine/api/prosody.h): word start and end seconds from
 * durations, by Kokoro's join_timestamps rule (kokoro/pipeline.py:294-330, SYNTHESIS.md §1.0):
 * half frames / 80, a clock starting at 2 max(0, d[0] - 3), a space's frames split between its
 * neighbours. Every expected value below is worked out by hand in its comment, in half frames. */
#include "ck_test.h"
#include "prosody.h"

typedef struct {
    int has_time;
    double start, end;
} want_word;

/* Runs the rule on phonemes and d[n] and checks the words against want[n_want] (k/80 seconds: the
 * division rounds once, so 1e-12 only absorbs how the literal was written). */
static void check(const char *phonemes, const int32_t *d, size_t n, const want_word *want,
                  size_t n_want)
{
    ck_output_word words[16];
    size_t count = 0;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_prosody_words(phonemes, d, n, words, 16, &count, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(count, n_want);
    for (size_t i = 0; i < n_want; i++) {
        CU_ASSERT_EQUAL(words[i].has_time, want[i].has_time);
        if (want[i].has_time) {
            CU_ASSERT(fabs(words[i].start - want[i].start) < 1e-12);
            CU_ASSERT(fabs(words[i].end - want[i].end) < 1e-12);
        }
    }
}

/* The speech capture's speech20 ("The dog ran home.", speed 1.3, pred_dur of the capture's
 * manifest). d[0] = 1: clock 0.
 *   ði    tokens 1-2 (1+1 = 2), space d[3] = 1: start 0,   left = 0 + 4 + 1 = 5 (0.0625), right 6
 *   dˈɔɡ  tokens 4-7 (4), space d[8] = 2:       start 5,   left = 6 + 8 + 2 = 16 (0.2),   right 18
 *   ɹˈæn  tokens 9-12 (8), space d[13] = 2:     start 16,  left = 18 + 16 + 2 = 36 (0.45), right 38
 *   hˈOm. tokens 14-18 (10), no space:          start 36,  left = 38 + 20 = 58 (0.725) */
static void test_capture_case(void)
{
    static const int32_t d[20] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1};
    static const want_word w[] = {{1, 0.0, 0.0625}, {1, 0.0625, 0.2}, {1, 0.2, 0.45},
                                  {1, 0.45, 0.725}};
    check("ði dˈɔɡ ɹˈæn hˈOm.", d, 20, w, 4);
}

/* d[0] = 5: the clock starts at 2 (5 - 3) = 4 half frames.
 *   ab  tokens 1-2 (1+2 = 3), space d[3] = 3: start 4 (0.05), left = 4 + 6 + 3 = 13 (0.1625),
 *       right 16
 *   c   token 4 (4):                          start 13, left = 16 + 8 = 24 (0.3) */
static void test_leading_frames(void)
{
    static const int32_t d[6] = {5, 1, 2, 3, 4, 1};
    static const want_word w[] = {{1, 0.05, 0.1625}, {1, 0.1625, 0.3}};
    check("ab c", d, 6, w, 2);
}

/* A space no word claims is read as a misaki token with whitespace and no phonemes, which Kokoro
 * (pipeline.py:314-320 at dfb907a) treats so: i += 1; left = right + d[i]; right = left + d[i];
 * i += 1. Tokens: BOS a ' ' ' ' b c ' ' d EOS, d = 2 1 2 4 1 3 2 5 1:
 *   a      token 1 (1), space d[2] = 2: start 0, left = 0 + 2 + 2 = 4 (0.05), right 6, i = 3
 *   ' '    i = 4: left = 6 + d[4] = 7, right = 7 + 1 = 8, i = 5 (b's token is passed over)
 *   bc     tokens 5-6 (3+2 = 5), space d[7] = 5: start 7 (0.0875), left = 8 + 10 + 5 = 23
 *          (0.2875), right 28, i = 8
 *   d      i = 8 >= n - 1: no time */
static void test_extra_spaces(void)
{
    static const int32_t d[9] = {2, 1, 2, 4, 1, 3, 2, 5, 1};
    static const want_word w[] = {{1, 0.0, 0.05}, {1, 0.0875, 0.2875}, {0, 0, 0}};
    check("a  bc d", d, 9, w, 3);
}

/* Durations that run out (a string longer than the sequence): "abc" takes tokens 1-3 and, as its
 * space, d[4] (Kokoro's rule reads it whatever it is): start 0, left = 0 + 6 + 1 = 7 (0.0875);
 * then i = 5 >= n - 1: "de" and every later word get no time. Fewer than 3 durations: no time. */
static void test_running_out(void)
{
    static const int32_t d[5] = {1, 1, 1, 1, 1};
    static const want_word w[] = {{1, 0.0, 0.0875}, {0, 0, 0}, {0, 0, 0}};
    check("abc de f", d, 5, w, 3);
    static const want_word none[] = {{0, 0, 0}};
    check("a", d, 2, none, 1);
}

/* count says how many words the string holds even past cap; bad arguments are CK_E_ARG. */
static void test_cap_and_arguments(void)
{
    static const int32_t d[7] = {1, 1, 1, 1, 1, 1, 1};
    ck_output_word words[2];
    size_t count = 0;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_prosody_words("a b c", d, 7, words, 2, &count, &err), CK_OK);
    CU_ASSERT_EQUAL(count, 3);
    CU_ASSERT_EQUAL(words[1].start_byte, 2);
    CU_ASSERT_EQUAL(words[1].bytes, 1);
    CU_ASSERT_EQUAL(ck_prosody_words(NULL, d, 7, words, 2, &count, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_prosody_words("a", NULL, 3, words, 2, &count, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_prosody_words("a", d, 3, words, 2, NULL, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_prosody_code_points("ði dˈɔɡ"), 7);
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"the capture's speech20", test_capture_case},
        {"leading frames start the clock", test_leading_frames},
        {"a space no word claims, as Kokoro's empty token", test_extra_spaces},
        {"durations that run out", test_running_out},
        {"cap and arguments", test_cap_and_arguments},
    };
    return ck_test_run("prosody_words", cases, sizeof cases / sizeof cases[0]);
}
