/* en_tag.c - the misaki backend's part-of-speech taggers (see en_text.h; NOT spaCy): a closed-class
 * table and one word of context, only where misaki's output depends on the tag. No I/O. */
#include <stdio.h>
#include <string.h>

#include "en_text.h"

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

/* ---- marks and letters in text people write (issue 30 item 5) ---- */

/* nouns that name the letter after them: "the letter a", "point a to point b" */
static const char *const k_letter_noun[] = {"letter", "letters", "lowercase", "uppercase",
                                            "capital", "point", "vitamin", "plan", "exit",
                                            "gate", "grade", "option"};

static int is_word(const ck_en_pieces *p, size_t i)
{
    return i < p->n && !p->pieces[i].punct && p->pieces[i].tag == NULL;
}

/* Two or more letters, all capitals: "US", "LET" (a line or phrase in capitals). */
static int all_caps(const char *w)
{
    size_t n = 0;
    for (; *w != '\0'; w++, n++) {
        if (*w < 'A' || *w > 'Z') {
            return 0;
        }
    }
    return n >= 2;
}

/* Only dashes: "-", "–" (U+2013), "--". */
static int only_dashes(const char *w)
{
    for (; *w != '\0'; w++) {
        if (*w == '-') {
            continue;
        }
        if (strncmp(w, "\xE2\x80\x93", 3) != 0) {
            return 0;
        }
        w += 2;
    }
    return 1;
}

/* Tags a real tagger gives where the one-word rules above cannot see it: a spaced "-" or "–"
 * after a word (not a number: "5 - 3" is left alone) is a dash (":", read as "—"); a "'"
 * straight after a word ending in s, with no single quote open, is the possessive (POS:
 * "Charles'" reads like "Charles"); "US" outside capitals is the country (NNP: spelled); a
 * capital "A" after a word, or "a" after a noun that names a letter, is the letter (NN: "ˈA"). */
static void retag_marks_and_letters(const ck_en_pieces *p, const char **tags)
{
    int open_single = 0;   /* single quotes opened and not closed */
    for (size_t i = 0; i < p->n; i++) {
        const ck_en_piece *w = &p->pieces[i];
        int after_word = i > 0 && !p->pieces[i - 1].punct;
        if (w->punct && strcmp(w->text, "'") == 0) {
            size_t len = i > 0 ? strlen(p->pieces[i - 1].text) : 0;
            int after_s = after_word && !p->pieces[i - 1].whitespace && len > 1 &&
                          (p->pieces[i - 1].text[len - 1] | 0x20) == 's';
            if (strcmp(tags[i], "``") == 0) {
                open_single++;
            } else if (open_single > 0) {
                open_single--;
            } else if (after_s) {
                tags[i] = "POS";
            }
        } else if (w->tag == NULL && only_dashes(w->text) && i > 0 && is_word(p, i - 1) &&
                   p->pieces[i - 1].whitespace && (w->whitespace || i + 1 == p->n)) {
            tags[i] = ":";
        } else if (w->tag == NULL && strcmp(w->text, "US") == 0 &&
                   !(i > 0 && all_caps(p->pieces[i - 1].text)) &&
                   !(i + 1 < p->n && all_caps(p->pieces[i + 1].text))) {
            tags[i] = "NNP";
        } else if (w->tag == NULL && strcmp(w->text, "A") == 0 && i > 0 && is_word(p, i - 1) &&
                   !all_caps(p->pieces[i - 1].text)) {
            tags[i] = "NN";
        } else if (w->tag == NULL && strcmp(w->text, "a") == 0 && i > 0 && is_word(p, i - 1)) {
            char prev[64];
            snprintf(prev, sizeof prev, "%s", p->pieces[i - 1].text);
            lower_key(prev);
            tags[i] = IN_TABLE(prev, k_letter_noun) ? "NN" : tags[i];
        }
    }
}

const char *ck_en_tagger_name(ck_en_tagger t)
{
    return t == CK_TAGGER_CLOSED ? "closed-class v1 (not spaCy)"
                                 : "heuristic v2: closed-class + one word of context (not spaCy)";
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
    retag_marks_and_letters(p, tags);
}

