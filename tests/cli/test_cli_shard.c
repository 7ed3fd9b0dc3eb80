/* test_cli_shard.c - shard mode through the ckbatch binary: ck_shard_split's ranges cover the
 * input once at line starts; `--shard I/N` runs (each with its own --threads and
 * --max-batch-tokens) merged by `ckbatch merge` are byte-identical to a single run for N in
 * {1, 2, 3, 7} and for more shards than lines; a shard killed with SIGKILL resumes; a bad line
 * under stop is reported with its global line number exactly as a single run reports it; merge
 * refuses a missing, unfinished, duplicate, foreign or differently made shard naming the shard and
 * the field, and leaves no output. Phoneme lines through the tiny circuit (fast). */
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_test.h"
#include "ckbatch.h"

#define CK_ARGS "-f phonemes --circuit %s/tests/fixtures/circuits/tiny.json"

/* Runs ckbatch (the common arguments, then `extra`); stderr to ck_cli_work/stderr. Exit code. */
static int run(const char *extra)
{
    char cmd[4096], args[1024];
    const char *src = getenv("CK_SOURCE_DIR");
    snprintf(args, sizeof args, CK_ARGS, src ? src : ".");
    snprintf(cmd, sizeof cmd, "%s %s %s 2>%s/stderr", ck_cli_binary(), args, extra, ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs `ckbatch merge -o OUT` plus `shards` (may be ""): exit code, stderr as run's. */
static int merge(const char *out, const char *shards)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s merge -o %s %s 2>%s/stderr", ck_cli_binary(), out, shards,
             ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* OUT.shard-IIIII-of-NNNNN in the work directory. */
static const char *shard_file(const char *out, size_t i, size_t n)
{
    static char bufs[4][512];
    static int next;
    char *b = bufs[next++ % 4];
    ck_shard_path(b, 512, ck_cli_tmp(out), i, n);
    return b;
}

/* Runs shard i/n of input into out (with `extra`); asserts exit 0. */
static void run_shard(const char *input, const char *out, size_t i, size_t n, const char *extra)
{
    char args[2048];
    snprintf(args, sizeof args, "--shard %zu/%zu %s -i %s -o %s", i, n, extra, ck_cli_tmp(input),
             ck_cli_tmp(out));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
}

/* The single-run reference: -t 2, default batch size, --on-error skip. */
static void run_whole(const char *input, const char *out)
{
    char args[1024];
    snprintf(args, sizeof args, "-t 2 --on-error skip -i %s -o %s", ck_cli_tmp(input),
             ck_cli_tmp(out));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
}

/* Every range of N in 1..24 starts at a line start at or after floor(i*S/N), the ranges are
 * contiguous from 0 to S, and their lines add up to the file's with first lines following on. */
static void test_split_covers_input_once_at_line_starts(void)
{
    ck_cli_write_phoneme_corpus(ck_cli_tmp("s.txt"), 300, 0, 1);
    FILE *f = fopen(ck_cli_tmp("s.txt"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char bytes[1 << 16];
    size_t S = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    for (size_t n = 1; n <= 24; n++) {
        unsigned long long at = 0;
        size_t line = 1;
        for (size_t i = 0; i < n; i++) {
            ck_shard_range r;
            ck_error err = {0};
            CU_ASSERT_EQUAL_FATAL(ck_shard_split(ck_cli_tmp("s.txt"), i, n, &r, &err), CK_OK);
            CU_ASSERT_EQUAL(r.input_bytes, S);
            CU_ASSERT_EQUAL(r.start, at);
            CU_ASSERT_EQUAL(r.first_line, line);
            CU_ASSERT_TRUE(r.start == 0 || r.start == S || bytes[r.start - 1] == '\n');
            CU_ASSERT_TRUE(r.start >= (unsigned long long)(S * i / n));
            at = r.end;
            line += r.lines;
        }
        CU_ASSERT_EQUAL(at, S);
        CU_ASSERT_EQUAL(line, 301); /* 300 lines, the last without its newline */
    }
    ck_shard_range r;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_shard_split(ck_cli_tmp("s.txt"), 3, 3, &r, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_shard_split(ck_cli_tmp("s.txt"), 0, 0, &r, &err), CK_E_ARG);
}

/* Shards run with -t 1 and their own --max-batch-tokens, merged: the single run's bytes, for N
 * in {1, 2, 3, 7}; each shard names its range on stderr. */
static void test_merged_shards_equal_a_single_run(void)
{
    static const size_t counts[] = {1, 2, 3, 7};
    char extra[256], out[64];
    ck_cli_write_phoneme_corpus(ck_cli_tmp("c.txt"), 1200, 450, 7);
    run_whole("c.txt", "whole.st");
    for (size_t c = 0; c < 4; c++) {
        size_t n = counts[c];
        snprintf(out, sizeof out, "m%zu.st", n);
        for (size_t i = 0; i < n; i++) {
            snprintf(extra, sizeof extra, "-t 1 --on-error skip --max-batch-tokens %zu",
                     512 + 256 * i);
            run_shard("c.txt", out, i, n, extra);
            snprintf(extra, sizeof extra, "ckbatch: shard %zu/%zu: input bytes ", i, n);
            CU_ASSERT_TRUE(ck_cli_stderr_has(extra));
        }
        CU_ASSERT_EQUAL(merge(ck_cli_tmp(out), ""), 0);
        CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: merged "));
        CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("whole.st"), ck_cli_tmp(out)));
    }
    /* the merged file carries no shard entry; a shard file does */
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("m3.st"), &err), CK_OK);
    CU_ASSERT_PTR_NULL(ck_features_metadata(f, "shard"));
    ck_features_close(f);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, shard_file("m3.st", 1, 3), &err), CK_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_features_metadata(f, "shard"), "\"index\":1,\"count\":3,"));
    ck_features_close(f);
}

/* More shards than lines, and lines longer than S/N: the empty shards are valid files and the
 * merge is still the single run's bytes. */
static void test_more_shards_than_lines(void)
{
    FILE *f = fopen(ck_cli_tmp("few.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(";:,.!?;:,.!?;:,.!?;:,.!?\n,,\n\n!?!?!?\n", f);
    fclose(f);
    run_whole("few.txt", "fw.st");
    for (size_t i = 0; i < 12; i++) {
        run_shard("few.txt", "fs.st", i, 12, "-t 1 --on-error skip");
    }
    ck_features_file *e = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&e, shard_file("fs.st", 11, 12), &err), CK_OK);
    CU_ASSERT_EQUAL(ck_features_tensor(e, "offsets")->shape[0], 1); /* no sequence */
    ck_features_close(e);
    CU_ASSERT_EQUAL(merge(ck_cli_tmp("fs.st"), ""), 0);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("fw.st"), ck_cli_tmp("fs.st")));
}

/* Shard 1/2 killed after its first commit: merge names it unfinished; --resume (other threads
 * and batch size) finishes it and the merge equals the single run. A requeued shard run again
 * from the start replaces its file with the same bytes. */
static void test_killed_shard_resumes(void)
{
    char cmd[4096];
    const char *src = getenv("CK_SOURCE_DIR");
    ck_cli_write_phoneme_corpus(ck_cli_tmp("k.txt"), 3000, 0, 11);
    run_whole("k.txt", "kw.st");
    run_shard("k.txt", "ks.st", 0, 2, "-t 1 --on-error skip");
    snprintf(cmd, sizeof cmd, "exec %s " CK_ARGS " -t 1 --max-batch-tokens 512 --on-error skip "
             "--shard 1/2 -i %s -o %s 2>/dev/null", ck_cli_binary(), src ? src : ".",
             ck_cli_tmp("k.txt"), ck_cli_tmp("ks.st"));
    ck_cli_kill_after_first_commit(cmd, shard_file("ks.st", 1, 2));
    CU_ASSERT_EQUAL(merge(ck_cli_tmp("ks.st"), ""), 1);
    CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: error: merge: shard 1/2 missing: input bytes "));
    CU_ASSERT_TRUE(ck_cli_stderr_has("is unfinished: run that shard again with resume on)"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("ks.st")));
    run_shard("k.txt", "ks.st", 1, 2, "-t 2 --max-batch-tokens 900 --on-error skip --resume");
    CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: resuming at line "));
    CU_ASSERT_EQUAL(merge(ck_cli_tmp("ks.st"), ""), 0);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("kw.st"), ck_cli_tmp("ks.st")));
    run_shard("k.txt", "ks.st", 0, 2, "-t 1 --on-error skip --resume"); /* a requeue */
    CU_ASSERT_TRUE(ck_cli_stderr_has("no progress record for "));
    CU_ASSERT_EQUAL(merge(ck_cli_tmp("ks2.st"), ""), 1); /* no shard files of that name */
    CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: error: merge: no shard files "));
    CU_ASSERT_EQUAL(merge(ck_cli_tmp("ks.st"), ""), 0);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("kw.st"), ck_cli_tmp("ks.st")));
}

/* A bad line under stop in shard 1's range: the same error line as the single run's (global line
 * number), exit 1, no shard file and no partial files. */
static void test_bad_line_reported_as_a_single_run_reports_it(void)
{
    char args[1024], whole[2048], part[2048];
    ck_cli_write_phoneme_corpus(ck_cli_tmp("b.txt"), 1200, 1000, 3);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("b.txt"), ck_cli_tmp("bw.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    snprintf(whole, sizeof whole, "%s", ck_cli_stderr_line("ckbatch: error: ", part));
    CU_ASSERT_PTR_NOT_NULL(strstr(whole, "b.txt:1000: "));
    snprintf(args, sizeof args, "--shard 1/2 -i %s -o %s", ck_cli_tmp("b.txt"), ck_cli_tmp("bs.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_STRING_EQUAL(ck_cli_stderr_line("ckbatch: error: ", part), whole);
    CU_ASSERT_FALSE(ck_cli_exists(shard_file("bs.st", 1, 2)));
    snprintf(part, sizeof part, "%s.partial.json", shard_file("bs.st", 1, 2));
    CU_ASSERT_FALSE(ck_cli_exists(part));
}

/* --shard without its count, out of range, or with stdin: usage errors before any work. */
static void test_shard_usage_errors(void)
{
    CU_ASSERT_EQUAL(run("--shard 3 -i x.txt -o y.st"), 2);
    CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: --shard 3: expected I/N, the shard index (0-based) and the "
                              "shard count"));
    CU_ASSERT_EQUAL(run("--shard 3/3 -i x.txt -o y.st"), 2);
    CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: --shard 3/3: expected I/N with 0 <= I < N <= 1000000"));
    CU_ASSERT_EQUAL(run("--shard 0/2 -i - -o y.st </dev/null"), 2);
    CU_ASSERT_TRUE(ck_cli_stderr_has("--shard needs a regular --input file"));
    CU_ASSERT_EQUAL(merge("", ""), 2);
}

/* Runs `merge -o bad.st SHARDS` expecting a refusal whose error line holds `what`, and no output. */
static void refused(const char *shards, const char *what)
{
    CU_ASSERT_EQUAL(merge(ck_cli_tmp("bad.st"), shards), 1);
    CU_ASSERT_TRUE(ck_cli_stderr_has(what));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("bad.st")));
}

/* Merge refuses what does not fit together, naming the shard and the field. */
static void test_merge_refusals(void)
{
    char list[4096], what[2048];
    ck_cli_write_phoneme_corpus(ck_cli_tmp("r.txt"), 600, 0, 5);
    ck_cli_write_phoneme_corpus(ck_cli_tmp("o.txt"), 600, 0, 6); /* another corpus */
    for (size_t i = 0; i < 3; i++) {
        run_shard("r.txt", "r.st", i, 3, "-t 1");
        run_shard("o.txt", "o.st", i, 3, "-t 1");
    }
    char s0[512], s1[512], s2[512];
    snprintf(s0, sizeof s0, "%s", shard_file("r.st", 0, 3));
    snprintf(s1, sizeof s1, "%s", shard_file("r.st", 1, 3));
    snprintf(s2, sizeof s2, "%s", shard_file("r.st", 2, 3));
    snprintf(list, sizeof list, "%s %s", s0, s2);
    refused(list, "ckbatch: error: merge: shard 1/3 missing: input bytes ");
    refused(list, "was not given or never ran)");
    snprintf(list, sizeof list, "%s %s %s %s", s0, s1, s1, s2);
    snprintf(what, sizeof what, "merge: shard 1/3 given twice: %s and %s", s1, s1);
    refused(list, what);
    snprintf(list, sizeof list, "%s %s %s", s0, shard_file("o.st", 1, 3), s2);
    snprintf(what, sizeof what, "merge: shard 1/3 (%s): field \"input_sha256\" differs from shard "
             "0/3 (%s)'s", shard_file("o.st", 1, 3), s0);
    refused(list, what);
    run_shard("r.txt", "r2.st", 2, 4, "-t 1");
    snprintf(list, sizeof list, "%s %s %s", s0, s1, shard_file("r2.st", 2, 4));
    refused(list, "field \"count\" differs from shard 0/3 (");
    run_shard("r.txt", "l.st", 1, 3, "-t 1 --layer hidden");
    snprintf(list, sizeof list, "%s %s %s", s0, shard_file("l.st", 1, 3), s2);
    refused(list, "merge: shard 1/3 (");
    refused(list, "field \"options\" differs from shard 0/3 (");
    run_shard("r.txt", "w.st", 2, 3, "-t 1 --seed 7");
    snprintf(list, sizeof list, "%s %s %s", s0, s1, shard_file("w.st", 2, 3));
    refused(list, "metadata \"weights\" differs from shard 0/3 (");
    run_whole("r.txt", "rw.st");
    snprintf(list, sizeof list, "%s %s", s0, ck_cli_tmp("rw.st"));
    snprintf(what, sizeof what, "%s: not a shard file (no \"shard\" metadata)", ck_cli_tmp("rw.st"));
    refused(list, what);
    if (strcmp(ck_kernels_isa(), "avx512") == 0) { /* another kernel ISA gives other bits */
        char args[1024];
        snprintf(args, sizeof args, "--shard 1/3 -t 1 -i %s -o %s", ck_cli_tmp("r.txt"),
                 ck_cli_tmp("p.st"));
        setenv("CK_MAX_CPU_ISA", "portable", 1);
        CU_ASSERT_EQUAL(run(args), 0);
        unsetenv("CK_MAX_CPU_ISA");
        snprintf(list, sizeof list, "%s %s %s", s0, shard_file("p.st", 1, 3), s2);
        refused(list, "field \"isa\" differs from shard 0/3 (");
    }
    snprintf(list, sizeof list, "%s %s %s", s2, s0, s1); /* any order */
    CU_ASSERT_EQUAL(merge(ck_cli_tmp("ok.st"), list), 0);
}

/* examples/slurm without Slurm: encode.sbatch run as array tasks 0..4 of 5 in shuffled order (task
 * 3 twice, as a requeue does), then merge.sbatch: the single run's bytes, and the shards removed.
 * An array index at or above SHARDS, and a missing SHARDS, fail before any work. */
static void test_slurm_scripts_emulated(void)
{
    static const int order[] = {3, 0, 4, 3, 1, 2};
    const char *src = getenv("CK_SOURCE_DIR");
    char env[4096], cmd[8192];
    ck_cli_write_phoneme_corpus(ck_cli_tmp("a.txt"), 900, 300, 13);
    run_whole("a.txt", "aw.st");
    snprintf(env, sizeof env, "SHARDS=5 INPUT=%s OUTPUT=%s CKBATCH=%s CKBATCH_ARGS='" CK_ARGS
             " --on-error skip -q' SLURM_CPUS_PER_TASK=1", ck_cli_tmp("a.txt"),
             ck_cli_tmp("as.st"), ck_cli_binary(), src ? src : ".");
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        snprintf(cmd, sizeof cmd, "env %s SLURM_ARRAY_TASK_ID=%d bash %s/examples/slurm/"
                 "encode.sbatch 2>%s/stderr", env, order[k], src ? src : ".", ck_cli_work);
        CU_ASSERT_EQUAL(system(cmd), 0);
    }
    snprintf(cmd, sizeof cmd, "env %s bash %s/examples/slurm/merge.sbatch 2>%s/stderr", env,
             src ? src : ".", ck_cli_work);
    CU_ASSERT_EQUAL(system(cmd), 0);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("aw.st"), ck_cli_tmp("as.st")));
    CU_ASSERT_FALSE(ck_cli_exists(shard_file("as.st", 0, 5)));
    snprintf(cmd, sizeof cmd, "env %s SLURM_ARRAY_TASK_ID=5 bash %s/examples/slurm/encode.sbatch "
             "2>%s/stderr", env, src ? src : ".", ck_cli_work);
    CU_ASSERT_EQUAL(WEXITSTATUS(system(cmd)), 2);
    CU_ASSERT_TRUE(ck_cli_stderr_has("encode.sbatch: array index 5 is not below SHARDS=5"));
    snprintf(cmd, sizeof cmd, "env -u SHARDS SLURM_ARRAY_TASK_ID=0 bash %s/examples/slurm/"
             "encode.sbatch 2>%s/stderr", src ? src : ".", ck_cli_work);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0);
    CU_ASSERT_TRUE(ck_cli_stderr_has("SHARDS: set SHARDS, the shard count N"));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"split covers the input once at line starts", test_split_covers_input_once_at_line_starts},
        {"merged shards equal a single run (N 1, 2, 3, 7)", test_merged_shards_equal_a_single_run},
        {"more shards than lines", test_more_shards_than_lines},
        {"a killed shard resumes; merge names it unfinished", test_killed_shard_resumes},
        {"bad line reported as a single run reports it",
         test_bad_line_reported_as_a_single_run_reports_it},
        {"--shard usage errors", test_shard_usage_errors},
        {"merge refusals name the shard and field", test_merge_refusals},
        {"examples/slurm scripts, array emulated", test_slurm_scripts_emulated},
    };
    return ck_cli_main("cli_shard", cases, sizeof cases / sizeof cases[0]);
}
