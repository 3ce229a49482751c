/* Tests of RESIZE_BILINEAR against a plain reference of TensorFlow Lite's formula in its
 * three modes (legacy, align_corners, half_pixel_centers), hand-computed 2x2 cases, deferred
 * and changing output sizes, two threads, and errors. */
#include "tests/util/testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

enum { LEGACY, ALIGN, HALF };

/* TFLite: scale = (in-1)/(out-1) with align_corners (out > 1), else in/out; source
 * coordinate = (o + 0.5) * scale - 0.5 with half-pixel centers, else o * scale; the four
 * neighbours are floor (not below 0) and ceil (not above in-1), weighted by the distance
 * to the floor. */
static void ref_resize(const float *in, int n, int h, int w, int c, float *out, int oh, int ow,
                       int mode)
{
    float sy = (mode == ALIGN && oh > 1) ? (float)(h - 1) / (float)(oh - 1) : (float)h / (float)oh;
    float sx = (mode == ALIGN && ow > 1) ? (float)(w - 1) / (float)(ow - 1) : (float)w / (float)ow;
    for (int b = 0; b < n; b++)
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++) {
                float fy = mode == HALF ? ((float)y + 0.5f) * sy - 0.5f : (float)y * sy;
                float fx = mode == HALF ? ((float)x + 0.5f) * sx - 0.5f : (float)x * sx;
                int y0 = (int)floorf(fy), x0 = (int)floorf(fx);
                y0 = y0 < 0 ? 0 : y0;
                x0 = x0 < 0 ? 0 : x0;
                int y1 = (int)ceilf(fy), x1 = (int)ceilf(fx);
                y1 = y1 > h - 1 ? h - 1 : y1;
                x1 = x1 > w - 1 ? w - 1 : x1;
                float dy = fy - (float)y0, dx = fx - (float)x0;
                for (int k = 0; k < c; k++) {
#define AT(yy, xx) in[(((size_t)b * h + (yy)) * w + (xx)) * c + k]
                    out[(((size_t)b * oh + y) * ow + x) * c + k] =
                        AT(y0, x0) * (1 - dy) * (1 - dx) + AT(y1, x0) * dy * (1 - dx) +
                        AT(y0, x1) * (1 - dy) * dx + AT(y1, x1) * dy * dx;
#undef AT
                }
            }
}

static void expect_f32(const float *got, const float *want, size_t n)
{
    size_t at = 0;
    double e = mp_test_max_rel_err(got, want, n, 1.0, &at);
    if (e > 1e-5)
        fail_msg("element %zu: got %.9g want %.9g (rel err %g)", at, (double)got[at],
                 (double)want[at], e);
}

/* XNNPACK computes the source coordinate in a different (equivalent) order, so the
 * fractional weight can differ by a few float ulps of the coordinate (up to the input size).
 * The result then moves by that much times the step between neighbours: bound the error by
 * 8 ulps of the largest coordinate times the input's value range. */
static void expect_resized(const float *got, const float *want, size_t n, int size,
                           const float *in, size_t in_count)
{
    float lo = in[0], hi = in[0];
    for (size_t i = 1; i < in_count; i++) {
        lo = in[i] < lo ? in[i] : lo;
        hi = in[i] > hi ? in[i] : hi;
    }
    double tol = 8.0 * FLT_EPSILON * (double)size * (double)(hi - lo);
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - (double)want[i]);
        if (!(e <= tol + 1e-5 * fabs((double)want[i]) + 1e-7))
            fail_msg("element %zu: got %.9g want %.9g (abs err %g, bound %g)", i, (double)got[i],
                     (double)want[i], e, tol);
    }
}

static void set_mode(kh_case *c, int mode)
{
    c->opt.align_corners = mode == ALIGN;
    c->opt.half_pixel_centers = mode == HALF;
}

static void check_resize(int n, int h, int w, int ch, int oh, int ow, int mode,
                         pthreadpool_t pool)
{
    kh_case c;
    kh_init(&c, MP_OP_RESIZE_BILINEAR, pool);
    int32_t size[2] = {oh, ow};
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){n, h, w, ch}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    set_mode(&c, mode);
    float *x = in->data;
    size_t count = (size_t)n * h * w * ch, ocount = (size_t)n * oh * ow * ch;
    for (size_t i = 0; i < count; i++)
        x[i] = (float)((i * 37) % 23) - 11.0f + 0.1f * (float)(i % 50);
    mp_status st = kh_run(&c);
    if (st != MP_OK)
        fail_msg("%dx%d -> %dx%d mode %d: %s", h, w, oh, ow, mode, c.err.msg);
    assert_int_equal(out->rank, 4);
    assert_int_equal(out->dims[0], n);
    assert_int_equal(out->dims[1], oh);
    assert_int_equal(out->dims[2], ow);
    assert_int_equal(out->dims[3], ch);
    float *want = malloc(sizeof(float) * ocount);
    int extent = h > w ? h : w;
    ref_resize(x, n, h, w, ch, want, oh, ow, mode);
    expect_resized(out->data, want, ocount, extent, x, count);
    /* second run after new data */
    for (size_t i = 0; i < count; i++)
        x[i] = sinf((float)i);
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    ref_resize(x, n, h, w, ch, want, oh, ow, mode);
    expect_resized(out->data, want, ocount, extent, x, count);
    free(want);
    kh_free(&c);
}

static void test_resize_reference(void **state)
{
    (void)state;
    const int shapes[][4] = {{4, 4, 8, 8}, {3, 5, 7, 2}, {5, 7, 3, 2}, {2, 2, 5, 5},
                             {1, 1, 3, 3}, {4, 4, 1, 1}, {6, 3, 4, 9}, {3, 3, 3, 3},
                             {7, 5, 4, 10}, {10, 10, 3, 7}, {2, 9, 1, 4}, {100, 100, 37, 61}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int mode = LEGACY; mode <= HALF; mode++)
            check_resize(2, shapes[s][0], shapes[s][1], (int)s % 3 + 1 + (s == 4 ? 4 : 0),
                         shapes[s][2], shapes[s][3], mode, NULL);
    pthreadpool_t pool = pthreadpool_create(2);
    for (int mode = LEGACY; mode <= HALF; mode++)
        check_resize(3, 17, 13, 8, 33, 29, mode, pool);
    pthreadpool_destroy(pool);
}

static void run_hand(int mode, int oh, int ow, const float *want)
{
    static const float x[] = {0, 1, 2, 3}; /* [[0,1],[2,3]] */
    int32_t size[2] = {oh, ow};
    kh_case c;
    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, x);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    set_mode(&c, mode);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_f32(out->data, want, (size_t)(oh * ow));
    kh_free(&c);
}

static void test_resize_hand(void **state)
{
    (void)state;
    /* legacy 2x2 -> 4x4: source rows 0, 0.5, 1, 1.5 (clamped to 1) */
    static const float legacy[] = {0, 0.5f, 1, 1, 1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 2, 2.5f, 3, 3};
    run_hand(LEGACY, 4, 4, legacy);
    /* align corners 2x2 -> 3x3 */
    static const float align[] = {0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3};
    run_hand(ALIGN, 3, 3, align);
    /* half-pixel 2x2 -> 4x4: source -0.25, 0.25, 0.75, 1.25 */
    static const float half[] = {0,    0.25f, 0.75f, 1,    0.5f, 0.75f, 1.25f, 1.5f,
                                 1.5f, 1.75f, 2.25f, 2.5f, 2,    2.25f, 2.75f, 3};
    run_hand(HALF, 4, 4, half);
}

static void test_resize_deferred_and_resized(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 2}, NULL);
    mp_tensor *sz = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    c.opt.half_pixel_centers = true;
    float *x = in->data;
    for (int i = 0; i < 18; i++)
        x[i] = (float)i;
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    sz->value_known = true;
    int32_t *s = sz->data;
    s[0] = 6;
    s[1] = 5;
    assert_int_equal(kh_run(&c), MP_OK);
    float want[2 * 9 * 7 * 2];
    ref_resize(x, 1, 3, 3, 2, want, 6, 5, HALF);
    expect_f32(out->data, want, 60);
    /* new output size: infer and prepare again, same operator */
    s[0] = 2;
    s[1] = 7;
    assert_int_equal(kh_run(&c), MP_OK);
    assert_int_equal(out->dims[1], 2);
    assert_int_equal(out->dims[2], 7);
    ref_resize(x, 1, 3, 3, 2, want, 2, 7, HALF);
    expect_f32(out->data, want, 28);
    /* new input shape (batch 2, 9x7) */
    free(in->data);
    assert_true(mp_tensor_set_shape(in, 4, (int32_t[]){2, 9, 7, 2}));
    in->data = calloc(1, in->bytes + 16);
    x = in->data;
    for (int i = 0; i < 2 * 9 * 7 * 2; i++)
        x[i] = cosf((float)i);
    assert_int_equal(kh_run(&c), MP_OK);
    float want2[2 * 2 * 7 * 2];
    ref_resize(x, 2, 9, 7, 2, want2, 2, 7, HALF);
    expect_f32(out->data, want2, 56);
    kh_free(&c);
}

static void test_resize_errors(void **state)
{
    (void)state;
    static const int32_t size[] = {4, 4};
    kh_case c;
    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    kh_output(&c, MP_DT_FLOAT32);
    mp_status st = kh_run(&c);
    assert_int_equal(st, MP_ERR_SHAPE);
    assert_non_null(strstr(c.err.msg, "'t0' [2,2,1]"));
    kh_free(&c);

    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    kh_output(&c, MP_DT_FLOAT32);
    c.opt.align_corners = c.opt.half_pixel_centers = true;
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    kh_free(&c);

    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    kh_input(&c, MP_DT_UINT8, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    kh_output(&c, MP_DT_UINT8);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "'t0' is u8"));
    kh_free(&c);

    static const int32_t bad[] = {0, 4}, three[] = {1, 2, 3};
    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, bad);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_SHAPE);
    kh_free(&c);

    kh_init(&c, MP_OP_RESIZE_BILINEAR, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, three);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_SHAPE);
    assert_non_null(strstr(c.err.msg, "'t1'"));
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_reference),
        cmocka_unit_test(test_resize_hand),
        cmocka_unit_test(test_resize_deferred_and_resized),
        cmocka_unit_test(test_resize_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
