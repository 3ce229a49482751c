/* Quantization parameters of runtime tensors as the quantized kernels read them: the
 * per-tensor scale and zero point of an int8 / uint8 tensor, the integer range of a fused
 * activation (TensorFlow Lite's CalculateActivationRangeQuantized), and the whole
 * quantization of a node with weights (convolutions, fully connected) as XNNPACK's operators
 * are created with it. The arithmetic on the values themselves is in quant_math.h. */
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

/* ---- nodes with weights: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED ---- */

/* How the weights of a quantized node are quantized: which XNNPACK operator runs it. */
typedef enum mp_wq_kind {
    MP_WQ_QS8, /* int8 activations, int8 weights with one scale (symmetric) */
    MP_WQ_QC8, /* int8 activations, int8 weights with one scale per output channel (symmetric) */
    MP_WQ_QU8, /* uint8 activations, uint8 weights with one scale and zero point */
} mp_wq_kind;

/* The quantization of a node with weights, as XNNPACK's quantized operators take it. */
typedef struct mp_weighted_q {
    mp_wq_kind kind;
    float in_scale, out_scale;
    int32_t in_zp, out_zp;
    const float *w_scale;         /* the model's: w_scale[0], or one per output channel (QC8) */
    int32_t w_zp;                 /* uint8 weights' zero point; 0 for int8 (symmetric) */
    int32_t out_lo, out_hi;       /* the fused activation's range in the output's integers */
    /* the smallest and largest requantization scale, input scale * weight scale / output
     * scale over the weight scales, in float as XNNPACK computes it */
    float ratio_min, ratio_max;
} mp_weighted_q;

/* Validate and read the quantization of node n on int8 or uint8 activations, as TensorFlow
 * Lite defines it, inputs (input, weights, optional bias) and one output:
 *   - input and output of the input's dtype, each with one scale and zero point
 *     (mp_node_qparams);
 *   - weights of the input's dtype with one scale (MP_WQ_QS8, MP_WQ_QU8; uint8: any zero
 *     point), or, int8 only, out_channels scales along dimension channel_dim (MP_WQ_QC8);
 *     int8 weights symmetric (every zero point 0);
 *   - the bias, when present (n->n_in > 2 and n->in[2] set), int32;
 *   - the fused activation n->opt->activation with an integer range (mp_activation_range_q:
 *     TANH and SIGN_BIT refused);
 *   - every requantization scale at least 2^-32 (below it this XNNPACK aborts on an
 *     assertion, where TensorFlow Lite flushes its multiplier to 0).
 * Input 0 must be int8 or uint8 (the caller checks). weights_word names input 1 in messages:
 * "filter" (CONV_2D, DEPTHWISE_CONV_2D) or "weights" (FULLY_CONNECTED); a word ending in 's'
 * is plural ("weights 'w' are i8"), and the per-channel and 2^-32 refusals keep each kernel's
 * wording (a plural word: FULLY_CONNECTED's). Fills *q; on failure MP_ERR_UNSUPPORTED through
 * mp_node_fail, naming the tensor. */
mp_status mp_node_weighted_q(mp_node *n, const char *weights_word, int32_t out_channels,
                             int32_t channel_dim, mp_weighted_q *q);

/* mp_node_xnn_fail for a refused create of a quantized node's XNNPACK operator: "XNNPACK
 * <dtype> <op_words> create (input scale * <weight> scale / output scale <ratio_min>..
 * <ratio_max>, output range <out_lo>..<out_hi>)", <weight> being weights_word in the
 * singular ("filter", "weight"): XNNPACK takes only some ratios, which says which the node
 * asks for. */
mp_status mp_node_weighted_create_fail(mp_node *n, const mp_weighted_q *q, enum xnn_status xs,
                                       const char *op_words, const char *weights_word);

#endif
