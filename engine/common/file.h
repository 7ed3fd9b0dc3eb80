/* file.h - the small file machinery every room shares: whole-file reads with one cap policy (circuit,
 * config.json, manifest, X-Ray profile, progress records) and one atomic writer (features file,
 * progress record, X-Ray report, demo weights) over one publication step (fsync, rename, directory
 * fsync) and one I/O call limit. Knows no format. */
#ifndef CK_FILE_H
#define CK_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "ck_error.h"

/* Bytes one read, write, pread, pwrite or copy_file_range call moves at most (one Linux call
 * moves at most 0x7ffff000 bytes, and some file systems mishandle 2 GiB and more); every writer
 * that loops over large buffers cuts them at this size. */
#define CK_IO_MAX_CALL (1u << 30)

/* Reads the whole regular file at `path` into *text (malloc'd, NUL-terminated after its *len bytes;
 * the caller frees it). `what` names the file's role in messages ("circuit", "config.json", ...).
 * At most max_bytes are read: a longer file is refused, not truncated; the size is not trusted
 * from stat, the bytes are counted as read. A directory, FIFO or device is refused before any read
 * (a FIFO without a writer does not block). len may be NULL.
 * Errors: CK_E_ARG (null path, what or text); CK_E_IO "PATH: cannot open WHAT: REASON" (missing,
 * no permission), "PATH: WHAT is not a regular file", "PATH: read error: REASON"; CK_E_FORMAT
 * "PATH: larger than MAX bytes, the limit for a WHAT"; CK_E_MEMORY. On error *text is NULL. */
int ck_file_read_all(const char *path, const char *what, size_t max_bytes, char **text,
                     size_t *len, ck_error *err);

/* A regular file mapped read-only (private), for the readers that use bytes in place. */
typedef struct {
    const unsigned char *data; /* NULL for an empty file */
    size_t bytes;
} ck_file_map;

/* Maps the regular file at path. Errors: CK_E_ARG; CK_E_IO "PATH: cannot open: REASON", "PATH:
 * not a regular file", "PATH: cannot map: REASON". On error *m is empty. */
int ck_file_map_open(ck_file_map *m, const char *path, ck_error *err);

/* Unmaps; *m is empty again. Accepts an empty m. */
void ck_file_map_close(ck_file_map *m);

/* A file written under a temporary name and renamed onto its path when complete: a reader of the
 * path sees the old file or the whole new one, never a part. Durability: the data is fsynced before
 * the rename and the directory after it, so a power cut after commit keeps the new file. */
typedef struct {
    FILE *f;      /* write through this between open and commit */
    char *path;   /* final path */
    char *tmp;    /* temporary path beside it */
} ck_atomic_file;

/* Creates the temporary file: `tmp` if given (copied; the caller holds a lock that makes a fixed
 * name safe), else PATH.tmp.<pid>. Errors: CK_E_ARG, CK_E_MEMORY, CK_E_IO "TMP: cannot create:
 * REASON". On error nothing is left open or on disk. */
int ck_atomic_open(ck_atomic_file *a, const char *path, const char *tmp, ck_error *err);

/* Flushes, fsyncs and closes the temporary file, then ck_file_publish onto the path. On any failure
 * the temporary file is removed and the path left as it was. Frees a either way.
 * Errors: CK_E_IO "PATH: writing failed (disk full?): REASON", or those of ck_file_publish. */
int ck_atomic_commit(ck_atomic_file *a, ck_error *err);

/* The one way a finished file takes its final name (the atomic writer, a compiled library, the MPI
 * output): fsyncs the file at tmp, renames it onto path, then fsyncs path's directory (best effort:
 * some file systems refuse fsync on a directory, and the rename has happened) so a power cut keeps
 * the new file. Errors: CK_E_ARG; CK_E_IO "TMP: fsync failed (disk full?): REASON" or "PATH: rename
 * from TMP failed: REASON" (tmp then still exists: the caller removes it or keeps it). */
int ck_file_publish(const char *tmp, const char *path, ck_error *err);

/* Closes and removes the temporary file; the path is left as it was. Accepts a never-opened
 * (zeroed) a. */
void ck_atomic_abort(ck_atomic_file *a);

/* The whole of bytes[n] written to path atomically (ck_atomic_open + write + ck_atomic_commit,
 * temporary PATH.tmp.<pid>). Errors: those of the two. */
int ck_file_write_atomic(const char *path, const void *bytes, size_t n, ck_error *err);

/* Writes n bytes at `at` of fd: calls of at most CK_IO_MAX_CALL bytes, looped over short writes and
 * EINTR. 0, or -1 with errno set (ENOSPC when a call wrote nothing). */
int ck_file_pwrite_all(int fd, const void *bytes, size_t n, unsigned long long at);

/* Reads n bytes at `at` of fd the same way. 0, or -1 with errno set (EIO when the file ends
 * first). */
int ck_file_pread_all(int fd, void *bytes, size_t n, unsigned long long at);

/* CK_E_IO "PATH: WHAT failed (disk full?): strerror(errno)" (EIO when errno is 0) into err;
 * returns CK_E_IO. */
int ck_file_io_failed(const char *path, const char *what, ck_error *err);

/* path followed by suffix, malloc'd (the caller frees it); NULL when out of memory. */
char *ck_file_suffixed(const char *path, const char *suffix);

/* Removes every file beside `path` (in its directory) named path's base name + suffix + a rest
 * that match accepts (match NULL: any rest), e.g. the PATH.tmp.<pid> files of killed writers.
 * Best effort: errors (an unreadable directory, a file already gone) are ignored. */
void ck_file_remove_siblings(const char *path, const char *suffix, int (*match)(const char *rest));

#endif
