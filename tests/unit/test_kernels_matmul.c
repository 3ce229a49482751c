/* Tests of BATCH_MATMUL: a hand case, then both paths (constant rhs on XNNPACK fully
 * connected operators, rhs computed at run time on the blocked C GEMM) against a
 * double-precision triple loop, over adj_x / adj_y, broadcast batch dimensions of different
 * ranks, edge tiles (M, N not multiples of the register tile), K = 0, a 2-thread pool and a
 * hybrid int8 rhs; shape and dtype errors; and the speed of both paths on 256x256x256.
 *
 * Tolerance: each output is a float32 sum of K products; its rounding error is at most about
 * K * eps * sum |a_i b_i| (eps = 2^-24), so we compare |got - want| <= 4 * K * eps *
 * sum |a_i b_i| + 1e-30 per element, with sum |a_i b_i| from the same double loop. */
#include "tests/util/testutil.h"

#include <float.h>
#include <math.h>
#include <pthreadpool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/util/kernel_harness.h"

/* Element (i, k) of a [.., M, K] operand stored transposed or not. */
static float at2(const float *x, bool adj, size_t rows, size_t cols, size_t i, size_t k)
{
    return adj ? x[k * rows + i] : x[i * cols + k];
}

/* The reference: out[b][i][j] = sum_k lhs[lb][i][k] * rhs[rb][k][j] in double, the batch
 * indices broadcast from the output batch index (shapes right-aligned, size 1 repeats). */
static void check_mm(int32_t ra, const int32_t *da, int32_t rb, const int32_t *db, bool ax,
                     bool ay, bool const_rhs, pthreadpool_t pool, uint32_t seed)
{
    kh_case c;
    kh_init(&c, MP_OP_BATCH_MATMUL, pool);
    c.opt.adj_x = ax;
    c.opt.adj_y = ay;
    mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, ra, da, NULL);
    size_t nb = 1;
    for (int32_t i = 0; i < rb; i++)
        nb *= (size_t)db[i];
    float *bdata = malloc(nb * sizeof(float) + 16);
    kh_fill(bdata, nb, seed + 1, 1.0f);
    mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, rb, db, const_rhs ? bdata : NULL);
    if (!const_rhs)
        memcpy(b->data, bdata, nb * sizeof(float));
    kh_fill(a->data, mp_tensor_elements(a), seed, 1.0f);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));

    size_t m = (size_t)da[ra - (ax ? 1 : 2)], k = (size_t)da[ra - (ax ? 2 : 1)];
    size_t n = (size_t)db[rb - (ay ? 2 : 1)];
    int32_t ro = ra > rb ? ra : rb;
    assert_int_equal(out->rank, ro);
    assert_int_equal(out->dims[ro - 2], (int32_t)m);
    assert_int_equal(out->dims[ro - 1], (int32_t)n);
    size_t batches = 1;
    for (int32_t d = 0; d < ro - 2; d++) {
        int32_t ia = d - (ro - ra), ib = d - (ro - rb);
        int32_t xa = ia >= 0 ? da[ia] : 1, xb = ib >= 0 ? db[ib] : 1;
        assert_int_equal(out->dims[d], xa > xb ? xa : xb);
        batches *= (size_t)out->dims[d];
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass) { /* new lhs values: run again without a new prepare */
            kh_fill(a->data, mp_tensor_elements(a), seed + 7, 2.0f);
            kh_expect_ok(&c, kh_rerun(&c, false));
        }
        for (size_t ob = 0; ob < batches; ob++) {
            /* broadcast batch indices */
            size_t rem = ob, la = 0, lb = 0, sa = 1, sb = 1;
            for (int32_t d = ro - 3; d >= 0; d--) {
                size_t i = rem % (size_t)out->dims[d];
                rem /= (size_t)out->dims[d];
                int32_t ia = d - (ro - ra), ib = d - (ro - rb);
                int32_t xa = ia >= 0 ? da[ia] : 1, xb = ib >= 0 ? db[ib] : 1;
                la += (xa == 1 ? 0 : i) * sa;
                lb += (xb == 1 ? 0 : i) * sb;
                sa *= (size_t)xa;
                sb *= (size_t)xb;
            }
            const float *pa = (const float *)a->data + la * m * k, *pb = bdata + lb * k * n;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    double s = 0, mag = 0;
                    for (size_t q = 0; q < k; q++) {
                        double p = (double)at2(pa, ax, m, k, i, q) *
                                   (double)at2(pb, !ay, n, k, j, q);
                        s += p;
                        mag += fabs(p);
                    }
                    double got = ((const float *)out->data)[(ob * m + i) * n + j];
                    double tol = 4.0 * (double)k * FLT_EPSILON / 2 * mag + 1e-30;
                    if (fabs(got - s) > tol)
                        fail_msg("[%d,%d] ax %d ay %d const %d: out[%zu][%zu][%zu] = %.9g, want "
                                 "%.9g (tol %g)", ra, rb, ax, ay, const_rhs, ob, i, j, got, s,
                                 tol);
                }
        }
    }
    kh_free(&c);
    free(bdata);
}

static void test_hand(void **state)
{
    (void)state;
    /* {{1,2},{3,4}} x {{5,6},{7,8}} = {{19,22},{43,50}}; with adj_y the rhs is read
     * transposed: {{1,2},{3,4}} x {{5,7},{6,8}} = {{17,23},{39,53}} */
    static const float rhs[4] = {5, 6, 7, 8};
    for (int ay = 0; ay < 2; ay++)
        for (int cr = 0; cr < 2; cr++) {
            kh_case c;
            kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
            c.opt.adj_y = ay;
            mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, NULL);
            memcpy(a->data, (float[]){1, 2, 3, 4}, 4 * sizeof(float));
            mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, cr ? rhs : NULL);
            if (!cr)
                memcpy(b->data, rhs, sizeof rhs);
            mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
            kh_expect_ok(&c, kh_run(&c));
            const float w0[4] = {19, 22, 43, 50}, w1[4] = {17, 23, 39, 53};
            assert_memory_equal(out->data, ay ? w1 : w0, sizeof w0);
            kh_free(&c);
        }
}

static void test_shapes(void **state)
{
    (void)state;
    uint32_t seed = 1;
    for (int cr = 0; cr < 2; cr++)
        for (int ax = 0; ax < 2; ax++)
            for (int ay = 0; ay < 2; ay++) {
                /* plain 2-D, edge tiles: M 13, K 17, N 37 */
                int32_t da[2] = {ax ? 17 : 13, ax ? 13 : 17}, db[2] = {ay ? 37 : 17, ay ? 17 : 37};
                check_mm(2, da, 2, db, ax, ay, cr, NULL, seed++);
                /* batch broadcast: [2,1,M,K] x [3,K,N] -> [2,3,M,N] */
                int32_t da4[4] = {2, 1, ax ? 9 : 5, ax ? 5 : 9};
                int32_t db3[3] = {3, ay ? 11 : 9, ay ? 9 : 11};
                check_mm(4, da4, 3, db3, ax, ay, cr, NULL, seed++);
                /* rhs broadcast over lhs batches (one XNNPACK operator for all rows) */
                int32_t da3[3] = {4, ax ? 6 : 7, ax ? 7 : 6}, db2[2] = {ay ? 3 : 6, ay ? 6 : 3};
                check_mm(3, da3, 2, db2, ax, ay, cr, NULL, seed++);
                /* lhs broadcast: [1,M,K] x [3,K,N] */
                int32_t da1[3] = {1, ax ? 8 : 10, ax ? 10 : 8};
                int32_t dbb[3] = {3, ay ? 33 : 8, ay ? 8 : 33};
                check_mm(3, da1, 3, dbb, ax, ay, cr, NULL, seed++);
            }
    /* K = 0: zeros; larger sizes on a 2-thread pool */
    int32_t dz[2] = {3, 0}, dzb[2] = {0, 4};
    check_mm(2, dz, 2, dzb, false, false, false, NULL, 5);
    pthreadpool_t pool = pthreadpool_create(2);
    int32_t dl[3] = {2, 70, 130}, dlb[3] = {2, 130, 90};
    check_mm(3, dl, 3, dlb, false, false, false, pool, 9);
    check_mm(3, dl, 3, dlb, false, false, true, pool, 10);
    pthreadpool_destroy(pool);
}

static void test_hybrid_rhs(void **state)
{
    (void)state;
    /* a constant int8 rhs of scale 0.5 is dequantized once: {{2,4},{6,8}} -> {{1,2},{3,4}};
     * {{1,1}} x that = {{4,6}} */
    static const int8_t q[4] = {2, 4, 6, 8};
    static const float scale = 0.5f;
    static const int64_t zp = 0;
    kh_case c;
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){1, 2}, NULL);
    memcpy(a->data, (float[]){1, 1}, 2 * sizeof(float));
    mp_tensor *b = kh_input(&c, MP_DT_INT8, 2, (int32_t[]){2, 2}, q);
    kh_quant(&c, b, 1, &scale, &zp, 0);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(((float *)out->data)[0] == 4.0f && ((float *)out->data)[1] == 6.0f);
    kh_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){4, 2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "differ in the inner dimension (3 and 4)");
    assert_non_null(strstr(c.err.msg, "BATCH_MATMUL"));
    kh_free(&c);
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 2, 3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){3, 3, 2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "do not broadcast");
    kh_free(&c);
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "rank 2 or more");
    kh_free(&c);
    kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    kh_input(&c, MP_DT_INT8, 2, (int32_t[]){3, 2}, NULL); /* int8 computed at run time */
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "rhs 't1' is i8");
    kh_free(&c);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 256x256x256 on one thread, both paths: GFLOP/s printed (2 * M * N * K per run). */
static void test_speed(void **state)
{
    (void)state;
    const size_t d = 256;
    float *w = malloc(d * d * sizeof(float));
    kh_fill(w, d * d, 3, 1.0f);
    for (int cr = 0; cr < 2; cr++) {
        kh_case c;
        kh_init(&c, MP_OP_BATCH_MATMUL, NULL);
        mp_tensor *a = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){256, 256}, NULL);
        kh_fill(a->data, d * d, 4, 1.0f);
        mp_tensor *b = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){256, 256}, cr ? w : NULL);
        if (!cr)
            memcpy(b->data, w, d * d * sizeof(float));
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now_s();
            for (int it = 0; it < 20; it++)
                kh_expect_ok(&c, kh_rerun(&c, false));
            double t = (now_s() - t0) / 20;
            best = t < best ? t : best;
        }
        printf("  BATCH_MATMUL 256x256x256 %s: %.1f GFLOP/s (%.1f us)\n",
               cr ? "constant rhs (XNNPACK fully connected)" : "rhs at run time (C GEMM)",
               2.0 * (double)(d * d * d) / best * 1e-9, best * 1e6);
        kh_free(&c);
    }
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_hybrid_rhs),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
