/* Tests of DEQUANTIZE and QUANTIZE on quantized activations, bit for bit against TensorFlow
 * Lite's definitions written here from its quantization spec: dequantize
 * (float)((double)scale * (q - zero_point)) (reference_ops::Dequantize) for every 8-bit value
 * on XNNPACK's path (an activation, not a constant) and for int16 and per-channel int8 on the
 * C path; quantize round(x / scale) + zero_point, half away from zero, saturated
 * (AffineQuantize); requantize q -> MultiplyByQuantizedMultiplier(q - zp_in) + zp_out with
 * the multiplier of in_scale / out_scale (reference Requantize), the fixed-point steps
 * written here in 64-bit arithmetic as gemmlowp states them. Errors name tensor and dtype. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

static uint32_t g_seed = 12345;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

/* A scale spread over several binades, mantissa bits random. */
static float rnd_scale(void)
{
    float m = 1.0f + (float)(rnd() & 0xffff) / 65536.0f;
    return ldexpf(m, (int)(rnd() % 20) - 14);
}

static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---- DEQUANTIZE ------------------------------------------------------------------------- */

/* Every value of an 8-bit activation, random scales and zero points (the XNNPACK path):
 * exactly TFLite's (float)((double)scale * (q - zp)). */
static void test_dequantize_8bit_activation_exhaustive(void **state)
{
    (void)state;
    const mp_dtype types[] = {MP_DT_INT8, MP_DT_UINT8};
    for (int t = 0; t < 2; t++)
        for (int trial = 0; trial < 40; trial++) {
            mp_dtype dt = types[t];
            int32_t lo, hi;
            qref_range(dt, &lo, &hi);
            float scale = rnd_scale();
            int64_t zp = lo + (int64_t)(rnd() % 256);
            kh_case c;
            kh_init(&c, MP_OP_DEQUANTIZE, NULL);
            mp_tensor *in = kh_input(&c, dt, 2, (int32_t[]){4, 64}, NULL);
            kh_quant(&c, in, 1, &scale, &zp, 0);
            mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
            for (int32_t v = lo; v <= hi; v++)
                qref_store(dt, in->data, (size_t)(v - lo), v);
            kh_expect_ok(&c, kh_run(&c));
            const float *y = out->data;
            for (int32_t v = lo; v <= hi; v++) {
                float want = (float)((double)scale * (double)(v - zp));
                if (!same_bits(y[v - lo], want))
                    fail_msg("%s q=%d scale=%a zp=%lld: got %a want %a", mp_dtype_name(dt), v,
                             (double)scale, (long long)zp, (double)y[v - lo], (double)want);
            }
            kh_free(&c);
        }
}

/* Hand values: int8 scale 0.5 zp -3: q = -3 -> 0, 5 -> 4, -128 -> -62.5, 127 -> 65. */
static void test_dequantize_hand(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
    float scale = 0.5f;
    int64_t zp = -3;
    kh_quant(&c, in, 1, &scale, &zp, 0);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    int8_t *x = in->data;
    x[0] = -3, x[1] = 5, x[2] = -128, x[3] = 127;
    kh_expect_ok(&c, kh_run(&c));
    const float *y = out->data;
    assert_true(y[0] == 0.0f && y[1] == 4.0f && y[2] == -62.5f && y[3] == 65.0f);
    kh_free(&c);
}

/* int16 per tensor and int8 per channel (channel = dimension 1 of [3,4,5]) activations. */
static void test_dequantize_int16_and_per_channel(void **state)
{
    (void)state;
    for (int trial = 0; trial < 10; trial++) {
        kh_case c;
        kh_init(&c, MP_OP_DEQUANTIZE, NULL);
        mp_tensor *in = kh_input(&c, MP_DT_INT16, 1, (int32_t[]){1000}, NULL);
        float scale = rnd_scale();
        int64_t zp = 0;
        kh_quant(&c, in, 1, &scale, &zp, 0);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        for (size_t i = 0; i < 1000; i++)
            qref_store(MP_DT_INT16, in->data, i, (int32_t)(rnd() % 65536) - 32768);
        kh_expect_ok(&c, kh_run(&c));
        for (size_t i = 0; i < 1000; i++) {
            int32_t q = qref_load(MP_DT_INT16, in->data, i);
            assert_true(same_bits(((float *)out->data)[i], (float)((double)scale * q)));
        }
        kh_free(&c);
    }
    kh_case c;
    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 3, (int32_t[]){3, 4, 5}, NULL);
    float scales[4];
    int64_t zps[4];
    for (int k = 0; k < 4; k++) {
        scales[k] = rnd_scale();
        zps[k] = (int64_t)(rnd() % 256) - 128;
    }
    kh_quant(&c, in, 4, scales, zps, 1);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    for (size_t i = 0; i < 60; i++)
        qref_store(MP_DT_INT8, in->data, i, (int32_t)(rnd() % 256) - 128);
    kh_expect_ok(&c, kh_run(&c));
    for (size_t i = 0; i < 60; i++) {
        size_t ch = (i / 5) % 4;
        double want = (double)scales[ch] * (double)(qref_load(MP_DT_INT8, in->data, i) - zps[ch]);
        assert_true(same_bits(((float *)out->data)[i], (float)want));
    }
    kh_free(&c);
}

/* ---- QUANTIZE --------------------------------------------------------------------------- */

/* AffineQuantize: round half away from zero of x / scale (in float), + zp, saturated. */
static int32_t ref_quantize(float x, float scale, int32_t zp, mp_dtype dt)
{
    int32_t lo, hi;
    qref_range(dt, &lo, &hi);
    float r = x / scale; /* the quotient in float, as TFLite */
    /* half away from zero, exactly in double */
    double q = (r < 0 ? -floor(-(double)r + 0.5) : floor((double)r + 0.5)) + zp;
    return q < lo ? lo : (q > hi ? hi : (int32_t)q);
}

/* Hand values, uint8 scale 0.5 zp 10: 0.25 -> round(0.5) = 1 -> 11; -0.25 -> -1 -> 9;
 * 1.0 -> 12; 1000 -> 255; -1000 -> 0; 0.74 -> round(1.48) = 1 -> 11. */
static void test_quantize_hand(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){6}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_UINT8);
    float scale = 0.5f;
    int64_t zp = 10;
    kh_quant(&c, out, 1, &scale, &zp, 0);
    float *x = in->data;
    x[0] = 0.25f, x[1] = -0.25f, x[2] = 1.0f, x[3] = 1000.0f, x[4] = -1000.0f, x[5] = 0.74f;
    kh_expect_ok(&c, kh_run(&c));
    const uint8_t want[6] = {11, 9, 12, 255, 0, 11};
    assert_memory_equal(out->data, want, 6);
    kh_free(&c);
}

/* Random floats (ties included: multiples of scale / 2) to int8, uint8 and int16. */
static void test_quantize_random(void **state)
{
    (void)state;
    const mp_dtype types[] = {MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16};
    for (int t = 0; t < 3; t++)
        for (int trial = 0; trial < 20; trial++) {
            mp_dtype dt = types[t];
            int32_t lo, hi;
            qref_range(dt, &lo, &hi);
            float scale = rnd_scale();
            int64_t zp = dt == MP_DT_INT16 ? 0 : lo + (int64_t)(rnd() % 256);
            kh_case c;
            kh_init(&c, MP_OP_QUANTIZE, NULL);
            mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){500}, NULL);
            mp_tensor *out = kh_output(&c, dt);
            kh_quant(&c, out, 1, &scale, &zp, 0);
            float *x = in->data;
            for (size_t i = 0; i < 500; i++) {
                int32_t k = (int32_t)(rnd() % 1200) - 600;
                x[i] = i % 2 ? (float)k * scale * 0.5f : kh_frand(&g_seed, scale * 300.0f);
            }
            kh_expect_ok(&c, kh_run(&c));
            for (size_t i = 0; i < 500; i++) {
                int32_t want = ref_quantize(x[i], scale, (int32_t)zp, dt);
                if (qref_load(dt, out->data, i) != want)
                    fail_msg("%s x=%a scale=%a zp=%lld: got %d want %d", mp_dtype_name(dt),
                             (double)x[i], (double)scale, (long long)zp,
                             qref_load(dt, out->data, i), want);
            }
            kh_free(&c);
        }
}

static int32_t ref_requant(int32_t q, float in_scale, int32_t in_zp, float out_scale,
                           int32_t out_zp, mp_dtype out_dt)
{
    int32_t m, lo, hi;
    int shift;
    assert_true(mp_quantize_multiplier((double)in_scale / (double)out_scale, &m, &shift));
    qref_range(out_dt, &lo, &hi);
    int64_t v = (int64_t)qref_mbqm(q - in_zp, m, shift) + out_zp;
    return v < lo ? lo : (v > hi ? hi : (int32_t)v);
}

/* Hand: int8 (0.5, -1) -> uint8 (0.25, 3): ratio 2, q = 4 -> (4 + 1) * 2 + 3 = 13; q = -128
 * -> -254 -> 0 (saturated); q = 127 -> 259 -> 255. */
static void test_requantize_hand(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_UINT8);
    float is = 0.5f, os = 0.25f;
    int64_t iz = -1, oz = 3;
    kh_quant(&c, in, 1, &is, &iz, 0);
    kh_quant(&c, out, 1, &os, &oz, 0);
    int8_t *x = in->data;
    x[0] = 4, x[1] = -128, x[2] = 127;
    kh_expect_ok(&c, kh_run(&c));
    const uint8_t want[3] = {13, 0, 255};
    assert_memory_equal(out->data, want, 3);
    kh_free(&c);
}

/* Every pair of int8 / uint8 / int16 dtypes, random parameters and values. */
static void test_requantize_random(void **state)
{
    (void)state;
    const mp_dtype types[] = {MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int trial = 0; trial < 10; trial++) {
                mp_dtype di = types[a], dout = types[b];
                int32_t ilo, ihi, olo, ohi;
                qref_range(di, &ilo, &ihi);
                qref_range(dout, &olo, &ohi);
                float is = rnd_scale(), os = rnd_scale();
                int64_t iz = di == MP_DT_INT16 ? 0 : ilo + (int64_t)(rnd() % 256);
                int64_t oz = dout == MP_DT_INT16 ? 0 : olo + (int64_t)(rnd() % 256);
                kh_case c;
                kh_init(&c, MP_OP_QUANTIZE, NULL);
                mp_tensor *in = kh_input(&c, di, 1, (int32_t[]){300}, NULL);
                mp_tensor *out = kh_output(&c, dout);
                kh_quant(&c, in, 1, &is, &iz, 0);
                kh_quant(&c, out, 1, &os, &oz, 0);
                for (size_t i = 0; i < 300; i++)
                    qref_store(di, in->data, i, ilo + (int32_t)(rnd() % (uint32_t)(ihi - ilo + 1)));
                kh_expect_ok(&c, kh_run(&c));
                for (size_t i = 0; i < 300; i++) {
                    int32_t q = qref_load(di, in->data, i);
                    int32_t want = ref_requant(q, is, (int32_t)iz, os, (int32_t)oz, dout);
                    if (qref_load(dout, out->data, i) != want)
                        fail_msg("%s->%s q=%d: got %d want %d", mp_dtype_name(di),
                                 mp_dtype_name(dout), q, qref_load(dout, out->data, i), want);
                }
                kh_free(&c);
            }
}

/* Unsupported dtypes and parameters name the tensor and the dtype. */
static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t0' of dtype i32");
    kh_free(&c);

    kh_init(&c, MP_OP_DEQUANTIZE, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "without quantization parameters");
    kh_free(&c);

    /* int -> int with one scale per channel */
    kh_init(&c, MP_OP_QUANTIZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    float s2[2] = {0.5f, 0.25f}, s1 = 0.5f;
    int64_t z2[2] = {0, 0}, z1 = 0;
    kh_quant(&c, in, 2, s2, z2, 1);
    kh_quant(&c, out, 1, &s1, &z1, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t0' (i8) needs one scale");
    kh_free(&c);

    kh_init(&c, MP_OP_QUANTIZE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t1' i32");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dequantize_8bit_activation_exhaustive),
        cmocka_unit_test(test_dequantize_hand),
        cmocka_unit_test(test_dequantize_int16_and_per_channel),
        cmocka_unit_test(test_quantize_hand),
        cmocka_unit_test(test_quantize_random),
        cmocka_unit_test(test_requantize_hand),
        cmocka_unit_test(test_requantize_random),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
