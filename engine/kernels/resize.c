/* Kernels: RESIZE_BILINEAR (NHWC float32) on XNNPACK's resize_bilinear2d_nhwc_f32.
 *
 * TFLite has three sampling modes and XNNPACK matches each of them (checked against a plain
 * reference of TFLite's formula in tests/unit/test_kernels_resize.c):
 *   legacy (neither option)  in = out * in_size / out_size      XNN_FLAG_TENSORFLOW_LEGACY_MODE
 *   align_corners            in = out * (in_size-1)/(out_size-1) XNN_FLAG_ALIGN_CORNERS
 *   half_pixel_centers       in = (out + 0.5) * scale - 0.5      no flag (XNNPACK's default)
 * The output size comes from input 1 (int32 [2] = {height, width}); when it is computed while
 * running, infer returns MP_ERR_DEFERRED. */
#include "engine/kernels/kernel.h"

#include <string.h>
#include <xnnpack.h>

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
    if (in->dtype != MP_DT_FLOAT32 || out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "only f32 is supported ('%s' is %s, '%s' %s)",
                            mp_tname(in), mp_dtype_name(in->dtype), mp_tname(out),
                            mp_dtype_name(out->dtype));
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
    if (mp_tensor_elements(out) == 0) /* nothing to compute; XNNPACK refuses empty shapes */
        return MP_OK;
    /* channel count and mode are fixed at creation; sizes and pointers only need a setup */
    if (s->op && (s->channels != channels || s->flags != flags))
        mp_xnn_delete(&s->op);
    enum xnn_status xs;
    if (!s->op) {
        xs = xnn_create_resize_bilinear2d_nhwc_f32(channels, channels, channels, flags, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "resize bilinear create");
        }
        s->channels = channels;
        s->flags = flags;
    }
    xs = xnn_setup_resize_bilinear2d_nhwc_f32(s->op, (size_t)in->dims[0], (size_t)in->dims[1],
                                              (size_t)in->dims[2], (size_t)out->dims[1],
                                              (size_t)out->dims[2], in->data, out->data, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "resize bilinear setup");
    return MP_OK;
}

static mp_status resize_run(mp_node *n)
{
    resize_state *s = n->state;
    if (mp_tensor_elements(n->out[0]) == 0)
        return MP_OK;
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

const mp_kernel mp_kernels_resize[] = {
    {.opcode = MP_OP_RESIZE_BILINEAR, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = resize_infer, .prepare = resize_prepare, .run = resize_run,
     .release = resize_release},
    {.opcode = -1},
};
