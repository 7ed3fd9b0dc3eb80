/* op_table.c - the op table (op_table.h): one row per op kind with its slots, params, geometry
 * check, scratch, split and run per dtype. Never parses JSON, never runs a kernel itself. */
#include "op_table.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "conv1d.h"
#include "lstm_recurrence.h"

/* ---- geometry checks ---- */

/* Buffer b in slot field/slot must have dtype and (cols != 0) cols. */
static int want_buffer(const ck_circuit *c, const char *field, const char *slot, int b,
                       ck_dtype dtype, size_t cols, char *msg, size_t cap)
{
    const ck_buffer *buf = &c->buffers[b];
    char where[48] = "";
    if (slot != NULL) {
        snprintf(where, sizeof where, " \"%s\"", slot);
    }
    if (buf->dtype != dtype) {
        snprintf(msg, cap, "%s%s: buffer \"%s\" has dtype %s, expected %s", field, where, buf->name,
                 ck_dtype_info(buf->dtype)->lower, ck_dtype_info(dtype)->lower);
        return CK_E_CIRCUIT;
    }
    if (cols != 0 && buf->cols != cols) {
        snprintf(msg, cap, "%s%s: buffer \"%s\" has %zu cols, expected %zu", field, where,
                 buf->name, buf->cols, cols);
        return CK_E_CIRCUIT;
    }
    return CK_OK;
}

/* Weight in slot i must have the given rank and shape (a 0 in want matches any size). */
static int want_weight(const ck_circuit *c, const ck_op *op, size_t i, size_t rank, size_t d0,
                       size_t d1, char *msg, size_t cap)
{
    const ck_weight_ref *w = &c->weights[op->weights[i]];
    const size_t want[2] = {d0, d1};
    int ok = w->rank == rank;
    for (size_t k = 0; ok && k < rank; k++) {
        ok = want[k] == 0 || w->shape[k] == want[k];
    }
    if (ok) {
        return CK_OK;
    }
    char got[64] = "", expected[64] = "";
    for (size_t k = 0; k < w->rank; k++) {
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", k ? "," : "", w->shape[k]);
    }
    for (size_t k = 0; k < rank; k++) {
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected),
                 want[k] ? "%s%zu" : "%s?", k ? "," : "", want[k]);
    }
    snprintf(msg, cap, "weights \"%s\": \"%s\" has shape [%s], expected [%s]",
             ck_op_defs[op->kind].weights[i], w->name, got, expected);
    return CK_E_CIRCUIT;
}

/* The f32 input slots [from, to) all have `cols` columns (0: any). */
static int want_inputs(const ck_circuit *c, const ck_op *op, size_t from, size_t to, size_t cols,
                       char *msg, size_t cap)
{
    int rc = CK_OK;
    for (size_t i = from; rc == CK_OK && i < to; i++) {
        rc = want_buffer(c, "in", ck_op_defs[op->kind].in[i], op->inputs[i], CK_DTYPE_F32, cols,
                         msg, cap);
    }
    return rc;
}

/* ids, positions [T] i32; word [V,E], position [P,E], token type [K,E], gamma, beta [E] */
static int check_embedding(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = CK_OK;
    for (size_t i = CK_EMB_IN_IDS; rc == CK_OK && i <= CK_EMB_IN_POSITIONS; i++) {
        rc = want_buffer(c, "in", ck_op_defs[op->kind].in[i], op->inputs[i], CK_DTYPE_I32, 1, msg,
                         cap);
    }
    for (size_t i = CK_EMB_WORD; rc == CK_OK && i <= CK_EMB_BETA; i++) {
        rc = i < CK_EMB_GAMMA ? want_weight(c, op, i, 2, 0, cols, msg, cap)
                              : want_weight(c, op, i, 1, cols, 0, msg, cap);
    }
    return rc;
}

/* y [T,out] = x [T,in] W^T + b: weight [out,in], bias [out] */
static int check_linear(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, CK_LIN_IN_X, CK_LIN_IN_X + 1, 0, msg, cap);
    rc = rc ? rc : want_weight(c, op, CK_LIN_WEIGHT, 2, cols,
                               c->buffers[op->inputs[CK_LIN_IN_X]].cols, msg, cap);
    return rc ? rc : want_weight(c, op, CK_LIN_BIAS, 1, cols, 0, msg, cap);
}

/* q, k, v, context all [T, H*D] */
static int check_attention(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    if (op->heads * op->head_dim != cols) {
        snprintf(msg, cap, "params \"heads\" x \"head_dim\": %zu x %zu, but out \"%s\" has %zu cols",
                 op->heads, op->head_dim, c->buffers[op->output].name, cols);
        return CK_E_CIRCUIT;
    }
    return want_inputs(c, op, CK_ATT_IN_Q, CK_ATT_IN_V + 1, cols, msg, cap);
}

/* x, residual, gamma, beta all [.., C] */
static int check_residual_layer_norm(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, CK_RLN_IN_X, CK_RLN_IN_RESIDUAL + 1, cols, msg, cap);
    rc = rc ? rc : want_weight(c, op, CK_RLN_GAMMA, 1, cols, 0, msg, cap);
    return rc ? rc : want_weight(c, op, CK_RLN_BETA, 1, cols, 0, msg, cap);
}

/* y [T,out] = conv1d(x [T,in]): weight [out,in,K] with K odd ('same' padding (K-1)/2), bias [out] */
/* Buffer b (slot, "out" when NULL) has the frames code `want` (K + B CK_FRAMES_ADD_UNIT): the
 * generator's rate changes. want 0 (an impossible input) fails too. */
static int want_rows(const ck_circuit *c, const ck_op *op, int b, const char *slot, size_t want,
                     char *msg, size_t cap)
{
    const size_t got = c->buffers[b].frames;
    if (want != 0 && got == want) {
        return CK_OK;
    }
    snprintf(msg, cap, "%s%s%s \"%s\": rows frames*%zu+%zu, expected frames*%zu+%zu (%s)",
             slot ? "in \"" : "out", slot ? slot : "", slot ? "\"" : "", c->buffers[b].name,
             ck_frames_k(got), ck_frames_b(got), ck_frames_k(want), ck_frames_b(want),
             ck_op_defs[op->kind].name);
    return CK_E_CIRCUIT;
}

/* f0 [FK,1] (frame rows) -> noise [F 300K, 9] */
static int check_noise_normal(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t f0 = c->buffers[op->inputs[0]].frames;
    int rc = want_inputs(c, op, 0, 1, 1, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->inputs[0], "f0", ck_frames_b(f0) == 0 ? f0 : 0, msg, cap);
    rc = rc ? rc : want_buffer(c, "out", NULL, op->output, CK_DTYPE_F32, 9, msg, cap);
    return rc ? rc : want_rows(c, op, op->output, NULL, 300 * ck_frames_k(f0), msg, cap);
}

/* f0 [FK,1], noise [F 300K, 9]; weight [1,9], bias [1]; out [F 300K, 1] */
static int check_harmonic_source(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t f0 = c->buffers[op->inputs[0]].frames, samples = 300 * ck_frames_k(f0);
    int rc = want_inputs(c, op, 0, 1, 1, msg, cap);
    rc = rc ? rc : want_inputs(c, op, 1, 2, 9, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->inputs[0], "f0", ck_frames_b(f0) == 0 ? f0 : 0, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->inputs[1], "noise", samples, msg, cap);
    rc = rc ? rc : want_buffer(c, "out", NULL, op->output, CK_DTYPE_F32, 1, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->output, NULL, samples, msg, cap);
    rc = rc ? rc : want_weight(c, op, 0, 2, 1, 9, msg, cap);
    return rc ? rc : want_weight(c, op, 1, 1, 1, 0, msg, cap);
}

/* x [F 5K, 1] -> [F K + 1, 22] */
static int check_stft20(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t x = c->buffers[op->inputs[0]].frames;
    const int ok = ck_frames_b(x) == 0 && ck_frames_k(x) % 5 == 0;
    int rc = want_inputs(c, op, 0, 1, 1, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->inputs[0], "x", ok ? x : 0, msg, cap);
    rc = rc ? rc : want_buffer(c, "out", NULL, op->output, CK_DTYPE_F32, 22, msg, cap);
    return rc ? rc : want_rows(c, op, op->output, NULL, ck_frames_k(x) / 5 + CK_FRAMES_ADD_UNIT,
                               msg, cap);
}

/* x [F K + 1, 22] -> audio [F 5K, 1] */
static int check_istft20(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t x = c->buffers[op->inputs[0]].frames;
    int rc = want_inputs(c, op, 0, 1, 22, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->inputs[0], "x", ck_frames_b(x) == 1 ? x : 0, msg, cap);
    rc = rc ? rc : want_buffer(c, "out", NULL, op->output, CK_DTYPE_F32, 1, msg, cap);
    return rc ? rc : want_rows(c, op, op->output, NULL, 5 * ck_frames_k(x), msg, cap);
}

/* x [FK, C] -> [FK + 1, C] */
static int check_reflect_pad(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t x = c->buffers[op->inputs[0]].frames;
    int rc = want_inputs(c, op, 0, 1, c->buffers[op->output].cols, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->inputs[0], "x", ck_frames_b(x) == 0 ? x : 0, msg, cap);
    return rc ? rc : want_rows(c, op, op->output, NULL, x + CK_FRAMES_ADD_UNIT, msg, cap);
}

/* x [FK, Cin] -> [F stride K, C]; weight [Cin, C, K] with K - stride even, bias [C] */
static int check_conv_transpose_col2im(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t x = c->buffers[op->inputs[0]].frames, cols = c->buffers[op->output].cols;
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    int rc = want_inputs(c, op, 0, 1, 0, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->inputs[0], "x", ck_frames_b(x) == 0 ? x : 0, msg, cap);
    rc = rc ? rc : want_rows(c, op, op->output, NULL,
                             op->stride * ck_frames_k(x) <= CK_FRAMES_SCALE_MAX
                                 ? op->stride * ck_frames_k(x) : 0, msg, cap);
    if (rc == CK_OK && (w->rank != 3 || w->shape[0] != c->buffers[op->inputs[0]].cols ||
                        w->shape[1] != cols || w->shape[2] < op->stride ||
                        (w->shape[2] - op->stride) % 2 != 0)) {
        snprintf(msg, cap, "weights \"weight\": \"%s\" must be [%zu,%zu,K] (in, out, taps) with "
                 "K - stride even and >= 0", w->name, c->buffers[op->inputs[0]].cols, cols);
        return CK_E_CIRCUIT;
    }
    return rc ? rc : want_weight(c, op, CK_LIN_BIAS, 1, cols, 0, msg, cap);
}

/* Frames code of a conv's output: L_out = floor((L + 2 pad - span) / stride) + 1 per sequence of
 * L = K f + B rows (span = dilation (taps - 1) + 1), i.e. (K / stride) f + B' with
 * B' = floor((B + 2 pad - span) / stride) + 1; 0 when stride does not divide K or B' is out of range. */
static size_t conv_out_code(size_t in, size_t span, size_t stride, size_t pad)
{
    const size_t k = ck_frames_k(in);
    const long num = (long)ck_frames_b(in) + 2 * (long)pad - (long)span, st = (long)stride;
    const long bo = (num >= 0 ? num / st : -((-num + st - 1) / st)) + 1;
    if (k % stride != 0 || bo < 0 || bo > CK_FRAMES_ADD_MAX) {
        return 0;
    }
    return k / stride + (size_t)bo * CK_FRAMES_ADD_UNIT;
}

static int check_conv1d(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols, in = c->buffers[op->inputs[0]].cols;
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    int rc = want_inputs(c, op, 0, 1, 0, msg, cap);
    const size_t dil = op->dilation ? op->dilation : 1, st = op->stride ? op->stride : 1;
    const int same = op->padding == SIZE_MAX && st == 1;
    if (rc == CK_OK && (w->rank != 3 || w->shape[0] != cols || w->shape[1] != in ||
                        (same && w->shape[2] % 2 == 0) ||
                        (!same && op->padding == SIZE_MAX))) {
        snprintf(msg, cap, "weights \"weight\": \"%s\" must be [%zu,%zu,K] with K odd (out, in, "
                 "taps; an even K or a stride needs params padding)", w->name, cols, in);
        return CK_E_CIRCUIT;
    }
    const size_t rin = c->buffers[op->inputs[0]].frames, rout = c->buffers[op->output].frames;
    const size_t pad = op->padding == SIZE_MAX ? dil * (w->shape[2] - 1) / 2 : op->padding;
    size_t want = rin;
    if (rc == CK_OK && rin != 0 && (st != 1 || 2 * pad != dil * (w->shape[2] - 1))) {
        want = conv_out_code(rin, dil * (w->shape[2] - 1) + 1, st, pad);
    }
    if (rc == CK_OK && rin == 0 && (st != 1 || dil * (w->shape[2] - 1) != 2 * pad)) {
        snprintf(msg, cap, "params: a strided or not 'same' conv1d needs frame rows");
        return CK_E_CIRCUIT;
    }
    if (rc == CK_OK && want != rout) {
        snprintf(msg, cap, "out \"%s\": rows code %zu, expected %zu (torch's L_out from the "
                 "input's rows, padding %zu, dilation %zu, stride %zu)", c->buffers[op->output].name,
                 rout, want, pad, dil, st);
        return CK_E_CIRCUIT;
    }
    return rc || op->weights[CK_LIN_BIAS] < 0 ? rc /* the bias is optional */
                                              : want_weight(c, op, CK_LIN_BIAS, 1, cols, 0, msg, cap);
}

/* gates, gates_reverse [T,4H]; w_hh, w_hh_reverse [4H,H]; b_hh, b_hh_reverse [4H]; out [T,2H] */
static int check_lstm_recurrence(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols, h = cols / 2;
    if (cols % 2 != 0) {
        snprintf(msg, cap, "out \"%s\" has %zu cols, expected 2H (forward | reverse)",
                 c->buffers[op->output].name, cols);
        return CK_E_CIRCUIT;
    }
    int rc = want_inputs(c, op, 0, 2, 4 * h, msg, cap);
    for (size_t i = 0; rc == CK_OK && i < 4; i += 2) {
        rc = want_weight(c, op, i, 2, 4 * h, h, msg, cap);
        rc = rc ? rc : want_weight(c, op, i + 1, 1, 4 * h, 0, msg, cap);
    }
    return rc;
}

/* ids [T] i32; table [V,C]; out [T,C] */
static int check_embedding_table(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    int rc = want_buffer(c, "in", "ids", op->inputs[0], CK_DTYPE_I32, 1, msg, cap);
    return rc ? rc : want_weight(c, op, 0, 2, 0, c->buffers[op->output].cols, msg, cap);
}

/* x [T,C]; out [T,C+D], D > 0 the style's width (checked against the batch when it runs) */
static int check_concat_style(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols, in = c->buffers[op->inputs[0]].cols;
    int rc = want_inputs(c, op, 0, 1, 0, msg, cap);
    if (rc == CK_OK && cols <= in) {
        snprintf(msg, cap, "out \"%s\" has %zu cols, expected more than in \"x\"'s %zu (x | style)",
                 c->buffers[op->output].name, cols, in);
        return CK_E_CIRCUIT;
    }
    return rc;
}

/* x [T,C]; fc weight [2C,D], fc bias [2C]; out [T,C] */
static int check_ada_layer_norm(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, 0, 1, cols, msg, cap);
    rc = rc ? rc : want_weight(c, op, 0, 2, 2 * cols, 0, msg, cap);
    return rc ? rc : want_weight(c, op, 1, 1, 2 * cols, 0, msg, cap);
}

/* AdaIN's fc as ada_layer_norm's, alpha [1,C,1] */
static int check_adain_snake(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    const ck_weight_ref *a = &c->weights[op->weights[2]];
    int rc = check_ada_layer_norm(c, op, msg, cap);
    if (rc == CK_OK && (a->rank != 3 || a->shape[0] != 1 || a->shape[1] != cols || a->shape[2] != 1)) {
        snprintf(msg, cap, "weights \"alpha\": \"%s\" must be [1,%zu,1]", a->name, cols);
        return CK_E_CIRCUIT;
    }
    return rc;
}

/* logits [T,B] f32; out frames [T] i32 (the row's out_dtype, checked first) */
static int check_duration(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    int rc = want_inputs(c, op, 0, 1, 0, msg, cap);
    return rc ? rc : want_buffer(c, "out", NULL, op->output, CK_DTYPE_I32, 1, msg, cap);
}

/* x [T,C], durations i32 [T] (the circuit's durations output); out [F,C] */
static int check_expand_rows(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    int rc = want_inputs(c, op, 0, 1, c->buffers[op->output].cols, msg, cap);
    rc = rc ? rc : want_buffer(c, "in", "durations", op->inputs[1], CK_DTYPE_I32, 1, msg, cap);
    if (rc == CK_OK && op->inputs[1] != c->durations_buffer) {
        snprintf(msg, cap, "in \"durations\": \"%s\" is not the circuit's durations output (the "
                 "frame offsets follow that buffer)", c->buffers[op->inputs[1]].name);
        return CK_E_CIRCUIT;
    }
    return rc;
}

/* x [FK,C]; weight [C,1,3], bias [C]; out [F2K,C] */
static int check_conv_transpose(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    const ck_weight_ref *w = &c->weights[op->weights[0]];
    int rc = want_inputs(c, op, 0, 1, cols, msg, cap);
    if (rc == CK_OK && (w->rank != 3 || w->shape[0] != cols || w->shape[1] != 1 ||
                        w->shape[2] != 3)) {
        snprintf(msg, cap, "weights \"weight\": \"%s\" must be [%zu,1,3] (depthwise, k 3)",
                 w->name, cols);
        return CK_E_CIRCUIT;
    }
    return rc ? rc : want_weight(c, op, 1, 1, cols, 0, msg, cap);
}

/* x [R,A], z [R,B]; out [R,A+B] */
static int check_concat_cols(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    const size_t a = c->buffers[op->inputs[0]].cols, z = c->buffers[op->inputs[1]].cols;
    int rc = want_inputs(c, op, 0, 2, 0, msg, cap);
    if (rc == CK_OK && a + z != cols) {
        snprintf(msg, cap, "out \"%s\" has %zu cols, expected %zu + %zu (x | z)",
                 c->buffers[op->output].name, cols, a, z);
        return CK_E_CIRCUIT;
    }
    return rc;
}

/* x, residual [R,C]; out [R,C] */
static int check_add_scaled(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    return want_inputs(c, op, 0, 2, c->buffers[op->output].cols, msg, cap);
}

/* The rows of op's buffers (ck_buffer frames) as its row's `rows` and `tokens_only` say. */
static int check_rows(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const ck_op_def *def = &ck_op_defs[op->kind];
    const size_t out = c->buffers[op->output].frames;
    if (def->rows == CK_ROWS_OWN) { /* the row's check relates the rows (want_rows) */
        return CK_OK;
    }
    const size_t in = def->rows == CK_ROWS_DOUBLE ? out / 2
                      : def->rows == CK_ROWS_HALF ? 2 * out
                      : def->rows == CK_ROWS_EXPAND ? 0 : out;
    if ((def->rows == CK_ROWS_EXPAND && out != 1) ||
        (def->rows == CK_ROWS_DOUBLE && (out % 2 != 0 || out == 0 || ck_frames_b(out) != 0)) ||
        (def->rows == CK_ROWS_HALF && (out == 0 || ck_frames_b(out) != 0 ||
                                       in > CK_FRAMES_SCALE_MAX)) ||
        (def->tokens_only && out != 0)) {
        snprintf(msg, cap, "out \"%s\": rows %s, expected %s", c->buffers[op->output].name,
                 out ? "frames" : "tokens",
                 def->rows == CK_ROWS_EXPAND ? "frames (the alignment writes one row per frame)"
                 : def->rows == CK_ROWS_DOUBLE ? "frames*2K (twice its input's rows)"
                 : def->rows == CK_ROWS_HALF ? "frames*K (half its input's frames*2K)"
                                               : "tokens (this op runs on token rows only)");
        return CK_E_CIRCUIT;
    }
    for (size_t i = 0; def->in[i] != NULL; i++) {
        const ck_buffer *b = &c->buffers[op->inputs[i]];
        if (b->frames != in) {
            snprintf(msg, cap, "in \"%s\": \"%s\" has rows %s*%zu, expected %s*%zu (its out's "
                     "rows%s)", def->in[i], b->name, b->frames ? "frames" : "tokens",
                     b->frames ? b->frames : 1, in ? "frames" : "tokens", in ? in : 1,
                     def->rows == CK_ROWS_SAME ? "" : " before the op's change of rate");
            return CK_E_CIRCUIT;
        }
    }
    return CK_OK;
}

/* x, gamma, beta all [.., C] */
static int check_layer_norm(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    const size_t cols = c->buffers[op->output].cols;
    int rc = want_inputs(c, op, 0, 1, cols, msg, cap);
    rc = rc ? rc : want_weight(c, op, 0, 1, cols, 0, msg, cap);
    return rc ? rc : want_weight(c, op, 1, 1, cols, 0, msg, cap);
}

/* elementwise (gelu_new and any op of one input x): x has out's cols */
static int check_elementwise(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    return want_inputs(c, op, 0, 1, c->buffers[op->output].cols, msg, cap);
}

/* ---- params and scratch ---- */

/* softmax(q k^T / sqrt(head_dim)): "Attention Is All You Need" eq. 1, as in HF AlbertAttention */
static float default_scale(const ck_op *op)
{
    return (float)(1.0 / sqrt((double)op->head_dim));
}

/* The AMX heads: the CPU has AMX-BF16 and the head dim is a multiple of 32 (the tiles' K). */
static int amx_heads(const ck_op *op, int amx_bf16)
{
    return amx_bf16 && op->head_dim % 32 == 0;
}

/* torch.nn.LeakyReLU's negative_slope default (Kokoro's decoder asks for 0.2 and 0.1) */
static float default_slope(const ck_op *op)
{
    (void)op;
    return 0.01f;
}

static int attention_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                             size_t *floats)
{
    (void)c;
    return dtype == CK_DTYPE_BF16 ? ck_attention_scratch__amx(max_seq_len, op->head_dim, floats)
                                  : ck_attention_scratch(max_seq_len, op->head_dim, floats);
}

/* one im2col tile: CK_CONV1D_TILE_ROWS rows of K*in floats */
static int conv1d_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                          size_t *floats)
{
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    const size_t tile = dtype == CK_DTYPE_BF16 ? CK_CONV1D_TILE_ROWS_BF16 : CK_CONV1D_TILE_ROWS;
    (void)max_seq_len;
    *floats = tile * w->shape[1] * w->shape[2]; /* dims <= 2^24 each: no overflow */
    return CK_OK;
}

/* the phase of one sequence's F0 frames: 9 per frame (max_len: the plan's max frames for a frame
 * op), times the f0 rows' K */
static int harmonic_scratch(const ck_circuit *c, const ck_op *op, size_t max_len, ck_dtype dtype,
                            size_t *floats)
{
    const size_t k = ck_frames_k(c->buffers[op->inputs[0]].frames);
    (void)dtype;
    if (k == 0 || max_len > SIZE_MAX / 9 / k) {
        return CK_E_SIZE;
    }
    *floats = 9 * k * max_len;
    return CK_OK;
}

/* the GEMM rows of one output tile: CK_CONV1D_TILE_ROWS frames and those the taps reach */
static int conv_transpose_scratch(const ck_circuit *c, const ck_op *op, size_t max_len, ck_dtype dtype,
                                  size_t *floats)
{
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    (void)max_len;
    /* bf16: the tile's input frames and those overlapping it fill one bf16 tile (steps.c) */
    *floats = (dtype == CK_DTYPE_BF16 ? CK_CONV1D_TILE_ROWS_BF16
                                      : CK_CONV1D_TILE_ROWS + w->shape[2] / op->stride + 2) *
              w->shape[1] * w->shape[2];
    return CK_OK;
}

/* per output row: each input row's 2 Cin Cout K products land on `stride` output rows */
static double conv_transpose_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    (void)seq_len;
    return 2.0 * (double)w->shape[0] * (double)w->shape[1] * (double)w->shape[2] /
           (double)(op->stride > 0 ? op->stride : 1);
}

/* the depthwise k3 s2 transpose: per output row, 3 taps / 2 of each channel, as multiply-adds */
static double conv_transpose_depthwise_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    (void)seq_len;
    return 2.0 * 3.0 / 2.0 * (double)c->buffers[op->output].cols;
}

/* per row: h W_hh^T of both directions, 4H gates over H inputs each (the gates' nonlinearities and
 * the cell update not counted) */
static double lstm_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    double h = (double)c->buffers[op->output].cols / 2.0;
    (void)seq_len;
    return 2.0 * 2.0 * 4.0 * h * h;
}

/* the recurrence's state and W_hh^T: ck_lstm_recurrence_scratch(H) */
static int lstm_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                        size_t *floats)
{
    (void)max_seq_len;
    (void)dtype;
    return ck_lstm_recurrence_scratch(c->buffers[op->output].cols / 2, floats);
}

/* torch.rsqrt(torch.tensor(2.0)): AdainResBlk1d's output scale (istftnet.py:380) */
static float default_rsqrt2(const ck_op *op)
{
    (void)op;
    return (float)(1.0 / sqrt(2.0));
}

/* gamma | beta of one sequence: 2C floats */
static int ada_scratch(const ck_circuit *c, const ck_op *op, size_t max_seq_len, ck_dtype dtype,
                       size_t *floats)
{
    (void)max_seq_len;
    (void)dtype;
    *floats = 2 * c->buffers[op->output].cols;
    return CK_OK;
}

/* ---- flops per token ---- */

/* x W^T: 2 K N per token */
static double linear_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    (void)seq_len;
    return 2.0 * (double)c->buffers[op->inputs[CK_LIN_IN_X]].cols *
           (double)c->buffers[op->output].cols;
}

/* q k^T and p v: 2 L C multiply-adds each per token */
static double attention_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    return 4.0 * (double)c->buffers[op->output].cols * (double)seq_len;
}

/* im2col rows times the packed weight: 2 K in out per token */
static double conv1d_flops(const ck_circuit *c, const ck_op *op, size_t seq_len)
{
    const ck_weight_ref *w = &c->weights[op->weights[CK_LIN_WEIGHT]];
    (void)seq_len;
    return 2.0 * (double)w->shape[0] * (double)w->shape[1] * (double)w->shape[2];
}

/* ---- the table ---- */

#define EPS_PARAM {"eps", CK_PARAM_FLOAT, offsetof(ck_op, eps), NULL}
#define STYLE_OFFSET_PARAM {"style_offset", CK_PARAM_OFFSET, offsetof(ck_op, style_offset), NULL}
/* A variant's function and its C name; with its row-range form (steps.h: FN_rows) */
#define F32_STEP(fn) fn, #fn, NULL, NULL, CK_DTYPE_F32, NULL
#define ROW_STEP(fn) fn, #fn, fn##_rows, #fn "_rows"

const ck_op_def ck_op_defs[] = {
    [CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM] = {
        .name = "embedding_three_table_layer_norm",
        .in = {"ids", "positions", NULL},
        .weights = {"word", "position", "token_type", "gamma", "beta", NULL},
        .params = {EPS_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_embedding, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_embedding)}},
        .op_class = CK_OP_CLASS_EMBEDDING, .tokens_only = 1,
        .vocab_weight = "word", .positions_weight = "position",
    },
    [CK_OP_LINEAR] = {
        .name = "linear",
        .in = {"x", NULL},
        .weights = {"weight", "bias", NULL},
        .check = check_linear, .split = CK_SPLIT_ROW_BLOCKS,
        /* one step function: the dtype is the oneDNN matmul's (ck_step.args.linear, made per
         * step.linear_slot), the I/O form the step's copies */
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_linear), CK_DTYPE_F32, NULL},
                [CK_DTYPE_BF16] = {ROW_STEP(ck_step_linear), CK_DTYPE_BF16, NULL},
                [CK_DTYPE_I8] = {ROW_STEP(ck_step_linear), CK_DTYPE_I8, NULL}},
        .op_class = CK_OP_CLASS_LINEAR, .dispatch_name = "linear",
        .fuses_next = "gelu_new", .uses_linear = 1, .weights_copied_at_init = 1,
        .flops = linear_flops,
    },
    [CK_OP_ATTENTION] = {
        .name = "attention",
        .in = {"q", "k", "v", NULL},
        .params = {{"heads", CK_PARAM_SIZE, offsetof(ck_op, heads), NULL},
                   {"head_dim", CK_PARAM_SIZE, offsetof(ck_op, head_dim), NULL},
                   {"scale", CK_PARAM_FLOAT, offsetof(ck_op, scale), default_scale},
                   {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_attention, .scratch = attention_scratch, .split = CK_SPLIT_SEQUENCE_HEADS,
        /* bf16: q k^T and p v on AMX tiles, where this CPU has them (else the f32 heads) */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_attention)},
                [CK_DTYPE_BF16] = {ck_step_attention_bf16, "ck_step_attention_bf16", NULL, NULL,
                                   CK_DTYPE_BF16, amx_heads}},
        .op_class = CK_OP_CLASS_ATTENTION, .dispatch_name = "attention", .tokens_only = 1,
        .flops = attention_flops,
    },
    [CK_OP_RESIDUAL_LAYER_NORM] = {
        .name = "residual_layer_norm",
        .in = {"x", "residual", NULL},
        .weights = {"gamma", "beta", NULL},
        .params = {EPS_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_residual_layer_norm, .split = CK_SPLIT_ROWS,
        /* bf16 programs: float statistics (the f32 rows and the bf16 copy stay f32 math) */
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_residual_layer_norm), CK_DTYPE_F32, NULL},
                [CK_DTYPE_BF16] = {ROW_STEP(ck_step_residual_layer_norm_bf16), CK_DTYPE_F32,
                                   NULL}},
        .op_class = CK_OP_CLASS_LAYER_NORM, .dispatch_name = "layer_norm", .copy_beside = 1,
    },
    [CK_OP_GELU_NEW] = {
        .name = "gelu_new",
        .in = {"x", NULL},
        .check = check_elementwise, .split = CK_SPLIT_ROWS, .in_place = 1,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_gelu_new), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_GELU, .dispatch_name = "gelu_new",
    },
    [CK_OP_LEAKY_RELU] = {
        .name = "leaky_relu",
        .in = {"x", NULL},
        .params = {{"slope", CK_PARAM_FLOAT, offsetof(ck_op, scale), default_slope},
                   {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_elementwise, .split = CK_SPLIT_ROWS, .in_place = 1,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_leaky_relu), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_OTHER,
    },
    [CK_OP_LAYER_NORM] = {
        .name = "layer_norm",
        .in = {"x", NULL},
        .weights = {"gamma", "beta", NULL},
        .params = {EPS_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_layer_norm, .split = CK_SPLIT_ROWS, .in_place = 1,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_layer_norm), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_LAYER_NORM,
    },
    [CK_OP_CONV1D] = {
        .name = "conv1d",
        .in = {"x", NULL},
        .weights = {"weight", "bias", NULL},
        .params = {{"dilation", CK_PARAM_OFFSET, offsetof(ck_op, dilation), NULL},
                   {"stride", CK_PARAM_OFFSET, offsetof(ck_op, stride), NULL},
                   {"padding", CK_PARAM_OFFSET, offsetof(ck_op, padding), NULL},
                   {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_conv1d, .scratch = conv1d_scratch, .split = CK_SPLIT_ROWS,
        .rows = CK_ROWS_OWN, /* check_conv1d: 'same' keeps the rows, a stride divides them */
        /* bf16: the f32 im2col rows of a larger tile, rounded by its bf16 linear as it stages
         * them (f32 accumulation); f32 on a speech circuit's token side (ck_op_precision_at) */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_conv1d)},
                [CK_DTYPE_BF16] = {ck_step_conv1d_bf16, "ck_step_conv1d_bf16", NULL, NULL,
                                   CK_DTYPE_BF16, NULL}},
        .op_class = CK_OP_CLASS_CONVOLUTION,
        .uses_linear = 1, .weights_copied_at_init = 1, .flops = conv1d_flops,
        .optional_weight = "bias",
    },
    [CK_OP_EMBEDDING] = {
        .name = "embedding",
        .in = {"ids", NULL},
        .weights = {"table", NULL},
        .check = check_embedding_table, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_embedding_table)}},
        .op_class = CK_OP_CLASS_EMBEDDING, .vocab_weight = "table", .tokens_only = 1,
    },
    [CK_OP_CONCAT_STYLE] = {
        .name = "concat_style",
        .in = {"x", NULL},
        .params = {STYLE_OFFSET_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_concat_style, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_concat_style)}},
        .op_class = CK_OP_CLASS_OTHER, .sequence_inputs = 1,
    },
    [CK_OP_ADA_LAYER_NORM] = {
        .name = "ada_layer_norm",
        .in = {"x", NULL},
        .weights = {"fc_weight", "fc_bias", NULL},
        .params = {EPS_PARAM, STYLE_OFFSET_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_ada_layer_norm, .scratch = ada_scratch,
        .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_ada_layer_norm)}},
        .op_class = CK_OP_CLASS_LAYER_NORM, .sequence_inputs = 1,
        .uses_linear = 1, .weights_copied_at_init = 1,
    },
    [CK_OP_DURATION] = {
        .name = "duration",
        .in = {"logits", NULL},
        .check = check_duration, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_duration)}},
        .op_class = CK_OP_CLASS_OTHER, .out_dtype = CK_DTYPE_I32, .sequence_inputs = 1,
        .tokens_only = 1,
    },
    [CK_OP_EXPAND_ROWS] = {
        .name = "expand_rows",
        .in = {"x", "durations", NULL},
        .check = check_expand_rows, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_expand_rows)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_EXPAND,
    },
    [CK_OP_UPSAMPLE_NEAREST2_ROWS] = {
        .name = "upsample_nearest2_rows",
        .in = {"x", NULL},
        .check = check_elementwise, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_upsample_nearest2_rows)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_DOUBLE,
    },
    [CK_OP_CONV_TRANSPOSE1D_DEPTHWISE_K3S2] = {
        .name = "conv_transpose1d_depthwise_k3s2",
        .in = {"x", NULL},
        .weights = {"weight", "bias", NULL},
        .check = check_conv_transpose, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_conv_transpose1d_depthwise_k3s2)}},
        .op_class = CK_OP_CLASS_CONVOLUTION, .flops = conv_transpose_depthwise_flops,
        .rows = CK_ROWS_DOUBLE,
    },
    [CK_OP_ADAIN_INSTANCE_NORM] = {
        .name = "adain_instance_norm",
        .in = {"x", NULL},
        .weights = {"fc_weight", "fc_bias", NULL},
        .params = {EPS_PARAM, STYLE_OFFSET_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_ada_layer_norm, .scratch = ada_scratch,
        .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_adain_instance_norm)}},
        .op_class = CK_OP_CLASS_OTHER, .sequence_inputs = 1,
        .uses_linear = 1, .weights_copied_at_init = 1,
    },
    [CK_OP_ADD_SCALED] = {
        .name = "add_scaled",
        .in = {"x", "residual", NULL},
        .params = {{"scale", CK_PARAM_FLOAT, offsetof(ck_op, scale), default_rsqrt2},
                   {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_add_scaled, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_add_scaled), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_OTHER,
    },
    [CK_OP_CONCAT_COLS] = {
        .name = "concat_cols",
        .in = {"x", "z", NULL},
        .check = check_concat_cols, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {ROW_STEP(ck_step_concat_cols), CK_DTYPE_F32, NULL}},
        .op_class = CK_OP_CLASS_OTHER,
    },
    [CK_OP_DOWNSAMPLE2_ROWS] = {
        .name = "downsample2_rows",
        .in = {"x", NULL},
        .check = check_elementwise, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_downsample2_rows)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_HALF,
    },
    [CK_OP_NOISE_NORMAL] = {
        .name = "noise_normal",
        .in = {"f0", NULL},
        .check = check_noise_normal, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_noise_normal)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_OWN,
    },
    [CK_OP_HARMONIC_SOURCE] = {
        .name = "harmonic_source",
        .in = {"f0", "noise", NULL},
        .weights = {"weight", "bias", NULL},
        .check = check_harmonic_source, .scratch = harmonic_scratch, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_harmonic_source)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_OWN,
    },
    [CK_OP_STFT20] = {
        .name = "stft20",
        .in = {"x", NULL},
        .check = check_stft20, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_stft20)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_OWN,
    },
    [CK_OP_ISTFT20] = {
        .name = "istft20",
        .in = {"x", NULL},
        .check = check_istft20, .split = CK_SPLIT_ROWS,
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_istft20)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_OWN,
    },
    [CK_OP_REFLECT_PAD_LEFT1] = {
        .name = "reflect_pad_left1",
        .in = {"x", NULL},
        .check = check_reflect_pad, .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_reflect_pad_left1)}},
        .op_class = CK_OP_CLASS_OTHER, .rows = CK_ROWS_OWN,
    },
    [CK_OP_ADAIN_SNAKE] = {
        .name = "adain_snake",
        .in = {"x", NULL},
        .weights = {"fc_weight", "fc_bias", "alpha", NULL},
        .params = {EPS_PARAM, STYLE_OFFSET_PARAM, {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_adain_snake, .scratch = ada_scratch, .in_place = 1,
        .split = CK_SPLIT_SEQUENCE_HEADS, /* sequences */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_adain_snake)}},
        .op_class = CK_OP_CLASS_OTHER, .sequence_inputs = 1, .uses_linear = 1,
    },
    [CK_OP_CONV_TRANSPOSE1D_COL2IM] = {
        .name = "conv_transpose1d_col2im",
        .in = {"x", NULL},
        .weights = {"weight", "bias", NULL},
        .params = {{"stride", CK_PARAM_SIZE, offsetof(ck_op, stride), NULL},
                   {NULL, CK_PARAM_FLOAT, 0, NULL}},
        .check = check_conv_transpose_col2im, .scratch = conv_transpose_scratch,
        .split = CK_SPLIT_ROWS,
        /* bf16: its GEMM (the linear of the packed Wt) in bf16; col2im and the bias f32 */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_conv_transpose1d_col2im)},
                [CK_DTYPE_BF16] = {ck_step_conv_transpose1d_col2im_bf16,
                                   "ck_step_conv_transpose1d_col2im_bf16", NULL, NULL,
                                   CK_DTYPE_BF16, NULL}},
        .op_class = CK_OP_CLASS_CONVOLUTION, .rows = CK_ROWS_OWN, .uses_linear = 1,
        .flops = conv_transpose_flops,
    },
    [CK_OP_LSTM_RECURRENCE] = {
        .name = "lstm_recurrence",
        .in = {"gates", "gates_reverse", NULL},
        .weights = {"w_hh", "b_hh", "w_hh_reverse", "b_hh_reverse", NULL},
        .check = check_lstm_recurrence, .scratch = lstm_scratch,
        .split = CK_SPLIT_SEQUENCE_HEADS, /* (sequence, direction) pairs, interleaved */
        .run = {[CK_DTYPE_F32] = {F32_STEP(ck_step_lstm_recurrence)}},
        .op_class = CK_OP_CLASS_LSTM, .flops = lstm_flops,
    },
};
_Static_assert(sizeof ck_op_defs / sizeof ck_op_defs[0] == CK_OP_KIND_COUNT,
               "ck_op_defs: one row per ck_op_kind");

const ck_op_def *ck_op_def_of(ck_op_kind kind)
{
    return (unsigned)kind < CK_OP_KIND_COUNT ? &ck_op_defs[kind] : NULL;
}

const char *ck_op_kind_name(ck_op_kind kind)
{
    return (unsigned)kind < CK_OP_KIND_COUNT ? ck_op_defs[kind].name : "unknown";
}

const ck_op_variant *ck_op_variant_of(const ck_op *op, ck_dtype precision, int amx_bf16)
{
    const ck_op_def *def = op != NULL ? ck_op_def_of(op->kind) : NULL;
    if (def == NULL || (unsigned)precision >= CK_DTYPE_COUNT) {
        return NULL;
    }
    const ck_op_variant *v = &def->run[precision];
    return v->fn != NULL && (v->usable == NULL || v->usable(op, amx_bf16)) ? v : &def->run[CK_DTYPE_F32];
}

ck_dtype ck_op_precision_at(const ck_circuit *c, size_t i, ck_dtype precision)
{
    for (size_t k = i; precision != CK_DTYPE_F32 && k < c->n_ops; k++) {
        if (c->ops[k].kind == CK_OP_DURATION) {
            return CK_DTYPE_F32; /* op i is on the token side */
        }
    }
    return precision;
}

ck_dtype ck_op_dtype(ck_op_kind kind, ck_dtype precision)
{
    const ck_op_def *def = ck_op_def_of(kind);
    return def != NULL && (unsigned)precision < CK_DTYPE_COUNT && def->run[precision].fn != NULL
               ? def->run[precision].computes : CK_DTYPE_F32;
}

int ck_op_weight_slot(const ck_op_def *def, const char *slot)
{
    for (int k = 0; slot != NULL && k < CK_MAX_SLOTS && def->weights[k] != NULL; k++) {
        if (strcmp(def->weights[k], slot) == 0) {
            return k;
        }
    }
    return -1;
}

double ck_circuit_flops_per_token(const ck_circuit *c, size_t seq_len)
{
    double flops = 0.0; /* integers below 2^53: exact in any order */
    for (size_t i = 0; i < c->n_ops; i++) {
        const ck_op_def *def = ck_op_def_of(c->ops[i].kind);
        flops += def != NULL && def->flops != NULL ? def->flops(c, &c->ops[i], seq_len) : 0.0;
    }
    return flops;
}

void ck_op_in_place_kinds(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < CK_OP_KIND_COUNT && used < cap; k++) {
        if (ck_op_defs[k].in_place) {
            int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", ck_op_defs[k].name);
            used += n > 0 ? (size_t)n : 0;
        }
    }
}

ck_dtype ck_precision_dtype(ck_precision precision)
{
    return precision == CK_PRECISION_BF16   ? CK_DTYPE_BF16
           : precision == CK_PRECISION_INT8 ? CK_DTYPE_I8
                                            : CK_DTYPE_F32;
}

int ck_op_precision_supported(ck_dtype precision)
{
    int ok = precision == CK_DTYPE_F32;
    for (int k = 0; !ok && (unsigned)precision < CK_DTYPE_COUNT && k < CK_OP_KIND_COUNT; k++) {
        ok = ck_op_defs[k].run[precision].fn != NULL;
    }
    return ok;
}

int ck_op_check(const ck_circuit *c, const ck_op *op, char *msg, size_t cap)
{
    int rc = want_buffer(c, "out", NULL, op->output, ck_op_defs[op->kind].out_dtype, 0, msg, cap);
    rc = rc ? rc : check_rows(c, op, msg, cap);
    return rc ? rc : ck_op_defs[op->kind].check(c, op, msg, cap);
}
