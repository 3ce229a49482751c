/* 16x8 FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, BATCH_MATMUL and TRANSPOSE_CONV (int16.h):
 * TensorFlow Lite's reference integer kernels for int16 activations and int8 weights, bit for
 * bit, in plain C.
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
 * geometry before reading; overflow wraps instead of being undefined.
 *
 * Also BATCH_MATMUL (int16 lhs and rhs, batch_matmul.cc EvalInt16: int64 sums, the int64
 * requantization of lhs_scale * rhs_scale / output scale, no activation) and TRANSPOSE_CONV
 * (transpose_conv.cc's 16x8 path: int8 weights, an int64 bias, int64 sums, per-channel
 * requantization on the int64 path), each output gathering the input pixels and taps the
 * reference scatters into it. */
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

/* The node's fused activation has an integer range on the int16 output out of scale s. */
static mp_status i16_act_check(mp_node *n, const mp_tensor *out, float s)
{
    int32_t lo, hi, act = n->opt->activation;
    if (!mp_activation_range_q(act, s, 0, MP_DT_INT16, &lo, &hi))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "fused activation %d has no integer range on i16 output '%s'", act,
                            mp_tname(out));
    return MP_OK;
}

/* int8 weights w of a 16x8 node: symmetric, one scale or out_channels along channel_dim. */
static mp_status i16_weights_check(mp_node *n, const mp_tensor *w, const char *weights_word,
                                   int32_t out_channels, int32_t channel_dim)
{
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
    if ((st = i16_weights_check(n, w, weights_word, out_channels, channel_dim)) != MP_OK)
        return st;
    bool depthwise = n->opcode == MP_OP_DEPTHWISE_CONV_2D;
    if (b && b->dtype != MP_DT_INT64 && (depthwise || b->dtype != MP_DT_INT32))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "bias '%s' is %s; with i16 input '%s' it must be %s", mp_tname(b),
                            mp_dtype_name(b->dtype), mp_tname(n->in[0]),
                            depthwise ? "i64" : "i64 or i32");
    return i16_act_check(n, out, out_scale);
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

/* The tensors of a convolution of geometry g against it: input [batch, in_h, in_w, in_c],
 * weights of dimensions df (named weights_word), bias [out_c] when present, output [batch,
 * out_h, out_w, out_c] (*no elements). */
static mp_status conv_sizes(mp_node *n, const mp_i16_conv_shape *g, const mp_tensor *in,
                            const mp_tensor *f, const char *weights_word, const int64_t df[4],
                            const mp_tensor *b, const mp_tensor *out, size_t *no)
{
    size_t ni, nf;
    const int64_t di[4] = {g->batch, g->in_h, g->in_w, g->in_c};
    const int64_t dout[4] = {g->batch, g->out_h, g->out_w, g->out_c};
    const bool ok_i = elems_of(&ni, 4, di), ok_f = elems_of(&nf, 4, df),
               ok_o = elems_of(no, 4, dout);
    mp_status st;
    if ((st = expect_elems(n, in, "input", ok_i, ni)) != MP_OK ||
        (st = expect_elems(n, f, weights_word, ok_f, nf)) != MP_OK ||
        (st = expect_elems(n, out, "output", ok_o, *no)) != MP_OK ||
        (b && (st = expect_elems(n, b, "bias", true, (size_t)g->out_c)) != MP_OK))
        return st;
    return MP_OK;
}

mp_status mp_i16_conv_run(mp_node *n, const mp_i16_conv_shape *g)
{
    i16_requant r;
    mp_status st = requant_init(n, "filter", g->out_c, g->depthwise ? 3 : 0, &r);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *f = n->in[1], *b = bias_of(n);
    mp_tensor *out = n->out[0];
    size_t no;
    const int64_t df[4] = {g->depthwise ? 1 : g->out_c, g->k_h, g->k_w,
                           g->depthwise ? g->out_c : g->group_in};
    if ((st = conv_sizes(n, g, in, f, "filter", df, b, out, &no)) != MP_OK)
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

/* ---- BATCH_MATMUL (batch_matmul.cc EvalInt16: reference_ops::BatchMatMul<int16, int64>) ---- */

/* lhs, rhs and output int16 of one scale and zero point 0 each; the requantization of
 * lhs_scale * rhs_scale (their product in float, as GetQuantizedConvolutionMultipler) / the
 * output's, as a one-channel i16_requant on the int64 path over the int16 range (BATCH_MATMUL
 * fuses no activation). */
static mp_status matmul_requant(mp_node *n, i16_requant *r, int32_t *mult, int *shift)
{
    const mp_tensor *b = n->in[1];
    float rhs_scale;
    mp_status st;
    if ((st = mp_i16_activation(n, n->in[0], "lhs", &r->in_scale)) != MP_OK ||
        (st = mp_i16_activation(n, b, "rhs", &rhs_scale)) != MP_OK ||
        (st = mp_i16_activation(n, n->out[0], "output", &r->out_scale)) != MP_OK)
        return st;
    r->wq = &b->info->quant; /* one scale: mp_i16_activation took it */
    r->wide = r->float_product = true;
    r->lo = INT16_MIN;
    r->hi = INT16_MAX;
    return requant_channel(n, r, 0, mult, shift) ? MP_OK : MP_ERR_UNSUPPORTED;
}

mp_status mp_i16_matmul_check(mp_node *n)
{
    i16_requant r;
    int32_t mult;
    int shift;
    return matmul_requant(n, &r, &mult, &shift);
}

mp_status mp_i16_matmul_run(mp_node *n, const mp_i16_matmul_shape *g)
{
    i16_requant r;
    int32_t mult;
    int shift;
    mp_status st = matmul_requant(n, &r, &mult, &shift);
    if (st != MP_OK)
        return st;
    const mp_tensor *a = n->in[0], *b = n->in[1];
    mp_tensor *out = n->out[0];
    const size_t m = g->m, k = g->k, nn = g->n;
    size_t na, nb, no;
    const int64_t da[3] = {(int64_t)g->lhs_batches, (int64_t)m, (int64_t)k};
    const int64_t db[3] = {(int64_t)g->rhs_batches, (int64_t)k, (int64_t)nn};
    const int64_t dout[3] = {(int64_t)g->batches, (int64_t)m, (int64_t)nn};
    const bool ok_a = elems_of(&na, 3, da), ok_b = elems_of(&nb, 3, db),
               ok_o = elems_of(&no, 3, dout);
    if ((st = expect_elems(n, a, "lhs", ok_a, na)) != MP_OK ||
        (st = expect_elems(n, b, "rhs", ok_b, nb)) != MP_OK ||
        (st = expect_elems(n, out, "output", ok_o, no)) != MP_OK)
        return st;
    if (no == 0)
        return MP_OK;
    const int16_t *x = a->data, *w = b->data;
    int16_t *y = out->data;
    /* element (i, kk) of an lhs batch and (kk, j) of an rhs batch, adj_x / adj_y read
     * transposed */
    const size_t ai = g->adj_x ? 1 : k, ak = g->adj_x ? m : 1;
    const size_t bk = g->adj_y ? 1 : nn, bj = g->adj_y ? k : 1;
    for (size_t ob = 0; ob < g->batches; ob++) {
        size_t lb, rb;
        g->batch(g->ctx, ob, &lb, &rb);
        const size_t a0 = lb * m * k, b0 = rb * k * nn;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < nn; j++) {
                uint64_t acc = 0;
                for (size_t kk = 0; kk < k; kk++)
                    acc += (uint64_t)(int64_t)(ld16(x, a0 + i * ai + kk * ak) *
                                               ld16(w, b0 + kk * bk + j * bj));
                y[(ob * m + i) * nn + j] = requant_apply(&r, acc, mult, shift);
            }
    }
    return MP_OK;
}

/* ---- TRANSPOSE_CONV (transpose_conv.cc EvalQuantizedPerChannel16x8) ------------------------ */

/* TRANSPOSE_CONV's inputs: output_shape, weights [O,KH,KW,I], input, optional bias. */
static const mp_tensor *tconv_bias_of(const mp_node *n)
{
    return n->n_in > 3 ? n->in[3] : NULL;
}

mp_status mp_i16_tconv_check(mp_node *n)
{
    const mp_tensor *in = n->in[2], *w = n->in[1], *b = tconv_bias_of(n), *out = n->out[0];
    float s;
    mp_status st;
    if (out->dtype != MP_DT_INT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; with i16 input '%s' it "
                            "must be i16", mp_tname(out), mp_dtype_name(out->dtype),
                            mp_tname(in));
    if ((st = mp_i16_activation(n, in, "input", &s)) != MP_OK ||
        (st = mp_i16_activation(n, out, "output", &s)) != MP_OK ||
        (st = i16_weights_check(n, w, "weights", w->rank > 0 ? w->dims[0] : 0, 0)) != MP_OK)
        return st;
    if (b && b->dtype != MP_DT_INT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "bias '%s' is %s; with i16 input '%s' it "
                            "must be i64", mp_tname(b), mp_dtype_name(b->dtype), mp_tname(in));
    return i16_act_check(n, out, s);
}

/* The input pixel coordinates and taps that reach output coordinate o along one axis:
 * i * stride - pad + f = o, f in [0, k), i in [0, in): f0, the first such tap (f = f0 +
 * t * stride for t = 0, 1, ...), and i0 its input coordinate (decreasing by one per step). */
static void tconv_taps(int64_t o, int32_t pad, int32_t stride, int32_t k, int32_t in,
                       int32_t *f0, int64_t *i0)
{
    int64_t r = (o + pad) % stride; /* o + pad >= 0 */
    *f0 = (int32_t)r;
    *i0 = (o + pad - r) / stride;
    /* skip taps whose input coordinate is beyond the input */
    if (*i0 >= in) {
        int64_t skip = *i0 - (in - 1);
        *f0 = skip * stride + r < k ? (int32_t)(skip * stride + r) : k;
        *i0 = in - 1;
    }
}

mp_status mp_i16_tconv_run(mp_node *n, const mp_i16_conv_shape *g)
{
    mp_status st = mp_i16_tconv_check(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[2], *f = n->in[1], *b = tconv_bias_of(n);
    mp_tensor *out = n->out[0];
    i16_requant r = {.wq = &f->info->quant, .wide = true};
    int32_t zp;
    mp_node_qparams(n, in, &r.in_scale, &zp);
    mp_node_qparams(n, out, &r.out_scale, &zp);
    mp_activation_range_q(n->opt->activation, r.out_scale, 0, MP_DT_INT16, &r.lo, &r.hi);
    size_t no;
    const int64_t df[4] = {g->out_c, g->k_h, g->k_w, g->in_c};
    if ((st = conv_sizes(n, g, in, f, "weights", df, b, out, &no)) != MP_OK)
        return st;
    if (no == 0)
        return MP_OK;
    if (g->stride_h < 1 || g->stride_w < 1 || g->pad_top < 0 || g->pad_left < 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "stride %dx%d or padding %d, %d is not valid",
                            g->stride_w, g->stride_h, g->pad_left, g->pad_top);
    const int16_t *x = in->data;
    const int8_t *w = f->data;
    int16_t *y = out->data;
    const size_t ic = (size_t)g->in_c;
    /* each output value gathers what TensorFlow Lite's reference scatters into it: the
     * int64 sum of input * weight over the input pixels and taps reaching it (exact, so in
     * any order), plus the bias, requantized by its channel's multiplier */
    for (int32_t oc = 0; oc < g->out_c; oc++) {
        int32_t mult;
        int shift;
        if (!requant_channel(n, &r, oc, &mult, &shift))
            return MP_ERR_UNSUPPORTED;
        const uint64_t bias = b ? (uint64_t)bias_at(b, (size_t)oc) : 0;
        for (int32_t bt = 0; bt < g->batch; bt++)
            for (int32_t oy = 0; oy < g->out_h; oy++) {
                int32_t fy0;
                int64_t iy0;
                tconv_taps(oy, g->pad_top, g->stride_h, g->k_h, g->in_h, &fy0, &iy0);
                for (int32_t ox = 0; ox < g->out_w; ox++) {
                    int32_t fx0;
                    int64_t ix0;
                    tconv_taps(ox, g->pad_left, g->stride_w, g->k_w, g->in_w, &fx0, &ix0);
                    uint64_t acc = 0;
                    for (int64_t fy = fy0, iy = iy0; fy < g->k_h && iy >= 0;
                         fy += g->stride_h, iy--)
                        for (int64_t fx = fx0, ix = ix0; fx < g->k_w && ix >= 0;
                             fx += g->stride_w, ix--) {
                            const size_t xi = (((size_t)bt * (size_t)g->in_h + (size_t)iy) *
                                                   (size_t)g->in_w + (size_t)ix) * ic;
                            const size_t wi = (((size_t)oc * (size_t)g->k_h + (size_t)fy) *
                                                   (size_t)g->k_w + (size_t)fx) * ic;
                            for (size_t c = 0; c < ic; c++)
                                acc += (uint64_t)(int64_t)(ld16(x, xi + c) *
                                                           (int32_t)w[wi + c]);
                        }
                    const size_t yi = (((size_t)bt * (size_t)g->out_h + (size_t)oy) *
                                           (size_t)g->out_w + (size_t)ox) * (size_t)g->out_c +
                                      (size_t)oc;
                    y[yi] = requant_apply(&r, acc + bias, mult, shift);
                }
            }
    }
    return MP_OK;
}
