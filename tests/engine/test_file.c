/* test_file.c - ck_file_read_all: exact bytes, the cap (at it, one past it, far past it, in pieces
 * larger than the first read), empty files, and what is not a regular file refused without a read
 * (a directory, a FIFO with no writer: no hang), each with its exact message. */
#include <sys/stat.h>

#include "ck_test.h"
#include "file.h"

static char g_dir[64];

static const char *path_in_dir(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    return p;
}

/* Writes n bytes 'a'..'z' to name in the test directory; returns its path. */
static const char *write_bytes(const char *name, size_t n)
{
    const char *p = path_in_dir(name);
    FILE *f = fopen(p, "wb");
    for (size_t i = 0; f != NULL && i < n; i++) {
        fputc('a' + (int)(i % 26), f);
    }
    if (f != NULL) {
        fclose(f);
    }
    return p;
}

static void test_reads_exact_bytes_up_to_the_cap(void)
{
    const size_t sizes[] = {0, 1, 65535, 65536, 65537, 300000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const char *p = write_bytes("f.txt", sizes[k]);
        char *text = (char *)&text;
        size_t len = 99;
        ck_error err = {0};
        CU_ASSERT_EQUAL_FATAL(ck_file_read_all(p, "thing", 300000, &text, &len, &err), CK_OK);
        CU_ASSERT_EQUAL(len, sizes[k]);
        CU_ASSERT_EQUAL(text[len], '\0');
        int same = 1;
        for (size_t i = 0; i < len; i++) {
            same &= text[i] == 'a' + (int)(i % 26);
        }
        CU_ASSERT_TRUE(same);
        free(text);
    }
}

static void test_longer_than_the_cap_is_refused(void)
{
    const size_t sizes[] = {300001, 1000000};
    for (size_t k = 0; k < 2; k++) {
        const char *p = write_bytes("big.txt", sizes[k]);
        char *text = (char *)&text, want[256];
        ck_error err = {0};
        CU_ASSERT_EQUAL(ck_file_read_all(p, "thing", 300000, &text, NULL, &err), CK_E_FORMAT);
        CU_ASSERT_PTR_NULL(text);
        snprintf(want, sizeof want, "%s: larger than 300000 bytes, the limit for a thing", p);
        CU_ASSERT_STRING_EQUAL(err.message, want);
    }
}

static void test_not_a_regular_file_is_refused(void)
{
    char *text = NULL, want[256];
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_file_read_all(g_dir, "config.json", 100, &text, NULL, &err), CK_E_IO);
    snprintf(want, sizeof want, "%s: config.json is not a regular file", g_dir);
    CU_ASSERT_STRING_EQUAL(err.message, want);
    const char *fifo = path_in_dir("fifo");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_file_read_all(fifo, "config.json", 100, &text, NULL, &err), CK_E_IO);
    snprintf(want, sizeof want, "%s: config.json is not a regular file", fifo);
    CU_ASSERT_STRING_EQUAL(err.message, want);
    unlink(fifo);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_file_read_all(path_in_dir("absent"), "circuit", 100, &text, NULL, &err),
                    CK_E_IO);
    snprintf(want, sizeof want, "%s: cannot open circuit: No such file or directory",
             path_in_dir("absent"));
    CU_ASSERT_STRING_EQUAL(err.message, want);
    CU_ASSERT_EQUAL(ck_file_read_all(NULL, "circuit", 100, &text, NULL, NULL), CK_E_ARG);
}

static void remove_dir(void)
{
    unlink(path_in_dir("f.txt"));
    unlink(path_in_dir("big.txt"));
    rmdir(g_dir);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/ck_test_file.XXXXXX");
    if (mkdtemp(g_dir) == NULL) {
        return 2;
    }
    static const ck_test_case cases[] = {
        {"reads exact bytes up to the cap", test_reads_exact_bytes_up_to_the_cap},
        {"longer than the cap is refused", test_longer_than_the_cap_is_refused},
        {"not a regular file is refused", test_not_a_regular_file_is_refused},
    };
    int rc = ck_test_run("file", cases, sizeof cases / sizeof cases[0]);
    remove_dir();
    return rc;
}
