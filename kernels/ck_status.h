/* ck_status.h - the one status list of ckbatch: 0 or a negative CK_E_* code. Only grows at the end. */
#ifndef CK_STATUS_H
#define CK_STATUS_H

enum {
    CK_OK = 0,
    CK_E_ARG = -1,        /* null pointer, aliasing buffers, bad scalar (eps <= 0, ...) */
    CK_E_SIZE = -2,       /* geometry or capacity: count below span, stride < cols, overflow,
                             arena too small or misaligned (DESIGN section 5) */
    CK_E_NONFINITE = -3,  /* NaN or Inf in an input, weight or result */
    CK_E_RANGE = -4,      /* id or index out of range */
    /* engine codes */
    CK_E_IO = -5,         /* open, read, write, fsync or rename failed */
    CK_E_FORMAT = -6,     /* malformed file: safetensors, JSON, pickle, ZIP */
    CK_E_CIRCUIT = -7,    /* circuit rejected by validation */
    CK_E_MEMORY = -8,     /* allocation failed */
    CK_E_HASH = -9,       /* SHA-256 mismatch against a manifest */
    CK_E_PARITY = -10,    /* X-Ray comparison failed */
    CK_E_INPUT = -11,     /* bad corpus line: invalid UTF-8, unknown symbol (strict), too long, bad ids */
    CK_E_BACKEND = -12,   /* oneDNN or espeak-ng reported an error */
    CK_E_WEIGHTS = -13    /* missing weight, shape or dtype mismatch against the circuit */
};

/* Short stable name of a status code ("CK_OK", "CK_E_SIZE", ...); "CK_E_UNKNOWN" for others. */
const char *ck_status_name(int code);

#endif
