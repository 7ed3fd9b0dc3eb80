/* en_text.c - the misaki backend's line normalisation and tokenizer (see en_text.h; NOT spaCy;
 * the taggers are in en_tag.c), and the line-level front end that runs them before ck_misaki_run. */
#include "en_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "en_chars.h"
#include "strbuf.h"
#include "utf8.h"

char *ck_en_normalize_line(const char *text)
{
    if (text == NULL) {
        return NULL;
    }
    ck_strbuf b = {0};
    size_t n = strlen(text), pos = 0, prev = 0;
    uint32_t c = 0;
    while (pos < n) {
        if (ck_utf8_next(text, n, &pos, &c) != CK_OK) {
            ck_strbuf_free(&b);
            return NULL;
        }
        if (c == 0x2018 || c == 0x2019 || c == 0x201B || c == 0x02BC || c == 0xFF07) {
            ck_strbuf_append(&b, "'", 1);
        } else if (ck_cp_ascii_form(c)) {
            uint32_t o[8];  /* "٣" -> "3", "➉" -> "10", "２" -> "2": no such form reaches espeak-ng */
            size_t k = ck_cp_normalize(&c, 1, o, 8);
            for (size_t i = 0; i < k; i++) {
                char u[4];
                ck_strbuf_append(&b, u, ck_utf8_encode(o[i], u));
            }
        } else {
            ck_strbuf_append(&b, text + prev, pos - prev);
        }
        prev = pos;
    }
    ck_strbuf_puts(&b, "");
    return ck_strbuf_take(&b);
}

/* ---- tokenizer ---- */

static int is_ws(uint32_t c)
{
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x1C || c == 0x1D || c == 0x1E ||
           c == 0x1F || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

static int in_list(uint32_t c, const uint32_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (set[i] == c) {
            return 1;
        }
    }
    return 0;
}

static const uint32_t k_prefix[] = {'"', '\'', 0x201C, 0x2018, '(', '[', '{', '$', 0xA3, 0x20AC,
                                     '#', 0xBF, 0xA1, '*'};
static const uint32_t k_suffix[] = {'"', '\'', 0x201D, 0x2019, ')', ']', '}', '.', ',', '!', '?',
                                    ';', ':', 0x2026, '%', '*'};
#define N_PREFIX (sizeof k_prefix / sizeof k_prefix[0])
#define N_SUFFIX (sizeof k_suffix / sizeof k_suffix[0])

static const char *const k_abbreviations[] = {"Mr.", "Mrs.", "Ms.", "Dr.", "St.", "Jr.", "Sr.",
                                              "No.", "vs.", "etc.", "Etc.", "e.g.", "i.e.",
                                              "Esq.", "Mt.", "Inc.", "Ltd.", "Co.", "Prof."};

static int eq_ascii(const uint32_t *w, size_t n, const char *s)
{
    size_t m = strlen(s);
    if (m != n) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (w[i] != (unsigned char)s[i]) {
            return 0;
        }
    }
    return 1;
}

static int is_abbreviation(const uint32_t *w, size_t n)
{
    for (size_t i = 0; i < sizeof k_abbreviations / sizeof k_abbreviations[0]; i++) {
        if (eq_ascii(w, n, k_abbreviations[i])) {
            return 1;
        }
    }
    if (n == 0 || n % 2 != 0) {  /* (?:[A-Za-z]\.)+ */
        return 0;
    }
    for (size_t i = 0; i < n; i += 2) {
        uint32_t c = w[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) || w[i + 1] != '.') {
            return 0;
        }
    }
    return 1;
}

/* The tag of a punctuation piece (prefix: split off at the front). */
static const char *punct_tag(const uint32_t *w, size_t n, int prefix)
{
    int all_stop = n > 0, all_dash = n > 0;
    for (size_t i = 0; i < n; i++) {
        all_stop &= w[i] == '.' || w[i] == '!' || w[i] == '?';
        all_dash &= w[i] == '-' || w[i] == 0x2014 || w[i] == 0x2013;
    }
    if (n == 1 && w[0] == ',') {
        return ",";
    }
    if (all_stop) {
        return ".";
    }
    if (all_dash || (n == 1 && (w[0] == ';' || w[0] == ':' || w[0] == 0x2026))) {
        return ":";
    }
    if (n == 1) {
        switch (w[0]) {
        case '"': case '\'': return prefix ? "``" : "''";
        case 0x201C: case 0x2018: return "``";
        case 0x201D: case 0x2019: return "''";
        case '(': case '[': case '{': return "-LRB-";
        case ')': case ']': case '}': return "-RRB-";
        case '$': case 0xA3: case 0x20AC: return "$";
        case '#': return "#";
        case '%': return "NN";
        default: break;
        }
    }
    return "NFP";
}

/* CD: [\d.,]+(st|nd|rd|th|s)? with a digit. */
static int is_cd(const uint32_t *w, size_t n)
{
    static const char *const sfx[] = {"st", "nd", "rd", "th", "s"};
    for (size_t k = 0; k <= sizeof sfx / sizeof sfx[0]; k++) {
        size_t m = n;
        if (k < sizeof sfx / sizeof sfx[0]) {
            size_t l = strlen(sfx[k]);
            if (n <= l || !eq_ascii(w + n - l, l, sfx[k])) {
                continue;
            }
            m = n - l;
        }
        int digit = 0, ok = m > 0;
        for (size_t i = 0; i < m && ok; i++) {
            digit |= ck_cp_decimal(w[i]) >= 0;
            ok = ck_cp_decimal(w[i]) >= 0 || w[i] == '.' || w[i] == ',';
        }
        if (ok && digit) {
            return 1;
        }
    }
    return 0;
}

typedef struct {
    ck_en_pieces *out;
    size_t cap;
    int failed;
} emitter;

static void emit(emitter *e, const uint32_t *w, size_t n, const char *tag, int punct)
{
    if (e->failed || n == 0) {
        return;
    }
    if (e->out->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 32;
        ck_en_piece *p = realloc(e->out->pieces, cap * sizeof *p);
        if (p == NULL) {
            e->failed = 1;
            return;
        }
        e->out->pieces = p;
        e->cap = cap;
    }
    char *s = malloc(4 * n + 1), *q = s;
    if (s == NULL) {
        e->failed = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        q += ck_utf8_encode(w[i], q);
    }
    *q = '\0';
    int symbols = 1;
    for (size_t i = 0; i < n; i++) {
        symbols &= ck_cp_symbol(w[i]) || w[i] == 0x200D;   /* ZWJ joins emoji */
    }
    if (tag == NULL && is_cd(w, n)) {
        tag = "CD";
    } else if (tag == NULL && symbols) {
        tag = "SYM";   /* an emoji or symbol: espeak-ng names it (tests' t376) */
    }
    e->out->pieces[e->out->n++] = (ck_en_piece){s, 0, tag, punct};
}

static int ends_ci(const uint32_t *w, size_t n, const uint32_t *s, size_t m)
{
    if (n < m) {
        return 0;
    }
    for (size_t i = 0; i < m; i++) {
        if (ck_cp_lower(w[n - m + i]) != s[i]) {
            return 0;
        }
    }
    return 1;
}

/* Steps 1-4 of the stand-in on one part (no U+2014, "--", U+2026 inside). */
static void split_part(emitter *e, const uint32_t *w, size_t n)
{
    while (n > 1 && in_list(w[0], k_prefix, N_PREFIX)) {
        emit(e, w, 1, punct_tag(w, 1, 1), 1);
        w++;
        n--;
    }
    size_t sfx_start[64], sfx_len[64], ns = 0;
    while (n > 0 && ns < 64 && !is_abbreviation(w, n)) {
        if (n >= 3 && w[n - 1] == '.' && w[n - 2] == '.' && w[n - 3] == '.') {
            sfx_start[ns] = n - 3;
            sfx_len[ns++] = 3;
            n -= 3;
        } else if (in_list(w[n - 1], k_suffix, N_SUFFIX)) {
            sfx_start[ns] = n - 1;
            sfx_len[ns++] = 1;
            n -= 1;
        } else {
            break;
        }
    }
    if (n == 1 && in_list(w[0], k_prefix, N_PREFIX)) {
        emit(e, w, 1, punct_tag(w, 1, 1), 1);
    } else if (n > 0) {
        static const uint32_t k_contr[][4] = {
            {'n', '\'', 't', 0}, {'n', 0x2019, 't', 0}, {'\'', 's', 0}, {0x2019, 's', 0},
            {'\'', 'm', 0}, {0x2019, 'm', 0}, {'\'', 'r', 'e', 0}, {0x2019, 'r', 'e', 0},
            {'\'', 'v', 'e', 0}, {0x2019, 'v', 'e', 0}, {'\'', 'd', 0}, {0x2019, 'd', 0},
            {'\'', 'l', 'l', 0}, {0x2019, 'l', 'l', 0}};
        size_t cut = 0;
        for (size_t k = 0; k < sizeof k_contr / sizeof k_contr[0]; k++) {
            size_t m = 0;
            while (k_contr[k][m] != 0) {
                m++;
            }
            if (n > m && ends_ci(w, n, k_contr[k], m)) {
                cut = n - m;
                break;
            }
        }
        if (cut > 0) {
            emit(e, w, cut, NULL, 0);
            emit(e, w + cut, n - cut, NULL, 0);
        } else {
            emit(e, w, n, NULL, 0);
        }
    }
    for (size_t k = ns; k-- > 0;) {
        emit(e, w + sfx_start[k], sfx_len[k], punct_tag(w + sfx_start[k], sfx_len[k], 0), 1);
    }
}

int ck_en_tokenize(const char *text, ck_en_pieces *out, ck_error *err)
{
    if (text == NULL || out == NULL) {
        return ck_fail(err, CK_E_ARG, "tokenize: null argument");
    }
    memset(out, 0, sizeof *out);
    size_t len = strlen(text), pos = 0, k = 0;
    uint32_t *w = malloc((len + 1) * sizeof *w);
    if (w == NULL) {
        return ck_fail(err, CK_E_MEMORY, "tokenize: cannot allocate");
    }
    while (pos < len) {
        if (ck_utf8_next(text, len, &pos, &w[k]) != CK_OK) {
            free(w);
            return ck_fail(err, CK_E_INPUT, "tokenize: invalid UTF-8");
        }
        k++;
    }
    emitter e = {out, 0, 0};
    size_t i = 0;
    while (i < k) {
        while (i < k && is_ws(w[i])) {
            i++;
        }
        size_t a = i;
        while (i < k && !is_ws(w[i])) {
            i++;
        }
        if (a == i) {
            break;
        }
        size_t before = out->n, part = a;
        for (size_t j = a; j <= i; j++) {
            size_t sep = 0;
            if (j < i && (w[j] == 0x2014 || w[j] == 0x2026)) {
                sep = 1;
            } else if (j + 1 < i && w[j] == '-' && w[j + 1] == '-') {
                sep = 2;
            }
            if (j == i || sep > 0) {
                split_part(&e, w + part, j - part);
                if (sep > 0) {
                    emit(&e, w + j, sep, ":", 1);
                    j += sep - 1;
                    part = j + 1;
                }
            }
        }
        if (!e.failed && out->n > before && i < k) {
            out->pieces[out->n - 1].whitespace = 1;  /* whitespace follows the chunk */
        }
    }
    free(w);
    if (e.failed) {
        ck_en_pieces_free(out);
        return ck_fail(err, CK_E_MEMORY, "tokenize: cannot allocate");
    }
    return CK_OK;
}

void ck_en_pieces_free(ck_en_pieces *p)
{
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < p->n; i++) {
        free(p->pieces[i].text);
    }
    free(p->pieces);
    memset(p, 0, sizeof *p);
}

/* ---- the line front end ---- */

int ck_en_g2p_line(const ck_misaki *m, ck_en_tagger tagger, const char *line,
                   ck_misaki_result *res, ck_error *err)
{
    if (m == NULL || line == NULL || res == NULL) {
        return ck_fail(err, CK_E_ARG, "misaki: null argument");
    }
    memset(res, 0, sizeof *res);
    size_t byte = 0, column = 0;
    if (ck_utf8_validate(line, strlen(line), &byte, &column) != CK_OK) {
        return ck_fail(err, CK_E_INPUT, "column %zu: invalid UTF-8", column);
    }
    char *norm = ck_en_normalize_line(line);
    if (norm == NULL) {
        return ck_fail(err, CK_E_MEMORY, "misaki: cannot allocate");
    }
    ck_misaki_pre pre;
    ck_en_pieces pieces = {NULL, 0};
    ck_misaki_token *tokens = NULL;
    const char **tags = NULL;
    int rc = ck_misaki_preprocess(norm, &pre, err);
    if (rc == CK_OK) {
        rc = ck_en_tokenize(pre.text, &pieces, err);
    }
    if (rc == CK_OK) {
        tokens = calloc(pieces.n + 1, sizeof *tokens);
        tags = calloc(pieces.n + 1, sizeof *tags);
        if (tokens == NULL || tags == NULL) {
            rc = ck_fail(err, CK_E_MEMORY, "misaki: cannot allocate %zu tokens", pieces.n);
        }
    }
    if (rc == CK_OK) {
        ck_en_tag(tagger, &pieces, tags);
        for (size_t i = 0; i < pieces.n; i++) {
            tokens[i] = (ck_misaki_token){pieces.pieces[i].text, pieces.pieces[i].whitespace,
                                          tags[i], NULL, 1, CK_MISAKI_NO_STRESS, NULL};
        }
        ck_misaki_features(&pre, tokens, pieces.n);
        rc = ck_misaki_run(m, tokens, pieces.n, res, err);
    }
    free(tags);
    free(tokens);
    ck_en_pieces_free(&pieces);
    ck_misaki_pre_free(&pre);
    free(norm);
    return rc;
}
