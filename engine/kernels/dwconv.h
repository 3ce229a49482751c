/* DEPTHWISE_CONV_2D in plain C (dwconv.c), for the filters this XNNPACK (2022-02) runs
 * slowly: its float depthwise microkernels take windows of exactly 3, 4, 9 or 25 taps; any
 * other (1x5, 1x31, 7x7) becomes a grouped GEMM of one channel per group, 1-4 GFLOP/s against
 * 20-35 here (docs/benchmarks.md, tools/bench_dwconv.c); and any depth multiplier above 1 a
 * GEMM of M channels per group, 5-31 GFLOP/s for M = 2-8 against 25-51 here. conv.c chooses
 * at prepare (mp_dwconv_wanted) and keeps XNNPACK for the rest. NHWC, TensorFlow Lite's
 * semantics:
 * padding given as the top and left of SAME (or 0), strides, dilations, depth multiplier,
 * optional bias, fused activation as a clamp. Float32, and int8 / uint8 (XNNPACK's quantized
 * depthwise has the same fall-back, for all but 9 and 25 taps), requantized in integers as
 * TensorFlow Lite's reference kernels do (XNNPACK's own path requantizes in float, as XNNPACK
 * does: the two differ by at most one unit). No memory of its own but the quantized kinds'
 * per-channel multipliers and shifts (conv.c's): the filter [KH,KW,C*M] is already
 * tap-major with the channels contiguous, read in place. */
#ifndef MP_DWCONV_H
#define MP_DWCONV_H

#include <pthreadpool.h>
#include <stdbool.h>
#include <stdint.h>

/* Which path depthwise convolutions take: the choice below (AUTO), or one path wherever it
 * applies; process-wide, read at prepare. For tests and benchmarks comparing the two. */
typedef enum mp_dwconv_policy {
    MP_DWCONV_AUTO = 0,
    MP_DWCONV_XNNPACK,
    MP_DWCONV_C
} mp_dwconv_policy;
void mp_dwconv_set_policy(mp_dwconv_policy p);
mp_dwconv_policy mp_dwconv_get_policy(void);

typedef struct mp_dwconv {
    int32_t batch, in_h, in_w, in_c, mult; /* output channels in_c * mult */
    int32_t out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w;
    int64_t pad_top, pad_left;             /* SAME's leading padding; 0 for VALID */
    const float *filter;                   /* [k_h, k_w, in_c * mult] */
    const float *bias;                     /* [in_c * mult], or NULL for zeros */
    float lo, hi;                          /* the fused activation's clamp */
    /* 8-bit quantized (mp_dwconv_run_q8): int8 or uint8 input, filter and output */
    bool q_uint8;
    const void *filter_q;                  /* [k_h, k_w, in_c * mult] */
    const int32_t *bias_q;                 /* [in_c * mult], or NULL for zeros */
    /* [in_c * mult] each, mp_dwconv_requant_params of input scale * filter scale / output
     * scale: TensorFlow Lite's multiplier, its shift as left = max(shift, 0) and right =
     * max(-shift, 0), both in [0, 31] */
    const int32_t *q_mult, *q_left, *q_right;
    const float *filter_qf;                /* the filter less its zero point in float
                                              (mp_dwconv_q8_float_filter), or NULL */
    int32_t in_zp, w_zp, out_zp, out_lo, out_hi;
} mp_dwconv;

/* Whether a float32 depthwise convolution of k_h x k_w taps, in_c input channels and depth
 * multiplier mult runs here under the current policy: AUTO where XNNPACK has no depthwise
 * microkernel (mult 1 and taps other than 3, 4, 9, 25), and for multipliers 2 to 8 on
 * sixteen input channels or more (XNNPACK's GEMM is slower there; dwconv.c has the figures). */
bool mp_dwconv_wanted(int32_t k_h, int32_t k_w, int32_t in_c, int32_t mult);

/* The same for an 8-bit quantized one (int8 filters with one scale or one per channel,
 * uint8 with a zero point): where XNNPACK has no quantized depthwise microkernel (mult 1 and
 * taps other than 9 and 25), and multipliers 2 to 8 on sixteen input channels or more. */
bool mp_dwconv_wanted_q8(int32_t k_h, int32_t k_w, int32_t in_c, int32_t mult);

/* An 8-bit convolution's sums computed in float are exact when no sum of products can reach
 * 2^24 (taps * the largest |x - in_zp| * the largest |w - w_zp|): then wf [k_h, k_w, in_c *
 * mult] gets w - w_zp of d's filter and the result is true (the run takes the float path,
 * as fast as float32's, when d->filter_qf = wf); false when the sums could reach 2^24.
 * wf NULL: only the answer. */
bool mp_dwconv_q8_float_filter(const mp_dwconv *d, float *wf);

/* y [batch, out_h, out_w, in_c * mult] = the convolution of x [batch, in_h, in_w, in_c], rows
 * of the output in tasks on pool (NULL: the calling thread). The caller checked every size
 * against the tensors' (conv.c's geometry). */
void mp_dwconv_run_f32(const mp_dwconv *d, const float *x, float *y, pthreadpool_t pool);
/* The same on 8-bit tensors, as TensorFlow Lite's reference_integer_ops::
 * DepthwiseConvPerChannel (int8) and reference_ops::DepthwiseConv (uint8): the int32 sum of
 * bias and (x - in_zp) * (w - w_zp) over the taps inside (wrapping where TensorFlow Lite's
 * would overflow), MultiplyByQuantizedMultiplier by the channel's q_mult and shift, plus
 * out_zp, clamped to [out_lo, out_hi]. */
void mp_dwconv_run_q8(const mp_dwconv *d, const void *x, void *y, pthreadpool_t pool);

/* A requantization multiplier real (TensorFlow Lite's effective scale, in double) as
 * QuantizeMultiplier's multiplier and shift, the shift split into left and right (a shift
 * above 31, which leaves nothing, as multiplier 0). False when real is not finite. */
bool mp_dwconv_requant_params(double real, int32_t *multiplier, int32_t *left, int32_t *right);

/* The run's sixteen-lane requantization: out[l] = mp_multiply_by_quantized_multiplier(x[l],
 * multiplier[l], left[l] - right[l]), bit for bit, for multipliers in [0, 2^31) (those of
 * mp_dwconv_requant_params from positive scales), left and right in [0, 31]. For tests. */
void mp_dwconv_requant16(const int32_t *x, const int32_t *multiplier, const int32_t *left,
                         const int32_t *right, int32_t *out);

#endif
