/* test_prosody_decoder.c - circuits/kokoro_decoder.json (kokoro_prosody.json, reading the whole
 * ref_s row [decoder half | predictor half] with its predictor ops at style_offset 128, + the
 * decoder's first pieces: F0_conv and N_conv (a 'same' conv's even rows), cat, encode, asr_res,
 * decode.0-3 with the last block's x2 upsample) against the pinned PyTorch capture
 * (tests/fixtures/speech) on the synthetic whole Kokoro, durations forced from the capture: every
 * dec.* stage the capture holds (all of them for speech4; F0_conv, N_conv, encode, asr_res and
 * decode.3 for the others) within tolerances measured from the data; F0 and N equal
 * kokoro_prosody.json's bits (the predictor half read at an offset gives the same bits); the 4
 * cases in one batch give each case's decoder output bit for bit, at 1 and 2 threads. */
#include <math.h>

#include "ck_test.h"
#include "executor.h"
#include "speech_fixture.h"

#define CIRCUIT "circuits/kokoro_decoder.json"
#define CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"

static const char *const CASES[] = {"speech4", "speech8", "speech20", "speech40"};
enum { N_CASES = 4, MAX_T = 40, MAX_F = 80, C = 512, DEC = 1024 };

typedef ck_speech_fixture fixture;

static int setup(fixture *f)
{
    return ck_speech_fixture_open(f, CIRCUIT, CAPTURE, CASES, N_CASES, 256, MAX_T, MAX_F, 0);
}


/* max |ours[r, c] - capture[c, r]| over the case's capture tensor `what` ([cols, rows]; [rows] or
 * [1, rows] for cols 1), and the largest |capture| (*scale); -1 when the case has no such tensor. */
static double worst_vs_capture(const fixture *f, size_t k, const char *what, const float *ours,
                               size_t rows, size_t cols, double *scale)
{
    const ck_st_tensor *t = ck_speech_tensor(f, k, what);
    *scale = 0.0;
    if (t == NULL) {
        return -1.0;
    }
    CU_ASSERT_FATAL(t->elements == rows * cols &&
                    (t->rank == 1 || (t->rank == 2 && t->shape[0] == cols)));
    float *ref = malloc(t->elements * sizeof *ref);
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_to_f32(t, ref, t->elements, &err), CK_OK);
    double worst = 0.0;
    for (size_t r = 0; r < rows; r++) {
        for (size_t ch = 0; ch < cols; ch++) {
            double want = ref[ch * rows + r];
            worst = fmax(worst, fabs((double)ours[r * cols + ch] - want));
            *scale = fmax(*scale, fabs(want));
        }
    }
    free(ref);
    return worst;
}

enum { N_STAGES = 9 };
static const char *const STAGES[N_STAGES] = {"dec.F0_conv", "dec.N_conv", "dec.encode",
                                             "dec.asr_res", "dec.decode.0", "dec.decode.1",
                                             "dec.decode.2", "dec.decode.3", "F0"};
static const size_t STAGE_COLS[N_STAGES] = {1, 1, DEC, 64, DEC, DEC, DEC, C, 1};
static const size_t STAGE_SCALE[N_STAGES] = {1, 1, 1, 1, 1, 1, 1, 2, 2}; /* rows per frame */
/* bounds about 4x the worst measured over the 4 cases (docs/speech-design.md): F0_conv 9.1e-6,
 * N_conv 1.7e-7 (|N_conv| <= 0.011), encode 8.1e-6, asr_res 1.7e-6, decode.0-2 1.3e-5, 2.0e-5,
 * 3.0e-5 (speech4), decode.3 3.5e-5, F0 8.5e-4 (Hz) */
static const double BOUND[N_STAGES] = {4e-5, 7e-7, 3.5e-5, 7e-6, 6e-5, 8e-5, 1.2e-4, 1.4e-4, 3.5e-3};

typedef struct {
    float *rows[N_STAGES];
    size_t n[N_STAGES];
} captured;

static void capture(void *ctx, const char *checkpoint, const float *data, size_t rows, size_t cols)
{
    captured *k = ctx;
    static const char prefix[] = "kokoro.decoder.";
    for (size_t i = 0; i + 1 < N_STAGES; i++) {
        if (strncmp(checkpoint, prefix, sizeof prefix - 1) == 0 &&
            strcmp(checkpoint + sizeof prefix - 1, STAGES[i] + 4) == 0 &&
            rows <= 2 * MAX_F && cols == STAGE_COLS[i]) {
            memcpy(k->rows[i], data, rows * cols * sizeof *data);
            k->n[i] = rows;
        }
    }
}

static void captured_alloc(captured *k)
{
    for (size_t i = 0; i < N_STAGES; i++) {
        k->rows[i] = calloc(2 * MAX_F * STAGE_COLS[i], sizeof(float));
        k->n[i] = 0;
        CU_ASSERT_PTR_NOT_NULL_FATAL(k->rows[i]);
    }
}

static void captured_free(captured *k)
{
    for (size_t i = 0; i < N_STAGES; i++) {
        free(k->rows[i]);
    }
}

/* Each case alone, durations forced from the capture, against every dec.* stage it holds. */
static void test_matches_capture(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    ck_executor *ex = NULL;
    ck_error err = {0};
    ck_executor_options o = {1, 64, 64, 0, CK_DTYPE_F32, NULL};
    int rc = ck_executor_init_frames(&ex, &f.c, f.w, &o, 0, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    captured cap;
    captured_alloc(&cap);
    double worst[N_STAGES] = {0};
    int seen[N_STAGES] = {0};
    for (size_t k = 0; k < N_CASES; k++) {
        size_t offsets[2] = {0, f.tokens[k]}, rows = 0, fr = f.frames[k];
        CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, ck_speech_style(&f, k),
                                                              1, 256, &f.speed[k],
                                                              &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_executor_set_durations(ex, f.dur[k], f.tokens[k], &err), CK_OK);
        rc = ck_executor_run(ex, f.ids[k], offsets, 1, f.c.decoder_buffer, NULL, 0, capture, &cap,
                             &err);
        if (rc != CK_OK) {
            fprintf(stderr, "\n    %s\n", err.message);
        }
        CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
        const float *f0 = ck_executor_output_rows(ex, f.c.f0_buffer, &rows);
        CU_ASSERT_FATAL(f0 != NULL && rows == 2 * fr);
        memcpy(cap.rows[N_STAGES - 1], f0, rows * sizeof *f0);
        cap.n[N_STAGES - 1] = rows;
        fprintf(stderr, "\n    %s (F %zu):", CASES[k], fr);
        for (size_t i = 0; i < N_STAGES; i++) {
            double scale = 0.0;
            CU_ASSERT_EQUAL(cap.n[i], STAGE_SCALE[i] * fr);
            double w = worst_vs_capture(&f, k, STAGES[i], cap.rows[i], STAGE_SCALE[i] * fr,
                                        STAGE_COLS[i], &scale);
            if (w >= 0.0) {
                fprintf(stderr, " %s %.3g (<= %.3g)", STAGES[i] + (i + 1 < N_STAGES ? 4 : 0), w,
                        scale);
                worst[i] = fmax(worst[i], w);
                seen[i] = 1;
                CU_ASSERT(scale > 1e-3);
            }
        }
    }
    fprintf(stderr, "\n    ");
    for (size_t i = 0; i < N_STAGES; i++) {
        CU_ASSERT(seen[i]);
        CU_ASSERT(worst[i] < BOUND[i]);
        if (!(worst[i] < BOUND[i])) {
            fprintf(stderr, "%s: worst %.3g above %.3g\n    ", STAGES[i], worst[i], BOUND[i]);
        }
    }
    captured_free(&cap);
    ck_executor_free(ex);
    ck_speech_fixture_close(&f);
}

/* The 4 cases in one batch give each case's decoder output ([2F, 512]) bit for bit at 1 and 2
 * threads; F0 equals kokoro_prosody.json's (the predictor half read at offset 128 of the whole
 * row, vs. a 128-wide style). */
static void test_batch_invariant(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    static int32_t ids[N_CASES * MAX_T], dur[N_CASES * MAX_T];
    static float pred[N_CASES * 128];
    size_t offsets[N_CASES + 1];
    size_t frames = ck_speech_batch(&f, ids, offsets);
    for (size_t k = 0; k < N_CASES; k++) {
        memcpy(dur + offsets[k], f.dur[k], f.tokens[k] * sizeof *dur);
        memcpy(pred + k * 128, ck_speech_style(&f, k) + 128, 128 * sizeof *pred);
    }
    ck_error err = {0};
    static float batch[N_CASES * 2 * MAX_F * C], f0[N_CASES * 2 * MAX_F];
    for (int threads = 1; threads <= 2; threads++) {
        ck_executor *ex = NULL;
        ck_executor_options o = {threads, 128, 64, 1, CK_DTYPE_F32, NULL};
        CU_ASSERT_EQUAL_FATAL(ck_executor_init_frames(&ex, &f.c, f.w, &o, 256, &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, f.style, N_CASES, 256, f.speed,
                                                              &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_executor_set_durations(ex, dur, offsets[N_CASES], &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, N_CASES, f.c.decoder_buffer, batch,
                                              sizeof batch / sizeof *batch, NULL, NULL, &err),
                              CK_OK);
        size_t rows = 0;
        const float *r = ck_executor_output_rows(ex, f.c.f0_buffer, &rows);
        CU_ASSERT_FATAL(r != NULL && rows == 2 * frames);
        memcpy(f0, r, rows * sizeof *r);
        const size_t *fo = ck_executor_row_offsets(ex, 1, NULL);
        CU_ASSERT_FATAL(fo != NULL && fo[N_CASES] == frames);
        size_t at[N_CASES + 1];
        memcpy(at, fo, sizeof at);
        for (size_t k = 0; k < N_CASES; k++) {
            size_t one[2] = {0, f.tokens[k]};
            CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, ck_speech_style(&f, k),
                                                                  1, 256,
                                                                  &f.speed[k], &err), CK_OK);
            CU_ASSERT_EQUAL_FATAL(ck_executor_set_durations(ex, f.dur[k], f.tokens[k], &err),
                                  CK_OK);
            CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], one, 1, f.c.decoder_buffer, NULL,
                                                  0, NULL, NULL, &err), CK_OK);
            r = ck_executor_output_rows(ex, f.c.decoder_buffer, &rows);
            CU_ASSERT_FATAL(r != NULL && rows == 2 * f.frames[k]);
            CU_ASSERT_EQUAL(memcmp(r, batch + 2 * at[k] * C, rows * C * sizeof *r), 0);
        }
        ck_executor_free(ex);
    }
    /* kokoro_prosody.json with the 128-wide predictor half: the same F0 bits */
    ck_circuit pc;
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&pc, ck_test_path("circuits/kokoro_prosody.json"), &err),
                          CK_OK);
    ck_executor *ex = NULL;
    ck_executor_options o = {1, 128, 64, 1, CK_DTYPE_F32, NULL};
    CU_ASSERT_EQUAL_FATAL(ck_executor_init_frames(&ex, &pc, f.w, &o, 256, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, pred, N_CASES, 128, f.speed, &err),
                          CK_OK);
    static float f0_prosody[N_CASES * 2 * MAX_F];
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, N_CASES, pc.f0_buffer, f0_prosody,
                                          N_CASES * 2 * MAX_F, NULL, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(memcmp(f0, f0_prosody, 2 * frames * sizeof *f0), 0);
    /* the whole row where the prosody circuit reads 128 columns from 0 would be the decoder half:
     * a style narrower than style_offset + 128 is refused */
    ck_executor_free(ex);
    ck_circuit_free(&pc);
    ex = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_executor_init_frames(&ex, &f.c, f.w, &o, 256, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, pred, N_CASES, 128, f.speed, &err),
                          CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, N_CASES, f.c.decoder_buffer, NULL, 0, NULL,
                                    NULL, &err), CK_E_ARG);
    ck_executor_free(ex);
    ck_speech_fixture_close(&f);
}

CK_TEST_MAIN("prosody_decoder",
             {"dec.* stages match the capture", test_matches_capture},
             {"batch invariant; F0 as kokoro_prosody.json", test_batch_invariant})
