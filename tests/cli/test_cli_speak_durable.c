/* test_cli_speak_durable.c - what a corpus run has, `ckbatch speak` has too (docs/speak.md), on the
 * embedded synthetic weights: the voice's identity (the SHA-256 of the mixed [510, 256] f32 pack of
 * two packs written here, computed here with sha256sum, equals the one in the WAV's ICMT and in the
 * sidecar's settings record); a safetensors file holding every group but "decoder" is refused
 * naming the group, nothing written; --on-error stop ends at a bad line with nothing written,
 * skip records it (the reader's message, naming the input and line) without a file, speaks the
 * others and exits 4; --resume after a "kill" (a WAV deleted, the journal cut inside a record)
 * speaks only the lines without a record and WAV and ends byte for byte as the uninterrupted run,
 * and is refused (exit 3, naming the key) when a setting changed. */
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

#define PACK_FLOATS (510 * 256)

/* `ckbatch speak -q -f phonemes ARGS`, stderr to work/stderr; the exit status. */
static int speak(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s speak -q -f phonemes %s 2>%s/stderr", ck_cli_binary(), args,
             ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_floats(const char *path, const float *x, size_t n)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL && fwrite(x, sizeof *x, n, f) == n);
    fclose(f);
}

/* sha256sum's 64 hex digits of the file at path into hex[65] ("" on failure). */
static void sha256sum(const char *path, char hex[65])
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    hex[0] = '\0';
    if (p != NULL && fscanf(p, "%64s", hex) != 1) {
        hex[0] = '\0';
    }
    if (p != NULL) {
        pclose(p);
    }
    CU_ASSERT_EQUAL(strlen(hex), 64);
}

static void test_voice_identity(void)
{
    static float a[PACK_FLOATS], b[PACK_FLOATS], mix[PACK_FLOATS];
    for (size_t i = 0; i < PACK_FLOATS; i++) {
        a[i] = 0.05f * sinf(0.01f * (float)i);
        b[i] = 0.03f * cosf(0.02f * (float)i);
        /* docs/voices.md: sum(w_i pack_i) / sum(w_i) per element in double, rounded to f32 once */
        mix[i] = (float)((1.0 * (double)a[i] + 3.0 * (double)b[i]) / 4.0);
    }
    write_floats(ck_cli_tmp("a.bin"), a, PACK_FLOATS);
    write_floats(ck_cli_tmp("b.bin"), b, PACK_FLOATS);
    write_floats(ck_cli_tmp("mix.bin"), mix, PACK_FLOATS);
    char want[65], expect[160];
    sha256sum(ck_cli_tmp("mix.bin"), want);
    ck_cli_write_file(ck_cli_tmp("id.txt"), "\xc3\xb0i\n");
    char args[2048];
    snprintf(args, sizeof args, "--voice %s:1,%s:3 -i %s -o %s", ck_cli_tmp("a.bin"),
             ck_cli_tmp("b.bin"), ck_cli_tmp("id.txt"), ck_cli_tmp("id.wav"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    size_t n = 0;
    char *wav = ck_cli_slurp(ck_cli_tmp("id.wav"), &n);
    CU_ASSERT_FATAL(wav != NULL && n > 44);
    /* LIST/INFO ICMT: a NUL-terminated text chunk, as audio tools write it */
    const char *icmt = NULL;
    for (size_t i = 12; icmt == NULL && i + 8 < n; i++) {
        icmt = memcmp(wav + i, "ICMT", 4) == 0 ? wav + i + 8 : NULL;
    }
    CU_ASSERT_FATAL(icmt != NULL);
    snprintf(expect, sizeof expect, " voice_sha256=%s voice_row=clamp(phonemes-1,0,509) ", want);
    CU_ASSERT_PTR_NOT_NULL(strstr(icmt, expect));
    free(wav);
    char *side = ck_cli_slurp(ck_cli_tmp("id.wav.jsonl"), &n);
    CU_ASSERT_FATAL(side != NULL);
    /* the first record says what made the file; the line records follow */
    CU_ASSERT_EQUAL(strncmp(side, "{\"settings\":true,", 17), 0);
    snprintf(expect, sizeof expect, "\"voice_sha256\":\"%s\",", want);
    const char *at = strstr(side, expect);
    CU_ASSERT(at != NULL && at < strchr(side, '\n'));
    sha256sum(ck_cli_tmp("id.txt"), want);
    snprintf(expect, sizeof expect, "\"input_sha256\":\"%s\"}\n{\"line\":0,", want);
    CU_ASSERT_PTR_NOT_NULL(strstr(side, expect));
    free(side);
}

/* A safetensors file of one F32 [1] tensor in each of the four groups before "decoder": enough
 * for the loader to find them, and no decoder tensor. */
static void write_no_decoder(const char *path)
{
    static const char header[] =
        "{\"bert.x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"bert_encoder.x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
        "\"predictor.x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]},"
        "\"text_encoder.x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}";
    unsigned char size[8] = {0}, data[16] = {0};
    size_t n = sizeof header - 1;
    for (int i = 0; i < 8; i++) {
        size[i] = (unsigned char)(n >> (8 * i));
    }
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fwrite(size, 1, 8, f) == 8 && fwrite(header, 1, n, f) == n
              && fwrite(data, 1, sizeof data, f) == sizeof data);
    fclose(f);
}

static void test_no_decoder_group(void)
{
    write_no_decoder(ck_cli_tmp("nodec.safetensors"));
    ck_cli_write_file(ck_cli_tmp("nd.txt"), "\xc3\xb0i\n");
    char args[2048];
    snprintf(args, sizeof args, "--weights %s -i %s -o %s", ck_cli_tmp("nodec.safetensors"),
             ck_cli_tmp("nd.txt"), ck_cli_tmp("nd.wav"));
    CU_ASSERT_EQUAL(speak(args), 1);
    CU_ASSERT(ck_cli_stderr_has("nodec.safetensors: group \"decoder\" missing: the circuit "));
    CU_ASSERT(ck_cli_stderr_has("needs its tensors (\"decoder."));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("nd.wav")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("nd.wav.jsonl")));
}

static void test_on_error(void)
{
    /* ids: line 2 holds an id outside the vocabulary, line 3 is blank */
    ck_cli_write_file(ck_cli_tmp("ids.txt"), "[50, 83]\n[9999]\n\n[43, 102]\n");
    char args[2048];
    snprintf(args, sizeof args, "-f ids -i %s -o %s", ck_cli_tmp("ids.txt"), ck_cli_tmp("stop"));
    CU_ASSERT_EQUAL(speak(args), 1);
    CU_ASSERT(ck_cli_stderr_has("ids.txt:2: element 1: id 9999 out of range 1..177"));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("stop")));
    snprintf(args, sizeof args, "-f ids --on-error stop -i %s -o %s", ck_cli_tmp("ids.txt"),
             ck_cli_tmp("stop"));
    CU_ASSERT_EQUAL(speak(args), 1);
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("stop")));
    snprintf(args, sizeof args, "-f ids --on-error skip -i %s -o %s", ck_cli_tmp("ids.txt"),
             ck_cli_tmp("skip"));
    CU_ASSERT_EQUAL(speak(args), 4);
    CU_ASSERT(ck_cli_stderr_has("skipped: "));
    CU_ASSERT(ck_cli_exists(ck_cli_tmp("skip/000000.wav")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("skip/000001.wav")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("skip/000002.wav")));
    CU_ASSERT(ck_cli_exists(ck_cli_tmp("skip/000003.wav")));
    size_t n = 0;
    char *side = ck_cli_slurp(ck_cli_tmp("skip/timestamps.jsonl"), &n), want[1024];
    CU_ASSERT_FATAL(side != NULL);
    snprintf(want, sizeof want, "\"on_error\":\"skip\",");
    CU_ASSERT_PTR_NOT_NULL(strstr(side, want));
    snprintf(want, sizeof want, "\n{\"line\":1,\"error\":\"%s:2: element 1: id 9999 out of range "
             "1..177\"}\n{\"line\":2,\"error\":\"no phonemes\"}\n"
             "{\"line\":3,\"file\":\"000003.wav\",", ck_cli_tmp("ids.txt"));
    CU_ASSERT_PTR_NOT_NULL(strstr(side, want));
    free(side);
    snprintf(args, sizeof args, "--on-error retry -i %s -o %s", ck_cli_tmp("ids.txt"),
             ck_cli_tmp("bad"));
    CU_ASSERT_EQUAL(speak(args), 2);
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("bad")));
}

static ino_t inode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void test_resume(void)
{
    /* ði / a blank line / ði ˈAs / həlˈO */
    ck_cli_write_file(ck_cli_tmp("res.txt"),
                      "\xc3\xb0i\n\n\xc3\xb0i \xcb\x88" "As\nh\xc9\x99l\xcb\x88O\n");
    char args[2048], cmd[2048];
    snprintf(args, sizeof args, "--voice synthetic -i %s -o %s", ck_cli_tmp("res.txt"),
             ck_cli_tmp("whole"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("whole/timestamps.jsonl.partial")));
    snprintf(cmd, sizeof cmd, "cp -r %s %s", ck_cli_tmp("whole"), ck_cli_tmp("cut"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    /* a run killed while writing line 2's record: lines 0 and 1 recorded, the journal cut inside
     * line 2's record, line 2's WAV gone; line 3's WAV there without a record */
    size_t n = 0;
    char *side = ck_cli_slurp(ck_cli_tmp("whole/timestamps.jsonl"), &n);
    CU_ASSERT_FATAL(side != NULL);
    const char *rec2 = strstr(side, "\n{\"line\":2,");
    CU_ASSERT_FATAL(rec2 != NULL);
    FILE *f = fopen(ck_cli_tmp("cut/timestamps.jsonl.partial"), "wb");
    CU_ASSERT_FATAL(f != NULL);
    fwrite(side, 1, (size_t)(rec2 - side) + 20, f);
    fclose(f);
    free(side);
    CU_ASSERT_EQUAL(remove(ck_cli_tmp("cut/timestamps.jsonl")), 0);
    CU_ASSERT_EQUAL(remove(ck_cli_tmp("cut/000002.wav")), 0);
    ino_t line0 = inode(ck_cli_tmp("cut/000000.wav"));
    /* another seed: refused, naming it, nothing changed */
    snprintf(args, sizeof args, "--voice synthetic --seed 7 --resume -i %s -o %s",
             ck_cli_tmp("res.txt"), ck_cli_tmp("cut"));
    CU_ASSERT_EQUAL(speak(args), 3);
    CU_ASSERT(ck_cli_stderr_has("timestamps.jsonl.partial: written with other settings: \"seed\" "
                                "differs"));
    CU_ASSERT(ck_cli_exists(ck_cli_tmp("cut/timestamps.jsonl.partial")));
    snprintf(args, sizeof args, "--voice synthetic --resume -i %s -o %s", ck_cli_tmp("res.txt"),
             ck_cli_tmp("cut"));
    CU_ASSERT_EQUAL_FATAL(speak(args), 0);
    CU_ASSERT_EQUAL(inode(ck_cli_tmp("cut/000000.wav")), line0); /* not spoken again */
    const char *files[] = {"000000.wav", "000002.wav", "000003.wav", "timestamps.jsonl"};
    for (size_t i = 0; i < 4; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "whole/%s", files[i]);
        snprintf(b, sizeof b, "cut/%s", files[i]);
        CU_ASSERT(ck_cli_same_bytes(ck_cli_tmp(a), ck_cli_tmp(b)));
    }
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("cut/timestamps.jsonl.partial")));
    CU_ASSERT(!ck_cli_exists(ck_cli_tmp("cut/000001.wav")));
    /* --resume of a .wav OUT: tests/cli/test_cli_speak_resume_wav.c */
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"the mixed voice's SHA-256 in the WAV and the sidecar", test_voice_identity},
        {"weights without the decoder group: refused, naming it", test_no_decoder_group},
        {"--on-error stop and skip", test_on_error},
        {"--resume: byte for byte the uninterrupted run", test_resume},
    };
    return ck_cli_main("cli_speak_durable", cases, sizeof cases / sizeof cases[0]);
}
