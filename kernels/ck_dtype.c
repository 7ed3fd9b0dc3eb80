/* ck_dtype.c - the dtype traits table. */
#include "ck_dtype.h"

#include <string.h>

static const ck_dtype_traits TRAITS[CK_DTYPE_COUNT] = {
    [CK_DTYPE_F32] = {"F32", "f32", 4, 1},  [CK_DTYPE_F16] = {"F16", "f16", 2, 1},
    [CK_DTYPE_BF16] = {"BF16", "bf16", 2, 1}, [CK_DTYPE_I32] = {"I32", "i32", 4, 0},
    [CK_DTYPE_I64] = {"I64", "i64", 8, 0},  [CK_DTYPE_U8] = {"U8", "u8", 1, 0},
    [CK_DTYPE_OTHER] = {"OTHER", "other", 0, 0},
};
_Static_assert(CK_DTYPE_COUNT == 7, "a traits row for every dtype");

const ck_dtype_traits *ck_dtype_info(ck_dtype d)
{
    return (unsigned)d < CK_DTYPE_COUNT ? &TRAITS[d] : &TRAITS[CK_DTYPE_OTHER];
}

const char *ck_dtype_name(ck_dtype d)
{
    return ck_dtype_info(d)->name;
}

size_t ck_dtype_size(ck_dtype d)
{
    return ck_dtype_info(d)->size;
}

ck_dtype ck_dtype_from_lower(const char *lower)
{
    for (int d = 0; lower != NULL && d < CK_DTYPE_OTHER; d++) {
        if (strcmp(TRAITS[d].lower, lower) == 0) {
            return (ck_dtype)d;
        }
    }
    return CK_DTYPE_OTHER;
}
