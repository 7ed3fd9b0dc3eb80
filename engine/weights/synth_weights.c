/* synth_weights.c - splitmix64-uniform-v1 streams for demo weights; must stay bit-identical to the
 * Python capture tool, so nothing here may change without a new generator name. */
#include "synth_weights.h"

#include <string.h>

#include "ck_status.h"

uint64_t ck_fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* 1 when `s` ends with `suffix`. */
static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

void ck_synth_scale(const char *name, double *scale, double *offset)
{
    int gamma = ends_with(name, "LayerNorm.weight") || ends_with(name, "layer_norm.weight");
    *scale = gamma ? 0.1 : 0.05;
    *offset = gamma ? 1.0 : 0.0;
}

int ck_synth_tensor_f32(const char *name, uint64_t seed, float *out, size_t count)
{
    double scale, offset;
    uint64_t state;
    if (name == NULL || (out == NULL && count > 0)) {
        return CK_E_ARG;
    }
    ck_synth_scale(name, &scale, &offset);
    state = seed ^ ck_fnv1a64(name);
    for (size_t i = 0; i < count; i++) {
        uint64_t z;
        state += 0x9E3779B97F4A7C15ULL;
        z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        /* 24 bits / 2^24 is exact in double; the products and sums are separate statements so no
         * compiler may contract them into an FMA (the build is -std=c11, contraction off too). */
        double u = (double)(z >> 40) / 16777216.0;
        double centred = 2.0 * u - 1.0;
        double scaled = scale * centred;
        out[i] = (float)(scaled + offset);
    }
    return CK_OK;
}
