/* Tests of MIRROR_PAD, UNPACK, REVERSE_V2 and BROADCAST_TO: hand cases, references written
 * from the definitions (mirrored index, slice along the axis, reversed index, index modulo a
 * broadcast dimension) over random shapes and dtypes, deferred shapes, and refusals. */
#include "tests/util/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

/* ---- MIRROR_PAD ---- */

static void test_mirror_pad_hand(void **state)
{
    (void)state;
    /* {1,2,3} padded 2 / 2: REFLECT {3,2,1,2,3,2,1}, SYMMETRIC {2,1,1,2,3,3,2} */
    static const int32_t pads[2] = {2, 2};
    static const float want[2][7] = {{3, 2, 1, 2, 3, 2, 1}, {2, 1, 1, 2, 3, 3, 2}};
    for (int mode = 0; mode < 2; mode++) {
        kh_case c;
        kh_init(&c, MP_OP_MIRROR_PAD, NULL);
        c.opt.mirror_pad_mode = mode;
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
        memcpy(x->data, (float[]){1, 2, 3}, 12);
        kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, pads);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->dims[0], 7);
        assert_memory_equal(out->data, want[mode], sizeof want[mode]);
        kh_free(&c);
    }
}

/* The input index of output index i, written from mirror_pad.cc's GetInputDimension. */
static int ref_mirror(int i, int lo, int n, int offset)
{
    if (i < lo) {
        int orig = lo + offset - 1;
        return orig - (i < orig - offset ? i : orig - offset);
    }
    i -= lo;
    if (i >= n) {
        i -= n;
        int orig = n - (1 + offset);
        return orig - (i < orig ? i : orig);
    }
    return i;
}

static void test_mirror_pad_random(void **state)
{
    (void)state;
    uint32_t seed = 21;
    for (int trial = 0; trial < 200; trial++) {
        int32_t rank = 1 + kh_irand(&seed, 4), dims[4], odims[4], pads[8];
        int mode = trial & 1, reflect = mode == 0;
        for (int32_t d = 0; d < rank; d++) {
            dims[d] = 1 + kh_irand(&seed, 4);
            pads[2 * d] = kh_irand(&seed, dims[d] - reflect + 1);
            pads[2 * d + 1] = kh_irand(&seed, dims[d] - reflect + 1);
            odims[d] = dims[d] + pads[2 * d] + pads[2 * d + 1];
        }
        mp_dtype dt = trial % 3 == 0 ? MP_DT_INT8 : trial % 3 == 1 ? MP_DT_FLOAT32 : MP_DT_INT64;
        kh_case c;
        kh_init(&c, MP_OP_MIRROR_PAD, NULL);
        c.opt.mirror_pad_mode = mode;
        mp_tensor *x = kh_input(&c, dt, rank, dims, NULL);
        kh_fill_bytes(x, (unsigned)trial);
        mp_tensor *pt = kh_input(&c, MP_DT_INT32, 2, (int32_t[]){rank, 2}, NULL);
        memcpy(pt->data, pads, sizeof(int32_t) * 2 * (size_t)rank);
        mp_tensor *out = kh_output(&c, dt);
        assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED); /* paddings unknown */
        pt->value_known = true;
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->dims, odims, sizeof(int32_t) * (size_t)rank);
        size_t es = mp_dtype_size(dt), total = mp_tensor_elements(out);
        int32_t oi[4] = {0}, ii[4];
        for (size_t f = 0; f < total; f++, kh_next(rank, odims, oi)) {
            for (int32_t d = 0; d < rank; d++)
                ii[d] = ref_mirror(oi[d], pads[2 * d], dims[d], reflect);
            if (memcmp((const uint8_t *)out->data + f * es,
                       (const uint8_t *)x->data + kh_flat(rank, dims, ii) * es, es) != 0)
                fail_msg("trial %d: element %zu differs", trial, f);
        }
        kh_free(&c);
    }
}

static void test_mirror_pad_refusals(void **state)
{
    (void)state;
    /* REFLECT pads at most dims - 1 (3 -> 2), SYMMETRIC at most dims; paddings [rank, 2] */
    static const int32_t p3[2] = {3, 0}, p4[2] = {0, 4}, pneg[2] = {-1, 0}, p1[2] = {1, 1};
    const struct { int mode; const int32_t *p; int32_t rows; const char *needle; } cases[] = {
        {0, p3, 1, "= 3 is not valid for dimension 0 of 't0' [3] in REFLECT mode (0 to 2)"},
        {1, p4, 1, "= 4 is not valid for dimension 0 of 't0' [3] in SYMMETRIC mode (0 to 3)"},
        {1, pneg, 1, "= -1 is not valid"},
        {0, p1, 2, "must be an int32 [1, 2]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kh_case c;
        kh_init(&c, MP_OP_MIRROR_PAD, NULL);
        c.opt.mirror_pad_mode = cases[k].mode;
        kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){3}, NULL);
        kh_input(&c, MP_DT_INT32, 2, (int32_t[]){cases[k].rows, cases[k].rows == 1 ? 2 : 1},
                 cases[k].p);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, MP_ERR_SHAPE, cases[k].needle);
        assert_non_null(strstr(c.err.msg, "MIRROR_PAD"));
        kh_free(&c);
    }
}

/* ---- UNPACK ---- */

static void test_unpack(void **state)
{
    (void)state;
    /* [2,3] {{1,2,3},{4,5,6}}: axis 0 gives {1,2,3}, {4,5,6}; axis -1 (1) {1,4}, {2,5}, {3,6} */
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_UNPACK, NULL);
        c.opt.axis = k ? -1 : 0;
        c.opt.values_count = k ? 3 : 2;
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
        memcpy(x->data, (float[]){1, 2, 3, 4, 5, 6}, 24);
        mp_tensor *o[3];
        for (int j = 0; j < c.opt.values_count; j++)
            o[j] = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        if (k == 0) {
            assert_true(o[0]->rank == 1 && o[0]->dims[0] == 3);
            assert_memory_equal(o[0]->data, ((float[]){1, 2, 3}), 12);
            assert_memory_equal(o[1]->data, ((float[]){4, 5, 6}), 12);
        } else {
            assert_true(o[2]->rank == 1 && o[2]->dims[0] == 2);
            assert_memory_equal(o[0]->data, ((float[]){1, 4}), 8);
            assert_memory_equal(o[1]->data, ((float[]){2, 5}), 8);
            assert_memory_equal(o[2]->data, ((float[]){3, 6}), 8);
        }
        kh_free(&c);
    }
    /* random: output j at index (i without axis) = input at (i with j on the axis) */
    uint32_t seed = 4;
    for (int trial = 0; trial < 100; trial++) {
        int32_t rank = 1 + kh_irand(&seed, 4), dims[4];
        for (int32_t d = 0; d < rank; d++)
            dims[d] = 1 + kh_irand(&seed, 4);
        int32_t axis = kh_irand(&seed, rank);
        mp_dtype dt = trial & 1 ? MP_DT_UINT8 : MP_DT_INT32;
        kh_case c;
        kh_init(&c, MP_OP_UNPACK, NULL);
        c.opt.axis = trial % 3 == 0 ? axis - rank : axis;
        c.opt.values_count = dims[axis];
        mp_tensor *x = kh_input(&c, dt, rank, dims, NULL);
        kh_fill_bytes(x, (unsigned)trial);
        for (int32_t j = 0; j < dims[axis]; j++)
            kh_output(&c, dt);
        kh_expect_ok(&c, kh_run(&c));
        size_t es = mp_dtype_size(dt);
        int32_t odims[4], r = 0, ii[4];
        for (int32_t d = 0; d < rank; d++)
            if (d != axis)
                odims[r++] = dims[d];
        for (int32_t j = 0; j < dims[axis]; j++) {
            mp_tensor *o = c.out[j];
            assert_int_equal(o->rank, rank - 1);
            int32_t oi[4] = {0};
            size_t total = mp_tensor_elements(o);
            for (size_t f = 0; f < total; f++, kh_next(r, odims, oi)) {
                for (int32_t d = 0, q = 0; d < rank; d++)
                    ii[d] = d == axis ? j : oi[q++];
                assert_memory_equal((const uint8_t *)o->data + f * es,
                                    (const uint8_t *)x->data + kh_flat(rank, dims, ii) * es, es);
            }
        }
        kh_free(&c);
    }
    /* refusals: num against the dimension, axis out of range */
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_UNPACK, NULL);
        c.opt.axis = k ? 2 : 0;
        c.opt.values_count = 3;
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
        for (int j = 0; j < 3; j++)
            kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, MP_ERR_SHAPE,
                        k ? "axis 2 is out of range for 't0' [2,3]"
                          : "num is 3 and the operator has 3 outputs, but dimension 0");
        assert_non_null(strstr(c.err.msg, "UNPACK"));
        kh_free(&c);
    }
}

/* ---- REVERSE_V2 ---- */

static void test_reverse(void **state)
{
    (void)state;
    /* [2,3] {{1,2,3},{4,5,6}} reversed along 1: {{3,2,1},{6,5,4}}; along 0 and 1: {6..1} */
    static const int32_t a1[1] = {1}, a01[2] = {0, -1};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_REVERSE_V2, NULL);
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
        memcpy(x->data, (float[]){1, 2, 3, 4, 5, 6}, 24);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){k ? 2 : 1}, k ? a01 : a1);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        const float w0[6] = {3, 2, 1, 6, 5, 4}, w1[6] = {6, 5, 4, 3, 2, 1};
        assert_memory_equal(out->data, k ? w1 : w0, sizeof w0);
        kh_free(&c);
    }
    uint32_t seed = 8;
    for (int trial = 0; trial < 150; trial++) {
        int32_t rank = 1 + kh_irand(&seed, 5), dims[5], axes[5], na = 0;
        bool rev[5];
        for (int32_t d = 0; d < rank; d++) {
            dims[d] = 1 + kh_irand(&seed, 4);
            rev[d] = kh_irand(&seed, 2);
            if (rev[d])
                axes[na++] = trial % 2 ? d - rank : d;
        }
        mp_dtype dt = trial % 3 == 0 ? MP_DT_INT16 : MP_DT_FLOAT32;
        kh_case c;
        kh_init(&c, MP_OP_REVERSE_V2, NULL);
        mp_tensor *x = kh_input(&c, dt, rank, dims, NULL);
        kh_fill_bytes(x, (unsigned)trial);
        mp_tensor *at = kh_input(&c, MP_DT_INT32, 1, (int32_t[]){na}, NULL);
        memcpy(at->data, axes, sizeof(int32_t) * (size_t)na);
        at->value_known = trial % 4 != 0; /* computed while running: the shape is known anyway */
        mp_tensor *out = kh_output(&c, dt);
        assert_int_equal(c.kernel->infer(&c.node), MP_OK);
        at->value_known = true;
        kh_expect_ok(&c, kh_run(&c));
        size_t es = mp_dtype_size(dt), total = mp_tensor_elements(out);
        int32_t oi[5] = {0}, ii[5];
        for (size_t f = 0; f < total; f++, kh_next(rank, dims, oi)) {
            for (int32_t d = 0; d < rank; d++)
                ii[d] = rev[d] ? dims[d] - 1 - oi[d] : oi[d];
            if (memcmp((const uint8_t *)out->data + f * es,
                       (const uint8_t *)x->data + kh_flat(rank, dims, ii) * es, es) != 0)
                fail_msg("trial %d: element %zu differs", trial, f);
        }
        kh_free(&c);
    }
    static const int32_t twice[2] = {1, -1}, far[1] = {2};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_REVERSE_V2, NULL);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){k ? 1 : 2}, k ? far : twice);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, MP_ERR_SHAPE, k ? "= 2 is out of range" : "names dimension 1 twice");
        assert_non_null(strstr(c.err.msg, "REVERSE_V2"));
        kh_free(&c);
    }
}

/* ---- BROADCAST_TO ---- */

static void test_broadcast_to(void **state)
{
    (void)state;
    /* {1,2,3} to [2,3]: {{1,2,3},{1,2,3}}; [2,1] {{1},{2}} to [2,3]: {{1,1,1},{2,2,2}} */
    static const int32_t s23[2] = {2, 3};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_BROADCAST_TO, NULL);
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, k ? 2 : 1, k ? (int32_t[]){2, 1} : (int32_t[]){3},
                                NULL);
        memcpy(x->data, (float[]){1, 2, 3}, k ? 8 : 12);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){2}, s23);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        const float w0[6] = {1, 2, 3, 1, 2, 3}, w1[6] = {1, 1, 1, 2, 2, 2};
        assert_memory_equal(out->data, k ? w1 : w0, sizeof w0);
        kh_free(&c);
    }
    uint32_t seed = 13;
    for (int trial = 0; trial < 150; trial++) {
        int32_t orank = 1 + kh_irand(&seed, 5), irank = 1 + kh_irand(&seed, orank), odims[5], idims[5];
        for (int32_t d = 0; d < orank; d++)
            odims[d] = 1 + kh_irand(&seed, 4);
        for (int32_t d = 0; d < irank; d++)
            idims[d] = kh_irand(&seed, 2) ? 1 : odims[orank - irank + d];
        int64_t shape[5];
        for (int32_t d = 0; d < orank; d++)
            shape[d] = odims[d];
        mp_dtype dt = trial & 1 ? MP_DT_BOOL : MP_DT_FLOAT32;
        kh_case c;
        kh_init(&c, MP_OP_BROADCAST_TO, NULL);
        mp_tensor *x = kh_input(&c, dt, irank, idims, NULL);
        kh_fill_bytes(x, (unsigned)trial);
        mp_tensor *st = kh_input(&c, MP_DT_INT64, 1, (int32_t[]){orank}, NULL);
        memcpy(st->data, shape, sizeof(int64_t) * (size_t)orank);
        mp_tensor *out = kh_output(&c, dt);
        assert_int_equal(c.kernel->infer(&c.node), MP_ERR_DEFERRED);
        st->value_known = true;
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->dims, odims, sizeof(int32_t) * (size_t)orank);
        size_t es = mp_dtype_size(dt), total = mp_tensor_elements(out);
        int32_t oi[5] = {0}, ii[5];
        for (size_t f = 0; f < total; f++, kh_next(orank, odims, oi)) {
            for (int32_t d = 0; d < irank; d++)
                ii[d] = oi[orank - irank + d] % idims[d];
            if (memcmp((const uint8_t *)out->data + f * es,
                       (const uint8_t *)x->data + kh_flat(irank, idims, ii) * es, es) != 0)
                fail_msg("trial %d: element %zu differs", trial, f);
        }
        kh_free(&c);
    }
    static const int32_t bad[2] = {2, 4}, short1[1] = {3};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_BROADCAST_TO, NULL);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){k ? 1 : 2}, k ? short1 : bad);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, MP_ERR_SHAPE,
                        k ? "must be an int32 vector of 2 to 8 entries"
                          : "cannot broadcast 't0' [2,3] to shape 't1'[1] = 4");
        assert_non_null(strstr(c.err.msg, "BROADCAST_TO"));
        kh_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mirror_pad_hand),
        cmocka_unit_test(test_mirror_pad_random),
        cmocka_unit_test(test_mirror_pad_refusals),
        cmocka_unit_test(test_unpack),
        cmocka_unit_test(test_reverse),
        cmocka_unit_test(test_broadcast_to),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
