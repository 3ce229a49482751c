/* Tests of FLOOR, CEIL, ROUND, SIN, COS, ELU (unary_math.c), FLOOR_DIV (binary_math.c) and
 * LOG_SOFTMAX (softmax.c): hand-derived cases (ROUND half to even, FLOOR_DIV of negatives,
 * LOG_SOFTMAX of a row), randomized cases against references in double, both the XNNPACK
 * path (inputs that are not constants) and plain C (constants), broadcasting, int32 division
 * by zero refused at run, and the 8-bit forms (ELU's table, LOG_SOFTMAX's fixed point)
 * against C restatements of TensorFlow Lite's integer arithmetic (tests/util/quant_ref.h). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static void run_unary_f32(int32_t op, const float *x, int32_t n, bool as_const, float *y)
{
    kh_case c;
    kh_init(&c, op, NULL);
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

static void expect_near(const float *got, const double *want, int32_t n, double tol,
                        const char *what)
{
    for (int32_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol * fmax(1.0, fabs(want[i]))))
            fail_msg("%s element %d: got %.9g want %.9g", what, i, (double)got[i], want[i]);
}

/* ---- FLOOR, CEIL, ROUND, SIN, COS, ELU: float32 ----------------------------------------- */

static void test_rounding_hand(void **state)
{
    (void)state;
    static const float x[10] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, -1.25f, 1.75f, 3.0f,
                                -0.0f};
    /* ROUND is half to even (banker's): -2.5 -> -2, -1.5 -> -2, -0.5 -> -0, 0.5 -> 0,
     * 1.5 -> 2, 2.5 -> 2 */
    static const float rnd[10] = {-2, -2, -0.0f, 0, 2, 2, -1, 2, 3, -0.0f};
    static const float flo[10] = {-3, -2, -1, 0, 1, 2, -2, 1, 3, -0.0f};
    static const float cei[10] = {-2, -1, -0.0f, 1, 2, 3, -1, 2, 3, -0.0f};
    float y[10];
    for (int as_const = 0; as_const < 2; as_const++) {
        run_unary_f32(MP_OP_ROUND, x, 10, as_const, y);
        for (int i = 0; i < 10; i++)
            assert_true(y[i] == rnd[i]);
        run_unary_f32(MP_OP_FLOOR, x, 10, as_const, y);
        for (int i = 0; i < 10; i++)
            assert_true(y[i] == flo[i]);
        run_unary_f32(MP_OP_CEIL, x, 10, as_const, y);
        for (int i = 0; i < 10; i++)
            assert_true(y[i] == cei[i]);
    }
    /* ELU: x for x >= 0, e^x - 1 below: -1 -> -0.63212056, -0.5 -> -0.39346934 */
    static const float e[4] = {-1.0f, -0.5f, 0.0f, 2.0f};
    run_unary_f32(MP_OP_ELU, e, 4, false, y);
    expect_near(y, (const double[]){-0.6321205588, -0.3934693403, 0.0, 2.0}, 4, 1e-6, "ELU");
    /* SIN, COS at 0, pi/2, pi */
    static const float t[3] = {0.0f, 1.5707963267948966f, 3.1415926535897931f};
    run_unary_f32(MP_OP_SIN, t, 3, false, y);
    expect_near(y, (const double[]){0, 1, 0}, 3, 1e-6, "SIN");
    run_unary_f32(MP_OP_COS, t, 3, true, y);
    expect_near(y, (const double[]){1, 0, -1}, 3, 1e-6, "COS");
}

static void test_unary_random(void **state)
{
    (void)state;
    static const int32_t ops[] = {MP_OP_FLOOR, MP_OP_CEIL, MP_OP_ROUND, MP_OP_SIN, MP_OP_COS,
                                  MP_OP_ELU};
    enum { N = 777 };
    float x[N], y[N];
    double want[N];
    kh_fill(x, N, 99, 20.0f);
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i - 8) + 0.5f; /* halves: ties */
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int as_const = 0; as_const < 2; as_const++) {
            run_unary_f32(ops[k], x, N, as_const, y);
            for (int i = 0; i < N; i++) {
                double v = x[i];
                switch (ops[k]) {
                case MP_OP_FLOOR: want[i] = floor(v); break;
                case MP_OP_CEIL: want[i] = ceil(v); break;
                case MP_OP_ROUND: { /* half to even, written out */
                    double f = floor(v), d = v - f;
                    want[i] = d > 0.5 ? f + 1 : (d < 0.5 ? f : (fmod(f, 2.0) == 0 ? f : f + 1));
                    break;
                }
                case MP_OP_SIN: want[i] = sin(v); break;
                case MP_OP_COS: want[i] = cos(v); break;
                default: want[i] = v < 0 ? expm1(v) : v; break;
                }
            }
            const bool exact = ops[k] == MP_OP_FLOOR || ops[k] == MP_OP_CEIL ||
                               ops[k] == MP_OP_ROUND;
            expect_near(y, want, N, exact ? 0.0 : 2e-6, "unary");
        }
}

/* ELU int8: TensorFlow Lite's table, restated: dequantize in float, e^x - 1 below 0, times
 * 1 / out_scale rounded half away from zero, plus zp_out in float, saturated. */
static void test_elu_q8(void **state)
{
    (void)state;
    uint32_t seed = 7;
    uint8_t x[256], y[256];
    for (int v = 0; v < 256; v++)
        x[v] = (uint8_t)v;
    for (int trial = 0; trial < 30; trial++) {
        float si = 0.005f + 0.1f * (kh_frand(&seed, 1.0f) + 1.0f);
        float so = 0.005f + 0.05f * (kh_frand(&seed, 1.0f) + 1.0f);
        int64_t zi = (int64_t)(kh_frand(&seed, 1.0f) * 127.0f);
        int64_t zo = (int64_t)(kh_frand(&seed, 1.0f) * 127.0f);
        kh_case c;
        kh_init(&c, MP_OP_ELU, NULL);
        int32_t n = 256;
        mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, &n, NULL);
        memcpy(in->data, x, 256);
        mp_tensor *out = kh_output(&c, MP_DT_INT8);
        kh_quant(&c, in, 1, &si, &zi, 0);
        kh_quant(&c, out, 1, &so, &zo, 0);
        kh_expect_ok(&c, kh_run(&c));
        memcpy(y, out->data, 256);
        kh_free(&c);
        for (int v = 0; v < 256; v++) {
            const int32_t q = (int8_t)v;
            const float r = si * (float)(q - zi);
            const float t = r < 0.0f ? expf(r) - 1.0f : r;
            const float rounded = roundf(t * (1.0f / so)) + (float)zo;
            const int32_t want = rounded < -128 ? -128 : (rounded > 127 ? 127 : (int32_t)rounded);
            if ((int8_t)y[v] != want)
                fail_msg("ELU si %g zi %lld so %g zo %lld q %d: got %d want %d", (double)si,
                         (long long)zi, (double)so, (long long)zo, q, (int8_t)y[v], want);
        }
    }
    /* hand: scale 0.1 both, zp 0: q -10 is -1.0 -> -0.632 / 0.1 = -6.32 -> -6; q 5 -> 5 */
    kh_case c;
    kh_init(&c, MP_OP_ELU, NULL);
    int32_t n = 2;
    const float s = 0.1f;
    const int64_t z = 0;
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, &n, NULL);
    ((int8_t *)in->data)[0] = -10;
    ((int8_t *)in->data)[1] = 5;
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((int8_t *)out->data)[0], -6);
    assert_int_equal(((int8_t *)out->data)[1], 5);
    kh_free(&c);
}

/* ---- FLOOR_DIV -------------------------------------------------------------------------- */

static void run_floor_div(mp_dtype dt, int32_t ra, const int32_t *da, const void *a,
                          int32_t rb, const int32_t *db, const void *b, bool as_const,
                          void *y, size_t ybytes, kh_case *keep)
{
    kh_case *c = keep;
    kh_init(c, MP_OP_FLOOR_DIV, NULL);
    const size_t es = mp_dtype_size(dt);
    size_t na = 1, nb = 1;
    for (int32_t i = 0; i < ra; i++)
        na *= (size_t)da[i];
    for (int32_t i = 0; i < rb; i++)
        nb *= (size_t)db[i];
    mp_tensor *ta = kh_input(c, dt, ra, da, as_const ? a : NULL);
    mp_tensor *tb = kh_input(c, dt, rb, db, as_const ? b : NULL);
    if (!as_const) {
        memcpy(ta->data, a, na * es);
        memcpy(tb->data, b, nb * es);
    }
    mp_tensor *out = kh_output(c, dt);
    kh_expect_ok(c, kh_run(c));
    memcpy(y, out->data, ybytes);
}

static void test_floor_div(void **state)
{
    (void)state;
    /* int32, negatives rounded toward minus infinity: 7/2 = 3, -7/2 = -4, 7/-2 = -4,
     * -7/-2 = 3, -8/2 = -4, 0/-3 = 0, INT32_MIN / -1 wraps, -1/5 = -1 */
    const int32_t a[8] = {7, -7, 7, -7, -8, 0, INT32_MIN, -1};
    const int32_t b[8] = {2, 2, -2, -2, 2, -3, -1, 5};
    const int32_t want[8] = {3, -4, -4, 3, -4, 0, INT32_MIN, -1};
    int32_t y[8];
    kh_case c;
    int32_t n = 8;
    for (int as_const = 0; as_const < 2; as_const++) {
        run_floor_div(MP_DT_INT32, 1, &n, a, 1, &n, b, as_const, y, sizeof y, &c);
        kh_free(&c);
        assert_memory_equal(y, want, sizeof want);
    }
    /* float: floor of the double quotient: -7.5 / 2 = -3.75 -> -4; 1 / 0 = inf; 7 / -0.5 */
    const float fa[4] = {-7.5f, 1.0f, 7.0f, 6.0f}, fb[4] = {2.0f, 0.0f, -0.5f, 3.0f};
    float fy[4];
    int32_t n4 = 4;
    run_floor_div(MP_DT_FLOAT32, 1, &n4, fa, 1, &n4, fb, false, fy, sizeof fy, &c);
    kh_free(&c);
    assert_true(fy[0] == -4.0f && isinf(fy[1]) && fy[1] > 0 && fy[2] == -14.0f && fy[3] == 2.0f);
    /* broadcasting: [2,3] by [3] and by a scalar, against the definition */
    const int32_t d23[2] = {2, 3}, d3 = 3;
    const int32_t m[6] = {-5, 5, 9, -9, 10, -1}, v[3] = {3, -4, 2};
    int32_t my[6];
    run_floor_div(MP_DT_INT32, 2, d23, m, 1, &d3, v, false, my, sizeof my, &c);
    for (int i = 0; i < 6; i++) {
        const double q = floor((double)m[i] / (double)v[i % 3]);
        assert_int_equal(my[i], (int32_t)q);
    }
    assert_int_equal(c.out[0]->rank, 2);
    kh_free(&c);
    const int32_t sc = -3;
    run_floor_div(MP_DT_INT32, 2, d23, m, 0, NULL, &sc, true, my, sizeof my, &c);
    for (int i = 0; i < 6; i++)
        assert_int_equal(my[i], (int32_t)floor((double)m[i] / -3.0));
    kh_free(&c);
    /* random float32 with broadcasting against floor((double)x / w) */
    enum { R = 4, C = 37 };
    float ra[R * C], rb[C], ry[R * C];
    kh_fill(ra, R * C, 5, 50.0f);
    kh_fill(rb, C, 6, 9.0f);
    const int32_t drc[2] = {R, C}, dc = C;
    run_floor_div(MP_DT_FLOAT32, 2, drc, ra, 1, &dc, rb, false, ry, sizeof ry, &c);
    kh_free(&c);
    for (int i = 0; i < R * C; i++)
        assert_true(ry[i] == (float)floor((double)ra[i] / (double)rb[i % C]));
}

static void test_floor_div_errors(void **state)
{
    (void)state;
    /* int32 division by zero fails the run naming the divisor */
    kh_case c;
    kh_init(&c, MP_OP_FLOOR_DIV, NULL);
    int32_t n = 3;
    mp_tensor *a = kh_input(&c, MP_DT_INT32, 1, &n, NULL);
    mp_tensor *b = kh_input(&c, MP_DT_INT32, 1, &n, NULL);
    for (int i = 0; i < 3; i++) {
        ((int32_t *)a->data)[i] = 6;
        ((int32_t *)b->data)[i] = i == 2 ? 0 : 2;
    }
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_ARG, "division by zero");
    kh_free(&c);
    /* a uint8 FLOOR_DIV is an unsupported dtype (int8 / int16: test_kernels_dtype_gaps) */
    kh_init(&c, MP_OP_FLOOR_DIV, NULL);
    kh_input(&c, MP_DT_UINT8, 1, &n, NULL);
    kh_input(&c, MP_DT_UINT8, 1, &n, NULL);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, i32, i16, i8");
    kh_free(&c);
    /* shapes that do not broadcast */
    kh_init(&c, MP_OP_FLOOR_DIV, NULL);
    int32_t two = 2;
    kh_input(&c, MP_DT_FLOAT32, 1, &n, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &two, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, NULL);
    kh_free(&c);
    /* ROUND of an int32 input is refused */
    kh_init(&c, MP_OP_ROUND, NULL);
    kh_input(&c, MP_DT_INT32, 1, &n, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "ROUND");
    kh_free(&c);
}

/* ---- LOG_SOFTMAX ------------------------------------------------------------------------ */

static void test_log_softmax_f32(void **state)
{
    (void)state;
    /* one row {1, 2, 3}: log(e + e^2 + e^3) = 3.40760596; y = x - 3.40760596 */
    const float x[3] = {1, 2, 3};
    kh_case c;
    kh_init(&c, MP_OP_LOG_SOFTMAX, NULL);
    int32_t d[2] = {1, 3};
    kh_input(&c, MP_DT_FLOAT32, 2, d, x);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    expect_near(out->data, (const double[]){-2.40760596, -1.40760596, -0.40760596}, 3, 1e-6,
                "hand");
    kh_free(&c);
    /* random rows of rank 3 against the definition in double */
    enum { A = 3, B = 4, K = 50 };
    float xr[A * B * K];
    double want[A * B * K];
    kh_fill(xr, A * B * K, 17, 30.0f);
    for (int r = 0; r < A * B; r++) {
        double m = -INFINITY, s = 0;
        for (int k = 0; k < K; k++)
            m = fmax(m, xr[r * K + k]);
        for (int k = 0; k < K; k++)
            s += exp(xr[r * K + k] - m);
        for (int k = 0; k < K; k++)
            want[r * K + k] = xr[r * K + k] - m - log(s);
    }
    kh_init(&c, MP_OP_LOG_SOFTMAX, NULL);
    int32_t d3[3] = {A, B, K};
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 3, d3, NULL);
    memcpy(in->data, xr, sizeof xr);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 3);
    expect_near(out->data, want, A * B * K, 1e-5, "random");
    kh_free(&c);
}

/* TensorFlow Lite's LogSoftmaxQuantized restated (gemmlowp on int64 through quant_ref.h). */
static int32_t ref_exp_neg(int32_t a) /* a <= 0 in Q5.26 -> Q0.31 */
{
    const int32_t quarter = 1 << 24; /* 1/4 in Q5.26 */
    const int32_t mod = (a & (quarter - 1)) - quarter;
    /* exp on [-1/4, 0): Taylor around -1/8 in Q0.31 */
    const int32_t xa = qref_sat_pot(mod, 5) + (1 << 28);
    const int32_t x2 = qref_srdhm(xa, xa), x3 = qref_srdhm(x2, xa), x4 = qref_srdhm(x2, x2);
    const int32_t poly =
        qref_rdpot(qref_srdhm(qref_rdpot(x4, 2) + x3, 715827883) + x2, 1);
    int32_t r = 1895147668 + qref_srdhm(1895147668, xa + poly);
    const int32_t rem = mod - a;
    static const int32_t m[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401,
                                 242};
    for (int k = 0; k < 7; k++)
        if (rem & (1 << (24 + k)))
            r = qref_srdhm(r, m[k]);
    return a == 0 ? INT32_MAX : r;
}

static int32_t ref_recip(int32_t a) /* 1 / (1 + a), a in [0, 1), Q0.31 */
{
    const int64_t s = (int64_t)a + INT32_MAX;
    const int32_t h = (int32_t)((s + 1) / 2);
    int32_t x = 1515870810 + qref_srdhm(h, -1010580540);
    for (int i = 0; i < 3; i++)
        x += qref_sat_pot(qref_srdhm(x, (1 << 29) - qref_srdhm(h, x)), 2);
    return qref_sat_pot(x, 1);
}

static int32_t ref_log(int32_t x) /* log of x >= 1 in Q12.19 -> Q5.26 */
{
    const int32_t ln2 = 1488522236, ssh = 1805811301, sh = 1518500250;
    const int32_t an = 117049297, ad = 127690142, ai = 1057819769, af = 638450708;
    const int32_t quarter6 = qref_rdpot(1 << 29, 6);
    int hz = __builtin_clz((uint32_t)x);
    int32_t ra = hz - 1 ? qref_sat_pot(x, hz - 1) : x;
    ra = qref_sat_pot(qref_srdhm(ra, sh), 1);
    int64_t za = (int64_t)qref_sat_pot(12 - hz, 25) + quarter6;
    const int32_t zb_v = qref_srdhm(x, sh);
    int hb = __builtin_clz((uint32_t)zb_v) - 1;
    const int32_t rb = hb ? qref_sat_pot(x, hb) : x;
    int64_t zb = (int64_t)qref_sat_pot(12 - hb, 25) - quarter6;
    za = za > INT32_MAX ? INT32_MAX : za;
    zb = zb < INT32_MIN ? INT32_MIN : zb;
    const int32_t r = ra < rb ? ra : rb;
    const int32_t z = (int32_t)(za > zb ? za : zb);
    const int64_t ps = (int64_t)r + ssh;
    const int32_t p = (int32_t)((ps + (ps >= 0 ? 1 : -1)) / 2);
    const int32_t q = 2 * (r - ssh);
    const int32_t sq = qref_srdhm(q, q);
    const int32_t num = qref_srdhm(q, r) + qref_srdhm(qref_srdhm(q, sq), an);
    const int32_t den = qref_srdhm(p, ai + q + qref_srdhm(ad, sq)) + qref_srdhm(af, q);
    const int32_t sum = qref_srdhm(z, ln2) + qref_srdhm(qref_rdpot(num, 6), ref_recip(den));
    return qref_sat_pot(sum, 1);
}

static void ref_log_softmax_q8(mp_dtype dt, float si, const uint8_t *x, size_t rows,
                               size_t depth, int32_t *y)
{
    const bool s8 = dt == MP_DT_INT8;
    const int32_t lo = s8 ? -128 : 0, hi = s8 ? 127 : 255, zp = s8 ? 127 : 255;
    int32_t mult, shift, rmult, rshift;
    qref_quantize_multiplier((double)si * (double)(1 << 26), &mult, &shift);
    qref_quantize_multiplier((double)(1u << (31 - shift)) / (double)mult, &rmult, &rshift);
    const int32_t diff_min = -(int32_t)floor(31.0 * (double)(1 << 26) / (double)(1LL << shift));
    for (size_t r = 0; r < rows; r++) {
        int32_t v[512], mx = lo;
        for (size_t c = 0; c < depth; c++) {
            v[c] = s8 ? (int8_t)x[r * depth + c] : x[r * depth + c];
            mx = v[c] > mx ? v[c] : mx;
        }
        int32_t sum = 0;
        for (size_t c = 0; c < depth; c++)
            if (v[c] - mx >= diff_min)
                sum += qref_rdpot(ref_exp_neg(qref_mbqm(v[c] - mx, mult, shift)), 12);
        const int32_t lg = ref_log(sum);
        const int32_t rev = qref_mbqm((int32_t)((uint32_t)lg + 0x80000000u), rmult, rshift);
        const int32_t adj = diff_min - 1 > rev ? diff_min - 1 : rev;
        for (size_t c = 0; c < depth; c++) {
            int32_t o = lo;
            if (v[c] - mx > adj) {
                o = qref_rdpot(qref_mbqm(v[c] - mx, mult, shift) - lg, 22) + zp;
                o = o < lo ? lo : (o > hi ? hi : o);
            }
            y[r * depth + c] = o;
        }
    }
}

static void run_log_softmax_q8(mp_dtype dt, float si, int64_t zi, float so, int64_t zo,
                               const uint8_t *x, int32_t rows, int32_t depth, uint8_t *y,
                               mp_status want, const char *needle)
{
    kh_case c;
    kh_init(&c, MP_OP_LOG_SOFTMAX, NULL);
    int32_t d[2] = {rows, depth};
    mp_tensor *in = kh_input(&c, dt, 2, d, NULL);
    memcpy(in->data, x, (size_t)rows * (size_t)depth);
    mp_tensor *out = kh_output(&c, dt);
    kh_quant(&c, in, 1, &si, &zi, 0);
    kh_quant(&c, out, 1, &so, &zo, 0);
    if (want != MP_OK) {
        kh_expect_error(&c, want, needle);
    } else {
        kh_expect_ok(&c, kh_run(&c));
        memcpy(y, out->data, (size_t)rows * (size_t)depth);
    }
    kh_free(&c);
}

static void test_log_softmax_q8(void **state)
{
    (void)state;
    uint32_t seed = 31;
    enum { ROWS = 5, DEPTH = 300 };
    uint8_t x[ROWS * DEPTH], y[ROWS * DEPTH];
    int32_t want[ROWS * DEPTH];
    for (int trial = 0; trial < 24; trial++) {
        const mp_dtype dt = trial & 1 ? MP_DT_UINT8 : MP_DT_INT8;
        const bool s8 = dt == MP_DT_INT8;
        const float si = 0.002f + 0.2f * (kh_frand(&seed, 1.0f) + 1.0f);
        const int64_t zi = s8 ? 3 : 120;
        const int32_t depth = trial < 4 ? 3 + trial : DEPTH;
        for (int i = 0; i < ROWS * depth; i++)
            x[i] = (uint8_t)(kh_frand(&seed, 1.0f) * 128.0f + 128.0f);
        run_log_softmax_q8(dt, si, zi, 16.0f / 256, s8 ? 127 : 255, x, ROWS, depth, y, MP_OK,
                           NULL);
        ref_log_softmax_q8(dt, si, x, ROWS, (size_t)depth, want);
        for (int i = 0; i < ROWS * depth; i++) {
            const int32_t got = s8 ? (int8_t)y[i] : y[i];
            if (got != want[i])
                fail_msg("%s si %g depth %d element %d: got %d want %d", s8 ? "int8" : "uint8",
                         (double)si, depth, i, got, want[i]);
        }
        /* and within a step or two of the real log softmax on the output's grid */
        for (int r = 0; r < ROWS; r++) {
            double m = -INFINITY, s = 0;
            for (int c = 0; c < depth; c++)
                m = fmax(m, si * ((s8 ? (int8_t)x[r * depth + c] : x[r * depth + c]) - zi));
            for (int c = 0; c < depth; c++)
                s += exp(si * ((s8 ? (int8_t)x[r * depth + c] : x[r * depth + c]) - zi) - m);
            for (int c = 0; c < depth; c++) {
                const double real =
                    si * ((s8 ? (int8_t)x[r * depth + c] : x[r * depth + c]) - zi) - m - log(s);
                double q = round(real * 16.0) + (s8 ? 127 : 255);
                const double lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
                q = q < lo ? lo : (q > hi ? hi : q);
                const int32_t got = s8 ? (int8_t)y[r * depth + c] : y[r * depth + c];
                if (fabs(got - q) > 2)
                    fail_msg("far from real: si %g got %d want %g", (double)si, got, q);
            }
        }
    }
    /* hand: int8 row of equal values -> log(1/3) = -1.0986 -> *16 = -17.6 -> 127 - 18 = 109 */
    const uint8_t eq[3] = {5, 5, 5};
    run_log_softmax_q8(MP_DT_INT8, 0.1f, 0, 16.0f / 256, 127, eq, 1, 3, y, MP_OK, NULL);
    for (int i = 0; i < 3; i++)
        assert_int_equal((int8_t)y[i], 109);
    /* the output quantization TensorFlow Lite's Prepare requires */
    run_log_softmax_q8(MP_DT_INT8, 0.1f, 0, 1.0f / 256, 127, eq, 1, 3, y, MP_ERR_UNSUPPORTED,
                       "16/256");
    run_log_softmax_q8(MP_DT_UINT8, 0.1f, 0, 16.0f / 256, 127, eq, 1, 3, y, MP_ERR_UNSUPPORTED,
                       "zero point 255");
    /* an input scale so small that 2^26 times it is below 1 */
    run_log_softmax_q8(MP_DT_INT8, 1e-9f, 0, 16.0f / 256, 127, eq, 1, 3, y, MP_ERR_UNSUPPORTED,
                       "input scale");
}

static void test_log_softmax_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_LOG_SOFTMAX, NULL);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "scalar");
    kh_free(&c);
    kh_init(&c, MP_OP_LOG_SOFTMAX, NULL);
    int32_t n = 4;
    kh_input(&c, MP_DT_INT32, 1, &n, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, NULL);
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounding_hand),     cmocka_unit_test(test_unary_random),
        cmocka_unit_test(test_elu_q8),            cmocka_unit_test(test_floor_div),
        cmocka_unit_test(test_floor_div_errors),  cmocka_unit_test(test_log_softmax_f32),
        cmocka_unit_test(test_log_softmax_q8),    cmocka_unit_test(test_log_softmax_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
