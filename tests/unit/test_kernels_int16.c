/* Tests of TensorFlow Lite's 16x8 kernels (int16 activations, int8 weights; int16_linear.c and
 * int16_binary.c): FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, ADD, SUB and MUL bit for bit
 * against values worked out by hand (in the comments) and against TensorFlow Lite's integer
 * formulas restated here from its reference kernels (int64 accumulator and the 15-bit
 * MultiplyByQuantizedMultiplier with an int64 bias; int32 accumulator and the int32 one with
 * an int32 bias or none; the power-of-two and general ADD / SUB paths), the refusals with
 * their messages, and a writer-built 16x8 graph (QUANTIZE, CONV_2D, DEPTHWISE_CONV_2D, ADD,
 * FULLY_CONNECTED, DEQUANTIZE) run through a session in static and dynamic modes with equal
 * outputs, within a propagated quantization-error bound of the float graph it quantizes. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

static const int64_t k_zeros[64];

/* An LCG step: an integer in [lo, hi]. */
static int32_t next_int(uint32_t *state, int32_t lo, int32_t hi)
{
    *state = *state * 1103515245u + 12345u;
    return lo + (int32_t)((*state >> 9) % (uint32_t)(hi - lo + 1));
}

/* ---- TensorFlow Lite's requantization, restated ------------------------------------------ */

/* The requantization of a channel: M = QuantizeMultiplier(real); int64 or int32 path. */
static int32_t ref_requant(int64_t acc, double real, bool wide, int32_t lo, int32_t hi)
{
    int32_t m;
    int shift;
    assert_true(mp_quantize_multiplier(real, &m, &shift));
    int32_t v = wide ? qref_mbqm64(acc, m, shift)
                     : mp_multiply_by_quantized_multiplier((int32_t)(uint32_t)(uint64_t)acc, m,
                                                           shift);
    return v < lo ? lo : (v > hi ? hi : v);
}

/* int16 range of a fused activation on an output of scale s (zero point 0). */
static void act_range(int act, float s, int32_t *lo, int32_t *hi)
{
    *lo = INT16_MIN;
    *hi = INT16_MAX;
    if (act == MP_ACT_RELU || act == MP_ACT_RELU6)
        *lo = 0;
    if (act == MP_ACT_RELU6)
        *hi = (int32_t)fminf(roundf(6.0f / s), 32767.0f);
}

static void test_mbqm64_hand(void **state)
{
    (void)state;
    /* 0.5 = 2^30 * 2^(0 - 31): reduced (2^30 + 2^15) >> 16 = 2^14, total shift 15.
     * 3 * 2^14 + 2^14 = 2^16 -> >> 15 = 2 (1.5 rounds up); -3: -2^15 >> 15 = -1 (-1.5 up). */
    assert_int_equal(mp_multiply_by_quantized_multiplier_i64(3, 1 << 30, 0), 2);
    assert_int_equal(mp_multiply_by_quantized_multiplier_i64(-3, 1 << 30, 0), -1);
    /* 0.125 (shift -2): 1600 -> 200, 195 -> (195 * 2^14 + 2^16) >> 17 = 24 (24.375) */
    assert_int_equal(mp_multiply_by_quantized_multiplier_i64(1600, 1 << 30, -2), 200);
    assert_int_equal(mp_multiply_by_quantized_multiplier_i64(195, 1 << 30, -2), 24);
    /* a multiplier from 0x7FFF0000 up reduces to 0x7FFF: x * 0x7FFF / 2^15, rounded */
    assert_int_equal(mp_multiply_by_quantized_multiplier_i64(1 << 20, 0x7FFFFFFF, 0), 1048544);
    /* beyond int32 accumulators: 2^40 * 2^-10 = 2^30 */
    assert_int_equal(mp_multiply_by_quantized_multiplier_i64(INT64_C(1) << 40, 1 << 30, -9),
                     1 << 30);
    /* against the restatement over a sweep of values and shifts */
    uint32_t s = 7;
    for (int i = 0; i < 20000; i++) {
        int64_t x = (int64_t)next_int(&s, -1000000000, 1000000000) * next_int(&s, 1, 6000);
        int32_t m = next_int(&s, 1 << 30, 0x7FFFFFFF);
        int shift = next_int(&s, -31, 0);
        int64_t want = qref_mbqm64(x, m, shift);
        if (want < INT32_MIN || want > INT32_MAX)
            continue;
        assert_int_equal(mp_multiply_by_quantized_multiplier_i64(x, m, shift), want);
    }
}

/* ---- FULLY_CONNECTED by hand --------------------------------------------------------------- */

/* x [1,3] = (100, -200, 300) at scale 0.5; weights [2,3] rows (1, 2, 3), (-1, 0, 1) at 0.25;
 * output scale 1: multiplier 0.125 = 2^30 * 2^(-2 - 31). Accumulators 600 + bias, -100 + 300
 * + bias. With the int64 bias (1000, -5): 1600 -> 200; 195 -> 24.375 -> 24 (one rounding).
 * With the same bias as int32: the int32 path rounds twice, 195 * 2^30 / 2^31 = 97.5 -> 98,
 * then 98 / 4 = 24.5 -> 25 (ties away from zero): the two paths differ by one there. */
static void run_fc_hand(mp_dtype bias_dt, int16_t want1)
{
    static const int8_t w[6] = {1, 2, 3, -1, 0, 1};
    static const int64_t b64[2] = {1000, -5};
    static const int32_t b32[2] = {1000, -5};
    static const float xs = 0.5f, ws = 0.25f, ys = 1.0f;
    kh_case c;
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    mp_tensor *x = kh_input(&c, MP_DT_INT16, 2, (int32_t[]){1, 3}, NULL);
    kh_quant(&c, x, 1, &xs, k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 3}, w), 1, &ws, k_zeros, 0);
    kh_input(&c, bias_dt, 1, (int32_t[]){2}, bias_dt == MP_DT_INT64 ? (const void *)b64 : b32);
    mp_tensor *y = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, y, 1, &ys, k_zeros, 0);
    memcpy(x->data, (const int16_t[]){100, -200, 300}, 6);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(y->dims[0], 1);
    assert_int_equal(y->dims[1], 2);
    assert_int_equal(((int16_t *)y->data)[0], 200);
    assert_int_equal(((int16_t *)y->data)[1], want1);
    kh_free(&c);
}

static void test_fc_hand(void **state)
{
    (void)state;
    run_fc_hand(MP_DT_INT64, 24);
    run_fc_hand(MP_DT_INT32, 25);
}

/* ---- convolutions against the restated reference ------------------------------------------ */

typedef struct conv_cfg {
    bool dw;                       /* DEPTHWISE_CONV_2D (mult = depth multiplier) */
    int32_t n, h, w, ic, kh, kw, oc;
    int32_t groups;                /* CONV_2D: input channels / filter channels */
    int32_t sh, sw, dh, dwl;       /* strides, dilations */
    int32_t padding, act;
    bool per_channel;
    int bias;                      /* 0 none, 32, 64 */
} conv_cfg;

/* One output dimension and the padding before it, TensorFlow Lite's rules. */
static void ref_dim(int32_t in, int32_t k, int32_t s, int32_t d, int32_t padding, int32_t *out,
                    int32_t *before)
{
    int32_t eff = (k - 1) * d + 1;
    *out = padding == MP_PAD_SAME ? (in + s - 1) / s : (in - eff) / s + 1;
    int32_t total = (*out - 1) * s + eff - in;
    *before = padding == MP_PAD_SAME && total > 0 ? total / 2 : 0;
}

static void check_conv(const conv_cfg *p, const char *what)
{
    uint32_t st = (uint32_t)(p->ic * 131 + p->oc * 7 + p->kh + (p->dw ? 1000 : 0) + p->bias);
    int32_t fin = p->dw ? 1 : p->ic / p->groups; /* input channels a filter reads */
    int32_t fdims[4] = {p->dw ? 1 : p->oc, p->kh, p->kw, p->dw ? p->oc : fin};
    size_t fn = (size_t)p->oc * p->kh * p->kw * fin;
    size_t xn = (size_t)p->n * p->h * p->w * p->ic;
    int8_t *f = malloc(fn);
    int16_t *xv = malloc(xn * 2);
    int64_t b64[16];
    int32_t b32[16];
    float wsc[16];
    assert_true(p->oc <= 16);
    for (size_t i = 0; i < fn; i++)
        f[i] = (int8_t)next_int(&st, -127, 127);
    for (size_t i = 0; i < xn; i++)
        xv[i] = (int16_t)next_int(&st, -3000, 3000);
    for (int32_t o = 0; o < p->oc; o++) {
        b32[o] = next_int(&st, -500000, 500000);
        b64[o] = b32[o];
        wsc[o] = 0.002f * (float)(1 + o % 3);
    }
    if (p->bias == 64)
        b64[p->oc - 1] = INT64_C(1) << 35; /* beyond 32 bits: saturates high */
    static const float xs = 0.001f, ys = 0.00015f;
    int32_t lo, hi;
    act_range(p->act, ys, &lo, &hi);

    kh_case c;
    kh_init(&c, p->dw ? MP_OP_DEPTHWISE_CONV_2D : MP_OP_CONV_2D, NULL);
    c.opt.stride_h = p->sh;
    c.opt.stride_w = p->sw;
    c.opt.dilation_h = p->dh;
    c.opt.dilation_w = p->dwl;
    c.opt.padding = p->padding;
    c.opt.activation = p->act;
    c.opt.depth_multiplier = p->dw ? p->oc / p->ic : 1;
    mp_tensor *x = kh_input(&c, MP_DT_INT16, 4, (int32_t[]){p->n, p->h, p->w, p->ic}, xv);
    kh_quant(&c, x, 1, &xs, k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 4, fdims, f), p->per_channel ? p->oc : 1, wsc,
             k_zeros, p->dw ? 3 : 0);
    if (p->bias == 64)
        kh_input(&c, MP_DT_INT64, 1, &p->oc, b64);
    else if (p->bias == 32)
        kh_input(&c, MP_DT_INT32, 1, &p->oc, b32);
    else
        kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, y, 1, &ys, k_zeros, 0);
    kh_expect_ok(&c, kh_run(&c));

    int32_t oh, ow, pt, pl;
    ref_dim(p->h, p->kh, p->sh, p->dh, p->padding, &oh, &pt);
    ref_dim(p->w, p->kw, p->sw, p->dwl, p->padding, &ow, &pl);
    assert_int_equal(y->rank, 4);
    assert_int_equal(y->dims[1], oh);
    assert_int_equal(y->dims[2], ow);
    assert_int_equal(y->dims[3], p->oc);
    bool wide = p->dw || p->bias == 64;
    int32_t per_group = p->oc / (p->dw ? p->ic : p->groups);
    size_t inside = 0, total = 0;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < oh; oy++)
            for (int32_t ox = 0; ox < ow; ox++)
                for (int32_t o = 0; o < p->oc; o++) {
                    int64_t acc = 0;
                    for (int32_t ky = 0; ky < p->kh; ky++)
                        for (int32_t kx = 0; kx < p->kw; kx++) {
                            int32_t iy = oy * p->sh - pt + ky * p->dh;
                            int32_t ix = ox * p->sw - pl + kx * p->dwl;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                                continue;
                            for (int32_t i = 0; i < fin; i++) {
                                int32_t ch = (o / per_group) * fin + i;
                                int32_t xval = xv[((b * p->h + iy) * p->w + ix) * p->ic + ch];
                                int32_t wval = p->dw ? f[(ky * p->kw + kx) * p->oc + o]
                                                     : f[((o * p->kh + ky) * p->kw + kx) * fin + i];
                                acc += (int64_t)xval * wval;
                            }
                        }
                    if (p->bias)
                        acc += p->bias == 64 ? b64[o] : b32[o];
                    double real = (double)xs * (double)wsc[p->per_channel ? o : 0] / (double)ys;
                    int32_t want = ref_requant(acc, real, wide, lo, hi);
                    int32_t got = ((int16_t *)y->data)[((b * oh + oy) * ow + ox) * p->oc + o];
                    if (got != want)
                        fail_msg("%s: [%d,%d,%d,%d] got %d, want %d", what, b, oy, ox, o, got,
                                 want);
                    inside += want > lo && want < hi;
                    total++;
                }
    assert_true(inside * 4 >= total); /* the case tests arithmetic, not only clamping */
    kh_free(&c);
    free(f);
    free(xv);
}

static void test_conv_reference(void **state)
{
    (void)state;
    const conv_cfg cases[] = {
        /* dw n  h  w ic kh kw oc g  sh sw dh dw  padding      act            pc    bias */
        {false, 1, 5, 6, 3, 3, 3, 4, 1, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 64},
        {false, 2, 7, 5, 2, 3, 2, 3, 1, 2, 1, 1, 2, MP_PAD_VALID, MP_ACT_RELU, false, 64},
        {false, 1, 6, 6, 4, 2, 2, 6, 2, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true, 64},
        {false, 1, 5, 5, 3, 3, 3, 2, 1, 1, 1, 2, 2, MP_PAD_SAME, MP_ACT_NONE, true, 32},
        {false, 1, 4, 4, 2, 1, 1, 3, 1, 3, 3, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0},
        {true, 1, 6, 5, 3, 3, 3, 6, 1, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 64},
        {true, 2, 7, 7, 2, 3, 3, 2, 1, 2, 2, 1, 1, MP_PAD_VALID, MP_ACT_RELU, false, 64},
        {true, 1, 8, 6, 4, 2, 3, 4, 1, 1, 2, 2, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "case %zu", i);
        check_conv(&cases[i], what);
    }
}

/* FULLY_CONNECTED against the reference: rows of a rank-3 input, per-channel weights. */
static void test_fc_reference(void **state)
{
    (void)state;
    enum { IN = 7, OUT = 5, ROWS = 6 };
    uint32_t st = 99;
    int8_t w[OUT * IN];
    int64_t b64[OUT];
    int32_t b32[OUT];
    static float wsc[OUT];
    int16_t xv[ROWS * IN];
    for (int i = 0; i < OUT * IN; i++)
        w[i] = (int8_t)next_int(&st, -127, 127);
    for (int o = 0; o < OUT; o++) {
        b32[o] = next_int(&st, -300000, 300000);
        b64[o] = b32[o];
        wsc[o] = 0.003f * (float)(1 + o);
    }
    for (int i = 0; i < ROWS * IN; i++)
        xv[i] = (int16_t)next_int(&st, -20000, 20000);
    static const float xs = 0.0005f, ys = 0.0004f;
    for (int variant = 0; variant < 4; variant++) {
        bool per_channel = variant & 1, wide = variant < 2;
        kh_case c;
        kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
        kh_quant(&c, kh_input(&c, MP_DT_INT16, 3, (int32_t[]){2, 3, IN}, xv), 1, &xs, k_zeros,
                 0);
        kh_quant(&c, kh_input(&c, MP_DT_INT8, 2, (int32_t[]){OUT, IN}, w),
                 per_channel ? OUT : 1, wsc, k_zeros, 0);
        kh_input(&c, wide ? MP_DT_INT64 : MP_DT_INT32, 1, (int32_t[]){OUT},
                 wide ? (const void *)b64 : b32);
        mp_tensor *y = kh_output(&c, MP_DT_INT16);
        kh_quant(&c, y, 1, &ys, k_zeros, 0);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(y->dims[0], ROWS);
        for (int r = 0; r < ROWS; r++)
            for (int o = 0; o < OUT; o++) {
                int64_t acc = b64[o];
                for (int i = 0; i < IN; i++)
                    acc += (int64_t)xv[r * IN + i] * w[o * IN + i];
                /* per tensor: the two scales multiplied in float first (GetQuantized-
                 * ConvolutionMultipler); per channel in double */
                double real = per_channel ? (double)xs * (double)wsc[o] / (double)ys
                                          : (double)(xs * wsc[0]) / (double)ys;
                int32_t want = ref_requant(acc, real, wide, INT16_MIN, INT16_MAX);
                assert_int_equal(((int16_t *)y->data)[r * OUT + o], want);
            }
        kh_free(&c);
    }
}

/* ---- refusals -------------------------------------------------------------------------------- */

static void conv_i16_case(kh_case *c, int32_t opcode, mp_dtype wdt, mp_dtype bdt,
                          const int64_t *x_zp)
{
    static const int8_t f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const int64_t b[2] = {0, 0};
    static const float s = 0.5f;
    kh_init(c, opcode, NULL);
    kh_quant(c, kh_input(c, MP_DT_INT16, 4, (int32_t[]){1, 2, 2, 2}, NULL), 1, &s, x_zp, 0);
    int32_t fd[4] = {opcode == MP_OP_DEPTHWISE_CONV_2D ? 1 : 2, 1, 1, 2};
    kh_quant(c, kh_input(c, wdt, 4, fd, f), 1, &s, k_zeros, 0);
    kh_input(c, bdt, 1, (int32_t[]){2}, b);
    kh_quant(c, kh_output(c, MP_DT_INT16), 1, &s, k_zeros, 0);
}

static void test_refusals(void **state)
{
    (void)state;
    kh_case c;
    static const int64_t zp5 = 5;
    /* an int16 activation with a zero point other than 0 (the reader refuses it in files) */
    conv_i16_case(&c, MP_OP_CONV_2D, MP_DT_INT8, MP_DT_INT64, &zp5);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "i16 input 't0' has zero point 5; TensorFlow Lite's int16 kernels take only 0");
    kh_free(&c);
    /* DEPTHWISE_CONV_2D takes only an int64 bias with int16 input; CONV_2D an int32 one too */
    conv_i16_case(&c, MP_OP_DEPTHWISE_CONV_2D, MP_DT_INT8, MP_DT_INT32, k_zeros);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "bias 't2' is i32; with i16 input 't0' it must be i64");
    kh_free(&c);
    conv_i16_case(&c, MP_OP_CONV_2D, MP_DT_INT8, MP_DT_INT32, k_zeros);
    kh_expect_ok(&c, kh_run(&c));
    kh_free(&c);
    conv_i16_case(&c, MP_OP_CONV_2D, MP_DT_INT8, MP_DT_INT16, k_zeros);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "bias 't2' is i16; with i16 input 't0' it must be i64 or i32");
    kh_free(&c);
    /* int16 weights (TensorFlow Lite's 16x8 weights are int8) */
    conv_i16_case(&c, MP_OP_CONV_2D, MP_DT_INT16, MP_DT_INT64, k_zeros);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "filter 't1' is i16; 16x8 nodes take i8 filter");
    kh_free(&c);
    /* an int16 input with an int8 output */
    static const float s = 0.5f;
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 2, (int32_t[]){1, 2}, NULL), 1, &s, k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 2, (int32_t[]){1, 2}, (int8_t[]){1, 1}), 1, &s,
             k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT8), 1, &s, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "output 't2' is i8; with i16 input 't0' it must be i16");
    kh_free(&c);
}

/* ---- ADD, SUB, MUL -------------------------------------------------------------------------- */

/* A binary case on [count] (or a and b shapes), scales sa, sb, so; returns the output. */
static void run_bin(int32_t op, bool general, int act, const float sc[3], int32_t ra,
                    const int32_t *da, const int16_t *a, int32_t rb, const int32_t *db,
                    const int16_t *b, int16_t *y, size_t ny)
{
    kh_case c;
    kh_init(&c, op, NULL);
    c.opt.int16_general_scale = general;
    c.opt.activation = act;
    kh_quant(&c, kh_input(&c, MP_DT_INT16, ra, da, a), 1, &sc[0], k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, rb, db, b), 1, &sc[1], k_zeros, 0);
    mp_tensor *out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, out, 1, &sc[2], k_zeros, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(mp_tensor_elements(out), ny);
    memcpy(y, out->data, ny * 2);
    kh_free(&c);
}

/* Hand cases.
 * Power-of-two ADD (the schema's default): scales 2^-10, 2^-12 -> 2^-10; b divided by 4,
 * rounding ties away from zero: 100 + 6/4 (1.5 -> 2) = 102; 100 - 1.5 (-> -2) = 98;
 * 32767 + 100 saturates at 32767; -32768 + (-2) at -32768. SUB: 100 - 2 = 98, 100 + 2 = 102.
 * General ADD (pot_scale_int16 false) with scales 1, 1 -> 2: twice the larger input scale 2,
 * input multipliers 1/2 (2^30, shift 0), output multiplier 2 / (2^15 * 2) = 2^-15
 * (2^30, shift -14); 3 + 0 -> 3 << 15 scaled by 1/2 = 49152, then halved (24576) and divided
 * by 2^14: 1.5 -> 2; -3 -> -2; 5 + 4: 81920 + 65536 = 147456 -> 73728 / 2^14 = 4.5 -> 5.
 * MUL with scales 1, 1 -> 4: multiplier 1/4 (2^30, shift -1): 5 * 3 = 15 -> high multiply
 * 7.5 -> 8 (ties up), / 2 = 4 (3.75); 5 * -3: -7.5 -> -7, / 2 = -3.5 -> -4 (-3.75). */
static void test_binary_hand(void **state)
{
    (void)state;
    const int32_t d4 = 4;
    int16_t y[4];
    const float pot[3] = {0x1p-10f, 0x1p-12f, 0x1p-10f};
    run_bin(MP_OP_ADD, false, MP_ACT_NONE, pot, 1, &d4, (int16_t[]){100, 100, 32767, -32768}, 1,
            &d4, (int16_t[]){6, -6, 400, -8}, y, 4);
    assert_memory_equal(y, ((int16_t[]){102, 98, 32767, -32768}), 8);
    run_bin(MP_OP_SUB, false, MP_ACT_NONE, pot, 1, &d4, (int16_t[]){100, 100, 32767, -32768}, 1,
            &d4, (int16_t[]){6, -6, -400, 8}, y, 4);
    assert_memory_equal(y, ((int16_t[]){98, 102, 32767, -32768}), 8);
    /* with RELU the power-of-two result is clamped at 0 */
    run_bin(MP_OP_ADD, false, MP_ACT_RELU, pot, 1, &d4, (int16_t[]){-100, 5, 0, 1}, 1, &d4,
            (int16_t[]){6, -6, 0, 0}, y, 4);
    assert_memory_equal(y, ((int16_t[]){0, 3, 0, 1}), 8);
    const float gen[3] = {1.0f, 1.0f, 2.0f};
    run_bin(MP_OP_ADD, true, MP_ACT_NONE, gen, 1, &d4, (int16_t[]){3, -3, 5, 0}, 1, &d4,
            (int16_t[]){0, 0, 4, 0}, y, 4);
    assert_memory_equal(y, ((int16_t[]){2, -2, 5, 0}), 8);
    /* the same scales with pot_scale_int16 set and all three powers of two: the power-of-two
     * path refuses an input scale above the output's */
    const float mul[3] = {1.0f, 1.0f, 4.0f};
    run_bin(MP_OP_MUL, false, MP_ACT_NONE, mul, 1, &d4, (int16_t[]){5, 5, 0, 200}, 1, &d4,
            (int16_t[]){3, -3, 7, 200}, y, 4);
    assert_memory_equal(y, ((int16_t[]){4, -4, 0, 10000}), 8);
}

/* TensorFlow Lite's general int16 ADD / SUB of one pair, restated (add.h AddElementwise,
 * sub.h SubElementwise; left shift 15). */
static int32_t ref_general(bool sub, int32_t x, int32_t w, const float sc[3], int32_t lo,
                           int32_t hi)
{
    double twice = (double)(2.0f * fmaxf(sc[0], sc[1]));
    int32_t ma, mb, mo;
    int ea, eb, eo;
    assert_true(mp_quantize_multiplier((double)sc[0] / twice, &ma, &ea));
    assert_true(mp_quantize_multiplier((double)sc[1] / twice, &mb, &eb));
    assert_true(mp_quantize_multiplier(twice / (double)(32768.0f * sc[2]), &mo, &eo));
    int32_t a = mp_multiply_by_quantized_multiplier(x * 32768, ma, ea);
    int32_t b = mp_multiply_by_quantized_multiplier(w * 32768, mb, eb);
    int32_t v = mp_multiply_by_quantized_multiplier(sub ? a - b : a + b, mo, eo);
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Random general ADD / SUB / MUL with broadcasting ([2,3,4] with [3,1]) against the
 * restatement, and ADD with equal non-power-of-two scales left on the (default) option:
 * the general path is taken as the scales are not powers of two. */
static void test_binary_reference(void **state)
{
    (void)state;
    enum { N = 24, M = 3 };
    const int32_t da[3] = {2, 3, 4}, db[2] = {3, 1};
    int16_t a[N], b[M], y[N];
    uint32_t st = 5;
    for (int i = 0; i < N; i++)
        a[i] = (int16_t)next_int(&st, -32768, 32767);
    for (int i = 0; i < M; i++)
        b[i] = (int16_t)next_int(&st, -32768, 32767);
    const float scs[3][3] = {{0.0007f, 0.0003f, 0.0011f}, {0.3f, 0.3f, 0.25f},
                             {0.001f, 0.002f, 0.0005f}};
    for (int k = 0; k < 3; k++)
        for (int op = 0; op < 3; op++) {
            int32_t code = op == 0 ? MP_OP_ADD : op == 1 ? MP_OP_SUB : MP_OP_MUL;
            run_bin(code, k == 0, MP_ACT_NONE, scs[k], 3, da, a, 2, db, b, y, N);
            for (int i = 0; i < N; i++) {
                int32_t x = a[i], w = b[(i / 4) % 3], want;
                if (code == MP_OP_MUL) {
                    int32_t m;
                    int e;
                    double real = (double)scs[k][0] * (double)scs[k][1] / (double)scs[k][2];
                    assert_true(mp_quantize_multiplier(real, &m, &e));
                    want = mp_multiply_by_quantized_multiplier(x * w, m, e);
                    want = want < INT16_MIN ? INT16_MIN : (want > INT16_MAX ? INT16_MAX : want);
                } else {
                    want = ref_general(code == MP_OP_SUB, x, w, scs[k], INT16_MIN, INT16_MAX);
                }
                if (y[i] != want)
                    fail_msg("scales %d op %d element %d: got %d, want %d", k, op, i, y[i], want);
            }
        }
    /* power-of-two SUB broadcasts (BroadcastSub16POTSlow): [2,3,4] - [3,1] at 2^-8, 2^-9 -> 2^-8 */
    const float pot[3] = {0x1p-8f, 0x1p-9f, 0x1p-8f};
    run_bin(MP_OP_SUB, false, MP_ACT_NONE, pot, 3, da, a, 2, db, b, y, N);
    for (int i = 0; i < N; i++) {
        int32_t v = a[i] - mp_rounding_divide_by_pot(b[(i / 4) % 3], 1);
        v = v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v);
        assert_int_equal(y[i], v);
    }
}

static void test_binary_refusals(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d2 = 2, d1 = 1;
    static const float pot[3] = {0x1p-8f, 0x1p-8f, 0x1p-8f};
    /* power-of-two ADD does not broadcast in TensorFlow Lite */
    kh_init(&c, MP_OP_ADD, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &pot[0], k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d1, NULL), 1, &pot[1], k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &pot[2], k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "power-of-two int16 ADD (pot_scale_int16) does not broadcast");
    kh_free(&c);
    /* an input scale above the output's on the power-of-two path */
    static const float up[3] = {0x1p-6f, 0x1p-8f, 0x1p-8f};
    kh_init(&c, MP_OP_SUB, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &up[0], k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &up[1], k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &up[2], k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "power-of-two scales 2^-6, 2^-8 -> 2^-8");
    kh_free(&c);
    /* general ADD whose output multiplier is not below 1 (TensorFlow Lite aborts) */
    static const float tiny[3] = {1.0f, 1.0f, 0x1p-15f};
    kh_init(&c, MP_OP_ADD, NULL);
    c.opt.int16_general_scale = true;
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &tiny[0], k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &tiny[1], k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &tiny[2], k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "the output multiplier 2 is not below 1");
    kh_free(&c);
    /* a non-zero zero point */
    static const int64_t zp = 3;
    kh_init(&c, MP_OP_MUL, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &pot[0], k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &pot[1], &zp, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &pot[2], k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i16 input 't1' has zero point 3");
    kh_free(&c);
    /* DIV has no int16 kernel */
    kh_init(&c, MP_OP_DIV, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &pot[0], k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d2, NULL), 1, &pot[1], k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &pot[2], k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "only ADD, SUB and MUL take int16 inputs");
    kh_free(&c);
}

/* ---- LOGISTIC and TANH ----------------------------------------------------------------------- */

static void run_sig(int32_t op, float si, const int16_t *x, int16_t *y, size_t count)
{
    static const float so = 0x1p-15f;
    kh_case c;
    kh_init(&c, op, NULL);
    const int32_t d = (int32_t)count;
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d, x), 1, &si, k_zeros, 0);
    mp_tensor *out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, out, 1, &so, k_zeros, 0);
    kh_expect_ok(&c, kh_run(&c));
    memcpy(y, out->data, count * 2);
    kh_free(&c);
}

/* By hand, input scale 2^-12 (Q3.12: times 3, 1/24 of a unit per table entry):
 * LOGISTIC 0 -> table[0] = 32768 (0.5 in 0.16) << 9, + 2^9, >> 10 = 16384.
 * 4096 (1.0) -> 12288 = entry 24 exactly: 47911 << 9 + 512 >> 10 = 23956 (sigmoid(1) *
 * 32768 = 23955.8); -4096 mirrored: (2^25 - 47911 * 512 + 511) >> 10 = 9024511 >> 10 = 8812
 * (8812.2).
 * TANH 4096 -> 12288 >> 8 = entry 48 (sigmoid(2)) = 57724: (57724 << 8) - 2^23 + 2^7 >> 8 =
 * 24956 (tanh(1) * 32768 = 24955.9); -4096: -(57724 << 8) + 2^23 + 127 >> 8 = -24956; 0 -> 0.
 * Input scale 0.01 (multiplier 0.01 * 12288 doubled 8 times: 31457, shift 8): 32767 is far
 * beyond the table: LOGISTIC (0x7FFF << 10 + 2^9) >> 10 = 32767, -32768 -> 1; TANH 32767,
 * -32767. */
static void test_sigmoid_hand(void **state)
{
    (void)state;
    int16_t y[3];
    run_sig(MP_OP_LOGISTIC, 0x1p-12f, (int16_t[]){0, 4096, -4096}, y, 3);
    assert_memory_equal(y, ((int16_t[]){16384, 23956, 8812}), 6);
    run_sig(MP_OP_TANH, 0x1p-12f, (int16_t[]){0, 4096, -4096}, y, 3);
    assert_memory_equal(y, ((int16_t[]){0, 24956, -24956}), 6);
    run_sig(MP_OP_LOGISTIC, 0.01f, (int16_t[]){32767, -32768, 0}, y, 3);
    assert_memory_equal(y, ((int16_t[]){32767, 1, 16384}), 6);
    run_sig(MP_OP_TANH, 0.01f, (int16_t[]){32767, -32768, 0}, y, 3);
    assert_memory_equal(y, ((int16_t[]){32767, -32767, 0}), 6);
}

/* Every int16 input on a power-of-two and two other scales: within 4 units of 32768 * f(x)
 * (the table's interpolation and rounding, the multiplier's truncation), and monotone. */
static void test_sigmoid_all_inputs(void **state)
{
    (void)state;
    enum { N = 65536 };
    int16_t *x = malloc(N * 2), *y = malloc(N * 2);
    for (int i = 0; i < N; i++)
        x[i] = (int16_t)(i - 32768);
    const float scales[3] = {0x1p-12f, 0.0003f, 0.00071f};
    for (int op = 0; op < 2; op++)
        for (int k = 0; k < 3; k++) {
            int32_t code = op ? MP_OP_TANH : MP_OP_LOGISTIC;
            run_sig(code, scales[k], x, y, N);
            for (int i = 0; i < N; i++) {
                double r = (double)x[i] * scales[k];
                double f = op ? tanh(r) : 1.0 / (1.0 + exp(-r));
                double want = fmin(f * 32768.0, 32767.0);
                if (fabs(y[i] - want) > 4.0)
                    fail_msg("op %d scale %g x %d: got %d, f %g", op, (double)scales[k], x[i], y[i],
                             want);
                if (i > 0 && y[i] < y[i - 1])
                    fail_msg("op %d not monotone at x %d", op, x[i]);
            }
        }
    free(x);
    free(y);
}

static void test_sigmoid_refusals(void **state)
{
    (void)state;
    kh_case c;
    static const float si = 0x1p-12f, so = 0x1p-14f;
    const int32_t d = 2;
    kh_init(&c, MP_OP_LOGISTIC, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d, NULL), 1, &si, k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &so, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "i16 output 't1' has scale 6.10352e-05; TensorFlow Lite's int16 LOGISTIC "
                    "takes 2^-15 only");
    kh_free(&c);
    kh_init(&c, MP_OP_RELU_N1_TO_1, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d, NULL), 1, &si, k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &si, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "input 't0' is i16; of the activations only LOGISTIC, TANH, RELU, RELU6 and "
                    "LEAKY_RELU take int16 inputs");
    kh_free(&c);
}

/* RELU and RELU6 (QuantizedReluX): input scale 0.5, output 0.25: times 2 (2^30, shift 2):
 * 3 -> 6, -3 -> 0 (RELU's 0), 20 -> 40, RELU6 clamps it at round(6 / 0.25) = 24; 16383 ->
 * 32766, 16384 -> 32768 saturates at 32767. Then input 0.3, output 0.7 over every int16
 * against the restated clamp(MultiplyByQuantizedMultiplier(x, M(0.3f / 0.7f))). */
static void test_relu(void **state)
{
    (void)state;
    const float sc[2][2] = {{0.5f, 0.25f}, {0.3f, 0.7f}};
    enum { N = 65536 };
    int16_t *x = malloc(N * 2), *y = malloc(N * 2);
    for (int op = 0; op < 2; op++) {
        int32_t code = op ? MP_OP_RELU6 : MP_OP_RELU;
        memcpy(x, (int16_t[]){3, -3, 20, 16383, 16384}, 10);
        for (int k = 0; k < 2; k++) {
            size_t n = k ? N : 5;
            if (k)
                for (int i = 0; i < N; i++)
                    x[i] = (int16_t)(i - 32768);
            kh_case c;
            kh_init(&c, code, NULL);
            const int32_t d = (int32_t)n;
            kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d, x), 1, &sc[k][0], k_zeros, 0);
            mp_tensor *out = kh_output(&c, MP_DT_INT16);
            kh_quant(&c, out, 1, &sc[k][1], k_zeros, 0);
            kh_expect_ok(&c, kh_run(&c));
            memcpy(y, out->data, n * 2);
            kh_free(&c);
            if (!k) {
                assert_memory_equal(y, op ? ((int16_t[]){6, 0, 24, 24, 24})
                                          : ((int16_t[]){6, 0, 40, 32766, 32767}),
                                    10);
                continue;
            }
            int32_t m, sh, hi = op ? (int32_t)roundf(6.0f / sc[k][1]) : 32767;
            assert_true(mp_quantize_multiplier((double)(sc[k][0] / sc[k][1]), &m, &sh));
            for (int i = 0; i < N; i++) {
                int32_t v = mp_multiply_by_quantized_multiplier(x[i], m, sh);
                v = v < 0 ? 0 : (v > hi ? hi : v);
                assert_int_equal(y[i], v);
            }
        }
    }
    free(x);
    free(y);
}

/* LEAKY_RELU (QuantizeLeakyRelu): input scale 0.5, output 0.25, alpha 0.1: x >= 0 times 2,
 * x < 0 times 0.2 (0.8 * 2^30 / 2^31, then / 4): -10 -> -8 -> -2; -7: the high multiply
 * rounds -5.6 to -6, the divide -1.5 away from zero to -2 (two roundings; -1.4 exactly);
 * 9 -> 18; -32768 -> -26214 -> -6553.5 -> -6554; 20000 -> 40000 saturates at 32767. Then
 * every int16 on scales 0.3 -> 0.7, alpha 0.37, against the restated formula (both
 * multipliers from float products and quotients). */
static void test_leaky_relu(void **state)
{
    (void)state;
    enum { N = 65536 };
    int16_t *x = malloc(N * 2), *y = malloc(N * 2);
    const float sc[2][3] = {{0.5f, 0.25f, 0.1f}, {0.3f, 0.7f, 0.37f}};
    for (int k = 0; k < 2; k++) {
        size_t n = k ? N : 5;
        if (k)
            for (int i = 0; i < N; i++)
                x[i] = (int16_t)(i - 32768);
        else
            memcpy(x, (int16_t[]){-10, -7, 9, -32768, 20000}, 10);
        kh_case c;
        kh_init(&c, MP_OP_LEAKY_RELU, NULL);
        c.opt.alpha = sc[k][2];
        const int32_t d = (int32_t)n;
        kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, &d, x), 1, &sc[k][0], k_zeros, 0);
        mp_tensor *out = kh_output(&c, MP_DT_INT16);
        kh_quant(&c, out, 1, &sc[k][1], k_zeros, 0);
        kh_expect_ok(&c, kh_run(&c));
        memcpy(y, out->data, n * 2);
        kh_free(&c);
        if (!k) {
            assert_memory_equal(y, ((int16_t[]){-2, -2, 18, -6554, 32767}), 10);
            continue;
        }
        int32_t m1, m2;
        int s1, s2;
        assert_true(mp_quantize_multiplier((double)(sc[k][0] / sc[k][1]), &m1, &s1));
        assert_true(mp_quantize_multiplier((double)(sc[k][0] * sc[k][2] / sc[k][1]), &m2, &s2));
        for (int i = 0; i < N; i++) {
            int32_t v = x[i] >= 0 ? mp_multiply_by_quantized_multiplier(x[i], m1, s1)
                                  : mp_multiply_by_quantized_multiplier(x[i], m2, s2);
            v = v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v);
            assert_int_equal(y[i], v);
        }
    }
    free(x);
    free(y);
}

/* ---- SOFTMAX --------------------------------------------------------------------------------- */

/* TensorFlow Lite's gen_lut (513 int16 entries of func over [lo, hi], Q0.15), restated. */
static void ref_gen_lut(double (*f)(double), double lo, double hi, int16_t *t)
{
    double step = (hi - lo) / 512;
    for (int i = 0; i < 512; i++) {
        double x0 = lo + i * step;
        double s0 = round(f(x0) * 32768.0);
        double interp = round((f(x0 + step) * 32768.0 + s0) / 2.0);
        double err = interp - round(f(x0 + step / 2) * 32768.0);
        t[i] = (int16_t)fmin(fmax(s0 - round(err / 2.0), -32768.0), 32767.0);
    }
    t[512] = (int16_t)fmin(fmax(round(f(hi) * 32768.0), -32768.0), 32767.0);
}

static double ref_exp(double x) { return exp(x); }
static double ref_recip(double x) { return 1.0 / (1.0 + x); }

/* The interpolating lookup: base entry 256 + floor(v / 128), slope times v mod 128, rounded. */
static int32_t ref_lookup(int32_t v, const int16_t *t)
{
    int32_t q = v >= 0 ? v / 128 : -((-v + 127) / 128), r = v - q * 128;
    int32_t slope = t[256 + q + 1] - t[256 + q];
    int32_t d = slope * r + 64;
    return (int16_t)(t[256 + q] + (d >= 0 ? d / 128 : -((-d + 127) / 128)));
}

/* reference_ops::SoftmaxInt16 on one row, restated. */
static void ref_softmax_row(const int16_t *x, int16_t *y, int n, float si, float beta)
{
    static int16_t te[513], tr[513];
    ref_gen_lut(ref_exp, -10.0, 0.0, te);
    ref_gen_lut(ref_recip, 0.0, 1.0, tr);
    int32_t m;
    int sh;
    assert_true(mp_quantize_multiplier((double)(si * beta) / (10.0 / 65535.0), &m, &sh));
    int32_t mx = INT16_MIN, e[64];
    assert_true(n <= 64);
    for (int j = 0; j < n; j++)
        mx = x[j] > mx ? x[j] : mx;
    int32_t sum = 0;
    for (int j = 0; j < n; j++) {
        int32_t d = mp_multiply_by_quantized_multiplier(x[j] - mx, m, sh) + 32767;
        e[j] = ref_lookup(d < -32768 ? -32768 : (d > 32767 ? 32767 : d), te);
        sum += e[j];
    }
    int h = 0;
    while (h < 32 && !((uint32_t)sum & (0x80000000u >> h)))
        h++;
    int32_t shifted = (int32_t)((((int64_t)sum << (h - 1)) + (1 << 13)) >> 14);
    int32_t sym = shifted - ((1 << 15) + (1 << 16));
    int32_t recip = ref_lookup(sym < -32768 ? -32768 : (sym > 32767 ? 32767 : sym), tr);
    int rs = 31 - h;
    for (int j = 0; j < n; j++) {
        int64_t v = (int64_t)e[j] * recip + (INT64_C(1) << (rs - 1));
        int64_t q = v >= 0 ? v >> rs : -((-v + (INT64_C(1) << rs) - 1) >> rs);
        y[j] = (int16_t)(q < 0 ? 0 : (q > 32767 ? 32767 : q));
    }
}

static void run_softmax(float si, float beta, int32_t rows, int32_t depth, const int16_t *x,
                        int16_t *y)
{
    static const float so = 1.0f / 32768;
    kh_case c;
    kh_init(&c, MP_OP_SOFTMAX, NULL);
    c.opt.beta = beta;
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 2, (int32_t[]){rows, depth}, x), 1, &si, k_zeros, 0);
    mp_tensor *out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, out, 1, &so, k_zeros, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.node.scratch_bytes, 0);
    memcpy(y, out->data, (size_t)rows * depth * 2);
    kh_free(&c);
}

/* A row of one element is certain: exp(0) ~ 32762 / 32768 from the table, the sum's
 * reciprocal ~ 1/2 at 2^-16, the product ~ 32768 clamped to 32767. Two equal elements are
 * each a half (16384 within the tables' rounding). Then random rows against the restated
 * reference (bit for bit) and within 1 % of the float softmax plus 8 units. */
static void test_softmax(void **state)
{
    (void)state;
    int16_t y[4 * 37];
    run_softmax(0.001f, 1.0f, 1, 1, (int16_t[]){1234}, y);
    assert_int_equal(y[0], 32767);
    run_softmax(0.001f, 1.0f, 1, 2, (int16_t[]){-50, -50}, y);
    assert_int_equal(y[0], y[1]);
    assert_true(abs(y[0] - 16384) <= 2);
    uint32_t st = 31;
    int16_t x[4 * 37], want[37];
    for (int i = 0; i < 4 * 37; i++)
        x[i] = (int16_t)next_int(&st, -32768, 32767);
    const float scs[3] = {0.0001f, 0.0007f, 0.00002f}, betas[3] = {1.0f, 0.5f, 2.0f};
    for (int k = 0; k < 3; k++) {
        run_softmax(scs[k], betas[k], 4, 37, x, y);
        for (int r = 0; r < 4; r++) {
            ref_softmax_row(x + r * 37, want, 37, scs[k], betas[k]);
            double mx = -1e30, sum = 0;
            for (int j = 0; j < 37; j++)
                mx = fmax(mx, (double)x[r * 37 + j] * scs[k] * betas[k]);
            for (int j = 0; j < 37; j++)
                sum += exp((double)x[r * 37 + j] * scs[k] * betas[k] - mx);
            for (int j = 0; j < 37; j++) {
                assert_int_equal(y[r * 37 + j], want[j]);
                double f = exp((double)x[r * 37 + j] * scs[k] * betas[k] - mx) / sum * 32768.0;
                if (fabs(y[r * 37 + j] - f) > 0.01 * f + 8)
                    fail_msg("scale %d row %d col %d: %d, float %g", k, r, j, y[r * 37 + j], f);
            }
        }
    }
    /* refusals: the output's scale, LOG_SOFTMAX */
    kh_case c;
    static const float s1 = 0.001f, s2 = 1.0f / 256;
    kh_init(&c, MP_OP_SOFTMAX, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 2, (int32_t[]){1, 2}, NULL), 1, &s1, k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &s2, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "i16 output 't1' has scale 0.00390625; TensorFlow Lite's int16 SOFTMAX takes "
                    "1/32768 only");
    kh_free(&c);
}

/* ---- AVERAGE_POOL_2D, MAX_POOL_2D ------------------------------------------------------------ */

/* By hand: a 2x2 window over [[1, 2], [3, 5]]: sum 11 / 4 = 2.75 -> (11 + 2) / 4 = 3; over
 * [[-1, -2], [-3, -5]]: (-11 - 2) / 4 = -3 (half away from zero: -2.75 -> -3); max 5 and -1.
 * Then random inputs against reference_integer_ops' int16 AveragePool / MaxPool restated
 * (SAME windows clipped to the input, count of the valid pixels), with RELU6. */
static void run_pool(int32_t op, int32_t padding, int act, int32_t h, int32_t w, int32_t ch,
                     int32_t f, int32_t st, const int16_t *x, mp_tensor *dims_out, int16_t *y)
{
    static const float s = 0.01f;
    kh_case c;
    kh_init(&c, op, NULL);
    c.opt.padding = padding;
    c.opt.filter_h = c.opt.filter_w = f;
    c.opt.stride_h = c.opt.stride_w = st;
    c.opt.activation = act;
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 4, (int32_t[]){1, h, w, ch}, x), 1, &s, k_zeros, 0);
    mp_tensor *out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, out, 1, &s, k_zeros, 0);
    kh_expect_ok(&c, kh_run(&c));
    *dims_out = *out;
    memcpy(y, out->data, out->bytes);
    kh_free(&c);
}

static void test_pool(void **state)
{
    (void)state;
    mp_tensor o;
    int16_t y[256];
    run_pool(MP_OP_AVERAGE_POOL_2D, MP_PAD_VALID, MP_ACT_NONE, 2, 2, 2, 2, 2,
             (int16_t[]){1, -1, 2, -2, 3, -3, 5, -5}, &o, y);
    assert_memory_equal(y, ((int16_t[]){3, -3}), 4);
    run_pool(MP_OP_MAX_POOL_2D, MP_PAD_VALID, MP_ACT_NONE, 2, 2, 2, 2, 2,
             (int16_t[]){1, -1, 2, -2, 3, -3, 5, -5}, &o, y);
    assert_memory_equal(y, ((int16_t[]){5, -1}), 4);

    enum { H = 7, W = 6, C = 3 };
    int16_t x[H * W * C];
    uint32_t st = 3;
    for (int i = 0; i < H * W * C; i++)
        x[i] = (int16_t)next_int(&st, -32768, 32767);
    int32_t lo6 = 0, hi6 = 600; /* RELU6 at scale 0.01 */
    for (int k = 0; k < 4; k++) {
        int32_t op = k & 1 ? MP_OP_MAX_POOL_2D : MP_OP_AVERAGE_POOL_2D;
        int act = k & 2 ? MP_ACT_RELU6 : MP_ACT_NONE;
        run_pool(op, MP_PAD_SAME, act, H, W, C, 3, 2, x, &o, y);
        int32_t oh = (H + 1) / 2, ow = (W + 1) / 2;
        assert_int_equal(o.dims[1], oh);
        assert_int_equal(o.dims[2], ow);
        int32_t ph = ((oh - 1) * 2 + 3 - H) / 2, pw = ((ow - 1) * 2 + 3 - W) / 2;
        for (int32_t oy = 0; oy < oh; oy++)
            for (int32_t ox = 0; ox < ow; ox++)
                for (int32_t ch = 0; ch < C; ch++) {
                    int32_t sum = 0, cnt = 0, mx = INT16_MIN;
                    for (int32_t ky = 0; ky < 3; ky++)
                        for (int32_t kx = 0; kx < 3; kx++) {
                            int32_t iy = oy * 2 - ph + ky, ix = ox * 2 - pw + kx;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            int32_t v = x[(iy * W + ix) * C + ch];
                            sum += v;
                            cnt++;
                            mx = v > mx ? v : mx;
                        }
                    int32_t want = op == MP_OP_MAX_POOL_2D ? mx
                                   : sum > 0 ? (sum + cnt / 2) / cnt
                                             : (sum - cnt / 2) / cnt;
                    if (act == MP_ACT_RELU6)
                        want = want < lo6 ? lo6 : (want > hi6 ? hi6 : want);
                    assert_int_equal(y[(oy * ow + ox) * C + ch], want);
                }
    }
}

/* ---- operators that move values ----------------------------------------------------------------
 *
 * A 16x8 model's CONCATENATION, PAD, RESHAPE, SQUEEZE, TRANSPOSE, STRIDED_SLICE and GATHER
 * move int16 values as they are (input and output sharing scale 1/64 and zero point 0);
 * each result by hand from x = (1, -2, 3, -4, 5, -6) as [2, 3]. */
static mp_tensor *q16(kh_case *c, mp_tensor *t)
{
    static const float s = 1.0f / 64;
    kh_quant(c, t, 1, &s, k_zeros, 0);
    return t;
}

static void expect_i16(kh_case *c, const mp_tensor *out, int rank, const int32_t *dims,
                       const int16_t *want, size_t n)
{
    kh_expect_ok(c, kh_run(c));
    assert_int_equal(out->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(out->dims[i], dims[i]);
    assert_int_equal(mp_tensor_elements(out), n);
    assert_memory_equal(out->data, want, n * 2);
    kh_free(c);
}

static void test_movement(void **state)
{
    (void)state;
    static const int16_t x[6] = {1, -2, 3, -4, 5, -6};
    const int32_t d23[2] = {2, 3};
    kh_case c;
    mp_tensor *out;

    /* CONCATENATION along axis 1 of [2,3] and [2,1] (7, 8) */
    kh_init(&c, MP_OP_CONCATENATION, NULL);
    c.opt.axis = 1;
    q16(&c, kh_input(&c, MP_DT_INT16, 2, d23, x));
    q16(&c, kh_input(&c, MP_DT_INT16, 2, (int32_t[]){2, 1}, (int16_t[]){7, 8}));
    out = q16(&c, kh_output(&c, MP_DT_INT16));
    expect_i16(&c, out, 2, (int32_t[]){2, 4}, (int16_t[]){1, -2, 3, 7, -4, 5, -6, 8}, 8);
    /* inputs of scales 0.5 and 0.25 into an output of scale 1: the stored values are copied,
     * not requantized, as TensorFlow Lite's concatenation.cc (it checks only zero points) */
    static const float s05 = 0.5f, s025 = 0.25f, s1 = 1.0f;
    kh_init(&c, MP_OP_CONCATENATION, NULL);
    c.opt.axis = 1;
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 2, d23, x), 1, &s05, k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 2, (int32_t[]){2, 1}, (int16_t[]){7, 8}), 1, &s025,
             k_zeros, 0);
    out = kh_output(&c, MP_DT_INT16);
    kh_quant(&c, out, 1, &s1, k_zeros, 0);
    expect_i16(&c, out, 2, (int32_t[]){2, 4}, (int16_t[]){1, -2, 3, 7, -4, 5, -6, 8}, 8);

    /* PAD one column before and after: the zero point, 0 */
    static const int32_t pads[4] = {0, 0, 1, 1};
    kh_init(&c, MP_OP_PAD, NULL);
    q16(&c, kh_input(&c, MP_DT_INT16, 2, d23, x));
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, pads);
    out = q16(&c, kh_output(&c, MP_DT_INT16));
    expect_i16(&c, out, 2, (int32_t[]){2, 5}, (int16_t[]){0, 1, -2, 3, 0, 0, -4, 5, -6, 0}, 10);

    /* RESHAPE to [3, 2] (a shape tensor) */
    kh_init(&c, MP_OP_RESHAPE, NULL);
    q16(&c, kh_input(&c, MP_DT_INT16, 2, d23, x));
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){3, 2});
    out = q16(&c, kh_output(&c, MP_DT_INT16));
    expect_i16(&c, out, 2, (int32_t[]){3, 2}, x, 6);

    /* SQUEEZE [1, 6, 1] -> [6] */
    kh_init(&c, MP_OP_SQUEEZE, NULL);
    q16(&c, kh_input(&c, MP_DT_INT16, 3, (int32_t[]){1, 6, 1}, x));
    out = q16(&c, kh_output(&c, MP_DT_INT16));
    expect_i16(&c, out, 1, (int32_t[]){6}, x, 6);

    /* TRANSPOSE [2,3] -> [3,2] */
    kh_init(&c, MP_OP_TRANSPOSE, NULL);
    q16(&c, kh_input(&c, MP_DT_INT16, 2, d23, x));
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){1, 0});
    out = q16(&c, kh_output(&c, MP_DT_INT16));
    expect_i16(&c, out, 2, (int32_t[]){3, 2}, (int16_t[]){1, -4, -2, 5, 3, -6}, 6);

    /* STRIDED_SLICE rows 0..2, columns 2 down to 0 by -2: (3, 1), (-6, -4) */
    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    q16(&c, kh_input(&c, MP_DT_INT16, 2, d23, x));
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){0, 2});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){2, -4});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){1, -2});
    out = q16(&c, kh_output(&c, MP_DT_INT16));
    expect_i16(&c, out, 2, (int32_t[]){2, 2}, (int16_t[]){3, 1, -6, -4}, 4);

    /* GATHER columns (2, 0, 2) along axis 1 */
    kh_init(&c, MP_OP_GATHER, NULL);
    c.opt.axis = 1;
    q16(&c, kh_input(&c, MP_DT_INT16, 2, d23, x));
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, (int32_t[]){2, 0, 2});
    out = q16(&c, kh_output(&c, MP_DT_INT16));
    expect_i16(&c, out, 2, (int32_t[]){2, 3}, (int16_t[]){3, 1, 3, -6, -4, -6}, 6);
}

/* ---- ABS, EXP ------------------------------------------------------------------------------- */

/* An int16 ABS or EXP of x[n] with scales *si -> *so (quantized when si is given). */
static void run_elem(int32_t op, const float *si, const float *so, int32_t n, const int16_t *x,
                     int16_t *y)
{
    kh_case c;
    kh_init(&c, op, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT16, 1, &n, x);
    mp_tensor *out = kh_output(&c, MP_DT_INT16);
    if (si) {
        kh_quant(&c, in, 1, si, k_zeros, 0);
        kh_quant(&c, out, 1, so, k_zeros, 0);
    }
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(mp_tensor_elements(out), (size_t)n);
    memcpy(y, out->data, (size_t)n * 2);
    kh_free(&c);
}

/* ABS (elementwise.cc). Scales 0.5 -> 0.25 (multiplier 2): -100 -> 200, 7 -> 14, -20000 ->
 * 40000 saturates at 32767. Equal scales: |-32768| = 32768 saturates at 32767. Scales 1 -> 3:
 * the multiplier 1/3 is 0x55555555 * 2^(-1 - 31), applied as two roundings (the doubling
 * high multiply by 0x55555555, ties up, then halving, ties away from zero): 5 -> 3.33 -> 3
 * -> 1.5 -> 2; 4 -> 2.67 -> 3 -> 1.5 -> 2 (not round(4/3) = 1); 7 -> 4.67 -> 5 -> 2.5 -> 3.
 * Unquantized (AbsInt16EvalImpl): |-32768| wraps to -32768, |-3| = 3. */
static void test_abs(void **state)
{
    (void)state;
    static const float s05 = 0.5f, s025 = 0.25f, s1 = 1.0f, s3 = 3.0f;
    int16_t y[4];
    run_elem(MP_OP_ABS, &s05, &s025, 3, (int16_t[]){-100, 7, -20000}, y);
    assert_memory_equal(y, ((int16_t[]){200, 14, 32767}), 6);
    run_elem(MP_OP_ABS, &s05, &s05, 2, (int16_t[]){-32768, -9}, y);
    assert_memory_equal(y, ((int16_t[]){32767, 9}), 4);
    run_elem(MP_OP_ABS, &s1, &s3, 3, (int16_t[]){-5, 4, -7}, y);
    assert_memory_equal(y, ((int16_t[]){2, 2, 3}), 6);
    run_elem(MP_OP_ABS, NULL, NULL, 2, (int16_t[]){-32768, -3}, y);
    assert_memory_equal(y, ((int16_t[]){-32768, 3}), 4);
}

/* exp.cc's LUTPopulate<int16_t> (LUTPopulateInt16 in float) for zero points 0, restated: 512
 * steps over [si * -32768, si * 32767], values in units of 65536 over the output's real range
 * (so * 32767 - so * -32768); each entry the rounded value at the step's start less half
 * (rounded) the error of the interpolated midpoint against the rounded midpoint value; the
 * last entry the value at the end. */
static void ref_exp_lut(float si, float so, int16_t *t)
{
    const float lo = si * -32768.0f, hi = si * 32767.0f, step = (hi - lo) / 512.0f;
    const float inv = 65536.0f / (so * 32767.0f - so * -32768.0f);
    for (int i = 0; i < 512; i++) {
        const float x0 = lo + (float)i * step;
        const float s0 = roundf(expf(x0) * inv);
        const float interp = roundf((expf(lo + (float)(i + 1) * step) * inv + s0) / 2.0f);
        const float err = interp - roundf(expf(x0 + step / 2.0f) * inv);
        t[i] = (int16_t)fminf(fmaxf(s0 - roundf(err / 2.0f), -32768.0f), 32767.0f);
    }
    t[512] = (int16_t)fminf(fmaxf(roundf(expf(hi) * inv), -32768.0f), 32767.0f);
}

/* EXP over every int16 input against the restated table and lookup, for two scale pairs; the
 * result also near exp(x * si) / so where that is below the output's range: within 2 units
 * (an entry's rounding and its bias of half the midpoint's rounded error, the lookup's
 * rounding) plus, relative to the value, the error of interpolating exp linearly over a table
 * step h = si * 65535 / 512 (at most h^2 / 8), the table's units (65536 over 65535 output
 * steps: 1.6e-5) and its positions (entry i sits at i * 65535 / 512 input steps, the lookup
 * reads it at i * 128: up to one input step, a relative si). */
static void test_exp(void **state)
{
    (void)state;
    static const float sc[2][2] = {{0x1p-13f, 0x1p-9f}, {0.0003f, 0.0011f}};
    int16_t *x = malloc(65536 * 2), *y = malloc(65536 * 2);
    for (int i = 0; i < 65536; i++)
        x[i] = (int16_t)(i - 32768);
    for (int k = 0; k < 2; k++) {
        run_elem(MP_OP_EXP, &sc[k][0], &sc[k][1], 65536, x, y);
        int16_t t[513];
        ref_exp_lut(sc[k][0], sc[k][1], t);
        const double h = sc[k][0] * 65535.0 / 512.0, rel = h * h / 8.0 + 1.6e-5 + sc[k][0];
        for (int i = 0; i < 65536; i++) {
            if (y[i] != ref_lookup(x[i], t))
                fail_msg("scales %d, x %d: got %d, want %d", k, x[i], y[i], ref_lookup(x[i], t));
            const double real = exp((double)x[i] * sc[k][0]) / sc[k][1];
            if (real < 32000 && !(fabs(y[i] - real) <= 2.0 + rel * real))
                fail_msg("scales %d, x %d: %d is %g units from exp", k, x[i], y[i],
                         fabs(y[i] - real));
        }
    }
    free(x);
    free(y);
    /* zero points other than 0, and an int16 NEG, are refused */
    static const float s = 0.5f;
    static const int64_t zp2[1] = {2};
    kh_case c;
    kh_init(&c, MP_OP_EXP, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, (int32_t[]){2}, NULL), 1, &s, zp2, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &s, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i16 input 't0' has zero point 2");
    kh_free(&c);
    kh_init(&c, MP_OP_NEG, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 1, (int32_t[]){2}, NULL), 1, &s, k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &s, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't0' has dtype i16");
    kh_free(&c);
}

/* ---- BATCH_MATMUL --------------------------------------------------------------------------- */

/* An int16 BATCH_MATMUL case: lhs (scale sa), rhs (scale sb, constant when given), output
 * (scale so); the output is left in c for the caller. */
static mp_tensor *mm_case(kh_case *c, const float sc[3], int32_t ra, const int32_t *da,
                          const int16_t *a, int32_t rb, const int32_t *db, const int16_t *b,
                          bool adj_x, bool adj_y)
{
    kh_init(c, MP_OP_BATCH_MATMUL, NULL);
    c->opt.adj_x = adj_x;
    c->opt.adj_y = adj_y;
    kh_quant(c, kh_input(c, MP_DT_INT16, ra, da, a), 1, &sc[0], k_zeros, 0);
    kh_quant(c, kh_input(c, MP_DT_INT16, rb, db, b), 1, &sc[1], k_zeros, 0);
    mp_tensor *out = kh_output(c, MP_DT_INT16);
    kh_quant(c, out, 1, &sc[2], k_zeros, 0);
    return out;
}

/* lhs [2,2,3] at 0.5 times rhs [3,2] at 0.25 (broadcast over the lhs batches) into scale 1:
 * the multiplier 0.125 exactly (2^30, shift -2), one rounding (half up) on the int64 path.
 * Rhs rows (1, 2), (3, 4), (5, -6).
 * Batch 0: (104, -200, 300): 104 - 600 + 1500 = 1004 -> 125.5 -> 126;
 *          208 - 800 - 1800 = -2392 -> -299.
 *          (996, 2000, -3000): 996 + 6000 - 15000 = -8004 -> -1000.5 -> -1000 (half up);
 *          1992 + 8000 + 18000 = 27992 -> 3499.
 * Batch 1: 32767 * 9 / 8 = 36862.875 saturates at 32767, 32767 * 0 = 0;
 *          -32768 * 9 / 8 saturates at -32768, 0. */
static void test_matmul_hand(void **state)
{
    (void)state;
    static const int16_t a[12] = {104,   -200,  300,   996,    2000,   -3000,
                                  32767, 32767, 32767, -32768, -32768, -32768};
    static const int16_t b[6] = {1, 2, 3, 4, 5, -6};
    static const float sc[3] = {0.5f, 0.25f, 1.0f};
    kh_case c;
    mp_tensor *out = mm_case(&c, sc, 3, (int32_t[]){2, 2, 3}, a, 2, (int32_t[]){3, 2}, b,
                             false, false);
    expect_i16(&c, out, 3, (int32_t[]){2, 2, 2},
               (int16_t[]){126, -299, -1000, 3499, 32767, 0, -32768, 0}, 8);
    /* the same product with both operands stored transposed (adj_x, adj_y) */
    int16_t at[12], bt[6];
    for (int bb = 0; bb < 2; bb++)
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 3; k++)
                at[bb * 6 + k * 2 + i] = a[bb * 6 + i * 3 + k];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 2; j++)
            bt[j * 3 + k] = b[k * 2 + j];
    out = mm_case(&c, sc, 3, (int32_t[]){2, 3, 2}, at, 2, (int32_t[]){2, 3}, bt, true, true);
    expect_i16(&c, out, 3, (int32_t[]){2, 2, 2},
               (int16_t[]){126, -299, -1000, 3499, 32767, 0, -32768, 0}, 8);
}

/* TensorFlow Lite's BatchMatMul<int16, int64>, restated: for each output batch (NumPy
 * broadcasting of the batch dimensions), the int64 sum of lhs(i, k) * rhs(k, j), requantized
 * by (float)(sa * sb) / so on the int64 path, clamped to int16. Random shapes, flags and
 * values (full int16 range), against the kernel. */
static void test_matmul_reference(void **state)
{
    (void)state;
    uint32_t st = 99;
    for (int t = 0; t < 40; t++) {
        const int32_t m = next_int(&st, 1, 5), k = next_int(&st, 0, 7), n = next_int(&st, 1, 5);
        const bool ax = next_int(&st, 0, 1), ay = next_int(&st, 0, 1);
        const int32_t ba = next_int(&st, 1, 3), bb = next_int(&st, 0, 1) ? ba : 1;
        const bool a_first = next_int(&st, 0, 1); /* which operand carries the batches */
        const int32_t lb = a_first ? ba : bb, rb = a_first ? bb : ba;
        const float sc[3] = {(float)next_int(&st, 1, 1000) / 65536.0f,
                             (float)next_int(&st, 1, 1000) / 65536.0f,
                             (float)next_int(&st, 1, 1000) / 4096.0f};
        int16_t a[3 * 35], b[3 * 35];
        for (int i = 0; i < lb * m * k; i++)
            a[i] = (int16_t)next_int(&st, -32768, 32767);
        for (int i = 0; i < rb * k * n; i++)
            b[i] = (int16_t)next_int(&st, -32768, 32767);
        const int32_t da[3] = {lb, ax ? k : m, ax ? m : k}, db[3] = {rb, ay ? n : k, ay ? k : n};
        kh_case c;
        mp_tensor *out = mm_case(&c, sc, 3, da, a, 3, db, b, ax, ay);
        kh_expect_ok(&c, kh_run(&c));
        const int32_t nb = lb > rb ? lb : rb;
        assert_int_equal(out->rank, 3);
        assert_int_equal(out->dims[0], nb);
        assert_int_equal(out->dims[1], m);
        assert_int_equal(out->dims[2], n);
        const double real = (double)(sc[0] * sc[1]) / (double)sc[2];
        for (int ob = 0; ob < nb; ob++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    const int16_t *pa = a + (lb == 1 ? 0 : ob) * m * k;
                    const int16_t *pb = b + (rb == 1 ? 0 : ob) * k * n;
                    int64_t acc = 0;
                    for (int kk = 0; kk < k; kk++)
                        acc += (int64_t)(ax ? pa[kk * m + i] : pa[i * k + kk]) *
                               (ay ? pb[j * k + kk] : pb[kk * n + j]);
                    int32_t want = ref_requant(acc, real, true, INT16_MIN, INT16_MAX);
                    int16_t got = ((int16_t *)out->data)[(ob * m + i) * n + j];
                    if (got != want)
                        fail_msg("case %d [%d][%d][%d]: got %d, want %d", t, ob, i, j, got,
                                 want);
                }
        kh_free(&c);
    }
}

/* An int16 lhs [1,2] (0.5) times an rhs of dtype bt, [k,1] (0.5, zero point *zp), into an
 * int16 output of scale so: refused with status st and a message mentioning needle. */
static void mm_refused(mp_dtype bt, int32_t k, const int64_t *zp, float so, mp_status st,
                       const char *needle)
{
    static const float s = 0.5f;
    static float s_out;
    s_out = so;
    kh_case c;
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 2, (int32_t[]){1, 2}, NULL), 1, &s, k_zeros, 0);
    kh_quant(&c, kh_input(&c, bt, 2, (int32_t[]){k, 1}, NULL), 1, &s, zp, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &s_out, k_zeros, 0);
    kh_expect_error(&c, st, needle);
    kh_free(&c);
}

/* An int8 rhs (TensorFlow Lite requires both of one type), a zero point other than 0, a scale
 * ratio of 2^14 or more (beyond the int64 requantization), inner dimensions that differ. */
static void test_matmul_refusals(void **state)
{
    (void)state;
    static const int64_t zp3[1] = {3};
    mm_refused(MP_DT_INT8, 2, k_zeros, 0.5f, MP_ERR_UNSUPPORTED,
               "rhs 't1' is i8; with i16 input 't0' it must be i16");
    mm_refused(MP_DT_INT16, 2, zp3, 0.5f, MP_ERR_UNSUPPORTED, "i16 rhs 't1' has zero point 3");
    mm_refused(MP_DT_INT16, 2, k_zeros, 1e-6f, MP_ERR_UNSUPPORTED,
               "which the int16 requantization cannot take");
    mm_refused(MP_DT_INT16, 3, k_zeros, 0.5f, MP_ERR_SHAPE,
               "differ in the inner dimension (2 and 3)");
}

/* ---- TRANSPOSE_CONV ------------------------------------------------------------------------- */

/* An int16 TRANSPOSE_CONV case: output_shape [1, oh, ow, oc], weights [oc, kh, kw, ic] with
 * ws_count scales, input [1, ih, iw, ic] (data filled by the caller), bias of bias_dt
 * (MP_DT_COUNT: none), input and output scales *si, *so (kept by the case). Returns the
 * input. */
static const float k_half = 0.5f, k_one = 1.0f;

static mp_tensor *tc_case(kh_case *c, int32_t padding, int32_t stride, int act, int32_t oh,
                          int32_t ow, int32_t oc, int32_t kh, int32_t kw, int32_t ih, int32_t iw,
                          int32_t ic, const int8_t *w, int32_t ws_count, const float *ws,
                          mp_dtype bias_dt, const void *bias, const float *si, const float *so)
{
    kh_init(c, MP_OP_TRANSPOSE_CONV, NULL);
    c->opt.padding = padding;
    c->opt.stride_h = c->opt.stride_w = stride;
    c->opt.activation = act;
    int32_t *os = malloc(4 * sizeof(int32_t)); /* freed by the caller through tc_free */
    os[0] = 1;
    os[1] = oh;
    os[2] = ow;
    os[3] = oc;
    kh_input(c, MP_DT_INT32, 1, (int32_t[]){4}, os);
    kh_quant(c, kh_input(c, MP_DT_INT8, 4, (int32_t[]){oc, kh, kw, ic}, w), ws_count, ws,
             k_zeros, 0);
    mp_tensor *x = kh_input(c, MP_DT_INT16, 4, (int32_t[]){1, ih, iw, ic}, NULL);
    kh_quant(c, x, 1, si, k_zeros, 0);
    if (bias_dt != MP_DT_COUNT)
        kh_input(c, bias_dt, 1, (int32_t[]){oc}, bias);
    kh_quant(c, kh_output(c, MP_DT_INT16), 1, so, k_zeros, 0);
    return x;
}

static void tc_free(kh_case *c)
{
    void *os = c->in[0]->data;
    kh_free(c);
    free(os);
}

/* Stride 2, VALID, 2x2 weights (1, 2; 3, 4) at 0.25 on a 2x2 input (100, -200; 300, 400) at
 * 0.5 into 4x4 at scale 1 with bias 2: each input pixel writes its own 2x2 block,
 * (x * w + 2) / 8 (multiplier 0.125), one rounding half up: 100 -> 102, 202, 302, 402 / 8
 * = 12.75, 25.25, 37.75, 50.25 -> 13, 25, 38, 50; -200 -> -198 .. -798 -> -25, -50, -75,
 * -100; 300 -> 38, 75, 113, 150; 400 -> 50, 100, 150, 200. */
static void test_tconv_hand(void **state)
{
    (void)state;
    static const int8_t w[4] = {1, 2, 3, 4};
    static const int64_t bias[1] = {2};
    static const float ws = 0.25f;
    kh_case c;
    mp_tensor *x = tc_case(&c, MP_PAD_VALID, 2, MP_ACT_NONE, 4, 4, 1, 2, 2, 2, 2, 1, w, 1, &ws,
                           MP_DT_INT64, bias, &k_half, &k_one);
    memcpy(x->data, (const int16_t[]){100, -200, 300, 400}, 8);
    kh_expect_ok(&c, kh_run(&c));
    const mp_tensor *out = c.out[0];
    static const int16_t want[16] = {13, 25, -25, -50, 38, 50, -75, -100,
                                     38, 75, 50,  100, 113, 150, 150, 200};
    assert_int_equal(mp_tensor_elements(out), 16);
    assert_memory_equal(out->data, want, sizeof want);
    /* RELU clamps the negative block at 0 */
    c.opt.activation = MP_ACT_RELU;
    kh_expect_ok(&c, kh_rerun(&c, true));
    assert_int_equal(((int16_t *)out->data)[2], 0);
    assert_int_equal(((int16_t *)out->data)[7], 0);
    assert_int_equal(((int16_t *)out->data)[15], 200);
    tc_free(&c);
}

/* TensorFlow Lite's reference_integer_ops::TransposeConv for int16, restated: an int64
 * scratch of the output zeroed, every input pixel and tap landing inside the output adding
 * x * w there (padding before: the smaller half of (ceil-or-valid conv size - 1) * stride
 * + k - out, at least 0), then per channel + bias, the int64 requantization of
 * (double)si * ws[c] / so, clamped to the activation's range. Random geometry (strides 1-3,
 * SAME and VALID, outputs that crop), per-tensor and per-channel weights, with and without
 * a bias, against the kernel. */
static void test_tconv_reference(void **state)
{
    (void)state;
    uint32_t st = 4242;
    for (int t = 0; t < 40; t++) {
        const int32_t stride = next_int(&st, 1, 3), k_h = next_int(&st, 1, 3),
                      k_w = next_int(&st, 1, 3), ih = next_int(&st, 1, 4),
                      iw = next_int(&st, 1, 4), ic = next_int(&st, 1, 3),
                      oc = next_int(&st, 1, 3);
        const int32_t padding = next_int(&st, 0, 1) ? MP_PAD_SAME : MP_PAD_VALID;
        /* an output size whose conv size is the input's: SAME ceil(out / stride) = in,
         * VALID (out - k + stride) / stride = in */
        const int32_t oh = padding == MP_PAD_SAME
                               ? (ih - 1) * stride + next_int(&st, 1, stride)
                               : (ih - 1) * stride + k_h + next_int(&st, 0, stride - 1);
        const int32_t ow = padding == MP_PAD_SAME
                               ? (iw - 1) * stride + next_int(&st, 1, stride)
                               : (iw - 1) * stride + k_w + next_int(&st, 0, stride - 1);
        const bool per_channel = next_int(&st, 0, 1), has_bias = next_int(&st, 0, 1);
        const int act = next_int(&st, 0, 1) ? MP_ACT_RELU : MP_ACT_NONE;
        float ws[3];
        for (int o = 0; o < 3; o++)
            ws[o] = (float)next_int(&st, 1, 1000) / 16384.0f;
        const float si = (float)next_int(&st, 1, 1000) / 8192.0f,
                    so = (float)next_int(&st, 1, 1000) / 1024.0f;
        int8_t w[3 * 3 * 3 * 3];
        int64_t bias[3];
        for (int i = 0; i < oc * k_h * k_w * ic; i++)
            w[i] = (int8_t)next_int(&st, -127, 127);
        for (int o = 0; o < oc; o++)
            bias[o] = next_int(&st, -3000000, 3000000);
        kh_case c;
        mp_tensor *x = tc_case(&c, padding, stride, act, oh, ow, oc, k_h, k_w, ih, iw, ic, w,
                               per_channel ? oc : 1, ws, has_bias ? MP_DT_INT64 : MP_DT_COUNT,
                               bias, &si, &so);
        int16_t *xv = x->data;
        for (int i = 0; i < ih * iw * ic; i++)
            xv[i] = (int16_t)next_int(&st, -32768, 32767);
        kh_expect_ok(&c, kh_run(&c));
        const mp_tensor *out = c.out[0];
        assert_int_equal(mp_tensor_elements(out), (size_t)(oh * ow * oc));
        int64_t acc[12 * 12 * 3] = {0};
        const int32_t ph = kh_conv_pad_before(oh, k_h, stride, 1, padding),
                      pw = kh_conv_pad_before(ow, k_w, stride, 1, padding);
        for (int iy = 0; iy < ih; iy++)
            for (int ix = 0; ix < iw; ix++)
                for (int fy = 0; fy < k_h; fy++)
                    for (int fx = 0; fx < k_w; fx++) {
                        int oy = iy * stride - ph + fy, ox = ix * stride - pw + fx;
                        if (oy < 0 || oy >= oh || ox < 0 || ox >= ow)
                            continue;
                        for (int o = 0; o < oc; o++)
                            for (int i = 0; i < ic; i++)
                                acc[(oy * ow + ox) * oc + o] +=
                                    (int64_t)xv[(iy * iw + ix) * ic + i] *
                                    w[((o * k_h + fy) * k_w + fx) * ic + i];
                    }
        int32_t lo, hi;
        act_range(act, so, &lo, &hi);
        for (int p = 0; p < oh * ow; p++)
            for (int o = 0; o < oc; o++) {
                double real = (double)si * (double)ws[per_channel ? o : 0] / (double)so;
                int32_t want = ref_requant(acc[p * oc + o] + (has_bias ? bias[o] : 0), real,
                                           true, lo, hi);
                int16_t got = ((int16_t *)out->data)[p * oc + o];
                if (got != want)
                    fail_msg("case %d pixel %d channel %d: got %d, want %d", t, p, o, got, want);
            }
        tc_free(&c);
    }
}

static void test_tconv_refusals(void **state)
{
    (void)state;
    static const int8_t w[4] = {1, 2, 3, 4};
    static const int32_t b32[1] = {2};
    static const float ws = 0.25f;
    kh_case c;
    /* an int32 bias: TensorFlow Lite's 16x8 TRANSPOSE_CONV takes only int64 */
    tc_case(&c, MP_PAD_VALID, 2, MP_ACT_NONE, 4, 4, 1, 2, 2, 2, 2, 1, w, 1, &ws, MP_DT_INT32,
            b32, &k_half, &k_one);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "bias 't3' is i32; with i16 input 't2' it must be i64");
    tc_free(&c);
    /* an int8 output */
    kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
    c.opt.padding = MP_PAD_VALID;
    c.opt.stride_h = c.opt.stride_w = 1;
    static const int32_t os[4] = {1, 2, 2, 1};
    static const float s = 0.5f;
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 4, (int32_t[]){1, 1, 1, 1}, w), 1, &ws, k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 4, (int32_t[]){1, 2, 2, 1}, NULL), 1, &s, k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT8), 1, &s, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "output 't3' is i8; with i16 input 't2' it must be i16");
    kh_free(&c);
    /* int16 weights */
    kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
    c.opt.padding = MP_PAD_VALID;
    c.opt.stride_h = c.opt.stride_w = 1;
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 4, (int32_t[]){1, 1, 1, 1}, (int16_t[]){1}), 1, &ws,
             k_zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT16, 4, (int32_t[]){1, 2, 2, 1}, NULL), 1, &s, k_zeros, 0);
    kh_quant(&c, kh_output(&c, MP_DT_INT16), 1, &s, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "weights 't1' is i16; 16x8 nodes take i8 weights");
    kh_free(&c);
}

/* ---- a 16x8 graph through the session ---------------------------------------------------------
 *
 * x f32 [1,6,6,2] -> QUANTIZE (i16, scale SX) -> CONV_2D 3x3 SAME, 4 channels (per-channel int8
 * weights, int64 bias) -> DEPTHWISE_CONV_2D 3x3 SAME -> ADD (conv + depthwise, general path)
 * -> FULLY_CONNECTED [3, 144] -> DEQUANTIZE f32 [1,3].
 * The float graph it quantizes has the dequantized weights (q * scale) and biases (q * input
 * scale * weight scale), so the only differences are the activations' roundings. Each stage's
 * error is bounded by what it receives times the L1 norm of the weights it applies (max over
 * output channels), plus one unit of its output scale (the requantization rounds twice at
 * most: half a unit each) plus 2^-14 of the value (the 15-bit multiplier of the int64 path);
 * ADD adds its inputs' bounds, scaled by their multipliers of 1, and one output unit. The
 * test computes that bound from the data and checks every output within it. Scales keep
 * every value far from the int16 limits, so nothing saturates. */
#define G_H 6
#define G_C 2
#define G_K 4
#define G_O 3
static const float G_SX = 1.0f / 4096, G_SC = 1.0f / 512, G_SD = 1.0f / 512, G_SA = 1.0f / 512,
                   G_SY = 1.0f / 256;
static float g_wc_scale[G_K] = {0.01f, 0.02f, 0.015f, 0.005f};
static float g_wd_scale[G_K] = {0.005f, 0.0025f, 0.0075f, 0.00625f};
static float g_wf_scale[G_O] = {0.004f, 0.002f, 0.003f};
static int8_t g_wc[G_K * 9 * G_C], g_wd[9 * G_K], g_wf[G_O * G_H * G_H * G_K];
static int64_t g_bc[G_K], g_bd[G_K], g_bf[G_O];

static void g_init(void)
{
    uint32_t st = 2024;
    for (size_t i = 0; i < sizeof g_wc; i++)
        g_wc[i] = (int8_t)next_int(&st, -100, 100);
    for (size_t i = 0; i < sizeof g_wd; i++)
        g_wd[i] = (int8_t)next_int(&st, -100, 100);
    for (size_t i = 0; i < sizeof g_wf; i++)
        g_wf[i] = (int8_t)next_int(&st, -100, 100);
    for (int i = 0; i < G_K; i++) {
        g_bc[i] = next_int(&st, -20000, 20000);
        g_bd[i] = next_int(&st, -20000, 20000);
    }
    for (int i = 0; i < G_O; i++)
        g_bf[i] = next_int(&st, -200000, 200000);
}

static void *g_model(size_t *size)
{
    g_init();
    mp_tfw *w = mp_tfw_create();
    const int32_t dx[4] = {1, G_H, G_H, G_C}, dk[4] = {1, G_H, G_H, G_K};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, dx, 0, NULL);
    int q = mp_tfw_tensor(w, "q", MP_DT_INT16, 4, dx, 0, NULL);
    mp_tfw_tensor_quant(w, q, 1, &G_SX, NULL, 0);
    int wc = mp_tfw_tensor(w, "wc", MP_DT_INT8, 4, (int32_t[]){G_K, 3, 3, G_C},
                           mp_tfw_buffer(w, g_wc, sizeof g_wc), NULL);
    mp_tfw_tensor_quant(w, wc, G_K, g_wc_scale, NULL, 0);
    int bc = mp_tfw_tensor(w, "bc", MP_DT_INT64, 1, (int32_t[]){G_K},
                           mp_tfw_buffer(w, g_bc, sizeof g_bc), NULL);
    int c = mp_tfw_tensor(w, "c", MP_DT_INT16, 4, dk, 0, NULL);
    mp_tfw_tensor_quant(w, c, 1, &G_SC, NULL, 0);
    int wd = mp_tfw_tensor(w, "wd", MP_DT_INT8, 4, (int32_t[]){1, 3, 3, G_K},
                           mp_tfw_buffer(w, g_wd, sizeof g_wd), NULL);
    mp_tfw_tensor_quant(w, wd, G_K, g_wd_scale, NULL, 3);
    int bd = mp_tfw_tensor(w, "bd", MP_DT_INT64, 1, (int32_t[]){G_K},
                           mp_tfw_buffer(w, g_bd, sizeof g_bd), NULL);
    int d = mp_tfw_tensor(w, "d", MP_DT_INT16, 4, dk, 0, NULL);
    mp_tfw_tensor_quant(w, d, 1, &G_SD, NULL, 0);
    int a = mp_tfw_tensor(w, "a", MP_DT_INT16, 4, dk, 0, NULL);
    mp_tfw_tensor_quant(w, a, 1, &G_SA, NULL, 0);
    int wf = mp_tfw_tensor(w, "wf", MP_DT_INT8, 2, (int32_t[]){G_O, G_H * G_H * G_K},
                           mp_tfw_buffer(w, g_wf, sizeof g_wf), NULL);
    mp_tfw_tensor_quant(w, wf, G_O, g_wf_scale, NULL, 0);
    int bf = mp_tfw_tensor(w, "bf", MP_DT_INT64, 1, (int32_t[]){G_O},
                           mp_tfw_buffer(w, g_bf, sizeof g_bf), NULL);
    int yq = mp_tfw_tensor(w, "yq", MP_DT_INT16, 2, (int32_t[]){1, G_O}, 0, NULL);
    mp_tfw_tensor_quant(w, yq, 1, &G_SY, NULL, 0);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, (int32_t[]){1, G_O}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_QUANTIZE, 1, &x, 1, &q, &o);
    o.padding = MP_PAD_SAME;
    o.stride_w = o.stride_h = 1;
    mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){q, wc, bc}, 1, &c, &o);
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){c, wd, bd}, 1, &d, &o);
    o = mp_tfw_options_default();
    o.int16_general_scale = true; /* as the 16x8 converter writes ADD */
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){c, d}, 1, &a, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){a, wf, bf}, 1, &yq, &o);
    mp_tfw_op(w, MP_OP_DEQUANTIZE, 1, &yq, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

static void g_input(float *x)
{
    uint32_t st = 77;
    for (int i = 0; i < G_H * G_H * G_C; i++)
        x[i] = (float)next_int(&st, -4000, 4000) / 1000.0f;
}

static void run_g_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    size_t size;
    void *bytes = g_model(&size);
    float x[G_H * G_H * G_C];
    g_input(x);
    kh_run_single_input(mode, bytes, size, "16x8", x, sizeof x, out, sizes);
}

/* The float graph: a SAME 3x3 convolution (depthwise when dw) over [G_H, G_H] with channels
 * cin -> G_K, and its error bound: err_out = l1 * err_in + unit + |value| * 2^-14. */
static void f_conv(const float *in, int cin, bool dw, const int8_t *w, const float *ws,
                   const int64_t *bq, float in_scale, float *out, double err_in, double unit,
                   double *err_out)
{
    *err_out = 0;
    for (int o = 0; o < G_K; o++) {
        double l1 = 0;
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
                for (int i = 0; i < (dw ? 1 : cin); i++)
                    l1 += fabs((double)(dw ? w[(ky * 3 + kx) * G_K + o]
                                           : w[((o * 3 + ky) * 3 + kx) * cin + i])) *
                          (double)ws[o];
        for (int oy = 0; oy < G_H; oy++)
            for (int ox = 0; ox < G_H; ox++) {
                double acc = (double)bq[o] * (double)in_scale * (double)ws[o];
                for (int ky = 0; ky < 3; ky++)
                    for (int kx = 0; kx < 3; kx++) {
                        int iy = oy - 1 + ky, ix = ox - 1 + kx;
                        if (iy < 0 || iy >= G_H || ix < 0 || ix >= G_H)
                            continue;
                        for (int i = 0; i < (dw ? 1 : cin); i++) {
                            int ch = dw ? o : i;
                            double wv = (dw ? w[(ky * 3 + kx) * G_K + o]
                                            : w[((o * 3 + ky) * 3 + kx) * cin + i]) *
                                        (double)ws[o];
                            acc += wv * in[(iy * G_H + ix) * cin + ch];
                        }
                    }
                out[(oy * G_H + ox) * G_K + o] = (float)acc;
                double e = l1 * err_in + unit + fabs(acc) * 0x1p-14;
                *err_out = fmax(*err_out, e);
            }
    }
}

static void test_graph_16x8(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_g_model, 1);

    void *out[1];
    size_t sizes[1];
    run_g_model(MP_MEMORY_STATIC, out, sizes);
    assert_int_equal(sizes[0], G_O * sizeof(float));
    const float *got = out[0];

    float x[G_H * G_H * G_C], c[G_H * G_H * G_K], d[G_H * G_H * G_K], a[G_H * G_H * G_K];
    g_input(x);
    double ec, ed;
    f_conv(x, G_C, false, g_wc, g_wc_scale, g_bc, G_SX, c, G_SX / 2, G_SC, &ec);
    f_conv(c, G_K, true, g_wd, g_wd_scale, g_bd, G_SC, d, ec, G_SD, &ed);
    double amax = 0;
    for (int i = 0; i < G_H * G_H * G_K; i++) {
        a[i] = c[i] + d[i];
        amax = fmax(amax, fabs(a[i]));
        /* far from saturation: every stage stays below 3/4 of its int16 range */
        assert_true(fabs(c[i]) < 24000 * G_SC && fabs(d[i]) < 24000 * G_SD &&
                    fabs(a[i]) < 24000 * G_SA);
    }
    double ea = ec + ed + G_SA;
    for (int o = 0; o < G_O; o++) {
        double acc = (double)g_bf[o] * (double)G_SA * (double)g_wf_scale[o], l1 = 0;
        for (int i = 0; i < G_H * G_H * G_K; i++) {
            double wv = g_wf[o * G_H * G_H * G_K + i] * (double)g_wf_scale[o];
            acc += wv * a[i];
            l1 += fabs(wv);
        }
        double bound = l1 * ea + G_SY + fabs(acc) * 0x1p-14;
        assert_true(fabs(acc) < 24000 * G_SY);
        if (!(fabs(got[o] - acc) <= bound))
            fail_msg("output %d: got %g, float graph %g, bound %g", o, (double)got[o], acc, bound);
        /* the bound is meaningful: below one (the outputs reach tens) */
        assert_true(bound < 1.0);
    }
    (void)amax;
    free(out[0]);
}

/* ---- a second graph: activations and pooling ---------------------------------------------------
 *
 * x f32 [1,4,4,2] in [-2, 2] -> QUANTIZE (2^-12) -> MAX_POOL_2D and AVERAGE_POOL_2D 2x2 / 2 ->
 * MUL (2^-10) and SUB (all 2^-12: the power-of-two path) of the two -> TANH of the product
 * (a 2^-10 input: the multiplier path), LOGISTIC of the difference (2^-12: times 3) ->
 * CONCATENATION along channels -> RESHAPE [4,4] -> SOFTMAX (1/32768) -> DEQUANTIZE.
 * The float graph on the quantized input: pooling is exact but for the average's rounding
 * (2^-13), MUL's and SUB's results are within a unit of their scales plus what they receive
 * (products of values below 2: twice the inputs' errors), TANH and LOGISTIC add at most
 * 4 / 32768 (test_sigmoid_all_inputs) to their slope (at most 1) times the error received;
 * SOFTMAX's output moves by at most its largest input error (the sensitivity of softmax
 * to a shift of one input is below 1/4 per unit, and all shift at once at most by that)
 * plus 8 / 32768 (test_softmax). That chain stays below 0.01, the bound checked. */
static void *act_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    static const float s12 = 0x1p-12f, s10 = 0x1p-10f, s15 = 0x1p-15f;
    static const int32_t shape[2] = {4, 4};
    const int32_t dq[4] = {1, 4, 4, 2}, dp[4] = {1, 2, 2, 2}, dc[4] = {1, 2, 2, 4};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, dq, 0, NULL);
    int q = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "q", MP_DT_INT16, 4, dq, 0, NULL), 1, &s12,
                                NULL, 0);
    int m = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "m", MP_DT_INT16, 4, dp, 0, NULL), 1, &s12,
                                NULL, 0);
    int a = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "a", MP_DT_INT16, 4, dp, 0, NULL), 1, &s12,
                                NULL, 0);
    int p = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "p", MP_DT_INT16, 4, dp, 0, NULL), 1, &s10,
                                NULL, 0);
    int d = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "d", MP_DT_INT16, 4, dp, 0, NULL), 1, &s12,
                                NULL, 0);
    int l = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "l", MP_DT_INT16, 4, dp, 0, NULL), 1, &s15,
                                NULL, 0);
    int t = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "t", MP_DT_INT16, 4, dp, 0, NULL), 1, &s15,
                                NULL, 0);
    int c = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "c", MP_DT_INT16, 4, dc, 0, NULL), 1, &s15,
                                NULL, 0);
    int sh = mp_tfw_tensor(w, "shape", MP_DT_INT32, 1, (int32_t[]){2},
                           mp_tfw_buffer(w, shape, sizeof shape), NULL);
    int r = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "r", MP_DT_INT16, 2, shape, 0, NULL), 1, &s15,
                                NULL, 0);
    int sm = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "s", MP_DT_INT16, 2, shape, 0, NULL), 1,
                                 &s15, NULL, 0);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, shape, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_QUANTIZE, 1, &x, 1, &q, &o);
    o.padding = MP_PAD_VALID;
    o.filter_h = o.filter_w = o.stride_h = o.stride_w = 2;
    mp_tfw_op(w, MP_OP_MAX_POOL_2D, 1, &q, 1, &m, &o);
    mp_tfw_op(w, MP_OP_AVERAGE_POOL_2D, 1, &q, 1, &a, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_MUL, 2, (int32_t[]){m, a}, 1, &p, &o);
    mp_tfw_op(w, MP_OP_SUB, 2, (int32_t[]){m, a}, 1, &d, &o);
    mp_tfw_op(w, MP_OP_LOGISTIC, 1, &d, 1, &l, &o);
    mp_tfw_op(w, MP_OP_TANH, 1, &p, 1, &t, &o);
    o.axis = 3;
    mp_tfw_op(w, MP_OP_CONCATENATION, 2, (int32_t[]){l, t}, 1, &c, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){c, sh}, 1, &r, &o);
    o.beta = 1.0f;
    mp_tfw_op(w, MP_OP_SOFTMAX, 1, &r, 1, &sm, &o);
    mp_tfw_op(w, MP_OP_DEQUANTIZE, 1, &sm, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

static void act_input(float *x)
{
    uint32_t st = 123;
    for (int i = 0; i < 32; i++)
        x[i] = (float)next_int(&st, -2000, 2000) / 1000.0f;
}

static void run_act_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    size_t size;
    void *bytes = act_model(&size);
    float x[32];
    act_input(x);
    kh_run_single_input(mode, bytes, size, "16x8 act", x, sizeof x, out, sizes);
}

static void test_graph_activations(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_act_model, 1);
    void *out[1];
    size_t sizes[1];
    run_act_model(MP_MEMORY_STATIC, out, sizes);
    assert_int_equal(sizes[0], 16 * sizeof(float));
    const float *got = out[0];
    float x[32];
    act_input(x);
    double q[32], c[16];
    for (int i = 0; i < 32; i++)
        q[i] = round((double)x[i] * 4096.0) / 4096.0;
    for (int oy = 0; oy < 2; oy++)
        for (int ox = 0; ox < 2; ox++)
            for (int ch = 0; ch < 2; ch++) {
                double mx = -1e9, sum = 0;
                for (int ky = 0; ky < 2; ky++)
                    for (int kx = 0; kx < 2; kx++) {
                        double v = q[((oy * 2 + ky) * 4 + ox * 2 + kx) * 2 + ch];
                        mx = fmax(mx, v);
                        sum += v;
                    }
                double av = sum / 4, pos = (oy * 2 + ox) * 4;
                c[(int)pos + ch] = 1.0 / (1.0 + exp(-(mx - av)));
                c[(int)pos + 2 + ch] = tanh(mx * av);
            }
    for (int r = 0; r < 4; r++) {
        double mx = -1e9, sum = 0, total = 0;
        for (int j = 0; j < 4; j++)
            mx = fmax(mx, c[r * 4 + j]);
        for (int j = 0; j < 4; j++)
            sum += exp(c[r * 4 + j] - mx);
        for (int j = 0; j < 4; j++) {
            double want = exp(c[r * 4 + j] - mx) / sum;
            if (!(fabs(got[r * 4 + j] - want) < 0.01))
                fail_msg("y[%d][%d] = %g, float graph %g", r, j, (double)got[r * 4 + j], want);
            total += got[r * 4 + j];
        }
        assert_true(fabs(total - 1.0) < 0.002); /* four values of at most 8 units off each */
    }
    free(out[0]);
}

/* ---- a third graph: TRANSPOSE_CONV, BATCH_MATMUL, REDUCE_PROD, SUM ----------------------------
 *
 * x f32 [1,2,2,2] -> QUANTIZE (2^-10) -> TRANSPOSE_CONV (output_shape [1,4,4,3], per-channel
 * int8 weights [3,2,2,2], int64 bias, stride 2 VALID; 2^-9) -> BATCH_MATMUL with a constant
 * int16 rhs [3,2] (2^-12; output 2^-8) -> SUM over {1,2} (2^-5) and REDUCE_PROD over {3}
 * (2^-8) -> DEQUANTIZE, two outputs. Run in both memory modes (equal outputs), and checked
 * against the float graph on the quantized input: the sums (about 1 and 4) within 0.05, half
 * a unit of their 2^-5 scale plus 16 products' roundings of 2^-9 each at most; the products
 * (up to 0.8) within 0.01, a unit of 2^-8 and the step rescales' roundings of operands of at
 * most 1. */
static const float T_SX = 0x1p-10f, T_ST = 0x1p-9f, T_SR = 0x1p-12f, T_SM = 0x1p-8f,
                   T_SS = 0x1p-5f, T_SP = 0x1p-8f;
static float t_ws[3] = {0.01f, 0.02f, 0.015f};
static const int8_t t_w[24] = {50, -20, 30, 10, -40, 60, 5, -15, 25, 35, -45, 55,
                               -60, 70, -10, 20, 30, -30, 40, -50, 15, 25, -35, 45};
static const int64_t t_b[3] = {1000, -2000, 500};
static const int16_t t_rhs[6] = {2048, -1024, 512, 4096, -3072, 1536};
static const int32_t t_os[4] = {1, 4, 4, 3}, t_ax12[2] = {1, 2}, t_ax3[1] = {3};

static void *t_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    const int32_t dx[4] = {1, 2, 2, 2}, dt[4] = {1, 4, 4, 3}, dm[4] = {1, 4, 4, 2};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, dx, 0, NULL);
    int q = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "q", MP_DT_INT16, 4, dx, 0, NULL), 1,
                                &T_SX, NULL, 0);
    int os = mp_tfw_tensor(w, "os", MP_DT_INT32, 1, (int32_t[]){4},
                           mp_tfw_buffer(w, t_os, sizeof t_os), NULL);
    int wt = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "w", MP_DT_INT8, 4, (int32_t[]){3, 2, 2, 2},
                                                  mp_tfw_buffer(w, t_w, sizeof t_w), NULL),
                                 3, t_ws, NULL, 0);
    int b = mp_tfw_tensor(w, "b", MP_DT_INT64, 1, (int32_t[]){3},
                          mp_tfw_buffer(w, t_b, sizeof t_b), NULL);
    int t = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "t", MP_DT_INT16, 4, dt, 0, NULL), 1, &T_ST,
                                NULL, 0);
    int r = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "r", MP_DT_INT16, 2, (int32_t[]){3, 2},
                                                 mp_tfw_buffer(w, t_rhs, sizeof t_rhs), NULL),
                                1, &T_SR, NULL, 0);
    int m = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "m", MP_DT_INT16, 4, dm, 0, NULL), 1, &T_SM,
                                NULL, 0);
    int a12 = mp_tfw_tensor(w, "a12", MP_DT_INT32, 1, (int32_t[]){2},
                            mp_tfw_buffer(w, t_ax12, sizeof t_ax12), NULL);
    int a3 = mp_tfw_tensor(w, "a3", MP_DT_INT32, 1, (int32_t[]){1},
                           mp_tfw_buffer(w, t_ax3, sizeof t_ax3), NULL);
    int s = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "s", MP_DT_INT16, 2, (int32_t[]){1, 2}, 0,
                                                 NULL), 1, &T_SS, NULL, 0);
    int p = mp_tfw_tensor_quant(w, mp_tfw_tensor(w, "p", MP_DT_INT16, 3, (int32_t[]){1, 4, 4}, 0,
                                                 NULL), 1, &T_SP, NULL, 0);
    int ys = mp_tfw_tensor(w, "ys", MP_DT_FLOAT32, 2, (int32_t[]){1, 2}, 0, NULL);
    int yp = mp_tfw_tensor(w, "yp", MP_DT_FLOAT32, 3, (int32_t[]){1, 4, 4}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_QUANTIZE, 1, &x, 1, &q, &o);
    o.padding = MP_PAD_VALID;
    o.stride_w = o.stride_h = 2;
    mp_tfw_op(w, MP_OP_TRANSPOSE_CONV, 4, (int32_t[]){os, wt, q, b}, 1, &t, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_BATCH_MATMUL, 2, (int32_t[]){t, r}, 1, &m, &o);
    mp_tfw_op(w, MP_OP_SUM, 2, (int32_t[]){m, a12}, 1, &s, &o);
    mp_tfw_op(w, MP_OP_REDUCE_PROD, 2, (int32_t[]){m, a3}, 1, &p, &o);
    mp_tfw_op(w, MP_OP_DEQUANTIZE, 1, &s, 1, &ys, &o);
    mp_tfw_op(w, MP_OP_DEQUANTIZE, 1, &p, 1, &yp, &o);
    mp_tfw_io(w, 1, &x, 2, (int32_t[]){ys, yp});
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

static const float t_x[8] = {0.5f, -0.25f, 0.75f, 1.0f, -0.5f, 0.125f, -1.0f, 0.3f};

static void run_t_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    size_t size;
    void *bytes = t_model(&size);
    kh_run_single_input_n(mode, bytes, size, "16x8 tconv", t_x, sizeof t_x, 2, out, sizes);
}

static void test_graph_tconv_matmul(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_t_model, 2);
    void *out[2];
    size_t sizes[2];
    run_t_model(MP_MEMORY_STATIC, out, sizes);
    assert_int_equal(sizes[0], 2 * sizeof(float));
    assert_int_equal(sizes[1], 16 * sizeof(float));
    /* the float graph on the quantized input */
    double xq[8], tv[16][3], mv[16][2];
    for (int i = 0; i < 8; i++)
        xq[i] = round((double)t_x[i] / T_SX) * T_SX;
    for (int oy = 0; oy < 4; oy++)
        for (int ox = 0; ox < 4; ox++)
            for (int o = 0; o < 3; o++) {
                const int iy = oy / 2, ix = ox / 2, fy = oy % 2, fx = ox % 2;
                double acc = (double)t_b[o] * T_SX * t_ws[o];
                for (int c = 0; c < 2; c++)
                    acc += xq[(iy * 2 + ix) * 2 + c] * t_w[((o * 2 + fy) * 2 + fx) * 2 + c] *
                           (double)t_ws[o];
                tv[oy * 4 + ox][o] = acc;
            }
    double sum[2] = {0, 0};
    for (int p = 0; p < 16; p++)
        for (int j = 0; j < 2; j++) {
            mv[p][j] = 0;
            for (int k = 0; k < 3; k++)
                mv[p][j] += tv[p][k] * t_rhs[k * 2 + j] * T_SR;
            sum[j] += mv[p][j];
        }
    const float *ys = out[0], *yp = out[1];
    for (int j = 0; j < 2; j++)
        if (!(fabs(ys[j] - sum[j]) < 0.05))
            fail_msg("sum %d: got %g, float graph %g", j, (double)ys[j], sum[j]);
    for (int p = 0; p < 16; p++) {
        const double want = mv[p][0] * mv[p][1];
        if (!(fabs(yp[p] - want) < 0.01))
            fail_msg("product %d: got %g, float graph %g", p, (double)yp[p], want);
    }
    free(out[0]);
    free(out[1]);
}

/* The reader keeps ADD's pot_scale_int16: false read back as int16_general_scale, the default
 * (absent) as the power-of-two path. */
static void test_pot_option_roundtrip(void **state)
{
    (void)state;
    for (int general = 0; general < 2; general++) {
        mp_tfw *w = mp_tfw_create();
        int a = mp_tfw_tensor(w, "a", MP_DT_FLOAT32, 1, (int32_t[]){2}, 0, NULL);
        int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){2}, 0, NULL);
        mp_op_options o = mp_tfw_options_default();
        o.int16_general_scale = general;
        mp_tfw_op(w, MP_OP_SUB, 2, (int32_t[]){a, a}, 1, &y, &o);
        mp_tfw_io(w, 1, &a, 1, &y);
        void *bytes = NULL;
        size_t size;
        mp_error err = {0};
        assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
        mp_tfw_free(w);
        mp_model *m = NULL;
        if (mp_model_load_memory(bytes, size, "pot", &m, &err) != MP_OK)
            fail_msg("load: %s", err.msg);
        free(bytes);
        assert_int_equal(m->ops[0].opt.int16_general_scale, general);
        mp_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mbqm64_hand),
        cmocka_unit_test(test_fc_hand),
        cmocka_unit_test(test_conv_reference),
        cmocka_unit_test(test_fc_reference),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_binary_hand),
        cmocka_unit_test(test_binary_reference),
        cmocka_unit_test(test_binary_refusals),
        cmocka_unit_test(test_sigmoid_hand),
        cmocka_unit_test(test_sigmoid_all_inputs),
        cmocka_unit_test(test_sigmoid_refusals),
        cmocka_unit_test(test_relu),
        cmocka_unit_test(test_leaky_relu),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_movement),
        cmocka_unit_test(test_abs),
        cmocka_unit_test(test_exp),
        cmocka_unit_test(test_matmul_hand),
        cmocka_unit_test(test_matmul_reference),
        cmocka_unit_test(test_matmul_refusals),
        cmocka_unit_test(test_tconv_hand),
        cmocka_unit_test(test_tconv_reference),
        cmocka_unit_test(test_tconv_refusals),
        cmocka_unit_test(test_graph_16x8),
        cmocka_unit_test(test_graph_activations),
        cmocka_unit_test(test_graph_tconv_matmul),
        cmocka_unit_test(test_pot_option_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
