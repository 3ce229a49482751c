/* NumPy broadcasting for the elementwise kernels of two or three inputs (binary.c,
 * math_binary.c, compare.c): the output shape of broadcast inputs, and one plan over the
 * output with unit dimensions dropped and neighbouring dimensions that broadcast the same
 * way merged, so equal shapes become one contiguous run and "tensor op scalar" or "NHWC op
 * per-channel vector" need one or two dimensions. The loops walk rows of the innermost
 * merged dimension, the outer ones with an odometer. */
#ifndef MP_BROADCAST_H
#define MP_BROADCAST_H

#include "engine/kernels/kernel.h"

#define MP_BC_MAX_OPERANDS 3

typedef struct mp_bc_plan {
    int32_t rank;                                   /* >= 1 */
    int32_t n;                                      /* operands */
    size_t dims[MP_MAX_RANK];                       /* output extent per merged dimension */
    size_t stride[MP_BC_MAX_OPERANDS][MP_MAX_RANK]; /* element strides, 0 = broadcast */
    size_t elements;                                /* output elements (0: nothing to do) */
} mp_bc_plan;

/* Give output 0 the broadcast shape of the count (2 or 3) tensors ts: trailing dimensions
 * aligned, each set equal or 1. MP_ERR_SHAPE naming the two tensors that do not broadcast,
 * or the output when the shape is too large. */
mp_status mp_node_broadcast_output(mp_node *n, int32_t count, const mp_tensor *const *ts);

/* The plan for count (1 to 3) tensors whose shapes broadcast (checked before). */
void mp_bc_plan_init(mp_bc_plan *p, int32_t count, const mp_tensor *const *ts);

/* Operand k's extent along merged dimension i (1 where it is broadcast), for XNNPACK's
 * _nd operators. */
static inline size_t mp_bc_extent(const mp_bc_plan *p, int32_t k, int32_t i)
{
    return p->stride[k][i] ? p->dims[i] : 1;
}

/* Advance the odometer of the outer dimensions after a row (offsets o[k] of the operands). */
static inline void mp_bc_next_row(const mp_bc_plan *p, size_t *idx, size_t *o)
{
    for (int32_t d = p->rank - 2; d >= 0; d--) {
        for (int32_t k = 0; k < p->n; k++)
            o[k] += p->stride[k][d];
        if (++idx[d] < p->dims[d])
            return;
        for (int32_t k = 0; k < p->n; k++)
            o[k] -= p->stride[k][d] * p->dims[d];
        idx[d] = 0;
    }
}

/* The two-operand loop over plan p: a (const TA *), b (const TB *) and y (output pointer)
 * in scope; EXPR computes y's element from x (element of a) and w (element of b). In a
 * row at most one input is broadcast, so its element is hoisted. */
#define MP_BC_LOOP2(TA, TB, EXPR)                                                         \
    do {                                                                                  \
        const int32_t last_ = p->rank - 1;                                                \
        const size_t len_ = p->dims[last_];                                               \
        const size_t rows_ = p->elements / len_;                                          \
        size_t idx_[MP_MAX_RANK] = {0}, o_[MP_BC_MAX_OPERANDS] = {0};                     \
        for (size_t row_ = 0; row_ < rows_; row_++) {                                     \
            const TA *ra_ = a + o_[0];                                                    \
            const TB *rb_ = b + o_[1];                                                    \
            if (p->stride[0][last_] && p->stride[1][last_]) {                             \
                for (size_t i = 0; i < len_; i++) {                                       \
                    const TA x = ra_[i];                                                  \
                    const TB w = rb_[i];                                                  \
                    y[i] = (EXPR);                                                        \
                }                                                                         \
            } else if (p->stride[0][last_]) {                                             \
                const TB w = rb_[0];                                                      \
                for (size_t i = 0; i < len_; i++) {                                       \
                    const TA x = ra_[i];                                                  \
                    y[i] = (EXPR);                                                        \
                }                                                                         \
            } else {                                                                      \
                const TA x = ra_[0];                                                      \
                for (size_t i = 0; i < len_; i++) {                                       \
                    const TB w = rb_[i];                                                  \
                    y[i] = (EXPR);                                                        \
                }                                                                         \
            }                                                                             \
            y += len_;                                                                    \
            mp_bc_next_row(p, idx_, o_);                                                  \
        }                                                                                 \
    } while (0)

#endif
