/* misaki.h - misaki's English G2P (hexgrad/misaki v0.9.4 en.py; docs/misaki.md) after the tagger:
 * markdown features, subtokens, right-to-left resolution with context, special cases, gold/silver
 * with POS-keyed entries, stress, -s/-ed/-ing, numbers, the espeak-ng fallback with misaki's
 * rewrite order, the flap/glottal post-pass, and Kokoro's joining and 510-symbol chunking. Takes
 * tokens with Penn tags (from en_text.h's tokenizer and tagger, or given); no FILE*, no printing.
 * One ck_misaki is read-only after open and shared by all threads. */
#ifndef CK_MISAKI_H
#define CK_MISAKI_H

#include <stddef.h>

#include "ck_error.h"
#include "en_lexicon.h"
#include "vocab.h"

/* misaki-compatibility version string recorded in output metadata. */
#define CK_MISAKI_COMPAT "misaki 0.9.4 (fba1236) en, Kokoro dfb907a en_tokenize, version=None"

#define CK_MISAKI_NO_STRESS (-1000.0)

/* Raw espeak-ng output for one text, phonemizer-style (IPA, stress, '^' ties; may end in a space);
 * *raw malloc'd. Used for the words misaki's lexicon cannot resolve. */
typedef int (*ck_misaki_espeak_fn)(void *ctx, const char *text, char **raw, ck_error *err);

typedef struct {
    int british;                 /* 0 en-us, 1 en-gb */
    const ck_lexicon *lexicon;   /* not owned; its variant must match british */
    ck_misaki_espeak_fn espeak;  /* NULL: unresolved words get no phonemes (counted) */
    void *espeak_ctx;
} ck_misaki_options;

/* One input token (a spaCy token in misaki's terms). */
typedef struct {
    const char *text;      /* UTF-8, non-empty */
    int whitespace;        /* 1: followed by a space */
    const char *tag;       /* Penn tag ("NN", ",", "``", ...), never NULL */
    /* markdown features (ck_misaki_preprocess + ck_misaki_features): */
    const char *phonemes;  /* NULL, or the override phonemes ("" for later tokens of a span) */
    int is_head;           /* 0 only for later tokens of one override span */
    double stress;         /* CK_MISAKI_NO_STRESS, or the [x](n) value */
    const char *num_flags; /* NULL or the [x](#f#) flags */
} ck_misaki_token;

/* One output token (misaki's MTokens after regrouping). */
typedef struct {
    char *text;
    int whitespace;
    const char *tag;
    char *phonemes;        /* NULL: none (misaki's None) */
    int rating;            /* 5 user, 4 gold/special, 3 silver/spelled, 2 espeak, 0 none */
    size_t byte;           /* byte offset of the token's first character in the joined input */
} ck_misaki_out;

/* One espeak-ng fallback call. */
typedef struct {
    char *text;    /* what was sent (a whole group's text) */
    char *espeak;  /* raw output */
    char *ps;      /* misaki's result */
    size_t byte;   /* byte offset in the joined input */
} ck_misaki_fallback;

typedef struct ck_misaki_arena ck_misaki_arena;

typedef struct {
    ck_misaki_out *tokens;
    size_t n_tokens;
    char *misaki_ps;       /* G2P.__call__'s string */
    char *kokoro_ps;       /* KPipeline.tokens_to_ps over all tokens, stripped */
    char **chunks;         /* KPipeline.en_tokenize: non-empty chunks of <= 510 code points */
    size_t n_chunks;
    ck_misaki_fallback *fallbacks;
    size_t n_fallbacks;    /* in misaki's right-to-left order */
    size_t unresolved;     /* tokens left without phonemes (no fallback, or espeak gave none) */
    ck_misaki_arena *arena;
} ck_misaki_result;

typedef struct ck_misaki ck_misaki;

/* Opens the G2P over an open lexicon. Errors: CK_E_ARG (null, variant mismatch), CK_E_MEMORY. */
int ck_misaki_open(ck_misaki **out, const ck_misaki_options *opt, ck_error *err);

/* Runs everything after the tagger on n tokens; *res is filled (free with ck_misaki_result_free,
 * also after an error). Thread-safe on one ck_misaki (the espeak function must be too).
 * Errors: CK_E_ARG (null, empty token text), CK_E_MEMORY, or the espeak function's error. */
int ck_misaki_run(const ck_misaki *m, const ck_misaki_token *tokens, size_t n,
                  ck_misaki_result *res, ck_error *err);

/* Frees what ck_misaki_run filled; *res is zeroed; accepts a zeroed res. */
void ck_misaki_result_free(ck_misaki_result *res);

/* Frees m; accepts NULL. */
void ck_misaki_close(ck_misaki *m);

/* misaki's EspeakFallback rewrite of one raw espeak string (stripped first): the E2M table
 * longest key first (ʔˌn̩ ʔn̩ -> ʔn included), syllabic X U+0329 -> ᵊX, then the variant rules
 * (GB e^ə->ɛː iə->ɪə ə^ʊ->Q; US o^ʊ->O ɜːɹ->ɜɹ ɜː->ɜɹ ɪə->iə, ː removed), o->ɔ, ɾ->T, ʔ->t,
 * '^' removed. *out malloc'd. Errors: CK_E_ARG, CK_E_MEMORY. */
int ck_misaki_espeak_rewrite(const char *raw, int british, char **out, ck_error *err);

/* ---- markdown preprocessing (misaki's G2P.preprocess) ---- */

/* One whitespace-separated token of the preprocessed text (a [text](feature) link is one token,
 * spaces included), with its feature. */
typedef struct {
    size_t start, end;      /* bytes of the preprocessed text */
    int kind;               /* 0 none, 1 phonemes, 2 stress, 3 flags */
    char *value;            /* phonemes (kind 1) or flags (kind 3), malloc'd */
    double stress;          /* kind 2 */
} ck_misaki_pre_token;

typedef struct {
    char *text;             /* preprocessed text (links replaced by their text), malloc'd */
    ck_misaki_pre_token *tokens;
    size_t n_tokens;
} ck_misaki_pre;

/* The first match of misaki's LINK_REGEX \[([^\]]+)\]\(([^\)]*)\) in s (len bytes) at or after
 * byte from: *open the '[', *mid the ']' before '(', *close the ')'. 0 when there is none. */
int ck_misaki_next_link(const char *s, size_t len, size_t from, size_t *open, size_t *mid,
                        size_t *close);

/* misaki's preprocess: lstrip, then every [text](feature) link (feature: an integer, +-0.5,
 * /phonemes/, #flags#; anything else is no feature) replaced by its text. Errors: CK_E_ARG,
 * CK_E_MEMORY. */
int ck_misaki_preprocess(const char *text, ck_misaki_pre *pre, ck_error *err);

/* Maps the features of pre onto n tokens of pre->text (each token belongs to the preprocess
 * token holding its first non-space character, as misaki's alignment does): sets phonemes,
 * is_head, stress, num_flags (pointers into pre). */
void ck_misaki_features(const ck_misaki_pre *pre, ck_misaki_token *tokens, size_t n);

/* Frees what ck_misaki_preprocess filled; *pre is zeroed; accepts a zeroed pre. */
void ck_misaki_pre_free(ck_misaki_pre *pre);

#endif
