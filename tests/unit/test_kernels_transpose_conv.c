/* Tests of TRANSPOSE_CONV: a 2x2 stride-2 case and SAME / VALID paddings worked out by hand,
 * float32 against a plain reference of TensorFlow Lite's definition over random geometries
 * (XNNPACK's path and the plain-C one: outputs that need an adjustment of a stride or more,
 * weights that are not constants), int8 per-channel and uint8 against a restatement of
 * TensorFlow Lite's reference integer arithmetic (bit-exact), a deferred output_shape, and
 * refusals naming the fault. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

typedef struct geom {
    int n, ih, iw, ic, oh, ow, oc, kh, kw, sh, sw, pad; /* pad: MP_PAD_SAME / MP_PAD_VALID */
} geom;

/* TensorFlow Lite's padding before, written from ComputePaddingHeightWidth. */
static int ref_pad(int padding, int stride, int k, int out)
{
    int conv_out = padding == MP_PAD_SAME ? (out + stride - 1) / stride : (out - k + stride) / stride;
    int total = (conv_out - 1) * stride + k - out;
    return total > 0 ? total / 2 : 0;
}

/* reference_ops::TransposeConv in doubles: scatter every input pixel times the filter. */
static void ref_tconv(const geom *g, const float *x, const float *w, const float *b, float *y,
                      int act)
{
    int ph = ref_pad(g->pad, g->sh, g->kh, g->oh), pw = ref_pad(g->pad, g->sw, g->kw, g->ow);
    size_t total = (size_t)g->n * g->oh * g->ow * g->oc;
    double *acc = calloc(total, sizeof *acc);
    for (int bi = 0; bi < g->n; bi++)
        for (int iy = 0; iy < g->ih; iy++)
            for (int ix = 0; ix < g->iw; ix++)
                for (int ic = 0; ic < g->ic; ic++)
                    for (int fy = 0; fy < g->kh; fy++)
                        for (int fx = 0; fx < g->kw; fx++)
                            for (int oc = 0; oc < g->oc; oc++) {
                                int oy = iy * g->sh - ph + fy, ox = ix * g->sw - pw + fx;
                                if (oy < 0 || oy >= g->oh || ox < 0 || ox >= g->ow)
                                    continue;
                                acc[((bi * g->oh + oy) * g->ow + ox) * g->oc + oc] +=
                                    (double)x[((bi * g->ih + iy) * g->iw + ix) * g->ic + ic] *
                                    w[((oc * g->kh + fy) * g->kw + fx) * g->ic + ic];
                            }
    for (size_t i = 0; i < total; i++)
        y[i] = (float)kh_ref_act(acc[i] + (b ? b[i % g->oc] : 0.0), act);
    free(acc);
}

/* One float case: constant or variable weights, optional bias, output_shape constant. */
static void check_f32(const geom *g, bool const_w, bool bias, int act, uint32_t seed)
{
    size_t nx = (size_t)g->n * g->ih * g->iw * g->ic, nw = (size_t)g->oc * g->kh * g->kw * g->ic;
    size_t ny = (size_t)g->n * g->oh * g->ow * g->oc;
    float *x = malloc(nx * sizeof *x + 4), *w = malloc(nw * sizeof *w), *bv = malloc(g->oc * 4);
    float *want = malloc(ny * sizeof *want + 4);
    kh_fill(x, nx, seed, 1.0f);
    kh_fill(w, nw, seed + 1, 1.0f);
    kh_fill(bv, (size_t)g->oc, seed + 2, 1.0f);
    int32_t os[4] = {g->n, g->oh, g->ow, g->oc};
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
    c.opt.padding = g->pad;
    c.opt.stride_h = g->sh;
    c.opt.stride_w = g->sw;
    c.opt.activation = act;
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os);
    mp_tensor *wt = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){g->oc, g->kh, g->kw, g->ic},
                             const_w ? w : NULL);
    if (!const_w)
        memcpy(wt->data, w, nw * sizeof *w);
    mp_tensor *xt = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){g->n, g->ih, g->iw, g->ic}, NULL);
    memcpy(xt->data, x, nx * sizeof *x);
    if (bias)
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){g->oc}, bv);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(out->rank == 4 && out->dims[1] == g->oh && out->dims[2] == g->ow &&
                out->dims[3] == g->oc);
    ref_tconv(g, x, w, bias ? bv : NULL, want, act);
    kh_expect_close(out->data, want, ny, 4.0);
    kh_free(&c);
    free(x);
    free(w);
    free(bv);
    free(want);
}

static void test_hand(void **state)
{
    (void)state;
    /* 2x2 input {1,2,3,4}, 2x2 filter {1,2,3,4}, stride 2, VALID, output 4x4: each input
     * value paints its own 2x2 block value * filter (conv_out (4-2+2)/2 = 2, no padding) */
    static const int32_t os[4] = {1, 4, 4, 1};
    static const float w[4] = {1, 2, 3, 4}, bias[1] = {0.5f};
    static const float want[16] = {1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16};
    for (int wb = 0; wb < 2; wb++) { /* without and with the bias */
        kh_case c;
        kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
        c.opt.padding = MP_PAD_VALID;
        c.opt.stride_h = c.opt.stride_w = 2;
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os);
        kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, w);
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, NULL);
        memcpy(x->data, (float[]){1, 2, 3, 4}, 16);
        if (wb)
            kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, bias);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        for (int i = 0; i < 16; i++)
            assert_float_equal(((float *)out->data)[i], want[i] + (wb ? 0.5f : 0.0f), 0);
        kh_free(&c);
    }
    /* 1x1 input {1}, 3x3 filter 1..9, stride 1: SAME with output 1x1 pads 1 (conv_out 1,
     * total 2) and keeps the centre tap, 5; VALID with output 3x3 pads 0: the filter itself */
    static const float w9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (int pad = 0; pad < 2; pad++) {
        int32_t os1[4] = {1, pad == MP_PAD_SAME ? 1 : 3, pad == MP_PAD_SAME ? 1 : 3, 1};
        kh_case c;
        kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
        c.opt.padding = pad;
        c.opt.stride_h = c.opt.stride_w = 1;
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os1);
        kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 1}, w9);
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 1, 1, 1}, NULL);
        ((float *)x->data)[0] = 1.0f;
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        if (pad == MP_PAD_SAME) {
            assert_int_equal(mp_tensor_elements(out), 1);
            assert_float_equal(((float *)out->data)[0], 5.0f, 0);
        } else {
            assert_memory_equal(out->data, w9, sizeof w9);
        }
        kh_free(&c);
    }
    /* the padding rule itself: SAME 4 from k3 s2 pads 0 (total 1), 7 from k3 s2 pads 1
     * (conv_out 4, total 2); VALID 5 from k3 s2 pads 0 */
    assert_int_equal(ref_pad(MP_PAD_SAME, 2, 3, 4), 0);
    assert_int_equal(ref_pad(MP_PAD_SAME, 2, 3, 7), 1);
    assert_int_equal(ref_pad(MP_PAD_VALID, 2, 3, 5), 0);
}

static void test_random_f32(void **state)
{
    (void)state;
    uint32_t seed = 7;
    for (int trial = 0; trial < 120; trial++) {
        geom g;
        g.n = 1 + (int)(kh_frand(&seed, 1.0f) > 0.6f);
        g.ih = 1 + (trial % 4);
        g.iw = 1 + (trial * 7 % 5);
        g.ic = 1 + (trial % 3);
        g.oc = 1 + (trial * 5 % 4);
        g.kh = 1 + (trial % 3);
        g.kw = 1 + (trial * 3 % 4);
        g.sh = 1 + (trial % 2);
        g.sw = 1 + (trial * 11 % 3);
        g.pad = trial & 1 ? MP_PAD_VALID : MP_PAD_SAME;
        /* the sizes a converter writes (SAME: in*s; VALID: (in-1)*s + k), sometimes a bit
         * more or less: extra rows past what the input reaches, rows cut off */
        int extra = trial % 5 == 4 ? g.sh + 1 : trial % 5 == 3 ? -1 : 0;
        g.oh = (g.pad == MP_PAD_SAME ? g.ih * g.sh : (g.ih - 1) * g.sh + g.kh) + extra;
        g.ow = (g.pad == MP_PAD_SAME ? g.iw * g.sw : (g.iw - 1) * g.sw + g.kw) + (extra > 0);
        if (g.oh < 1)
            g.oh = 1;
        check_f32(&g, trial % 7 != 6, trial % 3 != 0, trial % 4 == 1 ? MP_ACT_RELU : MP_ACT_NONE,
                  (uint32_t)trial * 3 + 1);
    }
}

/* Hybrid: float32 input, int8 weights with one scale per output channel (dequantized once),
 * through XNNPACK; and float32 weights computed while running with a constant float16 bias
 * (plain C). Both against the reference on the float values. */
static void test_hybrid_and_f16_bias(void **state)
{
    (void)state;
    geom g = {.n = 1, .ih = 3, .iw = 2, .ic = 3, .oc = 2, .kh = 3, .kw = 3, .sh = 2, .sw = 2,
              .pad = MP_PAD_SAME, .oh = 6, .ow = 4};
    int8_t wq[2 * 3 * 3 * 3];
    float wf[2 * 3 * 3 * 3], x[18], want[48];
    static const float ws[2] = {0.02f, 0.05f};
    for (int i = 0; i < 54; i++) {
        wq[i] = (int8_t)((i * 37) % 255 - 127);
        wf[i] = wq[i] * ws[i / 27];
    }
    kh_fill(x, 18, 3, 1.0f);
    int32_t os[4] = {1, 6, 4, 2};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
        c.opt.padding = g.pad;
        c.opt.stride_h = c.opt.stride_w = 2;
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os);
        static const uint16_t half_bias[2] = {0x3800, 0xBC00}; /* 0.5, -1 */
        const float bias[2] = {0.5f, -1.0f};
        if (k == 0) {
            mp_tensor *wt = kh_input(&c, MP_DT_INT8, 4, (int32_t[]){2, 3, 3, 3}, wq);
            kh_quant(&c, wt, 2, ws, NULL, 0);
        } else {
            mp_tensor *wt = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 3, 3}, NULL);
            memcpy(wt->data, wf, sizeof wf);
            wt->value_known = false; /* computed while running */
        }
        mp_tensor *xt = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 2, 3}, NULL);
        memcpy(xt->data, x, sizeof x);
        if (k == 1)
            kh_input(&c, MP_DT_FLOAT16, 1, (int32_t[]){2}, half_bias);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        ref_tconv(&g, x, wf, k ? bias : NULL, want, MP_ACT_NONE);
        kh_expect_close(out->data, want, 48, 4.0);
        kh_free(&c);
    }
}

/* ---- quantized: TensorFlow Lite's reference integer arithmetic restated ---------------- */

static void quantize_multiplier(double m, int32_t *q, int *shift)
{
    if (m == 0.0) {
        *q = 0;
        *shift = 0;
        return;
    }
    double f = frexp(m, shift);
    int64_t r = (int64_t)round(f * (double)(1ll << 31));
    if (r == (1ll << 31)) {
        r /= 2;
        ++*shift;
    }
    if (*shift < -31) {
        *shift = 0;
        r = 0;
    }
    *q = (int32_t)r;
}

static int32_t high_mul(int32_t a, int32_t b)
{
    if (a == b && a == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * b;
    int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / (1ll << 31));
}

static int32_t div_pot(int32_t x, int e)
{
    int32_t mask = (int32_t)((1ll << e) - 1), rem = x & mask, th = (mask >> 1) + (x < 0);
    return (x >> e) + (rem > th);
}

static int32_t mul_q(int32_t x, int32_t q, int shift)
{
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return div_pot(high_mul((int32_t)((uint32_t)x << left), q), right);
}

/* reference_integer_ops::TransposeConv (int8, per channel) and reference_ops::TransposeConv
 * (uint8): int32 sums, bias, multiplier per channel, zero point, clamp. */
static void ref_tconv_q(const geom *g, bool u8, const void *x, const void *w, const int32_t *b,
                        float in_s, int in_zp, const float *w_s, int n_ws, int w_zp, float out_s,
                        int out_zp, int lo, int hi, void *y)
{
    int ph = ref_pad(g->pad, g->sh, g->kh, g->oh), pw = ref_pad(g->pad, g->sw, g->kw, g->ow);
    size_t total = (size_t)g->n * g->oh * g->ow * g->oc;
    int32_t *acc = calloc(total, sizeof *acc);
    for (int bi = 0; bi < g->n; bi++)
        for (int iy = 0; iy < g->ih; iy++)
            for (int ix = 0; ix < g->iw; ix++)
                for (int ic = 0; ic < g->ic; ic++)
                    for (int fy = 0; fy < g->kh; fy++)
                        for (int fx = 0; fx < g->kw; fx++)
                            for (int oc = 0; oc < g->oc; oc++) {
                                int oy = iy * g->sh - ph + fy, ox = ix * g->sw - pw + fx;
                                if (oy < 0 || oy >= g->oh || ox < 0 || ox >= g->ow)
                                    continue;
                                size_t xi = (size_t)((bi * g->ih + iy) * g->iw + ix) * g->ic + ic;
                                size_t wi = (size_t)((oc * g->kh + fy) * g->kw + fx) * g->ic + ic;
                                int32_t xv = u8 ? ((const uint8_t *)x)[xi] : ((const int8_t *)x)[xi];
                                int32_t wv = u8 ? ((const uint8_t *)w)[wi] : ((const int8_t *)w)[wi];
                                acc[((bi * g->oh + oy) * g->ow + ox) * g->oc + oc] +=
                                    (xv - in_zp) * (wv - w_zp);
                            }
    for (size_t i = 0; i < total; i++) {
        int oc = (int)(i % (size_t)g->oc);
        float ws = w_s[n_ws > 1 ? oc : 0];
        double real = u8 ? (double)(in_s * ws) / out_s : (double)in_s * ws / out_s;
        int32_t q;
        int shift;
        quantize_multiplier(real, &q, &shift);
        int32_t v = mul_q(acc[i] + (b ? b[oc] : 0), q, shift) + out_zp;
        v = v < lo ? lo : v > hi ? hi : v;
        if (u8)
            ((uint8_t *)y)[i] = (uint8_t)v;
        else
            ((int8_t *)y)[i] = (int8_t)v;
    }
    free(acc);
}

static void test_random_quantized(void **state)
{
    (void)state;
    uint32_t seed = 99;
    for (int trial = 0; trial < 80; trial++) {
        bool u8 = trial & 1;
        geom g = {.n = 1, .ih = 1 + trial % 3, .iw = 2 + trial % 2, .ic = 1 + trial % 4,
                  .oc = 1 + trial % 3, .kh = 1 + trial % 3, .kw = 2, .sh = 1 + trial % 2,
                  .sw = 2, .pad = (trial >> 1) & 1 ? MP_PAD_VALID : MP_PAD_SAME};
        g.oh = g.pad == MP_PAD_SAME ? g.ih * g.sh : (g.ih - 1) * g.sh + g.kh;
        g.ow = g.pad == MP_PAD_SAME ? g.iw * g.sw : (g.iw - 1) * g.sw + g.kw;
        size_t nx = (size_t)g.n * g.ih * g.iw * g.ic, nw = (size_t)g.oc * g.kh * g.kw * g.ic;
        size_t ny = (size_t)g.n * g.oh * g.ow * g.oc;
        uint8_t *x = malloc(nx + 16), *w = malloc(nw), *want = malloc(ny);
        for (size_t i = 0; i < nx; i++)
            x[i] = (uint8_t)(kh_frand(&seed, 128.0f) + 128.0f);
        for (size_t i = 0; i < nw; i++)
            w[i] = (uint8_t)(u8 ? kh_frand(&seed, 128.0f) + 128.0f : kh_frand(&seed, 127.0f));
        int32_t bias[4];
        for (int o = 0; o < 4; o++)
            bias[o] = (int32_t)kh_frand(&seed, 3000.0f);
        float in_s = 0.02f + 0.01f * (float)(trial % 5), out_s = 0.05f + 0.03f * (float)(trial % 3);
        float w_s[4] = {0.01f, 0.013f, 0.007f, 0.02f};
        int n_ws = u8 || trial % 4 == 0 ? 1 : g.oc;
        int64_t in_zp = u8 ? 120 : -3, out_zp = u8 ? 131 : 5, w_zp = u8 ? 127 : 0;
        int act = trial % 3 == 2 ? MP_ACT_RELU6 : trial % 3 == 1 ? MP_ACT_RELU : MP_ACT_NONE;
        int32_t os[4] = {g.n, g.oh, g.ow, g.oc};
        mp_dtype dt = u8 ? MP_DT_UINT8 : MP_DT_INT8;
        kh_case c;
        kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
        c.opt.padding = g.pad;
        c.opt.stride_h = g.sh;
        c.opt.stride_w = g.sw;
        c.opt.activation = act;
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os);
        mp_tensor *wt = kh_input(&c, dt, 4, (int32_t[]){g.oc, g.kh, g.kw, g.ic}, w);
        kh_quant(&c, wt, n_ws, w_s, u8 ? &w_zp : NULL, 0);
        mp_tensor *xt = kh_input(&c, dt, 4, (int32_t[]){g.n, g.ih, g.iw, g.ic}, NULL);
        memcpy(xt->data, x, nx);
        kh_quant(&c, xt, 1, &in_s, &in_zp, 0);
        bool with_bias = trial % 5 != 0;
        if (with_bias)
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){g.oc}, bias);
        mp_tensor *out = kh_output(&c, dt);
        kh_quant(&c, out, 1, &out_s, &out_zp, 0);
        kh_expect_ok(&c, kh_run(&c));
        /* the activation's range in the output's integers, as TensorFlow Lite computes it */
        int lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
        if (act == MP_ACT_RELU || act == MP_ACT_RELU6) {
            int z = (int)out_zp;
            lo = z > lo ? z : lo;
            if (act == MP_ACT_RELU6) {
                int h6 = z + (int)roundf(6.0f / out_s);
                hi = h6 < hi ? h6 : hi;
            }
        }
        ref_tconv_q(&g, u8, x, w, with_bias ? bias : NULL, in_s, (int)in_zp, w_s, n_ws,
                    (int)w_zp, out_s, (int)out_zp, lo, hi, want);
        if (memcmp(out->data, want, ny) != 0)
            fail_msg("trial %d (%s): output differs from the reference", trial, u8 ? "u8" : "i8");
        kh_free(&c);
        free(x);
        free(w);
        free(want);
    }
}

static void test_deferred(void **state)
{
    (void)state;
    /* output_shape computed while running: the shape waits for it */
    static const float w[4] = {1, 2, 3, 4};
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
    c.opt.padding = MP_PAD_VALID;
    c.opt.stride_h = c.opt.stride_w = 2;
    mp_tensor *os = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, w);
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 1, 1, 1}, NULL);
    ((float *)x->data)[0] = 2.0f;
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
    memcpy(os->data, (int32_t[]){1, 2, 2, 1}, 16);
    os->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    const float want[4] = {2, 4, 6, 8};
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);
}

/* A float case with one thing wrong; expect status and message. */
static void expect_refusal(int what, mp_status st, const char *needle)
{
    static const float w[8] = {0};
    static const int32_t os_ok[4] = {1, 4, 4, 2}, os_bad_c[4] = {1, 4, 4, 3},
                         os_bad_n[4] = {2, 4, 4, 2};
    static const int64_t os64[4] = {1, 4, 4, 2};
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
    c.opt.padding = MP_PAD_SAME;
    c.opt.stride_h = c.opt.stride_w = 2;
    if (what == 4)
        c.opt.activation = MP_ACT_TANH;
    if (what == 2)
        kh_input(&c, MP_DT_INT64, 1, (int32_t[]){4}, os64);
    else
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4},
                 what == 0 ? os_bad_c : what == 1 ? os_bad_n : os_ok);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){2, 2, 2, 1}, w);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, what == 3 ? 2 : 1}, NULL);
    if (what == 5)
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, w);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, st, needle);
    assert_non_null(strstr(c.err.msg, "TRANSPOSE_CONV"));
    kh_free(&c);
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refusal(0, MP_ERR_SHAPE, "must be [1,H,W,2]");
    expect_refusal(1, MP_ERR_SHAPE, "must be [1,H,W,2]");
    expect_refusal(2, MP_ERR_SHAPE, "output_shape 't0' must be int32 [4]");
    expect_refusal(3, MP_ERR_SHAPE, "NHWC with I channels");
    expect_refusal(4, MP_ERR_UNSUPPORTED, "fused activation 4");
    expect_refusal(5, MP_ERR_SHAPE, "bias 't3' [3] must have 2 values");
    /* uint8 weights with one scale per channel: TensorFlow Lite takes that only for int8 */
    static const uint8_t w[4] = {1, 2, 3, 4};
    static const float ws[2] = {0.1f, 0.2f}, s = 0.5f;
    static const int32_t os[4] = {1, 2, 2, 2};
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE_CONV, NULL);
    c.opt.padding = MP_PAD_VALID;
    c.opt.stride_h = c.opt.stride_w = 1;
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, os);
    mp_tensor *wt = kh_input(&c, MP_DT_UINT8, 4, (int32_t[]){2, 1, 1, 2}, w);
    kh_quant(&c, wt, 2, ws, NULL, 0);
    mp_tensor *x = kh_input(&c, MP_DT_UINT8, 4, (int32_t[]){1, 2, 2, 2}, NULL);
    kh_quant(&c, x, 1, &s, NULL, 0);
    mp_tensor *o = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, o, 1, &s, NULL, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "have 2 scales along dimension 0; expected one");
    kh_free(&c);
}

/* A model whose output_shape is a model input (known only while running): in both memory
 * modes the shape waits for the run, two output sizes in a row, the 2x2 stride-2 hand case. */
static void test_model_runtime_output_shape(void **state)
{
    (void)state;
    static const float w[4] = {1, 2, 3, 4};
    mp_tfw *tw = mp_tfw_create();
    int os = mp_tfw_tensor(tw, "os", MP_DT_INT32, 1, (int32_t[]){4}, 0, NULL);
    int wt = mp_tfw_tensor(tw, "w", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1},
                           mp_tfw_buffer(tw, w, sizeof w), NULL);
    int x = mp_tfw_tensor(tw, "x", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, 0, NULL);
    int y = mp_tfw_tensor(tw, "y", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 1}, 0,
                          (int32_t[]){1, -1, -1, 1});
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 2;
    mp_tfw_op(tw, MP_OP_TRANSPOSE_CONV, 3, (int32_t[]){os, wt, x}, 1, &y, &o);
    mp_tfw_io(tw, 2, (int32_t[]){os, x}, 1, &y);
    void *bytes = NULL;
    size_t size;
    mp_error err = {0};
    assert_int_equal(mp_tfw_finish(tw, &bytes, &size, &err), MP_OK);
    mp_tfw_free(tw);
    static const float want4[16] = {1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16};
    static const float want5[25] = {1, 2, 2, 4, 0, 3, 4, 6, 8, 0, 3, 6, 4, 8, 0,
                                    9, 12, 12, 16, 0, 0, 0, 0, 0, 0};
    for (int mode = 0; mode < 2; mode++) {
        mp_session_options so = {.mode = mode ? MP_MEMORY_DYNAMIC : MP_MEMORY_STATIC,
                                 .threads = 1};
        mp_session *s = NULL;
        assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
        if (mp_session_load_memory(s, bytes, size, "tconv", &err) != MP_OK ||
            mp_session_prepare(s, &err) != MP_OK)
            fail_msg("%s", err.msg);
        const float xin[4] = {1, 2, 3, 4};
        for (int k = 0; k < 2; k++) { /* 4x4, then 5x5: one row and column past the input */
            int32_t shape[4] = {1, 4 + k, 4 + k, 1};
            assert_int_equal(mp_session_set_input(s, 0, shape, sizeof shape, &err), MP_OK);
            assert_int_equal(mp_session_set_input(s, 1, xin, sizeof xin, &err), MP_OK);
            if (mp_session_run(s, &err) != MP_OK)
                fail_msg("run: %s", err.msg);
            const mp_tensor *t = mp_session_output(s, 0);
            assert_true(t->dims[1] == 4 + k && t->dims[2] == 4 + k);
            assert_memory_equal(t->data, k ? want5 : want4, k ? sizeof want5 : sizeof want4);
        }
        mp_session_destroy(s);
    }
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random_f32),
        cmocka_unit_test(test_hybrid_and_f16_bias),
        cmocka_unit_test(test_random_quantized),
        cmocka_unit_test(test_deferred),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_model_runtime_output_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
