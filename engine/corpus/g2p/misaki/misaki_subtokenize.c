/* misaki_subtokenize.c - misaki's SUBTOKEN_REGEX (en.py:57) as a scanner over code points: numbers,
 * camel-case and apostrophe pieces; must not touch phonemes. */
#include "misaki_internal.h"

/* ---- subtokenize: misaki's SUBTOKEN_REGEX as a scanner (en.py:57, docs/misaki.md 2.3) ---- */

static int is_apos(uint32_t c)
{
    return c == '\'' || c == 0x2018 || c == 0x2019;
}

static int is_digit_u(uint32_t c)
{
    return ck_cp_decimal(c) >= 0;
}

/* Length of the number alternative (?:^-)?(?:\d?[,.]?\d)+ at i, 0 if none. */
static size_t match_number(const uint32_t *w, size_t n, size_t i)
{
    size_t j = i;
    if (i == 0 && j < n && w[j] == '-') {
        j++;
    }
    size_t k = j;
    if (k < n && (w[k] == ',' || w[k] == '.') && k + 1 < n && is_digit_u(w[k + 1])) {
        k++;
    }
    if (k >= n || !is_digit_u(w[k])) {
        return 0;
    }
    k++;
    for (;;) {
        if (k < n && is_digit_u(w[k])) {
            k++;
        } else if (k + 1 < n && (w[k] == ',' || w[k] == '.') && is_digit_u(w[k + 1])) {
            k += 2;
        } else {
            break;
        }
    }
    return k - i;
}

/* \p{L}*?(?:['‘’]\p{L})*?\p{Ll}(?=\p{Lu}): the first match in lazy order, 0 if none. */
static size_t match_camel(const uint32_t *w, size_t n, size_t i)
{
    size_t letters = 0;
    while (i + letters < n && ck_cp_isalpha(w[i + letters])) {
        letters++;
    }
    for (size_t a = 0; a <= letters; a++) {
        size_t p = i + a;
        for (;;) {  /* p: after a letters and some apostrophe-letter pairs */
            if (p + 1 < n && ck_cp_islower(w[p]) && ck_cp_isupper(w[p + 1])) {
                return p + 1 - i;
            }
            if (p + 1 < n && is_apos(w[p]) && ck_cp_isalpha(w[p + 1])) {
                p += 2;
            } else {
                break;
            }
        }
    }
    return 0;
}

/* Splits w into subtoken spans [start[k], start[k] + len[k]); returns the count. */
size_t ck_mk_subtokenize(const uint32_t *w, size_t n, size_t *start, size_t *len, size_t cap)
{
    size_t k = 0, i = 0;
    while (i < n && k < cap) {
        size_t m = 0;
        uint32_t c = w[i];
        if (i == 0 && is_apos(c)) {                                   /* ^['‘’]+ */
            while (m < n && is_apos(w[m])) {
                m++;
            }
        } else if (ck_cp_isupper(c) && i + 2 < n && ck_cp_isupper(w[i + 1]) &&
                   ck_cp_islower(w[i + 2])) {
            m = 1;                                                    /* \p{Lu}(?=\p{Lu}\p{Ll}) */
        } else if ((m = match_number(w, n, i)) > 0) {
        } else if (c == '-' || c == '_') {                            /* [-_]+ */
            while (i + m < n && (w[i + m] == '-' || w[i + m] == '_')) {
                m++;
            }
        } else if (is_apos(c) && i + 1 < n && is_apos(w[i + 1])) {     /* ['‘’]{2,} */
            while (i + m < n && is_apos(w[i + m])) {
                m++;
            }
        } else if ((m = match_camel(w, n, i)) > 0) {
        } else if (ck_cp_isalpha(c)) {                                /* \p{L}+(?:['‘’]\p{L})* */
            while (i + m < n && ck_cp_isalpha(w[i + m])) {
                m++;
            }
            while (i + m + 1 < n && is_apos(w[i + m]) && ck_cp_isalpha(w[i + m + 1])) {
                m += 2;
            }
        } else if (!is_apos(c) && !is_digit_u(c)) {                   /* [^-_\p{L}'‘’\d] */
            m = 1;
        } else if (is_apos(c)) {                                      /* ['‘’]+$ */
            size_t e = i;
            while (e < n && is_apos(w[e])) {
                e++;
            }
            if (e == n) {
                m = n - i;
            }
        }
        if (m == 0) {
            i++;
            continue;
        }
        start[k] = i;
        len[k] = m;
        k++;
        i += m;
    }
    return k;
}
