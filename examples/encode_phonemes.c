/* encode_phonemes.c - the smallest program that embeds ckbatch: load the model, encode a few Kokoro
 * phoneme strings, print what came out. Uses <ckbatch.h> only (see examples/README.md to build it
 * against an installed ckbatch with pkg-config or CMake).
 *
 *   encode_phonemes [WEIGHTS]   WEIGHTS: a Kokoro .pth or .safetensors; without it, the synthetic
 *                               demo weights (NOT Kokoro's: the numbers only show the plumbing)
 *
 * stdout: one line per sequence (its line, phonemes, tokens and the first 4 features of its first
 * row) and a summary; stderr: the library's log. Exit 0, or 1 with the ck_error message. */
#include <ckbatch.h>

#include <stdio.h>

/* The library never prints: its info and warnings come through this callback. */
static void log_to_stderr(void *ctx, ck_log_level level, const char *message)
{
    (void)ctx;
    if (level == CK_LOG_REPORT) {
        fputs(message, stderr);   /* multi-line, each line ends in '\n' */
    } else {
        fprintf(stderr, "ckbatch %s: %s\n", level == CK_LOG_WARNING ? "warning" : "info", message);
    }
}

int main(int argc, char **argv)
{
    /* Kokoro phoneme strings: one vocabulary symbol per code point (the IPA of Kokoro's G2P, with
     * its stress marks ˈ and its diphthong letters such as O for "oʊ"). */
    static const char *const lines[] = {
        "həlˈO wˈɜɹld",
        "ðɪs ɪz ɐ tˈɛst.",
        "kˈOkəɹO ɪz ɐ tˈɛkst tə spˈiʧ mˈɑdᵊl.",
    };
    const size_t n_lines = sizeof lines / sizeof lines[0];

    ck_error err;
    ck_error_clear(&err);

    /* 1. The model: the embedded Kokoro phoneme-encoder circuit with every default (threads: the
     *    CPUs this process may run on), and the weights from argv[1] or the demo weights. */
    ck_model_params mp = ck_model_default_params();
    if (argc > 1) {
        mp.weights = argv[1];
    }
    mp.log = log_to_stderr;
    ck_model *model = NULL;
    if (ck_model_load(&model, &mp, &err) != CK_OK) {
        fprintf(stderr, "encode_phonemes: %s: %s\n", ck_status_name(err.code), err.message);
        return 1;
    }

    /* 2. Lines -> sequences [0, id..., 0] -> feature rows, in one call. strict_symbols makes a
     *    symbol outside the vocabulary an error (the default drops it with a warning). */
    ck_lines_params lp = ck_lines_default_params();
    lp.strict_symbols = 1;
    lp.log = log_to_stderr;
    ck_sequence_set set = {0};
    if (ck_model_encode_lines(model, lines, n_lines, &lp, CK_LAYER_FEATURES, &set, &err) != CK_OK) {
        fprintf(stderr, "encode_phonemes: %s: %s\n", ck_status_name(err.code), err.message);
        ck_model_free(model);
        return 1;
    }

    /* 3. The rows: sequence s is rows offsets[s] .. offsets[s+1]-1 of set.rows, each set.cols
     *    floats, boundary tokens included. Print the first 4 features of its first row. */
    printf("ckbatch %s, weights %s\n", ck_version(), ck_model_weights_identity(model));
    for (size_t s = 0; s < set.n_sequences; s++) {
        const size_t tokens = set.offsets[s + 1] - set.offsets[s];
        const float *row = set.rows + set.offsets[s] * set.cols;
        printf("sequence %zu: line %zu \"%s\" tokens %zu features[0..3] %.6f %.6f %.6f %.6f\n", s,
               set.line[s], set.phonemes[s], tokens, row[0], row[1], row[2], row[3]);
    }
    printf("%zu lines -> %zu sequences, %zu tokens x %zu features\n", n_lines, set.n_sequences,
           set.n_tokens, set.cols);

    ck_sequence_set_free(&set);
    ck_model_free(model);
    return 0;
}
