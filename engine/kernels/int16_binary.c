/* 16x8 ADD, SUB and MUL (int16.h): TensorFlow Lite's int16 arithmetic (add.cc, sub.cc,
 * mul.cc and their reference kernels), bit for bit, with NumPy broadcasting.
 *
 * All three tensors int16 with one scale and zero point 0 (TensorFlow Lite refuses others).
 *   ADD, SUB  the power-of-two path when the option pot_scale_int16 is set (the schema's
 *             default) and all three scales are powers of two (CheckedLog2: |log2 - round| <
 *             1e-3 in float): the input whose scale is the output's is taken as it is, the
 *             other divided by 2^(its log2 scale - the output's) (rounding, ties away from
 *             zero; refused when that is negative, or neither input's scale is the output's),
 *             and the two added (SUB: subtracted) saturating in 16 bits. ADD's path has no
 *             broadcasting in TensorFlow Lite: different input shapes are refused.
 *             Otherwise the general path: each input shifted left by 15 bits and scaled by
 *             its scale over twice the larger input scale, the two added (SUB: subtracted)
 *             in 32 bits, the result scaled by twice the larger input scale over 2^15 *
 *             output scale (ADD refuses a multiplier of 1 or more, where TensorFlow Lite
 *             aborts; SUB takes it with a left shift).
 *   MUL       the product of the inputs scaled by in1_scale * in2_scale / out_scale (double).
 * The fused activation clamps in the output's integers. Nothing is kept between runs: the
 * parameters and the broadcast plan are recomputed (a few operations) at each run. */
#include "engine/kernels/int16.h"

#include <math.h>

#include "engine/kernels/broadcast.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

#define I16_LEFT_SHIFT 15 /* TensorFlow Lite's left shift of int16 ADD / SUB inputs */

typedef struct i16_binary {
    bool pot;                      /* ADD / SUB power-of-two path */
    int a_shift, b_shift;          /* pot: right shifts (>= 0, one of them 0) */
    int32_t a_mult, b_mult, out_mult; /* general ADD / SUB: all three; MUL: out_mult */
    int a_exp, b_exp, out_exp;
    int32_t lo, hi;
} i16_binary;

bool mp_i16_checked_log2(float x, int *log2_rounded)
{
    const float l = logf(x) * (1.0f / logf(2.0f));
    const float r = roundf(l);
    *log2_rounded = (int)r;
    return fabsf(l - r) < 1e-3f;
}

static mp_status i16_binary_params(mp_node *n, i16_binary *p)
{
    float s[3];
    for (int i = 0; i < 3; i++) {
        mp_status st = mp_i16_activation(n, i < 2 ? n->in[i] : n->out[0],
                                         i < 2 ? "input" : "output", &s[i]);
        if (st != MP_OK)
            return st;
    }
    int32_t act = n->opt->activation;
    if (!mp_activation_range_q(act, s[2], 0, MP_DT_INT16, &p->lo, &p->hi))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fused activation %d has no integer range",
                            act);
    if (n->opcode == MP_OP_MUL) {
        p->pot = false;
        double real = (double)s[0] * (double)s[1] / (double)s[2];
        if (!mp_quantize_multiplier(real, &p->out_mult, &p->out_exp))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "scale product %g has no multiplier",
                                real);
        return MP_OK;
    }
    int l[3];
    p->pot = !n->opt->int16_general_scale && mp_i16_checked_log2(s[0], &l[0]) &&
             mp_i16_checked_log2(s[1], &l[1]) && mp_i16_checked_log2(s[2], &l[2]);
    if (p->pot) {
        int sa = l[0] - l[2], sb = l[1] - l[2];
        if ((sa != 0 && sb != 0) || sa > 0 || sb > 0)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "power-of-two scales 2^%d, 2^%d -> 2^%d: one input must have the "
                                "output's scale and the other one no larger",
                                l[0], l[1], l[2]);
        p->a_shift = -sa;
        p->b_shift = -sb;
        return MP_OK;
    }
    const double twice_max = (double)(2.0f * fmaxf(s[0], s[1]));
    const double out_real = twice_max / (double)((float)(1 << I16_LEFT_SHIFT) * s[2]);
    if (n->opcode == MP_OP_ADD && !(out_real < 1.0))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "output scale %g is too small for input scales %g and %g: the "
                            "output multiplier %g is not below 1",
                            (double)s[2], (double)s[0], (double)s[1], out_real);
    if (!mp_quantize_multiplier((double)s[0] / twice_max, &p->a_mult, &p->a_exp) ||
        !mp_quantize_multiplier((double)s[1] / twice_max, &p->b_mult, &p->b_exp) ||
        !mp_quantize_multiplier(out_real, &p->out_mult, &p->out_exp))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "the scales give no finite multiplier");
    return MP_OK;
}

mp_status mp_i16_binary_infer(mp_node *n)
{
    if (n->opcode != MP_OP_ADD && n->opcode != MP_OP_SUB && n->opcode != MP_OP_MUL)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' is i16; only ADD, SUB and MUL take int16 inputs",
                            mp_tname(n->in[0]));
    i16_binary p;
    mp_status st = i16_binary_params(n, &p);
    if (st != MP_OK)
        return st;
    const mp_tensor *a = n->in[0], *b = n->in[1];
    if (p.pot && n->opcode == MP_OP_ADD) {
        bool same = a->rank == b->rank;
        for (int32_t i = 0; same && i < a->rank; i++)
            same = a->dims[i] == b->dims[i];
        if (!same)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "power-of-two int16 ADD (pot_scale_int16) does not broadcast: "
                                "inputs '%s' and '%s' differ in shape",
                                mp_tname(a), mp_tname(b));
    }
    return mp_node_broadcast_output(n, 2, (const mp_tensor *const *)n->in);
}

static inline int16_t clamp16(const i16_binary *p, int32_t v)
{
    return (int16_t)(v < p->lo ? p->lo : (v > p->hi ? p->hi : v));
}

/* Power-of-two path: x and w raw Q0.15 values. */
static inline int16_t pot_op(const i16_binary *p, bool sub, int32_t x, int32_t w)
{
    int32_t a = mp_rounding_divide_by_pot(x, p->a_shift);
    int32_t b = mp_rounding_divide_by_pot(w, p->b_shift);
    int32_t r = sub ? a - b : a + b; /* gemmlowp's saturating 16-bit add / sub */
    r = r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r);
    return clamp16(p, r);
}

/* General path: inputs of at most 16 bits shifted by 15 stay within 31 bits, each scaled by
 * a multiplier <= 1/2; their sum or difference fits 32 bits. */
static inline int16_t gen_op(const i16_binary *p, bool sub, int32_t x, int32_t w)
{
    int32_t a = mp_multiply_by_quantized_multiplier(x * (1 << I16_LEFT_SHIFT), p->a_mult,
                                                    p->a_exp);
    int32_t b = mp_multiply_by_quantized_multiplier(w * (1 << I16_LEFT_SHIFT), p->b_mult,
                                                    p->b_exp);
    return clamp16(p, mp_multiply_by_quantized_multiplier(sub ? a - b : a + b, p->out_mult,
                                                          p->out_exp));
}

/* MUL: the product of two int16 values fits 31 bits. */
static inline int16_t mul_op(const i16_binary *p, int32_t x, int32_t w)
{
    return clamp16(p, mp_multiply_by_quantized_multiplier(x * w, p->out_mult, p->out_exp));
}

mp_status mp_i16_binary_run(mp_node *n)
{
    i16_binary q;
    mp_status st = i16_binary_params(n, &q);
    if (st != MP_OK)
        return st;
    const mp_tensor *in_a = n->in[0], *in_b = n->in[1];
    mp_tensor *out = n->out[0];
    mp_bc_plan plan;
    mp_bc_plan_init(&plan, 2, (const mp_tensor *const *)n->in);
    const mp_bc_plan *p = &plan;
    if (mp_tensor_elements(out) != p->elements)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold the broadcast shape",
                            mp_tname(out));
    if (p->elements == 0)
        return MP_OK;
    const int16_t *a = in_a->data, *b = in_b->data;
    int16_t *y = out->data;
    const i16_binary *qp = &q;
    const bool sub = n->opcode == MP_OP_SUB;
    if (n->opcode == MP_OP_MUL)
        MP_BC_LOOP2(int16_t, int16_t, mul_op(qp, x, w));
    else if (q.pot)
        MP_BC_LOOP2(int16_t, int16_t, pot_op(qp, sub, x, w));
    else
        MP_BC_LOOP2(int16_t, int16_t, gen_op(qp, sub, x, w));
    return MP_OK;
}
