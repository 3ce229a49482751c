/* Tests of the layout kernels (RESHAPE, SQUEEZE, EXPAND_DIMS, CONCATENATION, PAD, PADV2,
 * SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND) against plain references written from the TensorFlow
 * op definitions, plus hand-computed cases, several dtypes, deferred shapes and errors. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static void fill_f32(mp_tensor *t, float base)
{
    float *x = t->data;
    size_t n = mp_tensor_elements(t);
    for (size_t i = 0; i < n; i++)
        x[i] = base + (float)((i * 7919) % 97) * 0.25f - 12.0f;
}

static void expect_shape(const mp_tensor *t, int32_t rank, const int32_t *dims)
{
    char a[96], b[96];
    mp_shape_str(t->rank, t->dims, a, sizeof a);
    mp_shape_str(rank, dims, b, sizeof b);
    if (strcmp(a, b) != 0)
        fail_msg("shape %s, expected %s", a, b);
}

static void expect_f32(const float *got, const float *want, size_t n)
{
    size_t at = 0;
    double e = mp_test_max_rel_err(got, want, n, 1.0, &at);
    if (e > 1e-5)
        fail_msg("element %zu: got %g want %g (rel err %g)", at, (double)got[at], (double)want[at],
                 e);
}

/* ---- RESHAPE ---------------------------------------------------------------------------- */

static void test_reshape_from_tensor(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_RESHAPE, NULL);
    int32_t d[] = {2, 3, 4}, sd[] = {2}, shape[] = {-1, 4 * 3};
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 3, d, NULL);
    kh_input(&c, MP_DT_INT32, 1, sd, shape);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    fill_f32(in, 1.0f);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, (int32_t[]){2, 12});
    assert_memory_equal(out->data, in->data, in->bytes);
    /* second run with new data */
    fill_f32(in, 5.0f);
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    assert_memory_equal(out->data, in->data, in->bytes);
    /* a memory planner may make output and input share storage: no copy, no fault */
    void *saved = out->data;
    out->data = in->data;
    assert_int_equal(kh_rerun(&c, true), MP_OK);
    out->data = saved;
    kh_free(&c);
}

static void test_reshape_options_and_legacy(void **state)
{
    (void)state;
    /* shape from options, shape input omitted (-1) */
    kh_case c;
    kh_init(&c, MP_OP_RESHAPE, NULL);
    int32_t d[] = {6, 2};
    mp_tensor *in = kh_input(&c, MP_DT_INT32, 2, d, NULL);
    kh_omit_input(&c);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    c.opt.has_new_shape = true;
    c.opt.n_new_shape = 3;
    c.opt.new_shape[0] = 3;
    c.opt.new_shape[1] = -1;
    c.opt.new_shape[2] = 2;
    for (int i = 0; i < 12; i++)
        ((int32_t *)in->data)[i] = i * 3 - 7;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 3, (int32_t[]){3, 2, 2});
    assert_memory_equal(out->data, in->data, in->bytes);
    kh_free(&c);

    /* one input only, options */
    kh_init(&c, MP_OP_RESHAPE, NULL);
    in = kh_input(&c, MP_DT_UINT8, 2, d, NULL);
    out = kh_output(&c, MP_DT_UINT8);
    c.opt.has_new_shape = true;
    c.opt.n_new_shape = 1;
    c.opt.new_shape[0] = -1;
    kh_fill_bytes(in, 3);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 1, (int32_t[]){12});
    assert_memory_equal(out->data, in->data, in->bytes);
    kh_free(&c);

    /* old converters: empty shape vector [0] next to the new_shape option */
    kh_init(&c, MP_OP_RESHAPE, NULL);
    int32_t empty_dims[] = {0};
    static const int32_t no_values[1] = {0};
    in = kh_input(&c, MP_DT_FLOAT32, 2, d, NULL);
    kh_input(&c, MP_DT_INT32, 1, empty_dims, no_values);
    out = kh_output(&c, MP_DT_FLOAT32);
    c.opt.has_new_shape = true;
    c.opt.n_new_shape = 2;
    c.opt.new_shape[0] = 4;
    c.opt.new_shape[1] = 3;
    fill_f32(in, 0.5f);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, (int32_t[]){4, 3});
    assert_memory_equal(out->data, in->data, in->bytes);
    kh_free(&c);

    /* legacy new_shape [0] means a scalar */
    kh_init(&c, MP_OP_RESHAPE, NULL);
    int32_t one[] = {1, 1};
    in = kh_input(&c, MP_DT_INT64, 2, one, NULL);
    out = kh_output(&c, MP_DT_INT64);
    c.opt.has_new_shape = true;
    c.opt.n_new_shape = 1;
    c.opt.new_shape[0] = 0;
    ((int64_t *)in->data)[0] = -1234567890123LL;
    assert_int_equal(kh_run(&c), MP_OK);
    assert_int_equal(out->rank, 0);
    assert_true(((int64_t *)out->data)[0] == -1234567890123LL);
    kh_free(&c);

    /* int64 shape tensor and a zero-sized input: [0,3] -> [-1,3] = [0,3] */
    kh_init(&c, MP_OP_RESHAPE, NULL);
    int32_t zd[] = {3, 0}, sd[] = {2};
    static const int64_t shp64[] = {-1, 3};
    kh_input(&c, MP_DT_FLOAT32, 2, zd, NULL);
    kh_input(&c, MP_DT_INT64, 1, sd, shp64);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, (int32_t[]){0, 3});
    kh_free(&c);
}

static void test_reshape_deferred_and_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_RESHAPE, NULL);
    int32_t d[] = {4, 5}, sd[] = {3};
    mp_tensor *in = kh_input(&c, MP_DT_BOOL, 2, d, NULL);
    mp_tensor *shp = kh_input(&c, MP_DT_INT32, 1, sd, NULL); /* computed while running */
    mp_tensor *out = kh_output(&c, MP_DT_BOOL);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    int32_t *sv = shp->data;
    sv[0] = 2;
    sv[1] = 5;
    sv[2] = -1;
    shp->value_known = true;
    for (int i = 0; i < 20; i++)
        ((uint8_t *)in->data)[i] = (uint8_t)(i % 3 == 0);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 3, (int32_t[]){2, 5, 2});
    assert_memory_equal(out->data, in->data, 20);
    /* element count mismatch names the tensors and shapes */
    sv[2] = 3;
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0' [4,5]");
    assert_non_null(strstr(c.err.msg, "[2,5,3]"));
    assert_non_null(strstr(c.err.msg, "RESHAPE"));
    /* two -1 */
    sv[0] = -1;
    sv[2] = -1;
    kh_expect_error(&c, MP_ERR_SHAPE, "-1");
    /* negative dimension */
    sv[0] = -2;
    sv[2] = 2;
    kh_expect_error(&c, MP_ERR_SHAPE, NULL);
    kh_free(&c);

    /* output dtype differs */
    kh_init(&c, MP_OP_RESHAPE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, d, NULL);
    kh_output(&c, MP_DT_INT32);
    c.opt.has_new_shape = true;
    c.opt.n_new_shape = 1;
    c.opt.new_shape[0] = 20;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "t0");
    kh_free(&c);
}

/* ---- SQUEEZE / EXPAND_DIMS ------------------------------------------------------------ */

static void test_squeeze(void **state)
{
    (void)state;
    kh_case c;
    int32_t d[] = {1, 3, 1, 2};
    kh_init(&c, MP_OP_SQUEEZE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 4, d, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    fill_f32(in, 2.0f);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, (int32_t[]){3, 2});
    assert_memory_equal(out->data, in->data, in->bytes);
    kh_free(&c);

    kh_init(&c, MP_OP_SQUEEZE, NULL);
    in = kh_input(&c, MP_DT_INT16, 4, d, NULL);
    out = kh_output(&c, MP_DT_INT16);
    c.opt.n_squeeze_dims = 1;
    c.opt.squeeze_dims[0] = -2;
    kh_fill_bytes(in, 9);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 3, (int32_t[]){1, 3, 2});
    assert_memory_equal(out->data, in->data, in->bytes);
    /* a dimension that is not 1 */
    c.opt.squeeze_dims[0] = 1;
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0' [1,3,1,2]");
    c.opt.squeeze_dims[0] = 4;
    kh_expect_error(&c, MP_ERR_SHAPE, "out of range");
    kh_free(&c);
}

static void test_expand_dims(void **state)
{
    (void)state;
    int32_t d[] = {2, 3}, one[] = {1};
    struct {
        int64_t axis;
        int32_t dims[3];
    } cases[] = {{0, {1, 2, 3}}, {1, {2, 1, 3}}, {2, {2, 3, 1}}, {-1, {2, 3, 1}}, {-3, {1, 2, 3}}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int wide = 0; wide < 2; wide++) {
            kh_case c;
            kh_init(&c, MP_OP_EXPAND_DIMS, NULL);
            mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, d, NULL);
            int32_t a32 = (int32_t)cases[k].axis;
            if (wide)
                kh_input(&c, MP_DT_INT64, 0, NULL, &cases[k].axis);
            else
                kh_input(&c, MP_DT_INT32, 1, one, &a32);
            mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
            fill_f32(in, (float)k);
            assert_int_equal(kh_run(&c), MP_OK);
            expect_shape(out, 3, cases[k].dims);
            assert_memory_equal(out->data, in->data, in->bytes);
            kh_free(&c);
        }
    }
    /* axis computed while running; then out of range */
    kh_case c;
    kh_init(&c, MP_OP_EXPAND_DIMS, NULL);
    kh_input(&c, MP_DT_INT32, 2, d, NULL);
    mp_tensor *ax = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    ax->value_known = true;
    *(int32_t *)ax->data = 1;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 3, (int32_t[]){2, 1, 3});
    *(int32_t *)ax->data = 3;
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0' [2,3]");
    *(int32_t *)ax->data = -4;
    kh_expect_error(&c, MP_ERR_SHAPE, "axis -4");
    kh_free(&c);
}

/* ---- CONCATENATION ---------------------------------------------------------------------- */

/* Reference: output index -> (input, index in it) by walking the axis. */
static void ref_concat(int n, mp_tensor *const *ins, int32_t axis, const mp_tensor *out,
                       uint8_t *want)
{
    size_t es = mp_dtype_size(out->dtype), total = mp_tensor_elements(out);
    for (size_t f = 0; f < total; f++) {
        int64_t idx[MP_MAX_RANK];
        size_t r = f;
        for (int32_t d = out->rank - 1; d >= 0; d--) {
            idx[d] = (int64_t)(r % (size_t)out->dims[d]);
            r /= (size_t)out->dims[d];
        }
        int k = 0;
        int64_t a = idx[axis];
        while (a >= ins[k]->dims[axis])
            a -= ins[k++]->dims[axis];
        idx[axis] = a;
        size_t src = 0;
        for (int32_t d = 0; d < out->rank; d++)
            src = src * (size_t)ins[k]->dims[d] + (size_t)idx[d];
        memcpy(want + f * es, (const uint8_t *)ins[k]->data + src * es, es);
    }
    (void)n;
}

static void test_concat_shapes_and_dtypes(void **state)
{
    (void)state;
    struct {
        int32_t rank, axis, n;
        int32_t dims[4][4];
        mp_dtype dt;
    } cases[] = {
        {2, 1, 3, {{2, 3}, {2, 1}, {2, 2}}, MP_DT_FLOAT32},
        {2, -1, 2, {{2, 3}, {2, 4}}, MP_DT_INT32},
        {2, 0, 2, {{1, 3}, {3, 3}}, MP_DT_UINT8},
        {4, 3, 3, {{1, 4, 5, 8}, {1, 4, 5, 3}, {1, 4, 5, 16}}, MP_DT_FLOAT32},
        {4, 1, 4, {{2, 1, 3, 2}, {2, 2, 3, 2}, {2, 0, 3, 2}, {2, 3, 3, 2}}, MP_DT_INT64},
        {3, -2, 2, {{2, 2, 3}, {2, 5, 3}}, MP_DT_BOOL},
        {1, 0, 1, {{7}}, MP_DT_INT16},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_CONCATENATION, NULL);
        mp_tensor *ins[4];
        for (int i = 0; i < cases[k].n; i++) {
            ins[i] = kh_input(&c, cases[k].dt, cases[k].rank, cases[k].dims[i], NULL);
            kh_fill_bytes(ins[i], (unsigned)(k * 10 + (size_t)i));
            if (cases[k].dt == MP_DT_FLOAT32)
                fill_f32(ins[i], (float)i);
        }
        mp_tensor *out = kh_output(&c, cases[k].dt);
        c.opt.axis = cases[k].axis;
        assert_int_equal(kh_run(&c), MP_OK);
        int32_t axis = cases[k].axis < 0 ? cases[k].axis + cases[k].rank : cases[k].axis;
        int32_t want_dims[4];
        memcpy(want_dims, cases[k].dims[0], sizeof want_dims);
        want_dims[axis] = 0;
        for (int i = 0; i < cases[k].n; i++)
            want_dims[axis] += cases[k].dims[i][axis];
        expect_shape(out, cases[k].rank, want_dims);
        uint8_t *want = calloc(1, out->bytes + 1);
        ref_concat(cases[k].n, ins, axis, out, want);
        assert_memory_equal(out->data, want, out->bytes);
        /* second run with other data */
        for (int i = 0; i < cases[k].n; i++)
            kh_fill_bytes(ins[i], (unsigned)(k * 10 + (size_t)i + 77));
        assert_int_equal(kh_rerun(&c, false), MP_OK);
        ref_concat(cases[k].n, ins, axis, out, want);
        assert_memory_equal(out->data, want, out->bytes);
        free(want);
        kh_free(&c);
    }
}

static void test_concat_hand_and_activations(void **state)
{
    (void)state;
    /* [[1,2],[3,4]] ++ [[5],[6]] along axis 1 = [[1,2,5],[3,4,6]] */
    static const float a[] = {1, 2, 3, 4}, b[] = {5, 6};
    kh_case c;
    kh_init(&c, MP_OP_CONCATENATION, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, a);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 1}, b);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    c.opt.axis = 1;
    assert_int_equal(kh_run(&c), MP_OK);
    static const float want[] = {1, 2, 5, 3, 4, 6};
    expect_f32(out->data, want, 6);
    kh_free(&c);

    static const float x[] = {-3.0f, -0.75f, 0.0f, 0.5f, 2.0f, 7.5f};
    static const float y[] = {-0.0f, 1.25f, -9.0f, 6.5f};
    const int32_t acts[] = {MP_ACT_NONE, MP_ACT_RELU, MP_ACT_RELU_N1_TO_1, MP_ACT_RELU6,
                            MP_ACT_TANH, MP_ACT_SIGN_BIT};
    for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++) {
        kh_init(&c, MP_OP_CONCATENATION, NULL);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, x);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, y);
        out = kh_output(&c, MP_DT_FLOAT32);
        c.opt.axis = 1;
        c.opt.activation = acts[k];
        assert_int_equal(kh_run(&c), MP_OK);
        float w[10];
        const float raw[10] = {-3.0f, -0.75f, 0.0f, -0.0f, 1.25f, 0.5f, 2.0f, 7.5f, -9.0f, 6.5f};
        for (int i = 0; i < 10; i++) {
            float v = raw[i];
            switch (acts[k]) {
            case MP_ACT_RELU: v = v < 0 ? 0 : v; break;
            case MP_ACT_RELU_N1_TO_1: v = v < -1 ? -1 : (v > 1 ? 1 : v); break;
            case MP_ACT_RELU6: v = v < 0 ? 0 : (v > 6 ? 6 : v); break;
            case MP_ACT_TANH: v = tanhf(v); break;
            case MP_ACT_SIGN_BIT: v = signbit(v) ? 1.0f : 0.0f; break;
            default: break;
            }
            w[i] = v;
        }
        expect_f32(out->data, w, 10);
        kh_free(&c);
    }
}

static void test_concat_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_CONCATENATION, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 3, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 5, 4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    c.opt.axis = 2;
    kh_expect_error(&c, MP_ERR_SHAPE, "'t1' [2,5,4]");
    c.opt.axis = 3;
    kh_expect_error(&c, MP_ERR_SHAPE, "axis 3");
    kh_free(&c);

    kh_init(&c, MP_OP_CONCATENATION, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_INT32);
    c.opt.activation = MP_ACT_RELU;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "activation");
    kh_free(&c);

    kh_init(&c, MP_OP_CONCATENATION, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "'t1' is f32");
    kh_free(&c);

    kh_init(&c, MP_OP_CONCATENATION, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, NULL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "'t1' [1,2]");
    kh_free(&c);
}

/* ---- PAD / PADV2 ------------------------------------------------------------------------ */

/* Reference: every output element is the input element at (index - before) when that lies
 * inside the input, else the padding value. */
static void ref_pad(const mp_tensor *in, const int64_t *pre, const mp_tensor *out,
                    const void *value, uint8_t *want)
{
    size_t es = mp_dtype_size(in->dtype), total = mp_tensor_elements(out);
    for (size_t f = 0; f < total; f++) {
        size_t r = f, src = 0, mul = 1;
        bool inside = true;
        for (int32_t d = out->rank - 1; d >= 0; d--) {
            int64_t i = (int64_t)(r % (size_t)out->dims[d]) - pre[d];
            r /= (size_t)out->dims[d];
            inside = inside && i >= 0 && i < in->dims[d];
            src += (size_t)(inside ? i : 0) * mul;
            mul *= (size_t)in->dims[d];
        }
        memcpy(want + f * es, inside ? (const uint8_t *)in->data + src * es : value, es);
    }
}

static void check_pad(int32_t opcode, mp_dtype dt, int32_t rank, const int32_t *dims,
                      const int64_t *pads, bool pads64, const void *cv, pthreadpool_t pool,
                      const void *expect_value)
{
    kh_case c;
    kh_init(&c, opcode, pool);
    mp_tensor *in = kh_input(&c, dt, rank, dims, NULL);
    int32_t pd[] = {rank, 2};
    int32_t p32[2 * MP_MAX_RANK];
    for (int32_t i = 0; i < 2 * rank; i++)
        p32[i] = (int32_t)pads[i];
    if (pads64)
        kh_input(&c, MP_DT_INT64, 2, pd, pads);
    else
        kh_input(&c, MP_DT_INT32, 2, pd, p32);
    if (cv)
        kh_input(&c, dt, 0, NULL, cv);
    mp_tensor *out = kh_output(&c, dt);
    kh_fill_bytes(in, (unsigned)rank * 3);
    if (dt == MP_DT_FLOAT32)
        fill_f32(in, 1.0f);
    assert_int_equal(kh_run(&c), MP_OK);
    int32_t want_dims[MP_MAX_RANK];
    int64_t pre[MP_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        pre[d] = pads[2 * d];
        want_dims[d] = dims[d] + (int32_t)(pads[2 * d] + pads[2 * d + 1]);
    }
    expect_shape(out, rank, want_dims);
    uint8_t *want = calloc(1, out->bytes + 1);
    ref_pad(in, pre, out, expect_value, want);
    assert_memory_equal(out->data, want, out->bytes);
    /* second run with new data */
    kh_fill_bytes(in, 99);
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    ref_pad(in, pre, out, expect_value, want);
    assert_memory_equal(out->data, want, out->bytes);
    free(want);
    kh_free(&c);
}

static void test_pad(void **state)
{
    (void)state;
    static const uint8_t zero[8] = {0};
    /* NHWC float through XNNPACK */
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 4, 2},
              (int64_t[]){0, 0, 1, 2, 2, 1, 0, 0}, false, NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 4, (int32_t[]){2, 5, 5, 3},
              (int64_t[]){1, 0, 0, 1, 1, 0, 2, 3}, true, NULL, NULL, zero);
    /* int32, int16, int8, bool; int64 and rank 7 through the C path */
    check_pad(MP_OP_PAD, MP_DT_INT32, 2, (int32_t[]){3, 2}, (int64_t[]){1, 1, 0, 2}, false,
              NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_INT16, 3, (int32_t[]){2, 2, 3}, (int64_t[]){0, 1, 2, 0, 1, 1},
              false, NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_INT8, 1, (int32_t[]){5}, (int64_t[]){3, 4}, false, NULL, NULL,
              zero);
    check_pad(MP_OP_PAD, MP_DT_BOOL, 2, (int32_t[]){2, 2}, (int64_t[]){1, 0, 0, 1}, false, NULL,
              NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_INT64, 3, (int32_t[]){2, 1, 3}, (int64_t[]){1, 0, 0, 2, 1, 1},
              false, NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 7, (int32_t[]){1, 2, 1, 2, 1, 2, 3},
              (int64_t[]){0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 2, 0, 0, 1}, false, NULL, NULL, zero);
    /* no padding at all, and a zero-sized input */
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 2, (int32_t[]){3, 3}, (int64_t[]){0, 0, 0, 0}, false,
              NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 2, (int32_t[]){0, 3}, (int64_t[]){1, 1, 0, 1}, false,
              NULL, NULL, zero);
    /* PADV2 with a constant value (XNNPACK and C) */
    float cvf = 2.5f;
    check_pad(MP_OP_PADV2, MP_DT_FLOAT32, 3, (int32_t[]){2, 3, 2}, (int64_t[]){1, 0, 1, 1, 0, 2},
              false, &cvf, NULL, &cvf);
    int64_t cvl = -77;
    check_pad(MP_OP_PADV2, MP_DT_INT64, 2, (int32_t[]){2, 3}, (int64_t[]){1, 1, 2, 0}, false,
              &cvl, NULL, &cvl);
    /* dimensions whose inner block is unpadded merge before XNNPACK pads (pad_merge): all
     * four into one; N, H, W into rows of 4x5 with C padded apart; H, W into a 3x8 row of an
     * image padded in them only (the pose model's input, one pixel around) in 8 bits */
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 4, 5},
              (int64_t[]){1, 0, 0, 0, 0, 0, 0, 0}, false, NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 4, 5},
              (int64_t[]){1, 1, 0, 0, 0, 0, 0, 2}, false, NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 4, (int32_t[]){2, 3, 4, 5},
              (int64_t[]){0, 0, 2, 1, 0, 0, 0, 0}, false, NULL, NULL, zero);
    check_pad(MP_OP_PAD, MP_DT_INT8, 4, (int32_t[]){1, 6, 8, 3},
              (int64_t[]){0, 0, 1, 1, 1, 1, 0, 0}, false, NULL, NULL, zero);
    /* two threads, a bigger tensor */
    pthreadpool_t pool = pthreadpool_create(2);
    check_pad(MP_OP_PAD, MP_DT_FLOAT32, 4, (int32_t[]){2, 17, 13, 24},
              (int64_t[]){0, 0, 1, 1, 0, 1, 0, 0}, false, NULL, pool, zero);
    pthreadpool_destroy(pool);
}

static void test_pad_hand_and_quantized(void **state)
{
    (void)state;
    /* [[1,2],[3,4]] padded by [[1,0],[0,1]] = [[0,0,0],[1,2,0],[3,4,0]] */
    static const float x[] = {1, 2, 3, 4};
    static const int32_t p[] = {1, 0, 0, 1};
    kh_case c;
    kh_init(&c, MP_OP_PAD, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, x);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, p);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    static const float want[] = {0, 0, 0, 1, 2, 0, 3, 4, 0};
    expect_shape(out, 2, (int32_t[]){3, 3});
    expect_f32(out->data, want, 9);
    kh_free(&c);

    /* uint8 with zero point 128: padding is the zero point (real 0) */
    static const uint8_t q[] = {1, 2, 3};
    static const int32_t p1[] = {2, 1};
    static const float scale = 0.5f;
    static const int64_t zp = 128;
    kh_init(&c, MP_OP_PAD, NULL);
    kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){3}, q);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, p1);
    out = kh_output(&c, MP_DT_UINT8);
    kh_quant(&c, out, 1, &scale, &zp, 0);
    assert_int_equal(kh_run(&c), MP_OK);
    static const uint8_t wq[] = {128, 128, 1, 2, 3, 128};
    assert_memory_equal(out->data, wq, 6);
    kh_free(&c);
}

static void test_pad_deferred_and_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_PAD, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    mp_tensor *pads = kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    float *x = in->data;
    x[0] = 1;
    x[1] = 2;
    x[2] = 3;
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    int32_t *pv = pads->data;
    pv[0] = 1;
    pv[1] = 0;
    pads->value_known = true;
    assert_int_equal(kh_run(&c), MP_OK);
    expect_f32(out->data, (const float[]){0, 1, 2, 3}, 4);
    /* paddings change while running, output shape does not: no prepare, still right */
    pv[0] = 0;
    pv[1] = 1;
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    expect_f32(out->data, (const float[]){1, 2, 3, 0}, 4);
    /* errors */
    pv[0] = -1;
    kh_expect_error(&c, MP_ERR_SHAPE, "non-negative");
    kh_free(&c);

    kh_init(&c, MP_OP_PAD, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 3}, NULL);
    static const int32_t p3[] = {1, 1, 1, 1, 1, 1};
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){3, 2}, p3);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0' [3,3]");
    kh_free(&c);

    /* PADV2 whose constant value is only known while running: read at run time */
    kh_init(&c, MP_OP_PADV2, NULL);
    static const int32_t p2[] = {1, 1};
    static const int32_t xi[] = {7, 8};
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, xi);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, p2);
    mp_tensor *cv = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    out = kh_output(&c, MP_DT_INT32);
    *(int32_t *)cv->data = -5;
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data, ((const int32_t[]){-5, 7, 8, -5}), 16);
    *(int32_t *)cv->data = 9;
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    assert_memory_equal(out->data, ((const int32_t[]){9, 7, 8, 9}), 16);
    kh_free(&c);

    /* PADV2 with the constant omitted pads with zero */
    kh_init(&c, MP_OP_PADV2, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, xi);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, p2);
    kh_omit_input(&c);
    out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_memory_equal(out->data, ((const int32_t[]){0, 7, 8, 0}), 16);
    kh_free(&c);
}

/* ---- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND --------------------------------------------- */

/* References written literally from the TensorFlow definitions, for [B, spatial(M)..., C]
 * with the remaining dimensions flattened into C.
 * space_to_batch: pad -> reshape [B, H0/b0, b0, ..., C] -> transpose to
 * [b0, ..., b(M-1), B, H0/b0, ..., C] -> reshape [B * prod(b), H0/b0, ..., C]. */
static void ref_space_to_batch(const uint8_t *in, int32_t batch, int32_t m, const int32_t *sp,
                               size_t c, size_t es, const int64_t *block, const int64_t *pad,
                               uint8_t *out, const void *value)
{
    /* 1. pad */
    int32_t psp[MP_MAX_RANK];
    size_t pn = (size_t)batch * c;
    for (int32_t i = 0; i < m; i++) {
        psp[i] = sp[i] + (int32_t)(pad[2 * i] + pad[2 * i + 1]);
        pn *= (size_t)psp[i];
    }
    uint8_t *padded = malloc(pn * es + 1);
    for (size_t f = 0; f < pn / c; f++) {
        size_t r = f, src = 0, mul = 1;
        bool inside = true;
        for (int32_t i = m - 1; i >= 0; i--) {
            int64_t v = (int64_t)(r % (size_t)psp[i]) - pad[2 * i];
            r /= (size_t)psp[i];
            inside = inside && v >= 0 && v < sp[i];
            src += (size_t)(inside ? v : 0) * mul;
            mul *= (size_t)sp[i];
        }
        src += r * mul; /* r is now the batch */
        for (size_t k = 0; k < c; k++)
            memcpy(padded + (f * c + k) * es, inside ? in + (src * c + k) * es : value, es);
    }
    /* 2-4. the reshaped padded tensor has dims [B, q0, b0, q1, b1, ..., C] (qi = psp/bi);
     * the transposed output has dims [b0, .., b(M-1), B, q0, .., q(M-1), C]: walk the
     * output in order and find each element in the reshaped tensor */
    size_t total = pn / c;
    for (size_t f = 0; f < total; f++) {
        size_t r = f;
        int64_t q[MP_MAX_RANK], bo[MP_MAX_RANK];
        for (int32_t i = m - 1; i >= 0; i--) {
            int64_t qi = psp[i] / block[i];
            q[i] = (int64_t)(r % (size_t)qi);
            r /= (size_t)qi;
        }
        int64_t b = (int64_t)(r % (size_t)batch);
        r /= (size_t)batch;
        for (int32_t i = m - 1; i >= 0; i--) {
            bo[i] = (int64_t)(r % (size_t)block[i]);
            r /= (size_t)block[i];
        }
        /* reshaped index [b, q0, bo0, q1, bo1, ...] == padded [b, q0*b0+bo0, ...] */
        size_t src = (size_t)b;
        for (int32_t i = 0; i < m; i++)
            src = src * (size_t)psp[i] + (size_t)(q[i] * block[i] + bo[i]);
        memcpy(out + f * c * es, padded + src * c * es, c * es);
    }
    free(padded);
}

/* batch_to_space: reshape [b0, .., b(M-1), B, H0, .., C] -> permute to [B, H0, b0, H1, b1,
 * .., C] -> reshape [B, H0*b0, .., C] -> crop. */
static void ref_batch_to_space(const uint8_t *in, int32_t in_batch, int32_t m, const int32_t *sp,
                               size_t c, size_t es, const int64_t *block, const int64_t *crop,
                               uint8_t *out)
{
    int64_t nb = 1;
    for (int32_t i = 0; i < m; i++)
        nb *= block[i];
    int32_t batch = (int32_t)(in_batch / nb);
    int32_t full[MP_MAX_RANK], osp[MP_MAX_RANK];
    size_t fn = (size_t)batch;
    for (int32_t i = 0; i < m; i++) {
        full[i] = sp[i] * (int32_t)block[i];
        osp[i] = full[i] - (int32_t)(crop[2 * i] + crop[2 * i + 1]);
        fn *= (size_t)full[i];
    }
    uint8_t *uncropped = malloc(fn * c * es + 1);
    for (size_t f = 0; f < fn; f++) { /* uncropped [B, H0*b0, ...] in order */
        size_t r = f;
        int64_t h[MP_MAX_RANK], bo[MP_MAX_RANK], x[MP_MAX_RANK];
        for (int32_t i = m - 1; i >= 0; i--) {
            h[i] = (int64_t)(r % (size_t)full[i]);
            r /= (size_t)full[i];
            x[i] = h[i] / block[i];
            bo[i] = h[i] % block[i];
        }
        int64_t b = (int64_t)r;
        /* input index [bo0, .., bo(M-1), b, x0, .., x(M-1)] */
        size_t src = 0;
        for (int32_t i = 0; i < m; i++)
            src = src * (size_t)block[i] + (size_t)bo[i];
        src = src * (size_t)batch + (size_t)b;
        for (int32_t i = 0; i < m; i++)
            src = src * (size_t)sp[i] + (size_t)x[i];
        memcpy(uncropped + f * c * es, in + src * c * es, c * es);
    }
    size_t on = (size_t)batch;
    for (int32_t i = 0; i < m; i++)
        on *= (size_t)osp[i];
    for (size_t f = 0; f < on; f++) {
        size_t r = f, src = 0, mul = 1;
        for (int32_t i = m - 1; i >= 0; i--) {
            int64_t v = (int64_t)(r % (size_t)osp[i]) + crop[2 * i];
            r /= (size_t)osp[i];
            src += (size_t)v * mul;
            mul *= (size_t)full[i];
        }
        src += r * mul;
        memcpy(out + f * c * es, uncropped + src * c * es, c * es);
    }
    free(uncropped);
}

static void check_s2b(mp_dtype dt, int32_t rank, const int32_t *dims, int32_t m,
                      const int64_t *block, const int64_t *pads)
{
    size_t es = mp_dtype_size(dt), c = 1;
    for (int32_t d = m + 1; d < rank; d++)
        c *= (size_t)dims[d];
    int32_t block32[MP_MAX_RANK], pads32[2 * MP_MAX_RANK];
    for (int32_t i = 0; i < m; i++) {
        block32[i] = (int32_t)block[i];
        pads32[2 * i] = (int32_t)pads[2 * i];
        pads32[2 * i + 1] = (int32_t)pads[2 * i + 1];
    }
    /* space to batch */
    kh_case c1;
    kh_init(&c1, MP_OP_SPACE_TO_BATCH_ND, NULL);
    mp_tensor *in = kh_input(&c1, dt, rank, dims, NULL);
    kh_input(&c1, MP_DT_INT32, 1, (int32_t[]){m}, block32);
    kh_input(&c1, MP_DT_INT64, 2, (int32_t[]){m, 2}, pads);
    mp_tensor *out = kh_output(&c1, dt);
    kh_fill_bytes(in, (unsigned)rank);
    assert_int_equal(kh_run(&c1), MP_OK);
    int32_t want_dims[MP_MAX_RANK];
    memcpy(want_dims, dims, sizeof(int32_t) * (size_t)rank);
    for (int32_t i = 0; i < m; i++) {
        want_dims[0] *= (int32_t)block[i];
        want_dims[i + 1] = (dims[i + 1] + (int32_t)(pads[2 * i] + pads[2 * i + 1])) /
                           (int32_t)block[i];
    }
    expect_shape(out, rank, want_dims);
    uint8_t *want = calloc(1, out->bytes + 1);
    static const uint8_t zero[8] = {0};
    ref_space_to_batch(in->data, dims[0], m, dims + 1, c, es, block, pads, want, zero);
    assert_memory_equal(out->data, want, out->bytes);

    /* batch to space with crops = paddings undoes it */
    kh_case c2;
    kh_init(&c2, MP_OP_BATCH_TO_SPACE_ND, NULL);
    mp_tensor *in2 = kh_input(&c2, dt, rank, out->dims, NULL);
    memcpy(in2->data, out->data, out->bytes);
    kh_input(&c2, MP_DT_INT64, 1, (int32_t[]){m}, block);
    kh_input(&c2, MP_DT_INT32, 2, (int32_t[]){m, 2}, pads32);
    mp_tensor *out2 = kh_output(&c2, dt);
    assert_int_equal(kh_run(&c2), MP_OK);
    expect_shape(out2, rank, dims);
    assert_memory_equal(out2->data, in->data, in->bytes);
    /* and matches its own reference on other data */
    kh_fill_bytes(in2, 41);
    assert_int_equal(kh_rerun(&c2, false), MP_OK);
    uint8_t *want2 = calloc(1, out2->bytes + 1);
    ref_batch_to_space(in2->data, in2->dims[0], m, in2->dims + 1, c, es, block, pads, want2);
    assert_memory_equal(out2->data, want2, out2->bytes);
    free(want2);
    free(want);
    kh_free(&c2);
    kh_free(&c1);
}

static void test_space_batch_reference(void **state)
{
    (void)state;
    check_s2b(MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 3}, 2, (int64_t[]){2, 2},
              (int64_t[]){0, 0, 0, 0});
    check_s2b(MP_DT_FLOAT32, 4, (int32_t[]){2, 5, 7, 3}, 2, (int64_t[]){2, 3},
              (int64_t[]){1, 0, 1, 1});
    check_s2b(MP_DT_INT32, 4, (int32_t[]){3, 3, 2, 2}, 2, (int64_t[]){3, 2},
              (int64_t[]){2, 1, 1, 1});
    check_s2b(MP_DT_UINT8, 4, (int32_t[]){1, 6, 6, 5}, 2, (int64_t[]){4, 4},
              (int64_t[]){1, 1, 0, 2});
    check_s2b(MP_DT_INT64, 4, (int32_t[]){2, 2, 3, 1}, 2, (int64_t[]){1, 2},
              (int64_t[]){0, 0, 2, 1});
    /* rank 3, one spatial dimension */
    check_s2b(MP_DT_FLOAT32, 3, (int32_t[]){2, 7, 3}, 1, (int64_t[]){3}, (int64_t[]){1, 1});
    /* dilated conv style: [1, 9, 9, 8] block 2, paddings to even size */
    check_s2b(MP_DT_FLOAT32, 4, (int32_t[]){1, 9, 9, 8}, 2, (int64_t[]){2, 2},
              (int64_t[]){2, 3, 2, 3});
}

static void test_space_batch_hand(void **state)
{
    (void)state;
    /* TensorFlow's documented example: x [2,2,4,1] = 1..16, block [2,2], paddings
     * [[0,0],[2,0]] -> [8,1,3,1] */
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i + 1);
    static const int32_t block[] = {2, 2}, pads[] = {0, 0, 2, 0};
    kh_case c;
    kh_init(&c, MP_OP_SPACE_TO_BATCH_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){2, 2, 4, 1}, x);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, block);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, pads);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 4, (int32_t[]){8, 1, 3, 1});
    static const float want[] = {0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12,
                                 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16};
    expect_f32(out->data, want, 24);
    kh_free(&c);

    /* and back: crops [[0,0],[2,0]] */
    kh_init(&c, MP_OP_BATCH_TO_SPACE_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){8, 1, 3, 1}, want);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, block);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, pads);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 4, (int32_t[]){2, 2, 4, 1});
    expect_f32(out->data, x, 16);
    kh_free(&c);

    /* [4,1,1,1] = 1..4 -> [1,2,2,1] */
    static const float y[] = {1, 2, 3, 4};
    static const int32_t zero_crops[] = {0, 0, 0, 0};
    kh_init(&c, MP_OP_BATCH_TO_SPACE_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){4, 1, 1, 1}, y);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, block);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, zero_crops);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 4, (int32_t[]){1, 2, 2, 1});
    expect_f32(out->data, y, 4);
    kh_free(&c);

    /* batch to space with real cropping, checked against the reference */
    float z[12 * 3 * 3 * 2];
    for (size_t i = 0; i < sizeof z / sizeof z[0]; i++)
        z[i] = (float)i * 0.5f - 3.0f;
    static const int32_t crops[] = {1, 2, 0, 3};
    static const int64_t crops64[] = {1, 2, 0, 3}, block64[] = {2, 3};
    static const int32_t block23[] = {2, 3};
    kh_init(&c, MP_OP_BATCH_TO_SPACE_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){12, 3, 3, 2}, z);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, block23);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, crops);
    out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 4, (int32_t[]){2, 3, 6, 2});
    float wz[2 * 3 * 6 * 2];
    ref_batch_to_space((const uint8_t *)z, 12, 2, (int32_t[]){3, 3}, 2, 4, block64, crops64,
                       (uint8_t *)wz);
    expect_f32(out->data, wz, sizeof wz / sizeof wz[0]);
    kh_free(&c);
}

static void test_space_batch_deferred_and_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_SPACE_TO_BATCH_ND, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 5, 4, 2}, NULL);
    mp_tensor *blk = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, NULL);
    mp_tensor *pads = kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    int32_t *bv = blk->data, *pv = pads->data;
    bv[0] = 2;
    bv[1] = 2;
    blk->value_known = pads->value_known = true;
    /* 5 is not a multiple of 2 */
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0' [1,5,4,2]");
    pv[0] = 1; /* 1 + 5 + 0 = 6 */
    fill_f32(in, 0.0f);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 4, (int32_t[]){4, 3, 2, 2});
    float want[4 * 3 * 2 * 2];
    static const uint8_t zero[8] = {0};
    ref_space_to_batch(in->data, 1, 2, (int32_t[]){5, 4}, 2, 4, (int64_t[]){2, 2},
                       (int64_t[]){1, 0, 0, 0}, (uint8_t *)want, zero);
    expect_f32(out->data, want, 48);
    bv[1] = 0;
    kh_expect_error(&c, MP_ERR_SHAPE, ">= 1");
    bv[1] = 2;
    pv[3] = -2;
    kh_expect_error(&c, MP_ERR_SHAPE, "non-negative");
    kh_free(&c);

    kh_init(&c, MP_OP_BATCH_TO_SPACE_ND, NULL);
    static const int32_t b2[] = {2, 2}, cr[] = {0, 0, 0, 0}, cr_big[] = {0, 0, 3, 2};
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){6, 2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, b2);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, cr);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "'t0' [6,2,2,1]"); /* 6 % 4 */
    kh_free(&c);

    kh_init(&c, MP_OP_BATCH_TO_SPACE_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){4, 2, 2, 1}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, b2);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, cr_big);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "crops");
    kh_free(&c);

    kh_init(&c, MP_OP_SPACE_TO_BATCH_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, b2);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, cr);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "block_shape");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape_from_tensor),
        cmocka_unit_test(test_reshape_options_and_legacy),
        cmocka_unit_test(test_reshape_deferred_and_errors),
        cmocka_unit_test(test_squeeze),
        cmocka_unit_test(test_expand_dims),
        cmocka_unit_test(test_concat_shapes_and_dtypes),
        cmocka_unit_test(test_concat_hand_and_activations),
        cmocka_unit_test(test_concat_errors),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_pad_hand_and_quantized),
        cmocka_unit_test(test_pad_deferred_and_errors),
        cmocka_unit_test(test_space_batch_reference),
        cmocka_unit_test(test_space_batch_hand),
        cmocka_unit_test(test_space_batch_deferred_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
