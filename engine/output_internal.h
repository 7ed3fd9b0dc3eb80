/* output_internal.h - the ck_output struct shared by output.c (append, finish) and
 * output_partial.c (commit records, resume). Not a public header: nothing outside those two uses it. */
#ifndef CK_OUTPUT_INTERNAL_H
#define CK_OUTPUT_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "output.h"

#define CK_OUTPUT_MAX_META 16

struct ck_output {
    char *path, *rows_path, *seqs_path, *record_path, *record_tmp;
    FILE *rows, *seqs;          /* PATH.partial, PATH.partial.seqs (w+b, positioned at the end) */
    size_t cols;
    size_t rows_bytes, seqs_bytes; /* appended so far (committed or not) */
    int64_t *offsets;           /* [n_seqs + 1] */
    size_t n_seqs, cap_seqs, commits;
    cJSON *skipped;             /* [{"line", "error"}] */
    cJSON *identity;            /* the record's "identity" object for this run */
    char *meta_keys[CK_OUTPUT_MAX_META];
    char *meta_values[CK_OUTPUT_MAX_META];
    size_t n_meta;
};

/* Grows offsets to hold `need` sequences. Returns CK_OK or CK_E_MEMORY. */
int ck_output_grow(ck_output *o, size_t need);

/* {"input_sha256", "input_bytes", "options", "weights"} of id, or NULL when out of memory. */
cJSON *ck_output_identity_json(const ck_output_identity *id);

/* The first seqs_bytes bytes of the journal as the JSON array "[{...},...]" (malloc'd), or NULL
 * with err set (CK_E_MEMORY, CK_E_IO). */
char *ck_output_journal_array(ck_output *o, ck_error *err);

/* Reopens o's partial files from its record (see ck_output_open, resume 1). */
int ck_output_resume(ck_output *o, ck_output_mark *mark, ck_error *err);

#endif
