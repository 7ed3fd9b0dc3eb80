/* test_file.c - ck_file_read_all: exact bytes, the cap (at it, one past it, far past it, in pieces
 * larger than the first read), empty files, and what is not a regular file refused without a read
 * (a directory, a FIFO with no writer: no hang), each with its exact message. The atomic writer:
 * the old file stays whole until commit, abort and a failed rename leave it and no temporary. The
 * publication step: a finished temporary takes the path, a missing one is refused and names it;
 * ck_file_suffixed. */
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

/* 1 when the directory holds exactly the names given (NULL-terminated list). */
static int dir_holds(const char *const *names)
{
    char cmd[256], got[1024] = "", want[1024] = "";
    snprintf(cmd, sizeof cmd, "ls %s | tr '\\n' ' '", g_dir);
    FILE *p = popen(cmd, "r");
    if (p != NULL) {
        if (fgets(got, sizeof got, p) == NULL) {
            got[0] = '\0';
        }
        pclose(p);
    }
    for (const char *const *n = names; *n != NULL; n++) {
        strcat(want, *n);
        strcat(want, " ");
    }
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "    directory holds \"%s\", expected \"%s\"\n", got, want);
    }
    return strcmp(got, want) == 0;
}

static char *read_back(const char *path)
{
    char *text = NULL;
    return ck_file_read_all(path, "file", 1 << 20, &text, NULL, NULL) == CK_OK ? text : NULL;
}

static void test_atomic_writer(void)
{
    unlink(path_in_dir("f.txt"));   /* the read tests' files */
    unlink(path_in_dir("big.txt"));
    char out[128], sub[128];  /* path_in_dir's buffer is reused by each call */
    snprintf(out, sizeof out, "%s", path_in_dir("out.bin"));
    snprintf(sub, sizeof sub, "%s", path_in_dir("sub"));
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_file_write_atomic(out, "old contents", 12, &err), CK_OK);
    ck_atomic_file a;
    CU_ASSERT_EQUAL_FATAL(ck_atomic_open(&a, out, NULL, &err), CK_OK);
    fputs("new", a.f);
    static const char *const during[] = {"out.bin", NULL};
    char *text = read_back(out);
    CU_ASSERT_STRING_EQUAL(text ? text : "", "old contents"); /* readers see the old file whole */
    free(text);
    char tmp[128];
    snprintf(tmp, sizeof tmp, "out.bin.tmp.%ld", (long)getpid());
    const char *const written[] = {"out.bin", tmp, NULL};
    CU_ASSERT_TRUE(dir_holds(written));                       /* the temporary beside it */
    CU_ASSERT_EQUAL(ck_atomic_commit(&a, &err), CK_OK);
    CU_ASSERT_TRUE(dir_holds(during));
    text = read_back(out);
    CU_ASSERT_STRING_EQUAL(text ? text : "", "new");
    free(text);

    CU_ASSERT_EQUAL_FATAL(ck_atomic_open(&a, out, path_in_dir("fixed.tmp"), &err), CK_OK);
    fputs("dropped", a.f);
    static const char *const fixed[] = {"fixed.tmp", "out.bin", NULL};
    CU_ASSERT_TRUE(dir_holds(fixed));                        /* the given temporary name */
    ck_atomic_abort(&a);
    CU_ASSERT_TRUE(dir_holds(during));
    text = read_back(out);
    CU_ASSERT_STRING_EQUAL(text ? text : "", "new");
    free(text);

    /* a rename that fails (the path is a directory): error, the temporary removed */
    CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
    char want[512];
    CU_ASSERT_EQUAL(ck_file_write_atomic(sub, "x", 1, &err), CK_E_IO);
    snprintf(want, sizeof want, "%s: rename from %s.tmp.%ld failed: Is a directory", sub, sub,
             (long)getpid());
    CU_ASSERT_STRING_EQUAL(err.message, want);
    static const char *const after[] = {"out.bin", "sub", NULL};
    CU_ASSERT_TRUE(dir_holds(after));
    rmdir(sub);
    unlink(out);
}

static void remove_dir(void)
{
    unlink(path_in_dir("f.txt"));
    unlink(path_in_dir("big.txt"));
    rmdir(g_dir);
}

static void test_publish(void)
{
    char tmp[128], out[128];
    snprintf(tmp, sizeof tmp, "%s", path_in_dir("pub.tmp"));
    snprintf(out, sizeof out, "%s", path_in_dir("pub.bin"));
    FILE *f = fopen(tmp, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("published", f);
    fclose(f);
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_file_publish(tmp, out, &err), CK_OK);
    char *text = read_back(out);
    CU_ASSERT_STRING_EQUAL(text ? text : "", "published");
    free(text);
    CU_ASSERT_NOT_EQUAL(access(tmp, F_OK), 0); /* renamed, not copied */
    CU_ASSERT_EQUAL(ck_file_publish(tmp, out, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "pub.tmp: fsync failed"));
    CU_ASSERT_EQUAL(ck_file_publish(NULL, out, &err), CK_E_ARG);
    unlink(out);
    char *s = ck_file_suffixed("a/b", ".partial.lock");
    CU_ASSERT_STRING_EQUAL(s ? s : "", "a/b.partial.lock");
    free(s);
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
        {"atomic writer", test_atomic_writer},
        {"publish", test_publish},
    };
    int rc = ck_test_run("file", cases, sizeof cases / sizeof cases[0]);
    remove_dir();
    return rc;
}
