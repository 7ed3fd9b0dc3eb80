/* test_cli_mpi.c - MPI mode through ckbatch-mpi under mpirun (built and run only with -DCK_MPI=ON;
 * ranks on this host, Open MPI kept to loopback: --mca btl self,vader --mca oob_tcp_if_include lo):
 * `mpirun -np 1..4` writes the single run's bytes whatever --threads and --max-batch-tokens; a bad
 * line in rank 2's range under stop is reported once, as a single run reports it, with its exit
 * code and nothing written; an injected rank failure names the rank, ends the job, and --resume
 * completes it identically; so does a rank killed with SIGKILL, and a resume with another number
 * of ranks is refused naming "ranks"; threads follow each rank's CPUs; a rank done early waits
 * without spinning. Phoneme lines through the tiny circuit (fast). `ckbatch-mpi speak` writes
 * the single `ckbatch speak` run's .wav in place (2 and 3 ranks, s16 and f32) and its directory
 * (synthetic weights, four short lines), and its bad lines as `ckbatch speak`
 * does. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_test.h"
#include "ckbatch.h"

#define CK_ARGS "-f phonemes --circuit %s/tests/fixtures/circuits/tiny.json"

/* mpirun (CMake's MPIEXEC_EXECUTABLE, passed by ctest as CK_MPIEXEC) on this host only, loopback
 * only, as root where CI runs; --oversubscribe above 2 ranks (this machine has 2 cores). */
static const char *mpirun(int np, const char *launcher)
{
    static char b[1024];
    const char *exe = getenv("CK_MPIEXEC");
    snprintf(b, sizeof b, "%s --allow-run-as-root --mca btl self,vader --mca oob_tcp_if_include lo "
             "%s %s -np %d", exe ? exe : "mpirun", np > 2 ? "--oversubscribe" : "", launcher, np);
    return b;
}

static const char *mpi_binary(void)
{
    static char b[512];
    const char *dir = getenv("CK_BINARY_DIR");
    snprintf(b, sizeof b, "%s/engine/ckbatch-mpi", dir ? dir : "build");
    return b;
}

static const char *common_args(void)
{
    static char b[1024];
    const char *src = getenv("CK_SOURCE_DIR");
    snprintf(b, sizeof b, CK_ARGS, src ? src : ".");
    return b;
}

static int exit_code(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ckbatch (one process) with the common arguments and `extra`; stderr to work/stderr. */
static int run_single(const char *extra)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s 2>%s", ck_cli_binary(), common_args(), extra,
             ck_cli_tmp("stderr"));
    return exit_code(system(cmd));
}

/* `env` mpirun -np np `launcher` ckbatch-mpi with the common arguments and `extra`. */
static void mpi_command(char *cmd, size_t cap, const char *env, int np, const char *launcher,
                        const char *extra)
{
    snprintf(cmd, cap, "env %s %s %s %s %s 2>%s", env, mpirun(np, launcher), mpi_binary(),
             common_args(), extra, ck_cli_tmp("stderr"));
}

static int run_mpi(const char *env, int np, const char *launcher, const char *extra)
{
    char cmd[8192];
    mpi_command(cmd, sizeof cmd, env, np, launcher, extra);
    return exit_code(system(cmd));
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* "in=IN out=OUT" style argument strings in the work directory. */
static const char *io(const char *in, const char *out, const char *extra)
{
    static char b[4][4096];
    static int next;
    char *s = b[next++ % 4];
    snprintf(s, sizeof b[0], "%.1024s -i %s -o %s", extra, ck_cli_tmp(in), ck_cli_tmp(out));
    return s;
}

/* Nothing of a run is left beside out: no in-place file, job record, lock or rank record. */
static int no_partials(const char *out)
{
    DIR *d = opendir(ck_cli_work);
    char prefix[256];
    int left = 0;
    snprintf(prefix, sizeof prefix, "%s.partial", out);
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "    left behind: %s\n", e->d_name);
            left = 1;
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    return !left;
}

/* A rank record: work/OUT.partial.rank-RRRRR-of-NNNNN.json. */
static const char *rank_record(const char *out, int r, int n)
{
    static char b[600];
    snprintf(b, sizeof b, "%s.partial.rank-%05d-of-%05d.json", ck_cli_tmp(out), r, n);
    return b;
}

/* np 1..4, each with -t 1 and -t 2 and its own --max-batch-tokens, plus -np 1 --bind-to none -t 2:
 * every file cmp-identical to the single -t 2 run (a bad line skipped, a BOM, CRLF, chunked and
 * empty lines), no rank fields in it, nothing left beside it. */
static void test_ranks_write_the_single_runs_bytes(void)
{
    char extra[256], out[64], what[64];
    ck_cli_write_phoneme_corpus(ck_cli_tmp("c.txt"), 1200, 450, 7);
    CU_ASSERT_EQUAL_FATAL(run_single(io("c.txt", "whole.st", "-t 2 --on-error skip")), 0);
    for (int np = 1; np <= 4; np++) {
        for (int t = 1; t <= 2; t++) {
            snprintf(out, sizeof out, "m%d_t%d.st", np, t);
            snprintf(extra, sizeof extra, "-t %d --on-error skip --max-batch-tokens %d", t,
                     512 + 256 * np);
            CU_ASSERT_EQUAL(run_mpi("", np, "", io("c.txt", out, extra)), 0);
            snprintf(what, sizeof what, "ckbatch: rank %d/%d (", np - 1, np);
            CU_ASSERT_TRUE(ck_cli_stderr_has(what));
            snprintf(what, sizeof what, "ckbatch: %d ranks: 1200 lines", np);
            CU_ASSERT_TRUE(ck_cli_stderr_has(what));
            CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("whole.st"), ck_cli_tmp(out)));
            CU_ASSERT_TRUE(no_partials(out));
        }
    }
    CU_ASSERT_EQUAL(run_mpi("", 1, "--bind-to none", io("c.txt", "unbound.st", "-t 2 --on-error "
                                                       "skip")), 0);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("whole.st"), ck_cli_tmp("unbound.st")));
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("m3_t1.st"), &err), CK_OK);
    CU_ASSERT_PTR_NULL(ck_features_metadata(f, "shard"));
    ck_features_close(f);
}

/* The bad line lies in rank 2's range of 3 (checked with ck_shard_split): the job exits with the
 * single run's code, prints the single run's error line once and no other error, and leaves no
 * output and no partial file. */
static void test_bad_line_in_rank_2_reported_once(void)
{
    char single[2048], line[2048];
    ck_shard_range r;
    ck_error err = {0};
    ck_cli_write_phoneme_corpus(ck_cli_tmp("bad.txt"), 900, 760, 3);
    CU_ASSERT_EQUAL_FATAL(ck_shard_split(ck_cli_tmp("bad.txt"), 2, 3, &r, &err), CK_OK);
    CU_ASSERT_FATAL(r.first_line <= 760 && 760 < r.first_line + r.lines);
    int single_rc = run_single(io("bad.txt", "b1.st", "-t 1"));
    CU_ASSERT_EQUAL(single_rc, 1);
    snprintf(single, sizeof single, "%s", ck_cli_stderr_line("ckbatch: error: ", line));
    CU_ASSERT_PTR_NOT_NULL(strstr(single, ":760: "));
    CU_ASSERT_EQUAL(run_mpi("", 3, "", io("bad.txt", "b3.st", "-t 1")), single_rc);
    CU_ASSERT_STRING_EQUAL(ck_cli_stderr_line("ckbatch: error: ", line), single);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("error"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("b3.st")));
    CU_ASSERT_TRUE(no_partials("b3.st"));
}

/* CK_TEST_FAIL_RANK=1 (the test-only hook): rank 1 of 3 fails in its second window; the job ends
 * within 15 s with a nonzero code, the error names "rank 1/3", no output appears and the committed
 * state stays; --resume (other --threads) completes the single run's bytes. */
static void test_injected_rank_failure_then_resume(void)
{
    ck_cli_write_phoneme_corpus(ck_cli_tmp("f.txt"), 4000, 0, 11);
    CU_ASSERT_EQUAL_FATAL(run_single(io("f.txt", "fwhole.st", "-t 2")), 0);
    double t0 = now();
    int rc = run_mpi("CK_TEST_FAIL_RANK=1", 3, "", io("f.txt", "f.st", "-t 1 --max-batch-tokens "
                                                       "512"));
    CU_ASSERT_NOT_EQUAL(rc, 0);
    CU_ASSERT_TRUE(now() - t0 < 15.0);
    CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: rank 1/3 ("));
    CU_ASSERT_TRUE(ck_cli_stderr_has("injected failure (CK_TEST_FAIL_RANK, test only)"));
    CU_ASSERT_TRUE(ck_cli_stderr_has("run the job again with --resume and the same number of "
                                     "ranks (3)"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("f.st")));
    CU_ASSERT_TRUE(ck_cli_exists(rank_record("f.st", 1, 3)));
    CU_ASSERT_EQUAL(run_mpi("", 3, "", io("f.txt", "f.st", "-t 2 --resume")), 0);
    CU_ASSERT_TRUE(ck_cli_stderr_has("resuming at sequence "));
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("fwhole.st"), ck_cli_tmp("f.st")));
    CU_ASSERT_TRUE(no_partials("f.st"));
}

/* The pid of the ckbatch-mpi process whose MPI rank is `rank` and whose command line names `out`
 * (read from /proc: Open MPI gives every rank OMPI_COMM_WORLD_RANK); 0 when none. */
static pid_t rank_pid(int rank, const char *out)
{
    char want[64], path[300];
    static char buf[1 << 16];
    snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
    DIR *d = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL && !found; e = readdir(d)) {
        int has_rank = 0, has_out = 0;
        for (int part = 0; part < 2; part++) {
            snprintf(path, sizeof path, "/proc/%s/%s", e->d_name, part ? "environ" : "cmdline");
            FILE *f = fopen(path, "rb");
            size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
            if (f != NULL) {
                fclose(f);
            }
            for (size_t at = 0; at < n; at += strlen(buf + at) + 1) {
                buf[n] = '\0';
                has_out |= part == 0 && strcmp(buf + at, out) == 0;
                has_rank |= part == 1 && strcmp(buf + at, want) == 0;
            }
        }
        found = has_rank && has_out ? (pid_t)atoi(e->d_name) : 0;
    }
    if (d != NULL) {
        closedir(d);
    }
    return found;
}

/* Rank 1 of 2 SIGKILLed once its first window is committed: the job ends nonzero without output;
 * --resume with 3 ranks is refused naming "ranks" (the state kept); --resume with 2 completes the
 * single run's bytes. */
static void test_killed_rank_then_resume(void)
{
    char cmd[8192];
    ck_cli_write_phoneme_corpus(ck_cli_tmp("k.txt"), 40000, 0, 5);
    CU_ASSERT_EQUAL_FATAL(run_single(io("k.txt", "kwhole.st", "-t 2")), 0);
    mpi_command(cmd, sizeof cmd, "", 2, "", io("k.txt", "k.st", "-t 1 --max-batch-tokens 512"));
    pid_t job = fork();
    CU_ASSERT_FATAL(job >= 0);
    if (job == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    struct timespec nap = {0, 2000000};
    pid_t victim = 0;
    for (int i = 0; i < 10000 && victim == 0; i++) {
        nanosleep(&nap, NULL);
        victim = ck_cli_exists(rank_record("k.st", 1, 2)) ? rank_pid(1, ck_cli_tmp("k.st")) : 0;
    }
    CU_ASSERT_FATAL(victim > 0);
    kill(victim, SIGKILL);
    int st = 0;
    waitpid(job, &st, 0);
    CU_ASSERT_NOT_EQUAL(exit_code(st), 0);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("k.st")));
    CU_ASSERT_TRUE(ck_cli_exists(rank_record("k.st", 1, 2)));
    CU_ASSERT_EQUAL(run_mpi("", 3, "", io("k.txt", "k.st", "-t 1 --resume")), 3); /* CK_E_STATE */
    CU_ASSERT_TRUE(ck_cli_stderr_has("field \"ranks\": the interrupted run had ranks=2, this run "
                                     "has ranks=3"));
    CU_ASSERT_TRUE(ck_cli_exists(rank_record("k.st", 1, 2)));
    CU_ASSERT_EQUAL(run_mpi("", 2, "", io("k.txt", "k.st", "-t 1 --resume")), 0);
    CU_ASSERT_TRUE(ck_cli_stderr_has("ckbatch: rank 1/2 ("));
    CU_ASSERT_TRUE(ck_cli_stderr_has("resuming at sequence "));
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("kwhole.st"), ck_cli_tmp("k.st")));
    CU_ASSERT_TRUE(no_partials("k.st"));
}

/* Each rank's "memory: ... scratch W x" line, W its workers, must show `workers`. */
static void assert_workers(int rank, int np, int workers)
{
    char what[128], line[2048];
    snprintf(what, sizeof what, "ckbatch: rank %d/%d (", rank, np);
    FILE *f = fopen(ck_cli_tmp("stderr"), "rb");
    int seen = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        const char *s = strstr(line, "scratch ");
        if (strncmp(line, what, strlen(what)) == 0 && s != NULL) {
            seen = atoi(s + strlen("scratch "));
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    if (seen != workers) {
        fprintf(stderr, "    rank %d/%d: %d workers, expected %d\n", rank, np, seen, workers);
    }
    CU_ASSERT_EQUAL(seen, workers);
}

/* Without --threads each rank runs as many workers as CPUs it may use: 1 each under mpirun's
 * default binding of 2 ranks to a core each, all of this process's CPUs with --bind-to none, and 1
 * under taskset -c 0. */
static void test_threads_follow_affinity(void)
{
    cpu_set_t set;
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof set, &set), 0);
    int cpus = CPU_COUNT(&set);
    char env[64];
    ck_cli_write_phoneme_corpus(ck_cli_tmp("a.txt"), 200, 0, 2);
    if (cpus >= 2) {
        CU_ASSERT_EQUAL(run_mpi("", 2, "", io("a.txt", "a2.st", "")), 0); /* default binding */
        assert_workers(0, 2, 1);
        assert_workers(1, 2, 1);
    }
    CU_ASSERT_EQUAL(run_mpi("", 1, "--bind-to none", io("a.txt", "a1.st", "")), 0);
    assert_workers(0, 1, cpus);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            snprintf(env, sizeof env, "taskset -c %d", c);
            break;
        }
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s --bind-to none %s %s 2>%s", env, mpirun(1, ""),
             mpi_binary(), io("a.txt", "a0.st", common_args()), ck_cli_tmp("stderr"));
    CU_ASSERT_EQUAL(exit_code(system(cmd)), 0);
    assert_workers(0, 1, 1);
}

/* Rank 0's half of the input is blank lines (no tokens), rank 1's is real work: rank 0 waits for
 * rank 1 the whole encoding and reports that wait; its CPU time while waiting is under 10% of it
 * (a polled non-blocking barrier sleeps between polls). */
static void test_no_spin_while_waiting(void)
{
    FILE *f = fopen(ck_cli_tmp("w.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int i = 0; i < 4000; i++) {
        fprintf(f, "%100s\n", "");
    }
    fclose(f);
    ck_cli_write_phoneme_corpus(ck_cli_tmp("w2.txt"), 60000, 0, 9);
    char cmd[1200], line[2048];
    snprintf(cmd, sizeof cmd, "head -c 400000 %s >> %s", ck_cli_tmp("w2.txt"), ck_cli_tmp("w.txt"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    CU_ASSERT_EQUAL(run_mpi("", 2, "", io("w.txt", "w.st", "-t 1")), 0);
    const char *at = NULL;
    FILE *e = fopen(ck_cli_tmp("stderr"), "rb");
    while (e != NULL && at == NULL && fgets(line, sizeof line, e) != NULL) {
        at = strncmp(line, "ckbatch: rank 0/2 (", 19) == 0 ? strstr(line, "waited ") : NULL;
    }
    if (e != NULL) {
        fclose(e);
    }
    double wait = 0, cpu = 1e9;
    CU_ASSERT_FATAL(at != NULL &&
                    sscanf(at, "waited %lf s for the other ranks, %lf s CPU", &wait, &cpu) == 2);
    fprintf(stderr, "    rank 0 waited %.3f s using %.3f s CPU\n", wait, cpu);
    CU_ASSERT_TRUE(wait > 0.3);
    CU_ASSERT_TRUE(cpu < 0.1 * wait);
}

/* `ckbatch speak` (np 0) or `mpirun -np np ckbatch-mpi speak` on the embedded synthetic weights,
 * voice synthetic, with `extra` (default: phoneme lines of speech's vocab); stderr to
 * work/stderr. */
static int run_speak_with(int np, const char *extra, const char *in, const char *out)
{
    char cmd[8192], bin[2048];
    snprintf(bin, sizeof bin, "%s %s", np > 0 ? mpirun(np, "") : "",
             np > 0 ? mpi_binary() : ck_cli_binary());
    snprintf(cmd, sizeof cmd, "%s speak -q --voice synthetic --threads 1 --max-batch-frames 256 "
             "%s -i %s -o %s 2>%s", bin, extra, ck_cli_tmp(in), ck_cli_tmp(out),
             ck_cli_tmp("stderr"));
    return exit_code(system(cmd));
}

static int run_speak(int np, const char *in, const char *out)
{
    return run_speak_with(np, "-f phonemes", in, out);
}

/* Nothing named NAME.shard-* in the work directory or its subdirectory `dir` ("" for none). */
static int no_shards(const char *dir, const char *name)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ls %s/%s | grep -q '^%s\\.shard-'", ck_cli_work, dir, name);
    return system(cmd) != 0;
}

/* One .wav OUT and its sidecar equal to the single run's (cmp), with no partial or shard left. */
static void check_same_wav(const char *single, const char *ranks)
{
    char a[256], b[256];
    snprintf(a, sizeof a, "%s.jsonl", single);
    snprintf(b, sizeof b, "%s.jsonl", ranks);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp(single), ck_cli_tmp(ranks)));
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp(a), ck_cli_tmp(b)));
    CU_ASSERT_TRUE(no_shards("", ranks));
    CU_ASSERT_TRUE(no_partials(ranks));
    CU_ASSERT_TRUE(no_partials(b));
}

/* speak under mpirun, .wav OUT in place: 2 and 3 ranks (s16), 3 (f32) write the single run's WAV
 * and sidecar bytes, and nothing else is left; the directory OUT (shards whose records rank 0
 * joins) with 3 ranks too. (A line of two chunks, over 510 phonemes, was checked by hand at 2
 * ranks, s16 and f32: its 20 s of audio would take most of a minute here.) */
static void test_speak_ranks_write_the_single_runs_bytes(void)
{
    ck_cli_write_file(ck_cli_tmp("sp.txt"), "\xc3\xb0\xc9\x99 k\xcb\x88\xc3\xa6t\n\n"
                      "h\xc9\x99l\xcb\x88O\nl\xcb\x88\xc3\xa6st\n");
    CU_ASSERT_EQUAL_FATAL(run_speak(0, "sp.txt", "sp1.wav"), 0);
    CU_ASSERT_EQUAL(run_speak(2, "sp.txt", "sp2.wav"), 0);
    check_same_wav("sp1.wav", "sp2.wav");
    CU_ASSERT_EQUAL(run_speak(3, "sp.txt", "sp3.wav"), 0);
    check_same_wav("sp1.wav", "sp3.wav");
    CU_ASSERT_EQUAL_FATAL(run_speak_with(0, "-f phonemes --sample-format f32", "sp.txt",
                                         "sf1.wav"), 0);
    CU_ASSERT_EQUAL(run_speak_with(3, "-f phonemes --sample-format f32", "sp.txt", "sf3.wav"), 0);
    check_same_wav("sf1.wav", "sf3.wav");
    CU_ASSERT_EQUAL_FATAL(run_speak(0, "sp.txt", "spd1"), 0);
    CU_ASSERT_EQUAL(run_speak(3, "sp.txt", "spd3"), 0);
    static const char *const files[] = {"000000.wav", "000002.wav", "000003.wav",
                                        "timestamps.jsonl"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "spd1/%s", files[i]);
        snprintf(b, sizeof b, "spd3/%s", files[i]);
        CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp(a), ck_cli_tmp(b)));
    }
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("spd3/000001.wav")));
    CU_ASSERT_TRUE(no_shards("spd3", "timestamps.jsonl"));
}

/* A .wav OUT is written in place and cannot be resumed: --resume is a usage error (exit 2),
 * printed once, nothing written. */
static void test_speak_wav_resume_refused(void)
{
    ck_cli_write_file(ck_cli_tmp("rs.txt"), "l\xcb\x88\xc3\xa6st\n");
    CU_ASSERT_EQUAL(run_speak_with(2, "-f phonemes --resume", "rs.txt", "rs.wav"), 2);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("cannot resume it"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("rs.wav")));
    CU_ASSERT_TRUE(no_partials("rs.wav"));
}

/* speak, a bad id on line 2 of 7 (rank 0's) and line 6 (rank 1's): under stop the job prints the
 * single run's error line once, exits 1 and writes nothing; under skip it exits 4 with the single
 * run's bytes. */
static void test_speak_bad_lines(void)
{
    char single[2048], line[2048];
    ck_cli_write_file(ck_cli_tmp("ids.txt"), "[50,60,70]\n[9999]\n\n[40,41]\n[12,13,14,15]\n"
                      "[9999]\n[30,31]\n");
    CU_ASSERT_EQUAL(run_speak_with(0, "-f ids", "ids.txt", "i1.wav"), 1);
    snprintf(single, sizeof single, "%s", ck_cli_stderr_line("ckbatch: speak: ", line));
    CU_ASSERT_PTR_NOT_NULL(strstr(single, "ids.txt:2: element 1: id 9999 out of range"));
    CU_ASSERT_EQUAL(run_speak_with(2, "-f ids", "ids.txt", "i2.wav"), 1);
    CU_ASSERT_STRING_EQUAL(ck_cli_stderr_line("ckbatch: speak: ", line), single);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("9999"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("i2.wav")));
    CU_ASSERT_TRUE(no_shards("", "i2.wav"));
    CU_ASSERT_TRUE(no_partials("i2.wav"));
    CU_ASSERT_EQUAL(run_speak_with(0, "-f ids --on-error skip", "ids.txt", "k1.wav"), 4);
    CU_ASSERT_EQUAL(run_speak_with(2, "-f ids --on-error skip", "ids.txt", "k2.wav"), 4);
    check_same_wav("k1.wav", "k2.wav");
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"speak: 2 and 3 ranks write the single run's .wav in place (s16, f32), 3 its directory",
         test_speak_ranks_write_the_single_runs_bytes},
        {"speak: --resume of a .wav refused (exit 2)", test_speak_wav_resume_refused},
        {"speak: a bad line printed once (stop), the single run's bytes (skip)",
         test_speak_bad_lines},
        {"ranks write the single run's bytes (np 1..4, -t 1 and 2)",
         test_ranks_write_the_single_runs_bytes},
        {"a bad line in rank 2's range is reported once", test_bad_line_in_rank_2_reported_once},
        {"an injected rank failure ends the job; --resume completes it",
         test_injected_rank_failure_then_resume},
        {"a rank killed with SIGKILL; --resume with the same N completes it",
         test_killed_rank_then_resume},
        {"threads follow each rank's CPUs", test_threads_follow_affinity},
        {"a rank done early waits without spinning", test_no_spin_while_waiting},
    };
    return ck_cli_main("cli_mpi", cases, sizeof cases / sizeof cases[0]);
}
