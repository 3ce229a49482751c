/* Tests of int8 and uint8 L2_NORMALIZATION (reduce.c) against TensorFlow Lite's kernels
 * restated here with quant_ref.h: per row the int32 sum of squares of q - zp_in, the
 * fixed-point inverse square root (GetInvSqrtQuantizedMultiplierExp), then int8
 * MultiplyByQuantizedMultiplier(q - zp_in, multiplier, shift + 7) (reference_integer_ops),
 * uint8 128 + MultiplyByQuantizedMultiplierSmallerThanOneExp(128 (q - zp_in), ...)
 * (reference_ops), saturated; the output is scale 1/128 with zero point 0 / 128. Hand rows,
 * random rows and zero points bit for bit, zero rows, and the refused output parameters. */
#include "tests/util/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

static uint32_t g_seed = 99;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

static void ref_l2_q8(mp_dtype dt, const void *x, size_t rows, size_t depth, int32_t zi,
                      int32_t *want)
{
    for (size_t r = 0; r < rows; r++) {
        int32_t acc = 0;
        for (size_t c = 0; c < depth; c++) {
            const int32_t d = qref_load(dt, x, r * depth + c) - zi;
            acc += d * d;
        }
        int32_t m;
        int s;
        qref_inv_sqrt(acc, &m, &s);
        for (size_t c = 0; c < depth; c++) {
            const int32_t d = qref_load(dt, x, r * depth + c) - zi;
            int32_t v;
            if (dt == MP_DT_INT8) {
                v = qref_mbqm(d, m, s + 7);
                v = v < -128 ? -128 : (v > 127 ? 127 : v);
            } else { /* s <= 0: the high multiply, then the rounding shift */
                v = 128 + qref_rdpot(qref_srdhm(128 * d, m), -s);
                v = v < 0 ? 0 : (v > 255 ? 255 : v);
            }
            want[r * depth + c] = v;
        }
    }
}

/* Run an L2_NORMALIZATION of [rows, depth] with input (0.1, zi) and output (so, zo). */
static mp_status run_l2(kh_case *c, mp_dtype dt, size_t rows, size_t depth, int64_t zi,
                        float so, int64_t zo, const void *x)
{
    static const float si = 0.1f;
    static float s_so; /* the tensors keep pointers to their parameters */
    static int64_t s_zi, s_zo;
    s_so = so, s_zi = zi, s_zo = zo;
    kh_init(c, MP_OP_L2_NORMALIZATION, NULL);
    mp_tensor *in = kh_input(c, dt, 2, (int32_t[]){(int32_t)rows, (int32_t)depth}, NULL);
    mp_tensor *out = kh_output(c, dt);
    kh_quant(c, in, 1, &si, &s_zi, 0);
    kh_quant(c, out, 1, &s_so, &s_zo, 0);
    if (x)
        memcpy(in->data, x, rows * depth);
    return kh_run(c);
}

/* int8 zp 0: {3, 4} -> 3/5 and 4/5 of 128: 76.8 -> 77, 102.4 -> 102; {0, 0} -> 0 0;
 * {-128, 0} -> -1 -> -128, 0; {127, 0} -> 1 -> 128 saturated to 127.
 * uint8 zp 128: {131, 132} -> 128 + 77, 128 + 102 = 205, 230; {128, 128} -> 128 128. */
static void test_hand(void **state)
{
    (void)state;
    kh_case c;
    kh_expect_ok(&c, run_l2(&c, MP_DT_INT8, 4, 2, 0, 1.0f / 128, 0,
                            (int8_t[]){3, 4, 0, 0, -128, 0, 127, 0}));
    assert_memory_equal(c.out[0]->data, ((int8_t[]){77, 102, 0, 0, -128, 0, 127, 0}), 8);
    kh_free(&c);
    kh_expect_ok(&c, run_l2(&c, MP_DT_UINT8, 2, 2, 128, 1.0f / 128, 128,
                            (uint8_t[]){131, 132, 128, 128}));
    assert_memory_equal(c.out[0]->data, ((uint8_t[]){205, 230, 128, 128}), 4);
    kh_free(&c);
}

static void test_random(void **state)
{
    (void)state;
    size_t checked = 0;
    for (int trial = 0; trial < 200; trial++) {
        const mp_dtype dt = trial % 2 ? MP_DT_INT8 : MP_DT_UINT8;
        const size_t rows = 1 + rnd() % 5, depth = 1 + rnd() % (trial % 10 ? 40 : 3000);
        const int32_t lo = dt == MP_DT_INT8 ? -128 : 0;
        const int64_t zi = lo + (int64_t)(rnd() % 256);
        kh_case c;
        uint8_t *x = malloc(rows * depth);
        for (size_t i = 0; i < rows * depth; i++)
            x[i] = (uint8_t)(trial % 7 == 0 ? (uint8_t)zi + rnd() % 3 : rnd() % 256);
        kh_expect_ok(&c, run_l2(&c, dt, rows, depth, zi, 1.0f / 128, dt == MP_DT_INT8 ? 0 : 128,
                                x));
        int32_t *want = malloc(rows * depth * sizeof(int32_t));
        ref_l2_q8(dt, x, rows, depth, (int32_t)zi, want);
        for (size_t i = 0; i < rows * depth; i++)
            if (qref_load(dt, c.out[0]->data, i) != want[i])
                fail_msg("trial %d (%s %zux%zu, zp %d): output %zu is %d, want %d", trial,
                         mp_dtype_name(dt), rows, depth, (int)zi, i,
                         qref_load(dt, c.out[0]->data, i), want[i]);
        checked += rows * depth;
        free(want);
        free(x);
        kh_free(&c);
    }
    print_message("8-bit L2_NORMALIZATION: %zu outputs bit for bit\n", checked);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_expect_fail(&c, run_l2(&c, MP_DT_INT8, 1, 2, 0, 1.0f / 64, 0, NULL), MP_ERR_UNSUPPORTED,
                   "i8 output 't1' has scale 0.015625 and zero point 0 (TensorFlow Lite's "
                   "quantized L2_NORMALIZATION produces scale 1/128, zero point 0)");
    kh_free(&c);
    kh_expect_fail(&c, run_l2(&c, MP_DT_UINT8, 1, 2, 0, 1.0f / 128, 0, NULL), MP_ERR_UNSUPPORTED,
                   "zero point 128)");
    kh_free(&c);
    /* int16 and mismatched dtypes */
    const float s = 1.0f / 128;
    const int64_t z = 0;
    kh_init(&c, MP_OP_L2_NORMALIZATION, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't1' is u8 but input 't0' is i8");
    kh_free(&c);
    kh_init(&c, MP_OP_L2_NORMALIZATION, NULL);
    in = kh_input(&c, MP_DT_INT16, 1, (int32_t[]){2}, NULL);
    out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i16");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
