/* fuzz_safetensors.c - libFuzzer harness: arbitrary bytes as a safetensors file through
 * ck_st_open_memory, then every tensor converted. Finds crashes and leaks; asserts nothing about
 * messages. */
#include <stdint.h>
#include <stdlib.h>

#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ck_error err = {0};
    ck_st_file *f = NULL;
    if (ck_st_open_memory(&f, data, size, "fuzz.safetensors", &err) == CK_OK) {
        for (size_t i = 0; i < ck_st_count(f); i++) {
            const ck_st_tensor *t = ck_st_at(f, i);
            float *out = t->elements > 0 && t->elements < (1u << 20) ? malloc(t->elements * 4) : NULL;
            if (out != NULL) {
                (void)ck_st_to_f32(t, out, t->elements, &err);
            }
            free(out);
        }
        (void)ck_st_metadata(f, "format");
        (void)ck_st_find(f, "features");
    }
    ck_st_close(f);
    return 0;
}
