/* Tests of DEPTHWISE_CONV_2D's plain-C path (engine/kernels/dwconv.c): against a naive
 * double-precision reference written from TensorFlow Lite's definition (odd shapes: 26 to 49
 * taps, channels not a multiple of 8, depth multiplier 2, strides and dilations 2, SAME and
 * VALID, every fused activation, batch > 1, windows reaching past small inputs, hybrid int8
 * filters, a thread pool, a new input size), against the XNNPACK path on the same shapes,
 * which path AUTO chooses and what memory each keeps, static and dynamic sessions equal on a
 * writer-built model, the refusals of bad shapes with their messages, and the conformer of
 * ../shared (its 1x31 depthwise operators) giving the same outputs on either path. 8-bit
 * (int8 per tensor and per channel, uint8): the C path bit-exact against TensorFlow Lite's
 * reference integer depthwise restated here (QuantizeMultiplier, MultiplyByQuantizedMultiplier),
 * the XNNPACK path against XNNPACK's float requantization, the two within one unit, the
 * sixteen-lane requantization against the scalar one on edge values, static and dynamic
 * sessions equal on a quantized model. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "engine/kernels/dwconv.h"
#include "engine/kernels/quant_math.h"
#include "engine/model/reference_input.h"
#include "engine/model/tflite_writer.h"
#include "tests/util/kernel_harness.h"

typedef struct dw_params {
    int32_t n, h, w, c, mult; /* input [n,h,w,c], output channels c * mult */
    int32_t kh, kw, sh, sw, dh, dw;
    int32_t padding, act;
    bool bias;
    bool int8_filter;         /* hybrid: int8 filter, one scale per output channel */
    int32_t h2, w2;           /* when set: run again on an input of this size */
    pthreadpool_t pool;
} dw_params;

/* ---- reference: TensorFlow Lite's DepthwiseConv, in double ------------------------------ */

/* y[b, oy, ox, ic * M + m] = act(bias + sum over taps inside the input of
 * x[b, oy * sh + ky * dh - pt, ox * sw + kx * dw - pl, ic] * f[ky, kx, ic * M + m]) */
static void ref_dw(const dw_params *p, int32_t h, int32_t w, const float *x, const float *f,
                   const float *bias, float *y)
{
    int32_t oh = kh_conv_out_size(h, p->kh, p->sh, p->dh, p->padding);
    int32_t ow = kh_conv_out_size(w, p->kw, p->sw, p->dw, p->padding);
    int32_t pt = kh_conv_pad_before(h, p->kh, p->sh, p->dh, p->padding);
    int32_t pl = kh_conv_pad_before(w, p->kw, p->sw, p->dw, p->padding);
    int32_t oc = p->c * p->mult;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < oh; oy++)
            for (int32_t ox = 0; ox < ow; ox++)
                for (int32_t ic = 0; ic < p->c; ic++)
                    for (int32_t m = 0; m < p->mult; m++) {
                        int32_t o = ic * p->mult + m;
                        double acc = bias ? bias[o] : 0.0;
                        for (int32_t ky = 0; ky < p->kh; ky++)
                            for (int32_t kx = 0; kx < p->kw; kx++) {
                                int32_t iy = oy * p->sh + ky * p->dh - pt;
                                int32_t ix = ox * p->sw + kx * p->dw - pl;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                acc += (double)x[((b * h + iy) * w + ix) * p->c + ic] *
                                       f[(ky * p->kw + kx) * oc + o];
                            }
                        y[((b * oh + oy) * ow + ox) * oc + o] = (float)kh_ref_act(acc, p->act);
                    }
}

/* ---- one case through the kernel ----------------------------------------------------- */

typedef struct dw_case {
    kh_case c;
    float *fref, *bias;
    void *fdata;
    float scales[256];
    mp_tensor *x, *y;
} dw_case;

/* Start the node of p: its options, and its input of dtype dt (returned). */
static mp_tensor *dw_init(kh_case *c, const dw_params *p, mp_dtype dt)
{
    kh_init(c, MP_OP_DEPTHWISE_CONV_2D, p->pool);
    c->opt.padding = p->padding;
    c->opt.stride_h = p->sh;
    c->opt.stride_w = p->sw;
    c->opt.dilation_h = p->dh;
    c->opt.dilation_w = p->dw;
    c->opt.activation = p->act;
    c->opt.depth_multiplier = p->mult;
    return kh_input(c, dt, 4, (int32_t[]){p->n, p->h, p->w, p->c}, NULL);
}

/* Build the node of p (filter values seeded, the reference's float32 view in fref). */
static void dw_build(dw_case *d, const dw_params *p)
{
    int32_t oc = p->c * p->mult, fdims[4] = {1, p->kh, p->kw, oc};
    size_t fn = (size_t)p->kh * (size_t)p->kw * (size_t)oc;
    d->fref = malloc(fn * sizeof(float));
    d->fdata = malloc(fn * sizeof(float));
    d->bias = malloc((size_t)oc * sizeof(float));
    kh_fill(d->bias, (size_t)oc, 99, 1.0f);
    if (p->int8_filter) {
        assert_true(oc <= 256);
        uint32_t seed = 5;
        for (int32_t c = 0; c < oc; c++)
            d->scales[c] = 0.01f * (float)(c % 7 + 1);
        for (size_t i = 0; i < fn; i++) {
            int8_t q = (int8_t)((int32_t)(kh_frand(&seed, 1.0f) * 127.0f));
            ((int8_t *)d->fdata)[i] = q;
            d->fref[i] = d->scales[i % (size_t)oc] * (float)q;
        }
    } else {
        kh_fill(d->fref, fn, 7, 1.0f);
        memcpy(d->fdata, d->fref, fn * sizeof(float));
    }
    kh_case *c = &d->c;
    d->x = dw_init(c, p, MP_DT_FLOAT32);
    mp_tensor *f = kh_input(c, p->int8_filter ? MP_DT_INT8 : MP_DT_FLOAT32, 4, fdims, d->fdata);
    if (p->int8_filter)
        kh_quant(c, f, oc, d->scales, NULL, 3);
    if (p->bias)
        kh_input(c, MP_DT_FLOAT32, 1, &oc, d->bias);
    else
        kh_omit_input(c);
    d->y = kh_output(c, MP_DT_FLOAT32);
}

static void dw_free(dw_case *d)
{
    kh_free(&d->c);
    free(d->fref);
    free(d->fdata);
    free(d->bias);
}

static double dw_tol(const dw_params *p)
{
    double t = sqrt((double)p->kh * p->kw);
    return t < 1.0 ? 1.0 : t;
}

/* Run the kernel on input data seeded `seed` of size h x w and compare with the reference. */
static void dw_expect_ref(dw_case *d, const dw_params *p, int32_t h, int32_t w, uint32_t seed,
                          bool reprepare)
{
    kh_fill(d->x->data, mp_tensor_elements(d->x), seed, 1.0f);
    kh_expect_ok(&d->c, reprepare ? kh_run(&d->c) : kh_rerun(&d->c, false));
    assert_int_equal(d->y->rank, 4);
    assert_int_equal(d->y->dims[0], p->n);
    assert_int_equal(d->y->dims[1], kh_conv_out_size(h, p->kh, p->sh, p->dh, p->padding));
    assert_int_equal(d->y->dims[2], kh_conv_out_size(w, p->kw, p->sw, p->dw, p->padding));
    assert_int_equal(d->y->dims[3], p->c * p->mult);
    size_t on = mp_tensor_elements(d->y);
    float *want = malloc(on * sizeof(float) + 1);
    ref_dw(p, h, w, d->x->data, d->fref, p->bias ? d->bias : NULL, want);
    kh_expect_close(d->y->data, want, on, dw_tol(p));
    free(want);
}

/* The case under `policy`: against the reference, again with new data (run only), and at
 * the second input size when p->h2 is set. */
static void check_dw(const dw_params *p, mp_dwconv_policy policy)
{
    mp_dwconv_set_policy(policy);
    dw_case d;
    dw_build(&d, p);
    dw_expect_ref(&d, p, p->h, p->w, 1, true);
    dw_expect_ref(&d, p, p->h, p->w, 2, false);
    if (p->h2) {
        int32_t dims2[4] = {p->n, p->h2, p->w2, p->c};
        assert_true(mp_tensor_set_shape(d.x, 4, dims2));
        free(d.x->data);
        d.x->data = calloc(1, d.x->bytes + XNN_EXTRA_BYTES);
        dw_expect_ref(&d, p, p->h2, p->w2, 3, true);
    }
    dw_free(&d);
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
}

/* ---- the C path against the reference ------------------------------------------------ */

/* The conformer's 31-tap 1-D filter, smaller: SAME, batch 3, 83 channels (64 + 16 + 3: every
 * block width of the kernel), with and without bias; and a new input length. */
static void test_dw_1d_31_taps(void **state)
{
    (void)state;
    dw_params p = {.n = 3, .h = 40, .w = 1, .c = 83, .mult = 1, .kh = 31, .kw = 1, .sh = 1,
                   .sw = 1, .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true, .h2 = 17,
                   .w2 = 1};
    check_dw(&p, MP_DWCONV_AUTO); /* 31 taps: AUTO takes the C path */
    p.bias = false;
    check_dw(&p, MP_DWCONV_C);
}

/* Window sizes 26 to 49 taps in both dimensions, SAME and VALID, channels 5, 13, 20. */
static void test_dw_taps_26_to_49(void **state)
{
    (void)state;
    static const int32_t k[][2] = {{1, 26}, {2, 13}, {3, 9}, {5, 6}, {6, 6}, {7, 7}, {4, 12}};
    static const int32_t chans[] = {5, 13, 20};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        for (int pad = 0; pad < 2; pad++) {
            dw_params p = {.n = 2, .h = 15, .w = 28, .c = chans[i % 3], .mult = 1,
                           .kh = k[i][0], .kw = k[i][1], .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                           .padding = pad ? MP_PAD_VALID : MP_PAD_SAME, .bias = true};
            check_dw(&p, MP_DWCONV_C);
        }
}

/* Strides 2, dilations 2 (alone and together, one per dimension), 19 channels. */
static void test_dw_strides_dilations(void **state)
{
    (void)state;
    static const int32_t sd[][4] = {{2, 2, 1, 1}, {1, 1, 2, 2}, {2, 2, 2, 2}, {2, 1, 1, 2},
                                    {1, 2, 2, 1}, {3, 2, 1, 3}};
    for (size_t i = 0; i < sizeof sd / sizeof sd[0]; i++)
        for (int pad = 0; pad < 2; pad++) {
            dw_params p = {.n = 2, .h = 23, .w = 20, .c = 19, .mult = 1, .kh = 7, .kw = 5,
                           .sh = sd[i][0], .sw = sd[i][1], .dh = sd[i][2], .dw = sd[i][3],
                           .padding = pad ? MP_PAD_VALID : MP_PAD_SAME, .bias = true,
                           .h2 = 30, .w2 = 17};
            check_dw(&p, MP_DWCONV_C);
        }
}

/* Depth multiplier 2 (and 3): output channel c*M+m reads input channel c; channel counts
 * whose outputs fill 16-wide blocks and leave tails. */
static void test_dw_multiplier(void **state)
{
    (void)state;
    static const int32_t cm[][2] = {{5, 2}, {8, 2}, {11, 3}, {40, 2}};
    for (size_t i = 0; i < sizeof cm / sizeof cm[0]; i++) {
        dw_params p = {.n = 2, .h = 12, .w = 9, .c = cm[i][0], .mult = cm[i][1], .kh = 5,
                       .kw = 6, .sh = 2, .sw = 1, .dh = 1, .dw = 2, .padding = MP_PAD_SAME,
                       .bias = i % 2 == 0};
        check_dw(&p, MP_DWCONV_C);
    }
}

/* Depth multipliers 2 to 8 on the permuted blocks of sixteen input channels (16 and 64 with
 * multiplier 2: one and four blocks at a time), with what they leave as overlapping whole
 * vectors (21, 37, 17 channels), and fewer than sixteen inputs (3 x 8, 5 x 4: copied; 7 x 2,
 * 14 outputs: one channel at a time); SAME and VALID, strides and dilations 2, fused
 * activations, with and without bias, a second input size. On the C path (AUTO takes it
 * from sixteen channels on with AVX-512, test_dw_choice). */
static void test_dw_multiplier_blocks(void **state)
{
    (void)state;
    static const int32_t cm[][2] = {{16, 2}, {64, 2}, {37, 2}, {48, 3}, {21, 3}, {32, 4},
                                    {37, 4}, {16, 5}, {24, 6}, {17, 7}, {16, 8}, {21, 8},
                                    {3, 8},  {5, 4},  {7, 2}};
    static const int32_t acts[] = {MP_ACT_NONE, MP_ACT_RELU, MP_ACT_RELU6, MP_ACT_RELU_N1_TO_1,
                                   MP_ACT_TANH};
    for (int i = 0; i < (int)(sizeof cm / sizeof cm[0]); i++) {
        dw_params p = {.n = 2, .h = 11, .w = 10, .c = cm[i][0], .mult = cm[i][1],
                       .kh = 3 + i % 3, .kw = 3, .sh = 1 + i % 2, .sw = 1 + i / 2 % 2,
                       .dh = 1 + i / 3 % 2, .dw = 1 + i / 5 % 2,
                       .padding = i % 4 == 3 ? MP_PAD_VALID : MP_PAD_SAME,
                       .act = acts[i % 5], .bias = i % 3 != 1, .h2 = 14, .w2 = 9};
        check_dw(&p, MP_DWCONV_C);
    }
}

/* Every fused activation (TANH and SIGN_BIT after the kernel, the others as its clamp). */
static void test_dw_activations(void **state)
{
    (void)state;
    for (int32_t act = MP_ACT_NONE; act <= MP_ACT_SIGN_BIT; act++) {
        dw_params p = {.n = 2, .h = 16, .w = 3, .c = 21, .mult = 1, .kh = 9, .kw = 3, .sh = 1,
                       .sw = 1, .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .act = act,
                       .bias = true};
        check_dw(&p, MP_DWCONV_AUTO); /* 27 taps: C */
        p.mult = 2;
        check_dw(&p, MP_DWCONV_C);
    }
}

/* Windows larger than the input (SAME: most taps in the padding; a dilation that leaves only
 * the centre tap inside), and a hybrid int8 filter dequantized once. */
static void test_dw_small_inputs_and_hybrid(void **state)
{
    (void)state;
    dw_params p = {.n = 2, .h = 5, .w = 3, .c = 17, .mult = 1, .kh = 31, .kw = 7, .sh = 1,
                   .sw = 2, .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true};
    check_dw(&p, MP_DWCONV_C);
    dw_params q = {.n = 1, .h = 4, .w = 4, .c = 9, .mult = 1, .kh = 5, .kw = 7, .sh = 1,
                   .sw = 1, .dh = 9, .dw = 9, .padding = MP_PAD_SAME, .bias = true,
                   .act = MP_ACT_RELU6};
    check_dw(&q, MP_DWCONV_C);
    dw_params r = {.n = 2, .h = 20, .w = 1, .c = 24, .mult = 1, .kh = 31, .kw = 1, .sh = 1,
                   .sw = 1, .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true,
                   .int8_filter = true};
    check_dw(&r, MP_DWCONV_AUTO);
}

/* Rows split across a thread pool of 3: the same results. */
static void test_dw_thread_pool(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(3);
    assert_non_null(pool);
    dw_params p = {.n = 3, .h = 64, .w = 5, .c = 70, .mult = 1, .kh = 15, .kw = 3, .sh = 1,
                   .sw = 1, .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true,
                   .pool = pool};
    check_dw(&p, MP_DWCONV_C);
    p.mult = 2;
    check_dw(&p, MP_DWCONV_C);
    pthreadpool_destroy(pool);
}

/* ---- against XNNPACK, the choice and its memory --------------------------------------- */

/* Outputs of the same node (same data) under the XNNPACK and C policies, close within float
 * rounding; and the kernel memory each keeps: XNNPACK its packed filter, C nothing beyond
 * the node's state (the filter read in place). */
static void expect_paths_agree(const dw_params *p)
{
    dw_case a, b;
    mp_dwconv_set_policy(MP_DWCONV_XNNPACK);
    dw_build(&a, p);
    kh_fill(a.x->data, mp_tensor_elements(a.x), 4, 1.0f);
    kh_expect_ok(&a.c, kh_run(&a.c));
    mp_dwconv_set_policy(MP_DWCONV_C);
    dw_build(&b, p);
    kh_fill(b.x->data, mp_tensor_elements(b.x), 4, 1.0f);
    kh_expect_ok(&b.c, kh_run(&b.c));
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
    size_t on = mp_tensor_elements(a.y);
    assert_int_equal(on, mp_tensor_elements(b.y));
    kh_expect_close(b.y->data, a.y->data, on, dw_tol(p));
    uint64_t kx = mp_mem_get_stats(a.c.mem)->live[MP_MEM_KERNEL];
    uint64_t kc = mp_mem_get_stats(b.c.mem)->live[MP_MEM_KERNEL];
    size_t filter_bytes = (size_t)p->kh * p->kw * p->c * p->mult * sizeof(float);
    if (!p->int8_filter)
        assert_true(kc < 1024); /* conv.c's state alone */
    assert_true(kx >= kc + filter_bytes);
    dw_free(&a);
    dw_free(&b);
}

static void test_dw_against_xnnpack(void **state)
{
    (void)state;
    static const dw_params cases[] = {
        /* the conformer's operator #91, batch and length cut down */
        {.n = 2, .h = 60, .w = 1, .c = 80, .mult = 1, .kh = 31, .kw = 1, .sh = 1, .sw = 1,
         .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true},
        /* ConvNeXt's 7x7 */
        {.n = 1, .h = 14, .w = 14, .c = 96, .mult = 1, .kh = 7, .kw = 7, .sh = 1, .sw = 1,
         .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true},
        /* tiles XNNPACK has a microkernel for, on the C path too */
        {.n = 2, .h = 9, .w = 11, .c = 37, .mult = 1, .kh = 3, .kw = 3, .sh = 2, .sw = 2,
         .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true, .act = MP_ACT_RELU6},
        {.n = 1, .h = 9, .w = 11, .c = 20, .mult = 2, .kh = 5, .kw = 5, .sh = 1, .sw = 1,
         .dh = 2, .dw = 1, .padding = MP_PAD_VALID, .bias = false, .act = MP_ACT_RELU},
        {.n = 3, .h = 30, .w = 2, .c = 13, .mult = 1, .kh = 26, .kw = 1, .sh = 2, .sw = 1,
         .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true, .int8_filter = true,
         .act = MP_ACT_RELU_N1_TO_1},
        /* multipliers on the blocks against XNNPACK's GEMM (the same sums in another order) */
        {.n = 2, .h = 13, .w = 12, .c = 32, .mult = 4, .kh = 3, .kw = 3, .sh = 2, .sw = 2,
         .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = true, .act = MP_ACT_RELU6},
        {.n = 1, .h = 14, .w = 11, .c = 21, .mult = 3, .kh = 5, .kw = 5, .sh = 1, .sw = 1,
         .dh = 2, .dw = 2, .padding = MP_PAD_VALID, .bias = true},
        {.n = 1, .h = 9, .w = 10, .c = 16, .mult = 8, .kh = 3, .kw = 3, .sh = 1, .sw = 1,
         .dh = 1, .dw = 1, .padding = MP_PAD_SAME, .bias = false, .act = MP_ACT_RELU},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_paths_agree(&cases[i]);
}

/* Whether AUTO takes depth multipliers 2 to 8 on the C path: with AVX-512 (GCC, x86-64). */
static bool mult_blocks_fast(void)
{
#if defined(__x86_64__) && !defined(__clang__)
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

/* AUTO: the C path exactly for multiplier 1 and windows other than 3, 4, 9 and 25 taps,
 * and for multipliers 2 to 8 on sixteen input channels or more (any window). */
static void test_dw_choice(void **state)
{
    (void)state;
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
    assert_false(mp_dwconv_wanted(3, 1, 32, 1));
    assert_false(mp_dwconv_wanted(2, 2, 32, 1));
    assert_false(mp_dwconv_wanted(3, 3, 32, 1));
    assert_false(mp_dwconv_wanted(5, 5, 32, 1));
    assert_false(mp_dwconv_wanted(1, 25, 32, 1));
    assert_true(mp_dwconv_wanted(1, 5, 32, 1));
    assert_true(mp_dwconv_wanted(31, 1, 3, 1));
    assert_true(mp_dwconv_wanted(1, 26, 32, 1));
    assert_true(mp_dwconv_wanted(7, 7, 32, 1));
    /* multipliers: 2 to 8 from sixteen input channels on where the processor has AVX-512
     * (dwconv.c's blocks permute sixteen lanes in one instruction there), XNNPACK's GEMM
     * otherwise */
    bool perm16 = mult_blocks_fast();
    for (int32_t m = 2; m <= 8; m++) {
        assert_int_equal(mp_dwconv_wanted(3, 3, 16, m), perm16);
        assert_int_equal(mp_dwconv_wanted(31, 1, 40, m), perm16);
        assert_false(mp_dwconv_wanted(3, 3, 15, m));
    }
    assert_false(mp_dwconv_wanted(3, 3, 32, 9));
    assert_false(mp_dwconv_wanted(3, 3, 32, 16));
    mp_dwconv_set_policy(MP_DWCONV_XNNPACK);
    assert_false(mp_dwconv_wanted(7, 7, 32, 1));
    assert_false(mp_dwconv_wanted(3, 3, 32, 2));
    mp_dwconv_set_policy(MP_DWCONV_C);
    assert_true(mp_dwconv_wanted(3, 3, 32, 1));
    assert_true(mp_dwconv_wanted(3, 3, 3, 4));
    assert_true(mp_dwconv_wanted(3, 3, 32, 16));
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
}

/* ---- refusals ------------------------------------------------------------------------- */

/* A DEPTHWISE_CONV_2D of input [1,h,1,c] and filter [1,31,1,12] (constant unless computed),
 * bias of bias_len elements (0: omitted), refused with `want` and a message naming needle. */
static void expect_refused(int32_t h, int32_t c, bool computed, int32_t bias_len,
                           int32_t padding, int32_t stride_h, mp_status want, const char *needle)
{
    static const float filt[31 * 12], bias[12];
    kh_case k;
    kh_init(&k, MP_OP_DEPTHWISE_CONV_2D, NULL);
    k.opt.padding = padding;
    k.opt.stride_h = stride_h;
    kh_input(&k, MP_DT_FLOAT32, 4, (int32_t[]){1, h, 1, c}, NULL);
    kh_input(&k, MP_DT_FLOAT32, 4, (int32_t[]){1, 31, 1, 12}, computed ? NULL : filt);
    if (bias_len)
        kh_input(&k, MP_DT_FLOAT32, 1, &bias_len, bias);
    else
        kh_omit_input(&k);
    kh_output(&k, MP_DT_FLOAT32);
    kh_expect_error(&k, want, needle);
    kh_free(&k);
}

static void test_dw_refusals(void **state)
{
    (void)state;
    /* filter channels not a multiple of the input's */
    expect_refused(40, 5, false, 0, MP_PAD_SAME, 1, MP_ERR_SHAPE, "must be [1,KH,KW,C*M]");
    /* a bias of the wrong length */
    expect_refused(40, 6, false, 6, MP_PAD_SAME, 1, MP_ERR_SHAPE, "must have 12 elements");
    /* VALID: an input shorter than the 31-tap window */
    expect_refused(30, 6, false, 0, MP_PAD_VALID, 1, MP_ERR_SHAPE,
                   "smaller than the 31x1 filter");
    /* a filter computed at run time: neither path takes it */
    expect_refused(40, 6, true, 0, MP_PAD_SAME, 1, MP_ERR_UNSUPPORTED, "only constant filters");
    /* a zero stride */
    expect_refused(40, 6, false, 0, MP_PAD_SAME, 0, MP_ERR_FORMAT, "invalid stride 0x1");
}

/* ---- a writer-built model: static and dynamic sessions equal, and the reference ------- */

enum { MD_N = 2, MD_H = 37, MD_C = 10, MD_K = 31 };

/* The writer's model finished with two SAME stride-1 DEPTHWISE_CONV_2D, x -> h (RELU) and
 * h -> y, sharing filter and bias (tensors t: x, f, b, h, y), as a session of `mode`, run
 * twice on the input x of `bytes`. */
static mp_session *dw_two_layers(mp_tfw *w, mp_memory_mode mode, const int *t, const void *x,
                                 size_t bytes, const char *label)
{
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 1;
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){t[0], t[1], t[2]}, 1, &t[3], &o);
    o.activation = MP_ACT_NONE;
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){t[3], t[1], t[2]}, 1, &t[4], &o);
    mp_tfw_io(w, 1, &t[0], 1, &t[4]);
    void *model = NULL;
    size_t size = 0;
    mp_error err = {0};
    if (mp_tfw_finish(w, &model, &size, &err) != MP_OK)
        fail_msg("writer: %s", err.msg);
    mp_tfw_free(w);
    mp_session *s = kh_session(mode, model, size, label);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(mp_session_set_input(s, 0, x, bytes, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run (%s): %s", mp_memory_mode_name(mode), err.msg);
    }
    return s;
}

static void run_dw_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    static float filt[MD_K * MD_C], bias[MD_C], x[MD_N * MD_H * MD_C];
    kh_fill(filt, MD_K * MD_C, 7, 1.0f);
    kh_fill(bias, MD_C, 8, 1.0f);
    kh_fill(x, MD_N * MD_H * MD_C, 9, 1.0f);
    mp_tfw *w = mp_tfw_create();
    int32_t xd[4] = {MD_N, MD_H, 1, MD_C}, fd[4] = {1, MD_K, 1, MD_C}, bd = MD_C;
    int xt = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, xd, 0, NULL);
    int ft = mp_tfw_tensor(w, "f", MP_DT_FLOAT32, 4, fd, mp_tfw_buffer(w, filt, sizeof filt),
                           NULL);
    int bt = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, &bd, mp_tfw_buffer(w, bias, sizeof bias),
                           NULL);
    int h = mp_tfw_tensor(w, "h", MP_DT_FLOAT32, 4, xd, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 4, xd, 0, NULL);
    mp_session *s = dw_two_layers(w, mode, (int[]){xt, ft, bt, h, y}, x, sizeof x, "dwconv");
    const mp_tensor *t = mp_session_output(s, 0);
    sizes[0] = t->bytes;
    out[0] = malloc(t->bytes + 1);
    memcpy(out[0], t->data, t->bytes);
    /* the two layers by the reference */
    dw_params p = {.n = MD_N, .h = MD_H, .w = 1, .c = MD_C, .mult = 1, .kh = MD_K, .kw = 1,
                   .sh = 1, .sw = 1, .dh = 1, .dw = 1, .padding = MP_PAD_SAME,
                   .act = MP_ACT_RELU, .bias = true};
    float mid[MD_N * MD_H * MD_C], want[MD_N * MD_H * MD_C];
    ref_dw(&p, MD_H, 1, x, filt, bias, mid);
    p.act = MP_ACT_NONE;
    ref_dw(&p, MD_H, 1, mid, filt, bias, want);
    assert_int_equal(t->bytes, sizeof want);
    kh_expect_close(t->data, want, MD_N * MD_H * MD_C, MD_K);
    mp_session_destroy(s);
}

static void test_dw_model_static_dynamic(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_dw_model, 1);
}

/* ---- 8-bit quantized: TensorFlow Lite's integers on the C path, XNNPACK's on its own -- */

enum { Q_QS8, Q_QC8, Q_QU8 };

typedef struct q8_params {
    int kind;
    int32_t n, h, w, c, mult, kh, kw, sh, sw, dh, dw, padding, act;
    bool bias;
} q8_params;

typedef struct q8_data {
    float in_s, out_s, w_s[128];
    int64_t in_zp, out_zp, w_zp;
    uint8_t *x, *f;  /* int8 or uint8 bytes */
    int32_t *bias;
} q8_data;

static void q8_act_range(const q8_params *p, const q8_data *d, int32_t *lo, int32_t *hi)
{
    bool u8 = p->kind == Q_QU8;
    kh_q_act_range(p->act, d->out_s, (int32_t)d->out_zp, u8 ? 0 : -128, u8 ? 255 : 127, lo, hi);
}

static int32_t q8_at(const q8_params *p, const uint8_t *v, size_t i)
{
    return p->kind == Q_QU8 ? (int32_t)v[i] : (int32_t)(int8_t)v[i];
}

/* TensorFlow Lite's QuantizeMultiplier, restated: real = q * 2^e with q in [0.5, 1), q * 2^31
 * rounded half away from zero (a q that rounds to 2^31 halved, e raised), below 2^-32 zero. */
static void tfl_quantize_multiplier(double real, int32_t *m, int *shift)
{
    int e = 0;
    double q = real == 0 ? 0 : frexp(real, &e);
    long long f = llround(q * 2147483648.0);
    if (f == 2147483648LL) {
        f /= 2;
        e++;
    }
    if (e < -31 || f == 0) {
        f = 0;
        e = 0;
    }
    *m = (int32_t)f;
    *shift = e;
}

/* TensorFlow Lite's MultiplyByQuantizedMultiplier, restated from its definition: x times
 * 2^max(shift, 0) (in 32 bits), then gemmlowp's SaturatingRoundingDoublingHighMul (2 * x * m
 * / 2^32 rounded to nearest, ties up: floor((x * m + 2^30) / 2^31); only INT32_MIN squared
 * saturates), then RoundingDivideByPOT by 2^max(-shift, 0) (to nearest, ties away from
 * zero). */
static int32_t tfl_multiply(int32_t x, int32_t m, int shift)
{
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    x = left >= 32 ? 0 : (int32_t)(uint32_t)((uint64_t)(uint32_t)x << left);
    const int64_t two31 = INT64_C(1) << 31;
    int64_t h = INT32_MAX, t = (int64_t)x * m + two31 / 2;
    if (x != INT32_MIN || m != INT32_MIN) /* floor(t / 2^31) */
        h = t >= 0 ? t / two31 : -((-t + two31 - 1) / two31);
    if (right == 0)
        return (int32_t)h;
    int64_t half = INT64_C(1) << (right - 1), a = h < 0 ? -h : h;
    int64_t r = (a + half) >> right; /* |h| / 2^right, ties up: away from zero */
    return (int32_t)(h < 0 ? -r : r);
}

/* References: XNNPACK's float requantization (xnn) and TensorFlow Lite's reference integer
 * depthwise (tfl: DepthwiseConvPerChannel for int8, the effective scale in double;
 * DepthwiseConv for uint8, the product of the input and filter scales in float, as its
 * GetQuantizedConvolutionMultipler) of the sums bias + (x - in_zp) * (w - w_zp) over the taps
 * inside the input. */
static void ref_q8(const q8_params *p, const q8_data *d, int32_t *xnn, int32_t *tfl)
{
    int32_t oh = kh_conv_out_size(p->h, p->kh, p->sh, p->dh, p->padding);
    int32_t ow = kh_conv_out_size(p->w, p->kw, p->sw, p->dw, p->padding);
    int32_t pt = kh_conv_pad_before(p->h, p->kh, p->sh, p->dh, p->padding);
    int32_t pl = kh_conv_pad_before(p->w, p->kw, p->sw, p->dw, p->padding);
    int32_t oc = p->c * p->mult, lo, hi, zp = (int32_t)d->out_zp;
    q8_act_range(p, d, &lo, &hi);
    size_t k = 0;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < oh; oy++)
            for (int32_t ox = 0; ox < ow; ox++)
                for (int32_t o = 0; o < oc; o++, k++) {
                    int64_t sum = p->bias ? d->bias[o] : 0;
                    for (int32_t ky = 0; ky < p->kh; ky++)
                        for (int32_t kx = 0; kx < p->kw; kx++) {
                            int32_t iy = oy * p->sh + ky * p->dh - pt;
                            int32_t ix = ox * p->sw + kx * p->dw - pl;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                                continue;
                            size_t xi = (size_t)((b * p->h + iy) * p->w + ix) * p->c + o / p->mult;
                            size_t fi = (size_t)(ky * p->kw + kx) * oc + o;
                            sum += (int64_t)(q8_at(p, d->x, xi) - d->in_zp) *
                                   (q8_at(p, d->f, fi) - d->w_zp);
                        }
                    float ws = d->w_s[p->kind == Q_QC8 ? o : 0];
                    float f = (float)sum * (d->in_s * ws / d->out_s);
                    f = fminf(fmaxf(f, (float)(lo - zp)), (float)(hi - zp));
                    xnn[k] = (int32_t)nearbyintf(f) + zp;
                    int32_t m;
                    int sh;
                    tfl_quantize_multiplier(p->kind == Q_QU8
                                                ? (double)(d->in_s * ws) / d->out_s
                                                : (double)d->in_s * ws / d->out_s,
                                            &m, &sh);
                    int32_t t = tfl_multiply((int32_t)sum, m, sh) + zp;
                    tfl[k] = t < lo ? lo : t > hi ? hi : t;
                }
}

/* The node of p on d's data under `policy`, run; its output y. */
static void q8_run(kh_case *c, const q8_params *p, q8_data *d, mp_dwconv_policy policy,
                   mp_tensor **y)
{
    bool u8 = p->kind == Q_QU8;
    mp_dtype dt = u8 ? MP_DT_UINT8 : MP_DT_INT8;
    int32_t oc = p->c * p->mult;
    mp_dwconv_set_policy(policy);
    dw_params g = {.n = p->n, .h = p->h, .w = p->w, .c = p->c, .mult = p->mult, .kh = p->kh,
                   .kw = p->kw, .sh = p->sh, .sw = p->sw, .dh = p->dh, .dw = p->dw,
                   .padding = p->padding, .act = p->act};
    mp_tensor *x = dw_init(c, &g, dt);
    kh_quant(c, x, 1, &d->in_s, &d->in_zp, 0);
    memcpy(x->data, d->x, x->bytes);
    mp_tensor *f = kh_input(c, dt, 4, (int32_t[]){1, p->kh, p->kw, oc}, d->f);
    kh_quant(c, f, p->kind == Q_QC8 ? oc : 1, d->w_s, u8 ? &d->w_zp : NULL, 3);
    if (p->bias)
        kh_input(c, MP_DT_INT32, 1, &oc, d->bias);
    else
        kh_omit_input(c);
    *y = kh_output(c, dt);
    kh_quant(c, *y, 1, &d->out_s, &d->out_zp, 0);
    kh_expect_ok(c, kh_run(c));
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
}

/* Seeded data for p (input of n*h*w*c, filter and bias of c*mult channels). */
static q8_data q8_fill(const q8_params *p, uint32_t seed)
{
    bool u8 = p->kind == Q_QU8;
    int32_t oc = p->c * p->mult;
    size_t xn = (size_t)p->n * p->h * p->w * p->c, fn = (size_t)p->kh * p->kw * oc;
    q8_data d = {.in_s = 0.05f, .in_zp = u8 ? 131 : -7, .w_zp = u8 ? 121 : 0,
                 .out_zp = u8 ? 120 : 5};
    assert_true(oc <= 128);
    d.x = malloc(xn);
    d.f = malloc(fn);
    d.bias = malloc((size_t)oc * sizeof(int32_t));
    for (size_t i = 0; i < xn; i++)
        d.x[i] = (uint8_t)kh_irand(&seed, 256);
    for (size_t i = 0; i < fn; i++) /* int8 filters symmetric: -127..127 */
        d.f[i] = u8 ? (uint8_t)kh_irand(&seed, 256) : (uint8_t)(int8_t)(kh_irand(&seed, 255) - 127);
    for (int32_t i = 0; i < oc; i++) {
        d.bias[i] = kh_irand(&seed, 4001) - 2000;
        d.w_s[i] = p->kind == Q_QC8 ? 0.002f + 0.0005f * (float)(i % 17) : 0.006f;
    }
    /* sums of about sqrt(taps) * 75^2, to some 64 output steps */
    d.out_s = d.in_s * 0.006f * 5600.0f * sqrtf((float)(p->kh * p->kw)) / 64.0f;
    return d;
}

static void q8_free(q8_data *d)
{
    free(d->x);
    free(d->f);
    free(d->bias);
}

/* y equal to a reference of p on d: TensorFlow Lite's integer requantization (the C path)
 * or, `xnnpack`, XNNPACK's float one (the XNNPACK path); the two references differ by at
 * most one unit (checked too). */
static void q8_expect_ref(const q8_params *p, const q8_data *d, const mp_tensor *y, bool xnnpack)
{
    size_t on = mp_tensor_elements(y), bounded = 0;
    assert_int_equal(y->dims[1], kh_conv_out_size(p->h, p->kh, p->sh, p->dh, p->padding));
    assert_int_equal(y->dims[2], kh_conv_out_size(p->w, p->kw, p->sw, p->dw, p->padding));
    assert_int_equal(y->dims[3], p->c * p->mult);
    int32_t *xnn = malloc(on * sizeof(int32_t)), *tfl = malloc(on * sizeof(int32_t)), lo, hi;
    ref_q8(p, d, xnn, tfl);
    q8_act_range(p, d, &lo, &hi);
    for (size_t i = 0; i < on; i++) {
        int32_t got = q8_at(p, y->data, i), want = xnnpack ? xnn[i] : tfl[i];
        if (got != want)
            fail_msg("output %zu: %d, want %d (%s requantization)", i, got, want,
                     xnnpack ? "XNNPACK's float" : "TensorFlow Lite's integer");
        assert_true(abs(xnn[i] - tfl[i]) <= 1);
        bounded += got == lo || got == hi;
    }
    if (p->act == MP_ACT_NONE) /* the outputs are spread, not all at the dtype's bounds */
        assert_true(bounded < on / 10);
    free(xnn);
    free(tfl);
}

/* The C path bit-exact with TensorFlow Lite's integer reference, XNNPACK's path with its
 * float one, and the two paths within one unit of each other: the two requantizations (one
 * rounding of sum * scale in float; a multiplier rounded to 31 bits and two roundings in
 * the integers) differ by at most one unit. */
static void check_q8(const q8_params *p, uint32_t seed)
{
    q8_data d = q8_fill(p, seed);
    kh_case cx, cc;
    mp_tensor *yx, *yc;
    q8_run(&cx, p, &d, MP_DWCONV_XNNPACK, &yx);
    q8_run(&cc, p, &d, MP_DWCONV_C, &yc);
    size_t on = mp_tensor_elements(yc);
    assert_int_equal(on, mp_tensor_elements(yx));
    for (size_t i = 0; i < on; i++)
        assert_true(abs(q8_at(p, yc->data, i) - q8_at(p, yx->data, i)) <= 1);
    q8_expect_ref(p, &d, yc, false);
    q8_expect_ref(p, &d, yx, true);
    kh_free(&cx);
    kh_free(&cc);
    q8_free(&d);
}

/* Depth multipliers 2 to 8 in 8 bits (int8 per channel and per tensor, uint8): the blocks,
 * what they leave, fewer than sixteen inputs, SAME and VALID, strides and dilations 2,
 * activations, with and without bias; the C path bit-exact with TensorFlow Lite's integers,
 * XNNPACK's within one unit. */
static void test_dw_q8_multiplier(void **state)
{
    (void)state;
    static const q8_params cases[] = {
        {Q_QC8, 2, 10, 9, 16, 2, 3, 3, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
        {Q_QC8, 1, 11, 12, 37, 3, 3, 3, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true},
        {Q_QS8, 2, 12, 10, 21, 4, 5, 5, 1, 1, 2, 2, MP_PAD_VALID, MP_ACT_RELU, false},
        {Q_QU8, 1, 9, 11, 32, 2, 3, 3, 2, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
        {Q_QU8, 2, 10, 10, 16, 8, 3, 5, 1, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU_N1_TO_1, true},
        {Q_QC8, 1, 8, 8, 24, 5, 3, 3, 1, 1, 1, 1, MP_PAD_VALID, MP_ACT_NONE, true},
        {Q_QS8, 1, 9, 9, 18, 7, 3, 3, 2, 2, 2, 2, MP_PAD_SAME, MP_ACT_NONE, true},
        {Q_QC8, 1, 9, 9, 20, 6, 1, 7, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, false},
        /* fewer than sixteen input channels (the C path forced) */
        {Q_QS8, 1, 12, 12, 3, 8, 3, 3, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
        {Q_QU8, 1, 10, 10, 5, 4, 3, 3, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU, true},
        {Q_QC8, 1, 10, 10, 7, 2, 3, 3, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
        /* 1000 taps: sums that could pass 2^24, in the integers */
        {Q_QC8, 1, 1000, 1, 16, 2, 1000, 1, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_q8(&cases[i], 101 + (uint32_t)i);
}

/* The input's channels change between prepares (8 then 4, the multiplier 1 then 2): the
 * float sums prepared for multiplier 1 are not used with 2. */
static void test_dw_q8_channels_change(void **state)
{
    (void)state;
    q8_params p = {Q_QC8, 1, 14, 1, 8, 1, 31, 1, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true};
    q8_data d = q8_fill(&p, 41);
    kh_case c;
    mp_tensor *y;
    q8_run(&c, &p, &d, MP_DWCONV_C, &y);
    q8_expect_ref(&p, &d, y, false);
    mp_tensor *x = c.in[0];
    p.c = 4;
    p.mult = 2;
    assert_true(mp_tensor_set_shape(x, 4, (int32_t[]){1, 14, 1, 4}));
    memcpy(x->data, d.x, x->bytes); /* the first 56 of the 112 bytes: it got smaller */
    mp_dwconv_set_policy(MP_DWCONV_C);
    kh_expect_ok(&c, kh_run(&c));
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
    q8_expect_ref(&p, &d, y, false);
    kh_free(&c);
    q8_free(&d);
}

/* The sixteen-lane requantization of the run (mp_dwconv_requant16) against the scalar
 * mp_multiply_by_quantized_multiplier and the restatement above, lane for lane (multipliers
 * in [0, 2^31), as prepare makes them). */
static void expect_requant16(const int32_t *x, const int32_t *m, const int32_t *l,
                             const int32_t *r)
{
    int32_t got[16];
    mp_dwconv_requant16(x, m, l, r, got);
    for (int i = 0; i < 16; i++) {
        int32_t want = mp_multiply_by_quantized_multiplier(x[i], m[i], l[i] - r[i]);
        if (got[i] != want || want != tfl_multiply(x[i], m[i], l[i] - r[i]))
            fail_msg("%d * %d shift %d: %d, want %d (restated %d)", x[i], m[i], l[i] - r[i],
                     got[i], want, tfl_multiply(x[i], m[i], l[i] - r[i]));
    }
}

static void test_dw_requant16(void **state)
{
    (void)state;
    /* edge sums: the int32 bounds, 0, +-1, and ties of the final division (-3 * 2^right
     * and -2^right, halved by the multiplier 2^30, leave -3 and -1 halves of 2^right) */
    uint32_t seed = 5;
    int32_t x[16], m[16], l[16], r[16];
    for (int right = 0; right <= 31; right++)
        for (int k = 0; k < 8; k++) {
            int64_t p2 = INT64_C(1) << right;
            const int64_t sums[16] = {INT32_MIN, INT32_MAX, 0, 1, -1, -3 * p2, -p2, 3 * p2, p2,
                                      -p2 + 1, -p2 - 1, 2, -2, INT32_MIN + 1, INT32_MAX - 1,
                                      -5 * p2};
            static const int32_t mults[8] = {1 << 30, INT32_MAX, (1 << 30) + 1, 1518500250,
                                             2147483000, 1 << 30, 1234567890, 0};
            for (int i = 0; i < 16; i++) {
                int64_t v = sums[i] < INT32_MIN || sums[i] > INT32_MAX ? sums[i] / 7 : sums[i];
                x[i] = (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
                m[i] = mults[(k + i) % 8];
                l[i] = 0;
                r[i] = right;
            }
            expect_requant16(x, m, l, r);
            /* left shifts (effective scales of 1 and above) wrap, as TensorFlow Lite's */
            for (int i = 0; i < 16; i++) {
                l[i] = right;
                r[i] = 0;
            }
            expect_requant16(x, m, l, r);
        }
    /* random sums, multipliers and shifts as prepare makes them from scales 2^-40 .. 2^40 */
    for (int it = 0; it < 20000; it++) {
        for (int i = 0; i < 16; i++) {
            uint32_t u = (uint32_t)kh_irand(&seed, 65536) << 16 | (uint32_t)kh_irand(&seed, 65536);
            int bits = kh_irand(&seed, 33);
            x[i] = bits == 32 ? (int32_t)u
                              : (int32_t)((int64_t)(u & (uint32_t)((INT64_C(1) << bits) - 1)) -
                                          (INT64_C(1) << bits) / 2);
            double real = ldexp(1.0 + kh_irand(&seed, 1 << 20) / 1048576.0,
                                kh_irand(&seed, 81) - 40);
            assert_true(mp_dwconv_requant_params(real, &m[i], &l[i], &r[i]));
            assert_true(l[i] >= 0 && l[i] <= 31 && r[i] >= 0 && r[i] <= 31);
            int32_t tm;
            int ts;
            tfl_quantize_multiplier(real, &tm, &ts);
            assert_int_equal(m[i], ts > 31 ? 0 : tm); /* above 2^31 the result is 0 either way */
        }
        expect_requant16(x, m, l, r);
    }
    /* a scale of 2^40: every bit shifted out, as multiplier 0 */
    assert_true(mp_dwconv_requant_params(ldexp(1.0, 40), &m[0], &l[0], &r[0]));
    assert_int_equal(m[0], 0);
    assert_int_equal(l[0] + r[0], 0);
    assert_int_equal(mp_multiply_by_quantized_multiplier(12345, 1 << 30, 42), 0);
    assert_false(mp_dwconv_requant_params(INFINITY, &m[0], &l[0], &r[0]));
}

static void test_dw_q8(void **state)
{
    (void)state;
    static const q8_params cases[] = {
        /* the conformer's shape, cut down, per-channel int8 */
        {Q_QC8, 2, 40, 1, 83, 1, 31, 1, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
        {Q_QS8, 1, 12, 11, 19, 1, 7, 7, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_RELU, true},
        {Q_QU8, 2, 13, 14, 21, 1, 5, 6, 2, 1, 1, 2, MP_PAD_VALID, MP_ACT_RELU6, true},
        {Q_QC8, 1, 9, 8, 5, 2, 3, 9, 1, 2, 2, 1, MP_PAD_SAME, MP_ACT_RELU_N1_TO_1, false},
        {Q_QU8, 1, 10, 10, 40, 2, 1, 26, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, false},
        {Q_QC8, 3, 20, 3, 16, 1, 13, 2, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU6, true},
        /* 1000 taps: sums that could pass 2^24, added in the integers (not in float) */
        {Q_QC8, 1, 1000, 1, 16, 1, 1000, 1, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
        /* XNNPACK's own tiles, on the C path too */
        {Q_QC8, 1, 9, 9, 24, 1, 3, 3, 1, 1, 1, 1, MP_PAD_SAME, MP_ACT_NONE, true},
        {Q_QS8, 2, 8, 9, 33, 1, 5, 5, 2, 2, 1, 1, MP_PAD_SAME, MP_ACT_RELU, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_q8(&cases[i], 17 + (uint32_t)i);
    /* sums in float only while they stay below 2^24: 255 * 127 per tap (uint8 input of zero
     * point 0, int8 weights up to 127) allows 518 taps */
    int8_t w[600 * 2];
    memset(w, 127, sizeof w);
    float wf[600 * 2];
    mp_dwconv d = {.k_h = 518, .k_w = 1, .in_c = 2, .mult = 1, .filter_q = w, .in_zp = -128};
    assert_true(mp_dwconv_q8_float_filter(&d, wf));
    assert_true(wf[0] == 127.0f);
    d.k_h = 519;
    assert_false(mp_dwconv_q8_float_filter(&d, wf));
    /* AUTO takes the C path where XNNPACK has no quantized microkernel */
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
    assert_true(mp_dwconv_wanted_q8(31, 1, 8, 1));
    assert_true(mp_dwconv_wanted_q8(3, 1, 8, 1));
    assert_false(mp_dwconv_wanted_q8(3, 3, 32, 1));
    assert_false(mp_dwconv_wanted_q8(5, 5, 32, 1));
    /* and multipliers 2 to 8 from sixteen input channels on (with AVX-512) */
    assert_int_equal(mp_dwconv_wanted_q8(3, 3, 16, 2), mult_blocks_fast());
    assert_int_equal(mp_dwconv_wanted_q8(5, 5, 32, 8), mult_blocks_fast());
    assert_int_equal(mp_dwconv_wanted_q8(7, 7, 20, 3), mult_blocks_fast());
    assert_false(mp_dwconv_wanted_q8(3, 3, 8, 2));
    assert_false(mp_dwconv_wanted_q8(3, 3, 32, 9));
}

/* Two int8 per-channel 31x1 DEPTHWISE_CONV_2D (the C path) in a writer-built model, in
 * static and dynamic memory: the same bytes, each layer TensorFlow Lite's integer result. */
enum { QM_N = 2, QM_H = 37, QM_C = 19, QM_K = 31 };

static void run_dw_q8_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    q8_params p = {Q_QC8, QM_N, QM_H, 1, QM_C, 1, QM_K, 1, 1, 1, 1, 1, MP_PAD_SAME,
                   MP_ACT_RELU, true};
    q8_data d = q8_fill(&p, 77);
    /* layer 2 reads layer 1's output: its input scale and zero point */
    q8_data d2 = d;
    d2.in_s = d.out_s;
    d2.in_zp = d.out_zp;
    d2.out_s = d.out_s * 0.006f * 5600.0f * sqrtf((float)QM_K) / 64.0f;
    d2.out_zp = -3;
    mp_tfw *w = mp_tfw_create();
    int32_t xd[4] = {QM_N, QM_H, 1, QM_C}, fd[4] = {1, QM_K, 1, QM_C}, bd = QM_C;
    int xt = mp_tfw_tensor(w, "x", MP_DT_INT8, 4, xd, 0, NULL);
    int ft = mp_tfw_tensor(w, "f", MP_DT_INT8, 4, fd, mp_tfw_buffer(w, d.f, QM_K * QM_C), NULL);
    int bt = mp_tfw_tensor(w, "b", MP_DT_INT32, 1, &bd,
                           mp_tfw_buffer(w, d.bias, QM_C * sizeof(int32_t)), NULL);
    int h = mp_tfw_tensor(w, "h", MP_DT_INT8, 4, xd, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_INT8, 4, xd, 0, NULL);
    float bs[QM_C];
    for (int i = 0; i < QM_C; i++)
        bs[i] = d.in_s * d.w_s[i];
    mp_tfw_tensor_quant(w, xt, 1, &d.in_s, &d.in_zp, 0);
    mp_tfw_tensor_quant(w, ft, QM_C, d.w_s, NULL, 3);
    mp_tfw_tensor_quant(w, bt, QM_C, bs, NULL, 0);
    mp_tfw_tensor_quant(w, h, 1, &d.out_s, &d.out_zp, 0);
    mp_tfw_tensor_quant(w, y, 1, &d2.out_s, &d2.out_zp, 0);
    size_t n = (size_t)QM_N * QM_H * QM_C;
    mp_session *s = dw_two_layers(w, mode, (int[]){xt, ft, bt, h, y}, d.x, n, "dwconv q8");
    const mp_tensor *t = mp_session_output(s, 0);
    assert_int_equal(t->bytes, n);
    sizes[0] = t->bytes;
    out[0] = malloc(t->bytes + 1);
    memcpy(out[0], t->data, t->bytes);
    /* the two layers by the reference */
    int32_t *xnn = malloc(n * sizeof(int32_t)), *mid = malloc(n * sizeof(int32_t));
    uint8_t *midb = malloc(n);
    ref_q8(&p, &d, xnn, mid);
    for (size_t i = 0; i < n; i++)
        midb[i] = (uint8_t)(int8_t)mid[i];
    d2.x = midb;
    p.act = MP_ACT_NONE;
    q8_expect_ref(&p, &d2, t, false);
    mp_session_destroy(s);
    free(xnn);
    free(mid);
    free(midb);
    q8_free(&d);
}

static void test_dw_q8_model_static_dynamic(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_dw_q8_model, 1);
}

/* One DEPTHWISE_CONV_2D of multiplier 2 (float32, 20 channels, 3x3 stride 2, SAME, RELU6)
 * and one of multiplier 3 (int8 per channel, 3x3 dilation 2, VALID, RELU), each in a
 * writer-built model of its own, on the C path, static and dynamic sessions: the same bytes,
 * each against its reference (int8: TensorFlow Lite's integers, bit for bit). */
enum { MM_N = 2, MM_H = 11, MM_W = 9, MM_C = 20 };

static void run_dw_mult_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    enum { OC = MM_C * 2, OH = (MM_H + 1) / 2, OW = (MM_W + 1) / 2 };
    static float filt[9 * OC], bias[OC], x[MM_N * MM_H * MM_W * MM_C], want[MM_N * OH * OW * OC];
    kh_fill(filt, 9 * OC, 17, 1.0f);
    kh_fill(bias, OC, 18, 1.0f);
    kh_fill(x, MM_N * MM_H * MM_W * MM_C, 19, 1.0f);
    mp_tfw *w = mp_tfw_create();
    int32_t xd[4] = {MM_N, MM_H, MM_W, MM_C}, fd[4] = {1, 3, 3, OC}, yd[4] = {MM_N, OH, OW, OC};
    int32_t bd = OC;
    int xt = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, xd, 0, NULL);
    int ft = mp_tfw_tensor(w, "f", MP_DT_FLOAT32, 4, fd, mp_tfw_buffer(w, filt, sizeof filt),
                           NULL);
    int bt = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, &bd, mp_tfw_buffer(w, bias, sizeof bias),
                           NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 4, yd, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = o.stride_w = 2;
    o.depth_multiplier = 2;
    o.activation = MP_ACT_RELU6;
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){xt, ft, bt}, 1, &y, &o);
    mp_tfw_io(w, 1, &xt, 1, &y);
    mp_test_model m = mp_test_tfw_finish(w);
    kh_run_single_input(mode, m.bytes, m.size, "dwconv multiplier 2", x, sizeof x, out, sizes);
    dw_params p = {.n = MM_N, .h = MM_H, .w = MM_W, .c = MM_C, .mult = 2, .kh = 3, .kw = 3,
                   .sh = 2, .sw = 2, .dh = 1, .dw = 1, .padding = MP_PAD_SAME,
                   .act = MP_ACT_RELU6, .bias = true};
    ref_dw(&p, MM_H, MM_W, x, filt, bias, want);
    assert_int_equal(sizes[0], sizeof want);
    kh_expect_close(out[0], want, sizeof want / sizeof want[0], 3.0);
}

static void run_dw_mult_q8_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    q8_params p = {Q_QC8, MM_N, MM_H, MM_W, MM_C, 3, 3, 3, 1, 1, 2, 2, MP_PAD_VALID,
                   MP_ACT_RELU, true};
    enum { OC = MM_C * 3 };
    q8_data d = q8_fill(&p, 91);
    mp_tfw *w = mp_tfw_create();
    int32_t xd[4] = {MM_N, MM_H, MM_W, MM_C}, fd[4] = {1, 3, 3, OC}, bd = OC;
    int32_t yd[4] = {MM_N, MM_H - 4, MM_W - 4, OC};
    int xt = mp_tfw_tensor(w, "x", MP_DT_INT8, 4, xd, 0, NULL);
    int ft = mp_tfw_tensor(w, "f", MP_DT_INT8, 4, fd, mp_tfw_buffer(w, d.f, 9 * OC), NULL);
    int bt = mp_tfw_tensor(w, "b", MP_DT_INT32, 1, &bd,
                           mp_tfw_buffer(w, d.bias, OC * sizeof(int32_t)), NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_INT8, 4, yd, 0, NULL);
    float bs[OC];
    for (int i = 0; i < OC; i++)
        bs[i] = d.in_s * d.w_s[i];
    mp_tfw_tensor_quant(w, xt, 1, &d.in_s, &d.in_zp, 0);
    mp_tfw_tensor_quant(w, ft, OC, d.w_s, NULL, 3);
    mp_tfw_tensor_quant(w, bt, OC, bs, NULL, 0);
    mp_tfw_tensor_quant(w, y, 1, &d.out_s, &d.out_zp, 0);
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 1;
    o.dilation_h = o.dilation_w = 2;
    o.depth_multiplier = 3;
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){xt, ft, bt}, 1, &y, &o);
    mp_tfw_io(w, 1, &xt, 1, &y);
    mp_test_model m = mp_test_tfw_finish(w);
    size_t n = (size_t)MM_N * MM_H * MM_W * MM_C;
    mp_session *s = kh_session(mode, m.bytes, m.size, "dwconv multiplier 3 int8");
    mp_error err = {0};
    assert_int_equal(mp_session_set_input(s, 0, d.x, n, &err), MP_OK);
    if (mp_session_run(s, &err) != MP_OK)
        fail_msg("run (%s): %s", mp_memory_mode_name(mode), err.msg);
    const mp_tensor *t = mp_session_output(s, 0);
    q8_expect_ref(&p, &d, t, false);
    sizes[0] = t->bytes;
    out[0] = malloc(t->bytes + 1);
    memcpy(out[0], t->data, t->bytes);
    mp_session_destroy(s);
    q8_free(&d);
}

static void test_dw_mult_model_static_dynamic(void **state)
{
    (void)state;
    mp_dwconv_set_policy(MP_DWCONV_C);
    kh_expect_modes_equal(run_dw_mult_model, 1);
    kh_expect_modes_equal(run_dw_mult_q8_model, 1);
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
}

/* ---- the conformer (../shared): its 31-tap operator on either path, the same outputs ---- */

/* Output 0 of the model run once on the reference input with depthwise convolutions under
 * `policy` (malloc'd floats, *n of them), and the kernel memory the session holds then. */
static float *run_shared_model(const char *path, mp_dwconv_policy policy, size_t *n,
                               uint64_t *kernel_bytes)
{
    mp_session_options o = {.mode = MP_MEMORY_STATIC};
    mp_session *s = NULL;
    mp_error err = {0};
    mp_dwconv_set_policy(policy);
    assert_int_equal(mp_session_create(&o, &s, &err), MP_OK);
    if (mp_session_load(s, path, &err) != MP_OK || mp_session_prepare(s, &err) != MP_OK)
        fail_msg("%s", err.msg);
    for (int k = 0; k < mp_session_input_count(s); k++) {
        const mp_tensor *in = mp_session_input(s, k);
        void *buf = malloc(in->bytes + 1);
        assert_true(mp_reference_input(buf, in->dtype, mp_tensor_elements(in), k));
        assert_int_equal(mp_session_set_input(s, k, buf, in->bytes, &err), MP_OK);
        free(buf);
    }
    if (mp_session_run(s, &err) != MP_OK) /* under the policy too: a run may prepare again */
        fail_msg("%s", err.msg);
    mp_dwconv_set_policy(MP_DWCONV_AUTO);
    *kernel_bytes = mp_mem_get_stats(mp_session_mem(s))->live[MP_MEM_KERNEL];
    const mp_tensor *y = mp_session_output(s, 0);
    assert_int_equal(y->dtype, MP_DT_FLOAT32);
    *n = mp_tensor_elements(y);
    float *out = malloc(y->bytes + 1);
    memcpy(out, y->data, y->bytes);
    mp_session_destroy(s);
    return out;
}

static void test_dw_conformer_paths(void **state)
{
    (void)state;
    const char *path = mp_test_shared_dir()
                           ? mp_test_path("models", "litert_torchaudio_conformer.tflite")
                           : NULL;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        fprintf(stderr, "skipped: the conformer model (../shared/models) is absent\n");
        skip();
    }
    fclose(f);
    size_t na, nb;
    uint64_t ka, kb;
    float *a = run_shared_model(path, MP_DWCONV_XNNPACK, &na, &ka);
    float *b = run_shared_model(path, MP_DWCONV_AUTO, &nb, &kb);
    assert_int_equal(na, nb);
    /* the C path holds no packed filter: XNNPACK's 1x31 x 80 one (at least its 9920 bytes of
     * floats) is gone */
    assert_true(ka >= kb + 31 * 80 * sizeof(float));
    double big = 0;
    for (size_t i = 0; i < na; i++)
        big = fmax(big, fabs((double)a[i]));
    size_t at = 0;
    double e = mp_test_max_rel_err(b, a, na, 1e-3 * big, &at); /* test_oracle's tolerance */
    if (e > 1e-4)
        fail_msg("output %zu: %g on the C path, %g on XNNPACK (relative %g)", at, (double)b[at],
                 (double)a[at], e);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dw_1d_31_taps),
        cmocka_unit_test(test_dw_taps_26_to_49),
        cmocka_unit_test(test_dw_strides_dilations),
        cmocka_unit_test(test_dw_multiplier),
        cmocka_unit_test(test_dw_multiplier_blocks),
        cmocka_unit_test(test_dw_activations),
        cmocka_unit_test(test_dw_small_inputs_and_hybrid),
        cmocka_unit_test(test_dw_thread_pool),
        cmocka_unit_test(test_dw_against_xnnpack),
        cmocka_unit_test(test_dw_choice),
        cmocka_unit_test(test_dw_refusals),
        cmocka_unit_test(test_dw_q8),
        cmocka_unit_test(test_dw_q8_multiplier),
        cmocka_unit_test(test_dw_q8_channels_change),
        cmocka_unit_test(test_dw_requant16),
        cmocka_unit_test(test_dw_q8_model_static_dynamic),
        cmocka_unit_test(test_dw_model_static_dynamic),
        cmocka_unit_test(test_dw_mult_model_static_dynamic),
        cmocka_unit_test(test_dw_conformer_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
