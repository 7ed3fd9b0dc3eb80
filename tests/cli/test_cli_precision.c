/* test_cli_precision.c - --precision bf16 through the binary: a sequence's features are the same
 * bits alone, in any batch and at any --threads; they are bf16's (close to fp32, not equal); the
 * metadata says what ran; without native bf16 it refuses before writing; fp32 stays strict under
 * ONEDNN_DEFAULT_FPMATH_MODE=BF16 and keeps today's metadata; X-Ray bf16 passes its budget. */
#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_test.h"
#include "cli_precision.h"
#include "ckbatch.h"

static int native_bf16(void)
{
    return ck_cli_cpu_has("amx_bf16") || ck_cli_cpu_has("avx512_bf16");
}

/* bf16: the whole file at 1 and 3 threads and at two batch sizes gives the same bytes; the first
 * line run alone gives the same bits as its rows in the batch. */
static void test_bf16_invariance(void)
{
    if (!native_bf16()) {
        CU_PASS("no native bf16 on this CPU: the refusal test covers it");
        return;
    }
    ck_cli_write_precision_lines(ck_cli_tmp("in.txt"), 1);
    FILE *one = fopen(ck_cli_tmp("one.txt"), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    fprintf(one, "%s\n", CK_PRECISION_LINES[0]);
    fclose(one);
    static const char *const opts[] = {"-t 1 --max-batch-tokens 512", "-t 3 --max-batch-tokens 4096",
                                       "-t 2"};
    float *ref = NULL;
    size_t ref_rows = 0;
    for (size_t i = 0; i < 3; i++) {
        char args[1024];
        snprintf(args, sizeof args, "--precision bf16 %s -i %s -o %s", opts[i], ck_cli_tmp("in.txt"),
                 ck_cli_tmp("b.st"));
        CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
        size_t rows = 0;
        float *x = ck_cli_features_of(ck_cli_tmp("b.st"), &rows, NULL, NULL);
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
    char args[1024];
    snprintf(args, sizeof args, "--precision bf16 -t 2 -i %s -o %s", ck_cli_tmp("one.txt"),
             ck_cli_tmp("one.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
    size_t rows = 0;
    float *alone = ck_cli_features_of(ck_cli_tmp("one.st"), &rows, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
    CU_ASSERT_EQUAL(rows, 36); /* 34 symbols + 2 boundaries */
    CU_ASSERT_EQUAL(memcmp(alone, ref, rows * 512 * sizeof(float)), 0);
    free(alone);
    free(ref);
}

/* bf16 is really bf16: the features are within the published budget of fp32 (cosine >= 0.9999,
 * relative RMSE <= 1%) but not equal to them, and the metadata records the request and what ran. */
static void test_bf16_is_bf16_and_says_so(void)
{
    if (!native_bf16()) {
        CU_PASS("no native bf16 on this CPU");
        return;
    }
    ck_cli_write_precision_lines(ck_cli_tmp("in.txt"), 0);
    char args[1024];
    snprintf(args, sizeof args, "--precision bf16 -i %s -o %s", ck_cli_tmp("in.txt"),
             ck_cli_tmp("b.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("f.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
    size_t rb = 0, rf = 0;
    char *precision = NULL, *dispatch = NULL, *fp_precision = NULL, *fp_dispatch = NULL;
    float *b = ck_cli_features_of(ck_cli_tmp("b.st"), &rb, &precision, &dispatch);
    float *f = ck_cli_features_of(ck_cli_tmp("f.st"), &rf, &fp_precision, &fp_dispatch);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(rb, rf);
    double dot = 0, bb = 0, ff = 0, diff = 0;
    for (size_t i = 0; i < rb * 512; i++) {
        dot += (double)b[i] * f[i];
        bb += (double)b[i] * b[i];
        ff += (double)f[i] * f[i];
        diff += ((double)b[i] - f[i]) * ((double)b[i] - f[i]);
    }
    double cosine = dot / sqrt(bb * ff), rel_rmse = sqrt(diff / ff);
    CU_ASSERT(cosine >= 0.9999);
    CU_ASSERT(rel_rmse <= 0.01);
    CU_ASSERT(rel_rmse > 1e-4); /* fp32's error against itself is 0; bf16 rounding is ~0.5% */
    CU_ASSERT_PTR_NOT_NULL_FATAL(precision);
    CU_ASSERT_STRING_EQUAL(precision, "bf16");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dispatch);
    /* the heads run on AMX tiles where the CPU has them (ck_attention_head_f32__amx) */
    const char *want = ck_cli_cpu_has("amx_bf16") ? "linear=bf16 attention=bf16 layer_norm=f32 gelu_new=f32; onednn "
                                           : "linear=bf16 attention=f32 layer_norm=f32 gelu_new=f32; onednn ";
    CU_ASSERT_EQUAL(strncmp(dispatch, want, strlen(want)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(dispatch, ck_cli_cpu_has("amx_bf16") ? "amx_bf16" : "avx512_core_bf16"));
    /* CK_MAX_CPU_ISA=avx512 turns AMX off in the native kernels: the heads run in f32, the
     * linears stay bf16, the file says so, and the features stay inside the budget */
    snprintf(args, sizeof args, "--precision bf16 -i %s -o %s", ck_cli_tmp("in.txt"),
             ck_cli_tmp("b2.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("CK_MAX_CPU_ISA=avx512", args), 0);
    size_t r2 = 0;
    char *dispatch2 = NULL;
    float *b2 = ck_cli_features_of(ck_cli_tmp("b2.st"), &r2, NULL, &dispatch2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dispatch2);
    CU_ASSERT_EQUAL(strncmp(dispatch2, "linear=bf16 attention=f32 ", 26), 0);
    CU_ASSERT_EQUAL_FATAL(r2, rf);
    double dot2 = 0, bb2 = 0, diff2 = 0;
    for (size_t i = 0; i < r2 * 512; i++) {
        dot2 += (double)b2[i] * f[i];
        bb2 += (double)b2[i] * b2[i];
        diff2 += ((double)b2[i] - f[i]) * ((double)b2[i] - f[i]);
    }
    CU_ASSERT(dot2 / sqrt(bb2 * ff) >= 0.9999);
    CU_ASSERT(sqrt(diff2 / ff) <= 0.01);
    fprintf(stderr, "    bf16 vs fp32: cosine %.7f, relative RMSE %.3f%% (heads %s); heads in f32: "
            "cosine %.7f, relative RMSE %.3f%%\n", cosine, 100 * rel_rmse,
            ck_cli_cpu_has("amx_bf16") ? "bf16" : "f32", dot2 / sqrt(bb2 * ff), 100 * sqrt(diff2 / ff));
    free(b2);
    free(dispatch2);
    /* fp32 files keep the metadata they always had: no precision or dispatch key */
    CU_ASSERT_PTR_NULL(fp_precision);
    CU_ASSERT_PTR_NULL(fp_dispatch);
    free(b);
    free(f);
    free(precision);
    free(dispatch);
}

/* oneDNN capped below bf16 (what a CPU without AVX512-BF16/AMX runs): bf16 refuses at load,
 * naming what is missing, and writes nothing; fp32 still runs there. */
static void test_bf16_refuses_without_native(void)
{
    ck_cli_write_precision_lines(ck_cli_tmp("in.txt"), 0);
    char args[1024];
    snprintf(args, sizeof args, "--precision bf16 -i %s -o %s", ck_cli_tmp("in.txt"),
             ck_cli_tmp("r.st"));
    CU_ASSERT_EQUAL(ck_cli_run_with("ONEDNN_MAX_CPU_ISA=AVX512_CORE", args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("ckbatch: error: precision bf16: oneDNN has no native "
                                             "bf16 matmul here (it chose \""), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("lacks AVX512-BF16 and AMX-BF16; use precision fp32"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("r.st.partial")));
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("r.st"));
    CU_ASSERT_EQUAL(ck_cli_run_with("ONEDNN_MAX_CPU_ISA=AVX512_CORE", args), 0);
}

/* fp32 sets fpmath mode strict on every primitive: an inherited ONEDNN_DEFAULT_FPMATH_MODE=BF16
 * changes no bit. */
static void test_fp32_strict_under_fpmath_env(void)
{
    ck_cli_write_precision_lines(ck_cli_tmp("in.txt"), 1);
    char args[1024];
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("s1.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("", args), 0);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("s2.st"));
    CU_ASSERT_EQUAL_FATAL(ck_cli_run_with("ONEDNN_DEFAULT_FPMATH_MODE=BF16", args), 0);
    size_t r1 = 0, r2 = 0;
    float *a = ck_cli_features_of(ck_cli_tmp("s1.st"), &r1, NULL, NULL);
    float *b = ck_cli_features_of(ck_cli_tmp("s2.st"), &r2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL_FATAL(r1, r2);
    CU_ASSERT_EQUAL(memcmp(a, b, r1 * 512 * sizeof(float)), 0);
    free(a);
    free(b);
}

static void test_usage_errors(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--precision bf16 --parity -i %s -o %s", ck_cli_tmp("in.txt"),
             ck_cli_tmp("u.st"));
    CU_ASSERT_EQUAL(ck_cli_run_with("", args), 2);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("ckbatch: --precision bf16 and --parity cannot be "
                                             "combined: parity runs fp32"), 1);
    snprintf(args, sizeof args, "--precision fp16 -i %s -o %s", ck_cli_tmp("in.txt"), ck_cli_tmp("u.st"));
    CU_ASSERT_EQUAL(ck_cli_run_with("", args), 2);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("ckbatch: --precision fp16: expected fp32, bf16 or int8"), 1);
}

/* X-Ray in bf16: every pinned case against the FP32 capture, under the published bf16 budget. */
static void test_xray_bf16_within_budget(void)
{
    if (!native_bf16()) {
        CU_PASS("no native bf16 on this CPU");
        return;
    }
    const char *src = getenv("CK_SOURCE_DIR") ? getenv("CK_SOURCE_DIR") : ".";
    char args[1024];
    snprintf(args, sizeof args, "--precision bf16 --xray-oracle %s/tests/fixtures/kokoro_capture.safetensors "
             "--report %s", src, ck_cli_tmp("x.json"));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", ck_cli_binary(), args, ck_cli_tmp("stderr"));
    int st = system(cmd);
    CU_ASSERT_EQUAL(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("xray: pass: 992 pass, 0 fail, 0 NOT_TESTED"), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("X-Ray bf16: 1 thread, unfused kernels, bf16 linears (and attention heads"), 1);
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"bf16 features do not depend on threads or batches", test_bf16_invariance},
        {"bf16 is bf16 and the metadata says what ran", test_bf16_is_bf16_and_says_so},
        {"bf16 refuses without native bf16", test_bf16_refuses_without_native},
        {"fp32 is strict under ONEDNN_DEFAULT_FPMATH_MODE=BF16", test_fp32_strict_under_fpmath_env},
        {"precision usage errors", test_usage_errors},
        {"X-Ray bf16 within its budget", test_xray_bf16_within_budget},
    };
    return ck_cli_main("cli_precision", cases, sizeof cases / sizeof cases[0]);
}
