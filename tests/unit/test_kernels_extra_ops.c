/* Tests of REDUCE_ANY / REDUCE_ALL (reduce.c), ADD_N, ATAN2, BITWISE_XOR, RIGHT_SHIFT
 * (binary_math.c), SIGN and RELU_0_TO_1 (unary_math.c), L2_POOL_2D (pool.c) and
 * LOCAL_RESPONSE_NORMALIZATION (normalization.c): hand-derived cases (empty reductions,
 * two's complement wrap, the quadrants of ATAN2, shifts clamped to the dtype's width, NaN and
 * -0, an L2 window, LRN as an L2 normalization when the window spans the row), randomized
 * cases with broadcasting against references restated here from the definitions (RIGHT_SHIFT
 * as the floor of x / 2^s, L2 pooling over the window inside the input, LRN's windowed sum of
 * squares), the 8-bit RELU_0_TO_1 against a C
 * restatement of TensorFlow Lite's ReluX, refusals with their messages, and one model written
 * with the writer that holds several of them (and CONV_3D / CONV_3D_TRANSPOSE, tested in
 * test_kernels_conv3d), run through a session in static and dynamic modes with equal
 * outputs. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

/* ---- REDUCE_ANY / REDUCE_ALL ------------------------------------------------------------ */

static mp_tensor *run_logic_reduce(kh_case *c, int32_t op, int32_t rank, const int32_t *dims,
                                   const uint8_t *x, int32_t naxes, const int32_t *axes,
                                   bool keep)
{
    kh_init(c, op, NULL);
    c->opt.keep_dims = keep;
    mp_tensor *in = kh_input(c, MP_DT_BOOL, rank, dims, NULL);
    if (mp_tensor_elements(in))
        memcpy(in->data, x, mp_tensor_elements(in));
    kh_input(c, MP_DT_INT32, 1, &naxes, axes);
    mp_tensor *out = kh_output(c, MP_DT_BOOL);
    kh_expect_ok(c, kh_run(c));
    return out;
}

static void test_any_all_hand(void **state)
{
    (void)state;
    const int32_t d23[2] = {2, 3}, ax1 = 1, ax0 = 0;
    /* {{1,0,0},{0,0,0}}: any over axis 1 {1,0}; all over axis 0 of {{1,1,0},{1,0,2}}
     * {1,0,0} (2 is true) */
    const uint8_t a[6] = {1, 0, 0, 0, 0, 0}, b[6] = {1, 1, 0, 1, 0, 2};
    kh_case c;
    mp_tensor *out = run_logic_reduce(&c, MP_OP_REDUCE_ANY, 2, d23, a, 1, &ax1, false);
    assert_true(out->rank == 1 && out->dims[0] == 2);
    assert_memory_equal(out->data, ((uint8_t[]){1, 0}), 2);
    kh_free(&c);
    out = run_logic_reduce(&c, MP_OP_REDUCE_ALL, 2, d23, b, 1, &ax0, true);
    assert_true(out->rank == 2 && out->dims[0] == 1 && out->dims[1] == 3);
    assert_memory_equal(out->data, ((uint8_t[]){1, 0, 0}), 3);
    kh_free(&c);
    out = run_logic_reduce(&c, MP_OP_REDUCE_ALL, 2, d23, b, 1, &ax1, false);
    assert_memory_equal(out->data, ((uint8_t[]){0, 0}), 2);
    kh_free(&c);
    out = run_logic_reduce(&c, MP_OP_REDUCE_ANY, 2, d23, b, 1, &ax0, false);
    assert_memory_equal(out->data, ((uint8_t[]){1, 1, 1}), 3);
    kh_free(&c);
    /* an empty reduction gives the identities: [2,0] over axis 1 */
    const int32_t d20[2] = {2, 0};
    out = run_logic_reduce(&c, MP_OP_REDUCE_ANY, 2, d20, a, 1, &ax1, false);
    assert_memory_equal(out->data, ((uint8_t[]){0, 0}), 2);
    kh_free(&c);
    out = run_logic_reduce(&c, MP_OP_REDUCE_ALL, 2, d20, a, 1, &ax1, false);
    assert_memory_equal(out->data, ((uint8_t[]){1, 1}), 2);
    kh_free(&c);
}

static void test_any_all_random(void **state)
{
    (void)state;
    uint32_t seed = 7;
    for (int trial = 0; trial < 200; trial++) {
        const bool any = trial & 1, keep = (trial >> 1) & 1;
        int32_t rank = 1 + kh_irand(&seed, 4), dims[4], naxes = kh_irand(&seed, 3), axes[3];
        bool red[4] = {false};
        for (int32_t i = 0; i < rank; i++)
            dims[i] = 1 + kh_irand(&seed, 4);
        for (int32_t i = 0; i < naxes; i++) {
            int32_t a = kh_irand(&seed, rank);
            red[a] = true;
            axes[i] = kh_irand(&seed, 2) ? a - rank : a;
        }
        size_t count = 1, outs = 1;
        int32_t odims[4];
        for (int32_t i = 0; i < rank; i++) {
            count *= (size_t)dims[i];
            odims[i] = red[i] ? 1 : dims[i];
            outs *= (size_t)odims[i];
        }
        uint8_t x[256], want[256];
        /* mostly one value so that both answers occur */
        const int sparse = kh_irand(&seed, 2);
        for (size_t i = 0; i < count; i++)
            x[i] = (uint8_t)(kh_irand(&seed, 8) == 0 ? !sparse : sparse);
        for (size_t o = 0; o < outs; o++)
            want[o] = any ? 0 : 1;
        int32_t idx[4] = {0}, oidx[4];
        for (size_t i = 0; i < count; i++) {
            for (int32_t d = 0; d < rank; d++)
                oidx[d] = red[d] ? 0 : idx[d];
            size_t o = kh_flat(rank, odims, oidx);
            want[o] = any ? (uint8_t)(want[o] || x[i]) : (uint8_t)(want[o] && x[i]);
            kh_next(rank, dims, idx);
        }
        kh_case c;
        mp_tensor *out = run_logic_reduce(&c, any ? MP_OP_REDUCE_ANY : MP_OP_REDUCE_ALL, rank,
                                          dims, x, naxes, axes, keep);
        assert_int_equal(mp_tensor_elements(out), outs);
        assert_memory_equal(out->data, want, outs);
        kh_free(&c);
    }
}

static void test_any_all_errors(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d = 3, ax = 0, bad = 2;
    kh_init(&c, MP_OP_REDUCE_ANY, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, &ax);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: bool");
    kh_free(&c);
    kh_init(&c, MP_OP_REDUCE_ALL, NULL);
    kh_input(&c, MP_DT_BOOL, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, &ax);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output");
    kh_free(&c);
    kh_init(&c, MP_OP_REDUCE_ALL, NULL);
    kh_input(&c, MP_DT_BOOL, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, &bad);
    kh_output(&c, MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_SHAPE, "out of range");
    kh_free(&c);
}

/* ---- ADD_N ------------------------------------------------------------------------------ */

static void test_add_n(void **state)
{
    (void)state;
    const int32_t d[2] = {2, 2};
    kh_case c;
    kh_init(&c, MP_OP_ADD_N, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, d, (float[]){1, 2, 3, 4});
    mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 2, d, NULL);
    memcpy(b->data, (float[]){0.5f, -2, 0, 10}, 16);
    kh_input(&c, MP_DT_FLOAT32, 2, d, (float[]){-1, 0.25f, 7, -14});
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(out->rank == 2 && out->dims[1] == 2);
    assert_memory_equal(out->data, ((float[]){0.5f, 0.25f, 10, 0}), 16);
    kh_free(&c);
    /* int32: two's complement wrap */
    kh_init(&c, MP_OP_ADD_N, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, (int32_t[]){INT32_MAX, -5, 1});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, (int32_t[]){1, 7, 2});
    out = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int32_t[]){INT32_MIN, 2, 3}), 12);
    kh_free(&c);
    /* random: 2 to 6 inputs against a sum in input order */
    uint32_t seed = 3;
    for (int trial = 0; trial < 20; trial++) {
        int32_t k = 2 + kh_irand(&seed, 5), n = 1 + kh_irand(&seed, 40);
        float x[6][40], want[40];
        kh_init(&c, MP_OP_ADD_N, NULL);
        for (int32_t j = 0; j < k; j++) {
            kh_fill(x[j], (size_t)n, seed + (uint32_t)j, 3.0f);
            mp_tensor *t = kh_input(&c, MP_DT_FLOAT32, 1, &n, NULL);
            memcpy(t->data, x[j], (size_t)n * 4);
        }
        for (int32_t i = 0; i < n; i++) {
            float s = 0.0f;
            for (int32_t j = 0; j < k; j++)
                s += x[j][i];
            want[i] = s;
        }
        out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->data, want, (size_t)n * 4);
        kh_free(&c);
    }
}

static void test_add_n_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_ADD_N, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "differ in shape");
    kh_free(&c);
    kh_init(&c, MP_OP_ADD_N, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "differ in dtype");
    kh_free(&c);
    kh_init(&c, MP_OP_ADD_N, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, i32");
    kh_free(&c);
    kh_init(&c, MP_OP_ADD_N, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "at least 2 inputs");
    kh_free(&c);
}

/* ---- SIGN, RELU_0_TO_1 ------------------------------------------------------------------ */

static void run_unary(int32_t op, mp_dtype dt, int32_t n, const void *x, bool as_const, void *y)
{
    kh_case c;
    kh_init(&c, op, NULL);
    mp_tensor *in = kh_input(&c, dt, 1, &n, as_const ? x : NULL);
    if (!as_const)
        memcpy(in->data, x, in->bytes);
    mp_tensor *out = kh_output(&c, dt);
    kh_expect_ok(&c, kh_run(&c));
    memcpy(y, out->data, out->bytes);
    kh_free(&c);
}

static void test_sign_relu01(void **state)
{
    (void)state;
    const float x[7] = {-2.5f, -0.0f, 0.0f, 3.0f, NAN, -INFINITY, 1e-30f};
    float y[7];
    for (int k = 0; k < 2; k++) {
        run_unary(MP_OP_SIGN, MP_DT_FLOAT32, 7, x, k, y);
        assert_memory_equal(y, ((float[]){-1, 0, 0, 1, 0, -1, 1}), sizeof y);
        run_unary(MP_OP_RELU_0_TO_1, MP_DT_FLOAT32, 7, x, k, y);
        assert_memory_equal(y, ((float[]){0, 0, 0, 1, 0, 0, 1e-30f}), sizeof y);
    }
    const float r[4] = {0.25f, 1.0f, 0.999f, 1.5f};
    run_unary(MP_OP_RELU_0_TO_1, MP_DT_FLOAT32, 4, r, false, y);
    assert_memory_equal(y, ((float[]){0.25f, 1.0f, 0.999f, 1.0f}), 16);
    const int32_t xi[4] = {INT32_MIN, -1, 0, 7};
    int32_t yi[4];
    run_unary(MP_OP_SIGN, MP_DT_INT32, 4, xi, false, yi);
    assert_memory_equal(yi, ((int32_t[]){-1, -1, 0, 1}), sizeof yi);
}

/* TensorFlow Lite's ReluX for (0, 1), restated: zp_out + MBQM(q - zp_in) by in / out scale
 * (the float ratio), clamped to [max(qmin, zp_out), min(qmax, zp_out + round(1 / scale))]. */
static void test_relu01_q8(void **state)
{
    (void)state;
    const struct { mp_dtype dt; float si; int64_t zi; float so; int64_t zo; } q[4] = {
        {MP_DT_INT8, 0.02f, -10, 1.0f / 255, -128},
        {MP_DT_INT8, 0.01f, 3, 0.01f, 3},
        {MP_DT_UINT8, 0.05f, 128, 0.004f, 0},
        {MP_DT_UINT8, 0.1f, 100, 0.002f, 10}, /* zp + 500 steps: the dtype's 255 caps */
    };
    for (int k = 0; k < 4; k++) {
        int32_t lo, hi, m;
        int s;
        qref_range(q[k].dt, &lo, &hi);
        qref_quantize_multiplier((double)(q[k].si / q[k].so), &m, &s);
        const int32_t top = (int32_t)q[k].zo + (int32_t)roundf(1.0f / q[k].so);
        const int32_t qlo = (int32_t)q[k].zo > lo ? (int32_t)q[k].zo : lo;
        const int32_t qhi = top < hi ? top : hi;
        int32_t n = hi - lo + 1;
        uint8_t x[256], y[256];
        for (int32_t v = lo; v <= hi; v++)
            qref_store(q[k].dt, x, (size_t)(v - lo), v);
        kh_case c;
        kh_init(&c, MP_OP_RELU_0_TO_1, NULL);
        mp_tensor *in = kh_input(&c, q[k].dt, 1, &n, NULL);
        kh_quant(&c, in, 1, &q[k].si, &q[k].zi, 0);
        memcpy(in->data, x, (size_t)n);
        mp_tensor *out = kh_output(&c, q[k].dt);
        kh_quant(&c, out, 1, &q[k].so, &q[k].zo, 0);
        kh_expect_ok(&c, kh_run(&c));
        memcpy(y, out->data, (size_t)n);
        kh_free(&c);
        for (int32_t v = lo; v <= hi; v++) {
            int32_t r = (int32_t)q[k].zo + qref_mbqm(v - (int32_t)q[k].zi, m, s);
            r = r < qlo ? qlo : (r > qhi ? qhi : r);
            if (qref_load(q[k].dt, y, (size_t)(v - lo)) != r)
                fail_msg("case %d input %d: got %d, want %d", k, v,
                         qref_load(q[k].dt, y, (size_t)(v - lo)), r);
        }
    }
}

static void test_unary_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_SIGN, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, f64, i32");
    kh_free(&c);
    kh_init(&c, MP_OP_RELU_0_TO_1, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, i8, u8");
    kh_free(&c);
}

/* ---- ATAN2, BITWISE_XOR, RIGHT_SHIFT ---------------------------------------------------- */

static mp_tensor *run_binary(kh_case *c, int32_t op, mp_dtype dt, int32_t ra, const int32_t *da,
                             const void *a, int32_t rb, const int32_t *db, const void *b)
{
    kh_init(c, op, NULL);
    mp_tensor *ta = kh_input(c, dt, ra, da, NULL);
    memcpy(ta->data, a, ta->bytes);
    mp_tensor *tb = kh_input(c, dt, rb, db, NULL);
    memcpy(tb->data, b, tb->bytes);
    mp_tensor *out = kh_output(c, dt);
    kh_expect_ok(c, kh_run(c));
    return out;
}

static void test_atan2(void **state)
{
    (void)state;
    const int32_t d = 6;
    const float y[6] = {1, 1, -1, 0, -1, 0}, x[6] = {1, -1, -1, -1, 0, 2};
    const double pi = 3.14159265358979323846;
    const double want[6] = {pi / 4, 3 * pi / 4, -3 * pi / 4, pi, -pi / 2, 0};
    kh_case c;
    mp_tensor *out = run_binary(&c, MP_OP_ATAN2, MP_DT_FLOAT32, 1, &d, y, 1, &d, x);
    for (int i = 0; i < 6; i++)
        assert_true(fabs(((float *)out->data)[i] - want[i]) < 1e-6);
    kh_free(&c);
    /* broadcasting [2,3,4] against [3,1] */
    const int32_t da[3] = {2, 3, 4}, db[2] = {3, 1};
    float a[24], b[3];
    kh_fill(a, 24, 5, 2.0f);
    kh_fill(b, 3, 6, 2.0f);
    out = run_binary(&c, MP_OP_ATAN2, MP_DT_FLOAT32, 3, da, a, 2, db, b);
    assert_true(out->rank == 3 && out->dims[2] == 4);
    for (size_t i = 0; i < 24; i++) {
        double w = atan2((double)a[kh_bc_offset(c.in[0], 3, da, i)],
                         (double)b[kh_bc_offset(c.in[1], 3, da, i)]);
        assert_true(fabs(((float *)out->data)[i] - w) <= 1e-6 * fabs(w) + 1e-7);
    }
    kh_free(&c);
}

static const mp_dtype k_int_dts[6] = {MP_DT_INT8, MP_DT_INT16, MP_DT_INT32,
                                      MP_DT_UINT8, MP_DT_UINT16, MP_DT_UINT32};

static int64_t load_int(mp_dtype dt, const void *p, size_t i)
{
    switch (dt) {
    case MP_DT_INT8: return ((const int8_t *)p)[i];
    case MP_DT_INT16: return ((const int16_t *)p)[i];
    case MP_DT_INT32: return ((const int32_t *)p)[i];
    case MP_DT_UINT8: return ((const uint8_t *)p)[i];
    case MP_DT_UINT16: return ((const uint16_t *)p)[i];
    default: return ((const uint32_t *)p)[i];
    }
}

static void store_int(mp_dtype dt, void *p, size_t i, int64_t v)
{
    switch (dt) {
    case MP_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case MP_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case MP_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case MP_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MP_DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    default: ((uint32_t *)p)[i] = (uint32_t)v; break;
    }
}

/* The value of the stored bits of dt as the dtype reads them (two's complement). */
static int64_t wrap_int(mp_dtype dt, int64_t v)
{
    uint8_t b[8];
    store_int(dt, b, 0, v);
    return load_int(dt, b, 0);
}

static void test_bitwise_hand(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d = 5;
    const int8_t a8[5] = {-7, -128, 5, 127, -1}, s8[5] = {1, 100, -3, 6, 0};
    mp_tensor *out = run_binary(&c, MP_OP_RIGHT_SHIFT, MP_DT_INT8, 1, &d, a8, 1, &d, s8);
    /* -7 >> 1 = -4 (arithmetic); -128 >> 7 (100 clamped) = -1; a negative shift is 0 */
    assert_memory_equal(out->data, ((int8_t[]){-4, -1, 5, 1, -1}), 5);
    kh_free(&c);
    const uint8_t u8[5] = {200, 200, 255, 1, 128}, su[5] = {9, 7, 0, 1, 3};
    out = run_binary(&c, MP_OP_RIGHT_SHIFT, MP_DT_UINT8, 1, &d, u8, 1, &d, su);
    assert_memory_equal(out->data, ((uint8_t[]){1, 1, 255, 0, 16}), 5);
    kh_free(&c);
    const int32_t a32[2] = {INT32_MIN, INT32_MAX}, s32[2] = {40, 30};
    out = run_binary(&c, MP_OP_RIGHT_SHIFT, MP_DT_INT32, 1, (int32_t[]){2}, a32, 1,
                     (int32_t[]){2}, s32);
    assert_memory_equal(out->data, ((int32_t[]){-1, 1}), 8);
    kh_free(&c);
    const int16_t x16[3] = {0x0f0f, -1, 0x1234}, y16[1] = {0x00ff};
    out = run_binary(&c, MP_OP_BITWISE_XOR, MP_DT_INT16, 1, (int32_t[]){3}, x16, 1,
                     (int32_t[]){1}, y16);
    assert_memory_equal(out->data, ((int16_t[]){0x0ff0, -256, 0x12cb}), 6);
    kh_free(&c);
}

/* Every integer dtype, random shapes broadcasting: XOR of the bits; RIGHT_SHIFT as the floor
 * of x / 2^min(max(s, 0), bits - 1) (an arithmetic shift by definition). */
static void test_bitwise_random(void **state)
{
    (void)state;
    uint32_t seed = 11;
    for (int trial = 0; trial < 120; trial++) {
        const mp_dtype dt = k_int_dts[trial % 6];
        const bool shift = (trial / 6) & 1;
        const int bits = (int)mp_dtype_size(dt) * 8;
        int32_t rank = 1 + kh_irand(&seed, 4), da[4], db[4], rb = 1 + kh_irand(&seed, rank);
        for (int32_t i = 0; i < rank; i++)
            da[i] = 1 + kh_irand(&seed, 3);
        for (int32_t i = 0; i < rb; i++)
            db[i] = kh_irand(&seed, 3) == 0 ? 1 : da[rank - rb + i];
        size_t na = 1, nb = 1;
        for (int32_t i = 0; i < rank; i++)
            na *= (size_t)da[i];
        for (int32_t i = 0; i < rb; i++)
            nb *= (size_t)db[i];
        uint8_t a[81 * 4], b[81 * 4];
        for (size_t i = 0; i < na; i++)
            store_int(dt, a, i, ((int64_t)kh_irand(&seed, 65536) << 16) ^ kh_irand(&seed, 65536));
        for (size_t i = 0; i < nb; i++)
            store_int(dt, b, i, shift ? kh_irand(&seed, bits + 10) - 5
                                      : ((int64_t)kh_irand(&seed, 65536) << 16) ^
                                            kh_irand(&seed, 65536));
        kh_case c;
        mp_tensor *out = run_binary(&c, shift ? MP_OP_RIGHT_SHIFT : MP_OP_BITWISE_XOR, dt, rank,
                                    da, a, rb, db, b);
        assert_int_equal(mp_tensor_elements(out), na);
        for (size_t i = 0; i < na; i++) {
            int64_t x = load_int(dt, a, kh_bc_offset(c.in[0], rank, da, i));
            int64_t w = load_int(dt, b, kh_bc_offset(c.in[1], rank, da, i));
            int64_t want;
            if (shift) { /* the value over 2^s rounded down, the sign kept */
                int64_t s = w < 0 ? 0 : (w > bits - 1 ? bits - 1 : w);
                double q = floor((double)x / ldexp(1.0, (int)s));
                want = (int64_t)q;
            } else {
                want = wrap_int(dt, (int64_t)((uint64_t)x ^ (uint64_t)w));
            }
            if (load_int(dt, out->data, i) != want)
                fail_msg("trial %d %s element %zu: %lld op %lld gave %lld, want %lld", trial,
                         mp_dtype_name(dt), i, (long long)x, (long long)w,
                         (long long)load_int(dt, out->data, i), (long long)want);
        }
        kh_free(&c);
    }
}

static void test_binary_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_BITWISE_XOR, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: i8, i16, i32, u8, u16, u32");
    kh_free(&c);
    kh_init(&c, MP_OP_RIGHT_SHIFT, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "differ in dtype");
    kh_free(&c);
    kh_init(&c, MP_OP_ATAN2, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32");
    kh_free(&c);
    kh_init(&c, MP_OP_ATAN2, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, NULL);
    kh_free(&c);
}

/* ---- L2_POOL_2D ------------------------------------------------------------------------- */

/* sqrt(mean of squares) over the window's pixels inside the input, TensorFlow Lite's SAME
 * padding (total = max(0, (out - 1) * stride + filter - in), half before) or none. */
static void ref_l2pool(const int32_t d[4], const float *x, int32_t f_h, int32_t f_w, int32_t s_h,
                       int32_t s_w, bool same, int32_t act, const int32_t od[4], float *y)
{
    int32_t pt = 0, pl = 0;
    if (same) {
        int32_t th = (od[1] - 1) * s_h + f_h - d[1], tw = (od[2] - 1) * s_w + f_w - d[2];
        pt = th > 0 ? th / 2 : 0;
        pl = tw > 0 ? tw / 2 : 0;
    }
    for (int32_t b = 0; b < od[0]; b++)
        for (int32_t oy = 0; oy < od[1]; oy++)
            for (int32_t ox = 0; ox < od[2]; ox++)
                for (int32_t ch = 0; ch < od[3]; ch++) {
                    double sum = 0;
                    int count = 0;
                    for (int32_t ky = 0; ky < f_h; ky++)
                        for (int32_t kx = 0; kx < f_w; kx++) {
                            int32_t iy = oy * s_h - pt + ky, ix = ox * s_w - pl + kx;
                            if (iy < 0 || iy >= d[1] || ix < 0 || ix >= d[2])
                                continue;
                            double v = x[((b * d[1] + iy) * d[2] + ix) * d[3] + ch];
                            sum += v * v;
                            count++;
                        }
                    y[((b * od[1] + oy) * od[2] + ox) * od[3] + ch] =
                        (float)kh_ref_act(sqrt(sum / count), act);
                }
}

static void test_l2pool(void **state)
{
    (void)state;
    /* 1x2x2x1 {1,2,3,4}, one 2x2 window: sqrt(30 / 4) */
    kh_case c;
    kh_init(&c, MP_OP_L2_POOL_2D, NULL);
    c.opt.padding = MP_PAD_VALID;
    c.opt.filter_h = c.opt.filter_w = 2;
    c.opt.stride_h = c.opt.stride_w = 2;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, (float[]){1, 2, 3, 4});
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(mp_tensor_elements(out) == 1);
    assert_true(fabsf(((float *)out->data)[0] - sqrtf(7.5f)) < 1e-6f);
    kh_free(&c);
    uint32_t seed = 17;
    for (int trial = 0; trial < 60; trial++) {
        int32_t d[4] = {1 + kh_irand(&seed, 2), 1 + kh_irand(&seed, 7), 1 + kh_irand(&seed, 7),
                        1 + kh_irand(&seed, 3)};
        int32_t fh = 1 + kh_irand(&seed, 3), fw = 1 + kh_irand(&seed, 3);
        int32_t sh = 1 + kh_irand(&seed, 3), sw = 1 + kh_irand(&seed, 3);
        bool same = trial % 2 == 0 || d[1] < fh || d[2] < fw;
        int32_t act = trial % 4 == 1 ? MP_ACT_RELU6 : trial % 4 == 3 ? MP_ACT_RELU_N1_TO_1
                                                                     : MP_ACT_NONE;
        int32_t od[4] = {d[0], same ? (d[1] + sh - 1) / sh : (d[1] - fh) / sh + 1,
                         same ? (d[2] + sw - 1) / sw : (d[2] - fw) / sw + 1, d[3]};
        size_t n = (size_t)d[0] * d[1] * d[2] * d[3], on = (size_t)od[0] * od[1] * od[2] * od[3];
        float x[2 * 7 * 7 * 3], want[2 * 7 * 7 * 3];
        kh_fill(x, n, seed, 5.0f);
        ref_l2pool(d, x, fh, fw, sh, sw, same, act, od, want);
        kh_init(&c, MP_OP_L2_POOL_2D, NULL);
        c.opt.padding = same ? MP_PAD_SAME : MP_PAD_VALID;
        c.opt.filter_h = fh;
        c.opt.filter_w = fw;
        c.opt.stride_h = sh;
        c.opt.stride_w = sw;
        c.opt.activation = act;
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 4, d, NULL);
        memcpy(in->data, x, n * 4);
        out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->dims, od, sizeof od);
        kh_expect_close(out->data, want, on, 1.0);
        kh_free(&c);
    }
    /* an empty input of huge batch and height (a fuzzed model's [50462720, 65536, 0, 1]):
     * nothing to pool, returned at once instead of walking 50462720 x 32768 empty rows */
    kh_init(&c, MP_OP_L2_POOL_2D, NULL);
    c.opt.padding = MP_PAD_SAME;
    c.opt.filter_h = c.opt.filter_w = 2;
    c.opt.stride_h = c.opt.stride_w = 2;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){50462720, 65536, 0, 1}, NULL);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->dims, ((int32_t[]){50462720, 32768, 0, 1}), 16);
    kh_free(&c);
}

static void test_l2pool_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_L2_POOL_2D, NULL);
    c.opt.filter_h = c.opt.filter_w = 2;
    kh_input(&c, MP_DT_INT8, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "only float32");
    kh_free(&c);
    kh_init(&c, MP_OP_L2_POOL_2D, NULL);
    c.opt.filter_h = c.opt.filter_w = 2;
    c.opt.activation = MP_ACT_TANH;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "fused activation 4");
    kh_free(&c);
    kh_init(&c, MP_OP_L2_POOL_2D, NULL);
    c.opt.padding = MP_PAD_VALID;
    c.opt.filter_h = c.opt.filter_w = 3;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "smaller than the 3x3 window");
    kh_free(&c);
    kh_init(&c, MP_OP_L2_POOL_2D, NULL);
    c.opt.filter_h = 0;
    c.opt.filter_w = 2;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "invalid filter");
    kh_free(&c);
}

/* ---- LOCAL_RESPONSE_NORMALIZATION ------------------------------------------------------- */

static mp_tensor *run_lrn(kh_case *c, const int32_t d[4], const float *x, int32_t radius,
                          float bias, float alpha, float beta)
{
    kh_init(c, MP_OP_LOCAL_RESPONSE_NORMALIZATION, NULL);
    c->opt.lrn_radius = radius;
    c->opt.lrn_bias = bias;
    c->opt.lrn_alpha = alpha;
    c->opt.lrn_beta = beta;
    mp_tensor *in = kh_input(c, MP_DT_FLOAT32, 4, d, NULL);
    memcpy(in->data, x, in->bytes);
    mp_tensor *out = kh_output(c, MP_DT_FLOAT32);
    kh_expect_ok(c, kh_run(c));
    return out;
}

static void test_lrn(void **state)
{
    (void)state;
    /* a window wider than the row, bias 0, alpha 1, beta 0.5: x / |x|; the squares sum to 4 */
    const int32_t d6[4] = {1, 1, 1, 6};
    const float x[6] = {-1.1f, 0.6f, 0.7f, 1.2f, -0.7f, 0.1f};
    kh_case c;
    mp_tensor *out = run_lrn(&c, d6, x, 20, 0.0f, 1.0f, 0.5f);
    const float want[6] = {-0.55f, 0.3f, 0.35f, 0.6f, -0.35f, 0.05f};
    kh_expect_close(out->data, want, 6, 1.0);
    kh_free(&c);
    /* radius 2, bias 9, alpha 4, beta 0.5 over the same row: the windows' sums of squares are
     * 2.06, 3.5, 3.99, 2.79, 2.43, 1.94 (c - 2 to c + 2, both ends included), so
     * y = x / sqrt(9 + 4 sum) */
    out = run_lrn(&c, d6, x, 2, 9.0f, 4.0f, 0.5f);
    const float want2[6] = {-0.264926f, 0.125109f, 0.140112f, 0.267261f, -0.161788f, 0.024427f};
    for (int i = 0; i < 6; i++)
        assert_true(fabsf(((float *)out->data)[i] - want2[i]) < 2e-6f);
    kh_free(&c);
    /* radius 1, bias 1, alpha 2, beta 1, channel 0 of {1, 2, 3}: window {1, 2} -> 1 / 11;
     * channel 1: {1, 2, 3} -> 2 / 29; channel 2: {2, 3} -> 3 / 27 */
    out = run_lrn(&c, (const int32_t[]){1, 1, 1, 3}, (const float[]){1, 2, 3}, 1, 1.0f, 2.0f,
                  1.0f);
    kh_expect_close(out->data, ((const float[]){1.0f / 11, 2.0f / 29, 3.0f / 27}), 3, 1.0);
    kh_free(&c);
    uint32_t seed = 29;
    for (int trial = 0; trial < 40; trial++) {
        int32_t d[4] = {1 + kh_irand(&seed, 2), 1 + kh_irand(&seed, 3), 1 + kh_irand(&seed, 3),
                        1 + kh_irand(&seed, 9)};
        int32_t radius = kh_irand(&seed, 5);
        float bias = 0.5f + (float)kh_irand(&seed, 4), alpha = 0.25f * (1 + kh_irand(&seed, 4));
        float beta = 0.25f * (1 + kh_irand(&seed, 4));
        size_t n = (size_t)d[0] * d[1] * d[2] * d[3];
        float xs[2 * 3 * 3 * 9], ws[2 * 3 * 3 * 9];
        kh_fill(xs, n, seed, 2.0f);
        for (size_t r = 0; r < n / (size_t)d[3]; r++)
            for (int32_t ch = 0; ch < d[3]; ch++) {
                double sq = 0;
                for (int32_t k = ch - radius; k <= ch + radius; k++)
                    if (k >= 0 && k < d[3])
                        sq += (double)xs[r * d[3] + k] * xs[r * d[3] + k];
                ws[r * d[3] + ch] = (float)(xs[r * d[3] + ch] * pow(bias + alpha * sq, -beta));
            }
        out = run_lrn(&c, d, xs, radius, bias, alpha, beta);
        kh_expect_close(out->data, ws, n, 1.0);
        kh_free(&c);
    }
}

static void test_lrn_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_LOCAL_RESPONSE_NORMALIZATION, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){1, 2, 3}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "must have rank 4");
    kh_free(&c);
    kh_init(&c, MP_OP_LOCAL_RESPONSE_NORMALIZATION, NULL);
    kh_input(&c, MP_DT_INT8, 4, (int32_t[]){1, 1, 2, 3}, NULL);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32");
    kh_free(&c);
    kh_init(&c, MP_OP_LOCAL_RESPONSE_NORMALIZATION, NULL);
    c.opt.lrn_radius = -1;
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 1, 2, 3}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "radius -1 is negative");
    kh_free(&c);
}

/* ---- a model of several of them --------------------------------------------------------- */

#define XR 2
#define XC 3

/* x [2,3] f32, i [2,3] i32, v [1,3,3,2] f32 in. ADD_N(x, x, c) -> s; SIGN(s) -> sg;
 * ATAN2(x, c) -> at; RELU_0_TO_1(x) -> r1; GREATER(x, zero) -> g; REDUCE_ANY(g, axis 1) -> an;
 * REDUCE_ALL(g, axis 0, keep_dims) -> al; BITWISE_XOR(i, m) -> xr; RIGHT_SHIFT(xr, sh) -> rs;
 * L2_POOL_2D(v, SAME 2x2 stride 2, RELU6) -> lp; LOCAL_RESPONSE_NORMALIZATION(v, radius 1,
 * bias 1, alpha 0.5, beta 0.75) -> ln; CONV_3D(u [1,2,2,2,2], filter [2,2,2,2,3], bias, SAME)
 * -> c3; CONV_3D_TRANSPOSE([1,4,4,4,2], filter [2,2,2,2,3], c3, SAME, stride 2, RELU) -> ct.
 * Outputs sg, at, r1, an, al, rs, lp, ln, c3, ct. */
static void *extra_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    const int32_t dx[2] = {XR, XC}, d1 = XC, ax1 = 1, ax0 = 0, one = 1;
    const float cst[XC] = {0.5f, -1.0f, 2.0f}, zero = 0.0f;
    const int32_t mask[XC] = {0xff, -1, 5}, sh = 2;
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int i = mp_tfw_tensor(w, "i", MP_DT_INT32, 2, dx, 0, NULL);
    int c = mp_tfw_tensor(w, "c", MP_DT_FLOAT32, 1, &d1, mp_tfw_buffer(w, cst, sizeof cst), NULL);
    int cc = mp_tfw_tensor(w, "cc", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int z = mp_tfw_tensor(w, "zero", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(w, &zero, 4), NULL);
    int a1 = mp_tfw_tensor(w, "ax1", MP_DT_INT32, 1, &one, mp_tfw_buffer(w, &ax1, 4), NULL);
    int a0 = mp_tfw_tensor(w, "ax0", MP_DT_INT32, 1, &one, mp_tfw_buffer(w, &ax0, 4), NULL);
    int m = mp_tfw_tensor(w, "mask", MP_DT_INT32, 1, &d1, mp_tfw_buffer(w, mask, sizeof mask),
                          NULL);
    int shv = mp_tfw_tensor(w, "sh", MP_DT_INT32, 0, NULL, mp_tfw_buffer(w, &sh, 4), NULL);
    int v = mp_tfw_tensor(w, "v", MP_DT_FLOAT32, 4, (const int32_t[]){1, 3, 3, 2}, 0, NULL);
    int lp = mp_tfw_tensor(w, "lp", MP_DT_FLOAT32, 4, (const int32_t[]){1, 2, 2, 2}, 0, NULL);
    int ln = mp_tfw_tensor(w, "ln", MP_DT_FLOAT32, 4, (const int32_t[]){1, 3, 3, 2}, 0, NULL);
    float f3[48], b3[3] = {0.5f, -0.25f, 1.0f};
    kh_fill(f3, 48, 77, 1.0f);
    const int32_t du[5] = {1, 2, 2, 2, 2}, df[5] = {2, 2, 2, 2, 3}, dc[5] = {1, 2, 2, 2, 3};
    const int32_t dt[5] = {1, 4, 4, 4, 2}, n3 = 3, n5 = 5;
    int u = mp_tfw_tensor(w, "u", MP_DT_FLOAT32, 5, du, 0, NULL);
    int f3t = mp_tfw_tensor(w, "f3", MP_DT_FLOAT32, 5, df, mp_tfw_buffer(w, f3, sizeof f3), NULL);
    int b3t = mp_tfw_tensor(w, "b3", MP_DT_FLOAT32, 1, &n3, mp_tfw_buffer(w, b3, sizeof b3), NULL);
    int ost = mp_tfw_tensor(w, "os", MP_DT_INT32, 1, &n5, mp_tfw_buffer(w, dt, sizeof dt), NULL);
    int c3 = mp_tfw_tensor(w, "c3", MP_DT_FLOAT32, 5, dc, 0, NULL);
    int ct = mp_tfw_tensor(w, "ct", MP_DT_FLOAT32, 5, dt, 0, NULL);
    int s = mp_tfw_tensor(w, "s", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int sg = mp_tfw_tensor(w, "sg", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int at = mp_tfw_tensor(w, "at", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int r1 = mp_tfw_tensor(w, "r1", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int g = mp_tfw_tensor(w, "g", MP_DT_BOOL, 2, dx, 0, NULL);
    int an = mp_tfw_tensor(w, "an", MP_DT_BOOL, 1, (const int32_t[]){XR}, 0, NULL);
    int al = mp_tfw_tensor(w, "al", MP_DT_BOOL, 2, (const int32_t[]){1, XC}, 0, NULL);
    int xr = mp_tfw_tensor(w, "xr", MP_DT_INT32, 2, dx, 0, NULL);
    int rs = mp_tfw_tensor(w, "rs", MP_DT_INT32, 2, dx, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){x, c}, 1, &cc, &o); /* c broadcast to x's shape */
    mp_tfw_op(w, MP_OP_ADD_N, 3, (int32_t[]){x, x, cc}, 1, &s, &o);
    mp_tfw_op(w, MP_OP_SIGN, 1, &s, 1, &sg, &o);
    mp_tfw_op(w, MP_OP_ATAN2, 2, (int32_t[]){x, c}, 1, &at, &o);
    mp_tfw_op(w, MP_OP_RELU_0_TO_1, 1, &x, 1, &r1, &o);
    mp_tfw_op(w, MP_OP_GREATER, 2, (int32_t[]){x, z}, 1, &g, &o);
    mp_tfw_op(w, MP_OP_REDUCE_ANY, 2, (int32_t[]){g, a1}, 1, &an, &o);
    o.keep_dims = true;
    mp_tfw_op(w, MP_OP_REDUCE_ALL, 2, (int32_t[]){g, a0}, 1, &al, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_BITWISE_XOR, 2, (int32_t[]){i, m}, 1, &xr, &o);
    mp_tfw_op(w, MP_OP_RIGHT_SHIFT, 2, (int32_t[]){xr, shv}, 1, &rs, &o);
    o.padding = MP_PAD_SAME;
    o.filter_h = o.filter_w = 2;
    o.stride_h = o.stride_w = 2;
    o.activation = MP_ACT_RELU6;
    mp_tfw_op(w, MP_OP_L2_POOL_2D, 1, &v, 1, &lp, &o);
    o = mp_tfw_options_default();
    o.lrn_radius = 1;
    o.lrn_bias = 1.0f;
    o.lrn_alpha = 0.5f;
    o.lrn_beta = 0.75f;
    mp_tfw_op(w, MP_OP_LOCAL_RESPONSE_NORMALIZATION, 1, &v, 1, &ln, &o);
    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_d = o.stride_h = o.stride_w = 1;
    o.dilation_d = 1;
    mp_tfw_op(w, MP_OP_CONV_3D, 3, (int32_t[]){u, f3t, b3t}, 1, &c3, &o);
    o.stride_d = o.stride_h = o.stride_w = 2;
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_CONV_3D_TRANSPOSE, 3, (int32_t[]){ost, f3t, c3}, 1, &ct, &o);
    mp_tfw_io(w, 4, (int32_t[]){x, i, v, u}, 10,
              (int32_t[]){sg, at, r1, an, al, rs, lp, ln, c3, ct});
    const mp_test_model model = mp_test_tfw_finish(w);
    *size = model.size;
    return model.bytes;
}

static void run_extra_model(mp_memory_mode mode, void *out[10], size_t sizes[10])
{
    size_t size;
    void *bytes = extra_model(&size);
    mp_session *s = kh_session(mode, bytes, size, "extra");
    const float x[XR * XC] = {0.25f, 2.0f, -3.0f, -0.5f, 0.75f, 1.5f};
    const int32_t iv[XR * XC] = {0x1234, -8, 3, -1, 1024, 7};
    float vv[18];
    for (int k = 0; k < 18; k++)
        vv[k] = (float)(k % 5) - 1.5f; /* {-1.5, -0.5, 0.5, 1.5, 2.5, -1.5, ...} */
    for (int r = 0; r < 2; r++) {
        mp_test_set_input(s, 0, x, sizeof x);
        mp_test_set_input(s, 1, iv, sizeof iv);
        mp_test_set_input(s, 2, vv, sizeof vv);
        mp_test_set_input(s, 3, vv, 16 * sizeof(float));
        mp_test_run(s);
    }
    assert_int_equal(mp_session_output_count(s), 10);
    for (int i = 0; i < 10; i++) {
        const mp_tensor *t = mp_session_output(s, i);
        sizes[i] = t->bytes;
        out[i] = malloc(t->bytes + 1);
        memcpy(out[i], t->data, t->bytes);
    }
    /* by hand: s = 3x + c = {1.25, 5, -7, -1, 1.25, 6.5}; x > 0 = {1,1,0,0,1,1}:
     * any per row {1,1}, all per column {0,1,0}; i ^ mask >> 2 */
    assert_memory_equal(out[0], ((float[]){1, 1, -1, -1, 1, 1}), 24);
    assert_memory_equal(out[2], ((float[]){0.25f, 1, 0, 0, 0.75f, 1}), 24);
    assert_memory_equal(out[3], ((uint8_t[]){1, 1}), 2);
    assert_memory_equal(out[4], ((uint8_t[]){0, 1, 0}), 3);
    /* 0x12cb >> 2, 7 >> 2, 6 >> 2, -256 >> 2, -1025 >> 2 (floor: -257), 2 >> 2 */
    assert_memory_equal(out[5], ((int32_t[]){1202, 1, 1, -64, -257, 0}), 24);
    /* lp [0,1,1,0]: the bottom-right pixel alone (SAME pads 1 after): |v[16]| = 0.5;
     * [0,0,0,1]: pixels (0,0),(0,1),(1,0),(1,1) channel 1 = v[1], v[3], v[7], v[9] =
     * {-0.5, 1.5, 0.5, 2.5}: sqrt((0.25 + 2.25 + 0.25 + 6.25) / 4) = 1.5 */
    const float *lpv = out[6];
    assert_true(fabsf(lpv[6] - 0.5f) < 1e-6f && fabsf(lpv[1] - 1.5f) < 1e-6f);
    /* ln pixel 0: v = {-1.5, -0.5}: both see the whole pair: 2.5 -> (1 + 1.25)^-0.75 */
    const float *lnv = out[7];
    assert_true(fabsf(lnv[0] - (float)(-1.5 * pow(2.25, -0.75))) < 1e-6f);
    /* ct: [1,4,4,4,2] after RELU */
    assert_int_equal(sizes[9], 4 * 4 * 4 * 2 * sizeof(float));
    for (int k = 0; k < 128; k++)
        assert_true(((const float *)out[9])[k] >= 0.0f);
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_extra_model, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_any_all_hand),    cmocka_unit_test(test_any_all_random),
        cmocka_unit_test(test_any_all_errors),  cmocka_unit_test(test_add_n),
        cmocka_unit_test(test_add_n_errors),    cmocka_unit_test(test_sign_relu01),
        cmocka_unit_test(test_relu01_q8),       cmocka_unit_test(test_unary_errors),
        cmocka_unit_test(test_atan2),           cmocka_unit_test(test_bitwise_hand),
        cmocka_unit_test(test_bitwise_random),  cmocka_unit_test(test_binary_errors),
        cmocka_unit_test(test_l2pool),          cmocka_unit_test(test_l2pool_errors),
        cmocka_unit_test(test_lrn),             cmocka_unit_test(test_lrn_errors),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
