/* json.h - the one JSON-number check: a cJSON number that is an exact integer in a range. Every
 * file ckbatch reads (circuit, safetensors header, config.json, progress record, X-Ray manifest)
 * takes its sizes, ids and counts through it. */
#ifndef CK_JSON_H
#define CK_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* 1 and *out when item is a JSON number holding an integer in [min, max]; 0 otherwise (NULL, not a
 * number, fractional, NaN or Inf, out of range), *out untouched. A double holds every integer
 * exactly only up to 2^53, so max is clamped there: a larger number may not be the one written. */
int ck_json_size(const cJSON *item, size_t min, size_t max, size_t *out);

#endif
