/* test_reader_fuzz.c - regressions for crashes the libFuzzer harnesses found in the corpus readers:
 * each replays the minimised input through the public reader and asserts the exact outcome. */
#include <stdio.h>

#include "ck_test.h"
#include "reader.h"

#if CK_HAVE_ESPEAK
/* fuzz_reader crash-420a6681: Armenian + IPA schwa + Latin made espeak-ng 1.51 read freed memory
 * in espeak_TextToPhonemes. Non-Latin code points never reach espeak-ng: strict, the line is
 * refused; otherwise they are dropped (next test). */
static void test_text_non_latin_rejected_before_espeak_with(const char *g2p)
{
    static const char corpus[] = "ui\xd5\x87\xc9\x99" "c???\r\r?\nhello\n";
    FILE *in = fmemopen((void *)corpus, sizeof corpus - 1, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    ck_reader_options o = {CK_INPUT_TEXT, "en-us", 1, 0, NULL, NULL, NULL, 0, g2p, NULL};
    ck_reader *r = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, in, "fz.txt", &o, &err), CK_OK);
    ck_sequence *seqs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(ck_reader_next(r, &seqs, &n, &err), CK_E_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, "fz.txt:1: column 3: character U+0547 is outside the Latin "
                                        "script the English text front end reads");
    CU_ASSERT_PTR_NULL(seqs);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_reader_next(r, &seqs, &n, &err), 1); /* the reader goes on */
    CU_ASSERT_EQUAL(seqs[0].line, 2);
    ck_sequences_free(seqs, n);
    ck_reader_close(r);
    fclose(in);
}

/* The same crash input, not strict: the Armenian and IPA code points are dropped before espeak-ng
 * (counted, one warning each naming the column) and the line is encoded. */
static int warnings;
static void count_warning(void *ctx, const char *message)
{
    (void)ctx;
    warnings += strstr(message, "is outside the Latin script the English text front end reads, "
                                "dropped") != NULL;
}

static void count_warning_control(void *ctx, const char *message)
{
    (void)ctx;
    warnings += strstr(message, "is a control character, not text, dropped") != NULL;
}

static void test_text_non_latin_dropped_before_espeak_with(const char *g2p)
{
    static const char corpus[] = "ui\xd5\x87\xc9\x99" "c???\r\r?\n";
    FILE *in = fmemopen((void *)corpus, sizeof corpus - 1, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    ck_reader_options o = {CK_INPUT_TEXT, "en-us", 0, 0, count_warning, NULL, NULL, 0, g2p, NULL};
    ck_reader *r = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, in, "fz.txt", &o, &err), CK_OK);
    ck_sequence *seqs = NULL;
    size_t n = 0;
    warnings = 0;
    CU_ASSERT_EQUAL(ck_reader_next(r, &seqs, &n, &err), 1);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(ck_reader_stats_get(r)->dropped_symbols, 2);
    CU_ASSERT_EQUAL(warnings, 2);
    ck_sequences_free(seqs, n);
    ck_reader_close(r);
    fclose(in);
}

/* IPA letters alone (U+0250..U+02AF) are outside Latin too: named with their column (strict). */
static void test_text_ipa_letter_rejected_with_column_with(const char *g2p)
{
    static const char corpus[] = "  ab \xc9\x99\n";
    FILE *in = fmemopen((void *)corpus, sizeof corpus - 1, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    ck_reader_options o = {CK_INPUT_TEXT, "en-us", 1, 0, NULL, NULL, NULL, 0, g2p, NULL};
    ck_reader *r = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, in, "fz.txt", &o, &err), CK_OK);
    ck_sequence *seqs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(ck_reader_next(r, &seqs, &n, &err), CK_E_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "fz.txt:1: column 6: character U+0259 "));
    ck_reader_close(r);
    fclose(in);
}

/* fuzz_reader crash-5e755228: " d.\f?\x0f\x01B" made espeak-ng 1.51 read past the end of its input
 * (U+0001 opens an embedded command). Controls never reach espeak-ng: strict, the line is refused
 * at the first one (U+000F, column 6); otherwise both are dropped and the line is encoded. */
static void test_text_control_characters_kept_from_espeak_with(const char *g2p)
{
    static const char corpus[] = " d.\f?\x0f\x01" "B\n";
    for (int strict = 1; strict >= 0; strict--) {
        FILE *in = fmemopen((void *)corpus, sizeof corpus - 1, "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(in);
        ck_reader_options o = {CK_INPUT_TEXT, "en-us", strict, 0, count_warning_control, NULL,
                               NULL, 0, g2p, NULL};
        ck_reader *r = NULL;
        ck_error err = {0};
        CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, in, "fz.txt", &o, &err), CK_OK);
        ck_sequence *seqs = NULL;
        size_t n = 0;
        warnings = 0;
        int rc = ck_reader_next(r, &seqs, &n, &err);
        if (strict) {
            CU_ASSERT_EQUAL(rc, CK_E_INPUT);
            CU_ASSERT_STRING_EQUAL(err.message, "fz.txt:1: column 6: character U+000F is a control "
                                                "character, not text");
        } else {
            CU_ASSERT_EQUAL(rc, 1);
            CU_ASSERT_EQUAL(n, 1);
            CU_ASSERT_EQUAL(ck_reader_stats_get(r)->dropped_symbols, 2);
            CU_ASSERT_EQUAL(warnings, 2);
        }
        ck_sequences_free(seqs, n);
        ck_reader_close(r);
        fclose(in);
    }
}

/* the espeak path, and the misaki path, whose fallback words reach espeak-ng too */
static void test_text_non_latin_rejected_before_espeak(void)
{
    test_text_non_latin_rejected_before_espeak_with("espeak");
    test_text_non_latin_rejected_before_espeak_with("misaki");
}

/* the espeak path, and the misaki path, whose fallback words reach espeak-ng too */
static void test_text_non_latin_dropped_before_espeak(void)
{
    test_text_non_latin_dropped_before_espeak_with("espeak");
    test_text_non_latin_dropped_before_espeak_with("misaki");
}

/* the espeak path, and the misaki path, whose fallback words reach espeak-ng too */
static void test_text_ipa_letter_rejected_with_column(void)
{
    test_text_ipa_letter_rejected_with_column_with("espeak");
    test_text_ipa_letter_rejected_with_column_with("misaki");
}

/* the espeak path, and the misaki path, whose fallback words reach espeak-ng too */
static void test_text_control_characters_kept_from_espeak(void)
{
    test_text_control_characters_kept_from_espeak_with("espeak");
    test_text_control_characters_kept_from_espeak_with("misaki");
}

CK_TEST_MAIN("reader_fuzz", {"text: non-Latin rejected before espeak-ng",
                             test_text_non_latin_rejected_before_espeak},
             {"text: non-Latin dropped before espeak-ng", test_text_non_latin_dropped_before_espeak},
             {"text: IPA letter rejected with column", test_text_ipa_letter_rejected_with_column},
             {"text: control characters kept from espeak-ng",
              test_text_control_characters_kept_from_espeak})
#else
static void test_no_espeak(void)
{
    CU_ASSERT_EQUAL(CK_INPUT_TEXT, 2);
}
CK_TEST_MAIN("reader_fuzz", {"built without espeak-ng", test_no_espeak})
#endif
