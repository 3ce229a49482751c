/* Plain restatements of TensorFlow Lite's integer building blocks for the quantized kernel
 * tests (test_kernels_convert_q.c, test_kernels_reduce_q.c), written from the documented
 * formulas, independent of engine/kernels/quant_math.c: MultiplyByQuantizedMultiplier
 * (gemmlowp's doubling high multiply, then the rounding divide by a power of two), and the
 * range, load and store of an int8 / uint8 / int16 value. Header only: static functions. */
#ifndef MP_QUANT_REF_H
#define MP_QUANT_REF_H

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

#endif
