/* test_frames_ops.c - the frame-rate ops end to end in the interpreter on a small circuit with
 * ragged sequences and forced durations: expand_rows (token rows gathered to frames),
 * upsample_nearest2_rows, conv_transpose1d_depthwise_k3s2, add_scaled, downsample2_rows,
 * concat_cols, adain_instance_norm (statistics per sequence) and a bias-free conv1d, each checked
 * against its formula on the captured rows (exact where the op copies or rounds once in float),
 * a one-frame sequence among them (its AdaIN output is beta);
 * the per-sequence frame offsets; and a sequence's bits alone equal its rows in the batch at 1 and
 * 2 threads. */
#include <math.h>

#include "ck_test.h"
#include "circuit_default.h"
#include "executor.h"

static const char CIRCUIT[] =
    "{\"name\": \"frames\", \"format\": 1,"
    " \"dims\": {\"T\": \"runtime\", \"F\": \"frames\", \"F2\": \"frames*2\", \"C\": 4, \"C2\": 8,"
    "  \"B\": 2, \"V\": 10, \"P\": 16, \"K\": 2, \"D\": 3, \"A\": 16, \"K3\": 3, \"K1\": 1, \"ONE\": 1},"
    " \"weights\": {"
    "  \"word\": {\"checkpoint\": \"w.word\", \"shape\": [\"V\", \"C\"], \"dtype\": \"f32\"},"
    "  \"position\": {\"checkpoint\": \"w.position\", \"shape\": [\"P\", \"C\"], \"dtype\": \"f32\"},"
    "  \"token_type\": {\"checkpoint\": \"w.token_type\", \"shape\": [\"K\", \"C\"], \"dtype\": \"f32\"},"
    "  \"gamma\": {\"checkpoint\": \"w.gamma\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"beta\": {\"checkpoint\": \"w.beta\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"head_w\": {\"checkpoint\": \"w.head_w\", \"shape\": [\"B\", \"C\"], \"dtype\": \"f32\"},"
    "  \"head_b\": {\"checkpoint\": \"w.head_b\", \"shape\": [\"B\"], \"dtype\": \"f32\"},"
    "  \"pool_w\": {\"checkpoint\": \"w.pool_w\", \"shape\": [\"C\", \"ONE\", \"K3\"], \"dtype\": \"f32\"},"
    "  \"pool_b\": {\"checkpoint\": \"w.pool_b\", \"shape\": [\"C\"], \"dtype\": \"f32\"},"
    "  \"fc_w\": {\"checkpoint\": \"w.fc_w\", \"shape\": [\"A\", \"D\"], \"dtype\": \"f32\"},"
    "  \"fc_b\": {\"checkpoint\": \"w.fc_b\", \"shape\": [\"A\"], \"dtype\": \"f32\"},"
    "  \"proj_w\": {\"checkpoint\": \"w.proj_w\", \"shape\": [\"C\", \"C2\", \"K1\"], \"dtype\": \"f32\"}},"
    " \"buffers\": {"
    "  \"ids\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"input\"},"
    "  \"positions\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"input\"},"
    "  \"e\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\", \"role\": \"output\"},"
    "  \"logits\": {\"shape\": [\"T\", \"B\"], \"dtype\": \"f32\"},"
    "  \"durations\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"output\"},"
    "  \"fe\": {\"shape\": [\"F\", \"C\"], \"dtype\": \"f32\"},"
    "  \"up\": {\"shape\": [\"F2\", \"C\"], \"dtype\": \"f32\"},"
    "  \"ct\": {\"shape\": [\"F2\", \"C\"], \"dtype\": \"f32\"},"
    "  \"sum\": {\"shape\": [\"F2\", \"C\"], \"dtype\": \"f32\"},"
    "  \"down\": {\"shape\": [\"F\", \"C\"], \"dtype\": \"f32\"},"
    "  \"cat\": {\"shape\": [\"F\", \"C2\"], \"dtype\": \"f32\"},"
    "  \"norm\": {\"shape\": [\"F\", \"C2\"], \"dtype\": \"f32\"},"
    "  \"out\": {\"shape\": [\"F\", \"C\"], \"dtype\": \"f32\", \"role\": \"output\"}},"
    " \"inputs\": {\"ids\": \"ids\", \"positions\": \"positions\"},"
    " \"outputs\": {\"features\": \"e\", \"durations\": \"durations\", \"asr\": \"out\"},"
    " \"ops\": ["
    "  {\"op\": \"embedding_three_table_layer_norm\", \"in\": {\"ids\": \"ids\", \"positions\": \"positions\"},"
    "   \"weights\": {\"word\": \"word\", \"position\": \"position\", \"token_type\": \"token_type\","
    "   \"gamma\": \"gamma\", \"beta\": \"beta\"}, \"out\": \"e\", \"params\": {\"eps\": 1e-12}},"
    "  {\"op\": \"linear\", \"in\": {\"x\": \"e\"}, \"weights\": {\"weight\": \"head_w\", \"bias\": \"head_b\"},"
    "   \"out\": \"logits\"},"
    "  {\"op\": \"duration\", \"in\": {\"logits\": \"logits\"}, \"out\": \"durations\"},"
    "  {\"op\": \"expand_rows\", \"in\": {\"x\": \"e\", \"durations\": \"durations\"}, \"out\": \"fe\","
    "   \"checkpoint\": \"t.fe\"},"
    "  {\"op\": \"upsample_nearest2_rows\", \"in\": {\"x\": \"fe\"}, \"out\": \"up\", \"checkpoint\": \"t.up\"},"
    "  {\"op\": \"conv_transpose1d_depthwise_k3s2\", \"in\": {\"x\": \"fe\"},"
    "   \"weights\": {\"weight\": \"pool_w\", \"bias\": \"pool_b\"}, \"out\": \"ct\", \"checkpoint\": \"t.ct\"},"
    "  {\"op\": \"add_scaled\", \"in\": {\"x\": \"up\", \"residual\": \"ct\"}, \"out\": \"sum\","
    "   \"checkpoint\": \"t.sum\"},"
    "  {\"op\": \"downsample2_rows\", \"in\": {\"x\": \"sum\"}, \"out\": \"down\", \"checkpoint\": \"t.down\"},"
    "  {\"op\": \"concat_cols\", \"in\": {\"x\": \"fe\", \"z\": \"down\"}, \"out\": \"cat\","
    "   \"checkpoint\": \"t.cat\"},"
    "  {\"op\": \"adain_instance_norm\", \"in\": {\"x\": \"cat\"}, \"weights\": {\"fc_weight\": \"fc_w\","
    "   \"fc_bias\": \"fc_b\"}, \"out\": \"norm\", \"params\": {\"eps\": 1e-05, \"style_offset\": 1},"
    "   \"checkpoint\": \"t.norm\"},"
    "  {\"op\": \"conv1d\", \"in\": {\"x\": \"norm\"}, \"weights\": {\"weight\": \"proj_w\"}, \"out\": \"out\"}]}";

enum { S = 3, T = 7, MAX_F = 16, C = 4, STYLE = 4 };
static const int32_t IDS[T] = {1, 2, 3, 4, 5, 6, 7};
static const size_t OFFSETS[S + 1] = {0, 2, 3, 7};
static const int32_t DUR[T] = {1, 3, 1, 1, 1, 4, 2}; /* frames 4, 1 (a one-frame line), 8 */
static const float STYLES[S * STYLE] = {9, 0.5f, -1, 2, 9, -0.25f, 0.75f, 1.5f, 9, 1, 1, -2};
static const float SPEED[S] = {1, 1, 1};

typedef struct {
    float rows[6][2 * MAX_F * 8];
    size_t n[6];
} captured;

static void capture(void *ctx, const char *checkpoint, const float *data, size_t rows, size_t cols)
{
    static const char *const ids[6] = {"t.fe", "t.up", "t.ct", "t.sum", "t.down", "t.cat"};
    captured *k = ctx;
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(checkpoint, ids[i]) == 0 && rows * cols <= 2 * MAX_F * 8) {
            memcpy(k->rows[i], data, rows * cols * sizeof *data);
            k->n[i] = rows;
        }
    }
}

typedef struct {
    ck_circuit c;
    ck_weights *w;
} fixture;

static int setup(fixture *f)
{
    ck_error err = {0};
    memset(f, 0, sizeof *f);
    if (ck_circuit_parse(&f->c, CIRCUIT, strlen(CIRCUIT), "frames.json", &err) != CK_OK ||
        ck_circuit_synthetic_weights(&f->w, &f->c, 11, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
        return 0;
    }
    return 1;
}

/* Each op's rows against its formula, on one batch of 3 ragged sequences. */
static void test_ops_match_formulas(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    ck_executor *ex = NULL;
    ck_error err = {0};
    ck_executor_options o = {1, 16, 8, 1, CK_DTYPE_F32, NULL};
    CU_ASSERT_EQUAL_FATAL(ck_executor_init_frames(&ex, &f.c, f.w, &o, MAX_F, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, STYLES, S, STYLE, SPEED, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_set_durations(ex, DUR, T, &err), CK_OK);
    static captured k;
    static float out[MAX_F * C];
    int rc = ck_executor_run(ex, IDS, OFFSETS, S, f.c.asr_buffer, out, MAX_F * C, capture, &k,
                             &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    size_t n = 0;
    const size_t *fo = ck_executor_row_offsets(ex, 1, &n), *f2 = ck_executor_row_offsets(ex, 2, NULL);
    const size_t *to = ck_executor_row_offsets(ex, 0, NULL);
    CU_ASSERT_FATAL(fo != NULL && f2 != NULL && to != NULL && n == S);
    const size_t want_fo[S + 1] = {0, 4, 5, 13};
    for (size_t q = 0; q <= S; q++) {
        CU_ASSERT_EQUAL(fo[q], want_fo[q]);
        CU_ASSERT_EQUAL(f2[q], 2 * want_fo[q]);
        CU_ASSERT_EQUAL(to[q], OFFSETS[q]);
    }
    CU_ASSERT_EQUAL(k.n[0], 13);
    CU_ASSERT_EQUAL(k.n[1], 26);
    CU_ASSERT_EQUAL(k.n[4], 13);
    const float *e = ck_executor_output_rows(ex, f.c.features_buffer, &n);
    CU_ASSERT_FATAL(e != NULL && n == T);
    /* expand_rows: token t's row, durations[t] times */
    for (size_t t = 0, fr = 0; t < T; t++) {
        for (int r = 0; r < DUR[t]; r++, fr++) {
            CU_ASSERT_EQUAL(memcmp(k.rows[0] + fr * C, e + t * C, C * sizeof(float)), 0);
        }
    }
    const float *pw = ck_weights_find(f.w, "w.pool_w")->data, *pb = ck_weights_find(f.w, "w.pool_b")->data;
    for (size_t q = 0; q < S; q++) {
        const size_t L = fo[q + 1] - fo[q];
        const float *x = k.rows[0] + fo[q] * C;
        for (size_t m = 0; m < L; m++) {
            for (size_t c = 0; c < C; c++) {
                const size_t r0 = 2 * (fo[q] + m), r1 = r0 + 1;
                /* upsample: each frame twice */
                CU_ASSERT_EQUAL(k.rows[1][r0 * C + c], x[m * C + c]);
                CU_ASSERT_EQUAL(k.rows[1][r1 * C + c], x[m * C + c]);
                /* transposed conv: double, one rounding; never past the sequence's last frame */
                double next = m + 1 < L ? (double)pw[c * 3] * x[(m + 1) * C + c] : 0.0;
                CU_ASSERT_EQUAL(k.rows[2][r0 * C + c],
                                (float)((double)pw[c * 3 + 1] * x[m * C + c] + pb[c]));
                CU_ASSERT_EQUAL(k.rows[2][r1 * C + c],
                                (float)((double)pw[c * 3 + 2] * x[m * C + c] + next + pb[c]));
                /* add_scaled: two float roundings */
                float sum = k.rows[1][r0 * C + c] + k.rows[2][r0 * C + c];
                CU_ASSERT_EQUAL(k.rows[3][r0 * C + c], sum * (float)(1.0 / sqrt(2.0)));
                /* downsample2: the even rows; concat: [fe | down] */
                CU_ASSERT_EQUAL(k.rows[4][(fo[q] + m) * C + c], k.rows[3][r0 * C + c]);
                CU_ASSERT_EQUAL(k.rows[5][(fo[q] + m) * 8 + c], x[m * C + c]);
                CU_ASSERT_EQUAL(k.rows[5][(fo[q] + m) * 8 + C + c], k.rows[4][(fo[q] + m) * C + c]);
            }
        }
    }
    /* adain (style columns 1..3 of each row: style_offset 1) then a bias-free k1 conv, against a
     * double reference of both */
    const float *fw = ck_weights_find(f.w, "w.fc_w")->data, *fb = ck_weights_find(f.w, "w.fc_b")->data;
    const float *cw = ck_weights_find(f.w, "w.proj_w")->data;
    double worst = 0.0;
    for (size_t q = 0; q < S; q++) {
        const size_t L = fo[q + 1] - fo[q];
        double g[16];
        for (size_t j = 0; j < 16; j++) {
            g[j] = fb[j];
            for (size_t d = 0; d < 3; d++) {
                g[j] += (double)fw[j * 3 + d] * STYLES[q * STYLE + 1 + d];
            }
        }
        double y[MAX_F][8];
        for (size_t c = 0; c < 8; c++) {
            double mean = 0.0, var = 0.0;
            for (size_t m = 0; m < L; m++) {
                mean += k.rows[5][(fo[q] + m) * 8 + c];
            }
            mean /= (double)L;
            for (size_t m = 0; m < L; m++) {
                double dv = k.rows[5][(fo[q] + m) * 8 + c] - mean;
                var += dv * dv;
            }
            var /= (double)L;
            for (size_t m = 0; m < L; m++) {
                y[m][c] = (1.0 + g[c]) * (k.rows[5][(fo[q] + m) * 8 + c] - mean) /
                              sqrt(var + 1e-5) + g[8 + c];
            }
        }
        for (size_t m = 0; m < L; m++) {
            for (size_t c = 0; c < C; c++) {
                double want = 0.0;
                for (size_t i = 0; i < 8; i++) {
                    want += (double)cw[c * 8 + i] * y[m][i];
                }
                worst = fmax(worst, fabs(out[(fo[q] + m) * C + c] - want) / fmax(1.0, fabs(want)));
            }
        }
    }
    CU_ASSERT(worst < 1e-5);
    ck_executor_free(ex);
    ck_circuit_free(&f.c);
    ck_weights_free(f.w);
}

/* Each sequence alone gives its rows of the batch bit for bit, at 1 and 2 threads, fused and not. */
static void test_alone_equals_batch(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    ck_error err = {0};
    static float batch[MAX_F * C], solo[MAX_F * C];
    const size_t fo[S + 1] = {0, 4, 5, 13};
    for (int threads = 1; threads <= 2; threads++) {
        for (int fuse = 0; fuse <= 1; fuse++) {
            ck_executor *ex = NULL;
            ck_executor_options o = {threads, 16, 8, fuse, CK_DTYPE_F32, NULL};
            CU_ASSERT_EQUAL_FATAL(ck_executor_init_frames(&ex, &f.c, f.w, &o, MAX_F, &err), CK_OK);
            CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, STYLES, S, STYLE, SPEED,
                                                                  &err), CK_OK);
            CU_ASSERT_EQUAL_FATAL(ck_executor_set_durations(ex, DUR, T, &err), CK_OK);
            CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, IDS, OFFSETS, S, f.c.asr_buffer, batch,
                                                  MAX_F * C, NULL, NULL, &err), CK_OK);
            for (size_t q = 0; q < S; q++) {
                const size_t len = OFFSETS[q + 1] - OFFSETS[q], one[2] = {0, len};
                CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, STYLES + q * STYLE, 1,
                                                                      STYLE, SPEED, &err), CK_OK);
                CU_ASSERT_EQUAL_FATAL(ck_executor_set_durations(ex, DUR + OFFSETS[q], len, &err),
                                      CK_OK);
                CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, IDS + OFFSETS[q], one, 1, f.c.asr_buffer,
                                                      solo, MAX_F * C, NULL, NULL, &err), CK_OK);
                CU_ASSERT_EQUAL(memcmp(solo, batch + fo[q] * C, (fo[q + 1] - fo[q]) * C *
                                       sizeof(float)), 0);
            }
            ck_executor_free(ex);
        }
    }
    ck_circuit_free(&f.c);
    ck_weights_free(f.w);
}

CK_TEST_MAIN("frames_ops",
             {"ops match their formulas on ragged frames", test_ops_match_formulas},
             {"a sequence alone equals its batch rows", test_alone_equals_batch})
