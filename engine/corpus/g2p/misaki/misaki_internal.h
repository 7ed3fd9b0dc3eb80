/* misaki_internal.h - what the misaki_*.c files share: the symbol sets, the G2P object, a token
 * while misaki works on it, the per-call state, and the helpers one file defines for the others
 * (ck_mk_*). Private to engine/corpus/g2p/misaki/; nothing else includes it. */
#ifndef CK_MISAKI_INTERNAL_H
#define CK_MISAKI_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "en_chars.h"
#include "en_num.h"
#include "lang.h"
#include "misaki.h"
#include "strbuf.h"
#include "utf8.h"

#define MAXW 256          /* code points of a word the lexicon is asked about */
#define KOKORO_MAX 510    /* Kokoro's phoneme limit per chunk */

/* The per-call arena: every string of one call (ck_misaki_result.arena), freed as a chain. */
struct ck_misaki_arena {
    struct ck_misaki_arena *next;
    size_t used, cap;
    int failed;
    max_align_t data[];
};

/* ---- phoneme symbol sets (en.py:45-94) ---- */

#define VOWELS "AIOQWYaiuæɑɒɔəɛɜɪʊʌᵻ"
#define CONSONANTS "bdfhjklmnpstvwzðŋɡɹɾʃʒʤʧθ"
#define NON_QUOTE_PUNCTS ";:,.!?—…"
#define PUNCTS ";:,.!?—…\"“”"
#define US_TAUS "AIOWYiuæɑəɛɪɹʊʌ"
#define DIPHTHONGS "AIOQWYʤʧ"
#define SUBTOKEN_JUNKS "',-._‘’/"
#define PRIMARY 0x2C8u    /* ˈ */
#define SECONDARY 0x2CCu  /* ˌ */

/* ---- the G2P object ---- */

struct ck_misaki {
    int british;
    const ck_lexicon *lex;
    ck_misaki_espeak_fn espeak;
    void *espeak_ctx;
};

/* A token while misaki works on it (MToken with its Underscore). */
typedef struct {
    char *text;
    const char *tag;
    int ws;
    char *ps;          /* NULL = None */
    int rating;        /* 0 = None */
    int is_head;
    const char *alias;
    double stress;
    uint32_t currency; /* 0 = None */
    char flags[16];
    int prespace;
    size_t byte;
} tok;

typedef struct {
    int fv;            /* future_vowel: -1 None, 0 False, 1 True */
    int future_to;
} context;

typedef struct {
    const ck_misaki *m;
    ck_misaki_arena **a;
    ck_misaki_result *res;
    ck_strbuf fb;      /* fallback records */
    size_t fb_cap;
    ck_error *err;
} run;

typedef struct {
    const char *ps;    /* NULL = None */
    int rating;
} pr;

#define NONE ((pr){NULL, 0})

/* ---- misaki.c ---- */

/* n bytes (max_align_t-aligned) from the arena chain *a; NULL when out of memory (the arena
 * records the failure). */
void *ck_mk_amalloc(ck_misaki_arena **a, size_t n);

/* s[0..n) as a NUL-terminated copy in the arena. */
char *ck_mk_astrndup(ck_misaki_arena **a, const char *s, size_t n);

/* A copy of s in the arena (NULL for NULL). */
char *ck_mk_astrdup(ck_misaki_arena **a, const char *s);

/* s1 + s2 (+ s3) in the arena. */
char *ck_mk_acat(ck_misaki_arena **a, const char *s1, const char *s2, const char *s3);

/* UTF-8 s -> at most cap code points in out; returns the count. */
size_t ck_mk_decode(const char *s, uint32_t *out, size_t cap);

/* Code points w[0..n) -> a UTF-8 string in the arena. */
char *ck_mk_encode(ck_misaki_arena **a, const uint32_t *w, size_t n);

/* Last code point of a UTF-8 string and the byte where it starts (0 for ""). */
uint32_t ck_mk_last_cp(const char *s, size_t *start);

/* Code points in UTF-8 s (len() of a Python str). */
size_t ck_mk_cp_len(const char *s);

/* 1 when c is one of the code points of the UTF-8 string set. */
int ck_mk_in_set(uint32_t c, const char *set);

/* 1 when UTF-8 s holds code point c. */
int ck_mk_has_cp(const char *s, uint32_t c);

/* 1 when w[0..n) equals the ASCII string. */
int ck_mk_w_eq(const uint32_t *w, size_t n, const char *ascii);

/* word == word.lower() */
int ck_mk_w_is_lower(const uint32_t *w, size_t n);

/* word == word.upper() */
int ck_mk_w_is_upper(const uint32_t *w, size_t n);

/* str.isalpha (False for "") */
int ck_mk_w_is_alpha(const uint32_t *w, size_t n);

/* all in LEXICON_ORDS: ' - A-Z a-z */
int ck_mk_w_lexicon_ords(const uint32_t *w, size_t n);

/* 1 when w[0..n) ends with the ASCII string (str.endswith). */
int ck_mk_w_ends(const uint32_t *w, size_t n, const char *ascii);

/* apply_stress (en.py:95-120): ps with its stress marks set to the [x](n) stress level;
 * ps itself for CK_MISAKI_NO_STRESS or NULL. */
const char *ck_mk_apply_stress(ck_misaki_arena **a, const char *ps, double stress);

/* stress_weight: code points of ps, diphthongs counted twice (0 for NULL). */
int ck_mk_stress_weight(const char *ps);

/* ---- misaki_lookup.c ---- */

/* lookup (en.py:230-248) of an ASCII word: gold, then silver, with stress and context. */
pr ck_mk_lookup_ascii(run *r, const char *word, const char *tag, double stress,
                      const context *ctx);

/* _s (suffix rules, en.py:250-329): stem phonemes + the -s ending its last sound takes; NULL for
 * none. */
const char *ck_mk_suffix_s(run *r, const char *stem);

/* _ed (suffix rules, en.py:250-329): stem phonemes + the -ed ending its last sound takes; NULL
 * for none. */
const char *ck_mk_suffix_ed(run *r, const char *stem);

/* _ing (suffix rules, en.py:250-329): stem phonemes + -ing; NULL for none. */
const char *ck_mk_suffix_ing(run *r, const char *stem);

/* stem_s (suffix rules, en.py:250-329): word as stem + -s when the stem is known. */
pr ck_mk_stem_s(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                const context *ctx);

/* 1 when tag (may be NULL) is t. */
int ck_mk_tag_is(const char *tag, const char *t);

/* get_word (en.py:331-361): special cases, then the lexicon, the -s/-ed/-ing stems. */
pr ck_mk_get_word(run *r, const uint32_t *word, size_t n, const char *tag, double stress,
                  const context *ctx);

/* ---- misaki_numbers.c ---- */

/* Currency word for $ U+00A3 U+20AC (sub 1: the hundredth: cent, pence); NULL for others. */
const char *ck_mk_currency_unit(uint32_t c, int sub);

/* Lexicon.__call__ (en.py:478-495) */
pr ck_mk_lexicon_call(run *r, const tok *tk, const context *ctx);

/* ---- misaki_fallback.c ---- */

/* s (malloc'd) with every `from` replaced by `to`; s itself when nothing matches, NULL when
 * out of memory (s freed). */
char *ck_mk_replace_all(char *s, const char *from, const char *to);

/* The espeak fallback for text (espeak.py:13-60): raw espeak-ng output rewritten by
 * ck_misaki_espeak_rewrite and recorded in the result's fallbacks; *out NONE without espeak-ng. */
int ck_mk_fallback(run *r, const char *text, size_t byte, pr *out);

/* ---- misaki_tokens.c ---- */

/* merge_tokens (en.py:15-43); with_ps 1 gives unk='' phonemes, 0 None. */
tok ck_mk_merge_tokens(run *r, const tok *t, size_t n, int with_ps);

/* token_context (en.py:645-677): the context after a token with phonemes ps. */
context ck_mk_token_context(context ctx, const char *ps, const tok *t);

/* 1 when every code point of s is in SUBTOKEN_JUNKS. */
int ck_mk_all_junk(const char *s);

/* resolve_tokens (en.py:655-677): prespace and stress balancing of one word's subtokens. */
void ck_mk_resolve_tokens(run *r, tok *t, size_t n);

/* ---- misaki_subtokenize.c ---- */

/* Splits w into subtoken spans [start[k], start[k] + len[k]); returns the count. */
size_t ck_mk_subtokenize(const uint32_t *w, size_t n, size_t *start, size_t *len, size_t cap);

#endif
