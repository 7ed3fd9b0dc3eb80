/* test_wav.c - the WAV writer (engine/output/wav.h): whole tiny files byte for byte (s16, s16 with a
 * LIST/INFO chunk, f32 with its fact chunk), s16 rounding (ties to even) and clipping with its count,
 * streaming (many appends across conversion blocks give one append's bytes), publication only at
 * close, and the refusals (NaN/Inf, bad INFO id, bad format, the 4 GiB limit, an unwritable path);
 * a partial under a fixed name kept and resumed (cut back to its durable frames) gives the same
 * bytes, its refusals leave it as it was.
 * With CK_WAV_KEEP_DIR set it also leaves sine_s16.wav and sine_f32.wav there for
 * python/tests/test_wav.py (Python's wave module and a struct parse read them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck_test.h"
#include "wav.h"

/* The whole file at path into buf[cap]; its size, or (size_t)-1. */
static size_t slurp(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return (size_t)-1;
    }
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Writes samples[n] in one append to path and returns the file's size in buf (or -1). */
static size_t write_one(const char *path, ck_wav_format fmt, const ck_wav_info *info, size_t n_info,
                        const float *samples, size_t n, uint64_t *clipped, unsigned char *buf,
                        size_t cap)
{
    ck_wav *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_wav_open(&w, path, fmt, CK_WAV_KOKORO_RATE, info, n_info, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_wav_append(w, samples, n, clipped, &err), CK_OK);
    CU_ASSERT_FALSE(exists(path)); /* nothing at the path before close */
    CU_ASSERT_EQUAL_FATAL(ck_wav_close(w, &err), CK_OK);
    return slurp(path, buf, cap);
}

static void test_s16_golden(void)
{
    /* 0, 0.5, -1 (exact), +1 (32768: clipped), -1.5 (clipped), half an LSB (tie: to 0, even),
     * 1.5 LSB (tie: to 2), -1.5 LSB (-2), 32767/32768 (exact, not clipped) */
    static const float x[9] = {0.0f, 0.5f, -1.0f, 1.0f, -1.5f, 1.0f / 65536, 3.0f / 65536,
                               -3.0f / 65536, 32767.0f / 32768};
    static const unsigned char want[] = {
        'R', 'I', 'F', 'F', 0x36, 0x00, 0x00, 0x00, 'W', 'A', 'V', 'E',  /* 54 = 36 + 18 */
        'f', 'm', 't', ' ', 0x10, 0x00, 0x00, 0x00,                      /* fmt, 16 bytes */
        0x01, 0x00, 0x01, 0x00,                                          /* PCM, mono */
        0xc0, 0x5d, 0x00, 0x00, 0x80, 0xbb, 0x00, 0x00,                  /* 24000 Hz, 48000 B/s */
        0x02, 0x00, 0x10, 0x00,                                          /* block 2, 16 bits */
        'd', 'a', 't', 'a', 0x12, 0x00, 0x00, 0x00,                      /* 18 bytes */
        0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0xff, 0x7f, 0x00, 0x80,      /* 0 16384 -32768 32767 -32768 */
        0x00, 0x00, 0x02, 0x00, 0xfe, 0xff, 0xff, 0x7f};                 /* 0 2 -2 32767 */
    unsigned char got[256];
    uint64_t clipped = 99;
    char path[4096];
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("s16.wav"));
    size_t n = write_one(path, CK_WAV_S16, NULL, 0, x, 9, &clipped, got, sizeof got);
    CU_ASSERT_EQUAL(n, sizeof want);
    CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
    CU_ASSERT_EQUAL(clipped, 2);
    unlink(path);
}

static void test_s16_info_golden(void)
{
    static const float x[2] = {1.0f / 32768, -1.0f / 32768};
    static const ck_wav_info info[2] = {{"ISFT", "ckbatch"}, {"ICMT", "ab"}};
    static const unsigned char want[] = {
        'R', 'I', 'F', 'F', 0x50, 0x00, 0x00, 0x00, 'W', 'A', 'V', 'E',  /* 80 */
        'f', 'm', 't', ' ', 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
        0xc0, 0x5d, 0x00, 0x00, 0x80, 0xbb, 0x00, 0x00, 0x02, 0x00, 0x10, 0x00,
        'L', 'I', 'S', 'T', 0x20, 0x00, 0x00, 0x00, 'I', 'N', 'F', 'O',  /* 32 = 4 + 16 + 12 */
        'I', 'S', 'F', 'T', 0x08, 0x00, 0x00, 0x00, 'c', 'k', 'b', 'a', 't', 'c', 'h', 0x00,
        'I', 'C', 'M', 'T', 0x03, 0x00, 0x00, 0x00, 'a', 'b', 0x00, 0x00, /* NUL, then a pad byte */
        'd', 'a', 't', 'a', 0x04, 0x00, 0x00, 0x00, 0x01, 0x00, 0xff, 0xff};
    unsigned char got[256];
    char path[4096];
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("info.wav"));
    size_t n = write_one(path, CK_WAV_S16, info, 2, x, 2, NULL, got, sizeof got);
    CU_ASSERT_EQUAL(n, sizeof want);
    CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
    unlink(path);
}

static void test_f32_golden(void)
{
    static const float x[2] = {0.5f, -0.25f};
    static const unsigned char want[] = {
        'R', 'I', 'F', 'F', 0x3a, 0x00, 0x00, 0x00, 'W', 'A', 'V', 'E',  /* 58 */
        'f', 'm', 't', ' ', 0x12, 0x00, 0x00, 0x00,                      /* fmt, 18 bytes */
        0x03, 0x00, 0x01, 0x00,                                          /* IEEE float, mono */
        0xc0, 0x5d, 0x00, 0x00, 0x00, 0x77, 0x01, 0x00,                  /* 24000 Hz, 96000 B/s */
        0x04, 0x00, 0x20, 0x00, 0x00, 0x00,                              /* block 4, 32 bits, cbSize 0 */
        'f', 'a', 'c', 't', 0x04, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, /* 2 frames */
        'd', 'a', 't', 'a', 0x08, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0xbe};                 /* 0.5f, -0.25f */
    unsigned char got[256];
    uint64_t clipped = 99;
    char path[4096];
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("f32.wav"));
    static const float loud[3] = {0.5f, -0.25f, 7.0f};
    size_t n = write_one(path, CK_WAV_F32, NULL, 0, x, 2, &clipped, got, sizeof got);
    CU_ASSERT_EQUAL(n, sizeof want);
    CU_ASSERT_EQUAL(memcmp(got, want, sizeof want), 0);
    CU_ASSERT_EQUAL(clipped, 0);
    unlink(path);
    n = write_one(path, CK_WAV_F32, NULL, 0, loud, 3, &clipped, got, sizeof got);
    CU_ASSERT_EQUAL(clipped, 0); /* f32 keeps 7.0 as it is */
    CU_ASSERT_EQUAL(n, sizeof want + 4);
    CU_ASSERT(got[n - 1] == 0x40 && got[n - 2] == 0xe0); /* 7.0f = 0x40e00000 */
    unlink(path);
}

static void test_s16_rounding(void)
{
    static const struct {
        float x;
        int want, clipped;
    } cases[] = {
        {0.0f, 0, 0},           {-0.0f, 0, 0},          {0.5f / 32768, 0, 0},
        {1.5f / 32768, 2, 0},   {2.5f / 32768, 2, 0},   {-2.5f / 32768, -2, 0},
        {-0.5f / 32768, 0, 0},  {0.75f / 32768, 1, 0},  {-0.25f / 32768, 0, 0},
        {32766.5f / 32768, 32766, 0}, {32767.4f / 32768, 32767, 0}, {32767.5f / 32768, 32767, 1},
        {-32768.5f / 32768, -32768, 0}, {-32768.6f / 32768, -32768, 1}, {1e30f, 32767, 1},
        {-1e30f, -32768, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int c = -1;
        int16_t v = ck_wav_s16(cases[i].x, &c);
        if (v != cases[i].want || c != cases[i].clipped) {
            fprintf(stderr, "\n    case %zu: %.9g -> %d clipped %d\n", i, cases[i].x, v, c);
        }
        CU_ASSERT_EQUAL(v, cases[i].want);
        CU_ASSERT_EQUAL(c, cases[i].clipped);
    }
}

/* 10,007 samples (a ramp over [-1.25, 1.25]) in appends of 1, 4095, 4097 and the rest give the
 * bytes of one append; the clipped counts add up (per append and ck_wav_clipped). */
static void test_streaming_equals_one_append(void)
{
    enum { N = 10007 };
    static float x[N];
    static unsigned char one[2 * N + 64], many[2 * N + 64];
    uint64_t want_clipped = 0;
    for (size_t i = 0; i < N; i++) {
        x[i] = -1.25f + 2.5f * (float)i / (float)(N - 1);
        want_clipped += x[i] >= 32767.5f / 32768 || x[i] < -32768.5f / 32768;
    }
    char path[4096];
    uint64_t clipped = 0;
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("stream.wav"));
    size_t n1 = write_one(path, CK_WAV_S16, NULL, 0, x, N, &clipped, one, sizeof one);
    CU_ASSERT_EQUAL(n1, 44 + 2 * N);
    CU_ASSERT_EQUAL(clipped, want_clipped);
    CU_ASSERT(want_clipped > 1900 && want_clipped < 2100); /* a fifth of the ramp is past +-1 */
    static const size_t parts[] = {1, 4095, 4097, N - 1 - 4095 - 4097};
    ck_wav *w = NULL;
    ck_error err = {0};
    uint64_t sum = 0;
    CU_ASSERT_EQUAL_FATAL(ck_wav_open(&w, path, CK_WAV_S16, CK_WAV_KOKORO_RATE, NULL, 0, &err), CK_OK);
    size_t at = 0;
    for (size_t p = 0; p < 4; p++) {
        CU_ASSERT_EQUAL_FATAL(ck_wav_append(w, x + at, parts[p], &clipped, &err), CK_OK);
        sum += clipped;
        at += parts[p];
    }
    CU_ASSERT_EQUAL(ck_wav_append(w, NULL, 0, &clipped, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_wav_frames(w), N);
    CU_ASSERT_EQUAL(ck_wav_clipped(w), want_clipped);
    CU_ASSERT_EQUAL(sum, want_clipped);
    unlink(path);
    CU_ASSERT_EQUAL_FATAL(ck_wav_close(w, &err), CK_OK);
    CU_ASSERT_EQUAL(slurp(path, many, sizeof many), n1);
    CU_ASSERT_EQUAL(memcmp(one, many, n1), 0);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CU_ASSERT_FALSE(exists(tmp));
    unlink(path);
}

/* ck_wav_open_partial under a fixed name, kept after a "kill" with samples past the durable
 * point, continued by ck_wav_resume cut back to it: the one-append file byte for byte; a
 * finished file's patched sizes are accepted; another header, too few frames, no file refused with
 * the partial left as it was. */
static void test_partial_resume(void)
{
    enum { N = 10007, DURABLE = 3000 };
    static float x[N];
    static unsigned char one[2 * N + 128], again[2 * N + 128];
    static const ck_wav_info info[2] = {{"ISFT", "ckbatch"}, {"ICMT", "seed=0"}},
                             other[2] = {{"ISFT", "ckbatch"}, {"ICMT", "seed=7"}};
    for (size_t i = 0; i < N; i++) {
        x[i] = -1.25f + 2.5f * (float)i / (float)(N - 1);
    }
    char path[4096], partial[4200], tmp[4200];
    uint64_t clipped = 0;
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("resume.wav"));
    snprintf(partial, sizeof partial, "%s.partial", path);
    size_t n1 = write_one(path, CK_WAV_S16, info, 2, x, N, &clipped, one, sizeof one);
    size_t header = n1 - 2 * N;
    CU_ASSERT_EQUAL(header, 44 + 12 + 16 + 16);
    unlink(path);
    ck_wav *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_wav_open_partial(&w, path, partial, CK_WAV_S16, CK_WAV_KOKORO_RATE,
                                              info, 2, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_wav_append(w, x, DURABLE, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_wav_sync(w, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_wav_append(w, x + DURABLE, 1000, NULL, &err), CK_OK);
    ck_wav_keep(w); /* the "kill": 1000 samples past what the caller recorded */
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CU_ASSERT_FALSE(exists(path));
    CU_ASSERT_FALSE(exists(tmp));
    CU_ASSERT_EQUAL(slurp(partial, again, sizeof again), header + 2 * (DURABLE + 1000));
    /* refused, the partial as it was */
    CU_ASSERT_EQUAL(ck_wav_resume(&w, path, partial, CK_WAV_S16, CK_WAV_KOKORO_RATE, other, 2,
                                  DURABLE, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "its header is not the one of this format"));
    CU_ASSERT_PTR_NULL(w);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_wav_resume(&w, path, partial, CK_WAV_F32, CK_WAV_KOKORO_RATE, info, 2,
                                  DURABLE, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "resume.wav.partial: WAV: its header is not"));
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_wav_resume(&w, path, partial, CK_WAV_S16, CK_WAV_KOKORO_RATE, info, 2,
                                  DURABLE + 1001, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "shorter than the 4001 frames resumed"));
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_wav_resume(&w, path, ck_test_tmp_path("none.partial"), CK_WAV_S16,
                                  CK_WAV_KOKORO_RATE, info, 2, 0, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "none.partial: cannot open: "));
    CU_ASSERT_EQUAL(slurp(partial, again, sizeof again), header + 2 * (DURABLE + 1000));
    /* resumed: cut back to DURABLE frames, the rest appended, published */
    ck_error_clear(&err);
    CU_ASSERT_EQUAL_FATAL(ck_wav_resume(&w, path, partial, CK_WAV_S16, CK_WAV_KOKORO_RATE, info,
                                        2, DURABLE, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_wav_frames(w), DURABLE);
    CU_ASSERT_EQUAL(slurp(partial, again, sizeof again), header + 2 * DURABLE);
    CU_ASSERT_EQUAL_FATAL(ck_wav_append(w, x + DURABLE, N - DURABLE, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_wav_frames(w), N);
    CU_ASSERT_EQUAL_FATAL(ck_wav_close(w, &err), CK_OK);
    CU_ASSERT_FALSE(exists(partial));
    CU_ASSERT_EQUAL(slurp(path, again, sizeof again), n1);
    CU_ASSERT_EQUAL(memcmp(one, again, n1), 0);
    /* a partial whose sizes a close had patched (killed before its rename) resumes the same */
    rename(path, partial);
    CU_ASSERT_EQUAL_FATAL(ck_wav_resume(&w, path, partial, CK_WAV_S16, CK_WAV_KOKORO_RATE, info,
                                        2, DURABLE, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_wav_append(w, x + DURABLE, N - DURABLE, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_wav_close(w, &err), CK_OK);
    CU_ASSERT_EQUAL(slurp(path, again, sizeof again), n1);
    CU_ASSERT_EQUAL(memcmp(one, again, n1), 0);
    unlink(path);
}

static void test_refusals(void)
{
    ck_wav *w = NULL;
    ck_error err = {0};
    char path[4096], tmp[4200];
    float bad[3] = {0.1f, NAN, 0.2f}, ok[2] = {0.25f, -0.25f};
    unsigned char got[128];
    snprintf(path, sizeof path, "%s", ck_test_tmp_path("bad.wav"));
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    static const ck_wav_info lower[1] = {{"isft", "x"}}, longer[1] = {{"ISFTX", "x"}},
                             no_text[1] = {{"ICMT", NULL}};
    CU_ASSERT_EQUAL(ck_wav_open(&w, path, CK_WAV_S16, 24000, lower, 1, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(err.code, CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "info entry 0 (\"isft\")"));
    CU_ASSERT_EQUAL(ck_wav_open(&w, path, CK_WAV_S16, 24000, longer, 1, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_wav_open(&w, path, CK_WAV_S16, 24000, no_text, 1, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_wav_open(&w, path, CK_WAV_S16, 24000, NULL, 1, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_wav_open(&w, path, (ck_wav_format)2, 24000, NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_wav_open(&w, path, CK_WAV_S16, 0, NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_EQUAL(ck_wav_open(&w, "/nonexistent-dir/x.wav", CK_WAV_S16, 24000, NULL, 0, &err),
                    CK_E_IO);
    CU_ASSERT_FALSE(exists(tmp));

    /* a NaN is refused with its index and writes nothing; the writer goes on */
    CU_ASSERT_EQUAL_FATAL(ck_wav_open(&w, path, CK_WAV_S16, 24000, NULL, 0, &err), CK_OK);
    CU_ASSERT_TRUE(exists(tmp));
    err = (ck_error){0}; /* the first error of an err is the one kept */
    CU_ASSERT_EQUAL(ck_wav_append(w, bad, 3, NULL, &err), CK_E_NONFINITE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sample 1 of this append is NaN"));
    bad[1] = -INFINITY;
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_wav_append(w, bad, 3, NULL, &err), CK_E_NONFINITE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "is Inf"));
    /* 2^31 s16 frames are 4 GiB: refused before a sample is read (ok has 2) */
    CU_ASSERT_EQUAL(ck_wav_append(w, ok, (size_t)1 << 31, NULL, &err), CK_E_SIZE);
    CU_ASSERT_EQUAL(ck_wav_append(w, ok, 2, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_wav_frames(w), 2);
    CU_ASSERT_EQUAL_FATAL(ck_wav_close(w, &err), CK_OK);
    CU_ASSERT_EQUAL(slurp(path, got, sizeof got), 48);
    CU_ASSERT(got[44] == 0x00 && got[45] == 0x20 && got[46] == 0x00 && got[47] == 0xe0);
    unlink(path);

    /* abort: nothing at the path, no temporary file */
    CU_ASSERT_EQUAL_FATAL(ck_wav_open(&w, path, CK_WAV_F32, 24000, NULL, 0, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_wav_append(w, ok, 2, NULL, &err), CK_OK);
    ck_wav_abort(w);
    CU_ASSERT_FALSE(exists(path));
    CU_ASSERT_FALSE(exists(tmp));
    ck_wav_abort(NULL);
    CU_ASSERT_EQUAL(ck_wav_close(NULL, &err), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_wav_append(NULL, ok, 2, NULL, &err), CK_E_ARG);
}

/* With CK_WAV_KEEP_DIR: 0.25 s of a 440 Hz sine at 0.5, with INFO metadata, as s16 and as f32 (the
 * pytest python/tests/test_wav.py runs this binary and reads both). Without it: nothing. */
static void test_keep_for_python(void)
{
    const char *dir = getenv("CK_WAV_KEEP_DIR");
    if (dir == NULL || dir[0] == '\0') {
        return;
    }
    enum { N = 6000 };
    static float x[N];
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)(0.5 * sin(2.0 * 3.14159265358979323846 * 440.0 * (double)i / 24000.0));
    }
    x[10] = 1.5f; /* one clipped sample in the s16 file */
    static const ck_wav_info info[3] = {{"ISFT", "ckbatch test"},
                                        {"ICMT", "weights synthetic; voice af_heart; speed 1"},
                                        {"INAM", "sine"}};
    static const ck_wav_format formats[2] = {CK_WAV_S16, CK_WAV_F32};
    static const char *const names[2] = {"sine_s16.wav", "sine_f32.wav"};
    for (size_t f = 0; f < 2; f++) {
        char path[4096];
        ck_wav *w = NULL;
        ck_error err = {0};
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        CU_ASSERT_EQUAL_FATAL(ck_wav_open(&w, path, formats[f], 24000, info, 3, &err), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_wav_append(w, x, N, NULL, &err), CK_OK);
        CU_ASSERT_EQUAL(ck_wav_clipped(w), f == 0 ? 1 : 0);
        CU_ASSERT_EQUAL_FATAL(ck_wav_close(w, &err), CK_OK);
    }
}

CK_TEST_MAIN("wav",
             {"s16 file byte for byte", test_s16_golden},
             {"s16 with LIST/INFO byte for byte", test_s16_info_golden},
             {"f32 with fact chunk byte for byte", test_f32_golden},
             {"s16 rounding ties to even, clipping counted", test_s16_rounding},
             {"streaming appends = one append", test_streaming_equals_one_append},
             {"refusals", test_refusals},
             {"partial kept, resumed cut back: the same bytes", test_partial_resume},
             {"files for the pytest (CK_WAV_KEEP_DIR)", test_keep_for_python})
