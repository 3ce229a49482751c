/* Tests of the elementwise activation kernels (LOGISTIC, TANH, RELU, RELU6, RELU_N1_TO_1):
 * hand-computed values, a naive reference over several shapes (lengths that are not
 * multiples of vector widths, scalars, empty tensors), reruns with new data, shape
 * changes, a 2-thread pool, and dtype errors. */
#include "tests/util/testutil.h"

#include <math.h>
#include <pthreadpool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static const int32_t k_ops[] = {MP_OP_LOGISTIC, MP_OP_TANH, MP_OP_RELU, MP_OP_RELU6,
                                MP_OP_RELU_N1_TO_1};

static uint32_t g_seed = 777;
static float rndf(float lo, float hi)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return lo + (hi - lo) * (float)((g_seed >> 8) & 0xffff) / 65536.0f;
}

static double ref_unary(int32_t op, double x)
{
    switch (op) {
    case MP_OP_LOGISTIC: return 1.0 / (1.0 + exp(-x));
    case MP_OP_TANH: return tanh(x);
    case MP_OP_RELU: return x < 0 ? 0 : x;
    case MP_OP_RELU6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    default: return x < -1 ? -1 : (x > 1 ? 1 : x);
    }
}

static void check_close(int32_t op, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double want = ref_unary(op, x[i]);
        double err = fabs(y[i] - want) / fmax(fabs(want), 1e-3);
        if (!(err <= 2e-6))
            fail_msg("op %d at %zu: f(%.9g) = %.9g, got %.9g (rel err %g)", op, i, (double)x[i],
                     want, (double)y[i], err);
    }
}

static void check_op(int32_t op, int32_t rank, const int32_t *dims, pthreadpool_t pool)
{
    kh_case c;
    kh_init(&c, op, pool);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, rank, dims, NULL);
    size_t n = mp_tensor_elements(in);
    float *x = in->data;
    for (size_t i = 0; i < n; i++)
        x[i] = rndf(-10.0f, 10.0f);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    mp_status st = kh_run(&c);
    if (st != MP_OK)
        fail_msg("%s", c.err.msg);
    assert_true(mp_tensor_same_shape(in, out));
    check_close(op, x, out->data, n);
    for (size_t i = 0; i < n; i++)
        x[i] = rndf(-3.0f, 8.0f);
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    check_close(op, x, out->data, n);
    kh_free(&c);
}

static void test_hand_values(void **state)
{
    (void)state;
    const float x[] = {-7.0f, -1.5f, -0.5f, 0.0f, 0.5f, 3.0f, 6.0f, 9.0f};
    const float want[][8] = {
        /* RELU */ {0, 0, 0, 0, 0.5f, 3, 6, 9},
        /* RELU6 */ {0, 0, 0, 0, 0.5f, 3, 6, 6},
        /* RELU_N1_TO_1 */ {-1, -1, -0.5f, 0, 0.5f, 1, 1, 1},
    };
    const int32_t ops[] = {MP_OP_RELU, MP_OP_RELU6, MP_OP_RELU_N1_TO_1};
    for (int k = 0; k < 3; k++) {
        kh_case c;
        kh_init(&c, ops[k], NULL);
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 4}, NULL);
        memcpy(in->data, x, sizeof x);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        const float *y = out->data;
        for (int i = 0; i < 8; i++)
            assert_true(y[i] == want[k][i]);
        kh_free(&c);
    }
    /* LOGISTIC(0) = 0.5, LOGISTIC(ln 3) = 0.75; TANH(0) = 0, TANH(ln 2) = 0.6 */
    const float lx[] = {0.0f, logf(3.0f)}, lw[] = {0.5f, 0.75f};
    const float tx[] = {0.0f, logf(2.0f)}, tw[] = {0.0f, 0.6f};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, k ? MP_OP_TANH : MP_OP_LOGISTIC, NULL);
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
        memcpy(in->data, k ? tx : lx, 2 * sizeof(float));
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        const float *y = out->data, *w = k ? tw : lw;
        for (int i = 0; i < 2; i++)
            assert_true(fabsf(y[i] - w[i]) <= 1e-6f);
        kh_free(&c);
    }
}

static void test_shapes(void **state)
{
    (void)state;
    for (size_t o = 0; o < 5; o++) {
        check_op(k_ops[o], 4, (int32_t[]){1, 7, 7, 37}, NULL);
        check_op(k_ops[o], 1, (int32_t[]){1}, NULL);
        check_op(k_ops[o], 1, (int32_t[]){13}, NULL);
        check_op(k_ops[o], 0, NULL, NULL);
        check_op(k_ops[o], 8, (int32_t[]){2, 1, 3, 1, 2, 1, 2, 3}, NULL);
        check_op(k_ops[o], 2, (int32_t[]){0, 5}, NULL); /* empty: nothing to do */
    }
}

static void test_two_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    for (size_t o = 0; o < 5; o++)
        check_op(k_ops[o], 4, (int32_t[]){2, 32, 32, 24}, pool);
    pthreadpool_destroy(pool);
}

/* The input shape changes between runs: infer, prepare (setup only) and run again. */
static void test_shape_change(void **state)
{
    (void)state;
    for (size_t o = 0; o < 5; o++) {
        kh_case c;
        kh_init(&c, k_ops[o], NULL);
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 5}, NULL);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        for (int i = 0; i < 15; i++)
            ((float *)in->data)[i] = rndf(-8.0f, 8.0f);
        assert_int_equal(kh_run(&c), MP_OK);
        check_close(k_ops[o], in->data, out->data, 15);

        free(in->data);
        assert_true(mp_tensor_set_shape(in, 3, (int32_t[]){4, 10, 3}));
        in->data = calloc(1, in->bytes + 16);
        for (int i = 0; i < 120; i++)
            ((float *)in->data)[i] = rndf(-8.0f, 8.0f);
        assert_int_equal(kh_run(&c), MP_OK);
        assert_int_equal(out->rank, 3);
        assert_int_equal(out->dims[1], 10);
        check_close(k_ops[o], in->data, out->data, 120);
        kh_free(&c);
    }
}

static void test_errors(void **state)
{
    (void)state;
    for (size_t o = 0; o < 5; o++) {
        kh_case c;
        kh_init(&c, k_ops[o], NULL);
        kh_input(&c, MP_DT_INT8, 1, (int32_t[]){4}, NULL);
        kh_output(&c, MP_DT_INT8);
        assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
        assert_non_null(strstr(c.err.msg, "'t0'"));
        assert_non_null(strstr(c.err.msg, "i8"));
        kh_free(&c);

        kh_init(&c, k_ops[o], NULL);
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, NULL);
        kh_output(&c, MP_DT_INT32);
        assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
        assert_non_null(strstr(c.err.msg, "'t1'"));
        kh_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_values),  cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_two_threads),  cmocka_unit_test(test_shape_change),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
