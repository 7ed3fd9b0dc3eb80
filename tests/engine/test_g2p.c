/* test_g2p.c - the G2P interface (g2p.h) over both backends, and the language names (lang.h): names
 * parsed and refused, each backend's chunk policy, misaki's fallback words in text order. */
#include <string.h>

#include "ck_test.h"
#include "g2p.h"
#include "lang.h"

static void test_names(void)
{
    ck_lang lang = CK_LANG_EN_GB;
    CU_ASSERT_EQUAL(ck_lang_parse(NULL, &lang, NULL), CK_OK);
    CU_ASSERT_EQUAL(lang, CK_LANG_EN_US);
    CU_ASSERT_STRING_EQUAL(ck_lang_name(lang), CK_LANG_DEFAULT);
    CU_ASSERT_EQUAL(ck_lang_parse("en-gb", &lang, NULL), CK_OK);
    CU_ASSERT_STRING_EQUAL(ck_lang_name(lang), "en-gb");
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_lang_parse("fr", &lang, &err), CK_E_ARG);
    CU_ASSERT_STRING_EQUAL(err.message, "lang \"fr\": expected \"en-us\" or \"en-gb\"");
    CU_ASSERT_EQUAL(lang, CK_LANG_EN_GB);

    ck_g2p_kind kind = CK_G2P_ESPEAK;
    CU_ASSERT_EQUAL(ck_g2p_kind_parse(NULL, &kind, NULL), CK_OK);
    CU_ASSERT_EQUAL(kind, CK_G2P_MISAKI);
    CU_ASSERT_EQUAL(ck_g2p_kind_parse("espeak", &kind, NULL), CK_OK);
    CU_ASSERT_EQUAL(kind, CK_G2P_ESPEAK);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_g2p_kind_parse("festival", &kind, &err), CK_E_ARG);
    CU_ASSERT_STRING_EQUAL(err.message, "g2p \"festival\": expected \"misaki\" or \"espeak\"");
}

static void test_open_rejections(void)
{
    ck_g2p *g = (ck_g2p *)&g;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_g2p_open(&g, CK_G2P_MISAKI, "fr", NULL, &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(g);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "g2p: lang \"fr\""));
    CU_ASSERT_EQUAL(ck_g2p_open(&g, (ck_g2p_kind)7, "en-us", NULL, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_g2p_open(NULL, CK_G2P_MISAKI, "en-us", NULL, NULL), CK_E_ARG);
    ck_g2p_result res;
    CU_ASSERT_EQUAL(ck_g2p_phonemize(NULL, "a", &res, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(res.n_chunks, 0);
    ck_g2p_result_free(&res);
    CU_ASSERT_PTR_NULL(ck_g2p_info_of(NULL));
    CU_ASSERT_EQUAL(ck_g2p_reads(NULL, '2'), 0);
    CU_ASSERT_PTR_NULL(ck_g2p_version(NULL));
    const char *key = NULL, *value = NULL;
    CU_ASSERT_EQUAL(ck_g2p_meta(NULL, 0, &key, &value), 0);
    ck_g2p_close(NULL);
}

/* misaki: Kokoro's chunks (a 600-word line gives more than one), metadata, the version. */
static void test_misaki(void)
{
    ck_g2p *g = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_g2p_open(&g, CK_G2P_MISAKI, "en-us", NULL, NULL), CK_OK);
    CU_ASSERT_STRING_EQUAL(ck_g2p_info_of(g)->name, "misaki");
    CU_ASSERT_EQUAL(ck_g2p_reads(g, 0xFF12), 1);  /* fullwidth 2 */
    CU_ASSERT_EQUAL(ck_g2p_reads(g, 0x0416), 0);  /* Cyrillic */
    CU_ASSERT_EQUAL(ck_g2p_info_of(g)->kokoro_chunks, 1);
    CU_ASSERT_EQUAL(strncmp(ck_g2p_version(g), "misaki (misaki 0.9.4", 20), 0);
    const char *key = NULL, *value = NULL;
    CU_ASSERT_EQUAL(ck_g2p_meta(g, 0, &key, &value), 1);
    CU_ASSERT_STRING_EQUAL(key, "g2p_backend");
    CU_ASSERT_STRING_EQUAL(value, "misaki");
    ck_g2p_result res;
    CU_ASSERT_EQUAL_FATAL(ck_g2p_phonemize(g, "Hello world.", &res, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(res.n_chunks, 1);
    CU_ASSERT_STRING_EQUAL(res.chunks[0], "həlˈO wˈɜɹld.");
    CU_ASSERT_EQUAL(res.n_unresolved, 0);
    ck_g2p_result_free(&res);
    char line[4000] = "";
    for (int i = 0; i < 150; i++) {
        strcat(line, "This is a sentence. ");
    }
    CU_ASSERT_EQUAL_FATAL(ck_g2p_phonemize(g, line, &res, NULL), CK_OK);
    CU_ASSERT(res.n_chunks > 1);
    for (size_t i = 0; i < res.n_chunks; i++) {
        CU_ASSERT(strlen(res.chunks[i]) > 0);
    }
    ck_g2p_result_free(&res);
    ck_g2p_close(g);
}

#ifdef CK_HAVE_ESPEAK
/* misaki's fallback words come in text order; espeak gives one chunk per line, "" included. */
static void test_fallbacks_and_espeak(void)
{
    ck_g2p *g = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_g2p_open(&g, CK_G2P_MISAKI, "en-us", NULL, NULL), CK_OK);
    ck_g2p_result res;
    CU_ASSERT_EQUAL_FATAL(ck_g2p_phonemize(g, "Zorblax met Quuxite.", &res, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(res.n_fallbacks, 2);
    CU_ASSERT_STRING_EQUAL(res.fallbacks[0].text, "Zorblax");
    CU_ASSERT_STRING_EQUAL(res.fallbacks[1].text, "Quuxite");
    CU_ASSERT_PTR_NOT_NULL(res.fallbacks[0].phonemes);
    ck_g2p_result_free(&res);
    ck_g2p_close(g);

    CU_ASSERT_EQUAL_FATAL(ck_g2p_open(&g, CK_G2P_ESPEAK, NULL, NULL, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_g2p_info_of(g)->kokoro_chunks, 0);
    CU_ASSERT_EQUAL(ck_g2p_reads(g, 0xFF12), 0);
    CU_ASSERT_EQUAL(strncmp(ck_g2p_version(g), "espeak-ng 1.", 12), 0);
    CU_ASSERT_EQUAL(ck_g2p_meta(g, 0, &(const char *){NULL}, &(const char *){NULL}), 0);
    CU_ASSERT_EQUAL_FATAL(ck_g2p_phonemize(g, "...", &res, NULL), CK_OK);
    CU_ASSERT_EQUAL(res.n_chunks, 1);
    CU_ASSERT_EQUAL(res.n_fallbacks + res.n_unresolved, 0);
    ck_g2p_result_free(&res);
    ck_g2p_close(g);
}
#define ESPEAK_CASES {"misaki fallbacks, espeak chunks", test_fallbacks_and_espeak},
#else
#define ESPEAK_CASES
#endif

CK_TEST_MAIN("g2p", {"lang and g2p names", test_names}, {"open rejections", test_open_rejections},
             {"misaki", test_misaki}, ESPEAK_CASES)
