/* test_cli_g2p.c - `ckbatch --format text` with each G2P: misaki is the default, its sequences are
 * misaki's phonemes, the metadata names the backend, compat version, tagger and lexicon SHA-256,
 * words sent to espeak-ng are warned with line and column, the G2P time is in the summary;
 * --g2p espeak is the espeak-ng path; bad --g2p / --lexicon-dir are clear errors. */
#include <sys/wait.h>

#include "cli_test.h"
#include "ckbatch.h"

/* Runs ckbatch with args; stderr goes to work/stderr. Returns the exit code. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", ck_cli_binary(), args, ck_cli_tmp("stderr"));
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_bad_g2p_is_a_usage_error(void)
{
    CU_ASSERT_EQUAL(run("--g2p spacy -f text --input a --output b"), 2);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("--g2p spacy: expected misaki or espeak"), 1);
    CU_ASSERT_EQUAL(run("--help | grep -c -- '--lexicon-dir D' >/dev/null"), 0);
}

static void test_missing_lexicon_dir_names_the_file(void)
{
    char args[1024];
    ck_cli_write_file(ck_cli_tmp("t.txt"), "the letter\n");
    snprintf(args, sizeof args, "-q -f text --lexicon-dir %s --input %s --output %s",
             ck_cli_tmp("nolex"), ck_cli_tmp("t.txt"), ck_cli_tmp("t.st"));
    CU_ASSERT_EQUAL(run(args), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("nolex/us_gold.json"), 1);
    CU_ASSERT_FALSE(ck_cli_exists(ck_cli_tmp("t.st")));
}

static void test_misaki_is_the_default(void)
{
    char args[1024];
    ck_cli_write_file(ck_cli_tmp("t.txt"), "the letter\nNo, it wasn\xE2\x80\x99t.\nWe met Kokoro-based folks.\n");
    snprintf(args, sizeof args, "-t 2 --no-progress -f text --input %s --output %s",
             ck_cli_tmp("t.txt"), ck_cli_tmp("m.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("t.txt:3: column 8: \"Kokoro-based\" is in no "
                                             "lexicon rule: phonemized by espeak-ng"), 1);
    CU_ASSERT_EQUAL(ck_cli_stderr_lines_with("ms per line), 1 words through espeak-ng"), 1);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("m.st"), &err), CK_OK);
    CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "g2p_backend"), "misaki");
    CU_ASSERT_STRING_EQUAL(ck_features_metadata(f, "g2p_lexicon_us_gold_sha256"),
                           "dc414872a49a28ae6c141463d502fd945f3b2fde040484fdc47d00cc4612686f");
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_features_metadata(f, "g2p_tagger"), "not spaCy"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ck_features_metadata(f, "g2p_compat"), "misaki 0.9.4"));
    char *seqs = ck_cli_text(f, "sequences");
    CU_ASSERT_PTR_NOT_NULL_FATAL(seqs);
    CU_ASSERT_PTR_NOT_NULL(strstr(seqs, "\"phonemes\":\"ðə lˈɛTəɹ\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(seqs, "\"phonemes\":\"nˈO, ɪt wˈʌzᵊnt.\""));
    free(seqs);
    ck_features_close(f);
}

static void test_espeak_path(void)
{
    char args[1024];
    ck_cli_write_file(ck_cli_tmp("t.txt"), "the letter\n");
    snprintf(args, sizeof args, "-q -t 2 -f text --g2p espeak --input %s --output %s",
             ck_cli_tmp("t.txt"), ck_cli_tmp("e.st"));
    CU_ASSERT_EQUAL_FATAL(run(args), 0);
    ck_features_file *f = NULL;
    ck_error err = {0};
    CU_ASSERT_EQUAL_FATAL(ck_features_open(&f, ck_cli_tmp("e.st"), &err), CK_OK);
    CU_ASSERT_EQUAL(strncmp(ck_features_metadata(f, "g2p"), "espeak-ng ", 10), 0);
    CU_ASSERT_PTR_NULL(ck_features_metadata(f, "g2p_backend"));
    ck_features_close(f);
}

int main(void)
{
    static const ck_test_case cases[] = {
        {"bad --g2p is a usage error", test_bad_g2p_is_a_usage_error},
        {"missing --lexicon-dir names the file", test_missing_lexicon_dir_names_the_file},
        {"misaki is the default", test_misaki_is_the_default},
        {"--g2p espeak", test_espeak_path},
    };
    return ck_cli_main("cli_g2p", cases, sizeof cases / sizeof cases[0]);
}
