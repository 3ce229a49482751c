/* Tests of the built-in model zoo: every model builds, is read back by the engine's reader,
 * and has the structure of the architecture it claims. Expected operator and parameter counts
 * are derived here from the published architecture tables, independently of zoo.c. The graph
 * is checked to be well formed (topological order, shapes consistent with every conv, pool and
 * reshape), the weights finite and scaled, the MLP evaluated in plain C, and builds repeatable.
 *
 * mobilenet_v2_int8 is checked against TensorFlow Lite's quantization specification (int8
 * activations per tensor, int8 weights per output channel with zero point 0, int32 biases of
 * scale input_scale * weight_scale[c], pool and reshape keeping their input's quantization,
 * softmax 1/256 and -128), its weights against mobilenet_v2's (same seed: each dequantized
 * weight within half a step of the float one), and its run on the reference input against
 * mobilenet_v2's run (same top-1, outputs close). */
#include "tests/util/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/reference_input.h"
#include "engine/model/zoo.h"
#include "engine/session.h"

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct built {
    void *bytes;
    size_t size;
    mp_model *model;
} built;

static built build(const char *name)
{
    built b = {0};
    mp_error err;
    mp_status st = mp_zoo_build(name, &b.bytes, &b.size, &err);
    if (st != MP_OK)
        fail_msg("zoo build %s: %s", name, err.msg);
    st = mp_model_load_memory(b.bytes, b.size, name, &b.model, &err);
    if (st != MP_OK)
        fail_msg("reader rejected zoo model %s: %s", name, err.msg);
    return b;
}

static void release(built *b)
{
    mp_model_free(b->model);
    free(b->bytes);
}

static int count_ops(const mp_model *m, int opcode)
{
    int n = 0;
    for (int i = 0; i < m->n_ops; i++)
        n += m->ops[i].opcode == opcode;
    return n;
}

/* Elements of all float32 constant tensors (weights and biases; int32 shapes/axes excluded). */
static long float_params(const mp_model *m)
{
    long n = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const mp_tensor_info *t = &m->tensors[i];
        if (t->data && t->dtype == MP_DT_FLOAT32)
            n += (long)(t->data_bytes / sizeof(float));
    }
    return n;
}

static int find_tensor(const mp_model *m, const char *name)
{
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return i;
    return -1;
}

static void assert_shape(const mp_tensor_info *t, int rank, const int32_t *dims)
{
    if (t->rank != rank)
        fail_msg("tensor '%s': rank %d, expected %d", t->name, t->rank, rank);
    for (int k = 0; k < rank; k++)
        if (t->shape[k] != dims[k])
            fail_msg("tensor '%s': dim %d is %d, expected %d", t->name, k, t->shape[k], dims[k]);
}

static int pool_out(int in, int filter, int stride, int padding)
{
    return padding == MP_PAD_SAME ? (in + stride - 1) / stride : (in - filter) / stride + 1;
}

/* Structural checks that hold for any model the zoo makes: operators in topological order,
 * each activation produced once, constants finite and small, shapes consistent per op. */
static void check_graph(const mp_model *m)
{
    bool *ready = calloc((size_t)m->n_tensors, sizeof *ready);
    assert_non_null(ready);
    for (int i = 0; i < m->n_inputs; i++)
        ready[m->inputs[i]] = true;
    for (int i = 0; i < m->n_tensors; i++) {
        const mp_tensor_info *t = &m->tensors[i];
        if (!t->data)
            continue;
        ready[i] = true;
        if (t->dtype != MP_DT_FLOAT32)
            continue;
        const float *v = t->data;
        size_t n = t->data_bytes / sizeof(float);
        double sum = 0, sq = 0;
        for (size_t k = 0; k < n; k++) {
            if (!isfinite(v[k]) || fabsf(v[k]) > 2.0f)
                fail_msg("constant '%s'[%zu] = %g", t->name, k, (double)v[k]);
            sum += v[k];
            sq += (double)v[k] * v[k];
        }
        double mean = sum / (double)n, rms = sqrt(sq / (double)n);
        if (!(rms > 0) || fabs(mean) > 5.0 * rms / sqrt((double)n))
            fail_msg("constant '%s': mean %g rms %g (expected zero-centred, non-zero)", t->name,
                     mean, rms);
    }

    for (int i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        for (int k = 0; k < op->n_inputs; k++)
            if (op->inputs[k] >= 0 && !ready[op->inputs[k]])
                fail_msg("op %d (%s): input %d (tensor %d '%s') not yet computed", i,
                         mp_op_name(op->opcode), k, op->inputs[k], m->tensors[op->inputs[k]].name);
        for (int k = 0; k < op->n_outputs; k++) {
            if (ready[op->outputs[k]])
                fail_msg("op %d: output tensor %d written twice", i, op->outputs[k]);
            ready[op->outputs[k]] = true;
        }
        const mp_tensor_info *in = &m->tensors[op->inputs[0]];
        const mp_tensor_info *out = &m->tensors[op->outputs[0]];
        const mp_op_options *o = &op->opt;
        switch (op->opcode) {
        case MP_OP_CONV_2D: {
            const mp_tensor_info *w = &m->tensors[op->inputs[1]];
            const mp_tensor_info *b = &m->tensors[op->inputs[2]];
            assert_int_equal(w->shape[3], in->shape[3]);
            assert_int_equal(w->shape[1], w->shape[2]);
            int32_t expect[4] = {1, pool_out(in->shape[1], w->shape[1], o->stride_h, o->padding),
                                 pool_out(in->shape[2], w->shape[2], o->stride_w, o->padding),
                                 w->shape[0]};
            assert_shape(out, 4, expect);
            assert_shape(b, 1, &w->shape[0]);
            break;
        }
        case MP_OP_DEPTHWISE_CONV_2D: {
            const mp_tensor_info *w = &m->tensors[op->inputs[1]];
            const mp_tensor_info *b = &m->tensors[op->inputs[2]];
            assert_int_equal(w->shape[0], 1);
            assert_int_equal(o->depth_multiplier, 1);
            assert_int_equal(w->shape[3], in->shape[3]);
            int32_t expect[4] = {1, pool_out(in->shape[1], w->shape[1], o->stride_h, o->padding),
                                 pool_out(in->shape[2], w->shape[2], o->stride_w, o->padding),
                                 in->shape[3]};
            assert_shape(out, 4, expect);
            assert_shape(b, 1, &in->shape[3]);
            break;
        }
        case MP_OP_AVERAGE_POOL_2D: {
            int32_t expect[4] = {1, pool_out(in->shape[1], o->filter_h, o->stride_h, o->padding),
                                 pool_out(in->shape[2], o->filter_w, o->stride_w, o->padding),
                                 in->shape[3]};
            assert_shape(out, 4, expect);
            break;
        }
        case MP_OP_MEAN: {
            const mp_tensor_info *axes = &m->tensors[op->inputs[1]];
            assert_int_equal(axes->dtype, MP_DT_INT32);
            assert_int_equal(axes->data_bytes, 8);
            assert_int_equal(((const int32_t *)axes->data)[0], 1);
            assert_int_equal(((const int32_t *)axes->data)[1], 2);
            assert_true(o->keep_dims);
            assert_shape(out, 4, (int32_t[]){1, 1, 1, in->shape[3]});
            break;
        }
        case MP_OP_ADD: case MP_OP_SOFTMAX:
            assert_int_equal(in->rank, out->rank);
            for (int k = 0; k < in->rank; k++)
                assert_int_equal(in->shape[k], out->shape[k]);
            if (op->opcode == MP_OP_ADD)
                assert_shape(&m->tensors[op->inputs[1]], out->rank, out->shape);
            else
                assert_true(o->beta == 1.0f);
            break;
        case MP_OP_RESHAPE: {
            size_t a, b;
            assert_true(mp_shape_elements(in->rank, in->shape, &a));
            assert_true(mp_shape_elements(out->rank, out->shape, &b));
            assert_int_equal(a, b);
            assert_true(o->has_new_shape);
            assert_int_equal(o->n_new_shape, out->rank);
            /* a flatten to [-1, n], as TensorFlow writes it: the batch carries through */
            assert_int_equal(o->new_shape[0], -1);
            for (int k = 1; k < out->rank; k++)
                assert_int_equal(o->new_shape[k], out->shape[k]);
            break;
        }
        case MP_OP_FULLY_CONNECTED: {
            const mp_tensor_info *w = &m->tensors[op->inputs[1]];
            assert_int_equal(w->shape[1], in->shape[in->rank - 1]);
            assert_shape(out, 2, (int32_t[]){1, w->shape[0]});
            break;
        }
        default:
            fail_msg("op %d: unexpected operator %s in a zoo model", i, mp_op_name(op->opcode));
        }
    }
    for (int i = 0; i < m->n_outputs; i++)
        assert_true(ready[m->outputs[i]]);
    free(ready);
}

/* ---- expected numbers, from the architecture tables --------------------------------------- */

static long conv_params(int k, int cin, int cout)
{
    return (long)k * k * cin * cout + cout; /* weights + folded-BN bias */
}

static long dw_params(int k, int c)
{
    return (long)k * k * c + c;
}

/* MobileNet v1 (Howard et al. 2017, table 1): conv 3x3/2 32, then 13 dw+pw pairs. */
static const int v1_pw[13] = {64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024};

static long v1_expected_params(int classes)
{
    long p = conv_params(3, 3, 32);
    int cin = 32;
    for (int i = 0; i < 13; i++) {
        p += dw_params(3, cin) + conv_params(1, cin, v1_pw[i]);
        cin = v1_pw[i];
    }
    return p + conv_params(1, cin, classes);
}

/* MobileNet v2 (Sandler et al. 2018, table 2): t, c, n, s. */
static const int v2_table[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                   {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};

typedef struct v2_counts {
    long params;
    int conv, dw, add;
} v2_counts;

static v2_counts v2_expected(int classes)
{
    v2_counts c = {conv_params(3, 3, 32), 1, 0, 0};
    int cin = 32;
    for (int s = 0; s < 7; s++) {
        for (int r = 0; r < v2_table[s][2]; r++) {
            int t = v2_table[s][0], cout = v2_table[s][1], stride = r ? 1 : v2_table[s][3];
            if (t > 1) {
                c.params += conv_params(1, cin, cin * t);
                c.conv++;
            }
            c.params += dw_params(3, cin * t) + conv_params(1, cin * t, cout);
            c.dw++;
            c.conv++;
            c.add += stride == 1 && cin == cout;
            cin = cout;
        }
    }
    c.params += conv_params(1, cin, 1280) + conv_params(1, 1280, classes);
    c.conv += 2;
    return c;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_catalogue(void **state)
{
    (void)state;
    static const char *required[] = {"mnist_mlp", "mobilenet_v1", "mobilenet_v2",
                                     "mobilenet_v2_dynamic", "mobilenet_v2_int8"};
    int n = mp_zoo_count();
    assert_true(n >= 5);
    for (size_t r = 0; r < sizeof required / sizeof required[0]; r++) {
        bool found = false;
        for (int i = 0; i < n; i++)
            found |= strcmp(mp_zoo_entry_at(i)->name, required[r]) == 0;
        if (!found)
            fail_msg("zoo lacks %s", required[r]);
    }
    for (int i = 0; i < n; i++) {
        const mp_zoo_entry *e = mp_zoo_entry_at(i);
        assert_non_null(e);
        assert_true(strlen(e->name) > 0);
        assert_true(strlen(e->description) > 10);
        assert_null(strchr(e->description, '\n'));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(e->name, mp_zoo_entry_at(j)->name);
    }
    assert_null(mp_zoo_entry_at(-1));
    assert_null(mp_zoo_entry_at(n));
}

static void test_unknown_name(void **state)
{
    (void)state;
    void *bytes = (void *)1;
    size_t size = 1;
    mp_error err;
    assert_int_equal(mp_zoo_build("resnet50", &bytes, &size, &err), MP_ERR_ARG);
    assert_null(bytes);
    assert_int_equal(size, 0);
    assert_non_null(strstr(err.msg, "resnet50"));
    for (int i = 0; i < mp_zoo_count(); i++)
        assert_non_null(strstr(err.msg, mp_zoo_entry_at(i)->name));
    assert_int_equal(mp_zoo_build("", &bytes, &size, &err), MP_ERR_ARG);
}

static void test_mnist_mlp(void **state)
{
    (void)state;
    built b = build("mnist_mlp");
    const mp_model *m = b.model;
    check_graph(m);
    assert_int_equal(m->n_inputs, 1);
    assert_int_equal(m->n_outputs, 1);
    const mp_tensor_info *in = &m->tensors[m->inputs[0]];
    assert_string_equal(in->name, "input");
    assert_shape(in, 4, (int32_t[]){1, 28, 28, 1});
    assert_shape(&m->tensors[m->outputs[0]], 2, (int32_t[]){1, 10});
    assert_int_equal(m->n_ops, 4);
    assert_int_equal(m->ops[0].opcode, MP_OP_RESHAPE);
    assert_int_equal(m->ops[1].opcode, MP_OP_FULLY_CONNECTED);
    assert_int_equal(m->ops[1].opt.activation, MP_ACT_RELU);
    assert_int_equal(m->ops[2].opcode, MP_OP_FULLY_CONNECTED);
    assert_int_equal(m->ops[2].opt.activation, MP_ACT_NONE);
    assert_int_equal(m->ops[3].opcode, MP_OP_SOFTMAX);
    assert_int_equal(float_params(m), 784 * 128 + 128 + 128 * 10 + 10);

    /* evaluate it in plain C on the reference input: a proper, non-degenerate distribution */
    float x[784], h[128], logits[10];
    assert_true(mp_reference_input(x, MP_DT_FLOAT32, 784, 0));
    const mp_op_info *fc1 = &m->ops[1], *fc2 = &m->ops[2];
    const float *w1 = m->tensors[fc1->inputs[1]].data, *b1 = m->tensors[fc1->inputs[2]].data;
    const float *w2 = m->tensors[fc2->inputs[1]].data, *b2 = m->tensors[fc2->inputs[2]].data;
    for (int o = 0; o < 128; o++) {
        double s = b1[o];
        for (int i = 0; i < 784; i++)
            s += (double)w1[o * 784 + i] * x[i];
        h[o] = s > 0 ? (float)s : 0.0f;
    }
    double mx = -INFINITY, sum = 0;
    for (int o = 0; o < 10; o++) {
        double s = b2[o];
        for (int i = 0; i < 128; i++)
            s += (double)w2[o * 128 + i] * h[i];
        logits[o] = (float)s;
        mx = fmax(mx, s);
    }
    double p[10], pmax = 0, pmin = 1;
    for (int o = 0; o < 10; o++)
        sum += p[o] = exp(logits[o] - mx);
    for (int o = 0; o < 10; o++) {
        p[o] /= sum;
        assert_true(isfinite(p[o]));
        pmax = fmax(pmax, p[o]);
        pmin = fmin(pmin, p[o]);
    }
    assert_true(pmax < 0.9);   /* not one-hot */
    assert_true(pmin > 1e-4);
    assert_true(pmax > 0.11);  /* not uniform either */
    release(&b);
}

static void test_mobilenet_v1(void **state)
{
    (void)state;
    built b = build("mobilenet_v1");
    const mp_model *m = b.model;
    check_graph(m);
    const mp_tensor_info *in = &m->tensors[m->inputs[0]];
    assert_string_equal(in->name, "input");
    assert_shape(in, 4, (int32_t[]){1, 224, 224, 3});
    assert_false(in->has_signature);
    const mp_tensor_info *out = &m->tensors[m->outputs[0]];
    assert_shape(out, 2, (int32_t[]){1, 1001});
    assert_string_equal(out->name, "MobilenetV1/Predictions/Reshape_1");

    assert_int_equal(count_ops(m, MP_OP_CONV_2D), 15);
    assert_int_equal(count_ops(m, MP_OP_DEPTHWISE_CONV_2D), 13);
    assert_int_equal(count_ops(m, MP_OP_AVERAGE_POOL_2D), 1);
    assert_int_equal(count_ops(m, MP_OP_RESHAPE), 1);
    assert_int_equal(count_ops(m, MP_OP_SOFTMAX), 1);
    assert_int_equal(m->n_ops, 31);
    assert_int_equal(m->ops[m->n_ops - 1].opcode, MP_OP_SOFTMAX);

    long params = float_params(m);
    assert_int_equal(params, v1_expected_params(1001));
    assert_int_equal(params, 4222057);
    /* every conv but the logits is followed by RELU6; pooling 7x7 over a 7x7 map */
    for (int i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        bool logits = op->opcode == MP_OP_CONV_2D && m->tensors[op->outputs[0]].shape[3] == 1001;
        if (op->opcode == MP_OP_CONV_2D || op->opcode == MP_OP_DEPTHWISE_CONV_2D) {
            assert_int_equal(op->opt.activation, logits ? MP_ACT_NONE : MP_ACT_RELU6);
            assert_int_equal(op->opt.padding, MP_PAD_SAME);
        }
        if (op->opcode == MP_OP_AVERAGE_POOL_2D) {
            assert_int_equal(op->opt.filter_w, 7);
            assert_int_equal(op->opt.filter_h, 7);
            assert_int_equal(op->opt.padding, MP_PAD_VALID);
            assert_shape(&m->tensors[op->inputs[0]], 4, (int32_t[]){1, 7, 7, 1024});
        }
    }
    int t = find_tensor(m, "MobilenetV1/MobilenetV1/Conv2d_13_pointwise/Relu6");
    assert_true(t >= 0);
    assert_shape(&m->tensors[t], 4, (int32_t[]){1, 7, 7, 1024});
    t = find_tensor(m, "MobilenetV1/MobilenetV1/Conv2d_1_depthwise/Relu6");
    assert_true(t >= 0);
    assert_shape(&m->tensors[t], 4, (int32_t[]){1, 112, 112, 32});
    release(&b);
}

static void check_v2(const mp_model *m, bool dynamic)
{
    check_graph(m);
    v2_counts want = v2_expected(1001);
    const mp_tensor_info *in = &m->tensors[m->inputs[0]];
    assert_string_equal(in->name, "input");
    assert_shape(in, 4, (int32_t[]){1, 224, 224, 3});
    const mp_tensor_info *out = &m->tensors[m->outputs[0]];
    assert_shape(out, 2, (int32_t[]){1, 1001});
    assert_string_equal(out->name, "MobilenetV2/Predictions/Reshape_1");

    assert_int_equal(count_ops(m, MP_OP_CONV_2D), want.conv);
    assert_int_equal(count_ops(m, MP_OP_DEPTHWISE_CONV_2D), want.dw);
    assert_int_equal(count_ops(m, MP_OP_ADD), want.add);
    assert_int_equal(want.add, 10);
    assert_int_equal(count_ops(m, MP_OP_RESHAPE), 1);
    assert_int_equal(count_ops(m, MP_OP_SOFTMAX), 1);
    assert_int_equal(count_ops(m, MP_OP_AVERAGE_POOL_2D), dynamic ? 0 : 1);
    assert_int_equal(count_ops(m, MP_OP_MEAN), dynamic ? 1 : 0);
    assert_int_equal(m->n_ops, want.conv + want.dw + want.add + 3);

    long params = float_params(m);
    assert_int_equal(params, want.params);
    assert_true(params > 3400000 && params < 3600000);

    int t = find_tensor(m, "MobilenetV2/expanded_conv_3/depthwise/Relu6");
    assert_true(t >= 0);
    assert_shape(&m->tensors[t], 4, (int32_t[]){1, 28, 28, 144});
    t = find_tensor(m, "MobilenetV2/expanded_conv_16/project/add_fold");
    assert_true(t >= 0);
    assert_shape(&m->tensors[t], 4, (int32_t[]){1, 7, 7, 320});
    t = find_tensor(m, "MobilenetV2/Conv_1/Relu6");
    assert_true(t >= 0);
    assert_shape(&m->tensors[t], 4, (int32_t[]){1, 7, 7, 1280});

    if (dynamic) {
        assert_true(in->has_signature);
        static const int32_t in_sig[4] = {1, -1, -1, 3};
        for (int k = 0; k < 4; k++)
            assert_int_equal(in->signature[k], in_sig[k]);
        assert_true(out->has_signature);
        assert_int_equal(out->signature[0], 1);
        assert_int_equal(out->signature[1], 1001);
    } else {
        assert_false(in->has_signature);
        assert_false(out->has_signature);
    }
}

static void test_mobilenet_v2(void **state)
{
    (void)state;
    built b = build("mobilenet_v2");
    check_v2(b.model, false);
    release(&b);
}

static void test_mobilenet_v2_dynamic(void **state)
{
    (void)state;
    built d = build("mobilenet_v2_dynamic");
    check_v2(d.model, true);
    /* same weights as mobilenet_v2: only the input signature and the pooling differ */
    built s = build("mobilenet_v2");
    int compared = 0;
    for (int i = 0; i < s.model->n_tensors; i++) {
        const mp_tensor_info *a = &s.model->tensors[i];
        if (!a->data || a->dtype != MP_DT_FLOAT32)
            continue;
        int j = find_tensor(d.model, a->name);
        assert_true(j >= 0);
        assert_int_equal(d.model->tensors[j].data_bytes, a->data_bytes);
        assert_memory_equal(d.model->tensors[j].data, a->data, a->data_bytes);
        compared++;
    }
    assert_int_equal(compared, 2 * (count_ops(s.model, MP_OP_CONV_2D) +
                                    count_ops(s.model, MP_OP_DEPTHWISE_CONV_2D)));
    release(&s);
    release(&d);
}

/* ---- mobilenet_v2_int8 ------------------------------------------------------------------ */

/* Per-tensor int8 quantization, scale positive and finite, zero point in range. */
static void assert_act_int8(const mp_tensor_info *t)
{
    if (t->dtype != MP_DT_INT8 || t->quant.count != 1 || !(t->quant.scale[0] > 0.0f) ||
        !isfinite(t->quant.scale[0]))
        fail_msg("activation '%s': %s with %d scales (expected int8 per tensor)", t->name,
                 mp_dtype_name(t->dtype), t->quant.count);
    int64_t zp = t->quant.zero_point ? t->quant.zero_point[0] : 0;
    assert_true(zp >= -128 && zp <= 127);
}

static int64_t zp_of(const mp_tensor_info *t)
{
    return t->quant.zero_point ? t->quant.zero_point[0] : 0;
}

static void assert_same_quant(const mp_tensor_info *a, const mp_tensor_info *b)
{
    if (a->quant.scale[0] != b->quant.scale[0] || zp_of(a) != zp_of(b))
        fail_msg("'%s' and '%s' differ in quantization (%g %lld, %g %lld)", a->name, b->name,
                 (double)a->quant.scale[0], (long long)zp_of(a), (double)b->quant.scale[0],
                 (long long)zp_of(b));
}

/* A convolution's filter (int8 per channel along qdim, zero point 0) and bias (int32, scale
 * in_scale * w_scale[c], zero point 0), each dequantized value within half a step of the
 * float model's tensor of the same name. Returns the number of values compared. */
static long check_conv_int8(const mp_model *m, const mp_op_info *op, const mp_model *fm)
{
    const mp_tensor_info *in = &m->tensors[op->inputs[0]], *w = &m->tensors[op->inputs[1]];
    const mp_tensor_info *b = &m->tensors[op->inputs[2]];
    bool dw = op->opcode == MP_OP_DEPTHWISE_CONV_2D;
    int qdim = dw ? 3 : 0, nch = w->shape[qdim];
    if (w->dtype != MP_DT_INT8 || w->quant.count != nch || w->quant.quantized_dimension != qdim)
        fail_msg("filter '%s': %s, %d scales along %d (expected int8, %d along %d)", w->name,
                 mp_dtype_name(w->dtype), w->quant.count, w->quant.quantized_dimension, nch,
                 qdim);
    if (b->dtype != MP_DT_INT32 || b->quant.count != nch)
        fail_msg("bias '%s': %s with %d scales", b->name, mp_dtype_name(b->dtype), b->quant.count);
    for (int c = 0; c < nch; c++) {
        assert_true(!w->quant.zero_point || w->quant.zero_point[c] == 0);
        assert_true(!b->quant.zero_point || b->quant.zero_point[c] == 0);
        double want = (double)in->quant.scale[0] * (double)w->quant.scale[c];
        if (fabs(b->quant.scale[c] - want) > 1e-6 * want)
            fail_msg("bias '%s'[%d]: scale %g, input * filter scale %g", b->name, c,
                     (double)b->quant.scale[c], want);
    }
    long compared = 0;
    for (int k = 1; k <= 2; k++) {
        const mp_tensor_info *q = k == 1 ? w : b;
        int j = find_tensor(fm, q->name);
        assert_true(j >= 0);
        const mp_tensor_info *f = &fm->tensors[j];
        assert_int_equal(f->dtype, MP_DT_FLOAT32);
        size_t n = f->data_bytes / sizeof(float);
        assert_int_equal(q->data_bytes, n * (k == 1 ? 1 : 4));
        size_t inner = 1;
        for (int d = k == 1 ? qdim + 1 : 1; d < q->rank; d++)
            inner *= (size_t)q->shape[d];
        const float *fv = f->data;
        for (size_t i = 0; i < n; i++) {
            float s = q->quant.scale[i / inner % (size_t)nch];
            double v = k == 1 ? (double)((const int8_t *)q->data)[i]
                              : (double)((const int32_t *)q->data)[i];
            if (fabs(v * s - fv[i]) > 0.5 * s * (1 + 1e-5))
                fail_msg("'%s'[%zu]: %g * %g is %g from the float %g", q->name, i, v, (double)s,
                         fabs(v * s - fv[i]), (double)fv[i]);
            if (k == 1)
                assert_true(v >= -127 && v <= 127);
            compared++;
        }
    }
    return compared;
}

static void test_mobilenet_v2_int8(void **state)
{
    (void)state;
    built q = build("mobilenet_v2_int8"), f = build("mobilenet_v2");
    const mp_model *m = q.model;
    check_graph(m);
    /* the graph of mobilenet_v2: same operators, same tensor names and shapes */
    assert_int_equal(m->n_ops, f.model->n_ops);
    assert_int_equal(m->n_tensors, f.model->n_tensors);
    for (int i = 0; i < m->n_ops; i++)
        assert_int_equal(m->ops[i].opcode, f.model->ops[i].opcode);
    for (int i = 0; i < m->n_tensors; i++) {
        assert_string_equal(m->tensors[i].name, f.model->tensors[i].name);
        assert_shape(&m->tensors[i], f.model->tensors[i].rank, f.model->tensors[i].shape);
    }
    /* every activation int8 per tensor, the model's input and output among them */
    for (int i = 0; i < m->n_tensors; i++)
        if (!m->tensors[i].data)
            assert_act_int8(&m->tensors[i]);
    const mp_tensor_info *in = &m->tensors[m->inputs[0]], *out = &m->tensors[m->outputs[0]];
    assert_int_equal(in->dtype, MP_DT_INT8);
    /* the reference input's range [-0.5, 0.5]: scale 1/255, zero point round(-0.5) = -1 */
    assert_float_equal(in->quant.scale[0], 1.0f / 255.0f, 1e-9);
    assert_int_equal(zp_of(in), -1);
    assert_float_equal(out->quant.scale[0], 1.0f / 256.0f, 0);
    assert_int_equal(zp_of(out), -128);

    long compared = 0;
    int convs = 0;
    for (int i = 0; i < m->n_ops; i++) {
        const mp_op_info *op = &m->ops[i];
        const mp_tensor_info *x = &m->tensors[op->inputs[0]], *y = &m->tensors[op->outputs[0]];
        switch (op->opcode) {
        case MP_OP_CONV_2D:
        case MP_OP_DEPTHWISE_CONV_2D:
            compared += check_conv_int8(m, op, f.model);
            convs++;
            /* RELU6 stays fused; its output range starts at 0: zero point -128 */
            if (op->opt.activation == MP_ACT_RELU6)
                assert_int_equal(zp_of(y), -128);
            assert_int_equal(op->opt.activation, f.model->ops[i].opt.activation);
            break;
        case MP_OP_AVERAGE_POOL_2D:
        case MP_OP_RESHAPE: assert_same_quant(x, y); break;
        case MP_OP_ADD: /* its own scale: the sum's range is wider than either input's */
            assert_true(y->quant.scale[0] != x->quant.scale[0]);
            break;
        default: break;
        }
    }
    assert_int_equal(convs, count_ops(m, MP_OP_CONV_2D) + count_ops(m, MP_OP_DEPTHWISE_CONV_2D));
    assert_int_equal(compared, float_params(f.model));
    /* operator versions as TensorFlow Lite's converter writes them for int8 (op_version.cc:
     * CONV_2D and DEPTHWISE_CONV_2D 3, ADD, AVERAGE_POOL_2D and SOFTMAX 2, RESHAPE 1); the
     * float model's are all 1 */
    for (int i = 0; i < m->n_ops; i++) {
        int want = 1;
        switch (m->ops[i].opcode) {
        case MP_OP_CONV_2D:
        case MP_OP_DEPTHWISE_CONV_2D: want = 3; break;
        case MP_OP_ADD:
        case MP_OP_AVERAGE_POOL_2D:
        case MP_OP_SOFTMAX: want = 2; break;
        default: break;
        }
        assert_int_equal(m->ops[i].version, want);
        assert_int_equal(f.model->ops[i].version, 1);
    }
    /* a quarter of the float model's constant bytes, give or take the biases */
    print_message("  mobilenet_v2_int8: %zu bytes (mobilenet_v2: %zu), %ld values dequantized "
                  "within half a step\n", q.size, f.size, compared);
    assert_true(q.size < f.size / 3);
    release(&q);
    release(&f);
}

/* One run of a zoo model on the reference input (any failure fails the test); *out is
 * malloc'd. */
static mp_status run_zoo(const char *spec, void **out, const mp_tensor **o, mp_session **ps,
                         mp_error *err)
{
    mp_session *s = NULL;
    assert_int_equal(mp_session_create(&(mp_session_options){.threads = 1}, &s, err), MP_OK);
    mp_status st = mp_session_load(s, spec, err);
    if (st == MP_OK)
        st = mp_session_prepare(s, err);
    if (st == MP_OK) {
        const mp_tensor *x = mp_session_input(s, 0);
        void *buf = calloc(x->bytes + 16, 1);
        assert_non_null(buf);
        assert_true(mp_reference_input(buf, x->dtype, mp_tensor_elements(x), 0));
        st = mp_session_set_input(s, 0, buf, x->bytes, err);
        free(buf);
    }
    if (st == MP_OK)
        st = mp_session_run(s, err);
    if (st != MP_OK)
        fail_msg("%s: %s: %s", spec, mp_status_name(st), err->msg);
    *o = mp_session_output(s, 0);
    *out = malloc((*o)->bytes);
    assert_non_null(*out);
    assert_int_equal(mp_session_get_output(s, 0, *out, (*o)->bytes, err), MP_OK);
    *ps = s;
    return MP_OK;
}

static void test_mobilenet_v2_int8_run(void **state)
{
    (void)state;
    mp_error err;
    void *qv = NULL, *fv = NULL;
    const mp_tensor *qo = NULL, *fo = NULL;
    mp_session *qs = NULL, *fs = NULL;
    assert_int_equal(run_zoo("zoo:mobilenet_v2_int8", &qv, &qo, &qs, &err), MP_OK);
    assert_int_equal(run_zoo("zoo:mobilenet_v2", &fv, &fo, &fs, &err), MP_OK);
    assert_int_equal(qo->dtype, MP_DT_INT8);
    size_t n = mp_tensor_elements(fo);
    assert_int_equal(mp_tensor_elements(qo), n);
    const int8_t *q = qv;
    const float *f = fv;
    float s = qo->info->quant.scale[0];
    int64_t zp = zp_of(qo->info);
    size_t top_q = 0, top_f = 0;
    double worst = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)s * (double)(q[i] - zp);
        sum += d;
        worst = fmax(worst, fabs(d - f[i]));
        if (q[i] > q[top_q])
            top_q = i;
        if (f[i] > f[top_f])
            top_f = i;
    }
    print_message("  top-1 int8 %zu (%.4f) float %zu (%.4f); largest |int8 - float| %.5f "
                  "(%.2f steps of 1/256); int8 sum %.3f\n",
                  top_q, (double)s * (double)(q[top_q] - zp), top_f, (double)f[top_f], worst,
                  worst * 256.0, sum);
    assert_int_equal(top_q, top_f);
    /* quantized probabilities: each within 2 steps of 1/256 of the float ones */
    assert_true(worst <= 2.0 / 256.0);
    free(qv);
    free(fv);
    mp_session_destroy(qs);
    mp_session_destroy(fs);
}

static void test_deterministic(void **state)
{
    (void)state;
    for (int i = 0; i < mp_zoo_count(); i++) {
        const char *name = mp_zoo_entry_at(i)->name;
        void *a, *b;
        size_t na, nb;
        mp_error err;
        assert_int_equal(mp_zoo_build(name, &a, &na, &err), MP_OK);
        assert_int_equal(mp_zoo_build(name, &b, &nb, &err), MP_OK);
        assert_int_equal(na, nb);
        if (memcmp(a, b, na) != 0)
            fail_msg("zoo %s: two builds differ", name);
        assert_memory_equal((const char *)a + 4, "TFL3", 4);
        free(a);
        free(b);
    }
}

/* Models differ from each other (distinct seeds give distinct weights). */
static void test_models_differ(void **state)
{
    (void)state;
    built a = build("mobilenet_v1"), b = build("mobilenet_v2");
    const mp_tensor_info *wa = &a.model->tensors[a.model->ops[0].inputs[1]];
    const mp_tensor_info *wb = &b.model->tensors[b.model->ops[0].inputs[1]];
    assert_int_equal(wa->data_bytes, wb->data_bytes); /* both [32,3,3,3] */
    assert_true(memcmp(wa->data, wb->data, wa->data_bytes) != 0);
    release(&a);
    release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_unknown_name),
        cmocka_unit_test(test_mnist_mlp),
        cmocka_unit_test(test_mobilenet_v1),
        cmocka_unit_test(test_mobilenet_v2),
        cmocka_unit_test(test_mobilenet_v2_dynamic),
        cmocka_unit_test(test_mobilenet_v2_int8),
        cmocka_unit_test(test_mobilenet_v2_int8_run),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_models_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
