/* test_executor.c - batches: bit-identical invariance (solo vs batched, order, threads), rejections
 * before any write (bad ids, capacity, missing or mis-shaped weights), arena reuse across requests,
 * which weights a run still reads after init, and the caller's OpenMP thread count given back. */
#include <stdint.h>
#include <unistd.h>

#include "ck_test.h"
#include "circuit_default.h"
#include "executor.h"
#include "parallel.h"
#include "safetensors.h"
#include "synth_weights.h"

#define O 512

typedef struct {
    ck_circuit c;
    ck_weights *w;
    ck_executor *ex;
} rig;

static int rig_init(rig *r, int threads, size_t max_tokens, int fuse)
{
    ck_error err = {0};
    memset(r, 0, sizeof *r);
    if (ck_circuit_load_default(&r->c, NULL, &err) != CK_OK ||
        ck_circuit_synthetic_weights(&r->w, &r->c, CK_SYNTH_DEFAULT_SEED, &err) != CK_OK) {
        return -1;
    }
    ck_executor_options opt = {threads, max_tokens, 512, fuse, CK_DTYPE_F32, NULL};
    int rc = ck_executor_init(&r->ex, &r->c, r->w, &opt, &err);
    if (rc != CK_OK) {
        fprintf(stderr, "    %s\n", err.message);
    }
    return rc;
}

static void rig_free(rig *r)
{
    ck_executor_free(r->ex);
    ck_weights_free(r->w);
    ck_circuit_free(&r->c);
}

/* Five sequences of lengths 3, 17, 64, 130, 255 with deterministic ids in 1..177, boundaries 0. */
static size_t make_batch(int32_t *ids, size_t *offsets)
{
    static const size_t lengths[] = {3, 17, 64, 130, 255};
    uint32_t x = 12345;
    offsets[0] = 0;
    for (size_t s = 0; s < 5; s++) {
        size_t base = offsets[s];
        for (size_t t = 0; t < lengths[s]; t++) {
            x = x * 1664525u + 1013904223u;
            ids[base + t] = (t == 0 || t == lengths[s] - 1) ? 0 : (int32_t)(1 + (x >> 8) % 177);
        }
        offsets[s + 1] = base + lengths[s];
    }
    return 5;
}

static double max_abs_diff(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* Runs the five-sequence batch with sequence order `order` on `r`; writes each sequence's features
 * to its place in input order in `out` [469, O]. */
static int run_ordered(rig *r, const int32_t *ids, const size_t *offsets, const int *order, float *out)
{
    static int32_t packed[469];
    static float rows[469 * O];
    size_t pos[6] = {0};
    ck_error err = {0};
    for (int k = 0; k < 5; k++) {
        size_t s = (size_t)order[k], len = offsets[s + 1] - offsets[s];
        memcpy(packed + pos[k], ids + offsets[s], len * sizeof *packed);
        pos[k + 1] = pos[k] + len;
    }
    int rc = ck_executor_run(r->ex, packed, pos, 5, r->c.features_buffer, rows, 469 * O, NULL, NULL,
                             &err);
    for (int k = 0; rc == CK_OK && k < 5; k++) {
        size_t s = (size_t)order[k];
        memcpy(out + offsets[s] * O, rows + pos[k] * O, (pos[k + 1] - pos[k]) * O * sizeof *out);
    }
    return rc;
}

/* Bit-identical features for every sequence whether it is encoded alone or in a batch (in either
 * order), on 1, 2, 3 or 300 threads (above CK_PARALLEL_MAX_WORKERS: one oneDNN lane per worker the
 * scheduler can have), with 1024 or 2048 max batch tokens: rows are split over workers
 * whole, attention pairs too, and the linears' row tiles do not change a row's bits (linear.h). */
static void test_solo_equals_batched_and_threads(void)
{
    static int32_t ids[469];
    static float solo[469 * O], other[469 * O];
    static const int forward[5] = {0, 1, 2, 3, 4}, reverse[5] = {4, 3, 2, 1, 0};
    static const struct {
        int threads;
        size_t max_tokens;
        const int *order;
    } runs[5] = {{1, 1024, forward}, {2, 1024, forward}, {3, 2048, reverse}, {2, 2048, reverse},
                 {300, 1024, forward}}; /* 300: more threads than the scheduler has workers */
    size_t offsets[6];
    size_t n = make_batch(ids, offsets);
    rig one;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rig_init(&one, 1, 1024, 1), CK_OK);
    for (size_t s = 0; s < n; s++) {
        size_t one_offsets[2] = {0, offsets[s + 1] - offsets[s]};
        CU_ASSERT_EQUAL_FATAL(ck_executor_run(one.ex, ids + offsets[s], one_offsets, 1,
                                              one.c.features_buffer, solo + offsets[s] * O,
                                              one_offsets[1] * O, NULL, NULL, &err), CK_OK);
    }
    rig_free(&one);
    for (int k = 0; k < 5; k++) {
        rig r;
        CU_ASSERT_EQUAL_FATAL(rig_init(&r, runs[k].threads, runs[k].max_tokens, 1), CK_OK);
        CU_ASSERT_EQUAL(run_ordered(&r, ids, offsets, runs[k].order, other), CK_OK);
        double d = max_abs_diff(solo, other, 469 * O);
        fprintf(stderr, "\n    solo vs batched on %d threads, %zu max tokens, %s order: max abs %.3g",
                runs[k].threads, runs[k].max_tokens,
                runs[k].order == forward ? "input" : "reverse", d);
        CU_ASSERT_EQUAL(memcmp(solo, other, sizeof solo), 0);
        rig_free(&r);
    }
    fprintf(stderr, "\n");
}

static void test_bad_ids_leave_output_untouched(void)
{
    rig r;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rig_init(&r, 2, 512, 1), CK_OK);
    static float out[4 * O];
    const int32_t bad[][4] = {{0, 5, 178, 0}, {0, -1, 5, 0}};
    size_t offsets[2] = {0, 4};
    for (size_t i = 0; i < 2; i++) {
        ck_test_fill_canary(out, 4 * O);
        ck_error_clear(&err);
        CU_ASSERT_EQUAL(ck_executor_run(r.ex, bad[i], offsets, 1, r.c.features_buffer, out, 4 * O,
                                        NULL, NULL, &err), CK_E_RANGE);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "token 2") ? err.message : strstr(err.message, "token 1"));
        CU_ASSERT_TRUE(ck_test_canary_intact(out, 4 * O));
    }
    rig_free(&r);
}

static void test_capacity_rejected_before_any_write(void)
{
    rig r;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rig_init(&r, 1, 512, 1), CK_OK);
    static int32_t ids[600];
    static float out[600 * O];
    size_t over[3] = {0, 300, 600};   /* 600 tokens > max_batch_tokens 512 */
    ck_test_fill_canary(out, 600 * O);
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, ids, over, 2, r.c.features_buffer, out, 600 * O, NULL,
                                    NULL, &err), CK_E_SIZE);
    CU_ASSERT_TRUE(ck_test_canary_intact(out, 600 * O));
    size_t fits[2] = {0, 10};
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, ids, fits, 1, r.c.features_buffer, out, 10 * O - 1, NULL,
                                    NULL, &err), CK_E_SIZE);   /* output one float short */
    CU_ASSERT_TRUE(ck_test_canary_intact(out, 600 * O));
    rig_free(&r);
}

static void test_arena_reuse_gives_fresh_results(void)
{
    rig r;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rig_init(&r, 2, 512, 1), CK_OK);
    const int32_t a[] = {0, 50, 83, 156, 0}, b[] = {0, 51, 83, 156, 0};
    size_t offsets[2] = {0, 5};
    static float fa[5 * O], fb[5 * O], fa2[5 * O];
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, a, offsets, 1, r.c.features_buffer, fa, 5 * O, NULL, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, b, offsets, 1, r.c.features_buffer, fb, 5 * O, NULL, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, a, offsets, 1, r.c.features_buffer, fa2, 5 * O, NULL, NULL, &err), CK_OK);
    CU_ASSERT_TRUE(max_abs_diff(fa, fb, 5 * O) > 1e-3);
    CU_ASSERT_EQUAL(memcmp(fa, fa2, sizeof fa), 0);
    rig_free(&r);
}

/* A run sets the OpenMP thread count for its ops (oneDNN's team follows it) and gives the caller
 * back its own, after a good run and after a failed one: an embedding program's count is its own. */
static void test_caller_thread_count_given_back(void)
{
    rig r;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rig_init(&r, 2, 512, 1), CK_OK);
    const int32_t ids[] = {0, 50, 83, 156, 0}, bad[] = {0, 50, 999, 0};
    size_t offsets[2] = {0, 5}, bad_offsets[2] = {0, 4};
    static float out[5 * O];
    int before = ck_parallel_set_threads(5);
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, ids, offsets, 1, r.c.features_buffer, out, 5 * O, NULL,
                                    NULL, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_parallel_set_threads(0), 5);   /* 0 changes nothing: reads the count */
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, bad, bad_offsets, 1, r.c.features_buffer, out, 5 * O,
                                    NULL, NULL, &err), CK_E_RANGE);
    CU_ASSERT_EQUAL(ck_parallel_set_threads(0), 5);
    ck_parallel_set_threads(before);
    rig_free(&r);
}

/* out NULL leaves the rows in the arena: ck_executor_rows gives the same bytes a copy gets, for the
 * named buffer only, and nothing after a failed run. */
static void test_rows_left_in_the_arena(void)
{
    rig r;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rig_init(&r, 2, 512, 1), CK_OK);
    const int32_t a[] = {0, 50, 83, 156, 0, 0, 7, 0}, bad[] = {0, 178, 0};
    size_t offsets[3] = {0, 5, 8}, bad_offsets[2] = {0, 3}, tokens = 0;
    static float fa[8 * O];
    CU_ASSERT_PTR_NULL(ck_executor_rows(r.ex, r.c.features_buffer, NULL));
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(r.ex, a, offsets, 2, r.c.features_buffer, fa, 8 * O, NULL,
                                          NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(r.ex, a, offsets, 2, r.c.features_buffer, NULL, 0, NULL,
                                          NULL, &err), CK_OK);
    const float *rows = ck_executor_rows(r.ex, r.c.features_buffer, &tokens);
    CU_ASSERT_FATAL(rows != NULL);
    CU_ASSERT_EQUAL(tokens, 8);
    CU_ASSERT_EQUAL(memcmp(rows, fa, sizeof fa), 0);
    CU_ASSERT_PTR_NULL(ck_executor_rows(r.ex, r.c.hidden_buffer, NULL));
    CU_ASSERT_EQUAL(ck_executor_run(r.ex, bad, bad_offsets, 1, r.c.features_buffer, NULL, 0, NULL,
                                    NULL, &err), CK_E_RANGE);
    CU_ASSERT_PTR_NULL(ck_executor_rows(r.ex, r.c.features_buffer, NULL));
    rig_free(&r);
}

/* Only the 9 embedding and LayerNorm tensors are read by batches; the 16 linear weights and biases
 * live in oneDNN's copies, so releasing their sources (as a normal run does) changes no bit, in
 * the fused and the unfused circuit. A tensor of another set is not the executor's. */
static void test_released_linear_sources_change_nothing(void)
{
    const int32_t ids[] = {0, 50, 83, 156, 7, 0};
    size_t offsets[2] = {0, 6};
    static float before[6 * O], after[6 * O];
    ck_error err = {0};
    for (int fuse = 0; fuse < 2; fuse++) {
        rig r, other;
        size_t read = 0;
        CU_ASSERT_EQUAL_FATAL(rig_init(&r, 1, 512, fuse), CK_OK);
        CU_ASSERT_EQUAL_FATAL(rig_init(&other, 1, 512, fuse), CK_OK);
        CU_ASSERT_EQUAL_FATAL(ck_executor_run(r.ex, ids, offsets, 1, r.c.features_buffer, before,
                                              6 * O, NULL, NULL, &err), CK_OK);
        CU_ASSERT_TRUE(ck_executor_reads_weight(
            r.ex, ck_weights_find(r.w, r.c.weights[ck_circuit_find_weight(&r.c, "word_embeddings")]
                                           .checkpoint_name)));
        CU_ASSERT_FALSE(ck_executor_reads_weight(
            r.ex, ck_weights_find(r.w, r.c.weights[ck_circuit_find_weight(&r.c, "ffn_weight")]
                                           .checkpoint_name)));
        CU_ASSERT_FALSE(ck_executor_reads_weight(r.ex, ck_weights_at(other.w, 0)));
        for (size_t i = 0; i < ck_weights_count(r.w); i++) {
            if (ck_executor_reads_weight(r.ex, ck_weights_at(r.w, i))) {
                read++;
            } else {
                CU_ASSERT_EQUAL(ck_weights_release(r.w, i), CK_OK);
            }
        }
        CU_ASSERT_EQUAL(read, 9);
        ck_test_fill_canary(after, 6 * O);
        CU_ASSERT_EQUAL(ck_executor_run(r.ex, ids, offsets, 1, r.c.features_buffer, after, 6 * O,
                                        NULL, NULL, &err), CK_OK);
        CU_ASSERT_EQUAL(memcmp(before, after, sizeof before), 0);
        rig_free(&other);
        rig_free(&r);
    }
}

/* Weights for the circuit with one tensor left out, or one shape changed. */
static int broken_weights(ck_weights **w, const ck_circuit *c, size_t drop, size_t reshape)
{
    ck_weight_spec specs[64];
    size_t n = 0;
    ck_error err = {0};
    for (size_t i = 0; i < c->n_weights && n < 64; i++) {
        if (i == drop) {
            continue;
        }
        specs[n].name = c->weights[i].checkpoint_name;
        specs[n].rank = c->weights[i].rank;
        memcpy(specs[n].shape, c->weights[i].shape, sizeof c->weights[i].shape);
        if (i == reshape) {
            specs[n].shape[0] += 1;
        }
        n++;
    }
    return ck_weights_synthetic(w, specs, n, CK_SYNTH_DEFAULT_SEED, &err);
}

static void test_missing_and_misshaped_weights(void)
{
    ck_circuit c;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load_default(&c, NULL, &err), CK_OK);
    int ffn = ck_circuit_find_weight(&c, "ffn_weight");
    CU_ASSERT_FATAL(ffn >= 0);
    ck_executor_options opt = {1, 512, 512, 0, CK_DTYPE_F32, NULL};
    for (int mode = 0; mode < 2; mode++) {
        ck_weights *w = NULL;
        ck_executor *ex = NULL;
        CU_ASSERT_EQUAL_FATAL(broken_weights(&w, &c, mode == 0 ? (size_t)ffn : SIZE_MAX,
                                             mode == 1 ? (size_t)ffn : SIZE_MAX), CK_OK);
        ck_error_clear(&err);
        CU_ASSERT_EQUAL(ck_executor_init(&ex, &c, w, &opt, &err), CK_E_WEIGHTS);
        CU_ASSERT_PTR_NULL(ex);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, c.weights[ffn].checkpoint_name));
        ck_weights_free(w);
    }
    ck_circuit_free(&c);
}

/* bert_encoder weights of 1e38 overflow the features to Inf: the run fails, the output keeps its
 * canary, and the message names the output buffer. */
static void test_overflow_caught_before_copy_out(void)
{
    ck_circuit c;
    ck_weights *w = NULL, *loaded = NULL;
    ck_executor *ex = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load_default(&c, NULL, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_circuit_synthetic_weights(&w, &c, CK_SYNTH_DEFAULT_SEED, &err), CK_OK);
    ck_st_entry entries[64];
    float *huge = NULL;
    size_t n = ck_weights_count(w);
    for (size_t i = 0; i < n && i < 64; i++) {
        const ck_tensor *t = ck_weights_at(w, i);
        entries[i] = (ck_st_entry){.name = t->name, .dtype = CK_DTYPE_F32, .rank = t->rank,
                                   .data = t->data};
        memcpy(entries[i].shape, t->shape, sizeof t->shape);
        if (strcmp(t->name, "bert_encoder.weight") == 0) {
            huge = malloc(t->elements * sizeof *huge);
            for (size_t k = 0; k < t->elements; k++) {
                huge[k] = 1e38f;   /* partial sums of ~unit LayerNorm outputs exceed FLT_MAX */
            }
            entries[i].data = huge;
        }
    }
    char path[] = "/tmp/ck_overflow_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0 && huge != NULL);
    close(fd);
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, entries, n, NULL, 0, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&loaded, path, &err), CK_OK);
    ck_executor_options opt = {2, 512, 512, 1, CK_DTYPE_F32, NULL};
    CU_ASSERT_EQUAL_FATAL(ck_executor_init(&ex, &c, loaded, &opt, &err), CK_OK);
    const int32_t ids[] = {0, 50, 83, 0};
    size_t offsets[2] = {0, 4};
    static float out[4 * O];
    ck_test_fill_canary(out, 4 * O);
    int before = ck_parallel_set_threads(3);
    CU_ASSERT_EQUAL(ck_executor_run(ex, ids, offsets, 1, c.features_buffer, out, 4 * O, NULL, NULL,
                                    &err), CK_E_NONFINITE);
    CU_ASSERT_EQUAL(ck_parallel_set_threads(before), 3); /* given back after a failed run too */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "\"features\""));
    CU_ASSERT_TRUE(ck_test_canary_intact(out, 4 * O));
    ck_executor_free(ex);
    ck_weights_free(loaded);
    ck_weights_free(w);
    ck_circuit_free(&c);
    free(huge);
    unlink(path);
}

typedef struct {
    int saw_ffn, saw_ffn_gelu;
} seen;

static void note_checkpoint(void *ctx, const char *id, const float *data, size_t tokens, size_t cols)
{
    seen *s = ctx;
    (void)data;
    (void)tokens;
    (void)cols;
    s->saw_ffn += strcmp(id, "kokoro.phoneme_encoder.layer.00.ffn") == 0;
    s->saw_ffn_gelu += strcmp(id, "kokoro.phoneme_encoder.layer.00.ffn_gelu") == 0;
}

/* The fused FFN (oneDNN GELU post-op) agrees with the separate gelu_new kernel within 1e-5 on the
 * features; fused, the pre-GELU checkpoint is not captured and the post-GELU one still is. */
static void test_fused_gelu_matches_unfused(void)
{
    static int32_t ids[469];
    static float fused[469 * O], plain[469 * O];
    size_t offsets[6];
    size_t n = make_batch(ids, offsets);
    rig f, p;
    ck_error err = {0};
    seen sf = {0, 0}, sp = {0, 0};
    CU_ASSERT_EQUAL_FATAL(rig_init(&f, 2, 1024, 1), CK_OK);
    CU_ASSERT_EQUAL_FATAL(rig_init(&p, 2, 1024, 0), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(f.ex, ids, offsets, n, f.c.features_buffer, fused,
                                          469 * O, note_checkpoint, &sf, &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_executor_run(p.ex, ids, offsets, n, p.c.features_buffer, plain,
                                          469 * O, note_checkpoint, &sp, &err), CK_OK);
    double d = max_abs_diff(fused, plain, 469 * O);
    fprintf(stderr, "\n    fused vs unfused GELU: features max abs %.3g\n", d);
    CU_ASSERT_TRUE(d <= 1e-5);
    CU_ASSERT_TRUE(d > 0.0); /* really two code paths */
    CU_ASSERT_EQUAL(sf.saw_ffn, 0);
    CU_ASSERT_EQUAL(sf.saw_ffn_gelu, 1);
    CU_ASSERT_EQUAL(sp.saw_ffn, 1);
    CU_ASSERT_EQUAL(sp.saw_ffn_gelu, 1);
    rig_free(&f);
    rig_free(&p);
}

CK_TEST_MAIN("executor", {"solo, batched, reordered, 1-3 threads: bit-identical", test_solo_equals_batched_and_threads},
             {"bad ids leave output untouched", test_bad_ids_leave_output_untouched},
             {"capacity rejected before any write", test_capacity_rejected_before_any_write},
             {"arena reuse gives fresh results", test_arena_reuse_gives_fresh_results},
             {"caller's thread count given back", test_caller_thread_count_given_back},
             {"rows left in the arena", test_rows_left_in_the_arena},
             {"missing and misshaped weights", test_missing_and_misshaped_weights},
             {"overflow caught before copy-out", test_overflow_caught_before_copy_out},
             {"fused GELU matches unfused", test_fused_gelu_matches_unfused},
             {"released linear sources change nothing", test_released_linear_sources_change_nothing})
