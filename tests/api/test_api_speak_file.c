/* test_api_speak_file.c - ck_model_speak_file as an embedding program sees it (ckbatch.h only), on
 * the speech circuit and the embedded synthetic weights, voice "synthetic", noise scale 0: the
 * progress callback is called after every line (interval 0) with lines_done counting up, and its
 * final call carries the exact totals (3 lines, 4200 + 12600 samples / 24000 s, the real-time
 * factor seconds / audio); a long interval leaves only the final call; a run that fails before any
 * line still makes its final call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_test.h"
#include "ckbatch.h"

#define MAX_CALLS 16

typedef struct {
    size_t n;
    ck_speak_progress calls[MAX_CALLS];
} progress_log;

static void on_progress(void *ctx, const ck_speak_progress *g)
{
    progress_log *log = ctx;
    if (log->n < MAX_CALLS) {
        log->calls[log->n] = *g;
    }
    log->n++;
}

static ck_model *load_speech(void)
{
    ck_model_params p = ck_model_default_params();
    p.circuit = ck_speech_circuit_path();
    p.threads = 2;
    ck_model *m = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_model_load(&m, &p, &err), CK_OK);
    return m;
}

static ck_speak_params speak_params(const char *input, const char *output, progress_log *log)
{
    ck_speak_params sp;
    memset(&sp, 0, sizeof sp);
    ck_speak_options_init(&sp.speak);
    sp.speak.voice = "synthetic";
    sp.speak.noise_scale = 0.0f;
    sp.lines = ck_lines_default_params();
    sp.input = input;
    sp.output = output;
    sp.progress = on_progress;
    sp.progress_ctx = log;
    return sp;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void test_progress(void)
{
    ck_model *m = load_speech();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    char in[256], out[256];
    snprintf(in, sizeof in, "%s", ck_test_tmp_path("speak_progress.txt"));
    snprintf(out, sizeof out, "%s", ck_test_tmp_path("speak_progress_out"));
    /* ði (7 frames), a blank line (no phonemes), ði ˈAs (21 frames) */
    write_text(in, "\xc3\xb0i\n\n\xc3\xb0i \xcb\x88" "As\n");
    progress_log log = {0};
    ck_speak_params sp = speak_params(in, out, &log);
    ck_speak_summary sum;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_speak_file(m, &sp, &sum, &err), CK_OK);
    CU_ASSERT_EQUAL(sum.samples, 4200 + 12600);
    /* one call per line, then the final one */
    CU_ASSERT_EQUAL_FATAL(log.n, 4);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(log.calls[i].lines, 3);
        CU_ASSERT_EQUAL(log.calls[i].lines_done, i + 1);
        CU_ASSERT_EQUAL(log.calls[i].final, 0);
    }
    CU_ASSERT_EQUAL(log.calls[0].audio_seconds, 4200.0 / 24000);
    CU_ASSERT_EQUAL(log.calls[1].audio_seconds, 4200.0 / 24000); /* the blank line adds none */
    const ck_speak_progress *f = &log.calls[3];
    CU_ASSERT_EQUAL(f->final, 1);
    CU_ASSERT_EQUAL(f->lines, 3);
    CU_ASSERT_EQUAL(f->lines_done, 3);
    CU_ASSERT_EQUAL(f->audio_seconds, 16800.0 / 24000);
    CU_ASSERT(f->seconds > 0 && f->seconds <= sum.seconds);
    CU_ASSERT_EQUAL(f->real_time_factor, f->seconds / f->audio_seconds);
    /* an interval longer than the run: the final call only */
    memset(&log, 0, sizeof log);
    sp.progress_interval = 1e9;
    CU_ASSERT_EQUAL_FATAL(ck_model_speak_file(m, &sp, &sum, &err), CK_OK);
    CU_ASSERT_EQUAL(log.n, 1);
    CU_ASSERT_EQUAL(log.calls[0].final, 1);
    CU_ASSERT_EQUAL(log.calls[0].lines_done, 3);
    /* an unreadable input: an error, and still a final call, with nothing done */
    memset(&log, 0, sizeof log);
    sp.input = ck_test_tmp_path("speak_progress_missing.txt");
    CU_ASSERT_EQUAL(ck_model_speak_file(m, &sp, &sum, &err), CK_E_IO);
    CU_ASSERT_EQUAL(log.n, 1);
    CU_ASSERT_EQUAL(log.calls[0].final, 1);
    CU_ASSERT_EQUAL(log.calls[0].lines_done, 0);
    CU_ASSERT_EQUAL(log.calls[0].audio_seconds, 0.0);
    CU_ASSERT_EQUAL(log.calls[0].real_time_factor, 0.0);
    ck_model_free(m);
}

CK_TEST_MAIN("api_speak_file", {"progress: every line, exact final totals", test_progress})
