/* features_rows.c - prints a ckbatch features file the way examples/encode_phonemes.c prints its
 * sequences, so scripts/test-install.sh can diff the installed CLI against the installed library:
 *
 *   sequence S: line L "PHONEMES" tokens N features[0..3] F0 F1 F2 F3
 *
 * Built against the installed package like any user (ckbatch.h's ck_features_* reader, cJSON for
 * the `sequences` JSON Lines). Exit 0, or 1 with a message naming what is wrong. */
#include <cjson/cJSON.h>
#include <ckbatch.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *path, const char *what)
{
    fprintf(stderr, "features_rows: %s: %s\n", path, what);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: features_rows FILE.safetensors\n");
        return 2;
    }
    const char *path = argv[1];
    ck_features_file *f = NULL;
    ck_error err = {0};
    if (ck_features_open(&f, path, &err) != CK_OK) {
        return fail(path, err.message);
    }
    const ck_tensor_view *feat = ck_features_tensor(f, "features");
    const ck_tensor_view *offs = ck_features_tensor(f, "offsets");
    const ck_tensor_view *seqs = ck_features_tensor(f, "sequences");
    if (!feat || !offs || !seqs || strcmp(feat->dtype, "F32") != 0 || feat->rank != 2 ||
        strcmp(offs->dtype, "I64") != 0 || offs->elements < 1 || feat->shape[1] < 4) {
        ck_features_close(f);
        return fail(path, "no features F32 [T, cols], offsets I64 or sequences tensor");
    }
    const size_t cols = feat->shape[1], n_seqs = offs->elements - 1;
    const char *line = seqs->data, *end = line + seqs->bytes;
    int rc = 0;
    for (size_t s = 0; s < n_seqs && rc == 0; s++) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        cJSON *seq = cJSON_ParseWithLength(line, (size_t)((nl ? nl : end) - line));
        int64_t a, b;
        memcpy(&a, (const char *)offs->data + 8 * s, 8);
        memcpy(&b, (const char *)offs->data + 8 * (s + 1), 8);
        const cJSON *ln = cJSON_GetObjectItemCaseSensitive(seq, "line");
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(seq, "phonemes");
        if (!cJSON_IsNumber(ln) || !cJSON_IsString(ph) || a < 0 || b <= a ||
            (size_t)b > feat->shape[0]) {
            rc = fail(path, "sequence record or offsets out of range");
        } else {
            float v[4];
            memcpy(v, (const char *)feat->data + (size_t)a * cols * sizeof(float), sizeof v);
            /* `line` is 1-based in the file, 0-based in ck_sequence_set */
            printf("sequence %zu: line %lld \"%s\" tokens %lld features[0..3] %.6f %.6f %.6f "
                   "%.6f\n", s, (long long)ln->valuedouble - 1, ph->valuestring,
                   (long long)(b - a), v[0], v[1], v[2], v[3]);
        }
        cJSON_Delete(seq);
        line = nl ? nl + 1 : end;
    }
    ck_features_close(f);
    return rc;
}
