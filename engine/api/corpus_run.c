/* corpus_run.c - the corpus job (ck_run_corpus): reader -> window of sequences -> packed batches ->
 * the model's executor -> output. Allocates its buffers once per run; reports through the caller's
 * log and progress callbacks, prints nothing. */
#include "model_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "batcher.h"
#include "corpus_job.h"
#include "corpus_shard.h"
#include "output.h"
#include "prosody.h"
#include "reader.h"
#include "sha256.h"
#include "xray.h"

/* The window holds sequences in input order until it is encoded; sorting by length happens only
 * inside it, so memory stays bounded whatever the corpus size. */
#define CK_WINDOW_BATCHES 4

typedef struct {
    const ck_corpus_params *opt;
    ck_model *model;
    ck_reader *reader;
    ck_output *output;
    FILE *input;
    int output_buffer;
    size_t cols, window_tokens;
    ck_sequence *window;        /* [window_cap] in input order */
    size_t n_window, window_cap, window_used;
    size_t *lengths, *order;    /* [window_cap] */
    const int32_t **seq_ids;    /* [window_cap] window[i].ids, for ck_batch_pack */
    size_t *row_of;             /* [window_cap] rows before sequence i in the window, input order:
                                   where its rows go past the rows already appended */
    ck_batch_span *spans;       /* [window_cap] */
    ck_voice *voice;            /* layer prosody: the run's voice; NULL otherwise */
    float *style, *speeds;      /* prosody: [window_cap, 128] and [window_cap], one batch's inputs */
    int32_t *durations;         /* prosody: [window_tokens] the window's frames, input order */
    ck_output_word *words;      /* prosody: [CK_READER_MAX_PHONEMES] one sequence's words */
    int curves;                 /* prosody: the circuit gives F0 and N (both buffers) */
    float *f0, *n;              /* prosody curves: [curve_cap] the window's F0 and N, batch order */
    size_t curve_cap, curve_used; /* values allocated and filled in f0 and n */
    size_t *curve_at;           /* [window_cap] where sequence i's curves start in f0 and n */
    int32_t *batch_ids;         /* [max_batch_tokens] */
    size_t *batch_offsets;      /* [window_cap + 1] */
    ck_corpus_summary *summary;
    unsigned char (*weights_sha)[32]; /* parity: every tensor's SHA-256 before the run */
    unsigned long long input_bytes;     /* size of a regular input file, 0 for stdin */
    int streamed;                       /* stdin, or a pipe, FIFO or device named by path
                                           (/dev/stdin, <(...)): read once, never rewound */
    unsigned long long committed_bytes; /* input bytes before the window (all their rows written) */
    unsigned long long window_bytes_end; /* input bytes through the window's last line */
    unsigned long long resumed_bytes;   /* resume: input bytes before the first line this run encodes */
    size_t window_rows_put;     /* rows of the window's batches written so far */
    double progress_drawn;      /* seconds_since(start) when the progress line was last drawn */
    unsigned long long progress_bytes; /* bytes_done when it last moved, at progress_bytes_at s */
    double progress_bytes_at;
    int encoding;               /* 1 once a sequence of this run entered the window */
    ck_output_mark mark;        /* resume: sequences before it are already in the output */
    size_t resumed_tokens;      /* resume: tokens of those sequences (not this run's work) */
    size_t resumed_lines;       /* resume: lines before the mark, passed over unread */
    size_t resumed_skipped;     /* resume: skipped lines the record already lists */
    ck_reader_stats line_start; /* reader counts before the line being taken (for its marks) */
    struct timespec start;
    const char *out_path;       /* opt->output, or the shard file of a shard run */
    char *shard_path;           /* shard run: malloc'd ck_shard_path */
    ck_shard_range range;       /* shard run: the input bytes it reads */
    size_t line_base;           /* lines of the input before the first one read (shard runs) */
    char input_sha[65];         /* of the whole input ("" for stdin) */
} session;

/* One informational message to the caller's log. */
#define note(s, ...) ck_log((s)->opt->log, (s)->opt->log_ctx, CK_LOG_INFO, __VA_ARGS__)

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static int alloc_buffers(session *s, ck_error *err)
{
    size_t t = s->model->params.max_batch_tokens;
    s->window_tokens = t * CK_WINDOW_BATCHES;
    s->window_cap = s->window_tokens / 2 + 1; /* every sequence has at least [0, 0] */
    s->window = calloc(s->window_cap, sizeof *s->window);
    s->lengths = calloc(s->window_cap, sizeof *s->lengths);
    s->order = calloc(s->window_cap, sizeof *s->order);
    s->seq_ids = calloc(s->window_cap, sizeof *s->seq_ids);
    s->row_of = calloc(s->window_cap, sizeof *s->row_of);
    s->spans = calloc(s->window_cap, sizeof *s->spans);
    s->batch_offsets = calloc(s->window_cap + 1, sizeof *s->batch_offsets);
    s->batch_ids = calloc(t, sizeof *s->batch_ids);
    int prosody = s->opt->layer == CK_LAYER_PROSODY;
    if (prosody) {
        s->style = calloc(s->window_cap * CK_PROSODY_STYLE_COLS, sizeof *s->style);
        s->speeds = calloc(s->window_cap, sizeof *s->speeds);
        s->durations = calloc(s->window_tokens, sizeof *s->durations);
        s->words = calloc(CK_READER_MAX_PHONEMES, sizeof *s->words);
        s->curve_at = calloc(s->window_cap, sizeof *s->curve_at);
        s->curves = s->model->circuit.f0_buffer >= 0 && s->model->circuit.n_buffer >= 0;
    }
    if (!s->window || !s->lengths || !s->order || !s->seq_ids || !s->row_of || !s->spans ||
        !s->batch_offsets || !s->batch_ids ||
        (prosody && (!s->style || !s->speeds || !s->durations || !s->words || !s->curve_at))) {
        return ck_fail(err, CK_E_MEMORY, "encode: out of memory for a window of %zu tokens",
                       s->window_tokens);
    }
    return CK_OK;
}

/* The run's output buffer and its width; the voice of a prosody run; the window buffers. */
static int prepare(session *s, ck_error *err)
{
    s->output_buffer = ck_model_buffer(s->model, s->opt->layer);
    if (s->output_buffer < 0) {
        return s->opt->layer == CK_LAYER_PROSODY
                   ? ck_fail(err, CK_E_CIRCUIT, "%s: no \"durations\" output for layer prosody (its "
                             "circuit is %s)", s->model->circuit.path, ck_prosody_circuit_path())
                   : ck_fail(err, CK_E_CIRCUIT, "%s: no \"%s\" output for layer %s",
                             s->model->circuit.path, ck_corpus_layer_name(s->opt->layer),
                             ck_corpus_layer_name(s->opt->layer));
    }
    s->cols = s->model->circuit.buffers[s->output_buffer].cols;
    int rc = s->opt->layer == CK_LAYER_PROSODY
                 ? ck_prosody_open_voice(s->model, s->opt->voice, s->opt->speed, &s->voice, err)
                 : CK_OK;
    return rc == CK_OK ? alloc_buffers(s, err) : rc;
}

static void warn_log(void *ctx, const char *message)
{
    const session *s = ctx;
    ck_log(s->opt->log, s->opt->log_ctx, CK_LOG_WARNING, "warning: %s", message);
}

/* Input bytes whose sequences are in the output: those before the window, plus the window's share
 * by tokens written (its batches run longest first, so this is an estimate within one window). */
static unsigned long long bytes_done(const session *s)
{
    unsigned long long window = s->window_bytes_end - s->committed_bytes;
    double share = s->window_used > 0 ? (double)s->window_rows_put / (double)s->window_used : 0.0;
    return s->committed_bytes + (unsigned long long)(share * (double)window);
}

/* The progress report: share of the input bytes done (the ETA follows from it, so a corpus of
 * long lines does not fool it as a line count would), line, tokens, tokens/s. Reported at most once
 * per opt->progress_interval seconds; the job calls it at every line, batch and X-Ray checkpoint (a
 * few per layer), so at the default 0.5 s it moves at least once a second. `final` reports once
 * more, with every byte done. */
static void progress(session *s, int final)
{
    if (s->opt->progress == NULL) {
        return;
    }
    double secs = seconds_since(&s->start);
    if (!final && secs - s->progress_drawn < s->opt->progress_interval) {
        return;
    }
    s->progress_drawn = secs;
    const ck_reader_stats *st = ck_reader_stats_get(s->reader);
    ck_progress p;
    memset(&p, 0, sizeof p);
    p.tokens = ck_output_tokens(s->output) + s->window_rows_put;
    p.tokens_per_second = secs > 0 ? (double)(p.tokens - s->resumed_tokens) / secs : 0.0;
    p.seconds = secs;
    p.input_bytes = s->input_bytes;
    p.bytes_read = st->bytes;
    p.lines = st->lines;
    p.final = final;
    p.eta_seconds = -1.0;
    if (s->input_bytes > 0) {
        unsigned long long done = final ? s->input_bytes : bytes_done(s);
        if (done != s->progress_bytes) { /* the ETA is set when the done share moves, then counts down */
            s->progress_bytes = done;
            s->progress_bytes_at = secs;
        }
        double fresh = done > s->resumed_bytes ? (double)(done - s->resumed_bytes) : 0.0;
        double left = done < s->input_bytes ? (double)(s->input_bytes - done) : 0.0;
        p.bytes_done = done;
        p.eta_seconds = fresh > 0 ? s->progress_bytes_at * left / fresh - (secs - s->progress_bytes_at)
                                  : -1.0;
    }
    s->opt->progress(s->opt->progress_ctx, &p);
}

/* X-Ray hook used as a clock: the executor calls it after every checkpoint op, a few times per
 * layer, so a long batch still moves the progress line. */
static void progress_tick(void *ctx, const char *checkpoint, const float *data, size_t tokens,
                          size_t cols)
{
    (void)checkpoint, (void)data, (void)tokens, (void)cols;
    progress(ctx, 0);
}

/* With --resume: says where the run continues, and passes over the input lines before the mark
 * without converting them (their sequences and skipped lines are in the output already); without a
 * progress record, says that the run starts from the beginning. */
static int resume_at_mark(session *s, ck_error *err)
{
    const char *out = s->out_path;
    struct stat st;
    if (!ck_output_resumed(s->output)) {
        note(s, "no progress record for %s: starting from the beginning%s", out,
             stat(out, &st) == 0 ? " (the existing file is replaced when the run completes)" : "");
        return CK_OK;
    }
    s->resumed_tokens = ck_output_tokens(s->output);
    s->resumed_lines = s->mark.line - 1 - s->line_base;
    s->resumed_skipped = ck_output_skipped(s->output);
    note(s, "resuming at line %zu (chunk %zu), %zu sequences already done", s->mark.line,
         s->mark.chunk, ck_output_sequences(s->output));
    return ck_reader_skip(s->reader, s->resumed_lines, err);
}

/* The shortest decimal that reads back as v ("1.4", not "1.3999999999999999"). */
static void shortest(double v, char buf[40])
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, 40, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) {
            return;
        }
    }
}

/* The run's options identity (ck_corpus_options_identity), with a prosody run's voice (as
 * resolved, and its pack's SHA-256) and speed: both change the durations. */
static void options_identity(const session *s, char *buf, size_t cap)
{
    ck_corpus_options_identity(s->opt, s->model, buf, cap);
    if (s->voice != NULL) {
        char sha[65], speed[40];
        ck_sha256_hex(s->voice->sha256, sha);
        shortest(s->opt->speed, speed);
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, " voice=%.300s voice_sha256=%s speed=%s", s->voice->spec,
                 sha, speed);
    }
}

/* Opens (or with --resume reopens) the output under this run's identity. A streamed run's output
 * (stdin, a pipe) is unresumable: its journals get no record, so nothing it leaves looks
 * resumable; and its input is not hashed, which would read it to its end before the run. */
static int open_output(session *s, int streamed, ck_error *err)
{
    const ck_corpus_params *opt = s->opt;
    char *sha = s->input_sha, options[1200];
    struct stat st = {0};
    if (opt->resume && streamed) {
        return ck_fail(err, CK_E_ARG, "resume: needs a regular input file, not stdin or a pipe "
                       "(%s)", opt->input);
    }
    int rc = streamed ? CK_OK : ck_sha256_file(opt->input, sha, err);
    if (rc == CK_OK && !streamed && stat(opt->input, &st) != 0) {
        rc = ck_fail(err, CK_E_IO, "%s: cannot stat input", opt->input);
    }
    if (rc != CK_OK) {
        return rc;
    }
    options_identity(s, options, sizeof options);
    if (opt->shard_count > 0) { /* a shard resumes only as the same shard of the same split */
        size_t len = strlen(options);
        snprintf(options + len, sizeof options - len, " shard=%zu/%zu", opt->shard_index,
                 opt->shard_count);
    }
    ck_output_identity id = {sha, (size_t)st.st_size, options,
                             ck_weights_identity(s->model->weights)};
    ck_output_mode mode = streamed ? CK_OUTPUT_UNRESUMABLE
                                   : (opt->resume ? CK_OUTPUT_RESUME : CK_OUTPUT_FRESH);
    const char *rows_name = opt->layer == CK_LAYER_PROSODY ? "durations"
                            : opt->layer == CK_LAYER_HIDDEN ? "hidden" : "features";
    rc = ck_output_open(&s->output, s->out_path, rows_name, s->cols, &id, mode, &s->mark, err);
    if (rc == CK_OK && opt->layer == CK_LAYER_PROSODY) {
        rc = ck_output_set_durations(s->output, s->curves, err);
    }
    if (rc == CK_OK && ck_output_replaced_record(s->output)) {
        note(s, "an interrupted run's progress (%s.partial*) was discarded: this run starts from the "
             "beginning (resume on would have continued it)", s->out_path);
    }
    return rc == CK_OK && opt->resume ? resume_at_mark(s, err) : rc;
}

/* The last metadata entry of a shard file: which range of which input under which options
 * (ck_merge_shards checks and drops it). */
static int shard_meta(session *s, ck_error *err)
{
    char options[1200];
    options_identity(s, options, sizeof options);
    char *text = ck_corpus_shard_meta(s->opt, &s->range, s->input_sha, options);
    int rc = text != NULL ? ck_output_meta(s->output, CK_SHARD_META_KEY, text, err)
                          : ck_fail(err, CK_E_MEMORY, "%s: out of memory", s->out_path);
    free(text);
    return rc;
}

static int put_meta(void *ctx, const char *key, const char *value, ck_error *err)
{
    return ck_output_meta(ctx, key, value, err);
}

/* What a prosody file's numbers depend on and how to read them (docs/prosody.md). */
static int prosody_meta(session *s, ck_error *err)
{
    char sha[65], speed[40];
    ck_sha256_hex(s->voice->sha256, sha);
    shortest(s->opt->speed, speed);
    const char *const entries[][2] = {
        {"voice", s->voice->spec},
        {"voice_sha256", sha},
        {"speed", speed},
        {"style_row", "len(phonemes) - 1 (kokoro/pipeline.py), clamped to 0..509; predictor half "
                      "[128, 256)"},
        {"frames_per_second", "40"},
        {"word_times", "kokoro/pipeline.py join_timestamps: words split at spaces of phonemes; "
                       "half frames / 80; start 2 max(0, durations[0] - 3); a space's frames split "
                       "between its neighbours"},
    };
    int rc = CK_OK;
    for (size_t i = 0; rc == CK_OK && i < sizeof entries / sizeof entries[0]; i++) {
        rc = ck_output_meta(s->output, entries[i][0], entries[i][1], err);
    }
    return rc;
}

static int open_io(session *s, ck_error *err)
{
    const ck_corpus_params *opt = s->opt;
    const ck_model *m = s->model;
    int is_stdin = strcmp(opt->input, "-") == 0;
    s->input = is_stdin ? stdin : fopen(opt->input, "rb");
    if (s->input == NULL) {
        return ck_fail(err, CK_E_IO, "%s: cannot open input: %s", opt->input, strerror(errno));
    }
    struct stat in_st;
    int regular = !is_stdin && fstat(fileno(s->input), &in_st) == 0 && S_ISREG(in_st.st_mode);
    s->input_bytes = regular ? (unsigned long long)in_st.st_size : 0;
    s->streamed = !regular;
    if (s->streamed && opt->shard_count > 0) {
        return ck_fail(err, CK_E_ARG, "shard: needs a regular input file, not stdin or a pipe (%s)",
                       opt->input);
    }
    s->out_path = opt->output;
    if (opt->shard_count > 0) {
        int rc = ck_corpus_shard_open(opt, s->input, &s->range, &s->shard_path, err);
        if (rc != CK_OK) {
            return rc;
        }
        s->out_path = s->shard_path;
        s->input_bytes = s->range.end - s->range.start; /* progress over the shard's bytes */
        s->line_base = s->range.first_line - 1;
        note(s, "shard %zu/%zu: input bytes %llu..%llu, lines %zu..%zu (%zu lines) -> %s",
             opt->shard_index, opt->shard_count, s->range.start, s->range.end,
             s->range.first_line, s->range.first_line + s->range.lines - (s->range.lines > 0),
             s->range.lines, s->out_path);
    }
    ck_reader_options ro = ck_corpus_reader_options(opt, m, warn_log, s);
    const char *name = is_stdin ? "<stdin>" : opt->input;
    int rc = opt->shard_count > 0
                 ? ck_reader_open_range(&s->reader, s->input, name, &ro, s->range.start,
                                        s->input_bytes, s->range.first_line, err)
                 : ck_reader_open(&s->reader, s->input, name, &ro, err);
    if (rc != CK_OK) {
        return rc;
    }
    rc = open_output(s, s->streamed, err);
    if (rc != CK_OK) {
        return rc;
    }
    rc = ck_corpus_meta_each(opt, m, s->reader, is_stdin, put_meta, s->output, err);
    rc = rc == CK_OK && s->voice != NULL ? prosody_meta(s, err) : rc;
    return rc == CK_OK && opt->shard_count > 0 ? shard_meta(s, err) : rc;
}

/* Keeps the F0 and N curves of batch b (the executor's frame-rate outputs: 2 values per frame,
 * the members back to back in batch order) in the window's curve buffers, noting where each
 * member's start: a sequence's place among the window's frames is known only once every batch of
 * the window ran. Memory grows with the window, never with the corpus. */
static int keep_batch_curves(session *s, const size_t *members, size_t count, ck_error *err)
{
    size_t want = 0;
    for (size_t j = 0; j < count; j++) {
        const int32_t *d = s->durations + s->row_of[members[j]];
        for (size_t t = 0; t < s->window[members[j]].n_ids; t++) {
            want += 2 * (size_t)d[t];
        }
    }
    size_t f0_rows = 0, n_rows = 0;
    const float *f0 = ck_executor_output_rows(s->model->executor, s->model->circuit.f0_buffer,
                                              &f0_rows);
    const float *n = ck_executor_output_rows(s->model->executor, s->model->circuit.n_buffer,
                                             &n_rows);
    if (f0 == NULL || n == NULL || f0_rows != want || n_rows != want) {
        return ck_fail(err, CK_E_BACKEND, "prosody: %zu F0 and %zu N values for a batch of %zu "
                       "frames (2 per frame expected)", f0_rows, n_rows, want / 2);
    }
    if (s->curve_used + want > s->curve_cap) {
        size_t cap = 2 * (s->curve_used + want);
        float *a = realloc(s->f0, cap * sizeof *a);
        s->f0 = a != NULL ? a : s->f0;
        float *b = a != NULL ? realloc(s->n, cap * sizeof *b) : NULL;
        s->n = b != NULL ? b : s->n;
        if (a == NULL || b == NULL) {
            return ck_fail(err, CK_E_MEMORY, "prosody: cannot hold %zu curve values", cap);
        }
        s->curve_cap = cap;
    }
    memcpy(s->f0 + s->curve_used, f0, want * sizeof *f0);
    memcpy(s->n + s->curve_used, n, want * sizeof *n);
    for (size_t j = 0, at = s->curve_used; j < count; j++) {
        s->curve_at[members[j]] = at;
        const int32_t *d = s->durations + s->row_of[members[j]];
        for (size_t t = 0; t < s->window[members[j]].n_ids; t++) {
            at += 2 * (size_t)d[t];
        }
    }
    s->curve_used += want;
    return CK_OK;
}

/* Writes the rows of batch b (left in the arena by the executor) straight to where each of its
 * sequences lies in the output: row_of[i] rows past the rows already appended. A prosody run also
 * keeps the window's durations (int32 bits), for the word times of its records, and its curves. */
static int put_batch_rows(session *s, const size_t *members, size_t count, ck_error *err)
{
    const float *rows = ck_executor_rows(s->model->executor, s->output_buffer, NULL);
    int rc = rows != NULL ? CK_OK : ck_fail(err, CK_E_ARG, "encode: the batch left no rows");
    for (size_t j = 0; rc == CK_OK && j < count; j++) {
        const float *mine = rows + s->batch_offsets[j] * s->cols;
        size_t n = s->window[members[j]].n_ids;
        rc = ck_output_put_rows(s->output, s->row_of[members[j]], mine, n, err);
        if (s->durations != NULL) {
            memcpy(s->durations + s->row_of[members[j]], mine, n * sizeof *s->durations);
        }
    }
    return rc == CK_OK && s->curves ? keep_batch_curves(s, members, count, err) : rc;
}

/* Runs one packed batch: a prosody run first hands the executor each member's style row and the
 * speed. */
static int run_batch(session *s, const size_t *members, size_t count, ck_error *err)
{
    ck_executor *ex = s->model->executor;
    int rc = CK_OK;
    for (size_t j = 0; s->voice != NULL && j < count; j++) {
        ck_prosody_style(s->voice, s->window[members[j]].phonemes,
                         s->style + j * CK_PROSODY_STYLE_COLS);
        s->speeds[j] = (float)s->opt->speed;
    }
    if (s->voice != NULL) {
        rc = ck_executor_set_sequence_inputs(ex, s->style, count, CK_PROSODY_STYLE_COLS, s->speeds,
                                             err);
    }
    return rc == CK_OK ? ck_executor_run(ex, s->batch_ids, s->batch_offsets, count,
                                         s->output_buffer, NULL, 0,
                                         s->opt->progress ? progress_tick : NULL, s, err)
                       : rc;
}

/* Appends sequence i of the window: a prosody record with its frames and word times. */
static int append_sequence(session *s, size_t i, ck_error *err)
{
    const ck_sequence *q = &s->window[i];
    if (s->voice == NULL) {
        return ck_output_append(s->output, NULL, q->n_ids, q->line, q->chunk, q->chunks,
                                q->phonemes, err);
    }
    const int32_t *d = s->durations + s->row_of[i];
    unsigned long long frames = 0;
    for (size_t t = 0; t < q->n_ids; t++) {
        frames += (unsigned long long)d[t];
    }
    size_t n_words = 0;
    int rc = ck_prosody_words(q->phonemes, d, q->n_ids, s->words, CK_READER_MAX_PHONEMES, &n_words,
                              err);
    n_words = n_words < CK_READER_MAX_PHONEMES ? n_words : CK_READER_MAX_PHONEMES;
    const float *f0 = s->curves ? s->f0 + s->curve_at[i] : NULL;
    const float *n = s->curves ? s->n + s->curve_at[i] : NULL;
    return rc == CK_OK ? ck_output_append_timed(s->output, q->n_ids, q->line, q->chunk, q->chunks,
                                                q->phonemes, frames, s->words, n_words, f0, n, err)
                       : rc;
}

/* Runs the batches of the window (longest first), writes each batch's rows at their final place in
 * the output (input order; no rows are held between batches), appends every sequence's record in
 * input order and commits with `next` (the first sequence not in the window) as the resume mark. */
static int flush_window(session *s, ck_output_mark next, ck_error *err)
{
    size_t n_spans = 0, row = 0;
    for (size_t i = 0; i < s->n_window; i++) {
        s->lengths[i] = s->window[i].n_ids;
        s->seq_ids[i] = s->window[i].ids;
        s->row_of[i] = row; /* rows of the window's earlier sequences, in input order */
        row += s->window[i].n_ids;
    }
    int rc = ck_batch_plan(s->lengths, s->n_window, s->model->params.max_batch_tokens, s->order,
                           s->spans, &n_spans);
    for (size_t b = 0; rc == CK_OK && b < n_spans; b++) {
        const size_t *members = s->order + s->spans[b].first;
        size_t count = s->spans[b].count;
        ck_batch_pack(s->seq_ids, s->lengths, members, count, s->batch_ids, s->batch_offsets);
        rc = ck_model_check_cancel(s->model, "corpus", ck_output_sequences(s->output), err);
        rc = rc == CK_OK ? run_batch(s, members, count, err) : rc;
        if (rc == CK_OK) {
            rc = put_batch_rows(s, members, count, err);
        }
        s->window_rows_put += s->batch_offsets[count];
        progress(s, 0);
    }
    for (size_t i = 0; rc == CK_OK && i < s->n_window; i++) {
        rc = append_sequence(s, i, err);
    }
    for (size_t i = 0; i < s->n_window; i++) {
        free(s->window[i].ids);
        free(s->window[i].phonemes);
    }
    s->n_window = 0;
    s->window_used = 0;
    s->window_rows_put = 0;
    s->curve_used = 0;
    rc = rc == CK_OK ? ck_output_commit(s->output, next, err) : rc;
    s->committed_bytes = s->window_bytes_end;
    progress(s, 0);
    return rc;
}

/* The mark of chunk `chunk` of the line being taken (line_start: the counts before that line),
 * with the counts of the lines before the resume mark added. */
static ck_output_mark mark_at(const session *s, size_t line, size_t chunk)
{
    return (ck_output_mark){line, chunk, s->mark.chunked_lines + s->line_start.chunked_lines,
                            s->mark.dropped_symbols + s->line_start.dropped_symbols};
}

/* Moves the sequences of one line into the window, flushing it first when they would not fit. */
static int take_line(session *s, ck_sequence *seqs, size_t n, ck_error *err)
{
    int rc = CK_OK;
    for (size_t i = 0; i < n; i++) {
        if (rc == CK_OK && (s->window_used + seqs[i].n_ids > s->window_tokens ||
                            s->n_window == s->window_cap)) {
            rc = flush_window(s, mark_at(s, seqs[i].line, seqs[i].chunk), err);
        }
        if (rc != CK_OK) {
            free(seqs[i].ids);
            free(seqs[i].phonemes);
            continue;
        }
        s->window[s->n_window++] = seqs[i];
        s->window_used += seqs[i].n_ids;
    }
    free(seqs);
    return rc;
}

/* Resume: frees the sequences before the mark (already in the output), moving the rest to the
 * front; returns how many remain. */
static size_t drop_done(const session *s, ck_sequence *seqs, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const ck_sequence *q = &seqs[i];
        if (q->line < s->mark.line || (q->line == s->mark.line && q->chunk < s->mark.chunk)) {
            free(q->ids);
            free(q->phonemes);
        } else {
            seqs[kept++] = seqs[i];
        }
    }
    return kept;
}

/* A line the reader rejected: the run stops, or the line is reported and recorded as skipped.
 * (A resumed run never reads the lines before its mark, so none is reported twice.) */
static int bad_line(session *s, ck_error *err)
{
    size_t line = s->line_base + ck_reader_stats_get(s->reader)->lines;
    if (!s->opt->skip_bad_lines) {
        return err->code;
    }
    char why[sizeof err->message];
    snprintf(why, sizeof why, "%s", err->message);
    note(s, "skipped: %s", why);
    ck_error_clear(err);
    return ck_output_skip(s->output, line, why, err);
}

/* Parity mode: says so, and hashes every weight tensor so the end of the run can prove none changed. */
static int parity_begin(session *s, ck_error *err)
{
    char hex[65];
    note(s, "parity mode: 1 thread (scheduler and oneDNN)%s, deterministic kernels",
         s->model->threads != 1 ? ", threads ignored" : "");
    int rc = ck_xray_weights_digest(s->model->weights, &s->weights_sha, hex, err);
    if (rc == CK_OK) {
        note(s, "parity mode: weights sha256 %s (checked again at the end)", hex);
    }
    return rc;
}

static int encode_all(session *s, ck_error *err)
{
    for (;;) {
        ck_sequence *seqs = NULL;
        size_t n = 0;
        s->line_start = *ck_reader_stats_get(s->reader); /* before the next line with content */
        int rc = ck_reader_next(s->reader, &seqs, &n, err);
        if (rc == 0) {
            break;
        }
        size_t kept = rc > 0 ? drop_done(s, seqs, n) : 0;
        if (kept > 0 && !s->encoding) { /* the first line this run encodes: bytes before it were */
            s->encoding = 1;             /* done by the interrupted run (resume) */
            s->resumed_bytes = s->line_start.bytes;
        }
        rc = rc > 0 ? take_line(s, seqs, kept, err) : (rc == CK_E_INPUT ? bad_line(s, err) : rc);
        if (rc != CK_OK) {
            return rc;
        }
        s->window_bytes_end = ck_reader_stats_get(s->reader)->bytes;
        if (s->n_window == 0) {
            s->committed_bytes = s->window_bytes_end;
        }
        progress(s, 0);
    }
    s->line_start = *ck_reader_stats_get(s->reader);
    ck_output_mark end = mark_at(s, s->line_base + s->line_start.lines + 1, 0);
    int rc = s->n_window > 0 ? flush_window(s, end, err) : CK_OK;
    if (rc == CK_OK && s->model->parity) {
        rc = ck_xray_weights_unchanged(s->model->weights, (const unsigned char (*)[32])s->weights_sha,
                                       err);
    }
    return rc == CK_OK ? ck_output_finish(s->output, err) : rc;
}

static void fill_summary(session *s)
{
    ck_corpus_summary *sum = s->summary;
    const ck_reader_stats *st = ck_reader_stats_get(s->reader);
    sum->lines = st->lines;
    sum->sequences = ck_output_sequences(s->output);
    sum->tokens = ck_output_tokens(s->output);
    sum->resumed_tokens = s->resumed_tokens;
    /* a resumed run read only the lines from its mark: the record holds the counts before it */
    sum->chunked_lines = s->mark.chunked_lines + st->chunked_lines;
    sum->skipped_lines = s->resumed_skipped + st->error_lines;
    sum->empty_lines = st->empty_lines;
    sum->dropped_symbols = s->mark.dropped_symbols + st->dropped_symbols;
    sum->seconds = seconds_since(&s->start);
    sum->g2p_seconds = st->g2p_seconds;
    sum->g2p_fallback_words = st->g2p_fallback_words;
}

static void release(session *s)
{
    for (size_t i = 0; i < s->n_window; i++) {
        free(s->window[i].ids);
        free(s->window[i].phonemes);
    }
    free(s->window);
    free(s->lengths);
    free(s->order);
    free(s->seq_ids);
    free(s->row_of);
    free(s->spans);
    free(s->batch_offsets);
    free(s->batch_ids);
    free(s->style);
    free(s->speeds);
    free(s->durations);
    free(s->words);
    free(s->curve_at);
    free(s->f0);
    free(s->n);
    ck_voice_free(s->voice);
    free(s->weights_sha);
    free(s->shard_path);
    ck_output_free(s->output);
    ck_reader_close(s->reader);
    if (s->input != NULL && s->input != stdin) {
        fclose(s->input);
    }
}

/* After a failure: the partial state goes when it can never be resumed (a bad line under stop,
 * a stdin run, or nothing committed by a run that did not continue a record); otherwise it stays
 * and the log says how to continue. */
static void keep_or_discard(session *s, int rc)
{
    if (s->streamed) {
        ck_output_discard(s->output);
        note(s, "a run reading stdin or a pipe cannot be resumed: its partial files beside %s were "
             "removed", s->out_path);
        return;
    }
    if (rc == CK_E_INPUT ||
        (ck_output_commits(s->output) == 0 && !ck_output_resumed(s->output))) {
        ck_output_discard(s->output);
        return;
    }
    note(s, "%zu finished sequences kept in %s.partial: run again with resume on to continue",
         ck_output_sequences(s->output), s->out_path);
}

ck_corpus_params ck_corpus_default_params(void)
{
    ck_corpus_params p;
    memset(&p, 0, sizeof p);
    p.format = CK_INPUT_PHONEMES;
    p.lang = "en-us";
    p.layer = CK_LAYER_FEATURES;
    p.progress_interval = 0.5;
    p.speed = 1.0;
    return p;
}

/* The parameters a run cannot start with (the CLI checks them as usage errors first). */
static int check_params(const ck_corpus_params *p, ck_error *err)
{
    if (p->input == NULL || p->output == NULL || p->input[0] == '\0' || p->output[0] == '\0') {
        return ck_fail(err, CK_E_ARG, "corpus: input and output paths are required");
    }
    if (p->format != CK_INPUT_PHONEMES && p->format != CK_INPUT_IDS && p->format != CK_INPUT_TEXT) {
        return ck_fail(err, CK_E_ARG, "corpus: format %d: expected 0..2", (int)p->format);
    }
    if (p->layer != CK_LAYER_FEATURES && p->layer != CK_LAYER_HIDDEN &&
        p->layer != CK_LAYER_PROSODY) {
        return ck_fail(err, CK_E_ARG, "corpus: layer %d: expected 0 (features), 1 (hidden) or 2 "
                       "(prosody)", (int)p->layer);
    }
    if (p->shard_count > CK_SHARDS_MAX || (p->shard_count > 0 && p->shard_index >= p->shard_count)) {
        return ck_fail(err, CK_E_ARG, "corpus: shard %zu/%zu: expected index < count <= %d",
                       p->shard_index, p->shard_count, CK_SHARDS_MAX);
    }
    if (!(p->progress_interval >= 0.0)) {
        return ck_fail(err, CK_E_ARG, "corpus: progress_interval must be >= 0 seconds");
    }
    return CK_OK;
}

static int run(ck_model *model, const ck_corpus_params *opt, ck_corpus_summary *summary,
               ck_error *err);

/* The job works on its own ck_error (a bad line's message is read back from it to be skipped or
 * returned), so a NULL err or one already holding an earlier error changes nothing of the run;
 * the caller's err then gets this run's error under the first-error-wins rule. */
int ck_run_corpus(ck_model *model, const ck_corpus_params *opt, ck_corpus_summary *summary,
                  ck_error *err)
{
    ck_error own = {CK_OK, ""};
    int rc = run(model, opt, summary, &own);
    return rc == CK_OK ? CK_OK : ck_fail(err, rc, "%s", own.message);
}

static int run(ck_model *model, const ck_corpus_params *opt, ck_corpus_summary *summary,
               ck_error *err)
{
    if (model == NULL || opt == NULL || summary == NULL) {
        return ck_fail(err, CK_E_ARG, "corpus: null %s", model == NULL ? "model"
                                                         : (opt == NULL ? "params" : "summary"));
    }
    ck_corpus_params o = *opt;
    o.lang = o.lang != NULL ? o.lang : "en-us";
    session s;
    memset(&s, 0, sizeof s);
    s.opt = &o;
    s.model = model;
    s.summary = summary;
    memset(summary, 0, sizeof *summary);
    clock_gettime(CLOCK_MONOTONIC, &s.start);
    int rc = check_params(&o, err);
    rc = rc == CK_OK ? prepare(&s, err) : rc;
    if (rc == CK_OK && model->parity) {
        rc = parity_begin(&s, err);
    }
    if (rc == CK_OK) {
        rc = open_io(&s, err);
    }
    if (rc == CK_OK) {
        rc = encode_all(&s, err);
        progress(&s, 1);
        fill_summary(&s);
    }
    if (rc != CK_OK && s.output != NULL) {
        keep_or_discard(&s, rc);
    }
    release(&s);
    return rc;
}
