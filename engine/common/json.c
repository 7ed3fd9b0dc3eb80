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

size_t ck_json_bad_number(const char *text, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') {
                i++; /* the escaped character, even a quote */
            } else if (c == '"') {
                in_string = 0;
            }
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '-' || is_digit(c)) {
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

cJSON *ck_json_parse(const char *text, size_t len, const char **end)
{
    size_t bad = ck_json_bad_number(text, len);
    if (bad < len) {
        *end = text + bad;
        return NULL;
    }
    return cJSON_ParseWithLengthOpts(text, len, end, 0);
}
