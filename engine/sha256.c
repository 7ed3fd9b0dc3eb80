/* sha256.c - SHA-256 through OpenSSL EVP for buffers and files; holds no state between calls. */
#include "sha256.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

int ck_sha256(const void *data, size_t bytes, unsigned char digest[32])
{
    unsigned int len = 0;
    if (digest == NULL || (data == NULL && bytes > 0)) {
        return CK_E_ARG;
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
    ctx = EVP_MD_CTX_new();
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
