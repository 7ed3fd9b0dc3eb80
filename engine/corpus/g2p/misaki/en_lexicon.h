/* en_lexicon.h - misaki's English gold and silver lexicons (data/misaki/, Apache-2.0) loaded once
 * into read-only open-addressing hash tables shared by every thread; no I/O after open, no
 * allocation per lookup. Knows nothing of tokens, stress rules or espeak-ng. */
#ifndef CK_EN_LEXICON_H
#define CK_EN_LEXICON_H

#include <stddef.h>

#include "ck_error.h"
#include "vocab.h"

/* A part-of-speech-keyed entry (a JSON object in the file): up to 8 (tag, phonemes) pairs; a
 * phonemes NULL is JSON null ("no pronunciation for this tag"). Every object has "DEFAULT". */
#define CK_LEX_POS_MAX 8
typedef struct {
    size_t n;
    const char *tag[CK_LEX_POS_MAX];       /* "DEFAULT", "NOUN", "VERB", "None", "VBD", ... */
    const char *phonemes[CK_LEX_POS_MAX];  /* UTF-8, or NULL for JSON null */
} ck_lex_pos;

/* One lookup result: exactly one of phonemes (a plain string entry) and pos is non-NULL. Both
 * point into the lexicon and stay valid until ck_lexicon_close. */
typedef struct {
    const char *phonemes;
    const ck_lex_pos *pos;
} ck_lex_entry;

typedef struct ck_lexicon ck_lexicon;

/* Which lexicon of a variant. */
typedef enum { CK_LEX_GOLD = 0, CK_LEX_SILVER = 1 } ck_lex_kind;

/* Opens {us,gb}_{gold,silver}.json of one variant from `dir` (british 0: us_*, 1: gb_*). Each file
 * is read whole, its SHA-256 computed and, when `check_sha256` is 1, compared with the pinned hash
 * of misaki v0.9.4's data (data/misaki/MANIFEST); parsed with cJSON; "grown" as misaki's
 * grow_dictionary does (a lower-case key of length >= 2 also answers its Capitalised form, a
 * Capitalised key its lower-case form; entries of the file win); every code point of every
 * phoneme string checked against `vocab` (NULL: the embedded Kokoro vocabulary); every object
 * must have "DEFAULT" and only string or null values. Errors: CK_E_ARG (null), CK_E_IO (missing
 * file, the path named), CK_E_HASH ("DIR/us_gold.json: SHA-256 X, expected Y"), CK_E_FORMAT
 * ("DIR/us_gold.json: entry \"word\": U+0078 'x' not in the vocabulary", "... : not a JSON
 * object", "...: entry \"w\": no DEFAULT"), CK_E_MEMORY. On error *out is NULL. */
int ck_lexicon_open(ck_lexicon **out, const char *dir, int british, int check_sha256,
                    const ck_vocab *vocab, ck_error *err);

/* Looks up `len` bytes of `word` (no NUL needed) in the gold or silver table. Returns 1 and fills
 * *e when present, 0 when absent (e untouched). Thread-safe, no allocation. */
int ck_lexicon_get(const ck_lexicon *lex, ck_lex_kind kind, const char *word, size_t len,
                   ck_lex_entry *e);

/* Entries of a table after growing (US gold 178,646, silver 186,722; GB 172,932 and 219,532). */
size_t ck_lexicon_size(const ck_lexicon *lex, ck_lex_kind kind);

/* Lowercase hex SHA-256 of the file the table was loaded from (65 bytes with the NUL). */
const char *ck_lexicon_sha256(const ck_lexicon *lex, ck_lex_kind kind);

/* 1 for the GB lexicons, 0 for US. */
int ck_lexicon_british(const ck_lexicon *lex);

/* The variant's lexicons from `dir` (NULL: ck_lexicon_default_dir()) through a process-wide
 * cache: the first call for a (dir, british, check_sha256) loads them (ck_lexicon_open with the
 * embedded vocabulary), later calls from any thread get the same read-only tables. Never freed.
 * Errors: those of ck_lexicon_open (a failed load is retried by the next call). */
int ck_lexicon_shared(const char *dir, int british, int check_sha256, const ck_lexicon **out,
                      ck_error *err);

/* Where the shipped lexicons are: the installed copy (<datadir>/ckbatch/misaki) when present,
 * else the source tree's data/misaki (a build tree run). */
const char *ck_lexicon_default_dir(void);

/* Frees the lexicon; accepts NULL. */
void ck_lexicon_close(ck_lexicon *lex);

#endif
