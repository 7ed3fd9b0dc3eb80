/* cli_precision.h - what the --precision suites (bf16, int8) share: the mixed-length phoneme lines
 * they encode, running the binary with an environment prefix, the CPU's flags, and the features
 * tensor with its precision and dispatch metadata. Tests only; include after cli_test.h. */
#ifndef CK_CLI_PRECISION_H
#define CK_CLI_PRECISION_H

#include "cli_test.h"

/* Lines of different lengths (1 to 70 symbols), so batches mix short and long rows; with the long
 * line of ck_cli_write_precision_lines (370 symbols) they span 3 to 372 tokens. */
static const char *const CK_PRECISION_LINES[] = {
    "ði sˈʌn ɪz wˈɔɹm, ði skˈI ɪz blˈu.",
    "hˈɛlO",
    "ɐ",
    "wˈʌn tˈu θɹˈi fˈɔɹ fˈIv sˈɪks sˈɛvən ˈAt nˈIn tˈɛn",
    "ðɪs ɪz ɐ lˈɔŋɡəɹ sˈɛntəns, wˌɪʧ hˈæz mˈɔɹ tˈOkənz ɪn ɪt ðæn ðə ˈʌðəɹz.",
};

/* Writes CK_PRECISION_LINES to `path`, one a line, and with long_line != 0 a last line of 10 x 37
 * symbols. */
static inline void ck_cli_write_precision_lines(const char *path, int long_line)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t i = 0; i < sizeof CK_PRECISION_LINES / sizeof CK_PRECISION_LINES[0]; i++) {
        fprintf(f, "%s\n", CK_PRECISION_LINES[i]);
    }
    if (long_line) {
        for (int r = 0; r < 10; r++) {
            fputs("ði sˈʌn ɪz wˈɔɹm, ði skˈI ɪz blˈu. ", f); /* 10 x 37 symbols, one line */
        }
        fputs("\n", f);
    }
    fclose(f);
}

/* Runs `PREFIX ckbatch -q --no-progress ARGS` (prefix: environment assignments or ""), stderr into
 * ck_cli_work/stderr; the exit status, -1 when it did not exit. */
static inline int ck_cli_run_with(const char *prefix, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s -q --no-progress %s 2>%s", prefix, ck_cli_binary(), args,
             ck_cli_tmp("stderr"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The CPU flags /proc/cpuinfo lists include `flag` as a whole word (1) or not (0). */
static inline int ck_cli_cpu_has(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int found = 0;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "flags", 5) == 0) {
            char *at = line;
            size_t n = strlen(flag);
            while (!found && (at = strstr(at, flag)) != NULL) {
                found = (at[-1] == ' ' || at[-1] == '\t') && (at[n] == ' ' || at[n] == '\n');
                at += n;
            }
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return found;
}

/* The features tensor of `path` as a malloc'd copy ([rows, 512] f32), *rows set; NULL if absent.
 * precision and dispatch (either may be NULL) get strdup'd copies of those metadata values. */
static inline float *ck_cli_features_of(const char *path, size_t *rows, char **precision,
                                        char **dispatch)
{
    ck_features_file *f = NULL;
    ck_error err = {0};
    if (ck_features_open(&f, path, &err) != CK_OK) {
        return NULL;
    }
    const ck_tensor_view *t = ck_features_tensor(f, "features");
    float *copy = t != NULL ? malloc(t->bytes) : NULL;
    if (copy != NULL) {
        memcpy(copy, t->data, t->bytes);
        *rows = t->shape[0];
    }
    if (precision != NULL) {
        const char *p = ck_features_metadata(f, "precision");
        *precision = p != NULL ? strdup(p) : NULL;
    }
    if (dispatch != NULL) {
        const char *d = ck_features_metadata(f, "dispatch");
        *dispatch = d != NULL ? strdup(d) : NULL;
    }
    ck_features_close(f);
    return copy;
}

#endif
