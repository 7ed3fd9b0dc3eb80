/* kokoro_layout.h - Kokoro-82M v1.0's checkpoint as ckbatch names it: every stored tensor of its five
 * groups (bert, bert_encoder, predictor, text_encoder, decoder) with its shape, in the order of
 * SYNTHESIS.md Appendix A (the order tools/kokoro_weights.py writes). The synthetic demo weights are
 * this list through the splitmix64-uniform-v1 generator; weight-normed layers are listed as stored
 * (P.weight_g [dim0, 1, 1] and P.weight_v), so a synthetic set folds them like a real checkpoint. */
#ifndef CK_KOKORO_LAYOUT_H
#define CK_KOKORO_LAYOUT_H

#include <stddef.h>

#include "ck_error.h"
#include "weights.h"

#define CK_KOKORO_TENSORS 548 /* 25 + 2 + 122 + 24 + 375 (SYNTHESIS.md section 3) */

/* The tensors of the groups named in `groups` (NULL-terminated; NULL: all five), in Appendix A
 * order, into *specs[*n] (malloc'd; names point into the same block: free(*specs) frees all).
 * Flat names without "module.", e.g. "decoder.generator.conv_post.weight_g".
 * Errors: CK_E_ARG (null out), CK_E_MEMORY. On error *specs is NULL and *n 0. */
int ck_kokoro_weight_specs(ck_weight_spec **specs, size_t *n, const char *const *groups,
                           ck_error *err);

#endif
