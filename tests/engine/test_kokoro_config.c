/* test_kokoro_config.c - Kokoro's config.json (tests/fixtures/kokoro): exact fields, vocab and
 * SHA-256; the dims of the embedded circuit; each mismatch and each malformed file with its exact
 * message. Variants are made from the fixture text, so each case changes one field. */
#include <cjson/cJSON.h>

#include "ck_test.h"
#include "circuit_default.h"
#include "kokoro_config.h"

#define FIXTURE "tests/fixtures/kokoro/config.json"
#define FIXTURE_SHA "1608a9d7b19dbbfe32e44a74e2c794271707cfe837bde6f3b352f4324f4fc2ef"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = f != NULL ? malloc(1 << 20) : NULL;
    *n = buf != NULL ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    if (buf != NULL) {
        buf[*n] = '\0';
    }
    if (f != NULL) {
        fclose(f);
    }
    return buf;
}

static ck_model_dims embedded_dims(void)
{
    ck_circuit c;
    ck_model_dims d;
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load_default(&c, NULL, NULL), CK_OK);
    ck_model_dims_of_circuit(&c, &d);
    ck_circuit_free(&c);
    return d;
}

static void test_fixture_fields(void)
{
    ck_kokoro_config c;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL_FATAL(ck_kokoro_config_load(&c, ck_test_path(FIXTURE), &err), CK_OK);
    CU_ASSERT_STRING_EQUAL(c.sha256, FIXTURE_SHA);
    CU_ASSERT_EQUAL(c.n_token, 178);
    CU_ASSERT_EQUAL(c.hidden_size, 768);
    CU_ASSERT_EQUAL(c.num_attention_heads, 12);
    CU_ASSERT_EQUAL(c.intermediate_size, 2048);
    CU_ASSERT_EQUAL(c.max_position_embeddings, 512);
    CU_ASSERT_EQUAL(c.num_hidden_layers, 12);
    CU_ASSERT_EQUAL(c.embedding_size, 128);   /* absent: ALBERT's default */
    CU_ASSERT_EQUAL(c.hidden_dim, 512);
    CU_ASSERT_EQUAL(ck_vocab_size(c.vocab), 178);
    CU_ASSERT_EQUAL_FATAL(ck_vocab_symbols(c.vocab), 114);
    const ck_vocab *e = ck_vocab_embedded();
    for (size_t row = 0; row < 114; row++) {   /* the same table as the embedded one */
        int a = 0, b = 0;
        CU_ASSERT_EQUAL(ck_vocab_at(c.vocab, row, &a), ck_vocab_at(e, row, &b));
        CU_ASSERT_EQUAL(a, b);
    }
    ck_kokoro_config_free(&c);
    ck_kokoro_config_free(&c);   /* zeroed: a no-op */
}

static void test_embedded_circuit_dims_match_fixture(void)
{
    ck_model_dims d = embedded_dims();
    CU_ASSERT_EQUAL(d.word_rows, 178);
    CU_ASSERT_EQUAL(d.embedding_size, 128);
    CU_ASSERT_EQUAL(d.hidden_size, 768);
    CU_ASSERT_EQUAL(d.heads, 12);
    CU_ASSERT_EQUAL(d.intermediate_size, 2048);
    CU_ASSERT_EQUAL(d.max_positions, 512);
    CU_ASSERT_EQUAL(d.layers, 12);
    CU_ASSERT_EQUAL(d.output_dim, 512);
    ck_kokoro_config c;
    CU_ASSERT_EQUAL_FATAL(ck_kokoro_config_load(&c, ck_test_path(FIXTURE), NULL), CK_OK);
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_kokoro_config_check(&c, &d, &err), CK_OK);
    ck_kokoro_config_free(&c);
}

/* The fixture with `path` (e.g. "plbert.hidden_size") set to `value` (JSON text; NULL deletes it). */
static char *variant(const char *path, const char *value)
{
    size_t n = 0;
    char *text = slurp(ck_test_path(FIXTURE), &n);
    cJSON *root = cJSON_Parse(text);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    cJSON *obj = root;
    char key[64];
    snprintf(key, sizeof key, "%s", path);
    char *dot = strchr(key, '.'), *leaf = key;
    if (dot != NULL) {
        *dot = '\0';
        obj = cJSON_GetObjectItemCaseSensitive(root, key);
        leaf = dot + 1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, leaf);
    if (value != NULL) {
        cJSON_AddItemToObject(obj, leaf, cJSON_Parse(value));
    }
    char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

static void check_fails(const char *path, const char *value, const char *message)
{
    char *json = variant(path, value);
    ck_kokoro_config c;
    ck_error err = {CK_OK, ""};
    ck_model_dims d = embedded_dims();
    int rc = ck_kokoro_config_parse(&c, json, strlen(json), "x/config.json", &err);
    CU_ASSERT_EQUAL(rc, CK_OK);
    if (rc == CK_OK) {
        CU_ASSERT_EQUAL(ck_kokoro_config_check(&c, &d, &err), CK_E_WEIGHTS);
        if (strcmp(err.message, message) != 0) {
            fprintf(stderr, "    message \"%s\", want \"%s\"\n", err.message, message);
        }
        CU_ASSERT_STRING_EQUAL(err.message, message);
    }
    ck_kokoro_config_free(&c);
    cJSON_free(json);
}

static void test_each_mismatch_names_its_field(void)
{
    check_fails("n_token", "200", "x/config.json: n_token 200 does not match the weights (178)");
    check_fails("plbert.embedding_size", "64",
                "x/config.json: plbert.embedding_size 64 does not match the weights (128)");
    check_fails("plbert.hidden_size", "1024",
                "x/config.json: plbert.hidden_size 1024 does not match the weights (768)");
    check_fails("plbert.hidden_size", NULL, /* AlbertConfig's default */
                "x/config.json: plbert.hidden_size 4096 does not match the weights (768)");
    check_fails("plbert.num_attention_heads", "8",
                "x/config.json: plbert.num_attention_heads 8 does not match the weights (12)");
    check_fails("plbert.intermediate_size", "3072",
                "x/config.json: plbert.intermediate_size 3072 does not match the weights (2048)");
    check_fails("plbert.max_position_embeddings", "1024",
                "x/config.json: plbert.max_position_embeddings 1024 does not match the weights (512)");
    check_fails("plbert.num_hidden_layers", "6",
                "x/config.json: plbert.num_hidden_layers 6 does not match the weights (12)");
    check_fails("hidden_dim", "640", "x/config.json: hidden_dim 640 does not match the weights (512)");
}

/* A dims field of 0 (the circuit has no such part) is not checked. */
static void test_unknown_dims_are_skipped(void)
{
    char *json = variant("hidden_dim", "640");
    ck_kokoro_config c;
    ck_model_dims d = embedded_dims();
    d.output_dim = 0;
    CU_ASSERT_EQUAL_FATAL(ck_kokoro_config_parse(&c, json, strlen(json), "x.json", NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_kokoro_config_check(&c, &d, NULL), CK_OK);
    ck_kokoro_config_free(&c);
    cJSON_free(json);
}

static void parse_fails(const char *json, const char *message)
{
    ck_kokoro_config c;
    memset(&c, 0x5A, sizeof c);
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_kokoro_config_parse(&c, json, strlen(json), "x.json", &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NULL(c.vocab);
    if (strcmp(err.message, message) != 0) {
        fprintf(stderr, "    message \"%s\", want \"%s\"\n", err.message, message);
    }
    CU_ASSERT_STRING_EQUAL(err.message, message);
}

#define DIMS "\"n_token\": 4, \"hidden_dim\": 512, \"plbert\": {}"

static void test_malformed_files(void)
{
    parse_fails("{\"n_token\": 4,\n \"vocab\": {\"a\": 1,}}", "x.json: JSON syntax error at byte 34 (line 2)");
    parse_fails("[1]", "x.json: expected a JSON object (Kokoro's config.json)");
    parse_fails("{\"n_token\": 4} x", "x.json: text after the JSON value at byte 15 (line 1)");
    parse_fails("{\"n_token\": 04}", "x.json: a number not spelled as JSON allows at byte 12 (line 1)");
    parse_fails("{\"hidden_dim\": 512, \"plbert\": {}, \"vocab\": {\"a\": 1}}",
                "x.json: field \"n_token\" missing");
    parse_fails("{\"n_token\": \"178\", \"hidden_dim\": 512, \"plbert\": {}, \"vocab\": {\"a\": 1}}",
                "x.json: field \"n_token\": expected an integer 2..32768");
    parse_fails("{\"n_token\": 4.5, \"hidden_dim\": 512, \"plbert\": {}, \"vocab\": {\"a\": 1}}",
                "x.json: field \"n_token\": expected an integer 2..32768");
    parse_fails("{\"n_token\": 4, \"plbert\": {}, \"vocab\": {\"a\": 1}}",
                "x.json: field \"hidden_dim\" missing");
    parse_fails("{\"n_token\": 4, \"hidden_dim\": 512, \"vocab\": {\"a\": 1}}",
                "x.json: field \"plbert\": missing");
    parse_fails("{\"n_token\": 4, \"hidden_dim\": 512, \"plbert\": 3, \"vocab\": {\"a\": 1}}",
                "x.json: field \"plbert\": expected an object");
    parse_fails("{\"n_token\": 4, \"hidden_dim\": 512, \"plbert\": {\"hidden_size\": 0}, \"vocab\": {}}",
                "x.json: field \"plbert.hidden_size\": expected an integer 1..1073741824");
    parse_fails("{" DIMS "}", "x.json: field \"vocab\": missing");
    parse_fails("{" DIMS ", \"vocab\": [1]}", "x.json: field \"vocab\": expected an object of symbol -> id");
    parse_fails("{" DIMS ", \"vocab\": {}}", "x.json: field \"vocab\": no symbols");
    parse_fails("{" DIMS ", \"vocab\": {\"ab\": 1}}", "x.json: vocab \"ab\": symbol is 2 code points, expected one");
    parse_fails("{" DIMS ", \"vocab\": {\"a\": 0}}", "x.json: vocab \"a\": id 0: expected 1..3 (0 is the boundary)");
    parse_fails("{" DIMS ", \"vocab\": {\"a\": 4}}", "x.json: vocab \"a\": expected an integer id 1..3 (0 is the boundary)");
    parse_fails("{" DIMS ", \"vocab\": {\"a\": \"1\"}}", "x.json: vocab \"a\": expected an integer id 1..3 (0 is the boundary)");
    parse_fails("{" DIMS ", \"vocab\": {\"a\": 1, \"b\": 1}}", "x.json: vocab \"b\": id 1 already names U+0061 'a'");
    parse_fails("{" DIMS ", \"vocab\": {\"a\": 1, \"a\": 2}}", "x.json: vocab \"a\": U+0061 'a' already has id 1");
    parse_fails("{" DIMS ", \"vocab\": {\"\\t\": 1}}", "x.json: vocab \"?\": symbol U+0009 is a control character");
    parse_fails("{" DIMS ", \"vocab\": {\"\xC0\x80\": 1}}", "x.json: vocab \"?\": invalid UTF-8");
    parse_fails("{" DIMS ", \"vocab\": {\"abcdefghijklmnopqrstu\": 1}}",
                "x.json: vocab \"abcdefghijklmnop...\": symbol is 21 code points, expected one");
}

static void test_load_errors(void)
{
    ck_kokoro_config c;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_kokoro_config_load(&c, "/nonexistent/config.json", &err), CK_E_IO);
    CU_ASSERT_STRING_EQUAL(err.message, "/nonexistent/config.json: cannot open config.json: No such file or directory");
    CU_ASSERT_PTR_NULL(c.vocab);
    CU_ASSERT_EQUAL(ck_kokoro_config_load(NULL, FIXTURE, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_kokoro_config_check(NULL, NULL, NULL), CK_E_ARG);
}

CK_TEST_MAIN("kokoro_config", {"fixture fields", test_fixture_fields},
             {"embedded circuit dims match the fixture", test_embedded_circuit_dims_match_fixture},
             {"each mismatch names its field", test_each_mismatch_names_its_field},
             {"dims the circuit lacks are skipped", test_unknown_dims_are_skipped},
             {"malformed files", test_malformed_files}, {"load errors", test_load_errors})
