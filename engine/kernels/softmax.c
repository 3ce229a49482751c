/* Kernels: SOFTMAX and LOG_SOFTMAX over the last axis.
 *
 * SOFTMAX: y = exp(beta * (x - max)) / sum, any rank >= 1
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
 * point 0 for uint8, -128 for int8; refused otherwise). An 8-bit input may also give an int16
 * output (TensorFlow Lite's SoftmaxQuantized<int8_t / uint8_t, int16_t>), scale 1/65536 and
 * zero point -32768 as TensorFlow Lite Micro's Prepare requires: the same integer reference
 * with each probability rounded to 16 bits instead of 8 (offset by -32768).
 *   uint8 runs on XNNPACK's softmax_nc_qu8 with beta folded into the input scale it is given
 *   (the function only ever sees beta * scale * (x - max)).
 *   int8 (and uint8 should XNNPACK refuse its input scale) runs TensorFlow Lite's reference
 *   integer softmax in C, bit for bit: beta * input scale * 2^26 as a multiplier greater
 *   than one (input_beta_multiplier and left shift) that turns x - max into a Q5.26 value,
 *   differences below diff_min (the radius of that format) giving 0 probability, gemmlowp's
 *   fixed-point exp_on_negative_values summed in Q12.19, the reciprocal of the sum through
 *   one_over_one_plus_x_for_x_in_0_1, each output rounded to the output's bits (8, or 16 for
 *   an int16 output) and offset by its dtype's lowest value (-128 int8, 0 uint8, -32768
 *   int16). No temporaries: each row is read three times.
 *
 * LOG_SOFTMAX (plain C, TensorFlow Lite's reference kernels):
 *   float32: per row of the last axis, y = x - max - log(sum exp(x - max)), in float.
 *   int8 / uint8 (output scale 16/256 and zero point 127 (int8) or 255 (uint8), as TensorFlow
 *   Lite's Prepare requires; beta 1): LogSoftmaxQuantized bit for bit. The input scale times
 *   2^26 as a multiplier greater than one (PreprocessLogSoftmaxScalingExp, with the reverse
 *   multiplier of 2^(31 - left shift) / multiplier), the exps of x - max summed in Q12.19
 *   as SOFTMAX does, their log in Q5.26 (log_x_for_x_greater_than_or_equal_to_1: the
 *   power of two from the leading zeros, the mantissa's log by a rational approximation
 *   around 2^-1/4), and each output (x - max) in Q5.26 minus that log, rounded to Q4 and
 *   offset by the zero point; differences at or below max(diff_min - 1, the reversed log)
 *   give the dtype's lowest value. TensorFlow Lite's default uint8 kernel uses a float
 *   table instead (optimized_ops); memprof runs the reference for both dtypes.
 * int16 (16x8) SOFTMAX: int16_activation.c (TensorFlow Lite's SoftmaxInt16). */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

#include "engine/kernels/int16.h"
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
    bool plain;         /* C (int8, an int16 output, or XNNPACK refused) */
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

/* The lowest and highest value of an 8-bit or int16 output dtype. */
static void sm_out_range(mp_dtype dt, int32_t *lo, int32_t *hi)
{
    *lo = dt == MP_DT_INT8 ? INT8_MIN : dt == MP_DT_INT16 ? INT16_MIN : 0;
    *hi = dt == MP_DT_INT8 ? INT8_MAX : dt == MP_DT_INT16 ? INT16_MAX : UINT8_MAX;
}

/* TensorFlow Lite's reference quantized softmax (Softmax<InputT, OutputT>) of `rows` rows of
 * `depth` 8-bit values (int8 when s8) into outputs of dtype out_dt (int8, uint8 or int16). */
static void softmax_q8_rows(const softmax_q8_state *q, const void *in, void *out, bool s8,
                            mp_dtype out_dt)
{
    int32_t qmin, qmax;
    sm_out_range(out_dt, &qmin, &qmax);
    const int out_bits = out_dt == MP_DT_INT16 ? 16 : 8;
    const size_t depth = q->base.channels;
    for (size_t r = 0; r < q->base.rows; r++) {
        const int8_t *xs = (const int8_t *)in + r * depth;
        const uint8_t *xu = (const uint8_t *)in + r * depth;
        int32_t mx = s8 ? INT8_MIN : 0;
        for (size_t c = 0; c < depth; c++) {
            int32_t v = s8 ? xs[c] : xu[c];
            mx = v > mx ? v : mx;
        }
        /* Q12.19: TensorFlow Lite's int32 sum overflows (undefined behaviour) once the exps
         * add up past 4096, a row of more than 4096 values near its maximum; memprof
         * saturates it there, equal to TensorFlow Lite's wherever that is defined */
        uint64_t sum64 = 0;
        for (size_t c = 0; c < depth; c++) {
            int32_t diff = (s8 ? xs[c] : xu[c]) - mx;
            if (diff >= q->diff_min) {
                int32_t e = fx_exp_on_negative(
                    mp_multiply_by_quantized_multiplier(diff, q->multiplier, q->left_shift));
                sum64 += (uint64_t)mp_rounding_divide_by_pot(e, SM_ACC_BITS);
            }
        }
        uint32_t sum = sum64 > INT32_MAX ? INT32_MAX : (uint32_t)sum64;
        int headroom_plus_one = sum ? __builtin_clz(sum) : 31;
        const int bits_over_unit = SM_ACC_BITS - headroom_plus_one;
        const int32_t scale = mp_one_over_one_plus_x(
            (int32_t)((sum << headroom_plus_one) - (1u << 31)));
        for (size_t c = 0; c < depth; c++) {
            int32_t diff = (s8 ? xs[c] : xu[c]) - mx, v = qmin;
            if (diff >= q->diff_min) {
                int32_t e = fx_exp_on_negative(
                    mp_multiply_by_quantized_multiplier(diff, q->multiplier, q->left_shift));
                int64_t p = (int64_t)mp_rounding_divide_by_pot(
                                fx_mul(scale, e), bits_over_unit + 31 - out_bits) + qmin;
                v = (int32_t)(p < qmin ? qmin : (p > qmax ? qmax : p));
            }
            if (out_dt == MP_DT_INT16)
                ((int16_t *)out)[r * depth + c] = (int16_t)v;
            else if (out_dt == MP_DT_INT8)
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

/* An 8-bit node's output of the input's dtype, both quantized per tensor: the input scale,
 * the output scale and zero point. */
static mp_status sm_q8_io(mp_node *n, float *in_scale, float *so, int32_t *zo)
{
    int32_t zi;
    mp_status st = mp_node_check_same_dtype(n, n->in[0], n->out[0]);
    if (st == MP_OK)
        st = mp_node_qparams(n, n->in[0], in_scale, &zi);
    if (st == MP_OK)
        st = mp_node_qparams(n, n->out[0], so, zo);
    return st;
}

/* 8-bit input and output of the input's dtype or int16, per tensor, the output as the
 * specification wants it (TensorFlow Lite's tolerance on its scale: 0.1 %). */
static mp_status softmax_q8_check(mp_node *n, float *in_scale)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    float so;
    int32_t zo;
    mp_status st;
    if (out->dtype == MP_DT_INT16) { /* SoftmaxQuantized<int8_t / uint8_t, int16_t> */
        int32_t zi;
        st = mp_node_qparams(n, in, in_scale, &zi);
        if (st == MP_OK)
            st = mp_node_qparams(n, out, &so, &zo);
        if (st != MP_OK)
            return st;
        if (fabsf(so - 1.0f / 65536) > 0.001f / 65536 || zo != INT16_MIN)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "output '%s' has scale %g and zero point %d; softmax of %s into "
                                "int16 produces scale 1/65536 and zero point -32768",
                                mp_tname(out), (double)so, zo, mp_dtype_name(in->dtype));
        return MP_OK;
    }
    st = sm_q8_io(n, in_scale, &so, &zo);
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
    if (st == MP_OK && n->in[0]->dtype == MP_DT_INT16) /* 16x8: int16_activation.c */
        return mp_i16_softmax_infer(n);
    float in_scale;
    const bool q8 = st == MP_OK && mp_dtype_is_q8(n->in[0]->dtype);
    if (st == MP_OK && !q8 && n->in[0]->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s (supported: f32, i8, u8, i16)",
                            mp_tname(n->in[0]), mp_dtype_name(n->in[0]->dtype));
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
    q->plain = in->dtype == MP_DT_INT8 || n->out[0]->dtype == MP_DT_INT16;
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
    if (n->in[0]->dtype == MP_DT_INT16)
        return MP_OK; /* no state: all at the run */
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
    if (n->in[0]->dtype == MP_DT_INT16)
        return mp_i16_softmax_run(n);
    softmax_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->rows == 0)
        return MP_OK;
    if (mp_dtype_is_q8(n->in[0]->dtype) && ((const softmax_q8_state *)n->state)->plain) {
        softmax_q8_rows(n->state, n->in[0]->data, n->out[0]->data,
                        n->in[0]->dtype == MP_DT_INT8, n->out[0]->dtype);
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

/* ---- LOG_SOFTMAX ---- */

/* The integer parameters of an 8-bit LOG_SOFTMAX (TensorFlow Lite's Prepare). */
typedef struct log_softmax_q8 {
    int32_t multiplier, reverse_multiplier, diff_min, zero_point;
    int left_shift, reverse_shift;
} log_softmax_q8;

/* SaturatingRoundingMultiplyByPOTParam for an exponent in 0..30. */
static int32_t fx_sat_shl0(int32_t x, int e)
{
    return e == 0 ? x : fx_sat_shl(x, e);
}

static int32_t fx_sat_add(int32_t a, int32_t b)
{
    const int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

static int32_t fx_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t fx_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* log(x) for x >= 1 given in Q12.19, result in Q5.26 (TensorFlow Lite's
 * log_x_for_x_greater_than_or_equal_to_1 with 5 output and 12 input integer bits; the
 * accumulation in Q6.25). */
static int32_t fx_log_q12_to_q5(int32_t x)
{
    const int in_bits = SM_ACC_BITS, acc_bits = 6;
    const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769,
                  alpha_f = 638450708;
    const int32_t shifted_quarter = mp_rounding_divide_by_pot(1 << 29, acc_bits);
    const int za_headroom_plus_1 = __builtin_clz((uint32_t)x);
    const int32_t ra_tmp = fx_sat_shl0(x, za_headroom_plus_1 - 1);
    const int32_t ra = fx_sat_shl0(fx_mul(ra_tmp, sqrt_half), 1);
    const int32_t za_pow2 =
        fx_sat_add(fx_sat_shl0(in_bits - za_headroom_plus_1, 31 - acc_bits), shifted_quarter);
    const int32_t zb = fx_mul(x, sqrt_half);
    const int zb_headroom = __builtin_clz((uint32_t)zb) - 1;
    const int32_t rb = fx_sat_shl0(x, zb_headroom);
    const int64_t zb_d = (int64_t)fx_sat_shl0(in_bits - zb_headroom, 31 - acc_bits) -
                         shifted_quarter;
    const int32_t zb_pow2 = zb_d < INT32_MIN ? INT32_MIN : (int32_t)zb_d;
    const int32_t r = ra < rb ? ra : rb;
    const int32_t z_pow2 = za_pow2 > zb_pow2 ? za_pow2 : zb_pow2;
    const int64_t ps = (int64_t)r + sqrt_sqrt_half;
    const int32_t p = (int32_t)((ps + (ps >= 0 ? 1 : -1)) / 2);
    int32_t q = fx_sub(r, sqrt_sqrt_half);
    q = fx_add(q, q);
    const int32_t common_sq = fx_mul(q, q);
    const int32_t num = fx_add(fx_mul(q, r), fx_mul(fx_mul(q, common_sq), alpha_n));
    const int32_t denom_minus_one =
        fx_add(fx_mul(p, fx_add(fx_add(alpha_i, q), fx_mul(alpha_d, common_sq))),
               fx_mul(alpha_f, q));
    const int32_t recip = mp_one_over_one_plus_x(denom_minus_one);
    const int32_t num_scaled = mp_rounding_divide_by_pot(num, acc_bits);
    const int32_t sum = fx_add(fx_mul(z_pow2, log_2), fx_mul(num_scaled, recip));
    return fx_sat_shl0(sum, acc_bits - SM_DIFF_BITS);
}

/* TensorFlow Lite's LogSoftmaxQuantized of rows x depth 8-bit values. */
static void log_softmax_q8_rows(const log_softmax_q8 *q, const void *in, void *out, size_t rows,
                                size_t depth, bool s8)
{
    const int32_t qmin = s8 ? INT8_MIN : 0, qmax = s8 ? INT8_MAX : UINT8_MAX;
    const int out_shift = 31 - SM_DIFF_BITS - 4;
    for (size_t r = 0; r < rows; r++) {
        const int8_t *xs = (const int8_t *)in + r * depth;
        const uint8_t *xu = (const uint8_t *)in + r * depth;
        int32_t mx = qmin;
        for (size_t c = 0; c < depth; c++) {
            int32_t v = s8 ? xs[c] : xu[c];
            mx = v > mx ? v : mx;
        }
        int32_t sum = 0; /* Q12.19 */
        for (size_t c = 0; c < depth; c++) {
            int32_t diff = (s8 ? xs[c] : xu[c]) - mx;
            if (diff >= q->diff_min)
                sum = fx_add(sum, mp_rounding_divide_by_pot(
                                      fx_exp_on_negative(mp_multiply_by_quantized_multiplier(
                                          diff, q->multiplier, q->left_shift)),
                                      SM_ACC_BITS));
        }
        const int32_t log_sum = fx_log_q12_to_q5(sum);
        const int32_t reversed = mp_multiply_by_quantized_multiplier(
            fx_add(log_sum, INT32_MIN), q->reverse_multiplier, q->reverse_shift);
        const int32_t adjusted_min = q->diff_min - 1 > reversed ? q->diff_min - 1 : reversed;
        for (size_t c = 0; c < depth; c++) {
            int32_t diff = (s8 ? xs[c] : xu[c]) - mx, v = qmin;
            if (diff > adjusted_min) {
                const int32_t d5 =
                    mp_multiply_by_quantized_multiplier(diff, q->multiplier, q->left_shift);
                v = mp_rounding_divide_by_pot(fx_sub(d5, log_sum), out_shift) + q->zero_point;
                v = v < qmin ? qmin : (v > qmax ? qmax : v);
            }
            if (s8)
                ((int8_t *)out)[r * depth + c] = (int8_t)v;
            else
                ((uint8_t *)out)[r * depth + c] = (uint8_t)v;
        }
    }
}

/* The dtypes and quantization TensorFlow Lite's Prepare requires, and the parameters
 * (PreprocessLogSoftmaxScalingExp, CalculateInputRadius) into q when not NULL. */
static mp_status log_softmax_q8_init(mp_node *n, log_softmax_q8 *q)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    float si, so;
    int32_t zo;
    mp_status st = sm_q8_io(n, &si, &so, &zo);
    if (st != MP_OK)
        return st;
    const int32_t want_zp = in->dtype == MP_DT_INT8 ? 127 : 255;
    if (so != 16.0f / 256 || zo != want_zp)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "output '%s' has scale %g and zero point %d; 8-bit LOG_SOFTMAX "
                            "produces scale 16/256 and zero point %d",
                            mp_tname(out), (double)so, zo, want_zp);
    double real = (double)si * (double)(1 << (31 - SM_DIFF_BITS));
    if (real > 2147483647.0)
        real = 2147483647.0;
    log_softmax_q8 p = {.zero_point = want_zp};
    bool ok = real > 1.0 && mp_quantize_multiplier(real, &p.multiplier, &p.left_shift) &&
              p.left_shift >= 1 && p.left_shift <= 30;
    double reverse = 0.0;
    if (ok) {
        reverse = (double)(1u << (31 - p.left_shift)) / (double)p.multiplier;
        ok = reverse > 0.0 && reverse < 1.0 &&
             mp_quantize_multiplier(reverse, &p.reverse_multiplier, &p.reverse_shift) &&
             p.reverse_shift <= 0;
    }
    if (!ok)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input scale %g of '%s' is out of 8-bit LOG_SOFTMAX's range (its "
                            "scale times 2^26 must be above 1)", (double)si, mp_tname(in));
    const double radius = (double)((1 << SM_DIFF_BITS) - 1) *
                          (double)(1LL << (31 - SM_DIFF_BITS)) / (double)(1LL << p.left_shift);
    p.diff_min = -(int32_t)floor(radius);
    if (q)
        *q = p;
    return MP_OK;
}

static mp_status log_softmax_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    if (mp_dtype_is_q8(in->dtype))
        st = log_softmax_q8_init(n, NULL);
    else
        st = mp_node_check_f32_io(n);
    if (st != MP_OK)
        return st;
    if (in->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is a scalar (rank 0); needs rank >= 1",
                            mp_tname(in));
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

static mp_status log_softmax_prepare(mp_node *n)
{
    if (!mp_dtype_is_q8(n->in[0]->dtype))
        return MP_OK;
    log_softmax_q8 *q = mp_node_state(n, sizeof *q);
    return q ? log_softmax_q8_init(n, q) : MP_ERR_NOMEM;
}

static void log_softmax_release(mp_node *n)
{
    mp_mem_free(n->mem, n->state);
    n->state = NULL;
}

static mp_status log_softmax_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    const size_t depth = (size_t)in->dims[in->rank - 1];
    const size_t rows = depth ? mp_tensor_elements(in) / depth : 0;
    if (mp_dtype_is_q8(in->dtype)) {
        if (!n->state)
            return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
        log_softmax_q8_rows(n->state, in->data, n->out[0]->data, rows, depth,
                            in->dtype == MP_DT_INT8);
        return MP_OK;
    }
    const float *x = in->data;
    float *y = n->out[0]->data;
    for (size_t r = 0; r < rows; r++, x += depth, y += depth) {
        float mx = -INFINITY;
        for (size_t c = 0; c < depth; c++)
            mx = x[c] > mx ? x[c] : mx;
        float sum = 0.0f;
        for (size_t c = 0; c < depth; c++)
            sum += expf(x[c] - mx);
        const float log_sum = logf(sum);
        for (size_t c = 0; c < depth; c++)
            y[c] = x[c] - mx - log_sum;
    }
    return MP_OK;
}

const mp_kernel mp_kernels_softmax[] = {
    {.opcode = MP_OP_LOG_SOFTMAX, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = log_softmax_infer, .prepare = log_softmax_prepare, .run = log_softmax_run,
     .release = log_softmax_release},
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
