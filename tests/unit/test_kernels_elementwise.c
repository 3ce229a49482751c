/* Tests of the elementwise math kernels: one input (ABS, NEG, SQUARE, SQRT, RSQRT, EXP, LOG,
 * LEAKY_RELU, GELU; unary_math.c) and two broadcast inputs (MAXIMUM, MINIMUM,
 * SQUARED_DIFFERENCE, POW, PRELU; binary_math.c). Hand-computed values (in the comments),
 * randomized cases against the mathematical definitions computed in double, broadcasting
 * written out index by index (kh_bc_offset), both the XNNPACK path (inputs that are not
 * constants) and the plain-C path (constant inputs), integer wrapping, the 8-bit formulas
 * of TensorFlow Lite on hand cases and on every input byte, and errors with messages. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* Run a one-input float32 case on x (n elements; constant when `as_const`), y out. */
static void run_unary_f32(int32_t op, const float *x, int32_t n, bool as_const, float alpha,
                          bool approximate, float *y)
{
    kh_case c;
    kh_init(&c, op, NULL);
    c.opt.alpha = alpha;
    c.opt.approximate = approximate;
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 1, &n, as_const ? x : NULL);
    if (!as_const)
        memcpy(in->data, x, sizeof(float) * (size_t)n);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], n);
    memcpy(y, out->data, sizeof(float) * (size_t)n);
    kh_free(&c);
}

static void expect_floats(const float *got, const float *want, int32_t n, double tol)
{
    for (int32_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - (double)want[i]) <= tol * fmax(1.0, fabs((double)want[i])))) {
            fprintf(stderr, "element %d: got %.9g want %.9g\n", i, (double)got[i],
                    (double)want[i]);
            fail();
        }
}

/* ---- one input: float32 ----------------------------------------------------------------- */

static void test_unary_hand(void **state)
{
    (void)state;
    static const float x[5] = {-2.0f, -0.5f, 0.0f, 0.25f, 4.0f};
    static const struct {
        int32_t op;
        float in[5], want[5];
        int32_t n;
        float alpha;
        bool approx;
    } cases[] = {
        {MP_OP_ABS, {0}, {2, 0.5f, 0, 0.25f, 4}, 5, 0, false},
        {MP_OP_NEG, {0}, {2, 0.5f, -0.0f, -0.25f, -4}, 5, 0, false},
        {MP_OP_SQUARE, {0}, {4, 0.25f, 0, 0.0625f, 16}, 5, 0, false},
        /* LEAKY_RELU alpha 0.2: x > 0 ? x : 0.2 x */
        {MP_OP_LEAKY_RELU, {0}, {-0.4f, -0.1f, 0, 0.25f, 4}, 5, 0.2f, false},
        {MP_OP_SQRT, {0, 0.25f, 4, 9}, {0, 0.5f, 2, 3}, 4, 0, false},
        {MP_OP_RSQRT, {0.25f, 4, 1, 16}, {2, 0.5f, 1, 0.25f}, 4, 0, false},
        /* e^0, e^1, e^-1, e^ln 2 */
        {MP_OP_EXP, {0, 1, -1, 0.69314718f}, {1, 2.7182818f, 0.36787944f, 2}, 4, 0, false},
        /* ln 1, ln e, ln 0.5, ln 8 */
        {MP_OP_LOG, {1, 2.7182818f, 0.5f, 8}, {0, 1, -0.69314718f, 2.0794415f}, 4, 0, false},
        /* 0.5 x (1 + erf(x / sqrt 2)): Phi(1) = 0.84134475, so GELU(-1) = -(1 - Phi(1)) */
        {MP_OP_GELU, {-1, 0, 0.5f, 1, -3}, {-0.15865525f, 0, 0.34573123f, 0.84134475f,
                                             -0.0040496941f}, 5, 0, false},
        /* 0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3))) */
        {MP_OP_GELU, {-1, 0, 0.5f, 1, -3}, {-0.15880801f, 0, 0.34571401f, 0.84119199f,
                                             -0.0036373921f}, 5, 0, true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int as_const = 0; as_const < 2; as_const++) {
            /* the first four rows run on x; the others carry their own inputs */
            const float *in = k < 4 ? x : cases[k].in;
            float y[5];
            run_unary_f32(cases[k].op, in, cases[k].n, as_const, cases[k].alpha,
                          cases[k].approx, y);
            expect_floats(y, cases[k].want, cases[k].n, 2e-7);
        }
}

/* The definitions, in double. */
static double ref_unary(int32_t op, double x, double alpha, bool approx)
{
    switch (op) {
    case MP_OP_ABS: return fabs(x);
    case MP_OP_NEG: return -x;
    case MP_OP_SQUARE: return x * x;
    case MP_OP_SQRT: return sqrt(x);
    case MP_OP_RSQRT: return 1.0 / sqrt(x);
    case MP_OP_EXP: return exp(x);
    case MP_OP_LOG: return log(x);
    case MP_OP_LEAKY_RELU: return x > 0 ? x : alpha * x;
    default:
        if (approx)
            return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * erfc(-x / sqrt(2.0));
    }
}

/* Random lengths (odd ones, beyond vector widths), both paths, against the definitions.
 * Tolerances: ABS, NEG, SQUARE, SQRT and LEAKY_RELU are one correctly rounded operation
 * (relative 2^-24 = 6e-8, checked at 1.2e-7); EXP, LOG (glibc's expf / logf: < 1 ulp) and
 * RSQRT (two roundings) at 3e-7; GELU composes erfc or tanh with three more roundings, and
 * its tanh form cancels in 1 + tanh for large negative x, where the absolute error is a few
 * ulp of 0.5 |x|: checked at 1e-6 relative to max(|GELU(x)|, |x|). */
static void test_unary_random(void **state)
{
    (void)state;
    static const int32_t ops[] = {MP_OP_ABS, MP_OP_NEG, MP_OP_SQUARE, MP_OP_SQRT, MP_OP_RSQRT,
                                  MP_OP_EXP, MP_OP_LOG, MP_OP_LEAKY_RELU, MP_OP_GELU,
                                  MP_OP_GELU};
    uint32_t seed = 99;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        const int32_t op = ops[k];
        const bool approx = k == sizeof ops / sizeof ops[0] - 1;
        const bool positive = op == MP_OP_SQRT || op == MP_OP_RSQRT || op == MP_OP_LOG;
        const double tol = op == MP_OP_GELU ? 1e-6
                           : (op == MP_OP_EXP || op == MP_OP_LOG || op == MP_OP_RSQRT) ? 3e-7
                                                                                     : 1.2e-7;
        for (int trial = 0; trial < 12; trial++) {
            int32_t n = 1 + (int32_t)((unsigned)(kh_frand(&seed, 1.0f) + 1.0f) * 600.0f);
            float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
            for (int32_t i = 0; i < n; i++) {
                float r = kh_frand(&seed, 1.0f);
                x[i] = positive ? 0.01f + 50.0f * (r + 1.0f) : (op == MP_OP_EXP ? 20 * r : 8 * r);
            }
            const float alpha = kh_frand(&seed, 2.0f);
            run_unary_f32(op, x, n, trial & 1, alpha, approx, y);
            for (int32_t i = 0; i < n; i++) {
                double want = ref_unary(op, x[i], alpha, approx);
                double scale = op == MP_OP_GELU ? fmax(fabs(want), fabs(x[i])) : fabs(want);
                if (!(fabs(y[i] - want) <= tol * fmax(scale, 1e-30))) {
                    fprintf(stderr, "op %d x %.9g: got %.9g want %.9g\n", op, (double)x[i],
                            (double)y[i], want);
                    fail();
                }
            }
            free(x);
            free(y);
        }
    }
}

/* ---- one input: integers ---------------------------------------------------------------- */

static void test_unary_int(void **state)
{
    (void)state;
    /* two's complement: |INT32_MIN| and -INT32_MIN wrap back to INT32_MIN */
    static const int32_t x32[4] = {-7, 0, 5, INT32_MIN};
    static const int32_t abs32[4] = {7, 0, 5, INT32_MIN}, neg32[4] = {7, 0, -5, INT32_MIN};
    static const int64_t x64[3] = {-9000000000LL, 3, INT64_MIN};
    static const int64_t neg64[3] = {9000000000LL, -3, INT64_MIN};
    const struct {
        int32_t op;
        mp_dtype dt;
        const void *x, *want;
        int32_t n;
    } cases[] = {
        {MP_OP_ABS, MP_DT_INT32, x32, abs32, 4},
        {MP_OP_NEG, MP_DT_INT32, x32, neg32, 4},
        {MP_OP_NEG, MP_DT_INT64, x64, neg64, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kh_case c;
        kh_init(&c, cases[k].op, NULL);
        kh_input(&c, cases[k].dt, 1, &cases[k].n, cases[k].x);
        mp_tensor *out = kh_output(&c, cases[k].dt);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->data, cases[k].want, (size_t)out->bytes);
        kh_free(&c);
    }
}

/* ---- one input: 8-bit ------------------------------------------------------------------- */

/* Run an 8-bit one-input case over given bytes. */
static void run_unary_q8(int32_t op, mp_dtype dt, float si, int64_t zi, float so, int64_t zo,
                         float alpha, const uint8_t *x, int32_t n, uint8_t *y)
{
    kh_case c;
    kh_init(&c, op, NULL);
    c.opt.alpha = alpha;
    mp_tensor *in = kh_input(&c, dt, 1, &n, NULL);
    memcpy(in->data, x, (size_t)n);
    mp_tensor *out = kh_output(&c, dt);
    kh_quant(&c, in, 1, &si, &zi, 0);
    kh_quant(&c, out, 1, &so, &zo, 0);
    kh_expect_ok(&c, kh_run(&c));
    memcpy(y, out->data, (size_t)n);
    kh_free(&c);
}

static void test_unary_q8_hand(void **state)
{
    (void)state;
    int8_t y[4];
    /* ABS int8, scales 0.5 both, zp -10 -> -128: q -14 is -4 steps, |.| 4 -> -124; q 0 is
     * 10 steps -> -118; q 127 is 137 steps -> -128 + 137 = 9; q -10 is 0 -> -128 */
    run_unary_q8(MP_OP_ABS, MP_DT_INT8, 0.5f, -10, 0.5f, -128, 0,
                 (const uint8_t *)(const int8_t[]){-14, 0, 127, -10}, 4, (uint8_t *)y);
    assert_memory_equal(y, ((int8_t[]){-124, -118, 9, -128}), 4);
    /* ABS rescaled: output scale 0.25 zp 0, ratio 2: |-4| * 2 = 8; 137 * 2 = 274 -> 127 */
    run_unary_q8(MP_OP_ABS, MP_DT_INT8, 0.5f, -10, 0.25f, 0, 0,
                 (const uint8_t *)(const int8_t[]){-14, 0, 127, -10}, 4, (uint8_t *)y);
    assert_memory_equal(y, ((int8_t[]){8, 20, 127, 0}), 4);
    /* NEG int8, scale 0.1 both, zp 3 -> -5: zi + zo - q = -2 - q: 10 -> -12, -128 -> 126,
     * 127 -> -129 saturated to -128, 3 -> -5 */
    run_unary_q8(MP_OP_NEG, MP_DT_INT8, 0.1f, 3, 0.1f, -5, 0,
                 (const uint8_t *)(const int8_t[]){10, -128, 127, 3}, 4, (uint8_t *)y);
    assert_memory_equal(y, ((int8_t[]){-12, 126, -128, -5}), 4);
    /* LEAKY_RELU int8 alpha 0.25, scales 0.5, zp 0: 8 -> 8; -8 -> -2; -7 -> -1.75 -> -2
     * (rounded half away: multiplier 2^30, shift -1: round(-3.5) = -4 then -4 / 2 = -2) */
    run_unary_q8(MP_OP_LEAKY_RELU, MP_DT_INT8, 0.5f, 0, 0.5f, 0, 0.25f,
                 (const uint8_t *)(const int8_t[]){8, -8, -7, 0}, 4, (uint8_t *)y);
    assert_memory_equal(y, ((int8_t[]){8, -2, -2, 0}), 4);
    /* uint8, zp 128: 120 is -8 steps -> -2 -> 126; 200 stays 200 */
    uint8_t u[2];
    run_unary_q8(MP_OP_LEAKY_RELU, MP_DT_UINT8, 0.5f, 128, 0.5f, 128, 0.25f,
                 (const uint8_t[]){120, 200}, 2, u);
    assert_memory_equal(u, ((uint8_t[]){126, 200}), 2);
    /* GELU int8, scales 0.05, zp 0: q 20 is 1.0 -> 0.8413 / 0.05 = 16.83 -> 17; q -20 is
     * -1.0 -> -0.1587 / 0.05 = -3.17 -> -3 */
    run_unary_q8(MP_OP_GELU, MP_DT_INT8, 0.05f, 0, 0.05f, 0, 0,
                 (const uint8_t *)(const int8_t[]){20, -20, 0, 127}, 4, (uint8_t *)y);
    assert_memory_equal(y, ((int8_t[]){17, -3, 0, 127}), 4);
}

/* Every input byte for random quantizations: the result within one step of the real-valued
 * result (round(f(real) / out_scale) + zp, saturated): ABS, NEG and LEAKY_RELU round twice
 * (the multiplier's 31 bits, then the shift); GELU's table is defined in float (TensorFlow
 * Lite's lookup table), so it must equal the float formula computed here exactly. */
static void test_unary_q8_all_bytes(void **state)
{
    (void)state;
    uint32_t seed = 4242;
    static const int32_t ops[] = {MP_OP_ABS, MP_OP_NEG, MP_OP_LEAKY_RELU, MP_OP_GELU};
    uint8_t x[256], y[256];
    for (int v = 0; v < 256; v++)
        x[v] = (uint8_t)v;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int trial = 0; trial < 40; trial++) {
            const int32_t op = ops[k];
            const bool s8 = op == MP_OP_ABS || op == MP_OP_NEG || (trial & 1);
            const mp_dtype dt = s8 ? MP_DT_INT8 : MP_DT_UINT8;
            const int32_t lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
            float si = 0.01f + 0.2f * (kh_frand(&seed, 1.0f) + 1.0f);
            float so = op == MP_OP_NEG ? si : 0.01f + 0.2f * (kh_frand(&seed, 1.0f) + 1.0f);
            int64_t zi = lo + (int64_t)((kh_frand(&seed, 1.0f) + 1.0f) * 127.0f);
            int64_t zo = lo + (int64_t)((kh_frand(&seed, 1.0f) + 1.0f) * 127.0f);
            float alpha = kh_frand(&seed, 1.0f);
            run_unary_q8(op, dt, si, zi, so, zo, alpha, x, 256, y);
            mp_op_options o = {.alpha = alpha};
            for (int v = 0; v < 256; v++) {
                int32_t q = s8 ? (int8_t)v : v, got = s8 ? (int8_t)y[v] : y[v];
                double real = (double)si * (q - zi), f;
                if (op == MP_OP_GELU) {
                    /* TensorFlow Lite's table: in float, rounded half away from zero */
                    float xf = si * (float)(q - zi);
                    float g = 0.5f * xf * erfcf(xf * -0.70710678118654752f);
                    float r = roundf(g * (1.0f / so)) + (float)zo;
                    int32_t want = r < lo ? lo : (r > hi ? hi : (int32_t)r);
                    if (got != want)
                        fail_msg("GELU si %g zi %lld so %g zo %lld q %d: got %d want %d",
                                 (double)si, (long long)zi, (double)so, (long long)zo, q, got,
                                 want);
                    continue;
                }
                f = op == MP_OP_ABS ? fabs(real) : (op == MP_OP_NEG ? -real
                                                   : (real > 0 ? real : o.alpha * real));
                double want = round(f / so) + (double)zo;
                want = want < lo ? lo : (want > hi ? hi : want);
                if (fabs(got - want) > 1)
                    fail_msg("op %d si %g zi %lld so %g zo %lld alpha %g q %d: got %d want %g", op,
                             (double)si, (long long)zi, (double)so, (long long)zo, (double)alpha,
                             q, got, want);
            }
        }
}

/* ---- two inputs ------------------------------------------------------------------------- */

typedef struct bin_io {
    mp_dtype dt;
    int32_t ra, rb;
    int32_t da[MP_MAX_RANK], db[MP_MAX_RANK];
} bin_io;

/* A two-input case; a and b data copied in (constants when as_const). */
static mp_tensor *bin_case(kh_case *c, int32_t op, const bin_io *io, const void *a,
                           const void *b, bool as_const)
{
    kh_init(c, op, NULL);
    mp_tensor *ta = kh_input(c, io->dt, io->ra, io->da, as_const ? a : NULL);
    mp_tensor *tb = kh_input(c, io->dt, io->rb, io->db, as_const ? b : NULL);
    if (!as_const) {
        memcpy(ta->data, a, ta->bytes);
        memcpy(tb->data, b, tb->bytes);
    }
    return kh_output(c, io->dt);
}

static void test_binary_hand(void **state)
{
    (void)state;
    kh_case c;
    const bin_io f23_3 = {MP_DT_FLOAT32, 2, 1, {2, 3}, {3}};
    static const float a[6] = {1, -2, 3, -4, 5, -6}, b[3] = {0, 0, 4};
    for (int as_const = 0; as_const < 2; as_const++) {
        /* [2,3] against [3]: rows {1,-2,3}, {-4,5,-6} against {0,0,4} */
        mp_tensor *out = bin_case(&c, MP_OP_MAXIMUM, &f23_3, a, b, as_const);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->data, ((float[]){1, 0, 4, 0, 5, 4}), 24);
        kh_free(&c);
        out = bin_case(&c, MP_OP_MINIMUM, &f23_3, a, b, as_const);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->data, ((float[]){0, -2, 3, -4, 0, -6}), 24);
        kh_free(&c);
        /* [2,1] against [1,3] -> [2,3]: (1-0)^2, (1-1)^2, (1-2)^2, (3-0)^2, (3-1)^2, (3-2)^2 */
        const bin_io sq = {MP_DT_FLOAT32, 2, 2, {2, 1}, {1, 3}};
        out = bin_case(&c, MP_OP_SQUARED_DIFFERENCE, &sq, (float[]){1, 3}, (float[]){0, 1, 2},
                       as_const);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->rank, 2);
        assert_int_equal(out->dims[0], 2);
        assert_int_equal(out->dims[1], 3);
        assert_memory_equal(out->data, ((float[]){1, 0, 1, 9, 4, 1}), 24);
        kh_free(&c);
        /* POW: 2^0.5, 9^0.5, 4^0.5 */
        const bin_io pw = {MP_DT_FLOAT32, 1, 0, {3}, {0}};
        out = bin_case(&c, MP_OP_POW, &pw, (float[]){2, 9, 4}, (float[]){0.5f}, as_const);
        kh_expect_ok(&c, kh_run(&c));
        expect_floats(out->data, (float[]){1.41421356f, 3, 2}, 3, 1.2e-7);
        kh_free(&c);
        /* PRELU [1,2,2] with alpha [2], one slope per channel (the last dimension): -1 and -3
         * are both in channel 0: -1 * 0.5, 2, -3 * 0.5, 4 */
        const bin_io pr = {MP_DT_FLOAT32, 3, 1, {1, 2, 2}, {2}};
        out = bin_case(&c, MP_OP_PRELU, &pr, (float[]){-1, 2, -3, 4}, (float[]){0.5f, 0.25f},
                       as_const);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->data, ((float[]){-0.5f, 2, -1.5f, 4}), 16);
        kh_free(&c);
    }
}

static void test_binary_int(void **state)
{
    (void)state;
    kh_case c;
    /* int32 POW by squaring: 2^10, 3^3, (-2)^3, 0^0 = 1, 7^1, 3^21 wraps to 1870418611 */
    const bin_io p6 = {MP_DT_INT32, 1, 1, {6}, {6}};
    mp_tensor *out = bin_case(&c, MP_OP_POW, &p6, (int32_t[]){2, 3, -2, 0, 7, 3},
                              (int32_t[]){10, 3, 3, 0, 1, 21}, false);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int32_t[]){1024, 27, -8, 1, 7, 1870418611}), 24);
    kh_free(&c);
    /* a negative exponent is refused while running */
    const bin_io p2 = {MP_DT_INT32, 1, 1, {2}, {2}};
    bin_case(&c, MP_OP_POW, &p2, (int32_t[]){2, 2}, (int32_t[]){1, -1}, false);
    kh_expect_error(&c, MP_ERR_ARG, "negative exponent");
    kh_free(&c);
    /* int32 SQUARED_DIFFERENCE wraps: (2^16)^2 = 2^32 -> 0; (5 - -3)^2 = 64 */
    out = bin_case(&c, MP_OP_SQUARED_DIFFERENCE, &p2, (int32_t[]){65536, 5}, (int32_t[]){0, -3},
                   false);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int32_t[]){0, 64}), 8);
    kh_free(&c);
    /* MAXIMUM int64 broadcast against a scalar; MINIMUM int8 on the stored values */
    const bin_io m64 = {MP_DT_INT64, 1, 0, {3}, {0}};
    out = bin_case(&c, MP_OP_MAXIMUM, &m64, (int64_t[]){-5, 1LL << 40, 7}, (int64_t[]){6}, true);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int64_t[]){6, 1LL << 40, 7}), 24);
    kh_free(&c);
    const bin_io m8 = {MP_DT_INT8, 1, 1, {3}, {3}};
    out = bin_case(&c, MP_OP_MINIMUM, &m8, (int8_t[]){-128, 5, 127}, (int8_t[]){0, 6, -1}, false);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){-128, 5, -1}), 3);
    kh_free(&c);
}

/* Random broadcast shapes (rank up to 5, each dimension of one side possibly 1) for every
 * float operator on both paths, against the definition at each output index. MAXIMUM,
 * MINIMUM, SQUARED_DIFFERENCE and PRELU are one or two correctly rounded operations
 * (exact comparison for the first two, 1.2e-7 relative for the others); POW (powf, < 1 ulp
 * in glibc) 3e-7. PRELU's alpha is a constant [C] in half the trials so that XNNPACK's
 * per-channel prelu runs. */
static void test_binary_random(void **state)
{
    (void)state;
    static const int32_t ops[] = {MP_OP_MAXIMUM, MP_OP_MINIMUM, MP_OP_SQUARED_DIFFERENCE,
                                  MP_OP_POW, MP_OP_PRELU};
    uint32_t seed = 2024;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int trial = 0; trial < 60; trial++) {
            const int32_t op = ops[k];
            bin_io io = {MP_DT_FLOAT32, 1 + (int32_t)((kh_frand(&seed, 1.0f) + 1.0f) * 2.5f), 0,
                         {0}, {0}};
            io.rb = 1 + (int32_t)((kh_frand(&seed, 1.0f) + 1.0f) * 0.5f * io.ra);
            if (io.rb > io.ra)
                io.rb = io.ra;
            for (int32_t i = 0; i < io.ra; i++)
                io.da[i] = 1 + (int32_t)((kh_frand(&seed, 1.0f) + 1.0f) * 3.5f);
            for (int32_t i = 0; i < io.rb; i++) {
                int32_t j = i + io.ra - io.rb;
                io.db[i] = kh_frand(&seed, 1.0f) < 0 ? 1 : io.da[j];
                if (kh_frand(&seed, 1.0f) < -0.6f)
                    io.da[j] = 1; /* broadcast the other way */
            }
            const bool per_channel = op == MP_OP_PRELU && (trial & 2);
            if (per_channel) {
                io.rb = 1;
                io.db[0] = io.da[io.ra - 1];
            }
            size_t na = 1, nb = 1;
            for (int32_t i = 0; i < io.ra; i++)
                na *= (size_t)io.da[i];
            for (int32_t i = 0; i < io.rb; i++)
                nb *= (size_t)io.db[i];
            float *a = malloc(sizeof(float) * na), *b = malloc(sizeof(float) * nb);
            for (size_t i = 0; i < na; i++)
                a[i] = op == MP_OP_POW ? 0.1f + 4 * (kh_frand(&seed, 1.0f) + 1) : kh_frand(&seed, 5);
            for (size_t i = 0; i < nb; i++)
                b[i] = kh_frand(&seed, op == MP_OP_POW ? 3.0f : 5.0f);
            kh_case c;
            kh_init(&c, op, NULL);
            const bool as_const = trial & 1;
            mp_tensor *ta = kh_input(&c, MP_DT_FLOAT32, io.ra, io.da, as_const ? a : NULL);
            mp_tensor *tb = kh_input(&c, MP_DT_FLOAT32, io.rb, io.db,
                                     as_const || per_channel ? b : NULL);
            if (!as_const)
                memcpy(ta->data, a, sizeof(float) * na);
            if (!as_const && !per_channel)
                memcpy(tb->data, b, sizeof(float) * nb);
            mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
            kh_expect_ok(&c, kh_run(&c));
            const float *y = out->data;
            for (size_t i = 0, n = mp_tensor_elements(out); i < n; i++) {
                double x = a[kh_bc_offset(ta, out->rank, out->dims, i)];
                double w = b[kh_bc_offset(tb, out->rank, out->dims, i)];
                double want = op == MP_OP_MAXIMUM   ? (x > w ? x : w)
                              : op == MP_OP_MINIMUM ? (x < w ? x : w)
                              : op == MP_OP_POW     ? pow(x, w)
                              : op == MP_OP_PRELU   ? (x >= 0 ? x : x * w)
                                                    : (x - w) * (x - w);
                double tol = op == MP_OP_POW ? 3e-7 : 1.2e-7;
                if (!(fabs(y[i] - want) <= tol * fmax(fabs(want), 1e-30)))
                    fail_msg("op %d trial %d element %zu: got %.9g want %.9g", op, trial, i,
                             (double)y[i], want);
            }
            kh_free(&c);
            free(a);
            free(b);
        }
}

/* ---- two inputs: 8-bit ------------------------------------------------------------------ */

static mp_tensor *bin_q8_case(kh_case *c, int32_t op, mp_dtype dt, int32_t na, int32_t nb,
                              const float *s, const int64_t *z)
{
    kh_init(c, op, NULL);
    mp_tensor *a = kh_input(c, dt, 1, &na, NULL), *b = kh_input(c, dt, 1, &nb, NULL);
    mp_tensor *out = kh_output(c, dt);
    kh_quant(c, a, 1, &s[0], &z[0], 0);
    kh_quant(c, b, 1, &s[1], &z[1], 0);
    kh_quant(c, out, 1, &s[2], &z[2], 0);
    return out;
}

static void test_binary_q8_hand(void **state)
{
    (void)state;
    kh_case c;
    /* SQUARED_DIFFERENCE int8, scales 0.5, zp 0: a 4 (2.0), b 2 (1.0): (2 - 1)^2 = 1 -> 2.
     * TensorFlow Lite's way: 4 << 7 = 512 and 2 << 7 = 256 scaled by 0.5 / (2 * 0.5) = 1/2:
     * 256 and 128; 128^2 = 16384 times 1 / (2^14 * 0.5) = 2^-13: 2. Then a 10, b -10: (10)^2
     * = 100 -> 200 saturates to 127 */
    static const float s1[3] = {0.5f, 0.5f, 0.5f};
    static const int64_t z0[3] = {0, 0, 0};
    mp_tensor *out = bin_q8_case(&c, MP_OP_SQUARED_DIFFERENCE, MP_DT_INT8, 2, 2, s1, z0);
    memcpy(c.in[0]->data, (int8_t[]){4, 10}, 2);
    memcpy(c.in[1]->data, (int8_t[]){2, -10}, 2);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){2, 127}), 2);
    kh_free(&c);
    /* PRELU int8: input 0.5, alpha 0.01 (25 is 0.25), output 0.5: -8 (-4.0) * 0.25 = -1.0 ->
     * -2; 6 stays 6 */
    static const float s2[3] = {0.5f, 0.01f, 0.5f};
    out = bin_q8_case(&c, MP_OP_PRELU, MP_DT_INT8, 2, 1, s2, z0);
    memcpy(c.in[0]->data, (int8_t[]){-8, 6}, 2);
    memcpy(c.in[1]->data, (int8_t[]){25}, 1);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){-2, 6}), 2);
    kh_free(&c);
}

/* Every pair of input bytes for random quantizations, against the real-valued result:
 * within one step (PRELU rounds twice, SQUARED_DIFFERENCE rounds its scaled inputs at
 * 2^-7 of a step before squaring, then twice more). */
static void test_binary_q8_all_pairs(void **state)
{
    (void)state;
    uint32_t seed = 77;
    for (int trial = 0; trial < 24; trial++) {
        const bool prelu = trial & 1;
        const mp_dtype dt = prelu && (trial & 2) ? MP_DT_UINT8 : MP_DT_INT8;
        const int32_t lo = dt == MP_DT_INT8 ? -128 : 0, hi = lo + 255;
        float s[3];
        int64_t z[3];
        for (int i = 0; i < 3; i++) {
            s[i] = 0.005f + 0.1f * (kh_frand(&seed, 1.0f) + 1.0f);
            z[i] = lo + (int64_t)((kh_frand(&seed, 1.0f) + 1.0f) * 127.0f);
        }
        if (!prelu) /* the output multiplier (2 max scale)^2 / (2^14 s_out) must be < 1 */
            s[2] = fmaxf(s[2], 4 * fmaxf(s[0], s[1]) * fmaxf(s[0], s[1]) / 16384 * 1.5f);
        kh_case c;
        mp_tensor *out = bin_q8_case(&c, prelu ? MP_OP_PRELU : MP_OP_SQUARED_DIFFERENCE, dt,
                                     256 * 256, 256 * 256, s, z);
        uint8_t *a = c.in[0]->data, *b = c.in[1]->data;
        for (int i = 0; i < 256 * 256; i++) {
            a[i] = (uint8_t)(i >> 8);
            b[i] = (uint8_t)i;
        }
        kh_expect_ok(&c, kh_run(&c));
        const uint8_t *y = out->data;
        for (int i = 0; i < 256 * 256; i++) {
            int32_t qa = dt == MP_DT_INT8 ? (int8_t)a[i] : a[i];
            int32_t qb = dt == MP_DT_INT8 ? (int8_t)b[i] : b[i];
            int32_t got = dt == MP_DT_INT8 ? (int8_t)y[i] : y[i];
            double ra = (double)s[0] * (qa - z[0]), rb = (double)s[1] * (qb - z[1]);
            double f = prelu ? (ra >= 0 ? ra : ra * rb) : (ra - rb) * (ra - rb);
            double want = round(f / s[2]) + (double)z[2];
            want = want < lo ? lo : (want > hi ? hi : want);
            if (fabs(got - want) > 1)
                fail_msg("%s trial %d qa %d qb %d: got %d want %g",
                         prelu ? "PRELU" : "SQUARED_DIFFERENCE", trial, qa, qb, got, want);
        }
        kh_free(&c);
    }
}

/* ---- errors ----------------------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    /* dtype mismatch between the inputs */
    kh_init(&c, MP_OP_MAXIMUM, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "differ in dtype");
    kh_free(&c);
    /* shapes that do not broadcast: the message names both */
    kh_init(&c, MP_OP_SQUARED_DIFFERENCE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "cannot broadcast 't0' [2,3] with 't1' [4]");
    kh_free(&c);
    /* a dtype the operator does not take, listed */
    kh_init(&c, MP_OP_POW, NULL);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT64);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, i32");
    kh_free(&c);
    kh_init(&c, MP_OP_RSQRT, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has dtype i32 (supported: f32, i8, i16)");
    kh_free(&c);
    /* output dtype differs from the input's */
    kh_init(&c, MP_OP_ABS, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't1' is i32");
    kh_free(&c);
    /* int8 NEG with different scales; an 8-bit input without quantization */
    static const float sa = 0.5f, sb = 0.25f;
    static const int64_t z = 0;
    kh_init(&c, MP_OP_NEG, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL), 1, &sa, &z, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT8), 1, &sb, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "equal input and output scales");
    kh_free(&c);
    kh_init(&c, MP_OP_LEAKY_RELU, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t0'");
    kh_free(&c);
    /* int8 SQUARED_DIFFERENCE whose output multiplier would be >= 1 */
    static const float s[3] = {1.0f, 1.0f, 1e-6f};
    static const int64_t z3[3] = {0, 0, 0};
    bin_q8_case(&c, MP_OP_SQUARED_DIFFERENCE, MP_DT_INT8, 2, 2, s, z3);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "must be below 1");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_hand),     cmocka_unit_test(test_unary_random),
        cmocka_unit_test(test_unary_int),      cmocka_unit_test(test_unary_q8_hand),
        cmocka_unit_test(test_unary_q8_all_bytes), cmocka_unit_test(test_binary_hand),
        cmocka_unit_test(test_binary_int),     cmocka_unit_test(test_binary_random),
        cmocka_unit_test(test_binary_q8_hand), cmocka_unit_test(test_binary_q8_all_pairs),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
