/* rank_file.c - the files of a ckbatch-mpi rank: the in-place output OUT.partial.mpi (rank
 * 0 creates it at its final size with the header), each rank's offsets and records written at
 * their places, the job record and the rank records a resume reads, the lock, the rename at the
 * end. Computes nothing; prints nothing. */
#define _GNU_SOURCE /* pwrite, pread, fdatasync, flock */
#include "rank_file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "output_internal.h"
#include "sha256.h"

/* ---- in-place writes and records ---- */

/* Writes json (deleted here) to path atomically, with its SHA-256 (ck_output_record_write). */
static int write_record(const char *path, cJSON *json, ck_error *err)
{
    int rc = json != NULL ? ck_output_record_write(path, NULL, json, err)
                          : ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    cJSON_Delete(json);
    return rc;
}

static const char *record_string(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double record_number(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1.0;
}

/* ---- rank 0: the lock, the file, the job record ---- */

static cJSON *identity_json(const ck_rank_job *j, const char *input_sha, unsigned long long bytes)
{
    cJSON *id = cJSON_CreateObject();
    if (id == NULL || !cJSON_AddStringToObject(id, "input_sha256", input_sha) ||
        !cJSON_AddNumberToObject(id, "input_bytes", (double)bytes) ||
        !cJSON_AddStringToObject(id, "options", j->options) ||
        !cJSON_AddStringToObject(id, "weights", j->weights_identity)) {
        cJSON_Delete(id);
        return NULL;
    }
    return id;
}

static int create_fresh(ck_rank_job *j, cJSON *identity, ck_error *err)
{
    if (unlink(j->job_record) != 0 && errno != ENOENT) {
        return ck_fail(err, CK_E_IO, "%s: cannot remove an old progress record: %s",
                       j->job_record, strerror(errno));
    }
    /* the rank records of any earlier run (any number of ranks), and the NAME.tmp.<pid> a rank
     * killed while replacing its record left: no rank of this run may find one */
    ck_file_remove_siblings(j->opt.output, ".partial.rank-", NULL);
    ck_file_remove_siblings(j->opt.output, ".partial.mpi.json.tmp.", NULL);
    int fd = open(j->file_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot create the output being written: %s",
                       j->file_path, strerror(errno));
    }
    int ok = ftruncate(fd, (off_t)j->file_bytes) == 0 &&
             ck_file_pwrite_all(fd, j->header, j->header_len, 0) == 0 && fdatasync(fd) == 0;
    int saved = errno;
    close(fd);
    errno = saved;
    if (!ok) {
        return ck_file_io_failed(j->file_path, "sizing the file and writing its header", err);
    }
    cJSON *rec = cJSON_CreateObject();
    if (rec == NULL || !cJSON_AddNumberToObject(rec, "version", CK_RANK_RECORD_VERSION) ||
        !cJSON_AddNumberToObject(rec, "ranks", (double)j->ranks) ||
        !cJSON_AddItemToObject(rec, "identity", cJSON_Duplicate(identity, 1)) ||
        !cJSON_AddStringToObject(rec, "header_sha256", j->header_sha) ||
        !cJSON_AddNumberToObject(rec, "file_bytes", (double)j->file_bytes)) {
        cJSON_Delete(rec);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", j->job_record);
    }
    return write_record(j->job_record, rec, err);
}

/* The job record against this run: ranks first (the one thing a user changes on purpose), then
 * each identity field, then the header; the message names the field. */
static int check_job_record(const ck_rank_job *j, const cJSON *rec, const cJSON *identity,
                            ck_error *err)
{
    const char *out = j->opt.output;
    double ranks = record_number(rec, "ranks");
    if (ranks != (double)j->ranks) {
        return ck_fail(err, CK_E_STATE, "resume: %s: field \"ranks\": the interrupted run had "
                       "ranks=%.0f, this run has ranks=%zu: resume with the same number of ranks "
                       "(%.0f), or start again with resume off", out, ranks, j->ranks, ranks);
    }
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(rec, "identity");
    const cJSON *field = NULL;
    cJSON_ArrayForEach(field, identity) {
        const cJSON *was = cJSON_GetObjectItemCaseSensitive(old, field->string);
        if (was == NULL || !cJSON_Compare(was, field, 1)) {
            return ck_fail(err, CK_E_STATE, "resume: %s: field \"%s\" differs from the "
                           "interrupted run's: resume with the same input, options and weights, or "
                           "start again with resume off", out, field->string);
        }
    }
    const char *sha = record_string(rec, "header_sha256");
    if (sha == NULL || strcmp(sha, j->header_sha) != 0) {
        return ck_fail(err, CK_E_STATE, "resume: %s: field \"header_sha256\" differs from the "
                       "interrupted run's (another plan of the same input: a different G2P?)", out);
    }
    if (record_number(rec, "file_bytes") != (double)j->file_bytes) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"file_bytes\": does not match the plan",
                       j->job_record);
    }
    return CK_OK;
}

/* The header bytes and size of OUT.partial.mpi as the record says they were written. */
static int check_file(const ck_rank_job *j, ck_error *err)
{
    struct stat st;
    unsigned char *head = malloc(j->header_len);
    int fd = open(j->file_path, O_RDONLY | O_CLOEXEC);
    int ok = head != NULL && fd >= 0 && fstat(fd, &st) == 0 &&
             (unsigned long long)st.st_size == j->file_bytes &&
             ck_file_pread_all(fd, head, j->header_len, 0) == 0 &&
             memcmp(head, j->header, j->header_len) == 0;
    if (fd >= 0) {
        close(fd);
    }
    free(head);
    return ok ? CK_OK : ck_fail(err, CK_E_FORMAT, "%s: missing, resized or its header changed "
                                "since the interrupted run: start again with resume off",
                                j->file_path);
}

int ck_rank_create(ck_rank_job *j, int *resumed, ck_error *err)
{
    if (j == NULL || resumed == NULL || j->header == NULL || j->rank != 0) {
        return ck_fail(err, CK_E_ARG, "rank create: rank 0 after ck_rank_layout only");
    }
    *resumed = 0;
    char sha[65];
    struct stat st;
    int rc = ck_output_lock(j->lock_path, j->opt.output, &j->lock_fd, err);
    rc = rc == CK_OK ? ck_sha256_file(j->opt.input, sha, err) : rc;
    if (rc == CK_OK && stat(j->opt.input, &st) != 0) {
        rc = ck_fail(err, CK_E_IO, "%s: cannot stat input", j->opt.input);
    }
    cJSON *identity = rc == CK_OK ? identity_json(j, sha, (unsigned long long)st.st_size) : NULL;
    cJSON *rec = NULL;
    if (rc == CK_OK && identity == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", j->job_record);
    }
    if (rc == CK_OK && j->opt.resume) {
        rc = ck_output_record_read(j->job_record, CK_RANK_RECORD_VERSION, 1, &rec, err);
    }
    if (rc == CK_OK && rec != NULL) {
        rc = check_job_record(j, rec, identity, err);
        rc = rc == CK_OK ? check_file(j, err) : rc;
        *resumed = rc == CK_OK;
    } else if (rc == CK_OK) {
        if (j->opt.resume) {
            rank_note(j, "no progress record for %s: starting from the beginning", j->opt.output);
        }
        rc = create_fresh(j, identity, err);
    }
    cJSON_Delete(rec);
    cJSON_Delete(identity);
    return rc;
}

/* ---- every rank: its records in place, its progress record ---- */

/* Offsets entries before.sequences + 1 .. + n_seqs (and entry 0 on rank 0), i64 little-endian. */
static int write_offsets(ck_rank_job *j)
{
    size_t first = j->rank == 0 ? 0 : 1, n = j->n_seqs + (j->rank == 0);
    unsigned char *b = malloc(n * 8 + 1);
    if (b == NULL) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        size_t seq = k + first; /* 1-based end of sequence seq-1 of the rank; 0 for entry 0 */
        unsigned long long v = j->before.tokens + (seq > 0 ? j->seq_end[seq - 1] : 0);
        for (int i = 0; i < 8; i++) {
            b[k * 8 + (size_t)i] = (unsigned char)(v >> (8 * i));
        }
    }
    int rc = ck_file_pwrite_all(j->fd, b, n * 8, j->offsets_at + (first ? 8 : 0));
    free(b);
    return rc;
}

/* The rank's progress record against its plan: *done from it, or 0 without a record. */
static int read_rank_record(ck_rank_job *j, ck_error *err)
{
    cJSON *rec = NULL;
    int rc = ck_output_record_read(j->rank_record, CK_RANK_RECORD_VERSION, 1, &rec, err);
    if (rc != CK_OK || rec == NULL) {
        return rc;
    }
    const char *plan = record_string(rec, "plan_sha256"), *head = record_string(rec, "header_sha256");
    double seqs = record_number(rec, "sequences_done"), tokens = record_number(rec, "tokens_done");
    if (record_number(rec, "version") != CK_RANK_RECORD_VERSION ||
        record_number(rec, "rank") != (double)j->rank ||
        record_number(rec, "ranks") != (double)j->ranks || head == NULL ||
        strcmp(head, j->header_sha) != 0) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: not this job's record (version, rank, ranks or "
                     "header_sha256)", j->rank_record);
    } else if (plan == NULL || strcmp(plan, j->plan_sha) != 0) {
        rc = ck_fail(err, CK_E_STATE, "resume: %s: field \"plan_sha256\": this rank's plan differs "
                     "from the interrupted run's", j->rank_record);
    } else if (!(seqs >= 0 && seqs <= (double)j->n_seqs) ||
               tokens != (seqs > 0 ? (double)j->seq_end[(size_t)seqs - 1] : 0.0)) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: fields \"sequences_done\", \"tokens_done\": outside "
                     "the plan", j->rank_record);
    } else {
        j->done_seqs = (size_t)seqs;
        j->done_tokens = (size_t)tokens;
    }
    cJSON_Delete(rec);
    return rc;
}

int ck_rank_commit(const ck_rank_job *j, ck_error *err)
{
    cJSON *rec = cJSON_CreateObject();
    if (rec == NULL || !cJSON_AddNumberToObject(rec, "version", CK_RANK_RECORD_VERSION) ||
        !cJSON_AddNumberToObject(rec, "rank", (double)j->rank) ||
        !cJSON_AddNumberToObject(rec, "ranks", (double)j->ranks) ||
        !cJSON_AddStringToObject(rec, "header_sha256", j->header_sha) ||
        !cJSON_AddStringToObject(rec, "plan_sha256", j->plan_sha) ||
        !cJSON_AddNumberToObject(rec, "sequences_done", (double)j->done_seqs) ||
        !cJSON_AddNumberToObject(rec, "tokens_done", (double)j->done_tokens)) {
        cJSON_Delete(rec);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", j->rank_record);
    }
    return write_record(j->rank_record, rec, err);
}

int ck_rank_open(ck_rank_job *j, int resumed, ck_error *err)
{
    if (j == NULL || j->header == NULL) {
        return ck_fail(err, CK_E_ARG, "rank open: after ck_rank_layout only");
    }
    j->fd = open(j->file_path, O_RDWR | O_CLOEXEC);
    if (j->fd < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot open the output being written: %s", j->file_path,
                       strerror(errno));
    }
    if (write_offsets(j) != 0) {
        return ck_file_io_failed(j->file_path, "writing the offsets", err);
    }
    if (ck_file_pwrite_all(j->fd, j->seq_text.data, j->seq_text.len, j->seqs_at) != 0 ||
        ck_file_pwrite_all(j->fd, j->skipped_text.data, j->skipped_text.len, j->skipped_at) != 0 ||
        fdatasync(j->fd) != 0) {
        return ck_file_io_failed(j->file_path, "writing the sequences and skipped records", err);
    }
    if (!resumed) {
        return CK_OK;
    }
    int rc = read_rank_record(j, err);
    if (rc == CK_OK) {
        rank_note(j, "resuming at sequence %zu of %zu (%zu tokens already done)", j->done_seqs,
             j->n_seqs, j->done_tokens);
    }
    return rc;
}

/* ---- the end ---- */

int ck_rank_finish(ck_rank_job *j, ck_error *err)
{
    if (j == NULL || j->rank != 0 || j->fd < 0) {
        return ck_fail(err, CK_E_ARG, "rank finish: rank 0 after ck_rank_open only");
    }
    int rc = ck_file_publish(j->file_path, j->opt.output, err);
    if (rc != CK_OK) {
        return rc;
    }
    unlink(j->job_record);
    ck_file_remove_siblings(j->opt.output, ".partial.mpi.json.tmp.", NULL);
    ck_file_remove_siblings(j->opt.output, ".partial.rank-", NULL); /* the file is complete */
    unlink(j->lock_path);
    return CK_OK;
}

void ck_rank_cleanup(ck_rank_job *j)
{
    if (j != NULL) {
        unlink(j->rank_record);
    }
}

