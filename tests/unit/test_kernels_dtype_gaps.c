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
 * quantization, int8 into uint8, float32 into int16, int16 into int8, int32.
 *
 * RESIZE_BILINEAR on int16 (TensorFlow Lite's ResizeBilinearInteger<int16_t>): linear inputs
 * in the three sampling modes whose outputs are exact by hand, ties rounded half away from
 * zero, ramps resized by scales that are not exact in Q10 against the position restated
 * from the Q10 scale (and within 2 of the exact position); refusals of another output scale,
 * int16 into int8, int32.
 *
 * LOG, RSQRT and SQRT on int16 (elementwise.cc, zero points 0): the values TensorFlow Lite
 * gives well below 0 by hand, LOG and RSQRT through the interpolated table within its chord
 * error of the function, SQRT's truncation by hand (16 sqrt 2 -> 22) and saturation; negative
 * RSQRT / SQRT inputs fail the run; no quantization, a zero point, an int8 output refused.
 *
 * CAST from and to float16, float64, uint16, uint32 and complex64 (cast.cc): float16's
 * rounding to nearest even worked out by hand at its edges (largest, overflow, subnormals,
 * ties), one rounding from int64, unsigned wrapping, complex64's real part; uint64 refused.
 *
 * int16 indices (gather.cc, gather_nd.cc, topk_v2.cc): GATHER, GATHER_ND and TOPK_V2's k and
 * indices output by hand, an index past the end failing the run; int8 indices and int64
 * TOPK_V2 k / indices refused.
 *
 * MEAN of int32 / int64 (reduce.cc EvalMean -> reference_ops::Mean, an int64 sum divided
 * toward zero): rows and columns by hand, -7 / 2 -> -3, a sum past INT32_MAX, an empty input's
 * zeros; int32 into float32 and bool refused.
 *
 * SIGN and ATAN2 on float64 (sign.cc, atan2.cc): values a float32 path would lose (1e-300,
 * 1e-20) and the signed edges by hand; float64 into float32 and float16 refused.
 *
 * RESHAPE, SQUEEZE and EXPAND_DIMS on strings (reshape.cc: the output needs exactly the
 * input's bytes): a writer-built chain of the three on a string input, run twice with other
 * strings in each memory mode, every output holding the input's strings in its shape; a
 * string into int32 and back refused, a buffer of another count refused. GATHER of rank-1
 * string params (gather.cc's GatherStrings) in that model and by hand (rank-2 indices, an
 * empty string), GATHER_ND of rank-2 string params by rows and by elements; an index past
 * the strings, rank-2 GATHER params, an int32 output refused. EQUAL
 * and NOT_EQUAL of strings (ComparisonString) in that model and by hand with broadcasting
 * (a row vector, a scalar; a prefix is not equal); LESS of strings refused. FILL with a
 * string value (FillString) by hand: [2,2] copies, an empty shape, an empty string. SLICE and
 * STRIDED_SLICE of strings by hand (a block, a shrunk strided row, a reversed row) and SLICE
 * in the model. TILE of strings by hand (a vector, a column, empty strings); TRANSPOSE of
 * strings refused.
 *
 * LESS of float16 (LessEval's Comparison<Eigen::half>) by hand: NaN, subnormals, signed zeros,
 * infinity, a broadcast scalar; GREATER of float16 refused.
 *
 * Plain integers as the newest kernels (LiteRT's add.cc, mul.cc, floor_div.cc, floor_mod.cc,
 * where.cc) compute them, by hand: int16 ADD / MUL without quantization wrapping in 16 bits
 * before each fused activation clamps, broadcast; uint32 MUL modulo 2^32 and its activations
 * (RELU_N1_TO_1's bounds 2^32 - 1 and 1 give 1 everywhere); int8 / int16 FLOOR_MOD and
 * FLOOR_DIV with negative operands, MIN / -1, a broadcast divisor, the stored values of a
 * quantized int8; a zero divisor fails each run; WHERE of uint32. Refused as there: SUB of
 * int16 without quantization, DIV of int16, ADD of uint32, FLOOR_DIV of uint8, int16 ADD with
 * quantized inputs but not output, a TANH fused onto int16 ADD, WHERE of int16. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
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

/* ---- RESIZE_BILINEAR: int16 ------------------------------------------------------------- */

/* An int16 RESIZE_BILINEAR of x [1, ih, iw, 1] to oh x ow (input and output scale 1/4096,
 * zero point 0) with the given options; runs it. */
static mp_status rb16_run(kh_case *c, int32_t ih, int32_t iw, const int16_t *x, int32_t oh,
                          int32_t ow, bool align, bool half)
{
    static const float s = 1.0f / 4096;
    static const int64_t z = 0;
    static int32_t size[2];
    size[0] = oh, size[1] = ow;
    kh_init(c, MP_OP_RESIZE_BILINEAR, NULL);
    c->opt.align_corners = align;
    c->opt.half_pixel_centers = half;
    mp_tensor *in = kh_input(c, MP_DT_INT16, 4, (int32_t[]){1, ih, iw, 1}, NULL);
    kh_input(c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    mp_tensor *out = kh_output(c, MP_DT_INT16);
    kh_quant(c, in, 1, &s, &z, 0);
    kh_quant(c, out, 1, &s, &z, 0);
    memcpy(in->data, x, (size_t)(ih * iw) * sizeof(int16_t));
    return kh_run(c);
}

static void expect_i16(const kh_case *c, const int16_t *want, size_t count, const char *what)
{
    for (size_t i = 0; i < count; i++)
        if (((const int16_t *)c->out[0]->data)[i] != want[i])
            fail_msg("%s element %zu: got %d, want %d", what, i,
                     ((const int16_t *)c->out[0]->data)[i], want[i]);
}

static void test_resize_bilinear_i16_hand(void **state)
{
    (void)state;
    kh_case c;
    /* 2x2 -> 4x4, neither option: source positions 0, 0.5, 1, 1.5 (the last clamped to the
     * last pixel) on both axes; the input is linear (0 + 100 x + 200 y), so is the output */
    const int16_t x[4] = {0, 100, 200, 300};
    const int16_t legacy[16] = {0,   50,  100, 100, 100, 150, 200, 200,
                                200, 250, 300, 300, 200, 250, 300, 300};
    kh_expect_ok(&c, rb16_run(&c, 2, 2, x, 4, 4, false, false));
    expect_i16(&c, legacy, 16, "legacy");
    kh_free(&c);
    /* half_pixel_centers: positions (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped
     * to the edge pixels: 400 fx + 800 fy with f = 0, 0.25, 0.75, 1 */
    const int16_t xh[4] = {0, 400, 800, 1200};
    int16_t half[16];
    const int32_t f4[4] = {0, 1, 3, 4}; /* quarters */
    for (int yy = 0; yy < 4; yy++)
        for (int xx = 0; xx < 4; xx++)
            half[yy * 4 + xx] = (int16_t)(100 * f4[xx] + 200 * f4[yy]);
    kh_expect_ok(&c, rb16_run(&c, 2, 2, xh, 4, 4, false, true));
    expect_i16(&c, half, 16, "half_pixel_centers");
    kh_free(&c);
    /* align_corners 2x2 -> 3x3: positions 0, 0.5, 1 */
    const int16_t align[9] = {0, 200, 400, 400, 600, 800, 800, 1000, 1200};
    kh_expect_ok(&c, rb16_run(&c, 2, 2, xh, 3, 3, true, false));
    expect_i16(&c, align, 9, "align_corners");
    kh_free(&c);
    /* ties round half away from zero: halfway between 0 and 1 is 1, between 0 and -1 is -1,
     * between -3 and 0 (-1.5) is -2 */
    const int16_t xt[3] = {1, -1, -3};
    for (int k = 0; k < 3; k++) {
        const int16_t row[2] = {0, xt[k]};
        const int16_t want[4] = {0, (int16_t)(k == 0 ? 1 : k == 1 ? -1 : -2), xt[k], xt[k]};
        kh_expect_ok(&c, rb16_run(&c, 1, 2, row, 1, 4, false, false));
        expect_i16(&c, want, 4, "tie");
        kh_free(&c);
    }
}

/* 3 -> 7 and 5 -> 3 along the width of a ramp of 1000 per pixel: TensorFlow Lite's scale in
 * Q10, round(1024 * in / out) (align_corners: round(1024 * (in - 1) / (out - 1))), makes the
 * source position o * scale / 1024, the value 1000 times it (the last pixel past the end),
 * rounded half away from zero; each also within 2 of the exact position's value. */
static void test_resize_bilinear_i16_q10(void **state)
{
    (void)state;
    const int32_t sizes[3][2] = {{3, 7}, {5, 3}, {4, 9}};
    const int16_t ramp[5] = {0, 1000, 2000, 3000, 4000};
    for (int k = 0; k < 3; k++)
        for (int align = 0; align < 2; align++) {
            const int32_t in = sizes[k][0], out = sizes[k][1];
            const int32_t num = align ? in - 1 : in, den = align ? out - 1 : out;
            const int32_t scale = (1024 * num + den / 2) / den;
            kh_case c;
            kh_expect_ok(&c, rb16_run(&c, 1, in, ramp, 1, out, align, false));
            for (int32_t o = 0; o < out; o++) {
                const int32_t pos = o * scale < 1024 * (in - 1) ? o * scale : 1024 * (in - 1);
                const int64_t w10 = 1000LL * pos;
                const int16_t want = (int16_t)((w10 + 512) / 1024);
                const double exact = 1000.0 * fmin((double)o * num / den, in - 1);
                const int16_t got = ((const int16_t *)c.out[0]->data)[o];
                if (got != want || fabs(got - exact) > 2)
                    fail_msg("%d -> %d (align %d) at %d: got %d, want %d (exact %g)", in, out,
                             align, o, got, want, exact);
            }
            kh_free(&c);
        }
}

static void test_resize_bilinear_i16_refusals(void **state)
{
    (void)state;
    static const float s = 1.0f / 4096, s2 = 1.0f / 2048;
    static const int64_t z = 0;
    static int32_t size[2] = {4, 4};
    kh_case c;
    /* the output on another scale */
    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT16, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    mp_tensor *out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s2, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "must share their quantization");
    kh_free(&c);
    /* int16 into int8, int32 */
    const mp_dtype bad[2][2] = {{MP_DT_INT16, MP_DT_INT8}, {MP_DT_INT32, MP_DT_INT32}};
    for (int i = 0; i < 2; i++) {
        kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
        kh_input(&c, bad[i][0], 4, (int32_t[]){1, 2, 2, 1}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
        kh_output(&c, bad[i][1]);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, "only f32, i8, u8 and i16");
        kh_free(&c);
    }
}

/* ---- LOG, RSQRT, SQRT: int16 ------------------------------------------------------------ */

/* A one-input int16 node op of the values x (scales si, so; zero points 0); runs it. */
static mp_status u16_run(kh_case *c, int32_t op, float si, float so, const int16_t *x,
                         int32_t count)
{
    static float s_si, s_so;
    static const int64_t z = 0;
    s_si = si, s_so = so;
    kh_init(c, op, NULL);
    mp_tensor *in = kh_input(c, MP_DT_INT16, 1, (int32_t[]){count}, NULL);
    mp_tensor *out = kh_output(c, MP_DT_INT16);
    kh_quant(c, in, 1, &s_si, &z, 0);
    kh_quant(c, out, 1, &s_so, &z, 0);
    memcpy(in->data, x, (size_t)count * sizeof(int16_t));
    return kh_run(c);
}

static int32_t o16(const kh_case *c, int i) { return ((const int16_t *)c->out[0]->data)[i]; }

static void test_log_rsqrt_sqrt_i16(void **state)
{
    (void)state;
    kh_case c;
    /* LOG, input scale 2^-10, output 2^-12, through TensorFlow Lite's 513-entry table over
     * the input's range [-32, 32), steps of 1/8 (128 input units): an input at or below
     * -129 lies between two entries of values <= 0, both the lowest value (-8 in the output's
     * units, -32768 after clamping); at 0 and 1/8 above the table departs from log to halve
     * its chord's error; from 1 up within 16 units (1/256) of log x, the chord of log over a
     * step straying by at most (1/8)^2 / 8 = 2^-9 there */
    const int16_t xl[8] = {-129, -5000, -32768, 1024, 2048, 5000, 20000, 32767};
    kh_expect_ok(&c, u16_run(&c, MP_OP_LOG, 1.0f / 1024, 1.0f / 4096, xl, 8));
    for (int i = 0; i < 3; i++)
        assert_int_equal(o16(&c, i), -32768);
    for (int i = 3; i < 8; i++) {
        const double want = log(xl[i] / 1024.0) * 4096;
        if (fabs(o16(&c, i) - want) > 16)
            fail_msg("LOG of %d: got %d, want %g within 16", xl[i], o16(&c, i), want);
    }
    kh_free(&c);
    /* RSQRT, scales 2^-10, through the same table: 1 -> 1 (1024), 4 -> 1/2 (512),
     * 16 -> 1/4 (256), 9 -> 1/3 (341.3) within 2 (the chord's error at 1 is 1.5 units) */
    const int16_t xr[5] = {2048, 1024, 4096, 16384, 9216};
    const double wr[5] = {1024 / 1.4142135623730951, 1024, 512, 256, 1024.0 / 3};
    kh_expect_ok(&c, u16_run(&c, MP_OP_RSQRT, 1.0f / 1024, 1.0f / 1024, xr, 5));
    for (int i = 0; i < 5; i++)
        if (fabs(o16(&c, i) - wr[i]) > 2)
            fail_msg("RSQRT of %d: got %d, want %g within 2", xr[i], o16(&c, i), wr[i]);
    kh_free(&c);
    /* SQRT, scales 2^-8, truncated toward zero: 0 -> 0, 1 -> 256, 4 -> 512, 2/256 ->
     * 16 sqrt 2 = 22.6 -> 22, 127.996 -> 2896.2 -> 2896 */
    const int16_t xs[5] = {0, 256, 1024, 2, 32767};
    const int32_t ws[5] = {0, 256, 512, 22, 2896};
    kh_expect_ok(&c, u16_run(&c, MP_OP_SQRT, 1.0f / 256, 1.0f / 256, xs, 5));
    for (int i = 0; i < 5; i++)
        assert_int_equal(o16(&c, i), ws[i]);
    kh_free(&c);
    /* SQRT onto a smaller output scale saturates: sqrt(128) = 11.3 at 2^-12 -> 32767 */
    kh_expect_ok(&c, u16_run(&c, MP_OP_SQRT, 1.0f / 256, 1.0f / 4096, xs + 4, 1));
    assert_int_equal(o16(&c, 0), 32767);
    kh_free(&c);
}

static void test_log_rsqrt_sqrt_i16_refusals(void **state)
{
    (void)state;
    kh_case c;
    /* a negative input fails the run of RSQRT and SQRT, as in TensorFlow Lite */
    const int16_t neg[2] = {4, -1};
    kh_expect_fail(&c, u16_run(&c, MP_OP_RSQRT, 1.0f / 1024, 1.0f / 1024, neg, 2), MP_ERR_ARG,
                   "element 1 is -1");
    kh_free(&c);
    kh_expect_fail(&c, u16_run(&c, MP_OP_SQRT, 1.0f / 1024, 1.0f / 1024, neg, 2), MP_ERR_ARG,
                   "only defined for non-negative");
    kh_free(&c);
    /* int16 without quantization, a non-zero zero point, an int8 output */
    static const float s = 1.0f / 1024;
    static const int64_t z = 0, z3 = 3;
    const int ops[3] = {MP_OP_LOG, MP_OP_RSQRT, MP_OP_SQRT};
    for (int k = 0; k < 3; k++)
        for (int f = 0; f < 3; f++) {
            kh_init(&c, ops[k], NULL);
            mp_tensor *in = kh_input(&c, MP_DT_INT16, 1, (int32_t[]){2}, NULL);
            mp_tensor *out = kh_output(&c, f == 2 ? MP_DT_INT8 : MP_DT_INT16);
            if (f != 0)
                kh_quant(&c, in, 1, &s, f == 1 ? &z3 : &z, 0);
            kh_quant(&c, out, 1, &s, &z, 0);
            kh_expect_error(&c, MP_ERR_UNSUPPORTED, f == 1 ? "zero point 3" : NULL);
            kh_free(&c);
        }
}

/* ---- CAST: float16, float64, uint16, uint32, complex64 ----------------------------------- */

/* A CAST of count elements at x from dtype a to dtype b; runs it, the output's bytes in *out. */
static void cast_case(kh_case *c, mp_dtype a, mp_dtype b, const void *x, int32_t count)
{
    kh_init(c, MP_OP_CAST, NULL);
    mp_tensor *in = kh_input(c, a, 1, (int32_t[]){count}, NULL);
    kh_output(c, b);
    memcpy(in->data, x, (size_t)count * mp_dtype_size(a));
    kh_expect_ok(c, kh_run(c));
}

static void test_cast_more_dtypes(void **state)
{
    (void)state;
    kh_case c;
    /* float32 -> float16, rounded to nearest even (IEEE 754 binary16 worked out by hand):
     * 1 = 0x3C00, -2 = 0xC000, 65504 (the largest) = 0x7BFF, 65519 -> 65504, 65520 (a tie
     * with an odd last bit) -> infinity 0x7C00, 1/3 -> 0x3555 (0.333251953125),
     * 2^-24 (the smallest subnormal) = 0x0001, 2^-25 (a tie with 0) -> 0, 3 * 2^-25 (a tie
     * between 1 and 2 units) -> 2, 2^-14 - 2^-25 (a tie into the first normal) -> 0x0400,
     * 1 + 2^-11 (a tie, even 0x3C00) -> 0x3C00, 1 + 3 * 2^-11 -> 0x3C02, NaN -> 0x7E00 */
    const float f[13] = {1.0f, -2.0f, 65504.0f, 65519.0f, 65520.0f, 1.0f / 3,
                         0x1p-24f, 0x1p-25f, 0x3p-25f, 0x1p-14f - 0x1p-25f, 1.0f + 0x1p-11f,
                         1.0f + 0x3p-11f, NAN};
    const uint16_t h[13] = {0x3C00, 0xC000, 0x7BFF, 0x7BFF, 0x7C00, 0x3555, 0x0001,
                            0x0000, 0x0002, 0x0400, 0x3C00, 0x3C02, 0x7E00};
    cast_case(&c, MP_DT_FLOAT32, MP_DT_FLOAT16, f, 13);
    for (int i = 0; i < 13; i++)
        if (((const uint16_t *)c.out[0]->data)[i] != h[i])
            fail_msg("f32 %a -> f16: got 0x%04x, want 0x%04x", (double)f[i],
                     ((const uint16_t *)c.out[0]->data)[i], h[i]);
    kh_free(&c);
    /* float16 -> float32 (exact), int8 (truncated), float64, bool */
    const uint16_t hs[4] = {0x3555, 0xC500 /* -5 */, 0xC170 /* -2.71875 */, 0x0000};
    const float hf[4] = {0.333251953125f, -5.0f, -2.71875f, 0.0f};
    const int8_t hi[4] = {0, -5, -2, 0};
    cast_case(&c, MP_DT_FLOAT16, MP_DT_FLOAT32, hs, 4);
    for (int i = 0; i < 4; i++)
        assert_true(((const float *)c.out[0]->data)[i] == hf[i]);
    kh_free(&c);
    cast_case(&c, MP_DT_FLOAT16, MP_DT_INT8, hs, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(((const int8_t *)c.out[0]->data)[i], hi[i]);
    kh_free(&c);
    cast_case(&c, MP_DT_FLOAT16, MP_DT_FLOAT64, hs, 4);
    for (int i = 0; i < 4; i++)
        assert_true(((const double *)c.out[0]->data)[i] == (double)hf[i]);
    kh_free(&c);
    cast_case(&c, MP_DT_FLOAT16, MP_DT_BOOL, hs, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(((const uint8_t *)c.out[0]->data)[i], i < 3);
    kh_free(&c);
    /* float64 -> float32 (0.1 to the nearest float, 1e300 to infinity), int32 (toward zero),
     * bool (-0.5 is true, 0 false) */
    const double d[4] = {0.1, 1e300, -3.9, -0.5};
    cast_case(&c, MP_DT_FLOAT64, MP_DT_FLOAT32, d, 4);
    assert_true(((const float *)c.out[0]->data)[0] == 0.1f);
    assert_true(isinf(((const float *)c.out[0]->data)[1]));
    assert_true(((const float *)c.out[0]->data)[2] == -3.9f);
    kh_free(&c);
    cast_case(&c, MP_DT_FLOAT64, MP_DT_INT32, d + 2, 2);
    assert_int_equal(((const int32_t *)c.out[0]->data)[0], -3);
    assert_int_equal(((const int32_t *)c.out[0]->data)[1], 0);
    kh_free(&c);
    const double zd[2] = {0.0, -0.5};
    cast_case(&c, MP_DT_FLOAT64, MP_DT_BOOL, zd, 2);
    assert_int_equal(((const uint8_t *)c.out[0]->data)[0], 0);
    assert_int_equal(((const uint8_t *)c.out[0]->data)[1], 1);
    kh_free(&c);
    /* int64 -> float64 and float32: 2^53 + 1 is not a double, 2^24 + 1 not a float (each to
     * the even neighbour below); 2^60 + 2^36 + 1 to float32 in one rounding is 2^60 + 2^37
     * (floats are 2^37 apart there, and it lies 1 above the half), where going through a
     * double would give 2^60 (the double drops the 1, leaving a tie to even) */
    const int64_t big[3] = {(INT64_C(1) << 53) + 1, (INT64_C(1) << 24) + 1,
                            (INT64_C(1) << 60) + (INT64_C(1) << 36) + 1};
    cast_case(&c, MP_DT_INT64, MP_DT_FLOAT64, big, 3);
    assert_true(((const double *)c.out[0]->data)[0] == 9007199254740992.0);
    kh_free(&c);
    cast_case(&c, MP_DT_INT64, MP_DT_FLOAT32, big, 3);
    assert_true(((const float *)c.out[0]->data)[1] == 16777216.0f);
    assert_true(((const float *)c.out[0]->data)[2] == 0x1p60f + 0x1p37f);
    kh_free(&c);
    cast_case(&c, MP_DT_INT64, MP_DT_FLOAT16, big + 1, 1); /* 2^24 + 1 -> infinity */
    assert_int_equal(((const uint16_t *)c.out[0]->data)[0], 0x7C00);
    kh_free(&c);
    /* unsigned: uint32 4294967295 -> int32 -1 and float32 2^32; int32 -1 -> uint16 65535,
     * uint32 4294967295; uint16 65535 -> float32 65535, int8 -1 */
    const uint32_t u32 = 4294967295u;
    cast_case(&c, MP_DT_UINT32, MP_DT_INT32, &u32, 1);
    assert_int_equal(((const int32_t *)c.out[0]->data)[0], -1);
    kh_free(&c);
    cast_case(&c, MP_DT_UINT32, MP_DT_FLOAT32, &u32, 1);
    assert_true(((const float *)c.out[0]->data)[0] == 4294967296.0f);
    kh_free(&c);
    const int32_t m1 = -1;
    cast_case(&c, MP_DT_INT32, MP_DT_UINT16, &m1, 1);
    assert_int_equal(((const uint16_t *)c.out[0]->data)[0], 65535);
    kh_free(&c);
    cast_case(&c, MP_DT_INT32, MP_DT_UINT32, &m1, 1);
    assert_true(((const uint32_t *)c.out[0]->data)[0] == 4294967295u);
    kh_free(&c);
    const uint16_t u16 = 65535;
    cast_case(&c, MP_DT_UINT16, MP_DT_FLOAT32, &u16, 1);
    assert_true(((const float *)c.out[0]->data)[0] == 65535.0f);
    kh_free(&c);
    cast_case(&c, MP_DT_UINT16, MP_DT_INT8, &u16, 1);
    assert_int_equal(((const int8_t *)c.out[0]->data)[0], -1);
    kh_free(&c);
    /* complex64: its real part to int32 (2.5 + 7i -> 2) and float32; int32 5 -> 5 + 0i; a
     * complex64 copied whole */
    const float cx[2] = {2.5f, 7.0f};
    cast_case(&c, MP_DT_COMPLEX64, MP_DT_INT32, cx, 1);
    assert_int_equal(((const int32_t *)c.out[0]->data)[0], 2);
    kh_free(&c);
    cast_case(&c, MP_DT_COMPLEX64, MP_DT_FLOAT32, cx, 1);
    assert_true(((const float *)c.out[0]->data)[0] == 2.5f);
    kh_free(&c);
    const int32_t five = 5;
    cast_case(&c, MP_DT_INT32, MP_DT_COMPLEX64, &five, 1);
    assert_true(((const float *)c.out[0]->data)[0] == 5.0f);
    assert_true(((const float *)c.out[0]->data)[1] == 0.0f);
    kh_free(&c);
    cast_case(&c, MP_DT_COMPLEX64, MP_DT_COMPLEX64, cx, 1);
    assert_true(((const float *)c.out[0]->data)[1] == 7.0f);
    kh_free(&c);
    /* still refused: string, uint64 */
    kh_init(&c, MP_OP_CAST, NULL);
    kh_input(&c, MP_DT_UINT64, 1, (int32_t[]){1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "cannot cast 't0' u64");
    kh_free(&c);
}

/* ---- GATHER, GATHER_ND, TOPK_V2: int16 indices ------------------------------------------ */

static void test_int16_indices(void **state)
{
    (void)state;
    kh_case c;
    /* GATHER rows 2, 0, 2 of a 3x2 float matrix along axis 0 */
    const float p[6] = {1, 2, 3, 4, 5, 6};
    static const int16_t rows[3] = {2, 0, 2};
    kh_init(&c, MP_OP_GATHER, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    kh_input(&c, MP_DT_INT16, 1, (int32_t[]){3}, rows);
    kh_output(&c, MP_DT_FLOAT32);
    memcpy(in->data, p, sizeof p);
    kh_expect_ok(&c, kh_run(&c));
    const float want[6] = {5, 6, 1, 2, 5, 6};
    assert_memory_equal(c.out[0]->data, want, sizeof want);
    kh_free(&c);
    /* an int16 index past the end fails the run, as an int32 one does */
    static const int16_t bad[1] = {3};
    kh_init(&c, MP_OP_GATHER, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, p);
    mp_tensor *bi = kh_input(&c, MP_DT_INT16, 1, (int32_t[]){1}, NULL);
    memcpy(bi->data, bad, sizeof bad);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "index 3 (element 0 of indices 't1') is out of range");
    kh_free(&c);
    /* GATHER_ND: elements (1, 0) and (0, 1) of the matrix: 3 and 2 */
    static const int16_t coords[4] = {1, 0, 0, 1};
    kh_init(&c, MP_OP_GATHER_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, p);
    kh_input(&c, MP_DT_INT16, 2, (int32_t[]){2, 2}, coords);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(((const float *)c.out[0]->data)[0] == 3.0f);
    assert_true(((const float *)c.out[0]->data)[1] == 2.0f);
    kh_free(&c);
    /* TOPK_V2 with an int16 k (2) and int16 indices: [3, 9, 1, 9] -> 9 at 1, 9 at 3 (the
     * lower position first on a tie) */
    const int32_t row[4] = {3, 9, 1, 9};
    static const int16_t k2 = 2;
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, row);
    kh_input(&c, MP_DT_INT16, 0, NULL, &k2);
    kh_output(&c, MP_DT_INT32);
    kh_output(&c, MP_DT_INT16);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((const int32_t *)c.out[0]->data)[0], 9);
    assert_int_equal(((const int32_t *)c.out[0]->data)[1], 9);
    assert_int_equal(((const int16_t *)c.out[1]->data)[0], 1);
    assert_int_equal(((const int16_t *)c.out[1]->data)[1], 3);
    kh_free(&c);
    /* refused, as by TensorFlow Lite: int8 indices, int64 TOPK indices or k */
    static const int8_t i8[1] = {0};
    kh_init(&c, MP_OP_GATHER, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, p);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){1}, i8);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "(supported: i16, i32, i64)");
    kh_free(&c);
    static const int64_t k64 = 2;
    for (int f = 0; f < 2; f++) {
        kh_init(&c, MP_OP_TOPK_V2, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, row);
        if (f == 0)
            kh_input(&c, MP_DT_INT16, 0, NULL, &k2);
        else
            kh_input(&c, MP_DT_INT64, 0, NULL, &k64);
        kh_output(&c, MP_DT_INT32);
        kh_output(&c, f == 0 ? MP_DT_INT64 : MP_DT_INT32);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                        f == 0 ? "expected i32 or i16" : "i64; expected i32 or i16");
        kh_free(&c);
    }
}

/* ---- MEAN: int32, int64 ------------------------------------------------------------------ */

/* MEAN of a rows x cols int32 or int64 matrix x over axis `axis` (keep_dims off); runs it. */
static void mean_int_case(kh_case *c, mp_dtype dt, int32_t rows, int32_t cols, const void *x,
                          int32_t axis)
{
    static int32_t ax;
    ax = axis;
    kh_init(c, MP_OP_MEAN, NULL);
    mp_tensor *in = kh_input(c, dt, 2, (int32_t[]){rows, cols}, NULL);
    kh_input(c, MP_DT_INT32, 1, (int32_t[]){1}, &ax);
    kh_output(c, dt);
    if (in->bytes)
        memcpy(in->data, x, in->bytes);
    kh_expect_ok(c, kh_run(c));
}

static void test_mean_int(void **state)
{
    (void)state;
    kh_case c;
    /* int32 rows: 3 / 2 -> 1, -7 / 2 -> -3 (toward zero, not -4), and two INT32_MAX whose
     * sum needs the int64 accumulator: (2^32 - 2) / 2 = INT32_MAX; columns over axis 0 */
    const int32_t x[6] = {1, 2, -3, -4, INT32_MAX, INT32_MAX};
    mean_int_case(&c, MP_DT_INT32, 3, 2, x, 1);
    const int32_t want_rows[3] = {1, -3, INT32_MAX};
    assert_memory_equal(c.out[0]->data, want_rows, sizeof want_rows);
    kh_free(&c);
    /* columns of the first two rows: (1 - 3) / 2 = -1, (2 - 4) / 2 = -1 */
    mean_int_case(&c, MP_DT_INT32, 2, 2, x, 0);
    const int32_t want_cols[2] = {-1, -1};
    assert_memory_equal(c.out[0]->data, want_cols, sizeof want_cols);
    kh_free(&c);
    /* int64: 9 / 3 = 3, -5 / 3 -> -1, 2^40 * 3 / 3 */
    const int64_t y[9] = {10, -3, 2, -5, 0, 0, INT64_C(1) << 40, INT64_C(1) << 40,
                          INT64_C(1) << 40};
    mean_int_case(&c, MP_DT_INT64, 3, 3, y, 1);
    const int64_t want64[3] = {3, -1, INT64_C(1) << 40};
    assert_memory_equal(c.out[0]->data, want64, sizeof want64);
    kh_free(&c);
    /* an empty input gives zeros: [0, 3] over axis 0 -> three zeros */
    mean_int_case(&c, MP_DT_INT32, 0, 3, NULL, 0);
    const int32_t zeros[3] = {0, 0, 0};
    assert_memory_equal(c.out[0]->data, zeros, sizeof zeros);
    kh_free(&c);
    /* refused: int32 into float32, bool */
    static const int32_t ax1 = 1;
    const mp_dtype bad[2][2] = {{MP_DT_INT32, MP_DT_FLOAT32}, {MP_DT_BOOL, MP_DT_BOOL}};
    for (int i = 0; i < 2; i++) {
        kh_init(&c, MP_OP_MEAN, NULL);
        kh_input(&c, bad[i][0], 2, (int32_t[]){2, 2}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, &ax1);
        kh_output(&c, bad[i][1]);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                        i == 0 ? "is f32 but input" : "(supported: f32, i32, i64, i8, u8, i16)");
        kh_free(&c);
    }
}

/* ---- SIGN, ATAN2: float64 ---------------------------------------------------------------- */

static void test_float64_sign_atan2(void **state)
{
    (void)state;
    kh_case c;
    /* SIGN: 1e-300 (0 in float32, still positive in float64) -> 1, -2.5 -> -1, 0 and -0 -> 0,
     * NaN -> 0 (neither x > 0 nor x < 0, as sign.cc) */
    const double x[5] = {1e-300, -2.5, 0.0, -0.0, NAN};
    const double want[5] = {1, -1, 0, 0, 0};
    kh_init(&c, MP_OP_SIGN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT64, 1, (int32_t[]){5}, NULL);
    kh_output(&c, MP_DT_FLOAT64);
    memcpy(in->data, x, sizeof x);
    kh_expect_ok(&c, kh_run(&c));
    for (int i = 0; i < 5; i++)
        assert_true(((const double *)c.out[0]->data)[i] == want[i]);
    kh_free(&c);
    /* ATAN2(y, x): (0, -1) -> pi, (-0, -1) -> -pi, (1, 0) -> pi / 2, (1e-20, 1) -> 1e-20
     * (atan of y / x for x > 0; a float32 result would be 1e-20f), all in double */
    const double y2[4] = {0.0, -0.0, 1.0, 1e-20}, x2[4] = {-1.0, -1.0, 0.0, 1.0};
    const double w2[4] = {3.14159265358979323846, -3.14159265358979323846,
                          1.57079632679489661923, 1e-20};
    kh_init(&c, MP_OP_ATAN2, NULL);
    mp_tensor *ty = kh_input(&c, MP_DT_FLOAT64, 1, (int32_t[]){4}, NULL);
    mp_tensor *tx = kh_input(&c, MP_DT_FLOAT64, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT64);
    memcpy(ty->data, y2, sizeof y2);
    memcpy(tx->data, x2, sizeof x2);
    kh_expect_ok(&c, kh_run(&c));
    for (int i = 0; i < 4; i++) {
        const double got = ((const double *)c.out[0]->data)[i];
        if (fabs(got - w2[i]) > 1e-15 * fabs(w2[i]))
            fail_msg("ATAN2 %d: got %.17g, want %.17g", i, got, w2[i]);
    }
    kh_free(&c);
    /* still refused: float64 into float32, float16 */
    const mp_dtype bad[2][2] = {{MP_DT_FLOAT64, MP_DT_FLOAT32}, {MP_DT_FLOAT16, MP_DT_FLOAT16}};
    for (int i = 0; i < 2; i++) {
        kh_init(&c, MP_OP_SIGN, NULL);
        kh_input(&c, bad[i][0], 1, (int32_t[]){2}, NULL);
        kh_output(&c, bad[i][1]);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                        i == 0 ? "is f32 but input" : "(supported: f32, f64, i32)");
        kh_free(&c);
    }
}

/* ---- RESHAPE, SQUEEZE, EXPAND_DIMS: strings ---------------------------------------------- */

/* A constant string input of the given shape: the nb bytes of the buffer buf. */
static mp_tensor *str_input(kh_case *c, int32_t rank, const int32_t *dims, uint8_t *buf,
                            size_t nb)
{
    mp_tensor *t = kh_input(c, MP_DT_STRING, rank, dims, buf);
    t->bytes = nb;
    ((mp_tensor_info *)t->info)->data_bytes = nb;
    return t;
}

/* text (string input [2]) -> RESHAPE [1, 2] -> r -> EXPAND_DIMS (axis 0) -> e [1, 1, 2] ->
 * SQUEEZE (every unit dimension) -> q [2]; text -> GATHER (indices 1, 0, 1) -> g [3];
 * EQUAL(text, the constant "world" [1]) -> is_world bool [2]; FILL([3], the constant scalar
 * "x") -> xs [3] (all its inputs constants); SLICE(text, begin 1, size 1) -> sl [1]; outputs
 * r, e, q, g, is_world, xs, sl. */
static void *string_layout_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    const int32_t d2 = 2, d12[2] = {1, 2}, d112[3] = {1, 1, 2};
    const int32_t shape[2] = {1, 2}, axis = 0;
    int x = mp_tfw_tensor(w, "text", MP_DT_STRING, 1, &d2, 0, NULL);
    int sh = mp_tfw_tensor(w, "shape", MP_DT_INT32, 1, &d2, mp_tfw_buffer(w, shape, sizeof shape),
                           NULL);
    int ax = mp_tfw_tensor(w, "axis", MP_DT_INT32, 0, NULL, mp_tfw_buffer(w, &axis, sizeof axis),
                           NULL);
    int r = mp_tfw_tensor(w, "r", MP_DT_STRING, 2, d12, 0, NULL);
    int e = mp_tfw_tensor(w, "e", MP_DT_STRING, 3, d112, 0, NULL);
    int q = mp_tfw_tensor(w, "q", MP_DT_STRING, 1, &d2, 0, NULL);
    const int32_t d3 = 3, picks[3] = {1, 0, 1};
    int ix = mp_tfw_tensor(w, "picks", MP_DT_INT32, 1, &d3, mp_tfw_buffer(w, picks, sizeof picks),
                           NULL);
    int g = mp_tfw_tensor(w, "g", MP_DT_STRING, 1, &d3, 0, NULL);
    uint8_t wb[32];
    const char *world = "world";
    const size_t wn = kh_pack_strings(wb, sizeof wb, 1, &world);
    const int32_t d1 = 1;
    int wt = mp_tfw_tensor(w, "world", MP_DT_STRING, 1, &d1, mp_tfw_buffer(w, wb, wn), NULL);
    int eq = mp_tfw_tensor(w, "is_world", MP_DT_BOOL, 1, &d2, 0, NULL);
    uint8_t xb[16];
    const char *xv = "x";
    const size_t xn = kh_pack_strings(xb, sizeof xb, 1, &xv);
    int xt = mp_tfw_tensor(w, "x", MP_DT_STRING, 0, NULL, mp_tfw_buffer(w, xb, xn), NULL);
    int fd = mp_tfw_tensor(w, "fill_dims", MP_DT_INT32, 1, &d1, mp_tfw_buffer(w, &d3, sizeof d3),
                           NULL);
    int xs = mp_tfw_tensor(w, "xs", MP_DT_STRING, 1, &d3, 0, NULL);
    int sb = mp_tfw_tensor(w, "sl_begin", MP_DT_INT32, 1, &d1, mp_tfw_buffer(w, &d1, sizeof d1),
                           NULL);
    int ss = mp_tfw_tensor(w, "sl_size", MP_DT_INT32, 1, &d1, mp_tfw_buffer(w, &d1, sizeof d1),
                           NULL);
    int sl = mp_tfw_tensor(w, "sl", MP_DT_STRING, 1, &d1, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){x, sh}, 1, &r, &o);
    mp_tfw_op(w, MP_OP_EXPAND_DIMS, 2, (int32_t[]){r, ax}, 1, &e, &o);
    mp_tfw_op(w, MP_OP_SQUEEZE, 1, &e, 1, &q, &o);
    mp_tfw_op(w, MP_OP_GATHER, 2, (int32_t[]){x, ix}, 1, &g, &o);
    mp_tfw_op(w, MP_OP_EQUAL, 2, (int32_t[]){x, wt}, 1, &eq, &o);
    mp_tfw_op(w, MP_OP_FILL, 2, (int32_t[]){fd, xt}, 1, &xs, &o);
    mp_tfw_op(w, MP_OP_SLICE, 3, (int32_t[]){x, sb, ss}, 1, &sl, &o);
    mp_tfw_io(w, 1, &x, 7, (int32_t[]){r, e, q, g, eq, xs, sl});
    mp_test_model m = mp_test_tfw_finish(w);
    *size = m.size;
    return m.bytes;
}

/* In each memory mode, two runs of different strings: each of the first three outputs holds
 * the input's strings in its own shape (TensorFlow Lite's string layout is one string per
 * element whatever the shape, so the bytes are the input's); the gather, the second, first and
 * second strings. */
static void test_string_layout_model(void **state)
{
    (void)state;
    const char *runs[2][2] = {{"hello", "world"}, {"", "a longer second string"}};
    const int32_t ranks[3] = {2, 3, 1};
    for (int mode = MP_MEMORY_AUTO; mode <= MP_MEMORY_DYNAMIC; mode++) {
        size_t size;
        void *bytes = string_layout_model(&size);
        struct mp_session *s = kh_session(mode, bytes, size, "string_layout");
        for (int k = 0; k < 2; k++) {
            uint8_t buf[128];
            const size_t nb = kh_pack_strings(buf, sizeof buf, 2, runs[k]);
            mp_error err = {0};
            assert_int_equal(mp_session_set_input(s, 0, buf, nb, &err), MP_OK);
            if (mp_session_run(s, &err) != MP_OK)
                fail_msg("mode %d run %d: %s", mode, k, err.msg);
            for (int o = 0; o < 3; o++) {
                const mp_tensor *t = mp_session_output(s, o);
                assert_int_equal(t->rank, ranks[o]);
                assert_int_equal(t->dims[t->rank - 1], 2);
                assert_int_equal(t->bytes, nb);
                kh_expect_strings(t->data, t->bytes, 2, runs[k]);
            }
            const mp_tensor *t = mp_session_output(s, 3);
            kh_expect_strings(t->data, t->bytes, 3,
                              (const char *const[]){runs[k][1], runs[k][0], runs[k][1]});
            const uint8_t *isw = mp_session_output(s, 4)->data;
            assert_int_equal(isw[0], 0);
            assert_int_equal(isw[1], k == 0); /* "world" in the first run only */
            t = mp_session_output(s, 5);
            kh_expect_strings(t->data, t->bytes, 3, (const char *const[]){"x", "x", "x"});
            t = mp_session_output(s, 6);
            kh_expect_strings(t->data, t->bytes, 1, &runs[k][1]);
        }
        mp_session_destroy(s);
    }
}

static void test_string_layout_refusals(void **state)
{
    (void)state;
    kh_case c;
    uint8_t buf[64];
    const char *two[2] = {"a", "b"};
    const size_t nb = kh_pack_strings(buf, sizeof buf, 2, two);
    /* a string into an int32 output; an int32 into a string output */
    static const int32_t shape[1] = {2};
    for (int f = 0; f < 2; f++) {
        kh_init(&c, MP_OP_RESHAPE, NULL);
        if (f == 0)
            str_input(&c, 1, (int32_t[]){2}, buf, nb);
        else
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, shape);
        kh_output(&c, f == 0 ? MP_DT_INT32 : MP_DT_STRING);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, f == 0 ? "is i32 but input" : "is string but");
        kh_free(&c);
    }
    /* a buffer whose count is not the element count (3 strings in a [2] tensor) */
    const char *three[3] = {"a", "b", "c"};
    uint8_t bad[64];
    const size_t nbad = kh_pack_strings(bad, sizeof bad, 3, three);
    kh_init(&c, MP_OP_SQUEEZE, NULL);
    str_input(&c, 2, (int32_t[]){1, 2}, bad, nbad);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_FORMAT, "holds 3 strings");
    kh_free(&c);
}

/* GATHER of rank-1 string params (gather.cc's GatherStrings), by hand. */
static void test_gather_strings(void **state)
{
    (void)state;
    kh_case c;
    uint8_t buf[128];
    const char *words[4] = {"zero", "one", "", "three"};
    const size_t nb = kh_pack_strings(buf, sizeof buf, 4, words);
    /* indices [[3], [2], [0]] (rank 2): output [3, 1] = three, "", zero */
    static const int32_t ix[3] = {3, 2, 0};
    kh_init(&c, MP_OP_GATHER, NULL);
    str_input(&c, 1, (int32_t[]){4}, buf, nb);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){3, 1}, ix);
    mp_tensor *out = kh_output(&c, MP_DT_STRING);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 3);
    kh_expect_strings(out->data, out->bytes, 3, (const char *const[]){"three", "", "zero"});
    kh_free(&c);
    /* GATHER_ND of string params of any rank (GatherNdString), on (a b c / d e f): rows
     * [[1], [0]] -> d e f a b c, elements [[0, 2], [1, 1]] -> c e */
    const char *m[6] = {"a", "b", "c", "d", "e", "f"};
    uint8_t mb[128];
    const size_t mn = kh_pack_strings(mb, sizeof mb, 6, m);
    static const int32_t rows[2] = {1, 0}, elems[4] = {0, 2, 1, 1};
    for (int k = 0; k < 2; k++) {
        kh_init(&c, MP_OP_GATHER_ND, NULL);
        str_input(&c, 2, (int32_t[]){2, 3}, mb, mn);
        kh_input(&c, MP_DT_INT32, 2, k == 0 ? (int32_t[]){2, 1} : (int32_t[]){2, 2},
                 k == 0 ? rows : elems);
        out = kh_output(&c, MP_DT_STRING);
        kh_expect_ok(&c, kh_run(&c));
        if (k == 0)
            kh_expect_strings(out->data, out->bytes, 6,
                              (const char *const[]){"d", "e", "f", "a", "b", "c"});
        else
            kh_expect_strings(out->data, out->bytes, 2, (const char *const[]){"c", "e"});
        kh_free(&c);
    }
    static const int32_t far[2] = {2, 0};
    kh_init(&c, MP_OP_GATHER_ND, NULL);
    str_input(&c, 2, (int32_t[]){2, 3}, mb, mn);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, far);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_SHAPE, "index 2 (tuple 0, position 0");
    kh_free(&c);
    /* an index past the strings, rank-2 string params, an int32 output: refused */
    static const int32_t past[1] = {4};
    kh_init(&c, MP_OP_GATHER, NULL);
    str_input(&c, 1, (int32_t[]){4}, buf, nb);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, past);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_SHAPE, "index 4 (element 0 of indices 't1') is out of range");
    kh_free(&c);
    for (int f = 0; f < 2; f++) {
        kh_init(&c, MP_OP_GATHER, NULL);
        str_input(&c, f == 0 ? 2 : 1, f == 0 ? (int32_t[]){2, 2} : (int32_t[]){4}, buf, nb);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ix + 2);
        kh_output(&c, f == 0 ? MP_DT_STRING : MP_DT_INT32);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, f == 0 ? "of rank 1 only" : "is i32 but params");
        kh_free(&c);
    }
}

/* EQUAL / NOT_EQUAL of strings (comparisons.cc's ComparisonString), by hand, broadcasting. */
static void test_compare_strings(void **state)
{
    (void)state;
    uint8_t ba[128], bb[64], bs[32];
    const char *a[4] = {"cat", "dog", "", "ca"};
    const char *b[2] = {"cat", "dog"};
    const char *one = "cat";
    const size_t na = kh_pack_strings(ba, sizeof ba, 4, a);
    const size_t nb = kh_pack_strings(bb, sizeof bb, 2, b);
    const size_t ns = kh_pack_strings(bs, sizeof bs, 1, &one);
    /* a [2, 2] against b [2], each row against (cat, dog): row 0 (cat, dog) equal, row 1
     * ("", ca) not: 1 1 / 0 0; against the scalar "cat": 1 0 0 0 (ca, a prefix, differs) */
    const uint8_t want_b[4] = {1, 1, 0, 0}, want_s[4] = {1, 0, 0, 0};
    for (int op = 0; op < 2; op++)
        for (int k = 0; k < 2; k++) {
            kh_case c;
            kh_init(&c, op == 0 ? MP_OP_EQUAL : MP_OP_NOT_EQUAL, NULL);
            str_input(&c, 2, (int32_t[]){2, 2}, ba, na);
            if (k == 0)
                str_input(&c, 1, (int32_t[]){2}, bb, nb);
            else
                str_input(&c, 0, NULL, bs, ns);
            mp_tensor *out = kh_output(&c, MP_DT_BOOL);
            kh_expect_ok(&c, kh_run(&c));
            const uint8_t *want = k == 0 ? want_b : want_s;
            for (int i = 0; i < 4; i++)
                assert_int_equal(((const uint8_t *)out->data)[i], op == 0 ? want[i] : !want[i]);
            kh_free(&c);
        }
    /* LESS on strings, a string against an int32: refused, as by comparisons.cc */
    for (int f = 0; f < 2; f++) {
        kh_case c;
        kh_init(&c, f == 0 ? MP_OP_LESS : MP_OP_EQUAL, NULL);
        str_input(&c, 1, (int32_t[]){2}, bb, nb);
        if (f == 0)
            str_input(&c, 1, (int32_t[]){2}, bb, nb);
        else
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
        kh_output(&c, MP_DT_BOOL);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, f == 0 ? "has dtype string" : "differ in dtype");
        kh_free(&c);
    }
}

/* FILL with a string value (fill.cc's FillString), by hand. */
static void test_fill_strings(void **state)
{
    (void)state;
    uint8_t bv[32], be[32];
    const char *ab = "ab", *empty = "";
    const size_t nv = kh_pack_strings(bv, sizeof bv, 1, &ab);
    const size_t ne = kh_pack_strings(be, sizeof be, 1, &empty);
    static const int32_t d22[2] = {2, 2}, d0[1] = {0}, d3[1] = {3};
    const struct {
        int32_t rank;
        const int32_t *dims;
        uint8_t *buf;
        size_t nb;
        int count;
        const char *const *want;
    } cases[3] = {{2, d22, bv, nv, 4, (const char *const[]){"ab", "ab", "ab", "ab"}},
                  {1, d0, bv, nv, 0, NULL},
                  {1, d3, be, ne, 3, (const char *const[]){"", "", ""}}};
    for (int k = 0; k < 3; k++) {
        kh_case c;
        kh_init(&c, MP_OP_FILL, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){cases[k].rank}, cases[k].dims);
        str_input(&c, 0, NULL, cases[k].buf, cases[k].nb);
        mp_tensor *out = kh_output(&c, MP_DT_STRING);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->rank, cases[k].rank);
        kh_expect_strings(out->data, out->bytes, cases[k].count, cases[k].want);
        kh_free(&c);
    }
    /* a string value into an int32 output, an int32 value into a string output: refused */
    static const int32_t v = 7;
    for (int f = 0; f < 2; f++) {
        kh_case c;
        kh_init(&c, MP_OP_FILL, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, d3);
        if (f == 0)
            str_input(&c, 0, NULL, bv, nv);
        else
            kh_input(&c, MP_DT_INT32, 0, NULL, &v);
        kh_output(&c, f == 0 ? MP_DT_INT32 : MP_DT_STRING);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, f == 0 ? "but value 't1' is string" : NULL);
        kh_free(&c);
    }
}

/* SLICE and STRIDED_SLICE of strings (slice.cc version 3, strided_slice.cc version 5), by
 * hand on the [2, 3] matrix (a b c / d e f). */
static void test_slice_strings(void **state)
{
    (void)state;
    uint8_t buf[128];
    const char *m[6] = {"a", "b", "c", "d", "e", "f"};
    const size_t nb = kh_pack_strings(buf, sizeof buf, 6, m);
    kh_case c;
    /* SLICE begin (0, 1) size (2, 2): b c / e f */
    static const int32_t b01[2] = {0, 1}, s22[2] = {2, 2};
    kh_init(&c, MP_OP_SLICE, NULL);
    str_input(&c, 2, (int32_t[]){2, 3}, buf, nb);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, b01);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, s22);
    mp_tensor *out = kh_output(&c, MP_DT_STRING);
    kh_expect_ok(&c, kh_run(&c));
    kh_expect_strings(out->data, out->bytes, 4, (const char *const[]){"b", "c", "e", "f"});
    kh_free(&c);
    /* STRIDED_SLICE: row 1, every other column, row shrunk: d f (shape [2]); row 0 backwards
     * (stride -1 from column 2, end masked): c b a */
    static const int32_t sb[2][2] = {{1, 0}, {0, 2}}, se[2][2] = {{2, 3}, {1, 0}},
                         sst[2][2] = {{1, 2}, {1, -1}};
    const char *const want[2][3] = {{"d", "f"}, {"c", "b", "a"}};
    for (int k = 0; k < 2; k++) {
        kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
        c.opt.shrink_axis_mask = 1;
        c.opt.end_mask = k == 1 ? 2 : 0;
        str_input(&c, 2, (int32_t[]){2, 3}, buf, nb);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, sb[k]);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, se[k]);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, sst[k]);
        out = kh_output(&c, MP_DT_STRING);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->rank, 1);
        kh_expect_strings(out->data, out->bytes, 2 + k, want[k]);
        kh_free(&c);
    }
    /* a string into an int32 output: refused */
    kh_init(&c, MP_OP_SLICE, NULL);
    str_input(&c, 2, (int32_t[]){2, 3}, buf, nb);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, b01);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, s22);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "is i32 but input");
    kh_free(&c);
}

/* TILE of strings (tile.cc version 2), by hand. */
static void test_tile_strings(void **state)
{
    (void)state;
    uint8_t b1[64], b2[64];
    const char *ab[2] = {"a", "b"}, *ez[2] = {"", "z"};
    const size_t n1 = kh_pack_strings(b1, sizeof b1, 2, ab);
    const size_t n2 = kh_pack_strings(b2, sizeof b2, 2, ez);
    static const int32_t m3[1] = {3}, m12[2] = {1, 2}, m2[1] = {2};
    kh_case c;
    /* (a, b) x 3 -> a b a b a b */
    kh_init(&c, MP_OP_TILE, NULL);
    str_input(&c, 1, (int32_t[]){2}, b1, n1);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, m3);
    mp_tensor *out = kh_output(&c, MP_DT_STRING);
    kh_expect_ok(&c, kh_run(&c));
    kh_expect_strings(out->data, out->bytes, 6,
                      (const char *const[]){"a", "b", "a", "b", "a", "b"});
    kh_free(&c);
    /* the column (a / b) [2, 1] x (1, 2) -> a a / b b */
    kh_init(&c, MP_OP_TILE, NULL);
    str_input(&c, 2, (int32_t[]){2, 1}, b1, n1);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, m12);
    out = kh_output(&c, MP_DT_STRING);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[1], 2);
    kh_expect_strings(out->data, out->bytes, 4, (const char *const[]){"a", "a", "b", "b"});
    kh_free(&c);
    /* ("", z) x 2 -> "", z, "", z */
    kh_init(&c, MP_OP_TILE, NULL);
    str_input(&c, 1, (int32_t[]){2}, b2, n2);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, m2);
    out = kh_output(&c, MP_DT_STRING);
    kh_expect_ok(&c, kh_run(&c));
    kh_expect_strings(out->data, out->bytes, 4, (const char *const[]){"", "z", "", "z"});
    kh_free(&c);
    /* TRANSPOSE still refuses strings (transpose.cc takes none) */
    static const int32_t perm[2] = {1, 0};
    kh_init(&c, MP_OP_TRANSPOSE, NULL);
    str_input(&c, 2, (int32_t[]){2, 1}, b1, n1);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, perm);
    kh_output(&c, MP_DT_STRING);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "unsupported dtype string");
    kh_free(&c);
}

/* LESS of float16 (comparisons.cc's LessEval, Comparison<Eigen::half>), by hand. */
static void test_less_float16(void **state)
{
    (void)state;
    /* 1 < 1 no, -2 < -1 yes, NaN < 0 no, 2^-24 (the smallest subnormal) < +0 no, -0 < +0 no
     * (equal), 65504 < infinity yes; and against the broadcast scalar 0.5: 1 no, -2 yes */
    static const uint16_t a[6] = {0x3C00, 0xC000, 0x7E00, 0x0001, 0x8000, 0x7BFF};
    static const uint16_t b[6] = {0x3C00, 0xBC00, 0x0000, 0x0000, 0x0000, 0x7C00};
    const uint8_t want[6] = {0, 1, 0, 0, 0, 1};
    kh_case c;
    kh_init(&c, MP_OP_LESS, NULL);
    kh_input(&c, MP_DT_FLOAT16, 1, (int32_t[]){6}, a);
    kh_input(&c, MP_DT_FLOAT16, 1, (int32_t[]){6}, b);
    mp_tensor *out = kh_output(&c, MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, want, 6);
    kh_free(&c);
    static const uint16_t half = 0x3800;
    kh_init(&c, MP_OP_LESS, NULL);
    kh_input(&c, MP_DT_FLOAT16, 1, (int32_t[]){2}, a);
    kh_input(&c, MP_DT_FLOAT16, 0, NULL, &half);
    out = kh_output(&c, MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((const uint8_t *)out->data)[0], 0);
    assert_int_equal(((const uint8_t *)out->data)[1], 1);
    kh_free(&c);
    /* GREATER of float16 is refused, as comparisons.cc's GreaterEval refuses it */
    kh_init(&c, MP_OP_GREATER, NULL);
    kh_input(&c, MP_DT_FLOAT16, 1, (int32_t[]){6}, a);
    kh_input(&c, MP_DT_FLOAT16, 1, (int32_t[]){6}, b);
    kh_output(&c, MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has dtype f16 (supported: f32, i32, i64, i8, u8)");
    kh_free(&c);
}

/* ---- Plain integer ADD / MUL / FLOOR_MOD / FLOOR_DIV, WHERE on uint32 ---------------------- */

/* A two-input node of dtype dt over n elements (a: shape a_dims of rank a_rank, b: [n] unless
 * b_rank says otherwise) with fused activation act; runs it. */
static mp_status plain_run(kh_case *c, int32_t op, mp_dtype dt, int32_t a_rank,
                           const int32_t *a_dims, const void *a, int32_t b_rank,
                           const int32_t *b_dims, const void *b, int32_t act)
{
    kh_init(c, op, NULL);
    c->opt.activation = act;
    kh_input(c, dt, a_rank, a_dims, a);
    kh_input(c, dt, b_rank, b_dims, b);
    kh_output(c, dt);
    return kh_run(c);
}

/* A two-element node of op on dtype dt, v both inputs, expected to fail with want / needle. */
typedef struct plain_fail_case {
    int32_t op;
    mp_dtype dt;
    const void *v;
    int32_t act;
    mp_status want;
    const char *needle;
} plain_fail_case;

static void plain_expect_fails(const plain_fail_case *f, int count)
{
    const int32_t d2[1] = {2};
    for (int i = 0; i < count; i++) {
        kh_case c;
        kh_expect_fail(&c, plain_run(&c, f[i].op, f[i].dt, 1, d2, f[i].v, 1, d2, f[i].v,
                                     f[i].act), f[i].want, f[i].needle);
        kh_free(&c);
    }
}

static void test_plain_int16_add_mul(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d6[1] = {6};
    /* ADD (add.cc's unquantized int16 path: a + b taken as an int16, then clamped):
     * 30000 + 10000 = 40000 wraps to 40000 - 65536 = -25536, -40000 to 25536, 32767 + 1 to
     * -32768, -32768 - 1 to 32767 */
    static const int16_t a[6] = {30000, -30000, 100, -5, 32767, -32768};
    static const int16_t b[6] = {10000, -10000, 200, 3, 1, -1};
    const int32_t acts[4] = {MP_ACT_NONE, MP_ACT_RELU, MP_ACT_RELU6, MP_ACT_RELU_N1_TO_1};
    static const int16_t want_add[4][6] = {
        {-25536, 25536, 300, -2, -32768, 32767}, /* NONE */
        {0, 25536, 300, 0, 0, 32767},            /* RELU: the wrapped value clamped */
        {0, 6, 6, 0, 0, 6},                      /* RELU6 */
        {-1, 1, 1, -1, -1, 1},                   /* RELU_N1_TO_1 */
    };
    for (int k = 0; k < 4; k++) {
        kh_expect_ok(&c, plain_run(&c, MP_OP_ADD, MP_DT_INT16, 1, d6, a, 1, d6, b, acts[k]));
        assert_memory_equal(c.out[0]->data, want_add[k], sizeof want_add[k]);
        kh_free(&c);
    }
    /* broadcast [2,3] + [3]: 3 + 32767 = 32770 -> -32766, 6 + 32767 = 32773 -> -32763 */
    static const int16_t m[6] = {1, 2, 3, 4, 5, 6}, row[3] = {10, 20, 32767};
    static const int16_t want_bc[6] = {11, 22, -32766, 14, 25, -32763};
    kh_expect_ok(&c, plain_run(&c, MP_OP_ADD, MP_DT_INT16, 2, (int32_t[]){2, 3}, m, 1,
                               (int32_t[]){3}, row, MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_bc, sizeof want_bc);
    kh_free(&c);
    /* MUL (mul.cc): the product in int, its low 16 bits: 300 * 300 = 90000 -> 90000 - 65536 =
     * 24464, -90000 -> -24464, 181^2 = 32761 stays, 256^2 = 65536 -> 0, -32768 * -1 = 32768
     * -> -32768, 7 * -3 = -21 */
    static const int16_t x[6] = {300, -300, 181, 256, -32768, 7};
    static const int16_t w[6] = {300, 300, 181, 256, -1, -3};
    static const int16_t want_mul[6] = {24464, -24464, 32761, 0, -32768, -21};
    static const int16_t want_mul_relu[6] = {24464, 0, 32761, 0, 0, 0};
    kh_expect_ok(&c, plain_run(&c, MP_OP_MUL, MP_DT_INT16, 1, d6, x, 1, d6, w, MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_mul, sizeof want_mul);
    kh_free(&c);
    kh_expect_ok(&c, plain_run(&c, MP_OP_MUL, MP_DT_INT16, 1, d6, x, 1, d6, w, MP_ACT_RELU));
    assert_memory_equal(c.out[0]->data, want_mul_relu, sizeof want_mul_relu);
    kh_free(&c);
}

static void test_plain_uint32_mul(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d6[1] = {6};
    /* MUL of uint32 (mul.cc, reference Mul<uint32_t>): modulo 2^32: 2^16 * 2^16 -> 0,
     * (2^32 - 1) * 2 -> 2^32 - 2, 10^5 * 10^5 = 10^10 - 2 * 2^32 = 1410065408 */
    static const uint32_t a[6] = {65536, 4294967295u, 3, 0, 100000, 2};
    static const uint32_t b[6] = {65536, 2, 5, 7, 100000, 3};
    static const uint32_t want[6] = {0, 4294967294u, 15, 0, 1410065408u, 6};
    static const uint32_t want6[6] = {0, 6, 6, 0, 6, 6};
    static const uint32_t ones[6] = {1, 1, 1, 1, 1, 1};
    kh_expect_ok(&c, plain_run(&c, MP_OP_MUL, MP_DT_UINT32, 1, d6, a, 1, d6, b, MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want, sizeof want);
    kh_free(&c);
    kh_expect_ok(&c, plain_run(&c, MP_OP_MUL, MP_DT_UINT32, 1, d6, a, 1, d6, b, MP_ACT_RELU));
    assert_memory_equal(c.out[0]->data, want, sizeof want); /* [0, 2^32 - 1]: unchanged */
    kh_free(&c);
    kh_expect_ok(&c, plain_run(&c, MP_OP_MUL, MP_DT_UINT32, 1, d6, a, 1, d6, b, MP_ACT_RELU6));
    assert_memory_equal(c.out[0]->data, want6, sizeof want6);
    kh_free(&c);
    /* RELU_N1_TO_1: CalculateActivationRange<uint32_t> gives min 2^32 - 1 (from -1) and max
     * 1, and min(max(v, 2^32 - 1), 1) is 1 for every v, 0 included */
    kh_expect_ok(&c, plain_run(&c, MP_OP_MUL, MP_DT_UINT32, 1, d6, a, 1, d6, b,
                               MP_ACT_RELU_N1_TO_1));
    assert_memory_equal(c.out[0]->data, ones, sizeof ones);
    kh_free(&c);
    /* broadcast of a scalar: {3, 2^31} * 2 = {6, 0} */
    static const uint32_t v2[2] = {3, 2147483648u}, two = 2;
    static const uint32_t want_bc[2] = {6, 0};
    kh_expect_ok(&c, plain_run(&c, MP_OP_MUL, MP_DT_UINT32, 1, (int32_t[]){2}, v2, 0, NULL,
                               &two, MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_bc, sizeof want_bc);
    kh_free(&c);
}

static void test_plain_floor_div_mod(void **state)
{
    (void)state;
    kh_case c;
    /* FLOOR_MOD of int8 (FloorMod<int8_t>: the truncated remainder, plus the divisor when
     * their signs differ): 7 % 3 = 1, -7 % 3 = 2, 7 % -3 = -2, -7 % -3 = -1, -128 % -1 = 0,
     * -128 % 127 = -1 + 127 = 126, 127 % -128 = 127 - 128 = -1, 0 % -5 = 0 */
    static const int8_t ma[8] = {7, -7, 7, -7, -128, -128, 127, 0};
    static const int8_t mb[8] = {3, 3, -3, -3, -1, 127, -128, -5};
    static const int8_t want_mod8[8] = {1, 2, -2, -1, 0, 126, -1, 0};
    const int32_t d8[1] = {8};
    kh_expect_ok(&c, plain_run(&c, MP_OP_FLOOR_MOD, MP_DT_INT8, 1, d8, ma, 1, d8, mb,
                               MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_mod8, sizeof want_mod8);
    kh_free(&c);
    /* int8 with quantization parameters: floor_mod.cc reads the stored values all the same */
    static const float sc = 0.5f;
    static const int64_t zp = 3;
    kh_init(&c, MP_OP_FLOOR_MOD, NULL);
    mp_tensor *qa = kh_input(&c, MP_DT_INT8, 1, d8, ma);
    mp_tensor *qb = kh_input(&c, MP_DT_INT8, 1, d8, mb);
    mp_tensor *qo = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, qa, 1, &sc, &zp, 0);
    kh_quant(&c, qb, 1, &sc, &zp, 0);
    kh_quant(&c, qo, 1, &sc, &zp, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(qo->data, want_mod8, sizeof want_mod8);
    kh_free(&c);
    /* int16: -32768 % -1 = 0, 32767 % -32768 = -1, -1 % 32767 = 32766, 10 % 4 = 2 */
    static const int16_t na[4] = {-32768, 32767, -1, 10}, nb[4] = {-1, -32768, 32767, 4};
    static const int16_t want_mod16[4] = {0, -1, 32766, 2};
    const int32_t d4[1] = {4};
    kh_expect_ok(&c, plain_run(&c, MP_OP_FLOOR_MOD, MP_DT_INT16, 1, d4, na, 1, d4, nb,
                               MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_mod16, sizeof want_mod16);
    kh_free(&c);
    /* FLOOR_DIV of int8 (floor of the quotient): 7 / 2 = 3, -7 / 2 = -4, 7 / -2 = -4,
     * -7 / -2 = 3, -128 / -1 = 128 wraps to -128, -128 / 127 -> -2, 127 / -128 -> -1,
     * 0 / -5 = 0, -1 / 3 -> -1 */
    static const int8_t da[9] = {7, -7, 7, -7, -128, -128, 127, 0, -1};
    static const int8_t db[9] = {2, 2, -2, -2, -1, 127, -128, -5, 3};
    static const int8_t want_div8[9] = {3, -4, -4, 3, -128, -2, -1, 0, -1};
    const int32_t d9[1] = {9};
    kh_expect_ok(&c, plain_run(&c, MP_OP_FLOOR_DIV, MP_DT_INT8, 1, d9, da, 1, d9, db,
                               MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_div8, sizeof want_div8);
    kh_free(&c);
    /* int16: -32768 / -1 wraps to -32768, 32767 / -1 = -32767, -32768 / 2 = -16384,
     * 5 / -3 -> -2; and a broadcast divisor: {9, -9} / 4 = {2, -3} */
    static const int16_t ea[4] = {-32768, 32767, -32768, 5}, eb[4] = {-1, -1, 2, -3};
    static const int16_t want_div16[4] = {-32768, -32767, -16384, -2};
    kh_expect_ok(&c, plain_run(&c, MP_OP_FLOOR_DIV, MP_DT_INT16, 1, d4, ea, 1, d4, eb,
                               MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_div16, sizeof want_div16);
    kh_free(&c);
    static const int16_t f2[2] = {9, -9}, four = 4, want_bc[2] = {2, -3};
    kh_expect_ok(&c, plain_run(&c, MP_OP_FLOOR_DIV, MP_DT_INT16, 1, (int32_t[]){2}, f2, 0, NULL,
                               &four, MP_ACT_NONE));
    assert_memory_equal(c.out[0]->data, want_bc, sizeof want_bc);
    kh_free(&c);
    /* a zero divisor fails the run ("Division by 0" there), in each dtype and operator */
    static const int8_t z8[2] = {1, 0};
    static const int16_t z16[2] = {0, 5};
    const plain_fail_case zero[4] = {
        {MP_OP_FLOOR_DIV, MP_DT_INT8, z8, MP_ACT_NONE, MP_ERR_ARG, "division by zero"},
        {MP_OP_FLOOR_DIV, MP_DT_INT16, z16, MP_ACT_NONE, MP_ERR_ARG, "division by zero"},
        {MP_OP_FLOOR_MOD, MP_DT_INT8, z8, MP_ACT_NONE, MP_ERR_ARG, "division by zero"},
        {MP_OP_FLOOR_MOD, MP_DT_INT16, z16, MP_ACT_NONE, MP_ERR_ARG, "division by zero"},
    };
    plain_expect_fails(zero, 4);
}

static void test_where_uint32(void **state)
{
    (void)state;
    /* the nonzero elements of a [2,3] uint32 condition: (0,1) 2^31, (1,0) 1, (1,2) 2^32 - 1 */
    static const uint32_t cond[6] = {0, 2147483648u, 0, 1, 0, 4294967295u};
    const int64_t want[6] = {0, 1, 1, 0, 1, 2};
    kh_case c;
    kh_init(&c, MP_OP_WHERE, NULL);
    kh_input(&c, MP_DT_UINT32, 2, (int32_t[]){2, 3}, cond);
    mp_tensor *out = kh_output(&c, MP_DT_INT64);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 3);
    assert_int_equal(out->dims[1], 2);
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);
    /* int16 conditions stay refused: the newest where.cc has no int16 case */
    static const int16_t c16[2] = {0, 1};
    kh_init(&c, MP_OP_WHERE, NULL);
    kh_input(&c, MP_DT_INT16, 1, (int32_t[]){2}, c16);
    kh_output(&c, MP_DT_INT64);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has dtype i16 (supported: bool, f32, i32, i64, i8, "
                                            "u8, u32)");
    kh_free(&c);
}

/* What TensorFlow Lite's newest kernels still refuse stays refused. */
static void test_plain_int_refusals(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d2[1] = {2};
    static const int16_t i16[2] = {1, 2};
    static const uint32_t u32[2] = {1, 2};
    static const uint8_t u8[2] = {1, 2};
    const plain_fail_case refused[5] = {
        /* SUB of int16 without quantization: sub.cc sends every int16 to its quantized path */
        {MP_OP_SUB, MP_DT_INT16, i16, MP_ACT_NONE, MP_ERR_UNSUPPORTED,
         "no quantization parameters"},
        /* DIV of int16 (div.cc: float32, int32, uint8 only) */
        {MP_OP_DIV, MP_DT_INT16, i16, MP_ACT_NONE, MP_ERR_UNSUPPORTED,
         "only ADD, SUB and MUL take int16"},
        /* ADD of uint32 (add.cc has no uint32) */
        {MP_OP_ADD, MP_DT_UINT32, u32, MP_ACT_NONE, MP_ERR_UNSUPPORTED, "has dtype u32"},
        /* FLOOR_DIV of uint8 (floor_div.cc: f32, i32, i16, i8 and asymmetric uint16) */
        {MP_OP_FLOOR_DIV, MP_DT_UINT8, u8, MP_ACT_NONE, MP_ERR_UNSUPPORTED,
         "(supported: f32, i32, i16, i8)"},
        /* a TANH fused onto plain int16 ADD */
        {MP_OP_ADD, MP_DT_INT16, i16, MP_ACT_TANH, MP_ERR_UNSUPPORTED, "TANH on integer tensors"},
    };
    plain_expect_fails(refused, 5);
    /* int16 ADD with quantized inputs and an unquantized output: neither path of add.cc */
    static const float sc = 0.5f;
    static const int64_t zp = 0;
    kh_init(&c, MP_OP_ADD, NULL);
    mp_tensor *a = kh_input(&c, MP_DT_INT16, 1, d2, i16);
    mp_tensor *b = kh_input(&c, MP_DT_INT16, 1, d2, i16);
    kh_output(&c, MP_DT_INT16);
    kh_quant(&c, a, 1, &sc, &zp, 0);
    kh_quant(&c, b, 1, &sc, &zp, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "no quantization parameters");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_q8_to_i16_hand),
        cmocka_unit_test(test_softmax_q8_to_i16_random),
        cmocka_unit_test(test_softmax_dtype_refusals),
        cmocka_unit_test(test_resize_bilinear_i16_hand),
        cmocka_unit_test(test_resize_bilinear_i16_q10),
        cmocka_unit_test(test_resize_bilinear_i16_refusals),
        cmocka_unit_test(test_log_rsqrt_sqrt_i16),
        cmocka_unit_test(test_log_rsqrt_sqrt_i16_refusals),
        cmocka_unit_test(test_cast_more_dtypes),
        cmocka_unit_test(test_int16_indices),
        cmocka_unit_test(test_mean_int),
        cmocka_unit_test(test_float64_sign_atan2),
        cmocka_unit_test(test_string_layout_model),
        cmocka_unit_test(test_string_layout_refusals),
        cmocka_unit_test(test_gather_strings),
        cmocka_unit_test(test_compare_strings),
        cmocka_unit_test(test_fill_strings),
        cmocka_unit_test(test_slice_strings),
        cmocka_unit_test(test_tile_strings),
        cmocka_unit_test(test_less_float16),
        cmocka_unit_test(test_plain_int16_add_mul),
        cmocka_unit_test(test_plain_uint32_mul),
        cmocka_unit_test(test_plain_floor_div_mod),
        cmocka_unit_test(test_where_uint32),
        cmocka_unit_test(test_plain_int_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
