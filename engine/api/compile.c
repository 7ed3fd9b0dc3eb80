/* compile.c - the public face of generated C (ck_compile, include/ckbatch.h) over the codegen
 * room. Compiles; never loads (ck_model_params.compiled does). */
#include <string.h>

#include "ckbatch.h"
#include "codegen.h"
#include "model_internal.h"

ck_compile_params ck_compile_default_params(void)
{
    ck_compile_params p;
    memset(&p, 0, sizeof p);
    p.max_batch_tokens = CK_DEFAULT_MAX_BATCH_TOKENS; /* a library loads under the model's default */
    return p;
}

int ck_compile(const ck_compile_params *params, ck_compile_result *result, ck_error *err)
{
    return ck_codegen_compile(params, result, err);
}
