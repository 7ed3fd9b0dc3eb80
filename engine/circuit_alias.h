/* circuit_alias.h - op-less X-Ray checkpoint ids of a circuit ("aliases": {"id": "buffer"}), e.g.
 * kokoro.phoneme_encoder.last_hidden_state -> buffer "hidden" after the repeat. Lookup only. */
#ifndef CK_CIRCUIT_ALIAS_H
#define CK_CIRCUIT_ALIAS_H

#include "circuit.h"

/* Buffer index an alias id names, -1 when c, id or the alias is absent. Aliases are validated at
 * load: the id is unique among all checkpoint ids and the buffer is an output, so its contents at the
 * end of a run are what the id means. */
int ck_circuit_alias(const ck_circuit *c, const char *id);

/* Number of aliases and the i-th one (id and buffer index); 0 / NULL for c NULL or i out of range.
 * Lets X-Ray list every checkpoint id without knowing them in advance. */
size_t ck_circuit_alias_count(const ck_circuit *c);
const char *ck_circuit_alias_at(const ck_circuit *c, size_t i, int *buffer);

#endif
