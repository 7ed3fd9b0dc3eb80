/* test_cli_compiled.c - generated C through the binary on the Kokoro circuit: `ckbatch compile`
 * builds the library and a second compile is a cache hit; `--compiled` gives the interpreter's
 * features bit for bit on the quotes corpus sample in fp32 (at 1, 2 and 3 threads), --parity and
 * bf16 (where native), and its metadata names the library; X-Ray over the generated path passes
 * every checkpoint of every pinned case and captures the interpreter's bytes; a mismatched or
 * tampered library is refused. */
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_test.h"
#include "ckbatch.h"

#define QUOTES "tests/fixtures/corpus/quotes_30.txt"
#define CAPTURE "tests/fixtures/kokoro_capture.safetensors"

static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", ck_cli_binary(), args, ck_cli_tmp("stderr"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int native_bf16(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int found = 0;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
        found = strncmp(line, "flags", 5) == 0 &&
                (strstr(line, " amx_bf16") != NULL || strstr(line, " avx512_bf16") != NULL);
    }
    if (f != NULL) {
        fclose(f);
    }
    return found;
}

/* DIR/kokoro_phoneme_encoder.so compiled with `opts` into work/<dir>; its path. */
static const char *compile_kokoro(const char *dir, const char *opts)
{
    static char lib[4][512];
    static int next;
    char args[2048], *out = lib[next++ % 4];
    snprintf(out, 512, "%s/kokoro_phoneme_encoder.so", ck_cli_tmp(dir));
    snprintf(args, sizeof args, "compile %s -q -o %s", opts, ck_cli_tmp(dir));
    mkdir(ck_cli_tmp(dir), 0755);
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    return out;
}

static char *meta(const ck_features_file *f, const char *key)
{
    const char *v = ck_features_metadata(f, key);
    return v != NULL ? strdup(v) : NULL;
}

/* Runs the quotes sample with `opts` (+ --compiled lib when lib) into work/name; its features. */
static float *encode(const char *name, const char *opts, const char *lib, size_t *rows,
                     char **backend, char **sha)
{
    char args[4096];
    ck_features_file *f = NULL;
    ck_error err = {0};
    snprintf(args, sizeof args, "-q --no-progress -t 2 -f text -i %s/%s -o %s %s %s%s",
             getenv("CK_SOURCE_DIR"), QUOTES, ck_cli_tmp(name), opts, lib ? "--compiled " : "",
             lib ? lib : "");
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp(name), &err), CK_OK);
    const ck_tensor_view *t = ck_features_tensor(f, "features");
    float *copy = malloc(t->bytes);
    memcpy(copy, t->data, t->bytes);
    *rows = t->shape[0];
    *backend = meta(f, "backend");
    *sha = meta(f, "library_sha256");
    ck_features_close(f);
    return copy;
}

/* Interpreter and library on the same sample: the same features, bit for bit. */
static void check_identical(const char *dir, const char *opts)
{
    const char *lib = compile_kokoro(dir, opts);
    size_t rows_i = 0, rows_g = 0;
    char *backend_i, *sha_i, *backend_g, *sha_g;
    float *interp = encode("interp.st", opts, NULL, &rows_i, &backend_i, &sha_i);
    float *gen = encode("gen.st", opts, lib, &rows_g, &backend_g, &sha_g);
    CU_ASSERT(rows_i > 100);
    CU_ASSERT_EQUAL_FATAL(rows_i, rows_g);
    CU_ASSERT_EQUAL(memcmp(interp, gen, rows_i * 512 * sizeof(float)), 0);
    CU_ASSERT_PTR_NULL(backend_i); /* an interpreted file keeps today's metadata */
    CU_ASSERT_PTR_NOT_NULL_FATAL(backend_g);
    CU_ASSERT_STRING_EQUAL(backend_g, "generated");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sha_g);
    CU_ASSERT_EQUAL(strlen(sha_g), 64);
    free(interp);
    free(gen);
    free(backend_i);
    free(sha_i);
    free(backend_g);
    free(sha_g);
}

static void test_fp32_identical(void)
{
    check_identical("fp32", "");
}

/* The library's row-local runs hand 256-row slices to whichever worker is free: its features at
 * 1 and 3 threads are the interpreter's at 1, bit for bit. */
static void test_fp32_identical_at_any_threads(void)
{
    const char *lib = compile_kokoro("fp32", "");
    size_t rows[3] = {0};
    char *backend[3], *sha[3];
    float *interp = encode("interp-t1.st", "-t 1", NULL, &rows[0], &backend[0], &sha[0]);
    float *gen1 = encode("gen-t1.st", "-t 1", lib, &rows[1], &backend[1], &sha[1]);
    float *gen3 = encode("gen-t3.st", "-t 3", lib, &rows[2], &backend[2], &sha[2]);
    CU_ASSERT_EQUAL_FATAL(rows[0], rows[1]);
    CU_ASSERT_EQUAL_FATAL(rows[0], rows[2]);
    CU_ASSERT_EQUAL(memcmp(interp, gen1, rows[0] * 512 * sizeof(float)), 0);
    CU_ASSERT_EQUAL(memcmp(interp, gen3, rows[0] * 512 * sizeof(float)), 0);
    free(interp);
    free(gen1);
    free(gen3);
    for (int i = 0; i < 3; i++) {
        free(backend[i]);
        free(sha[i]);
    }
}

static void test_parity_identical(void)
{
    check_identical("parity", "--parity");
}

static void test_bf16_identical(void)
{
    if (!native_bf16()) {
        CU_PASS("no native bf16 on this CPU: bf16 refuses to run either way");
        return;
    }
    check_identical("bf16", "--precision bf16");
}

static void test_second_compile_runs_no_compiler(void)
{
    ck_compile_params p = ck_compile_default_params();
    ck_compile_result a, b;
    ck_error err = {0};
    p.out_dir = ck_cli_tmp("hit");
    p.cc = "/nonexistent/cc"; /* a miss would have to run it: it cannot */
    mkdir(p.out_dir, 0755);
    CU_ASSERT_EQUAL(ck_compile(&p, &a, &err), CK_E_BACKEND);
    p.cc = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_compile(&p, &a, &err), CK_OK);
    CU_ASSERT_EQUAL(a.cache_hit, 0);
    CU_ASSERT_EQUAL_FATAL(ck_compile(&p, &b, &err), CK_OK);
    CU_ASSERT_EQUAL(b.cache_hit, 1);
    CU_ASSERT_STRING_EQUAL(a.sha256, b.sha256);
}

/* X-Ray over the generated path: every checkpoint of every pinned case passes, the report says
 * "generated", and the capture is the interpreter's, byte for byte. */
static void test_xray_generated(void)
{
    const char *lib = compile_kokoro("xray", "--parity");
    char args[4096];
    const char *src = getenv("CK_SOURCE_DIR");
    snprintf(args, sizeof args, "-q --xray-oracle %s/%s --xray-out %s", src, CAPTURE,
             ck_cli_tmp("interp.cap"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(args, sizeof args, "-q --xray-oracle %s/%s --compiled %s --report %s --xray-out %s",
             src, CAPTURE, lib, ck_cli_tmp("report.json"), ck_cli_tmp("gen.cap"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", ck_cli_tmp("interp.cap"), ck_cli_tmp("gen.cap"));
    CU_ASSERT_EQUAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -q '\"backend\":.*\"generated\"' %s && "
             "grep -q '\"fail\":.*0,' %s && grep -q '\"NOT_TESTED\":.*0' %s",
             ck_cli_tmp("report.json"), ck_cli_tmp("report.json"), ck_cli_tmp("report.json"));
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* Compiled for 2048 tokens but run at 4096; compiled fused but run with --parity; a byte of the
 * library flipped: each refused before any output, naming why. */
static void test_mismatch_and_tamper_refused(void)
{
    const char *lib = compile_kokoro("fp32", "");
    char args[4096], cmd[2048];
    snprintf(args, sizeof args, "-q -f ids -i %s -o %s --max-batch-tokens 4096 --compiled %s",
             ck_cli_tmp("ids.txt"), ck_cli_tmp("x.st"), lib);
    ck_cli_write_file(ck_cli_tmp("ids.txt"), "[1, 2, 3]\n");
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("max batch tokens 2048"), 1);
    snprintf(args, sizeof args, "-q -f ids -i %s -o %s --parity --compiled %s",
             ck_cli_tmp("ids.txt"), ck_cli_tmp("x.st"), lib);
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("compile it with the run's --parity"), 1);
    snprintf(cmd, sizeof cmd, "cp %s %s && cp %s.json %s.json && printf 'X' | dd of=%s bs=1 "
             "seek=5000 conv=notrunc 2>/dev/null", lib, ck_cli_tmp("bad.so"), lib,
             ck_cli_tmp("bad.so"), ck_cli_tmp("bad.so"));
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(args, sizeof args, "-q -f ids -i %s -o %s --compiled %s", ck_cli_tmp("ids.txt"),
             ck_cli_tmp("x.st"), ck_cli_tmp("bad.so"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("differs from its manifest"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("x.st")));
}

/* compile -o DIR refuses, before it makes anything, a DIR whose paths would not fit (a cut path
 * named files outside DIR and overwrote one there) and a DIR that is a file. */
static void test_compile_output_dir_refusals(void)
{
    char dir[1024], args[2048];
    int n = snprintf(dir, sizeof dir, "%s/long", ck_cli_work);
    while (n < 560) { /* components of 99 bytes, the last one not made */
        n += snprintf(dir + n, sizeof dir - (size_t)n, "/%099d", n);
    }
    snprintf(args, sizeof args, "mkdir -p %s", dir); /* it exists: only its length is wrong */
    CU_ASSERT_EQUAL_FATAL(system(args), 0);
    snprintf(args, sizeof args, "compile -o %s", dir);
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("output directory path is too long"), 1);
    snprintf(args, sizeof args, "test -z \"$(find %s/long -type f)\"", ck_cli_work);
    CU_ASSERT_EQUAL(system(args), 0); /* no file made in it, nor beside it under a cut name */
    ck_cli_write_file(ck_cli_tmp("a-file"), "x\n");
    snprintf(args, sizeof args, "compile -o %s", ck_cli_tmp("a-file"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("exists and is not a directory"), 1);
}

/* A library in a directory the user cannot write (installed, shared, read-only) loads from a
 * hash-named copy in the user's private $TMPDIR/ckbatch-UID (it used to fail: "cannot create").
 * Run as nobody (root writes anywhere), where nobody can reach the binary. */
static void test_read_only_library_directory(void)
{
    const char *lib = compile_kokoro("gen_ro_src", "");
    char cmd[4096], as_nobody[256];
    snprintf(as_nobody, sizeof as_nobody, "setpriv --reuid=65534 --regid=65534 --clear-groups");
    snprintf(cmd, sizeof cmd, "%s test -x %s 2>/dev/null", as_nobody, ck_cli_binary());
    if (geteuid() != 0 || chmod(ck_cli_work, 0755) != 0 || system(cmd) != 0) {
        CU_PASS("not root, no setpriv, or nobody cannot reach the binary here (e.g. under /root)");
        return;
    }
    const char *ro = ck_cli_tmp("ro"), *home = ck_cli_tmp("nobody");
    snprintf(cmd, sizeof cmd, "mkdir -p %s %s && chmod 777 %s && cp %s %s.json %s && chmod 555 %s && "
             "printf 'h\\311\\231l\\313\\210O\\n' > %s/in.txt && chmod 644 %s/in.txt",
             ro, home, home, lib, lib, ro, ro, home, home);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s env TMPDIR=%s %s -q -t 1 -i %s/in.txt -o %s/x.st --compiled "
             "%s/kokoro_phoneme_encoder.so 2>%s", as_nobody, home, ck_cli_binary(), home, home, ro,
             ck_cli_tmp("stderr"));
    int st = system(cmd);
    CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(cmd, sizeof cmd, "%s/x.st", home);
    CU_ASSERT_TRUE(ck_cli_exists(cmd));
    snprintf(cmd, sizeof cmd, "test \"$(stat -c %%a %s/ckbatch-65534)\" = 700 && ls %s/ckbatch-65534/"
             "kokoro_phoneme_encoder.so.* >/dev/null && test -z \"$(ls -A %s | grep -v '^kokoro_phoneme"
             "_encoder.so$' | grep -v '^kokoro_phoneme_encoder.so.json$')\"", home, home, ro);
    CU_ASSERT_EQUAL(system(cmd), 0); /* the copy is private, and nothing was written beside */
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"fp32 identical", test_fp32_identical},
        {"fp32 identical at any threads", test_fp32_identical_at_any_threads},
        {"parity identical", test_parity_identical},
        {"bf16 identical", test_bf16_identical},
        {"second compile runs no compiler", test_second_compile_runs_no_compiler},
        {"xray generated", test_xray_generated},
        {"mismatch and tamper refused", test_mismatch_and_tamper_refused},
        {"compile output dir refusals", test_compile_output_dir_refusals},
        {"read-only library directory", test_read_only_library_directory},
    };
    return ck_cli_main("cli_compiled", cases, sizeof cases / sizeof cases[0]);
}
