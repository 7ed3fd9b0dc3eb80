/* speech.c - ck_model_speak: lines -> 24 kHz float32 audio and word times through the speech
 * circuit (circuits/kokoro_speech.json), a line's chunks joined as Kokoro joins them (back to back,
 * SYNTHESIS.md §1.0: "Each chunk is synthesised independently. There is no overlap and no
 * crossfade."). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batcher.h"
#include "model_internal.h"
#include "prosody.h"

#ifndef CK_CIRCUITS_SOURCE_DIR
#define CK_CIRCUITS_SOURCE_DIR "circuits"
#endif

#define SPEECH_SAMPLES_PER_FRAME 600 /* 24000 Hz / 40 frames per second */

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

/* Scratch of one call, sized for every sequence of the set. */
typedef struct {
    size_t *batch;
    float *style, *speeds;
    uint64_t *lines;
    uint32_t *chunks;
    ck_output_word *words;
} speech_scratch;

static int scratch_alloc(speech_scratch *s, size_t n, ck_error *err)
{
    s->batch = malloc((n + 1) * sizeof *s->batch);
    s->style = malloc((n + 1) * 2 * CK_VOICE_HALF * sizeof *s->style);
    s->speeds = malloc((n + 1) * sizeof *s->speeds);
    s->lines = malloc((n + 1) * sizeof *s->lines);
    s->chunks = malloc((n + 1) * sizeof *s->chunks);
    s->words = malloc(CK_READER_MAX_PHONEMES * sizeof *s->words);
    return s->batch && s->style && s->speeds && s->lines && s->chunks && s->words
               ? CK_OK : ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
}

static void scratch_free(speech_scratch *s)
{
    free(s->batch);
    free(s->style);
    free(s->speeds);
    free(s->lines);
    free(s->chunks);
    free(s->words);
}

/* Runs sequences [first, first + count) as one batch: style (the whole 256-wide voice row of each
 * chunk's phoneme count), speed, noise keys, then the circuit up to "audio". */
static int speech_batch(ck_model *m, const ck_sequence_set *seqs, const ck_voice *v,
                        const ck_speak_options *o, size_t first, size_t count, speech_scratch *s,
                        ck_error *err)
{
    for (size_t j = 0; j < count; j++) {
        const float *row = ck_voice_style(v, ck_prosody_code_points(seqs->phonemes[first + j]));
        memcpy(s->style + j * 2 * CK_VOICE_HALF, row, 2 * CK_VOICE_HALF * sizeof *row);
        s->speeds[j] = (float)o->speed;
        s->lines[j] = seqs->line != NULL ? (uint64_t)seqs->line[first + j] : first + j;
        s->chunks[j] = seqs->chunk != NULL ? (uint32_t)seqs->chunk[first + j] : 0;
    }
    int rc = ck_executor_set_sequence_inputs(m->executor, s->style, count, 2 * CK_VOICE_HALF,
                                             s->speeds, err);
    rc = rc == CK_OK ? ck_executor_set_noise(m->executor, o->seed, s->lines, s->chunks, count,
                                             o->noise_scale, err)
                     : rc;
    return rc == CK_OK ? ck_executor_run(m->executor, seqs->ids + seqs->offsets[first], s->batch,
                                         count, m->circuit.audio_buffer, NULL, 0, NULL, NULL, err)
                       : rc;
}

/* Hands the batch's sequences to the line accumulator, flushing each line that ends. */
static int speech_collect(ck_model *m, const ck_sequence_set *seqs, size_t first, size_t count,
                          speech_scratch *s, speech_acc *acc, ck_speak_fn fn, void *user,
                          ck_error *err)
{
    size_t rows = 0, tok_rows = 0, n_seqs = 0;
    const float *audio = ck_executor_output_rows(m->executor, m->circuit.audio_buffer, &rows);
    const int32_t *dur = ck_executor_output_rows(m->executor, m->circuit.durations_buffer,
                                                 &tok_rows);
    const size_t *at = ck_executor_row_offsets(
        m->executor, m->circuit.buffers[m->circuit.audio_buffer].frames, &n_seqs);
    if (audio == NULL || dur == NULL || at == NULL || n_seqs != count) {
        return ck_fail(err, CK_E_BACKEND, "speak: the run gave no audio or durations");
    }
    int rc = CK_OK;
    size_t base = seqs->offsets[first];
    for (size_t j = 0; rc == CK_OK && j < count; j++) {
        size_t q = first + j, line = seqs->line != NULL ? seqs->line[q] : q, n_words = 0;
        if (acc->chunks > 0 && acc->line != line) {
            rc = acc_flush(acc, fn, user, err);
        }
        if (acc->chunks == 0) {
            acc->first = q;
        }
        acc->line = line;
        size_t t0 = seqs->offsets[q] - base, tokens = seqs->offsets[q + 1] - seqs->offsets[q];
        rc = rc == CK_OK ? ck_prosody_words(seqs->phonemes[q], dur + t0, tokens, s->words,
                                            CK_READER_MAX_PHONEMES, &n_words, err)
                         : rc;
        n_words = n_words < CK_READER_MAX_PHONEMES ? n_words : CK_READER_MAX_PHONEMES;
        rc = rc == CK_OK ? acc_add(acc, audio + at[j], at[j + 1] - at[j], s->words, n_words, err)
                         : rc;
    }
    return rc;
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
    size_t n = seqs->n_sequences;
    int rc = ck_prosody_open_voice(m, o.voice, o.speed, &v, err);
    rc = rc == CK_OK ? scratch_alloc(&s, n, err) : rc;
    for (size_t first = 0; rc == CK_OK && first < n;) {
        size_t count = ck_batch_consecutive(seqs->offsets, n, first, m->params.max_batch_tokens,
                                            s.batch);
        rc = ck_model_check_cancel(m, "speak", first, err);
        rc = rc == CK_OK ? speech_batch(m, seqs, v, &o, first, count, &s, err) : rc;
        rc = rc == CK_OK ? speech_collect(m, seqs, first, count, &s, &acc, fn, user, err) : rc;
        first += count;
    }
    rc = rc == CK_OK ? acc_flush(&acc, fn, user, err) : rc;
    /* the executor keeps no pointer to this call's arrays past it */
    ck_executor_set_noise(m->executor, 0, NULL, NULL, 0, 1.0f, NULL);
    ck_executor_set_sequence_inputs(m->executor, NULL, 0, 0, NULL, NULL);
    ck_voice_free(v);
    scratch_free(&s);
    free(acc.audio);
    free(acc.words);
    free(acc.chunk_words);
    free(acc.chunk_samples);
    return rc;
}
