/* test_corpus_rank.c - the in-place writer of ckbatch-mpi's ranks (ck_file_pwrite_all, case C24): it
 * writes at 64-bit offsets past 4 GiB, and it loops over a short write (then reports the error
 * that stopped it) instead of taking a partial count for success. The MPI runs themselves are
 * tests/cli/test_cli_mpi.c. */
#define _GNU_SOURCE /* pread */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck_test.h"
#include "file.h"

/* 4 KiB at byte 5 GiB + 3 of a sparse file: the file ends right after them, and they read back. */
static void test_write_past_4_gib(void)
{
    const char *path = ck_test_tmp_path("sparse.bin");
    unsigned char out[4096], in[4096];
    for (size_t i = 0; i < sizeof out; i++) {
        out[i] = (unsigned char)(i * 7 + 1);
    }
    const unsigned long long at = (5ull << 30) + 3;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(ck_file_pwrite_all(fd, out, sizeof out, at), 0);
    struct stat st;
    CU_ASSERT_EQUAL(fstat(fd, &st), 0);
    CU_ASSERT_EQUAL((unsigned long long)st.st_size, at + sizeof out);
    CU_ASSERT_EQUAL(pread(fd, in, sizeof in, (off_t)at), (ssize_t)sizeof in);
    CU_ASSERT_EQUAL(memcmp(in, out, sizeof in), 0);
    close(fd);
    unlink(path);
}

/* Under a 10,000-byte file size limit a 16 KiB write is cut short: the writer keeps the 10,000
 * bytes, tries again for the rest, and returns -1 with that call's errno (EFBIG). */
static void test_short_write_is_looped_then_reported(void)
{
    const char *path = ck_test_tmp_path("short.bin");
    static unsigned char out[16384];
    memset(out, 0x5a, sizeof out);
    struct rlimit old, lim;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 10000;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
    errno = 0;
    int rc = ck_file_pwrite_all(fd, out, sizeof out, 0);
    int saved = errno;
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, was);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_EQUAL(saved, EFBIG);
    struct stat st;
    CU_ASSERT_EQUAL(fstat(fd, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 10000);
    ck_error err = {0};
    errno = EFBIG;
    CU_ASSERT_EQUAL(ck_file_io_failed(path, "writing rows", &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "writing rows failed"));
    close(fd);
    unlink(path);
    rmdir(ck_test_tmp_dir()); /* the last case: the private directory goes */
}

CK_TEST_MAIN("corpus_rank",
             {"write past 4 GiB", test_write_past_4_gib},
             {"short write is looped, then reported", test_short_write_is_looped_then_reported})
