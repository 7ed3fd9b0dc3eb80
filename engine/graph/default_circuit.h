/* default_circuit.h - the Kokoro phoneme encoder circuit embedded in the binary at build time from
 * circuits/kokoro_phoneme_encoder.json (cmake/EmbedFile.cmake); NUL-terminated. */
#ifndef CK_DEFAULT_CIRCUIT_H
#define CK_DEFAULT_CIRCUIT_H

#include <stddef.h>

extern const unsigned char ck_default_circuit_json[];  /* [ck_default_circuit_json_len + 1] */
extern const size_t ck_default_circuit_json_len;       /* bytes, without the final NUL */

#endif
