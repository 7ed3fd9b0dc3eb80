/* xray_internal.h - one case of a capture file (inputs and stored rows), shared by xray_files.c and
 * xray_run.c. Not a public API. */
#ifndef CK_XRAY_INTERNAL_H
#define CK_XRAY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "safetensors.h"
#include "xray.h"

/* A case's inputs, copied out of the mapping (its data may be unaligned). */
typedef struct {
    char name[CK_XRAY_CASE_MAX];
    size_t n_seqs, tokens, n_rows;
    size_t *offsets;            /* [n_seqs + 1] */
    int32_t *ids;               /* [tokens] */
    size_t *rows;               /* [n_rows] packed token indices, ascending */
    size_t *row_seq, *row_token; /* [n_rows] sequence of each stored row, position inside it */
} ck_xray_case;

/* Loads and checks <name>.offsets/.rows/.ids of f. Errors: CK_E_FORMAT (missing, wrong dtype or
 * shape, offsets not ascending from 0, rows not ascending below T; message names file and tensor),
 * CK_E_MEMORY, CK_E_ARG (name too long). */
int ck_xray_case_load(ck_xray_case *xc, const ck_st_file *f, const char *path, const char *name,
                      ck_error *err);

/* Frees the arrays; accepts a zeroed case. */
void ck_xray_case_free(ck_xray_case *xc);

/* Name of case i (the i-th tensor whose name ends in ".rows") into out, 0 when there is none. */
int ck_xray_case_name(const ck_st_file *f, size_t i, char out[CK_XRAY_CASE_MAX]);

/* Compares one checkpoint of a case: oracle and candidate tensors (either may be NULL: NOT_TESTED). */
int ck_xray_compare_tensors(const ck_xray_case *xc, const char *checkpoint,
                            const ck_st_tensor *cand, const ck_st_tensor *oracle,
                            const ck_xray_profile *profile, ck_xray_report *rep, ck_error *err);

#endif
