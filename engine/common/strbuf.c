/* strbuf.c - growable string with a latched allocation failure. */
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

void ck_strbuf_append(ck_strbuf *b, const char *s, size_t n)
{
    if (b->failed) {
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (p == NULL) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    if (n > 0) {
        memcpy(b->data + b->len, s, n);
    }
    b->len += n;
    b->data[b->len] = '\0';
}

void ck_strbuf_puts(ck_strbuf *b, const char *s)
{
    ck_strbuf_append(b, s, strlen(s));
}

char *ck_strbuf_take(ck_strbuf *b)
{
    ck_strbuf_append(b, "", 0);
    char *text = b->failed ? NULL : b->data;
    if (b->failed) {
        free(b->data);
    }
    *b = (ck_strbuf){NULL, 0, 0, 0};
    return text;
}

void ck_strbuf_free(ck_strbuf *b)
{
    free(b->data);
    *b = (ck_strbuf){NULL, 0, 0, 0};
}
