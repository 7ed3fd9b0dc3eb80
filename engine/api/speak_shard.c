/* speak_shard.c - one shard of `ckbatch speak`: its lines (the encoder's split), its file names
 * and its settings record's "shard" entry. Speaks nothing and prints nothing. */
#include "speak_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_error.h"

char *ck_speak_shard_file(const ck_speak_params *p, const char *path)
{
    size_t n = p->shard_count == 0
                   ? strlen(path) + 1
                   : ck_shard_path(NULL, 0, path, p->shard_index, p->shard_count) + 1;
    char *s = malloc(n);
    if (s != NULL && p->shard_count == 0) {
        memcpy(s, path, n);
    } else if (s != NULL) {
        ck_shard_path(s, n, path, p->shard_index, p->shard_count);
    }
    return s;
}

int ck_speak_shard_plan(const ck_speak_params *p, char **lines, size_t n_lines, char **settings,
                        size_t *lo, size_t *hi, ck_error *err)
{
    static char blank[] = "";
    *lo = 0;
    *hi = n_lines;
    if (p->shard_count == 0) {
        return CK_OK;
    }
    ck_shard_range r;
    int rc = ck_shard_split(p->input, p->shard_index, p->shard_count, &r, err);
    if (rc != CK_OK) {
        return rc;
    }
    *lo = r.first_line - 1;
    *hi = *lo + r.lines;
    if (*hi > n_lines) {
        return ck_fail(err, CK_E_FORMAT, "%s: shard %zu/%zu: lines %zu..%zu past the %zu lines "
                       "read (a NUL byte in the input?)", p->input, p->shard_index, p->shard_count,
                       *lo + 1, *hi, n_lines);
    }
    for (size_t i = 0; i < n_lines; i++) {
        lines[i] = i >= *lo && i < *hi ? lines[i] : blank;
    }
    if (settings == NULL) { /* a rank of ckbatch-mpi speak: its files are the single run's */
        return CK_OK;
    }
    char entry[256];
    int len = snprintf(entry, sizeof entry, CK_SPEAK_SHARD_KEY "\"index\":%zu,\"count\":%zu,"
                       "\"first_line\":%zu,\"lines\":%zu,\"byte_start\":%llu,\"byte_end\":%llu}}",
                       p->shard_index, p->shard_count, r.first_line, r.lines, r.start, r.end);
    size_t old = strlen(*settings); /* the record ends with its object's '}', replaced */
    char *s = realloc(*settings, old + (size_t)len + 1);
    if (s == NULL) {
        return ck_fail(err, CK_E_MEMORY, "speak: cannot allocate");
    }
    memcpy(s + old - 1, entry, (size_t)len + 1);
    *settings = s;
    return CK_OK;
}
