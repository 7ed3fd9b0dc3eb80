/* vocab.h - phoneme vocabularies: Kokoro-82M v1.0's (config.json "vocab"), embedded, and ones
 * built at run time (from another release's config.json, kokoro_config.h). No I/O; only
 * ck_vocab_new allocates. */
#ifndef CK_VOCAB_H
#define CK_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"

/* V: ids 0..177; id 0 is the pad/boundary token, 114 of ids 1..177 name one phoneme symbol each. */
#define CK_VOCAB_SIZE 178
#define CK_VOCAB_SYMBOLS 114

/* Id (1..177) of the symbol that is exactly this Unicode code point, or -1 when the code point is
 * not in the vocabulary (ids are never 0 here: 0 is not a symbol). Binary search, O(log 114). */
int ck_vocab_id(uint32_t code_point);

/* UTF-8 text of symbol `id` (a static string of one code point), or NULL for id 0, for ids with no
 * symbol, and for ids outside 0..CK_VOCAB_SIZE-1. */
const char *ck_vocab_symbol(int id);

/* Code point of the row-th symbol in code point order, row 0..CK_VOCAB_SYMBOLS-1 (for tests and
 * tools that walk the whole table); returns 0 and sets *id to -1 for row out of range. */
uint32_t ck_vocab_entry(size_t row, int *id);

/* ---- vocabulary objects: the functions above are these on ck_vocab_embedded() ---- */

/* A vocabulary of `size` ids 0..size-1 (config.json "n_token"): id 0 is the pad/boundary token and
 * never a symbol; each other id names at most one symbol, a single Unicode code point, and each
 * code point names at most one id (a bijection between symbols and defined ids). */
typedef struct ck_vocab ck_vocab;

#define CK_VOCAB_MAX_SIZE 32768  /* ids per vocabulary, the largest size ck_vocab_new accepts */

/* The embedded Kokoro-82M v1.0 table (CK_VOCAB_SIZE ids, CK_VOCAB_SYMBOLS symbols); static, never
 * NULL; ck_vocab_free ignores it. */
const ck_vocab *ck_vocab_embedded(void);

/* A new vocabulary of `size` ids (2..CK_VOCAB_MAX_SIZE) with no symbols yet; fill it with
 * ck_vocab_add. Errors: CK_E_ARG (null out, size out of range), CK_E_MEMORY. */
int ck_vocab_new(ck_vocab **out, size_t size, ck_error *err);

/* Defines symbol `utf8` (NUL-terminated: exactly one code point, strict UTF-8, not a C0 control
 * U+0000..U+001F nor DEL U+007F) as id `id` (1..size-1). Errors: CK_E_ARG with a message that
 * names the problem but not the file ("id 0: expected 1..177", "symbol is 2 code points, expected
 * one", "symbol U+0009 is a control character", "invalid UTF-8", "id 5 already names U+0061 'a'",
 * "U+0061 'a' already has id 43"; callers prefix the file and field); v unchanged on error. */
int ck_vocab_add(ck_vocab *v, const char *utf8, int id, ck_error *err);

/* Ids 0..size-1 the vocabulary spans (n_token); 0 for NULL. */
size_t ck_vocab_size(const ck_vocab *v);

/* Symbols defined (ids with a symbol); 0 for NULL. */
size_t ck_vocab_symbols(const ck_vocab *v);

/* Id (1..size-1) of the symbol that is exactly this code point, or -1 when it names none.
 * Binary search over the symbols. */
int ck_vocab_find(const ck_vocab *v, uint32_t code_point);

/* UTF-8 text of symbol `id` (valid until ck_vocab_free), or NULL for id 0, ids with no symbol and
 * ids outside 0..size-1. */
const char *ck_vocab_text(const ck_vocab *v, int id);

/* Code point of the row-th symbol in code point order (row 0..symbols-1), its id in *id; 0 and
 * *id = -1 for row out of range. */
uint32_t ck_vocab_at(const ck_vocab *v, size_t row, int *id);

/* Frees a vocabulary from ck_vocab_new; accepts NULL and ck_vocab_embedded() (no-op). */
void ck_vocab_free(ck_vocab *v);

#endif
