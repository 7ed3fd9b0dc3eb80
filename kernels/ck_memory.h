/* ck_memory.h - the large, long-lived buffers of a model (packed linear weights, arenas, staging):
 * allocated once at load, never on the hot path.
 *
 * A buffer of at least CK_HUGE_PAGE_BYTES is placed at a 2 MiB boundary and the kernel is advised
 * to back its whole 2 MiB pages with transparent huge pages (madvise(MADV_HUGEPAGE), which Debian's
 * default THP mode "madvise" honours); the part past the last whole 2 MiB page stays on 4 KiB pages,
 * so no huge page is mostly padding and peak RSS does not grow (docs/memory.md). Why: the FFN and
 * attention weights are 4-28 MiB each in fp32 and every batch streams all of them; with 4 KiB pages
 * their dTLB misses depend on where malloc happened to place each copy, so two identical models in
 * one process ran at different speeds by load order (docs/generated.md, "Speed"). With 2 MiB pages
 * every model gets the same placement. The advice is only advice: when THP is off ("never") or the
 * call fails, the buffer is still valid, aligned memory with 4 KiB pages, and results never depend
 * on it (the bits are the same either way).
 *
 * Smaller buffers get a 64-byte aligned block. Thread-safe (malloc and madvise are). */
#ifndef CK_MEMORY_H
#define CK_MEMORY_H

#include <stddef.h>

#define CK_HUGE_PAGE_BYTES ((size_t)2 << 20)

/* A block of at least `bytes` bytes, 64-byte aligned (2 MiB aligned, its whole 2 MiB pages
 * huge-page advised, when bytes >= CK_HUGE_PAGE_BYTES), uninitialised; NULL when bytes is 0, on overflow or when allocation
 * fails. Release with ck_large_free. */
void *ck_large_alloc(size_t bytes);

/* Releases a block from ck_large_alloc; accepts NULL. */
void ck_large_free(void *p);

#endif
