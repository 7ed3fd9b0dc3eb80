/* test_cli_speak_compiled.c - the whole speech model as generated C through the binary: `ckbatch
 * compile --circuit circuits/kokoro_speech.json` (one compiler run, fp32) and `speak --compiled`
 * give the interpreter's WAV and sidecar bytes on four phoneme lines of the embedded synthetic
 * weights with Kokoro's noise (scale 1, seeds 0 and 7): batched at 1 and 2 threads, one line per
 * batch (--max-batch-frames 1), and a directory's per-line files; a library for another circuit (the
 * encoder's, a second compiler run) or another precision is refused, CK_E_CIRCUIT at
 * ck_model_load, exit 1 and nothing written through the CLI. */
#include <stdint.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

#define SPEECH_CIRCUIT "circuits/kokoro_speech.json"

static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", ck_cli_binary(), args, ck_cli_tmp("stderr"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 1 when the two files exist and hold the same bytes (and at least min bytes). */
static int same_file(const char *a, const char *b, size_t min)
{
    size_t na = 0, nb = 0;
    unsigned char *x = (unsigned char *)ck_cli_slurp(a, &na);
    unsigned char *y = (unsigned char *)ck_cli_slurp(b, &nb);
    int same = x != NULL && y != NULL && na == nb && na >= min && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* The speech circuit compiled (fp32) into work/speech once; its library's path. */
static const char *speech_library(void)
{
    static char lib[512];
    if (lib[0] == '\0') {
        char args[1024];
        snprintf(args, sizeof args, "compile --circuit %s -q -o %s", SPEECH_CIRCUIT,
                 ck_cli_tmp("speech"));
        CU_ASSERT_EQUAL_FATAL(run(args), 0);
        snprintf(lib, sizeof lib, "%s/kokoro_speech.so", ck_cli_tmp("speech"));
    }
    return lib;
}

static void write_lines(void)
{
    /* ði / həlˈoʊ / ab / tə bi ɔr nɑt: 1 to 10 phonemes */
    ck_cli_write_file(ck_cli_tmp("lines.txt"), "\xc3\xb0i\nh\xc9\x99l\xcb\x88o\xca\x8a\nab\n"
                                               "t\xc9\x99 bi \xc9\x94r n\xc9\x91t\n");
}

/* speak the lines into work/out with opts (+ --compiled lib when lib). */
static void speak(const char *out, const char *opts, const char *lib)
{
    char args[4096];
    snprintf(args, sizeof args, "speak -q -f phonemes --voice synthetic %s -i %s -o %s%s%s", opts,
             ck_cli_tmp("lines.txt"), ck_cli_tmp(out), lib ? " --compiled " : "", lib ? lib : "");
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
}

/* OUT.wav and OUT.wav.jsonl of a and b hold the same bytes. */
static void check_same_wav(const char *a, const char *b)
{
    char ja[64], jb[64];
    snprintf(ja, sizeof ja, "%s.jsonl", a);
    snprintf(jb, sizeof jb, "%s.jsonl", b);
    CU_ASSERT_TRUE(same_file(ck_cli_tmp(a), ck_cli_tmp(b), 44 + 4 * 600 * 2 * 4));
    CU_ASSERT_TRUE(same_file(ck_cli_tmp(ja), ck_cli_tmp(jb), 4 * 20));
}

/* The library speaks the interpreter's bytes, batched at 1 and 2 threads and one line at a time;
 * another seed gives other bytes, again the interpreter's. */
static void test_wav_identical(void)
{
    const char *lib = speech_library();
    write_lines();
    speak("interp.wav", "--threads 1", NULL);
    speak("gen-t1.wav", "--threads 1", lib);
    speak("gen-t2.wav", "--threads 2", lib);
    speak("gen-alone.wav", "--threads 2 --max-batch-frames 1", lib);
    check_same_wav("interp.wav", "gen-t1.wav");
    check_same_wav("interp.wav", "gen-t2.wav");
    check_same_wav("interp.wav", "gen-alone.wav");
    speak("interp-7.wav", "--threads 2 --seed 7", NULL);
    speak("gen-7.wav", "--threads 2 --seed 7", lib);
    check_same_wav("interp-7.wav", "gen-7.wav");
    CU_ASSERT_FALSE(same_file(ck_cli_tmp("interp.wav"), ck_cli_tmp("interp-7.wav"), 0));
}

/* Directory OUT: every line's WAV and timestamps.jsonl are the interpreter's bytes. */
static void test_directory_identical(void)
{
    const char *lib = speech_library();
    write_lines();
    speak("interp-dir", "--threads 2", NULL);
    speak("gen-dir", "--threads 2", lib);
    char a[64], b[64];
    for (int i = 0; i < 4; i++) {
        snprintf(a, sizeof a, "interp-dir/%06d.wav", i);
        snprintf(b, sizeof b, "gen-dir/%06d.wav", i);
        CU_ASSERT_TRUE(same_file(ck_cli_tmp(a), ck_cli_tmp(b), 44 + 4 * 600));
    }
    CU_ASSERT_TRUE(same_file(ck_cli_tmp("interp-dir/timestamps.jsonl"),
                             ck_cli_tmp("gen-dir/timestamps.jsonl"), 4 * 20));
}

/* ck_model_load of the speech circuit with `lib` at `precision`: its status. */
static int load_speech(const char *lib, ck_precision precision)
{
    ck_model_params p = ck_model_default_params();
    p.circuit = ck_speech_circuit_path();
    p.compiled = lib;
    p.precision = precision;
    p.threads = 1;
    ck_model *m = NULL;
    ck_error err = {0};
    int rc = ck_model_load(&m, &p, &err);
    ck_model_free(m);
    return rc;
}

/* The encoder's library given to speak, and the fp32 speech library at bf16: CK_E_CIRCUIT before
 * any line runs (the provenance's circuit hash, precision), and the CLI writes nothing. */
static void test_wrong_library_refused(void)
{
    const char *speech = speech_library();
    char args[2048], encoder[512];
    snprintf(args, sizeof args, "compile -q -o %s", ck_cli_tmp("encoder"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(encoder, sizeof encoder, "%s/kokoro_phoneme_encoder.so", ck_cli_tmp("encoder"));
    CU_ASSERT_EQUAL(load_speech(encoder, CK_PRECISION_FP32), CK_E_CIRCUIT);
    CU_ASSERT_EQUAL(load_speech(speech, CK_PRECISION_BF16), CK_E_CIRCUIT);
    CU_ASSERT_EQUAL(load_speech(speech, CK_PRECISION_FP32), CK_OK);
    write_lines();
    snprintf(args, sizeof args, "speak -q -f phonemes --voice synthetic -i %s -o %s --compiled %s",
             ck_cli_tmp("lines.txt"), ck_cli_tmp("refused.wav"), encoder);
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("provenance circuit hash"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("refused.wav")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("refused.wav.jsonl")));
    snprintf(args, sizeof args, "speak -q -f phonemes --voice synthetic --precision bf16 -i %s -o "
             "%s --compiled %s", ck_cli_tmp("lines.txt"), ck_cli_tmp("refused.wav"), speech);
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("provenance precision is \"f32\", expected \"bf16\""),
                    1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("refused.wav")));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"wav identical", test_wav_identical},
        {"directory identical", test_directory_identical},
        {"wrong library refused", test_wrong_library_refused},
    };
    return ck_cli_main("cli_speak_compiled", cases, sizeof cases / sizeof cases[0]);
}
