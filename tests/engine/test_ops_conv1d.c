/* test_ops_conv1d.c - the conv1d op end to end in the interpreter: the circuit checks its weight
 * [out,in,K] (K odd), lowers it to its step with a packed linear, and a run computes torch's Conv1d
 * ('same' padding per sequence) on what the linear before it wrote, in fp32 and bf16; a sequence
 * alone gives its bits in the batch, at 1 and 2 threads. */
#include <math.h>

#include "ck_dtype.h"
#include "ck_test.h"
#include "circuit_default.h"
#include "executor.h"
#include "program.h"

/* embedding -> linear -> conv1d (weight [C, C, KW]) -> linear */
static const char *const CIRCUIT =
    "{\"name\": \"ln\", \"format\": 1,"
    " \"dims\": {\"T\": \"runtime\", \"E\": 4, \"C\": 8, \"O\": 4, \"V\": 10, \"P\": 16, \"K\": 2, \"KW\": 5, \"K4\": 4},"
    " \"weights\": {"
    "  \"word\": {\"checkpoint\": \"w.word\", \"shape\": [\"V\", \"E\"], \"dtype\": \"f32\"},"
    "  \"position\": {\"checkpoint\": \"w.position\", \"shape\": [\"P\", \"E\"], \"dtype\": \"f32\"},"
    "  \"token_type\": {\"checkpoint\": \"w.token_type\", \"shape\": [\"K\", \"E\"], \"dtype\": \"f32\"},"
    "  \"gamma\": {\"checkpoint\": \"w.gamma\", \"shape\": [\"E\"], \"dtype\": \"f32\"},"
    "  \"beta\": {\"checkpoint\": \"w.beta\", \"shape\": [\"E\"], \"dtype\": \"f32\"},"
    "  \"proj_w\": {\"checkpoint\": \"w.proj_w\", \"shape\": [\"C\", \"E\"], \"dtype\": \"f32\"},"
    "  \"proj_b\": {\"checkpoint\": \"w.proj_b\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"conv_w\": {\"checkpoint\": \"w.conv_w\", \"shape\": [\"C\", \"C\", \"%s\"], \"dtype\": \"f32\"},"
    "  \"conv_b\": {\"checkpoint\": \"w.conv_b\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"out_w\": {\"checkpoint\": \"w.out_w\", \"shape\": [\"O\", \"C\"], \"dtype\": \"f32\"},"
    "  \"out_b\": {\"checkpoint\": \"w.out_b\", \"shape\": [\"O\"], \"dtype\": \"f32\"}},"
    " \"buffers\": {"
    "  \"ids\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"input\"},"
    "  \"positions\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"input\"},"
    "  \"emb\": {\"shape\": [\"T\", \"E\"], \"dtype\": \"f32\"},"
    "  \"act\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\"},"
    "  \"conv\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\"},"
    "  \"features\": {\"shape\": [\"T\", \"O\"], \"dtype\": \"f32\", \"role\": \"output\"}},"
    " \"inputs\": {\"ids\": \"ids\", \"positions\": \"positions\"},"
    " \"outputs\": {\"features\": \"features\"},"
    " \"ops\": ["
    "  {\"op\": \"embedding_three_table_layer_norm\", \"in\": {\"ids\": \"ids\", \"positions\": \"positions\"},"
    "   \"weights\": {\"word\": \"word\", \"position\": \"position\", \"token_type\": \"token_type\","
    "   \"gamma\": \"gamma\", \"beta\": \"beta\"}, \"out\": \"emb\", \"params\": {\"eps\": 1e-12}},"
    "  {\"op\": \"linear\", \"in\": {\"x\": \"emb\"}, \"weights\": {\"weight\": \"proj_w\", \"bias\": \"proj_b\"},"
    "   \"out\": \"act\", \"checkpoint\": \"leaky.projection\"},"
    "  {\"op\": \"conv1d\", \"in\": {\"x\": \"act\"}, \"out\": \"%s\","
    "   \"weights\": {\"weight\": \"conv_w\", \"bias\": \"conv_b\"}, \"checkpoint\": \"leaky.relu\"},"
    "  {\"op\": \"linear\", \"in\": {\"x\": \"conv\"}, \"weights\": {\"weight\": \"out_w\", \"bias\": \"out_b\"},"
    "   \"out\": \"features\"}]}";

/* Parses CIRCUIT with the weight's taps dim and the conv's out buffer. */
static int parse(ck_circuit *c, const char *taps, const char *out, ck_error *err)
{
    static char json[8192];
    snprintf(json, sizeof json, CIRCUIT, taps, out);
    return ck_circuit_parse(c, json, strlen(json), "conv.json", err);
}

static void test_weight_checked(void)
{
    ck_circuit c = {0};
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(parse(&c, "KW", "conv", &err), CK_OK);
    CU_ASSERT_EQUAL(c.ops[2].kind, CK_OP_CONV1D);
    CU_ASSERT_STRING_EQUAL(ck_op_kind_name(CK_OP_CONV1D), "conv1d");
    ck_circuit_free(&c);
    CU_ASSERT_EQUAL(parse(&c, "K4", "conv", &err), CK_E_CIRCUIT); /* even taps: no 'same' padding */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "K odd"));
    err = (ck_error){0};
    CU_ASSERT_EQUAL(parse(&c, "KW", "act", &err), CK_E_CIRCUIT); /* not in place: reads neighbours */
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

/* bf16(x) as f32 (round to nearest even): what a bf16 linear multiplies. */
static double bf16_of(float x, ck_dtype precision)
{
    return precision == CK_DTYPE_BF16 ? (double)ck_bf16_to_f32(ck_bf16_from_f32(x)) : (double)x;
}

/* An executor at `precision`; bf16 on a CPU without native bf16 is refused (CK_E_BACKEND, the
 * encoder's message): then NULL. */
static ck_executor *make(const ck_circuit *c, const ck_weights *w, int threads, int fuse,
                         ck_dtype precision)
{
    ck_executor *ex = NULL;
    ck_error err = {0};
    ck_executor_options o = {threads, 32, 16, fuse, precision, NULL};
    int rc = ck_executor_init(&ex, c, w, &o, &err);
    if (rc == CK_E_BACKEND && precision == CK_DTYPE_BF16) {
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "precision bf16"));
        fprintf(stderr, "\n    bf16 refused here: %s", err.message);
        return NULL;
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    return ex;
}

/* Lowered to its own step (bf16: its bf16 variant, 256-row im2col tiles rounded by its bf16
 * linear); a captured run gives relu = the formula of what the projection wrote (bf16: on the
 * bf16-rounded operands), and without capture the same features. */
static void test_runs_the_formula(void)
{
    ck_circuit c = {0};
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(parse(&c, "KW", "conv", &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, 5, &err), CK_OK);
    const ck_op_variant *v = ck_op_variant_of(&c.ops[2], CK_DTYPE_BF16, 1);
    CU_ASSERT_PTR_EQUAL(v->fn, ck_step_conv1d_bf16);
    CU_ASSERT_PTR_EQUAL(v->rows, NULL);
    CU_ASSERT_EQUAL(v->computes, CK_DTYPE_BF16);
    CU_ASSERT_PTR_EQUAL(ck_op_variant_of(&c.ops[2], CK_DTYPE_F32, 1)->fn, ck_step_conv1d);
    /* no duration op: every op at the program's precision */
    CU_ASSERT_EQUAL(ck_op_precision_at(&c, 2, CK_DTYPE_BF16), CK_DTYPE_BF16);
    const int32_t ids[9] = {0, 3, 4, 0, 0, 1, 2, 9, 0};
    const size_t offsets[3] = {0, 4, 9};
    float plain[9 * 4], with_capture[9 * 4];
    captured k = {{0}, {0}, 0};
    for (int run = 0; run < 4; run++) {
        const int fuse = run & 1;
        const ck_dtype precision = run < 2 ? CK_DTYPE_F32 : CK_DTYPE_BF16;
        ck_executor *ex = make(&c, w, 2, fuse, precision);
        if (ex == NULL) {
            continue;
        }
        CU_ASSERT_EQUAL(ck_executor_op_dtype(ex, CK_OP_CONV1D), precision);
        CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 2, c.features_buffer, with_capture, 36,
                                        capture, &k, &err), CK_OK);
        CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 2, c.features_buffer, plain, 36, NULL,
                                        NULL, &err), CK_OK);
        CU_ASSERT_EQUAL(memcmp(plain, with_capture, sizeof plain), 0);
        CU_ASSERT_EQUAL(k.tokens, 9);
        const float *cw = ck_weights_find(w, "w.conv_w")->data;
        const float *cb = ck_weights_find(w, "w.conv_b")->data;
        double worst = 0.0;
        for (size_t q = 0; q < 2; q++) {
            for (size_t t = offsets[q]; t < offsets[q + 1]; t++) {
                for (size_t o = 0; o < 8; o++) {
                    double acc = cb[o];
                    for (size_t j = 0; j < 5; j++) {
                        size_t src = t + j; /* t + j - 2, kept unsigned */
                        if (src < offsets[q] + 2 || src >= offsets[q + 1] + 2) {
                            continue;
                        }
                        for (size_t i = 0; i < 8; i++) {
                            acc += bf16_of(cw[(o * 8 + i) * 5 + j], precision) *
                                   bf16_of(k.projection[(src - 2) * 8 + i], precision);
                        }
                    }
                    worst = fmax(worst, fabs(acc - (double)k.relu[t * 8 + o]));
                }
            }
        }
        /* the same products either way (bf16 ones are exact in f32): only the f32 sum's order */
        CU_ASSERT(worst < 1e-5);
        ck_executor_free(ex);
    }
    ck_weights_free(w);
    ck_circuit_free(&c);
}

/* Each sequence's features alone equal its rows in the batch, at 1 and 2 threads, in fp32 and bf16:
 * the padding is per sequence and a row's bits are its own im2col row's (bf16: the linear's 256-
 * and 128-row tiles give a row the same bits, linear.h). */
static void test_batch_invariant(void)
{
    ck_circuit c = {0};
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(parse(&c, "KW", "conv", &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, 7, &err), CK_OK);
    const int32_t ids[12] = {1, 3, 4, 5, 0, 1, 2, 9, 8, 7, 2, 1};
    const size_t offsets[4] = {0, 4, 5, 12};
    float batch[12 * 4], alone[12 * 4];
    for (int run = 0; run < 4; run++) {
        const int threads = 1 + (run & 1);
        ck_executor *ex = make(&c, w, threads, 1, run < 2 ? CK_DTYPE_F32 : CK_DTYPE_BF16);
        if (ex == NULL) {
            continue;
        }
        CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 3, c.features_buffer, batch, 48, NULL,
                                        NULL, &err), CK_OK);
        for (size_t q = 0; q < 3; q++) {
            size_t n = offsets[q + 1] - offsets[q];
            const size_t one[2] = {0, n};
            CU_ASSERT_EQUAL(ck_executor_run(ex, ids + offsets[q], one, 1, c.features_buffer, alone,
                                            n * 4, NULL, NULL, &err), CK_OK);
            CU_ASSERT_EQUAL(memcmp(alone, batch + offsets[q] * 4, n * 4 * sizeof(float)), 0);
        }
        ck_executor_free(ex);
    }
    ck_weights_free(w);
    ck_circuit_free(&c);
}

CK_TEST_MAIN("ops_conv1d",
             {"batch invariant", test_batch_invariant},
             {"weight checked", test_weight_checked},
             {"runs the formula", test_runs_the_formula})
