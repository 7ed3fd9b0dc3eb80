/* speak_file.c - ck_model_speak_file: a corpus file -> WAV file(s) and a JSON-lines sidecar of
 * sample ranges and word times (`ckbatch speak`, docs/speak.md). Reads and writes files; computes
 * through ck_model_speak. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ck_log.h"
#include "file.h"
#include "model_internal.h"
#include "prosody.h"
#include "sha256.h"
#include "speak_internal.h"
#include "speak_shard.h"
#include "wav.h"

#define SPEAK_MAX_INPUT ((size_t)1 << 30)

/* Directory output's journal, OUT/timestamps.jsonl.partial: the settings record, then each line's
 * record in the order they were made, flushed and fdatasynced after the line's WAV was published
 * (so a record names a complete file), what `resume` continues from; the sidecar itself is
 * written in line order at the end, and the journal removed. */
typedef struct {
    FILE *f;           /* open while the run writes */
    char *path;
    char **rec;        /* [n_lines] each recorded line's record, its '\n' included */
} speak_journal;

typedef struct {
    const ck_speak_params *p;
    const ck_sequence_set *seqs;
    ck_wav_info info[2];
    int one_file;
    ck_wav *wav;               /* one_file: the open file */
    ck_atomic_file side;       /* the sidecar (directory: opened at the end) */
    char *side_path;
    speak_journal j;           /* directory: as above; one file: see onewav_journal_add */
    char *buf;                 /* the record being made, and its length */
    size_t buf_len;
    size_t next_line;          /* lines before it are recorded */
    size_t n_lines;
    size_t lo, hi;             /* [lo, hi): the lines this run records (a shard's, else all) */
    char *wav_path;            /* one_file: the WAV (output, or its shard name) */
    char **why;                /* [n_lines] skip_bad_lines: the reader's message for a bad line */
    ck_speak_summary *sum;
    struct timespec t0;        /* when the call started */
    double last_progress;      /* seconds since t0 of the last progress call */
    /* one file: OUT.wav.partial, the WAV being written (published as OUT by the final rename) */
    char *wav_partial;
    uint64_t line_clipped;     /* one file: s16 samples clipped in the line being recorded */
    int resumed;               /* one file, resume: 1 when an earlier run's journal is continued */
    uint64_t resumed_frames;   /* ... the frames of the lines it recorded */
    size_t journal_keep;       /* ... the bytes of its journal up to its last whole record */
} speak_ctx;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* The progress callback, at most once per progress_interval (always when final). */
static void report(speak_ctx *c, int final)
{
    const ck_speak_params *p = c->p;
    double now = seconds_since(&c->t0);
    if (p->progress == NULL || (!final && now - c->last_progress < p->progress_interval)) {
        return;
    }
    c->last_progress = now;
    double audio = (double)c->sum->samples / CK_SPEECH_SAMPLE_RATE;
    ck_speak_progress g = {c->n_lines, c->next_line, audio, now, audio > 0 ? now / audio : 0.0,
                           final};
    p->progress(p->progress_ctx, &g);
}

/* text as a JSON string (UTF-8 kept; ", \ and controls escaped). */
static void json_str(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

static void json_time(FILE *f, double t)
{
    if (isnan(t)) {
        fputs("null", f);
    } else {
        fprintf(f, "%.6f", t);
    }
}

void ck_speak_error_record(FILE *f, size_t line, const char *text)
{
    fprintf(f, "{\"line\":%zu,\"error\":", line);
    json_str(f, text, strlen(text));
    fputs("}\n", f);
}

void ck_speak_line_record(FILE *f, const ck_sequence_set *seqs, const ck_speech_line *l,
                          const char *file, uint64_t start)
{
    fprintf(f, "{\"line\":%zu,", l->line);
    if (file == NULL) {
        fprintf(f, "\"start_sample\":%llu,\"end_sample\":%llu,", (unsigned long long)start,
                (unsigned long long)(start + l->samples));
    } else {
        fprintf(f, "\"file\":\"%s\",", file);
    }
    fprintf(f, "\"samples\":%zu,\"chunks\":%zu,\"words\":[", l->samples, l->chunks);
    for (size_t ch = 0; ch < l->chunks; ch++) {
        const char *ph = seqs->phonemes[l->first_sequence + ch];
        for (size_t w = l->chunk_words[ch]; w < l->chunk_words[ch + 1]; w++) {
            fputs(w ? "," : "", f);
            fputs("{\"phonemes\":", f);
            json_str(f, ph + l->words[w].byte, l->words[w].bytes);
            fputs(",\"start\":", f);
            json_time(f, l->words[w].start);
            fputs(",\"end\":", f);
            json_time(f, l->words[w].end);
            fputc('}', f);
        }
    }
    fputs("]}\n", f);
}

/* A record is made in a buffer, then kept in rec[line] and journaled (record_end). */
static FILE *record_begin(speak_ctx *c)
{
    c->buf = NULL;
    return open_memstream(&c->buf, &c->buf_len);
}

static int onewav_journal_add(speak_ctx *c, size_t line, ck_error *err);

/* The record made since record_begin goes to rec[line] and the journal, durably. */
static int record_end(speak_ctx *c, FILE *f, size_t line, ck_error *err)
{
    if (fclose(f) != 0 || c->buf == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    free(c->j.rec[line]);
    c->j.rec[line] = c->buf;
    c->buf = NULL;
    if (c->one_file) {
        return onewav_journal_add(c, line, err);
    }
    int ok = fputs(c->j.rec[line], c->j.f) >= 0 && fflush(c->j.f) == 0
             && fdatasync(fileno(c->j.f)) == 0;
    return ok ? CK_OK : ck_file_io_failed(c->j.path, "writing", err);
}

/* A record an earlier run left (resume), counted as what it records. */
static void count_resumed(speak_ctx *c, const char *rec)
{
    if (strstr(rec, ",\"file\":\"") != NULL || strstr(rec, ",\"start_sample\":") != NULL) {
        c->sum->lines_resumed++;
    } else if (strstr(rec, ",\"error\":\"no phonemes\"}") != NULL) {
        c->sum->lines_skipped++;
    } else {
        c->sum->lines_failed++;
    }
}

/* Records the lines before `upto` that gave no sequence: done by an earlier run (resume), a bad
 * line (skip_bad_lines) or one without phonemes: a record, no audio. */
static int record_skipped(speak_ctx *c, size_t upto, ck_error *err)
{
    int rc = CK_OK;
    while (rc == CK_OK && c->next_line < upto) {
        size_t line = c->next_line++;
        if (c->j.rec != NULL && c->j.rec[line] != NULL) {
            count_resumed(c, c->j.rec[line]);
            report(c, 0);
            continue;
        }
        if (line < c->lo || line >= c->hi) { /* another shard's */
            continue;
        }
        const char *why = c->why != NULL ? c->why[line] : NULL;
        const char *text = why != NULL ? why : "no phonemes";
        FILE *f = record_begin(c);
        if (f == NULL) {
            return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
        }
        ck_speak_error_record(f, line, text);
        c->line_clipped = 0;
        rc = record_end(c, f, line, err);
        c->sum->lines_failed += why != NULL;
        c->sum->lines_skipped += why == NULL;
        report(c, 0);
    }
    return rc;
}

/* skip_bad_lines: keeps the reader's message of a bad line for its record, and warns. */
static int on_bad_line(void *ctx, size_t line, const char *message, ck_error *err)
{
    speak_ctx *c = ctx;
    c->why[line] = strdup(message);
    ck_log(c->p->lines.log, c->p->lines.log_ctx, CK_LOG_WARNING, "skipped: %s", message);
    return c->why[line] != NULL ? CK_OK : ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
}

static int write_line(speak_ctx *c, const ck_speech_line *l, ck_error *err)
{
    int rc = record_skipped(c, l->line, err);
    if (rc != CK_OK) {
        return rc;
    }
    uint64_t start = c->one_file ? ck_wav_frames(c->wav) : 0, clipped = 0;
    char name[64] = "";
    if (c->one_file) {
        rc = ck_wav_append(c->wav, l->audio, l->samples, &clipped, err);
    } else {
        ck_wav *w = NULL;
        snprintf(name, sizeof name, "%06zu.wav", l->line);
        size_t n = strlen(c->p->output) + sizeof name + 2;
        char *path = malloc(n);
        if (path == NULL) {
            return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
        }
        snprintf(path, n, "%s/%s", c->p->output, name);
        rc = ck_wav_open(&w, path, c->p->sample_format_f32 ? CK_WAV_F32 : CK_WAV_S16,
                         CK_SPEECH_SAMPLE_RATE, c->info, 2, err);
        rc = rc == CK_OK ? ck_wav_append(w, l->audio, l->samples, &clipped, err) : rc;
        if (rc == CK_OK) {
            rc = ck_wav_close(w, err);
        } else {
            ck_wav_abort(w);
        }
        free(path);
    }
    if (rc != CK_OK) {
        return rc;
    }
    c->sum->lines++;
    c->sum->samples += l->samples;
    c->sum->clipped += clipped;
    FILE *f = record_begin(c);
    if (f == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    ck_speak_line_record(f, c->seqs, l, c->one_file ? NULL : name, start);
    c->next_line = l->line + 1;
    c->line_clipped = clipped;
    rc = record_end(c, f, l->line, err);
    report(c, 0);
    return rc;
}

static int on_line(void *user, const ck_speech_line *l, ck_error *err)
{
    return write_line(user, l, err);
}

char **ck_speak_split_lines(char *text, size_t *n)
{
    size_t cap = 1;
    for (const char *s = text; *s; s++) {
        cap += *s == '\n';
    }
    char **lines = malloc(cap * sizeof *lines);
    *n = 0;
    if (lines == NULL) {
        return NULL;
    }
    for (char *s = text; *s;) {
        char *e = strchr(s, '\n');
        char *end = e ? e : s + strlen(s);
        if (end > s && end[-1] == '\r') {
            end[-1] = '\0';
        }
        lines[(*n)++] = s;
        if (e == NULL) {
            break;
        }
        *e = '\0';
        s = e + 1;
    }
    return lines;
}

static int has_wav_suffix(const char *s)
{
    size_t n = strlen(s);
    return n >= 4 && strcmp(s + n - 4, ".wav") == 0;
}

static const char *precision_name(ck_precision p)
{
    return p == CK_PRECISION_FP32 ? "fp32" : p == CK_PRECISION_BF16 ? "bf16" : "int8";
}

int ck_speak_identity_make(const ck_model *m, const ck_speak_params *p, const char *text,
                           size_t bytes, ck_speak_identity *id, ck_error *err)
{
    ck_voice *v = NULL;
    unsigned char digest[32];
    char voice_sha[65], input_sha[65];
    int rc = ck_prosody_open_voice(m, p->speak.voice, p->speak.speed, &v, err);
    if (rc == CK_OK && ck_sha256(text, bytes, digest) != CK_OK) {
        rc = ck_fail(err, CK_E_BACKEND, "speak: SHA-256 of the input failed");
    }
    if (rc != CK_OK) {
        ck_voice_free(v);
        return rc;
    }
    ck_sha256_hex(digest, input_sha);
    ck_sha256_hex(v->sha256, voice_sha);
    const char *weights = m->synthetic_weights ? "synthetic (NOT Kokoro's: the audio is not speech)"
                          : m->params.weights ? m->params.weights : "?";
    const char *precision = precision_name(m->params.precision);
    const char *format = p->sample_format_f32 ? "f32" : "s16";
    int used = snprintf(id->comment, sizeof id->comment,
             "weights=%s voice=%s voice_sha256=%s voice_row=%s speed=%.17g seed=%llu "
             "noise_scale=%.9g precision=%s sample_rate=%d", weights, v->spec, voice_sha,
             SPEAK_VOICE_ROW, p->speak.speed, (unsigned long long)p->speak.seed,
             (double)p->speak.noise_scale, precision, CK_SPEECH_SAMPLE_RATE);
    /* beyond fp32 also the dispatch (what each op class computed in: ck_model_dispatch) */
    if (m->params.precision != CK_PRECISION_FP32 && used > 0 && (size_t)used < sizeof id->comment) {
        snprintf(id->comment + used, sizeof id->comment - (size_t)used, " dispatch=%s",
                 ck_model_dispatch(m));
    }
    size_t len = 0;
    FILE *f = open_memstream(&id->settings, &len);
    if (f == NULL) {
        ck_voice_free(v);
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    fprintf(f, "{\"settings\":true,\"engine\":\"ckbatch %s\",\"weights\":", ck_version());
    json_str(f, weights, strlen(weights));
    fputs(",\"voice\":", f);
    json_str(f, v->spec, strlen(v->spec));
    fprintf(f, ",\"voice_sha256\":\"%s\",\"voice_row\":\"%s\",\"speed\":%.17g,\"seed\":%llu,"
            "\"noise_scale\":%.9g,\"precision\":\"%s\",\"sample_rate\":%d,\"sample_format\":\"%s\","
            "\"on_error\":\"%s\",\"input_sha256\":\"%s\"}", voice_sha, SPEAK_VOICE_ROW,
            p->speak.speed, (unsigned long long)p->speak.seed, (double)p->speak.noise_scale,
            precision, CK_SPEECH_SAMPLE_RATE, format, p->skip_bad_lines ? "skip" : "stop",
            input_sha);
    ck_voice_free(v);
    return fclose(f) == 0 && id->settings != NULL
               ? CK_OK : ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
}

/* resume: the settings record differs from this run's; names the first key whose value differs. */
static int settings_differ(const char *from, const char *old, const char *now, ck_error *err)
{
    size_t i = 0, k, q;
    while (old[i] != '\0' && old[i] == now[i]) {
        i++;
    }
    for (k = i; k > 0 && !(now[k - 1] == '"' && now[k] == ':'); k--) {
    }
    for (q = k > 1 ? k - 1 : 0; q > 0 && now[q - 1] != '"'; q--) {
    }
    int len = k > q ? (int)(k - 1 - q) : 0;
    return ck_fail(err, CK_E_STATE, "%s: written with other settings: \"%.*s\" differs (the "
                   "input, weights, voice or an option changed)", from, len, now + q);
}

/* resume: one record of the earlier run. Kept (and the line not spoken again) unless it names a
 * WAV that is gone. */
static int resume_record(speak_ctx *c, const char *from, char *s, const char *nl, char **lines,
                         ck_error *err)
{
    static char empty[] = "";
    unsigned long long line = 0;
    int at = 0;
    if (sscanf(s, "{\"line\":%llu,%n", &line, &at) != 1 || at == 0 || line >= c->n_lines) {
        return ck_fail(err, CK_E_FORMAT, "%s: \"%.40s\" is not a record of a line of this input "
                       "(edited?)", from, s);
    }
    const char *file = strstr(s, ",\"file\":\"");
    if (file != NULL && file < nl) {
        size_t n = strlen(c->p->output) + 32;
        char *path = malloc(n);
        if (path == NULL) {
            return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
        }
        snprintf(path, n, "%s/%.10s", c->p->output, file + 9);
        int gone = access(path, F_OK) != 0;
        free(path);
        if (gone) {
            return CK_OK;
        }
    }
    char *rec = malloc((size_t)(nl - s) + 2);
    if (rec == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    memcpy(rec, s, (size_t)(nl - s) + 1);
    rec[nl - s + 1] = '\0';
    free(c->j.rec[line]);
    c->j.rec[line] = rec;
    lines[line] = empty; /* read as a blank line: no sequence, no warning */
    return CK_OK;
}

/* resume: reads the journal (else a finished sidecar) of an earlier run into j.rec; its settings
 * record must equal this run's. A last line without '\n' (cut by a kill) is ignored. */
static int resume_load(speak_ctx *c, const char *settings, char **lines, ck_error *err)
{
    const char *from = access(c->j.path, F_OK) == 0 ? c->j.path
                       : access(c->side_path, F_OK) == 0 ? c->side_path : NULL;
    char *text = NULL, *nl = NULL;
    int rc = from != NULL ? ck_file_read_all(from, "speak journal", SPEAK_MAX_INPUT * 4, &text,
                                             NULL, err)
                          : CK_OK;
    if (rc == CK_OK && text != NULL && (nl = strchr(text, '\n')) != NULL) {
        *nl = '\0';
        rc = strcmp(text, settings) == 0 ? CK_OK : settings_differ(from, text, settings, err);
    }
    for (char *s = nl + 1; rc == CK_OK && nl != NULL && (nl = strchr(s, '\n')) != NULL;
         s = nl + 1) {
        rc = resume_record(c, from, s, nl, lines, err);
    }
    size_t done = 0;
    for (size_t i = 0; i < c->n_lines; i++) {
        done += c->j.rec[i] != NULL;
    }
    ck_log(c->p->lines.log, c->p->lines.log_ctx, CK_LOG_INFO, "resume: %zu of %zu lines done %s",
           done, c->n_lines, from ? from : "(no earlier records in the output)");
    free(text);
    return rc;
}

/* Directory: the journal, with the settings and the records an earlier run left. */
static int journal_open(speak_ctx *c, const char *settings, ck_error *err)
{
    c->j.f = fopen(c->j.path, "wb");
    if (c->j.f == NULL) {
        return ck_fail(err, CK_E_IO, "%s: cannot create: %s", c->j.path, strerror(errno));
    }
    fprintf(c->j.f, "%s\n", settings);
    for (size_t i = 0; i < c->n_lines; i++) {
        fputs(c->j.rec[i] != NULL ? c->j.rec[i] : "", c->j.f);
    }
    return fflush(c->j.f) == 0 && fdatasync(fileno(c->j.f)) == 0
               ? CK_OK : ck_file_io_failed(c->j.path, "writing", err);
}

/* Directory, every line recorded: the sidecar in line order, then the journal removed. */
static int journal_finish(speak_ctx *c, const char *settings, ck_error *err)
{
    int rc = ck_atomic_open(&c->side, c->side_path, NULL, err);
    if (rc == CK_OK) {
        fprintf(c->side.f, "%s\n", settings);
        for (size_t i = 0; i < c->n_lines; i++) {
            fputs(c->j.rec[i] != NULL ? c->j.rec[i] : "", c->side.f); /* NULL: another shard's */
        }
        rc = ck_atomic_commit(&c->side, err);
    }
    if (rc == CK_OK) {
        fclose(c->j.f);
        c->j.f = NULL;
        unlink(c->j.path);
    }
    return rc;
}

/* A shard: its sidecar beside its WAV (one file), or its own records file in the directory; and
 * the journal's buffer sized for the sidecar's path. */
static int shard_side_path(speak_ctx *c, ck_error *err)
{
    if (c->p->shard_count > 0) {
        char *side = c->one_file ? malloc(strlen(c->wav_path) + 8)
                                 : ck_speak_shard_file(c->p, c->side_path);
        if (side == NULL) {
            return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
        }
        if (c->one_file) {
            sprintf(side, "%s.jsonl", c->wav_path);
        }
        free(c->side_path);
        c->side_path = side;
    }
    char *journal = realloc(c->j.path, strlen(c->side_path) + 16);
    if (journal == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    c->j.path = journal;
    return CK_OK;
}

/* One WAV output (OUT ending in .wav), durable and resumable like a directory's:
 *   OUT.partial        the WAV being written (ck_wav_open_partial: header with zero sizes, then
 *                      every line's samples in line order), fdatasynced after each line;
 *   OUT.jsonl.partial  the journal: the settings record, then per line, in line order and after
 *                      its samples were synced, {"line":N,"clipped":C,"end_sample":E,
 *                      "record":REC}: C the line's clipped s16 samples, E the WAV's frames after
 *                      the line, REC its sidecar record; flushed and fdatasynced.
 * The lines a journal records are always a prefix of the input and E says where their audio ends,
 * so `resume` keeps them, cuts the WAV back to E frames and the journal to its last whole record
 * (what a kill left after them, a torn tail, is dropped) and speaks the rest. At the end OUT is
 * published (sizes patched, fsync, rename), then OUT.jsonl written from the records and the journal
 * removed. A run that fails or is stopped keeps both partial files. */

/* One file: the line's samples made durable, then its record journaled (above). */
static int onewav_journal_add(speak_ctx *c, size_t line, ck_error *err)
{
    int rc = ck_wav_sync(c->wav, err);
    if (rc != CK_OK) {
        return rc;
    }
    const char *rec = c->j.rec[line];
    size_t len = strlen(rec) - 1; /* without its '\n' */
    int ok = fprintf(c->j.f, "{\"line\":%zu,\"clipped\":%llu,\"end_sample\":%llu,\"record\":",
                     line, (unsigned long long)c->line_clipped,
                     (unsigned long long)ck_wav_frames(c->wav)) > 0
             && fwrite(rec, 1, len, c->j.f) == len && fputs("}\n", c->j.f) >= 0
             && fflush(c->j.f) == 0 && fdatasync(fileno(c->j.f)) == 0;
    return ok ? CK_OK : ck_file_io_failed(c->j.path, "writing", err);
}

/* One file, resume: one whole journal line s[.. nl) of the line `want`, its record kept (rec) and
 * its counts taken. CK_E_FORMAT when it is not the record of that line (edited?). */
static int onewav_resume_record(speak_ctx *c, const char *from, char *s, const char *nl,
                                size_t want, uint64_t *frames, ck_error *err)
{
    unsigned long long line = 0, clipped = 0, end = 0;
    int at = 0;
    char head[64];
    snprintf(head, sizeof head, "{\"line\":%zu,", want);
    if (sscanf(s, "{\"line\":%llu,\"clipped\":%llu,\"end_sample\":%llu,\"record\":%n", &line,
               &clipped, &end, &at) != 3 || at == 0 || line != want || want >= c->hi
        || end < *frames || nl - s < at + 2 || nl[-1] != '}'
        || strncmp(s + at, head, strlen(head)) != 0) {
        return ck_fail(err, CK_E_FORMAT, "%s: \"%.40s\" is not the record of line %zu of this "
                       "input (edited?)", from, s, want);
    }
    size_t len = (size_t)(nl - 1 - (s + at)); /* the record, without the wrapper's '}' */
    char *rec = malloc(len + 2);
    if (rec == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    memcpy(rec, s + at, len);
    memcpy(rec + len, "\n", 2);
    free(c->j.rec[want]);
    c->j.rec[want] = rec;
    c->sum->clipped_resumed += clipped;
    *frames = end;
    return CK_OK;
}

/* One file, resume: reads the journal an earlier run left, when it and OUT.partial are there (else
 * every line is spoken, logged); its settings record must equal this run's. Its whole records are
 * kept (those lines read as blank: not spoken again); a last line without '\n' is dropped. */
static int onewav_resume_load(speak_ctx *c, const char *settings, char **lines, ck_error *err)
{
    static char empty[] = "";
    const char *from = c->j.path;
    if (access(from, F_OK) != 0 || access(c->wav_partial, F_OK) != 0) {
        ck_log(c->p->lines.log, c->p->lines.log_ctx, CK_LOG_INFO, "resume: no journal %s and WAV "
               "%s of an earlier run: every line is spoken (%s is replaced when the run "
               "completes)", from, c->wav_partial, c->wav_path);
        return CK_OK;
    }
    char *text = NULL, *nl = NULL;
    int rc = ck_file_read_all(from, "speak journal", SPEAK_MAX_INPUT * 4, &text, NULL, err);
    if (rc == CK_OK && (nl = strchr(text, '\n')) != NULL) {
        *nl = '\0';
        rc = strcmp(text, settings) == 0 ? CK_OK : settings_differ(from, text, settings, err);
        c->resumed = rc == CK_OK;
        c->journal_keep = (size_t)(nl + 1 - text);
    }
    size_t done = c->lo; /* a shard's records start at its first line */
    uint64_t frames = 0;
    for (char *s = nl + 1; rc == CK_OK && nl != NULL && (nl = strchr(s, '\n')) != NULL;
         s = nl + 1) {
        rc = onewav_resume_record(c, from, s, nl, done, &frames, err);
        if (rc == CK_OK) {
            lines[done++] = empty; /* read as a blank line: no sequence, no warning */
            c->journal_keep = (size_t)(nl + 1 - text);
        }
    }
    c->resumed_frames = frames;
    if (rc == CK_OK) {
        ck_log(c->p->lines.log, c->p->lines.log_ctx, CK_LOG_INFO, "resume: %zu of %zu lines done "
               "(%llu samples) %s", done - c->lo, c->hi - c->lo, (unsigned long long)frames, from);
    }
    free(text);
    return rc;
}

/* One file: OUT.partial and the journal, new, or continued from where the earlier run's last
 * whole record ends (resume). */
static int onewav_create(speak_ctx *c, const ck_speak_identity *id, ck_error *err)
{
    const ck_speak_params *p = c->p;
    ck_wav_format format = p->sample_format_f32 ? CK_WAV_F32 : CK_WAV_S16;
    if (!c->resumed) {
        int rc = ck_wav_open_partial(&c->wav, c->wav_path, c->wav_partial, format,
                                     CK_SPEECH_SAMPLE_RATE, c->info, 2, err);
        return rc == CK_OK ? journal_open(c, id->settings, err) : rc;
    }
    int rc = ck_wav_resume(&c->wav, c->wav_path, c->wav_partial, format, CK_SPEECH_SAMPLE_RATE,
                           c->info, 2, c->resumed_frames, err);
    if (rc != CK_OK) {
        return rc;
    }
    c->j.f = fopen(c->j.path, "r+b");
    if (c->j.f == NULL) {
        return ck_fail(err, CK_E_IO, "%s: cannot open: %s", c->j.path, strerror(errno));
    }
    int ok = ftruncate(fileno(c->j.f), (off_t)c->journal_keep) == 0
             && fseek(c->j.f, 0, SEEK_END) == 0 && fdatasync(fileno(c->j.f)) == 0;
    return ok ? CK_OK : ck_file_io_failed(c->j.path, "cutting back", err);
}

/* The outputs' paths, and in directory mode the records (resumed ones read) and the directory. */
static int open_outputs(speak_ctx *c, const ck_speak_identity *id, char **lines, ck_error *err)
{
    const ck_speak_params *p = c->p;
    int rc;
    size_t n = strlen(p->output) + 32;
    c->side_path = malloc(n);
    c->j.path = malloc(n);
    c->j.rec = calloc(c->n_lines + 1, sizeof *c->j.rec);
    c->wav_path = ck_speak_shard_file(p, p->output);
    c->wav_partial = c->one_file && c->wav_path != NULL ? ck_file_suffixed(c->wav_path, ".partial")
                                                        : NULL;
    if (c->side_path == NULL || c->j.path == NULL || c->j.rec == NULL || c->wav_path == NULL
        || (c->one_file && c->wav_partial == NULL)) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    snprintf(c->side_path, n, c->one_file ? "%s.jsonl" : "%s/timestamps.jsonl", p->output);
    rc = shard_side_path(c, err);
    if (rc != CK_OK) {
        return rc;
    }
    snprintf(c->j.path, strlen(c->side_path) + 16, "%s.partial", c->side_path);
    if (p->resume && c->one_file) {
        return onewav_resume_load(c, id->settings, lines, err);
    }
    return p->resume ? resume_load(c, id->settings, lines, err) : CK_OK;
}

/* Makes the directory or the single WAV, and the sidecar or the journal: after every check. */
static int create_outputs(speak_ctx *c, const ck_speak_identity *id, ck_error *err)
{
    const ck_speak_params *p = c->p;
    if (c->one_file) {
        return onewav_create(c, id, err);
    }
    if (mkdir(p->output, 0777) != 0 && errno != EEXIST) {
        return ck_fail(err, CK_E_IO, "%s: cannot create the output directory: %s", p->output,
                       strerror(errno));
    }
    return journal_open(c, id->settings, err);
}

/* Completes the files (CK_OK so far), or keeps what resume continues (a directory's journal and
 * WAVs, one file's OUT.partial and journal). */
static int close_outputs(speak_ctx *c, const ck_speak_identity *id, int rc, ck_error *err)
{
    if (rc == CK_OK) {
        rc = record_skipped(c, c->n_lines, err);
    }
    if (rc == CK_OK && c->one_file) {
        rc = ck_wav_close(c->wav, err);
        c->wav = NULL;
    }
    if (rc == CK_OK) {
        rc = journal_finish(c, id->settings, err);
    }
    if (rc != CK_OK) {
        ck_wav_keep(c->wav);
        ck_atomic_abort(&c->side);
    }
    if (c->j.f != NULL) {
        fclose(c->j.f);
    }
    for (size_t i = 0; c->j.rec != NULL && i < c->n_lines; i++) {
        free(c->j.rec[i]);
    }
    free(c->j.rec);
    free(c->j.path);
    free(c->side_path);
    free(c->wav_path);
    free(c->wav_partial);
    free(c->buf);
    return rc;
}

int ck_model_speak_file(ck_model *m, const ck_speak_params *p, ck_speak_summary *sum,
                        ck_error *err)
{
    ck_speak_summary local;
    sum = sum ? sum : &local;
    memset(sum, 0, sizeof *sum);
    if (m == NULL || p == NULL || p->input == NULL || p->output == NULL || p->output[0] == '\0') {
        return ck_fail(err, CK_E_ARG, "speak: null model, params, input or output");
    }
    speak_ctx c = {0};
    clock_gettime(CLOCK_MONOTONIC, &c.t0);
    c.p = p;
    c.sum = sum;
    c.one_file = has_wav_suffix(p->output);
    char version[64];
    ck_speak_identity id = {0};
    snprintf(version, sizeof version, "ckbatch %s", ck_version());
    c.info[0] = (ck_wav_info){"ISFT", version};
    c.info[1] = (ck_wav_info){"ICMT", id.comment};
    char *text = NULL;
    size_t bytes = 0, n_lines = 0;
    int rc = ck_file_read_all(p->input, "speak input", SPEAK_MAX_INPUT, &text, &bytes, err);
    rc = rc == CK_OK ? ck_speak_identity_make(m, p, text, bytes, &id, err) : rc;
    char **lines = rc == CK_OK ? ck_speak_split_lines(text, &n_lines) : NULL;
    c.why = rc == CK_OK && p->skip_bad_lines ? calloc(n_lines + 1, sizeof *c.why) : NULL;
    if (rc == CK_OK && (lines == NULL || (p->skip_bad_lines && c.why == NULL))) {
        rc = ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    c.n_lines = n_lines;
    rc = rc == CK_OK ? ck_speak_shard_plan(p, lines, n_lines, &id.settings, &c.lo, &c.hi, err) : rc;
    rc = rc == CK_OK ? open_outputs(&c, &id, lines, err) : rc;
    ck_sequence_set set = {0};
    c.seqs = &set;
    rc = rc == CK_OK ? ck_model_tokenize_named(m, (const char *const *)lines, n_lines, &p->lines,
                                               p->input, c.why ? on_bad_line : NULL, &c, &set, err)
                     : rc;
    rc = rc == CK_OK ? create_outputs(&c, &id, err) : rc;
    rc = rc == CK_OK ? ck_model_speak(m, &set, &p->speak, on_line, &c, err) : rc;
    rc = close_outputs(&c, &id, rc, err);
    report(&c, 1);
    sum->seconds = seconds_since(&c.t0);
    ck_sequence_set_free(&set);
    free(id.settings);
    for (size_t i = 0; c.why != NULL && i < n_lines; i++) {
        free(c.why[i]);
    }
    free(c.why);
    free(lines);
    free(text);
    return rc;
}
