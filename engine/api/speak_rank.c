/* speak_rank.c - ck_speak_rank_*: one rank of `ckbatch-mpi speak` writing its lines of one .wav
 * and its sidecar in place (docs/distributed.md §1c): the token side plans every line's samples,
 * the ranks' prefix sums place them, each line's samples are pwritten where the single run puts
 * them as it is spoken, rank 0 publishes. Knows no MPI (the front end moves the counts); prints
 * nothing. */
#define _GNU_SOURCE /* open_memstream, fdatasync */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ck_log.h"
#include "file.h"
#include "model_internal.h"
#include "sha256.h"
#include "speak_internal.h"
#include "speak_shard.h"
#include "wav.h"

#ifndef CK_CIRCUITS_SOURCE_DIR
#define CK_CIRCUITS_SOURCE_DIR "circuits"
#endif
/* The token side up to the durations: PL-BERT, the duration encoder and head, no frame-rate op */
#define SPEAK_RANK_TOKEN_CIRCUIT CK_CIRCUITS_SOURCE_DIR "/kokoro_prosody_tokens.json"
#define SPEAK_RANK_MAX_INPUT ((size_t)1 << 30) /* as ck_model_speak_file's */
#define SPEAK_SAMPLES_PER_FRAME 600            /* 24000 Hz / 40 frames per second */

struct ck_speak_rank {
    ck_speak_params p;             /* the caller's (strings not owned) */
    size_t rank, ranks, lo, hi;    /* [lo, hi): the range's 0-based input lines */
    char *raw;                     /* the input as read (its SHA-256 is the identity's), until
                                      layout */
    size_t raw_bytes;
    char *text;                    /* the input split into lines (lines point into it) */
    char **lines, **why;           /* [n_lines]; why: skip_bad_lines' message of a bad line */
    size_t n_lines;
    ck_sequence_set set;           /* the range's sequences (other lines blank) */
    ck_prosody pros;               /* their durations and words, from the token side */
    uint64_t *line_samples;        /* [hi - lo] planned samples of each line (0: no audio) */
    uint64_t *line_start;          /* [hi - lo] its first sample in the whole WAV (layout) */
    size_t *rec_at;                /* [hi - lo + 1] line i's record: records[rec_at[i], [i+1]) */
    char *records;
    size_t records_len;
    ck_speak_identity id;
    ck_wav_format format;
    uint32_t block;                /* bytes per sample */
    unsigned char *header;         /* [header_len] the finished WAV's header */
    size_t header_len;
    unsigned long long samples_total;
    char sha[65];
    char *wav_tmp, *side_path, *side_tmp;
    int wav_fd, side_fd;
    size_t next_line;              /* speak: lines before it were written */
    unsigned char *buf;            /* speak: one line's converted samples */
    size_t buf_cap;
    ck_speak_rank_info *info;      /* speak: the caller's, counted into */
};

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* skip_bad_lines: keeps the reader's message of a bad line for its record, and warns (as
 * ck_model_speak_file does). */
static int on_bad_line(void *ctx, size_t line, const char *message, ck_error *err)
{
    ck_speak_rank *j = ctx;
    j->why[line] = strdup(message);
    ck_log(j->p.lines.log, j->p.lines.log_ctx, CK_LOG_WARNING, "skipped: %s", message);
    return j->why[line] != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
}

/* The input read (kept whole for the identity) and split; the lines outside the range blank. */
static int read_range(ck_speak_rank *j, ck_error *err)
{
    int rc = ck_file_read_all(j->p.input, "speak input", SPEAK_RANK_MAX_INPUT, &j->raw,
                              &j->raw_bytes, err);
    if (rc != CK_OK) {
        return rc;
    }
    j->text = malloc(j->raw_bytes + 1);
    if (j->text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    memcpy(j->text, j->raw, j->raw_bytes + 1);
    j->lines = ck_speak_split_lines(j->text, &j->n_lines);
    j->why = j->p.skip_bad_lines ? calloc(j->n_lines + 1, sizeof *j->why) : NULL;
    if (j->lines == NULL || (j->p.skip_bad_lines && j->why == NULL)) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    ck_speak_params q = j->p;
    q.shard_index = j->rank;
    q.shard_count = j->ranks;
    return ck_speak_shard_plan(&q, j->lines, j->n_lines, NULL, &j->lo, &j->hi, err);
}

/* The range's sequences and their durations through a model of the token circuit, loaded from
 * the speech model's params and freed here (the speech model is loaded after it). */
static int plan_durations(ck_speak_rank *j, const ck_model_params *mp, ck_error *err)
{
    ck_model_params tp = *mp;
    tp.circuit = SPEAK_RANK_TOKEN_CIRCUIT;
    tp.compiled = NULL; /* a library of the speech circuit; the token side is interpreted */
    ck_model *tm = NULL;
    int rc = ck_model_load(&tm, &tp, err);
    rc = rc == CK_OK ? ck_model_tokenize_named(tm, (const char *const *)j->lines, j->n_lines,
                                               &j->p.lines, j->p.input,
                                               j->why != NULL ? on_bad_line : NULL, j, &j->set,
                                               err)
                     : rc;
    rc = rc == CK_OK ? ck_model_prosody(tm, &j->set, j->p.speak.voice, j->p.speak.speed,
                                        &j->pros, err)
                     : rc;
    ck_model_free(tm);
    return rc;
}

/* Each line's planned samples (600 per frame of its chunks' durations) and the counts. */
static int plan_lines(ck_speak_rank *j, ck_speak_rank_info *info, ck_error *err)
{
    size_t n = j->hi - j->lo;
    j->line_samples = calloc(n + 1, sizeof *j->line_samples);
    j->line_start = calloc(n + 1, sizeof *j->line_start);
    j->rec_at = calloc(n + 2, sizeof *j->rec_at);
    if (j->line_samples == NULL || j->line_start == NULL || j->rec_at == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    for (size_t q = 0; q < j->set.n_sequences; q++) {
        size_t line = j->set.line != NULL ? j->set.line[q] : q;
        if (line < j->lo || line >= j->hi) {
            return ck_fail(err, CK_E_BACKEND, "speak: sequence %zu of line %zu, outside the "
                           "range's lines %zu..%zu", q, line, j->lo, j->hi);
        }
        uint64_t frames = j->pros.frame_offsets[q + 1] - j->pros.frame_offsets[q];
        j->line_samples[line - j->lo] += frames * SPEAK_SAMPLES_PER_FRAME;
    }
    memset(info, 0, sizeof *info);
    info->lines = n;
    info->first_line = j->lo;
    for (size_t i = 0; i < n; i++) {
        info->samples += j->line_samples[i];
        int bad = j->why != NULL && j->why[j->lo + i] != NULL;
        info->lines_failed += bad;
        info->lines_skipped += !bad && j->line_samples[i] == 0;
    }
    return CK_OK;
}

int ck_speak_rank_plan(const ck_model_params *model_params, const ck_speak_params *params,
                       size_t rank, size_t ranks, ck_speak_rank **out, ck_speak_rank_info *info,
                       ck_error *err)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (model_params == NULL || params == NULL || out == NULL || info == NULL
        || params->input == NULL || params->output == NULL) {
        return ck_fail(err, CK_E_ARG, "speak rank: null params, input, output, out or info");
    }
    size_t n = strlen(params->output);
    if (ranks == 0 || ranks > CK_SHARDS_MAX || rank >= ranks || params->shard_count != 0
        || params->resume || n < 4 || strcmp(params->output + n - 4, ".wav") != 0) {
        return ck_fail(err, CK_E_ARG, "speak rank: rank %zu of %zu, shard_count %zu, resume %d, "
                       "output %s: expected rank < ranks <= %d, no shard, no resume, a .wav "
                       "output", rank, ranks, params->shard_count, params->resume,
                       params->output, CK_SHARDS_MAX);
    }
    ck_speak_rank *j = calloc(1, sizeof *j);
    if (j == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    double t0 = seconds_now();
    j->p = *params;
    j->rank = rank;
    j->ranks = ranks;
    j->wav_fd = j->side_fd = -1;
    j->format = params->sample_format_f32 ? CK_WAV_F32 : CK_WAV_S16;
    j->block = params->sample_format_f32 ? 4 : 2;
    int rc = read_range(j, err);
    rc = rc == CK_OK ? plan_durations(j, model_params, err) : rc;
    rc = rc == CK_OK ? plan_lines(j, info, err) : rc;
    if (rc != CK_OK) {
        ck_speak_rank_free(j);
        return rc;
    }
    info->plan_seconds = seconds_now() - t0;
    ck_log(params->lines.log, params->lines.log_ctx, CK_LOG_INFO, "speak: lines %zu..%zu of %zu, "
           "%llu samples planned by the token side in %.2f s (its model's load included)",
           j->lo + 1, j->hi, j->n_lines, info->samples, info->plan_seconds);
    *out = j;
    return CK_OK;
}

/* Line i of the range as ck_model_speak will hand it over, from the plan: its sequences from
 * *q on, their words shifted by the chunk's first sample (speech.c's acc_add); words, cw and cs
 * are the caller's scratch. */
static ck_speech_line planned_line(const ck_speak_rank *j, size_t line, size_t *q,
                                   ck_word_time *words, size_t *cw, size_t *cs)
{
    ck_speech_line l = {.line = line, .first_sequence = *q, .words = words, .chunk_words = cw,
                        .chunk_samples = cs};
    cw[0] = cs[0] = 0;
    for (; *q < j->set.n_sequences && j->set.line[*q] == line; (*q)++) {
        double shift = (double)l.samples / CK_SPEECH_SAMPLE_RATE;
        for (size_t w = j->pros.word_offsets[*q]; w < j->pros.word_offsets[*q + 1]; w++) {
            words[l.n_words] = j->pros.words[w];
            words[l.n_words].start += shift; /* NaN stays NaN */
            words[l.n_words].end += shift;
            l.n_words++;
        }
        l.samples += (j->pros.frame_offsets[*q + 1] - j->pros.frame_offsets[*q])
                     * SPEAK_SAMPLES_PER_FRAME;
        l.chunks++;
        cw[l.chunks] = l.n_words;
        cs[l.chunks] = l.samples;
    }
    return l;
}

/* Every line's record of the range at its global sample range, into records; rec_at. */
static int make_records(ck_speak_rank *j, unsigned long long before, ck_error *err)
{
    ck_word_time *words = malloc((j->pros.n_words + 1) * sizeof *words);
    size_t *cw = malloc((j->set.n_sequences + 2) * sizeof *cw);
    size_t *cs = malloc((j->set.n_sequences + 2) * sizeof *cs);
    FILE *f = words && cw && cs ? open_memstream(&j->records, &j->records_len) : NULL;
    int rc = f != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    size_t q = 0;
    for (size_t i = 0; rc == CK_OK && i < j->hi - j->lo; i++) {
        size_t line = j->lo + i;
        j->line_start[i] = before;
        if (fflush(f) != 0) {
            rc = ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
            break;
        }
        j->rec_at[i] = j->records_len;
        if (j->line_samples[i] > 0) {
            ck_speech_line l = planned_line(j, line, &q, words, cw, cs);
            ck_speak_line_record(f, &j->set, &l, NULL, before);
        } else {
            const char *why = j->why != NULL ? j->why[line] : NULL;
            ck_speak_error_record(f, line, why != NULL ? why : "no phonemes");
        }
        before += j->line_samples[i];
    }
    if (f != NULL && (fclose(f) != 0 || j->records == NULL) && rc == CK_OK) {
        rc = ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    j->rec_at[j->hi - j->lo] = j->records_len;
    free(words);
    free(cw);
    free(cs);
    return rc;
}

/* The paths of the two files and their partials. */
static int make_paths(ck_speak_rank *j, ck_error *err)
{
    j->wav_tmp = ck_file_suffixed(j->p.output, ".partial.mpi");
    j->side_path = ck_file_suffixed(j->p.output, ".jsonl");
    j->side_tmp = ck_file_suffixed(j->p.output, ".jsonl.partial.mpi");
    return j->wav_tmp && j->side_path && j->side_tmp
               ? CK_OK : ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
}

/* The WAV header of samples_total and its SHA-256 with the settings record. */
static int make_header(ck_speak_rank *j, ck_error *err)
{
    char version[64];
    snprintf(version, sizeof version, "ckbatch %s", ck_version());
    ck_wav_info wi[2] = {{"ISFT", version}, {"ICMT", j->id.comment}};
    int rc = ck_wav_header(j->format, CK_SPEECH_SAMPLE_RATE, wi, 2, j->samples_total, &j->header,
                           &j->header_len, err);
    ck_sha256_ctx *h = NULL;
    unsigned char digest[32];
    if (rc == CK_OK && (ck_sha256_begin(&h) != CK_OK
                        || ck_sha256_update(h, j->header, j->header_len) != CK_OK
                        || ck_sha256_update(h, j->id.settings, strlen(j->id.settings)) != CK_OK
                        || ck_sha256_peek(h, digest) != CK_OK)) {
        rc = ck_fail(err, CK_E_BACKEND, "speak: SHA-256 of the header failed");
    }
    ck_sha256_free(h);
    if (rc == CK_OK) {
        ck_sha256_hex(digest, j->sha);
    }
    return rc;
}

int ck_speak_rank_layout(ck_speak_rank *j, ck_model *model, unsigned long long samples_before,
                         unsigned long long samples_total, ck_speak_rank_info *info,
                         ck_error *err)
{
    if (j == NULL || model == NULL || info == NULL || j->raw == NULL
        || samples_before > samples_total || info->samples > samples_total - samples_before) {
        return ck_fail(err, CK_E_ARG, "speak rank: layout: null, called twice, or %llu samples "
                       "before and %llu here pass the total %llu", samples_before,
                       info != NULL ? info->samples : 0ULL, samples_total);
    }
    j->samples_total = samples_total;
    int rc = ck_speak_identity_make(model, &j->p, j->raw, j->raw_bytes, &j->id, err);
    free(j->raw);
    j->raw = NULL;
    rc = rc == CK_OK ? make_paths(j, err) : rc;
    rc = rc == CK_OK ? make_header(j, err) : rc;
    rc = rc == CK_OK ? make_records(j, samples_before, err) : rc;
    info->record_bytes = rc == CK_OK ? j->records_len : 0;
    return rc;
}

const char *ck_speak_rank_header_sha256(const ck_speak_rank *j)
{
    return j != NULL ? j->sha : "";
}

/* Creates path at `bytes` (sparse) with head[n] at byte 0, durable. */
static int create_sized(const char *path, unsigned long long bytes, const void *head, size_t n,
                        ck_error *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot create the output being written: %s", path,
                       strerror(errno));
    }
    int ok = ftruncate(fd, (off_t)bytes) == 0 && ck_file_pwrite_all(fd, head, n, 0) == 0
             && fdatasync(fd) == 0;
    int saved = errno;
    close(fd);
    errno = saved;
    return ok ? CK_OK : ck_file_io_failed(path, "sizing the file and writing its header", err);
}

int ck_speak_rank_create(ck_speak_rank *j, unsigned long long record_total, ck_error *err)
{
    if (j == NULL || j->header == NULL || j->rank != 0) {
        return ck_fail(err, CK_E_ARG, "speak rank: create: rank 0 after ck_speak_rank_layout "
                       "only");
    }
    size_t settings = strlen(j->id.settings);
    char *first = malloc(settings + 2);
    if (first == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    memcpy(first, j->id.settings, settings);
    memcpy(first + settings, "\n", 2);
    unsigned long long wav_bytes = j->header_len + j->samples_total * j->block;
    int rc = create_sized(j->wav_tmp, wav_bytes, j->header, j->header_len, err);
    rc = rc == CK_OK ? create_sized(j->side_tmp, settings + 1 + record_total, first,
                                    settings + 1, err)
                     : rc;
    free(first);
    return rc;
}

int ck_speak_rank_open(ck_speak_rank *j, unsigned long long records_before, ck_error *err)
{
    if (j == NULL || j->header == NULL || j->wav_fd >= 0) {
        return ck_fail(err, CK_E_ARG, "speak rank: open: after ck_speak_rank_layout, once");
    }
    j->wav_fd = open(j->wav_tmp, O_RDWR | O_CLOEXEC);
    j->side_fd = open(j->side_tmp, O_RDWR | O_CLOEXEC);
    if (j->wav_fd < 0 || j->side_fd < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot open: %s", j->wav_fd < 0 ? j->wav_tmp
                       : j->side_tmp, strerror(errno));
    }
    unsigned long long at = strlen(j->id.settings) + 1 + records_before;
    return ck_file_pwrite_all(j->side_fd, j->records, j->records_len, at) == 0
               ? CK_OK : ck_file_io_failed(j->side_tmp, "writing the records", err);
}

/* ck_model_speak's callback: the line's record made again from the run must be the planned one
 * (same samples, same word times); then its samples go to their place. */
static int on_line(void *user, const ck_speech_line *l, ck_error *err)
{
    ck_speak_rank *j = user;
    size_t i = l->line - j->lo;
    if (l->line < j->next_line || l->line >= j->hi || j->line_samples[i] == 0) {
        return ck_fail(err, CK_E_BACKEND, "speak: line %zu spoken, not one planned next (from "
                       "line %zu)", l->line, j->next_line);
    }
    char *rec = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&rec, &len);
    if (f == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    ck_speak_line_record(f, &j->set, l, NULL, j->line_start[i]);
    int made = fclose(f) == 0 && rec != NULL;
    size_t want = j->rec_at[i + 1] - j->rec_at[i];
    int same = made && len == want && memcmp(rec, j->records + j->rec_at[i], len) == 0;
    free(rec);
    if (!made) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    if (!same) {
        return ck_fail(err, CK_E_PARITY, "speak: %s:%zu: the speech run gave %zu samples, the "
                       "token side planned %llu (or other word times): its durations differ "
                       "from the plan's, so the line's place in %s is wrong; nothing is "
                       "published", j->p.input, l->line + 1, l->samples,
                       (unsigned long long)j->line_samples[i], j->p.output);
    }
    if (l->samples > j->buf_cap) {
        unsigned char *b = realloc(j->buf, l->samples * j->block);
        if (b == NULL) {
            return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate line %zu's samples", l->line);
        }
        j->buf = b;
        j->buf_cap = l->samples;
    }
    uint64_t clipped = 0;
    int rc = ck_wav_encode(j->format, l->audio, l->samples, j->buf, &clipped, err);
    if (rc == CK_OK && ck_file_pwrite_all(j->wav_fd, j->buf, l->samples * j->block,
                                          j->header_len + j->line_start[i] * j->block) != 0) {
        rc = ck_file_io_failed(j->wav_tmp, "writing the samples", err);
    }
    j->info->clipped += clipped;
    j->info->lines_spoken += rc == CK_OK;
    j->next_line = l->line + 1;
    return rc;
}

int ck_speak_rank_speak(ck_speak_rank *j, ck_model *model, ck_speak_rank_info *info,
                        ck_error *err)
{
    if (j == NULL || model == NULL || info == NULL || j->wav_fd < 0) {
        return ck_fail(err, CK_E_ARG, "speak rank: speak: after ck_speak_rank_open only");
    }
    double t0 = seconds_now();
    j->info = info;
    j->next_line = j->lo;
    info->lines_spoken = 0;
    info->clipped = 0;
    int rc = j->set.n_sequences > 0 ? ck_model_speak(model, &j->set, &j->p.speak, on_line, j, err)
                                    : CK_OK;
    size_t planned = info->lines - info->lines_skipped - info->lines_failed;
    if (rc == CK_OK && info->lines_spoken != planned) {
        rc = ck_fail(err, CK_E_BACKEND, "speak: %zu lines spoken, %zu planned",
                     info->lines_spoken, planned);
    }
    if (rc == CK_OK && (fdatasync(j->wav_fd) != 0 || fdatasync(j->side_fd) != 0)) {
        rc = ck_file_io_failed(j->p.output, "syncing the partial files", err);
    }
    j->info = NULL;
    info->speak_seconds = seconds_now() - t0;
    return rc;
}

int ck_speak_rank_finish(ck_speak_rank *j, ck_error *err)
{
    if (j == NULL || j->rank != 0 || j->wav_tmp == NULL) {
        return ck_fail(err, CK_E_ARG, "speak rank: finish: rank 0 after ck_speak_rank_speak");
    }
    int rc = ck_file_publish(j->wav_tmp, j->p.output, err);
    return rc == CK_OK ? ck_file_publish(j->side_tmp, j->side_path, err) : rc;
}

void ck_speak_rank_discard(ck_speak_rank *j)
{
    if (j != NULL && j->wav_tmp != NULL) {
        unlink(j->wav_tmp);
    }
    if (j != NULL && j->side_tmp != NULL) {
        unlink(j->side_tmp);
    }
}

void ck_speak_rank_free(ck_speak_rank *j)
{
    if (j == NULL) {
        return;
    }
    if (j->wav_fd >= 0) {
        close(j->wav_fd);
    }
    if (j->side_fd >= 0) {
        close(j->side_fd);
    }
    for (size_t i = 0; j->why != NULL && i < j->n_lines; i++) {
        free(j->why[i]);
    }
    ck_sequence_set_free(&j->set);
    ck_prosody_free(&j->pros);
    free(j->why);
    free(j->lines);
    free(j->text);
    free(j->raw);
    free(j->line_samples);
    free(j->line_start);
    free(j->rec_at);
    free(j->records);
    free(j->id.settings);
    free(j->header);
    free(j->wav_tmp);
    free(j->side_path);
    free(j->side_tmp);
    free(j->buf);
    free(j);
}
