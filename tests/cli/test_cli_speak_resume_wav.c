/* test_cli_speak_resume_wav.c - `ckbatch speak -o OUT.wav` killed and resumed (docs/speak.md), on
 * the embedded synthetic weights with short phoneme lines: a run SIGKILLed after N durable lines
 * (the CLI's test hook CK_TEST_SPEAK_KILL_AFTER_LINES) leaves OUT.wav.partial (header + exactly the
 * recorded lines' samples) and OUT.wav.jsonl.partial, never OUT.wav; --resume publishes OUT.wav
 * and OUT.wav.jsonl byte for byte as the uninterrupted run (s16 with a loud voice that clips, the
 * report's clipped count that of the uninterrupted run; f32 killed twice); a resume with another
 * seed, sample format, voice or input is refused with exit 3 naming the key, the partial files
 * unchanged; a torn tail (samples and half a record after the last whole one) is cut off (the next
 * record follows the last whole one, and the end is the uninterrupted bytes); an
 * edited journal or a WAV shorter than its journal is an error naming the file; --resume with
 * nothing to resume speaks every line; SIGTERM (Ctrl-C's path) exits 143 keeping both partial
 * files, and the resume equals the uninterrupted run. */
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

#define PACK_FLOATS (510 * 256)
/* ði / (blank) / ði ˈAs / həlˈO / həlˈO ði ˈAs ði */
#define LINES "\xc3\xb0i\n\n\xc3\xb0i \xcb\x88" "As\nh\xc9\x99l\xcb\x88O\nh\xc9\x99l\xcb\x88O " \
              "\xc3\xb0i \xcb\x88" "As \xc3\xb0i\n"

/* `[ENV] ckbatch speak -f phonemes ARGS` (-q unless loud), stderr to work/stderr; the exit status,
 * 128 + N when it died of signal N. */
static int speak_env(const char *env, int loud, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s speak %s -f phonemes %s 2>%s/stderr", env, ck_cli_binary(),
             loud ? "" : "-q", args, ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

static int speak(const char *args)
{
    return speak_env("", 0, args);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* The value after the last `key` in the file at path (-1 when none). */
static long long last_value(const char *path, const char *key)
{
    char *s = ck_cli_slurp(path, NULL);
    long long v = -1;
    for (const char *at = s; at != NULL && (at = strstr(at, key)) != NULL; at += strlen(key)) {
        v = atoll(at + strlen(key));
    }
    free(s);
    return v;
}

static int count_lines(const char *path)
{
    char *s = ck_cli_slurp(path, NULL);
    int n = 0;
    for (const char *p = s; p != NULL && *p; p++) {
        n += *p == '\n';
    }
    free(s);
    return n;
}

/* The summary's "N samples clipped" of work/stderr (-1 when missing). */
static long long reported_clipped(void)
{
    char line[2048];
    const char *at = ck_cli_stderr_line(" lines resumed, ", line);
    return at[0] != '\0' ? atoll(at + strlen(" lines resumed, ")) : -1;
}

static void run_cp(const char *from, const char *to)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp %s %s", from, to);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
}

/* A voice loud enough that the synthetic decoder's s16 samples clip in every line. */
static void write_loud_voice(const char *path)
{
    static float v[PACK_FLOATS];
    for (size_t i = 0; i < PACK_FLOATS; i++) {
        v[i] = 100.0f * sinf(0.01f * (float)i);
    }
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL && fwrite(v, sizeof *v, PACK_FLOATS, f) == PACK_FLOATS);
    fclose(f);
}

/* The s16 state the later cases start from: work/whole.wav (+ .jsonl) uninterrupted and its
 * report's clipped count, and snap.wav.partial + snap.wav.jsonl.partial, a run killed after 2
 * lines. */
static long long whole_clipped = -1;
static int snapshot_made;

static void make_snapshot(void)
{
    char args[2048];
    if (snapshot_made) {
        return;
    }
    snapshot_made = 1;
    write_loud_voice(ck_cli_tmp("loud.bin"));
    ck_cli_write_file(ck_cli_tmp("in.txt"), LINES);
    snprintf(args, sizeof args, "--voice %s -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("whole.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("", 1, args), 0);
    whole_clipped = reported_clipped();
    CU_ASSERT_FATAL(whole_clipped > 0);
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("whole.wav.partial")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("whole.wav.jsonl.partial")));
    snprintf(args, sizeof args, "--voice %s -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("snap.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("CK_TEST_SPEAK_KILL_AFTER_LINES=2", 0, args), 128 + SIGKILL);
}

/* Copies the killed snapshot to work/NAME.wav.partial and work/NAME.wav.jsonl.partial. */
static void copy_snapshot(const char *name)
{
    char a[256], b[256];
    make_snapshot();
    snprintf(a, sizeof a, "%s.wav.partial", name);
    run_cp(ck_cli_tmp("snap.wav.partial"), ck_cli_tmp(a));
    snprintf(b, sizeof b, "%s.wav.jsonl.partial", name);
    run_cp(ck_cli_tmp("snap.wav.jsonl.partial"), ck_cli_tmp(b));
}

static void test_kill_resume_s16(void)
{
    make_snapshot();
    /* killed: nothing published, the journal holds the settings and lines 0 and 1, the WAV their
     * samples after its header (the whole file's header: its size less its samples) */
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("snap.wav")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("snap.wav.jsonl")));
    CU_ASSERT_EQUAL(count_lines(ck_cli_tmp("snap.wav.jsonl.partial")), 3);
    long long end = last_value(ck_cli_tmp("snap.wav.jsonl.partial"), "\"end_sample\":");
    long long total = last_value(ck_cli_tmp("whole.wav.jsonl"), "\"end_sample\":");
    long header = file_size(ck_cli_tmp("whole.wav")) - 2 * (long)total;
    CU_ASSERT(end > 0 && total > end && header > 44);
    CU_ASSERT_EQUAL(file_size(ck_cli_tmp("snap.wav.partial")), header + 2 * end);
    /* line 0 clipped: the resumed run must carry that count, not only its own lines' */
    long long clipped0 = last_value(ck_cli_tmp("snap.wav.jsonl.partial"), "{\"line\":0,\"clipped\":");
    CU_ASSERT(clipped0 > 0 && clipped0 < whole_clipped);
    copy_snapshot("k");
    char args[2048];
    snprintf(args, sizeof args, "--voice %s --threads 1 --resume -i %s -o %s",
             ck_cli_tmp("loud.bin"), ck_cli_tmp("in.txt"), ck_cli_tmp("k.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("", 1, args), 0);
    CU_ASSERT(ck_cli_stderr_has("resume: 2 of 5 lines done"));
    CU_ASSERT(ck_cli_stderr_has(" 1 lines without phonemes, 0 bad lines skipped, 1 lines "
                                "resumed, "));
    CU_ASSERT_EQUAL(reported_clipped(), whole_clipped);
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav"), ck_cli_tmp("k.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav.jsonl"), ck_cli_tmp("k.wav.jsonl")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("k.wav.partial")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("k.wav.jsonl.partial")));
}

static void test_kill_twice_resume_f32(void)
{
    char args[2048];
    ck_cli_write_file(ck_cli_tmp("f.txt"), LINES);
    snprintf(args, sizeof args, "--sample-format f32 -i %s -o %s", ck_cli_tmp("f.txt"),
             ck_cli_tmp("fwhole.wav"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    snprintf(args, sizeof args, "--sample-format f32 -i %s -o %s", ck_cli_tmp("f.txt"),
             ck_cli_tmp("f.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("CK_TEST_SPEAK_KILL_AFTER_LINES=1", 0, args), 128 + SIGKILL);
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("f.wav")));
    CU_ASSERT_EQUAL(count_lines(ck_cli_tmp("f.wav.jsonl.partial")), 2);
    /* the resumed run killed too, after line 3 (lines 0 resumed, 1 .. 3 its own) */
    snprintf(args, sizeof args, "--sample-format f32 --resume -i %s -o %s", ck_cli_tmp("f.txt"),
             ck_cli_tmp("f.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("CK_TEST_SPEAK_KILL_AFTER_LINES=4", 0, args), 128 + SIGKILL);
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("f.wav")));
    CU_ASSERT_EQUAL(count_lines(ck_cli_tmp("f.wav.jsonl.partial")), 5);
    long long end = last_value(ck_cli_tmp("f.wav.jsonl.partial"), "\"end_sample\":");
    long long total = last_value(ck_cli_tmp("fwhole.wav.jsonl"), "\"end_sample\":");
    long header = file_size(ck_cli_tmp("fwhole.wav")) - 4 * (long)total;
    CU_ASSERT(end > 0 && total > end);
    CU_ASSERT_EQUAL(file_size(ck_cli_tmp("f.wav.partial")), header + 4 * end);
    CU_ASSERT_EQUAL_FATAL(speak_env("", 1, args), 0);
    CU_ASSERT(ck_cli_stderr_has("resume: 4 of 5 lines done"));
    CU_ASSERT(ck_cli_stderr_has("ckbatch: speak: 1 lines, "));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("fwhole.wav"), ck_cli_tmp("f.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("fwhole.wav.jsonl"), ck_cli_tmp("f.wav.jsonl")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("f.wav.partial")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("f.wav.jsonl.partial")));
}

static void test_other_settings_refused(void)
{
    static const struct {
        const char *option, *key;
    } cases[] = {
        {"--seed 7", "\"seed\" differs"},
        {"--sample-format f32", "\"sample_format\" differs"},
        {"--voice synthetic", "\"voice\" differs"},
        {"input", "\"input_sha256\" differs"},
    };
    char args[2048], opt[1024];
    copy_snapshot("m");
    ck_cli_write_file(ck_cli_tmp("in2.txt"), LINES "\xc3\xb0i\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int input = strcmp(cases[i].option, "input") == 0;
        snprintf(opt, sizeof opt, "%s", input ? "" : cases[i].option);
        if (strcmp(cases[i].option, "--voice synthetic") != 0) {
            snprintf(opt + strlen(opt), sizeof opt - strlen(opt), " --voice %s",
                     ck_cli_tmp("loud.bin"));
        }
        snprintf(args, sizeof args, "%s --resume -i %s -o %s", opt,
                 ck_cli_tmp(input ? "in2.txt" : "in.txt"), ck_cli_tmp("m.wav"));
        CU_ASSERT_EQUAL(speak(args), 3);
        CU_ASSERT(ck_cli_stderr_has("m.wav.jsonl.partial: written with other settings: "));
        CU_ASSERT(ck_cli_stderr_has(cases[i].key));
        /* nothing lost: both partial files as the killed run left them, nothing published */
        CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("snap.wav.partial"), ck_cli_tmp("m.wav.partial")));
        CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("snap.wav.jsonl.partial"),
                                    ck_cli_tmp("m.wav.jsonl.partial")));
        CU_ASSERT(!ck_cli_exists(ck_cli_tmp("m.wav")));
        CU_ASSERT(!ck_cli_exists(ck_cli_tmp("m.wav.jsonl")));
    }
}

static void test_torn_tail(void)
{
    char args[2048];
    copy_snapshot("t");
    /* a kill in the middle of line 2: some of its samples and half its record written */
    FILE *f = fopen(ck_cli_tmp("t.wav.partial"), "ab");
    CU_ASSERT_FATAL(f != NULL);
    for (int i = 0; i < 3001; i++) {
        fputc(0x7f, f);
    }
    fclose(f);
    f = fopen(ck_cli_tmp("t.wav.jsonl.partial"), "ab");
    CU_ASSERT_FATAL(f != NULL);
    fputs("{\"line\":2,\"clipped\":5,\"end_sample\":99999,\"record\":{\"line\":2,\"start_s", f);
    fclose(f);
    snprintf(args, sizeof args, "--voice %s --resume -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("t.wav"));
    /* resumed and killed after line 2: the tail was cut, line 2's record follows line 1's */
    CU_ASSERT_EQUAL_FATAL(speak_env("CK_TEST_SPEAK_KILL_AFTER_LINES=3", 0, args), 128 + SIGKILL);
    char *j = ck_cli_slurp(ck_cli_tmp("t.wav.jsonl.partial"), NULL);
    CU_ASSERT_FATAL(j != NULL);
    CU_ASSERT_PTR_NULL(strstr(j, "\"start_s{"));
    CU_ASSERT_PTR_NULL(strstr(j, "99999"));
    CU_ASSERT_EQUAL(count_lines(ck_cli_tmp("t.wav.jsonl.partial")), 4);
    const char *rec2 = strstr(j, "}}\n{\"line\":2,\"clipped\":");
    CU_ASSERT(rec2 != NULL && strchr(rec2 + 3, '\n')[1] == '\0');
    free(j);
    CU_ASSERT_EQUAL_FATAL(speak_env("", 1, args), 0);
    CU_ASSERT(ck_cli_stderr_has("resume: 3 of 5 lines done"));
    CU_ASSERT_EQUAL(reported_clipped(), whole_clipped);
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav"), ck_cli_tmp("t.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav.jsonl"), ck_cli_tmp("t.wav.jsonl")));
}

static void test_damaged_partial(void)
{
    char args[2048], cmd[1200];
    /* the WAV cut inside line 0's samples: shorter than its journal says, an error naming it */
    copy_snapshot("s");
    CU_ASSERT_EQUAL_FATAL(truncate(ck_cli_tmp("s.wav.partial"),
                                   file_size(ck_cli_tmp("s.wav.partial")) - 100), 0);
    snprintf(args, sizeof args, "--voice %s --resume -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("s.wav"));
    CU_ASSERT_EQUAL(speak(args), 1);
    CU_ASSERT(ck_cli_stderr_has("s.wav.partial: WAV: "));
    CU_ASSERT(ck_cli_stderr_has(" bytes, shorter than the "));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("snap.wav.jsonl.partial"),
                                ck_cli_tmp("s.wav.jsonl.partial")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("s.wav")));
    /* line 1's record renumbered: not the record of line 1, an error naming the journal */
    copy_snapshot("e");
    snprintf(cmd, sizeof cmd, "sed -i 's/^{\"line\":1,/{\"line\":3,/' %s",
             ck_cli_tmp("e.wav.jsonl.partial"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(args, sizeof args, "--voice %s --resume -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("e.wav"));
    CU_ASSERT_EQUAL(speak(args), 1);
    CU_ASSERT(ck_cli_stderr_has("e.wav.jsonl.partial: \"{\"line\":3,\"clipped\":0,"));
    CU_ASSERT(ck_cli_stderr_has("is not the record of line 1 of this input (edited?)"));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("snap.wav.partial"), ck_cli_tmp("e.wav.partial")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("e.wav")));
}

/* SIGTERM (the path of Ctrl-C) after 2 lines: the run stops with 128 + 15, publishes nothing and
 * keeps both partial files (the writer closed, not removed); resumed, the uninterrupted bytes. */
static void test_sigterm_keeps_partials(void)
{
    char args[2048];
    make_snapshot();
    /* one line a batch: the cancel lands between lines (a batch in flight is finished) */
    snprintf(args, sizeof args, "--voice %s --max-batch-frames 1 -i %s -o %s",
             ck_cli_tmp("loud.bin"), ck_cli_tmp("in.txt"), ck_cli_tmp("g.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("CK_TEST_SPEAK_KILL_AFTER_LINES=2 CK_TEST_SPEAK_KILL_SIGNAL=15",
                                    0, args), 128 + SIGTERM);
    CU_ASSERT(ck_cli_stderr_has("ckbatch: speak: stopped by signal 15: "));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("g.wav")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("g.wav.jsonl")));
    int recorded = count_lines(ck_cli_tmp("g.wav.jsonl.partial")) - 1;
    CU_ASSERT(recorded >= 2 && recorded < 5);
    long long end = last_value(ck_cli_tmp("g.wav.jsonl.partial"), "\"end_sample\":");
    long long total = last_value(ck_cli_tmp("whole.wav.jsonl"), "\"end_sample\":");
    long header = file_size(ck_cli_tmp("whole.wav")) - 2 * (long)total;
    CU_ASSERT_EQUAL(file_size(ck_cli_tmp("g.wav.partial")), header + 2 * end);
    snprintf(args, sizeof args, "--voice %s --resume -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("g.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("", 1, args), 0);
    CU_ASSERT_EQUAL(reported_clipped(), whole_clipped);
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav"), ck_cli_tmp("g.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav.jsonl"), ck_cli_tmp("g.wav.jsonl")));
}

/* --resume that a job script can always pass: nothing to resume speaks every line. */
static void test_resume_from_nothing(void)
{
    char args[2048];
    make_snapshot();
    snprintf(args, sizeof args, "--voice %s --resume -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("n.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("", 1, args), 0);
    CU_ASSERT(ck_cli_stderr_has("resume: no journal "));
    CU_ASSERT(ck_cli_stderr_has(" 0 lines resumed, "));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav"), ck_cli_tmp("n.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav.jsonl"), ck_cli_tmp("n.wav.jsonl")));
}

/* A shard's .wav (--shard 1/2: its journal's records start at the shard's first line, not 0)
 * killed once its lines are recorded, before publishing: --resume publishes the shard, and merged
 * with shard 0 it gives the whole run's WAV and sidecar. */
static void test_shard_kill_resume(void)
{
    char args[2048], cmd[4096];
    make_snapshot();
    snprintf(args, sizeof args, "--voice %s --shard 1/2 -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("sh.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("CK_TEST_SPEAK_KILL_AFTER_LINES=1", 0, args), 128 + SIGKILL);
    CU_ASSERT(ck_cli_exists(ck_cli_tmp("sh.wav.shard-00001-of-00002.partial")));
    CU_ASSERT(ck_cli_exists(ck_cli_tmp("sh.wav.shard-00001-of-00002.jsonl.partial")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("sh.wav.shard-00001-of-00002")));
    snprintf(args, sizeof args, "--voice %s --shard 1/2 --resume -i %s -o %s",
             ck_cli_tmp("loud.bin"), ck_cli_tmp("in.txt"), ck_cli_tmp("sh.wav"));
    CU_ASSERT_EQUAL_FATAL(speak_env("", 1, args), 0);
    CU_ASSERT(ck_cli_stderr_has(" lines resumed, "));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("sh.wav.shard-00001-of-00002.partial")));
    snprintf(args, sizeof args, "--voice %s --shard 0/2 -i %s -o %s", ck_cli_tmp("loud.bin"),
             ck_cli_tmp("in.txt"), ck_cli_tmp("sh.wav"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    snprintf(cmd, sizeof cmd, "%s merge -q -o %s 2>%s/stderr", ck_cli_binary(),
             ck_cli_tmp("sh.wav"), ck_cli_work);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav"), ck_cli_tmp("sh.wav")));
    CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp("whole.wav.jsonl"), ck_cli_tmp("sh.wav.jsonl")));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"s16 killed after 2 lines, resumed: the uninterrupted bytes and clip count",
         test_kill_resume_s16},
        {"f32 killed, resumed and killed, resumed: the uninterrupted bytes",
         test_kill_twice_resume_f32},
        {"resume with other settings: exit 3 naming the key, nothing lost",
         test_other_settings_refused},
        {"a torn tail is cut back to the last whole record", test_torn_tail},
        {"a WAV shorter than its journal, an edited journal: errors naming the file",
         test_damaged_partial},
        {"--resume with nothing to resume speaks every line", test_resume_from_nothing},
        {"SIGTERM keeps the partial files; resumed, the same bytes", test_sigterm_keeps_partials},
        {"a .wav shard killed and resumed merges to the whole run", test_shard_kill_resume},
    };
    return ck_cli_main("cli_speak_resume_wav", cases, sizeof cases / sizeof cases[0]);
}
