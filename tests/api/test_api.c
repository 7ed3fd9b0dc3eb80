/* test_api.c - the public API as a program that embeds ckbatch sees it: only ckbatch.h (linked to
 * libckbatch.so), plus OpenMP to check the library gives the caller its thread count back. Values
 * are checked against the ckbatch binary's output file, bit for bit, and against each other. */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ck_test.h"
#include "ckbatch.h"

/* Three Kokoro phoneme lines (one with a symbol outside the vocab, 'x', dropped and warned) and a
 * blank one (no sequence). */
static const char *const k_lines[] = {"h\xc9\x99l\xcb\x88O w\xcb\x88\xc9\x9c\xc9\xb9ld",
                                      "", "\xc3\xb0\xc9\xaas \xc9\xaaz \xc9\x90 t\xcb\x88\xc9\x9bst.",
                                      "ag"};
#define N_LINES 4

static char work[256];

static const char *tmp(const char *name)
{
    static char bufs[4][512];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 512, "%s/%s", work, name);
    return b;
}

typedef struct {
    int info, warnings, weights_lines, memory_lines;
} log_counts;

static void count_log(void *ctx, ck_log_level level, const char *message)
{
    log_counts *c = ctx;
    c->info += level == CK_LOG_INFO;
    c->warnings += level == CK_LOG_WARNING;
    c->weights_lines += strncmp(message, "weights: ", 9) == 0;
    c->memory_lines += strncmp(message, "memory: ", 8) == 0;
}

static ck_model *load(int threads, int parity, log_counts *counts)
{
    ck_model_params p = ck_model_default_params();
    p.threads = threads;
    p.parity = parity;
    p.log = counts != NULL ? count_log : NULL;
    p.log_ctx = counts;
    ck_model *m = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_model_load(&m, &p, &err), CK_OK);
    if (err.code != CK_OK) {
        fprintf(stderr, "    %s\n", err.message);
    }
    return m;
}

static void test_version_status_defaults(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", CKBATCH_VERSION_MAJOR, CKBATCH_VERSION_MINOR,
             CKBATCH_VERSION_PATCH);
    CU_ASSERT_STRING_EQUAL(ck_version(), want);
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_OK), "CK_OK");
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_RANGE), "CK_E_RANGE");
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_WEIGHTS), "CK_E_WEIGHTS");
    CU_ASSERT_STRING_EQUAL(ck_status_name(-99), "CK_E_UNKNOWN");
    ck_model_params m = ck_model_default_params();
    CU_ASSERT_PTR_NULL(m.weights);
    CU_ASSERT_EQUAL(m.seed, 20261129u);
    CU_ASSERT_EQUAL(m.threads, 0);
    CU_ASSERT_EQUAL(m.max_batch_tokens, 2048);
    ck_corpus_params c = ck_corpus_default_params();
    CU_ASSERT_EQUAL(c.format, CK_INPUT_PHONEMES);
    CU_ASSERT_EQUAL(c.layer, CK_LAYER_FEATURES);
    CU_ASSERT_DOUBLE_EQUAL(c.progress_interval, 0.5, 0.0);
    CU_ASSERT(ck_available_cpus() >= 1);
    ck_error err = {CK_E_IO, "x"};
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(err.code, CK_OK);
    CU_ASSERT_STRING_EQUAL(err.message, "");
}

static void test_model_shape_and_log(void)
{
    log_counts counts = {0};
    ck_model *m = load(2, 0, &counts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(ck_model_cols(m, CK_LAYER_FEATURES), 512);
    CU_ASSERT_EQUAL(ck_model_cols(m, CK_LAYER_HIDDEN), 768);
    CU_ASSERT_EQUAL(ck_model_cols(m, (ck_layer)7), 0);
    CU_ASSERT_EQUAL(ck_model_max_tokens(m), 512);
    CU_ASSERT_EQUAL(ck_model_vocab_rows(m), 178);
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_model_weights_identity(m), "seed 20261129"));
    /* 2 x (128x768 + 12 x (4 x 768x768 + 2 x 768x2048) + 768x512) for the multiply-adds of the
     * linears (Kokoro's intermediate size is 2048, MODEL.md), plus attention's 12 x 4 x 768 x L */
    double linear = 2.0 * (128.0 * 768 + 12.0 * (4.0 * 768 * 768 + 2.0 * 768 * 2048) + 768.0 * 512);
    CU_ASSERT_DOUBLE_EQUAL(ck_model_flops_per_token(m, 100), linear + 12.0 * 4 * 768 * 100, 1.0);
    CU_ASSERT_EQUAL(counts.weights_lines, 1);
    CU_ASSERT_EQUAL(counts.memory_lines, 1);
    ck_model_free(m);
    ck_model_free(NULL);
}

/* Lines -> sequences: the blank line gives none, 'x' is dropped with one warning, ids wrapped. */
static void test_tokenize(void)
{
    ck_model *m = load(1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    log_counts counts = {0};
    ck_lines_params lp = ck_lines_default_params();
    lp.log = count_log;
    lp.log_ctx = &counts;
    ck_sequence_set s;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_tokenize(m, k_lines, N_LINES, &lp, &s, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(s.n_sequences, 3);
    CU_ASSERT_EQUAL(s.line[0], 0);
    CU_ASSERT_EQUAL(s.line[1], 2);
    CU_ASSERT_EQUAL(s.line[2], 3);
    CU_ASSERT_EQUAL(s.offsets[3] - s.offsets[2], 3); /* [0, a, 0] */
    CU_ASSERT_STRING_EQUAL(s.phonemes[2], "a");
    CU_ASSERT_EQUAL(s.ids[s.offsets[2]], 0);
    CU_ASSERT_EQUAL(s.ids[s.offsets[2] + 1], 43); /* 'a' in Kokoro's vocab */
    CU_ASSERT_EQUAL(counts.warnings, 1);
    CU_ASSERT_PTR_NULL(s.rows);
    ck_sequence_set_free(&s);
    CU_ASSERT_EQUAL(s.n_sequences, 0);
    ck_sequence_set_free(&s); /* twice: zeroed */

    lp.strict_symbols = 1;
    CU_ASSERT_EQUAL(ck_model_tokenize(m, k_lines, N_LINES, &lp, &s, &err), CK_E_INPUT);
    CU_ASSERT_STRING_EQUAL(err.message, "<lines>:4: column 2: symbol U+0067 'g' not in vocab");
    CU_ASSERT_EQUAL(s.n_sequences, 0);
    ck_error_clear(&err);
    const char *with_newline[] = {"a\nb"};
    CU_ASSERT_EQUAL(ck_model_tokenize(m, with_newline, 1, NULL, &s, &err), CK_E_ARG);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_tokenize(m, NULL, 0, NULL, &s, &err), CK_OK);
    CU_ASSERT_EQUAL(s.n_sequences, 0);
    ck_sequence_set_free(&s);
    ck_model_free(m);
}

/* encode_lines (all lines in one call, 2 threads) equals encode_ids of each sequence alone on
 * one thread, bit for bit (the invariance docs/parity.md promises), for both layers. */
static void test_lines_equal_ids_alone(void)
{
    ck_model *two = load(2, 0, NULL), *one = load(1, 0, NULL);
    CU_ASSERT_FATAL(two != NULL && one != NULL);
    for (int layer = 0; layer < 2; layer++) {
        ck_sequence_set s;
        ck_error err = {0};
        CU_ASSERT_EQUAL_FATAL(ck_model_encode_lines(two, k_lines, N_LINES, NULL, (ck_layer)layer,
                                                    &s, &err), CK_OK);
        CU_ASSERT_EQUAL(s.cols, layer ? 768u : 512u);
        for (size_t i = 0; i < s.n_sequences; i++) {
            size_t len = s.offsets[i + 1] - s.offsets[i], off[2] = {0, len};
            float *rows = malloc(len * s.cols * sizeof *rows);
            CU_ASSERT_EQUAL(ck_model_encode_ids(one, s.ids + s.offsets[i], off, 1, (ck_layer)layer,
                                                rows, len, &err), CK_OK);
            CU_ASSERT_EQUAL(memcmp(rows, s.rows + s.offsets[i] * s.cols,
                                   len * s.cols * sizeof *rows), 0);
            free(rows);
        }
        ck_sequence_set_free(&s);
    }
    ck_model_free(two);
    ck_model_free(one);
}

/* A malloc'd copy of F32 tensor `name` of a features file (the public reader), *n its floats. */
static float *read_f32_tensor(const char *path, const char *name, size_t *n)
{
    ck_features_file *f = NULL;
    if (ck_features_open(&f, path, NULL) != CK_OK) {
        return NULL;
    }
    const ck_tensor_view *t = ck_features_tensor(f, name);
    float *out = t != NULL && strcmp(t->dtype, "F32") == 0 ? malloc(t->bytes) : NULL;
    if (out != NULL) {
        memcpy(out, t->data, t->bytes);
        *n = t->elements;
    }
    ck_features_close(f);
    return out;
}

/* What the library computes for the lines is, bit for bit, what the ckbatch binary writes. */
static void test_lines_equal_cli_file(void)
{
    const char *dir = getenv("CK_BINARY_DIR");
    char cmd[2048];
    FILE *in = fopen(tmp("in.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    for (int i = 0; i < N_LINES; i++) {
        fprintf(in, "%s\n", k_lines[i]);
    }
    fclose(in);
    snprintf(cmd, sizeof cmd, "%s/engine/ckbatch -q --no-progress -t 2 -i %s -o %s 2>/dev/null",
             dir ? dir : "build", tmp("in.txt"), tmp("out.st"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    size_t n = 0;
    float *file = read_f32_tensor(tmp("out.st"), "features", &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    ck_model *m = load(2, 0, NULL);
    ck_sequence_set s;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_encode_lines(m, k_lines, N_LINES, NULL, CK_LAYER_FEATURES, &s,
                                                &err), CK_OK);
    CU_ASSERT_EQUAL(n, s.n_tokens * 512);
    CU_ASSERT(n == s.n_tokens * 512 && memcmp(file, s.rows, n * sizeof *file) == 0);
    ck_sequence_set_free(&s);
    ck_model_free(m);
    free(file);
}

/* Checks before any batch: a bad id, a too-long sequence, a short out; out stays untouched. */
static void test_encode_ids_errors(void)
{
    ck_model *m = load(1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    int32_t ids[520] = {0};
    size_t offsets[3] = {0, 3, 6};
    float out[6 * 512];
    for (size_t i = 0; i < 6 * 512; i++) {
        out[i] = -7.0f; /* canary */
    }
    ids[1] = 50;
    ids[4] = 178; /* the table has rows 0..177 */
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_model_encode_ids(m, ids, offsets, 2, CK_LAYER_FEATURES, out, 6, &err),
                    CK_E_RANGE);
    CU_ASSERT_STRING_EQUAL(err.message, "encode: token 4: id 178 outside 0..177");
    ids[4] = 5;
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_encode_ids(m, ids, offsets, 2, CK_LAYER_FEATURES, out, 5, &err),
                    CK_E_SIZE);
    ck_error_clear(&err);
    size_t long_seq[2] = {0, 513};
    CU_ASSERT_EQUAL(ck_model_encode_ids(m, ids, long_seq, 1, CK_LAYER_FEATURES, out, 6, &err),
                    CK_E_SIZE);
    CU_ASSERT_STRING_EQUAL(err.message, "encode: sequence 0 has 513 tokens, expected 2..512 "
                                        "(boundaries included)");
    int untouched = 1;
    for (size_t i = 0; i < 6 * 512; i++) {
        untouched &= out[i] == -7.0f;
    }
    CU_ASSERT(untouched);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_encode_ids(m, ids, offsets, 2, (ck_layer)2, out, 6, &err), CK_E_ARG);
    CU_ASSERT_STRING_EQUAL(err.message, "encode: layer 2: expected 0 (features) or 1 (hidden)");
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_encode_ids(m, ids, offsets, 2, CK_LAYER_FEATURES, out, 6, &err), CK_OK);
    CU_ASSERT(out[0] != -7.0f && out[6 * 512 - 1] != -7.0f);
    ck_model_free(m);
}

static void test_load_errors(void)
{
    ck_model_params p = ck_model_default_params();
    ck_model *m = (ck_model *)&p; /* must become NULL */
    ck_error err = {0};
    p.weights = "/nonexistent/kokoro.pth";
    CU_ASSERT_EQUAL(ck_model_load(&m, &p, &err), CK_E_IO);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "/nonexistent/kokoro.pth"));
    /* a checkpoint of the synthesis groups only: the encoder's group is named as missing */
    p.weights = ck_test_path("tests/fixtures/pth/kokoro_weight_norm.pth");
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_load(&m, &p, &err), CK_E_WEIGHTS);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "group \"bert\" missing"));
    p = ck_model_default_params();
    p.threads = -1;
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_load(&m, &p, &err), CK_E_ARG);
    p = ck_model_default_params();
    p.max_batch_tokens = 100;
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_load(&m, &p, &err), CK_E_ARG);
    CU_ASSERT_STRING_EQUAL(err.message, "max_batch_tokens 100: must be at least the longest "
                                        "sequence, 512");
    CU_ASSERT_EQUAL(ck_model_load(NULL, &p, NULL), CK_E_ARG);
    m = (ck_model *)&p;
    CU_ASSERT_EQUAL(ck_model_load(&m, NULL, NULL), CK_E_ARG);
    CU_ASSERT_PTR_NULL(m);
}

/* The library leaves process-wide state alone: the caller's OpenMP thread count comes back after
 * every call, and nothing reaches stderr or stdout (both redirected to files that must stay
 * empty) through load, encode, a corpus run with its log and progress callbacks unset, and a
 * parity run. */
static int progress_calls, final_calls;
static unsigned long long final_done, final_total;
static void on_progress(void *ctx, const ck_progress *p)
{
    (void)ctx;
    progress_calls++;
    if (p->final) {
        final_calls++;
        final_done = p->bytes_done;
        final_total = p->input_bytes;
    }
}

static void test_no_process_state_no_output(void)
{
    FILE *in = fopen(tmp("corpus.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    for (int i = 0; i < 40; i++) {
        fprintf(in, "%s\n", k_lines[i % N_LINES]);
    }
    fclose(in);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int fd = open(tmp("printed"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(saved_out >= 0 && saved_err >= 0 && fd >= 0);
    dup2(fd, 1);
    dup2(fd, 2);
    omp_set_num_threads(3);
    int after[4];
    ck_model *m = load(2, 0, NULL);
    after[0] = omp_get_max_threads();
    ck_sequence_set s;
    ck_error err = {0};
    int rc_lines = ck_model_encode_lines(m, k_lines, N_LINES, NULL, CK_LAYER_FEATURES, &s, &err);
    after[1] = omp_get_max_threads();
    ck_corpus_params cp = ck_corpus_default_params();
    cp.input = tmp("corpus.txt");
    cp.output = tmp("corpus.st");
    cp.progress = on_progress;
    cp.progress_interval = 0;
    ck_corpus_summary sum;
    int rc_run = ck_run_corpus(m, &cp, &sum, &err);
    after[2] = omp_get_max_threads();
    ck_model_free(m);
    ck_model *p = load(4, 1, NULL);
    cp.output = tmp("parity.st");
    int rc_parity = ck_run_corpus(p, &cp, &sum, &err);
    after[3] = omp_get_max_threads();
    ck_model_free(p);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    close(fd);
    CU_ASSERT_EQUAL(rc_lines, CK_OK);
    CU_ASSERT_EQUAL(rc_run, CK_OK);
    CU_ASSERT_EQUAL(rc_parity, CK_OK);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(after[i], 3);
    }
    struct stat st;
    CU_ASSERT_EQUAL(stat(tmp("printed"), &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 0);
    CU_ASSERT_EQUAL(sum.lines, 40);
    CU_ASSERT_EQUAL(sum.sequences, 30);
    CU_ASSERT_EQUAL(sum.empty_lines, 10);
    CU_ASSERT_EQUAL(sum.dropped_symbols, 10);
    CU_ASSERT(progress_calls > 2);
    CU_ASSERT_EQUAL(final_calls, 2);
    CU_ASSERT_EQUAL(final_done, final_total);
    CU_ASSERT(final_total > 0);
    /* the corpus file's rows are the lines' rows, ten times over, in input order */
    size_t n = 0;
    float *rows = read_f32_tensor(tmp("corpus.st"), "features", &n);
    CU_ASSERT_FATAL(rows != NULL && rc_lines == CK_OK);
    CU_ASSERT_EQUAL(n, 10 * s.n_tokens * 512);
    CU_ASSERT(n == 10 * s.n_tokens * 512 && memcmp(rows + 9 * s.n_tokens * 512, s.rows,
                                                   s.n_tokens * 512 * sizeof *rows) == 0);
    free(rows);
    ck_sequence_set_free(&s);
}

/* A corpus run refused before anything is written: resume with stdin, a missing output path. */
static void test_run_corpus_errors(void)
{
    ck_model *m = load(1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ck_corpus_params cp = ck_corpus_default_params();
    ck_corpus_summary sum;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, &err), CK_E_ARG);
    cp.input = "-";
    cp.output = tmp("never.st");
    cp.resume = 1;
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "stdin"));
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(tmp("never.st"), &st), 0);
    CU_ASSERT_EQUAL(ck_run_corpus(NULL, &cp, &sum, NULL), CK_E_ARG);

    /* a bad line (invalid UTF-8) with err NULL, and with err holding an earlier error: the run
     * goes as documented, the earlier error stays, and `skipped` names the line's own error */
    FILE *in = fopen(tmp("bad.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    fputs("a\nb\xff" "c\nd\n", in);
    fclose(in);
    cp.input = tmp("bad.txt");
    cp.output = tmp("bad.st");
    cp.resume = 0;
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, NULL), CK_E_INPUT);
    CU_ASSERT_NOT_EQUAL(stat(tmp("bad.st"), &st), 0);
    cp.skip_bad_lines = 1;
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, NULL), CK_OK);
    CU_ASSERT_EQUAL(sum.skipped_lines, 1);
    ck_error prior = {CK_E_HASH, "prior"};
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, &prior), CK_OK);
    CU_ASSERT_EQUAL(prior.code, CK_E_HASH);
    CU_ASSERT_STRING_EQUAL(prior.message, "prior");
    ck_features_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, tmp("bad.st"), &err), CK_OK);
    const ck_tensor_view *skipped = ck_features_tensor(f, "skipped");
    CU_ASSERT_FATAL(skipped != NULL && strcmp(skipped->dtype, "U8") == 0);
    char text[512] = "";
    memcpy(text, skipped->data, skipped->bytes < sizeof text - 1 ? skipped->bytes : sizeof text - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "invalid UTF-8"));
    CU_ASSERT_PTR_NULL(strstr(text, "prior"));
    CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "format"), "ckbatch.features.v2");
    ck_features_close(f);
    cp.skip_bad_lines = 0;
    prior = (ck_error){CK_E_HASH, "prior"};
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, &prior), CK_E_INPUT);
    CU_ASSERT_STRING_EQUAL(prior.message, "prior");
    ck_model_free(m);
}

/* The model's cancel callback: asked before each batch, it returns nonzero at call `stop_at`. */
typedef struct {
    int calls, stop_at;
} cancel_state;

static int cancel_at(void *ctx)
{
    cancel_state *c = ctx;
    return ++c->calls >= c->stop_at;
}

/* Cancelling between batches: CK_E_CANCELLED with its message, the batches before it written and
 * the others untouched, a corpus run leaving no output; the same model then encodes as before. */
static void test_cancel_between_batches(void)
{
    cancel_state c = {0, 2};
    ck_model_params p = ck_model_default_params();
    p.threads = 2;
    p.max_batch_tokens = 512; /* one 300-token sequence per batch: three batches */
    p.cancel = cancel_at;
    p.cancel_ctx = &c;
    ck_model *m = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_load(&m, &p, &err), CK_OK);
    static int32_t ids[900];
    size_t offsets[4] = {0, 300, 600, 900};
    for (size_t i = 0; i < 900; i++) {
        ids[i] = i % 300 == 0 || i % 300 == 299 ? 0 : (int32_t)(1 + i % 170);
    }
    float *want = malloc(900 * 512 * sizeof *want), *got = malloc(900 * 512 * sizeof *got);
    CU_ASSERT_FATAL(want != NULL && got != NULL);
    for (size_t i = 0; i < 900 * 512; i++) {
        got[i] = -7.0f; /* canary */
    }
    CU_ASSERT_EQUAL(ck_model_encode_ids(m, ids, offsets, 3, CK_LAYER_FEATURES, got, 900, &err),
                    CK_E_CANCELLED);
    CU_ASSERT_STRING_EQUAL(err.message, "encode: cancelled by the caller after 1 sequences");
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_CANCELLED), "CK_E_CANCELLED");
    CU_ASSERT_EQUAL(c.calls, 2);
    c = (cancel_state){0, 1000};
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_model_encode_ids(m, ids, offsets, 3, CK_LAYER_FEATURES, want, 900, &err),
                    CK_OK);
    CU_ASSERT_EQUAL(c.calls, 3);
    CU_ASSERT_EQUAL(memcmp(got, want, 300 * 512 * sizeof *got), 0);
    int untouched = 1;
    for (size_t i = 300 * 512; i < 900 * 512; i++) {
        untouched &= got[i] == -7.0f;
    }
    CU_ASSERT(untouched);

    FILE *in = fopen(tmp("cancel.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    fputs("a\nb\n", in);
    fclose(in);
    ck_corpus_params cp = ck_corpus_default_params();
    cp.input = tmp("cancel.txt");
    cp.output = tmp("cancel.st");
    ck_corpus_summary sum;
    c = (cancel_state){0, 1};
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, &err), CK_E_CANCELLED);
    CU_ASSERT_STRING_EQUAL(err.message, "corpus: cancelled by the caller after 0 sequences");
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(tmp("cancel.st"), &st), 0);
    c = (cancel_state){0, 1000};
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, NULL), CK_OK);
    CU_ASSERT_EQUAL(sum.sequences, 2);
    free(want);
    free(got);
    ck_model_free(m);
}

/* A resume under other options is refused with its own code (CK_E_STATE, not CK_E_ARG), the
 * message naming the field and no CLI flag; the progress stays, and a fresh run still works. */
static void test_resume_refused_is_state(void)
{
    cancel_state c = {0, 7};
    ck_model_params p = ck_model_default_params();
    p.threads = 2;
    p.max_batch_tokens = 512; /* windows of 4 batches: the first commits before the 7th batch */
    p.cancel = cancel_at;
    p.cancel_ctx = &c;
    ck_model *m = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_load(&m, &p, &err), CK_OK);
    FILE *in = fopen(tmp("state.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    for (int i = 0; i < 400; i++) {
        fputs("abcdefghij\n", in);
    }
    fclose(in);
    ck_corpus_params cp = ck_corpus_default_params();
    cp.input = tmp("state.txt");
    cp.output = tmp("state.st");
    ck_corpus_summary sum;
    CU_ASSERT_EQUAL_FATAL(ck_run_corpus(m, &cp, &sum, &err), CK_E_CANCELLED);
    char record[512];
    snprintf(record, sizeof record, "%s.partial.json", tmp("state.st"));
    struct stat st;
    CU_ASSERT_EQUAL_FATAL(stat(record, &st), 0); /* a window was committed */
    c = (cancel_state){0, 1000};
    cp.resume = 1;
    cp.skip_bad_lines = 1; /* on_error=skip: another options string */
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, &err), CK_E_STATE);
    CU_ASSERT_EQUAL(err.code, CK_E_STATE);
    CU_ASSERT_STRING_EQUAL(ck_status_name(CK_E_STATE), "CK_E_STATE");
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "resume: identity field \"options\" differs"));
    CU_ASSERT_PTR_NULL(strstr(err.message, "--"));
    CU_ASSERT_EQUAL(stat(record, &st), 0); /* a refused resume keeps the progress */
    cp.resume = 0;
    CU_ASSERT_EQUAL(ck_run_corpus(m, &cp, &sum, &err), CK_OK);
    CU_ASSERT_EQUAL(sum.sequences, 400);
    CU_ASSERT_NOT_EQUAL(stat(record, &st), 0);
    unlink(tmp("state.st"));
    unlink(tmp("state.txt"));
    ck_model_free(m);
}

/* Precision and where the time goes: fp32 by default, parity cannot be bf16, op-class seconds grow
 * with a batch (linear most), reset to zero, and a bad precision or class is rejected. */
static void test_precision_and_op_seconds(void)
{
    ck_model *m = load(2, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_STRING_EQUAL(ck_model_precision(m), "fp32");
    const char *want = "linear=f32 attention=f32 layer_norm=f32 gelu_new=f32; onednn ";
    CU_ASSERT_EQUAL(strncmp(ck_model_dispatch(m), want, strlen(want)), 0);
    CU_ASSERT_STRING_EQUAL(ck_op_class_name(CK_OP_CLASS_LINEAR), "linear");
    CU_ASSERT_STRING_EQUAL(ck_op_class_name(CK_OP_CLASS_OTHER), "other");
    CU_ASSERT_STRING_EQUAL(ck_op_class_name(CK_OP_CLASS_COUNT), "");
    ck_model_reset_op_seconds(m);
    for (int c = 0; c < CK_OP_CLASS_COUNT; c++) {
        CU_ASSERT_EQUAL(ck_model_op_seconds(m, (ck_op_class)c), 0.0);
    }
    ck_sequence_set s;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_model_encode_lines(m, k_lines, N_LINES, NULL, CK_LAYER_FEATURES, &s, &err),
                          CK_OK);
    double linear = ck_model_op_seconds(m, CK_OP_CLASS_LINEAR);
    CU_ASSERT(linear > 0.0);
    CU_ASSERT(ck_model_op_seconds(m, CK_OP_CLASS_ATTENTION) > 0.0);
    CU_ASSERT(ck_model_op_seconds(m, CK_OP_CLASS_LAYER_NORM) > 0.0);
    CU_ASSERT(linear > ck_model_op_seconds(m, CK_OP_CLASS_ATTENTION));
    CU_ASSERT_EQUAL(ck_model_op_seconds(m, CK_OP_CLASS_GELU), 0.0); /* fused into its linear */
    CU_ASSERT_EQUAL(ck_model_op_seconds(m, CK_OP_CLASS_COUNT), 0.0);
    CU_ASSERT_EQUAL(ck_model_op_seconds(NULL, CK_OP_CLASS_LINEAR), 0.0);
    /* the FLOPs counted run by run are the table's per-token count over the batch's sequences */
    double want_flops = 0.0;
    for (size_t q = 0; q < s.n_sequences; q++) {
        size_t len = s.offsets[q + 1] - s.offsets[q];
        want_flops += (double)len * ck_model_flops_per_token(m, len);
    }
    CU_ASSERT(want_flops > 0.0);
    CU_ASSERT_EQUAL(ck_model_op_flops(m, CK_OP_CLASS_LINEAR) +
                        ck_model_op_flops(m, CK_OP_CLASS_ATTENTION), want_flops);
    CU_ASSERT_EQUAL(ck_model_op_flops(m, CK_OP_CLASS_LAYER_NORM), 0.0);
    ck_model_reset_op_seconds(m);
    CU_ASSERT_EQUAL(ck_model_op_flops(m, CK_OP_CLASS_LINEAR), 0.0);
    ck_sequence_set_free(&s);
    ck_model_free(m);
    ck_model_params p = ck_model_default_params();
    CU_ASSERT_EQUAL(p.precision, CK_PRECISION_FP32);
    ck_model *bad = NULL;
    p.parity = 1;
    p.precision = CK_PRECISION_BF16;
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_model_load(&bad, &p, &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(bad);
    CU_ASSERT_STRING_EQUAL(err.message, "model: parity runs fp32 only (the X-Ray contract): precision "
                                        "bf16 and parity cannot be combined");
    p.parity = 0;
    p.precision = (ck_precision)7;
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_model_load(&bad, &p, &err), CK_E_ARG);
    CU_ASSERT_STRING_EQUAL(err.message, "model: precision 7: expected CK_PRECISION_FP32, CK_PRECISION_BF16 or CK_PRECISION_INT8");
    CU_ASSERT_STRING_EQUAL(ck_model_precision(NULL), "");
}

static void test_tools(void)
{
    ck_error err = {0};
    char *identity = NULL, *text = NULL, *json = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_demo_weights_write(tmp("demo.st"), 7, &identity, &err), CK_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(identity, "seed 7"));
    CU_ASSERT_EQUAL(ck_weights_describe(tmp("demo.st"), &text, &err), CK_OK);
    CU_ASSERT_PTR_NOT_NULL(text != NULL ? strstr(text, "\tF32\t[178,128]\t91136\n") : NULL);
    CU_ASSERT_EQUAL(ck_weights_manifest(tmp("demo.st"), &json, &err), CK_OK);
    CU_ASSERT_PTR_NOT_NULL(json != NULL ? strstr(json, "\"sha256\"") : NULL);
    ck_free(identity);
    ck_free(text);
    ck_free(json);
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_weights_describe(tmp("none.st"), &text, &err), CK_E_IO);
    CU_ASSERT_PTR_NULL(text);
    ck_free(NULL);
}

static int setup_and_run(void)
{
    snprintf(work, sizeof work, "/tmp/ck_test_api_%ld", (long)getpid());
    if (mkdir(work, 0700) != 0 && errno != EEXIST) {
        return 1;
    }
    static const ck_test_case cases[] = {
        {"version, status names, defaults", test_version_status_defaults},
        {"model shape and log", test_model_shape_and_log},
        {"tokenize lines", test_tokenize},
        {"lines equal ids alone, both layers", test_lines_equal_ids_alone},
        {"lines equal the CLI's file", test_lines_equal_cli_file},
        {"encode ids: errors before any batch", test_encode_ids_errors},
        {"load errors", test_load_errors},
        {"no process state changed, nothing printed", test_no_process_state_no_output},
        {"corpus run errors", test_run_corpus_errors},
        {"cancel between batches", test_cancel_between_batches},
        {"resume refused is CK_E_STATE", test_resume_refused_is_state},
        {"precision and op seconds", test_precision_and_op_seconds},
        {"weights tools", test_tools},
    };
    int rc = ck_test_run("api", cases, sizeof cases / sizeof cases[0]);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", work);
    if (system(cmd) != 0) {
        rc = 1;
    }
    return rc;
}

int main(void)
{
    return setup_and_run();
}
