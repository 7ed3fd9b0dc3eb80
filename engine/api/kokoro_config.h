/* kokoro_config.h - a Kokoro release's config.json (the file shipped beside its .pth): its
 * vocabulary and the dims the phoneme encoder depends on, read with cJSON and checked against the
 * loaded circuit and weights before anything runs. Reads the one file; knows no corpus. */
#ifndef CK_KOKORO_CONFIG_H
#define CK_KOKORO_CONFIG_H

#include <stddef.h>

#include "ck_error.h"
#include "circuit.h"
#include "vocab.h"

#define CK_KOKORO_CONFIG_FILE_MAX (16u << 20) /* bytes; Kokoro's config.json is about 4 KB */

/* The fields ckbatch uses. plbert fields absent from the file take transformers' AlbertConfig
 * defaults, as Kokoro's KModel builds AlbertConfig(vocab_size=n_token, **plbert):
 * hidden_size 4096, num_attention_heads 64, intermediate_size 16384, max_position_embeddings 512,
 * num_hidden_layers 12, embedding_size 128. Other fields (istftnet, style_dim, ...) are ignored. */
typedef struct {
    char path[256];                 /* where it was read from, for messages */
    char sha256[65];                /* of the file's bytes, lowercase hex */
    ck_vocab *vocab;                /* "vocab" (symbol -> id), n_token ids; owned */
    size_t n_token;                 /* rows of the word-embedding table */
    size_t hidden_size;             /* plbert.hidden_size: ALBERT width C */
    size_t num_attention_heads;     /* plbert.num_attention_heads: H */
    size_t intermediate_size;       /* plbert.intermediate_size: FFN width F */
    size_t max_position_embeddings; /* plbert.max_position_embeddings: P */
    size_t num_hidden_layers;       /* plbert.num_hidden_layers: layer applications */
    size_t embedding_size;          /* plbert.embedding_size: E */
    size_t hidden_dim;              /* "hidden_dim": bert_encoder output width O (the features) */
} ck_kokoro_config;

/* What the loaded circuit (whose weight shapes the executor has matched against the weights)
 * says for each config field; 0 where the circuit has no such part (that field is not checked). */
typedef struct {
    size_t word_rows;       /* rows of the word-embedding table (the embedding op's word weight) */
    size_t embedding_size;  /* its columns */
    size_t hidden_size;     /* heads x head_dim of the attention ops */
    size_t heads;           /* heads of the attention ops */
    size_t intermediate_size; /* columns of the gelu_new op's output */
    size_t max_positions;   /* rows of the position table */
    size_t layers;          /* attention ops (the repeat block unrolled) */
    size_t output_dim;      /* columns of the "features" output */
} ck_model_dims;

/* Reads and validates config.json at `path`, hashing its bytes. Required: "vocab" (object of
 * symbol -> integer id; symbol and id rules of ck_vocab_add, ids in 1..n_token-1, at least one),
 * "n_token" (2..CK_VOCAB_MAX_SIZE), "plbert" (object; its fields above, when present, integers
 * >= 1) and "hidden_dim" (integer >= 1). On error *c is zeroed and err names the file and the
 * field, e.g. "config.json: vocab \"ab\": symbol is 2 code points, expected one",
 * "config.json: field \"n_token\": expected an integer 2..32768", "config.json: JSON syntax error
 * at byte 17 (line 2)". Errors: CK_E_ARG (null), CK_E_IO (cannot open or read), CK_E_FORMAT
 * (syntax, a missing or invalid field), CK_E_MEMORY, CK_E_BACKEND (hashing). Free with
 * ck_kokoro_config_free. */
int ck_kokoro_config_load(ck_kokoro_config *c, const char *path, ck_error *err);

/* Same from JSON text in memory; `origin` names it in messages; sha256 is of those bytes. */
int ck_kokoro_config_parse(ck_kokoro_config *c, const char *json, size_t length,
                           const char *origin, ck_error *err);

/* Frees the vocabulary and zeroes *c; accepts NULL and a zeroed config. */
void ck_kokoro_config_free(ck_kokoro_config *c);

/* The dims of circuit `circ` that config fields describe (see ck_model_dims). */
void ck_model_dims_of_circuit(const ck_circuit *circ, ck_model_dims *d);

/* Checks every config field against d (fields whose d value is 0 are skipped), in the order
 * n_token, plbert.embedding_size, plbert.hidden_size, plbert.num_attention_heads,
 * plbert.intermediate_size, plbert.max_position_embeddings, plbert.num_hidden_layers, hidden_dim.
 * Errors: CK_E_ARG (null), CK_E_WEIGHTS for the first mismatch, e.g. "config.json:
 * plbert.hidden_size 1024 does not match the weights (768)". */
int ck_kokoro_config_check(const ck_kokoro_config *c, const ck_model_dims *d, ck_error *err);

#endif
