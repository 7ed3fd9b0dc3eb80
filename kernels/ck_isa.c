/* ck_isa.c - the run-time choice of kernel instruction set (ck_isa.h). Reads CK_MAX_CPU_ISA and asks
 * Linux for the AMX tile state, nothing else. */
#define _DEFAULT_SOURCE /* syscall(2) */
#include "ck_isa.h"

#include <cpuid.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Linux's arch_prctl code and xstate feature number for AMX tile data (arch/x86/include/uapi/asm/
 * prctl.h ARCH_REQ_XCOMP_PERM, asm/fpu/types.h XFEATURE_XTILEDATA). */
#define CK_ARCH_REQ_XCOMP_PERM 0x1023
#define CK_XFEATURE_XTILEDATA 18

/* 0 while unresolved, else 1 + (AMX-BF16 usable). */
static atomic_int resolved_amx;

int ck_kernels_amx_bf16(void)
{
    int v = atomic_load_explicit(&resolved_amx, memory_order_relaxed);
    if (v == 0) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        const char *cap = getenv("CK_MAX_CPU_ISA");
        int on = ck_kernels_isa_level() == CK_ISA_AVX512 && !(cap != NULL && strcmp(cap, "avx512") == 0) &&
                 __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 24 & 1) && (d >> 22 & 1) &&
                 (b >> 30 & 1) && (b >> 31 & 1); /* AVX512BW, AVX512VL */
        unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0; /* leaf 7 subleaf 1 EAX bit 5: AVX512_BF16 */
        on = on && a >= 1 && __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1) && (a1 >> 5 & 1);
#ifdef SYS_arch_prctl
        on = on && syscall(SYS_arch_prctl, CK_ARCH_REQ_XCOMP_PERM, CK_XFEATURE_XTILEDATA) == 0;
#else
        on = 0;
#endif
        v = 1 + on;
        atomic_store_explicit(&resolved_amx, v, memory_order_relaxed);
    }
    return v - 1;
}

const char *ck_cpu_int8_dot(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0, a1 = 0, b1 = 0, c1 = 0, d1 = 0;
    int has7 = __get_cpuid_count(7, 0, &a, &b, &c, &d);
    int has71 = has7 && a >= 1 && __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
    if (has7 && (d >> 25 & 1) && (d >> 24 & 1)) {
        return "amx_int8";
    }
    if (has7 && (c >> 11 & 1) && (b >> 16 & 1)) {
        return "avx512_vnni";
    }
    return has71 && (a1 >> 4 & 1) ? "avx_vnni" : "";
}

ck_isa ck_isa_clamp(ck_isa want)
{
    return want == CK_ISA_AVX512 ? ck_cpu_isa() : CK_ISA_PORTABLE;
}

const char *ck_cpu_features(void)
{
    static char text[96];
    static atomic_int ready;
    if (atomic_load_explicit(&ready, memory_order_acquire)) {
        return text;
    }
    /* Intel SDM vol. 2A, CPUID leaf 7: subleaf 0 EBX bit 5 AVX2, bit 16 AVX512F; EDX bit 22
     * AMX-BF16, bit 24 AMX-TILE, bit 25 AMX-INT8; subleaf 1 EAX bit 5 AVX512_BF16. FMA: leaf 1 ECX
     * bit 12. */
    unsigned a = 0, b = 0, c = 0, d = 0, a1 = 0, b1 = 0, c1 = 0, d1 = 0, fa = 0, fb = 0, fc = 0, fd = 0;
    int has7 = __get_cpuid_count(7, 0, &a, &b, &c, &d);
    int has71 = has7 && a >= 1 && __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
    int has1 = __get_cpuid(1, &fa, &fb, &fc, &fd);
    struct {
        int on;
        const char *name;
    } f[] = {{has7 && (b >> 5 & 1), "avx2"},       {has1 && (fc >> 12 & 1), "fma"},
             {has7 && (b >> 16 & 1), "avx512f"},   {has71 && (a1 >> 5 & 1), "avx512_bf16"},
             {has7 && (d >> 24 & 1), "amx_tile"},  {has7 && (d >> 22 & 1), "amx_bf16"},
             {has7 && (d >> 25 & 1), "amx_int8"}};
    char local[96] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].on) {
            size_t n = strlen(f[i].name);
            if (used > 0) {
                local[used++] = ' ';
            }
            memcpy(local + used, f[i].name, n + 1);
            used += n;
        }
    }
    memcpy(text, local, sizeof text);
    atomic_store_explicit(&ready, 1, memory_order_release);
    return text;
}
