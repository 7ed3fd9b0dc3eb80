/* circuit.h - a declared JSON circuit (dims, weight references, activation buffers, ordered ops with
 * a repeat block) loaded with cJSON and validated before anything runs. Parses; never computes.
 *
 * Legend: T tokens in the packed batch (the one "runtime" dim), F frames (a "frames" dim: a
 * sequence's frames are the sum of its tokens' durations, known once the duration op has run; a
 * "frames*K" dim has K rows per frame), E embedding 128, C hidden 768, H heads 12, D head dim 64,
 * O output 512, V vocab 178, P max positions 512. */
#ifndef CK_CIRCUIT_H
#define CK_CIRCUIT_H

#include <stddef.h>

#include "ck_dtype.h"
#include "ck_error.h"

#define CK_MAX_RANK 4
#define CK_MAX_SLOTS 6
#define CK_NAME_MAX 64
#define CK_CHECKPOINT_MAX 128
#define CK_WEIGHT_NAME_MAX 192
#define CK_FRAMES_SCALE_MAX 600 /* the largest K of a "frames*K" dim (600: 24 kHz samples) */
#define CK_FRAMES_ADD_MAX 8     /* the largest B of a "frames*K+B" dim (rows per sequence) */
#define CK_FRAMES_ADD_UNIT 1024 /* a frames code: K + B * CK_FRAMES_ADD_UNIT (ck_frames_k, _b) */
#define CK_FRAME_DIMS_MAX 16    /* distinct frames dims in one circuit */

/* Op kinds; the JSON "op" string equals the kernel file name. Only grows at the end. */
typedef enum {
    CK_OP_EMBEDDING_THREE_TABLE_LAYER_NORM = 0, /* in: ids, positions; w: word, position,
                                                   token_type, gamma, beta; out: y; eps */
    CK_OP_LINEAR = 1,                           /* in: x; w: weight [out,in], bias [out]; out: y */
    CK_OP_ATTENTION = 2,                        /* in: q, k, v; out: context; heads, head_dim, scale */
    CK_OP_RESIDUAL_LAYER_NORM = 3,              /* in: x, residual; w: gamma, beta; out: y; eps */
    CK_OP_GELU_NEW = 4,                         /* in: x; out: y */
    CK_OP_LEAKY_RELU = 5,                       /* in: x; out: y; slope (in scale) */
    CK_OP_LAYER_NORM = 6,                       /* in: x; w: gamma, beta; out: y; eps */
    CK_OP_CONV1D = 7,                           /* in: x; w: weight [out,in,K], bias [out]; out: y */
    CK_OP_LSTM_RECURRENCE = 8,                  /* in: gates, gates_reverse [T,4H]; w: w_hh, b_hh,
                                                   w_hh_reverse, b_hh_reverse; out: h [T,2H] */
    CK_OP_EMBEDDING = 9,                        /* in: ids (i32); w: table [V,C]; out: y [T,C] */
    CK_OP_CONCAT_STYLE = 10,                    /* in: x [T,C]; out: [T,C+D] with the batch's
                                                   per-sequence style [S,D] */
    CK_OP_ADA_LAYER_NORM = 11,                  /* in: x [T,C]; w: fc weight [2C,D], fc bias [2C]
                                                   (of the style); out: y [T,C]; eps */
    CK_OP_DURATION = 12,                        /* in: logits [T,B]; out: frames i32 [T], with the
                                                   batch's per-sequence speed */
    CK_OP_EXPAND_ROWS = 13,                     /* in: x [T,C], durations i32 [T]; out: [F,C], each
                                                   token's row repeated for its frames */
    CK_OP_UPSAMPLE_NEAREST2_ROWS = 14,          /* in: x [FK,C]; out: [F2K,C], each row twice */
    CK_OP_CONV_TRANSPOSE1D_DEPTHWISE_K3S2 = 15, /* in: x [FK,C]; w: weight [C,1,3], bias [C]; out:
                                                   [F2K,C] */
    CK_OP_ADAIN_INSTANCE_NORM = 16,             /* in: x [F,C]; w: fc weight [2C,D], fc bias [2C]
                                                   (of the style); out: y [F,C]; eps */
    CK_OP_ADD_SCALED = 17,                      /* in: x, residual [R,C]; out: (x + residual) *
                                                   scale */
    CK_OP_CONCAT_COLS = 18,                     /* in: x [R,A], z [R,B]; out: [R,A+B] */
    CK_OP_DOWNSAMPLE2_ROWS = 19,                /* in: x [F2K,C]; out: [FK,C], every second row */
    CK_OP_NOISE_NORMAL = 20,                    /* in: f0 [2F,1] (its rows); out: noise [600F,9],
                                                   the batch's (ck_executor_set_noise*) */
    CK_OP_HARMONIC_SOURCE = 21,                 /* in: f0 [2F,1], noise [600F,9]; w: weight [1,9],
                                                   bias [1]; out: [600F,1] */
    CK_OP_STFT20 = 22,                          /* in: x [600F,1]; out: [120F+1,22] mag | phase */
    CK_OP_ISTFT20 = 23,                         /* in: x [120F+1,22]; out: audio [600F,1] */
    CK_OP_REFLECT_PAD_LEFT1 = 24,               /* in: x [R,C]; out: [R+S,C], frame 1 first */
    CK_OP_ADAIN_SNAKE = 25,                     /* in: x [R,C]; w: fc weight [2C,D], fc bias [2C],
                                                   alpha [1,C,1]; out: Snake(AdaIN(x)); eps */
    CK_OP_CONV_TRANSPOSE1D_COL2IM = 26,         /* in: x [R,Cin]; w: weight [Cin,C,K], bias [C];
                                                   out: [stride R, C]; stride */
    CK_OP_KIND_COUNT
} ck_op_kind;

typedef enum {
    CK_BUFFER_ACTIVATION = 0, /* written and read by ops */
    CK_BUFFER_INPUT = 1,      /* filled by the executor per batch (ids, positions) */
    CK_BUFFER_OUTPUT = 2      /* kept alive to the end of the run (features, last hidden state) */
} ck_buffer_role;

typedef struct {
    char name[CK_NAME_MAX];
    size_t value;  /* fixed size; 0 for a runtime dim */
    int runtime;   /* 1 for a runtime dim: T ("runtime", tokens in the packed batch) or a frames
                      dim */
    size_t frames; /* a frames dim's code: K + B * CK_FRAMES_ADD_UNIT for K rows per frame and B
                      more per sequence ("frames" 1, "frames*K" K in 1..CK_FRAMES_SCALE_MAX,
                      "frames*K+B" B in 1..CK_FRAMES_ADD_MAX); 0 for T and the fixed dims */
} ck_dim;

typedef struct {
    char name[CK_NAME_MAX];                   /* circuit-local name, e.g. "query_weight" */
    char checkpoint_name[CK_WEIGHT_NAME_MAX]; /* flat checkpoint name, e.g. "bert_encoder.weight" */
    size_t rank;
    size_t shape[CK_MAX_RANK];                /* resolved from dims; row-major */
    size_t elements;                          /* product of shape */
} ck_weight_ref;

typedef struct {
    char name[CK_NAME_MAX];
    ck_dtype dtype;
    ck_buffer_role role;
    size_t cols;    /* elements per row (product of the fixed dims); every buffer is [rows, cols] */
    size_t frames;  /* its rows: 0 tokens (T), K > 0 frames times K (its first dim "frames*K") */
} ck_buffer;

typedef struct {
    ck_op_kind kind;
    size_t decl_index;                  /* index of the op in the JSON "ops" (or the repeat's) */
    int repeat_index;                   /* 0-based application of the repeat block, -1 outside */
    int inputs[CK_MAX_SLOTS];           /* buffer indices in the kind's fixed slot order */
    int weights[CK_MAX_SLOTS];          /* weight indices in the kind's fixed slot order; -1 for
                                           an optional slot left out (conv1d's bias) */
    int output;                         /* buffer index */
    float eps;                          /* LayerNorm epsilon */
    size_t heads, head_dim;             /* attention geometry */
    float scale;                        /* attention score scale (1/sqrt(head_dim)); leaky_relu:
                                           the negative slope */
    size_t dilation, stride;            /* conv1d (0 or absent: 1), conv_transpose1d_col2im's
                                           stride */
    size_t padding;                     /* conv1d: SIZE_MAX (absent): 'same', dilation (K-1)/2 */
    size_t style_offset;                /* concat_style, ada_layer_norm, adain_instance_norm: the
                                           first column of the batch's style row they read (0; 128
                                           for Kokoro's predictor half of a whole ref_s row) */
    char checkpoint[CK_CHECKPOINT_MAX]; /* X-Ray id with the repeat index expanded; "" when none */
} ck_op;

/* An op-less X-Ray checkpoint id naming an output buffer at the end of a run
 * ("aliases": {"kokoro.phoneme_encoder.last_hidden_state": "hidden"}). */
typedef struct {
    char checkpoint[CK_CHECKPOINT_MAX];
    int buffer;
} ck_alias;

typedef struct {
    char path[256];           /* where it was loaded from, for messages */
    char name[CK_NAME_MAX];
    ck_dim *dims;             /* [n_dims] */
    size_t n_dims;
    ck_weight_ref *weights;   /* [n_weights] */
    size_t n_weights;
    ck_buffer *buffers;       /* [n_buffers] */
    size_t n_buffers;
    ck_op *ops;               /* [n_ops], the repeat block unrolled in execution order */
    size_t n_ops;
    ck_alias *aliases;        /* [n_aliases], ids unique among all checkpoint ids, buffers outputs */
    size_t n_aliases;
    int ids_buffer;           /* input buffer of token ids (i32, cols 1) */
    int positions_buffer;     /* input buffer of position ids (i32, cols 1) */
    int features_buffer;      /* the circuit's "outputs": {"features": ...} */
    int hidden_buffer;        /* the circuit's "outputs": {"hidden": ...}, -1 when absent */
    int durations_buffer;     /* the circuit's "outputs": {"durations": ...}: i32 [T] frames per
                                 token, -1 when absent */
    int f0_buffer, n_buffer;  /* "outputs" "f0", "n": f32 [2F, 1] F0 and N curves, -1 when absent */
    int asr_buffer;           /* "outputs" "asr": f32 [F, 512] t_en aligned to frames, -1 when
                                 absent */
    int decoder_buffer;       /* "outputs" "decoder": f32 [2F, 512], the decoder's output (the
                                 generator's input), -1 when absent */
    size_t max_positions;     /* rows of the position table: the longest sequence the circuit takes */
    int audio_buffer;         /* "outputs" "audio": f32 [600F, 1] 24 kHz samples, -1 when absent */
    size_t max_frames_scale;  /* the largest K of its frames dims; 0: no frames dim */
    size_t frame_dims[CK_FRAME_DIMS_MAX]; /* the distinct frames codes of its dims */
    size_t n_frame_dims;
} ck_circuit;

/* K and B of a frames code (ck_dim frames): a sequence of f frames has K f + B such rows. */
static inline size_t ck_frames_k(size_t code)
{
    return code % CK_FRAMES_ADD_UNIT;
}

static inline size_t ck_frames_b(size_t code)
{
    return code / CK_FRAMES_ADD_UNIT;
}

/* The index of code in c's frame_dims, -1 when it is not one of them. */
static inline int ck_circuit_frame_slot(const ck_circuit *c, size_t code)
{
    for (size_t i = 0; i < c->n_frame_dims; i++) {
        if (c->frame_dims[i] == code) {
            return (int)i;
        }
    }
    return -1;
}

/* Loads and validates a circuit file. On error returns a negative CK_E_* (CK_E_IO, CK_E_FORMAT for
 * JSON syntax, CK_E_CIRCUIT for a rule) with err naming the file, the op and the field; *c is then
 * zeroed. The caller frees with ck_circuit_free. */
int ck_circuit_load(ck_circuit *c, const char *path, ck_error *err);

/* Same as ck_circuit_load from JSON text already in memory; `origin` names it in messages. */
int ck_circuit_parse(ck_circuit *c, const char *json, size_t length, const char *origin,
                     ck_error *err);

/* Releases what ck_circuit_load allocated; accepts a zeroed or half-built circuit. */
void ck_circuit_free(ck_circuit *c);

/* Index of a buffer or weight by circuit-local name, -1 when absent. */
int ck_circuit_find_buffer(const ck_circuit *c, const char *name);
int ck_circuit_find_weight(const ck_circuit *c, const char *name);

/* Buffer index an alias id names, -1 when c, id or the alias is absent. */
int ck_circuit_alias(const ck_circuit *c, const char *id);

/* The JSON name of an op kind ("linear", ...). */
const char *ck_op_kind_name(ck_op_kind kind);

#endif
