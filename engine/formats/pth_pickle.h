/* pth_pickle.h - restricted pickle interpreter for torch.save state dicts: builds a value tree and
 * never calls, imports or executes anything. Knows no ZIP and no model layout. (pth.c is its user.)
 *
 * Format: Python's pickle protocol 2-5 (Lib/pickletools.py documents each opcode) as torch.save
 * writes it (torch/serialization.py: persistent id ("storage", StorageType, key, location, numel);
 * torch/_utils.py: _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, meta]),
 * _rebuild_parameter(data, requires_grad, hooks)). */
#ifndef CK_PTH_PICKLE_H
#define CK_PTH_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "ck_error.h"
#include "safetensors.h"

/* Limits that keep a hostile pickle bounded in memory and in recursion. */
#define CK_PICKLE_MAX_STACK 65536    /* values on the stack */
#define CK_PICKLE_MAX_MARKS 1024     /* open MARKs */
#define CK_PICKLE_MAX_MEMO 1048576   /* memo slots */
#define CK_PICKLE_MAX_DEPTH 8        /* dict nesting pth.c walks when it names tensors */

typedef enum {
    CK_PV_NONE, CK_PV_BOOL, CK_PV_INT, CK_PV_FLOAT, CK_PV_STR, CK_PV_TUPLE, CK_PV_LIST, CK_PV_DICT,
    CK_PV_GLOBAL, CK_PV_STORAGE, CK_PV_TENSOR
} ck_pv_kind;

/* The only globals a pickle may name; storage types last (LongStorage: int64 buffers such as
 * embeddings.position_ids, which some Kokoro exports carry - described, never converted). */
typedef enum {
    CK_PG_ORDERED_DICT, CK_PG_REBUILD_TENSOR_V2, CK_PG_REBUILD_PARAMETER, CK_PG_FLOAT_STORAGE,
    CK_PG_HALF_STORAGE, CK_PG_BFLOAT16_STORAGE, CK_PG_LONG_STORAGE
} ck_pv_global;

typedef struct ck_pv ck_pv;

/* One pickle value. Containers hold borrowed pointers; every value is owned by its ck_pickle. */
struct ck_pv {
    ck_pv_kind kind;
    int64_t i;               /* BOOL, INT */
    double f;                /* FLOAT */
    const char *s;           /* STR: UTF-8 bytes inside the pickle buffer, NOT NUL-terminated */
    size_t len;              /* STR: bytes */
    ck_pv **items;           /* TUPLE, LIST: [n]; DICT: key, value, key, value ... [n], n even */
    size_t n, cap;
    ck_pv_global global;     /* GLOBAL */
    ck_dtype dtype;       /* STORAGE, TENSOR: F32, F16, BF16 or I64 */
    const ck_pv *key;        /* STORAGE: the storage key (STR); TENSOR: its storage (STORAGE) */
    size_t numel;            /* STORAGE: elements */
    size_t offset;           /* TENSOR: storage offset in elements */
    size_t rank;             /* TENSOR */
    size_t shape[CK_ST_MAX_RANK], stride[CK_ST_MAX_RANK];
    int seen;                /* scratch for a consumer's walk (pth.c: dict already named) */
    ck_pv *next;             /* allocation list */
};

typedef struct {
    ck_pv *root;             /* the value STOP returned */
    ck_pv *all;              /* every allocated value, freed by ck_pickle_free */
} ck_pickle;

/* Runs the pickle bytes[n] in the restricted interpreter. Allowed: PROTO (2..5), FRAME, STOP, MARK,
 * NONE, NEWTRUE/NEWFALSE, BININT/BININT1/BININT2/LONG1 (<= 8 bytes), BINFLOAT, SHORT_BINUNICODE/
 * BINUNICODE/BINUNICODE8, EMPTY_TUPLE/TUPLE/TUPLE1-3, EMPTY_LIST/APPEND/APPENDS, EMPTY_DICT/SETITEM/
 * SETITEMS, BINPUT/LONG_BINPUT/MEMOIZE, BINGET/LONG_BINGET, GLOBAL/STACK_GLOBAL (allowlist above),
 * BINPERSID (storage ids only), REDUCE (OrderedDict(), _rebuild_tensor_v2, _rebuild_parameter),
 * BUILD (state discarded, on a dict only). `what` names the source in messages.
 * Errors: CK_E_FORMAT (any other opcode or global, malformed or truncated data, a limit above
 * exceeded; the message names the opcode, global or field and the byte offset), CK_E_MEMORY.
 * On error *out holds nothing (it is freed). */
int ck_pickle_load(ck_pickle *out, const unsigned char *bytes, size_t n, const char *what,
                   ck_error *err);

/* Frees every value; accepts a zeroed ck_pickle. */
void ck_pickle_free(ck_pickle *p);

/* 1 when the STR value v equals the NUL-terminated s. */
int ck_pv_str_is(const ck_pv *v, const char *s);

#endif
