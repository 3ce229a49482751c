/* int4 constant weights (TensorType INT4): the reader unpacks them, two values to a byte with
 * the first in the low nibble as TensorFlow Lite packs them, into int8 model memory
 * (engine/model/tflite_tensors.c), so FULLY_CONNECTED, CONV_2D and DEQUANTIZE compute with
 * them as TensorFlow Lite's kernels do after their own unpacking. Models written with the
 * writer; every expected value is worked out by hand in the comments (TensorFlow Lite's
 * integer requantization: accumulate (x - x_zp) * w + bias, scale by s_x * s_w / s_y,
 * round to nearest, add y_zp). memprof split writes them back packed. Refused: an int4
 * tensor without constant data (exit 5) and packed data of the wrong size (exit 4). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/model/model.h"
#include "engine/model/model_split.h"
#include "engine/model/ops.h"
#include "engine/model/tflite_writer.h"
#include "engine/session.h"
#include "tests/util/testutil.h"

/* n int4 values packed two to a byte, low nibble first; the unused high nibble of an odd
 * count's last byte is set to `pad` (readers must ignore it). */
static void pack4(const int8_t *v, int n, uint8_t *out, unsigned pad)
{
    for (int k = 0; k < (n + 1) / 2; k++) {
        unsigned lo = (unsigned)v[2 * k] & 15u;
        unsigned hi = 2 * k + 1 < n ? (unsigned)v[2 * k + 1] & 15u : pad & 15u;
        out[k] = (uint8_t)(lo | hi << 4);
    }
}

static const int8_t g_fc_w[8] = {1, -2, 3, -8, 7, 0, -1, 2}; /* [2, 4], rows by output */

/* FULLY_CONNECTED x [1,4] int8 (scale 0.5, zp -3) . w [2,4] int4 (scale 0.25) + b [2] int32
 * (scale 0.125) -> y [1,2] int8 (scale 2, zp 1). wbytes: the packed weights' byte count;
 * reshape: y -> z [2] (RESHAPE) after it, z the output. */
static mp_test_model fc_model(size_t wbytes, bool x_int4, bool reshape)
{
    uint8_t pk[8] = {0};
    pack4(g_fc_w, 8, pk, 0);
    static const int32_t bias[2] = {10, -21};
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = mp_tfw_tensor(w, "x", x_int4 ? MP_DT_INT4 : MP_DT_INT8, 2, (int32_t[]){1, 4}, 0,
                          NULL);
    mp_tfw_tensor_quant(w, x, 1, (float[]){0.5f}, (int64_t[]){x_int4 ? 0 : -3}, 0);
    int wt = mp_tfw_tensor(w, "w", MP_DT_INT4, 2, (int32_t[]){2, 4}, mp_tfw_buffer(w, pk, wbytes),
                           NULL);
    mp_tfw_tensor_quant(w, wt, 1, (float[]){0.25f}, NULL, 0);
    int b = mp_tfw_tensor(w, "b", MP_DT_INT32, 1, (int32_t[]){2},
                          mp_tfw_buffer(w, bias, sizeof bias), NULL);
    mp_tfw_tensor_quant(w, b, 1, (float[]){0.125f}, NULL, 0);
    int y = mp_tfw_tensor(w, "y", MP_DT_INT8, 2, (int32_t[]){1, 2}, 0, NULL);
    mp_tfw_tensor_quant(w, y, 1, (float[]){2.0f}, (int64_t[]){1}, 0);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){x, wt, b}, 1, &y, &o);
    int out = y;
    if (reshape) {
        static const int32_t shp[1] = {2};
        int sh = mp_tfw_tensor(w, "shape", MP_DT_INT32, 1, (int32_t[]){1},
                               mp_tfw_buffer(w, shp, sizeof shp), NULL);
        out = mp_tfw_tensor(w, "z", MP_DT_INT8, 1, (int32_t[]){2}, 0, NULL);
        mp_tfw_tensor_quant(w, out, 1, (float[]){2.0f}, (int64_t[]){1}, 0);
        mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){y, sh}, 1, &out, &o);
    }
    mp_tfw_io(w, 1, &x, 1, &out);
    return mp_test_tfw_finish(w);
}

static mp_model *load(const mp_test_model *m, mp_status want, const char *msg_part)
{
    mp_model *model = NULL;
    mp_error err = {0};
    mp_status st = mp_model_load_memory(m->bytes, m->size, "int4", &model, &err);
    assert_int_equal(st, want);
    if (want != MP_OK) {
        assert_non_null(strstr(err.msg, msg_part));
        return NULL;
    }
    return model;
}

/* The weights are int8 in memory, unpacked value for value, counted on the heap. */
static void test_fc_weights_unpacked(void **state)
{
    (void)state;
    mp_test_model m = fc_model(4, false, false);
    mp_model *model = load(&m, MP_OK, NULL);
    const mp_tensor_info *w = &model->tensors[1];
    assert_int_equal(w->dtype, MP_DT_INT8);
    assert_true(w->packed_int4);
    assert_int_equal(w->data_bytes, 8);
    assert_memory_equal(w->data, g_fc_w, 8);
    assert_false(model->tensors[0].packed_int4);
    assert_int_equal(model->unpacked_bytes, 8);
    assert_true(model->heap_bytes >= 8);
    mp_model_free(model);
    free(m.bytes);
}

/* x = [-125, -118, -111, -104]: x - zp = [-122, -115, -108, -101].
 * acc0 = 1*-122 - 2*-115 + 3*-108 - 8*-101 + 10 = 602; acc1 = 7*-122 + 0 - 1*-108 + 2*-101
 * - 21 = -969. Multiplier 0.5 * 0.25 / 2 = 1/16: 602 / 16 = 37.625 -> 38, -969 / 16 =
 * -60.5625 -> -61; plus zp 1: y = [39, -60], in every memory mode. */
static void test_fc_int8_by_int4(void **state)
{
    (void)state;
    mp_test_model m = fc_model(4, false, false);
    const mp_memory_mode modes[] = {MP_MEMORY_STATIC, MP_MEMORY_DYNAMIC};
    for (size_t k = 0; k < 2; k++) {
        mp_session_options o = {.threads = 1, .mode = modes[k]};
        mp_session *s = mp_test_session(&m, &o, "int4 fc");
        const int8_t x[4] = {-125, -118, -111, -104};
        mp_test_set_input(s, 0, x, sizeof x);
        mp_test_run(s);
        int8_t y[2];
        mp_test_get_output(s, 0, y, sizeof y);
        assert_int_equal(y[0], 39);
        assert_int_equal(y[1], -60);
        mp_session_destroy(s);
    }
    free(m.bytes);
}

/* CONV_2D 1x1, x [1,1,1,2] int8 (scale 1, zp 0) = [3, -2]; filter [2,1,1,2] int4 per channel
 * (scales 0.5 and 0.25) f0 = [1, 2], f1 = [-4, 3]; no bias; y scale 0.25, zp 0.
 * acc0 = 3 - 4 = -1, times 1 * 0.5 / 0.25 = 2: -2; acc1 = -12 - 6 = -18, times 1: -18. */
static void test_conv_per_channel_int4(void **state)
{
    (void)state;
    const int8_t f[4] = {1, 2, -4, 3};
    uint8_t pk[2];
    pack4(f, 4, pk, 0);
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = mp_tfw_tensor(w, "x", MP_DT_INT8, 4, (int32_t[]){1, 1, 1, 2}, 0, NULL);
    mp_tfw_tensor_quant(w, x, 1, (float[]){1.0f}, NULL, 0);
    int ft = mp_tfw_tensor(w, "f", MP_DT_INT4, 4, (int32_t[]){2, 1, 1, 2},
                           mp_tfw_buffer(w, pk, sizeof pk), NULL);
    mp_tfw_tensor_quant(w, ft, 2, (float[]){0.5f, 0.25f}, NULL, 0);
    int y = mp_tfw_tensor(w, "y", MP_DT_INT8, 4, (int32_t[]){1, 1, 1, 2}, 0, NULL);
    mp_tfw_tensor_quant(w, y, 1, (float[]){0.25f}, NULL, 0);
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_w = o.stride_h = 1;
    mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){x, ft, -1}, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    mp_test_model m = mp_test_tfw_finish(w);
    mp_session_options so = {.threads = 1, .mode = MP_MEMORY_STATIC};
    mp_session *s = mp_test_session(&m, &so, "int4 conv");
    const int8_t in[2] = {3, -2};
    mp_test_set_input(s, 0, in, sizeof in);
    mp_test_run(s);
    int8_t out[2];
    mp_test_get_output(s, 0, out, sizeof out);
    assert_int_equal(out[0], -2);
    assert_int_equal(out[1], -18);
    mp_session_destroy(s);
    free(m.bytes);
}

/* DEQUANTIZE of an odd count: [-8, 7, -1] in two bytes (0x78, then 0xF with a stray high
 * nibble 5 that must be ignored), scale 0.5, zp 0: [-4, 3.5, -0.5]; added to the input x. */
static void test_dequantize_odd_count(void **state)
{
    (void)state;
    const int8_t v[3] = {-8, 7, -1};
    uint8_t pk[2];
    pack4(v, 3, pk, 5);
    assert_int_equal(pk[0], 0x78);
    assert_int_equal(pk[1], 0x5F);
    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){3}, 0, NULL);
    int q = mp_tfw_tensor(w, "q", MP_DT_INT4, 1, (int32_t[]){3}, mp_tfw_buffer(w, pk, 2), NULL);
    mp_tfw_tensor_quant(w, q, 1, (float[]){0.5f}, NULL, 0);
    int d = mp_tfw_tensor(w, "d", MP_DT_FLOAT32, 1, (int32_t[]){3}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){3}, 0, NULL);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(w, MP_OP_DEQUANTIZE, 1, &q, 1, &d, &o);
    mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){x, d}, 1, &y, &o);
    mp_tfw_io(w, 1, &x, 1, &y);
    mp_test_model m = mp_test_tfw_finish(w);
    mp_session_options so = {.threads = 1, .mode = MP_MEMORY_DYNAMIC};
    mp_session *s = mp_test_session(&m, &so, "int4 dequantize");
    const float in[3] = {1.0f, 0.0f, 0.0f};
    mp_test_set_input(s, 0, in, sizeof in);
    mp_test_run(s);
    float out[3];
    mp_test_get_output(s, 0, out, sizeof out);
    assert_true(out[0] == -3.0f && out[1] == 3.5f && out[2] == -0.5f);
    mp_session_destroy(s);
    free(m.bytes);
}

/* memprof split writes int4 weights back packed, as the file had them: the FC model with a
 * RESHAPE after it, cut before the RESHAPE; the first part's weights read back are int4 in
 * the file (packed_int4) with the same eight values, and its int8 FC gives y = [39, -60]. */
static void test_split_keeps_int4(void **state)
{
    (void)state;
    mp_test_model m = fc_model(4, false, true);
    mp_model *model = load(&m, MP_OK, NULL);
    mp_split_part parts[2];
    mp_error err = {0};
    assert_int_equal(mp_model_split(model, (int32_t[]){1}, 1, parts, &err), MP_OK);
    mp_test_model p0 = {.bytes = parts[0].bytes, .size = parts[0].size};
    mp_model *first = load(&p0, MP_OK, NULL);
    const mp_tensor_info *wi = NULL;
    for (int32_t t = 0; t < first->n_tensors; t++)
        if (strcmp(first->tensors[t].name, "w") == 0)
            wi = &first->tensors[t];
    assert_non_null(wi);
    assert_true(wi->packed_int4);
    assert_int_equal(first->unpacked_bytes, 8);
    assert_memory_equal(wi->data, g_fc_w, 8);
    mp_model_free(first);
    mp_session_options so = {.threads = 1, .mode = MP_MEMORY_STATIC};
    mp_session *s = mp_test_session(&p0, &so, "int4 part");
    const int8_t xin[4] = {-125, -118, -111, -104};
    mp_test_set_input(s, 0, xin, sizeof xin);
    mp_test_run(s);
    int8_t out[2];
    mp_test_get_output(s, 0, out, sizeof out);
    assert_int_equal(out[0], 39);
    assert_int_equal(out[1], -60);
    mp_session_destroy(s);
    mp_model_split_free(parts, 2);
    mp_model_free(model);
    free(m.bytes);
}

/* Refusals: packed data one byte short (8 values need 4 bytes), and an int4 tensor that is
 * not a constant (an int4 input: memprof runs int4 only as constant weights). */
static void test_refusals(void **state)
{
    (void)state;
    mp_test_model m = fc_model(3, false, false);
    load(&m, MP_ERR_FORMAT, "constant data is 3 bytes but 8 i4 values need 4");
    free(m.bytes);
    m = fc_model(4, true, false);
    load(&m, MP_ERR_UNSUPPORTED, "tensor 0 'x' is i4 without constant data");
    free(m.bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fc_weights_unpacked),
        cmocka_unit_test(test_fc_int8_by_int4),
        cmocka_unit_test(test_conv_per_channel_int4),
        cmocka_unit_test(test_dequantize_odd_count),
        cmocka_unit_test(test_split_keeps_int4),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
