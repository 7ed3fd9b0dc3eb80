/* test_json.c - ck_json_size: the exact-integer-in-range check every reader's sizes go through. */
#include <stdint.h>
#include <string.h>

#include "ck_test.h"
#include "json.h"

/* The result of ck_json_size on the JSON text `json` in [min, max]; *out set only on 1. */
static int size_of(const char *json, size_t min, size_t max, size_t *out)
{
    cJSON *item = cJSON_Parse(json);
    int ok = ck_json_size(item, min, max, out);
    cJSON_Delete(item);
    return ok;
}

static void test_accepts_exact_integers_in_range(void)
{
    size_t v = 0;
    CU_ASSERT_TRUE(size_of("0", 0, 10, &v) && v == 0);
    CU_ASSERT_TRUE(size_of("10", 0, 10, &v) && v == 10);
    CU_ASSERT_TRUE(size_of("1e1", 1, 10, &v) && v == 10); /* JSON's exponent form of 10 */
    CU_ASSERT_TRUE(size_of("9007199254740992", 0, SIZE_MAX, &v) && v == 9007199254740992u);
}

static void test_rejects_everything_else(void)
{
    static const char *const bad[] = {"-1", "11", "0.5", "1e300", "\"3\"", "true", "null",
                                      "[1]", "9007199254740994"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t v = 77;
        CU_ASSERT_FALSE(size_of(bad[i], 0, i == 8 ? SIZE_MAX : 10, &v));
        CU_ASSERT_EQUAL(v, 77); /* untouched */
    }
    size_t v = 77;
    CU_ASSERT_FALSE(size_of("0", 1, 10, &v));
    CU_ASSERT_FALSE(ck_json_size(NULL, 0, 10, &v));
    CU_ASSERT_EQUAL(v, 77);
}

/* ck_json_bad_number: RFC 8259 section 6 spellings pass; cJSON's extras are found at their byte. */
static void test_number_spelling(void)
{
    static const char *const good[] = {"0", "-0", "10", "1.5", "-0.25", "1e5", "1E+05", "2.5e-3",
                                       "[1, 20, 0]", "{\"a\": \"01 -.5\", \"b\\\"01\": 7}",
                                       "true", "null", ""};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CU_ASSERT_EQUAL(ck_json_bad_number(good[i], strlen(good[i])), strlen(good[i]));
    }
    static const struct {
        const char *text;
        size_t at;
    } bad[] = {{"01", 0}, {"[1, 007]", 4}, {"-01", 0}, {"1.", 0}, {"-.5", 0}, {"1.e5", 0},
               {"1e", 0}, {"1e+", 0}, {"[2, 1-2]", 4}, {"-", 0}, {"{\"k\": 00}", 6}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(ck_json_bad_number(bad[i].text, strlen(bad[i].text)), bad[i].at);
    }
    const char *end = NULL, *text = "[1, 01]";
    CU_ASSERT_PTR_NULL(ck_json_parse(text, strlen(text), &end));
    CU_ASSERT_PTR_EQUAL(end, text + 4);
    cJSON *ok = ck_json_parse("[1, 10] ", 8, &end);
    CU_ASSERT_TRUE(cJSON_IsArray(ok) && cJSON_GetArraySize(ok) == 2);
    cJSON_Delete(ok);
}

CK_TEST_MAIN("json", {"number spelling", test_number_spelling}, {"accepts exact integers in range", test_accepts_exact_integers_in_range},
             {"rejects everything else", test_rejects_everything_else})
