/* Tests of sparse constant tensors (model/tflite_sparsity.c) and DENSIFY (kernels/convert.c):
 * models written with the writer's SparsityParameters, loaded, and their dense constants
 * compared with matrices worked out by hand from the format's definition (TensorFlow Lite's
 * 4x4 block-sparse int8 example of testdata/sparse_tensor.json; a CSR matrix row-major and
 * column-major with 8-, 16- and 32-bit index vectors; a float16 tensor shaped as MediaPipe's
 * sparse 1x1 convolution filters) and with random matrices encoded by a CSR encoder restated
 * here; the dense copy counted as heap-held model bytes, not as constants used in place;
 * DENSIFY on the kernel harness (dtypes, refusals); DENSIFY feeding FULLY_CONNECTED and a
 * sparse FULLY_CONNECTED weight used directly, each giving the dense model's outputs in static
 * and dynamic modes; and the reader's refusals of faulty sparsity with their messages. */
#include "tests/util/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

/* ---- models of one sparse constant ------------------------------------------------------- */

/* Tensor 0 is the sparse constant w (dtype dt, shape dims, sparsity s, the values' bytes);
 * DENSIFY(w) -> y, the model's output. */
static void *sparse_model(mp_dtype dt, int rank, const int32_t *dims, const mp_tfw_sparsity *s,
                          const void *values, size_t bytes, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int t = mp_tfw_tensor(w, "w", dt, rank, dims, 0, NULL);
    mp_tfw_tensor_sparsity(w, t, bytes ? mp_tfw_buffer(w, values, bytes) : 0, s);
    int y = mp_tfw_tensor(w, "y", dt, rank, dims, 0, NULL);
    mp_tfw_op(w, MP_OP_DENSIFY, 1, &t, 1, &y, NULL);
    mp_tfw_io(w, 0, NULL, 1, &y);
    void *out = NULL;
    mp_error err = {0};
    if (mp_tfw_finish(w, &out, size, &err) != MP_OK)
        fail_msg("writer: %s", err.msg);
    mp_tfw_free(w);
    return out;
}

static mp_status load_sparse(mp_dtype dt, int rank, const int32_t *dims, const mp_tfw_sparsity *s,
                             const void *values, size_t bytes, mp_model **m, mp_error *err)
{
    size_t size;
    void *file = sparse_model(dt, rank, dims, s, values, bytes, &size);
    mp_status st = mp_model_load_memory(file, size, "sparse.tflite", m, err);
    free(file);
    return st;
}

/* Load, expect the dense constant `want` (dense bytes) and run DENSIFY through a session in
 * static and dynamic modes: its output is the same bytes. */
static void expect_dense(mp_dtype dt, int rank, const int32_t *dims, const mp_tfw_sparsity *s,
                         const void *values, size_t bytes, const void *want, size_t dense)
{
    mp_model *m = NULL;
    mp_error err = {0};
    if (load_sparse(dt, rank, dims, s, values, bytes, &m, &err) != MP_OK)
        fail_msg("load: %s", err.msg);
    const mp_tensor_info *t = &m->tensors[0];
    assert_int_equal(t->data_bytes, dense);
    assert_memory_equal(t->data, want, dense);
    /* held on the heap with the model's tables, not a constant used in place */
    assert_int_equal(m->dense_bytes, dense);
    assert_int_equal(m->const_bytes, 0);
    assert_true(m->heap_bytes >= dense);
    mp_model_free(m);

    for (int mode = 0; mode < 2; mode++) {
        size_t size;
        void *file = sparse_model(dt, rank, dims, s, values, bytes, &size);
        mp_session *ss = kh_session(mode ? MP_MEMORY_DYNAMIC : MP_MEMORY_STATIC, file, size,
                                    "sparse");
        if (mp_session_run(ss, &err) != MP_OK)
            fail_msg("run: %s", err.msg);
        const mp_tensor *y = mp_session_output(ss, 0);
        assert_int_equal(y->bytes, dense);
        assert_memory_equal(y->data, want, dense);
        mp_session_destroy(ss);
    }
}

static void expect_refused(mp_dtype dt, int rank, const int32_t *dims, const mp_tfw_sparsity *s,
                           const void *values, size_t bytes, mp_status want, const char *needle)
{
    mp_model *m = NULL;
    mp_error err = {0};
    mp_status st = load_sparse(dt, rank, dims, s, values, bytes, &m, &err);
    if (st != want || !strstr(err.msg, needle))
        fail_msg("expected status %d mentioning '%s', got %d: %s", want, needle, st, err.msg);
    assert_null(m);
}

#define DENSE(n) ((mp_tfw_sparse_dim){.sparse = 0, .dense_size = (n)})
#define CSR(bits, seg, idx)                                                                   \
    ((mp_tfw_sparse_dim){.sparse = 1, .index_bits = (bits),                                   \
                         .n_segments = (int)(sizeof(seg) / sizeof(int32_t)), .segments = (seg), \
                         .n_indices = (int)(sizeof(idx) / sizeof(int32_t)), .indices = (idx)})

/* ---- hand cases ----------------------------------------------------------------------------- */

/* TensorFlow Lite's testdata/sparse_tensor.json: a 4x4 int8 matrix in 2x2 blocks (block_map
 * [0, 1]), block rows dense, block columns CSR: block row 0 holds block columns 0 and 1, block
 * row 1 block column 1; each block's 4 values row-major. So blocks (0,0) = [1 0; 0 4],
 * (0,1) = [2 3; 0 0], (1,1) = [5 0; 0 6], the others zero. */
static void test_tflite_4x4_int8_blocks(void **state)
{
    (void)state;
    const int32_t dims[2] = {4, 4}, order[4] = {0, 1, 2, 3}, bmap[2] = {0, 1};
    const int32_t seg[3] = {0, 2, 3}, idx[3] = {0, 1, 1};
    const mp_tfw_sparse_dim dm[4] = {DENSE(2), CSR(32, seg, idx), DENSE(2), DENSE(2)};
    const mp_tfw_sparsity s = {4, 2, 4, order, bmap, dm};
    const int8_t values[12] = {1, 0, 0, 4, 2, 3, 0, 0, 5, 0, 0, 6};
    const int8_t want[16] = {1, 0, 2, 3,
                             0, 4, 0, 0,
                             0, 0, 5, 0,
                             0, 0, 0, 6};
    expect_dense(MP_DT_INT8, 2, dims, &s, values, sizeof values, want, sizeof want);
}

/* A 3x5 float matrix
 *     0    1.5  0  0     -2
 *     0    0    0  0      0
 *     3    0    0  0.25   0
 * stored as CSR (rows dense, columns sparse) and as CSC (traversal [1, 0]: columns dense, rows
 * sparse), with each width of index vector. */
static void test_csr_and_csc(void **state)
{
    (void)state;
    const int32_t dims[2] = {3, 5};
    const float want[15] = {0, 1.5f, 0, 0, -2, 0, 0, 0, 0, 0, 3, 0, 0, 0.25f, 0};
    const int bits[3] = {8, 16, 32};
    for (int b = 0; b < 3; b++) {
        const int32_t order[2] = {0, 1}, seg[4] = {0, 2, 2, 4}, idx[4] = {1, 4, 0, 3};
        const mp_tfw_sparse_dim dm[2] = {DENSE(3), CSR(bits[b], seg, idx)};
        const mp_tfw_sparsity s = {2, 0, 2, order, NULL, dm};
        const float values[4] = {1.5f, -2, 3, 0.25f};
        expect_dense(MP_DT_FLOAT32, 2, dims, &s, values, sizeof values, want, sizeof want);

        const int32_t corder[2] = {1, 0}, cseg[6] = {0, 1, 2, 2, 3, 4}, cidx[4] = {2, 0, 2, 0};
        const mp_tfw_sparse_dim cdm[2] = {DENSE(5), CSR(bits[b], cseg, cidx)};
        const mp_tfw_sparsity cs = {2, 0, 2, corder, NULL, cdm};
        const float cvalues[4] = {3, 1.5f, 0.25f, -2};
        expect_dense(MP_DT_FLOAT32, 2, dims, &cs, cvalues, sizeof cvalues, want, sizeof want);
    }
}

/* Column indices past 255 need a Uint16Vector: a 2x300 int8 matrix with 7 at (0, 0) and 9 at
 * (0, 299), -1 at (1, 256). */
static void test_uint16_indices(void **state)
{
    (void)state;
    const int32_t dims[2] = {2, 300}, order[2] = {0, 1}, seg[3] = {0, 2, 3};
    const int32_t idx[3] = {0, 299, 256};
    const mp_tfw_sparse_dim dm[2] = {DENSE(2), CSR(16, seg, idx)};
    const mp_tfw_sparsity s = {2, 0, 2, order, NULL, dm};
    const int8_t values[3] = {7, 9, -1};
    int8_t want[600] = {0};
    want[0] = 7;
    want[299] = 9;
    want[300 + 256] = -1;
    expect_dense(MP_DT_INT8, 2, dims, &s, values, sizeof values, want, sizeof want);
}

/* float16 filters shaped as MediaPipe's sparse face detector's 1x1 convolutions: [2,1,1,4],
 * levels DENSE 2, DENSE 1, DENSE 1, CSR over the input channels with Uint8Vector indices.
 * Row 0 holds channels 1 and 3, row 1 channel 0. The values are float16 bit patterns. */
static void test_float16_filter(void **state)
{
    (void)state;
    const int32_t dims[4] = {2, 1, 1, 4}, order[4] = {0, 1, 2, 3};
    const int32_t seg[3] = {0, 2, 3}, idx[3] = {1, 3, 0};
    const mp_tfw_sparse_dim dm[4] = {DENSE(2), DENSE(1), DENSE(1), CSR(8, seg, idx)};
    const mp_tfw_sparsity s = {4, 0, 4, order, NULL, dm};
    const uint16_t values[3] = {0x3c00 /* 1 */, 0xc000 /* -2 */, 0x3800 /* 0.5 */};
    const uint16_t want[8] = {0, 0x3c00, 0, 0xc000, 0x3800, 0, 0, 0};
    expect_dense(MP_DT_FLOAT16, 4, dims, &s, values, sizeof values, want, sizeof want);
}

/* ---- random matrices against an encoder restated from the format --------------------------- */

/* Encode rows x cols (cols a multiple of bc) in blocks of 1 x bc along dimension 1: rows dense,
 * block columns CSR (a block kept when any of its values is not zero), each kept block's bc
 * values in order. Returns the number of kept blocks; seg has rows + 1 entries. */
static int encode_blocks(const float *x, int rows, int cols, int bc, int32_t *seg, int32_t *idx,
                         float *values)
{
    int kept = 0;
    seg[0] = 0;
    for (int r = 0; r < rows; r++) {
        for (int b = 0; b < cols / bc; b++) {
            const float *blk = x + (size_t)r * (size_t)cols + (size_t)(b * bc);
            bool any = false;
            for (int k = 0; k < bc; k++)
                any = any || blk[k] != 0.0f;
            if (!any)
                continue;
            idx[kept] = b;
            memcpy(values + (size_t)kept * (size_t)bc, blk, (size_t)bc * sizeof *values);
            kept++;
        }
        seg[r + 1] = kept;
    }
    return kept;
}

static void test_random_round_trip(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    for (int iter = 0; iter < 60; iter++) {
        const int bc = (int[]){1, 2, 4}[kh_irand(&seed, 3)];
        const int rows = 1 + kh_irand(&seed, 9), cols = bc * (1 + kh_irand(&seed, 12));
        float x[9 * 48];
        for (int i = 0; i < rows * cols; i++)
            x[i] = kh_irand(&seed, 3) == 0 ? kh_frand(&seed, 4.0f) : 0.0f;
        int32_t seg[10], idx[9 * 48];
        float values[9 * 48];
        const int kept = encode_blocks(x, rows, cols, bc, seg, idx, values);
        const int bits = (int[]){8, 16, 32}[kh_irand(&seed, 3)];
        const mp_tfw_sparse_dim dim1 = {.sparse = 1, .index_bits = bits, .n_segments = rows + 1,
                                        .segments = seg, .n_indices = kept, .indices = idx};
        const int32_t dims[2] = {rows, cols}, order[3] = {0, 1, 2}, bmap[1] = {1};
        const mp_tfw_sparse_dim dm[3] = {DENSE(rows), dim1, DENSE(bc)};
        const mp_tfw_sparsity s = {bc > 1 ? 3 : 2, bc > 1 ? 1 : 0, bc > 1 ? 3 : 2, order, bmap, dm};
        if (kept == 0) { /* no values: the tensor has no data, refused as TensorFlow Lite does */
            expect_refused(MP_DT_FLOAT32, 2, dims, &s, NULL, 0, MP_ERR_FORMAT, "has no data");
            continue;
        }
        expect_dense(MP_DT_FLOAT32, 2, dims, &s, values, (size_t)(kept * bc) * sizeof(float), x,
                     (size_t)(rows * cols) * sizeof(float));
    }
}

/* ---- DENSIFY on the harness ------------------------------------------------------------------ */

static void test_densify_kernel(void **state)
{
    (void)state;
    const mp_dtype dts[4] = {MP_DT_FLOAT32, MP_DT_FLOAT16, MP_DT_INT8, MP_DT_INT64};
    const int32_t dims[3] = {2, 3, 4};
    for (int k = 0; k < 4; k++) {
        uint8_t data[24 * 8];
        for (size_t i = 0; i < sizeof data; i++)
            data[i] = (uint8_t)(i * 29 + 7 + (size_t)k);
        kh_case c;
        kh_init(&c, MP_OP_DENSIFY, NULL);
        kh_input(&c, dts[k], 3, dims, data);
        mp_tensor *out = kh_output(&c, dts[k]);
        kh_expect_ok(&c, kh_run(&c));
        assert_int_equal(out->rank, 3);
        assert_memory_equal(out->dims, dims, sizeof dims);
        assert_int_equal(out->bytes, 24 * mp_dtype_size(dts[k]));
        assert_memory_equal(out->data, data, out->bytes);
        kh_free(&c);
    }
    kh_case c;
    /* the input must be a constant (TensorFlow Lite's Prepare) */
    kh_init(&c, MP_OP_DENSIFY, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, dims, NULL);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "input 't0' is not a constant");
    kh_free(&c);
    const float f[24] = {0};
    kh_init(&c, MP_OP_DENSIFY, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, dims, f);
    kh_output(&c, MP_DT_INT8);
    kh_expect_error(&c, MP_ERR_UNSUPPORTED, "is i8 but input");
    kh_free(&c);
    kh_init(&c, MP_OP_DENSIFY, NULL);
    kh_input(&c, MP_DT_FLOAT32, 3, dims, f);
    kh_input(&c, MP_DT_FLOAT32, 3, dims, f);
    kh_output(&c, MP_DT_FLOAT32);
    kh_expect_error(&c, MP_ERR_FORMAT, "expects 1 to 1 inputs, has 2");
    kh_free(&c);
}

/* ---- FULLY_CONNECTED with a sparse weight ---------------------------------------------------- */

enum { FB = 2, FI = 8, FO = 4 };

/* W [4, 8], zero except in some 1x4 blocks:
 *     row 0: 0 0 0 0 | 1    2 3    4      (block column 1)
 *     row 1: .5 0 0 -1 | 0  0 0    0      (block column 0)
 *     row 2: all zero
 *     row 3: 2 2 2 2 | -3   0 0.25 0      (both) */
static const float fc_w[FO * FI] = {0, 0, 0, 0, 1, 2, 3, 4,     0.5f, 0, 0, -1, 0, 0, 0, 0,
                                    0, 0, 0, 0, 0, 0, 0, 0,     2, 2, 2, 2, -3, 0, 0.25f, 0};
static const float fc_b[FO] = {0.5f, -1, 0, 2};

/* form 0: W dense; 1: W sparse -> DENSIFY -> FULLY_CONNECTED; 2: W sparse in FULLY_CONNECTED
 * directly. x [2, 8] in, y [2, 4] out. */
static void *fc_model(int form, size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    const int32_t dx[2] = {FB, FI}, dw[2] = {FO, FI}, db = FO, dy[2] = {FB, FO};
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, dx, 0, NULL);
    int wt;
    if (form == 0) {
        wt = mp_tfw_tensor(w, "w", MP_DT_FLOAT32, 2, dw, mp_tfw_buffer(w, fc_w, sizeof fc_w), NULL);
    } else {
        static const int32_t order[3] = {0, 1, 2}, bmap[1] = {1}, seg[5] = {0, 1, 2, 2, 4};
        static const int32_t idx[4] = {1, 0, 0, 1};
        static const float values[16] = {1, 2, 3, 4, 0.5f, 0, 0, -1, 2, 2, 2, 2, -3, 0, 0.25f, 0};
        const mp_tfw_sparse_dim dm[3] = {DENSE(FO), CSR(8, seg, idx), DENSE(4)};
        const mp_tfw_sparsity s = {3, 1, 3, order, bmap, dm};
        wt = mp_tfw_tensor(w, "w_sparse", MP_DT_FLOAT32, 2, dw, 0, NULL);
        mp_tfw_tensor_sparsity(w, wt, mp_tfw_buffer(w, values, sizeof values), &s);
        if (form == 1) {
            int wd = mp_tfw_tensor(w, "w", MP_DT_FLOAT32, 2, dw, 0, NULL);
            mp_tfw_op(w, MP_OP_DENSIFY, 1, &wt, 1, &wd, NULL);
            wt = wd;
        }
    }
    int b = mp_tfw_tensor(w, "b", MP_DT_FLOAT32, 1, &db, mp_tfw_buffer(w, fc_b, sizeof fc_b), NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, dy, 0, NULL);
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){x, wt, b}, 1, &y, NULL);
    mp_tfw_io(w, 1, &x, 1, &y);
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

static void run_fc(int form, mp_memory_mode mode, float y[FB * FO])
{
    size_t size;
    void *bytes = fc_model(form, &size);
    mp_session *s = kh_session(mode, bytes, size, "fc");
    mp_error err = {0};
    const float x[FB * FI] = {1, -2, 0.5f, 3, -1, 0.25f, 2, -0.5f,
                              0, 1, 1, -1, 4, -3, 0.75f, 2};
    for (int r = 0; r < 2; r++) {
        assert_int_equal(mp_session_set_input(s, 0, x, sizeof x, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run (form %d, %s): %s", form, mp_memory_mode_name(mode), err.msg);
    }
    memcpy(y, mp_session_output(s, 0)->data, sizeof(float) * FB * FO);
    mp_session_destroy(s);
    /* against the plain dot products */
    float want[FB * FO];
    for (int i = 0; i < FB; i++)
        for (int o = 0; o < FO; o++) {
            double acc = fc_b[o];
            for (int k = 0; k < FI; k++)
                acc += (double)x[i * FI + k] * fc_w[o * FI + k];
            want[i * FO + o] = (float)acc;
        }
    kh_expect_close(y, want, FB * FO, 1.0);
}

static void test_fc_sparse_weights(void **state)
{
    (void)state;
    float dense[FB * FO], y[FB * FO];
    run_fc(0, MP_MEMORY_STATIC, dense);
    for (int form = 0; form < 3; form++)
        for (int mode = 0; mode < 2; mode++) {
            run_fc(form, mode ? MP_MEMORY_DYNAMIC : MP_MEMORY_STATIC, y);
            assert_memory_equal(y, dense, sizeof y);
        }
}

/* ---- refusals --------------------------------------------------------------------------------- */

static void test_refusals(void **state)
{
    (void)state;
    const int32_t dims[2] = {3, 5}, order[2] = {0, 1}, seg[4] = {0, 2, 2, 4};
    const int32_t idx[4] = {1, 4, 0, 3};
    const float values[4] = {1.5f, -2, 3, 0.25f};
    mp_tfw_sparse_dim dm[3] = {DENSE(3), CSR(32, seg, idx), DENSE(1)};
    mp_tfw_sparsity s = {2, 0, 2, order, NULL, dm};
    const mp_status F = MP_ERR_FORMAT;

    /* traversal_order not a permutation; of the wrong length */
    const int32_t twice[2] = {0, 0}, out_of_rank[2] = {0, 2};
    s.traversal_order = twice;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "tensor 0 'w': sparsity traversal_order [0,0] is not a permutation");
    s.traversal_order = out_of_rank;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F, "traversal_order [0,2]");
    s.traversal_order = order;
    s.n_order = 1;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F, "traversal_order [0]");
    s.n_order = 2;
    /* dim_metadata count */
    s.n_dims = 3;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "dim_metadata has 3 levels but traversal_order has 2");
    s.n_dims = 2;
    /* a DENSE level of the wrong size */
    dm[0].dense_size = 4;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "level 0 is DENSE with dense_size 4 but dimension 0 has 3 positions");
    dm[0].dense_size = 3;
    /* segments: decreasing, not from 0, too few, not ending at the indices */
    const int32_t dec[4] = {0, 2, 1, 4}, from1[4] = {1, 2, 2, 4}, few[3] = {0, 2, 4};
    const int32_t short_end[4] = {0, 2, 2, 3};
    dm[1].segments = dec;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "sparsity level 1: array_segments decreases at entry 2 (1 after 2)");
    dm[1].segments = from1;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F, "array_segments starts at 1, not 0");
    dm[1].segments = few;
    dm[1].n_segments = 3;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "level 1 has 3 array_segments but the 3 positions above it need 4");
    dm[1].n_segments = 4;
    dm[1].segments = short_end;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "array_segments ends at 3 but there are 4 array_indices");
    dm[1].segments = seg;
    /* indices: out of range, repeated within a segment */
    const int32_t far[4] = {1, 5, 0, 3}, same[4] = {1, 1, 0, 3};
    dm[1].indices = far;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "array_indices[1] = 5 is out of range for dimension 1 (5 positions)");
    dm[1].indices = same;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "array_indices[1] = 1 does not increase within its segment");
    dm[1].indices = idx;
    /* stored values against the buffer */
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 12, F,
                   "sparse data is 12 bytes but its sparsity stores 4 f32 values (16 bytes)");
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, NULL, 0, F,
                   "tensor 0 'w' is sparse but has no data");
    /* a dtype without a fixed size */
    expect_refused(MP_DT_STRING, 2, dims, &s, "abcd", 4, MP_ERR_UNSUPPORTED,
                   "sparse string tensors are not supported");
    /* a bad format number */
    dm[0].sparse = 2;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, values, 16, F,
                   "level 0 has format 2 (0 DENSE or 1 SPARSE_CSR)");
    dm[0].sparse = 0;

    /* blocks: a size that does not divide its dimension; a bad block_map; a sparse block */
    const int32_t bdims[2] = {2, 8}, border[3] = {0, 1, 2}, bmap[1] = {1}, bad_map[1] = {2};
    const int32_t bseg[3] = {0, 1, 2}, bidx[2] = {0, 1};
    mp_tfw_sparse_dim bdm[3] = {DENSE(2), CSR(8, bseg, bidx), DENSE(3)};
    mp_tfw_sparsity bs = {3, 1, 3, border, bmap, bdm};
    const float bval[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    expect_refused(MP_DT_FLOAT32, 2, bdims, &bs, bval, 24, F,
                   "sparsity block size 3 (level 2) does not divide dimension 1 (8)");
    bdm[2].dense_size = 4;
    expect_dense(MP_DT_FLOAT32, 2, bdims, &bs, bval, 32,
                 (float[]){1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 5, 6, 7, 8}, 64);
    bs.block_map = bad_map;
    expect_refused(MP_DT_FLOAT32, 2, bdims, &bs, bval, 32, F,
                   "block_map [2] must name distinct dimensions of the tensor (rank 2)");
    bs.block_map = bmap;
    const int32_t one[2] = {0, 1}, four[1] = {0};
    bdm[2] = (mp_tfw_sparse_dim){.sparse = 1, .index_bits = 8, .n_segments = 2, .segments = one,
                                 .n_indices = 1, .indices = four};
    expect_refused(MP_DT_FLOAT32, 2, bdims, &bs, bval, 32, F,
                   "level 2 (block dimension 2) is SPARSE_CSR; blocks are stored dense");
}

/* A dense form past memprof's limit (64 times the file plus 64 MiB): [2^20, 64] float32 (256
 * MiB) with one value, written in about a megabyte of 8-bit segments. */
static void test_dense_limit(void **state)
{
    (void)state;
    const int32_t rows = 1 << 20, dims[2] = {rows, 64}, order[2] = {0, 1}, idx[1] = {3};
    int32_t *seg = malloc(((size_t)rows + 1) * sizeof *seg);
    assert_non_null(seg);
    seg[0] = 0;
    for (int32_t r = 1; r <= rows; r++)
        seg[r] = 1;
    const mp_tfw_sparse_dim dm[2] = {DENSE(rows), {.sparse = 1, .index_bits = 8,
                                                   .n_segments = rows + 1, .segments = seg,
                                                   .n_indices = 1, .indices = idx}};
    const mp_tfw_sparsity s = {2, 0, 2, order, NULL, dm};
    const float v = 1.0f;
    expect_refused(MP_DT_FLOAT32, 2, dims, &s, &v, 4, MP_ERR_UNSUPPORTED,
                   "its dense form would bring the model's densified sparse tensors past");
    free(seg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tflite_4x4_int8_blocks),
        cmocka_unit_test(test_csr_and_csc),
        cmocka_unit_test(test_uint16_indices),
        cmocka_unit_test(test_float16_filter),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_densify_kernel),
        cmocka_unit_test(test_fc_sparse_weights),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_dense_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
