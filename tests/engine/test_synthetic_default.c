/* test_synthetic_default.c - the embedded default weights (no --weights: ck_circuit_synthetic_weights)
 * equal what a run on the `ckbatch make-demo-weights` file reads: for the prosody circuit
 * (circuits/kokoro_prosody_tokens.json) every weight it binds has the same shape and bits in both
 * sets (its weight-normed convs generated as stored g and v and folded, not drawn as one tensor),
 * and the circuit's three outputs (t_en, the duration logits, the i32 durations) are the same bytes
 * on both. The encoder circuit's references are all stored tensors, so its default is unchanged; a
 * test circuit's own names keep their own shapes. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck_test.h"
#include "ckbatch.h"
#include "circuit_default.h"
#include "executor.h"
#include "synth_weights.h"
#include "weights.h"

#define PROSODY "circuits/kokoro_prosody_tokens.json"

enum { T = 10, C = 512 };

/* Runs the prosody circuit on one fixed sequence with w, into t_en[T * C], logits[T * 50] and
 * frames[T]. */
static void run_prosody(const ck_circuit *c, const ck_weights *w, float *t_en, float *logits,
                        int32_t *frames)
{
    static const int32_t ids[T] = {0, 50, 83, 54, 156, 57, 135, 16, 102, 0};
    size_t offsets[2] = {0, T};
    float style[128], speed = 1.0f;
    ck_error err = {0};
    ck_executor *ex = NULL;
    ck_executor_options o = {1, 64, 64, 1, CK_DTYPE_F32, NULL};
    CU_ASSERT_EQUAL_FATAL(ck_synth_tensor_f32("voice.synthetic", CK_SYNTH_DEFAULT_SEED, style, 128),
                          CK_OK);
    int rc = ck_executor_init(&ex, c, w, &o, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, style, 1, 128, &speed, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, 1, c->features_buffer, t_en, T * C,
                                          NULL, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, 1, c->hidden_buffer, logits, T * 50,
                                          NULL, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, 1, c->durations_buffer,
                                          (float *)(void *)frames, T, NULL, NULL, &err), CK_OK);
    ck_executor_free(ex);
}

static void test_prosody_default_equals_demo_file(void)
{
    static const char *const groups[] = {"bert", "bert_encoder", "predictor", "text_encoder", NULL};
    ck_circuit c = {0};
    ck_weights *embedded = NULL, *file = NULL;
    ck_error err = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("demo.safetensors"));
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, ck_test_path(PROSODY), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&embedded, &c, CK_SYNTH_DEFAULT_SEED, &err),
                          CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_demo_weights_write(path, CK_SYNTH_DEFAULT_SEED, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_load_groups(&file, path, groups, &err), CK_OK);
    size_t folded = 0;
    for (size_t i = 0; i < c.n_weights; i++) {
        const char *name = c.weights[i].checkpoint_name;
        const ck_tensor *a = ck_weights_find(embedded, name), *b = ck_weights_find(file, name);
        CU_ASSERT_FATAL(a != NULL && b != NULL);
        CU_ASSERT_EQUAL(a->derived, b->derived);
        folded += a->derived;
        CU_ASSERT_FATAL(a->elements == b->elements && a->rank == b->rank);
        CU_ASSERT_EQUAL(memcmp(a->shape, b->shape, a->rank * sizeof *a->shape), 0);
        int same = memcmp(a->data, b->data, a->elements * sizeof *a->data) == 0;
        if (!same) {
            fprintf(stderr, "\n    %s differs\n", name);
        }
        CU_ASSERT(same);
    }
    CU_ASSERT_EQUAL(folded, 3); /* text_encoder.cnn.{0,1,2}.0.weight */
    const ck_tensor *cnn = ck_weights_find(embedded, "text_encoder.cnn.1.0.weight_g");
    CU_ASSERT(cnn != NULL && cnn->rank == 3 && cnn->shape[0] == 512 && cnn->shape[1] == 1);
    static float t_en[2][T * C], logits[2][T * 50];
    static int32_t frames[2][T];
    run_prosody(&c, embedded, t_en[0], logits[0], frames[0]);
    run_prosody(&c, file, t_en[1], logits[1], frames[1]);
    CU_ASSERT_EQUAL(memcmp(t_en[0], t_en[1], sizeof t_en[0]), 0);
    CU_ASSERT_EQUAL(memcmp(logits[0], logits[1], sizeof logits[0]), 0);
    CU_ASSERT_EQUAL(memcmp(frames[0], frames[1], sizeof frames[0]), 0);
    for (size_t t = 0; t < T; t++) {
        CU_ASSERT(frames[0][t] >= 1 && frames[0][t] <= 25);
    }
    ck_weights_free(embedded);
    ck_weights_free(file);
    ck_circuit_free(&c);
    unlink(path);
}

/* The embedded encoder's default: every reference is a stored tensor, generated under its own name,
 * so nothing is derived and each tensor is its name's stream. */
static void test_encoder_default_is_stored_tensors(void)
{
    ck_circuit c = {0};
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load_default(&c, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, CK_SYNTH_DEFAULT_SEED, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), c.n_weights);
    for (size_t i = 0; i < ck_weights_count(w); i++) {
        const ck_tensor *t = ck_weights_at(w, i);
        float *want = malloc(t->elements * sizeof *want);
        CU_ASSERT_FATAL(want != NULL && !t->derived);
        CU_ASSERT_STRING_EQUAL(t->name, c.weights[i].checkpoint_name);
        CU_ASSERT_EQUAL(ck_synth_tensor_f32(t->name, CK_SYNTH_DEFAULT_SEED, want, t->elements), CK_OK);
        CU_ASSERT_EQUAL(memcmp(want, t->data, t->elements * sizeof *want), 0);
        free(want);
    }
    ck_weights_free(w);
    ck_circuit_free(&c);
}

/* A reference named like a weight-normed Kokoro layer but of another shape (a test circuit's) is
 * drawn under its own name and shape, not as a g and v. */
static const char *const CIRCUIT =
    "{\"name\": \"own\", \"format\": 1,"
    " \"dims\": {\"T\": \"runtime\", \"E\": 4, \"C\": 8, \"O\": 4, \"V\": 10, \"P\": 16, \"K\": 2},"
    " \"weights\": {"
    "  \"word\": {\"checkpoint\": \"text_encoder.cnn.0.0.weight\", \"shape\": [\"V\", \"E\"], \"dtype\": \"f32\"},"
    "  \"position\": {\"checkpoint\": \"w.position\", \"shape\": [\"P\", \"E\"], \"dtype\": \"f32\"},"
    "  \"token_type\": {\"checkpoint\": \"w.token_type\", \"shape\": [\"K\", \"E\"], \"dtype\": \"f32\"},"
    "  \"gamma\": {\"checkpoint\": \"w.gamma\", \"shape\": [\"E\"], \"dtype\": \"f32\"},"
    "  \"beta\": {\"checkpoint\": \"w.beta\", \"shape\": [\"E\"], \"dtype\": \"f32\"},"
    "  \"proj_w\": {\"checkpoint\": \"w.proj_w\", \"shape\": [\"C\", \"E\"], \"dtype\": \"f32\"},"
    "  \"proj_b\": {\"checkpoint\": \"w.proj_b\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"out_w\": {\"checkpoint\": \"w.out_w\", \"shape\": [\"O\", \"C\"], \"dtype\": \"f32\"},"
    "  \"out_b\": {\"checkpoint\": \"w.out_b\", \"shape\": [\"O\"], \"dtype\": \"f32\"}},"
    " \"buffers\": {"
    "  \"ids\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"input\"},"
    "  \"positions\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"input\"},"
    "  \"emb\": {\"shape\": [\"T\", \"E\"], \"dtype\": \"f32\"},"
    "  \"act\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\"},"
    "  \"features\": {\"shape\": [\"T\", \"O\"], \"dtype\": \"f32\", \"role\": \"output\"}},"
    " \"inputs\": {\"ids\": \"ids\", \"positions\": \"positions\"},"
    " \"outputs\": {\"features\": \"features\"},"
    " \"ops\": ["
    "  {\"op\": \"embedding_three_table_layer_norm\", \"in\": {\"ids\": \"ids\", \"positions\": \"positions\"},"
    "   \"weights\": {\"word\": \"word\", \"position\": \"position\", \"token_type\": \"token_type\","
    "   \"gamma\": \"gamma\", \"beta\": \"beta\"}, \"out\": \"emb\", \"params\": {\"eps\": 1e-12}},"
    "  {\"op\": \"linear\", \"in\": {\"x\": \"emb\"}, \"weights\": {\"weight\": \"proj_w\", \"bias\": \"proj_b\"},"
    "   \"out\": \"act\", \"checkpoint\": \"leaky.projection\"},"
    "  {\"op\": \"leaky_relu\", \"in\": {\"x\": \"act\"}, \"out\": \"act\", \"checkpoint\": \"leaky.relu\"},"
    "  {\"op\": \"linear\", \"in\": {\"x\": \"act\"}, \"weights\": {\"weight\": \"out_w\", \"bias\": \"out_b\"},"
    "   \"out\": \"features\"}]}";

static void test_other_shape_keeps_its_own(void)
{
    ck_circuit c = {0};
    ck_weights *w = NULL;
    ck_error err = {0};
    float want[40];
    int rc = ck_circuit_parse(&c, CIRCUIT, strlen(CIRCUIT), "own.json", &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, 3, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), c.n_weights);
    const ck_tensor *t = ck_weights_find(w, "text_encoder.cnn.0.0.weight");
    CU_ASSERT_FATAL(t != NULL && !t->derived && t->elements == 40);
    CU_ASSERT_EQUAL(ck_synth_tensor_f32(t->name, 3, want, 40), CK_OK);
    CU_ASSERT_EQUAL(memcmp(want, t->data, sizeof want), 0);
    CU_ASSERT_PTR_NULL(ck_weights_find(w, "text_encoder.cnn.0.0.weight_g"));
    ck_weights_free(w);
    ck_circuit_free(&c);
}

CK_TEST_MAIN("synthetic_default",
             {"prosody circuit: embedded default = make-demo-weights file", test_prosody_default_equals_demo_file},
             {"encoder default: stored tensors only", test_encoder_default_is_stored_tensors},
             {"a test circuit's own shape is kept", test_other_shape_keeps_its_own})
