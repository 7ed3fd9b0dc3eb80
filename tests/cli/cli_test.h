/* cli_test.h - what the CLI suites share: a private work directory, paths in it, the binary under
 * test, the text of an output's JSON Lines tensors, writing a file or the phoneme corpus of the
 * tiny circuit, reading stderr back, comparing bytes, killing a run after its first commit, and a
 * main that makes and removes the directory around the CUnit run. Tests only. */
#ifndef CK_CLI_TEST_H
#define CK_CLI_TEST_H

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ck_test.h"
#include "ckbatch.h"

static char ck_cli_work[256];

/* work/name; eight rotating buffers so a call can take several paths. */
static inline const char *ck_cli_tmp(const char *name)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 512, "%s/%s", ck_cli_work, name);
    return b;
}

/* The ckbatch binary ctest built: $CK_BINARY_DIR/engine/ckbatch. */
static inline const char *ck_cli_binary(void)
{
    static char b[512];
    const char *dir = getenv("CK_BINARY_DIR");
    snprintf(b, sizeof b, "%s/engine/ckbatch", dir ? dir : "build");
    return b;
}

/* The bytes of U8 tensor `name` of f (e.g. the JSON Lines of "sequences") as a malloc'd
 * NUL-terminated string; NULL when f has no such U8 tensor. */
static inline char *ck_cli_text(const ck_features_file *f, const char *name)
{
    const ck_tensor_view *t = ck_features_tensor(f, name);
    char *s = t != NULL && strcmp(t->dtype, "U8") == 0 ? malloc(t->bytes + 1) : NULL;
    if (s != NULL) {
        memcpy(s, t->data, t->bytes);
        s[t->bytes] = '\0';
    }
    return s;
}

/* Lines of ck_cli_work/stderr (where the suites send a run's stderr) containing `text`. */
static inline int ck_cli_stderr_lines_with(const char *text)
{
    FILE *f = fopen(ck_cli_tmp("stderr"), "rb");
    char line[2048];
    int n = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        n += strstr(line, text) != NULL;
    }
    if (f != NULL) {
        fclose(f);
    }
    return n;
}

static inline int ck_cli_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Writes text to path (replacing it). */
static inline void ck_cli_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* Phoneme lines the tiny circuit takes (; : , . ! ?): n lines, a UTF-8 BOM first, CRLF on every
 * 10th line, a line of 40 symbols (chunked: the tiny circuit takes 14) every 97th, "##" (nothing
 * left: a bad line) at line `bad` (0: none), empty line 7, no final newline. */
static inline void ck_cli_write_phoneme_corpus(const char *path, int n, int bad, uint32_t seed)
{
    static const char ok[] = ";:,.!?";
    uint32_t x = seed;
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("\xEF\xBB\xBF", f);
    for (int line = 1; line <= n; line++) {
        x = x * 1664525u + 1013904223u;
        int len = line % 97 == 0 ? 40 : 1 + (int)((x >> 16) % 14);
        if (line == bad || line == 7) {
            fputs(line == bad ? "##" : "", f);
        }
        for (int k = 0; line != bad && line != 7 && k < len; k++) {
            x = x * 1664525u + 1013904223u;
            fputc(ok[(x >> 16) % 6], f);
        }
        if (line < n) {
            fputs(line % 10 == 0 ? "\r\n" : "\n", f);
        }
    }
    fclose(f);
}

/* The first stderr line holding `what`, from `what` on, into line[2048]; "" when none. */
static inline const char *ck_cli_stderr_line(const char *what, char line[2048])
{
    FILE *f = fopen(ck_cli_tmp("stderr"), "rb");
    const char *at = NULL;
    while (f != NULL && at == NULL && fgets(line, 2048, f) != NULL) {
        at = strstr(line, what);
    }
    if (f != NULL) {
        fclose(f);
    }
    if (at == NULL) {
        fprintf(stderr, "    stderr lacks \"%s\"\n", what);
        line[0] = '\0';
        return line;
    }
    line[strcspn(line, "\n")] = '\0';
    return at;
}

static inline int ck_cli_stderr_has(const char *what)
{
    char line[2048];
    return ck_cli_stderr_line(what, line)[0] != '\0';
}

/* The whole file at path into a malloc'd buffer with a '\0' after its bytes (text or binary); *n
 * (when n is not NULL) its size. NULL (and *n 0) when unreadable. */
static inline char *ck_cli_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    long len = -1;
    if (n != NULL) {
        *n = 0;
    }
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        if (f != NULL) {
            fclose(f);
        }
        return NULL;
    }
    char *b = malloc((size_t)len + 1);
    size_t got = b != NULL ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    if (b != NULL) {
        b[got] = '\0';
    }
    if (n != NULL) {
        *n = got;
    }
    return b;
}

static inline int ck_cli_same_bytes(const char *a, const char *b)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    return system(cmd) == 0;
}

/* Starts the shell command `cmd` (which must exec ckbatch writing `out`) and sends it `sig` as
 * soon as its first progress record exists; asserts the record is there and `out` is not; returns
 * the wait status. */
static inline int ck_cli_signal_after_first_commit(const char *cmd, const char *out, int sig)
{
    char record[600];
    snprintf(record, sizeof record, "%s.partial.json", out);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec nap = {0, 2000000};
    for (int i = 0; i < 30000 && !ck_cli_exists(record); i++) {
        nanosleep(&nap, NULL);
    }
    kill(pid, sig);
    int st = 0;
    waitpid(pid, &st, 0);
    CU_ASSERT_TRUE(ck_cli_exists(record));
    CU_ASSERT_FALSE(ck_cli_exists(out));
    return st;
}

/* SIGTERM after the first commit: the exit status (-1 if it died of the signal). */
static inline int ck_cli_term_after_first_commit(const char *cmd, const char *out)
{
    int st = ck_cli_signal_after_first_commit(cmd, out, SIGTERM);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* SIGKILL after the first commit: the record stays, the file is not written. */
static inline void ck_cli_kill_after_first_commit(const char *cmd, const char *out)
{
    int st = ck_cli_signal_after_first_commit(cmd, out, SIGKILL);
    CU_ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* Runs the cases in a fresh work directory, then removes it (unmounting a test tmpfs at work/disk
 * if one is left). Returns the process exit code. */
static inline int ck_cli_main(const char *suite, const ck_test_case *cases, size_t n)
{
    snprintf(ck_cli_work, sizeof ck_cli_work, "/tmp/ck_test_%s.XXXXXX", suite);
    if (mkdtemp(ck_cli_work) == NULL) {
        return 2;
    }
    int rc = ck_test_run(suite, cases, n);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "umount %s/disk 2>/dev/null; rm -rf %s", ck_cli_work, ck_cli_work);
    return system(cmd) == -1 ? 2 : rc;
}

#endif
