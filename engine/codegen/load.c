/* load.c - loads a generated library: SHA-256 of its bytes against the sidecar manifest before
 * dlopen, a copy named by that hash so glibc never hands back a stale object for a rebuilt path,
 * and the exported provenance checked against what the caller asked for. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen_internal.h"
#include "file.h"
#include "sha256.h"

#define CK_LIBRARY_MAX ((size_t)1 << 28)

/* Writes bytes to `named` (the SHA-256-named copy) unless it already holds exactly them. */
static int materialize(const char *named, const char *bytes, size_t len, const char *sha,
                       ck_error *err)
{
    char have[65];
    ck_error quiet = {0};
    if (access(named, F_OK) == 0 && ck_sha256_file(named, have, &quiet) == CK_OK &&
        strcmp(have, sha) == 0) {
        return CK_OK;
    }
    return ck_file_write_atomic(named, bytes, len, err);
}

/* The hash-named copy's name in this user's private directory, $TMPDIR/ckbatch-UID (else /tmp):
 * for a library whose own directory this process cannot write (installed, shared, read-only).
 * The directory must be this user's, mode 0700, so no one else can put an object there between
 * the hash check and dlopen. */
static int private_copy_name(const char *path, const char *sha, char *out, size_t cap, ck_error *err)
{
    const char *tmp = getenv("TMPDIR") != NULL && getenv("TMPDIR")[0] == '/' ? getenv("TMPDIR") : "/tmp";
    char dir[400];
    struct stat st;
    int n = snprintf(dir, sizeof dir, "%s/ckbatch-%ld", tmp, (long)getuid());
    if (n < 0 || (size_t)n >= sizeof dir || (mkdir(dir, 0700) != 0 && errno != EEXIST)) {
        return ck_fail(err, CK_E_IO, "%s: cannot make the private directory %s for its copy: %s",
                       path, dir, strerror(errno));
    }
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077) != 0) {
        return ck_fail(err, CK_E_IO, "%s: %s is not this user's private (0700) directory: refusing "
                       "to load a copy from it", path, dir);
    }
    const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
    n = snprintf(out, cap, "%s/%s.%.16s", dir, base, sha);
    if (n < 0 || (size_t)n >= cap) {
        return ck_fail(err, CK_E_ARG, "%s: the name of its private copy is too long", path);
    }
    return CK_OK;
}

/* The bytes are a 64-bit little-endian ELF shared object whose program headers and loadable
 * segments lie inside the file. dlopen maps each PT_LOAD segment from the file; one that ends past
 * the end of the file (a truncated copy, even with a manifest forged to match it) is a SIGBUS on
 * first touch inside the dynamic loader, not an error. Layout: the ELF-64 object file format,
 * Elf64_Ehdr and Elf64_Phdr as <elf.h> declares them. */
static int check_elf(const char *path, const char *bytes, size_t len, ck_error *err)
{
    Elf64_Ehdr eh;
    if (len < sizeof eh) {
        return ck_fail(err, CK_E_FORMAT, "%s: %zu bytes: too short for an ELF header", path, len);
    }
    memcpy(&eh, bytes, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN) {
        return ck_fail(err, CK_E_FORMAT, "%s: not a 64-bit little-endian ELF shared object", path);
    }
#if defined(__x86_64__)
    if (eh.e_machine != EM_X86_64) {
        return ck_fail(err, CK_E_FORMAT, "%s: built for ELF machine %u, not x86-64 (%u)", path,
                       (unsigned)eh.e_machine, (unsigned)EM_X86_64);
    }
#endif
    if (eh.e_phnum == 0) {
        return ck_fail(err, CK_E_FORMAT, "%s: no program headers: nothing to load", path);
    }
    if (eh.e_phentsize != sizeof(Elf64_Phdr)) {
        return ck_fail(err, CK_E_FORMAT, "%s: program header entries of %u bytes, not ELF-64's %zu",
                       path, (unsigned)eh.e_phentsize, sizeof(Elf64_Phdr));
    }
    if (eh.e_phoff > len || eh.e_phnum > (len - eh.e_phoff) / sizeof(Elf64_Phdr)) {
        return ck_fail(err, CK_E_FORMAT, "%s: its %u program headers at byte %llu do not fit in its "
                       "%zu bytes", path, (unsigned)eh.e_phnum, (unsigned long long)eh.e_phoff, len);
    }
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, bytes + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_LOAD && (ph.p_offset > len || ph.p_filesz > len - ph.p_offset)) {
            return ck_fail(err, CK_E_FORMAT, "%s: loadable segment %u (%llu bytes from byte %llu) "
                           "ends past the end of the file (%zu bytes): truncated", path, i,
                           (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_offset, len);
        }
    }
    return CK_OK;
}

/* Reads path, checks its SHA-256 against the manifest, writes the hash-named copy: beside it, or
 * where its directory is not writable, in the user's private directory (private_copy_name). */
static int verify(ck_compiled_library *lib, const char *path, ck_codegen_manifest *m,
                  ck_error *err)
{
    char manifest[600], *bytes = NULL;
    size_t len = 0;
    snprintf(manifest, sizeof manifest, "%s.json", path);
    int rc = ck_codegen_manifest_read(manifest, m, err);
    rc = rc ? rc : ck_file_read_all(path, "compiled library", CK_LIBRARY_MAX, &bytes, &len, err);
    if (rc != CK_OK) {
        return rc;
    }
    unsigned char digest[32];
    ck_sha256(bytes, len, digest);
    ck_sha256_hex(digest, lib->sha256);
    if (strcmp(lib->sha256, m->sha256) != 0) {
        rc = ck_fail(err, CK_E_HASH, "%s: SHA-256 %.16s... differs from its manifest's %.16s...: "
                     "refusing to load it", path, lib->sha256, m->sha256);
    } else if ((rc = check_elf(path, bytes, len, err)) == CK_OK) {
        /* a name with a slash: dlopen must not search the library path for it */
        snprintf(lib->loaded, sizeof lib->loaded, "%s%s.%.16s", strchr(path, '/') ? "" : "./",
                 path, lib->sha256);
        ck_error beside = {0}, private_dir = {0}; /* both failed: the first reason is the one to fix */
        rc = materialize(lib->loaded, bytes, len, lib->sha256, &beside);
        if (rc != CK_OK &&
            (private_copy_name(path, lib->sha256, lib->loaded, sizeof lib->loaded, &private_dir) ||
             materialize(lib->loaded, bytes, len, lib->sha256, &private_dir))) {
            rc = ck_fail(err, rc, "%s", beside.message);
        } else {
            rc = CK_OK;
        }
    }
    free(bytes);
    return rc;
}

static int want_string(const char *path, const char *field, const char *got, const char *want,
                       ck_error *err)
{
    if (got == NULL || strcmp(got, want) != 0) {
        return ck_fail(err, CK_E_CIRCUIT, "%s: provenance %s is \"%.24s\", expected \"%.24s\"",
                       path, field, got != NULL ? got : "(null)", want);
    }
    return CK_OK;
}

static int check_provenance(const ck_compiled_library *lib, const ck_codegen_manifest *m,
                            const ck_compiled_want *want, ck_error *err)
{
    const ck_compiled_circuit *t = lib->table;
    const char *path = lib->path;
    if (t->abi_version != CK_COMPILED_ABI_VERSION || t->provenance == NULL) {
        return ck_fail(err, CK_E_CIRCUIT, "%s: entry table version %u, this ckbatch loads %u",
                       path, t->abi_version, CK_COMPILED_ABI_VERSION);
    }
    const ck_compiled_provenance *pv = t->provenance;
    int rc = want_string(path, "circuit hash", pv->circuit_sha256, want->circuit_sha256, err);
    rc = rc ? rc : want_string(path, "emitter version", pv->emitter_version, CK_EMITTER_VERSION,
                               err);
    rc = rc ? rc : want_string(path, "key", pv->key, m->key, err);
    rc = rc ? rc : want_string(path, "precision", pv->precision,
                               ck_dtype_info(want->precision)->lower, err);
    char libraries[65];
    rc = rc ? rc : ck_codegen_libraries_sha256(libraries, err);
    rc = rc ? rc : want_string(path, "kernel and scheduler archives (rebuilt since: compile it "
                               "again)", pv->libraries_sha256, libraries, err);
    if (rc == CK_OK && (pv->fuse_gelu != want->fuse_gelu ||
                        (want->max_batch_tokens != 0 &&
                         pv->max_batch_tokens != want->max_batch_tokens))) {
        rc = ck_fail(err, CK_E_CIRCUIT, "%s: compiled for %s and max batch tokens %zu, asked for "
                     "%s and %zu: compile it with the run's --parity and --max-batch-tokens",
                     path, pv->fuse_gelu ? "fused (not parity)" : "parity", pv->max_batch_tokens,
                     want->fuse_gelu ? "fused (not parity)" : "parity", want->max_batch_tokens);
    }
    return rc;
}

int ck_codegen_load(ck_compiled_library *lib, const char *path, const ck_compiled_want *want,
                    ck_error *err)
{
    if (lib == NULL || path == NULL || want == NULL || want->circuit_sha256 == NULL) {
        return ck_fail(err, CK_E_ARG, "compiled library: null argument");
    }
    memset(lib, 0, sizeof *lib);
    if (strlen(path) >= sizeof lib->path - 24) {
        return ck_fail(err, CK_E_ARG, "compiled library: path longer than %zu bytes",
                       sizeof lib->path - 24);
    }
    snprintf(lib->path, sizeof lib->path, "%s", path);
    ck_codegen_manifest m;
    int rc = verify(lib, path, &m, err);
    if (rc != CK_OK) {
        return rc;
    }
    snprintf(lib->key, sizeof lib->key, "%s", m.key);
    lib->handle = dlopen(lib->loaded, RTLD_NOW | RTLD_LOCAL);
    if (lib->handle == NULL) {
        const char *why = dlerror();
        return ck_fail(err, CK_E_BACKEND, "%s: dlopen failed: %s", path, why ? why : "?");
    }
    lib->table = dlsym(lib->handle, CK_COMPILED_SYMBOL);
    rc = lib->table != NULL ? check_provenance(lib, &m, want, err)
                            : ck_fail(err, CK_E_BACKEND, "%s: no symbol %s", path,
                                      CK_COMPILED_SYMBOL);
    if (rc != CK_OK) {
        ck_codegen_unload(lib);
    }
    return rc;
}

void ck_codegen_unload(ck_compiled_library *lib)
{
    if (lib != NULL && lib->handle != NULL) {
        dlclose(lib->handle);
    }
    if (lib != NULL) {
        memset(lib, 0, sizeof *lib);
    }
}
