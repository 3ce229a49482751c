/* Tests of HARD_SWISH: float32 on XNNPACK against x * min(6, max(0, x + 3)) / 6; int8 /
 * uint8 through the table built at prepare, bit for bit against TensorFlow Lite's reference
 * integer kernel written here from reference_ops::HardSwish (16-bit fixed point), for every
 * input value and many scales and zero points, and within 1 of quantize(hardswish(
 * dequantize(q))) in double; hand-derived values; errors. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "tests/util/kernel_harness.h"

static uint32_t g_seed = 2718;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

/* ---- the reference, in 32-bit integers -------------------------------------------------- */

typedef struct ref_params {
    int32_t in_zp, out_zp, out_mult, relu_mult; /* 16-bit multipliers */
    int out_exp, relu_exp;
} ref_params;

static int32_t clamp16(int64_t v)
{
    return (int32_t)(v > 32767 ? 32767 : (v < -32768 ? -32768 : v));
}

/* Round-to-nearest doubling high multiply of two int16 values (gemmlowp, 16-bit). */
static int32_t rd_high_mul(int32_t a, int32_t b)
{
    if (a == -32768 && b == -32768)
        return 32767;
    int32_t p = a * b;
    return (p >= 0 ? p + 16384 : p + 1 - 16384) / 32768;
}

/* gemmlowp's RoundingDivideByPOT on int16 values, mask kept to 16 bits. */
static int32_t rd_pot(int32_t x, int e)
{
    int32_t mask = (int32_t)(int16_t)((1LL << e) - 1);
    int32_t rem = (int32_t)(int16_t)(x & mask);
    int32_t thr = (mask >> 1) + (x < 0);
    return (int32_t)(int16_t)((x >> e) + (rem > thr));
}

static bool ref_init(ref_params *p, float is, int32_t iz, float os, int32_t oz)
{
    float hires = is / 128.0f; /* (1/128) * is: exact either way (a power of two) */
    int32_t m;
    p->in_zp = iz;
    p->out_zp = oz;
    assert_true(mp_quantize_multiplier((double)(hires / os), &m, &p->out_exp));
    p->out_mult = m >= INT32_MAX - 32768 ? 32767 : (m + 32768) >> 16;
    assert_true(mp_quantize_multiplier((double)(hires / (3.0f / 32768.0f)), &m, &p->relu_exp));
    p->relu_mult = m >= INT32_MAX - 32768 ? 32767 : (m + 32768) >> 16;
    return p->out_exp <= 0;
}

static int32_t ref_hswish(const ref_params *p, int32_t q, int32_t lo, int32_t hi)
{
    int32_t hires = (q - p->in_zp) * 128;
    int32_t on_out = rd_high_mul(hires, p->out_mult);
    int32_t relu = hires;
    if (p->relu_exp > 0)
        relu = clamp16((int64_t)relu * (1LL << (p->relu_exp - 1)));
    relu = rd_high_mul(relu, p->relu_mult);
    if (p->relu_exp > 0)
        relu = clamp16((int64_t)relu * 2);
    if (p->relu_exp < 0)
        relu = rd_pot(relu, -p->relu_exp);
    relu = (relu + 32768) >> 1;
    int32_t prod = (relu == -32768 && on_out == -32768) ? 32767 : (relu * on_out) / 32768;
    int32_t y = (int32_t)(int16_t)(rd_pot(prod, -p->out_exp) + p->out_zp);
    return y < lo ? lo : (y > hi ? hi : y);
}

/* ---- tests ------------------------------------------------------------------------------ */

/* int8, in and out (0.1, 0). q = 0 -> 0. q = -50 (-5.0): the relu-ish factor saturates at -1,
 * becomes 0 -> 0. q = 50 (5.0): relu factor 32767 (1.0), on the output scale 6400 * 2^-1 =
 * 3200, 32767 * 3200 / 2^15 = 3199 (truncated), / 2^6 = 49.98 -> 50. q = 10 (1.0): hires
 * 1280, relu multiplier 8.53 = 0.533 * 2^4 -> 17476 with exponent 4: 1280 << 3 = 10240,
 * * 17476 / 2^15 = 5461, << 1 = 10922 (1/3 of 2^15), (10922 + 2^15) >> 1 = 21845; on the
 * output scale 640; 21845 * 640 / 2^15 = 426; / 2^6 = 6.66 -> 7 (hardswish(1) = 0.667 ->
 * 6.67). */
static void test_hand(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_HARD_SWISH, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    float s = 0.1f;
    int64_t z = 0;
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    memcpy(in->data, (int8_t[]){0, -50, 50, 10}, 4);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){0, 0, 50, 7}), 4);
    kh_free(&c);
}

/* Every input value, random scales (output scale between 1/64 and 4 times the input's) and
 * zero points: bit for bit with the reference, within 1 of the real-valued result. */
static void test_all_values(void **state)
{
    (void)state;
    int exact_ideal = 0, total = 0;
    for (int trial = 0; trial < 200; trial++) {
        bool u8 = trial % 2;
        mp_dtype dt = u8 ? MP_DT_UINT8 : MP_DT_INT8;
        int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
        float is = ldexpf(1.0f + (float)(rnd() % 4096) / 4096.0f, -(int)(rnd() % 10));
        float os = is * ldexpf(1.0f + (float)(rnd() % 4096) / 4096.0f, (int)(rnd() % 8) - 6);
        int64_t iz = lo + (int64_t)(rnd() % 256), oz = lo + (int64_t)(rnd() % 256);
        ref_params p;
        if (!ref_init(&p, is, (int32_t)iz, os, (int32_t)oz))
            continue;
        kh_case c;
        kh_init(&c, MP_OP_HARD_SWISH, NULL);
        mp_tensor *in = kh_input(&c, dt, 2, (int32_t[]){16, 16}, NULL);
        mp_tensor *out = kh_output(&c, dt);
        kh_quant(&c, in, 1, &is, &iz, 0);
        kh_quant(&c, out, 1, &os, &oz, 0);
        for (int32_t v = lo; v <= hi; v++) {
            if (u8)
                ((uint8_t *)in->data)[v - lo] = (uint8_t)v;
            else
                ((int8_t *)in->data)[v - lo] = (int8_t)v;
        }
        kh_expect_ok(&c, kh_run(&c));
        for (int32_t v = lo; v <= hi; v++) {
            int32_t got = u8 ? ((uint8_t *)out->data)[v - lo] : ((int8_t *)out->data)[v - lo];
            int32_t want = ref_hswish(&p, v, lo, hi);
            if (got != want)
                fail_msg("trial %d %s q=%d (in %g/%lld out %g/%lld): got %d want %d", trial,
                         mp_dtype_name(dt), v, (double)is, (long long)iz, (double)os,
                         (long long)oz, got, want);
            double x = (double)is * (v - iz);
            double r = x * fmin(6.0, fmax(0.0, x + 3.0)) / 6.0 / os + (double)oz;
            double ideal = fmin(hi, fmax(lo, round(r)));
            if (fabs(got - ideal) > 1.0)
                fail_msg("trial %d q=%d: got %d, real-valued %.3f", trial, v, got, r);
            exact_ideal += got == (int32_t)ideal;
            total++;
        }
        kh_free(&c);
    }
    printf("hard swish: %d of %d outputs equal the rounded real value, all within 1\n",
           exact_ideal, total);
    assert_true(total > 20000);
}

/* float32 on XNNPACK, including the bends at -3 and 3, against the reference formula. */
static void test_float(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_HARD_SWISH, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 333}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    float *x = in->data;
    kh_fill(x, 999, 5, 8.0f);
    x[0] = -3.0f, x[1] = 3.0f, x[2] = 0.0f, x[3] = -1e30f, x[4] = 1e30f;
    kh_expect_ok(&c, kh_run(&c));
    float want[999];
    for (int i = 0; i < 999; i++)
        want[i] = (float)((double)x[i] * fmin(6.0, fmax(0.0, (double)x[i] + 3.0)) / 6.0);
    kh_expect_close(out->data, want, 999, 1e-3);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    float s = 0.5f, big = 100.0f, tiny = 0.001f;
    int64_t z = 0;
    kh_case c;
    kh_init(&c, MP_OP_HARD_SWISH, NULL);
    kh_input(&c, MP_DT_INT16, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_INT16);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't0' has dtype i16");
    kh_free(&c);

    kh_init(&c, MP_OP_HARD_SWISH, NULL);
    kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "u8 tensor 't0' has no quantization parameters");
    kh_free(&c);

    /* in_scale / 128 > out_scale: TFLite refuses (output exponent above 0) */
    kh_init(&c, MP_OP_HARD_SWISH, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 1, &big, &z, 0);
    kh_quant(&c, out, 1, &tiny, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "scales 100 of 't0' and 0.001 of 't1'");
    kh_free(&c);

    kh_init(&c, MP_OP_HARD_SWISH, NULL);
    in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't1' is u8 but input 't0' is i8");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_all_values),
        cmocka_unit_test(test_float),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
