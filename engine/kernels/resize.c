/* Kernels: RESIZE_BILINEAR (NHWC float32, int8, uint8) on XNNPACK's resize_bilinear2d_nhwc_f32
 * / _s8 / _u8, int16 in plain C (below), and RESIZE_NEAREST_NEIGHBOR in plain C.
 *
 * TFLite has three sampling modes and XNNPACK matches each of them (checked against a plain
 * reference of TFLite's formula in tests/unit/test_kernels_resize.c):
 *   legacy (neither option)  in = out * in_size / out_size      XNN_FLAG_TENSORFLOW_LEGACY_MODE
 *   align_corners            in = out * (in_size-1)/(out_size-1) XNN_FLAG_ALIGN_CORNERS
 *   half_pixel_centers       in = (out + 0.5) * scale - 0.5      no flag (XNNPACK's default)
 * The output size comes from input 1 (int32 [2] = {height, width}); when it is computed while
 * running, infer returns MP_ERR_DEFERRED.
 * int8 and uint8 interpolate the integers themselves (the same three modes), so input and
 * output must share one scale and zero point, as TensorFlow Lite requires; the result may
 * differ from TensorFlow Lite's own 8-bit rounding by 1.
 * int16 (the 16x8 scheme; same quantization rule) runs TensorFlow Lite's reference
 * ResizeBilinearInteger, bit for bit: the scales in Q10 rounded, (1024 * in + out / 2) / out
 * (align_corners: (1024 * (in - 1) + (out - 1) / 2) / (out - 1)), the source position
 * out * scale (half_pixel_centers: + scale / 2 - 512), its floor and ceiling in pixels clamped
 * into the input (C division, toward zero), the four neighbours weighted in Q20 in 64 bits and
 * rounded half away from zero by a division by 2^20.
 *
 * RESIZE_NEAREST_NEIGHBOR (float32, int8, uint8, int16; quantized output with the input's
 * scale and zero point) is a plain-C index gather with TensorFlow Lite's reference formula
 * (resize_nearest_neighbor.cc), per axis of in_size and out_size:
 *   scale = align_corners && out_size > 1 ? (in_size-1)/(out_size-1) : in_size/out_size
 *   in = min(align_corners ? round((out + offset) * scale) : floor((out + offset) * scale),
 *            in_size - 1), offset 0.5 with half_pixel_centers (then also max(in, 0)), else 0;
 * float arithmetic and round-half-away-from-zero as TensorFlow Lite computes it. Both
 * options may be set together (TensorFlow Lite takes that too). */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/quant_layout.h"
#include "engine/kernels/quant_tensor.h"

typedef struct resize_state {
    xnn_operator_t op;
    size_t channels;   /* what the operator was created with */
    uint32_t flags;
} resize_state;

static uint32_t resize_flags(const mp_op_options *o)
{
    if (o->align_corners)
        return XNN_FLAG_ALIGN_CORNERS;
    return o->half_pixel_centers ? 0 : XNN_FLAG_TENSORFLOW_LEGACY_MODE;
}

static mp_status resize_infer(mp_node *n)
{
    if (n->n_in != 2 || !n->in[0] || !n->in[1])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 inputs, has %d", n->n_in);
    if (n->n_out != 1 || !n->out[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 output, has %d", n->n_out);
    const mp_tensor *in = n->in[0], *size = n->in[1];
    mp_tensor *out = n->out[0];
    char b[96];
    const bool q = mp_dtype_is_q8(in->dtype) || in->dtype == MP_DT_INT16;
    if ((in->dtype != MP_DT_FLOAT32 && !q) || out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "only f32, i8, u8 and i16 are supported, output as input ('%s' is "
                            "%s, '%s' %s)",
                            mp_tname(in), mp_dtype_name(in->dtype), mp_tname(out),
                            mp_dtype_name(out->dtype));
    if (q) {
        float si, so;
        int32_t zi, zo;
        if (in->info->quant.count == 0)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "input '%s' is %s without quantization parameters", mp_tname(in),
                                mp_dtype_name(in->dtype));
        mp_status st = mp_node_qparams(n, in, &si, &zi);
        if (st == MP_OK)
            st = mp_node_qparams(n, out, &so, &zo);
        if (st != MP_OK)
            return st;
        if (fabsf(si - so) > 1e-6f * si || zi != zo)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "input '%s' (scale %g, zero point %d) and output '%s' (scale %g, "
                                "zero point %d) must share their quantization",
                                mp_tname(in), (double)si, zi, mp_tname(out), (double)so, zo);
    }
    if (in->rank != 4)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s must be NHWC (rank 4)", mp_tname(in),
                            mp_shape_str(in->rank, in->dims, b, sizeof b));
    if (size->dtype != MP_DT_INT32 || mp_tensor_elements(size) != 2 || size->rank != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "size '%s' must be int32 [2], is %s %s", mp_tname(size),
                            mp_dtype_name(size->dtype),
                            mp_shape_str(size->rank, size->dims, b, sizeof b));
    if (n->opt->align_corners && n->opt->half_pixel_centers)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "align_corners and half_pixel_centers cannot both be set");
    if (!size->value_known || !size->data)
        return MP_ERR_DEFERRED;
    int32_t hw[2];
    memcpy(hw, size->data, sizeof hw);
    if (hw[0] <= 0 || hw[1] <= 0 || (in->dims[1] == 0 || in->dims[2] == 0))
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot resize '%s' %s to %dx%d", mp_tname(in),
                            mp_shape_str(in->rank, in->dims, b, sizeof b), hw[0], hw[1]);
    int32_t dims[4] = {in->dims[0], hw[0], hw[1], in->dims[3]};
    if (!mp_tensor_set_shape(out, 4, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return MP_OK;
}

static mp_status resize_prepare(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    resize_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    if (out->rank != 4 || out->dims[0] != in->dims[0] || out->dims[3] != in->dims[3])
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match input '%s'", mp_tname(out),
                            mp_tname(in));
    size_t channels = (size_t)in->dims[3];
    uint32_t flags = resize_flags(n->opt);
    /* nothing to compute (XNNPACK refuses empty shapes), or int16: plain C at the run */
    if (mp_tensor_elements(out) == 0 || in->dtype == MP_DT_INT16)
        return MP_OK;
    /* channel count and mode are fixed at creation; sizes and pointers only need a setup */
    if (s->op && (s->channels != channels || s->flags != flags))
        mp_xnn_delete(&s->op);
    enum xnn_status xs;
    if (!s->op) {
        switch (in->dtype) {
        case MP_DT_INT8:
            xs = xnn_create_resize_bilinear2d_nhwc_s8(channels, channels, channels, flags, &s->op);
            break;
        case MP_DT_UINT8:
            xs = xnn_create_resize_bilinear2d_nhwc_u8(channels, channels, channels, flags, &s->op);
            break;
        default:
            xs = xnn_create_resize_bilinear2d_nhwc_f32(channels, channels, channels, flags,
                                                       &s->op);
            break;
        }
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "resize bilinear create");
        }
        s->channels = channels;
        s->flags = flags;
    }
    const size_t b = (size_t)in->dims[0], ih = (size_t)in->dims[1], iw = (size_t)in->dims[2];
    const size_t oh = (size_t)out->dims[1], ow = (size_t)out->dims[2];
    switch (in->dtype) {
    case MP_DT_INT8:
        xs = xnn_setup_resize_bilinear2d_nhwc_s8(s->op, b, ih, iw, oh, ow, in->data, out->data,
                                                 n->pool);
        break;
    case MP_DT_UINT8:
        xs = xnn_setup_resize_bilinear2d_nhwc_u8(s->op, b, ih, iw, oh, ow, in->data, out->data,
                                                 n->pool);
        break;
    default:
        xs = xnn_setup_resize_bilinear2d_nhwc_f32(s->op, b, ih, iw, oh, ow, in->data, out->data,
                                                  n->pool);
        break;
    }
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "resize bilinear setup");
    return MP_OK;
}

/* TensorFlow Lite's ComputeInterpolationValues in Q10: the source position *pos of output
 * index v at scale_10, its lower and upper pixel *lo, *hi within [0, size - 1]. TensorFlow
 * Lite does not bound the lower one above: with the scale rounded up (an output many times
 * the input's size) it may read past the input, where memprof takes the last pixel. */
static void resize_q10_pos(int32_t v, int32_t scale_10, bool half_pixel, int32_t size,
                           int32_t *pos, int32_t *lo, int32_t *hi)
{
    *pos = half_pixel ? v * scale_10 + scale_10 / 2 - (1 << 9) : v * scale_10;
    const int32_t down = *pos / (1 << 10), up = (*pos + (1 << 10) - 1) / (1 << 10);
    *lo = down < 0 ? 0 : (down > size - 1 ? size - 1 : down);
    *hi = up < size - 1 ? up : size - 1;
}

/* TensorFlow Lite's Q10 scale of one axis: in / out (align_corners: (in - 1) / (out - 1)),
 * rounded to nearest. */
static int32_t resize_q10_scale(int32_t in, int32_t out, bool align)
{
    if (align && out > 1)
        return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
    return ((1 << 10) * in + out / 2) / out;
}

/* int16 RESIZE_BILINEAR: TensorFlow Lite's reference ResizeBilinearInteger<int16_t>. */
static void resize_bilinear_i16(const mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    const int16_t *x = in->data;
    int16_t *y = out->data;
    const int32_t nb = in->dims[0], ih = in->dims[1], iw = in->dims[2], ch = in->dims[3];
    const int32_t oh = out->dims[1], ow = out->dims[2];
    const bool align = n->opt->align_corners, half = n->opt->half_pixel_centers;
    const int32_t hs = resize_q10_scale(ih, oh, align), ws = resize_q10_scale(iw, ow, align);
    const int64_t one = 1 << 10;
    for (int32_t b = 0; b < nb; b++)
        for (int32_t oy = 0; oy < oh; oy++) {
            int32_t py, y0, y1;
            resize_q10_pos(oy, hs, half, ih, &py, &y0, &y1);
            const int64_t dy = py - one * y0;
            for (int32_t ox = 0; ox < ow; ox++) {
                int32_t px, x0, x1;
                resize_q10_pos(ox, ws, half, iw, &px, &x0, &x1);
                const int64_t dx = px - one * x0;
                const size_t row = (size_t)iw * (size_t)ch;
                const int16_t *r0 = x + ((size_t)b * (size_t)ih + (size_t)y0) * row;
                const int16_t *r1 = x + ((size_t)b * (size_t)ih + (size_t)y1) * row;
                const size_t c0 = (size_t)x0 * (size_t)ch, c1 = (size_t)x1 * (size_t)ch;
                const int16_t *p00 = r0 + c0, *p01 = r0 + c1, *p10 = r1 + c0, *p11 = r1 + c1;
                int16_t *o = y + (((size_t)b * (size_t)oh + (size_t)oy) * (size_t)ow + (size_t)ox) *
                                     (size_t)ch;
                for (int32_t c = 0; c < ch; c++) {
                    const int64_t v = p00[c] * (one - dy) * (one - dx) + p10[c] * dy * (one - dx) +
                                      p01[c] * (one - dy) * dx + p11[c] * dy * dx;
                    const int64_t round = v > 0 ? (1 << 19) : -(1 << 19);
                    o[c] = (int16_t)((v + round) / (1 << 20));
                }
            }
        }
}

static mp_status resize_run(mp_node *n)
{
    resize_state *s = n->state;
    if (mp_tensor_elements(n->out[0]) == 0)
        return MP_OK;
    if (n->in[0]->dtype == MP_DT_INT16) {
        resize_bilinear_i16(n);
        return MP_OK;
    }
    if (!s || !s->op)
        return mp_node_fail(n, MP_ERR_BACKEND, "run before prepare");
    enum xnn_status xs = xnn_run_operator(s->op, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "resize bilinear run");
    return MP_OK;
}

static void resize_release(mp_node *n)
{
    resize_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

/* ---- RESIZE_NEAREST_NEIGHBOR --------------------------------------------------------- */

/* Checks; the output size into hw. MP_ERR_DEFERRED while the size is not known. */
static mp_status nearest_size(mp_node *n, int32_t *hw)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *size = n->in[1];
    mp_tensor *out = n->out[0];
    char b[96];
    if ((in->dtype != MP_DT_FLOAT32 && in->dtype != MP_DT_INT8 && in->dtype != MP_DT_UINT8 &&
         in->dtype != MP_DT_INT16) ||
        out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "only f32, i8, u8 and i16 are supported, output as input ('%s' is "
                            "%s, '%s' %s)",
                            mp_tname(in), mp_dtype_name(in->dtype), mp_tname(out),
                            mp_dtype_name(out->dtype));
    if ((st = mp_node_check_same_qparams(n, in, out)) != MP_OK)
        return st;
    if (in->rank != 4)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s must be NHWC (rank 4)", mp_tname(in),
                            mp_shape_str(in->rank, in->dims, b, sizeof b));
    if (size->dtype != MP_DT_INT32 || size->rank != 1 || size->dims[0] != 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "size '%s' must be int32 [2], is %s %s",
                            mp_tname(size), mp_dtype_name(size->dtype),
                            mp_shape_str(size->rank, size->dims, b, sizeof b));
    if (!size->value_known || !size->data)
        return MP_ERR_DEFERRED;
    memcpy(hw, size->data, 2 * sizeof(int32_t));
    if (hw[0] <= 0 || hw[1] <= 0 || in->dims[1] == 0 || in->dims[2] == 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot resize '%s' %s to %dx%d", mp_tname(in),
                            mp_shape_str(in->rank, in->dims, b, sizeof b), hw[0], hw[1]);
    return MP_OK;
}

static mp_status nearest_infer(mp_node *n)
{
    int32_t hw[2];
    mp_status st = nearest_size(n, hw);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    int32_t dims[4] = {in->dims[0], hw[0], hw[1], in->dims[3]};
    return mp_node_set_output_shape(n, 4, dims);
}

/* TensorFlow Lite's GetNearestNeighbor. */
static int32_t nearest_index(int32_t o, int32_t in_size, int32_t out_size, bool align,
                             bool half)
{
    float scale = (align && out_size > 1) ? (float)(in_size - 1) / (float)(out_size - 1)
                                          : (float)in_size / (float)out_size;
    float offset = half ? 0.5f : 0.0f;
    float v = ((float)o + offset) * scale;
    int32_t i = align ? (int32_t)roundf(v) : (int32_t)floorf(v);
    if (i > in_size - 1)
        i = in_size - 1;
    if (half && i < 0)
        i = 0;
    return i;
}

static mp_status nearest_run(mp_node *n)
{
    int32_t hw[2];
    mp_status st = nearest_size(n, hw);
    if (st == MP_ERR_DEFERRED)
        return mp_node_fail(n, MP_ERR_SHAPE, "size '%s' has no value", mp_tname(n->in[1]));
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (out->rank != 4 || out->dims[0] != in->dims[0] || out->dims[1] != hw[0] ||
        out->dims[2] != hw[1] || out->dims[3] != in->dims[3])
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match input '%s' and the size",
                            mp_tname(out), mp_tname(in));
    bool align = n->opt->align_corners, half = n->opt->half_pixel_centers;
    const size_t es = mp_dtype_size(in->dtype), run = (size_t)in->dims[3] * es;
    const int32_t ih = in->dims[1], iw = in->dims[2], oh = hw[0], ow = hw[1];
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    if (run == 0)
        return MP_OK;
    for (int32_t b = 0; b < in->dims[0]; b++)
        for (int32_t y = 0; y < oh; y++) {
            int32_t sy = nearest_index(y, ih, oh, align, half);
            const uint8_t *srow = src + ((size_t)b * (size_t)ih + (size_t)sy) * (size_t)iw * run;
            for (int32_t x = 0; x < ow; x++, dst += run)
                memcpy(dst, srow + (size_t)nearest_index(x, iw, ow, align, half) * run, run);
        }
    return MP_OK;
}

const mp_kernel mp_kernels_resize[] = {
    {.opcode = MP_OP_RESIZE_NEAREST_NEIGHBOR, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = nearest_infer, .run = nearest_run},
    {.opcode = MP_OP_RESIZE_BILINEAR, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = resize_infer, .prepare = resize_prepare, .run = resize_run,
     .release = resize_release},
    {.opcode = -1},
};
