/* Tests of TRANSPOSE, TILE and SLICE: hand cases, references written from the definitions
 * (out[i_0..] = in[i_perm^-1 ..], out[i] = in[i mod dims], out[i] = in[begin + i]) over random
 * shapes, permutations (negative entries too) and dtypes, deferred shapes while perm /
 * multiples / begin / size are unknown, and errors with messages. */
#include "tests/util/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static void test_hand_transpose(void **state)
{
    (void)state;
    /* [2,3] {{1,2,3},{4,5,6}} with perm {1,0}: {{1,4},{2,5},{3,6}} */
    static const int32_t perm[2] = {1, 0};
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    memcpy(in->data, (float[]){1, 2, 3, 4, 5, 6}, 6 * sizeof(float));
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, perm);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(out->rank == 2 && out->dims[0] == 3 && out->dims[1] == 2);
    const float want[6] = {1, 4, 2, 5, 3, 6};
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);
}

static void test_random_transpose(void **state)
{
    (void)state;
    uint32_t seed = 3;
    static const mp_dtype dts[4] = {MP_DT_FLOAT32, MP_DT_INT8, MP_DT_INT64, MP_DT_INT16};
    for (int trial = 0; trial < 300; trial++) {
        int32_t rank = 1 + kh_irand(&seed, 6), dims[6], perm[6], operm[6];
        for (int32_t i = 0; i < rank; i++) {
            dims[i] = 1 + kh_irand(&seed, 5);
            perm[i] = i;
        }
        for (int32_t i = rank - 1; i > 0; i--) { /* Fisher-Yates */
            int32_t j = kh_irand(&seed, i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (int32_t i = 0; i < rank; i++) /* some entries negative: counted from the end */
            operm[i] = (trial + i) % 3 == 0 ? perm[i] - rank : perm[i];
        mp_dtype dt = dts[trial % 4];
        kh_case c;
        kh_init(&c, MP_OP_TRANSPOSE, NULL);
        mp_tensor *in = kh_input(&c, dt, rank, dims, NULL);
        kh_fill_bytes(in, (unsigned)trial);
        kh_input(&c, trial & 1 ? MP_DT_INT32 : MP_DT_INT32, 1, (int32_t[]){rank}, operm);
        mp_tensor *out = kh_output(&c, dt);
        kh_expect_ok(&c, kh_run(&c));
        size_t es = mp_dtype_size(dt);
        int32_t odims[6], oi[6] = {0}, ii[6];
        for (int32_t j = 0; j < rank; j++)
            odims[j] = dims[perm[j]];
        assert_int_equal(out->rank, rank);
        assert_memory_equal(out->dims, odims, sizeof(int32_t) * (size_t)rank);
        size_t total = mp_tensor_elements(out);
        for (size_t f = 0; f < total; f++, kh_next(rank, odims, oi)) {
            for (int32_t j = 0; j < rank; j++)
                ii[perm[j]] = oi[j];
            const uint8_t *want = (const uint8_t *)in->data + kh_flat(rank, dims, ii) * es;
            if (memcmp((const uint8_t *)out->data + f * es, want, es) != 0)
                fail_msg("trial %d: element %zu differs", trial, f);
        }
        kh_free(&c);
    }
}

static void test_transpose_deferred_and_errors(void **state)
{
    (void)state;
    /* perm computed at run time: the shape waits for it */
    kh_case c;
    kh_init(&c, MP_OP_TRANSPOSE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){1, 2, 3}, NULL);
    mp_tensor *pt = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
    memcpy(pt->data, (int32_t[]){2, 0, 1}, 3 * sizeof(int32_t));
    pt->value_known = true;
    kh_expect_ok(&c, kh_run(&c));
    assert_true(c.out[0]->dims[0] == 3 && c.out[0]->dims[1] == 1 && c.out[0]->dims[2] == 2);
    kh_free(&c);

    static const int32_t dup[3] = {0, 1, 1}, far[3] = {0, 1, 3}, two[2] = {0, 1};
    const struct { const int32_t *perm; int32_t len; const char *needle; } cases[] = {
        {dup, 3, "names dimension 1 twice"},
        {far, 3, "= 3 is out of range"},
        {two, 2, "vector of 3 entries"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kh_init(&c, MP_OP_TRANSPOSE, NULL);
        kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){1, 2, 3}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){cases[k].len}, cases[k].perm);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, MP_ERR_SHAPE, cases[k].needle);
        assert_non_null(strstr(c.err.msg, "TRANSPOSE"));
        kh_free(&c);
    }
}

static void test_tile(void **state)
{
    (void)state;
    /* [2,2] {{1,2},{3,4}} tiled {1,2}: {{1,2,1,2},{3,4,3,4}}; tiled {2,1}: rows repeated */
    static const int32_t m12[2] = {1, 2};
    static const int64_t m21[2] = {2, 1};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_TILE, NULL);
        mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, NULL);
        memcpy(in->data, (float[]){1, 2, 3, 4}, 4 * sizeof(float));
        if (k == 0)
            kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, m12);
        else
            kh_input(&c, MP_DT_INT64, 1, (int32_t[]){2}, m21);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        const float w0[8] = {1, 2, 1, 2, 3, 4, 3, 4}, w1[8] = {1, 2, 3, 4, 1, 2, 3, 4};
        assert_int_equal(out->dims[0], k ? 4 : 2);
        assert_memory_equal(out->data, k ? w1 : w0, sizeof w0);
        kh_free(&c);
    }
    /* random: out[i] = in[i mod dims] */
    uint32_t seed = 11;
    for (int trial = 0; trial < 150; trial++) {
        int32_t rank = 1 + kh_irand(&seed, 4), dims[4], mult[4], odims[4], oi[4] = {0}, ii[4];
        for (int32_t i = 0; i < rank; i++) {
            dims[i] = 1 + kh_irand(&seed, 3);
            mult[i] = kh_irand(&seed, 4); /* 0 gives an empty output */
            odims[i] = dims[i] * mult[i];
        }
        mp_dtype dt = trial & 1 ? MP_DT_UINT8 : MP_DT_INT32;
        kh_case c;
        kh_init(&c, MP_OP_TILE, NULL);
        mp_tensor *in = kh_input(&c, dt, rank, dims, NULL);
        kh_fill_bytes(in, (unsigned)trial);
        mp_tensor *mt = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){rank}, NULL);
        memcpy(mt->data, mult, sizeof(int32_t) * (size_t)rank);
        mp_tensor *out = kh_output(&c, dt);
        /* multiples computed at run time: deferred until known */
        assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
        mt->value_known = true;
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->dims, odims, sizeof(int32_t) * (size_t)rank);
        size_t es = mp_dtype_size(dt), total = mp_tensor_elements(out);
        for (size_t f = 0; f < total; f++, kh_next(rank, odims, oi)) {
            for (int32_t j = 0; j < rank; j++)
                ii[j] = oi[j] % dims[j];
            assert_memory_equal((const uint8_t *)out->data + f * es,
                                (const uint8_t *)in->data + kh_flat(rank, dims, ii) * es, es);
        }
        kh_free(&c);
    }
    static const int32_t negm[2] = {1, -1};
    kh_case c;
    kh_init(&c, MP_OP_TILE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, negm);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "multiples 't1'[1] = -1 is not valid");
    kh_free(&c);
}

static void test_slice(void **state)
{
    (void)state;
    /* [3,4] = 0..11, begin {1,1}, size {2,-1}: rows 1..2, columns 1..3 = {5,6,7,9,10,11} */
    static const int32_t begin[2] = {1, 1}, size[2] = {2, -1};
    kh_case c;
    kh_init(&c, MP_OP_SLICE, NULL);
    mp_tensor *in = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 4}, NULL);
    for (int i = 0; i < 12; i++)
        ((float *)in->data)[i] = (float)i;
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, begin);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, size);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(out->rank == 2 && out->dims[0] == 2 && out->dims[1] == 3);
    const float want[6] = {5, 6, 7, 9, 10, 11};
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);

    /* random boxes, int64 begin/size given at run time (deferred until then) */
    uint32_t seed = 5;
    for (int trial = 0; trial < 150; trial++) {
        int32_t rank = 1 + kh_irand(&seed, 5), dims[5], b[5], s[5], oi[5] = {0}, ii[5];
        int64_t b64[5], s64[5];
        for (int32_t i = 0; i < rank; i++) {
            dims[i] = 1 + kh_irand(&seed, 5);
            b[i] = kh_irand(&seed, dims[i] + 1);
            s[i] = kh_irand(&seed, dims[i] - b[i] + 1);
            b64[i] = b[i];
            s64[i] = (trial + i) % 4 == 0 ? -1 : s[i];
            if (s64[i] == -1)
                s[i] = dims[i] - b[i];
        }
        kh_init(&c, MP_OP_SLICE, NULL);
        in = kh_input(&c, MP_DT_INT16, rank, dims, NULL);
        kh_fill_bytes(in, (unsigned)trial);
        mp_tensor *tb = kh_input(&c, MP_DT_INT64, 1, (int32_t[]){rank}, NULL);
        mp_tensor *ts = kh_input(&c, MP_DT_INT64, 1, (int32_t[]){rank}, NULL);
        memcpy(tb->data, b64, sizeof(int64_t) * (size_t)rank);
        memcpy(ts->data, s64, sizeof(int64_t) * (size_t)rank);
        out = kh_output(&c, MP_DT_INT16);
        assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
        tb->value_known = ts->value_known = true;
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->dims, s, sizeof(int32_t) * (size_t)rank);
        size_t total = mp_tensor_elements(out);
        for (size_t f = 0; f < total; f++, kh_next(rank, s, oi)) {
            for (int32_t j = 0; j < rank; j++)
                ii[j] = b[j] + oi[j];
            assert_memory_equal((const int16_t *)out->data + f,
                                (const int16_t *)in->data + kh_flat(rank, dims, ii), 2);
        }
        kh_free(&c);
    }

    static const int32_t over[2] = {2, 0}, sz2[2] = {2, 1};
    kh_init(&c, MP_OP_SLICE, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 4}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, over);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, sz2);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "begin 2 and size 2 of dimension 0");
    assert_non_null(strstr(c.err.msg, "SLICE"));
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_transpose),
        cmocka_unit_test(test_random_transpose),
        cmocka_unit_test(test_transpose_deferred_and_errors),
        cmocka_unit_test(test_tile),
        cmocka_unit_test(test_slice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
