/* synth_weights.c - splitmix64-uniform-v1 streams for demo weights; must stay bit-identical to the
 * Python capture tool, so nothing here may change without a new generator name. */
#include "synth_weights.h"

#include <pthread.h>
#include <regex.h>
#include <stdio.h>
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

/* The scale table, first full match wins (tools/kokoro_weights.py SCALE_TABLE holds the same rows
 * in the same order; docs/synthetic-weights.md gives the reason for each). The first two rows are
 * the phoneme encoder's (DESIGN section 7, unchanged); the rest cover Kokoro's other four groups so
 * a whole synthetic Kokoro runs numerically sane. POSIX extended regular expressions. */
static const struct {
    const char *pattern;
    double scale, offset;
} SCALE_TABLE[] = {
    {".*(LayerNorm|layer_norm)\\.weight", 0.1, 1.0},
    {"bert\\..*|bert_encoder\\..*", 0.05, 0.0},
    {"decoder\\.generator\\.conv_post\\.weight_g", 0.02, 0.1},
    {"decoder\\.(F0_conv|N_conv)\\.weight_g", 0.0, 0.01},
    {".*\\.weight_g", 0.1, 1.0},
    {".*\\.weight_v", 0.05, 0.0},
    {".*\\.(weight_ih|weight_hh|bias_ih|bias_hh)_l0(_reverse)?", 0.0625, 0.0},
    {"predictor\\.duration_proj\\.linear_layer\\.weight", 1.0, 0.0},
    {"predictor\\.duration_proj\\.linear_layer\\.bias", 2.0, -6.0},
    {"predictor\\.F0_proj\\.weight", 5.0, 0.0},
    {"predictor\\.F0_proj\\.bias", 20.0, 180.0},
    {".*\\.alpha[12]\\.[0-9]+", 0.5, 1.0},
    {"text_encoder\\.cnn\\.[0-9]+\\.1\\.gamma", 0.1, 1.0},
    {"text_encoder\\.embedding\\.weight", 1.0, 0.0},
    {"decoder\\.generator\\.m_source\\.l_linear\\.weight", 1.0, 0.0},
    {"voice\\.synthetic", 0.25, 0.0},
    {".*", 0.05, 0.0},
};
#define SCALE_ROWS (sizeof SCALE_TABLE / sizeof SCALE_TABLE[0])

static regex_t g_scale_rx[SCALE_ROWS];
static int g_scale_ok;
static pthread_once_t g_scale_once = PTHREAD_ONCE_INIT;

/* Compiles every row anchored at both ends ("^(...)$": Python's fullmatch). */
static void compile_scale_table(void)
{
    int ok = 1;
    for (size_t i = 0; i < SCALE_ROWS; i++) {
        char anchored[256];
        snprintf(anchored, sizeof anchored, "^(%s)$", SCALE_TABLE[i].pattern);
        ok &= regcomp(&g_scale_rx[i], anchored, REG_EXTENDED | REG_NOSUB) == 0;
    }
    g_scale_ok = ok;
}

void ck_synth_scale(const char *name, double *scale, double *offset)
{
    pthread_once(&g_scale_once, compile_scale_table);
    for (size_t i = 0; g_scale_ok && i < SCALE_ROWS; i++) {
        if (regexec(&g_scale_rx[i], name, 0, NULL, 0) == 0) {
            *scale = SCALE_TABLE[i].scale;
            *offset = SCALE_TABLE[i].offset;
            return;
        }
    }
    *scale = 0.05; /* unreachable: the last row matches everything, and the table compiles */
    *offset = 0.0;
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
