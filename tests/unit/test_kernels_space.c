/* Tests of DEPTH_TO_SPACE and SPACE_TO_DEPTH: a hand-written 1x1x1x4 -> 1x2x2x1 and its
 * inverse, references written from TensorFlow Lite's index formulas over random shapes, block
 * sizes and dtypes, refusals; and one model built with the writer that chains every operator
 * of this family of additions (SPACE_TO_DEPTH, DEPTH_TO_SPACE, MIRROR_PAD,
 * RESIZE_NEAREST_NEIGHBOR, REVERSE_V2, TRANSPOSE_CONV, BROADCAST_TO, UNPACK) run through a
 * session in static and dynamic memory modes with equal outputs, checked against a plain
 * reference of the chain. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/kernel_harness.h"

static void test_hand(void **state)
{
    (void)state;
    /* depth {1,2,3,4} at one pixel -> 2x2 {{1,2},{3,4}} (channel (i*2 + j) goes to (i, j)) */
    for (int k = 0; k < 2; k++) {
        kh_case c;
        kh_init(&c, k ? MP_OP_SPACE_TO_DEPTH : MP_OP_DEPTH_TO_SPACE, NULL);
        c.opt.block_size = 2;
        mp_tensor *x = kh_input(&c, MP_DT_FLOAT32, 4,
                                k ? (int32_t[]){1, 2, 2, 1} : (int32_t[]){1, 1, 1, 4}, NULL);
        memcpy(x->data, (float[]){1, 2, 3, 4}, 16);
        mp_tensor *out = kh_output(&c, MP_DT_FLOAT32);
        kh_expect_ok(&c, kh_run(&c));
        if (k)
            assert_true(out->dims[1] == 1 && out->dims[2] == 1 && out->dims[3] == 4);
        else
            assert_true(out->dims[1] == 2 && out->dims[2] == 2 && out->dims[3] == 1);
        assert_memory_equal(out->data, ((float[]){1, 2, 3, 4}), 16);
        kh_free(&c);
    }
    /* two channels: depth {a0,a1, b0,b1, c0,c1, d0,d1} -> pixels a, b / c, d of 2 channels;
     * space_to_depth of a 1x2x4x1 row pair {0..7} with block 2: pixel 0 takes {0,1,4,5},
     * pixel 1 {2,3,6,7} */
    kh_case c;
    kh_init(&c, MP_OP_SPACE_TO_DEPTH, NULL);
    c.opt.block_size = 2;
    mp_tensor *x = kh_input(&c, MP_DT_INT32, 4, (int32_t[]){1, 2, 4, 1}, NULL);
    memcpy(x->data, (int32_t[]){0, 1, 2, 3, 4, 5, 6, 7}, 32);
    mp_tensor *out = kh_output(&c, MP_DT_INT32);
    kh_expect_ok(&c, kh_run(&c));
    assert_true(out->dims[1] == 1 && out->dims[2] == 2 && out->dims[3] == 4);
    assert_memory_equal(out->data, ((int32_t[]){0, 1, 4, 5, 2, 3, 6, 7}), 32);
    kh_free(&c);
}

static void test_random(void **state)
{
    (void)state;
    uint32_t seed = 17;
    static const mp_dtype dts[4] = {MP_DT_FLOAT32, MP_DT_INT8, MP_DT_UINT8, MP_DT_INT32};
    for (int trial = 0; trial < 200; trial++) {
        bool d2s = trial & 1;
        int bs = 1 + kh_irand(&seed, 3), b = 1 + kh_irand(&seed, 2);
        int h = 1 + kh_irand(&seed, 3), w = 1 + kh_irand(&seed, 3), ch = 1 + kh_irand(&seed, 3);
        /* space side [b, h*bs, w*bs, ch], depth side [b, h, w, ch*bs*bs] */
        int32_t sd[4] = {b, h * bs, w * bs, ch}, dd[4] = {b, h, w, ch * bs * bs};
        mp_dtype dt = dts[trial % 4];
        kh_case c;
        kh_init(&c, d2s ? MP_OP_DEPTH_TO_SPACE : MP_OP_SPACE_TO_DEPTH, NULL);
        c.opt.block_size = bs;
        mp_tensor *x = kh_input(&c, dt, 4, d2s ? dd : sd, NULL);
        kh_fill_bytes(x, (unsigned)trial);
        mp_tensor *out = kh_output(&c, dt);
        kh_expect_ok(&c, kh_run(&c));
        assert_memory_equal(out->dims, d2s ? sd : dd, sizeof sd);
        size_t es = mp_dtype_size(dt);
        const uint8_t *sp = d2s ? out->data : x->data, *dp = d2s ? x->data : out->data;
        /* space [n][y][x][c] = depth [n][y/bs][x/bs][((y%bs)*bs + x%bs)*ch + c] */
        for (int n = 0; n < b; n++)
            for (int y = 0; y < h * bs; y++)
                for (int xx = 0; xx < w * bs; xx++)
                    for (int k = 0; k < ch; k++) {
                        size_t si = (((size_t)n * sd[1] + y) * sd[2] + xx) * ch + k;
                        size_t di = (((size_t)n * h + y / bs) * w + xx / bs) * dd[3] +
                                    (size_t)((y % bs) * bs + xx % bs) * ch + k;
                        if (memcmp(sp + si * es, dp + di * es, es) != 0)
                            fail_msg("trial %d: element (%d,%d,%d,%d) differs", trial, n, y, xx, k);
                    }
        kh_free(&c);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    const struct { int op, bs, rank; int32_t dims[4]; mp_status st; const char *needle; } cases[] = {
        {MP_OP_DEPTH_TO_SPACE, 2, 4, {1, 1, 1, 6}, MP_ERR_SHAPE, "not divisible by block_size^2 = 4"},
        {MP_OP_SPACE_TO_DEPTH, 2, 4, {1, 3, 2, 1}, MP_ERR_SHAPE, "not divisible by block_size 2"},
        {MP_OP_SPACE_TO_DEPTH, 2, 3, {2, 2, 1}, MP_ERR_SHAPE, "must be NHWC (rank 4)"},
        {MP_OP_DEPTH_TO_SPACE, 0, 4, {1, 1, 1, 4}, MP_ERR_UNSUPPORTED, "block_size 0 is not valid"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kh_case c;
        kh_init(&c, cases[k].op, NULL);
        c.opt.block_size = cases[k].bs;
        kh_input(&c, MP_DT_FLOAT32, cases[k].rank, cases[k].dims, NULL);
        kh_output(&c, MP_DT_FLOAT32);
        kh_expect_error(&c, cases[k].st, cases[k].needle);
        assert_non_null(strstr(c.err.msg, cases[k].op == MP_OP_DEPTH_TO_SPACE ? "DEPTH_TO_SPACE"
                                                                              : "SPACE_TO_DEPTH"));
        kh_free(&c);
    }
}

/* ---- one model of all of them, static and dynamic ------------------------------------- */

/* x [1,4,4,4] -> SPACE_TO_DEPTH 2 [1,2,2,16] -> DEPTH_TO_SPACE 2 [1,4,4,4] (x again) ->
 * MIRROR_PAD REFLECT {{0,0},{1,1},{2,2},{0,0}} [1,6,8,4] -> RESIZE_NEAREST_NEIGHBOR
 * (half_pixel_centers) to 12x16 -> REVERSE_V2 axis {1} -> TRANSPOSE_CONV weights [2,2,2,4],
 * stride 2, VALID, bias, RELU, output_shape [1,24,32,2] -> BROADCAST_TO [3,1,24,32,2] ->
 * UNPACK axis 0: three equal outputs. */
static void *chain_model(size_t *size)
{
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    static const int32_t pads[8] = {0, 0, 1, 1, 2, 2, 0, 0}, rsz[2] = {12, 16}, axis[1] = {1};
    static const int32_t os[4] = {1, 24, 32, 2}, bshape[5] = {3, 1, 24, 32, 2};
    float wts[2 * 2 * 2 * 4], bias[2] = {0.25f, -0.5f};
    kh_fill(wts, 32, 77, 1.0f);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 4}, 0, NULL);
    int a = mp_tfw_tensor(w, "s2d", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 16}, 0, NULL);
    int b = mp_tfw_tensor(w, "d2s", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 4}, 0, NULL);
    int pt = mp_tfw_tensor(w, "pads", MP_DT_INT32, 2, (int32_t[]){4, 2},
                           mp_tfw_buffer(w, pads, sizeof pads), NULL);
    int cpad = mp_tfw_tensor(w, "mirror", MP_DT_FLOAT32, 4, (int32_t[]){1, 6, 8, 4}, 0, NULL);
    int st = mp_tfw_tensor(w, "size", MP_DT_INT32, 1, (int32_t[]){2}, mp_tfw_buffer(w, rsz, 8),
                           NULL);
    int d = mp_tfw_tensor(w, "nearest", MP_DT_FLOAT32, 4, (int32_t[]){1, 12, 16, 4}, 0, NULL);
    int at = mp_tfw_tensor(w, "axis", MP_DT_INT32, 1, (int32_t[]){1}, mp_tfw_buffer(w, axis, 4),
                           NULL);
    int e = mp_tfw_tensor(w, "reversed", MP_DT_FLOAT32, 4, (int32_t[]){1, 12, 16, 4}, 0, NULL);
    int ost = mp_tfw_tensor(w, "output_shape", MP_DT_INT32, 1, (int32_t[]){4},
                            mp_tfw_buffer(w, os, 16), NULL);
    int wt = mp_tfw_tensor(w, "weights", MP_DT_FLOAT32, 4, (int32_t[]){2, 2, 2, 4},
                           mp_tfw_buffer(w, wts, sizeof wts), NULL);
    int bt = mp_tfw_tensor(w, "bias", MP_DT_FLOAT32, 1, (int32_t[]){2},
                           mp_tfw_buffer(w, bias, sizeof bias), NULL);
    int f = mp_tfw_tensor(w, "tconv", MP_DT_FLOAT32, 4, (int32_t[]){1, 24, 32, 2}, 0, NULL);
    int bst = mp_tfw_tensor(w, "bshape", MP_DT_INT32, 1, (int32_t[]){5},
                            mp_tfw_buffer(w, bshape, sizeof bshape), NULL);
    int g = mp_tfw_tensor(w, "broadcast", MP_DT_FLOAT32, 5, (int32_t[]){3, 1, 24, 32, 2}, 0, NULL);
    int y[3];
    for (int k = 0; k < 3; k++)
        y[k] = mp_tfw_tensor(w, k == 0 ? "y0" : k == 1 ? "y1" : "y2", MP_DT_FLOAT32, 4,
                             (int32_t[]){1, 24, 32, 2}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    o.block_size = 2;
    mp_tfw_op(w, MP_OP_SPACE_TO_DEPTH, 1, &x, 1, &a, &o);
    mp_tfw_op(w, MP_OP_DEPTH_TO_SPACE, 1, &a, 1, &b, &o);
    o = mp_tfw_options_default();
    o.mirror_pad_mode = 0;
    mp_tfw_op(w, MP_OP_MIRROR_PAD, 2, (int32_t[]){b, pt}, 1, &cpad, &o);
    o = mp_tfw_options_default();
    o.half_pixel_centers = true;
    mp_tfw_op(w, MP_OP_RESIZE_NEAREST_NEIGHBOR, 2, (int32_t[]){cpad, st}, 1, &d, &o);
    mp_tfw_op(w, MP_OP_REVERSE_V2, 2, (int32_t[]){d, at}, 1, &e, NULL);
    o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 2;
    o.activation = MP_ACT_RELU;
    mp_tfw_op(w, MP_OP_TRANSPOSE_CONV, 4, (int32_t[]){ost, wt, e, bt}, 1, &f, &o);
    mp_tfw_op(w, MP_OP_BROADCAST_TO, 2, (int32_t[]){f, bst}, 1, &g, NULL);
    o = mp_tfw_options_default();
    o.values_count = 3;
    o.axis = 0;
    mp_tfw_op(w, MP_OP_UNPACK, 1, &g, 3, y, &o);
    mp_tfw_io(w, 1, &x, 3, y);
    mp_test_model built = mp_test_tfw_finish(w);
    *size = built.size;
    return built.bytes;
}

/* The chain in plain C: returns the [24,32,2] output. */
static void chain_ref(const float *x, float *y)
{
    static float m[6][8][4], r[12][16][4];
    float wts[32];
    kh_fill(wts, 32, 77, 1.0f);
    const float bias[2] = {0.25f, -0.5f};
    for (int i = 0; i < 6; i++) /* REFLECT pads 1 (rows), 2 (columns) */
        for (int j = 0; j < 8; j++) {
            int si = i < 1 ? 1 - i : i - 1 >= 4 ? 2 * 4 - (i - 1) - 2 : i - 1;
            int sj = j < 2 ? 2 - j : j - 2 >= 4 ? 2 * 4 - (j - 2) - 2 : j - 2;
            memcpy(m[i][j], x + (si * 4 + sj) * 4, 16);
        }
    for (int i = 0; i < 12; i++) /* half pixel: floor((o + .5) * 0.5), then rows reversed */
        for (int j = 0; j < 16; j++)
            memcpy(r[11 - i][j], m[(int)floorf((i + 0.5f) * 0.5f)][(int)floorf((j + 0.5f) * 0.5f)],
                   16);
    for (int oy = 0; oy < 24; oy++) /* VALID stride 2 kernel 2: no padding, 2x2 blocks */
        for (int ox = 0; ox < 32; ox++)
            for (int oc = 0; oc < 2; oc++) {
                double acc = bias[oc];
                for (int c = 0; c < 4; c++)
                    acc += (double)r[oy / 2][ox / 2][c] * wts[((oc * 2 + oy % 2) * 2 + ox % 2) * 4 + c];
                y[(oy * 32 + ox) * 2 + oc] = acc > 0 ? (float)acc : 0.0f;
            }
}

static void run_chain(mp_memory_mode mode, float out[3][24 * 32 * 2])
{
    size_t size;
    void *bytes = chain_model(&size);
    mp_session_options so = {.mode = mode, .threads = 1};
    mp_session *s = NULL;
    mp_error err = {0};
    assert_int_equal(mp_session_create(&so, &s, &err), MP_OK);
    if (mp_session_load_memory(s, bytes, size, "chain", &err) != MP_OK ||
        mp_session_prepare(s, &err) != MP_OK)
        fail_msg("%s", err.msg);
    free(bytes);
    float in[64];
    kh_fill(in, 64, 5, 2.0f);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(mp_session_set_input(s, 0, in, sizeof in, &err), MP_OK);
        if (mp_session_run(s, &err) != MP_OK)
            fail_msg("run: %s", err.msg);
    }
    for (int j = 0; j < 3; j++) {
        const mp_tensor *t = mp_session_output(s, j);
        assert_int_equal(t->bytes, sizeof out[j]);
        memcpy(out[j], t->data, sizeof out[j]);
    }
    mp_session_destroy(s);
}

static void test_model_static_dynamic(void **state)
{
    (void)state;
    static float st[3][24 * 32 * 2], dy[3][24 * 32 * 2], want[24 * 32 * 2];
    run_chain(MP_MEMORY_STATIC, st);
    run_chain(MP_MEMORY_DYNAMIC, dy);
    assert_memory_equal(st, dy, sizeof st);
    float in[64];
    kh_fill(in, 64, 5, 2.0f);
    chain_ref(in, want);
    for (int j = 0; j < 3; j++)
        kh_expect_close(st[j], want, 24 * 32 * 2, 2.0);
}

/* The reader refuses a block_size below 1 and a mirror mode other than REFLECT / SYMMETRIC. */
static void test_reader_refusals(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        mp_tfw *w = mp_tfw_create();
        int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, 0, NULL);
        int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 2, 1}, 0, NULL);
        mp_op_options o = mp_tfw_options_default();
        if (k == 0) {
            o.block_size = 0;
            mp_tfw_op(w, MP_OP_SPACE_TO_DEPTH, 1, &x, 1, &y, &o);
        } else {
            static const int32_t pads[8] = {0};
            int p = mp_tfw_tensor(w, "p", MP_DT_INT32, 2, (int32_t[]){4, 2},
                                  mp_tfw_buffer(w, pads, sizeof pads), NULL);
            o.mirror_pad_mode = 2;
            mp_tfw_op(w, MP_OP_MIRROR_PAD, 2, (int32_t[]){x, p}, 1, &y, &o);
        }
        mp_tfw_io(w, 1, &x, 1, &y);
        void *bytes = NULL;
        size_t size;
        mp_error err = {0};
        assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
        mp_tfw_free(w);
        mp_model *m = NULL;
        assert_int_equal(mp_model_load_memory(bytes, size, "bad", &m, &err), MP_ERR_FORMAT);
        assert_non_null(strstr(err.msg, k ? "mode 2 is not valid" : "block_size 0 is not valid"));
        free(bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_model_static_dynamic),
        cmocka_unit_test(test_reader_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
