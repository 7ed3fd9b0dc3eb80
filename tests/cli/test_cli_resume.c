/* test_cli_resume.c - durable output through the ckbatch binary: a run killed with SIGKILL after a
 * commit resumes (even with other --threads and --max-batch-tokens) to the exact bytes of an
 * uninterrupted run (skipped lines included) without converting the lines before its mark again,
 * --resume rejects a changed input or options naming the field and a same-length edit of a journal
 * naming the file, --resume without a record starts from the beginning, a stdin run leaves nothing
 * that looks resumable, a full disk gives a clear error and no final file, and a bad line under stop
 * leaves no partial files. Uses the tiny circuit (fast). */
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_test.h"
#include "ckbatch.h"

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

/* 1500 lines of phonemes the tiny circuit accepts (; : , . ! ?), with '#' (not in the vocab:
 * dropped and warned) on lines 2 and 1450, line 5 only "##" (a bad line: nothing left), line 700
 * empty. */
static void write_phonemes_corpus(const char *path)
{
    static const char ok[] = ";:,.!?";
    uint32_t x = 777;
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int line = 1; line <= 1500; line++) {
        x = x * 1664525u + 1013904223u;
        int n = 1 + (int)((x >> 16) % 14);
        if (line == 5 || line == 700) {
            fputs(line == 5 ? "##\n" : "\n", f);
            continue;
        }
        for (int k = 0; k < n; k++) {
            x = x * 1664525u + 1013904223u;
            fputc(ok[(x >> 16) % 6], f);
            if (k == 0 && (line == 2 || line == 1450)) {
                fputc('#', f);
            }
        }
        fputc('\n', f);
    }
    fclose(f);
}

/* Runs ckbatch with the common arguments plus `extra` (not -q: the tests read the resume and
 * warning lines, which -q silences); stderr to ck_cli_work/stderr. Exit code. */
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

/* The first line of ck_cli_work/stderr that holds `what`, from `what` on, into line[2048]
 * (without its newline); "" when none does. */
static const char *stderr_line(const char *what, char line[2048])
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
        line[0] = '\0';
        return line;
    }
    line[strcspn(line, "\n")] = '\0';
    return at;
}

/* Starts a skip-policy run (common arguments, then `extra`) into out and SIGKILLs it as soon as
 * its first progress record exists. */
static void run_and_kill_with(const char *extra, const char *input, const char *out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec %s " CK_ARGS " --on-error skip %s -i %s -o %s 2>/dev/null",
             ck_cli_binary(), getenv("CK_SOURCE_DIR") ? getenv("CK_SOURCE_DIR") : ".", extra,
             input, out);
    ck_cli_kill_after_first_commit(cmd, out);
}

static void run_and_kill(const char *input, const char *out)
{
    run_and_kill_with("", input, out);
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
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("r.st"), &err), CK_OK);
    char *skipped = ck_cli_text(f, "skipped"), *seqs = ck_cli_text(f, "sequences");
    CU_ASSERT_FATAL(skipped != NULL && seqs != NULL);
    CU_ASSERT_EQUAL(count_lines(skipped), 2);
    const char *first = "{\"line\":5,\"error\":\"";
    CU_ASSERT_EQUAL(strncmp(skipped, first, strlen(first)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(skipped, "}\n{\"line\":1400,\"error\":\""));
    CU_ASSERT_EQUAL(ck_features_tensor(f, "offsets")->shape[0], 1500 - 3 + 1); /* 2 bad, 1 empty */
    CU_ASSERT_EQUAL(count_lines(seqs), 1500 - 3);
    free(skipped);
    free(seqs);
    ck_features_close(f);
}

/* A run without --resume over an interrupted run's record starts over, as before, but says that
 * it discarded the progress (it used to be silent), and gives the uninterrupted file. */
static void test_fresh_run_says_it_discards_a_record(void)
{
    char args[1024];
    write_corpus(ck_cli_tmp("e.txt"), 1);
    snprintf(args, sizeof args, "--on-error skip -i %s -o %s", ck_cli_tmp("e.txt"), ck_cli_tmp("e_full.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_FALSE(stderr_has("was discarded"));
    run_and_kill(ck_cli_tmp("e.txt"), ck_cli_tmp("e.st"));
    CU_ASSERT_TRUE_FATAL(ck_cli_exists(ck_cli_tmp("e.st.partial.json")));
    snprintf(args, sizeof args, "--on-error skip -i %s -o %s", ck_cli_tmp("e.txt"), ck_cli_tmp("e.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("an interrupted run's progress ("));
    CU_ASSERT_TRUE(stderr_has("was discarded: this run starts from the beginning (resume on would"));
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("e_full.st"), ck_cli_tmp("e.st")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("e.st.partial.json")));
}

/* SIGTERM (or Ctrl-C's SIGINT) stops the run before its next batch: exit 143, the progress kept
 * with the --resume hint, and the resumed file equals the uninterrupted one. */
static void test_sigterm_stops_cleanly_and_resumes(void)
{
    char args[1024], cmd[4096];
    write_corpus(ck_cli_tmp("sg.txt"), 1);
    snprintf(args, sizeof args, "--on-error skip -i %s -o %s", ck_cli_tmp("sg.txt"), ck_cli_tmp("sg_full.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(cmd, sizeof cmd, "exec %s " CK_ARGS " --on-error skip -i %s -o %s 2>%s", ck_cli_binary(),
             getenv("CK_SOURCE_DIR") ? getenv("CK_SOURCE_DIR") : ".", ck_cli_tmp("sg.txt"),
             ck_cli_tmp("sg.st"), ck_cli_tmp("stderr"));
    CU_ASSERT_EQUAL(ck_cli_term_after_first_commit(cmd, ck_cli_tmp("sg.st")), 128 + SIGTERM);
    CU_ASSERT_TRUE(stderr_has("ckbatch: stopped by SIGTERM: corpus: cancelled by the caller"));
    CU_ASSERT_TRUE(stderr_has("run again with resume on to continue"));
    snprintf(args, sizeof args, "--on-error skip --resume -i %s -o %s", ck_cli_tmp("sg.txt"), ck_cli_tmp("sg.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("ckbatch: resuming at line "));
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("sg_full.st"), ck_cli_tmp("sg.st")));
}

static void test_resume_rejects_changed_input_and_options(void)
{
    char args[1024];
    write_corpus(ck_cli_tmp("d.txt"), 1);
    run_and_kill(ck_cli_tmp("d.txt"), ck_cli_tmp("d.st"));
    snprintf(args, sizeof args, "--on-error stop --resume -i %s -o %s", ck_cli_tmp("d.txt"), ck_cli_tmp("d.st"));
    CU_ASSERT_EQUAL(run(args), 3); /* CK_E_STATE: resume refused */
    CU_ASSERT_TRUE(stderr_has("identity field \"options\" differs"));
    CU_ASSERT_TRUE(stderr_has("the interrupted run had \"on_error=skip ")); /* the differing option, not a cut prefix */
    CU_ASSERT_TRUE(stderr_has("this run has \"on_error=stop "));
    CU_ASSERT_TRUE(stderr_has("ckbatch: --resume continues only the run that wrote"));
    write_corpus(ck_cli_tmp("d.txt"), 0);
    snprintf(args, sizeof args, "--on-error skip --resume -i %s -o %s", ck_cli_tmp("d.txt"), ck_cli_tmp("d.st"));
    CU_ASSERT_EQUAL(run(args), 3); /* CK_E_STATE: resume refused */
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
    CU_ASSERT_EQUAL(run(args), 3); /* CK_E_STATE: resume refused */
    CU_ASSERT_TRUE(stderr_has("identity field \"options\" differs"));
    CU_ASSERT_TRUE(stderr_has("the interrupted run had \"circuit=")); /* the first differing word */
    CU_ASSERT_TRUE(stderr_has("this run has \"config=sha256:"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("g.st")));
    CU_ASSERT_TRUE(ck_cli_exists(ck_cli_tmp("g.st.partial.json")));
}

/* --resume that a job script can always pass: with no progress record (never run, killed before
 * its first commit: journals but no record, or finished) the run starts from the beginning, says
 * so and exits 0 with an uninterrupted run's bytes. --resume of stdin stays refused. */
static void test_resume_without_record_starts_over(void)
{
    char args[1024];
    write_corpus(ck_cli_tmp("e.txt"), 0);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("e.txt"), ck_cli_tmp("e_full.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(args, sizeof args, "--resume -i %s -o %s", ck_cli_tmp("e.txt"), ck_cli_tmp("e.st"));
    CU_ASSERT_EQUAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("ckbatch: no progress record for "));
    CU_ASSERT_TRUE(stderr_has("e.st: starting from the beginning"));
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("e_full.st"), ck_cli_tmp("e.st")));
    /* the output is complete and no record is left: a fresh run, which replaces it at the end */
    CU_ASSERT_EQUAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("(the existing file is replaced when the run completes)"));
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("e_full.st"), ck_cli_tmp("e.st")));
    /* a run killed before its first commit: journals with rubbish, no record */
    static const char *const left[] = {"e2.st.partial", "e2.st.partial.seqs",
                                       "e2.st.partial.skipped", "e2.st.partial.offsets"};
    for (size_t i = 0; i < 4; i++) {
        FILE *f = fopen(ck_cli_tmp(left[i]), "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("{\"line\":1,\"error\":\"left by a killed run\"}\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "--resume -i %s -o %s", ck_cli_tmp("e.txt"), ck_cli_tmp("e2.st"));
    CU_ASSERT_EQUAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("e2.st: starting from the beginning"));
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("e_full.st"), ck_cli_tmp("e2.st")));
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp(left[i])));
    }
    snprintf(args, sizeof args, "--resume -i - -o %s < %s", ck_cli_tmp("e3.st"), ck_cli_tmp("e.txt"));
    CU_ASSERT_EQUAL(run(args), 2); /* a usage error, refused before the weights load */
    CU_ASSERT_TRUE(stderr_has("--resume needs a regular --input file: a run reading stdin cannot be "
                              "resumed"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("e3.st")));
}

/* Number field `key` ("next_line", ...) of the progress record at `record`, 0 when unreadable. */
static size_t record_field(const char *record, const char *key)
{
    char text[4096] = "", quoted[64];
    FILE *f = fopen(record, "rb");
    size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    text[n] = '\0';
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = strstr(text, quoted);
    return at != NULL ? (size_t)strtoul(at + strlen(quoted), NULL, 10) : 0;
}

/* The mark of the record at `record` ("next_line"), 0 when unreadable. */
static size_t record_next_line(const char *record)
{
    return record_field(record, "next_line");
}

/* The mark inside a chunked line: with 512-token batches (windows of 2048 tokens) the first window
 * ends after chunk 3 of line 1's five, so the first record's mark is (1, 4). The resumed run reads
 * line 1 again, drops its chunks 0..3 and gives the uninterrupted bytes and summary counts. Default
 * circuit (the tiny one has 16 positions), phonemes format: no espeak-ng. */
static void test_resume_inside_a_chunked_line(void)
{
    char cmd[4096], full[2048], resumed[2048], line[2048];
    FILE *f = fopen(ck_cli_tmp("k.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int i = 0; i < 180; i++) {
        fputs(i ? " h\xC9\x99l\xCB\x88O w\xCB\x88\xC9\x9C\xC9\xB9ld." : "h\xC9\x99l\xCB\x88O w\xCB\x88\xC9\x9C\xC9\xB9ld.", f);
    }
    fputs("\nh\xC9\x99l\xCB\x88O.\n\nw\xCB\x88\xC9\x9C\xC9\xB9ld.\n", f);
    fclose(f);
    const char *common = "-t 2 --no-progress -f phonemes --max-batch-tokens 512";
    snprintf(cmd, sizeof cmd, "%s %s -i %s -o %s 2>%s", ck_cli_binary(), common,
             ck_cli_tmp("k.txt"), ck_cli_tmp("k_full.st"), ck_cli_tmp("stderr"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(full, sizeof full, "%s", stderr_line("ckbatch: 4 lines, ", line));
    char *cut = strstr(full, " dropped symbols");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cut);
    *cut = '\0';
    CU_ASSERT_PTR_NOT_NULL(strstr(full, "(1 long lines chunked)"));
    snprintf(cmd, sizeof cmd, "exec %s -q %s -i %s -o %s 2>/dev/null", ck_cli_binary(), common,
             ck_cli_tmp("k.txt"), ck_cli_tmp("k.st"));
    ck_cli_kill_after_first_commit(cmd, ck_cli_tmp("k.st"));
    CU_ASSERT_EQUAL(record_field(ck_cli_tmp("k.st.partial.json"), "next_line"), 1);
    CU_ASSERT_EQUAL(record_field(ck_cli_tmp("k.st.partial.json"), "next_chunk"), 4);
    snprintf(cmd, sizeof cmd, "%s %s --resume -i %s -o %s 2>%s", ck_cli_binary(), common,
             ck_cli_tmp("k.txt"), ck_cli_tmp("k.st"), ck_cli_tmp("stderr"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    CU_ASSERT_TRUE(stderr_has("ckbatch: resuming at line 1 (chunk 4), 4 sequences already done"));
    snprintf(resumed, sizeof resumed, "%s", stderr_line("ckbatch: 4 lines, ", line));
    CU_ASSERT_EQUAL(strncmp(resumed, full, strlen(full)), 0);
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("k_full.st"), ck_cli_tmp("k.st")));
}

/* Resuming does not convert the lines before the mark again: the warning for line 2's dropped
 * symbol and the report of bad line 5 are not repeated (the killed run gave them), line 1450's
 * warning comes once, and the summary counts (lines, sequences, chunked, skipped, empty, dropped)
 * are an uninterrupted run's. */
static void test_resume_does_not_convert_lines_before_the_mark(void)
{
    char args[1024], full[2048], resumed[2048], line[2048];
    write_phonemes_corpus(ck_cli_tmp("p.txt"));
    snprintf(args, sizeof args, "-f phonemes --no-progress --on-error skip -i %s -o %s",
             ck_cli_tmp("p.txt"), ck_cli_tmp("p_full.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("p.txt:2: column 2: symbol U+0023 '#' not in vocab, dropped"));
    CU_ASSERT_TRUE(stderr_has("ckbatch: skipped: "));
    snprintf(full, sizeof full, "%s", stderr_line("ckbatch: 1500 lines, ", line));
    char *cut = strstr(full, " dropped symbols");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cut);
    *cut = '\0'; /* the rest is the time */
    run_and_kill_with("-f phonemes", ck_cli_tmp("p.txt"), ck_cli_tmp("p.st"));
    size_t mark = record_next_line(ck_cli_tmp("p.st.partial.json"));
    CU_ASSERT_FATAL(mark > 5 && mark <= 1450);
    snprintf(args, sizeof args, "-f phonemes --no-progress --on-error skip --resume -i %s -o %s",
             ck_cli_tmp("p.txt"), ck_cli_tmp("p.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("ckbatch: resuming at line "));
    CU_ASSERT_FALSE(stderr_has("p.txt:2: column"));
    CU_ASSERT_FALSE(stderr_has("ckbatch: skipped: "));
    CU_ASSERT_TRUE(stderr_has("p.txt:1450: column 2: symbol U+0023 '#' not in vocab, dropped"));
    snprintf(resumed, sizeof resumed, "%s", stderr_line("ckbatch: 1500 lines, ", line));
    CU_ASSERT_EQUAL(strncmp(resumed, full, strlen(full)), 0);
    if (strncmp(resumed, full, strlen(full)) != 0) {
        fprintf(stderr, "    summary \"%s\", uninterrupted \"%s\"\n", resumed, full);
    }
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("p_full.st"), ck_cli_tmp("p.st")));
}

/* A same-length edit inside a committed journal (an offset that is neither the first nor the last)
 * is refused by --resume naming the file; the run is not continued from damaged state. */
static void test_resume_refuses_an_edited_journal(void)
{
    char args[1024], what[700];
    write_corpus(ck_cli_tmp("h.txt"), 1);
    run_and_kill(ck_cli_tmp("h.txt"), ck_cli_tmp("h.st"));
    FILE *f = fopen(ck_cli_tmp("h.st.partial.offsets"), "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, 8, SEEK_SET), 0); /* offsets[1]: the first sequence's end */
    int was = fgetc(f);
    CU_ASSERT_EQUAL(fseek(f, 8, SEEK_SET), 0);
    fputc(was ^ 1, f);
    fclose(f);
    snprintf(args, sizeof args, "--on-error skip --resume -i %s -o %s", ck_cli_tmp("h.txt"),
             ck_cli_tmp("h.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    snprintf(what, sizeof what, "%s: changed since it was committed", ck_cli_tmp("h.st.partial.offsets"));
    CU_ASSERT_TRUE(stderr_has(what));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("h.st")));
    CU_ASSERT_TRUE(ck_cli_exists(ck_cli_tmp("h.st.partial.json"))); /* kept: the user decides */
}

/* A stdin run cannot be resumed: it never writes a progress record (so a run killed with SIGKILL
 * leaves journals that --resume treats as no progress), and one that fails after committing
 * windows removes its partial files and says why instead of suggesting --resume. */
static void test_stdin_run_leaves_nothing_resumable(void)
{
    char args[1024], cmd[4096];
    const char *src = getenv("CK_SOURCE_DIR");
    write_corpus(ck_cli_tmp("s.txt"), 0);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("s.txt"), ck_cli_tmp("s_full.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    /* 64 KiB per file: the 224 KiB rows journal fails after several committed windows */
    snprintf(cmd, sizeof cmd, "sh -c \"trap '' XFSZ; ulimit -f 128; exec %s " CK_ARGS " -i - -o %s "
             "< %s\" 2>%s/stderr", ck_cli_binary(), src ? src : ".", ck_cli_tmp("s.st"),
             ck_cli_tmp("s.txt"), ck_cli_work);
    int st = system(cmd);
    CU_ASSERT_EQUAL(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 1);
    CU_ASSERT_TRUE(stderr_has("disk full?"));
    CU_ASSERT_TRUE(stderr_has("a run reading stdin or a pipe cannot be resumed: its partial files beside "));
    CU_ASSERT_FALSE(stderr_has("--resume to continue"));
    static const char *const parts[] = {"s.st", "s.st.partial", "s.st.partial.seqs",
                                        "s.st.partial.skipped", "s.st.partial.offsets",
                                        "s.st.partial.json", "s.st.partial.lock"};
    for (size_t i = 0; i < 7; i++) {
        CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp(parts[i])));
    }
    /* killed: no record, and the same output resumed from the file starts from the beginning */
    snprintf(cmd, sizeof cmd, "exec %s " CK_ARGS " -i - -o %s < %s 2>/dev/null", ck_cli_binary(),
             src ? src : ".", ck_cli_tmp("s.st"), ck_cli_tmp("s.txt"));
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec nap = {0, 1000000};
    struct stat sb;
    int seen = 0;
    for (int i = 0; i < 60000 && !seen; i++) {
        seen = stat(ck_cli_tmp("s.st.partial"), &sb) == 0 && sb.st_size > 0;
        if (!seen) {
            nanosleep(&nap, NULL);
        }
    }
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("s.st.partial.json"))); /* rows journaled, no record */
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    CU_ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("s.st.partial.json")));
    snprintf(args, sizeof args, "--resume -i %s -o %s", ck_cli_tmp("s.txt"), ck_cli_tmp("s.st"));
    CU_ASSERT_EQUAL(run(args), 0);
    CU_ASSERT_TRUE(stderr_has("s.st: starting from the beginning"));
    CU_ASSERT_TRUE(same_bytes(ck_cli_tmp("s_full.st"), ck_cli_tmp("s.st")));
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
        {"fresh run says it discards a record", test_fresh_run_says_it_discards_a_record},
        {"SIGTERM stops cleanly and resumes", test_sigterm_stops_cleanly_and_resumes},
        {"--resume rejects changed input and options", test_resume_rejects_changed_input_and_options},
        {"--resume rejects an added --config", test_resume_rejects_added_config},
        {"--resume without record starts over", test_resume_without_record_starts_over},
        {"--resume converts no line before the mark", test_resume_does_not_convert_lines_before_the_mark},
        {"--resume refuses an edited journal", test_resume_refuses_an_edited_journal},
        {"--resume inside a chunked line", test_resume_inside_a_chunked_line},
        {"stdin run leaves nothing resumable", test_stdin_run_leaves_nothing_resumable},
        {"full disk: clear error, no final file", test_full_disk_is_a_clear_error_without_final_file},
        {"bad line under stop: no partial files", test_bad_line_under_stop_leaves_no_partial_files},
    };
    return ck_cli_main("cli_resume", cases, sizeof cases / sizeof cases[0]);
}
