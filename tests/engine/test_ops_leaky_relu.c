/* test_ops_leaky_relu.c - the leaky_relu op end to end in the interpreter: the circuit parses its
 * slope (default 0.01, torch's), refuses a bad one, lowers it to its step, and a run computes
 * exactly the kernel's formula on what the linear before it wrote. */
#include "ck_test.h"
#include "circuit_default.h"
#include "executor.h"
#include "program.h"

/* embedding -> linear -> leaky_relu (in place, PARAMS) -> linear */
static const char *const CIRCUIT =
    "{\"name\": \"leaky\", \"format\": 1,"
    " \"dims\": {\"T\": \"runtime\", \"E\": 4, \"C\": 8, \"O\": 4, \"V\": 10, \"P\": 16, \"K\": 2},"
    " \"weights\": {"
    "  \"word\": {\"checkpoint\": \"w.word\", \"shape\": [\"V\", \"E\"], \"dtype\": \"f32\"},"
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
    "  {\"op\": \"leaky_relu\", \"in\": {\"x\": \"act\"}, \"out\": \"act\"%s, \"checkpoint\": \"leaky.relu\"},"
    "  {\"op\": \"linear\", \"in\": {\"x\": \"act\"}, \"weights\": {\"weight\": \"out_w\", \"bias\": \"out_b\"},"
    "   \"out\": \"features\"}]}";

/* Parses CIRCUIT with `params` (e.g. ", \"params\": {\"slope\": 0.2}") in the leaky_relu op. */
static int parse(ck_circuit *c, const char *params, ck_error *err)
{
    static char json[8192];
    snprintf(json, sizeof json, CIRCUIT, params);
    return ck_circuit_parse(c, json, strlen(json), "leaky.json", err);
}

static void test_slope_is_a_parameter(void)
{
    ck_circuit c = {0};
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(parse(&c, "", &err), CK_OK);
    CU_ASSERT_EQUAL(c.ops[2].kind, CK_OP_LEAKY_RELU);
    CU_ASSERT_STRING_EQUAL(ck_op_kind_name(CK_OP_LEAKY_RELU), "leaky_relu");
    CU_ASSERT_EQUAL(c.ops[2].scale, 0.01f); /* torch.nn.LeakyReLU's default */
    ck_circuit_free(&c);
    CU_ASSERT_EQUAL_FATAL(parse(&c, ", \"params\": {\"slope\": 0.2}", &err), CK_OK);
    CU_ASSERT_EQUAL(c.ops[2].scale, 0.2f);
    ck_circuit_free(&c);
    CU_ASSERT_EQUAL(parse(&c, ", \"params\": {\"slope\": -1}", &err), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "slope"));
    CU_ASSERT_EQUAL(parse(&c, ", \"params\": {\"negative_slope\": 0.1}", &err), CK_E_CIRCUIT);
    CU_ASSERT_EQUAL(parse(&c, ", \"params\": {\"slope\": \"0.1\"}", &err), CK_E_CIRCUIT);
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
    CU_ASSERT_EQUAL_FATAL(parse(&c, ", \"params\": {\"slope\": 0.2}", &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, 5, &err), CK_OK);
    const ck_op_variant *v = ck_op_variant_of(&c.ops[2], CK_DTYPE_BF16, 1);
    CU_ASSERT_PTR_EQUAL(v->fn, ck_step_leaky_relu);
    CU_ASSERT_PTR_EQUAL(v->rows, ck_step_leaky_relu_rows);
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
        size_t negative = 0;
        for (size_t i = 0; i < 9 * 8; i++) {
            float x = k.projection[i];
            CU_ASSERT_EQUAL(k.relu[i], x >= 0.0f ? x : 0.2f * x);
            negative += x < 0.0f;
        }
        CU_ASSERT(negative > 0 && negative < 9 * 8);
        ck_executor_free(ex);
    }
    ck_weights_free(w);
    ck_circuit_free(&c);
}

CK_TEST_MAIN("ops_leaky_relu",
             {"slope is a parameter", test_slope_is_a_parameter},
             {"runs the formula", test_runs_the_formula})
