/* test_sin.c - ck_sin2_f32 (Snake's sin^2) against sin in double: sweeps, edge arguments, same bits in every loop. */
#include "ck_isa.h"
#include "ck_sin.h"
#include "ck_test.h"

/* sin(u)^2 of the same float u, in double (the reference the bound is stated against). */
static double ref_sin2(float u)
{
    double s = sin((double)u);
    return s * s;
}

/* Max |ck_sin2_f32(u) - sin(u)^2| over u = lo, lo + step, ... < hi; *at gets the worst u. */
static double sweep(double lo, double hi, double step, float *at)
{
    double worst = 0.0;
    for (double v = lo; v < hi; v += step) {
        float u = (float)v;
        double err = fabs((double)ck_sin2_f32(u) - ref_sin2(u));
        if (!(err <= worst)) {
            worst = err;
            *at = u;
        }
    }
    return worst;
}

/* Bound: 1.5e-7 absolute (1.25 float ulps at 1; torch's own fl(fl(sin)^2) is about as far from sin^2:
 * two roundings of s and its square). Measured (stderr line): 1.24e-7 at u = -357.35 over |u| <= 512,
 * 1.22e-7 near 1e4 (the odd quadrants, 1 - s^2: s's error times 2 s, plus two roundings). The range the demo's Snake sees is
 * |alpha x| <= 68; the sweep covers 512, and 1e4 is the documented edge of the exact reduction. */
static void test_error_over_range(void)
{
    float at = 0.0f, at_far = 0.0f;
    double worst = sweep(-512.0, 512.0, 1.0 / 8192.0, &at);
    double far = fmax(sweep(1e4 - 64.0, 1e4 + 64.0, 1.0 / 1024.0, &at_far),
                      sweep(-12800.0, -12700.0, 1.0 / 1024.0, &at_far));
    fprintf(stderr, "    max abs error %.3g at u = %.9g over |u| <= 512; %.3g at u = %.9g near 1e4 / -12800\n", worst,
            (double)at, far, (double)at_far);
    CU_ASSERT_TRUE(worst <= 1.5e-7);
    CU_ASSERT_TRUE(far <= 1.5e-7);
    /* past the exact reduction (j * P1, j * P2 round; u * 2/pi rounds so |r| slightly exceeds pi/4):
     * measured 1.04e-6 from 1e5 */
    double beyond = sweep(1e5, 1e5 + 1024.0, 1.0 / 128.0, &at_far);
    fprintf(stderr, "    %.3g at u = %.9g near 1e5\n", beyond, (double)at_far);
    CU_ASSERT_TRUE(beyond <= 2e-6);
}

static void test_edge_arguments(void)
{
    const float pi = 3.14159265358979f, denorm = 1.4e-45f, big_denorm = 1.0e-39f;
    const float edges[] = {0.0f, -0.0f, pi, -pi, pi / 2, -pi / 2, pi / 4, -pi / 4, 3 * pi / 4, 1e4f, -1e4f, 12867.0f,
                           denorm, -denorm, big_denorm, 1.17549435e-38f, 1e-20f, 0.78539816f, 0.7853982f};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        double err = fabs((double)ck_sin2_f32(edges[i]) - ref_sin2(edges[i]));
        if (!(err <= 1.5e-7)) {
            fprintf(stderr, "    u = %.9g: %.9g vs %.9g\n", (double)edges[i], (double)ck_sin2_f32(edges[i]),
                    ref_sin2(edges[i]));
        }
        CU_ASSERT_TRUE(err <= 1.5e-7);
    }
    CU_ASSERT_EQUAL(ck_sin2_f32(0.0f), 0.0f);
    CU_ASSERT_EQUAL(ck_sin2_f32(denorm), 0.0f);              /* s = u, s^2 underflows */
    CU_ASSERT_TRUE(ck_sin2_f32(pi) < 1e-13f);                /* sin(fl(pi))^2 = 7.6e-15 */
    CU_ASSERT_EQUAL(ck_sin2_f32(pi / 2), 1.0f);
    CU_ASSERT_TRUE(isnan(ck_sin2_f32(NAN)));
    CU_ASSERT_TRUE(isnan(ck_sin2_f32(-NAN)));
    CU_ASSERT_TRUE(isnan(ck_sin2_f32(INFINITY)));
    CU_ASSERT_TRUE(isnan(ck_sin2_f32(-INFINITY)));
    /* past the reduction's range: arbitrary but within [0, 1] */
    const float huge[] = {6.7e6f, -1e7f, 3e9f, 1e20f, -3.4e38f, 3.4028235e38f};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        float v = ck_sin2_f32(huge[i]);
        CU_ASSERT_TRUE(v >= 0.0f && v <= 1.0f);
    }
}

enum { N = 1037 }; /* odd: every vector width leaves a remainder */

static void sin2_loop_portable(const float *u, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = ck_sin2_f32(u[i]);
    }
}

CK_TARGET_AVX512 static void sin2_loop_avx512(const float *u, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = ck_sin2_f32(u[i]);
    }
}

/* The same float gives the same bits in the scalar call, the SSE2 loop and the AVX-512 loop, whatever
 * its position (start offsets 0..16 shift elements between vector body and remainder). */
static void test_same_bits_in_every_loop(void)
{
    static float u[N + 16], a[N + 16], b[N + 16];
    for (size_t i = 0; i < N + 16; i++) {
        u[i] = (float)((double)((int)(i * 7919 % 2003) - 1001) * 0.0731 + (double)i * 1e-3);
    }
    u[5] = NAN;
    u[6] = 1e4f;
    u[7] = -0.0f;
    size_t bad = 0;
    for (size_t off = 0; off <= 16; off++) {
        sin2_loop_portable(u + off, a, N);
        if (ck_cpu_isa() == CK_ISA_AVX512) {
            sin2_loop_avx512(u + off, b, N);
        } else {
            memcpy(b, a, sizeof b);
        }
        for (size_t i = 0; i < N; i++) {
            volatile float ui = u[off + i];
            float s = ck_sin2_f32(ui);
            bad += memcmp(&s, &a[i], sizeof s) != 0 || memcmp(&a[i], &b[i], sizeof s) != 0;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

CK_TEST_MAIN("sin", {"max abs error of sin^2 vs double", test_error_over_range},
             {"edge arguments: 0, pi, 1e4, denormals, NaN, Inf, huge", test_edge_arguments},
             {"scalar, SSE2 and AVX-512 loops give the same bits", test_same_bits_in_every_loop})
