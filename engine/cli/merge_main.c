/* merge_main.c - the `ckbatch merge` subcommand: finds or takes the shard files, calls
 * ck_merge_shards through ckbatch.h only, prints its lines and picks the exit code. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckbatch.h"
#include "cli.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ckbatch: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'ckbatch --help'.\n");
    return EXIT_USAGE;
}

/* Escapes glob(3)'s special characters in s into buf[cap]. */
static void glob_escape(const char *s, char *buf, size_t cap)
{
    size_t k = 0;
    for (; *s != '\0' && k + 3 < cap; s++) {
        if (strchr("*?[\\", *s) != NULL) {
            buf[k++] = '\\';
        }
        buf[k++] = *s;
    }
    buf[k] = '\0';
}

/* Prints a merge's INFO lines unless -q. */
static void merge_log(void *ctx, ck_log_level level, const char *message)
{
    (void)level;
    if (!*(const int *)ctx) {
        fprintf(stderr, "ckbatch: %s\n", message);
    }
}

/* 1 when OUT names speak output: a .wav, or an existing directory (speak's directory output). */
static int speak_output(const char *out)
{
    size_t n = strlen(out);
    struct stat st;
    return (n >= 4 && strcmp(out + n - 4, ".wav") == 0)
           || (stat(out, &st) == 0 && S_ISDIR(st.st_mode));
}

/* ck_merge_speak_shards on the files given (or found), with its summary line. */
static int merge_speech(const char *out, const char *const *paths, size_t n, int quiet)
{
    ck_error err = {0};
    ck_speak_merge_summary sum;
    if (ck_merge_speak_shards(out, paths, n, merge_log, &quiet, &sum, &err) != CK_OK) {
        fprintf(stderr, "ckbatch: error: %s\n", err.message);
        return EXIT_INPUT;
    }
    if (!quiet) {
        fprintf(stderr, "ckbatch: merged %zu speak shards into %s: %zu lines, %llu samples, %llu "
                "bytes, %.2f s\n", sum.shards, out, sum.lines, sum.samples, sum.bytes, sum.seconds);
    }
    return EXIT_SUCCESS;
}

/* `merge -o OUT [-q] [SHARD...]`: the shards given, or every OUT.shard-*-of-* file (speak's
 * directory OUT: every OUT/timestamps.jsonl.shard-*-of-* file). */
int ck_merge_main(int argc, char **argv)
{
    if (ck_cli_wants_help(argc, argv)) {
        printf("usage: ckbatch merge -o FILE [-q] [SHARD...]\n"
               "Merges the shard files of `ckbatch --shard I/N ... -o FILE` (default: every\n"
               "FILE.shard-*-of-* file) into FILE, the file one unsharded run writes; refused unless\n"
               "they are exactly shards 0..N-1 of one split of one input, run with the same weights\n"
               "and options.\n"
               "FILE ending in .wav: joins `ckbatch speak --shard I/N ... -o FILE.wav` (the\n"
               "shards' WAVs and .jsonl sidecars) into FILE.wav and FILE.wav.jsonl; FILE a\n"
               "directory: joins its timestamps.jsonl.shard-*-of-* into FILE/timestamps.jsonl\n"
               "(its WAVs are final already). Either way the single run's bytes.\n");
        return EXIT_SUCCESS;
    }
    const char *out = NULL;
    int quiet = 0, first = argc;
    for (int i = 1; i < argc && first == argc; i++) {
        if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (argv[i][0] == '-') {
            return usage_error("merge: unknown option '%s'", argv[i]);
        } else {
            first = i;
        }
    }
    if (out == NULL || out[0] == '\0') {
        return usage_error("%s", "merge takes -o FILE [SHARD...] (default: every "
                           "FILE.shard-*-of-* file)");
    }
    glob_t g = {0};
    char pattern[4200], escaped[4096];
    int speech = speak_output(out), dir = speech && strcmp(out + strlen(out) - 4, ".wav") != 0;
    if (first == argc) {
        glob_escape(out, escaped, sizeof escaped);
        snprintf(pattern, sizeof pattern, "%s%s.shard-[0-9][0-9][0-9][0-9][0-9]*-of-"
                 "[0-9][0-9][0-9][0-9][0-9]", escaped, dir ? "/timestamps.jsonl" : "");
        if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
            globfree(&g);
            fprintf(stderr, "ckbatch: error: merge: no shard files %s%s.shard-*-of-* (run "
                    "`ckbatch %s--shard I/N ... -o %s` first)\n", out,
                    dir ? "/timestamps.jsonl" : "", speech ? "speak " : "", out);
            return EXIT_INPUT;
        }
    }
    if (speech) {
        int code = first == argc
                       ? merge_speech(out, (const char *const *)g.gl_pathv, g.gl_pathc, quiet)
                       : merge_speech(out, (const char *const *)argv + first,
                                      (size_t)(argc - first), quiet);
        globfree(&g);
        return code;
    }
    ck_error err = {0};
    ck_merge_summary sum;
    int rc = first == argc
                 ? ck_merge_shards(out, (const char *const *)g.gl_pathv, g.gl_pathc, merge_log,
                                   &quiet, &sum, &err)
                 : ck_merge_shards(out, (const char *const *)argv + first, (size_t)(argc - first),
                                   merge_log, &quiet, &sum, &err);
    globfree(&g);
    if (rc != CK_OK) {
        fprintf(stderr, "ckbatch: error: %s\n", err.message);
        return EXIT_INPUT;
    }
    if (!quiet) {
        fprintf(stderr, "ckbatch: merged %zu shards into %s: %zu sequences, %zu tokens, %zu skipped, "
                "%llu bytes, %.2f s\n", sum.shards, out, sum.sequences, sum.tokens,
                sum.skipped_lines, sum.bytes, sum.seconds);
    }
    return EXIT_SUCCESS;
}

