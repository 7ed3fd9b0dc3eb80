/* test_weights_manifest.c - SHA-256 manifests: a hash written by Python, round trip, the same manifest
 * verifying a .pth of another dtype and the safetensors twin, every mismatch and malformed field
 * rejected with its code and the tensor or field named; `weights inspect` lines. */
#include <cjson/cJSON.h>
#include <string.h>
#include <unistd.h>

#include "ck_status.h"
#include "ck_test.h"
#include "weights.h"
#include "weights_manifest.h"

#define FIX "tests/fixtures/pth/"
/* hashlib.sha256(values(0, [7, 4]) as <f4 bytes) from tools/make_pth_fixtures.py */
#define WORD_EMB_SHA "6766f9e75ba2f8d5c50aabc738f16c5257fe3e8deaf2e2b8ce5f273293a84daf"

static char g_manifest[64], g_mutated[64];

static const char *const KOKORO_GROUPS[] = {"bert", "bert_encoder", "predictor", "text_encoder",
                                             "decoder", NULL};
static const char *const ENCODER_GROUPS[] = {"bert", "bert_encoder", NULL};

/* `rel` loaded with `groups` (NULL: every group). */
static ck_weights *load_groups(const char *rel, const char *const *groups)
{
    char path[4096];
    ck_weights *w = NULL;
    snprintf(path, sizeof path, "%s", ck_test_path(rel));
    CU_ASSERT_EQUAL(ck_weights_load_groups(&w, path, groups, NULL), CK_OK);
    return w;
}

static ck_weights *load(const char *rel)
{
    return load_groups(rel, NULL);
}

/* Writes the manifest of the reduced f32 checkpoint to g_manifest and returns its parsed JSON. */
static cJSON *write_manifest(void)
{
    strcpy(g_manifest, "/tmp/ck_manifest_XXXXXX");
    int fd = mkstemp(g_manifest);
    FILE *fp = fd >= 0 ? fdopen(fd, "w+") : NULL;
    ck_weights *w = load(FIX "kokoro_reduced_f32.pth");
    CU_ASSERT_FATAL(fp != NULL && w != NULL);
    CU_ASSERT_EQUAL(ck_weights_manifest_write(fp, w, ck_test_path(FIX "kokoro_reduced_f32.pth"),
                                              NULL), CK_OK);
    ck_weights_free(w);
    static char text[1 << 16];
    rewind(fp);
    text[fread(text, 1, sizeof text - 1, fp)] = '\0';
    fclose(fp);
    return cJSON_Parse(text);
}

static cJSON *entry(cJSON *doc, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "tensors"), i);
}

/* Verifies `rel`, loaded with `groups`, against manifest `path` expecting `code`, the message
 * containing `needle`. */
static void expect_verify_groups(const char *rel, const char *const *groups, const char *path,
                                 int code, const char *needle)
{
    ck_weights *w = load_groups(rel, groups);
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_weights_manifest_verify(w, path, &err), code);
    if (needle != NULL && strstr(err.message, needle) == NULL) {
        fprintf(stderr, "    message \"%s\" lacks \"%s\"\n", err.message, needle);
        CU_FAIL("message does not name the mismatch");
    }
    ck_weights_free(w);
}

static void expect_verify(const char *rel, const char *path, int code, const char *needle)
{
    expect_verify_groups(rel, NULL, path, code, needle);
}

/* Writes doc (or raw text when doc is NULL) to g_mutated and verifies the f32 checkpoint with it. */
static void expect_mutated(cJSON *doc, const char *raw, int code, const char *needle)
{
    char *text = doc != NULL ? cJSON_Print(doc) : NULL;
    strcpy(g_mutated, "/tmp/ck_manifest_bad_XXXXXX");
    int fd = mkstemp(g_mutated);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    CU_ASSERT_FATAL(fp != NULL);
    fputs(text != NULL ? text : raw, fp);
    fclose(fp);
    expect_verify(FIX "kokoro_reduced_f32.pth", g_mutated, code, needle);
    unlink(g_mutated);
    free(text);
    cJSON_Delete(doc);
}

static void test_written_hashes(void)
{
    cJSON *doc = write_manifest();
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(doc, "format")->valuestring, CK_MANIFEST_FORMAT);
    CU_ASSERT_EQUAL(strlen(cJSON_GetObjectItem(doc, "file_sha256")->valuestring), 64);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "tensors")), 18);  /* 5 groups */
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(entry(doc, 17), "name")->valuestring,
                           "decoder.generator.conv_post.weight");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(entry(doc, 0), "name")->valuestring,
                           "bert.embeddings.word_embeddings.weight");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(entry(doc, 0), "sha256")->valuestring, WORD_EMB_SHA);
    cJSON_Delete(doc);
    unlink(g_manifest);
}

/* One manifest verifies f32, f16, bf16 checkpoints; a file holding only the encoder's groups (the
 * Parameter checkpoint, the safetensors twin) verifies when only those groups are read, and is
 * told which tensors it lacks when every group is. */
static void test_verifies_every_form(void)
{
    cJSON_Delete(write_manifest());
    static const char *const whole[] = {"kokoro_reduced_f32.pth", "kokoro_reduced_f16.pth",
                                        "kokoro_reduced_bf16.pth"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, FIX "%s", whole[i]);
        expect_verify(rel, g_manifest, CK_OK, NULL);
        expect_verify_groups(rel, ENCODER_GROUPS, g_manifest, CK_OK, NULL);
    }
    expect_verify_groups(FIX "kokoro_extra_group.pth", KOKORO_GROUPS, g_manifest, CK_OK, NULL);
    expect_verify_groups(FIX "kokoro_reduced_param.pth", ENCODER_GROUPS, g_manifest, CK_OK, NULL);
    expect_verify_groups(FIX "kokoro_reduced.safetensors", ENCODER_GROUPS, g_manifest, CK_OK, NULL);
    expect_verify(FIX "kokoro_reduced.safetensors", g_manifest, CK_E_HASH,
                  "\"predictor.lstm.weight\": in the manifest, not in the weights");
    unlink(g_manifest);
}

/* A folded weight-norm weight is derived: the manifest lists its g and v, not it. */
static void test_weight_norm_pairs_listed(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", ck_test_path(FIX "kokoro_weight_norm.pth"));
    ck_weights *w = load(FIX "kokoro_weight_norm.pth");
    FILE *fp = tmpfile();
    CU_ASSERT_FATAL(fp != NULL && w != NULL);
    CU_ASSERT_EQUAL_FATAL(ck_weights_manifest_write(fp, w, path, NULL), CK_OK);
    static char text[1 << 16];
    rewind(fp);
    text[fread(text, 1, sizeof text - 1, fp)] = '\0';
    fclose(fp);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"text_encoder.cnn.0.0.weight_g\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"predictor.F0.0.conv1.parametrizations.weight.original1\""));
    CU_ASSERT_PTR_NULL(strstr(text, "\"text_encoder.cnn.0.0.weight\""));
    CU_ASSERT_PTR_NULL(strstr(text, "\"decoder.generator.ups.0.weight\""));
    ck_weights_free(w);
}

static void test_hash_mismatch(void)
{
    cJSON *doc = write_manifest();
    cJSON_SetValuestring(cJSON_GetObjectItem(entry(doc, 3), "sha256"), "00" WORD_EMB_SHA);
    unlink(g_manifest);
    expect_mutated(doc, NULL, CK_E_HASH, "tensor \"bert.embeddings.LayerNorm.weight\": sha256 ");
}

static void test_shape_mismatch(void)
{
    cJSON *doc = write_manifest();
    cJSON_SetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(entry(doc, 1), "shape"), 0), 12);
    unlink(g_manifest);
    expect_mutated(doc, NULL, CK_E_HASH, "\"bert.embeddings.position_embeddings.weight\": shape");
}

static void test_tensor_missing_from_manifest(void)
{
    cJSON *doc = write_manifest();
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(doc, "tensors"), 14);
    unlink(g_manifest);
    expect_mutated(doc, NULL, CK_E_HASH, "\"bert_encoder.bias\": not in the manifest");
}

static void test_extra_manifest_entry(void)
{
    cJSON *doc = write_manifest();
    cJSON_AddItemToArray(cJSON_GetObjectItem(doc, "tensors"), cJSON_Duplicate(entry(doc, 0), 1));
    cJSON_SetValuestring(cJSON_GetObjectItem(entry(doc, 18), "name"), "decoder.x");
    unlink(g_manifest);
    expect_mutated(doc, NULL, CK_E_HASH, "\"decoder.x\": in the manifest, not in the weights");
}

/* An entry listed twice is refused: only the first was checked, so a second one with another
 * hash passed. */
static void test_duplicate_manifest_entry(void)
{
    cJSON *doc = write_manifest();
    cJSON_AddItemToArray(cJSON_GetObjectItem(doc, "tensors"), cJSON_Duplicate(entry(doc, 3), 1));
    cJSON_SetValuestring(cJSON_GetObjectItem(entry(doc, 18), "sha256"), "00" WORD_EMB_SHA);
    unlink(g_manifest);
    expect_mutated(doc, NULL, CK_E_HASH,
                   "tensor \"bert.embeddings.LayerNorm.weight\": listed twice in the manifest");
}

/* An entry naming a folded weight-norm weight is refused: the file does not store it (it was
 * found among the derived tensors, and its hash never checked). */
static void test_derived_manifest_entry(void)
{
    char path[4096], mpath[64] = "/tmp/ck_manifest_wn_XXXXXX";
    snprintf(path, sizeof path, "%s", ck_test_path(FIX "kokoro_weight_norm.pth"));
    ck_weights *w = load(FIX "kokoro_weight_norm.pth");
    int fd = mkstemp(mpath);
    FILE *fp = fd >= 0 ? fdopen(fd, "w+") : NULL;
    CU_ASSERT_FATAL(fp != NULL && w != NULL);
    CU_ASSERT_EQUAL_FATAL(ck_weights_manifest_write(fp, w, path, NULL), CK_OK);
    ck_weights_free(w);
    static char text[1 << 16];
    rewind(fp);
    text[fread(text, 1, sizeof text - 1, fp)] = '\0';
    fclose(fp);
    cJSON *doc = cJSON_Parse(text);
    cJSON *extra = cJSON_Duplicate(entry(doc, 0), 1);
    cJSON_SetValuestring(cJSON_GetObjectItem(extra, "name"), "text_encoder.cnn.0.0.weight");
    cJSON_AddItemToArray(cJSON_GetObjectItem(doc, "tensors"), extra);
    char *out = cJSON_Print(doc);
    fp = fopen(mpath, "w");
    CU_ASSERT_FATAL(fp != NULL);
    fputs(out, fp);
    fclose(fp);
    expect_verify(FIX "kokoro_weight_norm.pth", mpath, CK_E_HASH, "tensor \"text_encoder.cnn.0.0"
                  ".weight\": in the manifest, not in the weights (derived at load from its g and v)");
    unlink(mpath);
    free(out);
    cJSON_Delete(doc);
}

static void test_wrong_format(void)
{
    cJSON *doc = write_manifest();
    cJSON_SetValuestring(cJSON_GetObjectItem(doc, "format"), "something-else");
    unlink(g_manifest);
    expect_mutated(doc, NULL, CK_E_FORMAT, "format or tensors");
}

static void test_sha_not_string(void)
{
    cJSON *doc = write_manifest();
    cJSON_ReplaceItemInObject(entry(doc, 2), "sha256", cJSON_CreateNumber(1));
    unlink(g_manifest);
    expect_mutated(doc, NULL, CK_E_FORMAT, "\"bert.embeddings.token_type_embeddings.weight\": shape "
                   "or sha256");
}

static void test_not_json(void)
{
    expect_mutated(NULL, "{\"format\": ", CK_E_FORMAT, "not valid JSON");
    /* a valid manifest followed by more text, or with a number cJSON alone would read */
    cJSON *doc = write_manifest();
    char *text = cJSON_Print(doc), *raw = malloc(strlen(text) + 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
    sprintf(raw, "%s garbage {", text);
    expect_mutated(NULL, raw, CK_E_FORMAT, "not valid JSON: text after the JSON value");
    char *shape = strstr(text, "\"shape\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(shape);
    shape += strcspn(shape, "123456789"); /* the first dimension's first digit: written as 0N */
    sprintf(raw, "%.*s0%s", (int)(shape - text), text, shape);
    expect_mutated(NULL, raw, CK_E_FORMAT, "not valid JSON: a number not spelled as JSON allows");
    free(raw);
    free(text);
    cJSON_Delete(doc);
    unlink(g_manifest);
}

static void test_missing_manifest(void)
{
    expect_verify(FIX "kokoro_reduced_f32.pth", "/nonexistent/m.json", CK_E_IO, "/nonexistent/m.json");
}

static void test_inspect_lines(void)
{
    char text[4096] = {0};
    FILE *fp = tmpfile();
    CU_ASSERT_FATAL(fp != NULL);
    CU_ASSERT_EQUAL(ck_weights_inspect(fp, ck_test_path(FIX "kokoro_reduced_f16.pth"), NULL), CK_OK);
    rewind(fp);
    size_t n = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    CU_ASSERT(n > 0);
    CU_ASSERT_EQUAL(strncmp(text, "bert.module.embeddings.word_embeddings.weight\tF16\t[7,4]\t56\n", 59),
                    0);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "decoder.module.generator.conv_post.weight\tF16\t[2,2,3]\t24\n"));
    size_t lines = 0;
    for (size_t i = 0; i < n; i++) {
        lines += text[i] == '\n';
    }
    CU_ASSERT_EQUAL(lines, 19);  /* every group, the unused ones and position_ids included */
}

CK_TEST_MAIN("weights_manifest",
             {"written hashes match Python's", test_written_hashes},
             {"one manifest verifies every dtype and format", test_verifies_every_form},
             {"weight-norm pairs listed, folded weight not", test_weight_norm_pairs_listed},
             {"hash mismatch named", test_hash_mismatch},
             {"shape mismatch named", test_shape_mismatch},
             {"tensor missing from the manifest named", test_tensor_missing_from_manifest},
             {"manifest entry missing from the weights named", test_extra_manifest_entry},
             {"manifest entry listed twice rejected", test_duplicate_manifest_entry},
             {"manifest entry of a derived weight rejected", test_derived_manifest_entry},
             {"wrong format rejected", test_wrong_format},
             {"sha256 of the wrong type rejected", test_sha_not_string},
             {"not JSON rejected", test_not_json},
             {"missing manifest rejected", test_missing_manifest},
             {"inspect lines", test_inspect_lines})
