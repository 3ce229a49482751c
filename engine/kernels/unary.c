/* Kernels: elementwise float32 activations (LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1).
 *
 * LOGISTIC runs on XNNPACK's sigmoid and the RELU family on XNNPACK's clamp; both are
 * created with one channel so a shape change needs only a new setup (the tensor is one
 * contiguous run of elements). XNNPACK has no f32 tanh, so TANH is tanhf in C, exactly what
 * TensorFlow Lite's reference kernel computes. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

typedef struct unary_state {
    xnn_operator_t op;
    size_t count; /* elements bound at the last setup (0: nothing to run) */
} unary_state;

static mp_status unary_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st == MP_OK)
        st = mp_node_check_f32_io(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (!mp_tensor_set_shape(out, in->rank, in->dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot give output '%s' the shape of '%s'",
                            out->info->name, in->info->name);
    return MP_OK;
}

static mp_status unary_prepare(mp_node *n)
{
    if (n->opcode == MP_OP_TANH)
        return MP_OK; /* plain C: nothing to create or bind */
    unary_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    enum xnn_status xs;
    if (!s->op) {
        if (n->opcode == MP_OP_LOGISTIC) {
            xs = xnn_create_sigmoid_nc_f32(1, 1, 1, 0, &s->op);
        } else {
            int32_t act = n->opcode == MP_OP_RELU    ? MP_ACT_RELU
                          : n->opcode == MP_OP_RELU6 ? MP_ACT_RELU6
                                                     : MP_ACT_RELU_N1_TO_1;
            float lo, hi;
            mp_activation_range(act, &lo, &hi);
            xs = xnn_create_clamp_nc_f32(1, 1, 1, lo, hi, 0, &s->op);
        }
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "create");
        }
    }
    s->count = mp_tensor_elements(n->in[0]);
    if (s->count == 0)
        return MP_OK;
    if (n->opcode == MP_OP_LOGISTIC)
        xs = xnn_setup_sigmoid_nc_f32(s->op, s->count, n->in[0]->data, n->out[0]->data, n->pool);
    else
        xs = xnn_setup_clamp_nc_f32(s->op, s->count, n->in[0]->data, n->out[0]->data, n->pool);
    if (xs != xnn_status_success) {
        s->count = 0;
        return mp_node_xnn_fail(n, xs, "setup");
    }
    return MP_OK;
}

static mp_status unary_run(mp_node *n)
{
    if (n->opcode == MP_OP_TANH) {
        const float *x = n->in[0]->data;
        float *y = n->out[0]->data;
        size_t count = mp_tensor_elements(n->in[0]);
        for (size_t i = 0; i < count; i++)
            y[i] = tanhf(x[i]);
        return MP_OK;
    }
    unary_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->count == 0)
        return MP_OK;
    enum xnn_status xs = xnn_run_operator(s->op, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "run");
    return MP_OK;
}

static void unary_release(mp_node *n)
{
    unary_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

#define UNARY_KERNEL(code)                                                                \
    {                                                                                     \
        .opcode = (code), .optional_inputs = 0, .min_inputs = 1, .max_inputs = 1,         \
        .n_outputs = 1, .infer = unary_infer, .prepare = unary_prepare, .run = unary_run, \
        .release = unary_release                                                          \
    }

const mp_kernel mp_kernels_unary[] = {
    UNARY_KERNEL(MP_OP_LOGISTIC), UNARY_KERNEL(MP_OP_TANH),         UNARY_KERNEL(MP_OP_RELU),
    UNARY_KERNEL(MP_OP_RELU6),    UNARY_KERNEL(MP_OP_RELU_N1_TO_1), {.opcode = -1},
};
