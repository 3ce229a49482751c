/* The oracle's input formula: b = (i*7 + 3 + 13*k) % 256, then per dtype (see header). */
#include "engine/model/reference_input.h"

#include <stdint.h>

bool mp_reference_input(void *dst, mp_dtype dt, size_t n, int k)
{
    switch (dt) {
    case MP_DT_FLOAT32: case MP_DT_UINT8: case MP_DT_INT8: case MP_DT_INT16:
    case MP_DT_INT32: case MP_DT_BOOL:
        break;
    default:
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t b = ((int64_t)i * 7 + 3 + 13 * (int64_t)k) % 256;
        switch (dt) {
        case MP_DT_FLOAT32: ((float *)dst)[i] = (float)b / 255.0f - 0.5f; break;
        case MP_DT_UINT8: ((uint8_t *)dst)[i] = (uint8_t)b; break;
        case MP_DT_INT8: ((int8_t *)dst)[i] = (int8_t)(b - 128); break;
        case MP_DT_INT16: ((int16_t *)dst)[i] = (int16_t)(b - 128); break;
        case MP_DT_INT32: ((int32_t *)dst)[i] = (int32_t)(i % 7); break;
        case MP_DT_BOOL: ((uint8_t *)dst)[i] = (uint8_t)(b & 1); break;
        default: break;
        }
    }
    return true;
}
