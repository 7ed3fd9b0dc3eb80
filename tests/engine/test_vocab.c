/* test_vocab.c - the embedded vocabulary: exact ids, reverse symbols, and agreement with
 * ../shared/kokoro/config.json when that file is present. */
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

static void test_matches_shared_config(void)
{
    char *text = slurp(ck_test_path("../shared/kokoro/config.json"));
    if (text == NULL) {
        printf("\n    NOTICE: ../shared/kokoro/config.json not found; table check skipped\n");
        return;
    }
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

CK_TEST_MAIN("vocab", {"known ids", test_known_ids}, {"unknown code points", test_unknown_code_points},
             {"symbols", test_symbols}, {"table is a bijection", test_table_is_a_bijection},
             {"matches ../shared/kokoro/config.json", test_matches_shared_config})
