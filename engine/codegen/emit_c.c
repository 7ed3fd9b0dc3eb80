/* emit_c.c - the checked emitter: rejects a bad plan before printing anything, then prints the
 * lowered program as one C translation unit (constants, weight table, the fixed runtime prelude,
 * the step sequence through the op table's emit column, once step by step for X-Ray and once in
 * row-local runs, the entry table). Writes no file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "linear.h"
#include "ops_emit.h"

extern const unsigned char ck_codegen_prelude[]; /* prelude.inc, embedded by CMake */

/* ---- the plan check ---- */

static int check_buffer(const ck_circuit *c, const ck_plan *plan, size_t b, ck_error *err)
{
    const char *name = c->buffers[b].name;
    size_t off = plan->offsets[b], bytes = plan->bytes[b], arena = plan->arena_bytes;
    if (off >= arena) {
        return ck_fail(err, CK_E_SIZE, "emit: buffer \"%s\": offset %zu is at or past the arena "
                       "size %zu", name, off, arena);
    }
    if (bytes > arena - off) {
        return ck_fail(err, CK_E_SIZE, "emit: buffer \"%s\": bytes [%zu, %zu) run past the arena "
                       "size %zu", name, off, off + bytes, arena);
    }
    if (off % CK_ARENA_ALIGN != 0) {
        return ck_fail(err, CK_E_SIZE, "emit: buffer \"%s\": offset %zu is not %d-byte aligned",
                       name, off, CK_ARENA_ALIGN);
    }
    for (size_t a = 0; a < b; a++) {
        if (strcmp(c->buffers[a].name, name) == 0) {
            return ck_fail(err, CK_E_CIRCUIT, "emit: buffer \"%s\" defined twice (buffers %zu at "
                           "offset %zu and %zu at offset %zu)", name, a, plan->offsets[a], b, off);
        }
    }
    return CK_OK;
}

static int check_overlaps(const ck_circuit *c, const ck_plan *plan, ck_error *err)
{
    for (size_t a = 0; a < plan->n_buffers; a++) {
        for (size_t b = a + 1; b < plan->n_buffers; b++) {
            size_t oa = plan->offsets[a], ob = plan->offsets[b], op = 0;
            size_t ea = oa + plan->bytes[a], eb = ob + plan->bytes[b];
            if (oa < eb && ob < ea && plan->bytes[a] && plan->bytes[b] &&
                ck_plan_conflict(plan, a, b, &op)) {
                return ck_fail(err, CK_E_SIZE, "emit: buffers \"%s\" [%zu, %zu) and \"%s\" [%zu, "
                               "%zu) overlap and are both live at op %zu", c->buffers[a].name, oa,
                               ea, c->buffers[b].name, ob, eb, op);
            }
        }
    }
    return CK_OK;
}

/* A name printed into the unit (string literal, comment, file name) holds only [A-Za-z0-9_.,:+-]:
 * no quote, backslash, slash or star can end a literal or a comment, or leave DIR. */
static int check_name(const char *what, const char *name, ck_error *err)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:+-";
    size_t ok = strspn(name, safe);
    if (name[0] == '\0') {
        return ck_fail(err, CK_E_CIRCUIT, "emit: %s is empty", what);
    }
    if (name[ok] != '\0') {
        return ck_fail(err, CK_E_CIRCUIT, "emit: %s \"%s\": character %zu (0x%02x) cannot be "
                       "printed into generated C (allowed: letters, digits, _.,:+-)", what, name,
                       ok, (unsigned)(unsigned char)name[ok]);
    }
    return CK_OK;
}

static int check_names(const ck_circuit *c, ck_error *err)
{
    int rc = check_name("circuit name", c->name, err);
    for (size_t b = 0; rc == CK_OK && b < c->n_buffers; b++) {
        rc = check_name("buffer", c->buffers[b].name, err);
    }
    for (size_t w = 0; rc == CK_OK && w < c->n_weights; w++) {
        rc = check_name("weight", c->weights[w].name, err);
        rc = rc ? rc : check_name("checkpoint tensor", c->weights[w].checkpoint_name, err);
    }
    for (size_t i = 0; rc == CK_OK && i < c->n_ops; i++) {
        rc = c->ops[i].checkpoint[0] ? check_name("checkpoint", c->ops[i].checkpoint, err) : CK_OK;
    }
    return rc;
}

int ck_emit_check_plan(const ck_circuit *c, const ck_plan *plan, ck_error *err)
{
    if (c == NULL || plan == NULL || plan->n_buffers != c->n_buffers || plan->n_ops != c->n_ops) {
        return ck_fail(err, CK_E_ARG, "emit: null, or a plan not made for this circuit");
    }
    int named = check_names(c, err);
    if (named != CK_OK) {
        return named;
    }
    for (size_t b = 0; b < c->n_buffers; b++) {
        int rc = check_buffer(c, plan, b, err);
        if (rc != CK_OK) {
            return rc;
        }
    }
    for (size_t i = 0; i < c->n_ops; i++) {
        const ck_op_def *def = ck_op_def_of(c->ops[i].kind);
        for (size_t k = 0; def != NULL && def->weights[k] != NULL; k++) {
            int w = c->ops[i].weights[k];
            const int left_out = w < 0 && def->optional_weight != NULL &&
                                 strcmp(def->optional_weight, def->weights[k]) == 0;
            if (!left_out && (w < 0 || (size_t)w >= c->n_weights)) {
                return ck_fail(err, CK_E_CIRCUIT, "emit: op %zu \"%s\": weight \"%s\": index %d "
                               "is outside the %zu weights", i, def->name, def->weights[k], w,
                               c->n_weights);
            }
        }
    }
    return check_overlaps(c, plan, err);
}

/* ---- the translation unit ---- */

/* The step of each linear slot (its first), in slot order: the library's LINEARS[], made as the
 * executor makes them. */
static void linear_steps(const ck_program *p, const ck_step **of_slot)
{
    for (size_t i = p->n_steps; i-- > 0;) {
        if (p->steps[i].def->uses_linear) {
            of_slot[p->steps[i].linear_slot] = &p->steps[i];
        }
    }
}

static void emit_head(FILE *f, const ck_circuit *c, const ck_plan *plan, const ck_emit_identity *id)
{
    fprintf(f, "/* %s.c - generated by `ckbatch compile` (emitter %s) from circuit \"%s\".\n"
            " * circuit sha256 %s\n * key %s\n"
            " * precision %s, %s, max batch tokens %zu, max sequence %zu.\n"
            " * One call per step of the lowered program, planned arena offsets as constants; each\n"
            " * step's comment names its X-Ray checkpoint. Regenerate; do not edit. */\n"
            "#define _POSIX_C_SOURCE 200809L /* clock_gettime */\n"
            "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n\n"
            "#include \"arena.h\"\n#include \"ck_status.h\"\n#include \"compiled_abi.h\"\n"
            "#include \"conv1d.h\"\n#include \"conv_transpose1d_col2im.h\"\n#include \"linear.h\"\n#include \"parallel.h\"\n#include \"steps.h\"\n\n",
            c->name, id->emitter_version, c->name, id->circuit_sha256, id->key,
            ck_dtype_info(id->precision)->lower, id->fuse_gelu ? "linear+gelu_new fused" : "unfused",
            plan->limits.max_tokens, plan->limits.max_seq_len);
}

/* Per buffer: its byte offset, its frame dim (-1: token rows) and whether it is f32; the circuit's
 * frame dims (0: none, the encoder). */
static void emit_buffer_tables(FILE *f, const ck_circuit *c, const ck_plan *plan)
{
    fprintf(f, "#define N_FRAME_DIMS %zu\n", c->n_frame_dims);
    if (c->n_frame_dims > 0) { /* a loop bound (N_FRAME_DIMS 0: no loop, no variable) */
        fputs("static const size_t n_frame_dims = N_FRAME_DIMS;\n", f);
    }
    fputs("static const size_t BUFFER_OFFSET[N_BUFFERS] = {", f);
    for (size_t b = 0; b < c->n_buffers; b++) {
        fprintf(f, "%s%zuu", b ? ", " : "", plan->offsets[b]);
    }
    fputs("};\nstatic const int BUFFER_FRAME_SLOT[N_BUFFERS] = {", f);
    for (size_t b = 0; b < c->n_buffers; b++) {
        const size_t frames = c->buffers[b].frames;
        fprintf(f, "%s%d", b ? ", " : "", frames ? ck_circuit_frame_slot(c, frames) : -1);
    }
    fputs("};\nstatic const int BUFFER_F32[N_BUFFERS] = {", f);
    for (size_t b = 0; b < c->n_buffers; b++) {
        fprintf(f, "%s%d", b ? ", " : "", c->buffers[b].dtype == CK_DTYPE_F32);
    }
    fputs("};\n\n", f);
}

static void emit_constants(FILE *f, const ck_circuit *c, const ck_plan *plan, const ck_program *p,
                           size_t n_linears, ck_dtype precision)
{
    int hidden = c->hidden_buffer;
    fprintf(f, "#define COPIES_BYTES ((size_t)%zuu) /* the steps' bf16 copies */\n"
            "#define N_OP_KINDS %d\n", p->copies_bytes, (int)CK_OP_KIND_COUNT);
    fprintf(f, "#define ARENA_BYTES ((size_t)%zuu)\n#define SCRATCH_BYTES ((size_t)%zuu)\n"
            "#define MAX_TOKENS ((size_t)%zuu)\n#define MAX_SEQ_LEN ((size_t)%zuu)\n"
            "#define VOCAB ((size_t)%zuu)\n#define PRECISION CK_DTYPE_%s\n#define N_WEIGHTS %zu\n"
            "#define N_LINEARS %zu\n#define N_BUFFERS %zu\n"
            "#define IDS_OFFSET ((size_t)%zuu)\n#define POSITIONS_OFFSET ((size_t)%zuu)\n"
            "#define FEATURES_BUFFER %d\n#define FEATURES_OFFSET ((size_t)%zuu)\n"
            "#define HIDDEN_BUFFER %d\n#define HIDDEN_OFFSET ((size_t)%zuu)\n\n",
            plan->arena_bytes, plan->scratch_bytes, plan->limits.max_tokens,
            plan->limits.max_seq_len, p->vocab,
            ck_dtype_info(precision)->name, c->n_weights, n_linears,
            c->n_buffers, plan->offsets[c->ids_buffer], plan->offsets[c->positions_buffer],
            c->features_buffer, plan->offsets[c->features_buffer], hidden,
            hidden >= 0 ? plan->offsets[hidden] : 0);
    fputs("/* buffer: planned byte offset, bytes, cols (every buffer is [T, cols]) */\n", f);
    for (size_t b = 0; b < c->n_buffers; b++) {
        fprintf(f, "/*   %-12s %10zu  +%-10zu %5zu */\n", c->buffers[b].name, plan->offsets[b],
                plan->bytes[b], c->buffers[b].cols);
    }
    fprintf(f, "static const size_t n_buffers = N_BUFFERS;\n"
            "static const size_t BUFFER_COLS[N_BUFFERS] = {");
    for (size_t b = 0; b < c->n_buffers; b++) {
        fprintf(f, "%s%zu", b ? ", " : "", c->buffers[b].cols);
    }
    fputs("};\n", f);
    emit_buffer_tables(f, c, plan);
}

static void emit_tables(FILE *f, const ck_circuit *c, const ck_step *const *of_slot,
                        size_t n_linears)
{
    fputs("static const ck_compiled_weight WEIGHTS[N_WEIGHTS] = {\n", f);
    for (size_t i = 0; i < c->n_weights; i++) {
        const ck_weight_ref *w = &c->weights[i];
        fprintf(f, "    {\"%s\", %zu, {", w->checkpoint_name, w->rank);
        for (size_t d = 0; d < w->rank; d++) {
            fprintf(f, "%s%zu", d ? ", " : "", w->shape[d]);
        }
        fprintf(f, "}, %zu}, /* %zu: %s */\n", w->elements, i, w->name);
    }
    fputs("};\n\ntypedef struct {\n    size_t weight;\n    int bias; /* -1: none */\n"
          "    size_t in, out;\n    ck_linear_activation activation;\n"
          "    ck_dtype dst; /* y's dtype */\n    ck_dtype compute; /* what it computes in */\n"
          "    int pack; /* 1: a conv1d's weight [out, in, K], 2: a ConvTranspose1d's [in, C, K],\n"
          "                 packed at init (shape); 0: a linear's [out, in] */\n"
          "    size_t shape[3];\n"
          "} gen_linear;\n\n"
          "static const gen_linear LINEARS[N_LINEARS + 1] = {\n", f);
    for (size_t i = 0; i < n_linears; i++) { /* as the executor's linear_for */
        const ck_step *s = of_slot[i];
        const ck_weight_ref *w = &c->weights[s->weight[CK_LIN_WEIGHT]];
        const int transpose = s->kind == CK_OP_CONV_TRANSPOSE1D_COL2IM;
        size_t in = transpose ? w->shape[0] : w->rank == 3 ? w->shape[1] * w->shape[2] : w->shape[1];
        size_t out = transpose ? w->shape[1] * w->shape[2] : w->shape[0];
        int bias = transpose || s->n_weights <= CK_LIN_BIAS || s->w[CK_LIN_BIAS] == NULL
                       ? -1 : s->weight[CK_LIN_BIAS]; /* a transpose adds its bias in col2im */
        fprintf(f, "    {%d, %d, %zu, %zu, %s, CK_DTYPE_%s, CK_DTYPE_%s, %d, {%zu, %zu, %zu}}, "
                "/* %s */\n", s->weight[CK_LIN_WEIGHT], bias, in, out,
                s->fused_gelu ? "CK_LINEAR_GELU_TANH" : "CK_LINEAR_PLAIN",
                ck_dtype_info(s->out_dtype)->name, ck_dtype_info(s->dtype)->name,
                w->rank == 3 ? (transpose ? 2 : 1) : 0, w->shape[0],
                w->rank >= 2 ? w->shape[1] : 0, w->rank == 3 ? w->shape[2] : 0, w->name);
    }
    fputs("    {0, 0, 0, 0, CK_LINEAR_PLAIN, CK_DTYPE_F32, CK_DTYPE_F32, 0, {0, 0, 0}} /* end */\n"
          "};\n"
          "static const size_t n_linears = N_LINEARS;\n\n", f);
}

/* "/_* step i: op ..., dtype; X-Ray id *_/" */
static void emit_step_comment(FILE *f, const ck_circuit *c, const ck_step *s, size_t i)
{
    const ck_op *op = &c->ops[s->op];
    fprintf(f, "    /* step %zu: op %zu %s%s", i, s->op, s->def->name,
            s->fused_gelu ? " + gelu_new" : "");
    if (op->repeat_index >= 0) {
        fprintf(f, " (application %d)", op->repeat_index);
    }
    fprintf(f, ", %s; X-Ray %s */\n", ck_dtype_info(s->dtype)->lower,
            s->checkpoint != NULL ? s->checkpoint : "(no checkpoint)");
}

/* "&st->batch", or "&st->fb[k]" for rows of frame dim k: the batch the executor passes (batch_of) */
static void emit_batch(FILE *f, const ck_circuit *c, size_t frames)
{
    int slot = ck_circuit_frame_slot(c, frames);
    if (frames == 0 || slot < 0) {
        fputs("&st->batch", f);
    } else {
        fprintf(f, "&st->fb[%d]", slot);
    }
}

/* 1 for the step after which the executor sets the frames (its set_frames) */
static int writes_durations(const ck_circuit *c, const ck_step *s)
{
    return s->out == c->durations_buffer && c->max_frames_scale > 0;
}

/* "STEP(kind, ck_step_<op>(<batch>, <operands>));", then FRAMES() after the durations */
static int emit_step_call(FILE *f, const ck_circuit *c, const ck_step *s)
{
    fprintf(f, "    STEP(%d /* %s */, %s(", (int)s->kind, s->def->name, s->variant->fn_name);
    emit_batch(f, c, s->rows_frames);
    fputs(", ", f);
    int rc = ck_op_emit[s->kind](f, c, s);
    fputs("));\n", f);
    if (writes_durations(c, s)) {
        fputs("    FRAMES(); /* the durations: each frame dim's rows and offsets */\n", f);
    }
    return rc;
}

static int emit_steps(FILE *f, const ck_circuit *c, const ck_program *p)
{
    fputs("\n/* ---- the lowered program, one step at a time (X-Ray captures between steps) ---- */\n\n"
          "static int run_steps(ck_compiled_state *st, ck_compiled_capture_fn capture, "
          "void *capture_ctx)\n{\n    int rc;\n    (void)capture;\n    (void)capture_ctx;\n", f);
    for (size_t i = 0; i < p->n_steps; i++) {
        const ck_step *s = &p->steps[i];
        emit_step_comment(f, c, s, i);
        int rc = emit_step_call(f, c, s);
        if (rc != CK_OK) {
            return rc;
        }
        if (s->capture_widen) {
            fprintf(f, "    CAPTURE_COPY(\"%s\", %zuu, %zuu, %zuu);\n", s->checkpoint, s->out_copy,
                    s->out_offset, s->out_cols);
        } else if (s->checkpoint != NULL) {
            fprintf(f, "    CAPTURE(\"%s\", %zuu, %zuu, ", s->checkpoint, s->out_offset,
                    s->out_cols);
            emit_batch(f, c, s->out_frames);
            fputs(");\n", f);
        }
    }
    fputs("    return CK_OK;\n}\n", f);
    return CK_OK;
}

/* run_rows: the same steps for runs without a capture, each row-local run of two or more steps
 * (ck_step.run_first) as one ck_step_rows. */
static int emit_runs(FILE *f, const ck_circuit *c, const ck_program *p)
{
    fputs("\n/* ---- the same steps in row-local runs (no capture): each run of two or more steps\n"
          " * below is one pass over the rows (steps.h, ck_step_rows), checked against the plan\n"
          " * when this file was written: every two of its buffers that share arena bytes share\n"
          " * them row for row ---- */\n\n"
          "static int run_rows(ck_compiled_state *st)\n{\n    int rc;\n", f);
    for (size_t i = 0; i < p->n_steps;) {
        size_t end = i + 1;
        while (end < p->n_steps && p->steps[end].run_first == i) {
            end++;
        }
        int rc = CK_OK;
        if (end - i == 1) {
            emit_step_comment(f, c, &p->steps[i], i);
            rc = emit_step_call(f, c, &p->steps[i]);
        } else {
            fprintf(f, "    /* steps %zu-%zu: one row-local run */\n    {\n"
                    "        const ck_step_row_item run[] = {\n", i, end - 1);
            for (size_t j = i; j < end && rc == CK_OK; j++) {
                const ck_step *s = &p->steps[j];
                fputs("    ", f);
                emit_step_comment(f, c, s, j);
                fprintf(f, "            {%s, ", s->variant->rows_name);
                rc = ck_op_emit[s->kind](f, c, s);
                fprintf(f, ", %d /* %s */},\n", (int)s->kind, s->def->name);
            }
            fputs("        };\n        ROWS(", f);
            emit_batch(f, c, p->steps[i].rows_frames);
            fputs(", run);\n    }\n", f);
        }
        if (rc != CK_OK) {
            return rc;
        }
        i = end;
    }
    fputs("    return CK_OK;\n}\n", f);
    return ferror(f) ? CK_E_IO : CK_OK;
}

static void emit_entry(FILE *f, const ck_circuit *c, const ck_plan *plan,
                       const ck_emit_identity *id, int sequence_inputs)
{
    fprintf(f, "\nstatic const ck_compiled_provenance PROVENANCE = {\n"
            "    \"%s\", \"%s\", \"%s\",\n    \"%s\",\n    \"%s\", %d, %zuu, %zuu,\n    \"%s\",\n};\n\n"
            "const ck_compiled_circuit ck_compiled_circuit_v1 = {\n"
            "    CK_COMPILED_ABI_VERSION, &PROVENANCE, ARENA_BYTES, N_WEIGHTS, WEIGHTS,\n"
            "    FEATURES_BUFFER, HIDDEN_BUFFER, VOCAB,\n"
            "    gen_init, gen_run, gen_rows, gen_cols, gen_linear_impl, gen_free,\n"
            "    N_OP_KINDS, gen_op_seconds, gen_reset_op_seconds,\n"
            "    N_FRAME_DIMS, %d, gen_set_inputs,\n};\n",
            c->name, id->circuit_sha256, id->emitter_version, id->key,
            ck_dtype_info(id->precision)->lower, id->fuse_gelu, plan->limits.max_tokens,
            plan->limits.max_seq_len, id->libraries_sha256 != NULL ? id->libraries_sha256 : "",
            sequence_inputs);
}

/* Circuit weight refs as tensors without data: lowering needs shapes only. */
static ck_tensor *shape_tensors(const ck_circuit *c, const ck_tensor ***bound)
{
    ck_tensor *t = calloc(c->n_weights ? c->n_weights : 1, sizeof *t);
    *bound = calloc(c->n_weights ? c->n_weights : 1, sizeof **bound);
    for (size_t i = 0; t != NULL && *bound != NULL && i < c->n_weights; i++) {
        t[i].rank = c->weights[i].rank;
        memcpy(t[i].shape, c->weights[i].shape, sizeof c->weights[i].shape);
        t[i].elements = c->weights[i].elements;
        (*bound)[i] = &t[i];
    }
    return t;
}

static int emit_all(FILE *f, const ck_circuit *c, const ck_plan *plan, const ck_program *p,
                    const ck_emit_identity *id, ck_error *err)
{
    int sequence_inputs = 0; /* the run inputs (ABI 3) carry the style, speed and noise */
    for (size_t i = 0; i < p->n_steps; i++) {
        sequence_inputs |= p->steps[i].def->sequence_inputs || p->steps[i].kind == CK_OP_NOISE_NORMAL;
    }
    const ck_step **of_slot = calloc(p->n_linears + 1, sizeof *of_slot);
    if (of_slot == NULL) {
        return ck_fail(err, CK_E_MEMORY, "emit: out of memory");
    }
    linear_steps(p, of_slot);
    emit_head(f, c, plan, id);
    emit_constants(f, c, plan, p, p->n_linears, id->precision);
    emit_tables(f, c, of_slot, p->n_linears);
    fputs((const char *)ck_codegen_prelude, f);
    int rc = emit_steps(f, c, p);
    rc = rc ? rc : emit_runs(f, c, p);
    emit_entry(f, c, plan, id, sequence_inputs);
    free(of_slot);
    return rc != CK_OK ? ck_fail(err, rc, "emit: write failed") : CK_OK;
}

int ck_emit_c(char **text, size_t *len, const ck_circuit *c, const ck_plan *plan,
              const ck_emit_identity *id, ck_error *err)
{
    if (text == NULL || len == NULL || id == NULL) {
        return ck_fail(err, CK_E_ARG, "emit: null text, len or identity");
    }
    *text = NULL;
    *len = 0;
    int rc = ck_emit_check_plan(c, plan, err);
    if (rc != CK_OK) {
        return rc;
    }
    const ck_tensor **bound = NULL;
    ck_tensor *shapes = shape_tensors(c, &bound);
    ck_program p = {0};
    if (id->precision != plan->limits.precision) {
        rc = ck_fail(err, CK_E_ARG, "emit: precision %s, but the plan was made for %s",
                     ck_dtype_info(id->precision)->lower,
                     ck_dtype_info(plan->limits.precision)->lower);
    }
    rc = rc != CK_OK ? rc
         : shapes && bound ? ck_program_lower(&p, c, plan, bound, id->fuse_gelu, err)
                           : ck_fail(err, CK_E_MEMORY, "emit: out of memory");
    FILE *f = rc == CK_OK ? open_memstream(text, len) : NULL;
    if (rc == CK_OK && f == NULL) {
        rc = ck_fail(err, CK_E_MEMORY, "emit: cannot open a memory stream");
    }
    if (rc == CK_OK) {
        rc = emit_all(f, c, plan, &p, id, err);
    }
    if (f != NULL && (fclose(f) != 0 || rc != CK_OK)) {
        rc = rc != CK_OK ? rc : ck_fail(err, CK_E_IO, "emit: write failed");
        free(*text);
        *text = NULL;
        *len = 0;
    }
    ck_program_free(&p);
    free(bound);
    free(shapes);
    return rc;
}
