/* kernel_fixture.h - opens a PyTorch-written kernel fixture (tests/fixtures/kernels, tools/make_kernel_fixtures.py)
 * after checking its SHA-256 against the manifest, and copies its float32 tensors out. Tests only. */
#ifndef CK_KERNEL_FIXTURE_H
#define CK_KERNEL_FIXTURE_H

#include <stdint.h>

#include "ck_test.h"
#include "safetensors.h"
#include "sha256.h"

#define CK_KFIX_DIR "tests/fixtures/kernels/"

/* 1 when the manifest lists `file` with exactly the SHA-256 the file has now, else 0 (printed). */
static inline int ck_kfix_hash_ok(const char *file)
{
    static char text[8192];
    char key[256], hex[65], path[4096];
    FILE *m = fopen(ck_test_path(CK_KFIX_DIR "manifest.json"), "rb");
    size_t n = m ? fread(text, 1, sizeof text - 1, m) : 0;
    if (m) {
        fclose(m);
    }
    text[n] = '\0';
    snprintf(key, sizeof key, "\"%s\": \"", file);
    const char *at = strstr(text, key);
    snprintf(path, sizeof path, "%s", ck_test_path(CK_KFIX_DIR));
    strncat(path, file, sizeof path - strlen(path) - 1);
    ck_error err = {0};
    if (at == NULL || ck_sha256_file(path, hex, &err) != 0 || strncmp(at + strlen(key), hex, 64) != 0) {
        fprintf(stderr, "    %s: not in the manifest, unreadable, or its SHA-256 differs\n", file);
        return 0;
    }
    return 1;
}

/* The fixture `file`, hash-checked, or NULL (printed). */
static inline ck_st_file *ck_kfix_open(const char *file)
{
    char path[4096];
    ck_st_file *f = NULL;
    ck_error err = {0};
    if (!ck_kfix_hash_ok(file)) {
        return NULL;
    }
    snprintf(path, sizeof path, "%s", ck_test_path(CK_KFIX_DIR));
    strncat(path, file, sizeof path - strlen(path) - 1);
    if (ck_st_open(&f, path, &err) != 0) {
        fprintf(stderr, "    %s\n", err.message);
        return NULL;
    }
    return f;
}

/* A malloc'd float copy of tensor `name` (the mapping need not be aligned); *n its elements. */
static inline float *ck_kfix_f32(const ck_st_file *f, const char *name, size_t *n)
{
    const ck_st_tensor *t = f ? ck_st_find(f, name) : NULL;
    ck_error err = {0};
    if (t == NULL) {
        fprintf(stderr, "    fixture tensor %s missing\n", name);
        return NULL;
    }
    float *out = malloc((t->elements ? t->elements : 1) * sizeof(float));
    if (out == NULL || ck_st_to_f32(t, out, t->elements, &err) != 0) {
        free(out);
        return NULL;
    }
    if (n) {
        *n = t->elements;
    }
    return out;
}

/* Offsets [S+1] stored as float32 (small integers, exact) into size_t out[cap]; returns S, 0 on error. */
static inline size_t ck_kfix_offsets(const ck_st_file *f, size_t *out, size_t cap)
{
    size_t n = 0;
    float *o = ck_kfix_f32(f, "offsets", &n);
    if (o == NULL || n < 2 || n > cap) {
        free(o);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = (size_t)o[i];
    }
    free(o);
    return n - 1;
}

/* Max |got - want| and max |got - want| / max(|want|, floor) over n floats, for the report. */
static inline void ck_kfix_errors(const float *got, const float *want, size_t n, double floor, double *abs_err,
                                  double *rel_err)
{
    *abs_err = 0.0;
    *rel_err = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        double r = d / fmax(fabs((double)want[i]), floor);
        *abs_err = d > *abs_err || isnan(d) ? d : *abs_err;
        *rel_err = r > *rel_err || isnan(r) ? r : *rel_err;
    }
}

/* One rejected call: y[0 .. n) is canary-filled, `call` must return `code` and leave the canary. */
#define CK_KFIX_REJECTS(y, n, code, call)                                                                             \
    do {                                                                                                              \
        ck_test_fill_canary((y), (n));                                                                                \
        CU_ASSERT_EQUAL((call), (code));                                                                              \
        CU_ASSERT_TRUE(ck_test_canary_intact((y), (n)));                                                              \
    } while (0)

#endif
