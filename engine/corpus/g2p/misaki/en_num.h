/* en_num.h - English number words as num2words 0.5.10-0.5.14 (lang_EN) writes them, for misaki's
 * number rules: cardinal, ordinal, year and float. Written from the behaviour (tested against
 * Debian's python3-num2words output), not from num2words' source. No I/O. */
#ifndef CK_EN_NUM_H
#define CK_EN_NUM_H

#include "strbuf.h"

typedef enum { CK_NUM_CARDINAL = 0, CK_NUM_ORDINAL = 1, CK_NUM_YEAR = 2 } ck_num_kind;

/* Appends num2words(int(digits), to=kind) to out, commas, hyphens and "and" included
 * (1234 -> "one thousand, two hundred and thirty-four"; year 1905 -> "nineteen oh-five").
 * digits: ASCII digits only, leading zeros allowed, value below 10^36. Returns 0, or -1 for an
 * empty, non-digit or too large input (out untouched). */
int ck_num_words(const char *digits, size_t n, ck_num_kind kind, ck_strbuf *out);

/* Appends num2words(float(s)) for s = digits, '.', digits (either side may be empty, not both):
 * an integral value is a cardinal ("3.0" -> "three"), otherwise "<int> point d d d" with the
 * fraction's digits one by one, trailing zeros dropped ("2.50" -> "two point five"). Returns 0 or
 * -1 (bad input, out untouched). */
int ck_num_words_float(const char *s, size_t n, ck_strbuf *out);

#endif
