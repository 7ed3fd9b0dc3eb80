/* en_num.c - num2words' English words (see en_num.h): a number is read as its largest "card"
 * (a word with a value: zero..twenty, thirty..ninety, hundred, thousand, million, ...) times a
 * multiplier plus a remainder, and the three parts are merged pairwise, left to right, by five
 * rules that decide between "x-y", "x and y", "x y" and "x, y". */
#include "en_num.h"

#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

static const char *const k_low[] = {
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty"};
static const char *const k_tens[] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
                                     "eighty", "ninety"};
static const char *const k_high[] = {"thousand", "million", "billion", "trillion",
                                     "quadrillion", "quintillion", "sextillion", "septillion",
                                     "octillion", "nonillion", "decillion"};
#define N_HIGH (sizeof k_high / sizeof k_high[0])

/* A text (bytes in buf) with its value. */
typedef struct {
    char buf[1024];
    u128 num;
} words;

static u128 pow10u(unsigned e)
{
    u128 v = 1;
    while (e-- > 0) {
        v *= 10;
    }
    return v;
}

/* The largest card <= v (v >= 0) and its word. */
static u128 card(u128 v, const char **word)
{
    if (v <= 20) {
        *word = k_low[(int)v];
        return v;
    }
    if (v < 100) {
        unsigned t = (unsigned)(v / 10);
        *word = k_tens[t];
        return t * 10u;
    }
    if (v < 1000) {
        *word = "hundred";
        return 100;
    }
    unsigned k = 0;
    while (k + 1 < N_HIGH && pow10u(3 * (k + 2)) <= v) {
        k++;
    }
    *word = k_high[k];
    return pow10u(3 * (k + 1));
}

static void set(words *w, const char *text, u128 num)
{
    snprintf(w->buf, sizeof w->buf, "%s", text);
    w->num = num;
}

/* dst = a + sep + b, cut at cap - 1 bytes (texts stay far below 1024 for values < 10^36). */
static void join3(char *dst, size_t cap, const char *a, const char *sep, const char *b)
{
    char t[1024];
    size_t n = 0;
    for (const char *part[3] = {a, sep, b}, **p = part; p < part + 3; p++) {
        size_t k = strlen(*p);
        k = k < sizeof t - 1 - n ? k : sizeof t - 1 - n;
        memcpy(t + n, *p, k);
        n += k;
    }
    n = n < cap - 1 ? n : cap - 1;
    memcpy(dst, t, n);
    dst[n] = '\0';
}

/* The merge rules of two adjacent parts (l then r) into l. */
static void merge(words *l, const words *r)
{
    if (l->num == 1 && r->num < 100) {
        *l = *r;
        return;
    }
    if (l->num < 100 && l->num > r->num) {
        join3(l->buf, sizeof l->buf, l->buf, "-", r->buf);
        l->num += r->num;
    } else if (l->num >= 100 && r->num < 100) {
        join3(l->buf, sizeof l->buf, l->buf, " and ", r->buf);
        l->num += r->num;
    } else if (r->num > l->num) {
        join3(l->buf, sizeof l->buf, l->buf, " ", r->buf);
        l->num *= r->num;
    } else {
        join3(l->buf, sizeof l->buf, l->buf, ", ", r->buf);
        l->num += r->num;
    }
}

/* Cardinal words of v: [multiplier] card [remainder], merged left to right. */
static void cardinal(u128 v, words *out)
{
    const char *w = NULL;
    u128 c = card(v, &w);
    u128 div = v == 0 ? 1 : v / c, mod = v == 0 ? 0 : v % c;
    words right;
    if (div == 1) {
        set(out, "one", 1);
    } else {
        cardinal(div, out);
    }
    set(&right, w, c);
    merge(out, &right);
    if (mod != 0) {
        cardinal(mod, &right);
        merge(out, &right);
    }
}

static void ordinal(u128 v, words *out)
{
    static const char *const ords[][2] = {
        {"one", "first"}, {"two", "second"}, {"three", "third"}, {"four", "fourth"},
        {"five", "fifth"}, {"six", "sixth"}, {"seven", "seventh"}, {"eight", "eighth"},
        {"nine", "ninth"}, {"twelve", "twelfth"}};
    cardinal(v, out);
    char *last = out->buf;
    for (char *p = out->buf; *p != '\0'; p++) {
        if (*p == ' ' || *p == '-') {
            last = p + 1;
        }
    }
    for (size_t i = 0; i < sizeof ords / sizeof ords[0]; i++) {
        if (strcmp(last, ords[i][0]) == 0) {
            snprintf(last, sizeof out->buf - (size_t)(last - out->buf), "%s", ords[i][1]);
            return;
        }
    }
    size_t n = strlen(out->buf);
    if (n > 0 && out->buf[n - 1] == 'y') {
        out->buf[n - 1] = '\0';
        strncat(out->buf, "ie", sizeof out->buf - strlen(out->buf) - 1);
    }
    strncat(out->buf, "th", sizeof out->buf - strlen(out->buf) - 1);
}

static void year(u128 v, words *out)
{
    u128 high = v / 100, low = v % 100;
    if (high == 0 || (high % 10 == 0 && low < 10) || high >= 100) {
        cardinal(v, out);
        return;
    }
    words h, l;
    cardinal(high, &h);
    if (low == 0) {
        set(&l, "hundred", 0);
    } else if (low < 10) {
        words d;
        cardinal(low, &d);
        join3(l.buf, sizeof l.buf, "oh-", "", d.buf);
    } else {
        cardinal(low, &l);
    }
    join3(out->buf, sizeof out->buf, h.buf, " ", l.buf);
    out->num = v;
}

/* Parses n ASCII digits (n may be 0: value 0) below 10^36. */
static int parse(const char *d, size_t n, u128 *v)
{
    *v = 0;
    size_t i = 0;
    while (i < n && d[i] == '0') {
        i++;
    }
    if (n - i > 36) {
        return -1;
    }
    for (; i < n; i++) {
        if (d[i] < '0' || d[i] > '9') {
            return -1;
        }
        *v = *v * 10 + (unsigned)(d[i] - '0');
    }
    return 0;
}

int ck_num_words(const char *digits, size_t n, ck_num_kind kind, ck_strbuf *out)
{
    u128 v = 0;
    if (digits == NULL || n == 0 || parse(digits, n, &v) != 0 || v >= pow10u(36)) {
        return -1;
    }
    words w;
    if (kind == CK_NUM_ORDINAL) {
        ordinal(v, &w);
    } else if (kind == CK_NUM_YEAR) {
        year(v, &w);
    } else {
        cardinal(v, &w);
    }
    ck_strbuf_puts(out, w.buf);
    return 0;
}

int ck_num_words_float(const char *s, size_t n, ck_strbuf *out)
{
    const char *dot = s != NULL ? memchr(s, '.', n) : NULL;
    if (dot == NULL || n < 2) {
        return -1;
    }
    size_t ni = (size_t)(dot - s), nf = n - ni - 1;
    while (nf > 0 && dot[nf] == '0') {
        nf--;
    }
    u128 ip = 0, fp = 0;
    if (parse(s, ni, &ip) != 0 || parse(dot + 1, nf, &fp) != 0 || ip >= pow10u(36)) {
        return -1;
    }
    words w;
    cardinal(ip, &w);
    ck_strbuf_puts(out, w.buf);
    if (nf > 0) {
        ck_strbuf_puts(out, " point");
        for (size_t i = 0; i < nf; i++) {
            ck_strbuf_puts(out, " ");
            ck_strbuf_puts(out, k_low[dot[1 + i] - '0']);
        }
    }
    return 0;
}
