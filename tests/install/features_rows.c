/* features_rows.c - prints a ckbatch features file the way examples/encode_phonemes.c prints its
 * sequences, so scripts/test-install.sh can diff the installed CLI against the installed library:
 *
 *   sequence S: line L "PHONEMES" tokens N features[0..3] F0 F1 F2 F3
 *
 * Reads the safetensors header (JSON) with cJSON and the `features` F32, `offsets` I64 and
 * `sequences` U8 (JSON Lines) tensors; little-endian host. Knows nothing of ckbatch's sources.
 * Exit 0, or 1 with a message naming what is wrong. */
#include <cjson/cJSON.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *path, const char *what)
{
    fprintf(stderr, "features_rows: %s: %s\n", path, what);
    return 1;
}

/* Byte range [*lo, *hi) of tensor `name` inside the data section, checked against its size. */
static int tensor_span(const cJSON *head, const char *name, uint64_t data_bytes, uint64_t *lo,
                       uint64_t *hi)
{
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(head, name), "data_offsets");
    if (cJSON_GetArraySize(offs) != 2) {
        return -1;
    }
    *lo = (uint64_t)cJSON_GetArrayItem(offs, 0)->valuedouble;
    *hi = (uint64_t)cJSON_GetArrayItem(offs, 1)->valuedouble;
    return *lo <= *hi && *hi <= data_bytes ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: features_rows FILE.safetensors\n");
        return 2;
    }
    const char *path = argv[1];
    FILE *f = fopen(path, "rb");
    if (!f) {
        return fail(path, "cannot open");
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    unsigned char *raw = size > 8 ? malloc((size_t)size) : NULL;
    if (!raw || fread(raw, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(raw);
        return fail(path, "cannot read (or shorter than 8 bytes)");
    }
    fclose(f);

    uint64_t n = 0;
    memcpy(&n, raw, 8);
    if (n > (uint64_t)size - 8) {
        free(raw);
        return fail(path, "header length past the end of the file");
    }
    cJSON *head = cJSON_ParseWithLength((const char *)raw + 8, (size_t)n);
    const unsigned char *data = raw + 8 + n;
    const uint64_t data_bytes = (uint64_t)size - 8 - n;
    uint64_t f_lo, f_hi, o_lo, o_hi, s_lo, s_hi;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(head, "features"), "shape");
    if (!head || tensor_span(head, "features", data_bytes, &f_lo, &f_hi) != 0 ||
        tensor_span(head, "offsets", data_bytes, &o_lo, &o_hi) != 0 ||
        tensor_span(head, "sequences", data_bytes, &s_lo, &s_hi) != 0 ||
        cJSON_GetArraySize(shape) != 2) {
        cJSON_Delete(head);
        free(raw);
        return fail(path, "no features/offsets/sequences tensors in the header");
    }
    const uint64_t cols = (uint64_t)cJSON_GetArrayItem(shape, 1)->valuedouble;
    const uint64_t n_seqs = (o_hi - o_lo) / 8 - 1;

    /* sequences: one JSON object per line, in the order of offsets */
    const char *line = (const char *)data + s_lo, *end = (const char *)data + s_hi;
    int rc = 0;
    for (uint64_t s = 0; s < n_seqs && rc == 0; s++) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        cJSON *seq = cJSON_ParseWithLength(line, (size_t)((nl ? nl : end) - line));
        int64_t a, b;
        memcpy(&a, data + o_lo + 8 * s, 8);
        memcpy(&b, data + o_lo + 8 * (s + 1), 8);
        const cJSON *ln = cJSON_GetObjectItemCaseSensitive(seq, "line");
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(seq, "phonemes");
        if (!cJSON_IsNumber(ln) || !cJSON_IsString(ph) || a < 0 || b <= a || cols < 4 ||
            f_lo + ((uint64_t)a * cols + 4) * 4 > f_hi) {
            rc = fail(path, "sequence record or offsets out of range");
        } else {
            float v[4];
            memcpy(v, data + f_lo + (uint64_t)a * cols * 4, sizeof v);
            /* `line` is 1-based in the file, 0-based in ck_sequence_set */
            printf("sequence %llu: line %lld \"%s\" tokens %lld features[0..3] %.6f %.6f %.6f "
                   "%.6f\n", (unsigned long long)s, (long long)ln->valuedouble - 1,
                   ph->valuestring, (long long)(b - a), v[0], v[1], v[2], v[3]);
        }
        cJSON_Delete(seq);
        line = nl ? nl + 1 : end;
    }
    cJSON_Delete(head);
    free(raw);
    return rc;
}
