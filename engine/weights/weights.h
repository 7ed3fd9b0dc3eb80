/* weights.h - a named set of read-only f32 tensors (from a safetensors or .pth file, or synthetic) that
 * the executor binds a circuit to. Knows no circuit; of a model's layout only the two stored forms of
 * weight normalisation, which it folds once at load. Never writes a tensor's values after that. */
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
    int derived;              /* 1: computed at load (a folded weight norm), not stored in the file */
} ck_tensor;

typedef struct ck_weights ck_weights;

/* Loads a weights file, chosen by content, not by name: a torch.save .pth (ZIP, "PK\x03\x04"; read
 * by the restricted unpickler of pth.h) or else a safetensors file. Names are normalised by dropping
 * every dot-separated segment equal to "module" ("module.bert.x", "bert.module.x" -> "bert.x"); a
 * tensor's group is the first segment of its normalised name ("bert", "bert_encoder", "predictor",
 * "text_encoder", "decoder" in Kokoro's checkpoint, whether it nests them as a .pth does or stores
 * flat names as safetensors do). Only the groups named in `groups` (a NULL-terminated list; NULL:
 * every group) are read: other groups' storages are never touched.
 * F32 tensors are used in place from the read-only mapping when 4-byte aligned, else copied; F16 and
 * BF16 are converted to owned f32 (ck_st_to_f32); I32, I64 and other dtypes are skipped (e.g.
 * position_ids). Every value is checked finite.
 * Weight normalisation is folded once, here (torch.nn.utils.weight_norm, dim 0): a pair stored as
 * P.weight_g / P.weight_v, or as P.parametrizations.weight.original0 / original1 (torch >= 2.1's
 * parametrize form), adds the derived tensor P.weight = g * v / ||v|| with the norm over every dim but
 * dim 0 (for ConvTranspose1d's [in, out, k] weight, dim 0 is the input channel): sums of squares and
 * the product in double, rounded to f32 once. g and v stay in the set as stored (manifests and hashes
 * cover them; derived tensors are neither hashed into manifests nor saved).
 * The identity becomes "file <path> sha256 <hex>" (the whole file hashed once).
 * Errors: CK_E_ARG (null), CK_E_IO / CK_E_FORMAT (from ck_st_open, ck_pth_open or ck_pth_view:
 * malformed ZIP, pickle, disallowed opcode or global; also a name that is empty or collides after
 * normalisation; a g without its v or the reverse, a g whose element count is not v's dim 0, a
 * stored P.weight beside its g and v), CK_E_NONFINITE (message names the tensor and the flat index;
 * also a v row whose norm is 0), CK_E_MEMORY. On error *out is NULL. */
int ck_weights_load_groups(ck_weights **out, const char *path, const char *const *groups,
                           ck_error *err);

/* ck_weights_load_groups with every group. */
int ck_weights_load(ck_weights **out, const char *path, ck_error *err);

/* 1 when w holds at least one tensor of `group` (the first segment of its name), else 0. */
int ck_weights_has_group(const ck_weights *w, const char *group);

/* 1 when the load that built w read `group` (every group for ck_weights_load and synthetic sets),
 * else 0: a manifest's entries of groups that were not read are not expected in w. */
int ck_weights_read_group(const ck_weights *w, const char *group);

/* Shape of one synthetic tensor; the name is the flat checkpoint name the generator hashes. */
typedef struct {
    const char *name;
    size_t rank;      /* <= 8 */
    size_t shape[8];
} ck_weight_spec;

/* One owned tensor per spec, filled by ck_synth_tensor_f32(name, seed) (splitmix64-uniform-v1);
 * weight-norm pairs among the specs are folded as ck_weights_load_groups folds them.
 * Identity: "synthetic splitmix64-uniform-v1 seed <seed> (demo weights, NOT Kokoro's)".
 * Errors: CK_E_ARG (null specs with n > 0, null/empty/duplicate name, rank > 8; the message names
 * the spec), CK_E_SIZE (element count overflows), CK_E_MEMORY. On error *out is NULL. */
int ck_weights_synthetic(ck_weights **out, const ck_weight_spec *specs, size_t n, uint64_t seed,
                         ck_error *err);

/* Tensor named `name` (normalised form), or NULL. A hashed lookup (FNV-1a 64, open addressing):
 * O(1) expected, so building and binding a set of n tensors is O(n), not O(n^2). */
const ck_tensor *ck_weights_find(const ck_weights *w, const char *name);

/* Number of tensors; 0 for NULL. */
size_t ck_weights_count(const ck_weights *w);

/* Tensor i in load/spec order, or NULL when i >= count. */
const ck_tensor *ck_weights_at(const ck_weights *w, size_t i);

/* Human identity for the log and output metadata (see load/synthetic); "" for NULL. */
const char *ck_weights_identity(const ck_weights *w);

/* Writes every stored (not derived) tensor as F32 to a safetensors file (ck_st_write: temp + rename) with metadata
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
