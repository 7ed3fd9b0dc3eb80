/* test_json.c - ck_json_size: the exact-integer-in-range check every reader's sizes go through. */
#include <stdint.h>

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

CK_TEST_MAIN("json", {"accepts exact integers in range", test_accepts_exact_integers_in_range},
             {"rejects everything else", test_rejects_everything_else})
