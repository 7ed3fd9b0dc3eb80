/* chunk.h - splits a long phoneme string into chunks of at most max code points; no vocab, no I/O. */
#ifndef CK_CHUNK_H
#define CK_CHUNK_H

#include <stddef.h>

#include "ck_error.h"

/* A chunk: bytes s[offset, offset + length) of the string that was split. */
typedef struct {
    size_t offset;  /* bytes from the start of the string */
    size_t length;  /* bytes, > 0 */
} ck_chunk_span;

/* Splits s (n bytes of valid UTF-8) into chunks of at most max code points each, in order, covering
 * every non-space code point exactly once. Each chunk ends at the last cut point inside its window
 * of max code points, preferring: after the last sentence mark (. ! ? U+2026) that is followed by
 * its closing marks (" ) U+201D), then after the last clause mark (, ; : U+2014), then before the
 * last space, else a hard cut at max code points. A string that fits is one chunk. Chunks are
 * trimmed of edge spaces (U+0020) and never empty; a string of spaces gives *count = 0.
 * *spans is malloc'd (NULL when *count is 0); free it with free().
 * Errors: CK_E_ARG (null pointer, max 0), CK_E_INPUT (invalid UTF-8), CK_E_MEMORY. */
int ck_chunk_split(const char *s, size_t n, size_t max, ck_chunk_span **spans, size_t *count,
                   ck_error *err);

#endif
