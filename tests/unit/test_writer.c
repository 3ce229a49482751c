/* Tests of the .tflite writer: a hand-built model read back with the engine's reader (every
 * field must round-trip), the raw FlatBuffer layout checked with a small walker of our own
 * (identifier, root, extended operator codes, 16-byte aligned buffer data), and the errors
 * the writer reports for bad calls. */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/model/tflite_writer.h"

/* ---- a minimal independent FlatBuffer walker (no bounds slack: asserts instead) ---------- */

typedef struct raw {
    const uint8_t *p;
    size_t size;
} raw;

static uint32_t rd32(raw r, size_t at)
{
    assert_true(at + 4 <= r.size);
    return (uint32_t)r.p[at] | (uint32_t)r.p[at + 1] << 8 | (uint32_t)r.p[at + 2] << 16 |
           (uint32_t)r.p[at + 3] << 24;
}

static uint16_t rd16(raw r, size_t at)
{
    assert_true(at + 2 <= r.size);
    return (uint16_t)(r.p[at] | r.p[at + 1] << 8);
}

/* Position of field `id` of the table at `table`, or 0 when absent. */
static size_t field(raw r, size_t table, int id)
{
    assert_int_equal(table % 4, 0);
    size_t vt = table - (size_t)(int32_t)rd32(r, table);
    assert_int_equal(vt % 2, 0);
    uint16_t vt_size = rd16(r, vt);
    if ((size_t)(4 + 2 * id) >= vt_size)
        return 0;
    uint16_t off = rd16(r, vt + 4 + 2 * (size_t)id);
    return off ? table + off : 0;
}

/* Follow the uoffset stored at `at`. */
static size_t deref(raw r, size_t at)
{
    uint32_t o = rd32(r, at);
    assert_true(o > 0);
    assert_true(at + o < r.size);
    return at + o;
}

/* Element i of the vector of tables referenced by field `id` of `table`. */
static size_t table_elem(raw r, size_t table, int id, uint32_t i)
{
    size_t vec = deref(r, field(r, table, id));
    assert_true(i < rd32(r, vec));
    return deref(r, vec + 4 + 4 * (size_t)i);
}

/* ---- the hand-built model ------------------------------------------------------------------ */

enum {
    T_INPUT, T_ADD_CONST, T_ADD1, T_ADD2, T_CONV_W, T_CONV_B, T_CONV, T_DW_W, T_DW_B, T_DW,
    T_POOL, T_AXES, T_MEAN, T_CONCAT, T_SHAPE, T_FLAT, T_FC_W, T_FC, T_PROB, T_SQUEEZE, T_QUANT,
    T_COUNT
};

typedef struct built {
    void *bytes;
    size_t size;
    float add_const[32], conv_w[54], conv_b[3], dw_w[54], dw_b[6], fc_w[90];
    int8_t q[6];
} built;

static void fill(float *v, int n, float scale)
{
    for (int i = 0; i < n; i++)
        v[i] = scale * (float)((i * 37 + 11) % 23 - 11);
}

static int add_const(mp_tfw *w, const char *name, mp_dtype dt, int rank, const int32_t *dims,
                     const void *data, size_t bytes)
{
    int b = mp_tfw_buffer(w, data, bytes);
    assert_true(b >= 1);
    return mp_tfw_tensor(w, name, dt, rank, dims, b, NULL);
}

/* input [1,4,4,2] (signature [1,-1,-1,2]) -> ADD const (RELU) -> ADD input -> CONV 3x3
 * (stride h2 w1, dilation w2, RELU6) -> DEPTHWISE x2 (RELU) -> {AVG_POOL 2x2 VALID, MEAN keep}
 * -> CONCAT axis 2 -> RESHAPE [1,18] -> FC (no bias, TANH, keep_num_dims) -> SOFTMAX 0.5;
 * MEAN -> SQUEEZE [1,2]; plus an unused per-channel quantized int8 constant. */
static void build_model(built *m, const char *description)
{
    fill(m->add_const, 32, 0.25f);
    fill(m->conv_w, 54, 0.01f);
    fill(m->conv_b, 3, 0.5f);
    fill(m->dw_w, 54, 0.02f);
    fill(m->dw_b, 6, 0.125f);
    fill(m->fc_w, 90, 0.03f);
    for (int i = 0; i < 6; i++)
        m->q[i] = (int8_t)(i * 20 - 50);

    mp_tfw *w = mp_tfw_create();
    assert_non_null(w);
    if (description)
        mp_tfw_description(w, description);
    mp_tfw_subgraph_name(w, "test_graph");
    int t[T_COUNT];
    t[T_INPUT] = mp_tfw_tensor(w, "input", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2}, 0,
                               (int32_t[]){1, -1, -1, 2});
    t[T_ADD_CONST] = add_const(w, "add_const", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2},
                               m->add_const, sizeof m->add_const);
    t[T_ADD1] = mp_tfw_tensor(w, "add1", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2}, 0, NULL);
    t[T_ADD2] = mp_tfw_tensor(w, "add2", MP_DT_FLOAT32, 4, (int32_t[]){1, 4, 4, 2}, 0, NULL);
    t[T_CONV_W] = add_const(w, "conv/weights", MP_DT_FLOAT32, 4, (int32_t[]){3, 3, 3, 2}, m->conv_w,
                            sizeof m->conv_w);
    t[T_CONV_B] = add_const(w, "conv/bias", MP_DT_FLOAT32, 1, (int32_t[]){3}, m->conv_b,
                            sizeof m->conv_b);
    t[T_CONV] = mp_tfw_tensor(w, "conv", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 4, 3}, 0, NULL);
    t[T_DW_W] = add_const(w, "dw/weights", MP_DT_FLOAT32, 4, (int32_t[]){1, 3, 3, 6}, m->dw_w,
                          sizeof m->dw_w);
    t[T_DW_B] = add_const(w, "dw/bias", MP_DT_FLOAT32, 1, (int32_t[]){6}, m->dw_b, sizeof m->dw_b);
    t[T_DW] = mp_tfw_tensor(w, "dw", MP_DT_FLOAT32, 4, (int32_t[]){1, 2, 4, 6}, 0, NULL);
    t[T_POOL] = mp_tfw_tensor(w, "pool", MP_DT_FLOAT32, 4, (int32_t[]){1, 1, 2, 6}, 0, NULL);
    t[T_AXES] = add_const(w, "mean/axes", MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){1, 2}, 8);
    t[T_MEAN] = mp_tfw_tensor(w, "mean", MP_DT_FLOAT32, 4, (int32_t[]){1, 1, 1, 6}, 0, NULL);
    t[T_CONCAT] = mp_tfw_tensor(w, "concat", MP_DT_FLOAT32, 4, (int32_t[]){1, 1, 3, 6}, 0, NULL);
    t[T_SHAPE] = add_const(w, "flat/shape", MP_DT_INT32, 1, (int32_t[]){2}, (int32_t[]){1, 18}, 8);
    t[T_FLAT] = mp_tfw_tensor(w, "flat", MP_DT_FLOAT32, 2, (int32_t[]){1, 18}, 0, NULL);
    t[T_FC_W] = add_const(w, "fc/weights", MP_DT_FLOAT32, 2, (int32_t[]){5, 18}, m->fc_w,
                          sizeof m->fc_w);
    t[T_FC] = mp_tfw_tensor(w, "fc", MP_DT_FLOAT32, 2, (int32_t[]){1, 5}, 0, NULL);
    t[T_PROB] = mp_tfw_tensor(w, "prob", MP_DT_FLOAT32, 2, (int32_t[]){1, 5}, 0,
                              (int32_t[]){-1, 5});
    t[T_SQUEEZE] = mp_tfw_tensor(w, "squeeze", MP_DT_FLOAT32, 2, (int32_t[]){1, 6}, 0, NULL);
    t[T_QUANT] = add_const(w, "quantized", MP_DT_INT8, 4, (int32_t[]){3, 1, 1, 2}, m->q, 6);
    for (int i = 0; i < T_COUNT; i++)
        assert_int_equal(t[i], i);
    assert_int_equal(mp_tfw_tensor_quant(w, T_QUANT, 3, (float[]){0.5f, 0.25f, 0.125f},
                                         (int64_t[]){0, 3, -7}, 0),
                     T_QUANT);

    mp_op_options o = mp_tfw_options_default();
    o.activation = MP_ACT_RELU;
    assert_int_equal(mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){T_INPUT, T_ADD_CONST}, 1,
                               (int32_t[]){T_ADD1}, &o), 0);
    assert_int_equal(mp_tfw_op(w, MP_OP_ADD, 2, (int32_t[]){T_ADD1, T_INPUT}, 1,
                               (int32_t[]){T_ADD2}, NULL), 1);

    o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_h = 2;
    o.stride_w = 1;
    o.dilation_w = 2;
    o.activation = MP_ACT_RELU6;
    assert_int_equal(mp_tfw_op(w, MP_OP_CONV_2D, 3, (int32_t[]){T_ADD2, T_CONV_W, T_CONV_B}, 1,
                               (int32_t[]){T_CONV}, &o), 2);

    o = mp_tfw_options_default();
    o.stride_h = o.stride_w = 1;
    o.depth_multiplier = 2;
    o.activation = MP_ACT_RELU;
    assert_int_equal(mp_tfw_op(w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){T_CONV, T_DW_W, T_DW_B},
                               1, (int32_t[]){T_DW}, &o), 3);

    o = mp_tfw_options_default();
    o.padding = MP_PAD_VALID;
    o.stride_h = o.stride_w = 2;
    o.filter_h = o.filter_w = 2;
    assert_int_equal(mp_tfw_op(w, MP_OP_AVERAGE_POOL_2D, 1, (int32_t[]){T_DW}, 1,
                               (int32_t[]){T_POOL}, &o), 4);

    o = mp_tfw_options_default();
    o.keep_dims = true;
    assert_int_equal(mp_tfw_op(w, MP_OP_MEAN, 2, (int32_t[]){T_DW, T_AXES}, 1, (int32_t[]){T_MEAN},
                               &o), 5);

    o = mp_tfw_options_default();
    o.axis = 2;
    assert_int_equal(mp_tfw_op(w, MP_OP_CONCATENATION, 2, (int32_t[]){T_POOL, T_MEAN}, 1,
                               (int32_t[]){T_CONCAT}, &o), 6);

    o = mp_tfw_options_default();
    o.has_new_shape = true;
    o.n_new_shape = 2;
    o.new_shape[0] = 1;
    o.new_shape[1] = 18;
    assert_int_equal(mp_tfw_op(w, MP_OP_RESHAPE, 2, (int32_t[]){T_CONCAT, T_SHAPE}, 1,
                               (int32_t[]){T_FLAT}, &o), 7);

    o = mp_tfw_options_default();
    o.activation = MP_ACT_TANH;
    o.keep_num_dims = true;
    assert_int_equal(mp_tfw_op(w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){T_FLAT, T_FC_W, -1}, 1,
                               (int32_t[]){T_FC}, &o), 8);

    o = mp_tfw_options_default();
    o.beta = 0.5f;
    assert_int_equal(mp_tfw_op(w, MP_OP_SOFTMAX, 1, (int32_t[]){T_FC}, 1, (int32_t[]){T_PROB}, &o),
                     9);

    o = mp_tfw_options_default();
    o.n_squeeze_dims = 2;
    o.squeeze_dims[0] = 1;
    o.squeeze_dims[1] = 2;
    assert_int_equal(mp_tfw_op(w, MP_OP_SQUEEZE, 1, (int32_t[]){T_MEAN}, 1,
                               (int32_t[]){T_SQUEEZE}, &o), 10);

    assert_int_equal(mp_tfw_io(w, 1, (int32_t[]){T_INPUT}, 2, (int32_t[]){T_PROB, T_SQUEEZE}), 0);
    mp_error err;
    mp_status st = mp_tfw_finish(w, &m->bytes, &m->size, &err);
    if (st != MP_OK)
        fail_msg("finish: %s", err.msg);
    mp_tfw_free(w);
}

static mp_model *load(const built *m)
{
    mp_model *model = NULL;
    mp_error err;
    mp_status st = mp_model_load_memory(m->bytes, m->size, "writer-test", &model, &err);
    if (st != MP_OK)
        fail_msg("reader rejected the written model: %s (%s)", err.msg, mp_status_name(st));
    return model;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_header_and_layout(void **state)
{
    (void)state;
    built m;
    build_model(&m, NULL);
    raw r = {m.bytes, m.size};
    assert_true(m.size > 8);
    assert_memory_equal(r.p + 4, "TFL3", 4);
    size_t model = deref(r, 0);
    assert_int_equal(model % 4, 0);
    /* Model.version = 3 */
    assert_int_equal(rd32(r, field(r, model, 0)), 3);
    /* buffers: 0 is the empty sentinel; every non-empty data vector is 16-byte aligned */
    size_t bufs = deref(r, field(r, model, 4));
    uint32_t n_bufs = rd32(r, bufs);
    assert_int_equal(n_bufs, 10);
    size_t b0 = table_elem(r, model, 4, 0);
    size_t d0 = field(r, b0, 0);
    if (d0)
        assert_int_equal(rd32(r, deref(r, d0)), 0);
    for (uint32_t i = 1; i < n_bufs; i++) {
        size_t b = table_elem(r, model, 4, i);
        size_t vec = deref(r, field(r, b, 0));
        assert_true(rd32(r, vec) > 0);
        assert_int_equal((vec + 4) % 16, 0);
        assert_true(vec + 4 + rd32(r, vec) <= r.size);
    }
    /* the conv weights sit verbatim in the file, 16-byte aligned */
    const uint8_t *hit = memmem(m.bytes, m.size, m.conv_w, sizeof m.conv_w);
    assert_non_null(hit);
    assert_int_equal((hit - (const uint8_t *)m.bytes) % 16, 0);
    free(m.bytes);
}

static void test_round_trip(void **state)
{
    (void)state;
    built m;
    build_model(&m, "writer round trip");
    mp_model *model = load(&m);

    assert_int_equal(model->version, 3);
    assert_string_equal(model->description, "writer round trip");
    assert_string_equal(model->subgraph_name, "test_graph");
    assert_int_equal(model->n_tensors, T_COUNT);
    assert_int_equal(model->n_ops, 11);
    assert_int_equal(model->n_inputs, 1);
    assert_int_equal(model->inputs[0], T_INPUT);
    assert_int_equal(model->n_outputs, 2);
    assert_int_equal(model->outputs[0], T_PROB);
    assert_int_equal(model->outputs[1], T_SQUEEZE);

    /* tensors: names, dtypes, shapes, signatures, buffers and their bytes */
    static const char *names[T_COUNT] = {
        "input", "add_const", "add1", "add2", "conv/weights", "conv/bias", "conv", "dw/weights",
        "dw/bias", "dw", "pool", "mean/axes", "mean", "concat", "flat/shape", "flat", "fc/weights",
        "fc", "prob", "squeeze", "quantized"};
    static const int ranks[T_COUNT] = {4, 4, 4, 4, 4, 1, 4, 4, 1, 4, 4, 1, 4, 4, 1, 2, 2, 2, 2, 2, 4};
    static const int32_t shapes[T_COUNT][4] = {
        {1, 4, 4, 2}, {1, 4, 4, 2}, {1, 4, 4, 2}, {1, 4, 4, 2}, {3, 3, 3, 2}, {3}, {1, 2, 4, 3},
        {1, 3, 3, 6}, {6}, {1, 2, 4, 6}, {1, 1, 2, 6}, {2}, {1, 1, 1, 6}, {1, 1, 3, 6}, {2},
        {1, 18}, {5, 18}, {1, 5}, {1, 5}, {1, 6}, {3, 1, 1, 2}};
    const void *data[T_COUNT] = {0};
    size_t bytes[T_COUNT] = {0};
    data[T_ADD_CONST] = m.add_const, bytes[T_ADD_CONST] = sizeof m.add_const;
    data[T_CONV_W] = m.conv_w, bytes[T_CONV_W] = sizeof m.conv_w;
    data[T_CONV_B] = m.conv_b, bytes[T_CONV_B] = sizeof m.conv_b;
    data[T_DW_W] = m.dw_w, bytes[T_DW_W] = sizeof m.dw_w;
    data[T_DW_B] = m.dw_b, bytes[T_DW_B] = sizeof m.dw_b;
    data[T_AXES] = (int32_t[]){1, 2}, bytes[T_AXES] = 8;
    data[T_SHAPE] = (int32_t[]){1, 18}, bytes[T_SHAPE] = 8;
    data[T_FC_W] = m.fc_w, bytes[T_FC_W] = sizeof m.fc_w;
    data[T_QUANT] = m.q, bytes[T_QUANT] = sizeof m.q;
    int buffer = 1;
    for (int i = 0; i < T_COUNT; i++) {
        const mp_tensor_info *t = &model->tensors[i];
        assert_string_equal(t->name, names[i]);
        assert_int_equal(t->dtype, i == T_AXES || i == T_SHAPE ? MP_DT_INT32
                                   : i == T_QUANT              ? MP_DT_INT8
                                                               : MP_DT_FLOAT32);
        assert_int_equal(t->rank, ranks[i]);
        for (int k = 0; k < ranks[i]; k++)
            assert_int_equal(t->shape[k], shapes[i][k]);
        assert_false(t->is_variable);
        if (data[i]) {
            assert_int_equal(t->buffer, buffer++);
            assert_non_null(t->data);
            assert_int_equal(t->data_bytes, bytes[i]);
            assert_memory_equal(t->data, data[i], bytes[i]);
            assert_int_equal((uintptr_t)t->data % 16, 0);
        } else {
            assert_int_equal(t->buffer, 0);
            assert_null(t->data);
        }
        if (i == T_INPUT || i == T_PROB) {
            assert_true(t->has_signature);
        } else {
            assert_false(t->has_signature);
        }
        if (i != T_QUANT)
            assert_int_equal(t->quant.count, 0);
    }
    const int32_t *sig = model->tensors[T_INPUT].signature;
    assert_int_equal(sig[0], 1);
    assert_int_equal(sig[1], -1);
    assert_int_equal(sig[2], -1);
    assert_int_equal(sig[3], 2);
    assert_int_equal(model->tensors[T_PROB].signature[0], -1);
    assert_int_equal(model->tensors[T_PROB].signature[1], 5);
    const mp_quant *q = &model->tensors[T_QUANT].quant;
    assert_int_equal(q->count, 3);
    assert_true(q->scale[0] == 0.5f && q->scale[1] == 0.25f && q->scale[2] == 0.125f);
    assert_non_null(q->zero_point);
    assert_true(q->zero_point[0] == 0 && q->zero_point[1] == 3 && q->zero_point[2] == -7);
    assert_int_equal(q->quantized_dimension, 0);

    /* operators: codes, versions, inputs/outputs, options */
    static const int codes[11] = {MP_OP_ADD, MP_OP_ADD, MP_OP_CONV_2D, MP_OP_DEPTHWISE_CONV_2D,
                                  MP_OP_AVERAGE_POOL_2D, MP_OP_MEAN, MP_OP_CONCATENATION,
                                  MP_OP_RESHAPE, MP_OP_FULLY_CONNECTED, MP_OP_SOFTMAX,
                                  MP_OP_SQUEEZE};
    static const int n_in[11] = {2, 2, 3, 3, 1, 2, 2, 2, 3, 1, 1};
    static const int32_t ins[11][3] = {
        {T_INPUT, T_ADD_CONST}, {T_ADD1, T_INPUT}, {T_ADD2, T_CONV_W, T_CONV_B},
        {T_CONV, T_DW_W, T_DW_B}, {T_DW}, {T_DW, T_AXES}, {T_POOL, T_MEAN}, {T_CONCAT, T_SHAPE},
        {T_FLAT, T_FC_W, -1}, {T_FC}, {T_MEAN}};
    static const int32_t outs[11] = {T_ADD1, T_ADD2, T_CONV, T_DW, T_POOL, T_MEAN, T_CONCAT,
                                     T_FLAT, T_FC, T_PROB, T_SQUEEZE};
    for (int i = 0; i < 11; i++) {
        const mp_op_info *op = &model->ops[i];
        assert_int_equal(op->opcode, codes[i]);
        assert_int_equal(op->version, 1);
        assert_null(op->custom_code);
        assert_int_equal(op->n_inputs, n_in[i]);
        for (int k = 0; k < n_in[i]; k++)
            assert_int_equal(op->inputs[k], ins[i][k]);
        assert_int_equal(op->n_outputs, 1);
        assert_int_equal(op->outputs[0], outs[i]);
        assert_int_equal(op->n_intermediates, 0);
    }
    const mp_op_options *o = &model->ops[0].opt;
    assert_int_equal(o->activation, MP_ACT_RELU);
    assert_int_equal(model->ops[1].opt.activation, MP_ACT_NONE);

    o = &model->ops[2].opt; /* CONV_2D */
    assert_int_equal(o->padding, MP_PAD_SAME);
    assert_int_equal(o->stride_h, 2);
    assert_int_equal(o->stride_w, 1);
    assert_int_equal(o->dilation_w, 2);
    assert_int_equal(o->dilation_h, 1);
    assert_int_equal(o->activation, MP_ACT_RELU6);

    o = &model->ops[3].opt; /* DEPTHWISE_CONV_2D */
    assert_int_equal(o->padding, MP_PAD_SAME);
    assert_int_equal(o->stride_h, 1);
    assert_int_equal(o->stride_w, 1);
    assert_int_equal(o->depth_multiplier, 2);
    assert_int_equal(o->dilation_w, 1);
    assert_int_equal(o->dilation_h, 1);
    assert_int_equal(o->activation, MP_ACT_RELU);

    o = &model->ops[4].opt; /* AVERAGE_POOL_2D */
    assert_int_equal(o->padding, MP_PAD_VALID);
    assert_int_equal(o->stride_h, 2);
    assert_int_equal(o->stride_w, 2);
    assert_int_equal(o->filter_h, 2);
    assert_int_equal(o->filter_w, 2);
    assert_int_equal(o->activation, MP_ACT_NONE);

    assert_true(model->ops[5].opt.keep_dims);          /* MEAN */
    assert_int_equal(model->ops[6].opt.axis, 2);       /* CONCATENATION */
    assert_int_equal(model->ops[6].opt.activation, MP_ACT_NONE);

    o = &model->ops[7].opt; /* RESHAPE */
    assert_true(o->has_new_shape);
    assert_int_equal(o->n_new_shape, 2);
    assert_int_equal(o->new_shape[0], 1);
    assert_int_equal(o->new_shape[1], 18);

    o = &model->ops[8].opt; /* FULLY_CONNECTED */
    assert_int_equal(o->activation, MP_ACT_TANH);
    assert_true(o->keep_num_dims);
    assert_int_equal(o->weights_format, 0);

    assert_true(model->ops[9].opt.beta == 0.5f); /* SOFTMAX */

    o = &model->ops[10].opt; /* SQUEEZE */
    assert_int_equal(o->n_squeeze_dims, 2);
    assert_int_equal(o->squeeze_dims[0], 1);
    assert_int_equal(o->squeeze_dims[1], 2);

    mp_model_free(model);
    free(m.bytes);
}

/* The file is read in place from a mapping too: constants stay 16-byte aligned there. */
static void test_load_file_alignment(void **state)
{
    (void)state;
    built m;
    build_model(&m, NULL);
    char path[] = "/tmp/mp_test_writer_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, m.bytes, m.size), (ssize_t)m.size);
    close(fd);
    mp_model *model = NULL;
    mp_error err;
    mp_status st = mp_model_load_file(path, &model, &err);
    unlink(path);
    if (st != MP_OK)
        fail_msg("load_file: %s", err.msg);
    for (int i = 0; i < model->n_tensors; i++)
        if (model->tensors[i].data)
            assert_int_equal((uintptr_t)model->tensors[i].data % 16, 0);
    assert_memory_equal(model->tensors[T_CONV_W].data, m.conv_w, sizeof m.conv_w);
    mp_model_free(model);
    free(m.bytes);
}

static void test_deterministic(void **state)
{
    (void)state;
    built a, b;
    build_model(&a, NULL);
    build_model(&b, NULL);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.bytes, b.bytes, a.size);
    free(a.bytes);
    free(b.bytes);
}

/* Codes above 126 go to builtin_code, with deprecated_builtin_code = 127 (placeholder). */
static void test_extended_opcode(void **state)
{
    (void)state;
    mp_tfw *w = mp_tfw_create();
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, 0, NULL);
    int z = mp_tfw_tensor(w, "z", MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, 0, NULL);
    int v = mp_tfw_tensor(w, "v", MP_DT_FLOAT32, 2, (int32_t[]){1, 4}, 0, NULL);
    assert_int_equal(mp_tfw_op(w, MP_OP_RELU, 1, &x, 1, &y, NULL), 0);
    assert_int_equal(mp_tfw_op(w, MP_OP_GELU, 1, &y, 1, &z, NULL), 1);
    assert_int_equal(mp_tfw_op(w, MP_OP_RELU, 1, &z, 1, &v, NULL), 2); /* shares code 0 */
    mp_tfw_io(w, 1, &x, 1, &v);
    void *bytes;
    size_t size;
    mp_error err;
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
    mp_tfw_free(w);

    raw r = {bytes, size};
    size_t model = deref(r, 0);
    assert_int_equal(rd32(r, deref(r, field(r, model, 1))), 2); /* two operator codes */
    size_t relu = table_elem(r, model, 1, 0);
    size_t gelu = table_elem(r, model, 1, 1);
    assert_int_equal(r.p[field(r, relu, 0)], MP_OP_RELU);
    assert_int_equal(rd32(r, field(r, relu, 3)), MP_OP_RELU);
    assert_int_equal(r.p[field(r, gelu, 0)], 127);
    assert_int_equal(rd32(r, field(r, gelu, 3)), MP_OP_GELU);

    mp_model *m = NULL;
    mp_status st = mp_model_load_memory(bytes, size, "extended", &m, &err);
    if (st != MP_OK)
        fail_msg("reader: %s", err.msg);
    assert_int_equal(m->n_ops, 3);
    assert_int_equal(m->ops[0].opcode, MP_OP_RELU);
    assert_int_equal(m->ops[1].opcode, MP_OP_GELU);
    assert_int_equal(m->ops[2].opcode, MP_OP_RELU);
    mp_model_free(m);
    free(bytes);
}

static void test_errors(void **state)
{
    (void)state;
    mp_error err;
    void *bytes = (void *)1;
    size_t size = 1;

    /* buffer size not matching the shape */
    mp_tfw *w = mp_tfw_create();
    int b = mp_tfw_buffer(w, (float[]){1, 2, 3}, 12);
    assert_int_equal(b, 1);
    assert_int_equal(mp_tfw_tensor(w, "short", MP_DT_FLOAT32, 1, (int32_t[]){4}, b, NULL), -1);
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_ERR_ARG);
    assert_null(bytes);
    assert_int_equal(size, 0);
    assert_non_null(strstr(err.msg, "short"));
    mp_tfw_free(w);

    /* operator input that does not exist; the first fault is the one reported */
    w = mp_tfw_create();
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    assert_int_equal(mp_tfw_op(w, MP_OP_RELU, 1, (int32_t[]){7}, 1, &x, NULL), -1);
    assert_int_equal(mp_tfw_tensor(w, "bad", MP_DT_FLOAT32, 9, (int32_t[9]){0}, 0, NULL), -1);
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_ERR_ARG);
    assert_non_null(strstr(err.msg, "RELU"));
    assert_non_null(strstr(err.msg, "tensor 7"));
    mp_tfw_free(w);

    /* bad buffer index, bad opcode, custom */
    w = mp_tfw_create();
    assert_int_equal(mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){4}, 3, NULL), -1);
    mp_tfw_free(w);
    w = mp_tfw_create();
    x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    assert_int_equal(mp_tfw_op(w, MP_OP_CUSTOM, 1, &x, 1, &x, NULL), -1);
    assert_int_equal(mp_tfw_op(w, MP_OP_CODE_COUNT, 1, &x, 1, &x, NULL), -1);
    mp_tfw_free(w);

    /* no outputs */
    w = mp_tfw_create();
    x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 1, (int32_t[]){4}, 0, NULL);
    assert_int_equal(mp_tfw_op(w, MP_OP_RELU, 1, &x, 1, &y, NULL), 0);
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_ERR_ARG);
    assert_int_equal(mp_tfw_io(w, 1, (int32_t[]){2}, 1, &y), -1);
    mp_tfw_free(w);
    /* empty model */
    w = mp_tfw_create();
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_ERR_ARG);
    mp_tfw_free(w);
    mp_tfw_free(NULL);
}

static void test_options_types(void **state)
{
    (void)state;
    /* BuiltinOptions union numbers from the schema */
    assert_int_equal(mp_tfw_options_type(MP_OP_CONV_2D), 1);
    assert_int_equal(mp_tfw_options_type(MP_OP_DEPTHWISE_CONV_2D), 2);
    assert_int_equal(mp_tfw_options_type(MP_OP_AVERAGE_POOL_2D), 5);
    assert_int_equal(mp_tfw_options_type(MP_OP_MAX_POOL_2D), 5);
    assert_int_equal(mp_tfw_options_type(MP_OP_FULLY_CONNECTED), 8);
    assert_int_equal(mp_tfw_options_type(MP_OP_SOFTMAX), 9);
    assert_int_equal(mp_tfw_options_type(MP_OP_CONCATENATION), 10);
    assert_int_equal(mp_tfw_options_type(MP_OP_ADD), 11);
    assert_int_equal(mp_tfw_options_type(MP_OP_RESHAPE), 17);
    assert_int_equal(mp_tfw_options_type(MP_OP_MUL), 21);
    assert_int_equal(mp_tfw_options_type(MP_OP_PAD), 22);
    assert_int_equal(mp_tfw_options_type(MP_OP_MEAN), 27);
    assert_int_equal(mp_tfw_options_type(MP_OP_SQUEEZE), 30);
    assert_int_equal(mp_tfw_options_type(MP_OP_STRIDED_SLICE), 32);
    assert_int_equal(mp_tfw_options_type(MP_OP_HARD_SWISH), 91);
    assert_int_equal(mp_tfw_options_type(MP_OP_LSTM), 14);
    assert_int_equal(mp_tfw_options_type(MP_OP_GATHER), 23);
    assert_int_equal(mp_tfw_options_type(MP_OP_SPLIT), 35);
    assert_int_equal(mp_tfw_options_type(MP_OP_ARG_MAX), 40);
    assert_int_equal(mp_tfw_options_type(MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM), 71);
    assert_int_equal(mp_tfw_options_type(MP_OP_LEAKY_RELU), 75);
    assert_int_equal(mp_tfw_options_type(MP_OP_SQUARED_DIFFERENCE), 76);
    assert_int_equal(mp_tfw_options_type(MP_OP_SPLIT_V), 79);
    assert_int_equal(mp_tfw_options_type(MP_OP_WHILE), 93);
    assert_int_equal(mp_tfw_options_type(MP_OP_SELECT_V2), 98);
    assert_int_equal(mp_tfw_options_type(MP_OP_BATCH_MATMUL), 101);
    assert_int_equal(mp_tfw_options_type(MP_OP_GELU), 116);
    assert_int_equal(mp_tfw_options_type(MP_OP_RELU), 0);
    assert_int_equal(mp_tfw_options_type(MP_OP_LOGISTIC), 0);
}

/* The option tables of the operators of sequence, attention and text models (issue 16) go
 * through the writer and come back from the reader with the values set: non-default values
 * chosen by hand, each different from its schema default. */
static void test_sequence_options_round_trip(void **state)
{
    (void)state;
    mp_tfw *w = mp_tfw_create();
    int x = mp_tfw_tensor(w, "x", MP_DT_FLOAT32, 2, (int32_t[]){2, 4}, 0, NULL);
    int y = mp_tfw_tensor(w, "y", MP_DT_FLOAT32, 2, (int32_t[]){2, 4}, 0, NULL);
    mp_op_options o[7];
    int codes[7] = {MP_OP_LSTM, MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, MP_OP_GATHER,
                    MP_OP_BATCH_MATMUL, MP_OP_LEAKY_RELU, MP_OP_ARG_MAX, MP_OP_GELU};
    for (int i = 0; i < 7; i++)
        o[i] = mp_tfw_options_default();
    o[0].activation = MP_ACT_TANH;
    o[0].cell_clip = 10.0f;
    o[0].proj_clip = 2.5f;
    o[0].lstm_kernel_type = 1;
    o[1].activation = MP_ACT_TANH;
    o[1].cell_clip = 3.0f;
    o[1].time_major = true;
    o[1].diagonal_recurrent_tensors = true;
    o[2].axis = 1;
    o[2].batch_dims = 1;
    o[3].adj_x = true;
    o[3].adj_y = true;
    o[4].alpha = 0.2f;
    o[5].out_type = MP_DT_INT64;
    o[6].approximate = true;
    for (int i = 0; i < 7; i++)
        assert_int_equal(mp_tfw_op(w, codes[i], 1, &x, 1, &y, &o[i]), i);
    mp_tfw_io(w, 1, &x, 1, &y);
    void *bytes;
    size_t size;
    mp_error err;
    assert_int_equal(mp_tfw_finish(w, &bytes, &size, &err), MP_OK);
    mp_tfw_free(w);
    mp_model *m = NULL;
    if (mp_model_load_memory(bytes, size, "options", &m, &err) != MP_OK)
        fail_msg("reader: %s", err.msg);
    const mp_op_options *r = NULL;
    r = &m->ops[0].opt;
    assert_int_equal(r->activation, MP_ACT_TANH);
    assert_true(r->cell_clip == 10.0f && r->proj_clip == 2.5f);
    assert_int_equal(r->lstm_kernel_type, 1);
    r = &m->ops[1].opt;
    assert_true(r->cell_clip == 3.0f && r->proj_clip == 0.0f);
    assert_true(r->time_major && r->diagonal_recurrent_tensors && !r->asymmetric_quantize_inputs);
    r = &m->ops[2].opt;
    assert_int_equal(r->axis, 1);
    assert_int_equal(r->batch_dims, 1);
    r = &m->ops[3].opt;
    assert_true(r->adj_x && r->adj_y);
    assert_true(m->ops[4].opt.alpha == 0.2f);
    assert_int_equal(m->ops[5].opt.out_type, MP_DT_INT64);
    assert_true(m->ops[6].opt.approximate);
    mp_model_free(m);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_types),
        cmocka_unit_test(test_header_and_layout),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_load_file_alignment),
        cmocka_unit_test(test_extended_opcode),
        cmocka_unit_test(test_sequence_options_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
