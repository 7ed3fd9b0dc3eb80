/* wav.h - a streaming WAV writer for mono audio: samples are appended as they are made (nothing
 * holds the whole signal), the RIFF sizes are patched when the file is closed, and the file appears
 * at its path only then (a temporary file beside it, published with ck_file_publish). Knows no model.
 *
 * The file, little-endian throughout (Microsoft's RIFF/WAVE layout, as ffmpeg, libsndfile/soundfile
 * and scipy write it):
 *   "RIFF" u32 (file bytes - 8) "WAVE"
 *   "fmt " u32 16 | 18   u16 format (1 PCM, 3 IEEE float), u16 channels 1, u32 rate,
 *                        u32 bytes per second (rate x block), u16 block (2 | 4), u16 bits (16 | 32),
 *                        and for float u16 cbSize 0 (an 18-byte fmt: a non-PCM format carries it)
 *   "fact" u32 4 u32 frames                       float only (a non-PCM format carries a fact chunk)
 *   "LIST" u32 size "INFO" { id u32 len text NUL [pad to even] }...   only when info is given
 *   "data" u32 (frames x block) samples
 * s16 samples are the floats x 32768, rounded to nearest (ties to even), clipped to
 * [-32768, 32767]; each clipped sample is counted (a full-scale +1.0 is 32768, so it clips to 32767
 * and counts). f32 samples are the floats' own bits. Python's `wave` reads the s16 form (it reads
 * PCM only); ffmpeg and soundfile read both. */
#ifndef CK_WAV_H
#define CK_WAV_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"

#define CK_WAV_KOKORO_RATE 24000 /* Kokoro's sample rate, Hz */

typedef enum {
    CK_WAV_S16 = 1, /* WAVE_FORMAT_PCM, 16-bit signed */
    CK_WAV_F32 = 3  /* WAVE_FORMAT_IEEE_FLOAT, 32-bit */
} ck_wav_format;

/* One LIST/INFO entry: a four-character id of A-Z, 0-9 or space (RIFF's INFO ids: "ISFT" software,
 * "ICMT" comment, "INAM" title, ...; ffmpeg reads any id as a tag) and its text (UTF-8, no NUL;
 * written NUL-terminated and padded to an even length). */
typedef struct {
    const char *id;
    const char *text;
} ck_wav_info;

typedef struct ck_wav ck_wav;

/* Creates PATH.tmp.<pid> and writes the header with zero sizes: mono, `rate` Hz (1 .. 2^31 / 4),
 * format s16 or f32, and a LIST/INFO chunk of info[n_info] when n_info > 0 (the caller gives the
 * strings: weights identity, voice, speed, seed, engine version, precision, ...). Nothing is at
 * path until ck_wav_close. Errors: CK_E_ARG (null out or path, a format that is neither, rate out of
 * range, null info with n_info > 0, an id not 4 of A-Z 0-9 space, a null text; the message names
 * the entry), CK_E_SIZE (the INFO chunk over 1 MiB), CK_E_MEMORY, CK_E_IO (the temporary file).
 * On error nothing is left open or on disk and *out is NULL. */
int ck_wav_open(ck_wav **out, const char *path, ck_wav_format format, uint32_t rate,
                const ck_wav_info *info, size_t n_info, ck_error *err);

/* ck_wav_open writing under the fixed name `partial` (e.g. "OUT.wav.partial") instead of
 * PATH.tmp.<pid>, so that a run killed while writing leaves a file ck_wav_resume continues; NULL
 * partial: ck_wav_open itself. An existing file at partial is replaced; the caller keeps one writer
 * per partial name. Errors and cleanup: as ck_wav_open. */
int ck_wav_open_partial(ck_wav **out, const char *path, const char *partial, ck_wav_format format,
                        uint32_t rate, const ck_wav_info *info, size_t n_info, ck_error *err);

/* Continues the file at `partial` that ck_wav_open_partial began for path with the same format,
 * rate and info: its header must be the one these give (the RIFF, fact and data sizes aside, which
 * a close may have patched) and it must hold at least `frames` frames after it; it is cut back to
 * the header and those frames (samples appended after them, e.g. by a run killed mid-append, are
 * dropped) and appends continue there. ck_wav_frames then counts from `frames`; ck_wav_clipped
 * counts only this writer's appends (the caller keeps the earlier count). Errors: CK_E_ARG (null
 * out, path or partial; as ck_wav_open), CK_E_IO (partial cannot be opened, read or cut: missing
 * included), CK_E_FORMAT (partial shorter than its header or than `frames` frames, a header that
 * differs, frames past RIFF's 4 GiB: the message names partial), CK_E_MEMORY. On error *out is
 * NULL and partial is left as it was. */
int ck_wav_resume(ck_wav **out, const char *path, const char *partial, ck_wav_format format,
                  uint32_t rate, const ck_wav_info *info, size_t n_info, uint64_t frames,
                  ck_error *err);

/* Appends samples[n] (f32, nominal range [-1, 1]) converted to the file's format; *clipped (when not
 * NULL) gets the number of these n that were clipped (always 0 for f32). Errors: CK_E_ARG (null w,
 * null samples with n > 0, w already failed), CK_E_NONFINITE (a NaN or Inf sample: the message gives
 * its index in this call; nothing of this call is written), CK_E_SIZE (the data would pass RIFF's
 * 4 GiB: about 24.8 h of s16 or 12.4 h of f32 at 24 kHz; checked before any sample is read),
 * CK_E_IO (a write failed). CK_E_NONFINITE and CK_E_SIZE write nothing and leave the writer usable;
 * after CK_E_IO it only accepts ck_wav_abort, or a close that fails and removes the temporary file. */
int ck_wav_append(ck_wav *w, const float *samples, size_t n, uint64_t *clipped, ck_error *err);

/* The header of a finished file of `frames` frames (the bytes ck_wav_close leaves before the
 * samples: RIFF, fact and data sizes set) into *out (malloc'd, *bytes long), for a writer that puts
 * the samples in place itself (ckbatch-mpi speak). Errors: as ck_wav_open's checks (CK_E_ARG,
 * CK_E_SIZE), CK_E_SIZE (frames past RIFF's 4 GiB), CK_E_MEMORY; *out NULL on error. */
int ck_wav_header(ck_wav_format format, uint32_t rate, const ck_wav_info *info, size_t n_info,
                  uint64_t frames, unsigned char **out, size_t *bytes, ck_error *err);

/* samples[n] as ck_wav_append writes them into out[n x block] (2 bytes s16, 4 f32); *clipped gets
 * the clipped count. Errors: CK_E_ARG (a format that is neither, null samples or out with n > 0,
 * null clipped), CK_E_NONFINITE (a NaN or Inf sample, named; out then unspecified). */
int ck_wav_encode(ck_wav_format format, const float *samples, size_t n, unsigned char *out,
                  uint64_t *clipped, ck_error *err);

/* Frames (samples) appended so far and clipped samples so far; 0 for NULL. */
uint64_t ck_wav_frames(const ck_wav *w);
uint64_t ck_wav_clipped(const ck_wav *w);

/* Patches the RIFF, fact and data sizes, then flushes, fsyncs and publishes the file onto its path
 * (ck_atomic_commit: rename, then the directory fsynced). Frees w either way; on any error (or when
 * an append had failed) the temporary file is removed and the path is left as it was.
 * Errors: CK_E_ARG (null w), CK_E_IO (an append's write had failed, or the patch, fsync or rename
 * fails). */
int ck_wav_close(ck_wav *w, ck_error *err);

/* Flushes the samples appended so far and fdatasyncs the temporary file: they survive a kill or a
 * power cut from here on (the header's sizes stay zero until close). Errors: CK_E_ARG (null w, an
 * append had failed), CK_E_IO (after which w only accepts abort, keep, or a failing close). */
int ck_wav_sync(ck_wav *w, ck_error *err);

/* Closes w leaving its temporary file where it is (what ck_wav_resume continues; unsynced appends
 * may or may not be in it); frees w; the path is left as it was. Accepts NULL. */
void ck_wav_keep(ck_wav *w);

/* Removes the temporary file and frees w; the path is left as it was. Accepts NULL. */
void ck_wav_abort(ck_wav *w);

/* Joins the WAVs paths[0..n), each written by this writer with equal headers apart from their
 * sizes (format, rate, LIST/INFO: a file split into parts), into one at `output`: paths[0]'s
 * header with the RIFF, fact and data sizes of the whole, then every part's samples in order.
 * expect[n] (may be NULL): the frames each part must hold. Checks every part before anything is
 * written; written under a temporary name and published when complete. Errors: CK_E_ARG (null,
 * n 0), CK_E_IO, CK_E_FORMAT (not a RIFF/WAVE file with a fmt and a data chunk, sizes that
 * disagree with the file's, a header that differs from paths[0]'s, frames other than expected:
 * the message names the path), CK_E_SIZE (the whole would pass RIFF's 4 GiB), CK_E_MEMORY. */
int ck_wav_join(const char *output, const char *const *paths, size_t n, const uint64_t *expect,
                ck_error *err);

/* The s16 sample of x: x x 32768 rounded to nearest, ties to even, clipped to [-32768, 32767];
 * *clipped set to 1 when it was clipped, else 0. x must be finite. */
int16_t ck_wav_s16(float x, int *clipped);

#endif
