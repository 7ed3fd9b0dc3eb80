/* test_speech_bf16.c - circuits/kokoro_speech.json at precision bf16 against fp32 on the embedded
 * synthetic weights (docs/precision.md, "Speech"): the token side stays f32, so the durations are
 * the fp32 ones exactly; the frame side's conv1d, conv_transpose and LSTM input GEMMs run bf16,
 * held to the published budget (F0, the waveform's signal-to-error ratio, the log-spectral
 * distance); and the dispatch says which speech classes ran bf16. A CPU without native bf16
 * refuses. */
#include <math.h>
#include <stdint.h>

#include "ck_test.h"
#include "executor.h"
#include "kokoro_layout.h"
#include "safetensors.h"
#include "synth_weights.h"
#include "voice.h"
#include "weights.h"

#define CIRCUIT "circuits/kokoro_speech.json"
#define CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"
#define CK_PI 3.141592653589793

/* The pinned lines: the ids of the speech capture's cases (tests/fixtures/speech). */
static const char *const CASES[] = {"speech8", "speech20", "speech40"};
enum { N_CASES = 3, MAX_T = 40, MAX_FRAMES = 8 * MAX_T, N_FFT = 1024, HOP = 256 };

/* The budget (docs/precision.md "Speech"), measured over these lines on Sapphire Rapids (AMX):
 * F0 1.55-2.35 Hz (bound 1.7x), SER 39.5-39.8 dB (bound 6.5 dB under), LSD 0.18-0.21 dB (2.4x).
 * The audio is held with fp32's F0 fed to the bf16 run: on the synthetic weights a phase the
 * harmonic source integrates from an F0 1 Hz off decorrelates the waveform (own F0: SER about
 * 0 dB, printed; fp32 against the PyTorch capture loses 18 dB from 8.5e-4 Hz, test_speech_circuit),
 * so the audio bound measures the decoder's and generator's bf16 GEMMs and F0 has its own. */
#define MAX_F0_HZ 4.0
#define MIN_SER_DB 33.0
#define MAX_LSD_DB 0.5

typedef struct {
    int32_t *durations;
    float *f0, *audio;
    size_t tokens, f0_rows, samples;
} speech_out;

typedef struct {
    ck_circuit c;
    ck_weights *w;
    int32_t ids[N_CASES][MAX_T];
    size_t tokens[N_CASES];
    float style[256], speed;
} fixture;

static int setup(fixture *f)
{
    ck_error err = {0};
    ck_weight_spec *specs = NULL;
    ck_st_file *cap = NULL;
    ck_voice *v = NULL;
    size_t n = 0;
    memset(f, 0, sizeof *f);
    int ok = ck_circuit_load(&f->c, ck_test_path(CIRCUIT), &err) == CK_OK &&
             ck_kokoro_weight_specs(&specs, &n, NULL, &err) == CK_OK &&
             ck_weights_synthetic(&f->w, specs, n, CK_SYNTH_DEFAULT_SEED, &err) == CK_OK &&
             ck_st_open(&cap, ck_test_path(CAPTURE), &err) == CK_OK &&
             ck_voice_load(&v, CK_VOICE_SYNTHETIC, NULL, &err) == CK_OK;
    for (size_t k = 0; ok && k < N_CASES; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s.ids", CASES[k]);
        const ck_st_tensor *t = ck_st_find(cap, name);
        ok = t != NULL && t->dtype == CK_DTYPE_I32 && t->elements <= MAX_T;
        if (ok) {
            memcpy(f->ids[k], t->data, t->bytes);
            f->tokens[k] = t->elements;
        }
    }
    if (ok) {
        memcpy(f->style, ck_voice_style(v, 10), sizeof f->style);
        f->speed = 1.0f;
    } else {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    ck_voice_free(v);
    ck_st_close(cap);
    free(specs);
    return ok;
}

static void teardown(fixture *f)
{
    ck_weights_free(f->w);
    ck_circuit_free(&f->c);
}

static int make_executor(fixture *f, ck_dtype precision, ck_executor **ex, ck_error *err)
{
    ck_executor_options o = {1, 128, 64, 1, precision, NULL};
    int rc = ck_executor_init_frames(ex, &f->c, f->w, &o, MAX_FRAMES, err);
    rc = rc ? rc : ck_executor_set_sequence_inputs(*ex, f->style, 1, 256, &f->speed, err);
    return rc ? rc : ck_executor_set_noise(*ex, 7, NULL, NULL, 0, 0.0f, err); /* noise scale 0 */
}

/* The X-Ray feed: fp32's F0 written over the run's at its checkpoint (the arena's rows are not
 * const objects; the next ops read what is written). */
static void feed_f0(void *ctx, const char *checkpoint, const float *data, size_t rows, size_t cols)
{
    const speech_out *fp = ctx;
    if (strcmp(checkpoint, "kokoro.decoder.F0") == 0 && cols == 1 && rows == fp->f0_rows) {
        memcpy((float *)(uintptr_t)data, fp->f0, rows * sizeof *data);
    }
}

/* Case k alone through ex (fed: fp32's F0 instead of its own, or NULL): copies of its durations,
 * F0 and audio. */
static void speak(fixture *f, ck_executor *ex, size_t k, const speech_out *fed, speech_out *o)
{
    ck_error err = {0};
    size_t offsets[2] = {0, f->tokens[k]};
    int rc = ck_executor_run(ex, f->ids[k], offsets, 1, f->c.audio_buffer, NULL, 0,
                             fed ? feed_f0 : NULL, (void *)(uintptr_t)fed, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    const void *d = ck_executor_output_rows(ex, f->c.durations_buffer, &o->tokens);
    const void *f0 = ck_executor_output_rows(ex, f->c.f0_buffer, &o->f0_rows);
    const void *a = ck_executor_output_rows(ex, f->c.audio_buffer, &o->samples);
    CU_ASSERT_FATAL(d != NULL && f0 != NULL && a != NULL && o->tokens == f->tokens[k]);
    o->durations = malloc(o->tokens * sizeof *o->durations);
    o->f0 = malloc(o->f0_rows * sizeof *o->f0);
    o->audio = malloc(o->samples * sizeof *o->audio);
    CU_ASSERT_FATAL(o->durations != NULL && o->f0 != NULL && o->audio != NULL);
    memcpy(o->durations, d, o->tokens * sizeof *o->durations);
    memcpy(o->f0, f0, o->f0_rows * sizeof *o->f0);
    memcpy(o->audio, a, o->samples * sizeof *o->audio);
}

static void speech_out_free(speech_out *o)
{
    free(o->durations);
    free(o->f0);
    free(o->audio);
}

/* 10 log10(sum ref^2 / sum (x - ref)^2). */
static double ser_db(const float *ref, const float *x, size_t n)
{
    double sig = 0.0, e = 0.0;
    for (size_t i = 0; i < n; i++) {
        sig += (double)ref[i] * ref[i];
        e += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
    }
    return 10.0 * log10(sig / (e > 0.0 ? e : 1e-300));
}

/* |DFT| of one Hann-windowed frame of N_FFT samples from x[start] (zeros past n), bins 0..N/2,
 * with the window and the twiddles tw[m] = e^(-2 pi i m / N) tabulated once. */
static void frame_magnitudes(const float *x, size_t n, size_t start, const double *win,
                             const double *tc, const double *ts, double *mag)
{
    double v[N_FFT];
    for (size_t j = 0; j < N_FFT; j++) {
        v[j] = start + j < n ? x[start + j] * win[j] : 0.0;
    }
    for (size_t b = 0; b <= N_FFT / 2; b++) {
        double re = 0.0, im = 0.0;
        for (size_t j = 0; j < N_FFT; j++) {
            re += v[j] * tc[b * j % N_FFT];
            im -= v[j] * ts[b * j % N_FFT];
        }
        mag[b] = sqrt(re * re + im * im);
    }
}

/* Log-spectral distance in dB: the mean over frames (hop HOP) of the RMS over bins of
 * 20 log10(max(|X|, 1e-5) / max(|R|, 1e-5)). A plain DFT: these clips are short. */
static double lsd_db(const float *ref, const float *x, size_t n)
{
    static double win[N_FFT], tc[N_FFT], ts[N_FFT];
    double mr[N_FFT / 2 + 1], mx[N_FFT / 2 + 1], sum = 0.0;
    size_t frames = 0;
    for (size_t j = 0; j < N_FFT; j++) {
        win[j] = 0.5 - 0.5 * cos(2.0 * CK_PI * (double)j / N_FFT); /* periodic Hann */
        tc[j] = cos(2.0 * CK_PI * (double)j / N_FFT);
        ts[j] = sin(2.0 * CK_PI * (double)j / N_FFT);
    }
    for (size_t start = 0; start + N_FFT / 2 < n; start += HOP, frames++) {
        frame_magnitudes(ref, n, start, win, tc, ts, mr);
        frame_magnitudes(x, n, start, win, tc, ts, mx);
        double s = 0.0;
        for (size_t b = 0; b <= N_FFT / 2; b++) {
            double d = 20.0 * log10(fmax(mx[b], 1e-5) / fmax(mr[b], 1e-5));
            s += d * d;
        }
        sum += sqrt(s / (N_FFT / 2 + 1));
    }
    return frames ? sum / (double)frames : 0.0;
}

/* Each pinned line in fp32 and bf16: the same durations bit for bit, F0 within MAX_F0_HZ, the
 * audio (fp32's F0 fed) at least MIN_SER_DB and at most MAX_LSD_DB from fp32's (printed). */
static void test_bf16_within_budget(void)
{
    fixture f;
    CU_ASSERT_FATAL(setup(&f));
    ck_executor *fp = NULL, *bf = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(make_executor(&f, CK_DTYPE_F32, &fp, &err), CK_OK);
    int rc = make_executor(&f, CK_DTYPE_BF16, &bf, &err);
    if (rc == CK_E_BACKEND) { /* no native bf16 here: the refusal is the test */
        fprintf(stderr, "\n    bf16 refused on this CPU: %s\n", err.message);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "precision bf16"));
        ck_executor_free(fp);
        teardown(&f);
        return;
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    char fd[512], bd[512];
    ck_executor_dispatch_dtypes(fp, fd, sizeof fd);
    ck_executor_dispatch_dtypes(bf, bd, sizeof bd);
    CU_ASSERT_STRING_EQUAL(bd, "linear=f32+bf16 attention=f32 layer_norm=f32 gelu_new=f32; speech "
                           "token_side=f32 conv1d=bf16 conv_transpose=bf16 lstm_input=bf16 "
                           "lstm_recurrence=f32 other=f32");
    CU_ASSERT_STRING_EQUAL(fd, "linear=f32 attention=f32 layer_norm=f32 gelu_new=f32; speech "
                           "token_side=f32 conv1d=f32 conv_transpose=f32 lstm_input=f32 "
                           "lstm_recurrence=f32 other=f32");
    for (size_t k = 0; k < N_CASES; k++) {
        speech_out a = {0}, b = {0}, c = {0};
        speak(&f, fp, k, NULL, &a);
        speak(&f, bf, k, NULL, &b);
        speak(&f, bf, k, &a, &c);
        CU_ASSERT_EQUAL(memcmp(a.durations, b.durations, a.tokens * sizeof *a.durations), 0);
        CU_ASSERT_FATAL(a.f0_rows == b.f0_rows && a.samples == b.samples);
        double f0 = 0.0;
        for (size_t i = 0; i < a.f0_rows; i++) {
            f0 = fmax(f0, fabs((double)a.f0[i] - b.f0[i]));
        }
        double ser = ser_db(a.audio, c.audio, a.samples), lsd = lsd_db(a.audio, c.audio, a.samples);
        fprintf(stderr, "\n    %s (%zu tokens, %zu samples): F0 max diff %.3f Hz; fed fp32's F0: "
                "SER %.2f dB, LSD %.3f dB; own F0: SER %.2f dB", CASES[k], a.tokens, a.samples,
                f0, ser, lsd, ser_db(a.audio, b.audio, a.samples));
        CU_ASSERT(f0 <= MAX_F0_HZ);
        CU_ASSERT(ser >= MIN_SER_DB);
        CU_ASSERT(lsd <= MAX_LSD_DB);
        speech_out_free(&a);
        speech_out_free(&b);
        speech_out_free(&c);
    }
    ck_executor_free(fp);
    ck_executor_free(bf);
    teardown(&f);
}

CK_TEST_MAIN("speech_bf16",
             {"bf16 speech vs fp32: durations equal, F0, SER and LSD within the budget",
              test_bf16_within_budget})
