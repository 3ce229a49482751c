/* Kernel: NumericVerify, the custom operator TensorFlow Lite's quantization debugger inserts
 * after a quantized tensor to compare it with the float model's value (numeric_verify.cc).
 *
 * Inputs: the quantized tensor (uint8, int8 or int16 with one scale and zero point; or
 * float16) and its float32 reference of as many elements. Output float32 of the first input's
 * shape: dequantized - reference in float32, the dequantization TensorFlow Lite's reference
 * Dequantize, (float)((double)scale * (q - zero_point)) (quant_math.h), float16 converted
 * exactly. Options (tflite_custom.c): tolerance, log_if_failed. With log_if_failed and a
 * tolerance of at least 0.1 (the float compared with the double 0.1, as there), a difference
 * whose magnitude exceeds tolerance * scale (float32; a float16 input's scale is its
 * quantization's, 0 when it has none) fails the run naming the element (TensorFlow Lite's
 * "Mismatch" error); otherwise TensorFlow Lite logs statistics of the differences, which
 * memprof does not print. TensorFlow Lite computes a constant input's output at its first run
 * only; memprof at every run (the same output unless the reference changes). */
#include <math.h>

#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

/* The input's scale and zero point: its quantization (checked per tensor), or for float16 the
 * one it may carry (0, 0 without). */
static mp_status nv_params(mp_node *n, float *scale, int32_t *zero_point)
{
    const mp_tensor *in = n->in[0];
    if (in->dtype != MP_DT_FLOAT16)
        return mp_node_qparams(n, in, scale, zero_point);
    const mp_quant *q = &in->info->quant;
    *scale = q->count == 1 ? q->scale[0] : 0.0f;
    *zero_point = q->count == 1 && q->zero_point ? (int32_t)q->zero_point[0] : 0;
    return MP_OK;
}

static mp_status nv_check(mp_node *n)
{
    const mp_tensor *in = n->in[0], *ref = n->in[1];
    const size_t count = mp_tensor_elements(in);
    char b1[96], b2[96];
    if (mp_tensor_elements(ref) != count)
        return mp_node_fail(n, MP_ERR_SHAPE, "reference '%s' %s has %zu elements; input '%s' "
                            "%s has %zu", mp_tname(ref),
                            mp_shape_str(ref->rank, ref->dims, b1, sizeof b1),
                            mp_tensor_elements(ref), mp_tname(in),
                            mp_shape_str(in->rank, in->dims, b2, sizeof b2), count);
    return MP_OK;
}

static mp_status nv_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *ref = n->in[1], *out = n->out[0];
    if (in->dtype != MP_DT_UINT8 && in->dtype != MP_DT_INT8 && in->dtype != MP_DT_INT16 &&
        in->dtype != MP_DT_FLOAT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: u8, i8, "
                            "i16, f16)", mp_tname(in), mp_dtype_name(in->dtype));
    if (ref->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "reference '%s' has dtype %s (supported: "
                            "f32)", mp_tname(ref), mp_dtype_name(ref->dtype));
    if (out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; expected f32",
                            mp_tname(out), mp_dtype_name(out->dtype));
    float scale;
    int32_t zp;
    if ((st = nv_params(n, &scale, &zp)) != MP_OK || (st = nv_check(n)) != MP_OK)
        return st;
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

static mp_status nv_run(mp_node *n)
{
    float scale;
    int32_t zp;
    mp_status st = nv_params(n, &scale, &zp);
    if (st != MP_OK || (st = nv_check(n)) != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    const size_t count = mp_tensor_elements(in);
    if (mp_tensor_elements(n->out[0]) != count)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have the input's shape",
                            mp_tname(n->out[0]));
    const float *ref = n->in[1]->data;
    float *y = n->out[0]->data;
    const float tolerance = n->opt->nv_tolerance;
    const bool verify = n->opt->nv_log_if_failed && tolerance >= 0.1;
    const float max_diff = tolerance * scale;
    for (size_t i = 0; i < count; i++) {
        int32_t q = 0;
        float dq;
        switch (in->dtype) {
        case MP_DT_UINT8: q = ((const uint8_t *)in->data)[i]; break;
        case MP_DT_INT8: q = ((const int8_t *)in->data)[i]; break;
        case MP_DT_INT16: q = ((const int16_t *)in->data)[i]; break;
        default: break;
        }
        dq = in->dtype == MP_DT_FLOAT16 ? mp_half_to_float(((const uint16_t *)in->data)[i])
                                        : mp_dequantize_f32(q, scale, zp);
        y[i] = dq - ref[i];
        if (verify && fabsf(y[i]) > max_diff)
            return mp_node_fail(n, MP_ERR_ARG, "mismatch at element %zu: reference %g is "
                                "quantized to %d with scale %g and zero point %d: |%g - %g| = "
                                "%g > %g (tolerance %g of the scale)", i, (double)ref[i], q,
                                (double)scale, zp, (double)ref[i], (double)dq,
                                (double)fabsf(y[i]), (double)max_diff, (double)tolerance);
    }
    return MP_OK;
}

const mp_kernel mp_kernels_numeric_verify[] = {
    {.opcode = MP_OP_NUMERIC_VERIFY, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = nv_infer, .run = nv_run},
    {.opcode = -1},
};
