/* Tests of GATHER and GATHER_ND: hand cases, a reference written from the definition
 * (out[b][o][c][i] = params[b][o][indices[b][c]][i]) over random shapes, axes (negative too)
 * and batch_dims, int64 indices, int8 with its quantization kept, out-of-range indices refused
 * with a message before anything is read, and shape errors. */
#include "tests/util/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tests/util/kernel_harness.h"

static void test_hand_gather(void **state)
{
    (void)state;
    /* params [3,2] = {{1,2},{3,4},{5,6}}, indices {2,0,2} along axis 0: {{5,6},{1,2},{5,6}} */
    static const int32_t idx[3] = {2, 0, 2};
    kh_case c;
    kh_init(&c, MP_OP_GATHER, NULL);
    mp_tensor *p = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    memcpy(p->data, (float[]){1, 2, 3, 4, 5, 6}, 6 * sizeof(float));
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){3}, idx);
    mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_true(out->dims[0] == 3 && out->dims[1] == 2);
    const float want[6] = {5, 6, 1, 2, 5, 6};
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);

    /* axis -1 of the same params with a [2,2] int64 indices {{1,0},{1,1}}: output [3,2,2],
     * row r -> {{x[r][1], x[r][0]}, {x[r][1], x[r][1]}} */
    static const int64_t idx2[4] = {1, 0, 1, 1};
    kh_init(&c, MP_OP_GATHER, NULL);
    c.opt.axis = -1;
    p = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    memcpy(p->data, (float[]){1, 2, 3, 4, 5, 6}, 6 * sizeof(float));
    kh_input(&c, MP_DT_INT64, 2, (int32_t[]){2, 2}, idx2);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 3);
    const float want2[12] = {2, 1, 2, 2, 4, 3, 4, 4, 6, 5, 6, 6};
    assert_memory_equal(out->data, want2, sizeof want2);
    kh_free(&c);

    /* batch_dims 1, axis 1: params [2,3] {{1,2,3},{4,5,6}}, indices [2,2] {{2,0},{1,1}}:
     * out[b] = params[b][indices[b]] = {{3,1},{5,5}} */
    static const int32_t idx3[4] = {2, 0, 1, 1};
    kh_init(&c, MP_OP_GATHER, NULL);
    c.opt.axis = 1;
    c.opt.batch_dims = -1; /* = 1 for indices of rank 2 */
    p = kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 3}, NULL);
    memcpy(p->data, (float[]){1, 2, 3, 4, 5, 6}, 6 * sizeof(float));
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, idx3);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_true(out->dims[0] == 2 && out->dims[1] == 2);
    const float want3[4] = {3, 1, 5, 5};
    assert_memory_equal(out->data, want3, sizeof want3);
    kh_free(&c);
}

/* Reference gather from the definition, on element indices (es bytes each). */
static void ref_gather(const uint8_t *p, const int32_t *pd, int32_t pr, const int32_t *ix,
                       const int32_t *id, int32_t ir, int32_t axis, int32_t bd, size_t es,
                       uint8_t *out)
{
    size_t batch = 1, outer = 1, inner = es, coords = 1;
    for (int32_t i = 0; i < bd; i++)
        batch *= (size_t)pd[i];
    for (int32_t i = bd; i < axis; i++)
        outer *= (size_t)pd[i];
    for (int32_t i = axis + 1; i < pr; i++)
        inner *= (size_t)pd[i];
    for (int32_t i = bd; i < ir; i++)
        coords *= (size_t)id[i];
    size_t at = 0;
    for (size_t b = 0; b < batch; b++)
        for (size_t o = 0; o < outer; o++)
            for (size_t c = 0; c < coords; c++) {
                size_t src = ((b * outer + o) * (size_t)pd[axis] + (size_t)ix[b * coords + c]);
                for (size_t k = 0; k < inner; k++)
                    out[at++] = p[src * inner + k];
            }
}

static void test_random_gather(void **state)
{
    (void)state;
    uint32_t seed = 7;
    for (int trial = 0; trial < 200; trial++) {
        int32_t pr = 1 + (int32_t)(kh_frand(&seed, 1) * 2 + 2) % 4, pd[4], id[4], ir;
        for (int32_t i = 0; i < pr; i++)
            pd[i] = 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 2);
        int32_t axis = (int32_t)((kh_frand(&seed, 1) + 1) * 8) % pr;
        int32_t bd = axis > 0 ? (int32_t)((kh_frand(&seed, 1) + 1) * 8) % (axis + 1) : 0;
        ir = bd + (int32_t)((kh_frand(&seed, 1) + 1) * 8) % 3;
        for (int32_t i = 0; i < ir; i++)
            id[i] = i < bd ? pd[i] : 1 + (int32_t)((kh_frand(&seed, 1) + 1) * 2);
        mp_dtype dt = trial % 3 == 0 ? MP_DT_INT8 : trial % 3 == 1 ? MP_DT_FLOAT32 : MP_DT_INT64;
        kh_case c;
        kh_init(&c, MP_OP_GATHER, NULL);
        c.opt.axis = trial & 1 ? axis - pr : axis; /* negative half of the time */
        c.opt.batch_dims = bd;
        mp_tensor *p = kh_input(&c, dt, pr, pd, NULL);
        kh_fill_bytes(p, (unsigned)trial);
        mp_tensor *ix = kh_input(&c, MP_DT_INT32, ir, id, NULL);
        size_t nix = mp_tensor_elements(ix);
        for (size_t i = 0; i < nix; i++)
            ((int32_t *)ix->data)[i] = (int32_t)((kh_frand(&seed, 1) + 1) * 50) % pd[axis];
        static const float scale = 0.5f;
        static const int64_t zp = -3;
        mp_tensor *out = kh_output(&c, dt);
        if (dt == MP_DT_INT8) {
            kh_quant(&c, p, 1, &scale, &zp, 0);
            kh_quant(&c, out, 1, &scale, &zp, 0);
        }
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->rank, pr - 1 + ir - bd);
        uint8_t *want = malloc(out->bytes + 1);
        ref_gather(p->data, pd, pr, ix->data, id, ir, axis, bd, mp_dtype_size(dt), want);
        assert_memory_equal(out->data, want, out->bytes);
        free(want);
        kh_free(&c);
    }
}

static void test_gather_errors(void **state)
{
    (void)state;
    static const int32_t bad[3] = {0, 3, 1};
    static const int32_t neg[2] = {1, -1};
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, MP_OP_GATHER, NULL);
        kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
        kh_input(&c, MP_DT_INT32, 1, (int32_t[]){k ? 2 : 3}, k ? neg : bad);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        /* the shape is known; the run refuses the index, naming the operator and the index */
        kh_expect_ok(&c, c.kernel->infer(&c.node));
        assert_int_equal(out->rank, 2);
        kh_expect_error(&c, MP_ERR_SHAPE, k ? "index -1 (element 1" : "index 3 (element 1");
        assert_non_null(strstr(c.err.msg, "operator #0 GATHER"));
        kh_free(&c);
    }
    /* axis out of range, batch_dims > axis, batch dimensions that differ, float indices */
    kh_case c;
    kh_init(&c, MP_OP_GATHER, NULL);
    c.opt.axis = 2;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, bad);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "axis 2 is out of range");
    kh_free(&c);
    kh_init(&c, MP_OP_GATHER, NULL);
    c.opt.batch_dims = 1;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){3, 1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "batch_dims 1 must not exceed axis 0");
    kh_free(&c);
    kh_init(&c, MP_OP_GATHER, NULL);
    c.opt.batch_dims = 1;
    c.opt.axis = 1;
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "differ in batch dimension 0");
    kh_free(&c);
    kh_init(&c, MP_OP_GATHER, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){3, 2}, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){1}, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "indices 't1' are f32");
    kh_free(&c);
    /* int8 output with other parameters than the params' */
    static const float s1 = 0.5f, s2 = 0.25f;
    static const int64_t z = 0;
    kh_init(&c, MP_OP_GATHER, NULL);
    mp_tensor *p = kh_input(&c, MP_DT_INT8, 1, (int32_t[]){3}, NULL);
    kh_input(&c, MP_DT_INT32, 1, (int32_t[]){1}, neg);
    mp_tensor *out = kh_output(&c, MP_DT_INT8);
    kh_quant(&c, p, 1, &s1, &z, 0);
    kh_quant(&c, out, 1, &s2, &z, 0);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, NULL);
    kh_free(&c);
}

static void test_gather_nd(void **state)
{
    (void)state;
    /* params [2,2,2] = 0..7; indices [[1,0],[0,1],[1,1]] (nd 2): rows x[1][0], x[0][1],
     * x[1][1] = {4,5},{2,3},{6,7} */
    static const int32_t idx[6] = {1, 0, 0, 1, 1, 1};
    kh_case c;
    kh_init(&c, MP_OP_GATHER_ND, NULL);
    mp_tensor *p = kh_input(&c, MP_DT_INT32, 3, (int32_t[]){2, 2, 2}, NULL);
    for (int i = 0; i < 8; i++)
        ((int32_t *)p->data)[i] = i;
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){3, 2}, idx);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_true(out->dims[0] == 3 && out->dims[1] == 2);
    const int32_t want[6] = {4, 5, 2, 3, 6, 7};
    assert_memory_equal(out->data, want, sizeof want);
    kh_free(&c);

    /* full depth (nd 3), int64 indices [2,1,3]: scalars x[1][1][0] = 6 and x[0][0][1] = 1 */
    static const int64_t idx2[6] = {1, 1, 0, 0, 0, 1};
    kh_init(&c, MP_OP_GATHER_ND, NULL);
    p = kh_input(&c, MP_DT_FLOAT32, 3, (int32_t[]){2, 2, 2}, NULL);
    for (int i = 0; i < 8; i++)
        ((float *)p->data)[i] = (float)i;
    kh_input(&c, MP_DT_INT64, 3, (int32_t[]){2, 1, 3}, idx2);
    out = kh_output(&c, MP_DT_FLOAT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_int_equal(out->rank, 2);
    assert_true(((float *)out->data)[0] == 6.0f && ((float *)out->data)[1] == 1.0f);
    kh_free(&c);

    /* out of range in the second coordinate; too deep an index */
    static const int32_t bad[4] = {0, 0, 1, 2};
    kh_init(&c, MP_OP_GATHER_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 2, (int32_t[]){2, 2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){2, 2}, bad);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "index 2 (tuple 1, position 1");
    kh_free(&c);
    kh_init(&c, MP_OP_GATHER_ND, NULL);
    kh_input(&c, MP_DT_FLOAT32, 1, (int32_t[]){2}, NULL);
    kh_input(&c, MP_DT_INT32, 2, (int32_t[]){1, 2}, bad);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_SHAPE, "index 2 dimensions");
    kh_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_gather),
        cmocka_unit_test(test_random_gather),
        cmocka_unit_test(test_gather_errors),
        cmocka_unit_test(test_gather_nd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
