/* test_prosody_frames.c - circuits/kokoro_prosody.json (PL-BERT -> durations -> the alignment ->
 * F0Ntrain) against the pinned PyTorch capture (tests/fixtures/speech, tools/kokoro_reference.py)
 * on the synthetic whole Kokoro, style = voice "synthetic" row len(phonemes) - 1 as in
 * test_prosody_tokens.c: en and asr (the alignment, bits of d and t_en), f0n_shared (the shared
 * BiLSTM over frames; captured for speech4), F0 and N (2F values per sequence) of every case within
 * tolerances measured from the data, with the durations forced from the capture
 * (ck_executor_set_durations) and with the circuit's own (equal to the capture's: same bits); the
 * 4 cases in one batch give each case's solo bits at 1 and 2 threads, fused and in parity; and the
 * frame limit, the forced durations and the frame rows of a circuit are checked. */
#include <math.h>

#include "ck_test.h"
#include "executor.h"
#include "speech_fixture.h"

#define CIRCUIT "circuits/kokoro_prosody.json"
#define CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"

static const char *const CASES[] = {"speech4", "speech8", "speech20", "speech40"};
enum { N_CASES = 4, MAX_T = 40, MAX_F = 80, DC = 640, C = 512 };

typedef ck_speech_fixture fixture;

static int setup(fixture *f)
{
    return ck_speech_fixture_open(f, CIRCUIT, CAPTURE, CASES, N_CASES, 128, MAX_T, MAX_F, 0);
}

/* max |ours[r, c] - capture[c, r]| over the case's capture tensor `what` ([cols, rows], or [rows]
 * for cols 1), and the largest |capture| (*scale); -1 when the case has no such tensor (the light
 * tier keeps no en, asr, f0n_shared). */
static double worst_vs_capture(const fixture *f, size_t k, const char *what, const float *ours,
                               size_t rows, size_t cols, double *scale)
{
    const ck_st_tensor *t = ck_speech_tensor(f, k, what);
    *scale = 0.0;
    if (t == NULL) {
        return -1.0;
    }
    CU_ASSERT_FATAL(cols == 1 ? t->rank == 1 && t->shape[0] == rows
                              : t->rank == 2 && t->shape[0] == cols && t->shape[1] == rows);
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

typedef struct {
    float en[MAX_F * DC], asr[MAX_F * C], shared[MAX_F * C];
    size_t en_rows, asr_rows, shared_rows;
} captured;

static void capture(void *ctx, const char *checkpoint, const float *data, size_t rows, size_t cols)
{
    captured *k = ctx;
    float *to = NULL;
    size_t *n = NULL;
    if (strcmp(checkpoint, "kokoro.predictor.en") == 0) {
        to = k->en, n = &k->en_rows;
    } else if (strcmp(checkpoint, "kokoro.asr") == 0) {
        to = k->asr, n = &k->asr_rows;
    } else if (strcmp(checkpoint, "kokoro.predictor.f0n_shared") == 0) {
        to = k->shared, n = &k->shared_rows;
    }
    if (to != NULL && rows <= MAX_F) {
        memcpy(to, data, rows * cols * sizeof *data);
        *n = rows;
    }
}

/* One case alone, durations forced (1) or the circuit's own (0): F0 into f0, N into n (2F each),
 * the checkpoints into cap. */
static void run_case(const fixture *f, ck_executor *ex, size_t k, int forced, float *f0, float *n,
                     captured *cap)
{
    ck_error err = {0};
    size_t offsets[2] = {0, f->tokens[k]}, rows = 0;
    CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, ck_speech_style(f, k),
                                                          1, 128, &f->speed[k],
                                                          &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_set_durations(ex, forced ? f->dur[k] : NULL,
                                                    forced ? f->tokens[k] : 0, &err), CK_OK);
    int rc = ck_executor_run(ex, f->ids[k], offsets, 1, f->c.f0_buffer, f0, MAX_F * 2, capture,
                             cap, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    const float *nr = ck_executor_output_rows(ex, f->c.n_buffer, &rows);
    CU_ASSERT_FATAL(nr != NULL && rows == 2 * f->frames[k]);
    memcpy(n, nr, rows * sizeof *n);
    const int32_t *dur = ck_executor_output_rows(ex, f->c.durations_buffer, &rows);
    CU_ASSERT_FATAL(dur != NULL && rows == f->tokens[k]);
    CU_ASSERT_EQUAL(memcmp(dur, f->dur[k], rows * sizeof *dur), 0); /* forced or own: pred_dur */
    size_t s = 0;
    const size_t *fo = ck_executor_row_offsets(ex, 1, &s), *f2 = ck_executor_row_offsets(ex, 2, NULL);
    CU_ASSERT_FATAL(fo != NULL && f2 != NULL && s == 1);
    CU_ASSERT(fo[0] == 0 && fo[1] == f->frames[k] && f2[1] == 2 * f->frames[k]);
    CU_ASSERT(cap->en_rows == f->frames[k] && cap->asr_rows == f->frames[k] &&
              cap->shared_rows == f->frames[k]);
    ck_executor_set_durations(ex, NULL, 0, &err);
}

/* Each case alone against the capture. Tolerances from the data (f32 oneDNN matmuls, double
 * instance-norm statistics, against torch's f32), worst over the cases, bounds about 4x that:
 *   en 7.1e-6 and asr 1.4e-6 (the bits of d and t_en: their own error, test_prosody_tokens),
 *   f0n_shared 2.7e-6 (speech4), F0 8.5e-4 (|F0| <= 387 Hz), N 1.4e-5 (|N| <= 1.3);
 * printed per run. The circuit's own durations equal the capture's, so both runs give the same
 * bits. */
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
    static float f0[2][MAX_F * 2], n[2][MAX_F * 2];
    static captured cap[2];
    double worst[5] = {0}, scale[5] = {0};
    for (size_t k = 0; k < N_CASES; k++) {
        for (int forced = 1; forced >= 0; forced--) {
            memset(&cap[forced], 0, sizeof cap[forced]);
            run_case(&f, ex, k, forced, f0[forced], n[forced], &cap[forced]);
        }
        size_t fr = f.frames[k];
        CU_ASSERT_EQUAL(memcmp(f0[0], f0[1], 2 * fr * sizeof(float)), 0);
        CU_ASSERT_EQUAL(memcmp(n[0], n[1], 2 * fr * sizeof(float)), 0);
        CU_ASSERT_EQUAL(memcmp(&cap[0].shared, &cap[1].shared, fr * C * sizeof(float)), 0);
        const double w[5] = {
            worst_vs_capture(&f, k, "en", cap[1].en, fr, DC, &scale[0]),
            worst_vs_capture(&f, k, "asr", cap[1].asr, fr, C, &scale[1]),
            worst_vs_capture(&f, k, "f0n_shared", cap[1].shared, fr, C, &scale[2]),
            worst_vs_capture(&f, k, "F0", f0[1], 2 * fr, 1, &scale[3]),
            worst_vs_capture(&f, k, "N", n[1], 2 * fr, 1, &scale[4]),
        };
        fprintf(stderr, "\n    %s (F %zu): en %.3g asr %.3g f0n_shared %.3g F0 %.3g (|F0| <= %.3g) "
                "N %.3g (|N| <= %.3g)", CASES[k], fr, w[0], w[1], w[2], w[3], scale[3], w[4],
                scale[4]);
        for (size_t i = 0; i < 5; i++) {
            worst[i] = fmax(worst[i], w[i]);
        }
        CU_ASSERT(w[3] >= 0.0 && scale[3] > 100.0 && w[4] >= 0.0 && scale[4] > 0.5);
    }
    fprintf(stderr, "\n    ");
    CU_ASSERT(worst[0] >= 0.0 && worst[0] < 3e-5); /* speech4 has en, asr, f0n_shared */
    CU_ASSERT(worst[1] >= 0.0 && worst[1] < 5.5e-6);
    CU_ASSERT(worst[2] >= 0.0 && worst[2] < 1.1e-5);
    CU_ASSERT(worst[3] < 3.5e-3);
    CU_ASSERT(worst[4] < 6e-5);
    ck_executor_free(ex);
    ck_speech_fixture_close(&f);
}

/* The 4 cases in one batch give each case's solo rows bit for bit (F0, N, asr, and the frame
 * offsets), at 1 and 2 threads, fused and in parity. */
static void test_batch_invariant(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    static int32_t ids[N_CASES * MAX_T];
    size_t offsets[N_CASES + 1];
    size_t frames = ck_speech_batch(&f, ids, offsets);
    ck_error err = {0};
    const int outs[3] = {f.c.f0_buffer, f.c.n_buffer, f.c.asr_buffer};
    const size_t scale[3] = {2, 2, 1}, cols[3] = {1, 1, C};
    static float batch[3][N_CASES * MAX_F * C];
    for (int parity = 0; parity <= 1; parity++) {
        for (int threads = 1; threads <= 2; threads++) {
            ck_executor *ex = NULL;
            ck_executor_options o = {threads, 128, 64, !parity, CK_DTYPE_F32, NULL};
            CU_ASSERT_EQUAL_FATAL(ck_executor_init_frames(&ex, &f.c, f.w, &o, 256, &err), CK_OK);
            CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, f.style, N_CASES, 128,
                                                                  f.speed, &err), CK_OK);
            ck_executor_reset_op_seconds(ex);
            CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, ids, offsets, N_CASES, f.c.f0_buffer, NULL,
                                                  0, NULL, NULL, &err), CK_OK);
            if (!parity) { /* informative: where the batch's time goes, per op kind */
                fprintf(stderr, "\n    %d thread(s), 4 cases (%zu tokens, %zu frames), ms:", threads,
                        offsets[N_CASES], frames);
                for (int k = 0; k <= CK_OP_KIND_COUNT; k++) {
                    double ms = 1e3 * ck_executor_op_seconds(ex, (ck_op_kind)k);
                    if (ms >= 0.05) {
                        fprintf(stderr, " %s %.1f", k < CK_OP_KIND_COUNT
                                ? ck_op_kind_name((ck_op_kind)k) : "rest", ms);
                    }
                }
            }
            const size_t *fo = ck_executor_row_offsets(ex, 1, NULL);
            CU_ASSERT_FATAL(fo != NULL && fo[N_CASES] == frames);
            size_t at[N_CASES + 1];
            memcpy(at, fo, sizeof at);
            for (int b = 0; b < 3; b++) {
                size_t rows = 0;
                const float *r = ck_executor_output_rows(ex, outs[b], &rows);
                CU_ASSERT_FATAL(r != NULL && rows == scale[b] * frames);
                memcpy(batch[b], r, rows * cols[b] * sizeof *r);
            }
            for (size_t k = 0; k < N_CASES; k++) {
                size_t one[2] = {0, f.tokens[k]};
                CU_ASSERT_EQUAL(at[k + 1] - at[k], f.frames[k]);
                CU_ASSERT_EQUAL_FATAL(ck_executor_set_sequence_inputs(ex, ck_speech_style(&f, k),
                                                                      1, 128,
                                                                      &f.speed[k], &err), CK_OK);
                CU_ASSERT_EQUAL_FATAL(ck_executor_run(ex, f.ids[k], one, 1, f.c.f0_buffer, NULL,
                                                      0, NULL, NULL, &err), CK_OK);
                for (int b = 0; b < 3; b++) {
                    size_t rows = 0;
                    const float *r = ck_executor_output_rows(ex, outs[b], &rows);
                    CU_ASSERT_FATAL(r != NULL && rows == scale[b] * f.frames[k]);
                    CU_ASSERT_EQUAL(memcmp(r, batch[b] + scale[b] * at[k] * cols[b],
                                           rows * cols[b] * sizeof *r), 0);
                }
            }
            ck_executor_free(ex);
        }
    }
    ck_speech_fixture_close(&f);
}

/* The frame limit refuses a batch (CK_E_SIZE naming the sequence and max_batch_frames) and a
 * single over-long sequence before any frame op runs, out untouched; so does a run's own limit
 * under the plan's (ck_executor_set_max_frames: exact at one frame short; 0 restores); forced
 * durations of the wrong count (CK_E_ARG) or below 1 (CK_E_RANGE) are refused; the output must hold the frame rows. */
static void test_frame_limits(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    ck_executor *ex = NULL;
    ck_error err = {0};
    ck_executor_options o = {1, 64, 64, 0, CK_DTYPE_F32, NULL};
    /* speech20 has 31 frames, speech4 7: a plan of 30 takes speech4, refuses speech20 */
    CU_ASSERT_EQUAL_FATAL(ck_executor_init_frames(&ex, &f.c, f.w, &o, 30, &err), CK_OK);
    static float out[MAX_F * 2];
    size_t one[2] = {0, f.tokens[2]};
    out[0] = 12345.0f;
    CU_ASSERT_EQUAL(ck_executor_set_sequence_inputs(ex, ck_speech_style(&f, 2),
                                                    1, 128, &f.speed[2], &err),
                    CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(ex, f.ids[2], one, 1, f.c.f0_buffer, out, MAX_F * 2, NULL,
                                    NULL, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sequence 0"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "max_batch_frames 30"));
    CU_ASSERT_EQUAL(out[0], 12345.0f);
    CU_ASSERT_PTR_NULL(ck_executor_output_rows(ex, f.c.f0_buffer, NULL));
    /* the same sequence with shorter forced durations fits */
    int32_t ones[MAX_T];
    for (size_t t = 0; t < MAX_T; t++) {
        ones[t] = 1;
    }
    CU_ASSERT_EQUAL(ck_executor_set_durations(ex, ones, f.tokens[2], &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(ex, f.ids[2], one, 1, f.c.f0_buffer, out, MAX_F * 2, NULL,
                                    NULL, &err), CK_OK);
    size_t rows = 0;
    CU_ASSERT_PTR_NOT_NULL(ck_executor_output_rows(ex, f.c.f0_buffer, &rows));
    CU_ASSERT_EQUAL(rows, 2 * f.tokens[2]);
    /* a run's limit under the plan's (ck_model_speak's batch budget): one frame short refuses the
     * batch, 0 gives the plan's back; above the plan's is refused */
    CU_ASSERT_EQUAL(ck_executor_plan_max_frames(ex), 30);
    CU_ASSERT_EQUAL(ck_executor_set_max_frames(ex, 31, &err), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_executor_set_max_frames(ex, f.tokens[2] - 1, &err), CK_OK);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_executor_run(ex, f.ids[2], one, 1, f.c.f0_buffer, NULL, 0, NULL, NULL,
                                    &err), CK_E_SIZE);
    char named[64];
    snprintf(named, sizeof named, "max_batch_frames %zu", f.tokens[2] - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, named));
    CU_ASSERT_EQUAL(ck_executor_set_max_frames(ex, f.tokens[2], &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(ex, f.ids[2], one, 1, f.c.f0_buffer, NULL, 0, NULL, NULL,
                                    &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_set_max_frames(ex, 0, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_set_max_frames(NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_executor_plan_max_frames(NULL), 0);
    /* out too small for the 2F rows: CK_E_SIZE, out untouched */
    out[0] = 12345.0f;
    CU_ASSERT_EQUAL(ck_executor_run(ex, f.ids[2], one, 1, f.c.f0_buffer, out, 2 * f.tokens[2] - 1,
                                    NULL, NULL, &err), CK_E_SIZE);
    CU_ASSERT_EQUAL(out[0], 12345.0f);
    /* wrong count, then a zero duration */
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_executor_set_durations(ex, ones, f.tokens[2] - 1, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(ex, f.ids[2], one, 1, f.c.f0_buffer, NULL, 0, NULL, NULL,
                                    &err), CK_E_ARG);
    ones[3] = 0;
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_executor_set_durations(ex, ones, f.tokens[2], &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(ex, f.ids[2], one, 1, f.c.f0_buffer, NULL, 0, NULL, NULL,
                                    &err), CK_E_RANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "token 3"));
    CU_ASSERT_EQUAL(ck_executor_set_durations(ex, NULL, 3, &err), CK_E_ARG);
    ck_executor_free(ex);
    ck_speech_fixture_close(&f);
}

/* Circuit rules for frame rows: a bad "frames*K", a frame buffer fed to a token-only op or a
 * same-rate op mixing token and frame rows, and an alignment not reading the durations output. */
static void test_circuit_frame_rules(void)
{
    static char text[1 << 17], edited[1 << 17];
    FILE *in = fopen(ck_test_path(CIRCUIT), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    static const char *const edits[][3] = {
        {"\"FR2\": \"frames*2\"", "\"FR2\": \"frames*601\"", "frames*K"},
        {"\"FR2\": \"frames*2\"", "\"FR2\": \"frames*2+9\"", "frames*K+B"},
        {"\"FR2\": \"frames*2\"", "\"FR2\": \"frames*2+\"", "frames*K+B"},
        {"\"FR2\": \"frames*2\"", "\"FR2\": \"frames*0+1\"", "frames*K+B"},
        {"\"FR2\": \"frames*2\"", "\"FR2\": \"frames*x\"", "frames*K"},
        {"\"en\": {\"shape\": [\"FR\", \"DC\"]", "\"en\": {\"shape\": [\"T\", \"DC\"]",
         "expected frames"},
        {"\"blk0_out\": {\"shape\": [\"FR\", \"LC\"]", "\"blk0_out\": {\"shape\": [\"FR2\", \"LC\"]",
         "expected frames*2"},
        {"\"x\": \"d\", \"durations\": \"durations\"", "\"x\": \"d\", \"durations\": \"ids\"",
         "not the circuit's durations output"},
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        char *at = strstr(text, edits[e][0]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, edits[e][1],
                 at + strlen(edits[e][0]));
        ck_circuit c = {0};
        ck_error err = {0};
        CU_ASSERT_EQUAL(ck_circuit_parse(&c, edited, strlen(edited), "prosody.json", &err),
                        CK_E_CIRCUIT);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, edits[e][2]));
        if (strstr(err.message, edits[e][2]) == NULL) {
            fprintf(stderr, "\n    edit %zu: %s\n", e, err.message);
        }
    }
}

CK_TEST_MAIN("prosody_frames",
             {"circuit rules for frame rows", test_circuit_frame_rules},
             {"frame limit and forced durations checked", test_frame_limits},
             {"en, asr, f0n_shared, F0, N match the capture", test_matches_capture},
             {"batch invariant", test_batch_invariant})
