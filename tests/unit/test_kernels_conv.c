/* Tests of the CONV_2D and DEPTHWISE_CONV_2D kernels against hand-computed values and a
 * naive reference convolution (TFLite semantics: SAME/VALID padding, strides, dilations,
 * groups, depth multipliers, bias, every fused activation, hybrid int8/uint8 filters). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "tests/util/kernel_harness.h"
/* ---- reference ------------------------------------------------------------------------ */

typedef struct conv_params {
    int32_t op;                /* MP_OP_CONV_2D or MP_OP_DEPTHWISE_CONV_2D */
    int32_t n, h, w, cin;
    int32_t kh, kw, cout;
    int32_t groups;            /* CONV_2D: input channels / filter channels (0 = 1) */
    int32_t sh, sw, dh, dw;
    int32_t padding, act;
    bool bias;
    int quant;                 /* 0 float32, 1 int8 per-channel, 2 uint8 per-tensor, 3 f16 */
    int32_t h2, w2;            /* when set: change the input to this size and run again */
    pthreadpool_t pool;
} conv_params;

/* Naive convolution, accumulated in double. Filter layout: CONV_2D [Cout,KH,KW,Cin/groups],
 * DEPTHWISE [1,KH,KW,Cout]. */
static void ref_conv(const conv_params *p, int32_t h, int32_t w, const float *x, const float *f,
                     const float *bias, float *y)
{
    int32_t oh = kh_conv_out_size(h, p->kh, p->sh, p->dh, p->padding);
    int32_t ow = kh_conv_out_size(w, p->kw, p->sw, p->dw, p->padding);
    int32_t pt = kh_conv_pad_before(h, p->kh, p->sh, p->dh, p->padding);
    int32_t pl = kh_conv_pad_before(w, p->kw, p->sw, p->dw, p->padding);
    bool dw = p->op == MP_OP_DEPTHWISE_CONV_2D;
    int32_t groups = dw ? p->cin : (p->groups ? p->groups : 1);
    int32_t gic = dw ? 1 : p->cin / groups, goc = p->cout / groups;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < oh; oy++)
            for (int32_t ox = 0; ox < ow; ox++)
                for (int32_t oc = 0; oc < p->cout; oc++) {
                    double acc = bias ? bias[oc] : 0.0;
                    int32_t g = oc / goc;
                    for (int32_t ky = 0; ky < p->kh; ky++)
                        for (int32_t kx = 0; kx < p->kw; kx++) {
                            int32_t iy = oy * p->sh + ky * p->dh - pt;
                            int32_t ix = ox * p->sw + kx * p->dw - pl;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                continue;
                            for (int32_t ic = 0; ic < gic; ic++) {
                                float xv = x[((b * h + iy) * w + ix) * p->cin + g * gic + ic];
                                float fv = dw ? f[(ky * p->kw + kx) * p->cout + oc]
                                              : f[((oc * p->kh + ky) * p->kw + kx) * gic + ic];
                                acc += (double)xv * fv;
                            }
                        }
                    y[((b * oh + oy) * ow + ox) * p->cout + oc] = (float)kh_ref_act(acc, p->act);
                }
}

static uint16_t to_half(float f)
{
    /* exact for the small multiples of 1/64 used here */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000;
    int32_t exp = (int32_t)((u >> 23) & 0xff) - 127 + 15;
    if ((u & 0x7fffffff) == 0)
        return (uint16_t)sign;
    return (uint16_t)(sign | ((uint32_t)exp << 10) | ((u >> 13) & 0x3ff));
}

/* Run one case through the kernel and compare with the reference (also after new input
 * data, and after a change of input size when p->h2 is set). */
static void check_conv(const conv_params *p)
{
    bool dw = p->op == MP_OP_DEPTHWISE_CONV_2D;
    int32_t groups = p->groups ? p->groups : 1;
    int32_t fdims[4] = {p->cout, p->kh, p->kw, p->cin / groups};
    if (dw) {
        fdims[0] = 1;
        fdims[3] = p->cout;
    }
    size_t fn = (size_t)fdims[0] * fdims[1] * fdims[2] * fdims[3];
    float *fref = malloc(fn * sizeof(float));
    void *fdata = malloc(fn * sizeof(float));
    float *bias = malloc((size_t)p->cout * sizeof(float));
    float scales[64];
    int64_t zps[64];
    int32_t qdim = dw ? 3 : 0;
    kh_fill(bias, (size_t)p->cout, 99, 1.0f);
    if (p->quant == 0) {
        kh_fill(fref, fn, 7, 1.0f);
        memcpy(fdata, fref, fn * sizeof(float));
    } else if (p->quant == 1) {
        /* int8 symmetric, one scale per output channel */
        assert_true(p->cout <= 64);
        for (int32_t c = 0; c < p->cout; c++)
            scales[c] = 0.01f * (float)(c + 1);
        uint32_t seed = 5;
        int32_t inner = dw ? 1 : fdims[1] * fdims[2] * fdims[3];
        for (size_t i = 0; i < fn; i++) {
            int8_t q = (int8_t)((int32_t)(kh_frand(&seed, 1.0f) * 127.0f));
            int32_t c = dw ? (int32_t)(i % (size_t)p->cout) : (int32_t)(i / (size_t)inner);
            ((int8_t *)fdata)[i] = q;
            fref[i] = scales[c] * (float)q;
        }
    } else if (p->quant == 2) {
        /* uint8 with a zero point, one scale for the tensor */
        scales[0] = 0.02f;
        zps[0] = 128;
        uint32_t seed = 11;
        for (size_t i = 0; i < fn; i++) {
            uint8_t q = (uint8_t)((kh_frand(&seed, 1.0f) + 1.0f) * 127.5f);
            ((uint8_t *)fdata)[i] = q;
            fref[i] = scales[0] * (float)((int32_t)q - 128);
        }
    } else {
        uint32_t seed = 13;
        for (size_t i = 0; i < fn; i++) {
            fref[i] = (float)(int32_t)(kh_frand(&seed, 1.0f) * 64.0f) / 64.0f;
            ((uint16_t *)fdata)[i] = to_half(fref[i]);
        }
    }

    kh_case c;
    kh_init(&c, p->op, p->pool);
    c.opt.padding = p->padding;
    c.opt.stride_h = p->sh;
    c.opt.stride_w = p->sw;
    c.opt.dilation_h = p->dh;
    c.opt.dilation_w = p->dw;
    c.opt.activation = p->act;
    c.opt.depth_multiplier = 7; /* wrong on purpose: must be derived from the shapes */
    int32_t in_dims[4] = {p->n, p->h, p->w, p->cin};
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, in_dims, NULL);
    static const mp_dtype qdt[] = {MP_DT_FLOAT32, MP_DT_INT8, MP_DT_UINT8, MP_DT_FLOAT16};
    mp_tensor *f = kh_input(&c, qdt[p->quant], 4, fdims, fdata);
    if (p->quant == 1)
        kh_quant(&c, f, p->cout, scales, NULL, qdim);
    else if (p->quant == 2)
        kh_quant(&c, f, 1, scales, zps, 0);
    if (p->bias)
        kh_input(&c, MP_DT_FLOAT32, 1, &p->cout, bias);
    else
        kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);

    kh_fill(x->data, mp_tensor_elements(x), 1, 1.0f);
    kh_expect_ok(&c, kh_run(&c));
    int32_t oh = kh_conv_out_size(p->h, p->kh, p->sh, p->dh, p->padding);
    int32_t ow = kh_conv_out_size(p->w, p->kw, p->sw, p->dw, p->padding);
    assert_int_equal(y->rank, 4);
    assert_int_equal(y->dims[0], p->n);
    assert_int_equal(y->dims[1], oh);
    assert_int_equal(y->dims[2], ow);
    assert_int_equal(y->dims[3], p->cout);
    size_t on = mp_tensor_elements(y);
    double tol_floor = sqrt((double)p->kh * p->kw * (dw ? 1 : p->cin / groups));
    if (tol_floor < 1.0)
        tol_floor = 1.0;
    float *want = malloc(on * sizeof(float) + 1);
    ref_conv(p, p->h, p->w, x->data, fref, p->bias ? bias : NULL, want);
    kh_expect_close(y->data, want, on, tol_floor);

    /* same shapes, new data: run only */
    kh_fill(x->data, mp_tensor_elements(x), 2, 1.0f);
    kh_expect_ok(&c, kh_rerun(&c, false));
    ref_conv(p, p->h, p->w, x->data, fref, p->bias ? bias : NULL, want);
    kh_expect_close(y->data, want, on, tol_floor);
    free(want);

    if (p->h2) {
        /* new input size: infer, prepare (setup or re-create), run */
        int32_t dims2[4] = {p->n, p->h2, p->w2, p->cin};
        assert_true(mp_tensor_set_shape(x, 4, dims2));
        free(x->data);
        x->data = calloc(1, x->bytes + XNN_EXTRA_BYTES);
        kh_fill(x->data, mp_tensor_elements(x), 3, 1.0f);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(y->dims[1], kh_conv_out_size(p->h2, p->kh, p->sh, p->dh, p->padding));
        assert_int_equal(y->dims[2], kh_conv_out_size(p->w2, p->kw, p->sw, p->dw, p->padding));
        on = mp_tensor_elements(y);
        want = malloc(on * sizeof(float) + 1);
        ref_conv(p, p->h2, p->w2, x->data, fref, p->bias ? bias : NULL, want);
        kh_expect_close(y->data, want, on, tol_floor);
        free(want);
    }
    kh_free(&c);
    free(fref);
    free(fdata);
    free(bias);
}

/* ---- hand-computed cases -------------------------------------------------------------- */

static const float k_x16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const float k_ones9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};

/* 3x3 box filter on the 4x4 input 1..16, VALID: window sums, plus bias 1. */
static void test_conv_hand_valid(void **state)
{
    (void)state;
    static const float bias[1] = {1.0f};
    kh_case c;
    kh_init(&c, MP_OP_CONV_2D, NULL);
    c.opt.padding = MP_PAD_VALID;
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 1}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 1}, k_ones9);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, bias);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
    memcpy(x->data, k_x16, sizeof k_x16);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(y->dims[1], 2);
    assert_int_equal(y->dims[2], 2);
    /* 1+2+3+5+6+7+9+10+11 = 54, then +9 per step right, +36 per step down */
    static const float want[4] = {55, 64, 91, 100};
    kh_expect_close(y->data, want, 4, 1.0);
    kh_free(&c);
}

/* Same with SAME padding, stride 1: 4x4 output, padding one pixel on each side. */
static void test_conv_hand_same(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_CONV_2D, NULL);
    c.opt.padding = MP_PAD_SAME;
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 1}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 1}, k_ones9);
    kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
    memcpy(x->data, k_x16, sizeof k_x16);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(y->dims[1], 4);
    assert_int_equal(y->dims[2], 4);
    static const float want[16] = {
        14, 24, 30, 22,   /* 1+2+5+6, 1+2+3+5+6+7, 2+3+4+6+7+8, 3+4+7+8 */
        33, 54, 63, 45,   /* rows 1..3 */
        57, 90, 99, 69,
        46, 72, 78, 54,   /* 9+10+13+14, ..., 11+12+15+16 */
    };
    kh_expect_close(y->data, want, 16, 1.0);
    kh_free(&c);
}

/* Stride 2, SAME, RELU6 with a negative filter: hand values. */
static void test_conv_hand_stride_relu6(void **state)
{
    (void)state;
    /* 2x2 filter [[1,0],[0,-1]] (a diagonal difference), 2 output channels: the second is
     * the negation of the first. */
    static const float filt[8] = {1, 0, 0, -1, -1, 0, 0, 1};
    kh_case c;
    kh_init(&c, MP_OP_CONV_2D, NULL);
    c.opt.padding = MP_PAD_SAME;
    c.opt.stride_h = c.opt.stride_w = 2;
    c.opt.activation = MP_ACT_RELU6;
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 1}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){2, 2, 2, 1}, filt);
    kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
    memcpy(x->data, k_x16, sizeof k_x16);
    kh_expect_ok(&c, kh_run(&c));
    /* out 2x2 (no padding needed: (2-1)*2+2-4 = 0); x[y][x] - x[y+1][x+1] = -5 everywhere:
     * channel 0 -> relu6(-5) = 0, channel 1 -> relu6(5) = 5 */
    static const float want[8] = {0, 5, 0, 5, 0, 5, 0, 5};
    assert_int_equal(y->dims[1], 2);
    kh_expect_close(y->data, want, 8, 1.0);
    kh_free(&c);
}

/* Depthwise 3x3 box on two channels (the second scaled by 2, depth multiplier 1), VALID. */
static void test_dw_hand(void **state)
{
    (void)state;
    float filt[18];
    for (int i = 0; i < 9; i++) {
        filt[2 * i] = 1.0f;
        filt[2 * i + 1] = 2.0f;
    }
    kh_case c;
    kh_init(&c, MP_OP_DEPTHWISE_CONV_2D, NULL);
    c.opt.padding = MP_PAD_VALID;
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 2}, filt);
    kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
    float *xd = x->data;
    for (int i = 0; i < 16; i++) {
        xd[2 * i] = k_x16[i];
        xd[2 * i + 1] = -k_x16[i];
    }
    kh_expect_ok(&c, kh_run(&c));
    static const float want[8] = {54, -108, 63, -126, 90, -180, 99, -198};
    kh_expect_close(y->data, want, 8, 1.0);
    kh_free(&c);
}

/* ---- reference cases ------------------------------------------------------------------ */

static void test_conv_reference(void **state)
{
    (void)state;
    static const conv_params cases[] = {
        /* op, n,h,w,cin, kh,kw,cout, groups, sh,sw,dh,dw, padding, act, bias, quant, h2,w2 */
        {MP_OP_CONV_2D, 1, 5, 5, 3, 3, 3, 4, 0, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 0, 0, NULL},
        {MP_OP_CONV_2D, 2, 7, 6, 3, 3, 3, 8, 0, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU, true, 0, 9, 4, NULL},
        {MP_OP_CONV_2D, 1, 8, 8, 5, 3, 2, 6, 0, 2, 1, 1, 1, MP_PAD_VALID, MP_ACT_RELU6, false, 0, 11, 5, NULL},
        {MP_OP_CONV_2D, 1, 9, 9, 4, 3, 3, 5, 0, 1, 1, 2, 2, MP_PAD_SAME, MP_ACT_RELU_N1_TO_1, true, 0, 0, 0, NULL},
        {MP_OP_CONV_2D, 1, 10, 9, 2, 3, 3, 3, 0, 1, 2, 2, 3, MP_PAD_VALID, MP_ACT_TANH, true, 0, 0, 0, NULL},
        {MP_OP_CONV_2D, 1, 6, 6, 3, 3, 3, 4, 0, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_SIGN_BIT, true, 0, 0, 0, NULL},
        /* 1x1 pointwise, SAME (== VALID), several pixel counts */
        {MP_OP_CONV_2D, 2, 7, 7, 16, 1, 1, 24, 0, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true, 0, 3, 5, NULL},
        /* 1x1 stride 2 SAME: stride > kernel */
        {MP_OP_CONV_2D, 1, 7, 8, 3, 1, 1, 4, 0, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 6, 9, NULL},
        /* 2x2 stride 3 SAME: stride > kernel, padding depends on size (re-created) */
        {MP_OP_CONV_2D, 1, 7, 8, 3, 2, 2, 4, 0, 3, 3, 1, 1, MP_PAD_SAME, MP_ACT_NONE, false, 0, 8, 10, NULL},
        /* TFLite clamps a negative total padding to 0: (out-1)*stride + k - in < 0 */
        {MP_OP_CONV_2D, 1, 9, 12, 3, 2, 2, 4, 0, 3, 3, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 12, 9, NULL},
        {MP_OP_CONV_2D, 1, 12, 11, 2, 3, 3, 3, 0, 4, 4, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 9, 10, NULL},
        /* filter larger than input with SAME */
        {MP_OP_CONV_2D, 1, 2, 3, 2, 5, 5, 3, 0, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 0, 0, NULL},
        /* grouped convolution: 6 input channels, filters of 2 -> 3 groups of 2 outputs */
        {MP_OP_CONV_2D, 1, 6, 5, 6, 3, 3, 6, 3, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 0, 0, NULL},
        {MP_OP_CONV_2D, 1, 6, 5, 4, 3, 3, 8, 2, 2, 2, 1, 1, MP_PAD_VALID, MP_ACT_RELU, false, 0, 0, 0, NULL},
        /* hybrid filters */
        {MP_OP_CONV_2D, 1, 6, 6, 3, 3, 3, 5, 0, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_RELU, true, 1, 0, 0, NULL},
        {MP_OP_CONV_2D, 1, 6, 6, 3, 3, 3, 5, 0, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 2, 0, 0, NULL},
        {MP_OP_CONV_2D, 1, 5, 5, 3, 3, 3, 4, 0, 1, 1, 1, 1, MP_PAD_VALID, MP_ACT_NONE, false, 3, 0, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fprintf(stderr, "conv case %zu\n", i);
        check_conv(&cases[i]);
    }
}

static void test_dw_reference(void **state)
{
    (void)state;
    static const conv_params cases[] = {
        {MP_OP_DEPTHWISE_CONV_2D, 1, 7, 7, 8, 3, 3, 8, 0, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true, 0, 5, 9, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 2, 8, 7, 5, 3, 3, 5, 0, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_NONE, false, 0, 9, 9, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 9, 9, 3, 3, 3, 6, 0, 1, 1, 1, 1, MP_PAD_VALID, MP_ACT_RELU, true, 0, 0, 0, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 9, 10, 2, 5, 3, 6, 0, 2, 1, 1, 1, MP_PAD_SAME, MP_ACT_RELU_N1_TO_1, true, 0, 0, 0, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 11, 11, 4, 3, 3, 4, 0, 1, 1, 2, 3, MP_PAD_SAME, MP_ACT_TANH, true, 0, 0, 0, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 11, 11, 4, 3, 3, 4, 0, 1, 1, 2, 2, MP_PAD_VALID, MP_ACT_SIGN_BIT, true, 0, 0, 0, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 7, 7, 3, 2, 2, 3, 0, 3, 3, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 8, 8, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 12, 9, 3, 3, 3, 6, 0, 4, 3, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 0, 9, 12, NULL},
        /* hybrid: per-channel int8 along dimension 3, uint8 per-tensor */
        {MP_OP_DEPTHWISE_CONV_2D, 1, 6, 6, 4, 3, 3, 8, 0, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true, 1, 0, 0, NULL},
        {MP_OP_DEPTHWISE_CONV_2D, 1, 6, 6, 4, 3, 3, 4, 0, 2, 2, 1, 1, MP_PAD_VALID, MP_ACT_RELU6, false, 2, 0, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fprintf(stderr, "depthwise case %zu\n", i);
        check_conv(&cases[i]);
    }
}

/* MobileNet-like layers run on a 2-thread pool. */
static void test_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    conv_params a = {MP_OP_CONV_2D, 1, 17, 17, 8, 3, 3, 16, 0, 2, 2, 1, 1, MP_PAD_SAME,
                     MP_ACT_RELU6, true, 0, 15, 15, pool};
    conv_params b = {MP_OP_DEPTHWISE_CONV_2D, 2, 14, 14, 32, 3, 3, 32, 0, 1, 1, 1, 1,
                     MP_PAD_SAME, MP_ACT_RELU6, true, 0, 0, 0, pool};
    conv_params d = {MP_OP_CONV_2D, 2, 14, 14, 32, 1, 1, 40, 0, 1, 1, 1, 1, MP_PAD_VALID,
                     MP_ACT_NONE, true, 0, 0, 0, pool};
    check_conv(&a);
    check_conv(&b);
    check_conv(&d);
    pthreadpool_destroy(pool);
}

/* An empty batch is legal: nothing to compute. */
static void test_empty_batch(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_CONV_2D, NULL);
    c.opt.padding = MP_PAD_SAME;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){0, 4, 4, 1}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 1}, k_ones9);
    kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(y->dims[0], 0);
    assert_int_equal(y->dims[1], 4);
    kh_free(&c);
}

/* ---- errors ---------------------------------------------------------------------------- */

static mp_status try_conv(kh_case *c, int32_t op, mp_dtype in_dt, int32_t in_rank,
                          const int32_t *in_dims, const int32_t *f_dims, const float *bias,
                          int32_t bias_n, int32_t padding)
{
    static float filt[256];
    kh_init(c, op, NULL);
    c->opt.padding = padding;
    kh_input(c, in_dt, in_rank, in_dims, NULL);
    kh_input(c, MP_DT_FLOAT32, 4, f_dims, filt);
    if (bias)
        kh_input(c, MP_DT_FLOAT32, 1, &bias_n, bias);
    else
        kh_omit_input(c);
    kh_output(c, MP_DT_FLOAT32);
    return kh_run(c);
}

static void test_errors(void **state)
{
    (void)state;
    static const float bias[8] = {0};
    kh_case c;

    /* input of rank 3 */
    mp_status st = try_conv(&c, MP_OP_CONV_2D, MP_DT_FLOAT32, 3, (int32_t[]){4, 4, 3},
                            (int32_t[]){2, 3, 3, 3}, NULL, 0, MP_PAD_SAME);
    kh_expect_fail(&c, st, MP_ERR_SHAPE, "'t0'");
    kh_free(&c);

    /* 3 input channels, filter of 2: not a whole number of groups */
    st = try_conv(&c, MP_OP_CONV_2D, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 3},
                  (int32_t[]){2, 3, 3, 2}, NULL, 0, MP_PAD_SAME);
    kh_expect_fail(&c, st, MP_ERR_SHAPE, "'t1'");
    kh_free(&c);

    /* bias of the wrong length */
    st = try_conv(&c, MP_OP_CONV_2D, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 3},
                  (int32_t[]){2, 3, 3, 3}, bias, 3, MP_PAD_SAME);
    kh_expect_fail(&c, st, MP_ERR_SHAPE, "'t2'");
    kh_free(&c);

    /* VALID window larger than the input */
    st = try_conv(&c, MP_OP_CONV_2D, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 4, 3},
                  (int32_t[]){2, 3, 3, 3}, NULL, 0, MP_PAD_VALID);
    kh_expect_fail(&c, st, MP_ERR_SHAPE, "'t0'");
    kh_free(&c);

    /* int8 activations are not run */
    st = try_conv(&c, MP_OP_CONV_2D, MP_DT_INT8, 4, (int32_t[]){1, 4, 4, 3},
                  (int32_t[]){2, 3, 3, 3}, NULL, 0, MP_PAD_SAME);
    kh_expect_fail(&c, st, MP_ERR_UNSUPPORTED, "'t0'");
    kh_free(&c);

    /* depthwise: 5 filter channels for 2 input channels */
    st = try_conv(&c, MP_OP_DEPTHWISE_CONV_2D, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2},
                  (int32_t[]){1, 3, 3, 5}, NULL, 0, MP_PAD_SAME);
    kh_expect_fail(&c, st, MP_ERR_SHAPE, "'t1'");
    kh_free(&c);

    /* depthwise: filter not [1,KH,KW,C] */
    st = try_conv(&c, MP_OP_DEPTHWISE_CONV_2D, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2},
                  (int32_t[]){2, 3, 3, 2}, NULL, 0, MP_PAD_SAME);
    kh_expect_fail(&c, st, MP_ERR_SHAPE, "'t1'");
    kh_free(&c);

    /* a filter computed at run time */
    kh_init(&c, MP_OP_CONV_2D, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 1}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 1}, NULL);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_UNSUPPORTED, "'t1'");
    kh_free(&c);

    /* unknown fused activation */
    kh_init(&c, MP_OP_CONV_2D, NULL);
    c.opt.activation = 9;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 1}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 1}, k_ones9);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_UNSUPPORTED, "activation");
    kh_free(&c);
}

/* release without prepare, and the registry entries */
static void test_release_unprepared(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_DEPTHWISE_CONV_2D, NULL);
    assert_non_null(c.kernel);
    assert_int_equal(c.kernel->min_inputs, 2);
    assert_int_equal(c.kernel->max_inputs, 3);
    assert_int_equal(c.kernel->optional_inputs, 1u << 2);
    kh_free(&c);
    assert_non_null(mp_kernel_find(MP_OP_CONV_2D));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_hand_valid),
        cmocka_unit_test(test_conv_hand_same),
        cmocka_unit_test(test_conv_hand_stride_relu6),
        cmocka_unit_test(test_dw_hand),
        cmocka_unit_test(test_conv_reference),
        cmocka_unit_test(test_dw_reference),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_empty_batch),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_release_unprepared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
