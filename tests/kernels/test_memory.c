/* test_memory.c - ck_large_alloc (ck_memory.h): 64-byte blocks below 2 MiB, 2 MiB aligned blocks from
 * 2 MiB up with huge pages advised on their whole 2 MiB pages and not on the tail, NULL for 0 bytes
 * and on overflow. */
#include <stdint.h>

#include "ck_memory.h"
#include "ck_test.h"

/* 1 when the mapping holding p is marked "hg" (MADV_HUGEPAGE) in /proc/self/smaps, 0 when not,
 * -1 when smaps cannot be read or has no such mapping. */
static int advised_huge(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) {
        return -1;
    }
    char line[512];
    int inside = 0, found = -1;
    uintptr_t a = (uintptr_t)p;
    while (found < 0 && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ':') != NULL &&
            strncmp(line, "VmFlags", 7) != 0) {
            inside = a >= lo && a < hi;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            found = strstr(line, " hg") != NULL;
        }
    }
    fclose(f);
    return found;
}

static void test_small_block_64_aligned(void)
{
    unsigned char *p = ck_large_alloc(100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL((uintptr_t)p % 64, 0);
    memset(p, 0xab, 100);
    CU_ASSERT_EQUAL(p[99], 0xab);
    ck_large_free(p);
}

static void test_large_block_2mib_aligned_and_advised(void)
{
    size_t bytes = 2 * CK_HUGE_PAGE_BYTES + 4096;
    unsigned char *p = ck_large_alloc(bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL((uintptr_t)p % CK_HUGE_PAGE_BYTES, 0);
    memset(p, 0x5a, bytes); /* every byte asked for is writable */
    CU_ASSERT_EQUAL(p[bytes - 1], 0x5a);
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0) {
        CU_ASSERT_EQUAL(advised_huge(p), 1);
        CU_ASSERT_EQUAL(advised_huge(p + 2 * CK_HUGE_PAGE_BYTES - 1), 1);
        CU_ASSERT_EQUAL(advised_huge(p + 2 * CK_HUGE_PAGE_BYTES), 0); /* the tail: 4 KiB pages */
    } else {
        fprintf(stderr, "    NOT_TESTED: the huge-page advice (this kernel has no THP)\n");
    }
    ck_large_free(p);
    ck_large_free(NULL);
}

static void test_zero_and_overflow_give_null(void)
{
    CU_ASSERT_PTR_NULL(ck_large_alloc(0));
    CU_ASSERT_PTR_NULL(ck_large_alloc(SIZE_MAX));
    CU_ASSERT_PTR_NULL(ck_large_alloc(SIZE_MAX - CK_HUGE_PAGE_BYTES + 2));
}

CK_TEST_MAIN("memory", {"a small block is 64-byte aligned", test_small_block_64_aligned},
             {"a large block is 2 MiB aligned, huge pages advised but not on its tail", test_large_block_2mib_aligned_and_advised},
             {"0 bytes and overflow give NULL", test_zero_and_overflow_give_null})
