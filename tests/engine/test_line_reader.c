/* test_line_reader.c - line endings, BOM, missing final newline, NUL bytes, the 1 MiB line limit,
 * byte offsets, and lines handed in by the caller. */
#include <limits.h>

#include "ck_test.h"
#include "line_reader.h"

/* A FILE* over a copy of n bytes (tmpfile, so NUL bytes and any size work). */
static FILE *file_of(const char *bytes, size_t n)
{
    FILE *f = tmpfile();
    if (f != NULL) {
        fwrite(bytes, 1, n, f);
        rewind(f);
    }
    return f;
}

/* Reads every line of f, joined as "line_no:text|"; NUL-line errors appear as "line_no:ERR|". */
static void read_all(FILE *f, char *out, size_t cap)
{
    ck_line_reader *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_line_reader_open(&r, f, "t.txt", NULL), CK_OK);
    out[0] = '\0';
    int rc;
    const char *line = NULL;
    size_t len = 0, no = 0;
    while ((rc = ck_line_reader_next(r, &line, &len, &no, NULL)) != 0) {
        size_t used = strlen(out);
        if (rc == 1) {
            CU_ASSERT_EQUAL(strlen(line), len);
            snprintf(out + used, cap - used, "%zu:%s|", no, line);
        } else {
            CU_ASSERT_EQUAL(rc, CK_E_INPUT);
            snprintf(out + used, cap - used, "%zu:ERR|", no);
        }
    }
    ck_line_reader_close(r);
    fclose(f);
}

/* Lines of bytes[start .. start + limit) through ck_line_reader_open_range, joined as read_all
 * joins them; *offset gets the bytes consumed. */
static void read_range(const char *bytes, size_t n, unsigned long long start,
                       unsigned long long limit, size_t first_line, char *out, size_t cap,
                       unsigned long long *offset)
{
    FILE *f = file_of(bytes, n);
    ck_line_reader *r = NULL;
    CU_ASSERT_FATAL(f != NULL && fseek(f, (long)start, SEEK_SET) == 0);
    CU_ASSERT_EQUAL_FATAL(ck_line_reader_open_range(&r, f, "t.txt", start, limit, first_line, NULL),
                          CK_OK);
    out[0] = '\0';
    const char *line = NULL;
    size_t len = 0, no = 0;
    while (ck_line_reader_next(r, &line, &len, &no, NULL) == 1) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%zu:%s|", no, line);
    }
    *offset = ck_line_reader_offset(r);
    ck_line_reader_close(r);
    fclose(f);
}

/* A shard's range: numbered from first_line, stops at its limit (a line start), and strips a BOM
 * only at byte 0 of the file: a range starting at a line that begins with EF BB BF keeps it, as
 * a whole-file read keeps it there. */
static void test_range_numbering_limit_and_bom(void)
{
    const char s[] = "\xEF\xBB\xBF" "a\n\xEF\xBB\xBF" "b\nc\nd";
    char got[256];
    unsigned long long off = 0;
    read_range(s, sizeof s - 1, 0, 5, 1, got, sizeof got, &off);
    CU_ASSERT_STRING_EQUAL(got, "1:a|");
    CU_ASSERT_EQUAL(off, 5);
    read_range(s, sizeof s - 1, 5, 7, 2, got, sizeof got, &off);
    CU_ASSERT_STRING_EQUAL(got, "2:\xEF\xBB\xBF" "b|3:c|");
    CU_ASSERT_EQUAL(off, 7);
    read_range(s, sizeof s - 1, 12, ULLONG_MAX, 4, got, sizeof got, &off);
    CU_ASSERT_STRING_EQUAL(got, "4:d|");
    read_range(s, sizeof s - 1, 12, 0, 4, got, sizeof got, &off); /* an empty shard */
    CU_ASSERT_STRING_EQUAL(got, "");
    ck_line_reader *r = NULL;
    CU_ASSERT_EQUAL(ck_line_reader_open_range(&r, stdin, "t", 0, 1, 0, NULL), CK_E_ARG);
}

static void test_plain_lines(void)
{
    char got[256];
    read_all(file_of("ab\n\ncd\n", 7), got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "1:ab|2:|3:cd|");
}

static void test_crlf_bom_and_no_final_newline(void)
{
    const char s[] = "\xEF\xBB\xBF" "ab\r\n\r\ncd";
    char got[256];
    read_all(file_of(s, sizeof s - 1), got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "1:ab|2:|3:cd|");
}

static void test_bom_only_stripped_on_line_one(void)
{
    const char s[] = "a\n\xEF\xBB\xBF" "b\n";
    char got[256];
    read_all(file_of(s, sizeof s - 1), got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "1:a|2:\xEF\xBB\xBF" "b|");
}

static void test_lone_cr_is_content(void)
{
    char got[256];
    read_all(file_of("a\rb\n", 4), got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "1:a\rb|");
}

static void test_nul_byte_is_an_error_of_that_line(void)
{
    ck_line_reader *r = NULL;
    FILE *f = file_of("ok\nx\0y\nnext\n", 12);
    CU_ASSERT_EQUAL_FATAL(ck_line_reader_open(&r, f, "t.txt", NULL), CK_OK);
    const char *line = NULL;
    size_t len = 0, no = 0;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, &err), 1);
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, &err), CK_E_INPUT);
    CU_ASSERT_EQUAL(no, 2);
    CU_ASSERT_STRING_EQUAL(err.message, "t.txt:2: byte 2: NUL byte in line");
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, NULL), 1);
    CU_ASSERT_EQUAL(no, 3);
    CU_ASSERT_STRING_EQUAL(line, "next");
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, NULL), 0);
    ck_line_reader_close(r);
    fclose(f);
}

/* A line of n bytes 'a'..'z' followed by "\nz" (and nothing after). */
static char *long_line(size_t n)
{
    char *big = malloc(n + 2);
    for (size_t i = 0; big != NULL && i < n; i++) {
        big[i] = (char)('a' + i % 26);
    }
    if (big != NULL) {
        memcpy(big + n, "\nz", 2);
    }
    return big;
}

/* Exactly CK_LINE_MAX_BYTES bytes before the "\n": one whole line. */
static void test_line_at_the_limit_is_read(void)
{
    size_t n = CK_LINE_MAX_BYTES;
    char *big = long_line(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    FILE *f = file_of(big, n + 2);
    ck_line_reader *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_line_reader_open(&r, f, NULL, NULL), CK_OK);
    const char *line = NULL;
    size_t len = 0, no = 0;
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, NULL), 1);
    CU_ASSERT_EQUAL(len, n);
    CU_ASSERT_EQUAL(memcmp(line, big, n), 0);
    CU_ASSERT_EQUAL(ck_line_reader_offset(r), n + 1);
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, NULL), 1);
    CU_ASSERT_STRING_EQUAL(line, "z");
    CU_ASSERT_EQUAL(no, 2);
    CU_ASSERT_EQUAL(ck_line_reader_offset(r), n + 2);
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, NULL), 0);
    CU_ASSERT_STRING_EQUAL(ck_line_reader_source(r), "<input>");
    ck_line_reader_close(r);
    fclose(f);
    free(big);
}

/* One byte over the limit, and a 20 MB line: an error of that line (read to its end, not held),
 * and the next line is read as usual. */
static void test_line_over_the_limit_is_an_error(void)
{
    const size_t sizes[] = {CK_LINE_MAX_BYTES + 1, 20u << 20};
    for (size_t k = 0; k < 2; k++) {
        char *big = long_line(sizes[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(big);
        FILE *f = file_of(big, sizes[k] + 2);
        ck_line_reader *r = NULL;
        CU_ASSERT_EQUAL_FATAL(ck_line_reader_open(&r, f, "t.txt", NULL), CK_OK);
        const char *line = NULL;
        size_t len = 0, no = 0;
        ck_error err = {CK_OK, ""};
        CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, &err), CK_E_INPUT);
        CU_ASSERT_EQUAL(no, 1);
        CU_ASSERT_STRING_EQUAL(err.message, "t.txt:1: line longer than 1048576 bytes (the 1 MiB "
                               "line limit)");
        CU_ASSERT_EQUAL(ck_line_reader_offset(r), sizes[k] + 1);
        CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, &err), 1);
        CU_ASSERT_STRING_EQUAL(line, "z");
        CU_ASSERT_EQUAL(no, 2);
        ck_line_reader_close(r);
        fclose(f);
        free(big);
    }
}

static void test_rejects_null_arguments(void)
{
    ck_line_reader *r = NULL;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_line_reader_open(&r, NULL, "t.txt", &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "input stream"));
    CU_ASSERT_EQUAL(ck_line_reader_open(NULL, stdin, "t.txt", NULL), CK_E_ARG);
    ck_line_reader_close(NULL);
}

/* Lines handed in one at a time: numbered, "\r" ending dropped, BOM on line 1 only, the limit
 * and NUL bytes errors of their line only; a reader over a stream takes no lines and vice versa. */
static void test_lines_handed_in(void)
{
    ck_line_reader *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_line_reader_open_lines(&r, "<lines>", NULL), CK_OK);
    const char *line = NULL;
    size_t len = 0, no = 0;
    CU_ASSERT_EQUAL(ck_line_reader_take(r, "\xEF\xBB\xBF" "ab\r", 6, &line, &len, &no, NULL), 1);
    CU_ASSERT_EQUAL(no, 1);
    CU_ASSERT_EQUAL(len, 2);
    CU_ASSERT_STRING_EQUAL(line, "ab");
    CU_ASSERT_EQUAL(ck_line_reader_take(r, "\xEF\xBB\xBF" "c", 4, &line, &len, &no, NULL), 1);
    CU_ASSERT_EQUAL(no, 2);
    CU_ASSERT_EQUAL(len, 4);
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_line_reader_take(r, "a\0b", 3, &line, &len, &no, &err), CK_E_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, "<lines>:3: byte 2: NUL byte in line");
    char *huge = malloc(CK_LINE_MAX_BYTES + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    memset(huge, 'x', CK_LINE_MAX_BYTES + 1);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_line_reader_take(r, huge, CK_LINE_MAX_BYTES + 1, &line, &len, &no, &err),
                    CK_E_INPUT);
    CU_ASSERT_EQUAL(no, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "<lines>:4: line longer than"));
    CU_ASSERT_EQUAL(ck_line_reader_take(r, huge, CK_LINE_MAX_BYTES, &line, &len, &no, NULL), 1);
    CU_ASSERT_EQUAL(len, CK_LINE_MAX_BYTES);
    free(huge);
    CU_ASSERT_EQUAL(ck_line_reader_take(r, "", 0, &line, &len, &no, NULL), 1);
    CU_ASSERT_EQUAL(no, 6);
    CU_ASSERT_EQUAL(len, 0);
    CU_ASSERT_EQUAL(ck_line_reader_next(r, &line, &len, &no, NULL), CK_E_ARG);
    ck_line_reader_close(r);

    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(ck_line_reader_open(&r, f, "t.txt", NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_line_reader_take(r, "a", 1, &line, &len, &no, NULL), CK_E_ARG);
    ck_line_reader_close(r);
    fclose(f);
    CU_ASSERT_EQUAL(ck_line_reader_open_lines(NULL, NULL, NULL), CK_E_ARG);
}

CK_TEST_MAIN("line_reader", {"plain lines", test_plain_lines},
             {"range: numbering, limit, BOM at byte 0 only", test_range_numbering_limit_and_bom},
             {"CRLF, BOM and no final newline", test_crlf_bom_and_no_final_newline},
             {"BOM only stripped on line 1", test_bom_only_stripped_on_line_one},
             {"lone CR is content", test_lone_cr_is_content},
             {"NUL byte is an error of that line", test_nul_byte_is_an_error_of_that_line},
             {"line at the 1 MiB limit is read", test_line_at_the_limit_is_read},
             {"line over the limit is an error", test_line_over_the_limit_is_an_error},
             {"rejects null arguments", test_rejects_null_arguments},
             {"lines handed in", test_lines_handed_in})
