/* kit.c - where a generated library's headers and archives come from (the codegen kit).
 *
 * A generated library includes the kernel, scheduler and compiled_abi.h headers and links the
 * kernel and scheduler archives of the ckbatch that compiles it. They are found, in order:
 *   1. installed: <dir of the module holding this code>/ckbatch/codegen/{include/,libck_*.a}, the
 *      layout `cmake --install` writes (cmake/CkInstall.cmake) beside libckbatch.so, so a moved
 *      prefix still finds its own kit;
 *   2. the build tree this ckbatch was built in (a build-tree run);
 *   3. the configured install prefix's kit (a program linked statically against libckbatch.a). */
#define _GNU_SOURCE /* dladdr (glibc) */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "codegen_internal.h"

static const char anchor; /* an address inside the module holding this code, for dladdr */

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Fills kit from an installed kit folder when its archives are there; 1 when found. */
static int installed_kit(ck_codegen_kit *kit, const char *dir, const char *origin)
{
    int n = snprintf(kit->kernels, sizeof kit->kernels, "%s/libck_kernels.a", dir);
    int m = snprintf(kit->scheduler, sizeof kit->scheduler, "%s/libck_scheduler.a", dir);
    int k = snprintf(kit->include[0], sizeof kit->include[0], "-I%s/include", dir);
    if (n < 0 || (size_t)n >= sizeof kit->kernels || m < 0 || (size_t)m >= sizeof kit->scheduler ||
        k < 0 || (size_t)k >= sizeof kit->include[0] || !exists(kit->kernels) ||
        !exists(kit->scheduler)) {
        return 0;
    }
    kit->n_include = 1;
    kit->origin = origin;
    snprintf(kit->dir, sizeof kit->dir, "%s", dir);
    return 1;
}

int ck_codegen_kit_find(ck_codegen_kit *kit, ck_error *err)
{
    memset(kit, 0, sizeof *kit);
    char module_kit[sizeof kit->kernels] = "(this code is in no named module)";
    Dl_info info;
    char module[PATH_MAX];
    /* realpath: the loader reports the path it opened (bin/../lib/... through the RUNPATH) */
    if (dladdr(&anchor, &info) != 0 && info.dli_fname != NULL &&
        realpath(info.dli_fname, module) != NULL) {
        const char *slash = strrchr(module, '/');
        snprintf(module_kit, sizeof module_kit, "%.*s/ckbatch/codegen", (int)(slash - module),
                 module);
        if (installed_kit(kit, module_kit, "installed")) {
            return CK_OK;
        }
    }
    if (exists(CK_CODEGEN_KERNELS_LIB) && exists(CK_CODEGEN_SCHEDULER_LIB)) {
        static const char *const build_tree[] = {"-I" CK_CODEGEN_SOURCE_DIR "/kernels",
                                                 "-I" CK_CODEGEN_SOURCE_DIR "/scheduler",
                                                 "-I" CK_CODEGEN_SOURCE_DIR "/engine/graph",
                                                 "-I" CK_CODEGEN_SOURCE_DIR "/include"};
        for (size_t i = 0; i < 4; i++) {
            snprintf(kit->include[i], sizeof kit->include[i], "%s", build_tree[i]);
        }
        kit->n_include = 4;
        snprintf(kit->kernels, sizeof kit->kernels, "%s", CK_CODEGEN_KERNELS_LIB);
        snprintf(kit->scheduler, sizeof kit->scheduler, "%s", CK_CODEGEN_SCHEDULER_LIB);
        kit->origin = "build tree";
        snprintf(kit->dir, sizeof kit->dir, "%s", CK_CODEGEN_SOURCE_DIR);
        return CK_OK;
    }
    if (installed_kit(kit, CK_CODEGEN_INSTALL_DIR, "installed (configured prefix)")) {
        return CK_OK;
    }
    return ck_fail(err, CK_E_IO, "compile: no codegen kit (the headers and archives a generated "
                   "library is built from): not in %s, the build tree %s, or %s", module_kit,
                   CK_CODEGEN_SOURCE_DIR, CK_CODEGEN_INSTALL_DIR);
}
