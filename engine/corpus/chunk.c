/* chunk.c - the punctuation-first chunker for phoneme strings longer than the model's 510 limit;
 * must not look symbols up in the vocabulary (the reader does that before chunking). */
#include "chunk.h"

#include <stdint.h>
#include <stdlib.h>

#include "utf8.h"

static int is_sentence_mark(uint32_t c)
{
    return c == '.' || c == '!' || c == '?' || c == 0x2026;
}

static int is_clause_mark(uint32_t c)
{
    return c == ',' || c == ';' || c == ':' || c == 0x2014;
}

static int is_closing_mark(uint32_t c)
{
    return c == '"' || c == ')' || c == 0x201D;
}

/* Cut candidates seen so far in a window, as byte offsets (0: none yet). */
typedef struct {
    size_t sentence;  /* just after the last sentence mark and the closing marks right after it */
    size_t clause;    /* just after the last clause mark */
    size_t space;     /* at the last space that is not the window's first code point */
} cut_marks;

static void note_mark(cut_marks *m, uint32_t c, size_t at, size_t next, size_t start)
{
    if (is_sentence_mark(c) || (is_closing_mark(c) && m->sentence == at && at != 0)) {
        m->sentence = next;
    } else if (is_clause_mark(c)) {
        m->clause = next;
    } else if (c == ' ' && at > start) {
        m->space = at;
    }
}

/* Byte offset where the chunk starting at byte `start` (not a space) ends: n when the rest fits in
 * max code points, else the preferred cut inside the window of max code points (chunk.h). */
static int find_cut(const char *s, size_t n, size_t start, size_t max, size_t *cut, ck_error *err)
{
    cut_marks m = {0, 0, 0};
    size_t pos = start;
    for (size_t k = 0; k < max && pos < n; k++) {
        size_t at = pos;
        uint32_t c = 0;
        if (ck_utf8_next(s, n, &pos, &c) != CK_OK) {
            return ck_fail(err, CK_E_INPUT, "chunk: invalid UTF-8 at byte %zu", at);
        }
        note_mark(&m, c, at, pos, start);
    }
    if (pos >= n) {
        *cut = n;
    } else if (m.sentence != 0) {
        *cut = m.sentence;
    } else if (m.clause != 0) {
        *cut = m.clause;
    } else {
        *cut = m.space != 0 ? m.space : pos;
    }
    return CK_OK;
}

/* Appends s[start, end) trimmed of trailing spaces (start is not a space) to the growing list. */
static int emit(const char *s, size_t start, size_t end, ck_chunk_span **spans, size_t *count,
                size_t *cap, ck_error *err)
{
    while (end > start && s[end - 1] == ' ') {
        end--;
    }
    if (*count == *cap) {
        size_t grown = *cap ? 2 * *cap : 8;
        ck_chunk_span *p = realloc(*spans, grown * sizeof *p);
        if (p == NULL) {
            return ck_fail(err, CK_E_MEMORY, "chunk: cannot allocate %zu spans", grown);
        }
        *spans = p;
        *cap = grown;
    }
    (*spans)[*count].offset = start;
    (*spans)[*count].length = end - start;
    (*count)++;
    return CK_OK;
}

int ck_chunk_split(const char *s, size_t n, size_t max, ck_chunk_span **spans, size_t *count,
                   ck_error *err)
{
    if (s == NULL || spans == NULL || count == NULL || max == 0) {
        return ck_fail(err, CK_E_ARG, "chunk: %s", max == 0 ? "max is 0" : "null argument");
    }
    *spans = NULL;
    *count = 0;
    size_t cap = 0, start = 0;
    int rc = CK_OK;
    while (rc == CK_OK) {
        while (start < n && s[start] == ' ') {
            start++;
        }
        if (start >= n) {
            break;
        }
        size_t cut = n;
        rc = find_cut(s, n, start, max, &cut, err);
        if (rc == CK_OK) {
            rc = emit(s, start, cut, spans, count, &cap, err);
        }
        start = cut;
    }
    if (rc != CK_OK) {
        free(*spans);
        *spans = NULL;
        *count = 0;
    }
    return rc;
}
