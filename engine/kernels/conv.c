/* Kernels: CONV_2D and DEPTHWISE_CONV_2D (NHWC), on XNNPACK's convolution operators.
 *
 * Both map onto one xnn_create_convolution2d_nhwc_* call:
 *   CONV_2D            filter OHWI [Cout,KH,KW,Cin/groups]; groups = input channels / filter
 *                      channels (TFLite's grouped convolution), which is exactly XNNPACK's
 *                      [groups * group_output_channels, KH, KW, group_input_channels] layout.
 *   DEPTHWISE_CONV_2D  filter [1,KH,KW,Cin*M]; groups = Cin, 1 input and M output channels per
 *                      group, XNN_FLAG_DEPTHWISE_CONVOLUTION (XNNPACK then reads the filter as
 *                      [KH,KW,groups*M], output channel c*M+m, which is TFLite's layout).
 * The input's dtype picks the operator:
 *   float32  *_f32; the filter float32, or int8/uint8/float16 in hybrid models (dequantized
 *            once), the bias float32 or float16.
 *   int8     TensorFlow Lite's quantized convolution: int8 filter, symmetric, one scale for
 *            the tensor (*_qs8) or one per output channel along dimension 0 (CONV_2D) or 3
 *            (DEPTHWISE) (*_qc8); int32 bias at input_scale * filter_scale (omitted: zeros);
 *            per-tensor input and output; the fused activation clamps in the output's
 *            integers (TANH and SIGN_BIT have no such range: refused).
 *   uint8    the same with a uint8 filter of one scale and any zero point (*_qu8).
 * The quantized checks are quant_tensor.h's mp_node_weighted_q (shared with FULLY_CONNECTED).
 * XNNPACK requantizes in float (within one unit of TensorFlow Lite's fixed-point result)
 * and refuses some scale ratios; the refusal names the operator. Other dtype mixes are
 * refused naming the tensor and its dtype.
 * DEPTHWISE_CONV_2D filters XNNPACK has no depthwise microkernel for (1x31, 7x7 ...) run on
 * dwconv.c's plain C instead, chosen at prepare (conv_dw_c), with no XNNPACK operator; its
 * 8-bit kinds requantize in integers as TensorFlow Lite's reference kernels do (per-channel
 * multipliers and shifts made here at prepare).
 * Filters are packed by XNNPACK at the first prepare. Later prepares only call xnn_setup_*
 * unless something the operator was created with changed (channel grouping, or explicit
 * SAME padding, see below), and run is xnn_run_operator alone. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

#include "engine/kernels/dwconv.h"
#include "engine/kernels/int16.h"
#include "engine/kernels/quant_tensor.h"

typedef struct conv_geom {
    int32_t batch, in_h, in_w, in_c;
    int32_t k_h, k_w, out_c;
    int32_t out_h, out_w;
    uint32_t groups;
    size_t group_in, group_out;
    bool quantized;           /* int8 / uint8 activations: q says which operator */
    mp_weighted_q q;
} conv_geom;

typedef struct conv_state {
    xnn_operator_t op;
    /* The filter and bias XNNPACK packs: float32 views (the model's data, or a dequantized
     * copy in *_owned, freed in release), or the model's integers for quantized kinds. The
     * bias is NULL when omitted (XNNPACK reads zeros). */
    const void *filter;
    void *filter_owned;
    const void *bias;
    void *bias_owned;
    /* What op was created with: a change means re-creating it. */
    uint32_t groups;
    size_t group_in, group_out;
    uint32_t flags;
    uint32_t pad[4];      /* top, right, bottom, left (explicit padding only) */
    bool loaded;          /* filter and bias views taken */
    bool empty;           /* current shape has no output elements: nothing to run */
    size_t out_elems;
    /* DEPTHWISE_CONV_2D on dwconv.c instead (no XNNPACK operator): filters XNNPACK has no
     * depthwise microkernel for */
    bool dw_c;
    mp_dwconv dw;
    int32_t *dw_req;      /* quantized (kernel memory): per output channel TensorFlow Lite's
                           * multiplier, left and right shift (three arrays), then (dw_qf)
                           * the filter in float */
    bool dw_qf;           /* the filter in float is used: its sums are exact in float */
} conv_state;

static bool is_depthwise(const mp_node *n)
{
    return n->opcode == MP_OP_DEPTHWISE_CONV_2D;
}

/* A tensor whose value is available at prepare time (so XNNPACK can pack it). */
static bool value_ready(const mp_tensor *t)
{
    return t->data && (t->is_const || t->value_known);
}

/* Output size of one spatial dimension under TFLite's padding rules; false when a VALID
 * window does not fit in the input. */
static bool out_dim(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t padding,
                    int32_t *out)
{
    int64_t eff = (int64_t)(k - 1) * dil + 1;
    if (padding == MP_PAD_SAME) {
        *out = (int32_t)(((int64_t)in + stride - 1) / stride);
        return true;
    }
    if (in < eff)
        return false;
    *out = (int32_t)(((int64_t)in - eff) / stride + 1);
    return true;
}

/* TFLite SAME padding of one dimension: (before, after). */
static void same_pad(int32_t in, int32_t k, int32_t stride, int32_t dil, uint32_t *before,
                     uint32_t *after)
{
    int64_t eff = (int64_t)(k - 1) * dil + 1;
    int64_t out = ((int64_t)in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + eff - in;
    if (total < 0)
        total = 0;
    *before = (uint32_t)(total / 2);
    *after = (uint32_t)(total - total / 2);
}

/* Validate the node and compute its geometry (used by infer and again by prepare). */
static mp_status conv_geometry(mp_node *n, conv_geom *g)
{
    const mp_op_options *o = n->opt;
    char s1[64], s2[64];
    if (n->n_in < 2 || n->n_in > 3 || n->n_out != 1 || !n->in[0] || !n->in[1])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects input, filter and optional bias, 1 output");
    const mp_tensor *in = n->in[0], *f = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;

    if (in->dtype != MP_DT_FLOAT32 && !mp_dtype_is_q8(in->dtype) && in->dtype != MP_DT_INT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' is %s; expected f32, i8, u8 or i16",
                            in->info->name, mp_dtype_name(in->dtype));
    if (in->rank != 4)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s must have rank 4 (NHWC)",
                            in->info->name, mp_shape_str(in->rank, in->dims, s1, sizeof s1));
    if (f->rank != 4)
        return mp_node_fail(n, MP_ERR_SHAPE, "filter '%s' %s must have rank 4", f->info->name,
                            mp_shape_str(f->rank, f->dims, s1, sizeof s1));

    if (o->stride_h < 1 || o->stride_w < 1 || o->dilation_h < 1 || o->dilation_w < 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "invalid stride %dx%d or dilation %dx%d",
                            o->stride_h, o->stride_w, o->dilation_h, o->dilation_w);
    if (o->padding != MP_PAD_SAME && o->padding != MP_PAD_VALID)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown padding %d", o->padding);
    if (o->activation < MP_ACT_NONE || o->activation > MP_ACT_SIGN_BIT)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown fused activation %d", o->activation);

    g->batch = in->dims[0];
    g->in_h = in->dims[1];
    g->in_w = in->dims[2];
    g->in_c = in->dims[3];
    g->k_h = f->dims[1];
    g->k_w = f->dims[2];
    if (g->in_c < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s has no channels", in->info->name,
                            mp_shape_str(in->rank, in->dims, s1, sizeof s1));
    if (g->k_h < 1 || g->k_w < 1 || f->dims[0] < 1 || f->dims[3] < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "filter '%s' %s is empty", f->info->name,
                            mp_shape_str(f->rank, f->dims, s1, sizeof s1));

    if (is_depthwise(n)) {
        /* The depth_multiplier option is unreliable in old models: derive it. */
        g->out_c = f->dims[3];
        if (f->dims[0] != 1 || g->out_c % g->in_c != 0)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "filter '%s' %s must be [1,KH,KW,C*M] for input '%s' %s "
                                "(channels a multiple of %d)",
                                f->info->name, mp_shape_str(f->rank, f->dims, s1, sizeof s1),
                                in->info->name, mp_shape_str(in->rank, in->dims, s2, sizeof s2),
                                g->in_c);
        g->groups = (uint32_t)g->in_c;
        g->group_in = 1;
        g->group_out = (size_t)(g->out_c / g->in_c);
    } else {
        g->out_c = f->dims[0];
        int32_t fc = f->dims[3];
        if (g->in_c % fc != 0 || g->out_c % (g->in_c / fc) != 0)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "input '%s' %s does not match filter '%s' %s: input channels must "
                                "be a multiple of the filter's (groups), and output channels of "
                                "the groups",
                                in->info->name, mp_shape_str(in->rank, in->dims, s1, sizeof s1),
                                f->info->name, mp_shape_str(f->rank, f->dims, s2, sizeof s2));
        g->groups = (uint32_t)(g->in_c / fc);
        g->group_in = (size_t)fc;
        g->group_out = (size_t)(g->out_c / (int32_t)g->groups);
    }
    if (b && mp_tensor_elements(b) != (size_t)g->out_c)
        return mp_node_fail(n, MP_ERR_SHAPE, "bias '%s' %s must have %d elements (output channels)",
                            b->info->name, mp_shape_str(b->rank, b->dims, s1, sizeof s1), g->out_c);

    if (!out_dim(g->in_h, g->k_h, o->stride_h, o->dilation_h, o->padding, &g->out_h) ||
        !out_dim(g->in_w, g->k_w, o->stride_w, o->dilation_w, o->padding, &g->out_w))
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "input '%s' %s is smaller than the %dx%d filter (dilation %dx%d) with "
                            "VALID padding",
                            in->info->name, mp_shape_str(in->rank, in->dims, s1, sizeof s1),
                            g->k_h, g->k_w, o->dilation_h, o->dilation_w);
    g->quantized = in->dtype != MP_DT_FLOAT32;
    if (!g->quantized)
        return mp_node_check_f32_weighted(n, "filter");
    if (in->dtype == MP_DT_INT16) /* 16x8: plain C in int16_linear.c */
        return mp_i16_weighted_check(n, "filter", g->out_c, is_depthwise(n) ? 3 : 0);
    /* per-channel filter scales along the output channels: dimension 0 of OHWI, 3 of
     * DEPTHWISE's [1,KH,KW,C*M] */
    return mp_node_weighted_q(n, "filter", g->out_c, is_depthwise(n) ? 3 : 0, &g->q);
}

static mp_status conv_infer(mp_node *n)
{
    conv_geom g;
    mp_status st = conv_geometry(n, &g);
    if (st != MP_OK)
        return st;
    int32_t dims[4] = {g.batch, g.out_h, g.out_w, g.out_c};
    return mp_node_set_output_shape(n, 4, dims);
}

static void conv_release(mp_node *n)
{
    conv_state *s = n->state;
    if (!s)
        return;
    mp_mem_free(n->mem, s->filter_owned);
    mp_mem_free(n->mem, s->bias_owned);
    mp_mem_free(n->mem, s->dw_req);
    mp_node_free_state(n, &s->op);
}

/* Float32 views of filter and bias, dequantized once (first prepare); quantized kinds take
 * the model's integers as they are (at create). */
static mp_status conv_load_weights(mp_node *n, const conv_geom *g, conv_state *s)
{
    const mp_tensor *f = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
    if (!value_ready(f))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "filter '%s' is computed at run time; only constant filters are "
                            "supported",
                            f->info->name);
    if (b && !value_ready(b))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "bias '%s' is computed at run time; only constant biases are supported",
                            b->info->name);
    mp_status st = MP_OK;
    const float *view = NULL;
    if (!g->quantized && !s->filter) {
        st = mp_const_as_f32(n, f, &view, &s->filter_owned);
        s->filter = view;
    }
    if (st == MP_OK && !g->quantized && b) {
        st = mp_const_as_f32(n, b, &view, &s->bias_owned);
        s->bias = view;
    }
    /* without a bias s->bias stays NULL, which XNNPACK reads as zeros */
    s->loaded = st == MP_OK;
    return st;
}

/* XNNPACK's convolution operator of the node's kind, on s's filter and bias. */
static enum xnn_status conv_create(const mp_node *n, const conv_geom *g, const uint32_t pad[4],
                                   uint32_t flags, conv_state *s)
{
    const mp_op_options *o = n->opt;
    const mp_weighted_q *q = &g->q;
/* the arguments every xnn_create_convolution2d_nhwc_* starts with (pixel strides: the
 * channels) */
#define CONV_SHAPE_ARGS                                                                        \
    pad[0], pad[1], pad[2], pad[3], (uint32_t)g->k_h, (uint32_t)g->k_w, (uint32_t)o->stride_h, \
        (uint32_t)o->stride_w, (uint32_t)o->dilation_h, (uint32_t)o->dilation_w, g->groups,    \
        g->group_in, g->group_out, (size_t)g->in_c, (size_t)g->out_c
    if (g->quantized) {
        switch (q->kind) {
        case MP_WQ_QS8:
            return xnn_create_convolution2d_nhwc_qs8(
                CONV_SHAPE_ARGS, (int8_t)q->in_zp, q->in_scale, q->w_scale[0], s->filter, s->bias,
                (int8_t)q->out_zp, q->out_scale, (int8_t)q->out_lo, (int8_t)q->out_hi, flags,
                &s->op);
        case MP_WQ_QC8:
            return xnn_create_convolution2d_nhwc_qc8(
                CONV_SHAPE_ARGS, (int8_t)q->in_zp, q->in_scale, q->w_scale, s->filter, s->bias,
                (int8_t)q->out_zp, q->out_scale, (int8_t)q->out_lo, (int8_t)q->out_hi, flags,
                &s->op);
        case MP_WQ_QU8:
            return xnn_create_convolution2d_nhwc_qu8(
                CONV_SHAPE_ARGS, (uint8_t)q->in_zp, q->in_scale, (uint8_t)q->w_zp,
                q->w_scale[0], s->filter, s->bias, (uint8_t)q->out_zp, q->out_scale,
                (uint8_t)q->out_lo, (uint8_t)q->out_hi, flags, &s->op);
        }
    }
    float lo = -INFINITY, hi = INFINITY;
    mp_activation_range(o->activation, &lo, &hi); /* TANH / SIGN_BIT: applied in run */
    return xnn_create_convolution2d_nhwc_f32(CONV_SHAPE_ARGS, s->filter, s->bias, lo, hi, flags,
                                             &s->op);
#undef CONV_SHAPE_ARGS
}

/* Bind the current batch, input size and tensors to op. */
static enum xnn_status conv_setup(const mp_node *n, const conv_geom *g, xnn_operator_t op)
{
    size_t b = (size_t)g->batch, h = (size_t)g->in_h, w = (size_t)g->in_w;
    const void *x = n->in[0]->data;
    void *y = n->out[0]->data;
    if (g->quantized) {
        switch (g->q.kind) {
        case MP_WQ_QS8: return xnn_setup_convolution2d_nhwc_qs8(op, b, h, w, x, y, n->pool);
        case MP_WQ_QC8: return xnn_setup_convolution2d_nhwc_qc8(op, b, h, w, x, y, n->pool);
        case MP_WQ_QU8: return xnn_setup_convolution2d_nhwc_qu8(op, b, h, w, x, y, n->pool);
        }
    }
    return xnn_setup_convolution2d_nhwc_f32(op, b, h, w, x, y, n->pool);
}

/* The padding before of one dimension under SAME, as same_pad, in 64 bits. */
static int64_t same_before(int32_t in, int32_t out, int32_t k, int32_t stride, int32_t dil)
{
    int64_t total = ((int64_t)out - 1) * stride + (int64_t)(k - 1) * dil + 1 - in;
    return total > 0 ? total / 2 : 0;
}

/* Whether the node runs on dwconv.c (s->dw_c: depthwise, a filter it takes, constant or our
 * dequantized copy, read in place at every run); fills s->dw for the current shapes, and for
 * a quantized node its requantization multipliers and shifts (once; MP_ERR_NOMEM when they
 * cannot be had). */
static mp_status conv_dw_c(mp_node *n, const conv_geom *g, conv_state *s)
{
    const mp_op_options *o = n->opt;
    const mp_tensor *f = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
    int32_t mult = (int32_t)g->group_out;
    s->dw_c = is_depthwise(n) && (s->filter_owned || f->is_const) &&
              (!b || s->bias_owned || b->is_const) &&
              (g->quantized ? mp_dwconv_wanted_q8(g->k_h, g->k_w, g->in_c, mult)
                            : mp_dwconv_wanted(g->k_h, g->k_w, g->in_c, mult));
    if (!s->dw_c)
        return MP_OK;
    mp_dwconv *d = &s->dw;
    *d = (mp_dwconv){.batch = g->batch, .in_h = g->in_h, .in_w = g->in_w, .in_c = g->in_c,
                     .mult = mult, .out_h = g->out_h, .out_w = g->out_w, .k_h = g->k_h,
                     .k_w = g->k_w, .stride_h = o->stride_h, .stride_w = o->stride_w,
                     .dil_h = o->dilation_h, .dil_w = o->dilation_w,
                     .filter = s->filter_owned ? s->filter_owned : f->data,
                     .bias = b ? (s->bias_owned ? s->bias_owned : b->data) : NULL,
                     .lo = -INFINITY, .hi = INFINITY};
    if (o->padding == MP_PAD_SAME) { /* same_pad's, in 64 bits (a hostile dilation) */
        d->pad_top = same_before(g->in_h, g->out_h, g->k_h, o->stride_h, o->dilation_h);
        d->pad_left = same_before(g->in_w, g->out_w, g->k_w, o->stride_w, o->dilation_w);
    }
    mp_activation_range(o->activation, &d->lo, &d->hi); /* TANH / SIGN_BIT: applied in run */
    if (!g->quantized)
        return MP_OK;
    const mp_weighted_q *q = &g->q;
    d->q_uint8 = q->kind == MP_WQ_QU8;
    d->filter_q = f->data;
    d->bias_q = b ? b->data : NULL;
    d->in_zp = q->in_zp;
    d->w_zp = q->w_zp;
    d->out_zp = q->out_zp;
    d->out_lo = q->out_lo;
    d->out_hi = q->out_hi;
    size_t oc = (size_t)g->out_c;
    if (!s->dw_req) {
        /* the model's filter is constant: its float copy lasts as the multipliers do */
        s->dw_qf = mp_dwconv_q8_float_filter(d, NULL);
        size_t nf = s->dw_qf ? (size_t)g->k_h * (size_t)g->k_w * oc : 0;
        s->dw_req = mp_mem_alloc(n->mem, (3 * oc + nf) * sizeof(int32_t), 0, MP_MEM_KERNEL,
                                 MP_OWNER_OP(n->index));
        if (!s->dw_req)
            return mp_node_fail(n, MP_ERR_NOMEM, "out of memory for %zu requantization "
                                "multipliers and %zu filter values", oc, nf);
        for (size_t c = 0; c < oc; c++) {
            /* TensorFlow Lite's effective scales: int8's PopulateConvolutionQuantizationParams
             * in double, uint8's GetQuantizedConvolutionMultipler (the product in float) */
            float ws = q->w_scale[q->kind == MP_WQ_QC8 ? c : 0];
            double real = d->q_uint8 ? (double)(q->in_scale * ws) / (double)q->out_scale
                                     : (double)q->in_scale * (double)ws / (double)q->out_scale;
            if (!mp_dwconv_requant_params(real, s->dw_req + c, s->dw_req + oc + c,
                                          s->dw_req + 2 * oc + c)) {
                mp_mem_free(n->mem, s->dw_req);
                s->dw_req = NULL;
                return mp_node_fail(n, MP_ERR_FORMAT, "requantization scale of output channel "
                                    "%zu is not finite", c);
            }
        }
        if (s->dw_qf)
            mp_dwconv_q8_float_filter(d, (float *)(s->dw_req + 3 * oc));
    }
    d->q_mult = s->dw_req;
    d->q_left = s->dw_req + oc;
    d->q_right = s->dw_req + 2 * oc;
    d->filter_qf = s->dw_qf ? (const float *)(s->dw_req + 3 * oc) : NULL;
    return MP_OK;
}

static mp_status conv_prepare(mp_node *n)
{
    const mp_op_options *o = n->opt;
    conv_geom g;
    mp_status st = conv_geometry(n, &g);
    if (st != MP_OK || n->in[0]->dtype == MP_DT_INT16) /* int16: no state, all at the run */
        return st;

    conv_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    if (!s->loaded) {
        st = conv_load_weights(n, &g, s);
        if (st != MP_OK)
            return st;
    }

    /* Padding. XNNPACK's TensorFlow SAME mode computes the padding at setup, so a new input
     * size needs no new operator. Where the effective kernel is 1x1, SAME and VALID coincide:
     * no flag (it keeps XNNPACK on its fastest 1x1 path). Where the stride exceeds the
     * effective kernel, TFLite clamps a negative total padding to 0, which XNNPACK's SAME mode
     * does not (it computes garbage padding; test_kernels_conv covers it): pass TFLite's
     * padding explicitly then (the operator is re-created if it changes). */
    int64_t eff_h = (int64_t)(g.k_h - 1) * o->dilation_h + 1;
    int64_t eff_w = (int64_t)(g.k_w - 1) * o->dilation_w + 1;
    uint32_t flags = is_depthwise(n) ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0;
    uint32_t pad[4] = {0, 0, 0, 0};
    if (o->padding == MP_PAD_SAME && !(eff_h == 1 && eff_w == 1)) {
        if (o->stride_h <= eff_h && o->stride_w <= eff_w) {
            flags |= XNN_FLAG_TENSORFLOW_SAME_PADDING;
        } else {
            same_pad(g.in_h, g.k_h, o->stride_h, o->dilation_h, &pad[0], &pad[2]);
            same_pad(g.in_w, g.k_w, o->stride_w, o->dilation_w, &pad[3], &pad[1]);
        }
    }

    if (s->op && (s->groups != g.groups || s->group_in != g.group_in ||
                  s->group_out != g.group_out || s->flags != flags || s->pad[0] != pad[0] ||
                  s->pad[1] != pad[1] || s->pad[2] != pad[2] || s->pad[3] != pad[3])) {
        mp_xnn_delete(&s->op);
    }

    s->out_elems = mp_tensor_elements(n->out[0]);
    s->empty = s->out_elems == 0;
    if (s->empty)
        return MP_OK;
    if ((st = conv_dw_c(n, &g, s)) != MP_OK)
        return st;
    if (s->dw_c) {
        mp_xnn_delete(&s->op);
        return MP_OK;
    }

    if (!s->op) {
        /* Views that are not our float32 copies point at tensor storage, which may have moved
         * since the first prepare (weights computed early live in planned memory): take them
         * again before packing. */
        const mp_tensor *f = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
        if (!value_ready(f) || (b && !value_ready(b)))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "filter '%s' or its bias is no longer "
                                "available at prepare time", f->info->name);
        if (!s->filter_owned)
            s->filter = f->data;
        if (b && !s->bias_owned)
            s->bias = b->data;
        enum xnn_status xs = conv_create(n, &g, pad, flags, s);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            /* quantized: with the ratios of scales XNNPACK judged */
            return g.quantized
                       ? mp_node_weighted_create_fail(n, &g.q, xs, "convolution", "filter")
                       : mp_node_xnn_fail(n, xs, "convolution create");
        }
        s->groups = g.groups;
        s->group_in = g.group_in;
        s->group_out = g.group_out;
        s->flags = flags;
        for (int i = 0; i < 4; i++)
            s->pad[i] = pad[i];
    }
    enum xnn_status xs = conv_setup(n, &g, s->op);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "convolution setup");
    return MP_OK;
}

/* An int16 (16x8) node: its geometry and TensorFlow Lite's padding to int16_linear.c. */
static mp_status conv_run_i16(mp_node *n)
{
    const mp_op_options *o = n->opt;
    conv_geom g;
    mp_status st = conv_geometry(n, &g);
    if (st != MP_OK)
        return st;
    uint32_t top = 0, bottom = 0, left = 0, right = 0;
    if (o->padding == MP_PAD_SAME) {
        same_pad(g.in_h, g.k_h, o->stride_h, o->dilation_h, &top, &bottom);
        same_pad(g.in_w, g.k_w, o->stride_w, o->dilation_w, &left, &right);
    }
    mp_i16_conv_shape s = {
        .batch = g.batch, .in_h = g.in_h, .in_w = g.in_w, .in_c = g.in_c, .k_h = g.k_h,
        .k_w = g.k_w, .out_h = g.out_h, .out_w = g.out_w, .out_c = g.out_c,
        .group_in = (int32_t)g.group_in, .group_out = (int32_t)g.group_out,
        .stride_h = o->stride_h, .stride_w = o->stride_w, .dil_h = o->dilation_h,
        .dil_w = o->dilation_w, .pad_top = (int32_t)top, .pad_left = (int32_t)left,
        .depthwise = is_depthwise(n)};
    return mp_i16_conv_run(n, &s);
}

static mp_status conv_run(mp_node *n)
{
    if (n->in[0]->dtype == MP_DT_INT16)
        return conv_run_i16(n);
    conv_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->empty)
        return MP_OK;
    enum xnn_status xs = xnn_status_success;
    if (s->dw_c && n->in[0]->dtype == MP_DT_FLOAT32)
        mp_dwconv_run_f32(&s->dw, n->in[0]->data, n->out[0]->data, n->pool);
    else if (s->dw_c)
        mp_dwconv_run_q8(&s->dw, n->in[0]->data, n->out[0]->data, n->pool);
    else if ((xs = xnn_run_operator(s->op, n->pool)) != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "convolution run");
    int32_t act = n->opt->activation;
    if (act == MP_ACT_TANH || act == MP_ACT_SIGN_BIT)
        mp_apply_activation_f32(n->out[0]->data, s->out_elems, act);
    return MP_OK;
}

const mp_kernel mp_kernels_conv[] = {
    {.opcode = MP_OP_CONV_2D, .optional_inputs = 1u << 2, .min_inputs = 2, .max_inputs = 3,
     .n_outputs = 1, .infer = conv_infer, .prepare = conv_prepare, .run = conv_run,
     .release = conv_release},
    {.opcode = MP_OP_DEPTHWISE_CONV_2D, .optional_inputs = 1u << 2, .min_inputs = 2,
     .max_inputs = 3, .n_outputs = 1, .infer = conv_infer, .prepare = conv_prepare,
     .run = conv_run, .release = conv_release},
    {.opcode = -1},
};
