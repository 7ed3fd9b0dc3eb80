/* xray_main.c - the `ckbatch xray` subcommand: compares a candidate capture file with an oracle
 * capture and writes the report (ck_xray_compare_captures). Parses its own options; runs no model. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ckbatch.h"
#include "cli.h"

typedef struct {
    const char *candidate, *oracle, *profile, *report, *manifest;
    int quiet;
} xray_args;

static int parse_args(int argc, char **argv, xray_args *a)
{
    static const struct option opts[] = {
        {"candidate", required_argument, NULL, 'c'}, {"oracle", required_argument, NULL, 'o'},
        {"profile", required_argument, NULL, 'p'},   {"report", required_argument, NULL, 'r'},
        {"manifest", required_argument, NULL, 'm'},  {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    const char **dst[] = {&a->candidate, &a->oracle, &a->profile, &a->report, &a->manifest};
    static const char letters[] = "coprm";
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        const char *slot = ch > 0 ? strchr(letters, ch) : NULL;
        if (ch == 'q') {
            a->quiet = 1;
        } else if (slot != NULL) {
            *dst[slot - letters] = optarg;
        } else {
            return -1;
        }
    }
    return optind == argc && a->candidate != NULL && a->oracle != NULL ? 0 : -1;
}

/* The comparison table and notes on stderr, unless --quiet. */
static void log_stderr(void *ctx, ck_log_level level, const char *message)
{
    const xray_args *a = ctx;
    if (level == CK_LOG_REPORT) {
        if (!a->quiet) {
            fputs(message, stderr);
        }
    } else {
        fprintf(stderr, "ckbatch: %s\n", message);
    }
}

int ck_xray_main(int argc, char **argv)
{
    static const char usage[] =
        "usage: ckbatch xray --candidate A.safetensors --oracle B.safetensors [--profile P.json]\n"
        "                    [--report R.json] [--manifest M.json] [--quiet]\n";
    xray_args a = {0};
    if (ck_cli_wants_help(argc, argv)) {
        printf("%sCompares the capture A (`ckbatch --xray-out`) with the pinned capture B checkpoint by\n"
               "checkpoint under the profile's budgets; exit 0 when every compared checkpoint passes.\n",
               usage);
        return 0;
    }
    if (parse_args(argc, argv, &a) != 0) {
        fputs(usage, stderr);
        return 2;
    }
    ck_error err = {0};
    int rc = ck_xray_compare_captures(a.candidate, a.oracle, a.profile, a.report, a.manifest,
                                      log_stderr, &a, &err);
    if (rc != CK_OK && rc != CK_E_PARITY) { /* a failed comparison is in the table */
        fprintf(stderr, "ckbatch: error: %s\n", err.message);
    }
    return rc == CK_OK ? 0 : 1;
}
