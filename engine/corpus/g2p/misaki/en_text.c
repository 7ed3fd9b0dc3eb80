/* en_text.c - the misaki backend's tokenizer and taggers (see en_text.h; NOT spaCy), and the
 * line-level front end that runs them before ck_misaki_run. */
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
    if (tag == NULL && is_cd(w, n)) {
        tag = "CD";
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

/* ---- taggers ---- */

static const char *const k_dt[] = {"a", "an", "the", "this", "these", "those", "every", "each",
                                   "some", "any", "no", "another"};
static const char *const k_prp[] = {"I", "you", "he", "she", "it", "we", "they", "me", "him",
                                    "us", "them"};
static const char *const k_in[] = {"in", "of", "by", "for", "with", "on", "at", "from", "into",
                                   "about", "as", "than", "over", "after", "before", "under",
                                   "between", "through", "during", "without", "within", "upon",
                                   "against", "among"};
static const char *const k_modal[] = {"will", "would", "can", "could", "shall", "should", "may",
                                      "might", "must", "do", "does", "did", "'ll", "n't",
                                      "please", "let's"};
static const char *const k_subject[] = {"i", "you", "we", "they"};
static const char *const k_third[] = {"he", "she", "it"};
static const char *const k_be[] = {"is", "was", "were", "are", "be", "been", "being", "'s", "'re",
                                   "am"};
static const char *const k_have[] = {"has", "have", "had", "'ve", "'d"};
static const char *const k_quantity[] = {"many", "few", "several", "more", "most", "such",
                                         "both", "all", "two", "three", "first", "last"};
/* words whose lexicon entry has VBD/VBN forms distinct from the present */
static const char *const k_past[] = {"read", "reread", "wound"};
static const char *const k_possessive[] = {"my", "your", "his", "her", "its", "our", "their"};

#define IN_TABLE(key, t) in_table(key, t, sizeof t / sizeof t[0])

static int in_table(const char *key, const char *const *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(key, t[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The closed-class lookup key: "I" as is, any other word lower-cased (ASCII). */
static void closed_key(const char *w, char *key, size_t cap)
{
    size_t i = 0;
    int keep = strcmp(w, "I") == 0;
    for (; w[i] != '\0' && i + 1 < cap; i++) {
        char c = w[i];
        key[i] = (char)(!keep && c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    key[i] = '\0';
}

static const char *closed_tag(const char *w)
{
    char key[64];
    closed_key(w, key, sizeof key);
    if (IN_TABLE(key, k_dt)) {
        return "DT";
    }
    if (IN_TABLE(key, k_prp)) {
        return "PRP";
    }
    if (IN_TABLE(key, k_in)) {
        return "IN";
    }
    if (strcmp(key, "to") == 0) {
        return "TO";
    }
    return "XX";
}

static void lower_key(char *k)
{
    for (; *k != '\0'; k++) {
        *k = (char)(*k >= 'A' && *k <= 'Z' ? *k + 32 : *k);
    }
}

/* An e-mail address or a bare domain (no path): misaki reads its "." as "dot" under ADD. */
static int is_address(const char *w)
{
    static const char *const tlds[] = {".com", ".org", ".net", ".io", ".edu", ".gov", ".co.uk",
                                       ".uk", ".de", ".ai"};
    if (strchr(w, '@') != NULL && strchr(w, '.') != NULL) {
        return 1;
    }
    if (strchr(w, '/') != NULL || strchr(w, '.') == w) {
        return 0;
    }
    size_t n = strlen(w);
    for (size_t i = 0; i < sizeof tlds / sizeof tlds[0]; i++) {
        size_t m = strlen(tlds[i]);
        if (n > m && strcmp(w + n - m, tlds[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

const char *ck_en_tagger_name(ck_en_tagger t)
{
    return t == CK_TAGGER_CLOSED ? "closed-class v1 (not spaCy)"
                                 : "heuristic v1: closed-class + one word of context (not spaCy)";
}

void ck_en_tag(ck_en_tagger t, const ck_en_pieces *p, const char **tags)
{
    for (size_t i = 0; i < p->n; i++) {
        tags[i] = p->pieces[i].tag != NULL ? p->pieces[i].tag : closed_tag(p->pieces[i].text);
    }
    if (t == CK_TAGGER_CLOSED) {
        return;
    }
    /* one word of context, only where misaki's output depends on it (special cases and
     * POS-keyed entries); a sentence starts at the line start or after . ! ? */
    size_t first_word = 0;  /* first word piece of the current sentence */
    int seen_word = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->pieces[i].punct && strcmp(tags[i], ".") == 0) {
            seen_word = 0;
        } else if (!p->pieces[i].punct && !seen_word) {
            seen_word = 1;
            first_word = i;
        }
        if (p->pieces[i].tag != NULL) {
            continue;
        }
        char key[64], prev[64] = "", next[64] = "";
        closed_key(p->pieces[i].text, key, sizeof key);
        lower_key(key);
        int start = i == 0 || (p->pieces[i - 1].punct && strcmp(tags[i - 1], ".") == 0);
        if (i > 0 && !p->pieces[i - 1].punct) {
            closed_key(p->pieces[i - 1].text, prev, sizeof prev);
            lower_key(prev);
        }
        if (i + 1 < p->n && !p->pieces[i + 1].punct) {
            closed_key(p->pieces[i + 1].text, next, sizeof next);
            lower_key(next);
        }
        int end = i + 1 == p->n || p->pieces[i + 1].punct;
        int prev_cd = i > 0 && p->pieces[i - 1].tag != NULL && strcmp(p->pieces[i - 1].tag, "CD") == 0;
        int prev_capital = i > 0 && i - 1 != first_word && !p->pieces[i - 1].punct &&
                           p->pieces[i - 1].text[0] >= 'A' && p->pieces[i - 1].text[0] <= 'Z' &&
                           strcmp(p->pieces[i - 1].text, "I") != 0;
        const char *t0 = tags[i];
        if (is_address(p->pieces[i].text)) {
            tags[i] = "ADD";                /* e-mail, bare domain: "." reads "dot" */
        } else if ((strcmp(key, "a") == 0) && end) {
            tags[i] = "NN";                 /* the letter: "is a, not b" */
        } else if (strcmp(p->pieces[i].text, "I") == 0 && prev_capital) {
            tags[i] = "CD";                 /* "World War I", "Henry I" */
        } else if (strcmp(key, "by") == 0 && end) {
            tags[i] = "RB";                 /* "drove by." */
        } else if (strcmp(key, "vs") == 0 || strcmp(key, "vs.") == 0) {
            tags[i] = "IN";
        } else if (strcmp(key, "am") == 0 && prev_cd) {
            tags[i] = "NN";                 /* "9 AM": spelled */
        } else if (strcmp(t0, "XX") != 0) {
            continue;                       /* other closed-class words keep their tag */
        } else if (strcmp(key, "used") == 0 && strcmp(next, "to") == 0) {
            tags[i] = IN_TABLE(prev, k_be) ? "VBN" : "VBD";
        } else if (strcmp(key, "that") == 0 && (end || start)) {
            tags[i] = "DT";                 /* "like that." "That is ..." : demonstrative */
        } else if (strcmp(key, "that") == 0) {
            tags[i] = "IN";                 /* complementizer / relative: DEFAULT entry */
        } else if (IN_TABLE(key, k_past) && (IN_TABLE(prev, k_be) || IN_TABLE(prev, k_have))) {
            tags[i] = "VBN";                /* "was read", "had wound" */
        } else if (IN_TABLE(key, k_past) && IN_TABLE(prev, k_third)) {
            tags[i] = "VBD";                /* "he read" (present would be "reads") */
        } else if (prev[0] != '\0' && IN_TABLE(prev, k_modal)) {
            tags[i] = "VB";
        } else if (prev[0] != '\0' && strcmp(prev, "to") == 0 && !end) {
            tags[i] = "VB";
        } else if (prev[0] != '\0' && IN_TABLE(prev, k_subject)) {
            tags[i] = "VBP";
        } else if (prev[0] != '\0' && IN_TABLE(prev, k_third)) {
            tags[i] = "VBZ";
        } else if (prev[0] != '\0' && (IN_TABLE(prev, k_dt) || IN_TABLE(prev, k_possessive) ||
                                       IN_TABLE(prev, k_quantity))) {
            tags[i] = "NN";
        } else if (start && (IN_TABLE(next, k_dt) || IN_TABLE(next, k_possessive))) {
            tags[i] = "VB";                 /* imperative: "Record the song." */
        }
    }
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
