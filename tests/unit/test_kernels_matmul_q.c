/* Tests of int8 BATCH_MATMUL (matmul.c; attention and Conformer models quantized to int8)
 * against TensorFlow Lite's batch_matmul.cc EvalInt8Int8 restated here: the int32 sum over k
 * of (lhs - zp_lhs) * (rhs - zp_rhs), MultiplyByQuantizedMultiplier (quant_ref.h) by the
 * QuantizeMultiplier of lhs_scale * rhs_scale / out_scale in double, plus zp_out, saturated.
 * A hand-derived product, random shapes with adj_x / adj_y, broadcast batches, zero points
 * and scales (constant rhs too, and on a thread pool), saturation, an empty inner dimension,
 * the scratch declared by infer; the int32 output (EvalInt8Int32: raw sums, zero points
 * ignored); the refused dtype combinations. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"
#include "tests/util/quant_ref.h"

static uint32_t g_seed = 4242;
static uint32_t rnd(void)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return g_seed >> 8;
}

typedef struct mmq {
    float sa, sb, so;
    int64_t za, zb, zo;
} mmq;

/* Element (r, c) of batch bt of a stored [.., rows, cols] operand. */
static int32_t at(const int8_t *x, size_t bt, size_t r, size_t c, size_t rows, size_t cols)
{
    return x[bt * rows * cols + r * cols + c];
}

/* The reference product for rank-3 operands [ba, M, K] x [bb, K, N] (ba or bb may be 1:
 * broadcast), out [max(ba, bb), M, N]. */
static void ref_mm(const mmq *q, const int8_t *a, size_t ba, const int8_t *b, size_t bb,
                   size_t m, size_t k, size_t n, bool ax, bool ay, int8_t *out)
{
    int32_t mult;
    int shift;
    qref_quantize_multiplier((double)q->sa * (double)q->sb / (double)q->so, &mult, &shift);
    const size_t batches = ba > bb ? ba : bb;
    for (size_t t = 0; t < batches; t++)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                int32_t acc = 0;
                for (size_t kk = 0; kk < k; kk++) {
                    /* lhs [M, K] (adj_x: stored [K, M]); rhs [K, N] (adj_y: stored [N, K]) */
                    int32_t x = ax ? at(a, ba > 1 ? t : 0, kk, i, k, m)
                                   : at(a, ba > 1 ? t : 0, i, kk, m, k);
                    int32_t w = ay ? at(b, bb > 1 ? t : 0, j, kk, n, k)
                                   : at(b, bb > 1 ? t : 0, kk, j, k, n);
                    acc += (x - (int32_t)q->za) * (w - (int32_t)q->zb);
                }
                int64_t v = (int64_t)qref_mbqm(acc, mult, shift) + q->zo;
                out[(t * m + i) * n + j] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
            }
}

/* A [ba, rows, cols] int8 operand; data NULL: filled by the caller. */
static mp_tensor *operand(kh_case *c, size_t bt, size_t rows, size_t cols, const int8_t *data)
{
    return kh_input(c, MP_DT_INT8, 3, (int32_t[]){(int32_t)bt, (int32_t)rows, (int32_t)cols},
                    data);
}

static void mm_case(kh_case *c, const mmq *q, mp_tensor **a, mp_tensor **b, size_t ba,
                    size_t bb, size_t m, size_t k, size_t n, bool ax, bool ay,
                    const int8_t *const_b, pthreadpool_t pool)
{
    kh_init(c, MP_OP_BATCH_MATMUL, pool);
    c->opt.adj_x = ax;
    c->opt.adj_y = ay;
    *a = ax ? operand(c, ba, k, m, NULL) : operand(c, ba, m, k, NULL);
    *b = ay ? operand(c, bb, n, k, const_b) : operand(c, bb, k, n, const_b);
    mp_tensor *out = kh_output(c, MP_DT_INT8);
    kh_quant(c, *a, 1, &q->sa, &q->za, 0);
    kh_quant(c, *b, 1, &q->sb, &q->zb, 0);
    kh_quant(c, out, 1, &q->so, &q->zo, 0);
}

/* [1,2,3] x [1,3,2], lhs (0.5, 1), rhs (0.25, -2), out (0.1, 3): lhs centred {1,2,3},{-1,0,4},
 * rhs centred {{1,0},{2,-1},{0,3}}: sums {5, 7}, {-1, 12}; real = sum * 0.125, on the output
 * scale sum * 1.25: 6.25 -> 6, 8.75 -> 9, -1.25 -> -1, 15 -> 15; + 3 = {9, 12, 2, 18}. */
static void test_hand(void **state)
{
    (void)state;
    const mmq q = {0.5f, 0.25f, 0.1f, 1, -2, 3};
    kh_case c;
    mp_tensor *a, *b;
    mm_case(&c, &q, &a, &b, 1, 1, 2, 3, 2, false, false, NULL, NULL);
    memcpy(a->data, (int8_t[]){2, 3, 4, 0, 1, 5}, 6);
    memcpy(b->data, (int8_t[]){-1, -2, 0, -3, -2, 1}, 6);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(c.out[0]->rank, 3);
    assert_int_equal(c.out[0]->dims[1], 2);
    assert_int_equal(c.out[0]->dims[2], 2);
    assert_memory_equal(c.out[0]->data, ((int8_t[]){9, 12, 2, 18}), 4);
    assert_int_equal(c.node.scratch_bytes, (2 * 3 + 2 * 3) * sizeof(int16_t));
    kh_free(&c);
}

/* Random shapes, transposes, broadcast batches, parameters; constant rhs; a thread pool. */
static void test_random(void **state)
{
    (void)state;
    pthreadpool_t pool = pthreadpool_create(2);
    size_t checked = 0;
    for (int trial = 0; trial < 120; trial++) {
        const size_t m = 1 + rnd() % 9, k = 1 + rnd() % 40, n = 1 + rnd() % 9;
        const size_t bt = 1 + rnd() % 3;
        const size_t ba = trial % 4 == 1 ? 1 : bt, bb = trial % 4 == 2 ? 1 : bt;
        const bool ax = rnd() % 2, ay = rnd() % 2, cst = trial % 5 == 0;
        mmq q = {ldexpf(1.0f + (float)(rnd() % 100) / 100.0f, -(int)(rnd() % 6)),
                 ldexpf(1.0f + (float)(rnd() % 100) / 100.0f, -(int)(rnd() % 6)),
                 ldexpf(1.0f + (float)(rnd() % 100) / 100.0f, -(int)(rnd() % 4)),
                 (int64_t)(rnd() % 256) - 128, (int64_t)(rnd() % 256) - 128,
                 (int64_t)(rnd() % 256) - 128};
        int8_t *bdata = malloc(bb * k * n);
        for (size_t i = 0; i < bb * k * n; i++)
            bdata[i] = (int8_t)(rnd() % 256);
        kh_case c;
        mp_tensor *a, *b;
        mm_case(&c, &q, &a, &b, ba, bb, m, k, n, ax, ay, cst ? bdata : NULL,
                trial % 3 == 0 ? pool : NULL);
        for (size_t i = 0; i < ba * m * k; i++)
            ((int8_t *)a->data)[i] = (int8_t)(rnd() % 256);
        if (!cst)
            memcpy(b->data, bdata, bb * k * n);
        kh_expect_ok(&c, kh_run(&c));
        const size_t outputs = (ba > bb ? ba : bb) * m * n;
        assert_int_equal(mp_tensor_elements(c.out[0]), outputs);
        int8_t *want = malloc(outputs);
        ref_mm(&q, a->data, ba, b->data, bb, m, k, n, ax, ay, want);
        for (size_t i = 0; i < outputs; i++)
            if (((int8_t *)c.out[0]->data)[i] != want[i])
                fail_msg("trial %d (%zux%zux%zu, batches %zu/%zu, adj %d %d): output %zu is %d, "
                         "want %d", trial, m, k, n, ba, bb, ax, ay, i,
                         ((int8_t *)c.out[0]->data)[i], want[i]);
        checked += outputs;
        /* a rerun with garbage in the scratch gives the same */
        memset(c.node.scratch, 0x5A, c.node.scratch_bytes);
        kh_expect_ok(&c, kh_rerun(&c, false));
        assert_memory_equal(c.out[0]->data, want, outputs);
        free(want);
        free(bdata);
        kh_free(&c);
    }
    pthreadpool_destroy(pool);
    print_message("int8 BATCH_MATMUL: %zu outputs bit for bit\n", checked);
}

/* Saturation both ways, a lhs of rank 2 against a rhs of rank 4, and k = 0 (the output zero
 * point). */
static void test_edges(void **state)
{
    (void)state;
    /* [1,1,4] x [1,4,2], scales 1: lhs 127 - (-128) = 255 against rhs 127, 4 times: 129540,
     * saturated to 127; against rhs -128: -130560, saturated to -128 */
    const mmq q = {1.0f, 1.0f, 1.0f, -128, 0, 0};
    kh_case c;
    mp_tensor *a, *b;
    mm_case(&c, &q, &a, &b, 1, 1, 1, 4, 2, false, false, NULL, NULL);
    memset(a->data, 127, 4);
    memcpy(b->data, (int8_t[]){127, -128, 127, -128, 127, -128, 127, -128}, 8);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(c.out[0]->data, ((int8_t[]){127, -128}), 2);
    kh_free(&c);

    /* lhs [2,3] x rhs [2,1,3,2]: out [2,1,2,2], the lhs broadcast to both batches */
    const mmq q2 = {0.1f, 0.2f, 0.05f, 3, -1, -7};
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    a = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 3}, NULL);
    b = kh_input(&c, MP_DT_INT8, 4, (int32_t[]){2, 1, 3, 2}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, a, 1, &q2.sa, &q2.za, 0);
    kh_quant(&c, b, 1, &q2.sb, &q2.zb, 0);
    kh_quant(&c, out, 1, &q2.so, &q2.zo, 0);
    for (int i = 0; i < 6; i++)
        ((int8_t *)a->data)[i] = (int8_t)(i * 7 - 20);
    for (int i = 0; i < 12; i++)
        ((int8_t *)b->data)[i] = (int8_t)(30 - i * 5);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 4);
    int8_t want[8];
    ref_mm(&q2, a->data, 1, b->data, 2, 2, 3, 2, false, false, want);
    assert_memory_equal(out->data, want, 8);
    kh_free(&c);

    /* k = 0: every output is the zero point */
    const mmq q3 = {0.5f, 0.5f, 0.5f, 0, 0, 9};
    mm_case(&c, &q3, &a, &b, 1, 1, 2, 0, 3, false, false, NULL, NULL);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(c.out[0]->data, ((int8_t[]){9, 9, 9, 9, 9, 9}), 6);
    kh_free(&c);
}

/* An int32 output (TensorFlow Lite's EvalInt8Int32: reference BatchMatMul<int8, int8, int32>):
 * the raw sums of the stored values' products, zero points ignored. [2,3] x [3,2] (adj_y:
 * rhs stored [2,3]): {1,2,3}.{4,5,6} = 32, {1,2,3}.{-1,0,1} = 2, {-128,127,0}.{4,5,6} = 123,
 * {-128,127,0}.{-1,0,1} = 128; then random shapes against the plain triple loop. */
static void test_int32_output(void **state)
{
    (void)state;
    static const float s = 0.5f;
    static const int64_t z = 7;
    kh_case c;
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    c.opt.adj_y = true;
    mp_tensor *a = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 3}, NULL);
    mp_tensor *b = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 3}, NULL);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    kh_quant(&c, a, 1, &s, &z, 0);
    kh_quant(&c, b, 1, &s, &z, 0);
    memcpy(a->data, (int8_t[]){1, 2, 3, -128, 127, 0}, 6);
    memcpy(b->data, (int8_t[]){4, 5, 6, -1, 0, 1}, 6);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int32_t[]){32, 2, 123, 128}), 4 * sizeof(int32_t));
    kh_free(&c);
    for (int trial = 0; trial < 40; trial++) {
        const size_t m = 1 + rnd() % 6, k = 1 + rnd() % 70, n = 1 + rnd() % 7;
        kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
        a = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){(int32_t)m, (int32_t)k}, NULL);
        b = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){(int32_t)k, (int32_t)n}, NULL);
        out = kh_output(&c, MP_DT_INT32);
        for (size_t i = 0; i < m * k; i++)
            ((int8_t *)a->data)[i] = (int8_t)(rnd() % 256);
        for (size_t i = 0; i < k * n; i++)
            ((int8_t *)b->data)[i] = (int8_t)(rnd() % 256);
        kh_expect_ok(&c, kh_run(&c));
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                int32_t want = 0;
                for (size_t kk = 0; kk < k; kk++)
                    want += ((int8_t *)a->data)[i * k + kk] * ((int8_t *)b->data)[kk * n + j];
                assert_int_equal(((int32_t *)out->data)[i * n + j], want);
            }
        kh_free(&c);
    }
}

/* A case with lhs, rhs and output dtypes, quantized (0.5, 0) unless quant is 0; quant 2
 * gives the rhs two scales along dimension 1. */
static void expect_refused(mp_dtype da, mp_dtype db, mp_dtype dout, int quant, const char *needle)
{
    static const float s = 0.5f, sc[2] = {0.5f, 0.25f};
    static const int64_t z = 0, zp[2] = {0, 0};
    kh_case c;
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    mp_tensor *a = kh_input(&c, da, 2, (int32_t[]){2, 2}, NULL);
    mp_tensor *b = kh_input(&c, db, 2, (int32_t[]){2, 2}, NULL);
    mp_tensor *out = kh_output(&c, dout);
    if (quant) {
        kh_quant(&c, a, 1, &s, &z, 0);
        kh_quant(&c, b, quant, quant == 2 ? sc : &s, quant == 2 ? zp : &z, quant == 2);
        kh_quant(&c, out, 1, &s, &z, 0);
    }
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, needle);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    expect_refused(MP_DT_INT8, MP_DT_INT8, MP_DT_INT16, 1,
                   "output 't2' is i16 (supported with i8 inputs: i8, i32)");
    expect_refused(MP_DT_INT8, MP_DT_UINT8, MP_DT_INT8, 1,
                   "lhs 't0' is i8 but rhs 't1' is u8 (both i8)");
    expect_refused(MP_DT_UINT8, MP_DT_UINT8, MP_DT_UINT8, 1,
                   "lhs 't0' is u8 (supported: f32, i8, i16)");
    /* int16 runs (test_kernels_int16); with an int8 rhs it is refused */
    expect_refused(MP_DT_INT16, MP_DT_INT8, MP_DT_INT16, 1,
                   "rhs 't1' is i8; with i16 input 't0' it must be i16");
    expect_refused(MP_DT_INT8, MP_DT_INT8, MP_DT_INT8, 0, "no quantization parameters");
    expect_refused(MP_DT_INT8, MP_DT_INT8, MP_DT_INT8, 2, "'t1' has one scale per channel");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_int32_output),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
