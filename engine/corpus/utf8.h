/* utf8.h - strict UTF-8 decoding and encoding with byte and column positions; no allocation, no I/O. */
#ifndef CK_UTF8_H
#define CK_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "ck_status.h"

/* Decodes the code point at s[*pos] (s holds n bytes) into *code_point and advances *pos past it.
 * Strict (RFC 3629): rejects stray continuation bytes, overlong forms, surrogates U+D800..U+DFFF,
 * values above U+10FFFF, bytes 0xF5..0xFF and sequences truncated by the end of s or by a
 * non-continuation byte. Returns CK_OK, or CK_E_INPUT with *pos unchanged; CK_E_ARG on null pointers
 * or *pos >= n. */
int ck_utf8_next(const char *s, size_t n, size_t *pos, uint32_t *code_point);

/* Checks that all n bytes of s are strict UTF-8. Returns CK_OK, or CK_E_INPUT with *byte set to the
 * 0-based byte offset of the first bad sequence and *column to its 1-based code point column
 * (either pointer may be NULL); CK_E_ARG when s is NULL and n > 0. */
int ck_utf8_validate(const char *s, size_t n, size_t *byte, size_t *column);

/* Writes the UTF-8 form of code_point (a scalar value: <= U+10FFFF, not a surrogate) into out[0..3]
 * and returns its length 1..4, or 0 (out untouched) for a value that is not a scalar value. */
size_t ck_utf8_encode(uint32_t code_point, char out[4]);

#endif
