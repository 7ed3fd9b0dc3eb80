/* test_weights_index.c - name lookups scale to ~100k tensors: a generated safetensors file of 100,000
 * small tensors (names written in a shuffled order, 1,000 weight-norm pairs among them) is written
 * (ck_st_write), opened (ck_st_open), loaded and folded (ck_weights_load), and every name found with
 * its own values; a name two tensors share is refused by the writer, the reader (a patched header)
 * and the weight set (two names equal after dropping "module"). The same for a stored ZIP (a .pth's
 * container) of 60,000 entries. The times are printed, not asserted (they were quadratic: linear
 * duplicate checks and lookups). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ck_test.h"
#include "safetensors.h"
#include "weights.h"
#include "zip.h"

enum { N = 100000, PAIRS = 1000, NAME = 32 };

static char g_names[N][NAME];
static float g_values[N][2];
static size_t g_order[N];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Tensor i's name: the first 2 x PAIRS are weight-norm pairs "grp.wn<k>.weight_g" / "_v" (g [2],
 * v [2] seen as dim 0 = 2 rows of 1), the rest "grp.t<i>"; values i + 0.25 and -(i + 0.5). */
static void make_names(void)
{
    for (size_t i = 0; i < N; i++) {
        if (i < 2 * PAIRS) {
            snprintf(g_names[i], NAME, "grp.wn%06zu.weight_%c", i / 2, i % 2 ? 'v' : 'g');
        } else {
            snprintf(g_names[i], NAME, "grp.t%06zu", i);
        }
        g_values[i][0] = (float)i + 0.25f;
        g_values[i][1] = -((float)i + 0.5f);
        g_order[i] = i;
    }
    uint64_t s = 12345;
    for (size_t i = N - 1; i > 0; i--) { /* Fisher-Yates with an LCG: a fixed shuffle */
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t j = (size_t)(s >> 33) % (i + 1), t = g_order[i];
        g_order[i] = g_order[j];
        g_order[j] = t;
    }
}

static int write_file(const char *path, ck_error *err)
{
    ck_st_entry *e = calloc(N, sizeof *e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    for (size_t k = 0; k < N; k++) {
        size_t i = g_order[k];
        e[k] = (ck_st_entry){g_names[i], CK_DTYPE_F32, 1, {2}, g_values[i], NULL, 0};
    }
    int rc = ck_st_write(path, e, N, NULL, 0, err);
    free(e);
    return rc;
}

static void test_hundred_thousand_tensors(void)
{
    char path[4096];
    ck_error err = {0};
    make_names();
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("many.safetensors"));
    double t0 = now();
    CU_ASSERT_EQUAL_FATAL(write_file(path, &err), CK_OK);
    double t1 = now();
    ck_st_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, path, &err), CK_OK);
    double t2 = now();
    CU_ASSERT_EQUAL(ck_st_count(f), N);
    CU_ASSERT_STRING_EQUAL(ck_st_at(f, 0)->name, g_names[g_order[0]]); /* header order kept */
    size_t found = 0;
    for (size_t i = 0; i < N; i++) {
        const ck_st_tensor *t = ck_st_find(f, g_names[i]);
        found += t != NULL && strcmp(t->name, g_names[i]) == 0 &&
                 memcmp(t->data, g_values[i], sizeof g_values[i]) == 0;
    }
    CU_ASSERT_EQUAL(found, N);
    CU_ASSERT_PTR_NULL(ck_st_find(f, "grp.t"));
    CU_ASSERT_PTR_NULL(ck_st_find(f, "grp.t1000000"));
    CU_ASSERT_PTR_NULL(ck_st_find(f, ""));
    ck_st_close(f);

    double t3 = now();
    ck_weights *w = NULL;
    int rc = ck_weights_load(&w, path, &err);
    double t4 = now();
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), N + PAIRS);
    found = 0;
    for (size_t i = 0; i < N; i++) {
        const ck_tensor *t = ck_weights_find(w, g_names[i]);
        found += t != NULL && !t->derived && memcmp(t->data, g_values[i], sizeof g_values[i]) == 0;
    }
    CU_ASSERT_EQUAL(found, N);
    /* each folded pair: W = g * v / |v| per row of one element, i.e. g * sign(v) */
    size_t folded = 0;
    for (size_t k = 0; k < PAIRS; k++) {
        char name[NAME];
        snprintf(name, sizeof name, "grp.wn%06zu.weight", k);
        const ck_tensor *t = ck_weights_find(w, name);
        const float *g = g_values[2 * k];
        folded += t != NULL && t->derived && t->data[0] == g[0] && t->data[1] == -g[1];
    }
    CU_ASSERT_EQUAL(folded, PAIRS);
    CU_ASSERT_PTR_NULL(ck_weights_find(w, "grp.wn001000.weight"));
    CU_ASSERT_PTR_NULL(ck_weights_find(w, "grp"));
    ck_weights_free(w);
    fprintf(stderr, "\n    %d tensors: write %.3f s, ck_st_open %.3f s, ck_weights_load %.3f s\n", N,
            t1 - t0, t2 - t1, t4 - t3);
    unlink(path);
}

/* The writer refuses a name two of the 100k entries share; so does the reader when the header is
 * patched to repeat one; and the weight set when two names are equal after dropping "module". */
static void test_duplicates_refused(void)
{
    char path[4096];
    ck_error err = {0};
    make_names();
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("dup.safetensors"));
    ck_st_entry *e = calloc(N, sizeof *e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    for (size_t i = 0; i < N; i++) {
        e[i] = (ck_st_entry){g_names[i], CK_DTYPE_F32, 1, {2}, g_values[i], NULL, 0};
    }
    e[N - 7].name = g_names[31337];
    CU_ASSERT_EQUAL(ck_st_write(path, e, N, NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"grp.t031337\": name: duplicate"));
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    free(e);

    CU_ASSERT_EQUAL_FATAL(write_file(path, &err), CK_OK);
    FILE *in = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    fseek(in, 0, SEEK_END);
    size_t bytes = (size_t)ftell(in);
    rewind(in);
    char *buf = malloc(bytes + 1);
    CU_ASSERT_FATAL(buf != NULL && fread(buf, 1, bytes, in) == bytes);
    fclose(in);
    buf[bytes] = '\0'; /* the header is text; the search stops at the first NUL of the data */
    char *at = strstr(buf + 8, "\"grp.t077777\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    memcpy(at, "\"grp.t012345\"", 13);
    ck_st_file *f = NULL;
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_st_open_memory(&f, buf, bytes, "patched", &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NULL(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"grp.t012345\": name: duplicate"));
    free(buf);

    /* "module.grp.t000005" and "grp.t000005" are one name once "module" is dropped */
    e = calloc(N, sizeof *e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    for (size_t i = 0; i < N; i++) {
        e[i] = (ck_st_entry){g_names[i], CK_DTYPE_F32, 1, {2}, g_values[i], NULL, 0};
    }
    char module[NAME + 8];
    snprintf(module, sizeof module, "module.%s", g_names[N / 3]);
    e[N / 2].name = module; /* in place of grp.t050000; the later of the two is the one refused */
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, e, N, NULL, 0, &err), CK_OK);
    free(e);
    ck_weights *w = NULL;
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_weights_load(&w, path, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"module.grp.t033333\": name: duplicate"));
    unlink(path);
}


enum { ZIP_N = 60000 }; /* below 65535: no ZIP64 record needed */

static void put_le(unsigned char *p, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

/* A stored ZIP of ZIP_N entries "arch/data/<i>" (i = 7919 k mod ZIP_N for the k-th entry: a shuffled
 * order), each 4 bytes: i as u32; the entry at position `dup` (if < ZIP_N) takes position 0's name.
 * Returns the bytes (*n), malloc'd. */
static unsigned char *make_zip(size_t *n, size_t dup)
{
    static char names[ZIP_N][24];
    size_t cap = (size_t)ZIP_N * (30 + 46 + 2 * 24 + 4) + 22, at = 0;
    unsigned char *z = calloc(1, cap);
    static uint32_t offsets[ZIP_N];
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    for (size_t k = 0; k < ZIP_N; k++) {
        snprintf(names[k], sizeof names[k], "arch/data/%zu", (k * 7919) % ZIP_N);
    }
    if (dup < ZIP_N) {
        memcpy(names[dup], names[0], sizeof names[0]);
    }
    for (size_t k = 0; k < ZIP_N; k++) {
        size_t len = strlen(names[k]);
        unsigned char data[4];
        put_le(data, (k * 7919) % ZIP_N, 4);
        offsets[k] = (uint32_t)at;
        put_le(z + at, 0x04034b50, 4);
        put_le(z + at + 4, 20, 2);
        put_le(z + at + 14, ck_zip_crc32(data, 4), 4);
        put_le(z + at + 18, 4, 4);
        put_le(z + at + 22, 4, 4);
        put_le(z + at + 26, len, 2);
        memcpy(z + at + 30, names[k], len);
        memcpy(z + at + 30 + len, data, 4);
        at += 30 + len + 4;
    }
    size_t cd = at;
    for (size_t k = 0; k < ZIP_N; k++) {
        size_t len = strlen(names[k]);
        unsigned char data[4];
        put_le(data, (k * 7919) % ZIP_N, 4);
        put_le(z + at, 0x02014b50, 4);
        put_le(z + at + 4, 20, 2);
        put_le(z + at + 6, 20, 2);
        put_le(z + at + 16, ck_zip_crc32(data, 4), 4);
        put_le(z + at + 20, 4, 4);
        put_le(z + at + 24, 4, 4);
        put_le(z + at + 28, len, 2);
        put_le(z + at + 42, offsets[k], 4);
        memcpy(z + at + 46, names[k], len);
        at += 46 + len;
    }
    put_le(z + at, 0x06054b50, 4);
    put_le(z + at + 8, ZIP_N, 2);
    put_le(z + at + 10, ZIP_N, 2);
    put_le(z + at + 12, at - cd, 4);
    put_le(z + at + 16, cd, 4);
    *n = at + 22;
    return z;
}

static void test_zip_many_entries(void)
{
    size_t n = 0;
    unsigned char *bytes = make_zip(&n, ZIP_N);
    ck_zip *z = NULL;
    ck_error err = {0};
    double t0 = now();
    int rc = ck_zip_open_memory(&z, bytes, n, "many.zip", &err);
    double t1 = now();
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    CU_ASSERT_EQUAL(ck_zip_count(z), ZIP_N);
    size_t found = 0;
    for (size_t i = 0; i < ZIP_N; i++) {
        char name[24];
        snprintf(name, sizeof name, "arch/data/%zu", i);
        const ck_zip_entry *e = ck_zip_find(z, name);
        found += e != NULL && e->size == 4 && e->data[0] == (unsigned char)(i & 0xff) &&
                 e->data[1] == (unsigned char)(i >> 8 & 0xff) && e->data[2] == (unsigned char)(i >> 16);
    }
    CU_ASSERT_EQUAL(found, ZIP_N);
    CU_ASSERT_PTR_NULL(ck_zip_find(z, "arch/data/60000"));
    CU_ASSERT_PTR_NULL(ck_zip_find(z, "arch/data/"));
    ck_zip_close(z);
    free(bytes);
    fprintf(stderr, "\n    %d ZIP entries: ck_zip_open_memory %.3f s\n", ZIP_N, t1 - t0);

    bytes = make_zip(&n, 41234);
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_zip_open_memory(&z, bytes, n, "dup.zip", &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NULL(z);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "entry \"arch/data/0\": duplicate name"));
    free(bytes);
}

CK_TEST_MAIN("weights_index",
             {"100k tensors: written, opened, loaded, every name found", test_hundred_thousand_tensors},
             {"duplicate names refused", test_duplicates_refused},
             {"ZIP: 60k entries found, a duplicate refused", test_zip_many_entries})
