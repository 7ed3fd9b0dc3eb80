/* sha256.h - SHA-256 of memory and files through OpenSSL EVP; never a home-made digest. */
#ifndef CK_SHA256_H
#define CK_SHA256_H

#include <stddef.h>

#include "ck_error.h"

/* SHA-256 (FIPS 180-4, via OpenSSL EVP_sha256) of `bytes` bytes at `data` into digest[32].
 * `data` may be NULL only when bytes is 0. Errors: CK_E_ARG (null digest, or null data with
 * bytes > 0), CK_E_BACKEND (OpenSSL failed). */
int ck_sha256(const void *data, size_t bytes, unsigned char digest[32]);

/* Writes digest[32] as 64 lowercase hex characters plus a terminating NUL into hex[65]. */
void ck_sha256_hex(const unsigned char digest[32], char hex[65]);

/* SHA-256 of the whole file at `path`, read in 64 KiB chunks, as lowercase hex into hex[65].
 * Errors: CK_E_ARG (null path or hex), CK_E_IO (cannot open or read; message names the path),
 * CK_E_BACKEND (OpenSSL failed). */
int ck_sha256_file(const char *path, char hex[65], ck_error *err);

/* A running SHA-256 over bytes given in pieces (an append-only journal's committed prefix). */
typedef struct ck_sha256_ctx ck_sha256_ctx;

/* A running digest of no bytes into *out. Errors: CK_E_ARG (null out), CK_E_MEMORY, CK_E_BACKEND
 * (OpenSSL failed). On error *out is NULL. */
int ck_sha256_begin(ck_sha256_ctx **out);

/* Feeds `bytes` bytes at `data` (NULL only when bytes is 0). Errors: CK_E_ARG, CK_E_BACKEND. */
int ck_sha256_update(ck_sha256_ctx *c, const void *data, size_t bytes);

/* The digest of every byte fed so far into digest[32]; c goes on as if not asked (more updates
 * extend the same stream). Errors: CK_E_ARG, CK_E_MEMORY, CK_E_BACKEND. */
int ck_sha256_peek(const ck_sha256_ctx *c, unsigned char digest[32]);

/* Releases c; accepts NULL. */
void ck_sha256_free(ck_sha256_ctx *c);

#endif
