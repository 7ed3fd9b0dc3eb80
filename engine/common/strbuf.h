/* strbuf.h - the growable string every room builds text with (a safetensors header, a rewritten
 * phoneme string). An allocation failure latches `failed`, so appends chain without checks and the
 * caller tests once at the end. */
#ifndef CK_STRBUF_H
#define CK_STRBUF_H

#include <stddef.h>

typedef struct {
    char *data;   /* NUL-terminated after len bytes once anything was appended; NULL before */
    size_t len, cap;
    int failed;   /* 1 after an allocation failure: later appends do nothing */
} ck_strbuf;

/* Appends n bytes of s (which may hold NULs); grows by doubling. */
void ck_strbuf_append(ck_strbuf *b, const char *s, size_t n);

/* Appends the NUL-terminated string s. */
void ck_strbuf_puts(ck_strbuf *b, const char *s);

/* Hands the text over as a malloc'd NUL-terminated string ("" when nothing was appended) and
 * empties b. Returns NULL (and frees the text) when an append had failed or memory runs out. */
char *ck_strbuf_take(ck_strbuf *b);

/* Frees the text; b is empty again. */
void ck_strbuf_free(ck_strbuf *b);

#endif
