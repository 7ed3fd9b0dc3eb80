/* en_chars.c - see en_chars.h: range tables for case and letters, a small NFKC table. */
#include "en_chars.h"

/* Latin Extended-A and parts of B pair upper (even) and lower (odd) code points, with a few
 * ranges shifted by one; handled by the pair rules below. */
static int latin_ext_pair_upper(uint32_t c)
{
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) {
        return (c & 1) == 0;
    }
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) {
        return (c & 1) == 1;
    }
    return -1;
}

int ck_cp_isupper(uint32_t c)
{
    if (c < 0x80) {
        return c >= 'A' && c <= 'Z';
    }
    if (c >= 0xC0 && c <= 0xDE) {
        return c != 0xD7;
    }
    int p = latin_ext_pair_upper(c);
    if (p >= 0) {
        return p;
    }
    if (c == 0x178) {
        return 1;
    }
    if (c >= 0x391 && c <= 0x3AB) {
        return c != 0x3A2;
    }
    if (c >= 0x400 && c <= 0x42F) {
        return 1;
    }
    if (c >= 0x1E00 && c <= 0x1EFF) {
        return (c & 1) == 0;
    }
    if (c >= 0xFF21 && c <= 0xFF3A) {
        return 1;
    }
    return 0;
}

int ck_cp_islower(uint32_t c)
{
    if (c < 0x80) {
        return c >= 'a' && c <= 'z';
    }
    if (c == 0xB5 || c == 0xDF) {
        return 1;
    }
    if (c >= 0xE0 && c <= 0xFF) {
        return c != 0xF7;
    }
    int p = latin_ext_pair_upper(c);
    if (p >= 0) {
        return !p;
    }
    if (c == 0x17F || (c >= 0x180 && c <= 0x24F && c != 0x1BB && !(c >= 0x1C0 && c <= 0x1C3))) {
        return c == 0x17F || (c & 1) == 1;  /* approximate for Latin Extended-B */
    }
    if (c >= 0x250 && c <= 0x2AF) {
        return 1;  /* IPA extensions are lower-case letters */
    }
    if (c >= 0x3AC && c <= 0x3CE) {
        return 1;
    }
    if (c >= 0x430 && c <= 0x45F) {
        return 1;
    }
    if (c >= 0x1E00 && c <= 0x1EFF) {
        return (c & 1) == 1;
    }
    if (c >= 0xFF41 && c <= 0xFF5A) {
        return 1;
    }
    return 0;
}

int ck_cp_isalpha(uint32_t c)
{
    if (c < 0x80) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    }
    if (ck_cp_isupper(c) || ck_cp_islower(c)) {
        return 1;
    }
    return c == 0xAA || c == 0xBA || (c >= 0x180 && c <= 0x24F) || (c >= 0x2B0 && c <= 0x2C1) ||
           (c >= 0x370 && c <= 0x3FF && c != 0x37E && c != 0x387) || (c >= 0x400 && c <= 0x481) ||
           (c >= 0x48A && c <= 0x52F) || (c >= 0x5D0 && c <= 0x5EA) ||
           (c >= 0x620 && c <= 0x64A) || (c >= 0x1E00 && c <= 0x1FFF) ||
           (c >= 0x3041 && c <= 0x3096) || (c >= 0x30A1 && c <= 0x30FA) ||
           (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3) ||
           (c >= 0xFB00 && c <= 0xFB06);
}

uint32_t ck_cp_lower(uint32_t c)
{
    if (!ck_cp_isupper(c)) {
        return c;
    }
    if (c < 0x80 || (c >= 0xC0 && c <= 0xDE) || (c >= 0x391 && c <= 0x3AB) ||
        (c >= 0x410 && c <= 0x42F) || (c >= 0xFF21 && c <= 0xFF3A)) {
        return c + 0x20;
    }
    if (c >= 0x400 && c <= 0x40F) {
        return c + 0x50;
    }
    if (c == 0x178) {
        return 0xFF;
    }
    return c + 1;
}

uint32_t ck_cp_upper(uint32_t c)
{
    if (!ck_cp_islower(c)) {
        return c;
    }
    if (c < 0x80 || (c >= 0xE0 && c <= 0xFE) || (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2) ||
        (c >= 0x430 && c <= 0x44F) || (c >= 0xFF41 && c <= 0xFF5A)) {
        return c - 0x20;
    }
    if (c >= 0x450 && c <= 0x45F) {
        return c - 0x50;
    }
    if (c == 0xFF) {
        return 0x178;
    }
    if (latin_ext_pair_upper(c) == 0 || (c >= 0x1E00 && c <= 0x1EFF)) {
        return c - 1;
    }
    return c;  /* ß, µ, IPA letters and others keep their form (no single-letter upper) */
}

/* Zero code points of the Unicode Nd blocks English text may carry. */
static const uint32_t k_decimal_zero[] = {
    0x30,   0x660,  0x6F0,  0x7C0,  0x966,  0x9E6,  0xA66,  0xAE6,  0xB66,  0xBE6, 0xC66,
    0xCE6,  0xD66,  0xDE6,  0xE50,  0xED0,  0xF20,  0x1040, 0x1090, 0x17E0, 0x1810,
    0x1946, 0x19D0, 0xFF10, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6};

int ck_cp_decimal(uint32_t c)
{
    for (size_t i = 0; i < sizeof k_decimal_zero / sizeof k_decimal_zero[0]; i++) {
        if (c >= k_decimal_zero[i] && c < k_decimal_zero[i] + 10) {
            return (int)(c - k_decimal_zero[i]);
        }
    }
    return -1;
}

int ck_cp_ascii_form(uint32_t c)
{
    return c >= 0x80 && (ck_cp_decimal(c) >= 0 || (c >= 0xFF01 && c <= 0xFF5E) || c == 0xB2 ||
                         c == 0xB3 || c == 0xB9 || c == 0x2070 || (c >= 0x2074 && c <= 0x2089) ||
                         (c >= 0x2460 && c <= 0x2487) || (c >= 0x2776 && c <= 0x2793) ||
                         (c >= 0xFB00 && c <= 0xFB06));
}

int ck_cp_symbol(uint32_t c)
{
    return (c >= 0x2100 && c <= 0x214F) || (c >= 0x2190 && c <= 0x23FF) ||
           (c >= 0x25A0 && c <= 0x27BF && !(c >= 0x2776 && c <= 0x2793)) ||
           (c >= 0x2B00 && c <= 0x2BFF) || (c >= 0x1F000 && c <= 0x1FAFF) || c == 0xFE0F;
}

/* Appends the ASCII digits of v (1..99). */
static size_t put_number(unsigned v, uint32_t *out, size_t w, size_t cap)
{
    if (v >= 10 && w < cap) {
        out[w++] = '0' + v / 10;
    }
    if (w < cap) {
        out[w++] = '0' + v % 10;
    }
    return w;
}

size_t ck_cp_normalize(const uint32_t *in, size_t n, uint32_t *out, size_t cap)
{
    size_t w = 0;
    for (size_t i = 0; i < n && w < cap; i++) {
        uint32_t c = in[i];
        int d = ck_cp_decimal(c);
        if (c >= 0xFF01 && c <= 0xFF5E) {
            out[w++] = c - 0xFF01 + 0x21;                       /* fullwidth ASCII */
        } else if (d >= 0) {
            out[w++] = '0' + (uint32_t)d;                       /* any script's digit */
        } else if (c == 0xB2 || c == 0xB3 || c == 0xB9) {
            out[w++] = c == 0xB9 ? '1' : '0' + (c - 0xB0);      /* superscripts 1 2 3 */
        } else if (c == 0x2070 || (c >= 0x2074 && c <= 0x2079)) {
            out[w++] = '0' + (c - 0x2070);
        } else if (c >= 0x2080 && c <= 0x2089) {
            out[w++] = '0' + (c - 0x2080);
        } else if (c >= 0x2460 && c <= 0x2473) {
            w = put_number(c - 0x2460 + 1, out, w, cap);          /* circled 1..20 (NFKC) */
        } else if (c >= 0x2474 && c <= 0x2487) {
            out[w++] = '(';                                     /* parenthesized: "(1)" */
            w = put_number(c - 0x2474 + 1, out, w, cap);
            if (w < cap) {
                out[w++] = ')';
            }
        } else if (c >= 0x2776 && c <= 0x2793) {
            w = put_number((c - 0x2776) % 10 + 1, out, w, cap);   /* dingbat circled digits */
        } else if (c == 0xA0 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F ||
                   c == 0x3000) {
            out[w++] = ' ';
        } else if (c == 0x2026) {
            for (int k = 0; k < 3 && w < cap; k++) {
                out[w++] = '.';
            }
        } else if (c >= 0xFB00 && c <= 0xFB06) {
            static const char *const lig[] = {"ff", "fi", "fl", "ffi", "ffl", "st", "st"};
            for (const char *p = lig[c - 0xFB00]; *p != '\0' && w < cap; p++) {
                out[w++] = (uint32_t)*p;
            }
        } else if (c == 0x2122) {
            out[w++] = 'T';
            if (w < cap) {
                out[w++] = 'M';
            }
        } else if (c == 0x2011) {
            out[w++] = 0x2010;
        } else {
            out[w++] = c;
        }
    }
    return w;
}
