/* circuit_internal.h - shared state of the circuit loader (circuit.c parses sections, circuit_ops.c
 * parses and unrolls ops). Private to engine/graph/circuit*.c; nothing else includes it. */
#ifndef CK_CIRCUIT_INTERNAL_H
#define CK_CIRCUIT_INTERNAL_H

#include <cjson/cJSON.h>

#include "circuit.h"
#include "json.h"

typedef struct {
    ck_circuit *c;
    ck_error *err;
    char where[96];         /* op context for messages, e.g. op 2.3 "attention" (application 0) */
    unsigned char *written; /* [n_buffers] 1 once an op (or the executor, for inputs) wrote it */
    unsigned char *read;    /* [n_buffers] 1 once an op read it */
} ck_loader;

/* Records CK_E_CIRCUIT with "<path>: <where>: <formatted>" (where omitted when empty). */
int ck_loader_fail(ck_loader *l, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Copies a JSON string into dst[cap]; CK_E_CIRCUIT naming `field` when not a string or too long. */
int ck_loader_string(ck_loader *l, const cJSON *item, const char *field, char *dst, size_t cap);

/* Allowed-key check: CK_E_CIRCUIT "<what>: unknown <noun> "<key>"" for a key of obj not in the
 * NULL-terminated `allowed` list (noun: "field", "slot", "param"). */
int ck_loader_keys(ck_loader *l, const cJSON *obj, const char *what, const char *noun,
                   const char *const *allowed);

/* Index of the buffer (or weight) a JSON name refers to; CK_E_CIRCUIT "<what>: unknown buffer
 * "<name>"" when item is not a string or names nothing. */
int ck_loader_lookup(ck_loader *l, const cJSON *item, const char *what, int is_weight, int *index);


/* Parses the "ops" array (unrolling repeats) into c->ops, and
 * runs the data-flow rules (read before written, in place, dead buffers, outputs written). */
int ck_circuit_parse_ops(ck_loader *l, const cJSON *ops);

#endif
