/* g2p_bench.c - text front end timing: ck_model_tokenize over a whole corpus with each G2P
 * backend (espeak, misaki), the median of R runs after one warm-up run (the misaki warm-up
 * includes the one-time lexicon load, reported separately). Uses include/ckbatch.h only.
 *   g2p_bench CORPUS [RUNS] [LANG] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckbatch.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: g2p_bench CORPUS [RUNS] [LANG]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    const char *lang = argc > 3 ? argv[3] : "en-us";
    runs = runs < 1 ? 1 : runs > 50 ? 50 : runs;
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    char **lines = NULL, *line = NULL;
    size_t n = 0, cap = 0, lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
            line[--len] = '\0';
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            lines = realloc(lines, cap * sizeof *lines);
        }
        lines[n++] = strdup(line);
    }
    free(line);
    fclose(f);
    ck_error err = {0};
    ck_model *m = NULL;
    ck_model_params mp = ck_model_default_params();
    if (ck_model_load(&m, &mp, &err) != CK_OK) {
        fprintf(stderr, "g2p_bench: %s\n", err.message);
        return 1;
    }
    static const char *const backends[] = {"espeak", "misaki"};
    for (int b = 0; b < 2; b++) {
        ck_lines_params p = ck_lines_default_params();
        p.format = CK_INPUT_TEXT;
        p.lang = lang;
        p.g2p = backends[b];
        double t[50], first = 0;
        size_t tokens = 0;
        for (int r = -1; r < runs; r++) {
            ck_sequence_set s;
            double t0 = now_s();
            if (ck_model_tokenize(m, (const char *const *)lines, n, &p, &s, &err) != CK_OK) {
                fprintf(stderr, "g2p_bench: %s: %s\n", backends[b], err.message);
                return 1;
            }
            double dt = now_s() - t0;
            tokens = s.n_tokens;
            ck_sequence_set_free(&s);
            if (r < 0) {
                first = dt;
            } else {
                t[r] = dt;
            }
        }
        qsort(t, (size_t)runs, sizeof t[0], cmp_double);
        double med = t[runs / 2];
        printf("%-7s %s: %zu lines, %zu tokens: median %.3f s of %d runs (%.3f ms/line); first "
               "run %.3f s\n", backends[b], lang, n, tokens, med, runs, 1e3 * med / (double)n,
               first);
    }
    ck_model_free(m);
    for (size_t i = 0; i < n; i++) {
        free(lines[i]);
    }
    free(lines);
    return 0;
}
