/* misaki_tokens.c - misaki's token helpers (en.py:15-43, 645-677): merge_tokens, the TokenContext
 * update and resolve_tokens (prespace, stress balancing); must not look words up. */
#include "misaki_internal.h"

/* ---- tokens: merge, context, resolve (en.py:15-43, 645-677) ---- */

static int text_weight(const char *s)  /* sum(1 if c == c.lower() else 2) */
{
    uint32_t w[4 * MAXW];
    size_t n = ck_mk_decode(s, w, 4 * MAXW);
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        k += ck_cp_lower(w[i]) == w[i] ? 1 : 2;
    }
    return k;
}

/* merge_tokens (en.py:15-43); with_ps 1 gives unk='' phonemes, 0 None. */
tok ck_mk_merge_tokens(run *r, const tok *t, size_t n, int with_ps)
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
    m.text = s != NULL ? ck_mk_astrdup(r->a, s) : NULL;
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
        m.ps = ps != NULL ? ck_mk_astrdup(r->a, ps) : NULL;
        free(ps);
    }
    return m;
}

context ck_mk_token_context(context ctx, const char *ps, const tok *t)
{
    if (ps != NULL) {
        uint32_t w[4 * MAXW];
        size_t n = ck_mk_decode(ps, w, 4 * MAXW);
        for (size_t i = 0; i < n; i++) {
            int v = ck_mk_in_set(w[i], VOWELS), c = ck_mk_in_set(w[i], CONSONANTS),
                p = ck_mk_in_set(w[i], NON_QUOTE_PUNCTS);
            if (v || c || p) {
                ctx.fv = p ? -1 : v;
                break;
            }
        }
    }
    ctx.future_to = strcmp(t->text, "to") == 0 || strcmp(t->text, "To") == 0 ||
                    (strcmp(t->text, "TO") == 0 &&
                     (ck_mk_tag_is(t->tag, "TO") || ck_mk_tag_is(t->tag, "IN")));
    return ctx;
}

int ck_mk_all_junk(const char *s)
{
    uint32_t w[4 * MAXW];
    size_t n = ck_mk_decode(s, w, 4 * MAXW);
    for (size_t i = 0; i < n; i++) {
        if (!ck_mk_in_set(w[i], SUBTOKEN_JUNKS)) {
            return 0;
        }
    }
    return 1;
}

void ck_mk_resolve_tokens(run *r, tok *t, size_t n)
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
        size_t k = ck_mk_decode(text, w, 4 * MAXW);
        for (size_t i = 0; i < k; i++) {
            prespace |= w[i] == ' ' || w[i] == '/';
            if (!ck_mk_in_set(w[i], SUBTOKEN_JUNKS)) {
                classes |= ck_cp_isalpha(w[i]) ? 1 : (w[i] >= '0' && w[i] <= '9') ? 2 : 4;
            }
        }
        free(text);
    }
    prespace |= classes != 1 && classes != 2 && classes != 4 && classes != 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].ps == NULL) {
            if (i == n - 1 && ck_mk_cp_len(t[i].text) == 1 && strstr(NON_QUOTE_PUNCTS, t[i].text)) {
                t[i].ps = t[i].text;
                t[i].rating = 3;
            } else if (ck_mk_all_junk(t[i].text)) {
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
            prim[m] = ck_mk_has_cp(t[i].ps, PRIMARY);
            weight[m] = ck_mk_stress_weight(t[i].ps);
            sum += prim[m];
            m++;
        }
    }
    if (m == 2 && ck_mk_cp_len(t[idx[0]].text) == 1) {
        t[idx[1]].ps = (char *)ck_mk_apply_stress(r->a, t[idx[1]].ps, -0.5);
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
        t[idx[i]].ps = (char *)ck_mk_apply_stress(r->a, t[idx[i]].ps, -0.5);
    }
}
