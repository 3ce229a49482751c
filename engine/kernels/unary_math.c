/* Kernels: elementwise math of one input (ABS, NEG, SQUARE, SQRT, RSQRT, EXP, LOG,
 * LEAKY_RELU, GELU, FLOOR, CEIL, ROUND, SIN, COS, ELU, SIGN, RELU_0_TO_1), one table-driven
 * family after TensorFlow Lite's elementwise.cc, neg.cc, exp.cc, leaky_relu.cc, gelu.cc,
 * floor.cc, ceil.cc, round.cc, sign.cc and activations.cc (ELU, RELU_0_TO_1).
 *
 * Each operator is one row of um_ops: its float32 function (TensorFlow Lite's: 1 / sqrtf(x)
 * for RSQRT, x > 0 ? x : alpha * x for LEAKY_RELU, GELU's erfc form or, with `approximate`,
 * its tanh form; ROUND half to even (rintf under the default rounding mode, as TensorFlow
 * Lite's RoundToNearest); ELU x < 0 ? expm1f(x) : x; SIN, COS sinf, cosf; SIGN 1, -1 or 0
 * (NaN and -0 give 0); RELU_0_TO_1 min(max(0, x), 1), NaN giving 0), optionally the
 * XNNPACK operator computing the same (abs, negate, square, square_root, leaky_relu, floor,
 * ceiling, bankers_rounding: exact operations, equal to the C function up to the sign of a
 * zero), the integer dtypes it takes, and its 8-bit formula. XNNPACK runs a float node whose
 * input is not a constant (XNNPACK may read past the end of its input, which a mapped file
 * does not promise); plain C runs everything else.
 *
 * int32 / int64 (ABS: int32; NEG: both) wrap as two's complement: ABS and NEG of the most
 * negative value give it back. SIGN on int32 and on float64 (sign.cc) is 1, -1 or 0.
 * int8 / uint8, bit-exact with TensorFlow Lite's reference integer kernels, through a
 * 256-entry table filled once at prepare (one lookup per element when running):
 *   ABS (int8): |q - zp_in|, rescaled by in_scale / out_scale (MultiplyByQuantizedMultiplier)
 *     when the scales differ, plus zp_out, saturated;
 *   NEG (int8): zp_in + zp_out - q saturated, input and output scales equal (as TFLite);
 *   LEAKY_RELU (int8, uint8): q - zp_in scaled by in_scale / out_scale when >= 0, else by
 *     in_scale * alpha / out_scale (both ratios in float, as TFLite), plus zp_out, saturated;
 *   GELU (int8, uint8), EXP (int8), LOG (int8), ELU (int8): TensorFlow Lite's lookup table
 *     (LUTPopulate / PopulateLookupTable):
 *     dequantize in float, the float function (LOG of a value <= 0 gives the output's lowest
 *     real value, as TensorFlow Lite), times 1 / out_scale rounded half away from zero, plus
 *     zp_out in float, saturated (an infinite or huge value to the bound on its side);
 *   RSQRT (int8, elementwise.cc): q - zp_in = 0 gives 127; else 1 / sqrt(q - zp_in) as
 *     GetInvSqrtQuantizedMultiplierExp's multiplier and shift, applied to 1 with 20 more bits
 *     of left shift, then rescaled by 1 / (sqrtf(in_scale) * out_scale) with 20 bits less
 *     (MultiplyByQuantizedMultiplier both), plus zp_out, saturated;
 *   SQRT (int8, elementwise.cc): sqrtf(in_scale * (q - zp_in)) / out_scale truncated toward
 *     zero, plus zp_out, saturated.
 *   RELU_0_TO_1 (int8, uint8; activations.cc QuantizedReluX(0, 1)): zp_out +
 *     MultiplyByQuantizedMultiplier(q - zp_in) by in_scale / out_scale (the ratio in float),
 *     clamped to [zp_out, zp_out + round(1 / out_scale)] within the dtype;
 *   RSQRT and SQRT of an input below its zero point (a negative real value) fail the run,
 *   as TensorFlow Lite's do.
 * int16 (16x8) LEAKY_RELU, ABS, EXP, LOG, RSQRT, SQRT: int16_activation.c (zero points
 * 0). */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <stddef.h>
#include <xnnpack.h>

#include "engine/kernels/int16.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

/* An 8-bit node's quantization and the integer parameters of its formula. */
typedef struct um_q8 {
    float si, so;
    int32_t zi, zo;
    int32_t m1, m2; /* ABS: the rescale (m1); LEAKY_RELU: identity (m1) and alpha (m2);
                       RSQRT: 1 / (sqrt(in_scale) * out_scale) (m1) */
    int s1, s2;
    bool rescale;   /* ABS: the scales differ */
    const mp_op_options *opt;
} um_q8;

typedef enum xnn_status (*um_xnn_create)(size_t, size_t, size_t, uint32_t, xnn_operator_t *);
typedef enum xnn_status (*um_xnn_setup)(xnn_operator_t, size_t, const float *, float *,
                                        pthreadpool_t);

/* dtype bits of um_op.dtypes */
#define UM_I32 1u
#define UM_I64 2u
#define UM_S8 4u
#define UM_U8 8u
#define UM_F64 16u

typedef struct um_op {
    int32_t opcode;
    float (*f32)(float x, const mp_op_options *o);
    um_xnn_create xnn_create;  /* NULL: none (LEAKY_RELU: um_create_leaky) */
    um_xnn_setup xnn_setup;
    uint32_t dtypes;           /* besides float32 */
    int64_t (*i64)(int64_t x); /* integer dtypes: the result, wrapped to the dtype */
    int32_t (*q8)(const um_q8 *q, int32_t v); /* 8-bit: unclamped output for input v */
    const char *dtype_list;    /* for messages */
    double (*f64)(double x);   /* float64 (SIGN, as sign.cc); NULL: not taken */
} um_op;

static float f_abs(float x, const mp_op_options *o) { (void)o; return fabsf(x); }
static float f_neg(float x, const mp_op_options *o) { (void)o; return -x; }
static float f_square(float x, const mp_op_options *o) { (void)o; return x * x; }
static float f_sqrt(float x, const mp_op_options *o) { (void)o; return sqrtf(x); }
static float f_rsqrt(float x, const mp_op_options *o) { (void)o; return 1.0f / sqrtf(x); }
static float f_exp(float x, const mp_op_options *o) { (void)o; return expf(x); }
static float f_log(float x, const mp_op_options *o) { (void)o; return logf(x); }
static float f_leaky(float x, const mp_op_options *o) { return x > 0.0f ? x : x * o->alpha; }
static float f_floor(float x, const mp_op_options *o) { (void)o; return floorf(x); }
static float f_ceil(float x, const mp_op_options *o) { (void)o; return ceilf(x); }
static float f_round(float x, const mp_op_options *o) { (void)o; return rintf(x); }
static float f_sin(float x, const mp_op_options *o) { (void)o; return sinf(x); }
static float f_cos(float x, const mp_op_options *o) { (void)o; return cosf(x); }
static float f_elu(float x, const mp_op_options *o) { (void)o; return x < 0.0f ? expm1f(x) : x; }
static float f_sign(float x, const mp_op_options *o)
{
    (void)o;
    return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
}
static float f_relu01(float x, const mp_op_options *o)
{
    (void)o;
    const float t = 0.0f < x ? x : 0.0f; /* std::max(0, x): NaN gives 0 */
    return 1.0f < t ? 1.0f : t;
}

/* GELU: 0.5 x (1 + erf(x / sqrt 2)), written with erfc (no cancellation for large negative
 * x); approximate: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
static float f_gelu(float x, const mp_op_options *o)
{
    if (o->approximate) {
        const float k = 0.7978845608028654f; /* sqrt(2 / pi) */
        return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
    }
    return 0.5f * x * erfcf(x * -0.70710678118654752f);
}

/* Two's complement results computed on unsigned values (no overflow). */
static int64_t i_abs(int64_t x) { return x < 0 ? (int64_t)(0u - (uint64_t)x) : x; }
static int64_t i_neg(int64_t x) { return (int64_t)(0u - (uint64_t)x); }
static int64_t i_sign(int64_t x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
static double d_sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

static int32_t q_abs(const um_q8 *q, int32_t v)
{
    int32_t d = v - q->zi;
    d = d < 0 ? -d : d;
    return (q->rescale ? mp_multiply_by_quantized_multiplier(d, q->m1, q->s1) : d) + q->zo;
}

static int32_t q_neg(const um_q8 *q, int32_t v) { return q->zi + q->zo - v; }

static int32_t q_relu01(const um_q8 *q, int32_t v)
{
    const int32_t r = q->zo + mp_multiply_by_quantized_multiplier(v - q->zi, q->m1, q->s1);
    const float top = (float)q->zo + roundf(1.0f / q->so); /* the dtype's bound clamps after */
    const int32_t hi = top >= 1e9f ? 1000000000 : (int32_t)top;
    return r < q->zo ? q->zo : (r > hi ? hi : r);
}

static int32_t q_leaky(const um_q8 *q, int32_t v)
{
    int32_t d = v - q->zi;
    return q->zo + (d >= 0 ? mp_multiply_by_quantized_multiplier(d, q->m1, q->s1)
                           : mp_multiply_by_quantized_multiplier(d, q->m2, q->s2));
}

/* LUTPopulate's last steps for a real result y: round(y / out_scale) + zp_out in float, as an
 * int32 (saturated beyond +-1e9: the caller clamps to the dtype). */
static int32_t lut_quantize(const um_q8 *q, float y)
{
    const float r = roundf(y * (1.0f / q->so)) + (float)q->zo;
    return r >= 1e9f ? 1000000000 : (r <= -1e9f ? -1000000000 : (int32_t)r);
}

static int32_t q_exp(const um_q8 *q, int32_t v)
{
    return lut_quantize(q, expf(q->si * (float)(v - q->zi)));
}

static int32_t q_log(const um_q8 *q, int32_t v)
{
    const float x = q->si * (float)(v - q->zi);
    int32_t lo, hi;
    mp_quant_dtype_range(MP_DT_INT8, &lo, &hi);
    return lut_quantize(q, x <= 0.0f ? (float)(lo - q->zo) * q->so : logf(x));
}

static int32_t q_rsqrt(const um_q8 *q, int32_t v)
{
    const int32_t d = v - q->zi, shift = 20;
    if (d <= 0)
        return INT32_MAX; /* 0: the largest output; below 0: refused by run */
    int32_t m;
    int s;
    mp_inv_sqrt_quantized_multiplier(d, &m, &s);
    const int32_t r = mp_multiply_by_quantized_multiplier(1, m, s + shift);
    return mp_multiply_by_quantized_multiplier(r, q->m1, q->s1 - shift) + q->zo;
}

static int32_t q_sqrt(const um_q8 *q, int32_t v)
{
    const float x = q->si * (float)(v - q->zi);
    if (x < 0.0f)
        return q->zo; /* refused by run */
    const float r = sqrtf(x) / q->so;
    return r >= 1e9f ? 1000000000 : (int32_t)r + q->zo;
}

static int32_t q_elu(const um_q8 *q, int32_t v)
{
    const float x = q->si * (float)(v - q->zi);
    return lut_quantize(q, x < 0.0f ? expf(x) - 1.0f : x); /* the table's exp - 1, as TFLite */
}

static int32_t q_gelu(const um_q8 *q, int32_t v)
{
    return lut_quantize(q, f_gelu(q->si * (float)(v - q->zi), q->opt));
}

static enum xnn_status um_create_leaky(const mp_node *n, xnn_operator_t *op)
{
    return xnn_create_leaky_relu_nc_f32(1, 1, 1, n->opt->alpha, 0, op);
}

static const um_op um_ops[] = {
    {MP_OP_ABS, f_abs, xnn_create_abs_nc_f32, xnn_setup_abs_nc_f32, UM_I32 | UM_S8, i_abs, q_abs,
     "f32, i32, i8, i16", NULL},
    {MP_OP_NEG, f_neg, xnn_create_negate_nc_f32, xnn_setup_negate_nc_f32,
     UM_I32 | UM_I64 | UM_S8, i_neg, q_neg, "f32, i32, i64, i8", NULL},
    {MP_OP_SQUARE, f_square, xnn_create_square_nc_f32, xnn_setup_square_nc_f32, 0, NULL, NULL,
     "f32", NULL},
    {MP_OP_SQRT, f_sqrt, xnn_create_square_root_nc_f32, xnn_setup_square_root_nc_f32, UM_S8, NULL,
     q_sqrt, "f32, i8, i16", NULL},
    {MP_OP_RSQRT, f_rsqrt, NULL, NULL, UM_S8, NULL, q_rsqrt, "f32, i8, i16", NULL},
    {MP_OP_EXP, f_exp, NULL, NULL, UM_S8, NULL, q_exp, "f32, i8, i16", NULL},
    {MP_OP_LOG, f_log, NULL, NULL, UM_S8, NULL, q_log, "f32, i8, i16", NULL},
    {MP_OP_LEAKY_RELU, f_leaky, NULL, xnn_setup_leaky_relu_nc_f32, UM_S8 | UM_U8, NULL, q_leaky,
     "f32, i8, u8", NULL},
    {MP_OP_GELU, f_gelu, NULL, NULL, UM_S8 | UM_U8, NULL, q_gelu, "f32, i8, u8", NULL},
    {MP_OP_FLOOR, f_floor, xnn_create_floor_nc_f32, xnn_setup_floor_nc_f32, 0, NULL, NULL, "f32",
     NULL},
    {MP_OP_CEIL, f_ceil, xnn_create_ceiling_nc_f32, xnn_setup_ceiling_nc_f32, 0, NULL, NULL,
     "f32", NULL},
    {MP_OP_ROUND, f_round, xnn_create_bankers_rounding_nc_f32, xnn_setup_bankers_rounding_nc_f32,
     0, NULL, NULL, "f32", NULL},
    {MP_OP_SIN, f_sin, NULL, NULL, 0, NULL, NULL, "f32", NULL},
    {MP_OP_COS, f_cos, NULL, NULL, 0, NULL, NULL, "f32", NULL},
    {MP_OP_ELU, f_elu, NULL, NULL, UM_S8, NULL, q_elu, "f32, i8", NULL},
    {MP_OP_SIGN, f_sign, NULL, NULL, UM_I32 | UM_F64, i_sign, NULL, "f32, f64, i32", d_sign},
    {MP_OP_RELU_0_TO_1, f_relu01, NULL, NULL, UM_S8 | UM_U8, NULL, q_relu01, "f32, i8, u8",
     NULL},
};

static const um_op *um_find(int32_t opcode)
{
    for (size_t i = 0; i < sizeof um_ops / sizeof um_ops[0]; i++)
        if (um_ops[i].opcode == opcode)
            return &um_ops[i];
    return NULL;
}

static uint32_t um_dtype_bit(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_INT32: return UM_I32;
    case MP_DT_INT64: return UM_I64;
    case MP_DT_INT8: return UM_S8;
    case MP_DT_UINT8: return UM_U8;
    case MP_DT_FLOAT64: return UM_F64;
    default: return 0;
    }
}

typedef struct um_state {
    xnn_operator_t op;
    bool use_xnn;         /* the current shapes and pointers are bound to op */
    /* 8-bit nodes only (a float node's state ends before these) */
    bool table_ready;
    bool nonnegative;     /* RSQRT, SQRT: an input below zero_point fails the run */
    int32_t zero_point;   /* the input's */
    uint8_t table[256];   /* output byte per input byte (int8 as its two's complement) */
} um_state;

/* The quantization of an 8-bit node and its formula's multipliers, checked as TensorFlow
 * Lite's Prepare checks them. */
static mp_status um_q8_init(mp_node *n, um_q8 *q)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    mp_status st = mp_node_qparams(n, in, &q->si, &q->zi);
    if (st == MP_OK)
        st = mp_node_qparams(n, out, &q->so, &q->zo);
    if (st != MP_OK)
        return st;
    q->opt = n->opt;
    q->rescale = q->si != q->so;
    bool ok = true;
    switch (n->opcode) {
    case MP_OP_NEG:
        if (q->si != q->so)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "int8 NEG needs equal input and output scales ('%s' %g, '%s' %g)",
                                mp_tname(in), (double)q->si, mp_tname(out), (double)q->so);
        break;
    case MP_OP_ABS:
    case MP_OP_RELU_0_TO_1:
        ok = mp_quantize_multiplier((double)(q->si / q->so), &q->m1, &q->s1);
        break;
    case MP_OP_RSQRT: /* sqrtf and the product in float, the quotient in double, as TFLite */
        ok = mp_quantize_multiplier(1.0 / (double)(sqrtf(q->si) * q->so), &q->m1, &q->s1);
        break;
    case MP_OP_LEAKY_RELU:
        ok = mp_quantize_multiplier((double)(q->si / q->so), &q->m1, &q->s1) &&
             mp_quantize_multiplier((double)(q->si * n->opt->alpha / q->so), &q->m2, &q->s2);
        break;
    default:
        break;
    }
    if (!ok)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "the scales of '%s' and '%s' give no finite "
                            "multiplier", mp_tname(in), mp_tname(out));
    return MP_OK;
}

static mp_status um_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    if ((n->opcode == MP_OP_LEAKY_RELU || n->opcode == MP_OP_ABS || n->opcode == MP_OP_EXP ||
         n->opcode == MP_OP_LOG || n->opcode == MP_OP_RSQRT || n->opcode == MP_OP_SQRT) &&
        n->in[0]->dtype == MP_DT_INT16) { /* 16x8 */
        if ((st = mp_i16_unary_check(n)) != MP_OK)
            return st;
        return mp_node_set_output_shape(n, n->in[0]->rank, n->in[0]->dims);
    }
    const um_op *u = um_find(n->opcode);
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (in->dtype != MP_DT_FLOAT32 && !(u->dtypes & um_dtype_bit(in->dtype)))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: %s)",
                            mp_tname(in), mp_dtype_name(in->dtype), u->dtype_list);
    if ((st = mp_node_check_same_dtype(n, in, out)) != MP_OK)
        return st;
    if (mp_dtype_is_q8(in->dtype)) {
        um_q8 q;
        if ((st = um_q8_init(n, &q)) != MP_OK)
            return st;
    }
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

/* Fill the 8-bit table of the node (its quantization is fixed: once). */
static mp_status um_fill_table(mp_node *n, const um_op *u, um_state *s)
{
    um_q8 q;
    mp_status st = um_q8_init(n, &q);
    if (st != MP_OK)
        return st;
    int32_t lo, hi;
    mp_quant_dtype_range(n->in[0]->dtype, &lo, &hi);
    for (int32_t v = lo; v <= hi; v++) {
        int32_t r = u->q8(&q, v);
        s->table[(uint8_t)v] = (uint8_t)(r < lo ? lo : (r > hi ? hi : r));
    }
    s->nonnegative = n->opcode == MP_OP_RSQRT || n->opcode == MP_OP_SQRT;
    s->zero_point = q.zi;
    s->table_ready = true;
    return MP_OK;
}

static mp_status um_prepare(mp_node *n)
{
    if (n->in[0]->dtype == MP_DT_INT16) /* 16x8: no state, all at the run */
        return MP_OK;
    const um_op *u = um_find(n->opcode);
    const mp_tensor *in = n->in[0];
    const bool q8 = mp_dtype_is_q8(in->dtype);
    um_state *s = mp_node_state(n, q8 ? sizeof *s : offsetof(um_state, table_ready));
    if (!s)
        return MP_ERR_NOMEM;
    s->use_xnn = false;
    if (q8)
        return s->table_ready ? MP_OK : um_fill_table(n, u, s);
    const size_t count = mp_tensor_elements(in);
    if (in->dtype != MP_DT_FLOAT32 || !u->xnn_setup || count == 0 || in->is_const)
        return MP_OK; /* plain C */
    enum xnn_status xs;
    if (!s->op) {
        xs = u->xnn_create ? u->xnn_create(1, 1, 1, 0, &s->op) : um_create_leaky(n, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "create");
        }
    }
    xs = u->xnn_setup(s->op, count, in->data, n->out[0]->data, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "setup");
    s->use_xnn = true;
    return MP_OK;
}

static mp_status um_run(mp_node *n)
{
    if (n->in[0]->dtype == MP_DT_INT16)
        return mp_i16_unary_run(n);
    const um_op *u = um_find(n->opcode);
    const um_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    const mp_tensor *in = n->in[0];
    const size_t count = mp_tensor_elements(in);
    if (s->use_xnn) {
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        return xs == xnn_status_success ? MP_OK : mp_node_xnn_fail(n, xs, "run");
    }
    switch (in->dtype) {
    case MP_DT_FLOAT32: {
        const float *x = in->data;
        float *y = n->out[0]->data;
        for (size_t i = 0; i < count; i++)
            y[i] = u->f32(x[i], n->opt);
        break;
    }
    case MP_DT_INT32: {
        const int32_t *x = in->data;
        int32_t *y = n->out[0]->data;
        for (size_t i = 0; i < count; i++)
            y[i] = (int32_t)(uint32_t)(uint64_t)u->i64(x[i]);
        break;
    }
    case MP_DT_INT64: {
        const int64_t *x = in->data;
        int64_t *y = n->out[0]->data;
        for (size_t i = 0; i < count; i++)
            y[i] = u->i64(x[i]);
        break;
    }
    case MP_DT_FLOAT64: {
        const double *x = in->data;
        double *y = n->out[0]->data;
        for (size_t i = 0; i < count; i++)
            y[i] = u->f64(x[i]);
        break;
    }
    default: { /* int8 / uint8 */
        const uint8_t *x = in->data;
        uint8_t *y = n->out[0]->data;
        for (size_t i = 0; i < count && s->nonnegative; i++) /* int8 only */
            if ((int8_t)x[i] < s->zero_point)
                return mp_node_fail(n, MP_ERR_ARG,
                                    "%s is only defined for non-negative values: '%s' element %zu "
                                    "is %d, below its zero point %d",
                                    n->opcode == MP_OP_RSQRT ? "RSQRT" : "SQRT", mp_tname(in), i,
                                    (int8_t)x[i], s->zero_point);
        for (size_t i = 0; i < count; i++)
            y[i] = s->table[x[i]];
        break;
    }
    }
    return MP_OK;
}

static void um_release(mp_node *n)
{
    um_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

#define UM_KERNEL(code)                                                                   \
    {                                                                                     \
        .opcode = (code), .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,               \
        .infer = um_infer, .prepare = um_prepare, .run = um_run, .release = um_release    \
    }

const mp_kernel mp_kernels_unary_math[] = {
    UM_KERNEL(MP_OP_ABS),  UM_KERNEL(MP_OP_NEG),        UM_KERNEL(MP_OP_SQUARE),
    UM_KERNEL(MP_OP_SQRT), UM_KERNEL(MP_OP_RSQRT),      UM_KERNEL(MP_OP_EXP),
    UM_KERNEL(MP_OP_LOG),  UM_KERNEL(MP_OP_LEAKY_RELU), UM_KERNEL(MP_OP_GELU),
    UM_KERNEL(MP_OP_FLOOR), UM_KERNEL(MP_OP_CEIL),      UM_KERNEL(MP_OP_ROUND),
    UM_KERNEL(MP_OP_SIN),  UM_KERNEL(MP_OP_COS),        UM_KERNEL(MP_OP_ELU),
    UM_KERNEL(MP_OP_SIGN), UM_KERNEL(MP_OP_RELU_0_TO_1),
    {.opcode = -1},
};
