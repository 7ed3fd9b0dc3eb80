/* test_reflect_pad_left1.c - ReflectionPad1d((1, 0)) per sequence vs torch (bit-exact copy); splits; rejections. */
#include "ck_status.h"
#include "kernel_fixture.h"
#include "reflect_pad_left1.h"

enum { S = 3, R = 10, C = 4, WIDE = 6 }; /* lengths 2, 5, 3 */

static void test_matches_torch(void)
{
    ck_st_file *f = ck_kfix_open("reflect_pad_left1.safetensors");
    CU_ASSERT_FATAL(f != NULL);
    size_t offsets[S + 1], ny = 0;
    CU_ASSERT_FATAL(ck_kfix_offsets(f, offsets, S + 1) == S && offsets[S] == R);
    float *x = ck_kfix_f32(f, "x", NULL), *want = ck_kfix_f32(f, "y", &ny);
    CU_ASSERT_FATAL(x && want && ny == (R + S) * C);
    float y[(R + S) * C], part[(R + S) * WIDE];
    CU_ASSERT_EQUAL(ck_reflect_pad_left1_f32(x, R * C, C, y, (R + S) * C, C, offsets, S, 0, S, C), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
    for (size_t cut = 0; cut <= S; cut++) {
        ck_test_fill_canary(part, (R + S) * WIDE);
        CU_ASSERT_EQUAL(ck_reflect_pad_left1_f32(x, R * C, C, part, (R + S) * WIDE, WIDE, offsets, S, cut, S, C), CK_OK);
        CU_ASSERT_EQUAL(ck_reflect_pad_left1_f32(x, R * C, C, part, (R + S) * WIDE, WIDE, offsets, S, 0, cut, C), CK_OK);
        for (size_t r = 0; r < R + S; r++) {
            CU_ASSERT_EQUAL(memcmp(part + r * WIDE, want + r * C, C * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(part + r * WIDE + C, WIDE - C));
        }
    }
    free(x);
    free(want);
    ck_st_close(f);
}

static void test_rejections(void)
{
    size_t off[3] = {0, 2, 5}, one[3] = {0, 1, 3};
    float x[5 * 2] = {0}, y[7 * 2];
#define RP_EXPECT(code, call) CK_KFIX_REJECTS(y, 14, code, call)
    RP_EXPECT(CK_E_SIZE, ck_reflect_pad_left1_f32(x, 10, 2, y, 14, 2, one, 2, 0, 2, 2)); /* a 1-frame sequence */
    RP_EXPECT(CK_E_SIZE, ck_reflect_pad_left1_f32(x, 10, 2, y, 13, 2, off, 2, 0, 2, 2));
    RP_EXPECT(CK_E_SIZE, ck_reflect_pad_left1_f32(x, 9, 2, y, 14, 2, off, 2, 0, 2, 2));
    RP_EXPECT(CK_E_SIZE, ck_reflect_pad_left1_f32(x, 10, 2, y, 14, 1, off, 2, 0, 2, 2));
    RP_EXPECT(CK_E_SIZE, ck_reflect_pad_left1_f32(x, 10, 2, y, 14, 2, off, 2, 0, 2, 0));
    RP_EXPECT(CK_E_RANGE, ck_reflect_pad_left1_f32(x, 10, 2, y, 14, 2, off, 2, 0, 3, 2));
    RP_EXPECT(CK_E_ARG, ck_reflect_pad_left1_f32(NULL, 10, 2, y, 14, 2, off, 2, 0, 2, 2));
    RP_EXPECT(CK_E_ARG, ck_reflect_pad_left1_f32(y + 2, 10, 2, y, 14, 2, off, 2, 0, 2, 2));
    RP_EXPECT(CK_E_ARG, ck_reflect_pad_left1_f32(x, 10, 2, y, 14, 2, NULL, 2, 0, 2, 2));
    /* the 1-frame sequence outside the range is fine */
    ck_test_fill_canary(y, 14);
    CU_ASSERT_EQUAL(ck_reflect_pad_left1_f32(x, 10, 2, y, 14, 2, one, 2, 1, 2, 2), CK_OK);
    CU_ASSERT_TRUE(ck_test_canary_intact(y, 4));
#undef RP_EXPECT
}

CK_TEST_MAIN("reflect_pad_left1", {"matches torch bit for bit, any split", test_matches_torch},
             {"rejections leave y untouched", test_rejections})
