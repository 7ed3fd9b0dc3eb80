/* test_misaki.c - the misaki backend against goldens made with misaki's own code
 * (tests/fixtures/misaki/, see its README.md): lexicon sizes and validation, num2words words,
 * misaki's espeak rewrite, and every tokens-golden line (targeted_us, targeted_gb,
 * corpus_us_closed) reproduced byte for byte from the given tokens and tags. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <time.h>

#include "ck_test.h"
#include "en_lexicon.h"
#include "en_num.h"
#include "en_text.h"
#include "espeak.h"
#include "misaki.h"
#include "reader.h"
#include "vocab.h"
#include "strbuf.h"

static ck_lexicon *g_lex[2];
static ck_espeak *g_espeak[2];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const ck_lexicon *lexicon(int british)
{
    if (g_lex[british] == NULL) {
        ck_error err = {CK_OK, ""};
        double t0 = now_s();
        int rc = ck_lexicon_open(&g_lex[british], ck_test_path("data/misaki"), british, 1, NULL,
                                 &err);
        if (rc != CK_OK) {
            fprintf(stderr, "    %s\n", err.message);
        }
        fprintf(stderr, "    [%s lexicons loaded in %.3f s]\n", british ? "gb" : "us",
                now_s() - t0);
    }
    return g_lex[british];
}

/* Reads a JSONL fixture; calls fn on each parsed line; returns the line count. */
static size_t each_line(const char *rel, void (*fn)(const cJSON *, void *), void *ctx)
{
    FILE *f = fopen(ck_test_path(rel), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *line = NULL;
    size_t cap = 0, n = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        cJSON *j = cJSON_ParseWithLength(line, (size_t)len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        fn(j, ctx);
        cJSON_Delete(j);
        n++;
    }
    free(line);
    fclose(f);
    return n;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- lexicon ---- */

static void test_lexicon_sizes(void)
{
    const ck_lexicon *us = lexicon(0), *gb = lexicon(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(us);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gb);
    CU_ASSERT_EQUAL(ck_lexicon_size(us, CK_LEX_GOLD), 178646);
    CU_ASSERT_EQUAL(ck_lexicon_size(us, CK_LEX_SILVER), 186722);
    CU_ASSERT_EQUAL(ck_lexicon_size(gb, CK_LEX_GOLD), 172932);
    CU_ASSERT_EQUAL(ck_lexicon_size(gb, CK_LEX_SILVER), 219532);
    CU_ASSERT_STRING_EQUAL(ck_lexicon_sha256(us, CK_LEX_GOLD),
                           "dc414872a49a28ae6c141463d502fd945f3b2fde040484fdc47d00cc4612686f");
    ck_lex_entry e;
    CU_ASSERT_EQUAL_FATAL(ck_lexicon_get(us, CK_LEX_GOLD, "that", 4, &e), 1);
    CU_ASSERT_PTR_NULL(e.phonemes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e.pos);
    CU_ASSERT_EQUAL_FATAL(ck_lexicon_get(us, CK_LEX_GOLD, "Hello", 5, &e), 1);  /* grown */
    CU_ASSERT_STRING_EQUAL(e.phonemes, "həlˈO");
    CU_ASSERT_EQUAL(ck_lexicon_get(us, CK_LEX_GOLD, "hellox", 6, &e), 0);
}

/* A lexicon directory with one bad entry is one error naming the file and the entry. */
static void test_lexicon_rejects_bad_entry(void)
{
    const char *dir = ck_test_tmp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/us_gold.json", dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"cat\": \"kˈæt\", \"dog\": \"dˈɔgx\"}", f);  /* ASCII g, x: not Kokoro symbols */
    fclose(f);
    snprintf(path, sizeof path, "%s/us_silver.json", dir);
    f = fopen(path, "wb");
    fputs("{}", f);
    fclose(f);
    ck_lexicon *lex = (ck_lexicon *)&lex;
    ck_error err = {CK_OK, ""};
    CU_ASSERT_EQUAL(ck_lexicon_open(&lex, dir, 0, 0, NULL, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NULL(lex);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "us_gold.json: entry \"dog\": U+0067 'g'"));
    err = (ck_error){CK_OK, ""};
    CU_ASSERT_EQUAL(ck_lexicon_open(&lex, dir, 0, 1, NULL, &err), CK_E_HASH);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "SHA-256"));
    err = (ck_error){CK_OK, ""};
    CU_ASSERT_EQUAL(ck_lexicon_open(&lex, "/nonexistent", 1, 1, NULL, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "gb_gold.json"));
}

/* Writes us_gold.json (gold) and us_silver.json ({}) into a fresh temp dir. */
static const char *lexicon_dir(const char *gold)
{
    const char *dir = ck_test_tmp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/us_gold.json", dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(gold, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/us_silver.json", dir);
    f = fopen(path, "wb");
    fputs("{}", f);
    fclose(f);
    return dir;
}

/* Keys are found by their exact bytes: a stored key's prefix or extension is absent, a word with a
 * NUL is absent; grown forms and the shrunk table keep every key. */
static void test_lexicon_exact_keys(void)
{
    ck_lexicon *lex = NULL;
    ck_error err = {CK_OK, ""};
    const char *dir = lexicon_dir("{\"cat\": \"kˈæt\", \"cats\": \"kˈæts\", \"NASA\": \"nˈæsə\"}");
    CU_ASSERT_EQUAL_FATAL(ck_lexicon_open(&lex, dir, 0, 0, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_lexicon_size(lex, CK_LEX_GOLD), 5);  /* + Cat, Cats; NASA grows none */
    ck_lex_entry e;
    CU_ASSERT_EQUAL_FATAL(ck_lexicon_get(lex, CK_LEX_GOLD, "cats", 4, &e), 1);
    CU_ASSERT_STRING_EQUAL(e.phonemes, "kˈæts");
    CU_ASSERT_PTR_NULL(e.pos);
    CU_ASSERT_EQUAL_FATAL(ck_lexicon_get(lex, CK_LEX_GOLD, "Cat", 3, &e), 1);
    CU_ASSERT_STRING_EQUAL(e.phonemes, "kˈæt");
    CU_ASSERT_EQUAL(ck_lexicon_get(lex, CK_LEX_GOLD, "ca", 2, NULL), 0);
    CU_ASSERT_EQUAL(ck_lexicon_get(lex, CK_LEX_GOLD, "catss", 5, NULL), 0);
    CU_ASSERT_EQUAL(ck_lexicon_get(lex, CK_LEX_GOLD, "cat\0s", 5, NULL), 0);
    CU_ASSERT_EQUAL(ck_lexicon_get(lex, CK_LEX_GOLD, "cats", 3, NULL), 1);  /* "cat" */
    CU_ASSERT_EQUAL(ck_lexicon_get(lex, CK_LEX_GOLD, "nasa", 4, NULL), 0);
    CU_ASSERT_EQUAL(ck_lexicon_get(lex, CK_LEX_SILVER, "cat", 3, NULL), 0);
    ck_lexicon_close(lex);
}

/* ---- numbers ---- */

typedef struct {
    size_t lines, bad;
} tally;

static void number_line(const cJSON *j, void *ctx)
{
    tally *t = ctx;
    const char *kind = str(j, "kind"), *in = str(j, "input"), *want = str(j, "out");
    ck_strbuf b = {0};
    int rc = -1;
    if (strcmp(kind, "float") == 0) {
        rc = ck_num_words_float(in, strlen(in), &b);
    } else {
        ck_num_kind k = strcmp(kind, "ordinal") == 0 ? CK_NUM_ORDINAL
                        : strcmp(kind, "year") == 0  ? CK_NUM_YEAR
                                                     : CK_NUM_CARDINAL;
        rc = ck_num_words(in, strlen(in), k, &b);
    }
    char *got = ck_strbuf_take(&b);
    t->lines++;
    if (rc != 0 || got == NULL || strcmp(got, want) != 0) {
        if (t->bad++ < 10) {
            fprintf(stderr, "    %s %s: got \"%s\", want \"%s\"\n", kind, in, got ? got : "-", want);
        }
    }
    free(got);
}

static void test_numbers_golden(void)
{
    tally t = {0, 0};
    each_line("tests/fixtures/misaki/numbers.jsonl", number_line, &t);
    CU_ASSERT_EQUAL(t.lines, 13172);
    CU_ASSERT_EQUAL(t.bad, 0);
}


/* Optional oracle: Debian's python3-num2words (scripts/packages.txt [g2p-oracle]), when
 * /usr/bin/python3 can import it: 0..100,000, years 1000..2999, ordinals 1..10,000, 300 large
 * values up to 10^21 and 500 decimals, every one compared with ck_num_words. Skipped (and said
 * so) otherwise. */
static void test_numbers_num2words_oracle(void)
{
    if (system("/usr/bin/python3 -c 'import num2words' >/dev/null 2>&1") != 0) {
        fprintf(stderr, "    [python3-num2words not installed: skipped]\n");
        return;
    }
    static const char script[] =
        "/usr/bin/python3 -c \""
        "import random\n"
        "from num2words import num2words as w\n"
        "r = random.Random(16)\n"
        "for n in range(0, 100001): print('c', n, w(n), sep='\\t')\n"
        "for n in range(1000, 3000): print('y', n, w(n, to='year'), sep='\\t')\n"
        "for n in range(1, 10001): print('o', n, w(n, to='ordinal'), sep='\\t')\n"
        "for k in range(300):\n"
        "    n = r.randrange(10 ** r.randrange(6, 22)); print('c', n, w(n), sep='\\t')\n"
        "for k in range(500):\n"
        "    s = '%d.%0*d' % (r.randrange(10 ** r.randrange(1, 7)), r.randrange(1, 6), r.randrange(100000))\n"
        "    print('f', s, w(float(s)), sep='\\t')\n"
        "\"";
    FILE *p = popen(script, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    char *line = NULL;
    size_t cap = 0, rows = 0, bad = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, p)) > 0) {
        if (line[len - 1] == '\n') {
            line[len - 1] = '\0';
        }
        char *in = strchr(line, '\t'), *want = in != NULL ? strchr(in + 1, '\t') : NULL;
        if (want == NULL) {
            continue;
        }
        *in++ = '\0';
        *want++ = '\0';
        ck_strbuf b = {0};
        int rc = line[0] == 'f' ? ck_num_words_float(in, strlen(in), &b)
                                : ck_num_words(in, strlen(in),
                                               line[0] == 'y'   ? CK_NUM_YEAR
                                               : line[0] == 'o' ? CK_NUM_ORDINAL
                                                                : CK_NUM_CARDINAL, &b);
        char *got = ck_strbuf_take(&b);
        if (rc != 0 || got == NULL || strcmp(got, want) != 0) {
            if (bad++ < 10) {
                fprintf(stderr, "    %s %s: got \"%s\", want \"%s\"\n", line, in, got ? got : "-",
                        want);
            }
        }
        free(got);
        rows++;
    }
    free(line);
    CU_ASSERT_EQUAL(pclose(p), 0);
    fprintf(stderr, "    [num2words oracle: %zu values, %zu differ]\n", rows, bad);
    CU_ASSERT_EQUAL(rows, 100001 + 2000 + 10000 + 300 + 500);
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- espeak fallback ---- */

typedef struct {
    int british;
    size_t lines, bad_rewrite, bad_espeak;
} fb_tally;

static char *trimmed(const char *s)
{
    while (*s == ' ') {
        s++;
    }
    char *d = strdup(s);
    size_t n = strlen(d);
    while (n > 0 && d[n - 1] == ' ') {
        d[--n] = '\0';
    }
    return d;
}

static void fallback_line(const cJSON *j, void *ctx)
{
    fb_tally *t = ctx;
    const char *word = str(j, "word"), *espeak = str(j, "espeak"), *want = str(j, "ps");
    char *got = NULL;
    t->lines++;
    CU_ASSERT_EQUAL_FATAL(ck_misaki_espeak_rewrite(espeak, t->british, &got, NULL), CK_OK);
    if (strcmp(got, want) != 0 && t->bad_rewrite++ < 10) {
        fprintf(stderr, "    rewrite %s: got %s, want %s\n", espeak, got, want);
    }
    free(got);
#ifdef CK_HAVE_ESPEAK
    char *raw = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_espeak_raw(g_espeak[t->british], word, &raw, NULL), CK_OK);
    char *a = trimmed(raw), *b = trimmed(espeak);
    if (strcmp(a, b) != 0 && t->bad_espeak++ < 10) {
        fprintf(stderr, "    espeak %s: got %s, want %s\n", word, a, b);
    }
    free(a);
    free(b);
    free(raw);
#else
    (void)word;
#endif
}

static void espeak_open(void)
{
#ifdef CK_HAVE_ESPEAK
    for (int b = 0; b < 2; b++) {
        if (g_espeak[b] == NULL) {
            CU_ASSERT_EQUAL(ck_espeak_open(&g_espeak[b], b ? "en-gb" : "en-us", NULL), CK_OK);
        }
    }
#endif
}

static void fallback_golden(int british)
{
    espeak_open();
    fb_tally t = {british, 0, 0, 0};
    each_line(british ? "tests/fixtures/misaki/espeak_fallback_gb.jsonl"
                      : "tests/fixtures/misaki/espeak_fallback_us.jsonl",
              fallback_line, &t);
    fprintf(stderr, "    [%zu words: %zu rewrite and %zu espeak differences]\n", t.lines,
            t.bad_rewrite, t.bad_espeak);
    CU_ASSERT_EQUAL(t.lines, 397);
    CU_ASSERT_EQUAL(t.bad_rewrite, 0);
    CU_ASSERT_EQUAL(t.bad_espeak, 0);
}

static void test_fallback_us(void)
{
    fallback_golden(0);
}

static void test_fallback_gb(void)
{
    fallback_golden(1);
}

/* ---- tokens goldens ---- */

static int espeak_fn(void *ctx, const char *text, char **raw, ck_error *err)
{
    return ck_espeak_raw(ctx, text, raw, err);
}

typedef struct {
    const ck_misaki *m;
    size_t lines, bad_lines, bad_tokens, bad_ps, bad_chunks, bad_fallback, bad_pre;
} tok_tally;

static int same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void tokens_line(const cJSON *j, void *ctx)
{
    tok_tally *t = ctx;
    const char *id = str(j, "id"), *text = str(j, "text");
#ifndef CK_HAVE_ESPEAK
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "used_fallback"))) {
        t->lines++;  /* needs espeak-ng: not checkable in this build */
        return;
    }
#endif
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    size_t n = (size_t)cJSON_GetArraySize(tokens);
    ck_misaki_token *in = calloc(n + 1, sizeof *in);
    ck_misaki_pre pre;
    CU_ASSERT_EQUAL_FATAL(ck_misaki_preprocess(text, &pre, NULL), CK_OK);
    const char *want_pre = str(j, "preprocessed");
    int bad = 0;
    if (want_pre != NULL && strcmp(want_pre, pre.text) != 0) {
        t->bad_pre++;
        bad = 1;
        fprintf(stderr, "    %s: preprocessed \"%s\", want \"%s\"\n", id, pre.text, want_pre);
    }
    size_t i = 0;
    for (const cJSON *tk = tokens->child; tk != NULL; tk = tk->next, i++) {
        in[i].text = cJSON_GetArrayItem(tk, 0)->valuestring;
        in[i].whitespace = cJSON_IsTrue(cJSON_GetArrayItem(tk, 1));
        in[i].tag = cJSON_GetArrayItem(tk, 2)->valuestring;
        in[i].stress = CK_MISAKI_NO_STRESS;
        in[i].is_head = 1;
    }
    ck_misaki_features(&pre, in, n);
    ck_misaki_result res;
    ck_error err = {CK_OK, ""};
    int rc = ck_misaki_run(t->m, in, n, &res, &err);
    CU_ASSERT_EQUAL(rc, CK_OK);
    if (rc != CK_OK) {
        fprintf(stderr, "    %s: %s\n", id, err.message);
    }
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(j, "out");
    size_t nout = (size_t)cJSON_GetArraySize(out);
    int tok_bad = nout != res.n_tokens;
    i = 0;
    for (const cJSON *o = out->child; o != NULL && i < res.n_tokens; o = o->next, i++) {
        const ck_misaki_out *g = &res.tokens[i];
        const cJSON *ps = cJSON_GetArrayItem(o, 3);
        const char *want_ps = cJSON_IsString(ps) ? ps->valuestring : NULL;
        if (!same(g->text, cJSON_GetArrayItem(o, 0)->valuestring) ||
            g->whitespace != cJSON_IsTrue(cJSON_GetArrayItem(o, 1)) ||
            !same(g->tag, cJSON_GetArrayItem(o, 2)->valuestring) || !same(g->phonemes, want_ps)) {
            if (!tok_bad && t->bad_tokens < 40) {
                fprintf(stderr, "    %s token %zu \"%s\": got %s [%s], want %s\n", id, i, g->text,
                        g->phonemes ? g->phonemes : "None", g->tag, want_ps ? want_ps : "None");
            }
            tok_bad = 1;
        }
    }
    if (tok_bad) {
        t->bad_tokens++;
        bad = 1;
        if (nout != res.n_tokens && t->bad_tokens < 40) {
            fprintf(stderr, "    %s: %zu tokens, want %zu\n", id, res.n_tokens, nout);
        }
    }
    if (!same(res.kokoro_ps, str(j, "kokoro_ps")) || !same(res.misaki_ps, str(j, "misaki_ps"))) {
        t->bad_ps++;
        bad = 1;
        if (t->bad_ps < 20) {
            fprintf(stderr, "    %s: kokoro_ps\n      got  %s\n      want %s\n", id,
                    res.kokoro_ps ? res.kokoro_ps : "-", str(j, "kokoro_ps"));
        }
    }
    const cJSON *chunks = cJSON_GetObjectItemCaseSensitive(j, "kokoro_chunks");
    int chunk_bad = (size_t)cJSON_GetArraySize(chunks) != res.n_chunks;
    i = 0;
    for (const cJSON *c = chunks->child; c != NULL && !chunk_bad; c = c->next, i++) {
        chunk_bad = !same(res.chunks[i], c->valuestring);
    }
    if (chunk_bad) {
        t->bad_chunks++;
        bad = 1;
        if (t->bad_chunks < 10) {
            fprintf(stderr, "    %s: chunks differ (%zu, want %d)\n", id, res.n_chunks,
                    cJSON_GetArraySize(chunks));
        }
    }
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(j, "fallback");
    int fb_bad = (size_t)cJSON_GetArraySize(fb) != res.n_fallbacks;
    i = 0;
    for (const cJSON *c = fb->child; c != NULL && !fb_bad; c = c->next, i++) {
        fb_bad = !same(res.fallbacks[i].text, str(c, "text")) ||
                 !same(res.fallbacks[i].ps, str(c, "ps"));
    }
    if (fb_bad) {
        t->bad_fallback++;
        bad = 1;
        if (t->bad_fallback < 10) {
            fprintf(stderr, "    %s: fallback calls differ (%zu, want %d)\n", id, res.n_fallbacks,
                    cJSON_GetArraySize(fb));
        }
    }
    t->lines++;
    t->bad_lines += bad;
    ck_misaki_result_free(&res);
    ck_misaki_pre_free(&pre);
    free(in);
}

static void tokens_golden(const char *rel, int british, size_t want_lines)
{
    espeak_open();
    const ck_lexicon *lex = lexicon(british);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lex);
    ck_misaki_options opt = {british, lex, espeak_fn, g_espeak[british]};
#ifndef CK_HAVE_ESPEAK
    opt.espeak = NULL;
#endif
    ck_misaki *m = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_misaki_open(&m, &opt, NULL), CK_OK);
    tok_tally t = {m, 0, 0, 0, 0, 0, 0, 0};
    double t0 = now_s();
    each_line(rel, tokens_line, &t);
    fprintf(stderr,
            "    [%s: %zu lines in %.3f s, %zu differ: tokens %zu, strings %zu, chunks %zu, "
            "fallback %zu, preprocess %zu]\n",
            rel, t.lines, now_s() - t0, t.bad_lines, t.bad_tokens, t.bad_ps, t.bad_chunks,
            t.bad_fallback, t.bad_pre);
    CU_ASSERT_EQUAL(t.lines, want_lines);
    CU_ASSERT_EQUAL(t.bad_lines, 0);
    ck_misaki_close(m);
}

static void test_targeted_us(void)
{
    tokens_golden("tests/fixtures/misaki/targeted_us.jsonl", 0, 390);
}

static void test_targeted_gb(void)
{
    tokens_golden("tests/fixtures/misaki/targeted_gb.jsonl", 1, 390);
}

static void test_corpus_us_closed(void)
{
    tokens_golden("tests/fixtures/misaki/corpus_us_closed.jsonl", 0, 2123);
}


/* ---- tokenizer and taggers on raw text ---- */

typedef struct {
    const ck_misaki *m;
    size_t lines, bad_tok, bad_tag, words, words_same[2];
    size_t n_diff;
    char diff[4096][2][48];
} text_tally;

/* Words of s split on single spaces into w (pointers into a copy); returns the count. */
static size_t split_words(char *s, char **w, size_t cap)
{
    size_t n = 0;
    for (char *p = strtok(s, " "); p != NULL && n < cap; p = strtok(NULL, " ")) {
        w[n++] = p;
    }
    return n;
}

/* Words of got matching want (longest common subsequence); records positional differences. */
static size_t same_words(text_tally *t, const char *got, const char *want, int record)
{
    char *a = strdup(got), *b = strdup(want);
    char *wa[512], *wb[512];
    size_t na = split_words(a, wa, 512), nb = split_words(b, wb, 512);
    static unsigned short L[513][513];
    for (size_t i = 0; i <= na; i++) {
        for (size_t j = 0; j <= nb; j++) {
            L[i][j] = i == 0 || j == 0 ? 0
                      : strcmp(wa[i - 1], wb[j - 1]) == 0
                          ? (unsigned short)(L[i - 1][j - 1] + 1)
                          : (L[i - 1][j] > L[i][j - 1] ? L[i - 1][j] : L[i][j - 1]);
        }
    }
    size_t same = L[na][nb];
    if (record && na == nb) {
        for (size_t i = 0; i < na && t->n_diff < 4096; i++) {
            if (strcmp(wa[i], wb[i]) != 0) {
                snprintf(t->diff[t->n_diff][0], 48, "%s", wa[i]);
                snprintf(t->diff[t->n_diff][1], 48, "%s", wb[i]);
                t->n_diff++;
            }
        }
    }
    free(a);
    free(b);
    return same;
}

static void text_line(const cJSON *j, void *ctx)
{
    text_tally *t = ctx;
    const char *text = str(j, "text"), *id = str(j, "id");
    ck_misaki_pre pre;
    CU_ASSERT_EQUAL_FATAL(ck_misaki_preprocess(text, &pre, NULL), CK_OK);
    ck_en_pieces p;
    CU_ASSERT_EQUAL_FATAL(ck_en_tokenize(pre.text, &p, NULL), CK_OK);
    const char **tags = calloc(p.n + 1, sizeof *tags);
    ck_en_tag(CK_TAGGER_CLOSED, &p, tags);
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    int bad_tok = (size_t)cJSON_GetArraySize(tokens) != p.n, bad_tag = 0;
    size_t i = 0;
    for (const cJSON *tk = tokens->child; tk != NULL && !bad_tok; tk = tk->next, i++) {
        bad_tok = strcmp(p.pieces[i].text, cJSON_GetArrayItem(tk, 0)->valuestring) != 0 ||
                  p.pieces[i].whitespace != cJSON_IsTrue(cJSON_GetArrayItem(tk, 1));
        bad_tag |= strcmp(tags[i], cJSON_GetArrayItem(tk, 2)->valuestring) != 0;
    }
    if (bad_tok && t->bad_tok < 10) {
        fprintf(stderr, "    %s: tokens differ (%zu, want %d): %s\n", id, p.n,
                cJSON_GetArraySize(tokens), text);
    }
    t->bad_tok += bad_tok;
    t->bad_tag += bad_tag && !bad_tok;
    t->lines++;
    /* the whole front end with each tagger, word by word against the golden string */
    const char *want = str(j, "kokoro_ps");
    char *w = strdup(want);
    char *ws[512];
    t->words += split_words(w, ws, 512);
    free(w);
    for (int tg = 0; tg < 2; tg++) {
        ck_misaki_result res;
        CU_ASSERT_EQUAL(ck_en_g2p_line(t->m, (ck_en_tagger)tg, text, &res, NULL), CK_OK);
        if (res.kokoro_ps != NULL) {
            t->words_same[tg] += same_words(t, res.kokoro_ps, want, tg == 1);
        }
        ck_misaki_result_free(&res);
    }
    free(tags);
    ck_en_pieces_free(&p);
    ck_misaki_pre_free(&pre);
}

static int cmp_diff(const void *a, const void *b)
{
    return memcmp(a, b, 96);
}

static void test_front_end_corpus(void)
{
    espeak_open();
    ck_misaki_options opt = {0, lexicon(0), espeak_fn, g_espeak[0]};
#ifndef CK_HAVE_ESPEAK
    opt.espeak = NULL;
#endif
    ck_misaki *m = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_misaki_open(&m, &opt, NULL), CK_OK);
    text_tally *t = calloc(1, sizeof *t);
    t->m = m;
    double t0 = now_s();
    each_line("tests/fixtures/misaki/corpus_us_closed.jsonl", text_line, t);
    double pct[2] = {100.0 * (double)t->words_same[0] / (double)t->words,
                     100.0 * (double)t->words_same[1] / (double)t->words};
    fprintf(stderr,
            "    [%zu lines in %.2f s: tokenizer differs on %zu, closed tagger on %zu; words "
            "matching the golden strings: closed %zu/%zu (%.3f%%), heuristic %zu/%zu (%.3f%%)]\n",
            t->lines, now_s() - t0, t->bad_tok, t->bad_tag, t->words_same[0], t->words, pct[0],
            t->words_same[1], t->words, pct[1]);
    qsort(t->diff, t->n_diff, sizeof t->diff[0], cmp_diff);
    fprintf(stderr, "    heuristic vs golden (closed-tag) top differences:\n");
    for (int shown = 0, k = 0; k < 12; k++) {
        size_t best = 0, at = 0;
        for (size_t i = 0; i < t->n_diff;) {
            size_t j = i;
            while (j < t->n_diff && cmp_diff(t->diff[i], t->diff[j]) == 0) {
                j++;
            }
            if (j - i > best && t->diff[i][0][0] != '\0') {
                best = j - i;
                at = i;
            }
            i = j;
        }
        if (best == 0) {
            break;
        }
        fprintf(stderr, "      %3zu  %s (golden %s)\n", best, t->diff[at][0], t->diff[at][1]);
        for (size_t i = at; i < at + best; i++) {
            t->diff[i][0][0] = '\0';
        }
        shown++;
    }
    CU_ASSERT_EQUAL(t->lines, 2123);
    CU_ASSERT_EQUAL(t->bad_tok, 0);
    CU_ASSERT_EQUAL(t->bad_tag, 0);
#ifdef CK_HAVE_ESPEAK
    CU_ASSERT_EQUAL(t->words_same[0], t->words);      /* the closed tagger is the goldens' own */
#endif
    CU_ASSERT_TRUE(pct[1] >= 99.0);
    free(t);
    ck_misaki_close(m);
}

/* C22: curly and straight apostrophes, and Unicode digits, give the same phonemes. */
static void test_case_c22(void)
{
    espeak_open();
    ck_misaki_options opt = {0, lexicon(0), espeak_fn, g_espeak[0]};
#ifndef CK_HAVE_ESPEAK
    opt.espeak = NULL;
#endif
    ck_misaki *m = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_misaki_open(&m, &opt, NULL), CK_OK);
    static const char *const pairs[][2] = {
        {"No, it wasn\xE2\x80\x99t.", "No, it wasn't."},
        {"I\xE2\x80\x99m sure it\xE2\x80\x99s fine, they\xE2\x80\x99re here.", "I'm sure it's fine, they're here."},
        {"I\xE2\x80\x98m sure.", "I'm sure."},
        {"I\xEF\xBC\x87m sure.", "I'm sure."},
        {"I\xCA\xBCm sure.", "I'm sure."},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        ck_misaki_result a, b;
        CU_ASSERT_EQUAL_FATAL(ck_en_g2p_line(m, CK_TAGGER_HEURISTIC, pairs[i][0], &a, NULL), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_en_g2p_line(m, CK_TAGGER_HEURISTIC, pairs[i][1], &b, NULL), CK_OK);
        CU_ASSERT_STRING_EQUAL(a.kokoro_ps, b.kokoro_ps);
        if (i == 0) {
            CU_ASSERT_STRING_EQUAL(a.kokoro_ps, "nˈO, ɪt wˈʌzᵊnt.");
        }
        ck_misaki_result_free(&a);
        ck_misaki_result_free(&b);
    }
    static const char *const lines[][2] = {
        {"the letter", "ðə lˈɛTəɹ"}, {"butter", "bˈʌTəɹ"}, {"button", "bˈʌtn"},
        /* tools/README.md's utt36 text: its capture stores raw gold lookups (ði ... ði), an
         * encoder fixture; misaki's G2P says ðə before consonants (docs/misaki.md section 5) */
        {"The sun is warm, the sky is blue.", "ðə sˈʌn ɪz wˈɔɹm, ðə skˈI ɪz blˈu."},
        {"Room \xE2\x9E\x80 has \xEF\xBC\x92 cats, \xC2\xB3 dogs and \xD9\xA3 birds.",
         "ɹˈum wˈʌn hæz tˈu kˈæts, θɹˈi dˈɔɡz ænd θɹˈi bˈɜɹdz."},
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        ck_misaki_result a;
        CU_ASSERT_EQUAL_FATAL(ck_en_g2p_line(m, CK_TAGGER_HEURISTIC, lines[i][0], &a, NULL), CK_OK);
        if (strcmp(a.kokoro_ps, lines[i][1]) != 0) {
            fprintf(stderr, "    %s: got %s, want %s\n", lines[i][0], a.kokoro_ps, lines[i][1]);
        }
        CU_ASSERT_STRING_EQUAL(a.kokoro_ps, lines[i][1]);
        CU_ASSERT_PTR_NULL(strstr(a.kokoro_ps, "ɾ"));
        CU_ASSERT_PTR_NULL(strstr(a.kokoro_ps, "ʔ"));
        ck_misaki_result_free(&a);
    }
    ck_misaki_close(m);
}


/* ---- the reader's text format on the misaki backend ---- */

static size_t g_warned_fallback;
static char g_last_warning[400];
static void on_warn(void *ctx, const char *message)
{
    (void)ctx;
    g_warned_fallback += strstr(message, "phonemized by espeak-ng") != NULL;
    snprintf(g_last_warning, sizeof g_last_warning, "%s", message);
}

/* Reads one line of text through a reader with opt; returns the joined phonemes (malloc'd). */
static char *read_text(const char *text, const char *lang, const char *g2p, const char *dir,
                       ck_reader **keep, int *rc_out)
{
    FILE *f = fmemopen((void *)text, strlen(text), "rb");
    ck_reader_options o = {CK_INPUT_TEXT, lang, 0, 0, on_warn, NULL, NULL, 0, g2p, dir};
    ck_reader *r = NULL;
    ck_error err = {CK_OK, ""};
    int rc = ck_reader_open(&r, f, "t.txt", &o, &err);
    *rc_out = rc;
    if (rc != CK_OK) {
        snprintf(g_last_warning, sizeof g_last_warning, "%s", err.message);
        fclose(f);
        return NULL;
    }
    ck_sequence *seqs = NULL;
    size_t n = 0;
    ck_strbuf b = {0};
    if (ck_reader_next(r, &seqs, &n, &err) == 1) {
        for (size_t i = 0; i < n; i++) {
            ck_strbuf_puts(&b, i > 0 ? "|" : "");
            ck_strbuf_puts(&b, seqs[i].phonemes);
            /* ids are the vocab ids of the phonemes, boundaries 0 */
            CU_ASSERT_EQUAL(seqs[i].ids[0], 0);
            CU_ASSERT_EQUAL(seqs[i].ids[seqs[i].n_ids - 1], 0);
        }
    }
    ck_sequences_free(seqs, n);
    if (keep != NULL) {
        *keep = r;
    } else {
        ck_reader_close(r);
    }
    fclose(f);
    return ck_strbuf_take(&b);
}

static void test_reader_misaki_default(void)
{
    ck_reader *r = NULL;
    int rc = 0;
    g_warned_fallback = 0;
    char *got = read_text("Hello world, the letter.\n", "en-us", NULL, NULL, &r, &rc);
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    CU_ASSERT_STRING_EQUAL(got, "həlˈO wˈɜɹld, ðə lˈɛTəɹ.");
    CU_ASSERT_EQUAL(strncmp(ck_reader_g2p_version(r), "misaki (misaki 0.9.4", 20), 0);
    const char *key = NULL, *value = NULL;
    int saw_sha = 0, saw_tagger = 0;
    for (size_t i = 0; ck_reader_g2p_meta(r, i, &key, &value); i++) {
        saw_sha |= strcmp(key, "g2p_lexicon_us_gold_sha256") == 0 &&
                   strcmp(value, "dc414872a49a28ae6c141463d502fd945f3b2fde040484fdc47d00cc4612686f") == 0;
        saw_tagger |= strcmp(key, "g2p_tagger") == 0 && strstr(value, "not spaCy") != NULL;
    }
    CU_ASSERT_TRUE(saw_sha);
    CU_ASSERT_TRUE(saw_tagger);
    ck_reader_close(r);
    free(got);
    /* en-gb: no flap pass */
    got = read_text("the letter\n", "en-gb", "misaki", NULL, NULL, &rc);
    CU_ASSERT_STRING_EQUAL(got, "ðə lˈɛtə");
    free(got);
    /* the espeak path is still there */
    got = read_text("the letter\n", "en-us", "espeak", NULL, &r, &rc);
    CU_ASSERT_EQUAL(strncmp(ck_reader_g2p_version(r), "espeak-ng ", 10), 0);
    ck_reader_close(r);
    free(got);
}

#ifdef CK_HAVE_ESPEAK
static void test_reader_misaki_reports_fallback(void)
{
    ck_reader *r = NULL;
    int rc = 0;
    g_warned_fallback = 0;
    char *got = read_text("  We met Kokoro-based folks.\n", "en-us", "misaki", NULL, &r, &rc);
    CU_ASSERT_EQUAL_FATAL(rc, CK_OK);
    CU_ASSERT_EQUAL(ck_reader_stats_get(r)->g2p_fallback_words, 1);
    CU_ASSERT_EQUAL(g_warned_fallback, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(g_last_warning, "t.txt:1: column 10: \"Kokoro-based\""));
    ck_reader_close(r);
    free(got);
}
#endif

static void test_reader_misaki_bad_options(void)
{
    int rc = 0;
    char *got = read_text("x\n", "en-us", "spacy", NULL, NULL, &rc);
    CU_ASSERT_EQUAL(rc, CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(g_last_warning, "g2p \"spacy\""));
    free(got);
    got = read_text("x\n", "en-us", "misaki", "/nonexistent/misaki", NULL, &rc);
    CU_ASSERT_EQUAL(rc, CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(g_last_warning, "/nonexistent/misaki/us_gold.json"));
    free(got);
}

/* A line longer than 510 symbols is cut where Kokoro cuts it (the targeted goldens' long lines). */
static void test_reader_misaki_chunks_like_kokoro(void)
{
    FILE *f = fopen(ck_test_path("tests/fixtures/misaki/targeted_us.jsonl"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *line = NULL;
    size_t cap = 0, checked = 0;
    while (getline(&line, &cap, f) > 0) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *chunks = cJSON_GetObjectItemCaseSensitive(j, "kokoro_chunks");
        if (cJSON_GetArraySize(chunks) > 1 && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "used_fallback"))) {
            ck_strbuf want = {0};
            for (const cJSON *c = chunks->child; c != NULL; c = c->next) {
                ck_strbuf_puts(&want, c == chunks->child ? "" : "|");
                ck_strbuf_puts(&want, c->valuestring);
            }
            char *w = ck_strbuf_take(&want);
            ck_strbuf in = {0};
            ck_strbuf_puts(&in, str(j, "text"));
            ck_strbuf_puts(&in, "\n");
            char *text = ck_strbuf_take(&in);
            int rc = 0;
            char *got = read_text(text, "en-us", "misaki", NULL, NULL, &rc);
            /* own tokenizer and tagger: the golden's hand tags may differ, so compare the cut
             * structure (chunk count) and that every chunk fits */
            size_t pieces = 1;
            for (const char *p = got; *p != '\0'; p++) {
                pieces += *p == '|';
            }
            CU_ASSERT_EQUAL(pieces, (size_t)cJSON_GetArraySize(chunks));
            free(got);
            free(text);
            free(w);
            checked++;
        }
        cJSON_Delete(j);
    }
    free(line);
    fclose(f);
    CU_ASSERT_TRUE(checked >= 2);
}


/* The taggers against the targeted suite, whose tags are Lingua's with hand corrections (closer to
 * what a real tagger says than the closed-class stand-in): informative, printed. */
typedef struct {
    const ck_misaki *m;
    size_t words, same[2];
} tag_tally;

static void tagger_line(const cJSON *j, void *ctx)
{
    tag_tally *t = ctx;
    if (strcmp(str(j, "tag_source"), "explicit") == 0) {
        return;
    }
    const char *want = str(j, "kokoro_ps");
    char *w = strdup(want), *ws[512];
    t->words += split_words(w, ws, 512);
    free(w);
    text_tally scratch;
    scratch.n_diff = 4096;  /* record nothing */
    for (int tg = 0; tg < 2; tg++) {
        ck_misaki_result res;
        CU_ASSERT_EQUAL(ck_en_g2p_line(t->m, (ck_en_tagger)tg, str(j, "text"), &res, NULL), CK_OK);
        if (res.kokoro_ps != NULL) {
            t->same[tg] += same_words(&scratch, res.kokoro_ps, want, 0);
        }
        ck_misaki_result_free(&res);
    }
}

static void test_taggers_on_targeted(void)
{
    espeak_open();
    for (int b = 0; b < 2; b++) {
        ck_misaki_options opt = {b, lexicon(b), espeak_fn, g_espeak[b]};
#ifndef CK_HAVE_ESPEAK
        opt.espeak = NULL;
#endif
        ck_misaki *m = NULL;
        CU_ASSERT_EQUAL_FATAL(ck_misaki_open(&m, &opt, NULL), CK_OK);
        tag_tally t = {m, 0, {0, 0}};
        each_line(b ? "tests/fixtures/misaki/targeted_gb.jsonl" : "tests/fixtures/misaki/targeted_us.jsonl",
                  tagger_line, &t);
        fprintf(stderr, "    [targeted %s (Lingua+hand tags): words matching: closed %zu/%zu "
                "(%.2f%%), heuristic %zu/%zu (%.2f%%)]\n", b ? "gb" : "us", t.same[0], t.words,
                100.0 * (double)t.same[0] / (double)t.words, t.same[1], t.words,
                100.0 * (double)t.same[1] / (double)t.words);
        CU_ASSERT_TRUE(t.same[1] >= t.same[0]);
        ck_misaki_close(m);
    }
}

/* Two threads share one ck_misaki and one lexicon: each gets what one thread alone gets. */
typedef struct {
    const ck_misaki *m;
    char **lines, **want;
    size_t n, bad;
} share;

static void *share_worker(void *arg)
{
    share *s = arg;
    for (size_t i = 0; i < s->n; i++) {
        ck_misaki_result res;
        if (ck_en_g2p_line(s->m, CK_TAGGER_HEURISTIC, s->lines[i], &res, NULL) != CK_OK ||
            strcmp(res.kokoro_ps, s->want[i]) != 0) {
            s->bad++;
        }
        ck_misaki_result_free(&res);
    }
    return NULL;
}

static void test_threads_share_lexicon(void)
{
    espeak_open();
    ck_misaki_options opt = {0, lexicon(0), espeak_fn, g_espeak[0]};
#ifndef CK_HAVE_ESPEAK
    opt.espeak = NULL;
#endif
    ck_misaki *m = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_misaki_open(&m, &opt, NULL), CK_OK);
    FILE *f = fopen(ck_test_path("tests/fixtures/corpus/quotes_30.txt"), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *lines[64], *want[64], *line = NULL;
    size_t n = 0, cap = 0;
    ssize_t len;
    while (n < 64 && (len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') {
            line[len - 1] = '\0';
        }
        ck_misaki_result res;
        CU_ASSERT_EQUAL_FATAL(ck_en_g2p_line(m, CK_TAGGER_HEURISTIC, line, &res, NULL), CK_OK);
        lines[n] = strdup(line);
        want[n++] = strdup(res.kokoro_ps);
        ck_misaki_result_free(&res);
    }
    free(line);
    fclose(f);
    share s[2] = {{m, lines, want, n, 0}, {m, lines, want, n, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, share_worker, &s[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(s[i].bad, 0);
    }
    CU_ASSERT_EQUAL(n, 30);
    for (size_t i = 0; i < n; i++) {
        free(lines[i]);
        free(want[i]);
    }
    ck_misaki_close(m);
}

static void test_cleanup(void)
{
    for (int b = 0; b < 2; b++) {
        ck_lexicon_close(g_lex[b]);
        g_lex[b] = NULL;
        ck_espeak_close(g_espeak[b]);
        g_espeak[b] = NULL;
    }
}

#ifdef CK_HAVE_ESPEAK
#define FALLBACK_CASE {"reader: fallback words reported", test_reader_misaki_reports_fallback},
#else
#define FALLBACK_CASE
#endif

CK_TEST_MAIN("misaki", {"lexicon sizes", test_lexicon_sizes},
             {"lexicon rejects a bad entry", test_lexicon_rejects_bad_entry},
             {"lexicon finds exact keys only", test_lexicon_exact_keys},
             {"numbers golden", test_numbers_golden},
             {"numbers vs python3-num2words", test_numbers_num2words_oracle}, {"espeak fallback us", test_fallback_us},
             {"espeak fallback gb", test_fallback_gb}, {"targeted us", test_targeted_us},
             {"targeted gb", test_targeted_gb}, {"corpus us closed", test_corpus_us_closed},
             {"front end on the quotes corpus", test_front_end_corpus},
             {"case C22", test_case_c22},
             {"taggers on the targeted suite", test_taggers_on_targeted},
             {"two threads share the lexicon", test_threads_share_lexicon},
             {"reader: misaki is the text default", test_reader_misaki_default},
             {"reader: bad g2p options", test_reader_misaki_bad_options},
             {"reader: chunks like Kokoro", test_reader_misaki_chunks_like_kokoro}, FALLBACK_CASE
             {"cleanup", test_cleanup})
