/* test_cli_int8.c - --precision int8 through the binary: a sequence's features are the same bits
 * alone, in any batch and at 1 and 2 threads; they are within the int8 promise of fp32 (per-token
 * cosine >= 0.9995, relative RMSE <= 1.5%) and not equal to them; the metadata says what ran (int8
 * and bf16 linears, the VNNI/AMX kernel, the dot instruction); a oneDNN capped below VNNI refuses;
 * --parity and `ckbatch compile` refuse int8; X-Ray int8 passes its budget on every pinned case. */
#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_test.h"
#include "cli_precision.h"
#include "ckbatch.h"

/* An int8 dot product instruction: what ckbatch's int8 needs. */
static int has_int8_dot(void)
{
    return ck_cli_cpu_has("avx512_vnni") || ck_cli_cpu_has("avx_vnni") || ck_cli_cpu_has("amx_int8");
}

/* The whole file at 1 and 2 threads and at two batch sizes gives the same bytes; the first line run
 * alone gives the same bits as its rows in the batch. */
static void test_int8_invariance(void)
{
    if (!has_int8_dot()) {
        CU_PASS("no int8 dot product on this CPU: the refusal test covers it");
        return;
    }
    ck_cli_write_precision_lines(ck_cli_tmp("in.txt"), 1);
    FILE *one = fopen(ck_cli_tmp("one.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    fprintf(one, "%s\n", CK_PRECISION_LINES[0]);
    fclose(one);
    static const char *const opts[] = {"-t 1 --max-batch-tokens 512", "-t 2 --max-batch-tokens 4096",
                                       "-t 2"};
    float *ref = NULL;
    size_t ref_rows = 0;
    for (size_t i = 0; i < 3; i++) {
        char args[1024];
        snprintf(args, sizeof args, "--precision int8 %s -i %s -o %s", opts[i], ck_cli_tmp("in.txt"),
                 ck_cli_tmp("q.st"));
        CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
        size_t rows = 0;
        float *x = ck_cli_features_of(ck_cli_tmp("q.st"), &rows, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(x);
        if (ref == NULL) {
            ref = x;
            ref_rows = rows;
            continue;
        }
        CU_ASSERT_EQUAL(rows, ref_rows);
        CU_ASSERT_EQUAL(memcmp(x, ref, rows * 512 * sizeof(float)), 0);
        free(x);
    }
    for (int t = 1; t <= 2; t++) {
        char args[1024];
        snprintf(args, sizeof args, "--precision int8 -t %d -i %s -o %s", t, ck_cli_tmp("one.txt"),
                 ck_cli_tmp("one.st"));
        CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
        size_t rows = 0;
        float *alone = ck_cli_features_of(ck_cli_tmp("one.st"), &rows, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
        CU_ASSERT_EQUAL(rows, 36); /* 34 symbols + 2 boundaries */
        CU_ASSERT_EQUAL(memcmp(alone, ref, rows * 512 * sizeof(float)), 0);
        free(alone);
    }
    free(ref);
}

/* int8 is int8: per-token cosine and relative RMSE against fp32 within the promise but not equal;
 * the metadata records the request, the per-class dtypes and the kernels. */
static void test_int8_accuracy_and_metadata(void)
{
    if (!has_int8_dot()) {
        CU_PASS("no int8 dot product on this CPU");
        return;
    }
    ck_cli_write_precision_lines(ck_cli_tmp("in.txt"), 1);
    char args[1024];
    snprintf(args, sizeof args, "--precision int8 -i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("q.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("f.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
    size_t rq = 0, rf = 0;
    char *precision = NULL, *dispatch = NULL;
    float *q = ck_cli_features_of(ck_cli_tmp("q.st"), &rq, &precision, &dispatch);
    float *f = ck_cli_features_of(ck_cli_tmp("f.st"), &rf, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(rq, rf);
    double cos_min = 1.0, diff = 0, ff = 0;
    for (size_t r = 0; r < rq; r++) {
        double dot = 0, qq = 0, fr = 0;
        for (size_t c = 0; c < 512; c++) {
            double a = q[r * 512 + c], b = f[r * 512 + c];
            dot += a * b;
            qq += a * a;
            fr += b * b;
            diff += (a - b) * (a - b);
        }
        ff += fr;
        double cs = dot / sqrt(qq * fr);
        cos_min = cs < cos_min ? cs : cos_min;
    }
    double rel = sqrt(diff / ff);
    fprintf(stderr, "    int8 vs fp32 (%zu tokens): per-token cosine min %.7f, relative RMSE %.3f%%\n",
            rq, cos_min, 100 * rel);
    CU_ASSERT(cos_min >= 0.9995);
    CU_ASSERT(rel <= 0.015);
    CU_ASSERT(rel > 1e-3); /* quantized, not fp32 */
    CU_ASSERT_PTR_NOT_NULL_FATAL(precision);
    CU_ASSERT_STRING_EQUAL(precision, "int8");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dispatch);
    /* the projection (the first linear) runs f32, q then int8; the attention dense bf16 where the
     * CPU has it natively, else f32 */
    const char *want = ck_cli_cpu_has("avx512_bf16") || ck_cli_cpu_has("amx_bf16") ? "linear=f32+i8+bf16 "
                                                                                 : "linear=f32+i8 ";
    CU_ASSERT_EQUAL(strncmp(dispatch, want, strlen(want)), 0);
    CU_ASSERT(strstr(dispatch, "vnni") != NULL || strstr(dispatch, "amx") != NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(dispatch, "; int8 u8 rows x s8 channels, s32, dot "));
    free(q);
    free(f);
    free(precision);
    free(dispatch);
}

/* oneDNN capped below VNNI (AVX512_CORE: VPMADDUBSW only): int8 refuses at load, naming what
 * oneDNN chose, and writes nothing. */
static void test_int8_refuses_without_vnni(void)
{
    ck_cli_write_precision_lines(ck_cli_tmp("in.txt"), 1);
    char args[1024];
    snprintf(args, sizeof args, "--precision int8 -i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("r.st"));
    CU_ASSERT_EQUAL(ck_cli_run_with("ONEDNN_MAX_CPU_ISA=AVX512_CORE", args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with(has_int8_dot()
                                                 ? "ckbatch: error: precision int8: oneDNN has no VNNI or AMX int8 matmul here"
                                                 : "ckbatch: error: precision int8: this CPU has no int8 dot product"),
                    1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial")));
}

static void test_int8_usage_errors(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--precision int8 --parity -i %s -o %s", ck_cli_tmp("in.txt"),
             ck_cli_tmp("u.st"));
    CU_ASSERT_EQUAL(ck_cli_run_with("", args), 2);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("ckbatch: --precision int8 and --parity cannot be "
                                             "combined: parity runs fp32"), 1);
    snprintf(args, sizeof args, "compile --precision int8 -o %s", ck_cli_tmp("lib"));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", ck_cli_binary(), args, ck_cli_tmp("stderr"));
    int st = system(cmd);
    CU_ASSERT_EQUAL(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("--precision int8: generated libraries are fp32 and bf16 "
                                             "only; run int8 through the interpreter"), 1);
}

/* X-Ray in int8: every pinned case against the FP32 capture, under the published int8 budget. */
static void test_xray_int8_within_budget(void)
{
    if (!has_int8_dot()) {
        CU_PASS("no int8 dot product on this CPU");
        return;
    }
    const char *src = getenv("CK_SOURCE_DIR") ? getenv("CK_SOURCE_DIR") : ".";
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --precision int8 --xray-oracle %s/tests/fixtures/kokoro_capture.safetensors "
             "--report %s 2>%s", ck_cli_binary(), src, ck_cli_tmp("x.json"), ck_cli_tmp("stderr"));
    int st = system(cmd);
    CU_ASSERT_EQUAL(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("xray: pass: 992 pass, 0 fail, 0 NOT_TESTED"), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("X-Ray int8: 1 thread, unfused kernels, int8 linears"), 1);
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"int8 features do not depend on threads or batches", test_int8_invariance},
        {"int8 is within its promise and the metadata says what ran", test_int8_accuracy_and_metadata},
        {"int8 refuses without VNNI", test_int8_refuses_without_vnni},
        {"int8 usage errors", test_int8_usage_errors},
        {"X-Ray int8 within its budget", test_xray_int8_within_budget},
    };
    return ck_cli_main("cli_int8", cases, sizeof cases / sizeof cases[0]);
}
