/* Kernels: dtype conversions (CAST, DEQUANTIZE, QUANTIZE).
 *
 * CAST converts between float32, int32, int64, uint8, int8, int16 and bool like TFLite's
 * static_cast: float -> integer truncates toward zero, anything -> bool is x != 0, bool ->
 * anything is 0 or 1. Where C leaves a conversion undefined (a float outside the integer
 * range, NaN) we saturate (NaN -> 0) instead of reading garbage. float32 -> int32 and
 * float32 -> int16 clamp first, as the newest cast.cc's copyCast does, to the float next to
 * the type's bounds toward zero (nextafterf): int32 within +-2147483520, int16 within
 * -32767..32766 after truncation; float -> int64 saturates to that type; float -> 8-bit goes
 * through int32 and keeps the low bits, as TFLite compiled for x86 does for values within
 * int32.
 * float16, float64, uint16, uint32 and complex64 (cast.cc's other dtypes) go through one
 * element loop (cast_generic): an integer is read as int64, a float16 / float32 / float64 as
 * the double holding it exactly, a complex64 as its real part (as cast.cc's copyCast), and
 * written as C converts it: to float32 directly from the int64 or double (one rounding), to
 * float16 through float32 as cast.cc (fp16_ieee_from_fp32_value, rounding to nearest even,
 * overflow to infinity), to complex64 as (value, 0) (a complex64 input copied whole), to an
 * integer as above (truncation, saturated where C leaves it undefined), to bool as x != 0.
 *
 * DEQUANTIZE turns int8 / uint8 / int16 (per-tensor or per-channel scale and zero point) and
 * float16 into float32: real = scale * (q - zero_point). float16 and per-tensor 8-bit
 * activations run on XNNPACK's convert operators (vectorized, threaded); int16, per-channel
 * and constant inputs in plain C. Both round once, from the exact product, so they give
 * TensorFlow Lite's (float)((double)scale * (q - zero_point)) bit for bit.
 *
 * QUANTIZE, in plain C as TensorFlow Lite's reference kernels (quant_math.h): float32 to
 * int8 / uint8 / int16, per tensor or per channel, round(x / scale) + zero_point saturated;
 * int8 / uint8 / int16 to any of them (requantization) with the integer multiplier and shift
 * of in_scale / out_scale.
 *
 * DENSIFY (TensorFlow Lite's densify.cc) turns a sparse constant into the dense tensor. The
 * reader already expands every sparse constant at load (model/tflite_sparsity.c), so here the
 * input is that dense constant and the output a copy of it: same dtype (float32, float16,
 * int8 or any fixed-size dtype), same shape; folded once at prepare, as its input is
 * constant. An input that is not a constant is refused, as TensorFlow Lite does. */
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_math.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <xnnpack.h>

static mp_status check_io(mp_node *n)
{
    if (n->n_in != 1 || !n->in[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 input, has %d", n->n_in);
    if (n->n_out != 1 || !n->out[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 output, has %d", n->n_out);
    return MP_OK;
}

/* The output takes the input's shape (infer). */
static mp_status same_shape(mp_node *n)
{
    if (!mp_tensor_set_shape(n->out[0], n->in[0]->rank, n->in[0]->dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(n->out[0]));
    return MP_OK;
}

/* The output has as many elements as the input, *count (run). */
static mp_status same_count(mp_node *n, size_t *count)
{
    *count = mp_tensor_elements(n->in[0]);
    if (*count != mp_tensor_elements(n->out[0]))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' must have as many elements as '%s'",
                            mp_tname(n->out[0]), mp_tname(n->in[0]));
    return MP_OK;
}

/* ---- CAST ------------------------------------------------------------------------------- */

/* The dtypes of the loops below (cast_convert). */
static bool cast_dtype_ok(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_FLOAT32: case MP_DT_INT32: case MP_DT_INT64: case MP_DT_UINT8:
    case MP_DT_INT8: case MP_DT_INT16: case MP_DT_BOOL:
        return true;
    default:
        return false;
    }
}

/* The further dtypes of cast.cc, through cast_generic. */
static bool cast_dtype_generic(mp_dtype dt)
{
    return dt == MP_DT_FLOAT16 || dt == MP_DT_FLOAT64 || dt == MP_DT_UINT16 ||
           dt == MP_DT_UINT32 || dt == MP_DT_COMPLEX64;
}

static mp_status cast_infer(mp_node *n)
{
    mp_status st = check_io(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if ((!cast_dtype_ok(in->dtype) && !cast_dtype_generic(in->dtype)) ||
        (!cast_dtype_ok(out->dtype) && !cast_dtype_generic(out->dtype)))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "cannot cast '%s' %s to '%s' %s (supported: f32, f16, f64, i32, i64, "
                            "u8, i8, i16, u16, u32, bool, c64)", mp_tname(in),
                            mp_dtype_name(in->dtype), mp_tname(out), mp_dtype_name(out->dtype));
    return same_shape(n);
}

/* float or double -> int32 / int64 with saturation; NaN -> 0. The bounds are powers of two,
 * exact in both, so the comparisons are exact (a float argument is widened exactly). */
static inline int32_t f2i32(double x)
{
    if (x != x)
        return 0;
    if (x >= 2147483648.0)
        return INT32_MAX;
    if (x <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)x;
}

/* float32 -> int32 / int16 as cast.cc's copyCast: clamped to [nextafterf(min, 0),
 * nextafterf(max, 0)] (+-2147483520.0f; -32767.998046875f and 32766.998046875f), then
 * truncated; NaN -> 0 (cast.cc leaves it to the C++ conversion, undefined). */
static inline int32_t f2i32_clamped(float x)
{
    if (x != x)
        return 0;
    const float hi = 2147483520.0f, lo = -2147483520.0f;
    return (int32_t)(x > hi ? hi : (x < lo ? lo : x));
}

static inline int16_t f2i16_clamped(float x)
{
    if (x != x)
        return 0;
    const float hi = 32766.998046875f, lo = -32767.998046875f;
    return (int16_t)(x > hi ? hi : (x < lo ? lo : x));
}

static inline int64_t f2i64(double x)
{
    if (x != x)
        return 0;
    if (x >= 9223372036854775808.0)
        return INT64_MAX;
    if (x <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)x;
}

/* One loop per (input, output) pair; EXPR converts the element x. */
#define CAST_LOOP(TI, TO, EXPR)                                                                \
    do {                                                                                       \
        const TI *s_ = (const TI *)src;                                                        \
        TO *d_ = (TO *)dst;                                                                    \
        for (size_t i_ = 0; i_ < count; i_++) {                                                \
            TI x = s_[i_];                                                                     \
            d_[i_] = (TO)(EXPR);                                                               \
        }                                                                                      \
    } while (0)

/* From an integer type TI (bool is stored as one byte, read as uint8_t and normalized). */
#define CAST_FROM_INT(TI, NORM)                                                                \
    switch (to) {                                                                              \
    case MP_DT_FLOAT32: CAST_LOOP(TI, float, (float)(NORM)); break;                            \
    case MP_DT_INT32: CAST_LOOP(TI, int32_t, (NORM)); break;                                   \
    case MP_DT_INT64: CAST_LOOP(TI, int64_t, (NORM)); break;                                   \
    case MP_DT_UINT8: CAST_LOOP(TI, uint8_t, (NORM)); break;                                   \
    case MP_DT_INT8: CAST_LOOP(TI, int8_t, (NORM)); break;                                     \
    case MP_DT_INT16: CAST_LOOP(TI, int16_t, (NORM)); break;                                   \
    case MP_DT_BOOL: CAST_LOOP(TI, uint8_t, x != 0); break;                                    \
    default: break;                                                                            \
    }

static void cast_convert(mp_dtype from, mp_dtype to, const void *src, void *dst, size_t count)
{
    switch (from) {
    case MP_DT_FLOAT32:
        switch (to) {
        case MP_DT_INT32: CAST_LOOP(float, int32_t, f2i32_clamped(x)); break;
        case MP_DT_INT64: CAST_LOOP(float, int64_t, f2i64(x)); break;
        case MP_DT_UINT8: CAST_LOOP(float, uint8_t, f2i32(x)); break;
        case MP_DT_INT8: CAST_LOOP(float, int8_t, f2i32(x)); break;
        case MP_DT_INT16: CAST_LOOP(float, int16_t, f2i16_clamped(x)); break;
        case MP_DT_BOOL: CAST_LOOP(float, uint8_t, x != 0.0f); break;
        default: break;
        }
        break;
    case MP_DT_INT32: CAST_FROM_INT(int32_t, x) break;
    case MP_DT_INT64: CAST_FROM_INT(int64_t, x) break;
    case MP_DT_UINT8: CAST_FROM_INT(uint8_t, x) break;
    case MP_DT_INT8: CAST_FROM_INT(int8_t, x) break;
    case MP_DT_INT16: CAST_FROM_INT(int16_t, x) break;
    case MP_DT_BOOL: CAST_FROM_INT(uint8_t, x != 0) break;
    default: break;
    }
}

uint16_t mp_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return sign | 0x7e00u;
    if (ax >= 0x477ff000u) /* 65520 and above (a tie to the odd 65504 goes up) */
        return sign | 0x7c00u;
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal half, in units of 2^-24 */
        float a;
        memcpy(&a, &ax, sizeof a);
        return sign | (uint16_t)nearbyintf(a * 16777216.0f);
    }
    uint32_t h = ((((ax >> 23) - 127u + 15u)) << 10) | ((ax & 0x7fffffu) >> 13);
    const uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is the right result */
    return sign | (uint16_t)h;
}

/* One element read for cast_generic: an integer (int64) or a float value (double, exact). */
typedef struct cast_val {
    bool is_float;
    int64_t i;
    double d;
} cast_val;

static cast_val cast_read(mp_dtype dt, const void *src, size_t i)
{
    cast_val v = {false, 0, 0.0};
    switch (dt) {
    case MP_DT_FLOAT32: v.is_float = true, v.d = ((const float *)src)[i]; break;
    case MP_DT_FLOAT16:
        v.is_float = true, v.d = mp_half_to_float(((const uint16_t *)src)[i]);
        break;
    case MP_DT_FLOAT64: v.is_float = true, v.d = ((const double *)src)[i]; break;
    case MP_DT_COMPLEX64: v.is_float = true, v.d = ((const float *)src)[2 * i]; break;
    case MP_DT_INT32: v.i = ((const int32_t *)src)[i]; break;
    case MP_DT_INT64: v.i = ((const int64_t *)src)[i]; break;
    case MP_DT_UINT8: v.i = ((const uint8_t *)src)[i]; break;
    case MP_DT_INT8: v.i = ((const int8_t *)src)[i]; break;
    case MP_DT_INT16: v.i = ((const int16_t *)src)[i]; break;
    case MP_DT_UINT16: v.i = ((const uint16_t *)src)[i]; break;
    case MP_DT_UINT32: v.i = ((const uint32_t *)src)[i]; break;
    case MP_DT_BOOL: v.i = ((const uint8_t *)src)[i] != 0; break;
    default: break;
    }
    return v;
}

/* The conversions with float16, float64, uint16, uint32 or complex64 on either side. */
static void cast_generic(mp_dtype from, mp_dtype to, const void *src, void *dst, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const cast_val v = cast_read(from, src, i);
        const float f = v.is_float ? (float)v.d : (float)v.i; /* one rounding either way */
        const int32_t i32 = v.is_float ? f2i32(v.d) : (int32_t)v.i;
        switch (to) {
        case MP_DT_FLOAT32: ((float *)dst)[i] = f; break;
        case MP_DT_FLOAT16: ((uint16_t *)dst)[i] = mp_float_to_half(f); break;
        case MP_DT_FLOAT64: ((double *)dst)[i] = v.is_float ? v.d : (double)v.i; break;
        case MP_DT_COMPLEX64:
            ((float *)dst)[2 * i] = f;
            ((float *)dst)[2 * i + 1] =
                from == MP_DT_COMPLEX64 ? ((const float *)src)[2 * i + 1] : 0.0f;
            break;
        case MP_DT_INT64: ((int64_t *)dst)[i] = v.is_float ? f2i64(v.d) : v.i; break;
        case MP_DT_UINT32:
            ((uint32_t *)dst)[i] = (uint32_t)(v.is_float ? f2i64(v.d) : v.i);
            break;
        case MP_DT_INT32: ((int32_t *)dst)[i] = i32; break;
        case MP_DT_INT16: ((int16_t *)dst)[i] = (int16_t)i32; break;
        case MP_DT_UINT16: ((uint16_t *)dst)[i] = (uint16_t)i32; break;
        case MP_DT_INT8: ((int8_t *)dst)[i] = (int8_t)i32; break;
        case MP_DT_UINT8: ((uint8_t *)dst)[i] = (uint8_t)i32; break;
        case MP_DT_BOOL: ((uint8_t *)dst)[i] = v.is_float ? v.d != 0.0 : v.i != 0; break;
        default: break;
        }
    }
}

static mp_status cast_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    size_t count;
    mp_status st = same_count(n, &count);
    if (st != MP_OK)
        return st;
    if (count == 0)
        return MP_OK;
    if (in->dtype == out->dtype && in->dtype != MP_DT_BOOL) {
        if (in->data != out->data)
            memcpy(out->data, in->data, in->bytes);
        return MP_OK;
    }
    if (cast_dtype_ok(in->dtype) && cast_dtype_ok(out->dtype))
        cast_convert(in->dtype, out->dtype, in->data, out->data, count);
    else
        cast_generic(in->dtype, out->dtype, in->data, out->data, count);
    return MP_OK;
}

/* ---- DEQUANTIZE ------------------------------------------------------------------------- */

typedef struct dq_state {
    xnn_operator_t op;   /* NULL: plain C */
    mp_dtype op_dtype;   /* what the operator was created for */
    float op_scale;
    int32_t op_zp;
} dq_state;

static mp_status dq_infer(mp_node *n)
{
    mp_status st = check_io(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' must be f32, is %s", mp_tname(out),
                            mp_dtype_name(out->dtype));
    const mp_quant *q = &in->info->quant;
    switch (in->dtype) {
    case MP_DT_FLOAT16:
        break;
    case MP_DT_INT8: case MP_DT_UINT8: case MP_DT_INT16:
        if (q->count < 1 || !q->scale)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "input '%s' is %s without quantization parameters", mp_tname(in),
                                mp_dtype_name(in->dtype));
        if (q->count > 1) {
            int32_t d = q->quantized_dimension;
            if (d < 0 || d >= in->rank || in->dims[d] != q->count)
                return mp_node_fail(n, MP_ERR_SHAPE,
                                    "input '%s': %d scales do not match dimension %d", mp_tname(in),
                                    q->count, d);
        }
        break;
    default:
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "cannot dequantize '%s' of dtype %s (supported: i8, u8, i16, f16)",
                            mp_tname(in), mp_dtype_name(in->dtype));
    }
    return same_shape(n);
}

static mp_status dq_prepare(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    dq_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    const mp_quant *q = &in->info->quant;
    float scale = 1.0f;
    int32_t zp = 0;
    bool use_xnn = in->dtype == MP_DT_FLOAT16;
    if ((in->dtype == MP_DT_INT8 || in->dtype == MP_DT_UINT8) && q->count == 1) {
        scale = q->scale[0];
        int64_t z = q->zero_point ? q->zero_point[0] : 0;
        bool zp_fits = in->dtype == MP_DT_INT8 ? (z >= INT8_MIN && z <= INT8_MAX)
                                               : (z >= 0 && z <= UINT8_MAX);
        /* XNNPACK wants a positive normal scale and an in-range zero point */
        use_xnn = zp_fits && isnormal(scale) && scale > 0.0f;
        zp = (int32_t)z;
    }
    size_t count = mp_tensor_elements(in);
    /* Constants (float16 weights, mostly) are converted once, and XNNPACK may read past
     * the end of its input, which a mapped file does not promise: plain C for them. */
    if (!use_xnn || count == 0 || in->is_const) {
        mp_xnn_delete(&s->op);
        return MP_OK;
    }
    if (s->op && (s->op_dtype != in->dtype || s->op_scale != scale || s->op_zp != zp))
        mp_xnn_delete(&s->op);
    enum xnn_status xs = xnn_status_success;
    if (!s->op) {
        /* one channel, one "batch" row per element: the shape can then change with a setup
         * only, and XNNPACK treats the contiguous rows as one vector */
        if (in->dtype == MP_DT_FLOAT16)
            xs = xnn_create_convert_nc_f16_f32(1, 1, 1, 0, &s->op);
        else if (in->dtype == MP_DT_INT8)
            xs = xnn_create_convert_nc_qs8_f32(1, 1, 1, scale, (int8_t)zp, 0, &s->op);
        else
            xs = xnn_create_convert_nc_qu8_f32(1, 1, 1, scale, (uint8_t)zp, 0, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "convert create");
        }
        s->op_dtype = in->dtype;
        s->op_scale = scale;
        s->op_zp = zp;
    }
    if (in->dtype == MP_DT_FLOAT16)
        xs = xnn_setup_convert_nc_f16_f32(s->op, count, in->data, out->data, n->pool);
    else if (in->dtype == MP_DT_INT8)
        xs = xnn_setup_convert_nc_qs8_f32(s->op, count, in->data, out->data, n->pool);
    else
        xs = xnn_setup_convert_nc_qu8_f32(s->op, count, in->data, out->data, n->pool);
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "convert setup");
    return MP_OK;
}

/* IEEE half -> float by bits (subnormals through the float unit). */
static inline float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        float f = (float)man * (1.0f / 16777216.0f); /* man * 2^-24 */
        return sign ? -f : f;
    }
    if (exp == 31)
        bits = sign | 0x7f800000u | (man << 13);
    else
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Plain C dequantization: per channel along quantized_dimension (outer x channels x inner
 * blocks, no division per element), or one block for per-tensor parameters. */
#define DQ_LOOP(T)                                                                             \
    do {                                                                                       \
        const T *x = (const T *)in->data;                                                      \
        for (size_t o = 0; o < outer; o++)                                                     \
            for (size_t c = 0; c < channels; c++) {                                            \
                float sc = q->scale[c];                                                        \
                int32_t z = q->zero_point ? (int32_t)q->zero_point[c] : 0;                     \
                for (size_t i = 0; i < inner; i++, x++, y++)                                   \
                    *y = sc * (float)((int32_t)*x - z);                                        \
            }                                                                                  \
    } while (0)

static mp_status dq_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    dq_state *s = n->state;
    size_t count;
    mp_status st = same_count(n, &count);
    if (st != MP_OK)
        return st;
    if (count == 0)
        return MP_OK;
    if (s && s->op) {
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        if (xs != xnn_status_success)
            return mp_node_xnn_fail(n, xs, "convert run");
        return MP_OK;
    }
    float *y = out->data;
    if (in->dtype == MP_DT_FLOAT16) {
        const uint16_t *h = in->data;
        for (size_t i = 0; i < count; i++)
            y[i] = half_to_float(h[i]);
        return MP_OK;
    }
    const mp_quant *q = &in->info->quant;
    size_t outer = 1, channels = 1, inner = count;
    if (q->count > 1) {
        int32_t d = q->quantized_dimension;
        if (d < 0 || d >= in->rank || in->dims[d] != q->count)
            return mp_node_fail(n, MP_ERR_SHAPE, "input '%s': %d scales do not match dimension %d",
                                mp_tname(in), q->count, d);
        channels = (size_t)q->count;
        inner = 1;
        for (int32_t i = 0; i < d; i++)
            outer *= (size_t)in->dims[i];
        for (int32_t i = d + 1; i < in->rank; i++)
            inner *= (size_t)in->dims[i];
    }
    switch (in->dtype) {
    case MP_DT_INT8: DQ_LOOP(int8_t); break;
    case MP_DT_UINT8: DQ_LOOP(uint8_t); break;
    case MP_DT_INT16: DQ_LOOP(int16_t); break;
    default:
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "cannot dequantize %s",
                            mp_dtype_name(in->dtype));
    }
    return MP_OK;
}

static void dq_release(mp_node *n)
{
    dq_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

/* ---- QUANTIZE --------------------------------------------------------------------------- */

static bool quantized_8_16(mp_dtype dt)
{
    return dt == MP_DT_INT8 || dt == MP_DT_UINT8 || dt == MP_DT_INT16;
}

/* The one (scale, zero point) of a per-tensor quantized tensor, its zero point inside the
 * dtype's range [lo, hi]. */
static mp_status q_params(mp_node *n, const mp_tensor *t, float *scale, int32_t *zp, int32_t *lo,
                          int32_t *hi)
{
    const mp_quant *q = &t->info->quant;
    mp_quant_dtype_range(t->dtype, lo, hi);
    int64_t z = q->zero_point ? q->zero_point[0] : 0;
    if (q->count != 1 || !q->scale)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "'%s' (%s) needs one scale and zero point, has %d",
                            mp_tname(t), mp_dtype_name(t->dtype), q->count);
    if (!(q->scale[0] > 0.0f) || !isfinite(q->scale[0]) || z < *lo || z > *hi)
        return mp_node_fail(n, MP_ERR_FORMAT, "'%s' has scale %g and zero point %lld, invalid for %s",
                            mp_tname(t), (double)q->scale[0], (long long)z, mp_dtype_name(t->dtype));
    *scale = q->scale[0];
    *zp = (int32_t)z;
    return MP_OK;
}

static mp_status qz_infer(mp_node *n)
{
    mp_status st = check_io(n);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if ((in->dtype != MP_DT_FLOAT32 && !quantized_8_16(in->dtype)) || !quantized_8_16(out->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "cannot quantize '%s' %s to '%s' %s (supported: f32, i8, u8, i16 to i8, "
                            "u8, i16)", mp_tname(in), mp_dtype_name(in->dtype), mp_tname(out),
                            mp_dtype_name(out->dtype));
    const mp_quant *oq = &out->info->quant;
    float scale, in_scale;
    int32_t zp, in_zp, lo, hi;
    if (in->dtype == MP_DT_FLOAT32 && oq->count > 1) {
        /* per channel along quantized_dimension: every channel's parameters checked here */
        int32_t d = oq->quantized_dimension;
        if (d < 0 || d >= in->rank || in->dims[d] != oq->count || !oq->scale)
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s': %d scales do not match dimension %d of '%s'",
                                mp_tname(out), oq->count, d, mp_tname(in));
        mp_quant_dtype_range(out->dtype, &lo, &hi);
        for (int32_t c = 0; c < oq->count; c++) {
            int64_t z = oq->zero_point ? oq->zero_point[c] : 0;
            if (!(oq->scale[c] > 0.0f) || !isfinite(oq->scale[c]) || z < lo || z > hi)
                return mp_node_fail(n, MP_ERR_FORMAT, "output '%s' channel %d has scale %g and zero point %lld, invalid for %s",
                                    mp_tname(out), c, (double)oq->scale[c], (long long)z,
                                    mp_dtype_name(out->dtype));
        }
    } else if ((st = q_params(n, out, &scale, &zp, &lo, &hi)) != MP_OK) {
        return st;
    }
    if (in->dtype != MP_DT_FLOAT32) {
        int32_t ilo, ihi;
        mp_requant r;
        if ((st = q_params(n, in, &in_scale, &in_zp, &ilo, &ihi)) != MP_OK)
            return st;
        if (!mp_requant_init(&r, in_scale, in_zp, scale, zp, lo, hi))
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "scale ratio %g / %g of '%s' to '%s' is not finite",
                                (double)in_scale, (double)scale, mp_tname(in), mp_tname(out));
    }
    return same_shape(n);
}

/* float -> TO over `count` elements of one channel (scale, zero point). */
#define QZ_F32_LOOP(TO)                                                                            do {                                                                                               TO *y_ = (TO *)out->data + start;                                                              for (size_t i_ = 0; i_ < len; i_++)                                                                y_[i_] = (TO)mp_quantize_f32(x[start + i_], sc, z, lo, hi);                            } while (0)

/* TI -> TO through the requantization r. */
#define QZ_INT_LOOP(TI, TO)                                                                        do {                                                                                               const TI *x_ = (const TI *)in->data;                                                           TO *y_ = (TO *)out->data;                                                                      for (size_t i_ = 0; i_ < count; i_++)                                                              y_[i_] = (TO)mp_requant_apply(&r, x_[i_]);                                             } while (0)

#define QZ_INT_TO(TI)                                                                              switch (out->dtype) {                                                                          case MP_DT_INT8: QZ_INT_LOOP(TI, int8_t); break;                                               case MP_DT_UINT8: QZ_INT_LOOP(TI, uint8_t); break;                                             default: QZ_INT_LOOP(TI, int16_t); break;                                                      }

static mp_status qz_run(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    size_t count;
    mp_status st = same_count(n, &count);
    if (st != MP_OK)
        return st;
    if (count == 0)
        return MP_OK;
    const mp_quant *oq = &out->info->quant;
    int32_t lo, hi;
    mp_quant_dtype_range(out->dtype, &lo, &hi);
    if (in->dtype == MP_DT_FLOAT32) {
        /* outer x channels x inner blocks; per tensor: one channel, one block */
        size_t outer = 1, channels = 1, inner = count;
        if (oq->count > 1) {
            int32_t d = oq->quantized_dimension;
            channels = (size_t)oq->count;
            inner = 1;
            for (int32_t i = 0; i < d; i++)
                outer *= (size_t)in->dims[i];
            for (int32_t i = d + 1; i < in->rank; i++)
                inner *= (size_t)in->dims[i];
        }
        const float *x = in->data;
        for (size_t o = 0; o < outer; o++)
            for (size_t c = 0; c < channels; c++) {
                float sc = oq->scale[c];
                int32_t z = oq->zero_point ? (int32_t)oq->zero_point[c] : 0;
                size_t start = (o * channels + c) * inner, len = inner;
                switch (out->dtype) {
                case MP_DT_INT8: QZ_F32_LOOP(int8_t); break;
                case MP_DT_UINT8: QZ_F32_LOOP(uint8_t); break;
                default: QZ_F32_LOOP(int16_t); break;
                }
            }
        return MP_OK;
    }
    /* infer checked both sides' parameters and that the multiplier exists */
    const mp_quant *iq = &in->info->quant;
    mp_requant r;
    mp_requant_init(&r, iq->scale[0], iq->zero_point ? (int32_t)iq->zero_point[0] : 0,
                    oq->scale[0], oq->zero_point ? (int32_t)oq->zero_point[0] : 0, lo, hi);
    switch (in->dtype) {
    case MP_DT_INT8: QZ_INT_TO(int8_t) break;
    case MP_DT_UINT8: QZ_INT_TO(uint8_t) break;
    default: QZ_INT_TO(int16_t) break;
    }
    return MP_OK;
}

/* ---- DENSIFY ---------------------------------------------------------------------------- */

static mp_status densify_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st == MP_OK)
        st = mp_node_check_same_dtype(n, n->in[0], n->out[0]);
    if (st != MP_OK)
        return st;
    if (!n->in[0]->is_const)
        return mp_node_fail(n, MP_ERR_FORMAT, "input '%s' is not a constant (DENSIFY expands a "
                            "sparse constant)", mp_tname(n->in[0]));
    return same_shape(n);
}

static mp_status densify_run(mp_node *n)
{
    size_t count;
    mp_status st = same_count(n, &count);
    if (st != MP_OK)
        return st;
    memcpy(n->out[0]->data, n->in[0]->data, count * mp_dtype_size(n->in[0]->dtype));
    return MP_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

const mp_kernel mp_kernels_convert[] = {
    {.opcode = MP_OP_CAST, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = cast_infer, .run = cast_run},
    {.opcode = MP_OP_DEQUANTIZE, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = dq_infer, .prepare = dq_prepare, .run = dq_run, .release = dq_release},
    {.opcode = MP_OP_QUANTIZE, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = qz_infer, .run = qz_run},
    {.opcode = MP_OP_DENSIFY, .min_inputs = 1, .max_inputs = 1, .n_outputs = 1,
     .infer = densify_infer, .run = densify_run},
    {.opcode = -1},
};
