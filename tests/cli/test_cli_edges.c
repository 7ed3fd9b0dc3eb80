/* test_cli_edges.c - the rough edges a new user hits first, each pinned by its exact stderr:
 * -q prints errors only, the default --threads follows the CPU affinity mask, a line over the
 * 1 MiB limit is an error of its own line, the progress line moves within a window and its share
 * (and so its ETA) follows input bytes, not lines. */
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_test.h"
#include "ckbatch.h"

/* Runs `prefix ckbatch args` (shell fragments); stderr goes to work/stderr. Returns the exit code. */
static int run_with(const char *prefix, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s 2>%s", prefix, ck_cli_binary(), args, ck_cli_tmp("stderr"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The whole of work/stderr as a malloc'd string ("" when empty). */
static char *stderr_text(void)
{
    FILE *f = fopen(ck_cli_tmp("stderr"), "rb");
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    size_t got;
    while (f != NULL && (got = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
        n += got;
        if (n == cap - 1) {
            char *grown = realloc(buf, cap *= 2);
            CU_ASSERT_PTR_NOT_NULL_FATAL(grown);
            buf = grown;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

/* -q: a run that drops a symbol (a warning), prints the weights and memory lines and a summary
 * without it, leaves stderr empty; an error still gets its one line. */
static void test_quiet_prints_errors_only(void)
{
    ck_cli_write_file(ck_cli_tmp("q.txt"), "h\xc9\x99l\xcb\x88O\nab#c\n");
    char args[1024];
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("q.txt"), ck_cli_tmp("q.st"));
    CU_ASSERT_EQUAL_FATAL(run_with("", args), 0);
    char *loud = stderr_text();
    CU_ASSERT_PTR_NOT_NULL(strstr(loud, "ckbatch: weights: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(loud, "ckbatch: memory: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(loud, "ckbatch: warning: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(loud, " 1 dropped symbols, "));
    free(loud);

    snprintf(args, sizeof args, "-q --input %s --output %s", ck_cli_tmp("q.txt"), ck_cli_tmp("q2.st"));
    CU_ASSERT_EQUAL_FATAL(run_with("", args), 0);
    char *quiet = stderr_text();
    CU_ASSERT_STRING_EQUAL(quiet, "");
    free(quiet);
    snprintf(args, sizeof args, "-q --parity --input %s --output %s", ck_cli_tmp("q.txt"),
             ck_cli_tmp("q3.st"));
    CU_ASSERT_EQUAL_FATAL(run_with("", args), 0);
    quiet = stderr_text();
    CU_ASSERT_STRING_EQUAL(quiet, "");
    free(quiet);

    snprintf(args, sizeof args, "-q --strict-symbols --input %s --output %s", ck_cli_tmp("q.txt"),
             ck_cli_tmp("q4.st"));
    CU_ASSERT_EQUAL(run_with("", args), 1);
    char *error = stderr_text();
    char want[1024];
    snprintf(want, sizeof want, "ckbatch: error: %s:2: column 3: ", ck_cli_tmp("q.txt"));
    CU_ASSERT_EQUAL(strncmp(error, want, strlen(want)), 0);
    CU_ASSERT_PTR_NULL(strchr(error, '\n') != NULL ? strchr(strchr(error, '\n') + 1, '\n') : NULL);
    free(error);

    /* a failed stdin run: its error line only (the note that its partial files were removed
     * used to be printed under -q too, before the error) */
    snprintf(args, sizeof args, "-q --strict-symbols --input - --output %s < %s", ck_cli_tmp("q5.st"),
             ck_cli_tmp("q.txt"));
    CU_ASSERT_EQUAL(run_with("", args), 1);
    error = stderr_text();
    CU_ASSERT_EQUAL(strncmp(error, "ckbatch: error: <stdin>:2: column 3: ", 37), 0);
    CU_ASSERT_PTR_NULL(strchr(error, '\n') != NULL ? strchr(strchr(error, '\n') + 1, '\n') : NULL);
    free(error);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("q5.st.partial")));
}

/* Default --threads: one worker per CPU of the affinity mask, not per online CPU. The memory line
 * names the worker count ("scratch N x"). */
static void test_default_threads_follow_affinity(void)
{
    ck_cli_write_file(ck_cli_tmp("t.txt"), "h\xc9\x99l\xcb\x88O\n");
    char args[1024];
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("t.txt"), ck_cli_tmp("t.st"));
    CU_ASSERT_EQUAL_FATAL(run_with("taskset -c 0", args), 0);
    char *text = stderr_text();
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ", scratch 1 x "));
    free(text);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online >= 2) { /* two CPUs in the mask give two workers */
        CU_ASSERT_EQUAL_FATAL(run_with("taskset -c 0,1", args), 0);
        text = stderr_text();
        CU_ASSERT_PTR_NOT_NULL(strstr(text, ", scratch 2 x "));
        free(text);
    }
}

/* A 20 MB line: under skip it is listed in `skipped` with the limit named, the lines around it are
 * encoded; under stop it is the run's one error line. */
static void test_line_over_limit_is_a_line_error(void)
{
    FILE *f = fopen(ck_cli_tmp("big.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("h\xc9\x99l\xcb\x88O\n", f);
    for (int i = 0; i < (20 << 20) / 8; i++) {
        fputs("h\xc9\x99l\xcb\x88O ", f); /* 8 bytes */
    }
    fputs("\nw\xcb\x88\xc9\x9c\xc9\xb9ld\n", f);
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "--on-error skip --input %s --output %s", ck_cli_tmp("big.txt"),
             ck_cli_tmp("big.st"));
    CU_ASSERT_EQUAL_FATAL(run_with("", args), 0);
    ck_features_file *st = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&st, ck_cli_tmp("big.st"), &err), CK_OK);
    char *skipped = ck_cli_text(st, "skipped"), want[1024];
    snprintf(want, sizeof want, "{\"line\":2,\"error\":\"%s:2: line longer than 1048576 bytes (the "
             "1 MiB line limit)\"}\n", ck_cli_tmp("big.txt"));
    CU_ASSERT_STRING_EQUAL(skipped ? skipped : "", want);
    CU_ASSERT_EQUAL(ck_features_tensor(st, "offsets")->elements, 3); /* lines 1 and 3 */
    free(skipped);
    ck_features_close(st);
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("big.txt"), ck_cli_tmp("big2.st"));
    CU_ASSERT_EQUAL(run_with("", args), 1);
    char *text = stderr_text();
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ":2: line longer than 1048576 bytes"));
    free(text);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("big2.st")));
}

/* The share shown in each "\r"-drawn progress line ("ckbatch:  86.2% of input, ..."), in order. */
static size_t progress_shares(const char *text, double *shares, size_t cap)
{
    size_t n = 0;
    for (const char *p = strstr(text, "\rckbatch: "); p != NULL && n < cap;
         p = strstr(p + 1, "\rckbatch: ")) {
        double v = 0;
        if (sscanf(p, "\rckbatch: %lf%% of input", &v) == 1) {
            shares[n++] = v;
        }
    }
    return n;
}

/* Four lines of 500 ids (about 2,000 bytes each: the first window of 2,048 tokens) then 400
 * lines "[5]": with --progress-interval 0 the line is drawn at every line and batch; once the
 * first window is written the share is its bytes (over 80%), where a line count says 1%. */
static void test_progress_moves_and_follows_bytes(void)
{
    FILE *f = fopen(ck_cli_tmp("prog.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static const int defined[] = {50, 83, 156, 102, 61};
    long long big = 0;
    for (int l = 0; l < 4; l++) {
        fputc('[', f);
        for (int i = 0; i < 500; i++) {
            big += fprintf(f, "%s%d", i ? ", " : "", defined[(l + i) % 5]);
        }
        fputs("]\n", f);
        big += 3;
    }
    for (int l = 0; l < 400; l++) {
        fputs("[5]\n", f);
    }
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "-f ids -t 2 --max-batch-tokens 512 --progress --progress-interval 0 "
             "--input %s --output %s", ck_cli_tmp("prog.txt"), ck_cli_tmp("prog.st"));
    CU_ASSERT_EQUAL_FATAL(run_with("", args), 0);
    char *text = stderr_text();
    static double shares[1 << 16];
    size_t n = progress_shares(text, shares, 1 << 16);
    /* one draw per line read and per batch (and checkpoints): far more than one per window */
    CU_ASSERT_TRUE(n > 404);
    size_t after_first_window = 0;
    for (size_t i = 1; i < n; i++) {
        CU_ASSERT_TRUE(shares[i] >= shares[i - 1]);
        after_first_window += shares[i] > 80.0 && shares[i] < 100.0;
    }
    double first_window = 100.0 * (double)big / (double)(big + 400 * 4);
    CU_ASSERT_TRUE(first_window > 80.0);
    CU_ASSERT_TRUE(after_first_window >= 400); /* the short lines are read after window 1 is out */
    CU_ASSERT_TRUE(n > 0 && shares[n - 1] == 100.0);
    free(text);
    CU_ASSERT_EQUAL(run_with("", "--progress-interval x --input a --output b"), 2);
    CU_ASSERT_EQUAL(run_with("", "--progress-interval 0x10 --input a --output b"), 2);
    CU_ASSERT_EQUAL(run_with("", "--progress-interval ' 1' --input a --output b"), 2);
}

/* A circuit with a shorter position table (the tiny one: 16 positions, so 14 symbols a sequence)
 * chunks a longer phoneme line and rejects a longer ids line as an error of that line, not of the
 * run: before, both reached the executor ("sequence 0 has 17 tokens, limits are 1..16") and ended
 * the run with nothing written, also under --on-error skip. */
static void test_short_position_table_limits_lines(void)
{
    const char *src = getenv("CK_SOURCE_DIR") ? getenv("CK_SOURCE_DIR") : ".";
    ck_cli_write_file(ck_cli_tmp("p20.txt"), ";;;;;;;;;;;;;;;;;;;;\n;\n"); /* 20 symbols */
    char args[2048];
    snprintf(args, sizeof args, "-q --circuit %s/tests/fixtures/circuits/tiny.json --input %s "
             "--output %s", src, ck_cli_tmp("p20.txt"), ck_cli_tmp("p20.st"));
    CU_ASSERT_EQUAL(run_with("", args), 0);
    ck_features_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("p20.st"), NULL), CK_OK);
    char *seqs = ck_cli_text(f, "sequences");
    CU_ASSERT_PTR_NOT_NULL(strstr(seqs, "{\"line\":1,\"chunk\":1,\"chunks\":2,"));
    free(seqs);
    ck_features_close(f);

    ck_cli_write_file(ck_cli_tmp("i15.txt"), "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]\n[1,1,1,1,1,1,1,1,1,1,1,1,1,1]\n");
    snprintf(args, sizeof args, "-q -f ids --on-error skip --circuit %s/tests/fixtures/circuits/"
             "tiny.json --input %s --output %s", src, ck_cli_tmp("i15.txt"), ck_cli_tmp("i15.st"));
    CU_ASSERT_EQUAL(run_with("", args), 0);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("i15.st"), NULL), CK_OK);
    char *skipped = ck_cli_text(f, "skipped");
    CU_ASSERT_PTR_NOT_NULL(strstr(skipped, "{\"line\":1,\"error\":"));
    CU_ASSERT_PTR_NOT_NULL(strstr(skipped, "15 ids, expected 1..14"));
    free(skipped);
    ck_features_close(f);
}

/* A circuit with a smaller embedding table than the vocabulary (the tiny one: 10 rows): a phoneme
 * whose id has no row is dropped and reported like a symbol outside the vocab (a line error under
 * --strict-symbols), not an executor error that ends the run. */
static void test_symbol_past_the_embedding_table_is_dropped(void)
{
    const char *src = getenv("CK_SOURCE_DIR") ? getenv("CK_SOURCE_DIR") : ".";
    ck_cli_write_file(ck_cli_tmp("t10.txt"), ";a,\n");
    char args[2048], want[1024];
    snprintf(args, sizeof args, "--circuit %s/tests/fixtures/circuits/tiny.json --input %s "
             "--output %s", src, ck_cli_tmp("t10.txt"), ck_cli_tmp("t10.st"));
    CU_ASSERT_EQUAL_FATAL(run_with("", args), 0);
    char *text = stderr_text();
    snprintf(want, sizeof want, "ckbatch: warning: %s:1: column 2: symbol U+0061 'a' is id 43, "
             "past the embedding table's 10 rows, dropped\n", ck_cli_tmp("t10.txt"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    free(text);
    ck_features_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("t10.st"), NULL), CK_OK);
    char *seqs = ck_cli_text(f, "sequences");
    CU_ASSERT_STRING_EQUAL(seqs ? seqs : "", "{\"line\":1,\"chunk\":0,\"chunks\":1,\"tokens\":4,"
                           "\"phonemes\":\";,\"}\n");
    free(seqs);
    ck_features_close(f);
    snprintf(args, sizeof args, "--strict-symbols --circuit %s/tests/fixtures/circuits/tiny.json "
             "--input %s --output %s", src, ck_cli_tmp("t10.txt"), ck_cli_tmp("t10s.st"));
    CU_ASSERT_EQUAL(run_with("", args), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("t10s.st")));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"-q prints errors only", test_quiet_prints_errors_only},
        {"symbol past the embedding table is dropped", test_symbol_past_the_embedding_table_is_dropped},
        {"default threads follow the affinity mask", test_default_threads_follow_affinity},
        {"line over the 1 MiB limit is a line error", test_line_over_limit_is_a_line_error},
        {"progress moves within a window, by bytes", test_progress_moves_and_follows_bytes},
        {"a short position table limits lines", test_short_position_table_limits_lines},
    };
    return ck_cli_main("cli_edges", cases, sizeof cases / sizeof cases[0]);
}
