/* circuit_default.c - the embedded Kokoro phoneme encoder circuit, and synthetic demo weights shaped
 * for any circuit. */
#include "circuit_default.h"

#include <stdlib.h>
#include <string.h>

#include "default_circuit.h"
#include "synth_weights.h"

int ck_circuit_load_default(ck_circuit *c, const char *path, ck_error *err)
{
    if (path != NULL) {
        return ck_circuit_load(c, path, err);
    }
    return ck_circuit_parse(c, (const char *)ck_default_circuit_json, ck_default_circuit_json_len,
                            "embedded:circuits/kokoro_phoneme_encoder.json", err);
}

int ck_circuit_synthetic_weights(ck_weights **out, const ck_circuit *c, uint64_t seed,
                                 ck_error *err)
{
    ck_weight_spec *specs = calloc(c->n_weights ? c->n_weights : 1, sizeof *specs);
    if (specs == NULL) {
        return ck_fail(err, CK_E_MEMORY, "weights: out of memory");
    }
    for (size_t i = 0; i < c->n_weights; i++) {
        specs[i].name = c->weights[i].checkpoint_name;
        specs[i].rank = c->weights[i].rank;
        memcpy(specs[i].shape, c->weights[i].shape, sizeof c->weights[i].shape);
    }
    int rc = ck_weights_synthetic(out, specs, c->n_weights, seed, err);
    free(specs);
    return rc;
}
