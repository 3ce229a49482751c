/* Tests of quantized AVERAGE_POOL_2D and MAX_POOL_2D (int8 and uint8, issue 15): hand-computed
 * windows (valid-pixel averages under SAME padding, rounding of the integer division, fused
 * activations as integer ranges, 1x1 windows), then random shapes, windows, strides and
 * paddings against TensorFlow Lite's reference integer pooling restated here (the average
 * as the sum over the valid pixels divided by their count, rounded half away from zero):
 * bit for bit for the maximum and for averages run in C (int8, padded uint8), within 1 and
 * at least 95 % exact for unpadded uint8 averages (XNNPACK's average_pooling2d_nhwc_qu8).
 * A window whose area does not fit in int32; channel counts around the kernel's blocks and
 * windows of 65535 and 65536 pixels (32- and 64-bit sums).
 * Errors: input and output quantized differently, dtypes, per-channel parameters, TANH. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

typedef struct qpool {
    int32_t op;
    mp_dtype dt;
    int32_t n, h, w, c;
    int32_t fh, fw, sh, sw, padding, act;
    float scale;
    int64_t zp;
} qpool;

static bool is_s8(const qpool *p) { return p->dt == MP_DT_INT8; }

/* int32 values in and out of a tensor's 8-bit storage */
static void put(mp_tensor *t, const int32_t *v, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (t->dtype == MP_DT_INT8)
            ((int8_t *)t->data)[i] = (int8_t)v[i];
        else
            ((uint8_t *)t->data)[i] = (uint8_t)v[i];
    }
}
static int32_t got_at(const mp_tensor *t, size_t i)
{
    return t->dtype == MP_DT_INT8 ? (int32_t)((const int8_t *)t->data)[i]
                                  : (int32_t)((const uint8_t *)t->data)[i];
}

static int32_t outsz(int32_t in, int32_t k, int32_t s, int32_t padding)
{
    return padding == MP_PAD_SAME ? (in + s - 1) / s : (in - k) / s + 1;
}
/* TensorFlow Lite's SAME padding of one dimension in all, and before the first element */
static int32_t total_pad(int32_t in, int32_t k, int32_t s, int32_t padding)
{
    int32_t total = ((in + s - 1) / s - 1) * s + k - in;
    return padding == MP_PAD_SAME && total > 0 ? total : 0;
}
static int32_t before(int32_t in, int32_t k, int32_t s, int32_t padding)
{
    return total_pad(in, k, s, padding) / 2;
}

/* The activation's integer range on the output, from TensorFlow Lite's definition. */
static void act_range(const qpool *p, int32_t *lo, int32_t *hi)
{
    int32_t qmin = is_s8(p) ? -128 : 0, qmax = is_s8(p) ? 127 : 255, z = (int32_t)p->zp;
    double l = qmin, h = qmax;
    if (p->act == MP_ACT_RELU || p->act == MP_ACT_RELU6)
        l = z;
    if (p->act == MP_ACT_RELU6)
        h = z + round(6.0 / p->scale);
    if (p->act == MP_ACT_RELU_N1_TO_1) {
        l = z + round(-1.0 / p->scale);
        h = z + round(1.0 / p->scale);
    }
    *lo = (int32_t)fmax(l, qmin);
    *hi = (int32_t)fmin(h, qmax);
}

/* Reference over the valid pixels of every window: max, or the mean rounded half away. */
static void ref_pool(const qpool *p, const int32_t *x, int32_t *y)
{
    int32_t oh = outsz(p->h, p->fh, p->sh, p->padding), ow = outsz(p->w, p->fw, p->sw, p->padding);
    int32_t pt = before(p->h, p->fh, p->sh, p->padding), pl = before(p->w, p->fw, p->sw, p->padding);
    int32_t lo, hi;
    act_range(p, &lo, &hi);
    size_t k = 0;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < oh; oy++)
            for (int32_t ox = 0; ox < ow; ox++)
                for (int32_t ch = 0; ch < p->c; ch++, k++) {
                    long sum = 0, count = 0, mx = -1000;
                    for (int32_t ky = 0; ky < p->fh; ky++)
                        for (int32_t kx = 0; kx < p->fw; kx++) {
                            int32_t iy = oy * p->sh + ky - pt, ix = ox * p->sw + kx - pl;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                                continue;
                            long v = x[((b * p->h + iy) * p->w + ix) * p->c + ch];
                            sum += v;
                            count++;
                            mx = v > mx ? v : mx;
                        }
                    long r = p->op == MP_OP_MAX_POOL_2D ? mx : lround((double)sum / (double)count);
                    y[k] = (int32_t)(r < lo ? lo : (r > hi ? hi : r));
                }
}

static void build(kh_case *c, const qpool *p)
{
    kh_init(c, p->op, NULL);
    c->opt.padding = p->padding;
    c->opt.filter_h = p->fh;
    c->opt.filter_w = p->fw;
    c->opt.stride_h = p->sh;
    c->opt.stride_w = p->sw;
    c->opt.activation = p->act;
    mp_tensor *x = kh_input(c, p->dt, 4, (int32_t[]){p->n, p->h, p->w, p->c}, NULL);
    mp_tensor *y = kh_output(c, p->dt);
    kh_quant(c, x, 1, &p->scale, &p->zp, 0);
    kh_quant(c, y, 1, &p->scale, &p->zp, 0);
}

/* Run p on x; compare with `want` (when given) and with the reference; returns how many
 * outputs differ from the reference by 1 (2 or more fail), counting them in *count. */
static size_t run_case(const qpool *p, const int32_t *x, const int32_t *want, size_t *count,
                       int32_t tolerance)
{
    kh_case c;
    build(&c, p);
    size_t nx = (size_t)p->n * p->h * p->w * p->c;
    put(c.in[0], x, nx);
    kh_expect_ok(&c, kh_run(&c));
    const mp_tensor *y = c.out[0];
    size_t ny = mp_tensor_elements(y), off = 0;
    assert_int_equal(y->dims[1], outsz(p->h, p->fh, p->sh, p->padding));
    assert_int_equal(y->dims[2], outsz(p->w, p->fw, p->sw, p->padding));
    int32_t *ref = malloc(ny * sizeof *ref);
    assert_non_null(ref);
    ref_pool(p, x, ref);
    for (size_t i = 0; i < ny; i++) {
        int32_t g = got_at(y, i);
        if (want && g != want[i])
            fail_msg("element %zu: got %d, want %d (by hand)", i, g, want[i]);
        if (want && ref[i] != want[i])
            fail_msg("element %zu: reference %d, want %d (by hand)", i, ref[i], want[i]);
        if (abs(g - ref[i]) > tolerance)
            fail_msg("op %d %s %dx%dx%dx%d window %dx%d stride %dx%d padding %d: element %zu "
                     "got %d, reference %d",
                     p->op, mp_dtype_name(p->dt), p->n, p->h, p->w, p->c, p->fh, p->fw, p->sh,
                     p->sw, p->padding, i, g, ref[i]);
        off += g != ref[i];
    }
    *count += ny;
    free(ref);
    kh_free(&c);
    return off;
}

static void hand(const qpool *p, const int32_t *x, const int32_t *want)
{
    size_t count = 0;
    run_case(p, x, want, &count, 0);
}

static void test_hand_cases(void **state)
{
    (void)state;
    /* int8 average, 2x2 windows, stride 2, VALID, on 1x2x4x1:
     *   1 2 | 3 -4        window sums 1+2+5+7 = 15 -> (15+2)/4 = 4 (3.75),
     *   5 7 | -9 -7       3-4-9-7 = -17 -> (-17-2)/4 = -4 (-4.25 truncated toward 0) */
    qpool avg = {MP_OP_AVERAGE_POOL_2D, MP_DT_INT8, 1, 2, 4, 1, 2, 2, 2, 2, MP_PAD_VALID,
                 MP_ACT_NONE, 0.5f, 0};
    hand(&avg, (int32_t[]){1, 2, 3, -4, 5, 7, -9, -7}, (int32_t[]){4, -4});
    /* with RELU and zero point -3: the second clamps to -3 */
    avg.zp = -3;
    avg.act = MP_ACT_RELU;
    hand(&avg, (int32_t[]){1, 2, 3, -4, 5, 7, -9, -7}, (int32_t[]){4, -3});
    /* SAME 3x3 stride 1 on 2x2: every window holds the 4 valid pixels (not 9):
     * 10+20+30+41 = 101 -> (101+2)/4 = 25 (25.25) everywhere; uint8 padded: plain C */
    qpool same = {MP_OP_AVERAGE_POOL_2D, MP_DT_UINT8, 1, 2, 2, 1, 3, 3, 1, 1, MP_PAD_SAME,
                  MP_ACT_NONE, 0.1f, 128};
    hand(&same, (int32_t[]){10, 20, 30, 41}, (int32_t[]){25, 25, 25, 25});
    /* uint8 VALID 2x2 on 1x2x2x2 (no padding: XNNPACK), zero point 3: channel 0
     * (10+20+30+40)/4 = 25 exactly, channel 1 (0+4+4+255)/4 = 65.75 -> 66 */
    qpool u = {MP_OP_AVERAGE_POOL_2D, MP_DT_UINT8, 1, 2, 2, 2, 2, 2, 1, 1, MP_PAD_VALID,
               MP_ACT_NONE, 0.25f, 3};
    hand(&u, (int32_t[]){10, 0, 20, 4, 30, 4, 40, 255}, (int32_t[]){25, 66});
    /* int8 max, 2x2 stride 2 VALID, RELU6 with scale 0.25 zp -20 -> range [-20, 4]:
     *   -30 -25 | 100 -1      max -15 -> -15;  max 100 -> 4
     *   -15 -40 |   3  2 */
    qpool mx = {MP_OP_MAX_POOL_2D, MP_DT_INT8, 1, 2, 4, 1, 2, 2, 2, 2, MP_PAD_VALID, MP_ACT_RELU6,
                0.25f, -20};
    hand(&mx, (int32_t[]){-30, -25, 100, -1, -15, -40, 3, 2}, (int32_t[]){-15, 4});
    /* uint8 max SAME 3x3 stride 2 on 1x3x3x1 (pads 1 on each side, the 2x2 output sees the
     * corners' neighbourhoods): 1 9 2 / 3 4 8 / 7 5 6 -> max of rows 0-1 cols 0-1 = 9,
     * rows 0-1 cols 1-2 = 9, rows 1-2 cols 0-1 = 7, rows 1-2 cols 1-2 = 8 */
    qpool mu = {MP_OP_MAX_POOL_2D, MP_DT_UINT8, 1, 3, 3, 1, 3, 3, 2, 2, MP_PAD_SAME, MP_ACT_NONE,
                1.0f, 0};
    hand(&mu, (int32_t[]){1, 9, 2, 3, 4, 8, 7, 5, 6}, (int32_t[]){9, 9, 7, 8});
    /* 1x1 windows, stride 2 (a strided copy), RELU_N1_TO_1 with scale 0.5 zp 0: [-2, 2] */
    qpool one = {MP_OP_MAX_POOL_2D, MP_DT_INT8, 1, 3, 3, 1, 1, 1, 2, 2, MP_PAD_VALID,
                 MP_ACT_RELU_N1_TO_1, 0.5f, 0};
    hand(&one, (int32_t[]){-7, 0, 1, 0, 0, 0, 2, 0, 3}, (int32_t[]){-2, 1, 2, 2});
    one.op = MP_OP_AVERAGE_POOL_2D;
    one.dt = MP_DT_UINT8;
    one.zp = 100; /* [98, 102] */
    hand(&one, (int32_t[]){50, 0, 101, 0, 0, 0, 102, 0, 200}, (int32_t[]){98, 101, 102, 102});
}

/* A window far larger than the input (50000 x 50000, SAME, stride 1): each output's window,
 * clipped to the input, holds all four pixels, so every output is their maximum (9) or their
 * rounded average ((1 - 4 + 9 + 2) / 4 = 2). The window's area (2.5e9) does not fit in int32: the
 * kernel must not multiply its sides (UndefinedBehaviorSanitizer aborts on the overflow). */
static void test_huge_window(void **state)
{
    (void)state;
    const int32_t ops[2] = {MP_OP_MAX_POOL_2D, MP_OP_AVERAGE_POOL_2D};
    const int32_t want[2] = {9, 2};
    for (int k = 0; k < 2; k++) {
        qpool p = {ops[k], MP_DT_INT8, 1, 2, 2, 1, 50000, 50000, 1, 1, MP_PAD_SAME, MP_ACT_NONE,
                   0.5f, 0};
        kh_case c;
        build(&c, &p);
        put(c.in[0], (int32_t[]){1, -4, 9, 2}, 4);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(mp_tensor_elements(c.out[0]), 4);
        for (size_t i = 0; i < 4; i++)
            assert_int_equal(got_at(c.out[0], i), want[k]);
        kh_free(&c);
    }
}

/* Averages over channel counts around the kernel's blocks of 256 channels and vector widths
 * (1, 7, 16, 17, 31, 33, 255, 256, 257, 300), int8 and padded uint8 (both in C), SAME 3x3
 * stride 2 with and without RELU6, bit for bit against the reference; then one window of
 * 65535 pixels (the most summed in 32 bits) and one of 65536 (64-bit sums), each of int8
 * extremes (every value -128, every value 127: the average is the value) and of random values,
 * against the reference. */
static void test_channels_and_window_sizes(void **state)
{
    (void)state;
    static const int32_t cs[] = {1, 7, 16, 17, 31, 33, 255, 256, 257, 300};
    uint32_t seed = 11;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int d = 0; d < 2; d++) {
            qpool p = {MP_OP_AVERAGE_POOL_2D, d ? MP_DT_UINT8 : MP_DT_INT8, 1, 5, 6, cs[i], 3, 3,
                       2, 2, MP_PAD_SAME, i % 2 ? MP_ACT_RELU6 : MP_ACT_NONE, 0.05f, d ? 7 : -5};
            size_t nx = (size_t)p.h * p.w * p.c, count = 0;
            int32_t *x = malloc(nx * sizeof *x);
            assert_non_null(x);
            for (size_t k = 0; k < nx; k++) {
                seed = seed * 1664525u + 1013904223u;
                x[k] = (int32_t)((seed >> 9) % 256) - (d ? 0 : 128);
            }
            assert_int_equal(run_case(&p, x, NULL, &count, 0), 0);
            free(x);
        }
    for (int32_t w = 65535; w <= 65536; w++)
        for (int fill = 0; fill < 3; fill++) {
            qpool p = {MP_OP_AVERAGE_POOL_2D, MP_DT_INT8, 1, 1, w, 2, 1, w, 1, 1, MP_PAD_VALID,
                       MP_ACT_NONE, 0.5f, 0};
            size_t nx = (size_t)w * 2, count = 0;
            int32_t *x = malloc(nx * sizeof *x);
            assert_non_null(x);
            for (size_t k = 0; k < nx; k++) {
                seed = seed * 1664525u + 1013904223u;
                x[k] = fill == 0 ? -128 : fill == 1 ? 127 : (int32_t)((seed >> 9) % 256) - 128;
            }
            int32_t want[2] = {fill == 0 ? -128 : 127, fill == 0 ? -128 : 127};
            assert_int_equal(run_case(&p, x, fill < 2 ? want : NULL, &count, 0), 0);
            free(x);
        }
}

static void test_random(void **state)
{
    (void)state;
    uint32_t seed = 7;
    size_t xnn_n = 0, xnn_off = 0, exact_n = 0, cases = 0;
    static const int32_t acts[] = {MP_ACT_NONE, MP_ACT_RELU, MP_ACT_RELU6, MP_ACT_RELU_N1_TO_1};
    for (int i = 0; i < 240; i++) {
        seed = seed * 1664525u + 1013904223u;
        uint32_t r = seed >> 4;
        qpool p = {i % 2 ? MP_OP_MAX_POOL_2D : MP_OP_AVERAGE_POOL_2D,
                   (i / 2) % 2 ? MP_DT_UINT8 : MP_DT_INT8,
                   1 + (int32_t)(r % 2),
                   1 + (int32_t)((r >> 1) % 9),
                   1 + (int32_t)((r >> 5) % 9),
                   1 + (int32_t)((r >> 9) % 5),
                   1 + (int32_t)((r >> 12) % 4),
                   1 + (int32_t)((r >> 14) % 4),
                   1 + (int32_t)((r >> 16) % 3),
                   1 + (int32_t)((r >> 18) % 3),
                   (r >> 20) % 2 ? MP_PAD_SAME : MP_PAD_VALID,
                   acts[(r >> 21) % 4],
                   0.02f + 0.01f * (float)((r >> 23) % 7),
                   0};
        if (p.padding == MP_PAD_VALID && (p.h < p.fh || p.w < p.fw))
            p.padding = MP_PAD_SAME;
        p.zp = is_s8(&p) ? (int64_t)((r >> 3) % 256) - 128 : (int64_t)((r >> 3) % 256);
        size_t nx = (size_t)p.n * p.h * p.w * p.c;
        int32_t *x = malloc(nx * sizeof *x);
        assert_non_null(x);
        for (size_t k = 0; k < nx; k++) {
            seed = seed * 1664525u + 1013904223u;
            x[k] = (int32_t)((seed >> 9) % 256) - (is_s8(&p) ? 128 : 0);
        }
        bool padded = total_pad(p.h, p.fh, p.sh, p.padding) > 0 ||
                      total_pad(p.w, p.fw, p.sw, p.padding) > 0;
        bool on_xnn = p.op == MP_OP_AVERAGE_POOL_2D && !is_s8(&p) && !padded && p.fh * p.fw > 1;
        size_t count = 0, off = run_case(&p, x, NULL, &count, on_xnn ? 1 : 0);
        if (on_xnn) {
            xnn_n += count;
            xnn_off += off;
        } else {
            exact_n += count;
        }
        cases++;
        free(x);
    }
    print_message("quantized pooling: %zu cases; bit for bit %zu outputs; uint8 average on "
                  "XNNPACK %zu outputs, %zu off by 1\n",
                  cases, exact_n, xnn_n, xnn_off);
    assert_true(xnn_n > 200 && exact_n > 1000);
    assert_true(xnn_off * 100 <= xnn_n * 5);
}

static void expect_error(qpool p, mp_dtype out_dt, float out_scale, int64_t out_zp,
                         int per_channel, const char *needle)
{
    static const float sc2[2] = {0.5f, 0.25f};
    static const int64_t zp2[2] = {0, 0};
    kh_case c;
    kh_init(&c, p.op, NULL);
    c.opt.padding = p.padding;
    c.opt.filter_h = p.fh;
    c.opt.filter_w = p.fw;
    c.opt.stride_h = p.sh;
    c.opt.stride_w = p.sw;
    c.opt.activation = p.act;
    mp_tensor *x = kh_input(&c, p.dt, 4, (int32_t[]){p.n, p.h, p.w, p.c}, NULL);
    mp_tensor *y = kh_output(&c, out_dt);
    kh_quant(&c, x, 1, &p.scale, &p.zp, 0);
    kh_quant(&c, y, 1, &out_scale, &out_zp, 0);
    if (per_channel)
        kh_quant(&c, x, 2, sc2, zp2, 3);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, needle);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    qpool p = {MP_OP_AVERAGE_POOL_2D, MP_DT_INT8, 1, 4, 4, 2, 2, 2, 2, 2, MP_PAD_VALID,
               MP_ACT_NONE, 0.5f, 1};
    expect_error(p, MP_DT_INT8, 0.25f, 1, 0, "must share their quantization");
    expect_error(p, MP_DT_INT8, 0.5f, 2, 0, "zero point 2) must share");
    expect_error(p, MP_DT_UINT8, 0.5f, 1, 0, "output 't1' is u8 but input 't0' is i8");
    expect_error(p, MP_DT_INT8, 0.5f, 1, 1, "'t0' has one scale per channel");
    p.act = MP_ACT_TANH;
    expect_error(p, MP_DT_INT8, 0.5f, 1, 0, "fused activation");
    p.act = MP_ACT_NONE;
    /* int16 runs (16x8: test_kernels_int16), with zero point 0 only */
    p.dt = MP_DT_INT16;
    p.zp = 3;
    p.op = MP_OP_MAX_POOL_2D;
    expect_error(p, MP_DT_INT16, 0.5f, 3, 0, "i16 input 't0' has zero point 3");
    p.zp = 0;
    p.dt = MP_DT_INT32;
    expect_error(p, MP_DT_INT32, 0.5f, 0, 0, "'t0' is i32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_huge_window),
        cmocka_unit_test(test_channels_and_window_sizes),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
