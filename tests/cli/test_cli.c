/* test_cli.c - the ckbatch binary as scripts use it: exit codes (0, 1, 2), one-line errors, no
 * output file after any failure (and an existing one untouched), stdin, empty corpus, --layer,
 * and demo weights written by make-demo-weights giving the same features as the embedded default. */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_test.h"
#include "ckbatch.h"

/* Runs ckbatch with args (a shell fragment); stderr goes to ck_cli_work/stderr. Returns the exit code. */
static int run(const char *args)
{
    char cmd[4096];
    const char *bin = getenv("CK_BINARY_DIR");
    snprintf(cmd, sizeof cmd, "%s/engine/ckbatch %s 2>%s/stderr", bin ? bin : "build", args, ck_cli_work);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Lines in ck_cli_work/stderr that start with "ckbatch: error:". */
static int error_lines(const char *must_contain)
{
    FILE *f = fopen(ck_cli_tmp("stderr"), "rb");
    char line[2048];
    int n = 0, found = must_contain == NULL;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        n += strncmp(line, "ckbatch: error:", 15) == 0;
        found |= must_contain != NULL && strstr(line, must_contain) != NULL;
    }
    if (f != NULL) {
        fclose(f);
    }
    if (!found) {
        fprintf(stderr, "    stderr lacks \"%s\"\n", must_contain);
    }
    return found ? n : -1;
}

static void test_phonemes_run_writes_features(void)
{
    ck_cli_write_file(ck_cli_tmp("p.txt"), "h\xc9\x99l\xcb\x88O\n\nw\xcb\x88\xc9\x9c\xc9\xb9ld\n");
    char args[1024];
    snprintf(args, sizeof args, "--threads 2 --input %s --output %s", ck_cli_tmp("p.txt"), ck_cli_tmp("p.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("p.st"), &err), CK_OK);
    const ck_tensor_view *feat = ck_features_tensor(f, "features"), *offs = ck_features_tensor(f, "offsets");
    CU_ASSERT_FATAL(feat != NULL && offs != NULL);
    /* "həlˈO" = 5 symbols + 2 boundaries, "wˈɜɹld" = 6 + 2 */
    CU_ASSERT_EQUAL(feat->shape[0], 15);
    CU_ASSERT_EQUAL(feat->shape[1], 512);
    CU_ASSERT_EQUAL(offs->elements, 3);
    CU_ASSERT_EQUAL(((const int64_t *)offs->data)[1], 7);
    char *seqs = ck_cli_text(f, "sequences"), *skipped = ck_cli_text(f, "skipped");
    CU_ASSERT_PTR_NOT_NULL_FATAL(seqs);
    CU_ASSERT_STRING_EQUAL(seqs, "{\"line\":1,\"chunk\":0,\"chunks\":1,\"tokens\":7,\"phonemes\":"
                           "\"h\xc9\x99l\xcb\x88O\"}\n{\"line\":3,\"chunk\":0,\"chunks\":1,\"tokens\":8,"
                           "\"phonemes\":\"w\xcb\x88\xc9\x9c\xc9\xb9ld\"}\n");
    CU_ASSERT_STRING_EQUAL(skipped ? skipped : "?", "");
    free(seqs);
    free(skipped);
    CU_ASSERT_PTR_NOT_NULL(ck_features_metadata(f, "weights") ? strstr(ck_features_metadata(f, "weights"), "NOT Kokoro") : NULL);
    ck_features_close(f);
}

static void test_empty_corpus_gives_empty_output(void)
{
    ck_cli_write_file(ck_cli_tmp("empty.txt"), "");
    char args[1024];
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("empty.txt"), ck_cli_tmp("empty.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("empty.st"), &err), CK_OK);
    CU_ASSERT_EQUAL(ck_features_tensor(f, "features")->shape[0], 0);
    CU_ASSERT_EQUAL(ck_features_tensor(f, "offsets")->elements, 1);
    ck_features_close(f);
}

static void test_stdin_and_hidden_layer(void)
{
    char args[1024];
    snprintf(args, sizeof args, "--format ids --layer hidden --input - --output %s <%s",
             ck_cli_tmp("h.st"), ck_cli_tmp("ids.txt"));
    ck_cli_write_file(ck_cli_tmp("ids.txt"), "[50, 83, 156]\n");
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("h.st"), &err), CK_OK);
    /* the [T, 768] last hidden state is named for what it is; no "features" tensor claims it */
    const ck_tensor_view *h = ck_features_tensor(f, "hidden");
    CU_ASSERT_PTR_NULL(ck_features_tensor(f, "features"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_EQUAL(h->shape[0], 5);
    CU_ASSERT_EQUAL(h->shape[1], 768);
    CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "layer"), "hidden");
    ck_features_close(f);
}

/* A failing run: exit 1, exactly one error line naming `what`, no output, existing file kept. */
static void expect_failure(const char *args_fmt, const char *input, const char *what)
{
    char args[2048];
    ck_cli_write_file(ck_cli_tmp("keep.st"), "previous contents");
    snprintf(args, sizeof args, args_fmt, input, ck_cli_tmp("fail.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(error_lines(what), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("fail.st")));
    snprintf(args, sizeof args, args_fmt, input, ck_cli_tmp("keep.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    FILE *f = fopen(ck_cli_tmp("keep.st"), "rb");
    char buf[64] = {0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fread(buf, 1, sizeof buf - 1, f), 17);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "previous contents");
}

static void test_id_178_fails_cleanly(void)
{
    ck_cli_write_file(ck_cli_tmp("bad_ids.txt"), "[5, 6]\n[5, 178]\n");
    expect_failure("--format ids --input %s --output %s", ck_cli_tmp("bad_ids.txt"),
                   ":2: element 2: id 178 out of range 1..177");
}

/* --format ids is the raw model interface: id 7 names a row of the [178,128] word table but no
 * vocab symbol, so it is kept (5 tokens, U+FFFD in phonemes), warned with line and element and
 * counted as a dropped symbol; the run succeeds. */
static void test_undefined_id_kept_and_reported(void)
{
    ck_cli_write_file(ck_cli_tmp("undef.txt"), "[50, 83]\n[50, 7, 83]\n");
    char args[1024], warning[600];
    snprintf(args, sizeof args, "--format ids --input %s --output %s", ck_cli_tmp("undef.txt"),
             ck_cli_tmp("undef.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(warning, sizeof warning, "ckbatch: warning: %s:2: element 2: id 7 names no vocab "
             "symbol, kept\n", ck_cli_tmp("undef.txt"));
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with(warning), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with(", 1 dropped symbols,"), 1);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("undef.st"), &err), CK_OK);
    const ck_tensor_view *feat = ck_features_tensor(f, "features"), *offs = ck_features_tensor(f, "offsets");
    CU_ASSERT_FATAL(feat != NULL && offs != NULL && offs->elements == 3);
    CU_ASSERT_EQUAL(feat->shape[0], 4 + 5);
    CU_ASSERT_EQUAL(((const int64_t *)offs->data)[1], 4);
    CU_ASSERT_EQUAL(((const int64_t *)offs->data)[2], 9);
    /* the "h" row of line 2 differs from line 1's: attention saw id 7 */
    const float *rows = feat->data;
    CU_ASSERT_NOT_EQUAL(memcmp(rows + 1 * 512, rows + 5 * 512, 512 * sizeof(float)), 0);
    char *seqs = ck_cli_text(f, "sequences");
    CU_ASSERT_STRING_EQUAL(seqs ? seqs : "?",
                           "{\"line\":1,\"chunk\":0,\"chunks\":1,\"tokens\":4,\"phonemes\":"
                           "\"h\xc9\x99\"}\n{\"line\":2,\"chunk\":0,\"chunks\":1,\"tokens\":5,"
                           "\"phonemes\":\"h\xef\xbf\xbd\xc9\x99\"}\n");
    free(seqs);
    ck_features_close(f);
}

static void test_undefined_id_strict_fails_cleanly(void)
{
    ck_cli_write_file(ck_cli_tmp("undef.txt"), "[50, 83]\n[50, 7, 83]\n");
    expect_failure("--strict-symbols --format ids --input %s --output %s", ck_cli_tmp("undef.txt"),
                   ":2: element 2: id 7 names no vocab symbol");
}

static void test_unknown_symbol_strict_fails_cleanly(void)
{
    ck_cli_write_file(ck_cli_tmp("sym.txt"), "h\xc9\x99l\xcb\x88O\nab#c\n");
    expect_failure("--strict-symbols --input %s --output %s", ck_cli_tmp("sym.txt"), ":2:");
    char args[1024];
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("sym.txt"), ck_cli_tmp("sym.st"));
    CU_ASSERT_EQUAL(run(args), 0);   /* without --strict-symbols: dropped, reported, counted */
    CU_ASSERT_EQUAL(error_lines(":2: column 3"), 0);
}

static void test_malformed_circuit_fails_cleanly(void)
{
    ck_cli_write_file(ck_cli_tmp("bad.json"), "{\"name\": \"x\", \"dims\": {\"T\": \"runtime\"}, \"ops\": [");
    ck_cli_write_file(ck_cli_tmp("one.txt"), "h\xc9\x99l\xcb\x88O\n");
    char fmt[600];
    snprintf(fmt, sizeof fmt, "--circuit %s --input %%s --output %%s", ck_cli_tmp("bad.json"));
    expect_failure(fmt, ck_cli_tmp("one.txt"), "bad.json");
}

/* Writes a copy of the safetensors file src without its first tensor (ckbatch's writer puts it at
 * data offset 0: its bytes go too and the others' offsets move down, so the copy is a valid file)
 * and returns that tensor's name (static). */
static const char *drop_first_tensor(const char *src, const char *dst)
{
    static char name[256];
    FILE *f = fopen(src, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    unsigned char len8[8];
    CU_ASSERT_EQUAL_FATAL(fread(len8, 1, 8, f), 8);
    size_t hlen = 0;
    for (int i = 7; i >= 0; i--) {
        hlen = hlen << 8 | len8[i];
    }
    fseek(f, 0, SEEK_END);
    size_t data = (size_t)ftell(f) - 8 - hlen;
    char *header = calloc(hlen + 1, 1), *bytes = malloc(data);
    fseek(f, 8, SEEK_SET);
    CU_ASSERT_FATAL(header && bytes && fread(header, 1, hlen, f) == hlen &&
                    fread(bytes, 1, data, f) == data);
    fclose(f);
    cJSON *root = cJSON_Parse(header);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    cJSON *first = root->child;
    while (first != NULL && strcmp(first->string, "__metadata__") == 0) {
        first = first->next;
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(first);
    snprintf(name, sizeof name, "%s", first->string);
    const cJSON *span = cJSON_GetObjectItemCaseSensitive(first, "data_offsets");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArrayItem(span, 0)->valuedouble, 0);
    size_t cut = (size_t)cJSON_GetArrayItem(span, 1)->valuedouble;
    cJSON_DeleteItemFromObjectCaseSensitive(root, name);
    for (cJSON *t = root->child; t != NULL; t = t->next) {
        cJSON *offsets = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
        for (int k = 0; offsets != NULL && k < 2; k++) {
            cJSON *at = cJSON_GetArrayItem(offsets, k);
            cJSON_SetNumberValue(at, at->valuedouble - (double)cut);
        }
    }
    char *text = cJSON_PrintUnformatted(root);
    size_t n = strlen(text), padded = (n + 7) / 8 * 8;
    FILE *o = fopen(dst, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    for (int i = 0; i < 8; i++) {
        fputc((int)((padded >> (8 * i)) & 0xff), o);
    }
    fwrite(text, 1, n, o);
    for (size_t i = n; i < padded; i++) {
        fputc(' ', o);
    }
    fwrite(bytes + cut, 1, data - cut, o);
    fclose(o);
    free(text);
    cJSON_Delete(root);
    free(header);
    free(bytes);
    return name;
}

static void test_missing_weight_fails_cleanly(void)
{
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_demo_weights_write(ck_cli_tmp("demo.st"), 7, NULL, &err), CK_OK);
    const char *missing = drop_first_tensor(ck_cli_tmp("demo.st"), ck_cli_tmp("partial.st"));
    CU_ASSERT_PTR_NOT_NULL(strstr(missing, "bert."));
    ck_cli_write_file(ck_cli_tmp("one.txt"), "h\xc9\x99l\xcb\x88O\n");
    char fmt[600];
    snprintf(fmt, sizeof fmt, "--weights %s --input %%s --output %%s", ck_cli_tmp("partial.st"));
    expect_failure(fmt, ck_cli_tmp("one.txt"), missing);
}

static void test_usage_errors_exit_2(void)
{
    CU_ASSERT_EQUAL(run("--threads 0 --input a --output b"), 2);
    CU_ASSERT_EQUAL(run("--threads ' 2' --input a --output b"), 2); /* digits only */
    CU_ASSERT_EQUAL(run("--seed ' -1' --input a --output b"), 2);  /* not 2^64 - 1 */
    CU_ASSERT_EQUAL(run("--format xml --input a --output b"), 2);
    CU_ASSERT_EQUAL(run("--input a"), 2);
    CU_ASSERT_EQUAL(run("--bogus"), 2);
    CU_ASSERT_EQUAL(run("--input x -o"), 2);   /* one line naming the option, not getopt's two */
    CU_ASSERT_EQUAL(error_lines("option '-o' needs a value"), 0);
    CU_ASSERT_EQUAL(error_lines("requires an argument"), -1);
    char args[1024];
    ck_cli_write_file(ck_cli_tmp("corpus.txt"), "h\xc9\x99l\xcb\x88O\n");
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("corpus.txt"), ck_cli_tmp("corpus.txt"));
    CU_ASSERT_EQUAL(run(args), 2);             /* the output would destroy the input */
    FILE *f = fopen(ck_cli_tmp("corpus.txt"), "rb");
    char line[32] = {0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    fclose(f);
    CU_ASSERT_STRING_EQUAL(line, "h\xc9\x99l\xcb\x88O\n");
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("corpus.txt"), ck_cli_work);
    CU_ASSERT_EQUAL(run(args), 2);             /* a directory, refused before any ck_cli_work */
    CU_ASSERT_EQUAL(run("--input '' --output x"), 2);
    snprintf(args, sizeof args, "--input %s --output -", ck_cli_tmp("corpus.txt"));
    CU_ASSERT_EQUAL(run(args), 2);             /* not a file named "-" */
    CU_ASSERT_TRUE(error_lines("standard output is not supported") >= 0);
    CU_ASSERT_EQUAL_FATAL(mkfifo(ck_cli_tmp("fifo"), 0600), 0); /* stands for /dev/null, safely */
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("corpus.txt"), ck_cli_tmp("fifo"));
    CU_ASSERT_EQUAL(run(args), 2);             /* it would be renamed over: a regular file instead */
    CU_ASSERT_TRUE(error_lines("is not a regular file") >= 0);
    struct stat st;
    CU_ASSERT_TRUE(stat(ck_cli_tmp("fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
    unlink(ck_cli_tmp("fifo"));
    CU_ASSERT_EQUAL(run("--help >/dev/null"), 0);
    CU_ASSERT_EQUAL(run("--version >/dev/null"), 0);
}

/* Every subcommand's --help is its usage on stdout with exit 0, and writes nothing: before, a
 * `make-demo-weights --help` wrote 24 MB of weights to a file named "--help". A missing or
 * directory input is an input error (1) before the weights are made: no weights line on stderr. */
static void test_subcommand_help_and_early_input_errors(void)
{
    static const char *const subs[][2] = {
        {"make-demo-weights --help", "usage: ckbatch make-demo-weights"},
        {"compile --help", "usage: ckbatch compile"},
        {"merge -h", "usage: ckbatch merge"},
        {"xray --help", "usage: ckbatch xray"},
        {"weights --help", "usage: ckbatch weights"},
        {"weights inspect --help", "usage: ckbatch weights"},
    };
    char args[1024];
    CU_ASSERT_EQUAL_FATAL(chdir(ck_cli_work), 0);
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        snprintf(args, sizeof args, "%s > %s", subs[i][0], ck_cli_tmp("help.txt"));
        CU_ASSERT_EQUAL(run(args), 0);
        FILE *f = fopen(ck_cli_tmp("help.txt"), "rb");
        char line[256] = "";
        CU_ASSERT_TRUE(f != NULL && fgets(line, sizeof line, f) != NULL);
        CU_ASSERT_PTR_NOT_NULL(strstr(line, subs[i][1]));
        if (f != NULL) {
            fclose(f);
        }
    }
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("--help")));
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("-h")));
    CU_ASSERT_EQUAL(run("make-demo-weights -o"), 2);  /* an option where OUT goes */
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("-o")));
    CU_ASSERT_EQUAL(chdir("/"), 0);
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("no-such-input.txt"),
             ck_cli_tmp("x.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(error_lines("cannot read it: No such file or directory"), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("weights:"), 0); /* said before the weights are made */
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_work, ck_cli_tmp("x.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(error_lines("is a directory"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("x.st")));
}

/* Demo weights written to a file and loaded back give byte-identical features. */
static void test_demo_weights_file_equals_embedded(void)
{
    char args[1024];
    snprintf(args, sizeof args, "make-demo-weights %s", ck_cli_tmp("demo.safetensors"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_cli_write_file(ck_cli_tmp("two.txt"), "h\xc9\x99l\xcb\x88O\nw\xcb\x88\xc9\x9c\xc9\xb9ld\n");
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("two.txt"), ck_cli_tmp("a.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    snprintf(args, sizeof args, "--weights %s --input %s --output %s", ck_cli_tmp("demo.safetensors"),
             ck_cli_tmp("two.txt"), ck_cli_tmp("b.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_features_file *a = NULL, *b = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&a, ck_cli_tmp("a.st"), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&b, ck_cli_tmp("b.st"), &err), CK_OK);
    const ck_tensor_view *fa = ck_features_tensor(a, "features"), *fb = ck_features_tensor(b, "features");
    CU_ASSERT_FATAL(fa != NULL && fb != NULL && fa->bytes == fb->bytes);
    CU_ASSERT_EQUAL(memcmp(fa->data, fb->data, fa->bytes), 0);
    ck_features_close(a);
    ck_features_close(b);
}

/* A pipe named by path (/dev/stdin under `cat |`, bash's <(...)) is read once, as stdin is: it
 * gives the regular file's features and offsets. Before, the input was hashed by path first,
 * which drained the pipe, and the run wrote an empty file with exit 0. */
static void test_pipe_named_by_path_is_read_once(void)
{
    char args[2048];
    ck_cli_write_file(ck_cli_tmp("three.txt"), "h\xc9\x99l\xcb\x88O\nw\xcb\x88\xc9\x9c\xc9\xb9ld\n;:,\n");
    snprintf(args, sizeof args, "--input %s --output %s", ck_cli_tmp("three.txt"), ck_cli_tmp("file.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    char cmd[4096];
    const char *bin = getenv("CK_BINARY_DIR");
    snprintf(cmd, sizeof cmd, "cat %s | %s/engine/ckbatch --input /dev/stdin --output %s 2>%s/stderr",
             ck_cli_tmp("three.txt"), bin ? bin : "build", ck_cli_tmp("pipe.st"), ck_cli_work);
    int st = system(cmd);
    CU_ASSERT_TRUE_FATAL(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_features_file *a = NULL, *b = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&a, ck_cli_tmp("file.st"), &err), CK_OK);
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&b, ck_cli_tmp("pipe.st"), &err), CK_OK);
    static const char *const names[] = {"features", "offsets"};
    for (int i = 0; i < 2; i++) {
        const ck_tensor_view *x = ck_features_tensor(a, names[i]), *y = ck_features_tensor(b, names[i]);
        CU_ASSERT_FATAL(x != NULL && y != NULL);
        CU_ASSERT_EQUAL(x->bytes, y->bytes);
        CU_ASSERT_TRUE(x->bytes > 0 && x->bytes == y->bytes && memcmp(x->data, y->data, x->bytes) == 0);
    }
    ck_features_close(a);
    ck_features_close(b);
    snprintf(cmd, sizeof cmd, "cat %s | %s/engine/ckbatch --resume --input /dev/stdin --output %s "
             "2>%s/stderr", ck_cli_tmp("three.txt"), bin ? bin : "build", ck_cli_tmp("pipe2.st"),
             ck_cli_work);
    st = system(cmd);
    CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1); /* a pipe cannot be resumed: refused */
    CU_ASSERT_TRUE(error_lines("needs a regular input file, not stdin or a pipe") == 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("pipe2.st")));
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"phonemes run writes features", test_phonemes_run_writes_features},
        {"empty corpus gives empty output", test_empty_corpus_gives_empty_output},
        {"stdin and hidden layer", test_stdin_and_hidden_layer},
        {"id 178 fails cleanly", test_id_178_fails_cleanly},
        {"undefined id is kept and reported", test_undefined_id_kept_and_reported},
        {"undefined id (strict) fails cleanly", test_undefined_id_strict_fails_cleanly},
        {"unknown symbol (strict) fails cleanly", test_unknown_symbol_strict_fails_cleanly},
        {"malformed circuit fails cleanly", test_malformed_circuit_fails_cleanly},
        {"missing weight fails cleanly", test_missing_weight_fails_cleanly},
        {"a pipe named by path is read once", test_pipe_named_by_path_is_read_once},
        {"subcommand --help; early input errors", test_subcommand_help_and_early_input_errors},
        {"usage errors exit 2", test_usage_errors_exit_2},
        {"demo weights file equals embedded", test_demo_weights_file_equals_embedded},
    };
    return ck_cli_main("cli", cases, sizeof cases / sizeof cases[0]);
}
