/* misaki_fallback.c - misaki's espeak fallback (espeak.py:13-60): the E2M rewrite of raw espeak-ng
 * output and the call for one unresolved word group; must not call espeak-ng itself (the caller's
 * ck_misaki_espeak_fn does). */
#include "misaki_internal.h"

/* ---- the espeak fallback (espeak.py:13-60) ---- */

typedef struct {
    const char *from, *to;
} e2m;

/* E2M sorted by key length, longest first (dict order within one length). */
static const e2m k_e2m[] = {
    {"ʔˌn\xCC\xA9", "ʔn"}, {"ʔn\xCC\xA9", "ʔn"}, {"a^ɪ", "I"}, {"a^ʊ", "W"}, {"d^ʒ", "ʤ"},
    {"e^ɪ", "A"}, {"t^ʃ", "ʧ"}, {"ɔ^ɪ", "Y"}, {"ə^l", "ᵊl"}, {"ʲo", "jo"}, {"ʲə", "jə"},
    {"e", "A"}, {"ʲ", ""}, {"ɚ", "əɹ"}, {"r", "ɹ"}, {"x", "k"}, {"ç", "k"}, {"ɐ", "ə"},
    {"ɬ", "l"}, {"\xCC\x83", ""},
};
static const e2m k_gb[] = {{"e^ə", "ɛː"}, {"iə", "ɪə"}, {"ə^ʊ", "Q"}};
static const e2m k_us[] = {{"o^ʊ", "O"}, {"ɜːɹ", "ɜɹ"}, {"ɜː", "ɜɹ"}, {"ɪə", "iə"}, {"ː", ""}};
static const e2m k_last[] = {{"o", "ɔ"}, {"ɾ", "T"}, {"ʔ", "t"}, {"^", ""}};

char *ck_mk_replace_all(char *s, const char *from, const char *to)
{
    if (s == NULL || strstr(s, from) == NULL) {
        return s;
    }
    ck_strbuf b = {0};
    size_t fl = strlen(from);
    const char *p = s, *hit;
    while ((hit = strstr(p, from)) != NULL) {
        ck_strbuf_append(&b, p, (size_t)(hit - p));
        ck_strbuf_puts(&b, to);
        p = hit + fl;
    }
    ck_strbuf_puts(&b, p);
    free(s);
    return ck_strbuf_take(&b);
}

int ck_misaki_espeak_rewrite(const char *raw, int british, char **out, ck_error *err)
{
    if (raw == NULL || out == NULL) {
        return ck_fail(err, CK_E_ARG, "misaki rewrite: null argument");
    }
    while (*raw == ' ' || *raw == '\t' || *raw == '\n') {
        raw++;
    }
    char *s = strdup(raw);
    if (s != NULL) {
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n')) {
            s[--n] = '\0';
        }
    }
    for (size_t i = 0; i < sizeof k_e2m / sizeof k_e2m[0]; i++) {
        s = ck_mk_replace_all(s, k_e2m[i].from, k_e2m[i].to);
    }
    if (s != NULL && strstr(s, "\xCC\xA9") != NULL) {  /* (\S)U+0329 -> ᵊ\1, stray U+0329 dropped */
        uint32_t w[4096], o[8192];
        size_t n = ck_mk_decode(s, w, 4096), k = 0;
        for (size_t i = 0; i < n; i++) {
            if (i + 1 < n && w[i + 1] == 0x329 && w[i] != 0x329 && w[i] != ' ' && w[i] != '\t' &&
                w[i] != '\n') {
                o[k++] = 0x1D4A;
                o[k++] = w[i];
                i++;
            } else if (w[i] != 0x329) {
                o[k++] = w[i];
            }
        }
        char *t = malloc(4 * k + 1), *q = t;
        if (t != NULL) {
            for (size_t i = 0; i < k; i++) {
                q += ck_utf8_encode(o[i], q);
            }
            *q = '\0';
        }
        free(s);
        s = t;
    }
    const e2m *v = british ? k_gb : k_us;
    size_t nv = british ? sizeof k_gb / sizeof k_gb[0] : sizeof k_us / sizeof k_us[0];
    for (size_t i = 0; i < nv; i++) {
        s = ck_mk_replace_all(s, v[i].from, v[i].to);
    }
    for (size_t i = 0; i < sizeof k_last / sizeof k_last[0]; i++) {
        s = ck_mk_replace_all(s, k_last[i].from, k_last[i].to);
    }
    if (s == NULL) {
        return ck_fail(err, CK_E_MEMORY, "misaki rewrite: out of memory");
    }
    *out = s;
    return CK_OK;
}

int ck_mk_fallback(run *r, const char *text, size_t byte, pr *out)
{
    *out = NONE;
    if (r->m->espeak == NULL) {
        return CK_OK;
    }
    char *raw = NULL, *ps = NULL;
    int rc = r->m->espeak(r->m->espeak_ctx, text, &raw, r->err);
    if (rc == CK_OK) {
        rc = ck_misaki_espeak_rewrite(raw, r->m->british, &ps, r->err);
    }
    if (rc == CK_OK) {
        ck_misaki_fallback f = {ck_mk_astrdup(r->a, text), ck_mk_astrdup(r->a, raw),
                                ck_mk_astrdup(r->a, ps), byte};
        ck_strbuf_append(&r->fb, (const char *)&f, sizeof f);
        *out = (pr){f.ps, 2};
    }
    free(raw);
    free(ps);
    return rc;
}
