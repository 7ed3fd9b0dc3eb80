/* test_misaki_speech.c - text people feed a speech engine (issue 30 item 5), through the reader's
 * text format (misaki, en-us, the default heuristic tagger): inline [word](/phonemes/) overrides,
 * compatibility forms, letters read as letters, "US" beside "us", possessives after a final s,
 * emoji and symbols, a spaced hyphen as a dash. Each expected string is misaki 0.9.4's own output
 * for that line (the targeted golden named beside it, tests/fixtures/misaki/targeted_us.jsonl,
 * whose tags a real tagger gives), or reasoned from misaki's source where no golden covers it. */
#include "ck_test.h"
#include "reader.h"
#include "strbuf.h"

static char g_warning[400];
static size_t g_warnings;

static void on_warn(void *ctx, const char *message)
{
    (void)ctx;
    if (g_warnings++ == 0) {
        snprintf(g_warning, sizeof g_warning, "%s", message);   /* the first */
    }
}

/* One line through a misaki text reader; the chunks joined by "|" (malloc'd), NULL on error. */
static char *read_line(const char *text)
{
    FILE *f = fmemopen((void *)text, strlen(text), "rb");
    ck_reader_options o = {CK_INPUT_TEXT, "en-us", 0, 0, on_warn, NULL, NULL, 0, "misaki", NULL};
    ck_reader *r = NULL;
    ck_error err = {CK_OK, ""};
    g_warnings = 0;
    g_warning[0] = '\0';
    if (ck_reader_open(&r, f, "t.txt", &o, &err) != CK_OK) {
        fprintf(stderr, "    %s\n", err.message);
        fclose(f);
        return NULL;
    }
    ck_sequence *seqs = NULL;
    size_t n = 0;
    ck_strbuf b = {0};
    ck_strbuf_puts(&b, "");
    if (ck_reader_next(r, &seqs, &n, &err) == 1) {
        for (size_t i = 0; i < n; i++) {
            ck_strbuf_puts(&b, i > 0 ? "|" : "");
            ck_strbuf_puts(&b, seqs[i].phonemes);
        }
    }
    ck_sequences_free(seqs, n);
    ck_reader_close(r);
    fclose(f);
    return ck_strbuf_take(&b);
}

typedef struct {
    const char *text;   /* one input line */
    const char *want;   /* the phonemes the model gets */
} speech_case;

/* Every case gives exactly its phonemes; warns when want_warnings says so (-1: any count). */
static void check_cases(const speech_case *cases, size_t n, long want_warnings)
{
    for (size_t i = 0; i < n; i++) {
        char *got = read_line(cases[i].text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (strcmp(got, cases[i].want) != 0) {
            fprintf(stderr, "    %s: got %s, want %s\n", cases[i].text, got, cases[i].want);
        }
        CU_ASSERT_STRING_EQUAL(got, cases[i].want);
        if (want_warnings >= 0 && g_warnings != (size_t)want_warnings) {
            fprintf(stderr, "    %s: %zu warnings, first: %s\n", cases[i].text, g_warnings, g_warning);
        }
        CU_ASSERT_TRUE(want_warnings < 0 || g_warnings == (size_t)want_warnings);
        free(got);
    }
}

/* [word](/phonemes/): the phonemes are Kokoro symbols, not text; the reader's script filter
 * (Latin only, for espeak-ng's sake) must let them through. */
static void test_inline_override(void)
{
    static const speech_case cases[] = {
        {"[Kokoro](/kˈOkəɹO/) is a model.\n", "kˈOkəɹO ɪz ɐ mˈɑdᵊl."},              /* t341 */
        {"I love [New York](/nˈu jˈɔɹk/) a lot.\n", "ˌI lˈʌv nˈu jˈɔɹk ɐ lˈɑt."},   /* t342 */
        {"Say [hi](/hˈI/)!\n", "sˈA hˈI!"},                                         /* t352 */
        {"[Misaki](/misˈɑki/) and [Kokoro](/kˈOkəɹO/).\n", "misˈɑki ænd kˈOkəɹO."}, /* t353 */
    };
    check_cases(cases, sizeof cases / sizeof cases[0], 0);
    /* outside an override, IPA in text is still dropped and reported */
    char *got = read_line("I said /ɹ/ twice.\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_PTR_NOT_NULL(strstr(g_warning, "U+0279"));
    free(got);
}

/* NFKC compatibility forms: ligatures fold to their letters (misaki: NFKC in the lexicon). */
static void test_compatibility_forms(void)
{
    static const speech_case cases[] = {
        {"The \xEF\xAC\x81nal \xEF\xAC\x82ight.\n", "ðə fˈInᵊl flˈIt."},        /* t369 */
        {"An o\xEF\xAC\x83\x63\x65 a\xEF\xAC\x80ord.\n", "ɐn ˈɔfəs əfˈɔɹd."},
    };
    check_cases(cases, sizeof cases / sizeof cases[0], 0);
}

/* Letters read as letters: a real tagger tags them NN/NNP, misaki then says "ˈA", not "ɐ". */
static void test_letters(void)
{
    static const speech_case cases[] = {
        {"Plan A failed, so we tried plan B.\n", "plˈæn ˈA fˈAld, sˌO wi tɹˈId plˈæn bˈi"}, /* t004 */
        {"He got an A!\n", "hˌi ɡɑt ɐn ˈA!"},                                         /* t006 */
        {"Vitamin A helps your eyes.\n", "vˈITəmən ˈA hˈɛlps jʊɹ ˈIz."},             /* t008 */
        {"Draw a line from point a to point b.\n",
         "dɹˈɔ ɐ lˈIn fɹʌm pˈYnt ˈA tə pˈYnt bˈi"},                                    /* t012 */
        {"Exit A\n", "ˈɛɡzət ˈA"},
        {"a lowercase a\n", "ɐ lˈOəɹkˌAs ˈA"},
        {"The letter a is a vowel.\n", "ðə lˈɛTəɹ ˈA ɪz ɐ vˈWᵊl."},
        /* quotes line 1034; "B." is one token, like t012's "b." */
        {"Logic will get you from A to B.\n", "lˈɑʤɪk wɪl ɡɛt ju fɹʌm ˈA tə bˈi"},
        /* the article stays the article */
        {"A dog barked at a man.\n", "ɐ dˈɔɡ bˈɑɹkt æt ɐ mˈæn."},                   /* t003 */
        {"He said \"A dog barked.\"\n", "hˌi sˈɛd “ɐ dˈɔɡ bˈɑɹkt.”"},
        {"I AM A TEACHER.\n", "ˌI æm ɐ tˈiʧəɹ."},
        /* a regnal "I" after a name inside the sentence: the numeral */
        {"After Henry I came Stephen.\n", "ˈæftəɹ hˈɛnɹi ˈI kˈAm stˈivᵊn."},
        {"World War I ended in 1918.\n", "wˈɜɹld wˈɔɹ ˈI ˈɛndᵻd ɪn nˌIntˈin ˌAtˈin."}, /* t028 */
        /* misaki-divergences.md section 7: after the sentence's first word "I" stays the
         * pronoun (misaki with a real tagger: "ˈI", t029), as in "Yesterday I read" */
        {"Elizabeth I was queen.\n", "əlˈɪzəbəθ ˌI wʌz kwˈin."},
        {"Yesterday I read the book.\n", "jˈɛstəɹdˌA ˌI ɹˈɛd ðə bˈʊk."},             /* t096 */
    };
    check_cases(cases, sizeof cases / sizeof cases[0], 0);
}

/* "US" the country is spelled (NNP); "us" and an all-capitals "US" are the pronoun. */
static void test_us(void)
{
    static const speech_case cases[] = {
        {"The US is large.\n", "ðə jˌuˈɛs ɪz lˈɑɹʤ."},              /* t152 */
        {"The US team won.\n", "ðə jˌuˈɛs tˈim wˈʌn."},             /* t153 */
        {"LET US GO.\n", "lˈɛt ˈʌs ɡˈO."},                         /* t151 */
        {"The US army helped us.\n", "ðə jˌuˈɛs ˈɑɹmi hˈɛlpt ˌʌs."},
    };
    check_cases(cases, sizeof cases / sizeof cases[0], 0);
}

/* A "'" after a final s is the possessive (POS): no closing quote is read. */
static void test_possessive_after_s(void)
{
    static const speech_case cases[] = {
        {"James' hat fell.\n", "ʤˈAmz hˈæt fˈɛl."},                    /* t191 */
        {"The dogs' bowls are empty.\n", "ðə dˈɔɡz bˈOlz ɑɹ ˈɛmpti."},  /* t193 */
        {"Charles' book\n", "ʧˈɑɹlz bˈʊk"},
        /* a quote that is open is closed, as before */
        {"She said 'yes' twice.\n", "ʃˌi sˈɛd “jˈɛs” twˈIs."},          /* t276 */
        {"'Tis the dogs'\n", "“tˈiz ðə dˈɔɡz”"},
    };
    check_cases(cases, sizeof cases / sizeof cases[0], 0);
}

/* A spaced hyphen or en dash between words is a dash (tag ":"): misaki reads it "—". */
static void test_spaced_hyphen(void)
{
    static const speech_case cases[] = {
        {"Wait - what now?\n", "wˈAt — wˌʌt nˈW?"},                     /* t282 */
        {"Wait \xE2\x80\x93 what now?\n", "wˈAt — wˌʌt nˈW?"},          /* t283 */
        {"A well-known fact.\n", "ɐ wˌɛlnˈOn fˈækt."},                   /* t301: a hyphen */
    };
    check_cases(cases, sizeof cases / sizeof cases[0], 0);
}

/* Letters of other scripts are still dropped and reported (espeak-ng 1.51's mixed-script bug). */
static void test_other_scripts_dropped(void)
{
    char *got = read_line("Say \xD5\x87\xC9\x99" "c now.\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_PTR_NOT_NULL(strstr(g_warning, "U+0547"));
    free(got);
}

#ifdef CK_HAVE_ESPEAK
/* Emoji and symbols: misaki finds them in no lexicon and hands them to espeak-ng, which names
 * them; the reader lets them through (they have no script) and reports each fallback. */
static void test_emoji_and_symbols(void)
{
    static const speech_case cases[] = {
        {"I love it \xF0\x9F\x98\x80 so much.\n",
         "ˌI lˈʌv ɪt ɡɹˈɪnɪŋ fˈAs sˌO mˈʌʧ."},                                           /* t376 */
        {"The \xF0\x9F\x87\xBA\xF0\x9F\x87\xB8 flag\n", "ðə junˈITᵻd stˈAts flˈæɡ"},
        /* one group with its word: the whole "love😀" goes to espeak-ng, as misaki sends it */
        {"I love\xF0\x9F\x98\x80 it.\n", "ˌI lˈʌv ɡɹˈɪnɪŋ fˈAs ɪt."},
        {"20\xC2\xB0" "C \xC2\xB1" "1 \xC2\xA9\n", "twˈɛnti dᵻɡɹˈiz sˈi plˈʌs ɔɹ mˈInəs wˈʌn kˈɑpɪɹˌIt"},
    };
    check_cases(cases, sizeof cases / sizeof cases[0], -1);
    char *got = read_line("I love it \xF0\x9F\x98\x80 so much.\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(g_warning, "phonemized by espeak-ng"));
    free(got);
}
#define EMOJI_CASE {"emoji and symbols said aloud", test_emoji_and_symbols},
#else
#define EMOJI_CASE
#endif

CK_TEST_MAIN("misaki_speech", {"inline [word](/phonemes/) override", test_inline_override},
             {"compatibility forms (ligatures)", test_compatibility_forms},
             {"letters read as letters", test_letters}, {"US beside us", test_us},
             {"possessive after a final s", test_possessive_after_s},
             {"spaced hyphen as a dash", test_spaced_hyphen}, EMOJI_CASE
             {"the reader still drops other scripts", test_other_scripts_dropped})
