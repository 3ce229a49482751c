/* Tests of the SOFTMAX kernel: a hand-computed row, a double-precision reference over
 * ranks 1..4 (beta == 1 straight through XNNPACK; other betas, including 0 and negative,
 * through XNNPACK on beta * x in the operator's scratch), channel-count changes between runs
 * (operator re-created), reruns, 2 threads, errors. */
#include "tests/util/testutil.h"

#include <math.h>
#include <pthreadpool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static uint32_t g_seed = 4242;
static float rndf(float lo, float hi)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return lo + (hi - lo) * (float)((g_seed >> 8) & 0xffff) / 65536.0f;
}

/* Plain softmax of each row in double: exp(beta*x_i) / sum_j exp(beta*x_j), shifted by the
 * largest beta*x for range. */
static void ref_softmax(const float *x, double *y, size_t rows, size_t c, double beta)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * c;
        double m = -INFINITY, sum = 0;
        for (size_t i = 0; i < c; i++)
            m = fmax(m, beta * xr[i]);
        for (size_t i = 0; i < c; i++)
            sum += exp(beta * xr[i] - m);
        for (size_t i = 0; i < c; i++)
            y[r * c + i] = exp(beta * xr[i] - m) / sum;
    }
}

static void expect_softmax(const float *x, const float *got, size_t rows, size_t c, double beta)
{
    double *want = malloc(rows * c * sizeof(double) + 8);
    ref_softmax(x, want, rows, c, beta);
    for (size_t i = 0; i < rows * c; i++) {
        double err = fabs(got[i] - want[i]) / fmax(want[i], 1e-6);
        if (!(err <= 1e-5))
            fail_msg("at %zu (beta %g, %zux%zu): got %.9g want %.9g", i, beta, rows, c,
                     (double)got[i], want[i]);
    }
    free(want);
}

static void check(int32_t rank, const int32_t *dims, float beta, pthreadpool_t pool)
{
    kh_case c;
    kh_init(&c, MP_OP_SOFTMAX, pool);
    c.opt.beta = beta;
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, rank, dims, NULL);
    size_t n = mp_tensor_elements(in), ch = (size_t)dims[rank - 1];
    for (size_t i = 0; i < n; i++)
        ((float *)in->data)[i] = rndf(-6.0f, 6.0f);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    mp_status st = kh_run(&c);
    if (st != MP_OK)
        fail_msg("%s", c.err.msg);
    assert_true(mp_tensor_same_shape(in, out));
    if (ch)
        expect_softmax(in->data, out->data, n / ch, ch, beta);
    for (size_t i = 0; i < n; i++) /* new data, rerun without prepare */
        ((float *)in->data)[i] = rndf(-20.0f, 20.0f);
    assert_int_equal(kh_rerun(&c, false), MP_OK);
    if (ch)
        expect_softmax(in->data, out->data, n / ch, ch, beta);
    kh_free(&c);
}

static void test_hand_row(void **state)
{
    (void)state;
    /* softmax([0, ln 2, ln 5]) = [1, 2, 5] / 8; with beta 2: [1, 4, 25] / 30 */
    const float betas[] = {1.0f, 2.0f};
    const float want[2][3] = {{0.125f, 0.25f, 0.625f}, {1.0f / 30, 4.0f / 30, 25.0f / 30}};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_SOFTMAX, NULL);
        c.opt.beta = betas[k];
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 3}, NULL);
        memcpy(in->data, (float[]){0.0f, logf(2.0f), logf(5.0f)}, 3 * sizeof(float));
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        const float *y = out->data;
        for (int i = 0; i < 3; i++)
            assert_true(fabsf(y[i] - want[k][i]) <= 1e-6f);
        kh_free(&c);
    }
}

static void test_shapes_and_betas(void **state)
{
    (void)state;
    const float betas[] = {1.0f, 0.5f, 2.0f, 0.0f, -1.0f};
    for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++) {
        check(1, (int32_t[]){10}, betas[b], NULL);
        check(2, (int32_t[]){3, 1001}, betas[b], NULL);
        check(3, (int32_t[]){2, 5, 17}, betas[b], NULL);
        check(4, (int32_t[]){1, 4, 4, 21}, betas[b], NULL);
        check(2, (int32_t[]){5, 1}, betas[b], NULL);
        check(2, (int32_t[]){0, 8}, betas[b], NULL); /* empty */
        check(2, (int32_t[]){4, 0}, betas[b], NULL); /* empty rows */
    }
}

static void test_two_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    check(2, (int32_t[]){64, 1000}, 1.0f, pool);
    check(2, (int32_t[]){64, 1000}, 0.7f, pool);
    pthreadpool_destroy(pool);
}

/* Rows and then channels change between runs; the second change re-creates the operator. */
static void test_shape_change(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_SOFTMAX, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 10}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    const int32_t shapes[][2] = {{2, 10}, {7, 10}, {3, 33}, {3, 33}};
    for (int k = 0; k < 4; k++) {
        free(in->data);
        assert_true(mp_tensor_set_shape(in, 2, shapes[k]));
        in->data = calloc(1, in->bytes + 16);
        size_t n = mp_tensor_elements(in);
        for (size_t i = 0; i < n; i++)
            ((float *)in->data)[i] = rndf(-5.0f, 5.0f);
        assert_int_equal(kh_run(&c), MP_OK);
        assert_true(mp_tensor_same_shape(in, out));
        expect_softmax(in->data, out->data, (size_t)shapes[k][0], (size_t)shapes[k][1], 1.0);
    }
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_SOFTMAX, NULL);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_SHAPE);
    assert_non_null(strstr(c.err.msg, "'t0'"));
    assert_non_null(strstr(c.err.msg, "SOFTMAX"));
    kh_free(&c);

    kh_init(&c, MP_OP_SOFTMAX, NULL);
    kh_input(&c, MP_DT_UINT8, 2, (int32_t[]){1, 4}, NULL);
    kh_output(&c, MP_DT_UINT8);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "'t0'"));
    kh_free(&c);

    kh_init(&c, MP_OP_SOFTMAX, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, NULL);
    kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "'t1'"));
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_row),    cmocka_unit_test(test_shapes_and_betas),
        cmocka_unit_test(test_two_threads), cmocka_unit_test(test_shape_change),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
