/* synth_weights.h - the synthetic weight generator splitmix64-uniform-v1 (DESIGN section 7); no I/O. */
#ifndef CK_SYNTH_WEIGHTS_H
#define CK_SYNTH_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#define CK_SYNTH_GENERATOR "splitmix64-uniform-v1"
#define CK_SYNTH_DEFAULT_SEED 20261129ULL

/* FNV-1a 64 over the bytes of the NUL-terminated string s (basis 0xcbf29ce484222325, prime
 * 0x100000001b3). fnv1a64("") = 0xcbf29ce484222325, fnv1a64("a") = 0xaf63dc4c8601ec8c. */
uint64_t ck_fnv1a64(const char *s);

/* The (scale, offset) of the tensor named `name` (flat checkpoint name), from the first row of the
 * scale table (synth_weights.c, the same rows as tools/kokoro_weights.py) that matches the whole
 * name. The phoneme encoder's rows are DESIGN section 7's: a LayerNorm gamma (a name ending
 * "LayerNorm.weight" or "layer_norm.weight") scale 0.1 offset 1.0, every other bert / bert_encoder
 * tensor scale 0.05 offset 0.0. The other groups' rows (docs/synthetic-weights.md): weight-norm magnitudes around 1,
 * LSTM matrices +-0.0625, the duration head biased to a few frames, F0 around 180 Hz, Snake alphas
 * around 1, ...; anything else 0.05. Thread-safe. */
void ck_synth_scale(const char *name, double *scale, double *offset);

/* Fills out[count] (f32, row-major) with tensor `name`'s stream for `seed` (DESIGN section 7):
 * state = seed ^ fnv1a64(name); per element state += 0x9E3779B97F4A7C15, splitmix64 finalizer z,
 * u = (z >> 40) / 2^24 in [0, 1), value = (float)(scale * (2u - 1) + offset) in double (each
 * operation rounded separately, no FMA). Errors: CK_E_ARG (null name, or null out with count > 0). */
int ck_synth_tensor_f32(const char *name, uint64_t seed, float *out, size_t count);

#endif
