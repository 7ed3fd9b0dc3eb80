/* g2p.h - the G2P interface: one line of English text -> Kokoro phoneme chunks, whatever the
 * backend (misaki, the default; espeak-ng). The reader holds one ck_g2p and knows no backend; a new
 * G2P is one backend file plus one row in g2p.c. No vocabulary lookup here (the reader does it). */
#ifndef CK_G2P_H
#define CK_G2P_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"

typedef enum {
    CK_G2P_MISAKI = 0,  /* misaki 0.9.4's English G2P (misaki.h), espeak-ng for unknown words */
    CK_G2P_ESPEAK = 1   /* espeak-ng alone (espeak.h): Kokoro's espeak fallback */
} ck_g2p_kind;

/* Parses a G2P name: "misaki" or NULL gives CK_G2P_MISAKI, "espeak" CK_G2P_ESPEAK. Errors:
 * CK_E_ARG `g2p "x": expected "misaki" or "espeak"` (no room prefix). */
int ck_g2p_kind_parse(const char *name, ck_g2p_kind *kind, ck_error *err);

/* A word no rule of the G2P resolved, and what became of it. */
typedef struct {
    const char *text;      /* as the G2P saw it (a word, or a group of words) */
    const char *phonemes;  /* misaki's result for it; NULL for an unresolved token */
} ck_g2p_word;

/* One line's result; every pointer is valid until ck_g2p_result_free. */
typedef struct {
    char **chunks;           /* Kokoro phoneme strings in order (the chunk policy below) */
    size_t n_chunks;
    ck_g2p_word *fallbacks;  /* words no lexicon rule resolved, phonemized by espeak-ng, in text
                                order (misaki only) */
    size_t n_fallbacks;
    ck_g2p_word *unresolved; /* tokens left without phonemes, in text order (misaki only) */
    size_t n_unresolved;
    void *backend;           /* the backend's own result, freed with this one */
    void (*backend_free)(void *backend);
} ck_g2p_result;

/* What a backend promises the reader. */
typedef struct {
    const char *name;  /* "misaki", "espeak" */
    int kokoro_chunks; /* chunk policy. 1: chunks cut as Kokoro's en_tokenize does (after the last
                          . ! ? ..., else : ;, else , before 510 symbols), empty chunks left out;
                          0: exactly one chunk per line (possibly ""). Either way the reader cuts
                          each chunk again by ck_chunk_split when its max_phonemes is smaller. */
} ck_g2p_info;

typedef struct ck_g2p ck_g2p;

/* Opens a G2P of kind for lang ("en-us", "en-gb"; NULL: CK_LANG_DEFAULT of lang.h). misaki loads
 * the variant's lexicons once per process from lexicon_dir (NULL: ck_lexicon_default_dir; SHA-256
 * pinned) and, when built with espeak-ng, opens it for the out-of-lexicon words; espeak initialises
 * espeak-ng once per process (lexicon_dir unused). Errors: CK_E_ARG (null out, bad kind, unknown
 * lang: "g2p: lang ..."), CK_E_BACKEND (espeak-ng missing or failing), CK_E_IO/CK_E_HASH/
 * CK_E_FORMAT (a missing, changed or bad lexicon), CK_E_MEMORY. */
int ck_g2p_open(ck_g2p **out, ck_g2p_kind kind, const char *lang, const char *lexicon_dir,
                ck_error *err);

/* Phonemizes one line of UTF-8 text into *res (zeroed first; free with ck_g2p_result_free, also
 * after an error). Thread-safe on one ck_g2p. Errors: CK_E_ARG (null), CK_E_INPUT (invalid UTF-8),
 * CK_E_BACKEND (espeak-ng failed), CK_E_MEMORY; messages carry no source or line. */
int ck_g2p_phonemize(const ck_g2p *g, const char *text, ck_g2p_result *res, ck_error *err);

/* Frees what ck_g2p_phonemize filled; *res is zeroed; accepts a zeroed res. */
void ck_g2p_result_free(ck_g2p_result *res);

/* The backend's promises (never NULL for a non-NULL g). */
const ck_g2p_info *ck_g2p_info_of(const ck_g2p *g);

/* 1 when the G2P reads code point cp itself although it is not Latin text: misaki folds the
 * digit, fullwidth and ligature forms that have an ASCII form (ck_cp_ascii_form: "٣", "２", "ﬁ")
 * to ASCII; espeak reads none. The reader hands other non-Latin code points to no G2P. 0 for a NULL g. */
int ck_g2p_reads(const ck_g2p *g, uint32_t cp);

/* 1 when the G2P reads code point cp as a symbol said aloud: misaki hands an emoji or symbol
 * (ck_cp_symbol: no script, so espeak-ng switches no voice; every one of them, alone and inside
 * a word, runs clean under valgrind) to espeak-ng, which names it ("😀" -> "grinning face").
 * espeak reads none. 0 for a NULL g. */
int ck_g2p_reads_symbol(const ck_g2p *g, uint32_t cp);

/* The first inline override [word](/phonemes/) of s (len bytes) at or after byte from whose
 * phonemes the G2P copies verbatim (misaki's markdown; espeak has none): [*start, *end) are the
 * bytes between the slashes, which the reader hands on unfiltered (they are Kokoro phonemes, not
 * text: the vocabulary checks them). 0 when there is none, or for a NULL g. */
int ck_g2p_next_override(const ck_g2p *g, const char *s, size_t len, size_t from, size_t *start,
                         size_t *end);

/* The version recorded in output metadata: "espeak-ng <version>" (espeak) or
 * "misaki (<CK_MISAKI_COMPAT>)"; valid until ck_g2p_close; NULL for a NULL g. */
const char *ck_g2p_version(const ck_g2p *g);

/* Metadata entry i (0, 1, ...): *key and *value valid until ck_g2p_close, e.g. "g2p_backend"
 * "misaki", "g2p_compat", "g2p_tagger", "g2p_fallback", "g2p_lexicon_us_gold_sha256" (misaki;
 * espeak has none). Returns 1, or 0 past the last entry. */
int ck_g2p_meta(const ck_g2p *g, size_t i, const char **key, const char **value);

/* Frees g; accepts NULL. */
void ck_g2p_close(ck_g2p *g);

#endif
