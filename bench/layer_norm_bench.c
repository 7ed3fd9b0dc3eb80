/* layer_norm_bench.c - ns per row of the row kernels the encoder runs 25 times per token (residual
 * LayerNorm, the embedding LayerNorm) and of the finiteness check the executor runs on linear
 * outputs, single thread, on caller-sized batches. Benchmark only: never run by ctest.
 * Legend: T rows (tokens), C hidden channels (768), E embedding channels (128). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_check.h"
#include "ck_status.h"
#include "embedding_three_table_layer_norm.h"
#include "residual_layer_norm.h"

enum { C = 768, E = 128, V = 178, P = 512, MAX_REPS = 1000 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Values in [-scale, scale) + offset from a 64-bit LCG (Knuth MMIX constants). */
static void fill(float *v, size_t n, uint64_t seed, double scale, double offset)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)(scale * (2.0 * ((double)(seed >> 40) / 16777216.0) - 1.0) + offset);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    float *x, *residual, *y, *gamma, *beta;              /* [T,C] x3, [C] x2 */
    float *word, *position, *type, *egamma, *ebeta;      /* [V,E] [P,E] [2,E] [E] [E] */
    int32_t *ids, *positions;                            /* [T] */
    size_t rows;
} bench_data;

/* Residual LayerNorm over all rows in calls of at most `block` rows (the executor makes one call per
 * worker; smaller calls keep a call's rows in L2 between the kernel's check and compute passes). */
static int residual_blocks(const bench_data *d, size_t block)
{
    for (size_t first = 0; first < d->rows; first += block) {
        size_t count = d->rows - first < block ? d->rows - first : block, at = first * C, n = count * C;
        int rc = ck_residual_layer_norm_f32_f64acc(d->x + at, n, C, d->residual + at, n, C, d->gamma,
                                                   d->beta, d->y + at, n, C, count, C, 1e-12f);
        if (rc != CK_OK) {
            return rc;
        }
    }
    return CK_OK;
}

/* One timed call of kernel `which` over all rows; returns seconds, or -1 if the kernel failed. */
static double time_once(const bench_data *d, int which, size_t block, volatile int *sink)
{
    double t0 = now();
    int rc = CK_OK;
    if (which == 0) {
        rc = residual_blocks(d, block);
    } else if (which == 1) {
        ck_embedding_tables tb = {d->word, V, d->position, P, d->type, 2, d->egamma, d->ebeta, E};
        rc = ck_embedding_three_table_layer_norm_f32(d->ids, d->positions, NULL, d->rows, &tb, d->y,
                                                     d->rows * E, E, 1e-12f);
    } else {
        *sink += ck_all_finite(d->x, d->rows, C, C);
    }
    double t1 = now();
    return rc == CK_OK ? t1 - t0 : -1.0;
}

int main(int argc, char **argv)
{
    size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 2048;
    int reps = argc > 2 ? atoi(argv[2]) : 200;
    size_t block = argc > 3 ? strtoul(argv[3], NULL, 10) : rows;
    if (rows == 0 || reps < 1 || reps > MAX_REPS || block == 0) {
        fputs("usage: layer_norm_bench [rows (2048)] [reps (200, <= 1000)] [residual rows per call (all)]\n",
              stderr);
        return 2;
    }
    bench_data d = {0};
    d.rows = rows;
    d.x = malloc(rows * C * sizeof(float));
    d.residual = malloc(rows * C * sizeof(float));
    d.y = malloc(rows * C * sizeof(float));
    d.gamma = malloc(C * sizeof(float));
    d.beta = malloc(C * sizeof(float));
    d.word = malloc(V * E * sizeof(float));
    d.position = malloc(P * E * sizeof(float));
    d.type = malloc(2 * E * sizeof(float));
    d.egamma = malloc(E * sizeof(float));
    d.ebeta = malloc(E * sizeof(float));
    d.ids = malloc(rows * sizeof(int32_t));
    d.positions = malloc(rows * sizeof(int32_t));
    if (!d.x || !d.residual || !d.y || !d.gamma || !d.beta || !d.word || !d.position || !d.type ||
        !d.egamma || !d.ebeta || !d.ids || !d.positions) {
        fputs("layer_norm_bench: out of memory\n", stderr);
        return 1;
    }
    fill(d.x, rows * C, 1, 2.0, 0.3);
    fill(d.residual, rows * C, 2, 1.0, -0.1);
    fill(d.gamma, C, 3, 0.1, 1.0);
    fill(d.beta, C, 4, 0.05, 0.0);
    fill(d.word, V * E, 5, 0.05, 0.0);
    fill(d.position, P * E, 6, 0.05, 0.0);
    fill(d.type, 2 * E, 7, 0.05, 0.0);
    fill(d.egamma, E, 8, 0.1, 1.0);
    fill(d.ebeta, E, 9, 0.05, 0.0);
    for (size_t t = 0; t < rows; t++) {
        d.ids[t] = (int32_t)((t * 53 + 7) % V);
        d.positions[t] = (int32_t)(t % P);
    }
    static const char *names[3] = {"residual_layer_norm C=768", "embedding_layer_norm E=128",
                                   "ck_all_finite C=768"};
    static double times[MAX_REPS];
    volatile int sink = 0;
    printf("rows %zu (residual: %zu per call), reps %d, 1 thread; ns per row: median (min)\n", rows, block,
           reps);
    for (int k = 0; k < 3; k++) {
        if (time_once(&d, k, block, &sink) < 0) {  /* warm-up, and the check that the kernel accepts the data */
            fprintf(stderr, "layer_norm_bench: %s failed\n", names[k]);
            return 1;
        }
        for (int i = 0; i < reps; i++) {
            times[i] = time_once(&d, k, block, &sink);
        }
        qsort(times, (size_t)reps, sizeof times[0], cmp_double);
        printf("%-28s %9.1f (%9.1f)\n", names[k], 1e9 * times[reps / 2] / (double)rows,
               1e9 * times[0] / (double)rows);
    }
    double checksum = 0.0;
    for (size_t i = 0; i < rows * E; i++) {
        checksum += d.y[i];
    }
    printf("checksum %.6g, finite %d\n", checksum, sink);
    free(d.x); free(d.residual); free(d.y); free(d.gamma); free(d.beta); free(d.word);
    free(d.position); free(d.type); free(d.egamma); free(d.ebeta); free(d.ids); free(d.positions);
    return 0;
}
