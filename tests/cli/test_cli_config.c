/* test_cli_config.c - --config FILE through the ckbatch binary: Kokoro-82M's own config.json gives
 * the same bytes as no --config except one "config" metadata entry; a remapped symbol changes the
 * ids phonemes produce (to exactly what an ids run of the new ids gives); a wrong n_token,
 * plbert.hidden_size or hidden_dim, and malformed JSON, fail before anything is written, naming
 * the file and the field. Config variants are made from tests/fixtures/kokoro/config.json here. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

#define FIXTURE_SHA "1608a9d7b19dbbfe32e44a74e2c794271707cfe837bde6f3b352f4324f4fc2ef"
#define HELLO "h\xc9\x99l\xcb\x88O"   /* h ə l ˈ O = 50 83 54 156 31 */

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = f != NULL ? malloc(64 << 20) : NULL;
    *n = buf != NULL ? fread(buf, 1, (64 << 20) - 1, f) : 0;
    if (buf != NULL) {
        buf[*n] = '\0';
    }
    if (f != NULL) {
        fclose(f);
    }
    return buf;
}

static const char *fixture(void)
{
    static char path[600];
    const char *src = getenv("CK_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/fixtures/kokoro/config.json", src ? src : ".");
    return path;
}

/* Runs ckbatch --no-progress with args; stderr to ck_cli_work/stderr. Returns the exit code. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --no-progress %s 2>%s/stderr", ck_cli_binary(), args,
             ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Writes the fixture to `name` in the work dir with vocab[symbol] or a top-level or plbert.<key>
 * field set to `value` (JSON). Returns the path (one of four rotating buffers of its own). */
static const char *variant(const char *name, const char *object, const char *key, const char *value)
{
    size_t n = 0;
    char *text = read_file(fixture(), &n);
    cJSON *root = cJSON_Parse(text);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    cJSON *obj = object != NULL ? cJSON_GetObjectItemCaseSensitive(root, object) : root;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddItemToObject(obj, key, cJSON_Parse(value));
    char *out = cJSON_Print(root);
    static char paths[4][600];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s", ck_cli_tmp(name));
    ck_cli_write_file(path, out);
    cJSON_free(out);
    cJSON_Delete(root);
    return path;
}

/* The safetensors header of `path` as JSON, and the data section after it. */
typedef struct {
    char *raw;
    size_t n;
    cJSON *header;
    const char *data;
    size_t data_bytes;
} st_bytes;

static void st_read(st_bytes *b, const char *path)
{
    b->raw = read_file(path, &b->n);
    CU_ASSERT_FATAL(b->raw != NULL && b->n >= 8);
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--) {
        h = h << 8 | (unsigned char)b->raw[i];
    }
    CU_ASSERT_FATAL(8 + h <= b->n);
    b->header = cJSON_ParseWithLength(b->raw + 8, (size_t)h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b->header);
    b->data = b->raw + 8 + h;
    b->data_bytes = b->n - 8 - (size_t)h;
}

static void st_free(st_bytes *b)
{
    cJSON_Delete(b->header);
    free(b->raw);
}

/* Kokoro-82M's config.json names the embedded vocabulary and dims: the data section is byte for
 * byte the same, and the header differs only by "config": "sha256:<the file's>". */
static void test_kokoro_config_changes_only_the_metadata(void)
{
    ck_cli_write_file(ck_cli_tmp("p.txt"), HELLO "\nw\xcb\x88\xc9\x9c\xc9\xb9ld.\n[x\n");
    char args[2048];
    snprintf(args, sizeof args, "-t 2 --on-error skip -i %s -o %s", ck_cli_tmp("p.txt"),
             ck_cli_tmp("plain.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(args, sizeof args, "-t 2 --on-error skip --config %s -i %s -o %s", fixture(),
             ck_cli_tmp("p.txt"), ck_cli_tmp("config.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    st_bytes a, b;
    st_read(&a, ck_cli_tmp("plain.st"));
    st_read(&b, ck_cli_tmp("config.st"));
    CU_ASSERT_EQUAL(a.data_bytes, b.data_bytes);
    CU_ASSERT_TRUE(a.data_bytes == b.data_bytes && memcmp(a.data, b.data, a.data_bytes) == 0);
    CU_ASSERT_TRUE(a.data_bytes > 8 * 512 * 4);
    cJSON *meta_a = cJSON_GetObjectItemCaseSensitive(a.header, "__metadata__");
    cJSON *meta_b = cJSON_GetObjectItemCaseSensitive(b.header, "__metadata__");
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(meta_a, "config"));
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(meta_b, "config");
    CU_ASSERT_STRING_EQUAL(cJSON_IsString(config) ? config->valuestring : "?",
                           "sha256:" FIXTURE_SHA);
    cJSON_DeleteItemFromObjectCaseSensitive(meta_b, "config");
    CU_ASSERT_TRUE(cJSON_Compare(a.header, b.header, 1));
    st_free(&a);
    st_free(&b);
}

/* A config whose vocab maps "h" to 7 (unused in v1.0): the phonemes HELLO become [7 83 54 156 31],
 * so the features equal an ids run of exactly those ids without --config; and under that config
 * an ids run of 7 renders "h", while 50 is now undefined (kept, warned). */
static void test_remapped_symbol_changes_the_ids(void)
{
    const char *remapped = variant("remapped.json", "vocab", "h", "7");
    ck_cli_write_file(ck_cli_tmp("hello.txt"), HELLO "\n");
    ck_cli_write_file(ck_cli_tmp("hello_ids.txt"), "[7, 83, 54, 156, 31]\n");
    char args[2048];
    snprintf(args, sizeof args, "--config %s -i %s -o %s", remapped, ck_cli_tmp("hello.txt"),
             ck_cli_tmp("remapped.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(args, sizeof args, "-f ids -i %s -o %s", ck_cli_tmp("hello_ids.txt"),
             ck_cli_tmp("ids.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(args, sizeof args, "-i %s -o %s", ck_cli_tmp("hello.txt"), ck_cli_tmp("v10.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_features_file *r = NULL, *i = NULL, *d = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&r, ck_cli_tmp("remapped.st"), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&i, ck_cli_tmp("ids.st"), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&d, ck_cli_tmp("v10.st"), &err), CK_OK);
    const ck_tensor_view *fr = ck_features_tensor(r, "features"), *fi = ck_features_tensor(i, "features");
    const ck_tensor_view *fd = ck_features_tensor(d, "features");
    CU_ASSERT_FATAL(fr != NULL && fi != NULL && fd != NULL);
    CU_ASSERT_EQUAL_FATAL(fr->bytes, 7 * 512 * 4);
    CU_ASSERT_TRUE(fi->bytes == fr->bytes && memcmp(fr->data, fi->data, fr->bytes) == 0);
    CU_ASSERT_TRUE(fd->bytes == fr->bytes && memcmp(fr->data, fd->data, fr->bytes) != 0);
    char *seqs = ck_cli_text(r, "sequences");
    CU_ASSERT_STRING_EQUAL(seqs ? seqs : "?", "{\"line\":1,\"chunk\":0,\"chunks\":1,\"tokens\":7,"
                           "\"phonemes\":\"" HELLO "\"}\n");
    free(seqs);
    ck_features_close(r);
    ck_features_close(i);
    ck_features_close(d);

    ck_cli_write_file(ck_cli_tmp("ids2.txt"), "[7, 83]\n[50]\n");
    snprintf(args, sizeof args, "--config %s -f ids -i %s -o %s", remapped, ck_cli_tmp("ids2.txt"),
             ck_cli_tmp("ids2.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    char warning[700];
    snprintf(warning, sizeof warning, "ckbatch: warning: %s:2: element 1: id 50 names no vocab "
             "symbol, kept", ck_cli_tmp("ids2.txt"));
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with(warning), 1);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&r, ck_cli_tmp("ids2.st"), &err), CK_OK);
    seqs = ck_cli_text(r, "sequences");
    CU_ASSERT_STRING_EQUAL(seqs ? seqs : "?", "{\"line\":1,\"chunk\":0,\"chunks\":1,\"tokens\":4,"
                           "\"phonemes\":\"h\xc9\x99\"}\n{\"line\":2,\"chunk\":0,\"chunks\":1,"
                           "\"tokens\":3,\"phonemes\":\"\xef\xbf\xbd\"}\n");
    free(seqs);
    ck_features_close(r);
}

/* A failing --config run: exit 1, exactly one error line, equal to `message` after "ckbatch:
 * error: ", no output file. */
static void config_fails(const char *config, const char *message)
{
    char args[2048], line[2048], want[1024];
    ck_cli_write_file(ck_cli_tmp("one.txt"), HELLO "\n");
    snprintf(args, sizeof args, "--config %s -i %s -o %s", config, ck_cli_tmp("one.txt"),
             ck_cli_tmp("fail.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("fail.st")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("fail.st.partial")));
    snprintf(want, sizeof want, "ckbatch: error: %s\n", message);
    FILE *f = fopen(ck_cli_tmp("stderr"), "rb");
    int errors = 0, found = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        errors += strncmp(line, "ckbatch: error:", 15) == 0;
        found += strcmp(line, want) == 0;
    }
    if (f != NULL) {
        fclose(f);
    }
    if (found != 1) {
        fprintf(stderr, "    stderr lacks \"%s\"\n", want);
    }
    CU_ASSERT_EQUAL(errors, 1);
    CU_ASSERT_EQUAL(found, 1);
}

static void test_wrong_dims_name_the_field(void)
{
    char message[1024];
    const char *p = variant("n_token.json", NULL, "n_token", "179");
    snprintf(message, sizeof message, "%s: n_token 179 does not match the weights (178)", p);
    config_fails(p, message);
    p = variant("hidden_size.json", "plbert", "hidden_size", "1024");
    snprintf(message, sizeof message, "%s: plbert.hidden_size 1024 does not match the weights (768)", p);
    config_fails(p, message);
    p = variant("hidden_dim.json", NULL, "hidden_dim", "640");
    snprintf(message, sizeof message, "%s: hidden_dim 640 does not match the weights (512)", p);
    config_fails(p, message);
}

static void test_malformed_config_names_the_file(void)
{
    char message[1024];
    const char *p = ck_cli_tmp("broken.json");
    ck_cli_write_file(p, "{\"n_token\": 178,\n \"vocab\": {\"a\": 43,\n");
    snprintf(message, sizeof message, "%s: JSON syntax error at byte 36 (line 2)", p);
    config_fails(p, message);
    p = variant("two_symbols.json", "vocab", "ab", "7");
    snprintf(message, sizeof message, "%s: vocab \"ab\": symbol is 2 code points, expected one", p);
    config_fails(p, message);
    snprintf(message, sizeof message, "%s: cannot open config.json: No such file or directory", ck_cli_tmp("absent.json"));
    config_fails(ck_cli_tmp("absent.json"), message);
}

static void test_config_with_xray_is_a_usage_error(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--config %s --xray-oracle x.safetensors", fixture());
    CU_ASSERT_EQUAL(run(args), 2);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("--config is for corpus runs"), 1);
    CU_ASSERT_EQUAL(run("--help | grep -c -- '--config F' >/dev/null"), 0);
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"Kokoro's config.json changes only the metadata", test_kokoro_config_changes_only_the_metadata},
        {"a remapped symbol changes the ids", test_remapped_symbol_changes_the_ids},
        {"wrong dims name the field", test_wrong_dims_name_the_field},
        {"malformed config names the file", test_malformed_config_names_the_file},
        {"--config with --xray-oracle is a usage error", test_config_with_xray_is_a_usage_error},
    };
    return ck_cli_main("cli_config", cases, sizeof cases / sizeof cases[0]);
}
