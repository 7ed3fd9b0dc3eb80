/* test_circuit.c - the circuit loader: the Kokoro circuit loads as forward() runs, and every
 * validation rule rejects its own one-edit variant of tests/fixtures/circuits/tiny.json with
 * CK_E_CIRCUIT and a message naming the file, the op and the field. */
#include <math.h>

#include "circuit.h"
#include "ck_test.h"

#define TINY "tests/fixtures/circuits/tiny.json"
#define KOKORO "circuits/kokoro_phoneme_encoder.json"

/* Whole file as a NUL-terminated string (caller frees), NULL when unreadable. */
static char *read_text(const char *rel)
{
    FILE *f = fopen(ck_test_path(rel), "rb");
    char *text = NULL;
    long n = -1;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        text = calloc((size_t)n + 1, 1);
        if (text != NULL && fread(text, 1, (size_t)n, f) != (size_t)n) {
            free(text);
            text = NULL;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return text;
}

/* `text` with the first occurrence of `from` replaced by `to`; frees text. NULL if absent. */
static char *replace_first(char *text, const char *from, const char *to)
{
    char *at = text ? strstr(text, from) : NULL;
    char *out = NULL;
    if (at != NULL && (out = calloc(strlen(text) + strlen(to) + 1, 1)) != NULL) {
        memcpy(out, text, (size_t)(at - text));
        strcat(out, to);
        strcat(out, at + strlen(from));
    }
    free(text);
    return out;
}

/* Parses tiny.json after n edits {from, to}; expects `code`, the origin name and both words in the
 * message, and a zeroed circuit. */
static void expect_rejects(const char *const (*edits)[2], size_t n, int code, const char *w1,
                           const char *w2)
{
    char *text = read_text(TINY);
    for (size_t i = 0; i < n; i++) {
        text = replace_first(text, edits[i][0], edits[i][1]);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    ck_circuit c;
    ck_error err = {0};
    int rc = ck_circuit_parse(&c, text, strlen(text), "tiny-edit.json", &err);
    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_EQUAL(err.code, code);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "tiny-edit.json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, w1));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, w2));
    CU_ASSERT_PTR_NULL(c.ops);
    CU_ASSERT_PTR_NULL(c.buffers);
    CU_ASSERT_EQUAL(c.n_ops, 0);
    if (1) {
        fprintf(stderr, "\n    rc %d, message: %s (wanted \"%s\", \"%s\")\n", rc, err.message, w1,
                w2);
    }
    ck_circuit_free(&c); /* zeroed: must be harmless */
    free(text);
}

static void expect_reject(const char *from, const char *to, int code, const char *w1, const char *w2)
{
    const char *const edits[1][2] = {{from, to}};
    expect_rejects(edits, 1, code, w1, w2);
}

static void test_kokoro_loads_as_forward(void)
{
    ck_circuit c;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, ck_test_path(KOKORO), &err), CK_OK);
    CU_ASSERT_STRING_EQUAL(c.name, "kokoro_phoneme_encoder");
    CU_ASSERT_EQUAL(c.n_ops, 2 + 12 * 10 + 1);
    CU_ASSERT_EQUAL(c.n_weights, 25);
    CU_ASSERT_EQUAL(c.max_positions, 512);
    CU_ASSERT_STRING_EQUAL(c.ops[0].checkpoint, "kokoro.phoneme_encoder.embeddings");
    CU_ASSERT_STRING_EQUAL(c.ops[2].checkpoint, "kokoro.phoneme_encoder.layer.00.query");
    const ck_op *norm = &c.ops[2 + 3 * 10 + 5];
    CU_ASSERT_STRING_EQUAL(norm->checkpoint, "kokoro.phoneme_encoder.layer.03.attention_norm");
    CU_ASSERT_EQUAL(norm->kind, CK_OP_RESIDUAL_LAYER_NORM);
    CU_ASSERT_EQUAL(norm->repeat_index, 3);
    CU_ASSERT_EQUAL(norm->decl_index, 5);
    CU_ASSERT_EQUAL(norm->inputs[1], ck_circuit_find_buffer(&c, "hidden"));
    CU_ASSERT_EQUAL(norm->eps, 1e-12f);
    CU_ASSERT_STRING_EQUAL(c.ops[121].checkpoint, "kokoro.phoneme_encoder.layer.11.output");
    CU_ASSERT_STRING_EQUAL(c.ops[122].checkpoint, "kokoro.bert_encoder.features");
    CU_ASSERT_EQUAL(c.ops[122].repeat_index, -1);
    CU_ASSERT_EQUAL(c.ops[122].decl_index, 3);
    const ck_op *attn = &c.ops[2 + 7 * 10 + 3];
    CU_ASSERT_EQUAL(attn->kind, CK_OP_ATTENTION);
    CU_ASSERT_EQUAL(attn->heads, 12);
    CU_ASSERT_EQUAL(attn->head_dim, 64);
    CU_ASSERT_EQUAL(attn->scale, 0.125f);
    CU_ASSERT_EQUAL(attn->weights[0], -1);
    ck_circuit_free(&c);
}

static void test_kokoro_shapes_resolved(void)
{
    ck_circuit c;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, ck_test_path(KOKORO), &err), CK_OK);
    const ck_weight_ref *ffn = &c.weights[ck_circuit_find_weight(&c, "ffn_weight")];
    CU_ASSERT_STRING_EQUAL(ffn->checkpoint_name,
                           "bert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight");
    CU_ASSERT_EQUAL(ffn->rank, 2);
    CU_ASSERT_EQUAL(ffn->shape[0], 2048);
    CU_ASSERT_EQUAL(ffn->shape[1], 768);
    CU_ASSERT_EQUAL(ffn->elements, 2048 * 768);
    const ck_weight_ref *word = &c.weights[ck_circuit_find_weight(&c, "word_embeddings")];
    CU_ASSERT_EQUAL(word->shape[0], 178);
    CU_ASSERT_EQUAL(word->shape[1], 128);
    CU_ASSERT_EQUAL(c.buffers[c.ids_buffer].dtype, CK_DTYPE_I32);
    CU_ASSERT_EQUAL(c.buffers[c.ids_buffer].cols, 1);
    CU_ASSERT_EQUAL(c.buffers[c.ids_buffer].role, CK_BUFFER_INPUT);
    CU_ASSERT_EQUAL(c.buffers[c.features_buffer].cols, 512);
    CU_ASSERT_EQUAL(c.buffers[c.features_buffer].role, CK_BUFFER_OUTPUT);
    CU_ASSERT_EQUAL(c.hidden_buffer, ck_circuit_find_buffer(&c, "hidden"));
    CU_ASSERT_EQUAL(c.buffers[ck_circuit_find_buffer(&c, "ffn_gelu")].cols, 2048);
    CU_ASSERT_EQUAL(ck_circuit_find_buffer(&c, "nope"), -1);
    CU_ASSERT_EQUAL(ck_circuit_alias(&c, "kokoro.phoneme_encoder.last_hidden_state"),
                    c.hidden_buffer);
    CU_ASSERT_EQUAL(ck_circuit_alias(&c, "kokoro.phoneme_encoder.layer.00.query"), -1);
    CU_ASSERT_EQUAL(c.n_aliases, 1);
    ck_circuit_free(&c);
    CU_ASSERT_EQUAL(c.n_aliases, 0);
    CU_ASSERT_PTR_NULL(c.aliases);
}

static void test_tiny_defaults_and_in_place_gelu(void)
{
    ck_circuit c;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_circuit_load(&c, ck_test_path(TINY), &err), CK_OK);
    CU_ASSERT_EQUAL(c.n_ops, 2 + 2 * 9 + 1);
    CU_ASSERT_EQUAL(c.ops[5].scale, 0.5f); /* default 1/sqrt(head_dim 4) */
    CU_ASSERT_EQUAL(c.ops[8].kind, CK_OP_GELU_NEW);
    CU_ASSERT_EQUAL(c.ops[8].inputs[0], c.ops[8].output);
    CU_ASSERT_STRING_EQUAL(c.ops[17].checkpoint, "tiny.layer.01.ffn_gelu");
    CU_ASSERT_STRING_EQUAL(c.ops[3].checkpoint, "");
    CU_ASSERT_EQUAL_FATAL(c.n_aliases, 1);
    CU_ASSERT_STRING_EQUAL(c.aliases[0].checkpoint, "tiny.last_hidden_state");
    CU_ASSERT_EQUAL(c.aliases[0].buffer, c.hidden_buffer);
    CU_ASSERT_STRING_EQUAL(ck_op_kind_name(CK_OP_GELU_NEW), "gelu_new");
    CU_ASSERT_STRING_EQUAL(ck_op_kind_name(CK_OP_KIND_COUNT), "unknown");
    ck_circuit_free(&c);
}

static void test_missing_file_is_io(void)
{
    ck_circuit c;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_circuit_load(&c, ck_test_path("tests/fixtures/circuits/absent.json"), &err),
                    CK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "absent.json"));
    CU_ASSERT_PTR_NULL(c.ops);
}

static void test_syntax_error_is_format_with_line(void)
{
    ck_circuit c;
    ck_error err = {0};
    CU_ASSERT_EQUAL(ck_circuit_load(&c, ck_test_path("tests/fixtures/circuits/bad_syntax.json"),
                                    &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "bad_syntax.json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "byte 64 (line 4)"));
    /* cJSON stops after the first value; a circuit is one object and nothing after it */
    static const char two[] = "{\"name\": \"x\"}\n{}\n";
    err = (ck_error){0};
    CU_ASSERT_EQUAL(ck_circuit_parse(&c, two, sizeof two - 1, "two.json", &err), CK_E_FORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "two.json: text after the JSON value at byte 14 (line 2)"));
}

static void test_unknown_op_kind(void)
{
    expect_reject("\"op\": \"gelu_new\"", "\"op\": \"gelu_old\"", CK_E_CIRCUIT, "op 2.6",
                  "unknown op kind \"gelu_old\"");
}

static void test_unknown_slot(void)
{
    expect_reject("\"in\": {\"x\": \"ffn\"}, \"out\": \"ffn\"",
                  "\"in\": {\"x\": \"ffn\", \"mask\": \"ffn\"}, \"out\": \"ffn\"", CK_E_CIRCUIT,
                  "\"gelu_new\"", "in: unknown slot \"mask\"");
}

static void test_missing_slot(void)
{
    expect_reject("\"k\": \"k\", \"v\": \"v\"", "\"k\": \"k\"", CK_E_CIRCUIT, "\"attention\"",
                  "in: missing slot \"v\"");
}

static void test_extra_op_field(void)
{
    expect_reject("\"out\": \"features\"", "\"out\": \"features\", \"kernel\": 1", CK_E_CIRCUIT,
                  "op 3 \"linear\"", "unknown field \"kernel\"");
}

static void test_unknown_dim(void)
{
    expect_reject("\"ffn\": {\"shape\": [\"T\", \"F\"]", "\"ffn\": {\"shape\": [\"T\", \"Q\"]",
                  CK_E_CIRCUIT, "buffers \"ffn\"", "shape: unknown dim \"Q\"");
}

static void test_dim_zero(void)
{
    expect_reject("\"E\": 4", "\"E\": 0", CK_E_CIRCUIT, "dims \"E\"", "positive integer");
}

/* Two positions hold no sequence (boundaries and one symbol need 3): refused at load, naming the
 * table, where it used to load and fail every line at run time naming no circuit. */
static void test_too_few_positions(void)
{
    expect_reject("\"P\": 16", "\"P\": 2", CK_E_CIRCUIT, "weights \"position\": 2 rows",
                  "at least 3 positions");
}

static void test_dim_fraction(void)
{
    expect_reject("\"E\": 4", "\"E\": 4.5", CK_E_CIRCUIT, "dims \"E\"", "positive integer");
}

static void test_dim_negative(void)
{
    expect_reject("\"E\": 4", "\"E\": -4", CK_E_CIRCUIT, "dims \"E\"", "positive integer");
}

static void test_two_runtime_dims(void)
{
    expect_reject("\"K\": 2", "\"K\": \"runtime\"", CK_E_CIRCUIT, "dims", "2 runtime dims");
}

static void test_no_runtime_dim(void)
{
    expect_reject("\"T\": \"runtime\"", "\"T\": 7", CK_E_CIRCUIT, "dims", "0 runtime dims");
}

static void test_runtime_dim_in_weight(void)
{
    expect_reject("\"shape\": [\"C\", \"E\"]", "\"shape\": [\"T\", \"E\"]", CK_E_CIRCUIT,
                  "weights \"proj_w\"", "shape: dim \"T\"");
}

static void test_buffer_without_runtime_first(void)
{
    expect_reject("\"emb\": {\"shape\": [\"T\", \"E\"]", "\"emb\": {\"shape\": [\"E\"]",
                  CK_E_CIRCUIT, "buffers \"emb\"", "expected the runtime dim first");
}

static void test_unknown_buffer(void)
{
    expect_reject("\"q\": \"q\", \"k\": \"k\"", "\"q\": \"qq\", \"k\": \"k\"", CK_E_CIRCUIT,
                  "\"attention\"", "in \"q\": unknown buffer \"qq\"");
}

static void test_unknown_out_buffer(void)
{
    expect_reject("\"out\": \"ffn_out\"", "\"out\": \"ffn_outt\"", CK_E_CIRCUIT,
                  "op 2.7 \"linear\"", "out: unknown buffer \"ffn_outt\"");
}

static void test_unknown_weight(void)
{
    expect_reject("\"weight\": \"q_w\"", "\"weight\": \"query_w\"", CK_E_CIRCUIT,
                  "op 2.0 \"linear\"", "weights \"weight\": unknown weight \"query_w\"");
}

static void test_weight_shape_mismatch(void)
{
    expect_reject("\"shape\": [\"F\", \"C\"]", "\"shape\": [\"C\", \"F\"]", CK_E_CIRCUIT,
                  "op 2.5 \"linear\"", "\"ffn_w\" has shape [8,16], expected [16,8]");
}

static void test_layer_norm_gamma_mismatch(void)
{
    expect_reject("\"emb_gamma\": {\"checkpoint\": \"w.emb_gamma\", \"shape\": [\"E\"]",
                  "\"emb_gamma\": {\"checkpoint\": \"w.emb_gamma\", \"shape\": [\"C\"]",
                  CK_E_CIRCUIT, "\"embedding_three_table_layer_norm\"",
                  "weights \"gamma\": \"emb_gamma\" has shape [8], expected [4]");
}

static void test_buffer_cols_mismatch(void)
{
    expect_reject("\"in\": {\"x\": \"ctx\", \"residual\": \"hidden\"}",
                  "\"in\": {\"x\": \"ctx\", \"residual\": \"emb\"}", CK_E_CIRCUIT,
                  "\"residual_layer_norm\"", "in \"residual\": buffer \"emb\" has 4 cols, "
                  "expected 8");
}

static void test_unknown_buffer_dtype(void)
{
    expect_reject("\"normed\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\"",
                  "\"normed\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f16\"", CK_E_CIRCUIT,
                  "buffers \"normed\"", "dtype");
}

static void test_weight_dtype_i32(void)
{
    expect_reject("\"shape\": [\"O\"], \"dtype\": \"f32\"", "\"shape\": [\"O\"], \"dtype\": \"i32\"",
                  CK_E_CIRCUIT, "weights \"out_b\"", "dtype: got \"i32\", expected \"f32\"");
}

static void test_slot_dtype_mismatch(void)
{
    expect_reject("\"in\": {\"x\": \"emb\"}", "\"in\": {\"x\": \"ids\"}", CK_E_CIRCUIT,
                  "op 1 \"linear\"", "in \"x\": buffer \"ids\" has dtype i32, expected f32");
}

/* A repeat's first op reading a buffer only written later in the same repeat: a cycle. */
static void test_cycle_is_read_before_written(void)
{
    expect_reject("\"in\": {\"x\": \"hidden\"}, \"weights\": {\"weight\": \"q_w\"",
                  "\"in\": {\"x\": \"ctx\"}, \"weights\": {\"weight\": \"q_w\"", CK_E_CIRCUIT,
                  "op 2.0 \"linear\" (application 0)",
                  "in \"x\": buffer \"ctx\" read before written");
}

static void test_duplicate_buffer_name(void)
{
    expect_reject("\"ctx\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\"},",
                  "\"ctx\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\"}, "
                  "\"ctx\": {\"shape\": [\"T\", \"F\"], \"dtype\": \"f32\"},",
                  CK_E_CIRCUIT, "tiny-edit.json: buffers: ", "duplicate name \"ctx\"");
}

static void test_duplicate_slot_name(void)
{
    expect_reject("\"in\": {\"x\": \"emb\"}", "\"in\": {\"x\": \"emb\", \"x\": \"hidden\"}",
                  CK_E_CIRCUIT, "ops[1].in", "duplicate name \"x\"");
}

static void test_repeat_zero(void)
{
    expect_reject("\"repeat\": 2", "\"repeat\": 0", CK_E_CIRCUIT, "op 2 \"repeat\"",
                  "repeat: expected an integer count");
}

static void test_repeat_negative(void)
{
    expect_reject("\"repeat\": 2", "\"repeat\": -2", CK_E_CIRCUIT, "op 2 \"repeat\"",
                  "repeat: expected an integer count");
}

static void test_repeat_not_integer(void)
{
    expect_reject("\"repeat\": 2", "\"repeat\": 1.5", CK_E_CIRCUIT, "op 2 \"repeat\"",
                  "repeat: expected an integer count");
}

static void test_repeat_string(void)
{
    expect_reject("\"repeat\": 2", "\"repeat\": \"2\"", CK_E_CIRCUIT, "op 2 \"repeat\"",
                  "repeat: expected an integer count");
}

static void test_nested_repeat(void)
{
    expect_reject("{\"op\": \"gelu_new\", \"in\": {\"x\": \"ffn\"}, \"out\": \"ffn\", "
                  "\"checkpoint\": \"tiny.layer.{layer}.ffn_gelu\"}",
                  "{\"repeat\": 1, \"ops\": [{\"op\": \"gelu_new\", \"in\": {\"x\": \"ffn\"}, "
                  "\"out\": \"ffn\"}]}", CK_E_CIRCUIT, "op 2.6 \"repeat\"", "nested repeat");
}

static void test_in_place_not_gelu(void)
{
    expect_reject("\"out\": \"normed\"", "\"out\": \"ctx\"", CK_E_CIRCUIT,
                  "op 2.4 \"residual_layer_norm\"", "out: buffer \"ctx\" is also in \"x\"");
}

static void test_dead_buffer(void)
{
    expect_reject("\"ffn_out\": {", "\"spare\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\"}, "
                  "\"ffn_out\": {", CK_E_CIRCUIT, "buffers \"spare\"", "dead buffer");
}

static void test_output_role_not_bound(void)
{
    expect_reject("\"ffn_out\": {", "\"extra\": {\"shape\": [\"T\", \"C\"], \"dtype\": \"f32\", "
                  "\"role\": \"output\"}, \"ffn_out\": {", CK_E_CIRCUIT, "buffers \"extra\"",
                  "not named in \"outputs\"");
}

static void test_output_never_written(void)
{
    const char *const edits[2][2] = {
        {"\"out\": \"features\"", "\"out\": \"feat2\""},
        {"\"role\": \"output\"}\n  }", "\"role\": \"output\"},\n"
         "    \"feat2\": {\"shape\": [\"T\", \"O\"], \"dtype\": \"f32\"}\n  }"}};
    expect_rejects(edits, 2, CK_E_CIRCUIT, "buffers \"features\"", "output never written");
}

static void test_outputs_unknown_buffer(void)
{
    expect_reject("\"features\": \"features\"", "\"features\": \"feat\"", CK_E_CIRCUIT,
                  "outputs \"features\"", "unknown buffer \"feat\"");
}

static void test_inputs_unknown_buffer(void)
{
    expect_reject("\"ids\": \"ids\"", "\"ids\": \"tokens\"", CK_E_CIRCUIT, "inputs \"ids\"",
                  "unknown buffer \"tokens\"");
}

static void test_input_without_role(void)
{
    expect_reject("\"positions\": {\"shape\": [\"T\"], \"dtype\": \"i32\", \"role\": \"input\"}",
                  "\"positions\": {\"shape\": [\"T\"], \"dtype\": \"i32\"}", CK_E_CIRCUIT,
                  "inputs \"positions\"", "lacks role \"input\"");
}

static void test_eps_zero(void)
{
    expect_reject("\"eps\": 1e-12", "\"eps\": 0", CK_E_CIRCUIT,
                  "\"embedding_three_table_layer_norm\"", "params \"eps\"");
}

static void test_unknown_param(void)
{
    expect_reject("\"head_dim\": 4}", "\"head_dim\": 4, \"dropout\": 0.1}", CK_E_CIRCUIT,
                  "\"attention\"", "unknown param \"dropout\"");
}

static void test_heads_times_head_dim(void)
{
    expect_reject("\"heads\": 2", "\"heads\": 3", CK_E_CIRCUIT, "op 2.3 \"attention\"",
                  "\"heads\" x \"head_dim\": 3 x 4");
}

static void test_layer_placeholder_outside_repeat(void)
{
    expect_reject("\"tiny.features\"", "\"tiny.{layer}.features\"", CK_E_CIRCUIT,
                  "op 3 \"linear\"", "checkpoint: \"{layer}\" outside a repeat");
}

static void test_duplicate_checkpoint(void)
{
    expect_reject("\"tiny.features\"", "\"tiny.projection\"", CK_E_CIRCUIT, "op 3 \"linear\"",
                  "checkpoint: duplicate id \"tiny.projection\"");
}

static void test_alias_unknown_buffer(void)
{
    expect_reject("\"tiny.last_hidden_state\": \"hidden\"", "\"tiny.last_hidden_state\": \"h\"",
                  CK_E_CIRCUIT, "aliases \"tiny.last_hidden_state\"", "unknown buffer \"h\"");
}

static void test_alias_not_output(void)
{
    expect_reject("\"tiny.last_hidden_state\": \"hidden\"", "\"tiny.last_hidden_state\": \"ctx\"",
                  CK_E_CIRCUIT, "aliases \"tiny.last_hidden_state\"", "is not an output");
}

static void test_unknown_top_level_field(void)
{
    expect_reject("\"format\": 1,", "\"format\": 1, \"kernels\": [],", CK_E_CIRCUIT, "circuit",
                  "unknown field \"kernels\"");
}

CK_TEST_MAIN("circuit", {"kokoro loads as forward()", test_kokoro_loads_as_forward},
             {"kokoro shapes resolved", test_kokoro_shapes_resolved},
             {"tiny defaults and in-place gelu", test_tiny_defaults_and_in_place_gelu},
             {"missing file is CK_E_IO", test_missing_file_is_io},
             {"syntax error is CK_E_FORMAT with line", test_syntax_error_is_format_with_line},
             {"unknown op kind", test_unknown_op_kind}, {"unknown slot", test_unknown_slot},
             {"missing slot", test_missing_slot}, {"extra op field", test_extra_op_field},
             {"unknown dim", test_unknown_dim}, {"dim zero", test_dim_zero},
             {"dim fraction", test_dim_fraction}, {"too few positions", test_too_few_positions}, {"dim negative", test_dim_negative},
             {"two runtime dims", test_two_runtime_dims},
             {"no runtime dim", test_no_runtime_dim},
             {"runtime dim in weight", test_runtime_dim_in_weight},
             {"buffer without runtime first", test_buffer_without_runtime_first},
             {"unknown buffer", test_unknown_buffer}, {"unknown out buffer", test_unknown_out_buffer},
             {"unknown weight", test_unknown_weight},
             {"weight shape mismatch", test_weight_shape_mismatch},
             {"layer norm gamma mismatch", test_layer_norm_gamma_mismatch},
             {"buffer cols mismatch", test_buffer_cols_mismatch},
             {"unknown buffer dtype", test_unknown_buffer_dtype},
             {"weight dtype i32", test_weight_dtype_i32},
             {"slot dtype mismatch", test_slot_dtype_mismatch},
             {"cycle is read before written", test_cycle_is_read_before_written},
             {"duplicate buffer name", test_duplicate_buffer_name},
             {"duplicate slot name", test_duplicate_slot_name},
             {"repeat zero", test_repeat_zero}, {"repeat negative", test_repeat_negative},
             {"repeat not integer", test_repeat_not_integer}, {"repeat string", test_repeat_string},
             {"nested repeat", test_nested_repeat}, {"in place not gelu", test_in_place_not_gelu},
             {"dead buffer", test_dead_buffer},
             {"output role not bound", test_output_role_not_bound},
             {"output never written", test_output_never_written},
             {"outputs unknown buffer", test_outputs_unknown_buffer},
             {"inputs unknown buffer", test_inputs_unknown_buffer},
             {"input without role", test_input_without_role}, {"eps zero", test_eps_zero},
             {"unknown param", test_unknown_param},
             {"heads x head_dim", test_heads_times_head_dim},
             {"{layer} outside repeat", test_layer_placeholder_outside_repeat},
             {"duplicate checkpoint", test_duplicate_checkpoint},
             {"alias unknown buffer", test_alias_unknown_buffer},
             {"alias not output", test_alias_not_output},
             {"unknown top-level field", test_unknown_top_level_field})
