/* test_output.c - the features file written by engine/output/output.c: the sequences, skipped and offsets
 * tensors read back to exactly what was appended, the header and the progress record stay the same
 * size whatever the number of sequences and skipped lines, resume keeps only what was committed,
 * rows put out of order land in input order, damaged journals or a skip after the mark are
 * rejected naming the field, a same-length edit of any committed journal byte is refused naming the
 * file, resume without a record starts fresh and an unresumable output writes no record; a
 * progress record of version 4 (before the f0/n journals) is refused with "start again without
 * --resume"; a durations output's f0 and n curves survive a resume in order, and finish refuses
 * curves that are not 2 values per frame of the durations. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ck_test.h"
#include "output.h"
#include "safetensors.h"

#define COLS 3

static const ck_output_identity IDENTITY = {"00ff", 12, "format=ids", "demo"};

/* Path of `name` in the test directory, in one of four rotating buffers. */
static const char *tmp(const char *name)
{
    static char bufs[4][320];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 320, "%s", ck_test_tmp_path(name));
    return b;
}

static ck_output *open_out(const char *path, int resume, ck_output_mark *mark)
{
    ck_output *o = NULL;
    ck_error err = {0};
    int rc = ck_output_open(&o, path, "features", COLS, &IDENTITY, resume, mark, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "    open: %s\n", err.message);
    }
    return o;
}

/* Sequence i: tokens 1 + i % 5, row t channel c = i + t / 8 + c / 64 (exact in f32), line i + 1,
 * phonemes that need escaping (quote, backslash, newline, tab, UTF-8) on every third. */
static size_t tokens_of(size_t i)
{
    return 1 + i % 5;
}

static void phonemes_of(size_t i, char *buf, size_t n)
{
    snprintf(buf, n, i % 3 == 0 ? "h\xc9\x99\"l\\o\n\t%zu" : "p%zu", i);
}

static float value_of(size_t i, size_t t, size_t c)
{
    return (float)i + (float)t / 8.0f + (float)c / 64.0f;
}

/* The rows [tokens_of(i), COLS] of sequence i into rows. */
static void rows_of(size_t i, float *rows)
{
    for (size_t t = 0; t < tokens_of(i); t++) {
        for (size_t c = 0; c < COLS; c++) {
            rows[t * COLS + c] = value_of(i, t, c);
        }
    }
}

static int append_range(ck_output *o, size_t first, size_t n)
{
    float rows[5 * COLS];
    char ph[64];
    ck_error err = {0};
    for (size_t i = first; i < first + n; i++) {
        rows_of(i, rows);
        phonemes_of(i, ph, sizeof ph);
        if (ck_output_append(o, rows, tokens_of(i), i + 1, 0, 1, ph, &err) != CK_OK) {
            fprintf(stderr, "    append: %s\n", err.message);
            return -1;
        }
    }
    return 0;
}

/* The JSON Lines of a U8 tensor as a cJSON array of objects; NULL when a line is not JSON. */
static cJSON *parse_lines(const ck_st_tensor *t)
{
    cJSON *arr = cJSON_CreateArray();
    const char *p = t->data, *end = p + t->bytes;
    while (arr != NULL && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        cJSON *item = nl != NULL ? cJSON_ParseWithLength(p, (size_t)(nl - p)) : NULL;
        if (!cJSON_IsObject(item)) {
            cJSON_Delete(item);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToArray(arr, item);
        p = nl + 1;
    }
    return arr;
}

static double num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1.0;
}

static const char *str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Every tensor of the file at path holds exactly sequences 0 .. n-1 and `skips` skipped lines
 * 2, 4, ... with error "bad <line>". */
static void check_file(const char *path, size_t n, size_t skips)
{
    ck_st_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, path, &err), CK_OK);
    const ck_st_tensor *feat = ck_st_find(f, "features"), *offs = ck_st_find(f, "offsets");
    const ck_st_tensor *seqs = ck_st_find(f, "sequences"), *skipped = ck_st_find(f, "skipped");
    CU_ASSERT_FATAL(feat && offs && seqs && skipped);
    CU_ASSERT(seqs->dtype == CK_DTYPE_U8 && skipped->dtype == CK_DTYPE_U8 && offs->dtype == CK_DTYPE_I64);
    CU_ASSERT_EQUAL_FATAL(offs->elements, n + 1);
    cJSON *s = parse_lines(seqs), *k = parse_lines(skipped);
    CU_ASSERT_FATAL(s != NULL && k != NULL);
    CU_ASSERT_EQUAL_FATAL((size_t)cJSON_GetArraySize(s), n);
    CU_ASSERT_EQUAL_FATAL((size_t)cJSON_GetArraySize(k), skips);
    int64_t at = 0, off;
    size_t bad = 0;
    char ph[64];
    for (size_t i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(s, (int)i);
        phonemes_of(i, ph, sizeof ph);
        memcpy(&off, (const char *)offs->data + 8 * i, 8);
        bad += off != at || num(e, "line") != (double)(i + 1) || num(e, "chunk") != 0 ||
               num(e, "chunks") != 1 || num(e, "tokens") != (double)tokens_of(i) ||
               strcmp(str(e, "phonemes"), ph) != 0 || cJSON_GetArraySize(e) != 5;
        for (size_t t = 0; t < tokens_of(i); t++) {
            for (size_t c = 0; c < COLS; c++) {
                float v;
                memcpy(&v, (const char *)feat->data + 4 * ((size_t)(at + (int64_t)t) * COLS + c), 4);
                bad += v != value_of(i, t, c);
            }
        }
        at += (int64_t)tokens_of(i);
    }
    memcpy(&off, (const char *)offs->data + 8 * n, 8);
    CU_ASSERT_EQUAL(off, at);
    CU_ASSERT_EQUAL(feat->shape[0], (size_t)at);
    for (size_t i = 0; i < skips; i++) {
        const cJSON *e = cJSON_GetArrayItem(k, (int)i);
        snprintf(ph, sizeof ph, "bad %zu", 2 * (i + 1));
        bad += num(e, "line") != (double)(2 * (i + 1)) || strcmp(str(e, "error"), ph) != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "sequences_format"), "jsonl");
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "skipped_format"), "jsonl");
    CU_ASSERT_PTR_NULL(ck_st_metadata(f, "sequences"));
    cJSON_Delete(s);
    cJSON_Delete(k);
    ck_st_close(f);
}

static int skip_lines(ck_output *o, size_t first, size_t n)
{
    char why[32];
    for (size_t i = first; i < first + n; i++) {
        snprintf(why, sizeof why, "bad %zu", 2 * (i + 1));
        if (ck_output_skip(o, 2 * (i + 1), why, NULL) != CK_OK) {
            return -1;
        }
    }
    return 0;
}

static uint64_t header_length(const char *path)
{
    unsigned char b[8] = {0};
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
        CU_ASSERT_EQUAL(fread(b, 1, 8, f), 8);
        fclose(f);
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = v << 8 | b[i];
    }
    return v;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* n sequences and n / 4 skipped lines, committed every `step` sequences (a multiple of 4), then
 * finished at path; *record_bytes is the largest progress record seen. */
static void write_run(const char *path, size_t n, size_t step, long *record_bytes)
{
    ck_output_mark mark;
    ck_output *o = open_out(path, 0, &mark);
    char record[400];
    snprintf(record, sizeof record, "%s.partial.json", path);
    CU_ASSERT_FATAL(o != NULL);
    *record_bytes = 0;
    for (size_t i = 0; i < n; i += step) {
        size_t m = n - i < step ? n - i : step;
        CU_ASSERT_EQUAL_FATAL(append_range(o, i, m), 0);
        CU_ASSERT_EQUAL_FATAL(skip_lines(o, i / 4, m / 4), 0);
        CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){i + m + 1, 0, 0, 0}, NULL), CK_OK);
        long r = file_size(record);
        *record_bytes = r > *record_bytes ? r : *record_bytes;
    }
    CU_ASSERT_EQUAL(ck_output_sequences(o), n);
    CU_ASSERT_EQUAL_FATAL(ck_output_finish(o, NULL), CK_OK);
    ck_output_free(o);
    CU_ASSERT_EQUAL(file_size(record), -1); /* partial state removed */
}

/* 100 vs 20,000 sequences: the same entries read back, and the header and the progress record
 * differ only by the digits of the sizes they state (the old header grew ~80 bytes per sequence). */
static void test_header_and_record_do_not_grow(void)
{
    long rec_small = 0, rec_large = 0;
    const char *small = tmp("small.st"), *large = tmp("large.st");
    write_run(small, 100, 20, &rec_small);
    write_run(large, 20000, 2000, &rec_large);
    check_file(small, 100, 25);
    check_file(large, 20000, 5000);
    uint64_t h_small = header_length(small), h_large = header_length(large);
    CU_ASSERT(h_small > 0 && h_small < 1024);
    CU_ASSERT(h_large >= h_small && h_large - h_small <= 48);
    CU_ASSERT(rec_small > 0 && rec_small < 1024); /* four SHA-256 digests: 4 x 64 hex */
    CU_ASSERT(rec_large >= rec_small && rec_large - rec_small <= 32);
    unlink(small);
    unlink(large);
}

/* No sequences at all: offsets [1] = {0}, empty sequences and skipped tensors. */
static void test_empty_run(void)
{
    long rec = 0;
    const char *path = tmp("empty.st");
    write_run(path, 0, 20, &rec);
    check_file(path, 0, 0);
    unlink(path);
}

/* Appends 30 and skips 2 uncommitted after a commit of 50 + 12, then "crashes" (free without
 * finish): resume restores exactly the commit, and finishing after 20 more gives 70 + 17 entries. */
static void test_resume_keeps_only_the_commit(void)
{
    ck_output_mark mark;
    const char *path = tmp("resume.st");
    ck_output *o = open_out(path, 0, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 0, 50), 0);
    CU_ASSERT_EQUAL_FATAL(skip_lines(o, 0, 12), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){51, 0, 7, 9}, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 50, 30), 0);
    CU_ASSERT_EQUAL_FATAL(skip_lines(o, 25, 2), 0);
    ck_output_free(o);

    o = open_out(path, 1, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT(mark.line == 51 && mark.chunk == 0);
    CU_ASSERT(mark.chunked_lines == 7 && mark.dropped_symbols == 9); /* the caller's counts */
    CU_ASSERT_EQUAL(ck_output_resumed(o), 1);
    CU_ASSERT_EQUAL(ck_output_skipped(o), 12);
    CU_ASSERT_EQUAL(ck_output_sequences(o), 50);
    size_t tokens = 0;
    for (size_t i = 0; i < 50; i++) {
        tokens += tokens_of(i);
    }
    CU_ASSERT_EQUAL(ck_output_tokens(o), tokens);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 50, 20), 0);
    CU_ASSERT_EQUAL_FATAL(skip_lines(o, 12, 5), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_finish(o, NULL), CK_OK);
    ck_output_free(o);
    check_file(path, 70, 17);
    unlink(path);
}

/* Puts the rows of sequences first .. first+n-1 last to first, each at its input-order place past
 * the appended rows, then appends their records in input order with rows NULL. */
static int put_range_reversed(ck_output *o, size_t first, size_t n)
{
    float rows[5 * COLS];
    char ph[64];
    ck_error err = {0};
    size_t ahead[64];
    CU_ASSERT_FATAL(n <= 64);
    for (size_t i = 0, a = 0; i < n; a += tokens_of(first + i), i++) {
        ahead[i] = a;
    }
    for (size_t k = n; k-- > 0;) {
        size_t i = first + k;
        rows_of(i, rows);
        if (ck_output_put_rows(o, ahead[k], rows, tokens_of(i), &err) != CK_OK) {
            return -1;
        }
    }
    for (size_t i = first; i < first + n; i++) {
        phonemes_of(i, ph, sizeof ph);
        if (ck_output_append(o, NULL, tokens_of(i), i + 1, 0, 1, ph, &err) != CK_OK) {
            return -1;
        }
    }
    return 0;
}

/* Rows put out of order (as the encoder writes batches sorted by length) land in input order; an
 * append without its rows is refused; rows put but never appended are gone after a resume. */
static void test_rows_put_out_of_order(void)
{
    ck_output_mark mark;
    ck_error err = {0};
    const char *path = tmp("placed.st");
    ck_output *o = open_out(path, 0, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL_FATAL(put_range_reversed(o, 0, 30), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){31, 0, 0, 0}, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_output_append(o, NULL, 1, 31, 0, 1, "x", &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "line 31"));
    CU_ASSERT_EQUAL(ck_output_put_rows(o, 0, NULL, 1, &err), CK_E_ARG);
    float junk[5 * COLS] = {0};
    CU_ASSERT_EQUAL_FATAL(ck_output_put_rows(o, 40, junk, 5, &err), CK_OK); /* never appended */
    ck_output_free(o);

    o = open_out(path, 1, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT(mark.line == 31 && ck_output_sequences(o) == 30);
    CU_ASSERT_EQUAL_FATAL(put_range_reversed(o, 30, 20), 0);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 50, 10), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_finish(o, NULL), CK_OK);
    ck_output_free(o);
    check_file(path, 60, 0);
    unlink(path);
}

/* A second run on the same output is refused before it touches a partial file (the first one's
 * rows would otherwise interleave with its own); once the first is gone, a run may take over. The
 * lock holder removes temporaries of the final file left by a run killed while writing it. */
static void test_second_writer_refused(void)
{
    ck_output_mark mark;
    ck_error err = {0};
    char path[320]; /* tmp() rotates four buffers, and this test calls it more often */
    snprintf(path, sizeof path, "%s", tmp("locked.st"));
    FILE *stale = fopen(tmp("locked.st.tmp.4242"), "wb"), *other = fopen(tmp("locked.st.tmp.x1"), "wb");
    CU_ASSERT_FATAL(stale != NULL && other != NULL);
    fclose(stale);
    fclose(other);
    ck_output *a = open_out(path, 0, &mark), *b = NULL;
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(tmp("locked.st.tmp.4242"), &st), 0); /* a killed run's temp: removed */
    CU_ASSERT_EQUAL(stat(tmp("locked.st.tmp.x1"), &st), 0);       /* not ck_st_write's name: kept */
    unlink(tmp("locked.st.tmp.x1"));
    CU_ASSERT_FATAL(a != NULL);
    CU_ASSERT_EQUAL_FATAL(append_range(a, 0, 20), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(a, (ck_output_mark){21, 0, 0, 0}, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_output_open(&b, path, "features", COLS, &IDENTITY, 0, &mark, &err), CK_E_IO);
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "another ckbatch run is writing this output"));
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_output_open(&b, path, "features", COLS, &IDENTITY, 1, &mark, &err), CK_E_IO);
    ck_output_discard(b); /* NULL: nothing */
    CU_ASSERT_EQUAL_FATAL(append_range(a, 20, 10), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_finish(a, NULL), CK_OK);
    ck_output_free(a);
    check_file(path, 30, 0);
    CU_ASSERT_NOT_EQUAL(stat(tmp("locked.st.partial.lock"), &st), 0); /* removed with the partials */
    b = open_out(path, 0, &mark);
    CU_ASSERT_PTR_NOT_NULL(b);
    ck_output_discard(b);
    ck_output_free(b);
    unlink(path);
}

/* Commits 10 sequences and 3 skipped lines, then damages the partial file PATH`suffix` (cut to
 * keep_bytes unless negative; its last bytes overwritten with `tail` unless NULL) and expects resume
 * to fail with `code` and a message containing `what`. */
static void expect_resume_failure(const char *suffix, long keep_bytes, const char *tail, int code,
                                  const char *what)
{
    ck_output_mark mark;
    ck_error err = {0};
    char victim[400];
    const char *path = tmp("damaged.st");
    ck_output *o = open_out(path, 0, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 0, 10), 0);
    CU_ASSERT_EQUAL_FATAL(skip_lines(o, 0, 3), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){11, 0, 0, 0}, NULL), CK_OK);
    ck_output_free(o);
    snprintf(victim, sizeof victim, "%s%s", path, suffix);
    if (keep_bytes >= 0) {
        CU_ASSERT_EQUAL_FATAL(truncate(victim, keep_bytes), 0);
    }
    if (tail != NULL) {
        FILE *f = fopen(victim, "r+b");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fseek(f, -(long)strlen(tail), SEEK_END);
        fputs(tail, f);
        fclose(f);
    }
    o = NULL;
    CU_ASSERT_EQUAL(ck_output_open(&o, path, "features", COLS, &IDENTITY, 1, &mark, &err), code);
    CU_ASSERT_PTR_NULL(o);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, what));
    if (strstr(err.message, what) == NULL) {
        fprintf(stderr, "    message: %s\n", err.message);
    }
    o = open_out(path, 0, &mark); /* a fresh run, discarded: removes every partial file */
    ck_output_discard(o);
    ck_output_free(o);
}

static void test_resume_rejects_short_journals(void)
{
    expect_resume_failure(".partial.seqs", 20, NULL, CK_E_FORMAT, "\"seqs_bytes\"");
    expect_resume_failure(".partial.skipped", 3, NULL, CK_E_FORMAT, "\"skipped_bytes\"");
    expect_resume_failure(".partial.offsets", 80, NULL, CK_E_FORMAT, "\"offsets_bytes\"");
    expect_resume_failure(".partial", 4, NULL, CK_E_FORMAT, "\"rows_bytes\"");
}

/* Same sizes, wrong contents: a sequence line merged away, a skipped line without its end, a last
 * offset that is not the token total, a progress record that is not JSON. */
static void test_resume_rejects_inconsistent_journals(void)
{
    expect_resume_failure(".partial.seqs", -1, " ", CK_E_FORMAT, "field \"sequences\"");
    expect_resume_failure(".partial.skipped", -1, "}", CK_E_FORMAT, "field \"skipped_bytes\"");
    expect_resume_failure(".partial.offsets", -1, "\x01", CK_E_FORMAT, "field \"tokens\"");
    expect_resume_failure(".partial.json", -1, "}}", CK_E_FORMAT, ".partial.json");
}

/* Commits 10 sequences and 3 skipped lines to a fresh output at path, mark line 11. */
static void commit_ten(const char *path)
{
    ck_output_mark mark;
    ck_output *o = open_out(path, 0, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 0, 10), 0);
    CU_ASSERT_EQUAL_FATAL(skip_lines(o, 0, 3), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){11, 0, 0, 0}, NULL), CK_OK);
    ck_output_free(o);
}

/* Resuming path is refused with CK_E_FORMAT naming `file` as changed; the partial state is then
 * cleared for the next case. */
static void expect_resume_refused_naming(const char *path, const char *file)
{
    ck_output_mark mark;
    ck_error err = {0};
    ck_output *o = NULL;
    char what[480];
    CU_ASSERT_EQUAL(ck_output_open(&o, path, "features", COLS, &IDENTITY, 1, &mark, &err),
                    CK_E_FORMAT);
    CU_ASSERT_PTR_NULL(o);
    ck_output_free(o); /* NULL unless the edit was accepted */
    snprintf(what, sizeof what, "%s: changed since it was committed", file);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, what));
    if (strstr(err.message, what) == NULL) {
        fprintf(stderr, "    message: %s\n", err.message);
    }
    o = open_out(path, 0, &mark);
    ck_output_discard(o);
    ck_output_free(o);
}

/* Commits 10 sequences and 3 skipped lines, then replaces byte `at` of PATH`suffix` with another
 * byte that is not a newline (every size, line count and the last offset stay right) and expects
 * resume to refuse with CK_E_FORMAT naming that file. */
static void expect_edit_refused(const char *suffix, long at)
{
    char victim[400];
    const char *path = tmp("edited.st");
    commit_ten(path);
    snprintf(victim, sizeof victim, "%s%s", path, suffix);
    FILE *f = fopen(victim, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, at, SEEK_SET), 0);
    int was = fgetc(f);
    CU_ASSERT_FATAL(was != EOF && was != '\n');
    CU_ASSERT_EQUAL(fseek(f, at, SEEK_SET), 0);
    fputc(was == 'a' ? 'b' : 'a', f);
    fclose(f);
    expect_resume_refused_naming(path, victim);
}

/* offsets[1] (not the last offset, which is checked against the token total), a feature byte, a
 * phoneme byte of the first sequence record, an error byte of the first skipped line. */
static void test_resume_refuses_same_length_edits(void)
{
    expect_edit_refused(".partial.offsets", 8);
    expect_edit_refused(".partial", 1);
    expect_edit_refused(".partial.seqs", 60);
    expect_edit_refused(".partial.skipped", 22);
}

/* Replaces the first `from` in the progress record of a commit (10 sequences, 3 skipped lines, mark
 * line 11) by `to`, of the same length, and expects resume to refuse naming the record. */
static void expect_record_edit_refused(const char *from, const char *to)
{
    char record[400], text[4096];
    const char *path = tmp("record_edit.st");
    commit_ten(path);
    snprintf(record, sizeof record, "%s.partial.json", path);
    FILE *f = fopen(record, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    char *at = strstr(text, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    CU_ASSERT_EQUAL_FATAL(strlen(from), strlen(to));
    memcpy(at, to, strlen(to));
    CU_ASSERT_EQUAL(fseek(f, 0, SEEK_SET), 0);
    CU_ASSERT_EQUAL(fwrite(text, 1, n, f), n);
    fclose(f);
    expect_resume_refused_naming(path, record);
}

/* The record's own fields: a mark moved by one line (the resumed run would drop line 11 or encode
 * line 10 twice, every journal digest still right) or the counts before the mark. */
static void test_resume_refuses_record_edits(void)
{
    expect_record_edit_refused("\"next_line\":11", "\"next_line\":12");
    expect_record_edit_refused("\"next_line\":11", "\"next_line\":10");
    expect_record_edit_refused("\"next_chunk\":0", "\"next_chunk\":1");
    expect_record_edit_refused("\"dropped_symbols_before\":0", "\"dropped_symbols_before\":9");
}

/* Resume without a record (a run killed before its first commit) starts fresh: the journals left
 * are replaced and the file holds only what this run appended. */
static void test_resume_without_record_starts_fresh(void)
{
    ck_output_mark mark = {9, 9, 9, 9};
    const char *path = tmp("norecord.st");
    char leftover[400];
    snprintf(leftover, sizeof leftover, "%s.partial.seqs", path);
    FILE *f = fopen(leftover, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"line\":1}\n", f);
    fclose(f);
    ck_output *o = open_out(path, 1, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL(ck_output_resumed(o), 0);
    CU_ASSERT(mark.line == 1 && mark.chunk == 0 && mark.chunked_lines == 0 &&
              mark.dropped_symbols == 0);
    CU_ASSERT_EQUAL(ck_output_sequences(o), 0);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 0, 12), 0);
    CU_ASSERT_EQUAL_FATAL(skip_lines(o, 0, 2), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){13, 0, 0, 0}, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_output_finish(o, NULL), CK_OK);
    ck_output_free(o);
    check_file(path, 12, 2);
    unlink(path);
}

/* An unresumable output (stdin) commits without a record: a resume afterwards finds none. */
static void test_unresumable_writes_no_record(void)
{
    ck_output_mark mark;
    ck_error err = {0};
    const char *path = tmp("stdin.st");
    char record[400];
    snprintf(record, sizeof record, "%s.partial.json", path);
    ck_output *o = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_output_open(&o, path, "features", COLS, &IDENTITY,
                                         CK_OUTPUT_UNRESUMABLE, &mark, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 0, 8), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){9, 0, 0, 0}, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_output_commits(o), 1);
    CU_ASSERT_EQUAL(file_size(record), -1);
    ck_output_free(o); /* "killed" */
    o = open_out(path, 1, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL(ck_output_resumed(o), 0);
    CU_ASSERT_EQUAL(ck_output_sequences(o), 0);
    CU_ASSERT_EQUAL_FATAL(append_range(o, 0, 8), 0);
    CU_ASSERT_EQUAL_FATAL(ck_output_finish(o, NULL), CK_OK);
    ck_output_free(o);
    check_file(path, 8, 0);
    unlink(path);
}

/* A skipped line at or after the commit's mark would be listed twice by a resumed run. */
static void test_commit_rejects_skip_after_mark(void)
{
    ck_output_mark mark;
    ck_error err = {0};
    const char *path = tmp("skipmark.st");
    ck_output *o = open_out(path, 0, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL(ck_output_skip(o, 7, "bad", NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_output_commit(o, (ck_output_mark){7, 0, 0, 0}, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "skipped line 7 is not before the mark"));
    CU_ASSERT_EQUAL(ck_output_commit(o, (ck_output_mark){8, 0, 0, 0}, NULL), CK_OK);
    ck_output_discard(o);
    ck_output_free(o);
}

/* A version 4 record (an older ckbatch's: no f0/n journals) cannot be continued: refused with
 * CK_E_FORMAT, its version named, the way out said. */
static void test_resume_refuses_an_old_record_version(void)
{
    char record[400], text[4096];
    const char *path = tmp("v4.st");
    commit_ten(path);
    snprintf(record, sizeof record, "%s.partial.json", path);
    FILE *f = fopen(record, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    char *at = strstr(text, "\"version\":5,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    at[10] = '4';
    CU_ASSERT_EQUAL(fseek(f, 0, SEEK_SET), 0);
    CU_ASSERT_EQUAL(fwrite(text, 1, n, f), n);
    fclose(f);
    ck_output_mark mark;
    ck_error err = {0};
    ck_output *o = NULL;
    CU_ASSERT_EQUAL(ck_output_open(&o, path, "features", COLS, &IDENTITY, 1, &mark, &err),
                    CK_E_FORMAT);
    CU_ASSERT_PTR_NULL(o);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "progress record version 4, this ckbatch reads "
                                  "version 5 only"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "start again without --resume"));
    o = open_out(path, 0, &mark);
    ck_output_discard(o);
    ck_output_free(o);
}

/* Appends sequence i of a durations output with curves: durations {1 + i, 2} (frames 3 + i),
 * f0 value v = 100 i + v and n value -v for v < 2 x frames, unless `frames` overrides the count
 * given to append (a caller's mistake finish must catch). */
static int append_curved(ck_output *o, size_t i, unsigned long long frames)
{
    int32_t d[2] = {(int32_t)(1 + i), 2};
    float f0[32], n[32]; /* 2 values a frame: frames <= 16 */
    CU_ASSERT_FATAL(frames <= 16);
    for (size_t v = 0; v < 32; v++) {
        f0[v] = (float)(100 * i + v);
        n[v] = -(float)v;
    }
    ck_error err = {0};
    int rc = ck_output_put_rows(o, 0, d, 2, &err);
    rc = rc == CK_OK ? ck_output_append_timed(o, 2, i + 1, 0, 1, "ab", frames, NULL, 0, f0, n,
                                              &err)
                     : rc;
    if (rc != CK_OK) {
        fprintf(stderr, "    append: %s\n", err.message);
    }
    return rc;
}

static ck_output *open_curved(const char *path, int resume, ck_output_mark *mark)
{
    ck_output *o = NULL;
    ck_error err = {0};
    if (ck_output_open(&o, path, "durations", 1, &IDENTITY, resume, mark, &err) != CK_OK ||
        ck_output_set_durations(o, 1, &err) != CK_OK) {
        fprintf(stderr, "    open: %s\n", err.message);
    }
    return o;
}

static void test_durations_with_curves(void)
{
    const char *path = tmp("curves.st");
    ck_output_mark mark;
    ck_output *o = open_curved(path, 0, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL_FATAL(append_curved(o, 0, 3), CK_OK);
    CU_ASSERT_EQUAL_FATAL(append_curved(o, 1, 4), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){3, 0, 0, 0}, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(append_curved(o, 7, 10), CK_OK); /* not committed: dropped by resume */
    ck_output_free(o);
    o = open_curved(path, 1, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL(mark.line, 3);
    CU_ASSERT_EQUAL_FATAL(append_curved(o, 2, 5), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_output_commit(o, (ck_output_mark){4, 0, 0, 0}, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_output_finish(o, NULL), CK_OK);
    ck_output_free(o);
    ck_st_file *st = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&st, path, NULL), CK_OK);
    const ck_st_tensor *f0 = ck_st_find(st, "f0"), *n = ck_st_find(st, "n");
    CU_ASSERT_FATAL(f0 != NULL && n != NULL);
    CU_ASSERT_EQUAL(f0->dtype, CK_DTYPE_F32);
    CU_ASSERT_EQUAL_FATAL(f0->elements, 2 * (3 + 4 + 5));
    CU_ASSERT_EQUAL_FATAL(n->elements, 2 * (3 + 4 + 5));
    const size_t first[3] = {0, 6, 14}, count[3] = {6, 8, 10};
    for (size_t i = 0; i < 3; i++) {
        for (size_t v = 0; v < count[i]; v++) {
            float a, b;
            memcpy(&a, (const char *)f0->data + 4 * (first[i] + v), 4);
            memcpy(&b, (const char *)n->data + 4 * (first[i] + v), 4);
            CU_ASSERT_EQUAL(a, (float)(100 * i + v));
            CU_ASSERT_EQUAL(b, -(float)v);
        }
    }
    ck_st_close(st);
    unlink(path);
    /* 3 frames of durations appended with curves for 4: refused at finish, no file */
    ck_error err = {0};
    o = open_curved(path, 0, &mark);
    CU_ASSERT_FATAL(o != NULL);
    CU_ASSERT_EQUAL_FATAL(append_curved(o, 0, 4), CK_OK);
    CU_ASSERT_EQUAL(ck_output_finish(o, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not 2 values for each of the 3 frames"));
    struct stat sb;
    CU_ASSERT_NOT_EQUAL(stat(path, &sb), 0);
    ck_output_discard(o);
    ck_output_free(o);
}

static void test_cleanup(void)
{
    CU_ASSERT_EQUAL(rmdir(ck_test_tmp_dir()), 0);
}

CK_TEST_MAIN("output",
             {"header and record do not grow", test_header_and_record_do_not_grow},
             {"empty run", test_empty_run},
             {"resume keeps only the commit", test_resume_keeps_only_the_commit},
             {"rows put out of order", test_rows_put_out_of_order},
             {"second writer refused", test_second_writer_refused},
             {"resume rejects short journals", test_resume_rejects_short_journals},
             {"resume rejects inconsistent journals", test_resume_rejects_inconsistent_journals},
             {"commit rejects skip after mark", test_commit_rejects_skip_after_mark},
             {"resume refuses same-length edits", test_resume_refuses_same_length_edits},
             {"resume refuses record edits", test_resume_refuses_record_edits},
             {"resume without record starts fresh", test_resume_without_record_starts_fresh},
             {"unresumable output writes no record", test_unresumable_writes_no_record},
             {"resume refuses an old record version", test_resume_refuses_an_old_record_version},
             {"durations with curves", test_durations_with_curves},
             {"cleanup", test_cleanup})
