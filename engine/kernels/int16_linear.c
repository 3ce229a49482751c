/* 16x8 FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D (int16.h): TensorFlow Lite's reference
 * integer kernels for int16 activations and int8 weights, bit for bit, in plain C.
 *
 * Every output value is sum(input * weight) over its window (the input's zero point is 0,
 * the weights symmetric), plus the bias, requantized by the output channel's multiplier
 * (QuantizeMultiplier of input scale * weight scale / output scale, in double; a per-tensor
 * FULLY_CONNECTED multiplies the two scales in float first, as GetQuantizedConvolutionMultipler)
 * and clamped to the fused activation's range. Which arithmetic depends on the bias, as in
 * conv.cc / fully_connected.cc: an int64 bias (DEPTHWISE_CONV_2D: always) accumulates in
 * int64 and requantizes with MultiplyByQuantizedMultiplier on int64 (15-bit multiplier, one
 * rounding); an int32 bias, or none, accumulates in int32 (wrapping) and requantizes with the
 * int32 MultiplyByQuantizedMultiplier. The run checks every tensor's size against the
 * geometry before reading; overflow wraps instead of being undefined. */
#include "engine/kernels/int16.h"

#include <stdio.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

/* Loads through memcpy: constants may sit unaligned in the model's bytes. */
static inline int32_t ld16(const int16_t *p, size_t i)
{
    int16_t v;
    memcpy(&v, p + i, sizeof v);
    return v;
}

static int64_t bias_at(const mp_tensor *b, size_t i)
{
    if (b->dtype == MP_DT_INT64) {
        int64_t v;
        memcpy(&v, (const int64_t *)b->data + i, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, (const int32_t *)b->data + i, sizeof v);
    return v;
}

static const mp_tensor *bias_of(const mp_node *n)
{
    return n->n_in > 2 ? n->in[2] : NULL;
}

mp_status mp_i16_activation(mp_node *n, const mp_tensor *t, const char *role, float *scale)
{
    if (t->dtype != MP_DT_INT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s; with i16 input '%s' it must "
                            "be i16", role, mp_tname(t), mp_dtype_name(t->dtype),
                            mp_tname(n->in[0]));
    int32_t zp;
    mp_status st = mp_node_qparams(n, t, scale, &zp);
    if (st != MP_OK)
        return st;
    if (zp != 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "i16 %s '%s' has zero point %d; TensorFlow Lite's int16 kernels take "
                            "only 0",
                            role, mp_tname(t), zp);
    return MP_OK;
}

mp_status mp_i16_weighted_check(mp_node *n, const char *weights_word, int32_t out_channels,
                                int32_t channel_dim)
{
    const mp_tensor *w = n->in[1], *b = bias_of(n), *out = n->out[0];
    float in_scale, out_scale;
    mp_status st;
    if ((st = mp_i16_activation(n, n->in[0], "input", &in_scale)) != MP_OK ||
        (st = mp_i16_activation(n, out, "output", &out_scale)) != MP_OK)
        return st;
    if (w->dtype != MP_DT_INT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s; 16x8 nodes take i8 %s",
                            weights_word, mp_tname(w), mp_dtype_name(w->dtype), weights_word);
    const mp_quant *wq = &w->info->quant;
    if (wq->count != 1 && !(wq->count == out_channels && wq->quantized_dimension == channel_dim))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "i8 %s '%s' has %d scales along dimension %d; expected one, or %d "
                            "(one per output channel) along dimension %d",
                            weights_word, mp_tname(w), wq->count, wq->quantized_dimension,
                            out_channels, channel_dim);
    for (int32_t c = 0; wq->zero_point && c < wq->count; c++)
        if (wq->zero_point[c] != 0)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "i8 %s '%s' has zero point %lld; 16x8 weights are symmetric",
                                weights_word, mp_tname(w), (long long)wq->zero_point[c]);
    bool depthwise = n->opcode == MP_OP_DEPTHWISE_CONV_2D;
    if (b && b->dtype != MP_DT_INT64 && (depthwise || b->dtype != MP_DT_INT32))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "bias '%s' is %s; with i16 input '%s' it must be %s", mp_tname(b),
                            mp_dtype_name(b->dtype), mp_tname(n->in[0]),
                            depthwise ? "i64" : "i64 or i32");
    int32_t lo, hi, act = n->opt->activation;
    if (!mp_activation_range_q(act, out_scale, 0, MP_DT_INT16, &lo, &hi))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "fused activation %d has no integer range on i16 output '%s'", act,
                            mp_tname(out));
    return MP_OK;
}

/* Requantization of output channel c: multiplier and shift, and the clamp. */
typedef struct i16_requant {
    float in_scale, out_scale;
    const mp_quant *wq;
    bool wide;           /* int64 accumulator and requantization */
    bool float_product;  /* per-tensor FULLY_CONNECTED: in_scale * w_scale in float */
    int32_t lo, hi;
} i16_requant;

static mp_status requant_init(mp_node *n, const char *weights_word, int32_t out_channels,
                              int32_t channel_dim, i16_requant *r)
{
    mp_status st = mp_i16_weighted_check(n, weights_word, out_channels, channel_dim);
    if (st != MP_OK)
        return st;
    int32_t zp;
    mp_node_qparams(n, n->in[0], &r->in_scale, &zp);
    mp_node_qparams(n, n->out[0], &r->out_scale, &zp);
    r->wq = &n->in[1]->info->quant;
    const mp_tensor *b = bias_of(n);
    r->wide = n->opcode == MP_OP_DEPTHWISE_CONV_2D || (b && b->dtype == MP_DT_INT64);
    r->float_product = n->opcode == MP_OP_FULLY_CONNECTED && r->wq->count == 1;
    mp_activation_range_q(n->opt->activation, r->out_scale, 0, MP_DT_INT16, &r->lo, &r->hi);
    return MP_OK;
}

/* Channel c's multiplier; false (after mp_node_fail) when the int64 requantization cannot
 * take it (a scale ratio of 2^14 or more). */
static bool requant_channel(mp_node *n, const i16_requant *r, int32_t c, int32_t *mult,
                            int *shift)
{
    float ws = r->wq->scale[r->wq->count == 1 ? 0 : c];
    double real = r->float_product ? (double)(r->in_scale * ws) / (double)r->out_scale
                                   : (double)r->in_scale * (double)ws / (double)r->out_scale;
    if (!mp_quantize_multiplier(real, mult, shift) || (r->wide && *shift > 14)) {
        mp_node_fail(n, MP_ERR_UNSUPPORTED,
                     "output channel %d: input scale * weight scale / output scale = %g, which "
                     "the int16 requantization cannot take",
                     c, real);
        return false;
    }
    return true;
}

/* The requantized, clamped value of an accumulator. */
static inline int16_t requant_apply(const i16_requant *r, uint64_t acc, int32_t mult, int shift)
{
    int32_t v;
    if (r->wide) {
        int64_t a = acc <= (uint64_t)INT64_MAX ? (int64_t)acc
                                                : (int64_t)(acc - ((uint64_t)1 << 63)) + INT64_MIN;
        v = mp_multiply_by_quantized_multiplier_i64(a, mult, shift);
    } else {
        uint32_t u = (uint32_t)acc; /* the int32 accumulator: the low 32 bits */
        int32_t a = u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) + INT32_MIN;
        v = mp_multiply_by_quantized_multiplier(a, mult, shift);
    }
    return (int16_t)(v < r->lo ? r->lo : (v > r->hi ? r->hi : v));
}

/* a * b * c ... as size_t; false on overflow or a negative factor. */
static bool elems_of(size_t *out, int count, const int64_t *f)
{
    size_t p = 1;
    *out = 0;
    for (int i = 0; i < count; i++) {
        if (f[i] < 0 || (f[i] > 0 && p > SIZE_MAX / (size_t)f[i]))
            return false;
        p *= (size_t)f[i];
    }
    *out = p;
    return true;
}

/* Tensor t holds exactly `want` elements. */
static mp_status expect_elems(mp_node *n, const mp_tensor *t, const char *role, bool ok,
                              size_t want)
{
    if (ok && mp_tensor_elements(t) == want && (want == 0 || t->data))
        return MP_OK;
    return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' does not hold the %zu elements the geometry "
                        "reads", role, mp_tname(t), ok ? want : (size_t)0);
}

mp_status mp_i16_conv_run(mp_node *n, const mp_i16_conv_shape *g)
{
    i16_requant r;
    mp_status st = requant_init(n, "filter", g->out_c, g->depthwise ? 3 : 0, &r);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *f = n->in[1], *b = bias_of(n);
    mp_tensor *out = n->out[0];
    size_t ni, nf, no;
    const int64_t di[4] = {g->batch, g->in_h, g->in_w, g->in_c};
    const int64_t df[4] = {g->depthwise ? 1 : g->out_c, g->k_h, g->k_w,
                           g->depthwise ? g->out_c : g->group_in};
    const int64_t dout[4] = {g->batch, g->out_h, g->out_w, g->out_c};
    const bool ok_i = elems_of(&ni, 4, di), ok_f = elems_of(&nf, 4, df),
               ok_o = elems_of(&no, 4, dout);
    if ((st = expect_elems(n, in, "input", ok_i, ni)) != MP_OK ||
        (st = expect_elems(n, f, "filter", ok_f, nf)) != MP_OK ||
        (st = expect_elems(n, out, "output", ok_o, no)) != MP_OK ||
        (b && (st = expect_elems(n, b, "bias", true, (size_t)g->out_c)) != MP_OK))
        return st;
    if (no == 0)
        return MP_OK;
    if (g->group_out < 1 || g->group_in < 1 ||
        (int64_t)g->in_c < (int64_t)(g->out_c / g->group_out) * g->group_in)
        return mp_node_fail(n, MP_ERR_SHAPE, "channel groups do not fit input '%s'",
                            mp_tname(in));
    const int16_t *x = in->data;
    const int8_t *w = f->data;
    int16_t *y = out->data;
    for (int32_t oc = 0; oc < g->out_c; oc++) {
        int32_t mult;
        int shift;
        if (!requant_channel(n, &r, oc, &mult, &shift))
            return MP_ERR_UNSUPPORTED;
        const int32_t ic0 = (oc / g->group_out) * g->group_in; /* the group's first channel */
        const uint64_t bias = b ? (uint64_t)bias_at(b, (size_t)oc) : 0;
        for (int32_t bt = 0; bt < g->batch; bt++)
            for (int32_t oy = 0; oy < g->out_h; oy++)
                for (int32_t ox = 0; ox < g->out_w; ox++) {
                    uint64_t acc = 0;
                    const int64_t y0 = (int64_t)oy * g->stride_h - g->pad_top;
                    const int64_t x0 = (int64_t)ox * g->stride_w - g->pad_left;
                    for (int32_t ky = 0; ky < g->k_h; ky++) {
                        const int64_t iy = y0 + (int64_t)ky * g->dil_h;
                        if (iy < 0 || iy >= g->in_h)
                            continue;
                        for (int32_t kx = 0; kx < g->k_w; kx++) {
                            const int64_t ix = x0 + (int64_t)kx * g->dil_w;
                            if (ix < 0 || ix >= g->in_w)
                                continue;
                            const size_t xi =
                                (((size_t)bt * (size_t)g->in_h + (size_t)iy) * (size_t)g->in_w +
                                 (size_t)ix) * (size_t)g->in_c + (size_t)ic0;
                            if (g->depthwise) {
                                size_t wi = ((size_t)ky * (size_t)g->k_w + (size_t)kx) *
                                            (size_t)g->out_c + (size_t)oc;
                                acc += (uint64_t)(int64_t)(ld16(x, xi) * (int32_t)w[wi]);
                                continue;
                            }
                            const size_t wi =
                                (((size_t)oc * (size_t)g->k_h + (size_t)ky) * (size_t)g->k_w +
                                 (size_t)kx) * (size_t)g->group_in;
                            for (int32_t ic = 0; ic < g->group_in; ic++)
                                acc += (uint64_t)(int64_t)(ld16(x, xi + (size_t)ic) *
                                                           (int32_t)w[wi + (size_t)ic]);
                        }
                    }
                    const size_t yi =
                        (((size_t)bt * (size_t)g->out_h + (size_t)oy) * (size_t)g->out_w +
                         (size_t)ox) * (size_t)g->out_c + (size_t)oc;
                    y[yi] = requant_apply(&r, acc + bias, mult, shift);
                }
    }
    return MP_OK;
}

mp_status mp_i16_fc_run(mp_node *n, size_t batch, size_t in_c, size_t out_c)
{
    i16_requant r;
    if (out_c > INT32_MAX)
        return mp_node_fail(n, MP_ERR_SHAPE, "too many output channels");
    mp_status st = requant_init(n, "weights", (int32_t)out_c, 0, &r);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *wt = n->in[1], *b = bias_of(n);
    mp_tensor *out = n->out[0];
    size_t ni, nw, no;
    const int64_t di[2] = {(int64_t)batch, (int64_t)in_c}, dw[2] = {(int64_t)out_c, (int64_t)in_c};
    const int64_t dout[2] = {(int64_t)batch, (int64_t)out_c};
    const bool ok_i = elems_of(&ni, 2, di), ok_w = elems_of(&nw, 2, dw),
               ok_o = elems_of(&no, 2, dout);
    if ((st = expect_elems(n, in, "input", ok_i, ni)) != MP_OK ||
        (st = expect_elems(n, wt, "weights", ok_w, nw)) != MP_OK ||
        (st = expect_elems(n, out, "output", ok_o, no)) != MP_OK ||
        (b && (st = expect_elems(n, b, "bias", true, out_c)) != MP_OK))
        return st;
    if (no == 0)
        return MP_OK;
    const int16_t *x = in->data;
    const int8_t *w = wt->data;
    int16_t *y = out->data;
    for (size_t o = 0; o < out_c; o++) {
        int32_t mult;
        int shift;
        if (!requant_channel(n, &r, (int32_t)o, &mult, &shift))
            return MP_ERR_UNSUPPORTED;
        const int8_t *wr = w + o * in_c;
        const uint64_t bias = b ? (uint64_t)bias_at(b, o) : 0;
        for (size_t bt = 0; bt < batch; bt++) {
            uint64_t acc = 0;
            for (size_t i = 0; i < in_c; i++)
                acc += (uint64_t)(int64_t)(ld16(x, bt * in_c + i) * (int32_t)wr[i]);
            y[bt * out_c + o] = requant_apply(&r, acc + bias, mult, shift);
        }
    }
    return MP_OK;
}
