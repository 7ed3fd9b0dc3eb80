/* file.c - whole-file reads: open without blocking, refuse what is not a regular file, read in
 * pieces up to the cap. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
