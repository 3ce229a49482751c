/* Kernel: TRANSPOSE_CONV (NHWC), TensorFlow Lite's transposed convolution (transpose_conv.cc).
 *
 * Inputs: output_shape (int32 [4]), weights [O,KH,KW,I], input [N,H,W,I], optional bias [O];
 * options padding, stride_w, stride_h and (newer schema) a fused activation. The output shape
 * is the value of input 0: known at prepare when it is a constant (or computed early), else
 * infer returns MP_ERR_DEFERRED and the shape waits for the run. Padding is TensorFlow Lite's:
 * the convolution this one transposes maps the output [OH,OW] to the input, so per axis
 *   conv_out = SAME ? ceil(out / stride) : (out - k + stride) / stride
 *   pad      = max((conv_out - 1) * stride + k - out, 0) / 2     (before; the rest after)
 * and input pixel (y, x) adds weights * value at output (y*stride - pad + fy, x*stride - pad
 * + fx), taps falling outside the output dropped.
 *   float32  XNNPACK's deconvolution2d_nhwc_f32 (filter OHWI, as TFLite's weights): padding
 *            top/left = pad, bottom/right and the adjustment chosen so XNNPACK's output size
 *            stride*(in-1) + adj + k - top - bottom equals output_shape; when that needs an
 *            adjustment >= stride, or the weights or bias are not constants, plain C as the
 *            reference. Weights may be float32 or, constant, int8 / uint8 / float16 (hybrid,
 *            dequantized once); bias float32 (or constant float16).
 *   int8     int8 weights symmetric, one scale or one per output channel (dimension 0), int32
 *            bias; uint8: uint8 weights of one scale and zero point, int32 bias. Plain C
 *            following TensorFlow Lite's reference integer TransposeConv exactly: int32 sums
 *            of (input - input_zp) * (weight - weight_zp) in the scratch (declared in infer),
 *            plus bias, MultiplyByQuantizedMultiplier per channel (quant_math.h), plus the
 *            output zero point, clamped to the activation's range. (XNNPACK's qs8/qu8
 *            deconvolution takes one weight scale and requantizes in float: not used.)
 *   int16    16x8: int16_linear.c (int8 weights, int64 bias; TensorFlow Lite's 16x8 path).
 * TANH and SIGN_BIT fused activations are refused.
 *
 * MediaPipe's custom Convolution2DTransposeBias (transpose_conv_bias.cc) is the same
 * transposed convolution, float32 only, with other inputs and its own output size: inputs
 * input [N,H,W,I], weights [O,KH,KW,I], bias [O] (all float32, the bias required), options
 * padding and strides (its custom options, TfLiteTransposeConvParams), no activation. Per axis
 *   total = SAME ? max(k - (in - 1) % stride - 1, 0) : 0
 *   out   = stride * (in - 1) + k - total,   pad (before) = total / 2
 * and the same scatter of input pixels; it shares every step below (tconv_is_mp). */
#include <math.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/int16.h"
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* The most steps (input pixels x filter taps x output channels x (input channels + 1)) the
 * plain-C float32 path takes: 2^28, well under a second (a fuzzed model's variable weights as
 * large as its image took minutes). XNNPACK's path, constant weights, has no such bound. */
#define TCONV_PLAIN_MAX_STEPS 268435456.0

typedef struct tconv_geom {
    int32_t batch, in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w;
    int32_t pad_h, pad_w;              /* before (top, left) */
} tconv_geom;

typedef struct tconv_state {
    xnn_operator_t op;
    const float *w, *bias;             /* float32 views of constants (NULL: read the tensor) */
    void *w_owned, *bias_owned;
    bool loaded;                       /* views taken */
    bool use_xnn;
    uint32_t key[8];                   /* what op was created with */
    uint32_t adj_h, adj_w;
} tconv_state;

/* Convolution2DTransposeBias: inputs input, weights, bias; TRANSPOSE_CONV: output_shape,
 * weights, input and the optional bias. */
static bool tconv_is_mp(const mp_node *n)
{
    return n->opcode == MP_OP_TRANSPOSE_CONV_BIAS;
}

static const mp_tensor *tconv_input(const mp_node *n)
{
    return n->in[tconv_is_mp(n) ? 0 : 2];
}

static const mp_tensor *tconv_bias(const mp_node *n)
{
    if (tconv_is_mp(n))
        return n->in[2];
    return n->n_in > 3 ? n->in[3] : NULL;
}

/* TensorFlow Lite's padding before, for one axis of output size out. */
static int32_t tconv_pad(int32_t padding, int32_t stride, int32_t k, int32_t out)
{
    int64_t conv_out = padding == MP_PAD_SAME ? ((int64_t)out + stride - 1) / stride
                                              : ((int64_t)out - k + stride) / stride;
    int64_t total = (conv_out - 1) * stride + k - out;
    return total > 0 ? (int32_t)(total / 2) : 0;
}

/* Dtype checks of the weights, bias and output for the input's dtype. */
static mp_status tconv_check_dtypes(mp_node *n)
{
    const mp_tensor *in = tconv_input(n), *w = n->in[1], *b = tconv_bias(n), *out = n->out[0];
    if (tconv_is_mp(n) && (in->dtype != MP_DT_FLOAT32 || w->dtype != MP_DT_FLOAT32 ||
                           b->dtype != MP_DT_FLOAT32 || out->dtype != MP_DT_FLOAT32))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' (%s), weights '%s' (%s), bias '%s' (%s) and output "
                            "'%s' (%s) must be float32",
                            mp_tname(in), mp_dtype_name(in->dtype), mp_tname(w),
                            mp_dtype_name(w->dtype), mp_tname(b), mp_dtype_name(b->dtype),
                            mp_tname(out), mp_dtype_name(out->dtype));
    if (in->dtype == MP_DT_FLOAT32) {
        bool wq = w->dtype == MP_DT_INT8 || w->dtype == MP_DT_UINT8 || w->dtype == MP_DT_FLOAT16;
        if (w->dtype != MP_DT_FLOAT32 && !wq)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "weights '%s' are %s; expected float32, float16, int8 or uint8",
                                mp_tname(w), mp_dtype_name(w->dtype));
        if (wq && !w->value_known)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s weights '%s' must be constant",
                                mp_dtype_name(w->dtype), mp_tname(w));
        if (b && b->dtype != MP_DT_FLOAT32 && !(b->dtype == MP_DT_FLOAT16 && b->value_known))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "bias '%s' is %s; expected float32",
                                mp_tname(b), mp_dtype_name(b->dtype));
        if (out->dtype != MP_DT_FLOAT32)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "output '%s' is %s; an f32 input gives an f32 output",
                                mp_tname(out), mp_dtype_name(out->dtype));
        float lo, hi;
        if (!mp_activation_range(n->opt->activation, &lo, &hi))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fused activation %d is not supported",
                                n->opt->activation);
        return MP_OK;
    }
    if (in->dtype == MP_DT_INT16) /* 16x8: int16_linear.c */
        return mp_i16_tconv_check(n);
    if (in->dtype != MP_DT_INT8 && in->dtype != MP_DT_UINT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s (supported: f32, i8, u8, i16)",
                            mp_tname(in), mp_dtype_name(in->dtype));
    if (w->dtype != in->dtype || out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights '%s' (%s) and output '%s' (%s) must be %s as input '%s'",
                            mp_tname(w), mp_dtype_name(w->dtype), mp_tname(out),
                            mp_dtype_name(out->dtype), mp_dtype_name(in->dtype), mp_tname(in));
    if (b && b->dtype != MP_DT_INT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "bias '%s' is %s; expected i32", mp_tname(b),
                            mp_dtype_name(b->dtype));
    float s;
    int32_t z;
    mp_status st = mp_node_qparams(n, in, &s, &z);
    if (st == MP_OK)
        st = mp_node_qparams(n, out, &s, &z);
    if (st != MP_OK)
        return st;
    const mp_quant *q = &w->info->quant;
    bool per_tensor = q->count == 1;
    bool per_channel = in->dtype == MP_DT_INT8 && q->count == w->dims[0] &&
                       q->quantized_dimension == 0;
    if (!per_tensor && !per_channel)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights '%s' have %d scales along dimension %d; expected one%s",
                            mp_tname(w), q->count, q->quantized_dimension,
                            in->dtype == MP_DT_INT8 ? " or one per output channel (dimension 0)"
                                                    : "");
    for (int32_t c = 0; in->dtype == MP_DT_INT8 && q->zero_point && c < q->count; c++)
        if (q->zero_point[c] != 0)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "i8 weights '%s' have zero point %lld; i8 weights are symmetric",
                                mp_tname(w), (long long)q->zero_point[c]);
    int32_t lo, hi;
    if (!mp_activation_range_q(n->opt->activation, s, z, out->dtype, &lo, &hi))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "fused activation %d has no integer range on %s output '%s'",
                            n->opt->activation, mp_dtype_name(out->dtype), mp_tname(out));
    return MP_OK;
}

/* Every check but the output shape's value; the geometry from the current shapes. */
static mp_status tconv_check(mp_node *n, tconv_geom *g)
{
    mp_status st = tconv_is_mp(n) ? mp_node_check_io(n, 3, 3, 0)
                                  : mp_node_check_io(n, 3, 4, 1u << 3);
    if (st != MP_OK)
        return st;
    const mp_tensor *os = n->in[0], *w = n->in[1], *in = tconv_input(n), *b = tconv_bias(n);
    char b1[96], b2[96];
    if (tconv_is_mp(n) && b->rank != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "bias '%s' %s must have rank 1", mp_tname(b),
                            SHAPE_STR(b, b1));
    if (!tconv_is_mp(n) && (os->dtype != MP_DT_INT32 || os->rank != 1 || os->dims[0] != 4))
        return mp_node_fail(n, MP_ERR_SHAPE, "output_shape '%s' must be int32 [4], is %s %s",
                            mp_tname(os), mp_dtype_name(os->dtype), SHAPE_STR(os, b1));
    if (w->rank != 4 || in->rank != 4 || in->dims[3] != w->dims[3])
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "weights '%s' %s must be [O,KH,KW,I] and input '%s' %s NHWC with I "
                            "channels",
                            mp_tname(w), SHAPE_STR(w, b1), mp_tname(in), SHAPE_STR(in, b2));
    if (w->dims[0] < 1 || w->dims[1] < 1 || w->dims[2] < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "weights '%s' %s are empty", mp_tname(w),
                            SHAPE_STR(w, b1));
    if (b && mp_tensor_elements(b) != (size_t)w->dims[0])
        return mp_node_fail(n, MP_ERR_SHAPE, "bias '%s' %s must have %d values", mp_tname(b),
                            SHAPE_STR(b, b1), w->dims[0]);
    if (n->opt->stride_w < 1 || n->opt->stride_h < 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "stride %dx%d is not valid",
                            n->opt->stride_w, n->opt->stride_h);
    if (n->opt->padding != MP_PAD_SAME && n->opt->padding != MP_PAD_VALID)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "padding %d is not SAME or VALID",
                            n->opt->padding);
    if ((st = tconv_check_dtypes(n)) != MP_OK)
        return st;
    *g = (tconv_geom){.batch = in->dims[0], .in_h = in->dims[1], .in_w = in->dims[2],
                      .in_c = in->dims[3], .out_c = w->dims[0], .k_h = w->dims[1],
                      .k_w = w->dims[2], .stride_h = n->opt->stride_h,
                      .stride_w = n->opt->stride_w};
    return MP_OK;
}

/* Convolution2DTransposeBias's output size and padding of one axis (MediaPipe's formula);
 * false when the input is empty along it or the output too large. */
static bool mp_axis(int32_t padding, int32_t in, int32_t k, int32_t stride, int32_t *out,
                    int32_t *pad)
{
    if (in < 1)
        return false;
    int64_t total = 0;
    if (padding == MP_PAD_SAME) {
        total = (int64_t)k - (in - 1) % stride - 1;
        total = total > 0 ? total : 0;
    }
    int64_t o = (int64_t)stride * (in - 1) + k - total;
    if (o > INT32_MAX)
        return false;
    *out = (int32_t)o;
    *pad = (int32_t)(total / 2);
    return true;
}

/* The output size from output_shape (known), checked against the input and weights; for
 * Convolution2DTransposeBias, from the input, weights and options. */
static mp_status tconv_out_size(mp_node *n, tconv_geom *g)
{
    if (tconv_is_mp(n)) {
        if (!mp_axis(n->opt->padding, g->in_h, g->k_h, g->stride_h, &g->out_h, &g->pad_h) ||
            !mp_axis(n->opt->padding, g->in_w, g->k_w, g->stride_w, &g->out_w, &g->pad_w)) {
            char b1[96];
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "input '%s' %s gives no output size (empty, or the output "
                                "exceeds 2^31 - 1 along an axis)",
                                mp_tname(tconv_input(n)), SHAPE_STR(tconv_input(n), b1));
        }
        return MP_OK;
    }
    const mp_tensor *os = n->in[0];
    int32_t v[4];
    memcpy(v, os->data, sizeof v);
    if (v[0] != g->batch || v[3] != g->out_c || v[1] < 1 || v[2] < 1)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "output_shape '%s' = [%d,%d,%d,%d] must be [%d,H,W,%d] (batch of "
                            "input '%s', output channels of weights '%s'), H and W >= 1",
                            mp_tname(os), v[0], v[1], v[2], v[3], g->batch, g->out_c,
                            mp_tname(tconv_input(n)), mp_tname(n->in[1]));
    g->out_h = v[1];
    g->out_w = v[2];
    g->pad_h = tconv_pad(n->opt->padding, g->stride_h, g->k_h, g->out_h);
    g->pad_w = tconv_pad(n->opt->padding, g->stride_w, g->k_w, g->out_w);
    return MP_OK;
}

/* Every check and the whole geometry, output_shape known (prepare and run). */
static mp_status tconv_geometry(mp_node *n, tconv_geom *g)
{
    mp_status st = tconv_check(n, g);
    return st == MP_OK ? tconv_out_size(n, g) : st;
}

static mp_status tconv_infer(mp_node *n)
{
    tconv_geom g;
    mp_status st = tconv_check(n, &g);
    if (st != MP_OK)
        return st;
    if (!tconv_is_mp(n) && (!n->in[0]->value_known || !n->in[0]->data))
        return MP_ERR_DEFERRED;
    if ((st = tconv_out_size(n, &g)) != MP_OK)
        return st;
    int32_t dims[4] = {g.batch, g.out_h, g.out_w, g.out_c};
    if ((st = mp_node_set_output_shape(n, 4, dims)) != MP_OK)
        return st;
    n->scratch_bytes = tconv_input(n)->dtype == MP_DT_FLOAT32 ||
                               tconv_input(n)->dtype == MP_DT_INT16
                           ? 0
                           : mp_tensor_elements(n->out[0]) * sizeof(int32_t);
    return MP_OK;
}

/* XNNPACK's bottom / right padding and adjustment for one axis; false when the output needs
 * an adjustment of a stride or more (plain C then). */
static bool xnn_axis(int32_t in, int32_t k, int32_t stride, int32_t pad, int32_t out,
                     uint32_t *after, uint32_t *adj)
{
    int64_t x = (int64_t)stride * (in - 1) + k - pad - out;
    if (x >= 0) {
        *after = (uint32_t)x;
        *adj = 0;
        return true;
    }
    *after = 0;
    *adj = (uint32_t)-x;
    return -x < stride;
}

static mp_status tconv_prepare(mp_node *n)
{
    tconv_geom g;
    mp_status st = tconv_geometry(n, &g);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = tconv_input(n), *w = n->in[1], *b = tconv_bias(n);
    mp_tensor *out = n->out[0];
    if (out->rank != 4 || out->dims[0] != g.batch || out->dims[1] != g.out_h ||
        out->dims[2] != g.out_w || out->dims[3] != g.out_c)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match the output size %dx%d",
                            mp_tname(out), g.out_h, g.out_w);
    tconv_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    if (in->dtype != MP_DT_FLOAT32)
        return MP_OK; /* plain C integer arithmetic: nothing to create */
    /* float32 views of the constants, once (each on its own: a variable float32 weights
     * tensor may come with a constant float16 bias) */
    if (!s->loaded) {
        if (w->value_known && (st = mp_const_as_f32(n, w, &s->w, &s->w_owned)) != MP_OK)
            return st;
        if (b && b->value_known && (st = mp_const_as_f32(n, b, &s->bias, &s->bias_owned)) != MP_OK)
            return st;
        s->loaded = true;
    }
    uint32_t bottom, right, adj_h, adj_w;
    s->use_xnn = s->w && (!b || s->bias) &&
                 xnn_axis(g.in_h, g.k_h, g.stride_h, g.pad_h, g.out_h, &bottom, &adj_h) &&
                 xnn_axis(g.in_w, g.k_w, g.stride_w, g.pad_w, g.out_w, &right, &adj_w) &&
                 mp_tensor_elements(out) > 0 && mp_tensor_elements(in) > 0;
    if (!s->use_xnn) {
        /* the plain-C float path (weights or bias not constant, or an adjustment of a stride
         * or more): refused beyond TCONV_PLAIN_MAX_STEPS rather than run for minutes */
        double steps = (double)g.batch * g.in_h * g.in_w * (g.k_h < g.out_h ? g.k_h : g.out_h) *
                       (g.k_w < g.out_w ? g.k_w : g.out_w) * g.out_c * (g.in_c + 1.0);
        if (steps > TCONV_PLAIN_MAX_STEPS)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "plain-C transposed convolution (weights '%s' not constant) "
                                "takes %.3g steps, more than %.3g",
                                mp_tname(w), steps, TCONV_PLAIN_MAX_STEPS);
        return MP_OK;
    }
    uint32_t key[8] = {(uint32_t)g.pad_h, right, bottom, (uint32_t)g.pad_w,
                       (uint32_t)g.k_h, (uint32_t)g.k_w, (uint32_t)g.stride_h,
                       (uint32_t)g.stride_w};
    if (s->op && memcmp(key, s->key, sizeof key) != 0)
        mp_xnn_delete(&s->op);
    enum xnn_status xs;
    if (!s->op) {
        float lo, hi;
        mp_activation_range(n->opt->activation, &lo, &hi);
        xs = xnn_create_deconvolution2d_nhwc_f32(
            (uint32_t)g.pad_h, right, bottom, (uint32_t)g.pad_w, (uint32_t)g.k_h,
            (uint32_t)g.k_w, (uint32_t)g.stride_h, (uint32_t)g.stride_w, 1, 1, 1,
            (size_t)g.in_c, (size_t)g.out_c, (size_t)g.in_c, (size_t)g.out_c, s->w, s->bias, lo,
            hi, 0, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "deconvolution create");
        }
        memcpy(s->key, key, sizeof key);
    }
    xs = xnn_setup_deconvolution2d_nhwc_f32(s->op, (size_t)g.batch, (size_t)g.in_h,
                                            (size_t)g.in_w, adj_h, adj_w, in->data, out->data,
                                            n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "deconvolution setup");
    return MP_OK;
}

/* The output positions input pixel coordinate i reaches along one axis: taps f in
 * [*f0, *f1) land at i*stride - pad + f inside [0, out). */
static void tap_range(int32_t i, const tconv_geom *g, bool h, int32_t *f0, int32_t *f1)
{
    int32_t origin = i * (h ? g->stride_h : g->stride_w) - (h ? g->pad_h : g->pad_w);
    int32_t k = h ? g->k_h : g->k_w, out = h ? g->out_h : g->out_w;
    *f0 = origin < 0 ? -origin : 0;
    *f1 = out - origin < k ? out - origin : k;
}

/* One tap: input pixel at x_off (elements), output pixel at y_off, weights of output
 * channel 0 at w_off (channel o at w_off + o * w_stride). */
typedef struct tconv_tap_ctx {
    const tconv_geom *g;
    const void *x, *w;
    void *y;                  /* float accumulators (float32) or int32 sums (quantized) */
    size_t w_stride;
    int32_t in_zp, w_zp;
    mp_dtype dt;
} tconv_tap_ctx;

static void tap_f32(const tconv_tap_ctx *c, size_t x_off, size_t y_off, size_t w_off)
{
    const size_t oc = (size_t)c->g->out_c, ic = (size_t)c->g->in_c;
    const float *xp = (const float *)c->x + x_off;
    float *yp = (float *)c->y + y_off;
    for (size_t o = 0; o < oc; o++) {
        const float *wp = (const float *)c->w + w_off + o * c->w_stride;
        float acc = 0.0f;
        for (size_t k = 0; k < ic; k++)
            acc += xp[k] * wp[k];
        yp[o] += acc;
    }
}

static void tap_q(const tconv_tap_ctx *c, size_t x_off, size_t y_off, size_t w_off)
{
    const size_t oc = (size_t)c->g->out_c, ic = (size_t)c->g->in_c;
    int32_t *yp = (int32_t *)c->y + y_off;
    for (size_t o = 0; o < oc; o++) {
        size_t wo = w_off + o * c->w_stride;
        int32_t sum = 0;
        if (c->dt == MP_DT_UINT8) {
            const uint8_t *xp = (const uint8_t *)c->x + x_off, *wp = (const uint8_t *)c->w + wo;
            for (size_t k = 0; k < ic; k++)
                sum += ((int32_t)xp[k] - c->in_zp) * ((int32_t)wp[k] - c->w_zp);
        } else {
            const int8_t *xp = (const int8_t *)c->x + x_off, *wp = (const int8_t *)c->w + wo;
            for (size_t k = 0; k < ic; k++)
                sum += ((int32_t)xp[k] - c->in_zp) * (int32_t)wp[k];
        }
        yp[o] += sum;
    }
}

/* TensorFlow Lite's reference loops: every input pixel, every filter tap that lands inside the
 * output, the sum over input channels last (the output zeroed first). */
static void tconv_scatter(const tconv_tap_ctx *c,
                          void (*tap)(const tconv_tap_ctx *, size_t, size_t, size_t))
{
    const tconv_geom *g = c->g;
    const size_t oc = (size_t)g->out_c, ic = (size_t)g->in_c;
    for (int32_t bi = 0; bi < g->batch; bi++)
        for (int32_t iy = 0; iy < g->in_h; iy++)
            for (int32_t ix = 0; ix < g->in_w; ix++) {
                size_t x_off = (((size_t)bi * (size_t)g->in_h + (size_t)iy) * (size_t)g->in_w +
                                (size_t)ix) * ic;
                int32_t fy0, fy1, fx0, fx1;
                tap_range(iy, g, true, &fy0, &fy1);
                tap_range(ix, g, false, &fx0, &fx1);
                for (int32_t fy = fy0; fy < fy1; fy++)
                    for (int32_t fx = fx0; fx < fx1; fx++) {
                        size_t oy = (size_t)(iy * g->stride_h - g->pad_h + fy);
                        size_t ox = (size_t)(ix * g->stride_w - g->pad_w + fx);
                        size_t y_off = (((size_t)bi * (size_t)g->out_h + oy) * (size_t)g->out_w +
                                        ox) * oc;
                        tap(c, x_off, y_off, ((size_t)fy * (size_t)g->k_w + (size_t)fx) * ic);
                    }
            }
}

/* Plain-C float32. */
static void tconv_run_f32(const tconv_geom *g, const float *x, const float *w, const float *b,
                          float *y, int32_t act)
{
    const size_t oc = (size_t)g->out_c;
    const size_t out_elems = (size_t)g->batch * (size_t)g->out_h * (size_t)g->out_w * oc;
    memset(y, 0, out_elems * sizeof(float));
    tconv_tap_ctx c = {.g = g, .x = x, .w = w, .y = y,
                       .w_stride = (size_t)g->k_h * (size_t)g->k_w * (size_t)g->in_c};
    tconv_scatter(&c, tap_f32);
    if (b)
        for (size_t i = 0; i < out_elems; i++)
            y[i] += b[i % oc];
    mp_apply_activation_f32(y, out_elems, act);
}

/* TensorFlow Lite's reference integer TransposeConv (int8 per-channel, uint8 per-tensor). */
static mp_status tconv_run_q(mp_node *n, const tconv_geom *g)
{
    const mp_tensor *in = tconv_input(n), *w = n->in[1], *b = tconv_bias(n);
    mp_tensor *out = n->out[0];
    const size_t oc = (size_t)g->out_c;
    const size_t out_elems = mp_tensor_elements(out);
    if (out_elems == 0)
        return MP_OK;
    if (!n->scratch || n->scratch_bytes < out_elems * sizeof(int32_t))
        return mp_node_fail(n, MP_ERR_BACKEND, "run without its scratch");
    float in_s, out_s;
    int32_t in_zp, out_zp, lo, hi;
    mp_node_qparams(n, in, &in_s, &in_zp);
    mp_node_qparams(n, out, &out_s, &out_zp);
    mp_activation_range_q(n->opt->activation, out_s, out_zp, out->dtype, &lo, &hi);
    const mp_quant *wq = &w->info->quant;
    const bool u8 = in->dtype == MP_DT_UINT8;
    int32_t *acc = n->scratch;
    memset(acc, 0, out_elems * sizeof(int32_t));
    tconv_tap_ctx c = {.g = g, .x = in->data, .w = w->data, .y = acc,
                       .w_stride = (size_t)g->k_h * (size_t)g->k_w * (size_t)g->in_c,
                       .in_zp = in_zp, .dt = in->dtype};
    if (u8 && wq->zero_point)
        c.w_zp = (int32_t)wq->zero_point[0];
    tconv_scatter(&c, tap_q);
    /* requantize per output channel: the multiplier as TensorFlow Lite derives it (uint8:
     * the scales' product in float, then double; int8: all in double) */
    for (size_t o = 0; o < oc; o++) {
        float ws = wq->scale[wq->count > 1 ? o : 0];
        double real = u8 ? (double)(in_s * ws) / (double)out_s
                         : (double)in_s * (double)ws / (double)out_s;
        int32_t mult;
        int shift;
        mp_quantize_multiplier(real, &mult, &shift);
        int32_t bias = 0;
        if (b)
            memcpy(&bias, (const int32_t *)b->data + o, sizeof bias);
        for (size_t i = o; i < out_elems; i += oc) {
            int32_t v = mp_multiply_by_quantized_multiplier(acc[i] + bias, mult, shift) + out_zp;
            v = v < lo ? lo : v > hi ? hi : v;
            if (u8)
                ((uint8_t *)out->data)[i] = (uint8_t)v;
            else
                ((int8_t *)out->data)[i] = (int8_t)v;
        }
    }
    return MP_OK;
}

static mp_status tconv_run(mp_node *n)
{
    tconv_geom g;
    mp_status st = tconv_geometry(n, &g);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = tconv_input(n);
    if (in->dtype == MP_DT_INT16)
        return mp_i16_tconv_run(n, &(mp_i16_conv_shape){
            .batch = g.batch, .in_h = g.in_h, .in_w = g.in_w, .in_c = g.in_c, .k_h = g.k_h,
            .k_w = g.k_w, .out_h = g.out_h, .out_w = g.out_w, .out_c = g.out_c,
            .stride_h = g.stride_h, .stride_w = g.stride_w, .pad_top = g.pad_h,
            .pad_left = g.pad_w});
    if (in->dtype != MP_DT_FLOAT32)
        return tconv_run_q(n, &g);
    tconv_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_BACKEND, "run before prepare");
    if (mp_tensor_elements(n->out[0]) == 0)
        return MP_OK;
    if (s->use_xnn) {
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        if (xs != xnn_status_success)
            return mp_node_xnn_fail(n, xs, "deconvolution run");
        return MP_OK;
    }
    const mp_tensor *b = tconv_bias(n);
    const float *w = s->w ? s->w : n->in[1]->data;
    const float *bias = s->bias ? s->bias : b ? b->data : NULL;
    tconv_run_f32(&g, in->data, w, bias, n->out[0]->data, n->opt->activation);
    return MP_OK;
}

static void tconv_release(mp_node *n)
{
    tconv_state *s = n->state;
    if (!s)
        return;
    if (s->w_owned)
        mp_mem_free(n->mem, s->w_owned);
    if (s->bias_owned)
        mp_mem_free(n->mem, s->bias_owned);
    mp_node_free_state(n, &s->op);
}

const mp_kernel mp_kernels_transpose_conv[] = {
    {.opcode = MP_OP_TRANSPOSE_CONV, .optional_inputs = 1u << 3, .min_inputs = 3,
     .max_inputs = 4, .n_outputs = 1, .infer = tconv_infer, .prepare = tconv_prepare,
     .run = tconv_run, .release = tconv_release},
    {.opcode = MP_OP_TRANSPOSE_CONV_BIAS, .min_inputs = 3, .max_inputs = 3, .n_outputs = 1,
     .infer = tconv_infer, .prepare = tconv_prepare, .run = tconv_run,
     .release = tconv_release},
    {.opcode = -1},
};
