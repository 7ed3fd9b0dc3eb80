/* output.c - appends feature rows and sequence metadata to durable partial files, commits progress
 * records, resumes from them, and writes the final safetensors file atomically. Owns files;
 * computes nothing. */
#include "output.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output_internal.h"
#include "safetensors.h"

static char *suffixed(const char *path, const char *suffix)
{
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *s = malloc(n);
    if (s != NULL) {
        snprintf(s, n, "%s%s", path, suffix);
    }
    return s;
}

static int alloc_output(ck_output **out, const char *path, size_t cols)
{
    ck_output *o = calloc(1, sizeof *o);
    *out = o;
    if (o == NULL || (o->path = strdup(path)) == NULL ||
        (o->rows_path = suffixed(path, ".partial")) == NULL ||
        (o->seqs_path = suffixed(path, ".partial.seqs")) == NULL ||
        (o->record_path = suffixed(path, ".partial.json")) == NULL ||
        (o->record_tmp = suffixed(path, ".partial.json.tmp")) == NULL ||
        (o->offsets = calloc(64, sizeof *o->offsets)) == NULL ||
        (o->skipped = cJSON_CreateArray()) == NULL) {
        return CK_E_MEMORY;
    }
    o->cap_seqs = 63;
    o->cols = cols;
    return CK_OK;
}

/* A fresh run: the old record goes first, so no record ever describes the truncated files. */
static int open_fresh(ck_output *o, ck_error *err)
{
    if (unlink(o->record_path) != 0 && errno != ENOENT) {
        return ck_fail(err, CK_E_IO, "%s: cannot remove an old progress record: %s",
                       o->record_path, strerror(errno));
    }
    o->rows = fopen(o->rows_path, "w+b");
    o->seqs = o->rows != NULL ? fopen(o->seqs_path, "w+b") : NULL;
    if (o->seqs == NULL) {
        return ck_fail(err, CK_E_IO, "%s: cannot create the partial file beside the output: %s",
                       o->rows == NULL ? o->rows_path : o->seqs_path, strerror(errno));
    }
    return CK_OK;
}

int ck_output_open(ck_output **out, const char *path, size_t cols, const ck_output_identity *id,
                   int resume, ck_output_mark *mark, ck_error *err)
{
    ck_output *o = NULL;
    int rc = CK_OK;
    if (out == NULL || path == NULL || id == NULL || mark == NULL) {
        return ck_fail(err, CK_E_ARG, "output: null out, path, identity or mark");
    }
    *out = NULL;
    if (alloc_output(&o, path, cols) != CK_OK || (o->identity = ck_output_identity_json(id)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
        goto done;
    }
    *mark = (ck_output_mark){1, 0};
    rc = resume ? ck_output_resume(o, mark, err) : open_fresh(o, err);
done:
    if (rc != CK_OK) {
        ck_output_free(o);
        return rc;
    }
    *out = o;
    return CK_OK;
}

int ck_output_grow(ck_output *o, size_t need)
{
    if (need <= o->cap_seqs) {
        return CK_OK;
    }
    size_t cap = o->cap_seqs;
    while (cap < need) {
        cap = cap * 2 + 1;
    }
    int64_t *grown = realloc(o->offsets, (cap + 1) * sizeof *grown);
    if (grown == NULL) {
        return CK_E_MEMORY;
    }
    o->offsets = grown;
    o->cap_seqs = cap;
    return CK_OK;
}

/* One journal entry, exactly as cJSON prints the object inside the final "sequences" array. */
static char *sequence_json(size_t line, size_t chunk, size_t chunks, size_t tokens,
                           const char *phonemes)
{
    cJSON *s = cJSON_CreateObject();
    char *text = NULL;
    if (s != NULL && cJSON_AddNumberToObject(s, "line", (double)line) &&
        cJSON_AddNumberToObject(s, "chunk", (double)chunk) &&
        cJSON_AddNumberToObject(s, "chunks", (double)chunks) &&
        cJSON_AddNumberToObject(s, "tokens", (double)tokens) &&
        cJSON_AddStringToObject(s, "phonemes", phonemes ? phonemes : "")) {
        text = cJSON_PrintUnformatted(s);
    }
    cJSON_Delete(s);
    return text;
}

int ck_output_append(ck_output *o, const float *rows, size_t tokens, size_t line, size_t chunk,
                     size_t chunks, const char *phonemes, ck_error *err)
{
    char *entry = sequence_json(line, chunk, chunks, tokens, phonemes);
    if (entry == NULL || ck_output_grow(o, o->n_seqs + 1) != CK_OK) {
        free(entry);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
    }
    size_t len = strlen(entry);
    int ok = fwrite(rows, sizeof(float) * o->cols, tokens, o->rows) == tokens &&
             fwrite(entry, 1, len, o->seqs) == len && fputc(',', o->seqs) != EOF;
    free(entry);
    if (!ok) {
        return ck_fail(err, CK_E_IO, "%s: writing the partial file failed (disk full?): %s",
                       o->rows_path, strerror(errno));
    }
    o->rows_bytes += tokens * o->cols * sizeof(float);
    o->seqs_bytes += len + 1;
    o->offsets[o->n_seqs + 1] = o->offsets[o->n_seqs] + (int64_t)tokens;
    o->n_seqs++;
    return CK_OK;
}

int ck_output_skip(ck_output *o, size_t line, const char *why, ck_error *err)
{
    cJSON *s = cJSON_CreateObject();
    if (s == NULL || !cJSON_AddNumberToObject(s, "line", (double)line) ||
        !cJSON_AddStringToObject(s, "error", why)) {
        cJSON_Delete(s);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
    }
    cJSON_AddItemToArray(o->skipped, s);
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

/* The journal as the JSON array "[{...},{...}]" (its trailing comma becomes the bracket). */
char *ck_output_journal_array(ck_output *o, ck_error *err)
{
    char *text = malloc(o->seqs_bytes + 3);
    if (text == NULL) {
        ck_fail(err, CK_E_MEMORY, "%s: out of memory for %zu bytes of metadata", o->path,
                o->seqs_bytes);
        return NULL;
    }
    text[0] = '[';
    if (fflush(o->seqs) != 0 || fseek(o->seqs, 0, SEEK_SET) != 0 ||
        fread(text + 1, 1, o->seqs_bytes, o->seqs) != o->seqs_bytes ||
        fseek(o->seqs, 0, SEEK_END) != 0) {
        free(text);
        ck_fail(err, CK_E_IO, "%s: reading the sequence journal failed: %s", o->seqs_path,
                strerror(errno));
        return NULL;
    }
    size_t end = o->seqs_bytes > 0 ? o->seqs_bytes : 1; /* overwrites the trailing comma */
    text[end] = ']';
    text[end + 1] = '\0';
    return text;
}

int ck_output_finish(ck_output *o, ck_error *err)
{
    int rc = CK_OK;
    char *skipped = cJSON_PrintUnformatted(o->skipped);
    char *sequences = skipped != NULL ? ck_output_journal_array(o, err) : NULL;
    ck_st_meta meta[CK_OUTPUT_MAX_META + 2];
    if (sequences == NULL) {
        rc = skipped == NULL ? ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path) : err->code;
        goto done;
    }
    if (fflush(o->rows) != 0) {
        rc = ck_fail(err, CK_E_IO, "%s: flushing the partial file failed (disk full?)", o->rows_path);
        goto done;
    }
    for (size_t i = 0; i < o->n_meta; i++) {
        meta[i] = (ck_st_meta){o->meta_keys[i], o->meta_values[i]};
    }
    meta[o->n_meta] = (ck_st_meta){"sequences", sequences};
    meta[o->n_meta + 1] = (ck_st_meta){"skipped", skipped};
    ck_st_entry entries[2] = {
        {.name = "features", .dtype = CK_ST_F32, .rank = 2,
         .shape = {(size_t)o->offsets[o->n_seqs], o->cols}, .data = NULL, .spool = o->rows,
         .spool_offset = 0},
        {.name = "offsets", .dtype = CK_ST_I64, .rank = 1, .shape = {o->n_seqs + 1},
         .data = o->offsets},
    };
    rc = ck_st_write(o->path, entries, 2, meta, o->n_meta + 2, err);
    if (rc == CK_OK) {
        ck_output_discard(o);
    }
done:
    free(sequences);
    free(skipped);
    return rc;
}

void ck_output_discard(ck_output *o)
{
    if (o != NULL) {
        unlink(o->record_path);
        unlink(o->rows_path);
        unlink(o->seqs_path);
    }
}

size_t ck_output_sequences(const ck_output *o)
{
    return o->n_seqs;
}

size_t ck_output_tokens(const ck_output *o)
{
    return (size_t)o->offsets[o->n_seqs];
}

size_t ck_output_commits(const ck_output *o)
{
    return o->commits;
}

void ck_output_free(ck_output *o)
{
    if (o == NULL) {
        return;
    }
    if (o->rows != NULL) {
        fclose(o->rows);
    }
    if (o->seqs != NULL) {
        fclose(o->seqs);
    }
    for (size_t i = 0; i < o->n_meta; i++) {
        free(o->meta_keys[i]);
        free(o->meta_values[i]);
    }
    cJSON_Delete(o->skipped);
    cJSON_Delete(o->identity);
    free(o->offsets);
    free(o->path);
    free(o->rows_path);
    free(o->seqs_path);
    free(o->record_path);
    free(o->record_tmp);
    free(o);
}
