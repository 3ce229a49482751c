/* Quantization parameter checks of the operators that move quantized values without
 * computing on them (see quant_layout.h). */
#include "engine/kernels/quant_layout.h"

bool mp_dtype_is_quantized_int(mp_dtype dt)
{
    return dt == MP_DT_INT8 || dt == MP_DT_UINT8 || dt == MP_DT_INT16;
}

mp_status mp_node_tensor_qparams(mp_node *n, const mp_tensor *t, float *scale, int32_t *zp)
{
    const mp_quant *q = &t->info->quant;
    *scale = 0.0f;
    *zp = 0;
    if (q->count > 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "%s tensor '%s' has one scale per channel; one scale and zero point "
                            "are expected", mp_dtype_name(t->dtype), mp_tname(t));
    if (q->count == 1 && q->scale) {
        *scale = q->scale[0];
        *zp = q->zero_point ? (int32_t)q->zero_point[0] : 0;
    }
    return MP_OK;
}

mp_status mp_node_check_same_qparams(mp_node *n, const mp_tensor *a, const mp_tensor *b)
{
    if (!mp_dtype_is_quantized_int(a->dtype))
        return MP_OK;
    float sa, sb;
    int32_t za, zb;
    mp_status st = mp_node_tensor_qparams(n, a, &sa, &za);
    if (st == MP_OK)
        st = mp_node_tensor_qparams(n, b, &sb, &zb);
    if (st != MP_OK)
        return st;
    if (sa != sb || za != zb)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "%s '%s' has scale %g and zero point %d but '%s' has scale %g and "
                            "zero point %d: this operator does not requantize (TensorFlow Lite "
                            "requires them equal)", mp_dtype_name(a->dtype), mp_tname(a),
                            (double)sa, (int)za, mp_tname(b), (double)sb, (int)zb);
    return MP_OK;
}
