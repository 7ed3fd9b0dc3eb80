/* test_ops_layer_norm.c - the layer_norm op end to end in the interpreter: the circuit requires its
 * eps and checks gamma and beta against its cols, lowers it to its step, and a run computes exactly
 * the kernel's formula on what the linear before it wrote. */
#include <math.h>

#include "ck_test.h"
#include "circuit_default.h"
#include "executor.h"
#include "program.h"

/* embedding -> linear -> layer_norm (in place, PARAMS) -> linear */
static const char *const CIRCUIT =
    "{\"name\": \"ln\", \"format\": 1,"
    " \"dims\": {\"T\": \"runtime\", \"E\": 4, \"C\": 8, \"O\": 4, \"V\": 10, \"P\": 16, \"K\": 2},"
    " \"weights\": {"
    "  \"word\": {\"checkpoint\": \"w.word\", \"shape\": [\"V\", \"E\"], \"dtype\": \"f32\"},"
    "  \"position\": {\"checkpoint\": \"w.position\", \"shape\": [\"P\", \"E\"], \"dtype\": \"f32\"},"
    "  \"token_type\": {\"checkpoint\": \"w.token_type\", \"shape\": [\"K\", \"E\"], \"dtype\": \"f32\"},"
    "  \"gamma\": {\"checkpoint\": \"w.gamma\", \"shape\": [\"E\"], \"dtype\": \"f32\"},"
    "  \"beta\": {\"checkpoint\": \"w.beta\", \"shape\": [\"E\"], \"dtype\": \"f32\"},"
    "  \"proj_w\": {\"checkpoint\": \"w.proj_w\", \"shape\": [\"C\", \"E\"], \"dtype\": \"f32\"},"
    "  \"proj_b\": {\"checkpoint\": \"w.proj_b\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"ln_g\": {\"checkpoint\": \"w.ln_g\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"ln_b\": {\"checkpoint\": \"w.ln_b\", \"shape\": [\"%s\"], \"dtype\": \"f32\"},"
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
    "  {\"op\": \"layer_norm\", \"in\": {\"x\": \"act\"}, \"out\": \"act\","
    "   \"weights\": {\"gamma\": \"ln_g\", \"beta\": \"ln_b\"}%s, \"checkpoint\": \"leaky.relu\"},"
    "  {\"op\": \"linear\", \"in\": {\"x\": \"act\"}, \"weights\": {\"weight\": \"out_w\", \"bias\": \"out_b\"},"
    "   \"out\": \"features\"}]}";

/* Parses CIRCUIT with beta's dim and `params` (e.g. ", \"params\": {\"eps\": 1e-5}") in the
 * layer_norm op. */
static int parse(ck_circuit *c, const char *beta_dim, const char *params, ck_error *err)
{
    static char json[8192];
    snprintf(json, sizeof json, CIRCUIT, beta_dim, params);
    return ck_circuit_parse(c, json, strlen(json), "ln.json", err);
}

static void test_eps_and_weights_checked(void)
{
    ck_circuit c = {0};
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(parse(&c, "C", ", \"params\": {\"eps\": 1e-5}", &err), CK_OK);
    CU_ASSERT_EQUAL(c.ops[2].kind, CK_OP_LAYER_NORM);
    CU_ASSERT_STRING_EQUAL(ck_op_kind_name(CK_OP_LAYER_NORM), "layer_norm");
    CU_ASSERT_EQUAL(c.ops[2].eps, 1e-5f);
    ck_circuit_free(&c);
    CU_ASSERT_EQUAL(parse(&c, "C", "", &err), CK_E_CIRCUIT); /* eps is required */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "eps"));
    CU_ASSERT_EQUAL(parse(&c, "C", ", \"params\": {\"eps\": 0}", &err), CK_E_CIRCUIT);
    err = (ck_error){0};
    CU_ASSERT_EQUAL(parse(&c, "E", ", \"params\": {\"eps\": 1e-5}", &err), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "\"beta\""));
}

typedef struct {
    float projection[32 * 8], relu[32 * 8];
    size_t tokens;
} captured;

static void capture(void *ctx, const char *checkpoint, const float *data, size_t tokens, size_t cols)
{
    captured *k = ctx;
    float *to = strcmp(checkpoint, "leaky.projection") == 0 ? k->projection : k->relu;
    CU_ASSERT_EQUAL_FATAL(cols, 8);
    CU_ASSERT_FATAL(tokens <= 32);
    memcpy(to, data, tokens * cols * sizeof *data);
    k->tokens = tokens;
}

/* Lowered to its own step (f32 under both precisions); a captured run gives relu = the formula of
 * what the projection wrote, bit for bit; without capture the row-local run gives the same
 * features. */
static void test_runs_the_formula(void)
{
    ck_circuit c = {0};
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(parse(&c, "C", ", \"params\": {\"eps\": 1e-5}", &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, 5, &err), CK_OK);
    const ck_op_variant *v = ck_op_variant_of(&c.ops[2], CK_DTYPE_BF16, 1);
    CU_ASSERT_PTR_EQUAL(v->fn, ck_step_layer_norm);
    CU_ASSERT_PTR_EQUAL(v->rows, ck_step_layer_norm_rows);
    CU_ASSERT_EQUAL(v->computes, CK_DTYPE_F32);
    const int32_t ids[9] = {0, 3, 4, 0, 0, 1, 2, 9, 0};
    const size_t offsets[3] = {0, 4, 9};
    float plain[9 * 4], with_capture[9 * 4];
    captured k = {{0}, {0}, 0};
    for (int fuse = 0; fuse <= 1; fuse++) {
        ck_executor *ex = NULL;
        ck_executor_options o = {2, 32, 16, fuse, CK_DTYPE_F32, NULL};
        CU_ASSERT_EQUAL_FATAL(ck_executor_init(&ex, &c, w, &o, &err), CK_OK);
        CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 2, c.features_buffer, with_capture, 36,
                                        capture, &k, &err), CK_OK);
        CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 2, c.features_buffer, plain, 36, NULL,
                                        NULL, &err), CK_OK);
        CU_ASSERT_EQUAL(memcmp(plain, with_capture, sizeof plain), 0);
        CU_ASSERT_EQUAL(k.tokens, 9);
        const float *g = ck_weights_find(w, "w.ln_g")->data, *be = ck_weights_find(w, "w.ln_b")->data;
        for (size_t t = 0; t < 9; t++) {
            const float *x = k.projection + t * 8;
            double sum = 0.0, sq = 0.0;
            for (size_t i = 0; i < 8; i++) {
                sum += x[i];
            }
            double mean = sum / 8.0;
            for (size_t i = 0; i < 8; i++) {
                sq += ((double)x[i] - mean) * ((double)x[i] - mean);
            }
            double rstd = 1.0 / sqrt(sq / 8.0 + (double)1e-5f);
            for (size_t i = 0; i < 8; i++) {
                float want = (float)(((double)x[i] - mean) * rstd * (double)g[i] + (double)be[i]);
                CU_ASSERT_EQUAL(k.relu[t * 8 + i], want);
            }
        }
        ck_executor_free(ex);
    }
    ck_weights_free(w);
    ck_circuit_free(&c);
}

CK_TEST_MAIN("ops_layer_norm",
             {"eps and weights checked", test_eps_and_weights_checked},
             {"runs the formula", test_runs_the_formula})
