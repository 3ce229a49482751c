/* Tests of MediaPipe's custom segmentation operators: Convolution2DTransposeBias
 * (transpose_conv.c), MaxPoolingWithArgmax2D and MaxUnpooling2D (pool_argmax.c), and the
 * reading of their raw TfLite*Params custom options (model/tflite_custom_mediapipe.c).
 * Hand-worked cases (SAME and VALID, strides, padding before the first row, a tie in the
 * maximum, unpooling indices that collide, point outside the output or are not numbers),
 * random cases against plain references restated here from MediaPipe's definitions, refusals
 * with their messages, and an encoder-decoder model written with the writer, run in static
 * and dynamic modes with equal outputs. */
#include "tests/util/testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

/* ---- plain references (MediaPipe's loops, restated) -------------------------------------- */

/* Convolution2DTransposeBias: x [n,h,w,ic], wt [oc,kh,kw,ic], b [oc]; per axis total =
 * SAME ? max(k - (in-1) % s - 1, 0) : 0, out = s*(in-1) + k - total, pad = total / 2; every
 * output starts at its bias and each input pixel adds x * w at (y*s - pad + fy, ...). */
static void ref_axis(bool same, int in, int k, int s, int *out, int *pad)
{
    int total = same ? k - (in - 1) % s - 1 : 0;
    if (total < 0)
        total = 0;
    *out = s * (in - 1) + k - total;
    *pad = total / 2;
}

static void ref_tconv(bool same, int n, int h, int w, int ic, int oc, int kh, int kw, int sh,
                      int sw, const float *x, const float *wt, const float *b, float *y)
{
    int oh, ow, ph, pw;
    ref_axis(same, h, kh, sh, &oh, &ph);
    ref_axis(same, w, kw, sw, &ow, &pw);
    for (int bi = 0; bi < n; bi++) {
        for (int i = 0; i < oh * ow; i++)
            for (int o = 0; o < oc; o++)
                y[((size_t)bi * oh * ow + i) * oc + o] = b[o];
        for (int iy = 0; iy < h; iy++)
            for (int ix = 0; ix < w; ix++)
                for (int c = 0; c < ic; c++)
                    for (int fy = 0; fy < kh; fy++)
                        for (int fx = 0; fx < kw; fx++)
                            for (int o = 0; o < oc; o++) {
                                int oy = iy * sh - ph + fy, ox = ix * sw - pw + fx;
                                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow)
                                    continue;
                                y[(((size_t)bi * oh + oy) * ow + ox) * oc + o] +=
                                    x[(((size_t)bi * h + iy) * w + ix) * ic + c] *
                                    wt[(((size_t)o * kh + fy) * kw + fx) * ic + c];
                            }
    }
}

/* MaxPoolingWithArgmax2D: the first strictly greatest value of each clipped window (from the
 * lowest float), index fy * fw + fx + 0.1 in window coordinates; no activation here. */
static void ref_argmax(bool same, int n, int h, int w, int c, int fh, int fw, int sh, int sw,
                       const float *x, float *y, float *idx, int *oh_out, int *ow_out)
{
    int oh = same ? (h + sh - 1) / sh : (h - fh + sh) / sh;
    int ow = same ? (w + sw - 1) / sw : (w - fw + sw) / sw;
    int ph = ((oh - 1) * sh + fh - h) / 2, pw = ((ow - 1) * sw + fw - w) / 2;
    ph = ph > 0 ? ph : 0;
    pw = pw > 0 ? pw : 0;
    for (int bi = 0; bi < n; bi++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int ch = 0; ch < c; ch++) {
                    float best = -FLT_MAX;
                    int by = 0, bx = 0;
                    for (int fy = 0; fy < fh; fy++)
                        for (int fx = 0; fx < fw; fx++) {
                            int iy = oy * sh - ph + fy, ix = ox * sw - pw + fx;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                continue;
                            float v = x[(((size_t)bi * h + iy) * w + ix) * c + ch];
                            if (v > best) {
                                best = v;
                                by = fy;
                                bx = fx;
                            }
                        }
                    size_t o = (((size_t)bi * oh + oy) * ow + ox) * c + ch;
                    y[o] = best;
                    idx[o] = (float)(by * fw + bx) + 0.1f;
                }
    *oh_out = oh;
    *ow_out = ow;
}

/* MaxUnpooling2D: output [n, h*fh, w*fw, c] zeroed, value at (y*sh - ph + k/fw, x*sw - pw +
 * k%fw) for k = (int) index, skipped outside the output (indices here are in int range). */
static void ref_unpool(int n, int h, int w, int c, int fh, int fw, int sh, int sw,
                       const float *x, const float *ix, float *y)
{
    int oh = h * fh, ow = w * fw;
    int ph = ((h - 1) * sh + fh - oh) / 2, pw = ((w - 1) * sw + fw - ow) / 2;
    ph = ph > 0 ? ph : 0;
    pw = pw > 0 ? pw : 0;
    memset(y, 0, (size_t)n * oh * ow * c * sizeof(float));
    for (int bi = 0; bi < n; bi++)
        for (int iy = 0; iy < h; iy++)
            for (int jx = 0; jx < w; jx++)
                for (int ch = 0; ch < c; ch++) {
                    size_t i = (((size_t)bi * h + iy) * w + jx) * c + ch;
                    int k = (int)ix[i];
                    int oy = iy * sh - ph + k / fw, ox = jx * sw - pw + k % fw;
                    if (oy >= 0 && oy < oh && ox >= 0 && ox < ow)
                        y[(((size_t)bi * oh + oy) * ow + ox) * c + ch] = x[i];
                }
}

/* ---- Convolution2DTransposeBias ---------------------------------------------------------- */

/* One case: x [1,h,w,1], weights [1,k,k,1] (constant unless var_w), bias b; the output must be
 * [1,oh,ow,1] = want. */
static void tcb_case(int32_t padding, int32_t h, int32_t w, const float *x, int32_t k,
                     const float *wt, float b, int32_t stride, bool var_w, int32_t oh,
                     int32_t ow, const float *want)
{
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE_CONV_BIAS, NULL);
    c.opt.padding = padding;
    c.opt.stride_h = c.opt.stride_w = stride;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, h, w, 1}, x);
    mp_tensor *wtt = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, k, k, 1}, var_w ? NULL : wt);
    if (var_w)
        memcpy(wtt->data, wt, (size_t)k * k * sizeof(float));
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, &b);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 4);
    assert_int_equal(out->dims[0], 1);
    assert_int_equal(out->dims[1], oh);
    assert_int_equal(out->dims[2], ow);
    assert_int_equal(out->dims[3], 1);
    kh_expect_close(out->data, want, (size_t)oh * ow, 1.0);
    kh_free(&c);
}

static void test_tconv_bias_hand(void **state)
{
    (void)state;
    const float x[4] = {1, 2, 3, 4};
    /* 2x2 weights, stride 2, SAME: total 0, output 4x4, each input pixel times the weights
     * in its own 2x2 block, plus the bias 0.5 */
    const float w2[4] = {1, 10, 100, 1000};
    const float want2[16] = {1.5f,   10.5f,   2.5f,   20.5f,   100.5f, 1000.5f, 200.5f, 2000.5f,
                             3.5f,   30.5f,   4.5f,   40.5f,   300.5f, 3000.5f, 400.5f, 4000.5f};
    for (int var = 0; var < 2; var++) /* XNNPACK (constant weights) and plain C */
        tcb_case(MP_PAD_SAME, 2, 2, x, 2, w2, 0.5f, 2, var, 4, 4, want2);
    /* 3x3 ones, stride 2: SAME total 1 (pad 0 before), output 4x4; row and column 2 get the
     * taps of both input rows / columns, the last tap of row 1 is cut */
    const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const float want_same[16] = {1, 1, 3, 2, 1, 1, 3, 2, 4, 4, 10, 6, 3, 3, 7, 4};
    /* VALID: total 0, output 5x5, nothing cut */
    const float want_valid[25] = {1, 1, 3, 2, 2, 1, 1, 3, 2, 2, 4, 4, 10, 6, 6,
                                  3, 3, 7, 4, 4, 3, 3, 7, 4, 4};
    for (int var = 0; var < 2; var++) {
        tcb_case(MP_PAD_SAME, 2, 2, x, 3, ones, 0, 2, var, 4, 4, want_same);
        tcb_case(MP_PAD_VALID, 2, 2, x, 3, ones, 0, 2, var, 5, 5, want_valid);
    }
    /* 4x4 weights w[fy][fx] = 4fy + fx, stride 1, SAME: total 3, output 2x2, padding 1
     * before: out(oy,ox) = sum x(iy,ix) * w(oy+1-iy, ox+1-ix) */
    float w4[16];
    for (int i = 0; i < 16; i++)
        w4[i] = (float)i;
    const float want4[4] = {16 - 1, 26 - 1, 56 - 1, 66 - 1};
    for (int var = 0; var < 2; var++)
        tcb_case(MP_PAD_SAME, 2, 2, x, 4, w4, -1.0f, 1, var, 2, 2, want4);
}

static void tcb_random(bool same, int n, int h, int w, int ic, int oc, int kh, int kw, int sh,
                       int sw, bool var_w, uint32_t seed)
{
    size_t nx = (size_t)n * h * w * ic, nw = (size_t)oc * kh * kw * ic;
    float *x = malloc(nx * sizeof(float)), *wt = malloc(nw * sizeof(float));
    float *b = malloc((size_t)oc * sizeof(float));
    kh_fill(x, nx, seed, 1.0f);
    kh_fill(wt, nw, seed + 1, 1.0f);
    kh_fill(b, (size_t)oc, seed + 2, 1.0f);
    int oh, ow, ph, pw;
    ref_axis(same, h, kh, sh, &oh, &ph);
    ref_axis(same, w, kw, sw, &ow, &pw);
    size_t ny = (size_t)n * oh * ow * oc;
    float *want = malloc(ny * sizeof(float));
    ref_tconv(same, n, h, w, ic, oc, kh, kw, sh, sw, x, wt, b, want);
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE_CONV_BIAS, NULL);
    c.opt.padding = same ? MP_PAD_SAME : MP_PAD_VALID;
    c.opt.stride_h = sh;
    c.opt.stride_w = sw;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){n, h, w, ic}, x);
    mp_tensor *wtt = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){oc, kh, kw, ic}, var_w ? NULL : wt);
    if (var_w)
        memcpy(wtt->data, wt, nw * sizeof(float));
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){oc}, b);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], n);
    assert_int_equal(out->dims[1], oh);
    assert_int_equal(out->dims[2], ow);
    assert_int_equal(out->dims[3], oc);
    kh_expect_close(out->data, want, ny, 4.0);
    kh_free(&c);
    free(x);
    free(wt);
    free(b);
    free(want);
}

static void test_tconv_bias_random(void **state)
{
    (void)state;
    for (int var = 0; var < 2; var++)
        for (int same = 0; same < 2; same++) {
            tcb_random(same, 2, 3, 5, 3, 4, 3, 2, 2, 1, var, 11u + (unsigned)var);
            tcb_random(same, 1, 4, 4, 2, 3, 4, 4, 2, 2, var, 23u);
            tcb_random(same, 1, 3, 2, 5, 2, 2, 3, 3, 2, var, 37u);
            tcb_random(same, 1, 5, 4, 1, 1, 5, 5, 1, 1, var, 41u); /* padding 2 before */
        }
}

static void test_tconv_bias_errors(void **state)
{
    (void)state;
    const float x[8] = {0}, w[8] = {0}, b[2] = {0};
    struct {
        int32_t in_dims[4], w_dims[4], b_rank, b_dims[2];
        mp_dtype w_dt;
        int32_t stride, padding;
        mp_status st;
        const char *needle;
    } bad[] = {
        {{1, 2, 2, 2}, {2, 1, 1, 2}, 1, {2, 0}, MP_DT_INT8, 1, MP_PAD_SAME, MP_ERR_UNSUPPORTED,
         "weights 't1' (i8), bias 't2' (f32) and output 't3' (f32) must be float32"},
        {{1, 2, 2, 2}, {2, 1, 1, 2}, 2, {1, 2}, MP_DT_FLOAT32, 1, MP_PAD_SAME, MP_ERR_SHAPE,
         "bias 't2' [1,2] must have rank 1"},
        {{1, 2, 2, 2}, {2, 1, 1, 2}, 1, {1, 0}, MP_DT_FLOAT32, 1, MP_PAD_SAME, MP_ERR_SHAPE,
         "must have 2 values"},
        {{1, 2, 2, 1}, {2, 1, 1, 2}, 1, {2, 0}, MP_DT_FLOAT32, 1, MP_PAD_SAME, MP_ERR_SHAPE,
         "NHWC with I channels"},
        {{1, 0, 2, 2}, {2, 1, 1, 2}, 1, {2, 0}, MP_DT_FLOAT32, 1, MP_PAD_SAME, MP_ERR_SHAPE,
         "gives no output size"},
        {{1, 2, 2, 2}, {2, 1, 1, 2}, 1, {2, 0}, MP_DT_FLOAT32, 0, MP_PAD_SAME,
         MP_ERR_UNSUPPORTED, "stride 0x0 is not valid"},
        {{1, 2, 2, 2}, {2, 1, 1, 2}, 1, {2, 0}, MP_DT_FLOAT32, 1, 7, MP_ERR_UNSUPPORTED,
         "padding 7 is not SAME or VALID"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_TRANSPOSE_CONV_BIAS, NULL);
        c.opt.padding = bad[k].padding;
        c.opt.stride_h = c.opt.stride_w = bad[k].stride;
        kh_input(&c, MP_DT_FLOAT32, 4, bad[k].in_dims, x);
        kh_input(&c, bad[k].w_dt, 4, bad[k].w_dims, w);
        kh_input(&c, MP_DT_FLOAT32, bad[k].b_rank, bad[k].b_dims, b);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, bad[k].st, bad[k].needle);
        assert_non_null(strstr(c.err.msg, "operator #0 Convolution2DTransposeBias"));
        kh_free(&c);
    }
    /* weights that are not constants run in plain C: a 32x32 kernel of 16 -> 16 channels
     * over a 32x32 image (1024 pixels x 1024 taps x 16 x 17 steps) is refused rather than run
     * for long */
    {
        kh_case g;
        kh_init(&g, MP_OP_TRANSPOSE_CONV_BIAS, NULL);
        g.opt.stride_h = g.opt.stride_w = 2;
        static float bz[16];
        kh_input(&g, MP_DT_FLOAT32, 4, (int32_t[]){1, 32, 32, 16}, NULL);
        kh_input(&g, MP_DT_FLOAT32, 4, (int32_t[]){16, 32, 32, 16}, NULL);
        kh_input(&g, MP_DT_FLOAT32, 1, (int32_t[]){16}, bz);
        kh_output(&g, MP_DT_FLOAT32);
        kh_expect_error(&g, MP_ERR_UNSUPPORTED,
                        "plain-C transposed convolution (weights 't1' not constant) takes "
                        "2.85e+08 steps, more than 2.68e+08");
        kh_free(&g);
    }
    /* three inputs exactly: TRANSPOSE_CONV's optional fourth is not one of them */
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE_CONV_BIAS, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 2}, x);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){2, 1, 1, 2}, w);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "expects 3 to 3 inputs, has 2");
    kh_free(&c);
}

/* ---- MaxPoolingWithArgmax2D -------------------------------------------------------------- */

static void argmax_case(int32_t padding, int32_t act, int32_t h, int32_t w, const float *x,
                        int32_t f, int32_t stride, int32_t oh, int32_t ow, const float *want,
                        const float *want_idx)
{
    kh_case c;
    kh_init(&c, MP_OP_MAX_POOL_ARGMAX, NULL);
    c.opt.padding = padding;
    c.opt.activation = act;
    c.opt.filter_h = c.opt.filter_w = f;
    c.opt.stride_h = c.opt.stride_w = stride;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, h, w, 1}, x);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32), *ix = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    for (int k = 0; k < 2; k++) {
        const mp_tensor *t = k ? ix : y;
        assert_int_equal(t->rank, 4);
        assert_int_equal(t->dims[1], oh);
        assert_int_equal(t->dims[2], ow);
        assert_int_equal(t->dims[3], 1);
    }
    if (oh * ow > 0) {
        assert_memory_equal(y->data, want, (size_t)oh * ow * sizeof(float));
        assert_memory_equal(ix->data, want_idx, (size_t)oh * ow * sizeof(float));
    }
    kh_free(&c);
}

static void test_argmax_hand(void **state)
{
    (void)state;
    /* VALID 2x2 stride 2 over a 4x4 image: the last window is a tie of three 7s (the first,
     * top left, wins); the third has only negative values */
    const float x[16] = {1, 3, 2, 0, 5, 4, 5, 1, -1, -2, 7, 7, -3, -4, 7, 6};
    const float idx[4] = {2.1f, 2.1f, 0.1f, 0.1f};
    argmax_case(MP_PAD_VALID, MP_ACT_NONE, 4, 4, x, 2, 2, 2, 2, (float[]){5, 5, -1, 7}, idx);
    argmax_case(MP_PAD_VALID, MP_ACT_RELU, 4, 4, x, 2, 2, 2, 2, (float[]){5, 5, 0, 7}, idx);
    argmax_case(MP_PAD_VALID, MP_ACT_RELU_N1_TO_1, 4, 4, x, 2, 2, 2, 2,
                (float[]){1, 1, -1, 1}, idx);
    argmax_case(MP_PAD_VALID, MP_ACT_RELU6, 4, 4, x, 2, 2, 2, 2, (float[]){5, 5, 0, 6}, idx);
    /* TANH clamps nothing in MediaPipe's pool (its range is the whole line) */
    argmax_case(MP_PAD_VALID, MP_ACT_TANH, 4, 4, x, 2, 2, 2, 2, (float[]){5, 5, -1, 7}, idx);
    /* SAME 3x3 stride 1 over 3x3: one pixel of padding before, the index counts from the
     * window's corner in the padded image (9 at input (0,0) is window (1,1) of output (0,0):
     * index 4) */
    const float s[9] = {9, 1, 2, 3, 4, 5, 6, 7, 8};
    argmax_case(MP_PAD_SAME, MP_ACT_NONE, 3, 3, s, 3, 1, 3, 3,
                (float[]){9, 9, 5, 9, 9, 8, 7, 8, 8},
                (float[]){4.1f, 3.1f, 7.1f, 1.1f, 0.1f, 7.1f, 5.1f, 5.1f, 4.1f});
    /* SAME 2x2 stride 2 over 3x3: output 2x2, padding 0 before (1 after) */
    argmax_case(MP_PAD_SAME, MP_ACT_NONE, 3, 3, s, 2, 2, 2, 2, (float[]){9, 5, 7, 8},
                (float[]){0.1f, 2.1f, 1.1f, 0.1f});
    /* VALID with a window larger than the image: (2 - 4 + 3) / 3 = 0 rows: empty outputs */
    argmax_case(MP_PAD_VALID, MP_ACT_NONE, 2, 2, x, 4, 3, 0, 0, NULL, NULL);
}

/* Empty tensors of huge batch and height (a fuzzed model's [33554433, 131072, 0, 0] ran for
 * minutes walking rows without a column): empty outputs of the right shapes, at once. */
static void test_empty_giants(void **state)
{
    (void)state;
    const int32_t dims[4] = {50462720, 65536, 0, 1};
    kh_case c;
    kh_init(&c, MP_OP_MAX_POOL_ARGMAX, NULL);
    c.opt.filter_h = c.opt.filter_w = 2;
    c.opt.stride_h = c.opt.stride_w = 2;
    kh_input(&c, MP_DT_FLOAT32, 4, dims, NULL);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32), *ix = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    const int32_t want[4] = {50462720, 32768, 0, 1};
    assert_memory_equal(y->dims, want, sizeof want);
    assert_memory_equal(ix->dims, want, sizeof want);
    kh_free(&c);
    kh_init(&c, MP_OP_MAX_UNPOOL, NULL);
    c.opt.filter_h = c.opt.filter_w = 2;
    c.opt.stride_h = c.opt.stride_w = 2;
    kh_input(&c, MP_DT_FLOAT32, 4, dims, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, dims, NULL);
    mp_tensor *u = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(u->dims, ((int32_t[]){50462720, 131072, 0, 1}), 4 * sizeof(int32_t));
    kh_free(&c);
}

static void test_argmax_random(void **state)
{
    (void)state;
    const struct { int same, n, h, w, c, fh, fw, sh, sw; } cases[] = {
        {0, 2, 6, 5, 3, 2, 2, 2, 2}, {1, 2, 6, 5, 3, 2, 2, 2, 2}, {1, 1, 7, 7, 2, 3, 3, 2, 2},
        {0, 1, 7, 7, 2, 3, 3, 2, 2}, {1, 1, 5, 8, 4, 3, 2, 1, 3}, {1, 1, 4, 4, 1, 5, 5, 1, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int n = cases[k].n, h = cases[k].h, w = cases[k].w, ch = cases[k].c;
        size_t nx = (size_t)n * h * w * ch;
        float *x = malloc(nx * sizeof(float)), *y = malloc(nx * sizeof(float));
        float *idx = malloc(nx * sizeof(float));
        kh_fill(x, nx, 100u + (unsigned)k, 1.0f);
        for (size_t i = 0; i < nx; i += 7) /* ties */
            x[i] = 0.5f;
        int oh, ow;
        ref_argmax(cases[k].same, n, h, w, ch, cases[k].fh, cases[k].fw, cases[k].sh,
                   cases[k].sw, x, y, idx, &oh, &ow);
        kh_case c;
        kh_init(&c, MP_OP_MAX_POOL_ARGMAX, NULL);
        c.opt.padding = cases[k].same ? MP_PAD_SAME : MP_PAD_VALID;
        c.opt.filter_h = cases[k].fh;
        c.opt.filter_w = cases[k].fw;
        c.opt.stride_h = cases[k].sh;
        c.opt.stride_w = cases[k].sw;
        kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){n, h, w, ch}, x);
        mp_tensor *ty = kh_output(&c, MP_DT_FLOAT32), *ti = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(ty->dims[1], oh);
        assert_int_equal(ty->dims[2], ow);
        assert_memory_equal(ti->dims, ty->dims, sizeof ty->dims);
        size_t ny = (size_t)n * oh * ow * ch;
        assert_memory_equal(ty->data, y, ny * sizeof(float));
        assert_memory_equal(ti->data, idx, ny * sizeof(float));
        kh_free(&c);
        free(x);
        free(y);
        free(idx);
    }
}

static void test_argmax_errors(void **state)
{
    (void)state;
    const float x[16] = {0};
    struct {
        int32_t dims[4], rank, f, stride, padding, act, n_out;
        mp_dtype in_dt, idx_dt;
        mp_status st;
        const char *needle;
    } bad[] = {
        {{1, 4, 4, 1}, 4, 2, 2, MP_PAD_VALID, 0, 1, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_FORMAT,
         "expects 1 input and 2 outputs (max, argmax), has 1 and 1"},
        {{1, 4, 4, 1}, 4, 2, 2, MP_PAD_VALID, 0, 2, MP_DT_INT8, MP_DT_FLOAT32,
         MP_ERR_UNSUPPORTED, "input 't0' is i8; expected float32"},
        {{1, 4, 4, 1}, 4, 2, 2, MP_PAD_VALID, 0, 2, MP_DT_FLOAT32, MP_DT_INT32,
         MP_ERR_UNSUPPORTED, "argmax output 't2' is i32; expected float32"},
        {{4, 4, 1, 0}, 3, 2, 2, MP_PAD_VALID, 0, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_SHAPE,
         "input 't0' [4,4,1] must have rank 4"},
        {{1, 1, 1, 1}, 4, 4, 1, MP_PAD_VALID, 0, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_SHAPE,
         "smaller than the 4x4 window with VALID padding"},
        {{1, 4, 4, 1}, 4, 0, 2, MP_PAD_VALID, 0, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_FORMAT,
         "invalid filter 0x0 or stride 2x2"},
        {{1, 4, 4, 1}, 4, 2, 2, 5, 0, 2, MP_DT_FLOAT32, MP_DT_FLOAT32, MP_ERR_UNSUPPORTED,
         "unknown padding 5"},
        {{1, 4, 4, 1}, 4, 2, 2, MP_PAD_VALID, 9, 2, MP_DT_FLOAT32, MP_DT_FLOAT32,
         MP_ERR_UNSUPPORTED, "unknown fused activation 9"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_MAX_POOL_ARGMAX, NULL);
        c.opt.padding = bad[k].padding;
        c.opt.activation = bad[k].act;
        c.opt.filter_h = c.opt.filter_w = bad[k].f;
        c.opt.stride_h = c.opt.stride_w = bad[k].stride;
        kh_input(&c, bad[k].in_dt, bad[k].rank, bad[k].dims, x);
        kh_output(&c, MP_DT_FLOAT32);
        if (bad[k].n_out == 2)
            kh_output(&c, bad[k].idx_dt);
        kh_expect_error(&c, bad[k].st, bad[k].needle);
        assert_non_null(strstr(c.err.msg, "operator #0 MaxPoolingWithArgmax2D"));
        kh_free(&c);
    }
    /* a window far larger than the image, SAME stride 1: clipped, legal, but 1000 x 1000
     * windows of up to 1000 x 1000 reads each are refused rather than run for minutes */
    kh_case c;
    kh_init(&c, MP_OP_MAX_POOL_ARGMAX, NULL);
    c.opt.filter_h = c.opt.filter_w = 4096;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 1000, 1000, 1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "the 4096x4096 window over input 't0' takes 1e+12 reads, more than 2.68e+08");
    kh_free(&c);
}

/* ---- MaxUnpooling2D ---------------------------------------------------------------------- */

/* values [1,h,w,1] x, indices ix, filter f, stride s; the output [1,h*f,w*f,1] must be want. */
static void unpool_case(int32_t h, int32_t w, const float *x, const float *ix, int32_t f,
                        int32_t s, const float *want)
{
    kh_case c;
    kh_init(&c, MP_OP_MAX_UNPOOL, NULL);
    c.opt.filter_h = c.opt.filter_w = f;
    c.opt.stride_h = c.opt.stride_w = s;
    c.opt.padding = MP_PAD_VALID;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, h, w, 1}, x);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, h, w, 1}, ix);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[1], h * f);
    assert_int_equal(out->dims[2], w * f);
    assert_memory_equal(out->data, want, (size_t)h * f * w * f * sizeof(float));
    /* a second run over the same output: still zero where nothing points */
    kh_expect_ok(&c, kh_rerun(&c, false));
    assert_memory_equal(out->data, want, (size_t)h * f * w * f * sizeof(float));
    kh_free(&c);
}

static void test_unpool_hand(void **state)
{
    (void)state;
    const float x[4] = {1, 2, 3, 4};
    /* 2x2, stride 2: value (y, x) goes to (2y + k/2, 2x + k%2) */
    unpool_case(2, 2, x, (float[]){3.1f, 0.1f, 2.1f, 1.1f}, 2, 2,
                (float[]){0, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 4, 3, 0, 0, 0});
    /* hostile indices: 7 reaches past its window (row 0 + 3, column 1), still inside the
     * output, so MediaPipe writes it; -1 is column -1 of the window at column 2 (C's
     * truncating / and %: row 0, column 1); NaN is skipped; -3 is row -1, column -1 of the
     * window at (2, 2) */
    unpool_case(2, 2, x, (float[]){7.0f, -1.0f, NAN, -3.0f}, 2, 2,
                (float[]){0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    /* two values at one place: the later one stays; 1e10 does not fit an int: skipped */
    unpool_case(2, 2, x, (float[]){1.1f, -1.0f, 2.1f, 1e10f}, 2, 2,
                (float[]){0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0});
    /* indices that land outside the output are skipped, never written */
    unpool_case(1, 2, (float[]){5, 6}, (float[]){100.5f, 4.0f}, 2, 2,
                (float[]){0, 0, 0, 0, 0, 0, 0, 0});
    unpool_case(1, 2, (float[]){5, 6}, (float[]){-1e10f, -2.0f}, 2, 2,
                (float[]){0, 0, 0, 0, 0, 0, 0, 0});
    /* stride 5, filter 2 over 3x1: output 6x2, padding ((3-1)*5 + 2 - 6) / 2 = 3 before:
     * value y lands on row 5y - 3 + k/2: rows -3 (skipped), 2 + 1 = 3, 7 (skipped) */
    unpool_case(3, 1, (float[]){1, 2, 3}, (float[]){0.1f, 2.1f, 0.1f}, 2, 5,
                (float[]){0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0});
    /* 7: row -3 + 3, column 1; 1: row 2 + 0, column 1; -5: column -1, skipped */
    unpool_case(3, 1, (float[]){1, 2, 3}, (float[]){7.1f, 1.1f, -5.0f}, 2, 5,
                (float[]){0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0});
}

/* Pool then unpool: each window's maximum back at its place, zero elsewhere (against the
 * references), for several geometries. */
static void test_unpool_roundtrip(void **state)
{
    (void)state;
    const struct { int n, h, w, c, f, s; } cases[] = {
        {1, 4, 4, 3, 2, 2}, {2, 6, 4, 2, 2, 2}, {1, 3, 5, 1, 2, 1}, {1, 6, 6, 2, 3, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int n = cases[k].n, h = cases[k].h, w = cases[k].w, ch = cases[k].c, f = cases[k].f;
        int s = cases[k].s;
        size_t nx = (size_t)n * h * w * ch;
        float *x = malloc(nx * sizeof(float)), *y = malloc(nx * sizeof(float));
        float *idx = malloc(nx * sizeof(float));
        kh_fill(x, nx, 300u + (unsigned)k, 1.0f);
        int ph, pw;
        ref_argmax(false, n, h, w, ch, f, f, s, s, x, y, idx, &ph, &pw);
        size_t nu = (size_t)n * ph * f * pw * f * ch;
        float *want = malloc(nu * sizeof(float));
        ref_unpool(n, ph, pw, ch, f, f, s, s, y, idx, want);
        kh_case c;
        kh_init(&c, MP_OP_MAX_UNPOOL, NULL);
        c.opt.filter_h = c.opt.filter_w = f;
        c.opt.stride_h = c.opt.stride_w = s;
        kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){n, ph, pw, ch}, y);
        kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){n, ph, pw, ch}, idx);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->dims[1], ph * f);
        assert_int_equal(out->dims[2], pw * f);
        assert_memory_equal(out->data, want, nu * sizeof(float));
        if (f == s && h == ph * f && w == pw * f) /* windows tile the image */
            for (size_t i = 0; i < nu; i++)
                assert_true(((float *)out->data)[i] == 0.0f || ((float *)out->data)[i] == x[i]);
        kh_free(&c);
        free(x);
        free(y);
        free(idx);
        free(want);
    }
}

static void test_unpool_errors(void **state)
{
    (void)state;
    const float x[16] = {0};
    struct {
        int32_t x_dims[4], i_dims[4], i_rank, f;
        mp_dtype i_dt;
        mp_status st;
        const char *needle;
    } bad[] = {
        {{1, 2, 2, 1}, {1, 2, 1, 1}, 4, 2, MP_DT_FLOAT32, MP_ERR_SHAPE,
         "indices 't1' [1,2,1,1] must have the shape of input 't0' [1,2,2,1]"},
        {{1, 2, 2, 1}, {1, 2, 2, 1}, 4, 2, MP_DT_INT32, MP_ERR_UNSUPPORTED,
         "indices 't1' is i32; expected float32"},
        {{1, 2, 2, 1}, {4, 1, 1, 0}, 3, 2, MP_DT_FLOAT32, MP_ERR_SHAPE,
         "indices 't1' [4,1,1] must have rank 4"},
        {{1, 2, 2, 1}, {1, 2, 2, 1}, 4, -1, MP_DT_FLOAT32, MP_ERR_FORMAT,
         "invalid filter -1x-1 or stride 1x1"},
        {{1, 65536, 2, 1}, {1, 65536, 2, 1}, 4, 65536, MP_DT_FLOAT32, MP_ERR_SHAPE,
         "times the 65536x65536 filter is too large"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_MAX_UNPOOL, NULL);
        c.opt.filter_h = c.opt.filter_w = bad[k].f;
        bool big = bad[k].x_dims[1] > 4;
        kh_input(&c, MP_DT_FLOAT32, 4, bad[k].x_dims, big ? NULL : x);
        kh_input(&c, bad[k].i_dt, bad[k].i_rank, bad[k].i_dims, big ? NULL : x);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, bad[k].st, bad[k].needle);
        assert_non_null(strstr(c.err.msg, "operator #0 MaxUnpooling2D"));
        kh_free(&c);
    }
}

/* ---- the custom options, read from a model ----------------------------------------------- */

/* A model of one custom operator `code` with options opts (len bytes): x [1,4,4,2] in; the
 * transposed convolution takes constant weights [3,2,2,2] and bias [3]; the pool gives two
 * outputs; the unpool takes x twice. */
static mp_test_model one_op_model(const char *code, const void *opts, size_t len)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 2}, 0, NULL);
    if (strcmp(code, "Convolution2DTransposeBias") == 0) {
        float wt[24] = {0}, b[3] = {0};
        int wb = mp_tfw_tensor(w, "w", MP_DT_FLOAT32, 4, (int32_t[]){3, 2, 2, 2},
                               mp_tfw_buffer(w, wt, sizeof wt), NULL);
        int bb = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, (int32_t[]){3},
                               mp_tfw_buffer(w, b, sizeof b), NULL);
        mp_tfw_custom_op(w, code, opts, len, 3, (int32_t[]){x, wb, bb}, 1, &y);
        mp_tfw_io(w, 1, &x, 1, &y);
    } else if (strcmp(code, "MaxPoolingWithArgmax2D") == 0) {
        int i = mp_tfw_tensor(w, "i", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 2}, 0, NULL);
        mp_tfw_custom_op(w, code, opts, len, 1, &x, 2, (int32_t[]){y, i});
        mp_tfw_io(w, 1, &x, 2, (int32_t[]){y, i});
    } else {
        mp_tfw_custom_op(w, code, opts, len, 2, (int32_t[]){x, x}, 1, &y);
        mp_tfw_io(w, 1, &x, 1, &y);
    }
    return mp_test_tfw_finish(w);
}

static mp_status load_one(const char *code, const void *opts, size_t len, mp_model **m,
                          mp_error *err)
{
    mp_test_model b = one_op_model(code, opts, len);
    *m = NULL;
    mp_status st = mp_model_load_memory(b.bytes, b.size, "mp", m, err);
    free(b.bytes);
    return st;
}

static void test_options_read(void **state)
{
    (void)state;
    mp_model *m;
    mp_error err = {0};
    /* TfLiteTransposeConvParams {padding 2 (VALID), stride_width 3, stride_height 2}, with
     * the fields newer versions append (activation, bias type) ignored */
    const int32_t tc[5] = {2, 3, 2, 1, 0};
    assert_int_equal(load_one("Convolution2DTransposeBias", tc, sizeof tc, &m, &err), MP_OK);
    assert_int_equal(m->ops[0].opcode, MP_OP_TRANSPOSE_CONV_BIAS);
    assert_int_equal(m->ops[0].opt.padding, MP_PAD_VALID);
    assert_int_equal(m->ops[0].opt.stride_w, 3);
    assert_int_equal(m->ops[0].opt.stride_h, 2);
    assert_int_equal(m->ops[0].opt.activation, MP_ACT_NONE);
    mp_model_free(m);
    /* TfLitePoolParams {SAME, stride 2x1 (w, h), filter 3x4 (w, h), RELU6, computed padding
     * (ignored: MediaPipe recomputes it)} */
    const int32_t pp[10] = {1, 2, 1, 3, 4, 3, 9, 9, 9, 9};
    for (int k = 0; k < 2; k++) {
        const char *code = k ? "MaxUnpooling2D" : "MaxPoolingWithArgmax2D";
        assert_int_equal(load_one(code, pp, sizeof pp, &m, &err), MP_OK);
        const mp_op_options *o = &m->ops[0].opt;
        assert_int_equal(m->ops[0].opcode, k ? MP_OP_MAX_UNPOOL : MP_OP_MAX_POOL_ARGMAX);
        assert_int_equal(o->padding, MP_PAD_SAME);
        assert_int_equal(o->stride_w, 2);
        assert_int_equal(o->stride_h, 1);
        assert_int_equal(o->filter_w, 3);
        assert_int_equal(o->filter_h, 4);
        assert_int_equal(o->activation, MP_ACT_RELU6);
        mp_model_free(m);
    }
}

static void test_options_refused(void **state)
{
    (void)state;
    struct {
        const char *code;
        int32_t v[6];
        size_t len;
        const char *needle;
    } bad[] = {
        {"Convolution2DTransposeBias", {1, 2, 2}, 8,
         "operator 0 (Convolution2DTransposeBias): custom options are 8 bytes, "
         "TfLiteTransposeConvParams needs 12: 'stride_height' is missing"},
        {"Convolution2DTransposeBias", {1, 2, 2}, 3,
         "custom options are 3 bytes, TfLiteTransposeConvParams needs 12: 'padding' is missing"},
        {"Convolution2DTransposeBias", {0, 2, 2}, 12,
         "operator 0 (Convolution2DTransposeBias): custom option 'padding' is 0, not SAME (1) "
         "or VALID (2)"},
        {"Convolution2DTransposeBias", {1, 2, 0}, 12,
         "custom option 'stride_height' is 0, not positive"},
        {"MaxPoolingWithArgmax2D", {2, 2, 2, 2, 2, 0}, 20,
         "operator 0 (MaxPoolingWithArgmax2D): custom options are 20 bytes, TfLitePoolParams "
         "needs 24: 'activation' is missing"},
        {"MaxPoolingWithArgmax2D", {3, 2, 2, 2, 2, 0}, 24,
         "custom option 'padding' is 3, not SAME (1) or VALID (2)"},
        {"MaxPoolingWithArgmax2D", {2, -1, 2, 2, 2, 0}, 24,
         "custom option 'stride_width' is -1, not positive"},
        {"MaxPoolingWithArgmax2D", {2, 2, 2, 2, 2, 7}, 24,
         "custom option 'activation' is 7, not a fused activation (0 to 6)"},
        {"MaxUnpooling2D", {2, 2, 2, 0, 2, 0}, 24,
         "operator 0 (MaxUnpooling2D): custom option 'filter_width' is 0, not positive"},
        {"MaxUnpooling2D", {2, 2, 2, 2, -5, 0}, 24,
         "custom option 'filter_height' is -5, not positive"},
        {"MaxUnpooling2D", {0}, 0,
         "operator 0 (MaxUnpooling2D) has no custom options (TfLitePoolParams: 24 bytes)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mp_model *m;
        mp_error err = {0};
        assert_int_equal(load_one(bad[k].code, bad[k].v, bad[k].len, &m, &err), MP_ERR_FORMAT);
        assert_null(m);
        if (!strstr(err.msg, bad[k].needle))
            fail_msg("case %zu: %s", k, err.msg);
    }
}

/* ---- an encoder-decoder model, static and dynamic ----------------------------------------- */

static const int32_t k_pool_opts[6] = {2, 2, 2, 2, 2, 0}; /* VALID, stride 2, filter 2 */
static const int32_t k_tconv_opts[3] = {1, 2, 2};         /* SAME, stride 2 */

static float k_wt[3 * 2 * 2 * 2], k_bias[3];

/* x [1,4,4,2] -> MaxPoolingWithArgmax2D -> m, i [1,2,2,2] -> MaxUnpooling2D(m, i) -> u
 * [1,4,4,2] -> Convolution2DTransposeBias(u, w [3,2,2,2], b [3]) -> t [1,8,8,3]; outputs i,
 * u, t. */
static mp_test_model codec_model(void)
{
    kh_fill(k_wt, 24, 5, 1.0f);
    kh_fill(k_bias, 3, 6, 1.0f);
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2}, 0, NULL);
    int m = mp_tfw_tensor(w, "pooled", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 2}, 0, NULL);
    int i = mp_tfw_tensor(w, "argmax", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 2}, 0, NULL);
    int u = mp_tfw_tensor(w, "unpooled", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2}, 0, NULL);
    int wt = mp_tfw_tensor(w, "w", MP_DT_FLOAT32, 4, (int32_t[]){3, 2, 2, 2},
                           mp_tfw_buffer(w, k_wt, sizeof k_wt), NULL);
    int b = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, (int32_t[]){3},
                          mp_tfw_buffer(w, k_bias, sizeof k_bias), NULL);
    int t = mp_tfw_tensor(w, "segment", MP_DT_FLOAT32, 4, (int32_t[]){1, 8, 8, 3}, 0, NULL);
    mp_tfw_custom_op(w, "MaxPoolingWithArgmax2D", k_pool_opts, sizeof k_pool_opts, 1, &x, 2,
                     (int32_t[]){m, i});
    mp_tfw_custom_op(w, "MaxUnpooling2D", k_pool_opts, sizeof k_pool_opts, 2,
                     (int32_t[]){m, i}, 1, &u);
    mp_tfw_custom_op(w, "Convolution2DTransposeBias", k_tconv_opts, sizeof k_tconv_opts, 3,
                     (int32_t[]){u, wt, b}, 1, &t);
    mp_tfw_io(w, 1, &x, 3, (int32_t[]){i, u, t});
    return mp_test_tfw_finish(w);
}

static void run_codec_model(mp_memory_mode mode, void **out, size_t *sizes)
{
    mp_test_model mb = codec_model();
    mp_session *s = kh_session(mode, mb.bytes, mb.size, "codec");
    float x[32];
    kh_fill(x, 32, 77, 1.0f);
    mp_test_set_input(s, 0, x, sizeof x);
    mp_test_run(s);
    assert_int_equal(mp_session_output_count(s), 3);
    for (int k = 0; k < 3; k++) {
        const mp_tensor *t = mp_session_output(s, k);
        sizes[k] = t->bytes;
        out[k] = malloc(t->bytes + 1);
        memcpy(out[k], t->data, t->bytes);
    }
    /* against the references */
    float pooled[8], idx[8], unpooled[32], seg[192];
    int oh, ow;
    ref_argmax(false, 1, 4, 4, 2, 2, 2, 2, 2, x, pooled, idx, &oh, &ow);
    ref_unpool(1, 2, 2, 2, 2, 2, 2, 2, pooled, idx, unpooled);
    ref_tconv(true, 1, 4, 4, 2, 3, 2, 2, 2, 2, unpooled, k_wt, k_bias, seg);
    assert_int_equal(sizes[0], sizeof idx);
    assert_int_equal(sizes[1], sizeof unpooled);
    assert_int_equal(sizes[2], sizeof seg);
    assert_memory_equal(out[0], idx, sizeof idx);
    assert_memory_equal(out[1], unpooled, sizeof unpooled);
    kh_expect_close(out[2], seg, 192, 2.0);
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_codec_model, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tconv_bias_hand),
        cmocka_unit_test(test_tconv_bias_random),
        cmocka_unit_test(test_tconv_bias_errors),
        cmocka_unit_test(test_argmax_hand),
        cmocka_unit_test(test_argmax_random),
        cmocka_unit_test(test_empty_giants),
        cmocka_unit_test(test_argmax_errors),
        cmocka_unit_test(test_unpool_hand),
        cmocka_unit_test(test_unpool_roundtrip),
        cmocka_unit_test(test_unpool_errors),
        cmocka_unit_test(test_options_read),
        cmocka_unit_test(test_options_refused),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
