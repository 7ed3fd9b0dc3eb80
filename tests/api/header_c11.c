/* header_c11.c - compiled, never run: include/ckbatch.h alone must build as strict ISO C11
 * (-std=c11 -pedantic -Werror -Wall -Wextra, no _POSIX_C_SOURCE, no other include path), and name
 * every public type. tests/CMakeLists.txt builds it as the object library api_header_c11. */
#include "ckbatch.h"

typedef struct {
    ck_error error;
    ck_model_params model;
    ck_lines_params lines;
    ck_corpus_params corpus;
    ck_corpus_summary summary;
    ck_sequence_set sequences;
    ck_progress progress;
    ck_xray_params xray;
    ck_log_fn log;
    ck_progress_fn on_progress;
    ck_input_format format;
    ck_layer layer;
    ck_log_level level;
} every_public_type;

int ck_header_c11_probe(void);

int ck_header_c11_probe(void)
{
    every_public_type t = {{CK_OK, ""}, {0}, {0}, {0}, {0}, {0}, {0}, {0}, 0, 0,
                           CK_INPUT_TEXT, CK_LAYER_HIDDEN, CK_LOG_REPORT};
    ck_model *m = (ck_model *)0;
    return (int)sizeof t + (m == (ck_model *)0) + CKBATCH_VERSION_MAJOR;
}
