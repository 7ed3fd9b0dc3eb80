/* test_espeak.c - every rewrite rule of ck_espeak_rewrite on synthetic espeak strings, the punctuation split, and
 * real espeak-ng sentences with exact Kokoro strings (en-us, en-gb) and full vocab coverage. */
#include <pthread.h>

#include "ck_test.h"
#include "espeak.h"
#include "utf8.h"
#include "vocab.h"

/* Asserts ck_espeak_rewrite(in, british) == want. */
static void rewrites(const char *in, int british, const char *want)
{
    char *got = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_espeak_rewrite(in, british, &got, NULL), CK_OK);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "    rewrite(%s, %d) = %s, want %s\n", in, british, got, want);
    }
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static void test_rules_all_english(void)
{
    rewrites("a^ɪ a^ʊ d^ʒ e^ɪ t^ʃ ɔ^ɪ", 0, "I W ʤ A ʧ Y");
    rewrites("a^ɪ a^ʊ d^ʒ e^ɪ t^ʃ ɔ^ɪ", 1, "I W ʤ A ʧ Y");
    rewrites("e ə^l ɚ r x ç ɐ ɬ", 0, "A ᵊl əɹ ɹ k k ə l");
    rewrites("pʲa ʲo ʲə", 1, "pa jɔ jə");                  /* ʲo -> jo, then o -> ɔ */
    rewrites("ɑ\xCC\x83n", 1, "ɑn");                       /* nasal tilde removed */
    rewrites("bˈʌʔn\xCC\xA9", 0, "bˈʌtᵊn");                /* syllabic, then ʔ -> t */
    rewrites("l\xCC\xA9 \xCC\xA9", 1, "ᵊl ");              /* stray mark after a space dropped */
    rewrites("\xC9\xB9\xCC\xA9\xCC\xA9\xCC\xA9" "a", 1, "ᵊɹa"); /* repeated marks: X once, the rest stray */
    rewrites("o ɾ ʔ", 1, "ɔ T t");
    rewrites("d^z t^s s^s", 1, "dz ts ss");                /* non-English rules not applied */
}

static void test_rules_us(void)
{
    rewrites("həlˈo^ʊ", 0, "həlˈO");
    rewrites("bˈɜːɹd bˈɜːd", 0, "bˈɜɹd bˈɜɹd");
    rewrites("ɪə", 0, "iə");
    rewrites("ɑː iː", 0, "ɑ i");                           /* length marks removed */
    rewrites("e^ə ə^ʊ", 0, "Aə əʊ");                       /* British rules not applied */
}

static void test_rules_gb(void)
{
    rewrites("həlˈə^ʊ", 1, "həlˈQ");
    rewrites("hˈe^ə", 1, "hˈɛː");                          /* e^ə before e -> A: longest first */
    rewrites("nˈiə ɑː", 1, "nˈɪə ɑː");                     /* length marks kept */
    rewrites("o^ʊ ɜː", 1, "ɔʊ ɜː");                        /* US rules not applied */
}

/* Piece function for the split tests: upper-cases ASCII letters and brackets the piece. */
static int bracket(void *ctx, const char *piece, char **out, ck_error *err)
{
    (void)ctx;
    (void)err;
    *out = malloc(strlen(piece) + 3);
    sprintf(*out, "<%s>", piece);
    return CK_OK;
}

static void punctuates(const char *in, const char *want)
{
    char *got = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_espeak_punctuate(in, bracket, NULL, &got, NULL), CK_OK);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "    punctuate(%s) = %s, want %s\n", in, got, want);
    }
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static void test_punctuation_split(void)
{
    punctuates("Hello, world.", "<Hello>, <world>.");
    punctuates("He said \"hi\" (twice)!", "<He said> \"<hi>\" (<twice>)!");
    punctuates("  wait ...  what?  ", "<wait>... <what>?");
    punctuates("a;b:c", "<a>;<b>:<c>");
    punctuates("\xE2\x80\x9CYes\xE2\x80\x9D \xE2\x80\x94 no\xE2\x80\xA6",
               "\xE2\x80\x9C<Yes>\xE2\x80\x9D \xE2\x80\x94 <no>\xE2\x80\xA6");
    punctuates("don\xE2\x80\x99t \xC2\xABgo\xC2\xBB [now] a\xE2\x80\x93" "b",
               "<don't> \xE2\x80\x9C<go>\xE2\x80\x9D (<now>) <a>\xE2\x80\x94<b>");
    punctuates("...", "...");
    punctuates("", "");
    punctuates("plain words", "<plain words>");
}

static void test_punctuation_rejections(void)
{
    char *out = NULL;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_espeak_punctuate("a\xED\xA0\x80", bracket, NULL, &out, &err), CK_E_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "column 2"));
    CU_ASSERT_EQUAL(ck_espeak_punctuate(NULL, bracket, NULL, &out, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_espeak_rewrite(NULL, 0, &out, NULL), CK_E_ARG);
}

#ifdef CK_HAVE_ESPEAK
static void phonemizes(ck_espeak *g, const char *text, const char *want)
{
    char *got = NULL;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL_FATAL(ck_espeak_phonemize(g, text, &got, &err), CK_OK);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "    phonemize(%s) = %s, want %s\n", text, got, want);
    }
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

/* Expected strings: espeak-ng 1.51 IPA (e.g. "həlˈo^ʊ wˈɜːld" for en-us) put through the rules. */
static void test_espeak_en_us(void)
{
    ck_espeak *g = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_espeak_open(&g, "en-us", NULL), CK_OK);
    CU_ASSERT_EQUAL(strncmp(ck_espeak_version(g), "espeak-ng 1.", 12), 0);
    phonemizes(g, "Hello world.", "həlˈO wˈɜɹld.");
    phonemizes(g, "Hello, world! How are you?", "həlˈO, wˈɜɹld! hˈW ɑɹ ju?");
    phonemizes(g, "button bottle water", "bˈʌtᵊn bˈɑTᵊl wˈɔTəɹ");
    phonemizes(g, "bird nurse church joy", "bˈɜɹd nˈɜɹs ʧˈɜɹʧ ʤˈY");
    phonemizes(g, "A business that makes nothing but money is a poor business.",
               "ə bˈɪznəs ðæt mˌAks nˈʌθɪŋ bˌʌt mˈʌni ɪz ə pˈʊɹ bˈɪznəs.");
    phonemizes(g, "   ", "");
    ck_espeak_close(g);
}

static void test_espeak_en_gb(void)
{
    ck_espeak *g = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_espeak_open(&g, "en-gb", NULL), CK_OK);
    phonemizes(g, "Hello world.", "həlˈQ wˈɜːld.");
    phonemizes(g, "hair care, button", "hˈɛː kˈɛː, bˈʌtən");
    ck_espeak_close(g);
}

/* Every code point espeak-ng + rules produce for 30 real quotes is in the vocab. */
static void test_quotes_stay_in_vocab(void)
{
    const char *langs[] = {"en-us", "en-gb"};
    for (size_t l = 0; l < 2; l++) {
        ck_espeak *g = NULL;
        CU_ASSERT_EQUAL_FATAL(ck_espeak_open(&g, langs[l], NULL), CK_OK);
        FILE *f = fopen(ck_test_path("tests/fixtures/corpus/quotes_30.txt"), "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        char line[2048];
        size_t lines = 0;
        while (fgets(line, sizeof line, f) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            char *ph = NULL;
            CU_ASSERT_EQUAL_FATAL(ck_espeak_phonemize(g, line, &ph, NULL), CK_OK);
            size_t pos = 0, n = strlen(ph);
            uint32_t cp = 0;
            CU_ASSERT_TRUE(n > 0);
            while (pos < n && ck_utf8_next(ph, n, &pos, &cp) == CK_OK) {
                if (ck_vocab_id(cp) < 0) {
                    fprintf(stderr, "    %s: U+%04X not in vocab in \"%s\"\n", langs[l], cp, ph);
                    CU_FAIL("symbol outside the vocab");
                }
            }
            free(ph);
            lines++;
        }
        fclose(f);
        CU_ASSERT_EQUAL(lines, 30);
        ck_espeak_close(g);
    }
}

static void *phonemize_many(void *arg)
{
    ck_espeak *g = arg;
    for (int i = 0; i < 20; i++) {
        char *ph = NULL;
        if (ck_espeak_phonemize(g, "The quick brown fox, again.", &ph, NULL) != CK_OK ||
            strcmp(ph, "ðə kwˈɪk bɹˈWn fˈɑks, əɡˈɛn.") != 0) {
            free(ph);
            return "mismatch";
        }
        free(ph);
    }
    return NULL;
}

static void test_two_threads_share_espeak(void)
{
    ck_espeak *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_espeak_open(&a, "en-us", NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_espeak_open(&b, "en-us", NULL), CK_OK);
    pthread_t ta, tb;
    void *ra = "unset", *rb = "unset";
    pthread_create(&ta, NULL, phonemize_many, a);
    pthread_create(&tb, NULL, phonemize_many, b);
    pthread_join(ta, &ra);
    pthread_join(tb, &rb);
    CU_ASSERT_PTR_NULL(ra);
    CU_ASSERT_PTR_NULL(rb);
    ck_espeak_close(a);
    ck_espeak_close(b);
}
#endif

static void test_open_rejects_unknown_lang(void)
{
    ck_espeak *g = (ck_espeak *)&g;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_espeak_open(&g, "fr", &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(g);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "lang \"fr\""));
    CU_ASSERT_PTR_NULL(ck_espeak_version(NULL));
    ck_espeak_close(NULL);
}

#ifdef CK_HAVE_ESPEAK
#define ESPEAK_CASES                                                                            \
    {"espeak en-us sentences", test_espeak_en_us},                                              \
    {"espeak en-gb sentences", test_espeak_en_gb},                                              \
    {"30 quotes stay in vocab", test_quotes_stay_in_vocab},                                     \
    {"two threads share espeak-ng", test_two_threads_share_espeak},
#else
#define ESPEAK_CASES
#endif

CK_TEST_MAIN("espeak", {"rules: all English", test_rules_all_english}, {"rules: en-us", test_rules_us},
             {"rules: en-gb", test_rules_gb}, {"punctuation split", test_punctuation_split},
             {"punctuation rejections", test_punctuation_rejections}, ESPEAK_CASES
             {"open rejects unknown lang", test_open_rejects_unknown_lang})
