/* codegen_internal.h - what the compile (build.c) and the loader (load.c) share: the manifest
 * beside a library, atomic publication, running a program. Private to engine/codegen. */
#ifndef CK_CODEGEN_INTERNAL_H
#define CK_CODEGEN_INTERNAL_H

#include "codegen.h"

/* DIR/N.so.json: {"library", "sha256", "key", "circuit_sha256", "emitter", "compiler"}. */
typedef struct {
    char sha256[65];
    char key[65];
    char circuit_sha256[65];
    char emitter[16];
} ck_codegen_manifest;

/* Reads a manifest. Errors: CK_E_IO (missing), CK_E_FORMAT (not a manifest: err names the
 * field). */
int ck_codegen_manifest_read(const char *path, ck_codegen_manifest *m, ck_error *err);

/* Writes r->manifest (atomically) for r->library, r->sha256, r->key, made by `emitter`. */
int ck_codegen_manifest_write(const ck_compile_result *r, const char *compiler,
                              const char *emitter, ck_error *err);

/* The codegen kit: the -I flags and the two archives a generated library is compiled with, and
 * where they were found ("installed", "build tree", "installed (configured prefix)"). */
typedef struct {
    char include[4][600];  /* "-I<dir>" each */
    size_t n_include;
    char kernels[600];     /* libck_kernels.a */
    char scheduler[600];   /* libck_scheduler.a */
    const char *origin;
    char dir[600];         /* the kit folder, or the source tree for "build tree" */
} ck_codegen_kit;

/* Finds the kit (kit.c says where it looks, in order). CK_E_IO naming every place looked in. */
int ck_codegen_kit_find(ck_codegen_kit *kit, ck_error *err);

/* Hex SHA-256 over the SHA-256 of the kit's kernel and scheduler archives (what a generated
 * library links), into hex[65]. Errors: CK_E_IO (no kit, or an archive is unreadable). */
int ck_codegen_libraries_sha256(char hex[65], ck_error *err);

/* Runs argv (argv[0] looked up in PATH) with stdout and stderr into the file `log` and stdin from
 * /dev/null; *status is waitpid's. CK_E_BACKEND when it cannot start. */
int ck_codegen_spawn(const char *const *argv, const char *log, int *status);

#endif
