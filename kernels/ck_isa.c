/* ck_isa.c - the run-time choice of kernel instruction set (ck_isa.h). Reads CK_MAX_CPU_ISA, nothing else. */
#include "ck_isa.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* 0 while unresolved, else level + 1. */
static atomic_int resolved_level;

ck_isa ck_cpu_isa(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
               ? CK_ISA_AVX512
               : CK_ISA_PORTABLE;
}

ck_isa ck_kernels_isa_level(void)
{
    int v = atomic_load_explicit(&resolved_level, memory_order_relaxed);
    if (v == 0) {
        const char *cap = getenv("CK_MAX_CPU_ISA");
        ck_isa level = cap != NULL && strcmp(cap, "portable") == 0 ? CK_ISA_PORTABLE : ck_cpu_isa();
        v = (int)level + 1;
        atomic_store_explicit(&resolved_level, v, memory_order_relaxed);
    }
    return (ck_isa)(v - 1);
}

const char *ck_kernels_isa(void)
{
    return ck_kernels_isa_level() == CK_ISA_AVX512 ? "avx512" : "portable";
}

ck_isa ck_isa_clamp(ck_isa want)
{
    return want == CK_ISA_AVX512 ? ck_cpu_isa() : CK_ISA_PORTABLE;
}
