/* test_weights.c - weight sets: SHA-256 vectors, synthetic -> save -> load bit-identical, name
 * normalisation, F16/BF16 conversion, unaligned copies, non-finite rejection, integer tensors skipped,
 * releasing tensors (owned buffers freed, mapped pages dropped). */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck_status.h"
#include "ck_test.h"
#include "safetensors.h"
#include "sha256.h"
#include "synth_weights.h"
#include "weights.h"


/* Path of `name` inside this run's private temporary directory. */
/* Writes `n` entries to tmp file `file` and returns its path (asserting success). */
static const char *write_file(const char *file, const ck_st_entry *e, size_t n)
{
    const char *path = ck_test_tmp_path(file);
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, e, n, NULL, 0, NULL), CK_OK);
    return path;
}

/* Loads `path` expecting `code`; the message must contain `needle` (when not NULL). */
static void expect_load_fails(const char *path, int code, const char *needle)
{
    ck_weights *w = (ck_weights *)&w;  /* non-NULL sentinel: must come back NULL */
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_weights_load(&w, path, &err), code);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, needle));
    if (strstr(err.message, needle) == NULL) {
        fprintf(stderr, "    message: %s\n", err.message);
    }
}

/* ---- SHA-256 ------------------------------------------------------------------------------ */

static void check_digest(const char *text, const char *want_hex)
{
    unsigned char d[32];
    char hex[65];
    CU_ASSERT_EQUAL_FATAL(ck_sha256(text, strlen(text), d), CK_OK);
    ck_sha256_hex(d, hex);
    CU_ASSERT_STRING_EQUAL(hex, want_hex);
}

/* FIPS 180-2 appendix B.1 ("abc") and the empty message. */
static void test_sha256_vectors(void)
{
    check_digest("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check_digest("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    unsigned char d[32];
    CU_ASSERT_EQUAL(ck_sha256(NULL, 0, d), CK_OK);
    CU_ASSERT_EQUAL(ck_sha256(NULL, 1, d), CK_E_ARG);
}

static void test_sha256_file(void)
{
    const char *path = ck_test_tmp_path("abc.txt");
    char hex[65];
    ck_error err = {0};
    FILE *fp = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs("abc", fp);
    fclose(fp);
    CU_ASSERT_EQUAL(ck_sha256_file(path, hex, &err), CK_OK);
    CU_ASSERT_STRING_EQUAL(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    unlink(path);
    CU_ASSERT_EQUAL(ck_sha256_file(path, hex, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
}

/* ---- synthetic sets ----------------------------------------------------------------------- */

static const ck_weight_spec SPECS[] = {
    {"bert.embeddings.LayerNorm.weight", 1, {5}},
    {"bert_encoder.weight", 2, {2, 2}},
    {"bert.encoder.embedding_hidden_mapping_in.weight", 2, {3, 7}},
    {"scalar", 0, {0}},
};

static void test_synthetic_identity_and_values(void)
{
    ck_weights *w = NULL;
    float want[21];
    CU_ASSERT_EQUAL_FATAL(ck_weights_synthetic(&w, SPECS, 4, CK_SYNTH_DEFAULT_SEED, NULL), CK_OK);
    CU_ASSERT_STRING_EQUAL(ck_weights_identity(w),
                           "synthetic splitmix64-uniform-v1 seed 20261129 (demo weights, NOT Kokoro's)");
    CU_ASSERT_EQUAL(ck_weights_count(w), 4);
    const ck_tensor *t = ck_weights_find(w, SPECS[2].name);
    CU_ASSERT_FATAL(t != NULL && t->elements == 21 && t->rank == 2 && t->shape[1] == 7);
    ck_synth_tensor_f32(SPECS[2].name, CK_SYNTH_DEFAULT_SEED, want, 21);
    CU_ASSERT_EQUAL(memcmp(t->data, want, sizeof want), 0);
    CU_ASSERT_EQUAL(ck_weights_at(w, 3)->elements, 1);  /* rank 0 is a scalar */
    CU_ASSERT_PTR_NULL(ck_weights_at(w, 4));
    CU_ASSERT_PTR_NULL(ck_weights_find(w, "absent"));
    ck_weights_free(w);
}

/* Digest made with /usr/bin/python3: hashlib.sha256(struct.pack('<4I', 0x3bc9cd0d, 0x3d1264db,
 * 0xbc9eeda0, 0x3d36ae58)), the first four bert_encoder.weight values of test_synth_weights.c. */
static void test_hash_matches_independent_digest(void)
{
    ck_weights *w = NULL;
    char hex[65];
    CU_ASSERT_EQUAL_FATAL(ck_weights_synthetic(&w, SPECS, 4, CK_SYNTH_DEFAULT_SEED, NULL), CK_OK);
    CU_ASSERT_FALSE(ck_weights_at(w, 1)->has_sha256);
    CU_ASSERT_EQUAL(ck_weights_hash(w, NULL), CK_OK);
    const ck_tensor *t = ck_weights_find(w, "bert_encoder.weight");
    CU_ASSERT_TRUE(t->has_sha256);
    ck_sha256_hex(t->sha256, hex);
    CU_ASSERT_STRING_EQUAL(hex, "3911a9e696248fc0b9759420e2cc7033ff4a97b449d089bff92c2201eefb3fcd");
    ck_weights_free(w);
}

static void test_synthetic_round_trip_bit_identical(void)
{
    ck_weights *a = NULL, *b = NULL;
    ck_st_file *f = NULL;
    const char *path = ck_test_tmp_path("synth.safetensors");
    CU_ASSERT_EQUAL_FATAL(ck_weights_synthetic(&a, SPECS, 4, 12345, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_save(a, path, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&b, path, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(b), 4);
    for (size_t i = 0; i < 4; i++) {
        const ck_tensor *x = ck_weights_at(a, i), *y = ck_weights_at(b, i);
        CU_ASSERT_STRING_EQUAL(x->name, y->name);
        CU_ASSERT(x->rank == y->rank && x->elements == y->elements &&
                  memcmp(x->shape, y->shape, sizeof x->shape) == 0);
        CU_ASSERT_EQUAL(memcmp(x->data, y->data, x->elements * sizeof(float)), 0);
    }
    CU_ASSERT_EQUAL(strncmp(ck_weights_identity(b), "file ", 5), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_weights_identity(b), " sha256 "));
    /* loaded back, synthetic weights still say what they are */
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_weights_identity(b), ck_weights_identity(a)));
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_weights_identity(b), "NOT Kokoro's"));
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, path, NULL), CK_OK);
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "generator"), "splitmix64-uniform-v1");
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "seed"), "12345");
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "identity"), ck_weights_identity(a));
    ck_st_close(f);
    ck_weights_free(a);
    ck_weights_free(b);
    unlink(path);
}

static void test_synthetic_rejects_duplicate_name(void)
{
    const ck_weight_spec s[2] = {{"w", 1, {2}}, {"w", 1, {3}}};
    ck_weights *w = (ck_weights *)&w;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_weights_synthetic(&w, s, 2, 1, &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "spec 1 \"w\""));
}

static void test_synthetic_rejects_rank_above_8(void)
{
    const ck_weight_spec s = {"w", 9, {1, 1, 1, 1, 1, 1, 1, 1}};
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_weights_synthetic(&w, &s, 1, 1, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "spec 0 \"w\""));
}

static void test_synthetic_rejects_overflow(void)
{
    const ck_weight_spec s = {"w", 2, {(size_t)1 << 40, (size_t)1 << 40}};
    ck_weights *w = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_weights_synthetic(&w, &s, 1, 1, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "\"w\": shape: overflows"));
}

/* ---- files -------------------------------------------------------------------------------- */

static void test_module_segments_dropped(void)
{
    const float x[1] = {0.5f};
    const ck_st_entry e[] = {{"module.bert.x", CK_DTYPE_F32, 1, {1}, x, NULL, 0},
                             {"bert.module.y", CK_DTYPE_F32, 1, {1}, x, NULL, 0},
                             {"modules.z", CK_DTYPE_F32, 1, {1}, x, NULL, 0}};
    const char *path = write_file("module.safetensors", e, 3);
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, path, NULL), CK_OK);
    CU_ASSERT_PTR_NOT_NULL(ck_weights_find(w, "bert.x"));
    CU_ASSERT_PTR_NOT_NULL(ck_weights_find(w, "bert.y"));
    CU_ASSERT_PTR_NOT_NULL(ck_weights_find(w, "modules.z"));  /* only whole segments are dropped */
    CU_ASSERT_PTR_NULL(ck_weights_find(w, "module.bert.x"));
    ck_weights_free(w);
    unlink(path);
}

static void test_duplicate_after_normalising_rejected(void)
{
    const float x[1] = {0.5f};
    const ck_st_entry e[] = {{"a.w", CK_DTYPE_F32, 1, {1}, x, NULL, 0},
                             {"module.a.w", CK_DTYPE_F32, 1, {1}, x, NULL, 0}};
    const char *path = write_file("dupnorm.safetensors", e, 2);
    expect_load_fails(path, CK_E_FORMAT, "tensor \"module.a.w\": name: duplicate");
    unlink(path);
}

/* F16 1, -2, 2^-24 (subnormal), 65504 and BF16 1, -3, 2^-126 convert to exactly those floats. */
static void test_f16_and_bf16_converted(void)
{
    const uint16_t h[4] = {0x3c00, 0xc000, 0x0001, 0x7bff}, b[3] = {0x3f80, 0xc040, 0x0080};
    const ck_st_entry e[] = {{"h", CK_DTYPE_F16, 1, {4}, h, NULL, 0}, {"b", CK_DTYPE_BF16, 1, {3}, b, NULL, 0}};
    const float want_h[4] = {1.0f, -2.0f, 0x1p-24f, 65504.0f}, want_b[3] = {1.0f, -3.0f, 0x1p-126f};
    const char *path = write_file("half.safetensors", e, 2);
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, path, NULL), CK_OK);
    CU_ASSERT_EQUAL(memcmp(ck_weights_find(w, "h")->data, want_h, sizeof want_h), 0);
    CU_ASSERT_EQUAL(memcmp(ck_weights_find(w, "b")->data, want_b, sizeof want_b), 0);
    ck_weights_free(w);
    unlink(path);
}

static void test_nan_weight_rejected(void)
{
    const float x[4] = {0.0f, 1.0f, NAN, 2.0f};
    const ck_st_entry e = {"bert.w", CK_DTYPE_F32, 2, {2, 2}, x, NULL, 0};
    const char *path = write_file("nan.safetensors", &e, 1);
    expect_load_fails(path, CK_E_NONFINITE, "tensor \"bert.w\": element 2 is NaN");
    unlink(path);
}

static void test_f16_inf_rejected(void)
{
    const uint16_t h[2] = {0x3c00, 0xfc00};
    const ck_st_entry e = {"h", CK_DTYPE_F16, 1, {2}, h, NULL, 0};
    const char *path = write_file("inf.safetensors", &e, 1);
    expect_load_fails(path, CK_E_NONFINITE, "tensor \"h\": element 1 is Inf");
    unlink(path);
}

static void test_integer_tensors_skipped(void)
{
    const int64_t ids[3] = {0, 1, 2};
    const float x[1] = {3.0f};
    const ck_st_entry e[] = {{"bert.embeddings.position_ids", CK_DTYPE_I64, 2, {1, 3}, ids, NULL, 0},
                             {"bert.w", CK_DTYPE_F32, 1, {1}, x, NULL, 0}};
    const char *path = write_file("i64.safetensors", e, 2);
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, path, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), 1);
    CU_ASSERT_PTR_NULL(ck_weights_find(w, "bert.embeddings.position_ids"));
    CU_ASSERT_EQUAL(ck_weights_find(w, "bert.w")->data[0], 3.0f);
    ck_weights_free(w);
    unlink(path);
}

/* ---- weight norm: folded values, flat safetensors names, and every malformed pair refused ---- */

/* g = [2, -1] over v = [[3, 4], [0, 5]] (dim 0 rows): W = [[1.2, 1.6], [0, -1]] exactly. */
static void test_weight_norm_flat_names(void)
{
    const float g[2] = {2.0f, -1.0f}, v[4] = {3.0f, 4.0f, 0.0f, 5.0f}, b[2] = {0.5f, 0.25f};
    const ck_st_entry e[] = {{"decoder.conv.weight_g", CK_DTYPE_F32, 3, {2, 1, 1}, g, NULL, 0},
                             {"decoder.conv.weight_v", CK_DTYPE_F32, 3, {2, 1, 2}, v, NULL, 0},
                             {"decoder.conv.bias", CK_DTYPE_F32, 1, {2}, b, NULL, 0}};
    const char *path = write_file("wn.safetensors", e, 3);
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, path, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), 4);
    const ck_tensor *t = ck_weights_find(w, "decoder.conv.weight");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(t->derived && t->rank == 3 && t->shape[0] == 2 && t->shape[2] == 2);
    CU_ASSERT(t->data[0] == 1.2f && t->data[1] == 1.6f && t->data[2] == 0.0f && t->data[3] == -1.0f);
    ck_weights_free(w);
    static const char *const only_bert[] = {"bert", NULL};
    CU_ASSERT_EQUAL_FATAL(ck_weights_load_groups(&w, path, only_bert, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_count(w), 0);  /* the decoder group is not read, nor folded */
    CU_ASSERT_FALSE(ck_weights_has_group(w, "decoder"));
    CU_ASSERT_FALSE(ck_weights_read_group(w, "decoder"));
    ck_weights_free(w);
    unlink(path);
}

static void expect_pair_refused(const ck_st_entry *e, size_t n, int code, const char *needle)
{
    const char *path = write_file("wn_bad.safetensors", e, n);
    expect_load_fails(path, code, needle);
    unlink(path);
}

static void test_weight_norm_malformed_refused(void)
{
    const float g[2] = {1.0f, 1.0f}, v[4] = {1.0f, 0.0f, 0.0f, 0.0f}, w4[4] = {0};
    const ck_st_entry lone_g[] = {{"p.c.weight_g", CK_DTYPE_F32, 3, {2, 1, 1}, g, NULL, 0}};
    expect_pair_refused(lone_g, 1, CK_E_FORMAT, "\"p.c.weight_g\": weight norm: no \"p.c.weight_v\"");
    const ck_st_entry lone_v[] = {{"p.c.parametrizations.weight.original1", CK_DTYPE_F32, 2, {2, 2}, v,
                                   NULL, 0}};
    expect_pair_refused(lone_v, 1, CK_E_FORMAT, "no magnitude (g) beside it");
    const ck_st_entry counts[] = {{"p.c.weight_g", CK_DTYPE_F32, 1, {1}, g, NULL, 0},
                                  {"p.c.weight_v", CK_DTYPE_F32, 2, {2, 2}, v, NULL, 0}};
    expect_pair_refused(counts, 2, CK_E_FORMAT, "g has 1 elements, v's dim 0 is 2");
    const ck_st_entry stored[] = {{"p.c.weight_g", CK_DTYPE_F32, 1, {2}, g, NULL, 0},
                                  {"p.c.weight_v", CK_DTYPE_F32, 2, {2, 2}, v, NULL, 0},
                                  {"p.c.weight", CK_DTYPE_F32, 2, {2, 2}, w4, NULL, 0}};
    expect_pair_refused(stored, 3, CK_E_FORMAT, "\"p.c.weight\": stored beside its weight-norm g and v");
    /* both stored forms of one weight: P.weight is derived twice, not stored */
    const float eye[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    const ck_st_entry forms[] = {{"p.c.weight_g", CK_DTYPE_F32, 1, {2}, g, NULL, 0},
                                 {"p.c.weight_v", CK_DTYPE_F32, 2, {2, 2}, eye, NULL, 0},
                                 {"p.c.parametrizations.weight.original0", CK_DTYPE_F32, 1, {2}, g,
                                  NULL, 0},
                                 {"p.c.parametrizations.weight.original1", CK_DTYPE_F32, 2, {2, 2},
                                  eye, NULL, 0}};
    expect_pair_refused(forms, 4, CK_E_FORMAT, "\"p.c.parametrizations.weight.original0\": weight "
                        "norm: \"p.c.weight\" is also derived from another g and v");
    const ck_st_entry zero[] = {{"p.c.weight_g", CK_DTYPE_F32, 1, {2}, g, NULL, 0},
                                {"p.c.weight_v", CK_DTYPE_F32, 2, {2, 2}, v, NULL, 0}};
    expect_pair_refused(zero, 2, CK_E_NONFINITE, "\"p.c.weight_v\": weight norm: row 1 of v has norm 0");
}

/* A foreign file whose 54-byte header leaves the data at file offset 62 (not 4-aligned): the F32
 * tensor must be copied to an aligned buffer with the same value. */
static void test_unaligned_f32_copied(void)
{
    static const unsigned char raw[] = "\x36\0\0\0\0\0\0\0"
                                       "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}"
                                       "\x00\x00\xc0\x3f";  /* 1.5f */
    const char *path = ck_test_tmp_path("unaligned.safetensors");
    FILE *fp = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fwrite(raw, 1, sizeof raw - 1, fp);
    fclose(fp);
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, path, NULL), CK_OK);
    const ck_tensor *t = ck_weights_find(w, "w");
    CU_ASSERT_EQUAL((uintptr_t)t->data % 4, 0);
    CU_ASSERT_EQUAL(t->data[0], 1.5f);
    ck_weights_free(w);
    unlink(path);
}

/* ---- release --------------------------------------------------------------------------------- */

/* Released owned tensors are freed (ASan sees any use or double free); the rest keep their values,
 * name, shape and digest; hashing or saving a set with a released tensor fails naming it. */
static void test_release_synthetic(void)
{
    ck_weights *w = NULL;
    ck_error err = {0};
    float want[21];
    CU_ASSERT_EQUAL_FATAL(ck_weights_synthetic(&w, SPECS, 4, CK_SYNTH_DEFAULT_SEED, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_weights_hash(w, NULL), CK_OK);
    unsigned char sha[32];
    memcpy(sha, ck_weights_at(w, 1)->sha256, sizeof sha);
    CU_ASSERT_EQUAL(ck_weights_release(w, 1), CK_OK);
    CU_ASSERT_EQUAL(ck_weights_release(w, 1), CK_OK); /* again: no-op */
    const ck_tensor *t = ck_weights_at(w, 1);
    CU_ASSERT_PTR_NULL(t->data);
    CU_ASSERT_STRING_EQUAL(t->name, "bert_encoder.weight");
    CU_ASSERT(t->elements == 4 && t->has_sha256 && memcmp(t->sha256, sha, sizeof sha) == 0);
    ck_synth_tensor_f32(SPECS[2].name, CK_SYNTH_DEFAULT_SEED, want, 21);
    CU_ASSERT_EQUAL(memcmp(ck_weights_at(w, 2)->data, want, sizeof want), 0);
    CU_ASSERT_EQUAL(ck_weights_release(w, 4), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_weights_release(NULL, 0), CK_E_ARG);
    CU_ASSERT_EQUAL(ck_weights_hash(w, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "\"bert_encoder.weight\""));
    ck_error_clear(&err);
    CU_ASSERT_EQUAL(ck_weights_save(w, ck_test_tmp_path("released.safetensors"), &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "\"bert_encoder.weight\""));
    CU_ASSERT_EQUAL(access(ck_test_tmp_path("released.safetensors"), F_OK), -1);
    ck_weights_free(w);
}

/* Rss in kB of the mapping of this process that contains p (from /proc/self/smaps), or -1. */
static long mapping_rss_kb(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    long rss = -1;
    int inside = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        } else if (inside && sscanf(line, "Rss: %ld kB", &rss) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return rss;
}

/* A tensor used in place from the file mapping: loading touched its pages (finiteness check);
 * releasing drops every whole page inside it from the process, and its neighbour still reads
 * its own values. */
static void test_release_drops_mapped_pages(void)
{
    enum { BIG = 8192 }; /* 32 KiB: at least 6 whole pages of 4 KiB wherever it starts */
    static float big[BIG];
    const float small[3] = {1.5f, -2.0f, 0.25f};
    for (size_t i = 0; i < BIG; i++) {
        big[i] = (float)i;
    }
    const ck_st_entry e[2] = {{"big", CK_DTYPE_F32, 1, {BIG}, big, NULL, 0},
                              {"small", CK_DTYPE_F32, 1, {3}, small, NULL, 0}};
    const char *path = write_file("release.safetensors", e, 2);
    ck_weights *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_weights_load(&w, path, NULL), CK_OK);
    const ck_tensor *b = ck_weights_find(w, "big"), *s = ck_weights_find(w, "small");
    CU_ASSERT_FATAL(b != NULL && s != NULL && b->data[BIG - 1] == (float)(BIG - 1));
    const void *in_map = b->data;
    long before = mapping_rss_kb(in_map);
    CU_ASSERT_EQUAL(ck_weights_release(w, (size_t)(b - ck_weights_at(w, 0))), CK_OK);
    long after = mapping_rss_kb(in_map);
    fprintf(stderr, "\n    mapping Rss %ld kB before release, %ld kB after\n", before, after);
    CU_ASSERT_TRUE(before >= 32 && after >= 0 && after <= before - 24);
    CU_ASSERT_PTR_NULL(b->data);
    CU_ASSERT_EQUAL(memcmp(s->data, small, sizeof small), 0);
    ck_weights_free(w);
    unlink(path);
}

static void test_load_missing_file(void)
{
    expect_load_fails("/nonexistent/w.safetensors", CK_E_IO, "/nonexistent/w.safetensors");
}

/* A FIFO with no writer is refused at once, not waited on (the .pth sniff read its first bytes
 * through a blocking fopen); alarm() turns a hang into a failure. */
static void test_fifo_refused(void)
{
    const char *path = ck_test_tmp_path("fifo.safetensors");
    CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
    alarm(10);
    char want[4200];
    snprintf(want, sizeof want, "%s: not a regular file", path);
    expect_load_fails(path, CK_E_IO, want);
    alarm(0);
    unlink(path);
}

static void test_free_accepts_null(void)
{
    ck_weights_free(NULL);
    CU_ASSERT_EQUAL(ck_weights_count(NULL), 0);
    CU_ASSERT_STRING_EQUAL(ck_weights_identity(NULL), "");
}

static void test_cleanup(void)
{
    CU_ASSERT_EQUAL(rmdir(ck_test_tmp_dir()), 0); /* every test removed its files: dir empty */
}

CK_TEST_MAIN("weights", {"sha256 vectors", test_sha256_vectors}, {"sha256 file", test_sha256_file},
             {"synthetic identity and values", test_synthetic_identity_and_values},
             {"hash matches independent digest", test_hash_matches_independent_digest},
             {"synthetic round trip bit identical", test_synthetic_round_trip_bit_identical},
             {"synthetic rejects duplicate name", test_synthetic_rejects_duplicate_name},
             {"synthetic rejects rank above 8", test_synthetic_rejects_rank_above_8},
             {"synthetic rejects overflow", test_synthetic_rejects_overflow},
             {"module segments dropped", test_module_segments_dropped},
             {"duplicate after normalising rejected", test_duplicate_after_normalising_rejected},
             {"f16 and bf16 converted", test_f16_and_bf16_converted},
             {"nan weight rejected", test_nan_weight_rejected},
             {"f16 inf rejected", test_f16_inf_rejected},
             {"integer tensors skipped", test_integer_tensors_skipped},
             {"unaligned f32 copied", test_unaligned_f32_copied},
             {"weight norm with flat names", test_weight_norm_flat_names},
             {"malformed weight norm refused", test_weight_norm_malformed_refused},
             {"release synthetic", test_release_synthetic},
             {"release drops mapped pages", test_release_drops_mapped_pages},
             {"load missing file", test_load_missing_file},
             {"fifo refused", test_fifo_refused},
             {"free accepts null", test_free_accepts_null}, {"cleanup", test_cleanup})
