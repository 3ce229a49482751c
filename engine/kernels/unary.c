/* Kernels: elementwise activations (LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1) on float32,
 * int8 and uint8.
 *
 * float32: LOGISTIC runs on XNNPACK's sigmoid and the RELU family on XNNPACK's clamp; both
 * are created with one channel so a shape change needs only a new setup (the tensor is one
 * contiguous run of elements). XNNPACK has no f32 tanh, so TANH is tanhf in C, exactly what
 * TensorFlow Lite's reference kernel computes.
 *
 * int8 / uint8 (input and output each per-tensor quantized, same dtype):
 *   LOGISTIC and TANH with the output quantization TensorFlow Lite's specification asks
 *   (LOGISTIC scale 1/256, zero point -128 for int8 and 0 for uint8; TANH scale 1/128, zero
 *   point 0 for int8 and 128 for uint8) run on XNNPACK's sigmoid / tanh _qs8 / _qu8, which
 *   take no other; any other output quantization runs on a 256-entry table computed once
 *   at prepare as TensorFlow Lite's 8-bit kernels do (PopulateLookupTable: dequantize in
 *   float, the function in float, times 1 / output scale rounded half away from zero, plus
 *   the zero point, saturated).
 *   The RELU family with equal input and output quantization is a clamp to the activation's
 *   integer range (XNNPACK's clamp_nc_s8 / _u8); otherwise TensorFlow Lite's ReluQuantized:
 *   out_zp + MultiplyByQuantizedMultiplier(x - in_zp) by in_scale / out_scale, clamped,
 *   evaluated once per possible input into the same kind of table.
 *   A table lives in the node's state (MP_MEM_KERNEL); running it is one lookup per element.
 * int16 (16x8) LOGISTIC, TANH, RELU and RELU6: int16_activation.c (TensorFlow Lite's int16
 * reference). */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <xnnpack.h>

#include "engine/kernels/int16.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

typedef struct unary_state {
    xnn_operator_t op;
    size_t count; /* elements bound at the last setup (0: nothing to run) */
} unary_state;

/* The state of an 8-bit node: the float state's fields, then what decides its path. */
typedef struct unary_q8_state {
    unary_state base;
    bool decided;        /* op created or table filled (the quantization is fixed) */
    bool use_table;
    uint8_t table[256];  /* output byte for each input byte (int8 as its two's complement) */
} unary_q8_state;

/* The output scale and zero point XNNPACK's (and TensorFlow Lite's) 8-bit LOGISTIC / TANH
 * want. */
static void unary_q8_spec(int32_t opcode, mp_dtype dt, float *scale, int32_t *zero_point)
{
    bool s8 = dt == MP_DT_INT8;
    if (opcode == MP_OP_LOGISTIC) {
        *scale = 1.0f / 256;
        *zero_point = s8 ? -128 : 0;
    } else {
        *scale = 1.0f / 128;
        *zero_point = s8 ? 0 : 128;
    }
}

/* The activation of a RELU-family operator. */
static int32_t unary_relu_act(int32_t opcode)
{
    return opcode == MP_OP_RELU    ? MP_ACT_RELU
           : opcode == MP_OP_RELU6 ? MP_ACT_RELU6
                                   : MP_ACT_RELU_N1_TO_1;
}

static mp_status unary_q8_check(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is %s",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_tname(in),
                            mp_dtype_name(in->dtype));
    float scale;
    int32_t zp;
    mp_status st = mp_node_qparams(n, in, &scale, &zp);
    if (st == MP_OK)
        st = mp_node_qparams(n, out, &scale, &zp);
    return st;
}

static mp_status unary_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st == MP_OK && n->in[0]->dtype == MP_DT_INT16) /* 16x8: int16_activation.c */
        st = mp_i16_unary_check(n);
    else if (st == MP_OK)
        st = mp_dtype_is_q8(n->in[0]->dtype) ? unary_q8_check(n) : mp_node_check_f32_io(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (!mp_tensor_set_shape(out, in->rank, in->dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot give output '%s' the shape of '%s'",
                            out->info->name, in->info->name);
    return MP_OK;
}

/* TensorFlow Lite's PopulateLookupTable for LOGISTIC and TANH; ReluX's integer formula for
 * the RELU family. */
static void unary_fill_table(const mp_node *n, uint8_t *table, float si, int32_t zi, float so,
                             int32_t zo)
{
    const mp_dtype dt = n->in[0]->dtype;
    int32_t qmin, qmax, lo, hi, mult = 0;
    int shift = 0;
    mp_quant_dtype_range(dt, &qmin, &qmax);
    const bool relu = n->opcode != MP_OP_LOGISTIC && n->opcode != MP_OP_TANH;
    if (relu) {
        mp_activation_range_q(unary_relu_act(n->opcode), so, zo, dt, &lo, &hi);
        mp_quantize_multiplier((double)(si / so), &mult, &shift); /* float ratio, as TFLite */
    }
    const float inverse_scale = 1.0f / so;
    for (int32_t v = qmin; v <= qmax; v++) {
        int64_t q;
        if (relu) {
            q = (int64_t)zo + mp_multiply_by_quantized_multiplier(v - zi, mult, shift);
            q = q < lo ? lo : (q > hi ? hi : q);
        } else {
            const float x = si * (float)(v - zi);
            const float f = n->opcode == MP_OP_LOGISTIC ? 1.0f / (1.0f + expf(-x)) : tanhf(x);
            const float r = roundf(f * inverse_scale) + (float)zo;
            q = r < (float)qmin ? qmin : (r > (float)qmax ? qmax : (int64_t)r);
        }
        table[(uint8_t)v] = (uint8_t)q;
    }
}

/* Create the XNNPACK operator of an 8-bit node, or leave it NULL and fill the table when
 * XNNPACK does not fit the quantization. */
static mp_status unary_q8_decide(mp_node *n, unary_q8_state *q)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    const bool s8 = in->dtype == MP_DT_INT8;
    float si, so, spec_scale;
    int32_t zi, zo, spec_zp;
    mp_status st = mp_node_qparams(n, in, &si, &zi);
    if (st == MP_OK)
        st = mp_node_qparams(n, out, &so, &zo);
    if (st != MP_OK)
        return st;
    enum xnn_status xs = xnn_status_unsupported_parameter;
    xnn_operator_t *op = &q->base.op;
    if (n->opcode == MP_OP_LOGISTIC || n->opcode == MP_OP_TANH) {
        unary_q8_spec(n->opcode, in->dtype, &spec_scale, &spec_zp);
        bool fits = so == spec_scale && zo == spec_zp;
        if (fits && n->opcode == MP_OP_LOGISTIC)
            xs = s8 ? xnn_create_sigmoid_nc_qs8(1, 1, 1, (int8_t)zi, si, (int8_t)zo, so, INT8_MIN,
                                                INT8_MAX, 0, op)
                    : xnn_create_sigmoid_nc_qu8(1, 1, 1, (uint8_t)zi, si, (uint8_t)zo, so, 0,
                                                UINT8_MAX, 0, op);
        else if (fits)
            xs = s8 ? xnn_create_tanh_nc_qs8(1, 1, 1, (int8_t)zi, si, (int8_t)zo, so, INT8_MIN,
                                             INT8_MAX, 0, op)
                    : xnn_create_tanh_nc_qu8(1, 1, 1, (uint8_t)zi, si, (uint8_t)zo, so, 0,
                                             UINT8_MAX, 0, op);
    } else if (si == so && zi == zo) {
        int32_t lo, hi;
        mp_activation_range_q(unary_relu_act(n->opcode), so, zo, in->dtype, &lo, &hi);
        xs = s8 ? xnn_create_clamp_nc_s8(1, 1, 1, (int8_t)lo, (int8_t)hi, 0, op)
                : xnn_create_clamp_nc_u8(1, 1, 1, (uint8_t)lo, (uint8_t)hi, 0, op);
    }
    xs = mp_xnn_created(xs, *op);
    if (xs == xnn_status_unsupported_parameter) {
        *op = NULL;
        q->use_table = true;
        unary_fill_table(n, q->table, si, zi, so, zo);
    } else if (xs != xnn_status_success) {
        *op = NULL;
        return mp_node_xnn_fail(n, xs, "create");
    }
    q->decided = true;
    return MP_OK;
}

static enum xnn_status unary_q8_setup(const mp_node *n, xnn_operator_t op, size_t count)
{
    const void *x = n->in[0]->data;
    void *y = n->out[0]->data;
    const bool s8 = n->in[0]->dtype == MP_DT_INT8;
    switch (n->opcode) {
    case MP_OP_LOGISTIC:
        return s8 ? xnn_setup_sigmoid_nc_qs8(op, count, x, y, n->pool)
                  : xnn_setup_sigmoid_nc_qu8(op, count, x, y, n->pool);
    case MP_OP_TANH:
        return s8 ? xnn_setup_tanh_nc_qs8(op, count, x, y, n->pool)
                  : xnn_setup_tanh_nc_qu8(op, count, x, y, n->pool);
    default:
        return s8 ? xnn_setup_clamp_nc_s8(op, count, x, y, n->pool)
                  : xnn_setup_clamp_nc_u8(op, count, x, y, n->pool);
    }
}

static mp_status unary_q8_prepare(mp_node *n)
{
    unary_q8_state *q = mp_node_state(n, sizeof *q);
    if (!q)
        return MP_ERR_NOMEM;
    if (!q->decided) {
        mp_status st = unary_q8_decide(n, q);
        if (st != MP_OK)
            return st;
    }
    q->base.count = mp_tensor_elements(n->in[0]);
    if (q->use_table || q->base.count == 0)
        return MP_OK;
    enum xnn_status xs = unary_q8_setup(n, q->base.op, q->base.count);
    if (xs != xnn_status_success) {
        q->base.count = 0;
        return mp_node_xnn_fail(n, xs, "setup");
    }
    return MP_OK;
}

static mp_status unary_prepare(mp_node *n)
{
    if (n->in[0]->dtype == MP_DT_INT16)
        return MP_OK; /* no state: all at the run */
    if (mp_dtype_is_q8(n->in[0]->dtype))
        return unary_q8_prepare(n);
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
    if (n->in[0]->dtype == MP_DT_INT16)
        return mp_i16_unary_run(n);
    if (n->opcode == MP_OP_TANH && n->in[0]->dtype == MP_DT_FLOAT32) {
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
    if (mp_dtype_is_q8(n->in[0]->dtype)) {
        const unary_q8_state *q = n->state; /* an 8-bit node's state: base first */
        if (q->use_table) {
            const uint8_t *x = n->in[0]->data;
            uint8_t *y = n->out[0]->data;
            for (size_t i = 0; i < s->count; i++)
                y[i] = q->table[x[i]];
            return MP_OK;
        }
    }
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
