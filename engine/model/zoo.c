/* Built-in model zoo (see zoo.h): graph builders for an MNIST MLP, MobileNet v1 and v2,
 * written with the .tflite writer and filled with deterministic pseudo-random weights.
 *
 * Each builder is parameterised by a net_cfg (width multiplier, input size, classes, dynamic
 * input signature, PRNG seed), so a variant is one more line in the zoo[] table below. The
 * graphs follow the TensorFlow reference models after batch-norm folding: every convolution
 * carries a bias, activations are fused (RELU6), tensors are named as TF's converter names
 * them. Weights are uniform with variance gain^2 / fan_in (He init, gain^2 = 2, before a ReLU;
 * Glorot/LeCun-like, gain^2 = 1, before linear outputs), biases small, so activations keep
 * a roughly constant scale through the network. */
#include "engine/model/zoo.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/model.h"
#include "engine/model/tflite_writer.h"

/* ---- configuration and the zoo table -------------------------------------------------- */

typedef struct net_cfg {
    float alpha;       /* width multiplier (MobileNets) */
    int size;          /* input height = width */
    int channels;      /* input channels */
    int classes;       /* output classes */
    int hidden;        /* hidden units (MLP) */
    bool dynamic;      /* input shape_signature [1,-1,-1,C], output [1,classes]; global MEAN pooling */
    uint64_t seed;     /* PRNG seed of the weights */
} net_cfg;

typedef struct zoo_ctx zoo_ctx;
typedef void (*zoo_builder)(zoo_ctx *z, const net_cfg *cfg);

static void build_mlp(zoo_ctx *z, const net_cfg *cfg);
static void build_mobilenet_v1(zoo_ctx *z, const net_cfg *cfg);
static void build_mobilenet_v2(zoo_ctx *z, const net_cfg *cfg);

typedef struct zoo_model {
    mp_zoo_entry entry;
    zoo_builder build;
    net_cfg cfg;
} zoo_model;

static const zoo_model zoo[] = {
    {{"mnist_mlp", "MNIST MLP: [1,28,28,1] -> reshape 784 -> FC 128 ReLU -> FC 10 -> softmax"},
     build_mlp, {1.0f, 28, 1, 10, 128, false, 0x4d4e4953544d4c50ull}},
    {{"mobilenet_v1", "MobileNet v1 1.0 224: 28 convolutions, 1001 classes, 4.2M parameters"},
     build_mobilenet_v1, {1.0f, 224, 3, 1001, 0, false, 0x4d4f42494c455631ull}},
    {{"mobilenet_v2", "MobileNet v2 1.0 224: inverted residuals, 1001 classes, 3.5M parameters"},
     build_mobilenet_v2, {1.0f, 224, 3, 1001, 0, false, 0x4d4f42494c455632ull}},
    {{"mobilenet_v2_dynamic",
      "mobilenet_v2 with input signature [1,-1,-1,3] and global MEAN instead of a 7x7 pool"},
     build_mobilenet_v2, {1.0f, 224, 3, 1001, 0, true, 0x4d4f42494c455632ull}},
};

#define ZOO_COUNT ((int)(sizeof zoo / sizeof zoo[0]))

int mp_zoo_count(void)
{
    return ZOO_COUNT;
}

const mp_zoo_entry *mp_zoo_entry_at(int i)
{
    return i >= 0 && i < ZOO_COUNT ? &zoo[i].entry : NULL;
}

/* ---- build context: writer, PRNG, helpers for tensors ----------------------------------- */

struct zoo_ctx {
    mp_tfw *w;
    uint64_t rng;
    bool oom;
};

/* splitmix64: small, fast, and the same sequence on every platform. */
static uint64_t rng_next(zoo_ctx *z)
{
    uint64_t x = (z->rng += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Uniform in [-1, 1), exactly representable (24 random bits). */
static float rng_uniform(zoo_ctx *z)
{
    return (float)(rng_next(z) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/* Activation (non-constant) float tensor. */
static int act_tensor(zoo_ctx *z, const char *name, int rank, const int32_t *dims)
{
    return mp_tfw_tensor(z->w, name, MP_DT_FLOAT32, rank, dims, 0, NULL);
}

/* Constant float tensor with elements uniform in [-limit, limit). */
static int const_uniform(zoo_ctx *z, const char *name, int rank, const int32_t *dims, float limit)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    float *v = malloc(n * sizeof *v);
    if (!v) {
        z->oom = true;
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = limit * rng_uniform(z);
    int b = mp_tfw_buffer(z->w, v, n * sizeof *v);
    free(v);
    return b < 0 ? -1 : mp_tfw_tensor(z->w, name, MP_DT_FLOAT32, rank, dims, b, NULL);
}

/* Weights with variance gain2 / fan_in (uniform limit sqrt(3 * gain2 / fan_in)). */
static int const_weights(zoo_ctx *z, const char *name, int rank, const int32_t *dims, int fan_in,
                         float gain2)
{
    return const_uniform(z, name, rank, dims, sqrtf(3.0f * gain2 / (float)fan_in));
}

/* Squared gains (weight variance times fan_in): He before a ReLU keeps the activations'
 * second moment constant; linear layers keep it too; a residual branch gets a small gain so
 * that x + f(x) grows the stream by only 1.2x in energy per ADD (instead of doubling it). */
#define GAIN_RELU 2.0f
#define GAIN_LINEAR 1.0f
#define GAIN_RESIDUAL 0.2f
/* Logits: pooled features are non-negative with a mean of ~0.2; this gives O(1) logits. */
#define GAIN_LOGITS 4.0f
#define BIAS_LIMIT 0.02f

static int const_bias(zoo_ctx *z, const char *name, int n)
{
    return const_uniform(z, name, 1, (int32_t[]){n}, BIAS_LIMIT);
}

static int const_i32(zoo_ctx *z, const char *name, int n, const int32_t *values)
{
    int b = mp_tfw_buffer(z->w, values, (size_t)n * sizeof *values);
    return b < 0 ? -1 : mp_tfw_tensor(z->w, name, MP_DT_INT32, 1, (int32_t[]){n}, b, NULL);
}

/* A [1,h,w,c] activation and the tensor holding it. */
typedef struct feat {
    int t;
    int h, w, c;
} feat;

static int same_out(int in, int stride)
{
    return (in + stride - 1) / stride;
}

/* CONV_2D k x k / stride, SAME, with bias and fused activation; weight variance gain2/fan_in.
 * Names: "<wscope>/weights", "<wscope>/biases", output `out_name`. */
static feat conv2d(zoo_ctx *z, feat in, int cout, int k, int stride, int act, float gain2,
                   const char *wscope, const char *out_name)
{
    char name[256];
    snprintf(name, sizeof name, "%s/weights", wscope);
    int wt = const_weights(z, name, 4, (int32_t[]){cout, k, k, in.c}, k * k * in.c, gain2);
    snprintf(name, sizeof name, "%s/biases", wscope);
    int bias = const_bias(z, name, cout);
    feat out = {-1, same_out(in.h, stride), same_out(in.w, stride), cout};
    out.t = act_tensor(z, out_name, 4, (int32_t[]){1, out.h, out.w, out.c});
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_w = o.stride_h = stride;
    o.activation = act;
    mp_tfw_op(z->w, MP_OP_CONV_2D, 3, (int32_t[]){in.t, wt, bias}, 1, &out.t, &o);
    return out;
}

/* DEPTHWISE_CONV_2D k x k / stride, multiplier 1, SAME, bias, fused activation. */
static feat dwconv(zoo_ctx *z, feat in, int k, int stride, int act, const char *wscope,
                   const char *out_name)
{
    char name[256];
    snprintf(name, sizeof name, "%s/depthwise_weights", wscope);
    int wt = const_weights(z, name, 4, (int32_t[]){1, k, k, in.c}, k * k, GAIN_RELU);
    snprintf(name, sizeof name, "%s/depthwise_bias", wscope);
    int bias = const_bias(z, name, in.c);
    feat out = {-1, same_out(in.h, stride), same_out(in.w, stride), in.c};
    out.t = act_tensor(z, out_name, 4, (int32_t[]){1, out.h, out.w, out.c});
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_w = o.stride_h = stride;
    o.depth_multiplier = 1;
    o.activation = act;
    mp_tfw_op(z->w, MP_OP_DEPTHWISE_CONV_2D, 3, (int32_t[]){in.t, wt, bias}, 1, &out.t, &o);
    return out;
}

/* Global pooling to [1,1,1,c]: AVERAGE_POOL_2D over the whole (static) map, or, for dynamic
 * models, MEAN over axes [1,2] with keep_dims. */
static feat global_pool(zoo_ctx *z, feat in, bool dynamic, const char *scope)
{
    char name[256];
    feat out = {-1, 1, 1, in.c};
    mp_op_options o = mp_tfw_options_default();
    if (dynamic) {
        snprintf(name, sizeof name, "%s/Mean/reduction_indices", scope);
        int axes = const_i32(z, name, 2, (int32_t[]){1, 2});
        snprintf(name, sizeof name, "%s/Mean", scope);
        out.t = act_tensor(z, name, 4, (int32_t[]){1, 1, 1, in.c});
        o.keep_dims = true;
        mp_tfw_op(z->w, MP_OP_MEAN, 2, (int32_t[]){in.t, axes}, 1, &out.t, &o);
    } else {
        snprintf(name, sizeof name, "%s/AvgPool", scope);
        out.t = act_tensor(z, name, 4, (int32_t[]){1, 1, 1, in.c});
        o.padding = MP_PAD_VALID;
        o.stride_w = o.stride_h = 2;
        o.filter_w = in.w;
        o.filter_h = in.h;
        mp_tfw_op(z->w, MP_OP_AVERAGE_POOL_2D, 1, &in.t, 1, &out.t, &o);
    }
    return out;
}

/* RESHAPE to [1, n] (shape given both as an input tensor and as new_shape, as TF does). */
static int reshape_2d(zoo_ctx *z, int in, int n, const char *shape_name, const char *out_name,
                      const int32_t *signature)
{
    int32_t shape[2] = {1, n};
    int st = const_i32(z, shape_name, 2, shape);
    int out = mp_tfw_tensor(z->w, out_name, MP_DT_FLOAT32, 2, shape, 0, signature);
    mp_op_options o = mp_tfw_options_default();
    o.has_new_shape = true;
    o.n_new_shape = 2;
    o.new_shape[0] = 1;
    o.new_shape[1] = n;
    mp_tfw_op(z->w, MP_OP_RESHAPE, 2, (int32_t[]){in, st}, 1, &out, &o);
    return out;
}

static int softmax(zoo_ctx *z, int in, int n, const char *out_name, const int32_t *signature)
{
    int out = mp_tfw_tensor(z->w, out_name, MP_DT_FLOAT32, 2, (int32_t[]){1, n}, 0, signature);
    mp_op_options o = mp_tfw_options_default();
    o.beta = 1.0f;
    mp_tfw_op(z->w, MP_OP_SOFTMAX, 1, &in, 1, &out, &o);
    return out;
}

/* The model input "input" [1,size,size,channels], with a [1,-1,-1,C] signature if dynamic. */
static feat model_input(zoo_ctx *z, const net_cfg *cfg)
{
    feat in = {-1, cfg->size, cfg->size, cfg->channels};
    int32_t sig[4] = {1, -1, -1, cfg->channels};
    in.t = mp_tfw_tensor(z->w, "input", MP_DT_FLOAT32, 4,
                         (int32_t[]){1, in.h, in.w, in.c}, 0, cfg->dynamic ? sig : NULL);
    return in;
}

/* ---- mnist_mlp -------------------------------------------------------------------------- */

static void build_mlp(zoo_ctx *z, const net_cfg *cfg)
{
    feat in = model_input(z, cfg);
    int n_in = in.h * in.w * in.c;
    int flat = reshape_2d(z, in.t, n_in, "sequential/flatten/Const", "sequential/flatten/Reshape",
                          NULL);

    mp_op_options o = mp_tfw_options_default();
    int w1 = const_weights(z, "sequential/dense/MatMul", 2, (int32_t[]){cfg->hidden, n_in}, n_in,
                           GAIN_RELU);
    int b1 = const_bias(z, "sequential/dense/BiasAdd/ReadVariableOp", cfg->hidden);
    int h = act_tensor(z, "sequential/dense/Relu", 2, (int32_t[]){1, cfg->hidden});
    o.activation = MP_ACT_RELU;
    mp_tfw_op(z->w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){flat, w1, b1}, 1, &h, &o);

    int w2 = const_weights(z, "sequential/dense_1/MatMul", 2, (int32_t[]){cfg->classes, cfg->hidden},
                           cfg->hidden, GAIN_LOGITS);
    int b2 = const_bias(z, "sequential/dense_1/BiasAdd/ReadVariableOp", cfg->classes);
    int logits = act_tensor(z, "sequential/dense_1/BiasAdd", 2, (int32_t[]){1, cfg->classes});
    o.activation = MP_ACT_NONE;
    mp_tfw_op(z->w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){h, w2, b2}, 1, &logits, &o);

    int out = softmax(z, logits, cfg->classes, "sequential/dense_1/Softmax", NULL);
    mp_tfw_io(z->w, 1, &in.t, 1, &out);
}

/* ---- classifier head shared by the MobileNets --------------------------------------------- */

/* global pool -> CONV 1x1 logits (bias) -> RESHAPE [1,classes] -> SOFTMAX; sets the io. */
static void mobilenet_head(zoo_ctx *z, const net_cfg *cfg, feat x, feat input, const char *net)
{
    char scope[128], name[256], shape_name[256];
    snprintf(scope, sizeof scope, "%s/Logits", net);
    x = global_pool(z, x, cfg->dynamic, scope);

    snprintf(scope, sizeof scope, "%s/Logits/Conv2d_1c_1x1", net);
    snprintf(name, sizeof name, "%s/BiasAdd", scope);
    feat logits = conv2d(z, x, cfg->classes, 1, 1, MP_ACT_NONE, GAIN_LOGITS, scope, name);

    int32_t out_sig[2] = {1, cfg->classes};
    snprintf(name, sizeof name, "%s/Logits/SpatialSqueeze", net);
    snprintf(shape_name, sizeof shape_name, "%s/Logits/SpatialSqueeze_shape", net);
    int flat = reshape_2d(z, logits.t, cfg->classes, shape_name, name, NULL);
    snprintf(name, sizeof name, "%s/Predictions/Reshape_1", net);
    int out = softmax(z, flat, cfg->classes, name, cfg->dynamic ? out_sig : NULL);
    mp_tfw_io(z->w, 1, &input.t, 1, &out);
}

/* ---- mobilenet_v1 ----------------------------------------------------------------------- */

/* Channels scaled by the width multiplier, as slim's mobilenet_v1 does (at least 8). */
static int v1_depth(int c, float alpha)
{
    int d = (int)((float)c * alpha);
    return d < 8 ? 8 : d;
}

static void build_mobilenet_v1(zoo_ctx *z, const net_cfg *cfg)
{
    /* the 13 depthwise-separable blocks: pointwise output channels and depthwise stride */
    static const struct { int c, s; } blocks[13] = {
        {64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2}, {512, 1},
        {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1},
    };
    const char *net = "MobilenetV1";
    char wscope[128], out[160];
    feat input = model_input(z, cfg);

    snprintf(wscope, sizeof wscope, "%s/Conv2d_0", net);
    snprintf(out, sizeof out, "%s/%s/Conv2d_0/Relu6", net, net);
    feat x = conv2d(z, input, v1_depth(32, cfg->alpha), 3, 2, MP_ACT_RELU6, GAIN_RELU, wscope, out);

    for (int i = 0; i < 13; i++) {
        snprintf(wscope, sizeof wscope, "%s/Conv2d_%d_depthwise", net, i + 1);
        snprintf(out, sizeof out, "%s/%s/Conv2d_%d_depthwise/Relu6", net, net, i + 1);
        x = dwconv(z, x, 3, blocks[i].s, MP_ACT_RELU6, wscope, out);
        snprintf(wscope, sizeof wscope, "%s/Conv2d_%d_pointwise", net, i + 1);
        snprintf(out, sizeof out, "%s/%s/Conv2d_%d_pointwise/Relu6", net, net, i + 1);
        x = conv2d(z, x, v1_depth(blocks[i].c, cfg->alpha), 1, 1, MP_ACT_RELU6, GAIN_RELU, wscope,
                   out);
    }
    mobilenet_head(z, cfg, x, input, net);
}

/* ---- mobilenet_v2 ----------------------------------------------------------------------- */

/* Round to a multiple of 8, not going down by more than 10% (TF's _make_divisible). */
static int make_divisible(float v)
{
    int d = (int)(v + 4.0f) / 8 * 8;
    if (d < 8)
        d = 8;
    if ((float)d < 0.9f * v)
        d += 8;
    return d;
}

static void build_mobilenet_v2(zoo_ctx *z, const net_cfg *cfg)
{
    /* inverted residual stages: expansion t, output channels c, repeats n, first stride s */
    static const struct { int t, c, n, s; } stages[7] = {
        {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
        {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
    };
    const char *net = "MobilenetV2";
    char scope[128], wscope[160], out[192];
    feat input = model_input(z, cfg);

    snprintf(wscope, sizeof wscope, "%s/Conv", net);
    snprintf(out, sizeof out, "%s/Conv/Relu6", net);
    feat x = conv2d(z, input, make_divisible(32.0f * cfg->alpha), 3, 2, MP_ACT_RELU6, GAIN_RELU,
                    wscope, out);

    int block = 0;
    for (int s = 0; s < 7; s++) {
        int cout = make_divisible((float)stages[s].c * cfg->alpha);
        for (int r = 0; r < stages[s].n; r++, block++) {
            int stride = r == 0 ? stages[s].s : 1;
            if (block == 0)
                snprintf(scope, sizeof scope, "%s/expanded_conv", net);
            else
                snprintf(scope, sizeof scope, "%s/expanded_conv_%d", net, block);
            feat in = x;
            if (stages[s].t > 1) {
                snprintf(wscope, sizeof wscope, "%s/expand", scope);
                snprintf(out, sizeof out, "%s/expand/Relu6", scope);
                x = conv2d(z, x, in.c * stages[s].t, 1, 1, MP_ACT_RELU6, GAIN_RELU, wscope, out);
            }
            snprintf(wscope, sizeof wscope, "%s/depthwise", scope);
            snprintf(out, sizeof out, "%s/depthwise/Relu6", scope);
            x = dwconv(z, x, 3, stride, MP_ACT_RELU6, wscope, out);
            snprintf(wscope, sizeof wscope, "%s/project", scope);
            snprintf(out, sizeof out, "%s/project/add_fold", scope);
            bool residual = stride == 1 && in.c == cout;
            x = conv2d(z, x, cout, 1, 1, MP_ACT_NONE, residual ? GAIN_RESIDUAL : GAIN_LINEAR,
                       wscope, out);
            if (residual) {
                snprintf(out, sizeof out, "%s/add", scope);
                int sum = act_tensor(z, out, 4, (int32_t[]){1, x.h, x.w, x.c});
                mp_op_options o = mp_tfw_options_default();
                mp_tfw_op(z->w, MP_OP_ADD, 2, (int32_t[]){in.t, x.t}, 1, &sum, &o);
                x.t = sum;
            }
        }
    }

    int last = cfg->alpha > 1.0f ? make_divisible(1280.0f * cfg->alpha) : 1280;
    snprintf(wscope, sizeof wscope, "%s/Conv_1", net);
    snprintf(out, sizeof out, "%s/Conv_1/Relu6", net);
    x = conv2d(z, x, last, 1, 1, MP_ACT_RELU6, GAIN_RELU, wscope, out);
    mobilenet_head(z, cfg, x, input, net);
}

/* ---- entry point -------------------------------------------------------------------------- */

mp_status mp_zoo_build(const char *name, void **bytes, size_t *size, mp_error *err)
{
    *bytes = NULL;
    *size = 0;
    const zoo_model *m = NULL;
    for (int i = 0; i < ZOO_COUNT && !m; i++)
        if (name && strcmp(name, zoo[i].entry.name) == 0)
            m = &zoo[i];
    if (!m) {
        char known[256] = "";
        for (int i = 0; i < ZOO_COUNT; i++) {
            size_t l = strlen(known);
            snprintf(known + l, sizeof known - l, "%s%s", i ? ", " : "", zoo[i].entry.name);
        }
        return mp_fail(err, MP_ERR_ARG, "unknown zoo model '%s' (known: %s)", name ? name : "(null)",
                       known);
    }

    zoo_ctx z = {mp_tfw_create(), m->cfg.seed, false};
    if (!z.w)
        return mp_fail(err, MP_ERR_NOMEM, "zoo %s: out of memory", m->entry.name);
    char desc[320];
    snprintf(desc, sizeof desc, "memprof zoo %s: %s (untrained deterministic weights)",
             m->entry.name, m->entry.description);
    mp_tfw_description(z.w, desc);
    m->build(&z, &m->cfg);
    mp_status st = z.oom ? mp_fail(err, MP_ERR_NOMEM, "zoo %s: out of memory", m->entry.name)
                         : mp_tfw_finish(z.w, bytes, size, err);
    mp_tfw_free(z.w);
    return st;
}
