/* kokoro_layout.c - the key list of Kokoro-82M v1.0's checkpoint (kokoro_layout.h), built from the
 * layer kinds Kokoro's modules are made of (istftnet.py, modules.py); must list exactly what
 * kokoro-v1_0.pth stores, no more (InstanceNorm has no affine tensors there) and no less. */
#include "kokoro_layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 96
#define LSTM_HIDDEN 256 /* per direction: hidden_dim / 2 */
#define HIDDEN 512      /* hidden_dim */
#define STYLE 128       /* style_dim */

typedef struct {
    ck_weight_spec *specs;
    char (*names)[NAME_MAX_LEN];
    size_t n, cap;
    const char *const *groups;
    int oom;
} key_list;

static int group_wanted(const key_list *k, const char *name)
{
    for (size_t i = 0; k->groups != NULL && k->groups[i] != NULL; i++) {
        size_t len = strlen(k->groups[i]);
        if (strncmp(name, k->groups[i], len) == 0 && name[len] == '.') {
            return 1;
        }
    }
    return k->groups == NULL;
}

/* Appends name (printf-style) with `rank` dims from the variadic size_t list. */
static void add(key_list *k, size_t rank, const size_t *shape, const char *fmt, ...)
{
    char name[NAME_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (k->oom || !group_wanted(k, name)) {
        return;
    }
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        ck_weight_spec *s = realloc(k->specs, cap * sizeof *s);
        if (s != NULL) {
            k->specs = s;
        }
        char (*nm)[NAME_MAX_LEN] = realloc(k->names, cap * sizeof *nm);
        if (nm != NULL) {
            k->names = nm;
        }
        if (s == NULL || nm == NULL) {
            k->oom = 1;
            return;
        }
        k->cap = cap;
    }
    memcpy(k->names[k->n], name, sizeof name);
    ck_weight_spec *s = &k->specs[k->n++];
    memset(s, 0, sizeof *s);
    s->rank = rank;
    memcpy(s->shape, shape, rank * sizeof *shape);
}

#define SHAPE(...) ((const size_t[]){__VA_ARGS__})
#define ADD(k, rank, shape, ...) add(k, rank, shape, __VA_ARGS__)

/* nn.LSTM(n_in, 256, bidirectional): forward then reverse, each weight_ih, weight_hh, biases. */
static void lstm(key_list *k, const char *p, size_t n_in)
{
    static const char *const dirs[2] = {"", "_reverse"};
    for (size_t d = 0; d < 2; d++) {
        ADD(k, 2, SHAPE(4 * LSTM_HIDDEN, n_in), "%s.weight_ih_l0%s", p, dirs[d]);
        ADD(k, 2, SHAPE(4 * LSTM_HIDDEN, LSTM_HIDDEN), "%s.weight_hh_l0%s", p, dirs[d]);
        ADD(k, 1, SHAPE(4 * LSTM_HIDDEN), "%s.bias_ih_l0%s", p, dirs[d]);
        ADD(k, 1, SHAPE(4 * LSTM_HIDDEN), "%s.bias_hh_l0%s", p, dirs[d]);
    }
}

/* weight_norm(nn.Conv1d(c_in, c_out, kw)) as stored: bias (if any), weight_g, weight_v. */
static void wn_conv(key_list *k, const char *p, size_t c_out, size_t c_in, size_t kw, int bias)
{
    if (bias) {
        ADD(k, 1, SHAPE(c_out), "%s.bias", p);
    }
    ADD(k, 3, SHAPE(c_out, 1, 1), "%s.weight_g", p);
    ADD(k, 3, SHAPE(c_out, c_in, kw), "%s.weight_v", p);
}

/* weight_norm(nn.ConvTranspose1d(c_in, c_out, kw, groups)): weight [c_in, c_out/groups, kw], its
 * dim 0 (the norm's) the input channel. */
static void wn_transpose(key_list *k, const char *p, size_t c_in, size_t c_out, size_t kw,
                         size_t groups)
{
    ADD(k, 1, SHAPE(c_out), "%s.bias", p);
    ADD(k, 3, SHAPE(c_in, 1, 1), "%s.weight_g", p);
    ADD(k, 3, SHAPE(c_in, c_out / groups, kw), "%s.weight_v", p);
}

static void linear(key_list *k, const char *p, size_t n_out, size_t n_in)
{
    ADD(k, 2, SHAPE(n_out, n_in), "%s.weight", p);
    ADD(k, 1, SHAPE(n_out), "%s.bias", p);
}

/* AdainResBlk1d(c_in, c_out, style 128, upsample): conv1, conv2, norm1.fc, norm2.fc, conv1x1 when
 * the width changes (no bias), pool (depthwise transposed conv) when upsampling. */
static void adain_resblk1d(key_list *k, const char *p, size_t c_in, size_t c_out, int upsample)
{
    char q[NAME_MAX_LEN];
    snprintf(q, sizeof q, "%s.conv1", p);
    wn_conv(k, q, c_out, c_in, 3, 1);
    snprintf(q, sizeof q, "%s.conv2", p);
    wn_conv(k, q, c_out, c_out, 3, 1);
    snprintf(q, sizeof q, "%s.norm1.fc", p);
    linear(k, q, 2 * c_in, STYLE);
    snprintf(q, sizeof q, "%s.norm2.fc", p);
    linear(k, q, 2 * c_out, STYLE);
    if (c_in != c_out) {
        snprintf(q, sizeof q, "%s.conv1x1", p);
        wn_conv(k, q, c_out, c_in, 1, 0);
    }
    if (upsample) {
        snprintf(q, sizeof q, "%s.pool", p);
        wn_transpose(k, q, c_in, c_in, 3, c_in);
    }
}

/* AdaINResBlock1(c, kw, dilations 1,3,5): convs1.0-2, convs2.0-2, adain1/2.0-2.fc, alpha1/2.0-2. */
static void adain_resblock1(key_list *k, const char *p, size_t c, size_t kw)
{
    char q[NAME_MAX_LEN];
    static const char *const convs[2] = {"convs1", "convs2"}, *const adains[2] = {"adain1", "adain2"},
                             *const alphas[2] = {"alpha1", "alpha2"};
    for (size_t s = 0; s < 2; s++) {
        for (size_t j = 0; j < 3; j++) {
            snprintf(q, sizeof q, "%s.%s.%zu", p, convs[s], j);
            wn_conv(k, q, c, c, kw, 1);
        }
    }
    for (size_t s = 0; s < 2; s++) {
        for (size_t j = 0; j < 3; j++) {
            snprintf(q, sizeof q, "%s.%s.%zu.fc", p, adains[s], j);
            linear(k, q, 2 * c, STYLE);
        }
    }
    for (size_t s = 0; s < 2; s++) {
        for (size_t j = 0; j < 3; j++) {
            ADD(k, 3, SHAPE(1, c, 1), "%s.%s.%zu", p, alphas[s], j);
        }
    }
}

/* bert (ALBERT, 25 tensors with the unused pooler) and bert_encoder (Linear 768 -> 512). */
static void bert(key_list *k)
{
    const char *l = "bert.encoder.albert_layer_groups.0.albert_layers.0";
    ADD(k, 2, SHAPE(178, 128), "bert.embeddings.word_embeddings.weight");
    ADD(k, 2, SHAPE(512, 128), "bert.embeddings.position_embeddings.weight");
    ADD(k, 2, SHAPE(2, 128), "bert.embeddings.token_type_embeddings.weight");
    ADD(k, 1, SHAPE(128), "bert.embeddings.LayerNorm.weight");
    ADD(k, 1, SHAPE(128), "bert.embeddings.LayerNorm.bias");
    linear(k, "bert.encoder.embedding_hidden_mapping_in", 768, 128);
    static const char *const attn[4] = {"query", "key", "value", "dense"};
    for (size_t i = 0; i < 4; i++) {
        char q[NAME_MAX_LEN];
        snprintf(q, sizeof q, "%s.attention.%s", l, attn[i]);
        linear(k, q, 768, 768);
    }
    ADD(k, 1, SHAPE(768), "%s.attention.LayerNorm.weight", l);
    ADD(k, 1, SHAPE(768), "%s.attention.LayerNorm.bias", l);
    char q[NAME_MAX_LEN];
    snprintf(q, sizeof q, "%s.ffn", l);
    linear(k, q, 2048, 768);
    snprintf(q, sizeof q, "%s.ffn_output", l);
    linear(k, q, 768, 2048);
    ADD(k, 1, SHAPE(768), "%s.full_layer_layer_norm.weight", l);
    ADD(k, 1, SHAPE(768), "%s.full_layer_layer_norm.bias", l);
    linear(k, "bert.pooler", 768, 768);
    linear(k, "bert_encoder", 512, 768);
}

/* ProsodyPredictor: DurationEncoder (3 x BiLSTM + AdaLayerNorm), duration LSTM and head, shared
 * LSTM, F0 and N branches (3 AdainResBlk1d each), F0/N projections. */
static void predictor(key_list *k)
{
    char q[NAME_MAX_LEN];
    for (size_t i = 0; i < 3; i++) {
        snprintf(q, sizeof q, "predictor.text_encoder.lstms.%zu", 2 * i);
        lstm(k, q, HIDDEN + STYLE);
        snprintf(q, sizeof q, "predictor.text_encoder.lstms.%zu.fc", 2 * i + 1);
        linear(k, q, 2 * HIDDEN, STYLE);
    }
    lstm(k, "predictor.lstm", HIDDEN + STYLE);
    linear(k, "predictor.duration_proj.linear_layer", 50, HIDDEN);
    lstm(k, "predictor.shared", HIDDEN + STYLE);
    static const char *const branches[2] = {"F0", "N"};
    for (size_t b = 0; b < 2; b++) {
        snprintf(q, sizeof q, "predictor.%s.0", branches[b]);
        adain_resblk1d(k, q, HIDDEN, HIDDEN, 0);
        snprintf(q, sizeof q, "predictor.%s.1", branches[b]);
        adain_resblk1d(k, q, HIDDEN, HIDDEN / 2, 1);
        snprintf(q, sizeof q, "predictor.%s.2", branches[b]);
        adain_resblk1d(k, q, HIDDEN / 2, HIDDEN / 2, 0);
    }
    for (size_t b = 0; b < 2; b++) {
        ADD(k, 3, SHAPE(1, HIDDEN / 2, 1), "predictor.%s_proj.weight", branches[b]);
        ADD(k, 1, SHAPE(1), "predictor.%s_proj.bias", branches[b]);
    }
}

/* TextEncoder: embedding, 3 x (weight-normed Conv1d k5, channel LayerNorm gamma/beta), BiLSTM. */
static void text_encoder(key_list *k)
{
    char q[NAME_MAX_LEN];
    ADD(k, 2, SHAPE(178, HIDDEN), "text_encoder.embedding.weight");
    for (size_t i = 0; i < 3; i++) {
        snprintf(q, sizeof q, "text_encoder.cnn.%zu.0", i);
        wn_conv(k, q, HIDDEN, HIDDEN, 5, 1);
        ADD(k, 1, SHAPE(HIDDEN), "text_encoder.cnn.%zu.1.gamma", i);
        ADD(k, 1, SHAPE(HIDDEN), "text_encoder.cnn.%zu.1.beta", i);
    }
    lstm(k, "text_encoder.lstm", HIDDEN);
}

/* Decoder: encode, 4 decode blocks, F0/N convs, asr_res; the iSTFTNet generator (harmonic source
 * linear, noise convs and their residual blocks, two upsamples, 6 AdaINResBlock1, conv_post). */
static void decoder(key_list *k)
{
    char q[NAME_MAX_LEN];
    adain_resblk1d(k, "decoder.encode", HIDDEN + 2, 1024, 0);
    for (size_t i = 0; i < 4; i++) {
        snprintf(q, sizeof q, "decoder.decode.%zu", i);
        adain_resblk1d(k, q, 1024 + 2 + 64, i < 3 ? 1024 : 512, i == 3);
    }
    wn_conv(k, "decoder.F0_conv", 1, 1, 3, 1);
    wn_conv(k, "decoder.N_conv", 1, 1, 3, 1);
    wn_conv(k, "decoder.asr_res.0", 64, 512, 1, 1);
    linear(k, "decoder.generator.m_source.l_linear", 1, 9);
    ADD(k, 3, SHAPE(256, 22, 12), "decoder.generator.noise_convs.0.weight");
    ADD(k, 1, SHAPE(256), "decoder.generator.noise_convs.0.bias");
    ADD(k, 3, SHAPE(128, 22, 1), "decoder.generator.noise_convs.1.weight");
    ADD(k, 1, SHAPE(128), "decoder.generator.noise_convs.1.bias");
    adain_resblock1(k, "decoder.generator.noise_res.0", 256, 7);
    adain_resblock1(k, "decoder.generator.noise_res.1", 128, 11);
    wn_transpose(k, "decoder.generator.ups.0", 512, 256, 20, 1);
    wn_transpose(k, "decoder.generator.ups.1", 256, 128, 12, 1);
    static const size_t kernels[3] = {3, 7, 11};
    for (size_t i = 0; i < 6; i++) {
        snprintf(q, sizeof q, "decoder.generator.resblocks.%zu", i);
        adain_resblock1(k, q, i < 3 ? 256 : 128, kernels[i % 3]);
    }
    wn_conv(k, "decoder.generator.conv_post", 22, 128, 7, 1);
}

int ck_kokoro_weight_specs(ck_weight_spec **specs, size_t *n, const char *const *groups,
                           ck_error *err)
{
    if (specs == NULL || n == NULL) {
        return ck_fail(err, CK_E_ARG, "kokoro layout: null out");
    }
    *specs = NULL;
    *n = 0;
    key_list k = {.groups = groups};
    bert(&k);
    predictor(&k);
    text_encoder(&k);
    decoder(&k);
    /* one block: the specs, then their names */
    ck_weight_spec *out = k.oom ? NULL : malloc(k.n * (sizeof *out + NAME_MAX_LEN) + 1);
    if (out == NULL) {
        free(k.specs);
        free(k.names);
        return ck_fail(err, CK_E_MEMORY, "kokoro layout: out of memory");
    }
    char (*names)[NAME_MAX_LEN] = (void *)(out + k.n);
    memcpy(names, k.names, k.n * sizeof *names);
    for (size_t i = 0; i < k.n; i++) {
        out[i] = k.specs[i];
        out[i].name = names[i];
    }
    free(k.specs);
    free(k.names);
    *specs = out;
    *n = k.n;
    return CK_OK;
}
