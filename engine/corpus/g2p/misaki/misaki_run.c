/* misaki_run.c - ck_misaki_run: retokenize, right-to-left resolution with context, merging, the
 * flap/glottal post-pass, Kokoro's joining and 510-symbol chunking (en.py:569-677, Kokoro's
 * en_tokenize); must not parse markdown or read the lexicon directly. */
#include "misaki_internal.h"

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
    char *out = ck_mk_astrndup(r->a, p, len);
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
            if (ck_mk_cp_len(ps) == 1 && strstr(falls[f], ps) != NULL) {
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
        if (head != NULL && next_count - ck_mk_cp_len(head) <= KOKORO_MAX) {
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
            size_t next_len = ck_mk_cp_len(ps) + (t[i].whitespace ? 1 : 0);
            size_t trimmed = ck_mk_cp_len(ps); /* len(next_ps.rstrip()): no trailing space */
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
                pcount = rest != NULL ? ck_mk_cp_len(rest) : 0;
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
        if (ck_mk_cp_len(list[i]) > KOKORO_MAX) {  /* ps[:510] */
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
    res->chunks = ck_mk_amalloc(r->a, (kept + 1) * sizeof *res->chunks);
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
    tok *sub = ck_mk_amalloc(r->a, cap * sizeof *sub);
    item *items = ck_mk_amalloc(r->a, cap * sizeof *items);
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
            uint32_t *w = ck_mk_amalloc(r->a, cap_w * sizeof *w);
            size_t *st = ck_mk_amalloc(r->a, cap_w * sizeof *st);
            size_t *ln = ck_mk_amalloc(r->a, cap_w * sizeof *ln);
            if (w == NULL || st == NULL || ln == NULL) {
                return ck_fail(r->err, CK_E_MEMORY, "misaki: cannot allocate subtokens");
            }
            size_t wn = ck_mk_decode(token->text, w, cap_w);
            size_t k = ck_mk_subtokenize(w, wn, st, ln, cap_w);
            size_t byte = token->byte;
            for (size_t j = 0, cpi = 0; j < k; j++) {
                tok t = *token;
                for (; cpi < st[j]; cpi++) {
                    char u[4];
                    byte += ck_utf8_encode(w[cpi], u);
                }
                t.text = ck_mk_encode(r->a, w + st[j], ln[j]);
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
            size_t wn = ck_mk_decode(tk->text, w, MAXW);
            if (tk->alias != NULL || tk->ps != NULL) {
                /* kept */
            } else if (strcmp(tk->tag, "$") == 0 && wn == 1 &&
                       ck_mk_currency_unit(w[0], 0) != NULL) {
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
                        if (ck_mk_in_set(w[q], PUNCTS)) {
                            o[k++] = w[q];
                        }
                    }
                    p = ck_mk_encode(r->a, o, k);
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
                uint32_t before = ck_mk_last_cp(sub[j - 1].text, &st), after = 0;
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
            merged = ck_mk_merge_tokens(r, w + left, right - left, 0);
            p = ck_mk_lexicon_call(r, &merged, ctx);
        }
        if (p.ps != NULL) {
            w[left].ps = (char *)p.ps;
            w[left].rating = p.rating;
            for (size_t i = left + 1; i < right; i++) {
                w[i].ps = "";
                w[i].rating = p.rating;
            }
            *ctx = ck_mk_token_context(*ctx, p.ps, &merged);
            right = left;
            left = 0;
        } else if (left + 1 < right) {
            left++;
        } else {
            right--;
            tok *tk = &w[right];
            if (tk->ps == NULL) {
                if (ck_mk_all_junk(tk->text)) {
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
        tok merged = ck_mk_merge_tokens(r, w, n, 0);
        pr p;
        int rc = ck_mk_fallback(r, merged.text, w[0].byte, &p);
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
        ck_mk_resolve_tokens(r, w, n);
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
    tok *in = ck_mk_amalloc(r.a, (n + 1) * sizeof *in);
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
        k.text = ck_mk_astrdup(r.a, t->text);
        k.tag = t->tag;
        k.ws = t->whitespace != 0;
        k.ps = t->phonemes != NULL ? ck_mk_astrdup(r.a, t->phonemes) : NULL;
        k.rating = t->phonemes != NULL ? 5 : 0;
        k.is_head = t->phonemes != NULL ? t->is_head : 1;
        k.stress = t->stress;
        snprintf(k.flags, sizeof k.flags, "%s", t->num_flags != NULL ? t->num_flags : "");
        k.byte = byte;
        byte += strlen(t->text) + (k.ws ? 1 : 0);
        if (nin > 0 && !k.is_head) {
            tok pair[2] = {in[nin - 1], k};
            in[nin - 1] = ck_mk_merge_tokens(&r, pair, 2, 1);
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
                pr p = ck_mk_lexicon_call(&r, w, &ctx);
                w->ps = (char *)p.ps;
                w->rating = p.rating;
            }
            if (w->ps == NULL) {
                pr p;
                rc = ck_mk_fallback(&r, w->text, w->byte, &p);
                w->ps = (char *)p.ps;
                w->rating = p.rating;
            }
            ctx = ck_mk_token_context(ctx, w->ps, w);
            continue;
        }
        rc = resolve_group(&r, w, it->n, &ctx);
    }
    if (rc != CK_OK) {
        ck_strbuf_free(&r.fb);
        return rc;
    }
    /* merge groups, flap/glottal pass, Kokoro strings */
    res->tokens = ck_mk_amalloc(r.a, (ni + 1) * sizeof *res->tokens);
    if (res->tokens == NULL) {
        ck_strbuf_free(&r.fb);
        return ck_fail(err, CK_E_MEMORY, "misaki: cannot allocate output tokens");
    }
    ck_strbuf all = {0};
    for (size_t k = 0; k < ni; k++) {
        tok t = items[k].n == 1 && !(items[k].list && items[k].n > 1)
                    ? sub[items[k].first]
                    : ck_mk_merge_tokens(&r, sub + items[k].first, items[k].n, 1);
        if (items[k].n > 1) {
            t.byte = sub[items[k].first].byte;
        }
        char *ps = t.ps;
        if (ps != NULL && ps[0] != '\0') {
            ps = ck_mk_replace_all(strdup(ps), "ɾ", "T");
            ps = ck_mk_replace_all(ps, "ʔ", "t");
            char *kept = ps != NULL ? ck_mk_astrdup(r.a, ps) : NULL;
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
    res->misaki_ps = s != NULL ? ck_mk_astrdup(r.a, s) : NULL;
    free(s);
    res->kokoro_ps = tokens_to_ps(&r, res->tokens, ni);
    res->n_fallbacks = r.fb.len / sizeof(ck_misaki_fallback);
    if (res->n_fallbacks > 0) {
        res->fallbacks = ck_mk_amalloc(r.a, r.fb.len);
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
