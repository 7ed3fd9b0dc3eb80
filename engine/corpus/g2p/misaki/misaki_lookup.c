/* misaki_lookup.c - misaki's word lookup (en.py:167-361): gold and silver access, proper nouns,
 * the -s/-ed/-ing suffix rules, special cases and get_word; must not handle numbers or tokens. */
#include "misaki_internal.h"

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
    const char *ps = ck_mk_apply_stress(r->a, ck_mk_astrdup(r->a, joined), 0);
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
    char *out = ck_mk_astrdup(r->a, ps);
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
    if (ck_mk_w_is_upper(w, n) && !in_gold(r->m, w, n)) {
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
    if (ps == NULL || (is_nnp && !ck_mk_has_cp(ps, PRIMARY))) {
        pr s = get_nnp(r, w, n);
        if (s.ps != NULL) {
            return s;
        }
        if (ps == NULL) {
            return NONE;
        }
    }
    return (pr){ck_mk_apply_stress(r->a, ps, stress), rating};
}

pr ck_mk_lookup_ascii(run *r, const char *word, const char *tag, double stress,
                      const context *ctx)
{
    uint32_t w[MAXW];
    size_t n = ck_mk_decode(word, w, MAXW);
    return lookup(r, w, n, tag, stress, ctx);
}

/* is_known (en.py:219-228) */
static int is_known(run *r, const uint32_t *w, size_t n)
{
    if (in_gold(r->m, w, n) || is_symbol(w, n) || in_silver(r->m, w, n)) {
        return 1;
    }
    if (!ck_mk_w_is_alpha(w, n) || !ck_mk_w_lexicon_ords(w, n)) {
        return 0;
    }
    if (n == 1) {
        return 1;
    }
    if (ck_mk_w_is_upper(w, n)) {
        uint32_t l[MAXW];
        for (size_t i = 0; i < n; i++) {
            l[i] = ck_cp_lower(w[i]);
        }
        if (in_gold(r->m, l, n)) {
            return 1;
        }
    }
    return ck_mk_w_is_upper(w + 1, n - 1);
}

/* ---- suffix rules (en.py:250-329) ---- */

const char *ck_mk_suffix_s(run *r, const char *stem)
{
    size_t st;
    if (stem == NULL || *stem == '\0') {
        return NULL;
    }
    uint32_t c = ck_mk_last_cp(stem, &st);
    if (ck_mk_in_set(c, "ptkfθ")) {
        return ck_mk_acat(r->a, stem, "s", NULL);
    }
    if (ck_mk_in_set(c, "szʃʒʧʤ")) {
        return ck_mk_acat(r->a, stem, r->m->british ? "ɪ" : "ᵻ", "z");
    }
    return ck_mk_acat(r->a, stem, "z", NULL);
}

const char *ck_mk_suffix_ed(run *r, const char *stem)
{
    size_t st;
    if (stem == NULL || *stem == '\0') {
        return NULL;
    }
    uint32_t c = ck_mk_last_cp(stem, &st);
    if (ck_mk_in_set(c, "pkfθʃsʧ")) {
        return ck_mk_acat(r->a, stem, "t", NULL);
    }
    if (c == 'd') {
        return ck_mk_acat(r->a, stem, r->m->british ? "ɪ" : "ᵻ", "d");
    }
    if (c != 't') {
        return ck_mk_acat(r->a, stem, "d", NULL);
    }
    if (r->m->british || ck_mk_cp_len(stem) < 2) {
        return ck_mk_acat(r->a, stem, "ɪd", NULL);
    }
    char *head = ck_mk_astrndup(r->a, stem, st);
    size_t st2;
    if (head != NULL && ck_mk_in_set(ck_mk_last_cp(head, &st2), US_TAUS)) {
        return ck_mk_acat(r->a, head, "ɾᵻd", NULL);
    }
    return ck_mk_acat(r->a, stem, "ᵻd", NULL);
}

const char *ck_mk_suffix_ing(run *r, const char *stem)
{
    size_t st;
    if (stem == NULL || *stem == '\0') {
        return NULL;
    }
    uint32_t c = ck_mk_last_cp(stem, &st);
    if (r->m->british) {
        if (c == 0x259 /* ə */ || c == 0x2D0 /* ː */) {
            return NULL;
        }
    } else if (ck_mk_cp_len(stem) > 1 && c == 't') {
        char *head = ck_mk_astrndup(r->a, stem, st);
        size_t st2;
        if (head != NULL && ck_mk_in_set(ck_mk_last_cp(head, &st2), US_TAUS)) {
            return ck_mk_acat(r->a, head, "ɾɪŋ", NULL);
        }
    }
    return ck_mk_acat(r->a, stem, "ɪŋ", NULL);
}

pr ck_mk_stem_s(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                const context *ctx)
{
    uint32_t s[MAXW];
    size_t sn = 0;
    if (n < 3 || w[n - 1] != 's') {
        return NONE;
    }
    memcpy(s, w, n * sizeof *w);
    if (!ck_mk_w_ends(w, n, "ss") && is_known(r, w, n - 1)) {
        sn = n - 1;
    } else if ((ck_mk_w_ends(w, n, "'s") ||
                (n > 4 && ck_mk_w_ends(w, n, "es") && !ck_mk_w_ends(w, n, "ies"))) &&
               is_known(r, w, n - 2)) {
        sn = n - 2;
    } else if (n > 4 && ck_mk_w_ends(w, n, "ies")) {
        s[n - 3] = 'y';
        if (!is_known(r, s, n - 2)) {
            return NONE;
        }
        sn = n - 2;
    } else {
        return NONE;
    }
    pr p = lookup(r, s, sn, tag, stress, ctx);
    return (pr){ck_mk_suffix_s(r, p.ps), p.rating};
}

static pr stem_ed(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                  const context *ctx)
{
    size_t sn = 0;
    if (n < 4 || w[n - 1] != 'd') {
        return NONE;
    }
    if (!ck_mk_w_ends(w, n, "dd") && is_known(r, w, n - 1)) {
        sn = n - 1;
    } else if (n > 4 && ck_mk_w_ends(w, n, "ed") && !ck_mk_w_ends(w, n, "eed") &&
               is_known(r, w, n - 2)) {
        sn = n - 2;
    } else {
        return NONE;
    }
    pr p = lookup(r, w, sn, tag, stress, ctx);
    return (pr){ck_mk_suffix_ed(r, p.ps), p.rating};
}

static int doubled_ing(const uint32_t *w, size_t n)  /* ([bcdgklmnprstvxz])\1ing$|cking$ */
{
    if (n >= 5 && w[n - 4] == w[n - 5] && w[n - 4] < 0x80 &&
        strchr("bcdgklmnprstvxz", (int)w[n - 4]) != NULL) {
        return 1;
    }
    return ck_mk_w_ends(w, n, "cking");
}

static pr stem_ing(run *r, const uint32_t *w, size_t n, const char *tag, double stress,
                   const context *ctx)
{
    uint32_t s[MAXW];
    size_t sn = 0;
    if (n < 5 || !ck_mk_w_ends(w, n, "ing")) {
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
    return (pr){ck_mk_suffix_ing(r, p.ps), p.rating};
}

/* ---- special cases (en.py:167-203) ---- */

int ck_mk_tag_is(const char *tag, const char *t)
{
    return tag != NULL && strcmp(tag, t) == 0;
}

static int any_of(const uint32_t *w, size_t n, const char *a, const char *b, const char *c)
{
    return ck_mk_w_eq(w, n, a) || (b != NULL && ck_mk_w_eq(w, n, b)) ||
           (c != NULL && ck_mk_w_eq(w, n, c));
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
    if (ck_mk_tag_is(tag, "ADD") && n == 1 && (w[0] == '.' || w[0] == '/')) {
        return ck_mk_lookup_ascii(r, w[0] == '.' ? "dot" : "slash", NULL, -0.5, ctx);
    }
    if (is_symbol(w, n)) {
        return ck_mk_lookup_ascii(r, symbol_word(w[0]), NULL, CK_MISAKI_NO_STRESS, ctx);
    }
    if (dotted_abbreviation(w, n)) {
        return get_nnp(r, w, n);
    }
    if (any_of(w, n, "a", "A", NULL)) {
        return (pr){ck_mk_tag_is(tag, "DT") ? "ɐ" : "ˈA", 4};
    }
    if (any_of(w, n, "am", "Am", "AM")) {
        if (tag != NULL && strncmp(tag, "NN", 2) == 0) {
            return get_nnp(r, w, n);
        }
        if (ctx->fv < 0 || !ck_mk_w_eq(w, n, "am") ||
            (stress != CK_MISAKI_NO_STRESS && stress > 0)) {
            return (pr){gold_str(r->m, "am", NULL), 4};
        }
        return (pr){"ɐm", 4};
    }
    if (any_of(w, n, "an", "An", "AN")) {
        if (ck_mk_w_eq(w, n, "AN") && tag != NULL && strncmp(tag, "NN", 2) == 0) {
            return get_nnp(r, w, n);
        }
        return (pr){"ɐn", 4};
    }
    if (ck_mk_w_eq(w, n, "I") && ck_mk_tag_is(tag, "PRP")) {
        return (pr){"ˌI", 4};
    }
    if (any_of(w, n, "by", "By", "BY") && ck_mk_tag_is(parent_tag(tag), "ADV")) {
        return (pr){"bˈI", 4};
    }
    if (any_of(w, n, "to", "To", NULL) || (ck_mk_w_eq(w, n, "TO") && (ck_mk_tag_is(tag, "TO") ||
                                                                 ck_mk_tag_is(tag, "IN")))) {
        return (pr){ctx->fv < 0 ? gold_str(r->m, "to", NULL) : ctx->fv ? "tʊ" : "tə", 4};
    }
    if (any_of(w, n, "in", "In", NULL) || (ck_mk_w_eq(w, n, "IN") && !ck_mk_tag_is(tag, "NNP"))) {
        return (pr){ctx->fv < 0 || !ck_mk_tag_is(tag, "IN") ? "ˈɪn" : "ɪn", 4};
    }
    if (any_of(w, n, "the", "The", NULL) || (ck_mk_w_eq(w, n, "THE") && ck_mk_tag_is(tag, "DT"))) {
        return (pr){ctx->fv == 1 ? "ði" : "ðə", 4};
    }
    if (ck_mk_tag_is(tag, "IN") && (n == 2 || (n == 3 && w[2] == '.')) &&
        ck_cp_lower(w[0]) == 'v' && ck_cp_lower(w[1]) == 's') {
        return ck_mk_lookup_ascii(r, "versus", NULL, CK_MISAKI_NO_STRESS, ctx);
    }
    if (any_of(w, n, "used", "Used", "USED")) {
        int vbd = (ck_mk_tag_is(tag, "VBD") || ck_mk_tag_is(tag, "JJ")) && ctx->future_to;
        return (pr){gold_str(r->m, "used", vbd ? "VBD" : "DEFAULT"), 4};
    }
    return NONE;
}

/* ---- get_word (en.py:331-361) ---- */

pr ck_mk_get_word(run *r, const uint32_t *word, size_t n, const char *tag, double stress,
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
    if (n > 1 && ck_mk_w_is_alpha(tmp, na) && !ck_mk_w_is_lower(w, n) &&
        (!ck_mk_tag_is(tag, "NNP") || n > 7) && !in_gold(r->m, w, n) && !in_silver(r->m, w, n) &&
        (ck_mk_w_is_upper(w, n) || ck_mk_w_is_lower(w + 1, n - 1)) &&
        (in_gold(r->m, wl, n) || in_silver(r->m, wl, n) ||
         ck_mk_stem_s(r, wl, n, tag, stress, ctx).ps != NULL ||
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
    pr p = ck_mk_stem_s(r, w, n, tag, stress, ctx);
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
