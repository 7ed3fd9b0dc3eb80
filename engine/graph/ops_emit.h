/* ops_emit.h - the emit column of the op table: per op kind, the function that prints a lowered
 * step's operands as generated C (ops_emit.c; the emitter, engine/codegen/emit_c.c, calls it).
 * Apart from op_table.h so that only the emitters see <stdio.h>. */
#ifndef CK_OPS_EMIT_H
#define CK_OPS_EMIT_H

#include <stdio.h>

#include "program.h"

/* Prints the operands of one step as generated C, the expression `&(const ck_step_args){..}` that
 * the step's run or rows function (steps.h) takes: the values of its bound ck_step.args, planned
 * offsets and bf16 copies (c names the buffers in comments), weights as the library's st->w[i]
 * and its linear as st->linear[step.linear_slot], scalars as constants (floats in hex, exact).
 * Returns 0, or CK_E_IO when the write fails. */
typedef int (*ck_op_emit_fn)(FILE *f, const ck_circuit *c, const ck_step *step);

/* One per ck_op_kind, kept beside the emitters in ops_emit.c (which _Static_asserts its size), so
 * that a new op's emitter touches that file only. */
extern const ck_op_emit_fn ck_op_emit[];

#endif
