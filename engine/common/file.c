/* file.c - whole-file reads (open without blocking, refuse what is not a regular file, read in
 * pieces up to the cap), atomic writes (temp + fsync + rename + directory fsync), positioned writes
 * and reads in calls of at most CK_IO_MAX_CALL bytes. */
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Appends up to `room` bytes of fd to buf at *n, in pieces; -1 with errno on a read error. */
static int read_into(int fd, char *buf, size_t *n, size_t room)
{
    while (room > 0) {
        ssize_t got = read(fd, buf + *n, room);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return -1;
        }
        if (got == 0) {
            break;
        }
        *n += (size_t)got;
        room -= (size_t)got;
    }
    return 0;
}

int ck_file_read_all(const char *path, const char *what, size_t max_bytes, char **text,
                     size_t *len, ck_error *err)
{
    if (path == NULL || what == NULL || text == NULL) {
        return ck_fail(err, CK_E_ARG, "file: null path, role or text");
    }
    *text = NULL;
    /* O_NONBLOCK: opening a FIFO with no writer returns at once (it is refused below) */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot open %s: %s", path, what, strerror(errno));
    }
    struct stat st;
    int rc = CK_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = ck_fail(err, CK_E_IO, "%s: %s is not a regular file", path, what);
    }
    size_t cap = max_bytes < (size_t)1 << 16 ? max_bytes : (size_t)1 << 16, n = 0;
    char *buf = NULL;
    while (rc == CK_OK) {
        char *grown = realloc(buf, cap + 2); /* one byte past the cap tells "longer", one for NUL */
        if (grown == NULL) {
            rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory reading the %s", path, what);
            break;
        }
        buf = grown;
        if (read_into(fd, buf, &n, cap + 1 - n) != 0) {
            rc = ck_fail(err, CK_E_IO, "%s: read error: %s", path, strerror(errno));
        } else if (n > max_bytes) {
            rc = ck_fail(err, CK_E_FORMAT, "%s: larger than %zu bytes, the limit for a %s", path,
                         max_bytes, what);
        } else if (n < cap + 1) {
            break; /* end of file */
        } else {
            cap = cap * 2 < max_bytes ? cap * 2 : max_bytes;
        }
    }
    close(fd);
    if (rc != CK_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf;
    if (len != NULL) {
        *len = n;
    }
    return CK_OK;
}

int ck_file_map_open(ck_file_map *m, const char *path, ck_error *err)
{
    if (m == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "file map: null map or path");
    }
    *m = (ck_file_map){NULL, 0};
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    int rc = CK_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = ck_fail(err, CK_E_IO, "%s: not a regular file", path);
    } else if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            rc = ck_fail(err, CK_E_IO, "%s: cannot map: %s", path, strerror(errno));
        } else {
            *m = (ck_file_map){p, (size_t)st.st_size};
        }
    }
    close(fd);
    return rc;
}

void ck_file_map_close(ck_file_map *m)
{
    if (m != NULL && m->data != NULL) {
        munmap((void *)m->data, m->bytes);
    }
    if (m != NULL) {
        *m = (ck_file_map){NULL, 0};
    }
}

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c != NULL ? memcpy(c, s, n) : NULL;
}

static void atomic_free(ck_atomic_file *a)
{
    free(a->path);
    free(a->tmp);
    a->f = NULL;
    a->path = a->tmp = NULL;
}

int ck_atomic_open(ck_atomic_file *a, const char *path, const char *tmp, ck_error *err)
{
    if (a == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "atomic file: null file or path");
    }
    a->f = NULL;
    a->path = copy_string(path);
    a->tmp = tmp != NULL ? copy_string(tmp) : malloc(strlen(path) + 32);
    if (a->path == NULL || a->tmp == NULL) {
        atomic_free(a);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", path);
    }
    if (tmp == NULL) {
        snprintf(a->tmp, strlen(path) + 32, "%s.tmp.%ld", path, (long)getpid());
    }
    a->f = fopen(a->tmp, "wb");
    if (a->f == NULL) {
        int rc = ck_fail(err, CK_E_IO, "%s: cannot create: %s", a->tmp, strerror(errno));
        atomic_free(a);
        return rc;
    }
    return CK_OK;
}

/* fsync of the directory holding path, so a rename in it survives a power cut. Best effort: some
 * file systems refuse fsync on a directory, and the rename itself has happened. */
static void sync_dir(const char *path)
{
    char *dir = copy_string(path);
    if (dir == NULL) {
        return;
    }
    char *slash = strrchr(dir, '/');
    const char *name = slash == NULL ? "." : (slash == dir ? "/" : (*slash = '\0', dir));
    int fd = open(name, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int ck_file_publish(const char *tmp, const char *path, ck_error *err)
{
    if (tmp == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "publish: null path");
    }
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
        }
        return ck_fail(err, CK_E_IO, "%s: fsync failed (disk full?): %s", tmp, strerror(e));
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        return ck_fail(err, CK_E_IO, "%s: rename from %s failed: %s", path, tmp, strerror(errno));
    }
    sync_dir(path);
    return CK_OK;
}

int ck_atomic_commit(ck_atomic_file *a, ck_error *err)
{
    if (a == NULL || a->f == NULL) {
        return ck_fail(err, CK_E_ARG, "atomic file: not open");
    }
    errno = 0;
    int ok = fflush(a->f) == 0 && fsync(fileno(a->f)) == 0;
    int saved = errno;
    ok = fclose(a->f) == 0 && ok;
    saved = ok ? 0 : (saved ? saved : errno);
    a->f = NULL;
    int rc = ok ? ck_file_publish(a->tmp, a->path, err)
                : ck_fail(err, CK_E_IO, "%s: writing failed (disk full?): %s", a->path,
                          strerror(saved));
    if (rc != CK_OK) {
        unlink(a->tmp);
    }
    atomic_free(a);
    return rc;
}

void ck_atomic_abort(ck_atomic_file *a)
{
    if (a == NULL) {
        return;
    }
    if (a->f != NULL) {
        fclose(a->f);
        unlink(a->tmp);
    }
    atomic_free(a);
}

int ck_file_write_atomic(const char *path, const void *bytes, size_t n, ck_error *err)
{
    ck_atomic_file a;
    int rc = ck_atomic_open(&a, path, NULL, err);
    if (rc != CK_OK) {
        return rc;
    }
    if (n > 0 && fwrite(bytes, 1, n, a.f) != n) {
        rc = ck_fail(err, CK_E_IO, "%s: writing failed (disk full?): %s", path, strerror(errno));
        ck_atomic_abort(&a);
        return rc;
    }
    return ck_atomic_commit(&a, err);
}

/* pwrite of src (when not NULL) or pread into dst of n bytes at `at`, in calls of at most
 * CK_IO_MAX_CALL bytes, looped over short counts and EINTR. A call that moves nothing ends it:
 * ENOSPC for a write, EIO for a read (the file ended first). */
static int positioned_all(int fd, const unsigned char *src, unsigned char *dst, size_t n,
                          unsigned long long at)
{
    for (size_t done = 0; done < n;) {
        size_t want = n - done < CK_IO_MAX_CALL ? n - done : CK_IO_MAX_CALL;
        ssize_t got = src != NULL ? pwrite(fd, src + done, want, (off_t)(at + done))
                                  : pread(fd, dst + done, want, (off_t)(at + done));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            errno = got == 0 ? (src != NULL ? ENOSPC : EIO) : errno;
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

int ck_file_pwrite_all(int fd, const void *bytes, size_t n, unsigned long long at)
{
    return positioned_all(fd, bytes, NULL, n, at);
}

int ck_file_pread_all(int fd, void *bytes, size_t n, unsigned long long at)
{
    return positioned_all(fd, NULL, bytes, n, at);
}

int ck_file_io_failed(const char *path, const char *what, ck_error *err)
{
    return ck_fail(err, CK_E_IO, "%s: %s failed (disk full?): %s", path, what,
                   strerror(errno ? errno : EIO));
}

char *ck_file_suffixed(const char *path, const char *suffix)
{
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *s = malloc(n);
    if (s != NULL) {
        snprintf(s, n, "%s%s", path, suffix);
    }
    return s;
}

void ck_file_remove_siblings(const char *path, const char *suffix, int (*match)(const char *rest))
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    size_t dir_len = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    char dir[4096], prefix[1024];
    if (dir_len + 3 > sizeof dir ||
        (size_t)snprintf(prefix, sizeof prefix, "%s%s", base, suffix) >= sizeof prefix) {
        return;
    }
    memcpy(dir, dir_len > 0 ? path : "./", dir_len > 0 ? dir_len : 2);
    dir[dir_len > 0 ? dir_len : 2] = '\0';
    size_t n = strlen(prefix);
    DIR *d = opendir(dir);
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        if (strncmp(e->d_name, prefix, n) != 0 || (match != NULL && !match(e->d_name + n))) {
            continue;
        }
        char victim[4096 + 256];
        snprintf(victim, sizeof victim, "%s%s", dir, e->d_name);
        unlink(victim);
    }
    if (d != NULL) {
        closedir(d);
    }
}
