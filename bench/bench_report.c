/* bench_report.c - statistics and the JSON / Markdown reports of ckbench. Benchmark only. */
#include "bench_report.h"

#include <stdlib.h>
#include <string.h>

#include "ckbatch.h"

_Static_assert(CK_BENCH_OP_CLASSES == CK_OP_CLASS_COUNT, "one column per op class");

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ck_bench_stats(const double *v, int n, double *median, double *min, double *max)
{
    double s[CK_BENCH_MAX_RUNS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    *median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    *min = s[0];
    *max = s[n - 1];
}

/* The median of the peak a result of `precision` is held to: sgemm for fp32, the bf16 matmul for
 * bf16, the int8 matmul for int8. */
static double peak_median(const ck_bench_peak *peaks, size_t n_peaks, int threads, const char *precision)
{
    for (size_t i = 0; i < n_peaks; i++) {
        if (peaks[i].threads == threads) {
            double med, lo, hi;
            const double *v = strncmp(precision, "bf16", 4) == 0   ? peaks[i].bf16_gflops
                              : strncmp(precision, "int8", 4) == 0 ? peaks[i].int8_gops
                                                                   : peaks[i].gflops;
            ck_bench_stats(v, peaks[i].runs, &med, &lo, &hi);
            return med;
        }
    }
    return 0.0;
}

/* Median tokens/s of the same workload and precision at one thread, for the scaling ratio. */
static double one_thread_median(const ck_bench_result *results, size_t n, const ck_bench_result *r)
{
    for (size_t i = 0; i < n; i++) {
        if (results[i].threads == 1 && strcmp(results[i].workload, r->workload) == 0 &&
            strcmp(results[i].precision, r->precision) == 0) {
            double med, lo, hi;
            ck_bench_stats(results[i].tokens_per_s, results[i].runs, &med, &lo, &hi);
            return med;
        }
    }
    return 0.0;
}

/* What both reports print for one result. */
typedef struct {
    double median, min, max, gflops, peak_fraction, speedup, seq_per_s;
} row_figures;

static row_figures figures(const ck_bench_peak *peaks, size_t n_peaks,
                           const ck_bench_result *results, size_t n_results, size_t i)
{
    const ck_bench_result *r = &results[i];
    row_figures f;
    ck_bench_stats(r->tokens_per_s, r->runs, &f.median, &f.min, &f.max);
    f.gflops = f.median * r->mflop_per_token * 1e-3;
    double peak = peak_median(peaks, n_peaks, r->threads, r->precision);
    double one = one_thread_median(results, n_results, r);
    f.peak_fraction = peak > 0 ? f.gflops / peak : 0.0;
    f.speedup = one > 0 ? f.median / one : 0.0;
    f.seq_per_s = f.median * (double)r->sequences / (double)r->tokens;
    return f;
}

/* For a "+gen" row: the interpreted row of the same workload, threads and precision, or NULL. */
static const ck_bench_result *interpreted_twin(const ck_bench_result *results, size_t n_results,
                                               const ck_bench_result *r)
{
    const char *gen = strstr(r->precision, "+gen");
    for (size_t i = 0; gen != NULL && i < n_results; i++) {
        const ck_bench_result *o = &results[i];
        if (o->threads == r->threads && strcmp(o->workload, r->workload) == 0 &&
            strlen(o->precision) == (size_t)(gen - r->precision) &&
            strncmp(o->precision, r->precision, strlen(o->precision)) == 0 && o->runs == r->runs) {
            return o;
        }
    }
    return NULL;
}

/* Generated over interpreted tokens/s, run by run (the two ran next to each other in each run),
 * median, min and max; 0 when r has no interpreted twin. */
static void paired_ratio(const ck_bench_result *results, size_t n_results,
                         const ck_bench_result *r, double *median, double *min, double *max)
{
    const ck_bench_result *o = interpreted_twin(results, n_results, r);
    double v[CK_BENCH_MAX_RUNS];
    *median = *min = *max = 0.0;
    for (int k = 0; o != NULL && k < r->runs; k++) {
        v[k] = o->tokens_per_s[k] > 0 ? r->tokens_per_s[k] / o->tokens_per_s[k] : 0.0;
    }
    if (o != NULL && r->runs > 0) {
        ck_bench_stats(v, r->runs, median, min, max);
    }
}

static void cpu_model(char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    snprintf(out, cap, "unknown");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(out, cap, "%s", colon + 2);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
}

void ck_bench_write_json(FILE *f, const ck_bench_peak *peaks, size_t n_peaks,
                         const ck_bench_result *results, size_t n_results, long peak_rss_kb)
{
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    fprintf(f, "{\n  \"cpu\": \"%s\",\n  \"kernels_isa\": \"%s\",\n  \"peak_rss_kb\": %ld,\n  \"sgemm_peak\": [", cpu,
            ck_kernels_isa(), peak_rss_kb);
    for (size_t i = 0; i < n_peaks; i++) {
        double med, lo, hi;
        ck_bench_stats(peaks[i].gflops, peaks[i].runs, &med, &lo, &hi);
        double bmed, blo, bhi, imed, ilo, ihi;
        ck_bench_stats(peaks[i].bf16_gflops, peaks[i].runs, &bmed, &blo, &bhi);
        ck_bench_stats(peaks[i].int8_gops, peaks[i].runs, &imed, &ilo, &ihi);
        fprintf(f, "%s\n    {\"threads\": %d, \"gflops_median\": %.1f, \"min\": %.1f, \"max\": %.1f, "
                "\"bf16_matmul_gflops_median\": %.1f", i ? "," : "", peaks[i].threads, med, lo, hi, bmed);
        if (imed > 0) {
            fprintf(f, ", \"int8_matmul_gops_median\": %.1f, \"int8_min\": %.1f, \"int8_max\": %.1f",
                    imed, ilo, ihi);
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"results\": [");
    for (size_t i = 0; i < n_results; i++) {
        const ck_bench_result *r = &results[i];
        row_figures x = figures(peaks, n_peaks, results, n_results, i);
        fprintf(f, "%s\n    {\"workload\": \"%s\", \"precision\": \"%s\", \"threads\": %d, "
                "\"sequences\": %zu, "
                "\"tokens\": %zu, \"runs\": %d, \"tokens_per_s_median\": %.1f, \"min\": %.1f, "
                "\"max\": %.1f, \"sequences_per_s_median\": %.2f, \"mflop_per_token\": %.2f, "
                "\"gflops\": %.1f, \"fraction_of_peak\": %.3f, \"speedup_vs_1_thread\": %.3f, ",
                i ? "," : "", r->workload, r->precision, r->threads, r->sequences, r->tokens, r->runs,
                x.median, x.min, x.max, x.seq_per_s, r->mflop_per_token, x.gflops, x.peak_fraction,
                x.speedup);
        if (interpreted_twin(results, n_results, r) != NULL) {
            double med, lo, hi;
            paired_ratio(results, n_results, r, &med, &lo, &hi);
            fprintf(f, "\"vs_interpreted_paired\": {\"median\": %.3f, \"min\": %.3f, "
                    "\"max\": %.3f}, ", med, lo, hi);
        }
        fprintf(f, "\"op_share\": {");
        double total = 0;
        for (int c = 0; c < CK_BENCH_OP_CLASSES; c++) {
            total += r->op_seconds[c];
        }
        for (int c = 0; c < CK_BENCH_OP_CLASSES; c++) {
            fprintf(f, "%s\"%s\": %.4f", c ? ", " : "", ck_op_class_name((ck_op_class)c),
                    total > 0 ? r->op_seconds[c] / total : 0.0);
        }
        fprintf(f, "}}");
    }
    fprintf(f, "\n  ]\n}\n");
}

void ck_bench_write_markdown(FILE *f, const ck_bench_peak *peaks, size_t n_peaks,
                             const ck_bench_result *results, size_t n_results, long peak_rss_kb)
{
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    fprintf(f, "CPU: %s; kernels: %s (CK_MAX_CPU_ISA); peak RSS %.1f MiB\n\n", cpu, ck_kernels_isa(),
            (double)peak_rss_kb / 1024.0);
    int bf16 = 0, int8 = 0; /* those peaks are measured only when such a row is asked for */
    for (size_t i = 0; i < n_peaks; i++) {
        bf16 = bf16 || (peaks[i].runs > 0 && peaks[i].bf16_gflops[0] > 0);
        int8 = int8 || (peaks[i].runs > 0 && peaks[i].int8_gops[0] > 0);
    }
    fprintf(f, "| threads | oneDNN sgemm peak GFLOP/s (median, min-max) |%s%s\n|---|---|%s%s\n",
            bf16 ? " oneDNN bf16 matmul GFLOP/s (median, min-max) |" : "",
            int8 ? " oneDNN u8xs8 int8 matmul GOP/s (median, min-max) |" : "", bf16 ? "---|" : "",
            int8 ? "---|" : "");
    for (size_t i = 0; i < n_peaks; i++) {
        double med, lo, hi, bmed, blo, bhi, imed, ilo, ihi;
        ck_bench_stats(peaks[i].gflops, peaks[i].runs, &med, &lo, &hi);
        ck_bench_stats(peaks[i].bf16_gflops, peaks[i].runs, &bmed, &blo, &bhi);
        ck_bench_stats(peaks[i].int8_gops, peaks[i].runs, &imed, &ilo, &ihi);
        fprintf(f, "| %d | %.1f (%.1f-%.1f) |", peaks[i].threads, med, lo, hi);
        if (bf16) {
            fprintf(f, " %.1f (%.1f-%.1f) |", bmed, blo, bhi);
        }
        if (int8) {
            fprintf(f, " %.1f (%.1f-%.1f) |", imed, ilo, ihi);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nof peak: against the sgemm peak for fp32 rows, the bf16 matmul peak for bf16 rows, the "
               "int8 matmul peak for int8 rows (whose GOP/s count every linear and attention product, "
               "though only q, k, v and FFN-in run int8). "
               "Time per op class: share of the encoder's wall time over the timed runs.\n\n");
    fprintf(f, "| workload | precision | threads | tokens/s median (min-max) | seq/s | GFLOP/s | of peak "
               "| vs 1 thread | linear | attention | layer_norm | embedding | gelu | other |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n_results; i++) {
        const ck_bench_result *r = &results[i];
        row_figures x = figures(peaks, n_peaks, results, n_results, i);
        double total = 0;
        for (int c = 0; c < CK_BENCH_OP_CLASSES; c++) {
            total += r->op_seconds[c];
        }
        total = total > 0 ? total / 100.0 : 1.0;
        fprintf(f, "| %s | %s | %d | %.0f (%.0f-%.0f) | %.1f | %.1f | %.0f%% | %.2fx | %.1f%% | %.1f%% "
                "| %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n",
                r->workload, r->precision, r->threads, x.median, x.min, x.max, x.seq_per_s, x.gflops,
                100.0 * x.peak_fraction, x.speedup, r->op_seconds[CK_OP_CLASS_LINEAR] / total,
                r->op_seconds[CK_OP_CLASS_ATTENTION] / total, r->op_seconds[CK_OP_CLASS_LAYER_NORM] / total,
                r->op_seconds[CK_OP_CLASS_EMBEDDING] / total, r->op_seconds[CK_OP_CLASS_GELU] / total,
                r->op_seconds[CK_OP_CLASS_OTHER] / total);
    }
    int header = 0;
    for (size_t i = 0; i < n_results; i++) {
        const ck_bench_result *r = &results[i];
        if (interpreted_twin(results, n_results, r) == NULL) {
            continue;
        }
        if (!header) {
            fprintf(f, "\nGenerated over interpreted tokens/s, paired run by run (in every run each "
                       "window of the workload ran on both, back to back, which first alternating "
                       "window by window):\n\n"
                       "| workload | precision | threads | ratio median (min-max) |\n|---|---|---|---|\n");
            header = 1;
        }
        double med, lo, hi;
        paired_ratio(results, n_results, r, &med, &lo, &hi);
        fprintf(f, "| %s | %s | %d | %.3f (%.3f-%.3f) |\n", r->workload, r->precision, r->threads,
                med, lo, hi);
    }
}
