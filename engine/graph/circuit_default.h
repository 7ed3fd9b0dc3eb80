/* circuit_default.h - what a run uses when it is given no circuit or no weights: the embedded Kokoro
 * phoneme encoder circuit (circuits/kokoro_phoneme_encoder.json, built into the library) and the
 * synthetic demo weights for any circuit. */
#ifndef CK_CIRCUIT_DEFAULT_H
#define CK_CIRCUIT_DEFAULT_H

#include <stdint.h>

#include "circuit.h"
#include "ck_error.h"
#include "weights.h"

/* Loads the circuit JSON at path, or the embedded Kokoro phoneme encoder when path is NULL.
 * Errors: those of ck_circuit_load / ck_circuit_parse (CK_E_IO, CK_E_CIRCUIT, CK_E_MEMORY). */
int ck_circuit_load_default(ck_circuit *c, const char *path, ck_error *err);

/* The synthetic demo weights (splitmix64-uniform-v1, docs/synthetic-weights.md section 2) for every weight
 * reference of c, generated in memory, as `ckbatch make-demo-weights` stores them: a reference P.weight
 * that Kokoro's checkpoint holds weight-normed (kokoro_layout.h lists P.weight_g and a P.weight_v of the
 * reference's shape) is generated as that g and v and folded as a file load folds them
 * (ck_weights_synthetic), so the embedded default and a run on the make-demo-weights file read the
 * same bits. Any other reference (a stored Kokoro tensor, or a test circuit's own name) is generated
 * under its own name and shape. Errors: CK_E_MEMORY, CK_E_ARG (a duplicate reference). */
int ck_circuit_synthetic_weights(ck_weights **out, const ck_circuit *c, uint64_t seed,
                                 ck_error *err);

#endif
