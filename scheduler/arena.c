/* arena.c - aligned arena allocation; the only allocation the hot path depends on, done once. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ck_memory.h"
#include "ck_status.h"

#define CK_ARENA_ALIGN_BYTES 64

int ck_arena_init(ck_arena *arena, size_t bytes)
{
    if (arena == NULL) {
        return CK_E_ARG;
    }
    arena->base = NULL;
    arena->bytes = 0;
    if (bytes == 0) {
        return CK_OK;
    }
    if (bytes > SIZE_MAX - (CK_ARENA_ALIGN_BYTES - 1)) {
        return CK_E_SIZE;
    }
    size_t rounded = (bytes + CK_ARENA_ALIGN_BYTES - 1) / CK_ARENA_ALIGN_BYTES * CK_ARENA_ALIGN_BYTES;
    void *base = ck_large_alloc(rounded); /* 2 MiB pages when large: ck_memory.h */
    if (base == NULL) {
        return CK_E_MEMORY;
    }
    arena->base = base;
    arena->bytes = rounded;
    return CK_OK;
}

void ck_arena_free(ck_arena *arena)
{
    if (arena != NULL) {
        ck_large_free(arena->base);
        arena->base = NULL;
        arena->bytes = 0;
    }
}

int ck_arenas_init(ck_arenas *arenas, size_t activation_bytes, size_t scratch_bytes, int workers)
{
    if (arenas == NULL) {
        return CK_E_ARG;
    }
    memset(arenas, 0, sizeof *arenas);
    if (workers < 1) {
        return CK_E_ARG;
    }
    int rc = ck_arena_init(&arenas->activations, activation_bytes);
    if (rc != CK_OK) {
        return rc;
    }
    arenas->scratch = calloc((size_t)workers, sizeof *arenas->scratch);
    if (arenas->scratch == NULL) {
        ck_arenas_free(arenas);
        return CK_E_MEMORY;
    }
    arenas->workers = workers;
    for (int w = 0; w < workers; w++) {
        rc = ck_arena_init(&arenas->scratch[w], scratch_bytes);
        if (rc != CK_OK) {
            ck_arenas_free(arenas);
            return rc;
        }
    }
    return CK_OK;
}

void ck_arenas_free(ck_arenas *arenas)
{
    if (arenas == NULL) {
        return;
    }
    ck_arena_free(&arenas->activations);
    for (int w = 0; arenas->scratch != NULL && w < arenas->workers; w++) {
        ck_arena_free(&arenas->scratch[w]);
    }
    free(arenas->scratch);
    arenas->scratch = NULL;
    arenas->workers = 0;
}
