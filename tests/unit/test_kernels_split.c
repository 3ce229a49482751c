/* Tests of SPLIT and SPLIT_V: hand cases with several outputs (float32, int8, uint8, int32),
 * negative axes, SPLIT_V's -1 size, random shapes against a reference that reads every
 * element by its coordinates, an axis known only while running (deferred), and the errors
 * (uneven split, num_splits against the outputs, bad sizes, dtypes, axis range). */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static uint32_t g_seed = 31337;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

/* SPLIT of float32 [2,6] along axis 1 (given as -1) into 3: rows {0..5} and {6..11} give
 * {0,1,6,7}, {2,3,8,9}, {4,5,10,11}. */
static void test_split_hand(void **state)
{
    (void)state;
    static const int32_t axis[1] = {-1};
    kh_case c;
    kh_init(&c, MP_OP_SPLIT, NULL);
    c.opt.num_splits = 3;
    kh_input(&c, MP_DT_INT32, 0, NULL, axis);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 6}, NULL);
    mp_tensor *out[3];
    for (int j = 0; j < 3; j++)
        out[j] = kh_output(&c, MP_DT_FLOAT32);
    for (int i = 0; i < 12; i++)
        ((float *)in->data)[i] = (float)i;
    kh_expect_ok(&c, kh_run(&c));
    const float want[3][4] = {{0, 1, 6, 7}, {2, 3, 8, 9}, {4, 5, 10, 11}};
    for (int j = 0; j < 3; j++) {
        assert_int_equal(out[j]->rank, 2);
        assert_int_equal(out[j]->dims[0], 2);
        assert_int_equal(out[j]->dims[1], 2);
        assert_memory_equal(out[j]->data, want[j], sizeof want[j]);
    }
    kh_free(&c);
}

/* SPLIT_V of int8 [5,2] along axis 0 with sizes {1, -1, 2}: the -1 is 5 - 3 = 2; outputs
 * rows {0}, {1,2}, {3,4}; quantized values move unchanged. */
static void test_split_v_hand(void **state)
{
    (void)state;
    static const int32_t sizes[3] = {1, -1, 2}, axis[1] = {0};
    kh_case c;
    kh_init(&c, MP_OP_SPLIT_V, NULL);
    c.opt.num_splits = 3;
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){5, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, sizes);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, axis);
    float s = 0.5f;
    int64_t z = -3;
    kh_quant(&c, in, 1, &s, &z, 0);
    mp_tensor *out[3];
    for (int j = 0; j < 3; j++) {
        out[j] = kh_output(&c, MP_DT_INT8);
        kh_quant(&c, out[j], 1, &s, &z, 0);
    }
    for (int i = 0; i < 10; i++)
        ((int8_t *)in->data)[i] = (int8_t)(i * 25 - 128);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out[0]->dims[0], 1);
    assert_int_equal(out[1]->dims[0], 2);
    assert_int_equal(out[2]->dims[0], 2);
    assert_memory_equal(out[0]->data, in->data, 2);
    assert_memory_equal(out[1]->data, (int8_t *)in->data + 2, 4);
    assert_memory_equal(out[2]->data, (int8_t *)in->data + 6, 4);
    kh_free(&c);
}

/* Random shapes, axes, dtypes and part counts for both operators. Reference: output j,
 * coordinate x holds the input at x with x[axis] shifted by the parts before j. */
static void test_random(void **state)
{
    (void)state;
    const mp_dtype types[] = {MP_DT_FLOAT32, MP_DT_INT32, MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16,
                              MP_DT_INT64};
    for (int trial = 0; trial < 200; trial++) {
        bool v = trial % 2;
        mp_dtype dt = types[rnd() % 6];
        size_t es = mp_dtype_size(dt);
        int32_t rank = 1 + (int32_t)(rnd() % 4), dims[4];
        int32_t axis = (int32_t)(rnd() % (uint32_t)rank);
        int32_t parts = 1 + (int32_t)(rnd() % 5), size[5];
        for (int32_t d = 0; d < rank; d++)
            dims[d] = 1 + (int32_t)(rnd() % 4);
        if (v) {
            dims[axis] = 0;
            for (int32_t j = 0; j < parts; j++)
                dims[axis] += size[j] = (int32_t)(rnd() % 4);
        } else {
            dims[axis] = parts * (1 + (int32_t)(rnd() % 3));
            for (int32_t j = 0; j < parts; j++)
                size[j] = dims[axis] / parts;
        }
        int32_t sizes_in[5], axis_in[1] = {rnd() % 2 ? axis - rank : axis};
        memcpy(sizes_in, size, sizeof size);
        if (v && rnd() % 2)
            sizes_in[rnd() % (uint32_t)parts] = -1;
        kh_case c;
        kh_init(&c, v ? MP_OP_SPLIT_V : MP_OP_SPLIT, NULL);
        c.opt.num_splits = parts;
        mp_tensor *in;
        if (v) {
            in = kh_input(&c, dt, rank, dims, NULL);
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){parts}, sizes_in);
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, axis_in);
        } else {
            kh_input(&c, MP_DT_INT32, 0, NULL, axis_in);
            in = kh_input(&c, dt, rank, dims, NULL);
        }
        kh_fill_bytes(in, (unsigned)trial);
        mp_tensor *out[5];
        for (int32_t j = 0; j < parts; j++)
            out[j] = kh_output(&c, dt);
        kh_expect_ok(&c, kh_run(&c));
        size_t n = mp_tensor_elements(in);
        for (size_t f = 0; f < n; f++) {
            int32_t x[4];
            size_t rem = f;
            for (int32_t d = rank - 1; d >= 0; d--) {
                x[d] = (int32_t)(rem % (size_t)dims[d]);
                rem /= (size_t)dims[d];
            }
            int32_t j = 0;
            while (x[axis] >= size[j]) {
                x[axis] -= size[j];
                j++;
            }
            size_t g = 0;
            for (int32_t d = 0; d < rank; d++)
                g = g * (size_t)out[j]->dims[d] + (size_t)x[d];
            if (memcmp((uint8_t *)out[j]->data + g * es, (uint8_t *)in->data + f * es, es))
                fail_msg("trial %d: element %zu of the input is not at %zu of output %d", trial,
                         f, g, j);
        }
        kh_free(&c);
    }
}

/* An axis computed while running: infer defers, then works once the value is known. */
static void test_deferred_axis(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_SPLIT, NULL);
    c.opt.num_splits = 2;
    mp_tensor *ax = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){4}, NULL);
    mp_tensor *o0 = kh_output(&c, MP_DT_UINT8), *o1 = kh_output(&c, MP_DT_UINT8);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    *(int32_t *)ax->data = 0;
    ax->value_known = true;
    memcpy(in->data, (uint8_t[]){1, 2, 3, 4}, 4);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(o0->data, ((uint8_t[]){1, 2}), 2);
    assert_memory_equal(o1->data, ((uint8_t[]){3, 4}), 2);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    static const int32_t ax0[1] = {0}, ax5[1] = {5};
    static const int32_t two_rest[2] = {-1, -1}, too_many[2] = {3, 3}, neg[2] = {-2, 8};
    kh_case c;
    /* uneven */
    kh_init(&c, MP_OP_SPLIT, NULL);
    c.opt.num_splits = 2;
    kh_input(&c, MP_DT_INT32, 0, NULL, ax0);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){5}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "does not split into 2 equal parts");
    kh_free(&c);
    /* num_splits against the outputs */
    kh_init(&c, MP_OP_SPLIT, NULL);
    c.opt.num_splits = 3;
    kh_input(&c, MP_DT_INT32, 0, NULL, ax0);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){6}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "num_splits is 3 but the operator has 2 outputs");
    kh_free(&c);
    /* axis out of range */
    kh_init(&c, MP_OP_SPLIT, NULL);
    c.opt.num_splits = 1;
    kh_input(&c, MP_DT_INT32, 0, NULL, ax5);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "axis 5 out of range for 't1' [2,2]");
    kh_free(&c);
    /* dtype */
    kh_init(&c, MP_OP_SPLIT, NULL);
    c.opt.num_splits = 1;
    kh_input(&c, MP_DT_INT32, 0, NULL, ax0);
    kh_input(&c, MP_DT_BOOL, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't1' has dtype bool");
    kh_free(&c);
    /* output dtype */
    kh_init(&c, MP_OP_SPLIT, NULL);
    c.opt.num_splits = 1;
    kh_input(&c, MP_DT_INT32, 0, NULL, ax0);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output 't2' is u8 but input 't1' is i8");
    kh_free(&c);
    /* SPLIT_V: two -1, sizes that do not add up, a negative size */
    const int32_t *bad[3] = {two_rest, too_many, neg};
    const char *msg[3] = {"is not valid", "add up to 6", "is not valid"};
    for (int k = 0; k < 3; k++) {
        kh_init(&c, MP_OP_SPLIT_V, NULL);
        c.opt.num_splits = 2;
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){5}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, bad[k]);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
        kh_output(&c, MP_DT_FLOAT32);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, MP_ERR_SHAPE, msg[k]);
        kh_free(&c);
    }
    /* SPLIT_V: size_splits of another length than the outputs */
    kh_init(&c, MP_OP_SPLIT_V, NULL);
    c.opt.num_splits = 1;
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){6}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, too_many);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "must be an int32 vector of 1 sizes");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_hand),    cmocka_unit_test(test_split_v_hand),
        cmocka_unit_test(test_random),        cmocka_unit_test(test_deferred_axis),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
