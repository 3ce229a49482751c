/* Our graph -> an XNNPACK subgraph (the peer's builder; see xnnpack_runtime.h).
 *
 * Values are defined lazily, the first time an operator reads or writes a tensor as data:
 * model inputs and outputs become external values, constants (and values the engine folded
 * at prepare) static values, the rest internal values. Operators that only supply
 * parameters (a reshape's shape, a pad's paddings, a mean's axes, a resize's size) are read
 * here at build time and never become values.
 *
 * Layouts: TFLite and XNNPACK agree, so no weight is rearranged:
 *   CONV_2D            filter OHWI [Cout,KH,KW,Cin/groups] = XNNPACK's
 *                      [groups*group_out, KH, KW, group_in] (TFLite's grouped convolution
 *                      has groups = input channels / filter channels).
 *   DEPTHWISE_CONV_2D  filter [1,KH,KW,Cin*M] = xnn_define_depthwise_convolution_2d's layout,
 *                      M = output channels / input channels (the option is not trusted).
 *   FULLY_CONNECTED    weights [out,in] = XNNPACK's default (no XNN_FLAG_TRANSPOSE_WEIGHTS);
 *                      an input flattened by TFLite uses XNN_FLAG_TENSORFLOW_RESHAPE_2D.
 * SAME padding is passed as TFLite's explicit padding (the shapes are concrete), which also
 * avoids XNNPACK's SAME mode where the stride exceeds the kernel (engine/kernels/conv.c).
 *   TRANSPOSE_CONV     weights [O,KH,KW,I] = xnn_define_deconvolution_2d's filter (one group);
 *                      MediaPipe's Convolution2DTransposeBias alike. The padding before is
 *                      TensorFlow Lite's (or MediaPipe's), the padding after and XNNPACK's
 *                      adjustment are what make its output size the model's.
 * Biases that are omitted get zeros (this XNNPACK's runtime reads a bias value for every
 * convolution and fully connected node).
 * Float32 only, one node each: HARD_SWISH, ABS, NEG, FLOOR, CEIL, ROUND (banker's), SQUARE,
 * SQRT, ELU, LEAKY_RELU, DEPTH_TO_SPACE, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU (constant
 * slopes, one per channel), TRANSPOSE_CONV (constant weights). This XNNPACK has no
 * concatenation, slicing, transposition or TANH node: models with them are refused.
 *
 * Quantized graphs (what this XNNPACK's subgraph API takes, probed on Debian's 2022 build):
 * int8 / uint8 activations with one scale and zero point are qint8 / quint8 values; filters
 * int8 per tensor (qint8) or per channel along TFLite's quantized_dimension (qcint8, zero
 * points 0), uint8 per tensor (quint8); biases int32 (qint32, or qcint32 per channel; omitted:
 * zeros of scale input x filter scale). Nodes: convolution, depthwise convolution, fully
 * connected (per-tensor weights only: per-channel ones are refused), add, subtract, multiply,
 * max pooling, clamp, static reshape and constant pad (the last four with the output
 * quantized as the input, else refused), average pooling only over the whole map (as global
 * average pooling: XNNPACK's average pooling takes float32 only), MEAN as global average
 * pooling, QUANTIZE / DEQUANTIZE as convert. SOFTMAX, which this XNNPACK has in float32 only,
 * is composed of its own nodes: convert to float32, softmax, convert back (within a step of
 * TensorFlow Lite's integer softmax; equal on every model the tests run). Quantized
 * LOGISTIC, PADV2 with a value and int16 are refused. Hybrid models (float32 activations, constant int8 / uint8 / float16
 * weights: TensorFlow Lite's default weight quantization) run on weights dequantized once to
 * float32, as the engine's kernels run them. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/kernel.h"
#include "peers/xnnpack_internal.h"

typedef struct builder {
    mp_xnn_peer *p;
    const mp_session *s;
    const mp_model *m;
    xnn_subgraph_t sg;
    mp_error *err;
    uint32_t *vid;     /* per tensor: XNNPACK value id, XNN_INVALID_VALUE_ID = not defined */
    bool *known;       /* per tensor: value known at build time (constant or folded) */
    bool *folded;      /* per operator: computed by the engine at prepare, not run */
    int8_t *role;      /* per tensor: 1 model input, 2 model output, 3 both, 0 neither */
    uint32_t *ext_id;  /* per tensor: external id when role != 0 */
    int32_t op;        /* operator being translated (-1 = none) */
} builder;

static const char *op_label(const builder *b, int32_t i)
{
    const mp_op_info *o = &b->m->ops[i];
    if (o->opcode == MP_OP_CUSTOM && o->custom_code)
        return o->custom_code;
    const char *n = mp_op_name(o->opcode);
    return n ? n : "?";
}

/* "<model>: XNNPACK's subgraph runtime has no equivalent of operator I (NAME)[: detail]" */
static mp_status no_equiv(builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static mp_status no_equiv(builder *b, const char *fmt, ...)
{
    char detail[300] = "";
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        detail[0] = ':';
        detail[1] = ' ';
        vsnprintf(detail + 2, sizeof detail - 2, fmt, ap);
        va_end(ap);
    }
    return mp_fail(b->err, MP_ERR_UNSUPPORTED,
                   "%s: XNNPACK's subgraph runtime has no equivalent of operator %d (%s)%s",
                   b->m->path, b->op, op_label(b, b->op), detail);
}

static mp_status op_fail(builder *b, mp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mp_status op_fail(builder *b, mp_status st, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_fail(b->err, st, "%s: XNNPACK peer, operator %d (%s): %s", b->m->path, b->op,
                   op_label(b, b->op), msg);
}

/* A define call that failed: out of memory and XNNPACK's own failures as such; a refusal
 * of the parameters means XNNPACK's subgraph API has no equivalent. */
static mp_status xnn_refused(builder *b, const char *what, enum xnn_status xs)
{
    mp_status st = mp_xnn_status(xs);
    if (st != MP_ERR_UNSUPPORTED)
        return op_fail(b, st, "%s: %s (status %d)", what, mp_xnn_status_text(xs), (int)xs);
    return no_equiv(b, "%s refused it (status %d)", what, (int)xs);
}

#define TRY(x)                                                                            \
    do {                                                                                  \
        mp_status st_ = (x);                                                              \
        if (st_ != MP_OK)                                                                 \
            return st_;                                                                   \
    } while (0)

static const mp_tensor *T(const builder *b, int32_t t)
{
    return mp_session_tensor(b->s, t);
}

static const char *tname(const builder *b, int32_t t)
{
    const mp_tensor *x = T(b, t);
    return x && x->info && x->info->name && *x->info->name ? x->info->name : "?";
}

static uint64_t round16(uint64_t v)
{
    return (v + 15) / 16 * 16;
}

/* Keep a block of static data the peer made, freed at destroy. */
static void *keep_copy(builder *b, size_t bytes)
{
    mp_xnn_peer *p = b->p;
    if (p->n_copies == p->cap_copies) {
        int cap = p->cap_copies ? p->cap_copies * 2 : 16;
        void **nc = mp_xc_realloc(p->copies, sizeof(void *) * (size_t)cap);
        if (!nc)
            return NULL;
        p->copies = nc;
        p->cap_copies = cap;
    }
    void *q = mp_xc_calloc(1, bytes + XNN_EXTRA_BYTES);
    if (!q)
        return NULL;
    p->copies[p->n_copies++] = q;
    p->static_copy_bytes += bytes;
    return q;
}

/* How a tensor is typed in XNNPACK: float32, or quantized per tensor (qint8, quint8, qint32)
 * or per channel (qcint8, qcint32: scales along channel_dim, zero points 0). */
typedef struct xtype {
    enum xnn_datatype dt;
    int32_t zero_point;
    float scale;
    const float *scales;    /* per channel: one per slice along channel_dim */
    size_t channel_dim;
} xtype;

static bool is_quantized(const xtype *q)
{
    return q->dt != xnn_datatype_fp32;
}

/* The XNNPACK type of tensor t. Per-channel parameters only where `per_channel` (filters
 * and biases); anything else XNNPACK's values cannot carry is refused. */
static mp_status xtype_of(builder *b, int32_t t, const char *what, bool per_channel, xtype *q)
{
    const mp_tensor *x = T(b, t);
    const mp_quant *mq = &x->info->quant;
    memset(q, 0, sizeof *q);
    if (x->dtype == MP_DT_FLOAT32 && mq->count == 0) {
        q->dt = xnn_datatype_fp32;
        return MP_OK;
    }
    if (mq->count < 1 || (x->dtype != MP_DT_INT8 && x->dtype != MP_DT_UINT8 &&
                          x->dtype != MP_DT_INT32))
        return no_equiv(b, "%s '%s' is %s%s (the peer takes float32, and int8, uint8 or int32 "
                        "with quantization parameters)", what, tname(b, t),
                        mp_dtype_name(x->dtype), mq->count ? " with quantization" : "");
    if (mq->count == 1) { /* per tensor (a per-channel tensor of one channel alike) */
        q->dt = x->dtype == MP_DT_INT8    ? xnn_datatype_qint8
                : x->dtype == MP_DT_UINT8 ? xnn_datatype_quint8
                                          : xnn_datatype_qint32;
        q->scale = mq->scale[0];
        q->zero_point = (int32_t)(mq->zero_point ? mq->zero_point[0] : 0);
        return MP_OK;
    }
    if (!per_channel || x->dtype == MP_DT_UINT8)
        return no_equiv(b, "%s '%s' is %s quantized per channel (XNNPACK takes per-channel "
                        "int8 filters and int32 biases only)", what, tname(b, t),
                        mp_dtype_name(x->dtype));
    for (int32_t c = 0; mq->zero_point && c < mq->count; c++)
        if (mq->zero_point[c] != 0)
            return no_equiv(b, "%s '%s' has zero point %lld in channel %d (XNNPACK's "
                            "per-channel values are symmetric)", what, tname(b, t),
                            (long long)mq->zero_point[c], c);
    q->dt = x->dtype == MP_DT_INT8 ? xnn_datatype_qcint8 : xnn_datatype_qcint32;
    q->scales = mq->scale;
    q->channel_dim = (size_t)mq->quantized_dimension;
    return MP_OK;
}

static enum xnn_status define_typed(builder *b, const xtype *q, size_t rank, const size_t *dims,
                                    const void *data, uint32_t ext, uint32_t flags, uint32_t *id)
{
    switch (q->dt) {
    case xnn_datatype_fp32:
        return xnn_define_tensor_value(b->sg, q->dt, rank, dims, data, ext, flags, id);
    case xnn_datatype_qcint8:
    case xnn_datatype_qcint32:
        return xnn_define_channelwise_quantized_tensor_value(b->sg, q->dt, q->scales, rank,
                                                             q->channel_dim, dims, data, ext,
                                                             flags, id);
    default:
        return xnn_define_quantized_tensor_value(b->sg, q->dt, q->zero_point, q->scale, rank,
                                                 dims, data, ext, flags, id);
    }
}

/* Define the value of tensor t (once). `what` names its use for messages; `per_channel`:
 * a filter or bias, which may be quantized per channel. */
static mp_status define_value(builder *b, int32_t t, const char *what, bool per_channel,
                              uint32_t *id)
{
    if (t < 0 || t >= b->m->n_tensors)
        return op_fail(b, MP_ERR_FORMAT, "%s is omitted", what);
    if (b->vid[t] != XNN_INVALID_VALUE_ID) {
        *id = b->vid[t];
        return MP_OK;
    }
    const mp_tensor *x = T(b, t);
    xtype q;
    TRY(xtype_of(b, t, what, per_channel, &q));
    if (!x->shape_known)
        return no_equiv(b, "the shape of %s '%s' is known only while running", what,
                        tname(b, t));
    if (x->rank > XNN_MAX_TENSOR_DIMS)
        return no_equiv(b, "%s '%s' has rank %d (XNNPACK takes at most %d)", what, tname(b, t),
                        x->rank, XNN_MAX_TENSOR_DIMS);
    size_t dims[XNN_MAX_TENSOR_DIMS];
    for (int32_t d = 0; d < x->rank; d++)
        dims[d] = (size_t)x->dims[d];
    const void *data = NULL;
    uint32_t ext = XNN_INVALID_VALUE_ID, flags = 0;
    if (b->role[t]) {
        if (b->known[t])
            return no_equiv(b, "model %s '%s' is a constant", b->role[t] & 1 ? "input" : "output",
                            tname(b, t));
        ext = b->ext_id[t];
        flags = (b->role[t] & 1 ? XNN_VALUE_FLAG_EXTERNAL_INPUT : 0) |
                (b->role[t] & 2 ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : 0);
    } else if (b->known[t]) {
        if (!x->data)
            return op_fail(b, MP_ERR_ARG, "value of '%s' is not available", tname(b, t));
        if (x->is_const) {
            data = x->data; /* the model's bytes, in place (MP_MODEL_TAIL_SLACK covers reads) */
        } else {
            void *c = keep_copy(b, x->bytes); /* folded by the engine: copied once */
            if (!c)
                return op_fail(b, MP_ERR_NOMEM, "out of memory copying '%s'", tname(b, t));
            memcpy(c, x->data, x->bytes);
            data = c;
        }
    } else {
        b->p->internal_values++;
        uint64_t r = round16(x->bytes);
        b->p->internal_sum16 += r;
        if (r > b->p->internal_largest)
            b->p->internal_largest = r;
    }
    enum xnn_status xs = define_typed(b, &q, (size_t)x->rank, dims, data, ext, flags, id);
    if (xs != xnn_status_success)
        return xnn_refused(b, "defining a value", xs);
    b->vid[t] = *id;
    return MP_OK;
}

static mp_status value_of(builder *b, int32_t t, const char *what, uint32_t *id)
{
    return define_value(b, t, what, false, id);
}

/* The XNNPACK type of an operator's tensor, defined or not (t >= 0). */
static mp_status type_at(builder *b, int32_t t, const char *what, xtype *q)
{
    if (t < 0 || t >= b->m->n_tensors)
        return op_fail(b, MP_ERR_FORMAT, "%s is omitted", what);
    return xtype_of(b, t, what, false, q);
}

/* An internal value the peer needs beyond our tensors, of type q. */
static mp_status helper_value(builder *b, const xtype *q, int32_t rank, const size_t *dims,
                              uint32_t *id)
{
    uint64_t bytes = q->dt == xnn_datatype_fp32 ? sizeof(float) : 1;
    for (int32_t d = 0; d < rank; d++)
        bytes *= dims[d];
    enum xnn_status xs = define_typed(b, q, (size_t)rank, dims, NULL, XNN_INVALID_VALUE_ID, 0, id);
    if (xs != xnn_status_success)
        return xnn_refused(b, "defining a helper value", xs);
    b->p->internal_values++;
    b->p->internal_sum16 += round16(bytes);
    if (round16(bytes) > b->p->internal_largest)
        b->p->internal_largest = round16(bytes);
    return MP_OK;
}

/* The float32 static value of constant weights t of a float32 operator that are float16, or
 * int8 / uint8 with quantization parameters (a hybrid model: TensorFlow Lite's converter's
 * default weight quantization): dequantized once into the peer's memory, as the engine's
 * kernels do (mp_dequantize_to_f32). */
static mp_status dequantized_weight(builder *b, int32_t t, const char *what, uint32_t *id)
{
    if (b->vid[t] != XNN_INVALID_VALUE_ID) {
        *id = b->vid[t];
        return MP_OK;
    }
    const mp_tensor *x = T(b, t);
    if (!b->known[t] || !x->data)
        return no_equiv(b, "%s '%s' is %s and computed while running", what, tname(b, t),
                        mp_dtype_name(x->dtype));
    if (x->rank > XNN_MAX_TENSOR_DIMS)
        return no_equiv(b, "%s '%s' has rank %d (XNNPACK takes at most %d)", what, tname(b, t),
                        x->rank, XNN_MAX_TENSOR_DIMS);
    size_t count = mp_tensor_elements(x), dims[XNN_MAX_TENSOR_DIMS];
    float *f = keep_copy(b, count * sizeof(float) + 16);
    if (!f)
        return op_fail(b, MP_ERR_NOMEM, "out of memory dequantizing '%s'", tname(b, t));
    if (!mp_dequantize_to_f32(x, f))
        return no_equiv(b, "%s '%s' is %s (the peer dequantizes float16, and int8 or uint8 "
                        "with quantization parameters)", what, tname(b, t),
                        mp_dtype_name(x->dtype));
    for (int32_t d = 0; d < x->rank; d++)
        dims[d] = (size_t)x->dims[d];
    xtype f32 = {.dt = xnn_datatype_fp32};
    enum xnn_status xs = define_typed(b, &f32, (size_t)x->rank, dims, f, XNN_INVALID_VALUE_ID, 0,
                                      id);
    if (xs != xnn_status_success)
        return xnn_refused(b, "defining dequantized weights", xs);
    b->vid[t] = *id;
    return MP_OK;
}

/* A static weight (filter or bias) of an operator whose input has type `in`: float32 for a
 * float32 input (integer weights there make a hybrid model, not expressible); for a quantized
 * input, the filter int8 (per tensor or per channel) or uint8 as the input, the bias int32.
 * A missing bias (t < 0, `count` outputs) becomes zeros (int32 of scale input x filter scale
 * when quantized: `filter` is the filter's type). */
static mp_status weight_of(builder *b, int32_t t, const char *what, const xtype *in,
                           const xtype *filter, size_t count, uint32_t *id)
{
    if (t >= 0) {
        const mp_tensor *x = T(b, t);
        if (!is_quantized(in) && x->dtype != MP_DT_FLOAT32)
            return dequantized_weight(b, t, what, id);
        if (is_quantized(in)) {
            mp_dtype want = filter ? MP_DT_INT32
                            : in->dt == xnn_datatype_quint8 ? MP_DT_UINT8 : MP_DT_INT8;
            if (x->dtype != want)
                return no_equiv(b, "%s '%s' is %s on %s activations (XNNPACK takes %s)", what,
                                tname(b, t), mp_dtype_name(x->dtype),
                                in->dt == xnn_datatype_quint8 ? "uint8" : "int8",
                                mp_dtype_name(want));
        }
        if (!b->known[t])
            return no_equiv(b, "%s '%s' is computed while running", what, tname(b, t));
        return define_value(b, t, what, true, id);
    }
    xtype q = {.dt = xnn_datatype_fp32};
    size_t elem = sizeof(float);
    if (is_quantized(in)) {
        elem = sizeof(int32_t);
        if (filter->dt == xnn_datatype_qcint8) {
            float *s = keep_copy(b, count * sizeof(float));
            if (!s)
                return op_fail(b, MP_ERR_NOMEM, "out of memory for a zero %s", what);
            for (size_t c = 0; c < count; c++)
                s[c] = in->scale * filter->scales[c];
            q = (xtype){.dt = xnn_datatype_qcint32, .scales = s};
        } else {
            q = (xtype){.dt = xnn_datatype_qint32, .scale = in->scale * filter->scale};
        }
    }
    void *zeros = keep_copy(b, count * elem);
    if (!zeros)
        return op_fail(b, MP_ERR_NOMEM, "out of memory for a zero %s", what);
    enum xnn_status xs = define_typed(b, &q, 1, &count, zeros, XNN_INVALID_VALUE_ID, 0, id);
    if (xs != xnn_status_success)
        return xnn_refused(b, "defining a zero bias", xs);
    return MP_OK;
}

static bool act_bounds(int32_t act, float *lo, float *hi)
{
    switch (act) {
    case MP_ACT_NONE: *lo = -INFINITY; *hi = INFINITY; return true;
    case MP_ACT_RELU: *lo = 0.0f; *hi = INFINITY; return true;
    case MP_ACT_RELU_N1_TO_1: *lo = -1.0f; *hi = 1.0f; return true;
    case MP_ACT_RELU6: *lo = 0.0f; *hi = 6.0f; return true;
    default: return false;
    }
}

static const char *act_name(int32_t act)
{
    switch (act) {
    case MP_ACT_TANH: return "TANH";
    case MP_ACT_SIGN_BIT: return "SIGN_BIT";
    default: return "unknown";
    }
}

static mp_status fused(builder *b, const mp_op_info *o, float *lo, float *hi)
{
    if (!act_bounds(o->opt.activation, lo, hi))
        return no_equiv(b, "fused activation %s (%d)", act_name(o->opt.activation),
                        o->opt.activation);
    return MP_OK;
}

/* TFLite's output size and explicit SAME padding of one spatial dimension. */
static int32_t out_size(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t padding)
{
    int64_t eff = (int64_t)(k - 1) * dil + 1;
    if (padding == MP_PAD_SAME)
        return (int32_t)(((int64_t)in + stride - 1) / stride);
    return in < eff ? -1 : (int32_t)(((int64_t)in - eff) / stride + 1);
}

static void same_padding(int32_t in, int32_t k, int32_t stride, int32_t dil, uint32_t *before,
                         uint32_t *after)
{
    int64_t eff = (int64_t)(k - 1) * dil + 1;
    int64_t out = ((int64_t)in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + eff - in;
    if (total < 0)
        total = 0;
    *before = (uint32_t)(total / 2);
    *after = (uint32_t)(total - total / 2);
}

/* pad = {top, right, bottom, left} */
static mp_status window(builder *b, const mp_op_info *o, const mp_tensor *in,
                        const mp_tensor *out, int32_t kh, int32_t kw, int32_t dh, int32_t dw,
                        uint32_t pad[4])
{
    const mp_op_options *opt = &o->opt;
    if (opt->stride_h < 1 || opt->stride_w < 1 || dh < 1 || dw < 1)
        return op_fail(b, MP_ERR_FORMAT, "invalid stride %dx%d or dilation %dx%d", opt->stride_h,
                       opt->stride_w, dh, dw);
    if (opt->padding != MP_PAD_SAME && opt->padding != MP_PAD_VALID)
        return no_equiv(b, "padding mode %d", opt->padding);
    if (in->rank != 4 || out->rank != 4)
        return no_equiv(b, "input and output must be NHWC (rank 4)");
    int32_t oh = out_size(in->dims[1], kh, opt->stride_h, dh, opt->padding);
    int32_t ow = out_size(in->dims[2], kw, opt->stride_w, dw, opt->padding);
    if (oh != out->dims[1] || ow != out->dims[2] || in->dims[0] != out->dims[0])
        return op_fail(b, MP_ERR_SHAPE, "output %dx%d does not follow from input %dx%d",
                       out->dims[1], out->dims[2], in->dims[1], in->dims[2]);
    memset(pad, 0, sizeof(uint32_t) * 4);
    if (opt->padding == MP_PAD_SAME) {
        same_padding(in->dims[1], kh, opt->stride_h, dh, &pad[0], &pad[2]);
        same_padding(in->dims[2], kw, opt->stride_w, dw, &pad[3], &pad[1]);
    }
    return MP_OK;
}

#define XNN(call, name)                                                                   \
    do {                                                                                  \
        enum xnn_status xs_ = (call);                                                     \
        if (xs_ != xnn_status_success)                                                    \
            return xnn_refused(b, name, xs_);                                             \
        b->p->xnn_nodes++;                                                                \
    } while (0)

static int32_t input_at(const mp_op_info *o, int32_t k)
{
    return k < o->n_inputs ? o->inputs[k] : -1;
}

static mp_status build_conv(builder *b, const mp_op_info *o, bool depthwise)
{
    int32_t ti = input_at(o, 0), tf = input_at(o, 1), tb = input_at(o, 2), to = o->outputs[0];
    if (ti < 0 || tf < 0)
        return op_fail(b, MP_ERR_FORMAT, "input or filter omitted");
    const mp_tensor *in = T(b, ti), *f = T(b, tf), *out = T(b, to);
    if (f->rank != 4 || in->rank != 4)
        return no_equiv(b, "input and filter must have rank 4");
    int32_t in_c = in->dims[3], kh = f->dims[1], kw = f->dims[2];
    int32_t out_c = depthwise ? f->dims[3] : f->dims[0];
    if (in_c < 1 || out_c < 1 || out->dims[3] != out_c)
        return op_fail(b, MP_ERR_SHAPE, "channels do not match");
    float lo = -INFINITY, hi = INFINITY;
    TRY(fused(b, o, &lo, &hi));
    uint32_t pad[4];
    TRY(window(b, o, in, out, kh, kw, o->opt.dilation_h, o->opt.dilation_w, pad));
    uint32_t x, y, w, bias;
    xtype tin, tfil = {.dt = xnn_datatype_fp32};
    TRY(type_at(b, ti, "input", &tin));
    TRY(value_of(b, ti, "input", &x));
    TRY(weight_of(b, tf, "filter", &tin, NULL, 0, &w));
    if (is_quantized(&tin))
        TRY(xtype_of(b, tf, "filter", true, &tfil));
    TRY(weight_of(b, tb, "bias", &tin, &tfil, (size_t)out_c, &bias));
    TRY(value_of(b, to, "output", &y));
    if (depthwise) {
        if (f->dims[0] != 1 || out_c % in_c != 0)
            return op_fail(b, MP_ERR_SHAPE, "depthwise filter must be [1,KH,KW,C*M]");
        XNN(xnn_define_depthwise_convolution_2d(
                b->sg, pad[0], pad[1], pad[2], pad[3], (uint32_t)kh, (uint32_t)kw,
                (uint32_t)o->opt.stride_h, (uint32_t)o->opt.stride_w, (uint32_t)o->opt.dilation_h,
                (uint32_t)o->opt.dilation_w, (uint32_t)(out_c / in_c), (size_t)in_c, lo, hi, x,
                w, bias, y, 0),
            "xnn_define_depthwise_convolution_2d");
        return MP_OK;
    }
    int32_t fc = f->dims[3];
    if (fc < 1 || in_c % fc != 0 || out_c % (in_c / fc) != 0)
        return op_fail(b, MP_ERR_SHAPE, "input channels %d do not match filter channels %d", in_c,
                       fc);
    uint32_t groups = (uint32_t)(in_c / fc);
    XNN(xnn_define_convolution_2d(b->sg, pad[0], pad[1], pad[2], pad[3], (uint32_t)kh,
                                  (uint32_t)kw, (uint32_t)o->opt.stride_h,
                                  (uint32_t)o->opt.stride_w, (uint32_t)o->opt.dilation_h,
                                  (uint32_t)o->opt.dilation_w, groups, (size_t)fc,
                                  (size_t)out_c / groups, lo, hi, x, w, bias, y, 0),
        "xnn_define_convolution_2d");
    return MP_OK;
}

static mp_status build_fc(builder *b, const mp_op_info *o)
{
    int32_t ti = input_at(o, 0), tw = input_at(o, 1), tb = input_at(o, 2), to = o->outputs[0];
    if (ti < 0 || tw < 0)
        return op_fail(b, MP_ERR_FORMAT, "input or weights omitted");
    if (o->opt.weights_format != 0)
        return no_equiv(b, "weights format %d (only the default is expressible)",
                        o->opt.weights_format);
    const mp_tensor *in = T(b, ti), *w = T(b, tw), *out = T(b, to);
    if (w->rank != 2)
        return no_equiv(b, "weights '%s' must have rank 2", tname(b, tw));
    int32_t n_out = w->dims[0], n_in = w->dims[1];
    size_t elems = mp_tensor_elements(in);
    if (n_in < 1 || elems % (size_t)n_in != 0 || out->rank < 1 || out->dims[out->rank - 1] != n_out)
        return op_fail(b, MP_ERR_SHAPE, "input does not match weights [%d,%d]", n_out, n_in);
    /* The input as it is, when the output keeps its leading dimensions; else TFLite's
     * flattening to [elements / in, in]. */
    bool same_lead = in->rank == out->rank && in->dims[in->rank - 1] == n_in;
    for (int32_t d = 0; same_lead && d + 1 < in->rank; d++)
        same_lead = in->dims[d] == out->dims[d];
    uint32_t flags = 0;
    if (!same_lead) {
        if (out->rank != 2 || (size_t)out->dims[0] != elems / (size_t)n_in)
            return op_fail(b, MP_ERR_SHAPE, "output rank %d does not match a flattened input",
                           out->rank);
        flags = XNN_FLAG_TENSORFLOW_RESHAPE_2D;
    }
    float lo = -INFINITY, hi = INFINITY;
    TRY(fused(b, o, &lo, &hi));
    uint32_t x, y, wid, bias;
    xtype tin, tw_q = {.dt = xnn_datatype_fp32};
    TRY(type_at(b, ti, "input", &tin));
    if (is_quantized(&tin) && w->dtype == MP_DT_INT8) {
        TRY(xtype_of(b, tw, "weights", true, &tw_q));
        if (tw_q.dt == xnn_datatype_qcint8)
            return no_equiv(b, "weights '%s' quantized per channel (this XNNPACK's fully "
                            "connected takes int8 weights with one scale)", tname(b, tw));
    }
    TRY(value_of(b, ti, "input", &x));
    TRY(weight_of(b, tw, "weights", &tin, NULL, 0, &wid));
    if (is_quantized(&tin))
        TRY(xtype_of(b, tw, "weights", true, &tw_q));
    TRY(weight_of(b, tb, "bias", &tin, &tw_q, (size_t)n_out, &bias));
    TRY(value_of(b, to, "output", &y));
    XNN(xnn_define_fully_connected(b->sg, lo, hi, x, wid, bias, y, flags),
        "xnn_define_fully_connected");
    return MP_OK;
}

static mp_status build_binary(builder *b, const mp_op_info *o)
{
    if (o->n_inputs != 2)
        return op_fail(b, MP_ERR_FORMAT, "expects 2 inputs");
    float lo = -INFINITY, hi = INFINITY;
    TRY(fused(b, o, &lo, &hi));
    uint32_t x1, x2, y;
    TRY(value_of(b, o->inputs[0], "input", &x1));
    TRY(value_of(b, o->inputs[1], "input", &x2));
    TRY(value_of(b, o->outputs[0], "output", &y));
    switch (o->opcode) {
    case MP_OP_ADD: XNN(xnn_define_add2(b->sg, lo, hi, x1, x2, y, 0), "xnn_define_add2"); break;
    case MP_OP_SUB:
        XNN(xnn_define_subtract(b->sg, lo, hi, x1, x2, y, 0), "xnn_define_subtract");
        break;
    case MP_OP_MUL:
        XNN(xnn_define_multiply2(b->sg, lo, hi, x1, x2, y, 0), "xnn_define_multiply2");
        break;
    default: XNN(xnn_define_divide(b->sg, lo, hi, x1, x2, y, 0), "xnn_define_divide"); break;
    }
    return MP_OK;
}

/* Whether input ti is quantized (*quant); if so, output to must have its type, scale and zero
 * point: XNNPACK's quantized clamp, max pooling, reshape and pad take them equal. */
static mp_status same_quant(builder *b, int32_t ti, int32_t to, bool *quant)
{
    xtype a, z;
    TRY(type_at(b, ti, "input", &a));
    TRY(type_at(b, to, "output", &z));
    *quant = is_quantized(&a);
    if (a.dt != z.dt)
        return no_equiv(b, "input '%s' and output '%s' differ in type", tname(b, ti),
                        tname(b, to));
    if (*quant && (a.scale != z.scale || a.zero_point != z.zero_point))
        return no_equiv(b, "output '%s' is quantized otherwise than input '%s' (scale %g, zero "
                        "point %d against %g, %d; XNNPACK takes them equal here)", tname(b, to),
                        tname(b, ti), (double)z.scale, (int)z.zero_point, (double)a.scale,
                        (int)a.zero_point);
    return MP_OK;
}

static mp_status build_pool(builder *b, const mp_op_info *o)
{
    int32_t ti = input_at(o, 0), to = o->outputs[0];
    const mp_tensor *in = T(b, ti), *out = T(b, to);
    int32_t kh = o->opt.filter_h, kw = o->opt.filter_w;
    if (kh < 1 || kw < 1)
        return op_fail(b, MP_ERR_FORMAT, "invalid window %dx%d", kh, kw);
    float lo = -INFINITY, hi = INFINITY;
    TRY(fused(b, o, &lo, &hi));
    uint32_t pad[4];
    TRY(window(b, o, in, out, kh, kw, 1, 1, pad));
    uint32_t x, y;
    xtype tin;
    TRY(type_at(b, ti, "input", &tin));
    if (is_quantized(&tin) && o->opcode == MP_OP_AVERAGE_POOL_2D) {
        /* this XNNPACK averages quantized values only over the whole map (global pooling) */
        if (kh != in->dims[1] || kw != in->dims[2] || out->dims[1] != 1 || out->dims[2] != 1 ||
            pad[0] || pad[1] || pad[2] || pad[3])
            return no_equiv(b, "quantized average pooling with a %dx%d window over %dx%d "
                            "(XNNPACK's takes float32 only; a window over the whole map is "
                            "its global average pooling)", kh, kw, in->dims[1], in->dims[2]);
        TRY(value_of(b, ti, "input", &x));
        TRY(value_of(b, to, "output", &y));
        XNN(xnn_define_global_average_pooling_2d(b->sg, lo, hi, x, y, 0),
            "xnn_define_global_average_pooling_2d");
        return MP_OK;
    }
    bool quant;
    TRY(same_quant(b, ti, to, &quant));
    if (kh == 1 && kw == 1) {
        /* XNNPACK refuses 1x1 windows; with stride 1 the pool is the identity */
        if (o->opt.stride_h != 1 || o->opt.stride_w != 1)
            return no_equiv(b, "1x1 window with stride %dx%d (a strided copy)", o->opt.stride_h,
                            o->opt.stride_w);
        TRY(value_of(b, ti, "input", &x));
        TRY(value_of(b, to, "output", &y));
        XNN(xnn_define_clamp(b->sg, lo, hi, x, y, 0), "xnn_define_clamp");
        return MP_OK;
    }
    TRY(value_of(b, ti, "input", &x));
    TRY(value_of(b, to, "output", &y));
    if (o->opcode == MP_OP_MAX_POOL_2D)
        XNN(xnn_define_max_pooling_2d(b->sg, pad[0], pad[1], pad[2], pad[3], (uint32_t)kh,
                                      (uint32_t)kw, (uint32_t)o->opt.stride_h,
                                      (uint32_t)o->opt.stride_w, 1, 1, lo, hi, x, y, 0),
            "xnn_define_max_pooling_2d");
    else
        XNN(xnn_define_average_pooling_2d(b->sg, pad[0], pad[1], pad[2], pad[3], (uint32_t)kh,
                                          (uint32_t)kw, (uint32_t)o->opt.stride_h,
                                          (uint32_t)o->opt.stride_w, lo, hi, x, y, 0),
            "xnn_define_average_pooling_2d");
    return MP_OK;
}

static mp_status build_unary(builder *b, const mp_op_info *o)
{
    bool quant;
    TRY(same_quant(b, input_at(o, 0), o->outputs[0], &quant));
    if (quant && o->opcode == MP_OP_LOGISTIC)
        return no_equiv(b, "quantized LOGISTIC (the peer maps it in float32 only)");
    uint32_t x, y;
    TRY(value_of(b, input_at(o, 0), "input", &x));
    TRY(value_of(b, o->outputs[0], "output", &y));
    float lo = -INFINITY, hi = INFINITY;
    switch (o->opcode) {
    case MP_OP_LOGISTIC: XNN(xnn_define_sigmoid(b->sg, x, y, 0), "xnn_define_sigmoid"); return MP_OK;
    case MP_OP_RELU: act_bounds(MP_ACT_RELU, &lo, &hi); break;
    case MP_OP_RELU6: act_bounds(MP_ACT_RELU6, &lo, &hi); break;
    default: act_bounds(MP_ACT_RELU_N1_TO_1, &lo, &hi); break;
    }
    XNN(xnn_define_clamp(b->sg, lo, hi, x, y, 0), "xnn_define_clamp");
    return MP_OK;
}

/* Float32 activations of one input this XNNPACK has a node for: HARD_SWISH, ABS, NEG, FLOOR,
 * CEIL, ROUND (banker's rounding, as TensorFlow Lite's), SQUARE, SQRT, ELU (alpha 1, as
 * TensorFlow Lite's), LEAKY_RELU (its alpha); DEPTH_TO_SPACE (TensorFlow's DCR order, as
 * TensorFlow Lite's). */
static mp_status build_float_unary(builder *b, const mp_op_info *o)
{
    int32_t ti = input_at(o, 0), to = o->outputs[0];
    xtype a, z;
    TRY(type_at(b, ti, "input", &a));
    TRY(type_at(b, to, "output", &z));
    if (is_quantized(&a) || is_quantized(&z))
        return no_equiv(b, "quantized %s (this XNNPACK has it in float32 only)",
                        mp_op_name(o->opcode));
    uint32_t x, y;
    TRY(value_of(b, ti, "input", &x));
    TRY(value_of(b, to, "output", &y));
    enum xnn_status xs;
    switch (o->opcode) {
    case MP_OP_HARD_SWISH: xs = xnn_define_hardswish(b->sg, x, y, 0); break;
    case MP_OP_ABS: xs = xnn_define_abs(b->sg, x, y, 0); break;
    case MP_OP_NEG: xs = xnn_define_negate(b->sg, x, y, 0); break;
    case MP_OP_FLOOR: xs = xnn_define_floor(b->sg, x, y, 0); break;
    case MP_OP_CEIL: xs = xnn_define_ceiling(b->sg, x, y, 0); break;
    case MP_OP_ROUND: xs = xnn_define_bankers_rounding(b->sg, x, y, 0); break;
    case MP_OP_SQUARE: xs = xnn_define_square(b->sg, x, y, 0); break;
    case MP_OP_SQRT: xs = xnn_define_square_root(b->sg, x, y, 0); break;
    case MP_OP_ELU: xs = xnn_define_elu(b->sg, 1.0f, x, y, 0); break;
    case MP_OP_LEAKY_RELU: xs = xnn_define_leaky_relu(b->sg, o->opt.alpha, x, y, 0); break;
    default: /* DEPTH_TO_SPACE */
        if (T(b, ti)->rank != 4 || o->opt.block_size < 2)
            return no_equiv(b, "input of rank %d, block size %d (XNNPACK takes NHWC and a block "
                            "of 2 or more)", T(b, ti)->rank, o->opt.block_size);
        xs = xnn_define_depth_to_space(b->sg, x, y, (uint32_t)o->opt.block_size, 0);
        break;
    }
    XNN(xs, mp_op_name(o->opcode));
    return MP_OK;
}

/* MAXIMUM, MINIMUM and SQUARED_DIFFERENCE of two float32 inputs (broadcasting as ADD's). */
static mp_status build_float_binary(builder *b, const mp_op_info *o)
{
    if (o->n_inputs != 2)
        return op_fail(b, MP_ERR_FORMAT, "expects 2 inputs");
    xtype a1, a2, z;
    TRY(type_at(b, o->inputs[0], "input", &a1));
    TRY(type_at(b, o->inputs[1], "input", &a2));
    TRY(type_at(b, o->outputs[0], "output", &z));
    if (is_quantized(&a1) || is_quantized(&a2) || is_quantized(&z))
        return no_equiv(b, "quantized %s (this XNNPACK has it in float32 only)",
                        mp_op_name(o->opcode));
    uint32_t x1, x2, y;
    TRY(value_of(b, o->inputs[0], "input", &x1));
    TRY(value_of(b, o->inputs[1], "input", &x2));
    TRY(value_of(b, o->outputs[0], "output", &y));
    enum xnn_status xs = o->opcode == MP_OP_MAXIMUM   ? xnn_define_maximum2(b->sg, x1, x2, y, 0)
                         : o->opcode == MP_OP_MINIMUM ? xnn_define_minimum2(b->sg, x1, x2, y, 0)
                                                      : xnn_define_squared_difference(b->sg, x1,
                                                                                      x2, y, 0);
    XNN(xs, mp_op_name(o->opcode));
    return MP_OK;
}

/* PRELU with a constant float32 alpha of one slope per channel ([C], [1,1,C], [1,1,1,C]) on
 * an NHWC input: XNNPACK's prelu takes the slopes as a static [C] value. */
static mp_status build_prelu(builder *b, const mp_op_info *o)
{
    if (o->n_inputs != 2)
        return op_fail(b, MP_ERR_FORMAT, "expects 2 inputs");
    int32_t ti = o->inputs[0], ta = o->inputs[1], to = o->outputs[0];
    xtype a, z;
    TRY(type_at(b, ti, "input", &a));
    TRY(type_at(b, to, "output", &z));
    const mp_tensor *in = T(b, ti), *al = ta >= 0 ? T(b, ta) : NULL;
    if (is_quantized(&a) || is_quantized(&z) || !al || al->dtype != MP_DT_FLOAT32)
        return no_equiv(b, "PRELU other than float32 (this XNNPACK's is float32 only)");
    if (in->rank != 4 || !b->known[ta] || !al->data || al->rank < 1 ||
        al->dims[al->rank - 1] != in->dims[3] || mp_tensor_elements(al) != (size_t)in->dims[3])
        return no_equiv(b, "alpha '%s' is not a constant of one slope per channel of an NHWC "
                        "input (XNNPACK's prelu takes [channels] slopes)", tname(b, ta));
    uint32_t x, slope, y;
    TRY(value_of(b, ti, "input", &x));
    size_t c = (size_t)in->dims[3];
    xtype f = {.dt = xnn_datatype_fp32};
    const void *data = al->data;
    if (!al->is_const) { /* folded by the engine: copied once */
        void *cp = keep_copy(b, c * sizeof(float));
        if (!cp)
            return op_fail(b, MP_ERR_NOMEM, "out of memory copying '%s'", tname(b, ta));
        memcpy(cp, al->data, c * sizeof(float));
        data = cp;
    }
    enum xnn_status xs = define_typed(b, &f, 1, &c, data, XNN_INVALID_VALUE_ID, 0, &slope);
    if (xs != xnn_status_success)
        return xnn_refused(b, "defining the slopes", xs);
    TRY(value_of(b, to, "output", &y));
    XNN(xnn_define_prelu(b->sg, x, slope, y, 0), "xnn_define_prelu");
    return MP_OK;
}

/* TRANSPOSE_CONV (inputs output_shape, weights, input, bias) and MediaPipe's
 * Convolution2DTransposeBias (input, weights, bias), float32 with constant weights: XNNPACK's
 * deconvolution, weights OHWI as TensorFlow Lite's. The padding before is TensorFlow Lite's
 * (transpose_conv.cc: that of the convolution it transposes, from the output size) or
 * MediaPipe's (half the total SAME padding); after it, the padding and adjustment that make
 * XNNPACK's output size stride * (in - 1) + adjustment + k - before - after the output's. */
static mp_status build_transpose_conv(builder *b, const mp_op_info *o)
{
    bool mp = o->opcode == MP_OP_TRANSPOSE_CONV_BIAS;
    int32_t ti = mp ? input_at(o, 0) : input_at(o, 2), tw = input_at(o, 1);
    int32_t tb = mp ? input_at(o, 2) : input_at(o, 3), to = o->outputs[0];
    if (ti < 0 || tw < 0)
        return op_fail(b, MP_ERR_FORMAT, "input or weights omitted");
    xtype tin;
    TRY(type_at(b, ti, "input", &tin));
    if (is_quantized(&tin))
        return no_equiv(b, "a quantized transposed convolution (XNNPACK's takes one weight "
                        "scale and requantizes in float; memprof follows TensorFlow Lite's "
                        "integer kernel)");
    const mp_tensor *in = T(b, ti), *w = T(b, tw), *out = T(b, to);
    if (in->rank != 4 || w->rank != 4 || out->rank != 4)
        return no_equiv(b, "input, weights or output not of rank 4");
    int32_t kh = w->dims[1], kw = w->dims[2], sh = o->opt.stride_h, sw = o->opt.stride_w;
    int32_t ih = in->dims[1], iw = in->dims[2], oh = out->dims[1], ow = out->dims[2];
    uint32_t top, left, bottom, right, adj_h, adj_w;
    int32_t k[2] = {kh, kw}, st[2] = {sh, sw}, is[2] = {ih, iw}, os[2] = {oh, ow};
    uint32_t *before[2] = {&top, &left}, *after[2] = {&bottom, &right}, *adj[2] = {&adj_h, &adj_w};
    for (int a = 0; a < 2; a++) {
        int64_t pre;
        if (mp) {
            int64_t total = o->opt.padding == MP_PAD_SAME ? k[a] - (is[a] - 1) % st[a] - 1 : 0;
            pre = (total > 0 ? total : 0) / 2;
        } else {
            int64_t conv = o->opt.padding == MP_PAD_SAME ? ((int64_t)os[a] + st[a] - 1) / st[a]
                                                         : ((int64_t)os[a] - k[a] + st[a]) / st[a];
            int64_t total = (conv - 1) * st[a] + k[a] - os[a];
            pre = (total > 0 ? total : 0) / 2;
        }
        int64_t x = (int64_t)st[a] * (is[a] - 1) + k[a] - pre - os[a];
        *before[a] = (uint32_t)pre;
        *after[a] = x >= 0 ? (uint32_t)x : 0;
        *adj[a] = x >= 0 ? 0 : (uint32_t)-x;
        if (x < 0 && -x >= st[a])
            return no_equiv(b, "an output %d larger than the deconvolution gives (adjustment "
                            "%lld, XNNPACK takes less than the stride %d)", os[a],
                            (long long)-x, st[a]);
    }
    float lo = -INFINITY, hi = INFINITY;
    TRY(fused(b, o, &lo, &hi));
    uint32_t x, wid, bias, y;
    TRY(value_of(b, ti, "input", &x));
    TRY(weight_of(b, tw, "weights", &tin, NULL, 0, &wid));
    TRY(weight_of(b, tb, "bias", &tin, NULL, (size_t)w->dims[0], &bias));
    TRY(value_of(b, to, "output", &y));
    XNN(xnn_define_deconvolution_2d(b->sg, top, right, bottom, left, adj_h, adj_w, (uint32_t)kh,
                                    (uint32_t)kw, (uint32_t)sh, (uint32_t)sw, 1, 1, 1,
                                    (size_t)w->dims[3], (size_t)w->dims[0], lo, hi, x, wid, bias,
                                    y, 0),
        "xnn_define_deconvolution_2d");
    return MP_OK;
}

static mp_status build_softmax(builder *b, const mp_op_info *o)
{
    if (o->opt.beta != 1.0f)
        return no_equiv(b, "beta %g (XNNPACK's softmax has beta 1)", (double)o->opt.beta);
    int32_t ti = input_at(o, 0), to = o->outputs[0];
    xtype a, z;
    TRY(type_at(b, ti, "input", &a));
    TRY(type_at(b, to, "output", &z));
    uint32_t x, y;
    TRY(value_of(b, ti, "input", &x));
    TRY(value_of(b, to, "output", &y));
    if (!is_quantized(&a) && !is_quantized(&z)) {
        XNN(xnn_define_softmax(b->sg, x, y, 0), "xnn_define_softmax");
        return MP_OK;
    }
    if (!is_quantized(&a) || !is_quantized(&z))
        return no_equiv(b, "a softmax from %s to %s values", is_quantized(&a) ? "quantized" : "float32",
                        is_quantized(&z) ? "quantized" : "float32");
    /* This XNNPACK's softmax takes float32 only: dequantized, softmax in float32, quantized
     * again, by its own nodes (within a step of TensorFlow Lite's integer softmax). */
    const mp_tensor *in = T(b, ti);
    size_t dims[XNN_MAX_TENSOR_DIMS];
    for (int32_t d = 0; d < in->rank && d < XNN_MAX_TENSOR_DIMS; d++)
        dims[d] = (size_t)in->dims[d];
    xtype f = {.dt = xnn_datatype_fp32};
    uint32_t xf, yf;
    TRY(helper_value(b, &f, in->rank, dims, &xf));
    TRY(helper_value(b, &f, in->rank, dims, &yf));
    XNN(xnn_define_convert(b->sg, x, xf, 0), "xnn_define_convert");
    XNN(xnn_define_softmax(b->sg, xf, yf, 0), "xnn_define_softmax");
    XNN(xnn_define_convert(b->sg, yf, y, 0), "xnn_define_convert");
    return MP_OK;
}

/* QUANTIZE (float32 to int8 or uint8) and DEQUANTIZE (back): XNNPACK's convert. */
static mp_status build_convert(builder *b, const mp_op_info *o)
{
    int32_t ti = input_at(o, 0), to = o->outputs[0];
    xtype a, z;
    TRY(type_at(b, ti, "input", &a));
    TRY(type_at(b, to, "output", &z));
    bool a8 = a.dt == xnn_datatype_qint8 || a.dt == xnn_datatype_quint8;
    bool z8 = z.dt == xnn_datatype_qint8 || z.dt == xnn_datatype_quint8;
    if (!((a.dt == xnn_datatype_fp32 && z8) || (a8 && z.dt == xnn_datatype_fp32)))
        return no_equiv(b, "'%s' (%s) to '%s' (%s): XNNPACK's convert takes float32 to int8 or "
                        "uint8 and back only", tname(b, ti), mp_dtype_name(T(b, ti)->dtype),
                        tname(b, to), mp_dtype_name(T(b, to)->dtype));
    uint32_t x, y;
    TRY(value_of(b, ti, "input", &x));
    TRY(value_of(b, to, "output", &y));
    XNN(xnn_define_convert(b->sg, x, y, 0), "xnn_define_convert");
    return MP_OK;
}

/* RESHAPE, SQUEEZE, EXPAND_DIMS: the output's resolved shape, statically. */
static mp_status build_reshape(builder *b, const mp_op_info *o)
{
    const mp_tensor *out = T(b, o->outputs[0]);
    if (out->rank > XNN_MAX_TENSOR_DIMS)
        return no_equiv(b, "output rank %d", out->rank);
    size_t dims[XNN_MAX_TENSOR_DIMS];
    for (int32_t d = 0; d < out->rank; d++)
        dims[d] = (size_t)out->dims[d];
    bool quant;
    TRY(same_quant(b, input_at(o, 0), o->outputs[0], &quant));
    uint32_t x, y;
    TRY(value_of(b, input_at(o, 0), "input", &x));
    TRY(value_of(b, o->outputs[0], "output", &y));
    XNN(xnn_define_static_reshape(b->sg, (size_t)out->rank, dims, x, y, 0),
        "xnn_define_static_reshape");
    return MP_OK;
}

static mp_status build_pad(builder *b, const mp_op_info *o)
{
    int32_t ti = input_at(o, 0), tp = input_at(o, 1), tv = input_at(o, 2);
    if (ti < 0 || tp < 0)
        return op_fail(b, MP_ERR_FORMAT, "input or paddings omitted");
    const mp_tensor *in = T(b, ti), *pads = T(b, tp);
    if (!b->known[tp] || !mp_dtype_is_index(pads->dtype))
        return no_equiv(b, "paddings '%s' are computed while running", tname(b, tp));
    if (in->rank > XNN_MAX_TENSOR_DIMS || mp_tensor_elements(pads) != (size_t)in->rank * 2)
        return no_equiv(b, "paddings '%s' for rank %d", tname(b, tp), in->rank);
    float value = 0.0f; /* a real value: XNNPACK quantizes it for quantized values */
    bool quant;
    TRY(same_quant(b, ti, o->outputs[0], &quant));
    if (quant && o->opcode == MP_OP_PADV2 && tv >= 0)
        return no_equiv(b, "quantized PADV2 with a padding value (the peer maps it in float32)");
    if (o->opcode == MP_OP_PADV2 && tv >= 0) {
        const mp_tensor *v = T(b, tv);
        if (!b->known[tv] || v->dtype != MP_DT_FLOAT32 || mp_tensor_elements(v) != 1)
            return no_equiv(b, "padding value '%s' must be a constant float32 scalar",
                            tname(b, tv));
        memcpy(&value, v->data, sizeof value);
    }
    size_t pre[XNN_MAX_TENSOR_DIMS] = {0}, post[XNN_MAX_TENSOR_DIMS] = {0};
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t a = mp_tensor_index_at(pads, (size_t)d * 2), z = mp_tensor_index_at(pads, (size_t)d * 2 + 1);
        if (a < 0 || z < 0)
            return no_equiv(b, "negative paddings");
        pre[d] = (size_t)a;
        post[d] = (size_t)z;
    }
    uint32_t x, y;
    TRY(value_of(b, ti, "input", &x));
    TRY(value_of(b, o->outputs[0], "output", &y));
    XNN(xnn_define_static_constant_pad(b->sg, pre, post, value, x, y, 0),
        "xnn_define_static_constant_pad");
    return MP_OK;
}

/* MEAN over height and width of NHWC: global average pooling (to [N,1,1,C]; without
 * keep_dims, a static reshape to [N,C] follows through a helper value). */
static mp_status build_mean(builder *b, const mp_op_info *o)
{
    int32_t ti = input_at(o, 0), ta = input_at(o, 1), to = o->outputs[0];
    if (ti < 0 || ta < 0)
        return op_fail(b, MP_ERR_FORMAT, "input or axes omitted");
    const mp_tensor *in = T(b, ti), *axes = T(b, ta), *out = T(b, to);
    if (!b->known[ta] || !mp_dtype_is_index(axes->dtype))
        return no_equiv(b, "axes computed while running");
    bool red[MP_MAX_RANK] = {false};
    for (size_t k = 0; k < mp_tensor_elements(axes); k++) {
        int64_t a = mp_tensor_index_at(axes, k);
        if (a < -in->rank || a >= in->rank)
            return op_fail(b, MP_ERR_SHAPE, "axis %lld out of range", (long long)a);
        red[a < 0 ? a + in->rank : a] = true;
    }
    if (in->rank != 4 || red[0] || !red[1] || !red[2] || red[3])
        return no_equiv(b, "a mean other than over height and width of a 4D tensor (only "
                           "global average pooling is expressible)");
    uint32_t x, y;
    TRY(value_of(b, ti, "input", &x));
    if (o->opt.keep_dims) {
        TRY(value_of(b, to, "output", &y));
        XNN(xnn_define_global_average_pooling_2d(b->sg, -INFINITY, INFINITY, x, y, 0),
            "xnn_define_global_average_pooling_2d");
        return MP_OK;
    }
    size_t mid_dims[4] = {(size_t)in->dims[0], 1, 1, (size_t)in->dims[3]};
    uint32_t mid;
    xtype tout;
    TRY(type_at(b, to, "output", &tout));
    TRY(helper_value(b, &tout, 4, mid_dims, &mid));
    TRY(value_of(b, to, "output", &y));
    XNN(xnn_define_global_average_pooling_2d(b->sg, -INFINITY, INFINITY, x, mid, 0),
        "xnn_define_global_average_pooling_2d");
    size_t dims[XNN_MAX_TENSOR_DIMS];
    for (int32_t d = 0; d < out->rank && d < XNN_MAX_TENSOR_DIMS; d++)
        dims[d] = (size_t)out->dims[d];
    XNN(xnn_define_static_reshape(b->sg, (size_t)out->rank, dims, mid, y, 0),
        "xnn_define_static_reshape");
    return MP_OK;
}

static mp_status build_resize(builder *b, const mp_op_info *o)
{
    int32_t ti = input_at(o, 0), to = o->outputs[0];
    const mp_tensor *in = T(b, ti), *out = T(b, to);
    if (in->rank != 4 || out->rank != 4)
        return no_equiv(b, "input must be NHWC (rank 4)");
    if (o->opt.align_corners && o->opt.half_pixel_centers)
        return no_equiv(b, "align_corners together with half_pixel_centers");
    uint32_t flags = o->opt.align_corners        ? XNN_FLAG_ALIGN_CORNERS
                     : o->opt.half_pixel_centers ? 0
                                                 : XNN_FLAG_TENSORFLOW_LEGACY_MODE;
    uint32_t x, y;
    TRY(value_of(b, ti, "input", &x));
    TRY(value_of(b, to, "output", &y));
    XNN(xnn_define_static_resize_bilinear_2d(b->sg, (size_t)out->dims[1], (size_t)out->dims[2],
                                             x, y, flags),
        "xnn_define_static_resize_bilinear_2d");
    return MP_OK;
}

static mp_status build_op(builder *b, const mp_op_info *o)
{
    if (o->n_outputs != 1 || o->outputs[0] < 0)
        return no_equiv(b, "%d outputs", o->n_outputs);
    switch (o->opcode) {
    case MP_OP_CONV_2D: return build_conv(b, o, false);
    case MP_OP_DEPTHWISE_CONV_2D: return build_conv(b, o, true);
    case MP_OP_FULLY_CONNECTED: return build_fc(b, o);
    case MP_OP_ADD: case MP_OP_SUB: case MP_OP_MUL: case MP_OP_DIV: return build_binary(b, o);
    case MP_OP_AVERAGE_POOL_2D: case MP_OP_MAX_POOL_2D: return build_pool(b, o);
    case MP_OP_LOGISTIC: case MP_OP_RELU: case MP_OP_RELU6: case MP_OP_RELU_N1_TO_1:
        return build_unary(b, o);
    case MP_OP_SOFTMAX: return build_softmax(b, o);
    case MP_OP_RESHAPE: case MP_OP_SQUEEZE: case MP_OP_EXPAND_DIMS: return build_reshape(b, o);
    case MP_OP_PAD: case MP_OP_PADV2: return build_pad(b, o);
    case MP_OP_MEAN: return build_mean(b, o);
    case MP_OP_RESIZE_BILINEAR: return build_resize(b, o);
    case MP_OP_QUANTIZE: case MP_OP_DEQUANTIZE: return build_convert(b, o);
    case MP_OP_HARD_SWISH: case MP_OP_ABS: case MP_OP_NEG: case MP_OP_FLOOR: case MP_OP_CEIL:
    case MP_OP_ROUND: case MP_OP_SQUARE: case MP_OP_SQRT: case MP_OP_ELU: case MP_OP_LEAKY_RELU:
    case MP_OP_DEPTH_TO_SPACE:
        return build_float_unary(b, o);
    case MP_OP_MAXIMUM: case MP_OP_MINIMUM: case MP_OP_SQUARED_DIFFERENCE:
        return build_float_binary(b, o);
    case MP_OP_PRELU: return build_prelu(b, o);
    case MP_OP_TRANSPOSE_CONV: case MP_OP_TRANSPOSE_CONV_BIAS: return build_transpose_conv(b, o);
    default: return no_equiv(b, NULL);
    }
}

/* Which operators the engine computed at prepare: those that read shapes only, or whose
 * inputs are all constants or outputs of such operators (the rule of engine/session.c). */
static void mark_folded(builder *b)
{
    const mp_model *m = b->m;
    for (int32_t t = 0; t < m->n_tensors; t++)
        b->known[t] = m->tensors[t].data != NULL;
    for (int32_t i = 0; i < m->n_ops; i++) {
        const mp_op_info *o = &m->ops[i];
        const mp_kernel *k = mp_kernel_find(o->opcode);
        bool all = true;
        for (int32_t j = 0; j < o->n_inputs; j++)
            if (o->inputs[j] >= 0 && !b->known[o->inputs[j]])
                all = false;
        b->folded[i] = (k && k->reads_shapes_only) || all;
        if (!b->folded[i])
            continue;
        for (int32_t j = 0; j < o->n_outputs; j++) {
            int32_t t = o->outputs[j];
            /* a value the session did not compute cannot be used as static data */
            const mp_tensor *x = t >= 0 ? T(b, t) : NULL;
            if (x && x->data)
                b->known[t] = true;
        }
    }
}

mp_status mp_xnn_peer_build(mp_xnn_peer *p, const mp_session *s, xnn_subgraph_t *sg_out,
                            mp_error *err)
{
    *sg_out = NULL;
    const mp_model *m = mp_session_model(s);
    if (!m)
        return mp_fail(err, MP_ERR_ARG, "XNNPACK peer: the session has no model");
    builder b = {.p = p, .s = s, .m = m, .err = err, .op = -1};
    size_t nt = (size_t)m->n_tensors + 1, no = (size_t)m->n_ops + 1;
    b.vid = mp_xc_calloc(nt, sizeof(uint32_t));
    b.known = mp_xc_calloc(nt, sizeof(bool));
    b.folded = mp_xc_calloc(no, sizeof(bool));
    b.role = mp_xc_calloc(nt, sizeof(int8_t));
    b.ext_id = mp_xc_calloc(nt, sizeof(uint32_t));
    p->in = mp_xc_calloc((size_t)m->n_inputs + 1, sizeof(peer_io));
    p->out = mp_xc_calloc((size_t)m->n_outputs + 1, sizeof(peer_io));
    mp_status st = MP_OK;
    if (!b.vid || !b.known || !b.folded || !b.role || !b.ext_id || !p->in || !p->out) {
        st = mp_fail(err, MP_ERR_NOMEM, "XNNPACK peer: out of memory");
        goto done;
    }
    for (size_t t = 0; t < nt; t++)
        b.vid[t] = XNN_INVALID_VALUE_ID;

    /* external ids: inputs first, then outputs (a tensor that is both keeps one id) */
    uint32_t next_ext = 0;
    for (int32_t i = 0; i < m->n_inputs; i++) {
        int32_t t = m->inputs[i];
        if (!b.role[t])
            b.ext_id[t] = next_ext++;
        b.role[t] |= 1;
        p->in[i] = (peer_io){.tensor = t, .id = b.ext_id[t], .bytes = T(&b, t)->bytes};
    }
    for (int32_t i = 0; i < m->n_outputs; i++) {
        int32_t t = m->outputs[i];
        if (!b.role[t])
            b.ext_id[t] = next_ext++;
        b.role[t] |= 2;
        p->out[i] = (peer_io){.tensor = t, .id = b.ext_id[t], .bytes = T(&b, t)->bytes};
    }
    p->n_in = m->n_inputs;
    p->n_out = m->n_outputs;

    enum xnn_status xs = xnn_create_subgraph(next_ext, 0, &b.sg);
    xs = mp_xnn_created(xs, b.sg);
    if (xs != xnn_status_success) {
        st = mp_fail(err, mp_xnn_status(xs), "%s: XNNPACK peer: xnn_create_subgraph: %s (status %d)",
                     m->path, mp_xnn_status_text(xs), (int)xs);
        goto done;
    }
    mark_folded(&b);
    for (int32_t i = 0; i < m->n_ops && st == MP_OK; i++) {
        if (b.folded[i])
            continue;
        b.op = i;
        st = build_op(&b, &m->ops[i]);
    }
    b.op = -1;
    /* every model input and output is an external value, used or not */
    for (int32_t i = 0; i < m->n_inputs + m->n_outputs && st == MP_OK; i++) {
        int32_t t = i < m->n_inputs ? m->inputs[i] : m->outputs[i - m->n_inputs];
        if (b.vid[t] != XNN_INVALID_VALUE_ID)
            continue;
        const mp_tensor *x = T(&b, t);
        const mp_quant *mq = &x->info->quant;
        xtype q = {.dt = xnn_datatype_fp32};
        if (mq->count == 1 && (x->dtype == MP_DT_INT8 || x->dtype == MP_DT_UINT8))
            q = (xtype){.dt = x->dtype == MP_DT_INT8 ? xnn_datatype_qint8 : xnn_datatype_quint8,
                        .scale = mq->scale[0],
                        .zero_point = (int32_t)(mq->zero_point ? mq->zero_point[0] : 0)};
        else if (x->dtype != MP_DT_FLOAT32 || mq->count != 0)
            q.dt = xnn_datatype_invalid;
        if (q.dt == xnn_datatype_invalid || b.known[t]) {
            st = mp_fail(err, MP_ERR_UNSUPPORTED,
                         "%s: XNNPACK peer: model %s '%s' is %s%s (float32, or int8 or uint8 "
                         "quantized per tensor, values only)", m->path,
                         i < m->n_inputs ? "input" : "output", tname(&b, t),
                         mp_dtype_name(x->dtype), b.known[t] ? " and constant" : "");
            break;
        }
        size_t dims[XNN_MAX_TENSOR_DIMS];
        for (int32_t d = 0; d < x->rank && d < XNN_MAX_TENSOR_DIMS; d++)
            dims[d] = (size_t)x->dims[d];
        uint32_t id;
        xs = define_typed(&b, &q, (size_t)x->rank, dims, NULL, b.ext_id[t],
                          (b.role[t] & 1 ? XNN_VALUE_FLAG_EXTERNAL_INPUT : 0) |
                              (b.role[t] & 2 ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : 0),
                          &id);
        if (xs != xnn_status_success)
            st = mp_fail(err, mp_xnn_status(xs), "%s: XNNPACK peer: cannot define '%s': %s (status %d)",
                         m->path, tname(&b, t), mp_xnn_status_text(xs), (int)xs);
        else
            b.vid[t] = id;
    }
    if (st == MP_OK) {
        *sg_out = b.sg;
        b.sg = NULL;
    }
done:
    if (b.sg)
        xnn_delete_subgraph(b.sg);
    free(b.vid);
    free(b.known);
    free(b.folded);
    free(b.role);
    free(b.ext_id);
    return st;
}
