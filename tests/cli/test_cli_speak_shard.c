/* test_cli_speak_shard.c - `ckbatch speak --shard I/N` and `ckbatch merge` of its shards, end to end
 * on the embedded synthetic weights (voice "synthetic", six short phoneme lines, one blank): the
 * .wav shards 0/2 and 1/2 (one thread each) keep the input's line numbers and merge into the
 * single run's WAV and sidecar byte for byte (samples appended, sample ranges shifted); directory
 * shards 0..2 of 3 write the single run's WAVs and their merged records its timestamps.jsonl (a
 * shard with only a journal is missing, the journal named); the merge refuses a
 * missing or duplicate shard, shards of another seed or sample format, and a file that is not a
 * shard, naming it, with exit code 1 and nothing written; a bad --shard is a usage error; under
 * --on-error skip the shards' error records merge into the single run's sidecar. */
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

/* 73 bytes: shard 1/2 owns the lines starting in bytes [36, 73): lines 4 and 5 (0-based; line 4
 * starts at byte 45) */
static const char k_input[] = "\xc3\xb0\xc9\x99 k\xcb\x88\xc3\xa6t\n"
                              "h\xc9\x99l\xcb\x88O w\xcb\x88\xc9\x9c\xc9\xb9ld\n"
                              "\n"
                              "s\xcb\x88\xca\x8cm m\xcb\x88O\xc9\xb9\n"
                              "w\xcb\x88\xca\x8cn t\xcb\x88u \xce\xb8\xc9\xb9\xcb\x88i\n"
                              "l\xcb\x88\xc3\xa6st\n";

static int exit_code(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ckbatch speak on the input with `args`; stderr to work/stderr. */
static int speak(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s speak -q -f phonemes --voice synthetic --max-batch-frames 256 "
             "-i %s %s 2>%s",
             ck_cli_binary(), ck_cli_tmp("in.txt"), args, ck_cli_tmp("stderr"));
    return exit_code(system(cmd));
}

/* ckbatch merge -q with `args`; stderr to work/stderr. */
static int merge(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s merge -q %s 2>%s", ck_cli_binary(), args, ck_cli_tmp("stderr"));
    return exit_code(system(cmd));
}

/* The single run one.wav and the shards sh.wav.shard-0000I-of-00002, made once for the suite. */
static void make_wav_runs(void)
{
    static int made;
    if (made) {
        return;
    }
    ck_cli_write_file(ck_cli_tmp("in.txt"), k_input);
    char args[1024];
    snprintf(args, sizeof args, "-o %s", ck_cli_tmp("one.wav"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "--threads 1 --shard %d/2 -o %s", i, ck_cli_tmp("sh.wav"));
        CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    }
    made = 1;
}

/* merge -q -o work/OUT followed by the work files named in `files` (space-separated, may be ""). */
static int merge_files(const char *out, const char *files)
{
    char args[4096], *at = args;
    at += snprintf(at, sizeof args, "-o %s", ck_cli_tmp(out));
    char names[1024];
    snprintf(names, sizeof names, "%s", files);
    for (char *t = strtok(names, " "); t != NULL; t = strtok(NULL, " ")) {
        at += snprintf(at, sizeof args - (size_t)(at - args), " %s", ck_cli_tmp(t));
    }
    return merge(args);
}

static void test_wav_shards_merge_to_single(void)
{
    make_wav_runs();
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("sh.wav")));
    CU_ASSERT_TRUE(ck_cli_exists(ck_cli_tmp("sh.wav.shard-00000-of-00002")));
    char *s1 = ck_cli_slurp(ck_cli_tmp("sh.wav.shard-00001-of-00002.jsonl"), NULL);
    CU_ASSERT_FATAL(s1 != NULL);
    /* the settings record ends with the shard's entry; the records keep global line numbers and
     * count samples from the shard's own start */
    CU_ASSERT(strstr(s1, ",\"shard\":{\"index\":1,\"count\":2,\"first_line\":5,\"lines\":2,"
                         "\"byte_start\":45,\"byte_end\":73}}\n{\"line\":4,\"start_sample\":0,"
                         "\"end_sample\":22200,") != NULL);
    free(s1);
    CU_ASSERT_EQUAL(merge_files("sh.wav", ""), 0); /* every sh.wav.shard-*-of-* found */
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("one.wav"), ck_cli_tmp("sh.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("one.wav.jsonl"), ck_cli_tmp("sh.wav.jsonl")));
    char *j = ck_cli_slurp(ck_cli_tmp("sh.wav.jsonl"), NULL);
    CU_ASSERT_FATAL(j != NULL);
    CU_ASSERT(strstr(j, "{\"line\":2,\"error\":\"no phonemes\"}\n") != NULL);
    CU_ASSERT(strstr(j, "{\"line\":4,\"start_sample\":45000,\"end_sample\":67200,") != NULL);
    CU_ASSERT(strstr(j, "\"shard\"") == NULL);
    free(j);
}

static void test_directory_shards_equal_single(void)
{
    ck_cli_write_file(ck_cli_tmp("in.txt"), k_input);
    char args[1024];
    snprintf(args, sizeof args, "-o %s", ck_cli_tmp("d1"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "--threads 1 --shard %d/3 -o %s", i, ck_cli_tmp("d3"));
        CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    }
    static const char *const wavs[] = {"000000.wav", "000001.wav", "000003.wav", "000004.wav",
                                       "000005.wav"};
    for (size_t i = 0; i < sizeof wavs / sizeof wavs[0]; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "d1/%s", wavs[i]);
        snprintf(b, sizeof b, "d3/%s", wavs[i]);
        CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp(a), ck_cli_tmp(b)));
    }
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("d3/000002.wav")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("d3/timestamps.jsonl")));
    CU_ASSERT_TRUE(ck_cli_exists(ck_cli_tmp("d3/timestamps.jsonl.shard-00002-of-00003")));
    /* shard 2's records as an unfinished run leaves them: missing, the journal named */
    char from[600], to[620];
    snprintf(from, sizeof from, "%s", ck_cli_tmp("d3/timestamps.jsonl.shard-00002-of-00003"));
    snprintf(to, sizeof to, "%s.partial", from);
    CU_ASSERT_EQUAL_FATAL(rename(from, to), 0);
    CU_ASSERT_EQUAL(merge_files("d3", ""), 1);
    CU_ASSERT(ck_cli_stderr_has("shard 2/3 is missing (2 of 3 shards given); unfinished: "));
    CU_ASSERT(ck_cli_stderr_has("timestamps.jsonl.shard-00002-of-00003.partial: run `speak "
                                "--shard 2/3 --resume` first"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("d3/timestamps.jsonl")));
    CU_ASSERT_EQUAL_FATAL(rename(to, from), 0);
    CU_ASSERT_EQUAL(merge_files("d3", ""), 0);
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("d1/timestamps.jsonl"),
                                ck_cli_tmp("d3/timestamps.jsonl")));
}

/* --on-error skip: the bad lines' error records land in their shards and merge into the single
 * run's sidecar; each run exits 4. */
static void test_skipped_lines_merge_to_single(void)
{
    ck_cli_write_file(ck_cli_tmp("ids.txt"), "[50,60,70]\n[9999]\n\n[40,41]\n[12,13,14,15]\n"
                                             "[9999]\n[30,31]\n");
    char cmd[4096];
    for (int i = -1; i < 2; i++) {
        char shard[32] = "";
        if (i >= 0) {
            snprintf(shard, sizeof shard, "--shard %d/2", i);
        }
        snprintf(cmd, sizeof cmd, "%s speak -q -f ids --voice synthetic --on-error skip %s -i %s "
                 "-o %s 2>%s", ck_cli_binary(), shard, ck_cli_tmp("ids.txt"),
                 ck_cli_tmp(i < 0 ? "k1.wav" : "k2.wav"), ck_cli_tmp("stderr"));
        CU_ASSERT_EQUAL_FATAL(exit_code(system(cmd)), 4);
    }
    CU_ASSERT_EQUAL(merge_files("k2.wav", ""), 0);
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("k1.wav"), ck_cli_tmp("k2.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("k1.wav.jsonl"), ck_cli_tmp("k2.wav.jsonl")));
    char *j = ck_cli_slurp(ck_cli_tmp("k2.wav.jsonl"), NULL);
    CU_ASSERT_FATAL(j != NULL);
    CU_ASSERT(strstr(j, "{\"line\":5,\"error\":\"") != NULL);
    CU_ASSERT(strstr(j, "id 9999 out of range 1..177\"}\n{\"line\":6,\"start_sample\":15600,")
              != NULL);
    free(j);
}

/* A refused merge: exit code 1, `what` on stderr, neither m.wav nor m.wav.jsonl written. */
static void assert_refused(const char *files, const char *what)
{
    CU_ASSERT_EQUAL(merge_files("m.wav", files), 1);
    CU_ASSERT(ck_cli_stderr_has(what));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("m.wav")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("m.wav.jsonl")));
}

static void test_merge_refusals(void)
{
    make_wav_runs();
    char args[1024];
    snprintf(args, sizeof args, "--shard 1/2 --seed 7 -o %s", ck_cli_tmp("seed.wav"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    snprintf(args, sizeof args, "--shard 1/2 --sample-format f32 -o %s", ck_cli_tmp("f32.wav"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    assert_refused("sh.wav.shard-00000-of-00002", "error: shard 1/2 is missing (1 of 2 shards "
                   "given): run `speak --shard 1/2` first");
    assert_refused("sh.wav.shard-00000-of-00002 sh.wav.shard-00000-of-00002",
                   "error: shard 0/2 given twice");
    assert_refused("sh.wav.shard-00000-of-00002 seed.wav.shard-00001-of-00002",
                   "seed.wav.shard-00001-of-00002.jsonl): field \"seed\" differs from shard 0's");
    assert_refused("sh.wav.shard-00000-of-00002 f32.wav.shard-00001-of-00002",
                   "field \"sample_format\" differs from shard 0's");
    assert_refused("one.wav", "one.wav.jsonl: not the sidecar of a `speak --shard` run");
    assert_refused("sh.wav.shard-00000-of-00002 missing.wav", "missing.wav.jsonl: cannot open");
    CU_ASSERT_EQUAL(merge_files("none.wav", ""), 1);
    CU_ASSERT(ck_cli_stderr_has("no shard files"));
    /* the shard given to speak: both numbers, I < N */
    snprintf(args, sizeof args, "--shard 2/2 -o %s", ck_cli_tmp("u.wav"));
    CU_ASSERT_EQUAL(speak(args), 2);
    CU_ASSERT(ck_cli_stderr_has("--shard 2/2: expected I/N with 0 <= I < N"));
    snprintf(args, sizeof args, "--shard 1 -o %s", ck_cli_tmp("u.wav"));
    CU_ASSERT_EQUAL(speak(args), 2);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("u.wav.shard-00002-of-00002")));
}

static const ck_test_case cases[] = {
    {"wav shards 0/2 + 1/2 merged == one run", test_wav_shards_merge_to_single},
    {"directory shards 0..2 of 3 == one run", test_directory_shards_equal_single},
    {"merge refusals write nothing", test_merge_refusals},
    {"--on-error skip: error records merge to one run's", test_skipped_lines_merge_to_single},
};

int main(void)
{
    return ck_cli_main("cli_speak_shard", cases, sizeof cases / sizeof cases[0]);
}
