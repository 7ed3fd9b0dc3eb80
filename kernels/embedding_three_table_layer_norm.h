/* embedding_three_table_layer_norm.h - the ALBERT embedding op (three gathers, sum, LayerNorm). No I/O, no allocation. */
#ifndef CK_EMBEDDING_THREE_TABLE_LAYER_NORM_H
#define CK_EMBEDDING_THREE_TABLE_LAYER_NORM_H

#include <stddef.h>
#include <stdint.h>

/* Legend: T tokens, E embedding channels (128), V vocab rows (178), P positions (512), K token types (2).
 * Every table is row-major with row stride E. */
typedef struct {
    const float *word;       size_t word_rows;        /* [V,E] */
    const float *position;   size_t position_rows;    /* [P,E] */
    const float *token_type; size_t token_type_rows;  /* [K,E] */
    const float *gamma;      const float *beta;       /* [E] LayerNorm weight and bias */
    size_t channels;                                  /* E */
} ck_embedding_tables;

/* y[t] = LayerNorm(word[ids[t]] + token_type[tt[t]] + position[positions[t]]) * gamma + beta, i.e.
 * (x - mean) / sqrt(var + eps) * gamma + beta with population variance (HF transformers
 * AlbertEmbeddings.forward; torch.nn.LayerNorm; ALBERT uses eps 1e-12).
 * ids, positions, token_types [T] int32 (token_types NULL means all 0); y [T,E] with row stride
 * y_stride >= E in a buffer of y_count floats; pad columns [E, y_stride) are never written.
 * FP32 in and out; the three-row sum is float in HF's order ((word + type) + position); mean and
 * variance accumulate in double (shifted one-pass sums in 16 fixed lanes, layer_norm_row.h) and the
 * normalisation is done in double.
 * Only the table rows the ids select are checked for finiteness (checking whole tables per call is
 * too slow); gamma and beta are checked whole.
 * Errors, all returned before the first write (y untouched):
 *   CK_E_ARG       null pointer (tables, its fields, ids, positions, y when T > 0), eps <= 0 or NaN,
 *                  y overlapping a table, gamma, beta or an id array;
 *   CK_E_SIZE      E == 0, y_stride < E, span overflow, y_count below (T - 1) * y_stride + E,
 *                  a table's rows * E overflowing;
 *   CK_E_RANGE     ids[t] outside [0, word_rows), positions[t] outside [0, position_rows),
 *                  token_types[t] outside [0, token_type_rows);
 *   CK_E_NONFINITE NaN or Inf in a used row, gamma or beta (or a row sum that overflows).
 * T == 0 is a no-op returning CK_OK once the pointers and geometry are valid. */
int ck_embedding_three_table_layer_norm_f32(const int32_t *ids, const int32_t *positions,
                                            const int32_t *token_types, size_t tokens,
                                            const ck_embedding_tables *tables, float *y,
                                            size_t y_count, size_t y_stride, float eps);

#endif
