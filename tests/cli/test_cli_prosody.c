/* test_cli_prosody.c - `ckbatch --layer prosody` end to end: on the embedded default (the synthetic
 * whole Kokoro, the speech capture's weights, tests/fixtures/speech manifest "weights") the
 * durations of speech4, speech8 (speed 1.4) and speech20 (speed 1.3) with voice "synthetic" equal
 * the capture's pred_dur, frame_offsets their sums, and the word times of speech20 the values worked
 * out by hand in test_prosody_words.c; --voice and --speed refused as usage errors (exit 2, no
 * file) for every bad form; resume after SIGKILL, shards merged, --on-error skip and a changed
 * --speed under resume keep working for this layer (byte-identical files, f0 and n included); the
 * file's f0 and n (F32 [2F]) are ck_model_prosody's bits for the same lines, at 1 and 2 threads,
 * and a line alone gives the bits of its slice of a batch; the tokens-only circuit writes neither. */
#include <math.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

#define CAPTURE "tests/fixtures/speech/kokoro_speech_capture.safetensors"

/* Runs ckbatch with `args`; stderr to ck_cli_work/stderr. Exit code. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s -q --layer prosody %s 2>%s/stderr", ck_cli_binary(), args,
             ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Element i of an I32 or I64 tensor view. */
static long long int_at(const ck_tensor_view *t, size_t i)
{
    if (strcmp(t->dtype, "I32") == 0) {
        int32_t v;
        memcpy(&v, (const char *)t->data + 4 * i, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, (const char *)t->data + 8 * i, 8);
    return v;
}

/* One line `phonemes` at `speed` (NULL: the default) into name; the file opened. */
static ck_features_file *run_one(const char *name, const char *phonemes, const char *extra)
{
    char in[64], args[1024];
    snprintf(in, sizeof in, "%s.txt", name);
    ck_cli_write_file(ck_cli_tmp(in), phonemes);
    snprintf(args, sizeof args, "%s -i %s -o %s", extra, ck_cli_tmp(in), ck_cli_tmp(name));
    CU_ASSERT_EQUAL(run(args), 0);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_features_open(&f, ck_cli_tmp(name), &err), CK_OK);
    return f;
}

/* The file's durations equal the capture's "<case>.pred_dur"; frame_offsets [0, their sum]. */
static void check_against_capture(const ck_features_file *f, const char *case_name)
{
    ck_features_file *cap = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&cap, ck_test_path(CAPTURE), &err), CK_OK);
    char name[64];
    snprintf(name, sizeof name, "%s.pred_dur", case_name);
    const ck_tensor_view *want = ck_features_tensor(cap, name);
    const ck_tensor_view *got = ck_features_tensor(f, "durations");
    const ck_tensor_view *frames = ck_features_tensor(f, "frame_offsets");
    CU_ASSERT_FATAL(want != NULL && got != NULL && frames != NULL);
    CU_ASSERT_STRING_EQUAL(got->dtype, "I32");
    CU_ASSERT_EQUAL_FATAL(got->elements, want->elements);
    long long sum = 0;
    for (size_t t = 0; t < want->elements; t++) {
        CU_ASSERT_EQUAL(int_at(got, t), int_at(want, t));
        sum += int_at(want, t);
    }
    CU_ASSERT_EQUAL(frames->elements, 2);
    CU_ASSERT_EQUAL(int_at(frames, 0), 0);
    CU_ASSERT_EQUAL(int_at(frames, 1), sum);
    ck_features_close(cap);
}

static void test_durations_equal_capture(void)
{
    static const struct {
        const char *name, *phonemes, *speed;
    } cases[] = {
        {"speech4", "ði\n", "1"},
        {"speech8", "ði ˈAs\n", "1.4"},
        {"speech20", "ði dˈɔɡ ɹˈæn hˈOm.\n", "1.3"},
    };
    for (size_t k = 0; k < 3; k++) {
        char extra[128];
        snprintf(extra, sizeof extra, "--voice synthetic --speed %s", cases[k].speed);
        ck_features_file *f = run_one(cases[k].name, cases[k].phonemes, extra);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        check_against_capture(f, cases[k].name);
        CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "layer"), "prosody");
        CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "voice"), "synthetic");
        CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "speed"), cases[k].speed);
        CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "frames_per_second"), "40");
        ck_features_close(f);
    }
    /* the synthetic weights' default voice is "synthetic": the same durations without --voice */
    ck_features_file *f = run_one("speech4d", "ði\n", "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    check_against_capture(f, "speech4");
    CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "voice"), "synthetic");
    ck_features_close(f);
}

/* speech20's record: frames 31 and the hand-worked word times (test_prosody_words.c). */
static void test_word_times(void)
{
    ck_features_file *f = run_one("w20", "ði dˈɔɡ ɹˈæn hˈOm.\n", "--voice synthetic --speed 1.3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *seqs = ck_cli_text(f, "sequences");
    CU_ASSERT_STRING_EQUAL(seqs, "{\"line\":1,\"chunk\":0,\"chunks\":1,\"tokens\":20,\"phonemes\":"
                           "\"ði dˈɔɡ ɹˈæn hˈOm.\",\"frames\":31,\"words\":["
                           "{\"phonemes\":\"ði\",\"start\":0,\"end\":0.0625},"
                           "{\"phonemes\":\"dˈɔɡ\",\"start\":0.0625,\"end\":0.2},"
                           "{\"phonemes\":\"ɹˈæn\",\"start\":0.2,\"end\":0.45},"
                           "{\"phonemes\":\"hˈOm.\",\"start\":0.45,\"end\":0.725}]}\n");
    free(seqs);
    ck_features_close(f);
}

/* Each bad --voice or --speed: exit 2, the message, no output and no partial file. */
static void test_bad_voice_and_speed(void)
{
    ck_cli_write_file(ck_cli_tmp("b.txt"), "ði\n");
    FILE *nan_pack = fopen(ck_cli_tmp("nan.bin"), "wb"), *short_pack = fopen(ck_cli_tmp("short.bin"),
                                                                             "wb");
    CU_ASSERT_FATAL(nan_pack != NULL && short_pack != NULL);
    for (size_t i = 0; i < 510 * 256; i++) {
        float v = i == 300 * 256 + 7 ? NAN : 0.01f;
        fwrite(&v, 4, 1, nan_pack);
        if (i < 1000) {
            fwrite(&v, 4, 1, short_pack);
        }
    }
    fclose(nan_pack);
    fclose(short_pack);
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"--speed 0", "--speed 0: expected a number > 0"},
        {"--speed -1", "--speed -1: expected a number > 0"},
        {"--speed nan", "--speed nan: expected a number > 0"},
        {"--speed inf", "--speed inf: expected a number > 0"},
        {"--speed fast", "--speed fast: expected a number > 0"},
        {"--speed 1e999", "--speed 1e999: expected a number > 0"},
        {"--voice af_nobody", "af_heart"},
        {"--voice AF", "--voice:"},
        {"--voice af_heart:0", "--voice:"},
    };
    char args[1024];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(args, sizeof args, "%s -i %s -o %s", cases[k].args, ck_cli_tmp("b.txt"),
                 ck_cli_tmp("b.st"));
        CU_ASSERT_EQUAL(run(args), 2);
        CU_ASSERT_TRUE(ck_cli_stderr_has(cases[k].message));
        CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("b.st")));
        CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("b.st.partial")));
    }
    snprintf(args, sizeof args, "--voice %s -i %s -o %s", ck_cli_tmp("nan.bin"), ck_cli_tmp("b.txt"),
             ck_cli_tmp("b.st"));
    CU_ASSERT_EQUAL(run(args), 2);
    CU_ASSERT_TRUE(ck_cli_stderr_has("row 300"));
    snprintf(args, sizeof args, "--voice %s -i %s -o %s", ck_cli_tmp("short.bin"),
             ck_cli_tmp("b.txt"), ck_cli_tmp("b.st"));
    CU_ASSERT_EQUAL(run(args), 2);
    CU_ASSERT_TRUE(ck_cli_stderr_has("4000"));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("b.st")));
    /* --voice and --speed belong to --layer prosody */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --speed 1 -i %s -o %s 2>%s/stderr", ck_cli_binary(),
             ck_cli_tmp("b.txt"), ck_cli_tmp("b.st"), ck_cli_work);
    CU_ASSERT_EQUAL(WEXITSTATUS(system(cmd)), 2);
    CU_ASSERT_TRUE(ck_cli_stderr_has("--voice and --speed need --layer prosody"));
}

/* The f0 and n of file f: F32 [2F], F the last frame offset; both present. */
static void check_curve_shapes(const ck_features_file *f)
{
    const ck_tensor_view *frames = ck_features_tensor(f, "frame_offsets");
    CU_ASSERT_PTR_NOT_NULL_FATAL(frames);
    long long total = int_at(frames, frames->elements - 1);
    CU_ASSERT_FATAL(total > 0);
    const char *names[] = {"f0", "n"};
    for (int c = 0; c < 2; c++) {
        const ck_tensor_view *t = ck_features_tensor(f, names[c]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(t->dtype, "F32");
        CU_ASSERT_EQUAL(t->rank, 1);
        CU_ASSERT_EQUAL(t->elements, (size_t)(2 * total));
        CU_ASSERT_EQUAL(t->bytes, (size_t)(8 * total));
    }
}

/* Tensor `name` of a and the bytes [from, from + bytes) of tensor `name` of b are the same. */
static int same_slice(const ck_features_file *a, const ck_features_file *b, const char *name,
                      size_t from, size_t bytes)
{
    const ck_tensor_view *x = ck_features_tensor(a, name), *y = ck_features_tensor(b, name);
    return x != NULL && y != NULL && x->bytes == bytes && from + bytes <= y->bytes &&
           memcmp(x->data, (const char *)y->data + from, bytes) == 0;
}

/* Three lines (speech20, speech8, speech4 of the capture) at speed 1.3: the file's f0 and n are the
 * bits of ck_model_prosody on the same lines, at 1 and 2 threads; each line run alone gives the
 * bits of its slice of the three-line file. */
static void test_curves_equal_the_api(void)
{
    static const char *const lines[] = {"ði dˈɔɡ ɹˈæn hˈOm.", "ði ˈAs", "ði"};
    char text[256];
    snprintf(text, sizeof text, "%s\n%s\n%s\n", lines[0], lines[1], lines[2]);
    ck_features_file *one = run_one("cv1", text, "--voice synthetic --speed 1.3 -t 1");
    ck_features_file *two = run_one("cv2", text, "--voice synthetic --speed 1.3 -t 2");
    CU_ASSERT_FATAL(one != NULL && two != NULL);
    check_curve_shapes(one);
    const ck_tensor_view *f0 = ck_features_tensor(one, "f0"), *n = ck_features_tensor(one, "n");
    CU_ASSERT_TRUE(same_slice(two, one, "f0", 0, f0->bytes));
    CU_ASSERT_TRUE(same_slice(two, one, "n", 0, n->bytes));
    /* the API on the same lines */
    ck_model_params p = ck_model_default_params();
    p.circuit = ck_prosody_circuit_path();
    p.threads = 2;
    ck_model *m = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_load(&m, &p, &err), CK_OK);
    ck_lines_params lp = ck_lines_default_params();
    ck_sequence_set set;
    CU_ASSERT_EQUAL_FATAL(ck_model_tokenize(m, lines, 3, &lp, &set, &err), CK_OK);
    ck_prosody api;
    CU_ASSERT_EQUAL_FATAL(ck_model_prosody(m, &set, "synthetic", 1.3, &api, &err), CK_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(api.f0);
    CU_ASSERT_EQUAL_FATAL(f0->elements, 2 * api.frame_offsets[3]);
    CU_ASSERT_EQUAL(memcmp(f0->data, api.f0, f0->bytes), 0);
    CU_ASSERT_EQUAL(memcmp(n->data, api.n, n->bytes), 0);
    /* each line alone: its slice of the batch */
    const ck_tensor_view *frames = ck_features_tensor(one, "frame_offsets");
    for (size_t k = 0; k < 3; k++) {
        char name[16], line[64];
        snprintf(name, sizeof name, "cva%zu", k);
        snprintf(line, sizeof line, "%s\n", lines[k]);
        ck_features_file *alone = run_one(name, line, "--voice synthetic --speed 1.3 -t 2");
        CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
        check_curve_shapes(alone);
        size_t from = 8 * (size_t)int_at(frames, k), to = 8 * (size_t)int_at(frames, k + 1);
        CU_ASSERT_TRUE(same_slice(alone, one, "f0", from, to - from));
        CU_ASSERT_TRUE(same_slice(alone, one, "n", from, to - from));
        ck_features_close(alone);
    }
    ck_prosody_free(&api);
    ck_sequence_set_free(&set);
    ck_model_free(m);
    /* a circuit without "f0"/"n" outputs: the same durations, neither tensor */
    char extra[4200];
    snprintf(extra, sizeof extra, "--voice synthetic --speed 1.3 --circuit %s",
             ck_test_path("circuits/kokoro_prosody_tokens.json"));
    ck_features_file *tokens = run_one("cvt", text, extra);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tokens);
    CU_ASSERT_PTR_NULL(ck_features_tensor(tokens, "f0"));
    CU_ASSERT_PTR_NULL(ck_features_tensor(tokens, "n"));
    const ck_tensor_view *d = ck_features_tensor(one, "durations");
    CU_ASSERT_TRUE(same_slice(tokens, one, "durations", 0, d->bytes));
    CU_ASSERT_TRUE(same_slice(tokens, one, "frame_offsets", 0, frames->bytes));
    ck_features_close(tokens);
    ck_features_close(one);
    ck_features_close(two);
}

/* Short phoneme lines: enough for several windows at --max-batch-tokens 512 (a window is 4
 * batches), line `bad` (0: none) a line with nothing in the vocabulary. */
static void write_corpus(const char *path, int n, int bad)
{
    static const char *const words[] = {"ði", "dˈɔɡ", "ɹˈæn", "hˈOm", "ˈAs", "bˈOt", "lˈAk"};
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int line = 1; line <= n; line++) {
        if (line == bad) {
            fputs("##\n", f);
            continue;
        }
        for (int w = 0; w < 1 + line % 5; w++) {
            fprintf(f, "%s%s", w ? " " : "", words[(line + 3 * w) % 7]);
        }
        fputs(line % 3 == 0 ? ".\n" : "\n", f);
    }
    fclose(f);
}

/* 150 lines, about 2,300 tokens: two windows at --max-batch-tokens 512 (a window is 4 batches),
 * few because the prosody circuit runs at a few hundred tokens/s today. */
static void test_resume_shards_and_skip(void)
{
    write_corpus(ck_cli_tmp("c.txt"), 150, 37);
    char args[2048], cmd[4096];
    const char *common = "--voice synthetic --speed 1.2 --max-batch-tokens 512 --on-error skip";
    snprintf(args, sizeof args, "%s -t 2 -i %s -o %s", common, ck_cli_tmp("c.txt"),
             ck_cli_tmp("whole.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("whole.st"), &err), CK_OK);
    char *skipped = ck_cli_text(f, "skipped");
    CU_ASSERT_PTR_NOT_NULL(strstr(skipped, "{\"line\":37,"));
    free(skipped);
    CU_ASSERT_EQUAL(ck_features_tensor(f, "offsets")->elements, 150);
    CU_ASSERT_EQUAL(ck_features_tensor(f, "frame_offsets")->elements, 150);
    check_curve_shapes(f);
    ck_features_close(f);
    /* killed after its first commit; a resume under another speed is refused (its durations
     * would differ); resumed at another thread count: the same bytes */
    snprintf(cmd, sizeof cmd, "exec %s -q --layer prosody %s -t 1 -i %s -o %s 2>/dev/null",
             ck_cli_binary(), common, ck_cli_tmp("c.txt"), ck_cli_tmp("r.st"));
    ck_cli_kill_after_first_commit(cmd, ck_cli_tmp("r.st"));
    snprintf(args, sizeof args, "--voice synthetic --speed 1.3 --max-batch-tokens 512 --on-error "
             "skip --resume -i %s -o %s", ck_cli_tmp("c.txt"), ck_cli_tmp("r.st"));
    CU_ASSERT_EQUAL(run(args), 3);
    CU_ASSERT_TRUE(ck_cli_stderr_has("speed=1.2"));
    snprintf(args, sizeof args, "%s --resume -t 2 -i %s -o %s", common, ck_cli_tmp("c.txt"),
             ck_cli_tmp("r.st"));
    CU_ASSERT_EQUAL(run(args), 0);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("r.st"), ck_cli_tmp("whole.st")));
    /* two shards merged: the same bytes (frame_offsets shifted like offsets) */
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "%s --shard %d/2 -i %s -o %s", common, i, ck_cli_tmp("c.txt"),
                 ck_cli_tmp("sh.st"));
        CU_ASSERT_EQUAL(run(args), 0);
    }
    snprintf(cmd, sizeof cmd, "%s merge -q -o %s 2>%s/stderr", ck_cli_binary(), ck_cli_tmp("sh.st"),
             ck_cli_work);
    CU_ASSERT_EQUAL(system(cmd), 0);
    CU_ASSERT_TRUE(ck_cli_same_bytes(ck_cli_tmp("sh.st"), ck_cli_tmp("whole.st")));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"durations equal the capture's pred_dur", test_durations_equal_capture},
        {"word times of speech20", test_word_times},
        {"bad --voice and --speed are usage errors", test_bad_voice_and_speed},
        {"f0 and n equal the API's, alone and in a batch", test_curves_equal_the_api},
        {"resume, shards and skip", test_resume_shards_and_skip},
    };
    return ck_cli_main("cli_prosody", cases, sizeof cases / sizeof cases[0]);
}
