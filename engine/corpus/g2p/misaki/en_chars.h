/* en_chars.h - the few Unicode character properties misaki's Python relies on (str.isalpha,
 * lower/upper, \p{Lu} \p{Ll}, \d, unicodedata.numeric, NFKC), as tables for the scripts English
 * text carries: ASCII, Latin-1, Latin Extended-A/B, Greek, Cyrillic; other letters (CJK, kana,
 * Hangul, Hebrew, Arabic) are caseless letters. Not a full Unicode database: documented limits. */
#ifndef CK_EN_CHARS_H
#define CK_EN_CHARS_H

#include <stddef.h>
#include <stdint.h>

int ck_cp_isalpha(uint32_t c);   /* \p{L}, str.isalpha */
int ck_cp_isupper(uint32_t c);   /* \p{Lu} */
int ck_cp_islower(uint32_t c);   /* \p{Ll} */
uint32_t ck_cp_lower(uint32_t c);
uint32_t ck_cp_upper(uint32_t c);
/* Decimal digit (\d, Nd): its value 0..9, or -1. */
int ck_cp_decimal(uint32_t c);

/* 1 for the non-ASCII forms ck_cp_normalize turns into ASCII digits or characters: digits of any
 * script, fullwidth ASCII, super/subscript digits, circled and dingbat numbers, the Latin
 * ligatures U+FB00..U+FB06 (ﬁ -> fi: letters inside a word, so folding them before tokenizing
 * splits nothing spaCy would not). */
int ck_cp_ascii_form(uint32_t c);

/* 1 for the symbols and emoji a reader says aloud and espeak-ng 1.51 names ("😀" -> "grinning
 * face"): letterlike symbols, arrows, mathematical operators, technical and geometric symbols,
 * dingbats (not the circled digits), the emoji blocks U+1F000..U+1FAFF, and U+FE0F (emoji
 * presentation). No script: espeak-ng switches no voice on them. */
int ck_cp_symbol(uint32_t c);

/* NFKC for the compatibility characters English text meets (fullwidth ASCII, superscript and
 * subscript digits, circled numbers, ligatures, NBSP, U+2026 -> "...", ...), then misaki's
 * numeric_if_needed (a digit of any script with an integral value -> ASCII digits: U+0663 -> "3",
 * U+2780 -> "1"). Writes at most `cap` code points of `in` (n) into out; returns the count. */
size_t ck_cp_normalize(const uint32_t *in, size_t n, uint32_t *out, size_t cap);

#endif
