/* g2p.c - the G2P interface over its two backends: a table of operations per kind, each backend's
 * open, phonemize and metadata adapted to ck_g2p_result; must not read lines or the vocabulary. */
#include "g2p.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "en_chars.h"
#include "en_lexicon.h"
#include "en_text.h"
#include "espeak.h"
#include "lang.h"
#include "misaki.h"

#define G2P_META_MAX 8

struct ck_g2p {
    const struct g2p_backend *backend;
    ck_lang lang;
    ck_espeak *espeak;       /* the espeak backend, or misaki's fallback (NULL for misaki in a
                                build without espeak-ng) */
    ck_misaki *misaki;
    const ck_lexicon *lex;   /* process-wide (ck_lexicon_shared) */
    char version[160];
    char meta_key[G2P_META_MAX][48], meta_value[G2P_META_MAX][160];
    size_t n_meta;
};

/* One backend: its promises, and open (after the common fields are set) and phonemize. */
typedef struct g2p_backend {
    ck_g2p_info info;
    int ascii_forms; /* 1: reads the code points that have an ASCII form (ck_g2p_reads) */
    int (*open)(ck_g2p *g, const char *lexicon_dir, ck_error *err);
    int (*phonemize)(const ck_g2p *g, const char *text, ck_g2p_result *res, ck_error *err);
} g2p_backend;

int ck_g2p_kind_parse(const char *name, ck_g2p_kind *kind, ck_error *err)
{
    if (name == NULL || strcmp(name, "misaki") == 0) {
        *kind = CK_G2P_MISAKI;
        return CK_OK;
    }
    if (strcmp(name, "espeak") == 0) {
        *kind = CK_G2P_ESPEAK;
        return CK_OK;
    }
    return ck_fail(err, CK_E_ARG, "g2p \"%s\": expected \"misaki\" or \"espeak\"", name);
}

static void add_meta(ck_g2p *g, const char *key, const char *value)
{
    if (g->n_meta < G2P_META_MAX) {
        snprintf(g->meta_key[g->n_meta], sizeof g->meta_key[0], "%s", key);
        snprintf(g->meta_value[g->n_meta], sizeof g->meta_value[0], "%s", value);
        g->n_meta++;
    }
}

/* ---- espeak: one chunk, the whole line through ck_espeak_phonemize ---- */

static int espeak_open(ck_g2p *g, const char *lexicon_dir, ck_error *err)
{
    (void)lexicon_dir;
    int rc = ck_espeak_open(&g->espeak, ck_lang_name(g->lang), err);
    if (rc == CK_OK) {
        snprintf(g->version, sizeof g->version, "%s", ck_espeak_version(g->espeak));
    }
    return rc;
}

static int espeak_phonemize(const ck_g2p *g, const char *text, ck_g2p_result *res, ck_error *err)
{
    char *phonemes = NULL;
    int rc = ck_espeak_phonemize(g->espeak, text, &phonemes, err);
    if (rc == CK_OK && (res->chunks = malloc(sizeof *res->chunks)) == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "g2p: cannot allocate");
    }
    if (rc != CK_OK) {
        free(phonemes);
        return rc;
    }
    res->chunks[0] = phonemes;
    res->n_chunks = 1;
    return CK_OK;
}

/* ---- misaki: ck_en_g2p_line with the heuristic tagger, espeak-ng for the unknown words ---- */

static int espeak_raw(void *ctx, const char *text, char **raw, ck_error *err)
{
    return ck_espeak_raw(ctx, text, raw, err);
}

/* The shared lexicons, espeak-ng for the fallback words, the metadata. */
static int misaki_open(ck_g2p *g, const char *lexicon_dir, ck_error *err)
{
    int british = g->lang == CK_LANG_EN_GB;
    int rc = ck_lexicon_shared(lexicon_dir, british, 1, &g->lex, err);
    if (rc != CK_OK) {
        return rc;
    }
#ifdef CK_HAVE_ESPEAK
    rc = ck_espeak_open(&g->espeak, ck_lang_name(g->lang), err);
    if (rc != CK_OK) {
        return rc;
    }
#endif
    ck_misaki_options mo = {british, g->lex, g->espeak != NULL ? espeak_raw : NULL, g->espeak};
    rc = ck_misaki_open(&g->misaki, &mo, err);
    if (rc != CK_OK) {
        return rc;
    }
    snprintf(g->version, sizeof g->version, "misaki (%s)", CK_MISAKI_COMPAT);
    add_meta(g, "g2p_backend", "misaki");
    add_meta(g, "g2p_compat", CK_MISAKI_COMPAT);
    add_meta(g, "g2p_tagger", ck_en_tagger_name(CK_TAGGER_HEURISTIC));
    add_meta(g, "g2p_fallback", g->espeak != NULL ? ck_espeak_version(g->espeak)
                                                  : "none (built without espeak-ng)");
    char key[48];
    snprintf(key, sizeof key, "g2p_lexicon_%s_gold_sha256", british ? "gb" : "us");
    add_meta(g, key, ck_lexicon_sha256(g->lex, CK_LEX_GOLD));
    snprintf(key, sizeof key, "g2p_lexicon_%s_silver_sha256", british ? "gb" : "us");
    add_meta(g, key, ck_lexicon_sha256(g->lex, CK_LEX_SILVER));
    return CK_OK;
}

static void misaki_free(void *backend)
{
    ck_misaki_result_free(backend);
    free(backend);
}

static int misaki_phonemize(const ck_g2p *g, const char *text, ck_g2p_result *res, ck_error *err)
{
    ck_misaki_result *mr = calloc(1, sizeof *mr);
    if (mr == NULL) {
        return ck_fail(err, CK_E_MEMORY, "g2p: cannot allocate");
    }
    res->backend = mr;
    res->backend_free = misaki_free;
    int rc = ck_en_g2p_line(g->misaki, CK_TAGGER_HEURISTIC, text, mr, err);
    if (rc != CK_OK) {
        return rc;
    }
    res->chunks = mr->chunks;
    res->n_chunks = mr->n_chunks;
    size_t unresolved = 0;
    for (size_t i = 0; i < mr->n_tokens; i++) {
        unresolved += mr->tokens[i].phonemes == NULL;
    }
    res->fallbacks = calloc(mr->n_fallbacks + 1, sizeof *res->fallbacks);
    res->unresolved = calloc(unresolved + 1, sizeof *res->unresolved);
    if (res->fallbacks == NULL || res->unresolved == NULL) {
        return ck_fail(err, CK_E_MEMORY, "g2p: cannot allocate");
    }
    for (size_t i = mr->n_fallbacks; i-- > 0;) { /* misaki's order is right to left */
        ck_g2p_word w = {mr->fallbacks[i].text, mr->fallbacks[i].ps};
        res->fallbacks[res->n_fallbacks++] = w;
    }
    for (size_t i = 0; i < mr->n_tokens; i++) {
        if (mr->tokens[i].phonemes == NULL) {
            ck_g2p_word w = {mr->tokens[i].text, NULL};
            res->unresolved[res->n_unresolved++] = w;
        }
    }
    return CK_OK;
}

/* ---- the interface ---- */

static const g2p_backend k_backends[] = {
    [CK_G2P_MISAKI] = {{"misaki", 1}, 1, misaki_open, misaki_phonemize},
    [CK_G2P_ESPEAK] = {{"espeak", 0}, 0, espeak_open, espeak_phonemize},
};

int ck_g2p_open(ck_g2p **out, ck_g2p_kind kind, const char *lang, const char *lexicon_dir,
                ck_error *err)
{
    if (out == NULL) {
        return ck_fail(err, CK_E_ARG, "g2p: null out");
    }
    *out = NULL;
    if (kind != CK_G2P_MISAKI && kind != CK_G2P_ESPEAK) {
        return ck_fail(err, CK_E_ARG, "g2p: kind %d: expected 0 (misaki) or 1 (espeak)", (int)kind);
    }
    ck_lang which = CK_LANG_EN_US;
    ck_error lang_err = {CK_OK, ""};
    if (ck_lang_parse(lang, &which, &lang_err) != CK_OK) {
        return ck_fail(err, CK_E_ARG, "g2p: %s", lang_err.message);
    }
    ck_g2p *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return ck_fail(err, CK_E_MEMORY, "g2p: cannot allocate");
    }
    g->backend = &k_backends[kind];
    g->lang = which;
    int rc = g->backend->open(g, lexicon_dir, err);
    if (rc != CK_OK) {
        ck_g2p_close(g);
        return rc;
    }
    *out = g;
    return CK_OK;
}

int ck_g2p_phonemize(const ck_g2p *g, const char *text, ck_g2p_result *res, ck_error *err)
{
    if (res != NULL) {
        memset(res, 0, sizeof *res);
    }
    if (g == NULL || text == NULL || res == NULL) {
        return ck_fail(err, CK_E_ARG, "g2p: null argument");
    }
    return g->backend->phonemize(g, text, res, err);
}

void ck_g2p_result_free(ck_g2p_result *res)
{
    if (res == NULL) {
        return;
    }
    if (res->backend_free != NULL) {
        res->backend_free(res->backend); /* owns the chunks */
    } else {
        for (size_t i = 0; i < res->n_chunks; i++) {
            free(res->chunks[i]);
        }
        free(res->chunks);
    }
    free(res->fallbacks);
    free(res->unresolved);
    memset(res, 0, sizeof *res);
}

const ck_g2p_info *ck_g2p_info_of(const ck_g2p *g)
{
    return g != NULL ? &g->backend->info : NULL;
}

int ck_g2p_reads(const ck_g2p *g, uint32_t cp)
{
    return g != NULL && g->backend->ascii_forms && ck_cp_ascii_form(cp);
}

int ck_g2p_reads_symbol(const ck_g2p *g, uint32_t cp)
{
    return g != NULL && g->backend == &k_backends[CK_G2P_MISAKI] && ck_cp_symbol(cp);
}

int ck_g2p_next_override(const ck_g2p *g, const char *s, size_t len, size_t from, size_t *start,
                         size_t *end)
{
    size_t open = 0, mid = 0, close = 0;
    if (g == NULL || g->backend != &k_backends[CK_G2P_MISAKI]) {
        return 0;   /* espeak reads the brackets as text */
    }
    while (ck_misaki_next_link(s, len, from, &open, &mid, &close)) {
        /* a /phonemes/ feature: "(/", at least one more byte, "/)" (misaki strips extra slashes) */
        if (close >= mid + 4 && s[mid + 2] == '/' && s[close - 1] == '/') {
            *start = mid + 3;
            *end = close - 1;
            return 1;
        }
        from = close + 1;
    }
    return 0;
}

const char *ck_g2p_version(const ck_g2p *g)
{
    return g != NULL ? g->version : NULL;
}

int ck_g2p_meta(const ck_g2p *g, size_t i, const char **key, const char **value)
{
    if (g == NULL || key == NULL || value == NULL || i >= g->n_meta) {
        return 0;
    }
    *key = g->meta_key[i];
    *value = g->meta_value[i];
    return 1;
}

void ck_g2p_close(ck_g2p *g)
{
    if (g != NULL) {
        ck_misaki_close(g->misaki);
        ck_espeak_close(g->espeak);
        free(g);
    }
}
