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

/* Byte offset in text[0..len) of the first byte where the text stops being RFC 8259 JSON though
 * cJSON would read on: a number, outside strings, not spelled as section 6 allows (number =
 * [ "-" ] int [ frac ] [ exp ], int = "0" / digit1-9 *DIGIT: so not 01, -00, 1., -.5, 1.e5, 1e),
 * or a control byte (below 0x20) outside strings other than the four whitespace bytes (space, tab,
 * LF, CR), or one inside a string (it must be escaped there); len when there is none. A number token
 * is the run of 0-9 + - . e E that cJSON's parser takes. */
size_t ck_json_not_strict(const char *text, size_t len);

/* Parses text[0..len) as one JSON value (RFC 8259) with nothing after it but whitespace. NULL on
 * failure, with *at the byte offset and *why (a static string) the reason: a number spelled
 * otherwise or a control byte (ck_json_not_strict), a syntax error (where cJSON stopped), or text
 * after the value (cJSON alone reads [01] as [1], skips any byte up to 0x20 as whitespace and
 * stops after the first value). The caller frees the result with cJSON_Delete. */
cJSON *ck_json_parse(const char *text, size_t len, size_t *at, const char **why);

/* Byte offset in text[0..len) of the first number, outside strings, not spelled as a non-negative
 * integer (0 or digit1-9 *DIGIT: no sign, fraction or exponent); len when there is none. For
 * formats whose every number is a size (the safetensors header: its reference implementation reads
 * shape and data_offsets as unsigned integers, so 8.0, 1e3 and -0 are errors there). */
size_t ck_json_first_non_size(const char *text, size_t len);

/* 1-based line of byte offset `at` in text (the newlines before it, plus one), for messages. */
size_t ck_json_line(const char *text, size_t at);

#endif
