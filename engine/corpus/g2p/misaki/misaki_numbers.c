/* misaki_numbers.c - misaki's numbers (en.py:363-476: is_number, get_number and its currency,
 * ordinal, year and decimal cases) and the lexicon's __call__ that picks words or numbers; must not
 * split or merge tokens. */
#include "misaki_internal.h"

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
        if (ck_mk_w_ends(w, n, suffixes[k])) {
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
                num_push(o, ck_mk_lookup_ascii(o->r, w, NULL,
                                         strcmp(w, "point") == 0 ? -2 : CK_MISAKI_NO_STRESS, NULL));
            }
        } else if (strchr(o->flags, 'n') != NULL && o->n > 0) {
            pr *last = &o->parts[o->n - 1];
            last->ps = last->ps != NULL ? ck_mk_acat(o->r->a, last->ps, "ən", NULL) : NULL;
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

const char *ck_mk_currency_unit(uint32_t c, int sub)
{
    switch (c) {
    case '$': return sub ? "cent" : "dollar";
    case 0xA3: return sub ? "pence" : "pound";
    case 0x20AC: return sub ? "cent" : "euro";
    default: return NULL;
    }
}

/* A number token as get_number reads it: sign dropped (its "minus" already said), letter suffix
 * apart, commas removed. */
typedef struct {
    const char *s;         /* the number without its sign and suffix (ASCII) */
    size_t len;
    char suffix[MAXW + 1]; /* trailing letters and apostrophes: "st", "s", "'d", ... */
    char nocomma[MAXW + 1];
    size_t nc;             /* bytes of nocomma */
    size_t dots;
    int digits_only;
    int ordinal;           /* suffix st, nd, rd or th */
    const char *unit;      /* currency word, or NULL */
} number;

/* Splits word into *q (text kept in w[MAXW + 1]); pushes "minus" for a leading '-'. 0 when the
 * number holds non-ASCII (misaki gives no phonemes then). */
static int read_number(numout *o, const uint32_t *word, size_t n, uint32_t currency, char *w,
                       number *q)
{
    size_t suf = n;
    while (suf > 0 && ((word[suf - 1] >= 'a' && word[suf - 1] <= 'z') || word[suf - 1] == '\'')) {
        suf--;
    }
    for (size_t i = suf; i < n; i++) {
        q->suffix[i - suf] = (char)word[i];
    }
    q->suffix[n - suf] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < suf; i++) {
        if (word[i] >= 0x80) {
            return 0;
        }
        w[len++] = (char)word[i];
    }
    w[len] = '\0';
    if (w[0] == '-') {
        num_push(o, ck_mk_lookup_ascii(o->r, "minus", NULL, CK_MISAKI_NO_STRESS, NULL));
        w++;
        len--;
    }
    q->s = w;
    q->len = len;
    q->digits_only = len > 0 && strspn(w, "0123456789") == len;
    q->ordinal = strlen(q->suffix) == 2 &&
                 (strcmp(q->suffix, "st") == 0 || strcmp(q->suffix, "nd") == 0 ||
                  strcmp(q->suffix, "rd") == 0 || strcmp(q->suffix, "th") == 0);
    q->unit = ck_mk_currency_unit(currency, 0);
    q->nc = 0;
    q->dots = 0;
    for (size_t i = 0; i < len; i++) {
        if (w[i] != ',') {
            q->nocomma[q->nc++] = w[i];
        }
        q->dots += w[i] == '.';
    }
    q->nocomma[q->nc] = '\0';
    return 1;
}

/* num2words(s, to=kind) said word by word. */
static void say_words(numout *o, const char *s, size_t len, ck_num_kind kind)
{
    ck_strbuf b = {0};
    ck_num_words(s, len, kind, &b);
    char *t = ck_strbuf_take(&b);
    if (t != NULL) {
        extend_words(o, t, 1);
        free(t);
    }
}

/* Not the head of its word, no dot: digit by digit, or a three-digit group as "N O M" / "N MM". */
static void say_digit_groups(numout *o, const number *q)
{
    const char *d = q->nocomma;
    if (q->nc == 0) {
        /* nothing: misaki would fail on num[0] */
    } else if (d[0] == '0' || q->nc > 3) {
        for (size_t i = 0; i < q->nc; i++) {
            extend_int(o, d + i, 1, 0);
        }
    } else if (q->nc == 3 && !(d[1] == '0' && d[2] == '0')) {
        extend_int(o, d, 1, 1);
        if (d[1] == '0') {
            num_push(o, ck_mk_lookup_ascii(o->r, "O", NULL, -2, NULL));
            extend_int(o, d + 2, 1, 0);
        } else {
            extend_int(o, d + 1, 2, 0);
        }
    } else {
        extend_int(o, d, q->nc, 1);
    }
}

/* Several dots, or not the head: each dot-separated piece as a number, or digit by digit. */
static void say_dotted(numout *o, const number *q)
{
    int first = 1;
    const char *p = q->nocomma;
    for (;;) {
        const char *e = strchr(p, '.');
        size_t pl = e != NULL ? (size_t)(e - p) : strlen(p);
        if (pl > 0) {
            int nonzero_after = 0;
            for (size_t i = 1; i < pl; i++) {
                nonzero_after |= p[i] != '0';
            }
            if (p[0] == '0' || (pl != 2 && nonzero_after)) {
                for (size_t i = 0; i < pl; i++) {
                    extend_int(o, p + i, 1, 0);
                }
            } else {
                extend_int(o, p, pl, first);
            }
        }
        first = 0;
        if (e == NULL) {
            break;
        }
        p = e + 1;
    }
}

/* 1 when the digits s[0..n) read as exactly 1 (leading zeros aside). */
static int is_one(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == '0') {
        i++;
    }
    return n - i == 1 && s[i] == '1';
}

/* Currency: "N units and M subunits", zero parts dropped, units plural unless one (pence never). */
static void say_currency(numout *o, const number *q, uint32_t currency)
{
    char *dot = strchr(q->nocomma, '.');
    const char *num[2] = {q->nocomma, dot != NULL ? dot + 1 : NULL};
    size_t nl[2] = {dot != NULL ? (size_t)(dot - q->nocomma) : q->nc,
                    dot != NULL ? strlen(dot + 1) : 0};
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
            num_push(o, ck_mk_lookup_ascii(o->r, "and", NULL, CK_MISAKI_NO_STRESS, NULL));
        }
        if (nl[k] == 0) {
            extend_int(o, "0", 1, k == start);
        } else {
            extend_int(o, num[k], nl[k], k == start);
        }
        const char *u = ck_mk_currency_unit(currency, k);
        if (!is_one(num[k], nl[k]) && strcmp(u, "pence") != 0) {
            uint32_t us[MAXW];
            char plural[32];
            snprintf(plural, sizeof plural, "%ss", u);
            size_t un = ck_mk_decode(plural, us, MAXW);
            num_push(o, ck_mk_stem_s(o->r, us, un, NULL, CK_MISAKI_NO_STRESS, NULL));
        } else {
            num_push(o, ck_mk_lookup_ascii(o->r, u, NULL, CK_MISAKI_NO_STRESS, NULL));
        }
    }
}

/* Everything else: a cardinal, an ordinal with commas, ".5" as "point five", or a decimal. */
static void say_plain(numout *o, const number *q)
{
    ck_strbuf b = {0};
    int ok = 0;
    if (q->digits_only) {
        ok = ck_num_words(q->s, q->len, CK_NUM_CARDINAL, &b) == 0;
    } else if (q->dots == 0) {
        ok = ck_num_words(q->nocomma, q->nc, q->ordinal ? CK_NUM_ORDINAL : CK_NUM_CARDINAL,
                          &b) == 0;
    } else if (q->nocomma[0] == '.') {
        ck_strbuf_puts(&b, "point");
        for (size_t i = 1; i < q->nc; i++) {
            ck_strbuf_puts(&b, " ");
            ck_num_words(q->nocomma + i, 1, CK_NUM_CARDINAL, &b);
        }
        ok = 1;
    } else {
        ok = ck_num_words_float(q->nocomma, q->nc, &b) == 0;
    }
    char *t = ck_strbuf_take(&b);
    if (ok && t != NULL) {
        extend_words(o, t, 1);
    }
    free(t);
}

/* The parts joined by spaces (rating: the lowest), then the suffix's -s, -ed or -ing. */
static pr join_number(numout *o, const char *suffix)
{
    if (o->n == 0) {
        return NONE;
    }
    ck_strbuf b = {0};
    int rating = 5;
    for (size_t i = 0; i < o->n; i++) {
        if (i > 0) {
            ck_strbuf_puts(&b, " ");
        }
        if (o->parts[i].ps == NULL) {
            ck_strbuf_free(&b);
            return NONE;
        }
        ck_strbuf_puts(&b, o->parts[i].ps);
        rating = o->parts[i].rating < rating ? o->parts[i].rating : rating;
    }
    char *t = ck_strbuf_take(&b);
    const char *ps = t != NULL ? ck_mk_astrdup(o->r->a, t) : NULL;
    free(t);
    if (strcmp(suffix, "s") == 0 || strcmp(suffix, "'s") == 0) {
        ps = ck_mk_suffix_s(o->r, ps);
    } else if (strcmp(suffix, "ed") == 0 || strcmp(suffix, "'d") == 0) {
        ps = ck_mk_suffix_ed(o->r, ps);
    } else if (strcmp(suffix, "ing") == 0) {
        ps = ck_mk_suffix_ing(o->r, ps);
    }
    return (pr){ps, rating};
}

/* get_number (en.py:363-476): the first case that applies, in misaki's order. */
static pr get_number(run *r, const uint32_t *word, size_t n, uint32_t currency, int is_head,
                     const char *flags)
{
    numout o = {.r = r, .flags = flags, .n = 0};
    char w[MAXW + 1];
    number q;
    if (!read_number(&o, word, n, currency, w, &q)) {
        return NONE;
    }
    if (q.digits_only && q.ordinal) {
        say_words(&o, q.s, q.len, CK_NUM_ORDINAL);
    } else if (o.n == 0 && q.len == 4 && q.unit == NULL && q.digits_only) {
        say_words(&o, q.s, q.len, CK_NUM_YEAR);
    } else if (!is_head && q.dots == 0) {
        say_digit_groups(&o, &q);
    } else if (q.dots > 1 || !is_head) {
        say_dotted(&o, &q);
    } else if (q.unit != NULL && (q.dots == 0 || strlen(strchr(q.s, '.') + 1) < 3)) {
        say_currency(&o, &q, currency);
    } else {
        say_plain(&o, &q);
    }
    return join_number(&o, q.suffix);
}

static const char *append_currency(run *r, const char *ps, uint32_t currency)
{
    const char *u = ck_mk_currency_unit(currency, 0);
    if (u == NULL) {
        return ps;
    }
    uint32_t us[32];
    char plural[32];
    snprintf(plural, sizeof plural, "%ss", u);
    size_t un = ck_mk_decode(plural, us, 32);
    pr p = ck_mk_stem_s(r, us, un, NULL, CK_MISAKI_NO_STRESS, NULL);
    return p.ps != NULL ? ck_mk_acat(r->a, ps, " ", p.ps) : ps;
}

/* Lexicon.__call__ (en.py:478-495) */
pr ck_mk_lexicon_call(run *r, const tok *tk, const context *ctx)
{
    uint32_t raw[MAXW], w[MAXW];
    size_t n = ck_mk_decode(tk->alias != NULL ? tk->alias : tk->text, raw, MAXW);
    for (size_t i = 0; i < n; i++) {
        if (raw[i] == 0x2018 || raw[i] == 0x2019) {
            raw[i] = '\'';
        }
    }
    n = ck_cp_normalize(raw, n, w, MAXW - 1);
    if (n == 0) {
        return NONE;
    }
    double stress = ck_mk_w_is_lower(w, n) ? CK_MISAKI_NO_STRESS : ck_mk_w_is_upper(w, n) ? 2 : 0.5;
    pr p = ck_mk_get_word(r, w, n, tk->tag, stress, ctx);
    if (p.ps != NULL) {
        return (pr){ck_mk_apply_stress(r->a, append_currency(r, p.ps, tk->currency), tk->stress),
                    p.rating};
    }
    if (is_number(w, n, tk->is_head)) {
        p = get_number(r, w, n, tk->currency, tk->is_head, tk->flags);
        return (pr){ck_mk_apply_stress(r->a, p.ps, tk->stress), p.rating};
    }
    return NONE;
}
