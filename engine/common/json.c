/* json.c - exact-integer checks on cJSON numbers (cJSON keeps every number as a double). */
#include "json.h"

#include <math.h>

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
