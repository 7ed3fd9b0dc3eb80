/* test_cli_speak.c - `ckbatch speak` end to end on the embedded synthetic weights (the speech
 * capture's), voice "synthetic": speech4's phonemes with --noise-scale 0 give a WAV whose header
 * bytes are RIFF/WAVE, PCM or IEEE float, mono, 24,000 Hz, with 600 x 7 samples, the f32 file's
 * data bytes equal to ck_model_speak's audio and the s16 file's its rounding; the sidecar's sample
 * range and word count; the same seed gives the same bytes, another seed other bytes; a line's file
 * in directory mode is the same bytes at --threads 1 and 2 and beside other lines; a line without
 * phonemes gets a record and no file; bad --sample-format, --seed, --noise-scale and an unwritable
 * OUT are refused with nothing written; --precision bf16 speaks, its LIST/INFO naming what ran
 * bf16, and is refused where oneDNN has no native bf16. */
#include <math.h>
#include <stdint.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s speak -q -f phonemes --voice synthetic %s 2>%s/stderr",
             ck_cli_binary(), args, ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint32_t u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The data chunk of a WAV (pointer and byte count); NULL when none. */
static const unsigned char *wav_data(const unsigned char *b, size_t n, size_t *bytes)
{
    for (size_t at = 12; at + 8 <= n;) {
        uint32_t size = u32(b + at + 4);
        if (memcmp(b + at, "data", 4) == 0) {
            *bytes = size;
            return at + 8 + size <= n ? b + at + 8 : NULL;
        }
        at += 8 + size + (size & 1);
    }
    return NULL;
}

typedef struct {
    float *audio;
    size_t samples;
} api_audio;

static int keep(void *user, const ck_speech_line *l, ck_error *err)
{
    (void)err;
    api_audio *a = user;
    a->audio = malloc(l->samples * sizeof(float));
    memcpy(a->audio, l->audio, l->samples * sizeof(float));
    a->samples = l->samples;
    return CK_OK;
}

static void test_header_and_samples(void)
{
    ck_cli_write_file(ck_cli_tmp("s4.txt"), "\xc3\xb0i\n");
    char args[1024];
    snprintf(args, sizeof args, "--noise-scale 0 --sample-format f32 -i %s -o %s",
             ck_cli_tmp("s4.txt"), ck_cli_tmp("f.wav"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(args, sizeof args, "--noise-scale 0 -i %s -o %s", ck_cli_tmp("s4.txt"),
             ck_cli_tmp("s.wav"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    /* the API's audio for the same line */
    ck_model_params p = ck_model_default_params();
    p.circuit = ck_speech_circuit_path();
    p.threads = 2;
    ck_model *m = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_load(&m, &p, &err), CK_OK);
    const char *line = "\xc3\xb0i";
    ck_lines_params lp = ck_lines_default_params();
    ck_sequence_set set;
    CU_ASSERT_EQUAL_FATAL(ck_model_tokenize(m, &line, 1, &lp, &set, &err), CK_OK);
    ck_speak_options o;
    ck_speak_options_init(&o);
    o.voice = "synthetic";
    o.noise_scale = 0.0f;
    api_audio a = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_speak(m, &set, &o, keep, &a, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(a.samples, 4200);
    size_t nf = 0, ns = 0, df = 0, ds = 0;
    unsigned char *f = (unsigned char *)ck_cli_slurp(ck_cli_tmp("f.wav"), &nf);
    unsigned char *s = (unsigned char *)ck_cli_slurp(ck_cli_tmp("s.wav"), &ns);
    CU_ASSERT_FATAL(f != NULL && s != NULL);
    CU_ASSERT(memcmp(f, "RIFF", 4) == 0 && memcmp(f + 8, "WAVEfmt ", 8) == 0);
    CU_ASSERT_EQUAL(u32(f + 4), nf - 8);
    static const unsigned char fmt_s16[] = {1, 0, 1, 0, 0xc0, 0x5d, 0, 0, 0x80, 0xbb, 0, 0, 2, 0,
                                            16, 0};
    static const unsigned char fmt_f32[] = {3, 0, 1, 0, 0xc0, 0x5d, 0, 0, 0x00, 0x77, 1, 0, 4, 0,
                                            32, 0};
    CU_ASSERT(memcmp(s + 20, fmt_s16, sizeof fmt_s16) == 0);
    CU_ASSERT(memcmp(f + 20, fmt_f32, sizeof fmt_f32) == 0);
    const unsigned char *pf = wav_data(f, nf, &df), *ps = wav_data(s, ns, &ds);
    CU_ASSERT_FATAL(pf != NULL && ps != NULL);
    CU_ASSERT_EQUAL(df, 4200 * 4);
    CU_ASSERT_EQUAL(ds, 4200 * 2);
    CU_ASSERT(memcmp(pf, a.audio, df) == 0);
    int ok = 1;
    for (size_t i = 0; i < 4200; i++) {
        double x = nearbyint((double)a.audio[i] * 32768.0);
        x = x > 32767 ? 32767 : x < -32768 ? -32768 : x;
        int16_t v = (int16_t)(ps[2 * i] | ps[2 * i + 1] << 8);
        ok &= v == (int16_t)x;
    }
    CU_ASSERT(ok);
    size_t nj = 0;
    unsigned char *j = (unsigned char *)ck_cli_slurp(ck_cli_tmp("s.wav.jsonl"), &nj);
    CU_ASSERT_FATAL(j != NULL);
    j[nj] = '\0';
    CU_ASSERT(strstr((char *)j, "\"start_sample\":0,\"end_sample\":4200,") != NULL);
    CU_ASSERT(strstr((char *)j, "\"phonemes\":\"\xc3\xb0i\"") != NULL);
    free(j);
    free(f);
    free(s);
    free(a.audio);
    ck_sequence_set_free(&set);
    ck_model_free(m);
}

static int same_file(const char *a, const char *b)
{
    return ck_cli_same_bytes(ck_cli_tmp(a), ck_cli_tmp(b));
}

static void test_seed_threads_batch(void)
{
    ck_cli_write_file(ck_cli_tmp("two.txt"), "\xc3\xb0i\n\xc3\xb0i \xcb\x88" "As\n");
    ck_cli_write_file(ck_cli_tmp("other.txt"),
                      "h\xc9\x99l\xcb\x88O w\xcb\x88\xc9\x9c\xc9\xb9ld\n\xc3\xb0i \xcb\x88" "As\n\n");
    char args[1024];
    const char *runs[][3] = {{"--seed 5 --threads 1", "two.txt", "a"},
                             {"--seed 5 -t 2", "two.txt", "b"}, /* -t: the encoder's short form */
                             {"--seed 6 --threads 2", "two.txt", "c"},
                             {"--seed 5 --threads 2", "other.txt", "d"}};
    for (size_t r = 0; r < 4; r++) {
        snprintf(args, sizeof args, "%s -i %s -o %s", runs[r][0], ck_cli_tmp(runs[r][1]),
                 ck_cli_tmp(runs[r][2]));
        CU_ASSERT_EQUAL_FATAL(run(args), 0);
    }
    CU_ASSERT(same_file("a/000000.wav", "b/000000.wav"));
    CU_ASSERT(same_file("a/000001.wav", "b/000001.wav"));
    CU_ASSERT(same_file("a/timestamps.jsonl", "b/timestamps.jsonl"));
    CU_ASSERT(!same_file("a/000001.wav", "c/000001.wav"));
    /* line 1 beside another line 0: the same bytes (noise keyed by line, not batch position) */
    CU_ASSERT(same_file("b/000001.wav", "d/000001.wav"));
    CU_ASSERT(!same_file("b/000000.wav", "d/000000.wav"));
    /* the empty line 2: a record, no file */
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("d/000002.wav")));
    size_t nj = 0;
    unsigned char *j = (unsigned char *)ck_cli_slurp(ck_cli_tmp("d/timestamps.jsonl"), &nj);
    CU_ASSERT_FATAL(j != NULL);
    j[nj] = '\0';
    CU_ASSERT(strstr((char *)j, "{\"line\":2,\"error\":\"no phonemes\"}") != NULL);
    free(j);
}

static void test_refusals(void)
{
    ck_cli_write_file(ck_cli_tmp("r.txt"), "\xc3\xb0i\n");
    const char *bad[] = {"--sample-format s8", "--sample-format", "--seed -1", "--seed x",
                         "--seed 18446744073709551616", "--noise-scale -1", "--noise-scale nan",
                         "--speed 0", "--lang fr"};
    char args[1024];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(args, sizeof args, "-i %s -o %s %s", ck_cli_tmp("r.txt"), ck_cli_tmp("bad.wav"),
                 bad[k]);
        CU_ASSERT_EQUAL(run(args), 2);
        CU_ASSERT(!ck_cli_exists(ck_cli_tmp("bad.wav")));
    }
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("r.txt"), ck_cli_tmp("no/dir/x.wav"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT(ck_cli_stderr_has("cannot create"));
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("missing.txt"), ck_cli_tmp("m.wav"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("m.wav")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("m.wav.jsonl")));
}

/* 1 when the n bytes at b hold the string s. */
static int has_text(const unsigned char *b, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; b != NULL && i + k <= n; i++) {
        if (memcmp(b + i, s, k) == 0) {
            return 1;
        }
    }
    return 0;
}

/* --precision bf16 speaks (it was refused on every CPU): the same samples as fp32, and the WAV's
 * LIST/INFO says bf16 and what ran bf16 per speech class; fp32's says fp32 and no dispatch. A CPU
 * without native bf16 (or oneDNN capped below it) refuses as the encoder does, writing nothing. */
static void test_bf16(void)
{
    ck_cli_write_file(ck_cli_tmp("b4.txt"), "\xc3\xb0i\n");
    char args[1024], cmd[4096];
    snprintf(args, sizeof args, "--noise-scale 0 --precision bf16 -i %s -o %s",
             ck_cli_tmp("b4.txt"), ck_cli_tmp("b.wav"));
    int rc = run(args);
    if (rc == 1 && ck_cli_stderr_has("precision bf16: oneDNN has no native bf16 matmul")) {
        fprintf(stderr, "\n    bf16 refused on this CPU");
        CU_ASSERT(!ck_cli_exists(ck_cli_tmp("b.wav")));
        return;
    }
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    snprintf(args, sizeof args, "--noise-scale 0 -i %s -o %s", ck_cli_tmp("b4.txt"),
             ck_cli_tmp("bf.wav"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    size_t nb = 0, nf = 0, db = 0, df = 0;
    unsigned char *b = (unsigned char *)ck_cli_slurp(ck_cli_tmp("b.wav"), &nb);
    unsigned char *f = (unsigned char *)ck_cli_slurp(ck_cli_tmp("bf.wav"), &nf);
    CU_ASSERT_FATAL(b != NULL && f != NULL);
    CU_ASSERT(wav_data(b, nb, &db) != NULL && wav_data(f, nf, &df) != NULL);
    CU_ASSERT_EQUAL(db, 4200 * 2);
    CU_ASSERT_EQUAL(df, 4200 * 2);
    CU_ASSERT(has_text(b, nb, "precision=bf16 sample_rate=24000 dispatch=linear=f32+bf16 "));
    CU_ASSERT(has_text(b, nb, "; speech token_side=f32 conv1d=bf16 conv_transpose=bf16 "
                              "lstm_input=bf16 lstm_recurrence=f32 other=f32; onednn "));
    CU_ASSERT(has_text(f, nf, "precision=fp32 sample_rate=24000"));
    CU_ASSERT(!has_text(f, nf, "dispatch="));
    free(b);
    free(f);
    /* oneDNN capped below bf16: refused, nothing written */
    snprintf(cmd, sizeof cmd, "ONEDNN_MAX_CPU_ISA=AVX512_CORE %s speak -q -f phonemes --voice "
             "synthetic --precision bf16 -i %s -o %s 2>%s/stderr", ck_cli_binary(),
             ck_cli_tmp("b4.txt"), ck_cli_tmp("capped.wav"), ck_cli_work);
    int st = system(cmd);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    CU_ASSERT(ck_cli_stderr_has("precision bf16: oneDNN has no native bf16 matmul"));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("capped.wav")));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"speech4: WAV header, samples equal the API's", test_header_and_samples},
        {"seed, threads and batch mates", test_seed_threads_batch},
        {"bad options and paths write nothing", test_refusals},
        {"--precision bf16 speaks and says what ran bf16; capped oneDNN refuses", test_bf16},
    };
    return ck_cli_main("cli_speak", cases, sizeof cases / sizeof cases[0]);
}
