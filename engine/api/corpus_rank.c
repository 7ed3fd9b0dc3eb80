/* corpus_rank.c - one rank of ckbatch-mpi's in-place run (ck_rank_*, include/ckbatch.h): the plan
 * of the rank's range (reader and G2P into memory), the layout of the one output file from the
 * ranks' counts, and the encoding (rows pwritten in place, a progress record per window); the
 * file, records and lock are output/rank_file.c's. Links no MPI (the front end moves the
 * counts); prints nothing. */
#define _GNU_SOURCE /* fdatasync, fseeko */
#include "model_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batcher.h"
#include "corpus_job.h"
#include "file.h"
#include "output.h"
#include "rank_file.h"
#include "reader.h"
#include "safetensors.h"
#include "sha256.h"
#include "shard.h"

/* ---- the plan: the range through the reader, kept in memory ---- */

static void warn_log(void *ctx, const char *message)
{
    const ck_rank_job *j = ctx;
    ck_log(j->opt.log, j->opt.log_ctx, CK_LOG_WARNING, "warning: %s", message);
}

static int put_meta(void *ctx, const char *key, const char *value, ck_error *err)
{
    ck_rank_job *j = ctx;
    if (j->n_meta == CK_RANK_MAX_META) {
        return ck_fail(err, CK_E_ARG, "%s: more than %d metadata entries", j->opt.output,
                       CK_RANK_MAX_META);
    }
    char *k = strdup(key), *v = strdup(value != NULL ? value : "");
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", j->opt.output);
    }
    j->meta_keys[j->n_meta] = k;
    j->meta_values[j->n_meta++] = v;
    return CK_OK;
}

/* Appends one sequence's ids, end and record to the plan. 0, or -1 when out of memory. */
static int plan_sequence(ck_rank_job *j, const ck_sequence *q)
{
    if (j->n_ids + q->n_ids > j->ids_cap) {
        size_t cap = j->ids_cap ? j->ids_cap : 4096;
        while (cap < j->n_ids + q->n_ids) {
            cap *= 2;
        }
        int32_t *ids = realloc(j->ids, cap * sizeof *ids);
        if (ids == NULL) {
            return -1;
        }
        j->ids = ids;
        j->ids_cap = cap;
    }
    if (j->n_seqs == j->seqs_cap) {
        size_t cap = j->seqs_cap ? 2 * j->seqs_cap : 256;
        size_t *ends = realloc(j->seq_end, cap * sizeof *ends);
        if (ends == NULL) {
            return -1;
        }
        j->seq_end = ends;
        j->seqs_cap = cap;
    }
    char *line = ck_output_sequence_line(q->line, q->chunk, q->chunks, q->n_ids, q->phonemes);
    if (line == NULL) {
        return -1;
    }
    ck_strbuf_puts(&j->seq_text, line);
    free(line);
    memcpy(j->ids + j->n_ids, q->ids, q->n_ids * sizeof *q->ids);
    j->n_ids += q->n_ids;
    j->seq_end[j->n_seqs++] = j->n_ids;
    return j->seq_text.failed ? -1 : 0;
}

/* A line the reader rejected: under stop the plan ends with its message (as a single run's);
 * under skip it is logged and becomes a "skipped" record, as a single run does. */
static int plan_bad_line(ck_rank_job *j, const ck_reader *r, ck_error *err)
{
    size_t line = j->info.first_line - 1 + ck_reader_stats_get(r)->lines;
    if (!j->opt.skip_bad_lines) {
        j->info.first_bad_line = line;
        return err->code;
    }
    char why[sizeof err->message];
    snprintf(why, sizeof why, "%s", err->message);
    rank_note(j, "skipped: %s", why);
    ck_error_clear(err);
    char *text = ck_output_skip_line(line, why);
    if (text != NULL) {
        ck_strbuf_puts(&j->skipped_text, text);
    }
    free(text);
    return text == NULL || j->skipped_text.failed
               ? ck_fail(err, CK_E_MEMORY, "%s: out of memory planning the range", j->opt.input)
               : CK_OK;
}

static int plan_lines(ck_rank_job *j, ck_reader *r, ck_error *err)
{
    for (;;) {
        ck_sequence *seqs = NULL;
        size_t n = 0;
        int rc = ck_reader_next(r, &seqs, &n, err);
        if (rc == 0) {
            return CK_OK;
        }
        if (rc == CK_E_INPUT) {
            rc = plan_bad_line(j, r, err);
        } else if (rc > 0) {
            int ok = 1;
            for (size_t i = 0; ok && i < n; i++) {
                ok = plan_sequence(j, &seqs[i]) == 0;
            }
            ck_sequences_free(seqs, n);
            rc = ok ? CK_OK : ck_fail(err, CK_E_MEMORY, "%s: out of memory planning the range",
                                      j->opt.input);
        }
        if (rc != CK_OK) {
            return rc;
        }
    }
}

/* The plan's SHA-256: a resumed rank continues only over the very sequences it planned before. */
static int plan_digest(ck_rank_job *j, ck_error *err)
{
    ck_sha256_ctx *c = NULL;
    unsigned char d[32];
    int ok = ck_sha256_begin(&c) == CK_OK &&
             ck_sha256_update(c, j->ids, j->n_ids * sizeof *j->ids) == CK_OK &&
             ck_sha256_update(c, j->seq_text.data, j->seq_text.len) == CK_OK &&
             ck_sha256_update(c, j->skipped_text.data, j->skipped_text.len) == CK_OK &&
             ck_sha256_peek(c, d) == CK_OK;
    ck_sha256_free(c);
    if (!ok) {
        return ck_fail(err, CK_E_BACKEND, "%s: SHA-256 of the plan failed", j->opt.input);
    }
    ck_sha256_hex(d, j->plan_sha);
    return CK_OK;
}

static int plan_file(ck_rank_job *j, FILE *in, ck_error *err)
{
    ck_shard_range range;
    ck_reader *r = NULL;
    int rc = ck_shard_split_file(in, j->opt.input, j->rank, j->ranks, &range, err);
    if (rc == CK_OK && fseeko(in, (off_t)range.start, SEEK_SET) != 0) {
        rc = ck_fail(err, CK_E_IO, "%s: cannot seek to byte %llu: %s", j->opt.input, range.start,
                     strerror(errno));
    }
    if (rc != CK_OK) {
        return rc;
    }
    j->info.first_line = range.first_line;
    j->info.byte_start = range.start;
    j->info.byte_end = range.end;
    rank_note(j, "input bytes %llu..%llu, lines %zu..%zu (%zu lines)", range.start, range.end,
         range.first_line, range.first_line + range.lines - (range.lines > 0), range.lines);
    ck_reader_options ro = ck_corpus_reader_options(&j->opt, j->model, warn_log, j);
    rc = ck_reader_open_range(&r, in, j->opt.input, &ro, range.start, range.end - range.start,
                              range.first_line, err);
    rc = rc == CK_OK ? ck_corpus_meta_each(&j->opt, j->model, r, 0, put_meta, j, err) : rc;
    rc = rc == CK_OK ? plan_lines(j, r, err) : rc;
    if (r != NULL) {
        const ck_reader_stats *st = ck_reader_stats_get(r);
        j->info.lines = st->lines;
        j->info.empty_lines = st->empty_lines;
        j->info.chunked_lines = st->chunked_lines;
        j->info.skipped_lines = st->error_lines;
        j->info.dropped_symbols = st->dropped_symbols;
        j->info.g2p_seconds = st->g2p_seconds;
    }
    ck_reader_close(r);
    return rc;
}

static int job_paths(ck_rank_job *j)
{
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".partial.rank-%05zu-of-%05zu.json", j->rank, j->ranks);
    j->file_path = ck_file_suffixed(j->opt.output, ".partial.mpi");
    j->job_record = ck_file_suffixed(j->opt.output, ".partial.mpi.json");
    j->rank_record = ck_file_suffixed(j->opt.output, suffix);
    j->lock_path = ck_file_suffixed(j->opt.output, ".partial.lock");
    return j->file_path && j->job_record && j->rank_record && j->lock_path ? CK_OK : CK_E_MEMORY;
}

static int check_plan_params(const ck_model *model, const ck_corpus_params *p, size_t rank,
                             size_t ranks, ck_rank_job **out, ck_rank_plan_info *info,
                             ck_error *err)
{
    if (model == NULL || p == NULL || out == NULL || info == NULL || p->input == NULL ||
        p->output == NULL || p->input[0] == '\0' || p->output[0] == '\0') {
        return ck_fail(err, CK_E_ARG, "rank plan: null model, params, input, output, out or info");
    }
    if (ranks == 0 || ranks > CK_SHARDS_MAX || rank >= ranks) {
        return ck_fail(err, CK_E_ARG, "rank %zu/%zu: expected 0 <= rank < ranks <= %d", rank,
                       ranks, CK_SHARDS_MAX);
    }
    if (strcmp(p->input, "-") == 0 || p->shard_count != 0) {
        return ck_fail(err, CK_E_ARG, "rank plan: needs a regular input file and no shard_count "
                       "(the ranks are the shards)");
    }
    if (p->format != CK_INPUT_PHONEMES && p->format != CK_INPUT_IDS && p->format != CK_INPUT_TEXT) {
        return ck_fail(err, CK_E_ARG, "rank plan: format %d: expected 0..2", (int)p->format);
    }
    if (p->layer != CK_LAYER_FEATURES && p->layer != CK_LAYER_HIDDEN) {
        /* a prosody record holds word times known only after its batch ran, but a rank places
         * every record before any batch: use --shard I/N and merge instead */
        return ck_fail(err, CK_E_ARG, "rank plan: layer %s: ranks write features or hidden only "
                       "(for prosody use shards and merge)", ck_corpus_layer_name(p->layer));
    }
    return CK_OK;
}

int ck_rank_plan(ck_model *model, const ck_corpus_params *params, size_t rank, size_t ranks,
                 ck_rank_job **out, ck_rank_plan_info *info, ck_error *err)
{
    int rc = check_plan_params(model, params, rank, ranks, out, info, err);
    if (rc != CK_OK) {
        return rc;
    }
    *out = NULL;
    memset(info, 0, sizeof *info);
    ck_rank_job *j = calloc(1, sizeof *j);
    if (j == NULL) {
        return ck_fail(err, CK_E_MEMORY, "rank plan: out of memory");
    }
    j->model = model;
    j->weights_identity = ck_weights_identity(model->weights);
    j->opt = *params;
    j->opt.lang = j->opt.lang != NULL ? j->opt.lang : "en-us";
    j->rank = rank;
    j->ranks = ranks;
    j->fd = j->lock_fd = -1;
    j->output_buffer = ck_model_buffer(model, j->opt.layer);
    rc = j->output_buffer >= 0 ? CK_OK
                               : ck_fail(err, CK_E_CIRCUIT, "%s: no \"hidden\" output for "
                                         "layer hidden", model->circuit.path);
    if (rc == CK_OK && job_paths(j) != CK_OK) {
        rc = ck_fail(err, CK_E_MEMORY, "rank plan: out of memory");
    }
    FILE *in = rc == CK_OK ? fopen(j->opt.input, "rb") : NULL;
    if (rc == CK_OK && in == NULL) {
        rc = ck_fail(err, CK_E_IO, "%s: cannot open input: %s", j->opt.input, strerror(errno));
    }
    if (rc == CK_OK) {
        j->cols = model->circuit.buffers[j->output_buffer].cols;
        ck_corpus_options_identity(&j->opt, model, j->options, sizeof j->options);
        rc = plan_file(j, in, err);
    }
    if (in != NULL) {
        fclose(in);
    }
    rc = rc == CK_OK ? plan_digest(j, err) : rc;
    j->info.counts = (ck_rank_counts){j->n_seqs, j->n_ids, j->seq_text.len, j->skipped_text.len};
    *info = j->info;
    if (rc != CK_OK) {
        ck_rank_job_free(j);
        return rc;
    }
    *out = j;
    return CK_OK;
}

/* ---- the layout: the header every rank builds alike, and this rank's places ---- */

static int fits(unsigned long long a, unsigned long long b, unsigned long long c)
{
    return a <= c && b <= c - a;
}

int ck_rank_layout(ck_rank_job *j, const ck_rank_counts *before, const ck_rank_counts *total,
                   ck_error *err)
{
    if (j == NULL || before == NULL || total == NULL) {
        return ck_fail(err, CK_E_ARG, "rank layout: null job or counts");
    }
    const ck_rank_counts *own = &j->info.counts;
    if (!fits(before->sequences, own->sequences, total->sequences) ||
        !fits(before->tokens, own->tokens, total->tokens) ||
        !fits(before->seq_bytes, own->seq_bytes, total->seq_bytes) ||
        !fits(before->skipped_bytes, own->skipped_bytes, total->skipped_bytes)) {
        return ck_fail(err, CK_E_ARG, "rank %zu/%zu: layout: the counts before this rank plus its "
                       "own exceed the totals", j->rank, j->ranks);
    }
    unsigned long long row_bytes = j->cols * sizeof(float);
    if (total->tokens > (unsigned long long)(SIZE_MAX / 2) / row_bytes ||
        total->sequences > (unsigned long long)(SIZE_MAX / 16)) {
        return ck_fail(err, CK_E_SIZE, "rank layout: %llu tokens, %llu sequences: too large",
                       total->tokens, total->sequences);
    }
    j->before = *before;
    j->total = *total;
    ck_st_meta meta[CK_RANK_MAX_META + 2];
    for (size_t i = 0; i < j->n_meta; i++) {
        meta[i] = (ck_st_meta){j->meta_keys[i], j->meta_values[i]};
    }
    meta[j->n_meta] = (ck_st_meta){"sequences_format", "jsonl"};
    meta[j->n_meta + 1] = (ck_st_meta){"skipped_format", "jsonl"};
    const char *rows_name = j->opt.layer == CK_LAYER_HIDDEN ? "hidden" : "features";
    ck_st_entry e[4] = {
        {.name = rows_name, .dtype = CK_DTYPE_F32, .rank = 2,
         .shape = {(size_t)total->tokens, j->cols}},
        {.name = "offsets", .dtype = CK_DTYPE_I64, .rank = 1, .shape = {(size_t)total->sequences + 1}},
        {.name = "sequences", .dtype = CK_DTYPE_U8, .rank = 1, .shape = {(size_t)total->seq_bytes}},
        {.name = "skipped", .dtype = CK_DTYPE_U8, .rank = 1, .shape = {(size_t)total->skipped_bytes}},
    };
    free(j->header);
    j->header = NULL;
    int rc = ck_st_header(e, 4, meta, j->n_meta + 2, &j->header, &j->header_len, err);
    unsigned char d[32];
    if (rc == CK_OK && ck_sha256(j->header, j->header_len, d) != CK_OK) {
        rc = ck_fail(err, CK_E_BACKEND, "rank layout: SHA-256 of the header failed");
    }
    if (rc != CK_OK) {
        return rc;
    }
    ck_sha256_hex(d, j->header_sha);
    unsigned long long data = j->header_len, rows = total->tokens * row_bytes;
    unsigned long long offsets = (total->sequences + 1) * 8;
    j->rows_at = data + before->tokens * row_bytes;
    j->offsets_at = data + rows + before->sequences * 8;
    j->seqs_at = data + rows + offsets + before->seq_bytes;
    j->skipped_at = data + rows + offsets + total->seq_bytes + before->skipped_bytes;
    j->file_bytes = data + rows + offsets + total->seq_bytes + total->skipped_bytes;
    return CK_OK;
}

const char *ck_rank_header_sha256(const ck_rank_job *j)
{
    return j != NULL ? j->header_sha : "";
}

/* ---- encoding: windows of batches, rows in place, a record per window ---- */

typedef struct {
    size_t *lengths, *order, *batch_offsets;
    const int32_t **seq_ids; /* [cap] where sequence k of the window starts in the job's ids */
    ck_batch_span *spans;
    int32_t *batch_ids;
    size_t cap, window_tokens;
} window_buffers;

static void window_free(window_buffers *w)
{
    free(w->lengths);
    free(w->order);
    free(w->seq_ids);
    free(w->batch_offsets);
    free(w->spans);
    free(w->batch_ids);
}

static int window_alloc(window_buffers *w, size_t max_batch)
{
    w->window_tokens = max_batch * CK_RANK_WINDOW_BATCHES;
    w->cap = w->window_tokens / 2 + 1; /* every sequence has at least [0, 0] */
    w->lengths = calloc(w->cap, sizeof *w->lengths);
    w->order = calloc(w->cap, sizeof *w->order);
    w->seq_ids = calloc(w->cap, sizeof *w->seq_ids);
    w->batch_offsets = calloc(w->cap + 1, sizeof *w->batch_offsets);
    w->spans = calloc(w->cap, sizeof *w->spans);
    w->batch_ids = calloc(max_batch, sizeof *w->batch_ids);
    return w->lengths && w->order && w->seq_ids && w->batch_offsets && w->spans && w->batch_ids
               ? 0
               : -1;
}

static size_t seq_start(const ck_rank_job *j, size_t i)
{
    return i > 0 ? j->seq_end[i - 1] : 0;
}

/* One batch: sequences first + members[0..count) packed, run, and each one's rows pwritten at
 * its final place. */
static int run_batch(ck_rank_job *j, window_buffers *w, size_t first, const size_t *members,
                     size_t count, ck_error *err)
{
    ck_batch_pack(w->seq_ids, w->lengths, members, count, w->batch_ids, w->batch_offsets);
    ck_model *m = j->model;
    int rc = ck_model_check_cancel(m, "corpus", j->done_seqs, err);
    rc = rc == CK_OK ? ck_executor_run(m->executor, w->batch_ids, w->batch_offsets, count,
                                       j->output_buffer, NULL, 0, NULL, NULL, err)
                     : rc;
    const float *rows = rc == CK_OK ? ck_executor_rows(m->executor, j->output_buffer, NULL) : NULL;
    if (rc == CK_OK && rows == NULL) {
        rc = ck_fail(err, CK_E_ARG, "encode: the batch left no rows");
    }
    size_t row_bytes = j->cols * sizeof(float);
    for (size_t k = 0; rc == CK_OK && k < count; k++) {
        size_t i = first + members[k], n = w->batch_offsets[k + 1] - w->batch_offsets[k];
        unsigned long long at = j->rows_at + (unsigned long long)seq_start(j, i) * row_bytes;
        if (ck_file_pwrite_all(j->fd, rows + w->batch_offsets[k] * j->cols, n * row_bytes, at) != 0) {
            rc = ck_file_io_failed(j->file_path, "writing rows", err);
        }
    }
    j->encoded_tokens += rc == CK_OK ? w->batch_offsets[count] : 0;
    return rc;
}

/* Sequences [first, first + n) as one window: batches longest first, then the commit. */
static int run_window(ck_rank_job *j, window_buffers *w, size_t first, size_t n, ck_error *err)
{
    size_t n_spans = 0;
    for (size_t k = 0; k < n; k++) {
        w->lengths[k] = j->seq_end[first + k] - seq_start(j, first + k);
        w->seq_ids[k] = j->ids + seq_start(j, first + k);
    }
    int rc = ck_batch_plan(w->lengths, n, j->model->params.max_batch_tokens, w->order, w->spans,
                           &n_spans);
    for (size_t b = 0; rc == CK_OK && b < n_spans; b++) {
        rc = run_batch(j, w, first, w->order + w->spans[b].first, w->spans[b].count, err);
    }
    if (rc == CK_OK && fdatasync(j->fd) != 0) {
        rc = ck_file_io_failed(j->file_path, "fdatasync", err);
    }
    if (rc == CK_OK) {
        j->done_seqs = first + n;
        j->done_tokens = j->seq_end[first + n - 1];
        rc = ck_rank_commit(j, err);
    }
    return rc;
}

int ck_rank_encode(ck_rank_job *j, ck_error *err)
{
    if (j == NULL || j->fd < 0) {
        return ck_fail(err, CK_E_ARG, "rank encode: after ck_rank_open only");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    window_buffers w = {0};
    int rc = window_alloc(&w, j->model->params.max_batch_tokens) == 0
                 ? CK_OK : ck_fail(err, CK_E_MEMORY, "encode: out of memory for a window");
    for (size_t i = j->done_seqs; rc == CK_OK && i < j->n_seqs;) {
        size_t n = 0, used = 0;
        while (i + n < j->n_seqs && n < w.cap &&
               used + (j->seq_end[i + n] - seq_start(j, i + n)) <= w.window_tokens) {
            used += j->seq_end[i + n] - seq_start(j, i + n);
            n++;
        }
        rc = run_window(j, &w, i, n, err);
        i += n;
    }
    window_free(&w);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    j->encode_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return rc;
}

size_t ck_rank_encoded_tokens(const ck_rank_job *j)
{
    return j != NULL ? j->encoded_tokens : 0;
}

double ck_rank_encode_seconds(const ck_rank_job *j)
{
    return j != NULL ? j->encode_seconds : 0.0;
}

void ck_rank_job_free(ck_rank_job *j)
{
    if (j == NULL) {
        return;
    }
    if (j->fd >= 0) {
        close(j->fd);
    }
    if (j->lock_fd >= 0) {
        close(j->lock_fd);
    }
    for (size_t i = 0; i < j->n_meta; i++) {
        free(j->meta_keys[i]);
        free(j->meta_values[i]);
    }
    free(j->ids);
    free(j->seq_end);
    ck_strbuf_free(&j->seq_text);
    ck_strbuf_free(&j->skipped_text);
    free(j->header);
    free(j->file_path);
    free(j->job_record);
    free(j->rank_record);
    free(j->lock_path);
    free(j);
}
