/* TensorFlow Lite's fixed-point requantization and the quantize / dequantize of one value
 * (see quant_math.h). Written from the documented semantics of TensorFlow Lite's
 * quantization_util.cc, kernels/internal/common.h and gemmlowp's fixedpoint.h, with every
 * shift and overflow made defined in C. */
#include "engine/kernels/quant_math.h"

#include <math.h>

bool mp_quantize_multiplier(double real, int32_t *quantized_multiplier, int *shift)
{
    *quantized_multiplier = 0;
    *shift = 0;
    if (!isfinite(real))
        return false;
    if (real == 0.0)
        return true;
    int e;
    double q = frexp(real, &e); /* real = q * 2^e, 0.5 <= |q| < 1 */
    int64_t fixed = (int64_t)round(q * 2147483648.0);
    if (fixed == INT64_C(2147483648)) { /* q rounded up to 1.0: 2^30 * 2^(e + 1 - 31) */
        fixed /= 2;
        e++;
    }
    if (e < -31) /* every bit would be shifted out: flush to zero */
        return true;
    *quantized_multiplier = (int32_t)fixed;
    *shift = e;
    return true;
}

int32_t mp_sat_rounding_doubling_high_mul(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * b;
    int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : 1 - (INT64_C(1) << 30);
    /* C division truncates toward zero, as gemmlowp relies on. */
    return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

/* floor(x / 2^e) without shifting a negative value (implementation-defined in C). */
static int64_t floor_shift(int64_t x, int e)
{
    return x >= 0 ? x >> e : ~(~x >> e);
}

int32_t mp_rounding_divide_by_pot(int32_t x, int exponent)
{
    if (exponent <= 0)
        return x;
    if (exponent > 62)
        exponent = 62;
    int64_t mask = (INT64_C(1) << exponent) - 1;
    int64_t remainder = (int64_t)x & mask; /* x - floor(x / 2^e) * 2^e, in [0, mask] */
    int64_t threshold = (mask >> 1) + (x < 0);
    return (int32_t)(floor_shift(x, exponent) + (remainder > threshold));
}

/* The int32 whose two's-complement bits are u. */
static int32_t wrap_i32(uint32_t u)
{
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) + INT32_MIN;
}

int32_t mp_multiply_by_quantized_multiplier(int32_t x, int32_t quantized_multiplier, int shift)
{
    int left = shift > 0 ? shift : 0;
    int right = shift > 0 ? 0 : -shift;
    int32_t shifted = left >= 32 ? 0 : wrap_i32((uint32_t)x << left);
    return mp_rounding_divide_by_pot(mp_sat_rounding_doubling_high_mul(shifted, quantized_multiplier),
                                     right);
}

int32_t mp_multiply_by_quantized_multiplier_i64(int64_t x, int32_t quantized_multiplier,
                                                int shift)
{
    if (shift > 14)
        shift = 14;
    int64_t reduced = quantized_multiplier < 0x7FFF0000
                          ? floor_shift((int64_t)quantized_multiplier + (1 << 15), 16)
                          : 0x7FFF;
    int total = 15 - shift; /* 1 .. 46 for shifts from -31 */
    if (total > 62)
        total = 62;
    /* x * reduced + 2^(total - 1), wrapping in 64 bits as two's complement */
    uint64_t u = (uint64_t)x * (uint64_t)reduced + ((uint64_t)1 << (total - 1));
    int64_t v = u <= (uint64_t)INT64_MAX ? (int64_t)u : (int64_t)(u - ((uint64_t)1 << 63)) + INT64_MIN;
    return wrap_i32((uint32_t)(uint64_t)floor_shift(v, total));
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT: a left shift by e > 0 saturating beyond
 * +-(2^(31 - e) - 1) (both sides symmetric, as there), a rounding divide for e < 0. */
static int32_t sat_rounding_mul_pot(int32_t x, int e)
{
    if (e <= 0)
        return mp_rounding_divide_by_pot(x, -e);
    const int32_t threshold = (int32_t)((1u << (31 - e)) - 1);
    if (x > threshold)
        return INT32_MAX;
    if (x < -threshold)
        return INT32_MIN;
    return wrap_i32((uint32_t)x << e);
}

void mp_inv_sqrt_quantized_multiplier(int32_t x, int32_t *multiplier, int *shift)
{
    if (x <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int right = 11;
    while (x >= (1 << 29)) {
        x /= 4;
        right++;
    }
    const int pairs = (__builtin_clz((uint32_t)x) - 1) / 2 - 1;
    right -= pairs;
    x = wrap_i32((uint32_t)x << (2 * pairs));
    /* Q3.28 values: one is 2^28 */
    const int32_t half_x = mp_rounding_divide_by_pot(x >> 1, 1);
    const int32_t three_halves = (1 << 28) + (1 << 27);
    int32_t y = 1 << 28;
    for (int i = 0; i < 5; i++) {
        const int32_t y3 = sat_rounding_mul_pot(
            mp_sat_rounding_doubling_high_mul(mp_sat_rounding_doubling_high_mul(y, y), y), 6);
        const int32_t d = wrap_i32((uint32_t)mp_sat_rounding_doubling_high_mul(three_halves, y) -
                                   (uint32_t)mp_sat_rounding_doubling_high_mul(half_x, y3));
        y = sat_rounding_mul_pot(d, 3);
    }
    y = mp_sat_rounding_doubling_high_mul(y, 1518500250); /* sqrt(2) / 2 in Q0.31 */
    if (right < 0) {
        y = wrap_i32((uint32_t)y << -right);
        right = 0;
    }
    *multiplier = y;
    *shift = -right;
}

int32_t mp_one_over_one_plus_x(int32_t a)
{
    /* half the denominator (a + one) / 2, rounded away from zero (RoundingHalfSum) */
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    /* Q2.29: 48/17 - 32/17 * d, then three steps x += x * (1 - d * x) */
    int32_t x = wrap_i32((uint32_t)1515870810 +
                         (uint32_t)mp_sat_rounding_doubling_high_mul(half_denominator,
                                                                     -1010580540));
    for (int i = 0; i < 3; i++) {
        const int32_t one_minus_dx = wrap_i32(
            (1u << 29) - (uint32_t)mp_sat_rounding_doubling_high_mul(half_denominator, x));
        x = wrap_i32((uint32_t)x + (uint32_t)sat_rounding_mul_pot(
                                       mp_sat_rounding_doubling_high_mul(x, one_minus_dx), 2));
    }
    return sat_rounding_mul_pot(x, 1); /* x / 2 in Q1.30, rescaled to Q0.31 */
}

int32_t mp_get_reciprocal(int32_t x, int x_integer_digits, int *num_bits_over_unit)
{
    const int headroom_plus_one = x ? __builtin_clz((uint32_t)x) : 32;
    *num_bits_over_unit = x_integer_digits - headroom_plus_one;
    const uint32_t normalized = headroom_plus_one < 32 ? (uint32_t)x << headroom_plus_one : 0;
    return mp_one_over_one_plus_x(wrap_i32(normalized - (1u << 31)));
}

bool mp_quant_dtype_range(mp_dtype dt, int32_t *lo, int32_t *hi)
{
    switch (dt) {
    case MP_DT_UINT8: *lo = 0; *hi = 255; return true;
    case MP_DT_INT8: *lo = -128; *hi = 127; return true;
    case MP_DT_INT4: *lo = -8; *hi = 7; return true;
    case MP_DT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case MP_DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    default: return false;
    }
}

static int32_t clamp_i64(int64_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

int32_t mp_quantize_f32(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi)
{
    float r = roundf(x / scale);
    if (isnan(r))
        return clamp_i64(zero_point, lo, hi);
    double v = (double)r + (double)zero_point;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int32_t)v; /* an integer inside [lo, hi] */
}

float mp_dequantize_f32(int32_t q, float scale, int32_t zero_point)
{
    return (float)((double)scale * (double)((int64_t)q - zero_point));
}

bool mp_requant_init(mp_requant *r, float in_scale, int32_t in_zero_point, float out_scale,
                     int32_t out_zero_point, int32_t lo, int32_t hi)
{
    r->in_zero_point = in_zero_point;
    r->out_zero_point = out_zero_point;
    r->lo = lo;
    r->hi = hi;
    return mp_quantize_multiplier((double)in_scale / (double)out_scale, &r->multiplier, &r->shift);
}

int32_t mp_requant_apply(const mp_requant *r, int32_t q)
{
    /* The difference fits: both sides are values of the (at most 16-bit) quantized types in
     * practice; it is formed in 64 bits and wrapped like TensorFlow Lite's int32 would. */
    int32_t centred = wrap_i32((uint32_t)((int64_t)q - r->in_zero_point));
    int64_t v = (int64_t)mp_multiply_by_quantized_multiplier(centred, r->multiplier, r->shift) +
                r->out_zero_point;
    return clamp_i64(v, r->lo, r->hi);
}
