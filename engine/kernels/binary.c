/* Kernels: elementwise binary arithmetic with NumPy broadcasting (ADD, SUB, MUL, DIV,
 * FLOOR_MOD).
 *
 * float32 ADD/SUB/MUL/DIV run on XNNPACK's *_nd_f32 operators, with NONE/RELU/RELU6/
 * RELU_N1_TO_1 fused into the operator's output range. Everything else runs in plain C
 * over one shared broadcast plan: int32 and int64 (shape arithmetic in dynamic-shape
 * graphs), FLOOR_MOD, and float32 shapes whose broadcast pattern needs more dimensions
 * than XNNPACK takes (XNN_MAX_TENSOR_DIMS).
 *
 * Quantized ADD, SUB and MUL (int8 and uint8, each input and the output with its own
 * per-tensor scale and zero point, the fused activation as an integer range) run on
 * XNNPACK's *_nd_qs8 / *_nd_qu8 operators. XNNPACK refuses some scale ratios that
 * TensorFlow Lite accepts (this version: input / output scale outside [2^-10, 2^8) for ADD
 * and SUB, input product / output scale outside [2^-16, 2^8) for MUL); those nodes, and
 * broadcasts deeper than XNNPACK takes, run in plain C as TensorFlow Lite's reference
 * integer kernels, bit for bit: ADD and SUB shift both centred inputs left by 20 bits,
 * scale each by its input multiplier (its scale over twice the larger input scale; SUB
 * negates the second one's, as TensorFlow Lite's PrepareGeneralSubOp), add, and scale the
 * sum by the output multiplier; MUL scales the product of the centred inputs by
 * in1_scale * in2_scale / out_scale (computed in float as TensorFlow Lite does). XNNPACK's
 * own requantization (fp32 in this version) may differ from those by 1 in the last place.
 * uint8 DIV (div.cc EvalQuantized; int8 has none there) runs in plain C as TensorFlow Lite's
 * reference DivElementwise: the centred divisor made positive (both signs flipped), its
 * reciprocal by GetReciprocal, the centred dividend shifted by its leading sign bits times
 * it, then scaled by in1_scale / (in2_scale * out_scale) (float, as there) with the shift
 * less the two normalizations; a divisor equal to its zero point fails the run.
 *
 * Integer semantics follow TensorFlow Lite: DIV truncates toward zero, FLOOR_MOD takes the
 * sign of the divisor (like Python's %), a zero divisor is an error at run time (as in
 * TFLite) rather than a crash. Overflow wraps (two's complement) instead of being undefined:
 * INT_MIN / -1 gives INT_MIN and INT_MIN mod -1 gives 0.
 *
 * The stored integers of the dtypes the newest TensorFlow Lite kernels (LiteRT's add.cc,
 * mul.cc, floor_mod.cc) take unquantized run in plain C too (binary_plain_small): ADD and
 * MUL of int16 tensors without quantization parameters (int16 with them is 16x8,
 * int16_binary.c), MUL of uint32, FLOOR_MOD of int8 and int16 (the stored values whatever
 * their quantization, as floor_mod.cc). The sum or product wraps in the type (30000 + 10000
 * gives -25536) and the fused activation then clamps it (reference add.h / mul.h:
 * ActivationFunctionWithMinMax<T> of a + b taken as a T); RELU_N1_TO_1 on uint32 gives 1
 * everywhere, as CalculateActivationRange<uint32_t>'s -1 bound does there. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/broadcast.h"
#include "engine/kernels/int16.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

#define DEFINE_BC_KERNEL(NAME, T, EXPR)                                                   \
    static void NAME(const mp_bc_plan *p, const T *restrict a, const T *restrict b,       \
                     T *restrict y)                                                       \
    {                                                                                     \
        MP_BC_LOOP2(T, T, EXPR);                                                          \
    }

/* Wrapping integer arithmetic: computed on unsigned types so overflow is defined. */
static inline int32_t i32_wrap(uint32_t v) { return (int32_t)v; }
static inline int64_t i64_wrap(uint64_t v) { return (int64_t)v; }

/* Divisors are checked for zero before these run. -1 is special-cased because
 * INT_MIN / -1 and INT_MIN % -1 overflow (undefined behaviour in C). */
static inline int32_t div_i32(int32_t x, int32_t w)
{
    return w == -1 ? i32_wrap(0u - (uint32_t)x) : x / w;
}
static inline int64_t div_i64(int64_t x, int64_t w)
{
    return w == -1 ? i64_wrap(0u - (uint64_t)x) : x / w;
}
static inline int32_t fmod_i32(int32_t x, int32_t w)
{
    if (w == -1)
        return 0;
    int32_t r = x % w;
    return (r != 0 && ((w < 0) != (r < 0))) ? r + w : r;
}
static inline int64_t fmod_i64(int64_t x, int64_t w)
{
    if (w == -1)
        return 0;
    int64_t r = x % w;
    return (r != 0 && ((w < 0) != (r < 0))) ? r + w : r;
}
static inline float fmod_f32(float x, float w)
{
    float r = fmodf(x, w);
    return (r != 0.0f && ((w < 0.0f) != (r < 0.0f))) ? r + w : r;
}

DEFINE_BC_KERNEL(add_f32, float, x + w)
DEFINE_BC_KERNEL(sub_f32, float, x - w)
DEFINE_BC_KERNEL(mul_f32, float, x * w)
DEFINE_BC_KERNEL(div_f32, float, x / w)
DEFINE_BC_KERNEL(mod_f32, float, fmod_f32(x, w))
DEFINE_BC_KERNEL(add_i32, int32_t, i32_wrap((uint32_t)x + (uint32_t)w))
DEFINE_BC_KERNEL(sub_i32, int32_t, i32_wrap((uint32_t)x - (uint32_t)w))
DEFINE_BC_KERNEL(mul_i32, int32_t, i32_wrap((uint32_t)x * (uint32_t)w))
DEFINE_BC_KERNEL(div_i32k, int32_t, div_i32(x, w))
DEFINE_BC_KERNEL(mod_i32, int32_t, fmod_i32(x, w))
DEFINE_BC_KERNEL(add_i64, int64_t, i64_wrap((uint64_t)x + (uint64_t)w))
DEFINE_BC_KERNEL(sub_i64, int64_t, i64_wrap((uint64_t)x - (uint64_t)w))
DEFINE_BC_KERNEL(mul_i64, int64_t, i64_wrap((uint64_t)x * (uint64_t)w))
DEFINE_BC_KERNEL(div_i64k, int64_t, div_i64(x, w))
DEFINE_BC_KERNEL(mod_i64, int64_t, fmod_i64(x, w))
/* Plain int16 (ADD, MUL), uint32 (MUL), int8 / int16 (FLOOR_MOD): the operands promoted to
 * int, which holds every sum and product of int16 values exactly, the result converted back
 * to the type (the low bits: wrapping), as TensorFlow Lite's ActivationFunctionWithMinMax<T>
 * takes its argument as a T. uint32 multiplies as unsigned int (wrapping). */
DEFINE_BC_KERNEL(add_i16, int16_t, (int16_t)(x + w))
DEFINE_BC_KERNEL(mul_i16, int16_t, (int16_t)(x * w))
DEFINE_BC_KERNEL(mul_u32, uint32_t, x * w)
DEFINE_BC_KERNEL(mod_i16, int16_t, (int16_t)fmod_i32(x, w))
DEFINE_BC_KERNEL(mod_i8, int8_t, (int8_t)fmod_i32(x, w))

/* A quantized node's parameters: the tensors' scales and zero points (for XNNPACK) and
 * TensorFlow Lite's integer ADD/SUB/MUL parameters (for the plain-C path). */
typedef struct q8_binary {
    float scale[3];                         /* a, b, output */
    int32_t zero_point[3];
    int32_t a_offset, b_offset, out_offset; /* -zp(a), -zp(b), zp(output) */
    int32_t a_mult, b_mult, out_mult;       /* ADD/SUB: all three; MUL: out_mult only */
    int a_shift, b_shift, out_shift;
    int32_t lo, hi;                         /* the fused activation's range */
} q8_binary;

/* TensorFlow Lite's left shift of 8-bit ADD/SUB inputs before they are scaled. */
#define Q8_ADD_LEFT_SHIFT 20

static inline int32_t q8_finish(const q8_binary *q, int32_t scaled)
{
    int64_t v = (int64_t)scaled + q->out_offset;
    return v < q->lo ? q->lo : (v > q->hi ? q->hi : (int32_t)v);
}

/* Centred inputs of at most 9 bits shifted by 20 and scaled by multipliers <= 1: the sum
 * stays below 2^30, nothing overflows. */
static inline int32_t q8_add(const q8_binary *q, int32_t x, int32_t w)
{
    int32_t sx = mp_multiply_by_quantized_multiplier((x + q->a_offset) * (1 << Q8_ADD_LEFT_SHIFT),
                                                     q->a_mult, q->a_shift);
    int32_t sw = mp_multiply_by_quantized_multiplier((w + q->b_offset) * (1 << Q8_ADD_LEFT_SHIFT),
                                                     q->b_mult, q->b_shift);
    return q8_finish(q, mp_multiply_by_quantized_multiplier(sx + sw, q->out_mult, q->out_shift));
}

/* uint8 DIV; the centred divisor is not 0 (checked before the loop), the multiplier's shift
 * at most 23 (so the total shift is never a left one). */
static inline int32_t q8_div(const q8_binary *q, int32_t x, int32_t w)
{
    int32_t a = x + q->a_offset, b = w + q->b_offset;
    if (b < 0) {
        a = -a;
        b = -b;
    }
    int recip_shift;
    const int32_t inv = mp_get_reciprocal(b, 31, &recip_shift);
    const int headroom = a ? __builtin_clrsb(a) : 31;
    const int32_t unscaled =
        mp_sat_rounding_doubling_high_mul((int32_t)((uint32_t)a << headroom), inv);
    return q8_finish(q, mp_rounding_divide_by_pot(
                            mp_sat_rounding_doubling_high_mul(unscaled, q->out_mult),
                            recip_shift + headroom - q->out_shift));
}

static inline int32_t q8_mul(const q8_binary *q, int32_t x, int32_t w)
{
    return q8_finish(q, mp_multiply_by_quantized_multiplier((x + q->a_offset) * (w + q->b_offset),
                                                            q->out_mult, q->out_shift));
}

#define DEFINE_BC_Q8_KERNEL(NAME, T, FN)                                                  \
    static void NAME(const mp_bc_plan *p, const q8_binary *q, const T *restrict a,        \
                     const T *restrict b, T *restrict y)                                  \
    {                                                                                     \
        MP_BC_LOOP2(T, T, (T)FN(q, x, w));                                                \
    }

DEFINE_BC_Q8_KERNEL(add_s8, int8_t, q8_add)
DEFINE_BC_Q8_KERNEL(mul_s8, int8_t, q8_mul)
DEFINE_BC_Q8_KERNEL(add_u8, uint8_t, q8_add)
DEFINE_BC_Q8_KERNEL(mul_u8, uint8_t, q8_mul)
DEFINE_BC_Q8_KERNEL(div_u8, uint8_t, q8_div)

typedef struct binary_state {
    xnn_operator_t op; /* float32 ADD/SUB/MUL/DIV, 8-bit ADD/SUB/MUL; created once (the
                          activation and the quantization are fixed) */
    bool use_xnn;      /* the current shapes run on op (else plain C) */
    mp_bc_plan plan;
    /* 8-bit nodes only (a float node's state ends before these: its size is unchanged) */
    bool xnn_refused;  /* XNNPACK refused the quantization: plain C from then on */
    q8_binary q;
} binary_state;

static bool binary_dtype_ok(mp_dtype dt)
{
    return dt == MP_DT_FLOAT32 || dt == MP_DT_INT32 || dt == MP_DT_INT64 || mp_dtype_is_q8(dt);
}

/* The node computes on the stored integers of a dtype TensorFlow Lite's newest kernels take
 * without quantization: ADD and MUL on int16 tensors none of which has quantization
 * parameters (add.cc / mul.cc send those to their unquantized path; op_version.cc's ADD v5
 * and MUL v7), MUL on uint32 (mul.cc), FLOOR_MOD on int8 and int16 (floor_mod.cc, which never
 * reads the quantization). SUB has no such int16 path (sub.cc quantizes every int16). */
static bool binary_plain_small(const mp_node *n)
{
    const mp_dtype dt = n->in[0]->dtype;
    if (n->opcode == MP_OP_FLOOR_MOD)
        return dt == MP_DT_INT8 || dt == MP_DT_INT16;
    if (n->opcode == MP_OP_MUL && dt == MP_DT_UINT32)
        return true;
    return dt == MP_DT_INT16 && (n->opcode == MP_OP_ADD || n->opcode == MP_OP_MUL) &&
           n->in[0]->info->quant.count == 0 && n->in[1]->info->quant.count == 0 &&
           n->out[0]->info->quant.count == 0;
}

/* The fused activation of this node (FLOOR_MOD has none). */
static int32_t binary_activation(const mp_node *n)
{
    return n->opcode == MP_OP_FLOOR_MOD ? MP_ACT_NONE : n->opt->activation;
}

/* The quantization of a, b and the output, and TensorFlow Lite's integer parameters from
 * it (its add.cc / sub.cc / mul.cc Prepare). */
static mp_status q8_binary_init(mp_node *n, q8_binary *q)
{
    for (int i = 0; i < 3; i++) {
        const mp_tensor *t = i < 2 ? n->in[i] : n->out[0];
        mp_status st = mp_node_qparams(n, t, &q->scale[i], &q->zero_point[i]);
        if (st != MP_OK)
            return st;
    }
    const float sa = q->scale[0], sb = q->scale[1], so = q->scale[2];
    q->a_offset = -q->zero_point[0];
    q->b_offset = -q->zero_point[1];
    q->out_offset = q->zero_point[2];
    if (!mp_activation_range_q(binary_activation(n), so, q->out_offset, n->out[0]->dtype, &q->lo,
                               &q->hi))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fused activation %d has no integer range",
                            binary_activation(n));
    bool ok;
    if (n->opcode == MP_OP_MUL) {
        q->a_mult = q->b_mult = q->a_shift = q->b_shift = 0;
        ok = mp_quantize_multiplier((double)(sa * sb / so), &q->out_mult, &q->out_shift);
    } else if (n->opcode == MP_OP_DIV) { /* div.cc: in float */
        q->a_mult = q->b_mult = q->a_shift = q->b_shift = 0;
        ok = mp_quantize_multiplier((double)(sa / (sb * so)), &q->out_mult, &q->out_shift);
        if (ok && q->out_shift > 23)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "scale %g / (%g * %g) is 2^23 or more: TensorFlow Lite's "
                                "division shifts out of range",
                                (double)sa, (double)sb, (double)so);
    } else {
        const double twice_max = (double)(2.0f * fmaxf(sa, sb));
        const double out_real = twice_max / (double)((float)(1 << Q8_ADD_LEFT_SHIFT) * so);
        ok = mp_quantize_multiplier((double)sa / twice_max, &q->a_mult, &q->a_shift) &&
             mp_quantize_multiplier((double)sb / twice_max, &q->b_mult, &q->b_shift) &&
             mp_quantize_multiplier(out_real, &q->out_mult, &q->out_shift);
        if (n->opcode == MP_OP_SUB)
            q->b_mult = -q->b_mult;
    }
    if (!ok)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "the scales of '%s' (%g), '%s' (%g) and '%s' (%g) give no finite "
                            "multiplier",
                            mp_tname(n->in[0]), (double)sa, mp_tname(n->in[1]), (double)sb,
                            mp_tname(n->out[0]), (double)so);
    return MP_OK;
}

static mp_status binary_infer(mp_node *n)
{
    if (n->n_in != 2 || n->n_out != 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 inputs and 1 output, got %d and %d",
                            n->n_in, n->n_out);
    if (!n->in[0] || !n->in[1] || !n->out[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "an input or the output is omitted (-1)");
    const mp_tensor *a = n->in[0], *b = n->in[1];
    mp_tensor *out = n->out[0];
    if (a->dtype != b->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
                            a->info->name, mp_dtype_name(a->dtype), b->info->name,
                            mp_dtype_name(b->dtype));
    const bool plain = binary_plain_small(n);
    if (a->dtype == MP_DT_INT16 && !plain) /* 16x8: int16_binary.c */
        return mp_i16_binary_infer(n);
    if (!plain && !binary_dtype_ok(a->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s (supported: f32, i32, i64, i8, u8, i16; "
                            "MUL also u32)",
                            a->info->name, mp_dtype_name(a->dtype));
    if (!plain && mp_dtype_is_q8(a->dtype) && n->opcode != MP_OP_ADD && n->opcode != MP_OP_SUB &&
        n->opcode != MP_OP_MUL && !(n->opcode == MP_OP_DIV && a->dtype == MP_DT_UINT8))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' is %s; only ADD, SUB and MUL (and DIV on u8) take 8-bit "
                            "quantized inputs",
                            a->info->name, mp_dtype_name(a->dtype));
    /* TensorFlow Lite gives the output of ADD, SUB and MUL the inputs' dtype whatever the
     * file declares (their Prepare sets output->type = input2->type). memprof follows it for
     * one case only: an output declared float32 that carries one scale and zero point, i.e.
     * quantized like 8-bit inputs (TensorFlow Lite's add_quantized test models have one).
     * Every other mismatch is refused. */
    if (!plain && mp_dtype_is_q8(a->dtype) && out->dtype == MP_DT_FLOAT32 &&
        out->info->quant.count == 1)
        out->dtype = a->dtype;
    if (out->dtype != a->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but the inputs are %s",
                            out->info->name, mp_dtype_name(out->dtype), mp_dtype_name(a->dtype));
    int32_t act = binary_activation(n);
    if (act < MP_ACT_NONE || act > MP_ACT_SIGN_BIT)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown fused activation %d", act);
    if (a->dtype != MP_DT_FLOAT32 && (act == MP_ACT_TANH || act == MP_ACT_SIGN_BIT))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "fused activation %s on integer tensors is not supported",
                            act == MP_ACT_TANH ? "TANH" : "SIGN_BIT");
    if (!plain && mp_dtype_is_q8(a->dtype)) {
        q8_binary q;
        mp_status st = q8_binary_init(n, &q);
        if (st != MP_OK)
            return st;
    }

    return mp_node_broadcast_output(n, 2, (const mp_tensor *const *)n->in);
}

/* Create the float32 operator of the node. */
static enum xnn_status binary_create_f32(const mp_node *n, xnn_operator_t *op)
{
    float lo, hi;
    if (!mp_activation_range(binary_activation(n), &lo, &hi)) {
        lo = -INFINITY; /* TANH / SIGN_BIT: applied after the operator in run */
        hi = INFINITY;
    }
    switch (n->opcode) {
    case MP_OP_ADD: return xnn_create_add_nd_f32(lo, hi, 0, op);
    case MP_OP_SUB: return xnn_create_subtract_nd_f32(lo, hi, 0, op);
    case MP_OP_MUL: return xnn_create_multiply_nd_f32(lo, hi, 0, op);
    default: return xnn_create_divide_nd_f32(lo, hi, 0, op);
    }
}

/* Create the 8-bit operator of the node (ADD, SUB or MUL, int8 or uint8). */
static enum xnn_status binary_create_q8(const mp_node *n, const q8_binary *q, xnn_operator_t *op)
{
    const float *s = q->scale;
    const int32_t *z = q->zero_point;
    if (n->in[0]->dtype == MP_DT_INT8) {
        switch (n->opcode) {
        case MP_OP_ADD:
            return xnn_create_add_nd_qs8((int8_t)z[0], s[0], (int8_t)z[1], s[1], (int8_t)z[2],
                                         s[2], (int8_t)q->lo, (int8_t)q->hi, 0, op);
        case MP_OP_SUB:
            return xnn_create_subtract_nd_qs8((int8_t)z[0], s[0], (int8_t)z[1], s[1],
                                              (int8_t)z[2], s[2], (int8_t)q->lo, (int8_t)q->hi,
                                              0, op);
        default:
            return xnn_create_multiply_nd_qs8((int8_t)z[0], s[0], (int8_t)z[1], s[1],
                                              (int8_t)z[2], s[2], (int8_t)q->lo, (int8_t)q->hi,
                                              0, op);
        }
    }
    switch (n->opcode) {
    case MP_OP_ADD:
        return xnn_create_add_nd_qu8((uint8_t)z[0], s[0], (uint8_t)z[1], s[1], (uint8_t)z[2],
                                     s[2], (uint8_t)q->lo, (uint8_t)q->hi, 0, op);
    case MP_OP_SUB:
        return xnn_create_subtract_nd_qu8((uint8_t)z[0], s[0], (uint8_t)z[1], s[1],
                                          (uint8_t)z[2], s[2], (uint8_t)q->lo, (uint8_t)q->hi, 0,
                                          op);
    default:
        return xnn_create_multiply_nd_qu8((uint8_t)z[0], s[0], (uint8_t)z[1], s[1],
                                          (uint8_t)z[2], s[2], (uint8_t)q->lo, (uint8_t)q->hi, 0,
                                          op);
    }
}

/* Bind shapes (r dimensions each) and pointers to the node's operator. */
static enum xnn_status binary_setup(const mp_node *n, xnn_operator_t op, size_t r,
                                    const size_t *sha, const size_t *shb)
{
    const void *a = n->in[0]->data, *b = n->in[1]->data;
    void *y = n->out[0]->data;
    switch (n->in[0]->dtype) {
    case MP_DT_INT8:
        switch (n->opcode) {
        case MP_OP_ADD: return xnn_setup_add_nd_qs8(op, r, sha, r, shb, a, b, y, n->pool);
        case MP_OP_SUB: return xnn_setup_subtract_nd_qs8(op, r, sha, r, shb, a, b, y, n->pool);
        default: return xnn_setup_multiply_nd_qs8(op, r, sha, r, shb, a, b, y, n->pool);
        }
    case MP_DT_UINT8:
        switch (n->opcode) {
        case MP_OP_ADD: return xnn_setup_add_nd_qu8(op, r, sha, r, shb, a, b, y, n->pool);
        case MP_OP_SUB: return xnn_setup_subtract_nd_qu8(op, r, sha, r, shb, a, b, y, n->pool);
        default: return xnn_setup_multiply_nd_qu8(op, r, sha, r, shb, a, b, y, n->pool);
        }
    default:
        switch (n->opcode) {
        case MP_OP_ADD: return xnn_setup_add_nd_f32(op, r, sha, r, shb, a, b, y, n->pool);
        case MP_OP_SUB: return xnn_setup_subtract_nd_f32(op, r, sha, r, shb, a, b, y, n->pool);
        case MP_OP_MUL: return xnn_setup_multiply_nd_f32(op, r, sha, r, shb, a, b, y, n->pool);
        default: return xnn_setup_divide_nd_f32(op, r, sha, r, shb, a, b, y, n->pool);
        }
    }
}

static mp_status binary_prepare(mp_node *n)
{
    const mp_tensor *a = n->in[0];
    const bool plain = binary_plain_small(n);
    if (a->dtype == MP_DT_INT16 && !plain) /* no state: all at the run */
        return MP_OK;
    const bool q8 = !plain && mp_dtype_is_q8(a->dtype);
    binary_state *s = mp_node_state(n, q8 ? sizeof *s : offsetof(binary_state, xnn_refused));
    if (!s)
        return MP_ERR_NOMEM;
    mp_bc_plan_init(&s->plan, 2, (const mp_tensor *const *)n->in);
    s->use_xnn = false;
    if (q8) {
        mp_status st = q8_binary_init(n, &s->q);
        if (st != MP_OK)
            return st;
    }
    if ((a->dtype != MP_DT_FLOAT32 && !q8) || n->opcode == MP_OP_FLOOR_MOD ||
        (q8 && n->opcode == MP_OP_DIV) ||
        s->plan.elements == 0 || s->plan.rank > XNN_MAX_TENSOR_DIMS || (q8 && s->xnn_refused))
        return MP_OK; /* plain C */

    enum xnn_status xs;
    if (!s->op) {
        xs = q8 ? binary_create_q8(n, &s->q, &s->op) : binary_create_f32(n, &s->op);
        xs = mp_xnn_created(xs, s->op);
        if (q8 && xs == xnn_status_unsupported_parameter) {
            s->op = NULL; /* scales XNNPACK does not take: TensorFlow Lite's integer C */
            s->xnn_refused = true;
            return MP_OK;
        }
        if (xs != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "create");
        }
    }
    /* Hand XNNPACK the merged shapes: the same broadcast, in at most 6 dimensions. */
    size_t sha[XNN_MAX_TENSOR_DIMS], shb[XNN_MAX_TENSOR_DIMS];
    for (int32_t i = 0; i < s->plan.rank; i++) {
        sha[i] = mp_bc_extent(&s->plan, 0, i);
        shb[i] = mp_bc_extent(&s->plan, 1, i);
    }
    xs = binary_setup(n, s->op, (size_t)s->plan.rank, sha, shb);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "setup");
    s->use_xnn = true;
    return MP_OK;
}

/* Plain-C 8-bit ADD, SUB (ADD with the second multiplier negated) and MUL. */
static void binary_run_q8(const mp_node *n, const binary_state *s)
{
    const mp_bc_plan *p = &s->plan;
    const bool mul = n->opcode == MP_OP_MUL;
    if (n->opcode == MP_OP_DIV) /* uint8 only (infer) */
        div_u8(p, &s->q, n->in[0]->data, n->in[1]->data, n->out[0]->data);
    else if (n->in[0]->dtype == MP_DT_INT8) {
        const int8_t *a = n->in[0]->data, *b = n->in[1]->data;
        int8_t *y = n->out[0]->data;
        (mul ? mul_s8 : add_s8)(p, &s->q, a, b, y);
    } else {
        const uint8_t *a = n->in[0]->data, *b = n->in[1]->data;
        uint8_t *y = n->out[0]->data;
        (mul ? mul_u8 : add_u8)(p, &s->q, a, b, y);
    }
}

/* TFLite refuses integer division by zero at run time; so do we (checked once over the
 * divisor before the loop, so the loop itself has no test for it). */
static mp_status check_divisor(mp_node *n, const mp_tensor *t)
{
    size_t count = mp_tensor_elements(t);
    if (t->dtype == MP_DT_UINT8 && n->opcode == MP_OP_DIV) { /* the real value 0: zero point */
        const uint8_t *v = t->data;
        const mp_quant *q = &t->info->quant;
        const int32_t zp = q->zero_point ? (int32_t)q->zero_point[0] : 0;
        for (size_t i = 0; i < count; i++)
            if (v[i] == zp)
                return mp_node_fail(n, MP_ERR_ARG,
                                    "division by zero: divisor '%s' holds its zero point %d",
                                    t->info->name, (int)zp);
    } else if (mp_tensor_find_int_zero(t) != SIZE_MAX)
        return mp_node_fail(n, MP_ERR_ARG, "integer division by zero: divisor '%s' contains 0",
                            t->info->name);
    return MP_OK;
}

/* Clamp integer results to a fused RELU / RELU6 / RELU_N1_TO_1 range, min(max(v, lo), hi)
 * with the bounds of TensorFlow Lite's CalculateActivationRange<T>: on uint32 RELU_N1_TO_1's
 * -1 becomes 2^32 - 1, so every result is 1, as there. */
static void clamp_int(void *data, mp_dtype dt, size_t count, int32_t act)
{
    int64_t lo, hi;
    switch (act) {
    case MP_ACT_RELU: lo = 0; hi = INT64_MAX; break;
    case MP_ACT_RELU6: lo = 0; hi = 6; break;
    case MP_ACT_RELU_N1_TO_1: lo = -1; hi = 1; break;
    default: return;
    }
    if (dt == MP_DT_INT32) {
        int32_t *v = data;
        for (size_t i = 0; i < count; i++)
            v[i] = v[i] < lo ? (int32_t)lo : (v[i] > hi ? (int32_t)hi : v[i]);
    } else if (dt == MP_DT_INT16) {
        int16_t *v = data;
        for (size_t i = 0; i < count; i++)
            v[i] = v[i] < lo ? (int16_t)lo : (v[i] > hi ? (int16_t)hi : v[i]);
    } else if (dt == MP_DT_UINT32) {
        const uint32_t ulo = (uint32_t)lo, uhi = hi > UINT32_MAX ? UINT32_MAX : (uint32_t)hi;
        uint32_t *v = data;
        for (size_t i = 0; i < count; i++) {
            const uint32_t m = v[i] > ulo ? v[i] : ulo;
            v[i] = m < uhi ? m : uhi;
        }
    } else {
        int64_t *v = data;
        for (size_t i = 0; i < count; i++)
            v[i] = v[i] < lo ? lo : (v[i] > hi ? hi : v[i]);
    }
}

static mp_status binary_run(mp_node *n)
{
    const bool plain = binary_plain_small(n);
    if (n->in[0]->dtype == MP_DT_INT16 && !plain)
        return mp_i16_binary_run(n);
    binary_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    const mp_bc_plan *p = &s->plan;
    if (p->elements == 0)
        return MP_OK;
    const mp_tensor *in_a = n->in[0], *in_b = n->in[1];
    mp_tensor *out = n->out[0];
    int32_t act = binary_activation(n);

    if (s->use_xnn) {
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        if (xs != xnn_status_success)
            return mp_node_xnn_fail(n, xs, "run");
        if (out->dtype == MP_DT_FLOAT32 && (act == MP_ACT_TANH || act == MP_ACT_SIGN_BIT))
            mp_apply_activation_f32(out->data, p->elements, act);
        return MP_OK;
    }
    if (!plain && mp_dtype_is_q8(in_a->dtype)) {
        if (n->opcode == MP_OP_DIV) {
            mp_status st = check_divisor(n, in_b);
            if (st != MP_OK)
                return st;
        }
        binary_run_q8(n, s);
        return MP_OK;
    }

    if (in_a->dtype == MP_DT_FLOAT32) {
        const float *a = in_a->data, *b = in_b->data;
        float *y = out->data;
        switch (n->opcode) {
        case MP_OP_ADD: add_f32(p, a, b, y); break;
        case MP_OP_SUB: sub_f32(p, a, b, y); break;
        case MP_OP_MUL: mul_f32(p, a, b, y); break;
        case MP_OP_DIV: div_f32(p, a, b, y); break;
        default: mod_f32(p, a, b, y); break;
        }
        mp_apply_activation_f32(y, p->elements, act);
        return MP_OK;
    }

    if (n->opcode == MP_OP_DIV || n->opcode == MP_OP_FLOOR_MOD) {
        mp_status st = check_divisor(n, in_b);
        if (st != MP_OK)
            return st;
    }
    if (plain) {
        const void *a = in_a->data, *b = in_b->data;
        void *y = out->data;
        if (n->opcode == MP_OP_FLOOR_MOD && in_a->dtype == MP_DT_INT8)
            mod_i8(p, a, b, y);
        else if (n->opcode == MP_OP_FLOOR_MOD)
            mod_i16(p, a, b, y);
        else if (in_a->dtype == MP_DT_UINT32)
            mul_u32(p, a, b, y);
        else
            (n->opcode == MP_OP_ADD ? add_i16 : mul_i16)(p, a, b, y);
    } else if (in_a->dtype == MP_DT_INT32) {
        const int32_t *a = in_a->data, *b = in_b->data;
        int32_t *y = out->data;
        switch (n->opcode) {
        case MP_OP_ADD: add_i32(p, a, b, y); break;
        case MP_OP_SUB: sub_i32(p, a, b, y); break;
        case MP_OP_MUL: mul_i32(p, a, b, y); break;
        case MP_OP_DIV: div_i32k(p, a, b, y); break;
        default: mod_i32(p, a, b, y); break;
        }
    } else {
        const int64_t *a = in_a->data, *b = in_b->data;
        int64_t *y = out->data;
        switch (n->opcode) {
        case MP_OP_ADD: add_i64(p, a, b, y); break;
        case MP_OP_SUB: sub_i64(p, a, b, y); break;
        case MP_OP_MUL: mul_i64(p, a, b, y); break;
        case MP_OP_DIV: div_i64k(p, a, b, y); break;
        default: mod_i64(p, a, b, y); break;
        }
    }
    clamp_int(out->data, out->dtype, p->elements, act);
    return MP_OK;
}

static void binary_release(mp_node *n)
{
    binary_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

#define BINARY_KERNEL(code)                                                               \
    {                                                                                     \
        .opcode = (code), .optional_inputs = 0, .min_inputs = 2, .max_inputs = 2,         \
        .n_outputs = 1, .infer = binary_infer, .prepare = binary_prepare,                 \
        .run = binary_run, .release = binary_release                                      \
    }

const mp_kernel mp_kernels_binary[] = {
    BINARY_KERNEL(MP_OP_ADD), BINARY_KERNEL(MP_OP_SUB),       BINARY_KERNEL(MP_OP_MUL),
    BINARY_KERNEL(MP_OP_DIV), BINARY_KERNEL(MP_OP_FLOOR_MOD), {.opcode = -1},
};
