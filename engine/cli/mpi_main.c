/* mpi_main.c - ckbatch-mpi, the MPI front end: one rank per process (mpirun, srun --mpi=pmix),
 * each encoding range `rank` of ck_shard_split(input, rank, size) into the one output file, in
 * place (ck_rank_*, include/ckbatch.h); `ckbatch-mpi speak` writes a .wav OUT in place the same
 * way (ck_speak_rank_*), a directory OUT as shards whose records rank 0 joins. The only file of ckbatch that includes
 * mpi.h: it moves the ranks' counts between them, waits without spinning, prints (every line
 * "ckbatch: rank r/N (host): ...", except the bad line of --on-error stop, printed once exactly as
 * ckbatch prints it) and picks the exit code: 0, 1 (input or runtime error), 2 usage, 3 resume
 * refused (CK_E_STATE), 4 (speak: written, lines skipped). Computes nothing itself. */
#define _GNU_SOURCE /* gethostname, RUSAGE_SELF */
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ckbatch.h"
#include "cli.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_STATE = 3 };

/* Who this process is, for every line it prints. */
typedef struct {
    int rank, size;
    char host[64];
    int quiet;
    long fail_after;  /* test hook: batches before this rank fails, -1 when it does not */
    long batches;
} rank_ctx;

static rank_ctx me;

/* One line, written with one call so the lines of ranks sharing a terminal do not interleave. */
static void say(const char *fmt, ...)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "ckbatch: rank %d/%d (%s): ", me.rank, me.size, me.host);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof line) {
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    }
    va_end(ap);
    line[sizeof line - 2] = '\0';
    fprintf(stderr, "%s\n", line);
}

static void log_rank(void *ctx, ck_log_level level, const char *message)
{
    (void)ctx;
    if (me.quiet) {
        return;
    }
    if (level == CK_LOG_REPORT) {
        fputs(message, stderr);
    } else {
        say("%s", message);
    }
}

/* TEST-ONLY hook (docs/distributed.md): CK_TEST_FAIL_RANK=r makes rank r fail as a runtime error
 * would, before batch CK_TEST_FAIL_AFTER_BATCHES (default 5, i.e. in the second window at
 * --max-batch-tokens 512) of its encoding, through the model's cancel callback. */
static int test_fail(void *ctx)
{
    (void)ctx;
    return me.fail_after >= 0 && me.batches++ >= me.fail_after;
}

static void test_hook(ck_model_params *m)
{
    const char *r = getenv("CK_TEST_FAIL_RANK"), *k = getenv("CK_TEST_FAIL_AFTER_BATCHES");
    me.fail_after = -1;
    if (r != NULL && atoi(r) == me.rank) {
        me.fail_after = k != NULL ? atol(k) : 5;
        m->cancel = test_fail;
    }
}

/* 1 when `mine` is nonzero on any rank. */
static int any_rank(int mine)
{
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

/* Rank 0's value of an int. */
static int from_rank0(int v)
{
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* Waits for every rank with a non-blocking barrier polled every 10 ms: a rank done early sleeps
 * between polls instead of waiting inside a blocking MPI_Barrier, whose progress loop may hold a
 * core. Logs the wait and the CPU time it took. */
static void wait_for_all(void)
{
    MPI_Request req;
    int done = 0;
    double t0 = now(), c0 = cpu_seconds();
    struct timespec nap = {0, 10 * 1000 * 1000};
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        nanosleep(&nap, NULL);
    }
    if (!me.quiet) {
        say("waited %.3f s for the other ranks, %.3f s CPU while waiting", now() - t0,
            cpu_seconds() - c0);
    }
}

/* A runtime error on this rank: say it (mpirun may drop MPI_Abort's own text), then end the job:
 * the launcher stops the other ranks. Committed windows stay for --resume. */
static void abort_job(const char *output, int rc, const ck_error *err)
{
    int injected = rc == CK_E_CANCELLED && me.fail_after >= 0;
    say("error: %s%s", injected ? "injected failure (CK_TEST_FAIL_RANK, test only): " : "",
        err->message);
    say("this rank's committed windows stay in %s.partial*: run the job again with --resume and "
        "the same number of ranks (%d)", output, me.size);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, EXIT_INPUT);
}

/* Sends stderr to /dev/null on every rank but 0 (so a usage error prints once); returns what
 * unmute_others restores (-1 on rank 0). */
static int mute_others(void)
{
    int saved = -1;
    if (me.rank != 0) {
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
    return saved;
}

static void unmute_others(int saved)
{
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
    }
}

/* Runs the usage checks with stderr kept only on rank 0, so a usage error prints once. */
static int parse_quietly(int argc, char **argv, ck_cli_options *o)
{
    int saved = mute_others();
    int rc = ck_cli_parse(argc, argv, o);
    if (rc == 0 && o->xray.oracle != NULL) {
        rc = ck_cli_usage_error("%s", "ckbatch-mpi encodes corpora: run --xray-oracle with ckbatch");
    }
    if (rc == 0 && o->corpus.shard_count > 0) {
        rc = ck_cli_usage_error("%s", "--shard: the ranks of ckbatch-mpi are the shards (use "
                                "ckbatch --shard without MPI)");
    }
    if (rc == 0 && o->corpus.input != NULL && strcmp(o->corpus.input, "-") == 0) {
        rc = ck_cli_usage_error("%s", "ckbatch-mpi needs a regular --input file: stdin cannot be "
                                "split");
    }
    rc = rc == 0 ? ck_cli_check_paths(&o->corpus) : rc;
    unmute_others(saved);
    return rc;
}

/* The plan on every rank, then the agreement: a runtime error anywhere ends the job (each rank
 * says its own); else the lowest first bad line (--on-error stop) is the run's error, printed by
 * the one rank that holds it, exactly as ckbatch prints it. Returns 0 or the exit code. */
static int plan_and_agree(ck_model *model, const ck_cli_options *o, ck_rank_job **job,
                          ck_rank_plan_info *info)
{
    ck_error err = {0};
    int rc = ck_rank_plan(model, &o->corpus, (size_t)me.rank, (size_t)me.size, job, info, &err);
    unsigned long long bad = rc == CK_E_INPUT ? info->first_bad_line : ULLONG_MAX, first = 0;
    int other = rc != CK_OK && rc != CK_E_INPUT;
    MPI_Allreduce(&bad, &first, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (any_rank(other)) {
        if (other) {
            say("error: %s", err.message);
        }
        return EXIT_INPUT;
    }
    if (first != ULLONG_MAX) {
        if (bad == first) {
            fprintf(stderr, "ckbatch: error: %s\n", err.message);
        }
        return EXIT_INPUT;
    }
    return 0;
}

/* Every rank's offsets from the ranks before it, the totals, and the layout; the header must be
 * rank 0's on every rank (same binary, kernels, input and options). Returns 0 or the exit code. */
static int lay_out(ck_rank_job *job, const ck_rank_plan_info *info)
{
    unsigned long long own[CK_RANK_COUNTS_N] = {info->counts.sequences, info->counts.tokens,
                                                info->counts.seq_bytes, info->counts.skipped_bytes};
    unsigned long long before[CK_RANK_COUNTS_N] = {0}, total[CK_RANK_COUNTS_N] = {0};
    MPI_Exscan(own, before, CK_RANK_COUNTS_N, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me.rank == 0) { /* MPI_Exscan leaves rank 0's receive buffer undefined */
        memset(before, 0, sizeof before);
    }
    MPI_Allreduce(own, total, CK_RANK_COUNTS_N, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    ck_rank_counts b = {before[0], before[1], before[2], before[3]};
    ck_rank_counts t = {total[0], total[1], total[2], total[3]};
    ck_error err = {0};
    int rc = ck_rank_layout(job, &b, &t, &err);
    char sha[65] = "", isa[32] = "";
    snprintf(sha, sizeof sha, "%s", ck_rank_header_sha256(job));
    snprintf(isa, sizeof isa, "%s", ck_kernels_isa());
    char sha0[65], isa0[32];
    memcpy(sha0, sha, sizeof sha);
    memcpy(isa0, isa, sizeof isa);
    MPI_Bcast(sha0, sizeof sha0, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(isa0, sizeof isa0, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rc == CK_OK && (strcmp(sha, sha0) != 0 || strcmp(isa, isa0) != 0)) {
        rc = CK_E_ARG;
        snprintf(err.message, sizeof err.message, "header sha256 %.16s..., kernels %s differ from "
                 "rank 0's (%.16s..., %s): every rank must run the same binary on the same CPU "
                 "ISA over the same input and options", sha, isa, sha0, isa0);
    }
    if (any_rank(rc != CK_OK)) {
        if (rc != CK_OK) {
            say("error: %s", err.message);
        }
        return EXIT_INPUT;
    }
    return 0;
}

/* Rank 0 creates (or checks, on resume) the file and the job record; then every rank opens it. */
static int open_file(ck_rank_job *job)
{
    ck_error err = {0};
    int resumed = 0, rc = me.rank == 0 ? ck_rank_create(job, &resumed, &err) : CK_OK;
    if (from_rank0(rc != CK_OK)) {
        if (me.rank == 0) {
            say("error: %s", err.message);
            if (rc == CK_E_STATE) { /* the library names the field; the flag is the CLI's word */
                say("--resume continues only the job that wrote the progress records: run it "
                    "again without --resume to start over");
            }
        }
        return from_rank0(rc == CK_E_STATE) ? EXIT_STATE : EXIT_INPUT;
    }
    resumed = from_rank0(resumed);
    rc = ck_rank_open(job, resumed, &err);
    if (any_rank(rc != CK_OK)) {
        if (rc != CK_OK) {
            say("error: %s", err.message);
        }
        return any_rank(rc == CK_E_STATE) ? EXIT_STATE : EXIT_INPUT;
    }
    return 0;
}

/* The run's summary line on rank 0: every rank's counts summed. */
static void summary(const ck_rank_job *job, const ck_rank_plan_info *info, double t0)
{
    unsigned long long own[8] = {info->lines, info->counts.sequences, info->chunked_lines,
                                 info->counts.tokens, info->skipped_lines, info->empty_lines,
                                 info->dropped_symbols, ck_rank_encoded_tokens(job)};
    unsigned long long all[8] = {0};
    MPI_Reduce(own, all, 8, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    double secs = now() - t0;
    if (me.rank == 0 && !me.quiet) {
        fprintf(stderr, "ckbatch: %d ranks: %llu lines, %llu sequences (%llu long lines chunked), "
                "%llu tokens, %llu skipped, %llu empty, %llu dropped symbols, %.2f s, %.0f "
                "tokens/s\n", me.size, all[0], all[1], all[2], all[3], all[4], all[5], all[6],
                secs, secs > 0 ? (double)all[7] / secs : 0.0);
    }
}

static int run(ck_cli_options *o)
{
    ck_error err = {0};
    ck_model *model = NULL;
    ck_rank_job *job = NULL;
    ck_rank_plan_info info;
    double t0 = now();
    int rc = ck_model_load(&model, &o->model, &err);
    if (any_rank(rc != CK_OK)) {
        if (rc != CK_OK) {
            say("error: %s", err.message);
        }
        ck_model_free(model);
        return EXIT_INPUT;
    }
    int code = plan_and_agree(model, o, &job, &info);
    code = code == 0 ? lay_out(job, &info) : code;
    code = code == 0 ? open_file(job) : code;
    rc = code == 0 ? ck_rank_encode(job, &err) : CK_OK;
    if (rc != CK_OK) {
        abort_job(o->corpus.output, rc, &err);
    }
    if (code == 0) {
        wait_for_all();
        rc = me.rank == 0 ? ck_rank_finish(job, &err) : CK_OK;
        if (from_rank0(rc != CK_OK)) {
            if (me.rank == 0) {
                say("error: %s", err.message);
            }
            code = EXIT_INPUT;
        } else {
            ck_rank_cleanup(job);
            summary(job, &info, t0);
        }
    }
    ck_rank_job_free(job);
    ck_model_free(model);
    return code;
}

/* A directory OUT of `ckbatch-mpi speak`: rank 0 joins the ranks' records files into
 * OUT/timestamps.jsonl (ck_merge_speak_shards; the WAVs are final as written), then each rank
 * removes its own; a failed run keeps them, with the WAVs and journals, for --resume. Returns 0
 * or the exit code. */
static int speak_join_dir(const ck_speak_params *sp, int failed)
{
    size_t N = (size_t)me.size;
    char **paths = calloc(N, sizeof *paths), base[4096];
    int rc = paths != NULL ? CK_OK : CK_E_MEMORY;
    ck_error err = {0};
    snprintf(base, sizeof base, "%s/timestamps.jsonl", sp->output);
    for (size_t i = 0; paths != NULL && i < N; i++) {
        size_t n = ck_shard_path(NULL, 0, base, i, N) + 1;
        paths[i] = malloc(n);
        rc = paths[i] != NULL ? rc : CK_E_MEMORY;
        if (paths[i] != NULL) {
            ck_shard_path(paths[i], n, base, i, N);
        }
    }
    if (rc != CK_OK) {
        snprintf(err.message, sizeof err.message, "speak: cannot allocate");
    }
    if (me.rank == 0 && !failed) {
        rc = rc == CK_OK ? ck_merge_speak_shards(sp->output, (const char *const *)paths, N,
                                                 log_rank, NULL, NULL, &err)
                         : rc;
        if (rc != CK_OK) {
            say("error: %s (the shards stay)", err.message);
        }
    }
    int joined = !failed && !from_rank0(rc != CK_OK); /* every rank waits for the join here */
    if (joined && paths != NULL && paths[me.rank] != NULL) {
        unlink(paths[me.rank]);
    }
    for (size_t i = 0; paths != NULL && i < N; i++) {
        free(paths[i]);
    }
    free(paths);
    return failed || joined ? 0 : EXIT_INPUT;
}

/* The agreement after every rank's step that can fail on input: a runtime error is said by its
 * rank; a bad line (--on-error stop) only by the lowest rank holding one (its first is the
 * input's first), as `ckbatch speak` prints it. Returns 0, 1 or 3 (resume refused). */
static int speak_agree(int rc, const ck_error *err)
{
    int bad_rank = rc == CK_E_INPUT ? me.rank : me.size, first = me.size;
    MPI_Allreduce(&bad_rank, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int other = rc != CK_OK && rc != CK_E_INPUT;
    int state = any_rank(rc == CK_E_STATE);
    if (any_rank(other)) {
        if (other) {
            say("error: %s", err->message);
        }
        return state ? EXIT_STATE : EXIT_INPUT;
    }
    if (first < me.size) {
        if (me.rank == first) {
            fprintf(stderr, "ckbatch: speak: %s\n", err->message);
        }
        return EXIT_INPUT;
    }
    return 0;
}

/* This rank's value v and the sum of v over the ranks before it (0 on rank 0) and over all. */
static void prefix_sum(unsigned long long v, unsigned long long *before, unsigned long long *total)
{
    *before = 0;
    MPI_Exscan(&v, before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me.rank == 0) { /* MPI_Exscan leaves rank 0's receive buffer undefined */
        *before = 0;
    }
    MPI_Allreduce(&v, total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
}

/* 0 when every rank's header SHA-256 is rank 0's; else each differing rank says so: 1. */
static int same_header_as_rank0(const ck_speak_rank *job)
{
    char sha[65], sha0[65];
    snprintf(sha, sizeof sha, "%s", ck_speak_rank_header_sha256(job));
    memcpy(sha0, sha, sizeof sha);
    MPI_Bcast(sha0, sizeof sha0, MPI_CHAR, 0, MPI_COMM_WORLD);
    int differs = strcmp(sha, sha0) != 0;
    if (differs) {
        say("error: WAV header and settings sha256 %.16s... differ from rank 0's (%.16s...): "
            "every rank must run the same binary over the same input and options", sha, sha0);
    }
    return any_rank(differs);
}

/* Steps 3-4 of the in-place .wav (include/ckbatch.h, ck_speak_rank_*): place the rank's samples
 * and records, rank 0 creates the files, every rank opens them. Returns 0 or the exit code. */
static int speak_place(ck_speak_rank *job, ck_model *model, ck_speak_rank_info *info)
{
    unsigned long long before = 0, total = 0, rec_before = 0, rec_total = 0;
    ck_error err = {0};
    prefix_sum(info->samples, &before, &total);
    int rc = ck_speak_rank_layout(job, model, before, total, info, &err);
    int code = speak_agree(rc, &err);
    if (code != 0 || same_header_as_rank0(job)) {
        return code != 0 ? code : EXIT_INPUT;
    }
    prefix_sum(info->record_bytes, &rec_before, &rec_total);
    rc = me.rank == 0 ? ck_speak_rank_create(job, rec_total, &err) : CK_OK;
    if (from_rank0(rc != CK_OK)) {
        if (me.rank == 0) {
            say("error: %s", err.message);
        }
        return EXIT_INPUT;
    }
    rc = ck_speak_rank_open(job, rec_before, &err);
    return speak_agree(rc, &err);
}

/* `ckbatch-mpi speak -o OUT.wav`: every rank plans its range by the token side, the ranks place
 * the lines, each speaks its own into the one file, rank 0 publishes (docs/distributed.md §1c).
 * Returns 0 or the exit code (1 on any failure: nothing published, the partial files removed). */
static int speak_in_place(const ck_model_params *mp, ck_speak_params *sp, ck_speak_rank_info *info)
{
    ck_error err = {0};
    ck_speak_rank *job = NULL;
    ck_model *model = NULL;
    int rc = ck_speak_rank_plan(mp, sp, (size_t)me.rank, (size_t)me.size, &job, info, &err);
    int code = speak_agree(rc, &err);
    if (code == 0) {
        rc = ck_model_load(&model, mp, &err);
        code = speak_agree(rc, &err);
    }
    code = code == 0 ? speak_place(job, model, info) : code;
    if (code == 0) {
        rc = ck_speak_rank_speak(job, model, info, &err);
        wait_for_all(); /* without spinning, then the agreement: no one is still writing */
        code = speak_agree(rc, &err);
    }
    if (code == 0) {
        rc = me.rank == 0 ? ck_speak_rank_finish(job, &err) : CK_OK;
        if (from_rank0(rc != CK_OK)) {
            if (me.rank == 0) {
                say("error: %s", err.message);
            }
            code = EXIT_INPUT;
        }
    }
    if (code != 0 && me.rank == 0) {
        ck_speak_rank_discard(job);
    }
    ck_model_free(model);
    ck_speak_rank_free(job);
    return code;
}

/* A directory OUT: rank r speaks shard r/N of the input (ck_model_speak_file) into the directory,
 * then rank 0 joins the records files. Returns 0 or the exit code. */
static int speak_dir(const ck_model_params *mp, ck_speak_params *sp, ck_speak_rank_info *info)
{
    ck_error err = {0};
    ck_model *model = NULL;
    ck_speak_summary sum;
    memset(&sum, 0, sizeof sum);
    sp->shard_index = (size_t)me.rank;
    sp->shard_count = (size_t)me.size;
    int rc = ck_model_load(&model, mp, &err);
    rc = rc == CK_OK ? ck_model_speak_file(model, sp, &sum, &err) : rc;
    ck_model_free(model);
    wait_for_all(); /* a rank done early sleeps here, not in speak_agree's MPI_Allreduce */
    int code = speak_agree(rc, &err);
    code = speak_join_dir(sp, code != 0) != 0 && code == 0 ? EXIT_INPUT : code;
    info->lines_spoken = sum.lines;
    info->samples = sum.samples;
    info->lines_failed = sum.lines_failed;
    return code;
}

/* `ckbatch-mpi speak ...`: a .wav OUT written in place by the ranks (speak_in_place), a directory
 * by shards whose records rank 0 joins (speak_dir). */
static int run_speak(int argc, char **argv)
{
    static ck_model_params mp;
    static ck_speak_params sp;
    int quiet = 0, saved = mute_others();
    int code = ck_speak_parse(argc, argv, &mp, &sp, &quiet);
    size_t n = code == 0 ? strlen(sp.output) : 0;
    int one_file = n >= 4 && strcmp(sp.output + n - 4, ".wav") == 0;
    if (code == 0 && sp.shard_count > 0) {
        code = ck_cli_usage_error("%s", "speak --shard: the ranks of ckbatch-mpi are the shards "
                                  "(use ckbatch speak --shard without MPI)");
    }
    if (code == 0 && one_file && sp.resume) {
        code = ck_cli_usage_error("%s", "speak --resume: ckbatch-mpi writes a .wav OUT in place "
                                  "and cannot resume it (run the job again without --resume; a "
                                  "directory OUT resumes)");
    }
    unmute_others(saved);
    if (code != 0) {
        return code;
    }
    me.quiet = quiet;
    mp.log = sp.lines.log = log_rank;
    double t0 = now();
    ck_speak_rank_info info;
    memset(&info, 0, sizeof info);
    code = one_file ? speak_in_place(&mp, &sp, &info) : speak_dir(&mp, &sp, &info);
    unsigned long long own[3] = {info.lines_spoken, info.samples, info.lines_failed};
    unsigned long long all[3] = {0};
    MPI_Allreduce(own, all, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (code == 0 && me.rank == 0 && !quiet) {
        fprintf(stderr, "ckbatch: %d ranks: speak: %llu lines, %.2f s of audio, %llu bad lines "
                "skipped, %.2f s -> %s\n", me.size, all[0],
                (double)all[1] / CK_SPEECH_SAMPLE_RATE, all[2], now() - t0, sp.output);
    }
    return code == 0 && all[2] > 0 ? 4 : code; /* 4: written, lines skipped (as ckbatch speak) */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &me.size);
    if (gethostname(me.host, sizeof me.host) != 0) {
        snprintf(me.host, sizeof me.host, "?");
    }
    me.host[sizeof me.host - 1] = '\0';
    me.host[strcspn(me.host, ".")] = '\0';
    if (argc >= 2 && strcmp(argv[1], "speak") == 0) {
        int code = run_speak(argc - 1, argv + 1);
        MPI_Finalize();
        return code < 0 ? EXIT_SUCCESS : code;
    }
    static ck_cli_options o;
    int code = parse_quietly(argc, argv, &o);
    if (code == 0) {
        me.quiet = o.quiet;
        o.model.log = o.corpus.log = log_rank;
        o.corpus.progress = NULL; /* no progress line: N ranks would draw over each other */
        test_hook(&o.model);
        code = run(&o);
    }
    MPI_Finalize();
    return code < 0 ? EXIT_SUCCESS : code;
}
