/* ck_memory.c - 2 MiB aligned, huge-page advised allocation of a model's large buffers. */
#define _DEFAULT_SOURCE /* madvise(2), MADV_HUGEPAGE (Linux) */
#include "ck_memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void *ck_large_alloc(size_t bytes)
{
    if (bytes == 0) {
        return NULL;
    }
    size_t align = bytes >= CK_HUGE_PAGE_BYTES ? CK_HUGE_PAGE_BYTES : 64;
    if (bytes > SIZE_MAX - (align - 1)) {
        return NULL;
    }
    size_t rounded = (bytes + align - 1) / align * align; /* aligned_alloc: a multiple of align */
    void *p = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
    /* only the whole 2 MiB pages the caller asked for: the tail stays on 4 KiB pages, so writing
     * a buffer's last bytes never maps a huge page that is mostly padding (peak RSS, docs/memory.md) */
    size_t whole = bytes / CK_HUGE_PAGE_BYTES * CK_HUGE_PAGE_BYTES;
    if (p != NULL && whole > 0) {
        (void)madvise(p, whole, MADV_HUGEPAGE); /* advice: a failure leaves 4 KiB pages */
    }
#endif
    return p;
}

void ck_large_free(void *p)
{
    free(p);
}
