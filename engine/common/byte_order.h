/* byte_order.h - little-endian integer reads for the file readers (ZIP, pickle). No I/O, no state. */
#ifndef CK_BYTE_ORDER_H
#define CK_BYTE_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* The unsigned little-endian integer of `bytes` (1..8) bytes at p; the caller has checked that
 * [p, p + bytes) is inside its buffer. */
static inline uint64_t ck_le(const unsigned char *p, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = bytes; i-- > 0;) {
        v = v << 8 | p[i];
    }
    return v;
}

#endif
