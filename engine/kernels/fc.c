/* Kernel: FULLY_CONNECTED (float32), on XNNPACK's fully_connected_nc operator.
 *
 * Weights are [Cout, Cin] (XNNPACK's default layout), float32 or int8/uint8/float16 in hybrid
 * models (dequantized once). The input of any rank is read as [elements / Cin, Cin], as
 * TFLite does; the output is [batch, Cout], or the input's shape with the last dimension
 * replaced by Cout when keep_num_dims is set. XNNPACK packs the weights at the first prepare;
 * later prepares only bind the batch size and pointers, and run is xnn_run_operator alone.
 * Weights or bias computed at run time (rare) cannot be packed ahead: those nodes use a plain
 * C loop instead. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

typedef struct fc_state {
    xnn_operator_t op;      /* NULL on the plain C path */
    bool plain;             /* weights or bias computed at run time: plain C loop */
    bool loaded;            /* constant weight/bias views taken */
    const float *weights;   /* float32 view when constant, else NULL (read at run time) */
    void *weights_owned;    /* dequantized copy (hybrid models) */
    const float *bias;      /* float32 view when constant, else NULL */
    void *bias_owned;
    size_t in_c, out_c;     /* what op was created with */
    size_t batch;
    bool empty;
} fc_state;

typedef struct fc_geom {
    size_t batch, in_c, out_c;
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
    const mp_tensor *out = n->out[0];

    if (o->weights_format != 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights_format %d is not supported (only DEFAULT)", o->weights_format);
    if (o->activation < MP_ACT_NONE || o->activation > MP_ACT_SIGN_BIT)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown fused activation %d", o->activation);
    if (in->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s; only float32 is supported",
                            in->info->name, mp_dtype_name(in->dtype));
    if (w->dtype != MP_DT_FLOAT32 && w->dtype != MP_DT_FLOAT16 && w->dtype != MP_DT_INT8 &&
        w->dtype != MP_DT_UINT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights '%s' are %s; expected float32, float16, int8 or uint8",
                            w->info->name, mp_dtype_name(w->dtype));
    if (b && b->dtype != MP_DT_FLOAT32 && b->dtype != MP_DT_FLOAT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "bias '%s' is %s; expected float32",
                            b->info->name, mp_dtype_name(b->dtype));
    if (out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; only float32 is produced",
                            out->info->name, mp_dtype_name(out->dtype));
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
    return MP_OK;
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

/* Decide the path and take float32 views of whatever is constant (once). */
static mp_status fc_load_weights(mp_node *n, fc_state *s)
{
    const mp_tensor *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
    bool w_ready = value_ready(w), b_ready = !b || value_ready(b);
    s->plain = !(w_ready && b_ready);
    if (!w_ready && w->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights '%s' are %s computed at run time; only float32 is supported",
                            w->info->name, mp_dtype_name(w->dtype));
    if (b && !b_ready && b->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "bias '%s' is %s computed at run time; only float32 is supported",
                            b->info->name, mp_dtype_name(b->dtype));
    mp_status st = MP_OK;
    if (w_ready && !s->weights)
        st = mp_const_as_f32(n, w, &s->weights, &s->weights_owned);
    if (st == MP_OK && b && b_ready && !s->bias)
        st = mp_const_as_f32(n, b, &s->bias, &s->bias_owned);
    s->loaded = st == MP_OK;
    return st;
}

static mp_status fc_prepare(mp_node *n)
{
    fc_geom g;
    mp_status st = fc_geometry(n, &g);
    if (st != MP_OK)
        return st;
    fc_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    if (!s->loaded) {
        st = fc_load_weights(n, s);
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
        float lo = -INFINITY, hi = INFINITY;
        mp_activation_range(n->opt->activation, &lo, &hi); /* TANH / SIGN_BIT: applied in run */
        enum xnn_status xs = xnn_create_fully_connected_nc_f32(
            g.in_c, g.out_c, g.in_c /* input stride */, g.out_c /* output stride */, s->weights,
            s->bias, lo, hi, 0, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "fully connected create");
        }
        s->in_c = g.in_c;
        s->out_c = g.out_c;
    }
    enum xnn_status xs = xnn_setup_fully_connected_nc_f32(s->op, g.batch, n->in[0]->data,
                                                           n->out[0]->data, n->pool);
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
