/* test_cli_speak_batch.c - `ckbatch speak --max-batch-frames` (docs/speak.md "Batches") on the
 * embedded synthetic weights, voice "synthetic", seed 7 with the noise on: five short lines of
 * different lengths give the same WAV bytes (s16 and f32) and the same sidecar one line at a time
 * (--max-batch-frames 1) at one thread as all in one batch (1000000) at two, and the other way
 * round, and as the default budget; the data chunk holds the pinned 106,200 samples;
 * --max-batch-frames 0, negative, non-numeric or missing is a usage error (exit 2) with nothing written; --help names it. */
#include <stdint.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

/* ðə kˈæt sˈæt. / həlˈO. / a long line / ˈA. / wˈʌn tˈu θɹˈi fˈɔɹ fˈIv. : 106,200 samples */
static const char k_lines[] =
    "\xc3\xb0\xc9\x99 k\xcb\x88\xc3\xa6t s\xcb\x88\xc3\xa6t.\n"
    "h\xc9\x99l\xcb\x88O.\n"
    "\xc3\xb0\xc9\x99 d\xcb\x88\xc9\x94\xc9\xa1 \xc9\xb9\xcb\x88\xc3\xa6n h\xcb\x88Om \xc3\xa6nd "
    "sl\xcb\x88\xc9\x9bpt f\xc9\x94\xc9\xb9 \xc9\x99 l\xcb\x88\xc9\x94\xc5\x8b t\xcb\x88Im.\n"
    "\xcb\x88" "A.\n"
    "w\xcb\x88\xca\x8cn t\xcb\x88u \xce\xb8\xc9\xb9\xcb\x88i "
    "f\xcb\x88\xc9\x94\xc9\xb9 f\xcb\x88Iv.\n";

#define K_SAMPLES 106200u

static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s speak -q -f phonemes --voice synthetic --seed 7 %s 2>%s/stderr",
             ck_cli_binary(), args, ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint32_t u32_at(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bytes of the data chunk of the WAV at path; 0 when it has none or cannot be read. */
static uint32_t data_bytes(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[8];
    uint32_t found = 0;
    if (f == NULL || fseek(f, 12, SEEK_SET) != 0) {
        if (f != NULL) {
            fclose(f);
        }
        return 0;
    }
    while (fread(h, 1, 8, f) == 8) {
        uint32_t size = u32_at(h + 4);
        if (memcmp(h, "data", 4) == 0) {
            found = size;
            break;
        }
        if (fseek(f, (long)(size + (size & 1)), SEEK_CUR) != 0) {
            break;
        }
    }
    fclose(f);
    return found;
}

static int same(const char *a, const char *b)
{
    return ck_cli_same_bytes(ck_cli_tmp(a), ck_cli_tmp(b));
}

static void test_bytes_invariant(void)
{
    ck_cli_write_file(ck_cli_tmp("five.txt"), k_lines);
    /* output, sample format, --max-batch-frames (0: the default), threads */
    static const struct {
        const char *out, *format;
        unsigned frames, threads;
    } runs[] = {{"f1.wav", "f32", 1, 2}, {"fbig.wav", "f32", 1000000, 1},
                {"s1.wav", "s16", 1, 1}, {"sbig.wav", "s16", 1000000, 2},
                {"fdef.wav", "f32", 0, 2}};
    char args[1024], frames[64];
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        snprintf(frames, sizeof frames, runs[r].frames ? "--max-batch-frames %u" : "",
                 runs[r].frames);
        snprintf(args, sizeof args, "--sample-format %s --threads %u %s -i %s -o %s",
                 runs[r].format, runs[r].threads, frames, ck_cli_tmp("five.txt"),
                 ck_cli_tmp(runs[r].out));
        CU_ASSERT_EQUAL_FATAL(run(args), 0);
    }
    CU_ASSERT_EQUAL(data_bytes(ck_cli_tmp("f1.wav")), 4 * K_SAMPLES);
    CU_ASSERT_EQUAL(data_bytes(ck_cli_tmp("s1.wav")), 2 * K_SAMPLES);
    /* one line at a time == one batch, each at the other thread count (one run per pair, to stay
     * cheap: a differing pair would show either), == the default budget */
    CU_ASSERT(same("f1.wav", "fbig.wav"));
    CU_ASSERT(same("s1.wav", "sbig.wav"));
    CU_ASSERT(same("f1.wav", "fdef.wav"));
    CU_ASSERT(same("f1.wav.jsonl", "fbig.wav.jsonl"));
    CU_ASSERT(same("s1.wav.jsonl", "sbig.wav.jsonl"));
    /* the formats differ: the comparison is not of empty or equal files */
    CU_ASSERT(!same("f1.wav", "s1.wav"));
}

static void test_refusals(void)
{
    ck_cli_write_file(ck_cli_tmp("r.txt"), "\xc3\xb0i\n");
    static const char *bad[] = {"--max-batch-frames 0", "--max-batch-frames -3",
                                "--max-batch-frames x", "--max-batch-frames 1.5",
                                "--max-batch-frames"};
    char args[1024];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(args, sizeof args, "-i %s -o %s %s", ck_cli_tmp("r.txt"), ck_cli_tmp("bad.wav"),
                 bad[k]);
        CU_ASSERT_EQUAL(run(args), 2);
        CU_ASSERT(!ck_cli_exists(ck_cli_tmp("bad.wav")));
        CU_ASSERT(!ck_cli_exists(ck_cli_tmp("bad.wav.jsonl")));
    }
    CU_ASSERT(ck_cli_stderr_has("--max-batch-frames"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s speak --help >%s 2>&1", ck_cli_binary(), ck_cli_tmp("stderr"));
    CU_ASSERT_EQUAL(system(cmd), 0);
    CU_ASSERT(ck_cli_stderr_has("--max-batch-frames N"));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"same bytes one at a time, in one batch, at 1 and 2 threads", test_bytes_invariant},
        {"bad --max-batch-frames writes nothing; --help names it", test_refusals},
    };
    return ck_cli_main("cli_speak_batch", cases, sizeof cases / sizeof cases[0]);
}
