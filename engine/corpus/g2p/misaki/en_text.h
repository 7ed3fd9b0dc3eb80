/* en_text.h - the misaki backend's front end before ck_misaki_run: apostrophe/NFKC normalisation,
 * a rule tokenizer and a part-of-speech tagger behind one interface. NOT spaCy: the tokenizer is
 * the rule tokenizer the misaki goldens were made with (tests/fixtures/misaki/MANIFEST.md, "The
 * stand-in tokenizer"), the taggers are deterministic heuristics (closed-class words, punctuation
 * and number classes, one word of context). No I/O, no printing. */
#ifndef CK_EN_TEXT_H
#define CK_EN_TEXT_H

#include <stddef.h>

#include "ck_error.h"
#include "misaki.h"

/* The line normalisation done before any word is split (case C22): U+2018 U+2019 U+02BC U+FF07
 * -> "'" (so curly and straight apostrophes give the same ids; misaki itself straightens them
 * only inside the lexicon, after tagging), U+201B -> "'"; the digit and fullwidth forms of
 * ck_cp_ascii_form to ASCII by their value (misaki's NFKC + numeric_if_needed, done early so no
 * such character reaches espeak-ng). Returns a malloc'd string, NULL on invalid UTF-8 or when
 * out of memory. */
char *ck_en_normalize_line(const char *text);

/* One token of ck_en_tokenize: text (malloc'd in the token list), whitespace after it, and the
 * tag the tokenizer already knows (punctuation and number pieces), else NULL for the tagger. */
typedef struct {
    char *text;
    int whitespace;
    const char *tag;   /* static string or NULL */
    int punct;         /* 1 for punctuation pieces */
} ck_en_piece;

typedef struct {
    ck_en_piece *pieces;
    size_t n;
} ck_en_pieces;

/* Splits text (UTF-8, already preprocessed) into pieces by the stand-in rules: whitespace chunks;
 * U+2014, "--", U+2026 split out; prefix marks " ' “ ‘ ( [ { $ £ € # ¿ ¡ *; suffix marks (a
 * trailing "...", else one of " ' ” ’ ) ] } . , ! ? ; : … % *) except on the abbreviation list
 * and dotted initials (U.S., a.m.); contractions n't 's 'm 're 've 'd 'll split off. Punctuation
 * and CD pieces get their tags. Errors: CK_E_ARG, CK_E_MEMORY. */
int ck_en_tokenize(const char *text, ck_en_pieces *out, ck_error *err);

/* Frees every piece's text and the array; *p is zeroed; accepts a zeroed p. */
void ck_en_pieces_free(ck_en_pieces *p);

/* A tagger: fills tags[i] (static strings) for every piece whose tag is NULL. */
typedef void (*ck_en_tag_fn)(const ck_en_pieces *p, const char **tags);

typedef enum {
    CK_TAGGER_CLOSED = 0,    /* closed-class table only (the goldens' "closed" stand-in) */
    CK_TAGGER_HEURISTIC = 1  /* closed + one word of context (default): a/by at a clause end,
                                I after a name (War I), vs, 9 AM, e-mail/domain -> ADD, that
                                (DT at a sentence start or clause end, else IN), used to,
                                read/wound after be/have/he, a verb after a modal, to, please,
                                a subject pronoun; a noun after a determiner, possessive or
                                quantity; an imperative before a determiner; a spaced - or –
                                between words is a dash, s' a possessive (no single quote
                                open), US outside capitals the country, A after a word and a
                                after "letter", "point"... the letter. Quotes corpus: 99.79% of
                                words as the closed goldens; targeted suite (Lingua + hand
                                tags): 98.37% (closed table: 95.93%) */
} ck_en_tagger;

/* Name recorded in metadata: "closed-class v1 (not spaCy)" / "heuristic v2 (not spaCy)" (v2
 * adds the rules of docs/misaki-divergences.md section 7). */
const char *ck_en_tagger_name(ck_en_tagger t);

/* Tags every piece (tags[n]): tokenizer tags kept, the others by the tagger. */
void ck_en_tag(ck_en_tagger t, const ck_en_pieces *p, const char **tags);

/* The whole line front end: normalise, preprocess ([x](/ps/) markdown), tokenize, tag, map the
 * features, ck_misaki_run. *res as ck_misaki_run (free with ck_misaki_result_free). Errors:
 * CK_E_ARG, CK_E_INPUT (invalid UTF-8), CK_E_MEMORY, the fallback's CK_E_BACKEND. */
int ck_en_g2p_line(const ck_misaki *m, ck_en_tagger tagger, const char *line,
                   ck_misaki_result *res, ck_error *err);

#endif
