/* embedding.h - a plain embedding lookup: y[t] = table[ids[t]] (torch.nn.Embedding). No I/O, no allocation. */
#ifndef CK_EMBEDDING_H
#define CK_EMBEDDING_H

#include <stddef.h>
#include <stdint.h>

/* y[t, c] = table[ids[t], c] for t < n, c < C: exact copies (Kokoro's text_encoder.embedding [178, 512],
 * SYNTHESIS.md 1.2). ids [n] int32; table [V, C] row-major; y [n, C] with row stride y_stride >= C in
 * y_count elements (pad columns untouched).
 * Errors, before the first write (y untouched): CK_E_ARG (null pointer when n > 0, table null,
 * y overlapping ids or table), CK_E_SIZE (V or C 0, stride below C, a count short, overflow),
 * CK_E_RANGE (an id < 0 or >= V), CK_E_NONFINITE (a NaN or Inf in a row the ids pick). */
int ck_embedding_f32(const int32_t *ids, size_t n, const float *table, size_t table_rows,
                     size_t channels, float *y, size_t y_count, size_t y_stride);

#endif
