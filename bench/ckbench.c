/* ckbench.c - throughput of the encoder as the engine runs it (windows of packed, length-sorted
 * batches through the public ck_model_encode_ids; corpus reading and G2P are done before timing),
 * per thread count, for fixed lengths and a real corpus mix, against the oneDNN sgemm peak measured
 * in the same run. Uses only ckbatch.h of ckbatch (plus oneDNN and OpenMP for the peak). */
#include <errno.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_dnnl.h"
#include "bench_report.h"
#include "ckbatch.h"
#include "ckbench_speech.h"

#define MAX_LIST 16
#define MAX_RESULTS 256

typedef struct {
    size_t first_seq, count, tokens;  /* a run of `order` positions: one window */
} bench_window;

typedef struct {
    char name[32];
    int32_t **ids;         /* [n_seqs] each [len[i]] */
    size_t *len;           /* [n_seqs] */
    size_t n_seqs, tokens;
    size_t *order;         /* sequences in run order: windows in input order, longest first inside */
    bench_window *windows;
    size_t n_windows;
    double mflop_per_token;
} workload;

typedef struct {
    int threads[MAX_LIST], n_threads;
    ck_precision precisions[3];
    int n_precisions;
    size_t lengths[MAX_LIST];
    int n_lengths;
    const char *corpus, *json, *markdown;
    const char *compiled;  /* --compiled: a variant on this library after the interpreted one */
    ck_input_format corpus_format;
    int runs;
    size_t tokens, max_batch_tokens;
} options;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Parses "1,2,4" into out[]; returns the count, 0 on error. */
static int parse_list(const char *s, size_t *out)
{
    int n = 0;
    char *end = NULL;
    while (n < MAX_LIST && *s) {
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || v == 0) {
            return 0;
        }
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') {
            return 0;
        }
    }
    return n;
}

/* MFLOP per token of the workload: ck_model_flops_per_token weighted by each sequence's tokens. */
static double mflop_per_token(const ck_model *m, const workload *w)
{
    double flops = 0;
    for (size_t i = 0; i < w->n_seqs; i++) {
        flops += (double)w->len[i] * ck_model_flops_per_token(m, w->len[i]);
    }
    return flops / (double)w->tokens * 1e-6;
}

/* Packs the workload the way the engine does: windows of 4 batches in input order, each sorted
 * longest first (ties in input order), which ck_model_encode_ids then cuts into consecutive
 * batches of at most max_batch_tokens, as the engine's batcher does (scheduler/batcher.c). */
static int plan_windows(workload *w, size_t max_batch_tokens)
{
    size_t window_tokens = 4 * max_batch_tokens;
    w->order = calloc(w->n_seqs, sizeof *w->order);
    w->windows = calloc(w->n_seqs, sizeof *w->windows);
    if (w->order == NULL || w->windows == NULL) {
        return -1;
    }
    size_t start = 0;
    while (start < w->n_seqs) {
        size_t end = start, tokens = 0;
        while (end < w->n_seqs && tokens + w->len[end] <= window_tokens) {
            tokens += w->len[end++];
        }
        for (size_t i = start; i < end; i++) { /* insertion sort: stable, longest first */
            size_t j = i;
            while (j > start && w->len[w->order[j - 1]] < w->len[i]) {
                w->order[j] = w->order[j - 1];
                j--;
            }
            w->order[j] = i;
        }
        w->windows[w->n_windows++] = (bench_window){start, end - start, tokens};
        start = end;
    }
    return 0;
}

/* n sequences of `len` tokens, ids a fixed LCG stream in 1..177 with boundary zeros. */
static int fixed_workload(workload *w, size_t len, size_t tokens)
{
    snprintf(w->name, sizeof w->name, "len%zu", len);
    w->n_seqs = tokens / len > 0 ? tokens / len : 1;
    w->ids = calloc(w->n_seqs, sizeof *w->ids);
    w->len = calloc(w->n_seqs, sizeof *w->len);
    if (w->ids == NULL || w->len == NULL) {
        return -1;
    }
    uint32_t x = 20261129u;
    for (size_t s = 0; s < w->n_seqs; s++) {
        if ((w->ids[s] = calloc(len, sizeof **w->ids)) == NULL) {
            return -1;
        }
        for (size_t t = 1; t + 1 < len; t++) {
            x = x * 1664525u + 1013904223u;
            w->ids[s][t] = (int32_t)(1 + (x >> 8) % 177);
        }
        w->len[s] = len;
        w->tokens += len;
    }
    return 0;
}

/* The lines of a file, split at '\n' in place (text is kept for the lines' lifetime). */
static int read_lines(const char *path, char **text, char ***lines, size_t *n)
{
    FILE *f = fopen(path, "rb");
    long size = -1;
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        if (f != NULL) {
            fclose(f);
        }
        return -1;
    }
    *text = malloc((size_t)size + 1);
    size_t got = *text != NULL ? fread(*text, 1, (size_t)size, f) : 0;
    fclose(f);
    if (*text == NULL || got != (size_t)size) {
        return -1;
    }
    (*text)[got] = '\0';
    size_t count = 1;
    for (size_t i = 0; i < got; i++) {
        count += (*text)[i] == '\n';
    }
    if ((*lines = calloc(count, sizeof **lines)) == NULL) {
        return -1;
    }
    *n = 0;
    for (char *p = *text; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        (*lines)[(*n)++] = p;
        if (nl != NULL) {
            *nl = '\0';
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    return 0;
}

/* Every sequence of a corpus, read and phonemized (ck_model_tokenize) before any timing. */
static int corpus_workload(workload *w, const ck_model *m, const char *path, ck_input_format format)
{
    ck_error err = {0};
    char *text = NULL, **lines = NULL;
    size_t n_lines = 0;
    ck_sequence_set set = {0};
    ck_lines_params lp = ck_lines_default_params();
    lp.format = format;
    int rc = read_lines(path, &text, &lines, &n_lines);
    if (rc != 0) {
        fprintf(stderr, "ckbench: %s: cannot read\n", path);
    } else if (ck_model_tokenize(m, (const char *const *)lines, n_lines, &lp, &set, &err) != CK_OK) {
        fprintf(stderr, "ckbench: %s\n", err.message);
        rc = -1;
    }
    snprintf(w->name, sizeof w->name, "corpus");
    w->n_seqs = set.n_sequences;
    w->ids = rc == 0 ? calloc(w->n_seqs, sizeof *w->ids) : NULL;
    w->len = rc == 0 ? calloc(w->n_seqs, sizeof *w->len) : NULL;
    rc = rc == 0 && w->ids != NULL && w->len != NULL ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < w->n_seqs; i++) {
        w->len[i] = set.offsets[i + 1] - set.offsets[i];
        w->tokens += w->len[i];
        if ((w->ids[i] = malloc(w->len[i] * sizeof **w->ids)) == NULL) {
            rc = -1;
            break;
        }
        memcpy(w->ids[i], set.ids + set.offsets[i], w->len[i] * sizeof **w->ids);
    }
    ck_sequence_set_free(&set);
    free(lines);
    free(text);
    return rc == 0 && w->n_seqs > 0 ? 0 : -1;
}

static void workload_free(workload *w)
{
    for (size_t i = 0; w->ids != NULL && i < w->n_seqs; i++) {
        free(w->ids[i]);
    }
    free(w->ids);
    free(w->len);
    free(w->order);
    free(w->windows);
}

/* Packs window b of the workload into ids/offsets. */
static void pack_window(const workload *w, size_t b, int32_t *ids, size_t *offsets)
{
    const bench_window *win = &w->windows[b];
    offsets[0] = 0;
    for (size_t j = 0; j < win->count; j++) {
        size_t s = w->order[win->first_seq + j];
        memcpy(ids + offsets[j], w->ids[s], w->len[s] * sizeof *ids);
        offsets[j + 1] = offsets[j] + w->len[s];
    }
}

/* Encodes the packed window b on m; its wall seconds, or -1 on error. */
static double time_window(ck_model *m, const workload *w, size_t b, const int32_t *ids,
                          const size_t *offsets, float *out, size_t out_rows)
{
    ck_error err = {0};
    double t0 = now();
    if (ck_model_encode_ids(m, ids, offsets, w->windows[b].count, CK_LAYER_FEATURES, out, out_rows,
                            &err) != CK_OK) {
        fprintf(stderr, "ckbench: %s\n", err.message);
        return -1;
    }
    return now() - t0;
}

/* One timed pass over every window of the workload; returns tokens/s, or -1 on error. */
static double time_pass(ck_model *m, const workload *w, int32_t *ids, size_t *offsets, float *out,
                        size_t out_rows)
{
    double seconds = 0;
    for (size_t b = 0; b < w->n_windows; b++) {
        pack_window(w, b, ids, offsets);
        double s = time_window(m, w, b, ids, offsets, out, out_rows);
        if (s < 0) {
            return -1;
        }
        seconds += s;
    }
    return (double)w->tokens / seconds;
}

/* One pass of the workload on two models, window by window: each window runs on both, back to
 * back, which one first alternating by window (and by `flip`), so a machine whose speed drifts
 * over seconds (these VMs do) moves both alike and their ratio sees the same machine. Fills each
 * model's tokens/s (the workload's tokens over the seconds its windows took); 0, or -1 on error. */
static int time_pair(ck_model *const m[2], const workload *w, int flip, int32_t *ids,
                     size_t *offsets, float *out, size_t out_rows, double tps[2])
{
    double seconds[2] = {0, 0};
    for (size_t b = 0; b < w->n_windows; b++) {
        pack_window(w, b, ids, offsets);
        for (int q = 0; q < 2; q++) {
            int v = (int)((b + (size_t)flip + (size_t)q) % 2);
            double s = time_window(m[v], w, b, ids, offsets, out, out_rows);
            if (s < 0) {
                return -1;
            }
            seconds[v] += s;
        }
    }
    tps[0] = (double)w->tokens / seconds[0];
    tps[1] = (double)w->tokens / seconds[1];
    return 0;
}

/* oneDNN's own sgemm (dnnl_sgemm, its OpenMP team of `threads`) at M=2048, K=768, N=2048 (the FFN
 * shape), GFLOP/s: the machine's FP32 GEMM peak as oneDNN reaches it, independent of ckbatch. */
static double sgemm_gflops(int threads)
{
    const dnnl_dim_t m = 2048, k = 768, n = 2048;
    float *w = calloc((size_t)(k * n), sizeof *w), *x = calloc((size_t)(m * k), sizeof *x),
          *y = calloc((size_t)(m * n), sizeof *y);
    double gflops = 0;
    for (dnnl_dim_t i = 0; w && x && i < m * k; i++) {
        x[i] = (float)(i % 7) * 0.1f;
    }
    omp_set_num_threads(threads);
    /* Row-major y [M,N] = x [M,K] W^T with W [N,K]: transb = 'T'. */
    if (w && x && y && dnnl_sgemm('N', 'T', m, n, k, 1.0f, x, k, w, k, 0.0f, y, n) == dnnl_success) {
        double t0 = now();
        for (int r = 0; r < 5; r++) {
            dnnl_sgemm('N', 'T', m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
        }
        gflops = 5.0 * 2.0 * (double)(m * k * n) / (now() - t0) * 1e-9;
    }
    free(w);
    free(x);
    free(y);
    return gflops;
}

/* oneDNN's matmul primitive on x of src_t and W of wei_t (its preferred layout), y of dst_t, its
 * OpenMP team of `threads`, at M=2048, K=768, N=2048: G(FL)OP/s (a multiply-add is 2), 0 when
 * oneDNN cannot make it. */
static double matmul_peak(int threads, dnnl_data_type_t src_t, dnnl_data_type_t wei_t,
                          dnnl_data_type_t dst_t)
{
    const dnnl_dim_t m = 2048, k = 768, n = 2048;
    const dnnl_dims_t sd = {m, k}, wd = {k, n}, dd = {m, n};
    dnnl_engine_t eng = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_memory_desc_t src_md, wei_md, dst_md;
    dnnl_matmul_desc_t desc;
    double seconds = -1.0;
    omp_set_num_threads(threads);
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&src_md, 2, sd, src_t, dnnl_ab) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&wei_md, 2, wd, wei_t, dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&dst_md, 2, dd, dst_t, dnnl_ab) == dnnl_success &&
        dnnl_matmul_desc_init(&desc, &src_md, &wei_md, NULL, &dst_md) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &desc, NULL, eng, NULL) == dnnl_success) {
        seconds = ck_bench_dnnl_seconds(eng, pd, 10);
    }
    if (pd != NULL) {
        dnnl_primitive_desc_destroy(pd);
    }
    if (eng != NULL) {
        dnnl_engine_destroy(eng);
    }
    return seconds > 0 ? 2.0 * (double)(m * k * n) / seconds * 1e-9 : 0.0;
}

/* The bf16 one (bf16 x and W, f32 y): the AMX or AVX512-BF16 peak as oneDNN reaches it here. */
static double bf16_matmul_gflops(int threads)
{
    return matmul_peak(threads, dnnl_bf16, dnnl_bf16, dnnl_f32);
}

/* The int8 one (u8 x, s8 W, s32 y: what ckbatch's int8 linears run): the VNNI or AMX-INT8 peak. */
static double int8_matmul_gops(int threads)
{
    return matmul_peak(threads, dnnl_u8, dnnl_s8, dnnl_s32);
}

static const char usage[] =
    "usage: ckbench [--threads 1,2] [--lengths 36,128,512] [--corpus FILE [--corpus-format F]]\n"
    "               [--runs N] [--tokens N] [--max-batch-tokens N] [--precision fp32,bf16,int8]\n"
    "               [--json F] [--markdown F] [--compiled LIB]\n"
    "       ckbench --speech --corpus FILE [...]   (speech: ckbench --speech --help)\n"
    "Times the encoder through ck_model_encode_ids (synthetic demo weights; inputs prepared before\n"
    "timing) for each thread count and workload, and oneDNN's sgemm peak in the same run.\n"
    "Defaults: threads 1..the CPUs this process may run on (affinity), lengths 36,128,512, 5 runs,\n"
    "16384 tokens per fixed-length run, batches of 2048 tokens, corpus format text, precision\n"
    "fp32. With bf16 (int8), oneDNN's bf16 (u8 x s8 int8) matmul peak is measured too and bf16\n"
    "(int8) rows are held to it;\n"
    "every row reports its time per op class. --compiled LIB (from `ckbatch compile` with the\n"
    "same --precision and --max-batch-tokens, one precision) adds a \"+gen\" row per workload run\n"
    "on LIB: in every run each window runs on the interpreter and on LIB back to back (which\n"
    "first alternating window by window), and their tokens/s ratio is paired run by run.\n";

static int parse_options(int argc, char **argv, options *o)
{
    size_t list[MAX_LIST];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int n = 0;
        if (v == NULL) {
            return -1;
        }
        i++;
        if (strcmp(a, "--threads") == 0 && (n = parse_list(v, list)) > 0) {
            for (int j = 0; j < n; j++) {
                o->threads[j] = (int)list[j];
            }
            o->n_threads = n;
        } else if (strcmp(a, "--lengths") == 0 && (n = parse_list(v, o->lengths)) > 0) {
            o->n_lengths = n;
        } else if (strcmp(a, "--corpus") == 0) {
            o->corpus = v;
        } else if (strcmp(a, "--corpus-format") == 0 && strcmp(v, "phonemes") == 0) {
            o->corpus_format = CK_INPUT_PHONEMES;
        } else if (strcmp(a, "--corpus-format") == 0 && strcmp(v, "text") == 0) {
            o->corpus_format = CK_INPUT_TEXT;
        } else if (strcmp(a, "--runs") == 0 && parse_list(v, list) == 1 && list[0] <= CK_BENCH_MAX_RUNS) {
            o->runs = (int)list[0];
        } else if (strcmp(a, "--tokens") == 0 && parse_list(v, list) == 1) {
            o->tokens = list[0];
        } else if (strcmp(a, "--max-batch-tokens") == 0 && parse_list(v, list) == 1 && list[0] >= 512) {
            o->max_batch_tokens = list[0];
        } else if (strcmp(a, "--precision") == 0) {
            o->n_precisions = 0;
            for (const char *p = v; *p && o->n_precisions < 3;) {
                size_t len = strcspn(p, ",");
                if (len == 4 && strncmp(p, "fp32", 4) == 0) {
                    o->precisions[o->n_precisions++] = CK_PRECISION_FP32;
                } else if (len == 4 && strncmp(p, "bf16", 4) == 0) {
                    o->precisions[o->n_precisions++] = CK_PRECISION_BF16;
                } else if (len == 4 && strncmp(p, "int8", 4) == 0) {
                    o->precisions[o->n_precisions++] = CK_PRECISION_INT8;
                } else {
                    return -1;
                }
                p += len + (p[len] == ',');
            }
            if (o->n_precisions == 0) {
                return -1;
            }
        } else if (strcmp(a, "--compiled") == 0) {
            o->compiled = v;
        } else if (strcmp(a, "--json") == 0) {
            o->json = v;
        } else if (strcmp(a, "--markdown") == 0) {
            o->markdown = v;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Runs every workload `runs` times at each thread count; fills results and peaks. The runs are
 * interleaved (run r of every thread count and workload before run r + 1 of any), so a machine that
 * slows down or speeds up during the benchmark moves every thread count alike: the ratios between
 * thread counts, which are the point, do not depend on which one happened to run first. One
 * executor per thread count is made up front (each warmed up once per workload). */
static int measure(const options *o, workload *loads, int n_loads, ck_bench_result *results,
                   size_t *n_results, ck_bench_peak *peaks)
{
    size_t cap = 4 * o->max_batch_tokens; /* one window */
    int32_t *ids = calloc(cap, sizeof *ids);
    size_t *offsets = calloc(cap + 1, sizeof *offsets);
    float *out = calloc(cap * 512, sizeof *out);
    ck_model *ex[4][MAX_LIST] = {{NULL}};
    int rc = ids && offsets && out ? 0 : -1, want_bf16 = 0, want_int8 = 0;
    for (int p = 0; p < o->n_precisions; p++) {
        want_bf16 |= o->precisions[p] == CK_PRECISION_BF16;
        want_int8 |= o->precisions[p] == CK_PRECISION_INT8;
    }
    size_t per_precision = (size_t)o->n_threads * (size_t)n_loads;
    /* variants: each precision interpreted, then (--compiled) the first precision generated */
    int n_variants = o->n_precisions + (o->compiled != NULL);
    /* loaded thread count by thread count, the variants of one thread count next to each other
     * and in alternating order, so neither variant is always the first model in memory (the large
     * buffers sit on 2 MiB pages, kernels/ck_memory.h, so placement should not matter either) */
    for (int t = 0; rc == 0 && t < o->n_threads; t++) {
        for (int q = 0; rc == 0 && q < n_variants; q++) {
            int p = t % 2 == 0 ? q : n_variants - 1 - q;
            ck_error err = {0};
            ck_model_params mp = ck_model_default_params();
            mp.threads = o->threads[t];
            mp.max_batch_tokens = o->max_batch_tokens;
            mp.precision = o->precisions[p < o->n_precisions ? p : 0];
            mp.compiled = p < o->n_precisions ? NULL : o->compiled;
            peaks[t].threads = o->threads[t];
            if (ck_model_load(&ex[p][t], &mp, &err) != CK_OK) {
                fprintf(stderr, "ckbench: %s\n", err.message);
                rc = -1;
            }
            for (int l = 0; rc == 0 && l < n_loads; l++) {
                ck_bench_result *res = &results[(size_t)p * per_precision + (size_t)t * (size_t)n_loads + (size_t)l];
                *res = (ck_bench_result){.threads = o->threads[t], .sequences = loads[l].n_seqs,
                                         .tokens = loads[l].tokens,
                                         .mflop_per_token = loads[l].mflop_per_token};
                memcpy(res->workload, loads[l].name, sizeof res->workload); /* both char[32] */
                snprintf(res->precision, sizeof res->precision, "%s%s", ck_model_precision(ex[p][t]),
                         strcmp(ck_model_backend(ex[p][t]), "generated") == 0 ? "+gen" : "");
                time_pass(ex[p][t], &loads[l], ids, offsets, out, cap); /* warm-up */
            }
        }
    }
    for (int r = 0; rc == 0 && r < o->runs; r++) {
        for (int t = 0; rc == 0 && t < o->n_threads; t++) {
            peaks[t].gflops[peaks[t].runs] = sgemm_gflops(o->threads[t]);
            peaks[t].bf16_gflops[peaks[t].runs] = want_bf16 ? bf16_matmul_gflops(o->threads[t]) : 0.0;
            peaks[t].int8_gops[peaks[t].runs] = want_int8 ? int8_matmul_gops(o->threads[t]) : 0.0;
            peaks[t].runs++;
            if (o->compiled != NULL) {
                /* interpreted (variant 0) and generated (variant 1): window by window */
                for (int l = 0; rc == 0 && l < n_loads; l++) {
                    ck_bench_result *res[2];
                    ck_model *pair[2] = {ex[0][t], ex[1][t]};
                    double tps[2];
                    for (int v = 0; v < 2; v++) {
                        res[v] = &results[(size_t)v * per_precision + (size_t)t * (size_t)n_loads + (size_t)l];
                        ck_model_reset_op_seconds(pair[v]);
                    }
                    rc = time_pair(pair, &loads[l], r % 2, ids, offsets, out, cap, tps);
                    for (int v = 0; rc == 0 && v < 2; v++) {
                        res[v]->tokens_per_s[res[v]->runs++] = tps[v];
                        for (int c = 0; c < CK_OP_CLASS_COUNT; c++) {
                            res[v]->op_seconds[c] += ck_model_op_seconds(pair[v], (ck_op_class)c);
                        }
                    }
                }
                continue;
            }
            /* variants alternate inside each run, so their ratio sees the same machine, and odd
             * runs take them in reverse order, so none always runs right after another */
            for (int q = 0; rc == 0 && q < n_variants; q++) {
                int p = r % 2 == 0 ? q : n_variants - 1 - q;
                for (int l = 0; rc == 0 && l < n_loads; l++) {
                    ck_bench_result *res = &results[(size_t)p * per_precision + (size_t)t * (size_t)n_loads + (size_t)l];
                    ck_model_reset_op_seconds(ex[p][t]);
                    double tps = time_pass(ex[p][t], &loads[l], ids, offsets, out, cap);
                    rc = tps > 0 ? 0 : -1;
                    res->tokens_per_s[res->runs++] = tps;
                    for (int c = 0; c < CK_OP_CLASS_COUNT; c++) {
                        res->op_seconds[c] += ck_model_op_seconds(ex[p][t], (ck_op_class)c);
                    }
                }
            }
        }
        fprintf(stderr, "ckbench: run %d of %d done\n", r + 1, o->runs);
    }
    *n_results = rc == 0 ? (size_t)n_variants * per_precision : 0;
    for (int p = 0; p < n_variants; p++) {
        for (int t = 0; t < o->n_threads; t++) {
            ck_model_free(ex[p][t]);
        }
    }
    free(ids);
    free(offsets);
    free(out);
    return rc;
}

static void write_reports(const options *o, const ck_bench_peak *peaks, const ck_bench_result *res,
                          size_t n_res)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    FILE *f;
    if (o->json != NULL && (f = fopen(o->json, "w")) != NULL) {
        ck_bench_write_json(f, peaks, (size_t)o->n_threads, res, n_res, ru.ru_maxrss);
        fclose(f);
    }
    if (o->markdown != NULL && (f = fopen(o->markdown, "w")) != NULL) {
        ck_bench_write_markdown(f, peaks, (size_t)o->n_threads, res, n_res, ru.ru_maxrss);
        fclose(f);
    }
    ck_bench_write_markdown(stdout, peaks, (size_t)o->n_threads, res, n_res, ru.ru_maxrss);
}

int main(int argc, char **argv)
{
    int cpus = ck_available_cpus();
    options o = {.n_lengths = 3, .lengths = {36, 128, 512}, .corpus_format = CK_INPUT_TEXT,
                 .precisions = {CK_PRECISION_FP32}, .n_precisions = 1,
                 .runs = 5, .tokens = 16384, .max_batch_tokens = 2048};
    for (o.n_threads = 0; o.n_threads < cpus && o.n_threads < MAX_LIST; o.n_threads++) {
        o.threads[o.n_threads] = o.n_threads + 1;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--speech") == 0) {
            return ck_bench_speech_main(argc, argv);
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
    }
    if (parse_options(argc, argv, &o) != 0 || (o.compiled != NULL && o.n_precisions != 1)) {
        fputs(usage, stderr);
        return 2;
    }
    ck_error err = {0};
    ck_model *m = NULL; /* one thread: for the corpus's sequences and the FLOP counts */
    ck_model_params mp = ck_model_default_params();
    mp.threads = 1;
    mp.max_batch_tokens = o.max_batch_tokens;
    if (ck_model_load(&m, &mp, &err) != CK_OK) {
        fprintf(stderr, "ckbench: %s\n", err.message);
        return 1;
    }
    workload loads[MAX_LIST + 1];
    int n_loads = 0, rc = 0;
    memset(loads, 0, sizeof loads);
    for (int i = 0; rc == 0 && i < o.n_lengths; i++) {
        rc = o.lengths[i] < 2 || o.lengths[i] > 512 ? -1 : fixed_workload(&loads[n_loads++], o.lengths[i], o.tokens);
    }
    if (rc == 0 && o.corpus != NULL) {
        rc = corpus_workload(&loads[n_loads++], m, o.corpus, o.corpus_format);
    }
    for (int i = 0; rc == 0 && i < n_loads; i++) {
        loads[i].mflop_per_token = mflop_per_token(m, &loads[i]);
        rc = plan_windows(&loads[i], o.max_batch_tokens);
    }
    static ck_bench_result results[MAX_RESULTS];
    static ck_bench_peak peaks[MAX_LIST];
    size_t n_results = 0;
    if (rc == 0) {
        rc = measure(&o, loads, n_loads, results, &n_results, peaks);
    }
    if (rc == 0) {
        write_reports(&o, peaks, results, n_results);
    }
    for (int i = 0; i < n_loads; i++) {
        workload_free(&loads[i]);
    }
    ck_model_free(m);
    return rc == 0 ? 0 : 1;
}
