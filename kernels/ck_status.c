/* ck_status.c - names of the status codes in ck_status.h; nothing else. */
#include "ck_status.h"

const char *ck_status_name(int code)
{
    static const char *const names[] = {
        "CK_OK", "CK_E_ARG", "CK_E_SIZE", "CK_E_NONFINITE", "CK_E_RANGE", "CK_E_IO",
        "CK_E_FORMAT", "CK_E_CIRCUIT", "CK_E_MEMORY", "CK_E_HASH", "CK_E_PARITY",
        "CK_E_INPUT", "CK_E_BACKEND", "CK_E_WEIGHTS", "CK_E_CANCELLED", "CK_E_STATE",
    };
    /* the last code of the list is CK_E_STATE: a new code grows the list and this table */
    _Static_assert(sizeof names / sizeof names[0] == 1 - CK_E_STATE, "one name per status code");
    if (code > 0 || -code >= (int)(sizeof names / sizeof names[0])) {
        return "CK_E_UNKNOWN";
    }
    return names[-code];
}
