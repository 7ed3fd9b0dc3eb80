/* corpus_shard.c - shards of a corpus job: the public split and shard names, the range a shard run
 * reads and the description its file carries for ck_merge_shards. Prints nothing. */
#define _POSIX_C_SOURCE 200809L /* fseeko */
#include "corpus_shard.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ck_error.h"
#include "shard.h"

int ck_shard_split(const char *input, size_t index, size_t count, ck_shard_range *out,
                   ck_error *err)
{
    if (input == NULL || out == NULL) {
        return ck_fail(err, CK_E_ARG, "shard split: null input or out");
    }
    FILE *f = fopen(input, "rb");
    if (f == NULL) {
        return ck_fail(err, CK_E_IO, "%s: cannot open input: %s", input, strerror(errno));
    }
    int rc = ck_shard_split_file(f, input, index, count, out, err);
    fclose(f);
    return rc;
}

size_t ck_shard_path(char *buf, size_t cap, const char *output, size_t index, size_t count)
{
    int n = snprintf(buf, cap, "%s.shard-%05zu-of-%05zu", output != NULL ? output : "", index,
                     count);
    return n < 0 ? 0 : (size_t)n;
}

int ck_corpus_shard_open(const ck_corpus_params *p, FILE *in, ck_shard_range *range, char **path,
                         ck_error *err)
{
    *path = NULL;
    if (strcmp(p->input, "-") == 0) {
        return ck_fail(err, CK_E_ARG, "shard: needs a regular input file, not stdin");
    }
    int rc = ck_shard_split_file(in, p->input, p->shard_index, p->shard_count, range, err);
    if (rc != CK_OK) {
        return rc;
    }
    if (fseeko(in, (off_t)range->start, SEEK_SET) != 0) {
        return ck_fail(err, CK_E_IO, "%s: cannot seek to byte %llu: %s", p->input, range->start,
                       strerror(errno));
    }
    size_t n = ck_shard_path(NULL, 0, p->output, p->shard_index, p->shard_count) + 1;
    if ((*path = malloc(n)) == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", p->output);
    }
    ck_shard_path(*path, n, p->output, p->shard_index, p->shard_count);
    return CK_OK;
}

char *ck_corpus_shard_meta(const ck_corpus_params *p, const ck_shard_range *range,
                           const char *input_sha256, const char *options)
{
    cJSON *j = cJSON_CreateObject();
    const double v[] = {(double)p->shard_index, (double)p->shard_count, (double)range->start,
                        (double)range->end, (double)range->first_line, (double)range->lines};
    const char *const names[] = {"index", "count", "byte_start", "byte_end", "first_line", "lines"};
    int ok = j != NULL;
    for (size_t i = 0; ok && i < sizeof v / sizeof v[0]; i++) {
        ok = cJSON_AddNumberToObject(j, names[i], v[i]) != NULL;
    }
    ok = ok && cJSON_AddStringToObject(j, "input_sha256", input_sha256) != NULL &&
         cJSON_AddNumberToObject(j, "input_bytes", (double)range->input_bytes) != NULL &&
         cJSON_AddStringToObject(j, "options", options) != NULL &&
         cJSON_AddStringToObject(j, "isa", ck_kernels_isa()) != NULL;
    char *text = ok ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    return text;
}
