/* test_safetensors.c - the safetensors reader rejects every malformed header with a named field, and the
 * writer produces exact bytes, round-trips every dtype and never damages an existing file. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ck_status.h"
#include "ck_test.h"
#include "safetensors.h"

/* ---- helpers ------------------------------------------------------------------------------ */


/* Path of `name` inside this run's private temporary directory. */
static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *fp = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    CU_ASSERT_EQUAL(fwrite(bytes, 1, n, fp), n);
    fclose(fp);
}

/* Reads a whole file into a malloc'd buffer; *n gets its size. NULL when absent. */
static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        return NULL;
    }
    unsigned char *buf = malloc(1 << 20);
    *n = fread(buf, 1, 1 << 20, fp);
    fclose(fp);
    return buf;
}

/* Writes a raw file: u64 LE `declared` header length, the JSON text, then `data_len` bytes 0..255. */
static const char *raw_file(uint64_t declared, const char *json, size_t data_len)
{
    static unsigned char buf[4096];
    size_t jn = strlen(json);
    for (int i = 0; i < 8; i++) {
        buf[i] = (unsigned char)(declared >> (8 * i));
    }
    memcpy(buf + 8, json, jn);
    for (size_t i = 0; i < data_len; i++) {
        buf[8 + jn + i] = (unsigned char)i;
    }
    const char *path = ck_test_tmp_path("raw.safetensors");
    write_bytes(path, buf, 8 + jn + data_len);
    return path;
}

/* Opens a raw file whose header is `json` followed by data_len bytes; expects `code` and a message
 * containing each of the NULL-terminated needles (the file path is always checked too). */
static void expect_reject(const char *json, size_t data_len, int code, const char *needle1,
                          const char *needle2)
{
    const char *path = raw_file(strlen(json), json, data_len);
    ck_st_file *f = (ck_st_file *)&f;  /* non-NULL sentinel: must be reset to NULL */
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_open(&f, path, &err), code);
    CU_ASSERT_EQUAL(err.code, code);
    CU_ASSERT_PTR_NULL(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, needle1));
    if (needle2 != NULL) {
        CU_ASSERT_PTR_NOT_NULL(strstr(err.message, needle2));
    }
    if (err.code != code || strstr(err.message, needle1) == NULL) {
        fprintf(stderr, "    message: %s\n", err.message);
    }
    unlink(path);
}

/* ---- reader rejections -------------------------------------------------------------------- */

static void test_reject_truncated_header_length(void)
{
    const char *path = ck_test_tmp_path("short.safetensors");
    ck_st_file *f = NULL;
    ck_error err = {0};
    write_bytes(path, "\x08\x00\x00\x00\x00", 5);
    CU_ASSERT_EQUAL(ck_st_open(&f, path, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "header length: truncated"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
    unlink(path);
}

static void test_reject_header_length_beyond_file(void)
{
    const char *path = raw_file(1000, "{}", 0);
    ck_st_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_open(&f, path, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "header length: 1000 bytes exceeds the 2 after it"));
    unlink(path);
}

static void test_reject_huge_header_length(void)
{
    const char *path = raw_file(UINT64_MAX, "{}", 0);
    ck_st_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_open(&f, path, &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "header length"));
    unlink(path);
}

static void test_reject_bad_json(void)
{
    expect_reject("{\"a\": {\"dtype\": \"F32\",", 0, CK_E_FORMAT, "header: JSON syntax error at byte", NULL);
}

static void test_reject_json_not_object(void)
{
    expect_reject("[1, 2]", 0, CK_E_FORMAT, "header: not a JSON object", NULL);
}

static void test_reject_trailing_garbage(void)
{
    expect_reject("{}  x", 0, CK_E_FORMAT, "header: text after the JSON value at byte 4", NULL);
    expect_reject("{}\x01", 0, CK_E_FORMAT,
                  "header: a control byte that is not JSON whitespace at byte 2", NULL);
}

static void test_reject_end_out_of_bounds(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}", 8, CK_E_FORMAT,
                  "tensor \"w\"", "data_offsets: end 12 beyond data section of 8 bytes");
}

static void test_reject_begin_after_end(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8, CK_E_FORMAT,
                  "tensor \"w\"", "data_offsets: begin 8 > end 4");
}

static void test_reject_size_mismatch(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, CK_E_FORMAT,
                  "tensor \"w\"", "data_offsets: 8 bytes, dtype x shape needs 6");
}

static void test_reject_overlap(void)
{
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                  16, CK_E_FORMAT, "tensor \"b\": data_offsets: overlaps tensor \"a\"", NULL);
}

/* The reference implementation's layout rule: tensors back to back from byte 0 to the file's end. */
static void test_reject_unused_bytes(void)
{
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12,
                  CK_E_FORMAT, "data section: 4 bytes after the last tensor's data (8 of 12 used)",
                  NULL);
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                  12, CK_E_FORMAT,
                  "tensor \"b\": data_offsets: begins at 8, leaving bytes 4..7 of the data section unused",
                  NULL);
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
                  CK_E_FORMAT, "tensor \"a\": data_offsets: begins at 4, leaving bytes 0..3", NULL);
    /* An empty tensor at the current position is fine, before or after one at the same offset. */
    const char *json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                       "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}";
    const char *path = raw_file(strlen(json), json, 4);
    ck_st_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_open(&f, path, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_st_count(f), 2);
    ck_st_close(f);
    unlink(path);
    /* "__metadata__": null is no metadata (an optional map in the reference) */
    json = "{\"__metadata__\":null,\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
    path = raw_file(strlen(json), json, 4);
    f = NULL;
    CU_ASSERT_EQUAL(ck_st_open(&f, path, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_st_count(f), 1);
    CU_ASSERT_PTR_NULL(ck_st_metadata(f, "format"));
    ck_st_close(f);
    unlink(path);
}

/* cJSON reads 02 as 2; RFC 8259 (and the reference implementation's serde_json) does not. */
static void test_reject_non_json_number(void)
{
    /* sizes spelled as floats or with a sign: JSON numbers, but not the unsigned integers the
     * reference reads */
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8.0]}}", 8,
                  CK_E_FORMAT, "header: a number at byte 50 is not written as a non-negative integer",
                  NULL);
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[2e0],\"data_offsets\":[0,8]}}", 8,
                  CK_E_FORMAT, "at byte 29 is not written as a non-negative integer", NULL);
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-0,8]}}", 8,
                  CK_E_FORMAT, "at byte 48 is not written as a non-negative integer", NULL);
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", 8,
                  CK_E_FORMAT, "header: a number not spelled as JSON allows at byte 29", NULL);
}

static void test_reject_unknown_dtype(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F12\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, CK_E_FORMAT,
                  "tensor \"w\"", "dtype: unknown dtype \"F12\"");
}

static void test_reject_shape_overflow(void)
{
    /* 2^40 x 2^40 elements overflows a 64-bit size_t; each factor alone is a valid integer. */
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[1099511627776,1099511627776],"
                  "\"data_offsets\":[0,4]}}",
                  4, CK_E_FORMAT, "tensor \"w\"", "shape: element count overflows");
}

static void test_reject_byte_count_overflow(void)
{
    /* 2^62 elements fit in size_t, 2^62 x 8 bytes do not. */
    expect_reject("{\"w\":{\"dtype\":\"I64\",\"shape\":[4194304,1099511627776],"
                  "\"data_offsets\":[0,8]}}",
                  8, CK_E_FORMAT, "tensor \"w\"", "shape: byte count overflows");
}

static void test_reject_duplicate_name(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                  "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                  8, CK_E_FORMAT, "tensor \"w\": name: duplicate", NULL);
}

static void test_reject_non_string_metadata(void)
{
    expect_reject("{\"__metadata__\":{\"seed\":5}}", 0, CK_E_FORMAT,
                  "__metadata__: \"seed\": value is not a string", NULL);
}

static void test_reject_negative_shape(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,-1],\"data_offsets\":[0,0]}}", 0,
                  CK_E_FORMAT, "tensor \"w\"", "shape[1]: not a non-negative integer");
}

static void test_reject_rank_above_8(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
                  4, CK_E_FORMAT, "tensor \"w\"", "shape: rank 9 > 8");
}

static void test_reject_bad_offsets_array(void)
{
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, CK_E_FORMAT,
                  "tensor \"w\"", "data_offsets: not an array of 2 non-negative integers");
}

static void test_reject_missing_dtype(void)
{
    expect_reject("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, CK_E_FORMAT, "tensor \"w\"",
                  "dtype: missing or not a string");
}

/* Bytes in memory read as the file they came from: same tensors, same data bytes; the same checks
 * (a truncated header length) with the name given. */
static void test_open_memory_equals_file(void)
{
    const char *path = ck_test_path("tests/fixtures/pth/kokoro_reduced.safetensors");
    ck_st_file *a = NULL, *b = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&a, path, &err), CK_OK);
    FILE *fp = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    static unsigned char bytes[1 << 20];
    size_t n = fread(bytes, 1, sizeof bytes, fp);
    fclose(fp);
    CU_ASSERT_EQUAL_FATAL(ck_st_open_memory(&b, bytes, n, "weights in memory", &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_st_count(a), ck_st_count(b));
    CU_ASSERT_TRUE(ck_st_count(a) > 0);
    for (size_t i = 0; i < ck_st_count(a); i++) {
        const ck_st_tensor *x = ck_st_at(a, i), *y = ck_st_at(b, i);
        CU_ASSERT_STRING_EQUAL(x->name, y->name);
        CU_ASSERT_TRUE(x->bytes == y->bytes && memcmp(x->data, y->data, x->bytes) == 0);
        CU_ASSERT_TRUE((const unsigned char *)y->data >= bytes &&
                       (const unsigned char *)y->data + y->bytes <= bytes + n); /* not copied */
    }
    ck_st_close(a);
    ck_st_close(b);
    CU_ASSERT_EQUAL(ck_st_open_memory(&b, bytes, 5, NULL, &err), CK_E_FORMAT);
    CU_ASSERT_STRING_EQUAL(err.message, "<memory>: header length: truncated (file has 5 bytes, "
                           "needs 8)");
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_EQUAL(ck_st_open_memory(&b, NULL, 5, NULL, NULL), CK_E_ARG);
}

static void test_missing_file_is_io(void)
{
    ck_st_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_open(&f, "/nonexistent/x.safetensors", &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "/nonexistent/x.safetensors"));
}

/* ---- reader and conversion ---------------------------------------------------------------- */

/* A hand-made file read back: dtypes, shapes, offsets, metadata, OTHER dtype, empty tensor. */
static void test_read_hand_made(void)
{
    const char *json = "{\"__metadata__\":{\"format\":\"pt\"},"
                       "\"b\":{\"dtype\":\"BOOL\",\"shape\":[2,2],\"data_offsets\":[4,8]},"
                       "\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
                       "\"e\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[8,8]}}";
    const char *path = raw_file(strlen(json), json, 8);
    ck_st_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, path, &err), CK_OK);
    CU_ASSERT_EQUAL(ck_st_count(f), 3);
    const ck_st_tensor *b = ck_st_at(f, 0), *a = ck_st_find(f, "a"), *e = ck_st_at(f, 2);
    CU_ASSERT_STRING_EQUAL(b->name, "b");
    CU_ASSERT_EQUAL(b->dtype, CK_DTYPE_OTHER);
    CU_ASSERT(b->rank == 2 && b->shape[0] == 2 && b->shape[1] == 2 && b->elements == 4);
    CU_ASSERT_EQUAL(((const unsigned char *)b->data)[0], 4);  /* data byte i holds i */
    CU_ASSERT(a->dtype == CK_DTYPE_BF16 && a->bytes == 4 && ((const unsigned char *)a->data)[3] == 3);
    CU_ASSERT(e->elements == 0 && e->bytes == 0);
    CU_ASSERT_PTR_NULL(ck_st_at(f, 3));
    CU_ASSERT_PTR_NULL(ck_st_find(f, "zz"));
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "format"), "pt");
    CU_ASSERT_PTR_NULL(ck_st_metadata(f, "absent"));
    ck_st_close(f);
    unlink(path);
}

/* Reference binary16 decode written from the IEEE 754 definition, in double. */
static double ref_half(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double mag = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -mag : mag;
}

static void test_f16_exact_including_subnormals(void)
{
    static uint16_t h[65536];
    static float out[65536];
    for (size_t i = 0; i < 65536; i++) {
        h[i] = (uint16_t)i;
    }
    ck_st_tensor t = {"h", CK_DTYPE_F16, 1, {65536}, 65536, h, sizeof h};
    CU_ASSERT_EQUAL_FATAL(ck_st_to_f32(&t, out, 65536, NULL), CK_OK);
    size_t bad = 0;
    for (size_t i = 0; i < 65536; i++) {
        double want = ref_half((uint16_t)i);
        int same = isnan(want) ? isnan(out[i]) && !signbit(out[i]) == !signbit(want)
                               : (double)out[i] == want && !signbit(out[i]) == !signbit(want);
        if (!same && bad++ == 0) {
            fprintf(stderr, "    half 0x%04zx: got %.9g want %.9g\n", i, (double)out[i], want);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    uint32_t nan_bits;
    memcpy(&nan_bits, &out[0x7e01], 4);
    CU_ASSERT_EQUAL(nan_bits, 0x7fc02000u);  /* payload kept in the high mantissa bits */
    CU_ASSERT_EQUAL(out[1], 0x1p-24f);
}

static void test_bf16_is_high_half(void)
{
    uint16_t h[3] = {0x3f80, 0xc040, 0x7f80};
    float out[3];
    ck_st_tensor t = {"b", CK_DTYPE_BF16, 1, {3}, 3, h, sizeof h};
    CU_ASSERT_EQUAL_FATAL(ck_st_to_f32(&t, out, 3, NULL), CK_OK);
    CU_ASSERT(out[0] == 1.0f && out[1] == -3.0f && isinf(out[2]));
}

static void test_to_f32_rejects_small_output(void)
{
    float src[4] = {1, 2, 3, 4}, out[4];
    ck_st_tensor t = {"w", CK_DTYPE_F32, 1, {4}, 4, src, sizeof src};
    ck_error err = {0};
    ck_test_fill_canary(out, 4);
    CU_ASSERT_EQUAL(ck_st_to_f32(&t, out, 3, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"w\": output holds 3 floats, needs 4"));
    CU_ASSERT_TRUE(ck_test_canary_intact(out, 4));
}

static void test_to_f32_rejects_int_dtype(void)
{
    int32_t src[1] = {7};
    float out[1];
    ck_st_tensor t = {"ids", CK_DTYPE_I32, 1, {1}, 1, src, sizeof src};
    ck_error err = {0};
    ck_test_fill_canary(out, 1);
    CU_ASSERT_EQUAL(ck_st_to_f32(&t, out, 1, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"ids\": dtype: I32"));
    CU_ASSERT_TRUE(ck_test_canary_intact(out, 1));
}

/* ---- writer ------------------------------------------------------------------------------- */

/* {"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} is 79 bytes,
 * padded with one space to 80 = 0x50; then 1.0f (0x3f800000) and -2.0f (0xc0000000) little-endian. */
static void test_write_exact_bytes(void)
{
    static const unsigned char want[] =
        "\x50\0\0\0\0\0\0\0"
        "{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} "
        "\x00\x00\x80\x3f\x00\x00\x00\xc0";
    const float data[2] = {1.0f, -2.0f};
    ck_st_entry e = {"a", CK_DTYPE_F32, 1, {2}, data, NULL, 0};
    ck_st_meta m = {"k", "v"};
    const char *path = ck_test_tmp_path("exact.safetensors");
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, &e, 1, &m, 1, NULL), CK_OK);
    unsigned char *got = read_bytes(path, &n);
    CU_ASSERT_EQUAL(n, sizeof want - 1);
    CU_ASSERT(got != NULL && memcmp(got, want, sizeof want - 1) == 0);
    free(got);
    unlink(path);
}

/* Every writable dtype, a scalar, an empty tensor and awkward metadata survive a round trip. */
static void test_round_trip_all_dtypes(void)
{
    const float f32[3] = {1.5f, -0.0f, 3e-39f};
    const uint16_t f16[2] = {0x3c00, 0x0001}, bf16[2] = {0x3f80, 0xff80};
    const int32_t i32[2] = {-7, 2147483647};
    const int64_t i64[1] = {-9000000000LL};
    const unsigned char u8[3] = {'{', '\n', 0xff};
    const ck_st_entry e[] = {
        {"f32", CK_DTYPE_F32, 2, {1, 3}, f32, NULL, 0},   {"f16", CK_DTYPE_F16, 1, {2}, f16, NULL, 0},
        {"bf16", CK_DTYPE_BF16, 1, {2}, bf16, NULL, 0},   {"i32", CK_DTYPE_I32, 1, {2}, i32, NULL, 0},
        {"i64", CK_DTYPE_I64, 0, {0}, i64, NULL, 0},      {"empty", CK_DTYPE_F32, 1, {0}, f32, NULL, 0},
        {"u8", CK_DTYPE_U8, 1, {3}, u8, NULL, 0},
    };
    const ck_st_meta m[] = {{"quote", "say \"hi\"\\ \n\t"}, {"unicode", "\xc9\x99 \xe2\x80\x94 ok"}};
    const char *path = ck_test_tmp_path("round.safetensors");
    ck_st_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, e, 7, m, 2, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, path, NULL), CK_OK);
    CU_ASSERT_EQUAL(ck_st_count(f), 7);
    for (size_t i = 0; i < 7; i++) {
        const ck_st_tensor *t = ck_st_at(f, i);
        size_t bytes = ck_dtype_size(e[i].dtype) * (e[i].rank == 0 ? 1 : e[i].shape[0]) *
                       (e[i].rank == 2 ? e[i].shape[1] : 1);
        CU_ASSERT_STRING_EQUAL(t->name, e[i].name);
        CU_ASSERT(t->dtype == e[i].dtype && t->rank == e[i].rank && t->bytes == bytes);
        CU_ASSERT_EQUAL(memcmp(t->data, e[i].data, bytes), 0);
    }
    CU_ASSERT_EQUAL((uintptr_t)ck_st_at(f, 0)->data % 8, 0);  /* data section starts 8-aligned */
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "quote"), m[0].value);
    CU_ASSERT_STRING_EQUAL(ck_st_metadata(f, "unicode"), m[1].value);
    ck_st_close(f);
    unlink(path);
}

/* Segments of two files (one empty segment, one in the middle of a file) land back to back in
 * one tensor, the file offsets of ck_st_file_offset read the same bytes, metadata keeps its order;
 * segments that do not add up to the shape are refused with no file written. */
static void test_segment_entries(void)
{
    const float a[4] = {1.0f, 2.0f, 3.0f, 4.0f}, b[2] = {5.0f, 6.0f}, want[5] = {2.0f, 3.0f, 4.0f,
                                                                              5.0f, 6.0f};
    FILE *fa = tmpfile(), *fb = tmpfile();
    CU_ASSERT_FATAL(fa != NULL && fb != NULL);
    CU_ASSERT_FATAL(fwrite(a, sizeof a, 1, fa) == 1 && fwrite(b, sizeof b, 1, fb) == 1);
    CU_ASSERT_FATAL(fflush(fa) == 0 && fflush(fb) == 0);
    const ck_st_segment g[3] = {{fileno(fa), 4, 12}, {fileno(fb), 0, 0}, {fileno(fb), 0, 8}};
    const ck_st_entry e[2] = {{"joined", CK_DTYPE_F32, 1, {5}, NULL, NULL, 0},
                              {"tail", CK_DTYPE_F32, 1, {1}, NULL, NULL, 0}};
    const ck_st_segments segs[2] = {{g, 3}, {g + 2, 1}};
    const ck_st_segments short_segs[2] = {{g, 2}, {g + 2, 1}};
    const ck_st_meta m[2] = {{"z", "1"}, {"a", "2"}};
    const char *path = ck_test_tmp_path("segments.safetensors");
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_write_segments(path, e, short_segs, 2, m, 2, &err), CK_E_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"joined\": segments hold 12 bytes, its "
                                               "shape 20"));
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    const ck_st_entry e2[2] = {e[0], {"tail", CK_DTYPE_F32, 1, {2}, NULL, NULL, 0}};
    ck_st_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_st_write_segments(path, e2, segs, 2, m, 2, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, path, NULL), CK_OK);
    const ck_st_tensor *t = ck_st_find(f, "joined");
    CU_ASSERT_EQUAL(memcmp(t->data, want, sizeof want), 0);
    CU_ASSERT_EQUAL(memcmp(ck_st_find(f, "tail")->data, b, sizeof b), 0);
    const char *key = NULL, *value = NULL;
    CU_ASSERT_EQUAL(ck_st_metadata_count(f), 2);
    CU_ASSERT_TRUE(ck_st_metadata_at(f, 0, &key, &value) && strcmp(key, "z") == 0);
    CU_ASSERT_TRUE(ck_st_metadata_at(f, 1, &key, &value) && strcmp(value, "2") == 0);
    CU_ASSERT_FALSE(ck_st_metadata_at(f, 2, &key, &value));
    FILE *raw = fopen(path, "rb");
    float first = 0.0f;
    CU_ASSERT_FATAL(raw != NULL);
    CU_ASSERT_EQUAL(fseek(raw, (long)ck_st_file_offset(f, t), SEEK_SET), 0);
    CU_ASSERT_EQUAL(fread(&first, sizeof first, 1, raw), 1);
    CU_ASSERT_EQUAL(first, 2.0f);
    fclose(raw);
    ck_st_close(f);
    fclose(fa);
    fclose(fb);
    unlink(path);
}

/* Data streamed from a spool at an offset lands exactly, between two in-memory tensors. */
static void test_spool_entries(void)
{
    const float head[1] = {9.0f}, spooled[3] = {1.0f, 2.0f, 3.0f}, junk = 42.0f;
    FILE *spool = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(spool);
    fwrite(&junk, sizeof junk, 1, spool);
    fwrite(spooled, sizeof spooled, 1, spool);
    const ck_st_entry e[] = {{"head", CK_DTYPE_F32, 1, {1}, head, NULL, 0},
                             {"spooled", CK_DTYPE_F32, 1, {3}, NULL, spool, (long)sizeof junk},
                             {"tail", CK_DTYPE_F32, 1, {1}, head, NULL, 0}};
    const char *path = ck_test_tmp_path("spool.safetensors");
    ck_st_file *f = NULL;
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, e, 3, NULL, 0, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_st_open(&f, path, NULL), CK_OK);
    CU_ASSERT_EQUAL(memcmp(ck_st_find(f, "spooled")->data, spooled, sizeof spooled), 0);
    CU_ASSERT_EQUAL(memcmp(ck_st_find(f, "tail")->data, head, sizeof head), 0);
    ck_st_close(f);
    fclose(spool);
    unlink(path);
}

/* ck_st_header gives exactly the bytes ck_st_write puts before the data (u64 length and padded
 * header), from names, dtypes and shapes alone: what lets several writers place the data of one
 * file themselves (ckbatch-mpi's ranks). */
static void test_header_equals_written_prefix(void)
{
    const float rows[6] = {1, 2, 3, 4, 5, 6};
    const unsigned char text[5] = {'a', 'b', 'c', '\n', 'd'};
    const ck_st_entry e[] = {{"rows", CK_DTYPE_F32, 2, {3, 2}, rows, NULL, 0},
                             {"text", CK_DTYPE_U8, 1, {5}, text, NULL, 0}};
    const ck_st_entry layout[] = {{"rows", CK_DTYPE_F32, 2, {3, 2}, NULL, NULL, 0},
                                  {"text", CK_DTYPE_U8, 1, {5}, NULL, NULL, 0}};
    const ck_st_meta m[] = {{"format", "x \"quoted\""}, {"k", "v"}};
    const char *path = ck_test_tmp_path("prefix.safetensors");
    unsigned char *head = NULL;
    size_t len = 0, n = 0;
    CU_ASSERT_EQUAL_FATAL(ck_st_write(path, e, 2, m, 2, NULL), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_st_header(layout, 2, m, 2, &head, &len, NULL), CK_OK);
    unsigned char *file = read_bytes(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    CU_ASSERT_EQUAL(len % 8, 0);
    CU_ASSERT_EQUAL(n, len + sizeof rows + sizeof text);
    CU_ASSERT_EQUAL(memcmp(file, head, len), 0);
    free(file);
    free(head);
    ck_error err = {0};
    const ck_st_entry dup[] = {layout[0], layout[0]};
    CU_ASSERT_EQUAL(ck_st_header(dup, 2, m, 2, &head, &len, &err), CK_E_ARG);
    CU_ASSERT_PTR_NULL(head);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "duplicate"));
    unlink(path);
}

static void test_write_into_missing_directory(void)
{
    const float x = 1.0f;
    ck_st_entry e = {"x", CK_DTYPE_F32, 1, {1}, &x, NULL, 0};
    ck_error err = {0};
    char path[300];
    snprintf(path, sizeof path, "%s/no_such_dir/out.safetensors", ck_test_tmp_dir());
    CU_ASSERT_EQUAL(ck_st_write(path, &e, 1, NULL, 0, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, path));
    struct stat st;
    CU_ASSERT_NOT_EQUAL(stat(ck_test_tmp_path("no_such_dir"), &st), 0);
}

/* A spool that runs dry mid-copy fails the write; the earlier file stays byte-identical, no temp left. */
static void test_failed_write_keeps_previous_file(void)
{
    const float x[2] = {5.0f, 6.0f};
    const char *path = ck_test_tmp_path("keep.safetensors");
    char keep[300], tmp[320];
    size_t n0 = 0, n1 = 0;
    ck_st_entry good = {"x", CK_DTYPE_F32, 1, {2}, x, NULL, 0};
    ck_error err = {0};
    snprintf(keep, sizeof keep, "%s", path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", keep, (long)getpid());
    CU_ASSERT_EQUAL_FATAL(ck_st_write(keep, &good, 1, NULL, 0, NULL), CK_OK);
    unsigned char *before = read_bytes(keep, &n0);
    FILE *spool = tmpfile();
    fwrite(x, sizeof x[0], 1, spool);  /* one float where 1000 are needed */
    ck_st_entry bad[] = {good, {"big", CK_DTYPE_F32, 1, {1000}, NULL, spool, 0}};
    bad[0].name = "y";
    CU_ASSERT_EQUAL(ck_st_write(keep, bad, 2, NULL, 0, &err), CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"big\": data"));
    unsigned char *after = read_bytes(keep, &n1);
    CU_ASSERT(n0 == n1 && before != NULL && after != NULL && memcmp(before, after, n0) == 0);
    CU_ASSERT_NOT_EQUAL(access(tmp, F_OK), 0);
    free(before);
    free(after);
    fclose(spool);
    unlink(keep);
}

static void test_write_rejects_duplicate_name(void)
{
    const float x = 1.0f;
    ck_st_entry e[2] = {{"x", CK_DTYPE_F32, 1, {1}, &x, NULL, 0}, {"x", CK_DTYPE_F32, 1, {1}, &x, NULL, 0}};
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_write(ck_test_tmp_path("dup.safetensors"), e, 2, NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"x\": name: duplicate"));
    CU_ASSERT_NOT_EQUAL(access(ck_test_tmp_path("dup.safetensors"), F_OK), 0);
}

static void test_write_rejects_other_dtype(void)
{
    const float x = 1.0f;
    ck_st_entry e = {"x", CK_DTYPE_OTHER, 1, {1}, &x, NULL, 0};
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_write(ck_test_tmp_path("other.safetensors"), &e, 1, NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"x\": dtype or rank"));
}

static void test_write_rejects_missing_data(void)
{
    ck_st_entry e = {"x", CK_DTYPE_F32, 1, {1}, NULL, NULL, 0};
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_write(ck_test_tmp_path("nodata.safetensors"), &e, 1, NULL, 0, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tensor \"x\": data: neither memory nor a spool"));
}

static void test_write_rejects_duplicate_meta_key(void)
{
    const ck_st_meta m[2] = {{"k", "1"}, {"k", "2"}};
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_st_write(ck_test_tmp_path("meta.safetensors"), NULL, 0, m, 2, &err), CK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "__metadata__: \"k\": duplicate key"));
}

static void test_cleanup(void)
{
    CU_ASSERT_EQUAL(rmdir(ck_test_tmp_dir()), 0); /* every test removed its files: dir empty */
}

CK_TEST_MAIN("safetensors", {"open memory equals file", test_open_memory_equals_file},
             {"reject truncated header length", test_reject_truncated_header_length},
             {"reject header length beyond file", test_reject_header_length_beyond_file},
             {"reject huge header length", test_reject_huge_header_length},
             {"reject bad json", test_reject_bad_json},
             {"reject json not object", test_reject_json_not_object},
             {"reject trailing garbage", test_reject_trailing_garbage},
             {"reject end out of bounds", test_reject_end_out_of_bounds},
             {"reject begin after end", test_reject_begin_after_end},
             {"reject size mismatch", test_reject_size_mismatch},
             {"reject overlap", test_reject_overlap},
             {"reject unused bytes", test_reject_unused_bytes},
             {"reject non-JSON number", test_reject_non_json_number},
             {"reject unknown dtype", test_reject_unknown_dtype},
             {"reject shape overflow", test_reject_shape_overflow},
             {"reject byte count overflow", test_reject_byte_count_overflow},
             {"reject duplicate name", test_reject_duplicate_name},
             {"reject non-string metadata", test_reject_non_string_metadata},
             {"reject negative shape", test_reject_negative_shape},
             {"reject rank above 8", test_reject_rank_above_8},
             {"reject bad offsets array", test_reject_bad_offsets_array},
             {"reject missing dtype", test_reject_missing_dtype},
             {"missing file is io", test_missing_file_is_io},
             {"read hand made", test_read_hand_made},
             {"f16 exact including subnormals", test_f16_exact_including_subnormals},
             {"bf16 is high half", test_bf16_is_high_half},
             {"to_f32 rejects small output", test_to_f32_rejects_small_output},
             {"to_f32 rejects int dtype", test_to_f32_rejects_int_dtype},
             {"write exact bytes", test_write_exact_bytes},
             {"round trip all dtypes", test_round_trip_all_dtypes},
             {"spool entries", test_spool_entries},
             {"segment entries", test_segment_entries},
             {"header equals the written prefix", test_header_equals_written_prefix},
             {"write into missing directory", test_write_into_missing_directory},
             {"failed write keeps previous file", test_failed_write_keeps_previous_file},
             {"write rejects duplicate name", test_write_rejects_duplicate_name},
             {"write rejects other dtype", test_write_rejects_other_dtype},
             {"write rejects missing data", test_write_rejects_missing_data},
             {"write rejects duplicate meta key", test_write_rejects_duplicate_meta_key},
             {"cleanup", test_cleanup})
