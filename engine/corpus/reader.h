/* reader.h - corpus reader: lines (ids | phonemes | text) -> Kokoro token-id sequences; the CLI's
 * only entry to the front end. Knows nothing of batching, weights or output. */
#ifndef CK_READER_H
#define CK_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ck_error.h"
#include "vocab.h"

#define CK_READER_MAX_PHONEMES 510  /* 512 positions minus the two boundary zeros */

/* How the phonemes field renders an ids-format id the vocabulary does not define: U+FFFD
 * REPLACEMENT CHARACTER, one code point per id like every symbol (the id itself is kept). */
#define CK_READER_UNDEFINED_ID_TEXT "\xEF\xBF\xBD"

/* ck_input_format (CK_INPUT_PHONEMES, CK_INPUT_IDS, CK_INPUT_TEXT) is the public one of ckbatch.h. */

typedef struct {
    ck_input_format format;
    const char *lang;      /* text format: "en-us" or "en-gb"; NULL: CK_LANG_DEFAULT (lang.h) */
    int strict_symbols;    /* 1: a symbol outside the vocab is a line error; 0: dropped and warned */
    size_t max_phonemes;   /* 1..510 (0 means 510): longer lines are chunked (phonemes/text) or
                              rejected (ids) */
    void (*warn)(void *ctx, const char *message);  /* each dropped symbol, e.g. "quotes.txt:12:
                              column 7: symbol U+0078 'x' not in vocab, dropped"; may be NULL */
    void *warn_ctx;
    const ck_vocab *vocab; /* symbols <-> ids (not owned, must outlive the reader); NULL: the
                              embedded Kokoro-82M v1.0 vocabulary */
    size_t id_rows;        /* ids format: rows of the loaded word-embedding table, so ids 1..
                              id_rows-1 are accepted; 0: the vocabulary's size */
    const char *g2p;       /* text format: "misaki" (default, NULL) or "espeak" */
    const char *lexicon_dir; /* misaki: directory of {us,gb}_{gold,silver}.json; NULL: the
                              shipped copy (ck_lexicon_default_dir) */
} ck_reader_options;

typedef struct {
    size_t line;        /* 1-based source line */
    size_t chunk;       /* 0-based chunk index within the line */
    size_t chunks;      /* chunks this line produced */
    char *phonemes;     /* UTF-8 Kokoro phoneme string of this chunk (ids format: rendered from
                           the vocab, an id it does not define as CK_READER_UNDEFINED_ID_TEXT) */
    int32_t *ids;       /* [n_ids] = [0, ...phoneme ids, 0]; n_ids <= max_phonemes + 2 */
    size_t n_ids;
} ck_sequence;

typedef struct {
    size_t lines;            /* lines read, empty and bad ones included */
    size_t empty_lines;      /* empty or whitespace-only (space, tab) lines, skipped */
    size_t sequences;        /* sequences returned */
    size_t chunked_lines;    /* lines that gave more than one sequence */
    size_t dropped_symbols;  /* code points dropped as not in the vocab, and ids-format ids the
                                vocab does not define (kept) (non-strict) */
    size_t error_lines;      /* lines rejected with CK_E_INPUT */
    unsigned long long bytes; /* input bytes consumed: through the end of the last line read */
    size_t g2p_fallback_words; /* misaki: words no lexicon rule resolved, phonemized by espeak-ng
                                  (each warned with its line and column) */
    size_t g2p_unresolved;   /* misaki: tokens left without phonemes (warned) */
    double g2p_seconds;      /* text format: time spent in the G2P (wall clock) */
} ck_reader_stats;

typedef struct ck_reader ck_reader;

/* Opens a reader over `in` (not owned, never closed here); source_name (copied, NULL: "<input>")
 * starts every message. opt NULL means defaults (phonemes, en-us, not strict, 510, the embedded
 * vocabulary, ids below its size). Text format: the reader opens one G2P (g2p.h) of kind g2p
 * ("misaki", the default, or "espeak") for lang and hands it each line; each chunk the G2P returns
 * (its chunk policy: Kokoro's chunks for misaki, one per line for espeak) goes through the
 * vocabulary and, if max_phonemes is smaller, ck_chunk_split. Errors: CK_E_ARG
 * (null out/in, bad format, lang, g2p, max_phonemes or id_rows (1, or above INT32_MAX): the
 * message names the field), CK_E_BACKEND (espeak-ng), CK_E_IO/CK_E_HASH/CK_E_FORMAT (a missing,
 * changed or bad lexicon: the file and entry named), CK_E_MEMORY. */
int ck_reader_open(ck_reader **out, FILE *in, const char *source_name, const ck_reader_options *opt,
                   ck_error *err);

/* The same over one byte range of the stream (a shard, engine/corpus/shard.h): `in` is positioned
 * at byte `start` of the file (a line start), only `bytes` bytes are read from there, lines are
 * numbered from first_line (global, 1-based: records and messages carry the file's numbering), and
 * a BOM is stripped only when start is 0. Errors: as ck_reader_open; CK_E_ARG for first_line 0. */
int ck_reader_open_range(ck_reader **out, FILE *in, const char *source_name,
                         const ck_reader_options *opt, unsigned long long start,
                         unsigned long long bytes, size_t first_line, ck_error *err);

/* Opens a reader without a stream: the caller hands it its lines one at a time with
 * ck_reader_line (numbered from 1; source_name as for ck_reader_open). Errors: as ck_reader_open. */
int ck_reader_open_lines(ck_reader **out, const char *source_name, const ck_reader_options *opt,
                         ck_error *err);

/* Reads the next non-empty line. Returns 1 with *seqs (malloc'd array of *n >= 1 sequences, free
 * with ck_sequences_free) when it produced sequences, 0 at end of input, or CK_E_INPUT for a bad
 * line (invalid UTF-8, NUL byte, unknown symbol under strict_symbols, ids format: malformed JSON
 * array, non-integer, id < 1 or >= id_rows ("id 178 out of range 1..177"), more than max_phonemes
 * ids, an id the vocab does not define under strict_symbols ("id 7 names no vocab symbol"); any
 * format: nothing left after dropping symbols) with err->message "source:line: column C: what"
 * (ids: "element K: what"); the reader stays usable and the next call reads the next line.
 * CK_E_IO on read errors, CK_E_MEMORY, CK_E_BACKEND (espeak-ng), CK_E_ARG (null). On every non-1
 * return *seqs is NULL and *n is 0. Lines are trimmed of edge spaces and tabs; phonemes/text
 * lines longer than max_phonemes symbols are split by ck_chunk_split.
 * Ids format is the raw model interface: every id naming a row of the word-embedding table is
 * passed to the model as given. One the vocab does not define is KEPT in the sequence, counted in
 * dropped_symbols and warned ("c.txt:3: element 2: id 7 names no vocab symbol, kept"), and
 * rendered in `phonemes` as CK_READER_UNDEFINED_ID_TEXT; under strict_symbols it is a line error. */
int ck_reader_next(ck_reader *r, ck_sequence **seqs, size_t *n, ck_error *err);

/* Converts text[0..len) as the next line of a reader opened by ck_reader_open_lines, exactly as
 * ck_reader_next would read it from a stream with a "\n" after it (a trailing "\r" dropped, line
 * 1's BOM stripped, the line-length limit, numbering, counters, messages). Returns 1 with *seqs
 * and *n as ck_reader_next, 0 for an empty (whitespace-only) line, counted in empty_lines, or
 * ck_reader_next's errors for the line (CK_E_INPUT leaves the reader usable); CK_E_ARG also for
 * a reader over a stream. A "\n" inside text is the caller's to refuse. On every non-1 return
 * *seqs is NULL and *n is 0. */
int ck_reader_line(ck_reader *r, const char *text, size_t len, ck_sequence **seqs, size_t *n,
                   ck_error *err);

/* Passes over the next `lines` lines without converting them (no UTF-8 check, no G2P): a resumed
 * run's lines before its mark. Counts them in lines, and empty (whitespace-only) ones in
 * empty_lines; nothing else (what they held is the caller's to know). A NUL byte is no error here.
 * Errors: CK_E_FORMAT (the input ends first; message "source: ends at line N, before line M"),
 * CK_E_IO, CK_E_MEMORY, CK_E_ARG (null r). */
int ck_reader_skip(ck_reader *r, size_t lines, ck_error *err);

/* Frees n sequences and the array; accepts NULL and half-filled arrays (zeroed entries). */
void ck_sequences_free(ck_sequence *seqs, size_t n);

/* Counters so far (never NULL for a non-NULL r). */
const ck_reader_stats *ck_reader_stats_get(const ck_reader *r);

/* The text format's G2P for output metadata: "espeak-ng <version>" (g2p espeak), or for misaki
 * "misaki (<CK_MISAKI_COMPAT>)"; NULL for the other formats. */
const char *ck_reader_g2p_version(const ck_reader *r);

/* Metadata entry i (0, 1, ...) of the text format's G2P: *key and *value (valid until
 * ck_reader_close), e.g. "g2p_backend" "misaki", "g2p_compat", "g2p_tagger", "g2p_fallback",
 * "g2p_lexicon_us_gold_sha256". Returns 1, or 0 past the last entry (and for other formats). */
int ck_reader_g2p_meta(const ck_reader *r, size_t i, const char **key, const char **value);

/* Frees the reader (not the FILE); accepts NULL. */
void ck_reader_close(ck_reader *r);

#endif
