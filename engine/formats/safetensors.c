/* safetensors.c - safetensors reader (a mapping or bytes in memory, header validated before use) and
 * f32 conversion.
 * Must not trust one byte of a file: every length and offset is checked before it is used. */
#include "safetensors.h"

#include "file.h"
#include "json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; this reader uses it in place and needs a little-endian host"
#endif

struct ck_st_file {
    char *path;
    const unsigned char *map; /* the whole file: the mapping (ck_st_open) or the caller's bytes */
    size_t map_bytes;
    ck_file_map file;       /* owned mapping; empty for ck_st_open_memory */
    ck_st_tensor *tensors;  /* names owned (malloc'd) */
    size_t n;
    const ck_st_tensor **by_name; /* [n]: the tensors sorted by name (strcmp), for ck_st_find */
    char **meta;            /* key, value, key, value, ... (owned) */
    size_t n_meta;
};

/* The format's dtype strings and element sizes; ck_dtype_from_name maps each to its ck_dtype, those
 * ckbatch does not compute with to CK_DTYPE_OTHER (read with their true size, never converted).
 * Sizes of the known ones agree with ck_dtype_size (test_safetensors). */
static const struct {
    const char *name;
    size_t size;
} DTYPES[] = {
    {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I32", 4}, {"I64", 8}, {"U8", 1}, {"F64", 8}, {"I8", 1},
    {"I16", 2}, {"U16", 2}, {"U32", 4}, {"U64", 8}, {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1},
};
#define N_DTYPES (sizeof DTYPES / sizeof DTYPES[0])

/* ---- reader: header fields ---------------------------------------------------------------- */

static int parse_dtype(const ck_st_file *f, const char *name, const cJSON *v, ck_st_tensor *t,
                       size_t *elem_size, ck_error *err)
{
    if (!cJSON_IsString(v)) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": dtype: missing or not a string", f->path,
                       name);
    }
    for (size_t i = 0; i < N_DTYPES; i++) {
        if (strcmp(v->valuestring, DTYPES[i].name) == 0) {
            t->dtype = ck_dtype_from_name(DTYPES[i].name);
            *elem_size = DTYPES[i].size;
            return CK_OK;
        }
    }
    return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": dtype: unknown dtype \"%.32s\"", f->path,
                   name, v->valuestring);
}

static int parse_shape(const ck_st_file *f, const char *name, const cJSON *v, ck_st_tensor *t,
                       ck_error *err)
{
    if (!cJSON_IsArray(v)) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": shape: missing or not an array", f->path,
                       name);
    }
    size_t rank = (size_t)cJSON_GetArraySize(v);
    if (rank > CK_ST_MAX_RANK) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": shape: rank %zu > %d", f->path, name,
                       rank, CK_ST_MAX_RANK);
    }
    t->rank = rank;
    t->elements = 1;
    size_t i = 0;
    for (const cJSON *d = v->child; d != NULL; d = d->next, i++) {
        if (!ck_json_size(d, 0, SIZE_MAX, &t->shape[i])) {
            return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": shape[%zu]: not a non-negative integer",
                           f->path, name, i);
        }
        if (t->shape[i] != 0 && t->elements > SIZE_MAX / t->shape[i]) {
            return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": shape: element count overflows",
                           f->path, name);
        }
        t->elements *= t->shape[i];
    }
    return CK_OK;
}

/* data_offsets [begin, end]: integers, begin <= end <= data_bytes, end - begin == elements x size. */
static int parse_offsets(const ck_st_file *f, const char *name, const cJSON *v, size_t elem_size,
                         size_t data_bytes, size_t *begin, ck_st_tensor *t, ck_error *err)
{
    size_t end;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !ck_json_size(v->child, 0, SIZE_MAX, begin) ||
        !ck_json_size(v->child->next, 0, SIZE_MAX, &end)) {
        return ck_fail(err, CK_E_FORMAT,
                       "%s: tensor \"%s\": data_offsets: not an array of 2 non-negative integers",
                       f->path, name);
    }
    if (*begin > end) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": data_offsets: begin %zu > end %zu",
                       f->path, name, *begin, end);
    }
    if (end > data_bytes) {
        return ck_fail(err, CK_E_FORMAT,
                       "%s: tensor \"%s\": data_offsets: end %zu beyond data section of %zu bytes",
                       f->path, name, end, data_bytes);
    }
    if (elem_size != 0 && t->elements > SIZE_MAX / elem_size) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": shape: byte count overflows", f->path,
                       name);
    }
    t->bytes = t->elements * elem_size;
    if (end - *begin != t->bytes) {
        return ck_fail(err, CK_E_FORMAT,
                       "%s: tensor \"%s\": data_offsets: %zu bytes, dtype x shape needs %zu",
                       f->path, name, end - *begin, t->bytes);
    }
    return CK_OK;
}

static int parse_tensor(ck_st_file *f, const cJSON *item, const unsigned char *data,
                        size_t data_bytes, size_t *begin, ck_error *err)
{
    ck_st_tensor *t = &f->tensors[f->n];
    const char *name = item->string;
    size_t elem_size = 0;
    int rc;
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(item)) {
        return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": not an object", f->path, name);
    }
    rc = parse_dtype(f, name, cJSON_GetObjectItemCaseSensitive(item, "dtype"), t, &elem_size, err);
    if (rc == CK_OK) {
        rc = parse_shape(f, name, cJSON_GetObjectItemCaseSensitive(item, "shape"), t, err);
    }
    if (rc == CK_OK) {
        rc = parse_offsets(f, name, cJSON_GetObjectItemCaseSensitive(item, "data_offsets"),
                           elem_size, data_bytes, begin, t, err);
    }
    if (rc != CK_OK) {
        return rc;
    }
    t->data = data + *begin;
    t->name = strdup(name);
    if (t->name == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
    }
    f->n++;
    return CK_OK;
}

static int parse_metadata(ck_st_file *f, const cJSON *obj, ck_error *err)
{
    if (f->meta != NULL) {
        return ck_fail(err, CK_E_FORMAT, "%s: __metadata__: duplicate", f->path);
    }
    if (cJSON_IsNull(obj)) {
        return CK_OK; /* the reference reads it as an optional map: null is no metadata */
    }
    if (!cJSON_IsObject(obj)) {
        return ck_fail(err, CK_E_FORMAT, "%s: __metadata__: not an object", f->path);
    }
    f->meta = calloc(2 * (size_t)cJSON_GetArraySize(obj) + 1, sizeof *f->meta);
    if (f->meta == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
    }
    for (const cJSON *kv = obj->child; kv != NULL; kv = kv->next) {
        if (!cJSON_IsString(kv)) {
            return ck_fail(err, CK_E_FORMAT, "%s: __metadata__: \"%s\": value is not a string",
                           f->path, kv->string);
        }
        f->meta[2 * f->n_meta] = strdup(kv->string);
        f->meta[2 * f->n_meta + 1] = strdup(kv->valuestring);
        f->n_meta++;
        if (f->meta[2 * f->n_meta - 2] == NULL || f->meta[2 * f->n_meta - 1] == NULL) {
            return ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
        }
    }
    return CK_OK;
}

/* ---- reader: whole header ----------------------------------------------------------------- */

static int by_name_cmp(const void *a, const void *b)
{
    const ck_st_tensor *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* f->by_name: the tensors sorted by name, O(n log n); two of one name are refused (they sort side
 * by side). */
static int index_names(ck_st_file *f, ck_error *err)
{
    f->by_name = malloc((f->n + 1) * sizeof *f->by_name);
    if (f->by_name == NULL) {
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
    }
    for (size_t i = 0; i < f->n; i++) {
        f->by_name[i] = &f->tensors[i];
    }
    qsort(f->by_name, f->n, sizeof *f->by_name, by_name_cmp);
    for (size_t i = 1; i < f->n; i++) {
        if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0) {
            return ck_fail(err, CK_E_FORMAT, "%s: tensor \"%s\": name: duplicate", f->path,
                           f->by_name[i]->name);
        }
    }
    return CK_OK;
}

typedef struct {
    size_t begin, end, index;
} st_span;

static int span_cmp(const void *a, const void *b)
{
    const st_span *x = a, *y = b;
    if (x->begin != y->begin) {
        return (x->begin > y->begin) - (x->begin < y->begin);
    }
    return (x->end > y->end) - (x->end < y->end);
}

/* The data section is the tensors' bytes back to back, as the format's reference implementation
 * validates it (safetensors' Metadata::validate: sorted by (begin, end), each begins where the
 * previous ended, the last ends at the end of the file): no shared byte, no hole, nothing after. */
static int check_layout(const ck_st_file *f, st_span *spans, size_t n, size_t data_bytes,
                        ck_error *err)
{
    size_t at = 0;
    qsort(spans, n, sizeof *spans, span_cmp);
    for (size_t i = 0; i < n; i++) {
        const char *name = f->tensors[spans[i].index].name;
        if (spans[i].begin < at) {
            return ck_fail(err, CK_E_FORMAT,
                           "%s: tensor \"%s\": data_offsets: overlaps tensor \"%s\"", f->path,
                           name, f->tensors[spans[i - 1].index].name);
        }
        if (spans[i].begin > at) {
            return ck_fail(err, CK_E_FORMAT,
                           "%s: tensor \"%s\": data_offsets: begins at %zu, leaving bytes %zu..%zu "
                           "of the data section unused",
                           f->path, name, spans[i].begin, at, spans[i].begin - 1);
        }
        at = spans[i].end;
    }
    if (at != data_bytes) {
        return ck_fail(err, CK_E_FORMAT,
                       "%s: data section: %zu bytes after the last tensor's data (%zu of %zu used)",
                       f->path, data_bytes - at, at, data_bytes);
    }
    return CK_OK;
}

static int parse_header(ck_st_file *f, const cJSON *root, const unsigned char *data,
                        size_t data_bytes, ck_error *err)
{
    size_t n_items = (size_t)cJSON_GetArraySize(root);
    st_span *spans = calloc(n_items + 1, sizeof *spans);
    int rc = CK_OK;
    f->tensors = calloc(n_items + 1, sizeof *f->tensors);
    if (spans == NULL || f->tensors == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "%s: out of memory", f->path);
        goto done;
    }
    for (const cJSON *item = root->child; item != NULL && rc == CK_OK; item = item->next) {
        if (strcmp(item->string, "__metadata__") == 0) {
            rc = parse_metadata(f, item, err);
            continue;
        }
        size_t i = f->n;
        rc = parse_tensor(f, item, data, data_bytes, &spans[i].begin, err);
        spans[i].end = spans[i].begin + f->tensors[i].bytes;
        spans[i].index = i;
    }
    if (rc == CK_OK) {
        rc = index_names(f, err);
    }
    if (rc == CK_OK) {
        rc = check_layout(f, spans, f->n, data_bytes, err);
    }
done:
    free(spans);
    return rc;
}

static int load(ck_st_file *f, ck_error *err)
{
    uint64_t n = 0;
    cJSON *root = NULL;
    int rc = CK_OK;
    if (f->map_bytes < 8) {
        return ck_fail(err, CK_E_FORMAT, "%s: header length: truncated (file has %zu bytes, needs 8)",
                       f->path, f->map_bytes);
    }
    for (int i = 7; i >= 0; i--) {
        n = (n << 8) | f->map[i];
    }
    if (n > f->map_bytes - 8) {
        return ck_fail(err, CK_E_FORMAT, "%s: header length: %llu bytes exceeds the %zu after it",
                       f->path, (unsigned long long)n, f->map_bytes - 8);
    }
    /* Writers pad the header with spaces; anything else after the object is not a valid header. */
    const char *text = (const char *)f->map + 8, *why = NULL;
    size_t at = 0;
    root = ck_json_parse(text, (size_t)n, &at, &why);
    if (root == NULL) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: header: %s at byte %zu", f->path, why, at);
        goto done;
    }
    if (!cJSON_IsObject(root)) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: header: not a JSON object", f->path);
        goto done;
    }

    rc = parse_header(f, root, f->map + 8 + n, f->map_bytes - 8 - (size_t)n, err);
    /* Every number in a header is a shape or an offset, which the reference reads as usize: one
     * that holds an integer but is spelled otherwise (8.0, 2e0, -0) passes the field checks above. */
    if (rc == CK_OK && (at = ck_json_first_non_size(text, (size_t)n)) < (size_t)n) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: header: a number at byte %zu is not written as a "
                     "non-negative integer (shape and data_offsets are sizes)", f->path, at);
    }
done:
    cJSON_Delete(root);
    return rc;
}

/* A file record named `name` over bytes[n]; with map, it owns that mapping (closed on error too). */
static int open_bytes(ck_st_file **out, const char *name, const ck_file_map *map,
                      const void *bytes, size_t n, ck_error *err)
{
    *out = NULL;
    ck_st_file *f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(name)) == NULL) {
        ck_st_close(f);
        ck_file_map file = map != NULL ? *map : (ck_file_map){NULL, 0};
        ck_file_map_close(&file);
        return ck_fail(err, CK_E_MEMORY, "%s: out of memory", name);
    }
    if (map != NULL) {
        f->file = *map;
    }
    f->map = bytes;
    f->map_bytes = n;
    int rc = load(f, err);
    if (rc != CK_OK) {
        ck_st_close(f);
        return rc;
    }
    *out = f;
    return CK_OK;
}

int ck_st_open(ck_st_file **out, const char *path, ck_error *err)
{
    if (out == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "safetensors: null out or path");
    }
    ck_file_map map;
    int rc = ck_file_map_open(&map, path, err);
    return rc == CK_OK ? open_bytes(out, path, &map, map.data, map.bytes, err) : (*out = NULL, rc);
}

int ck_st_open_memory(ck_st_file **out, const void *bytes, size_t n, const char *name,
                      ck_error *err)
{
    if (out == NULL || (bytes == NULL && n > 0)) {
        return ck_fail(err, CK_E_ARG, "safetensors: null out or bytes");
    }
    return open_bytes(out, name != NULL ? name : "<memory>", NULL, bytes, n, err);
}

void ck_st_close(ck_st_file *f)
{
    if (f == NULL) {
        return;
    }
    ck_file_map_close(&f->file);
    for (size_t i = 0; f->tensors != NULL && i < f->n; i++) {
        free((char *)f->tensors[i].name);
    }
    for (size_t i = 0; f->meta != NULL && i < 2 * f->n_meta; i++) {
        free(f->meta[i]);
    }
    free(f->tensors);
    free(f->by_name);
    free(f->meta);
    free(f->path);
    free(f);
}

size_t ck_st_count(const ck_st_file *f)
{
    return f != NULL ? f->n : 0;
}

const ck_st_tensor *ck_st_at(const ck_st_file *f, size_t i)
{
    return f != NULL && i < f->n ? &f->tensors[i] : NULL;
}

const ck_st_tensor *ck_st_find(const ck_st_file *f, const char *name)
{
    if (f == NULL || name == NULL || f->n == 0) {
        return NULL;
    }
    const ck_st_tensor key = {.name = name}, *kp = &key;
    const ck_st_tensor *const *hit = bsearch(&kp, f->by_name, f->n, sizeof *f->by_name, by_name_cmp);
    return hit != NULL ? *hit : NULL;
}

const char *ck_st_metadata(const ck_st_file *f, const char *key)
{
    for (size_t i = 0; f != NULL && key != NULL && i < f->n_meta; i++) {
        if (strcmp(f->meta[2 * i], key) == 0) {
            return f->meta[2 * i + 1];
        }
    }
    return NULL;
}

size_t ck_st_metadata_count(const ck_st_file *f)
{
    return f != NULL ? f->n_meta : 0;
}

int ck_st_metadata_at(const ck_st_file *f, size_t i, const char **key, const char **value)
{
    if (f == NULL || i >= f->n_meta) {
        return 0;
    }
    *key = f->meta[2 * i];
    *value = f->meta[2 * i + 1];
    return 1;
}

unsigned long long ck_st_file_offset(const ck_st_file *f, const ck_st_tensor *t)
{
    return (unsigned long long)((const unsigned char *)t->data - f->map);
}

/* ---- conversion --------------------------------------------------------------------------- */

/* IEEE binary16 -> binary32, exact for every input: subnormals are man x 2^-24 (exact in f32),
 * normals re-bias the exponent (15 -> 127), inf/NaN keep their payload in the high mantissa bits. */
static float half_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 31u, man = h & 0x3ffu, bits;
    float f;
    if (exp == 0) {
        f = (float)man * 0x1p-24f;
        memcpy(&bits, &f, sizeof bits);
        bits |= sign;
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

int ck_st_to_f32(const ck_st_tensor *t, float *out, size_t out_count, ck_error *err)
{
    if (t == NULL || out == NULL || (t->data == NULL && t->elements > 0)) {
        return ck_fail(err, CK_E_ARG, "safetensors: to_f32: null tensor, data or output");
    }
    if (!ck_dtype_info(t->dtype)->is_float) {
        return ck_fail(err, CK_E_ARG, "tensor \"%s\": dtype: %s cannot convert to f32", t->name,
                       ck_dtype_name(t->dtype));
    }
    if (out_count < t->elements) {
        return ck_fail(err, CK_E_SIZE, "tensor \"%s\": output holds %zu floats, needs %zu", t->name,
                       out_count, t->elements);
    }
    const unsigned char *src = t->data;
    if (t->dtype == CK_DTYPE_F32) {
        memcpy(out, src, t->elements * sizeof(float));  /* the mapping may be unaligned */
        return CK_OK;
    }
    for (size_t i = 0; i < t->elements; i++) {
        uint16_t h;
        memcpy(&h, src + 2 * i, sizeof h);
        if (t->dtype == CK_DTYPE_F16) {
            out[i] = half_to_f32(h);
        } else {
            uint32_t bits = (uint32_t)h << 16;
            memcpy(&out[i], &bits, sizeof bits);
        }
    }
    return CK_OK;
}
