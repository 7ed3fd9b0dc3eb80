/* corpus_rank_internal.h - what the two files of a ckbatch-mpi rank share (corpus_rank.c: plan, layout,
 * encoding; corpus_rank_files.c: the in-place file, the records, the lock): the job struct and
 * the in-place writer. Private to engine/api. */
#ifndef CK_CORPUS_RANK_INTERNAL_H
#define CK_CORPUS_RANK_INTERNAL_H

#include <stddef.h>

#include "ck_log.h"
#include "ckbatch.h"
#include "strbuf.h"

#define CK_RANK_WINDOW_BATCHES 4      /* as the single run's window: 4 batches of max_batch_tokens */
#define CK_RANK_MAX_META 32
#define CK_RANK_RECORD_VERSION 1
#define CK_RANK_RECORD_MAX (1u << 20)

struct ck_rank_job {
    ck_model *model;
    ck_corpus_params opt;          /* the caller's (strings not owned) */
    size_t rank, ranks;
    ck_rank_plan_info info;
    int output_buffer;
    size_t cols;
    int32_t *ids;                  /* [n_ids] the range's sequences back to back, each [0, id..., 0] */
    size_t n_ids, ids_cap;
    size_t *seq_end;               /* [n_seqs] end of sequence i in ids (= rows through it) */
    size_t n_seqs, seqs_cap;
    ck_strbuf seq_text, skipped_text; /* the range's "sequences" and "skipped" JSON Lines */
    char plan_sha[65];             /* of ids, seq_text and skipped_text */
    char *meta_keys[CK_RANK_MAX_META], *meta_values[CK_RANK_MAX_META];
    size_t n_meta;
    char options[1200];            /* ck_corpus_options_identity */
    ck_rank_counts before, total;
    unsigned char *header;         /* [header_len] u64 length + padded JSON header */
    size_t header_len;
    char header_sha[65];
    unsigned long long rows_at, offsets_at, seqs_at, skipped_at, file_bytes;
    char *file_path, *job_record, *rank_record, *lock_path;
    int fd, lock_fd;
    size_t done_seqs, done_tokens; /* the committed mark: sequences [0, done_seqs) are written */
    size_t encoded_tokens;
    double encode_seconds;
};

/* One informational message to the caller's log (corpus_run.c has its own, for a session). */
#define rank_note(j, ...) ck_log((j)->opt.log, (j)->opt.log_ctx, CK_LOG_INFO, __VA_ARGS__)

/* Replaces the rank's progress record (atomically) with its mark (done_seqs, done_tokens). */
int ck_rank_commit(const ck_rank_job *j, ck_error *err);

#endif
