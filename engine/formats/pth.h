/* pth.h - PyTorch checkpoints (torch.save ZIP archives) read without Python and without running
 * any code: restricted pickle (pth_pickle.h) + stored ZIP entries (zip.h) over one mmap. Converts
 * nothing itself (views are ck_st_tensor, converted by ck_st_to_f32); knows no model's keys.
 *
 * Layout (torch/serialization.py, _save with the zipfile writer): "<dir>/data.pkl" (the pickled
 * object), "<dir>/data/<key>" (one raw little-endian storage per key), "<dir>/version" and, from
 * torch 1.12 on, "<dir>/byteorder" ("little"). Kokoro's kokoro-v1_0.pth pickles
 * {"bert": state_dict, "bert_encoder": ..., "predictor": ..., "text_encoder": ..., "decoder": ...}
 * whose keys carry a "module." prefix; a Kokoro voice file (af_heart.pt, ...) pickles one bare tensor. */
#ifndef CK_PTH_H
#define CK_PTH_H

#include <stddef.h>

#include "ck_error.h"
#include "safetensors.h"

/* One tensor of the checkpoint, described but not read. */
typedef struct {
    char *name;               /* dict keys joined by ".", e.g. "bert.module.embeddings.LayerNorm.weight" */
    char *group;              /* top-level key when the tensor sits in a sub-dict, else NULL */
    ck_dtype dtype;        /* F32, F16, BF16 or I64 (Float/Half/BFloat16/LongStorage) */
    size_t rank;
    size_t shape[CK_ST_MAX_RANK];
    size_t stride[CK_ST_MAX_RANK]; /* in elements; always the row-major strides (checked) */
    size_t offset;            /* storage offset in elements */
    size_t elements;          /* product of shape */
    const char *storage;      /* ZIP entry name of its storage */
} ck_pth_tensor;

typedef struct ck_pth_file ck_pth_file;

/* 1 when the file at `path` starts with the ZIP local header signature "PK\x03\x04" (a torch.save
 * archive; a safetensors file starts with its u64 header length), else 0 (also when unreadable or
 * not a regular file: a FIFO is never waited on). */
int ck_pth_sniff(const char *path);

/* Opens the archive (ck_zip_open), finds the single "<dir>/data.pkl", checks "<dir>/byteorder" is
 * "little" when present, verifies data.pkl's CRC-32, runs the restricted unpickler, and describes
 * every tensor reachable from the top-level dict through nested dicts (at most
 * CK_PICKLE_MAX_DEPTH deep; other values are ignored), or the one tensor pickled at the top level
 * (named "", group NULL). Each tensor is checked without reading its storage: its entry
 * "<dir>/data/<key>" exists and holds exactly numel x dtype-size bytes, the view is contiguous
 * (row-major strides; dims of size 1 may have any stride) and offset + elements <= numel, all
 * overflow-checked. Errors: CK_E_ARG (null), CK_E_IO, CK_E_FORMAT (from zip/pickle; also a missing
 * data.pkl, big-endian byte order, top level neither a dict nor a tensor, a non-string key, nesting
 * too deep, a missing storage, a storage of the wrong size, a non-contiguous or out-of-bounds view;
 * the message names the file and the tensor), CK_E_MEMORY. On error *out is NULL. */
int ck_pth_open(ck_pth_file **out, const char *path, ck_error *err);

/* The same over bytes[n] held by the caller (a checkpoint already in memory, a fuzzer's input):
 * nothing is copied, so the bytes must outlive f. name (copied; NULL: "<memory>") starts every
 * message. Errors: CK_E_ARG (null out or bytes), the rest as ck_pth_open. */
int ck_pth_open_memory(ck_pth_file **out, const void *bytes, size_t n, const char *name,
                       ck_error *err);

/* Unmaps and frees; accepts NULL. */
void ck_pth_close(ck_pth_file *f);

/* Number of tensors; 0 for NULL. */
size_t ck_pth_count(const ck_pth_file *f);

/* Tensor i in pickle order, or NULL when i >= count. */
const ck_pth_tensor *ck_pth_at(const ck_pth_file *f, size_t i);

/* Fills *view (name, dtype, rank, shape, elements, bytes, data pointing into the mapping at the
 * tensor's first element) for tensor i, after verifying its storage entry's CRC-32 the first time
 * any tensor of that storage is viewed. Errors: CK_E_ARG (null, i >= count), CK_E_FORMAT (bad CRC;
 * the message names the entry). */
int ck_pth_view(ck_pth_file *f, size_t i, ck_st_tensor *view, ck_error *err);


#endif
