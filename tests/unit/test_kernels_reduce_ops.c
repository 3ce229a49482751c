/* Tests of the reducers beside MEAN (SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD), ARG_MAX /
 * ARG_MIN and L2_NORMALIZATION: hand cases, references written from the definitions over
 * random shapes and axis sets (negative, repeated, none) with keep_dims both ways, integer
 * dtypes, empty reductions (the identities), ties and output dtypes of ARG_MAX, deferred axes,
 * and errors with messages. */
#include "tests/util/testutil.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static void test_hand(void **state)
{
    (void)state;
    /* [2,3] {{1,-2,3},{4,5,-6}} over axis 1: sum {2,3}, max {3,5}, min {-2,-6},
     * prod {-6,-120}; over axes {0,1} kept: sum {{5}} */
    static const int32_t ax1[1] = {1}, ax01[2] = {0, -1};
    const int32_t ops[4] = {MP_OP_SUM, MP_OP_REDUCE_MAX, MP_OP_REDUCE_MIN, MP_OP_REDUCE_PROD};
    const float want[4][2] = {{2, 3}, {3, 5}, {-2, -6}, {-6, -120}};
    for (int o = 0; o < 4; o++) {
        kh_case c;
        kh_init(&c, ops[o], NULL);
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
        memcpy(in->data, (float[]){1, -2, 3, 4, 5, -6}, 6 * sizeof(float));
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax1);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        assert_true(out->rank == 1 && out->dims[0] == 2);
        assert_memory_equal(out->data, want[o], sizeof want[o]);
        kh_free(&c);
    }
    kh_case c;
    kh_init(&c, MP_OP_SUM, NULL);
    c.opt.keep_dims = true;
    mp_tensor *in = kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 3}, NULL);
    memcpy(in->data, (int32_t[]){1, -2, 3, 4, 5, -6}, 6 * sizeof(int32_t));
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, ax01);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(out->rank == 2 && out->dims[0] == 1 && out->dims[1] == 1);
    assert_int_equal(((int32_t *)out->data)[0], 5);
    kh_free(&c);
}

/* Reference over doubles: out[o] = op over the input elements that map to o. */
static double ref_apply(int32_t op, double acc, double x)
{
    switch (op) {
    case MP_OP_SUM: return acc + x;
    case MP_OP_REDUCE_PROD: return acc * x;
    case MP_OP_REDUCE_MAX: return x > acc ? x : acc;
    default: return x < acc ? x : acc;
    }
}

static void test_random(void **state)
{
    (void)state;
    uint32_t seed = 21;
    const int32_t ops[4] = {MP_OP_SUM, MP_OP_REDUCE_MAX, MP_OP_REDUCE_MIN, MP_OP_REDUCE_PROD};
    for (int trial = 0; trial < 400; trial++) {
        int32_t op = ops[trial % 4];
        bool keep = (trial / 4) & 1;
        mp_dtype dt = (trial / 8) % 3 == 0 ? MP_DT_FLOAT32
                      : (trial / 8) % 3 == 1 ? MP_DT_INT32 : MP_DT_INT64;
        if ((op == MP_OP_REDUCE_MAX || op == MP_OP_REDUCE_MIN) && trial % 5 == 0)
            dt = MP_DT_INT8;
        int32_t rank = 1 + kh_irand(&seed, 5), dims[5], naxes = kh_irand(&seed, 4), axes[4];
        bool red[5] = {false};
        for (int32_t i = 0; i < rank; i++)
            dims[i] = kh_irand(&seed, 4) + (trial % 17 == 0 ? 0 : 1); /* sometimes empty */
        for (int32_t i = 0; i < naxes; i++) {
            int32_t a = kh_irand(&seed, rank);
            red[a] = true;
            axes[i] = kh_irand(&seed, 2) ? a - rank : a;
        }
        kh_case c;
        kh_init(&c, op, NULL);
        c.opt.keep_dims = keep;
        mp_tensor *in = kh_input(&c, dt, rank, dims, NULL);
        size_t n = mp_tensor_elements(in);
        double *x = malloc((n + 1) * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            /* products stay exact: small integers, floats near 1 */
            int v = kh_irand(&seed, 7) - 3;
            switch (dt) {
            case MP_DT_FLOAT32:
                ((float *)in->data)[i] =
                    op == MP_OP_REDUCE_PROD ? 1.0f + 0.125f * (float)v : (float)v * 0.75f;
                x[i] = ((float *)in->data)[i];
                break;
            case MP_DT_INT32: ((int32_t *)in->data)[i] = v; x[i] = v; break;
            case MP_DT_INT64: ((int64_t *)in->data)[i] = v; x[i] = v; break;
            default: ((int8_t *)in->data)[i] = (int8_t)(v * 40); x[i] = v * 40; break;
            }
        }
        mp_tensor *ax = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){naxes}, NULL);
        memcpy(ax->data, axes, sizeof(int32_t) * (size_t)naxes);
        mp_tensor *out = kh_output(&c, dt);
        /* axes computed at run time: deferred until known */
        assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
        ax->value_known = true;
        kh_expect_ok(&c, kh_run(&c));
        int32_t r = 0;
        size_t outputs = 1;
        for (int32_t i = 0; i < rank; i++)
            if (!red[i] || keep) {
                assert_int_equal(out->dims[r], red[i] ? 1 : dims[i]);
                r++;
                outputs *= red[i] ? 1 : (size_t)dims[i];
            }
        assert_int_equal(out->rank, r);
        double lowest = dt == MP_DT_FLOAT32 ? -FLT_MAX : dt == MP_DT_INT32 ? INT32_MIN
                        : dt == MP_DT_INT64 ? (double)INT64_MIN : INT8_MIN;
        double highest = dt == MP_DT_FLOAT32 ? FLT_MAX : dt == MP_DT_INT32 ? INT32_MAX
                         : dt == MP_DT_INT64 ? (double)INT64_MAX : INT8_MAX;
        double init = op == MP_OP_SUM ? 0 : op == MP_OP_REDUCE_PROD ? 1
                      : op == MP_OP_REDUCE_MAX ? lowest : highest;
        double *want = malloc((outputs + 1) * sizeof(double));
        for (size_t i = 0; i < outputs; i++)
            want[i] = init;
        for (size_t f = 0; f < n; f++) {
            size_t rem = f, idx[5], o = 0;
            for (int32_t i = rank - 1; i >= 0; i--) {
                idx[i] = rem % (size_t)dims[i];
                rem /= (size_t)dims[i];
            }
            for (int32_t i = 0; i < rank; i++)
                if (!red[i])
                    o = o * (size_t)dims[i] + idx[i];
            want[o] = ref_apply(op, want[o], x[f]);
        }
        for (size_t i = 0; i < outputs; i++) {
            double got = dt == MP_DT_FLOAT32 ? ((float *)out->data)[i]
                         : dt == MP_DT_INT32 ? ((int32_t *)out->data)[i]
                         : dt == MP_DT_INT64 ? (double)((int64_t *)out->data)[i]
                                             : ((int8_t *)out->data)[i];
            double w = dt == MP_DT_FLOAT32 ? (double)(float)want[i] : want[i];
            if (!(fabs(got - w) <= 1e-6 * fabs(w)))
                fail_msg("trial %d op %d: out[%zu] = %.9g, want %.9g", trial, op, i, got, w);
        }
        free(want);
        free(x);
        kh_free(&c);
    }
}

static void test_reduce_errors(void **state)
{
    (void)state;
    static const int32_t ax[1] = {2};
    kh_case c;
    kh_init(&c, MP_OP_REDUCE_MAX, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "axis 2 in 't1' is out of range");
    assert_non_null(strstr(c.err.msg, "REDUCE_MAX"));
    kh_free(&c);
    /* a uint8 product is not supported (quantized int8 / int16: test_kernels_reduce_q); a
     * max may not change parameters */
    static const int32_t ax0[1] = {0};
    static const float s1 = 0.5f, s2 = 1.0f;
    static const int64_t z = 0;
    kh_init(&c, MP_OP_REDUCE_PROD, NULL);
    kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    kh_output(&c, MP_DT_UINT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "(supported: f32, i32, i64, i8, i16)");
    kh_free(&c);
    /* int8 without quantization: an integer product, wrapping (EvalGeneric):
     * 7 * -3 * 11 = -231, 25 in 8 bits */
    kh_init(&c, MP_OP_REDUCE_PROD, NULL);
    kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, (int8_t[]){7, -3, 11});
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    mp_tensor *p8 = kh_output(&c, MP_DT_INT8);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((int8_t *)p8->data)[0], 25);
    kh_free(&c);
    kh_init(&c, MP_OP_REDUCE_MIN, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, ax0);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, in, 1, &s1, &z, 0);
    kh_quant(&c, out, 1, &s2, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, NULL);
    kh_free(&c);
}

static void test_arg(void **state)
{
    (void)state;
    /* [2,4] {{1,7,7,0},{-1,-3,9,-3}}: argmax axis 1 = {1,2} (first of the tied 7s), argmin
     * axis 1 = {3,1} (first of the tied -3s); argmax axis -2 (down the columns) = {0,0,1,0} */
    static const int32_t a1[1] = {1};
    static const int64_t am2[1] = {-2};
    const float x[8] = {1, 7, 7, 0, -1, -3, 9, -3};
    struct { int32_t op; const void *axis; mp_dtype axt, outt; int32_t out_type; int64_t want[4];
             int32_t n; } cases[] = {
        {MP_OP_ARG_MAX, a1, MP_DT_INT32, MP_DT_INT32, -1, {1, 2}, 2},
        {MP_OP_ARG_MIN, a1, MP_DT_INT32, MP_DT_INT64, MP_DT_INT64, {3, 1}, 2},
        {MP_OP_ARG_MAX, am2, MP_DT_INT64, MP_DT_INT64, -1, {0, 0, 1, 0}, 4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kh_case c;
        kh_init(&c, cases[k].op, NULL);
        c.opt.out_type = cases[k].out_type;
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 4}, NULL);
        memcpy(in->data, x, sizeof x);
        kh_input(&c, cases[k].axt, 1, (int32_t[]){1}, cases[k].axis);
        mp_tensor *out = kh_output(&c, cases[k].outt);
        kh_expect_ok(&c, kh_run(&c));
        assert_true(out->rank == 1 && out->dims[0] == cases[k].n);
        for (int32_t i = 0; i < cases[k].n; i++) {
            int64_t got = cases[k].outt == MP_DT_INT64 ? ((int64_t *)out->data)[i]
                                                      : ((int32_t *)out->data)[i];
            assert_int_equal(got, cases[k].want[i]);
        }
        kh_free(&c);
    }
    /* random int8 / uint8 inputs against a first-best scan */
    uint32_t seed = 4;
    for (int trial = 0; trial < 100; trial++) {
        int32_t rank = 1 + kh_irand(&seed, 4), dims[4], axis = 0;
        for (int32_t i = 0; i < rank; i++)
            dims[i] = 1 + kh_irand(&seed, 4);
        axis = kh_irand(&seed, rank);
        mp_dtype dt = trial & 1 ? MP_DT_UINT8 : MP_DT_INT8;
        kh_case c;
        kh_init(&c, trial & 2 ? MP_OP_ARG_MAX : MP_OP_ARG_MIN, NULL);
        mp_tensor *in = kh_input(&c, dt, rank, dims, NULL);
        kh_fill_bytes(in, (unsigned)trial * 7u);
        mp_tensor *ax = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
        *(int32_t *)ax->data = axis;
        mp_tensor *out = kh_output(&c, MP_DT_INT32);
        assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
        ax->value_known = true;
        kh_expect_ok(&c, kh_run(&c));
        size_t outer = 1, inner = 1;
        for (int32_t i = 0; i < axis; i++)
            outer *= (size_t)dims[i];
        for (int32_t i = axis + 1; i < rank; i++)
            inner *= (size_t)dims[i];
        for (size_t o = 0; o < outer; o++)
            for (size_t q = 0; q < inner; q++) {
                int best = 0, bv = 0;
                for (int i = 0; i < dims[axis]; i++) {
                    size_t f = (o * (size_t)dims[axis] + (size_t)i) * inner + q;
                    int v = dt == MP_DT_INT8 ? ((int8_t *)in->data)[f] : ((uint8_t *)in->data)[f];
                    if (i == 0 || (c.node.opcode == MP_OP_ARG_MAX ? v > bv : v < bv)) {
                        bv = v;
                        best = i;
                    }
                }
                assert_int_equal(((int32_t *)out->data)[o * inner + q], best);
            }
        kh_free(&c);
    }
    /* output dtype disagreeing with output_type; a float output */
    kh_case c;
    kh_init(&c, MP_OP_ARG_MAX, NULL);
    c.opt.out_type = MP_DT_INT64;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, a1);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "output_type i64 but output 't2' is i32");
    kh_free(&c);
    kh_init(&c, MP_OP_ARG_MIN, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, a1);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "expected i32 or i64");
    kh_free(&c);
}

static void test_l2norm(void **state)
{
    (void)state;
    /* rows {3,4} -> {0.6,0.8}; {0,0} -> {0,0} (norm clamped to 1e-6); {1e-7, 0}: the norm
     * 1e-7 is below the epsilon, so 1e-7 / 1e-6 = 0.1 (the epsilon bounds the norm, not its
     * square: on the square it would give 1e-7 / 1e-3 = 1e-4) */
    kh_case c;
    kh_init(&c, MP_OP_L2_NORMALIZATION, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    memcpy(in->data, (float[]){3, 4, 0, 0, 1e-7f, 0}, 6 * sizeof(float));
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    const float want[6] = {0.6f, 0.8f, 0, 0, 0.1f, 0};
    kh_expect_close(out->data, want, 6, 1e-6);
    kh_free(&c);
    /* random rows against x / max(sqrt(sum x^2), 1e-6) in double */
    uint32_t seed = 8;
    for (int trial = 0; trial < 30; trial++) {
        int32_t dims[3] = {1 + kh_irand(&seed, 3), 1 + kh_irand(&seed, 4), 1 + kh_irand(&seed, 40)};
        kh_init(&c, MP_OP_L2_NORMALIZATION, NULL);
        in = kh_input(&c, MP_DT_FLOAT32, 3, dims, NULL);
        size_t n = mp_tensor_elements(in), depth = (size_t)dims[2];
        kh_fill(in->data, n, (uint32_t)trial, 3.0f);
        out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        float *w = malloc(n * sizeof(float));
        const float *x = in->data;
        for (size_t r = 0; r < n / depth; r++) {
            double s = 0;
            for (size_t k = 0; k < depth; k++)
                s += (double)x[r * depth + k] * x[r * depth + k];
            double norm = fmax(sqrt(s), 1e-6);
            for (size_t k = 0; k < depth; k++)
                w[r * depth + k] = (float)(x[r * depth + k] / norm);
        }
        kh_expect_close(out->data, w, n, 1e-3);
        free(w);
        kh_free(&c);
    }
    kh_init(&c, MP_OP_L2_NORMALIZATION, NULL);
    c.opt.activation = MP_ACT_RELU;
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "only NONE");
    kh_free(&c);
    kh_init(&c, MP_OP_L2_NORMALIZATION, NULL); /* 8-bit: test_kernels_l2norm_q */
    kh_input(&c, MP_DT_INT16, 1, (int32_t[]){2}, NULL);
    kh_output(&c, MP_DT_INT16);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "has dtype i16 (supported: f32, i8, u8)");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_reduce_errors),
        cmocka_unit_test(test_arg),
        cmocka_unit_test(test_l2norm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
