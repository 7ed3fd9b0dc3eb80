/* test_voice.c - Kokoro voice packs: the shipped .bin packs by name (pinned SHA-256), a torch.save
 * .pt (tests/fixtures/pth/voice_tensor.pt, real torch), weighted and plain mixes against values read
 * independently from the files, the row rule, and every malformed spec or file refused with its
 * code and a message naming it. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck_status.h"
#include "ck_test.h"
#include "sha256.h"
#include "voice.h"

#define VOICES "data/voices"
#define N_VALUES ((size_t)CK_VOICE_ROWS * CK_VOICE_DIM)
/* data/voices/SHA256SUMS (= the shared kokoro.js packs' pinned sums) */
#define AF_HEART_SHA "d583ccff3cdca2f7fae535cb998ac07e9fcb90f09737b9a41fa2734ec44a8f0b"

static char g_dir[4096];

static const char *voices_dir(void)
{
    snprintf(g_dir, sizeof g_dir, "%s", ck_test_path(VOICES));
    return g_dir;
}

/* Element i of a raw pack file, read with stdio (not through voice.c). */
static float raw_value(const char *path, size_t i)
{
    unsigned char b[4];
    float f;
    FILE *fp = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    CU_ASSERT_EQUAL(fseek(fp, (long)(4 * i), SEEK_SET), 0);
    CU_ASSERT_EQUAL(fread(b, 1, 4, fp), 4);
    fclose(fp);
    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    memcpy(&f, &u, sizeof f);
    return f;
}

static const char *pack_path(const char *name)
{
    static char path[4][4200];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%.4000s/%.100s.bin", voices_dir(), name);
    return path[k];
}

static ck_voice *load_ok(const char *spec)
{
    ck_voice *v = NULL;
    ck_error err = {0};
    int rc = ck_voice_load(&v, spec, voices_dir(), &err);
    if (rc != CK_OK) {
        fprintf(stderr, "    %s: %s\n", spec, err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    return v;
}

static void expect_refused(const char *spec, int code, const char *needle)
{
    ck_voice *v = (ck_voice *)&v;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_voice_load(&v, spec, voices_dir(), &err), code);
    CU_ASSERT_PTR_NULL(v);
    if (strstr(err.message, needle) == NULL) {
        fprintf(stderr, "    %s: message \"%s\" lacks \"%s\"\n", spec, err.message, needle);
        CU_FAIL("message does not name what was refused");
    }
}

static void test_shipped_by_name(void)
{
    char hex[65];
    ck_voice *v = load_ok(CK_VOICE_DEFAULT);
    ck_sha256_hex(v->sha256, hex);
    CU_ASSERT_STRING_EQUAL(hex, AF_HEART_SHA);  /* the pack is the file's bytes, unchanged */
    CU_ASSERT_STRING_EQUAL(v->spec, "af_heart");
    const size_t probes[] = {0, 1, 255, 256, 300 * 256 + 17, N_VALUES - 1};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        CU_ASSERT_EQUAL(v->pack[probes[i]], raw_value(pack_path("af_heart"), probes[i]));
    }
    ck_voice_free(v);
    /* the same pack by path */
    v = load_ok(pack_path("af_heart"));
    ck_sha256_hex(v->sha256, hex);
    CU_ASSERT_STRING_EQUAL(hex, AF_HEART_SHA);
    ck_voice_free(v);
}

/* The synthetic pack equals the speech capture's voice (its manifest's weights.voice.sha256). */
static void test_synthetic_pack(void)
{
    char hex[65];
    ck_voice *v = load_ok(CK_VOICE_SYNTHETIC);
    ck_sha256_hex(v->sha256, hex);
    CU_ASSERT_STRING_EQUAL(hex, "113229cc5333934f173f18012139c35253fd80a482ea9834bda1af2f6cc5f945");
    ck_voice_free(v);
}

/* make_pth_fixtures.py values(97, [510, 1, 256]): k = (i * 37 + 1067) % 129 - 64, value k / 64 */
static void test_pt_file(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s", ck_test_path("tests/fixtures/pth/voice_tensor.pt"));
    ck_voice *v = load_ok(path);
    for (size_t i = 0; i < N_VALUES; i += 97) {
        CU_ASSERT_EQUAL(v->pack[i], (float)((long)((i * 37 + 1067) % 129) - 64) / 64.0f);
    }
    ck_voice_free(v);
}

/* Plain mean of two packs equals torch's f32 mean bit for bit ((a + b) / 2 rounds once either
 * way); a weighted mix is sum(w x) / sum(w) in double, rounded once. */
static void test_mixes(void)
{
    ck_voice *plain = load_ok("af_bella,af_sky");
    ck_voice *weighted = load_ok("af_bella:2,af_sky:1");
    ck_voice *three = load_ok("af_bella:0.5,af_sky,bm_george:2.5");
    CU_ASSERT_STRING_EQUAL(plain->spec, "af_bella:1,af_sky:1");
    CU_ASSERT_STRING_EQUAL(weighted->spec, "af_bella:2,af_sky:1");
    const size_t probes[] = {0, 127, 128, 509 * 256 + 255, 77777};
    for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
        size_t i = probes[k];
        float a = raw_value(pack_path("af_bella"), i), b = raw_value(pack_path("af_sky"), i);
        float c = raw_value(pack_path("bm_george"), i);
        CU_ASSERT_EQUAL(plain->pack[i], (a + b) * 0.5f);
        CU_ASSERT_EQUAL(weighted->pack[i], (float)((2.0 * a + 1.0 * b) / 3.0));
        CU_ASSERT_EQUAL(three->pack[i], (float)((0.5 * a + 1.0 * b + 2.5 * c) / 4.0));
    }
    CU_ASSERT_NOT_EQUAL(memcmp(plain->sha256, weighted->sha256, 32), 0);
    ck_voice_free(plain);
    ck_voice_free(weighted);
    ck_voice_free(three);
}

/* Weights at the ends of double's range mix like any others: equal powers of two (2^1023, 2^-1074)
 * give the plain mean bit for bit, 1e308 each within a rounding of it (2^1023 + 2^1023 and
 * 1e308 + 1e308 overflowed the sum of weights to Inf, giving NaN and zeros; 5e-324 x a value
 * underflowed to 0), and a weight 1e308 times the other's is that pack alone. */
static void test_extreme_weights(void)
{
    ck_voice *plain = load_ok("af_bella,af_sky");
    ck_voice *two = load_ok("af_bella:8.9884656743115795e307,af_sky:8.9884656743115795e307");
    ck_voice *huge = load_ok("af_bella:1e308,af_sky:1e308");
    ck_voice *tiny = load_ok("af_bella:5e-324,af_sky:5e-324");
    ck_voice *lopsided = load_ok("af_bella:1e308,af_sky:1");
    ck_voice *bella = load_ok("af_bella");
    CU_ASSERT_EQUAL(memcmp(two->pack, plain->pack, sizeof plain->pack), 0);
    CU_ASSERT_EQUAL(memcmp(tiny->pack, plain->pack, sizeof plain->pack), 0);
    CU_ASSERT_EQUAL(memcmp(lopsided->pack, bella->pack, sizeof bella->pack), 0);
    size_t far = 0;
    for (size_t i = 0; i < N_VALUES; i++) {
        far += !(fabsf(huge->pack[i] - plain->pack[i]) <= 1e-6f * fabsf(plain->pack[i]));
    }
    CU_ASSERT_EQUAL(far, 0);
    ck_voice_free(plain);
    ck_voice_free(two);
    ck_voice_free(huge);
    ck_voice_free(tiny);
    ck_voice_free(lopsided);
    ck_voice_free(bella);
}

/* A resolved spec longer than v->spec is cut with "...", never with a middle part dropped (a part
 * that did not fit was overwritten by the next one that did: "P:1,P:2,synthetic:1" for a mix of
 * four). */
static void test_long_spec_cut_visibly(void)
{
    char part[256], spec[1200];
    int n = snprintf(part, sizeof part, "%s", pack_path("af_heart"));
    while (n < 200) {  /* the same file, 200+ bytes: af_heart.bin -> ./af_heart.bin */
        char *slash = strrchr(part, '/');
        memmove(slash + 2, slash, strlen(slash) + 1);
        memcpy(slash, "/.", 2);
        n += 2;
    }
    snprintf(spec, sizeof spec, "%s:1,%s:2,%s:3,synthetic", part, part, part);
    ck_voice *v = load_ok(spec);
    size_t len = strlen(v->spec);
    CU_ASSERT_PTR_NULL(strstr(v->spec, "synthetic"));
    CU_ASSERT(len >= 3 && strcmp(v->spec + len - 3, "...") == 0);
    CU_ASSERT_EQUAL(strncmp(v->spec, spec, len - 3), 0);
    ck_voice_free(v);
}

/* Row = phonemes - 1 (pipeline.py: pack[len(ps) - 1]), clamped to the pack. */
static void test_row_rule(void)
{
    CU_ASSERT_EQUAL(ck_voice_row(1), 0);
    CU_ASSERT_EQUAL(ck_voice_row(42), 41);
    CU_ASSERT_EQUAL(ck_voice_row(510), 509);
    CU_ASSERT_EQUAL(ck_voice_row(511), 509);
    CU_ASSERT_EQUAL(ck_voice_row(0), 0);
    ck_voice *v = load_ok("am_adam");
    CU_ASSERT_PTR_EQUAL(ck_voice_style(v, 42), v->pack + 41 * CK_VOICE_DIM);
    CU_ASSERT_EQUAL(ck_voice_style(v, 42)[CK_VOICE_HALF], raw_value(pack_path("am_adam"),
                                                                     41 * 256 + 128));
    CU_ASSERT_PTR_NULL(ck_voice_style(NULL, 3));
    ck_voice_free(v);
}

/* Writes `n` bytes of a pack (af_heart's, with value `poke` at element `at` when at < N) to a tmp
 * file and returns its path. */
static const char *write_pack(const char *name, size_t n, size_t at, float poke)
{
    static unsigned char bytes[CK_VOICE_BYTES + 8];
    FILE *in = fopen(pack_path("af_heart"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_EQUAL(fread(bytes, 1, CK_VOICE_BYTES, in), CK_VOICE_BYTES);
    fclose(in);
    if (at < N_VALUES) {
        memcpy(bytes + 4 * at, &poke, 4);
    }
    const char *path = ck_test_tmp_path(name);
    FILE *out = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(fwrite(bytes, 1, n, out), n);
    fclose(out);
    return path;
}

static void test_bad_files_refused(void)
{
    expect_refused(write_pack("short.bin", 1000, N_VALUES, 0.0f), CK_E_FORMAT,
                   "voice pack of 1000 bytes; a pack is float32 [510, 1, 256], 522240 bytes");
    expect_refused(write_pack("long.bin", CK_VOICE_BYTES + 4, N_VALUES, 0.0f), CK_E_FORMAT,
                   "voice pack of 522244 bytes");
    expect_refused(write_pack("nan.bin", CK_VOICE_BYTES, 3 * 256 + 7, NAN), CK_E_NONFINITE,
                   "row 3, column 7 is NaN");
    expect_refused(write_pack("inf.bin", CK_VOICE_BYTES, 509 * 256 + 255, -INFINITY),
                   CK_E_NONFINITE, "row 509, column 255 is Inf");
    char mix[4200];
    snprintf(mix, sizeof mix, "af_sky,%s", ck_test_tmp_path("nan.bin"));
    expect_refused(mix, CK_E_NONFINITE, "nan.bin\": row 3, column 7 is NaN");
    char dict[4200];
    snprintf(dict, sizeof dict, "%s", ck_test_path("tests/fixtures/pth/kokoro_reduced_f32.pth"));
    expect_refused(dict, CK_E_FORMAT, "a voice file holds one floating tensor [510, 1, 256]");
    snprintf(dict, sizeof dict, "%s", ck_test_path("tests/fixtures/pth/voice_i64.pt"));
    expect_refused(dict, CK_E_FORMAT, "voice_i64.pt: a voice file holds one floating tensor "
                   "[510, 1, 256]; this one holds 1 tensor(s), the first I64 [2, 3]");
    expect_refused("/nonexistent/v.bin", CK_E_IO, "/nonexistent/v.bin");
    /* a FIFO with no writer: refused at once, not waited on (alarm turns a hang into a failure) */
    const char *fifo = ck_test_tmp_path("fifo.bin");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    alarm(10);
    expect_refused(fifo, CK_E_IO, "fifo.bin: voice pack is not a regular file");
    alarm(0);
    unlink(fifo);
}

static void test_bad_specs_refused(void)
{
    expect_refused("af_nobody", CK_E_IO, "no such shipped voice (shipped: af_bella, af_heart, "
                   "af_nicole, af_sky, am_adam, am_michael, bf_emma, bm_george)");
    expect_refused("", CK_E_ARG, "part 1 is empty");
    expect_refused("af_heart,", CK_E_ARG, "part 2 is empty");
    expect_refused("af_heart:0", CK_E_ARG, "weight \"0\" is not a positive number");
    expect_refused("af_heart:-1", CK_E_ARG, "weight \"-1\" is not a positive number");
    expect_refused("af_heart:x", CK_E_ARG, "weight \"x\" is not a positive number");
    expect_refused("af_heart:inf", CK_E_ARG, "weight \"inf\" is not a positive number");
    /* a decimal only, as voice.h says: strtod alone also took hex and leading blanks */
    expect_refused("af_heart:0x10", CK_E_ARG, "weight \"0x10\" is not a positive number");
    expect_refused("af_heart: 2", CK_E_ARG, "weight \" 2\" is not a positive number");
    expect_refused(":2", CK_E_ARG, "has a weight but no voice");
    expect_refused("AF_Heart", CK_E_ARG, "neither a file");
    expect_refused("a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a", CK_E_ARG, "more than 16 parts");
    ck_voice *v = (ck_voice *)&v;
    CU_ASSERT_EQUAL(ck_voice_load(&v, NULL, NULL, NULL), CK_E_ARG);
    CU_ASSERT_PTR_NULL(v);
    CU_ASSERT_EQUAL(ck_voice_load(NULL, "af_heart", NULL, NULL), CK_E_ARG);
    ck_voice_free(NULL);
}

static void test_cleanup(void)
{
    const char *files[] = {"short.bin", "long.bin", "nan.bin", "inf.bin"};
    for (size_t i = 0; i < 4; i++) {
        unlink(ck_test_tmp_path(files[i]));
    }
}

CK_TEST_MAIN("voice", {"shipped pack by name and by path", test_shipped_by_name},
             {".pt voice file", test_pt_file},
             {"synthetic pack", test_synthetic_pack},
             {"plain and weighted mixes", test_mixes},
             {"extreme weights", test_extreme_weights},
             {"long spec cut visibly", test_long_spec_cut_visibly},
             {"row rule", test_row_rule},
             {"bad files refused", test_bad_files_refused},
             {"bad specs refused", test_bad_specs_refused},
             {"cleanup", test_cleanup})
