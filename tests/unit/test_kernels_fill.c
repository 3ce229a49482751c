/* Tests of the generated-tensor kernels (fill.c): ZEROS_LIKE, FILL and RANGE, with hand-
 * computed values, shapes known at prepare (constant inputs) and deferred until the values
 * exist (MP_ERR_DEFERRED, then infer again once they are known, as the session does while
 * running), and errors with messages. */
#include "tests/util/testutil.h"

#include <math.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static void test_zeros_like(void **state)
{
    (void)state;
    static const mp_dtype dts[3] = {MP_DT_FLOAT32, MP_DT_INT32, MP_DT_INT64};
    for (int k = 0; k < 3; k++) {
        kh_case c;
        kh_init(&c, MP_OP_ZEROS_LIKE, NULL);
        mp_tensor *in = kh_input(&c, dts[k], 2, (int32_t[]){3, 5}, NULL);
        kh_fill_bytes(in, 7);
        mp_tensor *out = kh_output(&c, dts[k]);
        kh_expect_ok(&c, kh_run(&c));
        memset(out->data, 0x5a, out->bytes); /* run again over garbage */
        kh_expect_ok(&c, kh_rerun(&c, false));
        assert_int_equal(out->rank, 2);
        assert_int_equal(out->dims[1], 5);
        for (size_t i = 0; i < out->bytes; i++)
            assert_int_equal(((uint8_t *)out->data)[i], 0);
        kh_free(&c);
    }
    assert_true(mp_kernel_find(MP_OP_ZEROS_LIKE)->reads_shapes_only);
}

static void test_fill(void **state)
{
    (void)state;
    kh_case c;
    /* dims {2,3} (int32), value 7.5 -> [2,3] of 7.5 */
    static const float v75 = 7.5f;
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){2, 3});
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &v75);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 2);
    assert_int_equal(out->dims[1], 3);
    assert_memory_equal(out->data, ((float[]){7.5f, 7.5f, 7.5f, 7.5f, 7.5f, 7.5f}), 24);
    kh_free(&c);
    /* int64 dims {5}, bool value true; int64 value in 7 elements (odd: the doubling copy's
     * last piece is partial) */
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){1}, (int64_t[]){5});
    kh_input(&c, MP_DT_BOOL, 0, NULL, (uint8_t[]){1});
    out = kh_output(&c, MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){1, 1, 1, 1, 1}), 5);
    kh_free(&c);
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){7});
    kh_input(&c, MP_DT_INT64, 0, NULL, (int64_t[]){-(3LL << 40)});
    out = kh_output(&c, MP_DT_INT64);
    kh_expect_ok(&c, kh_run(&c));
    for (int i = 0; i < 7; i++)
        assert_true(((int64_t *)out->data)[i] == -(3LL << 40));
    kh_free(&c);
    /* a zero dimension: an empty output */
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){0, 4});
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &v75);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(mp_tensor_elements(out), 0);
    kh_free(&c);
}

/* dims computed while running: deferred at prepare, then the shape once the value is known;
 * a value known only while running is read by run (not infer). */
static void test_fill_deferred(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_FILL, NULL);
    mp_tensor *dims = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, NULL);
    mp_tensor *value = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    memcpy(dims->data, (int32_t[]){1, 2, 2}, 12);
    dims->value_known = true;
    *(int32_t *)value->data = -9;
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 3);
    assert_memory_equal(out->dims, ((int32_t[]){1, 2, 2}), 12);
    assert_memory_equal(out->data, ((int32_t[]){-9, -9, -9, -9}), 16);
    kh_free(&c);
}

static void range_case(kh_case *c, mp_dtype dt, const void *start, const void *limit,
                       const void *delta)
{
    kh_init(c, MP_OP_RANGE, NULL);
    kh_input(c, dt, 0, NULL, start);
    kh_input(c, dt, 0, NULL, limit);
    kh_input(c, dt, 0, NULL, delta);
    kh_output(c, dt);
}

static void test_range(void **state)
{
    (void)state;
    kh_case c;
    /* 0..5 step 1: 0 1 2 3 4 */
    range_case(&c, MP_DT_INT32, (int32_t[]){0}, (int32_t[]){5}, (int32_t[]){1});
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->dims[0], 5);
    assert_memory_equal(c.out[0]->data, ((int32_t[]){0, 1, 2, 3, 4}), 20);
    kh_free(&c);
    /* 10 down to 1 step -3: ceil(9 / 3) = 3 elements 10 7 4 */
    range_case(&c, MP_DT_INT32, (int32_t[]){10}, (int32_t[]){1}, (int32_t[]){-3});
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->dims[0], 3);
    assert_memory_equal(c.out[0]->data, ((int32_t[]){10, 7, 4}), 12);
    kh_free(&c);
    /* int64 beyond int32: from 2^40 to 2^40 + 10 step 4: ceil(10 / 4) = 3 */
    range_case(&c, MP_DT_INT64, (int64_t[]){1LL << 40}, (int64_t[]){(1LL << 40) + 10},
               (int64_t[]){4});
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(c.out[0]->data,
                        ((int64_t[]){1LL << 40, (1LL << 40) + 4, (1LL << 40) + 8}), 24);
    kh_free(&c);
    /* float 0 to 1 step 0.3: ceil(3.33) = 4 elements, accumulated in float: 0, 0.3,
     * 0.3f + 0.3f, (0.3f + 0.3f) + 0.3f */
    range_case(&c, MP_DT_FLOAT32, (float[]){0}, (float[]){1}, (float[]){0.3f});
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->dims[0], 4);
    volatile float acc = 0.3f;
    float want[4] = {0, 0.3f, 0, 0};
    acc = acc + 0.3f;
    want[2] = acc;
    acc = acc + 0.3f;
    want[3] = acc;
    assert_memory_equal(c.out[0]->data, want, 16);
    kh_free(&c);
    /* start == limit: empty */
    range_case(&c, MP_DT_INT32, (int32_t[]){3}, (int32_t[]){3}, (int32_t[]){1});
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->rank, 1);
    assert_int_equal(c.out[0]->dims[0], 0);
    kh_free(&c);
}

/* start, limit, delta computed while running: deferred, then the length from the values */
static void test_range_deferred(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_RANGE, NULL);
    static const int32_t delta = 2;
    mp_tensor *t[3];
    for (int i = 0; i < 3; i++)
        t[i] = kh_input(&c, MP_DT_INT32, 0, NULL, i == 2 ? &delta : NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    *(int32_t *)t[0]->data = -3;
    *(int32_t *)t[1]->data = 4;
    t[0]->value_known = t[1]->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 4); /* ceil(7 / 2) */
    assert_memory_equal(out->data, ((int32_t[]){-3, -1, 1, 3}), 16);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    /* FILL: a negative dimension; dims not a vector; a value that is not a scalar; the
     * output's dtype not the value's */
    static const float v = 1;
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){2, -1});
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &v);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "dimension 1 of 't0' is -1");
    kh_free(&c);
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, &v);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &v);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "int32 or int64 vector");
    kh_free(&c);
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){1});
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, &v);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "must be a scalar");
    kh_free(&c);
    kh_init(&c, MP_OP_FILL, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, (int32_t[]){1});
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &v);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't2' is i32");
    kh_free(&c);
    /* RANGE: delta 0; a delta pointing away from the limit; mixed dtypes */
    range_case(&c, MP_DT_INT32, (int32_t[]){0}, (int32_t[]){5}, (int32_t[]){0});
    kh_expect_error(&c, MP_ERR_ARG, "delta 't2' is 0");
    kh_free(&c);
    range_case(&c, MP_DT_FLOAT32, (float[]){0}, (float[]){5}, (float[]){-1});
    kh_expect_error(&c, MP_ERR_ARG, "points away from limit");
    kh_free(&c);
    kh_init(&c, MP_OP_RANGE, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, (int32_t[]){0});
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &v);
    kh_input(&c, MP_DT_INT32, 0, NULL, (int32_t[]){1});
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "limit 't1' is f32 but start 't0' is i32");
    kh_free(&c);
    /* ZEROS_LIKE on a dtype TensorFlow Lite does not take */
    kh_init(&c, MP_OP_ZEROS_LIKE, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, i32, i64");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zeros_like), cmocka_unit_test(test_fill),
        cmocka_unit_test(test_fill_deferred), cmocka_unit_test(test_range),
        cmocka_unit_test(test_range_deferred), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
