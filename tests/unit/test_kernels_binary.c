/* Tests of the binary arithmetic kernels (ADD, SUB, MUL, DIV, FLOOR_MOD): hand-computed
 * cases, a naive broadcasting reference over many shapes, every fused activation, integer
 * semantics (truncating DIV, Python-style FLOOR_MOD, wrap-around, division by zero), shape
 * errors, reruns, shape changes and a 2-thread pool. */
#include "tests/util/testutil.h"

#include <limits.h>
#include <math.h>
#include <pthreadpool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static const int32_t k_ops[] = {MP_OP_ADD, MP_OP_SUB, MP_OP_MUL, MP_OP_DIV, MP_OP_FLOOR_MOD};

static size_t numel(int32_t rank, const int32_t *dims)
{
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

static uint32_t g_seed = 12345;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return g_seed >> 8;
}
/* Uniform in [lo, hi). */
static float rndf(float lo, float hi)
{
    return lo + (hi - lo) * (float)(rnd() & 0xffff) / 65536.0f;
}

/* Values for input b that keep DIV / FLOOR_MOD away from zero divisors. */
static void fill_f32(float *p, size_t n, bool divisor)
{
    for (size_t i = 0; i < n; i++) {
        if (divisor) {
            float v = rndf(0.5f, 3.0f);
            p[i] = (rnd() & 1) ? v : -v;
        } else {
            p[i] = rndf(-4.0f, 4.0f);
        }
    }
}

/* ---- naive reference ---------------------------------------------------------------- */

/* Offset into an input of rank `r` for the output multi-index `oi` of rank `ro`. */
static size_t bcast_offset(int32_t ro, const size_t *oi, int32_t r, const int32_t *dims)
{
    size_t off = 0;
    for (int32_t i = 0; i < r; i++) {
        size_t idx = dims[i] == 1 ? 0 : oi[ro - r + i];
        off = off * (size_t)dims[i] + idx;
    }
    return off;
}

static void unravel(size_t flat, int32_t r, const int32_t *dims, size_t *oi)
{
    for (int32_t i = r - 1; i >= 0; i--) {
        oi[i] = flat % (size_t)dims[i];
        flat /= (size_t)dims[i];
    }
}

static float ref_op_f32(int32_t op, float x, float w)
{
    switch (op) {
    case MP_OP_ADD: return x + w;
    case MP_OP_SUB: return x - w;
    case MP_OP_MUL: return x * w;
    case MP_OP_DIV: return x / w;
    default: {
        /* floor modulo from the definition: x - floor(x / w) * w, in double */
        double q = floor((double)x / (double)w);
        return (float)((double)x - q * (double)w);
    }
    }
}

static float ref_act(float v, int32_t act)
{
    switch (act) {
    case MP_ACT_RELU: return v < 0 ? 0 : v;
    case MP_ACT_RELU6: return v < 0 ? 0 : (v > 6 ? 6 : v);
    case MP_ACT_RELU_N1_TO_1: return v < -1 ? -1 : (v > 1 ? 1 : v);
    case MP_ACT_TANH: return tanhf(v);
    case MP_ACT_SIGN_BIT: return signbit(v) ? 1.0f : 0.0f;
    default: return v;
    }
}

static void ref_binary_f32(int32_t op, int32_t act, int32_t ra, const int32_t *da, const float *a,
                           int32_t rb, const int32_t *db, const float *b, int32_t ro,
                           const int32_t *dout, float *y)
{
    size_t n = numel(ro, dout), oi[MP_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        unravel(i, ro, dout, oi);
        float x = a[bcast_offset(ro, oi, ra, da)], w = b[bcast_offset(ro, oi, rb, db)];
        y[i] = ref_act(ref_op_f32(op, x, w), act);
    }
}

static int64_t ref_op_int(int32_t op, int64_t x, int64_t w)
{
    switch (op) {
    case MP_OP_ADD: return x + w;
    case MP_OP_SUB: return x - w;
    case MP_OP_MUL: return x * w;
    case MP_OP_DIV: { /* truncation toward zero, from the magnitudes */
        int64_t q = llabs(x) / llabs(w);
        return ((x < 0) != (w < 0)) ? -q : q;
    }
    default: { /* floor modulo: x - floor(x / w) * w */
        int64_t q = x / w;
        if ((x % w != 0) && ((x < 0) != (w < 0)))
            q -= 1;
        return x - q * w;
    }
    }
}

static void expect_shape(const mp_tensor *t, int32_t rank, const int32_t *dims)
{
    assert_int_equal(t->rank, rank);
    for (int32_t i = 0; i < rank; i++)
        assert_int_equal(t->dims[i], dims[i]);
}

static void expect_close(const float *got, const float *want, size_t n, double tol)
{
    size_t at = 0;
    double e = mp_test_max_rel_err(got, want, n, 1e-3, &at);
    if (e > tol)
        fail_msg("max rel err %g at %zu: got %.9g want %.9g", e, at, (double)got[at],
                 (double)want[at]);
}

/* ---- float32 cases against the reference ---------------------------------------------- */

/* Run op(a, b) with random data, compare, change the data, rerun without prepare and
 * compare again. b is a constant (with XNN_EXTRA_BYTES slack) when b_const. */
static void check_f32(int32_t op, int32_t act, int32_t ra, const int32_t *da, int32_t rb,
                      const int32_t *db, bool b_const, pthreadpool_t pool)
{
    kh_case c;
    kh_init(&c, op, pool);
    c.opt.activation = act;
    size_t na = numel(ra, da), nb = numel(rb, db);
    float *bconst = NULL;
    mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, ra, da, NULL);
    mp_tensor *b;
    bool divisor = op == MP_OP_DIV || op == MP_OP_FLOOR_MOD;
    if (b_const) {
        bconst = calloc(1, nb * sizeof(float) + 16);
        fill_f32(bconst, nb, divisor);
        b = kh_input(&c, MP_DT_FLOAT32, rb, db, bconst);
    } else {
        b = kh_input(&c, MP_DT_FLOAT32, rb, db, NULL);
        fill_f32(b->data, nb, divisor);
    }
    fill_f32(a->data, na, false);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    mp_status st = kh_run(&c);
    if (st != MP_OK)
        fail_msg("kh_run: %s", c.err.msg);
    size_t no = mp_tensor_elements(out);
    float *want = malloc(no * sizeof(float) + 4);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* new data, same shapes and pointers: run only */
            fill_f32(a->data, na, false);
            assert_int_equal(kh_rerun(&c, false), MP_OK);
        }
        /* FLOOR_MOD has no options, hence no fused activation */
        ref_binary_f32(op, op == MP_OP_FLOOR_MOD ? MP_ACT_NONE : act, ra, da, a->data, rb, db,
                       b->data, out->rank, out->dims, want);
        expect_close(out->data, want, no, 1e-5);
    }
    free(want);
    kh_free(&c);
    free(bconst);
}

static void test_hand_cases_f32(void **state)
{
    (void)state;
    { /* ADD [2,3] + [3] */
        kh_case c;
        kh_init(&c, MP_OP_ADD, NULL);
        static const float b[3 + 4] = {10, 20, 30};
        mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, b);
        memcpy(a->data, (float[]){1, 2, 3, 4, 5, 6}, 6 * sizeof(float));
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        expect_shape(out, 2, (int32_t[]){2, 3});
        const float want[] = {11, 22, 33, 14, 25, 36};
        assert_memory_equal(out->data, want, sizeof want);
        kh_free(&c);
    }
    { /* SUB: scalar - [3] */
        kh_case c;
        kh_init(&c, MP_OP_SUB, NULL);
        mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 0, NULL, NULL);
        mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
        *(float *)a->data = 10;
        memcpy(b->data, (float[]){1, 2, 3}, 3 * sizeof(float));
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        expect_shape(out, 1, (int32_t[]){3});
        const float want[] = {9, 8, 7};
        assert_memory_equal(out->data, want, sizeof want);
        kh_free(&c);
    }
    { /* MUL [2,1] * [1,3] -> [2,3] */
        kh_case c;
        kh_init(&c, MP_OP_MUL, NULL);
        mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 1}, NULL);
        mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 3}, NULL);
        memcpy(a->data, (float[]){1, 2}, 2 * sizeof(float));
        memcpy(b->data, (float[]){3, 4, 5}, 3 * sizeof(float));
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        expect_shape(out, 2, (int32_t[]){2, 3});
        const float want[] = {3, 4, 5, 6, 8, 10};
        assert_memory_equal(out->data, want, sizeof want);
        kh_free(&c);
    }
    { /* DIV [3] / scalar, fused RELU */
        kh_case c;
        kh_init(&c, MP_OP_DIV, NULL);
        c.opt.activation = MP_ACT_RELU;
        mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
        mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 0, NULL, NULL);
        memcpy(a->data, (float[]){1, -3, 7}, 3 * sizeof(float));
        *(float *)b->data = 2;
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        const float want[] = {0.5f, 0.0f, 3.5f};
        assert_memory_equal(out->data, want, sizeof want);
        kh_free(&c);
    }
    { /* ADD with RELU6 */
        kh_case c;
        kh_init(&c, MP_OP_ADD, NULL);
        c.opt.activation = MP_ACT_RELU6;
        mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
        mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, NULL);
        memcpy(a->data, (float[]){-5, 2, 5}, 3 * sizeof(float));
        *(float *)b->data = 1;
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        const float want[] = {0, 3, 6};
        assert_memory_equal(out->data, want, sizeof want);
        kh_free(&c);
    }
    { /* FLOOR_MOD float: result takes the sign of the divisor */
        kh_case c;
        kh_init(&c, MP_OP_FLOOR_MOD, NULL);
        mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){5}, NULL);
        mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){5}, NULL);
        memcpy(a->data, (float[]){-7.5f, 7.5f, 7.5f, -7.5f, 6}, 5 * sizeof(float));
        memcpy(b->data, (float[]){2, 2, -2, -2, 3}, 5 * sizeof(float));
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        assert_int_equal(kh_run(&c), MP_OK);
        const float want[] = {0.5f, 1.5f, -0.5f, -1.5f, 0};
        assert_memory_equal(out->data, want, sizeof want);
        kh_free(&c);
    }
}

static void test_broadcast_shapes_f32(void **state)
{
    (void)state;
    struct {
        int32_t ra, da[MP_MAX_RANK], rb, db[MP_MAX_RANK];
    } cases[] = {
        {3, {2, 3, 4}, 3, {2, 3, 4}},                 /* equal shapes */
        {3, {2, 3, 5}, 0, {0}},                       /* tensor op scalar */
        {0, {0}, 2, {3, 7}},                          /* scalar op tensor */
        {4, {1, 5, 5, 8}, 1, {8}},                    /* NHWC op per-channel */
        {1, {8}, 4, {2, 5, 5, 8}},                    /* per-channel op NHWC */
        {3, {4, 1, 3}, 2, {2, 1}},                    /* both broadcast */
        {4, {2, 1, 3, 1}, 4, {1, 4, 1, 5}},           /* alternating */
        {5, {2, 3, 1, 4, 5}, 3, {3, 1, 5}},           /* rank 5 */
        {6, {2, 1, 2, 1, 2, 1}, 6, {1, 3, 1, 3, 1, 3}}, /* 6 alternating dims: XNNPACK limit */
        {7, {2, 1, 2, 1, 2, 1, 2}, 7, {1, 3, 1, 3, 1, 3, 1}}, /* 7 dims: plain C */
        {8, {2, 1, 2, 1, 2, 1, 2, 1}, 8, {1, 2, 1, 2, 1, 2, 1, 3}}, /* rank 8 */
        {8, {1, 1, 2, 1, 1, 3, 1, 4}, 2, {3, 4}},     /* rank 8 that compresses */
        {2, {1, 1}, 1, {1}},                          /* single element */
        {2, {7, 33}, 2, {7, 33}},                     /* lengths off vector widths */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t o = 0; o < 5; o++)
            for (int bc = 0; bc < 2; bc++)
                check_f32(k_ops[o], MP_ACT_NONE, cases[k].ra, cases[k].da, cases[k].rb,
                          cases[k].db, bc, NULL);
}

static void test_activations_f32(void **state)
{
    (void)state;
    for (int32_t act = MP_ACT_NONE; act <= MP_ACT_SIGN_BIT; act++)
        for (size_t o = 0; o < 4; o++) {
            check_f32(k_ops[o], act, 2, (int32_t[]){3, 5}, 1, (int32_t[]){5}, false, NULL);
            /* the plain-C path (7 alternating dims) with the same activation */
            check_f32(k_ops[o], act, 7, (int32_t[]){2, 1, 2, 1, 2, 1, 2}, 7,
                      (int32_t[]){1, 2, 1, 2, 1, 2, 1}, true, NULL);
        }
}

static void test_two_threads(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    assert_non_null(pool);
    for (size_t o = 0; o < 5; o++) {
        check_f32(k_ops[o], MP_ACT_RELU6, 4, (int32_t[]){2, 16, 16, 24}, 1, (int32_t[]){24},
                  true, pool);
        check_f32(k_ops[o], MP_ACT_NONE, 4, (int32_t[]){2, 16, 16, 24}, 4,
                  (int32_t[]){2, 16, 16, 24}, false, pool);
    }
    pthreadpool_destroy(pool);
}

/* Shapes change between runs: infer, prepare and run again on the same node. */
static void test_shape_change(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_ADD, NULL);
    mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    fill_f32(a->data, 6, false);
    fill_f32(b->data, 3, false);
    assert_int_equal(kh_run(&c), MP_OK);
    float want[64];
    ref_binary_f32(MP_OP_ADD, 0, 2, (int32_t[]){2, 3}, a->data, 1, (int32_t[]){3}, b->data, 2,
                   (int32_t[]){2, 3}, want);
    expect_close(out->data, want, 6, 1e-6);

    const int32_t nd[] = {4, 1, 3};
    free(a->data);
    assert_true(mp_tensor_set_shape(a, 3, nd));
    a->data = calloc(1, a->bytes + 16);
    fill_f32(a->data, 12, false);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 3, nd);
    ref_binary_f32(MP_OP_ADD, 0, 3, nd, a->data, 1, (int32_t[]){3}, b->data, 3, nd, want);
    expect_close(out->data, want, 12, 1e-6);

    /* and to an empty tensor: nothing to compute, no error */
    const int32_t zd[] = {0, 3};
    free(a->data);
    assert_true(mp_tensor_set_shape(a, 2, zd));
    a->data = calloc(1, 16);
    assert_int_equal(kh_run(&c), MP_OK);
    expect_shape(out, 2, zd);
    kh_free(&c);
}

/* ---- integers ------------------------------------------------------------------------- */

static void run_i32(int32_t op, int32_t act, int32_t ra, const int32_t *da, const int32_t *va,
                    int32_t rb, const int32_t *db, const int32_t *vb, const int32_t *want,
                    size_t nwant)
{
    kh_case c;
    kh_init(&c, op, NULL);
    c.opt.activation = act;
    mp_tensor *a = kh_input(&c, MP_DT_INT32, ra, da, NULL);
    mp_tensor *b = kh_input(&c, MP_DT_INT32, rb, db, NULL);
    memcpy(a->data, va, numel(ra, da) * sizeof(int32_t));
    memcpy(b->data, vb, numel(rb, db) * sizeof(int32_t));
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    mp_status st = kh_run(&c);
    if (st != MP_OK)
        fail_msg("%s", c.err.msg);
    assert_int_equal(mp_tensor_elements(out), nwant);
    assert_memory_equal(out->data, want, nwant * sizeof(int32_t));
    kh_free(&c);
}

static void test_hand_cases_int(void **state)
{
    (void)state;
    /* DIV truncates toward zero; INT_MIN / -1 wraps instead of trapping */
    run_i32(MP_OP_DIV, 0, 1, (int32_t[]){5}, (int32_t[]){7, -7, 7, -7, INT_MIN}, 1,
            (int32_t[]){5}, (int32_t[]){2, 2, -2, -2, -1}, (int32_t[]){3, -3, -3, 3, INT_MIN}, 5);
    /* FLOOR_MOD has the sign of the divisor (Python %) */
    run_i32(MP_OP_FLOOR_MOD, 0, 1, (int32_t[]){6}, (int32_t[]){7, -7, 7, -7, INT_MIN, 6}, 1,
            (int32_t[]){6}, (int32_t[]){3, 3, -3, -3, -1, 3}, (int32_t[]){1, 2, -2, -1, 0, 0}, 6);
    /* FLOOR_MOD broadcast by a scalar, as in padding arithmetic: (-x) mod 4 */
    run_i32(MP_OP_FLOOR_MOD, 0, 1, (int32_t[]){4}, (int32_t[]){-1, -2, -5, 9}, 0, NULL,
            (int32_t[]){4}, (int32_t[]){3, 2, 3, 1}, 4);
    /* ADD [2,3] + [2,1] */
    run_i32(MP_OP_ADD, 0, 2, (int32_t[]){2, 3}, (int32_t[]){1, 2, 3, 4, 5, 6}, 2,
            (int32_t[]){2, 1}, (int32_t[]){10, 20}, (int32_t[]){11, 12, 13, 24, 25, 26}, 6);
    /* overflow wraps */
    run_i32(MP_OP_ADD, 0, 1, (int32_t[]){2}, (int32_t[]){INT_MAX, INT_MIN}, 1, (int32_t[]){2},
            (int32_t[]){1, -1}, (int32_t[]){INT_MIN, INT_MAX}, 2);
    run_i32(MP_OP_MUL, 0, 1, (int32_t[]){2}, (int32_t[]){65536, -3}, 0, NULL, (int32_t[]){65536},
            (int32_t[]){0, -196608}, 2);
    /* fused activations on int32 */
    run_i32(MP_OP_SUB, MP_ACT_RELU, 1, (int32_t[]){3}, (int32_t[]){1, 5, 3}, 1, (int32_t[]){1},
            (int32_t[]){3}, (int32_t[]){0, 2, 0}, 3);
    run_i32(MP_OP_ADD, MP_ACT_RELU6, 1, (int32_t[]){3}, (int32_t[]){-9, 5, 30}, 1, (int32_t[]){1},
            (int32_t[]){1}, (int32_t[]){0, 6, 6}, 3);
    run_i32(MP_OP_MUL, MP_ACT_RELU_N1_TO_1, 1, (int32_t[]){3}, (int32_t[]){-9, 0, 30}, 1,
            (int32_t[]){1}, (int32_t[]){1}, (int32_t[]){-1, 0, 1}, 3);

    /* int64 */
    kh_case c;
    kh_init(&c, MP_OP_MUL, NULL);
    mp_tensor *a = kh_input(&c, MP_DT_INT64, 1, (int32_t[]){3}, NULL);
    static const int64_t b64[1 + 2] = {3};
    kh_input(&c, MP_DT_INT64, 1, (int32_t[]){1}, b64);
    memcpy(a->data, (int64_t[]){3000000000LL, -5, INT64_MAX}, 3 * sizeof(int64_t));
    mp_tensor *out = kh_output(&c, MP_DT_INT64);
    assert_int_equal(kh_run(&c), MP_OK);
    const int64_t *y = out->data;
    assert_true(y[0] == 9000000000LL);
    assert_true(y[1] == -15);
    assert_true(y[2] == (int64_t)((uint64_t)INT64_MAX * 3u));
    kh_free(&c);

    kh_init(&c, MP_OP_FLOOR_MOD, NULL);
    a = kh_input(&c, MP_DT_INT64, 1, (int32_t[]){4}, NULL);
    mp_tensor *b = kh_input(&c, MP_DT_INT64, 1, (int32_t[]){4}, NULL);
    memcpy(a->data, (int64_t[]){-7, 7, INT64_MIN, 10000000000LL}, 4 * sizeof(int64_t));
    memcpy(b->data, (int64_t[]){3, -3, -1, 3}, 4 * sizeof(int64_t));
    out = kh_output(&c, MP_DT_INT64);
    assert_int_equal(kh_run(&c), MP_OK);
    y = out->data;
    assert_true(y[0] == 2 && y[1] == -2 && y[2] == 0 && y[3] == 1);
    kh_free(&c);
}

/* Random broadcasts of every op on int32 and int64 against the reference. */
static void test_random_int(void **state)
{
    (void)state;
    struct {
        int32_t ra, da[MP_MAX_RANK], rb, db[MP_MAX_RANK];
    } cases[] = {
        {1, {10}, 1, {10}},
        {2, {3, 4}, 0, {0}},
        {0, {0}, 2, {3, 4}},
        {3, {2, 1, 4}, 2, {3, 1}},
        {7, {2, 1, 2, 1, 2, 1, 2}, 7, {1, 2, 1, 2, 1, 2, 1}},
    };
    for (int dt = 0; dt < 2; dt++) {
        mp_dtype t = dt ? MP_DT_INT64 : MP_DT_INT32;
        size_t es = dt ? 8 : 4;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            for (size_t o = 0; o < 5; o++) {
                kh_case c;
                kh_init(&c, k_ops[o], NULL);
                mp_tensor *a = kh_input(&c, t, cases[k].ra, cases[k].da, NULL);
                mp_tensor *b = kh_input(&c, t, cases[k].rb, cases[k].db, NULL);
                size_t na = numel(cases[k].ra, cases[k].da), nb = numel(cases[k].rb, cases[k].db);
                int64_t va[256], vb[256];
                for (size_t i = 0; i < na; i++)
                    va[i] = (int64_t)(rnd() % 2001) - 1000;
                for (size_t i = 0; i < nb; i++) {
                    vb[i] = (int64_t)(rnd() % 41) - 20;
                    if (vb[i] == 0)
                        vb[i] = 7;
                }
                for (size_t i = 0; i < na; i++) {
                    if (dt) ((int64_t *)a->data)[i] = va[i];
                    else ((int32_t *)a->data)[i] = (int32_t)va[i];
                }
                for (size_t i = 0; i < nb; i++) {
                    if (dt) ((int64_t *)b->data)[i] = vb[i];
                    else ((int32_t *)b->data)[i] = (int32_t)vb[i];
                }
                mp_tensor *out = kh_output(&c, t);
                assert_int_equal(kh_run(&c), MP_OK);
                assert_int_equal(out->bytes, mp_tensor_elements(out) * es);
                size_t no = mp_tensor_elements(out), oi[MP_MAX_RANK];
                for (size_t i = 0; i < no; i++) {
                    unravel(i, out->rank, out->dims, oi);
                    int64_t x = va[bcast_offset(out->rank, oi, cases[k].ra, cases[k].da)];
                    int64_t w = vb[bcast_offset(out->rank, oi, cases[k].rb, cases[k].db)];
                    int64_t want = ref_op_int(k_ops[o], x, w);
                    int64_t got = dt ? ((int64_t *)out->data)[i] : ((int32_t *)out->data)[i];
                    if (got != want)
                        fail_msg("op %d dtype %d case %zu at %zu: %lld op %lld = %lld, got %lld",
                                 k_ops[o], dt, k, i, (long long)x, (long long)w,
                                 (long long)want, (long long)got);
                }
                kh_free(&c);
            }
        }
    }
}

static void test_division_by_zero(void **state)
{
    (void)state;
    const int32_t ops[] = {MP_OP_DIV, MP_OP_FLOOR_MOD};
    for (int k = 0; k < 2; k++) {
        for (int dt = 0; dt < 2; dt++) {
            mp_dtype t = dt ? MP_DT_INT64 : MP_DT_INT32;
            kh_case c;
            kh_init(&c, ops[k], NULL);
            kh_input(&c, t, 1, (int32_t[]){3}, NULL);
            mp_tensor *b = kh_input(&c, t, 1, (int32_t[]){3}, NULL);
            if (dt)
                ((int64_t *)b->data)[0] = 1;
            else
                ((int32_t *)b->data)[0] = 1; /* the others stay 0 */
            kh_output(&c, t);
            assert_int_equal(kh_run(&c), MP_ERR_ARG);
            assert_non_null(strstr(c.err.msg, "'t1'"));
            assert_non_null(strstr(c.err.msg, "zero"));
            kh_free(&c);
        }
    }
    /* float division by zero is IEEE: inf, no error */
    kh_case c;
    kh_init(&c, MP_OP_DIV, NULL);
    mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, NULL);
    *(float *)a->data = 1;
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_OK);
    assert_true(isinf(*(float *)out->data));
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    /* incompatible shapes */
    kh_init(&c, MP_OP_ADD, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_SHAPE);
    assert_non_null(strstr(c.err.msg, "'t0' [2,3]"));
    assert_non_null(strstr(c.err.msg, "'t1' [4]"));
    assert_non_null(strstr(c.err.msg, "ADD"));
    kh_free(&c);

    /* dtype mismatch between inputs */
    kh_init(&c, MP_OP_MUL, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "'t1'"));
    kh_free(&c);

    /* output dtype differs from the inputs */
    kh_init(&c, MP_OP_SUB, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "'t2'"));
    kh_free(&c);

    /* quantized inputs are not supported */
    kh_init(&c, MP_OP_ADD, NULL);
    kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_UINT8, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_UINT8);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    assert_non_null(strstr(c.err.msg, "u8"));
    kh_free(&c);

    /* TANH fused on integers */
    kh_init(&c, MP_OP_ADD, NULL);
    c.opt.activation = MP_ACT_TANH;
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_ERR_UNSUPPORTED);
    kh_free(&c);

    /* release without prepare is safe */
    kh_init(&c, MP_OP_DIV, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){4}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases_f32),   cmocka_unit_test(test_broadcast_shapes_f32),
        cmocka_unit_test(test_activations_f32),  cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_shape_change),     cmocka_unit_test(test_hand_cases_int),
        cmocka_unit_test(test_random_int),       cmocka_unit_test(test_division_by_zero),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
