/* What the StableHLO kernels share (stablehlo.c, stablehlo_gather.c): the elementwise
 * arithmetic of two tensors of one dtype, and the options of a node read as all defaults
 * when it carries none. */
#ifndef MP_STABLEHLO_H
#define MP_STABLEHLO_H

#include <stddef.h>

#include "engine/kernels/kernel.h"

/* o[i] = a[i] op b[i] for i < count, elements of one dtype (o may be a or b). */
typedef void (*mp_shlo_fn)(const void *a, const void *b, void *o, size_t count);

/* The function of `op` on dtype dt, or NULL when memprof (and TensorFlow Lite's kernels) do not
 * compute it: op MP_OP_ADD, MP_OP_MUL, MP_OP_MAXIMUM, MP_OP_MINIMUM on float16 (computed in
 * float32, rounded to the nearest half), float32, float64 and the integers of 8 to 64 bits,
 * signed or not (integers wrap as two's complement; a maximum or minimum of floats is
 * std::max's: the first unless the second is greater); MP_OP_LOGICAL_AND,
 * MP_OP_LOGICAL_OR bitwise on the integers and logical on bool, which also takes MAXIMUM
 * (or) and MINIMUM (and); MP_OP_STABLEHLO_SHIFT_LEFT on int8, int16, int32 (the StableHLO
 * spec's: a shift by a count outside 0..bits-1 gives 0). */
mp_shlo_fn mp_shlo_binary(int op, mp_dtype dt);

/* The node's StableHLO options, or all defaults when it has none. */
const mp_shlo_options *mp_shlo_opts(const mp_node *n);

#endif
