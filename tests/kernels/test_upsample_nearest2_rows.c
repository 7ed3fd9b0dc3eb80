/* test_upsample_nearest2_rows.c - nearest x2 over time vs torch F.interpolate, bit-exact; splits, stride, rejections. */
#include "ck_status.h"
#include "kernel_fixture.h"
#include "upsample_nearest2_rows.h"

enum { R = 7, C = 5, WIDE = C + 3 };

/* A copy: bit-exact against torch, for every split of the rows, into a wide stride (pad keeps the canary). */
static void test_matches_torch_any_split(void)
{
    ck_st_file *f = ck_kfix_open("expand_rows.safetensors");
    CU_ASSERT_FATAL(f != NULL);
    float *x = ck_kfix_f32(f, "x", NULL), *want = ck_kfix_f32(f, "upsampled", NULL);
    CU_ASSERT_FATAL(x != NULL && want != NULL);
    float y[2 * R * WIDE];
    for (size_t cut = 0; cut <= R; cut++) {
        ck_test_fill_canary(y, 2 * R * WIDE);
        CU_ASSERT_EQUAL(ck_upsample_nearest2_rows_f32(x, R * C, C, y, 2 * R * WIDE, WIDE, cut, R, C), CK_OK);
        CU_ASSERT_EQUAL(ck_upsample_nearest2_rows_f32(x, R * C, C, y, 2 * R * WIDE, WIDE, 0, cut, C), CK_OK);
        for (size_t r = 0; r < 2 * R; r++) {
            CU_ASSERT_EQUAL(memcmp(y + r * WIDE, want + r * C, C * sizeof(float)), 0);
            CU_ASSERT_EQUAL(memcmp(y + r * WIDE, x + r / 2 * C, C * sizeof(float)), 0); /* ref: row r / 2 */
            CU_ASSERT_TRUE(ck_test_canary_intact(y + r * WIDE + C, WIDE - C));
        }
    }
    free(x);
    free(want);
    ck_st_close(f);
}

static void test_rejections(void)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, y[12];
#define UP_EXPECT(code, call) CK_KFIX_REJECTS(y, 12, code, call)
    UP_EXPECT(CK_E_SIZE, ck_upsample_nearest2_rows_f32(x, 5, 2, y, 12, 2, 0, 3, 2));
    UP_EXPECT(CK_E_SIZE, ck_upsample_nearest2_rows_f32(x, 6, 2, y, 11, 2, 0, 3, 2));
    UP_EXPECT(CK_E_SIZE, ck_upsample_nearest2_rows_f32(x, 6, 2, y, 12, 1, 0, 3, 2));
    UP_EXPECT(CK_E_SIZE, ck_upsample_nearest2_rows_f32(x, 6, 2, y, 12, 2, 0, 3, 0));
    UP_EXPECT(CK_E_SIZE, ck_upsample_nearest2_rows_f32(x, 6, 2, y, 12, 2, 0, SIZE_MAX, 2));
    UP_EXPECT(CK_E_RANGE, ck_upsample_nearest2_rows_f32(x, 6, 2, y, 12, 2, 2, 1, 2));
    UP_EXPECT(CK_E_ARG, ck_upsample_nearest2_rows_f32(NULL, 6, 2, y, 12, 2, 0, 3, 2));
    UP_EXPECT(CK_E_ARG, ck_upsample_nearest2_rows_f32(y + 2, 6, 2, y, 12, 2, 0, 3, 2));
    UP_EXPECT(CK_OK, ck_upsample_nearest2_rows_f32(NULL, 0, 2, NULL, 0, 2, 1, 1, 2)); /* empty range */
#undef UP_EXPECT
}

CK_TEST_MAIN("upsample_nearest2_rows", {"matches torch bit for bit, any split", test_matches_torch_any_split},
             {"rejections leave y untouched", test_rejections})
