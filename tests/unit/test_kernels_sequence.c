/* Tests of CUMSUM, ONE_HOT, TOPK_V2 and EMBEDDING_LOOKUP (sequence.c): hand-derived cases
 * (CUMSUM exclusive and reverse, ONE_HOT at axis -1 and 0, TOPK ties keeping the lower
 * position first, the hybrid lookup's per-row scales), randomized cases against plain
 * references restated here, values known only while running (deferred), errors with their
 * messages (an out-of-range id refused at run), and one model written with the writer that
 * holds several of the new operators, run through a session in static and dynamic modes
 * with equal outputs. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

/* ---- CUMSUM ----------------------------------------------------------------------------- */

static void run_cumsum(mp_dtype dt, int32_t rank, const int32_t *dims, const void *x,
                       int32_t axis, bool exclusive, bool reverse, void *y)
{
    kh_case c;
    kh_init(&c, MP_OP_CUMSUM, NULL);
    c.opt.exclusive = exclusive;
    c.opt.reverse = reverse;
    kh_input(&c, dt, rank, dims, x);
    kh_input(&c, MP_DT_INT32, 0, NULL, &axis);
    mp_tensor *out = kh_output(&c, dt);
    kh_expect_ok(&c, kh_run(&c));
    memcpy(y, out->data, out->bytes);
    kh_free(&c);
}

static void test_cumsum_hand(void **state)
{
    (void)state;
    const int32_t d = 4;
    const float x[4] = {1, 2, 3, 4};
    float y[4];
    run_cumsum(MP_DT_FLOAT32, 1, &d, x, 0, false, false, y);
    assert_memory_equal(y, ((float[]){1, 3, 6, 10}), sizeof y);
    run_cumsum(MP_DT_FLOAT32, 1, &d, x, 0, true, false, y);
    assert_memory_equal(y, ((float[]){0, 1, 3, 6}), sizeof y);
    run_cumsum(MP_DT_FLOAT32, 1, &d, x, 0, false, true, y);
    assert_memory_equal(y, ((float[]){10, 9, 7, 4}), sizeof y);
    run_cumsum(MP_DT_FLOAT32, 1, &d, x, -1, true, true, y);
    assert_memory_equal(y, ((float[]){9, 7, 4, 0}), sizeof y);
    /* [2,3] int32 along axis 0 and 1; int64 */
    const int32_t d23[2] = {2, 3};
    const int32_t m[6] = {1, 2, 3, 10, 20, 30};
    int32_t my[6];
    run_cumsum(MP_DT_INT32, 2, d23, m, 0, false, false, my);
    assert_memory_equal(my, ((int32_t[]){1, 2, 3, 11, 22, 33}), sizeof my);
    run_cumsum(MP_DT_INT32, 2, d23, m, 1, true, true, my);
    assert_memory_equal(my, ((int32_t[]){5, 3, 0, 50, 30, 0}), sizeof my);
    const int64_t l[3] = {INT64_C(5000000000), -1, 2};
    int64_t ly[3];
    const int32_t d3 = 3;
    run_cumsum(MP_DT_INT64, 1, &d3, l, 0, false, false, ly);
    assert_memory_equal(ly, ((int64_t[]){INT64_C(5000000000), INT64_C(4999999999),
                                         INT64_C(5000000001)}), sizeof ly);
}

static void test_cumsum_random(void **state)
{
    (void)state;
    const int32_t dims[3] = {3, 7, 5};
    float x[105], y[105];
    kh_fill(x, 105, 3, 4.0f);
    for (int32_t axis = -3; axis < 3; axis++)
        for (int flags = 0; flags < 4; flags++) {
            const bool ex = flags & 1, rev = flags & 2;
            run_cumsum(MP_DT_FLOAT32, 3, dims, x, axis, ex, rev, y);
            const int32_t a = axis < 0 ? axis + 3 : axis;
            size_t inner = 1, outer = 1;
            for (int32_t k = a + 1; k < 3; k++)
                inner *= (size_t)dims[k];
            for (int32_t k = 0; k < a; k++)
                outer *= (size_t)dims[k];
            const size_t ext = (size_t)dims[a];
            for (size_t o = 0; o < outer; o++)
                for (size_t i = 0; i < inner; i++)
                    for (size_t e = 0; e < ext; e++) {
                        double s = 0; /* the elements before (or after) e, and e unless ex */
                        for (size_t f = 0; f < ext; f++) {
                            const bool take = rev ? (ex ? f > e : f >= e) : (ex ? f < e : f <= e);
                            if (take)
                                s += x[(o * ext + f) * inner + i];
                        }
                        const float got = y[(o * ext + e) * inner + i];
                        if (fabs(got - s) > 1e-4)
                            fail_msg("axis %d flags %d: got %g want %g", axis, flags,
                                     (double)got, s);
                    }
        }
}

static void test_cumsum_errors(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d = 3, axis = 1;
    kh_init(&c, MP_OP_CUMSUM, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, &axis);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "axis 1 is out of range");
    kh_free(&c);
    kh_init(&c, MP_OP_CUMSUM, NULL);
    kh_input(&c, MP_DT_INT8, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, &axis);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, i32, i64");
    kh_free(&c);
}

/* ---- ONE_HOT ---------------------------------------------------------------------------- */

static void test_one_hot(void **state)
{
    (void)state;
    kh_case c;
    const int32_t di = 3, depth = 4;
    const int32_t idx[3] = {0, 3, 5}; /* 5 is outside [0, 4): a row of off_value */
    const float on = 2.0f, off = -1.0f;
    /* axis -1: [3, 4] */
    kh_init(&c, MP_OP_ONE_HOT, NULL);
    c.opt.axis = -1;
    kh_input(&c, MP_DT_INT32, 1, &di, idx);
    kh_input(&c, MP_DT_INT32, 0, NULL, &depth);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &on);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &off);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], 3);
    assert_int_equal(out->dims[1], 4);
    assert_memory_equal(out->data, ((float[]){2, -1, -1, -1, -1, -1, -1, 2, -1, -1, -1, -1}),
                        48);
    kh_free(&c);
    /* axis 0: [4, 3], int64 indices, int32 values */
    const int64_t idx64[3] = {1, -1, 1};
    const int32_t on_i = 7, off_i = 0;
    kh_init(&c, MP_OP_ONE_HOT, NULL);
    c.opt.axis = 0;
    kh_input(&c, MP_DT_INT64, 1, &di, idx64);
    kh_input(&c, MP_DT_INT32, 0, NULL, &depth);
    kh_input(&c, MP_DT_INT32, 0, NULL, &on_i);
    kh_input(&c, MP_DT_INT32, 0, NULL, &off_i);
    out = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 4);
    assert_int_equal(out->dims[1], 3);
    assert_memory_equal(out->data, ((int32_t[]){0, 0, 0, 7, 0, 7, 0, 0, 0, 0, 0, 0}), 48);
    kh_free(&c);
    /* [2,2] indices, axis 1: output [2, 3, 2]; out[i][d][j] = idx[i][j] == d */
    const int32_t d22[2] = {2, 2}, idx22[4] = {2, 0, 1, 2}, depth3 = 3;
    const uint8_t on_b = 1, off_b = 0;
    kh_init(&c, MP_OP_ONE_HOT, NULL);
    c.opt.axis = 1;
    kh_input(&c, MP_DT_INT32, 2, d22, idx22);
    kh_input(&c, MP_DT_INT32, 0, NULL, &depth3);
    kh_input(&c, MP_DT_BOOL, 0, NULL, &on_b);
    kh_input(&c, MP_DT_BOOL, 0, NULL, &off_b);
    out = kh_output(&c, MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 3);
    const uint8_t *b = out->data;
    for (int i = 0; i < 2; i++)
        for (int d = 0; d < 3; d++)
            for (int j = 0; j < 2; j++)
                assert_int_equal(b[(i * 3 + d) * 2 + j], idx22[i * 2 + j] == d);
    kh_free(&c);
}

static void test_one_hot_deferred_and_errors(void **state)
{
    (void)state;
    kh_case c;
    const int32_t di = 2, idx[2] = {1, 0};
    const float on = 1.0f, off = 0.0f;
    /* depth not known before running: deferred; once known, 2 x 2 */
    kh_init(&c, MP_OP_ONE_HOT, NULL);
    c.opt.axis = -1;
    kh_input(&c, MP_DT_INT32, 1, &di, idx);
    mp_tensor *depth = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &on);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &off);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED);
    *(int32_t *)depth->data = 2;
    depth->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((float[]){0, 1, 1, 0}), 16);
    /* a negative depth */
    *(int32_t *)depth->data = -1;
    kh_expect_error(&c, MP_ERR_SHAPE, "depth -1");
    kh_free(&c);
    /* axis beyond the output's rank */
    const int32_t d2 = 2;
    kh_init(&c, MP_OP_ONE_HOT, NULL);
    c.opt.axis = 2;
    kh_input(&c, MP_DT_INT32, 1, &di, idx);
    kh_input(&c, MP_DT_INT32, 0, NULL, &d2);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &on);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &off);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "axis 2");
    kh_free(&c);
    /* on_value of another dtype than the output */
    const int32_t on_i = 1;
    kh_init(&c, MP_OP_ONE_HOT, NULL);
    c.opt.axis = -1;
    kh_input(&c, MP_DT_INT32, 1, &di, idx);
    kh_input(&c, MP_DT_INT32, 0, NULL, &d2);
    kh_input(&c, MP_DT_INT32, 0, NULL, &on_i);
    kh_input(&c, MP_DT_FLOAT32, 0, NULL, &off);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "on_value");
    kh_free(&c);
}

/* ---- TOPK_V2 ---------------------------------------------------------------------------- */

static void test_topk_hand(void **state)
{
    (void)state;
    kh_case c;
    /* ties: the lower position first. Row {3, 1, 3, 2, 3}: k 4 -> 3 (0), 3 (2), 3 (4), 2 (3) */
    const int32_t d[2] = {2, 5}, k = 4;
    const float x[10] = {3, 1, 3, 2, 3, -1, -5, 0, -1, 7};
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, d, x);
    kh_input(&c, MP_DT_INT32, 0, NULL, &k);
    mp_tensor *vals = kh_output(&c, MP_DT_FLOAT32), *idx = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(vals->dims[1], 4);
    assert_int_equal(idx->dims[1], 4);
    assert_memory_equal(vals->data, ((float[]){3, 3, 3, 2, 7, 0, -1, -1}), 32);
    assert_memory_equal(idx->data, ((int32_t[]){0, 2, 4, 3, 4, 2, 0, 3}), 32);
    kh_free(&c);
    /* int8, k = 0 and k = the whole row */
    const int32_t d6 = 6, k0 = 0, k6 = 6;
    const int8_t q[6] = {-128, 127, 0, 127, -1, 0};
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    kh_input(&c, MP_DT_INT8, 1, &d6, q);
    kh_input(&c, MP_DT_INT32, 0, NULL, &k6);
    vals = kh_output(&c, MP_DT_INT8);
    idx = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(vals->data, ((int8_t[]){127, 127, 0, 0, -1, -128}), 6);
    assert_memory_equal(idx->data, ((int32_t[]){1, 3, 2, 5, 4, 0}), 24);
    kh_free(&c);
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    kh_input(&c, MP_DT_INT8, 1, &d6, q);
    kh_input(&c, MP_DT_INT32, 0, NULL, &k0);
    vals = kh_output(&c, MP_DT_INT8);
    kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(vals->dims[0], 0);
    kh_free(&c);
}

static void test_topk_random(void **state)
{
    (void)state;
    enum { ROWS = 6, N = 133, K = 17 };
    int32_t x[ROWS * N];
    uint32_t seed = 11;
    for (int i = 0; i < ROWS * N; i++)
        x[i] = (int32_t)(kh_frand(&seed, 1.0f) * 20.0f); /* many ties */
    kh_case c;
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    const int32_t d[2] = {ROWS, N};
    kh_input(&c, MP_DT_INT32, 2, d, x);
    mp_tensor *kt = kh_input(&c, MP_DT_INT32, 0, NULL, NULL);
    mp_tensor *vals = kh_output(&c, MP_DT_INT32), *idx = kh_output(&c, MP_DT_INT32);
    assert_int_equal(kh_run(&c), MP_ERR_DEFERRED); /* k known only while running */
    *(int32_t *)kt->data = K;
    kt->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    /* reference: repeatedly take the largest not yet taken, the lowest position on ties */
    for (int r = 0; r < ROWS; r++) {
        bool taken[N] = {false};
        for (int j = 0; j < K; j++) {
            int best = -1;
            for (int i = 0; i < N; i++)
                if (!taken[i] && (best < 0 || x[r * N + i] > x[r * N + best]))
                    best = i;
            taken[best] = true;
            assert_int_equal(((int32_t *)idx->data)[r * K + j], best);
            assert_int_equal(((int32_t *)vals->data)[r * K + j], x[r * N + best]);
        }
    }
    kh_free(&c);
}

static void test_topk_errors(void **state)
{
    (void)state;
    kh_case c;
    const int32_t d = 3, k = 4;
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, &k);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "k 4 is out of range");
    kh_free(&c);
    const int32_t k1 = 1;
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, &k1);
    kh_output(&c, MP_DT_FLOAT32);
    kh_output(&c, MP_DT_INT64);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "indices output");
    kh_free(&c);
    kh_init(&c, MP_OP_TOPK_V2, NULL);
    kh_input(&c, MP_DT_BOOL, 1, &d, NULL);
    kh_input(&c, MP_DT_INT32, 0, NULL, &k1);
    kh_output(&c, MP_DT_BOOL);
    kh_output(&c, MP_DT_INT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "dtype");
    kh_free(&c);
}

/* ---- EMBEDDING_LOOKUP ------------------------------------------------------------------- */

static void test_embedding_lookup(void **state)
{
    (void)state;
    kh_case c;
    const int32_t dv[2] = {4, 3}, di = 3, ids[3] = {2, 0, 2};
    const float table[12] = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &di, ids);
    kh_input(&c, MP_DT_FLOAT32, 2, dv, table);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 3);
    assert_int_equal(out->dims[1], 3);
    assert_memory_equal(out->data, ((float[]){20, 21, 22, 0, 1, 2, 20, 21, 22}), 36);
    kh_free(&c);
    /* int8 table, float output: the hybrid form, per-tensor scale 0.5 (no zero point) */
    const int8_t q[12] = {1, -2, 3, 4, 5, 6, -7, 8, 9, 10, 11, -128};
    const float s1 = 0.5f;
    const int64_t z1 = 0;
    const int32_t ids2[2] = {3, 2}, d2 = 2;
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d2, ids2);
    mp_tensor *tv = kh_input(&c, MP_DT_INT8, 2, dv, q);
    kh_quant(&c, tv, 1, &s1, &z1, 0);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((float[]){5, 5.5f, -64, -3.5f, 4, 4.5f}), 24);
    kh_free(&c);
    /* per-row scales along dimension 0; a uint8 table is read as int8, as TensorFlow Lite */
    const float rs[4] = {1.0f, 0.25f, 2.0f, 0.125f};
    const int64_t rz[4] = {0, 0, 0, 0};
    const uint8_t u[12] = {1, 2, 3, 4, 8, 12, 200, 1, 2, 8, 16, 255};
    const int32_t ids3[3] = {1, 2, 3};
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &di, ids3);
    tv = kh_input(&c, MP_DT_UINT8, 2, dv, u);
    kh_quant(&c, tv, 4, rs, rz, 0);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((float[]){1, 2, 3, -112, 2, 4, 1, 2, -0.125f}), 36);
    kh_free(&c);
    /* int8 table, int8 output: rows copied */
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &d2, ids2);
    kh_input(&c, MP_DT_INT8, 2, dv, q);
    out = kh_output(&c, MP_DT_INT8);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){10, 11, -128, -7, 8, 9}), 6);
    kh_free(&c);
}

static void test_embedding_errors(void **state)
{
    (void)state;
    kh_case c;
    const int32_t dv[2] = {4, 3}, di = 2;
    const float table[12] = {0};
    /* an id out of range is refused at run, naming it */
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    mp_tensor *ids = kh_input(&c, MP_DT_INT32, 1, &di, NULL);
    ((int32_t *)ids->data)[0] = 1;
    ((int32_t *)ids->data)[1] = 4;
    kh_input(&c, MP_DT_FLOAT32, 2, dv, table);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_ARG, "id 4 (element 1");
    kh_free(&c);
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    ids = kh_input(&c, MP_DT_INT32, 1, &di, NULL);
    ((int32_t *)ids->data)[0] = -1;
    kh_input(&c, MP_DT_FLOAT32, 2, dv, table);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_ARG, "out of range");
    kh_free(&c);
    /* int64 ids, a rank-1 table, a float table with an int8 output */
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT64, 1, &di, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, dv, table);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "ids");
    kh_free(&c);
    const int32_t d12 = 12;
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &di, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, &d12, table);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "rank >= 2");
    kh_free(&c);
    kh_init(&c, MP_OP_EMBEDDING_LOOKUP, NULL);
    kh_input(&c, MP_DT_INT32, 1, &di, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, dv, table);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "output");
    kh_free(&c);
}

/* ---- a model of several of the new operators, static and dynamic ------------------------- */

enum { MR = 2, MC = 6 };

/* x [2,6] f32 and k (i32 scalar) in; CUMSUM(x, axis 1, exclusive, reverse) -> cs;
 * TOPK_V2(cs, 3) -> tv, ti; ONE_HOT(ti, 6, 1, 0, axis -1) -> oh; TOPK_V2(x, k) -> dv, di
 * (k known only while running); FLOOR_DIV(x, 0.75) -> fd; LOG_SOFTMAX(x) -> ls; ROUND(ls)
 * -> rd; EMBEDDING_LOOKUP(ids const, table const) -> em. Outputs tv, ti, oh, dv, di, rd, em,
 * fd. */
static void *seq_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    const int32_t dx[2] = {MR, MC}, d3[2] = {MR, 3}, doh[3] = {MR, 3, MC}, dyn[2] = {MR, -1};
    const int32_t axis = 1, k3 = 3, depth = MC, ids[3] = {1, 0, 1}, nid = 3, dt[2] = {2, 4};
    const float on = 1.0f, off = 0.0f, divisor = 0.75f;
    const float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int k = mp_tfw_tensor(w, "k", MP_DT_INT32, 0, NULL, 0, NULL);
    int ax = mp_tfw_tensor(w, "axis", MP_DT_INT32, 0, NULL, mp_tfw_buffer(w, &axis, 4), NULL);
    int kc = mp_tfw_tensor(w, "k3", MP_DT_INT32, 0, NULL, mp_tfw_buffer(w, &k3, 4), NULL);
    int dp = mp_tfw_tensor(w, "depth", MP_DT_INT32, 0, NULL, mp_tfw_buffer(w, &depth, 4), NULL);
    int onv = mp_tfw_tensor(w, "on", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(w, &on, 4), NULL);
    int offv = mp_tfw_tensor(w, "off", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(w, &off, 4), NULL);
    int dvs = mp_tfw_tensor(w, "divisor", MP_DT_FLOAT32, 0, NULL, mp_tfw_buffer(w, &divisor, 4),
                            NULL);
    int idt = mp_tfw_tensor(w, "ids", MP_DT_INT32, 1, &nid, mp_tfw_buffer(w, ids, 12), NULL);
    int tbl = mp_tfw_tensor(w, "table", MP_DT_FLOAT32, 2, dt, mp_tfw_buffer(w, table, 32), NULL);
    int cs = mp_tfw_tensor(w, "cs", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int tv = mp_tfw_tensor(w, "tv", MP_DT_FLOAT32, 2, d3, 0, NULL);
    int ti = mp_tfw_tensor(w, "ti", MP_DT_INT32, 2, d3, 0, NULL);
    int oh = mp_tfw_tensor(w, "oh", MP_DT_FLOAT32, 3, doh, 0, NULL);
    int dv = mp_tfw_tensor(w, "dv", MP_DT_FLOAT32, 2, d3, 0, dyn);
    int di = mp_tfw_tensor(w, "di", MP_DT_INT32, 2, d3, 0, dyn);
    int fd = mp_tfw_tensor(w, "fd", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int ls = mp_tfw_tensor(w, "ls", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int rd = mp_tfw_tensor(w, "rd", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int em = mp_tfw_tensor(w, "em", MP_DT_FLOAT32, 2, (const int32_t[]){3, 4}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.exclusive = true;
    o.reverse = true;
    mp_tfw_op(w, MP_OP_CUMSUM, 2, (int32_t[]){x, ax}, 1, &cs, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_TOPK_V2, 2, (int32_t[]){cs, kc}, 2, (int32_t[]){tv, ti}, &o);
    o.axis = -1;
    mp_tfw_op(w, MP_OP_ONE_HOT, 4, (int32_t[]){ti, dp, onv, offv}, 1, &oh, &o);
    o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_TOPK_V2, 2, (int32_t[]){x, k}, 2, (int32_t[]){dv, di}, &o);
    mp_tfw_op(w, MP_OP_FLOOR_DIV, 2, (int32_t[]){x, dvs}, 1, &fd, &o);
    mp_tfw_op(w, MP_OP_LOG_SOFTMAX, 1, &x, 1, &ls, &o);
    mp_tfw_op(w, MP_OP_ROUND, 1, &ls, 1, &rd, &o);
    mp_tfw_op(w, MP_OP_EMBEDDING_LOOKUP, 2, (int32_t[]){idt, tbl}, 1, &em, &o);
    mp_tfw_io(w, 2, (int32_t[]){x, k}, 8, (int32_t[]){tv, ti, oh, dv, di, rd, em, fd});
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

/* Run the model in `mode`; copy every output's bytes into out[i] (malloc'd) and sizes. */
static void run_seq_model(mp_memory_mode mode, void *out[8], size_t sizes[8])
{
    size_t size;
    void *bytes = seq_model(&size);
    mp_session_options so = {.mode = mode};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    if (mp_session_load_memory(s, bytes, size, "seq", &err) != MP_OK)
        fail_msg("load: %s", err.msg);
    free(bytes);
    if (mp_session_prepare(s, &err) != MP_OK)
        fail_msg("prepare: %s", err.msg);
    const float x[MR * MC] = {0.5f, -1.25f, 3.0f, 3.0f, -2.0f, 0.0f,
                              1.0f, 1.0f,   1.0f, -4.5f, 2.25f, 1.0f};
    const int32_t k = 2;
    for (int r = 0; r < 2; r++) {
        assert_int_equal(mp_session_set_input(s, 0, x, sizeof x, &err), MP_OK);
        assert_int_equal(mp_session_set_input(s, 1, &k, sizeof k, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run (%s): %s", mp_memory_mode_name(mode), err.msg);
    }
    assert_int_equal(mp_session_output_count(s), 8);
    for (int i = 0; i < 8; i++) {
        const mp_tensor *t = mp_session_output(s, i);
        sizes[i] = t->bytes;
        out[i] = malloc(t->bytes + 1);
        memcpy(out[i], t->data, t->bytes);
    }
    /* spot checks: cs row 0 (exclusive, reverse) = {3.75, 2.5, -0.5, -3.5, 0, ... }:
     * suffix sums after each element: {2.75+... } checked through TOPK below */
    const mp_tensor *dvt = mp_session_output(s, 3), *dit = mp_session_output(s, 4);
    assert_int_equal(dvt->dims[1], 2);
    assert_memory_equal(dvt->data, ((float[]){3, 3, 2.25f, 1}), 16);
    assert_memory_equal(dit->data, ((int32_t[]){2, 3, 4, 0}), 16);
    const float *em = mp_session_output(s, 6)->data;
    assert_memory_equal(em, ((float[]){5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}), 48);
    const float *fd = mp_session_output(s, 7)->data;
    for (int i = 0; i < MR * MC; i++)
        assert_true(fd[i] == (float)floor((double)x[i] / 0.75));
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    kh_expect_modes_equal(run_seq_model, 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cumsum_hand),
        cmocka_unit_test(test_cumsum_random),
        cmocka_unit_test(test_cumsum_errors),
        cmocka_unit_test(test_one_hot),
        cmocka_unit_test(test_one_hot_deferred_and_errors),
        cmocka_unit_test(test_topk_hand),
        cmocka_unit_test(test_topk_random),
        cmocka_unit_test(test_topk_errors),
        cmocka_unit_test(test_embedding_lookup),
        cmocka_unit_test(test_embedding_errors),
        cmocka_unit_test(test_model_static_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
