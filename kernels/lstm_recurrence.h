/* lstm_recurrence.h - the recurrent half of one LSTM direction over packed ragged sequences. No I/O, no allocation, no threads. */
#ifndef CK_LSTM_RECURRENCE_H
#define CK_LSTM_RECURRENCE_H

#include <stddef.h>

/* Legend: R rows of the packed batch (tokens or frames of S sequences back to back; sequence s owns
 * rows [offsets[s], offsets[s+1])), H hidden size (Kokoro: 256), G = 4H gate pre-activations.
 *
 * Floats of scratch ck_lstm_recurrence_f32 needs for hidden H: 6H + 4H^2 (the cell state c [H], the
 * previous h [H], the gate pre-activations [4H], and W_hh^T [H, 4H], transposed once per call so the
 * recurrent matvec runs over contiguous gates). H = 256: 263680 floats (1 MiB).
 * Errors: CK_E_ARG (elements null), CK_E_SIZE (H == 0, overflow). */
int ck_lstm_recurrence_scratch(size_t hidden, size_t *elements);

/* One direction of a one-layer torch.nn.LSTM over each sequence of [seq_begin, seq_end), h0 = c0 = 0
 * per sequence (torch.nn.LSTM; pack_padded_sequence semantics, as Kokoro's TextEncoder and
 * DurationEncoder run it, modules.py:35-69 and 137-176; SYNTHESIS.md 1.2):
 *   a = G[r] + (W_hh h + b_hh)                     gate order i, f, g, o (torch's row blocks of W_hh)
 *   i = sigmoid(a_i), f = sigmoid(a_f), g = tanh(a_g), o = sigmoid(a_o)
 *   c = f c + i g,  h = o tanh(c),  h is written to row r.
 * Forward (reverse == 0) visits a sequence's rows first to last; reverse (reverse != 0) starts at the
 * sequence's own last row and runs to its first, as the reverse half of a packed BiLSTM does.
 * gates: G = x W_ih^T + b_ih for every row, computed by the caller (a matmul over the whole batch),
 * [R, 4H] with row stride gates_stride (>= 4H). w_hh [4H, H] row-major (torch weight_hh_l0 or
 * weight_hh_l0_reverse), b_hh [4H]. h: [R, H] with row stride h_stride (>= H); only columns [0, H) of
 * the rows of the called sequences are written, so h may point at the right half of a [R, 2H] BiLSTM
 * output (h_stride 2H) while the other direction fills the left half.
 * Only rows offsets[seq_begin] .. offsets[seq_end] - 1 are read and written; counts must cover
 * offsets[seq_end] rows. scratch: scratch_count >= ck_lstm_recurrence_scratch(H) floats.
 * Numerics (FP32): each gate's (W_hh h)_j accumulates in float from 0, k = 0 .. H-1 in order (vectorised
 * across gates j, so the order holds on every ISA: the portable and AVX-512 loops give the same bits);
 * b_hh is added to that sum and the result to G; sigmoid(a) = 1 / (1 + expf(-a)), tanh = tanhf (libm),
 * every step in float.
 * A sequence's rows depend only on its own gates and the weights: the same bits alone, in any batch,
 * and for any split of the sequence range between calls.
 * Errors, all before the first write to h (h untouched):
 *   CK_E_ARG       null pointer (when the range has rows), h or scratch overlapping gates, w_hh, b_hh,
 *                  or each other;
 *   CK_E_RANGE     bad sequence range or decreasing offsets (ck_packed.h);
 *   CK_E_SIZE      H == 0, a stride below its width, a count below its span, scratch too small, overflow;
 *   CK_E_NONFINITE NaN or Inf in the range's gates, in w_hh or in b_hh. */
int ck_lstm_recurrence_f32(const float *gates, size_t gates_count, size_t gates_stride, const float *w_hh,
                           size_t w_hh_count, const float *b_hh, size_t b_hh_count, float *h, size_t h_count,
                           size_t h_stride, float *scratch, size_t scratch_count, const size_t *offsets,
                           size_t n_seq, size_t seq_begin, size_t seq_end, size_t hidden, int reverse);

#endif
