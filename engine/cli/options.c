/* options.c - the corpus options of the ckbatch command line, shared by ckbatch and ckbatch-mpi:
 * --help, parsing, the path checks and the summary line. Calls the library through ckbatch.h only;
 * prints usage errors and the summary, never exits. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckbatch.h"
#include "cli.h"

enum { EXIT_USAGE = 2 };

/* The names these functions had inside main.c, kept so its option code reads as it did. */
#define usage_error ck_cli_usage_error
#define parse_size ck_cli_parse_size

/* --help, in pieces: ISO C bounds one string literal at 4095 bytes. */
static const char *const usage_text[] = {
    "usage: ckbatch [options] --input FILE --output FILE\n"
    "       ckbatch --parity --xray-oracle B.safetensors [--report R.json]\n"
    "       ckbatch xray --candidate A --oracle B [--profile P] [--report R]\n"
    "       ckbatch --shard I/N [options] --input FILE --output FILE\n"
    "       ckbatch merge -o FILE [SHARD...]    (FILE.wav or a directory: speak --shard's)\n"
    "       ckbatch compile [--circuit C] [--precision P] [--parity] [--max-batch-tokens N]\n"
    "                       [--cc CC] [--cflag FLAG] [-q] -o DIR\n"
    "       mpirun -np N ckbatch-mpi [options] --input FILE --output FILE   (-DCK_MPI=ON builds)\n"
    "       mpirun -np N ckbatch-mpi speak [speak options] -i INPUT -o OUT\n"
    "       ckbatch make-demo-weights OUT.safetensors [--seed N]\n"
    "       ckbatch weights inspect F | ckbatch weights hash F > MANIFEST.json\n"
    "       ckbatch --help | --version       (every subcommand takes --help too)\n"
    "\n"
    "Encodes a corpus (one item per line) with the Kokoro-82M phoneme encoder and writes per-token\n"
    "features as safetensors: features F32 [tokens, 512], offsets I64 [sequences + 1], and\n"
    "sequences, skipped U8 [bytes] (JSON Lines: one object per sequence, per skipped line).\n"
    "\n",
    "  -i, --input FILE          corpus, one item per line; - reads stdin\n"
    "  -o, --output FILE         features file (written to a temporary name, renamed when complete;\n"
    "                            progress is committed to FILE.partial* after every window;\n"
    "                            one run at a time per FILE; must be a regular file if it exists)\n"
    "      --shard I/N           encode only shard I (0-based) of N: the input's lines starting\n"
    "                            in bytes [I*S/N, (I+1)*S/N) (S its size), into the shard file\n"
    "                            FILE.shard-IIIII-of-NNNNN (resumable like FILE; records carry\n"
    "                            the input's line numbers); `ckbatch merge -o FILE` then writes\n"
    "                            the file a single run writes\n"
    "      --resume              continue an interrupted run from FILE.partial* (same input,\n"
    "                            weights and options, except that --threads and --max-batch-tokens\n"
    "                            may differ); the result equals an uninterrupted run's; lines\n"
    "                            already done are not converted again; without a progress record\n"
    "                            the run starts from the beginning (safe to pass on every attempt);\n"
    "                            not with stdin, whose runs cannot be resumed\n"
    "  -t, --threads N           compute threads (default: the CPUs this process may run on, its\n"
    "                            affinity mask: taskset, cpuset, Slurm binding; wins over\n"
    "                            OMP_NUM_THREADS)\n"
    "  -f, --format F            phonemes (default): Kokoro phoneme strings\n"
    "                            ids: JSON arrays of Kokoro token ids, the raw model interface:\n"
    "                            any row 1..rows-1 of the word-embedding table (1..177 for\n"
    "                            Kokoro-82M); boundaries are added; at most 510 per line; an id\n"
    "                            the vocabulary does not define is kept, reported like a dropped\n"
    "                            symbol and shown as U+FFFD in `phonemes`\n"
    "                            text: English text through a G2P (--g2p)\n"
    "  -l, --lang L              text language: en-us (default) or en-gb\n"
    "      --g2p G               text front end: misaki (default): Kokoro's own English G2P\n"
    "                            (misaki 0.9.4 lexicons and rules; espeak-ng only for words they\n"
    "                            lack, each reported; tagger: a heuristic, not spaCy)\n"
    "                            espeak: espeak-ng on everything (the front end before misaki)\n"
    "      --lexicon-dir D       misaki: {us,gb}_{gold,silver}.json from D (e.g. an installed\n"
    "                            misaki's data/), SHA-256 checked (default: the shipped copy)\n"
    "  -w, --weights F           Kokoro weights: kokoro-v1_0.pth (read without Python, no code runs)\n"
    "                            or .safetensors (flat bert., bert_encoder., predictor., ...\n"
    "                            names); by content; only the circuit's groups are read\n"
    "      --weights-manifest M  verify every tensor against `ckbatch weights hash` output M\n"
    "                            default: synthetic demo weights (NOT Kokoro's)\n"
    "      --seed N              seed of the synthetic demo weights (default 20261129)\n",
    "      --circuit F           circuit JSON (default: the embedded Kokoro phoneme encoder)\n"
    "      --config F            Kokoro config.json shipped beside the .pth: its vocab replaces\n"
    "                            the embedded Kokoro-82M v1.0 one; n_token, plbert and hidden_dim\n"
    "                            must match the weights (checked before the run); its SHA-256 is\n"
    "                            recorded in the output metadata as config\n"
    "      --layer L             features (default: tensor features [T,512]), hidden (tensor\n"
    "                            hidden [T,768], the last hidden state) or prosody (the prosody\n"
    "                            circuit, default circuits/kokoro_prosody.json: durations I32\n"
    "                            [T], frame_offsets I64 [S+1], f0 and n F32 [2F], word times\n"
    "                            in the sequences records; docs/prosody.md)\n"
    "      --voice V             prosody: a shipped voice (af_heart, af_bella, ...), a Kokoro\n"
    "                            .bin or .pt voice file, a mix a:2,b:1 or a,b (mean), or\n"
    "                            synthetic (default: af_heart with --weights, synthetic with the\n"
    "                            synthetic demo weights; docs/voices.md)\n"
    "      --speed S             prosody: speaking rate, a number > 0 (default 1): durations are\n"
    "                            the predicted ones / S\n"
    "      --max-batch-tokens N  tokens per packed batch (default 2048, at least 512)\n"
    "      --precision P         fp32 (default), bf16 or int8: the linears in bf16 with f32\n"
    "                            accumulation (oneDNN on AMX or AVX512-BF16), or in int8 (u8 rows\n"
    "                            x s8 channels, s32 accumulation, on VNNI or AMX-INT8); refused on\n"
    "                            a CPU without them; the rest in f32; recorded in the output\n"
    "                            metadata with what ran (docs/precision.md); not with --parity\n"
    "      --compiled L          run the library `ckbatch compile` built (L = DIR/NAME.so, made\n"
    "                            with the same --circuit, --precision, --parity and\n"
    "                            --max-batch-tokens) instead of the interpreter: same features;\n"
    "                            its SHA-256 is checked against L.json before it is loaded\n"
    "      --strict-symbols      a symbol outside the vocabulary (ids: an id it does not define)\n"
    "                            is a line error (default: dropped (ids: kept) and reported with\n"
    "                            line and column or element)\n"
    "      --on-error P          stop (default): the first bad line ends the run, no output;\n"
    "                            skip: bad lines are reported, skipped and listed in `skipped`\n",
    "      --parity              one thread (scheduler and oneDNN) whatever --threads says; weights\n"
    "                            hashed before and after; two runs give identical bytes\n"
    "      --xray-oracle B       X-Ray: run every case of the pinned capture B in parity mode and\n"
    "                            compare each checkpoint (no --input/--output needed); a speech\n"
    "                            capture (tests/fixtures/speech, its <case>.pred_dur) runs on\n"
    "                            the speech circuit, durations forced and noise fed, every\n"
    "                            stage and the audio's SER compared (fp32, interpreted)\n"
    "      --report R            X-Ray JSON report (with --xray-oracle)\n"
    "      --xray-capture L      with --xray-oracle: checkpoints to capture, all or id,id,...\n"
    "      --xray-out F          with --xray-oracle: write the capture to F (safetensors)\n"
    "      --progress            progress line on stderr (default when stderr is a terminal)\n"
    "      --no-progress         no progress line\n"
    "      --progress-interval S at most one redraw per S seconds (default 0.5; 0: at every line,\n"
    "                            batch and checkpoint); the ETA follows the input bytes done\n"
    "  -q, --quiet               errors only on stderr: no summary, weights, memory, warning or\n"
    "                            progress lines (--progress still shows progress)\n"
    "  -h, --help                this text\n"
    "  -V, --version             version\n"
    "\n"
    "Exit status: 0 success, 1 input or runtime error (no output file; committed progress stays in\n"
    "FILE.partial* for --resume), 2 usage error, 130 / 143 stopped by SIGINT / SIGTERM (the first\n"
    "stops before the next batch, keeping the progress for --resume; a second ends it at once).\n",
};

int ck_cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "ckbatch: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'ckbatch --help'.\n");
    return EXIT_USAGE;
}

int ck_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            return 1;
        }
    }
    return 0;
}

/* Parses a decimal in [min, max]; 0 on success. */
int ck_cli_parse_size(const char *s, unsigned long long min, unsigned long long max,
                      unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    /* digits only: strtoull would skip leading space and wrap " -1" to 2^64 - 1 */
    if (errno != 0 || end == s || *end != '\0' || !(s[0] >= '0' && s[0] <= '9') || v < min ||
        v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

/* --shard I/N: both numbers, 0 <= I < N <= CK_SHARDS_MAX (an index without its count would
 * let two launchers disagree on the split: refused before any work). */
static int parse_shard(const char *arg, ck_corpus_params *c)
{
    return ck_cli_parse_shard(arg, &c->shard_index, &c->shard_count);
}

int ck_cli_parse_shard(const char *arg, size_t *index, size_t *count)
{
    unsigned long long i = 0, n = 0;
    char head[32];
    const char *slash = strchr(arg, '/');
    size_t len = slash != NULL ? (size_t)(slash - arg) : 0;
    if (slash == NULL || len == 0 || len >= sizeof head) {
        return usage_error("--shard %s: expected I/N, the shard index (0-based) and the shard count "
                           "(e.g. --shard \"$SLURM_ARRAY_TASK_ID/64\")", arg);
    }
    memcpy(head, arg, len);
    head[len] = '\0';
    if (parse_size(slash + 1, 1, CK_SHARDS_MAX, &n) != 0 || parse_size(head, 0, n - 1, &i) != 0) {
        return usage_error("--shard %s: expected I/N with 0 <= I < N <= 1000000", arg);
    }
    *index = (size_t)i;
    *count = (size_t)n;
    return 0;
}

/* --speed S: a plain decimal number > 0 (strtod alone would also take "nan", "inf", "0x1p1" and
 * leading space). */
static int parse_speed(const char *arg, double *speed)
{
    char *end = NULL;
    errno = 0;
    int plain = arg[0] != '\0' && strspn(arg, "0123456789.eE+-") == strlen(arg);
    double v = plain ? strtod(arg, &end) : -1.0;
    if (!plain || errno != 0 || end == arg || *end != '\0' || !(v > 0.0) || !isfinite(v)) {
        return usage_error("--speed %s: expected a number > 0 (1 is Kokoro's rate, 2 twice as "
                           "fast)", arg);
    }
    *speed = v;
    return 0;
}

static int parse_format(const char *s, ck_input_format *format)
{
    static const char *const names[] = {"phonemes", "ids", "text"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, names[i]) == 0) {
            *format = (ck_input_format)i;
            return 0;
        }
    }
    return -1;
}

enum { OPT_SEED = 256, OPT_CIRCUIT, OPT_LAYER, OPT_MAX_BATCH, OPT_STRICT, OPT_ON_ERROR,
       OPT_PROGRESS, OPT_NO_PROGRESS, OPT_WEIGHTS_MANIFEST, OPT_PARITY, OPT_XRAY_ORACLE,
       OPT_REPORT, OPT_XRAY_CAPTURE, OPT_XRAY_OUT, OPT_RESUME, OPT_PROGRESS_INTERVAL, OPT_CONFIG,
       OPT_G2P, OPT_LEXICON_DIR, OPT_PRECISION, OPT_SHARD, OPT_COMPILED, OPT_VOICE, OPT_SPEED };

static const struct option long_options[] = {
    {"input", required_argument, NULL, 'i'},     {"output", required_argument, NULL, 'o'},
    {"threads", required_argument, NULL, 't'},   {"format", required_argument, NULL, 'f'},
    {"lang", required_argument, NULL, 'l'},      {"weights", required_argument, NULL, 'w'},
    {"weights-manifest", required_argument, NULL, OPT_WEIGHTS_MANIFEST},
    {"seed", required_argument, NULL, OPT_SEED}, {"circuit", required_argument, NULL, OPT_CIRCUIT},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"compiled", required_argument, NULL, OPT_COMPILED},
    {"g2p", required_argument, NULL, OPT_G2P},    {"lexicon-dir", required_argument, NULL, OPT_LEXICON_DIR},
    {"layer", required_argument, NULL, OPT_LAYER},
    {"voice", required_argument, NULL, OPT_VOICE}, {"speed", required_argument, NULL, OPT_SPEED},
    {"max-batch-tokens", required_argument, NULL, OPT_MAX_BATCH},
    {"strict-symbols", no_argument, NULL, OPT_STRICT},
    {"on-error", required_argument, NULL, OPT_ON_ERROR},
    {"resume", no_argument, NULL, OPT_RESUME},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"progress", no_argument, NULL, OPT_PROGRESS}, {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"progress-interval", required_argument, NULL, OPT_PROGRESS_INTERVAL},
    {"parity", no_argument, NULL, OPT_PARITY},
    {"xray-oracle", required_argument, NULL, OPT_XRAY_ORACLE},
    {"report", required_argument, NULL, OPT_REPORT},
    {"xray-capture", required_argument, NULL, OPT_XRAY_CAPTURE},
    {"xray-out", required_argument, NULL, OPT_XRAY_OUT},
    {"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},         {NULL, 0, NULL, 0},
};


/* The X-Ray options; returns 1 when ch was one of them. */
static int apply_xray_option(int ch, const char *arg, ck_cli_options *o)
{
    switch (ch) {
    case OPT_PARITY: o->model.parity = 1; return 1;
    case OPT_XRAY_ORACLE: o->xray.oracle = arg; return 1;
    case OPT_REPORT: o->xray.report = arg; return 1;
    case OPT_XRAY_CAPTURE: o->xray.capture_ids = arg; return 1;
    case OPT_XRAY_OUT: o->xray.capture_out = arg; return 1;
    default: return 0;
    }
}

/* Applies one option; returns 0, EXIT_USAGE, or -1 when the program should exit 0 (help, version). */
static int apply_option(int ch, const char *arg, ck_cli_options *o)
{
    unsigned long long v = 0;
    ck_model_params *m = &o->model;
    ck_corpus_params *c = &o->corpus;
    if (apply_xray_option(ch, arg, o)) {
        return 0;
    }
    switch (ch) {
    case 'i': c->input = arg; return 0;
    case 'o': c->output = arg; return 0;
    case 'w': m->weights = arg; return 0;
    case OPT_WEIGHTS_MANIFEST: m->weights_manifest = arg; return 0;
    case OPT_CIRCUIT: m->circuit = arg; return 0;
    case OPT_CONFIG: m->config = arg; return 0;
    case OPT_COMPILED: m->compiled = arg; return 0;
    case OPT_PRECISION:
        if (strcmp(arg, "fp32") != 0 && strcmp(arg, "bf16") != 0 && strcmp(arg, "int8") != 0) {
            return usage_error("--precision %s: expected fp32, bf16 or int8", arg);
        }
        m->precision = strcmp(arg, "bf16") == 0   ? CK_PRECISION_BF16
                       : strcmp(arg, "int8") == 0 ? CK_PRECISION_INT8
                                                  : CK_PRECISION_FP32;
        return 0;
    case OPT_G2P:
        if (strcmp(arg, "misaki") != 0 && strcmp(arg, "espeak") != 0) {
            return usage_error("--g2p %s: expected misaki or espeak", arg);
        }
        c->g2p = arg;
        return 0;
    case OPT_LEXICON_DIR: c->lexicon_dir = arg; return 0;
    case 'q': o->quiet = 1; return 0;
    case OPT_STRICT: c->strict_symbols = 1; return 0;
    case OPT_RESUME: c->resume = 1; return 0;
    case OPT_SHARD: return parse_shard(arg, c);
    case OPT_PROGRESS: o->progress = 2; return 0;
    case OPT_NO_PROGRESS: o->progress = 0; return 0;
    case OPT_PROGRESS_INTERVAL: {
        char *end = NULL;
        errno = 0;
        /* plain decimal seconds: strtod alone would also take " 1", "0x10" and "inf" */
        double secs = strspn(arg, "0123456789.") == strlen(arg) ? strtod(arg, &end) : -1.0;
        if (errno != 0 || end == arg || end == NULL || *end != '\0' ||
            !(secs >= 0.0 && secs <= 3600.0)) {
            return usage_error("--progress-interval %s: expected seconds 0..3600", arg);
        }
        c->progress_interval = secs;
        return 0;
    }
    case 't':
        if (parse_size(arg, 1, 1024, &v) != 0) {
            return usage_error("--threads %s: expected an integer 1..1024", arg);
        }
        m->threads = (int)v;
        return 0;
    case 'f':
        return parse_format(arg, &c->format) == 0
                   ? 0 : usage_error("--format %s: expected phonemes, ids or text", arg);
    case 'l':
        if (strcmp(arg, "en-us") != 0 && strcmp(arg, "en-gb") != 0) {
            return usage_error("--lang %s: expected en-us or en-gb", arg);
        }
        c->lang = arg;
        return 0;
    case OPT_SEED:
        if (parse_size(arg, 0, UINT64_MAX, &v) != 0) {
            return usage_error("--seed %s: expected an unsigned 64-bit integer", arg);
        }
        m->seed = v;
        return 0;
    case OPT_LAYER:
        if (strcmp(arg, "features") != 0 && strcmp(arg, "hidden") != 0 &&
            strcmp(arg, "prosody") != 0) {
            return usage_error("--layer %s: expected features, hidden or prosody", arg);
        }
        c->layer = strcmp(arg, "hidden") == 0    ? CK_LAYER_HIDDEN
                   : strcmp(arg, "prosody") == 0 ? CK_LAYER_PROSODY : CK_LAYER_FEATURES;
        return 0;
    case OPT_VOICE: c->voice = arg; return 0;
    case OPT_SPEED: o->speed_given = 1; return parse_speed(arg, &c->speed);
    case OPT_MAX_BATCH:
        if (parse_size(arg, 512, 1u << 20, &v) != 0) {
            return usage_error("--max-batch-tokens %s: expected an integer 512..1048576", arg);
        }
        m->max_batch_tokens = (size_t)v;
        return 0;
    case OPT_ON_ERROR:
        if (strcmp(arg, "stop") != 0 && strcmp(arg, "skip") != 0) {
            return usage_error("--on-error %s: expected stop or skip", arg);
        }
        c->skip_bad_lines = strcmp(arg, "skip") == 0;
        return 0;
    case 'h':
        for (size_t i = 0; i < sizeof usage_text / sizeof usage_text[0]; i++) {
            fputs(usage_text[i], stdout);
        }
        return -1;
    case 'V': printf("ckbatch %s\n", ck_version()); return -1;
    default: return usage_error("%s", "unknown option");
    }
}

/* Path mistakes that would otherwise surface only after the whole corpus is encoded, or destroy the
 * corpus: both paths given and non-empty, the output not a directory, not the input itself. */
int ck_cli_check_paths(const ck_corpus_params *o)
{
    struct stat in, out;
    if (o->input == NULL || o->output == NULL) {
        return usage_error("%s", "--input and --output are required");
    }
    if (o->input[0] == '\0' || o->output[0] == '\0') {
        return usage_error("%s", "--input and --output must not be empty");
    }
    if (o->shard_count > 0 && strcmp(o->input, "-") == 0) {
        return usage_error("%s", "--shard needs a regular --input file: stdin cannot be split");
    }
    if (o->resume && strcmp(o->input, "-") == 0) {
        return usage_error("%s", "--resume needs a regular --input file: a run reading stdin cannot "
                           "be resumed");
    }
    if (strcmp(o->output, "-") == 0) { /* "-" is stdin for --input; a file named "-" would surprise */
        return usage_error("%s", "--output -: standard output is not supported (the file is written "
                           "under a temporary name and renamed): name a file");
    }
    if (stat(o->output, &out) == 0 && S_ISDIR(out.st_mode)) {
        return usage_error("--output %s: is a directory", o->output);
    }
    /* The file is written beside and renamed over the path: a device or FIFO there (/dev/null)
     * would be replaced by a regular file. */
    if (stat(o->output, &out) == 0 && !S_ISREG(out.st_mode)) {
        return usage_error("--output %s: exists and is not a regular file (a device, FIFO or "
                           "socket would be replaced)", o->output);
    }
    /* A missing input is said now, not after the weights are made and the model is loaded; the
     * library still opens it itself (a FIFO is not opened here: that would end its writer). */
    if (strcmp(o->input, "-") != 0 && (stat(o->input, &in) != 0 || access(o->input, R_OK) != 0)) {
        fprintf(stderr, "ckbatch: error: --input %s: cannot read it: %s\n", o->input, strerror(errno));
        return 1;
    }
    if (strcmp(o->input, "-") != 0 && S_ISDIR(in.st_mode)) {
        fprintf(stderr, "ckbatch: error: --input %s: is a directory\n", o->input);
        return 1;
    }
    if (strcmp(o->input, "-") != 0 && stat(o->input, &in) == 0 && stat(o->output, &out) == 0 &&
        in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
        return usage_error("--output %s: is the input file", o->output);
    }
    return 0;
}

void ck_cli_print_summary(const ck_corpus_summary *s)
{
    fprintf(stderr,
            "ckbatch: %zu lines, %zu sequences (%zu long lines chunked), %zu tokens, %zu skipped, "
            "%zu empty, %zu dropped symbols, %.2f s, %.0f tokens/s\n",
            s->lines, s->sequences, s->chunked_lines, s->tokens, s->skipped_lines, s->empty_lines,
            s->dropped_symbols, s->seconds,
            s->seconds > 0 ? (double)(s->tokens - s->resumed_tokens) / s->seconds : 0.0);
    if (s->g2p_seconds > 0) {
        fprintf(stderr, "ckbatch: g2p %.3f s (%.3f ms per line), %zu words through espeak-ng\n",
                s->g2p_seconds, s->lines > 0 ? 1e3 * s->g2p_seconds / (double)s->lines : 0.0,
                s->g2p_fallback_words);
    }
}


/* --voice and --speed belong to --layer prosody, whose circuit is the shipped prosody circuit
 * unless --circuit names one; the voice is loaded once here so that a bad one is a usage error
 * before any weight is made or file written. */
static int check_prosody(ck_cli_options *o)
{
    ck_corpus_params *c = &o->corpus;
    if (c->layer != CK_LAYER_PROSODY) {
        return c->voice != NULL || o->speed_given
                   ? usage_error("%s", "--voice and --speed need --layer prosody") : 0;
    }
    if (o->xray.oracle != NULL) {
        return usage_error("%s", "--layer prosody is for corpus runs, not --xray-oracle");
    }
    if (o->model.circuit == NULL) {
        o->model.circuit = ck_prosody_circuit_path();
    }
    /* ck_model_default_voice's rule, before the model exists */
    const char *voice = c->voice != NULL ? c->voice : o->model.weights != NULL ? "af_heart"
                                                                              : "synthetic";
    ck_error err = {0};
    if (ck_voice_check(voice, &err) != CK_OK) {
        return usage_error("--voice: %s", err.message);
    }
    return 0;
}

int ck_cli_parse(int argc, char **argv, ck_cli_options *o)
{
    o->model = ck_model_default_params();
    o->corpus = ck_corpus_default_params();
    o->xray = ck_xray_default_params();
    o->progress = isatty(STDERR_FILENO);
    o->speed_given = 0;
    int ch;
    opterr = 0; /* one message of ours instead of getopt's two */
    while ((ch = getopt_long(argc, argv, ":i:o:t:f:l:w:qhV", long_options, NULL)) != -1) {
        if (ch == ':' || ch == '?') {
            return usage_error(ch == ':' ? "option '%s' needs a value" : "unknown option '%s'",
                               argv[optind - 1]);
        }
        int rc = apply_option(ch, optarg, o);
        if (rc != 0) {
            return rc;
        }
    }
    if (optind < argc) {
        return usage_error("unexpected argument '%s'", argv[optind]);
    }
    if (o->quiet && o->progress == 1) {
        o->progress = 0; /* the terminal default yields to -q; an explicit --progress does not */
    }
    if (o->model.parity && o->model.precision != CK_PRECISION_FP32) {
        return usage_error("--precision %s and --parity cannot be combined: parity runs fp32",
                           o->model.precision == CK_PRECISION_INT8 ? "int8" : "bf16");
    }
    if (o->xray.oracle != NULL && o->model.config != NULL) {
        return usage_error("%s", "--config is for corpus runs: X-Ray cases carry their ids");
    }
    if (o->xray.oracle == NULL && (o->xray.report || o->xray.capture_ids || o->xray.capture_out)) {
        return usage_error("%s", "--report, --xray-capture and --xray-out need --xray-oracle");
    }
    return check_prosody(o);
}
