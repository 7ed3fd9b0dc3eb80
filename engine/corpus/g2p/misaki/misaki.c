/* misaki.c - misaki's English G2P (misaki v0.9.4 en.py, after tagging; docs/misaki.md): the object,
 * the per-call arena, code point helpers and apply_stress, shared by the misaki_*.c files through
 * misaki_internal.h; must not resolve words or hold per-call state outside the arena.
 *
 * Flow of ck_misaki_run (misaki_run.c): tokens -> fold_left (override spans) -> retokenize
 * (subtokens, punctuation, currency, groups) -> right-to-left resolution (lexicon, numbers,
 * fallback; TokenContext) -> resolve_tokens (prespace, stress balancing) -> merge groups -> ɾ->T,
 * ʔ->t -> Kokoro strings. `en.py:N` notes name the step of misaki v0.9.4 each function
 * reproduces. */
#include "misaki_internal.h"

/* ---- arena: every string of one call ---- */

void *ck_mk_amalloc(ck_misaki_arena **a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (*a == NULL || (*a)->used + n > (*a)->cap) {
        size_t cap = n > 65536 ? n : 65536;
        ck_misaki_arena *b = malloc(sizeof *b + cap);
        if (b == NULL) {
            if (*a != NULL) {
                (*a)->failed = 1;
            }
            return NULL;
        }
        b->next = *a;
        b->used = 0;
        b->cap = cap;
        b->failed = *a != NULL && (*a)->failed;
        *a = b;
    }
    void *p = (char *)(*a)->data + (*a)->used;
    (*a)->used += n;
    return p;
}

char *ck_mk_astrndup(ck_misaki_arena **a, const char *s, size_t n)
{
    char *p = ck_mk_amalloc(a, n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *ck_mk_astrdup(ck_misaki_arena **a, const char *s)
{
    return s != NULL ? ck_mk_astrndup(a, s, strlen(s)) : NULL;
}

/* s1 + s2 (+ s3) in the arena. */
char *ck_mk_acat(ck_misaki_arena **a, const char *s1, const char *s2, const char *s3)
{
    size_t n1 = strlen(s1), n2 = strlen(s2), n3 = s3 != NULL ? strlen(s3) : 0;
    char *p = ck_mk_amalloc(a, n1 + n2 + n3 + 1);
    if (p != NULL) {
        memcpy(p, s1, n1);
        memcpy(p + n1, s2, n2);
        memcpy(p + n1 + n2, s3 != NULL ? s3 : "", n3);
        p[n1 + n2 + n3] = '\0';
    }
    return p;
}

/* ---- code point helpers ---- */

size_t ck_mk_decode(const char *s, uint32_t *out, size_t cap)
{
    size_t n = strlen(s), pos = 0, k = 0;
    uint32_t c = 0;
    while (pos < n && k < cap && ck_utf8_next(s, n, &pos, &c) == CK_OK) {
        out[k++] = c;
    }
    return k;
}

char *ck_mk_encode(ck_misaki_arena **a, const uint32_t *w, size_t n)
{
    char *p = ck_mk_amalloc(a, 4 * n + 1), *q = p;
    if (p == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        q += ck_utf8_encode(w[i], q);
    }
    *q = '\0';
    return p;
}

/* Last code point of a UTF-8 string and the byte where it starts (0 for ""). */
uint32_t ck_mk_last_cp(const char *s, size_t *start)
{
    size_t n = strlen(s);
    if (n == 0) {
        *start = 0;
        return 0;
    }
    size_t i = n - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) {
        i--;
    }
    size_t pos = i;
    uint32_t c = 0;
    ck_utf8_next(s, n, &pos, &c);
    *start = i;
    return c;
}

size_t ck_mk_cp_len(const char *s)
{
    size_t k = 0;
    for (; *s != '\0'; s++) {
        k += ((unsigned char)*s & 0xC0) != 0x80;
    }
    return k;
}

int ck_mk_in_set(uint32_t c, const char *set)
{
    size_t n = strlen(set), pos = 0;
    uint32_t d = 0;
    while (pos < n && ck_utf8_next(set, n, &pos, &d) == CK_OK) {
        if (c == d) {
            return 1;
        }
    }
    return 0;
}

int ck_mk_has_cp(const char *s, uint32_t c)
{
    uint32_t w[4 * MAXW];
    size_t n = ck_mk_decode(s, w, 4 * MAXW);
    for (size_t i = 0; i < n; i++) {
        if (w[i] == c) {
            return 1;
        }
    }
    return 0;
}

int ck_mk_w_eq(const uint32_t *w, size_t n, const char *ascii)
{
    size_t m = strlen(ascii);
    if (m != n) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (w[i] != (unsigned char)ascii[i]) {
            return 0;
        }
    }
    return 1;
}

int ck_mk_w_is_lower(const uint32_t *w, size_t n)   /* word == word.lower() */
{
    for (size_t i = 0; i < n; i++) {
        if (ck_cp_lower(w[i]) != w[i]) {
            return 0;
        }
    }
    return 1;
}

int ck_mk_w_is_upper(const uint32_t *w, size_t n)   /* word == word.upper() */
{
    for (size_t i = 0; i < n; i++) {
        if (ck_cp_upper(w[i]) != w[i]) {
            return 0;
        }
    }
    return 1;
}

int ck_mk_w_is_alpha(const uint32_t *w, size_t n)   /* str.isalpha (False for "") */
{
    for (size_t i = 0; i < n; i++) {
        if (!ck_cp_isalpha(w[i])) {
            return 0;
        }
    }
    return n > 0;
}

int ck_mk_w_lexicon_ords(const uint32_t *w, size_t n)  /* all in LEXICON_ORDS: ' - A-Z a-z */
{
    for (size_t i = 0; i < n; i++) {
        uint32_t c = w[i];
        if (!(c == '\'' || c == '-' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            return 0;
        }
    }
    return 1;
}

int ck_mk_w_ends(const uint32_t *w, size_t n, const char *ascii)
{
    size_t m = strlen(ascii);
    return n >= m && ck_mk_w_eq(w + n - m, m, ascii);
}

/* ---- apply_stress (en.py:95-120) ---- */

/* Moves every stress mark to just before the next vowel at or after it. */
static char *restress(ck_misaki_arena **a, const uint32_t *w, size_t n)
{
    uint32_t out[4 * MAXW];
    size_t k = 0;
    double pos[4 * MAXW];
    for (size_t i = 0; i < n && i < 4 * MAXW; i++) {
        pos[i] = (double)i;
        if (w[i] == PRIMARY || w[i] == SECONDARY) {
            for (size_t j = i; j < n; j++) {
                if (ck_mk_in_set(w[j], VOWELS)) {
                    pos[i] = (double)j - 0.5;
                    break;
                }
            }
        }
    }
    /* stable sort by (position, code point) as Python sorts (index, char) pairs */
    size_t idx[4 * MAXW];
    for (size_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    for (size_t i = 1; i < n; i++) {
        size_t x = idx[i], j = i;
        while (j > 0 && (pos[idx[j - 1]] > pos[x] ||
                         (pos[idx[j - 1]] == pos[x] && w[idx[j - 1]] > w[x]))) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
    for (size_t i = 0; i < n; i++) {
        out[k++] = w[idx[i]];
    }
    return ck_mk_encode(a, out, k);
}

const char *ck_mk_apply_stress(ck_misaki_arena **a, const char *ps, double stress)
{
    if (ps == NULL || stress == CK_MISAKI_NO_STRESS) {
        return ps;
    }
    uint32_t w[4 * MAXW], o[4 * MAXW + 1];
    size_t n = ck_mk_decode(ps, w, 4 * MAXW), k = 0;
    int has_p = 0, has_s = 0, has_v = 0;
    for (size_t i = 0; i < n; i++) {
        has_p |= w[i] == PRIMARY;
        has_s |= w[i] == SECONDARY;
        has_v |= ck_mk_in_set(w[i], VOWELS);
    }
    if (stress < -1) {
        for (size_t i = 0; i < n; i++) {
            if (w[i] != PRIMARY && w[i] != SECONDARY) {
                o[k++] = w[i];
            }
        }
        return ck_mk_encode(a, o, k);
    }
    if (stress == -1 || ((stress == 0 || stress == -0.5) && has_p)) {
        for (size_t i = 0; i < n; i++) {
            if (w[i] != SECONDARY) {
                o[k++] = w[i] == PRIMARY ? SECONDARY : w[i];
            }
        }
        return ck_mk_encode(a, o, k);
    }
    if ((stress == 0 || stress == 0.5 || stress == 1) && !has_p && !has_s) {
        if (!has_v) {
            return ps;
        }
        o[0] = SECONDARY;
        memcpy(o + 1, w, n * sizeof *w);
        return restress(a, o, n + 1);
    }
    if (stress >= 1 && !has_p && has_s) {
        for (size_t i = 0; i < n; i++) {
            o[i] = w[i] == SECONDARY ? PRIMARY : w[i];
        }
        return ck_mk_encode(a, o, n);
    }
    if (stress > 1 && !has_p && !has_s) {
        if (!has_v) {
            return ps;
        }
        o[0] = PRIMARY;
        memcpy(o + 1, w, n * sizeof *w);
        return restress(a, o, n + 1);
    }
    return ps;
}

int ck_mk_stress_weight(const char *ps)
{
    uint32_t w[4 * MAXW];
    size_t n = ps != NULL ? ck_mk_decode(ps, w, 4 * MAXW) : 0;
    int s = 0;
    for (size_t i = 0; i < n; i++) {
        s += ck_mk_in_set(w[i], DIPHTHONGS) ? 2 : 1;
    }
    return s;
}

int ck_misaki_open(ck_misaki **out, const ck_misaki_options *opt, ck_error *err)
{
    if (out == NULL || opt == NULL || opt->lexicon == NULL) {
        return ck_fail(err, CK_E_ARG, "misaki: null argument");
    }
    *out = NULL;
    if ((opt->british != 0) != ck_lexicon_british(opt->lexicon)) {
        return ck_fail(err, CK_E_ARG, "misaki: the lexicon is %s, the G2P %s",
                       ck_lang_name(ck_lexicon_british(opt->lexicon) ? CK_LANG_EN_GB : CK_LANG_EN_US),
                       ck_lang_name(opt->british ? CK_LANG_EN_GB : CK_LANG_EN_US));
    }
    ck_misaki *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return ck_fail(err, CK_E_MEMORY, "misaki: cannot allocate");
    }
    m->british = opt->british != 0;
    m->lex = opt->lexicon;
    m->espeak = opt->espeak;
    m->espeak_ctx = opt->espeak_ctx;
    *out = m;
    return CK_OK;
}

void ck_misaki_close(ck_misaki *m)
{
    free(m);
}

void ck_misaki_result_free(ck_misaki_result *res)
{
    if (res == NULL) {
        return;
    }
    for (ck_misaki_arena *a = res->arena; a != NULL;) {
        ck_misaki_arena *next = a->next;
        free(a);
        a = next;
    }
    memset(res, 0, sizeof *res);
}
