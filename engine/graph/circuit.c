/* circuit.c - loads a JSON circuit: syntax, duplicate names, dims, weights, buffers, inputs, outputs
 * and aliases (ops are in circuit_ops.c). Validates and records; never computes, never prints. */
#include "circuit.h"
#include "circuit_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "json.h"

#define CK_DIM_MAX ((size_t)1 << 24)      /* a fixed dim; keeps a product of 4 far from SIZE_MAX */
#define CK_CIRCUIT_FILE_MAX ((size_t)1 << 24) /* circuit files are a few KiB; refuse anything huge */

int ck_loader_fail(ck_loader *l, const char *fmt, ...)
{
    char what[224];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (l->where[0] != '\0') {
        return ck_fail(l->err, CK_E_CIRCUIT, "%s: %s: %s", l->c->path, l->where, what);
    }
    return ck_fail(l->err, CK_E_CIRCUIT, "%s: %s", l->c->path, what);
}

/* Copies a name into dst[cap]; CK_E_CIRCUIT naming `field` when it does not fit. */
static int copy_name(ck_loader *l, const char *field, const char *name, char *dst, size_t cap)
{
    if (strlen(name) >= cap) {
        return ck_loader_fail(l, "%s: \"%.40s...\" longer than %zu bytes", field, name, cap - 1);
    }
    strcpy(dst, name);
    return CK_OK;
}

int ck_loader_string(ck_loader *l, const cJSON *item, const char *field, char *dst, size_t cap)
{
    if (!cJSON_IsString(item)) {
        return ck_loader_fail(l, "%s: expected a string", field);
    }
    return copy_name(l, field, item->valuestring, dst, cap);
}

int ck_loader_keys(ck_loader *l, const cJSON *obj, const char *what, const char *noun,
                   const char *const *allowed)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, obj) {
        size_t i = 0;
        while (allowed[i] != NULL && strcmp(allowed[i], item->string) != 0) {
            i++;
        }
        if (allowed[i] == NULL) {
            return ck_loader_fail(l, "%s: unknown %s \"%s\"", what, noun, item->string);
        }
    }
    return CK_OK;
}

int ck_loader_lookup(ck_loader *l, const cJSON *item, const char *what, int is_weight, int *index)
{
    const char *name = cJSON_IsString(item) ? item->valuestring : "(not a name)";
    *index = is_weight ? ck_circuit_find_weight(l->c, name) : ck_circuit_find_buffer(l->c, name);
    if (*index < 0) {
        return ck_loader_fail(l, "%s: unknown %s \"%s\"", what, is_weight ? "weight" : "buffer",
                              name);
    }
    return CK_OK;
}


/* cJSON keeps every duplicate key and returns the first on lookup, so a second "ids" would be
 * silently ignored: reject it in any object of the file. path[cap] holds the JSON path of node
 * (e.g. ops[2].ops[3].in) and is restored before returning. */
static int check_duplicates(ck_loader *l, const cJSON *node, char *path, size_t cap)
{
    const size_t len = strlen(path);
    size_t index = 0;
    int rc = CK_OK;
    for (const cJSON *a = node->child; rc == CK_OK && a != NULL; a = a->next, index++) {
        for (const cJSON *b = a->next; cJSON_IsObject(node) && b != NULL; b = b->next) {
            if (strcmp(a->string, b->string) == 0) {
                return ck_loader_fail(l, "%s: duplicate name \"%s\"", len ? path : "circuit",
                                      a->string);
            }
        }
        if (cJSON_IsObject(node)) {
            snprintf(path + len, cap - len, "%s%s", len ? "." : "", a->string);
        } else {
            snprintf(path + len, cap - len, "[%zu]", index);
        }
        rc = check_duplicates(l, a, path, cap);
        path[len] = '\0';
    }
    return rc;
}

static int find_dim(const ck_circuit *c, const char *name)
{
    for (size_t i = 0; i < c->n_dims; i++) {
        if (strcmp(c->dims[i].name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* Allocates n zeroed elements (at least one, so an empty section is not a NULL result). */
static int alloc_section(ck_loader *l, void **dst, size_t n, size_t size, const char *section)
{
    *dst = calloc(n ? n : 1, size);
    return *dst ? CK_OK : ck_fail(l->err, CK_E_MEMORY, "%s: %s: out of memory", l->c->path, section);
}

static int parse_frames(ck_loader *l, ck_dim *d, const char *rest);

static int parse_dims(ck_loader *l, const cJSON *dims)
{
    ck_circuit *c = l->c;
    size_t runtime = 0;
    if (!cJSON_IsObject(dims)) {
        return ck_loader_fail(l, "dims: expected an object");
    }
    int rc = alloc_section(l, (void **)&c->dims, (size_t)cJSON_GetArraySize(dims), sizeof *c->dims,
                           "dims");
    const cJSON *item;
    cJSON_ArrayForEach(item, dims) {
        if (rc != CK_OK) {
            return rc;
        }
        ck_dim *d = &c->dims[c->n_dims++];
        rc = copy_name(l, "dims: name", item->string, d->name, sizeof d->name);
        if (rc != CK_OK) {
            return rc;
        }
        if (cJSON_IsString(item) && strcmp(item->valuestring, "runtime") == 0) {
            d->runtime = 1;
            runtime++;
        } else if (cJSON_IsString(item) && strncmp(item->valuestring, "frames", 6) == 0) {
            rc = parse_frames(l, d, item->valuestring + 6);
        } else if (!ck_json_size(item, 1, CK_DIM_MAX, &d->value)) {
            return ck_loader_fail(l, "dims \"%s\": expected a positive integer, \"runtime\", "
                                  "\"frames\", \"frames*K\" or \"frames*K+B\"", d->name);
        }
    }
    if (rc == CK_OK && runtime != 1) {
        return ck_loader_fail(l, "dims: %zu runtime dims, expected exactly one", runtime);
    }
    return rc;
}

/* A frames dim: "frames" (K 1), "frames*K" (K in 1..CK_FRAMES_SCALE_MAX) or "frames*K+B" (B in
 * 1..CK_FRAMES_ADD_MAX); rest is what follows "frames". A sequence of f frames has K f + B rows. */
static size_t parse_number(const char **p, size_t max)
{
    size_t v = 0;
    const char *q = *p;
    for (; *q >= '0' && *q <= '9' && v <= max; q++) {
        v = 10 * v + (size_t)(*q - '0');
    }
    v = q == *p ? 0 : v;
    *p = q;
    return v;
}

static int parse_frames(ck_loader *l, ck_dim *d, const char *rest)
{
    size_t k = 1, b = 0;
    int ok = 1;
    if (rest[0] == '*') {
        rest++;
        k = parse_number(&rest, CK_FRAMES_SCALE_MAX);
        if (rest[0] == '+') {
            rest++;
            b = parse_number(&rest, CK_FRAMES_ADD_MAX);
            ok = b >= 1 && b <= CK_FRAMES_ADD_MAX;
        }
    }
    if (!ok || rest[0] != '\0' || k < 1 || k > CK_FRAMES_SCALE_MAX) {
        return ck_loader_fail(l, "dims \"%s\": expected \"frames\", \"frames*K\" or \"frames*K+B\" "
                              "with K in 1..%d, B in 1..%d", d->name, CK_FRAMES_SCALE_MAX,
                              CK_FRAMES_ADD_MAX);
    }
    ck_circuit *c = l->c;
    d->runtime = 1;
    d->frames = k + b * CK_FRAMES_ADD_UNIT;
    if (ck_circuit_frame_slot(c, d->frames) < 0) {
        if (c->n_frame_dims == CK_FRAME_DIMS_MAX) {
            return ck_loader_fail(l, "dims \"%s\": more than %d distinct frames dims", d->name,
                                  CK_FRAME_DIMS_MAX);
        }
        c->frame_dims[c->n_frame_dims++] = d->frames;
    }
    if (k > c->max_frames_scale) {
        c->max_frames_scale = k;
    }
    return CK_OK;
}

/* Resolves a JSON array of dim names into shape[rank]. A buffer's shape is [runtime, fixed...]; a
 * weight's is all fixed. `what` names the owner, e.g. weights "ffn_weight". */
static int parse_shape(ck_loader *l, const cJSON *shape, const char *what, int is_buffer,
                       size_t *dims, size_t *rank, size_t *frames)
{
    int n = cJSON_GetArraySize(shape);
    if (!cJSON_IsArray(shape) || n < 1 || n > CK_MAX_RANK) {
        return ck_loader_fail(l, "%s: shape: expected an array of 1 to %d dim names", what,
                              CK_MAX_RANK);
    }
    *rank = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, shape) {
        int d = cJSON_IsString(item) ? find_dim(l->c, item->valuestring) : -1;
        if (d < 0) {
            return ck_loader_fail(l, "%s: shape: unknown dim \"%s\"", what,
                                  cJSON_IsString(item) ? item->valuestring : "(not a name)");
        }
        int want_runtime = is_buffer && *rank == 0;
        if (l->c->dims[d].runtime != want_runtime) {
            return ck_loader_fail(l, "%s: shape: dim \"%s\" at %zu: %s", what, item->valuestring,
                                  *rank, want_runtime ? "expected the runtime dim first"
                                                      : "the runtime dim is only allowed first "
                                                        "in a buffer");
        }
        if (*rank == 0 && frames != NULL) {
            *frames = l->c->dims[d].frames;
        }
        dims[(*rank)++] = l->c->dims[d].value;
    }
    return CK_OK;
}

static int parse_dtype(ck_loader *l, const cJSON *item, const char *what, ck_dtype *dtype)
{
    ck_dtype d = cJSON_IsString(item) ? ck_dtype_from_lower(item->valuestring) : CK_DTYPE_OTHER;
    if (d != CK_DTYPE_F32 && d != CK_DTYPE_I32) {
        return ck_loader_fail(l, "%s: dtype: expected \"f32\" or \"i32\"", what);
    }
    *dtype = d;
    return CK_OK;
}

static int parse_weight(ck_loader *l, const cJSON *item, ck_weight_ref *w)
{
    static const char *const keys[] = {"checkpoint", "shape", "dtype", NULL};
    char what[96];
    ck_dtype dtype = CK_DTYPE_F32;
    snprintf(what, sizeof what, "weights \"%.60s\"", item->string);
    int rc = copy_name(l, "weights: name", item->string, w->name, sizeof w->name);
    if (rc == CK_OK && !cJSON_IsObject(item)) {
        rc = ck_loader_fail(l, "%s: expected an object", what);
    }
    rc = rc ? rc : ck_loader_keys(l, item, what, "field", keys);
    if (rc == CK_OK) {
        snprintf(what, sizeof what, "weights \"%s\": checkpoint", w->name);
        rc = ck_loader_string(l, cJSON_GetObjectItemCaseSensitive(item, "checkpoint"), what,
                              w->checkpoint_name, sizeof w->checkpoint_name);
        snprintf(what, sizeof what, "weights \"%s\"", w->name);
    }
    rc = rc ? rc : parse_shape(l, cJSON_GetObjectItemCaseSensitive(item, "shape"), what, 0,
                               w->shape, &w->rank, NULL);
    rc = rc ? rc : parse_dtype(l, cJSON_GetObjectItemCaseSensitive(item, "dtype"), what, &dtype);
    if (rc == CK_OK && dtype != CK_DTYPE_F32) {
        rc = ck_loader_fail(l, "%s: dtype: got \"i32\", expected \"f32\"", what);
    }
    w->elements = 1;
    for (size_t i = 0; i < w->rank; i++) {
        w->elements *= w->shape[i];
    }
    return rc;
}

static int parse_role(ck_loader *l, const cJSON *item, const char *what, ck_buffer_role *role)
{
    static const char *const names[] = {"activation", "input", "output"};
    *role = CK_BUFFER_ACTIVATION;
    for (int i = 0; item != NULL && i < 3; i++) {
        if (cJSON_IsString(item) && strcmp(item->valuestring, names[i]) == 0) {
            *role = (ck_buffer_role)i;
            return CK_OK;
        }
    }
    return item ? ck_loader_fail(l, "%s: role: expected \"input\", \"output\" or \"activation\"",
                                 what)
                : CK_OK;
}

static int parse_buffer(ck_loader *l, const cJSON *item, ck_buffer *b)
{
    static const char *const keys[] = {"shape", "dtype", "role", NULL};
    char what[96];
    size_t shape[CK_MAX_RANK], rank = 0;
    snprintf(what, sizeof what, "buffers \"%.60s\"", item->string);
    int rc = copy_name(l, "buffers: name", item->string, b->name, sizeof b->name);
    if (rc == CK_OK && !cJSON_IsObject(item)) {
        rc = ck_loader_fail(l, "%s: expected an object", what);
    }
    rc = rc ? rc : ck_loader_keys(l, item, what, "field", keys);
    rc = rc ? rc : parse_shape(l, cJSON_GetObjectItemCaseSensitive(item, "shape"), what, 1, shape,
                               &rank, &b->frames);
    rc = rc ? rc : parse_dtype(l, cJSON_GetObjectItemCaseSensitive(item, "dtype"), what, &b->dtype);
    rc = rc ? rc : parse_role(l, cJSON_GetObjectItemCaseSensitive(item, "role"), what, &b->role);
    b->cols = 1;
    for (size_t i = 1; i < rank; i++) {
        b->cols *= shape[i];
    }
    return rc;
}

/* Parses the "weights" and "buffers" sections (objects of name -> declaration). */
static int parse_declarations(ck_loader *l, const cJSON *weights, const cJSON *buffers)
{
    ck_circuit *c = l->c;
    if (!cJSON_IsObject(weights) || !cJSON_IsObject(buffers)) {
        return ck_loader_fail(l, "%s: expected an object",
                              cJSON_IsObject(weights) ? "buffers" : "weights");
    }
    int rc = alloc_section(l, (void **)&c->weights, (size_t)cJSON_GetArraySize(weights),
                           sizeof *c->weights, "weights");
    rc = rc ? rc : alloc_section(l, (void **)&c->buffers, (size_t)cJSON_GetArraySize(buffers),
                                 sizeof *c->buffers, "buffers");
    const cJSON *item;
    cJSON_ArrayForEach(item, weights) {
        rc = rc ? rc : parse_weight(l, item, &c->weights[c->n_weights++]);
    }
    cJSON_ArrayForEach(item, buffers) {
        rc = rc ? rc : parse_buffer(l, item, &c->buffers[c->n_buffers++]);
    }
    return rc;
}

/* One "inputs"/"outputs" entry: key -> buffer of the given role; i32 [T,1] inputs, f32 outputs. */
static int bind_io(ck_loader *l, const cJSON *section, const char *field, const char *key,
                   int required, int *index)
{
    const ck_buffer_role role = strcmp(field, "inputs") == 0 ? CK_BUFFER_INPUT : CK_BUFFER_OUTPUT;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(section, key);
    *index = -1;
    if (item == NULL) {
        return required ? ck_loader_fail(l, "%s: missing \"%s\"", field, key) : CK_OK;
    }
    char what[48];
    int b = -1;
    snprintf(what, sizeof what, "%s \"%s\"", field, key);
    int rc = ck_loader_lookup(l, item, what, 0, &b);
    if (rc != CK_OK) {
        return rc;
    }
    const ck_buffer *buf = &l->c->buffers[b];
    if (buf->role != role) {
        return ck_loader_fail(l, "%s \"%s\": buffer \"%s\" lacks role \"%s\"", field, key,
                              buf->name, role == CK_BUFFER_INPUT ? "input" : "output");
    }
    int frames = strcmp(key, "durations") == 0; /* the one i32 output: frames per token */
    int tokens = role == CK_BUFFER_INPUT || frames || strcmp(key, "features") == 0 ||
                 strcmp(key, "hidden") == 0; /* token rows; f0, n, asr may be frame rows */
    if ((role == CK_BUFFER_INPUT || frames ? buf->dtype != CK_DTYPE_I32 || buf->cols != 1
                                           : buf->dtype != CK_DTYPE_F32) ||
        (tokens && buf->frames != 0)) {
        return ck_loader_fail(l, "%s \"%s\": buffer \"%s\" must be %s", field, key, buf->name,
                              role == CK_BUFFER_INPUT || frames ? "i32 [T]"
                              : tokens ? "f32 [T, ...]" : "f32");
    }
    *index = b;
    return CK_OK;
}

static int parse_io(ck_loader *l, const cJSON *inputs, const cJSON *outputs)
{
    static const char *const in_keys[] = {"ids", "positions", NULL};
    static const char *const out_keys[] = {"features", "hidden", "durations", "f0", "n", "asr",
                                           "decoder", "audio", NULL};
    ck_circuit *c = l->c;
    if (!cJSON_IsObject(inputs) || !cJSON_IsObject(outputs)) {
        return ck_loader_fail(l, "%s: expected an object",
                              cJSON_IsObject(inputs) ? "outputs" : "inputs");
    }
    int rc = ck_loader_keys(l, inputs, "inputs", "field", in_keys);
    rc = rc ? rc : ck_loader_keys(l, outputs, "outputs", "field", out_keys);
    rc = rc ? rc : bind_io(l, inputs, "inputs", "ids", 1, &c->ids_buffer);
    rc = rc ? rc : bind_io(l, inputs, "inputs", "positions", 1, &c->positions_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "features", 1, &c->features_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "hidden", 0, &c->hidden_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "durations", 0, &c->durations_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "f0", 0, &c->f0_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "n", 0, &c->n_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "asr", 0, &c->asr_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "decoder", 0, &c->decoder_buffer);
    rc = rc ? rc : bind_io(l, outputs, "outputs", "audio", 0, &c->audio_buffer);
    for (size_t b = 0; rc == CK_OK && b < c->n_buffers; b++) {
        int bound = (int)b == c->ids_buffer || (int)b == c->positions_buffer ||
                    (int)b == c->features_buffer || (int)b == c->hidden_buffer ||
                    (int)b == c->durations_buffer || (int)b == c->f0_buffer ||
                    (int)b == c->n_buffer || (int)b == c->asr_buffer ||
                    (int)b == c->decoder_buffer || (int)b == c->audio_buffer;
        if (c->buffers[b].role != CK_BUFFER_ACTIVATION && !bound) {
            rc = ck_loader_fail(l, "buffers \"%s\": role \"%s\" but not named in \"%s\"",
                                c->buffers[b].name,
                                c->buffers[b].role == CK_BUFFER_INPUT ? "input" : "output",
                                c->buffers[b].role == CK_BUFFER_INPUT ? "inputs" : "outputs");
        }
    }
    return rc;
}

static int parse_aliases(ck_loader *l, const cJSON *aliases)
{
    ck_circuit *c = l->c;
    const cJSON *item;
    c->aliases = calloc((size_t)cJSON_GetArraySize(aliases) + 1, sizeof *c->aliases);
    if (c->aliases == NULL) {
        return ck_fail(l->err, CK_E_MEMORY, "%s: out of memory", c->path);
    }
    cJSON_ArrayForEach(item, aliases) {
        char what[96];
        ck_alias *a = &c->aliases[c->n_aliases++];
        snprintf(what, sizeof what, "aliases \"%.60s\"", item->string);
        int b = -1;
        int rc = ck_loader_lookup(l, item, what, 0, &b);
        if (rc != CK_OK) {
            return rc;
        }
        if (c->buffers[b].role != CK_BUFFER_OUTPUT) {
            return ck_loader_fail(l, "%s: buffer \"%s\" is not an output", what, item->valuestring);
        }
        rc = copy_name(l, "aliases: id", item->string, a->checkpoint, sizeof a->checkpoint);
        for (size_t i = 0; rc == CK_OK && i < c->n_ops; i++) {
            if (strcmp(c->ops[i].checkpoint, a->checkpoint) == 0) {
                rc = ck_loader_fail(l, "%s: duplicate checkpoint id", what);
            }
        }
        if (rc != CK_OK) {
            return rc;
        }
        a->buffer = b;
    }
    return CK_OK;
}

static int parse_root(ck_loader *l, const cJSON *root)
{
    static const char *const keys[] = {"name",   "format",  "dims",    "weights", "buffers",
                                       "inputs", "outputs", "aliases", "ops",     NULL};
    if (!cJSON_IsObject(root)) {
        return ck_loader_fail(l, "expected a JSON object at the top level");
    }
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *aliases = cJSON_GetObjectItemCaseSensitive(root, "aliases");
    char path[128] = "";
    int rc = check_duplicates(l, root, path, sizeof path);
    rc = rc ? rc : ck_loader_keys(l, root, "circuit", "field", keys);
    rc = rc ? rc : ck_loader_string(l, cJSON_GetObjectItemCaseSensitive(root, "name"), "name",
                                    l->c->name, sizeof l->c->name);
    if (rc == CK_OK && !(cJSON_IsNumber(format) && format->valuedouble == 1.0)) {
        rc = ck_loader_fail(l, "format: expected 1");
    }
    if (rc == CK_OK && aliases != NULL && !cJSON_IsObject(aliases)) {
        rc = ck_loader_fail(l, "aliases: expected an object");
    }
    rc = rc ? rc : parse_dims(l, cJSON_GetObjectItemCaseSensitive(root, "dims"));
    rc = rc ? rc : parse_declarations(l, cJSON_GetObjectItemCaseSensitive(root, "weights"),
                                      cJSON_GetObjectItemCaseSensitive(root, "buffers"));
    rc = rc ? rc : parse_io(l, cJSON_GetObjectItemCaseSensitive(root, "inputs"),
                            cJSON_GetObjectItemCaseSensitive(root, "outputs"));
    rc = rc ? rc : ck_circuit_parse_ops(l, cJSON_GetObjectItemCaseSensitive(root, "ops"));
    return rc ? rc : parse_aliases(l, aliases);
}

static void circuit_reset(ck_circuit *c)
{
    memset(c, 0, sizeof *c);
    c->ids_buffer = c->positions_buffer = c->features_buffer = c->hidden_buffer = -1;
    c->durations_buffer = c->f0_buffer = c->n_buffer = c->asr_buffer = c->decoder_buffer = -1;
    c->audio_buffer = -1;
}

int ck_circuit_parse(ck_circuit *c, const char *json, size_t length, const char *origin,
                     ck_error *err)
{
    if (c == NULL || json == NULL || origin == NULL) {
        return ck_fail(err, CK_E_ARG, "ck_circuit_parse: null circuit, text or origin");
    }
    circuit_reset(c);
    snprintf(c->path, sizeof c->path, "%s", origin);
    ck_loader l = {.c = c, .err = err};
    const char *why = NULL;
    size_t at = 0;
    int rc = CK_OK;
    cJSON *root = ck_json_parse(json, length, &at, &why);
    if (root == NULL) {
        rc = ck_fail(err, CK_E_FORMAT, "%s: %s at byte %zu (line %zu)", c->path, why, at,
                     ck_json_line(json, at));
        goto done;
    }
    rc = parse_root(&l, root);
done:
    cJSON_Delete(root);
    free(l.written);
    free(l.read);
    if (rc != CK_OK) {
        ck_circuit_free(c);
    }
    return rc;
}

int ck_circuit_load(ck_circuit *c, const char *path, ck_error *err)
{
    if (c == NULL || path == NULL) {
        return ck_fail(err, CK_E_ARG, "ck_circuit_load: null circuit or path");
    }
    circuit_reset(c);
    char *text = NULL;
    size_t size = 0;
    int rc = ck_file_read_all(path, "circuit", CK_CIRCUIT_FILE_MAX, &text, &size, err);
    if (rc == CK_OK) {
        rc = ck_circuit_parse(c, text, size, path, err);
    }
    free(text);
    return rc;
}

void ck_circuit_free(ck_circuit *c)
{
    if (c == NULL) {
        return;
    }
    free(c->dims);
    free(c->weights);
    free(c->buffers);
    free(c->ops);
    free(c->aliases);
    memset(c, 0, sizeof *c);
}

int ck_circuit_find_buffer(const ck_circuit *c, const char *name)
{
    for (size_t i = 0; c != NULL && name != NULL && i < c->n_buffers; i++) {
        if (strcmp(c->buffers[i].name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

int ck_circuit_find_weight(const ck_circuit *c, const char *name)
{
    for (size_t i = 0; c != NULL && name != NULL && i < c->n_weights; i++) {
        if (strcmp(c->weights[i].name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

int ck_circuit_alias(const ck_circuit *c, const char *id)
{
    for (size_t i = 0; c != NULL && id != NULL && i < c->n_aliases; i++) {
        if (strcmp(c->aliases[i].checkpoint, id) == 0) {
            return c->aliases[i].buffer;
        }
    }
    return -1;
}
