/* output_partial.c - the durable half of the output: progress records written atomically at
 * commits (with a running SHA-256 of every journal's committed bytes), and resuming from one
 * (validate identity, truncate every journal to its committed size, check the journals against the
 * record and their digests). Never writes the final file; never reads a journal whole into memory. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byte_order.h"
#include "file.h"
#include "json.h"
#include "output_internal.h"

#define CK_RECORD_VERSION 5 /* 4: the record's own SHA-256 ("record_sha256"); 5: the f0 and n
                              * journals of a prosody run */
#define CK_RECORD_MAX_BYTES (1u << 20) /* a record holds sizes and the identity, never contents */

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

/* The record's size fields other than the journals', in record order. */
static const char *const COUNT_FIELDS[] = {"cols", "sequences", "tokens", "next_line",
                                           "next_chunk", "chunked_lines_before",
                                           "dropped_symbols_before"};
#define N_COUNTS (sizeof COUNT_FIELDS / sizeof COUNT_FIELDS[0])

/* The record's field for the SHA-256 (64 lowercase hex) of each journal's committed bytes. */
static const char *const SHA_FIELDS[CK_J_COUNT] = {"rows_sha256", "seqs_sha256", "skipped_sha256",
                                                   "offsets_sha256", "f0_sha256", "n_sha256"};

int ck_output_begin_hashes(ck_output *o, ck_error *err)
{
    for (size_t i = 0; i < CK_J_COUNT; i++) {
        ck_sha256_free(o->j[i].sha);
        o->j[i].sha = NULL;
        o->j[i].hashed = 0;
        int rc = ck_sha256_begin(&o->j[i].sha);
        if (rc != CK_OK) {
            return ck_fail(err, rc, "%s: cannot start its SHA-256", o->j[i].path);
        }
    }
    return CK_OK;
}

/* Feeds bytes [hashed, upto) of journal jr, read back from its file 64 KiB at a time (the FILE
 * buffer is flushed), to its running SHA-256. CK_OK, CK_E_IO (errno set) or CK_E_BACKEND. */
static int hash_upto(ck_journal *jr, size_t upto)
{
    unsigned char buf[1 << 16];
    while (jr->hashed < upto) {
        size_t want = upto - jr->hashed < sizeof buf ? upto - jr->hashed : sizeof buf;
        ssize_t got = pread(fileno(jr->f), buf, want, (off_t)jr->hashed);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            errno = got == 0 ? EIO : errno;
            return CK_E_IO;
        }
        int rc = ck_sha256_update(jr->sha, buf, (size_t)got);
        if (rc != CK_OK) {
            return rc;
        }
        jr->hashed += (size_t)got;
    }
    return CK_OK;
}

/* The SHA-256 of every journal's first `bytes` bytes as hex[j]; the running digests go on. */
static int journal_digests(ck_output *o, char hex[CK_J_COUNT][65], ck_error *err)
{
    for (size_t i = 0; i < CK_J_COUNT; i++) {
        unsigned char d[32];
        int rc = hash_upto(&o->j[i], o->j[i].bytes);
        rc = rc == CK_OK ? ck_sha256_peek(o->j[i].sha, d) : rc;
        if (rc != CK_OK) {
            return ck_fail(err, rc, "%s: reading the partial file back for its SHA-256 failed: %s",
                           o->j[i].path, rc == CK_E_IO ? strerror(errno) : "OpenSSL error");
        }
        ck_sha256_hex(d, hex[i]);
    }
    return CK_OK;
}

/* The record's field for the SHA-256 of the record itself, printed unformatted without that field. */
#define RECORD_SHA_FIELD "record_sha256"

/* The SHA-256 of r printed unformatted, as hex; CK_OK, CK_E_MEMORY or CK_E_BACKEND. */
static int record_digest(const cJSON *r, char hex[65])
{
    char *body = cJSON_PrintUnformatted(r);
    unsigned char d[32];
    int rc = body != NULL ? ck_sha256(body, strlen(body), d) : CK_E_MEMORY;
    free(body);
    if (rc == CK_OK) {
        ck_sha256_hex(d, hex);
    }
    return rc;
}

int ck_output_record_write(const char *path, const char *tmp, cJSON *r, ck_error *err)
{
    char self[65];
    int rc = record_digest(r, self);
    if (rc != CK_OK) {
        return ck_fail(err, rc, "%s: cannot compute the record's SHA-256", path);
    }
    char *text = cJSON_AddStringToObject(r, RECORD_SHA_FIELD, self) != NULL
                     ? cJSON_PrintUnformatted(r)
                     : NULL;
    if (text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    ck_atomic_file a;
    size_t len = strlen(text);
    rc = ck_atomic_open(&a, path, tmp, err);
    if (rc == CK_OK && fwrite(text, 1, len, a.f) != len) {
        rc = ck_fail(err, CK_E_IO, "%s: writing the progress record failed (disk full?): %s",
                     path, strerror(errno));
        ck_atomic_abort(&a);
    } else if (rc == CK_OK) {
        rc = ck_atomic_commit(&a, err);
    }
    free(text);
    return rc;
}

/* The record for the state appended so far, with `next` as the mark and hex[j] the SHA-256 of
 * journal j; NULL when out of memory. */
static cJSON *record_json(const ck_output *o, ck_output_mark next, char hex[CK_J_COUNT][65])
{
    cJSON *r = cJSON_CreateObject();
    cJSON *id = cJSON_Duplicate(o->identity, 1);
    int ok = r != NULL && id != NULL;
    if (ok) {
        cJSON_AddNumberToObject(r, "version", CK_RECORD_VERSION);
        cJSON_AddItemToObject(r, "identity", id);
        id = NULL;
        const double v[N_COUNTS] = {(double)o->cols, (double)o->n_seqs, (double)o->tokens,
                                    (double)next.line, (double)next.chunk,
                                    (double)next.chunked_lines, (double)next.dropped_symbols};
        for (size_t i = 0; i < N_COUNTS; i++) {
            ok = ok && cJSON_AddNumberToObject(r, COUNT_FIELDS[i], v[i]) != NULL;
        }
        for (size_t i = 0; i < CK_J_COUNT; i++) {
            ok = ok && cJSON_AddNumberToObject(r, ck_output_journal_field[i],
                                               (double)o->j[i].bytes) != NULL;
        }
        for (size_t i = 0; i < CK_J_COUNT; i++) {
            ok = ok && cJSON_AddStringToObject(r, SHA_FIELDS[i], hex[i]) != NULL;
        }
    }
    cJSON_Delete(id);
    if (!ok) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

int ck_output_commit(ck_output *o, ck_output_mark next, ck_error *err)
{
    if (o->last_skip_line >= next.line) {
        return ck_fail(err, CK_E_ARG, "%s: commit: skipped line %zu is not before the mark (line "
                       "%zu): a resumed run would list it twice", o->path, o->last_skip_line,
                       next.line);
    }
    if (o->mode == CK_OUTPUT_UNRESUMABLE) { /* nothing to resume from: no record, no fsync */
        o->commits++;
        return CK_OK;
    }
    for (size_t i = 0; i < CK_J_COUNT; i++) {
        if (flush_sync(o->j[i].f) != 0) {
            return ck_fail(err, CK_E_IO, "%s: flush/fsync of the partial file failed (disk full?): "
                           "%s", o->j[i].path, strerror(errno));
        }
    }
    char hex[CK_J_COUNT][65];
    int rc = journal_digests(o, hex, err);
    if (rc != CK_OK) {
        return rc;
    }
    cJSON *r = record_json(o, next, hex);
    if (r == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", o->record_path);
    }
    /* a fixed temporary name is safe: the lock keeps every other run off this output */
    rc = ck_output_record_write(o->record_path, o->record_tmp, r, err);
    cJSON_Delete(r);
    if (rc != CK_OK) {
        return rc;
    }
    o->commits++;
    return CK_OK;
}

/* Field `key` of the record as a size; CK_E_FORMAT naming it when absent or not one. */
static int record_size(const ck_output *o, const cJSON *r, const char *key, size_t *out,
                       ck_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
    if (!ck_json_size(v, 0, SIZE_MAX, out)) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"%s\": expected a non-negative integer",
                       o->record_path, key);
    }
    return CK_OK;
}

size_t ck_output_parting_word(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] != '\0' && a[i] == b[i]) {
        i++;
    }
    while (i > 0 && a[i - 1] != ' ') {
        i--;
    }
    return i;
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
        if (cJSON_IsString(a) && cJSON_IsString(b) && strcmp(a->valuestring, b->valuestring) != 0) {
            size_t at = ck_output_parting_word(a->valuestring, b->valuestring);
            return ck_fail(err, CK_E_STATE, "resume: identity field \"%s\" differs: the "
                           "interrupted run had \"%.60s\", this run has \"%.60s\" (each from the "
                           "first word that differs): start again with resume off", fields[i],
                           a->valuestring + at, b->valuestring + at);
        }
        if (a == NULL || !cJSON_Compare(a, b, 1)) {
            char *was = a != NULL ? cJSON_PrintUnformatted(a) : NULL;
            char *now = cJSON_PrintUnformatted(b);
            ck_fail(err, CK_E_STATE, "resume: identity field \"%s\" differs from the "
                    "interrupted run's (was %.80s, now %.80s): start again with resume off",
                    fields[i], was ? was : "absent", now ? now : "?");
            free(was);
            free(now);
            return CK_E_STATE;
        }
    }
    return CK_OK;
}

typedef struct {
    size_t counts[N_COUNTS];        /* in COUNT_FIELDS order */
    size_t bytes[CK_J_COUNT];       /* committed size of each journal */
    char sha[CK_J_COUNT][65];       /* SHA-256 (hex) of each journal's committed bytes */
} record;

enum { R_COLS, R_SEQUENCES, R_TOKENS, R_NEXT_LINE, R_NEXT_CHUNK, R_CHUNKED, R_DROPPED };

/* Field `key` of the record as 64 lowercase hex into hex[65]; CK_E_FORMAT naming it otherwise. */
static int record_sha(const ck_output *o, const cJSON *r, const char *key, char hex[65],
                      ck_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) != 64 ||
        strspn(v->valuestring, "0123456789abcdef") != 64) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"%s\": expected 64 lowercase hex digits",
                       o->record_path, key);
    }
    memcpy(hex, v->valuestring, 65);
    return CK_OK;
}

/* The sizes that follow from the counts must be the recorded ones: rows tokens x cols x 4,
 * offsets (sequences + 1) x 8. */
static int check_sizes(const ck_output *o, const record *rec, ck_error *err)
{
    size_t tokens = rec->counts[R_TOKENS], seqs = rec->counts[R_SEQUENCES];
    if (rec->counts[R_COLS] != o->cols) {
        return ck_fail(err, CK_E_STATE, "resume: field \"cols\": record has %zu, this run %zu",
                       rec->counts[R_COLS], o->cols);
    }
    if (tokens > SIZE_MAX / 4 / o->cols || rec->bytes[CK_J_ROWS] != tokens * o->cols * sizeof(float)) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"rows_bytes\": %zu is not tokens x cols x 4",
                       o->record_path, rec->bytes[CK_J_ROWS]);
    }
    if (seqs >= SIZE_MAX / 8 || rec->bytes[CK_J_OFFSETS] != (seqs + 1) * 8) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"offsets_bytes\": %zu is not (sequences + 1) "
                       "x 8", o->record_path, rec->bytes[CK_J_OFFSETS]);
    }
    if (rec->bytes[CK_J_F0] != rec->bytes[CK_J_N] || rec->bytes[CK_J_F0] % 8 != 0) {
        return ck_fail(err, CK_E_FORMAT, "%s: fields \"f0_bytes\" and \"n_bytes\": %zu and %zu are "
                       "not the same whole number of frames (8 bytes each)", o->record_path,
                       rec->bytes[CK_J_F0], rec->bytes[CK_J_N]);
    }
    if (rec->counts[R_NEXT_LINE] == 0) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"next_line\": must be at least 1",
                       o->record_path);
    }
    return CK_OK;
}

/* The record's "record_sha256" must be the SHA-256 of the rest of it printed unformatted (as the
 * writer printed it): the mark and the counts are covered by no journal's digest, and a changed
 * next_line would silently drop or repeat lines. Removes the field from r. */
static int check_record_digest(const char *path, cJSON *r, ck_error *err)
{
    cJSON *self = cJSON_DetachItemFromObjectCaseSensitive(r, RECORD_SHA_FIELD);
    char hex[65] = "";
    int rc = cJSON_IsString(self) ? record_digest(r, hex) : CK_E_FORMAT;
    if (!cJSON_IsString(self) || strlen(self->valuestring) != 64) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: field \"%s\": expected 64 lowercase hex digits", path,
                     RECORD_SHA_FIELD);
    } else if (rc != CK_OK) {
        rc = ck_fail(err, rc, "%s: cannot compute its SHA-256", path);
    } else if (strcmp(hex, self->valuestring) != 0) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: changed since it was committed: its SHA-256 is not its "
                     "\"%s\" (start again with resume off)", path, RECORD_SHA_FIELD);
    }
    cJSON_Delete(self);
    return rc;
}

int ck_output_record_read(const char *path, int version, int missing_ok, cJSON **r,
                          ck_error *err)
{
    *r = NULL;
    if (missing_ok && access(path, F_OK) != 0 && errno == ENOENT) {
        return CK_OK;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = ck_file_read_all(path, "progress record", CK_RECORD_MAX_BYTES, &text, &len, err);
    if (rc != CK_OK) {
        return rc;
    }
    size_t at = 0;
    const char *why = NULL;
    cJSON *j = ck_json_parse(text, len, &at, &why);
    free(text);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
    if (!cJSON_IsObject(j)) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: not a JSON object", path);
    } else if (!cJSON_IsNumber(v)) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: field \"version\": expected %d", path, version);
    } else if (v->valuedouble != version) {
        /* an older ckbatch's record describes other journals: it cannot be continued */
        rc = ck_fail(err, CK_E_FORMAT, "%s: field \"version\": progress record version %g, this "
                     "ckbatch reads version %d only (written by another ckbatch version): start "
                     "again without --resume", path, v->valuedouble, version);
    } else {
        rc = check_record_digest(path, j, err);
    }
    if (rc != CK_OK) {
        cJSON_Delete(j);
        return rc;
    }
    *r = j;
    return CK_OK;
}

static int parse_record(const ck_output *o, cJSON *r, record *rec, ck_error *err)
{
    int rc = check_identity(o, r, err);
    for (size_t i = 0; rc == CK_OK && i < N_COUNTS; i++) {
        rc = record_size(o, r, COUNT_FIELDS[i], &rec->counts[i], err);
    }
    for (size_t i = 0; rc == CK_OK && i < CK_J_COUNT; i++) {
        rc = record_size(o, r, ck_output_journal_field[i], &rec->bytes[i], err);
    }
    for (size_t i = 0; rc == CK_OK && i < CK_J_COUNT; i++) {
        rc = record_sha(o, r, SHA_FIELDS[i], rec->sha[i], err);
    }
    return rc == CK_OK ? check_sizes(o, rec, err) : rc;
}

/* Opens journal jr for update into jr->f and cuts it to `bytes`; it must hold at least that many. */
static int reopen_cut(ck_journal *jr, size_t bytes, const char *field, ck_error *err)
{
    FILE *f = fopen(jr->path, "r+b");
    if (f == NULL) {
        return ck_fail(err, CK_E_IO, "resume: cannot open %s: %s", jr->path, strerror(errno));
    }
    if (fseek(f, 0, SEEK_END) != 0 || ftell(f) < 0 || (size_t)ftell(f) < bytes ||
        ftruncate(fileno(f), (off_t)bytes) != 0 || fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return ck_fail(err, CK_E_FORMAT, "%s: shorter than the record's \"%s\" (%zu bytes)",
                       jr->path, field, bytes);
    }
    jr->f = f;
    jr->bytes = bytes;
    return CK_OK;
}

/* Counts the "\n" in the first `bytes` bytes of f, reading 64 KiB at a time; *last is the last
 * byte ('\n' when bytes is 0). Leaves f at its end. 0 on success, -1 on a read error. */
static int count_lines(FILE *f, size_t bytes, size_t *lines, int *last)
{
    char chunk[1 << 16];
    *lines = 0;
    *last = '\n';
    if (fseek(f, 0, SEEK_SET) != 0) {
        return -1;
    }
    while (bytes > 0) {
        size_t want = bytes < sizeof chunk ? bytes : sizeof chunk;
        if (fread(chunk, 1, want, f) != want) {
            return -1;
        }
        for (size_t i = 0; i < want; i++) {
            *lines += chunk[i] == '\n';
        }
        *last = (unsigned char)chunk[want - 1];
        bytes -= want;
    }
    return fseek(f, 0, SEEK_END);
}

/* The committed journals must agree with the record: "sequences" holds `sequences` whole lines,
 * "skipped" whole lines (their number goes to o->skipped), and the last offset is `tokens`. */
static int check_journals(ck_output *o, const record *rec, ck_error *err)
{
    size_t lines = 0, skipped_lines = 0;
    int last = 0, skipped_last = 0;
    unsigned char end[8] = {0};
    const ck_journal *offs = &o->j[CK_J_OFFSETS];
    if (count_lines(o->j[CK_J_SEQS].f, rec->bytes[CK_J_SEQS], &lines, &last) != 0 ||
        count_lines(o->j[CK_J_SKIPPED].f, rec->bytes[CK_J_SKIPPED], &skipped_lines,
                    &skipped_last) != 0 ||
        fseek(offs->f, (long)(rec->bytes[CK_J_OFFSETS] - 8), SEEK_SET) != 0 ||
        fread(end, 1, 8, offs->f) != 8 || fseek(offs->f, 0, SEEK_END) != 0) {
        return ck_fail(err, CK_E_IO, "resume: reading the partial files beside %s failed: %s",
                       o->path, strerror(errno));
    }
    if (lines != rec->counts[R_SEQUENCES] || last != '\n') {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"sequences\": the journal holds %zu lines, not "
                       "%zu", o->record_path, lines, rec->counts[R_SEQUENCES]);
    }
    if (skipped_last != '\n') {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"skipped_bytes\": the journal does not end "
                       "with a whole line", o->record_path);
    }
    if (ck_le(end, 8) != (uint64_t)rec->counts[R_TOKENS]) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"tokens\": the offsets journal ends at %llu, "
                       "not %zu", o->record_path, (unsigned long long)ck_le(end, 8),
                       rec->counts[R_TOKENS]);
    }
    o->skipped = skipped_lines;
    return CK_OK;
}

/* Every journal's committed bytes must have the record's SHA-256: a same-length edit (a changed
 * offset, row or record) would pass every size check. Leaves the running digests at the commit. */
static int check_digests(ck_output *o, const record *rec, ck_error *err)
{
    char hex[CK_J_COUNT][65];
    int rc = ck_output_begin_hashes(o, err);
    rc = rc == CK_OK ? journal_digests(o, hex, err) : rc;
    for (size_t i = 0; rc == CK_OK && i < CK_J_COUNT; i++) {
        if (strcmp(hex[i], rec->sha[i]) != 0) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: changed since it was committed: the SHA-256 of its "
                         "%zu bytes is not the progress record's \"%s\" (start again with resume "
                         "off)", o->j[i].path, rec->bytes[i], SHA_FIELDS[i]);
        }
    }
    return rc;
}

int ck_output_resume(ck_output *o, ck_output_mark *mark, ck_error *err)
{
    cJSON *r = NULL;
    record rec;
    memset(&rec, 0, sizeof rec);
    int rc = ck_output_record_read(o->record_path, CK_RECORD_VERSION, 0, &r, err);
    rc = rc == CK_OK ? parse_record(o, r, &rec, err) : rc;
    cJSON_Delete(r);
    for (size_t i = 0; rc == CK_OK && i < CK_J_COUNT; i++) {
        rc = reopen_cut(&o->j[i], rec.bytes[i], ck_output_journal_field[i], err);
    }
    rc = rc == CK_OK ? check_journals(o, &rec, err) : rc;
    rc = rc == CK_OK ? check_digests(o, &rec, err) : rc;
    if (rc == CK_OK) {
        o->n_seqs = rec.counts[R_SEQUENCES];
        o->tokens = rec.counts[R_TOKENS];
        *mark = (ck_output_mark){rec.counts[R_NEXT_LINE], rec.counts[R_NEXT_CHUNK],
                                 rec.counts[R_CHUNKED], rec.counts[R_DROPPED]};
    }
    return rc;
}
