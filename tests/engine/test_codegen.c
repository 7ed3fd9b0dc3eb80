/* test_codegen.c - generated C on the boundary circuit (tests/fixtures/circuits/tiny.json): the
 * checked emitter refuses bad plans before producing anything; the compile cache hits on the same
 * key and misses on each changed input; the library computes the interpreter's bits; the seed's
 * rejection paths hold on the generated entry table; the loader refuses a tampered or foreign
 * library, one of another emitter version, and never serves a stale one rebuilt at the same
 * path (cases C21); four concurrent compiles all succeed. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ck_test.h"
#include "circuit_default.h"
#include "codegen.h"
#include "executor.h"
#include "sha256.h"

#define TINY "tests/fixtures/circuits/tiny.json"
#define EMBEDDING_ONLY "tests/fixtures/circuits/embedding_only.json" /* no linear, no hidden */

/* ---- the checked emitter ---- */

typedef struct {
    ck_circuit c;
    ck_plan plan;
} planned;

static int plan_tiny(planned *p)
{
    ck_error err = {0};
    const ck_plan_limits limits = {64, 16, 1, 16, CK_DTYPE_F32, 0};
    memset(p, 0, sizeof *p);
    return ck_circuit_load(&p->c, ck_test_path(TINY), &err) == CK_OK &&
           ck_plan_build(&p->plan, &p->c, &limits, &err) == CK_OK;
}

static void unplan(planned *p)
{
    ck_plan_free(&p->plan);
    ck_circuit_free(&p->c);
}

static size_t buf(const planned *p, const char *name)
{
    int b = ck_circuit_find_buffer(&p->c, name);
    CU_ASSERT_FATAL(b >= 0);
    return (size_t)b;
}

/* ck_emit_c must fail with `code`, produce no text, and say both words. */
static void expect_refused(const planned *p, int code, const char *w1, const char *w2)
{
    static const ck_emit_identity id = {"0", "0", CK_DTYPE_F32, 1, "0", CK_EMITTER_VERSION};
    char *text = (char *)"untouched";
    size_t len = 7;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_emit_c(&text, &len, &p->c, &p->plan, &id, &err), code);
    CU_ASSERT_PTR_NULL(text);
    CU_ASSERT_EQUAL(len, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, w1));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, w2));
    if (!strstr(err.message, w1) || !strstr(err.message, w2)) {
        fprintf(stderr, "\n    message: %s (wanted \"%s\", \"%s\")\n", err.message, w1, w2);
    }
}

static void test_emit_accepts_the_plan(void)
{
    planned p;
    static const ck_emit_identity id = {"0", "0", CK_DTYPE_F32, 1, "0", CK_EMITTER_VERSION};
    char *text = NULL;
    size_t len = 0;
    ck_error err = {0};
    CU_ASSERT_FATAL(plan_tiny(&p));
    CU_ASSERT_EQUAL_FATAL(ck_emit_c(&text, &len, &p.c, &p.plan, &id, &err), CK_OK);
    CU_ASSERT_EQUAL(strlen(text), len);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "X-Ray tiny.layer.01.context"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "const ck_compiled_circuit ck_compiled_circuit_v1"));
    CU_ASSERT_PTR_NULL(strstr(text, "cJSON"));
    CU_ASSERT_PTR_NULL(strstr(text, "fopen"));
    free(text);
    unplan(&p);
}

static void test_emit_refuses_offset_at_arena_size(void)
{
    planned p;
    char want[64];
    CU_ASSERT_FATAL(plan_tiny(&p));
    p.plan.offsets[buf(&p, "ctx")] = p.plan.arena_bytes;
    snprintf(want, sizeof want, "offset %zu is at or past the arena size", p.plan.arena_bytes);
    expect_refused(&p, CK_E_SIZE, "\"ctx\"", want);
    unplan(&p);
}

static void test_emit_refuses_bytes_past_arena(void)
{
    planned p;
    CU_ASSERT_FATAL(plan_tiny(&p));
    p.plan.offsets[buf(&p, "ffn")] = p.plan.arena_bytes - 64;
    expect_refused(&p, CK_E_SIZE, "\"ffn\"", "run past the arena size");
    unplan(&p);
}

static void test_emit_refuses_misaligned_offset(void)
{
    planned p;
    char want[64];
    CU_ASSERT_FATAL(plan_tiny(&p));
    size_t b = buf(&p, "features");
    p.plan.offsets[b] += 1;
    snprintf(want, sizeof want, "offset %zu is not 64-byte aligned", p.plan.offsets[b]);
    expect_refused(&p, CK_E_SIZE, "\"features\"", want);
    unplan(&p);
}

/* q and k are both read by the attention: one byte range for both is a collision */
static void test_emit_refuses_live_overlap(void)
{
    planned p;
    CU_ASSERT_FATAL(plan_tiny(&p));
    p.plan.offsets[buf(&p, "k")] = p.plan.offsets[buf(&p, "q")];
    expect_refused(&p, CK_E_SIZE, "\"q\" [", "\"k\" [");
    expect_refused(&p, CK_E_SIZE, "overlap", "both live at op");
    unplan(&p);
}

static void test_emit_refuses_buffer_defined_twice(void)
{
    planned p;
    CU_ASSERT_FATAL(plan_tiny(&p));
    strcpy(p.c.buffers[buf(&p, "ffn_out")].name, "normed");
    expect_refused(&p, CK_E_CIRCUIT, "\"normed\" defined twice", "at offset");
    unplan(&p);
}

/* a checkpoint id that would end the generated string literal and comment */
static void test_emit_refuses_unprintable_name(void)
{
    planned p;
    CU_ASSERT_FATAL(plan_tiny(&p));
    strcpy(p.c.ops[3].checkpoint, "tiny.*/\"evil");
    expect_refused(&p, CK_E_CIRCUIT, "checkpoint \"tiny.*/", "cannot be printed into generated C");
    unplan(&p);
}

static void test_emit_refuses_weight_outside_table(void)
{
    planned p;
    CU_ASSERT_FATAL(plan_tiny(&p));
    p.c.ops[1].weights[1] = (int)p.c.n_weights;
    expect_refused(&p, CK_E_CIRCUIT, "weight \"bias\"", "outside the 21 weights");
    unplan(&p);
}

/* ---- compiling and the cache ---- */

static ck_compile_params tiny_params(const char *dir)
{
    ck_compile_params p = ck_compile_default_params();
    p.circuit = ck_test_path(TINY);
    p.out_dir = dir;
    p.max_batch_tokens = 64;
    return p;
}

/* A directory in the test's temp dir; each name keeps its own buffer (ck_test_tmp_path reuses). */
static const char *subdir(const char *name)
{
    static char dirs[32][512];
    static size_t used;
    for (size_t i = 0; i < used; i++) {
        if (strcmp(strrchr(dirs[i], '/') + 1, name) == 0) {
            return dirs[i];
        }
    }
    CU_ASSERT_FATAL(used < 32);
    snprintf(dirs[used], sizeof dirs[used], "%s", ck_test_tmp_path(name));
    mkdir(dirs[used], 0755);
    return dirs[used++];
}

static int compile_ok(const ck_compile_params *p, ck_compile_result *r)
{
    ck_error err = {0};
    int rc = ck_codegen_compile(p, r, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    return rc == CK_OK;
}

/* Writes tiny.json with its first `from` replaced by `to` to `file` in the temp dir; its path. */
static const char *tiny_with(const char *file, const char *from, const char *to)
{
    FILE *in = fopen(ck_test_path(TINY), "rb");
    static char text[1 << 16], path[512];
    size_t n = in ? fread(text, 1, sizeof text - 1, in) : 0;
    if (in) {
        fclose(in);
    }
    text[n] = '\0';
    char *at = strstr(text, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    snprintf(path, sizeof path, "%s", ck_test_tmp_path(file));
    FILE *out = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    fprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    fclose(out);
    return path;
}

/* tiny.json with each edits[2i] replaced by edits[2i + 1] in turn (n pairs), written to `file`. */
static const char *tiny_edited(const char *file, const char *const *edits, size_t n)
{
    FILE *in = fopen(ck_test_path(TINY), "rb");
    static char text[1 << 16], next[1 << 16], path[512];
    size_t len = in ? fread(text, 1, sizeof text - 1, in) : 0;
    if (in) {
        fclose(in);
    }
    text[len] = '\0';
    for (size_t i = 0; i < n; i++) {
        char *at = strstr(text, edits[2 * i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        snprintf(next, sizeof next, "%.*s%s%s", (int)(at - text), text, edits[2 * i + 1],
                 at + strlen(edits[2 * i]));
        memcpy(text, next, sizeof text);
    }
    snprintf(path, sizeof path, "%s", ck_test_tmp_path(file));
    FILE *out = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    fputs(text, out);
    fclose(out);
    return path;
}

/* tiny.json with the residual LayerNorm eps 1e-5 replaced by `eps`. */
static const char *tiny_with_eps(const char *file, const char *eps)
{
    char to[64];
    snprintf(to, sizeof to, "\"eps\": %s", eps);
    return tiny_with(file, "\"eps\": 1e-5", to);
}

static void test_second_compile_is_a_cache_hit(void)
{
    const ck_compile_params p = tiny_params(subdir("cache"));
    ck_compile_result a, b;
    struct stat before, after;
    CU_ASSERT_FATAL(compile_ok(&p, &a));
    CU_ASSERT_EQUAL(a.cache_hit, 0);
    CU_ASSERT_EQUAL_FATAL(stat(a.library, &before), 0);
    CU_ASSERT_FATAL(compile_ok(&p, &b));
    CU_ASSERT_EQUAL(b.cache_hit, 1);
    CU_ASSERT_STRING_EQUAL(a.key, b.key);
    CU_ASSERT_STRING_EQUAL(a.sha256, b.sha256);
    CU_ASSERT_EQUAL_FATAL(stat(b.library, &after), 0);
    CU_ASSERT_EQUAL(before.st_ino, after.st_ino); /* nothing was renamed over it */
    CU_ASSERT_EQUAL(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
}

/* -o DIR that does not exist yet is made; one whose parent is missing is CK_E_IO naming it. */
static void test_output_directory_is_made(void)
{
    char fresh[600], orphan[600];
    snprintf(fresh, sizeof fresh, "%s/made-by-compile", subdir("outdir"));
    snprintf(orphan, sizeof orphan, "%s/no-such-parent/dir", subdir("outdir"));
    ck_compile_params p = tiny_params(fresh);
    ck_compile_result r;
    CU_ASSERT_FATAL(compile_ok(&p, &r));
    struct stat st;
    CU_ASSERT_EQUAL(stat(r.library, &st), 0);
    p.out_dir = orphan;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_codegen_compile(&p, &r, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "no-such-parent"));
}

/* A circuit named "" names no output file: refused before -o DIR is made. */
static void test_empty_circuit_name_is_refused(void)
{
    const char *path = tiny_with("unnamed.json", "\"name\": \"tiny_encoder\"", "\"name\": \"\"");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/never-made", subdir("unnamed"));
    ck_compile_params p = tiny_params(dir);
    p.circuit = path;
    ck_compile_result r;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_codegen_compile(&p, &r, &err), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "circuit name is empty"));
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(dir, &st), 0);
}

/* One input changed at a time: LayerNorm eps, CFLAGS, precision, fusion, batch tokens, compiler. */
static void test_each_key_input_changes_the_key(void)
{
    ck_compile_params p[7];
    ck_compile_result r[7];
    for (size_t i = 0; i < 7; i++) {
        char name[16];
        snprintf(name, sizeof name, "key%zu", i);
        p[i] = tiny_params(subdir(name));
    }
    p[1].circuit = tiny_with_eps("tiny_eps.json", "1e-6");
    p[2].extra_flags = "-O3";
    p[3].precision = CK_PRECISION_BF16;
    p[4].parity = 1;
    p[5].max_batch_tokens = 128;
#ifdef __SANITIZE_ADDRESS__
    p[6].cc = "gcc"; /* a sanitizer build links its own runtime: another compiler cannot link it */
#else
    p[6].cc = access("/usr/bin/clang", X_OK) == 0 ? "clang" : "gcc";
#endif
    for (size_t i = 0; i < 7; i++) {
        CU_ASSERT_FATAL(compile_ok(&p[i], &r[i]));
        CU_ASSERT_EQUAL(r[i].cache_hit, 0);
        for (size_t j = 0; j < i; j++) {
            CU_ASSERT_STRING_NOT_EQUAL(r[i].key, r[j].key);
        }
    }
    CU_ASSERT_STRING_NOT_EQUAL(r[1].circuit_sha256, r[0].circuit_sha256);
    CU_ASSERT_STRING_EQUAL(r[2].circuit_sha256, r[0].circuit_sha256);
}

/* Four processes compile the same circuit into one empty directory at once: all succeed and the
 * published library matches its manifest (no partial file is ever at the final name). */
static void test_concurrent_compiles_all_succeed(void)
{
    const ck_compile_params p = tiny_params(subdir("race"));
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            ck_compile_result r;
            ck_error err = {0};
            _exit(ck_codegen_compile(&p, &r, &err) == CK_OK ? 0 : 1);
        }
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        CU_ASSERT_EQUAL(waitpid(kids[i], &status, 0), kids[i]);
        CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ck_compile_result r;
    CU_ASSERT_FATAL(compile_ok(&p, &r));
    CU_ASSERT_EQUAL(r.cache_hit, 1);
}

/* ---- the library against the interpreter ---- */

typedef struct {
    ck_circuit c;
    ck_weights *w;
    ck_compiled_library lib;
    const float **data;  /* [n_weights] the library's weight pointers */
} loaded;

static int load_tiny(loaded *l, const char *circuit, int parity, const char *dir)
{
    ck_compile_params p = tiny_params(dir);
    ck_compile_result r;
    ck_error err = {0};
    memset(l, 0, sizeof *l);
    p.circuit = circuit;
    p.parity = parity;
    if (!compile_ok(&p, &r) || ck_circuit_load(&l->c, circuit, &err) != CK_OK ||
        ck_circuit_synthetic_weights(&l->w, &l->c, 11, &err) != CK_OK) {
        return 0;
    }
    const ck_compiled_want want = {r.circuit_sha256, CK_DTYPE_F32, !parity, 64};
    if (ck_codegen_load(&l->lib, r.library, &want, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
        return 0;
    }
    l->data = calloc(l->c.n_weights, sizeof *l->data);
    for (size_t i = 0; i < l->c.n_weights; i++) {
        l->data[i] = ck_weights_find(l->w, l->c.weights[i].checkpoint_name)->data;
    }
    return 1;
}

static void unload(loaded *l)
{
    free(l->data);
    ck_codegen_unload(&l->lib);
    ck_weights_free(l->w);
    ck_circuit_free(&l->c);
}

/* Three sequences (lengths 3, 9, 14) of ids in 1..9, boundaries 0; `salt` varies them. */
static size_t make_batch(int32_t *ids, size_t *offsets, uint32_t salt)
{
    static const size_t lengths[] = {3, 9, 14};
    uint32_t x = 777u + salt;
    offsets[0] = 0;
    for (size_t s = 0; s < 3; s++) {
        for (size_t t = 0; t < lengths[s]; t++) {
            x = x * 1664525u + 1013904223u;
            ids[offsets[s] + t] = (t == 0 || t == lengths[s] - 1) ? 0 : (int32_t)(1 + (x >> 8) % 9);
        }
        offsets[s + 1] = offsets[s] + lengths[s];
    }
    return 3;
}

/* The features of one batch through an executor, interpreted or on l's library. */
static int run_executor(const loaded *l, int compiled, int threads, int fuse, const int32_t *ids,
                        const size_t *offsets, float *out)
{
    ck_executor *ex = NULL;
    ck_error err = {0};
    ck_executor_options o = {threads, 64, 16, fuse, CK_DTYPE_F32,
                             compiled ? l->lib.table : NULL};
    int rc = ck_executor_init(&ex, &l->c, l->w, &o, &err);
    rc = rc ? rc : ck_executor_run(ex, ids, offsets, 3, l->c.features_buffer, out, 26 * 4, NULL,
                                   NULL, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
    }
    ck_executor_free(ex);
    return rc;
}

/* circuit: a path (the tiny circuit or a variant of it). */
static void check_identical(const char *circuit, int parity, const char *dir)
{
    loaded l;
    int32_t ids[26];
    size_t offsets[4];
    float interp[26 * 4], gen[26 * 4];
    CU_ASSERT_FATAL(load_tiny(&l, circuit, parity, subdir(dir)));
    make_batch(ids, offsets, 0);
    for (int threads = 1; threads <= 2; threads++) {
        ck_test_fill_canary(gen, 26 * 4);
        CU_ASSERT_EQUAL(run_executor(&l, 0, threads, !parity, ids, offsets, interp), CK_OK);
        CU_ASSERT_EQUAL(run_executor(&l, 1, threads, !parity, ids, offsets, gen), CK_OK);
        CU_ASSERT_EQUAL(memcmp(interp, gen, sizeof gen), 0);
    }
    unload(&l);
}

static void test_generated_equals_interpreter_fused(void)
{
    check_identical(ck_test_path(TINY), 0, "same0");
}

static void test_generated_equals_interpreter_parity(void)
{
    check_identical(ck_test_path(TINY), 1, "same1");
}

/* tiny.json with a leaky_relu (slope 0.2, in place) where its gelu_new was: the new op's step and
 * its row-local run give the interpreter's bits, fused or not. */
static void test_generated_equals_interpreter_leaky_relu(void)
{
    const char *path = tiny_with("tiny_leaky.json", "{\"op\": \"gelu_new\"",
                                 "{\"op\": \"leaky_relu\", \"params\": {\"slope\": 0.2}");
    check_identical(path, 0, "leaky0");
    check_identical(path, 1, "leaky1");
}

/* tiny.json with a layer_norm (eps 1e-5, in place, gamma = beta = ffn_b) where its gelu_new was: the
 * new op's step and its row-local run give the interpreter's bits, fused or not. */
static void test_generated_equals_interpreter_layer_norm(void)
{
    const char *path = tiny_with("tiny_layer_norm.json", "{\"op\": \"gelu_new\"",
                                 "{\"op\": \"layer_norm\", \"weights\": {\"gamma\": \"ffn_b\", "
                                 "\"beta\": \"ffn_b\"}, \"params\": {\"eps\": 1e-5}");
    check_identical(path, 0, "layer_norm0");
    check_identical(path, 1, "layer_norm1");
}

/* tiny.json with its k projection a conv1d (k_w [C,C,3], 'same' padding 1 per sequence): the step,
 * its packed linear and its im2col scratch give the interpreter's bits, fused or not, at 1 and 2
 * threads, over a batch of 3 ragged sequences. */
static void test_generated_equals_interpreter_conv1d(void)
{
    static const char *const edits[] = {
        "\"K\": 2}", "\"K\": 2, \"K3\": 3}",
        "\"k_w\": {\"checkpoint\": \"w.k_w\", \"shape\": [\"C\", \"C\"]",
        "\"k_w\": {\"checkpoint\": \"w.k_w\", \"shape\": [\"C\", \"C\", \"K3\"]",
        "{\"op\": \"linear\", \"in\": {\"x\": \"hidden\"}, \"weights\": {\"weight\": \"k_w\"",
        "{\"op\": \"conv1d\", \"in\": {\"x\": \"hidden\"}, \"weights\": {\"weight\": \"k_w\""};
    const char *path = tiny_edited("tiny_conv1d.json", edits, 3);
    check_identical(path, 0, "conv1d0");
    check_identical(path, 1, "conv1d1");
}

/* tiny_lstm.json (embedding, the two gate linears, lstm_recurrence, a linear): the recurrence
 * step and its (sequence, direction) split give the interpreter's bits, fused or not. */
static void test_generated_equals_interpreter_lstm_recurrence(void)
{
    check_identical(ck_test_path("tests/fixtures/circuits/tiny_lstm.json"), 0, "lstm0");
    check_identical(ck_test_path("tests/fixtures/circuits/tiny_lstm.json"), 1, "lstm1");
}

/* The prosody circuit's token side (kokoro_prosody_tokens.json: PL-BERT, concat_style, AdaLayerNorm,
 * the LSTMs and conv1d text encoder, durations at a per-sequence speed) on synthetic weights: the
 * library gets the style and speed through set_inputs (ABI 3) and gives the interpreter's t_en and
 * durations bit for bit, at 1 and 2 threads (the interpreter's at 1 and at 2), over 3 ragged
 * sequences of different styles and speeds; without the sequence inputs both refuse the run
 * (CK_E_ARG). */
static void test_sequence_inputs_generated(void)
{
    ck_compile_params p = tiny_params(subdir("prosody"));
    ck_compile_result r;
    ck_error err = {0};
    ck_circuit c;
    ck_weights *w = NULL;
    ck_compiled_library lib;
    p.circuit = ck_test_path("circuits/kokoro_prosody_tokens.json");
    p.max_batch_tokens = 512;
    CU_ASSERT_FATAL(compile_ok(&p, &r));
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, p.circuit, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, 11, &err), CK_OK);
    const ck_compiled_want want = {r.circuit_sha256, CK_DTYPE_F32, 1, 512};
    CU_ASSERT_EQUAL_FATAL(ck_codegen_load(&lib, r.library, &want, &err), CK_OK);
    CU_ASSERT_EQUAL(lib.table->sequence_inputs, 1);
    CU_ASSERT_EQUAL(lib.table->n_frame_dims, 0);
    int32_t ids[26];
    size_t offsets[4];
    make_batch(ids, offsets, 5);
    float style[3 * 128], speed[3] = {1.0f, 0.85f, 1.3f};
    for (size_t i = 0; i < 3 * 128; i++) {
        style[i] = (float)((int)(i * 37 % 101) - 50) / 100.0f;
    }
    const size_t cols = c.buffers[c.features_buffer].cols;
    float *out[2][2];
    int32_t dur[2][2][26];
    for (int threads = 1; threads <= 2; threads++) {
        for (int compiled = 0; compiled <= 1; compiled++) {
            ck_executor *ex = NULL;
            ck_executor_options o = {threads, 512, 512, 1, CK_DTYPE_F32,
                                     compiled ? lib.table : NULL};
            float *y = out[threads - 1][compiled] = calloc(26 * cols, sizeof *y);
            CU_ASSERT_EQUAL_FATAL(ck_executor_init(&ex, &c, w, &o, &err), CK_OK);
            CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 3, c.features_buffer, y, 26 * cols,
                                            NULL, NULL, &err), CK_E_ARG); /* no style yet */
            CU_ASSERT_EQUAL(ck_executor_set_sequence_inputs(ex, style, 3, 128, speed, &err), CK_OK);
            CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 3, c.features_buffer, y, 26 * cols,
                                            NULL, NULL, &err), CK_OK);
            size_t rows = 0;
            const int32_t *d = ck_executor_output_rows(ex, c.durations_buffer, &rows);
            CU_ASSERT_PTR_NOT_NULL_FATAL(d);
            CU_ASSERT_EQUAL(rows, 26);
            memcpy(dur[threads - 1][compiled], d, sizeof dur[0][0]);
            ck_executor_free(ex);
        }
    }
    for (int t = 0; t < 2; t++) { /* the library at t + 1 threads: the interpreter's at 1 */
        CU_ASSERT_EQUAL(memcmp(out[t][0], out[t][1], 26 * cols * sizeof(float)), 0);
        CU_ASSERT_EQUAL(memcmp(out[0][0], out[t][1], 26 * cols * sizeof(float)), 0);
        CU_ASSERT_EQUAL(memcmp(dur[t][0], dur[t][1], sizeof dur[0][0]), 0);
        CU_ASSERT_EQUAL(memcmp(dur[0][0], dur[t][1], sizeof dur[0][0]), 0);
    }
    for (int t = 0; t < 2; t++) {
        free(out[t][0]);
        free(out[t][1]);
    }
    int positive = 1;
    for (size_t i = 0; i < 26; i++) {
        positive = positive && dur[0][0][i] >= 1;
    }
    CU_ASSERT_TRUE(positive); /* real durations: every token at least one frame */
    ck_codegen_unload(&lib);
    ck_weights_free(w);
    ck_circuit_free(&c);
}

/* The smallest boundary: one embedding op, no linear (an empty linear table), no hidden output. */
/* The library times its steps per op kind, as the interpreter does (ckbench's per-op-class
 * columns): every kind of the tiny circuit gets time (no other kind), the rest of the call is "other", and a
 * reset zeroes them all. Parity, so the gelu_new is a step of its own. */
static void test_generated_times_each_op_kind(void)
{
    loaded l;
    int32_t ids[26];
    size_t offsets[4];
    float out[26 * 4];
    ck_executor *ex = NULL;
    ck_error err = {0};
    CU_ASSERT_FATAL(load_tiny(&l, ck_test_path(TINY), 1, subdir("times")));
    make_batch(ids, offsets, 0);
    ck_executor_options o = {1, 64, 16, 0, CK_DTYPE_F32, l.lib.table};
    CU_ASSERT_FATAL(ck_executor_init(&ex, &l.c, l.w, &o, &err) == CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 3, l.c.features_buffer, out, 26 * 4, NULL,
                                    NULL, &err), CK_OK);
    for (int k = 0; k <= CK_OP_KIND_COUNT; k++) { /* the kinds it has, and the rest */
        int has = k == CK_OP_KIND_COUNT;
        for (size_t i = 0; i < l.c.n_ops; i++) {
            has |= l.c.ops[i].kind == (ck_op_kind)k;
        }
        CU_ASSERT_EQUAL(ck_executor_op_seconds(ex, (ck_op_kind)k) > 0.0, has);
    }
    ck_executor_reset_op_seconds(ex);
    for (int k = 0; k <= CK_OP_KIND_COUNT; k++) {
        CU_ASSERT_EQUAL(ck_executor_op_seconds(ex, (ck_op_kind)k), 0.0);
    }
    ck_executor_free(ex);
    unload(&l);
}

static void test_embedding_only_circuit(void)
{
    check_identical(ck_test_path(EMBEDDING_ONLY), 0, "emb");
}

/* ---- the seed's rejection paths, on the generated entry table ---- */

static void *arena_of(size_t bytes)
{
    void *a = NULL;
    CU_ASSERT_FATAL(posix_memalign(&a, 64, bytes + 64) == 0);
    memset(a, 0xA5, bytes + 64);
    return a;
}

static int bytes_intact(const unsigned char *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] != 0xA5) {
            return 0;
        }
    }
    return 1;
}

static void test_arena_one_byte_small_or_off(void)
{
    loaded l;
    CU_ASSERT_FATAL(load_tiny(&l, ck_test_path(TINY), 0, subdir("seed")));
    const ck_compiled_circuit *t = l.lib.table;
    size_t n = t->arena_bytes;
    unsigned char *arena = arena_of(n);
    ck_compiled_state *st = (ck_compiled_state *)&st;
    CU_ASSERT_EQUAL(t->init(&st, arena, n - 1, l.data, l.c.n_weights, 1), CK_E_SIZE);
    CU_ASSERT_PTR_NULL(st);
    CU_ASSERT_EQUAL(t->init(&st, arena + 1, n, l.data, l.c.n_weights, 1), CK_E_SIZE);
    CU_ASSERT_PTR_NULL(st);
    CU_ASSERT(bytes_intact(arena, n + 64));
    CU_ASSERT_EQUAL(t->init(&st, arena, n, l.data, l.c.n_weights - 1, 1), CK_E_ARG);
    CU_ASSERT_EQUAL(t->init(&st, arena, n, l.data, l.c.n_weights, 1), CK_OK);
    t->free(st);
    free(arena);
    unload(&l);
}

static void test_id_equal_to_vocab_leaves_canary(void)
{
    loaded l;
    int32_t ids[26];
    size_t offsets[4];
    float out[26 * 4];
    CU_ASSERT_FATAL(load_tiny(&l, ck_test_path(TINY), 0, subdir("seed")));
    const ck_compiled_circuit *t = l.lib.table;
    void *arena = arena_of(t->arena_bytes);
    ck_compiled_state *st = NULL;
    CU_ASSERT_EQUAL_FATAL(t->init(&st, arena, t->arena_bytes, l.data, l.c.n_weights, 2), CK_OK);
    make_batch(ids, offsets, 0);
    ids[5] = (int32_t)t->vocab; /* 10: one past the last row of the word table */
    ck_test_fill_canary(out, 26 * 4);
    CU_ASSERT_EQUAL(t->run(st, ids, offsets, 3, t->features_buffer, out, 26 * 4, NULL, NULL),
                    CK_E_RANGE);
    CU_ASSERT(ck_test_canary_intact(out, 26 * 4));
    CU_ASSERT_PTR_NULL(t->rows(st, t->features_buffer, NULL));
    ids[5] = -1;
    CU_ASSERT_EQUAL(t->run(st, ids, offsets, 3, t->features_buffer, out, 26 * 4, NULL, NULL),
                    CK_E_RANGE);
    ids[5] = 1;
    CU_ASSERT_EQUAL(t->run(st, ids, offsets, 3, t->features_buffer, out, 26 * 4 - 1, NULL, NULL),
                    CK_E_SIZE);
    CU_ASSERT(ck_test_canary_intact(out, 26 * 4));
    t->free(st);
    free(arena);
    unload(&l);
}

static void weights_digest(const loaded *l, unsigned char out[32])
{
    ck_sha256_ctx *h = NULL;
    CU_ASSERT_FATAL(ck_sha256_begin(&h) == CK_OK);
    for (size_t i = 0; i < l->c.n_weights; i++) {
        ck_sha256_update(h, l->data[i], l->c.weights[i].elements * sizeof(float));
    }
    ck_sha256_peek(h, out);
    ck_sha256_free(h);
}

/* Weights hash the same before and after runs; one arena serves two different batches, each
 * giving the interpreter's features for it (not the previous batch's). */
static void test_arena_reuse_and_weights_untouched(void)
{
    loaded l;
    int32_t ids_a[26], ids_b[26];
    size_t off_a[4], off_b[4];
    float out_a[26 * 4], out_b[26 * 4], want_a[26 * 4], want_b[26 * 4];
    unsigned char before[32], after[32];
    CU_ASSERT_FATAL(load_tiny(&l, ck_test_path(TINY), 0, subdir("seed")));
    const ck_compiled_circuit *t = l.lib.table;
    void *arena = arena_of(t->arena_bytes);
    ck_compiled_state *st = NULL;
    make_batch(ids_a, off_a, 1);
    make_batch(ids_b, off_b, 2);
    CU_ASSERT_EQUAL(run_executor(&l, 0, 2, 1, ids_a, off_a, want_a), CK_OK);
    CU_ASSERT_EQUAL(run_executor(&l, 0, 2, 1, ids_b, off_b, want_b), CK_OK);
    weights_digest(&l, before);
    CU_ASSERT_EQUAL_FATAL(t->init(&st, arena, t->arena_bytes, l.data, l.c.n_weights, 2), CK_OK);
    CU_ASSERT_EQUAL(t->run(st, ids_a, off_a, 3, t->features_buffer, out_a, 26 * 4, NULL, NULL),
                    CK_OK);
    CU_ASSERT_EQUAL(t->run(st, ids_b, off_b, 3, t->features_buffer, out_b, 26 * 4, NULL, NULL),
                    CK_OK);
    weights_digest(&l, after);
    CU_ASSERT_EQUAL(memcmp(before, after, 32), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(out_a, out_b, sizeof out_a), 0);
    CU_ASSERT_EQUAL(memcmp(out_a, want_a, sizeof out_a), 0);
    CU_ASSERT_EQUAL(memcmp(out_b, want_b, sizeof out_b), 0);
    size_t tokens = 0;
    CU_ASSERT_PTR_NOT_NULL(t->rows(st, t->features_buffer, &tokens));
    CU_ASSERT_EQUAL(tokens, 26);
    t->free(st);
    free(arena);
    unload(&l);
}

/* ---- the loader ---- */

static void copy_file(const char *from, const char *to, long flip_at)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    CU_ASSERT_FATAL(in != NULL && out != NULL);
    int ch;
    for (long i = 0; (ch = fgetc(in)) != EOF; i++) {
        fputc(i == flip_at ? ch ^ 1 : ch, out);
    }
    fclose(in);
    fclose(out);
}

static void test_load_refuses_tampered_and_foreign(void)
{
    const ck_compile_params p = tiny_params(subdir("tamper"));
    ck_compile_result r;
    ck_compiled_library lib;
    ck_error err = {0};
    char so[600], manifest[600];
    CU_ASSERT_FATAL(compile_ok(&p, &r));
    snprintf(so, sizeof so, "%s/copy.so", p.out_dir);
    snprintf(manifest, sizeof manifest, "%s/copy.so.json", p.out_dir);
    copy_file(r.manifest, manifest, -1);
    copy_file(r.library, so, 4000);
    ck_compiled_want want = {r.circuit_sha256, CK_DTYPE_F32, 1, 64};
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, so, &want, &err), CK_E_HASH);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "differs from its manifest"));
    CU_ASSERT_PTR_NULL(lib.handle);
    copy_file(r.library, so, -1);
    want.circuit_sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, so, &want, &err), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "circuit hash"));
    want.circuit_sha256 = r.circuit_sha256;
    want.fuse_gelu = 0;
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, so, &want, &err), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "parity"));
    want.fuse_gelu = 1;
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, so, &want, &err), CK_OK);
    ck_codegen_unload(&lib);
}

/* Copies the first `keep` bytes of library r->library to DIR/NAME.so (the byte at `poke`, when
 * below keep, xor 1) and writes DIR/NAME.so.json: r's manifest forged to that copy's SHA-256. */
static void forge_copy(const ck_compile_result *r, const char *so, long keep, long poke)
{
    char manifest[640], sha[65];
    ck_error err = {0};
    snprintf(manifest, sizeof manifest, "%s.json", so);
    FILE *in = fopen(r->library, "rb"), *out = fopen(so, "wb");
    CU_ASSERT_FATAL(in != NULL && out != NULL);
    for (long i = 0; i < keep; i++) {
        int ch = fgetc(in);
        fputc(i == poke ? ch ^ 1 : ch, out);
    }
    fclose(in);
    fclose(out);
    CU_ASSERT_EQUAL_FATAL(ck_sha256_file(so, sha, &err), CK_OK);
    in = fopen(r->manifest, "rb");
    static char text[1 << 16];
    size_t n = in ? fread(text, 1, sizeof text - 1, in) : 0;
    if (in) {
        fclose(in);
    }
    text[n] = '\0';
    cJSON *json = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    cJSON_ReplaceItemInObjectCaseSensitive(json, "sha256", cJSON_CreateString(sha));
    char *forged = cJSON_Print(json);
    out = fopen(manifest, "wb");
    CU_ASSERT_FATAL(out != NULL && forged != NULL);
    fputs(forged, out);
    fclose(out);
    free(forged);
    cJSON_Delete(json);
}

/* A library cut to half its size, with its manifest forged to the cut bytes' SHA-256, passes the
 * hash check; its loadable segments end past the end of the file, which dlopen would touch as a
 * SIGBUS. The loader refuses it before dlopen, naming the segment; and a whole copy relabelled for
 * another machine (e_machine, bytes 18-19, xor 1) by its machine. */
static void test_load_refuses_truncated_with_forged_manifest(void)
{
    const ck_compile_params p = tiny_params(subdir("truncated"));
    ck_compile_result r;
    ck_compiled_library lib;
    ck_error err = {0};
    CU_ASSERT_FATAL(compile_ok(&p, &r));
    char so[600];
    struct stat st;
    CU_ASSERT_EQUAL_FATAL(stat(r.library, &st), 0);
    snprintf(so, sizeof so, "%s/cut.so", p.out_dir);
    forge_copy(&r, so, (long)st.st_size / 2, -1);
    ck_compiled_want want = {r.circuit_sha256, CK_DTYPE_F32, 1, 64};
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, so, &want, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "ends past the end of the file"));
    CU_ASSERT_PTR_NULL(lib.handle);
    snprintf(so, sizeof so, "%s/other.so", p.out_dir);
    forge_copy(&r, so, (long)st.st_size, 18);
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, so, &want, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not x86-64"));
    CU_ASSERT_PTR_NULL(lib.handle);
}

/* An emitter version change: the library of another version has its own key, the next compile
 * into the same directory misses the cache (it does not serve the old library), and the loader
 * refuses the old library by its provenance even with a manifest that matches it. */
static void test_another_emitter_version_misses_and_is_refused(void)
{
    const ck_compile_params p = tiny_params(subdir("emitter"));
    ck_compile_result old, now, again;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_codegen_compile_as(&p, "", &old, &err), CK_E_ARG);
    CU_ASSERT_FATAL(ck_codegen_compile_as(&p, "3", &old, &err) == CK_OK);
    CU_ASSERT_EQUAL(old.cache_hit, 0);
    char so[600], manifest[600];
    snprintf(so, sizeof so, "%s/old.so", p.out_dir);
    snprintf(manifest, sizeof manifest, "%s/old.so.json", p.out_dir);
    copy_file(old.library, so, -1);
    copy_file(old.manifest, manifest, -1);
    CU_ASSERT_FATAL(compile_ok(&p, &now));
    CU_ASSERT_EQUAL(now.cache_hit, 0);
    CU_ASSERT_STRING_NOT_EQUAL(now.key, old.key);
    CU_ASSERT_STRING_NOT_EQUAL(now.sha256, old.sha256);
    CU_ASSERT_FATAL(ck_codegen_compile_as(&p, CK_EMITTER_VERSION, &again, &err) == CK_OK);
    CU_ASSERT_EQUAL(again.cache_hit, 1);
    CU_ASSERT_STRING_EQUAL(again.key, now.key);
    ck_compiled_library lib;
    ck_compiled_want want = {old.circuit_sha256, CK_DTYPE_F32, 1, 64};
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, so, &want, &err), CK_E_CIRCUIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "provenance emitter version is \"3\", expected \""
                                  CK_EMITTER_VERSION "\""));
    CU_ASSERT_PTR_NULL(lib.handle);
    CU_ASSERT_EQUAL(ck_codegen_load(&lib, now.library, &want, &err), CK_OK);
    ck_codegen_unload(&lib);
}

/* C21: load A from P and keep it loaded, rebuild B at P, load P again in the same process: B's
 * code runs (its provenance, its different features), not glibc's cached A. */
static void test_rebuilt_library_is_never_stale(void)
{
    const char *dir = subdir("c21");
    const char *b_json = tiny_with_eps("tiny_c21.json", "0.5");
    loaded a, b;
    int32_t ids[26];
    size_t offsets[4];
    float out_a[26 * 4], out_b[26 * 4];
    /* both circuits are named tiny_encoder: the same DIR/tiny_encoder.so */
    CU_ASSERT_FATAL(load_tiny(&a, ck_test_path(TINY), 0, dir));
    CU_ASSERT_FATAL(load_tiny(&b, b_json, 0, dir));
    CU_ASSERT_STRING_EQUAL(a.lib.path, b.lib.path);
    CU_ASSERT_STRING_NOT_EQUAL(a.lib.sha256, b.lib.sha256);
    CU_ASSERT_STRING_NOT_EQUAL(a.lib.loaded, b.lib.loaded);
    CU_ASSERT_PTR_NOT_EQUAL(a.lib.table, b.lib.table);
    CU_ASSERT_STRING_NOT_EQUAL(a.lib.table->provenance->circuit_sha256,
                               b.lib.table->provenance->circuit_sha256);
    make_batch(ids, offsets, 3);
    CU_ASSERT_EQUAL(run_executor(&a, 1, 1, 1, ids, offsets, out_a), CK_OK);
    CU_ASSERT_EQUAL(run_executor(&b, 1, 1, 1, ids, offsets, out_b), CK_OK);
    CU_ASSERT_NOT_EQUAL(memcmp(out_a, out_b, sizeof out_a), 0);
    unload(&b);
    unload(&a);
}

CK_TEST_MAIN("codegen",
             {"emit accepts the plan", test_emit_accepts_the_plan},
             {"emit refuses offset at arena size", test_emit_refuses_offset_at_arena_size},
             {"emit refuses bytes past arena", test_emit_refuses_bytes_past_arena},
             {"emit refuses misaligned offset", test_emit_refuses_misaligned_offset},
             {"emit refuses live overlap", test_emit_refuses_live_overlap},
             {"emit refuses buffer defined twice", test_emit_refuses_buffer_defined_twice},
             {"emit refuses weight outside table", test_emit_refuses_weight_outside_table},
             {"emit refuses unprintable name", test_emit_refuses_unprintable_name},
             {"concurrent compiles all succeed", test_concurrent_compiles_all_succeed},
             {"second compile is a cache hit", test_second_compile_is_a_cache_hit},
             {"-o DIR is made when missing", test_output_directory_is_made},
             {"empty circuit name is refused before -o DIR", test_empty_circuit_name_is_refused},
             {"truncated library with a forged manifest is refused before dlopen",
              test_load_refuses_truncated_with_forged_manifest},
             {"each key input changes the key", test_each_key_input_changes_the_key},
             {"another emitter version misses and is refused",
              test_another_emitter_version_misses_and_is_refused},
             {"generated equals interpreter fused", test_generated_equals_interpreter_fused},
             {"generated equals interpreter parity", test_generated_equals_interpreter_parity},
             {"generated equals interpreter leaky_relu",
              test_generated_equals_interpreter_leaky_relu},
             {"generated equals interpreter layer_norm",
              test_generated_equals_interpreter_layer_norm},
             {"generated equals interpreter conv1d",
              test_generated_equals_interpreter_conv1d},
             {"generated equals interpreter lstm_recurrence",
              test_generated_equals_interpreter_lstm_recurrence},
             {"sequence inputs generated", test_sequence_inputs_generated},
             {"generated times each op kind", test_generated_times_each_op_kind},
             {"embedding-only circuit", test_embedding_only_circuit},
             {"arena one byte small or off", test_arena_one_byte_small_or_off},
             {"id equal to vocab leaves canary", test_id_equal_to_vocab_leaves_canary},
             {"arena reuse and weights untouched", test_arena_reuse_and_weights_untouched},
             {"load refuses tampered and foreign", test_load_refuses_tampered_and_foreign},
             {"rebuilt library is never stale", test_rebuilt_library_is_never_stale})
