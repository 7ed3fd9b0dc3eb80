/* espeak.h - English text -> Kokoro phoneme strings through libespeak-ng (Kokoro's espeak fallback):
 * the "espeak" G2P of g2p.h and misaki's fallback for out-of-lexicon words; no vocabulary lookup
 * and no chunking here (the reader does both). */
#ifndef CK_ESPEAK_H
#define CK_ESPEAK_H

#include "ck_error.h"

typedef struct ck_espeak ck_espeak;

/* Opens a phonemizer for lang "en-us" or "en-gb" (NULL: CK_LANG_DEFAULT, lang.h). The first open
 * initialises espeak-ng once for the process (it is never terminated: espeak-ng cannot be
 * re-initialised safely). Errors: CK_E_ARG (null out, unknown lang: "g2p: lang ..."), CK_E_BACKEND
 * (built without espeak-ng, espeak-ng data missing, voice not found), CK_E_MEMORY. */
int ck_espeak_open(ck_espeak **out, const char *lang, ck_error *err);

/* Phonemizes one line of UTF-8 text into a malloc'd Kokoro phoneme string (*phonemes, free()).
 * Pipeline (misaki's espeak fallback: phonemizer with preserve_punctuation, with_stress, tie '^'):
 * quotes/dashes/brackets normalised (ck_espeak_punctuate), text between punctuation runs phonemized by
 * espeak-ng (IPA, stress marks, '^' ties; language-switch flags like "(fr)" removed), each piece
 * rewritten by ck_espeak_rewrite, pieces and marks rejoined with single spaces. Thread-safe: every
 * espeak-ng call holds one process-wide mutex. Text with no pronounceable content gives "".
 * Errors: CK_E_ARG (null), CK_E_INPUT (invalid UTF-8), CK_E_BACKEND (espeak-ng failed), CK_E_MEMORY. */
int ck_espeak_phonemize(ck_espeak *g, const char *text, char **phonemes, ck_error *err);

/* Raw espeak-ng output for text as misaki's fallback receives it from phonemizer (punctuation
 * kept by ck_espeak_punctuate, IPA with stress marks and '^' ties, language-switch flags removed),
 * before any rewrite rule; *raw malloc'd. Used by the misaki backend for out-of-lexicon words
 * (ck_misaki_espeak_rewrite applies misaki's own rule order). Thread-safe like
 * ck_espeak_phonemize. Errors: as ck_espeak_phonemize. */
int ck_espeak_raw(const ck_espeak *g, const char *text, char **raw, ck_error *err);

/* "espeak-ng <version>" of the library in use (e.g. "espeak-ng 1.51"), for output metadata; valid
 * until ck_espeak_close. NULL for a NULL g. */
const char *ck_espeak_version(const ck_espeak *g);

/* Frees g; accepts NULL. espeak-ng itself stays initialised for later opens. */
void ck_espeak_close(ck_espeak *g);

/* Phonemizes one punctuation-free piece of text (plain words) into a malloc'd string. */
typedef int (*ck_espeak_piece_fn)(void *ctx, const char *piece, char **phonemes, ck_error *err);

/* Splits text at runs of Kokoro punctuation ; : , . ! ? U+2014 U+2026 " ( ) U+201C U+201D (with the
 * whitespace around them), calls `piece` on the text between runs (edge whitespace trimmed, never
 * empty), and rejoins: each mark run keeps its marks (inner whitespace as one space), one space
 * after it when the source had whitespace after it and text follows, one space before it only when
 * it opens the next word (whitespace before, none after); spaces collapse to one; edges trimmed.
 * Before splitting: U+2018 U+2019 -> ', U+00AB U+201E -> U+201C, U+00BB -> U+201D,
 * U+2013 U+2015 -> U+2014, [ { -> (, ] } -> ). Example: `He said, "hi" (twice).` with an identity
 * piece function gives `He said, "hi" (twice).`. *out is malloc'd.
 * Errors: CK_E_ARG (null), CK_E_INPUT (invalid UTF-8), CK_E_MEMORY, or the piece function's error. */
int ck_espeak_punctuate(const char *text, ck_espeak_piece_fn piece, void *ctx, char **out, ck_error *err);

/* Rewrites one espeak-ng IPA string (stress marks, '^' ties) into Kokoro symbols (Kokoro's espeak
 * fallback rules, here the reference for --g2p espeak): one longest-first pass of the English rules
 * (a^ɪ->I a^ʊ->W d^ʒ->ʤ e^ɪ->A t^ʃ->ʧ ɔ^ɪ->Y ə^l->ᵊl ʲo->jo ʲə->jə e->A ɚ->əɹ r->ɹ x->k ç->k ɐ->ə
 * ɬ->l, ʲ and U+0303 removed) merged with the variant's (US: o^ʊ->O ɜːɹ->ɜɹ ɜː->ɜɹ ɪə->iə; GB:
 * e^ə->ɛː iə->ɪə ə^ʊ->Q), each rule replacing every occurrence in turn; then syllabic X U+0329 ->
 * ᵊX; US only: ː removed; then o->ɔ, ɾ->T, ʔ->t; finally the '^' ties removed. british: 0 for
 * en-us, 1 for en-gb. *out is malloc'd. Errors: CK_E_ARG (null), CK_E_MEMORY. */
int ck_espeak_rewrite(const char *espeak, int british, char **out, ck_error *err);
/* Known divergences from misaki's own EspeakFallback (docs/misaki.md section 5), kept on purpose
 * so that --g2p espeak stays byte-identical to earlier releases: no ʔn̩ -> ʔn rule (US "button": bˈʌtᵊn,
 * misaki bˈʌtn) and the variant rules merged into the longest-first pass (GB "square": skwˈɛː,
 * misaki skwˈAə). The misaki backend's fallback uses ck_misaki_espeak_rewrite, misaki's order. */

#endif
