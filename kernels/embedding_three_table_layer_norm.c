/* embedding_three_table_layer_norm.c - gathers three embedding rows per token, sums, LayerNorms. No allocation, no I/O. */
#include "embedding_three_table_layer_norm.h"

#include "ck_check.h"
#include "ck_isa.h"
#include "layer_norm_row.h"

/* Elements of a [rows, E] table with row stride E; CK_E_SIZE when rows * E * sizeof(float) overflows. */
static int table_elements(size_t rows, size_t channels, size_t *elements)
{
    if (ck_span(rows, channels, channels, elements) != 0 || *elements > SIZE_MAX / sizeof(float)) {
        return CK_E_SIZE;
    }
    return 0;
}

/* 1 when the y bytes [y, y + y_bytes) overlap the table of `rows` rows at `table`. */
static int overlaps_table(const float *y, size_t y_bytes, const float *table, size_t rows, size_t channels)
{
    return ck_overlap(y, y_bytes, table, rows * channels * sizeof(float));
}

static int check_geometry(const int32_t *ids, const int32_t *positions, const int32_t *token_types,
                          size_t tokens, const ck_embedding_tables *tb, const float *y, size_t y_count,
                          size_t y_stride)
{
    size_t n, y_span;
    if (tb == NULL || tb->word == NULL || tb->position == NULL || tb->token_type == NULL ||
        tb->gamma == NULL || tb->beta == NULL) {
        return CK_E_ARG;
    }
    if (tokens > 0 && (ids == NULL || positions == NULL || y == NULL)) {
        return CK_E_ARG;
    }
    size_t e = tb->channels;
    if (e == 0 || table_elements(tb->word_rows, e, &n) != 0 ||
        table_elements(tb->position_rows, e, &n) != 0 || table_elements(tb->token_type_rows, e, &n) != 0 ||
        ck_span(tokens, e, y_stride, &y_span) != 0 || y_span > y_count || tokens > SIZE_MAX / sizeof(int32_t)) {
        return CK_E_SIZE;
    }
    size_t yb = y_span * sizeof(float), ib = tokens * sizeof(int32_t);
    if (overlaps_table(y, yb, tb->word, tb->word_rows, e) ||
        overlaps_table(y, yb, tb->position, tb->position_rows, e) ||
        overlaps_table(y, yb, tb->token_type, tb->token_type_rows, e) ||
        overlaps_table(y, yb, tb->gamma, 1, e) || overlaps_table(y, yb, tb->beta, 1, e) ||
        ck_overlap(y, yb, ids, ib) || ck_overlap(y, yb, positions, ib) ||
        (token_types != NULL && ck_overlap(y, yb, token_types, ib))) {
        return CK_E_ARG;
    }
    return 0;
}

/* 1 when 0 <= id < rows. */
static int in_range(int32_t id, size_t rows)
{
    return id >= 0 && (size_t)id < rows;
}

/* The three table rows token t selects (ids already range-checked). */
typedef struct {
    const float *word, *type, *position;  /* [E] each */
} token_rows;

static token_rows rows_of(const int32_t *ids, const int32_t *positions, const int32_t *token_types, size_t t,
                          const ck_embedding_tables *tb)
{
    size_t e = tb->channels;
    token_rows r = {tb->word + (size_t)ids[t] * e,
                    tb->token_type + (size_t)(token_types ? token_types[t] : 0) * e,
                    tb->position + (size_t)positions[t] * e};
    return r;
}

CK_ALWAYS_INLINE int check_values(const int32_t *ids, const int32_t *positions, const int32_t *token_types,
                        size_t tokens, const ck_embedding_tables *tb)
{
    size_t e = tb->channels;
    for (size_t t = 0; t < tokens; t++) {
        int32_t type = token_types ? token_types[t] : 0;
        if (!in_range(ids[t], tb->word_rows) || !in_range(positions[t], tb->position_rows) ||
            !in_range(type, tb->token_type_rows)) {
            return CK_E_RANGE;
        }
    }
    if (!ck_all_finite(tb->gamma, 1, e, e) || !ck_all_finite(tb->beta, 1, e, e)) {
        return CK_E_NONFINITE;
    }
    /* A finite float sum implies finite terms (NaN and Inf propagate), and rules out overflow.
     * Branch-free probes (ck_check.h), tested once: on error nothing has been written. */
    uint32_t worst = 0;
    for (size_t t = 0; t < tokens; t++) {
        token_rows r = rows_of(ids, positions, token_types, t, tb);
        for (size_t c = 0; c < e; c++) {
            worst = ck_finite_probe(worst, ck_ln_term(r.word, r.type, r.position, c));
        }
    }
    return worst < CK_F32_INF_BITS ? 0 : CK_E_NONFINITE;
}

/* One call's arguments once its geometry is checked. */
typedef struct {
    const int32_t *ids, *positions, *token_types;
    size_t tokens;
    const ck_embedding_tables *tables;
    float *y;
    size_t y_stride;
    float eps;
} embed_call;

/* The value checks, then every token: instantiated per ISA below (the probe loop vectorizes too). */
CK_ALWAYS_INLINE int check_and_embed(const embed_call *a, ck_isa isa)
{
    int rc = check_values(a->ids, a->positions, a->token_types, a->tokens, a->tables);
    if (rc != 0) {
        return rc;
    }
    const ck_embedding_tables *tb = a->tables;
    for (size_t t = 0; t < a->tokens; t++) {
        token_rows r = rows_of(a->ids, a->positions, a->token_types, t, tb);
        ck_layer_norm_row_impl(a->y + t * a->y_stride, r.word, r.type, r.position, tb->gamma, tb->beta,
                               tb->channels, a->eps, isa);
    }
    return 0;
}

static int check_and_embed_portable(const embed_call *a)
{
    return check_and_embed(a, CK_ISA_PORTABLE);
}

CK_TARGET_AVX512 static int check_and_embed_avx512(const embed_call *a)
{
    return check_and_embed(a, CK_ISA_AVX512);
}

int ck_embedding_three_table_layer_norm_f32(const int32_t *ids, const int32_t *positions,
                                            const int32_t *token_types, size_t tokens,
                                            const ck_embedding_tables *tables, float *y,
                                            size_t y_count, size_t y_stride, float eps)
{
    int rc = check_geometry(ids, positions, token_types, tokens, tables, y, y_count, y_stride);
    if (rc != 0) {
        return rc;
    }
    if (!(eps > 0.0f)) {
        return CK_E_ARG;
    }
    const embed_call a = {ids, positions, token_types, tokens, tables, y, y_stride, eps};
    return ck_kernels_isa_level() == CK_ISA_AVX512 ? check_and_embed_avx512(&a) : check_and_embed_portable(&a);
}
