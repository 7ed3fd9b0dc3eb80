/* test_cli_invariance.c - the features a corpus gets through the ckbatch binary are the same bytes
 * whatever --threads and --max-batch-tokens say (default circuit, synthetic weights): batches are
 * composed differently, rows and attention pairs land on other workers, linears see other tiles. */
#include <stdint.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

/* 24 lines of Kokoro ids (defined ids 50..63 and 16, lengths 1..300): enough to fill several
 * 512-token batches and to put long and short sequences together. */
static void write_corpus(const char *path)
{
    uint32_t x = 2026;
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int line = 0; line < 24; line++) {
        x = x * 1664525u + 1013904223u;
        int n = line == 7 ? 300 : 1 + (int)((x >> 16) % 70);
        for (int k = 0; k < n; k++) {
            x = x * 1664525u + 1013904223u;
            int id = (x >> 16) % 15;
            fprintf(f, "%s%d", k ? ", " : "[", id == 14 ? 16 : 50 + id);
        }
        fputs("]\n", f);
    }
    fclose(f);
}

/* Runs ckbatch on the corpus with `options` into `out`; returns the exit code. */
static int run(const char *options, const char *out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s -q --no-progress -f ids %s -i %s -o %s 2>>%s", ck_cli_binary(), options,
             ck_cli_tmp("ids.txt"), out, ck_cli_tmp("stderr"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The features tensor of `path` (malloc'd copy) and its byte count; NULL if unreadable. */
static unsigned char *features_of(const char *path, size_t *bytes)
{
    ck_features_file *f = NULL;
    ck_error err = {0};
    unsigned char *copy = NULL;
    if (ck_features_open(&f, path, &err) != CK_OK) {
        return NULL;
    }
    const ck_tensor_view *t = ck_features_tensor(f, "features");
    if (t != NULL && strcmp(t->dtype, "F32") == 0 && (copy = malloc(t->bytes)) != NULL) {
        memcpy(copy, t->data, t->bytes);
        *bytes = t->bytes;
    }
    ck_features_close(f);
    return copy;
}

static void test_features_do_not_depend_on_threads_or_batches(void)
{
    static const char *configs[] = {"-t 2 --max-batch-tokens 512", "-t 3 --max-batch-tokens 100000",
                                    "-t 4 --max-batch-tokens 777"};
    size_t ref_bytes = 0;
    write_corpus(ck_cli_tmp("ids.txt"));
    CU_ASSERT_EQUAL_FATAL(run("-t 1", ck_cli_tmp("t1.st")), 0);
    unsigned char *ref = features_of(ck_cli_tmp("t1.st"), &ref_bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    CU_ASSERT(ref_bytes > (size_t)1000 * 512 * 4);
    for (int k = 0; k < 3; k++) {
        size_t bytes = 0;
        CU_ASSERT_EQUAL_FATAL(run(configs[k], ck_cli_tmp("other.st")), 0);
        unsigned char *other = features_of(ck_cli_tmp("other.st"), &bytes);
        CU_ASSERT_PTR_NOT_NULL_FATAL(other);
        CU_ASSERT_EQUAL(bytes, ref_bytes);
        int same = bytes == ref_bytes && memcmp(other, ref, bytes) == 0;
        fprintf(stderr, "\n    %s vs -t 1: features %s", configs[k], same ? "identical" : "DIFFER");
        CU_ASSERT_TRUE(same);
        free(other);
    }
    fprintf(stderr, "\n");
    free(ref);
}


int main(void)
{
    static const ck_test_case cases[] = {
        {"features do not depend on threads or batches", test_features_do_not_depend_on_threads_or_batches},
    };
    return ck_cli_main("cli_invariance", cases, sizeof cases / sizeof cases[0]);
}
