/* compile_main.c - the `ckbatch compile` subcommand: parses its options, calls ck_compile through
 * ckbatch.h only, prints where the library is and whether the cache answered. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckbatch.h"
#include "cli.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char USAGE[] =
    "usage: ckbatch compile [--circuit C.json] [--precision fp32|bf16] [--parity]\n"
    "                       [--max-batch-tokens N] [--cc CC] [--cflag FLAG] [-q] -o DIR\n"
    "Lowers the circuit (default: the embedded Kokoro phoneme encoder), writes DIR/NAME.c and\n"
    "builds DIR/NAME.so (cc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -fPIC -shared) with its\n"
    "manifest DIR/NAME.so.json; run it with `ckbatch --compiled DIR/NAME.so` and the same\n"
    "--precision, --parity and --max-batch-tokens. Cached: the same key builds nothing.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ckbatch compile: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", USAGE);
    return EXIT_USAGE;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int parse_option(int ch, const char *arg, ck_compile_params *p, int *quiet)
{
    char *end = NULL;
    switch (ch) {
    case 'c': p->circuit = arg; return 0;
    case 'o': p->out_dir = arg; return 0;
    case 'p':
        if (strcmp(arg, "int8") == 0) {
            return usage_error("%s", "--precision int8: generated libraries are fp32 and bf16 only; "
                               "run int8 through the interpreter (docs/precision.md)");
        }
        if (strcmp(arg, "fp32") != 0 && strcmp(arg, "bf16") != 0) {
            return usage_error("--precision %s: expected fp32 or bf16", arg);
        }
        p->precision = strcmp(arg, "bf16") == 0 ? CK_PRECISION_BF16 : CK_PRECISION_FP32;
        return 0;
    case 'P': p->parity = 1; return 0;
    case 'm':
        errno = 0;
        p->max_batch_tokens = (size_t)strtoull(arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || p->max_batch_tokens == 0) {
            return usage_error("--max-batch-tokens %s: expected a positive integer", arg);
        }
        return 0;
    case 'C': p->cc = arg; return 0;
    case 'F': p->extra_flags = arg; return 0;
    case 'q': *quiet = 1; return 0;
    default: return usage_error("unknown option or missing value near '%s'", arg ? arg : "");
    }
}

int ck_compile_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"circuit", required_argument, NULL, 'c'}, {"precision", required_argument, NULL, 'p'},
        {"parity", no_argument, NULL, 'P'}, {"max-batch-tokens", required_argument, NULL, 'm'},
        {"cc", required_argument, NULL, 'C'}, {"cflag", required_argument, NULL, 'F'},
        {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0}};
    if (ck_cli_wants_help(argc, argv)) {
        fputs(USAGE, stdout);
        return EXIT_SUCCESS;
    }
    ck_compile_params p = ck_compile_default_params();
    int ch, quiet = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":o:q", opts, NULL)) != -1) {
        int rc = parse_option(ch == ':' || ch == '?' ? 0 : ch, argv[optind - 1], &p, &quiet);
        if (rc != 0) {
            return rc;
        }
    }
    if (optind < argc || p.out_dir == NULL) {
        return usage_error("%s", optind < argc ? argv[optind] : "-o DIR is required");
    }
    if (p.parity && p.precision != CK_PRECISION_FP32) {
        return usage_error("%s", "--precision bf16 and --parity cannot be combined");
    }
    ck_compile_result r;
    ck_error err = {0};
    double t0 = now_seconds();
    if (ck_compile(&p, &r, &err) != CK_OK) {
        fprintf(stderr, "ckbatch compile: error: %s\n", err.message);
        return EXIT_INPUT;
    }
    if (!quiet) {
        fprintf(stderr, "ckbatch compile: %s %s in %.2f s (%s)\nckbatch compile: sha256 %s\n"
                "ckbatch compile: key %s\nckbatch compile: kit %s\n",
                r.cache_hit ? "cached" : "built", r.library, now_seconds() - t0,
                r.cache_hit ? "cache hit: no compiler ran" : r.source, r.sha256, r.key, r.kit);
    }
    return EXIT_SUCCESS;
}
