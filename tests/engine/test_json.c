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

/* ck_json_not_strict: RFC 8259 spellings and whitespace pass; cJSON's extras are found at their
 * byte. */
static void test_strict_lexing(void)
{
    static const char *const good[] = {"0", "-0", "10", "1.5", "-0.25", "1e5", "1E+05", "2.5e-3",
                                       "[1, 20, 0]", "{\"a\": \"01 -.5\", \"b\\\"01\": 7}",
                                       "true", "null", "", " [1,\t2]\r\n", "\"\\n\""};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CU_ASSERT_EQUAL(ck_json_not_strict(good[i], strlen(good[i])), strlen(good[i]));
    }
    static const struct {
        const char *text;
        size_t at;
    } bad[] = {{"01", 0}, {"[1, 007]", 4}, {"-01", 0}, {"1.", 0}, {"-.5", 0}, {"1.e5", 0},
               {"1e", 0}, {"1e+", 0}, {"[2, 1-2]", 4}, {"-", 0}, {"{\"k\": 00}", 6},
               {"[1,\x01 2]", 3}, {"[1,\f2]", 3}, {"\"a\x1f\"", 2}, {"\"\\\x01\"", 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(ck_json_not_strict(bad[i].text, strlen(bad[i].text)), bad[i].at);
    }
}

/* ck_json_first_non_size: only 0 and digit1-9 *DIGIT, outside strings. */
static void test_first_non_size(void)
{
    static const char ok[] = "{\"a\": [0, 12, 7], \"b\": \"-1.5e3\"}";
    CU_ASSERT_EQUAL(ck_json_first_non_size(ok, sizeof ok - 1), sizeof ok - 1);
    static const struct {
        const char *text;
        size_t at;
    } bad[] = {{"[1, 2.0]", 4}, {"[1e3]", 1}, {"[-0]", 1}, {"[0, -4]", 4}, {"[5E1]", 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(ck_json_first_non_size(bad[i].text, strlen(bad[i].text)), bad[i].at);
    }
}

/* ck_json_parse: one value, nothing after it but whitespace; each refusal names its byte. */
static void test_parse_reasons(void)
{
    static const struct {
        const char *text, *why;
        size_t at;
    } bad[] = {{"[1, 01]", "a number not spelled as JSON allows", 4},
               {"[1,\x0b" "2]", "a control byte that is not JSON whitespace", 3},
               {"{\"a\": 1,}", "JSON syntax error", 8},
               {"{} x", "text after the JSON value", 3},
               {"[1] [2]", "text after the JSON value", 4}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t at = 99;
        const char *why = NULL;
        CU_ASSERT_PTR_NULL(ck_json_parse(bad[i].text, strlen(bad[i].text), &at, &why));
        CU_ASSERT_EQUAL(at, bad[i].at);
        CU_ASSERT_PTR_NOT_NULL_FATAL(why);
        CU_ASSERT_STRING_EQUAL(why, bad[i].why);
    }
    size_t at = 0;
    const char *why = NULL;
    cJSON *ok = ck_json_parse("[1, 10] \n", 9, &at, &why);
    CU_ASSERT_TRUE(cJSON_IsArray(ok) && cJSON_GetArraySize(ok) == 2);
    cJSON_Delete(ok);
    CU_ASSERT_EQUAL(ck_json_line("a\nb\nc", 4), 3);
    CU_ASSERT_EQUAL(ck_json_line("abc", 0), 1);
}

CK_TEST_MAIN("json", {"strict lexing", test_strict_lexing},
             {"parse reasons", test_parse_reasons},
             {"first non-size", test_first_non_size}, {"accepts exact integers in range", test_accepts_exact_integers_in_range},
             {"rejects everything else", test_rejects_everything_else})
