/* fuzz_circuit.c - libFuzzer harness: arbitrary bytes as circuit JSON through ck_circuit_parse
 * (every validation rule runs). Finds crashes and leaks; asserts nothing about messages. */
#include <stdint.h>
#include <string.h>

#include "circuit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ck_circuit c;
    memset(&c, 0, sizeof c);
    ck_error err = {0};
    (void)ck_circuit_parse(&c, (const char *)data, size, "fuzz", &err);
    ck_circuit_free(&c);
    return 0;
}
