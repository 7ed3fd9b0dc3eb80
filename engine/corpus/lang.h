/* lang.h - the text languages the G2Ps read ("en-us", "en-gb") and the default one: the only place
 * that spells them for the corpus room. */
#ifndef CK_LANG_H
#define CK_LANG_H

#include "ck_error.h"

/* The language a NULL lang means, everywhere text is read. */
#define CK_LANG_DEFAULT "en-us"

typedef enum {
    CK_LANG_EN_US = 0,
    CK_LANG_EN_GB = 1
} ck_lang;

/* Parses a language name: "en-us" or NULL (CK_LANG_DEFAULT) gives CK_LANG_EN_US, "en-gb"
 * CK_LANG_EN_GB. Errors: CK_E_ARG with message `lang "fr": expected "en-us" or "en-gb"` (no room
 * prefix: callers add theirs); *lang is untouched then. */
int ck_lang_parse(const char *name, ck_lang *lang, ck_error *err);

/* The name of lang ("en-us", "en-gb"); never NULL. */
const char *ck_lang_name(ck_lang lang);

#endif
