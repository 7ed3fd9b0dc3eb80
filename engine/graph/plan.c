/* plan.c - the memory planner: buffer lifetimes over the unrolled ops, 64-byte aligned first-fit
 * placement in one activation arena, per-worker scratch size, and the plan and arena checks.
 * Plans only; never allocates an arena, never runs an op. */
#include "plan.h"

#include "ck_isa.h"
#include "linear.h"
#include "op_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a + b and a * b into *out; CK_E_SIZE on overflow. */
static int add_size(size_t a, size_t b, size_t *out)
{
    if (a > SIZE_MAX - b) {
        return CK_E_SIZE;
    }
    *out = a + b;
    return CK_OK;
}

static int mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) {
        return CK_E_SIZE;
    }
    *out = a * b;
    return CK_OK;
}

static int align_arena(size_t n, size_t *out)
{
    size_t padded = 0;
    int rc = add_size(n, CK_ARENA_ALIGN - 1, &padded);
    *out = padded - padded % CK_ARENA_ALIGN;
    return rc;
}

ck_plan_limits ck_plan_limits_for(ck_dtype precision, size_t max_tokens, size_t max_seq_len,
                                  int threads)
{
    return (ck_plan_limits){
        .max_tokens = max_tokens, .max_seq_len = max_seq_len, .threads = threads,
        .row_block = CK_LINEAR_ROW_BLOCK, .precision = precision,
        .amx_bf16 = precision != CK_DTYPE_F32 && ck_kernels_amx_bf16(),
    };
}

/* t rounded up to a multiple of block (block 0 or 1: t); SIZE_MAX on overflow */
static size_t round_rows(size_t t, size_t block)
{
    if (block <= 1 || t % block == 0) {
        return t;
    }
    return t <= SIZE_MAX - block ? t + (block - t % block) : SIZE_MAX; /* SIZE_MAX: overflow below */
}

size_t ck_plan_rows(const ck_plan *plan)
{
    return round_rows(plan->limits.max_tokens, plan->limits.row_block);
}

size_t ck_plan_dim_rows(const ck_plan *plan, size_t frames)
{
    size_t rows = 0;
    if (frames == 0) {
        return ck_plan_rows(plan);
    }
    size_t extra = 0; /* B rows per sequence: at most one sequence per token */
    return mul_size(plan->max_frames, ck_frames_k(frames), &rows) == CK_OK &&
                   mul_size(plan->limits.max_tokens, ck_frames_b(frames), &extra) == CK_OK &&
                   rows <= SIZE_MAX - extra
               ? round_rows(rows + extra, plan->limits.row_block) : SIZE_MAX;
}

/* Bytes of a [rows, cols] buffer of 4-byte elements (f32 and i32 alike), rounded up to 64. */
static int buffer_bytes(size_t rows, size_t cols, size_t *bytes)
{
    size_t elements = 0, raw = 0;
    int rc = mul_size(rows, cols, &elements);
    rc = rc ? rc : mul_size(elements, 4, &raw);
    return rc ? rc : align_arena(raw, bytes);
}

/* Scratch per worker, in floats: the most any op's row asks for at the longest sequence, each in
 * the dtype its step computes in (0 when no op needs scratch). */
static int scratch_floats(const ck_circuit *c, const ck_plan_limits *limits, size_t max_frames,
                          size_t *floats)
{
    *floats = 0;
    for (size_t i = 0; i < c->n_ops; i++) {
        const ck_op_def *def = ck_op_def_of(c->ops[i].kind);
        const ck_dtype precision = ck_op_precision_at(c, i, limits->precision);
        const ck_op_variant *v = ck_op_variant_of(&c->ops[i], precision, limits->amx_bf16);
        size_t need = 0;
        if (def != NULL && def->scratch != NULL && v != NULL) {
            /* a frame op's longest sequence: the plan's max frames */
            size_t len = c->buffers[c->ops[i].inputs[0]].frames ? max_frames : limits->max_seq_len;
            int rc = def->scratch(c, &c->ops[i], len, v->computes, &need);
            if (rc != CK_OK) {
                return rc;
            }
            *floats = need > *floats ? need : *floats;
        }
    }
    return CK_OK;
}

int ck_plan_conflict(const ck_plan *plan, size_t a, size_t b, size_t *at_op)
{
    for (size_t i = 0; i < plan->n_ops; i++) {
        const unsigned char *row = plan->live + i * plan->n_buffers;
        if (row[a] && row[b]) {
            if (at_op != NULL) {
                *at_op = i;
            }
            return 1;
        }
    }
    return 0;
}

static int bytes_overlap(const ck_plan *p, size_t a, size_t b)
{
    return p->bytes[a] != 0 && p->bytes[b] != 0 && p->offsets[a] < p->offsets[b] + p->bytes[b] &&
           p->offsets[b] < p->offsets[a] + p->bytes[a];
}

/* Backward liveness over the unrolled ops: walking from the last op, `needed` holds the buffers
 * whose current value a later op reads. At op i a buffer is live if it is needed after i or touched
 * by i; before i, the output's old value is no longer needed and the inputs are. So q of application
 * 0 dies after that application's attention and its bytes serve the FFN buffers until application
 * 1 writes q again. Inputs and outputs are live at every op. */
static void set_liveness(ck_plan *p, const ck_circuit *c, unsigned char *needed)
{
    const size_t n = c->n_buffers;
    memset(needed, 0, n);
    for (size_t i = c->n_ops; i-- > 0;) {
        const ck_op *op = &c->ops[i];
        unsigned char *row = p->live + i * n;
        for (size_t b = 0; b < n; b++) {
            row[b] = needed[b] || c->buffers[b].role != CK_BUFFER_ACTIVATION;
        }
        row[op->output] = 1;
        needed[op->output] = 0;
        for (size_t s = 0; s < CK_MAX_SLOTS; s++) {
            if (op->inputs[s] >= 0) {
                row[op->inputs[s]] = 1;
                needed[op->inputs[s]] = 1;
            }
        }
    }
}

/* Greedy first-fit, largest buffer first: each buffer goes at the lowest 64-aligned offset that
 * collides with no already placed buffer whose lifetime overlaps its own. Offsets stay below the
 * sum of all bytes, which the caller checked for overflow. */
static void place_buffers(ck_plan *p, size_t *order, unsigned char *placed)
{
    const size_t n = p->n_buffers;
    for (size_t i = 0; i < n; i++) { /* insertion sort by bytes descending, index ascending */
        size_t b = i, k = i;
        for (; k > 0 && p->bytes[order[k - 1]] < p->bytes[b]; k--) {
            order[k] = order[k - 1];
        }
        order[k] = b;
    }
    p->arena_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t b = order[i];
        p->offsets[b] = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (size_t j = 0; j < n; j++) {
                if (placed[j] && ck_plan_conflict(p, b, j, NULL) && bytes_overlap(p, b, j)) {
                    p->offsets[b] = p->offsets[j] + p->bytes[j];
                    moved = 1;
                }
            }
        }
        placed[b] = 1;
        if (p->offsets[b] + p->bytes[b] > p->arena_bytes) {
            p->arena_bytes = p->offsets[b] + p->bytes[b];
        }
    }
}

static int size_plan(ck_plan *p, const ck_circuit *c, ck_error *err)
{
    size_t total = 0, floats = 0;
    for (size_t b = 0; b < c->n_buffers; b++) {
        if (buffer_bytes(ck_plan_dim_rows(p, c->buffers[b].frames), c->buffers[b].cols,
                         &p->bytes[b]) != CK_OK ||
            add_size(total, p->bytes[b], &total) != CK_OK) {
            return ck_fail(err, CK_E_SIZE, "plan: buffer \"%s\": %zu %s x %zu cols overflows",
                           c->buffers[b].name, c->buffers[b].frames ? p->max_frames
                                                                    : p->limits.max_tokens,
                           c->buffers[b].frames ? "frames" : "tokens", c->buffers[b].cols);
        }
    }
    if (scratch_floats(c, &p->limits, p->max_frames, &floats) != CK_OK ||
        buffer_bytes(floats, 1, &p->scratch_bytes) != CK_OK) {
        return ck_fail(err, CK_E_SIZE, "plan: scratch for max_seq_len %zu overflows",
                       p->limits.max_seq_len);
    }
    return CK_OK;
}

int ck_plan_build(ck_plan *plan, const ck_circuit *c, const ck_plan_limits *limits, ck_error *err)
{
    return ck_plan_build_frames(plan, c, limits, 0, err);
}

int ck_plan_build_frames(ck_plan *plan, const ck_circuit *c, const ck_plan_limits *limits,
                         size_t max_frames, ck_error *err)
{
    if (plan == NULL || c == NULL || limits == NULL) {
        return ck_fail(err, CK_E_ARG, "plan: null plan, circuit or limits");
    }
    memset(plan, 0, sizeof *plan);
    if (limits->max_tokens == 0 || limits->max_seq_len == 0 || limits->threads <= 0) {
        return ck_fail(err, CK_E_ARG, "plan: limits: max_tokens %zu, max_seq_len %zu, threads %d: "
                       "each must be > 0", limits->max_tokens, limits->max_seq_len, limits->threads);
    }
    if (!ck_op_precision_supported(limits->precision)) {
        return ck_fail(err, CK_E_ARG, "plan: limits: precision %s: expected f32 or bf16",
                       ck_dtype_info(limits->precision)->lower);
    }
    if (c->max_frames_scale > 0 && max_frames == 0) {
        return ck_fail(err, CK_E_ARG, "plan: max_frames 0, but circuit \"%s\" has frame rows",
                       c->name);
    }
    if (limits->max_seq_len > c->max_positions) {
        return ck_fail(err, CK_E_ARG, "plan: limits: max_seq_len %zu above the circuit's %zu "
                       "positions", limits->max_seq_len, c->max_positions);
    }
    const size_t n = c->n_buffers ? c->n_buffers : 1;
    size_t *order = calloc(n, sizeof *order);
    unsigned char *placed = calloc(n, 1);
    int rc = CK_OK;
    plan->limits = *limits;
    plan->max_frames = c->max_frames_scale > 0 ? max_frames : 0;
    plan->n_buffers = c->n_buffers;
    plan->offsets = calloc(n, sizeof *plan->offsets);
    plan->bytes = calloc(n, sizeof *plan->bytes);
    plan->n_ops = c->n_ops;
    plan->live = calloc(c->n_ops ? c->n_ops * n : 1, 1);
    if (order == NULL || placed == NULL || plan->offsets == NULL || plan->bytes == NULL ||
        plan->live == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "plan: out of memory for %zu buffers", c->n_buffers);
        goto done;
    }
    set_liveness(plan, c, placed); /* placed doubles as the scratch `needed` set, then is reset */
    memset(placed, 0, n);
    rc = size_plan(plan, c, err);
    if (rc != CK_OK) {
        goto done;
    }
    place_buffers(plan, order, placed);
    rc = ck_plan_validate(plan, c, err);
done:
    free(order);
    free(placed);
    if (rc != CK_OK) {
        ck_plan_free(plan);
    }
    return rc;
}

/* One buffer: aligned, large enough for ck_plan_rows rows, inside the arena. */
static int validate_buffer(const ck_plan *plan, const ck_circuit *c, size_t b, ck_error *err)
{
    const char *name = c->buffers[b].name;
    size_t need = 0;
    if (plan->offsets[b] % CK_ARENA_ALIGN != 0) {
        return ck_fail(err, CK_E_SIZE, "plan: buffer \"%s\": offset %zu not %d-byte aligned", name,
                       plan->offsets[b], CK_ARENA_ALIGN);
    }
    if (buffer_bytes(ck_plan_dim_rows(plan, c->buffers[b].frames), c->buffers[b].cols, &need) !=
            CK_OK || plan->bytes[b] < need) {
        return ck_fail(err, CK_E_SIZE, "plan: buffer \"%s\": %zu bytes, %zu %s need %zu", name,
                       plan->bytes[b], c->buffers[b].frames ? plan->max_frames
                                                            : plan->limits.max_tokens,
                       c->buffers[b].frames ? "frames" : "tokens", need);
    }
    if (plan->offsets[b] > plan->arena_bytes ||
        plan->bytes[b] > plan->arena_bytes - plan->offsets[b]) {
        return ck_fail(err, CK_E_SIZE, "plan: buffer \"%s\": bytes [%zu, +%zu) exceed the arena of "
                       "%zu", name, plan->offsets[b], plan->bytes[b], plan->arena_bytes);
    }
    return CK_OK;
}

int ck_plan_validate(const ck_plan *plan, const ck_circuit *c, ck_error *err)
{
    if (plan == NULL || c == NULL || (plan->n_buffers != 0 && (plan->offsets == NULL ||
        plan->bytes == NULL || plan->live == NULL))) {
        return ck_fail(err, CK_E_ARG, "plan: null or unbuilt plan or circuit");
    }
    if (plan->n_buffers != c->n_buffers || plan->n_ops != c->n_ops) {
        return ck_fail(err, CK_E_SIZE, "plan: %zu buffers, circuit \"%s\" has %zu", plan->n_buffers,
                       c->name, c->n_buffers);
    }
    if (plan->arena_bytes % CK_ARENA_ALIGN != 0 || plan->scratch_bytes % CK_ARENA_ALIGN != 0) {
        return ck_fail(err, CK_E_SIZE, "plan: arena_bytes %zu or scratch_bytes %zu not a multiple "
                       "of %d", plan->arena_bytes, plan->scratch_bytes, CK_ARENA_ALIGN);
    }
    for (size_t b = 0; b < plan->n_buffers; b++) {
        int rc = validate_buffer(plan, c, b, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    for (size_t a = 0; a < plan->n_buffers; a++) {
        for (size_t b = a + 1; b < plan->n_buffers; b++) {
            size_t op = 0;
            if (bytes_overlap(plan, a, b) && ck_plan_conflict(plan, a, b, &op)) {
                return ck_fail(err, CK_E_SIZE, "plan: buffers \"%s\" and \"%s\" are both live at "
                               "op %zu and share bytes", c->buffers[a].name, c->buffers[b].name, op);
            }
        }
    }
    return CK_OK;
}

int ck_plan_check_arena(const ck_plan *plan, const void *arena, size_t arena_bytes, size_t tokens,
                        ck_error *err)
{
    if (plan == NULL || arena == NULL) {
        return ck_fail(err, CK_E_ARG, "arena: null plan or arena");
    }
    if ((uintptr_t)arena % CK_ARENA_ALIGN != 0) {
        return ck_fail(err, CK_E_SIZE, "arena: base %p not %d-byte aligned", arena,
                       CK_ARENA_ALIGN);
    }
    if (arena_bytes < plan->arena_bytes) {
        return ck_fail(err, CK_E_SIZE, "arena: %zu bytes, the plan needs %zu", arena_bytes,
                       plan->arena_bytes);
    }
    if (tokens > plan->limits.max_tokens) {
        return ck_fail(err, CK_E_SIZE, "arena: tokens %zu above the plan's max_tokens %zu", tokens,
                       plan->limits.max_tokens);
    }
    return CK_OK;
}

void ck_plan_free(ck_plan *plan)
{
    if (plan == NULL) {
        return;
    }
    free(plan->offsets);
    free(plan->bytes);
    free(plan->live);
    memset(plan, 0, sizeof *plan);
}
