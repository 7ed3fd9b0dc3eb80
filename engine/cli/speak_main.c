/* speak_main.c - the `ckbatch speak` subcommand: corpus lines -> WAV file(s) and word timestamps
 * through ck_model_speak_file (docs/speak.md). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char k_usage[] =
    "usage: ckbatch speak [--weights F] [--voice V] [--speed S] [--seed N] [--noise-scale X]\n"
    "                     [--sample-format s16|f32] [-f text|phonemes|ids] [--lang en-us|en-gb]\n"
    "                     [-t|--threads N] [--precision fp32|bf16] [--max-batch-frames N]\n"
    "                     [--on-error stop|skip] [--resume] [--shard I/N] [--compiled LIB]\n"
    "                     [-q] -i INPUT -o OUT\n"
    "\n"
    "Speaks every line of INPUT with Kokoro-82M (circuits/kokoro_speech.json) at 24,000 Hz.\n"
    "  OUT ending in .wav  one file, every line's audio in input order (a line's chunks joined\n"
    "                      as Kokoro joins them), and OUT.jsonl beside it: per line its start and\n"
    "                      end sample and its words with their times (seconds)\n"
    "  any other OUT       a directory: OUT/NNNNNN.wav per line (0-based line number, 6 digits)\n"
    "                      and OUT/timestamps.jsonl\n"
    "  --weights F         Kokoro's kokoro-v1_0.pth; without it the embedded synthetic weights\n"
    "                      (NOT Kokoro's: the audio is not speech)\n"
    "  --voice V           a shipped voice, a .pt/.bin pack or a mix (docs/voices.md); default\n"
    "                      af_heart (synthetic weights: synthetic)\n"
    "  --speed S           speaking rate > 0 (default 1)\n"
    "  --seed N            0 .. 2^64-1: key of the generator's noise (default 0); the same seed\n"
    "                      gives the same bytes, alone or in any batch, at any --threads\n"
    "  --noise-scale X     >= 0 (default 1, Kokoro's; 0 removes the noise)\n"
    "  --sample-format F   s16 (16-bit PCM, default; clipped samples counted) or f32 (IEEE float)\n"
    "  -f, --lang          input format (default text here) and its language (default en-us)\n"
    "  --max-batch-frames N  frames (40 a second) one batch may hold, >= 1 (default 1024 x\n"
    "                      threads; 1: one line at a time); lines of similar length share a\n"
    "                      batch; changes no byte of the output\n"
    "  --on-error P        stop (default): a line the reader rejects (a symbol or id refused,\n"
    "                      too long) ends the run, nothing written; skip: the line gets a record\n"
    "                      {\"line\":N,\"error\":...} and no audio, is warned, the run goes on\n"
    "  --resume            continue a run that was stopped (signal, error, kill): directory OUT\n"
    "                      from its WAVs and OUT/timestamps.jsonl.partial (a line with a record\n"
    "                      and its WAV is not spoken again); OUT.wav from OUT.wav.partial and\n"
    "                      OUT.wav.jsonl.partial (the lines recorded are kept, a torn tail cut\n"
    "                      off, the rest spoken). The result is byte for byte an uninterrupted\n"
    "                      run's. The input and every option but --threads and\n"
    "                      --max-batch-frames must be the same\n"
    "  --shard I/N         only the input's lines of shard I (0-based) of N, split as the\n"
    "                      encoder's --shard splits (balanced by bytes), global line numbers\n"
    "                      kept: OUT.wav goes to OUT.wav.shard-IIIII-of-NNNNN (+ .jsonl), joined\n"
    "                      by `ckbatch merge -o OUT.wav`; a directory gets the shard's WAVs and\n"
    "                      OUT/timestamps.jsonl.shard-IIIII-of-NNNNN (`ckbatch merge -o OUT`\n"
    "                      writes OUT/timestamps.jsonl). Merged: the single run's bytes\n"
    "  --compiled LIB      run the library `ckbatch compile --circuit circuits/kokoro_speech.json`\n"
    "                      built (LIB = DIR/kokoro_speech.so, same --precision; docs/generated.md):\n"
    "                      the interpreter's bytes\n"
    "  -q                  errors only (no progress line, no summary)\n"
    "Each WAV's LIST/INFO and the sidecar's first record ({\"settings\":true,...}) name the\n"
    "weights, voice and the SHA-256 of its pack as used, speed, seed, noise scale, precision and\n"
    "engine version. Exit codes: 0 written, 1 error (nothing published for the\n"
    "failing file; what --resume needs is kept), 2 usage, 3 --resume refused (another\n"
    "run's records: the message names the setting), 4 written with lines skipped (--on-error\n"
    "skip), 128+N stopped by signal N.\n";

enum { EXIT_STATE = 3, EXIT_SKIPPED = 4 }; /* as the encoder's 3; 4: written, lines skipped */

static volatile sig_atomic_t speak_stop;

static void on_stop(int sig)
{
    speak_stop = sig;
    signal(sig, SIG_DFL);
}

static int stop_requested(void *ctx)
{
    (void)ctx;
    return speak_stop != 0;
}

/* TEST-ONLY hook (docs/speak.md): CK_TEST_SPEAK_KILL_AFTER_LINES=N makes the run send itself
 * SIGKILL (or the signal number CK_TEST_SPEAK_KILL_SIGNAL, e.g. 15: SIGTERM, what Ctrl-C's path
 * does) once, as soon as N lines are recorded (durable: the progress callback comes after the
 * journal's sync), a kill at a deterministic point for the resume tests. */
static size_t kill_after_lines;
static int kill_signal = SIGKILL;

static void progress_stderr(void *ctx, const ck_speak_progress *g);

static void progress_kill_hook(void *ctx, const ck_speak_progress *g)
{
    const int *quiet = ctx;
    if (!*quiet) {
        progress_stderr(ctx, g);
    }
    static int fired;
    if (!g->final && !fired && g->lines_done >= kill_after_lines) {
        fired = 1;
        raise(kill_signal);
    }
}

static int parse_double(const char *arg, double min_excl, double min_incl, double *out)
{
    char *end = NULL;
    errno = 0;
    int plain = arg[0] != '\0' && strspn(arg, "0123456789.eE+-") == strlen(arg);
    double v = plain ? strtod(arg, &end) : NAN;
    if (!plain || errno != 0 || end == arg || *end != '\0' || !isfinite(v) || !(v > min_excl)
        || !(v >= min_incl)) {
        return -1;
    }
    *out = v;
    return 0;
}

static void log_stderr(void *ctx, ck_log_level level, const char *msg)
{
    const int *quiet = ctx;
    if (!*quiet || level == CK_LOG_WARNING) {
        fprintf(stderr, "ckbatch: %s\n", msg);
    }
}

/* The progress line, "\r"-rewritten at most every 0.5 s: lines done, audio written, real-time
 * factor; the final call ends the line. */
static void progress_stderr(void *ctx, const ck_speak_progress *g)
{
    (void)ctx;
    fprintf(stderr, "\rckbatch: speak: line %zu of %zu (%5.1f%%), %.2f s of audio, real-time "
            "factor %.3f%s", g->lines_done, g->lines,
            g->lines > 0 ? 100.0 * (double)g->lines_done / (double)g->lines : 100.0,
            g->audio_seconds, g->real_time_factor, g->final ? "\n" : "   ");
    fflush(stderr);
}

/* Parses argv into model and speak params: 0, 2 (usage error printed) or -1 (--help printed). */
static int parse(int argc, char **argv, ck_model_params *mp, ck_speak_params *sp, int *quiet)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(k_usage, stdout);
            return -1;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            *quiet = 1;
            continue;
        }
        if (strcmp(a, "--resume") == 0) {
            sp->resume = 1;
            continue;
        }
        if (v == NULL) {
            return ck_cli_usage_error("speak: %s needs a value", a);
        }
        i++;
        double d = 0;
        unsigned long long u = 0;
        if (strcmp(a, "--weights") == 0) {
            mp->weights = v;
        } else if (strcmp(a, "--voice") == 0) {
            sp->speak.voice = v;
        } else if (strcmp(a, "--speed") == 0) {
            if (parse_double(v, 0.0, 0.0, &d) != 0) {
                return ck_cli_usage_error("speak: --speed %s: expected a number > 0", v);
            }
            sp->speak.speed = d;
        } else if (strcmp(a, "--seed") == 0) {
            if (ck_cli_parse_size(v, 0, UINT64_MAX, &u) != 0) {
                return ck_cli_usage_error("speak: --seed %s: expected an integer 0 .. "
                                          "18446744073709551615", v);
            }
            sp->speak.seed = (uint64_t)u;
        } else if (strcmp(a, "--noise-scale") == 0) {
            if (parse_double(v, -1.0, 0.0, &d) != 0) {
                return ck_cli_usage_error("speak: --noise-scale %s: expected a number >= 0", v);
            }
            sp->speak.noise_scale = (float)d;
        } else if (strcmp(a, "--sample-format") == 0) {
            if (strcmp(v, "s16") != 0 && strcmp(v, "f32") != 0) {
                return ck_cli_usage_error("speak: --sample-format %s: expected s16 or f32", v);
            }
            sp->sample_format_f32 = strcmp(v, "f32") == 0;
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0) {
            if (strcmp(v, "text") == 0) {
                sp->lines.format = CK_INPUT_TEXT;
            } else if (strcmp(v, "phonemes") == 0) {
                sp->lines.format = CK_INPUT_PHONEMES;
            } else if (strcmp(v, "ids") == 0) {
                sp->lines.format = CK_INPUT_IDS;
            } else {
                return ck_cli_usage_error("speak: -f %s: expected text, phonemes or ids", v);
            }
        } else if (strcmp(a, "--lang") == 0) {
            if (strcmp(v, "en-us") != 0 && strcmp(v, "en-gb") != 0) {
                return ck_cli_usage_error("speak: --lang %s: expected en-us or en-gb", v);
            }
            sp->lines.lang = v;
        } else if (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0) {
            if (ck_cli_parse_size(v, 0, 4096, &u) != 0) {
                return ck_cli_usage_error("speak: --threads %s: expected 0 .. 4096", v);
            }
            mp->threads = (int)u;
        } else if (strcmp(a, "--precision") == 0) {
            if (strcmp(v, "fp32") != 0 && strcmp(v, "bf16") != 0) {
                return ck_cli_usage_error("speak: --precision %s: expected fp32 or bf16", v);
            }
            mp->precision = strcmp(v, "bf16") == 0 ? CK_PRECISION_BF16 : CK_PRECISION_FP32;
        } else if (strcmp(a, "--max-batch-frames") == 0) {
            if (ck_cli_parse_size(v, 1, SIZE_MAX, &u) != 0) {
                return ck_cli_usage_error("speak: --max-batch-frames %s: expected an integer >= 1",
                                          v);
            }
            sp->speak.max_batch_frames = (size_t)u;
        } else if (strcmp(a, "--compiled") == 0) {
            mp->compiled = v;
        } else if (strcmp(a, "--on-error") == 0) {
            if (strcmp(v, "stop") != 0 && strcmp(v, "skip") != 0) {
                return ck_cli_usage_error("speak: --on-error %s: expected stop or skip", v);
            }
            sp->skip_bad_lines = strcmp(v, "skip") == 0;
        } else if (strcmp(a, "--shard") == 0) {
            if (ck_cli_parse_shard(v, &sp->shard_index, &sp->shard_count) != 0) {
                return 2;
            }
        } else if (strcmp(a, "-i") == 0 || strcmp(a, "--input") == 0) {
            sp->input = v;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            sp->output = v;
        } else {
            return ck_cli_usage_error("speak: unknown option %s", a);
        }
    }
    if (sp->input == NULL || sp->output == NULL) {
        return ck_cli_usage_error("speak: %s", "-i INPUT and -o OUT are required");
    }
    return 0;
}

int ck_speak_parse(int argc, char **argv, ck_model_params *mp, ck_speak_params *sp, int *quiet)
{
    *quiet = 0;
    *mp = ck_model_default_params();
    memset(sp, 0, sizeof *sp);
    ck_speak_options_init(&sp->speak);
    sp->lines = ck_lines_default_params();
    sp->lines.format = CK_INPUT_TEXT;
    mp->circuit = ck_speech_circuit_path();
    return parse(argc, argv, mp, sp, quiet);
}

int ck_speak_main(int argc, char **argv)
{
    static ck_model_params mp;
    static ck_speak_params sp;
    int quiet = 0;
    int rc = ck_speak_parse(argc, argv, &mp, &sp, &quiet);
    if (rc != 0) {
        return rc < 0 ? EXIT_SUCCESS : rc;
    }
    mp.log = sp.lines.log = log_stderr;
    mp.log_ctx = sp.lines.log_ctx = &quiet;
    mp.cancel = stop_requested;
    sp.progress = quiet ? NULL : progress_stderr;
    sp.progress_interval = 0.5;
    unsigned long long kill_after = 0;
    const char *hook = getenv("CK_TEST_SPEAK_KILL_AFTER_LINES");
    if (hook != NULL && ck_cli_parse_size(hook, 1, SIZE_MAX, &kill_after) == 0) {
        kill_after_lines = (size_t)kill_after;
        const char *sig = getenv("CK_TEST_SPEAK_KILL_SIGNAL");
        unsigned long long n = 0;
        kill_signal = sig != NULL && ck_cli_parse_size(sig, 1, 64, &n) == 0 ? (int)n : SIGKILL;
        sp.progress = progress_kill_hook;
        sp.progress_ctx = &quiet;
        sp.progress_interval = 0;
    }
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
    if (mp.weights == NULL && !quiet) {
        fputs("ckbatch: speak: the embedded synthetic weights are NOT Kokoro's: the audio is not "
              "speech (give --weights kokoro-v1_0.pth for speech)\n", stderr);
    }
    ck_error err = {0};
    ck_model *model = NULL;
    ck_speak_summary sum;
    memset(&sum, 0, sizeof sum);
    rc = ck_model_load(&model, &mp, &err);
    rc = rc == CK_OK ? ck_model_speak_file(model, &sp, &sum, &err) : rc;
    ck_model_free(model);
    if (rc == CK_E_CANCELLED && speak_stop != 0) {
        fprintf(stderr, "ckbatch: speak: stopped by signal %d: %s\n", (int)speak_stop, err.message);
        return 128 + (int)speak_stop;
    }
    if (rc == CK_E_STATE) {
        fprintf(stderr, "ckbatch: speak: %s\nckbatch: speak: --resume continues only the run that "
                "wrote the records: run it again without --resume to start over\n", err.message);
        return EXIT_STATE;
    }
    if (rc != CK_OK) {
        fprintf(stderr, "ckbatch: speak: %s\n", err.message);
        return EXIT_FAILURE;
    }
    if (!quiet) {
        double audio = (double)sum.samples / CK_SPEECH_SAMPLE_RATE;
        fprintf(stderr, "ckbatch: speak: %zu lines, %.2f s of audio in %.2f s (real-time factor "
                "%.3f), %zu lines without phonemes, %zu bad lines skipped, %zu lines resumed, "
                "%llu samples clipped -> %s\n", sum.lines, audio, sum.seconds,
                audio > 0 ? sum.seconds / audio : 0.0, sum.lines_skipped, sum.lines_failed,
                sum.lines_resumed, (unsigned long long)(sum.clipped + sum.clipped_resumed),
                sp.output);
    }
    return sum.lines_failed > 0 ? EXIT_SKIPPED : EXIT_SUCCESS;
}
