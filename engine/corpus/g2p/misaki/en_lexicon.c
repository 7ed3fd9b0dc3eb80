/* en_lexicon.c - misaki's gold/silver lexicons: read, pin, parse with cJSON once, grow, check every
 * phoneme against the vocabulary, then serve lookups from one string pool and two open-addressing
 * tables (FNV-1a, power-of-two capacity, linear probing). Immutable after ck_lexicon_open. */
#include "en_lexicon.h"

#include <cjson/cJSON.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "sha256.h"
#include "utf8.h"
#include "json.h"

/* SHA-256 of misaki v0.9.4's misaki/data/ files (data/misaki/MANIFEST), indexed [british][kind]. */
static const char *const k_pinned[2][2] = {
    {"dc414872a49a28ae6c141463d502fd945f3b2fde040484fdc47d00cc4612686f",
     "de8f67be911bb6c659187b4a65fd966b6a30e56350e0f790d763210b053ac475"},
    {"29e62f4b60261c88f7f3c2c7811ca3825978948090b72d2b27d565b729282f71",
     "48131e2d92ccc41655f4543e87e0f938e71463eb5a54be7f0693bb712ebb6bce"},
};
static const char *const k_names[2][2] = {{"us_gold.json", "us_silver.json"},
                                          {"gb_gold.json", "gb_silver.json"}};

#define MAX_LEXICON_BYTES ((size_t)64 << 20)

/* A slot, 8 bytes (365k of them for en-us, so the size is the lexicon's memory): key = pool
 * offset of the NUL-terminated key, 0 for an empty slot (pool offset 0 holds "", never a key);
 * value = pool offset of a NUL-terminated phoneme string, or POS_BIT | index into the POS
 * table. */
typedef struct {
    uint32_t key;
    uint32_t value;
} slot;

#define POS_BIT 0x80000000u

typedef struct {
    slot *slots;
    size_t cap;    /* power of two */
    size_t count;
    char sha256[65];
} table;

struct ck_lexicon {
    int british;
    char *pool;    /* keys and values, NUL-terminated UTF-8 */
    size_t pool_len, pool_cap;
    ck_lex_pos *pos;  /* POS-keyed entries, pointers into pool (fixed up after loading) */
    size_t n_pos, pos_cap;
    table t[2];
};

static uint32_t fnv1a(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    }
    return h;
}

/* Appends n bytes and a NUL to the pool; returns the offset or UINT32_MAX when out of memory. */
static uint32_t pool_add(ck_lexicon *lex, const char *s, size_t n)
{
    if (lex->pool_len + n + 1 > lex->pool_cap) {
        size_t cap = lex->pool_cap ? lex->pool_cap : ((size_t)1 << 20);
        while (cap < lex->pool_len + n + 1) {
            cap *= 2;
        }
        if (cap > POS_BIT) {  /* offsets stay below the POS bit */
            return UINT32_MAX;
        }
        char *p = realloc(lex->pool, cap);
        if (p == NULL) {
            return UINT32_MAX;
        }
        lex->pool = p;
        lex->pool_cap = cap;
    }
    uint32_t off = (uint32_t)lex->pool_len;
    memcpy(lex->pool + off, s, n);
    lex->pool[off + n] = '\0';
    lex->pool_len += n + 1;
    return off;
}

/* Slot of key, n bytes without a NUL (empty slot where it would go when absent). A stored key
 * equals it when its first n bytes do (strncmp stops at the stored key's NUL, so a shorter key
 * differs there) and its NUL comes next. */
static slot *find_slot(const ck_lexicon *lex, const table *t, const char *key, size_t n)
{
    size_t mask = t->cap - 1, i = fnv1a(key, n) & mask;
    for (;;) {
        slot *s = &t->slots[i];
        if (s->key == 0 ||
            (strncmp(lex->pool + s->key, key, n) == 0 && lex->pool[s->key + n] == '\0')) {
            return s;
        }
        i = (i + 1) & mask;
    }
}

/* Inserts key -> value unless present (the first insert wins). */
static void table_put(ck_lexicon *lex, table *t, uint32_t key, size_t key_len, uint32_t value)
{
    slot *s = find_slot(lex, t, lex->pool + key, key_len);
    if (s->key == 0) {
        s->key = key;
        s->value = value;
        t->count++;
    }
}

/* Checks every code point of phonemes against the vocabulary. */
static int check_phonemes(const char *path, const char *word, const char *ps, const ck_vocab *vocab,
                          ck_error *err)
{
    size_t n = strlen(ps), pos = 0;
    uint32_t cp = 0;
    while (pos < n) {
        if (ck_utf8_next(ps, n, &pos, &cp) != CK_OK) {
            return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": invalid UTF-8", path, word);
        }
        if (ck_vocab_find(vocab, cp) < 0) {
            char u[5] = {0};
            ck_utf8_encode(cp, u);
            return ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": U+%04X '%s' not in the vocabulary",
                           path, word, (unsigned)cp, u);
        }
    }
    return CK_OK;
}

/* misaki's grow_dictionary forms of an ASCII key: Capitalised (first upper, rest lower). */
static int is_lower(const char *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (k[i] >= 'A' && k[i] <= 'Z') {
            return 0;
        }
    }
    return 1;
}

static void capitalize(const char *k, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (i == 0 && c >= 'a' && c <= 'z') {
            c = (char)(c - 32);
        } else if (i > 0 && c >= 'A' && c <= 'Z') {
            c = (char)(c + 32);
        }
        out[i] = c;
    }
}

/* Loading frees far more than it keeps: the parse tree (~4x the file, in small blocks), the
 * slots copied for growing, the pool's old buffers. glibc keeps freed heap resident; handing it
 * back here keeps it out of the peak RSS of every text run (about 35 MB for en-us). */
static void release_freed_heap(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Rehashes t into the smallest power-of-two capacity it fills to at most 3/4: growing needed room
 * for twice the file's keys, and the slots are most of the lexicon's memory (en-us: 8 MiB -> 4). */
static int shrink_table(const ck_lexicon *lex, table *t, const char *path, ck_error *err)
{
    size_t cap = 16;
    while (4 * t->count > 3 * cap) {
        cap *= 2;
    }
    if (cap >= t->cap) {
        return CK_OK;
    }
    table small = *t;
    small.cap = cap;
    small.slots = calloc(cap, sizeof *small.slots);
    if (small.slots == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: cannot allocate %zu slots", path, cap);
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].key != 0) {
            const char *k = lex->pool + t->slots[i].key;
            *find_slot(lex, &small, k, strlen(k)) = t->slots[i];
        }
    }
    free(t->slots);
    *t = small;
    return CK_OK;
}

/* Parses one file into table t (file entries first, then the grown forms). */
static int load_table(ck_lexicon *lex, table *t, const char *path, const char *pinned,
                      int check_sha256, const ck_vocab *vocab, ck_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = ck_file_read_all(path, "lexicon", MAX_LEXICON_BYTES, &text, &len, err);
    if (rc != CK_OK) {
        return rc;
    }
    unsigned char digest[32];
    rc = ck_sha256(text, len, digest);
    if (rc != CK_OK) {
        free(text);
        return ck_fail(err, rc, "%s: SHA-256 failed", path);
    }
    ck_sha256_hex(digest, t->sha256);
    if (check_sha256 && strcmp(t->sha256, pinned) != 0) {
        free(text);
        return ck_fail(err, CK_E_HASH, "%s: SHA-256 %s, expected %s (misaki v0.9.4 data)", path,
                       t->sha256, pinned);
    }
    size_t at = 0;
    const char *why = NULL;
    cJSON *root = ck_json_parse(text, len, &at, &why);
    free(text);
    if (root == NULL) {
        return ck_fail(err, CK_E_FORMAT, "%s: %s at byte %zu", path, why, at);
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ck_fail(err, CK_E_FORMAT, "%s: not a JSON object", path);
    }
    size_t n = 0;
    for (const cJSON *it = root->child; it != NULL; it = it->next) {
        n++;
    }
    t->cap = 16;
    while (t->cap < 4 * n) {  /* grown tables hold up to 2n keys: load factor <= 1/2 */
        t->cap *= 2;
    }
    t->slots = calloc(t->cap, sizeof *t->slots);
    if (t->slots == NULL) {
        cJSON_Delete(root);
        return ck_fail(err, CK_E_MEMORY, "%s: cannot allocate %zu slots", path, t->cap);
    }
    rc = CK_OK;
    for (const cJSON *it = root->child; it != NULL && rc == CK_OK; it = it->next) {
        const char *word = it->string;
        size_t key_len = strlen(word);
        if (key_len == 0 || key_len > 255) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": key length %zu, expected 1..255",
                         path, word, key_len);
            break;
        }
        uint32_t key = pool_add(lex, word, key_len), value = 0;
        if (key == UINT32_MAX) {
            rc = ck_fail(err, CK_E_MEMORY, "%s: cannot grow the string pool", path);
        } else if (cJSON_IsString(it)) {
            rc = check_phonemes(path, word, it->valuestring, vocab, err);
            value = pool_add(lex, it->valuestring, strlen(it->valuestring));
        } else if (cJSON_IsObject(it)) {
            if (lex->n_pos == lex->pos_cap) {
                size_t cap = lex->pos_cap ? 2 * lex->pos_cap : 1024;
                ck_lex_pos *p = realloc(lex->pos, cap * sizeof *p);
                if (p == NULL) {
                    rc = ck_fail(err, CK_E_MEMORY, "%s: cannot grow the POS table", path);
                    break;
                }
                lex->pos = p;
                lex->pos_cap = cap;
            }
            ck_lex_pos *e = &lex->pos[lex->n_pos];
            memset(e, 0, sizeof *e);
            int has_default = 0;
            for (const cJSON *v = it->child; v != NULL && rc == CK_OK; v = v->next) {
                if (e->n == CK_LEX_POS_MAX) {
                    rc = ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": more than %d tags", path,
                                 word, CK_LEX_POS_MAX);
                } else if (!cJSON_IsString(v) && !cJSON_IsNull(v)) {
                    rc = ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": tag \"%s\": not a string or "
                                 "null", path, word, v->string);
                } else {
                    has_default |= strcmp(v->string, "DEFAULT") == 0;
                    /* offsets now, pointers once the pool stops moving */
                    e->tag[e->n] = (const char *)(uintptr_t)pool_add(lex, v->string,
                                                                     strlen(v->string));
                    if (cJSON_IsString(v)) {
                        rc = check_phonemes(path, word, v->valuestring, vocab, err);
                        e->phonemes[e->n] = (const char *)(uintptr_t)(
                            1 + (uintptr_t)pool_add(lex, v->valuestring, strlen(v->valuestring)));
                    }
                    e->n++;
                }
            }
            if (rc == CK_OK && !has_default) {
                rc = ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": no DEFAULT", path, word);
            }
            value = POS_BIT | (uint32_t)lex->n_pos++;
        } else {
            rc = ck_fail(err, CK_E_FORMAT, "%s: entry \"%s\": not a string or an object", path,
                         word);
        }
        if (rc == CK_OK && (value == UINT32_MAX || lex->pool == NULL)) {
            rc = ck_fail(err, CK_E_MEMORY, "%s: cannot grow the string pool", path);
        }
        if (rc == CK_OK) {
            table_put(lex, t, key, key_len, value);
        }
    }
    cJSON_Delete(root);
    release_freed_heap();
    if (rc != CK_OK) {
        return rc;
    }
    /* grow_dictionary: only keys of the file generate forms; existing keys win */
    size_t n_file = t->cap;
    slot *orig = malloc(n_file * sizeof *orig);
    if (orig == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: cannot allocate", path);
    }
    memcpy(orig, t->slots, n_file * sizeof *orig);
    char form[256];
    for (size_t i = 0; i < n_file && rc == CK_OK; i++) {
        const slot *s = &orig[i];
        const char *k = lex->pool + s->key;
        size_t key_len = strlen(k);
        if (s->key == 0 || key_len < 2) {
            continue;
        }
        capitalize(k, key_len, form);
        int lower = is_lower(k, key_len);
        if (lower) {
            if (memcmp(form, k, key_len) == 0) {
                continue;  /* no letters to capitalise */
            }
        } else {
            if (memcmp(form, k, key_len) != 0) {
                continue;  /* neither lower case nor Capitalised */
            }
            for (size_t j = 0; j < key_len; j++) {
                form[j] = (char)(form[j] >= 'A' && form[j] <= 'Z' ? form[j] + 32 : form[j]);
            }
        }
        slot *dst = find_slot(lex, t, form, key_len);
        if (dst->key != 0) {
            continue;
        }
        uint32_t key = pool_add(lex, form, key_len);
        if (key == UINT32_MAX) {
            rc = ck_fail(err, CK_E_MEMORY, "%s: cannot grow the string pool", path);
            break;
        }
        dst = find_slot(lex, t, form, key_len);
        dst->key = key;
        dst->value = s->value;
        t->count++;
    }
    free(orig);
    rc = rc ? rc : shrink_table(lex, t, path, err);
    release_freed_heap();
    return rc;
}

int ck_lexicon_open(ck_lexicon **out, const char *dir, int british, int check_sha256,
                    const ck_vocab *vocab, ck_error *err)
{
    if (out == NULL || dir == NULL) {
        return ck_fail(err, CK_E_ARG, "lexicon: null argument");
    }
    *out = NULL;
    ck_lexicon *lex = calloc(1, sizeof *lex);
    if (lex == NULL) {
        return ck_fail(err, CK_E_MEMORY, "lexicon: cannot allocate");
    }
    lex->british = british != 0;
    vocab = vocab != NULL ? vocab : ck_vocab_embedded();
    int rc = pool_add(lex, "", 0) == 0 ? CK_OK  /* offset 0: the empty slot's key */
                                       : ck_fail(err, CK_E_MEMORY, "lexicon: cannot allocate");
    for (int k = 0; k < 2 && rc == CK_OK; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, k_names[lex->british][k]);
        rc = load_table(lex, &lex->t[k], path, k_pinned[lex->british][k], check_sha256, vocab, err);
    }
    if (rc != CK_OK) {
        ck_lexicon_close(lex);
        return rc;
    }
    for (size_t i = 0; i < lex->n_pos; i++) {  /* offsets -> pointers */
        ck_lex_pos *e = &lex->pos[i];
        for (size_t j = 0; j < e->n; j++) {
            e->tag[j] = lex->pool + (uintptr_t)e->tag[j];
            uintptr_t v = (uintptr_t)e->phonemes[j];
            e->phonemes[j] = v == 0 ? NULL : lex->pool + (v - 1);
        }
    }
    *out = lex;
    return CK_OK;
}

int ck_lexicon_get(const ck_lexicon *lex, ck_lex_kind kind, const char *word, size_t len,
                   ck_lex_entry *e)
{
    if (lex == NULL || word == NULL || len == 0 || len > 255) {
        return 0;
    }
    if (memchr(word, '\0', len) != NULL) {
        return 0;  /* no key holds a NUL (cJSON's strings end at one), and find_slot needs that */
    }
    const table *t = &lex->t[kind == CK_LEX_SILVER];
    const slot *s = find_slot(lex, t, word, len);
    if (s->key == 0) {
        return 0;
    }
    if (e != NULL) {
        e->phonemes = s->value & POS_BIT ? NULL : lex->pool + s->value;
        e->pos = s->value & POS_BIT ? &lex->pos[s->value & ~POS_BIT] : NULL;
    }
    return 1;
}

size_t ck_lexicon_size(const ck_lexicon *lex, ck_lex_kind kind)
{
    return lex != NULL ? lex->t[kind == CK_LEX_SILVER].count : 0;
}

const char *ck_lexicon_sha256(const ck_lexicon *lex, ck_lex_kind kind)
{
    return lex != NULL ? lex->t[kind == CK_LEX_SILVER].sha256 : NULL;
}

int ck_lexicon_british(const ck_lexicon *lex)
{
    return lex != NULL && lex->british;
}

void ck_lexicon_close(ck_lexicon *lex)
{
    if (lex == NULL) {
        return;
    }
    free(lex->t[0].slots);
    free(lex->t[1].slots);
    free(lex->pos);
    free(lex->pool);
    free(lex);
}

/* ---- the process-wide cache ---- */

#include <pthread.h>
#include <sys/stat.h>

/* Loaded variants, never freed: every reader and thread of the process shares them (one load of
 * ~0.2 s per variant and directory, however many ck_model_tokenize calls follow). */
typedef struct cached {
    struct cached *next;
    char dir[4096];
    int british, check_sha256;
    ck_lexicon *lex;
} cached;

static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cached *g_cache;

int ck_lexicon_shared(const char *dir, int british, int check_sha256, const ck_lexicon **out,
                      ck_error *err)
{
    if (out == NULL) {
        return ck_fail(err, CK_E_ARG, "lexicon: null out");
    }
    *out = NULL;
    dir = dir != NULL ? dir : ck_lexicon_default_dir();
    british = british != 0;
    pthread_mutex_lock(&g_cache_lock);
    int rc = CK_OK;
    cached *c = g_cache;
    while (c != NULL && !(strcmp(c->dir, dir) == 0 && c->british == british &&
                          c->check_sha256 == check_sha256)) {
        c = c->next;
    }
    if (c == NULL) {
        c = calloc(1, sizeof *c);
        if (c == NULL) {
            rc = ck_fail(err, CK_E_MEMORY, "lexicon: cannot allocate");
        } else {
            snprintf(c->dir, sizeof c->dir, "%s", dir);
            c->british = british;
            c->check_sha256 = check_sha256;
            rc = ck_lexicon_open(&c->lex, dir, british, check_sha256, NULL, err);
            if (rc == CK_OK) {
                c->next = g_cache;
                g_cache = c;
            } else {
                free(c);
                c = NULL;
            }
        }
    }
    if (c != NULL) {
        *out = c->lex;
    }
    pthread_mutex_unlock(&g_cache_lock);
    return rc;
}

const char *ck_lexicon_default_dir(void)
{
#ifdef CK_MISAKI_INSTALL_DIR
    struct stat st;
    if (stat(CK_MISAKI_INSTALL_DIR "/us_gold.json", &st) == 0) {
        return CK_MISAKI_INSTALL_DIR;
    }
#endif
#ifdef CK_MISAKI_SOURCE_DIR
    return CK_MISAKI_SOURCE_DIR;
#else
    return "data/misaki";
#endif
}
