/* Tests of FULLY_CONNECTED on int8 and uint8 tensors (TensorFlow Lite's quantized fully
 * connected on XNNPACK's qs8 / qu8 operators, per-channel int8 weights as a qc8 1x1
 * convolution): cases by hand, and a plain integer reference of TensorFlow Lite's kernel
 * (int32 sum of (x - x_zp) * (w - w_zp) + bias, MultiplyByQuantizedMultiplier, + out_zp,
 * clamped to the activation's range) with inputs of rank 2 to 4 flattened, keep_num_dims,
 * omitted bias, fused activations, threads; and the refusals. XNNPACK requantizes in float:
 * every value is within 1 of the reference, and 95 % or more are equal. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/quant_math.h"
#include "tests/util/kernel_harness.h"

typedef struct qfc {
    int32_t rank, dims[4];      /* the input; rows = elements / in_c */
    int32_t in_c, out_c;
    bool keep_num_dims, bias;
    int32_t act;
    mp_dtype dt;                /* MP_DT_INT8 or MP_DT_UINT8 */
    bool per_channel;           /* int8 only */
    pthreadpool_t pool;
} qfc;

/* An LCG step: an integer in [lo, hi]. */
static int32_t next_int(uint32_t *state, int32_t lo, int32_t hi)
{
    *state = *state * 1103515245u + 12345u;
    return lo + (int32_t)((*state >> 9) % (uint32_t)(hi - lo + 1));
}

/* out = clamp(MultiplyByQuantizedMultiplier(acc, M(in_scale * w_scale / out_scale)) + out_zp),
 * TensorFlow Lite's requantization of one accumulator. */
static int32_t requantize(int32_t acc, double real_multiplier, int32_t out_zp, int32_t lo,
                          int32_t hi)
{
    int32_t m;
    int shift;
    assert_true(mp_quantize_multiplier(real_multiplier, &m, &shift));
    int32_t v = mp_multiply_by_quantized_multiplier(acc, m, shift) + out_zp;
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Element i of an int8 or uint8 buffer. */
static int32_t q8_at(const void *p, mp_dtype dt, size_t i)
{
    return dt == MP_DT_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* A case end to end: random integers, the kernel, TensorFlow Lite's reference, on two inputs. */
static void check_qfc(const qfc *p, const char *what)
{
    bool u8 = p->dt == MP_DT_UINT8;
    int32_t qmin = u8 ? 0 : -128, qmax = u8 ? 255 : 127;
    size_t elems = 1;
    for (int32_t i = 0; i < p->rank; i++)
        elems *= (size_t)p->dims[i];
    size_t rows = elems / (size_t)p->in_c, wn = (size_t)p->in_c * p->out_c;
    uint32_t state = (uint32_t)(p->in_c * 7919 + p->out_c);

    /* scales: the weights' vary by channel; a row's sum of in_c terms of ~ +-74 * +-73 lands
     * around +-40 in the output's integers */
    float w_scale[64], x_scale, y_scale = 0.05f;
    int32_t nscales = p->per_channel ? p->out_c : 1;
    assert_true(p->out_c <= 64);
    for (int32_t o = 0; o < nscales; o++)
        w_scale[o] = 0.002f + 0.0011f * (float)(o % 7);
    x_scale = y_scale * 40.0f / (w_scale[0] * 5400.0f * sqrtf((float)p->in_c));
    int64_t x_zp = u8 ? 125 : 9, y_zp = u8 ? 131 : -3, w_zp[64] = {0};
    w_zp[0] = u8 ? 140 : 0;
    int32_t lo = qmin, hi = qmax;
    if (p->act == MP_ACT_RELU || p->act == MP_ACT_RELU6)
        lo = (int32_t)y_zp;
    if (p->act == MP_ACT_RELU6)
        hi = (int32_t)y_zp + (int32_t)roundf(6.0f / y_scale); /* 120 above zp: in range */

    int8_t *w = malloc(wn);
    int32_t *bias = malloc((size_t)p->out_c * sizeof(int32_t));
    for (size_t i = 0; i < wn; i++)
        w[i] = (int8_t)(u8 ? next_int(&state, 0, 255) : next_int(&state, -127, 127));
    for (int32_t o = 0; o < p->out_c; o++)
        bias[o] = next_int(&state, -2500, 2500);

    kh_case c;
    kh_init(&c, MP_OP_FULLY_CONNECTED, p->pool);
    c.opt.keep_num_dims = p->keep_num_dims;
    c.opt.activation = p->act;
    mp_tensor *x = kh_input(&c, p->dt, p->rank, p->dims, NULL);
    kh_quant(&c, x, 1, &x_scale, &x_zp, 0);
    mp_tensor *wt = kh_input(&c, p->dt, 2, (int32_t[]){p->out_c, p->in_c}, w);
    kh_quant(&c, wt, nscales, w_scale, w_zp, 0);
    if (p->bias)
        kh_input(&c, MP_DT_INT32, 1, &p->out_c, bias);
    else
        kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, p->dt);
    kh_quant(&c, y, 1, &y_scale, &y_zp, 0);

    size_t same = 0, inside = 0, total = 0; /* over both inputs */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < elems; i++) {
            int32_t v = next_int(&state, qmin, qmax);
            if (u8)
                ((uint8_t *)x->data)[i] = (uint8_t)v;
            else
                ((int8_t *)x->data)[i] = (int8_t)v;
        }
        kh_expect_ok(&c, pass == 0 ? kh_run(&c) : kh_rerun(&c, false));
        if (p->keep_num_dims) {
            assert_int_equal(y->rank, p->rank);
            for (int32_t i = 0; i + 1 < p->rank; i++)
                assert_int_equal(y->dims[i], p->dims[i]);
            assert_int_equal(y->dims[p->rank - 1], p->out_c);
        } else {
            assert_int_equal(y->rank, 2);
            assert_int_equal(y->dims[0], (int32_t)rows);
            assert_int_equal(y->dims[1], p->out_c);
        }
        total += rows * (size_t)p->out_c;
        for (size_t r = 0; r < rows; r++)
            for (int32_t o = 0; o < p->out_c; o++) {
                int32_t acc = p->bias ? bias[o] : 0;
                for (int32_t i = 0; i < p->in_c; i++)
                    acc += (q8_at(x->data, p->dt, r * (size_t)p->in_c + (size_t)i) - (int32_t)x_zp) *
                           (q8_at(w, p->dt, (size_t)o * p->in_c + (size_t)i) - (int32_t)w_zp[0]);
                double mult = (double)x_scale * w_scale[p->per_channel ? o : 0] / y_scale;
                int32_t want = requantize(acc, mult, (int32_t)y_zp, lo, hi);
                int32_t got = q8_at(y->data, p->dt, r * (size_t)p->out_c + (size_t)o);
                if (abs(got - want) > 1) {
                    fprintf(stderr, "%s: row %zu channel %d: got %d, want %d\n", what, r, o, got,
                            want);
                    fail();
                }
                same += got == want;
                inside += want > lo && want < hi;
            }
    }
    fprintf(stderr, "%s: %zu of %zu equal to the reference, %zu inside the range\n", what, same,
            total, inside);
    assert_true(same * 100 >= total * 95);
    assert_true(inside * 10 >= total);
    kh_free(&c);
    free(w);
    free(bias);
}

/* ---- by hand ---------------------------------------------------------------------------- */

/* uint8, 2 inputs to 2 outputs. x scale 0.25 zp 128; weights scale 0.5 zp 120; bias at 0.125;
 * output scale 0.5 zp 100.
 *   x (132, 120): real (1, -2). weight rows (122, 126): real (1, 3); (116, 120): (-2, 0).
 *   bias (16, 40): real (2, 5).
 *   out0 = 1 - 6 + 2 = -3 -> 100 - 6 = 94;  out1 = -2 + 0 + 5 = 3 -> 106.
 *   integers: 4*2 + (-8)*6 + 16 = -24, times 0.25*0.5/0.5 = 0.25: -6; 4*(-4) + 0 + 40 = 24: 6.
 * Then int8 with per-channel weights, no bias: x scale 0.5 zp 0, weights scales (0.5, 0.25),
 * output scale 1 zp 0. x (2, -4): real (1, -2); rows (2, 2): real (1, 1) -> -1;
 * (4, -8): real (1, -2) -> 5. integers: -4 * 0.25 = -1; 40 * 0.125 = 5. No rounding anywhere. */
static void test_hand(void **state)
{
    (void)state;
    static const uint8_t wu[4] = {122, 126, 116, 120};
    static const int32_t bias[2] = {16, 40};
    static const float xs = 0.25f, ws = 0.5f, ys = 0.5f;
    static const int64_t xz = 128, wz = 120, yz = 100;
    kh_case c;
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    mp_tensor *x = kh_input(&c, MP_DT_UINT8, 2, (int32_t[]){1, 2}, NULL);
    kh_quant(&c, x, 1, &xs, &xz, 0);
    kh_quant(&c, kh_input(&c, MP_DT_UINT8, 2, (int32_t[]){2, 2}, wu), 1, &ws, &wz, 0);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, bias);
    mp_tensor *y = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, y, 1, &ys, &yz, 0);
    memcpy(x->data, (const uint8_t[]){132, 120}, 2);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((uint8_t *)y->data)[0], 94);
    assert_int_equal(((uint8_t *)y->data)[1], 106);
    kh_free(&c);

    static const int8_t wi[4] = {2, 2, 4, -8};
    static const float wscales[2] = {0.5f, 0.25f}, xs8 = 0.5f, ys8 = 1.0f;
    static const int64_t zeros[2] = {0, 0};
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    x = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){1, 2}, NULL);
    kh_quant(&c, x, 1, &xs8, zeros, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 2}, wi), 2, wscales, zeros, 0);
    kh_omit_input(&c);
    y = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, y, 1, &ys8, zeros, 0);
    memcpy(x->data, (const int8_t[]){2, -4}, 2);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((int8_t *)y->data)[0], -1);
    assert_int_equal(((int8_t *)y->data)[1], 5);
    kh_free(&c);
}

/* ---- against the reference -------------------------------------------------------------- */

static void test_reference(void **state)
{
    (void)state;
    static const qfc cases[] = {
        /* rank, dims, in_c, out_c, keep_num_dims, bias, act, dtype, per_channel */
        {2, {3, 20}, 20, 8, false, true, MP_ACT_NONE, MP_DT_INT8, false, NULL},
        {2, {2, 16}, 16, 5, false, true, MP_ACT_RELU, MP_DT_INT8, true, NULL},
        /* rank 4 flattened to [6, 8] */
        {4, {2, 3, 2, 4}, 8, 6, false, false, MP_ACT_RELU6, MP_DT_INT8, true, NULL},
        {4, {1, 2, 5, 3}, 15, 9, false, true, MP_ACT_NONE, MP_DT_INT8, false, NULL},
        /* keep_num_dims: [2, 3, 10] -> [2, 3, 7] */
        {3, {2, 3, 10}, 10, 7, true, true, MP_ACT_RELU, MP_DT_INT8, true, NULL},
        {4, {2, 1, 2, 12}, 12, 4, true, false, MP_ACT_NONE, MP_DT_INT8, false, NULL},
        /* uint8, weight zero point 140 */
        {2, {2, 16}, 16, 6, false, true, MP_ACT_RELU6, MP_DT_UINT8, false, NULL},
        {4, {2, 2, 2, 3}, 6, 5, false, false, MP_ACT_NONE, MP_DT_UINT8, false, NULL},
        {3, {2, 2, 9}, 9, 3, true, true, MP_ACT_RELU, MP_DT_UINT8, false, NULL},
    };
    char what[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(what, sizeof what, "fc case %zu", i);
        check_qfc(&cases[i], what);
    }
}

static void test_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    qfc a = {2, {32, 64}, 64, 48, false, true, MP_ACT_RELU6, MP_DT_INT8, true, pool};
    qfc b = {3, {4, 8, 40}, 40, 24, true, true, MP_ACT_NONE, MP_DT_INT8, false, pool};
    qfc u = {2, {17, 33}, 33, 20, false, false, MP_ACT_NONE, MP_DT_UINT8, false, pool};
    check_qfc(&a, "threads per channel");
    check_qfc(&b, "threads per tensor");
    check_qfc(&u, "threads uint8");
    pthreadpool_destroy(pool);
}

/* ---- refusals --------------------------------------------------------------------------- */

static const float k_s[3] = {0.5f, 0.25f, 0.125f};
static const int64_t k_z[3] = {0, 0, 0};
static const int8_t k_w[6] = {1, -2, 3, -4, 5, -6};

/* int8 [1, 2] x [3, 2] weights (scales along `wdim`), no bias; tensors t0 x, t1 w, t2 y. */
static void fc_case(kh_case *c, mp_dtype xdt, int32_t wscales, int32_t wdim)
{
    kh_init(c, MP_OP_FULLY_CONNECTED, NULL);
    kh_quant(c, kh_input(c, xdt, 2, (int32_t[]){1, 2}, NULL), 1, k_s, k_z, 0);
    kh_quant(c, kh_input(c, MP_DT_INT8, 2, (int32_t[]){3, 2}, k_w), wscales, k_s, k_z, wdim);
    kh_omit_input(c);
    kh_quant(c, kh_output(c, xdt), 1, k_s, k_z, 0);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;

    fc_case(&c, MP_DT_INT8, 3, 0); /* the case the others change: it runs */
    kh_expect_ok(&c, kh_run(&c));
    kh_free(&c);

    /* per-channel parameters on the input */
    fc_case(&c, MP_DT_INT8, 1, 0);
    kh_quant(&c, &c.tensors[0], 2, k_s, k_z, 1);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "i8 tensor 't0' has one scale per channel");
    kh_free(&c);

    /* int32 activations (int16 ones run as 16x8: test_kernels_int16) */
    fc_case(&c, MP_DT_INT32, 1, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't0' is i32; expected f32, i8, u8 or i16");
    kh_free(&c);

    /* uint8 activations with int8 weights */
    fc_case(&c, MP_DT_UINT8, 1, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "weights 't1' are i8; with u8 input 't0' it must be u8");
    kh_free(&c);

    /* fused TANH */
    fc_case(&c, MP_DT_INT8, 1, 0);
    c.opt.activation = MP_ACT_TANH;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "fused activation TANH has no integer range on i8 output 't2'");
    kh_free(&c);

    /* scales along the input dimension */
    fc_case(&c, MP_DT_INT8, 2, 1);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED,
                    "weights 't1' (i8) have 2 scales along dimension 1; expected one, or one per "
                    "output channel along dimension 0");
    kh_free(&c);

    /* an int8 bias */
    fc_case(&c, MP_DT_INT8, 1, 0);
    c.node.n_in = 2;
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, k_w);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "bias 't3' is i8; with i8 input 't0' it must be i32");
    kh_free(&c);

    /* int8 weights computed at run time */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 2, (int32_t[]){1, 2}, NULL), 1, k_s, k_z, 0);
    kh_quant(&c, kh_input(&c, MP_DT_INT8, 2, (int32_t[]){3, 2}, NULL), 1, k_s, k_z, 0);
    kh_omit_input(&c);
    kh_quant(&c, kh_output(&c, MP_DT_INT8), 1, k_s, k_z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "weights 't1' are i8 computed at run time");
    kh_free(&c);

    /* XNNPACK's limit: 0.5 * 0.5 / (1/1024) = 256 is refused, per tensor and per channel */
    static const float small = 1.0f / 1024.0f;
    fc_case(&c, MP_DT_INT8, 1, 0);
    kh_quant(&c, &c.tensors[2], 1, &small, k_z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "operator #0 FULLY_CONNECTED: XNNPACK i8 fully "
                                            "connected create (input scale * weight scale / "
                                            "output scale 256..256");
    kh_free(&c);
    fc_case(&c, MP_DT_INT8, 3, 0);
    kh_quant(&c, &c.tensors[2], 1, &small, k_z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output scale 64..256");
    kh_free(&c);

    /* below 2^-32, where this XNNPACK aborts: refused by the kernel */
    static const float big = 1e12f;
    fc_case(&c, MP_DT_INT8, 1, 0);
    kh_quant(&c, &c.tensors[2], 1, &big, k_z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "of 2.5e-13 is below 2^-32");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
