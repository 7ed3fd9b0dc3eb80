/* test_reader.c - the CLI's front end: exact ids per format, every line error with its message and
 * recovery, CRLF/BOM equivalence, chunking of a 1 MiB line, stats, skipping lines unconverted, and
 * lines handed in one at a time (ck_reader_line) read exactly as the same lines from a stream. */
#include "ck_test.h"
#include "line_reader.h"
#include "reader.h"

static FILE *file_of(const char *bytes, size_t n)
{
    FILE *f = tmpfile();
    if (f != NULL) {
        fwrite(bytes, 1, n, f);
        rewind(f);
    }
    return f;
}

/* Collects warnings: count and the last message. */
typedef struct {
    int count;
    char last[320];
} warnings;

static void on_warn(void *ctx, const char *message)
{
    warnings *w = ctx;
    w->count++;
    snprintf(w->last, sizeof w->last, "%s", message);
}

/* A reader over an in-memory corpus, with its FILE and warnings. */
typedef struct {
    ck_reader *r;
    FILE *f;
    warnings w;
} fixture;

static void open_fixture(fixture *fx, const char *s, size_t n, ck_input_format format, int strict,
                         size_t max)
{
    memset(fx, 0, sizeof *fx);
    ck_reader_options o = {format, NULL, strict, max, on_warn, &fx->w, NULL, 0, "espeak", NULL};
    fx->f = file_of(s, n);
    ck_error err = {CK_OK, ""};
    int rc = ck_reader_open(&fx->r, fx->f, "c.txt", &o, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "    open: %s\n", err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
}

static void close_fixture(fixture *fx)
{
    ck_reader_close(fx->r);
    fclose(fx->f);
}

/* Asserts the next call returns one sequence with exactly these ids (boundaries included). */
static void next_ids(ck_reader *r, size_t line, const int32_t *want, size_t n_want)
{
    ck_sequence *seqs = NULL;
    size_t n = 0;
    ck_error err = {CK_OK, ""};
    int rc = ck_reader_next(r, &seqs, &n, &err);
    if (rc != 1) {
        fprintf(stderr, "    rc %d: %s\n", rc, err.message);
    }
    CU_ASSERT_EQUAL_FATAL(rc, 1);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(seqs[0].line, line);
    CU_ASSERT_EQUAL(seqs[0].chunks, 1);
    CU_ASSERT_EQUAL_FATAL(seqs[0].n_ids, n_want);
    CU_ASSERT_EQUAL(memcmp(seqs[0].ids, want, n_want * sizeof *want), 0);
    ck_sequences_free(seqs, n);
}

/* Asserts the next call fails with code and exactly this message, leaving *seqs NULL. */
static void next_fails(ck_reader *r, int code, const char *message)
{
    ck_sequence *seqs = (ck_sequence *)&seqs;
    size_t n = 7;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_reader_next(r, &seqs, &n, &err), code);
    CU_ASSERT_PTR_NULL(seqs);
    CU_ASSERT_EQUAL(n, 0);
    if (strcmp(err.message, message) != 0) {
        fprintf(stderr, "    message \"%s\", want \"%s\"\n", err.message, message);
    }
    CU_ASSERT_STRING_EQUAL(err.message, message);
}

static void next_ends(ck_reader *r)
{
    ck_sequence *seqs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(ck_reader_next(r, &seqs, &n, NULL), 0);
}

/* "həlˈO wˈɜɹld." in Kokoro ids: h ə l ˈ O space w ˈ ɜ ɹ l d . */
static const int32_t k_hello[] = {0, 50, 83, 54, 156, 31, 16, 65, 156, 87, 123, 54, 46, 4, 0};
#define HELLO "h\xC9\x99l\xCB\x88O w\xCB\x88\xC9\x9C\xC9\xB9ld."
#define N_HELLO (sizeof k_hello / sizeof k_hello[0])

static void test_phonemes_exact_ids_and_empty_lines(void)
{
    const char s[] = HELLO "\n\n \t \n" HELLO "\n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_PHONEMES, 0, 0);
    next_ids(fx.r, 1, k_hello, N_HELLO);
    next_ids(fx.r, 4, k_hello, N_HELLO);
    next_ends(fx.r);
    const ck_reader_stats *st = ck_reader_stats_get(fx.r);
    CU_ASSERT_EQUAL(st->lines, 4);
    CU_ASSERT_EQUAL(st->empty_lines, 2);
    CU_ASSERT_EQUAL(st->sequences, 2);
    CU_ASSERT_EQUAL(st->chunked_lines, 0);
    CU_ASSERT_PTR_NULL(ck_reader_g2p_version(fx.r));
    close_fixture(&fx);
}

static void test_crlf_bom_no_final_newline_match_plain(void)
{
    const char plain[] = HELLO "\n\nh\xC9\x99\n";
    const char dos[] = "\xEF\xBB\xBF" HELLO "\r\n\r\nh\xC9\x99";
    fixture a, b;
    open_fixture(&a, plain, sizeof plain - 1, CK_INPUT_PHONEMES, 0, 0);
    open_fixture(&b, dos, sizeof dos - 1, CK_INPUT_PHONEMES, 0, 0);
    for (int k = 0; k < 3; k++) {
        ck_sequence *sa = NULL, *sb = NULL;
        size_t na = 0, nb = 0;
        int ra = ck_reader_next(a.r, &sa, &na, NULL), rb = ck_reader_next(b.r, &sb, &nb, NULL);
        CU_ASSERT_EQUAL(ra, rb);
        CU_ASSERT_EQUAL(ra, k < 2 ? 1 : 0);
        if (ra == 1 && rb == 1) {
            CU_ASSERT_EQUAL(sa[0].line, sb[0].line);
            CU_ASSERT_STRING_EQUAL(sa[0].phonemes, sb[0].phonemes);
            CU_ASSERT_EQUAL_FATAL(sa[0].n_ids, sb[0].n_ids);
            CU_ASSERT_EQUAL(memcmp(sa[0].ids, sb[0].ids, sa[0].n_ids * sizeof(int32_t)), 0);
        }
        ck_sequences_free(sa, na);
        ck_sequences_free(sb, nb);
    }
    close_fixture(&a);
    close_fixture(&b);
}

static void test_unknown_symbol_dropped_and_warned(void)
{
    const char s[] = "  hg\xC9\x99\n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_PHONEMES, 0, 0);
    const int32_t want[] = {0, 50, 83, 0};
    next_ids(fx.r, 1, want, 4);
    CU_ASSERT_EQUAL(fx.w.count, 1);
    CU_ASSERT_STRING_EQUAL(fx.w.last, "c.txt:1: column 4: symbol U+0067 'g' not in vocab, dropped");
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->dropped_symbols, 1);
    close_fixture(&fx);
}

static void test_unknown_symbol_strict_is_line_error(void)
{
    const char s[] = "hg\nh\xC9\x99\n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_PHONEMES, 1, 0);
    next_fails(fx.r, CK_E_INPUT, "c.txt:1: column 2: symbol U+0067 'g' not in vocab");
    const int32_t want[] = {0, 50, 83, 0};
    next_ids(fx.r, 2, want, 4);
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->error_lines, 1);
    CU_ASSERT_EQUAL(fx.w.count, 0);
    close_fixture(&fx);
}

static void test_all_dropped_is_line_error(void)
{
    fixture fx;
    open_fixture(&fx, "gg\tB\n", 5, CK_INPUT_PHONEMES, 0, 0);
    next_fails(fx.r, CK_E_INPUT, "c.txt:1: column 1: no phonemes left after dropping symbols");
    CU_ASSERT_EQUAL(fx.w.count, 4);
    CU_ASSERT_STRING_EQUAL(fx.w.last, "c.txt:1: column 4: symbol U+0042 'B' not in vocab, dropped");
    next_ends(fx.r);
    close_fixture(&fx);
}

static void test_invalid_utf8_then_good_line(void)
{
    const char s[] = "h\xC9\x99\xC0\x80\nh\xC9\x99\n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_PHONEMES, 0, 0);
    next_fails(fx.r, CK_E_INPUT, "c.txt:1: column 3: invalid UTF-8 at byte 4");
    const int32_t want[] = {0, 50, 83, 0};
    next_ids(fx.r, 2, want, 4);
    next_ends(fx.r);
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->error_lines, 1);
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->lines, 2);
    close_fixture(&fx);
}

static void test_nul_byte_then_good_line(void)
{
    const char s[] = "h\0h\nh\xC9\x99\n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_PHONEMES, 0, 0);
    next_fails(fx.r, CK_E_INPUT, "c.txt:1: byte 2: NUL byte in line");
    const int32_t want[] = {0, 50, 83, 0};
    next_ids(fx.r, 2, want, 4);
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->error_lines, 1);
    close_fixture(&fx);
}

/* ck_reader_skip passes over lines without converting them: a bad UTF-8 line, a NUL byte and an
 * unknown symbol before the skip point give no error and no warning; lines and empty lines are
 * counted, line numbers go on, and skipping past the end is CK_E_FORMAT. */
static void test_skip_passes_over_lines_unconverted(void)
{
    const char s[] = "\xEF\xBB\xBFh\xFF\n \t\nh\0h\nhx\n\nh\xC9\x99\n";
    fixture fx;
    ck_error err = {CK_OK, ""};
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_PHONEMES, 1, 0);
    CU_ASSERT_EQUAL(ck_reader_skip(fx.r, 5, &err), CK_OK);
    CU_ASSERT_EQUAL(err.code, CK_OK);
    const int32_t want[] = {0, 50, 83, 0};
    next_ids(fx.r, 6, want, 4);
    next_ends(fx.r);
    const ck_reader_stats *st = ck_reader_stats_get(fx.r);
    CU_ASSERT_EQUAL(st->lines, 6);
    CU_ASSERT_EQUAL(st->empty_lines, 2);
    CU_ASSERT_EQUAL(st->error_lines, 0);
    CU_ASSERT_EQUAL(st->sequences, 1);
    CU_ASSERT_EQUAL(fx.w.count, 0);
    close_fixture(&fx);
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_PHONEMES, 1, 0);
    CU_ASSERT_EQUAL(ck_reader_skip(fx.r, 7, &err), CK_E_FORMAT);
    CU_ASSERT_STRING_EQUAL(err.message, "c.txt: ends at line 6, before line 8");
    close_fixture(&fx);
}

static void test_ids_format(void)
{
    const char s[] = "[50, 83]\n  [ 4 ]  \n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_IDS, 0, 0);
    ck_sequence *seqs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(ck_reader_next(fx.r, &seqs, &n, NULL), 1);
    CU_ASSERT_STRING_EQUAL(seqs[0].phonemes, "h\xC9\x99");
    ck_sequences_free(seqs, n);
    const int32_t want[] = {0, 4, 0};
    next_ids(fx.r, 2, want, 3);
    next_ends(fx.r);
    close_fixture(&fx);
}

/* Each bad ids line is rejected with its message, and the following good line still reads. */
static void ids_line_fails_strict(const char *line, size_t max, int strict, const char *message)
{
    char s[128];
    snprintf(s, sizeof s, "%s\n[16]\n", line);
    fixture fx;
    open_fixture(&fx, s, strlen(s), CK_INPUT_IDS, strict, max);
    next_fails(fx.r, CK_E_INPUT, message);
    const int32_t want[] = {0, 16, 0};
    next_ids(fx.r, 2, want, 3);
    close_fixture(&fx);
}

static void ids_line_fails(const char *line, size_t max, const char *message)
{
    ids_line_fails_strict(line, max, 0, message);
}

static void test_ids_rejections(void)
{
    ids_line_fails("[50, 0]", 0, "c.txt:1: element 2: id 0 out of range 1..177");
    ids_line_fails("[178]", 0, "c.txt:1: element 1: id 178 out of range 1..177");
    ids_line_fails("[-3]", 0, "c.txt:1: element 1: id -3 out of range 1..177");
    ids_line_fails_strict("[7]", 0, 1, "c.txt:1: element 1: id 7 names no vocab symbol");
    ids_line_fails_strict("[50, 26]", 0, 1, "c.txt:1: element 2: id 26 names no vocab symbol");
    ids_line_fails("[1.5]", 0, "c.txt:1: element 1: not an integer id");
    ids_line_fails("[1, \"a\"]", 0, "c.txt:1: element 2: not an integer id");
    ids_line_fails("[1e400]", 0, "c.txt:1: element 1: not an integer id");
    ids_line_fails("[01]", 0, "c.txt:1: column 2: 01 is not a JSON number"); /* cJSON reads 1 */
    ids_line_fails("[5, -07]", 0, "c.txt:1: column 5: -07 is not a JSON number");
    ids_line_fails("[5, 1.]", 0, "c.txt:1: column 5: 1. is not a JSON number");
    ids_line_fails("[1,\x01 2]", 0, "c.txt:1: column 4: control byte 0x01 is not JSON whitespace");
    ids_line_fails("[5, -1e400]", 0, "c.txt:1: element 2: not an integer id");
    ids_line_fails("{\"a\": 1}", 0, "c.txt:1: column 1: expected a JSON array of ids");
    ids_line_fails("[1, 2", 0, "c.txt:1: column 5: expected a JSON array of ids");
    ids_line_fails("[1] x", 0, "c.txt:1: column 4: text after the JSON array");
    ids_line_fails("[]", 0, "c.txt:1: column 1: 0 ids, expected 1..510");
    ids_line_fails("[1, 2, 3, 4]", 3, "c.txt:1: column 1: 4 ids, expected 1..3");
}

/* Ids format is the raw model interface: an id that names an embedding row but no vocab symbol is
 * kept (in the ids, as U+FFFD in phonemes), warned with line and element, and counted. */
static void test_ids_undefined_id_kept_and_warned(void)
{
    const char s[] = "[50, 7, 83]\n[177, 26]\n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_IDS, 0, 0);
    ck_sequence *seqs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(ck_reader_next(fx.r, &seqs, &n, NULL), 1);
    const int32_t want[] = {0, 50, 7, 83, 0};
    CU_ASSERT_EQUAL_FATAL(seqs[0].n_ids, 5);
    CU_ASSERT_EQUAL(memcmp(seqs[0].ids, want, sizeof want), 0);
    CU_ASSERT_STRING_EQUAL(seqs[0].phonemes, "h\xEF\xBF\xBD\xC9\x99");
    CU_ASSERT_EQUAL(fx.w.count, 1);
    CU_ASSERT_STRING_EQUAL(fx.w.last, "c.txt:1: element 2: id 7 names no vocab symbol, kept");
    ck_sequences_free(seqs, n);
    const int32_t want2[] = {0, 177, 26, 0};
    next_ids(fx.r, 2, want2, 4);
    CU_ASSERT_STRING_EQUAL(fx.w.last, "c.txt:2: element 2: id 26 names no vocab symbol, kept");
    next_ends(fx.r);
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->dropped_symbols, 2);
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->error_lines, 0);
    close_fixture(&fx);
}

/* id_rows (the loaded word-embedding table's rows) bounds the ids, not the vocabulary's size. */
static void test_ids_bounded_by_embedding_rows(void)
{
    const char s[] = "[199, 16]\n[200]\n[16]\n";
    warnings w = {0, ""};
    ck_reader_options o = {CK_INPUT_IDS, NULL, 0, 0, on_warn, &w, NULL, 200, NULL, NULL};
    FILE *f = file_of(s, sizeof s - 1);
    ck_reader *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, f, "c.txt", &o, NULL), CK_OK);
    const int32_t want[] = {0, 199, 16, 0}, want16[] = {0, 16, 0};
    next_ids(r, 1, want, 4);
    CU_ASSERT_STRING_EQUAL(w.last, "c.txt:1: element 1: id 199 names no vocab symbol, kept");
    next_fails(r, CK_E_INPUT, "c.txt:2: element 1: id 200 out of range 1..199");
    next_ids(r, 3, want16, 3);
    ck_reader_close(r);
    fclose(f);
}

/* A vocabulary passed in replaces the embedded one in every direction: symbols -> ids, ids ->
 * phonemes, and which ids are undefined. */
static void test_vocab_option(void)
{
    ck_vocab *v = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_vocab_new(&v, 5, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_vocab_add(v, "h", 3, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_vocab_add(v, "\xC9\x99", 1, NULL), CK_OK); /* ə */
    const char s[] = "h\xC9\x99x\n[3, 2, 1]\n[5]\n";
    warnings w = {0, ""};
    ck_reader_options o = {CK_INPUT_PHONEMES, NULL, 0, 0, on_warn, &w, v, 0, NULL, NULL};
    FILE *f = file_of(s, sizeof s - 1);
    ck_reader *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, f, "c.txt", &o, NULL), CK_OK);
    const int32_t want[] = {0, 3, 1, 0};
    next_ids(r, 1, want, 4);
    CU_ASSERT_STRING_EQUAL(w.last, "c.txt:1: column 3: symbol U+0078 'x' not in vocab, dropped");
    ck_reader_close(r);
    rewind(f);
    o.format = CK_INPUT_IDS;
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, f, "c.txt", &o, NULL), CK_OK);
    next_fails(r, CK_E_INPUT, "c.txt:1: column 1: expected a JSON array of ids");
    ck_sequence *seqs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(ck_reader_next(r, &seqs, &n, NULL), 1);
    const int32_t want2[] = {0, 3, 2, 1, 0};
    CU_ASSERT_EQUAL_FATAL(seqs[0].n_ids, 5);
    CU_ASSERT_EQUAL(memcmp(seqs[0].ids, want2, sizeof want2), 0);
    CU_ASSERT_STRING_EQUAL(seqs[0].phonemes, "h\xEF\xBF\xBD\xC9\x99");
    CU_ASSERT_STRING_EQUAL(w.last, "c.txt:2: element 2: id 2 names no vocab symbol, kept");
    ck_sequences_free(seqs, n);
    next_fails(r, CK_E_INPUT, "c.txt:3: element 1: id 5 out of range 1..4");
    ck_reader_close(r);
    fclose(f);
    ck_vocab_free(v);
}

static void test_one_mebibyte_line_is_chunked(void)
{
    const char unit[] = HELLO " ";  /* 14 code points, 20 bytes */
    size_t reps = CK_LINE_MAX_BYTES / (sizeof unit - 1), n = reps * (sizeof unit - 1); /* <= limit */
    char *s = malloc(n + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    for (size_t i = 0; i < reps; i++) {
        memcpy(s + i * (sizeof unit - 1), unit, sizeof unit - 1);
    }
    s[n] = '\n';
    fixture fx;
    open_fixture(&fx, s, n + 1, CK_INPUT_PHONEMES, 0, 0);
    ck_sequence *seqs = NULL;
    size_t count = 0, phonemes = 0;
    CU_ASSERT_EQUAL_FATAL(ck_reader_next(fx.r, &seqs, &count, NULL), 1);
    /* 36 sentences (504 code points with their separating spaces, less the trailing one) per chunk */
    CU_ASSERT_EQUAL(count, (reps + 35) / 36);
    for (size_t c = 0; c < count; c++) {
        CU_ASSERT_TRUE(seqs[c].n_ids <= 512 && seqs[c].ids[0] == 0 && seqs[c].ids[seqs[c].n_ids - 1] == 0);
        CU_ASSERT_TRUE(seqs[c].chunk == c && seqs[c].chunks == count && seqs[c].line == 1);
        phonemes += seqs[c].n_ids - 2;
    }
    CU_ASSERT_EQUAL(seqs[0].n_ids, 36 * 14 - 1 + 2);
    CU_ASSERT_EQUAL(phonemes, reps * 13 + (reps - count));  /* spaces between chunks are cut */
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->chunked_lines, 1);
    CU_ASSERT_EQUAL(ck_reader_stats_get(fx.r)->sequences, count);
    ck_sequences_free(seqs, count);
    close_fixture(&fx);
    free(s);
}

static void open_fails(ck_reader_options o, const char *field)
{
    ck_reader *r = (ck_reader *)&r;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_reader_open(&r, stdin, "c.txt", &o, &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, field));
}

static void test_open_rejections(void)
{
    open_fails((ck_reader_options){(ck_input_format)7, NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL},
               "format 7");
    open_fails((ck_reader_options){CK_INPUT_TEXT, "fr", 0, 0, NULL, NULL, NULL, 0, NULL, NULL}, "lang \"fr\"");
    open_fails((ck_reader_options){CK_INPUT_IDS, NULL, 0, 511, NULL, NULL, NULL, 0, NULL, NULL}, "max_phonemes 511");
    open_fails((ck_reader_options){CK_INPUT_IDS, NULL, 0, 0, NULL, NULL, NULL, 1, NULL, NULL}, "id_rows 1");
    ck_error err = {CK_OK, ""};
    ck_reader *r = NULL;
    CU_ASSERT_EQUAL(ck_reader_open(&r, NULL, "c.txt", NULL, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "input stream"));
    ck_reader_close(NULL);
    ck_sequences_free(NULL, 3);
}

#ifdef CK_HAVE_ESPEAK
static void test_text_format(void)
{
    const char s[] = "Hello world.\n";
    fixture fx;
    open_fixture(&fx, s, sizeof s - 1, CK_INPUT_TEXT, 1, 0);
    CU_ASSERT_EQUAL(strncmp(ck_reader_g2p_version(fx.r), "espeak-ng ", 10), 0);
    next_ids(fx.r, 1, k_hello, N_HELLO);
    close_fixture(&fx);
}

static void test_text_long_paragraph_is_chunked(void)
{
    FILE *f = fopen(ck_test_path("tests/fixtures/corpus/frankenstein_long.txt"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ck_reader_options o = {CK_INPUT_TEXT, "en-us", 1, 0, NULL, NULL, NULL, 0, "espeak", NULL};
    ck_reader *r = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, f, "frankenstein_long.txt", &o, NULL), CK_OK);
    ck_sequence *seqs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(ck_reader_next(r, &seqs, &n, NULL), 1);
    CU_ASSERT_TRUE(n >= 2);
    for (size_t c = 0; c < n; c++) {
        CU_ASSERT_TRUE(seqs[c].n_ids <= 512);
        CU_ASSERT_TRUE(c + 1 == n || strchr(".!?", seqs[c].phonemes[strlen(seqs[c].phonemes) - 1]));
    }
    ck_sequences_free(seqs, n);
    CU_ASSERT_EQUAL(ck_reader_stats_get(r)->chunked_lines, 1);
    ck_reader_close(r);
    fclose(f);
}
#define ESPEAK_CASES                                                                            \
    {"text format", test_text_format},                                                          \
    {"text: long paragraph is chunked", test_text_long_paragraph_is_chunked},
#else
#define ESPEAK_CASES
#endif

/* Reads lines[0..n) both ways, in format: from a stream of the lines joined by "\n", and handed in
 * with ck_reader_line; every return, message, sequence and counter must agree. */
static void lines_match_stream(ck_input_format format, const char *const *lines, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += strlen(lines[i]) + 1;
    }
    char *joined = malloc(total + 1), *at = joined;
    CU_ASSERT_PTR_NOT_NULL_FATAL(joined);
    for (size_t i = 0; i < n; i++) {
        at += sprintf(at, "%s\n", lines[i]);
    }
    ck_reader_options o = {format, NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL};
    ck_reader *stream = NULL, *handed = NULL;
    FILE *f = file_of(joined, total);
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&stream, f, "<lines>", &o, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_reader_open_lines(&handed, "<lines>", &o, NULL), CK_OK);
    for (size_t i = 0; i < n; i++) {
        ck_sequence *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        ck_error ea = {CK_OK, ""}, eb = {CK_OK, ""};
        int rb = ck_reader_line(handed, lines[i], strlen(lines[i]), &b, &nb, &eb);
        if (rb == 0) {
            continue; /* an empty line: the stream skips it */
        }
        int ra = ck_reader_next(stream, &a, &na, &ea);
        CU_ASSERT_EQUAL(ra, rb);
        CU_ASSERT_STRING_EQUAL(ea.message, eb.message);
        CU_ASSERT_EQUAL_FATAL(na, nb);
        for (size_t k = 0; k < na; k++) {
            CU_ASSERT_EQUAL(a[k].line, b[k].line);
            CU_ASSERT_EQUAL(a[k].chunk, b[k].chunk);
            CU_ASSERT_STRING_EQUAL(a[k].phonemes, b[k].phonemes);
            CU_ASSERT_EQUAL_FATAL(a[k].n_ids, b[k].n_ids);
            CU_ASSERT_EQUAL(memcmp(a[k].ids, b[k].ids, a[k].n_ids * sizeof *a[k].ids), 0);
        }
        ck_sequences_free(a, na);
        ck_sequences_free(b, nb);
    }
    ck_sequence *a = NULL;
    size_t na = 0;
    CU_ASSERT_EQUAL(ck_reader_next(stream, &a, &na, NULL), 0);
    const ck_reader_stats *sa = ck_reader_stats_get(stream), *sb = ck_reader_stats_get(handed);
    CU_ASSERT_EQUAL(sa->lines, sb->lines);
    CU_ASSERT_EQUAL(sa->empty_lines, sb->empty_lines);
    CU_ASSERT_EQUAL(sa->sequences, sb->sequences);
    CU_ASSERT_EQUAL(sa->error_lines, sb->error_lines);
    CU_ASSERT_EQUAL(sa->dropped_symbols, sb->dropped_symbols);
    CU_ASSERT_EQUAL(sa->bytes, sb->bytes);
    ck_reader_close(stream);
    ck_reader_close(handed);
    fclose(f);
    free(joined);
}

static void test_lines_handed_in_match_the_stream(void)
{
    char *huge = malloc(CK_LINE_MAX_BYTES + 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    memset(huge, 'a', CK_LINE_MAX_BYTES + 1);
    huge[CK_LINE_MAX_BYTES + 1] = '\0';
    const char *phonemes[] = {"\xEF\xBB\xBFhəlˈO", "wˈɜɹld\r", "", "  \t ", "x\xFFy", "  ab  ", huge,
                              "ɑː\r\r", "\xEF\xBB\xBF" "ab"};
    lines_match_stream(CK_INPUT_PHONEMES, phonemes, sizeof phonemes / sizeof *phonemes);
    huge[CK_LINE_MAX_BYTES] = '\0'; /* at the limit: read, then too many ids */
    const char *ids[] = {"[50, 83]", "[1, 2", huge, "[0]", "[3]\r"};
    lines_match_stream(CK_INPUT_IDS, ids, sizeof ids / sizeof *ids);
    free(huge);

    ck_reader *r = NULL;
    ck_sequence *seqs = NULL;
    size_t n = 0;
    FILE *f = file_of("ab\n", 3);
    CU_ASSERT_EQUAL_FATAL(ck_reader_open(&r, f, "c.txt", NULL, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_reader_line(r, "ab", 2, &seqs, &n, NULL), CK_E_ARG);
    ck_reader_close(r);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(ck_reader_open_lines(&r, NULL, NULL, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_reader_next(r, &seqs, &n, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_reader_line(r, NULL, 0, &seqs, &n, NULL), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_reader_line(r, "", 0, &seqs, &n, NULL), 0);
    CU_ASSERT_PTR_NULL(seqs);
    ck_reader_close(r);
    CU_ASSERT_EQUAL(ck_reader_open_lines(NULL, NULL, NULL, NULL), CK_E_ARG);
}

CK_TEST_MAIN("reader", {"phonemes: exact ids, empty lines", test_phonemes_exact_ids_and_empty_lines},
             {"CRLF + BOM + no final newline match plain", test_crlf_bom_no_final_newline_match_plain},
             {"unknown symbol dropped and warned", test_unknown_symbol_dropped_and_warned},
             {"unknown symbol under strict is a line error", test_unknown_symbol_strict_is_line_error},
             {"all symbols dropped is a line error", test_all_dropped_is_line_error},
             {"invalid UTF-8 then a good line", test_invalid_utf8_then_good_line},
             {"NUL byte then a good line", test_nul_byte_then_good_line},
             {"skip passes over lines unconverted", test_skip_passes_over_lines_unconverted},
             {"ids format", test_ids_format}, {"ids rejections", test_ids_rejections},
             {"ids: undefined id kept and warned", test_ids_undefined_id_kept_and_warned},
             {"ids: bounded by the embedding rows", test_ids_bounded_by_embedding_rows},
             {"vocab option replaces the embedded one", test_vocab_option},
             {"1 MiB line is chunked", test_one_mebibyte_line_is_chunked},
             {"open rejections", test_open_rejections},
             {"lines handed in match the stream", test_lines_handed_in_match_the_stream}, ESPEAK_CASES)
