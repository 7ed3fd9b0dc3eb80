/* shard.h - the split every distributed mode shares: input i of N as a contiguous byte range that
 * starts at a line start, balanced by bytes. A pure function of the file's bytes and (i, N); knows
 * no formats, no output and no launcher. */
#ifndef CK_SHARD_H
#define CK_SHARD_H

#include <stddef.h>
#include <stdio.h>

#include "ckbatch.h"
#include "ck_error.h"

/* ck_shard_range and CK_SHARDS_MAX are public (include/ckbatch.h, with the rule of the split). */

/* Range `index` (0-based) of `count` shards of the regular file `in` (read with pread from its
 * descriptor; its stream position is not used). Reads the bytes before `end` once (counting
 * '\n' for first_line and lines) and at most one line past each boundary. Errors: CK_E_ARG (null
 * or index >= count, count 0 or above CK_SHARDS_MAX), CK_E_IO (stat or read failed; `name` in the message). */
int ck_shard_split_file(FILE *in, const char *name, size_t index, size_t count, ck_shard_range *out,
                   ck_error *err);

#endif
