/* Kernel: MEAN over the axes given by a constant int32 (or int64) tensor, with keep_dims;
 * any input rank up to MP_MAX_RANK. Axes may be negative and may repeat; an empty axes
 * tensor copies the input.
 *
 * Plain C (XNNPACK has no general mean). float32: each output is a float32 sum taken in the
 * input's row-major order, then divided by the number of elements reduced: the order and
 * rounding of Arm NN's reference backend, which is the oracle.
 *
 * int8 / uint8 / int16 (one scale and zero point each side; int16 with zero points 0): as
 * TensorFlow Lite's reference kernel (reduce.cc EvalQuantizedMean ->
 * reference_ops::QuantizedMeanOrSum): an int32 sum of the raw values per output (the
 * accumulators are the node's scratch, declared by infer), then one requantization with the
 * multiplier and shift of in_scale / out_scale (QuantizeMultiplier) folded with 1 / count:
 * shift s = min(floor(log2(count)), 32, 31 + shift), multiplier' = (multiplier << s) / count
 * (truncated), shift' = shift - s; output = MultiplyByQuantizedMultiplier(sum - zp_in * count,
 * multiplier', shift') + zp_out, saturated. No float, no special case for equal parameters
 * or 4-D spatial means (older TensorFlow Lite releases had both, and its optimized kernels
 * round differently); an empty input gives zeros, an empty axes tensor copies the bytes.
 *
 * The shape is reduced to alternating kept / reduced runs of dimensions first, so the common
 * NHWC spatial mean (axes {1,2}) becomes [N kept][H*W reduced][C kept]: contiguous
 * per-channel additions into the output row, which the compiler vectorizes. */
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

#include <math.h>
#include <string.h>

/* Mark the reduced dimensions of a rank-`rank` input from the axes tensor. */
static mp_status mean_axes(mp_node *n, const mp_tensor *axes, int32_t rank,
                           bool reduced[MP_MAX_RANK])
{
    memset(reduced, 0, sizeof(bool) * MP_MAX_RANK);
    size_t count = mp_tensor_elements(axes);
    for (size_t i = 0; i < count; i++) {
        int64_t ax = axes->dtype == MP_DT_INT32 ? ((const int32_t *)axes->data)[i]
                                                : ((const int64_t *)axes->data)[i];
        if (ax < -rank || ax >= rank) {
            char s[96];
            return mp_node_fail(n, MP_ERR_SHAPE, "axis %lld in '%s' is out of range for '%s' %s",
                                (long long)ax, axes->info->name, n->in[0]->info->name,
                                mp_shape_str(n->in[0]->rank, n->in[0]->dims, s, sizeof s));
        }
        reduced[ax < 0 ? ax + rank : ax] = true;
    }
    return MP_OK;
}

/* The multiplier and shift of in_scale / out_scale (QuantizeMultiplier), from parameters
 * infer checked. */
static bool mean_q_params(mp_node *n, float *in_scale, int32_t *in_zp, int32_t *out_zp,
                          int32_t *mult, int *shift)
{
    float out_scale;
    if (mp_node_qparams(n, n->in[0], in_scale, in_zp) != MP_OK ||
        mp_node_qparams(n, n->out[0], &out_scale, out_zp) != MP_OK)
        return false;
    return mp_quantize_multiplier((double)*in_scale / (double)out_scale, mult, shift);
}

/* float32 -> float32, or int8 / uint8 / int16 -> the same with usable parameters. */
static mp_status mean_check_dtypes(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (in->dtype == MP_DT_FLOAT32)
        return mp_node_check_f32_io(n);
    if (!mp_dtype_is_q8(in->dtype) && in->dtype != MP_DT_INT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s (supported: f32, i8, u8, i16)",
                            mp_tname(in), mp_dtype_name(in->dtype));
    if (out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is %s",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_tname(in),
                            mp_dtype_name(in->dtype));
    float in_scale, out_scale;
    int32_t in_zp, out_zp, mult;
    int shift;
    mp_status st = mp_node_qparams(n, in, &in_scale, &in_zp);
    if (st != MP_OK || (st = mp_node_qparams(n, out, &out_scale, &out_zp)) != MP_OK)
        return st;
    if (in->dtype == MP_DT_INT16 && (in_zp != 0 || out_zp != 0))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "int16 '%s' and '%s' must have zero point 0, have %d and %d",
                            mp_tname(in), mp_tname(out), (int)in_zp, (int)out_zp);
    if (!(in_scale > 0.0f) || !(out_scale > 0.0f) ||
        !mean_q_params(n, &in_scale, &in_zp, &out_zp, &mult, &shift))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "cannot requantize '%s' (scale %g) to '%s' (scale %g)", mp_tname(in),
                            (double)in_scale, mp_tname(out), (double)out_scale);
    return MP_OK;
}

static mp_status mean_infer(mp_node *n)
{
    if (n->n_in != 2 || n->n_out != 1)
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 2 inputs and 1 output, got %d and %d",
                            n->n_in, n->n_out);
    if (!n->in[0] || !n->in[1] || !n->out[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "an input or the output is omitted (-1)");
    const mp_tensor *in = n->in[0], *axes = n->in[1];
    mp_tensor *out = n->out[0];
    mp_status dst = mean_check_dtypes(n);
    if (dst != MP_OK)
        return dst;
    if (axes->dtype != MP_DT_INT32 && axes->dtype != MP_DT_INT64)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "axes '%s' have dtype %s (expected i32)",
                            axes->info->name, mp_dtype_name(axes->dtype));
    if (axes->rank > 1) {
        char s[96];
        return mp_node_fail(n, MP_ERR_SHAPE, "axes '%s' must have rank 0 or 1, not %s",
                            axes->info->name, mp_shape_str(axes->rank, axes->dims, s, sizeof s));
    }
    if (!axes->value_known || !axes->data)
        return MP_ERR_DEFERRED;

    bool reduced[MP_MAX_RANK];
    mp_status st = mean_axes(n, axes, in->rank, reduced);
    if (st != MP_OK)
        return st;
    int32_t dims[MP_MAX_RANK], r = 0;
    for (int32_t i = 0; i < in->rank; i++) {
        if (!reduced[i])
            dims[r++] = in->dims[i];
        else if (n->opt->keep_dims)
            dims[r++] = 1;
    }
    if (!mp_tensor_set_shape(out, r, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "cannot set the shape of output '%s'",
                            out->info->name);
    /* quantized: one int32 accumulator per output */
    n->scratch_bytes = in->dtype == MP_DT_FLOAT32 ? 0 : mp_tensor_elements(out) * sizeof(int32_t);
    return MP_OK;
}

static mp_status mean_prepare(mp_node *n)
{
    (void)n; /* nothing to create: run plans from the current shapes (a few integers) */
    return MP_OK;
}

/* The input's dimensions merged into alternating kept / reduced runs (unit dimensions
 * dropped), with the output stride of each run (0 for reduced runs). */
typedef struct mean_plan {
    int32_t r;
    size_t dims[MP_MAX_RANK], so[MP_MAX_RANK];
    bool red[MP_MAX_RANK];
    size_t count, outputs; /* elements reduced into each output; outputs */
} mean_plan;

static void mean_make_plan(const mp_tensor *in, const bool reduced[MP_MAX_RANK], mean_plan *p)
{
    p->r = 0;
    p->count = 1;
    p->outputs = 1;
    for (int32_t i = 0; i < in->rank; i++) {
        size_t d = (size_t)in->dims[i];
        if (reduced[i])
            p->count *= d;
        else
            p->outputs *= d;
        if (d == 1)
            continue;
        if (p->r > 0 && p->red[p->r - 1] == reduced[i]) {
            p->dims[p->r - 1] *= d;
        } else {
            p->dims[p->r] = d;
            p->red[p->r] = reduced[i];
            p->r++;
        }
    }
    if (p->r == 0) { /* a single element */
        p->dims[0] = 1;
        p->red[0] = false;
        p->r = 1;
    }
    size_t k = 1;
    for (int32_t i = p->r - 1; i >= 0; i--) {
        p->so[i] = p->red[i] ? 0 : k;
        if (!p->red[i])
            k *= p->dims[i];
    }
}

/* y[output] += x over the whole input in row-major order, rows of the last run at a time;
 * y is zeroed by the caller; ACC is the accumulator type (float, or uint32_t for int32 sums
 * that wrap as TensorFlow Lite's do on two's-complement machines). */
#define MEAN_SUM(TX, ACC, xdata, y, p)                                                         \
    do {                                                                                       \
        const TX *x_ = (const TX *)(xdata);                                                    \
        const int32_t last_ = (p)->r - 1;                                                      \
        const size_t len_ = (p)->dims[last_];                                                  \
        const size_t rows_ = (p)->outputs * (p)->count / len_;                                 \
        size_t idx_[MP_MAX_RANK] = {0}, oy_ = 0;                                               \
        for (size_t row_ = 0; row_ < rows_; row_++, x_ += len_) {                              \
            if ((p)->red[last_]) {                                                             \
                ACC acc_ = (y)[oy_];                                                           \
                for (size_t i_ = 0; i_ < len_; i_++)                                           \
                    acc_ += (ACC)x_[i_];                                                       \
                (y)[oy_] = acc_;                                                               \
            } else {                                                                           \
                ACC *yr_ = (y) + oy_;                                                          \
                for (size_t i_ = 0; i_ < len_; i_++)                                           \
                    yr_[i_] += (ACC)x_[i_];                                                    \
            }                                                                                  \
            for (int32_t d_ = last_ - 1; d_ >= 0; d_--) {                                      \
                oy_ += (p)->so[d_];                                                            \
                if (++idx_[d_] < (p)->dims[d_])                                                \
                    break;                                                                     \
                oy_ -= (p)->so[d_] * (p)->dims[d_];                                            \
                idx_[d_] = 0;                                                                  \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* The quantized mean (QuantizedMeanOrSum, see the top of the file). */
static mp_status mean_run_q(mp_node *n, const mean_plan *p)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (mp_tensor_elements(n->in[1]) == 0) { /* no axes: the bytes are copied */
        if (out->bytes != in->bytes)
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' must have the size of '%s'",
                                mp_tname(out), mp_tname(in));
        if (out->data != in->data && in->bytes)
            memcpy(out->data, in->data, in->bytes);
        return MP_OK;
    }
    memset(out->data, 0, out->bytes);
    if (p->count == 0 || p->outputs == 0) /* empty input: zeros */
        return MP_OK;
    if (!n->scratch || n->scratch_bytes < p->outputs * sizeof(uint32_t))
        return mp_node_fail(n, MP_ERR_BACKEND, "no scratch for %zu accumulators", p->outputs);
    float in_scale;
    int32_t in_zp, out_zp, mult, lo, hi;
    int shift;
    if (!mean_q_params(n, &in_scale, &in_zp, &out_zp, &mult, &shift))
        return MP_ERR_UNSUPPORTED; /* infer checked them: not reached */
    mp_quant_dtype_range(out->dtype, &lo, &hi);
    uint32_t *sum = n->scratch;
    memset(sum, 0, p->outputs * sizeof(uint32_t));
    switch (in->dtype) {
    case MP_DT_INT8: MEAN_SUM(int8_t, uint32_t, in->data, sum, p); break;
    case MP_DT_UINT8: MEAN_SUM(uint8_t, uint32_t, in->data, sum, p); break;
    default: MEAN_SUM(int16_t, uint32_t, in->data, sum, p); break;
    }
    /* fold 1 / count into the multiplier */
    int64_t count = (int64_t)p->count;
    int s = 63 - __builtin_clzll((unsigned long long)count);
    s = s < 32 ? s : 32;
    s = s < 31 + shift ? s : 31 + shift; /* shift >= -31: s >= 0 */
    int32_t m = (int32_t)(((int64_t)mult << s) / count);
    int sh = shift - s;
    for (size_t i = 0; i < p->outputs; i++) {
        int32_t shifted = (int32_t)(uint32_t)((int64_t)(int32_t)sum[i] - (int64_t)in_zp * count);
        int64_t v = (int64_t)mp_multiply_by_quantized_multiplier(shifted, m, sh) + out_zp;
        int32_t q = (int32_t)(v < lo ? lo : (v > hi ? hi : v));
        switch (out->dtype) {
        case MP_DT_INT8: ((int8_t *)out->data)[i] = (int8_t)q; break;
        case MP_DT_UINT8: ((uint8_t *)out->data)[i] = (uint8_t)q; break;
        default: ((int16_t *)out->data)[i] = (int16_t)q; break;
        }
    }
    return MP_OK;
}

static mp_status mean_run(mp_node *n)
{
    const mp_tensor *in = n->in[0], *axes = n->in[1];
    bool reduced[MP_MAX_RANK];
    mp_status st = mean_axes(n, axes, in->rank, reduced);
    if (st != MP_OK)
        return st;
    mean_plan p;
    mean_make_plan(in, reduced, &p);
    if (in->dtype != MP_DT_FLOAT32)
        return mean_run_q(n, &p);
    float *y = n->out[0]->data;
    if (p.outputs == 0)
        return MP_OK;
    if (p.count == 0) { /* mean of nothing */
        for (size_t i = 0; i < p.outputs; i++)
            y[i] = NAN;
        return MP_OK;
    }
    memset(y, 0, p.outputs * sizeof(float));
    MEAN_SUM(float, float, in->data, y, &p);
    const float div = (float)p.count;
    for (size_t i = 0; i < p.outputs; i++)
        y[i] /= div;
    return MP_OK;
}

static void mean_release(mp_node *n)
{
    n->state = NULL; /* no state */
}

const mp_kernel mp_kernels_reduce[] = {
    {.opcode = MP_OP_MEAN,
     .optional_inputs = 0,
     .min_inputs = 2,
     .max_inputs = 2,
     .n_outputs = 1,
     .infer = mean_infer,
     .prepare = mean_prepare,
     .run = mean_run,
     .release = mean_release},
    {.opcode = -1},
};
