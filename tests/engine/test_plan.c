/* test_plan.c - the memory planner: the Kokoro plan shares space and never lets two live buffers
 * collide (checked here by its own loop, not only by ck_plan_validate); every corrupted plan and
 * every bad arena is rejected with CK_E_SIZE naming what is wrong. */
#include <stdint.h>

#include "attention.h"
#include "ck_test.h"
#include "plan.h"

#define TINY "tests/fixtures/circuits/tiny.json"
#define KOKORO "circuits/kokoro_phoneme_encoder.json"

static ck_circuit circuit;
static ck_plan plan;

/* Loads a circuit and builds its plan into the file-level circuit and plan. */
static int build(const char *rel, size_t max_tokens, size_t max_seq_len)
{
    ck_error err = {0};
    const ck_plan_limits limits = {max_tokens, max_seq_len, 2, 0, CK_DTYPE_F32, 0};
    if (ck_circuit_load(&circuit, ck_test_path(rel), &err) != CK_OK ||
        ck_plan_build(&plan, &circuit, &limits, &err) != CK_OK) {
        fprintf(stderr, "\n    %s\n", err.message);
        return 0;
    }
    return 1;
}

static void release(void)
{
    ck_plan_free(&plan);
    ck_circuit_free(&circuit);
}

static size_t index_of(const char *name)
{
    int b = ck_circuit_find_buffer(&circuit, name);
    CU_ASSERT_FATAL(b >= 0);
    return (size_t)b;
}

/* Validation of the (edited) plan must fail with CK_E_SIZE naming both words. */
static void expect_invalid(const char *w1, const char *w2)
{
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_plan_validate(&plan, &circuit, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, w1));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, w2));
    if (!strstr(err.message, w1) || !strstr(err.message, w2)) {
        fprintf(stderr, "\n    message: %s (wanted \"%s\", \"%s\")\n", err.message, w1, w2);
    }
}

static void test_kokoro_plan_shares_and_never_collides(void)
{
    CU_ASSERT_FATAL(build(KOKORO, 1024, 512));
    size_t sum = 0, shared = 0;
    for (size_t a = 0; a < plan.n_buffers; a++) {
        sum += plan.bytes[a];
        CU_ASSERT_EQUAL(plan.offsets[a] % 64, 0);
        CU_ASSERT_EQUAL(plan.bytes[a], ((1024 * circuit.buffers[a].cols * 4 + 63) / 64) * 64);
        CU_ASSERT(plan.offsets[a] + plan.bytes[a] <= plan.arena_bytes);
        for (size_t b = a + 1; b < plan.n_buffers; b++) {
            int live = 0;
            for (size_t i = 0; i < plan.n_ops; i++) {
                live |= plan.live[i * plan.n_buffers + a] && plan.live[i * plan.n_buffers + b];
            }
            int bytes = plan.offsets[a] < plan.offsets[b] + plan.bytes[b] &&
                        plan.offsets[b] < plan.offsets[a] + plan.bytes[a];
            CU_ASSERT_FALSE(live && bytes);
            shared += bytes;
        }
    }
    CU_ASSERT(plan.arena_bytes * 10 < sum * 6); /* liveness sharing: 48 of 85 MiB at 2048 tokens */
    CU_ASSERT(shared > 0);
    CU_ASSERT_EQUAL(plan.arena_bytes % 64, 0);
    CU_ASSERT_EQUAL(plan.bytes[index_of("hidden")], 1024 * 768 * 4);
    CU_ASSERT_EQUAL(plan.bytes[index_of("ids")], 4096);
    /* one [512,512] score matrix + one [512] row, f32 */
    size_t floats = 0;
    CU_ASSERT_EQUAL(ck_attention_scratch(512, 64, &floats), CK_OK);
    CU_ASSERT_EQUAL(plan.scratch_bytes, (floats * 4 + 63) / 64 * 64);
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_plan_validate(&plan, &circuit, &err), CK_OK);
    release();
}

static int live_at(size_t op, const char *buffer)
{
    return plan.live[op * plan.n_buffers + index_of(buffer)];
}

/* Liveness per op, application 0 of the shared layer = ops 2..11 (q k v attention dense norm ffn
 * gelu ffn_output norm): q lives from its write (op 2) to the attention (op 5), is dead through the
 * FFN (6..11) and lives again from application 1's write (op 12); attention_norm lives from its
 * LayerNorm (op 7) to the second residual (op 11); inputs and outputs (ids, features, and hidden,
 * which --layer hidden reads) are live at every op. */
static void test_kokoro_liveness(void)
{
    CU_ASSERT_FATAL(build(KOKORO, 1024, 512));
    CU_ASSERT_EQUAL(plan.n_ops, 123);
    for (size_t op = 0; op < 123; op++) {
        size_t in_layer = op >= 2 && op < 122 ? (op - 2) % 10 : 99;
        CU_ASSERT_EQUAL(live_at(op, "q"), in_layer <= 3);
        CU_ASSERT_EQUAL(live_at(op, "ffn"), in_layer == 6 || in_layer == 7);
        CU_ASSERT_EQUAL(live_at(op, "embeddings"), op <= 1);
        CU_ASSERT_EQUAL(live_at(op, "attention_norm"), in_layer >= 5 && in_layer <= 9);
        CU_ASSERT_TRUE(live_at(op, "ids") && live_at(op, "features") && live_at(op, "hidden"));
    }
    release();
}

static void test_buffer_beyond_arena(void)
{
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    size_t f = index_of("features");
    plan.offsets[f] = plan.arena_bytes - plan.bytes[f] + 64;
    expect_invalid("\"features\"", "exceed the arena");
    release();
}

static void test_live_buffers_sharing_bytes(void)
{
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    plan.offsets[index_of("q")] = plan.offsets[index_of("k")];
    expect_invalid("\"q\"", "\"k\"");
    release();
}

/* emb dies at op 1 before q is born at op 2: sharing bytes is fine. */
static void test_dead_buffers_may_share(void)
{
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    ck_error err = {0};
    size_t emb = index_of("emb"), q = index_of("q");
    plan.offsets[emb] = plan.offsets[q];
    CU_ASSERT_FALSE(ck_plan_conflict(&plan, emb, q, NULL));
    CU_ASSERT_EQUAL(ck_plan_validate(&plan, &circuit, &err), CK_OK);
    release();
}

static void test_misaligned_offset(void)
{
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    plan.offsets[index_of("ctx")] += 4;
    expect_invalid("\"ctx\"", "not 64-byte aligned");
    release();
}

static void test_capacity_below_max_tokens(void)
{
    CU_ASSERT_FATAL(build(TINY, 100, 16));
    plan.bytes[index_of("v")] -= 64; /* 100 x 8 x 4 = 3200 bytes, exactly 50 lines of 64 */
    expect_invalid("\"v\"", "100 tokens need 3200");
    release();
}

static void test_build_rejects_limits(void)
{
    ck_error err = {0};
    ck_plan_limits limits = {10, 17, 1, 0, CK_DTYPE_F32, 0};
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    ck_plan_free(&plan);
    CU_ASSERT_EQUAL(ck_plan_build(&plan, &circuit, &limits, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "max_seq_len 17"));
    CU_ASSERT_PTR_NULL(plan.offsets);
    ck_error_clear(&err);
    limits = (ck_plan_limits){0, 16, 1, 0, CK_DTYPE_F32, 0};
    CU_ASSERT_EQUAL(ck_plan_build(&plan, &circuit, &limits, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "max_tokens 0"));
    ck_error_clear(&err);
    limits = (ck_plan_limits){10, 16, 0, 0, CK_DTYPE_F32, 0};
    CU_ASSERT_EQUAL(ck_plan_build(&plan, &circuit, &limits, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "threads 0"));
    release();
}

static void test_build_rejects_overflow(void)
{
    ck_error err = {0};
    const ck_plan_limits limits = {SIZE_MAX / 8, 16, 1, 0, CK_DTYPE_F32, 0};
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    ck_plan_free(&plan);
    CU_ASSERT_EQUAL(ck_plan_build(&plan, &circuit, &limits, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "overflows"));
    CU_ASSERT_PTR_NULL(plan.offsets);
    release();
}

/* row_block: every buffer holds max_tokens rounded up to whole blocks (10 -> 16 rows), validated
 * as such; tokens are still limited to max_tokens; rounding past SIZE_MAX is an overflow. */
static void test_row_block_pads_buffers(void)
{
    ck_error err = {0};
    ck_plan_limits limits = {10, 16, 2, 16, CK_DTYPE_F32, 0};
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    size_t exact = plan.arena_bytes;
    ck_plan_free(&plan);
    CU_ASSERT_EQUAL_FATAL(ck_plan_build(&plan, &circuit, &limits, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_plan_rows(&plan), 16);
    CU_ASSERT(plan.arena_bytes > exact);
    for (size_t b = 0; b < circuit.n_buffers; b++) {
        CU_ASSERT(plan.bytes[b] >= 16 * circuit.buffers[b].cols * 4);
    }
    plan.bytes[0] -= 64; /* now short of the padded rows: the validator must say so */
    CU_ASSERT_EQUAL(ck_plan_validate(&plan, &circuit, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tokens need"));
    plan.bytes[0] += 64;
    ck_error_clear(&err);
    unsigned char *arena = aligned_alloc(64, plan.arena_bytes);
    CU_ASSERT_FATAL(arena != NULL);
    CU_ASSERT_EQUAL(ck_plan_check_arena(&plan, arena, plan.arena_bytes, 10, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_plan_check_arena(&plan, arena, plan.arena_bytes, 11, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "max_tokens 10"));
    free(arena);
    ck_plan_free(&plan);
    ck_error_clear(&err);
    limits = (ck_plan_limits){SIZE_MAX - 3, 16, 1, 16, CK_DTYPE_F32, 0};
    CU_ASSERT_EQUAL(ck_plan_build(&plan, &circuit, &limits, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "overflows"));
    release();
}

/* An arena one line larger than needed, aligned; the cases move its base or shrink its size. */
static void check_arena_case(size_t shift, size_t less, size_t tokens, int code, const char *word)
{
    CU_ASSERT_FATAL(build(TINY, 10, 16));
    unsigned char *arena = aligned_alloc(64, plan.arena_bytes + 64);
    CU_ASSERT_FATAL(arena != NULL);
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_plan_check_arena(&plan, arena + shift, plan.arena_bytes - less, tokens, &err),
                    code);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, word));
    free(arena);
    release();
}

static void test_arena_fits(void)
{
    check_arena_case(0, 0, 10, CK_OK, "");
}

static void test_arena_one_byte_small(void)
{
    check_arena_case(0, 1, 10, CK_E_SIZE, "the plan needs");
}

static void test_arena_base_one_byte_off(void)
{
    check_arena_case(1, 0, 10, CK_E_SIZE, "not 64-byte aligned");
}

static void test_arena_tokens_above_max(void)
{
    check_arena_case(0, 0, 11, CK_E_SIZE, "tokens 11 above");
}

/* The scratch arenas follow the attention kernel the executor picked: the bf16 heads' size
 * (ck_attention_scratch__amx) for CK_DTYPE_BF16, the same activation arena either way. */
static void test_scratch_follows_attention_dtype(void)
{
    ck_error err = {0};
    ck_plan f32 = {0}, bf16 = {0};
    ck_plan_limits limits = {1024, 512, 2, 16, CK_DTYPE_F32, 0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&circuit, ck_test_path("circuits/kokoro_phoneme_encoder.json"), &err),
                          CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_plan_build(&f32, &circuit, &limits, &err), CK_OK);
    limits.precision = CK_DTYPE_BF16;
    limits.amx_bf16 = 1; /* the AMX heads' scratch */
    CU_ASSERT_EQUAL_FATAL(ck_plan_build(&bf16, &circuit, &limits, &err), CK_OK);
    size_t floats = 0;
    CU_ASSERT_EQUAL(ck_attention_scratch__amx(512, 64, &floats), CK_OK);
    CU_ASSERT_EQUAL(bf16.scratch_bytes, (floats * 4 + 63) / 64 * 64);
    CU_ASSERT_EQUAL(ck_attention_scratch(512, 64, &floats), CK_OK);
    CU_ASSERT_EQUAL(f32.scratch_bytes, (floats * 4 + 63) / 64 * 64);
    CU_ASSERT_EQUAL(bf16.arena_bytes, f32.arena_bytes);
    ck_plan_free(&f32);
    ck_plan_free(&bf16);
    ck_circuit_free(&circuit);
}

static void test_free_accepts_zeroed(void)
{
    ck_plan zero = {0};
    ck_plan_free(&zero);
    ck_plan_free(&zero);
    ck_plan_free(NULL);
    CU_ASSERT_PTR_NULL(zero.offsets);
}

CK_TEST_MAIN("plan",
             {"kokoro plan shares and never collides", test_kokoro_plan_shares_and_never_collides},
             {"kokoro liveness", test_kokoro_liveness},
             {"buffer beyond arena", test_buffer_beyond_arena},
             {"live buffers sharing bytes", test_live_buffers_sharing_bytes},
             {"dead buffers may share", test_dead_buffers_may_share},
             {"misaligned offset", test_misaligned_offset},
             {"capacity below max tokens", test_capacity_below_max_tokens},
             {"build rejects limits", test_build_rejects_limits},
             {"build rejects overflow", test_build_rejects_overflow},
             {"row block pads buffers", test_row_block_pads_buffers},
             {"arena fits", test_arena_fits}, {"arena one byte small", test_arena_one_byte_small},
             {"arena base one byte off", test_arena_base_one_byte_off},
             {"arena tokens above max", test_arena_tokens_above_max},
             {"scratch follows the attention dtype", test_scratch_follows_attention_dtype},
             {"free accepts zeroed", test_free_accepts_zeroed})
