/* zip.h - read-only ZIP archive reader over a memory mapping, for torch.save checkpoints (entries
 * stored, not compressed). Knows nothing of pickles or tensors; never decompresses or writes.
 *
 * Format: PKWARE APPNOTE.TXT 6.3.x - end of central directory record (sec. 4.3.16), ZIP64 end record
 * and locator (4.3.14, 4.3.15), central directory headers (4.3.12), local file headers (4.3.7), ZIP64
 * extended information extra field (4.5.3), CRC-32 with polynomial 0xEDB88320 (4.4.7). */
#ifndef CK_ZIP_H
#define CK_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"

/* One stored entry. `data` points into the read-only mapping and lives until ck_zip_close. */
typedef struct {
    char *name;                /* NUL-terminated copy of the entry name */
    const unsigned char *data; /* [size] bytes, in the mapping */
    size_t size;
    uint32_t crc32;            /* from the central directory */
} ck_zip_entry;

typedef struct ck_zip ck_zip;

/* Maps `path` read-only and validates the directory before returning: end record (and ZIP64 record
 * when present) inside the file, every central header inside the directory, method 0 (stored) only,
 * not encrypted, compressed size == size, the local header's signature and name equal to the central
 * one's, data inside the file, no duplicate names (found by sorting: O(n log n)). CRCs are NOT
 * checked here (see ck_zip_verify), so opening a large archive touches only its directory.
 * Errors: CK_E_ARG (null), CK_E_IO (open/stat/mmap), CK_E_FORMAT (message names the file, the entry
 * and the field), CK_E_MEMORY. On error *out is NULL. */
int ck_zip_open(ck_zip **out, const char *path, ck_error *err);

/* The same over bytes[n] held by the caller: nothing is copied, so the bytes must outlive z. name
 * (copied; NULL: "<memory>") starts every message. Errors: CK_E_ARG (null out, or null bytes with
 * n > 0), the rest as ck_zip_open. */
int ck_zip_open_memory(ck_zip **out, const void *bytes, size_t n, const char *name, ck_error *err);

/* Unmaps and frees; accepts NULL. Every pointer obtained from z becomes invalid. */
void ck_zip_close(ck_zip *z);

/* Number of entries; 0 for NULL. */
size_t ck_zip_count(const ck_zip *z);

/* Entry i in central directory order, or NULL when i >= count. */
const ck_zip_entry *ck_zip_at(const ck_zip *z, size_t i);

/* Entry with exactly this name, or NULL. A binary search of the names sorted at open: O(log n). */
const ck_zip_entry *ck_zip_find(const ck_zip *z, const char *name);

/* CRC-32 (APPNOTE 4.4.7, reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF) of
 * bytes[n]; crc32("123456789") = 0xCBF43926. `bytes` may be NULL only when n is 0. */
uint32_t ck_zip_crc32(const void *bytes, size_t n);

/* Checks e's CRC-32 against its data. Errors: CK_E_ARG (null), CK_E_FORMAT (mismatch; the message
 * names the entry, the stored and the computed CRC). */
int ck_zip_verify(const ck_zip *z, const ck_zip_entry *e, ck_error *err);

#endif
