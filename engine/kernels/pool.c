/* Kernels: AVERAGE_POOL_2D and MAX_POOL_2D (float32, NHWC), on XNNPACK's pooling operators.
 *
 * TFLite semantics: with SAME padding the average is over the valid (non-padded) pixels of
 * each window, and the maximum ignores padding. XNNPACK matches both: its average pooling
 * with padding (or its TensorFlow SAME mode) divides each output pixel by the number of
 * valid inputs in its window, and its max pooling never reads padding. A window that covers
 * the whole input is run by XNNPACK as a global average pool.
 * XNNPACK refuses 1x1 windows ("meaningless"), but TFLite models use them to subsample:
 * those run as a plain C strided copy. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <string.h>
#include <xnnpack.h>

typedef struct pool_state {
    xnn_operator_t op;     /* NULL for 1x1 windows */
    /* What op was created with: a change means re-creating it. */
    size_t channels;
    uint32_t flags;
    uint32_t pad[4];       /* top, right, bottom, left (explicit padding only) */
    /* Current geometry (for the plain path and the post activation). */
    int32_t batch, in_h, in_w, out_h, out_w;
    size_t out_elems;
    bool empty;
} pool_state;

static bool is_max(const mp_node *n)
{
    return n->opcode == MP_OP_MAX_POOL_2D;
}

/* Output size of one dimension under TFLite's padding rules; false when a VALID window does
 * not fit. */
static bool out_dim(int32_t in, int32_t k, int32_t stride, int32_t padding, int32_t *out)
{
    if (padding == MP_PAD_SAME) {
        *out = (int32_t)(((int64_t)in + stride - 1) / stride);
        return true;
    }
    if (in < k)
        return false;
    *out = (in - k) / stride + 1;
    return true;
}

/* TFLite SAME padding of one dimension: (before, after). */
static void same_pad(int32_t in, int32_t k, int32_t stride, uint32_t *before, uint32_t *after)
{
    int64_t out = ((int64_t)in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + k - in;
    if (total < 0)
        total = 0;
    *before = (uint32_t)(total / 2);
    *after = (uint32_t)(total - total / 2);
}

/* Validate the node and compute its output dims (used by infer and again by prepare). */
static mp_status pool_geometry(mp_node *n, int32_t dims[4])
{
    const mp_op_options *o = n->opt;
    char s1[64];
    if (n->n_in != 1 || n->n_out != 1 || !n->in[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 input and 1 output");
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (in->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s; only float32 is supported",
                            in->info->name, mp_dtype_name(in->dtype));
    if (out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; only float32 is produced",
                            out->info->name, mp_dtype_name(out->dtype));
    if (in->rank != 4)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s must have rank 4 (NHWC)",
                            in->info->name, mp_shape_str(in->rank, in->dims, s1, sizeof s1));
    if (o->filter_h < 1 || o->filter_w < 1 || o->stride_h < 1 || o->stride_w < 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "invalid filter %dx%d or stride %dx%d",
                            o->filter_h, o->filter_w, o->stride_h, o->stride_w);
    if (o->padding != MP_PAD_SAME && o->padding != MP_PAD_VALID)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown padding %d", o->padding);
    if (o->activation < MP_ACT_NONE || o->activation > MP_ACT_SIGN_BIT)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown fused activation %d", o->activation);
    if (in->dims[3] < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s has no channels", in->info->name,
                            mp_shape_str(in->rank, in->dims, s1, sizeof s1));
    dims[0] = in->dims[0];
    dims[3] = in->dims[3];
    if (!out_dim(in->dims[1], o->filter_h, o->stride_h, o->padding, &dims[1]) ||
        !out_dim(in->dims[2], o->filter_w, o->stride_w, o->padding, &dims[2]))
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "input '%s' %s is smaller than the %dx%d window with VALID padding",
                            in->info->name, mp_shape_str(in->rank, in->dims, s1, sizeof s1),
                            o->filter_h, o->filter_w);
    return MP_OK;
}

static mp_status pool_infer(mp_node *n)
{
    int32_t dims[4] = {0, 0, 0, 0};
    mp_status st = pool_geometry(n, dims);
    if (st != MP_OK)
        return st;
    return mp_node_set_output_shape(n, 4, dims);
}

static void pool_release(mp_node *n)
{
    pool_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

static mp_status pool_prepare(mp_node *n)
{
    const mp_op_options *o = n->opt;
    int32_t dims[4] = {0, 0, 0, 0};
    mp_status st = pool_geometry(n, dims);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *out = n->out[0];
    pool_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    s->batch = in->dims[0];
    s->in_h = in->dims[1];
    s->in_w = in->dims[2];
    s->out_h = dims[1];
    s->out_w = dims[2];
    s->out_elems = mp_tensor_elements(out);
    s->empty = s->out_elems == 0;
    if (o->filter_h == 1 && o->filter_w == 1)
        return MP_OK; /* plain strided copy, no operator */

    /* Padding: XNNPACK's TensorFlow SAME mode computes it at setup (no new operator when the
     * input size changes), but only when the stride does not exceed the window: otherwise the
     * total padding can be negative, which TFLite clamps to 0 and this XNNPACK wraps around
     * (test_kernels_pool covers it). Then pass TFLite's padding explicitly, re-creating the
     * operator if it changes. */
    size_t channels = (size_t)in->dims[3];
    uint32_t flags = 0, pad[4] = {0, 0, 0, 0};
    if (o->padding == MP_PAD_SAME) {
        if (o->stride_h <= o->filter_h && o->stride_w <= o->filter_w) {
            flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
        } else {
            same_pad(s->in_h, o->filter_h, o->stride_h, &pad[0], &pad[2]);
            same_pad(s->in_w, o->filter_w, o->stride_w, &pad[3], &pad[1]);
        }
    }
    if (s->op && (s->channels != channels || s->flags != flags || s->pad[0] != pad[0] ||
                  s->pad[1] != pad[1] || s->pad[2] != pad[2] || s->pad[3] != pad[3])) {
        mp_xnn_delete(&s->op);
    }
    if (s->empty)
        return MP_OK;

    enum xnn_status xs;
    if (!s->op) {
        float lo = -INFINITY, hi = INFINITY;
        mp_activation_range(o->activation, &lo, &hi); /* TANH / SIGN_BIT: applied in run */
        if (is_max(n))
            xs = xnn_create_max_pooling2d_nhwc_f32(
                pad[0], pad[1], pad[2], pad[3], (uint32_t)o->filter_h, (uint32_t)o->filter_w,
                (uint32_t)o->stride_h, (uint32_t)o->stride_w, 1, 1, channels, channels, channels,
                lo, hi, flags, &s->op);
        else
            xs = xnn_create_average_pooling2d_nhwc_f32(
                pad[0], pad[1], pad[2], pad[3], (uint32_t)o->filter_h, (uint32_t)o->filter_w,
                (uint32_t)o->stride_h, (uint32_t)o->stride_w, channels, channels, channels, lo,
                hi, flags, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "pooling create");
        }
        s->channels = channels;
        s->flags = flags;
        memcpy(s->pad, pad, sizeof pad);
    }
    if (is_max(n))
        xs = xnn_setup_max_pooling2d_nhwc_f32(s->op, (size_t)s->batch, (size_t)s->in_h,
                                              (size_t)s->in_w, in->data, out->data, n->pool);
    else
        xs = xnn_setup_average_pooling2d_nhwc_f32(s->op, (size_t)s->batch, (size_t)s->in_h,
                                                  (size_t)s->in_w, in->data, out->data, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "pooling setup");
    return MP_OK;
}

/* A 1x1 window (average and maximum alike) picks one input pixel per output pixel; padding
 * is always 0 for it. */
static void pool_1x1(const pool_state *s, const mp_op_options *o, const float *in, float *out,
                     size_t c)
{
    float lo = -INFINITY, hi = INFINITY;
    mp_activation_range(o->activation, &lo, &hi);
    for (int32_t b = 0; b < s->batch; b++)
        for (int32_t y = 0; y < s->out_h; y++) {
            const float *row = in + (((size_t)b * s->in_h + (size_t)y * o->stride_h) * s->in_w) * c;
            for (int32_t x = 0; x < s->out_w; x++) {
                const float *p = row + (size_t)x * o->stride_w * c;
                for (size_t i = 0; i < c; i++) {
                    float v = p[i];
                    out[i] = v < lo ? lo : (v > hi ? hi : v);
                }
                out += c;
            }
        }
}

static mp_status pool_run(mp_node *n)
{
    pool_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->empty)
        return MP_OK;
    if (s->op) {
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        if (xs != xnn_status_success)
            return mp_node_xnn_fail(n, xs, "pooling run");
    } else {
        pool_1x1(s, n->opt, n->in[0]->data, n->out[0]->data, (size_t)n->in[0]->dims[3]);
    }
    int32_t act = n->opt->activation;
    if (act == MP_ACT_TANH || act == MP_ACT_SIGN_BIT)
        mp_apply_activation_f32(n->out[0]->data, s->out_elems, act);
    return MP_OK;
}

const mp_kernel mp_kernels_pool[] = {
    {.opcode = MP_OP_AVERAGE_POOL_2D, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = pool_infer, .prepare = pool_prepare, .run = pool_run, .release = pool_release},
    {.opcode = MP_OP_MAX_POOL_2D, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = pool_infer, .prepare = pool_prepare, .run = pool_run, .release = pool_release},
    {.opcode = -1},
};
