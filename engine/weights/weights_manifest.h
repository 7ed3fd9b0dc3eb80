/* weights_manifest.h - SHA-256 weight manifests (write, verify) and the `weights inspect` listing.
 * Hashes through OpenSSL EVP (sha256.h); never changes a tensor, never trusts a manifest's text.
 *
 * Manifest format "ckbatch-weights-manifest-1" (JSON):
 *   {"format": "ckbatch-weights-manifest-1", "file": "<path as given>", "file_sha256": "<hex>",
 *    "tensors": [{"name": "bert.embeddings.word_embeddings.weight", "dtype": "F32",
 *                 "shape": [178, 128], "sha256": "<hex of elements x 4 little-endian f32 bytes>"}]}
 * Tensor names and order are those of ck_weights_load (normalised; every group; stored tensors only:
 * a weight folded from its weight-norm g and v is covered by theirs). "file_sha256" is informative:
 * verification checks the tensors, so a .pth and its safetensors conversion verify against the same
 * manifest. */
#ifndef CK_WEIGHTS_MANIFEST_H
#define CK_WEIGHTS_MANIFEST_H

#include <stdio.h>

#include "ck_error.h"
#include "weights.h"

#define CK_MANIFEST_FORMAT "ckbatch-weights-manifest-1"

/* Hashes every tensor of w (ck_weights_hash) and the file at `path` (ck_sha256_file), and writes
 * the manifest above to `out`, pretty-printed, ending in a newline. Errors: CK_E_ARG (null),
 * CK_E_IO (path unreadable, write failed), CK_E_BACKEND (OpenSSL), CK_E_MEMORY. */
int ck_weights_manifest_write(FILE *out, ck_weights *w, const char *path, ck_error *err);

/* Verifies every stored tensor of w against the manifest at `manifest_path`, in w's order, before
 * the tensors are used: the same names in both (none missing either side; entries of groups the load
 * did not read, ck_weights_read_group, are not expected; a name listed twice, or naming a weight
 * derived at load, is a mismatch), equal shape and SHA-256 of the f32 bytes. Errors: CK_E_ARG
 * (null), CK_E_IO (unreadable manifest), CK_E_FORMAT (not JSON,
 * wrong "format", a field missing or of the wrong type; the message names the field),
 * CK_E_HASH (the first mismatch: the message names the tensor and gives got and expected),
 * CK_E_BACKEND, CK_E_MEMORY. */
int ck_weights_manifest_verify(ck_weights *w, const char *manifest_path, ck_error *err);

/* Lists every tensor of the weights file at `path` (.pth or .safetensors, by content) as it is
 * stored, one line each: "<name>\t<dtype>\t[d0,d1,...]\t<bytes>\n" (names as stored, every group
 * of a .pth, integer tensors too). Errors: those of ck_pth_open / ck_st_open, CK_E_IO (write). */
int ck_weights_inspect(FILE *out, const char *path, ck_error *err);

#endif
