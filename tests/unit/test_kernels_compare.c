/* Tests of the bool-tensor kernels (compare.c): EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER,
 * GREATER_EQUAL (bool outputs, broadcasting, int8 / uint8 compared as TensorFlow Lite's
 * ComparisonWithScaling), LOGICAL_AND / OR / NOT, SELECT (scalar and per-row conditions)
 * and SELECT_V2 (three-way broadcasting): hand-computed values, randomized shapes against
 * a reference written from the definitions index by index (kh_bc_offset), and errors. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static const int32_t k_cmp[6] = {MP_OP_EQUAL,   MP_OP_NOT_EQUAL, MP_OP_LESS,
                                 MP_OP_LESS_EQUAL, MP_OP_GREATER, MP_OP_GREATER_EQUAL};

static bool ref_cmp(int32_t op, double x, double w)
{
    switch (op) {
    case MP_OP_EQUAL: return x == w;
    case MP_OP_NOT_EQUAL: return x != w;
    case MP_OP_LESS: return x < w;
    case MP_OP_LESS_EQUAL: return x <= w;
    case MP_OP_GREATER: return x > w;
    default: return x >= w;
    }
}

/* A two-input case with constant inputs; returns the output. */
static mp_tensor *two(kh_case *c, int32_t op, mp_dtype dt, int32_t ra, const int32_t *da,
                      const void *a, int32_t rb, const int32_t *db, const void *b, mp_dtype out)
{
    kh_init(c, op, NULL);
    kh_input(c, dt, ra, da, a);
    kh_input(c, dt, rb, db, b);
    return kh_output(c, out);
}

static void test_compare_hand(void **state)
{
    (void)state;
    kh_case c;
    /* [2,2] f32 against a scalar 1.5: {1, 2, 1.5, -3} */
    static const float a[4] = {1, 2, 1.5f, -3}, s15 = 1.5f;
    static const uint8_t want[6][4] = {
        {0, 0, 1, 0}, /* == */ {1, 1, 0, 1}, /* != */ {1, 0, 0, 1}, /* <  */
        {1, 0, 1, 1}, /* <= */ {0, 1, 0, 0}, /* >  */ {0, 1, 1, 0}, /* >= */
    };
    for (int k = 0; k < 6; k++) {
        mp_tensor *out = two(&c, k_cmp[k], MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, a, 0, NULL, &s15,
                             MP_DT_BOOL);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->rank, 2);
        assert_memory_equal(out->data, want[k], 4);
        kh_free(&c);
    }
    /* int64 [3] against [2,1] -> [2,3]: {5, 2^40, -1} != {5}, {-1} */
    mp_tensor *out = two(&c, MP_OP_NOT_EQUAL, MP_DT_INT64, 1, (int32_t[]){3},
                         (int64_t[]){5, 1LL << 40, -1}, 2, (int32_t[]){2, 1}, (int64_t[]){5, -1},
                         MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 2);
    assert_int_equal(out->dims[1], 3);
    assert_memory_equal(out->data, ((uint8_t[]){0, 1, 1, 1, 1, 0}), 6);
    kh_free(&c);
    /* bool EQUAL: any non-zero byte is true (2 == 1) */
    out = two(&c, MP_OP_EQUAL, MP_DT_BOOL, 1, (int32_t[]){4}, (uint8_t[]){0, 1, 2, 0}, 1,
              (int32_t[]){4}, (uint8_t[]){0, 1, 1, 1}, MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){1, 1, 1, 0}), 4);
    kh_free(&c);
}

/* 8-bit inputs compared by their scaled values, TensorFlow Lite's ComparisonWithScaling:
 * (q - zp) << 8 times the scale as a quantized multiplier. */
static void test_compare_q8_hand(void **state)
{
    (void)state;
    kh_case c;
    /* scale 0.5 (multiplier 2^30, shift 0): q 1 -> 256 / 2 = 128; scale 0.25 (2^30, shift
     * -1): q 2 -> 512 / 2 / 2 = 128: both 0.5, EQUAL. q 3 at 0.25 -> 192 > 128 */
    static const float sa = 0.5f, sb = 0.25f;
    static const int64_t z = 0;
    mp_tensor *out = two(&c, MP_OP_EQUAL, MP_DT_INT8, 1, (int32_t[]){2}, (int8_t[]){1, 1}, 1,
                         (int32_t[]){2}, (int8_t[]){2, 3}, MP_DT_BOOL);
    kh_quant(&c, c.in[0], 1, &sa, &z, 0);
    kh_quant(&c, c.in[1], 1, &sb, &z, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){1, 0}), 2);
    kh_free(&c);
    /* the resolution is 1/256 of a real unit: 0.01 and 0.011 both scale to 3 (256 * 0.01 =
     * 2.56 and 2.816, each rounded twice: 164 / 64 and 180 / 64), so TensorFlow Lite finds
     * them EQUAL although the real values differ; uint8 with zero point 10 */
    static const float s1 = 0.01f, s2 = 0.011f;
    static const int64_t z10 = 10;
    out = two(&c, MP_OP_EQUAL, MP_DT_UINT8, 1, (int32_t[]){1}, (uint8_t[]){11}, 1,
              (int32_t[]){1}, (uint8_t[]){11}, MP_DT_BOOL);
    kh_quant(&c, c.in[0], 1, &s1, &z10, 0);
    kh_quant(&c, c.in[1], 1, &s2, &z10, 0);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(((uint8_t *)out->data)[0], 1);
    kh_free(&c);
}

/* Random broadcast shapes for every comparison and dtype against the definition; 8-bit
 * inputs against the real values wherever those differ by more than the comparison's
 * resolution (2 / 256: each side rounded to 1/256, twice), where the result is certain. */
static void test_compare_random(void **state)
{
    (void)state;
    static const mp_dtype dts[5] = {MP_DT_FLOAT32, MP_DT_INT32, MP_DT_INT64, MP_DT_INT8,
                                    MP_DT_UINT8};
    uint32_t seed = 31337;
    for (int trial = 0; trial < 300; trial++) {
        const int32_t op = k_cmp[trial % 6];
        const mp_dtype dt = dts[(trial / 6) % 5];
        int32_t ra = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 2), rb = 1, da[4], db[4];
        for (int32_t i = 0; i < ra; i++)
            da[i] = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 2.5f);
        rb = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 0.5f * ra);
        for (int32_t i = 0; i < rb; i++) {
            int32_t j = i + ra - rb;
            db[i] = kh_frand(&seed, 1) < 0 ? 1 : da[j];
            if (kh_frand(&seed, 1) < -0.6f)
                da[j] = 1;
        }
        kh_case c;
        kh_init(&c, op, NULL);
        mp_tensor *a = kh_input(&c, dt, ra, da, NULL), *b = kh_input(&c, dt, rb, db, NULL);
        mp_tensor *out = kh_output(&c, MP_DT_BOOL);
        float sc[2] = {0.01f + 0.1f * (kh_frand(&seed, 1) + 1), 0.01f + 0.1f * (kh_frand(&seed, 1) + 1)};
        int64_t zp[2] = {(int64_t)(kh_frand(&seed, 100)), (int64_t)(kh_frand(&seed, 100))};
        if (dt == MP_DT_UINT8)
            zp[0] += 128, zp[1] += 128;
        mp_tensor *ab[2] = {a, b};
        for (int t = 0; t < 2; t++) {
            if (dt == MP_DT_INT8 || dt == MP_DT_UINT8)
                kh_quant(&c, ab[t], 1, &sc[t], &zp[t], 0);
            for (size_t i = 0, n = mp_tensor_elements(ab[t]); i < n; i++) {
                int32_t v = (int32_t)kh_frand(&seed, 4); /* small values: ties happen */
                switch (dt) {
                case MP_DT_FLOAT32: ((float *)ab[t]->data)[i] = (float)v * 0.5f; break;
                case MP_DT_INT32: ((int32_t *)ab[t]->data)[i] = v; break;
                case MP_DT_INT64: ((int64_t *)ab[t]->data)[i] = (int64_t)v * (1LL << 33); break;
                default: ((uint8_t *)ab[t]->data)[i] = (uint8_t)(kh_frand(&seed, 1) * 128 + 128);
                }
            }
        }
        kh_expect_ok(&c, kh_run(&c));
        const uint8_t *y = out->data;
        for (size_t i = 0, n = mp_tensor_elements(out); i < n; i++) {
            size_t ia = kh_bc_offset(a, out->rank, out->dims, i);
            size_t ib = kh_bc_offset(b, out->rank, out->dims, i);
            double x, w;
            switch (dt) {
            case MP_DT_FLOAT32: x = ((float *)a->data)[ia]; w = ((float *)b->data)[ib]; break;
            case MP_DT_INT32: x = ((int32_t *)a->data)[ia]; w = ((int32_t *)b->data)[ib]; break;
            case MP_DT_INT64:
                x = (double)((int64_t *)a->data)[ia];
                w = (double)((int64_t *)b->data)[ib];
                break;
            case MP_DT_INT8:
                x = sc[0] * (((int8_t *)a->data)[ia] - zp[0]);
                w = sc[1] * (((int8_t *)b->data)[ib] - zp[1]);
                break;
            default:
                x = sc[0] * (((uint8_t *)a->data)[ia] - zp[0]);
                w = sc[1] * (((uint8_t *)b->data)[ib] - zp[1]);
            }
            const bool q8 = dt == MP_DT_INT8 || dt == MP_DT_UINT8;
            if (q8 && fabs(x - w) * 256 <= 2)
                continue; /* within the resolution: either answer is TensorFlow Lite's */
            if (y[i] != ref_cmp(op, x, w))
                fail_msg("op %d dtype %s element %zu: %g vs %g gave %d", op, mp_dtype_name(dt), i,
                         x, w, y[i]);
        }
        kh_free(&c);
    }
}

static void test_logical(void **state)
{
    (void)state;
    kh_case c;
    /* [2,1] AND / OR [3]: rows {1}, {0} against {1, 0, 2} (2 is true) */
    static const uint8_t a[2] = {1, 0}, b[3] = {1, 0, 2};
    mp_tensor *out = two(&c, MP_OP_LOGICAL_AND, MP_DT_BOOL, 2, (int32_t[]){2, 1}, a, 1,
                         (int32_t[]){3}, b, MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){1, 0, 1, 0, 0, 0}), 6);
    kh_free(&c);
    out = two(&c, MP_OP_LOGICAL_OR, MP_DT_BOOL, 2, (int32_t[]){2, 1}, a, 1, (int32_t[]){3}, b,
              MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){1, 1, 1, 1, 0, 1}), 6);
    kh_free(&c);
    kh_init(&c, MP_OP_LOGICAL_NOT, NULL);
    kh_input(&c, MP_DT_BOOL, 1, (int32_t[]){3}, b);
    out = kh_output(&c, MP_DT_BOOL);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((uint8_t[]){0, 1, 0}), 3);
    kh_free(&c);
}

static mp_tensor *sel(kh_case *c, int32_t op, int32_t rc, const int32_t *dc, const uint8_t *cond,
                      mp_dtype dt, int32_t rx, const int32_t *dx, const void *x, int32_t ry,
                      const int32_t *dy, const void *y)
{
    kh_init(c, op, NULL);
    kh_input(c, MP_DT_BOOL, rc, dc, cond);
    kh_input(c, dt, rx, dx, x);
    kh_input(c, dt, ry, dy, y);
    return kh_output(c, dt);
}

static void test_select_hand(void **state)
{
    (void)state;
    kh_case c;
    /* SELECT_V2: cond [2,1] {1,0}, x [1,3] {1,2,3}, y scalar 9 -> [2,3] {1,2,3, 9,9,9} */
    static const float x3[3] = {1, 2, 3}, y9 = 9;
    mp_tensor *out = sel(&c, MP_OP_SELECT_V2, 2, (int32_t[]){2, 1}, (uint8_t[]){1, 0},
                         MP_DT_FLOAT32, 2, (int32_t[]){1, 3}, x3, 0, NULL, &y9);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->dims[0], 2);
    assert_int_equal(out->dims[1], 3);
    assert_memory_equal(out->data, ((float[]){1, 2, 3, 9, 9, 9}), 24);
    kh_free(&c);
    /* SELECT: a vector condition picks rows: [3] {0,1,0} over x, y [3,2] int64 */
    static const int64_t x6[6] = {1, 2, 3, 4, 5, 6}, y6[6] = {-1, -2, -3, -4, -5, -6};
    out = sel(&c, MP_OP_SELECT, 1, (int32_t[]){3}, (uint8_t[]){0, 1, 0}, MP_DT_INT64, 2,
              (int32_t[]){3, 2}, x6, 2, (int32_t[]){3, 2}, y6);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int64_t[]){-1, -2, 3, 4, -5, -6}), 48);
    kh_free(&c);
    /* SELECT: a scalar condition picks everything; elementwise with equal shapes (int8) */
    out = sel(&c, MP_OP_SELECT, 0, NULL, (uint8_t[]){1}, MP_DT_INT64, 2, (int32_t[]){3, 2}, x6,
              2, (int32_t[]){3, 2}, y6);
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, x6, 48);
    kh_free(&c);
    out = sel(&c, MP_OP_SELECT, 1, (int32_t[]){3}, (uint8_t[]){1, 0, 1}, MP_DT_INT8, 1,
              (int32_t[]){3}, (int8_t[]){1, 2, 3}, 1, (int32_t[]){3}, (int8_t[]){-1, -2, -3});
    kh_expect_ok(&c, kh_run(&c));
    assert_memory_equal(out->data, ((int8_t[]){1, -2, 3}), 3);
    kh_free(&c);
}

/* SELECT_V2 over random three-way broadcasts and element sizes against the definition. */
static void test_select_random(void **state)
{
    (void)state;
    static const mp_dtype dts[4] = {MP_DT_UINT8, MP_DT_INT16, MP_DT_FLOAT32, MP_DT_INT64};
    uint32_t seed = 5;
    for (int trial = 0; trial < 200; trial++) {
        const mp_dtype dt = dts[trial % 4];
        int32_t r = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 2), full[4], rk[3], dk[3][4];
        for (int32_t i = 0; i < r; i++)
            full[i] = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 2);
        kh_case c;
        kh_init(&c, MP_OP_SELECT_V2, NULL);
        mp_tensor *t[3];
        for (int k = 0; k < 3; k++) {
            rk[k] = (int32_t)((kh_frand(&seed, 1) + 1) * 0.5f * (float)(r + 1));
            rk[k] = rk[k] > r ? r : rk[k];
            for (int32_t i = 0; i < rk[k]; i++)
                dk[k][i] = kh_frand(&seed, 1) < -0.3f ? 1 : full[i + r - rk[k]];
            t[k] = kh_input(&c, k ? dt : MP_DT_BOOL, rk[k], rk[k] ? dk[k] : NULL, NULL);
            kh_fill_bytes(t[k], (unsigned)(trial * 3 + k));
        }
        mp_tensor *out = kh_output(&c, dt);
        kh_expect_ok(&c, kh_run(&c));
        const size_t es = mp_dtype_size(dt);
        for (size_t i = 0, n = mp_tensor_elements(out); i < n; i++) {
            bool cond = ((uint8_t *)t[0]->data)[kh_bc_offset(t[0], out->rank, out->dims, i)] != 0;
            const mp_tensor *src = cond ? t[1] : t[2];
            size_t j = kh_bc_offset(src, out->rank, out->dims, i);
            if (memcmp((uint8_t *)out->data + i * es, (uint8_t *)src->data + j * es, es))
                fail_msg("trial %d element %zu differs", trial, i);
        }
        kh_free(&c);
    }
}

/* int16 EQUAL, LESS and GREATER_EQUAL compare the stored values, whatever the two tensors'
 * scales (comparisons.cc's Comparison<int16_t>: no rescaling, unlike int8): a (scale 1) =
 * -32768, -5, 100, 32767 against b (scale 1/4) = -32768, 7, 100, -1 gives EQUAL 1 0 1 0,
 * LESS 0 1 0 0, GREATER_EQUAL 1 0 1 1; b broadcast as the one value 100: EQUAL 0 0 1 0.
 * NOT_EQUAL, LESS_EQUAL and GREATER take no int16 in TensorFlow Lite: refused. */
static void test_compare_i16(void **state)
{
    (void)state;
    static const int16_t a[4] = {-32768, -5, 100, 32767}, b[4] = {-32768, 7, 100, -1};
    static const float s1 = 1.0f, s4 = 0.25f;
    static const int64_t z = 0;
    static const struct {
        int32_t op;
        int32_t nb;
        uint8_t want[4];
    } cases[] = {
        {MP_OP_EQUAL, 4, {1, 0, 1, 0}},
        {MP_OP_LESS, 4, {0, 1, 0, 0}},
        {MP_OP_GREATER_EQUAL, 4, {1, 0, 1, 1}},
        {MP_OP_EQUAL, 1, {0, 0, 1, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kh_case c;
        mp_tensor *y = two(&c, cases[k].op, MP_DT_INT16, 1, (int32_t[]){4}, a, 1,
                           &cases[k].nb, cases[k].nb == 1 ? b + 2 : b, MP_DT_BOOL);
        kh_quant(&c, c.in[0], 1, &s1, &z, 0);
        kh_quant(&c, c.in[1], 1, &s4, &z, 0);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(y->data, cases[k].want, 4);
        kh_free(&c);
    }
    static const int32_t refused[3] = {MP_OP_NOT_EQUAL, MP_OP_LESS_EQUAL, MP_OP_GREATER};
    for (int k = 0; k < 3; k++) {
        kh_case c;
        two(&c, refused[k], MP_DT_INT16, 1, (int32_t[]){4}, a, 1, (int32_t[]){4}, b,
            MP_DT_BOOL);
        kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't0' has dtype i16 (supported: f32, i32, "
                        "i64, i8, u8");
        kh_free(&c);
    }
}

static void test_errors(void **state)
{
    (void)state;
    kh_case c;
    static const float f2[2] = {1, 2};
    static const int32_t i2[2] = {1, 2};
    /* inputs of different dtypes */
    two(&c, MP_OP_LESS, MP_DT_FLOAT32, 1, (int32_t[]){2}, f2, 1, (int32_t[]){2}, f2, MP_DT_BOOL);
    c.tensors[1].dtype = MP_DT_INT32;
    c.tensors[1].data = (void *)i2;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "differ in dtype");
    kh_free(&c);
    /* a comparison's output must be bool */
    two(&c, MP_OP_GREATER, MP_DT_FLOAT32, 1, (int32_t[]){2}, f2, 1, (int32_t[]){2}, f2,
        MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "expected bool");
    kh_free(&c);
    /* LESS does not take bool (only EQUAL and NOT_EQUAL do) */
    two(&c, MP_OP_LESS, MP_DT_BOOL, 1, (int32_t[]){2}, (uint8_t[]){0, 1}, 1, (int32_t[]){2},
        (uint8_t[]){0, 1}, MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "supported: f32, i32, i64, i8, u8, i16, f16)");
    kh_free(&c);
    /* shapes that do not broadcast */
    two(&c, MP_OP_EQUAL, MP_DT_FLOAT32, 1, (int32_t[]){2}, f2, 1, (int32_t[]){3},
        (float[]){1, 2, 3}, MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_SHAPE, "cannot broadcast 't0' [2] with 't1' [3]");
    kh_free(&c);
    /* logical operators on floats */
    two(&c, MP_OP_LOGICAL_OR, MP_DT_FLOAT32, 1, (int32_t[]){2}, f2, 1, (int32_t[]){2}, f2,
        MP_DT_BOOL);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "input 't0' is f32, expected bool");
    kh_free(&c);
    /* SELECT: condition not bool; x / y of different shapes; a condition of neither form;
     * SELECT_V2: three shapes that do not broadcast, the message naming the pair */
    sel(&c, MP_OP_SELECT_V2, 1, (int32_t[]){2}, NULL, MP_DT_FLOAT32, 1, (int32_t[]){2}, f2, 1,
        (int32_t[]){2}, f2);
    c.tensors[0].dtype = MP_DT_FLOAT32;
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "condition 't0' is f32");
    kh_free(&c);
    sel(&c, MP_OP_SELECT, 0, NULL, (uint8_t[]){1}, MP_DT_FLOAT32, 1, (int32_t[]){2}, f2, 0, NULL,
        f2);
    kh_expect_error(&c, MP_ERR_SHAPE, "must have the same shape");
    kh_free(&c);
    sel(&c, MP_OP_SELECT, 1, (int32_t[]){3}, (uint8_t[]){1, 0, 1}, MP_DT_FLOAT32, 2,
        (int32_t[]){2, 1}, f2, 2, (int32_t[]){2, 1}, f2);
    kh_expect_error(&c, MP_ERR_SHAPE, "one entry per row");
    kh_free(&c);
    sel(&c, MP_OP_SELECT_V2, 1, (int32_t[]){3}, (uint8_t[]){1, 0, 1}, MP_DT_FLOAT32, 1,
        (int32_t[]){1}, f2, 1, (int32_t[]){2}, f2);
    kh_expect_error(&c, MP_ERR_SHAPE, "cannot broadcast 't0' [3] with 't2' [2]");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_hand), cmocka_unit_test(test_compare_q8_hand),
        cmocka_unit_test(test_compare_random), cmocka_unit_test(test_logical),
        cmocka_unit_test(test_select_hand),  cmocka_unit_test(test_select_random),
        cmocka_unit_test(test_compare_i16),  cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
