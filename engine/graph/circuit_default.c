/* circuit_default.c - the embedded Kokoro phoneme encoder circuit, and synthetic demo weights shaped
 * for any circuit. */
#include "circuit_default.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "default_circuit.h"
#include "kokoro_layout.h"
#include "synth_weights.h"

int ck_circuit_load_default(ck_circuit *c, const char *path, ck_error *err)
{
    if (path != NULL) {
        return ck_circuit_load(c, path, err);
    }
    return ck_circuit_parse(c, (const char *)ck_default_circuit_json, ck_default_circuit_json_len,
                            "embedded:circuits/kokoro_phoneme_encoder.json", err);
}

/* The Kokoro layout's spec named `name`, or NULL. */
static const ck_weight_spec *layout_find(const ck_weight_spec *layout, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(layout[i].name, name) == 0) {
            return &layout[i];
        }
    }
    return NULL;
}

/* 1 when spec s (a circuit's P.weight) is what the Kokoro layout stores as weight-norm P.weight_g and
 * P.weight_v of the same shape; *g and *v then point at those two layout specs. */
static int stored_as_weight_norm(const ck_weight_spec *layout, size_t n, const ck_weight_spec *s,
                                 const ck_weight_spec **g, const ck_weight_spec **v)
{
    char name[CK_WEIGHT_NAME_MAX + 8];
    size_t len = strlen(s->name), suffix = sizeof ".weight" - 1;
    if (len <= suffix || len + 2 >= sizeof name || strcmp(s->name + len - suffix, ".weight") != 0) {
        return 0;
    }
    snprintf(name, sizeof name, "%s_g", s->name);
    *g = layout_find(layout, n, name);
    snprintf(name, sizeof name, "%s_v", s->name);
    *v = layout_find(layout, n, name);
    return *g != NULL && *v != NULL && (*v)->rank == s->rank &&
           memcmp((*v)->shape, s->shape, s->rank * sizeof *s->shape) == 0;
}

int ck_circuit_synthetic_weights(ck_weights **out, const ck_circuit *c, uint64_t seed,
                                 ck_error *err)
{
    ck_weight_spec *layout = NULL;
    size_t n_layout = 0;
    int rc = ck_kokoro_weight_specs(&layout, &n_layout, NULL, err);
    if (rc != CK_OK) {
        return rc;
    }
    /* at most two stored specs (g and v) per reference */
    ck_weight_spec *specs = calloc(2 * c->n_weights + 1, sizeof *specs);
    if (specs == NULL) {
        free(layout);
        return ck_fail(err, CK_E_MEMORY, "weights: out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n_weights; i++) {
        ck_weight_spec s = {c->weights[i].checkpoint_name, c->weights[i].rank, {0}};
        const ck_weight_spec *g = NULL, *v = NULL;
        memcpy(s.shape, c->weights[i].shape, sizeof c->weights[i].shape);
        if (stored_as_weight_norm(layout, n_layout, &s, &g, &v)) {
            specs[n++] = *g;
            specs[n++] = *v;
        } else {
            specs[n++] = s;
        }
    }
    rc = ck_weights_synthetic(out, specs, n, seed, err);
    free(specs);
    free(layout);
    return rc;
}
