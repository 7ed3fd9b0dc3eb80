/* speak_shard.h - `speak --shard I/N` (speak_shard.c): which lines a shard speaks, where its files
 * go and the "shard" entry of its settings record, which ck_merge_speak_shards (speak_merge.c)
 * reads back. Private to engine/api. */
#ifndef CK_SPEAK_SHARD_H
#define CK_SPEAK_SHARD_H

#include <stddef.h>

#include "ckbatch.h"

/* The settings record's shard entry, always its last member:
 * ,"shard":{"index":I,"count":N,"first_line":F,"lines":L,"byte_start":S,"byte_end":E}
 * (F 1-based, as ck_shard_range). */
#define CK_SPEAK_SHARD_KEY ",\"shard\":{"

/* p->shard_count 0: *lo = 0, *hi = n_lines, nothing changed. Else the range p->shard_index of
 * ck_shard_split(p->input, ...): *lo, *hi its 0-based lines [lo, hi), every line outside it made
 * blank (the reader gives it no sequence, so the kept lines keep their global numbers, which key
 * their noise), and the shard entry appended to *settings (realloc'd; settings NULL: none). Errors: those of
 * ck_shard_split, CK_E_FORMAT (the range past n_lines: a NUL byte in the input), CK_E_MEMORY. */
int ck_speak_shard_plan(const ck_speak_params *p, char **lines, size_t n_lines, char **settings,
                        size_t *lo, size_t *hi, ck_error *err);

/* `path` itself (p->shard_count 0) or its shard name ck_shard_path(path, I, N), malloc'd; NULL
 * when out of memory. */
char *ck_speak_shard_file(const ck_speak_params *p, const char *path);

#endif
