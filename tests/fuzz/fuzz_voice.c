/* fuzz_voice.c - libFuzzer harness: arbitrary bytes as a voice file through ck_voice_load (the
 * .pt/.bin sniff, the restricted unpickler, the shape and dtype checks, the finite check, the mix).
 * Byte 0 picks the form: bit 0 tiles the rest to exactly CK_VOICE_BYTES (a raw pack of fuzzed
 * floats; fuzz.sh's -max_len is far below a pack), bit 1 mixes the file with the synthetic pack
 * ("FILE:3,synthetic"). The file (/tmp/fuzz_voice_<pid>.bin) is removed after each input.
 * Crashes, leaks and a kept pack with a non-finite value only. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "voice.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64], spec[128];
    static unsigned char *pack;
    if (size == 0) {
        return 0;
    }
    if (path[0] == '\0') {
        snprintf(path, sizeof path, "/tmp/fuzz_voice_%ld.bin", (long)getpid());
        pack = malloc(CK_VOICE_BYTES);
    }
    if (pack == NULL) {
        return 0;
    }
    const uint8_t *bytes = data + 1;
    size_t n = size - 1;
    if ((data[0] & 1) && n > 0) {
        size_t have = n < CK_VOICE_BYTES ? n : CK_VOICE_BYTES;
        memcpy(pack, bytes, have);
        for (; have < CK_VOICE_BYTES; have *= 2) { /* doubling copies */
            memcpy(pack + have, pack, have < CK_VOICE_BYTES - have ? have : CK_VOICE_BYTES - have);
        }
        bytes = pack;
        n = CK_VOICE_BYTES;
    }
    FILE *fp = fopen(path, "wb");
    if (fp == NULL) {
        return 0;
    }
    size_t wrote = n > 0 ? fwrite(bytes, 1, n, fp) : 0;
    if (fclose(fp) != 0 || wrote != n) {
        return 0;
    }
    snprintf(spec, sizeof spec, data[0] & 2 ? "%s:3,synthetic" : "%s", path);
    ck_voice *v = NULL;
    ck_error err = {0};
    if (ck_voice_load(&v, spec, "/nonexistent", &err) == CK_OK) {
        for (size_t i = 0; i < (size_t)CK_VOICE_ROWS * CK_VOICE_DIM; i++) {
            if (!isfinite(v->pack[i])) {
                abort(); /* voice.h: every value of a loaded pack is finite */
            }
        }
    }
    ck_voice_free(v);
    unlink(path);
    return 0;
}
