/* build.c - `ckbatch compile`: the cache key, the build recipe (strict C11 warnings as errors, no
 * fast-math), the compiler run and the atomic publication of the source, library and manifest.
 * Prints nothing: the compiler's output goes to a log file beside the library. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <oneapi/dnnl/dnnl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen.h"
#include "codegen_internal.h"
#include "default_circuit.h"
#include "executor.h"
#include "file.h"
#include "ck_isa.h"
#include "op_table.h"
#include "plan.h"
#include "sha256.h"

extern char **environ;

/* The recipe: the seed's strict C11 warnings as errors, position-independent, shared; no
 * -ffast-math or any of its parts; FP contraction off as in every ckbatch build (CkFlags.cmake). */
static const char *const RECIPE[] = {"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                                     "-pedantic", "-ffp-contract=off", "-fPIC", "-shared",
                                     "-Wl,--no-undefined", "-Wl,--exclude-libs,ALL",
#ifdef CK_CODEGEN_BUILD_FLAG
                                     CK_CODEGEN_BUILD_FLAG, /* the build's sanitizer runtime */
#endif
                                     NULL};

int ck_codegen_circuit_sha256(const char *path, char hex[65], ck_error *err)
{
    char *text = NULL;
    size_t len = ck_default_circuit_json_len;
    if (path != NULL) {
        int rc = ck_file_read_all(path, "circuit", (size_t)1 << 24, &text, &len, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    cJSON *json = cJSON_ParseWithLength(text != NULL ? text : (const char *)ck_default_circuit_json,
                                        len);
    char *canonical = json != NULL ? cJSON_PrintUnformatted(json) : NULL;
    int rc = CK_OK;
    if (canonical == NULL) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: not JSON", path != NULL ? path : "embedded circuit");
    } else {
        unsigned char digest[32];
        rc = ck_sha256(canonical, strlen(canonical), digest);
        ck_sha256_hex(digest, hex);
    }
    free(canonical);
    cJSON_Delete(json);
    free(text);
    return rc;
}

int ck_codegen_spawn(const char *const *argv, const char *log, int *status)
{
    posix_spawn_file_actions_t fa;
    pid_t pid = 0;
    *status = -1;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        return CK_E_MEMORY;
    }
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        return CK_E_BACKEND;
    }
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) {
            return CK_E_BACKEND;
        }
    }
    return CK_OK;
}

/* The first line of what `argv` prints (stdout and stderr), into line[cap]. */
static int first_line(const char *const *argv, const char *log, char *line, size_t cap,
                      ck_error *err)
{
    int status = 0;
    char *text = NULL;
    int rc = ck_codegen_spawn(argv, log, &status);
    if (rc != CK_OK || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        unlink(log);
        return ck_fail(err, CK_E_BACKEND, "compile: `%s %s` failed (is the compiler installed?)",
                       argv[0], argv[1]);
    }
    rc = ck_file_read_all(log, "compiler output", 1 << 20, &text, NULL, err);
    unlink(log);
    if (rc != CK_OK) {
        return rc;
    }
    snprintf(line, cap, "%.*s", (int)strcspn(text, "\n"), text);
    free(text);
    return CK_OK;
}

/* The compiler's id and version and its target, e.g. "cc (Debian 12.2.0-14) 12.2.0 |
 * x86_64-linux-gnu". */
static int compiler_id(const char *cc, const char *dir, char *id, size_t cap, ck_error *err)
{
    char log[600], version[256], machine[128];
    snprintf(log, sizeof log, "%s/.cc-id.%ld.log", dir, (long)getpid());
    const char *v[] = {cc, "--version", NULL}, *m[] = {cc, "-dumpmachine", NULL};
    int rc = first_line(v, log, version, sizeof version, err);
    rc = rc ? rc : first_line(m, log, machine, sizeof machine, err);
    if (rc == CK_OK) {
        snprintf(id, cap, "%s | %s", version, machine);
    }
    return rc;
}

static int file_sha(const char *path, char hex[65], ck_error *err)
{
    return ck_sha256_file(path, hex, err);
}

int ck_codegen_libraries_sha256(char hex[65], ck_error *err)
{
    char kernels[65], scheduler[65], text[160];
    ck_codegen_kit kit;
    int rc = ck_codegen_kit_find(&kit, err);
    rc = rc ? rc : file_sha(kit.kernels, kernels, err);
    rc = rc ? rc : file_sha(kit.scheduler, scheduler, err);
    if (rc == CK_OK) {
        unsigned char digest[32];
        snprintf(text, sizeof text, "kernels %s\nscheduler %s\n", kernels, scheduler);
        rc = ck_sha256(text, strlen(text), digest);
        ck_sha256_hex(digest, hex);
    }
    return rc;
}

/* The key's inputs, one per line, in a fixed order; the key is their SHA-256. */
static int key_text(const ck_compile_params *p, const char *emitter, const char *circuit_sha,
                    const char *compiler, size_t max_seq_len, const char *libraries, char *out,
                    size_t cap, ck_error *err)
{
    char flags[512] = "";
    for (size_t i = 0; RECIPE[i] != NULL; i++) {
        snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s ", RECIPE[i]);
    }
    const dnnl_version_t *dv = dnnl_version();
    int n = snprintf(out, cap,
                     "ckbatch compile key v1\ncircuit %s\nemitter %s\ncompiler %s\nflags %s%s\n"
                     "isa baseline (no -march), kernels dispatch at run time\nprecision %s\n"
                     "attention heads %s\n"
                     "fuse_gelu %d\nmax_batch_tokens %zu\nmax_seq_len %zu\nckbatch %s\n"
                     "onednn %d.%d.%d %s\nkernel and scheduler archives %s\n",
                     circuit_sha, emitter, compiler, flags,
                     p->extra_flags != NULL ? p->extra_flags : "",
                     ck_dtype_info(ck_precision_dtype(p->precision))->lower,
                     ck_precision_dtype(p->precision) != CK_DTYPE_F32 && ck_kernels_amx_bf16()
                         ? "bf16 on amx tiles" : "f32",
                     !p->parity, p->max_batch_tokens, max_seq_len, CK_VERSION, dv->major, dv->minor,
                     dv->patch, dv->hash, libraries);
    return n > 0 && (size_t)n < cap ? CK_OK : ck_fail(err, CK_E_SIZE, "compile: key text too long");
}

/* 1 when DIR/N.so.json records `key` and DIR/N.so hashes to what it records. */
static int cache_hit(const ck_compile_result *r, char sha[65])
{
    ck_error quiet = {0};
    ck_codegen_manifest m;
    if (ck_codegen_manifest_read(r->manifest, &m, &quiet) != CK_OK || strcmp(m.key, r->key) != 0 ||
        file_sha(r->library, sha, &quiet) != CK_OK) {
        return 0;
    }
    return strcmp(sha, m.sha256) == 0;
}

/* cc RECIPE -I... src -o out archives -ldnnl -lgomp -lm, output into log. */
static int run_compiler(const ck_compile_params *p, const char *cc, const char *src,
                        const char *out, const char *log, ck_error *err)
{
    const char *argv[40];
    size_t n = 0;
    argv[n++] = cc;
    for (size_t i = 0; RECIPE[i] != NULL; i++) {
        argv[n++] = RECIPE[i];
    }
    if (p->extra_flags != NULL) {
        argv[n++] = p->extra_flags;
    }
    ck_codegen_kit kit;
    int rc = ck_codegen_kit_find(&kit, err);
    if (rc != CK_OK) {
        return rc;
    }
    for (size_t i = 0; i < kit.n_include; i++) {
        argv[n++] = kit.include[i];
    }
    const char *tail[] = {src, "-o", out, kit.scheduler, kit.kernels, CK_CODEGEN_DNNL_LIB,
                          "-lgomp", "-lm", NULL};
    for (size_t i = 0; tail[i] != NULL; i++) {
        argv[n++] = tail[i];
    }
    argv[n] = NULL;
    int status = 0;
    rc = ck_codegen_spawn(argv, log, &status);
    if (rc == CK_OK && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        unlink(log);
        return CK_OK;
    }
    char *text = NULL;
    ck_error quiet = {0};
    ck_file_read_all(log, "compiler output", 1 << 20, &text, NULL, &quiet);
    rc = ck_fail(err, CK_E_BACKEND, "compile: %s failed on %s: %.120s", cc, src,
                 text != NULL ? text : "(no output)");
    free(text);
    return rc;
}

/* Compiles into DIR/N.so.tmp.<pid>, fsyncs it, renames it onto DIR/N.so. */
static int build_library(const ck_compile_params *p, const char *cc, ck_compile_result *r,
                         ck_error *err)
{
    char tmp[600], log[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", r->library, (long)getpid());
    snprintf(log, sizeof log, "%s.log.%ld", r->library, (long)getpid()); /* kept on failure */
    int rc = run_compiler(p, cc, r->source, tmp, log, err);
    if (rc == CK_OK) {
        rc = ck_file_publish(tmp, r->library, err);
    }
    if (rc != CK_OK) {
        unlink(tmp);
    }
    return rc;
}

/* Loads c from p->circuit (or the embedded one) and plans it for p->max_batch_tokens. */
static int load_and_plan(const ck_compile_params *p, ck_circuit *c, ck_plan *plan, ck_error *err)
{
    int rc = p->circuit != NULL ? ck_circuit_load(c, p->circuit, err)
                                : ck_circuit_parse(c, (const char *)ck_default_circuit_json,
                                                   ck_default_circuit_json_len, "embedded circuit",
                                                   err);
    if (rc == CK_OK && c->name[0] == '\0') {
        rc = ck_fail(err, CK_E_CIRCUIT, "compile: circuit name is empty; it names the output "
                     "files (letters, digits, _ and - only)");
    }
    if (rc == CK_OK && strspn(c->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-") != strlen(c->name)) {
        rc = ck_fail(err, CK_E_CIRCUIT, "compile: circuit name \"%s\" names the output files: "
                     "letters, digits, _ and - only", c->name);
    }
    if (rc == CK_OK && p->max_batch_tokens < c->max_positions) {
        rc = ck_fail(err, CK_E_ARG, "compile: max batch tokens %zu: must be at least the longest "
                     "sequence, %zu", p->max_batch_tokens, c->max_positions);
    }
    const ck_plan_limits limits = ck_plan_limits_for(ck_precision_dtype(p->precision),
                                                     p->max_batch_tokens, c->max_positions, 1);
    /* frames: the executor's default plan (ck_executor_init), its max_frames from the tokens */
    if (rc == CK_OK && c->max_frames_scale > 0 &&
        p->max_batch_tokens > SIZE_MAX / CK_EXECUTOR_FRAMES_PER_TOKEN) {
        rc = ck_fail(err, CK_E_SIZE, "compile: %zu max batch tokens x %d frames overflows",
                     p->max_batch_tokens, CK_EXECUTOR_FRAMES_PER_TOKEN);
    }
    const size_t frames = c->max_frames_scale > 0
                              ? p->max_batch_tokens * CK_EXECUTOR_FRAMES_PER_TOKEN : 0;
    return rc ? rc : ck_plan_build_frames(plan, c, &limits, frames, err);
}

static int emit_and_build(const ck_compile_params *p, const char *emitter, const char *cc,
                          const char *compiler, const char *libraries, const ck_circuit *c,
                          const ck_plan *plan, ck_compile_result *r, ck_error *err)
{
    const ck_emit_identity id = {r->circuit_sha256, r->key, ck_precision_dtype(p->precision),
                                 !p->parity, libraries, emitter};
    char *text = NULL;
    size_t len = 0;
    int rc = ck_emit_c(&text, &len, c, plan, &id, err); /* checked: nothing written on error */
    rc = rc ? rc : ck_file_write_atomic(r->source, text, len, err);
    free(text);
    rc = rc ? rc : build_library(p, cc, r, err);
    rc = rc ? rc : file_sha(r->library, r->sha256, err);
    return rc ? rc : ck_codegen_manifest_write(r, compiler, emitter, err);
}

int ck_codegen_compile(const ck_compile_params *p, ck_compile_result *r, ck_error *err)
{
    return ck_codegen_compile_as(p, CK_EMITTER_VERSION, r, err);
}

int ck_codegen_compile_as(const ck_compile_params *p, const char *emitter, ck_compile_result *r,
                          ck_error *err)
{
    if (emitter == NULL || emitter[0] == '\0' || strlen(emitter) > 15) {
        return ck_fail(err, CK_E_ARG, "compile: emitter version must be 1 to 15 bytes");
    }
    if (p == NULL || r == NULL || p->out_dir == NULL ||
        (p->precision != CK_PRECISION_FP32 && p->precision != CK_PRECISION_BF16)) {
        return ck_fail(err, CK_E_ARG, "compile: null params, result or output directory, or a "
                       "precision other than f32 and bf16");
    }
    memset(r, 0, sizeof *r);
    /* default: the compiler that built the kernels (a sanitizer runtime must match) */
    const char *cc = p->cc != NULL ? p->cc : getenv("CC") != NULL ? getenv("CC") : CK_CODEGEN_CC;
    ck_circuit c = {0};
    ck_plan plan = {0};
    char compiler[400], key[2048], libraries[65];
    int rc = load_and_plan(p, &c, &plan, err);
    /* Every path made in DIR must fit the result's 512-byte fields and the 600-byte scratch
     * names (DIR/NAME.so.log.PID is the longest; a PID has at most 10 digits): a cut path would
     * name a file outside DIR. */
    size_t longest =
        rc == CK_OK ? strlen(p->out_dir) + 1 + strlen(c.name) + sizeof ".so.json.log." + 10 : 0;
    if (rc == CK_OK && longest >= sizeof r->library) {
        rc = ck_fail(err, CK_E_ARG, "compile: output directory path is too long (%zu bytes; with the "
                     "circuit name \"%.64s\" it may have at most %zu)", strlen(p->out_dir), c.name,
                     sizeof r->library - (longest - strlen(p->out_dir)) - 1);
    }
    /* -o DIR: made here when missing (its parent must exist), so no later step fails on it with
     * a message about something else */
    if (rc == CK_OK && mkdir(p->out_dir, 0777) != 0 && errno != EEXIST) {
        rc = ck_fail(err, CK_E_IO, "compile: output directory %s: %s", p->out_dir, strerror(errno));
    }
    struct stat dir_st;
    if (rc == CK_OK && (stat(p->out_dir, &dir_st) != 0 || !S_ISDIR(dir_st.st_mode))) {
        rc = ck_fail(err, CK_E_IO, "compile: output directory %s: exists and is not a directory",
                     p->out_dir);
    }
    rc = rc ? rc : ck_codegen_circuit_sha256(p->circuit, r->circuit_sha256, err);
    rc = rc ? rc : compiler_id(cc, p->out_dir, compiler, sizeof compiler, err);
    rc = rc ? rc : ck_codegen_libraries_sha256(libraries, err);
    ck_codegen_kit kit;
    if (rc == CK_OK && (rc = ck_codegen_kit_find(&kit, err)) == CK_OK) {
        snprintf(r->kit, sizeof r->kit, "%s %.600s", kit.origin, kit.dir);
    }
    rc = rc ? rc : key_text(p, emitter, r->circuit_sha256, compiler, c.max_positions, libraries, key,
                            sizeof key, err);
    if (rc == CK_OK) {
        unsigned char digest[32];
        ck_sha256(key, strlen(key), digest);
        ck_sha256_hex(digest, r->key);
        snprintf(r->source, sizeof r->source, "%s/%s.c", p->out_dir, c.name);
        snprintf(r->library, sizeof r->library, "%s/%s.so", p->out_dir, c.name);
        snprintf(r->manifest, sizeof r->manifest, "%s/%s.so.json", p->out_dir, c.name);
        r->cache_hit = cache_hit(r, r->sha256);
        if (!r->cache_hit) {
            rc = emit_and_build(p, emitter, cc, compiler, libraries, &c, &plan, r, err);
        }
    }
    ck_plan_free(&plan);
    ck_circuit_free(&c);
    return rc;
}
