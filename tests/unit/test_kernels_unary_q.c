/* Tests of the 8-bit activations, SOFTMAX and RESIZE_BILINEAR (int8 and uint8, issue 15).
 * LOGISTIC / TANH / RELU family: hand-computed values, then every one of the 256 inputs
 * under several quantizations against TensorFlow Lite's definitions restated here (its
 * PopulateLookupTable in float for LOGISTIC and TANH, ReluX's integer formula on quant_math
 * for the RELU family): bit for bit where the kernel uses its table (or XNNPACK's clamp),
 * within 1 and at least 95 % exact on XNNPACK's sigmoid / tanh. SOFTMAX: hand-derived rows
 * of TensorFlow Lite's integer reference (int8, bit for bit), random rows against the real
 * softmax quantized to 1/256 (within 1; XNNPACK's uint8 too), beta. RESIZE_BILINEAR: the
 * three sampling modes against TensorFlow Lite's float formula rounded (within 1). Errors:
 * dtypes, quantization the operators do not take. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "tests/util/kernel_harness.h"

typedef struct qparm {
    float si, so;
    int64_t zi, zo;
} qparm;

static int32_t lo_of(mp_dtype dt) { return dt == MP_DT_INT8 ? -128 : 0; }
static int32_t hi_of(mp_dtype dt) { return dt == MP_DT_INT8 ? 127 : 255; }

static int32_t byte_at(const mp_tensor *t, size_t i)
{
    const uint8_t b = ((const uint8_t *)t->data)[i];
    return t->dtype == MP_DT_INT8 ? (int32_t)(int8_t)b : (int32_t)b;
}

/* A one-input node on a [count] tensor holding x, quantized by q; runs it. */
static void run_unary(kh_case *c, int32_t op, mp_dtype dt, const qparm *q, const int32_t *x,
                      size_t count)
{
    kh_init(c, op, NULL);
    mp_tensor *in = kh_input(c, dt, 1, (int32_t[]){(int32_t)count}, NULL);
    mp_tensor *out = kh_output(c, dt);
    kh_quant(c, in, 1, &q->si, &q->zi, 0);
    kh_quant(c, out, 1, &q->so, &q->zo, 0);
    for (size_t i = 0; i < count; i++)
        ((uint8_t *)in->data)[i] = (uint8_t)x[i];
    kh_expect_ok(c, kh_run(c));
}

static void expect_values(int32_t op, mp_dtype dt, qparm q, const int32_t *x, const int32_t *want,
                          size_t count)
{
    kh_case c;
    run_unary(&c, op, dt, &q, x, count);
    for (size_t i = 0; i < count; i++)
        if (byte_at(c.out[0], i) != want[i])
            fail_msg("op %d %s input %d: got %d, want %d", op, mp_dtype_name(dt), x[i],
                     byte_at(c.out[0], i), want[i]);
    kh_free(&c);
}

/* ---- LOGISTIC, TANH, RELU family ------------------------------------------------------- */

static void test_hand_activations(void **state)
{
    (void)state;
    const int32_t xs[] = {-128, -11, -10, -9, 127};
    /* int8, input = output quantization (scale 1/2, zp -10): RELU clamps below -10, RELU6
     * also above -10 + 6 * 2 = 2, RELU_N1_TO_1 to [-12, -8] */
    qparm same = {0.5f, 0.5f, -10, -10};
    expect_values(MP_OP_RELU, MP_DT_INT8, same, xs, (int32_t[]){-10, -10, -10, -9, 127}, 5);
    expect_values(MP_OP_RELU6, MP_DT_INT8, same, xs, (int32_t[]){-10, -10, -10, -9, 2}, 5);
    expect_values(MP_OP_RELU_N1_TO_1, MP_DT_INT8, same, xs, (int32_t[]){-12, -11, -10, -9, -8},
                  5);
    /* uint8 RELU requantized: in scale 1 zp 100 -> out scale 1/2 zp 0 (multiplier 2):
     * 100 -> 0, 101 -> 2, 99 -> -2 -> 0, 227 -> 254, 228 -> 256 -> 255 */
    qparm rq = {1.0f, 0.5f, 100, 0};
    expect_values(MP_OP_RELU, MP_DT_UINT8, rq, (int32_t[]){100, 101, 99, 227, 228},
                  (int32_t[]){0, 2, 0, 254, 255}, 5);
    /* LOGISTIC int8 with the specification's output (1/256, -128: XNNPACK), input 1/16:
     * 0 -> 0.5 -> 128 - 128 = 0; 127 -> 7.9375 -> 0.99964 -> 255.9 -> 256 -> 127 (saturated);
     * -128 -> -8 -> 0.000335 -> 0.09 -> 0 -> -128 */
    qparm lg = {1.0f / 16, 1.0f / 256, 0, -128};
    expect_values(MP_OP_LOGISTIC, MP_DT_INT8, lg, (int32_t[]){0, 127, -128},
                  (int32_t[]){0, 127, -128}, 3);
    /* the same with output 1/128 zp -128 (not XNNPACK's: the table): 0.5 -> 64 -> -64;
     * 0.99964 -> 127.95 -> 128 -> 0; 0.000335 -> 0.04 -> 0 -> -128 */
    lg.so = 1.0f / 128;
    expect_values(MP_OP_LOGISTIC, MP_DT_INT8, lg, (int32_t[]){0, 127, -128},
                  (int32_t[]){-64, 0, -128}, 3);
    /* TANH uint8 (1/128, zp 128: XNNPACK), input 1/16 zp 128: 128 -> 0 -> 128; 255 -> 7.9375
     * -> 0.9999998 -> 128 + 128 -> 255; 0 -> -8 -> -127.99.. -> -128 + 128 = 0;
     * 136 -> 0.5 -> 0.46212 * 128 = 59.15 -> 59 + 128 = 187 */
    qparm th = {1.0f / 16, 1.0f / 128, 128, 128};
    expect_values(MP_OP_TANH, MP_DT_UINT8, th, (int32_t[]){128, 255, 0, 136},
                  (int32_t[]){128, 255, 0, 187}, 4);
}

/* TensorFlow Lite's value for input v: PopulateLookupTable (float arithmetic, the output
 * scale inverted once) or ReluX. */
static int32_t ref_act(int32_t op, mp_dtype dt, const qparm *q, int32_t v)
{
    int32_t qmin = lo_of(dt), qmax = hi_of(dt);
    if (op == MP_OP_LOGISTIC || op == MP_OP_TANH) {
        const float inv = 1.0f / q->so;
        const float d = q->si * (float)(v - (int32_t)q->zi);
        const float f = op == MP_OP_LOGISTIC ? 1.0f / (1.0f + expf(-d)) : tanhf(d);
        const float r = roundf(f * inv) + (float)q->zo;
        return r < (float)qmin ? qmin : (r > (float)qmax ? qmax : (int32_t)r);
    }
    const double top = op == MP_OP_RELU ? INFINITY : (op == MP_OP_RELU6 ? 6.0 : 1.0);
    const float bottom = op == MP_OP_RELU_N1_TO_1 ? -1.0f : 0.0f;
    int64_t lo = (int64_t)q->zo + (int64_t)roundf(bottom / q->so);
    int64_t hi = isinf(top) ? qmax : (int64_t)q->zo + (int64_t)roundf((float)top / q->so);
    lo = lo < qmin ? qmin : lo;
    hi = hi > qmax ? qmax : hi;
    int32_t m;
    int sh;
    assert_true(mp_quantize_multiplier(q->si / q->so, &m, &sh));
    int64_t y = q->zo + mp_multiply_by_quantized_multiplier(v - (int32_t)q->zi, m, sh);
    return (int32_t)(y < lo ? lo : (y > hi ? hi : y));
}

static void test_all_inputs(void **state)
{
    (void)state;
    static const int32_t ops[] = {MP_OP_LOGISTIC, MP_OP_TANH, MP_OP_RELU, MP_OP_RELU6,
                                  MP_OP_RELU_N1_TO_1};
    size_t approx_n = 0, approx_off = 0, exact_n = 0;
    for (int d = 0; d < 2; d++) {
        const mp_dtype dt = d ? MP_DT_UINT8 : MP_DT_INT8;
        for (size_t o = 0; o < 5; o++) {
            const int32_t op = ops[o];
            const bool sigmoid_like = op == MP_OP_LOGISTIC || op == MP_OP_TANH;
            /* the specification's output (XNNPACK for LOGISTIC / TANH), then others */
            const float spec_s = op == MP_OP_LOGISTIC ? 1.0f / 256 : 1.0f / 128;
            const int64_t spec_z = op == MP_OP_LOGISTIC ? (d ? 0 : -128) : (d ? 128 : 0);
            const qparm qs[] = {
                {0.05f, sigmoid_like ? spec_s : 0.05f, d ? 130 : 3, sigmoid_like ? spec_z : (d ? 130 : 3)},
                {0.011f, sigmoid_like ? spec_s : 0.011f, d ? 0 : -128, sigmoid_like ? spec_z : (d ? 0 : -128)},
                {0.2f, 0.013f, d ? 77 : -5, d ? 200 : 90},
                {0.02f, 0.7f, d ? 255 : 127, d ? 1 : -120},
            };
            for (size_t k = 0; k < 4; k++) {
                int32_t x[256];
                for (int32_t i = 0; i < 256; i++)
                    x[i] = lo_of(dt) + i;
                kh_case c;
                run_unary(&c, op, dt, &qs[k], x, 256);
                /* XNNPACK's sigmoid / tanh requantize their own way; everything else is TFLite's */
                const bool approx = sigmoid_like && k < 2;
                for (int32_t i = 0; i < 256; i++) {
                    int32_t want = ref_act(op, dt, &qs[k], x[i]), got = byte_at(c.out[0], (size_t)i);
                    if (abs(got - want) > (approx ? 1 : 0))
                        fail_msg("op %d %s params %zu input %d: got %d, want %d", op,
                                 mp_dtype_name(dt), k, x[i], got, want);
                    approx_off += approx && got != want;
                }
                *(approx ? &approx_n : &exact_n) += 256;
                kh_free(&c);
            }
        }
    }
    print_message("8-bit activations: %zu inputs bit for bit, %zu on XNNPACK's sigmoid/tanh "
                  "(%zu off by 1)\n",
                  exact_n, approx_n, approx_off);
    assert_true(approx_off * 100 <= approx_n * 5);
}

/* ---- SOFTMAX ----------------------------------------------------------------------------- */

static void softmax_case(kh_case *c, mp_dtype dt, int32_t rows, int32_t depth, const float *si,
                         const int64_t *zi, const float *so, const int64_t *zo, float beta)
{
    kh_init(c, MP_OP_SOFTMAX, NULL);
    c->opt.beta = beta;
    mp_tensor *in = kh_input(c, dt, 2, (int32_t[]){rows, depth}, NULL);
    mp_tensor *out = kh_output(c, dt);
    kh_quant(c, in, 1, si, zi, 0);
    kh_quant(c, out, 1, so, zo, 0);
}

static void test_softmax_hand(void **state)
{
    (void)state;
    /* int8, input scale 1, beta 1: multiplier 2^26 = 2^30 * 2^-4 -> (2^30, left shift 27);
     * diff_min = -floor(31 * 2^26 / 2^27) = -15.
     * Row 0: four equal values: each exp(0) = 2^31-1 (Q0.31), their sum 4 * 2^19 = 2^21 in
     *   Q12.19, 10 leading zeros: 2 bits over one, 1/(1+0) ~ 2^31-1, so each output is
     *   (2^31 - 2) / 2^25 -> 64 (63.99..), minus 128: -64.
     * Row 1: 5 5 -120 -120: the two -125 differences are below diff_min (-128 out); the two
     *   equal ones share the sum 2^20: (2^31 - 2) / 2^24 -> 128 - 128 = 0.
     * Row 2: 7 -100 -100 -100: the maximum alone: 2^31 / 2^23 = 256 - 128 = 128 -> 127. */
    static const float one = 1.0f, out_s = 1.0f / 256;
    static const int64_t z0 = 0, zo = -128;
    kh_case c;
    softmax_case(&c, MP_DT_INT8, 3, 4, &one, &z0, &out_s, &zo, 1.0f);
    static const int8_t x[12] = {3, 3, 3, 3, 5, 5, -120, -120, 7, -100, -100, -100};
    memcpy(c.in[0]->data, x, sizeof x);
    kh_expect_ok(&c, kh_run(&c));
    static const int8_t want[12] = {-64, -64, -64, -64, 0, 0, -128, -128, 127, -128, -128, -128};
    assert_memory_equal(c.out[0]->data, want, sizeof want);
    kh_free(&c);
}

/* A row of 8193 equal int8 values: each probability is 1/8193, 0.03 of the output's 1/256
 * step, so every output is 0 - 128 = -128. Their exps (each 1.0, 2^19 in Q12.19) add up to
 * 8193 * 2^19, past the int32 sum TensorFlow Lite keeps (undefined there; wrapped, it was
 * 2^19, one value's worth, and every output came out 127); memprof saturates the sum at
 * 2^31 - 1 (4096 in Q12.19), which gives each value 1/4096 -> 0.06 of a step -> -128. */
static void test_softmax_long_row(void **state)
{
    (void)state;
    static const float one = 1.0f, out_s = 1.0f / 256;
    static const int64_t z0 = 0, zo = -128;
    enum { DEPTH = 8193 };
    kh_case c;
    softmax_case(&c, MP_DT_INT8, 1, DEPTH, &one, &z0, &out_s, &zo, 1.0f);
    memset(c.in[0]->data, 17, DEPTH);
    kh_expect_ok(&c, kh_run(&c));
    for (int i = 0; i < DEPTH; i++)
        if (((const int8_t *)c.out[0]->data)[i] != -128)
            fail_msg("output %d is %d, want -128", i, ((const int8_t *)c.out[0]->data)[i]);
    kh_free(&c);
}

/* Random rows against the real softmax of beta * scale * (x - zp), quantized to 1/256. */
static void test_softmax_random(void **state)
{
    (void)state;
    uint32_t seed = 99;
    size_t n = 0, off = 0;
    for (int k = 0; k < 24; k++) {
        const mp_dtype dt = k % 2 ? MP_DT_UINT8 : MP_DT_INT8;
        const float si = 0.01f + 0.03f * (float)(k % 5), so = 1.0f / 256;
        const int64_t zi = dt == MP_DT_INT8 ? -20 + k : 100 + k, zo = dt == MP_DT_INT8 ? -128 : 0;
        const float beta = k % 3 == 0 ? 1.0f : (k % 3 == 1 ? 0.5f : 2.5f);
        const int32_t rows = 1 + k % 4, depth = 1 + (k * 7) % 37;
        kh_case c;
        softmax_case(&c, dt, rows, depth, &si, &zi, &so, &zo, beta);
        for (int32_t i = 0; i < rows * depth; i++) {
            seed = seed * 1664525u + 1013904223u;
            ((uint8_t *)c.in[0]->data)[i] = (uint8_t)(seed >> 13);
        }
        kh_expect_ok(&c, kh_run(&c));
        for (int32_t r = 0; r < rows; r++) {
            double mx = -1e300, sum = 0, v[64];
            for (int32_t j = 0; j < depth; j++) {
                v[j] = (double)beta * si * (byte_at(c.in[0], (size_t)(r * depth + j)) - zi);
                mx = v[j] > mx ? v[j] : mx;
            }
            for (int32_t j = 0; j < depth; j++)
                sum += exp(v[j] - mx);
            for (int32_t j = 0; j < depth; j++) {
                double want = round(exp(v[j] - mx) / sum * 256) + (double)zo;
                want = fmin(fmax(want, lo_of(dt)), hi_of(dt));
                int32_t got = byte_at(c.out[0], (size_t)(r * depth + j));
                if (fabs(got - want) > 1)
                    fail_msg("softmax %s case %d row %d column %d: got %d, want %g",
                             mp_dtype_name(dt), k, r, j, got, want);
                off += got != (int32_t)want;
                n++;
            }
        }
        kh_free(&c);
    }
    print_message("8-bit softmax: %zu outputs against the real softmax, %zu off by 1\n", n, off);
    assert_true(off * 100 <= n * 5);
}

/* ---- RESIZE_BILINEAR ---------------------------------------------------------------------- */

/* TensorFlow Lite's source coordinate of output index o in each mode. */
static double src_coord(int o, int in, int out, bool align, bool half)
{
    if (align)
        return out > 1 ? (double)o * (in - 1) / (out - 1) : 0.0;
    double scale = (double)in / out;
    return half ? fmax(0.0, (o + 0.5) * scale - 0.5) : o * scale;
}

static void test_resize(void **state)
{
    (void)state;
    size_t n = 0, off = 0;
    uint32_t seed = 5;
    for (int k = 0; k < 12; k++) {
        const mp_dtype dt = k % 2 ? MP_DT_UINT8 : MP_DT_INT8;
        const bool align = k % 3 == 1, half = k % 3 == 2;
        const int32_t ih = 2 + k % 4, iw = 3 + k % 3, ch = 1 + k % 3, oh = 3 + (k * 5) % 7,
                      ow = 2 + (k * 3) % 8;
        static const float s = 0.1f;
        static const int64_t z = 3;
        static int32_t size[2];
        size[0] = oh;
        size[1] = ow;
        kh_case c;
        kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
        c.opt.align_corners = align;
        c.opt.half_pixel_centers = half;
        mp_tensor *in = kh_input(&c, dt, 4, (int32_t[]){1, ih, iw, ch}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
        mp_tensor *out = kh_output(&c, dt);
        kh_quant(&c, in, 1, &s, &z, 0);
        kh_quant(&c, out, 1, &s, &z, 0);
        for (int32_t i = 0; i < ih * iw * ch; i++) {
            seed = seed * 1664525u + 1013904223u;
            ((uint8_t *)in->data)[i] = (uint8_t)(seed >> 11);
        }
        kh_expect_ok(&c, kh_run(&c));
        for (int32_t y = 0; y < oh; y++)
            for (int32_t x = 0; x < ow; x++)
                for (int32_t q = 0; q < ch; q++) {
                    double fy = src_coord(y, ih, oh, align, half);
                    double fx = src_coord(x, iw, ow, align, half);
                    int y0 = (int)floor(fy), x0 = (int)floor(fx);
                    int y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
                    double dy = fy - y0, dx = fx - x0;
#define AT(yy, xx) byte_at(in, (size_t)(((yy) * iw + (xx)) * ch + q))
                    double want = AT(y0, x0) * (1 - dy) * (1 - dx) + AT(y0, x1) * (1 - dy) * dx +
                                  AT(y1, x0) * dy * (1 - dx) + AT(y1, x1) * dy * dx;
#undef AT
                    int32_t got = byte_at(out, (size_t)((y * ow + x) * ch + q));
                    if (fabs(got - want) > 1.0)
                        fail_msg("resize %s case %d (%d,%d,%d): got %d, want %.3f",
                                 mp_dtype_name(dt), k, y, x, q, got, want);
                    off += got != (int32_t)lround(want);
                    n++;
                }
        kh_free(&c);
    }
    print_message("8-bit resize: %zu outputs, %zu off the rounded reference by 1\n", n, off);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void expect_refused(int32_t op, mp_dtype din, mp_dtype dout, qparm q, int per_channel,
                           const char *needle)
{
    static const float sc2[2] = {0.5f, 0.25f};
    static const int64_t zp2[2] = {0, 0};
    static const int32_t size[2] = {4, 4};
    kh_case c;
    kh_init(&c, op, NULL);
    mp_tensor *in = kh_input(&c, din, op == MP_OP_RESIZE_BILINEAR ? 4 : 2,
                             (int32_t[]){1, 2, 2, 2}, NULL);
    if (op == MP_OP_RESIZE_BILINEAR)
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    mp_tensor *out = kh_output(&c, dout);
    kh_quant(&c, in, 1, &q.si, &q.zi, 0);
    kh_quant(&c, out, 1, &q.so, &q.zo, 0);
    if (per_channel)
        kh_quant(&c, in, 2, sc2, zp2, 1);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, needle);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    qparm q = {0.5f, 0.5f, 0, 0};
    /* int16 RELU / RELU6 run as 16x8 (test_kernels_int16); TensorFlow Lite's RELU_N1_TO_1
     * takes no int16 */
    expect_refused(MP_OP_RELU_N1_TO_1, MP_DT_INT16, MP_DT_INT16, q, 0, "i16");
    expect_refused(MP_OP_LOGISTIC, MP_DT_INT8, MP_DT_UINT8, q, 0, "output 't1' is u8");
    expect_refused(MP_OP_TANH, MP_DT_UINT8, MP_DT_UINT8, q, 1, "'t0' has one scale per channel");
    expect_refused(MP_OP_SOFTMAX, MP_DT_INT8, MP_DT_INT8, q, 0,
                   "8-bit softmax produces scale 1/256 and zero point -128");
    qparm sm = {0.5f, 1.0f / 256, 0, 128};
    expect_refused(MP_OP_SOFTMAX, MP_DT_UINT8, MP_DT_UINT8, sm, 0, "zero point 0");
    expect_refused(MP_OP_SOFTMAX, MP_DT_INT16, MP_DT_INT16, sm, 0, "i16");
    expect_refused(MP_OP_RESIZE_BILINEAR, MP_DT_UINT8, MP_DT_UINT8, (qparm){0.5f, 0.25f, 0, 0}, 0,
                   "must share their quantization");
    expect_refused(MP_OP_RESIZE_BILINEAR, MP_DT_INT8, MP_DT_UINT8, q, 0, "'t2' u8");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_activations), cmocka_unit_test(test_all_inputs),
        cmocka_unit_test(test_softmax_hand),
        cmocka_unit_test(test_softmax_long_row),     cmocka_unit_test(test_softmax_random),
        cmocka_unit_test(test_resize),           cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
