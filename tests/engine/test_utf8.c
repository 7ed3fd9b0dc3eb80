/* test_utf8.c - strict UTF-8: exact code points, every rejection class with its byte and column. */
#include "ck_test.h"
#include "utf8.h"

/* Decodes all of s; returns the number of code points, or -1 at the first rejection. */
static int decode_all(const char *s, size_t n, uint32_t *out)
{
    size_t pos = 0;
    int k = 0;
    while (pos < n) {
        if (ck_utf8_next(s, n, &pos, &out[k]) != CK_OK) {
            return -1;
        }
        k++;
    }
    return k;
}

static void test_decodes_one_to_four_bytes(void)
{
    const char s[] = "a\xC9\x99\xE2\x80\x94\xF0\x9F\x98\x80";  /* a ə — U+1F600 */
    uint32_t cp[4] = {0};
    CU_ASSERT_EQUAL(decode_all(s, sizeof s - 1, cp), 4);
    CU_ASSERT_EQUAL(cp[0], 0x61);
    CU_ASSERT_EQUAL(cp[1], 0x259);
    CU_ASSERT_EQUAL(cp[2], 0x2014);
    CU_ASSERT_EQUAL(cp[3], 0x1F600);
    uint32_t edge[3] = {0};
    CU_ASSERT_EQUAL(decode_all("\x7F\xDF\xBF\xF4\x8F\xBF\xBF", 7, edge), 3);
    CU_ASSERT_EQUAL(edge[1], 0x7FF);
    CU_ASSERT_EQUAL(edge[2], 0x10FFFF);
}

/* Asserts that s (n bytes) is rejected at the first code point with *pos unchanged. */
static void assert_rejected(const char *s, size_t n)
{
    size_t pos = 0;
    uint32_t cp = 0xDEAD;
    CU_ASSERT_EQUAL(ck_utf8_next(s, n, &pos, &cp), CK_E_INPUT);
    CU_ASSERT_EQUAL(pos, 0);
    CU_ASSERT_EQUAL(cp, 0xDEAD);
}

static void test_rejects_overlongs(void)
{
    assert_rejected("\xC0\x80", 2);
    assert_rejected("\xC1\xBF", 2);
    assert_rejected("\xE0\x80\x80", 3);
    assert_rejected("\xE0\x9F\xBF", 3);
    assert_rejected("\xF0\x80\x80\x80", 4);
    assert_rejected("\xF0\x8F\xBF\xBF", 4);
}

static void test_rejects_surrogates(void)
{
    assert_rejected("\xED\xA0\x80", 3);
    assert_rejected("\xED\xBF\xBF", 3);
}

static void test_rejects_above_10ffff(void)
{
    assert_rejected("\xF4\x90\x80\x80", 4);
    assert_rejected("\xF5\x80\x80\x80", 4);
    assert_rejected("\xFF", 1);
}

static void test_rejects_truncated_and_stray(void)
{
    assert_rejected("\xE2\x82", 2);          /* cut by the end */
    assert_rejected("\xE2\x82\x41", 3);      /* cut by an ASCII byte */
    assert_rejected("\xF0\x9F\x98", 3);
    assert_rejected("\x80", 1);              /* stray continuation */
    size_t pos = 2;
    uint32_t cp = 0;
    CU_ASSERT_EQUAL(ck_utf8_next("ab", 2, &pos, &cp), CK_E_ARG);
}

static void test_validate_reports_byte_and_column(void)
{
    size_t byte = 99, column = 99;
    const char s[] = "h\xC9\x99l\xC0\x80o";  /* h ə l <overlong> o */
    CU_ASSERT_EQUAL(ck_utf8_validate(s, sizeof s - 1, &byte, &column), CK_E_INPUT);
    CU_ASSERT_EQUAL(byte, 4);
    CU_ASSERT_EQUAL(column, 4);
    CU_ASSERT_EQUAL(ck_utf8_validate("h\xC9\x99l", 4, &byte, &column), CK_OK);
    CU_ASSERT_EQUAL(ck_utf8_validate(NULL, 0, NULL, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_utf8_validate(NULL, 1, NULL, NULL), CK_E_ARG);
}

static void test_encode_round_trips_and_rejects_non_scalars(void)
{
    const uint32_t cps[] = {0x0, 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF, 0x1D4A};
    const size_t lens[] = {1, 1, 2, 2, 3, 3, 4, 4, 3};
    for (size_t i = 0; i < sizeof cps / sizeof cps[0]; i++) {
        char buf[4];
        size_t pos = 0;
        uint32_t back = 0xDEAD;
        CU_ASSERT_EQUAL(ck_utf8_encode(cps[i], buf), lens[i]);
        CU_ASSERT_EQUAL(ck_utf8_next(buf, lens[i], &pos, &back), CK_OK);
        CU_ASSERT_EQUAL(back, cps[i]);
        CU_ASSERT_EQUAL(pos, lens[i]);
    }
    char out[4] = {'x', 'x', 'x', 'x'};
    CU_ASSERT_EQUAL(ck_utf8_encode(0xD800, out), 0);
    CU_ASSERT_EQUAL(ck_utf8_encode(0x110000, out), 0);
    CU_ASSERT_EQUAL(out[0], 'x');
}

CK_TEST_MAIN("utf8", {"decodes one to four bytes", test_decodes_one_to_four_bytes},
             {"rejects overlongs", test_rejects_overlongs},
             {"rejects surrogates", test_rejects_surrogates},
             {"rejects above U+10FFFF", test_rejects_above_10ffff},
             {"rejects truncated and stray bytes", test_rejects_truncated_and_stray},
             {"validate reports byte and column", test_validate_reports_byte_and_column},
             {"encode round trips, rejects non-scalars", test_encode_round_trips_and_rejects_non_scalars})
