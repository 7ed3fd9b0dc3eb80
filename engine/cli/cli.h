/* cli.h - what the pieces of the ckbatch command line share. Not part of any library. */
#ifndef CK_CLI_H
#define CK_CLI_H

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

#endif
