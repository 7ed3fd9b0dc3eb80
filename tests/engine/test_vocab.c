/* test_vocab.c - the embedded vocabulary: exact ids, reverse symbols, agreement with Kokoro's
 * config.json (tests/fixtures/kokoro); vocabularies built with ck_vocab_new/ck_vocab_add: lookups
 * and every rejection with its message. */
#include <cjson/cJSON.h>

#include "ck_test.h"
#include "utf8.h"
#include "vocab.h"

static void test_known_ids(void)
{
    CU_ASSERT_EQUAL(ck_vocab_id(';'), 1);
    CU_ASSERT_EQUAL(ck_vocab_id(' '), 16);
    CU_ASSERT_EQUAL(ck_vocab_id('A'), 24);
    CU_ASSERT_EQUAL(ck_vocab_id(0x0303), 17);   /* combining tilde */
    CU_ASSERT_EQUAL(ck_vocab_id(0x0259), 83);   /* ə */
    CU_ASSERT_EQUAL(ck_vocab_id(0x02C8), 156);  /* ˈ */
    CU_ASSERT_EQUAL(ck_vocab_id(0x1D7B), 177);  /* ᵻ, the last id */
    CU_ASSERT_EQUAL(ck_vocab_id(0xAB67), 23);   /* ꭧ, the largest code point */
}

static void test_unknown_code_points(void)
{
    CU_ASSERT_EQUAL(ck_vocab_id('B'), -1);
    CU_ASSERT_EQUAL(ck_vocab_id('g'), -1);      /* Kokoro uses ɡ U+0261, not ASCII g */
    CU_ASSERT_EQUAL(ck_vocab_id(0), -1);
    CU_ASSERT_EQUAL(ck_vocab_id('\t'), -1);
    CU_ASSERT_EQUAL(ck_vocab_id(0x110000), -1);
    CU_ASSERT_EQUAL(ck_vocab_id(0xFFFFFFFFu), -1);
}

static void test_symbols(void)
{
    CU_ASSERT_STRING_EQUAL(ck_vocab_symbol(83), "\xC9\x99");
    CU_ASSERT_STRING_EQUAL(ck_vocab_symbol(16), " ");
    CU_ASSERT_STRING_EQUAL(ck_vocab_symbol(177), "\xE1\xB5\xBB");
    CU_ASSERT_PTR_NULL(ck_vocab_symbol(0));
    CU_ASSERT_PTR_NULL(ck_vocab_symbol(7));     /* unused id */
    CU_ASSERT_PTR_NULL(ck_vocab_symbol(178));
    CU_ASSERT_PTR_NULL(ck_vocab_symbol(-1));
}

static void test_table_is_a_bijection(void)
{
    int seen[CK_VOCAB_SIZE] = {0};
    uint32_t prev = 0;
    for (size_t row = 0; row < CK_VOCAB_SYMBOLS; row++) {
        int id = 0;
        uint32_t cp = ck_vocab_entry(row, &id);
        CU_ASSERT_TRUE(row == 0 || cp > prev);
        CU_ASSERT_TRUE(id >= 1 && id < CK_VOCAB_SIZE);
        if (id >= 1 && id < CK_VOCAB_SIZE) {
            seen[id]++;
            char u[5] = {0};
            ck_utf8_encode(cp, u);
            CU_ASSERT_STRING_EQUAL(ck_vocab_symbol(id), u);
        }
        CU_ASSERT_EQUAL(ck_vocab_id(cp), id);
        prev = cp;
    }
    int used = 0;
    for (int id = 0; id < CK_VOCAB_SIZE; id++) {
        CU_ASSERT_TRUE(seen[id] <= 1);
        used += seen[id];
        CU_ASSERT_EQUAL(seen[id] == 1, ck_vocab_symbol(id) != NULL);
    }
    CU_ASSERT_EQUAL(used, 114);
    int id = 0;
    CU_ASSERT_EQUAL(ck_vocab_entry(CK_VOCAB_SYMBOLS, &id), 0);
    CU_ASSERT_EQUAL(id, -1);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

static void test_matches_config(void)
{
    char *text = slurp(ck_test_path("tests/fixtures/kokoro/config.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cJSON *config = cJSON_Parse(text);
    cJSON *vocab = cJSON_GetObjectItemCaseSensitive(config, "vocab");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(vocab), CK_VOCAB_SYMBOLS);
    CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(config, "n_token")->valueint, CK_VOCAB_SIZE);
    for (cJSON *item = vocab->child; item != NULL; item = item->next) {
        size_t pos = 0;
        uint32_t cp = 0;
        CU_ASSERT_EQUAL(ck_utf8_next(item->string, strlen(item->string), &pos, &cp), CK_OK);
        CU_ASSERT_EQUAL(pos, strlen(item->string));
        CU_ASSERT_EQUAL(ck_vocab_id(cp), item->valueint);
        CU_ASSERT_STRING_EQUAL(ck_vocab_symbol(item->valueint), item->string);
    }
    cJSON_Delete(config);
    free(text);
}

/* The object view of the embedded table answers exactly like the plain functions. */
static void test_embedded_object(void)
{
    const ck_vocab *v = ck_vocab_embedded();
    CU_ASSERT_EQUAL(ck_vocab_size(v), 178);
    CU_ASSERT_EQUAL(ck_vocab_symbols(v), 114);
    CU_ASSERT_EQUAL(ck_vocab_find(v, 0x0259), 83);
    CU_ASSERT_EQUAL(ck_vocab_find(v, 'g'), -1);
    CU_ASSERT_STRING_EQUAL(ck_vocab_text(v, 177), "\xE1\xB5\xBB");
    CU_ASSERT_PTR_NULL(ck_vocab_text(v, 7));
    int id = 0;
    CU_ASSERT_EQUAL(ck_vocab_at(v, 113, &id), 0xAB67);
    CU_ASSERT_EQUAL(id, 23);
    ck_vocab_free((ck_vocab *)v); /* a no-op */
    CU_ASSERT_EQUAL(ck_vocab_find(ck_vocab_embedded(), ' '), 16);
    CU_ASSERT_EQUAL(ck_vocab_size(NULL), 0);
    CU_ASSERT_EQUAL(ck_vocab_find(NULL, ' '), -1);
}

/* Symbols added in any order are found by code point and by id; rows stay in code point order. */
static void test_built_vocab(void)
{
    ck_vocab *v = NULL;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL_FATAL(ck_vocab_new(&v, 6, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_vocab_add(v, "\xE3\x84\x85", 5, &err), CK_OK); /* ㄅ U+3105 */
    CU_ASSERT_EQUAL(ck_vocab_add(v, "b", 1, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_vocab_add(v, " ", 4, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_vocab_add(v, "\xF0\x9F\x98\x80", 2, &err), CK_OK); /* U+1F600, 4 bytes */
    CU_ASSERT_EQUAL(ck_vocab_size(v), 6);
    CU_ASSERT_EQUAL(ck_vocab_symbols(v), 4);
    CU_ASSERT_EQUAL(ck_vocab_find(v, 0x3105), 5);
    CU_ASSERT_EQUAL(ck_vocab_find(v, 'b'), 1);
    CU_ASSERT_EQUAL(ck_vocab_find(v, ' '), 4);
    CU_ASSERT_EQUAL(ck_vocab_find(v, 0x1F600), 2);
    CU_ASSERT_EQUAL(ck_vocab_find(v, 'a'), -1);
    CU_ASSERT_STRING_EQUAL(ck_vocab_text(v, 5), "\xE3\x84\x85");
    CU_ASSERT_STRING_EQUAL(ck_vocab_text(v, 2), "\xF0\x9F\x98\x80");
    CU_ASSERT_PTR_NULL(ck_vocab_text(v, 3));
    CU_ASSERT_PTR_NULL(ck_vocab_text(v, 0));
    CU_ASSERT_PTR_NULL(ck_vocab_text(v, 6));
    const uint32_t order[] = {' ', 'b', 0x3105, 0x1F600};
    const int ids[] = {4, 1, 5, 2};
    for (size_t row = 0; row < 4; row++) {
        int id = 0;
        CU_ASSERT_EQUAL(ck_vocab_at(v, row, &id), order[row]);
        CU_ASSERT_EQUAL(id, ids[row]);
    }
    int id = 0;
    CU_ASSERT_EQUAL(ck_vocab_at(v, 4, &id), 0);
    CU_ASSERT_EQUAL(id, -1);
    ck_vocab_free(v);
    ck_vocab_free(NULL);
}

static void add_fails(ck_vocab *v, const char *utf8, int id, const char *message)
{
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_vocab_add(v, utf8, id, &err), CK_E_ARG);
    if (strcmp(err.message, message) != 0) {
        fprintf(stderr, "    message \"%s\", want \"%s\"\n", err.message, message);
    }
    CU_ASSERT_STRING_EQUAL(err.message, message);
}

static void test_built_vocab_rejections(void)
{
    ck_vocab *v = (ck_vocab *)&v;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_vocab_new(&v, 1, &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(v);
    CU_ASSERT_STRING_EQUAL(err.message, "vocab: 1 ids, expected 2..32768");
    CU_ASSERT_EQUAL(ck_vocab_new(&v, 32769, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL_FATAL(ck_vocab_new(&v, 4, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_vocab_add(v, "a", 2, NULL), CK_OK);
    add_fails(v, "", 1, "symbol is empty, expected one code point");
    add_fails(v, "ab", 1, "symbol is 2 code points, expected one");
    add_fails(v, "\xC0\x80", 1, "invalid UTF-8");
    add_fails(v, "\t", 1, "symbol U+0009 is a control character");
    add_fails(v, "\x7F", 1, "symbol U+007F is a control character");
    add_fails(v, "b", 0, "id 0: expected 1..3 (0 is the boundary)");
    add_fails(v, "b", 4, "id 4: expected 1..3 (0 is the boundary)");
    add_fails(v, "b", 2, "id 2 already names U+0061 'a'");
    add_fails(v, "a", 3, "U+0061 'a' already has id 2");
    add_fails((ck_vocab *)ck_vocab_embedded(), "b", 7, "vocab: null or embedded vocabulary, or null symbol");
    CU_ASSERT_EQUAL(ck_vocab_symbols(v), 1);   /* nothing rejected was added */
    CU_ASSERT_EQUAL(ck_vocab_find(v, 'b'), -1);
    ck_vocab_free(v);
}

CK_TEST_MAIN("vocab", {"known ids", test_known_ids}, {"unknown code points", test_unknown_code_points},
             {"symbols", test_symbols}, {"table is a bijection", test_table_is_a_bijection},
             {"matches tests/fixtures/kokoro/config.json", test_matches_config},
             {"embedded object", test_embedded_object}, {"built vocabulary", test_built_vocab},
             {"built vocabulary rejections", test_built_vocab_rejections})
