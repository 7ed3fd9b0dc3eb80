/* ckbench_speech.c - `ckbench --speech`: ckbatch speak's throughput (seconds of audio per second)
 * and where its time goes (ck_model_op_seconds per op class, with the FLOP/s of the convolutions
 * and LSTMs from ck_model_op_flops), against the convolution peak oneDNN reaches on the
 * generator's own shapes in the same run (its direct convolution primitive, fp32 and, when asked,
 * bf16). Uses only ckbatch.h of ckbatch (plus oneDNN and OpenMP for the peak). */
#include <errno.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_dnnl.h"
#include "ckbatch.h"
#include "ckbench_speech.h"

#define SPEECH_MAX_THREADS 16
#define SPEECH_MAX_RUNS 16

typedef struct {
    int threads[SPEECH_MAX_THREADS], n_threads;
    ck_precision precisions[2];
    int n_precisions;
    const char *corpus, *weights, *voice;
    ck_input_format format;
    size_t lines;
    int runs;
    size_t max_batch_frames;
} speech_options;

/* One (threads, precision) row, summed over its runs. */
typedef struct {
    int threads;
    ck_precision precision;
    double audio_per_second[SPEECH_MAX_RUNS]; /* per run: audio seconds / wall seconds */
    double class_seconds[CK_OP_CLASS_COUNT], class_flops[CK_OP_CLASS_COUNT];
    double conv_peak[SPEECH_MAX_RUNS];        /* oneDNN's, GFLOP/s, per run */
    double wall, audio;
    int runs;
} speech_row;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[SPEECH_MAX_RUNS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n == 0 ? 0.0 : n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* The generator's dilated convolution at its two rates (SYNTHESIS.md §1.8: the resblocks after
 * ups.0, 256 channels, and after ups.1, 128 channels, at 480 and 4,800 rows per second of audio;
 * kernel 7, dilation 3, the middle of their 3/7/11 x 1/3/5), for `seconds` of audio: oneDNN's
 * direct convolution (src [1, C, L], weights its own layout, 'same' padding) with its OpenMP team of
 * `threads`, in `dt` (bf16: src and weights bf16, dst f32). GFLOP/s (a multiply-add is 2) of the
 * faster of the two shapes; 0 when oneDNN cannot make them. */
static double conv_peak(int threads, dnnl_data_type_t dt, double seconds)
{
    static const dnnl_dim_t channels[2] = {256, 128}, rows_per_second[2] = {480, 4800};
    const dnnl_dim_t k = 7, dil = 3;
    const dnnl_dims_t strides = {1}, dilates = {dil - 1}, pad = {dil * (k - 1) / 2};
    double best = 0.0;
    omp_set_num_threads(threads);
    for (int shape = 0; shape < 2; shape++) {
        const dnnl_dim_t c = channels[shape];
        const dnnl_dim_t l = (dnnl_dim_t)(seconds * (double)rows_per_second[shape]) + 1;
        const dnnl_dims_t sd = {1, c, l}, wd = {c, c, k}, dd = {1, c, l};
        dnnl_engine_t eng = NULL;
        dnnl_primitive_desc_t pd = NULL;
        dnnl_memory_desc_t src_md, wei_md, dst_md;
        dnnl_convolution_desc_t desc;
        double s = -1.0;
        if (dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success &&
            dnnl_memory_desc_init_by_tag(&src_md, 3, sd, dt, dnnl_format_tag_any) == dnnl_success &&
            dnnl_memory_desc_init_by_tag(&wei_md, 3, wd, dt, dnnl_format_tag_any) == dnnl_success &&
            dnnl_memory_desc_init_by_tag(&dst_md, 3, dd, dnnl_f32, dnnl_format_tag_any) ==
                dnnl_success &&
            dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference,
                                                       dnnl_convolution_direct, &src_md, &wei_md,
                                                       NULL, &dst_md, strides, dilates, pad,
                                                       pad) == dnnl_success &&
            dnnl_primitive_desc_create(&pd, &desc, NULL, eng, NULL) == dnnl_success) {
            s = ck_bench_dnnl_seconds(eng, pd, 10);
        }
        if (pd != NULL) {
            dnnl_primitive_desc_destroy(pd);
        }
        if (eng != NULL) {
            dnnl_engine_destroy(eng);
        }
        double g = s > 0 ? 2.0 * (double)(c * c * k * l) / s * 1e-9 : 0.0;
        best = g > best ? g : best;
    }
    return best;
}

static const char speech_usage[] =
    "usage: ckbench --speech --corpus FILE [--corpus-format text|phonemes] [--lines N]\n"
    "               [--threads 1,2] [--precision fp32,bf16] [--runs N] [--weights F]\n"
    "               [--voice V] [--max-batch-frames N]\n"
    "Times ckbatch speak's synthesis (ck_model_speak over the first N lines of FILE, default 20;\n"
    "tokenized before timing, model load excluded; voice default af_heart with real weights,\n"
    "the synthetic voice with the embedded demo weights; seed 0, noise scale 1) per thread count\n"
    "and precision, interleaved (run r of every row before run r + 1 of any; default 3 runs), and\n"
    "reports seconds of audio per second of wall time (median of runs), the time per op class,\n"
    "the GFLOP/s of the convolutions and LSTM steps (ck_model_op_flops), and oneDNN's own direct\n"
    "convolution peak on the generator's shapes (256 and 128 channels, k 7, dilation 3, over the\n"
    "median line's audio) measured in the same run, with the convolutions' share of it.\n";

static int parse_speech(int argc, char **argv, speech_options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--speech") == 0) {
            continue;
        }
        if (v == NULL) {
            return -1;
        }
        i++;
        char *end = NULL;
        errno = 0;
        unsigned long n = strtoul(v, &end, 10);
        int number = errno == 0 && end != v && *end == '\0' && n > 0;
        if (strcmp(a, "--threads") == 0) {
            o->n_threads = 0;
            for (const char *p = v; *p != '\0' && o->n_threads < SPEECH_MAX_THREADS;) {
                errno = 0;
                long t = strtol(p, &end, 10);
                if (errno != 0 || end == p || t <= 0 || t > 1024 || (*end != ',' && *end != '\0')) {
                    return -1;
                }
                o->threads[o->n_threads++] = (int)t;
                p = *end == ',' ? end + 1 : end;
            }
        } else if (strcmp(a, "--precision") == 0) {
            o->n_precisions = 0;
            for (const char *p = v; *p != '\0' && o->n_precisions < 2;) {
                size_t len = strcspn(p, ",");
                if (len == 4 && strncmp(p, "fp32", 4) == 0) {
                    o->precisions[o->n_precisions++] = CK_PRECISION_FP32;
                } else if (len == 4 && strncmp(p, "bf16", 4) == 0) {
                    o->precisions[o->n_precisions++] = CK_PRECISION_BF16;
                } else {
                    return -1;
                }
                p += len + (p[len] == ',');
            }
        } else if (strcmp(a, "--corpus") == 0) {
            o->corpus = v;
        } else if (strcmp(a, "--corpus-format") == 0 && strcmp(v, "text") == 0) {
            o->format = CK_INPUT_TEXT;
        } else if (strcmp(a, "--corpus-format") == 0 && strcmp(v, "phonemes") == 0) {
            o->format = CK_INPUT_PHONEMES;
        } else if (strcmp(a, "--lines") == 0 && number) {
            o->lines = n;
        } else if (strcmp(a, "--runs") == 0 && number && n <= SPEECH_MAX_RUNS) {
            o->runs = (int)n;
        } else if (strcmp(a, "--max-batch-frames") == 0 && number) {
            o->max_batch_frames = n;
        } else if (strcmp(a, "--weights") == 0) {
            o->weights = v;
        } else if (strcmp(a, "--voice") == 0) {
            o->voice = v;
        } else {
            return -1;
        }
    }
    return o->corpus != NULL && o->n_threads > 0 && o->n_precisions > 0 ? 0 : -1;
}

/* The first `max` lines of path (at most), each a malloc'd string; their count, or -1. */
static long read_first_lines(const char *path, size_t max, char ***out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL || (*out = calloc(max, sizeof **out)) == NULL) {
        if (f != NULL) {
            fclose(f);
        }
        return -1;
    }
    char buf[8192];
    long n = 0;
    while ((size_t)n < max && fgets(buf, sizeof buf, f) != NULL) {
        buf[strcspn(buf, "\r\n")] = '\0';
        if (((*out)[n] = malloc(strlen(buf) + 1)) == NULL) {
            break;
        }
        strcpy((*out)[n++], buf);
    }
    fclose(f);
    return n;
}

typedef struct {
    double audio;          /* seconds of audio the call produced */
    double *line_seconds;  /* [lines] each line's audio seconds (the first pass fills it) */
} speech_sink;

static int on_line(void *user, const ck_speech_line *line, ck_error *err)
{
    speech_sink *s = user;
    (void)err;
    double seconds = (double)line->samples / CK_SPEECH_SAMPLE_RATE;
    s->audio += seconds;
    if (s->line_seconds != NULL) {
        s->line_seconds[line->line] = seconds;
    }
    return CK_OK;
}

static const char *precision_name(ck_precision p)
{
    return p == CK_PRECISION_BF16 ? "bf16" : "fp32";
}

/* Measures every (threads, precision) row `runs` times, interleaved; prints the report. */
static int measure_speech(const speech_options *o)
{
    int n_rows = o->n_threads * o->n_precisions, rc = 0;
    ck_model **models = calloc((size_t)n_rows, sizeof *models);
    speech_row *rows = calloc((size_t)n_rows, sizeof *rows);
    char **lines = NULL;
    long n_lines = read_first_lines(o->corpus, o->lines, &lines);
    ck_sequence_set set = {0};
    ck_error err = {0};
    double *line_seconds = n_lines > 0 ? calloc((size_t)n_lines, sizeof *line_seconds) : NULL;
    if (models == NULL || rows == NULL || n_lines <= 0 || line_seconds == NULL) {
        fprintf(stderr, "ckbench: %s: cannot read any line\n", o->corpus);
        rc = -1;
    }
    for (int r = 0; rc == 0 && r < n_rows; r++) {
        ck_model_params p = ck_model_default_params();
        p.circuit = ck_speech_circuit_path();
        p.weights = o->weights;
        p.threads = o->threads[r / o->n_precisions];
        p.precision = o->precisions[r % o->n_precisions];
        rows[r].threads = p.threads;
        rows[r].precision = p.precision;
        if (ck_model_load(&models[r], &p, &err) != CK_OK) {
            fprintf(stderr, "ckbench: %s\n", err.message);
            rc = -1;
        }
    }
    ck_lines_params lp = ck_lines_default_params();
    lp.format = o->format;
    if (rc == 0 && ck_model_tokenize(models[0], (const char *const *)lines, (size_t)n_lines, &lp,
                                     &set, &err) != CK_OK) {
        fprintf(stderr, "ckbench: %s\n", err.message);
        rc = -1;
    }
    ck_speak_options so;
    ck_speak_options_init(&so);
    so.voice = o->voice != NULL ? o->voice : o->weights == NULL ? "synthetic" : NULL;
    so.max_batch_frames = o->max_batch_frames;
    /* warm-up on every model (oneDNN primitives, arenas); fills each line's audio seconds */
    for (int r = 0; rc == 0 && r < n_rows; r++) {
        speech_sink sink = {0.0, r == 0 ? line_seconds : NULL};
        if (ck_model_speak(models[r], &set, &so, on_line, &sink, &err) != CK_OK) {
            fprintf(stderr, "ckbench: %s\n", err.message);
            rc = -1;
        }
    }
    double typical = 0.0; /* the median line's audio seconds: the peak's length */
    if (rc == 0) {
        qsort(line_seconds, (size_t)n_lines, sizeof *line_seconds, cmp_double);
        typical = line_seconds[n_lines / 2];
    }
    for (int run = 0; rc == 0 && run < o->runs; run++) {
        for (int r = 0; rc == 0 && r < n_rows; r++) {
            speech_row *row = &rows[r];
            speech_sink sink = {0.0, NULL};
            ck_model_reset_op_seconds(models[r]);
            double t0 = now();
            if (ck_model_speak(models[r], &set, &so, on_line, &sink, &err) != CK_OK) {
                fprintf(stderr, "ckbench: %s\n", err.message);
                rc = -1;
                break;
            }
            double wall = now() - t0;
            row->audio_per_second[row->runs] = sink.audio / wall;
            row->wall += wall;
            row->audio += sink.audio;
            for (int c = 0; c < CK_OP_CLASS_COUNT; c++) {
                row->class_seconds[c] += ck_model_op_seconds(models[r], (ck_op_class)c);
                row->class_flops[c] += ck_model_op_flops(models[r], (ck_op_class)c);
            }
            row->conv_peak[row->runs] =
                conv_peak(row->threads, row->precision == CK_PRECISION_BF16 ? dnnl_bf16 : dnnl_f32,
                          typical);
            row->runs++;
        }
    }
    if (rc == 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("ckbench --speech: %ld lines of %s, %.2f s of audio per pass, %d runs, median line "
               "%.2f s; peak RSS %ld KiB (all models)\n",
               n_lines, o->corpus, rows[0].audio / rows[0].runs, o->runs, typical, ru.ru_maxrss);
        printf("\n| threads | precision | audio s per s (median) | runs | conv GFLOP/s | oneDNN conv "
               "peak GFLOP/s (median) | conv / peak | lstm GFLOP/s | time share: ");
        for (int c = 0; c < CK_OP_CLASS_COUNT; c++) {
            printf("%s%s", c ? " / " : "", ck_op_class_name((ck_op_class)c));
        }
        printf(" |\n|---|---|---|---|---|---|---|---|---|\n");
        for (int r = 0; r < n_rows; r++) {
            const speech_row *row = &rows[r];
            double total = 0.0, peak = median(row->conv_peak, row->runs);
            for (int c = 0; c < CK_OP_CLASS_COUNT; c++) {
                total += row->class_seconds[c];
            }
            double conv = row->class_seconds[CK_OP_CLASS_CONVOLUTION] > 0
                              ? row->class_flops[CK_OP_CLASS_CONVOLUTION] /
                                    row->class_seconds[CK_OP_CLASS_CONVOLUTION] * 1e-9
                              : 0.0;
            double lstm = row->class_seconds[CK_OP_CLASS_LSTM] > 0
                              ? row->class_flops[CK_OP_CLASS_LSTM] /
                                    row->class_seconds[CK_OP_CLASS_LSTM] * 1e-9
                              : 0.0;
            printf("| %d | %s | %.3f (", row->threads, precision_name(row->precision),
                   median(row->audio_per_second, row->runs));
            for (int k = 0; k < row->runs; k++) {
                printf("%s%.3f", k ? ", " : "", row->audio_per_second[k]);
            }
            printf(") | %d | %.1f | %.1f | %.0f%% | %.1f | ", row->runs, conv, peak,
                   peak > 0 ? 100.0 * conv / peak : 0.0, lstm);
            for (int c = 0; c < CK_OP_CLASS_COUNT; c++) {
                printf("%s%.0f%%", c ? " / " : "",
                       total > 0 ? 100.0 * row->class_seconds[c] / total : 0.0);
            }
            printf(" |\n");
        }
        printf("\nconv: every convolution of the circuit (text encoder, decoder, generator; "
               "im2col + oneDNN matmul, and the transposes' matmul + col2im), %.3g GFLOP per pass\n",
               rows[0].class_flops[CK_OP_CLASS_CONVOLUTION] / rows[0].runs * 1e-9);
    }
    ck_sequence_set_free(&set);
    for (int r = 0; models != NULL && r < n_rows; r++) {
        ck_model_free(models[r]);
    }
    for (long i = 0; lines != NULL && i < n_lines; i++) {
        free(lines[i]);
    }
    free(lines);
    free(line_seconds);
    free(models);
    free(rows);
    return rc;
}

int ck_bench_speech_main(int argc, char **argv)
{
    speech_options o = {.n_threads = 2, .threads = {1, 2}, .n_precisions = 1,
                        .precisions = {CK_PRECISION_FP32}, .format = CK_INPUT_TEXT, .lines = 20,
                        .runs = 3};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(speech_usage, stdout);
            return 0;
        }
    }
    if (parse_speech(argc, argv, &o) != 0) {
        fputs(speech_usage, stderr);
        return 2;
    }
    return measure_speech(&o) == 0 ? 0 : 1;
}
