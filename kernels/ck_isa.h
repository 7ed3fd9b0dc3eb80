/* ck_isa.h - which instruction set the native kernels run: chosen once at run time, never at build time.
 *
 * libckbatch is built for baseline x86-64 (SSE2; no -march=native unless -DCK_NATIVE=ON). Each kernel
 * with an AVX-512 path compiles that path with CK_TARGET_AVX512 (a GCC/clang function target
 * attribute) next to its portable C path, and picks one per call from ck_kernels_isa_level():
 *
 *   CK_ISA_AVX512    the CPU has AVX-512F (with AVX2 and FMA, which every AVX-512F CPU has) and
 *                    CK_MAX_CPU_ISA does not forbid it;
 *   CK_ISA_PORTABLE  otherwise: the plain C loops, compiled for baseline x86-64.
 *
 * CK_MAX_CPU_ISA (environment, read once, on the first kernel call): `portable` forces the portable
 * kernels, like oneDNN's ONEDNN_MAX_CPU_ISA caps oneDNN (set both to test an AVX2-only machine:
 * CK_MAX_CPU_ISA=portable ONEDNN_MAX_CPU_ISA=AVX2). Any other value, or unset, is the best available.
 * The kernels' results do not depend on the choice: each pair of paths performs the same IEEE
 * operations in the same order (no FMA contraction), and tests/kernels compare them bit for bit.
 *
 * Thread-safe: the level is computed by whichever thread asks first (concurrent first calls compute
 * the same value) and published through a C11 atomic; later calls are one relaxed load. */
#ifndef CK_ISA_H
#define CK_ISA_H

#include "ck_status.h" /* ckbatch.h: ck_kernels_isa() is public */

typedef enum {
    CK_ISA_PORTABLE = 0,
    CK_ISA_AVX512 = 1
} ck_isa;

/* The best level this CPU runs, ignoring CK_MAX_CPU_ISA (tests use it to call both paths). */
ck_isa ck_cpu_isa(void);

/* The level the kernels use: ck_cpu_isa() capped by CK_MAX_CPU_ISA. */
ck_isa ck_kernels_isa_level(void);

/* ck_kernels_isa() (ckbatch.h) is ck_kernels_isa_level() by name: "avx512" or "portable". */

/* The CPU's features that decide ckbatch's paths, from CPUID, space-separated in this order when
 * present: "avx2 fma avx512f avx512_bf16 amx_tile amx_bf16 amx_int8" ("" when none). The string is
 * static; thread-safe (concurrent first calls write the same bytes before the flag is published). */
const char *ck_cpu_features(void);

/* The CPU's int8 dot-product instruction, the best of "amx_int8" (AMX-INT8 with AMX-TILE, CPUID leaf
 * 7 EDX bits 25 and 24), "avx512_vnni" (leaf 7 ECX bit 11, with AVX512F) and "avx_vnni" (leaf 7
 * subleaf 1 EAX bit 4), or "" when it has none (then oneDNN's int8 matmul runs on VPMADDUBSW, whose
 * 16-bit pair sums can saturate: ckbatch refuses int8 there). Static string, from CPUID alone
 * (not from ck_cpu_features, whose text the bf16 metadata records). Thread-safe. */
const char *ck_cpu_int8_dot(void);

/* 1 when the kernels may use AMX-BF16 tiles (ck_attention_head_f32__amx): the CPU has AMX-TILE and
 * AMX-BF16 (CPUID leaf 7 EDX bits 24 and 22) with AVX512BW, AVX512VL and AVX512_BF16 (every CPU
 * with AMX has them), the kernels run AVX-512, CK_MAX_CPU_ISA is neither
 * `portable` nor `avx512` (`avx512` keeps AVX-512 and turns AMX off), and Linux granted this
 * process the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA, asked once; Linux
 * 5.16+, the same request oneDNN makes for its own AMX kernels). Thread-safe; resolved on the
 * first call. */
int ck_kernels_amx_bf16(void);

/* min(want, ck_cpu_isa()): a level that is safe to run on this CPU. */
ck_isa ck_isa_clamp(ck_isa want);

/* Marks a function compiled for AVX-512F (+ AVX2, FMA) in a baseline build. Call it only when
 * ck_cpu_isa() is CK_ISA_AVX512. Plain static inline helpers called from it are inlined and compiled
 * for AVX-512 too (GCC's auto-vectoriser then uses 512/256-bit registers in them). */
#define CK_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f")))

/* For loop bodies instantiated once per level: forces the body into each CK_TARGET_AVX512 wrapper
 * and its portable twin, so neither calls a shared baseline copy. */
#define CK_ALWAYS_INLINE static inline __attribute__((always_inline))

#endif
