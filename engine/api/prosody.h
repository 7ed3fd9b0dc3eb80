/* prosody.h - what layer prosody adds to a corpus run (engine/api only): the run's voice and speed
 * as per-sequence executor inputs, and Kokoro's word timestamps from a sequence's durations.
 * Computes no tensor and writes no file. */
#ifndef CK_PROSODY_H
#define CK_PROSODY_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"
#include "output.h"
#include "reader.h"
#include "voice.h"

#define CK_PROSODY_FRAMES_PER_SECOND 40 /* 24 kHz / 600 samples per frame (SYNTHESIS.md §1) */
#define CK_PROSODY_STYLE_COLS CK_VOICE_HALF /* the predictor half of a voice row */

/* Splits phonemes (UTF-8, the sequence's phoneme string, one token per code point) at spaces into
 * words (ck_output_word: a run of non-space code points, its start and end in seconds) and times
 * them from durations[n] (frames per token, n = the sequence's tokens, BOS and EOS included), as kokoro/pipeline.py join_timestamps (pipeline.py:294-330; SYNTHESIS.md §1.0) does
 * with misaki's tokens: counted in half frames (divisor 2 x 40 frames/s = 80); the clock starts at
 * 2 max(0, durations[0] - 3); a word of k code points takes the k durations after its first token
 * (i, starting at 1 past BOS), and the space after it (a word followed by ' ') is split, half of its
 * frames to the word's end and half to the next word's start:
 *     start = left; left = right + 2 sum(d[i..i+k)) + d_space; end = left; right = left + d_space;
 *     i += k (+ 1 for the space).
 * A space with no word before it (leading, or a second one) is read as a misaki token with
 * whitespace and no phonemes, which Kokoro (pipeline.py:314-320) treats so: i += 1; left = right +
 * d[i]; right = left + d[i]; i += 1. A word whose tokens run past the durations (i >= n - 1, or
 * i + k >= n) and every word after it get has_time 0; n < 3 times no word. Words go to
 * words[cap] in order; *count gets how many the string holds (may exceed cap: only cap are
 * written). Errors: CK_E_ARG (null phonemes, durations with n > 0, or count). */
int ck_prosody_words(const char *phonemes, const int32_t *durations, size_t n,
                     ck_output_word *words, size_t cap, size_t *count, ck_error *err);

/* Code points of the UTF-8 string s: Python's len() of the phoneme string, which picks the voice
 * row (ck_voice_row). */
size_t ck_prosody_code_points(const char *s);

/* The style of a sequence whose phoneme string is `phonemes` into style[CK_PROSODY_STYLE_COLS]:
 * row ck_voice_row(code points of phonemes) of v, its predictor half. */
void ck_prosody_style(const ck_voice *v, const char *phonemes, float *style);

/* Loads the voice spec (NULL: ck_model_default_voice(m)) after checking speed (finite, > 0):
 * CK_E_ARG for a bad speed, else ck_voice_load's errors. */
int ck_prosody_open_voice(const ck_model *m, const char *spec, double speed, ck_voice **out,
                          ck_error *err);

#endif
