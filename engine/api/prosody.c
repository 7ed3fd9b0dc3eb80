/* prosody.c - layer prosody's share of a corpus run: the voice and speed as per-sequence inputs,
 * Kokoro's word timestamps from durations, and the public voice helpers of ckbatch.h. Computes no
 * tensor (the circuit does), writes no file. */
#include "prosody.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batcher.h"
#include "model_internal.h"

#ifndef CK_CIRCUITS_SOURCE_DIR
#define CK_CIRCUITS_SOURCE_DIR "circuits"
#endif

/* Code points of s[0..bytes): every byte but a continuation byte starts one. */
static size_t code_points(const char *s, size_t bytes)
{
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++) {
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    }
    return n;
}

size_t ck_prosody_code_points(const char *s)
{
    return s != NULL ? code_points(s, strlen(s)) : 0;
}

void ck_prosody_style(const ck_voice *v, const char *phonemes, float *style)
{
    const float *row = ck_voice_style(v, ck_prosody_code_points(phonemes));
    memcpy(style, row + CK_VOICE_HALF, CK_PROSODY_STYLE_COLS * sizeof *style);
}

int ck_prosody_open_voice(const ck_model *m, const char *spec, double speed, ck_voice **out,
                          ck_error *err)
{
    *out = NULL;
    if (!(speed > 0.0) || !isfinite(speed)) {
        return ck_fail(err, CK_E_ARG, "prosody: speed %g: expected a finite number > 0", speed);
    }
    return ck_voice_load(out, spec != NULL ? spec : ck_model_default_voice(m), NULL, err);
}

/* Kokoro's clock: half frames, so a space's frames split in two without a fraction. */
enum { HALF_FRAMES_PER_SECOND = 2 * CK_PROSODY_FRAMES_PER_SECOND };

typedef struct {
    const int32_t *d;
    size_t n, i;            /* i: the next token past BOS, as join_timestamps' i */
    long long left, right;  /* half frames */
    int stopped;            /* the durations ran out: no later word is timed */
} clock_state;

/* Times one word of k code points followed (space 1) or not by a space; join_timestamps' loop body
 * for a token with phonemes. */
static void time_word(clock_state *c, size_t k, int space, ck_output_word *w)
{
    if (c->stopped || c->i >= c->n - 1 || c->i + k >= c->n) {
        c->stopped = 1;
        return;
    }
    long long sum = 0, gap = space ? c->d[c->i + k] : 0;
    for (size_t t = c->i; t < c->i + k; t++) {
        sum += c->d[t];
    }
    w->has_time = 1;
    w->start = (double)c->left / HALF_FRAMES_PER_SECOND;
    c->left = c->right + 2 * sum + gap;
    w->end = (double)c->left / HALF_FRAMES_PER_SECOND;
    c->right = c->left + gap;
    c->i += k + (space != 0);
}

/* A misaki token with whitespace and no phonemes, as pipeline.py:314-320 at dfb907a treats it: it
 * steps past two tokens and moves the clock by the second one's frames on both sides (i += 1;
 * left = right + d[i]; right = left + d[i]; i += 1), whatever those tokens are. */
static void time_space(clock_state *c)
{
    if (c->stopped || c->i >= c->n - 1) {
        c->stopped = 1;
        return;
    }
    c->i++;
    c->left = c->right + c->d[c->i];
    c->right = c->left + c->d[c->i];
    c->i++;
}

int ck_prosody_words(const char *phonemes, const int32_t *durations, size_t n,
                     ck_output_word *words, size_t cap, size_t *count, ck_error *err)
{
    if (phonemes == NULL || count == NULL || (durations == NULL && n > 0) ||
        (words == NULL && cap > 0)) {
        return ck_fail(err, CK_E_ARG, "prosody: null phonemes, durations, words or count");
    }
    clock_state c = {durations, n, 1, 0, 0, n < 3};
    if (!c.stopped) {
        long long lead = durations[0] > 3 ? (long long)durations[0] - 3 : 0;
        c.left = c.right = 2 * lead;
    }
    size_t found = 0;
    for (size_t at = 0; phonemes[at] != '\0';) {
        size_t len = strcspn(phonemes + at, " ");
        if (len == 0) { /* a space no word claimed: a token with whitespace and no phonemes */
            time_space(&c);
            at++;
            continue;
        }
        ck_output_word w = {at, len, 0, 0.0, 0.0};
        int space = phonemes[at + len] == ' ';
        time_word(&c, code_points(phonemes + at, len), space, &w);
        if (found < cap) {
            words[found] = w;
        }
        found++;
        at += len + (size_t)space;
    }
    *count = found;
    return CK_OK;
}

int ck_voice_check(const char *voice, ck_error *err)
{
    ck_voice *v = NULL;
    int rc = ck_voice_load(&v, voice, NULL, err);
    ck_voice_free(v);
    return rc;
}

const char *ck_model_default_voice(const ck_model *m)
{
    if (m == NULL) {
        return "";
    }
    return m->synthetic_weights ? CK_VOICE_SYNTHETIC : CK_VOICE_DEFAULT;
}

const char *ck_prosody_circuit_path(void)
{
    return CK_CIRCUITS_SOURCE_DIR "/kokoro_prosody.json";
}

void ck_prosody_free(ck_prosody *p)
{
    if (p != NULL) {
        free(p->durations);
        free(p->frame_offsets);
        free(p->word_offsets);
        free(p->words);
        free(p->f0);
        free(p->n);
        memset(p, 0, sizeof *p);
    }
}

/* The arrays of out for seqs: durations, frame and word offsets, and words for at most
 * CK_READER_MAX_PHONEMES per sequence (a word takes a code point and a space). */
static int prosody_alloc(const ck_sequence_set *seqs, ck_prosody *out, ck_error *err)
{
    size_t n = seqs->n_sequences, max_words = 0;
    for (size_t s = 0; s < n; s++) {
        max_words += ck_prosody_code_points(seqs->phonemes[s]) / 2 + 1;
    }
    out->n_sequences = n;
    out->n_tokens = seqs->n_tokens;
    out->durations = malloc((seqs->n_tokens + 1) * sizeof *out->durations);
    out->frame_offsets = calloc(n + 1, sizeof *out->frame_offsets);
    out->word_offsets = calloc(n + 1, sizeof *out->word_offsets);
    out->words = malloc((max_words + 1) * sizeof *out->words);
    if (!out->durations || !out->frame_offsets || !out->word_offsets || !out->words) {
        return ck_fail(err, CK_E_MEMORY, "prosody: cannot allocate for %zu sequences", n);
    }
    return CK_OK;
}

/* Sequence s's frames and words from its durations into out (its offsets s set before). */
static int prosody_words_of(const ck_sequence_set *seqs, size_t s, ck_output_word *scratch,
                            ck_prosody *out, ck_error *err)
{
    const int32_t *d = out->durations + seqs->offsets[s];
    size_t tokens = seqs->offsets[s + 1] - seqs->offsets[s], count = 0;
    size_t frames = 0;
    for (size_t t = 0; t < tokens; t++) {
        frames += (size_t)d[t];
    }
    out->frame_offsets[s + 1] = out->frame_offsets[s] + frames;
    int rc = ck_prosody_words(seqs->phonemes[s], d, tokens, scratch, CK_READER_MAX_PHONEMES,
                              &count, err);
    count = count < CK_READER_MAX_PHONEMES ? count : CK_READER_MAX_PHONEMES;
    for (size_t w = 0; rc == CK_OK && w < count; w++) {
        ck_word_time *to = &out->words[out->word_offsets[s] + w];
        to->byte = scratch[w].start_byte;
        to->bytes = scratch[w].bytes;
        to->start = scratch[w].has_time ? scratch[w].start : NAN;
        to->end = scratch[w].has_time ? scratch[w].end : NAN;
    }
    out->word_offsets[s + 1] = out->word_offsets[s] + count;
    return rc;
}

/* Runs the sequences [first, first + count) as one batch into out->durations. */
static int prosody_batch(ck_model *m, const ck_sequence_set *seqs, const ck_voice *v,
                         double speed, size_t first, size_t count, const size_t *batch,
                         float *style, float *speeds, ck_prosody *out, ck_error *err)
{
    for (size_t j = 0; j < count; j++) {
        ck_prosody_style(v, seqs->phonemes[first + j], style + j * CK_PROSODY_STYLE_COLS);
        speeds[j] = (float)speed;
    }
    size_t base = seqs->offsets[first];
    int rc = ck_executor_set_sequence_inputs(m->executor, style, count, CK_PROSODY_STYLE_COLS,
                                             speeds, err);
    /* the i32 durations buffer is copied as it is: 4 bytes per token, read back as int32 */
    return rc == CK_OK ? ck_executor_run(m->executor, seqs->ids + base, batch, count,
                                         m->circuit.durations_buffer,
                                         (float *)(void *)(out->durations + base), batch[count],
                                         NULL, NULL, err)
                       : rc;
}

/* Appends the last run's frame-rate output `buffer` (2 rows of 1 value per frame, the batch's
 * sequences back to back) to *to, which then holds 2 frame_offsets[last] values; frame_offsets of
 * the batch's sequences [first, last) are set. No-op for buffer -1. */
static int prosody_curve(const ck_model *m, int buffer, const ck_prosody *out, size_t first,
                         size_t last, float **to, ck_error *err)
{
    if (buffer < 0) {
        return CK_OK;
    }
    size_t rows = 0, from = 2 * out->frame_offsets[first], want = 2 * out->frame_offsets[last];
    const float *r = ck_executor_output_rows(m->executor, buffer, &rows);
    if (r == NULL || rows != want - from) {
        return ck_fail(err, CK_E_BACKEND, "prosody: %zu curve rows for %zu frames", rows,
                       (want - from) / 2);
    }
    float *grown = realloc(*to, (want + 1) * sizeof *grown);
    if (grown == NULL) {
        return ck_fail(err, CK_E_MEMORY, "prosody: cannot allocate %zu curve values", want);
    }
    *to = grown;
    memcpy(grown + from, r, rows * sizeof *grown);
    return CK_OK;
}

int ck_model_prosody(ck_model *m, const ck_sequence_set *seqs, const char *voice, double speed,
                     ck_prosody *out, ck_error *err)
{
    if (out != NULL) {
        memset(out, 0, sizeof *out);
    }
    if (m == NULL || seqs == NULL || out == NULL) {
        return ck_fail(err, CK_E_ARG, "prosody: null model, sequences or out");
    }
    if (m->circuit.durations_buffer < 0) {
        return ck_fail(err, CK_E_ARG, "prosody: the circuit %s has no \"durations\" output (the "
                       "prosody circuit is %s)", m->circuit.path, ck_prosody_circuit_path());
    }
    ck_voice *v = NULL;
    size_t n = seqs->n_sequences, *batch = NULL;
    float *style = NULL, *speeds = NULL;
    ck_output_word *scratch = NULL;
    int rc = ck_prosody_open_voice(m, voice, speed, &v, err);
    rc = rc == CK_OK ? prosody_alloc(seqs, out, err) : rc;
    if (rc == CK_OK) {
        batch = malloc((n + 1) * sizeof *batch);
        style = malloc((n + 1) * CK_PROSODY_STYLE_COLS * sizeof *style);
        speeds = malloc((n + 1) * sizeof *speeds);
        scratch = malloc(CK_READER_MAX_PHONEMES * sizeof *scratch);
        rc = batch && style && speeds && scratch
                 ? CK_OK : ck_fail(err, CK_E_MEMORY, "prosody: cannot allocate");
    }
    for (size_t first = 0; rc == CK_OK && first < n;) {
        size_t count = ck_batch_consecutive(seqs->offsets, n, first, m->params.max_batch_tokens,
                                            batch);
        rc = ck_model_check_cancel(m, "prosody", first, err);
        rc = rc == CK_OK ? prosody_batch(m, seqs, v, speed, first, count, batch, style, speeds,
                                         out, err)
                         : rc;
        for (size_t s = first; rc == CK_OK && s < first + count; s++) {
            rc = prosody_words_of(seqs, s, scratch, out, err);
        }
        rc = rc == CK_OK ? prosody_curve(m, m->circuit.f0_buffer, out, first, first + count,
                                         &out->f0, err)
                         : rc;
        rc = rc == CK_OK ? prosody_curve(m, m->circuit.n_buffer, out, first, first + count,
                                         &out->n, err)
                         : rc;
        first += count;
    }
    out->n_words = rc == CK_OK ? out->word_offsets[n] : 0;
    ck_voice_free(v);
    free(batch);
    free(style);
    free(speeds);
    free(scratch);
    if (rc != CK_OK) {
        ck_prosody_free(out);
    }
    return rc;
}
