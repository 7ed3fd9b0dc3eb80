/* cli.h - what the pieces of the ckbatch command line share. Not part of any library. */
#ifndef CK_CLI_H
#define CK_CLI_H

#include "ckbatch.h"

/* Everything the command line sets: the model, the corpus run, the X-Ray run, and how to talk. */
typedef struct {
    ck_model_params model;
    ck_corpus_params corpus;
    ck_xray_params xray;
    int quiet;     /* -q: errors only */
    int progress;  /* 0 none, 1 the terminal default, 2 asked for (-q does not silence it) */
    int speed_given; /* --speed was on the command line (it belongs to --layer prosody) */
} ck_cli_options;

/* Parses the corpus and X-Ray options of argv (options.c) into o, starting from the library's
 * defaults, and checks their combinations. Returns 0, 2 (usage error, printed) or -1 (--help or
 * --version printed: exit 0). The log and progress callbacks are left for the caller to set. */
int ck_cli_parse(int argc, char **argv, ck_cli_options *o);

/* Path mistakes that would surface only after the whole corpus is encoded, or after the weights
 * are made: 0, 1 (the input cannot be read) or 2 (a usage mistake); printed. */
int ck_cli_check_paths(const ck_corpus_params *o);

/* 1 when argv[1..argc) holds -h or --help before any "--": a subcommand then prints its usage on
 * stdout and exits 0 (and takes no other argument, so `make-demo-weights --help` writes no file). */
int ck_cli_wants_help(int argc, char **argv);

/* "ckbatch: " + fmt (one %s: arg) and the --help hint on stderr; returns 2. */
int ck_cli_usage_error(const char *fmt, const char *arg);

/* A decimal in [min, max] into *out: 0, or -1 when s is not one. */
int ck_cli_parse_size(const char *s, unsigned long long min, unsigned long long max,
                      unsigned long long *out);

/* --shard I/N (speak's too): 0 <= I < N <= CK_SHARDS_MAX into *index, *count; 0, or 2 (usage
 * error, printed). */
int ck_cli_parse_shard(const char *arg, size_t *index, size_t *count);

/* The summary line(s) of a corpus run on stderr. */
void ck_cli_print_summary(const ck_corpus_summary *s);

/* The `ckbatch xray` subcommand: argv[0] = "xray", then --candidate A --oracle B [--profile P]
 * [--report R] [--manifest M] [--quiet]. Returns the exit code: 0 pass, 1 fail or error, 2 usage. */
int ck_xray_main(int argc, char **argv);

/* The `ckbatch merge` subcommand: argv[0] = "merge", then -o FILE [-q] [SHARD...] (no SHARD: every
 * FILE.shard-*-of-* file). Returns the exit code: 0 merged, 1 refused or failed, 2 usage. */
int ck_merge_main(int argc, char **argv);

/* The `ckbatch compile` subcommand: argv[0] = "compile", then [--circuit C] [--precision P]
 * [--parity] [--max-batch-tokens N] [--cc CC] [--cflag F] [-q] -o DIR. Returns the exit code: 0
 * built or cached, 1 refused or failed, 2 usage. */
int ck_compile_main(int argc, char **argv);

/* The `ckbatch speak` subcommand (speak_main.c): argv[0] = "speak", then the options of its --help.
 * Returns the exit code: 0 written, 1 error, 2 usage, 128 + N stopped by signal N. */
int ck_speak_main(int argc, char **argv);

/* speak's options (speak_main.c, for ckbatch-mpi speak too): argv[0] = "speak", then the options
 * of its --help into *mp and *sp from their defaults, with the speech circuit. Returns 0, 2 (usage
 * error, printed) or -1 (--help printed: exit 0). The callbacks are left for the caller. */
int ck_speak_parse(int argc, char **argv, ck_model_params *mp, ck_speak_params *sp, int *quiet);

#endif
