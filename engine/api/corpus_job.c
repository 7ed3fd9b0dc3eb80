/* corpus_job.c - what a whole corpus run (corpus_run.c) and a ckbatch-mpi rank (corpus_rank.c)
 * share so both write the same bytes: the options identity, the metadata entries and the reader
 * options of a run (corpus_job.h). */
#include "corpus_job.h"

#include <stdio.h>
#include <string.h>

const char *ck_corpus_layer_name(ck_layer layer)
{
    switch (layer) {
    case CK_LAYER_FEATURES: return "features";
    case CK_LAYER_HIDDEN: return "hidden";
    case CK_LAYER_PROSODY: return "prosody";
    default: return "?";
    }
}

/* Every option that changes the output bytes, for the resume identity (--config by its file's
 * SHA-256, so an edited config.json under the same name counts). --threads and
 * --max-batch-tokens change no bit of the features (docs/parity.md, "Invariance"; tested), so a
 * resumed run may use others; --parity runs unfused kernels, whose bits differ, so it counts. */
void ck_corpus_options_identity(const ck_corpus_params *o, const ck_model *m, char *buf,
                                size_t cap)
{
    static const char *const formats[] = {"phonemes", "ids", "text"};
    /* a config's vocab changes the ids; without one the string is what it always was */
    char config[80] = "";
    if (m->has_config) {
        snprintf(config, sizeof config, " config=sha256:%s", m->config.sha256);
    }
    /* the misaki G2P changes the ids of text: a run resumes only under the same front end (the
     * espeak path keeps the string it always had) */
    char g2p[600] = "";
    if (o->format == CK_INPUT_TEXT && (o->g2p == NULL || strcmp(o->g2p, "misaki") == 0)) {
        snprintf(g2p, sizeof g2p, " g2p=misaki lexicons=%.500s",
                 o->lexicon_dir != NULL ? o->lexicon_dir : "shipped");
    }
    snprintf(buf, cap, "format=%s lang=%s strict_symbols=%d on_error=%s layer=%s parity=%d%s "
             "circuit=%s%s", formats[o->format], o->lang, o->strict_symbols,
             o->skip_bad_lines ? "skip" : "stop", ck_corpus_layer_name(o->layer),
             m->parity, config, m->circuit_path ? m->circuit_path : "embedded", g2p);
    /* bf16 changes the bits; fp32 leaves the string as it always was (older records resume) */
    if (m->params.precision != CK_PRECISION_FP32) {
        size_t used = strlen(buf);
        snprintf(buf + used, cap - used, " precision=%s", ck_model_precision(m));
    }
}

int ck_corpus_meta_each(const ck_corpus_params *opt, const ck_model *m, const ck_reader *reader,
                        int is_stdin, ck_corpus_meta_fn put, void *ctx, ck_error *err)
{
    const char *g2p = ck_reader_g2p_version(reader);
    char engine[64];
    snprintf(engine, sizeof engine, "ckbatch %s", CK_VERSION);
    int rc = put(ctx, "format", "ckbatch.features.v2", err);
    if (rc == CK_OK) rc = put(ctx, "engine", engine, err);
    if (rc == CK_OK) rc = put(ctx, "layer", ck_corpus_layer_name(opt->layer), err);
    if (rc == CK_OK) rc = put(ctx, "circuit", m->circuit.name, err);
    if (rc == CK_OK) rc = put(ctx, "weights", ck_weights_identity(m->weights), err);
    if (rc == CK_OK) rc = put(ctx, "source", is_stdin ? "<stdin>" : opt->input, err);
    if (rc == CK_OK && g2p != NULL) rc = put(ctx, "g2p", g2p, err);
    /* fp32 files keep today's bytes: no precision key means fp32 (docs/precision.md) */
    if (rc == CK_OK && m->params.precision != CK_PRECISION_FP32) {
        rc = put(ctx, "precision", ck_model_precision(m), err);
        if (rc == CK_OK) rc = put(ctx, "dispatch", m->dispatch, err);
    }
    /* interpreted files keep today's bytes: no backend key means the interpreter */
    if (rc == CK_OK && m->library.table != NULL) {
        rc = put(ctx, "backend", "generated", err);
        if (rc == CK_OK) rc = put(ctx, "library", m->library.path, err);
        if (rc == CK_OK) rc = put(ctx, "library_sha256", m->library.sha256, err);
        if (rc == CK_OK) rc = put(ctx, "library_key", m->library.key, err);
    }
    const char *key = NULL, *value = NULL;
    for (size_t i = 0; rc == CK_OK && ck_reader_g2p_meta(reader, i, &key, &value); i++) {
        rc = put(ctx, key, value, err);
    }
    if (rc == CK_OK && m->has_config) {
        char config[80];
        snprintf(config, sizeof config, "sha256:%s", m->config.sha256);
        rc = put(ctx, "config", config, err);
    }
    return rc;
}

ck_reader_options ck_corpus_reader_options(const ck_corpus_params *opt, const ck_model *m,
                                           void (*warn)(void *, const char *), void *warn_ctx)
{
    /* the longest sequence is the position table (boundaries included): a circuit with fewer
     * than 512 positions chunks (or, for ids, rejects) its lines shorter, as a line error */
    return (ck_reader_options){.format = opt->format,
                               .lang = opt->lang,
                               .strict_symbols = opt->strict_symbols,
                               .max_phonemes = ck_model_max_phonemes(m),
                               .warn = warn,
                               .warn_ctx = warn_ctx,
                               .vocab = m->has_config ? m->config.vocab : NULL,
                               .id_rows = m->dims.word_rows,
                               .g2p = opt->g2p,
                               .lexicon_dir = opt->lexicon_dir};
}
