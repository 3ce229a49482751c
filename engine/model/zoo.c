/* Built-in model zoo (see zoo.h): graph builders for an MNIST MLP, MobileNet v1 and v2,
 * written with the .tflite writer and filled with deterministic pseudo-random weights.
 *
 * Each builder is parameterised by a net_cfg (width multiplier, input size, classes, dynamic
 * input signature, PRNG seed), so a variant is one more line in the zoo[] table below. The
 * graphs follow the TensorFlow reference models after batch-norm folding: every convolution
 * carries a bias, activations are fused (RELU6), tensors are named as TF's converter names
 * them. Weights are uniform with variance gain^2 / fan_in (He init, gain^2 = 2, before a ReLU;
 * Glorot/LeCun-like, gain^2 = 1, before linear outputs), biases small, so activations keep
 * a roughly constant scale through the network.
 *
 * mobilenet_v2_int8 is mobilenet_v2 (same seed, same weights drawn) as TensorFlow Lite's
 * post-training full-integer quantization writes it: see "int8 quantization" below. */
#include "engine/model/zoo.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/model.h"
#include "engine/model/reference_input.h"
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
    bool int8;         /* full-integer quantized (mobilenet_v2's builder only) */
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
     build_mlp, {1.0f, 28, 1, 10, 128, false, 0x4d4e4953544d4c50ull, false}},
    {{"mobilenet_v1", "MobileNet v1 1.0 224: 28 convolutions, 1001 classes, 4.2M parameters"},
     build_mobilenet_v1, {1.0f, 224, 3, 1001, 0, false, 0x4d4f42494c455631ull, false}},
    {{"mobilenet_v2", "MobileNet v2 1.0 224: inverted residuals, 1001 classes, 3.5M parameters"},
     build_mobilenet_v2, {1.0f, 224, 3, 1001, 0, false, 0x4d4f42494c455632ull, false}},
    {{"mobilenet_v2_dynamic",
      "mobilenet_v2 with input signature [1,-1,-1,3] and global MEAN instead of a 7x7 pool"},
     build_mobilenet_v2, {1.0f, 224, 3, 1001, 0, true, 0x4d4f42494c455632ull, false}},
    {{"mobilenet_v2_int8",
      "mobilenet_v2 quantized to int8 (per-channel weights, calibrated activations, int8 I/O)"},
     build_mobilenet_v2, {1.0f, 224, 3, 1001, 0, false, 0x4d4f42494c455632ull, true}},
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
    bool int8; /* activations int8, weights int8 per channel, biases int32 */
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

/* Squared gains (weight variance times fan_in): He before a ReLU keeps the activations'
 * second moment constant; linear layers keep it too; a residual branch gets a small gain so
 * that x + f(x) grows the stream by only 1.2x in energy per ADD (instead of doubling it). */
#define GAIN_RELU 2.0f
#define GAIN_LINEAR 1.0f
#define GAIN_RESIDUAL 0.2f
/* Logits: pooled features are non-negative with a mean of ~0.2; this gives O(1) logits. */
#define GAIN_LOGITS 4.0f
#define BIAS_LIMIT 0.02f

/* n values uniform in [-limit, limit) (malloc'd; NULL and z->oom when out of memory). */
static float *draw_uniform(zoo_ctx *z, size_t n, float limit)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        z->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = limit * rng_uniform(z);
    return v;
}

static size_t elements(int rank, const int32_t *dims)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

/* Constant float tensor with elements uniform in [-limit, limit). */
static int const_uniform(zoo_ctx *z, const char *name, int rank, const int32_t *dims, float limit)
{
    size_t n = elements(rank, dims);
    float *v = draw_uniform(z, n, limit);
    if (!v)
        return -1;
    int b = mp_tfw_buffer(z->w, v, n * sizeof *v);
    free(v);
    return b < 0 ? -1 : mp_tfw_tensor(z->w, name, MP_DT_FLOAT32, rank, dims, b, NULL);
}

/* Weights with variance gain2 / fan_in (uniform limit sqrt(3 * gain2 / fan_in)). */
static float weight_limit(int fan_in, float gain2)
{
    return sqrtf(3.0f * gain2 / (float)fan_in);
}

static int const_weights(zoo_ctx *z, const char *name, int rank, const int32_t *dims, int fan_in,
                         float gain2)
{
    return const_uniform(z, name, rank, dims, weight_limit(fan_in, gain2));
}

static int const_i32(zoo_ctx *z, const char *name, int n, const int32_t *values)
{
    int b = mp_tfw_buffer(z->w, values, (size_t)n * sizeof *values);
    return b < 0 ? -1 : mp_tfw_tensor(z->w, name, MP_DT_INT32, 1, (int32_t[]){n}, b, NULL);
}

/* A [1,h,w,c] activation and the tensor holding it; in an int8 model also the float model's
 * values of it on the reference input (v, malloc'd, or NULL) and its quantization. */
typedef struct feat {
    int t;
    int h, w, c;
    float *v;
    float scale;
    int64_t zp;
} feat;

static void feat_drop(feat *f)
{
    free(f->v);
    f->v = NULL;
}

/* Activation (non-constant) tensor: float32, or int8 in an int8 model (its quantization is
 * attached once its values are known, act_quant). */
static int act_tensor(zoo_ctx *z, const char *name, int rank, const int32_t *dims)
{
    return mp_tfw_tensor(z->w, name, z->int8 ? MP_DT_INT8 : MP_DT_FLOAT32, rank, dims, 0, NULL);
}

/* ---- int8 quantization -----------------------------------------------------------------
 *
 * mobilenet_v2_int8 is what TensorFlow Lite's converter writes for mobilenet_v2 with
 * post-training full-integer quantization (optimizations DEFAULT, a representative dataset,
 * inference_input_type and inference_output_type int8):
 *   - weights int8 per output channel, symmetric: scale max|w| / 127 over the channel, zero
 *     point 0, values round(w / scale) (half away from zero); quantized_dimension 0 for the
 *     CONV_2D filters [O,H,W,I], 3 for the DEPTHWISE_CONV_2D filters [1,H,W,C];
 *   - biases int32, scale input_scale * weight_scale[c], zero point 0;
 *   - activations int8 per tensor, from a calibration: the float model (the same weights,
 *     drawn from the same seed) is evaluated here, in plain C, on the reference input
 *     (reference_input.h: what `memprof run` feeds it), and each activation's observed range,
 *     widened to hold 0, gives scale (max - min) / 255 and zero point -128 - min / scale
 *     rounded (TensorFlow Lite's GetAsymmetricQuantizationParams). The zoo stays a builder:
 *     it never opens a session (the engine reads zoo models). The evaluation costs ~0.3 G
 *     multiply-adds, a fraction of a second;
 *   - AVERAGE_POOL_2D and RESHAPE keep their input's scale and zero point, as TensorFlow
 *     Lite's int8 kernels require; SOFTMAX's output has scale 1/256, zero point -128;
 *   - the fused RELU6 stays on the convolutions (the kernels clamp in the integers);
 *   - the model input and output are int8: the converter's choice for an int8
 *     inference_input_type, no QUANTIZE/DEQUANTIZE at the ends, the form full-integer models
 *     ship in (uint8 I/O is the older quantization-aware-training form). The input's range
 *     is the reference input's, [-0.5, 0.5]: scale 1/255, zero point -1.
 * Operator versions stay 1 (the writer's); TensorFlow Lite resolves them and dispatches on
 * the dtypes. */

/* Attach the int8 quantization that the calibrated values of f (n of them) give. */
static void act_quant(zoo_ctx *z, feat *f)
{
    size_t n = (size_t)f->h * (size_t)f->w * (size_t)f->c;
    float lo = 0.0f, hi = 0.0f; /* the range always holds 0 */
    for (size_t i = 0; f->v && i < n; i++) {
        lo = fminf(lo, f->v[i]);
        hi = fmaxf(hi, f->v[i]);
    }
    double scale = ((double)hi - (double)lo) / 255.0;
    if (!(scale > 0.0))
        scale = 1.0 / 255.0; /* all zero: any scale represents it */
    double zp = -128.0 - (double)lo / scale;
    f->zp = zp <= -128.0 ? -128 : zp >= 127.0 ? 127 : (int64_t)round(zp);
    f->scale = (float)scale;
    mp_tfw_tensor_quant(z->w, f->t, 1, &f->scale, &f->zp, 0);
}

/* Output quantization equal to the input's (AVERAGE_POOL_2D, RESHAPE). */
static void act_quant_as(zoo_ctx *z, feat *out, const feat *in)
{
    out->scale = in->scale;
    out->zp = in->zp;
    mp_tfw_tensor_quant(z->w, out->t, 1, &out->scale, &out->zp, 0);
}

/* Weights drawn as the float model draws them. Float model: a float32 tensor. Int8 model:
 * int8 per channel along dimension qdim (see above); the float values stay in v (for the
 * calibration) and the scales in scale, both malloc'd. */
typedef struct weights {
    int t;
    float *v;
    float *scale;
} weights;

static weights make_weights(zoo_ctx *z, const char *name, int rank, const int32_t *dims,
                            float limit, int qdim)
{
    weights r = {-1, NULL, NULL};
    if (!z->int8) {
        r.t = const_uniform(z, name, rank, dims, limit);
        return r;
    }
    size_t n = elements(rank, dims), inner = elements(rank - qdim - 1, dims + qdim + 1);
    int nch = dims[qdim];
    r.v = draw_uniform(z, n, limit);
    r.scale = calloc((size_t)nch, sizeof *r.scale);
    int8_t *q = malloc(n ? n : 1);
    int64_t *zeros = calloc((size_t)nch, sizeof *zeros);
    if (!r.v || !r.scale || !q || !zeros) {
        z->oom = true;
        free(q);
        free(zeros);
        return r;
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = i / inner % (size_t)nch;
        r.scale[c] = fmaxf(r.scale[c], fabsf(r.v[i]));
    }
    for (int c = 0; c < nch; c++)
        r.scale[c] = r.scale[c] > 0.0f ? r.scale[c] / 127.0f : 1.0f;
    for (size_t i = 0; i < n; i++) {
        float x = roundf(r.v[i] / r.scale[i / inner % (size_t)nch]);
        q[i] = (int8_t)(x > 127.0f ? 127 : x < -127.0f ? -127 : x);
    }
    int b = mp_tfw_buffer(z->w, q, n);
    r.t = b < 0 ? -1 : mp_tfw_tensor(z->w, name, MP_DT_INT8, rank, dims, b, NULL);
    mp_tfw_tensor_quant(z->w, r.t, nch, r.scale, zeros, qdim);
    free(q);
    free(zeros);
    return r;
}

static void weights_drop(weights *w)
{
    free(w->v);
    free(w->scale);
    w->v = w->scale = NULL;
}

/* A bias of n values, drawn as the float model draws it: float32, or (int8 model) int32 with
 * scale in_scale * w_scale[c] per channel. *values gets the float values (int8 model only). */
static int make_bias(zoo_ctx *z, const char *name, int n, float in_scale, const float *w_scale,
                     float **values)
{
    *values = NULL;
    if (!z->int8)
        return const_uniform(z, name, 1, (int32_t[]){n}, BIAS_LIMIT);
    float *v = draw_uniform(z, (size_t)n, BIAS_LIMIT);
    float *scale = malloc((size_t)n * sizeof *scale);
    int32_t *q = malloc((size_t)n * sizeof *q);
    int64_t *zeros = calloc((size_t)n, sizeof *zeros);
    int t = -1;
    if (v && scale && q && zeros && w_scale) {
        for (int c = 0; c < n; c++) {
            scale[c] = in_scale * w_scale[c];
            double x = round((double)v[c] / (double)scale[c]);
            q[c] = (int32_t)(x > INT32_MAX ? INT32_MAX : x < -INT32_MAX ? -INT32_MAX : x);
        }
        int b = mp_tfw_buffer(z->w, q, (size_t)n * sizeof *q);
        t = b < 0 ? -1 : mp_tfw_tensor(z->w, name, MP_DT_INT32, 1, (int32_t[]){n}, b, NULL);
        mp_tfw_tensor_quant(z->w, t, n, scale, zeros, 0);
    } else {
        z->oom = true;
    }
    free(scale);
    free(q);
    free(zeros);
    *values = v;
    return t;
}

static int same_out(int in, int stride)
{
    return (in + stride - 1) / stride;
}

/* The float model's convolution (regular, or depthwise with multiplier 1) on the calibration
 * values: TensorFlow's SAME padding (an odd extra row or column at the bottom or right),
 * bias, RELU6 or none. The filter is [O,K,K,I], or [1,K,K,C] when depthwise. */
static float *eval_conv(zoo_ctx *z, const feat *in, const feat *out, const float *w,
                        const float *bias, int k, int stride, int act, bool depthwise)
{
    size_t n = (size_t)out->h * (size_t)out->w * (size_t)out->c;
    int ci = in->c, co = out->c;
    float *y = malloc(n * sizeof *y);
    /* the filter as [K,K,I,O] (depthwise: as it is), so the inner loop runs over outputs */
    float *wt = depthwise ? NULL : malloc((size_t)k * (size_t)k * (size_t)ci * (size_t)co * sizeof *wt);
    if (!y || (!depthwise && !wt) || !in->v || !w || !bias) {
        z->oom = z->oom || !y || (!depthwise && !wt);
        free(y);
        free(wt);
        return NULL;
    }
    for (int o = 0; !depthwise && o < co; o++)
        for (int kk = 0; kk < k * k; kk++)
            for (int i = 0; i < ci; i++)
                wt[((size_t)kk * (size_t)ci + (size_t)i) * (size_t)co + (size_t)o] =
                    w[((size_t)o * (size_t)(k * k) + (size_t)kk) * (size_t)ci + (size_t)i];
    int pt = ((out->h - 1) * stride + k - in->h) / 2, pl = ((out->w - 1) * stride + k - in->w) / 2;
    pt = pt < 0 ? 0 : pt;
    pl = pl < 0 ? 0 : pl;
    for (int oy = 0; oy < out->h; oy++)
        for (int ox = 0; ox < out->w; ox++) {
            float *yo = y + ((size_t)oy * (size_t)out->w + (size_t)ox) * (size_t)co;
            memcpy(yo, bias, (size_t)co * sizeof *yo);
            for (int ky = 0; ky < k; ky++)
                for (int kx = 0; kx < k; kx++) {
                    int iy = oy * stride - pt + ky, ix = ox * stride - pl + kx;
                    if (iy < 0 || iy >= in->h || ix < 0 || ix >= in->w)
                        continue;
                    const float *xi = in->v + ((size_t)iy * (size_t)in->w + (size_t)ix) * (size_t)ci;
                    size_t kk = (size_t)ky * (size_t)k + (size_t)kx;
                    if (depthwise) {
                        for (int c = 0; c < co; c++)
                            yo[c] += w[kk * (size_t)co + (size_t)c] * xi[c];
                        continue;
                    }
                    for (int i = 0; i < ci; i++) {
                        const float *wi = wt + (kk * (size_t)ci + (size_t)i) * (size_t)co;
                        float xv = xi[i];
                        for (int o = 0; o < co; o++)
                            yo[o] += wi[o] * xv;
                    }
                }
            for (int o = 0; act == MP_ACT_RELU6 && o < co; o++)
                yo[o] = fminf(fmaxf(yo[o], 0.0f), 6.0f);
        }
    free(wt);
    return y;
}

/* CONV_2D (or, depthwise, DEPTHWISE_CONV_2D with multiplier 1) k x k / stride, SAME, with
 * bias and fused activation; weight variance gain2/fan_in. Names: "<wscope>/<wname>",
 * "<wscope>/<bname>", output `out_name`. */
static feat conv_any(zoo_ctx *z, feat in, int cout, int k, int stride, int act, float gain2,
                     bool depthwise, const char *wscope, const char *out_name)
{
    char name[256];
    snprintf(name, sizeof name, "%s/%s", wscope, depthwise ? "depthwise_weights" : "weights");
    int32_t wdims[4] = {depthwise ? 1 : cout, k, k, in.c}; /* depthwise: cout == in.c */
    weights wt = make_weights(z, name, 4, wdims, weight_limit(depthwise ? k * k : k * k * in.c,
                                                              gain2),
                              depthwise ? 3 : 0);
    snprintf(name, sizeof name, "%s/%s", wscope, depthwise ? "depthwise_bias" : "biases");
    float *bv = NULL;
    int bias = make_bias(z, name, cout, in.scale, wt.scale, &bv);
    feat out = {-1, same_out(in.h, stride), same_out(in.w, stride), cout, NULL, 0.0f, 0};
    out.t = act_tensor(z, out_name, 4, (int32_t[]){1, out.h, out.w, out.c});
    if (z->int8) {
        out.v = eval_conv(z, &in, &out, wt.v, bv, k, stride, act, depthwise);
        act_quant(z, &out);
    }
    weights_drop(&wt);
    free(bv);
    mp_op_options o = mp_tfw_options_default();
    o.padding = MP_PAD_SAME;
    o.stride_w = o.stride_h = stride;
    o.activation = act;
    if (depthwise)
        o.depth_multiplier = 1;
    mp_tfw_op(z->w, depthwise ? MP_OP_DEPTHWISE_CONV_2D : MP_OP_CONV_2D, 3,
              (int32_t[]){in.t, wt.t, bias}, 1, &out.t, &o);
    return out;
}

static feat conv2d(zoo_ctx *z, feat in, int cout, int k, int stride, int act, float gain2,
                   const char *wscope, const char *out_name)
{
    return conv_any(z, in, cout, k, stride, act, gain2, false, wscope, out_name);
}

/* DEPTHWISE_CONV_2D k x k / stride, multiplier 1, SAME, bias, fused activation. */
static feat dwconv(zoo_ctx *z, feat in, int k, int stride, int act, const char *wscope,
                   const char *out_name)
{
    return conv_any(z, in, in.c, k, stride, act, GAIN_RELU, true, wscope, out_name);
}

/* ADD of two activations (no activation); int8: its own calibrated output quantization. */
static feat add(zoo_ctx *z, feat a, feat b, const char *out_name)
{
    feat sum = {-1, a.h, a.w, a.c, NULL, 0.0f, 0};
    sum.t = act_tensor(z, out_name, 4, (int32_t[]){1, sum.h, sum.w, sum.c});
    if (z->int8 && a.v && b.v) {
        size_t n = (size_t)a.h * (size_t)a.w * (size_t)a.c;
        sum.v = malloc(n * sizeof *sum.v);
        z->oom = z->oom || !sum.v;
        for (size_t i = 0; sum.v && i < n; i++)
            sum.v[i] = a.v[i] + b.v[i];
    }
    if (z->int8)
        act_quant(z, &sum);
    mp_op_options o = mp_tfw_options_default();
    mp_tfw_op(z->w, MP_OP_ADD, 2, (int32_t[]){a.t, b.t}, 1, &sum.t, &o);
    return sum;
}

/* Global pooling to [1,1,1,c]: AVERAGE_POOL_2D over the whole (static) map, or, for dynamic
 * models, MEAN over axes [1,2] with keep_dims. Int8: the input's quantization. */
static feat global_pool(zoo_ctx *z, feat in, bool dynamic, const char *scope)
{
    char name[256];
    feat out = {-1, 1, 1, in.c, NULL, 0.0f, 0};
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
    if (z->int8 && in.v) {
        size_t hw = (size_t)in.h * (size_t)in.w;
        out.v = calloc((size_t)in.c, sizeof *out.v);
        z->oom = z->oom || !out.v;
        for (size_t c = 0; out.v && c < (size_t)in.c; c++) {
            for (size_t p = 0; p < hw; p++)
                out.v[c] += in.v[p * (size_t)in.c + c];
            out.v[c] /= (float)hw;
        }
    }
    if (z->int8)
        act_quant_as(z, &out, &in);
    return out;
}

/* RESHAPE to [batch, n]: the shape [-1, n] given both as an input tensor and as new_shape,
 * as TensorFlow's converter writes a flatten, so that a batch set on the input carries
 * through; the output is [1, n] at the model's own batch. Int8: the input's quantization. */
static int reshape_2d(zoo_ctx *z, const feat *in, int n, const char *shape_name,
                      const char *out_name, const int32_t *signature)
{
    int32_t shape[2] = {1, n};
    int st = const_i32(z, shape_name, 2, (const int32_t[]){-1, n});
    feat out = {-1, 1, 1, n, NULL, 0.0f, 0};
    out.t = mp_tfw_tensor(z->w, out_name, z->int8 ? MP_DT_INT8 : MP_DT_FLOAT32, 2, shape, 0,
                          signature);
    if (z->int8)
        act_quant_as(z, &out, in);
    mp_op_options o = mp_tfw_options_default();
    o.has_new_shape = true;
    o.n_new_shape = 2;
    o.new_shape[0] = -1;
    o.new_shape[1] = n;
    mp_tfw_op(z->w, MP_OP_RESHAPE, 2, (int32_t[]){in->t, st}, 1, &out.t, &o);
    return out.t;
}

/* SOFTMAX (beta 1); int8: output scale 1/256, zero point -128 (TensorFlow Lite's). */
static int softmax(zoo_ctx *z, int in, int n, const char *out_name, const int32_t *signature)
{
    int out = mp_tfw_tensor(z->w, out_name, z->int8 ? MP_DT_INT8 : MP_DT_FLOAT32, 2,
                            (int32_t[]){1, n}, 0, signature);
    if (z->int8)
        mp_tfw_tensor_quant(z->w, out, 1, (float[]){1.0f / 256.0f}, (int64_t[]){-128}, 0);
    mp_op_options o = mp_tfw_options_default();
    o.beta = 1.0f;
    mp_tfw_op(z->w, MP_OP_SOFTMAX, 1, &in, 1, &out, &o);
    return out;
}

/* The model input "input" [1,size,size,channels], with a [1,-1,-1,C] signature if dynamic.
 * Int8: quantized from the reference input's float values, which it keeps for calibration. */
static feat model_input(zoo_ctx *z, const net_cfg *cfg)
{
    feat in = {-1, cfg->size, cfg->size, cfg->channels, NULL, 0.0f, 0};
    int32_t sig[4] = {1, -1, -1, cfg->channels};
    in.t = mp_tfw_tensor(z->w, "input", z->int8 ? MP_DT_INT8 : MP_DT_FLOAT32, 4,
                         (int32_t[]){1, in.h, in.w, in.c}, 0, cfg->dynamic ? sig : NULL);
    if (z->int8) {
        size_t n = (size_t)in.h * (size_t)in.w * (size_t)in.c;
        in.v = malloc(n * sizeof *in.v);
        z->oom = z->oom || !in.v;
        if (in.v)
            mp_reference_input(in.v, MP_DT_FLOAT32, n, 0);
        act_quant(z, &in);
    }
    return in;
}

/* ---- mnist_mlp -------------------------------------------------------------------------- */

static void build_mlp(zoo_ctx *z, const net_cfg *cfg)
{
    feat in = model_input(z, cfg);
    int n_in = in.h * in.w * in.c;
    int flat = reshape_2d(z, &in, n_in, "sequential/flatten/Const", "sequential/flatten/Reshape",
                          NULL);

    mp_op_options o = mp_tfw_options_default();
    int w1 = const_weights(z, "sequential/dense/MatMul", 2, (int32_t[]){cfg->hidden, n_in}, n_in,
                           GAIN_RELU);
    int b1 = const_uniform(z, "sequential/dense/BiasAdd/ReadVariableOp", 1,
                           (int32_t[]){cfg->hidden}, BIAS_LIMIT);
    int h = act_tensor(z, "sequential/dense/Relu", 2, (int32_t[]){1, cfg->hidden});
    o.activation = MP_ACT_RELU;
    mp_tfw_op(z->w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){flat, w1, b1}, 1, &h, &o);

    int w2 = const_weights(z, "sequential/dense_1/MatMul", 2, (int32_t[]){cfg->classes, cfg->hidden},
                           cfg->hidden, GAIN_LOGITS);
    int b2 = const_uniform(z, "sequential/dense_1/BiasAdd/ReadVariableOp", 1,
                           (int32_t[]){cfg->classes}, BIAS_LIMIT);
    int logits = act_tensor(z, "sequential/dense_1/BiasAdd", 2, (int32_t[]){1, cfg->classes});
    o.activation = MP_ACT_NONE;
    mp_tfw_op(z->w, MP_OP_FULLY_CONNECTED, 3, (int32_t[]){h, w2, b2}, 1, &logits, &o);

    int out = softmax(z, logits, cfg->classes, "sequential/dense_1/Softmax", NULL);
    mp_tfw_io(z->w, 1, &in.t, 1, &out);
}

/* ---- classifier head shared by the MobileNets --------------------------------------------- */

/* global pool -> CONV 1x1 logits (bias) -> RESHAPE [1,classes] -> SOFTMAX; sets the io.
 * Frees x's calibration values. */
static void mobilenet_head(zoo_ctx *z, const net_cfg *cfg, feat x, feat input, const char *net)
{
    char scope[128], name[256], shape_name[256];
    snprintf(scope, sizeof scope, "%s/Logits", net);
    feat pooled = global_pool(z, x, cfg->dynamic, scope);
    feat_drop(&x);

    snprintf(scope, sizeof scope, "%s/Logits/Conv2d_1c_1x1", net);
    snprintf(name, sizeof name, "%s/BiasAdd", scope);
    feat logits = conv2d(z, pooled, cfg->classes, 1, 1, MP_ACT_NONE, GAIN_LOGITS, scope, name);
    feat_drop(&pooled);

    int32_t out_sig[2] = {1, cfg->classes};
    snprintf(name, sizeof name, "%s/Logits/SpatialSqueeze", net);
    snprintf(shape_name, sizeof shape_name, "%s/Logits/SpatialSqueeze_shape", net);
    int flat = reshape_2d(z, &logits, cfg->classes, shape_name, name, NULL);
    feat_drop(&logits);
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
    feat_drop(&input); /* int8: the calibration values, each freed after its last reader */

    int block = 0;
    for (int s = 0; s < 7; s++) {
        int cout = make_divisible((float)stages[s].c * cfg->alpha);
        for (int r = 0; r < stages[s].n; r++, block++) {
            int stride = r == 0 ? stages[s].s : 1;
            if (block == 0)
                snprintf(scope, sizeof scope, "%s/expanded_conv", net);
            else
                snprintf(scope, sizeof scope, "%s/expanded_conv_%d", net, block);
            feat in = x, t = x;
            if (stages[s].t > 1) {
                snprintf(wscope, sizeof wscope, "%s/expand", scope);
                snprintf(out, sizeof out, "%s/expand/Relu6", scope);
                t = conv2d(z, in, in.c * stages[s].t, 1, 1, MP_ACT_RELU6, GAIN_RELU, wscope, out);
            }
            snprintf(wscope, sizeof wscope, "%s/depthwise", scope);
            snprintf(out, sizeof out, "%s/depthwise/Relu6", scope);
            feat d = dwconv(z, t, 3, stride, MP_ACT_RELU6, wscope, out);
            if (t.v != in.v)
                feat_drop(&t);
            snprintf(wscope, sizeof wscope, "%s/project", scope);
            snprintf(out, sizeof out, "%s/project/add_fold", scope);
            bool residual = stride == 1 && in.c == cout;
            x = conv2d(z, d, cout, 1, 1, MP_ACT_NONE, residual ? GAIN_RESIDUAL : GAIN_LINEAR,
                       wscope, out);
            feat_drop(&d);
            if (residual) {
                snprintf(out, sizeof out, "%s/add", scope);
                feat sum = add(z, in, x, out);
                feat_drop(&x);
                x = sum;
            }
            feat_drop(&in);
        }
    }

    int last = cfg->alpha > 1.0f ? make_divisible(1280.0f * cfg->alpha) : 1280;
    snprintf(wscope, sizeof wscope, "%s/Conv_1", net);
    snprintf(out, sizeof out, "%s/Conv_1/Relu6", net);
    feat top = conv2d(z, x, last, 1, 1, MP_ACT_RELU6, GAIN_RELU, wscope, out);
    feat_drop(&x);
    mobilenet_head(z, cfg, top, input, net);
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

    zoo_ctx z = {mp_tfw_create(), m->cfg.seed, false, m->cfg.int8};
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
