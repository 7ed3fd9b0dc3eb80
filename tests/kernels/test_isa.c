/* test_isa.c - the run-time kernel ISA choice (ck_isa.h): CK_MAX_CPU_ISA=portable caps it, the name matches. */
#include <string.h>

#include "ck_isa.h"
#include "ck_test.h"

/* ctest runs this suite with and without CK_MAX_CPU_ISA=portable (tests/CMakeLists.txt). */
static void test_level_follows_cpu_and_cap(void)
{
    const char *cap = getenv("CK_MAX_CPU_ISA");
    ck_isa want = cap != NULL && strcmp(cap, "portable") == 0 ? CK_ISA_PORTABLE : ck_cpu_isa();
    CU_ASSERT_EQUAL(ck_kernels_isa_level(), want);
    CU_ASSERT_EQUAL(ck_kernels_isa_level(), want); /* resolved once, stays */
    CU_ASSERT_STRING_EQUAL(ck_kernels_isa(), want == CK_ISA_AVX512 ? "avx512" : "portable");
    fprintf(stderr, "    CK_MAX_CPU_ISA=%s: kernels run %s\n", cap ? cap : "(unset)", ck_kernels_isa());
}

static void test_clamp_never_exceeds_cpu(void)
{
    CU_ASSERT_EQUAL(ck_isa_clamp(CK_ISA_PORTABLE), CK_ISA_PORTABLE);
    CU_ASSERT_EQUAL(ck_isa_clamp(CK_ISA_AVX512), ck_cpu_isa());
}

CK_TEST_MAIN("isa", {"level follows the CPU and CK_MAX_CPU_ISA", test_level_follows_cpu_and_cap},
             {"clamp never exceeds the CPU", test_clamp_never_exceeds_cpu})
