/* arena.h - 64-byte aligned arenas: one activation arena per session and one scratch arena per
 * OpenMP worker, allocated once and reused for every batch. Sizes come from the planner. Arenas of
 * 2 MiB or more sit on 2 MiB boundaries with huge pages advised (ck_memory.h). */
#ifndef CK_ARENA_H
#define CK_ARENA_H

#include <stddef.h>

typedef struct {
    void *base;    /* 64-byte aligned, or NULL when empty */
    size_t bytes;  /* usable bytes at base */
} ck_arena;

typedef struct {
    ck_arena activations;  /* the planned activation buffers of one batch */
    ck_arena *scratch;     /* [workers] per-worker scratch (attention scores) */
    int workers;
} ck_arenas;

/* Allocates `bytes` (rounded up to 64) at a 64-byte aligned base. bytes 0 gives an empty arena.
 * Returns 0, CK_E_SIZE on overflow, CK_E_MEMORY when allocation fails (arena left empty). */
int ck_arena_init(ck_arena *arena, size_t bytes);

/* Releases the arena; accepts a zeroed one. */
void ck_arena_free(ck_arena *arena);

/* One activation arena of activation_bytes and `workers` scratch arenas of scratch_bytes each.
 * Errors: CK_E_ARG (workers < 1), CK_E_SIZE, CK_E_MEMORY (everything already allocated released). */
int ck_arenas_init(ck_arenas *arenas, size_t activation_bytes, size_t scratch_bytes, int workers);

/* Releases all arenas; accepts a zeroed or half-built set. */
void ck_arenas_free(ck_arenas *arenas);

#endif
