/* kokoro_config.c - config.json -> vocabulary + dims (cJSON), and the dims check against the
 * circuit; must not read the corpus or the weights' values. */
#include "kokoro_config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "json.h"
#include "sha256.h"
#include "utf8.h"

/* An integer field in [min, max], or its default when absent and `dflt` is nonzero. */
static int size_field(const ck_kokoro_config *c, const cJSON *obj, const char *prefix,
                      const char *key, size_t min, size_t max, size_t dflt, size_t *out,
                      ck_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (item == NULL && dflt != 0) {
        *out = dflt;
        return CK_OK;
    }
    if (item == NULL) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"%s%s\" missing", c->path, prefix, key);
    }
    if (!ck_json_size(item, min, max, out)) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"%s%s\": expected an integer %zu..%zu",
                       c->path, prefix, key, min, max);
    }
    return CK_OK;
}

/* A vocab key as messages show it: its first 16 bytes up to a code point boundary when they are
 * strict UTF-8 without control characters, else "?". */
static void shown_symbol(const char *s, char out[24])
{
    size_t len = strlen(s), pos = 0, keep = 0;
    uint32_t cp = 0;
    while (pos < len && pos < 16 && ck_utf8_next(s, len, &pos, &cp) == CK_OK && cp >= 0x20 &&
           cp != 0x7F) {
        keep = pos;
    }
    if (keep == 0 || (keep < len && pos < 16)) {
        snprintf(out, 24, "?");
        return;
    }
    memcpy(out, s, keep);
    snprintf(out + keep, 24 - keep, "%s", keep < len ? "..." : "");
}

/* "vocab": symbol -> id, each through ck_vocab_add (its message, prefixed with the symbol). */
static int parse_vocab(ck_kokoro_config *c, const cJSON *vocab, ck_error *err)
{
    if (!cJSON_IsObject(vocab)) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"vocab\": %s", c->path,
                       vocab == NULL ? "missing" : "expected an object of symbol -> id");
    }
    if (vocab->child == NULL) {
        return ck_fail(err, CK_E_FORMAT, "%s: field \"vocab\": no symbols", c->path);
    }
    int rc = ck_vocab_new(&c->vocab, c->n_token, err);
    for (const cJSON *item = vocab->child; rc == CK_OK && item != NULL; item = item->next) {
        size_t v = 0;
        ck_error why = {CK_OK, ""};
        if (!ck_json_size(item, 0, c->n_token - 1, &v)) {
            ck_fail(&why, CK_E_ARG, "expected an integer id 1..%zu (0 is the boundary)",
                    c->n_token - 1);
        } else {
            (void)ck_vocab_add(c->vocab, item->string, (int)v, &why);
        }
        if (why.code != CK_OK) {
            char shown[24];
            shown_symbol(item->string, shown);
            rc = ck_fail(err, CK_E_FORMAT, "%s: vocab \"%s\": %s", c->path, shown, why.message);
        }
    }
    return rc;
}

static int parse_root(ck_kokoro_config *c, const cJSON *root, ck_error *err)
{
    if (!cJSON_IsObject(root)) {
        return ck_fail(err, CK_E_FORMAT, "%s: expected a JSON object (Kokoro's config.json)",
                       c->path);
    }
    const cJSON *plbert = cJSON_GetObjectItemCaseSensitive(root, "plbert");
    int rc = size_field(c, root, "", "n_token", 2, CK_VOCAB_MAX_SIZE, 0, &c->n_token, err);
    if (rc == CK_OK) rc = size_field(c, root, "", "hidden_dim", 1, 1u << 30, 0, &c->hidden_dim, err);
    if (rc == CK_OK && !cJSON_IsObject(plbert)) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: field \"plbert\": %s", c->path,
                     plbert == NULL ? "missing" : "expected an object");
    }
    /* transformers AlbertConfig defaults for the fields a plbert object leaves out */
    const size_t big = 1u << 30;
    if (rc == CK_OK) rc = size_field(c, plbert, "plbert.", "hidden_size", 1, big, 4096, &c->hidden_size, err);
    if (rc == CK_OK) rc = size_field(c, plbert, "plbert.", "num_attention_heads", 1, big, 64, &c->num_attention_heads, err);
    if (rc == CK_OK) rc = size_field(c, plbert, "plbert.", "intermediate_size", 1, big, 16384, &c->intermediate_size, err);
    if (rc == CK_OK) rc = size_field(c, plbert, "plbert.", "max_position_embeddings", 1, big, 512, &c->max_position_embeddings, err);
    if (rc == CK_OK) rc = size_field(c, plbert, "plbert.", "num_hidden_layers", 1, big, 12, &c->num_hidden_layers, err);
    if (rc == CK_OK) rc = size_field(c, plbert, "plbert.", "embedding_size", 1, big, 128, &c->embedding_size, err);
    return rc == CK_OK ? parse_vocab(c, cJSON_GetObjectItemCaseSensitive(root, "vocab"), err) : rc;
}

int ck_kokoro_config_parse(ck_kokoro_config *c, const char *json, size_t length,
                           const char *origin, ck_error *err)
{
    if (c == NULL || json == NULL || origin == NULL) {
        return ck_fail(err, CK_E_ARG, "ck_kokoro_config_parse: null config, text or origin");
    }
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", origin);
    unsigned char digest[32];
    if (ck_sha256(json, length, digest) != CK_OK) {
        return ck_fail(err, CK_E_BACKEND, "%s: SHA-256 failed", c->path);
    }
    ck_sha256_hex(digest, c->sha256);
    const char *why = NULL;
    size_t at = 0;
    cJSON *root = ck_json_parse(json, length, &at, &why);
    int rc = CK_OK;
    if (root == NULL) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: %s at byte %zu (line %zu)", c->path, why, at,
                     ck_json_line(json, at));
    } else {
        rc = parse_root(c, root, err);
    }
    cJSON_Delete(root);
    if (rc != CK_OK) {
        ck_kokoro_config_free(c);
    }
    return rc;
}

int ck_kokoro_config_load(ck_kokoro_config *c, const char *path, ck_error *err)
{
    if (c == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "ck_kokoro_config_load: null config or path");
    }
    memset(c, 0, sizeof *c);
    char *text = NULL;
    size_t size = 0;
    int rc = ck_file_read_all(path, "config.json", CK_KOKORO_CONFIG_FILE_MAX, &text, &size, err);
    if (rc == CK_OK) {
        rc = ck_kokoro_config_parse(c, text, size, path, err);
    }
    free(text);
    return rc;
}

void ck_kokoro_config_free(ck_kokoro_config *c)
{
    if (c != NULL) {
        ck_vocab_free(c->vocab);
        memset(c, 0, sizeof *c);
    }
}

void ck_model_dims_of_circuit(const ck_circuit *circ, ck_model_dims *d)
{
    memset(d, 0, sizeof *d);
    for (size_t i = 0; i < circ->n_ops; i++) {
        const ck_op *op = &circ->ops[i];
        if (op->kind == CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM && d->word_rows == 0) {
            d->word_rows = circ->weights[op->weights[0]].shape[0];
            d->embedding_size = circ->weights[op->weights[0]].shape[1];
        } else if (op->kind == CK_OP_ATTENTION) {
            d->heads = op->heads;
            d->hidden_size = op->heads * op->head_dim;
            d->layers++;
        } else if (op->kind == CK_OP_GELU_NEW) {
            d->intermediate_size = circ->buffers[op->output].cols;
        }
    }
    d->max_positions = circ->max_positions;
    d->output_dim = circ->features_buffer >= 0 ? circ->buffers[circ->features_buffer].cols : 0;
}

int ck_kokoro_config_check(const ck_kokoro_config *c, const ck_model_dims *d, ck_error *err)
{
    if (c == NULL || d == NULL) {
        return ck_fail(err, CK_E_ARG, "ck_kokoro_config_check: null config or dims");
    }
    const struct {
        const char *field;
        size_t config, weights;
    } checks[] = {
        {"n_token", c->n_token, d->word_rows},
        {"plbert.embedding_size", c->embedding_size, d->embedding_size},
        {"plbert.hidden_size", c->hidden_size, d->hidden_size},
        {"plbert.num_attention_heads", c->num_attention_heads, d->heads},
        {"plbert.intermediate_size", c->intermediate_size, d->intermediate_size},
        {"plbert.max_position_embeddings", c->max_position_embeddings, d->max_positions},
        {"plbert.num_hidden_layers", c->num_hidden_layers, d->layers},
        {"hidden_dim", c->hidden_dim, d->output_dim},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (checks[i].weights != 0 && checks[i].config != checks[i].weights) {
            return ck_fail(err, CK_E_WEIGHTS, "%s: %s %zu does not match the weights (%zu)",
                           c->path, checks[i].field, checks[i].config, checks[i].weights);
        }
    }
    return CK_OK;
}
