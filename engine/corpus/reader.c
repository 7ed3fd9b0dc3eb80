/* reader.c - corpus lines -> [0, ids..., 0] sequences (ids via cJSON, phonemes via the vocab, text
 * via g2p), with chunking and per-line errors; must not batch, print or exit. */
#include "reader.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "g2p.h"
#include "json.h"
#include "lang.h"
#include "line_reader.h"
#include "utf8.h"
#include "vocab.h"

#include <time.h>

struct ck_reader {
    ck_line_reader *lines;
    ck_g2p *g2p;             /* text format: the G2P (NULL for the other formats) */
    ck_reader_options opt;   /* lang points at a literal; max_phonemes, vocab, id_rows resolved */
    ck_reader_stats stats;
    const char *source;      /* owned by `lines` */
    size_t line_no;          /* line being processed */
    size_t lead;             /* blanks trimmed from the line's start: added to source columns */
};

static int check_options(const ck_reader_options *o, ck_error *err)
{
    if (o->format != CK_INPUT_PHONEMES && o->format != CK_INPUT_IDS &&
        o->format != CK_INPUT_TEXT) {
        return ck_fail(err, CK_E_ARG, "reader: format %d: expected 0 (phonemes), 1 (ids), 2 (text)",
                       (int)o->format);
    }
    if (o->max_phonemes > CK_READER_MAX_PHONEMES) {
        return ck_fail(err, CK_E_ARG, "reader: max_phonemes %zu: expected 1..%d", o->max_phonemes,
                       CK_READER_MAX_PHONEMES);
    }
    ck_lang lang = CK_LANG_EN_US;
    ck_g2p_kind kind = CK_G2P_MISAKI;
    ck_error what = {CK_OK, ""};
    if (ck_lang_parse(o->lang, &lang, &what) != CK_OK ||
        ck_g2p_kind_parse(o->g2p, &kind, &what) != CK_OK) {
        return ck_fail(err, CK_E_ARG, "reader: %s", what.message);
    }
    if (o->id_rows == 1 || o->id_rows > INT32_MAX) {
        return ck_fail(err, CK_E_ARG, "reader: id_rows %zu: expected 0 (the vocab's size) or "
                       "2..%ld", o->id_rows, (long)INT32_MAX);
    }
    return CK_OK;
}

/* A byte range of the input to read (ck_reader_open_range), or NULL: all of it from line 1 (or,
 * without a stream, the caller's lines: ck_reader_open_lines). */
typedef struct {
    unsigned long long start, bytes;
    size_t first_line;
} reader_range;

static int open_reader(ck_reader **out, FILE *in, const char *source_name,
                       const ck_reader_options *opt, const reader_range *range, ck_error *err);

int ck_reader_open(ck_reader **out, FILE *in, const char *source_name, const ck_reader_options *opt,
                   ck_error *err)
{
    if (out == NULL || in == NULL) {
        return ck_fail(err, CK_E_ARG, "reader: null %s", out == NULL ? "out" : "input stream");
    }
    return open_reader(out, in, source_name, opt, NULL, err);
}

int ck_reader_open_lines(ck_reader **out, const char *source_name, const ck_reader_options *opt,
                         ck_error *err)
{
    if (out == NULL) {
        return ck_fail(err, CK_E_ARG, "reader: null out");
    }
    return open_reader(out, NULL, source_name, opt, NULL, err);
}

int ck_reader_open_range(ck_reader **out, FILE *in, const char *source_name,
                         const ck_reader_options *opt, unsigned long long start,
                         unsigned long long bytes, size_t first_line, ck_error *err)
{
    if (out == NULL || in == NULL) {
        return ck_fail(err, CK_E_ARG, "reader: null %s", out == NULL ? "out" : "input stream");
    }
    reader_range range = {start, bytes, first_line};
    return open_reader(out, in, source_name, opt, &range, err);
}

static int open_reader(ck_reader **out, FILE *in, const char *source_name,
                       const ck_reader_options *opt, const reader_range *range, ck_error *err)
{
    *out = NULL;
    ck_reader_options o = {CK_INPUT_PHONEMES, NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL};
    o = opt != NULL ? *opt : o;
    int rc = check_options(&o, err);
    if (rc != CK_OK) {
        return rc;
    }
    ck_lang lang = CK_LANG_EN_US;
    ck_g2p_kind kind = CK_G2P_MISAKI;
    ck_lang_parse(o.lang, &lang, NULL);     /* checked above */
    ck_g2p_kind_parse(o.g2p, &kind, NULL);
    o.lang = ck_lang_name(lang);
    o.max_phonemes = o.max_phonemes != 0 ? o.max_phonemes : CK_READER_MAX_PHONEMES;
    o.vocab = o.vocab != NULL ? o.vocab : ck_vocab_embedded();
    o.id_rows = o.id_rows != 0 ? o.id_rows : ck_vocab_size(o.vocab);
    ck_reader *r = calloc(1, sizeof *r);
    if (r == NULL) {
        return ck_fail(err, CK_E_MEMORY, "reader: cannot allocate");
    }
    r->opt = o;
    if (in == NULL) {
        rc = ck_line_reader_open_lines(&r->lines, source_name, err);
    } else if (range != NULL) {
        rc = ck_line_reader_open_range(&r->lines, in, source_name, range->start, range->bytes,
                                       range->first_line, err);
    } else {
        rc = ck_line_reader_open(&r->lines, in, source_name, err);
    }
    if (rc == CK_OK && o.format == CK_INPUT_TEXT) {
        rc = ck_g2p_open(&r->g2p, kind, o.lang, o.lexicon_dir, err);
    }
    if (rc != CK_OK) {
        ck_reader_close(r);
        return rc;
    }
    r->source = ck_line_reader_source(r->lines);
    *out = r;
    return CK_OK;
}

/* ---- sequences ---- */

/* Fills one sequence from a phoneme string whose code points are all in the vocab. */
static int make_sequence(ck_reader *r, const char *s, size_t len, ck_sequence *seq, ck_error *err)
{
    seq->line = r->line_no;
    seq->phonemes = malloc(len + 1);
    seq->ids = malloc((len + 2) * sizeof *seq->ids);
    if (seq->phonemes == NULL || seq->ids == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s:%zu: cannot allocate a sequence", r->source, r->line_no);
    }
    memcpy(seq->phonemes, s, len);
    seq->phonemes[len] = '\0';
    size_t pos = 0, n = 1;
    uint32_t cp = 0;
    seq->ids[0] = 0;
    while (pos < len && ck_utf8_next(s, len, &pos, &cp) == CK_OK) {
        seq->ids[n++] = ck_vocab_find(r->opt.vocab, cp);
    }
    seq->ids[n++] = 0;
    seq->n_ids = n;
    return CK_OK;
}

/* Chunks a vocab-only phoneme string into sequences. */
static int phonemes_to_sequences(ck_reader *r, const char *s, size_t len, ck_sequence **seqs,
                                 size_t *n, ck_error *err)
{
    ck_chunk_span *spans = NULL;
    size_t count = 0;
    int rc = ck_chunk_split(s, len, r->opt.max_phonemes, &spans, &count, err);
    if (rc == CK_OK && count == 0) {
        rc = ck_fail(err, CK_E_INPUT, "%s:%zu: column 1: no phonemes left after dropping symbols",
                     r->source, r->line_no);
    }
    if (rc == CK_OK && (*seqs = calloc(count, sizeof **seqs)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s:%zu: cannot allocate %zu sequences", r->source,
                     r->line_no, count);
    }
    for (size_t i = 0; rc == CK_OK && i < count; i++) {
        (*seqs)[i].chunk = i;
        (*seqs)[i].chunks = count;
        rc = make_sequence(r, s + spans[i].offset, spans[i].length, &(*seqs)[i], err);
    }
    *n = rc == CK_OK ? count : 0;
    if (rc != CK_OK) {
        ck_sequences_free(*seqs, count);
        *seqs = NULL;
    }
    free(spans);
    return rc;
}

/* Reports one symbol the model cannot take (`why`: "not in vocab", or its id past the embedding
 * table): a line error when strict, else a warning and a drop. */
static int unknown_symbol(ck_reader *r, uint32_t cp, const char *at, size_t bytes, size_t column,
                          const char *what, const char *why, ck_error *err)
{
    char shown[8] = "?";
    if (cp >= 0x20 && cp != 0x7F) {
        memcpy(shown, at, bytes);
        shown[bytes] = '\0';
    }
    if (r->opt.strict_symbols) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: %s %zu: symbol U+%04X '%s' %s", r->source,
                       r->line_no, what, column, (unsigned)cp, shown, why);
    }
    r->stats.dropped_symbols++;
    if (r->opt.warn != NULL) {
        char msg[320];
        snprintf(msg, sizeof msg, "%s:%zu: %s %zu: symbol U+%04X '%s' %s, dropped",
                 r->source, r->line_no, what, column, (unsigned)cp, shown, why);
        r->opt.warn(r->opt.warn_ctx, msg);
    }
    return CK_OK;
}

/* Phoneme string (valid UTF-8) -> sequences, dropping or rejecting symbols outside the vocab.
 * `what` names the column kind in messages ("column", or "phoneme column" for text) and `base` is
 * added to columns (blanks trimmed before s). */
static int phonemes_line(ck_reader *r, const char *s, size_t len, const char *what, size_t base,
                         ck_sequence **seqs, size_t *n, ck_error *err)
{
    char *kept = malloc(len + 1);
    if (kept == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s:%zu: cannot allocate %zu bytes", r->source, r->line_no,
                       len);
    }
    size_t pos = 0, k = 0, column = base;
    int rc = CK_OK;
    while (rc == CK_OK && pos < len) {
        size_t at = pos;
        uint32_t cp = 0;
        ck_utf8_next(s, len, &pos, &cp);
        column++;
        int id = ck_vocab_find(r->opt.vocab, cp);
        if (id > 0 && (size_t)id < r->opt.id_rows) {
            memcpy(kept + k, s + at, pos - at);
            k += pos - at;
        } else {
            /* a circuit with a smaller embedding table than the vocab has no row for this id */
            char why[64] = "not in vocab";
            if (id > 0) {
                snprintf(why, sizeof why, "is id %d, past the embedding table's %zu rows", id,
                         r->opt.id_rows);
            }
            rc = unknown_symbol(r, cp, s + at, pos - at, column, what, why, err);
        }
    }
    if (rc == CK_OK) {
        rc = phonemes_to_sequences(r, kept, k, seqs, n, err);
    }
    free(kept);
    return rc;
}

/* One id of an ids-format array: a finite integer 1..id_rows-1 (0 is the boundary the reader adds;
 * an overflowing number such as 1e400, which cJSON reads as inf, is not an integer), a
 * row of the word-embedding table. One the vocab does not define is a line error when strict,
 * else warned, counted and kept. */
static int array_id(ck_reader *r, const cJSON *item, size_t k, int32_t *id, ck_error *err)
{
    double v = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!cJSON_IsNumber(item) || !isfinite(v) || v != floor(v)) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: element %zu: not an integer id", r->source,
                       r->line_no, k + 1);
    }
    if (v < 1 || v >= (double)r->opt.id_rows) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: element %zu: id %.0f out of range 1..%zu",
                       r->source, r->line_no, k + 1, v, r->opt.id_rows - 1);
    }
    *id = (int32_t)v;
    if (ck_vocab_text(r->opt.vocab, *id) != NULL) {
        return CK_OK;
    }
    if (r->opt.strict_symbols) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: element %zu: id %.0f names no vocab symbol",
                       r->source, r->line_no, k + 1, v);
    }
    r->stats.dropped_symbols++;
    if (r->opt.warn != NULL) {
        char msg[320];
        snprintf(msg, sizeof msg, "%s:%zu: element %zu: id %.0f names no vocab symbol, kept",
                 r->source, r->line_no, k + 1, v);
        r->opt.warn(r->opt.warn_ctx, msg);
    }
    return CK_OK;
}

/* Parses "[id, ...]" (whole line) and checks its length; *array is the parsed cJSON. */
static int parse_ids(ck_reader *r, const char *s, size_t len, cJSON **array, ck_error *err)
{
    const char *end = NULL;
    size_t bad = ck_json_not_strict(s, len);
    if (bad < len && (unsigned char)s[bad] < 0x20) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: column %zu: control byte 0x%02x is not JSON "
                       "whitespace", r->source, r->line_no, bad + 1, (unsigned)(unsigned char)s[bad]);
    }
    if (bad < len) {
        size_t n = strspn(s + bad, "0123456789+-.eE");
        return ck_fail(err, CK_E_INPUT, "%s:%zu: column %zu: %.*s is not a JSON number",
                       r->source, r->line_no, bad + 1, (int)(n < 24 ? n : 24), s + bad);
    }
    *array = cJSON_ParseWithLengthOpts(s, len, &end, 0);
    size_t column = (end != NULL && end >= s) ? (size_t)(end - s) + 1 : 1;
    if (*array == NULL || !cJSON_IsArray(*array)) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: column %zu: expected a JSON array of ids",
                       r->source, r->line_no, *array == NULL ? column : 1);
    }
    while (end != NULL && (size_t)(end - s) < len && (*end == ' ' || *end == '\t')) {
        end++;
    }
    if (end == NULL || (size_t)(end - s) != len) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: column %zu: text after the JSON array", r->source,
                       r->line_no, column);
    }
    size_t count = (size_t)cJSON_GetArraySize(*array);
    if (count == 0 || count > r->opt.max_phonemes) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: column 1: %zu ids, expected 1..%zu", r->source,
                       r->line_no, count, r->opt.max_phonemes);
    }
    return CK_OK;
}

/* Ids format: one JSON array per line, ids without the boundary zeros; one sequence, never
 * chunked. The ids go to the sequence as given (not through the phoneme string, which only
 * renders them). */
static int ids_line(ck_reader *r, const char *s, size_t len, ck_sequence **seqs, size_t *n,
                    ck_error *err)
{
    cJSON *array = NULL;
    ck_sequence *seq = NULL;
    size_t bytes = 0, k = 0;
    int rc = parse_ids(r, s, len, &array, err);
    size_t count = rc == CK_OK ? (size_t)cJSON_GetArraySize(array) : 0;
    if (rc == CK_OK && (seq = calloc(1, sizeof *seq)) != NULL) {
        seq->phonemes = malloc(4 * count + 1);
        seq->ids = malloc((count + 2) * sizeof *seq->ids);
    }
    if (rc == CK_OK && (seq == NULL || seq->phonemes == NULL || seq->ids == NULL)) {
        rc = ck_fail(err, CK_E_MEMORY, "%s:%zu: cannot allocate", r->source, r->line_no);
    }
    for (const cJSON *item = array ? array->child : NULL; rc == CK_OK && item; item = item->next) {
        int32_t id = 0;
        rc = array_id(r, item, k, &id, err);
        if (rc == CK_OK) {
            const char *sym = ck_vocab_text(r->opt.vocab, id);
            sym = sym != NULL ? sym : CK_READER_UNDEFINED_ID_TEXT;
            memcpy(seq->phonemes + bytes, sym, strlen(sym));
            bytes += strlen(sym);
            seq->ids[++k] = id;
        }
    }
    if (rc == CK_OK) {
        seq->line = r->line_no;
        seq->chunks = 1;
        seq->phonemes[bytes] = '\0';
        seq->ids[0] = 0;
        seq->ids[k + 1] = 0;
        seq->n_ids = k + 2;
        *seqs = seq;
        *n = 1;
    } else {
        ck_sequences_free(seq, seq != NULL);
    }
    cJSON_Delete(array);
    return rc;
}

/* 1 for the code points English text may carry: Latin (U+0020..U+024F without the C1 controls),
 * general punctuation (U+2000..U+206F), currency signs (U+20A0..U+20CF), and of the controls only
 * tab, vertical tab, form feed and carriage return (whitespace). Anything else makes espeak-ng 1.51 switch voices
 * mid-word, and "\u0547\u0259c" (Armenian, IPA schwa, Latin) then reads freed memory inside
 * espeak_TextToPhonemes. Controls are not text: U+0001 starts one of espeak-ng's embedded commands,
 * and "\x01B" reads past the end of the input inside espeak_TextToPhonemes (heap overflow). Both
 * found by tests/fuzz/fuzz_reader; regressions in tests/engine/test_reader_fuzz.c. */
static int english_code_point(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
        return cp == '\t' || cp == '\v' || cp == '\f' || cp == '\r';
    }
    return cp <= 0x024F || (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x20A0 && cp <= 0x20CF);
}

/* Text format: a code point outside english_code_point never reaches espeak-ng (the phonemes of
 * a [word](/phonemes/) override are not text and never reach it: they pass; so do the emoji and
 * symbols the G2P hands espeak-ng to name). Strict: the line
 * is rejected, naming its column. Otherwise it becomes a space in the copy handed to espeak-ng and
 * is warned and counted like a dropped symbol (real English text quotes IPA: gatsby_5k.txt line 11
 * has "/jˈɛ ɛs/"). *out: the copy (malloc'd). Errors: CK_E_INPUT (strict), CK_E_MEMORY. */
static int english_text(ck_reader *r, const char *s, size_t len, char **out, ck_error *err)
{
    char *text = strndup(s, len);
    size_t pos = 0, column = 0;
    uint32_t cp = 0;
    *out = NULL;
    if (text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s:%zu: cannot copy the line", r->source, r->line_no);
    }
    size_t ps_start = 0, ps_end = 0;  /* the next [word](/phonemes/) override's phonemes */
    int override = ck_g2p_next_override(r->g2p, s, len, 0, &ps_start, &ps_end);
    while (pos < len) {
        size_t at = pos;
        if (ck_utf8_next(s, len, &pos, &cp) != CK_OK) {
            break; /* the line was validated as UTF-8 before */
        }
        column++;
        if (override && at >= ps_end) {
            override = ck_g2p_next_override(r->g2p, s, len, ps_end + 1, &ps_start, &ps_end);
        }
        if (english_code_point(cp) || ck_g2p_reads(r->g2p, cp) ||
            (override && at >= ps_start && at < ps_end) ||
            ck_g2p_reads_symbol(r->g2p, cp)) {
            continue;
        }
        const char *why = cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)
                              ? "is a control character, not text"
                              : "is outside the Latin script the English text front end reads";
        if (r->opt.strict_symbols) {
            free(text);
            return ck_fail(err, CK_E_INPUT, "%s:%zu: column %zu: character U+%04X %s", r->source,
                           r->line_no, r->lead + column, (unsigned)cp, why);
        }
        memset(text + at, ' ', pos - at);
        r->stats.dropped_symbols++;
        if (r->opt.warn != NULL) {
            char msg[320];
            snprintf(msg, sizeof msg, "%s:%zu: column %zu: character U+%04X %s, dropped", r->source,
                     r->line_no, r->lead + column, (unsigned)cp, why);
            r->opt.warn(r->opt.warn_ctx, msg);
        }
    }
    *out = text;
    return CK_OK;
}

/* 1-based column (code points, edge blanks included) of the first occurrence of word in the line
 * at or after byte *from, whose column is *col; both move past it (one walk over the line for a
 * whole left-to-right search). 0 when not found (nothing moves). */
static size_t find_column(ck_reader *r, const char *line, size_t len, const char *word,
                          size_t *from, size_t *col)
{
    size_t wl = strlen(word), column = *col;
    for (size_t i = *from; wl > 0 && i + wl <= len; i++) {
        if (memcmp(line + i, word, wl) == 0) {
            size_t at = column + 1 + r->lead;
            for (size_t k = i; k < i + wl; k++) {
                column += ((unsigned char)line[k] & 0xC0) != 0x80;
            }
            *from = i + wl;
            *col = column;
            return at;
        }
        column += ((unsigned char)line[i] & 0xC0) != 0x80;
    }
    return 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Text format: the G2P's words that reached espeak-ng and tokens left without phonemes reported
 * (their columns found in the source line), then each of its chunks through the phonemes path
 * (columns are phoneme columns). */
static int text_line(ck_reader *r, const char *line, size_t len, ck_sequence **seqs, size_t *n,
                     ck_error *err)
{
    char *text = NULL;
    int rc = english_text(r, line, len, &text, err);
    if (rc != CK_OK) {
        return rc;
    }
    ck_g2p_result res;
    ck_error g2p_err = {CK_OK, ""};
    double t0 = now_seconds();
    rc = ck_g2p_phonemize(r->g2p, text, &res, &g2p_err);
    r->stats.g2p_seconds += now_seconds() - t0;
    free(text);  /* the result holds its own copies */
    if (rc != CK_OK) {
        ck_g2p_result_free(&res);
        return ck_fail(err, rc, "%s:%zu: %s", r->source, r->line_no, g2p_err.message);
    }
    size_t from = 0, col = 0;
    for (size_t i = 0; i < res.n_fallbacks; i++) {
        const ck_g2p_word *f = &res.fallbacks[i];
        r->stats.g2p_fallback_words++;
        size_t column = find_column(r, line, len, f->text, &from, &col);
        if (r->opt.warn != NULL) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s:%zu: column %zu: \"%.80s\" is in no lexicon rule: "
                     "phonemized by espeak-ng as /%.80s/", r->source, r->line_no, column, f->text,
                     f->phonemes);
            r->opt.warn(r->opt.warn_ctx, msg);
        }
    }
    from = 0;
    col = 0;
    for (size_t i = 0; i < res.n_unresolved; i++) {
        r->stats.g2p_unresolved++;
        size_t column = find_column(r, line, len, res.unresolved[i].text, &from, &col);
        if (r->opt.warn != NULL) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s:%zu: column %zu: \"%.80s\" got no phonemes, dropped",
                     r->source, r->line_no, column, res.unresolved[i].text);
            r->opt.warn(r->opt.warn_ctx, msg);
        }
    }
    ck_sequence *all = NULL;
    size_t total = 0;
    for (size_t c = 0; rc == CK_OK && c < res.n_chunks; c++) {
        ck_sequence *part = NULL;
        size_t np = 0;
        rc = phonemes_line(r, res.chunks[c], strlen(res.chunks[c]), "phoneme column", 0, &part,
                           &np, err);
        if (rc == CK_E_INPUT && !r->opt.strict_symbols && np == 0 && res.n_chunks > 1) {
            /* a chunk of symbols the vocab lacks only: the other chunks carry the line */
            ck_error_clear(err);
            rc = CK_OK;
            continue;
        }
        if (rc == CK_OK) {
            ck_sequence *grown = realloc(all, (total + np) * sizeof *all);
            if (grown == NULL) {
                ck_sequences_free(part, np);
                rc = ck_fail(err, CK_E_MEMORY, "%s:%zu: cannot allocate", r->source, r->line_no);
                break;
            }
            all = grown;
            memcpy(all + total, part, np * sizeof *part);
            total += np;
            free(part);
        }
    }
    if (rc == CK_OK && total == 0) {
        rc = ck_fail(err, CK_E_INPUT, "%s:%zu: column 1: no phonemes left after the G2P",
                     r->source, r->line_no);
    }
    for (size_t i = 0; rc == CK_OK && i < total; i++) {
        all[i].chunk = i;
        all[i].chunks = total;
    }
    if (rc != CK_OK) {
        ck_sequences_free(all, total);
        all = NULL;
        total = 0;
    }
    *seqs = all;
    *n = total;
    ck_g2p_result_free(&res);
    return rc;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Validates and dispatches one line (edge spaces and tabs already trimmed, non-empty). */
static int process_line(ck_reader *r, const char *s, size_t len, ck_sequence **seqs, size_t *n,
                        ck_error *err)
{
    size_t byte = 0, column = 0;
    if (ck_utf8_validate(s, len, &byte, &column) != CK_OK) {
        return ck_fail(err, CK_E_INPUT, "%s:%zu: column %zu: invalid UTF-8 at byte %zu", r->source,
                       r->line_no, r->lead + column, r->lead + byte + 1);
    }
    switch (r->opt.format) {
    case CK_INPUT_IDS:
        return ids_line(r, s, len, seqs, n, err);
    case CK_INPUT_TEXT:
        return text_line(r, s, len, seqs, n, err);
    default:
        return phonemes_line(r, s, len, "column", r->lead, seqs, n, err);
    }
}

/* One line from the line reader (got: its 1, or its CK_E_INPUT for a NUL byte or an overlong
 * line): counted, trimmed of edge blanks, converted. Returns 1 with sequences, 0 for an empty line
 * (counted and skipped), or the line's error. */
static int take_line(ck_reader *r, int got, const char *s, size_t len, ck_sequence **seqs,
                     size_t *n, ck_error *err)
{
    r->stats.lines++;
    r->stats.bytes = ck_line_reader_offset(r->lines);
    while (got == 1 && len > 0 && is_blank(s[len - 1])) {
        len--;
    }
    for (r->lead = 0; got == 1 && len > 0 && is_blank(*s); r->lead++) {
        s++;
        len--;
    }
    if (got == 1 && len == 0) {
        r->stats.empty_lines++;
        return 0;
    }
    int rc = got == 1 ? process_line(r, s, len, seqs, n, err) : got;
    if (rc == CK_E_INPUT) {
        r->stats.error_lines++;
    }
    if (rc != CK_OK) {
        return rc;
    }
    r->stats.sequences += *n;
    r->stats.chunked_lines += *n > 1;
    return 1;
}

int ck_reader_next(ck_reader *r, ck_sequence **seqs, size_t *n, ck_error *err)
{
    if (r == NULL || seqs == NULL || n == NULL) {
        return ck_fail(err, CK_E_ARG, "reader: null argument");
    }
    *seqs = NULL;
    *n = 0;
    for (;;) {
        const char *s = NULL;
        size_t len = 0;
        int rc = ck_line_reader_next(r->lines, &s, &len, &r->line_no, err);
        if (rc == 0 || (rc < 0 && rc != CK_E_INPUT)) {
            return rc;
        }
        rc = take_line(r, rc, s, len, seqs, n, err);
        if (rc != 0) {
            return rc;
        }
    }
}

int ck_reader_line(ck_reader *r, const char *text, size_t len, ck_sequence **seqs, size_t *n,
                   ck_error *err)
{
    if (r == NULL || text == NULL || seqs == NULL || n == NULL) {
        return ck_fail(err, CK_E_ARG, "reader: null argument");
    }
    *seqs = NULL;
    *n = 0;
    const char *s = NULL;
    size_t got_len = 0;
    int rc = ck_line_reader_take(r->lines, text, len, &s, &got_len, &r->line_no, err);
    if (rc < 0 && rc != CK_E_INPUT) {
        return rc;
    }
    return take_line(r, rc, s, got_len, seqs, n, err);
}

int ck_reader_skip(ck_reader *r, size_t lines, ck_error *err)
{
    if (r == NULL) {
        return ck_fail(err, CK_E_ARG, "reader: null argument");
    }
    size_t target = r->stats.lines + lines;
    for (size_t i = 0; i < lines; i++) {
        const char *s = NULL;
        size_t len = 0;
        int rc = ck_line_reader_next(r->lines, &s, &len, &r->line_no, err);
        if (rc == 0) {
            return ck_fail(err, CK_E_FORMAT, "%s: ends at line %zu, before line %zu", r->source,
                           r->stats.lines, target + 1);
        }
        if (rc < 0 && rc != CK_E_INPUT) {
            return rc;
        }
        r->stats.lines++;
        r->stats.bytes = ck_line_reader_offset(r->lines);
        if (rc == CK_E_INPUT) { /* a NUL byte or a line over the limit: known to the caller */
            ck_error_clear(err);
            continue;
        }
        while (len > 0 && is_blank(s[len - 1])) {
            len--;
        }
        size_t lead = 0;
        while (lead < len && is_blank(s[lead])) {
            lead++;
        }
        r->stats.empty_lines += lead == len;
    }
    return CK_OK;
}

void ck_sequences_free(ck_sequence *seqs, size_t n)
{
    for (size_t i = 0; seqs != NULL && i < n; i++) {
        free(seqs[i].phonemes);
        free(seqs[i].ids);
    }
    free(seqs);
}

const ck_reader_stats *ck_reader_stats_get(const ck_reader *r)
{
    return r != NULL ? &r->stats : NULL;
}

const char *ck_reader_g2p_version(const ck_reader *r)
{
    return r != NULL ? ck_g2p_version(r->g2p) : NULL;
}

int ck_reader_g2p_meta(const ck_reader *r, size_t i, const char **key, const char **value)
{
    return r != NULL && ck_g2p_meta(r->g2p, i, key, value);
}

void ck_reader_close(ck_reader *r)
{
    if (r != NULL) {
        ck_g2p_close(r->g2p);
        ck_line_reader_close(r->lines);
        free(r);
    }
}
