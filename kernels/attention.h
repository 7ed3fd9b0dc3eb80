/* attention.h - unmasked scaled dot-product attention for one (sequence, head) pair. No I/O, no allocation, no threads. */
#ifndef CK_ATTENTION_H
#define CK_ATTENTION_H

#include <stddef.h>

#include "ck_isa.h"

/* Legend: L tokens of the sequence (seq_len), H heads, D head dim (64), C = H * D (768).
 *
 * Floats of scratch ck_attention_head_f32 needs for (L, D): D * Lp + 4 Lp + L * D, Lp = L rounded up
 * to a multiple of 16 (keys transposed and zero-padded, score rows of a block of 4 queries, the staged
 * [L,D] context). For L = 512, D = 64: 67584 floats (264 KiB). Errors: CK_E_ARG (elements null), CK_E_SIZE (D == 0,
 * overflow). */
int ck_attention_scratch(size_t seq_len, size_t head_dim, size_t *elements);

/* context[i, h*D:(h+1)*D] = softmax_j(scale * q_i . k_j) v_j for i, j < L, no mask: the ragged batch
 * has no padding, so every key is real (HF transformers AlbertSdpaAttention / AlbertAttention:
 * softmax(q k^T / sqrt(D)) v; ALBERT: scale = 1/8).
 * q, k, v point at the sequence's first token row: [L, >= (h+1)*D] with row stride qkv_stride (q, k
 * and v may be column windows of one fused buffer; they are only read); head h selects columns
 * [h*D, (h+1)*D). context: rows of context_stride; only the head's columns are written, all other
 * columns are untouched. scratch: scratch_count >= ck_attention_scratch(L, D) floats.
 * Numerics (FP32): q.k accumulate in float with fmaf, d in order; softmax subtracts the row max, takes
 * ck_exp_f32 (Cephes polynomial, rel. err < 1e-7) of arguments clamped to >= -87, sums e in float
 * in 16 lanes of whole 16-key blocks, then the lanes in order, then the tail keys in order (a fixed
 * order), multiplies by 1/sum; p.v accumulates in float with fmaf, j in order. Each output row
 * depends only on this head's q, k, v: no batch or thread dependence.
 * Errors, all before the first write to context (context untouched):
 *   CK_E_ARG       null pointer (when L > 0), scale <= 0 or not finite, context overlapping q, k, v,
 *                  scratch overlapping q, k, v or context;
 *   CK_E_SIZE      D == 0, (h+1)*D overflow, a stride below (h+1)*D, a count below its span,
 *                  scratch_count below ck_attention_scratch;
 *   CK_E_NONFINITE NaN or Inf in the head's q, k or v columns, or a non-finite result (overflowing
 *                  scores), which is caught in scratch before context is written.
 * L == 0 is a no-op returning CK_OK.
 * Runs the AVX-512 or the portable loops as ck_kernels_isa_level() says (ck_isa.h: CK_MAX_CPU_ISA);
 * both give the same bits. */
int ck_attention_head_f32(const float *q, size_t q_count, const float *k, size_t k_count, const float *v,
                          size_t v_count, size_t qkv_stride, float *context, size_t context_count,
                          size_t context_stride, float *scratch, size_t scratch_count, size_t seq_len,
                          size_t head, size_t head_dim, float scale);

/* ck_attention_head_f32 on the loops of level `isa`, capped at what this CPU runs (ck_isa_clamp): for
 * the test that compares the two paths. */
int ck_attention_head_f32_isa(ck_isa isa, const float *q, size_t q_count, const float *k, size_t k_count,
                              const float *v, size_t v_count, size_t qkv_stride, float *context,
                              size_t context_count, size_t context_stride, float *scratch, size_t scratch_count,
                              size_t seq_len, size_t head, size_t head_dim, float scale);

/* Floats of scratch ck_attention_head_f32__amx needs for (L, D), D a multiple of 32: with Lq = L rounded
 * up to 16 and Lk = L rounded up to 32, (2 Lq + Lk) D / 2 + 24 Lk + Lq D (bf16 q, key and value
 * tiles, one block of 16 score and bf16 probability rows, the staged [Lq, D] context). For L = 512,
 * D = 64: 94208 floats (368 KiB). Errors: CK_E_ARG (elements null), CK_E_SIZE (D == 0, D not a
 * multiple of 32, overflow). */
int ck_attention_scratch__amx(size_t seq_len, size_t head_dim, size_t *elements);

/* ck_attention_head_f32's contract (arguments, context columns, errors, no batch or thread
 * dependence) with bf16 products on AMX tiles: q, k and v are rounded to bf16 (nearest even,
 * ck_bf16_from_f32), q k^T accumulates in f32 on TDPBF16PS tiles (16 queries x 16 keys x 32
 * dims per step, dims in order), then in f32 exactly as the f32 kernel: times scale, the row max,
 * ck_exp_f32, the 16-lane sum, times 1/sum; the probabilities are rounded to bf16 and p v
 * accumulates in f32 on tiles (32 keys per step, keys in order). Keys and queries past L are zero
 * in the tiles and never reach a probability. The tile configuration found on entry (oneDNN's, or
 * none) is restored before return. D must be a multiple of 32 (CK_E_SIZE otherwise); scratch_count
 * >= ck_attention_scratch__amx(L, D). CK_E_ARG also when ck_kernels_amx_bf16() is 0 (no AMX-BF16
 * here, or CK_MAX_CPU_ISA turned it off). Error budget: docs/precision.md. */
int ck_attention_head_f32__amx(const float *q, size_t q_count, const float *k, size_t k_count, const float *v,
                           size_t v_count, size_t qkv_stride, float *context, size_t context_count,
                           size_t context_stride, float *scratch, size_t scratch_count, size_t seq_len,
                           size_t head, size_t head_dim, float scale);

/* ck_attention_head_f32__amx with q, k and v already in bf16 (what bf16-writing q, k and v linears hold:
 * ck_linear_forward_bf16): counts and qkv_stride in bf16 elements; the rest, errors included,
 * as there. The same bits as ck_attention_head_f32__amx on the f32 rows these round from. */
int ck_attention_head_bf16_f32__amx(const uint16_t *q, size_t q_count, const uint16_t *k, size_t k_count,
                                    const uint16_t *v, size_t v_count, size_t qkv_stride, float *context,
                                    size_t context_count, size_t context_stride, float *scratch, size_t scratch_count,
                                    size_t seq_len, size_t head, size_t head_dim, float scale);

/* ck_attention_head_bf16_f32__amx writing the context in bf16: context [L, (h+1)*D] bf16 with row stride
 * context_stride and context_count in bf16 elements; each value is ck_bf16_from_f32 of the f32
 * context ck_attention_head_bf16_f32__amx writes (so a bf16 linear reading it in place computes what it
 * computes on its own staging of the f32 context). Errors as there, the context still written only
 * once the head is known finite. For the attention output projection of bf16 programs. */
int ck_attention_head_bf16__amx(const uint16_t *q, size_t q_count, const uint16_t *k, size_t k_count,
                                const uint16_t *v, size_t v_count, size_t qkv_stride, uint16_t *context,
                                size_t context_count, size_t context_stride, float *scratch, size_t scratch_count,
                                size_t seq_len, size_t head, size_t head_dim, float scale);

#endif
