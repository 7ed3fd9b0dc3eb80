/* misaki_markdown.c - misaki's G2P.preprocess (en.py:534-565): [text](feature) links and their
 * features mapped onto tokens; must not phonemize. */
#include "misaki_internal.h"

/* ---- markdown preprocess (en.py:534-565) ---- */

static int ascii_int(const char *s, size_t n)   /* is_digit(f[1 if f[:1] in '-+' else 0:]) */
{
    size_t i = n > 0 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (i >= n) {
        return 0;
    }
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
    }
    return 1;
}

static int is_space_byte(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Appends the whitespace-separated tokens of text[a, b) (pre offsets start at base). */
static int split_tokens(ck_misaki_pre *pre, size_t *cap, size_t a, size_t b)
{
    const char *t = pre->text;
    size_t i = a;
    while (i < b) {
        while (i < b && is_space_byte(t[i])) {
            i++;
        }
        if (i >= b) {
            break;
        }
        size_t s = i;
        while (i < b && !is_space_byte(t[i])) {
            i++;
        }
        if (pre->n_tokens == *cap) {
            size_t nc = *cap ? 2 * *cap : 16;
            ck_misaki_pre_token *p = realloc(pre->tokens, nc * sizeof *p);
            if (p == NULL) {
                return -1;
            }
            pre->tokens = p;
            *cap = nc;
        }
        pre->tokens[pre->n_tokens++] = (ck_misaki_pre_token){s, i, 0, NULL, 0};
    }
    return 0;
}

int ck_misaki_next_link(const char *s, size_t len, size_t from, size_t *open, size_t *mid,
                        size_t *close)
{
    for (size_t i = from; i < len; i++) {
        if (s[i] != '[') {
            continue;
        }
        size_t j = i + 1;
        while (j < len && s[j] != ']') {
            j++;
        }
        if (j == i + 1 || j + 1 >= len || s[j + 1] != '(') {
            continue;   /* [^\]]+ needs one character, then "](" */
        }
        size_t k = j + 2;
        while (k < len && s[k] != ')') {
            k++;
        }
        if (k < len) {
            *open = i;
            *mid = j;
            *close = k;
            return 1;
        }
    }
    return 0;
}

int ck_misaki_preprocess(const char *text, ck_misaki_pre *pre, ck_error *err)
{
    if (text == NULL || pre == NULL) {
        return ck_fail(err, CK_E_ARG, "misaki preprocess: null argument");
    }
    memset(pre, 0, sizeof *pre);
    while (is_space_byte(*text)) {
        text++;
    }
    ck_strbuf out = {0};
    size_t cap = 0, last = 0, len = strlen(text);
    /* LINK_REGEX \[([^\]]+)\]\(([^\)]*)\) */
    typedef struct { size_t a, b; int kind; char *value; double stress; } link;
    link links[256];
    size_t nl = 0;
    size_t i = 0, j = 0, k = 0;
    while (nl < 256 && ck_misaki_next_link(text, len, i, &i, &j, &k)) {
        ck_strbuf_append(&out, text + last, i - last);
        size_t ta = out.len;
        ck_strbuf_append(&out, text + i + 1, j - i - 1);
        const char *f = text + j + 2;
        size_t fl = k - j - 2;
        link L = {ta, out.len, 0, NULL, 0};
        if (ascii_int(f, fl)) {
            L.kind = 2;
            L.stress = atof(f[0] == '+' ? f + 1 : f);
            char tmp[32];
            snprintf(tmp, sizeof tmp, "%.*s", (int)(fl < 31 ? fl : 31), f);
            L.stress = (double)strtol(tmp, NULL, 10);
        } else if ((fl == 3 && memcmp(f, "0.5", 3) == 0) || (fl == 4 && memcmp(f, "+0.5", 4) == 0)) {
            L.kind = 2;
            L.stress = 0.5;
        } else if (fl == 4 && memcmp(f, "-0.5", 4) == 0) {
            L.kind = 2;
            L.stress = -0.5;
        } else if (fl > 1 && (f[0] == '/' || f[0] == '#') && f[fl - 1] == f[0]) {
            size_t e = fl, a = 1;
            while (e > 1 && f[e - 1] == f[0]) {
                e--;
            }
            while (a < e && f[a] == f[0]) {  /* misaki lstrips the mark when it applies it */
                a++;
            }
            L.kind = f[0] == '/' ? 1 : 3;
            L.value = strndup(f + a, e - a);
        }
        links[nl++] = L;
        last = k + 1;
        i = k + 1;
    }
    ck_strbuf_append(&out, text + last, len - last);
    ck_strbuf_puts(&out, "");
    pre->text = ck_strbuf_take(&out);
    if (pre->text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "misaki preprocess: out of memory");
    }
    /* tokens: plain text split on whitespace, each link one token */
    size_t pos = 0;
    int rc = 0;
    for (size_t i = 0; i < nl && rc == 0; i++) {
        rc = split_tokens(pre, &cap, pos, links[i].a);
        if (rc == 0 && pre->n_tokens == cap) {
            size_t nc = cap ? 2 * cap : 16;
            ck_misaki_pre_token *p = realloc(pre->tokens, nc * sizeof *p);
            rc = p == NULL ? -1 : 0;
            if (p != NULL) {
                pre->tokens = p;
                cap = nc;
            }
        }
        if (rc == 0) {
            pre->tokens[pre->n_tokens++] = (ck_misaki_pre_token){links[i].a, links[i].b,
                                                                 links[i].kind, links[i].value,
                                                                 links[i].stress};
            links[i].value = NULL;
        }
        pos = links[i].b;
    }
    if (rc == 0) {
        rc = split_tokens(pre, &cap, pos, strlen(pre->text));
    }
    for (size_t i = 0; i < nl; i++) {
        free(links[i].value);
    }
    if (rc != 0) {
        ck_misaki_pre_free(pre);
        return ck_fail(err, CK_E_MEMORY, "misaki preprocess: out of memory");
    }
    return CK_OK;
}

void ck_misaki_features(const ck_misaki_pre *pre, ck_misaki_token *tokens, size_t n)
{
    /* both sides cover the same non-space characters in order: walk them together, token ti
     * belonging to the preprocess token that holds its first non-space character */
    const char *t = pre->text;
    size_t pi = 0, pre_end = 0;  /* non-space characters up to the end of preprocess token pi */
    if (pre->n_tokens > 0) {
        for (size_t b = pre->tokens[0].start; b < pre->tokens[0].end; b++) {
            pre_end += !is_space_byte(t[b]) && ((unsigned char)t[b] & 0xC0) != 0x80;
        }
    }
    size_t ns_before = 0, prev_k = (size_t)-1, span_i = 0;
    for (size_t ti = 0; ti < n; ti++) {
        tokens[ti].is_head = 1;
        while (pi < pre->n_tokens && ns_before >= pre_end) {
            pi++;
            for (size_t b = pi < pre->n_tokens ? pre->tokens[pi].start : 0;
                 pi < pre->n_tokens && b < pre->tokens[pi].end; b++) {
                pre_end += !is_space_byte(t[b]) && ((unsigned char)t[b] & 0xC0) != 0x80;
            }
        }
        for (const char *s = tokens[ti].text; *s != '\0'; s++) {
            ns_before += !is_space_byte(*s) && ((unsigned char)*s & 0xC0) != 0x80;
        }
        if (pi >= pre->n_tokens) {
            continue;
        }
        const ck_misaki_pre_token *p = &pre->tokens[pi];
        span_i = pi == prev_k ? span_i + 1 : 0;
        prev_k = pi;
        if (p->kind == 2) {
            tokens[ti].stress = p->stress;
        } else if (p->kind == 1) {
            tokens[ti].is_head = span_i == 0;
            tokens[ti].phonemes = span_i == 0 ? p->value : "";
        } else if (p->kind == 3) {
            tokens[ti].num_flags = p->value;
        }
    }
}

void ck_misaki_pre_free(ck_misaki_pre *pre)
{
    if (pre == NULL) {
        return;
    }
    for (size_t i = 0; i < pre->n_tokens; i++) {
        free(pre->tokens[i].value);
    }
    free(pre->tokens);
    free(pre->text);
    memset(pre, 0, sizeof *pre);
}
