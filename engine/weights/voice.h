/* voice.h - Kokoro voice packs: the style vectors a voice gives each utterance, loaded from Kokoro's
 * two file forms or the shipped packs by name, mixed, checked, and hashed for provenance.
 *
 * A pack is float32 [510, 1, 256] (kokoro/pipeline.py load_single_voice: torch.load of voices/V.pt;
 * kokoro.js ships the same numbers raw as voices/V.bin). Row r is the style for a chunk of r + 1
 * phonemes (pipeline.py: ref_s = pack[len(ps) - 1]); of its 256 values the first 128 condition the
 * decoder and the last 128 the prosody predictor (model.py: s = ref_s[:, 128:], decoder ref_s[:, :128];
 * SYNTHESIS.md section 3). kokoro.js picks the row the same way from its token count, but counts
 * the ids it feeds, which differs from Python's phoneme-string length where a symbol is dropped by
 * the vocabulary; ckbatch follows the Python pipeline. */
#ifndef CK_VOICE_H
#define CK_VOICE_H

#include <stddef.h>

#include "ck_error.h"

#define CK_VOICE_ROWS 510            /* one style per chunk length 1..510 phonemes */
#define CK_VOICE_DIM 256             /* decoder half [0, 128) + predictor half [128, 256) */
#define CK_VOICE_HALF 128
#define CK_VOICE_BYTES ((size_t)CK_VOICE_ROWS * CK_VOICE_DIM * 4) /* 522,240: a raw .bin pack */
#define CK_VOICE_DEFAULT "af_heart"  /* Kokoro's default voice (KPipeline examples, kokoro.js) */
#define CK_VOICE_MAX_PARTS 16        /* voices in one mix */
#define CK_VOICE_SYNTHETIC "synthetic" /* the synthetic pack: stream "voice.synthetic" of the demo
                                        * weights' generator, seed 20261129 (docs/synthetic-weights.md) */

/* A loaded (possibly mixed) voice. */
typedef struct {
    float pack[CK_VOICE_ROWS * CK_VOICE_DIM]; /* [510, 256] row-major, every value finite */
    unsigned char sha256[32];                 /* of pack as 522,240 little-endian f32 bytes */
    char spec[512];                           /* the spec as resolved: "af_bella:2,af_sky:1"
                                               * (a longer one cut with "...") */
} ck_voice;

/* Loads the voice `spec` names: one part, or parts joined by ',' each optionally weighted as
 * "PART:W" (W a positive finite decimal, default 1). Several parts are mixed as the weighted mean
 * sum(w_i pack_i) / sum(w_i), per element in double, rounded to f32 once; "a,b" is Kokoro's plain
 * mean (pipeline.py load_voice: torch.mean(torch.stack(packs), dim=0), which sums in f32, so a mix
 * can differ from Kokoro's in the last bit). A part is a file when it contains '/' or ends in
 * ".bin" or ".pt": a raw pack of exactly CK_VOICE_BYTES (float32 little-endian) or a torch.save file
 * holding one tensor of 510 x 256 elements ([510, 1, 256] or [510, 256]; F32, F16 or BF16, read by
 * the restricted unpickler of pth.h, never running code), told apart by content. Otherwise it is a
 * name ([a-z0-9_]+) of a shipped pack, voices_dir/NAME.bin (voices_dir NULL: ck_voice_default_dir()),
 * or CK_VOICE_SYNTHETIC, the synthetic pack the speech capture uses with the synthetic weights.
 * Errors: CK_E_ARG (null; empty spec or part; more than CK_VOICE_MAX_PARTS parts; a bad weight; a
 * name with other characters), CK_E_IO (a file or shipped name that cannot be opened: the message
 * lists the shipped names), CK_E_FORMAT (a .bin of another size, a .pt that is not one tensor of
 * that shape or dtype; the message gives both sizes), CK_E_NONFINITE (a NaN or Inf: the message
 * names the part, row and column), CK_E_MEMORY. On error *out is NULL. */
int ck_voice_load(ck_voice **out, const char *spec, const char *voices_dir, ck_error *err);

/* The pack row for a chunk of `phonemes` phonemes: phonemes - 1, clamped to [0, 509]. */
size_t ck_voice_row(size_t phonemes);

/* Style vector [256] for a chunk of `phonemes` phonemes (row ck_voice_row(phonemes)); NULL for a
 * NULL voice. */
const float *ck_voice_style(const ck_voice *v, size_t phonemes);

/* Directory of the shipped packs: the installed share/ckbatch/voices when it holds the default
 * voice, else the source tree's data/voices. */
const char *ck_voice_default_dir(void);

/* Frees; accepts NULL. */
void ck_voice_free(ck_voice *v);

#endif
