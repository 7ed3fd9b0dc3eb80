/* fuzz_memfile.h - fuzz-harness helper: puts the input bytes in an anonymous memory file and names
 * it by /proc/self/fd so path-taking parsers read it without touching a disk. Harnesses only. */
#ifndef CK_FUZZ_MEMFILE_H
#define CK_FUZZ_MEMFILE_H

#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data[0..size) to a fresh memfd and its /proc path into path[cap]; returns the fd or -1. */
static int ck_fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("ck_fuzz", 0);
    if (fd < 0) {
        return -1;
    }
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
