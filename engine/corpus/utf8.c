/* utf8.c - strict UTF-8 (RFC 3629 table 3-7) decode and encode; never allocates, never prints. */
#include "utf8.h"

#include "ck_status.h"

/* Sequence length announced by a lead byte and the smallest value it may encode (overlong guard);
 * 0 for bytes that cannot start a sequence (continuations 0x80..0xBF, 0xC0/0xC1 always overlong,
 * 0xF5..0xFF above U+10FFFF). */
static size_t lead_length(unsigned char b, uint32_t *value, uint32_t *minimum)
{
    if (b < 0x80) {
        *value = b;
        *minimum = 0;
        return 1;
    }
    if (b >= 0xC2 && b <= 0xDF) {
        *value = b & 0x1Fu;
        *minimum = 0x80;
        return 2;
    }
    if (b >= 0xE0 && b <= 0xEF) {
        *value = b & 0x0Fu;
        *minimum = 0x800;
        return 3;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        *value = b & 0x07u;
        *minimum = 0x10000;
        return 4;
    }
    return 0;
}

int ck_utf8_next(const char *s, size_t n, size_t *pos, uint32_t *code_point)
{
    if (s == NULL || pos == NULL || code_point == NULL || *pos >= n) {
        return CK_E_ARG;
    }
    const unsigned char *p = (const unsigned char *)s + *pos;
    uint32_t value = 0, minimum = 0;
    size_t len = lead_length(p[0], &value, &minimum);
    if (len == 0 || len > n - *pos) {
        return CK_E_INPUT;
    }
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0u) != 0x80u) {
            return CK_E_INPUT;
        }
        value = (value << 6) | (p[i] & 0x3Fu);
    }
    if (value < minimum || value > 0x10FFFFu || (value >= 0xD800u && value <= 0xDFFFu)) {
        return CK_E_INPUT;
    }
    *code_point = value;
    *pos += len;
    return CK_OK;
}

int ck_utf8_validate(const char *s, size_t n, size_t *byte, size_t *column)
{
    if (s == NULL && n > 0) {
        return CK_E_ARG;
    }
    size_t pos = 0, col = 1;
    uint32_t cp = 0;
    while (pos < n) {
        if (ck_utf8_next(s, n, &pos, &cp) != CK_OK) {
            if (byte != NULL) {
                *byte = pos;
            }
            if (column != NULL) {
                *column = col;
            }
            return CK_E_INPUT;
        }
        col++;
    }
    return CK_OK;
}

size_t ck_utf8_encode(uint32_t code_point, char out[4])
{
    unsigned char *o = (unsigned char *)out;
    if (code_point < 0x80u) {
        o[0] = (unsigned char)code_point;
        return 1;
    }
    if (code_point < 0x800u) {
        o[0] = (unsigned char)(0xC0u | (code_point >> 6));
        o[1] = (unsigned char)(0x80u | (code_point & 0x3Fu));
        return 2;
    }
    if (code_point >= 0xD800u && code_point <= 0xDFFFu) {
        return 0;
    }
    if (code_point < 0x10000u) {
        o[0] = (unsigned char)(0xE0u | (code_point >> 12));
        o[1] = (unsigned char)(0x80u | ((code_point >> 6) & 0x3Fu));
        o[2] = (unsigned char)(0x80u | (code_point & 0x3Fu));
        return 3;
    }
    if (code_point <= 0x10FFFFu) {
        o[0] = (unsigned char)(0xF0u | (code_point >> 18));
        o[1] = (unsigned char)(0x80u | ((code_point >> 12) & 0x3Fu));
        o[2] = (unsigned char)(0x80u | ((code_point >> 6) & 0x3Fu));
        o[3] = (unsigned char)(0x80u | (code_point & 0x3Fu));
        return 4;
    }
    return 0;
}
