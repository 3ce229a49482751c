/* Tests of CONV_2D and DEPTHWISE_CONV_2D on int8 and uint8 tensors (TensorFlow Lite's
 * quantized convolution on XNNPACK's qs8 / qc8 / qu8 operators): hand-computed cases, and a
 * plain integer reference of TensorFlow Lite's kernels (int32 accumulation of
 * (x - x_zp) * (w - w_zp) + bias, requantized by MultiplyByQuantizedMultiplier, + out_zp,
 * clamped) over per-tensor and per-channel filters, uint8 with a filter zero point, SAME and
 * VALID, strides, dilation, depth multipliers, fused activations, omitted bias, batches; and
 * the quantized refusals with their messages. XNNPACK requantizes in float, so every value is
 * within 1 of the reference and nearly all are equal. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "tests/util/kernel_harness.h"

enum { QS8, QC8, QU8 }; /* int8 per-tensor filter, int8 per-channel, uint8 */

typedef struct qconv {
    int32_t op;                  /* MP_OP_CONV_2D or MP_OP_DEPTHWISE_CONV_2D */
    int32_t n, h, w, cin, kh, kw, cout;
    int32_t sh, sw, dh, dw, padding, act;
    bool bias;
    int kind;
    pthreadpool_t pool;
} qconv;

/* The integers of a case, and its quantization (per channel: one filter scale each). */
typedef struct qdata {
    int32_t *x, *f, *bias, *want;
    float in_scale, out_scale, w_scale[64];
    int32_t in_zp, out_zp, w_zp, lo, hi;
} qdata;

/* TensorFlow Lite's reference integer convolution (ConvPerChannel / DepthwiseConvPerChannel,
 * and the uint8 Conv with its filter offset). Filters: CONV_2D [Cout,KH,KW,Cin],
 * DEPTHWISE [1,KH,KW,Cout], output channel ic*M+m. */
static void ref_qconv(const qconv *p, const qdata *d)
{
    bool dw = p->op == MP_OP_DEPTHWISE_CONV_2D;
    int32_t oh = kh_conv_out_size(p->h, p->kh, p->sh, p->dh, p->padding);
    int32_t ow = kh_conv_out_size(p->w, p->kw, p->sw, p->dw, p->padding);
    int32_t pt = kh_conv_pad_before(p->h, p->kh, p->sh, p->dh, p->padding);
    int32_t pl = kh_conv_pad_before(p->w, p->kw, p->sw, p->dw, p->padding);
    int32_t mult = p->cout / p->cin;
    for (int32_t oc = 0; oc < p->cout; oc++) {
        float ws = d->w_scale[p->kind == QC8 ? oc : 0];
        int32_t qm;
        int shift;
        assert_true(mp_quantize_multiplier((double)d->in_scale * ws / d->out_scale, &qm, &shift));
        for (int32_t b = 0; b < p->n; b++)
            for (int32_t oy = 0; oy < oh; oy++)
                for (int32_t ox = 0; ox < ow; ox++) {
                    int32_t acc = p->bias ? d->bias[oc] : 0;
                    for (int32_t ky = 0; ky < p->kh; ky++)
                        for (int32_t kx = 0; kx < p->kw; kx++) {
                            int32_t iy = oy * p->sh + ky * p->dh - pt;
                            int32_t ix = ox * p->sw + kx * p->dw - pl;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                                continue;
                            const int32_t *px = d->x + ((b * p->h + iy) * p->w + ix) * p->cin;
                            for (int32_t ic = dw ? oc / mult : 0; ic < (dw ? oc / mult + 1 : p->cin);
                                 ic++) {
                                int32_t fv = dw ? d->f[(ky * p->kw + kx) * p->cout + oc]
                                                : d->f[((oc * p->kh + ky) * p->kw + kx) * p->cin + ic];
                                acc += (px[ic] - d->in_zp) * (fv - d->w_zp);
                            }
                        }
                    int32_t v = mp_multiply_by_quantized_multiplier(acc, qm, shift) + d->out_zp;
                    v = v < d->lo ? d->lo : (v > d->hi ? d->hi : v);
                    d->want[((b * oh + oy) * ow + ox) * p->cout + oc] = v;
                }
    }
}

/* A deterministic integer in [lo, hi]. */
static int32_t irand(uint32_t *seed, int32_t lo, int32_t hi)
{
    *seed = *seed * 1664525u + 1013904223u;
    return lo + (int32_t)((*seed >> 8) % (uint32_t)(hi - lo + 1));
}

/* Store integers as the tensor's dtype (int8 or uint8). */
static void *to_q8(const int32_t *v, size_t n, bool is_u8, void *dst)
{
    for (size_t i = 0; i < n; i++) {
        if (is_u8)
            ((uint8_t *)dst)[i] = (uint8_t)v[i];
        else
            ((int8_t *)dst)[i] = (int8_t)v[i];
    }
    return dst;
}

/* Compare the kernel's output with the reference: every value within 1, and at least 95 %
 * equal (XNNPACK's float requantization differs from the fixed-point one only near ties).
 * Also checks the case is not degenerate (a tenth of the values or more inside the
 * activation's bounds). */
static void expect_q8(const mp_tensor *y, const qdata *d, size_t n, const char *what)
{
    size_t exact = 0, clamped = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t got = y->dtype == MP_DT_UINT8 ? ((const uint8_t *)y->data)[i]
                                              : ((const int8_t *)y->data)[i];
        int32_t diff = got - d->want[i];
        if (diff < -1 || diff > 1) {
            fprintf(stderr, "%s: at %zu got %d want %d\n", what, i, got, d->want[i]);
            fail();
        }
        exact += diff == 0;
        clamped += d->want[i] == d->lo || d->want[i] == d->hi;
    }
    fprintf(stderr, "%s: %zu values, %zu equal to the reference, %zu at a bound\n", what, n,
            exact, clamped);
    assert_true(exact * 100 >= n * 95);
    assert_true(clamped * 10 <= n * 9);
}

/* Run one case through the kernel and against the reference, then again on new input data. */
static void check_qconv(const qconv *p, const char *what)
{
    bool dw = p->op == MP_OP_DEPTHWISE_CONV_2D, u8 = p->kind == QU8;
    mp_dtype dt = u8 ? MP_DT_UINT8 : MP_DT_INT8;
    int32_t qmin = u8 ? 0 : -128, qmax = u8 ? 255 : 127;
    int32_t in_dims[4] = {p->n, p->h, p->w, p->cin};
    int32_t fdims[4] = {dw ? 1 : p->cout, p->kh, p->kw, dw ? p->cout : p->cin};
    size_t xn = (size_t)p->n * p->h * p->w * p->cin;
    size_t fn = (size_t)fdims[0] * p->kh * p->kw * fdims[3];
    int32_t oh = kh_conv_out_size(p->h, p->kh, p->sh, p->dh, p->padding);
    int32_t ow = kh_conv_out_size(p->w, p->kw, p->sw, p->dw, p->padding);
    size_t yn = (size_t)p->n * oh * ow * p->cout;
    assert_true(p->cout <= 64);

    qdata d = {.x = malloc(xn * sizeof(int32_t)), .f = malloc(fn * sizeof(int32_t)),
               .bias = malloc((size_t)p->cout * sizeof(int32_t)),
               .want = malloc(yn * sizeof(int32_t))};
    uint32_t seed = (uint32_t)(p->cout * 131 + p->h);
    d.in_zp = u8 ? 131 : -7;
    d.w_zp = u8 ? 140 : 0;
    for (size_t i = 0; i < fn; i++)
        d.f[i] = u8 ? irand(&seed, 0, 255) : irand(&seed, -127, 127);
    int32_t scales = p->kind == QC8 ? p->cout : 1;
    for (int32_t c = 0; c < scales; c++)
        d.w_scale[c] = 0.004f * (1.0f + 0.37f * (float)(c % 5));
    /* a typical sum (window terms of ~ +-74 * +-73) ends around +-40 at the output scale
     * 0.075, +-3 in reals (RELU6 and RELU_N1_TO_1 then clamp some, not all) */
    int32_t terms = p->kh * p->kw * (dw ? 1 : p->cin);
    d.out_scale = 0.075f;
    d.in_scale = d.out_scale * 40.0f / (d.w_scale[0] * 5400.0f * sqrtf((float)terms));
    d.out_zp = u8 ? 120 : 5;
    for (int32_t c = 0; c < p->cout; c++)
        d.bias[c] = irand(&seed, -3000, 3000);
    kh_q_act_range(p->act, d.out_scale, d.out_zp, qmin, qmax, &d.lo, &d.hi);

    int64_t in_zp64 = d.in_zp, out_zp64 = d.out_zp, w_zp64[64] = {0};
    w_zp64[0] = d.w_zp;
    void *fdata = to_q8(d.f, fn, u8, malloc(fn));

    kh_case c;
    kh_init(&c, p->op, p->pool);
    c.opt.padding = p->padding;
    c.opt.stride_h = p->sh;
    c.opt.stride_w = p->sw;
    c.opt.dilation_h = p->dh;
    c.opt.dilation_w = p->dw;
    c.opt.activation = p->act;
    mp_tensor *x = kh_input(&c, dt, 4, in_dims, NULL);
    kh_quant(&c, x, 1, &d.in_scale, &in_zp64, 0);
    mp_tensor *f = kh_input(&c, dt, 4, fdims, fdata);
    kh_quant(&c, f, scales, d.w_scale, w_zp64, dw ? 3 : 0);
    if (p->bias)
        kh_input(&c, MP_DT_INT32, 1, &p->cout, d.bias);
    else
        kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, dt);
    kh_quant(&c, y, 1, &d.out_scale, &out_zp64, 0);

    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < xn; i++)
            d.x[i] = irand(&seed, qmin, qmax);
        to_q8(d.x, xn, u8, x->data);
        kh_expect_ok(&c, round == 0 ? kh_run(&c) : kh_rerun(&c, false));
        assert_int_equal(y->dims[0], p->n);
        assert_int_equal(y->dims[1], oh);
        assert_int_equal(y->dims[2], ow);
        assert_int_equal(y->dims[3], p->cout);
        ref_qconv(p, &d);
        expect_q8(y, &d, yn, what);
    }
    kh_free(&c);
    free(fdata);
    free(d.x);
    free(d.f);
    free(d.bias);
    free(d.want);
}

/* ---- computed by hand ------------------------------------------------------------------- */

/* 1x1 CONV_2D of 2 channels into 2, int8 per tensor, 2 pixels.
 * input scale 0.5 zp -1; filter scale 0.25 (zp 0); bias int32 at scale 0.5 * 0.25 = 0.125;
 * output scale 1 zp 3.
 *   pixel (5, -3): real (3, -1); pixel (1, 3): real (1, 2)
 *   filter rows (4, 8): real (1, 2); (-4, 12): real (-1, 3); bias (8, -16): real (1, -2)
 *   pixel 0: 3*1 - 1*2 + 1 = 2 -> 2 + 3 = 5;  3*-1 - 1*3 - 2 = -8 -> -8 + 3 = -5
 *   pixel 1: 1*1 + 2*2 + 1 = 6 -> 9;          1*-1 + 2*3 - 2 = 3 -> 6
 * (in the integers: (5+1)*4 + (-3+1)*8 + 8 = 16, times 0.125 / 1 = 2: whole numbers, no
 * rounding at all). With RELU the -5 becomes the quantized 0, the zero point 3. */
static void test_hand_1x1(void **state)
{
    (void)state;
    static const int8_t filt[4] = {4, 8, -4, 12};
    static const int32_t bias[2] = {8, -16};
    static const float in_s = 0.5f, w_s = 0.25f, out_s = 1.0f;
    static const int64_t in_zp = -1, out_zp = 3;
    for (int relu = 0; relu < 2; relu++) {
        kh_case c;
        kh_init(&c, MP_OP_CONV_2D, NULL);
        c.opt.padding = MP_PAD_VALID;
        c.opt.activation = relu ? MP_ACT_RELU : MP_ACT_NONE;
        mp_tensor *x = kh_input(&c, MP_DT_INT8, 4, (int32_t[]){1, 1, 2, 2}, NULL);
        kh_quant(&c, x, 1, &in_s, &in_zp, 0);
        mp_tensor *f = kh_input(&c, MP_DT_INT8, 4, (int32_t[]){2, 1, 1, 2}, filt);
        kh_quant(&c, f, 1, &w_s, NULL, 0);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, bias);
        mp_tensor *y = kh_output(&c, MP_DT_INT8);
        kh_quant(&c, y, 1, &out_s, &out_zp, 0);
        memcpy(x->data, (const int8_t[]){5, -3, 1, 3}, 4);
        kh_expect_ok(&c, kh_run(&c));
        const int8_t *got = y->data;
        assert_int_equal(got[0], 5);
        assert_int_equal(got[1], relu ? 3 : -5);
        assert_int_equal(got[2], 9);
        assert_int_equal(got[3], 6);
        kh_free(&c);
    }
}

/* DEPTHWISE 1x1, uint8, 1 channel, multiplier 2, filter zero point 128, no bias.
 * input scale 0.5 zp 128; filter scale 0.5 zp 128 (values 130, 122: real 1, -3);
 * output scale 0.25 zp 100. Pixel 134 (real 3): 3 and -9 -> 100 + 12 = 112, 100 - 36 = 64.
 * (integers: (134-128) * (130-128) = 12 and 6 * (122-128) = -36, times 0.5 * 0.5 / 0.25 = 1.) */
static void test_hand_depthwise_u8(void **state)
{
    (void)state;
    static const uint8_t filt[2] = {130, 122};
    static const float in_s = 0.5f, w_s = 0.5f, out_s = 0.25f;
    static const int64_t in_zp = 128, w_zp = 128, out_zp = 100;
    kh_case c;
    kh_init(&c, MP_OP_DEPTHWISE_CONV_2D, NULL);
    c.opt.padding = MP_PAD_SAME;
    mp_tensor *x = kh_input(&c, MP_DT_UINT8, 4, (int32_t[]){1, 1, 1, 1}, NULL);
    kh_quant(&c, x, 1, &in_s, &in_zp, 0);
    mp_tensor *f = kh_input(&c, MP_DT_UINT8, 4, (int32_t[]){1, 1, 1, 2}, filt);
    kh_quant(&c, f, 1, &w_s, &w_zp, 0);
    kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, y, 1, &out_s, &out_zp, 0);
    ((uint8_t *)x->data)[0] = 134;
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((uint8_t *)y->data)[0], 112);
    assert_int_equal(((uint8_t *)y->data)[1], 64);
    kh_free(&c);
}

/* ---- against the reference -------------------------------------------------------------- */

static void test_conv_reference(void **state)
{
    (void)state;
    static const qconv cases[] = {
        /* op, n,h,w,cin, kh,kw,cout, sh,sw,dh,dw, padding, act, bias, kind */
        {MP_OP_CONV_2D, 1, 6, 5, 3, 3, 3, 4, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, QS8, NULL},
        {MP_OP_CONV_2D, 2, 7, 7, 3, 3, 3, 5, 2, 2, 1, 1, MP_PAD_VALID, MP_ACT_RELU6, false, QC8, NULL},
        {MP_OP_CONV_2D, 2, 8, 6, 4, 3, 2, 6, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU, true, QC8, NULL},
        {MP_OP_CONV_2D, 1, 9, 9, 2, 3, 3, 3, 1, 1, 2, 2, MP_PAD_SAME, MP_ACT_RELU_N1_TO_1, true, QC8, NULL},
        /* stride beyond the kernel with SAME: explicit padding */
        {MP_OP_CONV_2D, 1, 9, 8, 3, 2, 2, 4, 3, 3, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, QS8, NULL},
        /* 1x1 */
        {MP_OP_CONV_2D, 2, 5, 5, 16, 1, 1, 24, 1, 1, 1, 1, MP_PAD_VALID, MP_ACT_NONE, true, QC8, NULL},
        /* uint8 with a filter zero point */
        {MP_OP_CONV_2D, 2, 6, 6, 3, 3, 3, 4, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true, QU8, NULL},
        {MP_OP_CONV_2D, 1, 7, 8, 3, 3, 3, 5, 2, 2, 1, 1, MP_PAD_VALID, MP_ACT_NONE, false, QU8, NULL},
    };
    char what[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(what, sizeof what, "conv case %zu", i);
        check_qconv(&cases[i], what);
    }
}

static void test_depthwise_reference(void **state)
{
    (void)state;
    static const qconv cases[] = {
        /* multiplier 2 */
        {MP_OP_DEPTHWISE_CONV_2D, 1, 7, 7, 3, 3, 3, 6, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, QC8, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 2, 8, 7, 4, 3, 3, 8, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, false, QC8, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 8, 8, 5, 3, 3, 5, 2, 2, 1, 1, MP_PAD_VALID, MP_ACT_RELU, true, QS8, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 9, 9, 2, 3, 3, 4, 1, 1, 2, 2, MP_PAD_VALID, MP_ACT_NONE, true, QC8, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 2, 6, 6, 3, 3, 3, 6, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true, QU8, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 7, 9, 4, 3, 3, 4, 2, 2, 1, 1, MP_PAD_VALID, MP_ACT_NONE, false, QU8, NULL},
    };
    char what[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(what, sizeof what, "depthwise case %zu", i);
        check_qconv(&cases[i], what);
    }
}

/* MobileNet-like quantized layers on a 2-thread pool. */
static void test_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    qconv a = {MP_OP_CONV_2D, 1, 15, 15, 8, 3, 3, 16, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true,
               QC8, pool};
    qconv b = {MP_OP_DEPTHWISE_CONV_2D, 2, 12, 12, 32, 3, 3, 32, 1, 1, 1, 1, MP_PAD_SAME,
               MP_ACT_RELU6, true, QC8, pool};
    qconv u = {MP_OP_CONV_2D, 2, 10, 10, 16, 1, 1, 24, 1, 1, 1, 1, MP_PAD_VALID, MP_ACT_NONE,
               true, QU8, pool};
    check_qconv(&a, "threads conv");
    check_qconv(&b, "threads depthwise");
    check_qconv(&u, "threads uint8");
    pthreadpool_destroy(pool);
}

/* ---- refusals --------------------------------------------------------------------------- */

static const float k_scales[4] = {0.5f, 0.25f, 0.125f, 0.0625f};
static const int64_t k_zeros[4] = {0, 0, 0, 0};
static const int8_t k_filt[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* A 1x1 int8 CONV_2D from 2 channels to 2 (filter [2,1,1,2] along dimension `wdim` with
 * `wscales` scales), input and output dtypes given; the caller may change it before running. */
static void q_case(kh_case *c, mp_dtype in_dt, mp_dtype out_dt, int32_t wscales, int32_t wdim)
{
    kh_init(c, MP_OP_CONV_2D, NULL);
    c->opt.padding = MP_PAD_VALID;
    mp_tensor *x = kh_input(c, in_dt, 4, (int32_t[]){1, 2, 2, 2}, NULL);
    kh_quant(c, x, 1, k_scales, k_zeros, 0);
    mp_tensor *f = kh_input(c, MP_DT_INT8, 4, (int32_t[]){2, 1, 1, 2}, k_filt);
    kh_quant(c, f, wscales, k_scales, k_zeros, wdim);
    kh_omit_input(c);
    mp_tensor *y = kh_output(c, out_dt);
    kh_quant(c, y, 1, k_scales, k_zeros, 0);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;

    /* the reference path works: the cases below differ from it in one thing each */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 2, 0);
    kh_expect_ok(&c, kh_run(&c));
    kh_free(&c);

    /* per-channel quantization on the activation */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    kh_quant(&c, &c.tensors[0], 2, k_scales, k_zeros, 3);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i8 tensor 't0' has one scale per channel");
    kh_free(&c);

    /* an activation without quantization */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    kh_quant(&c, &c.tensors[2], 0, NULL, NULL, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t2' has no quantization parameters");
    kh_free(&c);

    /* int32 activations (int16 ones run as 16x8: test_kernels_int16) */
    q_case(&c, MP_DT_INT32, MP_DT_INT32, 1, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't0' is i32; expected f32, i8, u8 or i16");
    kh_free(&c);

    /* int8 in, uint8 out */
    q_case(&c, MP_DT_INT8, MP_DT_UINT8, 1, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't2' is u8; with i8 input 't0' it must be i8");
    kh_free(&c);

    /* uint8 in and out with an int8 filter */
    q_case(&c, MP_DT_UINT8, MP_DT_UINT8, 1, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "filter 't1' is i8; with u8 input 't0' it must be u8");
    kh_free(&c);

    /* int8 output from a float32 input */
    q_case(&c, MP_DT_FLOAT32, MP_DT_INT8, 1, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't2' is i8; an f32 input gives an f32 output");
    kh_free(&c);

    /* fused TANH, SIGN_BIT */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    c.opt.activation = MP_ACT_TANH;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "fused activation TANH has no integer range on i8 output 't2'");
    kh_free(&c);
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    c.opt.activation = MP_ACT_SIGN_BIT;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "SIGN_BIT");
    kh_free(&c);

    /* per-channel filter scales along the input channels (dimension 3 of a CONV_2D filter) */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 2, 3);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "i8 filter 't1' has 2 scales along dimension 3; expected one, or 2 (one per "
                    "output channel) along dimension 0");
    kh_free(&c);

    /* a float32 bias with int8 activations */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    c.node.n_in = 2;
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, k_scales);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "bias 't3' is f32; with i8 input 't0' it must be i32");
    kh_free(&c);

    /* an asymmetric int8 filter */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    static const int64_t zp5 = 5;
    kh_quant(&c, &c.tensors[1], 1, k_scales, &zp5, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has zero point 5; i8 filters are symmetric");
    kh_free(&c);

    /* a filter computed at run time */
    kh_init(&c, MP_OP_CONV_2D, NULL);
    mp_tensor *t = kh_input(&c, MP_DT_INT8, 4, (int32_t[]){1, 2, 2, 2}, NULL);
    kh_quant(&c, t, 1, k_scales, k_zeros, 0);
    t = kh_input(&c, MP_DT_INT8, 4, (int32_t[]){2, 1, 1, 2}, NULL);
    kh_quant(&c, t, 1, k_scales, k_zeros, 0);
    kh_omit_input(&c);
    t = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, t, 1, k_scales, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "filter 't1' is computed at run time");
    kh_free(&c);

    /* XNNPACK takes input scale * filter scale / output scale below 256 only: 0.5 * 0.5 /
     * (1/2048) = 512 is refused, naming the operator and the ratio */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    static const float tiny = 1.0f / 2048.0f;
    kh_quant(&c, &c.tensors[2], 1, &tiny, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "operator #0 CONV_2D: XNNPACK i8 convolution create "
                                            "(input scale * filter scale / output scale 512..512");
    kh_free(&c);

    /* below 2^-32 (0.5 * 0.5 / 1e10), where this XNNPACK aborts on an assertion: refused first */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    static const float huge = 1e10f;
    kh_quant(&c, &c.tensors[2], 1, &huge, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output scale is 2.5e-11, below the 2^-32 XNNPACK");
    kh_free(&c);

    /* RELU6 on an output of scale 100: 0..round(0.06) is the one value 0, which TensorFlow
     * Lite allows and XNNPACK does not */
    q_case(&c, MP_DT_INT8, MP_DT_INT8, 1, 0);
    c.opt.activation = MP_ACT_RELU6;
    static const float hundred = 100.0f;
    kh_quant(&c, &c.tensors[2], 1, &hundred, k_zeros, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output range 0..0)");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_1x1),
        cmocka_unit_test(test_hand_depthwise_u8),
        cmocka_unit_test(test_conv_reference),
        cmocka_unit_test(test_depthwise_reference),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
