/* Kernels: MediaPipe's custom MaxPoolingWithArgmax2D and MaxUnpooling2D (max_pool_argmax.cc,
 * max_unpooling.cc; the encoder-decoder pair of its segmentation models), float32 NHWC,
 * plain C. Options (TfLitePoolParams, read by model/tflite_custom_mediapipe.c): padding,
 * strides, filter size, activation.
 *
 * MaxPoolingWithArgmax2D: input [N,H,W,C]; outputs the maximum and its index, both float32
 * [N,OH,OW,C]. OH = SAME ? ceil(H / stride) : (H - filter + stride) / stride (truncated; a
 * negative size refused), the padding before max(((OH-1)*stride + filter - H) / 2, 0), as
 * TensorFlow Lite's pools. Each window is clipped to the input; the maximum is the first
 * strictly greatest value in row-major window order (a tie keeps the earlier one), starting
 * from the lowest float (an empty window gives it, index 0); it is clamped to the activation's
 * range (RELU, RELU_N1_TO_1, RELU6; the others clamp nothing, as MediaPipe's). The index is
 * that of the window position, not of the input: fy * filter_w + fx + 0.1 (the 0.1 so that a
 * float-to-int conversion gives back the integer), where (fy, fx) counts from the window's
 * corner in the padded input.
 *
 * MaxUnpooling2D: inputs values and indices (float32, the same [N,H,W,C]); output float32
 * [N, H*filter_h, W*filter_w, C], zeroed, then each value written where its index points:
 * idx = (int) index, output pixel (y*stride_h - pad_h + idx / filter_w, x*stride_w - pad_w +
 * idx % filter_w) (C's truncating division, as MediaPipe's C++), with pad =
 * max(((H-1)*stride + filter - OH) / 2, 0). A later value at the same place overwrites an
 * earlier one. An index from the model that lands outside the output is skipped, as MediaPipe
 * does; one that is not a number or does not fit an int (undefined in MediaPipe's conversion)
 * is skipped too. The padding option plays no part in unpooling. */
#include <float.h>
#include <string.h>

#include "engine/kernels/kernel.h"

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

typedef struct pa_geom {
    int32_t batch, in_h, in_w, ch, out_h, out_w;
    int32_t pad_h, pad_w;
} pa_geom;

/* The shared options' checks (the reader checked them; a hand-built node may not be). */
static mp_status pa_check_options(mp_node *n)
{
    const mp_op_options *o = n->opt;
    if (o->filter_h < 1 || o->filter_w < 1 || o->stride_h < 1 || o->stride_w < 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "invalid filter %dx%d or stride %dx%d",
                            o->filter_h, o->filter_w, o->stride_h, o->stride_w);
    if (o->padding != MP_PAD_SAME && o->padding != MP_PAD_VALID)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown padding %d", o->padding);
    return MP_OK;
}

/* A rank-4 float32 tensor, or MP_ERR_UNSUPPORTED / MP_ERR_SHAPE naming it as `what`. */
static mp_status pa_check_f32_4d(mp_node *n, const mp_tensor *t, const char *what)
{
    char b[96];
    if (t->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "%s '%s' is %s; expected float32", what,
                            mp_tname(t), mp_dtype_name(t->dtype));
    if (t->rank != 4)
        return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' %s must have rank 4 (NHWC)", what,
                            mp_tname(t), SHAPE_STR(t, b));
    return MP_OK;
}

/* TensorFlow Lite's ComputePadding (dilation 1): the padding before, never negative. */
static int32_t pa_padding(int32_t stride, int32_t in, int32_t k, int32_t out)
{
    int64_t p = (((int64_t)out - 1) * stride + k - in) / 2;
    return p > 0 ? (int32_t)(p > INT32_MAX ? INT32_MAX : p) : 0;
}

/* Every output tensor has the geometry's shape (infer set it; checked before writing). */
static mp_status pa_check_outputs(mp_node *n, const pa_geom *g)
{
    for (int32_t k = 0; k < n->n_out; k++) {
        const mp_tensor *t = n->out[k];
        if (t->rank != 4 || t->dims[0] != g->batch || t->dims[1] != g->out_h ||
            t->dims[2] != g->out_w || t->dims[3] != g->ch || !t->data)
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have its inferred shape",
                                mp_tname(t));
    }
    return MP_OK;
}

typedef mp_status (*pa_geometry_fn)(mp_node *n, pa_geom *g);

/* infer: every output gets the geometry's shape. */
static mp_status pa_infer(mp_node *n, pa_geometry_fn geometry)
{
    pa_geom g;
    mp_status st = geometry(n, &g);
    if (st != MP_OK)
        return st;
    int32_t dims[4] = {g.batch, g.out_h, g.out_w, g.ch};
    for (int32_t k = 0; k < n->n_out; k++)
        if (!mp_tensor_set_shape(n->out[k], 4, dims))
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' is too large", mp_tname(n->out[k]));
    return MP_OK;
}

/* run: the geometry again, and the outputs checked against it before anything is written. */
static mp_status pa_run_geometry(mp_node *n, pa_geometry_fn geometry, pa_geom *g)
{
    mp_status st = geometry(n, g);
    return st == MP_OK ? pa_check_outputs(n, g) : st;
}

/* ---- MaxPoolingWithArgmax2D ------------------------------------------------------------- */

/* Output size of one axis, MediaPipe's (TensorFlow's GetWindowedOutputSize); false when
 * negative. */
static bool argmax_out_dim(int32_t padding, int32_t in, int32_t k, int32_t stride, int32_t *out)
{
    int64_t o = padding == MP_PAD_SAME ? ((int64_t)in + stride - 1) / stride
                                       : ((int64_t)in - k + stride) / stride;
    if (o < 0)
        return false;
    *out = (int32_t)o;
    return true;
}

/* The most window reads a run may take (2^28: well under a second; real models' 2x2 windows
 * take four per output element). */
#define ARGMAX_MAX_READS 268435456.0

static mp_status argmax_geometry(mp_node *n, pa_geom *g)
{
    if (n->n_in != 1 || !n->in[0] || n->n_out != 2 || !n->out[0] || !n->out[1])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 input and 2 outputs (max, argmax), "
                            "has %d and %d", n->n_in, n->n_out);
    mp_status st = pa_check_options(n);
    if (st == MP_OK)
        st = pa_check_f32_4d(n, n->in[0], "input");
    if (st == MP_OK && n->out[0]->dtype != MP_DT_FLOAT32)
        st = pa_check_f32_4d(n, n->out[0], "output");
    if (st == MP_OK && n->out[1]->dtype != MP_DT_FLOAT32)
        st = pa_check_f32_4d(n, n->out[1], "argmax output");
    if (st != MP_OK)
        return st;
    const mp_op_options *o = n->opt;
    const mp_tensor *in = n->in[0];
    if (o->activation < MP_ACT_NONE || o->activation > 6)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown fused activation %d", o->activation);
    *g = (pa_geom){.batch = in->dims[0], .in_h = in->dims[1], .in_w = in->dims[2],
                   .ch = in->dims[3]};
    if (!argmax_out_dim(o->padding, g->in_h, o->filter_h, o->stride_h, &g->out_h) ||
        !argmax_out_dim(o->padding, g->in_w, o->filter_w, o->stride_w, &g->out_w)) {
        char b[96];
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "input '%s' %s is smaller than the %dx%d window with VALID padding",
                            mp_tname(in), SHAPE_STR(in, b), o->filter_h, o->filter_w);
    }
    g->pad_h = pa_padding(o->stride_h, g->in_h, o->filter_h, g->out_h);
    g->pad_w = pa_padding(o->stride_w, g->in_w, o->filter_w, g->out_w);
    /* A window far larger than the input (legal, clipped) would make the walk quadratic in
     * the input: refused above ARGMAX_MAX_READS window reads rather than run for hours. */
    double reads = (double)g->batch * g->out_h * g->out_w * g->ch *
                   (o->filter_h < g->in_h ? o->filter_h : g->in_h) *
                   (o->filter_w < g->in_w ? o->filter_w : g->in_w);
    if (reads > ARGMAX_MAX_READS)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "the %dx%d window over input '%s' takes %.3g reads, more than %.3g",
                            o->filter_h, o->filter_w, mp_tname(in), reads, ARGMAX_MAX_READS);
    return MP_OK;
}

static mp_status argmax_infer(mp_node *n)
{
    return pa_infer(n, argmax_geometry);
}

/* The window rows (or columns) [*f0, *f1) of output position o that fall inside the input. */
static void argmax_window(int32_t o, int32_t stride, int32_t pad, int32_t k, int32_t in,
                          int32_t *f0, int32_t *f1, int64_t *origin)
{
    int64_t org = (int64_t)o * stride - pad;
    int64_t lo = org < 0 ? -org : 0, hi = in - org < k ? in - org : k;
    *f0 = (int32_t)lo;
    *f1 = (int32_t)(hi > lo ? hi : lo);
    *origin = org;
}

static mp_status argmax_run(mp_node *n)
{
    pa_geom g;
    mp_status st = pa_run_geometry(n, argmax_geometry, &g);
    if (st != MP_OK || mp_tensor_elements(n->out[0]) == 0)
        return st; /* an empty output: no row to walk, however many the batch and height */
    const mp_op_options *o = n->opt;
    float lo = -FLT_MAX, hi = FLT_MAX;
    if (!mp_activation_range(o->activation, &lo, &hi)) {
        lo = -FLT_MAX; /* TANH, SIGN_BIT, SIGMOID: MediaPipe clamps nothing */
        hi = FLT_MAX;
    }
    const float *x = n->in[0]->data;
    float *y = n->out[0]->data, *idx = n->out[1]->data;
    const size_t ch = (size_t)g.ch;
    for (int32_t b = 0; b < g.batch; b++)
        for (int32_t oy = 0; oy < g.out_h; oy++) {
            int32_t fy0, fy1;
            int64_t y0;
            argmax_window(oy, o->stride_h, g.pad_h, o->filter_h, g.in_h, &fy0, &fy1, &y0);
            for (int32_t ox = 0; ox < g.out_w; ox++) {
                int32_t fx0, fx1;
                int64_t x0;
                argmax_window(ox, o->stride_w, g.pad_w, o->filter_w, g.in_w, &fx0, &fx1, &x0);
                size_t out_off = (((size_t)b * (size_t)g.out_h + (size_t)oy) * (size_t)g.out_w +
                                  (size_t)ox) * ch;
                for (size_t c = 0; c < ch; c++) {
                    float best = -FLT_MAX;
                    int32_t by = 0, bx = 0;
                    for (int32_t fy = fy0; fy < fy1; fy++)
                        for (int32_t fx = fx0; fx < fx1; fx++) {
                            size_t in_off = (((size_t)b * (size_t)g.in_h + (size_t)(y0 + fy)) *
                                                 (size_t)g.in_w + (size_t)(x0 + fx)) * ch + c;
                            if (x[in_off] > best) {
                                best = x[in_off];
                                by = fy;
                                bx = fx;
                            }
                        }
                    y[out_off + c] = best < lo ? lo : best > hi ? hi : best;
                    idx[out_off + c] = (float)((int64_t)by * o->filter_w + bx) + 0.1f;
                }
            }
        }
    return MP_OK;
}

/* ---- MaxUnpooling2D --------------------------------------------------------------------- */

static mp_status unpool_geometry(mp_node *n, pa_geom *g)
{
    if (n->n_in != 2 || !n->in[0] || !n->in[1] || n->n_out != 1 || !n->out[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 inputs (values, indices) and 1 output, "
                            "has %d and %d", n->n_in, n->n_out);
    const mp_tensor *in = n->in[0], *ix = n->in[1];
    mp_status st = pa_check_options(n);
    if (st == MP_OK)
        st = pa_check_f32_4d(n, in, "input");
    if (st == MP_OK)
        st = pa_check_f32_4d(n, ix, "indices");
    if (st == MP_OK && n->out[0]->dtype != MP_DT_FLOAT32)
        st = pa_check_f32_4d(n, n->out[0], "output");
    if (st != MP_OK)
        return st;
    if (memcmp(in->dims, ix->dims, 4 * sizeof in->dims[0]) != 0) {
        char b1[96], b2[96];
        return mp_node_fail(n, MP_ERR_SHAPE, "indices '%s' %s must have the shape of input '%s' %s",
                            mp_tname(ix), SHAPE_STR(ix, b1), mp_tname(in), SHAPE_STR(in, b2));
    }
    const mp_op_options *o = n->opt;
    int64_t oh = (int64_t)in->dims[1] * o->filter_h, ow = (int64_t)in->dims[2] * o->filter_w;
    if (oh > INT32_MAX || ow > INT32_MAX) {
        char b[96];
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s times the %dx%d filter is too large",
                            mp_tname(in), SHAPE_STR(in, b), o->filter_h, o->filter_w);
    }
    *g = (pa_geom){.batch = in->dims[0], .in_h = in->dims[1], .in_w = in->dims[2],
                   .ch = in->dims[3], .out_h = (int32_t)oh, .out_w = (int32_t)ow};
    g->pad_h = pa_padding(o->stride_h, g->out_h, o->filter_h, g->in_h);
    g->pad_w = pa_padding(o->stride_w, g->out_w, o->filter_w, g->in_w);
    return MP_OK;
}

static mp_status unpool_infer(mp_node *n)
{
    return pa_infer(n, unpool_geometry);
}

static mp_status unpool_run(mp_node *n)
{
    pa_geom g;
    mp_status st = pa_run_geometry(n, unpool_geometry, &g);
    if (st != MP_OK || mp_tensor_elements(n->in[0]) == 0)
        return st; /* an empty input has an empty output: nothing to zero or walk */
    const mp_op_options *o = n->opt;
    const float *x = n->in[0]->data, *ix = n->in[1]->data;
    float *y = n->out[0]->data;
    memset(y, 0, mp_tensor_elements(n->out[0]) * sizeof(float));
    const size_t ch = (size_t)g.ch;
    for (int32_t b = 0; b < g.batch; b++)
        for (int32_t iy = 0; iy < g.in_h; iy++)
            for (int32_t jx = 0; jx < g.in_w; jx++) {
                size_t in_off = (((size_t)b * (size_t)g.in_h + (size_t)iy) * (size_t)g.in_w +
                                 (size_t)jx) * ch;
                for (size_t c = 0; c < ch; c++) {
                    float f = ix[in_off + c];
                    /* (int) f is defined only for f in (INT32_MIN - 1, INT32_MAX + 1) */
                    if (!(f > -2147483904.0f && f < 2147483648.0f))
                        continue;
                    int32_t k = (int32_t)f;
                    int64_t oy = (int64_t)iy * o->stride_h - g.pad_h + k / o->filter_w;
                    int64_t ox = (int64_t)jx * o->stride_w - g.pad_w + k % o->filter_w;
                    if (oy < 0 || oy >= g.out_h || ox < 0 || ox >= g.out_w)
                        continue;
                    size_t out_off = (((size_t)b * (size_t)g.out_h + (size_t)oy) *
                                          (size_t)g.out_w + (size_t)ox) * ch + c;
                    y[out_off] = x[in_off + c];
                }
            }
    return MP_OK;
}

const mp_kernel mp_kernels_pool_argmax[] = {
    {.opcode = MP_OP_MAX_POOL_ARGMAX, .min_inputs = 1, .max_inputs = 1, .n_outputs = 2,
     .infer = argmax_infer, .run = argmax_run},
    {.opcode = MP_OP_MAX_UNPOOL, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = unpool_infer, .run = unpool_run},
    {.opcode = -1},
};
