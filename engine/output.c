/* output.c - spools feature rows and metadata, then writes one safetensors file atomically.
 * Owns files; computes nothing. */
#include "output.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safetensors.h"

#define CK_OUTPUT_MAX_META 16

struct ck_output {
    char *path;
    FILE *spool;
    size_t cols;
    int64_t *offsets;       /* [n_seqs + 1] */
    size_t n_seqs, cap_seqs;
    cJSON *sequences;       /* [{"line", "chunk", "chunks", "tokens", "phonemes"}] */
    cJSON *skipped;         /* [{"line", "error"}] */
    char *meta_keys[CK_OUTPUT_MAX_META];
    char *meta_values[CK_OUTPUT_MAX_META];
    size_t n_meta;
};

/* An unlinked temporary file in the directory of `path`, so the final copy stays on one disk. */
static FILE *open_spool(const char *path)
{
    size_t n = strlen(path);
    char *name = malloc(n + 16);
    if (name == NULL) {
        return NULL;
    }
    snprintf(name, n + 16, "%s.spool.XXXXXX", path);
    int fd = mkstemp(name);
    FILE *f = NULL;
    if (fd >= 0) {
        unlink(name);
        f = fdopen(fd, "w+b");
        if (f == NULL) {
            close(fd);
        }
    }
    free(name);
    return f;
}

int ck_output_open(ck_output **out, const char *path, size_t cols, ck_error *err)
{
    ck_output *o = calloc(1, sizeof *o);
    if (o == NULL || (o->path = strdup(path)) == NULL ||
        (o->offsets = calloc(64, sizeof *o->offsets)) == NULL ||
        (o->sequences = cJSON_CreateArray()) == NULL || (o->skipped = cJSON_CreateArray()) == NULL) {
        ck_output_free(o);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    o->cap_seqs = 63;
    o->cols = cols;
    o->spool = open_spool(path);
    if (o->spool == NULL) {
        ck_output_free(o);
        return ck_fail(err, CK_E_IO, "%s: cannot create a temporary file in its directory", path);
    }
    *out = o;
    return CK_OK;
}

static int grow_offsets(ck_output *o)
{
    if (o->n_seqs < o->cap_seqs) {
        return CK_OK;
    }
    size_t cap = o->cap_seqs * 2 + 1;
    int64_t *grown = realloc(o->offsets, (cap + 1) * sizeof *grown);
    if (grown == NULL) {
        return CK_E_MEMORY;
    }
    o->offsets = grown;
    o->cap_seqs = cap;
    return CK_OK;
}

int ck_output_append(ck_output *o, const float *rows, size_t tokens, size_t line, size_t chunk,
                     size_t chunks, const char *phonemes, ck_error *err)
{
    if (grow_offsets(o) != CK_OK) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
    }
    if (fwrite(rows, sizeof(float) * o->cols, tokens, o->spool) != tokens) {
        return ck_fail(err, CK_E_IO, "%s: writing the feature spool failed (disk full?)", o->path);
    }
    cJSON *s = cJSON_CreateObject();
    if (s == NULL || !cJSON_AddNumberToObject(s, "line", (double)line) ||
        !cJSON_AddNumberToObject(s, "chunk", (double)chunk) ||
        !cJSON_AddNumberToObject(s, "chunks", (double)chunks) ||
        !cJSON_AddNumberToObject(s, "tokens", (double)tokens) ||
        !cJSON_AddStringToObject(s, "phonemes", phonemes ? phonemes : "")) {
        cJSON_Delete(s);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
    }
    cJSON_AddItemToArray(o->sequences, s);
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

int ck_output_finish(ck_output *o, ck_error *err)
{
    int rc = CK_OK;
    char *sequences = cJSON_PrintUnformatted(o->sequences);
    char *skipped = cJSON_PrintUnformatted(o->skipped);
    ck_st_meta meta[CK_OUTPUT_MAX_META + 2];
    if (sequences == NULL || skipped == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
        goto done;
    }
    if (fflush(o->spool) != 0) {
        rc = ck_fail(err, CK_E_IO, "%s: flushing the feature spool failed (disk full?)", o->path);
        goto done;
    }
    for (size_t i = 0; i < o->n_meta; i++) {
        meta[i] = (ck_st_meta){o->meta_keys[i], o->meta_values[i]};
    }
    meta[o->n_meta] = (ck_st_meta){"sequences", sequences};
    meta[o->n_meta + 1] = (ck_st_meta){"skipped", skipped};
    size_t tokens = (size_t)o->offsets[o->n_seqs];
    ck_st_entry entries[2] = {
        {.name = "features", .dtype = CK_ST_F32, .rank = 2, .shape = {tokens, o->cols},
         .data = NULL, .spool = o->spool, .spool_offset = 0},
        {.name = "offsets", .dtype = CK_ST_I64, .rank = 1, .shape = {o->n_seqs + 1},
         .data = o->offsets},
    };
    rc = ck_st_write(o->path, entries, 2, meta, o->n_meta + 2, err);
done:
    free(sequences);
    free(skipped);
    return rc;
}

size_t ck_output_sequences(const ck_output *o)
{
    return o->n_seqs;
}

size_t ck_output_tokens(const ck_output *o)
{
    return (size_t)o->offsets[o->n_seqs];
}

void ck_output_free(ck_output *o)
{
    if (o == NULL) {
        return;
    }
    if (o->spool != NULL) {
        fclose(o->spool);
    }
    for (size_t i = 0; i < o->n_meta; i++) {
        free(o->meta_keys[i]);
        free(o->meta_values[i]);
    }
    cJSON_Delete(o->sequences);
    cJSON_Delete(o->skipped);
    free(o->offsets);
    free(o->path);
    free(o);
}
