/* prosody_stages.c - milliseconds per token-side stage of circuits/kokoro_prosody.json (PL-BERT,
 * text encoder, duration encoder, duration head, alignment, F0Ntrain) on the synthetic whole
 * Kokoro (the speech capture's weights) for the pinned capture cases (tests/fixtures/speech:
 * speech4, speech8, speech20, speech40, each alone at its own speed, and the four as one batch), at
 * 1 and 2 threads. Never run by ctest; bench/prosody_stages.sh runs it and writes the report.
 *
 * How: one executor per thread count, as ck_model builds it (fused GELU, f32). A capture callback
 * reads the clock at the checkpoint that ends each stage; a stage is the time from the previous
 * boundary (the run's start for PL-BERT) to its own. F0Ntrain ends when ck_executor_run returns
 * (its finite check and output copy included). With a capture the executor runs every op on its
 * own (no row-local fusion, executor.c run_steps), so the report also gives the whole run without
 * a capture ("fused"), measured interleaved with the staged runs: the stages' sum over it says
 * what the capture costs. Configurations (case x threads) alternate inside each repetition; the
 * median of the repetitions is printed, with the minimum.
 *
 *   prosody_stages [reps] [source dir]      (defaults: 11, the source tree it was built from)
 *
 * Output: a Markdown table on stdout. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_error.h"
#include "executor.h"
#include "kokoro_layout.h"
#include "safetensors.h"
#include "synth_weights.h"
#include "voice.h"
#include "weights.h"

#define CIRCUIT "circuits/kokoro_prosody.json"
#define CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"

enum { N_CASES = 4, N_CONFIGS = N_CASES + 1, MAX_T = 64, N_STAGES = 6, MAX_REPS = 101 };

static const char *const CASES[N_CASES] = {"speech4", "speech8", "speech20", "speech40"};

/* Stage s ends at checkpoint END[s] (the last, F0Ntrain, when the run returns). */
static const char *const STAGES[N_STAGES] = {"PL-BERT", "text enc", "dur enc", "dur head",
                                             "alignment", "F0Ntrain"};
static const char *const END[N_STAGES - 1] = {"kokoro.bert_encoder.d_en", "kokoro.text_encoder.t_en",
                                              "kokoro.predictor.d", "kokoro.predictor.dur_logits",
                                              "kokoro.asr"};

typedef struct {
    int32_t ids[N_CASES * MAX_T];   /* config's sequences back to back */
    size_t offsets[N_CASES + 1], n_seqs;
    float style[N_CASES * 128], speed[N_CASES];
} config;

typedef struct {
    double at[N_STAGES];  /* clock at each boundary (seconds) */
    int seen[N_STAGES];
} clocks;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void on_checkpoint(void *ctx, const char *checkpoint, const float *data, size_t rows,
                          size_t cols)
{
    (void)data, (void)rows, (void)cols;
    clocks *c = ctx;
    for (int s = 0; s < N_STAGES - 1; s++) {
        if (strcmp(checkpoint, END[s]) == 0) {
            c->at[s] = now();
            c->seen[s] = 1;
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Case k's ids, style (voice "synthetic" row tokens - 2, predictor half) and speed appended to
 * config g. 0 on success. */
static int add_case(const ck_st_file *cap, const ck_voice *v, size_t k, config *g, ck_error *err)
{
    char name[64];
    snprintf(name, sizeof name, "%s.ids", CASES[k]);
    const ck_st_tensor *t = ck_st_find(cap, name);
    if (t == NULL || t->dtype != CK_DTYPE_I32 || t->elements > MAX_T) {
        return ck_fail(err, CK_E_FORMAT, "%s: no I32 tensor %s of at most %d ids", CAPTURE, name,
                       MAX_T);
    }
    size_t at = g->offsets[g->n_seqs], s = g->n_seqs;
    memcpy(g->ids + at, t->data, t->bytes);
    g->offsets[s + 1] = at + t->elements;
    memcpy(g->style + 128 * s, ck_voice_style(v, t->elements - 2) + 128, 128 * sizeof(float));
    snprintf(name, sizeof name, "%s.speed", CASES[k]);
    t = ck_st_find(cap, name);
    if (t == NULL) {
        return ck_fail(err, CK_E_FORMAT, "%s: no tensor %s", CAPTURE, name);
    }
    g->n_seqs++;
    return ck_st_to_f32(t, &g->speed[s], 1, err);
}

/* One run of config g: staged (capture) into ms[N_STAGES], or the whole run (no capture) into
 * *whole_ms. */
static int run_once(ck_executor *ex, const ck_circuit *c, const config *g, int staged, double *ms,
                    double *whole_ms, ck_error *err)
{
    clocks k;
    memset(&k, 0, sizeof k);
    int rc = ck_executor_set_sequence_inputs(ex, g->style, g->n_seqs, 128, g->speed, err);
    double t0 = now();
    rc = rc == CK_OK ? ck_executor_run(ex, g->ids, g->offsets, g->n_seqs, c->f0_buffer, NULL, 0,
                                       staged ? on_checkpoint : NULL, &k, err)
                     : rc;
    double t1 = now();
    if (rc != CK_OK) {
        return rc;
    }
    if (!staged) {
        *whole_ms = 1e3 * (t1 - t0);
        return CK_OK;
    }
    k.at[N_STAGES - 1] = t1;
    for (int s = 0; s < N_STAGES - 1; s++) {
        if (!k.seen[s]) {
            return ck_fail(err, CK_E_CIRCUIT, "%s: checkpoint %s was not captured", c->path,
                           END[s]);
        }
    }
    for (int s = 0; s < N_STAGES; s++) {
        ms[s] = 1e3 * (k.at[s] - (s ? k.at[s - 1] : t0));
    }
    return CK_OK;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 11;
    const char *src = argc > 2 ? argv[2] : CK_SOURCE_DIR;
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "prosody_stages: reps %s: expected 1..%d\n", argv[1], MAX_REPS);
        return 2;
    }
    char circuit_path[4096], capture_path[4096];
    snprintf(circuit_path, sizeof circuit_path, "%s/%s", src, CIRCUIT);
    snprintf(capture_path, sizeof capture_path, "%s/%s", src, CAPTURE);
    ck_error err = {0};
    ck_circuit c;
    ck_weights *w = NULL;
    ck_weight_spec *specs = NULL;
    ck_st_file *cap = NULL;
    ck_voice *v = NULL;
    size_t n_specs = 0;
    static config g[N_CONFIGS];
    int rc = ck_circuit_load(&c, circuit_path, &err);
    rc = rc == CK_OK ? ck_kokoro_weight_specs(&specs, &n_specs, NULL, &err) : rc;
    rc = rc == CK_OK ? ck_weights_synthetic(&w, specs, n_specs, CK_SYNTH_DEFAULT_SEED, &err) : rc;
    rc = rc == CK_OK ? ck_st_open(&cap, capture_path, &err) : rc;
    rc = rc == CK_OK ? ck_voice_load(&v, CK_VOICE_SYNTHETIC, NULL, &err) : rc;
    for (size_t k = 0; rc == CK_OK && k < N_CASES; k++) {
        rc = add_case(cap, v, k, &g[k], &err);                  /* alone */
        rc = rc == CK_OK ? add_case(cap, v, k, &g[N_CASES], &err) : rc; /* the batch of four */
    }
    free(specs);
    ck_executor *ex[2] = {NULL, NULL};
    for (int t = 0; rc == CK_OK && t < 2; t++) {
        ck_executor_options o = {t + 1, 256, 64, 1, CK_DTYPE_F32, NULL};
        rc = ck_executor_init_frames(&ex[t], &c, w, &o, 0, &err);
    }
    static double ms[2][N_CONFIGS][N_STAGES][MAX_REPS], whole[2][N_CONFIGS][MAX_REPS];
    double scratch[N_STAGES] = {0};
    /* one warm-up of each, then reps rounds, every configuration staged and whole in each */
    for (int r = -1; rc == CK_OK && r < reps; r++) {
        for (int t = 0; rc == CK_OK && t < 2; t++) {
            for (int k = 0; rc == CK_OK && k < N_CONFIGS; k++) {
                int first_staged = (r + t + k) % 2 == 0; /* alternate which goes first */
                for (int i = 0; rc == CK_OK && i < 2; i++) {
                    int staged = i == 0 ? first_staged : !first_staged;
                    double whole_ms = 0.0;
                    rc = run_once(ex[t], &c, &g[k], staged, scratch, &whole_ms, &err);
                    if (rc == CK_OK && r >= 0 && staged) {
                        for (int s = 0; s < N_STAGES; s++) {
                            ms[t][k][s][r] = scratch[s];
                        }
                    } else if (rc == CK_OK && r >= 0) {
                        whole[t][k][r] = whole_ms;
                    }
                }
            }
        }
    }
    if (rc == CK_OK) {
        printf("| case | tokens | threads |");
        for (int s = 0; s < N_STAGES; s++) {
            printf(" %s |", STAGES[s]);
        }
        printf(" sum of stages | whole run, fused (min) |\n|---|---|---|");
        for (int s = 0; s < N_STAGES + 2; s++) {
            printf("---|");
        }
        printf("\n");
        for (int k = 0; k < N_CONFIGS; k++) {
            for (int t = 0; t < 2; t++) {
                printf("| %s | %zu | %d |", k < N_CASES ? CASES[k] : "all four, one batch",
                       g[k].offsets[g[k].n_seqs], t + 1);
                double sum = 0.0;
                for (int s = 0; s < N_STAGES; s++) {
                    double m = median(ms[t][k][s], (size_t)reps);
                    sum += m;
                    printf(" %.2f |", m);
                }
                double m = median(whole[t][k], (size_t)reps); /* sorts: [0] is then the min */
                printf(" %.2f | %.2f (%.2f) |\n", sum, m, whole[t][k][0]);
            }
        }
        printf("\nms, median of %d repetitions after one warm-up; stages from a capture at each "
               "stage's last checkpoint.\n", reps);
    }
    for (int t = 0; t < 2; t++) {
        ck_executor_free(ex[t]);
    }
    ck_voice_free(v);
    ck_st_close(cap);
    ck_weights_free(w);
    ck_circuit_free(&c);
    if (rc != CK_OK) {
        fprintf(stderr, "prosody_stages: %s\n", err.message);
        return 1;
    }
    return 0;
}
