/* Kernels: AVERAGE_POOL_2D and MAX_POOL_2D (float32, int8, uint8, int16; NHWC), on XNNPACK's
 * pooling operators, and L2_POOL_2D (float32, plain C; its section at the end).
 *
 * TFLite semantics: with SAME padding the average is over the valid (non-padded) pixels of
 * each window, and the maximum ignores padding. XNNPACK matches both: its average pooling
 * with padding (or its TensorFlow SAME mode) divides each output pixel by the number of
 * valid inputs in its window, and its max pooling never reads padding. A window that covers
 * the whole input is run by XNNPACK as a global average pool.
 * XNNPACK refuses 1x1 windows ("meaningless"), but TFLite models use them to subsample:
 * those run as a plain C strided copy.
 *
 * int8 and uint8: input and output must share one scale and zero point (TensorFlow Lite's
 * pooling assumes it and so does this kernel: it refuses otherwise); the fused activation is
 * an integer range. MAX_POOL_2D runs on XNNPACK's max_pooling2d_nhwc_s8 / _u8, which compare
 * the integers as TensorFlow Lite does. AVERAGE_POOL_2D follows TensorFlow Lite's reference
 * integer AveragePool: the integer sum over the window's valid pixels divided by their count,
 * rounded half away from zero ((sum + count/2) / count, or (sum - count/2) / count below
 * zero), clamped to the activation range. uint8 runs on XNNPACK's
 * average_pooling2d_nhwc_qu8 when no window reaches into padding (its padded windows count
 * the padding as zeros, not TensorFlow Lite's average over the valid pixels; its
 * requantization may round differently by 1). Padded uint8 windows, all int8 ones (XNNPACK
 * has no int8 average pooling with a window; its global_average_pooling_nwc_qs8 rounds in
 * fp32, not as TensorFlow Lite's integer division) and 1x1 windows of either pooling (one
 * pixel: its own average and maximum) run as that reference in plain C, bit for bit.
 * A window so much larger than the input that XNNPACK's indirection buffer would take more
 * than 32 MiB (legal: TFLite clips every window to the input) runs in plain C too, float32
 * and 8-bit, average and maximum, over the clipped windows (pool_window_f32 / _q8).
 * int16 (16x8 models: zero point 0, input and output sharing it and the scale) always runs
 * that plain-C reference (reference_integer_ops' int16 AveragePool and MaxPool: the same
 * arithmetic); sums are kept in 64 bits, so no window is too large for them. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/quant_tensor.h"

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
    /* Run in plain C (no XNNPACK operator): a window XNNPACK would need too much memory for
     * (pool_too_big_for_xnn); the padding before the first row and column that path uses. */
    bool plain;
    int32_t pad_top, pad_left;
    /* 8-bit tensors only (a float node's state ends before these: its size is unchanged):
     * their shared quantization and the activation's integer range. */
    bool q8;
    float scale;
    int32_t zero_point, lo, hi;
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

/* XNNPACK's pooling keeps an indirection buffer of about batch x out_h x (window + (out_w - 1)
 * x min(stride_w, filter_w) x filter_h) pointers, whatever the input size: a window far
 * larger than the input (legal: TFLite clips windows to the input) would make it allocate
 * gigabytes. Above this many pointers (32 MiB) the window runs in plain C, whose cost is
 * the clipped windows' pixels. Real models' windows stay far below it. */
#define POOL_XNN_MAX_POINTERS 4194304.0

static bool pool_too_big_for_xnn(const pool_state *s, const mp_op_options *o)
{
    double step = o->stride_w < o->filter_w ? o->stride_w : o->filter_w;
    double per_row = (double)o->filter_h * o->filter_w + (s->out_w - 1.0) * step * o->filter_h;
    return (double)s->batch * s->out_h * per_row > POOL_XNN_MAX_POINTERS;
}

/* Validate the node and compute its output dims (used by infer and again by prepare). */
/* The quantized dtypes pooled in the integers (plain C, or XNNPACK for 8 bits). */
static bool pool_is_int(mp_dtype dt)
{
    return mp_dtype_is_q8(dt) || dt == MP_DT_INT16;
}

static mp_status pool_geometry(mp_node *n, int32_t dims[4])
{
    const mp_op_options *o = n->opt;
    char s1[64];
    if (n->n_in != 1 || n->n_out != 1 || !n->in[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 input and 1 output");
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (in->dtype != MP_DT_FLOAT32 && !pool_is_int(in->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' is %s; only float32, int8, uint8 and int16 are supported",
                            in->info->name, mp_dtype_name(in->dtype));
    if (out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is %s",
                            out->info->name, mp_dtype_name(out->dtype), in->info->name,
                            mp_dtype_name(in->dtype));
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

/* 8-bit tensors: the quantization input and output share, and the fused activation's range
 * in the integers. */
static mp_status pool_quant(mp_node *n, float *scale, int32_t *zero_point, int32_t *lo,
                            int32_t *hi)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    float so;
    int32_t zo;
    mp_status st = mp_node_qparams(n, in, scale, zero_point);
    if (st == MP_OK)
        st = mp_node_qparams(n, out, &so, &zo);
    if (st != MP_OK)
        return st;
    if (fabsf(so - *scale) > 1e-6f * *scale || zo != *zero_point)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' (scale %g, zero point %d) and output '%s' (scale %g, zero "
                            "point %d) must share their quantization",
                            in->info->name, (double)*scale, *zero_point, out->info->name,
                            (double)so, zo);
    if (in->dtype == MP_DT_INT16 && *zero_point != 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "i16 input '%s' has zero point %d; TensorFlow Lite's int16 kernels "
                            "take only 0",
                            in->info->name, *zero_point);
    if (!mp_activation_range_q(n->opt->activation, *scale, *zero_point, in->dtype, lo, hi))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "fused activation %d on %s tensors is not supported",
                            n->opt->activation, mp_dtype_name(in->dtype));
    return MP_OK;
}

static mp_status pool_infer(mp_node *n)
{
    int32_t dims[4] = {0, 0, 0, 0};
    mp_status st = pool_geometry(n, dims);
    if (st == MP_OK && pool_is_int(n->in[0]->dtype)) {
        float scale;
        int32_t zp, lo, hi;
        st = pool_quant(n, &scale, &zp, &lo, &hi);
    }
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

/* Create the node's 8-bit operator: max pooling (int8 or uint8) or uint8 average pooling. */
static enum xnn_status pool_create_q8(const mp_node *n, const pool_state *s, const uint32_t pad[4],
                                      uint32_t flags, size_t c, xnn_operator_t *op)
{
    const mp_op_options *o = n->opt;
    const uint32_t fh = (uint32_t)o->filter_h, fw = (uint32_t)o->filter_w;
    const uint32_t sh = (uint32_t)o->stride_h, sw = (uint32_t)o->stride_w;
    if (!is_max(n))
        return xnn_create_average_pooling2d_nhwc_qu8(
            pad[0], pad[1], pad[2], pad[3], fh, fw, sh, sw, c, c, c, (uint8_t)s->zero_point,
            s->scale, (uint8_t)s->zero_point, s->scale, (uint8_t)s->lo, (uint8_t)s->hi, flags, op);
    if (n->in[0]->dtype == MP_DT_INT8)
        return xnn_create_max_pooling2d_nhwc_s8(pad[0], pad[1], pad[2], pad[3], fh, fw, sh, sw, 1,
                                                1, c, c, c, (int8_t)s->lo, (int8_t)s->hi, flags,
                                                op);
    return xnn_create_max_pooling2d_nhwc_u8(pad[0], pad[1], pad[2], pad[3], fh, fw, sh, sw, 1, 1,
                                            c, c, c, (uint8_t)s->lo, (uint8_t)s->hi, flags, op);
}

static enum xnn_status pool_create_f32(const mp_node *n, const uint32_t pad[4], uint32_t flags,
                                       size_t c, xnn_operator_t *op)
{
    const mp_op_options *o = n->opt;
    float lo = -INFINITY, hi = INFINITY;
    mp_activation_range(o->activation, &lo, &hi); /* TANH / SIGN_BIT: applied in run */
    if (is_max(n))
        return xnn_create_max_pooling2d_nhwc_f32(
            pad[0], pad[1], pad[2], pad[3], (uint32_t)o->filter_h, (uint32_t)o->filter_w,
            (uint32_t)o->stride_h, (uint32_t)o->stride_w, 1, 1, c, c, c, lo, hi, flags, op);
    return xnn_create_average_pooling2d_nhwc_f32(
        pad[0], pad[1], pad[2], pad[3], (uint32_t)o->filter_h, (uint32_t)o->filter_w,
        (uint32_t)o->stride_h, (uint32_t)o->stride_w, c, c, c, lo, hi, flags, op);
}

static enum xnn_status pool_setup(const mp_node *n, const pool_state *s)
{
    const size_t b = (size_t)s->batch, h = (size_t)s->in_h, w = (size_t)s->in_w;
    const void *x = n->in[0]->data;
    void *y = n->out[0]->data;
    switch (n->in[0]->dtype) {
    case MP_DT_INT8: return xnn_setup_max_pooling2d_nhwc_s8(s->op, b, h, w, x, y, n->pool);
    case MP_DT_UINT8:
        return is_max(n) ? xnn_setup_max_pooling2d_nhwc_u8(s->op, b, h, w, x, y, n->pool)
                         : xnn_setup_average_pooling2d_nhwc_qu8(s->op, b, h, w, x, y, n->pool);
    default:
        return is_max(n) ? xnn_setup_max_pooling2d_nhwc_f32(s->op, b, h, w, x, y, n->pool)
                         : xnn_setup_average_pooling2d_nhwc_f32(s->op, b, h, w, x, y, n->pool);
    }
}

static mp_status pool_prepare(mp_node *n)
{
    const mp_op_options *o = n->opt;
    int32_t dims[4] = {0, 0, 0, 0};
    mp_status st = pool_geometry(n, dims);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *out = n->out[0];
    const bool q8 = pool_is_int(in->dtype); /* int16 too */
    pool_state *s = mp_node_state(n, q8 ? sizeof *s : offsetof(pool_state, q8));
    if (!s)
        return MP_ERR_NOMEM;
    s->batch = in->dims[0];
    s->in_h = in->dims[1];
    s->in_w = in->dims[2];
    s->out_h = dims[1];
    s->out_w = dims[2];
    s->out_elems = mp_tensor_elements(out);
    s->empty = s->out_elems == 0;
    /* TensorFlow Lite's padding, for the plain-C average and to know whether any window
     * reaches into it */
    uint32_t tf_pad[4] = {0, 0, 0, 0};
    if (o->padding == MP_PAD_SAME) {
        same_pad(s->in_h, o->filter_h, o->stride_h, &tf_pad[0], &tf_pad[2]);
        same_pad(s->in_w, o->filter_w, o->stride_w, &tf_pad[3], &tf_pad[1]);
    }
    s->pad_top = (int32_t)tf_pad[0];
    s->pad_left = (int32_t)tf_pad[3];
    s->plain = pool_too_big_for_xnn(s, o);
    if (q8) {
        s->q8 = true;
        st = pool_quant(n, &s->scale, &s->zero_point, &s->lo, &s->hi);
        if (st != MP_OK)
            return st;
        bool padded = tf_pad[0] || tf_pad[1] || tf_pad[2] || tf_pad[3];
        if ((!is_max(n) && (in->dtype == MP_DT_INT8 || padded)) || in->dtype == MP_DT_INT16)
            s->plain = true;
    }
    if (s->plain || (o->filter_h == 1 && o->filter_w == 1)) {
        mp_xnn_delete(&s->op); /* plain C (a shape change may have brought padding) */
        return MP_OK;
    }

    /* Padding: XNNPACK's TensorFlow SAME mode computes it at setup (no new operator when the
     * input size changes), but only when the stride does not exceed the window: otherwise the
     * total padding can be negative, which TFLite clamps to 0 and this XNNPACK wraps around
     * (test_kernels_pool covers it). Then pass TFLite's padding explicitly, re-creating the
     * operator if it changes. uint8 average pooling gets here without padding only. */
    size_t channels = (size_t)in->dims[3];
    uint32_t flags = 0, pad[4] = {0, 0, 0, 0};
    if (o->padding == MP_PAD_SAME) {
        if (o->stride_h <= o->filter_h && o->stride_w <= o->filter_w)
            flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
        else
            memcpy(pad, tf_pad, sizeof pad);
    }
    if (s->op && (s->channels != channels || s->flags != flags || s->pad[0] != pad[0] ||
                  s->pad[1] != pad[1] || s->pad[2] != pad[2] || s->pad[3] != pad[3])) {
        mp_xnn_delete(&s->op);
    }
    if (s->empty)
        return MP_OK;

    enum xnn_status xs;
    if (!s->op) {
        xs = q8 ? pool_create_q8(n, s, pad, flags, channels, &s->op)
                   : pool_create_f32(n, pad, flags, channels, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "pooling create");
        }
        s->channels = channels;
        s->flags = flags;
        memcpy(s->pad, pad, sizeof pad);
    }
    xs = pool_setup(n, s);
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

/* Add n integer values (int8, uint8 or int16) to n 32-bit sums: contiguous, so the compiler
 * vectorizes it (twice as many per vector as 64-bit sums). */
static inline void q8_accumulate(int32_t *acc, const void *x, mp_dtype dt, size_t n)
{
    if (dt == MP_DT_INT8) {
        const int8_t *p = x;
        for (size_t i = 0; i < n; i++)
            acc[i] += p[i];
    } else if (dt == MP_DT_INT16) {
        const int16_t *p = x;
        for (size_t i = 0; i < n; i++)
            acc[i] += p[i];
    } else {
        const uint8_t *p = x;
        for (size_t i = 0; i < n; i++)
            acc[i] += p[i];
    }
}

/* Channels summed at once: the sums of one block live on the stack. */
#define POOL_Q8_BLOCK 256

/* The larger of n integer values and n maxima, in place. */
static inline void q8_maximum(int64_t *acc, const void *x, mp_dtype dt, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int32_t v = dt == MP_DT_INT8    ? ((const int8_t *)x)[i]
                    : dt == MP_DT_INT16 ? ((const int16_t *)x)[i]
                                        : ((const uint8_t *)x)[i];
        acc[i] = v > acc[i] ? v : acc[i];
    }
}

/* One axis of output position `at`'s window: its first input coordinate *start (negative in
 * SAME's leading padding) and the taps [*k0, *k1) of the filter that fall inside the input. */
static void pool_axis(int64_t at, int32_t stride, int64_t pad, int64_t in, int32_t filter,
                      int64_t *start, int64_t *k0, int64_t *k1)
{
    *start = at * stride - pad;
    *k0 = *start < 0 ? -*start : 0;
    *k1 = in - *start < filter ? in - *start : filter;
}

/* n sums of `count` pixels turned into their averages rounded half away from zero, clamped to
 * [lo, hi] and stored as dt: (sum + count / 2) / count above zero, (sum - count / 2) / count
 * otherwise, each truncated toward zero, as TensorFlow Lite's integer AveragePool. The
 * quotient is taken in double, which is exact here (|sum| + count / 2 < 2^31 < 2^53: a
 * quotient that is not an integer lies at least 1 / count from one, more than its rounding
 * error of at most |sum| / count * 2^-53) and vectorizes, where an integer division per
 * channel does not. */
static void q8_store_average(int32_t *acc, size_t n, int64_t count, int32_t lo, int32_t hi,
                             void *out, mp_dtype dt)
{
    const double d = (double)count;
    const int32_t half = (int32_t)(count / 2);
    for (size_t i = 0; i < n; i++) {
        int32_t a = acc[i] > 0 ? acc[i] + half : acc[i] - half;
        int32_t v = count <= 0 ? 0 : (int32_t)((double)a / d);
        acc[i] = v < lo ? lo : (v > hi ? hi : v);
    }
    if (dt == MP_DT_INT8)
        for (size_t i = 0; i < n; i++)
            ((int8_t *)out)[i] = (int8_t)acc[i];
    else if (dt == MP_DT_INT16)
        for (size_t i = 0; i < n; i++)
            ((int16_t *)out)[i] = (int16_t)acc[i];
    else
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)out)[i] = (uint8_t)acc[i];
}

/* Pixels summed in 32 bits before the sums go on in 64: |sum| <= 32768 * 65535 < 2^31. */
#define POOL_Q8_NARROW 65535

/* TensorFlow Lite's reference integer average (or maximum, `max`) over the valid pixels of
 * each window, clamped to the activation range. A window of one pixel copies it.
 * Each window's pixels are taken a block of channels at a time, pixel by pixel (reading
 * NHWC rows in order), and each sum divided with TensorFlow Lite's rounding. Averages are
 * summed in 32 bits (sum32), added to the 64-bit sums every POOL_Q8_NARROW pixels; a window of
 * at most that many is divided by q8_store_average. */
static void pool_window_q8(const pool_state *s, const mp_op_options *o, const void *in,
                           void *out, mp_dtype dt, bool max, size_t c)
{
    int64_t acc[POOL_Q8_BLOCK];
    int32_t sum32[POOL_Q8_BLOCK];
    const size_t esize = mp_dtype_size(dt);
    size_t k = 0;
    const int64_t ih = s->in_h, iw = s->in_w;
    for (int32_t b = 0; b < s->batch; b++)
        for (int32_t oy = 0; oy < s->out_h; oy++) {
            int64_t y0, ky0, ky1;
            pool_axis(oy, o->stride_h, s->pad_top, ih, o->filter_h, &y0, &ky0, &ky1);
            for (int32_t ox = 0; ox < s->out_w; ox++) {
                int64_t x0, kx0, kx1;
                pool_axis(ox, o->stride_w, s->pad_left, iw, o->filter_w, &x0, &kx0, &kx1);
                const int64_t count = (ky1 - ky0) * (kx1 - kx0);
                for (size_t ch0 = 0; ch0 < c; ch0 += POOL_Q8_BLOCK) {
                    size_t nb = c - ch0 < POOL_Q8_BLOCK ? c - ch0 : POOL_Q8_BLOCK;
                    for (size_t i = 0; i < nb; i++) {
                        acc[i] = max ? INT32_MIN : 0;
                        sum32[i] = 0;
                    }
                    int64_t in32 = 0; /* pixels in sum32 */
                    for (int64_t ky = ky0; ky < ky1; ky++)
                        for (int64_t kx = kx0; kx < kx1; kx++) {
                            size_t pix =
                                ((size_t)b * (size_t)ih + (size_t)(y0 + ky)) * (size_t)iw +
                                (size_t)(x0 + kx);
                            const void *px = (const uint8_t *)in + (pix * c + ch0) * esize;
                            if (max) {
                                q8_maximum(acc, px, dt, nb);
                                continue;
                            }
                            if (in32 == POOL_Q8_NARROW) {
                                for (size_t i = 0; i < nb; i++) {
                                    acc[i] += sum32[i];
                                    sum32[i] = 0;
                                }
                                in32 = 0;
                            }
                            q8_accumulate(sum32, px, dt, nb);
                            in32++;
                        }
                    if (!max && count <= POOL_Q8_NARROW) {
                        q8_store_average(sum32, nb, count, s->lo, s->hi,
                                         (uint8_t *)out + k * esize, dt);
                        k += nb;
                        continue;
                    }
                    for (size_t i = 0; i < nb && !max; i++)
                        acc[i] += sum32[i];
                    for (size_t i = 0; i < nb; i++, k++) {
                        int64_t sum = acc[i];
                        int64_t v = max        ? sum
                                    : count <= 0 ? 0
                                    : sum > 0    ? (sum + count / 2) / count
                                                 : (sum - count / 2) / count;
                        v = v < s->lo ? s->lo : (v > s->hi ? s->hi : v);
                        if (dt == MP_DT_INT8)
                            ((int8_t *)out)[k] = (int8_t)v;
                        else if (dt == MP_DT_INT16)
                            ((int16_t *)out)[k] = (int16_t)v;
                        else
                            ((uint8_t *)out)[k] = (uint8_t)v;
                    }
                }
            }
        }
}

typedef enum pool_kind { POOL_AVERAGE, POOL_MAX, POOL_L2 } pool_kind;

/* TensorFlow Lite's reference float pooling over the pixels of each window inside the input
 * (SAME padding's pixels left out): their average, maximum or L2 norm (sqrt of the mean of
 * squares), clamped to the fused activation's range (TANH and SIGN_BIT: applied after). */
static void pool_window_f32(const pool_state *s, const mp_op_options *o, const float *x,
                            float *y, size_t c, pool_kind kind)
{
    float lo = -INFINITY, hi = INFINITY;
    mp_activation_range(o->activation, &lo, &hi);
    const int64_t ih = s->in_h, iw = s->in_w;
    for (int32_t b = 0; b < s->batch; b++)
        for (int32_t oy = 0; oy < s->out_h; oy++) {
            int64_t y0, ky0, ky1;
            pool_axis(oy, o->stride_h, s->pad_top, ih, o->filter_h, &y0, &ky0, &ky1);
            for (int32_t ox = 0; ox < s->out_w; ox++) {
                int64_t x0, kx0, kx1;
                pool_axis(ox, o->stride_w, s->pad_left, iw, o->filter_w, &x0, &kx0, &kx1);
                const float count = (float)((ky1 - ky0) * (kx1 - kx0));
                for (size_t ch = 0; ch < c; ch++) {
                    float acc = kind == POOL_MAX ? -INFINITY : 0.0f;
                    for (int64_t ky = ky0; ky < ky1; ky++)
                        for (int64_t kx = kx0; kx < kx1; kx++) {
                            const float v = x[(((size_t)b * (size_t)ih + (size_t)(y0 + ky)) *
                                                   (size_t)iw + (size_t)(x0 + kx)) * c + ch];
                            if (kind == POOL_MAX)
                                acc = v > acc ? v : acc;
                            else
                                acc += kind == POOL_L2 ? v * v : v;
                        }
                    float r = kind == POOL_MAX ? acc
                              : kind == POOL_L2 ? sqrtf(acc / count)
                                                : acc / count;
                    *y++ = r < lo ? lo : (r > hi ? hi : r);
                }
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
    } else if (pool_is_int(n->in[0]->dtype)) {
        pool_window_q8(s, n->opt, n->in[0]->data, n->out[0]->data, n->in[0]->dtype, is_max(n),
                       (size_t)n->in[0]->dims[3]);
    } else if (s->plain) {
        pool_window_f32(s, n->opt, n->in[0]->data, n->out[0]->data, (size_t)n->in[0]->dims[3],
                        is_max(n) ? POOL_MAX : POOL_AVERAGE);
    } else {
        pool_1x1(s, n->opt, n->in[0]->data, n->out[0]->data, (size_t)n->in[0]->dims[3]);
    }
    int32_t act = n->opt->activation;
    if (n->in[0]->dtype == MP_DT_FLOAT32 && (act == MP_ACT_TANH || act == MP_ACT_SIGN_BIT))
        mp_apply_activation_f32(n->out[0]->data, s->out_elems, act);
    return MP_OK;
}

/* ---- L2_POOL_2D ------------------------------------------------------------------------- */

/* L2_POOL_2D (pooling.cc, float32 only), TensorFlow Lite's reference L2Pool: each output is
 * sqrt(sum of squares / count) over the window's pixels inside the input (the padding of
 * SAME, computed as for the other pools, is left out of both), then clamped to the fused
 * activation's range; TANH and SIGN_BIT, which TensorFlow Lite's kernel leaves unapplied,
 * are refused. */
static mp_status l2pool_infer(mp_node *n)
{
    if (n->n_in == 1 && n->in[0] && n->in[0]->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s; only float32 is supported",
                            mp_tname(n->in[0]), mp_dtype_name(n->in[0]->dtype));
    float lo, hi;
    if (!mp_activation_range(n->opt->activation, &lo, &hi))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fused activation %d is not supported (NONE, "
                            "RELU, RELU_N1_TO_1, RELU6)", n->opt->activation);
    int32_t dims[4] = {0, 0, 0, 0};
    mp_status st = pool_geometry(n, dims);
    return st != MP_OK ? st : mp_node_set_output_shape(n, 4, dims);
}

static mp_status l2pool_run(mp_node *n)
{
    const mp_op_options *o = n->opt;
    int32_t dims[4];
    mp_status st = pool_geometry(n, dims);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (out->rank != 4 || memcmp(out->dims, dims, sizeof dims) != 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have the pooled shape",
                            mp_tname(out));
    if (mp_tensor_elements(out) == 0) /* nothing to write: no batch x rows walk of empty rows */
        return MP_OK;
    uint32_t pad_top = 0, pad_left = 0, after;
    if (o->padding == MP_PAD_SAME) {
        same_pad(in->dims[1], o->filter_h, o->stride_h, &pad_top, &after);
        same_pad(in->dims[2], o->filter_w, o->stride_w, &pad_left, &after);
    }
    pool_state g = {.batch = dims[0], .in_h = in->dims[1], .in_w = in->dims[2],
                    .out_h = dims[1], .out_w = dims[2], .pad_top = (int32_t)pad_top,
                    .pad_left = (int32_t)pad_left};
    pool_window_f32(&g, o, in->data, out->data, (size_t)in->dims[3], POOL_L2);
    return MP_OK;
}

const mp_kernel mp_kernels_pool[] = {
    {.opcode = MP_OP_AVERAGE_POOL_2D, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = pool_infer, .prepare = pool_prepare, .run = pool_run, .release = pool_release},
    {.opcode = MP_OP_MAX_POOL_2D, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = pool_infer, .prepare = pool_prepare, .run = pool_run, .release = pool_release},
    {.opcode = MP_OP_L2_POOL_2D, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = l2pool_infer, .run = l2pool_run},
    {.opcode = -1},
};
