/* test_kokoro_layout.c - Kokoro-82M's checkpoint key list: tensor and parameter counts per group
 * equal SYNTHESIS.md section 3's, the group filter, and the whole synthetic Kokoro equal to the
 * Python generator's (tools/kokoro_weights.py: SHA-256 of four tensors of different scale rows,
 * pinned from its output) with every weight-norm pair folded. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "ck_status.h"
#include "ck_test.h"
#include "file.h"
#include "kokoro_layout.h"
#include "sha256.h"
#include "synth_weights.h"
#include "weights.h"

static void test_counts_per_group(void)
{
    static const struct {
        const char *group;
        size_t tensors, params;
    } want[] = {{"bert", 25, 6292480}, {"bert_encoder", 2, 393728}, {"predictor", 122, 16194612},
                {"text_encoder", 24, 5606400}, {"decoder", 375, 53276190}};
    ck_weight_spec *all = NULL;
    size_t n_all = 0;
    CU_ASSERT_EQUAL_FATAL(ck_kokoro_weight_specs(&all, &n_all, NULL, NULL), CK_OK);
    CU_ASSERT_EQUAL(n_all, CK_KOKORO_TENSORS);
    size_t total = 0;
    for (size_t g = 0; g < 5; g++) {
        const char *only[] = {want[g].group, NULL};
        ck_weight_spec *s = NULL;
        size_t n = 0, params = 0;
        CU_ASSERT_EQUAL_FATAL(ck_kokoro_weight_specs(&s, &n, only, NULL), CK_OK);
        for (size_t i = 0; i < n; i++) {
            size_t e = 1;
            for (size_t d = 0; d < s[i].rank; d++) {
                e *= s[i].shape[d];
            }
            params += e;
            CU_ASSERT_EQUAL(strncmp(s[i].name, want[g].group, strlen(want[g].group)), 0);
        }
        CU_ASSERT_EQUAL(n, want[g].tensors);
        CU_ASSERT_EQUAL(params, want[g].params);
        total += params;
        free(s);
    }
    CU_ASSERT_EQUAL(total, 81763410);  /* Kokoro-82M: 81.8 M */
    CU_ASSERT_STRING_EQUAL(all[0].name, "bert.embeddings.word_embeddings.weight");
    CU_ASSERT_STRING_EQUAL(all[n_all - 1].name, "decoder.generator.conv_post.weight_v");
    free(all);
    CU_ASSERT_EQUAL(ck_kokoro_weight_specs(NULL, &n_all, NULL, NULL), CK_E_ARG);
}

static void expect_sha(const ck_weights *w, const char *name, const char *hex)
{
    char got[65];
    unsigned char d[32];
    const ck_tensor *t = ck_weights_find(w, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(ck_sha256(t->data, t->elements * sizeof(float), d), CK_OK);
    ck_sha256_hex(d, got);
    if (strcmp(got, hex) != 0) {
        fprintf(stderr, "    %s: %s, want %s\n", name, got, hex);
    }
    CU_ASSERT_STRING_EQUAL(got, hex);
}

static void test_synthetic_equals_python(void)
{
    static const char *const groups[] = {"predictor", "text_encoder", "decoder", NULL};
    ck_weight_spec *s = NULL;
    size_t n = 0;
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_kokoro_weight_specs(&s, &n, groups, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_synthetic(&w, s, n, CK_SYNTH_DEFAULT_SEED, NULL), CK_OK);
    expect_sha(w, "predictor.duration_proj.linear_layer.bias",
               "311db2b0a70d910a6fe260fcc231fd948abcec941c0b726026bbd591ebc55f6a");
    expect_sha(w, "decoder.generator.conv_post.weight_v",
               "2fd03bed378c90f3f2759f87c39cfab8cab71f718a1645187c0e7faaa5cfc74b");
    expect_sha(w, "text_encoder.cnn.0.0.weight_g",
               "bfd2b3db52ec4e35302b544a8c6d71a37b74df84be8fde51ae83eb0a4267312c");
    expect_sha(w, "decoder.generator.resblocks.5.alpha2.2",
               "ec48bdc200b0aaab10f0269a64b9a7842b9b9db56c2ad1788cf5428cb4decf17");
    size_t g = 0, derived = 0;
    for (size_t i = 0; i < ck_weights_count(w); i++) {
        const ck_tensor *t = ck_weights_at(w, i);
        size_t len = strlen(t->name);
        g += len > 9 && strcmp(t->name + len - 9, ".weight_g") == 0;
        derived += t->derived;
    }
    CU_ASSERT_EQUAL(derived, g);  /* every weight-normed layer folded */
    CU_ASSERT_EQUAL(ck_weights_count(w), n + derived);
    const ck_tensor *up = ck_weights_find(w, "decoder.generator.ups.0.weight");
    CU_ASSERT_PTR_NOT_NULL_FATAL(up);  /* ConvTranspose1d [in 512, out 256, k 20] */
    CU_ASSERT(up->derived && up->shape[0] == 512 && up->shape[1] == 256 && up->shape[2] == 20);
    ck_weights_free(w);
    free(s);
}

/* Every tensor of the whole synthetic Kokoro, and the synthetic voice, against the SHA-256 the
 * speech capture's manifest records from the Python generator (weights.tensors, weights.voice). */
static void test_every_tensor_equals_the_capture_manifest(void)
{
    char *text = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_file_read_all(ck_test_path("tests/fixtures/speech/"
                                                        "kokoro_speech_capture.manifest.json"),
                                           "manifest", 1 << 22, &text, NULL, &err), CK_OK);
    cJSON *doc = cJSON_Parse(text);
    const cJSON *weights = cJSON_GetObjectItemCaseSensitive(doc, "weights");
    const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(weights, "tensors");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(tensors), CK_KOKORO_TENSORS);
    ck_weight_spec *s = NULL;
    size_t n = 0;
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_kokoro_weight_specs(&s, &n, NULL, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_synthetic(&w, s, n, CK_SYNTH_DEFAULT_SEED, NULL), CK_OK);
    size_t i = 0, equal = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, tensors) {
        const cJSON *sha = cJSON_GetObjectItemCaseSensitive(e, "sha256");
        CU_ASSERT_FATAL(i < n && cJSON_IsString(sha));
        CU_ASSERT_STRING_EQUAL(e->string, s[i].name);  /* same order */
        expect_sha(w, e->string, sha->valuestring);
        equal++;
        i++;
    }
    CU_ASSERT_EQUAL(equal, n);
    const cJSON *voice = cJSON_GetObjectItemCaseSensitive(weights, "voice");
    const cJSON *vname = cJSON_GetObjectItemCaseSensitive(voice, "name");
    const cJSON *vsha = cJSON_GetObjectItemCaseSensitive(voice, "sha256");
    CU_ASSERT_FATAL(cJSON_IsString(vname) && cJSON_IsString(vsha));
    static float pack[510 * 256];
    unsigned char d[32];
    char hex[65];
    CU_ASSERT_EQUAL(ck_synth_tensor_f32(vname->valuestring, CK_SYNTH_DEFAULT_SEED, pack, 510 * 256),
                    CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_sha256(pack, sizeof pack, d), CK_OK);
    ck_sha256_hex(d, hex);
    CU_ASSERT_STRING_EQUAL(hex, vsha->valuestring);
    ck_weights_free(w);
    free(s);
    cJSON_Delete(doc);
    free(text);
}

CK_TEST_MAIN("kokoro_layout", {"counts per group", test_counts_per_group},
             {"synthetic whole Kokoro equals the Python generator", test_synthetic_equals_python},
             {"every tensor and the voice equal the capture manifest's",
              test_every_tensor_equals_the_capture_manifest})
