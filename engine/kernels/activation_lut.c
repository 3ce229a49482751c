/* Kernels: elementwise activations whose 8-bit form is a 256-entry table built at prepare
 * (HARD_SWISH).
 *
 * float32: XNNPACK's hardswish, x * clamp(x / 6 + 1 / 2, 0, 1), within a few ulp of TensorFlow
 * Lite's reference x * min(6, max(0, x + 3)) / 6 (not bit for bit: the operations differ).
 *
 * int8 / uint8 (one scale and zero point each side): an 8-bit input has 256 values, so
 * prepare computes the output of each once and run looks it up. Each entry is TensorFlow
 * Lite's reference integer kernel (reference_ops::HardSwish with the HardSwishParams of
 * activations.cc HardSwishPrepare) applied to that value: the input on a "high-res" scale
 * (q - zp_in) * 2^7 in int16; a "relu-ish" factor in [0, 1] from it with the 16-bit fixed-point
 * multiplier of in_scale / 128 / (3 / 32768) (saturating left shift, gemmlowp's rounding
 * doubling high multiply, rounding right shift, then (v + 2^15) >> 1); the input on the
 * output scale with the multiplier of in_scale / 128 / out_scale; their product by the
 * truncating doubling high multiply; the rounding right shift by the output exponent;
 * + zp_out, saturated. Bit-exact with that reference (and so with its optimized kernel,
 * which vectorizes the same steps); within 1 LSB of quantize(hardswish(dequantize(q))) in
 * float. Like TensorFlow Lite, a positive output exponent (in_scale > 128 * out_scale) is
 * refused. */
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

#include <math.h>
#include <stdint.h>
#include <xnnpack.h>

typedef struct lut_state {
    xnn_operator_t op; /* float32 */
    size_t count;      /* elements bound at the last setup */
    uint8_t lut[256];  /* 8-bit: output byte for each input byte */
} lut_state;

/* HardSwishParams: 16-bit fixed-point multipliers and their exponents. */
typedef struct hswish_params {
    int32_t in_zp, out_zp;
    int16_t out_mult, relu_mult;
    int out_exp, relu_exp;
} hswish_params;

/* TensorFlow Lite's DownScaleInt32ToInt16Multiplier: round the Q0.31 multiplier to Q0.15. */
static int16_t downscale_multiplier(int32_t m)
{
    if (m >= INT32_MAX - (1 << 15))
        return INT16_MAX;
    return (int16_t)((m + (1 << 15)) >> 16);
}

/* gemmlowp's 16-bit SaturatingRoundingDoublingHighMul: (a * b + nudge) / 2^15, truncated,
 * nudge 2^14 (or 1 - 2^14 for a negative product); INT16_MIN squared saturates. */
static int16_t srdhm16(int16_t a, int16_t b)
{
    if (a == INT16_MIN && b == INT16_MIN)
        return INT16_MAX;
    int32_t ab = (int32_t)a * b;
    int32_t nudge = ab >= 0 ? (1 << 14) : 1 - (1 << 14);
    return (int16_t)((ab + nudge) / (1 << 15));
}

/* The same without rounding (TFLite's SaturatingDoublingHighMul, like Arm's SQDMULH). */
static int16_t sdhm16(int16_t a, int16_t b)
{
    if (a == INT16_MIN && b == INT16_MIN)
        return INT16_MAX;
    return (int16_t)(((int32_t)a * b) / (1 << 15));
}

/* gemmlowp's RoundingDivideByPOT on int16 (ties away from zero), its mask truncated to 16
 * bits as there: exponents of 16 and more give what TensorFlow Lite's reference gives. */
static int16_t rdpot16(int16_t x, int exponent)
{
    const int16_t mask = (int16_t)((1LL << exponent) - 1);
    const int16_t remainder = (int16_t)(x & mask);
    const int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
    return (int16_t)((x >> exponent) + (remainder > threshold ? 1 : 0));
}

static int16_t sat_left_shift16(int16_t v, int amount)
{
    int64_t r = (int64_t)v * ((int64_t)1 << amount);
    return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}

/* HardSwishPrepare's parameters; false when TensorFlow Lite refuses them (output exponent
 * above 0) or a multiplier is not finite. The products are in float as there. */
static bool hswish_init(hswish_params *p, float in_scale, int32_t in_zp, float out_scale,
                        int32_t out_zp)
{
    const float hires_in_scale = (1.0f / 128.0f) * in_scale;
    const float relu_scale = 3.0f / 32768.0f;
    int32_t m;
    p->in_zp = in_zp;
    p->out_zp = out_zp;
    if (!mp_quantize_multiplier((double)(hires_in_scale / out_scale), &m, &p->out_exp))
        return false;
    p->out_mult = downscale_multiplier(m);
    if (p->out_exp > 0)
        return false;
    if (!mp_quantize_multiplier((double)(hires_in_scale / relu_scale), &m, &p->relu_exp))
        return false;
    p->relu_mult = downscale_multiplier(m);
    return true;
}

/* reference_ops::HardSwish of one quantized value q, saturated to [lo, hi]. */
static int32_t hswish_q(const hswish_params *p, int32_t q, int32_t lo, int32_t hi)
{
    const int16_t x = (int16_t)(q - p->in_zp);
    const int16_t hires = (int16_t)(x * (1 << 7));
    const int16_t preshift_out = srdhm16(hires, p->out_mult);
    int16_t relu = hires;
    if (p->relu_exp > 0)
        relu = sat_left_shift16(relu, p->relu_exp - 1);
    relu = srdhm16(relu, p->relu_mult);
    if (p->relu_exp > 0)
        relu = sat_left_shift16(relu, 1);
    if (p->relu_exp < 0)
        relu = rdpot16(relu, -p->relu_exp);
    relu = (int16_t)((relu + (1 << 15)) >> 1);
    const int16_t preshift = sdhm16(relu, preshift_out);
    int32_t y = rdpot16(preshift, -p->out_exp);
    y = (int16_t)(y + p->out_zp); /* int16 arithmetic, as the reference */
    return y < lo ? lo : (y > hi ? hi : y);
}

static mp_status hswish_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (in->dtype != MP_DT_FLOAT32 && !mp_dtype_is_q8(in->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32, i8, u8)",
                            mp_tname(in), mp_dtype_name(in->dtype));
    if (out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is %s",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_tname(in),
                            mp_dtype_name(in->dtype));
    if (mp_dtype_is_q8(in->dtype)) {
        float in_scale, out_scale;
        int32_t in_zp, out_zp;
        hswish_params p;
        if ((st = mp_node_qparams(n, in, &in_scale, &in_zp)) != MP_OK ||
            (st = mp_node_qparams(n, out, &out_scale, &out_zp)) != MP_OK)
            return st;
        if (!(in_scale > 0.0f) || !(out_scale > 0.0f) ||
            !hswish_init(&p, in_scale, in_zp, out_scale, out_zp))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "scales %g of '%s' and %g of '%s' are not supported (the output "
                                "scale must be at least the input's / 128)", (double)in_scale,
                                mp_tname(in), (double)out_scale, mp_tname(out));
    }
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

static mp_status hswish_prepare(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    lut_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    s->count = mp_tensor_elements(in);
    if (mp_dtype_is_q8(in->dtype)) {
        float in_scale, out_scale;
        int32_t in_zp, out_zp, lo, hi;
        hswish_params p;
        mp_node_qparams(n, in, &in_scale, &in_zp); /* infer checked them */
        mp_node_qparams(n, n->out[0], &out_scale, &out_zp);
        hswish_init(&p, in_scale, in_zp, out_scale, out_zp);
        mp_quant_dtype_range(in->dtype, &lo, &hi);
        for (int32_t b = 0; b < 256; b++) {
            int32_t q = in->dtype == MP_DT_INT8 ? (int32_t)(int8_t)(uint8_t)b : b;
            s->lut[b] = (uint8_t)hswish_q(&p, q, lo, hi);
        }
        return MP_OK;
    }
    enum xnn_status xs;
    if (!s->op) {
        xs = xnn_create_hardswish_nc_f32(1, 1, 1, 0, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "hardswish create");
        }
    }
    if (s->count == 0)
        return MP_OK;
    xs = xnn_setup_hardswish_nc_f32(s->op, s->count, in->data, n->out[0]->data, n->pool);
    if (xs != xnn_status_success) {
        s->count = 0;
        return mp_node_xnn_fail(n, xs, "hardswish setup");
    }
    return MP_OK;
}

static mp_status hswish_run(mp_node *n)
{
    lut_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->count == 0)
        return MP_OK;
    if (mp_dtype_is_q8(n->in[0]->dtype)) {
        const uint8_t *x = n->in[0]->data;
        uint8_t *y = n->out[0]->data;
        for (size_t i = 0; i < s->count; i++)
            y[i] = s->lut[x[i]];
        return MP_OK;
    }
    enum xnn_status xs = xnn_run_operator(s->op, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "hardswish run");
    return MP_OK;
}

static void hswish_release(mp_node *n)
{
    lut_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

const mp_kernel mp_kernels_activation_lut[] = {
    {.opcode = MP_OP_HARD_SWISH, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = hswish_infer, .prepare = hswish_prepare, .run = hswish_run,
     .release = hswish_release},
    {.opcode = -1},
};
