/* test_api_speak.c - ck_model_speak as an embedding program sees it (ckbatch.h only), on the speech
 * circuit and the embedded synthetic weights (the speech capture's), voice "synthetic": speech4's
 * text gives 600 x 7 samples (its pred_dur sums to 7 frames), finite and not all zero; speech20's
 * word times equal ck_model_prosody's (the same durations); the same seed gives the same bits, a
 * different seed other bits, noise scale 0 the same bits for any seed; three lines in one call give
 * each line's audio alone bit for bit (batch invariance at 2 threads); bad noise scale, bad speed,
 * null callback and the prosody circuit (no "audio") are refused; a callback's error stops the
 * call and is returned. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ck_test.h"
#include "ckbatch.h"

static const char *const k_lines[] = {
    "\xc3\xb0i",                                                            /* ði: speech4 */
    "\xc3\xb0i \xcb\x88" "As",                                              /* ði ˈAs */
    "\xc3\xb0i d\xcb\x88\xc9\x94\xc9\xa1 \xc9\xb9\xcb\x88\xc3\xa6n h\xcb\x88Om.", /* speech20 */
};

#define MAX_LINES 3

/* What the callback saw: each line's audio and words copied. */
typedef struct {
    size_t n, lines[MAX_LINES], samples[MAX_LINES], n_words[MAX_LINES];
    float *audio[MAX_LINES];
    ck_word_time words[MAX_LINES][8];
    int fail;
} got_t;

static int on_line(void *user, const ck_speech_line *l, ck_error *err)
{
    got_t *g = user;
    if (g->fail) {
        err->code = -100;
        return -100;
    }
    if (g->n >= MAX_LINES) {
        return CK_E_SIZE;
    }
    g->lines[g->n] = l->line;
    g->samples[g->n] = l->samples;
    g->n_words[g->n] = l->n_words;
    g->audio[g->n] = malloc(l->samples * sizeof(float) + 1);
    memcpy(g->audio[g->n], l->audio, l->samples * sizeof(float));
    for (size_t w = 0; w < l->n_words && w < 8; w++) {
        g->words[g->n][w] = l->words[w];
    }
    g->n++;
    return CK_OK;
}

static void got_free(got_t *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->audio[i]);
    }
    memset(g, 0, sizeof *g);
}

static ck_model *open_model(const char *circuit)
{
    ck_model_params p = ck_model_default_params();
    p.circuit = circuit;
    p.threads = 2;
    ck_model *m = NULL;
    ck_error err = {0};
    if (ck_model_load(&m, &p, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    return m;
}

static int speak(ck_model *m, const char *const *lines, size_t n, uint64_t seed, float scale,
                 got_t *g)
{
    ck_sequence_set set;
    ck_lines_params lp = ck_lines_default_params();
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_tokenize(m, lines, n, &lp, &set, &err), CK_OK);
    ck_speak_options o;
    ck_speak_options_init(&o);
    o.voice = "synthetic";
    o.seed = seed;
    o.noise_scale = scale;
    int rc = ck_model_speak(m, &set, &o, on_line, g, &err);
    if (rc != CK_OK && rc != -100) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    ck_sequence_set_free(&set);
    return rc;
}

static int same(const got_t *a, size_t i, const got_t *b, size_t j)
{
    return a->samples[i] == b->samples[j]
           && memcmp(a->audio[i], b->audio[j], a->samples[i] * sizeof(float)) == 0;
}

static void test_audio_and_words(void)
{
    ck_model *m = open_model(ck_speech_circuit_path());
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    got_t g = {0};
    CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[0], 1, 0, 0.0f, &g), CK_OK);
    CU_ASSERT_EQUAL_FATAL(g.n, 1);
    CU_ASSERT_EQUAL(g.lines[0], 0);
    CU_ASSERT_EQUAL(g.samples[0], 600 * 7);
    double energy = 0;
    int finite = 1;
    for (size_t i = 0; i < g.samples[0]; i++) {
        finite &= isfinite(g.audio[0][i]) != 0;
        energy += (double)g.audio[0][i] * g.audio[0][i];
    }
    CU_ASSERT(finite);
    CU_ASSERT(energy > 0);
    got_free(&g);
    /* speech20: the word times of test_api_prosody.c (the capture's durations at speed 1) are
     * speed 1.3's; at speed 1 they are ck_model_prosody's own */
    CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[2], 1, 0, 0.0f, &g), CK_OK);
    ck_model *pm = open_model(ck_prosody_circuit_path());
    CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
    ck_sequence_set set;
    ck_lines_params lp = ck_lines_default_params();
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_tokenize(pm, &k_lines[2], 1, &lp, &set, &err), CK_OK);
    ck_prosody p;
    CU_ASSERT_EQUAL_FATAL(ck_model_prosody(pm, &set, "synthetic", 1.0, &p, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(g.n_words[0], p.n_words);
    CU_ASSERT_EQUAL(g.samples[0], 600 * p.frame_offsets[1]);
    for (size_t w = 0; w < p.n_words; w++) {
        CU_ASSERT_EQUAL(g.words[0][w].byte, p.words[w].byte);
        CU_ASSERT_EQUAL(g.words[0][w].start, p.words[w].start);
        CU_ASSERT_EQUAL(g.words[0][w].end, p.words[w].end);
    }
    ck_prosody_free(&p);
    ck_sequence_set_free(&set);
    ck_model_free(pm);
    got_free(&g);
    ck_model_free(m);
}

static void test_seeds_and_batch(void)
{
    ck_model *m = open_model(ck_speech_circuit_path());
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    got_t a = {0}, b = {0}, c = {0}, z1 = {0}, z2 = {0}, all = {0};
    CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[1], 1, 7, 1.0f, &a), CK_OK);
    CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[1], 1, 7, 1.0f, &b), CK_OK);
    CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[1], 1, 8, 1.0f, &c), CK_OK);
    CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[1], 1, 7, 0.0f, &z1), CK_OK);
    CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[1], 1, 8, 0.0f, &z2), CK_OK);
    CU_ASSERT(same(&a, 0, &b, 0));
    CU_ASSERT(a.samples[0] == c.samples[0] && !same(&a, 0, &c, 0));
    CU_ASSERT(same(&z1, 0, &z2, 0));
    CU_ASSERT(!same(&a, 0, &z1, 0));
    /* the three lines in one call: line 1 keys its noise with line 1, so compare noise-free
     * audio with each alone (line keys differ from a call of one line) */
    CU_ASSERT_EQUAL_FATAL(speak(m, k_lines, 3, 7, 0.0f, &all), CK_OK);
    CU_ASSERT_EQUAL_FATAL(all.n, 3);
    for (size_t k = 0; k < 3; k++) {
        got_t one = {0};
        CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[k], 1, 7, 0.0f, &one), CK_OK);
        CU_ASSERT_EQUAL(all.lines[k], k);
        CU_ASSERT(same(&all, k, &one, 0));
        got_free(&one);
    }
    got_free(&a);
    got_free(&b);
    got_free(&c);
    got_free(&z1);
    got_free(&z2);
    got_free(&all);
    ck_model_free(m);
}

/* Where the work goes (ck_model_op_flops): the convolutions and LSTM steps of a line counted from
 * their shapes and rows, so two lines in one batch count exactly what each counts alone (integers
 * below 2^53: exact in any order); the linears and convolutions each outnumber the LSTM steps; a
 * reset zeroes them; NULL and a class outside the enum give 0. */
static void test_op_flops(void)
{
    ck_model *m = open_model(ck_speech_circuit_path());
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    static const ck_op_class classes[3] = {CK_OP_CLASS_LINEAR, CK_OP_CLASS_CONVOLUTION,
                                           CK_OP_CLASS_LSTM};
    double alone[3] = {0, 0, 0}, both[3];
    for (size_t i = 0; i < 2; i++) {
        got_t g = {0};
        ck_model_reset_op_seconds(m);
        CU_ASSERT_EQUAL_FATAL(speak(m, &k_lines[i], 1, 0, 0.0f, &g), CK_OK);
        for (int c = 0; c < 3; c++) {
            alone[c] += ck_model_op_flops(m, classes[c]);
        }
        got_free(&g);
    }
    got_t g = {0};
    ck_model_reset_op_seconds(m);
    CU_ASSERT_EQUAL(ck_model_op_flops(m, CK_OP_CLASS_CONVOLUTION), 0.0);
    CU_ASSERT_EQUAL_FATAL(speak(m, k_lines, 2, 0, 0.0f, &g), CK_OK);
    for (int c = 0; c < 3; c++) {
        both[c] = ck_model_op_flops(m, classes[c]);
        CU_ASSERT(both[c] > 0.0);
        CU_ASSERT_EQUAL(both[c], alone[c]);
    }
    CU_ASSERT(both[1] > both[2] && both[0] > both[2]);
    CU_ASSERT(ck_model_op_seconds(m, CK_OP_CLASS_CONVOLUTION) > 0.0);
    CU_ASSERT_EQUAL(ck_model_op_flops(m, CK_OP_CLASS_OTHER), 0.0); /* norms, Snake, the source */
    CU_ASSERT_EQUAL(ck_model_op_flops(m, CK_OP_CLASS_COUNT), 0.0);
    CU_ASSERT_EQUAL(ck_model_op_flops(NULL, CK_OP_CLASS_CONVOLUTION), 0.0);
    CU_ASSERT_STRING_EQUAL(ck_op_class_name(CK_OP_CLASS_CONVOLUTION), "convolution");
    CU_ASSERT_STRING_EQUAL(ck_op_class_name(CK_OP_CLASS_LSTM), "lstm");
    got_free(&g);
    ck_model_free(m);
}

static void test_refusals(void)
{
    ck_model *m = open_model(ck_speech_circuit_path());
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ck_sequence_set set;
    ck_lines_params lp = ck_lines_default_params();
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_tokenize(m, k_lines, 1, &lp, &set, &err), CK_OK);
    got_t g = {0};
    ck_speak_options o;
    ck_speak_options_init(&o);
    o.noise_scale = -1.0f;
    CU_ASSERT_EQUAL(ck_model_speak(m, &set, &o, on_line, &g, &err), CK_E_RANGE);
    o.noise_scale = NAN;
    CU_ASSERT_EQUAL(ck_model_speak(m, &set, &o, on_line, &g, &err), CK_E_RANGE);
    ck_speak_options_init(&o);
    o.speed = 0;
    CU_ASSERT_EQUAL(ck_model_speak(m, &set, &o, on_line, &g, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_model_speak(m, &set, NULL, NULL, &g, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(g.n, 0);
    g.fail = 1;
    CU_ASSERT_EQUAL(ck_model_speak(m, &set, NULL, on_line, &g, &err), -100);
    ck_model *pm = open_model(ck_prosody_circuit_path());
    CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_model_speak(pm, &set, NULL, on_line, &g, &err), CK_E_ARG);
    CU_ASSERT(strstr(err.message, "\"audio\"") != NULL);
    ck_model_free(pm);
    ck_sequence_set_free(&set);
    ck_model_free(m);
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"speech4's samples and speech20's word times", test_audio_and_words},
        {"seeds, noise scale 0 and batch invariance", test_seeds_and_batch},
        {"bad noise scale, speed, callback and circuit", test_refusals},
        {"op flops: a batch counts what its lines count alone", test_op_flops},
    };
    return ck_test_run("api_speak", cases, sizeof cases / sizeof cases[0]);
}
