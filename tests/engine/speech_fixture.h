/* speech_fixture.h - what the suites against the pinned PyTorch speech captures share
 * (test_prosody_tokens, _frames, _decoder, _edges, test_speech_circuit): a circuit bound to nothing
 * yet and the synthetic whole Kokoro (engine/weights/kokoro_layout.c + ck_weights_synthetic, seed
 * CK_SYNTH_DEFAULT_SEED), and each case of a capture (tests/fixtures/speech, written by
 * tools/kokoro_reference.py): its ids, pred_dur, style (voice "synthetic" row len(phonemes) - 1,
 * checked equal to the case's ref_s), speed and, when asked, its noise. Tests only.
 *
 * Legend: T tokens of a case, F its frames (the sum of pred_dur). */
#ifndef CK_SPEECH_FIXTURE_H
#define CK_SPEECH_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_test.h"
#include "kokoro_layout.h"
#include "safetensors.h"
#include "synth_weights.h"
#include "voice.h"
#include "weights.h"

enum { CK_SPEECH_CASES_MAX = 4, CK_SPEECH_TOKENS_MAX = 512, CK_SPEECH_FILES_MAX = 2 };

typedef struct {
    ck_circuit c;
    ck_weights *w;
    ck_st_file *files[CK_SPEECH_FILES_MAX]; /* the captures opened, in first-use order */
    const char *paths[CK_SPEECH_FILES_MAX];
    size_t n_files;
    size_t n;                               /* cases */
    size_t style_cols;                      /* 128: the voice row's predictor half (the prosody
                                               circuits' style); 256: the whole row (ref_s) */
    size_t max_tokens, max_frames;          /* the suite's limits: a larger case fails to load */
    const ck_st_file *cap[CK_SPEECH_CASES_MAX]; /* case k's capture (one of files) */
    const char *name[CK_SPEECH_CASES_MAX];
    int32_t ids[CK_SPEECH_CASES_MAX][CK_SPEECH_TOKENS_MAX]; /* [T] [0, *phoneme ids, 0] */
    int32_t dur[CK_SPEECH_CASES_MAX][CK_SPEECH_TOKENS_MAX]; /* [T] pred_dur */
    size_t tokens[CK_SPEECH_CASES_MAX], frames[CK_SPEECH_CASES_MAX];
    float style[CK_SPEECH_CASES_MAX * 256]; /* [n, style_cols] packed: a batch's style rows */
    float speed[CK_SPEECH_CASES_MAX];
    float *noise[CK_SPEECH_CASES_MAX];      /* [600F, 9] the capture's, when asked; else NULL */
} ck_speech_fixture;

/* Case k's style row (style_cols values; rows k.. are the batch's from k on). */
static inline const float *ck_speech_style(const ck_speech_fixture *f, size_t k)
{
    return f->style + k * f->style_cols;
}

/* "<case k>.<what>" in case k's capture, NULL when it holds none. */
static inline const ck_st_tensor *ck_speech_tensor(const ck_speech_fixture *f, size_t k,
                                                   const char *what)
{
    char key[96];
    snprintf(key, sizeof key, "%s.%s", f->name[k], what);
    return ck_st_find(f->cap[k], key);
}

/* The capture at `path` (under the source tree), opened once. NULL on error (err set). */
static inline const ck_st_file *ck_speech_capture(ck_speech_fixture *f, const char *path,
                                                  ck_error *err)
{
    for (size_t i = 0; i < f->n_files; i++) {
        if (strcmp(f->paths[i], path) == 0) {
            return f->files[i];
        }
    }
    if (f->n_files == CK_SPEECH_FILES_MAX) {
        ck_fail(err, CK_E_ARG, "speech fixture: more than %d captures", CK_SPEECH_FILES_MAX);
        return NULL;
    }
    if (ck_st_open(&f->files[f->n_files], ck_test_path(path), err) != CK_OK) {
        return NULL;
    }
    f->paths[f->n_files] = path;
    return f->files[f->n_files++];
}

/* Case k's inputs from its capture: ids I32 [T], pred_dur I64 [T], the style row, speed, noise. */
static inline int ck_speech_load_case(ck_speech_fixture *f, size_t k, int with_noise,
                                      ck_error *err)
{
    const ck_st_tensor *t = ck_speech_tensor(f, k, "ids");
    if (t == NULL || t->dtype != CK_DTYPE_I32 || t->elements < 2 || t->elements > f->max_tokens ||
        t->elements > CK_SPEECH_TOKENS_MAX) {
        return ck_fail(err, CK_E_FORMAT, "no ids I32 [T <= %zu]", f->max_tokens);
    }
    memcpy(f->ids[k], t->data, t->bytes);
    f->tokens[k] = t->elements;
    t = ck_speech_tensor(f, k, "pred_dur");
    if (t == NULL || t->dtype != CK_DTYPE_I64 || t->elements != f->tokens[k]) {
        return ck_fail(err, CK_E_FORMAT, "no pred_dur I64 [T]");
    }
    for (size_t i = 0; i < f->tokens[k]; i++) {
        int64_t d;
        memcpy(&d, (const char *)t->data + i * sizeof d, sizeof d);
        f->dur[k][i] = (int32_t)d;
        f->frames[k] += (size_t)d;
    }
    if (f->frames[k] > f->max_frames) {
        return ck_fail(err, CK_E_SIZE, "%zu frames, above the suite's %zu", f->frames[k],
                       f->max_frames);
    }
    /* the style: voice "synthetic", row len(phonemes) - 1 (tokens minus BOS and EOS); the whole
     * row must be the capture's ref_s */
    float ref_s[256];
    ck_voice *v = NULL;
    t = ck_speech_tensor(f, k, "ref_s");
    if (t == NULL || ck_st_to_f32(t, ref_s, 256, err) != CK_OK ||
        ck_voice_load(&v, CK_VOICE_SYNTHETIC, NULL, err) != CK_OK) {
        return err->code ? err->code : ck_fail(err, CK_E_FORMAT, "no ref_s [256]");
    }
    const float *row = ck_voice_style(v, f->tokens[k] - 2);
    CU_ASSERT_EQUAL(memcmp(row, ref_s, sizeof ref_s), 0);
    memcpy(f->style + k * f->style_cols, row + 256 - f->style_cols, f->style_cols * sizeof *row);
    ck_voice_free(v);
    t = ck_speech_tensor(f, k, "speed");
    if (t == NULL || ck_st_to_f32(t, &f->speed[k], 1, err) != CK_OK) {
        return err->code ? err->code : ck_fail(err, CK_E_FORMAT, "no speed [1]");
    }
    t = with_noise ? ck_speech_tensor(f, k, "noise") : NULL;
    if (with_noise && (t == NULL || t->elements != 600 * 9 * f->frames[k])) {
        return ck_fail(err, CK_E_FORMAT, "no noise [600F, 9]");
    }
    if (t != NULL && ((f->noise[k] = malloc(t->elements * sizeof(float))) == NULL ||
                      ck_st_to_f32(t, f->noise[k], t->elements, err) != CK_OK)) {
        return err->code ? err->code : ck_fail(err, CK_E_MEMORY, "no memory for the noise");
    }
    return CK_OK;
}

/* Adds case `name` of the capture at `path` (its noise too when with_noise). 1 on success, else 0
 * with the reason on stderr. */
static inline int ck_speech_fixture_add(ck_speech_fixture *f, const char *path, const char *name,
                                        int with_noise)
{
    ck_error err = {0};
    size_t k = f->n;
    int rc = k < CK_SPEECH_CASES_MAX ? CK_OK
                                     : ck_fail(&err, CK_E_ARG, "more than %d cases",
                                               CK_SPEECH_CASES_MAX);
    if (rc == CK_OK && (f->cap[k] = ck_speech_capture(f, path, &err)) == NULL) {
        rc = err.code;
    }
    if (rc == CK_OK) {
        f->name[k] = name;
        f->n++;
        rc = ck_speech_load_case(f, k, with_noise, &err);
    }
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s: case %s: %s\n", path, name, err.message);
    }
    return rc == CK_OK;
}

/* Zeroes f, loads the circuit (a path under the source tree) and the synthetic whole Kokoro, then
 * adds the n cases names[n] of the capture at `path` (their noise too when with_noise): style
 * rows style_cols wide (128 or 256), each case at most max_tokens tokens and max_frames frames.
 * 1 on success, else 0 with the reason on stderr; close f either way. */
static inline int ck_speech_fixture_open(ck_speech_fixture *f, const char *circuit,
                                         const char *path, const char *const *names, size_t n,
                                         size_t style_cols, size_t max_tokens, size_t max_frames,
                                         int with_noise)
{
    ck_error err = {0};
    ck_weight_spec *specs = NULL;
    size_t count = 0;
    memset(f, 0, sizeof *f);
    f->style_cols = style_cols == 128 ? 128 : 256;
    f->max_tokens = max_tokens;
    f->max_frames = max_frames;
    if (ck_circuit_load(&f->c, ck_test_path(circuit), &err) != CK_OK ||
        ck_kokoro_weight_specs(&specs, &count, NULL, &err) != CK_OK ||
        ck_weights_synthetic(&f->w, specs, count, CK_SYNTH_DEFAULT_SEED, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
        free(specs);
        return 0;
    }
    free(specs);
    for (size_t k = 0; k < n; k++) {
        if (!ck_speech_fixture_add(f, path, names[k], with_noise)) {
            return 0;
        }
    }
    return 1;
}

/* The fixture's cases as one packed batch: their ids back to back into ids[sum T], offsets[n + 1]
 * (offsets[0] = 0); returns the batch's frames (the sum of F). Its style rows are f->style
 * [n, style_cols] and its speeds f->speed [n] as they are. */
static inline size_t ck_speech_batch(const ck_speech_fixture *f, int32_t *ids, size_t *offsets)
{
    size_t frames = 0;
    offsets[0] = 0;
    for (size_t k = 0; k < f->n; k++) {
        memcpy(ids + offsets[k], f->ids[k], f->tokens[k] * sizeof *ids);
        offsets[k + 1] = offsets[k] + f->tokens[k];
        frames += f->frames[k];
    }
    return frames;
}

/* Frees what open and add made; accepts a fixture whose open failed. */
static inline void ck_speech_fixture_close(ck_speech_fixture *f)
{
    for (size_t k = 0; k < CK_SPEECH_CASES_MAX; k++) {
        free(f->noise[k]);
        f->noise[k] = NULL;
    }
    for (size_t i = 0; i < f->n_files; i++) {
        ck_st_close(f->files[i]);
    }
    f->n_files = 0;
    ck_weights_free(f->w);
    f->w = NULL;
    ck_circuit_free(&f->c);
}

#endif
