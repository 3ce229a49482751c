/* Kernels: elementwise math of two broadcast inputs (MAXIMUM, MINIMUM, SQUARED_DIFFERENCE,
 * POW, PRELU, FLOOR_DIV, ATAN2, BITWISE_XOR, RIGHT_SHIFT) after TensorFlow Lite's
 * maximum_minimum.cc, squared_difference.cc, pow.cc, PRELU (activations.cc), floor_div.cc,
 * atan2.cc, bitwise_xor.cc and right_shift.cc, and ADD_N (add_n.cc, any number of inputs of
 * one shape; its own section at the end). NumPy broadcasting over broadcast.h's plan; the
 * output has the inputs' dtype (PRELU: the input's and alpha's, which must be equal).
 *
 * float32: MAXIMUM, MINIMUM and SQUARED_DIFFERENCE run on XNNPACK's maximum_nd /
 * minimum_nd / squared_difference_nd (the merged shapes handed over, as binary.c does), and
 * PRELU on prelu_nc when alpha is a constant with one slope per channel of the input's last
 * dimension (the output then has the input's shape); plain C otherwise, and for inputs that
 * are constants (XNNPACK may read past their end). MAXIMUM is x > w ? x : w and MINIMUM
 * x < w ? x : w as TensorFlow Lite (XNNPACK's max / min instructions may pick the other
 * operand of a NaN); POW is powf; PRELU is x >= 0 ? x : x * alpha; FLOOR_DIV is
 * floor(x / w) with the quotient in double, as TensorFlow Lite (plain C); ATAN2 is
 * atan2f(y, x) of input 0 (y) and input 1 (x), float32, or atan2 on float64 (atan2.cc's two
 * dtypes; TensorFlow Lite asks equal ranks and reads the elements pairwise; broadcasting is
 * its generalization).
 *
 * BITWISE_XOR and RIGHT_SHIFT take int8, int16, int32, uint8, uint16 and uint32. RIGHT_SHIFT
 * shifts by the second input clamped to [0, bits - 1] (right_shift.cc), arithmetically for
 * the signed dtypes (a negative value keeps its sign: -7 >> 1 = -4).
 *
 * Integers: MAXIMUM and MINIMUM on int32, int64, int16, int8 and uint8 compare the stored
 * values (TensorFlow Lite does not rescale them either); SQUARED_DIFFERENCE on int32 and POW
 * on int32 (exponentiation by squaring; a negative exponent is an error at run time, as in
 * TensorFlow Lite) wrap as two's complement. FLOOR_DIV on int32, int16 and int8 (the newest
 * floor_div.cc's integer types, the stored values whatever their quantization) rounds the
 * quotient toward minus infinity (-7 / 2 = -4, TensorFlow Lite's floor of the quotient in
 * double, exact for these widths); a zero divisor fails the run, as in TensorFlow Lite; the
 * one quotient past the type, MIN / -1, wraps to MIN (as the conversion of TensorFlow Lite's
 * double back to the type does on x86).
 * int8 SQUARED_DIFFERENCE and int8 / uint8 PRELU are TensorFlow Lite's reference integer
 * kernels, bit for bit: SQUARED_DIFFERENCE shifts both centred inputs left by 7, scales
 * each by its scale over twice the larger input scale, squares the difference and scales it
 * by (2 max scale)^2 / (2^14 output scale), which must be below 1; PRELU scales a centred
 * input >= 0 by in_scale / out_scale and a negative one times the centred alpha by
 * in_scale * alpha_scale / out_scale (ratios in float, as TensorFlow Lite), plus the output
 * zero point, saturated. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/broadcast.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

/* The integer parameters of int8 SQUARED_DIFFERENCE and 8-bit PRELU. */
typedef struct bm_q8 {
    int32_t a_off, b_off, out_off; /* -zp(a), -zp(b), zp(output) */
    int32_t m1, m2, m_out;         /* SQUARED_DIFFERENCE: a, b, output; PRELU: m1, m2 */
    int s1, s2, s_out;
    int32_t lo, hi;                /* the output dtype's range */
} bm_q8;

#define BM_SQDIFF_LEFT_SHIFT 7

static inline int32_t bm_clamp(const bm_q8 *q, int32_t v)
{
    return v < q->lo ? q->lo : (v > q->hi ? q->hi : v);
}

/* Centred inputs of at most 9 bits shifted by 7 and scaled by multipliers <= 1/2: the
 * difference stays within 2^16, its square within 2^32 as an unsigned product. */
static inline int32_t q_sqdiff(const bm_q8 *q, int32_t x, int32_t w)
{
    int32_t sx = mp_multiply_by_quantized_multiplier((x + q->a_off) * (1 << BM_SQDIFF_LEFT_SHIFT),
                                                     q->m1, q->s1);
    int32_t sw = mp_multiply_by_quantized_multiplier((w + q->b_off) * (1 << BM_SQDIFF_LEFT_SHIFT),
                                                     q->m2, q->s2);
    int32_t d = sx - sw;
    int32_t sq = (int32_t)((uint32_t)d * (uint32_t)d);
    return bm_clamp(q, mp_multiply_by_quantized_multiplier(sq, q->m_out, q->s_out) + q->out_off);
}

static inline int32_t q_prelu(const bm_q8 *q, int32_t x, int32_t al)
{
    int32_t v = x + q->a_off;
    int32_t r = v >= 0 ? mp_multiply_by_quantized_multiplier(v, q->m1, q->s1)
                       : mp_multiply_by_quantized_multiplier(v * (al + q->b_off), q->m2, q->s2);
    return bm_clamp(q, r + q->out_off);
}

/* Exponentiation by squaring on unsigned values (wrapping); exponents are >= 0. */
static inline int32_t pow_i32(int32_t base, int32_t e)
{
    uint32_t r = 1, b = (uint32_t)base;
    for (uint32_t k = (uint32_t)e; k; k >>= 1, b *= b)
        if (k & 1)
            r *= b;
    return (int32_t)r;
}

/* floor(x / w) in the integers (w != 0: run checks). */
static inline int32_t floor_div_i32(int32_t x, int32_t w)
{
    if (w == -1)
        return (int32_t)(0u - (uint32_t)x);
    int32_t q = x / w;
    return (x % w != 0 && ((x < 0) != (w < 0))) ? q - 1 : q;
}

/* x >> s for a signed x, the shift clamped to [0, max_shift] as right_shift.cc clamps it,
 * arithmetic (the sign fills in) whatever the compiler does with negative values. */
static inline int32_t shift_right_signed(int32_t x, int32_t s, int32_t max_shift)
{
    s = s < 0 ? 0 : (s > max_shift ? max_shift : s);
    return x < 0 ? ~(~x >> s) : x >> s;
}

typedef void (*bm_fn)(const mp_bc_plan *p, const void *a, const void *b, void *y,
                      const bm_q8 *q);

#define BM_KERNEL(NAME, T, EXPR)                                                          \
    static void NAME(const mp_bc_plan *p, const void *va, const void *vb, void *vy,       \
                     const bm_q8 *q)                                                      \
    {                                                                                     \
        const T *restrict a = va, *restrict b = vb;                                       \
        T *restrict y = vy;                                                               \
        (void)q;                                                                          \
        MP_BC_LOOP2(T, T, EXPR);                                                          \
    }

BM_KERNEL(atan2_f64, double, atan2(x, w))
BM_KERNEL(max_f32, float, x > w ? x : w)
BM_KERNEL(max_i32, int32_t, x > w ? x : w)
BM_KERNEL(max_i64, int64_t, x > w ? x : w)
BM_KERNEL(max_i16, int16_t, x > w ? x : w)
BM_KERNEL(max_i8, int8_t, x > w ? x : w)
BM_KERNEL(max_u8, uint8_t, x > w ? x : w)
BM_KERNEL(min_f32, float, x < w ? x : w)
BM_KERNEL(min_i32, int32_t, x < w ? x : w)
BM_KERNEL(min_i64, int64_t, x < w ? x : w)
BM_KERNEL(min_i16, int16_t, x < w ? x : w)
BM_KERNEL(min_i8, int8_t, x < w ? x : w)
BM_KERNEL(min_u8, uint8_t, x < w ? x : w)
BM_KERNEL(sqdiff_f32, float, (x - w) * (x - w))
BM_KERNEL(sqdiff_i32, int32_t,
          (int32_t)(((uint32_t)x - (uint32_t)w) * ((uint32_t)x - (uint32_t)w)))
BM_KERNEL(sqdiff_s8, int8_t, (int8_t)q_sqdiff(q, x, w))
BM_KERNEL(pow_f32, float, powf(x, w))
BM_KERNEL(pow_i32k, int32_t, pow_i32(x, w))
BM_KERNEL(prelu_f32, float, x >= 0.0f ? x : x * w)
BM_KERNEL(prelu_s8, int8_t, (int8_t)q_prelu(q, x, w))
BM_KERNEL(prelu_u8, uint8_t, (uint8_t)q_prelu(q, x, w))
BM_KERNEL(floordiv_f32, float, (float)floor((double)x / (double)w))
BM_KERNEL(floordiv_i32, int32_t, floor_div_i32(x, w))
BM_KERNEL(floordiv_i16, int16_t, (int16_t)floor_div_i32(x, w))
BM_KERNEL(floordiv_i8, int8_t, (int8_t)floor_div_i32(x, w))
BM_KERNEL(atan2_f32, float, atan2f(x, w))
BM_KERNEL(xor_i32, int32_t, x ^ w)
BM_KERNEL(xor_i16, int16_t, (int16_t)(x ^ w))
BM_KERNEL(xor_i8, int8_t, (int8_t)(x ^ w))
BM_KERNEL(xor_u8, uint8_t, (uint8_t)(x ^ w))
BM_KERNEL(xor_u16, uint16_t, (uint16_t)(x ^ w))
BM_KERNEL(xor_u32, uint32_t, x ^ w)
BM_KERNEL(rshift_i32, int32_t, (int32_t)shift_right_signed(x, w, 31))
BM_KERNEL(rshift_i16, int16_t, (int16_t)shift_right_signed(x, w, 15))
BM_KERNEL(rshift_i8, int8_t, (int8_t)shift_right_signed(x, w, 7))
BM_KERNEL(rshift_u8, uint8_t, (uint8_t)(x >> (w > 7 ? 7 : w)))
BM_KERNEL(rshift_u16, uint16_t, (uint16_t)(x >> (w > 15 ? 15 : w)))
BM_KERNEL(rshift_u32, uint32_t, x >> (w > 31 ? 31 : w))

/* Column of bm_op.fn per dtype. */
enum { BM_F32, BM_I32, BM_I64, BM_I16, BM_S8, BM_U8, BM_U16, BM_U32, BM_F64, BM_NDT };

static int bm_dtype_index(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_FLOAT32: return BM_F32;
    case MP_DT_INT32: return BM_I32;
    case MP_DT_INT64: return BM_I64;
    case MP_DT_INT16: return BM_I16;
    case MP_DT_INT8: return BM_S8;
    case MP_DT_UINT8: return BM_U8;
    case MP_DT_UINT16: return BM_U16;
    case MP_DT_UINT32: return BM_U32;
    case MP_DT_FLOAT64: return BM_F64;
    default: return -1;
    }
}

typedef struct bm_op {
    int32_t opcode;
    bm_fn fn[BM_NDT];       /* NULL: dtype not supported */
    const char *dtype_list; /* for messages */
} bm_op;

static const bm_op bm_ops[] = {
    {MP_OP_MAXIMUM, {max_f32, max_i32, max_i64, max_i16, max_i8, max_u8},
     "f32, i32, i64, i16, i8, u8"},
    {MP_OP_MINIMUM, {min_f32, min_i32, min_i64, min_i16, min_i8, min_u8},
     "f32, i32, i64, i16, i8, u8"},
    {MP_OP_SQUARED_DIFFERENCE, {[BM_F32] = sqdiff_f32, [BM_I32] = sqdiff_i32, [BM_S8] = sqdiff_s8},
     "f32, i32, i8"},
    {MP_OP_POW, {[BM_F32] = pow_f32, [BM_I32] = pow_i32k}, "f32, i32"},
    {MP_OP_PRELU, {[BM_F32] = prelu_f32, [BM_S8] = prelu_s8, [BM_U8] = prelu_u8},
     "f32, i8, u8"},
    {MP_OP_FLOOR_DIV,
     {[BM_F32] = floordiv_f32, [BM_I32] = floordiv_i32, [BM_I16] = floordiv_i16,
      [BM_S8] = floordiv_i8},
     "f32, i32, i16, i8"},
    {MP_OP_ATAN2, {[BM_F32] = atan2_f32, [BM_F64] = atan2_f64}, "f32, f64"},
    {MP_OP_BITWISE_XOR,
     {[BM_I32] = xor_i32, [BM_I16] = xor_i16, [BM_S8] = xor_i8, [BM_U8] = xor_u8,
      [BM_U16] = xor_u16, [BM_U32] = xor_u32},
     "i8, i16, i32, u8, u16, u32"},
    {MP_OP_RIGHT_SHIFT,
     {[BM_I32] = rshift_i32, [BM_I16] = rshift_i16, [BM_S8] = rshift_i8, [BM_U8] = rshift_u8,
      [BM_U16] = rshift_u16, [BM_U32] = rshift_u32},
     "i8, i16, i32, u8, u16, u32"},
};

static const bm_op *bm_find(int32_t opcode)
{
    for (size_t i = 0; i < sizeof bm_ops / sizeof bm_ops[0]; i++)
        if (bm_ops[i].opcode == opcode)
            return &bm_ops[i];
    return NULL;
}

typedef struct bm_state {
    xnn_operator_t op; /* float32 on XNNPACK; created once */
    bool use_xnn;      /* the current shapes and pointers are bound to op */
    bool prelu_nc;     /* op is a prelu_nc (else an _nd operator) */
    mp_bc_plan plan;
    bm_q8 q;
} bm_state;

/* The quantized parameters of int8 SQUARED_DIFFERENCE and 8-bit PRELU (TensorFlow Lite's
 * Prepare), checked. */
static mp_status bm_q8_init(mp_node *n, bm_q8 *q)
{
    float s[3];
    int32_t z[3];
    for (int i = 0; i < 3; i++) {
        mp_status st = mp_node_qparams(n, i < 2 ? n->in[i] : n->out[0], &s[i], &z[i]);
        if (st != MP_OK)
            return st;
    }
    mp_quant_dtype_range(n->out[0]->dtype, &q->lo, &q->hi);
    q->a_off = -z[0];
    q->b_off = -z[1];
    q->out_off = z[2];
    bool ok;
    if (n->opcode == MP_OP_PRELU) {
        ok = mp_quantize_multiplier((double)(s[0] / s[2]), &q->m1, &q->s1) &&
             mp_quantize_multiplier((double)(s[0] * s[1] / s[2]), &q->m2, &q->s2);
    } else {
        const double twice_max = 2.0 * (double)(s[0] > s[1] ? s[0] : s[1]);
        const double out_real = twice_max * twice_max /
                                ((double)(1 << (2 * BM_SQDIFF_LEFT_SHIFT)) * (double)s[2]);
        if (!(out_real < 1.0))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "output scale %g of '%s' is too small for the input scales %g and "
                                "%g (multiplier %g, must be below 1)",
                                (double)s[2], mp_tname(n->out[0]), (double)s[0], (double)s[1],
                                out_real);
        ok = mp_quantize_multiplier((double)s[0] / twice_max, &q->m1, &q->s1) &&
             mp_quantize_multiplier((double)s[1] / twice_max, &q->m2, &q->s2) &&
             mp_quantize_multiplier(out_real, &q->m_out, &q->s_out);
    }
    if (!ok)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "the scales of '%s', '%s' and '%s' give no "
                            "finite multiplier", mp_tname(n->in[0]), mp_tname(n->in[1]),
                            mp_tname(n->out[0]));
    return MP_OK;
}

static bool bm_needs_q8(const mp_node *n)
{
    const mp_dtype dt = n->in[0]->dtype;
    return mp_dtype_is_q8(dt) && (n->opcode == MP_OP_PRELU || n->opcode == MP_OP_SQUARED_DIFFERENCE);
}

static mp_status bm_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const bm_op *o = bm_find(n->opcode);
    const mp_tensor *a = n->in[0], *b = n->in[1];
    int di = bm_dtype_index(a->dtype);
    if (di < 0 || !o->fn[di])
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: %s)",
                            mp_tname(a), mp_dtype_name(a->dtype), o->dtype_list);
    if (b->dtype != a->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "inputs '%s' (%s) and '%s' (%s) differ in dtype",
                            mp_tname(a), mp_dtype_name(a->dtype), mp_tname(b),
                            mp_dtype_name(b->dtype));
    if ((st = mp_node_check_same_dtype(n, a, n->out[0])) != MP_OK)
        return st;
    if (bm_needs_q8(n)) {
        bm_q8 q;
        if ((st = bm_q8_init(n, &q)) != MP_OK)
            return st;
    }
    return mp_node_broadcast_output(n, 2, (const mp_tensor *const *)n->in);
}

/* PRELU on XNNPACK's prelu_nc: a constant alpha with one slope per channel of the input's
 * last dimension (every other dimension of alpha 1, alpha's rank at most the input's). */
static bool bm_prelu_per_channel(const mp_node *n)
{
    const mp_tensor *x = n->in[0], *al = n->in[1];
    if (!al->is_const || x->rank < 1 || al->rank > x->rank || al->rank < 1)
        return false;
    for (int32_t i = 0; i + 1 < al->rank; i++)
        if (al->dims[i] != 1)
            return false;
    return al->dims[al->rank - 1] == x->dims[x->rank - 1];
}

static enum xnn_status bm_xnn_create(const mp_node *n, bool prelu_nc, xnn_operator_t *op)
{
    switch (n->opcode) {
    case MP_OP_MAXIMUM: return xnn_create_maximum_nd_f32(0, op);
    case MP_OP_MINIMUM: return xnn_create_minimum_nd_f32(0, op);
    case MP_OP_SQUARED_DIFFERENCE: return xnn_create_squared_difference_nd_f32(0, op);
    default: {
        if (!prelu_nc)
            return xnn_status_unsupported_parameter;
        const size_t c = (size_t)n->in[0]->dims[n->in[0]->rank - 1];
        return xnn_create_prelu_nc_f32(c, c, c, n->in[1]->data, 0, op);
    }
    }
}

static enum xnn_status bm_xnn_setup(const mp_node *n, bm_state *s)
{
    const float *a = n->in[0]->data, *b = n->in[1]->data;
    float *y = n->out[0]->data;
    if (n->opcode == MP_OP_PRELU) {
        const mp_tensor *x = n->in[0];
        const size_t c = (size_t)x->dims[x->rank - 1];
        return xnn_setup_prelu_nc_f32(s->op, mp_tensor_elements(x) / c, a, y, n->pool);
    }
    const mp_bc_plan *p = &s->plan;
    size_t r = (size_t)p->rank, sha[XNN_MAX_TENSOR_DIMS], shb[XNN_MAX_TENSOR_DIMS];
    for (int32_t i = 0; i < p->rank; i++) {
        sha[i] = mp_bc_extent(p, 0, i);
        shb[i] = mp_bc_extent(p, 1, i);
    }
    switch (n->opcode) {
    case MP_OP_MAXIMUM: return xnn_setup_maximum_nd_f32(s->op, r, sha, r, shb, a, b, y, n->pool);
    case MP_OP_MINIMUM: return xnn_setup_minimum_nd_f32(s->op, r, sha, r, shb, a, b, y, n->pool);
    default:
        return xnn_setup_squared_difference_nd_f32(s->op, r, sha, r, shb, a, b, y, n->pool);
    }
}

static mp_status bm_prepare(mp_node *n)
{
    bm_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    const mp_tensor *a = n->in[0], *b = n->in[1];
    mp_bc_plan_init(&s->plan, 2, (const mp_tensor *const *)n->in);
    s->use_xnn = false;
    if (bm_needs_q8(n))
        return bm_q8_init(n, &s->q);
    const bool prelu_nc = n->opcode == MP_OP_PRELU && bm_prelu_per_channel(n);
    if (a->dtype != MP_DT_FLOAT32 || n->opcode == MP_OP_POW || n->opcode == MP_OP_FLOOR_DIV ||
        n->opcode == MP_OP_ATAN2 ||
        s->plan.elements == 0 ||
        a->is_const || (b->is_const && n->opcode != MP_OP_PRELU) ||
        (n->opcode == MP_OP_PRELU && !prelu_nc) ||
        (n->opcode != MP_OP_PRELU && s->plan.rank > XNN_MAX_TENSOR_DIMS))
        return MP_OK; /* plain C */
    enum xnn_status xs;
    if (!s->op || s->prelu_nc != prelu_nc) {
        mp_xnn_delete(&s->op);
        xs = bm_xnn_create(n, prelu_nc, &s->op);
        xs = mp_xnn_created(xs, s->op);
        if (xs != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "create");
        }
        s->prelu_nc = prelu_nc;
    }
    if ((xs = bm_xnn_setup(n, s)) != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "setup");
    s->use_xnn = true;
    return MP_OK;
}

static mp_status bm_run(mp_node *n)
{
    const bm_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->plan.elements == 0)
        return MP_OK;
    if (s->use_xnn) {
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        return xs == xnn_status_success ? MP_OK : mp_node_xnn_fail(n, xs, "run");
    }
    const mp_tensor *a = n->in[0], *b = n->in[1];
    if (n->opcode == MP_OP_POW && a->dtype == MP_DT_INT32) {
        const int32_t *e = b->data;
        for (size_t i = 0, count = mp_tensor_elements(b); i < count; i++)
            if (e[i] < 0)
                return mp_node_fail(n, MP_ERR_ARG,
                                    "int32 POW of a negative exponent: '%s' element %zu is %d",
                                    mp_tname(b), i, e[i]);
    }
    if (n->opcode == MP_OP_FLOOR_DIV && a->dtype != MP_DT_FLOAT32) {
        const size_t i = mp_tensor_find_int_zero(b);
        if (i != SIZE_MAX)
            return mp_node_fail(n, MP_ERR_ARG, "division by zero: divisor '%s' element %zu is 0",
                                mp_tname(b), i);
    }
    bm_find(n->opcode)->fn[bm_dtype_index(a->dtype)](&s->plan, a->data, b->data, n->out[0]->data,
                                                      &s->q);
    return MP_OK;
}

static void bm_release(mp_node *n)
{
    bm_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

/* ---- ADD_N ------------------------------------------------------------------------------ */

/* ADD_N (add_n.cc): two or more float32 or int32 inputs of one shape (no broadcasting, as
 * TensorFlow Lite), the output their elementwise sum taken in input order from 0 (the
 * reference AddN's loop); int32 wraps as two's complement. */
static mp_status addn_infer(mp_node *n)
{
    if (n->n_in < 2)
        return mp_node_fail(n, MP_ERR_FORMAT, "expects at least 2 inputs, has %d", n->n_in);
    mp_status st = mp_node_check_io(n, 2, n->n_in, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *a = n->in[0];
    if (a->dtype != MP_DT_FLOAT32 && a->dtype != MP_DT_INT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32, i32)",
                            mp_tname(a), mp_dtype_name(a->dtype));
    char s1[96], s2[96];
    for (int32_t i = 1; i < n->n_in; i++) {
        const mp_tensor *b = n->in[i];
        if (b->dtype != a->dtype)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "inputs '%s' (%s) and '%s' (%s) differ in "
                                "dtype", mp_tname(a), mp_dtype_name(a->dtype), mp_tname(b),
                                mp_dtype_name(b->dtype));
        if (!mp_tensor_same_shape(a, b))
            return mp_node_fail(n, MP_ERR_SHAPE, "inputs '%s' %s and '%s' %s differ in shape",
                                mp_tname(a), mp_shape_str(a->rank, a->dims, s1, sizeof s1),
                                mp_tname(b), mp_shape_str(b->rank, b->dims, s2, sizeof s2));
    }
    if ((st = mp_node_check_same_dtype(n, a, n->out[0])) != MP_OK)
        return st;
    return mp_node_set_output_shape(n, a->rank, a->dims);
}

static mp_status addn_run(mp_node *n)
{
    const mp_tensor *out = n->out[0];
    const size_t count = mp_tensor_elements(out);
    for (int32_t j = 0; j < n->n_in; j++)
        if (mp_tensor_elements(n->in[j]) != count || n->in[j]->dtype != out->dtype)
            return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' does not match output '%s'",
                                mp_tname(n->in[j]), mp_tname(out));
    if (out->dtype == MP_DT_FLOAT32) {
        float *y = out->data;
        for (size_t i = 0; i < count; i++) {
            float x = 0.0f;
            for (int32_t j = 0; j < n->n_in; j++)
                x += ((const float *)n->in[j]->data)[i];
            y[i] = x;
        }
    } else {
        int32_t *y = out->data;
        for (size_t i = 0; i < count; i++) {
            uint32_t x = 0;
            for (int32_t j = 0; j < n->n_in; j++)
                x += (uint32_t)((const int32_t *)n->in[j]->data)[i];
            y[i] = (int32_t)x;
        }
    }
    return MP_OK;
}

#define BM_TABLE_KERNEL(code)                                                             \
    {                                                                                     \
        .opcode = (code), .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,               \
        .infer = bm_infer, .prepare = bm_prepare, .run = bm_run, .release = bm_release    \
    }

const mp_kernel mp_kernels_binary_math[] = {
    BM_TABLE_KERNEL(MP_OP_MAXIMUM), BM_TABLE_KERNEL(MP_OP_MINIMUM),
    BM_TABLE_KERNEL(MP_OP_SQUARED_DIFFERENCE), BM_TABLE_KERNEL(MP_OP_POW),
    BM_TABLE_KERNEL(MP_OP_PRELU), BM_TABLE_KERNEL(MP_OP_FLOOR_DIV),
    BM_TABLE_KERNEL(MP_OP_ATAN2), BM_TABLE_KERNEL(MP_OP_BITWISE_XOR),
    BM_TABLE_KERNEL(MP_OP_RIGHT_SHIFT),
    {.opcode = MP_OP_ADD_N, .min_inputs = 2, .max_inputs = INT32_MAX, .n_outputs = 1,
     .infer = addn_infer, .run = addn_run},
    {.opcode = -1},
};
