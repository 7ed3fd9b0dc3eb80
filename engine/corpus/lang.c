/* lang.c - the text language names and their default; must not know any G2P. */
#include "lang.h"

#include <string.h>

int ck_lang_parse(const char *name, ck_lang *lang, ck_error *err)
{
    if (name == NULL) {
        name = CK_LANG_DEFAULT;
    }
    if (strcmp(name, "en-us") == 0 || strcmp(name, "en-gb") == 0) {
        *lang = strcmp(name, "en-gb") == 0 ? CK_LANG_EN_GB : CK_LANG_EN_US;
        return CK_OK;
    }
    return ck_fail(err, CK_E_ARG, "lang \"%s\": expected \"en-us\" or \"en-gb\"", name);
}

const char *ck_lang_name(ck_lang lang)
{
    return lang == CK_LANG_EN_GB ? "en-gb" : "en-us";
}
