/* Kernels: the reducers MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY,
 * REDUCE_ALL (one axis machinery, one walk with an operation), ARG_MAX / ARG_MIN and
 * L2_NORMALIZATION (sections below).
 *
 * The reducers reduce over the axes given by an int32 (or int64) tensor, with keep_dims;
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
 * SUM of int8 / uint8 is the same function with compute_sum (reduce.cc EvalSum): the sum
 * requantized by in_scale / out_scale without the 1 / count fold (an empty axes tensor
 * requantizes each element); int16 SUM likewise (zero points 0), as reduce.cc's EvalSum.
 *
 * REDUCE_PROD of quantized int8 / int16 (reduce.cc EvalQuantizedProd ->
 * reference_ops::QuantizedReduceProd; int16 with zero points 0): per output, the reduced
 * elements in the input's row-major order, the first centred (q - zp_in), each next one
 * multiplied in int64 by the running value and rescaled by the int64
 * MultiplyByQuantizedMultiplier (15-bit multiplier, one rounding) of in_scale /
 * out_scale^(1 / count), count = input elements / output elements; the result rescaled once
 * more by it, plus zp_out, saturated. A multiplier TensorFlow Lite's int64 rescale cannot take
 * (2^14 or more) is refused; an empty input gives zeros. int8 / int16 without quantization
 * multiply as integers (wrapping), as its EvalGeneric.
 *
 * MEAN of int32 / int64 (reduce.cc EvalMean -> reference_ops::Mean<T, int64_t>): the sum of
 * the reduced elements in int64 (int32: in the node's scratch; int64: wrapping, in the output
 * itself), divided by their count with C's division (toward zero); an empty input gives
 * zeros (reduce.cc's InitializeMeanOutput: an integer's quiet_NaN is 0).
 *
 * REDUCE_ANY / REDUCE_ALL (reduce.cc, bool to bool): the logical or / and of the reduced
 * elements (any nonzero byte is true); an empty reduction gives false / true, their
 * identities.
 *
 * The shape is reduced to alternating kept / reduced runs of dimensions first, so the common
 * NHWC spatial mean (axes {1,2}) becomes [N kept][H*W reduced][C kept]: contiguous
 * per-channel additions into the output row, which the compiler vectorizes. */
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_layout.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
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

/* MEAN on int32 / int64 (reference_ops::Mean: an int64 sum, divided toward zero). */
static bool mean_is_int(const mp_node *n)
{
    return n->opcode == MP_OP_MEAN &&
           (n->in[0]->dtype == MP_DT_INT32 || n->in[0]->dtype == MP_DT_INT64);
}

/* float32 -> float32, int32 / int64 (MEAN) -> the same, or int8 / uint8 / int16 -> the same
 * with usable parameters. */
static mp_status mean_check_dtypes(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (in->dtype == MP_DT_FLOAT32)
        return mp_node_check_f32_io(n);
    if (mean_is_int(n))
        return mp_node_check_same_dtype(n, in, out);
    if (!mp_dtype_is_q8(in->dtype) && in->dtype != MP_DT_INT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s (supported: f32, %si8, u8, i16)",
                            mp_tname(in), mp_dtype_name(in->dtype),
                            n->opcode == MP_OP_MEAN ? "i32, i64, " : "");
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

/* ---- quantized REDUCE_PROD ---- */

/* REDUCE_PROD on an int8 / int16 input with quantization parameters (EvalQuantizedProd). */
static bool prod_is_q(const mp_node *n)
{
    const mp_tensor *in = n->in[0];
    return n->opcode == MP_OP_REDUCE_PROD &&
           (in->dtype == MP_DT_INT8 || in->dtype == MP_DT_INT16) && in->info->quant.count > 0;
}

/* int8 / int16 REDUCE_PROD: the output of the input's dtype; quantized, one scale and zero
 * point each side (int16: zero points 0), else neither quantized (an integer product). */
static mp_status prod_check_dtypes(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    mp_status st = mp_node_check_same_dtype(n, in, out);
    if (st != MP_OK || !prod_is_q(n))
        return st != MP_OK ? st : mp_node_check_same_qparams(n, in, out);
    float s;
    int32_t zi, zo;
    if ((st = mp_node_qparams(n, in, &s, &zi)) != MP_OK ||
        (st = mp_node_qparams(n, out, &s, &zo)) != MP_OK)
        return st;
    if (in->dtype == MP_DT_INT16 && (zi != 0 || zo != 0))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "int16 '%s' and '%s' must have zero point 0, have %d and %d",
                            mp_tname(in), mp_tname(out), (int)zi, (int)zo);
    return MP_OK;
}

/* The rescale of each step: QuantizeMultiplier(in_scale / out_scale^(1 / count)) for the
 * current shapes ((0, 0) when a tensor is empty, as TensorFlow Lite leaves it). */
static mp_status prod_q_params(mp_node *n, int32_t *mult, int *shift)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    float si, so;
    int32_t zp;
    mp_node_qparams(n, in, &si, &zp);
    mp_node_qparams(n, out, &so, &zp);
    const size_t ni = mp_tensor_elements(in), no = mp_tensor_elements(out);
    *mult = 0;
    *shift = 0;
    if (ni == 0 || no == 0)
        return MP_OK;
    const size_t count = ni / no;
    const double scaling = (double)si / pow((double)so, 1.0 / (double)count);
    if (!mp_quantize_multiplier(scaling, mult, shift) || *shift > 14)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input scale %g / output scale %g^(1/%zu) = %g, which the int64 "
                            "requantization cannot take (at most 2^14)",
                            (double)si, (double)so, count, scaling);
    return MP_OK;
}

/* SUM, REDUCE_PROD: float32, int32, int64 (int8 / uint8 / int16 SUM is checked as MEAN;
 * int8 / int16 REDUCE_PROD by prod_check_dtypes); REDUCE_MAX, REDUCE_MIN: those and
 * int8 / uint8 / int16, whose output must keep the input's scale and zero point (the values
 * only move, as TensorFlow Lite requires). */
static mp_status reduce_check_dtypes(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (n->opcode == MP_OP_REDUCE_ANY || n->opcode == MP_OP_REDUCE_ALL) {
        if (in->dtype != MP_DT_BOOL)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: bool)",
                                mp_tname(in), mp_dtype_name(in->dtype));
        return mp_node_check_same_dtype(n, in, out);
    }
    bool minmax = n->opcode == MP_OP_REDUCE_MAX || n->opcode == MP_OP_REDUCE_MIN;
    if (n->opcode == MP_OP_REDUCE_PROD && (in->dtype == MP_DT_INT8 || in->dtype == MP_DT_INT16))
        return prod_check_dtypes(n);
    bool ok = in->dtype == MP_DT_FLOAT32 || in->dtype == MP_DT_INT32 || in->dtype == MP_DT_INT64 ||
              (minmax && mp_dtype_is_quantized_int(in->dtype));
    if (!ok)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: %s)",
                            mp_tname(in), mp_dtype_name(in->dtype),
                            minmax ? "f32, i32, i64, i8, u8, i16"
                                   : n->opcode == MP_OP_SUM ? "f32, i32, i64, i8, u8, i16"
                                                            : "f32, i32, i64, i8, i16");
    mp_status st = mp_node_check_same_dtype(n, in, out);
    return st != MP_OK ? st : mp_node_check_same_qparams(n, in, out);
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
    const bool q_sum =
        n->opcode == MP_OP_SUM && (mp_dtype_is_q8(in->dtype) || in->dtype == MP_DT_INT16);
    mp_status dst = n->opcode == MP_OP_MEAN || q_sum ? mean_check_dtypes(n)
                                                     : reduce_check_dtypes(n);
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
    if (prod_is_q(n)) { /* the multiplier depends on the count reduced */
        int32_t m;
        int sh;
        if ((st = prod_q_params(n, &m, &sh)) != MP_OK)
            return st;
    }
    /* quantized: one int32 accumulator per output; int32 MEAN: one int64 */
    n->scratch_bytes = in->dtype == MP_DT_FLOAT32 || in->dtype == MP_DT_INT64 ||
                               (n->opcode != MP_OP_MEAN && !q_sum)
                           ? 0
                           : mp_tensor_elements(out) *
                                 (in->dtype == MP_DT_INT32 ? sizeof(int64_t) : sizeof(int32_t));
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

/* y[output] = OP(y[output], x) over the whole input in row-major order, rows of the last
 * run at a time; y holds the identity of OP (set by the caller); ACC is the accumulator type
 * (float, or uint32_t for int32 sums that wrap as TensorFlow Lite's do on two's-complement
 * machines). One walk for every reducer: OP is REDUCE_ADD, REDUCE_MUL, REDUCE_MAX or
 * REDUCE_MIN (the last two as TensorFlow Lite's reducers: in > current ? in : current). */
#define REDUCE_ADD(a, v) ((a) + (v))
#define REDUCE_MUL(a, v) ((a) * (v))
#define REDUCE_MAX(a, v) ((v) > (a) ? (v) : (a))
#define REDUCE_MIN(a, v) ((v) < (a) ? (v) : (a))
#define REDUCE_OR(a, v) ((a) | ((v) != 0))
#define REDUCE_AND(a, v) ((a) & ((v) != 0))
#define REDUCE_WALK(TX, ACC, OP, xdata, y, p)                                                  \
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
                    acc_ = OP(acc_, (ACC)x_[i_]);                                              \
                (y)[oy_] = acc_;                                                               \
            } else {                                                                           \
                ACC *yr_ = (y) + oy_;                                                          \
                for (size_t i_ = 0; i_ < len_; i_++)                                           \
                    yr_[i_] = OP(yr_[i_], (ACC)x_[i_]);                                        \
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

/* The quantized mean, or sum (compute_sum: QuantizedMeanOrSum, see the top of the file). */
static mp_status mean_run_q(mp_node *n, const mean_plan *p, bool compute_sum)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (!compute_sum && mp_tensor_elements(n->in[1]) == 0) { /* no axes: the bytes are copied */
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
    case MP_DT_INT8: REDUCE_WALK(int8_t, uint32_t, REDUCE_ADD, in->data, sum, p); break;
    case MP_DT_UINT8: REDUCE_WALK(uint8_t, uint32_t, REDUCE_ADD, in->data, sum, p); break;
    default: REDUCE_WALK(int16_t, uint32_t, REDUCE_ADD, in->data, sum, p); break;
    }
    /* a mean folds 1 / count into the multiplier */
    int64_t count = (int64_t)p->count;
    int s = compute_sum ? 0 : 63 - __builtin_clzll((unsigned long long)count);
    s = s < 32 ? s : 32;
    s = s < 31 + shift ? s : 31 + shift; /* shift >= -31: s >= 0 */
    int32_t m = compute_sum ? mult : (int32_t)(((int64_t)mult << s) / count);
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

/* The quantized product of each output (see the top of the file); no scratch: each output's
 * elements are walked in turn. */
static mp_status prod_run_q(mp_node *n, const mean_plan *p)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    int32_t mult, zi, zo, lo, hi;
    int shift;
    float s;
    mp_status st = prod_q_params(n, &mult, &shift);
    if (st != MP_OK)
        return st;
    mp_node_qparams(n, in, &s, &zi);
    mp_node_qparams(n, out, &s, &zo);
    mp_quant_dtype_range(out->dtype, &lo, &hi);
    if (out->bytes != p->outputs * mp_dtype_size(out->dtype) ||
        in->bytes != p->outputs * p->count * mp_dtype_size(in->dtype))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not hold the reduced shape",
                            mp_tname(out));
    if (p->outputs && p->count == 0) { /* an empty input: zeros */
        memset(out->data, 0, out->bytes);
        return MP_OK;
    }
    size_t stride[MP_MAX_RANK], k = 1;
    for (int32_t d = p->r - 1; d >= 0; d--) {
        stride[d] = k;
        k *= p->dims[d];
    }
    const bool i16 = in->dtype == MP_DT_INT16;
    for (size_t o = 0; o < p->outputs; o++) {
        size_t base = 0, rem = o;
        for (int32_t d = p->r - 1; d >= 0; d--)
            if (!p->red[d]) {
                base += rem % p->dims[d] * stride[d];
                rem /= p->dims[d];
            }
        int32_t acc = 0;
        for (size_t j = 0; j < p->count; j++) {
            size_t at = base;
            rem = j;
            for (int32_t d = p->r - 1; d >= 0; d--)
                if (p->red[d]) {
                    at += rem % p->dims[d] * stride[d];
                    rem /= p->dims[d];
                }
            const int32_t v = (i16 ? ((const int16_t *)in->data)[at]
                                   : ((const int8_t *)in->data)[at]) - zi;
            acc = j == 0 ? v
                         : mp_multiply_by_quantized_multiplier_i64((int64_t)acc * v, mult, shift);
        }
        int64_t q = (int64_t)mp_multiply_by_quantized_multiplier_i64(acc, mult, shift) + zo;
        q = q < lo ? lo : (q > hi ? hi : q);
        if (i16)
            ((int16_t *)out->data)[o] = (int16_t)q;
        else
            ((int8_t *)out->data)[o] = (int8_t)q;
    }
    return MP_OK;
}

/* Fill n elements of y (dtype dt) with v. */
#define REDUCE_FILL(T, y, n, v)                                                                \
    do {                                                                                       \
        T *y_ = (T *)(y);                                                                      \
        for (size_t i_ = 0; i_ < (n); i_++)                                                    \
            y_[i_] = (v);                                                                      \
    } while (0)

/* One reducer over one dtype: the identity into y, then the walk. Integer sums and products
 * accumulate in unsigned types (wrapping as TensorFlow Lite's do, without undefined
 * behaviour); the identities of max and min are the dtype's lowest and highest values, as
 * TensorFlow Lite's (an empty reduction gives them). */
#define REDUCE_DTYPE(T, UT, LOWEST, HIGHEST, x, y, p, op)                                      \
    do {                                                                                       \
        switch (op) {                                                                          \
        case MP_OP_SUM:                                                                        \
            REDUCE_FILL(UT, y, (p)->outputs, (UT)0);                                           \
            if ((p)->count)                                                                    \
                REDUCE_WALK(T, UT, REDUCE_ADD, x, (UT *)(y), p);                               \
            break;                                                                             \
        case MP_OP_REDUCE_PROD:                                                                \
            REDUCE_FILL(UT, y, (p)->outputs, (UT)1);                                           \
            if ((p)->count)                                                                    \
                REDUCE_WALK(T, UT, REDUCE_MUL, x, (UT *)(y), p);                               \
            break;                                                                             \
        case MP_OP_REDUCE_MAX:                                                                 \
            REDUCE_FILL(T, y, (p)->outputs, LOWEST);                                           \
            if ((p)->count)                                                                    \
                REDUCE_WALK(T, T, REDUCE_MAX, x, (T *)(y), p);                                 \
            break;                                                                             \
        default:                                                                               \
            REDUCE_FILL(T, y, (p)->outputs, HIGHEST);                                          \
            if ((p)->count)                                                                    \
                REDUCE_WALK(T, T, REDUCE_MIN, x, (T *)(y), p);                                 \
            break;                                                                             \
        }                                                                                      \
    } while (0)

/* SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN (infer checked the dtypes). float32 sums and
 * products accumulate in float in the input's row-major order, as the reference kernel. */
static mp_status reduce_run_op(mp_node *n, const mean_plan *p)
{
    const mp_tensor *in = n->in[0];
    void *y = n->out[0]->data;
    const void *x = in->data;
    if (p->outputs == 0)
        return MP_OK;
    int32_t op = n->opcode;
    if (op == MP_OP_REDUCE_ANY || op == MP_OP_REDUCE_ALL) { /* bool (infer checked) */
        const bool any = op == MP_OP_REDUCE_ANY;
        REDUCE_FILL(uint8_t, y, p->outputs, any ? 0 : 1);
        if (p->count && any)
            REDUCE_WALK(uint8_t, uint8_t, REDUCE_OR, x, (uint8_t *)y, p);
        else if (p->count)
            REDUCE_WALK(uint8_t, uint8_t, REDUCE_AND, x, (uint8_t *)y, p);
        return MP_OK;
    }
    switch (in->dtype) {
    case MP_DT_FLOAT32: REDUCE_DTYPE(float, float, -FLT_MAX, FLT_MAX, x, y, p, op); break;
    case MP_DT_INT32: REDUCE_DTYPE(int32_t, uint32_t, INT32_MIN, INT32_MAX, x, y, p, op); break;
    case MP_DT_INT64: REDUCE_DTYPE(int64_t, uint64_t, INT64_MIN, INT64_MAX, x, y, p, op); break;
    case MP_DT_INT8: REDUCE_DTYPE(int8_t, uint8_t, INT8_MIN, INT8_MAX, x, y, p, op); break;
    case MP_DT_UINT8: REDUCE_DTYPE(uint8_t, uint8_t, 0, UINT8_MAX, x, y, p, op); break;
    default: REDUCE_DTYPE(int16_t, uint16_t, INT16_MIN, INT16_MAX, x, y, p, op); break;
    }
    return MP_OK;
}

/* int32 / int64 MEAN: the int64 sums (int32: in the scratch; int64: in the output, unsigned,
 * wrapping), each divided by the count toward zero. */
static mp_status mean_run_int(mp_node *n, const mean_plan *p)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (p->outputs == 0)
        return MP_OK;
    if (p->count == 0) { /* empty input: zeros */
        memset(out->data, 0, out->bytes);
        return MP_OK;
    }
    const int64_t count = (int64_t)p->count;
    if (in->dtype == MP_DT_INT64) {
        uint64_t *y = out->data;
        memset(y, 0, p->outputs * sizeof *y);
        REDUCE_WALK(int64_t, uint64_t, REDUCE_ADD, in->data, y, p);
        for (size_t i = 0; i < p->outputs; i++)
            ((int64_t *)y)[i] = (int64_t)y[i] / count;
        return MP_OK;
    }
    if (!n->scratch || n->scratch_bytes < p->outputs * sizeof(int64_t))
        return mp_node_fail(n, MP_ERR_BACKEND, "no scratch for %zu accumulators", p->outputs);
    int64_t *sum = n->scratch;
    memset(sum, 0, p->outputs * sizeof *sum);
    REDUCE_WALK(int32_t, int64_t, REDUCE_ADD, in->data, sum, p);
    for (size_t i = 0; i < p->outputs; i++)
        ((int32_t *)out->data)[i] = (int32_t)(sum[i] / count);
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
    if (n->opcode == MP_OP_SUM && (mp_dtype_is_q8(in->dtype) || in->dtype == MP_DT_INT16))
        return mean_run_q(n, &p, true);
    if (prod_is_q(n))
        return prod_run_q(n, &p);
    if (n->opcode != MP_OP_MEAN)
        return reduce_run_op(n, &p);
    if (mean_is_int(n))
        return mean_run_int(n, &p);
    if (in->dtype != MP_DT_FLOAT32)
        return mean_run_q(n, &p, false);
    float *y = n->out[0]->data;
    if (p.outputs == 0)
        return MP_OK;
    if (p.count == 0) { /* mean of nothing */
        for (size_t i = 0; i < p.outputs; i++)
            y[i] = NAN;
        return MP_OK;
    }
    memset(y, 0, p.outputs * sizeof(float));
    REDUCE_WALK(float, float, REDUCE_ADD, in->data, y, &p);
    const float div = (float)p.count;
    for (size_t i = 0; i < p.outputs; i++)
        y[i] /= div;
    return MP_OK;
}

static void mean_release(mp_node *n)
{
    n->state = NULL; /* no state */
}

/* ---- ARG_MAX / ARG_MIN ------------------------------------------------------------------ */

/* ARG_MAX / ARG_MIN (input, axis), as TensorFlow Lite's arg_min_max.cc: the index along one
 * axis (a one-element int32 / int64 tensor, negative counts from the end) of the largest
 * (smallest) value, the first one on ties: a later value replaces the current best only when
 * strictly greater (smaller), so a NaN never wins unless it comes first. The output dtype is
 * the output tensor's, int32 or int64; the output_type option, when the model has it, must
 * agree. Input float32, int8, uint8, int16, int32, int64 or bool (compared as raw integers:
 * quantized values order like their real values). Output shape: the input's without the
 * axis, so infer defers while the axis is unknown. */
static mp_status arg_axis(mp_node *n, int32_t *axis)
{
    const mp_tensor *in = n->in[0], *ax = n->in[1];
    int64_t a = mp_tensor_index_at(ax, 0);
    char b[96];
    if (a < -in->rank || a >= in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %lld in '%s' is out of range for '%s' %s",
                            (long long)a, mp_tname(ax), mp_tname(in),
                            mp_shape_str(in->rank, in->dims, b, sizeof b));
    *axis = (int32_t)(a < 0 ? a + in->rank : a);
    return MP_OK;
}

static mp_status arg_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *ax = n->in[1];
    mp_tensor *out = n->out[0];
    char b[96];
    switch (in->dtype) {
    case MP_DT_FLOAT32: case MP_DT_INT8: case MP_DT_UINT8: case MP_DT_INT16: case MP_DT_INT32:
    case MP_DT_INT64: case MP_DT_BOOL:
        break;
    default:
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s (supported: f32, i8, u8, i16, i32, i64, bool)",
                            mp_tname(in), mp_dtype_name(in->dtype));
    }
    if (!mp_dtype_is_index(out->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s; expected i32 or i64",
                            mp_tname(out), mp_dtype_name(out->dtype));
    if (n->opt->out_type >= 0 && n->opt->out_type != (int32_t)out->dtype)
        return mp_node_fail(n, MP_ERR_FORMAT, "output_type %s but output '%s' is %s",
                            mp_dtype_name((mp_dtype)n->opt->out_type), mp_tname(out),
                            mp_dtype_name(out->dtype));
    if (!mp_dtype_is_index(ax->dtype) || mp_tensor_elements(ax) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis '%s' must be one int32 value, is %s %s",
                            mp_tname(ax), mp_dtype_name(ax->dtype),
                            mp_shape_str(ax->rank, ax->dims, b, sizeof b));
    if (in->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is a scalar", mp_tname(in));
    if (!ax->value_known || !ax->data)
        return MP_ERR_DEFERRED;
    int32_t axis, dims[MP_MAX_RANK], r = 0;
    if ((st = arg_axis(n, &axis)) != MP_OK)
        return st;
    for (int32_t i = 0; i < in->rank; i++)
        if (i != axis)
            dims[r++] = in->dims[i];
    return mp_node_set_output_shape(n, r, dims);
}

#define ARG_LOOP(T, x, y, wide, outer, len, inner, is_max)                                         \
    do {                                                                                       \
        const T *x_ = (const T *)(x);                                                          \
        for (size_t o_ = 0; o_ < (outer); o_++)                                                \
            for (size_t k_ = 0; k_ < (inner); k_++) {                                          \
                const T *c_ = x_ + o_ * (len) * (inner) + k_;                                  \
                T best_ = c_[0];                                                               \
                int64_t at_ = 0;                                                               \
                for (size_t i_ = 1; i_ < (len); i_++) {                                        \
                    T v_ = c_[i_ * (inner)];                                                   \
                    if ((is_max) ? v_ > best_ : v_ < best_) {                                  \
                        best_ = v_;                                                            \
                        at_ = (int64_t)i_;                                                     \
                    }                                                                          \
                }                                                                              \
                if (wide)                                                                      \
                    ((int64_t *)(y))[o_ * (inner) + k_] = at_;                                 \
                else                                                                           \
                    ((int32_t *)(y))[o_ * (inner) + k_] = (int32_t)at_;                        \
            }                                                                                  \
    } while (0)

static mp_status arg_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    int32_t axis;
    mp_status st = arg_axis(n, &axis);
    if (st != MP_OK)
        return st;
    size_t outer = 1, inner = 1, len = (size_t)in->dims[axis];
    for (int32_t i = 0; i < axis; i++)
        outer *= (size_t)in->dims[i];
    for (int32_t i = axis + 1; i < in->rank; i++)
        inner *= (size_t)in->dims[i];
    size_t count = outer * inner;
    if (mp_tensor_elements(out) != count)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match the input without axis %d",
                            mp_tname(out), axis);
    if (count == 0)
        return MP_OK;
    if (len == 0)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %d of '%s' is empty: no index to return",
                            axis, mp_tname(in));
    void *y = out->data;
    bool wide = out->dtype == MP_DT_INT64;
    bool mx = n->opcode == MP_OP_ARG_MAX;
    switch (in->dtype) {
    case MP_DT_FLOAT32: ARG_LOOP(float, in->data, y, wide, outer, len, inner, mx); break;
    case MP_DT_INT8: ARG_LOOP(int8_t, in->data, y, wide, outer, len, inner, mx); break;
    case MP_DT_UINT8:
    case MP_DT_BOOL: ARG_LOOP(uint8_t, in->data, y, wide, outer, len, inner, mx); break;
    case MP_DT_INT16: ARG_LOOP(int16_t, in->data, y, wide, outer, len, inner, mx); break;
    case MP_DT_INT32: ARG_LOOP(int32_t, in->data, y, wide, outer, len, inner, mx); break;
    default: ARG_LOOP(int64_t, in->data, y, wide, outer, len, inner, mx); break;
    }
    return MP_OK;
}

/* ---- L2_NORMALIZATION ------------------------------------------------------------------- */

/* L2_NORMALIZATION over the last axis, float32, as TensorFlow Lite's reference
 * L2Normalization: per row, a float sum of squares in order, norm = max(sqrt(sum), 1e-6)
 * (the epsilon bounds the norm, not the squared sum), each element divided by it. Fused
 * activations other than NONE are refused, as TensorFlow Lite does.
 * int8 / uint8 (l2norm.cc: the output's scale exactly 1/128, zero point 0 for int8, 128 for
 * uint8; the input's parameters any): per row the int32 sum of squares of q - zp_in, its
 * inverse square root as GetInvSqrtQuantizedMultiplierExp's multiplier and shift (quant_math),
 * then each centred value scaled by it, bit for bit with TensorFlow Lite's kernels: int8
 * (reference_integer_ops) MultiplyByQuantizedMultiplier(q - zp_in, multiplier, shift + 7),
 * uint8 (reference_ops) 128 + MultiplyByQuantizedMultiplierSmallerThanOneExp(128 (q - zp_in),
 * multiplier, shift), each saturated. A row of zeros gives the zero point. */
static mp_status l2norm_check_q8(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is %s",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_tname(in),
                            mp_dtype_name(in->dtype));
    float si, so;
    int32_t zi, zo;
    mp_status st = mp_node_qparams(n, in, &si, &zi);
    if (st != MP_OK || (st = mp_node_qparams(n, out, &so, &zo)) != MP_OK)
        return st;
    const int32_t want_zo = in->dtype == MP_DT_UINT8 ? 128 : 0;
    if ((double)so != 1.0 / 128.0 || zo != want_zo)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "%s output '%s' has scale %g and zero point %d (TensorFlow Lite's "
                            "quantized L2_NORMALIZATION produces scale 1/128, zero point %d)",
                            mp_dtype_name(out->dtype), mp_tname(out), (double)so, (int)zo,
                            (int)want_zo);
    return MP_OK;
}

static mp_status l2norm_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    const mp_dtype dt = st == MP_OK ? n->in[0]->dtype : MP_DT_FLOAT32;
    if (st == MP_OK && dt != MP_DT_FLOAT32 && !mp_dtype_is_q8(dt))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32, i8, "
                            "u8)", mp_tname(n->in[0]), mp_dtype_name(dt));
    if (st == MP_OK)
        st = mp_dtype_is_q8(dt) ? l2norm_check_q8(n) : mp_node_check_f32_io(n);
    if (st != MP_OK)
        return st;
    if (n->opt->activation != MP_ACT_NONE)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fused activation %d (only NONE is defined)",
                            n->opt->activation);
    const mp_tensor *in = n->in[0];
    if (in->rank < 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' is a scalar", mp_tname(in));
    return mp_node_set_output_shape(n, in->rank, in->dims);
}

/* One row of a quantized L2_NORMALIZATION (T int8_t or uint8_t). */
#define L2NORM_Q8_ROW(T, x, y, depth, zi)                                                      \
    do {                                                                                       \
        const T *x_ = (const T *)(x);                                                          \
        T *y_ = (T *)(y);                                                                      \
        uint32_t acc_ = 0; /* wraps as TensorFlow Lite's int32 on a row beyond 2^15 */         \
        for (size_t c_ = 0; c_ < (depth); c_++) {                                              \
            const int32_t d_ = (int32_t)x_[c_] - (zi);                                         \
            acc_ += (uint32_t)(d_ * d_);                                                       \
        }                                                                                      \
        int32_t m_;                                                                            \
        int s_;                                                                                \
        mp_inv_sqrt_quantized_multiplier((int32_t)acc_, &m_, &s_);                             \
        for (size_t c_ = 0; c_ < (depth); c_++) {                                              \
            const int32_t d_ = (int32_t)x_[c_] - (zi);                                         \
            int32_t v_ = sizeof(T) == 1 && (T)-1 < 0                                           \
                             ? mp_multiply_by_quantized_multiplier(d_, m_, s_ + 7)             \
                             : 128 + mp_multiply_by_quantized_multiplier(128 * d_, m_, s_);    \
            const int32_t lo_ = (T)-1 < 0 ? -128 : 0, hi_ = (T)-1 < 0 ? 127 : 255;             \
            y_[c_] = (T)(v_ < lo_ ? lo_ : (v_ > hi_ ? hi_ : v_));                              \
        }                                                                                      \
    } while (0)

static mp_status l2norm_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (!mp_tensor_same_shape(in, out))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not have the shape of '%s'",
                            mp_tname(out), mp_tname(in));
    size_t depth = (size_t)in->dims[in->rank - 1];
    size_t rows = depth ? mp_tensor_elements(in) / depth : 0;
    if (mp_dtype_is_q8(in->dtype)) {
        float si;
        int32_t zi;
        mp_status st = mp_node_qparams(n, in, &si, &zi);
        if (st != MP_OK)
            return st;
        const uint8_t *x = in->data;
        uint8_t *y = out->data;
        for (size_t r = 0; r < rows; r++, x += depth, y += depth) {
            if (in->dtype == MP_DT_INT8)
                L2NORM_Q8_ROW(int8_t, x, y, depth, zi);
            else
                L2NORM_Q8_ROW(uint8_t, x, y, depth, zi);
        }
        return MP_OK;
    }
    const float *x = in->data;
    float *y = out->data;
    for (size_t r = 0; r < rows; r++, x += depth, y += depth) {
        float sq = 0.0f;
        for (size_t c = 0; c < depth; c++)
            sq += x[c] * x[c];
        float norm = sqrtf(sq);
        norm = norm > 1e-6f ? norm : 1e-6f;
        for (size_t c = 0; c < depth; c++)
            y[c] = x[c] / norm;
    }
    return MP_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

#define REDUCER(code)                                                                          \
    {.opcode = (code), .min_inputs = 2, .max_inputs = 2, .n_outputs = 1, .infer = mean_infer, \
     .prepare = mean_prepare, .run = mean_run, .release = mean_release}

const mp_kernel mp_kernels_reduce[] = {
    REDUCER(MP_OP_MEAN),
    REDUCER(MP_OP_SUM),
    REDUCER(MP_OP_REDUCE_MAX),
    REDUCER(MP_OP_REDUCE_MIN),
    REDUCER(MP_OP_REDUCE_PROD),
    REDUCER(MP_OP_REDUCE_ANY),
    REDUCER(MP_OP_REDUCE_ALL),
    {.opcode = MP_OP_ARG_MAX, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = arg_infer, .run = arg_run},
    {.opcode = MP_OP_ARG_MIN, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1,
     .infer = arg_infer, .run = arg_run},
    {.opcode = MP_OP_L2_NORMALIZATION, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = l2norm_infer, .run = l2norm_run},
    {.opcode = -1},
};
