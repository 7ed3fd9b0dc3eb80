/* bench_report.h - ckbench's measurements and their JSON and Markdown reports. Benchmark only. */
#ifndef CK_BENCH_REPORT_H
#define CK_BENCH_REPORT_H

#include <stddef.h>
#include <stdio.h>

#define CK_BENCH_OP_CLASSES 8 /* CK_OP_CLASS_COUNT of ckbatch.h */

#define CK_BENCH_MAX_RUNS 64

/* One workload at one thread count: runs of tokens/s, and what a token costs. */
typedef struct {
    char workload[32];          /* "len36", "len128", "len512", "corpus" */
    char precision[16];         /* "fp32", "bf16" or "int8", "+gen" when a generated library ran */
    int threads;
    size_t sequences, tokens;   /* per run */
    double mflop_per_token;     /* linears + attention, from the circuit and the lengths */
    double tokens_per_s[CK_BENCH_MAX_RUNS];
    int runs;
    double op_seconds[CK_BENCH_OP_CLASSES]; /* summed over the timed runs (ck_model_op_seconds) */
} ck_bench_result;

typedef struct {
    int threads;
    double gflops[CK_BENCH_MAX_RUNS];      /* oneDNN sgemm 2048x768x2048 */
    double bf16_gflops[CK_BENCH_MAX_RUNS]; /* oneDNN bf16 matmul 2048x768x2048 (AMX here), 0 if
                                              bf16 was not measured */
    double int8_gops[CK_BENCH_MAX_RUNS];   /* oneDNN u8 x s8 -> s32 matmul 2048x768x2048 (VNNI or
                                              AMX-INT8), 0 if int8 was not measured */
    int runs;
} ck_bench_peak;

/* Median, min and max of n values (n >= 1). */
void ck_bench_stats(const double *v, int n, double *median, double *min, double *max);

/* Writes the report as JSON (machine, peaks, results, ratios) and as a Markdown table. */
void ck_bench_write_json(FILE *f, const ck_bench_peak *peaks, size_t n_peaks,
                         const ck_bench_result *results, size_t n_results, long peak_rss_kb);
void ck_bench_write_markdown(FILE *f, const ck_bench_peak *peaks, size_t n_peaks,
                             const ck_bench_result *results, size_t n_results, long peak_rss_kb);

#endif
