/* Tests of dtype combinations TensorFlow Lite's builtin kernels run and memprof once refused
 * (the audit in docs/engine.md, "Dtypes"), one section per operator family, each with values
 * derived by hand or from the operator's definition restated here, and the refusals of the
 * combinations TensorFlow Lite refuses too.
 *
 * SOFTMAX with an int8 / uint8 input and an int16 output (TensorFlow Lite's
 * SoftmaxQuantized<int8_t / uint8_t, int16_t>; output scale 1/65536, zero point -32768): rows
 * whose probabilities are exact in 16 bits (equal inputs: 1/n; one value alone above the
 * radius: 1, saturated at 32767), a row of powers of two (1/7, 2/7, 4/7) within 1, random rows
 * against the real softmax rounded to 1/65536 within 2; refusals of another output
 * quantization, int8 into uint8, float32 into int16, int16 into int8, int32. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

/* ---- SOFTMAX: 8-bit into int16 ------------------------------------------------------------ */

/* A SOFTMAX node of `rows` x `depth` values of dtype dt (scale si, zero point zi) into an int16
 * output of scale so and zero point zo; the inputs are x (as ints of dt's range). */
static mp_status sm16_run(kh_case *c, mp_dtype dt, int32_t rows, int32_t depth, float si,
                          int64_t zi, float so, int64_t zo, const int32_t *x, float beta)
{
    static float s_si, s_so;
    static int64_t s_zi, s_zo;
    s_si = si, s_so = so, s_zi = zi, s_zo = zo;
    kh_init(c, MP_OP_SOFTMAX, NULL);
    c->opt.beta = beta;
    mp_tensor *in = kh_input(c, dt, 2, (int32_t[]){rows, depth}, NULL);
    mp_tensor *out = kh_output(c, MP_DT_INT16);
    kh_quant(c, in, 1, &s_si, &s_zi, 0);
    kh_quant(c, out, 1, &s_so, &s_zo, 0);
    for (int32_t i = 0; i < rows * depth; i++)
        ((uint8_t *)in->data)[i] = (uint8_t)x[i];
    return kh_run(c);
}

static int32_t out16(const kh_case *c, size_t i) { return ((const int16_t *)c->out[0]->data)[i]; }

static void test_softmax_q8_to_i16_hand(void **state)
{
    (void)state;
    const mp_dtype dts[2] = {MP_DT_INT8, MP_DT_UINT8};
    for (int k = 0; k < 2; k++) {
        const int32_t off = dts[k] == MP_DT_UINT8 ? 128 : 0; /* the same reals in uint8 */
        /* row 0: four equal values: 1/4 each -> 65536 / 4 - 32768 = -16384 exactly.
         * row 1: 100 and three values 200 steps of 0.1 below (exp(-20) ~ 2e-9, far below
         * 1/65536): 1 -> 65536 - 32768 saturates at 32767, the others the lowest value
         * -32768.
         * row 2: 0, 16, 32 and -128 at scale ln(2) / 16: exp in the ratio 1 : 2 : 4 and
         * exp(-8 ln 2) = 1/256: probabilities 256/1793, 512/1793, 1024/1793, 1/1793. */
        const int32_t x[12] = {5 + off,   5 + off,    5 + off,   5 + off,
                               100 + off, -100 + off, -100 + off, -100 + off,
                               0 + off,   16 + off,   32 + off,  -128 + off};
        kh_case c;
        kh_expect_ok(&c, sm16_run(&c, dts[k], 3, 4, 0.1f, off, 1.0f / 65536, -32768, x, 1.0f));
        for (int i = 0; i < 4; i++)
            assert_int_equal(out16(&c, (size_t)i), -16384);
        assert_int_equal(out16(&c, 4), 32767);
        for (int i = 5; i < 8; i++)
            assert_int_equal(out16(&c, (size_t)i), -32768);
        kh_free(&c);
        kh_expect_ok(&c, sm16_run(&c, dts[k], 1, 4, (float)(log(2.0) / 16), off, 1.0f / 65536,
                                  -32768, x + 8, 1.0f));
        /* round(p * 65536) - 32768 for p = 256, 512, 1024, 1 over 1793 */
        const int32_t want[4] = {9357 - 32768, 18714 - 32768, 37428 - 32768, 37 - 32768};
        for (int i = 0; i < 4; i++)
            if (abs(out16(&c, (size_t)i) - want[i]) > 1)
                fail_msg("%s element %d: got %d, want %d within 1", mp_dtype_name(dts[k]), i,
                         out16(&c, (size_t)i), want[i]);
        kh_free(&c);
    }
}

/* Random rows of int8 and uint8 inputs at several scales and betas against the real softmax
 * of the dequantized row, rounded to 1/65536 and offset by -32768: within 2 (the reference's
 * Q12.19 sum and Q0.31 exps are exact to about 2^-17 of a probability). */
static void test_softmax_q8_to_i16_random(void **state)
{
    (void)state;
    const mp_dtype dts[2] = {MP_DT_INT8, MP_DT_UINT8};
    const float scales[3] = {0.02f, 0.0625f, 0.3f}, betas[2] = {1.0f, 0.5f};
    uint32_t seed = 77;
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < 3; s++)
            for (int b = 0; b < 2; b++) {
                enum { R = 5, D = 13 };
                const int32_t zi = dts[k] == MP_DT_INT8 ? -3 : 120;
                const int32_t lo = dts[k] == MP_DT_INT8 ? -128 : 0;
                int32_t x[R * D];
                for (int i = 0; i < R * D; i++)
                    x[i] = lo + kh_irand(&seed, 256);
                kh_case c;
                kh_expect_ok(&c, sm16_run(&c, dts[k], R, D, scales[s], zi, 1.0f / 65536, -32768,
                                          x, betas[b]));
                for (int r = 0; r < R; r++) {
                    double mx = -INFINITY, sum = 0;
                    for (int j = 0; j < D; j++)
                        mx = fmax(mx, (double)(x[r * D + j] - zi) * scales[s]);
                    for (int j = 0; j < D; j++)
                        sum += exp(betas[b] * ((x[r * D + j] - zi) * (double)scales[s] - mx));
                    for (int j = 0; j < D; j++) {
                        double p =
                            exp(betas[b] * ((x[r * D + j] - zi) * (double)scales[s] - mx)) / sum;
                        double w = fmin(round(p * 65536) - 32768, 32767);
                        int32_t got = out16(&c, (size_t)(r * D + j));
                        if (fabs(got - w) > 2)
                            fail_msg("%s scale %g beta %g [%d,%d]: got %d, want %g within 2",
                                     mp_dtype_name(dts[k]), (double)scales[s], (double)betas[b],
                                     r, j, got, w);
                    }
                }
                kh_free(&c);
            }
}

static void test_softmax_dtype_refusals(void **state)
{
    (void)state;
    const int32_t x[4] = {1, 2, 3, 4};
    kh_case c;
    /* int16 output of another quantization than 1/65536, -32768 */
    kh_expect_fail(&c, sm16_run(&c, MP_DT_INT8, 1, 4, 0.1f, 0, 1.0f / 32768, 0, x, 1.0f),
                   MP_ERR_UNSUPPORTED, "scale 1/65536 and zero point -32768");
    kh_free(&c);
    /* int8 into uint8, float32 into int16, int16 into int8, int32 */
    static const float s8 = 1.0f / 256, s16 = 1.0f / 32768;
    static const int64_t z8 = -128, z0 = 0;
    const struct {
        mp_dtype in, out;
        const char *needle;
    } bad[] = {{MP_DT_INT8, MP_DT_UINT8, "is u8 but input"},
               {MP_DT_FLOAT32, MP_DT_INT16, "expected f32"},
               {MP_DT_INT16, MP_DT_INT8, NULL},
               {MP_DT_INT32, MP_DT_INT32, "supported: f32, i8, u8, i16"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kh_init(&c, MP_OP_SOFTMAX, NULL);
        mp_tensor *in = kh_input(&c, bad[i].in, 1, (int32_t[]){4}, NULL);
        mp_tensor *out = kh_output(&c, bad[i].out);
        if (bad[i].in != MP_DT_FLOAT32 && bad[i].in != MP_DT_INT32)
            kh_quant(&c, in, 1, bad[i].in == MP_DT_INT16 ? &s16 : &s8, &z0, 0);
        if (bad[i].out == MP_DT_INT8 || bad[i].out == MP_DT_UINT8)
            kh_quant(&c, out, 1, &s8, bad[i].out == MP_DT_INT8 ? &z8 : &z0, 0);
        if (bad[i].out == MP_DT_INT16)
            kh_quant(&c, out, 1, &s16, &z0, 0);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, bad[i].needle);
        kh_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_q8_to_i16_hand),
        cmocka_unit_test(test_softmax_q8_to_i16_random),
        cmocka_unit_test(test_softmax_dtype_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
