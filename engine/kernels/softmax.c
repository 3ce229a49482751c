/* Kernel: SOFTMAX over the last axis, y = exp(beta * (x - max)) / sum, any rank >= 1
 * (leading dimensions are flattened into rows).
 *
 * XNNPACK's softmax has no beta. With beta == 1 it reads the input directly; any other beta
 * first writes beta * x into the operator's scratch (declared by infer, placed by the session
 * in the arena beside the tensors) and runs XNNPACK on that: softmax(beta * x) is the same
 * function, since subtracting the row's max of beta * x only cancels out. The XNNPACK
 * operator is created for a channel count (the last dimension) and re-created only when that
 * changes; a change of the leading dimensions or of the pointers needs only setup.
 *
 * 8-bit (TensorFlow Lite's quantization specification: the output scale 1/256 with zero
 * point 0 for uint8, -128 for int8; refused otherwise):
 *   uint8 runs on XNNPACK's softmax_nc_qu8 with beta folded into the input scale it is given
 *   (the function only ever sees beta * scale * (x - max)).
 *   int8 (and uint8 should XNNPACK refuse its input scale) runs TensorFlow Lite's reference
 *   integer softmax in C, bit for bit: beta * input scale * 2^26 as a multiplier greater
 *   than one (input_beta_multiplier and left shift) that turns x - max into a Q5.26 value,
 *   differences below diff_min (the radius of that format) giving 0 probability, gemmlowp's
 *   fixed-point exp_on_negative_values summed in Q12.19, the reciprocal of the sum through
 *   one_over_one_plus_x_for_x_in_0_1, each output rounded to 8 bits and offset by -128
 *   (int8) or 0 (uint8). No temporaries: each row is read three times. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

typedef struct softmax_state {
    xnn_operator_t op;
    size_t op_channels; /* channels op was created for */
    size_t channels, rows;
} softmax_state;

/* The state of an 8-bit node: the float state's fields, then TensorFlow Lite's integer
 * parameters when it runs in C. */
typedef struct softmax_q8_state {
    softmax_state base;
    bool plain;         /* C (int8, or XNNPACK refused) */
    int32_t multiplier; /* input_beta_multiplier */
    int left_shift;     /* input_beta_left_shift */
    int32_t diff_min;
} softmax_q8_state;

/* TensorFlow Lite's kScaledDiffIntegerBits and kAccumulationIntegerBits. */
#define SM_DIFF_BITS 5
#define SM_ACC_BITS 12

/* ---- gemmlowp fixed point (Qm.n in int32), as TensorFlow Lite's reference uses it ---- */

static inline int32_t fx_mul(int32_t a, int32_t b)
{
    return mp_sat_rounding_doubling_high_mul(a, b);
}

/* SaturatingRoundingMultiplyByPOT for an exponent e in 1..30: x * 2^e saturated. */
static int32_t fx_sat_shl(int32_t x, int e)
{
    const int32_t threshold = (int32_t)((1u << (31 - e)) - 1u);
    if (x > threshold)
        return INT32_MAX;
    if (x < -threshold)
        return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out: gemmlowp's Taylor expansion around -1/8. */
static int32_t fx_exp_quarter(int32_t a)
{
    const int32_t exp_minus_eighth = 1895147668, one_third = 715827883;
    const int32_t x = a + (1 << 28); /* a + 1/8 */
    const int32_t x2 = fx_mul(x, x), x3 = fx_mul(x2, x), x4 = fx_mul(x2, x2);
    const int32_t x4_over_4 = mp_rounding_divide_by_pot(x4, 2);
    const int32_t poly = mp_rounding_divide_by_pot(fx_mul(x4_over_4 + x3, one_third) + x2, 1);
    return exp_minus_eighth + fx_mul(exp_minus_eighth, x + poly);
}

/* exp(a) for a <= 0 in Q5.26, result in Q0.31 (gemmlowp's exp_on_negative_values): the
 * fractional quarter by fx_exp_quarter, then exp(-2^k) for each bit k = -2..4 of the rest. */
static int32_t fx_exp_on_negative(int32_t a)
{
    static const int32_t exp_minus_pow2[7] = {1672461947, 1302514674, 790015084, 290630308,
                                              39332535,   720401,     242};
    const int frac = 31 - SM_DIFF_BITS;
    const int32_t quarter = 1 << (frac - 2);
    const int32_t mod_minus_quarter = (a & (quarter - 1)) - quarter;
    int32_t r = fx_exp_quarter(fx_sat_shl(mod_minus_quarter, SM_DIFF_BITS));
    const int32_t rest = mod_minus_quarter - a;
    for (int k = 0; k < 7; k++)
        if (rest & (1 << (frac - 2 + k)))
            r = fx_mul(r, exp_minus_pow2[k]);
    return a == 0 ? INT32_MAX : r;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out: three Newton-Raphson steps in Q2.29. */
static int32_t fx_one_over_one_plus(int32_t a)
{
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = 1515870810 + fx_mul(half_denominator, -1010580540); /* 48/17 - 32/17 d */
    for (int i = 0; i < 3; i++) {
        const int32_t one_minus_dx = (1 << 29) - fx_mul(half_denominator, x);
        x += fx_sat_shl(fx_mul(x, one_minus_dx), 2);
    }
    return fx_sat_shl(x, 1); /* x / 2 as Q1.30, rescaled to Q0.31 */
}

/* TensorFlow Lite's reference quantized softmax of `rows` rows of `depth` 8-bit values. */
static void softmax_q8_rows(const softmax_q8_state *q, const void *in, void *out, bool s8)
{
    const int32_t qmin = s8 ? INT8_MIN : 0, qmax = s8 ? INT8_MAX : UINT8_MAX;
    const size_t depth = q->base.channels;
    for (size_t r = 0; r < q->base.rows; r++) {
        const int8_t *xs = (const int8_t *)in + r * depth;
        const uint8_t *xu = (const uint8_t *)in + r * depth;
        int32_t mx = qmin;
        for (size_t c = 0; c < depth; c++) {
            int32_t v = s8 ? xs[c] : xu[c];
            mx = v > mx ? v : mx;
        }
        uint32_t sum = 0; /* Q12.19; wraps as TensorFlow Lite's int32 would */
        for (size_t c = 0; c < depth; c++) {
            int32_t diff = (s8 ? xs[c] : xu[c]) - mx;
            if (diff >= q->diff_min) {
                int32_t e = fx_exp_on_negative(
                    mp_multiply_by_quantized_multiplier(diff, q->multiplier, q->left_shift));
                sum += (uint32_t)mp_rounding_divide_by_pot(e, SM_ACC_BITS);
            }
        }
        int headroom_plus_one = sum ? __builtin_clz(sum) : 31;
        const int bits_over_unit = SM_ACC_BITS - headroom_plus_one;
        const int32_t scale = fx_one_over_one_plus(
            (int32_t)((sum << headroom_plus_one) - (1u << 31)));
        for (size_t c = 0; c < depth; c++) {
            int32_t diff = (s8 ? xs[c] : xu[c]) - mx, v = qmin;
            if (diff >= q->diff_min) {
                int32_t e = fx_exp_on_negative(
                    mp_multiply_by_quantized_multiplier(diff, q->multiplier, q->left_shift));
                int64_t p = (int64_t)mp_rounding_divide_by_pot(fx_mul(scale, e),
                                                               bits_over_unit + 31 - 8) + qmin;
                v = (int32_t)(p < qmin ? qmin : (p > qmax ? qmax : p));
            }
            if (s8)
                ((int8_t *)out)[r * depth + c] = (int8_t)v;
            else
                ((uint8_t *)out)[r * depth + c] = (uint8_t)v;
        }
    }
}

/* TensorFlow Lite's PreprocessSoftmaxScaling and CalculateInputRadius. */
static mp_status softmax_q8_params(mp_node *n, float in_scale, softmax_q8_state *q)
{
    double real = (double)n->opt->beta * (double)in_scale * (double)(1 << (31 - SM_DIFF_BITS));
    if (real > 2147483647.0)
        real = 2147483647.0;
    if (!mp_quantize_multiplier(real, &q->multiplier, &q->left_shift) || q->left_shift < 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "beta %g times input scale %g is too small for 8-bit softmax",
                            (double)n->opt->beta, (double)in_scale);
    double radius = (double)((1 << SM_DIFF_BITS) - 1) * (double)(1LL << (31 - SM_DIFF_BITS)) /
                    (double)(1LL << q->left_shift);
    q->diff_min = -(int32_t)floor(radius);
    return MP_OK;
}

/* 8-bit input and output of the same dtype, per tensor, the output as the specification
 * wants it (TensorFlow Lite's tolerance on its scale: 0.1 %). */
static mp_status softmax_q8_check(mp_node *n, float *in_scale)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is %s",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_tname(in),
                            mp_dtype_name(in->dtype));
    float so;
    int32_t zi, zo;
    mp_status st = mp_node_qparams(n, in, in_scale, &zi);
    if (st == MP_OK)
        st = mp_node_qparams(n, out, &so, &zo);
    if (st != MP_OK)
        return st;
    const int32_t want_zp = in->dtype == MP_DT_INT8 ? -128 : 0;
    if (fabsf(so - 1.0f / 256) > 0.001f / 256 || zo != want_zp)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "output '%s' has scale %g and zero point %d; 8-bit softmax produces "
                            "scale 1/256 and zero point %d",
                            mp_tname(out), (double)so, zo, want_zp);
    return MP_OK;
}

/* beta != 1: XNNPACK runs on beta * x, written into the scratch. */
static bool scaled(const mp_node *n)
{
    return n->opt->beta != 1.0f;
}

static mp_status softmax_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    float in_scale;
    const bool q8 = st == MP_OK && mp_dtype_is_q8(n->in[0]->dtype);
    if (st == MP_OK)
        st = q8 ? softmax_q8_check(n, &in_scale) : mp_node_check_f32_io(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (in->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is a scalar (rank 0); needs rank >= 1",
                            in->info->name);
    if (!isfinite(n->opt->beta))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "beta %g is not finite", (double)n->opt->beta);
    if (!mp_tensor_set_shape(out, in->rank, in->dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot give output '%s' the shape of '%s'",
                            out->info->name, in->info->name);
    size_t elems = mp_tensor_elements(in);
    n->scratch_bytes =
        !q8 && scaled(n) && elems > 0 ? elems * sizeof(float) + XNN_EXTRA_BYTES : 0;
    return MP_OK;
}

/* An 8-bit node: XNNPACK's uint8 softmax, else TensorFlow Lite's reference in C. */
static mp_status softmax_q8_prepare(mp_node *n)
{
    softmax_q8_state *q = mp_node_state(n, sizeof *q);
    if (!q)
        return MP_ERR_NOMEM;
    softmax_state *s = &q->base;
    const mp_tensor *in = n->in[0];
    float in_scale;
    mp_status st = softmax_q8_check(n, &in_scale);
    if (st != MP_OK)
        return st;
    s->channels = (size_t)in->dims[in->rank - 1];
    s->rows = s->channels ? mp_tensor_elements(in) / s->channels : 0;
    q->plain = in->dtype == MP_DT_INT8;
    if (s->op && s->op_channels != s->channels)
        mp_xnn_delete(&s->op);
    if (!q->plain && s->rows > 0) {
        enum xnn_status xs = xnn_status_success;
        if (!s->op) {
            xs = xnn_create_softmax_nc_qu8(s->channels, s->channels, s->channels,
                                           n->opt->beta * in_scale, 0, 1.0f / 256, 0, &s->op);
            xs = mp_xnn_created(xs, s->op);
            if (xs != xnn_status_success)
                s->op = NULL;
            if (xs != xnn_status_success && xs != xnn_status_unsupported_parameter)
                return mp_node_xnn_fail(n, xs, "softmax create");
            s->op_channels = s->channels;
        }
        if (s->op) {
            xs = xnn_setup_softmax_nc_qu8(s->op, s->rows, in->data, n->out[0]->data, n->pool);
            if (xs != xnn_status_success)
                return mp_node_xnn_fail(n, xs, "softmax setup");
            return MP_OK;
        }
        q->plain = true; /* XNNPACK refused the input scale */
    }
    return softmax_q8_params(n, in_scale, q);
}

static mp_status softmax_prepare(mp_node *n)
{
    if (mp_dtype_is_q8(n->in[0]->dtype))
        return softmax_q8_prepare(n);
    softmax_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    const mp_tensor *in = n->in[0];
    s->channels = (size_t)in->dims[in->rank - 1];
    s->rows = s->channels ? mp_tensor_elements(in) / s->channels : 0;
    if (s->rows == 0)
        return MP_OK;
    const float *x = in->data;
    if (scaled(n)) {
        if (!n->scratch)
            return mp_node_fail(n, MP_ERR_ARG, "prepared without its scratch");
        x = n->scratch;
    }

    if (s->op && s->op_channels != s->channels) {
        mp_xnn_delete(&s->op);
    }
    enum xnn_status xs;
    if (!s->op) {
        xs = xnn_create_softmax_nc_f32(s->channels, s->channels, s->channels, 0, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "softmax create");
        }
        s->op_channels = s->channels;
    }
    xs = xnn_setup_softmax_nc_f32(s->op, s->rows, x, n->out[0]->data, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "softmax setup");
    return MP_OK;
}

static mp_status softmax_run(mp_node *n)
{
    softmax_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->rows == 0)
        return MP_OK;
    if (mp_dtype_is_q8(n->in[0]->dtype) && ((const softmax_q8_state *)n->state)->plain) {
        softmax_q8_rows(n->state, n->in[0]->data, n->out[0]->data,
                        n->in[0]->dtype == MP_DT_INT8);
        return MP_OK;
    }
    if (mp_dtype_is_q8(n->in[0]->dtype)) {
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        return xs == xnn_status_success ? MP_OK : mp_node_xnn_fail(n, xs, "softmax run");
    }
    if (scaled(n)) {
        const float *x = n->in[0]->data;
        float *t = n->scratch, beta = n->opt->beta;
        for (size_t i = 0, count = s->rows * s->channels; i < count; i++)
            t[i] = beta * x[i];
    }
    enum xnn_status xs = xnn_run_operator(s->op, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "softmax run");
    return MP_OK;
}

static void softmax_release(mp_node *n)
{
    softmax_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

const mp_kernel mp_kernels_softmax[] = {
    {.opcode = MP_OP_SOFTMAX,
     .optional_inputs = 0,
     .min_inputs = 1,
     .max_inputs = 1,
     .n_outputs = 1,
     .infer = softmax_infer,
     .prepare = softmax_prepare,
     .run = softmax_run,
     .release = softmax_release},
    {.opcode = -1},
};
