/* test_exp.c - ck_exp_f32 (the exp that gelu_new and attention's softmax share) against exp in double. */
#include "ck_exp.h"
#include "ck_test.h"

/* Dense sweep of the documented domain [-87, 88]: relative error <= 1.5e-7 (1.25 float ulps at
 * worst; measured 8.3e-8). */
static void test_relative_error_over_domain(void)
{
    double worst = 0.0, at = 0.0;
    for (double z = -87.0; z <= 88.0; z += 1.0 / 4096.0) {
        float x = (float)z;
        double want = exp((double)x), err = fabs((double)ck_exp_f32(x) - want) / want;
        if (!(err <= worst)) {
            worst = err;
            at = x;
        }
    }
    if (!(worst <= 1.5e-7)) {
        fprintf(stderr, "    worst relative error %.3g at %.9g\n", worst, at);
    }
    CU_ASSERT_TRUE(worst <= 1.5e-7);
}

static void test_exact_points(void)
{
    CU_ASSERT_EQUAL(ck_exp_f32(0.0f), 1.0f);  /* n = 0, r = 0: the polynomial's constant term */
    CU_ASSERT_TRUE(ck_exp_f32(-87.0f) >= 1.17549435e-38f); /* still a normal float */
    CU_ASSERT_TRUE(isfinite(ck_exp_f32(88.0f)));
}

CK_TEST_MAIN("exp", {"relative error over [-87, 88]", test_relative_error_over_domain},
             {"exact points", test_exact_points})
