/* ck_test.h - helpers every CUnit suite shares: canaries, close-compare with the worst index,
 * fixture paths, and the suite runner. Header-only; tests only. */
#ifndef CK_TEST_H
#define CK_TEST_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CK_CANARY (-777.0f)

/* Fills n floats with the canary value. */
static inline void ck_test_fill_canary(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = CK_CANARY;
    }
}

/* 1 when all n floats still hold the canary (bit-exact), else 0 and prints the first change. */
static inline int ck_test_canary_intact(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&x[i], &(float){CK_CANARY}, sizeof(float)) != 0) {
            fprintf(stderr, "    canary overwritten at %zu: %g\n", i, (double)x[i]);
            return 0;
        }
    }
    return 1;
}

/* Max |got - want| over n floats; prints the worst index and both values when above tol.
 * Returns 1 when every |got - want| <= tol and all are finite. */
static inline int ck_test_close(const char *what, const float *got, const float *want, size_t n,
                                double tol)
{
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= worst)) {  /* NaN lands here too */
            worst = isnan(d) ? INFINITY : d;
            at = i;
        }
    }
    if (!(worst <= tol)) {
        fprintf(stderr, "    %s: max abs %.3g at %zu (got %.9g, want %.9g), tol %.3g\n", what,
                worst, at, n ? (double)got[at] : 0.0, n ? (double)want[at] : 0.0, tol);
        return 0;
    }
    return 1;
}

/* Path of a file in the source tree: $CK_SOURCE_DIR/rel (ctest sets it), else ./rel. */
static inline const char *ck_test_path(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("CK_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
    return buf;
}

/* A private directory for this test process, made once under /tmp (mkdtemp); "" if that failed. */
static inline const char *ck_test_tmp_dir(void)
{
    static char dir[64];
    if (dir[0] == '\0') {
        strcpy(dir, "/tmp/ck_test_XXXXXX");
        if (mkdtemp(dir) == NULL) {
            dir[0] = '\0';
        }
    }
    return dir;
}

/* Path of `name` in ck_test_tmp_dir(); the buffer is reused by the next call. */
static inline const char *ck_test_tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", ck_test_tmp_dir(), name);
    return buf;
}

typedef struct {
    const char *name;
    void (*fn)(void);
} ck_test_case;

/* Runs one suite of cases; returns the process exit code (0 when every assertion passed). */
static inline int ck_test_run(const char *suite_name, const ck_test_case *cases, size_t n)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        return 2;
    }
    CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
    for (size_t i = 0; suite != NULL && i < n; i++) {
        CU_add_test(suite, cases[i].name, cases[i].fn);
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    return (failed == 0 && run == n) ? 0 : 1;
}

#define CK_TEST_MAIN(suite_name, ...)                                                  \
    int main(void)                                                                     \
    {                                                                                  \
        static const ck_test_case cases[] = {__VA_ARGS__};                             \
        return ck_test_run(suite_name, cases, sizeof cases / sizeof cases[0]);         \
    }

#endif
