/* Per-tensor quantization parameters and quantized fused-activation ranges for the
 * quantized kernels (see quant_tensor.h). */
#include "engine/kernels/quant_tensor.h"

#include <math.h>

#include "engine/kernels/quant_math.h"

bool mp_dtype_is_q8(mp_dtype dt)
{
    return dt == MP_DT_INT8 || dt == MP_DT_UINT8;
}

mp_status mp_node_qparams(mp_node *n, const mp_tensor *t, float *scale, int32_t *zero_point)
{
    const mp_quant *q = &t->info->quant;
    if (q->count != 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "%s tensor '%s' has %s; one scale and zero point are expected",
                            mp_dtype_name(t->dtype), mp_tname(t),
                            q->count == 0 ? "no quantization parameters"
                                          : "one scale per channel");
    *scale = q->scale[0];
    *zero_point = q->zero_point ? (int32_t)q->zero_point[0] : 0;
    return MP_OK;
}

/* zero_point + round(x / scale) in 64 bits (a huge quotient saturates), as TensorFlow Lite's
 * quantize of an activation bound. */
static int64_t quantize_bound(float x, float scale, int32_t zero_point)
{
    float r = roundf(x / scale);
    if (!(r > -1e15f))
        return INT32_MIN;
    if (!(r < 1e15f))
        return INT32_MAX;
    return (int64_t)zero_point + (int64_t)r;
}

bool mp_activation_range_q(int32_t act, float scale, int32_t zero_point, mp_dtype dt,
                           int32_t *lo, int32_t *hi)
{
    int32_t qmin, qmax;
    if (!mp_quant_dtype_range(dt, &qmin, &qmax))
        return false;
    int64_t l = qmin, h = qmax;
    switch (act) {
    case MP_ACT_NONE: break;
    case MP_ACT_RELU: l = quantize_bound(0.0f, scale, zero_point); break;
    case MP_ACT_RELU6:
        l = quantize_bound(0.0f, scale, zero_point);
        h = quantize_bound(6.0f, scale, zero_point);
        break;
    case MP_ACT_RELU_N1_TO_1:
        l = quantize_bound(-1.0f, scale, zero_point);
        h = quantize_bound(1.0f, scale, zero_point);
        break;
    default: return false;
    }
    *lo = (int32_t)(l > qmin ? (l < qmax ? l : qmax) : qmin);
    *hi = (int32_t)(h < qmax ? (h > qmin ? h : qmin) : qmax);
    return true;
}
