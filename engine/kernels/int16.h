/* TensorFlow Lite's 16x8 quantization (int16 activations of zero point 0, int8 weights): the
 * plain-C kernels the existing operators hand their int16 nodes to (XNNPACK has no int16).
 * int16_linear.c: FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D (TensorFlow Lite's
 * reference_integer_ops FullyConnected / ConvPerChannel / DepthwiseConvPerChannel for int16),
 * BATCH_MATMUL (reference BatchMatMul<int16, int64>) and TRANSPOSE_CONV (reference_integer_ops
 * TransposeConv with an int64 bias);
 * int16_binary.c: ADD, SUB (add.cc / sub.cc: the power-of-two path and the general one) and
 * MUL; int16_activation.c: LOGISTIC and TANH (reference_integer_ops' sigmoid table), RELU,
 * RELU6, LEAKY_RELU, ABS, EXP (LUTPopulate's table) and SOFTMAX (its exp and reciprocal
 * tables). None
 * keeps state: what a run needs is computed from the tensors at the run. */
#ifndef MP_INT16_H
#define MP_INT16_H

#include "engine/kernels/kernel.h"

/* An int16 activation of node n (input 0 is int16): t int16 (else "<role> 't' is <dtype>;
 * with i16 input '<input 0>' it must be i16"), one scale (*scale) and zero point 0 (TensorFlow
 * Lite's int16 kernels refuse others). MP_ERR_UNSUPPORTED naming the tensor. */
mp_status mp_i16_activation(mp_node *n, const mp_tensor *t, const char *role, float *scale);

/* The quantization of an int16 node with weights (input 0 int16): input and output int16
 * with one scale and zero point 0; weights int8, symmetric, one scale or out_channels along
 * channel_dim; the bias (input 2 when present) int64, or int32 where TensorFlow Lite takes it
 * (CONV_2D, FULLY_CONNECTED: not DEPTHWISE_CONV_2D); a fused activation with an integer range.
 * weights_word names input 1 ("filter", "weights"). MP_ERR_UNSUPPORTED naming the tensor. */
mp_status mp_i16_weighted_check(mp_node *n, const char *weights_word, int32_t out_channels,
                                int32_t channel_dim);

/* The geometry of an int16 CONV_2D / DEPTHWISE_CONV_2D (conv.c computes it). */
typedef struct mp_i16_conv_shape {
    int32_t batch, in_h, in_w, in_c;
    int32_t k_h, k_w, out_h, out_w, out_c;
    int32_t group_in, group_out; /* input channels read by, output channels of, one group */
    int32_t stride_h, stride_w, dil_h, dil_w;
    int32_t pad_top, pad_left;   /* TensorFlow Lite's padding before (SAME: total / 2) */
    bool depthwise;              /* filter [1, KH, KW, out_c], else [out_c, KH, KW, group_in] */
} mp_i16_conv_shape;

/* Run an int16 CONV_2D / DEPTHWISE_CONV_2D of shape g (checked by mp_i16_weighted_check). */
mp_status mp_i16_conv_run(mp_node *n, const mp_i16_conv_shape *g);
/* Run an int16 FULLY_CONNECTED: batch rows of in_c to rows of out_c. */
mp_status mp_i16_fc_run(mp_node *n, size_t batch, size_t in_c, size_t out_c);

/* An int16 BATCH_MATMUL (matmul.c computes the geometry): lhs [lhs_batches][m][k] (adj_x:
 * [k][m] each), rhs [rhs_batches][k][n] (adj_y: [n][k] each), output [batches][m][n];
 * batch(ctx, ob, &lb, &rb) names the lhs and rhs batches of output batch ob (broadcasting). */
typedef struct mp_i16_matmul_shape {
    size_t m, k, n, batches, lhs_batches, rhs_batches;
    bool adj_x, adj_y;
    void (*batch)(const void *ctx, size_t ob, size_t *lb, size_t *rb);
    const void *ctx;
} mp_i16_matmul_shape;

/* BATCH_MATMUL with an int16 lhs (batch_matmul.cc EvalInt16): rhs and output int16, each one
 * scale and zero point 0; int64 sums requantized by lhs_scale * rhs_scale / output scale on
 * the int64 path. Check; run. */
mp_status mp_i16_matmul_check(mp_node *n);
mp_status mp_i16_matmul_run(mp_node *n, const mp_i16_matmul_shape *g);

/* TRANSPOSE_CONV with an int16 input (input 2; transpose_conv.c checks the shapes): output
 * int16, int8 weights [O,KH,KW,I] symmetric with one scale or one per output channel, an int64
 * bias or none, a fused activation with an integer range. Check; run with the geometry g
 * (pad_top / pad_left TensorFlow Lite's transposed padding; groups and dilations unused). */
mp_status mp_i16_tconv_check(mp_node *n);
mp_status mp_i16_tconv_run(mp_node *n, const mp_i16_conv_shape *g);

/* TensorFlow Lite's CheckedLog2: the rounded log2 of x (float arithmetic, as there), true when
 * x is within 1e-3 (in the exponent) of a power of two. */
bool mp_i16_checked_log2(float x, int *log2_rounded);

/* ADD, SUB, MUL with int16 inputs (the node's inputs and output present, two inputs): check
 * the quantization, give the output its broadcast shape; run. */
mp_status mp_i16_binary_infer(mp_node *n);
mp_status mp_i16_binary_run(mp_node *n);

/* LOGISTIC, TANH, RELU, RELU6 (from unary.c) and LEAKY_RELU, ABS, EXP, LOG, RSQRT, SQRT (from
 * unary_math.c) with an int16 input (int16_activation.c): check the quantization (the node's
 * one input and output present); run. */
mp_status mp_i16_unary_check(mp_node *n);
mp_status mp_i16_unary_run(mp_node *n);
/* SOFTMAX with an int16 input (int16_activation.c): check, give the output the input's shape
 * (no scratch); run. */
mp_status mp_i16_softmax_infer(mp_node *n);
mp_status mp_i16_softmax_run(mp_node *n);

#endif
