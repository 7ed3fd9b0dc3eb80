/* test_expand_rows.c - the alignment gather vs torch (repeat_interleave + one-hot matmul), bit-exact; splits, rejections. */
#include <stdint.h>

#include "ck_status.h"
#include "expand_rows.h"
#include "kernel_fixture.h"

enum { T = 7, C = 5, F = 14, WIDE = C + 2 };

typedef struct {
    ck_st_file *file;
    float *x, *want;
    int32_t frames[T];
} ex_fixture;

static int load(ex_fixture *fx)
{
    size_t n = 0;
    memset(fx, 0, sizeof *fx);
    fx->file = ck_kfix_open("expand_rows.safetensors");
    float *fr = fx->file ? ck_kfix_f32(fx->file, "frames", &n) : NULL;
    for (size_t t = 0; fr != NULL && n == T && t < T; t++) {
        fx->frames[t] = (int32_t)fr[t];
    }
    free(fr);
    fx->x = ck_kfix_f32(fx->file, "x", NULL);
    fx->want = ck_kfix_f32(fx->file, "expanded", NULL);
    return n == T && fx->x && fx->want;
}

static void unload(ex_fixture *fx)
{
    free(fx->x);
    free(fx->want);
    ck_st_close(fx->file);
}

/* ref_expand_rows: frame f's token by walking the counts, then its row. */
static void ref_expand(const float *x, const int32_t *frames, float *y)
{
    size_t f = 0;
    for (size_t t = 0; t < T; t++) {
        for (int32_t k = 0; k < frames[t]; k++, f++) {
            for (size_t c = 0; c < C; c++) {
                y[f * C + c] = x[t * C + c];
            }
        }
    }
}

/* A gather: bit-exact against torch's one-hot matmul (x * 1 + 0 * others is exact) and the reference. */
static void test_matches_torch_and_reference(void)
{
    ex_fixture fx;
    float y[F * C], ref[F * C];
    size_t total = 0;
    CU_ASSERT_FATAL(load(&fx));
    CU_ASSERT_EQUAL(ck_expand_rows_frames(fx.frames, T, 0, T, &total), CK_OK);
    CU_ASSERT_EQUAL(total, F);
    CU_ASSERT_EQUAL(ck_expand_rows_f32(fx.x, T * C, C, fx.frames, T, y, F * C, C, 0, T, 0, C), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, fx.want, sizeof y), 0);
    ref_expand(fx.x, fx.frames, ref);
    CU_ASSERT_EQUAL(memcmp(y, ref, sizeof y), 0);
    unload(&fx);
}

/* Every split of the token range, each part with its frame_begin, into a wide stride: same bits, pad
 * columns keep the canary. */
static void test_split_and_stride(void)
{
    ex_fixture fx;
    float y[F * WIDE];
    CU_ASSERT_FATAL(load(&fx));
    for (size_t cut = 0; cut <= T; cut++) {
        size_t before = 0;
        ck_test_fill_canary(y, F * WIDE);
        CU_ASSERT_EQUAL(ck_expand_rows_frames(fx.frames, T, 0, cut, &before), CK_OK);
        CU_ASSERT_EQUAL(ck_expand_rows_f32(fx.x, T * C, C, fx.frames, T, y, F * WIDE, WIDE, cut, T, before, C), CK_OK);
        CU_ASSERT_EQUAL(ck_expand_rows_f32(fx.x, T * C, C, fx.frames, T, y, F * WIDE, WIDE, 0, cut, 0, C), CK_OK);
        for (size_t f = 0; f < F; f++) {
            CU_ASSERT_EQUAL(memcmp(y + f * WIDE, fx.want + f * C, C * sizeof(float)), 0);
            CU_ASSERT_TRUE(ck_test_canary_intact(y + f * WIDE + C, WIDE - C));
        }
    }
    unload(&fx);
}

/* Zero frames (allowed, though Kokoro never has them) skip the token. */
static void test_zero_frames_skip(void)
{
    const float x[3] = {1.0f, 2.0f, 3.0f};
    const int32_t frames[3] = {2, 0, 1};
    const float want[3] = {1.0f, 1.0f, 3.0f};
    float y[3];
    CU_ASSERT_EQUAL(ck_expand_rows_f32(x, 3, 1, frames, 3, y, 3, 1, 0, 3, 0, 1), CK_OK);
    CU_ASSERT_EQUAL(memcmp(y, want, sizeof y), 0);
}

static void test_rejections(void)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, y[8];
    int32_t frames[3] = {1, 2, 1}, neg[3] = {1, -1, 1};
    size_t total;
#define EX_EXPECT(code, call) CK_KFIX_REJECTS(y, 8, code, call)
    EX_EXPECT(CK_E_SIZE, ck_expand_rows_f32(x, 5, 2, frames, 3, y, 8, 2, 0, 3, 0, 2));  /* x short */
    EX_EXPECT(CK_E_SIZE, ck_expand_rows_f32(x, 6, 2, frames, 3, y, 7, 2, 0, 3, 0, 2));  /* y short */
    EX_EXPECT(CK_E_SIZE, ck_expand_rows_f32(x, 6, 2, frames, 3, y, 8, 2, 0, 3, 1, 2));  /* frame_begin pushes past y */
    EX_EXPECT(CK_E_SIZE, ck_expand_rows_f32(x, 6, 1, frames, 3, y, 8, 2, 0, 3, 0, 2));  /* stride < C */
    EX_EXPECT(CK_E_SIZE, ck_expand_rows_f32(x, 6, 2, frames, 2, y, 8, 2, 0, 3, 0, 2));  /* frames short */
    EX_EXPECT(CK_E_SIZE, ck_expand_rows_f32(x, 6, 2, frames, 3, y, 8, 2, 0, 3, 0, 0));  /* C = 0 */
    EX_EXPECT(CK_E_RANGE, ck_expand_rows_f32(x, 6, 2, neg, 3, y, 8, 2, 0, 3, 0, 2));    /* negative count */
    EX_EXPECT(CK_E_RANGE, ck_expand_rows_f32(x, 6, 2, frames, 3, y, 8, 2, 2, 1, 0, 2)); /* begin > end */
    EX_EXPECT(CK_E_ARG, ck_expand_rows_f32(NULL, 6, 2, frames, 3, y, 8, 2, 0, 3, 0, 2));
    EX_EXPECT(CK_E_ARG, ck_expand_rows_f32(x, 6, 2, NULL, 3, y, 8, 2, 0, 3, 0, 2));
    EX_EXPECT(CK_E_ARG, ck_expand_rows_f32(y + 2, 6, 2, frames, 3, y, 8, 2, 0, 3, 0, 2)); /* y overlaps x */
    CU_ASSERT_EQUAL(ck_expand_rows_frames(frames, 3, 0, 3, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_expand_rows_frames(neg, 3, 0, 3, &total), CK_E_RANGE);
#undef EX_EXPECT
}

CK_TEST_MAIN("expand_rows", {"matches torch and the reference bit for bit", test_matches_torch_and_reference},
             {"any split, wide stride", test_split_and_stride}, {"zero frames skip the token", test_zero_frames_skip},
             {"rejections leave y untouched", test_rejections})
