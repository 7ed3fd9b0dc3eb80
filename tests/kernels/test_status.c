/* test_status.c - the status list keeps its names and its order (codes only grow at the end), and the
 * shared checks of ck_check.h. */
#include <float.h>

#include "ck_check.h"
#include "ck_status.h"
#include "ck_test.h"

static void test_names_follow_codes(void)
{
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_OK), "CK_OK");
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_SIZE), "CK_E_SIZE");
    CU_ASSERT_EQUAL(CK_E_SIZE, -2);
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_WEIGHTS), "CK_E_WEIGHTS");
    CU_ASSERT_STRING_EQUAL(ck_status_name(1), "CK_E_UNKNOWN");
    CU_ASSERT_STRING_EQUAL(ck_status_name(-1000), "CK_E_UNKNOWN");
}

static void test_span_rejects_narrow_stride_and_overflow(void)
{
    size_t span = 0;
    CU_ASSERT_EQUAL(ck_span(3, 128, 136, &span), CK_OK);
    CU_ASSERT_EQUAL(span, 2 * 136 + 128);
    CU_ASSERT_EQUAL(ck_span(3, 128, 127, &span), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_span(SIZE_MAX / 2, 4, SIZE_MAX / 4, &span), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_span(0, 4, 4, &span), CK_OK);
    CU_ASSERT_EQUAL(span, 0);
}

static void test_overlap(void)
{
    float a[8];
    CU_ASSERT_TRUE(ck_overlap(a, sizeof a, a + 4, 4 * sizeof(float)));
    CU_ASSERT_FALSE(ck_overlap(a, 4 * sizeof(float), a + 4, 4 * sizeof(float)));
    CU_ASSERT_FALSE(ck_overlap(a, 0, a, 8));
}

/* Every non-finite kind at every position of a strided [3, 37] view (stride 40) is found; the extreme
 * finite values are not; NaN in the pad columns is never read. */
static void test_all_finite_finds_every_kind_everywhere(void)
{
    enum { ROWS = 3, COLS = 37, STRIDE = 40 };
    float x[ROWS * STRIDE];
    const float bad[4] = {NAN, -NAN, INFINITY, -INFINITY};
    const float edge[5] = {FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_TRUE_MIN, -0.0f};
    size_t missed = 0, false_alarms = 0;
    for (size_t i = 0; i < ROWS * STRIDE; i++) {
        x[i] = i % STRIDE < COLS ? edge[i % 5] : NAN;
    }
    CU_ASSERT_TRUE(ck_all_finite(x, ROWS, COLS, STRIDE));
    for (size_t r = 0; r < ROWS; r++) {
        for (size_t c = 0; c < COLS; c++) {
            float keep = x[r * STRIDE + c];
            for (int k = 0; k < 4; k++) {
                x[r * STRIDE + c] = bad[k];
                missed += ck_all_finite(x, ROWS, COLS, STRIDE) != 0;
            }
            x[r * STRIDE + c] = keep;
            false_alarms += ck_all_finite(x, ROWS, COLS, STRIDE) != 1;
        }
    }
    CU_ASSERT_EQUAL(missed, 0);
    CU_ASSERT_EQUAL(false_alarms, 0);
    CU_ASSERT_TRUE(ck_all_finite(x, 0, COLS, STRIDE));
}

/* The probe's threshold is the first exponent-all-ones pattern, whatever the sign. */
static void test_finite_probe_threshold(void)
{
    CU_ASSERT_EQUAL(ck_finite_probe(0, FLT_MAX), 0x7f7fffffu);
    CU_ASSERT_EQUAL(ck_finite_probe(0, -INFINITY), CK_F32_INF_BITS);
    CU_ASSERT_TRUE(ck_finite_probe(0, -NAN) > CK_F32_INF_BITS);
    CU_ASSERT_EQUAL(ck_finite_probe(0x7f7fffffu, 1.0f), 0x7f7fffffu);
}

CK_TEST_MAIN("status", {"names follow codes", test_names_follow_codes},
             {"span rejects narrow stride and overflow", test_span_rejects_narrow_stride_and_overflow},
             {"overlap", test_overlap},
             {"all_finite finds every kind everywhere", test_all_finite_finds_every_kind_everywhere},
             {"finite probe threshold", test_finite_probe_threshold})
