/* output_internal.h - the ck_output struct shared by output.c (append, finish) and
 * output_partial.c (commit records, resume). Not a public header: nothing outside those two uses it. */
#ifndef CK_OUTPUT_INTERNAL_H
#define CK_OUTPUT_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "output.h"
#include "sha256.h"

#define CK_OUTPUT_MAX_META 24 /* text + misaki + --config + a shard entry use 15 */

/* The append-only partial files beside the output, in this order (see output.h for their bytes). */
enum { CK_J_ROWS, CK_J_SEQS, CK_J_SKIPPED, CK_J_OFFSETS, CK_J_F0, CK_J_N, CK_J_COUNT };

typedef struct {
    char *path;
    FILE *f;        /* w+b (fresh) or r+b (resume); the rows journal is written only with pwrite */
    size_t bytes;   /* appended so far, committed or not */
    ck_sha256_ctx *sha; /* running SHA-256 of bytes [0, hashed) (not for an unresumable output) */
    size_t hashed;  /* bytes fed to sha: the committed size */
} ck_journal;

/* Path suffix (".partial", ...) and progress-record field ("rows_bytes", ...) of journal j. */
extern const char *const ck_output_journal_suffix[CK_J_COUNT];
extern const char *const ck_output_journal_field[CK_J_COUNT];

/* Everything here is O(1) in the number of sequences and skipped lines: those live in journals. */
struct ck_output {
    char *path, *record_path, *record_tmp, *lock_path;
    int lock_fd, locked;        /* PATH.partial.lock, held (flock) from open to free */
    ck_journal j[CK_J_COUNT];
    const char *rows_name;  /* name of the rows tensor: "features", "hidden" or "durations" (not
                               owned) */
    size_t cols;
    int durations;          /* 1: rows are int32 frames per token, I32 [T] + frame_offsets */
    int curves;             /* 1: a durations output that also holds f0 and n, F32 [2F] each */
    ck_output_mode mode;        /* RESUME only when continued from a record */
    int replaced_record;        /* a FRESH open found an interrupted run's record and replaced it */
    size_t n_seqs, tokens, commits, skipped;
    size_t placed;              /* rows [0, placed) of the rows journal are written (put or appended) */
    size_t last_skip_line;      /* highest line given to ck_output_skip by this run, 0 if none */
    cJSON *identity;            /* the record's "identity" object for this run */
    char *meta_keys[CK_OUTPUT_MAX_META];
    char *meta_values[CK_OUTPUT_MAX_META];
    size_t n_meta;
};

/* {"input_sha256", "input_bytes", "options", "weights"} of id, or NULL when out of memory. */
cJSON *ck_output_identity_json(const ck_output_identity *id);

/* Starts each journal's running SHA-256 (empty). CK_OK, CK_E_MEMORY or CK_E_BACKEND, with err set. */
int ck_output_begin_hashes(ck_output *o, ck_error *err);

/* Where strings a and b part: the start of the space-separated word holding their first
 * difference, so a refusal shows "threads=2" against "threads=1" (or "on_error=stop" against
 * "on_error=skip"), not a cut-off common prefix. Used by resume and by merge. */
size_t ck_output_parting_word(const char *a, const char *b);

/* Takes lock_path (flock, exclusive, not waiting) into *fd before any partial file of `output` is
 * touched: two runs writing the same output (a single run's journals or an MPI job's in-place
 * file) would interleave their bytes. The lock goes with the process (close or exit, also on
 * SIGKILL). Errors: CK_E_IO "OUTPUT: another ckbatch run is writing this output (LOCK is locked):
 * wait for it or choose another output path", or the open/flock failure; *fd is then -1. */
int ck_output_lock(const char *lock_path, const char *output, int *fd, ck_error *err);

/* Writes the progress record r to path atomically (through tmp, a fixed name the lock makes safe,
 * or NULL for PATH.tmp.<pid>): r printed unformatted with a last field "record_sha256", the
 * SHA-256 of r printed unformatted without it, so an edited count or mark is refused like an
 * edited journal. Adds that field to r. Errors: CK_E_MEMORY, CK_E_BACKEND, those of the atomic
 * writer. */
int ck_output_record_write(const char *path, const char *tmp, cJSON *r, ck_error *err);

/* Reads the progress record at path into *r (the caller deletes it): at most 1 MiB, one JSON
 * object whose "version" is `version` and whose "record_sha256" matches (removed from *r). With
 * missing_ok a path that does not exist gives *r NULL and CK_OK. Errors: those of
 * ck_file_read_all; CK_E_FORMAT "PATH: ..." naming the field (not JSON, version, a changed
 * record). */
int ck_output_record_read(const char *path, int version, int missing_ok, cJSON **r,
                          ck_error *err);

/* Reopens o's partial files from its record (see ck_output_open, CK_OUTPUT_RESUME); the record must
 * exist. */
int ck_output_resume(ck_output *o, ck_output_mark *mark, ck_error *err);

#endif
