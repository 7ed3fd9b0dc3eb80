/* speech_capture.h - reads tensors of the pinned speech capture (tests/fixtures/speech, tools/kokoro_reference.py)
 * and the synthetic weights it was made with (engine/weights/synth_weights.h), for the generator kernel suites.
 * Tests only. */
#ifndef CK_SPEECH_CAPTURE_H
#define CK_SPEECH_CAPTURE_H

#include "ck_test.h"
#include "safetensors.h"
#include "synth_weights.h"

#define CK_SPEECH_CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"

static inline ck_st_file *ck_cap_open(void)
{
    ck_st_file *f = NULL;
    ck_error err = {0};
    if (ck_st_open(&f, ck_test_path(CK_SPEECH_CAPTURE), &err) != 0) {
        fprintf(stderr, "    %s\n", err.message);
        return NULL;
    }
    return f;
}

/* A malloc'd float copy of capture tensor `name`, *n its elements (NULL, printed, when missing). */
static inline float *ck_cap_f32(const ck_st_file *f, const char *name, size_t *n)
{
    const ck_st_tensor *t = f ? ck_st_find(f, name) : NULL;
    ck_error err = {0};
    if (t == NULL) {
        fprintf(stderr, "    capture tensor %s missing\n", name);
        return NULL;
    }
    float *out = malloc((t->elements ? t->elements : 1) * sizeof(float));
    if (out == NULL || ck_st_to_f32(t, out, t->elements, &err) != 0) {
        free(out);
        return NULL;
    }
    if (n) {
        *n = t->elements;
    }
    return out;
}

/* The synthetic checkpoint's tensor `name` (flat name, e.g. decoder.generator.m_source.l_linear.weight), malloc'd. */
static inline float *ck_cap_weight(const char *name, size_t count)
{
    float *w = malloc(count * sizeof(float));
    if (w != NULL && ck_synth_tensor_f32(name, CK_SYNTH_DEFAULT_SEED, w, count) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

#endif
