/* xray_internal.h - one case of a capture file (inputs and stored rows), shared by xray_files.c and
 * xray_run.c. Not a public API. */
#ifndef CK_XRAY_INTERNAL_H
#define CK_XRAY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "safetensors.h"
#include "xray.h"

/* A case's inputs, copied out of the mapping (its data may be unaligned). */
typedef struct {
    char name[CK_XRAY_CASE_MAX];
    size_t n_seqs, tokens, n_rows;
    size_t *offsets;            /* [n_seqs + 1] */
    int32_t *ids;               /* [tokens] */
    size_t *rows;               /* [n_rows] packed token indices, ascending */
    size_t *row_seq, *row_token; /* [n_rows] sequence of each stored row, position inside it */
} ck_xray_case;

/* Loads and checks <name>.offsets/.rows/.ids of f. Errors: CK_E_FORMAT (missing, wrong dtype or
 * shape, offsets not ascending from 0, rows not ascending below T; message names file and tensor),
 * CK_E_MEMORY, CK_E_ARG (name too long). */
int ck_xray_case_load(ck_xray_case *xc, const ck_st_file *f, const char *path, const char *name,
                      ck_error *err);

/* Frees the arrays; accepts a zeroed case. */
void ck_xray_case_free(ck_xray_case *xc);

/* Name of case i (the i-th tensor whose name ends in ".rows") into out, 0 when there is none. */
int ck_xray_case_name(const ck_st_file *f, size_t i, char out[CK_XRAY_CASE_MAX]);

/* Compares one checkpoint of a case: oracle and candidate tensors (either may be NULL: NOT_TESTED). */
int ck_xray_compare_tensors(const ck_xray_case *xc, const char *checkpoint,
                            const ck_st_tensor *cand, const ck_st_tensor *oracle,
                            const ck_xray_profile *profile, ck_xray_report *rep, ck_error *err);

/* One case of a speech capture (tools/kokoro_reference.py: <case>.ids, .pred_dur, .ref_s, .speed,
 * .noise, then its stages), its inputs copied out of the mapping. A case without <case>.noise is
 * token-side (--capture-edges: token side, alignment and F0/N only): it runs without the
 * generator's noise and without the fed run. */
typedef struct {
    char name[CK_XRAY_CASE_MAX];
    size_t tokens, frames;      /* T, and F = the sum of pred_dur */
    int32_t *ids;               /* [T] [0, *phoneme ids, 0] */
    int32_t *dur;               /* [T] pred_dur, forced downstream of the duration head */
    float style[256];           /* ref_s: [decoder half | predictor half] */
    float speed;
    float *noise;               /* [600F, 9] the generator's source noise (randn_like); NULL: a
                                   token-side case */
    size_t channel_stride;      /* k >= 1: a strided stage stores channels 0, k, 2k, ... only (the
                                   manifest's cases.<case>.channel_stride; 1 without one) */
    uint64_t strided;           /* bit i: stage i of xray_speech.c's table is stored strided (the
                                   manifest's cases.<case>.strided) */
} ck_xray_speech_case;

/* Cases of a speech capture: tensors named <case>.pred_dur (0: not a speech capture). */
size_t ck_xray_speech_count(const ck_st_file *f);

/* Loads every case of a speech capture, in file order, into a new *out[*n]; manifest (a cJSON *
 * from ck_xray_verify_fixture, may be NULL) gives each case's channel_stride and strided stages:
 * {"cases": {"<case>": {"channel_stride": k, "strided": {"<case>.<stage>": "rows" | "columns"}}}},
 * "rows" for a stage the capture stores channel-major ([C/k, T or F]: d_en, t_en, en, asr,
 * f0n_shared), "columns" for a token-major one ([T, C/k]: d, dur_lstm). Errors: CK_E_FORMAT (no
 * case; ids not I32 [T], pred_dur not I64 [T] of values >= 1, ref_s not 256 values, speed not 1,
 * noise present but not [600F, 9]; a channel_stride that is not an integer >= 1, a strided key that
 * names no stage or the wrong axis; message names the file and tensor or key), CK_E_MEMORY. */
int ck_xray_speech_load(ck_xray_speech_case **out, size_t *n, const ck_st_file *f,
                        const void *manifest, const char *path, ck_error *err);

/* 1 when no case of cases[n] holds noise (a token-side capture: its run needs no decoder or
 * generator, so the prosody circuit); 0 otherwise or for n 0. */
int ck_xray_speech_token_side(const ck_xray_speech_case *cases, size_t n);

/* Frees cases[n]; accepts NULL. */
void ck_xray_speech_free(ck_xray_speech_case *cases, size_t n);

/* Runs each case alone on the lent speech circuit (interpreted, one thread) with its style, speed,
 * forced durations and noise, then again fed the capture's F0 and dec.decode.3 (the stages named
 * fed.*), and adds one row per stage (xray_speech.c's table, in run order) to rep: pass or fail
 * under the profile's "<case>.<stage>" budget, else "<stage>"'s, else its base; NOT_TESTED where
 * the capture holds no such tensor for the case. A token-side case (noise NULL) runs once, to the
 * f0 output, without noise (a circuit without an audio output, the prosody circuit, gets the
 * predictor half of ref_s as its style, 128 wide, as ck_model_prosody gives it); its decoder,
 * generator and audio rows are NOT_TESTED saying why. A strided stage is compared on the channels
 * the capture stores (the row's channel_stride). Errors: CK_E_ARG (a circuit without the
 * durations, f0 and n outputs, or, for a case with noise, the audio output or the decode.3
 * checkpoint), CK_E_FORMAT (the capture's F0 or dec.decode.3 of another size), CK_E_MEMORY, those
 * of the executor's run. */
int ck_xray_speech_run(const ck_xray_speech_case *cases, size_t n, const ck_st_file *oracle,
                       const char *oracle_path, const ck_xray_engine *e,
                       const ck_xray_profile *profile, ck_xray_report *rep, ck_error *err);

#endif
