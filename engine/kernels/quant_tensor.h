/* Quantization parameters of runtime tensors as the quantized kernels read them: the
 * per-tensor scale and zero point of an int8 / uint8 tensor, and the integer range of a
 * fused activation (TensorFlow Lite's CalculateActivationRangeQuantized). The arithmetic on
 * the values themselves is in quant_math.h. */
#ifndef MP_QUANT_TENSOR_H
#define MP_QUANT_TENSOR_H

#include "engine/kernels/kernel.h"

/* int8 or uint8: the 8-bit quantized activation dtypes. */
bool mp_dtype_is_q8(mp_dtype dt);

/* The per-tensor scale and zero point of t. MP_ERR_UNSUPPORTED naming the operator and the
 * tensor when t carries no quantization or one scale per channel (an activation must have
 * one). */
mp_status mp_node_qparams(mp_node *n, const mp_tensor *t, float *scale, int32_t *zero_point);

/* The output range [lo, hi] in the integers of dtype dt (int8, uint8, int16) of a fused
 * activation on an output with scale and zero_point: NONE the dtype's range, RELU from
 * zero_point + round(0 / scale), RELU6 up to zero_point + round(6 / scale), RELU_N1_TO_1
 * between the quantized -1 and 1, each clamped to the dtype's range (rounding half away
 * from zero, as TfLiteRound). False for activations with no integer range (TANH,
 * SIGN_BIT) or a dtype without one. */
bool mp_activation_range_q(int32_t act, float scale, int32_t zero_point, mp_dtype dt,
                           int32_t *lo, int32_t *hi);

#endif
