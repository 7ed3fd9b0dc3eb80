/* json.c - RFC 8259 number spelling, and exact-integer checks on cJSON numbers (cJSON keeps every
 * number as a double). */
#include "json.h"

#include <math.h>
#include <string.h>

#define CK_JSON_EXACT_MAX 9007199254740992.0 /* 2^53 */

int ck_json_size(const cJSON *item, size_t min, size_t max, size_t *out)
{
    if (!cJSON_IsNumber(item)) {
        return 0;
    }
    double v = item->valuedouble, hi = (double)max < CK_JSON_EXACT_MAX ? (double)max
                                                                       : CK_JSON_EXACT_MAX;
    if (!(v >= (double)min && v <= hi) || v != floor(v)) {
        return 0;
    }
    *out = (size_t)v;
    return 1;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* 1 when s[0..n) is RFC 8259's number: [ "-" ] ( "0" / digit1-9 *DIGIT ) [ "." 1*DIGIT ]
 * [ ( "e" / "E" ) [ "+" / "-" ] 1*DIGIT ]. */
static int number_ok(const char *s, size_t n)
{
    size_t i = 0;
    i += i < n && s[i] == '-';
    if (i < n && s[i] == '0') {
        i++;
    } else if (i < n && is_digit(s[i])) {
        while (i < n && is_digit(s[i])) {
            i++;
        }
    } else {
        return 0;
    }
    if (i < n && s[i] == '.') {
        size_t first = ++i;
        while (i < n && is_digit(s[i])) {
            i++;
        }
        if (i == first) {
            return 0;
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        i += i < n && (s[i] == '+' || s[i] == '-');
        size_t first = i;
        while (i < n && is_digit(s[i])) {
            i++;
        }
        if (i == first) {
            return 0;
        }
    }
    return i == n;
}

size_t ck_json_not_strict(const char *text, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 && (in_string || (c != ' ' && c != '\t' && c != '\n' && c != '\r'))) {
            return i; /* RFC 8259: whitespace is these four; in a string a control byte is escaped */
        }
        if (in_string) {
            if (c == '\\') {
                i += i + 1 < len && (unsigned char)text[i + 1] >= 0x20; /* the escaped byte, even a quote */
            } else if (c == '"') {
                in_string = 0;
            }
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '-' || is_digit((char)c)) {
            size_t n = 0;
            while (i + n < len && text[i + n] != '\0' && strchr("0123456789+-.eE", text[i + n])) {
                n++;
            }
            if (!number_ok(text + i, n)) {
                return i;
            }
            i += n - 1;
        }
    }
    return len;
}

cJSON *ck_json_parse(const char *text, size_t len, size_t *at, const char **why)
{
    const char *end = NULL;
    size_t bad = ck_json_not_strict(text, len);
    if (bad < len) {
        *at = bad;
        *why = (unsigned char)text[bad] < 0x20 ? "a control byte that is not JSON whitespace"
                                                : "a number not spelled as JSON allows";
        return NULL;
    }
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    size_t stop = end != NULL && end >= text && (size_t)(end - text) <= len ? (size_t)(end - text) : 0;
    if (root == NULL) {
        *at = stop;
        *why = "JSON syntax error";
        return NULL;
    }
    while (stop < len && (text[stop] == ' ' || text[stop] == '\t' || text[stop] == '\n' ||
                          text[stop] == '\r')) {
        stop++;
    }
    if (stop < len) {
        cJSON_Delete(root);
        *at = stop;
        *why = "text after the JSON value";
        return NULL;
    }
    return root;
}

size_t ck_json_first_non_size(const char *text, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            i += c == '\\';
            in_string = c != '"';
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '-' || is_digit(c)) {
            size_t n = strspn(text + i, "0123456789");
            if (c == '-' || (i + n < len && strchr("+-.eE", text[i + n]) != NULL && text[i + n]) ||
                (c == '0' && n > 1)) {
                return i;
            }
            i += n - 1;
        }
    }
    return len;
}

size_t ck_json_line(const char *text, size_t at)
{
    size_t line = 1;
    for (size_t i = 0; i < at; i++) {
        line += text[i] == '\n';
    }
    return line;
}
