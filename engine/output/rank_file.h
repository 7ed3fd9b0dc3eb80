/* rank_file.h - a ckbatch-mpi rank's job (ck_rank_job of ckbatch.h) and its files: the api room's
 * corpus_rank.c plans, lays out and encodes; output's rank_file.c writes the in-place file
 * OUT.partial.mpi, the job and rank progress records and the lock, with the single run's lock and
 * record helpers (output_internal.h). */
#ifndef CK_RANK_FILE_H
#define CK_RANK_FILE_H

#include <stddef.h>

#include "ck_log.h"
#include "ckbatch.h"
#include "strbuf.h"

#define CK_RANK_WINDOW_BATCHES 4      /* as the single run's window: 4 batches of max_batch_tokens */
#define CK_RANK_MAX_META 32
#define CK_RANK_RECORD_VERSION 2   /* 2: the records carry their own SHA-256 (as the single run's) */

struct ck_rank_job {
    ck_model *model;               /* opaque here; corpus_rank.c (api) runs it */
    const char *weights_identity;  /* the model's (ck_weights_identity), for the resume identity */
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
