/* output.h - the features file: rows and per-sequence records appended in input order to durable
 * journals beside the output, then one safetensors file written to a temporary name and renamed when
 * complete. Nothing is visible at the final path before that. Knows no model and no corpus format.
 *
 * The final file (S sequences, T tokens). Every tensor's bytes are copied from its journal, so neither
 * memory nor the header grows with S or with the number of skipped lines:
 *   ROWS       F32 [T,cols]  rows of every sequence in input order; ROWS is the name given to
 *                            ck_output_open: "features" [T,512] or "hidden" [T,768]
 *   offsets    I64 [S+1]     sequence s is rows offsets[s] .. offsets[s+1]; offsets[0] 0, offsets[S] T
 *   sequences  U8 [bytes]    JSON Lines (UTF-8, one object per line, each ending in "\n"): line s is
 *                            {"line":L,"chunk":c,"chunks":n,"tokens":t,"phonemes":"..."} of sequence s
 * A durations output (ck_output_set_durations, layer prosody) instead holds ROWS = "durations" I32
 * [T] (frames per token), and after offsets frame_offsets I64 [S+1] (sequence s is frames
 * frame_offsets[s] .. frame_offsets[s+1], the running sum of its durations, computed from the
 * journals when the file is written); its records add "frames":F and "words":[{"phonemes":"...",
 * "start":s,"end":e}, ...] (seconds; null where Kokoro gives no time) (ck_output_append_timed).
 * When the circuit gives F0 and N (ck_output_set_durations with curves), f0 and n F32 [2F] follow
 * frame_offsets (F the total frames; sequence s is values 2 frame_offsets[s] .. 2 frame_offsets[s+1]
 * of each, appended with its record by ck_output_append_timed).
 *   skipped    U8 [bytes]    JSON Lines: {"line":L,"error":"..."} per skipped input line, in line order
 *   __metadata__             the ck_output_meta entries, "sequences_format":"jsonl",
 *                            "skipped_format":"jsonl"
 *
 * Partial state (all beside PATH, removed when the final file is in place):
 *   PATH.partial          the bytes of ROWS (f32 little-endian), appended
 *   PATH.partial.seqs     the bytes of "sequences", appended
 *   PATH.partial.skipped  the bytes of "skipped", appended
 *   PATH.partial.offsets  the bytes of "offsets" (i64 little-endian, starting with 0), appended
 *   PATH.partial.f0, .n   the bytes of "f0" and "n" (f32 little-endian), appended; empty for an
 *                         output without curves
 *   PATH.partial.lock     held (flock) by the one run writing PATH; a second run is refused
 *   PATH.partial.json     progress record (bounded: sizes, not contents), replaced atomically
 *                         (temp + fsync + rename) at each commit: {"version":5, "identity":{...},
 *                         "cols", "sequences", "tokens", "next_line", "next_chunk",
 *                         "chunked_lines_before", "dropped_symbols_before", "rows_bytes",
 *                         "seqs_bytes", "skipped_bytes", "offsets_bytes", "f0_bytes", "n_bytes",
 *                         "rows_sha256", "seqs_sha256", "skipped_sha256", "offsets_sha256",
 *                         "f0_sha256", "n_sha256", "record_sha256" (of the record printed
 *                         without this field: an edited mark is refused)}. A record of another
 *                         version (4: no f0/n journals) is refused: start again without resume.
 * Only what a record names is committed: a resumed run truncates every journal to its recorded size
 * and checks the SHA-256 of what is left (a same-length edit of a committed byte is refused).
 * An unresumable output (stdin) writes the journals but never a record. */
#ifndef CK_OUTPUT_H
#define CK_OUTPUT_H

#include <stddef.h>

#include "ck_error.h"

typedef struct ck_output ck_output;

/* The run's identity: a resumed run must match every field. Strings are not copied by open. */
typedef struct {
    const char *input_sha256;   /* 64 hex of the input file, "" for stdin */
    size_t input_bytes;
    const char *options;        /* every option that changes the bytes, e.g. "format=ids ..." */
    const char *weights;        /* ck_weights_identity */
} ck_output_identity;

/* Where the next sequence to append lies in the input: line (1-based) and chunk (0-based). A fresh
 * run starts at {1, 0}; a resumed one at the record's mark, and sequences before it are dropped.
 * chunked_lines and dropped_symbols are the caller's counts over the lines before `line`: kept in
 * the record and given back on resume, so a run that does not re-read those lines can still report
 * totals (0 for a fresh run). */
typedef struct {
    size_t line, chunk;
    size_t chunked_lines, dropped_symbols;
} ck_output_mark;

/* How ck_output_open treats partial state beside the output. */
typedef enum {
    CK_OUTPUT_FRESH = 0,       /* truncate any earlier partial state */
    CK_OUTPUT_RESUME = 1,      /* continue from PATH.partial.json; none there: as FRESH */
    CK_OUTPUT_UNRESUMABLE = 2  /* as FRESH, but commits write no record (an input read once, e.g.
                                  stdin): nothing left behind looks resumable */
} ck_output_mode;

/* Creates (FRESH, UNRESUMABLE) or reopens (RESUME) the partial files beside `path`. rows_name: the
 * rows tensor's name in the final file, "features" or "hidden" (not copied: it must outlive the
 * output). cols: values per token (512, or 768 for the hidden state). On resume the record is validated against `id` and
 * cols, every journal is truncated to its committed size and checked against the record (sequence
 * count, token total, then the SHA-256 of each journal's committed bytes; read in fixed-size pieces,
 * never whole), and *mark is set to the record's mark. RESUME without a record (ENOENT: never
 * committed, or finished) opens fresh, replacing any journals left; ck_output_resumed says which.
 * Errors: CK_E_ARG (resume: the record's identity differs; the message names the field), CK_E_IO
 * (create/open; a record that exists but cannot be read), CK_E_FORMAT (record or journal
 * unreadable, inconsistent with the record or changed since the commit; names the field or the
 * file), CK_E_MEMORY, CK_E_BACKEND (SHA-256). On error *out is NULL. */
int ck_output_open(ck_output **out, const char *path, const char *rows_name, size_t cols,
                   const ck_output_identity *id, ck_output_mode mode, ck_output_mark *mark,
                   ck_error *err);

/* 1 when ck_output_open continued from a progress record, 0 when it started fresh. */
int ck_output_resumed(const ck_output *o);

/* 1 when ck_output_open, asked for CK_OUTPUT_FRESH, found an interrupted run's progress record
 * (which it then replaced): the caller says so, since --resume would have continued it. */
int ck_output_replaced_record(const ck_output *o);

/* Skipped lines recorded so far: those of the resumed record plus this run's ck_output_skip. */
size_t ck_output_skipped(const ck_output *o);

/* Writes rows [tokens, cols] f32 into the rows journal `ahead` rows past the rows appended so far,
 * for sequences appended later with rows NULL: a caller that computes sequences out of input order
 * writes each where it will lie, and holds no rows in memory. Not durable until the sequences are
 * appended and committed (a resumed run truncates what no record names).
 * rows are cols 4-byte values per token: f32, or int32 for a durations output.
 * Errors: CK_E_ARG (rows NULL), CK_E_IO (write failed, e.g. disk full). */
int ck_output_put_rows(ck_output *o, size_t ahead, const void *rows, size_t tokens, ck_error *err);

/* Appends one sequence: rows [tokens, cols] f32 (or NULL: rows already written by
 * ck_output_put_rows), its offset, and its "sequences" record (source line, chunk index, chunks of
 * that line, phoneme string). Not durable until ck_output_commit.
 * Errors: CK_E_ARG (rows NULL but not all its rows were put), CK_E_IO (write failed, e.g. disk
 * full), CK_E_MEMORY. */
int ck_output_append(ck_output *o, const float *rows, size_t tokens, size_t line, size_t chunk,
                     size_t chunks, const char *phonemes, ck_error *err);

/* Makes o a durations output (see the top of this file): its rows are int32 frames per token,
 * one per token (cols must be 1), written as I32 [T] with frame_offsets beside offsets; with
 * curves 1 also f0 and n F32 [2F] (2 values per frame). Call it right after ck_output_open,
 * before anything is appended (a resumed output included: the journals are the same bytes either
 * way). Errors: CK_E_ARG (cols not 1). */
int ck_output_set_durations(ck_output *o, int curves, ck_error *err);

/* One word of a durations output's record: bytes [start_byte, start_byte + bytes) of the
 * sequence's phoneme string, and its times (has_time 0: none, written as null). */
typedef struct {
    size_t start_byte, bytes;
    int has_time;
    double start, end;  /* seconds */
} ck_output_word;

/* ck_output_append with rows NULL (put before) for a durations output: the record also holds
 * "frames" (the sum of the sequence's durations) and "words" (words[n_words], their phonemes cut
 * from `phonemes`); an output with curves appends f0[2 frames] and n[2 frames] (f32, the
 * sequence's F0 and N curves; ignored, may be NULL, without curves). Errors: as ck_output_append;
 * CK_E_ARG (not a durations output, a word outside the phoneme string, f0 or n NULL with curves
 * and frames > 0). */
int ck_output_append_timed(ck_output *o, size_t tokens, size_t line, size_t chunk, size_t chunks,
                           const char *phonemes, unsigned long long frames,
                           const ck_output_word *words, size_t n_words, const float *f0,
                           const float *n, ck_error *err);

/* Records a skipped line and why (a line of the "skipped" tensor). Call it in line order, before the
 * commit whose mark passes the line. Not durable until ck_output_commit.
 * Errors: CK_E_IO (write failed), CK_E_MEMORY. */
int ck_output_skip(ck_output *o, size_t line, const char *why, ck_error *err);

/* The "sequences" record of one sequence and the "skipped" record of one line, byte for byte as
 * the final file holds them: one JSON object and its "\n", malloc'd; NULL when out of memory. For
 * a writer that places the records itself (the ranks of ck_rank_*, engine/api/corpus_rank.c). */
char *ck_output_sequence_line(size_t line, size_t chunk, size_t chunks, size_t tokens,
                              const char *phonemes);
/* The record of a durations output's sequence (see ck_output_append_timed); NULL when out of memory
 * or a word lies outside the phoneme string. */
char *ck_output_timed_line(size_t line, size_t chunk, size_t chunks, size_t tokens,
                           const char *phonemes, unsigned long long frames,
                           const ck_output_word *words, size_t n_words);
char *ck_output_skip_line(size_t line, const char *why);

/* Sets a string metadata entry (weights identity, g2p version, ...); the value is copied.
 * Errors: CK_E_ARG (more than 24 entries), CK_E_MEMORY. */
int ck_output_meta(ck_output *o, const char *key, const char *value, ck_error *err);

/* Makes everything appended so far durable: flushes and fsyncs every journal, extends each
 * journal's running SHA-256 over its newly committed bytes (read back once: rows were placed out of
 * order), then replaces the record (temp + fsync + rename) with `next` as the mark. An UNRESUMABLE
 * output only checks `next` and counts the commit. Errors: CK_E_ARG (a skipped line at or after
 * next.line: a resumed run would list it twice), CK_E_IO (names the file), CK_E_MEMORY,
 * CK_E_BACKEND. */
int ck_output_commit(ck_output *o, ck_output_mark next, ck_error *err);

/* Writes the final file atomically and removes the partial state. Errors: CK_E_IO, CK_E_MEMORY,
 * CK_E_FORMAT (an output with curves whose f0 or n journal is not 2 values per frame);
 * on error no file at path changes and the partial state of the last commit stays. */
int ck_output_finish(ck_output *o, ck_error *err);

/* Removes the partial files (a run that can never be resumed, e.g. a bad line under stop). */
void ck_output_discard(ck_output *o);

/* Sequences and tokens appended so far; commits made by this run. */
size_t ck_output_sequences(const ck_output *o);
size_t ck_output_tokens(const ck_output *o);
size_t ck_output_commits(const ck_output *o);

/* Closes the files and releases the output (the partial files stay); accepts NULL. */
void ck_output_free(ck_output *o);

#endif
