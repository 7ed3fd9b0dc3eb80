/* json.h - the JSON-number checks: a number's spelling is RFC 8259's (ck_json_parse), and a cJSON
 * number is an exact integer in a range (ck_json_size). Every file ckbatch reads (circuit,
 * safetensors header, config.json, progress record, X-Ray manifest) takes its sizes, ids and
 * counts through ck_json_size; the files a user hands in (ids lines, circuit, config.json,
 * safetensors header) are parsed through ck_json_parse. */
#ifndef CK_JSON_H
#define CK_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* 1 and *out when item is a JSON number holding an integer in [min, max]; 0 otherwise (NULL, not a
 * number, fractional, NaN or Inf, out of range), *out untouched. A double holds every integer
 * exactly only up to 2^53, so max is clamped there: a larger number may not be the one written. */
int ck_json_size(const cJSON *item, size_t min, size_t max, size_t *out);

/* Byte offset in text[0..len) of the first number, outside strings, that cJSON would read but
 * RFC 8259 section 6 (number = [ "-" ] int [ frac ] [ exp ], int = "0" / digit1-9 *DIGIT) does not
 * allow: a leading zero (01, -00), a bare point (1., -.5, 1.e5), an empty exponent; len when there
 * is none. A number token is the run of 0-9 + - . e E that cJSON's parser takes. */
size_t ck_json_bad_number(const char *text, size_t len);

/* cJSON_ParseWithLengthOpts(text, len, end, 0) with RFC 8259 numbers: NULL and *end at the number
 * when ck_json_bad_number finds one (cJSON alone reads [01] as [1]); otherwise cJSON's result, *end
 * where it stopped. The caller frees the result with cJSON_Delete. */
cJSON *ck_json_parse(const char *text, size_t len, const char **end);

#endif
