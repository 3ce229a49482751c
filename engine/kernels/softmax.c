/* Kernel: SOFTMAX over the last axis, y = exp(beta * (x - max)) / sum, any rank >= 1
 * (leading dimensions are flattened into rows).
 *
 * XNNPACK's softmax has no beta. With beta == 1 it reads the input directly; any other beta
 * first writes beta * x into the operator's scratch (declared by infer, placed by the session
 * in the arena beside the tensors) and runs XNNPACK on that: softmax(beta * x) is the same
 * function, since subtracting the row's max of beta * x only cancels out. The XNNPACK
 * operator is created for a channel count (the last dimension) and re-created only when that
 * changes; a change of the leading dimensions or of the pointers needs only setup. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

typedef struct softmax_state {
    xnn_operator_t op;
    size_t op_channels; /* channels op was created for */
    size_t channels, rows;
} softmax_state;

/* beta != 1: XNNPACK runs on beta * x, written into the scratch. */
static bool scaled(const mp_node *n)
{
    return n->opt->beta != 1.0f;
}

static mp_status softmax_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st == MP_OK)
        st = mp_node_check_f32_io(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (in->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is a scalar (rank 0); needs rank >= 1",
                            in->info->name);
    if (!isfinite(n->opt->beta))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "beta %g is not finite", (double)n->opt->beta);
    if (!mp_tensor_set_shape(out, in->rank, in->dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot give output '%s' the shape of '%s'",
                            out->info->name, in->info->name);
    size_t elems = mp_tensor_elements(in);
    n->scratch_bytes = scaled(n) && elems > 0 ? elems * sizeof(float) + XNN_EXTRA_BYTES : 0;
    return MP_OK;
}

static mp_status softmax_prepare(mp_node *n)
{
    softmax_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    const mp_tensor *in = n->in[0];
    s->channels = (size_t)in->dims[in->rank - 1];
    s->rows = s->channels ? mp_tensor_elements(in) / s->channels : 0;
    if (s->rows == 0)
        return MP_OK;
    const float *x = in->data;
    if (scaled(n)) {
        if (!n->scratch)
            return mp_node_fail(n, MP_ERR_ARG, "prepared without its scratch");
        x = n->scratch;
    }

    if (s->op && s->op_channels != s->channels) {
        mp_xnn_delete(&s->op);
    }
    enum xnn_status xs;
    if (!s->op) {
        xs = xnn_create_softmax_nc_f32(s->channels, s->channels, s->channels, 0, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "softmax create");
        }
        s->op_channels = s->channels;
    }
    xs = xnn_setup_softmax_nc_f32(s->op, s->rows, x, n->out[0]->data, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "softmax setup");
    return MP_OK;
}

static mp_status softmax_run(mp_node *n)
{
    softmax_state *s = n->state;
    if (!s)
        return mp_node_fail(n, MP_ERR_ARG, "run before prepare");
    if (s->rows == 0)
        return MP_OK;
    if (scaled(n)) {
        const float *x = n->in[0]->data;
        float *t = n->scratch, beta = n->opt->beta;
        for (size_t i = 0, count = s->rows * s->channels; i < count; i++)
            t[i] = beta * x[i];
    }
    enum xnn_status xs = xnn_run_operator(s->op, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "softmax run");
    return MP_OK;
}

static void softmax_release(mp_node *n)
{
    softmax_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

const mp_kernel mp_kernels_softmax[] = {
    {.opcode = MP_OP_SOFTMAX,
     .optional_inputs = 0,
     .min_inputs = 1,
     .max_inputs = 1,
     .n_outputs = 1,
     .infer = softmax_infer,
     .prepare = softmax_prepare,
     .run = softmax_run,
     .release = softmax_release},
    {.opcode = -1},
};
