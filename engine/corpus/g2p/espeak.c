/* espeak.c - Kokoro's espeak-ng fallback in C: punctuation-preserving split, espeak-ng calls under
 * one mutex, and the rewrite rules listed at ck_espeak_rewrite; must not look up the vocabulary or
 * chunk. */
#include "espeak.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lang.h"
#include "strbuf.h"
#include "utf8.h"

static void sb_append_cp(ck_strbuf *b, uint32_t cp)
{
    char u[4];
    ck_strbuf_append(b, u, ck_utf8_encode(cp, u));
}

/* Hands the string over as a malloc'd result ("" when nothing was appended). */
static int sb_finish(ck_strbuf *b, char **out, ck_error *err)
{
    *out = ck_strbuf_take(b);
    return *out != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "g2p: cannot allocate a phoneme string");
}

/* ---- rewrite rules (espeak-ng to Kokoro symbols, as listed at ck_espeak_rewrite) ---- */

typedef struct {
    const char *from, *to;
    size_t cps;  /* code points in `from`: rules run longest first */
} rule;

static const rule k_rules_en[] = {
    {"a^ɪ", "I", 3}, {"a^ʊ", "W", 3}, {"d^ʒ", "ʤ", 3}, {"e^ɪ", "A", 3}, {"t^ʃ", "ʧ", 3},
    {"ɔ^ɪ", "Y", 3}, {"ə^l", "ᵊl", 3}, {"ʲo", "jo", 2}, {"ʲə", "jə", 2}, {"e", "A", 1},
    {"ɚ", "əɹ", 1}, {"r", "ɹ", 1},  {"x", "k", 1},   {"ç", "k", 1},   {"ɐ", "ə", 1},
    {"ɬ", "l", 1},  {"ʲ", "", 1},   {"\xCC\x83", "", 1},
};
static const rule k_rules_us[] = {{"o^ʊ", "O", 3}, {"ɜːɹ", "ɜɹ", 3}, {"ɜː", "ɜɹ", 2}, {"ɪə", "iə", 2}};
static const rule k_rules_gb[] = {{"e^ə", "ɛː", 3}, {"iə", "ɪə", 2}, {"ə^ʊ", "Q", 3}};
static const rule k_rules_final_us[] = {{"ː", "", 1}};
static const rule k_rules_final[] = {{"o", "ɔ", 1}, {"ɾ", "T", 1}, {"ʔ", "t", 1}, {"^", "", 1}};

/* Replaces every occurrence of r->from in *s (malloc'd) by r->to, left to right. */
static int replace_all(char **s, const rule *r, ck_error *err)
{
    if (strstr(*s, r->from) == NULL) {
        return CK_OK;
    }
    size_t from_len = strlen(r->from);
    ck_strbuf b = {0};
    const char *p = *s, *hit;
    while ((hit = strstr(p, r->from)) != NULL) {
        ck_strbuf_append(&b, p, (size_t)(hit - p));
        ck_strbuf_append(&b, r->to, strlen(r->to));
        p = hit + from_len;
    }
    ck_strbuf_append(&b, p, strlen(p));
    char *next = NULL;
    int rc = sb_finish(&b, &next, err);
    if (rc == CK_OK) {
        free(*s);
        *s = next;
    }
    return rc;
}

/* Applies the rules of `table` that have exactly `cps` code points (all when cps is 0). */
static int apply_rules(char **s, const rule *table, size_t n, size_t cps, ck_error *err)
{
    int rc = CK_OK;
    for (size_t i = 0; i < n && rc == CK_OK; i++) {
        if (cps == 0 || table[i].cps == cps) {
            rc = replace_all(s, &table[i], err);
        }
    }
    return rc;
}

/* Syllabic consonants: "X" + U+0329 -> "ᵊX" for a non-space X; a stray U+0329 is dropped. */
static int rewrite_syllabic(char **s, ck_error *err)
{
    if (strstr(*s, "\xCC\xA9") == NULL) {
        return CK_OK;
    }
    ck_strbuf b = {0};
    size_t n = strlen(*s), pos = 0, last = 0;  /* last: byte offset in b of the last code point */
    uint32_t cp = 0, prev = ' ';
    while (pos < n && ck_utf8_next(*s, n, &pos, &cp) == CK_OK) {
        if (cp == 0x0329 && prev != ' ' && !b.failed) {
            char x[5] = {0};
            memcpy(x, b.data + last, b.len - last);
            b.len = last;
            ck_strbuf_append(&b, "ᵊ", strlen("ᵊ"));
            ck_strbuf_append(&b, x, strlen(x));
            prev = ' '; /* X is taken: more U+0329 after it are stray (and x stays one code point) */
        } else if (cp != 0x0329) {
            last = b.len;
            sb_append_cp(&b, cp);
            prev = cp;
        }
    }
    char *next = NULL;
    int rc = sb_finish(&b, &next, err);
    if (rc == CK_OK) {
        free(*s);
        *s = next;
    }
    return rc;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int ck_espeak_rewrite(const char *espeak, int british, char **out, ck_error *err)
{
    if (espeak == NULL || out == NULL) {
        return ck_fail(err, CK_E_ARG, "g2p rewrite: null argument");
    }
    char *s = strdup(espeak);
    if (s == NULL) {
        return ck_fail(err, CK_E_MEMORY, "g2p rewrite: cannot copy %zu bytes", strlen(espeak));
    }
    const rule *variant = british ? k_rules_gb : k_rules_us;
    size_t n_variant = british ? COUNT(k_rules_gb) : COUNT(k_rules_us);
    int rc = CK_OK;
    for (size_t cps = 3; cps >= 1 && rc == CK_OK; cps--) {
        rc = apply_rules(&s, k_rules_en, COUNT(k_rules_en), cps, err);
        if (rc == CK_OK) {
            rc = apply_rules(&s, variant, n_variant, cps, err);
        }
    }
    if (rc == CK_OK) {
        rc = rewrite_syllabic(&s, err);
    }
    if (rc == CK_OK && !british) {
        rc = apply_rules(&s, k_rules_final_us, COUNT(k_rules_final_us), 0, err);
    }
    if (rc == CK_OK) {
        rc = apply_rules(&s, k_rules_final, COUNT(k_rules_final), 0, err);
    }
    if (rc != CK_OK) {
        free(s);
        return rc;
    }
    *out = s;
    return CK_OK;
}

/* ---- punctuation-preserving split (phonemizer's preserve_punctuation, Kokoro's marks) ---- */

static uint32_t normalise(uint32_t c)
{
    switch (c) {
    case 0x2018: case 0x2019: return '\'';
    case 0x00AB: case 0x201E: return 0x201C;
    case 0x00BB: return 0x201D;
    case 0x2013: case 0x2015: return 0x2014;
    case '[': case '{': return '(';
    case ']': case '}': return ')';
    default: return c;
    }
}

static int is_mark(uint32_t c)
{
    return (c != 0 && c < 0x80 && strchr(";:,.!?\"()", (int)c) != NULL) || c == 0x2014 ||
           c == 0x2026 || c == 0x201C || c == 0x201D;
}

static int is_space(uint32_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0xA0;
}

/* The text as normalised code points. */
typedef struct {
    uint32_t *cp;
    size_t n;
} cps;

static int decode_text(const char *text, cps *t, ck_error *err)
{
    size_t len = strlen(text), pos = 0, byte = 0, column = 0;
    if (ck_utf8_validate(text, len, &byte, &column) != CK_OK) {
        return ck_fail(err, CK_E_INPUT, "g2p: column %zu (byte %zu): invalid UTF-8", column,
                       byte + 1);
    }
    t->cp = malloc((len + 1) * sizeof *t->cp);
    if (t->cp == NULL) {
        return ck_fail(err, CK_E_MEMORY, "g2p: cannot allocate %zu code points", len);
    }
    t->n = 0;
    while (pos < len && ck_utf8_next(text, len, &pos, &t->cp[t->n]) == CK_OK) {
        t->cp[t->n] = normalise(t->cp[t->n]);
        t->n++;
    }
    return CK_OK;
}

/* End of the mark run that starts at i (a mark, or whitespace before a mark), or i if none. */
static size_t mark_run_end(const cps *t, size_t i)
{
    size_t j = i, end = i;
    while (j < t->n && (is_space(t->cp[j]) || is_mark(t->cp[j]))) {
        if (is_mark(t->cp[j])) {
            end = j + 1;
        }
        j++;
    }
    if (end == i) {
        return i;
    }
    while (end < t->n && is_space(t->cp[end])) {
        end++;
    }
    return end;
}

/* Appends the marks of run [i, end) as documented at ck_espeak_punctuate. */
static void emit_run(const cps *t, size_t i, size_t end, ck_strbuf *out)
{
    int lead = is_space(t->cp[i]), trail = is_space(t->cp[end - 1]), more = end < t->n;
    if (lead && !trail && more) {
        ck_strbuf_append(out, " ", 1);
    }
    while (is_space(t->cp[i])) {
        i++;
    }
    while (is_space(t->cp[end - 1])) {
        end--;
    }
    for (; i < end; i++) {
        sb_append_cp(out, is_space(t->cp[i]) ? ' ' : t->cp[i]);
    }
    if (trail && more) {
        ck_strbuf_append(out, " ", 1);
    }
}

/* Phonemizes piece [i, end) (trimmed; skipped when blank) and appends the result. */
static int emit_piece(const cps *t, size_t i, size_t end, ck_espeak_piece_fn fn, void *ctx, ck_strbuf *out,
                      ck_error *err)
{
    while (i < end && is_space(t->cp[i])) {
        i++;
    }
    while (end > i && is_space(t->cp[end - 1])) {
        end--;
    }
    if (i == end) {
        return CK_OK;
    }
    ck_strbuf text = {0};
    for (size_t k = i; k < end; k++) {
        sb_append_cp(&text, t->cp[k]);
    }
    char *piece = NULL, *phonemes = NULL;
    int rc = sb_finish(&text, &piece, err);
    if (rc == CK_OK) {
        rc = fn(ctx, piece, &phonemes, err);
    }
    if (rc == CK_OK) {
        ck_strbuf_append(out, phonemes, strlen(phonemes));
    }
    free(piece);
    free(phonemes);
    return rc;
}

/* Collapses runs of spaces to one and trims the edges, in place. */
static void squeeze_spaces(char *s)
{
    size_t w = 0;
    for (size_t r = 0; s[r] != '\0'; r++) {
        if (s[r] != ' ' || (w > 0 && s[w - 1] != ' ')) {
            s[w++] = s[r];
        }
    }
    while (w > 0 && s[w - 1] == ' ') {
        w--;
    }
    s[w] = '\0';
}

int ck_espeak_punctuate(const char *text, ck_espeak_piece_fn piece, void *ctx, char **out, ck_error *err)
{
    if (text == NULL || piece == NULL || out == NULL) {
        return ck_fail(err, CK_E_ARG, "g2p: null argument");
    }
    cps t = {NULL, 0};
    ck_strbuf b = {0};
    int rc = decode_text(text, &t, err);
    size_t start = 0;
    for (size_t i = 0; rc == CK_OK && i <= t.n; i++) {
        size_t end = i < t.n ? mark_run_end(&t, i) : i;
        if (i < t.n && end == i) {
            continue;
        }
        rc = emit_piece(&t, start, i, piece, ctx, &b, err);
        if (rc == CK_OK && end > i) {
            emit_run(&t, i, end, &b);
        }
        start = end;
        i = end > i ? end - 1 : i;
    }
    if (rc == CK_OK) {
        rc = sb_finish(&b, out, err);
        b.data = NULL;
    }
    if (rc == CK_OK) {
        squeeze_spaces(*out);
    }
    free(b.data);
    free(t.cp);
    return rc;
}

/* ---- espeak-ng ---- */

struct ck_espeak {
    char lang[8];      /* "en-us" | "en-gb" */
    int british;
    char version[64];  /* "espeak-ng 1.51" */
    int raw;           /* ck_espeak_raw: pieces are not rewritten */
};

#ifdef CK_HAVE_ESPEAK
#include <espeak-ng/speak_lib.h>
#include <pthread.h>

/* espeak-ng keeps one global state (voice, buffers) and is not thread-safe, so the process has one
 * lock around every call, and these two globals record what that global state holds. */
static pthread_mutex_t g_espeak_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_espeak_ready;       /* espeak_Initialize succeeded */
static char g_espeak_voice[8];   /* language of the voice last selected */

/* Selects the voice for lang, by name first ("en-us" is a voice file) then by language property
 * ("en-gb" is only a language of the default English voice). Caller holds the lock. */
static int select_voice(const char *lang, ck_error *err)
{
    if (strcmp(g_espeak_voice, lang) == 0) {
        return CK_OK;
    }
    if (espeak_SetVoiceByName(lang) != EE_OK) {
        espeak_VOICE props;
        memset(&props, 0, sizeof props);
        props.languages = lang;
        if (espeak_SetVoiceByProperties(&props) != EE_OK) {
            g_espeak_voice[0] = '\0';
            return ck_fail(err, CK_E_BACKEND, "g2p: espeak-ng has no voice for \"%s\"", lang);
        }
    }
    snprintf(g_espeak_voice, sizeof g_espeak_voice, "%s", lang);
    return CK_OK;
}

/* Initialises espeak-ng once per process and selects the voice. Caller holds the lock. */
static int espeak_ready(ck_espeak *g, ck_error *err)
{
    if (!g_espeak_ready) {
        int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL,
                                     espeakINITIALIZE_DONT_EXIT);
        if (rate < 0) {
            return ck_fail(err, CK_E_BACKEND, "g2p: espeak-ng failed to initialise (data missing?)");
        }
        g_espeak_ready = 1;
    }
    snprintf(g->version, sizeof g->version, "espeak-ng %s", espeak_Info(NULL));
    return select_voice(g->lang, err);
}

/* Appends espeak output with language-switch flags "(xx)" removed and whitespace as spaces. */
static void append_clause(ck_strbuf *b, const char *ph)
{
    for (const char *p = ph; *p != '\0'; p++) {
        const char *close = *p == '(' ? strchr(p, ')') : NULL;
        if (close != NULL) {
            p = close;
        } else {
            ck_strbuf_append(b, is_space((unsigned char)*p) ? " " : p, 1);
        }
    }
    ck_strbuf_append(b, " ", 1);
}

/* ck_espeak_piece_fn over espeak-ng: IPA with stress marks and '^' ties, then ck_espeak_rewrite. */
static int espeak_piece(void *ctx, const char *piece, char **phonemes, ck_error *err)
{
    ck_espeak *g = ctx;
    ck_strbuf b = {0};
    pthread_mutex_lock(&g_espeak_lock);
    int rc = espeak_ready(g, err);
    const void *cursor = piece;
    while (rc == CK_OK && cursor != NULL) {
        const char *ph = espeak_TextToPhonemes(&cursor, espeakCHARS_UTF8,
                                               espeakPHONEMES_IPA | espeakPHONEMES_TIE | ('^' << 8));
        if (ph == NULL) {
            break;
        }
        append_clause(&b, ph);
    }
    pthread_mutex_unlock(&g_espeak_lock);
    char *raw = NULL;
    if (rc != CK_OK) {
        free(b.data);
        return rc;
    }
    rc = sb_finish(&b, &raw, err);
    if (rc == CK_OK) {
        squeeze_spaces(raw);
        rc = g->raw ? CK_OK : ck_espeak_rewrite(raw, g->british, phonemes, err);
    }
    if (rc == CK_OK && g->raw) {
        *phonemes = raw;
        raw = NULL;
    }
    free(raw);
    return rc;
}
#endif

int ck_espeak_open(ck_espeak **out, const char *lang, ck_error *err)
{
    if (out == NULL) {
        return ck_fail(err, CK_E_ARG, "g2p: null out");
    }
    *out = NULL;
    ck_lang which = CK_LANG_EN_US;
    ck_error lang_err = {CK_OK, ""};
    if (ck_lang_parse(lang, &which, &lang_err) != CK_OK) {
        return ck_fail(err, CK_E_ARG, "g2p: %s", lang_err.message);
    }
    int british = which == CK_LANG_EN_GB;
    lang = ck_lang_name(which);
#ifdef CK_HAVE_ESPEAK
    ck_espeak *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return ck_fail(err, CK_E_MEMORY, "g2p: cannot allocate");
    }
    snprintf(g->lang, sizeof g->lang, "%s", lang);
    g->british = british;
    pthread_mutex_lock(&g_espeak_lock);
    int rc = espeak_ready(g, err);
    pthread_mutex_unlock(&g_espeak_lock);
    if (rc != CK_OK) {
        free(g);
        return rc;
    }
    *out = g;
    return CK_OK;
#else
    return ck_fail(err, CK_E_BACKEND, "g2p: built without espeak-ng (CK_ESPEAK=OFF)");
#endif
}

int ck_espeak_phonemize(ck_espeak *g, const char *text, char **phonemes, ck_error *err)
{
    if (g == NULL || text == NULL || phonemes == NULL) {
        return ck_fail(err, CK_E_ARG, "g2p: null argument");
    }
#ifdef CK_HAVE_ESPEAK
    return ck_espeak_punctuate(text, espeak_piece, g, phonemes, err);
#else
    return ck_fail(err, CK_E_BACKEND, "g2p: built without espeak-ng");
#endif
}

int ck_espeak_raw(const ck_espeak *g, const char *text, char **raw, ck_error *err)
{
    if (g == NULL || text == NULL || raw == NULL) {
        return ck_fail(err, CK_E_ARG, "g2p: null argument");
    }
#ifdef CK_HAVE_ESPEAK
    ck_espeak copy = *g;
    copy.raw = 1;
    return ck_espeak_punctuate(text, espeak_piece, &copy, raw, err);
#else
    return ck_fail(err, CK_E_BACKEND, "g2p: built without espeak-ng");
#endif
}

const char *ck_espeak_version(const ck_espeak *g)
{
    return g != NULL ? g->version : NULL;
}

void ck_espeak_close(ck_espeak *g)
{
    free(g);
}
