/* speak_merge.c - ck_merge_speak_shards: the shards of `ckbatch speak --shard I/N` joined into the
 * files one unsharded run writes (WAV samples through ck_wav_join, the sidecar's records with
 * their sample ranges shifted). Checks before it writes; prints nothing. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ck_error.h"
#include "ck_log.h"
#include "file.h"
#include "speak_shard.h"
#include "wav.h"

#define SIDECAR_MAX ((size_t)1 << 32)

/* One shard as its sidecar (or a directory's records file) describes it. */
typedef struct {
    const char *path;        /* as given: the WAV (one file) or the records file (directory) */
    char *side_path;         /* the sidecar */
    char *text;              /* the sidecar's bytes */
    size_t settings_len;     /* text[0, settings_len) is the settings record without its entry */
    char *records;           /* the line records, after the settings line */
    size_t index, count, first_line, lines;
    unsigned long long byte_start, byte_end;
    uint64_t samples;        /* one file: the samples its records hold */
} shard_in;

/* Reads one shard's sidecar and its "shard" entry. */
static int read_shard(shard_in *s, int one_file, ck_error *err)
{
    size_t n = strlen(s->path) + 8;
    if ((s->side_path = malloc(n)) == NULL) {
        return ck_fail(err, CK_E_MEMORY, "merge: cannot allocate");
    }
    snprintf(s->side_path, n, one_file ? "%s.jsonl" : "%s", s->path);
    int rc = ck_file_read_all(s->side_path, "speak sidecar", SIDECAR_MAX, &s->text, NULL, err);
    if (rc != CK_OK) {
        return rc;
    }
    char *nl = strchr(s->text, '\n');
    char *key = NULL;
    for (char *k = s->text; nl != NULL && (k = strstr(k, CK_SPEAK_SHARD_KEY)) != NULL && k < nl;
         k++) {
        key = k;
    }
    int at = 0;
    if (strncmp(s->text, "{\"settings\":true,", 17) != 0 || key == NULL
        || sscanf(key, CK_SPEAK_SHARD_KEY "\"index\":%zu,\"count\":%zu,\"first_line\":%zu,"
                  "\"lines\":%zu,\"byte_start\":%llu,\"byte_end\":%llu}}%n", &s->index, &s->count,
                  &s->first_line, &s->lines, &s->byte_start, &s->byte_end, &at) != 6
        || key + at != nl) {
        return ck_fail(err, CK_E_FORMAT, "%s: not the sidecar of a `speak --shard` run (its first "
                       "record has no \"shard\" entry last)", s->side_path);
    }
    s->settings_len = (size_t)(key - s->text);
    s->records = nl + 1;
    return CK_OK;
}

/* Counts a shard's records (each must be one of its lines) and the samples they hold. */
static int count_records(shard_in *s, ck_error *err)
{
    size_t records = 0;
    for (char *r = s->records, *nl; (nl = strchr(r, '\n')) != NULL; r = nl + 1, records++) {
        unsigned long long line = 0, start = 0, end = 0;
        if (sscanf(r, "{\"line\":%llu,", &line) != 1 || line + 1 < s->first_line
            || line + 1 >= s->first_line + s->lines) {
            return ck_fail(err, CK_E_FORMAT, "%s: record %zu (\"%.40s\") is not one of lines "
                           "%zu..%zu of shard %zu/%zu", s->side_path, records + 1, r,
                           s->first_line - 1, s->first_line + s->lines - 2, s->index, s->count);
        }
        if (sscanf(r, "{\"line\":%llu,\"start_sample\":%llu,\"end_sample\":%llu,", &line, &start,
                   &end) == 3) {
            s->samples += end - start;
        }
    }
    return records == s->lines
               ? CK_OK : ck_fail(err, CK_E_FORMAT, "%s: %zu records for the %zu lines of shard "
                                 "%zu/%zu", s->side_path, records, s->lines, s->index, s->count);
}

/* A shard's settings record without its entry, parsed (NULL when it is not JSON). */
static cJSON *parse_settings(const shard_in *s)
{
    char *text = malloc(s->settings_len + 2);
    if (text == NULL) {
        return NULL;
    }
    memcpy(text, s->text, s->settings_len);
    memcpy(text + s->settings_len, "}", 2);
    cJSON *j = cJSON_Parse(text);
    free(text);
    return j;
}

/* Names the first settings field of b that differs from a's. */
static int settings_differ(const shard_in *a, const shard_in *b, ck_error *err)
{
    cJSON *ja = parse_settings(a), *jb = parse_settings(b);
    const char *field = "settings";
    for (const cJSON *i = ja != NULL ? ja->child : NULL; i != NULL; i = i->next) {
        if (!cJSON_Compare(i, cJSON_GetObjectItemCaseSensitive(jb, i->string), 1)) {
            field = i->string;
            break;
        }
    }
    int rc = ck_fail(err, CK_E_ARG, "shard %zu/%zu (%s): field \"%s\" differs from shard 0's (%s): "
                     "every shard must run the same input, weights, voice and options", b->index,
                     b->count, b->side_path, field, a->side_path);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return rc;
}

/* The error for missing shard i of count, saying whether a directory's journal of it shows an
 * unfinished run. */
static int missing_shard(const char *output, int one_file, size_t i, size_t count, size_t n,
                         ck_error *err)
{
    char base[4096], journal[4200];
    snprintf(base, sizeof base, "%s/timestamps.jsonl", output);
    ck_shard_path(journal, sizeof journal - 8, base, i, count);
    strcat(journal, ".partial");
    int unfinished = !one_file && access(journal, F_OK) == 0;
    return ck_fail(err, CK_E_ARG, "shard %zu/%zu is missing (%zu of %zu shards given)%s%s: run "
                   "`speak --shard %zu/%zu%s` first", i, count, n, count,
                   unfinished ? "; unfinished: " : "", unfinished ? journal : "", i, count,
                   unfinished ? " --resume" : "");
}

/* Puts the shards in index order (by[i] is shard i; by has room for n) and checks that they are
 * 0..N-1 of one split of one input, run with one set of settings. */
static int order_shards(const char *output, int one_file, shard_in *s, size_t n, shard_in **by,
                        ck_error *err)
{
    size_t count = s[0].count;
    for (size_t i = 0; i < n; i++) {
        if (s[i].count != count || s[i].index >= count) {
            return ck_fail(err, CK_E_ARG, "shard %zu/%zu (%s): not of the split of shard %zu/%zu "
                           "(%s)", s[i].index, s[i].count, s[i].path, s[0].index, count, s[0].path);
        }
        if (s[i].index < n && by[s[i].index] != NULL) {
            return ck_fail(err, CK_E_ARG, "shard %zu/%zu given twice: %s and %s", s[i].index,
                           count, by[s[i].index]->path, s[i].path);
        }
        if (s[i].index < n) {
            by[s[i].index] = &s[i];
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (i >= n || by[i] == NULL) { /* n < count: a shard is missing */
            return missing_shard(output, one_file, i, count, n, err);
        }
    }
    for (size_t i = 0; i < n; i++) {
        const shard_in *a = by[0], *b = by[i], *prev = by[i > 0 ? i - 1 : 0];
        if (b->settings_len != a->settings_len || memcmp(a->text, b->text, a->settings_len) != 0) {
            return settings_differ(a, b, err);
        }
        size_t line = i > 0 ? prev->first_line + prev->lines : 1;
        unsigned long long byte = i > 0 ? prev->byte_end : 0;
        if (b->first_line != line || b->byte_start != byte) {
            return ck_fail(err, CK_E_ARG, "shard %zu/%zu (%s): starts at line %zu, byte %llu; "
                           "expected line %zu, byte %llu (shards of another input?)", b->index,
                           b->count, b->path, b->first_line, b->byte_start, line, byte);
        }
    }
    return CK_OK;
}

/* One shard's records onto f, start_sample and end_sample shifted by `shift`. */
static void write_records(FILE *f, const shard_in *s, uint64_t shift)
{
    for (const char *r = s->records, *nl; (nl = strchr(r, '\n')) != NULL; r = nl + 1) {
        unsigned long long line = 0, start = 0, end = 0;
        int at = 0;
        if (shift > 0 && sscanf(r, "{\"line\":%llu,\"start_sample\":%llu,\"end_sample\":%llu,%n",
                                &line, &start, &end, &at) == 3 && at > 0) {
            fprintf(f, "{\"line\":%llu,\"start_sample\":%llu,\"end_sample\":%llu,", line,
                    start + shift, end + shift);
            fwrite(r + at, 1, (size_t)(nl + 1 - (r + at)), f);
        } else {
            fwrite(r, 1, (size_t)(nl + 1 - r), f);
        }
    }
}

/* The merged sidecar: shard 0's settings without the entry, then every shard's records. */
static int write_sidecar(const char *path, shard_in **by, size_t n, int one_file,
                         unsigned long long *bytes, ck_error *err)
{
    ck_atomic_file a = {0};
    int rc = ck_atomic_open(&a, path, NULL, err);
    if (rc != CK_OK) {
        return rc;
    }
    fwrite(by[0]->text, 1, by[0]->settings_len, a.f);
    fputs("}\n", a.f);
    uint64_t shift = 0;
    for (size_t i = 0; i < n; i++) {
        write_records(a.f, by[i], one_file ? shift : 0);
        shift += by[i]->samples;
    }
    long end = ftell(a.f);
    *bytes = end > 0 ? (unsigned long long)end : 0;
    return ck_atomic_commit(&a, err);
}

/* Writes the WAV (one file) and the sidecar of the ordered shards. */
static int write_merged(const char *output, shard_in **by, size_t n, int one_file,
                        ck_speak_merge_summary *sum, ck_error *err)
{
    size_t len = strlen(output) + 32;
    char *side = malloc(len);
    const char **wavs = malloc(n * sizeof *wavs);
    uint64_t *frames = malloc(n * sizeof *frames);
    int rc = side != NULL && wavs != NULL && frames != NULL
                 ? CK_OK : ck_fail(err, CK_E_MEMORY, "merge: cannot allocate");
    for (size_t i = 0; rc == CK_OK && i < n; i++) {
        wavs[i] = by[i]->path;
        frames[i] = by[i]->samples;
        sum->samples += one_file ? by[i]->samples : 0;
        sum->lines += by[i]->lines;
    }
    if (rc == CK_OK) {
        snprintf(side, len, one_file ? "%s.jsonl" : "%s/timestamps.jsonl", output);
        rc = one_file ? ck_wav_join(output, wavs, n, frames, err) : CK_OK;
    }
    rc = rc == CK_OK ? write_sidecar(side, by, n, one_file, &sum->bytes, err) : rc;
    free(side);
    free(wavs);
    free(frames);
    return rc;
}

int ck_merge_speak_shards(const char *output, const char *const *paths, size_t n,
                          ck_log_fn log, void *log_ctx, ck_speak_merge_summary *summary,
                          ck_error *err)
{
    ck_speak_merge_summary local;
    ck_speak_merge_summary *sum = summary != NULL ? summary : &local;
    memset(sum, 0, sizeof *sum);
    if (output == NULL || paths == NULL || n == 0 || n > CK_SHARDS_MAX) {
        return ck_fail(err, CK_E_ARG, "merge: null output or paths, or no shards");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t len = strlen(output);
    int one_file = len >= 4 && strcmp(output + len - 4, ".wav") == 0;
    shard_in *s = calloc(n, sizeof *s);
    shard_in **by = calloc(n, sizeof *by);
    int rc = s != NULL && by != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "merge: cannot allocate");
    for (size_t i = 0; rc == CK_OK && i < n; i++) {
        s[i].path = paths[i];
        rc = paths[i] != NULL ? read_shard(&s[i], one_file, err)
                              : ck_fail(err, CK_E_ARG, "merge: null path %zu", i);
        rc = rc == CK_OK ? count_records(&s[i], err) : rc;
    }
    rc = rc == CK_OK ? order_shards(output, one_file, s, n, by, err) : rc;
    for (size_t i = 0; rc == CK_OK && i < n; i++) {
        ck_log(log, log_ctx, CK_LOG_INFO, "merge: shard %zu/%zu: %s: %zu lines from line %zu, "
               "%llu samples", i, n, by[i]->path, by[i]->lines, by[i]->first_line - 1,
               (unsigned long long)by[i]->samples);
    }
    rc = rc == CK_OK ? write_merged(output, by, n, one_file, sum, err) : rc;
    sum->shards = rc == CK_OK ? n : 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sum->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    for (size_t i = 0; s != NULL && i < n; i++) {
        free(s[i].side_path);
        free(s[i].text);
    }
    free(s);
    free(by);
    return rc;
}
