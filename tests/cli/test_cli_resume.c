/* test_cli_resume.c - durable output through the ckbatch binary: a run killed with SIGKILL after a
 * commit resumes (even with other --threads and --max-batch-tokens) to the exact bytes of an
 * uninterrupted run (skipped lines included), --resume
 * rejects a changed input or options naming the field, a full disk gives a clear error and no final
 * file, and a bad line under stop leaves no partial files. Uses the tiny circuit (fast). */
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_test.h"
#include "safetensors.h"

/* 1500 lines of ids the tiny circuit accepts (1..6, 9), bad lines at 5 and 1400, empty at 700. */
static void write_corpus(const char *path, int with_bad)
{
    static const int ok[] = {1, 2, 3, 4, 5, 6, 9};
    uint32_t x = 12345;
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int line = 1; line <= 1500; line++) {
        x = x * 1664525u + 1013904223u;
        int n = 1 + (int)((x >> 16) % 14);
        if (with_bad && (line == 5 || line == 1400)) {
            fputs(line == 5 ? "[178]\n" : "[1, x]\n", f);
            continue;
        }
        if (line == 700) {
            fputs("\n", f);
            continue;
        }
        for (int k = 0; k < n; k++) {
            x = x * 1664525u + 1013904223u;
            fprintf(f, "%s%d", k ? ", " : "[", ok[(x >> 16) % 7]);
        }
        fputs("]\n", f);
    }
    fclose(f);
}

#define CK_ARGS "-t 2 -f ids --max-batch-tokens 512 --circuit %s/tests/fixtures/circuits/tiny.json"

/* Runs ckbatch with the common arguments plus `extra`; stderr to ck_cli_work/stderr. Exit code. */
static int run(const char *extra)
{
    char cmd[4096], args[1024];
    const char *src = getenv("CK_SOURCE_DIR");
    snprintf(args, sizeof args, CK_ARGS, src ? src : ".");
    snprintf(cmd, sizeof cmd, "%s %s %s 2>%s/stderr", ck_cli_binary(), args, extra, ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int stderr_has(const char *what)
{
    FILE *f = fopen(ck_cli_tmp("stderr"), "rb");
    char line[2048];
    int found = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        found |= strstr(line, what) != NULL;
    }
    if (f != NULL) {
        fclose(f);
    }
    if (!found) {
        fprintf(stderr, "    stderr lacks \"%s\"\n", what);
    }
    return found;
}

/* Starts a skip-policy run into out and SIGKILLs it as soon as its first progress record exists. */
static void run_and_kill(const char *input, const char *out)
{
    char record[600], cmd[4096];
    snprintf(record, sizeof record, "%s.partial.json", out);
    snprintf(cmd, sizeof cmd, "exec %s " CK_ARGS " --on-error skip -i %s -o %s 2>/dev/null",
             ck_cli_binary(), getenv("CK_SOURCE_DIR") ? getenv("CK_SOURCE_DIR") : ".", input, out);
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
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    CU_ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CU_ASSERT_TRUE(ck_cli_exists(record));
    CU_ASSERT_FALSE(ck_cli_exists(out));
}

static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa != NULL && fb != NULL, ca, cb;
    while (same && ((ca = fgetc(fa)) != EOF) | ((cb = fgetc(fb)) != EOF)) {
        same = ca == cb;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (const char *c = text; *c != '\0'; c++) {
        n += *c == '\n';
    }
    return n;
}

static void test_kill_then_resume_equals_uninterrupted(void)
{
    char args[1024];
    write_corpus(ck_cli_tmp("c.txt"), 1);
    snprintf(args, sizeof args, "--on-error skip -i %s -o %s", ck_cli_tmp("c.txt"), ck_cli_tmp("full.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    run_and_kill(ck_cli_tmp("c.txt"), ck_cli_tmp("r.st"));
    /* other --threads and --max-batch-tokens than the killed run: they change no feature bit */
    snprintf(args, sizeof args, "--on-error skip --resume -t 3 --max-batch-tokens 777 -i %s -o %s",
             ck_cli_tmp("c.txt"), ck_cli_tmp("r.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("ckbatch: resuming at line "));
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("full.st"), ck_cli_tmp("r.st")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial.seqs")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial.skipped")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial.offsets")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial.json")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial.lock")));
    ck_st_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, ck_cli_tmp("r.st"), &err), CK_OK);
    char *skipped = ck_cli_text(f, "skipped"), *seqs = ck_cli_text(f, "sequences");
    CU_ASSERT_FATAL(skipped != NULL && seqs != NULL);
    CU_ASSERT_EQUAL(count_lines(skipped), 2);
    const char *first = "{\"line\":5,\"error\":\"";
    CU_ASSERT_EQUAL(strncmp(skipped, first, strlen(first)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(skipped, "}\n{\"line\":1400,\"error\":\""));
    CU_ASSERT_EQUAL(ck_st_find(f, "offsets")->shape[0], 1500 - 3 + 1); /* 2 bad, 1 empty */
    CU_ASSERT_EQUAL(count_lines(seqs), 1500 - 3);
    free(skipped);
    free(seqs);
    ck_st_close(f);
}

static void test_resume_rejects_changed_input_and_options(void)
{
    char args[1024];
    write_corpus(ck_cli_tmp("d.txt"), 1);
    run_and_kill(ck_cli_tmp("d.txt"), ck_cli_tmp("d.st"));
    snprintf(args, sizeof args, "--on-error stop --resume -i %s -o %s", ck_cli_tmp("d.txt"), ck_cli_tmp("d.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_TRUE(stderr_has("identity field \"options\" differs"));
    CU_ASSERT_TRUE(stderr_has("from \"on_error=skip ")); /* the differing option, not a cut prefix */
    CU_ASSERT_TRUE(stderr_has("(now \"on_error=stop "));
    write_corpus(ck_cli_tmp("d.txt"), 0);
    snprintf(args, sizeof args, "--on-error skip --resume -i %s -o %s", ck_cli_tmp("d.txt"), ck_cli_tmp("d.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_TRUE(stderr_has("identity field \"input_sha256\" differs"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("d.st")));
    CU_ASSERT_TRUE(ck_cli_exists(ck_cli_tmp("d.st.partial.json"))); /* a rejected resume keeps the progress */
}

/* A vocabulary changes the ids, so --config (by its SHA-256) is part of the resume identity. */
static void test_resume_rejects_added_config(void)
{
    char args[1024];
    const char *src = getenv("CK_SOURCE_DIR");
    write_corpus(ck_cli_tmp("g.txt"), 1);
    run_and_kill(ck_cli_tmp("g.txt"), ck_cli_tmp("g.st"));
    snprintf(args, sizeof args, "--on-error skip --resume --config %s/tests/fixtures/kokoro/"
             "tiny_config.json -i %s -o %s", src ? src : ".", ck_cli_tmp("g.txt"), ck_cli_tmp("g.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_TRUE(stderr_has("identity field \"options\" differs"));
    CU_ASSERT_TRUE(stderr_has("from \"circuit=")); /* the first differing word */
    CU_ASSERT_TRUE(stderr_has("(now \"config=sha256:"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st")));
    CU_ASSERT_TRUE(ck_cli_exists(ck_cli_tmp("g.st.partial.json")));
}

static void test_resume_without_record_or_from_stdin(void)
{
    char args[1024];
    write_corpus(ck_cli_tmp("e.txt"), 0);
    snprintf(args, sizeof args, "--resume -i %s -o %s", ck_cli_tmp("e.txt"), ck_cli_tmp("e.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_TRUE(stderr_has("no progress record"));
    CU_ASSERT_TRUE(stderr_has("run again without --resume"));
    snprintf(args, sizeof args, "--resume -i - -o %s < %s", ck_cli_tmp("e.st"), ck_cli_tmp("e.txt"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_TRUE(stderr_has("--resume: needs a regular --input file, not stdin"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("e.st")));
}

/* A 64 KiB tmpfs when mount works (root), else a 64 KiB file size limit with SIGXFSZ ignored. */
static void test_full_disk_is_a_clear_error_without_final_file(void)
{
    char args[1024], disk[600], cmd[4096];
    const char *src = getenv("CK_SOURCE_DIR");
    write_corpus(ck_cli_tmp("f.txt"), 0);
    snprintf(disk, sizeof disk, "%s/disk", ck_cli_work);
    mkdir(disk, 0700);
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=64k tmpfs %s 2>/dev/null", disk);
    int mounted = system(cmd) == 0, rc;
    snprintf(args, sizeof args, "-i %s -o %s/f.st", ck_cli_tmp("f.txt"), disk);
    if (mounted) {
        rc = run(args);
    } else {
        snprintf(cmd, sizeof cmd, "sh -c \"trap '' XFSZ; ulimit -f 128; exec %s " CK_ARGS " %s\" "
                 "2>%s/stderr", ck_cli_binary(), src ? src : ".", args, ck_cli_work);
        int st = system(cmd);
        rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_TRUE(stderr_has("disk full?"));
    snprintf(cmd, sizeof cmd, "%s/f.st", disk);
    CU_ASSERT_FALSE(ck_cli_exists(cmd));
    snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", disk);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0); /* no temporary final file left either */
    snprintf(cmd, sizeof cmd, "umount %s 2>/dev/null", disk);
    CU_ASSERT_EQUAL(system(cmd) == 0, mounted);
}

static void test_bad_line_under_stop_leaves_no_partial_files(void)
{
    char args[1024];
    write_corpus(ck_cli_tmp("g.txt"), 1);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("g.txt"), ck_cli_tmp("g.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_TRUE(stderr_has("g.txt:5: element 1: "));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st.partial")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st.partial.seqs")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st.partial.skipped")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st.partial.offsets")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st.partial.json")));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"kill -9 then --resume equals uninterrupted", test_kill_then_resume_equals_uninterrupted},
        {"--resume rejects changed input and options", test_resume_rejects_changed_input_and_options},
        {"--resume rejects an added --config", test_resume_rejects_added_config},
        {"--resume without record or from stdin", test_resume_without_record_or_from_stdin},
        {"full disk: clear error, no final file", test_full_disk_is_a_clear_error_without_final_file},
        {"bad line under stop: no partial files", test_bad_line_under_stop_leaves_no_partial_files},
    };
    return ck_cli_main("cli_resume", cases, sizeof cases / sizeof cases[0]);
}
