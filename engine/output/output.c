/* output.c - appends feature rows, offsets and per-sequence records to durable journals, and writes
 * the final safetensors file atomically from them. Holds nothing per sequence in memory; owns files;
 * computes nothing. (Commit records and resume: output_partial.c.) */
#define _DEFAULT_SOURCE /* flock(2): a lock per open file description, unlike POSIX fcntl locks */
#include "output.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "file.h"
#include "output_internal.h"
#include "safetensors.h"

const char *const ck_output_journal_suffix[CK_J_COUNT] = {".partial", ".partial.seqs",
                                                          ".partial.skipped", ".partial.offsets",
                                                          ".partial.f0", ".partial.n"};
const char *const ck_output_journal_field[CK_J_COUNT] = {"rows_bytes", "seqs_bytes",
                                                         "skipped_bytes", "offsets_bytes",
                                                         "f0_bytes", "n_bytes"};

static int alloc_output(ck_output **out, const char *path, const char *rows_name, size_t cols)
{
    ck_output *o = calloc(1, sizeof *o);
    *out = o;
    if (o == NULL || (o->path = strdup(path)) == NULL ||
        (o->record_path = ck_file_suffixed(path, ".partial.json")) == NULL ||
        (o->record_tmp = ck_file_suffixed(path, ".partial.json.tmp")) == NULL ||
        (o->lock_path = ck_file_suffixed(path, ".partial.lock")) == NULL) {
        return CK_E_MEMORY;
    }
    for (size_t i = 0; i < CK_J_COUNT; i++) {
        if ((o->j[i].path = ck_file_suffixed(path, ck_output_journal_suffix[i])) == NULL) {
            return CK_E_MEMORY;
        }
    }
    o->rows_name = rows_name;
    o->cols = cols;
    o->lock_fd = -1;
    return CK_OK;
}

/* A PATH.tmp.<pid> rest: digits only (ck_st_write's temporary name), not some other file. */
static int pid_suffix(const char *rest)
{
    return rest[0] != '\0' && strspn(rest, "0123456789") == strlen(rest);
}

int ck_output_lock(const char *lock_path, const char *output, int *fd, ck_error *err)
{
    *fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot create the lock file beside the output: %s",
                       lock_path, strerror(errno));
    }
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK, e = errno;
        close(*fd);
        *fd = -1;
        return busy ? ck_fail(err, CK_E_IO, "%s: another ckbatch run is writing this output (%s is "
                              "locked): wait for it or choose another output path", output,
                              lock_path)
                    : ck_fail(err, CK_E_IO, "%s: cannot lock: %s", lock_path, strerror(e));
    }
    return CK_OK;
}

/* Takes PATH.partial.lock before any partial file is touched (ck_output_lock). */
static int take_lock(ck_output *o, ck_error *err)
{
    int rc = ck_output_lock(o->lock_path, o->path, &o->lock_fd, err);
    if (rc != CK_OK) {
        return rc;
    }
    o->locked = 1;
    /* PATH.tmp.<pid> of a run killed while it wrote the final file: with the lock held no other
     * run is writing PATH, so none is in use */
    ck_file_remove_siblings(o->path, ".tmp.", pid_suffix);
    return CK_OK;
}

/* Appends v to the offsets journal as 8 little-endian bytes. 0 on success. */
static int put_offset(ck_journal *jr, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(v >> (8 * i));
    }
    if (fwrite(b, 1, 8, jr->f) != 8) {
        return -1;
    }
    jr->bytes += 8;
    return 0;
}

/* A fresh run: the old record goes first, so no record ever describes the truncated files. */
static int open_fresh(ck_output *o, ck_error *err)
{
    if (unlink(o->record_path) != 0 && errno != ENOENT) {
        return ck_fail(err, CK_E_IO, "%s: cannot remove an old progress record: %s",
                       o->record_path, strerror(errno));
    }
    for (size_t i = 0; i < CK_J_COUNT; i++) {
        if ((o->j[i].f = fopen(o->j[i].path, "w+b")) == NULL) {
            return ck_fail(err, CK_E_IO, "%s: cannot create the partial file beside the output: %s",
                           o->j[i].path, strerror(errno));
        }
    }
    if (put_offset(&o->j[CK_J_OFFSETS], 0) != 0) { /* offsets[0] */
        return ck_fail(err, CK_E_IO, "%s: write failed (disk full?): %s", o->j[CK_J_OFFSETS].path,
                       strerror(errno));
    }
    return CK_OK;
}

int ck_output_open(ck_output **out, const char *path, const char *rows_name, size_t cols,
                   const ck_output_identity *id, ck_output_mode mode, ck_output_mark *mark,
                   ck_error *err)
{
    ck_output *o = NULL;
    int rc = CK_OK;
    if (out == NULL || path == NULL || rows_name == NULL || id == NULL || mark == NULL) {
        return ck_fail(err, CK_E_ARG, "output: null out, path, rows name, identity or mark");
    }
    *out = NULL;
    if (alloc_output(&o, path, rows_name, cols) != CK_OK || (o->identity = ck_output_identity_json(id)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
        goto done;
    }
    *mark = (ck_output_mark){1, 0, 0, 0};
    rc = take_lock(o, err);
    /* no record: nothing was committed (or the run finished); any journals left are replaced */
    o->mode = mode == CK_OUTPUT_RESUME && access(o->record_path, F_OK) != 0 && errno == ENOENT
                  ? CK_OUTPUT_FRESH : mode;
    o->replaced_record = mode == CK_OUTPUT_FRESH && access(o->record_path, F_OK) == 0;
    if (rc == CK_OK) {
        rc = o->mode == CK_OUTPUT_RESUME ? ck_output_resume(o, mark, err) : open_fresh(o, err);
    }
    if (rc == CK_OK && o->mode == CK_OUTPUT_FRESH) {
        rc = ck_output_begin_hashes(o, err);
    }
done:
    if (rc != CK_OK) {
        ck_output_free(o);
        return rc;
    }
    *out = o;
    return CK_OK;
}

/* `object` printed unformatted plus "\n" (cJSON escapes every control character, so the record is
 * one line), malloc'd; deletes object. NULL when out of memory. */
static char *json_line(cJSON *object)
{
    char *text = object != NULL ? cJSON_PrintUnformatted(object) : NULL;
    cJSON_Delete(object);
    size_t len = text != NULL ? strlen(text) : 0;
    char *line = text != NULL ? realloc(text, len + 2) : NULL;
    if (line == NULL) {
        free(text);
        return NULL;
    }
    memcpy(line + len, "\n", 2);
    return line;
}

/* Appends one record line (json_line's, freed here) to journal jr. CK_OK, CK_E_MEMORY or CK_E_IO. */
static int put_json_line(ck_journal *jr, char *line)
{
    if (line == NULL) {
        return CK_E_MEMORY;
    }
    size_t len = strlen(line);
    int ok = fwrite(line, 1, len, jr->f) == len;
    free(line);
    if (!ok) {
        return CK_E_IO;
    }
    jr->bytes += len;
    return CK_OK;
}

/* The fields every "sequences" record starts with; NULL when out of memory. */
static cJSON *sequence_object(size_t line, size_t chunk, size_t chunks, size_t tokens,
                              const char *phonemes)
{
    cJSON *s = cJSON_CreateObject();
    if (s == NULL || !cJSON_AddNumberToObject(s, "line", (double)line) ||
        !cJSON_AddNumberToObject(s, "chunk", (double)chunk) ||
        !cJSON_AddNumberToObject(s, "chunks", (double)chunks) ||
        !cJSON_AddNumberToObject(s, "tokens", (double)tokens) ||
        !cJSON_AddStringToObject(s, "phonemes", phonemes ? phonemes : "")) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

char *ck_output_sequence_line(size_t line, size_t chunk, size_t chunks, size_t tokens,
                              const char *phonemes)
{
    return json_line(sequence_object(line, chunk, chunks, tokens, phonemes));
}

/* {"phonemes":"...","start":s,"end":e} of word w of phonemes (len bytes), or NULL (out of memory,
 * or w outside the string). */
static cJSON *word_object(const char *phonemes, size_t len, const ck_output_word *w)
{
    if (w->start_byte > len || w->bytes > len - w->start_byte) {
        return NULL;
    }
    char *text = malloc(w->bytes + 1);
    cJSON *o = text != NULL ? cJSON_CreateObject() : NULL;
    if (o != NULL) {
        memcpy(text, phonemes + w->start_byte, w->bytes);
        text[w->bytes] = '\0';
    }
    int ok = o != NULL && cJSON_AddStringToObject(o, "phonemes", text) &&
             (w->has_time ? cJSON_AddNumberToObject(o, "start", w->start) &&
                                cJSON_AddNumberToObject(o, "end", w->end)
                          : cJSON_AddNullToObject(o, "start") && cJSON_AddNullToObject(o, "end"));
    free(text);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *ck_output_timed_line(size_t line, size_t chunk, size_t chunks, size_t tokens,
                           const char *phonemes, unsigned long long frames,
                           const ck_output_word *words, size_t n_words)
{
    const char *ps = phonemes ? phonemes : "";
    cJSON *s = sequence_object(line, chunk, chunks, tokens, ps);
    cJSON *list = s != NULL && cJSON_AddNumberToObject(s, "frames", (double)frames)
                      ? cJSON_AddArrayToObject(s, "words") : NULL;
    for (size_t i = 0; list != NULL && i < n_words; i++) {
        cJSON *w = word_object(ps, strlen(ps), &words[i]);
        if (w == NULL || !cJSON_AddItemToArray(list, w)) {
            cJSON_Delete(w);
            list = NULL;
        }
    }
    if (list == NULL) {
        cJSON_Delete(s);
        return NULL;
    }
    return json_line(s);
}

char *ck_output_skip_line(size_t line, const char *why)
{
    cJSON *s = cJSON_CreateObject();
    if (s == NULL || !cJSON_AddNumberToObject(s, "line", (double)line) ||
        !cJSON_AddStringToObject(s, "error", why ? why : "")) {
        cJSON_Delete(s);
        return NULL;
    }
    return json_line(s);
}

static int journal_failed(ck_output *o, int rc, size_t j, ck_error *err)
{
    if (rc == CK_E_MEMORY) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
    }
    return ck_fail(err, CK_E_IO, "%s: writing the partial file failed (disk full?): %s",
                   o->j[j].path, strerror(errno));
}

/* Writes n bytes at byte offset `at` of the rows journal (pwrite: the rows journal is never written
 * through its FILE buffer, so placed rows and appended rows cannot interleave in stdio). 0 or -1. */
static int put_bytes_at(ck_journal *jr, const void *bytes, size_t n, size_t at)
{
    const unsigned char *p = bytes;
    while (n > 0) {
        ssize_t w = pwrite(fileno(jr->f), p, n, (off_t)at);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            if (w == 0) {
                errno = ENOSPC;
            }
            return -1;
        }
        p += w;
        at += (size_t)w;
        n -= (size_t)w;
    }
    return 0;
}

int ck_output_put_rows(ck_output *o, size_t ahead, const void *rows, size_t tokens, ck_error *err)
{
    size_t row_bytes = o->cols * 4; /* f32, or int32 durations */
    if (rows == NULL && tokens > 0) {
        return ck_fail(err, CK_E_ARG, "%s: null rows", o->path);
    }
    if (put_bytes_at(&o->j[CK_J_ROWS], rows, tokens * row_bytes,
                     (o->tokens + ahead) * row_bytes) != 0) {
        return journal_failed(o, CK_E_IO, CK_J_ROWS, err);
    }
    if (o->tokens + ahead + tokens > o->placed) {
        o->placed = o->tokens + ahead + tokens;
    }
    return CK_OK;
}

int ck_output_set_durations(ck_output *o, int curves, ck_error *err)
{
    if (o->cols != 1) {
        return ck_fail(err, CK_E_ARG, "%s: a durations output has one int32 per token, not %zu "
                       "values", o->path, o->cols);
    }
    o->durations = 1;
    o->curves = curves != 0;
    return CK_OK;
}

/* Appends values[count] (f32 little-endian, as the host holds them) to curve journal j. */
static int put_curve(ck_output *o, size_t j, const float *values, size_t count, ck_error *err)
{
    if (count > 0 && fwrite(values, sizeof *values, count, o->j[j].f) != count) {
        return journal_failed(o, CK_E_IO, j, err);
    }
    o->j[j].bytes += count * sizeof *values;
    return CK_OK;
}

/* Appends one sequence whose record is `record` (a json_line, freed here; NULL: out of memory). */
static int append_record(ck_output *o, const void *rows, size_t tokens, size_t line,
                         char *record, ck_error *err)
{
    ck_journal *r = &o->j[CK_J_ROWS];
    int rc = rows != NULL ? ck_output_put_rows(o, 0, rows, tokens, err) : CK_OK;
    if (rc != CK_OK) {
        free(record);
        return rc;
    }
    if (o->tokens + tokens > o->placed) {
        free(record);
        return ck_fail(err, CK_E_ARG, "%s: sequence of line %zu appended without rows, but only "
                       "%zu of its %zu rows were put", o->path, line,
                       o->placed > o->tokens ? o->placed - o->tokens : 0, tokens);
    }
    r->bytes += tokens * o->cols * 4;
    if (put_offset(&o->j[CK_J_OFFSETS], (uint64_t)(o->tokens + tokens)) != 0) {
        free(record);
        return journal_failed(o, CK_E_IO, CK_J_OFFSETS, err);
    }
    rc = put_json_line(&o->j[CK_J_SEQS], record);
    if (rc != CK_OK) {
        return journal_failed(o, rc, CK_J_SEQS, err);
    }
    o->tokens += tokens;
    o->n_seqs++;
    return CK_OK;
}

int ck_output_append(ck_output *o, const float *rows, size_t tokens, size_t line, size_t chunk,
                     size_t chunks, const char *phonemes, ck_error *err)
{
    return append_record(o, rows, tokens, line,
                         ck_output_sequence_line(line, chunk, chunks, tokens, phonemes), err);
}

int ck_output_append_timed(ck_output *o, size_t tokens, size_t line, size_t chunk, size_t chunks,
                           const char *phonemes, unsigned long long frames,
                           const ck_output_word *words, size_t n_words, const float *f0,
                           const float *n, ck_error *err)
{
    if (!o->durations) {
        return ck_fail(err, CK_E_ARG, "%s: timed records belong to a durations output", o->path);
    }
    if (o->curves && frames > 0 && (f0 == NULL || n == NULL)) {
        return ck_fail(err, CK_E_ARG, "%s: line %zu: null f0 or n for %llu frames", o->path, line,
                       frames);
    }
    char *record = ck_output_timed_line(line, chunk, chunks, tokens, phonemes, frames, words,
                                        n_words);
    if (record == NULL) {
        return ck_fail(err, CK_E_ARG, "%s: line %zu: a word outside its phoneme string (or out of "
                       "memory)", o->path, line);
    }
    /* the curves first: a failed write leaves the record unappended, and the commit that would
     * name the curve bytes never comes */
    int rc = o->curves ? put_curve(o, CK_J_F0, f0, 2 * (size_t)frames, err) : CK_OK;
    rc = rc == CK_OK && o->curves ? put_curve(o, CK_J_N, n, 2 * (size_t)frames, err) : rc;
    if (rc != CK_OK) {
        free(record);
        return rc;
    }
    return append_record(o, NULL, tokens, line, record, err);
}

int ck_output_skip(ck_output *o, size_t line, const char *why, ck_error *err)
{
    int rc = put_json_line(&o->j[CK_J_SKIPPED], ck_output_skip_line(line, why));
    if (rc != CK_OK) {
        return journal_failed(o, rc, CK_J_SKIPPED, err);
    }
    o->last_skip_line = line > o->last_skip_line ? line : o->last_skip_line;
    o->skipped++;
    return CK_OK;
}

int ck_output_meta(ck_output *o, const char *key, const char *value, ck_error *err)
{
    if (o->n_meta == CK_OUTPUT_MAX_META) {
        return ck_fail(err, CK_E_ARG, "%s: more than %d metadata entries", o->path,
                       CK_OUTPUT_MAX_META);
    }
    char *k = strdup(key), *v = strdup(value ? value : "");
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
    }
    o->meta_keys[o->n_meta] = k;
    o->meta_values[o->n_meta] = v;
    o->n_meta++;
    return CK_OK;
}

/* A tensor [rows] (cols 0) or [rows, cols] whose bytes are journal jr from its start. */
static ck_st_entry spooled(const char *name, ck_dtype dtype, const ck_journal *jr, size_t rows,
                           size_t cols)
{
    ck_st_entry e = {.name = name, .dtype = dtype, .rank = cols ? 2 : 1, .shape = {rows, cols},
                     .data = NULL, .spool = jr->f, .spool_offset = 0};
    return e;
}

/* Little-endian value of the `bytes`-byte integer at p. */
static uint64_t le_at(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* frame_offsets of a durations output into tmp: 0, then after each sequence the running sum of
 * its int32 durations, read back from the offsets and rows journals in pieces (nothing per
 * sequence held in memory). 0, or -1 with errno set. */
static int write_frame_offsets(const ck_output *o, FILE *tmp, uint64_t *total)
{
    enum { PIECE = 1024 };
    unsigned char offs[8 * PIECE], rows[4 * PIECE], b[8];
    int offs_fd = fileno(o->j[CK_J_OFFSETS].f), rows_fd = fileno(o->j[CK_J_ROWS].f);
    uint64_t frames = 0, token = 0;
    for (size_t s = 0; s <= o->n_seqs; s += PIECE) {
        size_t n = o->n_seqs + 1 - s < PIECE ? o->n_seqs + 1 - s : PIECE;
        if (ck_file_pread_all(offs_fd, offs, 8 * n, 8 * (unsigned long long)s) != 0) {
            return -1;
        }
        for (size_t k = 0; k < n; k++) {
            for (uint64_t end = le_at(offs + 8 * k, 8); token < end;) {
                size_t m = end - token < PIECE ? (size_t)(end - token) : PIECE;
                if (ck_file_pread_all(rows_fd, rows, 4 * m, 4 * token) != 0) {
                    return -1;
                }
                for (size_t t = 0; t < m; t++) {
                    frames += (uint64_t)(int64_t)(int32_t)le_at(rows + 4 * t, 4);
                }
                token += m;
            }
            for (int i = 0; i < 8; i++) {
                b[i] = (unsigned char)(frames >> (8 * i));
            }
            if (fwrite(b, 1, 8, tmp) != 8) {
                return -1;
            }
        }
    }
    *total = frames;
    return fflush(tmp) == 0 ? 0 : -1;
}

int ck_output_finish(ck_output *o, ck_error *err)
{
    ck_st_meta meta[CK_OUTPUT_MAX_META + 2];
    for (size_t i = 0; i < CK_J_COUNT; i++) {
        if (fflush(o->j[i].f) != 0) {
            return ck_fail(err, CK_E_IO, "%s: flushing the partial file failed (disk full?)",
                           o->j[i].path);
        }
    }
    for (size_t i = 0; i < o->n_meta; i++) {
        meta[i] = (ck_st_meta){o->meta_keys[i], o->meta_values[i]};
    }
    meta[o->n_meta] = (ck_st_meta){"sequences_format", "jsonl"};
    meta[o->n_meta + 1] = (ck_st_meta){"skipped_format", "jsonl"};
    FILE *frames = o->durations ? tmpfile() : NULL;
    uint64_t total_frames = 0;
    if (o->durations && (frames == NULL || write_frame_offsets(o, frames, &total_frames) != 0)) {
        int e = errno;
        if (frames != NULL) {
            fclose(frames);
        }
        return ck_fail(err, CK_E_IO, "%s: writing frame_offsets to a temporary file failed: %s",
                       o->path, strerror(e));
    }
    for (size_t j = CK_J_F0; o->curves && j <= CK_J_N; j++) {
        if (o->j[j].bytes != 8 * total_frames) { /* 2 f32 values per frame */
            fclose(frames);
            return ck_fail(err, CK_E_FORMAT, "%s: %s holds %zu bytes, not 2 values for each of "
                           "the %llu frames", o->path, o->j[j].path, o->j[j].bytes,
                           (unsigned long long)total_frames);
        }
    }
    ck_st_entry rows = o->durations
                           ? spooled(o->rows_name, CK_DTYPE_I32, &o->j[CK_J_ROWS], o->tokens, 0)
                           : spooled(o->rows_name, CK_DTYPE_F32, &o->j[CK_J_ROWS], o->tokens, o->cols);
    ck_st_entry frame_offsets = {.name = "frame_offsets", .dtype = CK_DTYPE_I64, .rank = 1,
                                 .shape = {o->n_seqs + 1}, .spool = frames};
    /* features and hidden: the four tensors they always had; durations adds frame_offsets, and
     * f0 and n when the circuit gives them */
    ck_st_entry entries[7];
    size_t n = 0;
    entries[n++] = rows;
    entries[n++] = spooled("offsets", CK_DTYPE_I64, &o->j[CK_J_OFFSETS], o->n_seqs + 1, 0);
    if (o->durations) {
        entries[n++] = frame_offsets;
    }
    if (o->curves) {
        entries[n++] = spooled("f0", CK_DTYPE_F32, &o->j[CK_J_F0], 2 * total_frames, 0);
        entries[n++] = spooled("n", CK_DTYPE_F32, &o->j[CK_J_N], 2 * total_frames, 0);
    }
    entries[n++] = spooled("sequences", CK_DTYPE_U8, &o->j[CK_J_SEQS], o->j[CK_J_SEQS].bytes, 0);
    entries[n++] = spooled("skipped", CK_DTYPE_U8, &o->j[CK_J_SKIPPED], o->j[CK_J_SKIPPED].bytes, 0);
    int rc = ck_st_write(o->path, entries, n, meta, o->n_meta + 2, err);
    if (frames != NULL) {
        fclose(frames);
    }
    if (rc == CK_OK) {
        ck_output_discard(o);
    }
    return rc;
}

void ck_output_discard(ck_output *o)
{
    if (o != NULL && o->locked) { /* only the run holding the lock may remove the partial files */
        unlink(o->record_path);
        for (size_t i = 0; i < CK_J_COUNT; i++) {
            unlink(o->j[i].path);
        }
        unlink(o->lock_path);
    }
}

size_t ck_output_sequences(const ck_output *o)
{
    return o->n_seqs;
}

size_t ck_output_tokens(const ck_output *o)
{
    return o->tokens;
}

size_t ck_output_commits(const ck_output *o)
{
    return o->commits;
}

size_t ck_output_skipped(const ck_output *o)
{
    return o->skipped;
}

int ck_output_resumed(const ck_output *o)
{
    return o->mode == CK_OUTPUT_RESUME;
}

int ck_output_replaced_record(const ck_output *o)
{
    return o->replaced_record;
}

void ck_output_free(ck_output *o)
{
    if (o == NULL) {
        return;
    }
    for (size_t i = 0; i < CK_J_COUNT; i++) {
        if (o->j[i].f != NULL) {
            fclose(o->j[i].f);
        }
        free(o->j[i].path);
        ck_sha256_free(o->j[i].sha);
    }
    for (size_t i = 0; i < o->n_meta; i++) {
        free(o->meta_keys[i]);
        free(o->meta_values[i]);
    }
    cJSON_Delete(o->identity);
    free(o->path);
    free(o->record_path);
    free(o->record_tmp);
    if (o->lock_fd >= 0) {
        close(o->lock_fd);
    }
    free(o->lock_path);
    free(o);
}
