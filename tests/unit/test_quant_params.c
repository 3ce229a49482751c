/* Tests of the reader's checks of quantization parameters (TensorFlow Lite's quantization
 * specification): a small int8 model built with the writer (per-tensor int8 activations,
 * per-channel int8 weights, int32 biases) is accepted with its parameters intact, and each
 * class of bad parameters is refused with MP_ERR_FORMAT and one line naming the tensor (index
 * and name) and the fault. Every shared model still reads, and its quantized tensors meet
 * the specification by an independent check. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/model.h"
#include "engine/model/tflite_writer.h"

/* ---- a small quantized model ------------------------------------------------------------- */

/* Tensors of the model, in order. */
enum { T_IN, T_W, T_B, T_CONV, T_FC_W, T_FC_B, T_OUT, T_COUNT };

/* Quantization of one tensor: count scales (copied from scale) and zero points (NULL: all
 * zero), along dim. */
typedef struct qparams {
    int count;
    float scale[8];
    int64_t zp[8];
    int dim;
} qparams;

/* The whole model: each tensor's dtype and quantization, the operator of the first layer. */
typedef struct qmodel {
    mp_dtype dtype[T_COUNT];
    qparams q[T_COUNT];
    int first_op; /* CONV_2D or DEPTHWISE_CONV_2D */
} qmodel;

/* input [1,4,4,2] int8 -> CONV_2D (weights [3,1,1,2] int8 per-channel along 0, bias [3]
 * int32 per-channel) -> [1,4,4,3] int8 -> FULLY_CONNECTED (weights [2,48] int8 per tensor,
 * bias [2] int32) -> [1,2] int8. Scales as TensorFlow Lite's converter makes them: bias scale
 * = input scale * weight scale. */
static qmodel valid_model(void)
{
    qmodel m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < T_COUNT; i++)
        m.dtype[i] = MP_DT_INT8;
    m.dtype[T_B] = m.dtype[T_FC_B] = MP_DT_INT32;
    m.first_op = MP_OP_CONV_2D;
    m.q[T_IN] = (qparams){.count = 1, .scale = {0.5f}, .zp = {-3}};
    m.q[T_W] = (qparams){.count = 3, .scale = {0.25f, 0.125f, 0.0625f}, .dim = 0};
    m.q[T_B] = (qparams){.count = 3, .scale = {0.125f, 0.0625f, 0.03125f}, .dim = 0};
    m.q[T_CONV] = (qparams){.count = 1, .scale = {1.0f}, .zp = {5}};
    m.q[T_FC_W] = (qparams){.count = 1, .scale = {0.01f}};
    m.q[T_FC_B] = (qparams){.count = 1, .scale = {0.01f}};
    m.q[T_OUT] = (qparams){.count = 1, .scale = {2.0f}, .zp = {-128}};
    return m;
}

/* The model's bytes (free them). */
static void *build(const qmodel *m, size_t *size)
{
    static const int8_t w[6] = {1, -2, 3, -4, 5, -127};
    static const int32_t b[3] = {10, -20, 30};
    static int8_t fc_w[96];
    static const int32_t fc_b[2] = {7, -7};
    for (int k = 0; k < 96; k++)
        fc_w[k] = (int8_t)(k % 7 - 3);
    mp_tfw *tw = mp_tfw_create();
    assert_non_null(tw);
    const int32_t w_dims[4] = {3, 1, 1, 2}, dw_dims[4] = {1, 1, 1, 3};
    bool dw = m->first_op == MP_OP_DEPTHWISE_CONV_2D;
    int32_t t[T_COUNT];
    t[T_IN] = mp_tfw_tensor(tw, "input", m->dtype[T_IN], 4, (int32_t[]){1, 4, 4, dw ? 3 : 2}, 0, NULL);
    t[T_W] = mp_tfw_tensor(tw, "conv/weights", m->dtype[T_W], 4, dw ? dw_dims : w_dims,
                           mp_tfw_buffer(tw, w, dw ? 3 : 6), NULL);
    t[T_B] = mp_tfw_tensor(tw, "conv/bias", m->dtype[T_B], 1, (int32_t[]){3},
                           mp_tfw_buffer(tw, b, sizeof b), NULL);
    t[T_CONV] = mp_tfw_tensor(tw, "conv", m->dtype[T_CONV], 4, (int32_t[]){1, 4, 4, 3}, 0, NULL);
    t[T_FC_W] = mp_tfw_tensor(tw, "fc/weights", m->dtype[T_FC_W], 2, (int32_t[]){2, 48},
                              mp_tfw_buffer(tw, fc_w, 96), NULL);
    t[T_FC_B] = mp_tfw_tensor(tw, "fc/bias", m->dtype[T_FC_B], 1, (int32_t[]){2},
                              mp_tfw_buffer(tw, fc_b, sizeof fc_b), NULL);
    t[T_OUT] = mp_tfw_tensor(tw, "output", m->dtype[T_OUT], 2, (int32_t[]){1, 2}, 0, NULL);
    for (int i = 0; i < T_COUNT; i++) {
        assert_int_equal(t[i], i);
        const qparams *q = &m->q[i];
        if (q->count)
            assert_int_equal(mp_tfw_tensor_quant(tw, i, q->count, q->scale, q->zp, q->dim), i);
    }
    mp_op_options o = mp_tfw_options_default();
    o.stride_w = o.stride_h = 1;
    assert_true(mp_tfw_op(tw, m->first_op, 3, (int32_t[]){T_IN, T_W, T_B}, 1,
                          (int32_t[]){T_CONV}, &o) >= 0);
    assert_true(mp_tfw_op(tw, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){T_CONV, T_FC_W, T_FC_B}, 1,
                          (int32_t[]){T_OUT}, NULL) >= 0);
    assert_int_equal(mp_tfw_io(tw, 1, (int32_t[]){T_IN}, 1, (int32_t[]){T_OUT}), 0);
    void *bytes = NULL;
    mp_error err = {0};
    if (mp_tfw_finish(tw, &bytes, size, &err) != MP_OK)
        fail_msg("writer: %s", err.msg);
    mp_tfw_free(tw);
    return bytes;
}

/* Load a built model; *m set on success (free it). */
static mp_status load(const qmodel *qm, mp_model **m, mp_error *err)
{
    size_t size;
    void *bytes = build(qm, &size);
    memset(err, 0, sizeof *err);
    *m = NULL;
    mp_status st = mp_model_load_memory(bytes, size, "q.tflite", m, err);
    free(bytes);
    return st;
}

/* The model must be refused as malformed, in one line naming the file, the tensor (index and
 * name) and containing `fault`. */
static void expect_refused(const qmodel *qm, const char *tensor, const char *fault)
{
    mp_model *m;
    mp_error err;
    mp_status st = load(qm, &m, &err);
    if (st == MP_OK) {
        mp_model_free(m);
        fail_msg("accepted, expected a refusal naming %s and '%s'", tensor, fault);
    }
    if (st != MP_ERR_FORMAT || strncmp(err.msg, "q.tflite: ", 10) != 0 || !strstr(err.msg, tensor) ||
        !strstr(err.msg, fault) || strchr(err.msg, '\n'))
        fail_msg("expected MP_ERR_FORMAT naming %s and '%s', got %s: %s", tensor, fault,
                 mp_status_name(st), err.msg);
    assert_null(m);
}

static void expect_accepted(const qmodel *qm)
{
    mp_model *m;
    mp_error err;
    if (load(qm, &m, &err) != MP_OK)
        fail_msg("refused: %s", err.msg);
    mp_model_free(m);
}

/* ---- accepted ---------------------------------------------------------------------------- */

static void test_valid_per_channel_model(void **state)
{
    (void)state;
    qmodel qm = valid_model();
    mp_model *m;
    mp_error err;
    if (load(&qm, &m, &err) != MP_OK)
        fail_msg("refused: %s", err.msg);
    const mp_quant *q = &m->tensors[T_W].quant;
    assert_int_equal(q->count, 3);
    assert_int_equal(q->quantized_dimension, 0);
    assert_true(q->scale[0] == 0.25f && q->scale[1] == 0.125f && q->scale[2] == 0.0625f);
    assert_non_null(q->zero_point);
    for (int k = 0; k < 3; k++)
        assert_int_equal(q->zero_point[k], 0);
    q = &m->tensors[T_IN].quant;
    assert_int_equal(q->count, 1);
    assert_true(q->scale[0] == 0.5f);
    assert_int_equal(q->zero_point[0], -3);
    assert_int_equal(m->tensors[T_OUT].quant.zero_point[0], -128);
    assert_int_equal(m->tensors[T_B].quant.count, 3);
    mp_model_free(m);

    /* The edges of the ranges are inside them. */
    qm.q[T_IN].zp[0] = 127;
    qm.q[T_OUT].zp[0] = -128;
    expect_accepted(&qm);
    qm.dtype[T_IN] = MP_DT_UINT8;
    qm.q[T_IN].zp[0] = 255;
    expect_accepted(&qm);
    qm.q[T_IN].zp[0] = 0;
    expect_accepted(&qm);
    /* Depthwise weights [1,1,1,3] per channel along dimension 3. */
    qm = valid_model();
    qm.first_op = MP_OP_DEPTHWISE_CONV_2D;
    qm.q[T_W].dim = 3;
    expect_accepted(&qm);
    /* Tiny and huge finite scales are legal (the requantization copes, or flushes to 0). */
    qm = valid_model();
    qm.q[T_CONV].scale[0] = 1e-30f;
    qm.q[T_OUT].scale[0] = 3e38f;
    expect_accepted(&qm);
}

/* Float tensors carry what converters leave on them (scales, zero points from fake-quant
 * training): TensorFlow Lite ignores it, so does the reader's value check. */
static void test_float_tensors_unchecked(void **state)
{
    (void)state;
    qmodel qm = valid_model();
    qm.dtype[T_IN] = MP_DT_FLOAT32;
    qm.q[T_IN] = (qparams){.count = 1, .scale = {0.0f}, .zp = {1000}};
    expect_accepted(&qm);
    qm.q[T_IN].scale[0] = -1.0f;
    expect_accepted(&qm);
    qm.q[T_IN].scale[0] = NAN;
    expect_accepted(&qm);
}

/* ---- refused, one class at a time ---------------------------------------------------------- */

static void test_bad_scales(void **state)
{
    (void)state;
    qmodel qm = valid_model();
    qm.q[T_IN].scale[0] = 0.0f;
    expect_refused(&qm, "tensor 0 'input'", "quantization scale 0;");
    qm = valid_model();
    qm.q[T_IN].scale[0] = -0.0f;
    expect_refused(&qm, "tensor 0 'input'", "scale must be positive and finite");
    qm = valid_model();
    qm.q[T_CONV].scale[0] = -0.5f;
    expect_refused(&qm, "tensor 3 'conv'", "quantization scale -0.5;");
    qm = valid_model();
    qm.q[T_W].scale[1] = -0.125f;
    expect_refused(&qm, "tensor 1 'conv/weights'", "scale -0.125 (channel 1)");
    qm = valid_model();
    qm.q[T_OUT].scale[0] = INFINITY;
    expect_refused(&qm, "tensor 6 'output'", "scale inf");
    qm = valid_model();
    qm.q[T_B].scale[2] = NAN;
    expect_refused(&qm, "tensor 2 'conv/bias'", "(channel 2)");
    qm = valid_model();
    qm.q[T_FC_B].scale[0] = 0.0f;
    expect_refused(&qm, "tensor 5 'fc/bias'", "positive and finite");
}

static void test_zero_points_out_of_range(void **state)
{
    (void)state;
    qmodel qm = valid_model();
    qm.q[T_IN].zp[0] = 128;
    expect_refused(&qm, "tensor 0 'input'", "zero point 128, outside the i8 range -128..127");
    qm.q[T_IN].zp[0] = -129;
    expect_refused(&qm, "tensor 0 'input'", "zero point -129, outside the i8 range");
    qm = valid_model();
    qm.dtype[T_IN] = MP_DT_UINT8;
    qm.q[T_IN].zp[0] = 256;
    expect_refused(&qm, "tensor 0 'input'", "zero point 256, outside the u8 range 0..255");
    qm.q[T_IN].zp[0] = -1;
    expect_refused(&qm, "tensor 0 'input'", "zero point -1, outside the u8 range");
    qm.q[T_IN].zp[0] = INT64_MIN;
    expect_refused(&qm, "tensor 0 'input'", "outside the u8 range");
    /* int16 activations are symmetric. */
    qm = valid_model();
    qm.dtype[T_CONV] = MP_DT_INT16;
    qm.q[T_CONV].zp[0] = 1;
    expect_refused(&qm, "tensor 3 'conv'", "zero point 1; i16 tensors are quantized symmetrically");
    /* int32 biases have zero point 0, per channel too. */
    qm = valid_model();
    qm.q[T_B].zp[1] = -4;
    expect_refused(&qm, "tensor 2 'conv/bias'", "zero point -4 (channel 1); i32 tensors");
    qm = valid_model();
    qm.q[T_FC_B].zp[0] = 3;
    expect_refused(&qm, "tensor 5 'fc/bias'", "zero point 3;");
}

static void test_asymmetric_int8_weights(void **state)
{
    (void)state;
    qmodel qm = valid_model();
    qm.q[T_W].zp[2] = 1;
    expect_refused(&qm, "tensor 1 'conv/weights'", "operator 0 (CONV_2D), has zero point 1 (channel 2)");
    qm = valid_model();
    qm.first_op = MP_OP_DEPTHWISE_CONV_2D;
    qm.q[T_W].dim = 3;
    qm.q[T_W].zp[0] = -1;
    expect_refused(&qm, "tensor 1 'conv/weights'", "DEPTHWISE_CONV_2D), has zero point -1 (channel 0)");
    qm = valid_model();
    qm.q[T_FC_W].zp[0] = 10;
    expect_refused(&qm, "tensor 4 'fc/weights'", "operator 1 (FULLY_CONNECTED), has zero point 10; int8 weights are symmetric");
    /* uint8 weights are asymmetric by design. */
    qm = valid_model();
    qm.dtype[T_FC_W] = MP_DT_UINT8;
    qm.q[T_FC_W].zp[0] = 128;
    expect_accepted(&qm);
}

static void test_per_channel_length(void **state)
{
    (void)state;
    qmodel qm = valid_model();
    qm.q[T_W].count = 2; /* dimension 0 has 3 channels */
    expect_refused(&qm, "tensor 1 'conv/weights'", "2 per-channel scales along dimension 0, which has 3 channels");
    qm = valid_model();
    qm.q[T_W].count = 4;
    qm.q[T_W].scale[3] = 1.0f;
    expect_refused(&qm, "tensor 1 'conv/weights'", "4 per-channel scales along dimension 0");
    qm = valid_model();
    qm.q[T_W].dim = 3; /* dimension 3 has 2 channels */
    expect_refused(&qm, "tensor 1 'conv/weights'", "3 per-channel scales along dimension 3, which has 2 channels");
    qm = valid_model();
    qm.q[T_B].count = 2;
    expect_refused(&qm, "tensor 2 'conv/bias'", "2 per-channel scales along dimension 0, which has 3");
}

static void test_quantized_dimension_out_of_range(void **state)
{
    (void)state;
    qmodel qm = valid_model();
    qm.q[T_W].dim = 4;
    expect_refused(&qm, "tensor 1 'conv/weights'", "quantized_dimension 4, out of range for its rank 4");
    qm.q[T_W].dim = -1;
    expect_refused(&qm, "tensor 1 'conv/weights'", "quantized_dimension -1, out of range");
    qm.q[T_W].dim = 1000;
    expect_refused(&qm, "tensor 1 'conv/weights'", "quantized_dimension 1000");
    /* Per tensor too, as TensorFlow Lite does. */
    qm = valid_model();
    qm.q[T_CONV].dim = 4;
    expect_refused(&qm, "tensor 3 'conv'", "quantized_dimension 4, out of range for its rank 4");
    qm = valid_model();
    qm.q[T_OUT].dim = -2;
    expect_refused(&qm, "tensor 6 'output'", "quantized_dimension -2");
    /* A rank-1 bias given its filter's dimension (a converter quirk): read as dimension 0. */
    qm = valid_model();
    qm.q[T_B].dim = 3;
    qm.q[T_FC_B].dim = 3;
    mp_model *m;
    mp_error err;
    if (load(&qm, &m, &err) != MP_OK)
        fail_msg("refused: %s", err.msg);
    assert_int_equal(m->tensors[T_B].quant.quantized_dimension, 0);
    assert_int_equal(m->tensors[T_FC_B].quant.quantized_dimension, 0);
    mp_model_free(m);
}

/* ---- shared models ------------------------------------------------------------------------- */

/* The shared models that are malformed on purpose (refused for reasons of their own). */
static bool known_malformed(const char *name)
{
    return !strcmp(name, "coral_invalid_model_invoking_error.tflite") ||
           !strcmp(name, "litert_tfl_testdata_empty_model.tflite") ||
           !strcmp(name, "litert_tfl_testdata_test_model_broken.tflite");
}

/* The specification, checked independently of the reader on one tensor. */
static void check_tensor_spec(const char *model, const mp_model *m, int32_t i)
{
    const mp_tensor_info *t = &m->tensors[i];
    const mp_quant *q = &t->quant;
    if (q->count == 0)
        return;
    assert_true(q->count == 1 || (q->quantized_dimension >= 0 && q->quantized_dimension < t->rank &&
                                  t->shape[q->quantized_dimension] == q->count));
    bool integer = t->dtype == MP_DT_UINT8 || t->dtype == MP_DT_INT8 || t->dtype == MP_DT_INT16 ||
                   t->dtype == MP_DT_INT32 || t->dtype == MP_DT_INT64;
    for (int32_t k = 0; k < q->count && integer; k++) {
        if (!(q->scale[k] > 0) || !isfinite(q->scale[k]))
            fail_msg("%s: tensor %d '%s' scale %g", model, i, t->name, (double)q->scale[k]);
        int64_t z = q->zero_point ? q->zero_point[k] : 0;
        bool ok = t->dtype == MP_DT_UINT8  ? z >= 0 && z <= 255
                  : t->dtype == MP_DT_INT8 ? z >= -128 && z <= 127
                                           : z == 0;
        if (t->dtype == MP_DT_INT8 && t->data && q->count > 1)
            ok = ok && z == 0;
        if (!ok)
            fail_msg("%s: tensor %d '%s' zero point %lld", model, i, t->name, (long long)z);
    }
}

static void test_shared_models_read(void **state)
{
    (void)state;
    char **names;
    int n = mp_test_shared_model_names(&names);
    if (n == 0) {
        print_message("../shared/models not found (set MP_SHARED_DIR); skipping\n");
        skip();
    }
    int loaded = 0, quantized_models = 0, quantized_tensors = 0, per_channel = 0;
    for (int k = 0; k < n; k++) {
        mp_model *m = NULL;
        mp_error err = {0};
        mp_status st = mp_model_load_file(mp_test_path("models", names[k]), &m, &err);
        if (known_malformed(names[k])) {
            assert_int_not_equal(st, MP_OK);
            /* Refused for its own fault, not for its quantization. */
            assert_null(strstr(err.msg, "quantiz"));
            assert_null(strstr(err.msg, "zero point"));
            continue;
        }
        if (st != MP_OK)
            fail_msg("%s refused: %s", names[k], err.msg);
        loaded++;
        int q = 0;
        for (int32_t i = 0; i < m->n_tensors; i++) {
            check_tensor_spec(names[k], m, i);
            mp_dtype dt = m->tensors[i].dtype;
            if (m->tensors[i].quant.count && (dt == MP_DT_INT8 || dt == MP_DT_UINT8)) {
                q++;
                per_channel += m->tensors[i].quant.count > 1;
            }
        }
        quantized_tensors += q;
        quantized_models += q > 0;
        mp_model_free(m);
    }
    print_message("%d shared models read; %d with int8/uint8 tensors (%d quantized tensors, %d per-channel)\n",
                  loaded, quantized_models, quantized_tensors, per_channel);
    assert_true(loaded >= 25);
    assert_true(quantized_models >= 8);
    mp_test_free_names(names, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_per_channel_model),
        cmocka_unit_test(test_float_tensors_unchecked),
        cmocka_unit_test(test_bad_scales),
        cmocka_unit_test(test_zero_points_out_of_range),
        cmocka_unit_test(test_asymmetric_int8_weights),
        cmocka_unit_test(test_per_channel_length),
        cmocka_unit_test(test_quantized_dimension_out_of_range),
        cmocka_unit_test(test_shared_models_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
