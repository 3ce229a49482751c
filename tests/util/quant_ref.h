/* Plain restatements of TensorFlow Lite's integer building blocks for the quantized kernel
 * tests (test_kernels_convert_q.c, test_kernels_reduce_q.c, test_kernels_int16.c), written from
 * the documented formulas, independent of engine/kernels/quant_math.c:
 * MultiplyByQuantizedMultiplier (gemmlowp's doubling high multiply, then the rounding divide
 * by a power of two; and its int64 form), and the
 * range, load and store of an int8 / uint8 / int16 value. Header only: static functions. */
#ifndef MP_QUANT_REF_H
#define MP_QUANT_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model/model.h"

/* x * m * 2^(shift - 31): x shifted left (kept to 32 bits), gemmlowp's
 * SaturatingRoundingDoublingHighMul (nudge, truncating division), then RoundingDivideByPOT
 * (ties away from zero). */
static inline int32_t qref_mbqm(int32_t x, int32_t m, int shift)
{
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t a = (int64_t)(int32_t)((uint32_t)x << left);
    int64_t ab = a * m;
    int64_t nudge = ab >= 0 ? (1LL << 30) : 1 - (1LL << 30);
    int64_t high = (a == INT32_MIN && m == INT32_MIN) ? INT32_MAX : (ab + nudge) / (1LL << 31);
    if (right == 0)
        return (int32_t)high;
    int64_t half = 1LL << (right - 1);
    return (int32_t)(high >= 0 ? (high + half) >> right : -((-high + half) >> right));
}

/* common.h's MultiplyByQuantizedMultiplier on an int64 x (the 16x8 kernels' and REDUCE_PROD's):
 * the multiplier rounded to 15 bits ((m + 2^15) / 2^16, 0x7FFF from 0x7FFF0000 up), then
 * floor((x * it + 2^(14 - shift)) / 2^(15 - shift)), kept to 32 bits. Callers keep x * 2^15
 * inside int64 and shift below 15. */
static inline int32_t qref_mbqm64(int64_t x, int32_t m, int shift)
{
    const int64_t reduced = m < 0x7FFF0000 ? ((int64_t)m + 32768) / 65536 : 0x7FFF;
    const int t = 15 - shift;
    const int64_t v = x * reduced + (INT64_C(1) << (t - 1)), d = INT64_C(1) << t;
    return (int32_t)(uint32_t)(uint64_t)(v >= 0 ? v / d : -((-v + d - 1) / d));
}

/* TensorFlow Lite's QuantizeMultiplier of a positive real: frexp, the significand rounded
 * (half away from zero) to 31 bits, 2^31 halved with the exponent raised. */
static inline void qref_quantize_multiplier(double real, int32_t *m, int *shift)
{
    const double s = frexp(real, shift);
    int64_t q = llround(s * (double)(1LL << 31));
    if (q == (1LL << 31)) {
        q /= 2;
        ++*shift;
    }
    *m = (int32_t)q;
}

/* gemmlowp on int64: SaturatingRoundingDoublingHighMul, RoundingDivideByPOT (e >= 0) and
 * SaturatingRoundingMultiplyByPOT (e > 0: saturating beyond +-(2^(31 - e) - 1)). */
static inline int32_t qref_srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN)
        return INT32_MAX;
    const int64_t ab = (int64_t)a * b;
    return (int32_t)((ab + (ab >= 0 ? (1LL << 30) : 1 - (1LL << 30))) / (1LL << 31));
}

static inline int32_t qref_rdpot(int32_t x, int e)
{
    const int64_t mask = (1LL << e) - 1, rem = x & mask, thr = (mask >> 1) + (x < 0);
    return (int32_t)((x >> e) + (rem > thr));
}

static inline int32_t qref_sat_pot(int32_t x, int e)
{
    const int64_t thr = (1LL << (31 - e)) - 1;
    return x > thr ? INT32_MAX : (x < -thr ? INT32_MIN : (int32_t)((int64_t)x * (1LL << e)));
}

/* GetInvSqrtQuantizedMultiplierExp(x, kReverseShift = -1): 1 / sqrt(x) as a multiplier and a
 * left shift; x normalized into [2^27, 2^29) by pairs of bits, five Newton-Raphson steps in
 * Q3.28 from 1, times sqrt(2) / 2; x <= 1 gives (INT32_MAX, 0). */
static inline void qref_inv_sqrt(int32_t x, int32_t *mult, int *shift)
{
    if (x <= 1) {
        *mult = INT32_MAX;
        *shift = 0;
        return;
    }
    int sh = 11;
    while (x >= (1 << 29)) {
        x /= 4;
        sh++;
    }
    int lz = 0;
    while (((uint32_t)x << lz) < 0x80000000u)
        lz++;
    const int pairs = (lz - 1) / 2 - 1;
    sh -= pairs;
    x = (int32_t)((int64_t)x << (2 * pairs));
    const int32_t half_in = qref_rdpot(x >> 1, 1), three_half = (1 << 28) + (1 << 27);
    int32_t y = 1 << 28;
    for (int i = 0; i < 5; i++) {
        const int32_t y3 = qref_sat_pot(qref_srdhm(qref_srdhm(y, y), y), 6);
        y = qref_sat_pot((int32_t)((int64_t)qref_srdhm(three_half, y) - qref_srdhm(half_in, y3)),
                         3);
    }
    y = qref_srdhm(y, 1518500250);
    if (sh < 0) {
        y = (int32_t)(uint32_t)((uint64_t)(uint32_t)y << -sh);
        sh = 0;
    }
    *mult = y;
    *shift = -sh;
}

/* The range of uint8, int8 or (anything else) int16. */
static inline void qref_range(mp_dtype dt, int32_t *lo, int32_t *hi)
{
    *lo = dt == MP_DT_UINT8 ? 0 : dt == MP_DT_INT8 ? -128 : -32768;
    *hi = dt == MP_DT_UINT8 ? 255 : dt == MP_DT_INT8 ? 127 : 32767;
}

static inline int32_t qref_load(mp_dtype dt, const void *p, size_t i)
{
    switch (dt) {
    case MP_DT_UINT8: return ((const uint8_t *)p)[i];
    case MP_DT_INT8: return ((const int8_t *)p)[i];
    default: return ((const int16_t *)p)[i];
    }
}

static inline void qref_store(mp_dtype dt, void *p, size_t i, int32_t v)
{
    switch (dt) {
    case MP_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MP_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    default: ((int16_t *)p)[i] = (int16_t)v; break;
    }
}

/* TensorFlow Lite's quantization of one float row for its hybrid kernels (tensor_utils'
 * SymmetricQuantizeFloats: scale max|v| / 127, values in [-127, 127]; AsymmetricQuantizeFloats:
 * [min(v, 0), max(v, 0)] over [-128, 127], the zero point from the end of smaller error,
 * nudged), restated: returns the scale, sets q and the zero point. (test_kernels_rnn.c,
 * test_kernels_svdf.c) */
static inline float qref_hybrid_row(const float *v, int n, int8_t *q, bool asym, int32_t *zp)
{
    float lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        lo = fminf(lo, v[i]);
        hi = fmaxf(hi, v[i]);
    }
    *zp = 0;
    if (!asym) {
        float range = fabsf(lo) > fabsf(hi) ? fabsf(lo) : fabsf(hi);
        for (int i = 0; i < n; i++) {
            float k = range == 0 ? 0 : roundf(v[i] * (127.0f / range));
            q[i] = (int8_t)fmaxf(-127, fminf(127, k));
        }
        return range == 0 ? 1.0f : range / 127.0f;
    }
    double mn = lo < 0 ? lo : 0, mx = hi > 0 ? hi : 0;
    if (mn == mx) {
        for (int i = 0; i < n; i++)
            q[i] = 0;
        return 1.0f;
    }
    double s = (mx - mn) / 255.0;
    /* the zero point from the end whose error is smaller, nudged to an integer in range */
    double z = 128.0 + fabs(mn / s) < 127.0 + fabs(mx / s) ? -128.0 - mn / s : 127.0 - mx / s;
    *zp = z <= -128 ? -128 : z >= 127 ? 127 : (int32_t)round(z);
    float fs = (float)s;
    for (int i = 0; i < n; i++) {
        float k = roundf((float)*zp + v[i] * (1.0f / fs));
        q[i] = (int8_t)fmaxf(-128, fminf(127, k));
    }
    return fs;
}

#endif
