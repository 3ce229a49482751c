/* Tests of the layout and shape operators on quantized tensors: CONCATENATION requantizing
 * uint8 / int8 inputs as TensorFlow Lite's ConcatenationWithScaling (hand cases, random
 * parameters against the formula written here), PAD / PADV2 padding with the output's zero
 * point or the constant, SPACE_TO_BATCH_ND padding with the zero point, the parameter
 * checks TensorFlow Lite makes (PADV2's constant, SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND,
 * PACK, int16 CONCATENATION), and the plain moves (RESHAPE, SQUEEZE, EXPAND_DIMS,
 * STRIDED_SLICE, PACK) keeping 8-bit values. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static uint32_t g_seed = 4242;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

/* ---- CONCATENATION ---------------------------------------------------------------------- */

/* Hand, uint8 along axis 0, output (1.0, 0): input 0 (0.5, 128) = {128, 130, 131, 0} becomes
 * q * 0.5 - 64 rounded: 0, 1, 1.5 -> 2, -64 -> 0 (saturated); input 1 has the output's
 * parameters and is copied: {7, 255}. */
static void test_concat_hand_uint8(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_CONCATENATION, NULL);
    static const uint8_t a[4] = {128, 130, 131, 0}, b[2] = {7, 255};
    mp_tensor *t0 = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){4}, a);
    mp_tensor *t1 = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, b);
    mp_tensor *out = kh_output(&c, MP_DT_UINT8);
    float s0 = 0.5f, s1 = 1.0f;
    int64_t z0 = 128, z1 = 0;
    kh_quant(&c, t0, 1, &s0, &z0, 0);
    kh_quant(&c, t1, 1, &s1, &z1, 0);
    kh_quant(&c, out, 1, &s1, &z1, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){0, 1, 2, 0, 7, 255}), 6);
    kh_free(&c);
}

/* Hand, int8 [2,2] along axis 1 (two outer rows), output (0.25, -10): input 0 (0.5, 2) =
 * {2, 3 | -128, 127}: scale 2, bias -4: 0 -> -10, 2 -> -8, -260 -> -128, 250 -> 127
 * (saturated); input 1 [2,1] copied: {5 | -5}. */
static void test_concat_hand_int8(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_CONCATENATION, NULL);
    c.opt.axis = -1;
    static const int8_t a[4] = {2, 3, -128, 127}, b[2] = {5, -5};
    mp_tensor *t0 = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 2}, a);
    mp_tensor *t1 = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 1}, b);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    float s0 = 0.5f, so = 0.25f;
    int64_t z0 = 2, zo = -10;
    kh_quant(&c, t0, 1, &s0, &z0, 0);
    kh_quant(&c, t1, 1, &so, &zo, 0);
    kh_quant(&c, out, 1, &so, &zo, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){-10, -8, 5, -128, 127, -5}), 6);
    kh_free(&c);
}

/* ConcatenationWithScaling, float steps as TFLite: s = in_scale * (1 / out_scale), b = -zp *
 * s, round half away from zero of q * s + b, + zp_out, saturated. */
static int32_t ref_concat(int32_t q, float is, int32_t iz, float os, int32_t oz, int32_t lo,
                          int32_t hi)
{
    const float inv = 1.0f / os, s = is * inv, b = (float)-iz * s;
    float v = (float)q * s;
    v = v + b;
    double r = v < 0 ? -floor(-(double)v + 0.5) : floor((double)v + 0.5);
    r += oz;
    return r < lo ? lo : (r > hi ? hi : (int32_t)r);
}

static void test_concat_random(void **state)
{
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        bool u8 = trial % 2;
        mp_dtype dt = u8 ? MP_DT_UINT8 : MP_DT_INT8;
        int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
        int32_t n_in = 1 + (int32_t)(rnd() % 4), rank = 1 + (int32_t)(rnd() % 3);
        int32_t axis = (int32_t)(rnd() % (uint32_t)rank), base[3];
        for (int32_t d = 0; d < rank; d++)
            base[d] = 1 + (int32_t)(rnd() % 4);
        float scales[5];
        int64_t zps[5];
        for (int i = 0; i <= n_in; i++) {
            scales[i] = ldexpf(1.0f + (float)(rnd() % 1024) / 1024.0f, -(int)(rnd() % 9));
            zps[i] = lo + (int64_t)(rnd() % 256);
        }
        if (trial % 5 == 0) { /* input 0 shares the output's parameters: copied */
            scales[0] = scales[n_in];
            zps[0] = zps[n_in];
        }
        kh_case c;
        kh_init(&c, MP_OP_CONCATENATION, NULL);
        c.opt.axis = axis;
        mp_tensor *in[4];
        int32_t len[4];
        for (int32_t i = 0; i < n_in; i++) {
            int32_t dims[3];
            memcpy(dims, base, sizeof dims);
            dims[axis] = len[i] = 1 + (int32_t)(rnd() % 3);
            in[i] = kh_input(&c, dt, rank, dims, NULL);
            kh_quant(&c, in[i], 1, &scales[i], &zps[i], 0);
            for (size_t k = 0; k < in[i]->bytes; k++)
                ((uint8_t *)in[i]->data)[k] = (uint8_t)rnd();
        }
        mp_tensor *out = kh_output(&c, dt);
        kh_quant(&c, out, 1, &scales[n_in], &zps[n_in], 0);
        kh_expect_ok(&c, kh_run(&c));
        size_t outer = 1, inner = 1;
        for (int32_t d = 0; d < axis; d++)
            outer *= (size_t)base[d];
        for (int32_t d = axis + 1; d < rank; d++)
            inner *= (size_t)base[d];
        size_t at = 0;
        for (size_t o = 0; o < outer; o++)
            for (int32_t i = 0; i < n_in; i++)
                for (size_t k = 0; k < (size_t)len[i] * inner; k++, at++) {
                    size_t src = o * (size_t)len[i] * inner + k;
                    int32_t q = u8 ? ((uint8_t *)in[i]->data)[src] : ((int8_t *)in[i]->data)[src];
                    int32_t want = ref_concat(q, scales[i], (int32_t)zps[i], scales[n_in],
                                              (int32_t)zps[n_in], lo, hi);
                    int32_t got = u8 ? ((uint8_t *)out->data)[at] : ((int8_t *)out->data)[at];
                    if (got != want)
                        fail_msg("trial %d input %d q=%d: got %d want %d", trial, i, q, got, want);
                }
        kh_free(&c);
    }
}

/* Per-channel inputs are not requantized; fused activations on quantized outputs are
 * refused, as TFLite. (int16 inputs of other scales are copied: test_kernels_int16.) */
static void test_concat_errors(void **state)
{
    (void)state;
    float s2 = 0.25f, sc[2] = {0.5f, 0.5f};
    int64_t z0 = 0, zc[2] = {0, 0};
    kh_case c;
    kh_init(&c, MP_OP_CONCATENATION, NULL);
    mp_tensor *a = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, a, 2, sc, zc, 0);
    kh_quant(&c, out, 1, &s2, &z0, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i8 tensor 't0' has one scale per channel");
    kh_free(&c);

    kh_init(&c, MP_OP_CONCATENATION, NULL);
    c.opt.activation = MP_ACT_RELU;
    kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "fused activation on u8 output 't1'");
    kh_free(&c);
}

/* ---- PAD / PADV2 / SPACE_TO_BATCH_ND ---------------------------------------------------- */

/* int8 [2] padded [1,2] with zero point -7: {-7, x0, x1, -7, -7}; uint8 PADV2 with constant
 * 200 on the output's parameters: {200, x0, x1, 200}. */
static void test_pad_quantized(void **state)
{
    (void)state;
    static const int32_t pads[2] = {1, 2}, pads2[2] = {1, 1};
    float s = 0.5f;
    int64_t z = -7, zu = 30, zother = 31;
    kh_case c;
    kh_init(&c, MP_OP_PAD, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, pads);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    ((int8_t *)in->data)[0] = 100, ((int8_t *)in->data)[1] = -100;
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){-7, 100, -100, -7, -7}), 5);
    kh_free(&c);

    static const uint8_t cv[1] = {200};
    kh_init(&c, MP_OP_PADV2, NULL);
    in = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, pads2);
    mp_tensor *cvt = kh_input(&c, MP_DT_UINT8, 0, NULL, cv);
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, in, 1, &s, &zu, 0);
    kh_quant(&c, cvt, 1, &s, &zu, 0);
    kh_quant(&c, out, 1, &s, &zu, 0);
    ((uint8_t *)in->data)[0] = 1, ((uint8_t *)in->data)[1] = 2;
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){200, 1, 2, 200}), 4);
    kh_free(&c);

    /* the constant on other parameters is refused, as TFLite */
    kh_init(&c, MP_OP_PADV2, NULL);
    in = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, pads2);
    cvt = kh_input(&c, MP_DT_UINT8, 0, NULL, cv);
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, in, 1, &s, &zu, 0);
    kh_quant(&c, cvt, 1, &s, &zother, 0);
    kh_quant(&c, out, 1, &s, &zu, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t3' has scale 0.5 and zero point 30 but 't2'");
    kh_free(&c);

    /* a zero point outside the dtype cannot be the padding */
    int64_t zbad = 300;
    kh_init(&c, MP_OP_PAD, NULL);
    in = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, pads2);
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, out, 1, &s, &zbad, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "u8 output 't2' has zero point 300 outside [0, 255]");
    kh_free(&c);
}

/* int8 [1,2,1] space-to-batch with block 2 and paddings [1,1]: padded {zp, a, b, zp} split
 * into batches {zp, b} and {a, zp}; output parameters other than the input's are refused. */
static void test_space_to_batch_quantized(void **state)
{
    (void)state;
    static const int32_t block[1] = {2}, pads[2] = {1, 1};
    float s = 0.1f, s2 = 0.2f;
    int64_t z = 9;
    kh_case c;
    kh_init(&c, MP_OP_SPACE_TO_BATCH_ND, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 3, (int32_t[]){1, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, block);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, pads);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    ((int8_t *)in->data)[0] = -50, ((int8_t *)in->data)[1] = 60;
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 2);
    assert_memory_equal(out->data, ((int8_t[]){9, 60, -50, 9}), 4);
    kh_free(&c);

    kh_init(&c, MP_OP_BATCH_TO_SPACE_ND, NULL);
    in = kh_input(&c, MP_DT_UINT8, 3, (int32_t[]){2, 1, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, block);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, (int32_t[]){0, 0});
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s2, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "does not requantize");
    kh_free(&c);
}

/* ---- plain moves ------------------------------------------------------------------------ */

/* RESHAPE, SQUEEZE, EXPAND_DIMS and STRIDED_SLICE move int8 / uint8 bytes unchanged; PACK
 * too, and refuses inputs whose parameters differ from the output's (TFLite's check). */
static void test_moves_keep_bytes(void **state)
{
    (void)state;
    float s = 0.3f, s2 = 0.6f;
    int64_t z = -4;
    static const int32_t shape[2] = {3, 2}, axis1[1] = {1};
    static const int32_t b0[2] = {1, 0}, e0[2] = {3, 2}, st[2] = {1, 1};
    kh_case c;
    kh_init(&c, MP_OP_RESHAPE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 3}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, shape);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_fill_bytes(in, 3);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, in->data, 6);
    kh_free(&c);

    kh_init(&c, MP_OP_SQUEEZE, NULL);
    in = kh_input(&c, MP_DT_UINT8, 3, (int32_t[]){1, 5, 1}, NULL);
    out = kh_output(&c, MP_DT_UINT8);
    kh_fill_bytes(in, 5);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 1);
    assert_memory_equal(out->data, in->data, 5);
    kh_free(&c);

    kh_init(&c, MP_OP_EXPAND_DIMS, NULL);
    in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, axis1);
    out = kh_output(&c, MP_DT_INT8);
    kh_fill_bytes(in, 9);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_memory_equal(out->data, in->data, 4);
    kh_free(&c);

    kh_init(&c, MP_OP_STRIDED_SLICE, NULL);
    in = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){3, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, b0);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, e0);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, st);
    out = kh_output(&c, MP_DT_INT8);
    kh_fill_bytes(in, 11);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, (int8_t *)in->data + 2, 4);
    kh_free(&c);

    kh_init(&c, MP_OP_PACK, NULL);
    mp_tensor *a = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, NULL);
    mp_tensor *b = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){2}, NULL);
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, a, 1, &s, &z, 0);
    kh_quant(&c, b, 1, &s, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    memcpy(a->data, (uint8_t[]){1, 2}, 2);
    memcpy(b->data, (uint8_t[]){3, 4}, 2);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){1, 2, 3, 4}), 4);
    kh_free(&c);

    kh_init(&c, MP_OP_PACK, NULL);
    a = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    b = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, a, 1, &s, &z, 0);
    kh_quant(&c, b, 1, &s2, &z, 0);
    kh_quant(&c, out, 1, &s, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i8 't1' has scale 0.6 and zero point -4 but 't2'");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concat_hand_uint8),
        cmocka_unit_test(test_concat_hand_int8),
        cmocka_unit_test(test_concat_random),
        cmocka_unit_test(test_concat_errors),
        cmocka_unit_test(test_pad_quantized),
        cmocka_unit_test(test_space_to_batch_quantized),
        cmocka_unit_test(test_moves_keep_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
