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
 * reference of c, generated in memory. Errors: CK_E_MEMORY, CK_E_ARG. */
int ck_circuit_synthetic_weights(ck_weights **out, const ck_circuit *c, uint64_t seed,
                                 ck_error *err);

#endif
