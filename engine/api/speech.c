/* speech.c - ck_model_speak: lines -> 24 kHz float32 audio and word times through the speech
 * circuit (circuits/kokoro_speech.json), a line's chunks joined as Kokoro joins them (back to back,
 * SYNTHESIS.md §1.0: "Each chunk is synthesised independently. There is no overlap and no
 * crossfade."). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "prosody.h"

#ifndef CK_CIRCUITS_SOURCE_DIR
#define CK_CIRCUITS_SOURCE_DIR "circuits"
#endif

#define SPEECH_SAMPLES_PER_FRAME 600 /* 24000 Hz / 40 frames per second */
#define SPEECH_GUESS_FRAMES_PER_TOKEN 3.0 /* a sequence's frames before its durations exist, at
                                             speed 1: Kokoro's mean is about 2.7 per token */
#define SPEECH_BUDGET_PER_THREAD 1024     /* default max_batch_frames per compute worker */
#define SPEECH_WINDOW_BUDGETS 4           /* a window sorted together: about 4 batches' frames */

const char *ck_speech_circuit_path(void)
{
    return CK_CIRCUITS_SOURCE_DIR "/kokoro_speech.json";
}

void ck_speak_options_init(ck_speak_options *o)
{
    if (o != NULL) {
        memset(o, 0, sizeof *o);
        o->speed = 1.0;
        o->noise_scale = 1.0f;
        o->max_batch_frames = 0;
    }
}

/* The line being gathered: its chunks' audio and words so far. */
typedef struct {
    size_t line, chunks, cap_cw, cap_cs, first;
    float *audio;
    size_t samples, cap_samples;
    ck_word_time *words;
    size_t n_words, cap_words;
    size_t *chunk_words, *chunk_samples;
} speech_acc;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return 1;
    }
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (q == NULL) {
        return 0;
    }
    *p = q;
    *cap = n;
    return 1;
}

/* Appends one chunk (audio[samples], its words timed from its own start) to acc. */
static int acc_add(speech_acc *acc, const float *audio, size_t samples, const ck_output_word *w,
                   size_t n_words, ck_error *err)
{
    int ok = grow((void **)&acc->audio, &acc->cap_samples, acc->samples + samples, sizeof(float))
             && grow((void **)&acc->words, &acc->cap_words, acc->n_words + n_words + 1,
                     sizeof *acc->words)
             && grow((void **)&acc->chunk_words, &acc->cap_cw, acc->chunks + 2, sizeof(size_t))
             && grow((void **)&acc->chunk_samples, &acc->cap_cs, acc->chunks + 2, sizeof(size_t));
    if (!ok) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate line %zu's audio", acc->line);
    }
    double shift = (double)acc->samples / CK_SPEECH_SAMPLE_RATE;
    if (acc->chunks == 0) {
        acc->chunk_words[0] = 0;
        acc->chunk_samples[0] = 0;
    }
    memcpy(acc->audio + acc->samples, audio, samples * sizeof *audio);
    for (size_t i = 0; i < n_words; i++) {
        ck_word_time *t = &acc->words[acc->n_words + i];
        t->byte = w[i].start_byte;
        t->bytes = w[i].bytes;
        t->start = w[i].has_time ? w[i].start + shift : NAN;
        t->end = w[i].has_time ? w[i].end + shift : NAN;
    }
    acc->samples += samples;
    acc->n_words += n_words;
    acc->chunks++;
    acc->chunk_words[acc->chunks] = acc->n_words;
    acc->chunk_samples[acc->chunks] = acc->samples;
    return CK_OK;
}

static int acc_flush(speech_acc *acc, ck_speak_fn fn, void *user, ck_error *err)
{
    if (acc->chunks == 0) {
        return CK_OK;
    }
    ck_speech_line l = {acc->line, acc->chunks, acc->first, acc->audio, acc->samples, acc->words,
                        acc->chunk_words, acc->chunk_samples, acc->n_words};
    int rc = fn(user, &l, err);
    acc->chunks = acc->samples = acc->n_words = 0;
    return rc;
}

/* A window's sequence and its estimated frames, for sorting longest first. */
typedef struct {
    size_t frames, seq;
} speech_guess;

static int guess_cmp(const void *a, const void *b)
{
    const speech_guess *x = a, *y = b;
    if (x->frames != y->frames) {
        return x->frames > y->frames ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Scratch of one call, sized for every sequence of the set, and the window's results: each
 * sequence's audio and words wait in `audio` and `held` until the window's lines are handed over
 * in order. */
typedef struct {
    size_t *batch;              /* [n + 1] the running batch's offsets */
    int32_t *ids;               /* [cap_tokens] the running batch's ids back to back */
    speech_guess *guess;        /* [n] the window, longest estimate first */
    size_t *order;              /* [n] guess[i].seq */
    float *style, *speeds;
    uint64_t *lines;
    uint32_t *chunks;
    ck_output_word *words;      /* [CK_READER_MAX_PHONEMES] one sequence's words */
    size_t *audio_at, *audio_n, *words_at, *words_n; /* [n] per sequence of the window */
    float *audio;               /* the window's audio so far */
    size_t samples, cap_samples;
    ck_output_word *held;       /* the window's words so far */
    size_t n_held, cap_held;
} speech_scratch;

static int scratch_alloc(speech_scratch *s, size_t n, size_t cap_tokens, ck_error *err)
{
    s->batch = malloc((n + 1) * sizeof *s->batch);
    s->ids = malloc((cap_tokens + 1) * sizeof *s->ids);
    s->guess = malloc((n + 1) * sizeof *s->guess);
    s->order = malloc((n + 1) * sizeof *s->order);
    s->style = malloc((n + 1) * 2 * CK_VOICE_HALF * sizeof *s->style);
    s->speeds = malloc((n + 1) * sizeof *s->speeds);
    s->lines = malloc((n + 1) * sizeof *s->lines);
    s->chunks = malloc((n + 1) * sizeof *s->chunks);
    s->words = malloc(CK_READER_MAX_PHONEMES * sizeof *s->words);
    s->audio_at = malloc((n + 1) * sizeof *s->audio_at);
    s->audio_n = malloc((n + 1) * sizeof *s->audio_n);
    s->words_at = malloc((n + 1) * sizeof *s->words_at);
    s->words_n = malloc((n + 1) * sizeof *s->words_n);
    return s->batch && s->ids && s->guess && s->order && s->style && s->speeds && s->lines
                   && s->chunks && s->words && s->audio_at && s->audio_n && s->words_at
                   && s->words_n
               ? CK_OK : ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
}

static void scratch_free(speech_scratch *s)
{
    free(s->batch);
    free(s->ids);
    free(s->guess);
    free(s->order);
    free(s->style);
    free(s->speeds);
    free(s->lines);
    free(s->chunks);
    free(s->words);
    free(s->audio_at);
    free(s->audio_n);
    free(s->words_at);
    free(s->words_n);
    free(s->audio);
    free(s->held);
}

static size_t seq_tokens(const ck_sequence_set *seqs, size_t q)
{
    return seqs->offsets[q + 1] - seqs->offsets[q];
}

/* Frames sequence q may need before its durations exist: 3 per token / speed, at least 1. */
static size_t guess_frames(const ck_sequence_set *seqs, size_t q, double speed)
{
    double f = ceil(SPEECH_GUESS_FRAMES_PER_TOKEN * (double)seq_tokens(seqs, q) / speed);
    return f < 1.0 ? 1 : f > 1e15 ? (size_t)1e15 : (size_t)f;
}

/* Runs the sequences members[0..k) as one batch under `limit` frames (0: the plan's): their ids
 * back to back, style (the whole 256-wide voice row of each chunk's phoneme count), speed and
 * noise keys, then the circuit up to "audio". */
static int speech_batch(ck_model *m, const ck_sequence_set *seqs, const ck_voice *v,
                        const ck_speak_options *o, const size_t *members, size_t k, size_t limit,
                        speech_scratch *s, ck_error *err)
{
    s->batch[0] = 0;
    for (size_t j = 0; j < k; j++) {
        size_t q = members[j], len = seq_tokens(seqs, q);
        memcpy(s->ids + s->batch[j], seqs->ids + seqs->offsets[q], len * sizeof *s->ids);
        s->batch[j + 1] = s->batch[j] + len;
        const float *row = ck_voice_style(v, ck_prosody_code_points(seqs->phonemes[q]));
        memcpy(s->style + j * 2 * CK_VOICE_HALF, row, 2 * CK_VOICE_HALF * sizeof *row);
        s->speeds[j] = (float)o->speed;
        s->lines[j] = seqs->line != NULL ? (uint64_t)seqs->line[q] : q;
        s->chunks[j] = seqs->chunk != NULL ? (uint32_t)seqs->chunk[q] : 0;
    }
    int rc = ck_executor_set_max_frames(m->executor, limit, err);
    rc = rc == CK_OK ? ck_executor_set_sequence_inputs(m->executor, s->style, k,
                                                       2 * CK_VOICE_HALF, s->speeds, err)
                     : rc;
    rc = rc == CK_OK ? ck_executor_set_noise(m->executor, o->seed, s->lines, s->chunks, k,
                                             o->noise_scale, err)
                     : rc;
    return rc == CK_OK ? ck_executor_run(m->executor, s->ids, s->batch, k,
                                         m->circuit.audio_buffer, NULL, 0, NULL, NULL, err)
                       : rc;
}

/* Keeps each member's audio and words (timed from its own start) in the window's store. */
static int speech_keep(ck_model *m, const ck_sequence_set *seqs, const size_t *members, size_t k,
                       speech_scratch *s, ck_error *err)
{
    size_t rows = 0, tok_rows = 0, n_seqs = 0;
    const float *audio = ck_executor_output_rows(m->executor, m->circuit.audio_buffer, &rows);
    const int32_t *dur = ck_executor_output_rows(m->executor, m->circuit.durations_buffer,
                                                 &tok_rows);
    const size_t *at = ck_executor_row_offsets(
        m->executor, m->circuit.buffers[m->circuit.audio_buffer].frames, &n_seqs);
    if (audio == NULL || dur == NULL || at == NULL || n_seqs != k) {
        return ck_fail(err, CK_E_BACKEND, "speak: the run gave no audio or durations");
    }
    int rc = CK_OK;
    for (size_t j = 0; rc == CK_OK && j < k; j++) {
        size_t q = members[j], n_words = 0, samples = at[j + 1] - at[j];
        rc = ck_prosody_words(seqs->phonemes[q], dur + s->batch[j], seq_tokens(seqs, q), s->words,
                              CK_READER_MAX_PHONEMES, &n_words, err);
        n_words = n_words < CK_READER_MAX_PHONEMES ? n_words : CK_READER_MAX_PHONEMES;
        if (rc == CK_OK
            && !(grow((void **)&s->audio, &s->cap_samples, s->samples + samples, sizeof(float))
                 && grow((void **)&s->held, &s->cap_held, s->n_held + n_words + 1,
                         sizeof *s->held))) {
            rc = ck_fail(err, CK_E_MEMORY, "speak: cannot allocate sequence %zu's audio", q);
        }
        if (rc == CK_OK) {
            memcpy(s->audio + s->samples, audio + at[j], samples * sizeof *audio);
            memcpy(s->held + s->n_held, s->words, n_words * sizeof *s->words);
            s->audio_at[q] = s->samples;
            s->audio_n[q] = samples;
            s->words_at[q] = s->n_held;
            s->words_n[q] = n_words;
            s->samples += samples;
            s->n_held += n_words;
        }
    }
    return rc;
}

/* Runs members[0..k) under `limit` frames; a batch of several whose durations overflow it
 * (CK_E_SIZE, found before any frame-rate op) runs again as two halves, recursively; one
 * sequence alone runs under the plan's whole limit. */
static int speech_run(ck_model *m, const ck_sequence_set *seqs, const ck_voice *v,
                      const ck_speak_options *o, const size_t *members, size_t k, size_t limit,
                      speech_scratch *s, ck_error *err)
{
    int rc = ck_model_check_cancel(m, "speak", members[0], err);
    if (rc != CK_OK) {
        return rc;
    }
    ck_error e = {0};
    rc = speech_batch(m, seqs, v, o, members, k, k > 1 ? limit : 0, s, &e);
    if (rc == CK_E_SIZE && k > 1) {
        rc = speech_run(m, seqs, v, o, members, k / 2, limit, s, err);
        return rc == CK_OK ? speech_run(m, seqs, v, o, members + k / 2, k - k / 2, limit, s, err)
                           : rc;
    }
    rc = rc == CK_OK ? speech_keep(m, seqs, members, k, s, &e) : rc;
    if (rc != CK_OK && err != NULL && err->code == CK_OK) {
        *err = e;
    }
    return rc;
}

/* Hands the window's sequences [first, first + count) to the line accumulator in order, flushing
 * each line that ends. */
static int speech_emit(const ck_sequence_set *seqs, size_t first, size_t count, speech_scratch *s,
                       speech_acc *acc, ck_speak_fn fn, void *user, ck_error *err)
{
    int rc = CK_OK;
    for (size_t q = first; rc == CK_OK && q < first + count; q++) {
        size_t line = seqs->line != NULL ? seqs->line[q] : q;
        if (acc->chunks > 0 && acc->line != line) {
            rc = acc_flush(acc, fn, user, err);
        }
        if (acc->chunks == 0) {
            acc->first = q;
        }
        acc->line = line;
        rc = rc == CK_OK ? acc_add(acc, s->audio + s->audio_at[q], s->audio_n[q],
                                   s->held + s->words_at[q], s->words_n[q], err)
                         : rc;
    }
    s->samples = s->n_held = 0;
    return rc;
}

/* One window: consecutive sequences from `first` whose estimates sum to about
 * SPEECH_WINDOW_BUDGETS budgets (at least one), sorted longest first and cut into batches under
 * the budget and max_batch_tokens, run, then handed over in order. *count gets the window's
 * size. */
static int speech_window(ck_model *m, const ck_sequence_set *seqs, const ck_voice *v,
                         const ck_speak_options *o, size_t first, size_t budget, size_t limit,
                         speech_scratch *s, speech_acc *acc, ck_speak_fn fn, void *user,
                         size_t *count, ck_error *err)
{
    const size_t n = seqs->n_sequences, max_tokens = m->params.max_batch_tokens;
    const size_t window = budget > SIZE_MAX / SPEECH_WINDOW_BUDGETS
                              ? SIZE_MAX : budget * SPEECH_WINDOW_BUDGETS;
    size_t w = 0, frames = 0;
    while (first + w < n) {
        size_t f = guess_frames(seqs, first + w, o->speed);
        if (w > 0 && f > window - frames) {
            break;
        }
        s->guess[w] = (speech_guess){f, first + w};
        frames = f > window - frames ? window : frames + f;
        w++;
    }
    qsort(s->guess, w, sizeof *s->guess, guess_cmp);
    for (size_t i = 0; i < w; i++) {
        s->order[i] = s->guess[i].seq;
    }
    int rc = CK_OK;
    for (size_t i = 0; rc == CK_OK && i < w;) {
        size_t k = 1, f = s->guess[i].frames, tokens = seq_tokens(seqs, s->order[i]);
        while (i + k < w && f <= budget && s->guess[i + k].frames <= budget - f
               && seq_tokens(seqs, s->order[i + k]) <= max_tokens - tokens) {
            f += s->guess[i + k].frames;
            tokens += seq_tokens(seqs, s->order[i + k]);
            k++;
        }
        rc = speech_run(m, seqs, v, o, s->order + i, k, limit, s, err);
        i += k;
    }
    *count = w;
    return rc == CK_OK ? speech_emit(seqs, first, w, s, acc, fn, user, err) : rc;
}

int ck_model_speak(ck_model *m, const ck_sequence_set *seqs, const ck_speak_options *opt,
                   ck_speak_fn fn, void *user, ck_error *err)
{
    ck_speak_options o;
    ck_speak_options_init(&o);
    if (opt != NULL) {
        o = *opt;
    }
    if (m == NULL || seqs == NULL || fn == NULL) {
        return ck_fail(err, CK_E_ARG, "speak: null model, sequences or callback");
    }
    if (m->circuit.audio_buffer < 0 || m->circuit.durations_buffer < 0) {
        return ck_fail(err, CK_E_ARG, "speak: the circuit %s has no \"audio\" and \"durations\" "
                       "outputs (the speech circuit is %s)", m->circuit.path,
                       ck_speech_circuit_path());
    }
    if (!isfinite(o.noise_scale) || o.noise_scale < 0.0f) {
        return ck_fail(err, CK_E_RANGE, "speak: noise scale %g is not finite and >= 0",
                       (double)o.noise_scale);
    }
    ck_voice *v = NULL;
    speech_scratch s = {0};
    speech_acc acc = {0};
    size_t n = seqs->n_sequences, cap_tokens = m->params.max_batch_tokens;
    for (size_t q = 0; q < n; q++) {
        cap_tokens = seq_tokens(seqs, q) > cap_tokens ? seq_tokens(seqs, q) : cap_tokens;
    }
    /* the batch budget, and the executor's limit for a batch of several: the budget, or the
     * plan's whole limit (0) when the budget is above it */
    size_t budget = o.max_batch_frames != 0 ? o.max_batch_frames
                                            : SPEECH_BUDGET_PER_THREAD * (size_t)m->workers;
    size_t plan = ck_executor_plan_max_frames(m->executor);
    size_t limit = budget < plan ? budget : 0;
    int rc = ck_prosody_open_voice(m, o.voice, o.speed, &v, err);
    rc = rc == CK_OK ? scratch_alloc(&s, n, cap_tokens, err) : rc;
    for (size_t first = 0, count = 0; rc == CK_OK && first < n; first += count) {
        rc = speech_window(m, seqs, v, &o, first, budget, limit, &s, &acc, fn, user, &count, err);
    }
    rc = rc == CK_OK ? acc_flush(&acc, fn, user, err) : rc;
    /* the executor keeps no pointer to this call's arrays past it, and the plan's frame limit */
    ck_executor_set_noise(m->executor, 0, NULL, NULL, 0, 1.0f, NULL);
    ck_executor_set_sequence_inputs(m->executor, NULL, 0, 0, NULL, NULL);
    ck_executor_set_max_frames(m->executor, 0, NULL);
    ck_voice_free(v);
    scratch_free(&s);
    free(acc.audio);
    free(acc.words);
    free(acc.chunk_words);
    free(acc.chunk_samples);
    return rc;
}
