/* speak_internal.h - what ck_model_speak_file (speak_file.c) shares with the in-place ranks of
 * `ckbatch-mpi speak` (speak_rank.c): the run's identity, the lines of its input and the sidecar's
 * records, so both write the same bytes. Private to engine/api. */
#ifndef CK_SPEAK_INTERNAL_H
#define CK_SPEAK_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "ckbatch.h"

#define SPEAK_VOICE_ROW "clamp(phonemes-1,0,509)" /* ck_voice_row: Kokoro's pack[len(ps) - 1] */

/* What the files were made with, the same in every WAV (LIST/INFO ICMT) and in the sidecar's first
 * record: weights, the voice spec as resolved and the SHA-256 of the [510, 256] f32 pack actually
 * used (a mix after mixing), the row rule, speed, seed, noise scale, precision, sample format and
 * the input's SHA-256. */
typedef struct {
    char comment[2048];
    char *settings; /* the sidecar's first record: one JSON object, no '\n' (malloc'd) */
} ck_speak_identity;

/* The identity of a run of model m with params p over the input text[bytes] (its SHA-256 taken
 * here). Errors: ck_prosody_open_voice's (CK_E_ARG, the voice's), CK_E_BACKEND, CK_E_MEMORY. */
int ck_speak_identity_make(const ck_model *m, const ck_speak_params *p, const char *text,
                           size_t bytes, ck_speak_identity *id, ck_error *err);

/* Splits text into lines in place (a final line without '\n' counted, a trailing '\r' dropped):
 * malloc'd [*n] pointers into text; NULL when out of memory. */
char **ck_speak_split_lines(char *text, size_t *n);

/* A line's sidecar record, '\n' included: {"line":N,"start_sample":S,"end_sample":E,...} for one
 * .wav (file NULL; start = the line's first sample in it), {"line":N,"file":"NNNNNN.wav",...} for a
 * directory; words from l (their phonemes from seqs). */
void ck_speak_line_record(FILE *f, const ck_sequence_set *seqs, const ck_speech_line *l,
                          const char *file, uint64_t start);

/* The record of a line without audio, {"line":N,"error":TEXT}, '\n' included. */
void ck_speak_error_record(FILE *f, size_t line, const char *text);

#endif
