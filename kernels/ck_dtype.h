/* ck_dtype.h - the one element-type list of ckbatch, with a traits table (ggml's type_traits):
 * tensors in files, weights, circuit buffers, oneDNN operands and X-Ray budgets all name their
 * element type with it. Knows no files. */
#ifndef CK_DTYPE_H
#define CK_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* Element types. A new one goes just before CK_DTYPE_OTHER, which then moves up (read every switch
 * on ck_dtype first); CK_DTYPE_OTHER and CK_DTYPE_COUNT stay last.
 * CK_DTYPE_OTHER is a type a file may hold (safetensors F64, I16, BOOL, ...) that nothing computes
 * with: readable and bounds-checked, never converted. */
typedef enum {
    CK_DTYPE_F32 = 0,   /* IEEE binary32 */
    CK_DTYPE_F16 = 1,   /* IEEE binary16 */
    CK_DTYPE_BF16 = 2,  /* bfloat16: the top 16 bits of a binary32 */
    CK_DTYPE_I32 = 3,
    CK_DTYPE_I64 = 4,
    CK_DTYPE_U8 = 5,    /* raw bytes (e.g. JSON Lines text in an output file) */
    CK_DTYPE_I8 = 6,    /* signed 8-bit integer: the int8 program's column (quantized linears) */
    CK_DTYPE_OTHER = 7,
    CK_DTYPE_COUNT
} ck_dtype;

typedef struct {
    const char *name;      /* safetensors' dtype string: "F32", "F16", "BF16", "I32", "I64", "U8" */
    const char *lower;     /* the circuit's and the metadata's spelling: "f32", "bf16", ... */
    size_t size;           /* bytes per element; 0 for CK_DTYPE_OTHER */
    int is_float;          /* 1 for F32, F16, BF16 */
} ck_dtype_traits;

/* Traits of d; the CK_DTYPE_OTHER row ("OTHER", "other", 0, 0) for any value outside the enum. */
const ck_dtype_traits *ck_dtype_info(ck_dtype d);

/* The safetensors dtype string of d ("F32", ..., "U8"), "OTHER" for CK_DTYPE_OTHER. */
const char *ck_dtype_name(ck_dtype d);

/* Bytes per element of d (4, 2, 2, 4, 8, 1, 1), 0 for CK_DTYPE_OTHER. */
size_t ck_dtype_size(ck_dtype d);

/* The dtype spelled `lower` ("f32", "bf16", "i32", ...); CK_DTYPE_OTHER when none is. */
ck_dtype ck_dtype_from_lower(const char *lower);

/* The dtype whose safetensors string is `name` ("F32", "F16", "BF16", "I32", "I64", "U8", "I8");
 * CK_DTYPE_OTHER for any other string (F64, I16, BOOL, ...) and for NULL. */
ck_dtype ck_dtype_from_name(const char *name);

/* f32 -> bf16 rounded to nearest even (the conversion of PyTorch's Tensor.to(torch.bfloat16),
 * c10/util/BFloat16.h round_to_nearest_even, and of AVX512-BF16's VCVTNEPS2BF16 for finite values);
 * NaN becomes a quiet NaN with the sign kept. */
static inline uint16_t ck_bf16_from_f32(float f)
{
    union {
        float f;
        uint32_t u;
    } v = {f};
    if ((v.u & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((v.u >> 16) | 0x0040u);
    }
    return (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
}

/* bf16 -> f32, exact. */
static inline float ck_bf16_to_f32(uint16_t h)
{
    union {
        uint32_t u;
        float f;
    } v = {(uint32_t)h << 16};
    return v.f;
}

/* y[r, c] = bf16(x[r, c]) for r < rows, c < cols (round to nearest even, ck_bf16_from_f32);
 * strides in elements. No checks: callers pass buffers they sized. */
void ck_bf16_from_f32_rows(const float *x, size_t x_stride, uint16_t *y, size_t y_stride, size_t rows,
                           size_t cols);

#endif
