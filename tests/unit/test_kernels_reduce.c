/* Tests of the MEAN kernel: hand-computed NHWC spatial means, a double-precision reference
 * over many shapes and axis sets (negative, duplicated, all, none, rank 8), keep_dims both
 * ways, axes deferred until their value is known, errors, reruns and a 2-thread pool. */
#include "tests/util/testutil.h"

#include <math.h>
#include <pthreadpool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static uint32_t g_seed = 99;
static float rndf(float lo, float hi)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return lo + (hi - lo) * (float)((g_seed >> 8) & 0xffff) / 65536.0f;
}

/* Reference: for every input element, add it (in double) to the output element whose index
 * is the input index with reduced dimensions set to 0; divide by the reduced count. */
static void ref_mean(int32_t rank, const int32_t *dims, const float *x, const bool *red,
                     double *y, size_t outputs)
{
    size_t n = 1, count = 1;
    for (int32_t i = 0; i < rank; i++) {
        n *= (size_t)dims[i];
        if (red[i])
            count *= (size_t)dims[i];
    }
    memset(y, 0, outputs * sizeof(double));
    for (size_t f = 0; f < n; f++) {
        size_t rem = f, idx[MP_MAX_RANK];
        for (int32_t i = rank - 1; i >= 0; i--) {
            idx[i] = rem % (size_t)dims[i];
            rem /= (size_t)dims[i];
        }
        size_t o = 0;
        for (int32_t i = 0; i < rank; i++)
            if (!red[i])
                o = o * (size_t)dims[i] + idx[i];
        y[o] += x[f];
    }
    for (size_t i = 0; i < outputs; i++)
        y[i] /= (double)count;
}

/* MEAN of a random input over `axes`; checks the output shape and values, then reruns. */
static void check(int32_t rank, const int32_t *dims, int32_t naxes, const int32_t *axes,
                  bool keep, pthreadpool_t pool)
{
    kh_case c;
    kh_init(&c, MP_OP_MEAN, pool);
    c.opt.keep_dims = keep;
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, rank, dims, NULL);
    int32_t axes_buf[16 + 4] = {0};
    if (naxes)
        memcpy(axes_buf, axes, sizeof(int32_t) * (size_t)naxes);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){naxes}, axes_buf);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    size_t n = mp_tensor_elements(in);
    for (size_t i = 0; i < n; i++)
        ((float *)in->data)[i] = rndf(-1.0f, 3.0f);
    mp_status st = kh_run(&c);
    if (st != MP_OK)
        fail_msg("%s", c.err.msg);

    bool red[MP_MAX_RANK] = {false};
    for (int32_t i = 0; i < naxes; i++)
        red[axes[i] < 0 ? axes[i] + rank : axes[i]] = true;
    int32_t want_rank = 0, want_dims[MP_MAX_RANK];
    size_t outputs = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (!red[i]) {
            want_dims[want_rank++] = dims[i];
            outputs *= (size_t)dims[i];
        } else if (keep) {
            want_dims[want_rank++] = 1;
        }
    }
    assert_int_equal(out->rank, want_rank);
    for (int32_t i = 0; i < want_rank; i++)
        assert_int_equal(out->dims[i], want_dims[i]);

    double *want = malloc(outputs * sizeof(double) + 8);
    float *wantf = malloc(outputs * sizeof(float) + 4);
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            for (size_t i = 0; i < n; i++)
                ((float *)in->data)[i] = rndf(-5.0f, 1.0f);
            assert_int_equal(kh_rerun(&c, false), MP_OK);
        }
        ref_mean(rank, dims, in->data, red, want, outputs);
        for (size_t i = 0; i < outputs; i++)
            wantf[i] = (float)want[i];
        size_t at = 0;
        double e = mp_test_max_rel_err(out->data, wantf, outputs, 1e-3, &at);
        if (e > 1e-5)
            fail_msg("rel err %g at %zu: got %.9g want %.9g", e, at,
                     (double)((float *)out->data)[at], want[at]);
    }
    free(want);
    free(wantf);
    kh_free(&c);
}

static void test_hand_spatial_mean(void **state)
{
    (void)state;
    /* [1,2,2,2] NHWC, mean over H and W: channel 0 = (1+3+5+7)/4, channel 1 = (2+4+6+12)/4 */
    static const int32_t axes[2 + 4] = {1, 2};
    for (int keep = 0; keep < 2; keep++) {
        kh_case c;
        kh_init(&c, MP_OP_MEAN, NULL);
        c.opt.keep_dims = keep;
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 2}, NULL);
        memcpy(in->data, (float[]){1, 2, 3, 4, 5, 6, 7, 12}, 8 * sizeof(float));
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, axes);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        if (keep) {
            assert_int_equal(out->rank, 4);
            assert_true(out->dims[0] == 1 && out->dims[1] == 1 && out->dims[2] == 1 &&
                        out->dims[3] == 2);
        } else {
            assert_int_equal(out->rank, 2);
            assert_true(out->dims[0] == 1 && out->dims[1] == 2);
        }
        const float *y = out->data;
        assert_true(y[0] == 4.0f && y[1] == 6.0f);
        kh_free(&c);
    }
    /* last axis of a [2,3]: rows (1,2,3) and (4,5,9) */
    kh_case c;
    kh_init(&c, MP_OP_MEAN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    memcpy(in->data, (float[]){1, 2, 3, 4, 5, 9}, 6 * sizeof(float));
    static const int32_t last[1 + 4] = {-1};
    kh_input(&c, MP_DT_INT32, 0, NULL, last); /* a scalar axis is allowed too */
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_int_equal(out->rank, 1);
    assert_true(((float *)out->data)[0] == 2.0f && ((float *)out->data)[1] == 6.0f);
    kh_free(&c);
}

static void test_shapes_and_axes(void **state)
{
    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        check(4, (int32_t[]){1, 7, 7, 1280}, 2, (int32_t[]){1, 2}, keep, NULL); /* MobileNet */
        check(4, (int32_t[]){2, 56, 56, 24}, 2, (int32_t[]){1, 2}, keep, NULL);
        check(4, (int32_t[]){2, 5, 6, 3}, 2, (int32_t[]){-3, -2}, keep, NULL); /* negative */
        check(4, (int32_t[]){2, 5, 6, 3}, 3, (int32_t[]){2, 1, 2}, keep, NULL); /* duplicated */
        check(3, (int32_t[]){4, 5, 6}, 1, (int32_t[]){2}, keep, NULL);          /* innermost */
        check(3, (int32_t[]){4, 5, 6}, 1, (int32_t[]){0}, keep, NULL);          /* outermost */
        check(3, (int32_t[]){4, 5, 6}, 2, (int32_t[]){0, 2}, keep, NULL);
        check(3, (int32_t[]){4, 5, 6}, 3, (int32_t[]){0, 1, 2}, keep, NULL);    /* all */
        check(3, (int32_t[]){4, 5, 6}, 0, NULL, keep, NULL);                    /* none */
        check(1, (int32_t[]){1000}, 1, (int32_t[]){0}, keep, NULL);
        check(8, (int32_t[]){2, 3, 1, 2, 3, 2, 1, 4}, 4, (int32_t[]){0, 2, 4, -1}, keep, NULL);
        check(8, (int32_t[]){2, 3, 2, 2, 3, 2, 2, 4}, 3, (int32_t[]){1, 3, 6}, keep, NULL);
        check(4, (int32_t[]){3, 1, 1, 5}, 2, (int32_t[]){1, 2}, keep, NULL);   /* unit dims */
        check(4, (int32_t[]){0, 4, 4, 3}, 2, (int32_t[]){1, 2}, keep, NULL);   /* empty output */
    }
}

static void test_empty_reduction_is_nan(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 0}, NULL);
    static const int32_t ax[1 + 4] = {1};
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], 3);
    assert_true(isnan(((float *)out->data)[0]));
    kh_free(&c);
}

static void test_int64_axes(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_MEAN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 2, 2}, NULL);
    memcpy(in->data, (float[]){1, 2, 3, 4, 5, 6, 7, 8}, 8 * sizeof(float));
    static const int64_t ax[1 + 2] = {0};
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){1}, ax);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    const float want[] = {3, 4, 5, 6};
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);
}

/* Axes computed at run time: infer defers until their value is known. */
static void test_deferred_axes(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_MEAN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, NULL);
    memcpy(in->data, (float[]){1, 2, 3, 4}, 4 * sizeof(float));
    mp_tensor *axes = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_false(axes->value_known);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    ((int32_t *)axes->data)[0] = 0;
    axes->value_known = true;
    assert_int_equal(kh_run(&c), MP_OK);
    const float want[] = {2, 3};
    assert_int_equal(out->rank, 1);
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);
}

static void test_two_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    check(4, (int32_t[]){4, 14, 14, 96}, 2, (int32_t[]){1, 2}, true, pool);
    pthreadpool_destroy(pool);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    static const int32_t bad[1 + 4] = {3};
    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 3, 4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, bad);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_SHAPE);
    assert_non_null(strstr(c.err.msg, "axis 3"));
    assert_non_null(strstr(c.err.msg, "'t1'"));
    assert_non_null(strstr(c.err.msg, "[2,3,4]"));
    assert_non_null(strstr(c.err.msg, "MEAN"));
    kh_free(&c);

    static const int32_t neg[1 + 4] = {-4};
    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 3, 4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, neg);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_SHAPE);
    kh_free(&c);

    static const float fax[1 + 4] = {1};
    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 3, 4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, fax);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "'t1'"));
    kh_free(&c);

    static const int32_t ok[1 + 4] = {1};
    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_INT8, 3, (int32_t[]){2, 3, 4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ok);
    kh_output(&c, MP_DT_INT8);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "'t0'"));
    kh_free(&c);

    kh_init(&c, MP_OP_MEAN, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 3, 4}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 1}, ok);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_SHAPE);
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_spatial_mean), cmocka_unit_test(test_shapes_and_axes),
        cmocka_unit_test(test_empty_reduction_is_nan), cmocka_unit_test(test_int64_axes),
        cmocka_unit_test(test_deferred_axes),     cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
