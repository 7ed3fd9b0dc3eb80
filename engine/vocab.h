/* vocab.h - Kokoro-82M's phoneme vocabulary (config.json "vocab"), embedded; no I/O, no allocation. */
#ifndef CK_VOCAB_H
#define CK_VOCAB_H

#include <stddef.h>
#include <stdint.h>

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

#endif
