/* test_chunk.c - chunk limits and cut preferences: sentence, clause, space, hard; long prose. */
#include "chunk.h"
#include "ck_test.h"
#include "utf8.h"

/* Splits s with max and renders the chunks as "chunk|chunk|"; returns the status. */
static int split_str(const char *s, size_t max, char *out, size_t cap, size_t *count)
{
    ck_chunk_span *spans = NULL;
    int rc = ck_chunk_split(s, strlen(s), max, &spans, count, NULL);
    out[0] = '\0';
    for (size_t i = 0; rc == CK_OK && i < *count; i++) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%.*s|", (int)spans[i].length, s + spans[i].offset);
    }
    free(spans);
    return rc;
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_exactly_max_is_one_chunk(void)
{
    char *s = repeat('a', 510);
    ck_chunk_span *spans = NULL;
    size_t count = 0;
    CU_ASSERT_EQUAL(ck_chunk_split(s, 510, 510, &spans, &count, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(count, 1);
    CU_ASSERT_EQUAL(spans[0].offset, 0);
    CU_ASSERT_EQUAL(spans[0].length, 510);
    free(spans);
    free(s);
}

static void test_max_plus_one_without_space_is_hard_split(void)
{
    char *s = repeat('a', 511);
    ck_chunk_span *spans = NULL;
    size_t count = 0;
    CU_ASSERT_EQUAL(ck_chunk_split(s, 511, 510, &spans, &count, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(count, 2);
    CU_ASSERT_EQUAL(spans[0].length, 510);
    CU_ASSERT_EQUAL(spans[1].offset, 510);
    CU_ASSERT_EQUAL(spans[1].length, 1);
    free(spans);
    free(s);
}

static void test_only_punctuation(void)
{
    char *s = repeat('.', 600);
    ck_chunk_span *spans = NULL;
    size_t count = 0;
    CU_ASSERT_EQUAL(ck_chunk_split(s, 600, 510, &spans, &count, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(count, 2);
    CU_ASSERT_EQUAL(spans[0].length, 510);
    CU_ASSERT_EQUAL(spans[1].length, 90);
    free(spans);
    free(s);
}

static void test_counts_code_points_not_bytes(void)
{
    char got[256];
    size_t count = 0;
    /* ə is 2 bytes: 4 code points fit in max 4 although they are 8 bytes */
    CU_ASSERT_EQUAL(split_str("\xC9\x99\xC9\x99\xC9\x99\xC9\x99", 4, got, sizeof got, &count), CK_OK);
    CU_ASSERT_EQUAL(count, 1);
    CU_ASSERT_EQUAL(split_str("\xC9\x99\xC9\x99\xC9\x99\xC9\x99\xC9\x99", 4, got, sizeof got, &count),
                    CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "\xC9\x99\xC9\x99\xC9\x99\xC9\x99|\xC9\x99|");
}

static void test_cut_preferences(void)
{
    char got[256];
    size_t count = 0;
    /* sentence mark wins over a later clause mark and space; closing quote stays with it */
    CU_ASSERT_EQUAL(split_str("ab. \"cd!\" ef, gh ij", 14, got, sizeof got, &count), CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "ab. \"cd!\"|ef, gh ij|");
    /* clause mark wins over a later space */
    CU_ASSERT_EQUAL(split_str("ab cd, ef gh ij", 12, got, sizeof got, &count), CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "ab cd,|ef gh ij|");
    CU_ASSERT_EQUAL(split_str("ab cd\xE2\x80\x94" "ef gh ij", 12, got, sizeof got, &count), CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "ab cd\xE2\x80\x94|ef gh ij|");
    /* last space inside the window */
    CU_ASSERT_EQUAL(split_str("ab cd ef gh", 7, got, sizeof got, &count), CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "ab cd|ef gh|");
    /* ellipsis U+2026 is a sentence mark */
    CU_ASSERT_EQUAL(split_str("ab\xE2\x80\xA6 cd, ef", 8, got, sizeof got, &count), CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "ab\xE2\x80\xA6|cd, ef|");
}

static void test_trims_edges_and_skips_blank(void)
{
    char got[256];
    size_t count = 9;
    CU_ASSERT_EQUAL(split_str("  ab  ", 510, got, sizeof got, &count), CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "ab|");
    CU_ASSERT_EQUAL(split_str("    ", 510, got, sizeof got, &count), CK_OK);
    CU_ASSERT_EQUAL(count, 0);
    CU_ASSERT_EQUAL(split_str("", 510, got, sizeof got, &count), CK_OK);
    CU_ASSERT_EQUAL(count, 0);
}

static void test_rejections(void)
{
    ck_chunk_span *spans = NULL;
    size_t count = 0;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_chunk_split("ab", 2, 0, &spans, &count, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "max"));
    CU_ASSERT_EQUAL(ck_chunk_split(NULL, 2, 5, &spans, &count, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_chunk_split("a\xC0\x80", 3, 5, &spans, &count, NULL), CK_E_INPUT);
    CU_ASSERT_PTR_NULL(spans);
    CU_ASSERT_EQUAL(count, 0);
}

/* Long prose: every chunk fits, none has edge spaces, non-final chunks end a sentence, and the
 * chunks cover every non-space byte in order. */
static void test_long_prose(void)
{
    FILE *f = fopen(ck_test_path("tests/fixtures/corpus/frankenstein_long.txt"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *text = calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        text[i] = text[i] == '\n' ? ' ' : text[i];
    }
    ck_chunk_span *spans = NULL;
    size_t count = 0;
    CU_ASSERT_EQUAL_FATAL(ck_chunk_split(text, n, 510, &spans, &count, NULL), CK_OK);
    CU_ASSERT_TRUE(count >= 5);
    size_t nonspace = 0, covered = 0, next = 0;
    for (size_t i = 0; i < n; i++) {
        nonspace += text[i] != ' ';
    }
    for (size_t c = 0; c < count; c++) {
        const char *s = text + spans[c].offset;
        size_t len = spans[c].length;
        CU_ASSERT_TRUE(len > 0 && len <= 510 && s[0] != ' ' && s[len - 1] != ' ');
        CU_ASSERT_TRUE(spans[c].offset >= next);
        CU_ASSERT_TRUE(c + 1 == count || strchr(".!?\"", s[len - 1]) != NULL);
        for (size_t i = 0; i < len; i++) {
            covered += s[i] != ' ';
        }
        next = spans[c].offset + len;
    }
    CU_ASSERT_EQUAL(covered, nonspace);
    free(spans);
    free(text);
}

CK_TEST_MAIN("chunk", {"exactly 510 is one chunk", test_exactly_max_is_one_chunk},
             {"511 without space is a hard split", test_max_plus_one_without_space_is_hard_split},
             {"only punctuation", test_only_punctuation},
             {"counts code points, not bytes", test_counts_code_points_not_bytes},
             {"cut preferences", test_cut_preferences},
             {"trims edges, skips blank", test_trims_edges_and_skips_blank},
             {"rejections", test_rejections}, {"long prose", test_long_prose})
