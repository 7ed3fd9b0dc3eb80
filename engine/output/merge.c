/* merge.c - ck_merge_shards: checks that shard files are exactly shards 0..N-1 of one split of one
 * input under one identity, then writes the file a whole run writes, copying their tensors as
 * stored (offsets and frame offsets shifted). Holds nothing per sequence in memory; computes no
 * features. */
#define _GNU_SOURCE /* fileno, ftello */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "byte_order.h"
#include "ck_error.h"
#include "ck_log.h"
#include "output_internal.h"
#include "safetensors.h"
#include "json.h"

#define SHARD_KEY "shard" /* the metadata entry a shard run adds (engine/api/corpus_shard.h) */

/* One shard file, open: its mapping (checked), a descriptor to copy from, its description. */
typedef struct {
    const char *path;
    ck_st_file *st;
    int fd;
    cJSON *desc;                 /* the parsed "shard" entry */
    size_t index, count, first_line, lines;
    unsigned long long byte_start, byte_end, input_bytes;
    const char *input_sha256, *options, *isa;   /* owned by desc */
    const ck_st_tensor *rows, *offsets, *seqs, *skipped;
    const ck_st_tensor *frame_offsets; /* a durations file's (layer prosody); NULL otherwise */
    const ck_st_tensor *f0, *n;        /* a durations file's curves, F32 [2F]; NULL when absent */
} shard;

/* Unsigned integer field `key` of the description; 0 when absent or not one. */
static int desc_uint(const cJSON *d, const char *key, unsigned long long *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(d, key);
    if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 9007199254740992.0 ||
        x->valuedouble != (double)(unsigned long long)x->valuedouble) {
        return 0;
    }
    *v = (unsigned long long)x->valuedouble;
    return 1;
}

static const char *desc_string(const cJSON *d, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(d, key);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* The "shard" entry of sh's file into sh's fields. */
static int parse_desc(shard *sh, ck_error *err)
{
    const char *text = ck_st_metadata(sh->st, SHARD_KEY);
    if (text == NULL) {
        return ck_fail(err, CK_E_FORMAT, "%s: not a shard file (no \"%s\" metadata): merge takes the "
                       "files a shard run (shard_index of shard_count) writes", sh->path, SHARD_KEY);
    }
    size_t at = 0;
    const char *why = NULL;
    sh->desc = ck_json_parse(text, strlen(text), &at, &why); /* NULL: refused as not an object below */
    static const char *const names[] = {"index", "count", "first_line", "lines", "byte_start",
                                        "byte_end", "input_bytes"};
    unsigned long long v[7];
    for (size_t i = 0; i < 7; i++) {
        if (!cJSON_IsObject(sh->desc) || !desc_uint(sh->desc, names[i], &v[i])) {
            return ck_fail(err, CK_E_FORMAT, "%s: metadata \"%s\": field \"%s\": expected a "
                           "non-negative integer", sh->path, SHARD_KEY, names[i]);
        }
    }
    sh->index = (size_t)v[0], sh->count = (size_t)v[1], sh->first_line = (size_t)v[2];
    sh->lines = (size_t)v[3], sh->byte_start = v[4], sh->byte_end = v[5], sh->input_bytes = v[6];
    static const char *const strings[] = {"input_sha256", "options", "isa"};
    const char **dst[] = {&sh->input_sha256, &sh->options, &sh->isa};
    for (size_t i = 0; i < 3; i++) {
        if ((*dst[i] = desc_string(sh->desc, strings[i])) == NULL) {
            return ck_fail(err, CK_E_FORMAT, "%s: metadata \"%s\": field \"%s\": expected a string",
                           sh->path, SHARD_KEY, strings[i]);
        }
    }
    if (sh->count == 0 || sh->index >= sh->count) {
        return ck_fail(err, CK_E_FORMAT, "%s: metadata \"%s\": index %zu of count %zu", sh->path,
                       SHARD_KEY, sh->index, sh->count);
    }
    return CK_OK;
}

/* A curve of a durations file: F32 [2 frames], or absent (NULL). 1 when t is either. */
static int curve_ok(const ck_st_tensor *t, uint64_t frames)
{
    return t == NULL || (t->dtype == CK_DTYPE_F32 && t->rank == 1 && t->elements == 2 * frames);
}

/* A durations file's (layer prosody) rows and frame offsets: durations I32 [T], frame_offsets
 * I64 [S + 1] from 0, and f0 and n F32 [2F] (F the last frame offset) both or neither. 1 when
 * sh's tensors are those. */
static int durations_file(shard *sh)
{
    sh->frame_offsets = ck_st_find(sh->st, "frame_offsets");
    sh->f0 = ck_st_find(sh->st, "f0");
    sh->n = ck_st_find(sh->st, "n");
    const ck_st_tensor *f = sh->frame_offsets;
    int ok = sh->rows != NULL && strcmp(sh->rows->name, "durations") == 0 &&
             sh->rows->dtype == CK_DTYPE_I32 && sh->rows->rank == 1 && f != NULL &&
             f->dtype == CK_DTYPE_I64 && f->rank == 1 && sh->offsets != NULL &&
             f->elements == sh->offsets->elements && ck_le(f->data, 8) == 0;
    uint64_t frames = ok ? ck_le((const unsigned char *)f->data + 8 * (f->elements - 1), 8) : 0;
    return ok && (sh->f0 == NULL) == (sh->n == NULL) && curve_ok(sh->f0, frames) &&
           curve_ok(sh->n, frames);
}

/* The tensors of a features file (four; five for durations), and offsets consistent with the
 * rows: offsets[0] 0, offsets[S] the row count. */
static int find_tensors(shard *sh, ck_error *err)
{
    sh->rows = ck_st_find(sh->st, "features");
    sh->rows = sh->rows != NULL ? sh->rows : ck_st_find(sh->st, "hidden");
    sh->rows = sh->rows != NULL ? sh->rows : ck_st_find(sh->st, "durations");
    sh->offsets = ck_st_find(sh->st, "offsets");
    sh->seqs = ck_st_find(sh->st, "sequences");
    sh->skipped = ck_st_find(sh->st, "skipped");
    int rows_ok = sh->rows != NULL && (durations_file(sh) || (sh->rows->dtype == CK_DTYPE_F32 &&
                                                              sh->rows->rank == 2));
    if (!rows_ok ||
        sh->offsets == NULL || sh->offsets->dtype != CK_DTYPE_I64 || sh->offsets->rank != 1 ||
        sh->offsets->elements == 0 || sh->seqs == NULL || sh->seqs->dtype != CK_DTYPE_U8 ||
        sh->skipped == NULL || sh->skipped->dtype != CK_DTYPE_U8) {
        return ck_fail(err, CK_E_FORMAT, "%s: not a features file: expected features (or hidden) "
                       "F32 [T, cols] (or durations I32 [T], frame_offsets I64 [S + 1], f0 and "
                       "n F32 [2 frames] or neither), "
                       "offsets I64 [S + 1], sequences and skipped U8", sh->path);
    }
    const unsigned char *o = sh->offsets->data;
    uint64_t first = ck_le(o, 8), last = ck_le(o + 8 * (sh->offsets->elements - 1), 8);
    if (first != 0 || last != sh->rows->shape[0]) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"offsets\": runs %llu..%llu, expected 0..%zu "
                       "(the rows)", sh->path, (unsigned long long)first,
                       (unsigned long long)last, sh->rows->shape[0]);
    }
    return CK_OK;
}

static int open_shard(shard *sh, const char *path, ck_error *err)
{
    sh->path = path;
    int rc = ck_st_open(&sh->st, path, err);
    if (rc != CK_OK) {
        return rc;
    }
    if ((sh->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    rc = parse_desc(sh, err);
    return rc == CK_OK ? find_tensors(sh, err) : rc;
}

static int by_index(const void *a, const void *b)
{
    const shard *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* "shard I/N (PATH)" for messages. */
static const char *who(const shard *sh, char buf[600])
{
    snprintf(buf, 600, "shard %zu/%zu (%.500s)", sh->index, sh->count, sh->path);
    return buf;
}

/* The name shard files of this set share: a given shard's path without its ".shard-IIIII-of-NNNNN"
 * (ck_shard_path), else the output's. Returned in a static buffer. */
static const char *shard_base(const char *output, const shard *sh)
{
    static char base[4096];
    char tail[64];
    int n = snprintf(tail, sizeof tail, ".shard-%05zu-of-%05zu", sh->index, sh->count);
    size_t len = strlen(sh->path), t = (size_t)n;
    if (len > t && len - t < sizeof base && strcmp(sh->path + len - t, tail) == 0) {
        memcpy(base, sh->path, len - t);
        base[len - t] = '\0';
        return base;
    }
    return output;
}

/* Every sorted shard has the same count, none is given twice, none is missing; a missing one is
 * named with the input bytes and lines no given shard covers, and whether its partial files show
 * an unfinished run. */
static int check_set(const char *output, const shard *s, size_t n, ck_error *err)
{
    char a[600], b[600];
    for (size_t k = 1; k < n; k++) {
        if (s[k].count != s[0].count) {
            return ck_fail(err, CK_E_ARG, "merge: %s: field \"count\" differs from %s's (%zu, not "
                           "%zu)", who(&s[k], a), who(&s[0], b), s[k].count, s[0].count);
        }
        if (s[k].index == s[k - 1].index) {
            return ck_fail(err, CK_E_ARG, "merge: shard %zu/%zu given twice: %.300s and %.300s",
                           s[k].index, s[k].count, s[k - 1].path, s[k].path);
        }
    }
    for (size_t k = 0, want = 0; want < s[0].count; want++, k++) {
        if (k < n && s[k].index == want) {
            continue;
        }
        const shard *prev = k > 0 ? &s[k - 1] : NULL, *next = k < n ? &s[k] : NULL;
        unsigned long long from = prev ? prev->byte_end : 0, to = next ? next->byte_start
                                                                      : s[0].input_bytes;
        size_t line = prev ? prev->first_line + prev->lines : 1;
        char path[4200], record[4300], lines[64] = "to the end";
        if (next != NULL) {
            snprintf(lines, sizeof lines, "to %zu", next->first_line - 1);
        }
        snprintf(path, sizeof path, "%s.shard-%05zu-of-%05zu", shard_base(output, &s[0]), want,
                 s[0].count);
        snprintf(record, sizeof record, "%s.partial.json", path);
        return ck_fail(err, CK_E_ARG, "merge: shard %zu/%zu missing: input bytes %llu..%llu (lines "
                       "%zu %s) are in no given shard (%.300s %s)", want, s[0].count, from, to,
                       line, lines, path, access(record, F_OK) == 0
                           ? "is unfinished: run that shard again with resume on"
                           : "was not given or never ran");
    }
    return CK_OK;
}

/* The identity of s against the reference r: input, options, engine ISA, every metadata entry but
 * "shard" (engine version, weights, source, G2P, ...), the rows tensor. Names the first field. */
static int check_same(const shard *s, const shard *r, ck_error *err)
{
    char a[600], b[600];
    const char *fields[] = {"input_sha256", "options", "isa"};
    const char *mine[] = {s->input_sha256, s->options, s->isa};
    const char *theirs[] = {r->input_sha256, r->options, r->isa};
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(mine[i], theirs[i]) != 0) {
            size_t at = ck_output_parting_word(mine[i], theirs[i]);
            return ck_fail(err, CK_E_ARG, "merge: %s: field \"%s\" differs from %s's (\"%.60s\", "
                           "not \"%.60s\")", who(s, a), fields[i], who(r, b), mine[i] + at,
                           theirs[i] + at);
        }
    }
    if (s->input_bytes != r->input_bytes) {
        return ck_fail(err, CK_E_ARG, "merge: %s: field \"input_bytes\" differs from %s's (%llu, "
                       "not %llu)", who(s, a), who(r, b), s->input_bytes, r->input_bytes);
    }
    size_t n = ck_st_metadata_count(r->st);
    for (size_t i = 0; i <= n; i++) {
        const char *key = NULL, *value = NULL, *other = NULL;
        if (i == n) { /* the same entries both ways: none of s is missing from r */
            if (ck_st_metadata_count(s->st) == n) {
                break;
            }
            return ck_fail(err, CK_E_ARG, "merge: %s: holds %zu metadata entries, %s %zu",
                           who(s, a), ck_st_metadata_count(s->st), who(r, b), n);
        }
        ck_st_metadata_at(r->st, i, &key, &value);
        if (strcmp(key, SHARD_KEY) == 0) {
            continue;
        }
        other = ck_st_metadata(s->st, key);
        if (other == NULL || strcmp(other, value) != 0) {
            return ck_fail(err, CK_E_ARG, "merge: %s: metadata \"%s\" differs from %s's (\"%.60s\", "
                           "not \"%.60s\")", who(s, a), key, who(r, b), other ? other : "absent",
                           value);
        }
    }
    if (strcmp(s->rows->name, r->rows->name) != 0 || s->rows->shape[1] != r->rows->shape[1]) {
        return ck_fail(err, CK_E_ARG, "merge: %s: tensor \"%s\" [T, %zu] differs from %s's \"%s\" "
                       "[T, %zu]", who(s, a), s->rows->name, s->rows->shape[1], who(r, b),
                       r->rows->name, r->rows->shape[1]);
    }
    if ((s->f0 != NULL) != (r->f0 != NULL)) {
        return ck_fail(err, CK_E_ARG, "merge: %s %s the tensors \"f0\" and \"n\", %s %s", who(s, a),
                       s->f0 != NULL ? "holds" : "lacks", who(r, b), r->f0 != NULL ? "does" : "does not");
    }
    return CK_OK;
}

/* The sorted shards' ranges follow on: bytes contiguous from 0 to the input's size, first lines
 * from 1 each after the previous shard's lines. */
static int check_ranges(const shard *s, size_t n, ck_error *err)
{
    char a[600];
    for (size_t k = 0; k < n; k++) {
        unsigned long long start = k ? s[k - 1].byte_end : 0;
        size_t line = k ? s[k - 1].first_line + s[k - 1].lines : 1;
        if (s[k].byte_start != start || s[k].byte_end < s[k].byte_start) {
            return ck_fail(err, CK_E_ARG, "merge: %s: field \"byte_start\" is %llu, expected %llu "
                           "(where the previous shard ends)", who(&s[k], a), s[k].byte_start, start);
        }
        if (s[k].first_line != line) {
            return ck_fail(err, CK_E_ARG, "merge: %s: field \"first_line\" is %zu, expected %zu",
                           who(&s[k], a), s[k].first_line, line);
        }
    }
    if (s[n - 1].byte_end != s[0].input_bytes) {
        return ck_fail(err, CK_E_ARG, "merge: %s: field \"byte_end\" is %llu, not the input's size "
                       "%llu", who(&s[n - 1], a), s[n - 1].byte_end, s[0].input_bytes);
    }
    return CK_OK;
}

/* One offsets tensor of the merged file into tmp: 0, then each shard's tensor t(k)[1..] plus the
 * last value of the shards' tensors before it (rows for offsets, frames for frame_offsets). */
static int write_shifted(FILE *tmp, const shard *s, size_t n, int frames)
{
    unsigned char b[8] = {0};
    uint64_t base = 0;
    int ok = fwrite(b, 1, 8, tmp) == 8;
    for (size_t k = 0; ok && k < n; k++) {
        const ck_st_tensor *t = frames ? s[k].frame_offsets : s[k].offsets;
        const unsigned char *o = t->data;
        for (size_t i = 1; ok && i < t->elements; i++) {
            uint64_t v = base + ck_le(o + 8 * i, 8);
            for (int j = 0; j < 8; j++) {
                b[j] = (unsigned char)(v >> (8 * j));
            }
            ok = fwrite(b, 1, 8, tmp) == 8;
        }
        base += ck_le(o + 8 * (t->elements - 1), 8);
    }
    return ok && fflush(tmp) == 0 ? CK_OK : CK_E_IO;
}

/* Counts '\n' in bytes[n] (the skipped lines of a JSON Lines tensor). */
static size_t count_lines(const void *bytes, size_t n)
{
    size_t lines = 0;
    for (const char *p = bytes, *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++) {
        lines++;
    }
    return lines;
}

/* The merged file: shard 0's metadata without "shard", in its order (a whole run's header), and
 * every tensor as the shards' segments back to back (offsets and frame offsets rewritten into
 * tmp[0] and tmp[1]). */
static int write_merged(const char *output, const shard *s, size_t n, FILE *const tmp[2],
                        ck_merge_summary *sum, ck_error *err)
{
    size_t n_meta = 0, total[6] = {0};
    int durations = s[0].frame_offsets != NULL, curves = s[0].f0 != NULL;
    ck_st_meta *meta = calloc(ck_st_metadata_count(s[0].st) + 1, sizeof *meta);
    ck_st_segment *seg = calloc(5 * n + 1, sizeof *seg);
    int rc = meta != NULL && seg != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "merge: out of memory");
    for (size_t i = 0; rc == CK_OK && i < ck_st_metadata_count(s[0].st); i++) {
        ck_st_metadata_at(s[0].st, i, &meta[n_meta].key, &meta[n_meta].value);
        n_meta += strcmp(meta[n_meta].key, SHARD_KEY) != 0;
    }
    for (size_t k = 0; rc == CK_OK && k < n; k++) {
        const ck_st_tensor *t[5] = {s[k].rows, s[k].seqs, s[k].skipped, s[k].f0, s[k].n};
        for (size_t j = 0; j < (curves ? 5u : 3u); j++) {
            seg[j * n + k] = (ck_st_segment){s[k].fd, ck_st_file_offset(s[k].st, t[j]), t[j]->bytes};
        }
        total[0] += s[k].rows->shape[0];
        total[1] += s[k].offsets->elements - 1;
        total[2] += s[k].seqs->bytes;
        total[3] += s[k].skipped->bytes;
        total[4] += curves ? s[k].f0->elements : 0;
        sum->skipped_lines += count_lines(s[k].skipped->data, s[k].skipped->bytes);
    }
    if (rc == CK_OK && (write_shifted(tmp[0], s, n, 0) != CK_OK ||
                        (durations && write_shifted(tmp[1], s, n, 1) != CK_OK))) {
        rc = ck_fail(err, CK_E_IO, "merge: writing the merged offsets to a temporary file failed: %s",
                     strerror(errno));
    }
    if (rc == CK_OK) {
        ck_st_segment offs = {fileno(tmp[0]), 0, (total[1] + 1) * 8};
        ck_st_segment frames = {fileno(tmp[1]), 0, (total[1] + 1) * 8};
        /* the tensors in the order a whole run writes them (ck_output_finish): features and
         * hidden have four; durations adds frame_offsets, and f0 and n when the shards hold them */
        ck_st_entry e[7];
        ck_st_segments segs[7];
        size_t m = 0;
        e[m] = (ck_st_entry){.name = s[0].rows->name, .dtype = s[0].rows->dtype,
                             .rank = s[0].rows->rank, .shape = {total[0], s[0].rows->shape[1]}};
        segs[m++] = (ck_st_segments){seg, n};
        e[m] = (ck_st_entry){.name = "offsets", .dtype = CK_DTYPE_I64, .rank = 1,
                             .shape = {total[1] + 1}};
        segs[m++] = (ck_st_segments){&offs, 1};
        if (durations) {
            e[m] = (ck_st_entry){.name = "frame_offsets", .dtype = CK_DTYPE_I64, .rank = 1,
                                 .shape = {total[1] + 1}};
            segs[m++] = (ck_st_segments){&frames, 1};
        }
        if (curves) {
            e[m] = (ck_st_entry){.name = "f0", .dtype = CK_DTYPE_F32, .rank = 1, .shape = {total[4]}};
            segs[m++] = (ck_st_segments){seg + 3 * n, n};
            e[m] = (ck_st_entry){.name = "n", .dtype = CK_DTYPE_F32, .rank = 1, .shape = {total[4]}};
            segs[m++] = (ck_st_segments){seg + 4 * n, n};
        }
        e[m] = (ck_st_entry){.name = "sequences", .dtype = CK_DTYPE_U8, .rank = 1,
                             .shape = {total[2]}};
        segs[m++] = (ck_st_segments){seg + n, n};
        e[m] = (ck_st_entry){.name = "skipped", .dtype = CK_DTYPE_U8, .rank = 1,
                             .shape = {total[3]}};
        segs[m++] = (ck_st_segments){seg + 2 * n, n};
        rc = ck_st_write_segments(output, e, segs, m, meta, n_meta, err);
        sum->tokens = total[0];
        sum->sequences = total[1];
    }
    free(meta);
    free(seg);
    return rc;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Opens, sorts and checks every shard, then writes the merged file. */
static int merge(const char *output, shard *s, const char *const *paths, size_t n,
                 ck_log_fn log, void *log_ctx, ck_merge_summary *sum, ck_error *err)
{
    int rc = CK_OK;
    for (size_t k = 0; rc == CK_OK && k < n; k++) {
        rc = paths[k] != NULL ? open_shard(&s[k], paths[k], err)
                              : ck_fail(err, CK_E_ARG, "merge: shard path %zu is null", k);
    }
    if (rc != CK_OK) {
        return rc;
    }
    qsort(s, n, sizeof *s, by_index);
    rc = check_set(output, s, n, err);
    for (size_t k = 1; rc == CK_OK && k < n; k++) {
        rc = check_same(&s[k], &s[0], err);
    }
    rc = rc == CK_OK ? check_ranges(s, n, err) : rc;
    for (size_t k = 0; rc == CK_OK && k < n; k++) {
        ck_log(log, log_ctx, CK_LOG_INFO, "merge: shard %zu/%zu: lines %zu..%zu (%zu lines), %zu "
               "sequences, %zu tokens", s[k].index, s[k].count, s[k].first_line,
               s[k].first_line + s[k].lines - (s[k].lines > 0), s[k].lines,
               s[k].offsets->elements - 1, s[k].rows->shape[0]);
    }
    FILE *tmp[2] = {rc == CK_OK ? tmpfile() : NULL, rc == CK_OK ? tmpfile() : NULL};
    if (rc == CK_OK && (tmp[0] == NULL || tmp[1] == NULL)) {
        rc = ck_fail(err, CK_E_IO, "merge: cannot create a temporary file: %s", strerror(errno));
    }
    rc = rc == CK_OK ? write_merged(output, s, n, tmp, sum, err) : rc;
    for (int i = 0; i < 2; i++) {
        if (tmp[i] != NULL) {
            fclose(tmp[i]);
        }
    }
    return rc;
}

int ck_merge_shards(const char *output, const char *const *paths, size_t n, ck_log_fn log,
                    void *log_ctx, ck_merge_summary *summary, ck_error *err)
{
    ck_merge_summary sum;
    memset(&sum, 0, sizeof sum);
    if (output == NULL || output[0] == '\0' || paths == NULL || n == 0) {
        return ck_fail(err, CK_E_ARG, "merge: needs an output path and at least one shard");
    }
    double t0 = now();
    shard *s = calloc(n, sizeof *s);
    for (size_t k = 0; s != NULL && k < n; k++) {
        s[k].fd = -1;
    }
    int rc = s != NULL ? merge(output, s, paths, n, log, log_ctx, &sum, err)
                       : ck_fail(err, CK_E_MEMORY, "merge: out of memory");
    for (size_t k = 0; s != NULL && k < n; k++) {
        ck_st_close(s[k].st);
        cJSON_Delete(s[k].desc);
        if (s[k].fd >= 0) {
            close(s[k].fd);
        }
    }
    free(s);
    struct stat st;
    sum.shards = n;
    sum.bytes = rc == CK_OK && stat(output, &st) == 0 ? (unsigned long long)st.st_size : 0;
    sum.seconds = now() - t0;
    if (summary != NULL) {
        *summary = sum;
    }
    return rc;
}
