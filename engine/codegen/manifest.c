/* manifest.c - the sidecar manifest of a generated library (its SHA-256, cache key and circuit
 * hash). No compiling, no loading; common/file.c publishes the finished files. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"
#include "file.h"
#include "json.h"

/* A 64-hex-digit string field into dst[65] (emitter: any short string into dst[16]). */
static int hex_field(const cJSON *json, const char *path, const char *name, char *dst, size_t cap,
                     ck_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(json, name);
    if (!cJSON_IsString(item) || strlen(item->valuestring) >= cap ||
        (cap == 65 && strspn(item->valuestring, "0123456789abcdef") != 64)) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"%s\": expected %s", path, name,
                       cap == 65 ? "64 lowercase hex digits" : "a short string");
    }
    memcpy(dst, item->valuestring, strlen(item->valuestring) + 1);
    return CK_OK;
}

int ck_codegen_manifest_read(const char *path, ck_codegen_manifest *m, ck_error *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(m, 0, sizeof *m);
    int rc = ck_file_read_all(path, "library manifest", 1 << 16, &text, &len, err);
    if (rc != CK_OK) {
        return rc;
    }
    size_t at = 0;
    const char *why = NULL;
    cJSON *json = ck_json_parse(text, len, &at, &why); /* NULL: "not a JSON object" below */
    free(text);
    if (!cJSON_IsObject(json)) {
        cJSON_Delete(json);
        return ck_fail(err, CK_E_FORMAT, "%s: not a JSON object", path);
    }
    rc = hex_field(json, path, "sha256", m->sha256, sizeof m->sha256, err);
    rc = rc ? rc : hex_field(json, path, "key", m->key, sizeof m->key, err);
    rc = rc ? rc : hex_field(json, path, "circuit_sha256", m->circuit_sha256,
                             sizeof m->circuit_sha256, err);
    rc = rc ? rc : hex_field(json, path, "emitter", m->emitter, sizeof m->emitter, err);
    cJSON_Delete(json);
    return rc;
}

int ck_codegen_manifest_write(const ck_compile_result *r, const char *compiler,
                              const char *emitter, ck_error *err)
{
    cJSON *json = cJSON_CreateObject();
    const char *slash = strrchr(r->library, '/');
    cJSON_AddStringToObject(json, "library", slash != NULL ? slash + 1 : r->library);
    cJSON_AddStringToObject(json, "sha256", r->sha256);
    cJSON_AddStringToObject(json, "key", r->key);
    cJSON_AddStringToObject(json, "circuit_sha256", r->circuit_sha256);
    cJSON_AddStringToObject(json, "emitter", emitter);
    cJSON_AddStringToObject(json, "compiler", compiler);
    char *text = cJSON_Print(json);
    cJSON_Delete(json);
    if (text == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", r->manifest);
    }
    int rc = ck_file_write_atomic(r->manifest, text, strlen(text), err);
    free(text);
    return rc;
}
