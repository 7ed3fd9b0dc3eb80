/* codegen.h - generated C: the checked emitter (lowered program -> one C translation unit), the
 * build recipe and compile cache (`ckbatch compile`), and the loader (SHA-256 against the sidecar
 * manifest before dlopen, provenance after). The generated library itself holds no JSON parser
 * and no path handling: everything here stays on ckbatch's side.
 *
 * Files of a compile into DIR, for a circuit named N:
 *   DIR/N.c        the translation unit (readable; each step commented with its X-Ray id)
 *   DIR/N.so       the library built from it (cc -std=c11 -O2 -Wall -Wextra -Werror -pedantic
 *                  -fPIC -shared, no fast-math), linking the build's kernels and scheduler
 *   DIR/N.so.json  its manifest: sha256 of N.so, the cache key and the key's inputs
 * A load dlopens a copy named by the library's SHA-256 (DIR/N.so.<sha16>), so a library rebuilt
 * at the same path is never served from glibc's cache of the old one. */
#ifndef CK_CODEGEN_H
#define CK_CODEGEN_H

#include <stddef.h>

#include "ckbatch.h"
#include "circuit.h"
#include "compiled_abi.h"
#include "ck_error.h"
#include "plan.h"

/* Grows whenever the generated code changes for the same program. */
#define CK_EMITTER_VERSION "7" /* 3: steps call scheduler/steps.h, bf16 copies, op times; 4: bf16
                                  LayerNorm in float statistics, the AMX heads' bf16 context;
                                  5: row-local runs (run_rows); 6: each step's variant function
                                  (no bf16_heads, stats_f32), CK_STEP_MAX_SLOTS operands; 7: the
                                  speech circuit: run inputs, frame batches, every operand of
                                  its ops, per-linear compute dtype and packing */

typedef struct {
    const char *circuit_sha256; /* hex, of the canonical circuit JSON */
    const char *key;            /* hex cache key */
    ck_dtype precision;         /* the linears' dtype (f32 or bf16) */
    int fuse_gelu;              /* 1: linear + gelu_new fused (not parity) */
    const char *libraries_sha256; /* hex, ck_codegen_libraries_sha256 */
    const char *emitter_version;  /* CK_EMITTER_VERSION, except in ck_codegen_compile_as */
} ck_emit_identity;

/* What the emitter refuses to print, before printing anything: a buffer whose offset is at or
 * past the arena size, whose bytes run past it, or which is not 64-byte aligned; two buffers live
 * at the same op whose bytes overlap; a buffer name defined twice; an op whose weight slot names
 * no weight (its row's optional weight left out excepted). CK_E_SIZE (CK_E_CIRCUIT for the name, the weight) with a message naming the buffer
 * or buffers and their offsets. */
int ck_emit_check_plan(const ck_circuit *c, const ck_plan *plan, ck_error *err);

/* The translation unit for circuit c under plan and id, into a malloc'd NUL-terminated *text
 * (*len bytes). Checks the plan first (ck_emit_check_plan): on error nothing is produced.
 * Errors: those, CK_E_ARG, CK_E_MEMORY, CK_E_IO. */
int ck_emit_c(char **text, size_t *len, const ck_circuit *c, const ck_plan *plan,
              const ck_emit_identity *id, ck_error *err);

/* Hex SHA-256 of the canonical JSON (cJSON, unformatted, keys in file order) of the circuit file
 * at path, or of the embedded Kokoro circuit when path is NULL. Errors: CK_E_IO, CK_E_FORMAT. */
int ck_codegen_circuit_sha256(const char *path, char hex[65], ck_error *err);

/* Compiles (or finds in the cache) the library for p. The key is SHA-256 over the canonical
 * circuit JSON, the emitter version, the compiler's id and version (`cc --version`), the full
 * flags, the target ISA, the precision, fusion and max batch tokens, and the versions of the
 * linked libraries (ckbatch, oneDNN, and the SHA-256 of the kernel and scheduler archives). Every
 * file is written under a temporary name, fsynced and renamed, so concurrent compiles of the same
 * circuit all succeed and no reader sees a partial file. Errors: CK_E_ARG, CK_E_IO, CK_E_FORMAT,
 * CK_E_CIRCUIT, CK_E_SIZE (the plan check), CK_E_BACKEND (the compiler failed: err quotes it). */
int ck_codegen_compile(const ck_compile_params *p, ck_compile_result *r, ck_error *err);

/* ck_codegen_compile, with emitter_version in place of CK_EMITTER_VERSION wherever the version
 * is recorded: the cache key, the manifest and the library's provenance (the code emitted is
 * today's). What a version change must do is tested with it: the next compile misses the cache,
 * and the loader refuses a library of another version. Errors: those of ck_codegen_compile;
 * CK_E_ARG for a NULL or empty version or one longer than 15 bytes. */
int ck_codegen_compile_as(const ck_compile_params *p, const char *emitter_version,
                          ck_compile_result *r, ck_error *err);

/* A loaded generated library. */
typedef struct {
    void *handle;                      /* dlopen handle */
    const ck_compiled_circuit *table;  /* its entry table */
    char path[512];                    /* the path asked for */
    char loaded[600];                  /* the SHA-256-named copy actually dlopened */
    char sha256[65];
    char key[65];
} ck_compiled_library;

/* What a loader asks of a library: the circuit it runs and how. */
typedef struct {
    const char *circuit_sha256;  /* hex (ck_codegen_circuit_sha256) */
    ck_dtype precision;
    int fuse_gelu;
    size_t max_batch_tokens;     /* 0: any (the caller plans for the library's own) */
} ck_compiled_want;

/* Loads the library at path: its SHA-256 must equal its manifest's (path.json) before dlopen
 * (CK_E_HASH); after dlopen the entry table's ABI version and provenance (circuit hash, emitter
 * version, key, precision, fusion, max batch tokens) must equal what `want` and the manifest say
 * (CK_E_CIRCUIT naming the field, got vs expected). On error nothing stays loaded.
 * Errors: those, CK_E_ARG, CK_E_IO, CK_E_FORMAT, CK_E_BACKEND (dlopen/dlsym). */
int ck_codegen_load(ck_compiled_library *lib, const char *path, const ck_compiled_want *want,
                    ck_error *err);

/* dlcloses; accepts a zeroed lib. */
void ck_codegen_unload(ck_compiled_library *lib);

#endif
