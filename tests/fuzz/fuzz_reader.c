/* fuzz_reader.c - libFuzzer harness: the first byte picks the corpus format (ids, phonemes, or
 * text through espeak-ng when built with it) and strictness, the rest is the corpus read to the
 * end through ck_reader_next, bad lines included. Finds crashes and leaks; asserts nothing else. */
#include <stdint.h>
#include <stdio.h>

#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Text goes through espeak-ng (slow, and not ours): one input in 16 picks it. */
static ck_input_format pick_format(uint8_t b)
{
    if ((b & 0x0f) == 0x0f) {
        return CK_INPUT_TEXT;
    }
    return (b & 1) ? CK_INPUT_IDS : CK_INPUT_PHONEMES;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    ck_reader_options ro = {pick_format(data[0]), "en-us", (data[0] >> 4) & 1,
                            (data[0] & 0x20) ? 16 : 510, NULL, NULL, NULL, 0,
                            (data[0] & 0x40) ? "espeak" : NULL, NULL};
    FILE *in = size > 1 ? fmemopen((void *)(data + 1), size - 1, "rb") : fopen("/dev/null", "rb");
    if (in == NULL) {
        return 0;
    }
    ck_error err = {0};
    ck_reader *r = NULL;
    if (ck_reader_open(&r, in, "fuzz", &ro, &err) == CK_OK) {
        for (;;) {
            ck_sequence *seqs = NULL;
            size_t n = 0;
            int rc = ck_reader_next(r, &seqs, &n, &err);
            ck_sequences_free(seqs, n);
            if (rc != 1 && rc != CK_E_INPUT) {
                break;
            }
        }
    }
    ck_reader_close(r);
    fclose(in);
    return 0;
}
