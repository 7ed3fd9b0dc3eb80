/* overhead.c - the C side of python/bench/overhead.py: median seconds per ck_model_encode_lines
 * call for the same lines the Python side encodes, through ckbatch.h only. Prints one number.
 *   overhead THREADS CALLS CIRCUIT LINE...   (CIRCUIT a JSON path or "-" for the embedded one;
 *                                             each LINE one phoneme string) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ckbatch.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: overhead THREADS CALLS CIRCUIT LINE...\n");
        return 2;
    }
    int calls = atoi(argv[2]);
    ck_model_params p = ck_model_default_params();
    p.threads = atoi(argv[1]);
    p.circuit = strcmp(argv[3], "-") != 0 ? argv[3] : NULL;
    ck_model *m = NULL;
    ck_error err = {0};
    double *t = calloc((size_t)calls, sizeof *t);
    if (t == NULL || calls < 1 || ck_model_load(&m, &p, &err) != CK_OK) {
        fprintf(stderr, "overhead: %s\n", err.message);
        return 1;
    }
    const char *const *lines = (const char *const *)argv + 4;
    size_t n = (size_t)(argc - 4);
    for (int i = -calls / 10 - 1; i < calls; i++) { /* the first tenth warms up */
        ck_sequence_set s;
        double t0 = now();
        if (ck_model_encode_lines(m, lines, n, NULL, CK_LAYER_FEATURES, &s, &err) != CK_OK) {
            fprintf(stderr, "overhead: %s\n", err.message);
            return 1;
        }
        ck_sequence_set_free(&s);
        if (i >= 0) {
            t[i] = now() - t0;
        }
    }
    qsort(t, (size_t)calls, sizeof *t, cmp);
    printf("%.9f\n", t[calls / 2]);
    ck_model_free(m);
    free(t);
    return 0;
}
