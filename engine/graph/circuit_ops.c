/* circuit_ops.c - parses a circuit's "ops" (slots, params, checkpoint ids), unrolls the repeat block
 * and checks geometry and data flow against the declared buffers and weights. Never computes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "circuit_internal.h"
#include "op_table.h"

#define CK_REPEAT_MAX 100 /* "{layer}" expands to a 2-digit application index: 00..99 */

/* Resolves the slots of one "in" or "weights" object into indices, in spec order. */
static int parse_slots(ck_loader *l, const cJSON *obj, const char *field, const char *const *names,
                       int is_weight, const char *optional, int *out)
{
    if (obj == NULL && names[0] == NULL) {
        return CK_OK;
    }
    if (!cJSON_IsObject(obj)) {
        return ck_loader_fail(l, "%s: expected an object", field);
    }
    char what[48];
    int rc = ck_loader_keys(l, obj, field, "slot", names);
    for (size_t i = 0; rc == CK_OK && names[i] != NULL; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, names[i]);
        snprintf(what, sizeof what, "%s \"%s\"", field, names[i]);
        if (item == NULL && optional != NULL && strcmp(names[i], optional) == 0) {
            out[i] = -1; /* an optional slot left out (conv1d's bias) */
            continue;
        }
        rc = item ? ck_loader_lookup(l, item, what, is_weight, &out[i])
                  : ck_loader_fail(l, "%s: missing slot \"%s\"", field, names[i]);
    }
    return rc;
}

/* A number param: must be present, finite and > 0 as a float. */
static int number_param(ck_loader *l, const cJSON *item, const char *name, float *value)
{
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || !((float)item->valuedouble > 0.0f)) {
        return ck_loader_fail(l, "params \"%s\": expected a finite number > 0", name);
    }
    *value = (float)item->valuedouble;
    return CK_OK;
}

/* The op's params, as its table row lists them (names, types, defaults) in order: a default may
 * depend on a param before it (attention's scale on head_dim). */
static int parse_params(ck_loader *l, const cJSON *params, ck_op *op)
{
    const ck_op_param *defs = ck_op_defs[op->kind].params;
    const char *names[CK_OP_PARAMS_MAX + 1] = {NULL};
    if (params != NULL && !cJSON_IsObject(params)) {
        return ck_loader_fail(l, "params: expected an object");
    }
    for (size_t i = 0; i < CK_OP_PARAMS_MAX && defs[i].name != NULL; i++) {
        names[i] = defs[i].name;
    }
    int rc = ck_loader_keys(l, params, "params", "param", names);
    for (size_t i = 0; rc == CK_OK && i < CK_OP_PARAMS_MAX && defs[i].name != NULL; i++) {
        char *field = (char *)op + defs[i].field;
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(params, defs[i].name);
        if (defs[i].type == CK_PARAM_OFFSET) {
            if (item != NULL && !ck_json_size(item, 0, CK_OP_PARAM_SIZE_MAX, (size_t *)(void *)field)) {
                rc = ck_loader_fail(l, "params \"%s\": expected an integer in 0..%d", defs[i].name,
                                    CK_OP_PARAM_SIZE_MAX);
            }
        } else if (defs[i].type == CK_PARAM_SIZE) {
            if (!ck_json_size(item, 1, CK_OP_PARAM_SIZE_MAX, (size_t *)(void *)field)) {
                rc = ck_loader_fail(l, "params \"%s\": expected an integer in 1..%d", defs[i].name,
                                    CK_OP_PARAM_SIZE_MAX);
            }
        } else if (item == NULL && defs[i].fallback != NULL) {
            *(float *)(void *)field = defs[i].fallback(op);
        } else {
            rc = number_param(l, item, defs[i].name, (float *)(void *)field);
        }
    }
    return rc;
}

/* Copies the checkpoint id with "{layer}" -> the 2-digit application index; rejects duplicates. */
static int expand_checkpoint(ck_loader *l, const cJSON *item, ck_op *op)
{
    char *dst = op->checkpoint;
    size_t n = 0;
    if (item == NULL) {
        return CK_OK;
    }
    if (!cJSON_IsString(item) || item->valuestring[0] == '\0') {
        return ck_loader_fail(l, "checkpoint: expected a non-empty string");
    }
    for (const char *s = item->valuestring; *s != '\0'; s++) {
        if (n + 3 > CK_CHECKPOINT_MAX) {
            return ck_loader_fail(l, "checkpoint: longer than %d bytes", CK_CHECKPOINT_MAX - 1);
        }
        if (*s != '{') {
            dst[n++] = *s;
        } else if (strncmp(s, "{layer}", 7) != 0) {
            return ck_loader_fail(l, "checkpoint: unknown placeholder in \"%s\"", item->valuestring);
        } else if (op->repeat_index < 0) {
            return ck_loader_fail(l, "checkpoint: \"{layer}\" outside a repeat");
        } else {
            dst[n++] = (char)('0' + op->repeat_index / 10);
            dst[n++] = (char)('0' + op->repeat_index % 10);
            s += 6;
        }
    }
    dst[n] = '\0';
    for (size_t i = 0; i < l->c->n_ops; i++) {
        if (strcmp(l->c->ops[i].checkpoint, dst) == 0) {
            return ck_loader_fail(l, "checkpoint: duplicate id \"%s\"", dst);
        }
    }
    return CK_OK;
}

/* The op table's geometry check (op_table.c), its message under this op's file and position. */
static int check_geometry(ck_loader *l, const ck_op *op)
{
    char msg[200];
    return ck_op_check(l->c, op, msg, sizeof msg) == CK_OK ? CK_OK : ck_loader_fail(l, "%s", msg);
}

/* In-place (out also an in) only where the op's row allows it (in_place); every in written before
 * (inputs count as written, and in a repeat the first application is what reaches here first). */
static int check_flow(ck_loader *l, const ck_op *op)
{
    const ck_op_def *def = &ck_op_defs[op->kind];
    for (size_t i = 0; def->in[i] != NULL; i++) {
        const char *slot = def->in[i];
        const char *name = l->c->buffers[op->inputs[i]].name;
        if (op->inputs[i] == op->output && !def->in_place) {
            char kinds[128];
            ck_op_in_place_kinds(kinds, sizeof kinds);
            return ck_loader_fail(l, "out: buffer \"%s\" is also in \"%s\" (in place is only "
                                  "allowed for %s)", name, slot, kinds);
        }
        if (!l->written[op->inputs[i]]) {
            return ck_loader_fail(l, "in \"%s\": buffer \"%s\" read before written", slot, name);
        }
        l->read[op->inputs[i]] = 1;
    }
    l->written[op->output] = 1;
    return CK_OK;
}

static int parse_kind(ck_loader *l, const cJSON *json, ck_op *op)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(json, "op");
    for (int k = 0; cJSON_IsString(kind) && k < CK_OP_KIND_COUNT; k++) {
        if (strcmp(kind->valuestring, ck_op_kind_name((ck_op_kind)k)) == 0) {
            op->kind = (ck_op_kind)k;
            return CK_OK;
        }
    }
    return ck_loader_fail(l, "op: unknown op kind \"%s\"",
                          cJSON_IsString(kind) ? kind->valuestring : "(not a name)");
}

/* Sets l->where for an op: top-level index, or repeat index.inner index plus the application. */
static void set_where(ck_loader *l, size_t top, const ck_op *op, const char *kind)
{
    if (op->repeat_index < 0) {
        snprintf(l->where, sizeof l->where, "op %zu \"%s\"", top, kind);
    } else {
        snprintf(l->where, sizeof l->where, "op %zu.%zu \"%s\" (application %d)", top,
                 op->decl_index, kind, op->repeat_index);
    }
}

/* Appends one op (application `app` of a repeat at top-level index `top`, or app -1). */
static int add_op(ck_loader *l, const cJSON *json, size_t top, size_t decl, int app)
{
    static const char *const keys[] = {"op", "in", "weights", "out", "params", "checkpoint", NULL};
    ck_op *op = &l->c->ops[l->c->n_ops];
    memset(op, 0, sizeof *op);
    op->decl_index = decl;
    op->repeat_index = app;
    op->output = -1;
    for (size_t i = 0; i < CK_MAX_SLOTS; i++) {
        op->inputs[i] = op->weights[i] = -1;
    }
    set_where(l, top, op, cJSON_IsString(cJSON_GetObjectItemCaseSensitive(json, "op"))
                              ? cJSON_GetObjectItemCaseSensitive(json, "op")->valuestring : "?");
    if (!cJSON_IsObject(json)) {
        return ck_loader_fail(l, "expected an object");
    }
    int rc = ck_loader_keys(l, json, "op", "field", keys);
    rc = rc ? rc : parse_kind(l, json, op);
    rc = rc ? rc : parse_slots(l, cJSON_GetObjectItemCaseSensitive(json, "in"), "in",
                               ck_op_defs[op->kind].in, 0, NULL, op->inputs);
    rc = rc ? rc : parse_slots(l, cJSON_GetObjectItemCaseSensitive(json, "weights"), "weights",
                               ck_op_defs[op->kind].weights, 1,
                               ck_op_defs[op->kind].optional_weight, op->weights);
    rc = rc ? rc : ck_loader_lookup(l, cJSON_GetObjectItemCaseSensitive(json, "out"), "out", 0,
                                    &op->output);
    op->padding = SIZE_MAX; /* conv1d: absent means 'same' */
    rc = rc ? rc : parse_params(l, cJSON_GetObjectItemCaseSensitive(json, "params"), op);
    rc = rc ? rc : expand_checkpoint(l, cJSON_GetObjectItemCaseSensitive(json, "checkpoint"), op);
    rc = rc ? rc : check_geometry(l, op);
    rc = rc ? rc : check_flow(l, op);
    const ck_op_def *def = &ck_op_defs[op->kind];
    int positions = ck_op_weight_slot(def, def->positions_weight);
    if (rc == CK_OK && positions >= 0 && l->c->max_positions == 0) {
        l->c->max_positions = l->c->weights[op->weights[positions]].shape[0];
        if (l->c->max_positions < 3) { /* else every line fails at run time, naming no circuit */
            rc = ck_loader_fail(l, "weights \"%s\": %zu rows, but a sequence needs at least 3 "
                                "positions (its two boundary tokens and one symbol)",
                                def->positions_weight, l->c->max_positions);
        }
    }
    l->c->n_ops += rc == CK_OK;
    return rc;
}

/* Validates a repeat block's shape ({"repeat": n, "ops": [plain ops]}) and returns n. */
static int check_repeat(ck_loader *l, const cJSON *block, size_t top, size_t *count)
{
    static const char *const keys[] = {"repeat", "ops", NULL};
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(block, "ops");
    snprintf(l->where, sizeof l->where, "op %zu \"repeat\"", top);
    int rc = ck_loader_keys(l, block, "repeat", "field", keys);
    if (rc == CK_OK && !ck_json_size(cJSON_GetObjectItemCaseSensitive(block, "repeat"), 1,
                                     CK_REPEAT_MAX, count)) {
        rc = ck_loader_fail(l, "repeat: expected an integer count in 1..%d", CK_REPEAT_MAX);
    }
    if (rc == CK_OK && (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) == 0)) {
        rc = ck_loader_fail(l, "ops: expected a non-empty array");
    }
    size_t inner = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, ops) {
        if (rc == CK_OK && cJSON_GetObjectItemCaseSensitive(item, "repeat") != NULL) {
            snprintf(l->where, sizeof l->where, "op %zu.%zu \"repeat\"", top, inner);
            rc = ck_loader_fail(l, "repeat: nested repeat");
        }
        inner++;
    }
    return rc;
}

/* Counts unrolled ops, validating every repeat block. */
static int count_ops(ck_loader *l, const cJSON *ops, size_t *n)
{
    size_t top = 0, count = 0;
    const cJSON *item;
    *n = 0;
    cJSON_ArrayForEach(item, ops) {
        if (cJSON_GetObjectItemCaseSensitive(item, "repeat") == NULL) {
            *n += 1;
        } else {
            int rc = check_repeat(l, item, top, &count);
            if (rc != CK_OK) {
                return rc;
            }
            *n += count * (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(item, "ops"));
        }
        top++;
    }
    l->where[0] = '\0';
    return CK_OK;
}

/* Every buffer that is not an output must be read by some op; every output must be written. */
static int check_buffers_used(ck_loader *l)
{
    l->where[0] = '\0';
    for (size_t b = 0; b < l->c->n_buffers; b++) {
        const ck_buffer *buf = &l->c->buffers[b];
        if (buf->role == CK_BUFFER_OUTPUT && !l->written[b]) {
            return ck_loader_fail(l, "buffers \"%s\": output never written", buf->name);
        }
        if (buf->role != CK_BUFFER_OUTPUT && !l->read[b]) {
            return ck_loader_fail(l, "buffers \"%s\": dead buffer (never read, not an output)",
                                  buf->name);
        }
    }
    return CK_OK;
}

int ck_circuit_parse_ops(ck_loader *l, const cJSON *ops)
{
    ck_circuit *c = l->c;
    size_t n = 0, top = 0;
    if (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) == 0) {
        return ck_loader_fail(l, "ops: expected a non-empty array");
    }
    int rc = count_ops(l, ops, &n);
    if (rc != CK_OK) {
        return rc;
    }
    c->ops = calloc(n ? n : 1, sizeof *c->ops);
    l->written = calloc(c->n_buffers + 1, 1);
    l->read = calloc(c->n_buffers + 1, 1);
    if (c->ops == NULL || l->written == NULL || l->read == NULL) {
        return ck_fail(l->err, CK_E_MEMORY, "%s: ops: out of memory", c->path);
    }
    l->written[c->ids_buffer] = l->written[c->positions_buffer] = 1;
    const cJSON *item;
    cJSON_ArrayForEach(item, ops) {
        const cJSON *repeat = cJSON_GetObjectItemCaseSensitive(item, "repeat");
        size_t count = repeat ? (size_t)repeat->valuedouble : 0;
        for (size_t app = 0; rc == CK_OK && app < count; app++) {
            size_t decl = 0;
            const cJSON *inner;
            cJSON_ArrayForEach(inner, cJSON_GetObjectItemCaseSensitive(item, "ops")) {
                rc = rc ? rc : add_op(l, inner, top, decl++, (int)app);
            }
        }
        rc = rc ? rc : (repeat ? CK_OK : add_op(l, item, top, top, -1));
        top++;
    }
    return rc ? rc : check_buffers_used(l);
}
