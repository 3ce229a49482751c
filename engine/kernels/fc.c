/* Kernel: FULLY_CONNECTED, on XNNPACK's fully_connected_nc operators.
 *
 * Weights are [Cout, Cin] (XNNPACK's default layout). The input of any rank is read as
 * [elements / Cin, Cin], as TFLite does; the output is [batch, Cout], or the input's shape with
 * the last dimension replaced by Cout when keep_num_dims is set. The input's dtype picks the
 * arithmetic:
 *   float32  *_f32; weights float32, or int8/uint8/float16 in hybrid models (dequantized
 *            once). Weights or bias computed at run time (rare) cannot be packed ahead:
 *            those nodes use a plain C loop instead.
 *   int8     TensorFlow Lite's quantized fully connected: int8 weights, symmetric, with one
 *            scale (fully_connected_nc_qs8) or one per output channel along dimension 0
 *            (XNNPACK has no per-channel fully connected: a 1x1 convolution_nhwc_qc8 over
 *            [batch, 1, 1, Cin]); an int32 bias at input_scale * weight_scale (omitted:
 *            zeros); per-tensor input and output; the fused activation clamps in the output's
 *            integers (TANH and SIGN_BIT have none: refused).
 *   uint8    the same with uint8 weights of one scale and any zero point (*_qu8).
 * Quantized weights and bias must be constant. The quantized checks are quant_tensor.h's
 * mp_node_weighted_q (shared with the convolutions). XNNPACK requantizes in float (within one
 * unit of TensorFlow Lite's fixed-point result) and refuses some scale ratios; the refusal
 * names the operator. Other dtype mixes are refused naming the tensor and its dtype.
 * XNNPACK packs the weights at the first prepare; later prepares only bind the batch size and
 * pointers, and run is xnn_run_operator alone. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

#include "engine/kernels/int16.h"
#include "engine/kernels/quant_tensor.h"

typedef struct fc_state {
    xnn_operator_t op;      /* NULL on the plain C path */
    bool plain;             /* float32 weights or bias computed at run time: plain C loop */
    bool loaded;            /* constant weight/bias views taken */
    /* Constant weights and bias: float32 views (the model's data or a dequantized copy in
     * *_owned), or the model's integers (quantized); NULL when read at run time. */
    const void *weights;
    void *weights_owned;
    const void *bias;
    void *bias_owned;
    size_t in_c, out_c;     /* what op was created with */
    size_t batch;
    bool empty;
} fc_state;

typedef struct fc_geom {
    size_t batch, in_c, out_c;
    bool quantized;  /* int8 / uint8 activations: q says which operator (MP_WQ_QC8: a 1x1
                      * convolution, XNNPACK having no per-channel fully connected) */
    mp_weighted_q q;
} fc_geom;

static bool value_ready(const mp_tensor *t)
{
    return t->data && (t->is_const || t->value_known);
}

static mp_status fc_geometry(mp_node *n, fc_geom *g)
{
    const mp_op_options *o = n->opt;
    char s1[64], s2[64];
    if (n->n_in < 2 || n->n_in > 3 || n->n_out != 1 || !n->in[0] || !n->in[1])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects input, weights and optional bias, 1 output");
    const mp_tensor *in = n->in[0], *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;

    if (o->weights_format != 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights_format %d is not supported (only DEFAULT)", o->weights_format);
    if (o->activation < MP_ACT_NONE || o->activation > MP_ACT_SIGN_BIT)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown fused activation %d", o->activation);
    if (in->dtype == MP_DT_FLOAT32) {
        mp_status st = mp_node_check_f32_weighted(n, "weights");
        if (st != MP_OK)
            return st;
    } else if (!mp_dtype_is_q8(in->dtype) && in->dtype != MP_DT_INT16) {
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s; expected f32, i8, u8 or i16",
                            in->info->name, mp_dtype_name(in->dtype));
    }
    if (w->rank != 2 || w->dims[0] < 1 || w->dims[1] < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "weights '%s' %s must be [output, input] channels",
                            w->info->name, mp_shape_str(w->rank, w->dims, s1, sizeof s1));
    g->out_c = (size_t)w->dims[0];
    g->in_c = (size_t)w->dims[1];
    if (b && mp_tensor_elements(b) != g->out_c)
        return mp_node_fail(n, MP_ERR_SHAPE, "bias '%s' %s must have %zu elements (output channels)",
                            b->info->name, mp_shape_str(b->rank, b->dims, s1, sizeof s1), g->out_c);

    size_t elems = mp_tensor_elements(in);
    if (in->rank < 1 || elems % g->in_c != 0)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "input '%s' %s cannot be read as rows of %zu (weights '%s' %s)",
                            in->info->name, mp_shape_str(in->rank, in->dims, s1, sizeof s1),
                            g->in_c, w->info->name, mp_shape_str(w->rank, w->dims, s2, sizeof s2));
    if (o->keep_num_dims && (size_t)in->dims[in->rank - 1] != g->in_c)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "keep_num_dims: last dimension of input '%s' %s must equal the "
                            "weights' input channels %zu",
                            in->info->name, mp_shape_str(in->rank, in->dims, s1, sizeof s1),
                            g->in_c);
    g->batch = elems / g->in_c;
    g->quantized = in->dtype != MP_DT_FLOAT32;
    /* per-channel weight scales along the output channels, dimension 0 of [Cout, Cin] */
    if (in->dtype == MP_DT_INT16) /* 16x8: plain C in int16_linear.c */
        return mp_i16_weighted_check(n, "weights", (int32_t)g->out_c, 0);
    return g->quantized ? mp_node_weighted_q(n, "weights", (int32_t)g->out_c, 0, &g->q) : MP_OK;
}

static mp_status fc_infer(mp_node *n)
{
    fc_geom g;
    mp_status st = fc_geometry(n, &g);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t dims[MP_MAX_RANK];
    int32_t rank;
    if (n->opt->keep_num_dims) {
        rank = in->rank;
        for (int32_t i = 0; i < rank; i++)
            dims[i] = in->dims[i];
        dims[rank - 1] = (int32_t)g.out_c;
    } else {
        if (g.batch > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "batch of input '%s' is too large",
                                in->info->name);
        rank = 2;
        dims[0] = (int32_t)g.batch;
        dims[1] = (int32_t)g.out_c;
    }
    return mp_node_set_output_shape(n, rank, dims);
}

static void fc_release(mp_node *n)
{
    fc_state *s = n->state;
    if (!s)
        return;
    mp_mem_free(n->mem, s->weights_owned);
    mp_mem_free(n->mem, s->bias_owned);
    mp_node_free_state(n, &s->op);
}

/* Decide the path and take float32 views of whatever is constant (once); quantized weights
 * and bias are used as they are (taken at create). */
static mp_status fc_load_weights(mp_node *n, const fc_geom *g, fc_state *s)
{
    const mp_tensor *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
    bool w_ready = value_ready(w), b_ready = !b || value_ready(b);
    s->plain = !(w_ready && b_ready);
    if (!w_ready && w->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights '%s' are %s computed at run time; only float32 ones can be "
                            "(others are packed at prepare)",
                            w->info->name, mp_dtype_name(w->dtype));
    if (b && !b_ready && b->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "bias '%s' is %s computed at run time; only a float32 one can be "
                            "(others are packed at prepare)",
                            b->info->name, mp_dtype_name(b->dtype));
    mp_status st = MP_OK;
    const float *view = NULL;
    if (!g->quantized && w_ready && !s->weights) {
        st = mp_const_as_f32(n, w, &view, &s->weights_owned);
        s->weights = view;
    }
    if (st == MP_OK && !g->quantized && b && b_ready && !s->bias) {
        st = mp_const_as_f32(n, b, &view, &s->bias_owned);
        s->bias = view;
    }
    s->loaded = st == MP_OK;
    return st;
}

/* XNNPACK's operator for the node's kind on s's weights and bias (input and output rows
 * contiguous). */
static enum xnn_status fc_create(const mp_node *n, const fc_geom *g, fc_state *s)
{
    const mp_weighted_q *q = &g->q;
    size_t ci = g->in_c, co = g->out_c;
    if (g->quantized) {
        switch (q->kind) {
        case MP_WQ_QS8:
            return xnn_create_fully_connected_nc_qs8(
                ci, co, ci, co, (int8_t)q->in_zp, q->in_scale, q->w_scale[0], s->weights,
                s->bias, (int8_t)q->out_zp, q->out_scale, (int8_t)q->out_lo, (int8_t)q->out_hi,
                0, &s->op);
        case MP_WQ_QU8:
            return xnn_create_fully_connected_nc_qu8(
                ci, co, ci, co, (uint8_t)q->in_zp, q->in_scale, (uint8_t)q->w_zp, q->w_scale[0],
                s->weights, s->bias, (uint8_t)q->out_zp, q->out_scale, (uint8_t)q->out_lo,
                (uint8_t)q->out_hi, 0, &s->op);
        case MP_WQ_QC8:
            /* [Cout, Cin] weights are the [Cout, 1, 1, Cin] filter of a 1x1 convolution, one
             * group, no padding, stride and dilation 1 */
            return xnn_create_convolution2d_nhwc_qc8(
                0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, ci, co, ci, co, (int8_t)q->in_zp, q->in_scale,
                q->w_scale, s->weights, s->bias, (int8_t)q->out_zp, q->out_scale,
                (int8_t)q->out_lo, (int8_t)q->out_hi, 0, &s->op);
        }
    }
    float lo = -INFINITY, hi = INFINITY;
    mp_activation_range(n->opt->activation, &lo, &hi); /* TANH / SIGN_BIT: applied in run */
    return xnn_create_fully_connected_nc_f32(ci, co, ci, co, s->weights, s->bias, lo, hi, 0,
                                             &s->op);
}

/* Bind the batch (rows) and the tensors to op; MP_WQ_QC8's rows are 1x1 images. */
static enum xnn_status fc_setup(const mp_node *n, const fc_geom *g, xnn_operator_t op)
{
    const void *x = n->in[0]->data;
    void *y = n->out[0]->data;
    if (g->quantized) {
        switch (g->q.kind) {
        case MP_WQ_QS8: return xnn_setup_fully_connected_nc_qs8(op, g->batch, x, y, n->pool);
        case MP_WQ_QU8: return xnn_setup_fully_connected_nc_qu8(op, g->batch, x, y, n->pool);
        case MP_WQ_QC8:
            return xnn_setup_convolution2d_nhwc_qc8(op, g->batch, 1, 1, x, y, n->pool);
        }
    }
    return xnn_setup_fully_connected_nc_f32(op, g->batch, x, y, n->pool);
}

static mp_status fc_prepare(mp_node *n)
{
    fc_geom g;
    mp_status st = fc_geometry(n, &g);
    if (st != MP_OK || n->in[0]->dtype == MP_DT_INT16) /* int16: no state, all at the run */
        return st;
    fc_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    if (!s->loaded) {
        st = fc_load_weights(n, &g, s);
        if (st != MP_OK)
            return st;
    }
    s->batch = g.batch;
    s->empty = g.batch == 0;
    if (s->plain) {
        s->in_c = g.in_c;
        s->out_c = g.out_c;
        return MP_OK;
    }

    if (s->op && (s->in_c != g.in_c || s->out_c != g.out_c)) {
        mp_xnn_delete(&s->op);
    }
    if (s->empty)
        return MP_OK;
    if (!s->op) {
        /* Views that are not our copies point at tensor storage, which may have moved since
         * the first prepare (weights computed early live in planned memory): take them again. */
        const mp_tensor *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
        if (!value_ready(w) || (b && !value_ready(b)))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "weights '%s' or their bias are no "
                                "longer available at prepare time", w->info->name);
        if (!s->weights_owned)
            s->weights = w->data;
        if (b && !s->bias_owned)
            s->bias = b->data;
        enum xnn_status xs = fc_create(n, &g, s);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            /* quantized: with the ratios of scales XNNPACK judged */
            return g.quantized ? mp_node_weighted_create_fail(n, &g.q, xs, "fully connected",
                                                              "weights")
                               : mp_node_xnn_fail(n, xs, "fully connected create");
        }
        s->in_c = g.in_c;
        s->out_c = g.out_c;
    }
    enum xnn_status xs = fc_setup(n, &g, s->op);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "fully connected setup");
    return MP_OK;
}

/* out[b][o] = bias[o] + dot(in[b], w[o]): both rows contiguous. */
static void fc_plain(const float *in, const float *w, const float *bias, float *out, size_t batch,
                     size_t in_c, size_t out_c, int32_t act)
{
    for (size_t b = 0; b < batch; b++) {
        const float *x = in + b * in_c;
        float *y = out + b * out_c;
        for (size_t o = 0; o < out_c; o++) {
            const float *wr = w + o * in_c;
            float acc = bias ? bias[o] : 0.0f;
            for (size_t i = 0; i < in_c; i++)
                acc += x[i] * wr[i];
            y[o] = acc;
        }
    }
    mp_apply_activation_f32(out, batch * out_c, act);
}

static mp_status fc_run(mp_node *n)
{
    if (n->in[0]->dtype == MP_DT_INT16) { /* 16x8 */
        fc_geom g;
        mp_status st = fc_geometry(n, &g);
        return st != MP_OK ? st : mp_i16_fc_run(n, g.batch, g.in_c, g.out_c);
    }
    fc_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->empty)
        return MP_OK;
    int32_t act = n->opt->activation;
    if (s->plain) {
        const mp_tensor *b = n->n_in > 2 ? n->in[2] : NULL;
        /* our dequantized copies, else the tensors' current storage */
        const float *w = s->weights_owned ? s->weights : n->in[1]->data;
        const float *bias = s->bias_owned ? s->bias : (b ? b->data : NULL);
        fc_plain(n->in[0]->data, w, bias, n->out[0]->data, s->batch, s->in_c, s->out_c, act);
        return MP_OK;
    }
    enum xnn_status xs = xnn_run_operator(s->op, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "fully connected run");
    if (act == MP_ACT_TANH || act == MP_ACT_SIGN_BIT)
        mp_apply_activation_f32(n->out[0]->data, s->batch * s->out_c, act);
    return MP_OK;
}

const mp_kernel mp_kernels_fc[] = {
    {.opcode = MP_OP_FULLY_CONNECTED, .optional_inputs = 1u << 2, .min_inputs = 2,
     .max_inputs = 3, .n_outputs = 1, .infer = fc_infer, .prepare = fc_prepare, .run = fc_run,
     .release = fc_release},
    {.opcode = -1},
};
