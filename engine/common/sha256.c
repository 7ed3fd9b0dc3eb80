/* sha256.c - SHA-256 through OpenSSL EVP for buffers and files, and a running digest
 * fed in pieces (ck_sha256_ctx) whose value so far can be read without ending it. */
#include "sha256.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plain digest needs neither openssl.cnf (which could load other providers) nor OpenSSL's error
 * strings and cipher tables: initialising without them keeps about 0.6 MiB of libcrypto out of
 * memory (docs/memory.md). Idempotent and thread-safe (OPENSSL_init_crypto(3)); only the first
 * call's flags count, so it runs before any other OpenSSL call of ours. */
static int init_openssl(void)
{
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS |
                               OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
                               NULL) == 1;
}

int ck_sha256(const void *data, size_t bytes, unsigned char digest[32])
{
    unsigned int len = 0;
    if (digest == NULL || (data == NULL && bytes > 0)) {
        return CK_E_ARG;
    }
    if (!init_openssl()) {
        return CK_E_BACKEND;
    }
    /* EVP_Digest rejects a NULL pointer even for zero bytes on some versions. */
    if (EVP_Digest(bytes ? data : "", bytes, digest, &len, EVP_sha256(), NULL) != 1 || len != 32) {
        return CK_E_BACKEND;
    }
    return CK_OK;
}

void ck_sha256_hex(const unsigned char digest[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = '\0';
}

/* Feeds the rest of `fp` into `ctx`; CK_E_IO on a read error, CK_E_BACKEND when OpenSSL fails. */
static int digest_stream(EVP_MD_CTX *ctx, FILE *fp)
{
    unsigned char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, fp)) > 0) {
        if (EVP_DigestUpdate(ctx, buf, got) != 1) {
            return CK_E_BACKEND;
        }
    }
    return ferror(fp) ? CK_E_IO : CK_OK;
}

int ck_sha256_file(const char *path, char hex[65], ck_error *err)
{
    unsigned char digest[32];
    unsigned int len = 0;
    int rc = CK_OK;
    FILE *fp = NULL;
    EVP_MD_CTX *ctx = NULL;
    if (path == NULL || hex == NULL) {
        return ck_fail(err, CK_E_ARG, "sha256: null path or hex buffer");
    }
    fp = fopen(path, "rb");
    if (fp == NULL) {
        rc = ck_fail(err, CK_E_IO, "%s: cannot open for hashing: %s", path, strerror(errno));
        goto done;
    }
    ctx = init_openssl() ? EVP_MD_CTX_new() : NULL;
    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        rc = ck_fail(err, CK_E_BACKEND, "%s: OpenSSL SHA-256 init failed", path);
        goto done;
    }
    rc = digest_stream(ctx, fp);
    if (rc != CK_OK) {
        ck_fail(err, rc, "%s: %s while hashing", path, rc == CK_E_IO ? "read error" : "OpenSSL failed");
        goto done;
    }
    if (EVP_DigestFinal_ex(ctx, digest, &len) != 1 || len != 32) {
        rc = ck_fail(err, CK_E_BACKEND, "%s: OpenSSL SHA-256 final failed", path);
        goto done;
    }
    ck_sha256_hex(digest, hex);
done:
    EVP_MD_CTX_free(ctx);
    if (fp != NULL) {
        fclose(fp);
    }
    return rc;
}

struct ck_sha256_ctx {
    EVP_MD_CTX *md;
};

int ck_sha256_begin(ck_sha256_ctx **out)
{
    if (out == NULL) {
        return CK_E_ARG;
    }
    *out = NULL;
    ck_sha256_ctx *c = init_openssl() ? calloc(1, sizeof *c) : NULL;
    if (c == NULL) {
        return CK_E_MEMORY;
    }
    c->md = EVP_MD_CTX_new();
    if (c->md == NULL || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
        ck_sha256_free(c);
        return CK_E_BACKEND;
    }
    *out = c;
    return CK_OK;
}

int ck_sha256_update(ck_sha256_ctx *c, const void *data, size_t bytes)
{
    if (c == NULL || (data == NULL && bytes > 0)) {
        return CK_E_ARG;
    }
    return bytes == 0 || EVP_DigestUpdate(c->md, data, bytes) == 1 ? CK_OK : CK_E_BACKEND;
}

int ck_sha256_peek(const ck_sha256_ctx *c, unsigned char digest[32])
{
    if (c == NULL || digest == NULL) {
        return CK_E_ARG;
    }
    EVP_MD_CTX *copy = EVP_MD_CTX_new();
    unsigned int len = 0;
    if (copy == NULL) {
        return CK_E_MEMORY;
    }
    int ok = EVP_MD_CTX_copy_ex(copy, c->md) == 1 && EVP_DigestFinal_ex(copy, digest, &len) == 1 &&
             len == 32;
    EVP_MD_CTX_free(copy);
    return ok ? CK_OK : CK_E_BACKEND;
}

void ck_sha256_free(ck_sha256_ctx *c)
{
    if (c != NULL) {
        EVP_MD_CTX_free(c->md);
        free(c);
    }
}
