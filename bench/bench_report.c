/* bench_report.c - statistics and the JSON / Markdown reports of ckbench. Benchmark only. */
#include "bench_report.h"

#include <stdlib.h>
#include <string.h>

#include "ckbatch.h"

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

static double peak_median(const ck_bench_peak *peaks, size_t n_peaks, int threads)
{
    for (size_t i = 0; i < n_peaks; i++) {
        if (peaks[i].threads == threads) {
            double med, lo, hi;
            ck_bench_stats(peaks[i].gflops, peaks[i].runs, &med, &lo, &hi);
            return med;
        }
    }
    return 0.0;
}

/* Median tokens/s of the same workload at one thread, for the scaling ratio. */
static double one_thread_median(const ck_bench_result *results, size_t n, const char *workload)
{
    for (size_t i = 0; i < n; i++) {
        if (results[i].threads == 1 && strcmp(results[i].workload, workload) == 0) {
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
    double peak = peak_median(peaks, n_peaks, r->threads);
    double one = one_thread_median(results, n_results, r->workload);
    f.peak_fraction = peak > 0 ? f.gflops / peak : 0.0;
    f.speedup = one > 0 ? f.median / one : 0.0;
    f.seq_per_s = f.median * (double)r->sequences / (double)r->tokens;
    return f;
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
        fprintf(f, "%s\n    {\"threads\": %d, \"gflops_median\": %.1f, \"min\": %.1f, \"max\": %.1f}",
                i ? "," : "", peaks[i].threads, med, lo, hi);
    }
    fprintf(f, "\n  ],\n  \"results\": [");
    for (size_t i = 0; i < n_results; i++) {
        const ck_bench_result *r = &results[i];
        row_figures x = figures(peaks, n_peaks, results, n_results, i);
        fprintf(f, "%s\n    {\"workload\": \"%s\", \"threads\": %d, \"sequences\": %zu, "
                "\"tokens\": %zu, \"runs\": %d, \"tokens_per_s_median\": %.1f, \"min\": %.1f, "
                "\"max\": %.1f, \"sequences_per_s_median\": %.2f, \"mflop_per_token\": %.2f, "
                "\"gflops\": %.1f, \"fraction_of_sgemm_peak\": %.3f, \"speedup_vs_1_thread\": %.3f}",
                i ? "," : "", r->workload, r->threads, r->sequences, r->tokens, r->runs, x.median,
                x.min, x.max, x.seq_per_s, r->mflop_per_token, x.gflops, x.peak_fraction, x.speedup);
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
    fprintf(f, "| threads | oneDNN sgemm peak GFLOP/s (median, min-max) |\n|---|---|\n");
    for (size_t i = 0; i < n_peaks; i++) {
        double med, lo, hi;
        ck_bench_stats(peaks[i].gflops, peaks[i].runs, &med, &lo, &hi);
        fprintf(f, "| %d | %.1f (%.1f-%.1f) |\n", peaks[i].threads, med, lo, hi);
    }
    fprintf(f, "\n| workload | threads | tokens/s median (min-max) | seq/s | GFLOP/s | of peak | "
               "vs 1 thread |\n|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n_results; i++) {
        row_figures x = figures(peaks, n_peaks, results, n_results, i);
        fprintf(f, "| %s | %d | %.0f (%.0f-%.0f) | %.1f | %.1f | %.0f%% | %.2fx |\n",
                results[i].workload, results[i].threads, x.median, x.min, x.max, x.seq_per_s,
                x.gflops, 100.0 * x.peak_fraction, x.speedup);
    }
}
