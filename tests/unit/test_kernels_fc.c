/* Tests of the FULLY_CONNECTED kernel against hand-computed values and a naive reference:
 * inputs of several ranks, keep_num_dims, bias present or omitted, every fused activation,
 * hybrid int8/uint8 weights, weights computed at run time, shape changes, threads, errors. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "tests/util/kernel_harness.h"
/* y[b][o] = act(bias[o] + sum_i x[b][i] * w[o][i]) in double */
static void ref_fc(const float *x, const float *w, const float *bias, float *y, size_t batch,
                   size_t in_c, size_t out_c, int act)
{
    for (size_t b = 0; b < batch; b++)
        for (size_t o = 0; o < out_c; o++) {
            double acc = bias ? bias[o] : 0.0;
            for (size_t i = 0; i < in_c; i++)
                acc += (double)x[b * in_c + i] * w[o * in_c + i];
            y[b * out_c + o] = (float)kh_ref_act(acc, act);
        }
}

/* ---- hand-computed ---------------------------------------------------------------------- */

static void test_hand(void **state)
{
    (void)state;
    static const float w[6] = {1, 0, -1, 2, 1, 0};
    static const float bias[2] = {0.5f, -1.0f};
    kh_case c;
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, w);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, bias);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
    float *xd = x->data;
    xd[0] = 1, xd[1] = 2, xd[2] = 3;
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(y->rank, 2);
    assert_int_equal(y->dims[0], 1);
    assert_int_equal(y->dims[1], 2);
    /* 1 - 3 + 0.5 = -1.5 ; 2 + 2 - 1 = 3 */
    kh_expect_close(y->data, (const float[]){-1.5f, 3.0f}, 2, 1.0);

    /* new data, run only: x = (-1, 4, 0.5) -> -1 - 0.5 + 0.5 = -1 ; -2 + 4 - 1 = 1 */
    xd[0] = -1, xd[1] = 4, xd[2] = 0.5f;
    kh_expect_ok(&c, kh_rerun(&c, false));
    kh_expect_close(y->data, (const float[]){-1.0f, 1.0f}, 2, 1.0);
    kh_free(&c);

    /* RELU, no bias */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    c.opt.activation = MP_ACT_RELU;
    x = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, w);
    kh_omit_input(&c);
    y = kh_output(&c, MP_DT_FLOAT32);
    xd = x->data;
    xd[0] = 1, xd[1] = 2, xd[2] = 3;
    kh_expect_ok(&c, kh_run(&c));
    kh_expect_close(y->data, (const float[]){0.0f, 4.0f}, 2, 1.0);
    kh_free(&c);
}

/* ---- reference cases -------------------------------------------------------------------- */

typedef struct fc_params {
    int32_t rank;
    int32_t dims[4];
    int32_t in_c, out_c;
    bool keep_num_dims, bias;
    int32_t act;
    int quant;          /* 0 float32, 1 int8 per-channel, 2 uint8 per-tensor */
    bool runtime_weights;
    pthreadpool_t pool;
} fc_params;

static void check_fc(const fc_params *p)
{
    size_t wn = (size_t)p->in_c * p->out_c;
    float *wref = malloc(wn * sizeof(float));
    void *wdata = malloc(wn * sizeof(float));
    float *bias = malloc((size_t)p->out_c * sizeof(float));
    float scales[64];
    int64_t zps[1] = {3};
    kh_fill(bias, (size_t)p->out_c, 17, 1.0f);
    if (p->quant == 0) {
        kh_fill(wref, wn, 21, 1.0f);
        memcpy(wdata, wref, wn * sizeof(float));
    } else if (p->quant == 1) {
        assert_true(p->out_c <= 64);
        for (int32_t o = 0; o < p->out_c; o++)
            scales[o] = 0.005f * (float)(o + 1);
        uint32_t seed = 23;
        for (size_t i = 0; i < wn; i++) {
            int8_t q = (int8_t)(int32_t)(kh_frand(&seed, 1.0f) * 127.0f);
            ((int8_t *)wdata)[i] = q;
            wref[i] = scales[i / (size_t)p->in_c] * (float)q;
        }
    } else {
        scales[0] = 0.01f;
        uint32_t seed = 29;
        for (size_t i = 0; i < wn; i++) {
            uint8_t q = (uint8_t)((kh_frand(&seed, 1.0f) + 1.0f) * 127.5f);
            ((uint8_t *)wdata)[i] = q;
            wref[i] = scales[0] * (float)((int32_t)q - 3);
        }
    }

    kh_case c;
    kh_init(&c, MP_OP_FULLY_CONNECTED, p->pool);
    c.opt.keep_num_dims = p->keep_num_dims;
    c.opt.activation = p->act;
    mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, p->rank, p->dims, NULL);
    static const mp_dtype qdt[] = {MP_DT_FLOAT32, MP_DT_INT8, MP_DT_UINT8};
    int32_t wdims[2] = {p->out_c, p->in_c};
    mp_tensor *w = kh_input(&c, qdt[p->quant], 2, wdims, p->runtime_weights ? NULL : wdata);
    if (p->runtime_weights)
        memcpy(w->data, wref, wn * sizeof(float));
    if (p->quant == 1)
        kh_quant(&c, w, p->out_c, scales, NULL, 0);
    else if (p->quant == 2)
        kh_quant(&c, w, 1, scales, zps, 0);
    if (p->bias)
        kh_input(&c, MP_DT_FLOAT32, 1, &p->out_c, bias);
    else
        kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);

    size_t xn = mp_tensor_elements(x), batch = xn / (size_t)p->in_c;
    double tol_floor = sqrt((double)p->in_c);
    kh_fill(x->data, xn, 31, 1.0f);
    kh_expect_ok(&c, kh_run(&c));
    if (p->keep_num_dims) {
        assert_int_equal(y->rank, p->rank);
        for (int32_t i = 0; i < p->rank - 1; i++)
            assert_int_equal(y->dims[i], p->dims[i]);
        assert_int_equal(y->dims[p->rank - 1], p->out_c);
    } else {
        assert_int_equal(y->rank, 2);
        assert_int_equal(y->dims[0], (int32_t)batch);
        assert_int_equal(y->dims[1], p->out_c);
    }
    size_t yn = batch * (size_t)p->out_c;
    float *want = malloc(yn * sizeof(float) + 1);
    ref_fc(x->data, wref, p->bias ? bias : NULL, want, batch, (size_t)p->in_c, (size_t)p->out_c,
           p->act);
    kh_expect_close(y->data, want, yn, tol_floor);

    /* new input data (and new run-time weights), run only */
    kh_fill(x->data, xn, 37, 1.0f);
    if (p->runtime_weights) {
        kh_fill(wref, wn, 41, 1.0f);
        memcpy(w->data, wref, wn * sizeof(float));
    }
    kh_expect_ok(&c, kh_rerun(&c, false));
    ref_fc(x->data, wref, p->bias ? bias : NULL, want, batch, (size_t)p->in_c, (size_t)p->out_c,
           p->act);
    kh_expect_close(y->data, want, yn, tol_floor);
    free(want);

    /* a new batch size: setup only */
    if (p->rank < 2)
        goto done;
    int32_t dims2[4];
    memcpy(dims2, p->dims, sizeof dims2);
    dims2[0] += 2;
    assert_true(mp_tensor_set_shape(x, p->rank, dims2));
    free(x->data);
    x->data = calloc(1, x->bytes + XNN_EXTRA_BYTES);
    xn = mp_tensor_elements(x);
    batch = xn / (size_t)p->in_c;
    kh_fill(x->data, xn, 43, 1.0f);
    kh_expect_ok(&c, kh_run(&c));
    yn = batch * (size_t)p->out_c;
    want = malloc(yn * sizeof(float) + 1);
    ref_fc(x->data, wref, p->bias ? bias : NULL, want, batch, (size_t)p->in_c, (size_t)p->out_c,
           p->act);
    kh_expect_close(y->data, want, yn, tol_floor);
    free(want);

done:
    kh_free(&c);
    free(wref);
    free(wdata);
    free(bias);
}

static void test_reference(void **state)
{
    (void)state;
    static const fc_params cases[] = {
        /* rank, dims, in_c, out_c, keep_num_dims, bias, act, quant, runtime_weights */
        {2, {3, 16}, 16, 10, false, true, MP_ACT_NONE, 0, false, NULL},
        {2, {1, 1280}, 1280, 37, false, true, MP_ACT_NONE, 0, false, NULL},
        {4, {2, 3, 3, 4}, 36, 5, false, true, MP_ACT_RELU, 0, false, NULL},   /* flattened */
        {4, {2, 3, 3, 4}, 12, 5, false, true, MP_ACT_RELU, 0, false, NULL},   /* batch 6 */
        {3, {2, 5, 8}, 8, 6, true, false, MP_ACT_RELU6, 0, false, NULL},      /* keep_num_dims */
        {3, {2, 5, 8}, 8, 6, false, false, MP_ACT_RELU_N1_TO_1, 0, false, NULL},
        {2, {4, 9}, 9, 7, false, true, MP_ACT_TANH, 0, false, NULL},
        {2, {4, 9}, 9, 7, true, true, MP_ACT_SIGN_BIT, 0, false, NULL},
        {1, {12}, 12, 3, false, true, MP_ACT_NONE, 0, false, NULL},            /* rank 1 */
        {1, {12}, 12, 3, true, true, MP_ACT_NONE, 0, false, NULL},
        {2, {3, 20}, 20, 8, false, true, MP_ACT_NONE, 1, false, NULL},        /* hybrid int8 */
        {3, {1, 2, 20}, 20, 8, true, false, MP_ACT_RELU, 2, false, NULL},     /* hybrid uint8 */
        {2, {3, 10}, 10, 4, false, true, MP_ACT_NONE, 0, true, NULL},         /* run-time weights */
        {2, {3, 10}, 10, 4, false, false, MP_ACT_RELU6, 0, true, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fprintf(stderr, "fc case %zu\n", i);
        check_fc(&cases[i]);
    }
}

static void test_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    fc_params a = {2, {8, 256}, 256, 100, false, true, MP_ACT_RELU, 0, false, pool};
    fc_params b = {3, {2, 7, 64}, 64, 48, true, true, MP_ACT_NONE, 1, false, pool};
    check_fc(&a);
    check_fc(&b);
    pthreadpool_destroy(pool);
}

static void test_empty_batch(void **state)
{
    (void)state;
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    kh_case c;
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){0, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, w);
    kh_omit_input(&c);
    mp_tensor *y = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(y->dims[0], 0);
    assert_int_equal(y->dims[1], 2);
    kh_free(&c);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_errors(void **state)
{
    (void)state;
    static const float w[24] = {0};
    kh_case c;

    /* 10 elements are not rows of 4 */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 5}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 4}, w);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_SHAPE, "'t0'");
    kh_free(&c);

    /* keep_num_dims needs the last dimension to be the input channels */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    c.opt.keep_num_dims = true;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 2}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 4}, w);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_SHAPE, "'t0'");
    kh_free(&c);

    /* weights of rank 3 */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 3, 4}, w);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_SHAPE, "'t1'");
    kh_free(&c);

    /* bias of the wrong length */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 4}, w);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, w);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_SHAPE, "'t2'");
    kh_free(&c);

    /* shuffled weights format */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    c.opt.weights_format = 1;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 4}, w);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_UNSUPPORTED, "weights_format");
    kh_free(&c);

    /* int8 weights computed at run time */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, NULL);
    kh_input(&c, MP_DT_INT8, 2, (int32_t[]){3, 4}, NULL);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_UNSUPPORTED, "'t1'");
    kh_free(&c);

    /* int32 input */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 4}, w);
    kh_omit_input(&c);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_fail(&c, kh_run(&c), MP_ERR_UNSUPPORTED, "'t0'");
    kh_free(&c);

    /* release without prepare */
    kh_init(&c, MP_OP_FULLY_CONNECTED, NULL);
    assert_int_equal(c.kernel->optional_inputs, 1u << 2);
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_empty_batch),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
