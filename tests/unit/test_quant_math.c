/* Tests of TensorFlow Lite's fixed-point requantization in C (engine/kernels/quant_math.h):
 * bit-exact values derived by hand from the documented formulas (the arithmetic is in the
 * comments), the edges (multiplier 1.0, the significand that rounds up to 2^31, tiny
 * multipliers flushed to zero, ties, INT32_MIN * INT32_MIN), and a randomized comparison
 * against a plain 64-bit / long double restatement of the same formulas written here. The
 * QUANTIZE and DEQUANTIZE kernels, run through the kernel harness, are checked bit for bit
 * against hand-derived values and against these functions. quant_tensor.h's fused activation
 * ranges and the quantization of nodes with weights (mp_node_weighted_q) are checked by hand. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "engine/kernels/quant_tensor.h"
#include "tests/util/kernel_harness.h"

static void expect_qm(double real, int32_t want_m, int want_shift)
{
    int32_t m;
    int shift;
    assert_true(mp_quantize_multiplier(real, &m, &shift));
    if (m != want_m || shift != want_shift)
        fail_msg("QuantizeMultiplier(%.17g) = (%d, %d), expected (%d, %d)", real, m, shift, want_m,
                 want_shift);
}

/* ---- QuantizeMultiplier ----------------------------------------------------------------- */

static void test_quantize_multiplier_by_hand(void **state)
{
    (void)state;
    /* 1.0 = 0.5 * 2^1: 0.5 * 2^31 = 2^30 = 1073741824, shift 1. */
    expect_qm(1.0, 1073741824, 1);
    /* 0.5 = 0.5 * 2^0: 2^30, shift 0. */
    expect_qm(0.5, 1073741824, 0);
    /* 0.75 = 0.75 * 2^0: 0.75 * 2^31 = 1610612736, shift 0. */
    expect_qm(0.75, 1610612736, 0);
    /* 3.0 = 0.75 * 2^2: 1610612736, shift 2. */
    expect_qm(3.0, 1610612736, 2);
    /* 0.1 = 0.8 * 2^-3 (the double 0.1 is 0.1000000000000000055...; q = 0.8000000000000000444):
     * 0.8000000000000000444 * 2^31 = 1717986918.4000001 -> round -> 1717986918, shift -3. */
    expect_qm(0.1, 1717986918, -3);
    /* 0.3 = 0.6 * 2^-1: 0.59999999999999997780 * 2^31 = 1288490188.7999999 -> 1288490189. */
    expect_qm(0.3, 1288490189, -1);
    /* A significand that rounds up to 2^31: 1 - 2^-33 = (1 - 2^-33) * 2^0, and
     * (1 - 2^-33) * 2^31 = 2^31 - 0.25 = 2147483647.75 -> round -> 2^31, which does not fit:
     * halved to 2^30 with the shift raised to 1 (the value is 1.0 to 32 bits). */
    expect_qm(1.0 - ldexp(1.0, -33), 1073741824, 1);
    /* Just below the round-up: 1 - 2^-31 -> (2^31 - 1) exactly, shift 0. */
    expect_qm(1.0 - ldexp(1.0, -31), 2147483647, 0);
    /* Tiny: 2^-32 = 0.5 * 2^-31 -> (2^30, -31), the smallest kept; 2^-33 = 0.5 * 2^-32 has
     * shift -32 < -31: flushed to (0, 0). 1e-12 ~ 0.55 * 2^-39: flushed too. */
    expect_qm(ldexp(1.0, -32), 1073741824, -31);
    expect_qm(ldexp(1.0, -33), 0, 0);
    expect_qm(1e-12, 0, 0);
    /* 0 -> (0, 0). */
    expect_qm(0.0, 0, 0);
    /* Negative multipliers keep their sign: -0.75 = -0.75 * 2^0 -> -1610612736, shift 0. */
    expect_qm(-0.75, -1610612736, 0);
    /* Not finite: refused, (0, 0). */
    int32_t m = 1;
    int shift = 1;
    assert_false(mp_quantize_multiplier(INFINITY, &m, &shift));
    assert_int_equal(m, 0);
    assert_int_equal(shift, 0);
    assert_false(mp_quantize_multiplier(NAN, &m, &shift));
}

/* ---- SaturatingRoundingDoublingHighMul ------------------------------------------------------ */

static void test_srdhm_by_hand(void **state)
{
    (void)state;
    const int32_t h = 1 << 30;
    /* The one overflow: (-2^31) * (-2^31) * 2 / 2^32 = 2^31, saturated to INT32_MAX. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(INT32_MIN, INT32_MIN), INT32_MAX);
    /* 2^30 * 2^30 = 2^60; (2^60 + 2^30) / 2^31 = 2^29 + 0.5 -> truncated: 536870912. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(h, h), 536870912);
    /* Ties: a * 2^30 / 2^31 = a / 2. 1 -> 0.5: (2^30 + 2^30) / 2^31 = 1. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(1, h), 1);
    /* -1 -> -0.5: (-2^30 + 1 - 2^30) / 2^31 = -0.99999... -> truncated to 0 (ties go up). */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(-1, h), 0);
    /* 3 -> 1.5: (3 * 2^30 + 2^30) / 2^31 = 2. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(3, h), 2);
    /* -3 -> -1.5: (-3 * 2^30 + 1 - 2^30) / 2^31 = (-2^32 + 1) / 2^31 = -1.99999... -> -1. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(-3, h), -1);
    /* INT32_MIN * INT32_MAX = -2^62 + 2^31 (value -2^31 + 1 exactly): plus the nudge 1 - 2^30
     * gives -2^62 + 2^30 + 1, / 2^31 = -2147483647.4999... -> -2147483647. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(INT32_MIN, INT32_MAX), -2147483647);
    /* INT32_MAX^2 = 2^62 - 2^32 + 1; + 2^30, / 2^31 = 2^31 - 2 + (2^30 + 1) / 2^31
     * = 2147483646.5000000005 -> 2147483646. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(INT32_MAX, INT32_MAX), 2147483646);
    /* 0 times anything is 0; the sign of a product of two negatives is +. */
    assert_int_equal(mp_sat_rounding_doubling_high_mul(0, INT32_MIN), 0);
    assert_int_equal(mp_sat_rounding_doubling_high_mul(-6, -h), 3);
}

/* ---- RoundingDivideByPOT --------------------------------------------------------------------- */

static void test_rdpot_by_hand(void **state)
{
    (void)state;
    /* Exponent 0 (and below): unchanged. */
    assert_int_equal(mp_rounding_divide_by_pot(-7, 0), -7);
    assert_int_equal(mp_rounding_divide_by_pot(-7, -3), -7);
    /* Positive: 5/2 = 2.5 -> 3 (floor 2, remainder 1 > threshold 0). */
    assert_int_equal(mp_rounding_divide_by_pot(5, 1), 3);
    /* 5/4 = 1.25 -> 1; 6/4 = 1.5 -> 2; 7/4 = 1.75 -> 2 (remainders 1, 2, 3; threshold 1). */
    assert_int_equal(mp_rounding_divide_by_pot(5, 2), 1);
    assert_int_equal(mp_rounding_divide_by_pot(6, 2), 2);
    assert_int_equal(mp_rounding_divide_by_pot(7, 2), 2);
    /* Negative, ties away from zero: the threshold is one higher.
     * -5/2 = -2.5: floor -3, remainder (-5 & 1) = 1, threshold 0 + 1 = 1: 1 > 1 no -> -3. */
    assert_int_equal(mp_rounding_divide_by_pot(-5, 1), -3);
    /* -1/2 = -0.5: floor -1, remainder 1, threshold 1 -> -1. */
    assert_int_equal(mp_rounding_divide_by_pot(-1, 1), -1);
    /* -6/4 = -1.5: floor -2, remainder (-6 & 3) = 2, threshold 1 + 1 = 2 -> -2. */
    assert_int_equal(mp_rounding_divide_by_pot(-6, 2), -2);
    /* -5/4 = -1.25: floor -2, remainder (-5 & 3) = 3 > 2 -> -1. */
    assert_int_equal(mp_rounding_divide_by_pot(-5, 2), -1);
    /* -7/4 = -1.75: floor -2, remainder 1 -> -2. */
    assert_int_equal(mp_rounding_divide_by_pot(-7, 2), -2);
    /* Exponent 31: INT32_MIN / 2^31 = -1 exactly; INT32_MAX / 2^31 = 0.99999... -> 1;
     * -2^30 / 2^31 = -0.5 -> -1 (remainder 2^30, threshold 2^30 - 1 + 1: not above). */
    assert_int_equal(mp_rounding_divide_by_pot(INT32_MIN, 31), -1);
    assert_int_equal(mp_rounding_divide_by_pot(INT32_MAX, 31), 1);
    assert_int_equal(mp_rounding_divide_by_pot(-(1 << 30), 31), -1);
    assert_int_equal(mp_rounding_divide_by_pot((1 << 30) - 1, 31), 0);
    /* Beyond TensorFlow Lite's range (it asserts <= 31): still rounded. INT32_MIN / 2^32 =
     * -0.5 -> -1; anything / 2^40 -> 0. */
    assert_int_equal(mp_rounding_divide_by_pot(INT32_MIN, 32), -1);
    assert_int_equal(mp_rounding_divide_by_pot(INT32_MAX, 40), 0);
    assert_int_equal(mp_rounding_divide_by_pot(INT32_MIN, 1000), 0);
}

/* ---- MultiplyByQuantizedMultiplier ---------------------------------------------------------- */

static void test_mbqm_by_hand(void **state)
{
    (void)state;
    const int32_t h = 1 << 30;
    /* Multiplier 1.0 = (2^30, shift 1): 100 -> 200 -> SRDHM(200, 2^30) = (200 * 2^30 + 2^30)
     * / 2^31 = 100.5 -> 100 -> divide by 2^0 -> 100. The identity, for negatives too:
     * -200 -> (-200 * 2^30 + 1 - 2^30) / 2^31 = -100.4999... -> -100. */
    assert_int_equal(mp_multiply_by_quantized_multiplier(100, h, 1), 100);
    assert_int_equal(mp_multiply_by_quantized_multiplier(-100, h, 1), -100);
    assert_int_equal(mp_multiply_by_quantized_multiplier(INT32_MAX / 2, h, 1), INT32_MAX / 2);
    /* 0.5 = (2^30, 0): 3 -> SRDHM = 1.5 -> 2; -3 -> -1.5 -> -1 (SRDHM's ties go up). */
    assert_int_equal(mp_multiply_by_quantized_multiplier(3, h, 0), 2);
    assert_int_equal(mp_multiply_by_quantized_multiplier(-3, h, 0), -1);
    /* 0.25 = (2^30, -1), two roundings: 5 -> SRDHM 2.5 -> 3 -> 3/2 = 1.5 -> 2 (one rounding of
     * 1.25 would give 1); -3 -> SRDHM -1.5 -> -1 -> -1/2 = -0.5 -> -1 (away from zero). */
    assert_int_equal(mp_multiply_by_quantized_multiplier(5, h, -1), 2);
    assert_int_equal(mp_multiply_by_quantized_multiplier(-3, h, -1), -1);
    /* 0.75 = (1610612736, 0): 1000 * 0.75 = 750 exactly. */
    assert_int_equal(mp_multiply_by_quantized_multiplier(1000, 1610612736, 0), 750);
    /* 3.0 = (1610612736, 2): 7 -> 28 -> 28 * 0.75 = 21. */
    assert_int_equal(mp_multiply_by_quantized_multiplier(7, 1610612736, 2), 21);
    /* 0.1 = (1717986918, -3): 12345 * 1717986918 = 21208548502710; + 2^30, / 2^31 =
     * 9875.9999977 -> 9876 (9876 * 2^31 = 21208548507648 is 4938 above); / 8 = 1234.5 -> 1235
     * (0.1 * 12345 = 1234.5, the tie away from zero). */
    assert_int_equal(mp_multiply_by_quantized_multiplier(12345, 1717986918, -3), 1235);
    /* Saturation inside: INT32_MIN * INT32_MIN -> INT32_MAX, divided by 2^0. */
    assert_int_equal(mp_multiply_by_quantized_multiplier(INT32_MIN, INT32_MIN, 0), INT32_MAX);
    /* The left shift wraps in 32 bits like TensorFlow Lite's int32 multiply: 2^30 << 2 = 2^32
     * -> 0; 3 << 30 = 3 * 2^30 -> -2^30 (bits 1100...0). */
    assert_int_equal(mp_multiply_by_quantized_multiplier(h, h, 2), 0);
    assert_int_equal(mp_multiply_by_quantized_multiplier(3, h, 30), -(1 << 29));
    /* Flushed multiplier: (0, 0) gives 0. */
    assert_int_equal(mp_multiply_by_quantized_multiplier(INT32_MAX, 0, 0), 0);
}

/* ---- quantize, dequantize, requantize -------------------------------------------------------- */

static void test_quantize_dequantize_by_hand(void **state)
{
    (void)state;
    int32_t lo, hi;
    assert_true(mp_quant_dtype_range(MP_DT_INT8, &lo, &hi));
    assert_true(lo == -128 && hi == 127);
    assert_true(mp_quant_dtype_range(MP_DT_UINT8, &lo, &hi));
    assert_true(lo == 0 && hi == 255);
    assert_true(mp_quant_dtype_range(MP_DT_INT16, &lo, &hi));
    assert_true(lo == -32768 && hi == 32767);
    assert_false(mp_quant_dtype_range(MP_DT_FLOAT32, &lo, &hi));
    /* x / 0.5 + 10 with round half away from zero: 0.25 -> 0.5 -> 1 -> 11; -0.25 -> -1 -> 9;
     * 0.75 -> 1.5 -> 2 -> 12; -0.75 -> -2 -> 8. */
    assert_int_equal(mp_quantize_f32(0.25f, 0.5f, 10, -128, 127), 11);
    assert_int_equal(mp_quantize_f32(-0.25f, 0.5f, 10, -128, 127), 9);
    assert_int_equal(mp_quantize_f32(0.75f, 0.5f, 10, -128, 127), 12);
    assert_int_equal(mp_quantize_f32(-0.75f, 0.5f, 10, -128, 127), 8);
    /* Saturation: 1000 / 0.5 = 2000 -> 127; -1000 -> -128; uint8 zero point 128: -1000 -> 0. */
    assert_int_equal(mp_quantize_f32(1000.0f, 0.5f, 0, -128, 127), 127);
    assert_int_equal(mp_quantize_f32(-1000.0f, 0.5f, 0, -128, 127), -128);
    assert_int_equal(mp_quantize_f32(-1000.0f, 0.5f, 128, 0, 255), 0);
    /* A quotient beyond int32 (1e30 / 1e-30 = inf) and beyond float: the bound. */
    assert_int_equal(mp_quantize_f32(1e30f, 1e-30f, 0, -128, 127), 127);
    assert_int_equal(mp_quantize_f32(-INFINITY, 1.0f, 0, -128, 127), -128);
    assert_int_equal(mp_quantize_f32(3e9f, 1.0f, 0, INT32_MIN, INT32_MAX), INT32_MAX);
    /* NaN -> the zero point. */
    assert_int_equal(mp_quantize_f32(NAN, 0.5f, -5, -128, 127), -5);
    /* Dequantize: 0.5 * (-128 - (-3)) = -62.5; (1/255 as float) * 255 = 1.0000000091 -> 1.0f. */
    assert_true(mp_dequantize_f32(-128, 0.5f, -3) == -62.5f);
    assert_true(mp_dequantize_f32(255, 1.0f / 255.0f, 0) == 1.0f);
    assert_true(mp_dequantize_f32(0, 0.125f, 0) == 0.0f);
    /* Extremes do not overflow: 2^-10 * (INT32_MIN - INT32_MAX) = -(2^32 - 1) / 1024. */
    assert_true(mp_dequantize_f32(INT32_MIN, 0.0009765625f, INT32_MAX) == (float)(-4294967295.0 / 1024));

    /* Requantize int8 (0.5, zp 0) -> int8 (0.25, zp 0): multiplier 2.0 = (2^30, shift 2);
     * 10 -> 40 -> SRDHM(40, 2^30) = 20.5 -> 20 (truncated after the nudge: (41 * 2^30) / 2^31). */
    mp_requant r;
    assert_true(mp_requant_init(&r, 0.5f, 0, 0.25f, 0, -128, 127));
    assert_int_equal(r.multiplier, 1 << 30);
    assert_int_equal(r.shift, 2);
    assert_int_equal(mp_requant_apply(&r, 10), 20);
    assert_int_equal(mp_requant_apply(&r, 100), 127); /* 200, saturated */
    assert_int_equal(mp_requant_apply(&r, -100), -128);
    /* uint8 (s, 128) -> int8 (s, 0): multiplier 1.0, q - 128: 0 -> -128, 255 -> 127. */
    assert_true(mp_requant_init(&r, 0.02f, 128, 0.02f, 0, -128, 127));
    assert_int_equal(mp_requant_apply(&r, 0), -128);
    assert_int_equal(mp_requant_apply(&r, 255), 127);
    assert_int_equal(mp_requant_apply(&r, 130), 2);
    /* (0.3, zp 5) -> (0.1, zp -7): ratio 0.3f / 0.1f in double = 3.0000000745 ->
     * frexp 0.7500000186 * 2^2 -> 0.7500000186 * 2^31 = 1610612776 (rounded), shift 2.
     * q = 9: 9 - 5 = 4 -> 16 -> 16 * 1610612776 / 2^31 = 12.0000003 -> 12 -> + (-7) = 5. */
    assert_true(mp_requant_init(&r, 0.3f, 5, 0.1f, -7, -128, 127));
    assert_int_equal(r.shift, 2);
    assert_int_equal(mp_requant_apply(&r, 9), 5);
    assert_false(mp_requant_init(&r, 1.0f, 0, 0.0f, 0, -128, 127));
}

/* ---- randomized, against a plain restatement of the formulas -------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Random int32, biased toward the edges and small values. */
static int32_t rnd_i32(void)
{
    switch (rnd() % 8) {
    case 0: return INT32_MIN + (int32_t)(rnd() % 4);
    case 1: return INT32_MAX - (int32_t)(rnd() % 4);
    case 2: return (int32_t)(rnd() % 2001) - 1000;
    case 3: return (int32_t)(rnd() % 256) - 128;
    default: return (int32_t)(uint32_t)rnd();
    }
}

/* SRDHM by its definition: floor(a * b / 2^31 + 1/2) (a*b is exact in long double's 64-bit
 * significand, as are the division by 2^31 and the +1/2), saturated. */
static int32_t ref_srdhm(int32_t a, int32_t b)
{
    long double v = floorl((long double)a * (long double)b / 2147483648.0L + 0.5L);
    return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* x / 2^e rounded to nearest, ties away from zero. */
static int32_t ref_rdpot(int32_t x, int e)
{
    long double q = (long double)x / ldexpl(1.0L, e);
    return (int32_t)(q >= 0 ? floorl(q + 0.5L) : -floorl(-q + 0.5L));
}

/* The documented two-stage formula: x * 2^left kept to 32 bits (two's complement), SRDHM,
 * then the rounding divide by 2^right. */
static int32_t ref_mbqm(int32_t x, int32_t m, int shift)
{
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t wide = (int64_t)x * ((int64_t)1 << left);
    int64_t low = wide & 0xffffffff;
    int32_t shifted = (int32_t)(low >= 0x80000000 ? low - 0x100000000 : low);
    return ref_rdpot(ref_srdhm(shifted, m), right);
}

/* QuantizeMultiplier by normalizing with repeated halving and doubling (no frexp). */
static void ref_qm(double real, int32_t *m, int *shift)
{
    long double q = real;
    int e = 0;
    while (q >= 1.0L) {
        q /= 2;
        e++;
    }
    while (q < 0.5L) {
        q *= 2;
        e--;
    }
    long double f = floorl(q * 2147483648.0L + 0.5L); /* q > 0: half away from zero */
    if (f == 2147483648.0L) {
        f = 1073741824.0L;
        e++;
    }
    *m = e < -31 ? 0 : (int32_t)f;
    *shift = e < -31 ? 0 : e;
}

static void test_random_against_reference(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++) {
        int32_t a = rnd_i32(), b = rnd_i32();
        int32_t got = mp_sat_rounding_doubling_high_mul(a, b), want = ref_srdhm(a, b);
        if (got != want)
            fail_msg("SRDHM(%d, %d) = %d, reference %d", a, b, got, want);
        int e = (int)(rnd() % 32);
        got = mp_rounding_divide_by_pot(a, e);
        want = ref_rdpot(a, e);
        if (got != want)
            fail_msg("RDPOT(%d, %d) = %d, reference %d", a, e, got, want);
    }
    for (int i = 0; i < 200000; i++) {
        /* Multipliers over [2^-40, 2^8], as ratios of scales are. */
        double real = ldexp(1.0 + (double)(rnd() >> 11) / 9007199254740992.0, (int)(rnd() % 49) - 40);
        int32_t m, rm;
        int shift, rshift;
        assert_true(mp_quantize_multiplier(real, &m, &shift));
        ref_qm(real, &rm, &rshift);
        if (m != rm || shift != rshift)
            fail_msg("QuantizeMultiplier(%.17g) = (%d, %d), reference (%d, %d)", real, m, shift, rm, rshift);
        if (m != 0) {
            assert_true(m >= (1 << 30));
            /* Within half a unit of the 31-bit significand. */
            assert_true(fabsl((long double)m * ldexpl(1.0L, shift - 31) - real) <=
                        ldexpl(1.0L, shift - 32));
        }
        int32_t x = rnd_i32();
        int32_t got = mp_multiply_by_quantized_multiplier(x, m, shift), want = ref_mbqm(x, m, shift);
        if (got != want)
            fail_msg("MBQM(%d, %d, %d) = %d, reference %d", x, m, shift, got, want);
        /* Where nothing wraps or saturates, the two roundings stay within 1 of the real
         * product. */
        long double exact = (long double)x * m * ldexpl(1.0L, shift - 31);
        if (shift <= 0 && fabsl(exact) < 2e9L)
            assert_true(fabsl((long double)got - exact) <= 1.0L);
    }
}

/* Quantize then dequantize returns within half a step inside the range; requantization to
 * the same scale is the identity; to another agrees with the real ratio within 1. */
static void test_random_round_trips(void **state)
{
    (void)state;
    for (int i = 0; i < 100000; i++) {
        float scale = ldexpf(1.0f + (float)(rnd() % 1000) / 1000.0f, (int)(rnd() % 20) - 15);
        int32_t zp = (int32_t)(rnd() % 256) - 128;
        float x = ((float)(rnd() % 100001) / 100000.0f - 0.5f) * 256.0f * scale;
        int32_t q = mp_quantize_f32(x, scale, zp, -128, 127);
        assert_true(q >= -128 && q <= 127);
        float back = mp_dequantize_f32(q, scale, zp);
        float lo = mp_dequantize_f32(-128, scale, zp), hi = mp_dequantize_f32(127, scale, zp);
        if (x >= lo && x <= hi && fabsf(back - x) > 0.5f * scale * 1.0001f)
            fail_msg("quantize(%g, %g, %d) = %d -> %g", (double)x, (double)scale, zp, q, (double)back);
        mp_requant r;
        assert_true(mp_requant_init(&r, scale, zp, scale, zp, -128, 127));
        assert_int_equal(mp_requant_apply(&r, q), q);
        float out_scale = scale * (0.25f + (float)(rnd() % 1000) / 250.0f);
        int32_t out_zp = (int32_t)(rnd() % 256) - 128;
        assert_true(mp_requant_init(&r, scale, zp, out_scale, out_zp, -128, 127));
        double want = (double)scale / out_scale * (q - zp) + out_zp;
        int32_t got = mp_requant_apply(&r, q);
        if (want > -128 && want < 127 && fabs(got - want) > 1.0)
            fail_msg("requantize %d (%g, %d) -> (%g, %d) = %d, real %g", q, (double)scale, zp,
                     (double)out_scale, out_zp, got, want);
    }
}

/* ---- QUANTIZE and DEQUANTIZE kernels ---------------------------------------------------------- */

/* Element i of an int8 / uint8 / int16 tensor. */
static int32_t q_at(const mp_tensor *t, size_t i)
{
    switch (t->dtype) {
    case MP_DT_INT8: return ((const int8_t *)t->data)[i];
    case MP_DT_UINT8: return ((const uint8_t *)t->data)[i];
    default: return ((const int16_t *)t->data)[i];
    }
}

static void test_quantize_kernel_by_hand(void **state)
{
    (void)state;
    /* float -> int8, scale 0.5, zero point -1: x / 0.5 rounded half away from zero, - 1,
     * saturated: 0 -> -1; 0.25 -> 0.5 -> 1 -> 0; -0.25 -> -1 -> -2; 0.74 -> 1.48 -> 1 -> 0;
     * 63.9 -> 127.8 -> 128 -> 127; 64 -> 128 -> 127 (saturated); -64 -> -128 -> -129 -> -128;
     * -1000 -> -128. */
    static const float x[] = {0.0f, 0.25f, -0.25f, 0.74f, 63.9f, 64.0f, -64.0f, -1000.0f};
    static const int8_t want[] = {-1, 0, -2, 0, 127, 127, -128, -128};
    static const float s = 0.5f;
    static const int64_t z = -1;
    kh_case c;
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 4}, x);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);

    /* float -> uint8, scale 1/128 (0.0078125), zero point 128: -1 -> -128 + 128 = 0;
     * 0.5 -> 64 + 128 = 192; 0.99 -> 126.72 -> 127 -> 255; 1 -> 256 -> 255. */
    static const float xu[] = {-1.0f, 0.5f, 0.99f, 1.0f};
    static const uint8_t want_u[] = {0, 192, 255, 255};
    static const float su = 0.0078125f;
    static const int64_t zu = 128;
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, xu);
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, out, 1, &su, &zu, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, want_u, sizeof want_u);
    kh_free(&c);

    /* float -> int8 per channel along dimension 1 of [2, 2]: scales {1, 0.25}, zero points
     * {0, 3}: row 0 {2.5, 2.5} -> {3 (2.5 away from zero), 10 + 3 = 13}; row 1 {-2.5, -0.125}
     * -> {-3, -0.5 -> -1, + 3 = 2}. */
    static const float xc[] = {2.5f, 2.5f, -2.5f, -0.125f};
    static const int8_t want_c[] = {3, 13, -3, 2};
    static const float sc[] = {1.0f, 0.25f};
    static const int64_t zc[] = {0, 3};
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, xc);
    out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, out, 2, sc, zc, 1);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, want_c, sizeof want_c);
    kh_free(&c);

    /* int8 (0.5, zp 0) -> int8 (0.25, zp 0): multiplier 2.0 = (2^30, shift 2): 10 -> 20,
     * -3 -> -6, 63 -> 126, 64 -> 127 (128 saturated), -65 -> -128. */
    static const int8_t xi[] = {10, -3, 63, 64, -65};
    static const int8_t want_i[] = {20, -6, 126, 127, -128};
    static const float si = 0.5f, so = 0.25f;
    static const int64_t z0 = 0;
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){5}, xi);
    kh_quant(&c, in, 1, &si, &z0, 0);
    out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, out, 1, &so, &z0, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, want_i, sizeof want_i);
    kh_free(&c);

    /* uint8 (0.25, zp 128) -> int8 (1.0, zp 0): multiplier 0.25 = (2^30, shift -1), two
     * roundings: 133 -> 5 -> SRDHM(5, 2^30) = 2.5 -> 3 -> 3 / 2 = 1.5 -> 2 (the real 1.25 would
     * round to 1); 125 -> -3 -> -1.5 -> -1 -> -0.5 -> -1; 128 -> 0; 255 -> 127 -> 63.5 -> 64 ->
     * 32; 0 -> -128 -> -64 -> -32. */
    static const uint8_t xq[] = {133, 125, 128, 255, 0};
    static const int8_t want_q[] = {2, -1, 0, 32, -32};
    static const float sq = 0.25f, s1 = 1.0f;
    static const int64_t z128 = 128;
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    in = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){5}, xq);
    kh_quant(&c, in, 1, &sq, &z128, 0);
    out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, out, 1, &s1, &z0, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, want_q, sizeof want_q);
    kh_free(&c);
}

static void test_quantize_kernel_errors(void **state)
{
    (void)state;
    static const float s = 0.5f, bad = 0.0f;
    static const int64_t z = 0, z300 = 300;
    kh_case c;
    /* no quantization on the output */
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "needs one scale and zero point");
    kh_free(&c);
    /* a zero scale, a zero point outside uint8 */
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, out, 1, &bad, &z, 0);
    kh_expect_error(&c, MP_ERR_FORMAT, "scale 0");
    kh_free(&c);
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, out, 1, &s, &z300, 0);
    kh_expect_error(&c, MP_ERR_FORMAT, "zero point 300");
    kh_free(&c);
    /* unsupported types */
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, NULL);
    out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "cannot quantize");
    kh_free(&c);
    /* an integer input without parameters */
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, NULL);
    out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "needs one scale");
    kh_free(&c);
}

/* Many values through both kernels, against quant_math's functions element by element
 * (which the tests above pin to the formulas): float -> int8/uint8 -> float, and int -> int. */
static void test_quantize_dequantize_kernels_random(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    const mp_dtype types[] = {MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16};
    const int64_t zps[] = {-7, 131, 0};
    const float scale = 0.0123f;
    for (int k = 0; k < 3; k++) {
        int32_t lo, hi, n = 5003;
        mp_quant_dtype_range(types[k], &lo, &hi);
        kh_case c;
        kh_init(&c, MP_OP_QUANTIZE, NULL);
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, n}, NULL);
        uint32_t seed = 17u + (uint32_t)k;
        for (int32_t i = 0; i < n; i++)
            ((float *)x->data)[i] = kh_frand(&seed, 2.0f) * (float)(hi - lo) * scale;
        ((float *)x->data)[0] = 0.5f * scale; /* a tie */
        ((float *)x->data)[1] = -0.5f * scale;
        mp_tensor *q = kh_output(&c, types[k]);
        kh_quant(&c, q, 1, &scale, &zps[k], 0);
        kh_expect_ok(&c, kh_run(&c));
        for (int32_t i = 0; i < n; i++) {
            int32_t want = mp_quantize_f32(((float *)x->data)[i], scale, (int32_t)zps[k], lo, hi);
            if (q_at(q, (size_t)i) != want)
                fail_msg("%s element %d: %d, expected %d", mp_dtype_name(types[k]), i,
                         q_at(q, (size_t)i), want);
        }

        /* DEQUANTIZE of that activation (XNNPACK's convert for 8-bit, threaded) is
         * TensorFlow Lite's (float)((double)scale * (q - zp)), bit for bit. */
        kh_case d;
        kh_init(&d, MP_OP_DEQUANTIZE, pool);
        mp_tensor *qi = kh_input(&d, types[k], 2, (int32_t[]){1, n}, NULL);
        memcpy(qi->data, q->data, (size_t)n * mp_dtype_size(types[k]));
        kh_quant(&d, qi, 1, &scale, &zps[k], 0);
        mp_tensor *y = kh_output(&d, MP_DT_FLOAT32);
        kh_expect_ok(&d, kh_run(&d));
        for (int32_t i = 0; i < n; i++) {
            float want = mp_dequantize_f32(q_at(q, (size_t)i), scale, (int32_t)zps[k]);
            if (memcmp(&((float *)y->data)[i], &want, 4) != 0)
                fail_msg("dequantize %s element %d: %.9g, expected %.9g", mp_dtype_name(types[k]),
                         i, (double)((float *)y->data)[i], (double)want);
        }
        kh_free(&d);

        /* requantize to every 8/16-bit type with another scale */
        for (int j = 0; j < 3; j++) {
            const float out_scale = 0.0371f;
            int32_t olo, ohi;
            mp_quant_dtype_range(types[j], &olo, &ohi);
            kh_case r;
            kh_init(&r, MP_OP_QUANTIZE, NULL);
            mp_tensor *ri = kh_input(&r, types[k], 2, (int32_t[]){1, n}, NULL);
            memcpy(ri->data, q->data, (size_t)n * mp_dtype_size(types[k]));
            kh_quant(&r, ri, 1, &scale, &zps[k], 0);
            mp_tensor *ro = kh_output(&r, types[j]);
            kh_quant(&r, ro, 1, &out_scale, &zps[j], 0);
            kh_expect_ok(&r, kh_run(&r));
            mp_requant rq;
            assert_true(mp_requant_init(&rq, scale, (int32_t)zps[k], out_scale, (int32_t)zps[j], olo, ohi));
            for (int32_t i = 0; i < n; i++)
                if (q_at(ro, (size_t)i) != mp_requant_apply(&rq, q_at(q, (size_t)i)))
                    fail_msg("requantize %s -> %s element %d", mp_dtype_name(types[k]),
                             mp_dtype_name(types[j]), i);
            kh_free(&r);
        }
        kh_free(&c);
    }
    pthreadpool_destroy(pool);
}

/* Fused activation ranges in the integers (TensorFlow Lite's CalculateActivationRangeQuantized),
 * by hand: int8, scale 0.5, zero point -10: RELU from -10 + round(0/0.5) = -10; RELU6 up to
 * -10 + round(6/0.5) = 2; RELU_N1_TO_1 from -10 + round(-2) = -12 to -8. uint8, scale 0.1,
 * zero point 250: RELU6's 250 + 60 clamps to 255. A bound below the range clamps up: int8
 * zero point -128, scale 1/3, RELU_N1_TO_1 low -128 + round(-3) = -131 -> -128. Ties round
 * away from zero: scale 4, RELU6 at 6/4 = 1.5 -> 2. */
static void test_activation_range_q_by_hand(void **state)
{
    (void)state;
    int32_t lo, hi;
    assert_true(mp_activation_range_q(MP_ACT_NONE, 0.5f, -10, MP_DT_INT8, &lo, &hi));
    assert_int_equal(lo, -128); assert_int_equal(hi, 127);
    assert_true(mp_activation_range_q(MP_ACT_RELU, 0.5f, -10, MP_DT_INT8, &lo, &hi));
    assert_int_equal(lo, -10); assert_int_equal(hi, 127);
    assert_true(mp_activation_range_q(MP_ACT_RELU6, 0.5f, -10, MP_DT_INT8, &lo, &hi));
    assert_int_equal(lo, -10); assert_int_equal(hi, 2);
    assert_true(mp_activation_range_q(MP_ACT_RELU_N1_TO_1, 0.5f, -10, MP_DT_INT8, &lo, &hi));
    assert_int_equal(lo, -12); assert_int_equal(hi, -8);
    assert_true(mp_activation_range_q(MP_ACT_RELU6, 0.1f, 250, MP_DT_UINT8, &lo, &hi));
    assert_int_equal(lo, 250); assert_int_equal(hi, 255);
    assert_true(mp_activation_range_q(MP_ACT_RELU_N1_TO_1, 1.0f / 3.0f, -128, MP_DT_INT8, &lo, &hi));
    assert_int_equal(lo, -128); assert_int_equal(hi, -125);
    assert_true(mp_activation_range_q(MP_ACT_RELU6, 4.0f, 0, MP_DT_INT8, &lo, &hi));
    assert_int_equal(lo, 0); assert_int_equal(hi, 2);
    assert_false(mp_activation_range_q(MP_ACT_TANH, 0.5f, 0, MP_DT_INT8, &lo, &hi));
    assert_false(mp_activation_range_q(MP_ACT_RELU, 0.5f, 0, MP_DT_FLOAT32, &lo, &hi));
}

/* mp_node_weighted_q by hand, on nodes built with the harness (not run: the function reads
 * only dtypes and quantization parameters).
 *   qs8, FULLY_CONNECTED: int8 input (0.5, zp -3), weights [3,2] (0.25), output (0.125, zp 5),
 *     RELU6: ratio 0.5 * 0.25 / 0.125 = 1; range 5 + round(0) = 5 to 5 + round(6 / 0.125 = 48)
 *     = 53.
 *   qc8, DEPTHWISE_CONV_2D: filter [1,1,1,3] with scales {0.25, 0.5, 0.0625} along dimension 3,
 *     zero points 0; ratios 0.5 * s / 0.125 = 4s = {1, 2, 0.25}: smallest 0.25, largest 2; no
 *     activation: -128..127.
 *   qu8, CONV_2D with an int32 bias: uint8 input (0.5, zp 128), filter (0.25, zp 100), output
 *     (1, zp 10), RELU: ratio 0.125; range 10..255; the filter's zero point 100 kept.
 *   refused: an int8 CONV_2D with an output scale of 1e10 (0.5 * 0.25 / 1e10 = 1.25e-11 <
 *     2^-32 = 2.3e-10), the qc8 node with its scales along dimension 0 (not 3), the qs8 node
 *     with a weight zero point 2, and the qs8 node with TANH. */
static void weighted_node(kh_case *c, int32_t opcode, mp_dtype dt, int32_t w_rank,
                          const int32_t *w_dims, const void *w_data, int32_t w_count,
                          const float *w_scales, const int64_t *w_zps, int32_t w_dim,
                          const float *io_scales, const int64_t *io_zps, const int32_t *bias)
{
    kh_init(c, opcode, NULL);
    mp_tensor *x = kh_input(c, dt, 2, (int32_t[]){1, 2}, NULL);
    kh_quant(c, x, 1, &io_scales[0], &io_zps[0], 0);
    kh_quant(c, kh_input(c, dt, w_rank, w_dims, w_data), w_count, w_scales, w_zps, w_dim);
    if (bias)
        kh_input(c, MP_DT_INT32, 1, (int32_t[]){3}, bias);
    else
        kh_omit_input(c);
    kh_quant(c, kh_output(c, dt), 1, &io_scales[1], &io_zps[1], 0);
}

static void test_weighted_q_by_hand(void **state)
{
    (void)state;
    static const int8_t w8[6] = {1, 2, 3, 4, 5, 6};
    static const uint8_t wu8[6] = {1, 2, 3, 4, 5, 6};
    static const int32_t bias[3] = {7, 8, 9};
    static const float ws1 = 0.25f, wsc[3] = {0.25f, 0.5f, 0.0625f};
    static const int64_t z0[3] = {0, 0, 0}, z2 = 2, zw = 100;
    float io_s[2] = {0.5f, 0.125f};
    static const int64_t io_z[2] = {-3, 5}, io_zu[2] = {128, 10};
    mp_weighted_q q;
    kh_case c;

    /* qs8 */
    weighted_node(&c, MP_OP_FULLY_CONNECTED, MP_DT_INT8, 2, (int32_t[]){3, 2}, w8, 1, &ws1, z0, 0,
                  io_s, io_z, NULL);
    c.opt.activation = MP_ACT_RELU6;
    kh_expect_ok(&c, mp_node_weighted_q(&c.node, "weights", 3, 0, &q));
    assert_int_equal(q.kind, MP_WQ_QS8);
    assert_true(q.in_scale == 0.5f && q.out_scale == 0.125f && q.w_scale == &ws1);
    assert_int_equal(q.in_zp, -3); assert_int_equal(q.out_zp, 5); assert_int_equal(q.w_zp, 0);
    assert_int_equal(q.out_lo, 5); assert_int_equal(q.out_hi, 53);
    assert_true(q.ratio_min == 1.0f && q.ratio_max == 1.0f);
    kh_free(&c);

    /* qc8 */
    weighted_node(&c, MP_OP_DEPTHWISE_CONV_2D, MP_DT_INT8, 4, (int32_t[]){1, 1, 1, 3}, w8, 3, wsc,
                  z0, 3, io_s, io_z, NULL);
    kh_expect_ok(&c, mp_node_weighted_q(&c.node, "filter", 3, 3, &q));
    assert_int_equal(q.kind, MP_WQ_QC8);
    assert_true(q.w_scale == wsc);
    assert_int_equal(q.out_lo, -128); assert_int_equal(q.out_hi, 127);
    assert_true(q.ratio_min == 0.25f && q.ratio_max == 2.0f);
    kh_free(&c);

    /* qu8, with a bias */
    io_s[1] = 1.0f;
    weighted_node(&c, MP_OP_CONV_2D, MP_DT_UINT8, 4, (int32_t[]){3, 1, 1, 2}, wu8, 1, &ws1, &zw, 0,
                  io_s, io_zu, bias);
    c.opt.activation = MP_ACT_RELU;
    kh_expect_ok(&c, mp_node_weighted_q(&c.node, "filter", 3, 0, &q));
    assert_int_equal(q.kind, MP_WQ_QU8);
    assert_int_equal(q.in_zp, 128); assert_int_equal(q.out_zp, 10); assert_int_equal(q.w_zp, 100);
    assert_int_equal(q.out_lo, 10); assert_int_equal(q.out_hi, 255);
    assert_true(q.ratio_min == 0.125f && q.ratio_max == 0.125f);
    kh_free(&c);

    /* refused: a requantization scale below 2^-32 */
    io_s[1] = 1e10f;
    weighted_node(&c, MP_OP_CONV_2D, MP_DT_INT8, 4, (int32_t[]){3, 1, 1, 2}, w8, 1, &ws1, z0, 0,
                  io_s, io_z, NULL);
    kh_expect_fail(&c, mp_node_weighted_q(&c.node, "filter", 3, 0, &q), MP_ERR_UNSUPPORTED,
                   "operator #0 CONV_2D: input scale * filter scale / output scale is 1.25e-11, "
                   "below the 2^-32 XNNPACK takes");
    kh_free(&c);
    io_s[1] = 0.125f;
    /* refused: per-channel scales along the wrong dimension */
    weighted_node(&c, MP_OP_DEPTHWISE_CONV_2D, MP_DT_INT8, 4, (int32_t[]){1, 1, 1, 3}, w8, 3, wsc,
                  z0, 0, io_s, io_z, NULL);
    kh_expect_fail(&c, mp_node_weighted_q(&c.node, "filter", 3, 3, &q), MP_ERR_UNSUPPORTED,
                   "i8 filter 't1' has 3 scales along dimension 0; expected one, or 3 (one per "
                   "output channel) along dimension 3");
    kh_free(&c);
    /* refused: asymmetric int8 weights; TANH */
    weighted_node(&c, MP_OP_FULLY_CONNECTED, MP_DT_INT8, 2, (int32_t[]){3, 2}, w8, 1, &ws1, &z2, 0,
                  io_s, io_z, NULL);
    kh_expect_fail(&c, mp_node_weighted_q(&c.node, "weights", 3, 0, &q), MP_ERR_UNSUPPORTED,
                   "i8 weights 't1' have zero point 2; i8 weights are symmetric");
    kh_free(&c);
    weighted_node(&c, MP_OP_FULLY_CONNECTED, MP_DT_INT8, 2, (int32_t[]){3, 2}, w8, 1, &ws1, z0, 0,
                  io_s, io_z, NULL);
    c.opt.activation = MP_ACT_TANH;
    kh_expect_fail(&c, mp_node_weighted_q(&c.node, "weights", 3, 0, &q), MP_ERR_UNSUPPORTED,
                   "fused activation TANH has no integer range on i8 output 't2'");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantize_multiplier_by_hand),
        cmocka_unit_test(test_srdhm_by_hand),
        cmocka_unit_test(test_rdpot_by_hand),
        cmocka_unit_test(test_mbqm_by_hand),
        cmocka_unit_test(test_quantize_dequantize_by_hand),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_random_round_trips),
        cmocka_unit_test(test_quantize_kernel_by_hand),
        cmocka_unit_test(test_quantize_kernel_errors),
        cmocka_unit_test(test_quantize_dequantize_kernels_random),
        cmocka_unit_test(test_activation_range_q_by_hand),
        cmocka_unit_test(test_weighted_q_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
