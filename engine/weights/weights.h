/* weights.h - a named set of read-only f32 tensors (from a safetensors file or synthetic) that the
 * executor binds a circuit to. Knows no circuit and no model layout; never writes a tensor's values. */
#ifndef CK_WEIGHTS_H
#define CK_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"

/* One f32 tensor, row-major [shape[0], ..., shape[rank-1]], `data` valid until ck_weights_free. */
typedef struct {
    char *name;               /* normalised checkpoint name, e.g. "bert.embeddings.LayerNorm.weight" */
    size_t rank;
    size_t shape[8];
    size_t elements;          /* product of shape (1 for rank 0) */
    const float *data;        /* [elements], 4-byte aligned, all finite; NULL once released */
    unsigned char sha256[32]; /* of the elements x 4 f32 bytes, valid when has_sha256 */
    int has_sha256;
} ck_tensor;

typedef struct ck_weights ck_weights;

/* Loads a weights file, chosen by content, not by name: a torch.save .pth (ZIP, "PK\x03\x04"; read
 * by the restricted unpickler of pth.h: only the floating tensors of the `bert` and `bert_encoder`
 * groups, or every tensor of a flat state dict; other groups' storages are never read) or else a
 * safetensors file (every floating tensor). Names are normalised by dropping
 * every dot-separated segment equal to "module" ("module.bert.x", "bert.module.x" -> "bert.x").
 * F32 tensors are used in place from the read-only mapping when 4-byte aligned, else copied; F16 and
 * BF16 are converted to owned f32 (ck_st_to_f32); I32, I64 and other dtypes are skipped (e.g.
 * position_ids). Every value is checked finite. The identity becomes "file <path> sha256 <hex>" (the
 * whole file hashed once). Errors: CK_E_ARG (null), CK_E_IO / CK_E_FORMAT (from ck_st_open,
 * ck_pth_open or ck_pth_view: malformed ZIP, pickle, disallowed opcode or global; also a
 * name that is empty or collides after normalisation), CK_E_NONFINITE (message names the tensor and
 * the flat index), CK_E_MEMORY. On error *out is NULL. */
int ck_weights_load(ck_weights **out, const char *path, ck_error *err);

/* Shape of one synthetic tensor; the name is the flat checkpoint name the generator hashes. */
typedef struct {
    const char *name;
    size_t rank;      /* <= 8 */
    size_t shape[8];
} ck_weight_spec;

/* One owned tensor per spec, filled by ck_synth_tensor_f32(name, seed) (splitmix64-uniform-v1).
 * Identity: "synthetic splitmix64-uniform-v1 seed <seed> (demo weights, NOT Kokoro's)".
 * Errors: CK_E_ARG (null specs with n > 0, null/empty/duplicate name, rank > 8; the message names
 * the spec), CK_E_SIZE (element count overflows), CK_E_MEMORY. On error *out is NULL. */
int ck_weights_synthetic(ck_weights **out, const ck_weight_spec *specs, size_t n, uint64_t seed,
                         ck_error *err);

/* Tensor named `name` (normalised form), or NULL. */
const ck_tensor *ck_weights_find(const ck_weights *w, const char *name);

/* Number of tensors; 0 for NULL. */
size_t ck_weights_count(const ck_weights *w);

/* Tensor i in load/spec order, or NULL when i >= count. */
const ck_tensor *ck_weights_at(const ck_weights *w, size_t i);

/* Human identity for the log and output metadata (see load/synthetic); "" for NULL. */
const char *ck_weights_identity(const ck_weights *w);

/* Writes every tensor as F32 to a safetensors file (ck_st_write: temp + rename) with metadata
 * "identity", and for synthetic sets "generator" (CK_SYNTH_GENERATOR) and "seed" (decimal).
 * Errors: CK_E_ARG (null, or a released tensor), those of ck_st_write, CK_E_MEMORY. */
int ck_weights_save(const ck_weights *w, const char *path, ck_error *err);

/* Sets sha256/has_sha256 of every tensor: SHA-256 of its elements x 4 f32 bytes (little-endian).
 * Errors: CK_E_ARG (null, or a released tensor: the message names it), CK_E_BACKEND (OpenSSL
 * failed; message names the tensor). */
int ck_weights_hash(ck_weights *w, ck_error *err);

/* Declares that nothing reads tensor i's values again (the executor keeps its own oneDNN copy of
 * every linear weight), so its memory leaves the process: an owned buffer (synthetic, converted
 * F16/BF16, unaligned F32) is freed; for a tensor used in place from the read-only file mapping,
 * the whole pages inside it are dropped (madvise MADV_DONTNEED: a private read-only mapping would
 * read them from the file again). data becomes NULL; name, shape and sha256 stay. A released
 * tensor cannot be hashed (ck_weights_hash: CK_E_ARG) or saved. Releasing again is a no-op.
 * Errors: CK_E_ARG (w null, i >= count). */
int ck_weights_release(ck_weights *w, size_t i);

/* Frees the tensors, names, owned copies and the file mapping; accepts NULL and half-built sets. */
void ck_weights_free(ck_weights *w);

#endif
