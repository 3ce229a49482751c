/* Tests of RESIZE_NEAREST_NEIGHBOR: indices worked out by hand for the legacy, align_corners
 * and half_pixel_centers rules (up and down), a plain reference of TensorFlow Lite's
 * GetNearestNeighbor over random sizes and dtypes (float32, int8, uint8, int16), a deferred
 * size, and refusals. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

/* TensorFlow Lite's GetNearestNeighbor, restated. */
static int ref_index(int o, int in, int out, bool align, bool half)
{
    float scale = align && out > 1 ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
    float v = ((float)o + (half ? 0.5f : 0.0f)) * scale;
    int i = align ? (int)roundf(v) : (int)floorf(v);
    if (i > in - 1)
        i = in - 1;
    if (half && i < 0)
        i = 0;
    return i;
}

static void run_hand(int ih, int iw, int oh, int ow, bool align, bool half, const float *want)
{
    int32_t size[2] = {oh, ow};
    kh_case c;
    kh_init(&c, MP_OP_RESIZE_NEAREST_NEIGHBOR, NULL);
    c.opt.align_corners = align;
    c.opt.half_pixel_centers = half;
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, ih, iw, 1}, NULL);
    for (int i = 0; i < ih * iw; i++)
        ((float *)x->data)[i] = (float)i;
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(out->dims[1] == oh && out->dims[2] == ow);
    assert_memory_equal(out->data, want, sizeof(float) * (size_t)(oh * ow));
    kh_free(&c);
}

static void test_hand(void **state)
{
    (void)state;
    /* [[0,1],[2,3]] to 3x3. legacy: scale 2/3, floor(0, .67, 1.33) = 0,0,1;
     * align_corners: scale 1/2, round(0, .5, 1) = 0,1,1 (half away from zero);
     * half_pixel_centers: floor((o+.5)*2/3) = floor(.33, 1, 1.67) = 0,1,1 */
    static const float legacy[9] = {0, 0, 1, 0, 0, 1, 2, 2, 3};
    static const float align[9] = {0, 1, 1, 2, 3, 3, 2, 3, 3};
    run_hand(2, 2, 3, 3, false, false, legacy);
    run_hand(2, 2, 3, 3, true, false, align);
    run_hand(2, 2, 3, 3, false, true, align);
    /* a row of 4 {0,1,2,3} down to 3. legacy: scale 4/3: floor(0, 1.33, 2.67) = 0,1,2;
     * align_corners: scale 3/2: round(0, 1.5, 3) = 0,2,3; half_pixel: floor(.67, 2, 3.33)
     * = 0,2,3 */
    static const float d_legacy[3] = {0, 1, 2}, d_other[3] = {0, 2, 3};
    run_hand(1, 4, 1, 3, false, false, d_legacy);
    run_hand(1, 4, 1, 3, true, false, d_other);
    run_hand(1, 4, 1, 3, false, true, d_other);
    /* both options together, as TensorFlow Lite takes them: round((o+.5)*1/2) for 2 -> 3:
     * round(.25, .75, 1.25) = 0,1,1 */
    static const float both[3] = {0, 1, 1};
    run_hand(1, 2, 1, 3, true, true, both);
}

static void test_random(void **state)
{
    (void)state;
    uint32_t seed = 5;
    static const mp_dtype dts[4] = {MP_DT_FLOAT32, MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16};
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + trial % 2, ih = 1 + trial % 5, iw = 1 + trial * 3 % 7, ch = 1 + trial % 3;
        int oh = 1 + (int)((kh_frand(&seed, 1.0f) + 1.0f) * 6.0f);
        int ow = 1 + (int)((kh_frand(&seed, 1.0f) + 1.0f) * 6.0f);
        bool align = trial & 1, half = (trial >> 1) & 1;
        mp_dtype dt = dts[trial % 4];
        int32_t size[2] = {oh, ow};
        kh_case c;
        kh_init(&c, MP_OP_RESIZE_NEAREST_NEIGHBOR, NULL);
        c.opt.align_corners = align;
        c.opt.half_pixel_centers = half;
        mp_tensor *x = kh_input(&c, dt, 4, (int32_t[]){n, ih, iw, ch}, NULL);
        kh_fill_bytes(x, (unsigned)trial);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
        mp_tensor *out = kh_output(&c, dt);
        if (dt == MP_DT_INT8 || dt == MP_DT_UINT8) {
            static const float s = 0.25f;
            static const int64_t z = 3;
            kh_quant(&c, x, 1, &s, &z, 0);
            kh_quant(&c, out, 1, &s, &z, 0);
        }
        kh_expect_ok(&c, kh_run(&c));
        size_t es = mp_dtype_size(dt);
        for (int b = 0; b < n; b++)
            for (int y = 0; y < oh; y++)
                for (int xo = 0; xo < ow; xo++) {
                    int sy = ref_index(y, ih, oh, align, half), sx = ref_index(xo, iw, ow, align, half);
                    const uint8_t *want =
                        (const uint8_t *)x->data + (((size_t)b * ih + sy) * iw + sx) * ch * es;
                    const uint8_t *got =
                        (const uint8_t *)out->data + (((size_t)b * oh + y) * ow + xo) * ch * es;
                    if (memcmp(got, want, ch * es) != 0)
                        fail_msg("trial %d: pixel (%d,%d,%d) differs", trial, b, y, xo);
                }
        kh_free(&c);
    }
}

static void test_deferred_and_refusals(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_RESIZE_NEAREST_NEIGHBOR, NULL);
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 1, 2, 1}, NULL);
    memcpy(x->data, (float[]){7, 9}, 8);
    mp_tensor *sz = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
    memcpy(sz->data, (int32_t[]){2, 4}, 8);
    sz->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    const float want[8] = {7, 7, 9, 9, 7, 7, 9, 9};
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);

    static const int32_t zero[2] = {0, 4}, three[3] = {1, 2, 3}, ok[2] = {2, 2};
    static const float s1 = 0.5f, s2 = 0.25f;
    for (int k = 0; k < 4; k++) {
        kh_init(&c, MP_OP_RESIZE_NEAREST_NEIGHBOR, NULL);
        mp_dtype dt = k == 3 ? MP_DT_INT8 : MP_DT_FLOAT32;
        mp_tensor *in = kh_input(&c, dt, k == 2 ? 3 : 4,
                                 k == 2 ? (int32_t[]){2, 2, 1} : (int32_t[]){1, 2, 2, 1}, NULL);
        if (k == 1)
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, three);
        else
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, k == 0 ? zero : ok);
        mp_tensor *o = kh_output(&c, dt);
        if (k == 3) {
            kh_quant(&c, in, 1, &s1, NULL, 0);
            kh_quant(&c, o, 1, &s2, NULL, 0);
        }
        static const char *const needles[4] = {"cannot resize 't0' [1,2,2,1] to 0x4",
                                               "size 't1' must be int32 [2]",
                                               "must be NHWC (rank 4)", "does not requantize"};
        kh_expect_error(&c, k == 3 ? MP_ERR_UNSUPPORTED : MP_ERR_SHAPE, needles[k]);
        assert_non_null(strstr(c.err.msg, "RESIZE_NEAREST_NEIGHBOR"));
        kh_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_deferred_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
