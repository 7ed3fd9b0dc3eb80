/* prosody.c - layer prosody's share of a corpus run: the voice and speed as per-sequence inputs,
 * Kokoro's word timestamps from durations, and the public voice helpers of ckbatch.h. Computes no
 * tensor (the circuit does), writes no file. */
#include "prosody.h"

#include <string.h>

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

void ck_prosody_batch_inputs(const ck_voice *v, double speed, const ck_sequence *seqs,
                             const size_t *members, size_t count, float *style, float *speeds)
{
    for (size_t j = 0; j < count; j++) {
        const float *row = ck_voice_style(v, ck_prosody_code_points(seqs[members[j]].phonemes));
        memcpy(style + j * CK_PROSODY_STYLE_COLS, row + CK_VOICE_HALF,
               CK_PROSODY_STYLE_COLS * sizeof *style);
        speeds[j] = (float)speed;
    }
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
            c.stopped = c.stopped || c.i >= c.n - 1;
            c.i += !c.stopped;
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
    return CK_CIRCUITS_SOURCE_DIR "/kokoro_prosody_tokens.json";
}
