/* test_ops_lstm_recurrence.c - the lstm_recurrence op end to end in the interpreter
 * (tests/fixtures/circuits/tiny_lstm.json: two gate linears, then one BiLSTM layer's recurrences):
 * the circuit checks its shapes, the step writes exactly what ck_lstm_recurrence_f32 gives on the
 * captured gates (forward into the left half, reverse into the right), and each sequence alone
 * gives its rows of the batch at 1 and 2 threads. */
#include "ck_test.h"
#include "circuit_default.h"
#include "executor.h"
#include "lstm_recurrence.h"
#include "program.h"

#define TINY_LSTM "tests/fixtures/circuits/tiny_lstm.json"

typedef struct {
    float gates[32 * 16], gates_r[32 * 16], h[32 * 8];
    size_t tokens;
} captured;

static void capture(void *ctx, const char *checkpoint, const float *data, size_t tokens, size_t cols)
{
    captured *k = ctx;
    float *to = strcmp(checkpoint, "lstm.gates") == 0           ? k->gates
                : strcmp(checkpoint, "lstm.gates_reverse") == 0 ? k->gates_r
                                                                : k->h;
    CU_ASSERT_FATAL(tokens <= 32);
    memcpy(to, data, tokens * cols * sizeof *data);
    k->tokens = tokens;
}

static void test_shapes_checked(void)
{
    ck_circuit c = {0};
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, ck_test_path(TINY_LSTM), &err), CK_OK);
    CU_ASSERT_EQUAL(c.ops[3].kind, CK_OP_LSTM_RECURRENCE);
    CU_ASSERT_STRING_EQUAL(ck_op_kind_name(CK_OP_LSTM_RECURRENCE), "lstm_recurrence");
    /* the reverse W_hh in the forward slot's place: [16,4] both, fine; a [16,4] b_hh is not */
    ck_op bad = c.ops[3];
    char msg[256];
    bad.weights[1] = bad.weights[0];
    CU_ASSERT_EQUAL(ck_op_check(&c, &bad, msg, sizeof msg), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "b_hh"));
    bad = c.ops[3];
    bad.output = bad.inputs[0]; /* [T,16]: H would be 8, the gates 32 wide */
    CU_ASSERT_EQUAL(ck_op_check(&c, &bad, msg, sizeof msg), CK_E_CIRCUIT);
    ck_circuit_free(&c);
}

static void test_runs_the_kernel_per_sequence(void)
{
    ck_circuit c = {0};
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, ck_test_path(TINY_LSTM), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, 5, &err), CK_OK);
    const int32_t ids[12] = {1, 3, 4, 5, 0, 1, 2, 9, 8, 7, 2, 1};
    const size_t offsets[4] = {0, 4, 5, 12};
    static captured k;
    float batch[12 * 4], alone[12 * 4], want[12 * 8];
    static float scratch[6 * 4 + 4 * 16];
    for (int threads = 1; threads <= 2; threads++) {
        ck_executor *ex = NULL;
        ck_executor_options o = {threads, 32, 16, 1, CK_DTYPE_F32, NULL};
        CU_ASSERT_EQUAL_FATAL(ck_executor_init(&ex, &c, w, &o, &err), CK_OK);
        CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 3, c.features_buffer, batch, 48, capture,
                                        &k, &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(k.tokens, 12);
        const float *whh = ck_weights_find(w, "lstm.weight_hh_l0")->data;
        const float *bhh = ck_weights_find(w, "lstm.bias_hh_l0")->data;
        const float *whr = ck_weights_find(w, "lstm.weight_hh_l0_reverse")->data;
        const float *bhr = ck_weights_find(w, "lstm.bias_hh_l0_reverse")->data;
        CU_ASSERT_EQUAL(ck_lstm_recurrence_f32(k.gates, 12 * 16, 16, whh, 64, bhh, 16, want, 96, 8,
                                               scratch, sizeof scratch / sizeof *scratch, offsets,
                                               3, 0, 3, 4, 0), CK_OK);
        CU_ASSERT_EQUAL(ck_lstm_recurrence_f32(k.gates_r, 12 * 16, 16, whr, 64, bhr, 16, want + 4,
                                               92, 8, scratch, sizeof scratch / sizeof *scratch,
                                               offsets, 3, 0, 3, 4, 1), CK_OK);
        CU_ASSERT_EQUAL(memcmp(k.h, want, sizeof want), 0);
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

CK_TEST_MAIN("ops_lstm_recurrence",
             {"shapes checked", test_shapes_checked},
             {"runs the kernel per sequence", test_runs_the_kernel_per_sequence})
