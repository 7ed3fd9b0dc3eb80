/* safetensors.h - read (a mapping or bytes in memory, every offset checked; safetensors.c) and write (temp + fsync + rename;
 * safetensors_write.c) safetensors files. Knows no model names; never converts beyond F32/F16/BF16 -> f32.
 *
 * Format (huggingface/safetensors): u64 little-endian header length N; N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
 *  "__metadata__": {"key": "value"}}; then the data section, offsets relative to its start. */
#ifndef CK_SAFETENSORS_H
#define CK_SAFETENSORS_H

#include <stddef.h>
#include <stdio.h>

#include "ck_dtype.h"
#include "ck_error.h"

#define CK_ST_MAX_RANK 8

/* Element types are ck_dtype (kernels/ck_dtype.h). U8 carries raw bytes (e.g. JSON Lines text).
 * CK_DTYPE_OTHER is any other dtype the format defines (F64, I16, U16, U32, U64, BOOL,
 * F8_E4M3, F8_E5M2): readable and bounds-checked, never converted, not writable. */

/* One tensor of an open file. `data` points into the read-only mapping (NOT necessarily aligned
 * to the element size) and lives until ck_st_close. Rank 0 means a scalar (elements 1). */
typedef struct {
    const char *name;
    ck_dtype dtype;
    size_t rank;
    size_t shape[CK_ST_MAX_RANK];
    size_t elements;   /* product of shape */
    const void *data;
    size_t bytes;      /* elements x dtype size */
} ck_st_tensor;

typedef struct ck_st_file ck_st_file;

/* Maps `path` read-only and validates the whole header before returning: header length within the
 * file, JSON object, each tensor's dtype known, shape integers (rank <= 8), data_offsets
 * [begin, end] with begin <= end <= data section, end - begin == elements x dtype size (overflow
 * checked), no two tensors overlapping, no duplicate names (found by sorting the names: O(n log n) in
 * the tensor count), metadata values strings.
 * On success *out owns the mapping; tensors keep the header's order.
 * Errors: CK_E_ARG (null out/path), CK_E_IO (open/stat/mmap), CK_E_FORMAT (any of the above; the
 * message names the file, the tensor and the field), CK_E_MEMORY. On error *out is NULL. */
int ck_st_open(ck_st_file **out, const char *path, ck_error *err);

/* The same over bytes[n] held by the caller (a file already in memory, a fuzzer's input, a binding's
 * buffer): nothing is copied, so the bytes must outlive f. name (copied; NULL: "<memory>") starts
 * every message. Errors: CK_E_ARG (null out, or null bytes with n > 0), the rest as ck_st_open. */
int ck_st_open_memory(ck_st_file **out, const void *bytes, size_t n, const char *name,
                      ck_error *err);

/* Unmaps (ck_st_open) and frees; accepts NULL. Every pointer obtained from f becomes invalid. */
void ck_st_close(ck_st_file *f);

/* Number of tensors (metadata excluded); 0 for NULL. */
size_t ck_st_count(const ck_st_file *f);

/* Tensor i in header order, or NULL when i >= count. */
const ck_st_tensor *ck_st_at(const ck_st_file *f, size_t i);

/* Tensor with exactly this name, or NULL. A binary search of the names sorted at open: O(log n). */
const ck_st_tensor *ck_st_find(const ck_st_file *f, const char *name);

/* Value of metadata `key`, or NULL if absent. */
const char *ck_st_metadata(const ck_st_file *f, const char *key);

/* Number of metadata entries; entry i (header order) as *key, *value (valid until ck_st_close).
 * ck_st_metadata_at returns 1, or 0 when i >= the count. */
size_t ck_st_metadata_count(const ck_st_file *f);
int ck_st_metadata_at(const ck_st_file *f, size_t i, const char **key, const char **value);

/* Byte offset in the file of tensor t's data (8 + header length + its begin offset). */
unsigned long long ck_st_file_offset(const ck_st_file *f, const ck_st_tensor *t);


/* Converts t (F32, F16 or BF16, little-endian) to f32 into out[0 .. t->elements). F16 is exact for
 * every half value (subnormals, +-inf, NaN payload kept in the high mantissa bits); BF16 is the high
 * half of an f32. No finiteness check here. Errors: CK_E_ARG (null, or dtype not F32/F16/BF16;
 * message names the tensor), CK_E_SIZE (out_count < elements). On error out is untouched. */
int ck_st_to_f32(const ck_st_tensor *t, float *out, size_t out_count, ck_error *err);

/* One tensor to write: data from memory (`data`, elements x dtype size bytes), or when data is NULL
 * from `spool` starting at byte `spool_offset` (the writer seeks there and reads exactly that many). */
typedef struct {
    const char *name;
    ck_dtype dtype;  /* CK_DTYPE_F32 .. CK_DTYPE_I8; CK_DTYPE_OTHER is rejected */
    size_t rank;
    size_t shape[CK_ST_MAX_RANK];
    const void *data;
    FILE *spool;
    long spool_offset;
} ck_st_entry;

typedef struct {
    const char *key;
    const char *value;
} ck_st_meta;

/* Writes a safetensors file at `path`: header {"__metadata__" first when n_meta > 0, then tensors in
 * the order given, data_offsets contiguous from 0}, padded with spaces to a multiple of 8 bytes so
 * the data section starts 8-byte aligned. Writes to path + ".tmp.<pid>", fflush + fsync, then renames
 * onto path; on any error the temp file is removed and an existing file at path is untouched.
 * Errors: CK_E_ARG (null/empty/duplicate/"__metadata__" name, dtype OTHER, rank > 8, no data and no
 * spool, null meta key/value, duplicate meta key), CK_E_SIZE (byte count overflows), CK_E_IO (create,
 * write, spool seek/short read, fsync, rename), CK_E_MEMORY. */
int ck_st_write(const char *path, const ck_st_entry *entries, size_t n_entries,
                const ck_st_meta *meta, size_t n_meta, ck_error *err);

/* A run of bytes of an open file: `bytes` bytes from byte `offset` of descriptor fd. */
typedef struct {
    int fd;
    unsigned long long offset;
    size_t bytes;
} ck_st_segment;

/* The bytes of one tensor as segments, back to back. */
typedef struct {
    const ck_st_segment *segments;
    size_t n;
} ck_st_segments;

/* ck_st_write with tensor i's bytes taken from segs[i] (entries' data and spool are not read):
 * joins parts of several files without a pass through memory. Each segment is copied with
 * copy_file_range (falling back to pread/pwrite where the file systems cannot), at most 1 GiB per
 * call, looping over short counts. Errors: as ck_st_write; CK_E_SIZE when the segments of a tensor
 * do not add up to its shape's bytes; CK_E_IO naming the tensor when a copy fails. */
int ck_st_write_segments(const char *path, const ck_st_entry *entries, const ck_st_segments *segs,
                         size_t n_entries, const ck_st_meta *meta, size_t n_meta, ck_error *err);

/* The first bytes of the file ck_st_write would write for these entries and metadata: the u64
 * header length and the padded header, malloc'd into *out[*len] (the data section starts at
 * *len). Only names, dtypes and shapes are read (not data, spool or segments): for writers that
 * place the tensors' bytes themselves (several processes writing one file in place).
 * Errors: as ck_st_write's checks; CK_E_MEMORY. On error *out is NULL. */
int ck_st_header(const ck_st_entry *entries, size_t n_entries, const ck_st_meta *meta,
                 size_t n_meta, unsigned char **out, size_t *len, ck_error *err);

#endif
