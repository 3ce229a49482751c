/* TensorFlow Lite's integer quantization arithmetic, for the plain-C kernels that compute on
 * quantized tensors (real_value = scale * (q - zero_point)).
 *
 * A real multiplier (a ratio of scales) becomes an int32 Q0.31 multiplier and a power-of-two
 * shift (mp_quantize_multiplier); a value is scaled by it with gemmlowp's rounding doubling
 * high multiply, then a rounding divide by a power of two (mp_multiply_by_quantized_multiplier):
 * two roundings, bit-exact with TensorFlow Lite's reference kernels (the double-rounding
 * build, its default), not a float emulation. Every function is defined for every input
 * (no undefined shifts or overflows): where TensorFlow Lite's C++ relies on two's-complement
 * wrapping, these wrap the same way. */
#ifndef MP_QUANT_MATH_H
#define MP_QUANT_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/model/model.h"

/* A real multiplier as quantized_multiplier * 2^(shift - 31), quantized_multiplier in
 * [2^30, 2^31) (negative multipliers: its negation), as TensorFlow Lite's QuantizeMultiplier:
 * frexp, round half away from zero, a significand that rounds up to 2^31 halved with the
 * shift raised; multipliers below about 2^-32 (shift < -31) and 0 flushed to (0, 0). False
 * (and (0, 0)) when `real` is not finite. */
bool mp_quantize_multiplier(double real, int32_t *quantized_multiplier, int *shift);

/* gemmlowp's SaturatingRoundingDoublingHighMul: the high 32 bits of 2*a*b, rounded to
 * nearest with ties toward +infinity, i.e. floor((a*b + 2^30) / 2^31); INT32_MIN * INT32_MIN
 * (the one result that does not fit) saturates to INT32_MAX. */
int32_t mp_sat_rounding_doubling_high_mul(int32_t a, int32_t b);

/* gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded to nearest, ties away from zero.
 * exponent <= 0 returns x; above 62 it is taken as 62. */
int32_t mp_rounding_divide_by_pot(int32_t x, int exponent);

/* TensorFlow Lite's MultiplyByQuantizedMultiplier: x * quantized_multiplier * 2^(shift - 31)
 * as x shifted left by max(shift, 0) (wrapping in 32 bits, as TensorFlow Lite's does on
 * two's-complement machines), the rounding doubling high multiply, then the rounding divide
 * by 2^max(-shift, 0). */
int32_t mp_multiply_by_quantized_multiplier(int32_t x, int32_t quantized_multiplier, int shift);

/* TensorFlow Lite's MultiplyByQuantizedMultiplier on an int64 x (its 16x8 kernels' int64
 * accumulators): the multiplier reduced to 15 bits ((quantized_multiplier + 2^15) >> 16,
 * 0x7FFF from 0x7FFF0000 up), x times it plus 2^(total - 1), shifted right by total =
 * 15 - shift (arithmetically), truncated to 32 bits. One rounding, not the int32 version's
 * two. Wraps where TensorFlow Lite's would overflow; shift above 14 (total below 1, which
 * TensorFlow Lite never reaches: it asserts shift < 8) is taken as 14. */
int32_t mp_multiply_by_quantized_multiplier_i64(int64_t x, int32_t quantized_multiplier,
                                                int shift);

/* TensorFlow Lite's GetInvSqrtQuantizedMultiplierExp with kReverseShift (-1): 1 / sqrt(x) for
 * x >= 0 as a multiplier and a (left) shift, x normalized into [2^27, 2^29) by pairs of bits,
 * five Newton-Raphson steps in gemmlowp's Q3.28 fixed point (saturating rounding shifts
 * between the Q6 / Q9 products), times sqrt(2) / 2. x <= 1 gives (INT32_MAX, 0), as there.
 * Used by int8 RSQRT and quantized L2_NORMALIZATION. */
void mp_inv_sqrt_quantized_multiplier(int32_t x, int32_t *multiplier, int *shift);

/* gemmlowp's one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a Q0.31 a in [0, 1), Q0.31:
 * half the denominator (RoundingHalfSum with one), 48/17 - 32/17 of it, three Newton-Raphson
 * steps in Q2.29 (saturating rescales), halved back into Q0.31 (saturating). */
int32_t mp_one_over_one_plus_x(int32_t a);

/* TensorFlow Lite's GetReciprocal: 1 / x for x > 0 with x_integer_digits integer bits, as a
 * Q0.31 value r and *num_bits_over_unit: 1 / x = r * 2^(-num_bits_over_unit) (x normalized
 * by its leading zeros into [1, 2), then mp_one_over_one_plus_x of the excess): uint8 DIV.
 * (The 8-bit SOFTMAX and LOG_SOFTMAX call mp_one_over_one_plus_x themselves.) */
int32_t mp_get_reciprocal(int32_t x, int x_integer_digits, int *num_bits_over_unit);

/* The range of a quantized integer dtype: uint8, int8, int16, int32 (int4 as -8..7). False
 * for other dtypes. */
bool mp_quant_dtype_range(mp_dtype dt, int32_t *lo, int32_t *hi);

/* Quantize a real value as TensorFlow Lite's AffineQuantize: round(x / scale) in float
 * (ties away from zero), plus zero_point, saturated to [lo, hi]. NaN gives zero_point
 * (clamped), an infinite quotient the bound on its side. */
int32_t mp_quantize_f32(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi);

/* Dequantize as TensorFlow Lite's Dequantize: (float)((double)scale * (q - zero_point)). */
float mp_dequantize_f32(int32_t q, float scale, int32_t zero_point);

/* Requantization from one (scale, zero point) to another, as TensorFlow Lite's QUANTIZE of
 * an integer input (reference Requantize): multiplier = (double)in_scale / out_scale. */
typedef struct mp_requant {
    int32_t multiplier;
    int shift;
    int32_t in_zero_point, out_zero_point;
    int32_t lo, hi;            /* output range */
} mp_requant;

/* False when the ratio of the scales is not finite (scales are checked by the reader, so
 * only a caller's own bad values get there). */
bool mp_requant_init(mp_requant *r, float in_scale, int32_t in_zero_point, float out_scale,
                     int32_t out_zero_point, int32_t lo, int32_t hi);
/* MultiplyByQuantizedMultiplier(q - in_zero_point) + out_zero_point, saturated to [lo, hi]. */
int32_t mp_requant_apply(const mp_requant *r, int32_t q);

#endif
