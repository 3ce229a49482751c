/* --fill NAME=VALUE: parse one value for an input's dtype, write it to every element (see
 * input_values.h). */
#include "cli/input_values.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/strings.h"

static bool refuse(char *why, size_t cap, const char *fmt, const char *v)
{
    snprintf(why, cap, fmt, v);
    return false;
}

bool mp_fill_parse(mp_dtype dt, const char *v, mp_fill_value *out, char *why, size_t cap)
{
    *out = (mp_fill_value){.dtype = dt, .text = v};
    char *end = NULL;
    errno = 0;
    switch (dt) {
    case MP_DT_STRING:
        return true;
    case MP_DT_FLOAT32:
    case MP_DT_FLOAT64:
        out->d = strtod(v, &end);
        if (end == v || *end || !isfinite(out->d) ||
            (dt == MP_DT_FLOAT32 && fabs(out->d) > FLT_MAX))
            return refuse(why, cap, "'%s' is not a finite number of the input's dtype", v);
        return true;
    case MP_DT_BOOL:
        if (!strcmp(v, "1") || !strcmp(v, "true"))
            out->i = 1;
        else if (strcmp(v, "0") && strcmp(v, "false"))
            return refuse(why, cap, "'%s' is not a bool (0, 1, false or true)", v);
        return true;
    case MP_DT_INT8:
    case MP_DT_INT16:
    case MP_DT_INT32:
    case MP_DT_INT64: {
        long long x = strtoll(v, &end, 0);
        int bits = dt == MP_DT_INT8 ? 8 : dt == MP_DT_INT16 ? 16 : dt == MP_DT_INT32 ? 32 : 64;
        int64_t hi = bits == 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
        if (end == v || *end || errno == ERANGE || x > hi || x < -hi - 1)
            return refuse(why, cap, "'%s' is not an integer within the input's dtype", v);
        out->i = x;
        return true;
    }
    case MP_DT_UINT8:
    case MP_DT_UINT16:
    case MP_DT_UINT32:
    case MP_DT_UINT64: {
        unsigned long long x = strtoull(v, &end, 0);
        int bits = dt == MP_DT_UINT8 ? 8 : dt == MP_DT_UINT16 ? 16 : dt == MP_DT_UINT32 ? 32 : 64;
        uint64_t hi = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
        if (end == v || *end || v[strspn(v, " \t")] == '-' || errno == ERANGE || x > hi)
            return refuse(why, cap, "'%s' is not an integer within the input's dtype", v);
        out->u = x;
        return true;
    }
    default:
        return refuse(why, cap, "%s: --fill does not fill this dtype (give a file with --input)",
                    mp_dtype_name(dt));
    }
}

void mp_fill_apply(void *dst, size_t n, const mp_fill_value *v)
{
    size_t w = mp_dtype_size(v->dtype);
    unsigned char one[8];
    float f = (float)v->d;
    int8_t i8 = (int8_t)v->i;
    int16_t i16 = (int16_t)v->i;
    int32_t i32 = (int32_t)v->i;
    uint8_t u8 = (uint8_t)(v->dtype == MP_DT_BOOL ? (uint64_t)v->i : v->u);
    uint16_t u16 = (uint16_t)v->u;
    uint32_t u32 = (uint32_t)v->u;
    switch (v->dtype) {
    case MP_DT_FLOAT32: memcpy(one, &f, 4); break;
    case MP_DT_FLOAT64: memcpy(one, &v->d, 8); break;
    case MP_DT_INT8: memcpy(one, &i8, 1); break;
    case MP_DT_INT16: memcpy(one, &i16, 2); break;
    case MP_DT_INT32: memcpy(one, &i32, 4); break;
    case MP_DT_INT64: memcpy(one, &v->i, 8); break;
    case MP_DT_UINT8: case MP_DT_BOOL: memcpy(one, &u8, 1); break;
    case MP_DT_UINT16: memcpy(one, &u16, 2); break;
    case MP_DT_UINT32: memcpy(one, &u32, 4); break;
    case MP_DT_UINT64: memcpy(one, &v->u, 8); break;
    default: return;
    }
    unsigned char *p = dst;
    for (size_t e = 0; e < n; e++)
        memcpy(p + e * w, one, w);
}

size_t mp_fill_strings(void *dst, size_t cap, size_t n, const mp_fill_value *v)
{
    size_t len = strlen(v->text), bytes;
    if (n > INT32_MAX || (len && n > SIZE_MAX / len) || !mp_str_bytes(n, n * len, &bytes))
        return 0;
    if (!dst || cap < bytes)
        return bytes;
    mp_str_writer w;
    mp_str_begin(&w, dst, bytes, (int32_t)n);
    for (size_t e = 0; e < n; e++) {
        mp_str_append(&w, v->text, len);
        mp_str_next(&w);
    }
    return bytes;
}
