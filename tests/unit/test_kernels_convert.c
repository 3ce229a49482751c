/* Tests of the conversion kernels: CAST between every pair of supported dtypes (against
 * plain C conversions of in-range values, plus saturation of out-of-range floats) and
 * DEQUANTIZE of int8 / uint8 / int16 (per-tensor and per-channel) and float16. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static void expect_f32(const float *got, const float *want, size_t n)
{
    size_t at = 0;
    double e = mp_test_max_rel_err(got, want, n, 1e-3, &at);
    if (e > 1e-6)
        fail_msg("element %zu: got %.9g want %.9g (rel err %g)", at, (double)got[at],
                 (double)want[at], e);
}

/* ---- CAST ------------------------------------------------------------------------------- */

static const mp_dtype k_cast_types[] = {MP_DT_FLOAT32, MP_DT_INT32, MP_DT_INT64, MP_DT_UINT8,
                                        MP_DT_INT8, MP_DT_INT16, MP_DT_BOOL};

/* Values valid in every source type: small integers (and fractions for float). */
static const double k_vals_int[] = {0, 1, -1, 2, 7, -8, 100, -100, 127, -128, 3, 0, 1, 55};
static const double k_vals_u8[] = {0, 1, 255, 2, 7, 128, 100, 200, 127, 3, 0, 1, 55, 254};
static const double k_vals_f[] = {0.0, 1.9, -1.9, 2.5, -0.5, 0.49, 100.99, -100.99, 127.0,
                                  -128.0, 3.25, -0.0, 1e-30, 55.5};
#define NV 14

static void store(mp_dtype dt, void *p, size_t i, double v)
{
    switch (dt) {
    case MP_DT_FLOAT32: ((float *)p)[i] = (float)v; break;
    case MP_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case MP_DT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case MP_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MP_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case MP_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case MP_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: fail();
    }
}

/* The value a source element holds, as a double. */
static double load(mp_dtype dt, const void *p, size_t i)
{
    switch (dt) {
    case MP_DT_FLOAT32: return ((const float *)p)[i];
    case MP_DT_INT32: return ((const int32_t *)p)[i];
    case MP_DT_INT64: return (double)((const int64_t *)p)[i];
    case MP_DT_UINT8: return ((const uint8_t *)p)[i];
    case MP_DT_INT8: return ((const int8_t *)p)[i];
    case MP_DT_INT16: return ((const int16_t *)p)[i];
    case MP_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: fail();
    }
    return 0;
}

/* Expected result: static_cast semantics (truncation toward zero; integers keep their low
 * bits when narrowed; bool = x != 0). */
static void expect_cast(mp_dtype to, const void *got, size_t i, double v)
{
    double t = trunc(v);
    int64_t iv = (int64_t)t;
    bool ok;
    switch (to) {
    case MP_DT_FLOAT32: ok = ((const float *)got)[i] == (float)v; break;
    case MP_DT_INT32: ok = ((const int32_t *)got)[i] == (int32_t)iv; break;
    case MP_DT_INT64: ok = ((const int64_t *)got)[i] == iv; break;
    case MP_DT_UINT8: ok = ((const uint8_t *)got)[i] == (uint8_t)iv; break;
    case MP_DT_INT8: ok = ((const int8_t *)got)[i] == (int8_t)iv; break;
    case MP_DT_INT16: ok = ((const int16_t *)got)[i] == (int16_t)iv; break;
    case MP_DT_BOOL: ok = ((const uint8_t *)got)[i] == (v != 0); break;
    default: ok = false;
    }
    if (!ok)
        fail_msg("cast to %s of %g (element %zu) is wrong", mp_dtype_name(to), v, i);
}

static void test_cast_all_pairs(void **state)
{
    (void)state;
    size_t nt = sizeof k_cast_types / sizeof k_cast_types[0];
    for (size_t a = 0; a < nt; a++) {
        for (size_t b = 0; b < nt; b++) {
            mp_dtype from = k_cast_types[a], to = k_cast_types[b];
            const double *vals = from == MP_DT_FLOAT32 ? k_vals_f
                                 : from == MP_DT_UINT8 ? k_vals_u8
                                                       : k_vals_int;
            kh_case c;
            kh_init(&c, MP_OP_CAST, NULL);
            mp_tensor *in = kh_input(&c, from, 2, (int32_t[]){2, 7}, NULL);
            mp_tensor *out = kh_output(&c, to);
            for (size_t i = 0; i < NV; i++)
                store(from, in->data, i, vals[i]);
            if (kh_run(&c) != MP_OK)
                fail_msg("cast %s -> %s: %s", mp_dtype_name(from), mp_dtype_name(to), c.err.msg);
            assert_int_equal(out->rank, 2);
            assert_int_equal(out->dims[1], 7);
            for (size_t i = 0; i < NV; i++)
                expect_cast(to, out->data, i, load(from, in->data, i));
            /* second run, other data */
            for (size_t i = 0; i < NV; i++)
                store(from, in->data, i, vals[NV - 1 - i]);
            assert_int_equal(kh_rerun(&c, false), MP_OK);
            for (size_t i = 0; i < NV; i++)
                expect_cast(to, out->data, i, load(from, in->data, i));
            kh_free(&c);
        }
    }
}

static void test_cast_hand_and_saturation(void **state)
{
    (void)state;
    /* hand-computed: f32 -> i32 truncates toward zero, clamped first as cast.cc does to the
     * float next to +-2^31 toward zero, +-2147483520 (floats are 128 apart there) */
    static const float f[] = {-3.7f, 2.9f, -0.2f, 1e10f, -1e10f, NAN, INFINITY, -INFINITY};
    kh_case c;
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){8}, f);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data,
                        ((const int32_t[]){-3, 2, 0, 2147483520, -2147483520, 0, 2147483520,
                                           -2147483520}),
                        32);
    kh_free(&c);

    /* f32 -> i16 clamped to [nextafterf(-32768, 0), nextafterf(32767, 0)] then truncated:
     * the range is -32767..32766, no wrap (40000 kept its low bits, -25536, before) */
    static const float f16s[] = {40000.0f, -40000.0f, 32767.5f, -32768.0f, 1.9f, -1.9f, NAN,
                                 32766.0f};
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){8}, f16s);
    out = kh_output(&c, MP_DT_INT16);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data,
                        ((const int16_t[]){32766, -32767, 32766, -32767, 1, -1, 0, 32766}), 16);
    kh_free(&c);

    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){8}, f);
    out = kh_output(&c, MP_DT_INT64);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data,
                        ((const int64_t[]){-3, 2, 0, 10000000000LL, -10000000000LL, 0, INT64_MAX,
                                           INT64_MIN}),
                        64);
    kh_free(&c);

    /* anything -> bool is x != 0 (NaN too); bool -> float is 0 or 1 */
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){8}, f);
    out = kh_output(&c, MP_DT_BOOL);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data, ((const uint8_t[]){1, 1, 1, 1, 1, 1, 1, 1}), 8);
    kh_free(&c);

    static const uint8_t bools[] = {0, 1, 2, 0};
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_BOOL, 1, (int32_t[]){4}, bools);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data, ((const float[]){0, 1, 1, 0}), 16);
    kh_free(&c);

    /* int64 -> int32 keeps the low bits; uint8 -> int8 wraps */
    static const int64_t big[] = {(int64_t)1 << 33 | 5, -1};
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, big);
    out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data, ((const int32_t[]){5, -1}), 8);
    kh_free(&c);

    /* scalar and empty tensors */
    static const int32_t seven = 7;
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, &seven);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_int_equal(out->rank, 0);
    assert_true(*(float *)out->data == 7.0f);
    kh_free(&c);
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){0, 4}, NULL);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_int_equal(out->bytes, 0);
    kh_free(&c);

    /* unsupported (float16 and the other dtypes of cast.cc: test_kernels_dtype_gaps.c) */
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_STRING, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t0' string");
    kh_free(&c);
}

/* ---- DEQUANTIZE ------------------------------------------------------------------------- */

static float ref_half(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (float)((h & 0x8000) ? -v : v);
}

static void test_dequantize_per_tensor(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    const mp_dtype types[] = {MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16};
    const int64_t zps[] = {-3, 128, 7};
    const float scale = 0.0375f;
    for (int k = 0; k < 3; k++) {
        for (int threaded = 0; threaded < 2; threaded++) {
            kh_case c;
            kh_init(&c, MP_OP_DEQUANTIZE, threaded ? pool : NULL);
            int32_t n = threaded ? 10007 : 37;
            mp_tensor *in = kh_input(&c, types[k], 2, (int32_t[]){1, n}, NULL);
            kh_quant(&c, in, 1, &scale, &zps[k], 0);
            mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
            for (int round = 0; round < 2; round++) {
                for (int32_t i = 0; i < n; i++) {
                    int32_t v = (int32_t)((i * 37 + round * 11) % 256) - 128;
                    if (types[k] == MP_DT_INT8)
                        ((int8_t *)in->data)[i] = (int8_t)v;
                    else if (types[k] == MP_DT_UINT8)
                        ((uint8_t *)in->data)[i] = (uint8_t)(v + 128);
                    else
                        ((int16_t *)in->data)[i] = (int16_t)(v * 97);
                }
                assert_int_equal(round ? kh_rerun(&c, false) : kh_run(&c), MP_OK);
                float *want = malloc(sizeof(float) * (size_t)n);
                for (int32_t i = 0; i < n; i++) {
                    int32_t q = types[k] == MP_DT_INT8    ? ((int8_t *)in->data)[i]
                                : types[k] == MP_DT_UINT8 ? ((uint8_t *)in->data)[i]
                                                          : ((int16_t *)in->data)[i];
                    want[i] = scale * (float)(q - (int32_t)zps[k]);
                }
                expect_f32(out->data, want, (size_t)n);
                free(want);
            }
            kh_free(&c);
        }
    }
    pthreadpool_destroy(pool);

    /* hand-computed: int8 [-128, 0, 5, 127] scale 0.5 zero point -1 */
    static const int8_t q[] = {-128, 0, 5, 127};
    static const float s = 0.5f;
    static const int64_t z = -1;
    kh_case c;
    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, q);
    kh_quant(&c, in, 1, &s, &z, 0);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_f32(out->data, (const float[]){-63.5f, 0.5f, 3.0f, 64.0f}, 4);
    kh_free(&c);

    /* zero point absent = 0 */
    static const uint8_t u[] = {0, 10, 255};
    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    in = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){3}, u);
    kh_quant(&c, in, 1, &s, NULL, 0);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_f32(out->data, (const float[]){0.0f, 5.0f, 127.5f}, 3);
    kh_free(&c);
}

static void test_dequantize_per_channel(void **state)
{
    (void)state;
    /* [3,2,4] int8, channels along dimension 0 and along dimension 2 */
    int8_t q[24];
    for (int i = 0; i < 24; i++)
        q[i] = (int8_t)(i * 11 - 120);
    static const float scales0[] = {0.5f, 0.25f, 2.0f};
    static const int64_t zps0[] = {0, -4, 3};
    static const float scales2[] = {1.0f, 0.1f, 0.01f, 3.0f};
    static const int64_t zps2[] = {1, 2, 3, 4};
    for (int dim = 0; dim <= 2; dim += 2) {
        kh_case c;
        kh_init(&c, MP_OP_DEQUANTIZE, NULL);
        mp_tensor *in = kh_input(&c, MP_DT_INT8, 3, (int32_t[]){3, 2, 4}, q);
        kh_quant(&c, in, dim ? 4 : 3, dim ? scales2 : scales0, dim ? zps2 : zps0, dim);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        float want[24];
        for (int i = 0; i < 24; i++) {
            int ch = dim ? i % 4 : i / 8;
            want[i] = (dim ? scales2 : scales0)[ch] * (float)(q[i] - (dim ? zps2 : zps0)[ch]);
        }
        expect_f32(out->data, want, 24);
        kh_free(&c);
    }
    /* scales that do not match the dimension */
    kh_case c;
    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 3, (int32_t[]){3, 2, 4}, q);
    kh_quant(&c, in, 3, scales0, zps0, 1);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0'");
    kh_free(&c);
}

static void test_dequantize_f16_and_errors(void **state)
{
    (void)state;
    /* 1, -2, 0.5, 65504 (max), 2^-24 (smallest subnormal), -0, inf, 0.333 */
    static const uint16_t h[] = {0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x8000, 0x7c00, 0x3555};
    pthreadpool_t pool = pthreadpool_create(2);
    kh_case c;
    kh_init(&c, MP_OP_DEQUANTIZE, pool);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT16, 2, (int32_t[]){2, 4}, h);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    const float *y = out->data;
    assert_true(y[0] == 1.0f && y[1] == -2.0f && y[2] == 0.5f && y[3] == 65504.0f);
    assert_true(y[4] == ldexpf(1.0f, -24) && y[5] == 0.0f && signbit(y[5]) && isinf(y[6]));
    for (int i = 0; i < 8; i++)
        assert_true(y[i] == ref_half(h[i]));
    kh_free(&c);

    /* all 65536 halves, threaded: an activation (XNNPACK) and a constant (plain C) */
    static uint16_t all[65536];
    for (uint32_t i = 0; i < 65536; i++)
        all[i] = (uint16_t)i;
    for (int constant = 0; constant < 2; constant++) {
        kh_init(&c, MP_OP_DEQUANTIZE, pool);
        in = kh_input(&c, MP_DT_FLOAT16, 1, (int32_t[]){65536}, constant ? all : NULL);
        out = kh_output(&c, MP_DT_FLOAT32);
        if (!constant)
            memcpy(in->data, all, sizeof all);
        assert_int_equal(kh_run(&c), MP_OK);
        for (uint32_t i = 0; i < 65536; i++) {
            float r = ref_half((uint16_t)i), g = ((float *)out->data)[i];
            if (isnan(r))
                assert_true(isnan(g));
            else if (g != r)
                fail_msg("half 0x%04x: got %g want %g", i, (double)g, (double)r);
        }
        kh_free(&c);
    }
    pthreadpool_destroy(pool);

    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL); /* no quantization parameters */
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t0'");
    kh_free(&c);

    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i32");
    kh_free(&c);

    static const float s = 1.0f;
    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
    kh_quant(&c, in, 1, &s, NULL, 0);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t1'");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cast_all_pairs),
        cmocka_unit_test(test_cast_hand_and_saturation),
        cmocka_unit_test(test_dequantize_per_tensor),
        cmocka_unit_test(test_dequantize_per_channel),
        cmocka_unit_test(test_dequantize_f16_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
