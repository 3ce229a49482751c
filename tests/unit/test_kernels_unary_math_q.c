/* Tests of int8 EXP, LOG, RSQRT and SQRT (unary_math.c; issue 16's quantized transformer and
 * speech models): hand-derived values, then every valid input byte under several
 * quantizations against TensorFlow Lite's definitions restated here, bit for bit: its
 * LUTPopulate in float for EXP and LOG (LOG of a value <= 0 is the output's lowest real
 * value), elementwise.cc's SQRT (sqrtf, divided, truncated) and RSQRT (gemmlowp's fixed-point
 * inverse square root, GetInvSqrtQuantizedMultiplierExp, and MultiplyByQuantizedMultiplier as
 * quant_ref.h restates them). Errors: an input below the zero point of
 * RSQRT / SQRT fails the run; uint8 is refused (TensorFlow Lite has no uint8 form). */
#include "tests/util/testutil.h"

#include <math.h>
#include <string.h>

#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

typedef struct qp {
    float si, so;
    int64_t zi, zo;
} qp;

/* Run op on int8 bytes x[0..n) quantized by q; y gets the output bytes. */
static mp_status run_q(int32_t op, const qp *q, const int8_t *x, int32_t n, int8_t *y,
                       kh_case *c)
{
    kh_init(c, op, NULL);
    mp_tensor *in = kh_input(c, MP_DT_INT8, 1, &n, NULL);
    memcpy(in->data, x, (size_t)n);
    mp_tensor *out = kh_output(c, MP_DT_INT8);
    kh_quant(c, in, 1, &q->si, &q->zi, 0);
    kh_quant(c, out, 1, &q->so, &q->zo, 0);
    mp_status st = kh_run(c);
    if (st == MP_OK)
        memcpy(y, out->data, (size_t)n);
    return st;
}

static void expect_q(int32_t op, qp q, const int8_t *x, const int8_t *want, int32_t n)
{
    kh_case c;
    int8_t y[256];
    kh_expect_ok(&c, run_q(op, &q, x, n, y, &c));
    for (int32_t i = 0; i < n; i++)
        if (y[i] != want[i])
            fail_msg("op %d input %d: got %d, want %d", op, x[i], y[i], want[i]);
    kh_free(&c);
}

/* ---- the references ------------------------------------------------------------------- */

static int32_t sat8(int64_t v) { return v < -128 ? -128 : (v > 127 ? 127 : (int32_t)v); }

/* LUTPopulate: dequantize, f, times 1 / out_scale rounded, plus the zero point in float. */
static int32_t ref_lut(const qp *q, int32_t v, float (*f)(float, const qp *))
{
    const float x = q->si * (float)(v - (int32_t)q->zi);
    const float r = roundf(f(x, q) * (1.0f / q->so)) + (float)q->zo;
    return sat8(r > 1e9f ? 1000000000LL : (r < -1e9f ? -1000000000LL : (int64_t)r));
}

static float ref_exp(float x, const qp *q) { (void)q; return expf(x); }

static float ref_log(float x, const qp *q)
{
    return x <= 0.0f ? (float)(-128 - (int32_t)q->zo) * q->so : logf(x);
}

static int32_t ref_rsqrt(const qp *q, int32_t v)
{
    const int32_t d = v - (int32_t)q->zi;
    if (d == 0)
        return 127;
    int32_t m, s, om;
    int sh, osh;
    qref_inv_sqrt(d, &m, &sh);
    s = sh;
    qref_quantize_multiplier(1.0 / (double)(sqrtf(q->si) * q->so), &om, &osh);
    const int32_t data = qref_mbqm(1, m, s + 20);
    return sat8((int64_t)qref_mbqm(data, om, osh - 20) + q->zo);
}

static int32_t ref_sqrt(const qp *q, int32_t v)
{
    const float x = q->si * (float)(v - (int32_t)q->zi);
    return sat8((int64_t)(int32_t)(sqrtf(x) / q->so) + q->zo);
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_hand(void **state)
{
    (void)state;
    /* EXP, in 0.05 / 0, out 0.1 / -128: 0 -> e^0 = 1 -> 10 -> -118; 20 -> e^1 = 2.718 -> 27
     * -> -101; -128 -> e^-6.4 = 0.0017 -> 0 -> -128; 127 -> e^6.35 = 572.5 -> saturated */
    expect_q(MP_OP_EXP, (qp){0.05f, 0.1f, 0, -128}, (int8_t[]){0, 20, -128, 127},
             (int8_t[]){-118, -101, -128, 127}, 4);
    /* LOG, in 0.1 / -100, out 0.05 / 0: -90 -> ln 1 = 0; -73 -> ln 2.7 = 0.9933 -> 19.87 ->
     * 20; -100 (0) and -120 (negative) -> the lowest output, -128 */
    expect_q(MP_OP_LOG, (qp){0.1f, 0.05f, -100, 0}, (int8_t[]){-90, -73, -100, -120},
             (int8_t[]){0, 20, -128, -128}, 4);
    /* RSQRT, in 0.25 / 0, out 1/64 / -128: 4 -> 1/sqrt(1) = 1 -> 64 -> -64; 16 -> 0.5 -> 32
     * -> -96; 1 -> 1/sqrt(0.25) = 2 -> 128 -> 0; 0 -> the largest, 127 */
    expect_q(MP_OP_RSQRT, (qp){0.25f, 1.0f / 64, 0, -128}, (int8_t[]){4, 16, 1, 0},
             (int8_t[]){-64, -96, 0, 127}, 4);
    /* SQRT, in 0.5 / -10, out 0.1 / 0: -10 -> 0; -8 -> sqrt 1 = 1 -> 10; 0 -> sqrt 5 =
     * 2.236 -> 22 (truncated); 127 -> sqrt 68.5 = 8.28 -> 82 */
    expect_q(MP_OP_SQRT, (qp){0.5f, 0.1f, -10, 0}, (int8_t[]){-10, -8, 0, 127},
             (int8_t[]){0, 10, 22, 82}, 4);
}

/* Every input byte (RSQRT / SQRT: those at or above the zero point) for several
 * quantizations, bit for bit against the references. */
static void test_all_inputs(void **state)
{
    (void)state;
    const qp qs[] = {
        {0.05f, 0.1f, 0, -128},   {0.1f, 0.05f, -100, 0},   {0.25f, 1.0f / 64, 0, -128},
        {0.5f, 0.1f, -10, 0},     {0.0123f, 0.0371f, 17, -3}, {0.9f, 0.002f, -128, 5},
        {0.003f, 2.5f, 127, 100}, {1.0f / 256, 1.0f / 128, -128, -128},
    };
    const int32_t ops[] = {MP_OP_EXP, MP_OP_LOG, MP_OP_RSQRT, MP_OP_SQRT};
    size_t checked = 0;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
            const qp *q = &qs[k];
            const bool nonneg = ops[o] == MP_OP_RSQRT || ops[o] == MP_OP_SQRT;
            int8_t x[256], y[256];
            int32_t n = 0;
            for (int32_t v = nonneg ? (int32_t)q->zi : -128; v <= 127; v++)
                x[n++] = (int8_t)v;
            kh_case c;
            kh_expect_ok(&c, run_q(ops[o], q, x, n, y, &c));
            for (int32_t i = 0; i < n; i++) {
                int32_t want;
                switch (ops[o]) {
                case MP_OP_EXP: want = ref_lut(q, x[i], ref_exp); break;
                case MP_OP_LOG: want = ref_lut(q, x[i], ref_log); break;
                case MP_OP_RSQRT: want = ref_rsqrt(q, x[i]); break;
                default: want = ref_sqrt(q, x[i]); break;
                }
                if (y[i] != want)
                    fail_msg("op %d case %zu input %d: got %d, want %d", ops[o], k, x[i], y[i],
                             want);
                checked++;
            }
            kh_free(&c);
        }
    print_message("int8 EXP / LOG / RSQRT / SQRT: %zu inputs bit for bit\n", checked);
}

/* The inverse square root on its own over a wide range, against the float value: within
 * 2^-20 relative (the fixed point's precision), and the restatement equal. */
static void test_inv_sqrt_range(void **state)
{
    (void)state;
    for (int64_t x = 2; x < INT32_MAX; x = x * 3 / 2 + 1) {
        int32_t m = 0;
        int s = 0;
        qref_inv_sqrt((int32_t)x, &m, &s);
        const double got = (double)m * ldexp(1.0, s - 31), want = 1.0 / sqrt((double)x);
        if (fabs(got - want) > want * 2e-5)
            fail_msg("inv sqrt %lld: %.9g, want %.9g", (long long)x, got, want);
    }
    /* an RSQRT of zero point -128 covers d up to 255 */
    kh_case c;
    int8_t x[2] = {127, -127}, y[2];
    qp q = {0.5f, 0.01f, -128, 0};
    kh_expect_ok(&c, run_q(MP_OP_RSQRT, &q, x, 2, y, &c));
    assert_int_equal(y[0], ref_rsqrt(&q, 127));
    assert_int_equal(y[1], ref_rsqrt(&q, -127));
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    int8_t y[3];
    /* a negative real input */
    qp q = {0.5f, 0.1f, 0, 0};
    kh_expect_fail(&c, run_q(MP_OP_RSQRT, &q, (int8_t[]){4, -1, 9}, 3, y, &c), MP_ERR_ARG,
                   "RSQRT is only defined for non-negative values: 't0' element 1 is -1");
    kh_free(&c);
    kh_expect_fail(&c, run_q(MP_OP_SQRT, &q, (int8_t[]){-2}, 1, y, &c), MP_ERR_ARG,
                   "SQRT is only defined for non-negative values");
    kh_free(&c);
    /* uint8 has no form in TensorFlow Lite */
    const int32_t ops[] = {MP_OP_EXP, MP_OP_LOG, MP_OP_RSQRT, MP_OP_SQRT};
    for (size_t o = 0; o < 4; o++) {
        const float s = 0.5f;
        const int64_t z = 128;
        kh_init(&c, ops[o], NULL);
        mp_tensor *in = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, NULL);
        mp_tensor *out = kh_output(&c, MP_DT_UINT8);
        kh_quant(&c, in, 1, &s, &z, 0);
        kh_quant(&c, out, 1, &s, &z, 0);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has dtype u8 (supported: f32, i8, i16)");
        kh_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_all_inputs),
        cmocka_unit_test(test_inv_sqrt_range),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
