/* fuzz_pth.c - libFuzzer harness: arbitrary bytes as a torch.save ZIP through ck_pth_open (zip,
 * restricted unpickler, tensor checks), then every tensor viewed (CRC checks). Crashes and leaks only. */
#include "fuzz_memfile.h"
#include "pth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = ck_fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) {
        return 0;
    }
    ck_error err = {0};
    ck_pth_file *f = NULL;
    if (ck_pth_open(&f, path, &err) == CK_OK) {
        for (size_t i = 0; i < ck_pth_count(f); i++) {
            ck_st_tensor view;
            (void)ck_pth_view(f, i, &view, &err);
            (void)ck_pth_kokoro_encoder_wants(ck_pth_at(f, i));
        }
    }
    ck_pth_close(f);
    close(fd);
    return 0;
}
