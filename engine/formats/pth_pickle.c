/* pth_pickle.c - the restricted unpickler: one handler per allowed opcode, allowlisted globals only.
 * Must never call, import or execute anything a pickle names, and must bound every size it reads. */
#include "pth_pickle.h"

#include "byte_order.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const unsigned char *b;
    size_t n, pos, op_at;    /* op_at: offset of the opcode being run, for messages */
    const char *what;
    ck_pickle *p;
    ck_pv **stack;
    size_t sp;
    size_t marks[CK_PICKLE_MAX_MARKS];
    size_t n_marks;
    ck_pv **memo;
    size_t memo_cap, memo_count;
    int stopped;
    ck_error *err;
} vm;

typedef int (*op_fn)(vm *m, unsigned char op);

static const struct {
    const char *module, *name;
    ck_pv_global id;
} GLOBALS[] = {
    {"collections", "OrderedDict", CK_PG_ORDERED_DICT},
    {"torch._utils", "_rebuild_tensor_v2", CK_PG_REBUILD_TENSOR_V2},
    {"torch._utils", "_rebuild_parameter", CK_PG_REBUILD_PARAMETER},
    {"torch", "FloatStorage", CK_PG_FLOAT_STORAGE},
    {"torch", "HalfStorage", CK_PG_HALF_STORAGE},
    {"torch", "BFloat16Storage", CK_PG_BFLOAT16_STORAGE},
    {"torch", "LongStorage", CK_PG_LONG_STORAGE},
};
#define N_GLOBALS (sizeof GLOBALS / sizeof GLOBALS[0])

/* pickletools names of the opcodes this interpreter refuses, so the message names them. */
static const char *const REFUSED_NAMES[256] = {
    ['i'] = "INST", ['o'] = "OBJ", [0x81] = "NEWOBJ", [0x92] = "NEWOBJ_EX", ['P'] = "PERSID",
    [0x82] = "EXT1", [0x83] = "EXT2", [0x84] = "EXT4", ['I'] = "INT", ['L'] = "LONG",
    [0x8b] = "LONG4", ['F'] = "FLOAT", ['S'] = "STRING", ['T'] = "BINSTRING",
    ['U'] = "SHORT_BINSTRING", ['V'] = "UNICODE", ['B'] = "BINBYTES", ['C'] = "SHORT_BINBYTES",
    [0x8e] = "BINBYTES8", [0x96] = "BYTEARRAY8", [0x97] = "NEXT_BUFFER",
    [0x98] = "READONLY_BUFFER", [0x8f] = "EMPTY_SET", [0x90] = "ADDITEMS", [0x91] = "FROZENSET",
    ['l'] = "LIST", ['d'] = "DICT", ['p'] = "PUT", ['g'] = "GET", ['0'] = "POP", ['1'] = "POP_MARK",
    ['2'] = "DUP",
};

static int bad(vm *m, const char *fmt, const char *a)
{
    return ck_fail(m->err, CK_E_FORMAT, "%s: pickle offset %zu: opcode 0x%02x: %s%s", m->what,
                   m->op_at, m->b[m->op_at], fmt, a);
}

/* Takes k argument bytes of the current opcode. */
static int take(vm *m, size_t k, const unsigned char **at)
{
    if (k > m->n - m->pos) {
        return ck_fail(m->err, CK_E_FORMAT, "%s: pickle offset %zu: opcode 0x%02x: argument of %zu "
                       "bytes, %zu left (truncated or hostile length)", m->what, m->op_at,
                       m->b[m->op_at], k, m->n - m->pos);
    }
    *at = m->b + m->pos;
    m->pos += k;
    return CK_OK;
}

static ck_pv *new_value(vm *m, ck_pv_kind kind)
{
    ck_pv *v = calloc(1, sizeof *v);
    if (v == NULL) {
        ck_fail(m->err, CK_E_MEMORY, "%s: pickle: out of memory", m->what);
        return NULL;
    }
    v->kind = kind;
    v->next = m->p->all;
    m->p->all = v;
    return v;
}

static int push(vm *m, ck_pv *v)
{
    if (v == NULL) {
        return CK_E_MEMORY;
    }
    if (m->sp == CK_PICKLE_MAX_STACK) {
        return bad(m, "stack deeper than CK_PICKLE_MAX_STACK", "");
    }
    m->stack[m->sp++] = v;
    return CK_OK;
}

/* Pops one value that lies above the innermost MARK. */
static int pop(vm *m, ck_pv **v)
{
    size_t floor = m->n_marks > 0 ? m->marks[m->n_marks - 1] : 0;
    if (m->sp <= floor) {
        return bad(m, "stack underflow", "");
    }
    *v = m->stack[--m->sp];
    return CK_OK;
}

static int append_item(vm *m, ck_pv *c, ck_pv *item)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        ck_pv **items = realloc(c->items, cap * sizeof *items);
        if (items == NULL) {
            return ck_fail(m->err, CK_E_MEMORY, "%s: pickle: out of memory", m->what);
        }
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = item;
    return CK_OK;
}

/* ---- scalars ------------------------------------------------------------------------------ */

static int op_int(vm *m, unsigned char op)
{
    const unsigned char *a = NULL;
    size_t k = op == 'K' ? 1 : op == 'M' ? 2 : 4;
    int rc = take(m, k, &a);
    ck_pv *v = rc == CK_OK ? new_value(m, CK_PV_INT) : NULL;
    if (v == NULL) {
        return rc != CK_OK ? rc : CK_E_MEMORY;
    }
    v->i = op == 'J' ? (int64_t)(int32_t)(uint32_t)ck_le(a, 4) : (int64_t)ck_le(a, k);
    return push(m, v);
}

static int op_long1(vm *m, unsigned char op)
{
    const unsigned char *a = NULL;
    (void)op;
    int rc = take(m, 1, &a);
    size_t k = rc == CK_OK ? a[0] : 0;
    if (rc == CK_OK && k > 8) {
        return bad(m, "LONG1 wider than 8 bytes", "");
    }
    rc = rc == CK_OK ? take(m, k, &a) : rc;
    ck_pv *v = rc == CK_OK ? new_value(m, CK_PV_INT) : NULL;
    if (v == NULL) {
        return rc != CK_OK ? rc : CK_E_MEMORY;
    }
    uint64_t u = ck_le(a, k);
    if (k > 0 && k < 8 && (a[k - 1] & 0x80u)) {
        u |= ~(uint64_t)0 << (8 * k);  /* sign-extend the two's complement value */
    }
    v->i = (int64_t)u;
    return push(m, v);
}

static int op_float(vm *m, unsigned char op)
{
    const unsigned char *a = NULL;
    (void)op;
    int rc = take(m, 8, &a);
    ck_pv *v = rc == CK_OK ? new_value(m, CK_PV_FLOAT) : NULL;
    if (v == NULL) {
        return rc != CK_OK ? rc : CK_E_MEMORY;
    }
    uint64_t u = 0;
    for (size_t i = 0; i < 8; i++) {
        u = u << 8 | a[i];  /* BINFLOAT is big-endian */
    }
    memcpy(&v->f, &u, sizeof v->f);
    return push(m, v);
}

static int op_str(vm *m, unsigned char op)
{
    const unsigned char *a = NULL;
    size_t k = op == 0x8c ? 1 : op == 'X' ? 4 : 8;
    int rc = take(m, k, &a);
    uint64_t len = rc == CK_OK ? ck_le(a, k) : 0;
    if (rc == CK_OK && len > m->n - m->pos) {
        return ck_fail(m->err, CK_E_FORMAT, "%s: pickle offset %zu: string length %llu exceeds the "
                       "%zu bytes left", m->what, m->op_at, (unsigned long long)len, m->n - m->pos);
    }
    rc = rc == CK_OK ? take(m, (size_t)len, &a) : rc;
    ck_pv *v = rc == CK_OK ? new_value(m, CK_PV_STR) : NULL;
    if (v == NULL) {
        return rc != CK_OK ? rc : CK_E_MEMORY;
    }
    v->s = (const char *)a;
    v->len = (size_t)len;
    return push(m, v);
}

static int op_const(vm *m, unsigned char op)
{
    ck_pv *v = new_value(m, op == 'N' ? CK_PV_NONE : CK_PV_BOOL);
    if (v != NULL) {
        v->i = op == 0x88;
    }
    return push(m, v);
}

/* ---- containers --------------------------------------------------------------------------- */

static int op_empty(vm *m, unsigned char op)
{
    return push(m, new_value(m, op == ')' ? CK_PV_TUPLE : op == ']' ? CK_PV_LIST : CK_PV_DICT));
}

static int op_mark(vm *m, unsigned char op)
{
    (void)op;
    if (m->n_marks == CK_PICKLE_MAX_MARKS) {
        return bad(m, "more than CK_PICKLE_MAX_MARKS open MARKs", "");
    }
    m->marks[m->n_marks++] = m->sp;
    return CK_OK;
}

/* Moves stack[from .. sp) into container c and truncates the stack to `from`. */
static int gather(vm *m, ck_pv *c, size_t from)
{
    int rc = CK_OK;
    for (size_t i = from; i < m->sp && rc == CK_OK; i++) {
        rc = append_item(m, c, m->stack[i]);
    }
    m->sp = from;
    return rc;
}

static int pop_mark(vm *m, size_t *from)
{
    if (m->n_marks == 0) {
        return bad(m, "no open MARK", "");
    }
    *from = m->marks[--m->n_marks];
    return CK_OK;
}

static int op_tuple(vm *m, unsigned char op)
{
    size_t from = 0;
    int rc;
    if (op == 't') {
        rc = pop_mark(m, &from);
    } else {
        size_t k = (size_t)(op - 0x84);  /* TUPLE1..3 are 0x85..0x87 */
        size_t floor = m->n_marks > 0 ? m->marks[m->n_marks - 1] : 0;
        rc = m->sp - floor >= k ? CK_OK : bad(m, "stack underflow", "");
        from = m->sp - k;
    }
    ck_pv *t = rc == CK_OK ? new_value(m, CK_PV_TUPLE) : NULL;
    if (t == NULL) {
        return rc != CK_OK ? rc : CK_E_MEMORY;
    }
    rc = gather(m, t, from);
    return rc == CK_OK ? push(m, t) : rc;
}

/* APPEND, APPENDS, SETITEM, SETITEMS: items above the mark (or the top 1 / 2) into the container
 * just below them. */
static int op_fill(vm *m, unsigned char op)
{
    size_t from = 0;
    int many = op == 'e' || op == 'u', dict = op == 's' || op == 'u';
    int rc = many ? pop_mark(m, &from) : CK_OK;
    size_t floor = m->n_marks > 0 ? m->marks[m->n_marks - 1] : 0;
    if (!many) {
        from = m->sp >= (size_t)(dict ? 2 : 1) ? m->sp - (dict ? 2 : 1) : 0;
    }
    if (rc != CK_OK || from <= floor || from > m->sp) {
        return rc != CK_OK ? rc : bad(m, "no container below the items", "");
    }
    ck_pv *c = m->stack[from - 1];
    if (c->kind != (dict ? CK_PV_DICT : CK_PV_LIST) || (dict && (m->sp - from) % 2 != 0)) {
        return bad(m, dict ? "SETITEM(S) needs a dict and key/value pairs" : "APPEND(S) needs a list",
                   "");
    }
    return gather(m, c, from);
}

/* ---- memo --------------------------------------------------------------------------------- */

static int memo_index(vm *m, unsigned char op, size_t *idx)
{
    const unsigned char *a = NULL;
    size_t k = (op == 'q' || op == 'h') ? 1 : 4;
    int rc = take(m, k, &a);
    *idx = rc == CK_OK ? (size_t)ck_le(a, k) : 0;
    return rc;
}

static int memo_put(vm *m, size_t idx)
{
    if (m->sp == 0 || idx >= CK_PICKLE_MAX_MEMO) {
        return bad(m, m->sp == 0 ? "memo put with an empty stack" : "memo index above "
                   "CK_PICKLE_MAX_MEMO", "");
    }
    if (idx >= m->memo_cap) {
        size_t cap = idx + 1 > m->memo_cap * 2 ? idx + 1 : m->memo_cap * 2;
        ck_pv **memo = realloc(m->memo, cap * sizeof *memo);
        if (memo == NULL) {
            return ck_fail(m->err, CK_E_MEMORY, "%s: pickle: out of memory", m->what);
        }
        memset(memo + m->memo_cap, 0, (cap - m->memo_cap) * sizeof *memo);
        m->memo = memo;
        m->memo_cap = cap;
    }
    m->memo_count += m->memo[idx] == NULL;
    m->memo[idx] = m->stack[m->sp - 1];
    return CK_OK;
}

static int op_put(vm *m, unsigned char op)
{
    size_t idx = m->memo_count;
    int rc = op == 0x94 ? CK_OK : memo_index(m, op, &idx);
    return rc == CK_OK ? memo_put(m, idx) : rc;
}

static int op_get(vm *m, unsigned char op)
{
    size_t idx = 0;
    int rc = memo_index(m, op, &idx);
    if (rc == CK_OK && (idx >= m->memo_cap || m->memo[idx] == NULL)) {
        return ck_fail(m->err, CK_E_FORMAT, "%s: pickle offset %zu: memo index %zu out of range "
                       "(never put)", m->what, m->op_at, idx);
    }
    return rc == CK_OK ? push(m, m->memo[idx]) : rc;
}

/* ---- globals, persistent ids, reduce ------------------------------------------------------ */

static int resolve_global(vm *m, const char *mod, size_t mod_len, const char *name, size_t name_len)
{
    for (size_t i = 0; i < N_GLOBALS; i++) {
        if (strlen(GLOBALS[i].module) == mod_len && memcmp(GLOBALS[i].module, mod, mod_len) == 0 &&
            strlen(GLOBALS[i].name) == name_len && memcmp(GLOBALS[i].name, name, name_len) == 0) {
            ck_pv *v = new_value(m, CK_PV_GLOBAL);
            if (v != NULL) {
                v->global = GLOBALS[i].id;
            }
            return push(m, v);
        }
    }
    return ck_fail(m->err, CK_E_FORMAT, "%s: pickle offset %zu: global %.*s.%.*s is not allowed "
                   "(nothing is imported or called)", m->what, m->op_at, (int)(mod_len > 80 ? 80 :
                   mod_len), mod, (int)(name_len > 80 ? 80 : name_len), name);
}

/* GLOBAL "module\nname\n". */
static int op_global(vm *m, unsigned char op)
{
    const char *line[2];
    size_t len[2];
    (void)op;
    for (int k = 0; k < 2; k++) {
        const unsigned char *nl = memchr(m->b + m->pos, '\n', m->n - m->pos);
        if (nl == NULL) {
            return bad(m, "GLOBAL without a newline-terminated ", k ? "name" : "module");
        }
        line[k] = (const char *)m->b + m->pos;
        len[k] = (size_t)(nl - (m->b + m->pos));
        m->pos += len[k] + 1;
    }
    return resolve_global(m, line[0], len[0], line[1], len[1]);
}

static int op_stack_global(vm *m, unsigned char op)
{
    ck_pv *mod = NULL, *name = NULL;
    (void)op;
    int rc = pop(m, &name);
    rc = rc == CK_OK ? pop(m, &mod) : rc;
    if (rc == CK_OK && (mod->kind != CK_PV_STR || name->kind != CK_PV_STR)) {
        return bad(m, "STACK_GLOBAL needs two strings", "");
    }
    return rc == CK_OK ? resolve_global(m, mod->s, mod->len, name->s, name->len) : rc;
}

/* Persistent id ("storage", <storage type>, key, location, numel) -> STORAGE. */
static int op_persid(vm *m, unsigned char op)
{
    ck_pv *pid = NULL;
    (void)op;
    int rc = pop(m, &pid);
    if (rc != CK_OK) {
        return rc;
    }
    ck_pv **a = pid->items;
    if (pid->kind != CK_PV_TUPLE || pid->n != 5 || !ck_pv_str_is(a[0], "storage") ||
        a[1]->kind != CK_PV_GLOBAL || a[1]->global < CK_PG_FLOAT_STORAGE ||
        a[2]->kind != CK_PV_STR || a[3]->kind != CK_PV_STR || a[4]->kind != CK_PV_INT ||
        a[4]->i < 0) {
        return bad(m, "persistent id is not (\"storage\", Float/Half/BFloat16/LongStorage, key, "
                   "location, numel)", "");
    }
    ck_pv *s = new_value(m, CK_PV_STORAGE);
    if (s != NULL) {
        /* Float, Half, BFloat16, LongStorage, in CK_PG_*_STORAGE order */
        static const char *const of_storage[] = {"F32", "F16", "BF16", "I64"};
        s->dtype = ck_dtype_from_name(of_storage[a[1]->global - CK_PG_FLOAT_STORAGE]);
        s->key = a[2];
        s->numel = (size_t)a[4]->i;
    }
    return push(m, s);
}

/* Ints of tuple t (each >= 0) into out[t->n]; 0 when t is not such a tuple of rank <= 8. */
static int size_tuple(const ck_pv *t, size_t *out)
{
    if (t->kind != CK_PV_TUPLE || t->n > CK_ST_MAX_RANK) {
        return 0;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (t->items[i]->kind != CK_PV_INT || t->items[i]->i < 0) {
            return 0;
        }
        out[i] = (size_t)t->items[i]->i;
    }
    return 1;
}

/* _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks[, metadata]). */
static int rebuild_tensor(vm *m, const ck_pv *args)
{
    ck_pv **a = args->items;
    ck_pv *t = new_value(m, CK_PV_TENSOR);
    if (t == NULL) {
        return CK_E_MEMORY;
    }
    if ((args->n != 6 && args->n != 7) || a[0]->kind != CK_PV_STORAGE || a[1]->kind != CK_PV_INT ||
        a[1]->i < 0 || !size_tuple(a[2], t->shape) || !size_tuple(a[3], t->stride) ||
        a[2]->n != a[3]->n) {
        return bad(m, "_rebuild_tensor_v2 arguments are not (storage, offset >= 0, size, stride of "
                   "one rank <= 8, ...)", "");
    }
    t->key = a[0];
    t->dtype = a[0]->dtype;
    t->offset = (size_t)a[1]->i;
    t->rank = a[2]->n;
    return push(m, t);
}

static int op_reduce(vm *m, unsigned char op)
{
    ck_pv *f = NULL, *args = NULL;
    (void)op;
    int rc = pop(m, &args);
    rc = rc == CK_OK ? pop(m, &f) : rc;
    if (rc != CK_OK) {
        return rc;
    }
    if (f->kind != CK_PV_GLOBAL || f->global >= CK_PG_FLOAT_STORAGE) {
        /* GLOBALS rows are in ck_pv_global order */
        return ck_fail(m->err, CK_E_FORMAT, "%s: pickle offset %zu: REDUCE on %s%s%s is not allowed "
                       "(only OrderedDict, _rebuild_tensor_v2, _rebuild_parameter)", m->what, m->op_at,
                       f->kind == CK_PV_GLOBAL ? GLOBALS[f->global].module : "a non-callable value",
                       f->kind == CK_PV_GLOBAL ? "." : "",
                       f->kind == CK_PV_GLOBAL ? GLOBALS[f->global].name : "");
    }
    if (args->kind != CK_PV_TUPLE) {
        return bad(m, "REDUCE arguments are not a tuple", "");
    }
    if (f->global == CK_PG_ORDERED_DICT) {
        return args->n == 0 ? push(m, new_value(m, CK_PV_DICT))
                            : bad(m, "collections.OrderedDict called with arguments", "");
    }
    if (f->global == CK_PG_REBUILD_TENSOR_V2) {
        return rebuild_tensor(m, args);
    }
    if (args->n != 3 || args->items[0]->kind != CK_PV_TENSOR) {
        return bad(m, "_rebuild_parameter arguments are not (tensor, requires_grad, hooks)", "");
    }
    return push(m, args->items[0]);
}

/* BUILD: only a dict (an OrderedDict's _metadata state) may receive state, and it is dropped. */
static int op_build(vm *m, unsigned char op)
{
    ck_pv *state = NULL;
    (void)op;
    int rc = pop(m, &state);
    if (rc == CK_OK && (m->sp == 0 || m->stack[m->sp - 1]->kind != CK_PV_DICT)) {
        return bad(m, "BUILD on a value that is not a dict", "");
    }
    return rc;
}

static int op_proto(vm *m, unsigned char op)
{
    const unsigned char *a = NULL;
    int rc = take(m, op == 0x80 ? 1 : 8, &a);
    if (rc == CK_OK && op == 0x80 && (a[0] < 2 || a[0] > 5)) {
        return bad(m, "protocol outside 2..5", "");
    }
    return rc;
}

static int op_stop(vm *m, unsigned char op)
{
    (void)op;
    if (m->sp != 1 || m->n_marks != 0) {
        return bad(m, "STOP with a stack that is not one value", "");
    }
    m->p->root = m->stack[0];
    m->stopped = 1;
    return CK_OK;
}

static const op_fn OPS[256] = {
    [0x80] = op_proto, [0x95] = op_proto, ['.'] = op_stop, ['('] = op_mark, ['N'] = op_const,
    [0x88] = op_const, [0x89] = op_const, ['J'] = op_int, ['K'] = op_int, ['M'] = op_int,
    [0x8a] = op_long1, ['G'] = op_float, [0x8c] = op_str, ['X'] = op_str, [0x8d] = op_str,
    [')'] = op_empty, [']'] = op_empty, ['}'] = op_empty, ['t'] = op_tuple, [0x85] = op_tuple,
    [0x86] = op_tuple, [0x87] = op_tuple, ['a'] = op_fill, ['e'] = op_fill, ['s'] = op_fill,
    ['u'] = op_fill, ['q'] = op_put, ['r'] = op_put, [0x94] = op_put, ['h'] = op_get,
    ['j'] = op_get, ['c'] = op_global, [0x93] = op_stack_global, ['Q'] = op_persid,
    ['R'] = op_reduce, ['b'] = op_build,
};

static int run(vm *m)
{
    int rc = CK_OK;
    while (rc == CK_OK && !m->stopped) {
        if (m->pos == m->n) {
            return ck_fail(m->err, CK_E_FORMAT, "%s: pickle: ends without STOP (truncated)", m->what);
        }
        m->op_at = m->pos;
        unsigned char op = m->b[m->pos++];
        if (OPS[op] == NULL) {
            return bad(m, "opcode not allowed: ", REFUSED_NAMES[op] ? REFUSED_NAMES[op] : "unknown");
        }
        rc = OPS[op](m, op);
    }
    return rc;
}

int ck_pickle_load(ck_pickle *out, const unsigned char *bytes, size_t n, const char *what,
                   ck_error *err)
{
    if (out == NULL || (bytes == NULL && n > 0) || what == NULL) {
        return ck_fail(err, CK_E_ARG, "pickle: null out, bytes or name");
    }
    memset(out, 0, sizeof *out);
    vm m = {.b = bytes, .n = n, .what = what, .p = out, .err = err};
    m.stack = malloc(CK_PICKLE_MAX_STACK * sizeof *m.stack);
    int rc = m.stack != NULL ? run(&m) : ck_fail(err, CK_E_MEMORY, "%s: out of memory", what);
    free(m.stack);
    free(m.memo);
    if (rc != CK_OK) {
        ck_pickle_free(out);
    }
    return rc;
}

void ck_pickle_free(ck_pickle *p)
{
    if (p == NULL) {
        return;
    }
    for (ck_pv *v = p->all; v != NULL;) {
        ck_pv *next = v->next;
        free(v->items);
        free(v);
        v = next;
    }
    memset(p, 0, sizeof *p);
}

int ck_pv_str_is(const ck_pv *v, const char *s)
{
    return v != NULL && v->kind == CK_PV_STR && v->len == strlen(s) && memcmp(v->s, s, v->len) == 0;
}
