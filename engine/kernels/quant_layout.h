/* Quantization parameters as the operators that move quantized values (CONCATENATION, PAD,
 * SPACE_TO_BATCH_ND, PACK, ...) compare them: TensorFlow Lite compares a tensor's one scale
 * and zero point (0 and 0 when it has none), and requires several of these operators to keep
 * them from input to output. */
#ifndef MP_QUANT_LAYOUT_H
#define MP_QUANT_LAYOUT_H

#include "engine/kernels/kernel.h"

/* int8, uint8 or int16: the dtypes whose values mean scale * (q - zero_point). */
bool mp_dtype_is_quantized_int(mp_dtype dt);

/* The scale and zero point of t as TensorFlow Lite's per-tensor params: (0, 0) without
 * quantization; MP_ERR_UNSUPPORTED naming the operator, the tensor and its dtype when t has
 * one scale per channel (an activation must have one). */
mp_status mp_node_tensor_qparams(mp_node *n, const mp_tensor *t, float *scale, int32_t *zp);

/* For quantized integer tensors (mp_dtype_is_quantized_int): MP_ERR_UNSUPPORTED naming both
 * tensors and their parameters unless b has a's scale and zero point. Other dtypes pass. */
mp_status mp_node_check_same_qparams(mp_node *n, const mp_tensor *a, const mp_tensor *b);

#endif
