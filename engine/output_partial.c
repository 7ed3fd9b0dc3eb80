/* output_partial.c - the durable half of the output: progress records written atomically at
 * commits, and resuming from one (validate identity, truncate to the committed sizes, restore the
 * sequences and skipped lines). Never writes the final file. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output_internal.h"

#define CK_RECORD_VERSION 1
#define CK_RECORD_MAX_BYTES (64u << 20)

cJSON *ck_output_identity_json(const ck_output_identity *id)
{
    cJSON *j = cJSON_CreateObject();
    if (j == NULL || !cJSON_AddStringToObject(j, "input_sha256", id->input_sha256) ||
        !cJSON_AddNumberToObject(j, "input_bytes", (double)id->input_bytes) ||
        !cJSON_AddStringToObject(j, "options", id->options) ||
        !cJSON_AddStringToObject(j, "weights", id->weights)) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static int flush_sync(FILE *f)
{
    return fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -1;
}

/* The record for the state appended so far, with `next` as the mark; NULL when out of memory. */
static char *record_text(const ck_output *o, ck_output_mark next)
{
    cJSON *r = cJSON_CreateObject();
    cJSON *id = cJSON_Duplicate(o->identity, 1), *skipped = cJSON_Duplicate(o->skipped, 1);
    char *text = NULL;
    if (r != NULL && id != NULL && skipped != NULL) {
        cJSON_AddNumberToObject(r, "version", CK_RECORD_VERSION);
        cJSON_AddItemToObject(r, "identity", id);
        cJSON_AddItemToObject(r, "skipped", skipped);
        id = skipped = NULL;
        double v[] = {(double)o->cols, (double)o->n_seqs, (double)o->offsets[o->n_seqs],
                      (double)o->rows_bytes, (double)o->seqs_bytes, (double)next.line,
                      (double)next.chunk};
        const char *k[] = {"cols", "sequences", "tokens", "rows_bytes", "seqs_bytes", "next_line",
                           "next_chunk"};
        int ok = 1;
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            ok = ok && cJSON_AddNumberToObject(r, k[i], v[i]) != NULL;
        }
        text = ok ? cJSON_PrintUnformatted(r) : NULL;
    }
    cJSON_Delete(id);
    cJSON_Delete(skipped);
    cJSON_Delete(r);
    return text;
}

/* fsync of the directory holding path, so the rename survives a power cut. Best effort. */
static void sync_dir(const char *path)
{
    char *dir = strdup(path);
    if (dir == NULL) {
        return;
    }
    char *slash = strrchr(dir, '/');
    const char *name = slash == NULL ? "." : (slash == dir ? "/" : (*slash = '\0', dir));
    int fd = open(name, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int ck_output_commit(ck_output *o, ck_output_mark next, ck_error *err)
{
    if (flush_sync(o->rows) != 0 || flush_sync(o->seqs) != 0) {
        return ck_fail(err, CK_E_IO, "%s: flush/fsync of the partial files failed (disk full?): %s",
                       o->rows_path, strerror(errno));
    }
    char *text = record_text(o, next);
    if (text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->record_path);
    }
    FILE *f = fopen(o->record_tmp, "wb");
    size_t len = strlen(text);
    int ok = f != NULL && fwrite(text, 1, len, f) == len && flush_sync(f) == 0;
    int saved = errno;
    ok = (f == NULL || fclose(f) == 0) && ok && rename(o->record_tmp, o->record_path) == 0;
    free(text);
    if (!ok) {
        unlink(o->record_tmp);
        return ck_fail(err, CK_E_IO, "%s: writing the progress record failed (disk full?): %s",
                       o->record_path, strerror(errno ? errno : saved));
    }
    sync_dir(o->record_path);
    o->commits++;
    return CK_OK;
}

/* Reads a whole small file into a NUL-terminated buffer; NULL when it cannot (errno set). */
static char *slurp(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    char *text = f != NULL ? malloc(max + 1) : NULL;
    size_t n = text != NULL ? fread(text, 1, max + 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    if (text != NULL && n > max) {
        free(text);
        errno = EFBIG;
        return NULL;
    }
    if (text != NULL) {
        text[n] = '\0';
    }
    return text;
}

/* Field `key` of the record as a size; CK_E_FORMAT naming it when absent or not one. */
static int record_size(const ck_output *o, const cJSON *r, const char *key, size_t *out,
                       ck_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9007199254740992.0 ||
        v->valuedouble != (double)(size_t)v->valuedouble) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"%s\": expected a non-negative integer",
                       o->record_path, key);
    }
    *out = (size_t)v->valuedouble;
    return CK_OK;
}

/* The record's identity must equal this run's, field by field. */
static int check_identity(const ck_output *o, const cJSON *r, ck_error *err)
{
    const cJSON *had = cJSON_GetObjectItemCaseSensitive(r, "identity");
    if (!cJSON_IsObject(had)) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"identity\": expected an object", o->record_path);
    }
    const char *fields[] = {"input_sha256", "input_bytes", "options", "weights"};
    for (size_t i = 0; i < 4; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(had, fields[i]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(o->identity, fields[i]);
        if (a == NULL || !cJSON_Compare(a, b, 1)) {
            char *was = a != NULL ? cJSON_PrintUnformatted(a) : NULL;
            char *now = cJSON_PrintUnformatted(b);
            ck_fail(err, CK_E_ARG, "--resume: identity field \"%s\" differs from the interrupted "
                    "run's (was %.80s, now %.80s): start again without --resume", fields[i],
                    was ? was : "absent", now ? now : "?");
            free(was);
            free(now);
            return CK_E_ARG;
        }
    }
    return CK_OK;
}

typedef struct {
    size_t cols, sequences, tokens, rows_bytes, seqs_bytes, next_line, next_chunk;
} record;

static int parse_record(const ck_output *o, const cJSON *r, record *rec, ck_error *err)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(r, "version");
    if (!cJSON_IsNumber(version) || version->valuedouble != CK_RECORD_VERSION) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"version\": expected %d", o->record_path,
                       CK_RECORD_VERSION);
    }
    int rc = check_identity(o, r, err);
    size_t *dst[] = {&rec->cols, &rec->sequences, &rec->tokens, &rec->rows_bytes, &rec->seqs_bytes,
                     &rec->next_line, &rec->next_chunk};
    const char *k[] = {"cols", "sequences", "tokens", "rows_bytes", "seqs_bytes", "next_line",
                       "next_chunk"};
    for (size_t i = 0; rc == CK_OK && i < 7; i++) {
        rc = record_size(o, r, k[i], dst[i], err);
    }
    if (rc == CK_OK && rec->cols != o->cols) {
        rc = ck_fail(err, CK_E_ARG, "--resume: field \"cols\": record has %zu, this run %zu",
                     rec->cols, o->cols);
    }
    if (rc == CK_OK && (rec->tokens > SIZE_MAX / 4 / o->cols ||
                        rec->rows_bytes != rec->tokens * o->cols * sizeof(float))) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: field \"rows_bytes\": %zu is not tokens x cols x 4",
                     o->record_path, rec->rows_bytes);
    }
    return rc;
}

/* Opens `path` for update and cuts it to `bytes`; it must hold at least that many. */
static FILE *reopen_cut(const char *path, size_t bytes, const char *field, ck_error *err)
{
    FILE *f = fopen(path, "r+b");
    if (f == NULL) {
        ck_fail(err, CK_E_IO, "--resume: cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || ftell(f) < 0 || (size_t)ftell(f) < bytes ||
        ftruncate(fileno(f), (off_t)bytes) != 0 || fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        ck_fail(err, CK_E_FORMAT, "%s: shorter than the record's \"%s\" (%zu bytes)", path, field,
                bytes);
        return NULL;
    }
    return f;
}

/* Rebuilds offsets from the journal's "tokens"; it must list rec->sequences summing rec->tokens. */
static int restore_sequences(ck_output *o, const record *rec, ck_error *err)
{
    o->seqs_bytes = rec->seqs_bytes;
    ck_error quiet = {0};
    char *text = ck_output_journal_array(o, &quiet);
    cJSON *arr = text != NULL ? cJSON_Parse(text) : NULL;
    free(text);
    int rc = cJSON_IsArray(arr) && (size_t)cJSON_GetArraySize(arr) == rec->sequences
                 ? ck_output_grow(o, rec->sequences)
                 : ck_fail(err, CK_E_FORMAT, "%s: field \"sequences\": the journal does not hold "
                           "%zu sequences", o->record_path, rec->sequences);
    const cJSON *s;
    size_t i = 0;
    cJSON *walk = rc == CK_OK ? arr : NULL;
    cJSON_ArrayForEach(s, walk) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "tokens");
        o->offsets[i + 1] = o->offsets[i] + (cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0);
        i++;
    }
    cJSON_Delete(arr);
    if (rc == CK_OK && (size_t)o->offsets[rec->sequences] != rec->tokens) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: field \"tokens\": the journal sums to %lld, not %zu",
                     o->record_path, (long long)o->offsets[rec->sequences], rec->tokens);
    }
    o->n_seqs = rc == CK_OK ? rec->sequences : 0;
    return rc == CK_E_MEMORY ? ck_fail(err, rc, "%s: out of memory", o->path) : rc;
}

/* Keeps the record's skipped lines before the mark (later ones are read again). */
static int restore_skipped(ck_output *o, const cJSON *r, size_t next_line, ck_error *err)
{
    const cJSON *skipped = cJSON_GetObjectItemCaseSensitive(r, "skipped"), *s;
    if (!cJSON_IsArray(skipped)) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"skipped\": expected an array", o->record_path);
    }
    cJSON_ArrayForEach(s, skipped) {
        const cJSON *line = cJSON_GetObjectItemCaseSensitive(s, "line");
        if (!cJSON_IsNumber(line) || line->valuedouble >= (double)next_line) {
            continue;
        }
        cJSON *copy = cJSON_Duplicate(s, 1);
        if (copy == NULL || !cJSON_AddItemToArray(o->skipped, copy)) {
            cJSON_Delete(copy);
            return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->path);
        }
    }
    return CK_OK;
}

int ck_output_resume(ck_output *o, ck_output_mark *mark, ck_error *err)
{
    char *text = slurp(o->record_path, CK_RECORD_MAX_BYTES);
    if (text == NULL) {
        return ck_fail(err, CK_E_IO, "--resume: no progress record %s to resume from: %s",
                       o->record_path, strerror(errno));
    }
    cJSON *r = cJSON_Parse(text);
    free(text);
    record rec = {0};
    int rc = cJSON_IsObject(r) ? parse_record(o, r, &rec, err)
                               : ck_fail(err, CK_E_FORMAT, "%s: not a JSON object", o->record_path);
    if (rc == CK_OK && ((o->rows = reopen_cut(o->rows_path, rec.rows_bytes, "rows_bytes", err)) == NULL ||
                        (o->seqs = reopen_cut(o->seqs_path, rec.seqs_bytes, "seqs_bytes", err)) == NULL)) {
        rc = err->code;
    }
    if (rc == CK_OK) {
        o->rows_bytes = rec.rows_bytes;
        rc = restore_sequences(o, &rec, err);
    }
    if (rc == CK_OK) {
        rc = restore_skipped(o, r, rec.next_line, err);
    }
    if (rc == CK_OK && rec.next_line == 0) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: field \"next_line\": must be at least 1", o->record_path);
    }
    *mark = (ck_output_mark){rec.next_line, rec.next_chunk};
    cJSON_Delete(r);
    return rc;
}
