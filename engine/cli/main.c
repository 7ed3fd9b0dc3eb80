/* main.c - the ckbatch command line: parses options, calls the library through ckbatch.h only,
 * prints what it reports (log lines, the progress line, errors) and picks the exit code (0 success,
 * 1 input or runtime error, 2 usage error). Computes nothing itself. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckbatch.h"
#include "cli.h"

enum { EXIT_INPUT = 1, EXIT_STATE = 3 };

static int make_demo_weights(int argc, char **argv)
{
    unsigned long long seed = ck_model_default_params().seed;
    if (ck_cli_wants_help(argc, argv)) {
        printf("usage: ckbatch make-demo-weights OUT.safetensors [--seed N]\n"
               "Writes a whole synthetic Kokoro-82M (NOT Kokoro's weights: splitmix64-uniform-v1, seed\n"
               "N, default %llu): all five groups in Kokoro's safetensors names, 548 tensors, about\n"
               "327 MB, for --weights; the same seed gives the same bytes.\n", seed);
        return EXIT_SUCCESS;
    }
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--seed") == 0)) {
        return ck_cli_usage_error("%s", "make-demo-weights takes OUT.safetensors [--seed N]");
    }
    if (argv[1][0] == '-') { /* an option where the file name goes: write no file named after it */
        return ck_cli_usage_error("make-demo-weights: '%s' is an option, not OUT.safetensors (a "
                                  "file whose name starts with '-' is given as ./NAME)", argv[1]);
    }
    if (argc == 4 && ck_cli_parse_size(argv[3], 0, UINT64_MAX, &seed) != 0) {
        return ck_cli_usage_error("--seed %s: expected an unsigned 64-bit integer", argv[3]);
    }
    ck_error err = {0};
    char *identity = NULL;
    if (ck_demo_weights_write(argv[1], seed, &identity, &err) != CK_OK) {
        fprintf(stderr, "ckbatch: error: %s\n", err.message);
        return EXIT_INPUT;
    }
    fprintf(stderr, "ckbatch: wrote %s: %s\n", argv[1], identity);
    ck_free(identity);
    return EXIT_SUCCESS;
}

/* `weights inspect F` (tensors as stored) or `weights hash F` (manifest on stdout). */
static int weights_command(int argc, char **argv)
{
    if (ck_cli_wants_help(argc, argv)) {
        printf("usage: ckbatch weights inspect F | ckbatch weights hash F > MANIFEST.json\n"
               "inspect: the tensors of the weights file F (.pth or .safetensors) as stored: name,\n"
               "dtype, shape. hash: the manifest (SHA-256 of every tensor) that --weights-manifest\n"
               "checks a later run's weights against.\n");
        return EXIT_SUCCESS;
    }
    if (argc != 3 || (strcmp(argv[1], "inspect") != 0 && strcmp(argv[1], "hash") != 0)) {
        return ck_cli_usage_error("%s", "weights takes inspect F or hash F");
    }
    ck_error err = {0};
    char *text = NULL;
    int rc = strcmp(argv[1], "inspect") == 0 ? ck_weights_describe(argv[2], &text, &err)
                                             : ck_weights_manifest(argv[2], &text, &err);
    if (rc == CK_OK && (fputs(text, stdout) == EOF || fflush(stdout) != 0)) {
        rc = CK_E_IO;
        snprintf(err.message, sizeof err.message, "weights %s %s: cannot write to stdout", argv[1],
                 argv[2]);
    }
    ck_free(text);
    if (rc != CK_OK) {
        fprintf(stderr, "ckbatch: error: %s\n", err.message);
        return EXIT_INPUT;
    }
    return EXIT_SUCCESS;
}

/* The library's log: "ckbatch: " + message, unless -q; reports (the X-Ray table) as they are. */
static void log_stderr(void *ctx, ck_log_level level, const char *message)
{
    const ck_cli_options *o = ctx;
    if (o->quiet) {
        return;
    }
    if (level == CK_LOG_REPORT) {
        fputs(message, stderr);
    } else {
        fprintf(stderr, "ckbatch: %s\n", message);
    }
}

/* The progress line, "\r"-rewritten: share of the input done and the ETA (or the bytes read from a
 * stream), line, tokens, tokens/s; the final call ends the line. */
static void progress_stderr(void *ctx, const ck_progress *p)
{
    (void)ctx;
    fprintf(stderr, "\rckbatch: ");
    if (p->input_bytes > 0) {
        fprintf(stderr, "%5.1f%% of input", 100.0 * (double)p->bytes_done / (double)p->input_bytes);
        if (!p->final && p->eta_seconds >= 0) {
            fprintf(stderr, ", ETA %.0f s", p->eta_seconds);
        }
    } else {
        fprintf(stderr, "%llu bytes read", p->bytes_read);
    }
    fprintf(stderr, ", line %zu, %zu tokens, %.0f tokens/s%s", p->lines, p->tokens,
            p->tokens_per_second, p->final ? "\n" : "   ");
    fflush(stderr);
}

/* `--xray-oracle B`: the parity run of B's cases instead of a corpus. */
static int run_xray(ck_cli_options *o)
{
    if (!o->model.parity && !o->quiet) {
        fprintf(stderr, "ckbatch: --xray-oracle implies --parity: forcing 1 thread\n");
    }
    o->xray.circuit = o->model.circuit;
    o->xray.weights = o->model.weights;
    o->xray.seed = o->model.seed;
    o->xray.precision = o->model.precision;
    o->xray.compiled = o->model.compiled;
    o->xray.log = log_stderr;
    o->xray.log_ctx = o;
    ck_error err = {0};
    int rc = ck_xray_run(&o->xray, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "ckbatch: %s: %s\n", rc == CK_E_PARITY ? "parity" : "error", err.message);
    }
    return rc == CK_OK ? EXIT_SUCCESS : EXIT_INPUT;
}

/* The process's allocator policy, the program's to set (the library changes no process-wide
 * state): with glibc every block of 256 KiB or more gets its own mapping, returned to the kernel on
 * free, so a library that mallocs and frees megabyte blocks per call cannot grow the heaps with the
 * corpus (glibc's dynamic threshold would rise to that size). Advice: the run is correct without
 * it; the measurements behind it are in docs/memory.md. */
static void bound_allocator(void)
{
#ifdef __GLIBC__
    (void)mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

/* SIGINT or SIGTERM while a corpus runs: the first asks the library to stop before its next batch
 * (what was committed stays for --resume; a stdin run's partial files are removed), the second
 * ends the process at once, as without a handler. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
    signal(sig, SIG_DFL);
}

static int stop_requested(void *ctx)
{
    (void)ctx;
    return stop_signal != 0;
}

static void catch_stop_signals(ck_cli_options *o)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        struct sigaction old;
        /* a signal the parent set to be ignored (nohup, a background job) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
            sigaction(sigs[i], &sa, NULL);
        }
    }
    o->model.cancel = stop_requested;
    o->model.cancel_ctx = NULL;
}

/* Loads the model, runs the corpus, prints the summary. */
static int run_corpus(ck_cli_options *o)
{
    ck_error err = {0};
    ck_model *model = NULL;
    ck_corpus_summary summary;
    bound_allocator();
    catch_stop_signals(o);
    int rc = ck_model_load(&model, &o->model, &err);
    if (rc == CK_OK) {
        rc = ck_run_corpus(model, &o->corpus, &summary, &err);
    }
    ck_model_free(model);
    if (rc == CK_E_CANCELLED && stop_signal != 0) { /* the shell's convention: 128 + the signal */
        fprintf(stderr, "ckbatch: stopped by %s: %s\n", stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
                err.message);
        return 128 + (int)stop_signal;
    }
    if (rc == CK_E_STATE) { /* the library names the field; the flag is the CLI's word */
        fprintf(stderr, "ckbatch: error: %s\nckbatch: --resume continues only the run that wrote "
                "the progress record: run it again without --resume to start over\n", err.message);
        return EXIT_STATE;
    }
    if (rc != CK_OK) {
        fprintf(stderr, "ckbatch: error: %s\n", err.message);
        return EXIT_INPUT;
    }
    if (!o->quiet) {
        ck_cli_print_summary(&summary);
    }
    return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "xray") == 0) {
        return ck_xray_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "make-demo-weights") == 0) {
        return make_demo_weights(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "weights") == 0) {
        return weights_command(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "merge") == 0) {
        return ck_merge_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "speak") == 0) {
        return ck_speak_main(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "compile") == 0) {
        return ck_compile_main(argc - 1, argv + 1);
    }
    static ck_cli_options o;
    int rc = ck_cli_parse(argc, argv, &o);
    if (rc != 0) {
        return rc < 0 ? EXIT_SUCCESS : rc;
    }
    if (o.xray.oracle != NULL) {
        return run_xray(&o);
    }
    rc = ck_cli_check_paths(&o.corpus);
    if (rc != 0) {
        return rc;
    }
    o.model.log = o.corpus.log = log_stderr;
    o.model.log_ctx = o.corpus.log_ctx = &o;
    o.corpus.progress = o.progress ? progress_stderr : NULL;
    return run_corpus(&o);
}
