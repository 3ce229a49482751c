/* DEPTHWISE_CONV_2D in plain C (dwconv.c), for the filters this XNNPACK (2022-02) runs
 * slowly: its float depthwise microkernels take windows of exactly 3, 4, 9 or 25 taps; any
 * other (1x5, 1x31, 7x7) becomes a grouped GEMM of one channel per group, 1-4 GFLOP/s against
 * 20-35 here (docs/benchmarks.md, tools/bench_dwconv.c). conv.c chooses at prepare
 * (mp_dwconv_wanted) and keeps XNNPACK for the rest. NHWC, TensorFlow Lite's semantics:
 * padding given as the top and left of SAME (or 0), strides, dilations, depth multiplier,
 * optional bias, fused activation as a clamp. Float32, and int8 / uint8 (XNNPACK's quantized
 * depthwise has the same fall-back, for all but 9 and 25 taps). No memory of its own but the
 * quantized kinds' requantization scales (conv.c's): the filter [KH,KW,C*M] is already
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
    const float *scale;                    /* [in_c * mult]: input scale * filter scale /
                                              output scale, in float (XNNPACK's) */
    const float *filter_qf;                /* mult 1: the filter less its zero point in
                                              float (mp_dwconv_q8_float_filter), or NULL */
    int32_t in_zp, w_zp, out_zp, out_lo, out_hi;
} mp_dwconv;

/* Whether a float32 depthwise convolution of k_h x k_w taps and depth multiplier mult runs
 * here under the current policy: AUTO where XNNPACK has no depthwise microkernel (taps other
 * than 3, 4, 9, 25) and mult is 1. */
bool mp_dwconv_wanted(int32_t k_h, int32_t k_w, int32_t mult);

/* The same for an 8-bit quantized one (int8 filters with one scale or one per channel,
 * uint8 with a zero point): where XNNPACK has no quantized depthwise microkernel (taps
 * other than 9 and 25) and mult is 1. */
bool mp_dwconv_wanted_q8(int32_t k_h, int32_t k_w, int32_t mult);

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
/* The same on 8-bit tensors, bit for bit XNNPACK's: the int32 sum of bias and (x - in_zp) *
 * (w - w_zp) over the taps inside (wrapping as XNNPACK's), then its float requantization:
 * (float)sum * scale[c], clamped to [out_lo, out_hi] less out_zp, rounded half to even,
 * plus out_zp. (TensorFlow Lite's fixed-point requantization is within one unit of it.) */
void mp_dwconv_run_q8(const mp_dwconv *d, const void *x, void *y, pthreadpool_t pool);

#endif
