/* test_pth.c - torch.save checkpoints (tests/fixtures/pth, written by tools/make_pth_fixtures.py with
 * real torch): bit-identical to the safetensors twin for f32/f16/bf16/Parameter files, Kokoro groups,
 * unused storages never read, and every hostile archive rejected with its code and a naming message. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ck_status.h"
#include "ck_test.h"
#include "pth.h"
#include "weights.h"
#include "zip.h"

#define FIX "tests/fixtures/pth/"
#define N_ENCODER_TENSORS 15  /* 13 bert + 2 bert_encoder in the reduced layout */

static char g_path[4096];

static const char *fixture(const char *name)
{
    snprintf(g_path, sizeof g_path, "%s", ck_test_path(name));
    return g_path;
}

static const char *const ENCODER_GROUPS[] = {"bert", "bert_encoder", NULL};

/* `name` loaded with only the encoder's groups (every group of a safetensors twin is one of them). */
static ck_weights *load_ok(const char *name)
{
    ck_weights *w = NULL;
    ck_error err = {0};
    int rc = ck_weights_load_groups(&w, fixture(name), ENCODER_GROUPS, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "    %s: %s\n", name, err.message);
    }
    CU_ASSERT_EQUAL(rc, CK_OK);
    return w;
}

/* Every tensor of the safetensors twin has the same name, shape and f32 bytes in `name`. */
static void check_twin(const char *name)
{
    ck_weights *twin = load_ok(FIX "kokoro_reduced.safetensors");
    ck_weights *w = load_ok(name);
    CU_ASSERT_FATAL(twin != NULL && w != NULL);
    CU_ASSERT_EQUAL(ck_weights_count(twin), N_ENCODER_TENSORS);
    CU_ASSERT_EQUAL(ck_weights_count(w), N_ENCODER_TENSORS);
    for (size_t i = 0; i < ck_weights_count(twin); i++) {
        const ck_tensor *a = ck_weights_at(twin, i);
        const ck_tensor *b = ck_weights_find(w, a->name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_EQUAL(b->rank, a->rank);
        CU_ASSERT_EQUAL(memcmp(b->shape, a->shape, sizeof a->shape), 0);
        CU_ASSERT_EQUAL_FATAL(b->elements, a->elements);
        CU_ASSERT_EQUAL(memcmp(b->data, a->data, a->elements * sizeof(float)), 0);
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_weights_identity(w), "sha256 "));
    ck_weights_free(w);
    ck_weights_free(twin);
}

static void test_f32_equals_safetensors(void) { check_twin(FIX "kokoro_reduced_f32.pth"); }
static void test_f16_equals_safetensors(void) { check_twin(FIX "kokoro_reduced_f16.pth"); }
static void test_bf16_equals_safetensors(void) { check_twin(FIX "kokoro_reduced_bf16.pth"); }
static void test_parameter_equals_safetensors(void) { check_twin(FIX "kokoro_reduced_param.pth"); }

/* The extra group's storage has a bad CRC: a load of the other groups succeeds only because it is
 * never read; a load of every group reads it and fails. */
static void test_extra_group_never_read(void)
{
    static const char *const kokoro[] = {"bert", "bert_encoder", "predictor", "text_encoder",
                                         "decoder", NULL};
    ck_pth_file *f = NULL;
    ck_weights *w = NULL;
    ck_st_tensor view;
    ck_error err = {0};
    check_twin(FIX "kokoro_extra_group.pth");
    CU_ASSERT_EQUAL(ck_weights_load_groups(&w, fixture(FIX "kokoro_extra_group.pth"), kokoro, &err),
                    CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), N_ENCODER_TENSORS + 3);
    CU_ASSERT_TRUE(ck_weights_has_group(w, "decoder") && !ck_weights_has_group(w, "unused_extra"));
    CU_ASSERT_TRUE(ck_weights_read_group(w, "predictor") && !ck_weights_read_group(w, "unused_extra"));
    ck_weights_free(w);
    CU_ASSERT_EQUAL(ck_weights_load(&w, fixture(FIX "kokoro_extra_group.pth"), &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "bad CRC-32"));
    CU_ASSERT_EQUAL_FATAL(ck_pth_open(&f, fixture(FIX "kokoro_extra_group.pth"), &err), CK_OK);
    size_t last = ck_pth_count(f) - 1;
    CU_ASSERT_STRING_EQUAL(ck_pth_at(f, last)->name, "unused_extra.module.junk");
    CU_ASSERT_STRING_EQUAL(ck_pth_at(f, last)->group, "unused_extra");
    CU_ASSERT_EQUAL(ck_pth_view(f, last, &view, &err), CK_E_FORMAT);  /* proof it is corrupt */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "bad CRC-32"));
    ck_pth_close(f);
}

/* Every group of Kokoro's layout is read by default, the decoder's values included. */
static void test_every_group_read(void)
{
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, fixture(FIX "kokoro_reduced_f32.pth"), &err), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), N_ENCODER_TENSORS + 3);  /* position_ids (I64) skipped */
    const char *groups[] = {"bert", "bert_encoder", "predictor", "text_encoder", "decoder"};
    for (size_t i = 0; i < 5; i++) {
        CU_ASSERT_TRUE(ck_weights_has_group(w, groups[i]));
    }
    CU_ASSERT_FALSE(ck_weights_has_group(w, "bert_enc"));  /* a whole segment, not a prefix */
    const ck_tensor *t = ck_weights_find(w, "decoder.generator.conv_post.weight");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(t->rank == 3 && t->shape[0] == 2 && t->shape[2] == 3 && !t->derived);
    /* make_pth_fixtures.py values(70, ...): k = (i * 37 + 770) % 129 - 64, value k / 64 */
    for (size_t i = 0; i < t->elements; i++) {
        CU_ASSERT_EQUAL(t->data[i], (float)((long)((i * 37 + 770) % 129) - 64) / 64.0f);
    }
    ck_weights_free(w);
}

/* Weight norm folded at load equals torch's own fold (torch._weight_norm, f32) to 2 ulp: the
 * Conv1d form (dim 0 = output channel), the ConvTranspose1d form (dim 0 = input channel) and the
 * parametrize form; g and v stay, the derived weight is flagged and not saved. */
static void test_weight_norm_folded(void)
{
    ck_weights *w = NULL, *torch_fold = NULL, *again = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, fixture(FIX "kokoro_weight_norm.pth"), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&torch_fold, fixture(FIX "kokoro_weight_norm_folded.safetensors"),
                                          &err), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(torch_fold), 3);
    for (size_t i = 0; i < ck_weights_count(torch_fold); i++) {
        const ck_tensor *want = ck_weights_at(torch_fold, i);
        const ck_tensor *got = ck_weights_find(w, want->name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        CU_ASSERT_TRUE(got->derived);
        CU_ASSERT_EQUAL_FATAL(got->elements, want->elements);
        CU_ASSERT_EQUAL(memcmp(got->shape, want->shape, sizeof got->shape), 0);
        for (size_t k = 0; k < got->elements; k++) {
            double tol = 2.0 * 1.1920929e-7 * fabs((double)want->data[k]) + 1e-30;
            CU_ASSERT(fabs((double)got->data[k] - (double)want->data[k]) <= tol);
        }
    }
    CU_ASSERT_PTR_NOT_NULL(ck_weights_find(w, "text_encoder.cnn.0.0.weight_g"));
    CU_ASSERT_PTR_NOT_NULL(ck_weights_find(w, "decoder.generator.ups.0.weight_v"));
    CU_ASSERT_EQUAL(ck_weights_find(w, "decoder.generator.ups.0.weight_g")->shape[0], 3);
    const char *saved = ck_test_tmp_path("weight_norm_saved.safetensors");
    CU_ASSERT_EQUAL_FATAL(ck_weights_save(w, saved, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&again, saved, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(again), ck_weights_count(w));  /* stored ones, folded again */
    const ck_tensor *a = ck_weights_find(again, "predictor.F0.0.conv1.weight");
    const ck_tensor *b = ck_weights_find(w, "predictor.F0.0.conv1.weight");
    CU_ASSERT_FATAL(a != NULL && b != NULL);
    CU_ASSERT_EQUAL(memcmp(a->data, b->data, a->elements * sizeof(float)), 0);
    ck_weights_free(again);
    ck_weights_free(torch_fold);
    ck_weights_free(w);
}

/* A Kokoro voice file pickles one bare tensor: described as one unnamed tensor, not a weight set. */
static void test_top_level_tensor(void)
{
    ck_pth_file *f = NULL;
    ck_weights *w = NULL;
    ck_st_tensor view;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_pth_open(&f, fixture(FIX "voice_tensor.pt"), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_pth_count(f), 1);
    const ck_pth_tensor *t = ck_pth_at(f, 0);
    CU_ASSERT(t->name[0] == '\0' && t->group == NULL && t->dtype == CK_DTYPE_F32);
    CU_ASSERT(t->rank == 3 && t->shape[0] == 510 && t->shape[1] == 1 && t->shape[2] == 256);
    CU_ASSERT_EQUAL(ck_pth_view(f, 0, &view, &err), CK_OK);
    CU_ASSERT_EQUAL(view.bytes, 510 * 256 * sizeof(float));
    ck_pth_close(f);
    CU_ASSERT_EQUAL(ck_weights_load(&w, fixture(FIX "voice_tensor.pt"), &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "name: empty"));
}

static void test_layout_described(void)
{
    ck_pth_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_pth_open(&f, fixture(FIX "kokoro_reduced_f32.pth"), &err), CK_OK);
    /* + position_ids (I64), predictor, text_encoder, decoder */
    CU_ASSERT_EQUAL(ck_pth_count(f), N_ENCODER_TENSORS + 4);
    const ck_pth_tensor *t = ck_pth_at(f, 0);
    CU_ASSERT_STRING_EQUAL(t->name, "bert.module.embeddings.word_embeddings.weight");
    CU_ASSERT_STRING_EQUAL(t->group, "bert");
    CU_ASSERT(t->dtype == CK_DTYPE_F32 && t->rank == 2 && t->shape[0] == 7 && t->shape[1] == 4);
    CU_ASSERT(t->stride[0] == 4 && t->stride[1] == 1 && t->offset == 0 && t->elements == 28);
    const ck_pth_tensor *ids = ck_pth_at(f, 13);
    CU_ASSERT_STRING_EQUAL(ids->name, "bert.module.embeddings.position_ids");
    CU_ASSERT(ids->dtype == CK_DTYPE_I64 && ids->rank == 2 && ids->shape[1] == 6);
    const ck_pth_tensor *bias = ck_pth_at(f, N_ENCODER_TENSORS);
    CU_ASSERT_STRING_EQUAL(bias->name, "bert_encoder.module.bias");
    CU_ASSERT_EQUAL(bias->offset, 3);  /* a slice of a larger storage */
    const ck_pth_tensor *dec = ck_pth_at(f, N_ENCODER_TENSORS + 3);
    CU_ASSERT_STRING_EQUAL(dec->group, "decoder");
    CU_ASSERT(dec->rank == 3 && dec->shape[2] == 3);
    CU_ASSERT_PTR_NULL(ck_pth_at(f, ck_pth_count(f)));
    ck_pth_close(f);
}

/* The archive's bytes in memory describe the same tensors as the file. */
static void test_open_memory_equals_file(void)
{
    const char *path = fixture(FIX "kokoro_reduced_f32.pth");
    ck_pth_file *a = NULL, *b = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_pth_open(&a, path, &err), CK_OK);
    FILE *fp = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    static unsigned char bytes[1 << 20];
    size_t n = fread(bytes, 1, sizeof bytes, fp);
    fclose(fp);
    CU_ASSERT_EQUAL_FATAL(ck_pth_open_memory(&b, bytes, n, "in memory", &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_pth_count(a), ck_pth_count(b));
    for (size_t i = 0; i < ck_pth_count(a); i++) {
        ck_st_tensor x, y;
        CU_ASSERT_STRING_EQUAL(ck_pth_at(a, i)->name, ck_pth_at(b, i)->name);
        CU_ASSERT_EQUAL_FATAL(ck_pth_view(a, i, &x, &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_pth_view(b, i, &y, &err), CK_OK);
        CU_ASSERT_TRUE(x.bytes == y.bytes && memcmp(x.data, y.data, x.bytes) == 0);
    }
    ck_pth_close(a);
    ck_pth_close(b);
    CU_ASSERT_EQUAL(ck_pth_open_memory(&b, bytes, 0, NULL, &err), CK_E_FORMAT);
    CU_ASSERT_STRING_EQUAL(err.message, "<memory>: empty: not a ZIP archive");
}

static void test_sniff_by_content(void)
{
    CU_ASSERT_EQUAL(ck_pth_sniff(fixture(FIX "kokoro_reduced_f16.pth")), 1);
    CU_ASSERT_EQUAL(ck_pth_sniff(fixture(FIX "kokoro_reduced.safetensors")), 0);
    CU_ASSERT_EQUAL(ck_pth_sniff(fixture(FIX "no_such_file")), 0);
}

static void test_crc32_vector(void)
{
    CU_ASSERT_EQUAL(ck_zip_crc32("123456789", 9), 0xCBF43926u);  /* APPNOTE / zlib check value */
    CU_ASSERT_EQUAL(ck_zip_crc32(NULL, 0), 0u);
}

/* ---- hostile archives: each rejected by ck_weights_load with `code` and a message naming it ---- */

static void expect_rejected(const char *name, int code, const char *needle)
{
    ck_weights *w = (ck_weights *)&w;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_weights_load(&w, fixture(name), &err), code);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_EQUAL(err.code, code);
    if (strstr(err.message, needle) == NULL) {
        fprintf(stderr, "    %s: message \"%s\" lacks \"%s\"\n", name, err.message, needle);
        CU_FAIL("message does not name the rejected thing");
    }
}

static void test_os_system(void) { expect_rejected(FIX "h_os_system.pth", CK_E_FORMAT, "global os.system is not allowed"); }
static void test_builtins_eval(void) { expect_rejected(FIX "h_builtins_eval.pth", CK_E_FORMAT, "global builtins.eval is not allowed"); }
static void test_reduce_storage(void) { expect_rejected(FIX "h_reduce_storage.pth", CK_E_FORMAT, "REDUCE on torch.FloatStorage is not allowed"); }
static void test_inst_opcode(void) { expect_rejected(FIX "h_inst_opcode.pth", CK_E_FORMAT, "opcode not allowed: INST"); }
static void test_missing_storage(void) { expect_rejected(FIX "h_missing_storage.pth", CK_E_FORMAT, "storage key \"7\" has no entry archive/data/7"); }
static void test_short_storage(void) { expect_rejected(FIX "h_short_storage.pth", CK_E_FORMAT, "tensor \"bert.w\": offset 0 + 9 elements exceeds its storage \"0\" of 6"); }
static void test_storage_bytes(void) { expect_rejected(FIX "h_storage_bytes.pth", CK_E_FORMAT, "storage archive/data/0 holds 20 bytes, its 6 elements need 24"); }
static void test_noncontiguous(void) { expect_rejected(FIX "h_noncontiguous.pth", CK_E_FORMAT, "stride[1] = 3, expected 1"); }
static void test_memo_range(void) { expect_rejected(FIX "h_memo.pth", CK_E_FORMAT, "memo index 5 out of range"); }
static void test_long_string(void) { expect_rejected(FIX "h_long_string.pth", CK_E_FORMAT, "string length 2147483648 exceeds"); }
static void test_deep_dicts(void) { expect_rejected(FIX "h_deep_dicts.pth", CK_E_FORMAT, "nested deeper than 8"); }
static void test_deep_stack(void) { expect_rejected(FIX "h_deep_stack.pth", CK_E_FORMAT, "stack deeper than CK_PICKLE_MAX_STACK"); }
static void test_deep_marks(void) { expect_rejected(FIX "h_deep_marks.pth", CK_E_FORMAT, "more than CK_PICKLE_MAX_MARKS"); }
static void test_truncated_zip(void) { expect_rejected(FIX "h_truncated.pth", CK_E_FORMAT, "no end of central directory record"); }
static void test_bad_crc(void) { expect_rejected(FIX "h_bad_crc.pth", CK_E_FORMAT, "kokoro_reduced_f32/data/0\": bad CRC-32"); }

CK_TEST_MAIN("pth", {"open memory equals file", test_open_memory_equals_file},
             {"f32 checkpoint equals its safetensors twin", test_f32_equals_safetensors},
             {"f16 checkpoint equals its safetensors twin", test_f16_equals_safetensors},
             {"bf16 checkpoint equals its safetensors twin", test_bf16_equals_safetensors},
             {"Parameter checkpoint equals its safetensors twin", test_parameter_equals_safetensors},
             {"extra group's storage is never read", test_extra_group_never_read},
             {"every group read by default", test_every_group_read},
             {"weight norm folded as torch folds it", test_weight_norm_folded},
             {"a top-level tensor (voice file)", test_top_level_tensor},
             {"Kokoro layout described", test_layout_described},
             {"content sniffing", test_sniff_by_content},
             {"CRC-32 check value", test_crc32_vector},
             {"os.system rejected", test_os_system},
             {"builtins.eval rejected", test_builtins_eval},
             {"REDUCE on a storage type rejected", test_reduce_storage},
             {"INST opcode rejected", test_inst_opcode},
             {"missing storage key rejected", test_missing_storage},
             {"storage shorter than the view rejected", test_short_storage},
             {"storage entry of the wrong size rejected", test_storage_bytes},
             {"non-contiguous view rejected", test_noncontiguous},
             {"memo index out of range rejected", test_memo_range},
             {"2 GiB string length rejected", test_long_string},
             {"deeply nested dicts rejected", test_deep_dicts},
             {"stack bomb rejected", test_deep_stack},
             {"MARK bomb rejected", test_deep_marks},
             {"truncated ZIP rejected", test_truncated_zip},
             {"bad CRC rejected", test_bad_crc})
