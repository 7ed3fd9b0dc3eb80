/* misaki.c - misaki's English G2P after tagging, rule for rule (MISAKI.md sections 1.3-1.12;
 * `en.py:N` notes name the step of misaki v0.9.4 each function reproduces). Words are handled as
 * code point arrays, phonemes as UTF-8 strings in a per-call arena; the lexicon is read-only.
 *
 * Flow of ck_misaki_run: tokens -> fold_left (override spans) -> retokenize (subtokens, punctuation,
 * currency, groups) -> right-to-left resolution (lexicon, numbers, fallback; TokenContext) ->
 * resolve_tokens (prespace, stress balancing) -> merge groups -> ɾ->T, ʔ->t -> Kokoro strings. */
#include "misaki.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "en_chars.h"
#include "en_num.h"
#include "strbuf.h"
#include "utf8.h"

#define MAXW 256          /* code points of a word the lexicon is asked about */
#define KOKORO_MAX 510    /* Kokoro's phoneme limit per chunk */

/* ---- arena: every string of one call ---- */

struct ck_misaki_arena {
    struct ck_misaki_arena *next;
    size_t used, cap;
    int failed;
    max_align_t data[];
};

static void *amalloc(ck_misaki_arena **a, size_t n)
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

static char *astrndup(ck_misaki_arena **a, const char *s, size_t n)
{
    char *p = amalloc(a, n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static char *astrdup(ck_misaki_arena **a, const char *s)
{
    return s != NULL ? astrndup(a, s, strlen(s)) : NULL;
}

/* s1 + s2 (+ s3) in the arena. */
static char *acat(ck_misaki_arena **a, const char *s1, const char *s2, const char *s3)
{
    size_t n1 = strlen(s1), n2 = strlen(s2), n3 = s3 != NULL ? strlen(s3) : 0;
    char *p = amalloc(a, n1 + n2 + n3 + 1);
    if (p != NULL) {
        memcpy(p, s1, n1);
        memcpy(p + n1, s2, n2);
        memcpy(p + n1 + n2, s3 != NULL ? s3 : "", n3);
        p[n1 + n2 + n3] = '\0';
    }
    return p;
}

/* ---- code point helpers ---- */

static size_t decode(const char *s, uint32_t *out, size_t cap)
{
    size_t n = strlen(s), pos = 0, k = 0;
    uint32_t c = 0;
    while (pos < n && k < cap && ck_utf8_next(s, n, &pos, &c) == CK_OK) {
        out[k++] = c;
    }
    return k;
}

static char *encode(ck_misaki_arena **a, const uint32_t *w, size_t n)
{
    char *p = amalloc(a, 4 * n + 1), *q = p;
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
static uint32_t last_cp(const char *s, size_t *start)
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

static size_t cp_len(const char *s)
{
    size_t k = 0;
    for (; *s != '\0'; s++) {
        k += ((unsigned char)*s & 0xC0) != 0x80;
    }
    return k;
}

static int in_set(uint32_t c, const char *set)
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

static int has_cp(const char *s, uint32_t c)
{
    uint32_t w[4 * MAXW];
    size_t n = decode(s, w, 4 * MAXW);
    for (size_t i = 0; i < n; i++) {
        if (w[i] == c) {
            return 1;
        }
    }
    return 0;
}

static int w_eq(const uint32_t *w, size_t n, const char *ascii)
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

static int w_is_lower(const uint32_t *w, size_t n)   /* word == word.lower() */
{
    for (size_t i = 0; i < n; i++) {
        if (ck_cp_lower(w[i]) != w[i]) {
            return 0;
        }
    }
    return 1;
}

static int w_is_upper(const uint32_t *w, size_t n)   /* word == word.upper() */
{
    for (size_t i = 0; i < n; i++) {
        if (ck_cp_upper(w[i]) != w[i]) {
            return 0;
        }
    }
    return 1;
}

static int w_is_alpha(const uint32_t *w, size_t n)   /* str.isalpha (False for "") */
{
    for (size_t i = 0; i < n; i++) {
        if (!ck_cp_isalpha(w[i])) {
            return 0;
        }
    }
    return n > 0;
}

static int w_lexicon_ords(const uint32_t *w, size_t n)  /* all in LEXICON_ORDS: ' - A-Z a-z */
{
    for (size_t i = 0; i < n; i++) {
        uint32_t c = w[i];
        if (!(c == '\'' || c == '-' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            return 0;
        }
    }
    return 1;
}

static int w_ends(const uint32_t *w, size_t n, const char *ascii)
{
    size_t m = strlen(ascii);
    return n >= m && w_eq(w + n - m, m, ascii);
}

/* ---- phoneme symbol sets (en.py:45-94) ---- */

static const char *const VOWELS = "AIOQWYaiuæɑɒɔəɛɜɪʊʌᵻ";
static const char *const CONSONANTS = "bdfhjklmnpstvwzðŋɡɹɾʃʒʤʧθ";
static const char *const NON_QUOTE_PUNCTS = ";:,.!?—…";
static const char *const PUNCTS = ";:,.!?—…\"“”";
static const char *const US_TAUS = "AIOWYiuæɑəɛɪɹʊʌ";
static const char *const DIPHTHONGS = "AIOQWYʤʧ";
static const char *const SUBTOKEN_JUNKS = "',-._‘’/";
#define PRIMARY 0x2C8u    /* ˈ */
#define SECONDARY 0x2CCu  /* ˌ */

/* ---- the G2P object ---- */

struct ck_misaki {
    int british;
    const ck_lexicon *lex;
    ck_misaki_espeak_fn espeak;
    void *espeak_ctx;
};

/* A token while misaki works on it (MToken with its Underscore). */
typedef struct {
    char *text;
    const char *tag;
    int ws;
    char *ps;          /* NULL = None */
    int rating;        /* 0 = None */
    int is_head;
    const char *alias;
    double stress;
    uint32_t currency; /* 0 = None */
    char flags[16];
    int prespace;
    size_t byte;
} tok;

typedef struct {
    int fv;            /* future_vowel: -1 None, 0 False, 1 True */
    int future_to;
} context;

typedef struct {
    const ck_misaki *m;
    ck_misaki_arena **a;
    ck_misaki_result *res;
    ck_strbuf fb;      /* fallback records */
    size_t fb_cap;
    ck_error *err;
} run;

typedef struct {
    const char *ps;    /* NULL = None */
    int rating;
} pr;

static const pr NONE = {NULL, 0};

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
                if (in_set(w[j], VOWELS)) {
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
    return encode(a, out, k);
}

static const char *apply_stress(ck_misaki_arena **a, const char *ps, double stress)
{
    if (ps == NULL || stress == CK_MISAKI_NO_STRESS) {
        return ps;
    }
    uint32_t w[4 * MAXW], o[4 * MAXW + 1];
    size_t n = decode(ps, w, 4 * MAXW), k = 0;
    int has_p = 0, has_s = 0, has_v = 0;
    for (size_t i = 0; i < n; i++) {
        has_p |= w[i] == PRIMARY;
        has_s |= w[i] == SECONDARY;
        has_v |= in_set(w[i], VOWELS);
    }
    if (stress < -1) {
        for (size_t i = 0; i < n; i++) {
            if (w[i] != PRIMARY && w[i] != SECONDARY) {
                o[k++] = w[i];
            }
        }
        return encode(a, o, k);
    }
    if (stress == -1 || ((stress == 0 || stress == -0.5) && has_p)) {
        for (size_t i = 0; i < n; i++) {
            if (w[i] != SECONDARY) {
                o[k++] = w[i] == PRIMARY ? SECONDARY : w[i];
            }
        }
        return encode(a, o, k);
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
        return encode(a, o, n);
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

static int stress_weight(const char *ps)
{
    uint32_t w[4 * MAXW];
    size_t n = ps != NULL ? decode(ps, w, 4 * MAXW) : 0;
    int s = 0;
    for (size_t i = 0; i < n; i++) {
        s += in_set(w[i], DIPHTHONGS) ? 2 : 1;
    }
    return s;
}

/* ---- lexicon access ---- */

/* Looks a word (code points) up in gold or silver; words with non-ASCII never match. */
static int lex_get(const ck_misaki *m, ck_lex_kind kind, const uint32_t *w, size_t n,
                   ck_lex_entry *e)
{
    char key[MAXW];
    if (n == 0 || n >= MAXW) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (w[i] >= 0x80) {
            return 0;
        }
        key[i] = (char)w[i];
    }
    return ck_lexicon_get(m->lex, kind, key, n, e);
}

static int in_gold(const ck_misaki *m, const uint32_t *w, size_t n)
{
    return lex_get(m, CK_LEX_GOLD, w, n, NULL);
}

static int in_silver(const ck_misaki *m, const uint32_t *w, size_t n)
{
    return lex_get(m, CK_LEX_SILVER, w, n, NULL);
}

/* A plain gold string for an ASCII word ("to", "am"), or NULL. */
static const char *gold_str(const ck_misaki *m, const char *word, const char *tag)
{
    ck_lex_entry e;
    if (!ck_lexicon_get(m->lex, CK_LEX_GOLD, word, strlen(word), &e)) {
        return NULL;
    }
    if (e.phonemes != NULL) {
        return e.phonemes;
    }
    const char *def = NULL;
    for (size_t i = 0; i < e.pos->n; i++) {
        if (tag != NULL && strcmp(e.pos->tag[i], tag) == 0) {
            return e.pos->phonemes[i];
        }
        if (strcmp(e.pos->tag[i], "DEFAULT") == 0) {
            def = e.pos->phonemes[i];
        }
    }
    return def;
}

static const char *parent_tag(const char *tag)   /* en.py:205-217 */
{
    if (tag == NULL) {
        return NULL;
    }
    if (strncmp(tag, "VB", 2) == 0) {
        return "VERB";
    }
    if (strncmp(tag, "NN", 2) == 0) {
        return "NOUN";
    }
    if (strncmp(tag, "ADV", 3) == 0 || strncmp(tag, "RB", 2) == 0) {
        return "ADV";
    }
    if (strncmp(tag, "ADJ", 3) == 0 || strncmp(tag, "JJ", 2) == 0) {
        return "ADJ";
    }
    return tag;
}

static int is_symbol(const uint32_t *w, size_t n)
{
    return n == 1 && (w[0] == '%' || w[0] == '&' || w[0] == '+' || w[0] == '@');
}

static const char *symbol_word(uint32_t c)
{
    return c == '%' ? "percent" : c == '&' ? "and" : c == '+' ? "plus" : "at";
}

/* get_NNP (en.py:159-165): the letters spelled from gold, the last stress primary. */
static pr get_nnp(run *r, const uint32_t *w, size_t n)
{
    ck_strbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (!ck_cp_isalpha(w[i])) {
            continue;
        }
        uint32_t u = ck_cp_upper(w[i]);
        char key[2] = {(char)u, 0};
        const char *ps = u < 0x80 ? gold_str(r->m, key, NULL) : NULL;
        if (ps == NULL) {
            ck_strbuf_free(&b);
            return NONE;
        }
        ck_strbuf_puts(&b, ps);
    }
    char *joined = ck_strbuf_take(&b);
    if (joined == NULL) {
        return NONE;
    }
    const char *ps = apply_stress(r->a, astrdup(r->a, joined), 0);
    free(joined);
    if (ps == NULL) {
        return NONE;
    }
    const char *last = NULL;
    for (const char *p = strstr(ps, "ˌ"); p != NULL; p = strstr(p + 1, "ˌ")) {
        last = p;
    }
    if (last == NULL) {
        return (pr){ps, 3};
    }
    char *out = astrdup(r->a, ps);
    if (out == NULL) {
        return NONE;
    }
    size_t off = (size_t)(last - ps);
    memcpy(out + off, "ˈ", strlen("ˈ"));  /* both marks are 2 bytes in UTF-8 */
    return (pr){out, 3};
}

/* lookup (en.py:230-248). ctx NULL: no context (number words). */
static pr lookup(run *r, const uint32_t *word, size_t n, const char *tag, double stress,
                 const context *ctx)
{
    uint32_t w[MAXW];
    n = n < MAXW ? n : MAXW - 1;
    memcpy(w, word, n * sizeof *w);
    int is_nnp = 0;
    if (w_is_upper(w, n) && !in_gold(r->m, w, n)) {
        for (size_t i = 0; i < n; i++) {
            w[i] = ck_cp_lower(w[i]);
        }
        is_nnp = tag != NULL && strcmp(tag, "NNP") == 0;
    }
    ck_lex_entry e;
    const char *ps = NULL;
    int rating = 4, found = lex_get(r->m, CK_LEX_GOLD, w, n, &e);
    if (!found && !is_nnp) {
        found = lex_get(r->m, CK_LEX_SILVER, w, n, &e);
        rating = 3;
    }
    if (found && e.phonemes != NULL) {
        ps = e.phonemes;
    } else if (found) {
        const ck_lex_pos *p = e.pos;
        const char *want = tag;
        int has_none = 0, has_tag = 0;
        for (size_t i = 0; i < p->n; i++) {
            has_none |= strcmp(p->tag[i], "None") == 0;
            has_tag |= tag != NULL && strcmp(p->tag[i], tag) == 0;
        }
        if (ctx != NULL && ctx->fv < 0 && has_none) {
            want = "None";
        } else if (!has_tag) {
            want = parent_tag(tag);
        }
        const char *def = NULL;
        int hit = 0;
        for (size_t i = 0; i < p->n; i++) {
            if (strcmp(p->tag[i], "DEFAULT") == 0) {
                def = p->phonemes[i];
            }
            if (!hit && want != NULL && strcmp(p->tag[i], want) == 0) {
                ps = p->phonemes[i];
                hit = 1;
            }
        }
        if (!hit) {
            ps = def;
        }
    }
    if (ps == NULL || (is_nnp && !has_cp(ps, PRIMARY))) {
        pr s = get_nnp(r, w, n);
        if (s.ps != NULL) {
            return s;
        }
        if (ps == NULL) {
            return NONE;
        }
    }
    return (pr){apply_stress(r->a, ps, stress), rating};
}

static pr lookup_ascii(run *r, const char *word, const char *tag, double stress,
                       const context *ctx)
{
    uint32_t w[MAXW];
    size_t n = decode(word, w, MAXW);
    return lookup(r, w, n, tag, stress, ctx);
}

/* is_known (en.py:219-228) */
static int is_known(run *r, const uint32_t *w, size_t n)
{
    if (in_gold(r->m, w, n) || is_symbol(w, n) || in_silver(r->m, w, n)) {
        return 1;
    }
    if (!w_is_alpha(w, n) || !w_lexicon_ords(w, n)) {
        return 0;
    }
    if (n == 1) {
        return 1;
    }
    if (w_is_upper(w, n)) {
        uint32_t l[MAXW];
        for (size_t i = 0; i < n; i++) {
            l[i] = ck_cp_lower(w[i]);
        }
        if (in_gold(r->m, l, n)) {
            return 1;
        }
    }
    return w_is_upper(w + 1, n - 1);
}

/* ---- suffix rules (en.py:250-329) ---- */

static const char *suffix_s(run *r, const char *stem)
{
    size_t st;
    if (stem == NULL || *stem == '\0') {
        return NULL;
    }
    uint32_t c = last_cp(stem, &st);
    if (in_set(c, "ptkfθ")) {
        return acat(r->a, stem, "s", NULL);
    }
    if (in_set(c, "szʃʒʧʤ")) {
        return acat(r->a, stem, r->m->british ? "ɪ" : "ᵻ", "z");
    }
    return acat(r->a, stem, "z", NULL);
}

static const char *suffix_ed(run *r, const char *stem)
{
    size_t st;
    if (stem == NULL || *stem == '\0') {
        return NULL;
    }
    uint32_t c = last_cp(stem, &st);
    if (in_set(c, "pkfθʃsʧ")) {
        return acat(r->a, stem, "t", NULL);
    }
    if (c == 'd') {
        return acat(r->a, stem, r->m->british ? "ɪ" : "ᵻ", "d");
    }
    if (c != 't') {
        return acat(r->a, stem, "d", NULL);
    }
    if (r->m->british || cp_len(stem) < 2) {
        return acat(r->a, stem, "ɪd", NULL);
    }
    char *head = astrndup(r->a, stem, st);
    size_t st2;
    if (head != NULL && in_set(last_cp(head, &st2), US_TAUS)) {
        return acat(r->a, head, "ɾᵻd", NULL);
    }
    return acat(r->a, stem, "ᵻd", NULL);
}

static const char *suffix_ing(run *r, const char *stem)
{
    size_t st;
    if (stem == NULL || *stem == '\0') {
        return NULL;
    }
    uint32_t c = last_cp(stem, &st);
    if (r->m->british) {
        if (c == 0x259 /* ə */ || c == 0x2D0 /* ː */) {
            return NULL;
        }
    } else if (cp_len(stem) > 1 && c == 't') {
        char *head = astrndup(r->a, stem, st);
        size_t st2;
        if (head != NULL && in_set(last_cp(head, &st2), US_TAUS)) {
            return acat(r->a, head, "ɾɪŋ", NULL);
        }
    }
    return acat(r->a, stem, "ɪŋ", NULL);
}

static pr stem_s(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                 const context *ctx)
{
    uint32_t s[MAXW];
    size_t sn = 0;
    if (n < 3 || w[n - 1] != 's') {
        return NONE;
    }
    memcpy(s, w, n * sizeof *w);
    if (!w_ends(w, n, "ss") && is_known(r, w, n - 1)) {
        sn = n - 1;
    } else if ((w_ends(w, n, "'s") || (n > 4 && w_ends(w, n, "es") && !w_ends(w, n, "ies"))) &&
               is_known(r, w, n - 2)) {
        sn = n - 2;
    } else if (n > 4 && w_ends(w, n, "ies")) {
        s[n - 3] = 'y';
        if (!is_known(r, s, n - 2)) {
            return NONE;
        }
        sn = n - 2;
    } else {
        return NONE;
    }
    pr p = lookup(r, s, sn, tag, stress, ctx);
    return (pr){suffix_s(r, p.ps), p.rating};
}

static pr stem_ed(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                  const context *ctx)
{
    size_t sn = 0;
    if (n < 4 || w[n - 1] != 'd') {
        return NONE;
    }
    if (!w_ends(w, n, "dd") && is_known(r, w, n - 1)) {
        sn = n - 1;
    } else if (n > 4 && w_ends(w, n, "ed") && !w_ends(w, n, "eed") && is_known(r, w, n - 2)) {
        sn = n - 2;
    } else {
        return NONE;
    }
    pr p = lookup(r, w, sn, tag, stress, ctx);
    return (pr){suffix_ed(r, p.ps), p.rating};
}

static int doubled_ing(const uint32_t *w, size_t n)  /* ([bcdgklmnprstvxz])\1ing$|cking$ */
{
    if (n >= 5 && w[n - 4] == w[n - 5] && w[n - 4] < 0x80 &&
        strchr("bcdgklmnprstvxz", (int)w[n - 4]) != NULL) {
        return 1;
    }
    return w_ends(w, n, "cking");
}

static pr stem_ing(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                   const context *ctx)
{
    uint32_t s[MAXW];
    size_t sn = 0;
    if (n < 5 || !w_ends(w, n, "ing")) {
        return NONE;
    }
    memcpy(s, w, n * sizeof *w);
    if (n > 5 && is_known(r, w, n - 3)) {
        sn = n - 3;
    } else if ((s[n - 3] = 'e', is_known(r, s, n - 2))) {
        sn = n - 2;
    } else if (n > 5 && doubled_ing(w, n) && is_known(r, w, n - 4)) {
        memcpy(s, w, n * sizeof *w);
        sn = n - 4;
    } else {
        return NONE;
    }
    pr p = lookup(r, s, sn, tag, stress, ctx);
    return (pr){suffix_ing(r, p.ps), p.rating};
}

/* ---- special cases (en.py:167-203) ---- */

static int tag_is(const char *tag, const char *t)
{
    return tag != NULL && strcmp(tag, t) == 0;
}

static int any_of(const uint32_t *w, size_t n, const char *a, const char *b, const char *c)
{
    return w_eq(w, n, a) || (b != NULL && w_eq(w, n, b)) || (c != NULL && w_eq(w, n, c));
}

/* '.' in word.strip('.') and word.replace('.', '').isalpha() and every piece < 3 long */
static int dotted_abbreviation(const uint32_t *w, size_t n)
{
    size_t a = 0, b = n;
    while (a < b && w[a] == '.') {
        a++;
    }
    while (b > a && w[b - 1] == '.') {
        b--;
    }
    int inner_dot = 0;
    for (size_t i = a; i < b; i++) {
        inner_dot |= w[i] == '.';
    }
    if (!inner_dot) {
        return 0;
    }
    size_t letters = 0, piece = 0, longest = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i] == '.') {
            piece = 0;
            continue;
        }
        if (!ck_cp_isalpha(w[i])) {
            return 0;
        }
        letters++;
        piece++;
        longest = piece > longest ? piece : longest;
    }
    return letters > 0 && longest < 3;
}

static pr special_case(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                       const context *ctx)
{
    if (tag_is(tag, "ADD") && n == 1 && (w[0] == '.' || w[0] == '/')) {
        return lookup_ascii(r, w[0] == '.' ? "dot" : "slash", NULL, -0.5, ctx);
    }
    if (is_symbol(w, n)) {
        return lookup_ascii(r, symbol_word(w[0]), NULL, CK_MISAKI_NO_STRESS, ctx);
    }
    if (dotted_abbreviation(w, n)) {
        return get_nnp(r, w, n);
    }
    if (any_of(w, n, "a", "A", NULL)) {
        return (pr){tag_is(tag, "DT") ? "ɐ" : "ˈA", 4};
    }
    if (any_of(w, n, "am", "Am", "AM")) {
        if (tag != NULL && strncmp(tag, "NN", 2) == 0) {
            return get_nnp(r, w, n);
        }
        if (ctx->fv < 0 || !w_eq(w, n, "am") || (stress != CK_MISAKI_NO_STRESS && stress > 0)) {
            return (pr){gold_str(r->m, "am", NULL), 4};
        }
        return (pr){"ɐm", 4};
    }
    if (any_of(w, n, "an", "An", "AN")) {
        if (w_eq(w, n, "AN") && tag != NULL && strncmp(tag, "NN", 2) == 0) {
            return get_nnp(r, w, n);
        }
        return (pr){"ɐn", 4};
    }
    if (w_eq(w, n, "I") && tag_is(tag, "PRP")) {
        return (pr){"ˌI", 4};
    }
    if (any_of(w, n, "by", "By", "BY") && tag_is(parent_tag(tag), "ADV")) {
        return (pr){"bˈI", 4};
    }
    if (any_of(w, n, "to", "To", NULL) || (w_eq(w, n, "TO") && (tag_is(tag, "TO") ||
                                                                 tag_is(tag, "IN")))) {
        return (pr){ctx->fv < 0 ? gold_str(r->m, "to", NULL) : ctx->fv ? "tʊ" : "tə", 4};
    }
    if (any_of(w, n, "in", "In", NULL) || (w_eq(w, n, "IN") && !tag_is(tag, "NNP"))) {
        return (pr){ctx->fv < 0 || !tag_is(tag, "IN") ? "ˈɪn" : "ɪn", 4};
    }
    if (any_of(w, n, "the", "The", NULL) || (w_eq(w, n, "THE") && tag_is(tag, "DT"))) {
        return (pr){ctx->fv == 1 ? "ði" : "ðə", 4};
    }
    if (tag_is(tag, "IN") && (n == 2 || (n == 3 && w[2] == '.')) &&
        ck_cp_lower(w[0]) == 'v' && ck_cp_lower(w[1]) == 's') {
        return lookup_ascii(r, "versus", NULL, CK_MISAKI_NO_STRESS, ctx);
    }
    if (any_of(w, n, "used", "Used", "USED")) {
        int vbd = (tag_is(tag, "VBD") || tag_is(tag, "JJ")) && ctx->future_to;
        return (pr){gold_str(r->m, "used", vbd ? "VBD" : "DEFAULT"), 4};
    }
    return NONE;
}

/* ---- get_word (en.py:331-361) ---- */

static pr get_word(run *r, const uint32_t *word, size_t n, const char *tag, double stress,
                   const context *ctx)
{
    pr sc = special_case(r, word, n, tag, stress, ctx);
    if (sc.ps != NULL) {
        return sc;
    }
    uint32_t w[MAXW], wl[MAXW], tmp[MAXW];
    memcpy(w, word, n * sizeof *w);
    for (size_t i = 0; i < n; i++) {
        wl[i] = ck_cp_lower(w[i]);
    }
    size_t na = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i] != '\'') {
            tmp[na++] = w[i];
        }
    }
    if (n > 1 && w_is_alpha(tmp, na) && !w_is_lower(w, n) &&
        (!tag_is(tag, "NNP") || n > 7) && !in_gold(r->m, w, n) && !in_silver(r->m, w, n) &&
        (w_is_upper(w, n) || w_is_lower(w + 1, n - 1)) &&
        (in_gold(r->m, wl, n) || in_silver(r->m, wl, n) ||
         stem_s(r, wl, n, tag, stress, ctx).ps != NULL ||
         stem_ed(r, wl, n, tag, stress, ctx).ps != NULL ||
         stem_ing(r, wl, n, tag, stress, ctx).ps != NULL)) {
        memcpy(w, wl, n * sizeof *w);
    }
    if (is_known(r, w, n)) {
        return lookup(r, w, n, tag, stress, ctx);
    }
    if (n >= 2 && w[n - 1] == '\'' && w[n - 2] == 's') {
        memcpy(tmp, w, n * sizeof *w);
        tmp[n - 2] = '\'';
        tmp[n - 1] = 's';
        if (is_known(r, tmp, n)) {
            return lookup(r, tmp, n, tag, stress, ctx);
        }
    }
    if (n >= 1 && w[n - 1] == '\'' && is_known(r, w, n - 1)) {
        return lookup(r, w, n - 1, tag, stress, ctx);
    }
    pr p = stem_s(r, w, n, tag, stress, ctx);
    if (p.ps != NULL) {
        return p;
    }
    p = stem_ed(r, w, n, tag, stress, ctx);
    if (p.ps != NULL) {
        return p;
    }
    p = stem_ing(r, w, n, tag, stress == CK_MISAKI_NO_STRESS ? 0.5 : stress, ctx);
    return p.ps != NULL ? p : NONE;
}

/* ---- numbers (en.py:363-476) ---- */

static int is_number(const uint32_t *w, size_t n, int is_head)
{
    int digit = 0;
    for (size_t i = 0; i < n; i++) {
        digit |= w[i] >= '0' && w[i] <= '9';
    }
    if (!digit) {
        return 0;
    }
    static const char *const suffixes[] = {"ing", "'d", "ed", "'s", "st", "nd", "rd", "th", "s"};
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
        if (w_ends(w, n, suffixes[k])) {
            n -= strlen(suffixes[k]);
            break;
        }
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t c = w[i];
        if (!((c >= '0' && c <= '9') || c == ',' || c == '.' || (is_head && i == 0 && c == '-'))) {
            return 0;
        }
    }
    return 1;
}

typedef struct {
    run *r;
    const char *flags;
    pr parts[256];
    size_t n;
} numout;

static void num_push(numout *o, pr p)
{
    if (o->n < sizeof o->parts / sizeof o->parts[0]) {
        o->parts[o->n++] = p;
    }
}

/* extend_num: num2words words (split on non-letters), "and" dropped unless flag '&'. */
static void extend_words(numout *o, const char *words, int first)
{
    const char *p = words;
    size_t count = 0;
    for (const char *q = words; *q != '\0';) {  /* count the split pieces */
        while (*q != '\0' && !(*q >= 'a' && *q <= 'z')) {
            q++;
        }
        if (*q == '\0') {
            break;
        }
        count++;
        while (*q >= 'a' && *q <= 'z') {
            q++;
        }
    }
    /* re.split gives an empty piece before a leading separator: never here (words start with a
     * letter), so piece i is the i-th letter run */
    size_t i = 0;
    while (*p != '\0') {
        while (*p != '\0' && !(*p >= 'a' && *p <= 'z')) {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        const char *s = p;
        while (*p >= 'a' && *p <= 'z') {
            p++;
        }
        char w[64];
        size_t len = (size_t)(p - s) < sizeof w - 1 ? (size_t)(p - s) : sizeof w - 1;
        memcpy(w, s, len);
        w[len] = '\0';
        if (strcmp(w, "and") != 0 || strchr(o->flags, '&') != NULL) {
            if (first && i == 0 && count > 1 && strcmp(w, "one") == 0 &&
                strchr(o->flags, 'a') != NULL) {
                num_push(o, (pr){"ə", 4});
            } else {
                num_push(o, lookup_ascii(o->r, w, NULL,
                                         strcmp(w, "point") == 0 ? -2 : CK_MISAKI_NO_STRESS, NULL));
            }
        } else if (strchr(o->flags, 'n') != NULL && o->n > 0) {
            pr *last = &o->parts[o->n - 1];
            last->ps = last->ps != NULL ? acat(o->r->a, last->ps, "ən", NULL) : NULL;
        }
        i++;
    }
}

/* extend_num(num) without escape: num2words(int(num)). */
static void extend_int(numout *o, const char *digits, size_t n, int first)
{
    ck_strbuf b = {0};
    if (ck_num_words(digits, n, CK_NUM_CARDINAL, &b) == 0) {
        char *s = ck_strbuf_take(&b);
        if (s != NULL) {
            extend_words(o, s, first);
            free(s);
        }
    }
    ck_strbuf_free(&b);
}

static const char *currency_unit(uint32_t c, int sub)
{
    switch (c) {
    case '$': return sub ? "cent" : "dollar";
    case 0xA3: return sub ? "pence" : "pound";
    case 0x20AC: return sub ? "cent" : "euro";
    default: return NULL;
    }
}

static pr get_number(run *r, const uint32_t *word, size_t n, uint32_t currency, int is_head,
                     const char *flags)
{
    numout o = {.r = r, .flags = flags, .n = 0};
    char w[MAXW + 1];
    size_t suf = n;
    while (suf > 0 && ((word[suf - 1] >= 'a' && word[suf - 1] <= 'z') || word[suf - 1] == '\'')) {
        suf--;
    }
    char suffix[MAXW + 1];
    size_t ns = n - suf;
    for (size_t i = 0; i < ns; i++) {
        suffix[i] = (char)word[suf + i];
    }
    suffix[ns] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < suf; i++) {
        if (word[i] >= 0x80) {
            return NONE;
        }
        w[len++] = (char)word[i];
    }
    w[len] = '\0';
    char *s = w;
    if (s[0] == '-') {
        num_push(&o, lookup_ascii(r, "minus", NULL, CK_MISAKI_NO_STRESS, NULL));
        s++;
        len--;
    }
    int digits_only = len > 0 && strspn(s, "0123456789") == len;
    int ordinal = ns == 2 && (strcmp(suffix, "st") == 0 || strcmp(suffix, "nd") == 0 ||
                              strcmp(suffix, "rd") == 0 || strcmp(suffix, "th") == 0);
    const char *unit = currency_unit(currency, 0);
    char nocomma[MAXW + 1];
    size_t nc = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != ',') {
            nocomma[nc++] = s[i];
        }
    }
    nocomma[nc] = '\0';
    size_t dots = 0;
    for (size_t i = 0; i < len; i++) {
        dots += s[i] == '.';
    }
    if (digits_only && ordinal) {
        ck_strbuf b = {0};
        ck_num_words(s, len, CK_NUM_ORDINAL, &b);
        char *t = ck_strbuf_take(&b);
        if (t != NULL) {
            extend_words(&o, t, 1);
            free(t);
        }
    } else if (o.n == 0 && len == 4 && unit == NULL && digits_only) {
        ck_strbuf b = {0};
        ck_num_words(s, len, CK_NUM_YEAR, &b);
        char *t = ck_strbuf_take(&b);
        if (t != NULL) {
            extend_words(&o, t, 1);
            free(t);
        }
    } else if (!is_head && dots == 0) {
        if (nc == 0) {
            /* nothing: misaki would fail on num[0] */
        } else if (nocomma[0] == '0' || nc > 3) {
            for (size_t i = 0; i < nc; i++) {
                extend_int(&o, nocomma + i, 1, 0);
            }
        } else if (nc == 3 && !(nocomma[1] == '0' && nocomma[2] == '0')) {
            extend_int(&o, nocomma, 1, 1);
            if (nocomma[1] == '0') {
                num_push(&o, lookup_ascii(r, "O", NULL, -2, NULL));
                extend_int(&o, nocomma + 2, 1, 0);
            } else {
                extend_int(&o, nocomma + 1, 2, 0);
            }
        } else {
            extend_int(&o, nocomma, nc, 1);
        }
    } else if (dots > 1 || !is_head) {
        int first = 1;
        const char *p = nocomma;
        for (;;) {
            const char *e = strchr(p, '.');
            size_t pl = e != NULL ? (size_t)(e - p) : strlen(p);
            if (pl == 0) {
                /* empty piece */
            } else {
                int nonzero_after = 0;
                for (size_t i = 1; i < pl; i++) {
                    nonzero_after |= p[i] != '0';
                }
                if (p[0] == '0' || (pl != 2 && nonzero_after)) {
                    for (size_t i = 0; i < pl; i++) {
                        extend_int(&o, p + i, 1, 0);
                    }
                } else {
                    extend_int(&o, p, pl, first);
                }
            }
            first = 0;
            if (e == NULL) {
                break;
            }
            p = e + 1;
        }
    } else if (unit != NULL && (dots == 0 || strlen(strchr(s, '.') + 1) < 3)) {
        /* currency: "N units and M subunits", zero parts dropped */
        char *dot = strchr(nocomma, '.');
        const char *num[2] = {nocomma, dot != NULL ? dot + 1 : NULL};
        size_t nl[2] = {dot != NULL ? (size_t)(dot - nocomma) : nc, dot != NULL ? strlen(dot + 1) : 0};
        int np = dot != NULL ? 2 : 1, start = 0;
        int zero[2];
        for (int k = 0; k < 2; k++) {
            zero[k] = 1;
            for (size_t i = 0; k < np && i < nl[k]; i++) {
                zero[k] &= num[k][i] == '0';
            }
        }
        if (np > 1) {
            if (zero[1]) {
                np = 1;
            } else if (zero[0]) {
                start = 1;
            }
        }
        for (int k = start; k < np; k++) {
            if (k > start) {
                num_push(&o, lookup_ascii(r, "and", NULL, CK_MISAKI_NO_STRESS, NULL));
            }
            if (nl[k] == 0) {
                extend_int(&o, "0", 1, k == start);
            } else {
                extend_int(&o, num[k], nl[k], k == start);
            }
            const char *u = currency_unit(currency, k);
            int one = 0;
            {
                size_t i = 0;
                while (i < nl[k] && num[k][i] == '0') {
                    i++;
                }
                one = nl[k] - i == 1 && num[k][i] == '1';
            }
            if (!one && strcmp(u, "pence") != 0) {
                uint32_t us[MAXW];
                char plural[32];
                snprintf(plural, sizeof plural, "%ss", u);
                size_t un = decode(plural, us, MAXW);
                num_push(&o, stem_s(r, us, un, NULL, CK_MISAKI_NO_STRESS, NULL));
            } else {
                num_push(&o, lookup_ascii(r, u, NULL, CK_MISAKI_NO_STRESS, NULL));
            }
        }
    } else {
        ck_strbuf b = {0};
        int ok = 0;
        if (digits_only) {
            ok = ck_num_words(s, len, CK_NUM_CARDINAL, &b) == 0;
        } else if (dots == 0) {
            ok = ck_num_words(nocomma, nc, ordinal ? CK_NUM_ORDINAL : CK_NUM_CARDINAL, &b) == 0;
        } else if (nocomma[0] == '.') {
            ck_strbuf_puts(&b, "point");
            for (size_t i = 1; i < nc; i++) {
                ck_strbuf_puts(&b, " ");
                ck_num_words(nocomma + i, 1, CK_NUM_CARDINAL, &b);
            }
            ok = 1;
        } else {
            ok = ck_num_words_float(nocomma, nc, &b) == 0;
        }
        char *t = ck_strbuf_take(&b);
        if (ok && t != NULL) {
            extend_words(&o, t, 1);
        }
        free(t);
    }
    if (o.n == 0) {
        return NONE;
    }
    ck_strbuf b = {0};
    int rating = 5;
    for (size_t i = 0; i < o.n; i++) {
        if (i > 0) {
            ck_strbuf_puts(&b, " ");
        }
        if (o.parts[i].ps == NULL) {
            ck_strbuf_free(&b);
            return NONE;
        }
        ck_strbuf_puts(&b, o.parts[i].ps);
        rating = o.parts[i].rating < rating ? o.parts[i].rating : rating;
    }
    char *t = ck_strbuf_take(&b);
    const char *ps = t != NULL ? astrdup(r->a, t) : NULL;
    free(t);
    if (strcmp(suffix, "s") == 0 || strcmp(suffix, "'s") == 0) {
        ps = suffix_s(r, ps);
    } else if (strcmp(suffix, "ed") == 0 || strcmp(suffix, "'d") == 0) {
        ps = suffix_ed(r, ps);
    } else if (strcmp(suffix, "ing") == 0) {
        ps = suffix_ing(r, ps);
    }
    return (pr){ps, rating};
}

static const char *append_currency(run *r, const char *ps, uint32_t currency)
{
    const char *u = currency_unit(currency, 0);
    if (u == NULL) {
        return ps;
    }
    uint32_t us[32];
    char plural[32];
    snprintf(plural, sizeof plural, "%ss", u);
    size_t un = decode(plural, us, 32);
    pr p = stem_s(r, us, un, NULL, CK_MISAKI_NO_STRESS, NULL);
    return p.ps != NULL ? acat(r->a, ps, " ", p.ps) : ps;
}

/* Lexicon.__call__ (en.py:478-495) */
static pr lexicon_call(run *r, const tok *tk, const context *ctx)
{
    uint32_t raw[MAXW], w[MAXW];
    size_t n = decode(tk->alias != NULL ? tk->alias : tk->text, raw, MAXW);
    for (size_t i = 0; i < n; i++) {
        if (raw[i] == 0x2018 || raw[i] == 0x2019) {
            raw[i] = '\'';
        }
    }
    n = ck_cp_normalize(raw, n, w, MAXW - 1);
    if (n == 0) {
        return NONE;
    }
    double stress = w_is_lower(w, n) ? CK_MISAKI_NO_STRESS : w_is_upper(w, n) ? 2 : 0.5;
    pr p = get_word(r, w, n, tk->tag, stress, ctx);
    if (p.ps != NULL) {
        return (pr){apply_stress(r->a, append_currency(r, p.ps, tk->currency), tk->stress),
                    p.rating};
    }
    if (is_number(w, n, tk->is_head)) {
        p = get_number(r, w, n, tk->currency, tk->is_head, tk->flags);
        return (pr){apply_stress(r->a, p.ps, tk->stress), p.rating};
    }
    return NONE;
}

/* ---- the espeak fallback (espeak.py:13-60) ---- */

typedef struct {
    const char *from, *to;
} e2m;

/* E2M sorted by key length, longest first (dict order within one length). */
static const e2m k_e2m[] = {
    {"ʔˌn\xCC\xA9", "ʔn"}, {"ʔn\xCC\xA9", "ʔn"}, {"a^ɪ", "I"}, {"a^ʊ", "W"}, {"d^ʒ", "ʤ"},
    {"e^ɪ", "A"}, {"t^ʃ", "ʧ"}, {"ɔ^ɪ", "Y"}, {"ə^l", "ᵊl"}, {"ʲo", "jo"}, {"ʲə", "jə"},
    {"e", "A"}, {"ʲ", ""}, {"ɚ", "əɹ"}, {"r", "ɹ"}, {"x", "k"}, {"ç", "k"}, {"ɐ", "ə"},
    {"ɬ", "l"}, {"\xCC\x83", ""},
};
static const e2m k_gb[] = {{"e^ə", "ɛː"}, {"iə", "ɪə"}, {"ə^ʊ", "Q"}};
static const e2m k_us[] = {{"o^ʊ", "O"}, {"ɜːɹ", "ɜɹ"}, {"ɜː", "ɜɹ"}, {"ɪə", "iə"}, {"ː", ""}};
static const e2m k_last[] = {{"o", "ɔ"}, {"ɾ", "T"}, {"ʔ", "t"}, {"^", ""}};

static char *replace_all(char *s, const char *from, const char *to)
{
    if (s == NULL || strstr(s, from) == NULL) {
        return s;
    }
    ck_strbuf b = {0};
    size_t fl = strlen(from);
    const char *p = s, *hit;
    while ((hit = strstr(p, from)) != NULL) {
        ck_strbuf_append(&b, p, (size_t)(hit - p));
        ck_strbuf_puts(&b, to);
        p = hit + fl;
    }
    ck_strbuf_puts(&b, p);
    free(s);
    return ck_strbuf_take(&b);
}

int ck_misaki_espeak_rewrite(const char *raw, int british, char **out, ck_error *err)
{
    if (raw == NULL || out == NULL) {
        return ck_fail(err, CK_E_ARG, "misaki rewrite: null argument");
    }
    while (*raw == ' ' || *raw == '\t' || *raw == '\n') {
        raw++;
    }
    char *s = strdup(raw);
    if (s != NULL) {
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n')) {
            s[--n] = '\0';
        }
    }
    for (size_t i = 0; i < sizeof k_e2m / sizeof k_e2m[0]; i++) {
        s = replace_all(s, k_e2m[i].from, k_e2m[i].to);
    }
    if (s != NULL && strstr(s, "\xCC\xA9") != NULL) {  /* (\S)U+0329 -> ᵊ\1, stray U+0329 dropped */
        uint32_t w[4096], o[8192];
        size_t n = decode(s, w, 4096), k = 0;
        for (size_t i = 0; i < n; i++) {
            if (i + 1 < n && w[i + 1] == 0x329 && w[i] != 0x329 && w[i] != ' ' && w[i] != '\t' &&
                w[i] != '\n') {
                o[k++] = 0x1D4A;
                o[k++] = w[i];
                i++;
            } else if (w[i] != 0x329) {
                o[k++] = w[i];
            }
        }
        char *t = malloc(4 * k + 1), *q = t;
        if (t != NULL) {
            for (size_t i = 0; i < k; i++) {
                q += ck_utf8_encode(o[i], q);
            }
            *q = '\0';
        }
        free(s);
        s = t;
    }
    const e2m *v = british ? k_gb : k_us;
    size_t nv = british ? sizeof k_gb / sizeof k_gb[0] : sizeof k_us / sizeof k_us[0];
    for (size_t i = 0; i < nv; i++) {
        s = replace_all(s, v[i].from, v[i].to);
    }
    for (size_t i = 0; i < sizeof k_last / sizeof k_last[0]; i++) {
        s = replace_all(s, k_last[i].from, k_last[i].to);
    }
    if (s == NULL) {
        return ck_fail(err, CK_E_MEMORY, "misaki rewrite: out of memory");
    }
    *out = s;
    return CK_OK;
}

static int fallback(run *r, const char *text, size_t byte, pr *out)
{
    *out = NONE;
    if (r->m->espeak == NULL) {
        return CK_OK;
    }
    char *raw = NULL, *ps = NULL;
    int rc = r->m->espeak(r->m->espeak_ctx, text, &raw, r->err);
    if (rc == CK_OK) {
        rc = ck_misaki_espeak_rewrite(raw, r->m->british, &ps, r->err);
    }
    if (rc == CK_OK) {
        ck_misaki_fallback f = {astrdup(r->a, text), astrdup(r->a, raw), astrdup(r->a, ps), byte};
        ck_strbuf_append(&r->fb, (const char *)&f, sizeof f);
        *out = (pr){f.ps, 2};
    }
    free(raw);
    free(ps);
    return rc;
}

/* ---- tokens: merge, context, resolve (en.py:15-43, 645-677) ---- */

static int text_weight(const char *s)  /* sum(1 if c == c.lower() else 2) */
{
    uint32_t w[4 * MAXW];
    size_t n = decode(s, w, 4 * MAXW);
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        k += ck_cp_lower(w[i]) == w[i] ? 1 : 2;
    }
    return k;
}

/* merge_tokens (en.py:15-43); with_ps 1 gives unk='' phonemes, 0 None. */
static tok merge_tokens(run *r, const tok *t, size_t n, int with_ps)
{
    tok m = t[0];
    ck_strbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        ck_strbuf_puts(&b, t[i].text);
        if (i + 1 < n && t[i].ws) {
            ck_strbuf_puts(&b, " ");
        }
    }
    char *s = ck_strbuf_take(&b);
    m.text = s != NULL ? astrdup(r->a, s) : NULL;
    free(s);
    int best = -1;
    for (size_t i = 0; i < n; i++) {
        int k = text_weight(t[i].text);
        if (k > best) {
            best = k;
            m.tag = t[i].tag;
        }
    }
    m.ws = t[n - 1].ws;
    m.alias = NULL;
    m.ps = NULL;
    /* stress: the one value if all non-None agree */
    double st = CK_MISAKI_NO_STRESS;
    int many = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].stress != CK_MISAKI_NO_STRESS) {
            if (st != CK_MISAKI_NO_STRESS && st != t[i].stress) {
                many = 1;
            }
            st = t[i].stress;
        }
    }
    m.stress = many ? CK_MISAKI_NO_STRESS : st;
    m.currency = 0;
    for (size_t i = 0; i < n; i++) {
        m.currency = t[i].currency > m.currency ? t[i].currency : m.currency;
    }
    char flags[16] = {0};
    size_t nf = 0;
    for (int c = 1; c < 128 && nf < sizeof flags - 1; c++) {
        for (size_t i = 0; i < n; i++) {
            if (strchr(t[i].flags, c) != NULL) {
                flags[nf++] = (char)c;
                break;
            }
        }
    }
    memcpy(m.flags, flags, sizeof flags);
    int rating = 99;
    for (size_t i = 0; i < n; i++) {
        if (t[i].rating == 0) {
            rating = 0;
            break;
        }
        rating = t[i].rating < rating ? t[i].rating : rating;
    }
    m.rating = rating == 99 ? 0 : rating;
    if (with_ps) {
        ck_strbuf p = {0};
        for (size_t i = 0; i < n; i++) {
            if (t[i].prespace && p.len > 0 && p.data[p.len - 1] != ' ' && t[i].ps != NULL &&
                t[i].ps[0] != '\0') {
                ck_strbuf_puts(&p, " ");
            }
            ck_strbuf_puts(&p, t[i].ps != NULL ? t[i].ps : "");
        }
        char *ps = ck_strbuf_take(&p);
        m.ps = ps != NULL ? astrdup(r->a, ps) : NULL;
        free(ps);
    }
    return m;
}

static context token_context(context ctx, const char *ps, const tok *t)
{
    if (ps != NULL) {
        uint32_t w[4 * MAXW];
        size_t n = decode(ps, w, 4 * MAXW);
        for (size_t i = 0; i < n; i++) {
            int v = in_set(w[i], VOWELS), c = in_set(w[i], CONSONANTS),
                p = in_set(w[i], NON_QUOTE_PUNCTS);
            if (v || c || p) {
                ctx.fv = p ? -1 : v;
                break;
            }
        }
    }
    ctx.future_to = strcmp(t->text, "to") == 0 || strcmp(t->text, "To") == 0 ||
                    (strcmp(t->text, "TO") == 0 && (tag_is(t->tag, "TO") || tag_is(t->tag, "IN")));
    return ctx;
}

static int all_junk(const char *s)
{
    uint32_t w[4 * MAXW];
    size_t n = decode(s, w, 4 * MAXW);
    for (size_t i = 0; i < n; i++) {
        if (!in_set(w[i], SUBTOKEN_JUNKS)) {
            return 0;
        }
    }
    return 1;
}

static void resolve_tokens(run *r, tok *t, size_t n)
{
    ck_strbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        ck_strbuf_puts(&b, t[i].text);
        if (i + 1 < n && t[i].ws) {
            ck_strbuf_puts(&b, " ");
        }
    }
    char *text = ck_strbuf_take(&b);
    int prespace = 0, classes = 0;
    if (text != NULL) {
        uint32_t w[4 * MAXW];
        size_t k = decode(text, w, 4 * MAXW);
        for (size_t i = 0; i < k; i++) {
            prespace |= w[i] == ' ' || w[i] == '/';
            if (!in_set(w[i], SUBTOKEN_JUNKS)) {
                classes |= ck_cp_isalpha(w[i]) ? 1 : (w[i] >= '0' && w[i] <= '9') ? 2 : 4;
            }
        }
        free(text);
    }
    prespace |= classes != 1 && classes != 2 && classes != 4 && classes != 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].ps == NULL) {
            if (i == n - 1 && cp_len(t[i].text) == 1 && strstr(NON_QUOTE_PUNCTS, t[i].text)) {
                t[i].ps = t[i].text;
                t[i].rating = 3;
            } else if (all_junk(t[i].text)) {
                t[i].ps = "";
                t[i].rating = 3;
            }
        } else if (i > 0) {
            t[i].prespace = prespace;
        }
    }
    if (prespace) {
        return;
    }
    size_t idx[MAXW], m = 0;
    int prim[MAXW], weight[MAXW], sum = 0;
    for (size_t i = 0; i < n && m < MAXW; i++) {
        if (t[i].ps != NULL && t[i].ps[0] != '\0') {
            idx[m] = i;
            prim[m] = has_cp(t[i].ps, PRIMARY);
            weight[m] = stress_weight(t[i].ps);
            sum += prim[m];
            m++;
        }
    }
    if (m == 2 && cp_len(t[idx[0]].text) == 1) {
        t[idx[1]].ps = (char *)apply_stress(r->a, t[idx[1]].ps, -0.5);
        return;
    }
    if (m < 2 || sum <= (int)(m + 1) / 2) {
        return;
    }
    /* sorted by (has primary, weight, index): demote the first m/2 */
    for (size_t i = 1; i < m; i++) {
        size_t x = idx[i];
        int px = prim[i], wx = weight[i];
        size_t j = i;
        while (j > 0 && (prim[j - 1] > px || (prim[j - 1] == px && weight[j - 1] > wx))) {
            idx[j] = idx[j - 1];
            prim[j] = prim[j - 1];
            weight[j] = weight[j - 1];
            j--;
        }
        idx[j] = x;
        prim[j] = px;
        weight[j] = wx;
    }
    for (size_t i = 0; i < m / 2; i++) {
        t[idx[i]].ps = (char *)apply_stress(r->a, t[idx[i]].ps, -0.5);
    }
}

/* ---- subtokenize: misaki's SUBTOKEN_REGEX as a scanner (en.py:57, MISAKI.md 1.3) ---- */

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
static size_t subtokenize(const uint32_t *w, size_t n, size_t *start, size_t *len, size_t cap)
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

/* ---- the run ---- */

static const char *const PUNCT_TAGS[] = {".", ",", "-LRB-", "-RRB-", "``", "\"\"", "''", ":",
                                         "$", "#", "NFP"};

static int is_punct_tag(const char *tag)
{
    for (size_t i = 0; i < sizeof PUNCT_TAGS / sizeof PUNCT_TAGS[0]; i++) {
        if (strcmp(tag, PUNCT_TAGS[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static const char *punct_tag_phonemes(const char *tag)
{
    if (strcmp(tag, "-LRB-") == 0) {
        return "(";
    }
    if (strcmp(tag, "-RRB-") == 0) {
        return ")";
    }
    if (strcmp(tag, "``") == 0) {
        return "“";
    }
    if (strcmp(tag, "\"\"") == 0 || strcmp(tag, "''") == 0) {
        return "”";
    }
    return NULL;
}

/* all(97 <= ord(c.lower()) <= 122): letters a-z only (and True for "") */
static int ascii_letters(const uint32_t *w, size_t n)
{
    for (size_t q = 0; q < n; q++) {
        uint32_t lc = ck_cp_lower(w[q]);
        if (lc < 'a' || lc > 'z') {
            return 0;
        }
    }
    return 1;
}

/* A word: subtokens [first, first + n) of the flat array; list: misaki kept it as a list. */
typedef struct {
    size_t first, n;
    int list;
} item;

int ck_misaki_open(ck_misaki **out, const ck_misaki_options *opt, ck_error *err)
{
    if (out == NULL || opt == NULL || opt->lexicon == NULL) {
        return ck_fail(err, CK_E_ARG, "misaki: null argument");
    }
    *out = NULL;
    if ((opt->british != 0) != ck_lexicon_british(opt->lexicon)) {
        return ck_fail(err, CK_E_ARG, "misaki: the lexicon is %s, the G2P %s",
                       ck_lexicon_british(opt->lexicon) ? "en-gb" : "en-us",
                       opt->british ? "en-gb" : "en-us");
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

/* Kokoro's joining: phonemes + one space per token with whitespace, stripped. */
static char *tokens_to_ps(run *r, const ck_misaki_out *t, size_t n)
{
    ck_strbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        ck_strbuf_puts(&b, t[i].phonemes != NULL ? t[i].phonemes : "");
        if (t[i].whitespace) {
            ck_strbuf_puts(&b, " ");
        }
    }
    char *s = ck_strbuf_take(&b);
    if (s == NULL) {
        return NULL;
    }
    char *p = s;
    while (*p == ' ') {
        p++;
    }
    size_t len = strlen(p);
    while (len > 0 && p[len - 1] == ' ') {
        len--;
    }
    char *out = astrndup(r->a, p, len);
    free(s);
    return out;
}

/* waterfall_last: where to cut tks[0, n) so the rest fits (pipeline.py:184-231). */
static size_t waterfall_last(run *r, const ck_misaki_out *t, size_t n, size_t next_count)
{
    static const char *const falls[] = {"!.?…", ":;", ",—"};
    for (size_t f = 0; f < 3; f++) {
        size_t z = 0;
        int found = 0;
        for (size_t i = n; i-- > 0;) {
            const char *ps = t[i].phonemes != NULL ? t[i].phonemes : "";
            if (cp_len(ps) == 1 && strstr(falls[f], ps) != NULL) {
                z = i;
                found = 1;
                break;
            }
        }
        if (!found) {
            continue;
        }
        z++;
        if (z < n && t[z].phonemes != NULL &&
            (strcmp(t[z].phonemes, ")") == 0 || strcmp(t[z].phonemes, "”") == 0)) {
            z++;
        }
        char *head = tokens_to_ps(r, t, z);
        if (head != NULL && next_count - cp_len(head) <= KOKORO_MAX) {
            return z;
        }
    }
    return n;
}

/* en_tokenize + KPipeline.__call__'s cut: the chunks Kokoro feeds the model. */
static int chunk(run *r)
{
    ck_misaki_result *res = r->res;
    ck_strbuf chunks = {0};
    size_t start = 0, count = 0, pcount = 0;
    const ck_misaki_out *t = res->tokens;
    for (size_t i = 0; i <= res->n_tokens; i++) {
        if (i < res->n_tokens) {
            const char *ps = t[i].phonemes != NULL ? t[i].phonemes : "";
            size_t next_len = cp_len(ps) + (t[i].whitespace ? 1 : 0);
            size_t trimmed = cp_len(ps);  /* len(next_ps.rstrip()): ps has no trailing space */
            while (trimmed > 0 && ps[strlen(ps) - 1] == ' ') {
                trimmed--;
                break;
            }
            size_t next_pcount = pcount + trimmed;
            int lstrip = 0;
            if (next_pcount > KOKORO_MAX) {
                size_t z = start + waterfall_last(r, t + start, i - start, next_pcount);
                char *ps_chunk = tokens_to_ps(r, t + start, z - start);
                ck_strbuf_append(&chunks, (const char *)&ps_chunk, sizeof ps_chunk);
                count++;
                start = z;
                char *rest = tokens_to_ps(r, t + start, i - start);
                pcount = rest != NULL ? cp_len(rest) : 0;
                lstrip = start == i;
            }
            if (lstrip) {
                const char *p = ps;
                size_t lead = 0;
                while (p[lead] == ' ') {
                    lead++;
                }
                next_len -= lead;
            }
            pcount += next_len;
        } else if (start < res->n_tokens) {
            char *ps_chunk = tokens_to_ps(r, t + start, res->n_tokens - start);
            ck_strbuf_append(&chunks, (const char *)&ps_chunk, sizeof ps_chunk);
            count++;
        }
    }
    if (chunks.failed) {
        ck_strbuf_free(&chunks);
        return ck_fail(r->err, CK_E_MEMORY, "misaki: cannot allocate chunks");
    }
    char **list = (char **)chunks.data;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        if (list[i] == NULL) {
            ck_strbuf_free(&chunks);
            return ck_fail(r->err, CK_E_MEMORY, "misaki: cannot allocate chunks");
        }
        if (list[i][0] == '\0') {
            continue;
        }
        if (cp_len(list[i]) > KOKORO_MAX) {  /* ps[:510] */
            size_t pos = 0, k = 0, len = strlen(list[i]);
            uint32_t c = 0;
            while (k < KOKORO_MAX && pos < len && ck_utf8_next(list[i], len, &pos, &c) == CK_OK) {
                k++;
            }
            list[i][pos] = '\0';
        }
        list[kept++] = list[i];
    }
    res->n_chunks = kept;
    res->chunks = amalloc(r->a, (kept + 1) * sizeof *res->chunks);
    if (res->chunks == NULL) {
        ck_strbuf_free(&chunks);
        return ck_fail(r->err, CK_E_MEMORY, "misaki: cannot allocate chunks");
    }
    if (kept > 0) { /* list is NULL when no chunk was appended: memcpy wants a pointer even for 0 */
        memcpy(res->chunks, list, kept * sizeof *list);
    }
    ck_strbuf_free(&chunks);
    return CK_OK;
}

/* retokenize (en.py:601-643): subtokens of every token into sub[], words into items[]. */
static int retokenize(run *r, const tok *in, size_t n, tok **sub_out, size_t *n_sub,
                      item **items_out, size_t *n_items)
{
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        cap += strlen(in[i].text) + 1;
    }
    tok *sub = amalloc(r->a, cap * sizeof *sub);
    item *items = amalloc(r->a, cap * sizeof *items);
    if (sub == NULL || items == NULL) {
        return ck_fail(r->err, CK_E_MEMORY, "misaki: cannot allocate subtokens");
    }
    size_t ns = 0, ni = 0;
    uint32_t currency = 0;
    for (size_t i = 0; i < n; i++) {
        const tok *token = &in[i];
        size_t first = ns;
        if (token->alias == NULL && token->ps == NULL) {
            size_t cap_w = strlen(token->text) + 1;  /* code points <= bytes */
            uint32_t *w = amalloc(r->a, cap_w * sizeof *w);
            size_t *st = amalloc(r->a, cap_w * sizeof *st), *ln = amalloc(r->a, cap_w * sizeof *ln);
            if (w == NULL || st == NULL || ln == NULL) {
                return ck_fail(r->err, CK_E_MEMORY, "misaki: cannot allocate subtokens");
            }
            size_t wn = decode(token->text, w, cap_w);
            size_t k = subtokenize(w, wn, st, ln, cap_w);
            size_t byte = token->byte;
            for (size_t j = 0, cpi = 0; j < k; j++) {
                tok t = *token;
                for (; cpi < st[j]; cpi++) {
                    char u[4];
                    byte += ck_utf8_encode(w[cpi], u);
                }
                t.text = encode(r->a, w + st[j], ln[j]);
                t.ws = 0;
                t.ps = NULL;
                t.rating = 0;
                t.is_head = 1;
                t.alias = NULL;
                t.currency = 0;
                t.prespace = 0;
                t.byte = byte;
                sub[ns++] = t;
            }
        } else {
            sub[ns++] = *token;
        }
        if (ns == first) {
            continue;  /* nothing to subtokenize (misaki would fail here) */
        }
        sub[ns - 1].ws = token->ws;
        for (size_t j = first; j < ns; j++) {
            tok *tk = &sub[j];
            size_t jj = j - first, cnt = ns - first;
            uint32_t w[MAXW];
            size_t wn = decode(tk->text, w, MAXW);
            if (tk->alias != NULL || tk->ps != NULL) {
                /* kept */
            } else if (strcmp(tk->tag, "$") == 0 && wn == 1 && currency_unit(w[0], 0) != NULL) {
                currency = w[0];
                tk->ps = "";
                tk->rating = 4;
            } else if (strcmp(tk->tag, ":") == 0 && (strcmp(tk->text, "-") == 0 ||
                                                     strcmp(tk->text, "–") == 0)) {
                tk->ps = "—";
                tk->rating = 3;
            } else if (is_punct_tag(tk->tag) && !ascii_letters(w, wn)) {
                const char *p = punct_tag_phonemes(tk->tag);
                if (p == NULL) {
                    uint32_t o[MAXW];
                    size_t k = 0;
                    for (size_t q = 0; q < wn; q++) {
                        if (in_set(w[q], PUNCTS)) {
                            o[k++] = w[q];
                        }
                    }
                    p = encode(r->a, o, k);
                }
                tk->ps = (char *)p;
                tk->rating = 4;
            } else if (currency != 0) {
                if (strcmp(tk->tag, "CD") != 0) {
                    currency = 0;
                } else if (jj + 1 < cnt ? strcmp(sub[j + 1].tag, "CD") != 0
                                        : i + 1 == n || strcmp(in[i + 1].tag, "CD") != 0) {
                    /* the last CD of the run: the next token's tag is consulted too */
                    tk->currency = currency;
                }
            } else if (jj > 0 && jj + 1 < cnt && strcmp(tk->text, "2") == 0) {
                size_t st;
                uint32_t before = last_cp(sub[j - 1].text, &st), after = 0;
                size_t pos = 0, len = strlen(sub[j + 1].text);
                ck_utf8_next(sub[j + 1].text, len, &pos, &after);
                if (ck_cp_isalpha(before) && ck_cp_isalpha(after)) {
                    tk->alias = "to";
                }
            }
            if (tk->alias != NULL || tk->ps != NULL) {
                items[ni++] = (item){j, 1, 0};
            } else if (ni > 0 && items[ni - 1].list &&
                       !sub[items[ni - 1].first + items[ni - 1].n - 1].ws &&
                       items[ni - 1].first + items[ni - 1].n == j) {
                tk->is_head = 0;
                items[ni - 1].n++;
            } else {
                items[ni++] = (item){j, 1, !tk->ws};
            }
        }
    }
    *sub_out = sub;
    *n_sub = ns;
    *items_out = items;
    *n_items = ni;
    return CK_OK;
}

/* The right-to-left loop over one group w (en.py:694-731). */
static int resolve_group(run *r, tok *w, size_t n, context *ctx)
{
    size_t left = 0, right = n;
    int should_fallback = 0;
    while (left < right) {
        int blocked = 0;
        for (size_t i = left; i < right; i++) {
            blocked |= w[i].alias != NULL || w[i].ps != NULL;
        }
        pr p = NONE;
        tok merged;
        if (!blocked) {
            merged = merge_tokens(r, w + left, right - left, 0);
            p = lexicon_call(r, &merged, ctx);
        }
        if (p.ps != NULL) {
            w[left].ps = (char *)p.ps;
            w[left].rating = p.rating;
            for (size_t i = left + 1; i < right; i++) {
                w[i].ps = "";
                w[i].rating = p.rating;
            }
            *ctx = token_context(*ctx, p.ps, &merged);
            right = left;
            left = 0;
        } else if (left + 1 < right) {
            left++;
        } else {
            right--;
            tok *tk = &w[right];
            if (tk->ps == NULL) {
                if (all_junk(tk->text)) {
                    tk->ps = "";
                    tk->rating = 3;
                } else {
                    should_fallback = 1;
                    break;
                }
            }
            left = 0;
        }
    }
    if (should_fallback) {
        tok merged = merge_tokens(r, w, n, 0);
        pr p;
        int rc = fallback(r, merged.text, w[0].byte, &p);
        if (rc != CK_OK) {
            return rc;
        }
        w[0].ps = (char *)p.ps;
        w[0].rating = p.rating;
        for (size_t j = 1; j < n; j++) {
            w[j].ps = "";
            w[j].rating = p.rating;
        }
        /* misaki does not update the context after a group fallback */
    } else {
        resolve_tokens(r, w, n);
    }
    return CK_OK;
}

int ck_misaki_run(const ck_misaki *m, const ck_misaki_token *tokens, size_t n,
                  ck_misaki_result *res, ck_error *err)
{
    if (res == NULL) {
        return ck_fail(err, CK_E_ARG, "misaki: null result");
    }
    memset(res, 0, sizeof *res);
    if (m == NULL || (tokens == NULL && n > 0)) {
        return ck_fail(err, CK_E_ARG, "misaki: null argument");
    }
    run r = {.m = m, .a = &res->arena, .res = res, .err = err};
    tok *in = amalloc(r.a, (n + 1) * sizeof *in);
    if (in == NULL) {
        return ck_fail(err, CK_E_MEMORY, "misaki: cannot allocate %zu tokens", n);
    }
    /* tokens with features, then fold_left: a non-head token joins the previous one */
    size_t nin = 0, byte = 0;
    for (size_t i = 0; i < n; i++) {
        const ck_misaki_token *t = &tokens[i];
        if (t->text == NULL || t->text[0] == '\0' || t->tag == NULL) {
            return ck_fail(err, CK_E_ARG, "misaki: token %zu: empty text or null tag", i);
        }
        tok k = {0};
        k.text = astrdup(r.a, t->text);
        k.tag = t->tag;
        k.ws = t->whitespace != 0;
        k.ps = t->phonemes != NULL ? astrdup(r.a, t->phonemes) : NULL;
        k.rating = t->phonemes != NULL ? 5 : 0;
        k.is_head = t->phonemes != NULL ? t->is_head : 1;
        k.stress = t->stress;
        snprintf(k.flags, sizeof k.flags, "%s", t->num_flags != NULL ? t->num_flags : "");
        k.byte = byte;
        byte += strlen(t->text) + (k.ws ? 1 : 0);
        if (nin > 0 && !k.is_head) {
            tok pair[2] = {in[nin - 1], k};
            in[nin - 1] = merge_tokens(&r, pair, 2, 1);
            in[nin - 1].rating = in[nin - 1].rating ? in[nin - 1].rating : 5;
        } else {
            in[nin++] = k;
        }
    }
    tok *sub = NULL;
    item *items = NULL;
    size_t ns = 0, ni = 0;
    int rc = retokenize(&r, in, nin, &sub, &ns, &items, &ni);
    context ctx = {-1, 0};
    for (size_t k = ni; rc == CK_OK && k-- > 0;) {
        item *it = &items[k];
        tok *w = &sub[it->first];
        if (it->n == 1) {
            if (w->ps == NULL) {
                pr p = lexicon_call(&r, w, &ctx);
                w->ps = (char *)p.ps;
                w->rating = p.rating;
            }
            if (w->ps == NULL) {
                pr p;
                rc = fallback(&r, w->text, w->byte, &p);
                w->ps = (char *)p.ps;
                w->rating = p.rating;
            }
            ctx = token_context(ctx, w->ps, w);
            continue;
        }
        rc = resolve_group(&r, w, it->n, &ctx);
    }
    if (rc != CK_OK) {
        ck_strbuf_free(&r.fb);
        return rc;
    }
    /* merge groups, flap/glottal pass, Kokoro strings */
    res->tokens = amalloc(r.a, (ni + 1) * sizeof *res->tokens);
    if (res->tokens == NULL) {
        ck_strbuf_free(&r.fb);
        return ck_fail(err, CK_E_MEMORY, "misaki: cannot allocate output tokens");
    }
    ck_strbuf all = {0};
    for (size_t k = 0; k < ni; k++) {
        tok t = items[k].n == 1 && !(items[k].list && items[k].n > 1)
                    ? sub[items[k].first]
                    : merge_tokens(&r, sub + items[k].first, items[k].n, 1);
        if (items[k].n > 1) {
            t.byte = sub[items[k].first].byte;
        }
        char *ps = t.ps;
        if (ps != NULL && ps[0] != '\0') {
            ps = replace_all(strdup(ps), "ɾ", "T");
            ps = replace_all(ps, "ʔ", "t");
            char *kept = ps != NULL ? astrdup(r.a, ps) : NULL;
            free(ps);
            ps = kept;
        }
        res->tokens[k] = (ck_misaki_out){t.text, t.ws, t.tag, ps, t.rating, t.byte};
        res->unresolved += ps == NULL;
        ck_strbuf_puts(&all, ps != NULL ? ps : "");
        if (t.ws) {
            ck_strbuf_puts(&all, " ");
        }
    }
    res->n_tokens = ni;
    char *s = ck_strbuf_take(&all);
    res->misaki_ps = s != NULL ? astrdup(r.a, s) : NULL;
    free(s);
    res->kokoro_ps = tokens_to_ps(&r, res->tokens, ni);
    res->n_fallbacks = r.fb.len / sizeof(ck_misaki_fallback);
    if (res->n_fallbacks > 0) {
        res->fallbacks = amalloc(r.a, r.fb.len);
        if (res->fallbacks != NULL) {
            memcpy(res->fallbacks, r.fb.data, r.fb.len);
        }
    }
    ck_strbuf_free(&r.fb);
    rc = chunk(&r);
    if (rc == CK_OK && (res->misaki_ps == NULL || res->kokoro_ps == NULL ||
                        (res->n_fallbacks > 0 && res->fallbacks == NULL) ||
                        res->arena->failed)) {
        rc = ck_fail(err, CK_E_MEMORY, "misaki: out of memory");
    }
    return rc;
}

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
    for (size_t i = 0; i < len && nl < 256;) {
        if (text[i] != '[') {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < len && text[j] != ']') {
            j++;
        }
        if (j == i + 1 || j >= len || j + 1 >= len || text[j + 1] != '(') {
            i++;
            continue;
        }
        size_t k = j + 2;
        while (k < len && text[k] != ')') {
            k++;
        }
        if (k >= len) {
            i++;
            continue;
        }
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
