/* xray_speech.c - X-Ray of the speech capture (tests/fixtures/speech, tools/kokoro_reference.py):
 * each case runs alone through the speech circuit lent by the api room (one thread, fp32,
 * interpreted) with the capture's style row, speed, durations (forced downstream of the duration
 * head: a float difference at x.5 flips a rounding) and noise, and every stage the capture holds is
 * compared with ours; then once more fed the capture's F0 and dec.decode.3, so the generator's
 * stages are compared on its own ops (end to end, the STFT phase of near-zero bins wraps under fp32
 * noise: tools/README.md "Cross-check"). A token-side capture (--capture-edges: no noise, no
 * decoder or generator stage, wide stages possibly stored on every k-th channel) runs once per
 * case, to F0 and N. Holds no kernels and sets up no model. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration_frames.h"
#include "json.h"
#include "xray_internal.h"

#define SPEECH_STYLE 256          /* ref_s: [decoder half | predictor half] */
#define SPEECH_STYLE_HALF 128     /* the predictor half: the prosody circuit's style */
#define SPEECH_SAMPLES_PER_FRAME 600
#define SPEECH_NOISE_COLS 9
#define SPEECH_TWO_PI 6.283185307179586
#define SPEECH_HAR_PHASE 11       /* gen.har: columns 0..10 magnitudes, 11..21 their angles */
#define SPEECH_PHASE_FLOOR 1e-4   /* a bin below this magnitude has an arbitrary angle (stft20.h) */

/* Where a stage's values come from on our side. */
typedef enum {
    FROM_CHECKPOINT, /* the capture callback of the op with that checkpoint id */
    FROM_F0,         /* the circuit's "f0" output [2F, 1] */
    FROM_N,          /* the circuit's "n" output [2F, 1] */
    FROM_DUR,        /* the duration kernel's sums over our dur_logits, before rounding [T] */
    FROM_PRED_DUR,   /* the duration op's own frames (before the forced ones replaced them) [T] */
    FROM_AUDIO       /* the circuit's "audio" output [600F, 1] */
} stage_source;

typedef struct {
    const char *name;       /* the report's checkpoint id and the budget's key */
    const char *key;        /* the capture's tensor after "<case>." */
    const char *checkpoint; /* our checkpoint id (FROM_CHECKPOINT) */
    stage_source source;
    int channel_major;      /* the capture stores [cols, rows] (1-D tensors: either) */
    int fed;                /* compared in the run fed the capture's F0 and dec.decode.3 */
} speech_stage;

/* In run order; the report keeps it. */
static const speech_stage STAGES[] = {
    {"d_en", "d_en", "kokoro.bert_encoder.d_en", FROM_CHECKPOINT, 1, 0},
    {"t_en", "t_en", "kokoro.text_encoder.t_en", FROM_CHECKPOINT, 1, 0},
    {"d", "d", "kokoro.predictor.d", FROM_CHECKPOINT, 0, 0},
    {"dur_lstm", "dur_lstm", "kokoro.predictor.dur_lstm", FROM_CHECKPOINT, 0, 0},
    {"dur_logits", "dur_logits", "kokoro.predictor.dur_logits", FROM_CHECKPOINT, 0, 0},
    {"dur", "dur", NULL, FROM_DUR, 0, 0},
    {"pred_dur", "pred_dur", NULL, FROM_PRED_DUR, 0, 0},
    {"en", "en", "kokoro.predictor.en", FROM_CHECKPOINT, 1, 0},
    {"asr", "asr", "kokoro.asr", FROM_CHECKPOINT, 1, 0},
    {"f0n_shared", "f0n_shared", "kokoro.predictor.f0n_shared", FROM_CHECKPOINT, 1, 0},
    {"F0", "F0", NULL, FROM_F0, 0, 0},
    {"N", "N", NULL, FROM_N, 0, 0},
    {"dec.F0_conv", "dec.F0_conv", "kokoro.decoder.F0_conv", FROM_CHECKPOINT, 1, 0},
    {"dec.N_conv", "dec.N_conv", "kokoro.decoder.N_conv", FROM_CHECKPOINT, 1, 0},
    {"dec.encode", "dec.encode", "kokoro.decoder.encode", FROM_CHECKPOINT, 1, 0},
    {"dec.asr_res", "dec.asr_res", "kokoro.decoder.asr_res", FROM_CHECKPOINT, 1, 0},
    {"dec.decode.0", "dec.decode.0", "kokoro.decoder.decode.0", FROM_CHECKPOINT, 1, 0},
    {"dec.decode.1", "dec.decode.1", "kokoro.decoder.decode.1", FROM_CHECKPOINT, 1, 0},
    {"dec.decode.2", "dec.decode.2", "kokoro.decoder.decode.2", FROM_CHECKPOINT, 1, 0},
    {"dec.decode.3", "dec.decode.3", "kokoro.decoder.decode.3", FROM_CHECKPOINT, 1, 0},
    {"audio", "audio", NULL, FROM_AUDIO, 0, 0},
    {"fed.gen.har_source", "gen.har_source", "kokoro.generator.har_source", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.har", "gen.har", "kokoro.generator.har", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.ups.0", "gen.ups.0", "kokoro.generator.ups.0", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.noise_res.0", "gen.noise_res.0", "kokoro.generator.noise_res.0", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.stage.0", "gen.stage.0", "kokoro.generator.stage.0", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.ups.1", "gen.ups.1", "kokoro.generator.ups.1", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.noise_res.1", "gen.noise_res.1", "kokoro.generator.noise_res.1", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.stage.1", "gen.stage.1", "kokoro.generator.stage.1", FROM_CHECKPOINT, 1, 1},
    {"fed.gen.conv_post", "gen.conv_post", "kokoro.generator.conv_post", FROM_CHECKPOINT, 1, 1},
    {"fed.audio", "audio", NULL, FROM_AUDIO, 0, 1},
};
enum { N_STAGES = sizeof STAGES / sizeof STAGES[0] };
_Static_assert(N_STAGES <= 64, "ck_xray_speech_case.strided holds one bit per stage");

/* The stage of this run (fed or not) stored under the capture key `key` (for a stage of the own
 * run, its name), or N_STAGES. */
static size_t stage_by_key(const char *key, int fed)
{
    for (size_t i = 0; i < N_STAGES; i++) {
        if (STAGES[i].fed == fed && strcmp(STAGES[i].key, key) == 0) {
            return i;
        }
    }
    return N_STAGES;
}

/* The checkpoints the fed run writes the capture's values over (the arena rows the next ops read). */
#define FEED_F0 "kokoro.decoder.F0"
#define FEED_DECODED "kokoro.decoder.decode.3"

/* What one run keeps: each stage's rows [rows, cols] token-major, and the values fed. */
typedef struct {
    int fed;
    float *got[N_STAGES];
    size_t rows[N_STAGES], cols[N_STAGES];
    const float *feed_f0;      /* [2F] */
    const float *feed_decoded; /* [512, 2F] channel-major, as the capture stores it */
    size_t feed_decoded_cols;
    int failed;                /* out of memory inside the callback */
} speech_run;

size_t ck_xray_speech_count(const ck_st_file *f)
{
    static const char suffix[] = ".pred_dur";
    size_t n = 0, s = sizeof suffix - 1;
    for (size_t k = 0; f != NULL && k < ck_st_count(f); k++) {
        const char *name = ck_st_at(f, k)->name;
        size_t len = strlen(name);
        n += len > s && len - s < CK_XRAY_CASE_MAX && strcmp(name + len - s, suffix) == 0;
    }
    return n;
}

/* <case>.<what> as f32 [want] (any dtype ck_st_to_f32 reads) into a new *out. Errors: CK_E_FORMAT
 * (absent or another count), CK_E_MEMORY, those of ck_st_to_f32. */
static int case_f32(const ck_st_file *f, const char *path, const char *name, const char *what,
                    size_t want, float **out, ck_error *err)
{
    char key[CK_XRAY_CASE_MAX + 32];
    snprintf(key, sizeof key, "%s.%s", name, what);
    const ck_st_tensor *t = ck_st_find(f, key);
    *out = NULL;
    if (t == NULL || t->elements != want) {
        return ck_fail(err, CK_E_FORMAT, "%s: \"%s\": expected %zu values, found %zu", path, key,
                       want, t != NULL ? t->elements : (size_t)0);
    }
    float *v = malloc(want * sizeof *v);
    if (v == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: out of memory for \"%s\"", key);
    }
    int rc = ck_st_to_f32(t, v, want, err);
    if (rc != CK_OK) {
        free(v);
        return rc;
    }
    *out = v;
    return CK_OK;
}

/* ids I32 [T], pred_dur I64 [T] (each >= 1), ref_s [256], speed [1], noise [600F, 9]. */
static int load_case(ck_xray_speech_case *sc, const ck_st_file *f, const char *path, ck_error *err)
{
    char key[CK_XRAY_CASE_MAX + 32];
    snprintf(key, sizeof key, "%s.ids", sc->name);
    const ck_st_tensor *ids = ck_st_find(f, key);
    snprintf(key, sizeof key, "%s.pred_dur", sc->name);
    const ck_st_tensor *dur = ck_st_find(f, key);
    if (ids == NULL || ids->dtype != CK_DTYPE_I32 || ids->rank != 1 || ids->elements < 1 ||
        dur == NULL || dur->dtype != CK_DTYPE_I64 || dur->elements != ids->elements) {
        return ck_fail(err, CK_E_FORMAT, "%s: case \"%s\": expected ids I32 [T] and pred_dur I64 "
                       "[T]", path, sc->name);
    }
    sc->tokens = ids->elements;
    sc->ids = malloc(sc->tokens * sizeof *sc->ids);
    sc->dur = malloc(sc->tokens * sizeof *sc->dur);
    if (sc->ids == NULL || sc->dur == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: out of memory for case \"%s\"", sc->name);
    }
    memcpy(sc->ids, ids->data, ids->bytes); /* mapped data may be unaligned */
    for (size_t t = 0; t < sc->tokens; t++) {
        int64_t d;
        memcpy(&d, (const char *)dur->data + t * sizeof d, sizeof d);
        if (d < 1 || d > INT32_MAX || (size_t)d > SIZE_MAX / SPEECH_SAMPLES_PER_FRAME - sc->frames) {
            return ck_fail(err, CK_E_FORMAT, "%s: \"%s\" token %zu: %lld frames", path, key, t,
                           (long long)d);
        }
        sc->dur[t] = (int32_t)d;
        sc->frames += (size_t)d;
    }
    float *style = NULL, *speed = NULL;
    int rc = case_f32(f, path, sc->name, "ref_s", SPEECH_STYLE, &style, err);
    rc = rc ? rc : case_f32(f, path, sc->name, "speed", 1, &speed, err);
    if (rc == CK_OK) {
        memcpy(sc->style, style, sizeof sc->style);
        sc->speed = *speed;
    }
    free(style);
    free(speed);
    snprintf(key, sizeof key, "%s.noise", sc->name);
    if (rc != CK_OK || ck_st_find(f, key) == NULL) { /* no noise: a token-side case */
        return rc;
    }
    return case_f32(f, path, sc->name, "noise",
                    SPEECH_SAMPLES_PER_FRAME * SPEECH_NOISE_COLS * sc->frames, &sc->noise, err);
}

/* The manifest's cases.<case>: channel_stride (an integer >= 1, 1 when absent) and which stages are
 * strided ("<case>.<key>": "rows" for a channel-major stage, "columns" for a token-major one). */
static int case_strides(ck_xray_speech_case *sc, const cJSON *manifest, const char *path,
                        ck_error *err)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(manifest, "cases"), sc->name);
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "channel_stride");
    const cJSON *strided = cJSON_GetObjectItemCaseSensitive(c, "strided");
    sc->channel_stride = 1;
    sc->strided = 0;
    if (k != NULL && !ck_json_size(k, 1, 1u << 20, &sc->channel_stride)) {
        return ck_fail(err, CK_E_FORMAT, "%s: manifest: cases.%s.channel_stride: expected an "
                       "integer >= 1", path, sc->name);
    }
    size_t n = strlen(sc->name);
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, strided) {
        const char *key = e->string;
        size_t i = key != NULL && strncmp(key, sc->name, n) == 0 && key[n] == '.'
                       ? stage_by_key(key + n + 1, 0) : N_STAGES;
        const char *axis = i < N_STAGES && STAGES[i].channel_major ? "rows" : "columns";
        if (i == N_STAGES || !cJSON_IsString(e) || strcmp(e->valuestring, axis) != 0) {
            return ck_fail(err, CK_E_FORMAT, "%s: manifest: cases.%s.strided.\"%s\": %s", path,
                           sc->name, key ? key : "", i == N_STAGES ? "no such stage of this case"
                           : STAGES[i].channel_major ? "expected \"rows\" (stored [C/k, rows])"
                                                     : "expected \"columns\" (stored [rows, C/k])");
        }
        sc->strided |= (uint64_t)1 << i;
    }
    return CK_OK;
}

int ck_xray_speech_load(ck_xray_speech_case **out, size_t *n, const ck_st_file *f,
                        const void *manifest, const char *path, ck_error *err)
{
    static const char suffix[] = ".pred_dur";
    size_t count = ck_xray_speech_count(f), s = sizeof suffix - 1;
    *out = NULL;
    *n = 0;
    ck_xray_speech_case *cases = calloc(count + 1, sizeof *cases);
    if (cases == NULL) {
        return ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    }
    int rc = count ? CK_OK : ck_fail(err, CK_E_FORMAT, "%s: no speech case (<case>.pred_dur)", path);
    for (size_t k = 0, i = 0; rc == CK_OK && k < ck_st_count(f); k++) {
        const char *name = ck_st_at(f, k)->name;
        size_t len = strlen(name);
        if (len > s && len - s < CK_XRAY_CASE_MAX && strcmp(name + len - s, suffix) == 0) {
            memcpy(cases[i].name, name, len - s);
            cases[i].name[len - s] = '\0';
            rc = load_case(&cases[i], f, path, err);
            rc = rc ? rc : case_strides(&cases[i], manifest, path, err);
            i++;
        }
    }
    if (rc != CK_OK) {
        ck_xray_speech_free(cases, count);
        return rc;
    }
    *out = cases;
    *n = count;
    return CK_OK;
}

int ck_xray_speech_token_side(const ck_xray_speech_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (cases[i].noise != NULL) {
            return 0;
        }
    }
    return n > 0;
}

void ck_xray_speech_free(ck_xray_speech_case *cases, size_t n)
{
    for (size_t i = 0; cases != NULL && i < n; i++) {
        free(cases[i].ids);
        free(cases[i].dur);
        free(cases[i].noise);
    }
    free(cases);
}

static int keep(speech_run *r, size_t i, const float *data, size_t rows, size_t cols)
{
    free(r->got[i]);
    r->got[i] = malloc((rows > 0 && cols > 0 ? rows * cols : 1) * sizeof *data);
    if (r->got[i] == NULL) {
        r->failed = 1;
        return 0;
    }
    memcpy(r->got[i], data, rows * cols * sizeof *data);
    r->rows[i] = rows;
    r->cols[i] = cols;
    return 1;
}

/* The X-Ray feed first: the arena rows a checkpoint shows are the ones the next ops read, and not
 * const objects (the executor passes them read-only to every other caller). Then the stages of this
 * run are kept. */
static void on_capture(void *ctx, const char *checkpoint, const float *data, size_t rows,
                       size_t cols)
{
    speech_run *r = ctx;
    float *arena = (float *)(uintptr_t)data;
    if (r->feed_f0 != NULL && cols == 1 && strcmp(checkpoint, FEED_F0) == 0) {
        memcpy(arena, r->feed_f0, rows * sizeof *arena);
    }
    if (r->feed_decoded != NULL && cols == r->feed_decoded_cols &&
        strcmp(checkpoint, FEED_DECODED) == 0) {
        for (size_t t = 0; t < rows; t++) {
            for (size_t ch = 0; ch < cols; ch++) {
                arena[t * cols + ch] = r->feed_decoded[ch * rows + t];
            }
        }
    }
    for (size_t i = 0; i < N_STAGES; i++) {
        if (STAGES[i].fed == r->fed && STAGES[i].source == FROM_CHECKPOINT &&
            strcmp(STAGES[i].checkpoint, checkpoint) == 0) {
            keep(r, i, data, rows, cols);
        }
    }
}

static void run_free(speech_run *r)
{
    for (size_t i = 0; i < N_STAGES; i++) {
        free(r->got[i]);
        r->got[i] = NULL;
    }
}

/* After a run: the stages read from outputs, and the duration sums and frames. */
static int keep_outputs(speech_run *r, const ck_xray_speech_case *sc, const ck_xray_engine *e,
                        ck_error *err)
{
    const ck_circuit *c = e->circuit;
    int ok = 1;
    for (size_t i = 0; ok && i < N_STAGES; i++) {
        const speech_stage *s = &STAGES[i];
        int buffer = s->source == FROM_F0 ? c->f0_buffer : s->source == FROM_N ? c->n_buffer
                     : s->source == FROM_AUDIO ? c->audio_buffer : -1;
        size_t rows = 0;
        const float *v = buffer >= 0 && s->fed == r->fed
                             ? ck_executor_output_rows(e->executor, buffer, &rows) : NULL;
        ok = v == NULL || keep(r, i, v, rows, 1);
    }
    if (!ok || r->fed) {
        return ok ? CK_OK : ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    }
    size_t count = 0, at = stage_by_key("pred_dur", 0), lg = stage_by_key("dur_logits", 0);
    const int32_t *pred = ck_executor_predicted_durations(e->executor, &count);
    if (pred != NULL && count == sc->tokens) {
        float *v = malloc(count * sizeof *v);
        for (size_t t = 0; v != NULL && t < count; t++) {
            v[t] = (float)pred[t];
        }
        ok = v != NULL && keep(r, at, v, count, 1);
        free(v);
    }
    /* our float durations: the duration op's kernel over our logits with the case's speed */
    if (ok && r->got[lg] != NULL && r->rows[lg] == sc->tokens && r->cols[lg] > 0) {
        size_t offsets[2] = {0, sc->tokens};
        int32_t *frames = malloc(sc->tokens * sizeof *frames);
        float *sums = malloc(sc->tokens * sizeof *sums);
        int rc = frames && sums ? ck_duration_frames_f32(r->got[lg], sc->tokens * r->cols[lg],
                                                         r->cols[lg], &sc->speed, 1, frames,
                                                         sc->tokens, sums, sc->tokens, offsets, 1,
                                                         0, 1, r->cols[lg])
                                : CK_E_MEMORY;
        ok = rc == CK_OK ? keep(r, stage_by_key("dur", 0), sums, sc->tokens, 1) : rc != CK_E_MEMORY;
        free(frames);
        free(sums);
    }
    return ok ? CK_OK : ck_fail(err, CK_E_MEMORY, "xray: out of memory");
}

/* One case, one run: style, speed, forced durations and the capture's noise, then the batch (to
 * the audio; a token-side case, which holds no noise, to F0). A circuit without an audio output
 * (the prosody circuit) reads the predictor half of the style row. */
static int run_case(speech_run *r, const ck_xray_speech_case *sc, const ck_xray_engine *e,
                    ck_error *err)
{
    ck_executor *ex = e->executor;
    const ck_circuit *c = e->circuit;
    size_t offsets[2] = {0, sc->tokens};
    int whole = c->audio_buffer >= 0;
    int rc = ck_executor_set_sequence_inputs(ex, whole ? sc->style : sc->style + SPEECH_STYLE_HALF,
                                             1, whole ? SPEECH_STYLE : SPEECH_STYLE_HALF,
                                             &sc->speed, err);
    rc = rc ? rc : ck_executor_set_durations(ex, sc->dur, sc->tokens, err);
    if (rc == CK_OK && sc->noise != NULL) {
        rc = ck_executor_set_noise_input(ex, sc->noise, SPEECH_SAMPLES_PER_FRAME * sc->frames, 1.0f,
                                         err);
    }
    int out = sc->noise != NULL ? c->audio_buffer : c->f0_buffer;
    rc = rc ? rc : ck_executor_run(ex, sc->ids, offsets, 1, out, NULL, 0, on_capture, r, err);
    if (rc == CK_OK && r->failed) {
        rc = ck_fail(err, CK_E_MEMORY, "xray: out of memory capturing case \"%s\"", sc->name);
    }
    rc = rc ? rc : keep_outputs(r, sc, e, err);
    /* the executor keeps no pointer to this case's arrays past the run */
    ck_executor_set_noise(ex, 0, NULL, NULL, 0, 1.0f, NULL);
    ck_executor_set_durations(ex, NULL, 0, NULL);
    ck_executor_set_sequence_inputs(ex, NULL, 0, 0, NULL, NULL);
    return rc;
}

/* The budget of a stage in a case: "<case>.<stage>" in the profile, else "<stage>", else its base. */
static ck_xray_budget stage_budget(const ck_xray_profile *p, const char *case_name, const char *stage)
{
    char key[CK_CHECKPOINT_MAX];
    snprintf(key, sizeof key, "%s.%s", case_name, stage);
    for (size_t i = 0; i < p->n_overrides; i++) {
        if (strcmp(p->overrides[i].checkpoint, key) == 0) {
            return p->overrides[i].budget;
        }
    }
    return ck_xray_profile_budget(p, stage);
}

/* gen.har's angles: ours moved onto the capture's by the nearest multiple of 2 pi, and set to the
 * capture's where its bin's magnitude is below the floor (an arbitrary angle there). */
static void unwrap_phase(float *ours, const float *want, size_t rows, size_t cols)
{
    for (size_t t = 0; cols > SPEECH_HAR_PHASE && t < rows; t++) {
        for (size_t ch = SPEECH_HAR_PHASE; ch < cols; ch++) {
            double w = want[t * cols + ch], d = (double)ours[t * cols + ch] - w;
            d -= SPEECH_TWO_PI * floor(d / SPEECH_TWO_PI + 0.5);
            int tiny = fabs(want[t * cols + ch - SPEECH_HAR_PHASE]) <= SPEECH_PHASE_FLOOR;
            ours[t * cols + ch] = tiny ? (float)w : (float)(w + d);
        }
    }
}

/* A FAIL row that carries no metrics (a shape mismatch). */
static int fail_row(ck_xray_report *rep, const char *case_name, const char *stage,
                    const ck_xray_budget *b, const char *reason, ck_error *err)
{
    ck_xray_result r;
    memset(&r, 0, sizeof r);
    r.status = CK_XRAY_FAIL;
    r.budget = *b;
    r.cosine = 0.0;
    r.rmse = r.rel_rmse = r.max_abs = INFINITY;
    snprintf(r.case_name, sizeof r.case_name, "%s", case_name);
    snprintf(r.checkpoint, sizeof r.checkpoint, "%s", stage);
    snprintf(r.reason, sizeof r.reason, "%s", reason);
    return ck_xray_report_add(rep, &r, err);
}

/* t's values as f32 (pred_dur's I64 frame counts, exact below 2^24, included). */
static int to_f32(const ck_st_tensor *t, float *out, size_t n, ck_error *err)
{
    if (t->dtype != CK_DTYPE_I64) {
        return ck_st_to_f32(t, out, n, err);
    }
    for (size_t i = 0; i < n; i++) {
        int64_t v;
        memcpy(&v, (const char *)t->data + i * sizeof v, sizeof v);
        out[i] = (float)v;
    }
    return CK_OK;
}

/* One stage of one case: the capture's tensor brought to our [rows, cols], then the metrics. */
static int compare_stage(const ck_xray_speech_case *sc, size_t i, const speech_run *run,
                         const ck_st_file *oracle, const ck_xray_profile *p, ck_xray_report *rep,
                         ck_error *err)
{
    const speech_stage *s = &STAGES[i];
    char key[CK_XRAY_CASE_MAX + 32], reason[160];
    snprintf(key, sizeof key, "%s.%s", sc->name, s->key);
    const ck_st_tensor *t = ck_st_find(oracle, key);
    if (t == NULL && sc->noise == NULL) {
        return ck_xray_report_not_tested(rep, sc->name, s->name, "a token-side capture (no noise): "
                                         "it holds the token side, alignment and F0/N only, no "
                                         "decoder, generator or audio stage", err);
    }
    if (t == NULL) {
        snprintf(reason, sizeof reason, "the capture holds no %s for this case", s->key);
        return ck_xray_report_not_tested(rep, sc->name, s->name, reason, err);
    }
    if (run->got[i] == NULL) {
        snprintf(reason, sizeof reason, "the circuit computed no %s",
                 s->checkpoint ? s->checkpoint : s->name);
        return ck_xray_report_not_tested(rep, sc->name, s->name, reason, err);
    }
    /* a strided stage: the capture keeps our channels 0, k, 2k, ... (cols of them) */
    size_t rows = run->rows[i], full = run->cols[i];
    size_t k = ((sc->strided >> i) & 1u) ? sc->channel_stride : 1, cols = full / k;
    ck_xray_budget b = stage_budget(p, sc->name, s->name);
    size_t want0 = s->channel_major ? cols : rows, want1 = s->channel_major ? rows : cols;
    int shape_ok = full % k == 0 &&
                   (t->rank == 1 ? cols == 1 && t->shape[0] == rows
                                 : t->rank == 2 && t->shape[0] == want0 && t->shape[1] == want1);
    if (!shape_ok || rows == 0) {
        snprintf(reason, sizeof reason, "shape: the capture's %zu values (rank %zu) are not ours "
                 "[%zu, %zu] (channel stride %zu)", t->elements, t->rank, rows, full, k);
        return fail_row(rep, sc->name, s->name, &b, reason, err);
    }
    float *raw = malloc(rows * cols * sizeof *raw), *want = malloc(rows * cols * sizeof *want);
    float *ours = malloc(rows * cols * sizeof *ours);
    size_t *seq = calloc(rows, sizeof *seq), *pos = malloc(rows * sizeof *pos);
    int rc = raw && want && ours && seq && pos ? to_f32(t, raw, rows * cols, err)
                                               : ck_fail(err, CK_E_MEMORY, "xray: out of memory");
    ck_xray_result r;
    memset(&r, 0, sizeof r);
    if (rc == CK_OK) {
        for (size_t row = 0; row < rows; row++) {
            pos[row] = row;
            for (size_t ch = 0; ch < cols; ch++) {
                want[row * cols + ch] = s->channel_major && t->rank == 2 ? raw[ch * rows + row]
                                                                         : raw[row * cols + ch];
            }
        }
        for (size_t row = 0; row < rows; row++) {
            for (size_t ch = 0; ch < cols; ch++) {
                ours[row * cols + ch] = run->got[i][row * full + ch * k];
            }
        }
        if (strcmp(s->key, "gen.har") == 0) {
            unwrap_phase(ours, want, rows, cols);
        }
        rc = ck_xray_compare(ours, want, rows, cols, seq, pos, &b, &r) == CK_OK
                 ? CK_OK : ck_fail(err, CK_E_ARG, "xray: %s: nothing to compare", key);
    }
    if (rc == CK_OK) {
        snprintf(r.case_name, sizeof r.case_name, "%s", sc->name);
        snprintf(r.checkpoint, sizeof r.checkpoint, "%s", s->name);
        r.tokens = rows;
        r.signal_to_error = s->source == FROM_AUDIO;
        r.channel_stride = k;
        r.worst_channel *= k;
        if (s->source == FROM_PRED_DUR && r.status == CK_XRAY_FAIL) {
            snprintf(r.reason, sizeof r.reason, "durations differ: token %zu ours %.0f, the "
                     "capture's %.0f", r.worst_token, (double)ours[r.worst_token],
                     (double)want[r.worst_token]);
        }
        rc = ck_xray_report_add(rep, &r, err);
    }
    free(raw);
    free(want);
    free(ours);
    free(seq);
    free(pos);
    return rc;
}

int ck_xray_speech_run(const ck_xray_speech_case *cases, size_t n, const ck_st_file *oracle,
                       const char *oracle_path, const ck_xray_engine *e,
                       const ck_xray_profile *profile, ck_xray_report *rep, ck_error *err)
{
    const ck_circuit *c = e->circuit;
    int audio = !ck_xray_speech_token_side(cases, n);
    if ((audio && c->audio_buffer < 0) || c->durations_buffer < 0 || c->f0_buffer < 0 ||
        c->n_buffer < 0) {
        return ck_fail(err, CK_E_ARG, "xray: %s is a speech capture, but the circuit %s has no "
                       "\"durations\", \"f0\", \"n\"%s outputs", oracle_path, c->path,
                       audio ? " and \"audio\"" : "");
    }
    int rc = CK_OK;
    for (size_t k = 0; rc == CK_OK && k < n; k++) {
        const ck_xray_speech_case *sc = &cases[k];
        speech_run own = {0}, fed = {.fed = 1};
        rc = run_case(&own, sc, e, err);
        if (sc->noise == NULL) { /* token-side: no generator to feed */
            for (size_t i = 0; rc == CK_OK && i < N_STAGES; i++) {
                rc = compare_stage(sc, i, &own, oracle, profile, rep, err);
            }
            run_free(&own);
            continue;
        }
        /* fed: the capture's F0 [2F] and dec.decode.3 [512, 2F] over ours */
        float *f0 = NULL, *decoded = NULL;
        size_t dec = stage_by_key("dec.decode.3", 0);
        size_t dcols = own.got[dec] != NULL ? own.cols[dec] : 0;
        if (rc == CK_OK && dcols == 0) {
            rc = ck_fail(err, CK_E_ARG, "xray: the circuit %s has no %s checkpoint to feed", c->path,
                         FEED_DECODED);
        }
        rc = rc ? rc : case_f32(oracle, oracle_path, sc->name, "F0", 2 * sc->frames, &f0, err);
        rc = rc ? rc : case_f32(oracle, oracle_path, sc->name, "dec.decode.3",
                                2 * sc->frames * dcols, &decoded, err);
        fed.feed_f0 = f0;
        fed.feed_decoded = decoded;
        fed.feed_decoded_cols = dcols;
        rc = rc ? rc : run_case(&fed, sc, e, err);
        for (size_t i = 0; rc == CK_OK && i < N_STAGES; i++) {
            rc = compare_stage(sc, i, STAGES[i].fed ? &fed : &own, oracle, profile, rep, err);
        }
        free(f0);
        free(decoded);
        run_free(&own);
        run_free(&fed);
    }
    return rc;
}
