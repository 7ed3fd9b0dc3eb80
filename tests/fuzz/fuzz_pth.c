/* fuzz_pth.c - libFuzzer harness: arbitrary bytes as a torch.save ZIP through ck_pth_open_memory
 * (zip, restricted unpickler, tensor checks), then every tensor viewed (CRC checks). Crashes and
 * leaks only. */
#include <stdint.h>
#include <string.h>

#include "pth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t empty[1];
    ck_error err = {0};
    ck_pth_file *f = NULL;
    if (ck_pth_open_memory(&f, size > 0 ? (const void *)data : empty, size, "fuzz.pth", &err) ==
        CK_OK) {
        for (size_t i = 0; i < ck_pth_count(f); i++) {
            ck_st_tensor view;
            (void)ck_pth_view(f, i, &view, &err);
            (void)strlen(ck_pth_at(f, i)->name);
        }
    }
    ck_pth_close(f);
    return 0;
}
