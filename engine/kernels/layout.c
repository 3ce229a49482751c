/* Kernels: layout operators that only move elements, never compute on them (RESHAPE,
 * SQUEEZE, EXPAND_DIMS, CONCATENATION, PAD / PADV2, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND,
 * SPLIT, SPLIT_V). They work on any dtype with a fixed element size (float32, int32, int64,
 * uint8, int8, int16, bool, ...) by copying bytes; only CONCATENATION's fused activation
 * (float32 only) and its requantization of 8-bit inputs look at values. Shapes that depend on
 * the values of an input (RESHAPE's shape tensor, EXPAND_DIMS's and SPLIT's axis, paddings,
 * block shapes, crops, size_splits) come back MP_ERR_DEFERRED while those values are
 * unknown. PAD uses XNNPACK's constant_pad_nd (single pass, multi-threaded) when it can,
 * plain C otherwise.
 *
 * Quantized tensors, as TensorFlow Lite: PAD pads with the output's zero point, PADV2 with
 * its constant, which must have the output's scale and zero point; SPACE_TO_BATCH_ND and
 * BATCH_TO_SPACE_ND keep the input's parameters (the output must have them) and pad with the
 * zero point; CONCATENATION of uint8 / int8 copies an input whose scale and zero point are
 * the output's and requantizes any other as reference_ops::ConcatenationWithScaling, in
 * float: round(q * s + b) + zp_out, s = in_scale * (1 / out_scale), b = -zp_in * s, rounding
 * half away from zero, saturated (TensorFlow Lite refuses int8 inputs whose parameters differ
 * from the output's; memprof applies the uint8 formula to them); int16 inputs (zero points 0,
 * the reader checks) are copied whatever their scales, as TensorFlow Lite's concatenation.cc
 * does (it checks only the zero points).
 *
 * RESHAPE, SQUEEZE and EXPAND_DIMS also take string tensors, as reshape.cc (and squeeze.cc,
 * expand_dims.cc) do: TensorFlow Lite's string buffer (strings.h) holds one string per element
 * whatever the shape, so the output is the input's bytes copied; the output's size being
 * known only from the input's contents, the node is deferred to the run (mp_node_in_run),
 * its input's buffer checked there. */
#include "engine/kernels/kernel.h"
#include "engine/kernels/quant_layout.h"
#include "engine/kernels/quant_math.h"
#include "engine/kernels/strings.h"
#include "engine/session_resources.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <xnnpack.h>

/* ---- shared helpers -------------------------------------------------------------------- */

#define SHAPE_STR(t, buf) mp_shape_str((t)->rank, (t)->dims, (buf), sizeof(buf))

/* "[2,-1,3]" for a list of 64-bit values (shapes requested before they are checked). */
static const char *fmt_list(int32_t count, const int64_t *v, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int32_t i = 0; i < count && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, i ? ",%lld" : "%lld", (long long)v[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
    return buf;
}

/* Copy the whole input to the output unless a memory planner made them share storage. */
static mp_status run_copy(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if (in->bytes != out->bytes)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' has %zu bytes, output '%s' %zu",
                            mp_tname(in), in->bytes, mp_tname(out), out->bytes);
    if (in->data != out->data && in->bytes)
        memcpy(out->data, in->data, in->bytes);
    return MP_OK;
}

/* The end of their infer, the output's shape set: a string output gets the input's bytes,
 * known while running, once the input's buffer is checked. */
static mp_status copy_string_bytes(mp_node *n)
{
    const mp_tensor *in = n->in[0];
    if (in->dtype != MP_DT_STRING)
        return MP_OK;
    if (!mp_node_in_run(n) || !in->data)
        return MP_ERR_DEFERRED;
    mp_status st = mp_str_check(n, in);
    if (st == MP_OK)
        n->out[0]->bytes = in->bytes;
    return st;
}

/* The byte pattern of the padding value: zero, or the zero point of a quantized integer
 * output (TFLite pads quantized tensors with the zero point, i.e. real value 0; infer checked
 * that it fits the dtype). */
static void zero_pad_value(const mp_tensor *out, uint8_t value[8])
{
    memset(value, 0, 8);
    if (!out->info)
        return;
    const mp_quant *q = &out->info->quant;
    if (q->count >= 1 && q->zero_point) {
        if (out->dtype == MP_DT_UINT8) {
            value[0] = (uint8_t)q->zero_point[0];
        } else if (out->dtype == MP_DT_INT8) {
            value[0] = (uint8_t)(int8_t)q->zero_point[0];
        } else if (out->dtype == MP_DT_INT16) {
            int16_t z = (int16_t)q->zero_point[0];
            memcpy(value, &z, sizeof z);
        }
    }
}

/* A quantized integer output padded with its zero point: the zero point must be one of the
 * dtype's values (TFLite checks it too). */
static mp_status check_pad_zero_point(mp_node *n, const mp_tensor *out)
{
    float scale;
    int32_t zp, lo, hi;
    if (!mp_dtype_is_quantized_int(out->dtype))
        return MP_OK;
    mp_status st = mp_node_tensor_qparams(n, out, &scale, &zp);
    if (st != MP_OK)
        return st;
    mp_quant_dtype_range(out->dtype, &lo, &hi);
    if (zp < lo || zp > hi)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "%s output '%s' has zero point %d outside [%d, %d]: cannot pad with it",
                            mp_dtype_name(out->dtype), mp_tname(out), (int)zp, (int)lo, (int)hi);
    return MP_OK;
}

/* Fill `count` elements of `es` bytes with the pattern `value`. */
static void fill_pattern(uint8_t *dst, size_t count, size_t es, const uint8_t *value)
{
    bool uniform = true;
    for (size_t i = 1; i < es; i++)
        uniform = uniform && value[i] == value[0];
    if (uniform) { /* every byte equal: memset does it */
        memset(dst, value[0], count * es);
        return;
    }
    for (size_t i = 0; i < count; i++, dst += es)
        memcpy(dst, value, es);
}

/* ---- RESHAPE ---------------------------------------------------------------------------- */

static mp_status reshape_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 2, 1u << 1);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    const mp_tensor *shp = n->n_in > 1 ? n->in[1] : NULL;
    mp_tensor *out = n->out[0];
    if ((st = mp_node_check_same_dtype_or_string(n, in, out)) != MP_OK)
        return st;

    size_t in_count = mp_tensor_elements(in);
    int64_t want[MP_MAX_RANK];
    int32_t rank = 0;
    /* TFLite takes the shape from input 1 when it is a vector (int32; int64 accepted too),
     * else from the new_shape option. Old converters emit an empty shape vector next to the
     * option: TFLite would then make a scalar, which only works for one element; we use
     * the option instead whenever the scalar cannot be right. */
    bool from_tensor = shp && shp->rank == 1 && mp_dtype_is_index(shp->dtype);
    if (from_tensor && shp->dims[0] == 0 && in_count != 1 && n->opt->has_new_shape)
        from_tensor = false;
    if (from_tensor) {
        if (shp->dims[0] > MP_MAX_RANK)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                                "shape tensor '%s' asks for rank %d (max %d)", mp_tname(shp),
                                shp->dims[0], MP_MAX_RANK);
        if (!shp->value_known || !shp->data)
            return MP_ERR_DEFERRED;
        rank = shp->dims[0];
        for (int32_t i = 0; i < rank; i++)
            want[i] = mp_tensor_index_at(shp, (size_t)i);
    } else if (n->opt->has_new_shape) {
        rank = n->opt->n_new_shape;
        if (rank < 0 || rank > MP_MAX_RANK)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "new_shape has rank %d (max %d)", rank,
                                MP_MAX_RANK);
        /* legacy converters wrote new_shape [0] for a scalar */
        if (rank == 1 && n->opt->new_shape[0] == 0)
            rank = 0;
        for (int32_t i = 0; i < rank; i++)
            want[i] = n->opt->new_shape[i];
    } /* else neither: TFLite's default is a scalar */

    /* one -1 is inferred; zero dims are allowed (then they do not enter the inference) */
    int32_t stretch = -1;
    size_t known = 1, known_nonzero = 1, in_nonzero = 1;
    for (int32_t i = 0; i < in->rank; i++)
        if (in->dims[i])
            in_nonzero *= (size_t)in->dims[i];
    char b1[96], b2[160];
    fmt_list(rank, want, b2, sizeof b2);
    for (int32_t i = 0; i < rank; i++) {
        if (want[i] == -1) {
            if (stretch >= 0)
                return mp_node_fail(n, MP_ERR_SHAPE, "new shape %s for '%s' has several -1", b2,
                                    mp_tname(out));
            stretch = i;
            continue;
        }
        if (want[i] < 0 || want[i] > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "new shape %s for '%s' has an invalid dimension",
                                b2, mp_tname(out));
        if (want[i]) {
            if (known_nonzero > SIZE_MAX / (size_t)want[i])
                return mp_node_fail(n, MP_ERR_SHAPE, "new shape %s overflows", b2);
            known_nonzero *= (size_t)want[i];
        }
        known = want[i] ? known * (size_t)want[i] : 0;
    }
    int32_t dims[MP_MAX_RANK];
    for (int32_t i = 0; i < rank; i++)
        dims[i] = (int32_t)want[i];
    size_t out_count = known;
    if (stretch >= 0) {
        size_t v = (in_count == 0 && known != 0) ? 0 : in_nonzero / known_nonzero;
        if (v > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "new shape %s: inferred dimension too large", b2);
        dims[stretch] = (int32_t)v;
        out_count = known * v;
    }
    if (out_count != in_count)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "cannot reshape '%s' %s (%zu elements) to %s (%zu elements)",
                            mp_tname(in), SHAPE_STR(in, b1), in_count, b2, out_count);
    if (!mp_tensor_set_shape(out, rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return copy_string_bytes(n);
}

/* ---- SQUEEZE ---------------------------------------------------------------------------- */

static mp_status squeeze_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, 1, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    if ((st = mp_node_check_same_dtype_or_string(n, in, out)) != MP_OK)
        return st;
    bool drop[MP_MAX_RANK] = {false};
    char b[96];
    int32_t nsq = n->opt->n_squeeze_dims;
    if (nsq < 0 || nsq > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_FORMAT, "squeeze_dims has %d entries", nsq);
    if (nsq == 0) {
        for (int32_t i = 0; i < in->rank; i++)
            drop[i] = in->dims[i] == 1;
    }
    for (int32_t j = 0; j < nsq; j++) {
        int32_t d = n->opt->squeeze_dims[j];
        if (d < -in->rank || d >= in->rank)
            return mp_node_fail(n, MP_ERR_SHAPE, "squeeze dimension %d out of range for '%s' %s", d,
                                mp_tname(in), SHAPE_STR(in, b));
        if (d < 0)
            d += in->rank;
        if (in->dims[d] != 1)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "cannot squeeze dimension %d of '%s' %s: its size is not 1", d,
                                mp_tname(in), SHAPE_STR(in, b));
        drop[d] = true;
    }
    int32_t dims[MP_MAX_RANK], rank = 0;
    for (int32_t i = 0; i < in->rank; i++)
        if (!drop[i])
            dims[rank++] = in->dims[i];
    if (!mp_tensor_set_shape(out, rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return copy_string_bytes(n);
}

/* ---- EXPAND_DIMS ------------------------------------------------------------------------ */

static mp_status expand_dims_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *ax = n->in[1];
    mp_tensor *out = n->out[0];
    if ((st = mp_node_check_same_dtype_or_string(n, in, out)) != MP_OK)
        return st;
    char b[96];
    if (!mp_dtype_is_index(ax->dtype) || mp_tensor_elements(ax) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis '%s' must be one int32/int64 value, is %s %s",
                            mp_tname(ax), mp_dtype_name(ax->dtype), SHAPE_STR(ax, b));
    if (in->rank + 1 > MP_MAX_RANK)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "'%s' %s: output rank exceeds %d", mp_tname(in),
                            SHAPE_STR(in, b), MP_MAX_RANK);
    if (!ax->value_known || !ax->data)
        return MP_ERR_DEFERRED;
    int64_t axis = mp_tensor_index_at(ax, 0);
    if (axis < -(int64_t)in->rank - 1 || axis > in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %lld out of range for '%s' %s", (long long)axis,
                            mp_tname(in), SHAPE_STR(in, b));
    if (axis < 0)
        axis += in->rank + 1;
    int32_t dims[MP_MAX_RANK], rank = 0;
    for (int32_t i = 0; i <= in->rank; i++) {
        if (i == axis)
            dims[rank++] = 1;
        if (i < in->rank)
            dims[rank++] = in->dims[i];
    }
    if (!mp_tensor_set_shape(out, rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return copy_string_bytes(n);
}

/* ---- CONCATENATION ---------------------------------------------------------------------- */

static mp_status concat_axis(mp_node *n, int32_t rank, int32_t *axis)
{
    int32_t a = n->opt->axis;
    if (a < -rank || a >= rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %d out of range for rank %d", a, rank);
    *axis = a < 0 ? a + rank : a;
    return MP_OK;
}

/* The requantization of one input to the output (reference ConcatenationWithScaling). */
typedef struct concat_rq {
    bool copy;              /* same scale and zero point: the bytes are copied */
    float scale, bias;      /* in_scale * (1 / out_scale), -zp_in * scale */
    int32_t out_zp, lo, hi;
} concat_rq;

static mp_status concat_rq_init(mp_node *n, const mp_tensor *in, concat_rq *r)
{
    const mp_tensor *out = n->out[0];
    float in_scale, out_scale;
    int32_t in_zp;
    r->copy = true;
    if (!mp_dtype_is_quantized_int(out->dtype))
        return MP_OK;
    mp_status st = mp_node_tensor_qparams(n, in, &in_scale, &in_zp);
    if (st == MP_OK)
        st = mp_node_tensor_qparams(n, out, &out_scale, &r->out_zp);
    if (st != MP_OK || (in_scale == out_scale && in_zp == r->out_zp))
        return st;
    if (out->dtype == MP_DT_INT16) /* concatenation.cc: int16 copied whatever the scales */
        return MP_OK;
    r->copy = false;
    r->scale = in_scale * (1.0f / out_scale);
    r->bias = (float)-in_zp * r->scale;
    mp_quant_dtype_range(out->dtype, &r->lo, &r->hi);
    if (!isfinite(r->scale) || !isfinite(r->bias))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "cannot requantize '%s' (scale %g) to '%s' (scale %g): the ratio is "
                            "not finite", mp_tname(in), (double)in_scale, mp_tname(out),
                            (double)out_scale);
    return MP_OK;
}

/* Every input of a quantized concatenation can be brought to the output's parameters. */
static mp_status concat_check_quant(mp_node *n)
{
    concat_rq r;
    mp_status st = MP_OK;
    for (int32_t i = 0; i < n->n_in && st == MP_OK; i++)
        st = concat_rq_init(n, n->in[i], &r);
    return st;
}

/* round(q * scale + bias) + out_zp saturated, in float as TFLite (roundf: half away from
 * zero); a rounded value beyond int32 saturates instead of converting out of range. */
#define CONCAT_RQ_LOOP(T)                                                                      \
    do {                                                                                       \
        const T *x_ = (const T *)src;                                                          \
        T *y_ = (T *)dst;                                                                      \
        for (size_t j_ = 0; j_ < count; j_++) {                                                \
            float v_ = roundf((float)x_[j_] * r->scale + r->bias);                             \
            int64_t q_ = v_ >= 2147483648.0f ? INT32_MAX                                       \
                         : v_ < -2147483648.0f ? INT32_MIN : (int64_t)v_;                      \
            q_ += r->out_zp;                                                                   \
            y_[j_] = (T)(q_ < r->lo ? r->lo : (q_ > r->hi ? r->hi : q_));                      \
        }                                                                                      \
    } while (0)

static void concat_requant(const concat_rq *r, mp_dtype dt, const void *src, void *dst,
                           size_t count)
{
    if (dt == MP_DT_UINT8)
        CONCAT_RQ_LOOP(uint8_t);
    else
        CONCAT_RQ_LOOP(int8_t);
}

static mp_status concat_infer(mp_node *n)
{
    mp_status st = mp_node_check_io(n, 1, INT32_MAX, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in0 = n->in[0];
    mp_tensor *out = n->out[0];
    if ((st = mp_node_check_same_dtype(n, in0, out)) != MP_OK)
        return st;
    int32_t act = n->opt->activation;
    if (act < MP_ACT_NONE || act > MP_ACT_SIGN_BIT)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "unknown fused activation %d", act);
    if (act != MP_ACT_NONE && out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "fused activation on %s output '%s'",
                            mp_dtype_name(out->dtype), mp_tname(out));
    if ((st = concat_check_quant(n)) != MP_OK)
        return st;
    int32_t axis = 0;
    if ((st = concat_axis(n, in0->rank, &axis)) != MP_OK)
        return st;
    int32_t dims[MP_MAX_RANK];
    memcpy(dims, in0->dims, sizeof(int32_t) * (size_t)in0->rank);
    int64_t total = 0;
    char b1[96], b2[96];
    for (int32_t i = 0; i < n->n_in; i++) {
        const mp_tensor *t = n->in[i];
        if (t->dtype != in0->dtype)
            return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' is %s but '%s' is %s", mp_tname(t),
                                mp_dtype_name(t->dtype), mp_tname(in0), mp_dtype_name(in0->dtype));
        bool ok = t->rank == in0->rank;
        for (int32_t d = 0; ok && d < t->rank; d++)
            ok = d == axis || t->dims[d] == in0->dims[d];
        if (!ok)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "input '%s' %s does not match '%s' %s outside axis %d", mp_tname(t),
                                SHAPE_STR(t, b1), mp_tname(in0), SHAPE_STR(in0, b2), axis);
        total += t->dims[axis];
    }
    if (total > INT32_MAX)
        return mp_node_fail(n, MP_ERR_SHAPE, "concatenated dimension too large");
    dims[axis] = (int32_t)total;
    if (!mp_tensor_set_shape(out, in0->rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return MP_OK;
}

static mp_status concat_run(mp_node *n)
{
    mp_tensor *out = n->out[0];
    int32_t axis = 0;
    mp_status st = concat_axis(n, out->rank, &axis);
    if (st != MP_OK)
        return st;
    size_t es = mp_dtype_size(out->dtype), outer = 1, inner = es;
    for (int32_t d = 0; d < axis; d++)
        outer *= (size_t)out->dims[d];
    for (int32_t d = axis + 1; d < out->rank; d++)
        inner *= (size_t)out->dims[d];
    if (out->bytes == 0)
        return MP_OK;
    /* Each input contributes one contiguous chunk of dims[axis] * inner bytes per outer
     * index: input by input (its requantization set up once), chunk by chunk. */
    size_t row = (size_t)out->dims[axis] * inner, at = 0;
    for (int32_t i = 0; i < n->n_in; i++) {
        const mp_tensor *t = n->in[i];
        size_t chunk = (size_t)t->dims[axis] * inner;
        concat_rq r;
        if ((st = concat_rq_init(n, t, &r)) != MP_OK)
            return st;
        for (size_t o = 0; o < outer && chunk; o++) {
            const uint8_t *src = (const uint8_t *)t->data + o * chunk;
            uint8_t *dst = (uint8_t *)out->data + o * row + at;
            if (r.copy)
                memcpy(dst, src, chunk);
            else
                concat_requant(&r, out->dtype, src, dst, chunk / es);
        }
        at += chunk;
    }
    if (n->opt->activation != MP_ACT_NONE)
        mp_apply_activation_f32(out->data, mp_tensor_elements(out), n->opt->activation);
    return MP_OK;
}

/* ---- PAD / PADV2 ------------------------------------------------------------------------ */

typedef struct pad_state {
    xnn_operator_t op;    /* NULL when the plain C path runs */
    size_t op_es;         /* element size the operator was created for */
    uint8_t op_value[8];  /* padding value it was created with */
    int32_t rank;         /* shapes and paddings bound by the last setup */
    int64_t pre[MP_MAX_RANK], post[MP_MAX_RANK];
    const void *in_ptr;
    void *out_ptr;
    bool bound;           /* op set up for the values above */
} pad_state;

/* Read and check paddings [rank, 2] into pre / post. */
static mp_status pad_read(mp_node *n, const mp_tensor *in, const mp_tensor *pads, int64_t *pre,
                          int64_t *post)
{
    for (int32_t d = 0; d < in->rank; d++) {
        pre[d] = mp_tensor_index_at(pads, (size_t)d * 2);
        post[d] = mp_tensor_index_at(pads, (size_t)d * 2 + 1);
        if (pre[d] < 0 || post[d] < 0 || pre[d] > INT32_MAX || post[d] > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "paddings '%s' for dimension %d are [%lld,%lld]: "
                                "must be non-negative", mp_tname(pads), d, (long long)pre[d],
                                (long long)post[d]);
    }
    return MP_OK;
}

static mp_status pad_infer(mp_node *n)
{
    bool v2 = n->opcode == MP_OP_PADV2;
    mp_status st = v2 ? mp_node_check_io(n, 2, 3, 1u << 2) : mp_node_check_io(n, 2, 2, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *pads = n->in[1];
    mp_tensor *out = n->out[0];
    if ((st = mp_node_check_same_dtype(n, in, out)) != MP_OK)
        return st;
    char b1[96], b2[96];
    if (!mp_dtype_is_index(pads->dtype) || pads->rank != 2 || pads->dims[0] != in->rank ||
        pads->dims[1] != 2)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "paddings '%s' must be int32/int64 [%d,2] for input '%s' %s, is %s %s",
                            mp_tname(pads), in->rank, mp_tname(in), SHAPE_STR(in, b1),
                            mp_dtype_name(pads->dtype), SHAPE_STR(pads, b2));
    if (v2 && n->n_in > 2 && n->in[2]) {
        const mp_tensor *cv = n->in[2];
        if (cv->dtype != in->dtype || mp_tensor_elements(cv) != 1)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "constant value '%s' must be one %s element, is %s %s", mp_tname(cv),
                                mp_dtype_name(in->dtype), mp_dtype_name(cv->dtype),
                                SHAPE_STR(cv, b1));
        /* TFLite: the constant is on the output's scale and zero point */
        if ((st = mp_node_check_same_qparams(n, out, cv)) != MP_OK)
            return st;
    } else if ((st = check_pad_zero_point(n, out)) != MP_OK) {
        return st;
    }
    if (!pads->value_known || !pads->data)
        return MP_ERR_DEFERRED;
    int64_t pre[MP_MAX_RANK], post[MP_MAX_RANK];
    if ((st = pad_read(n, in, pads, pre, post)) != MP_OK)
        return st;
    int32_t dims[MP_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t v = in->dims[d] + pre[d] + post[d];
        if (v > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "padded dimension %d of '%s' too large", d,
                                mp_tname(in));
        dims[d] = (int32_t)v;
    }
    if (!mp_tensor_set_shape(out, in->rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'", mp_tname(out));
    return MP_OK;
}

/* The padding value of this node; false when it is a PADV2 input not known yet. */
static bool pad_value(const mp_node *n, uint8_t value[8])
{
    const mp_tensor *out = n->out[0];
    if (n->opcode == MP_OP_PADV2 && n->n_in > 2 && n->in[2]) {
        const mp_tensor *cv = n->in[2];
        memset(value, 0, 8);
        if (!cv->data)
            return false;
        memcpy(value, cv->data, mp_dtype_size(cv->dtype));
        return cv->value_known;
    }
    zero_pad_value(out, value);
    return true;
}

/* The output shape must be the input's grown by the paddings (infer made it so; a changed
 * padding value at run time without a new infer would break it). */
static mp_status pad_check_out(mp_node *n, const int64_t *pre, const int64_t *post)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    bool ok = out->rank == in->rank;
    for (int32_t d = 0; ok && d < in->rank; d++)
        ok = in->dims[d] + pre[d] + post[d] == out->dims[d];
    if (!ok)
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match the paddings of '%s'",
                            mp_tname(out), mp_tname(n->in[1]));
    return MP_OK;
}

/* The same padding over fewer, longer dimensions: a dimension whose inner block is not
 * padded is merged with that block (an NHWC image padded in H and W only is padded as rows of
 * W x C values, pre and post scaled by C), so XNNPACK copies whole rows instead of one call per
 * pixel: on MediaPipe's pose landmark model, padding its 256x256x3 input by one pixel took
 * 730 us as 66,564 rows of 3 floats. Returns the new rank (at least 1). */
static size_t pad_merge(int32_t rank, const int32_t *dims, const int64_t *pre,
                        const int64_t *post, size_t *shape, size_t *a, size_t *b)
{
    size_t n = 0, cur = (size_t)dims[rank - 1];
    size_t cur_a = (size_t)pre[rank - 1], cur_b = (size_t)post[rank - 1];
    size_t rs[MP_MAX_RANK], ra[MP_MAX_RANK], rb[MP_MAX_RANK]; /* innermost first */
    for (int32_t d = rank - 2; d >= 0; d--) {
        if (cur_a == 0 && cur_b == 0) {
            cur_a = (size_t)pre[d] * cur;
            cur_b = (size_t)post[d] * cur;
            cur *= (size_t)dims[d];
            continue;
        }
        rs[n] = cur, ra[n] = cur_a, rb[n] = cur_b, n++;
        cur = (size_t)dims[d], cur_a = (size_t)pre[d], cur_b = (size_t)post[d];
    }
    rs[n] = cur, ra[n] = cur_a, rb[n] = cur_b, n++;
    for (size_t k = 0; k < n; k++)
        shape[k] = rs[n - 1 - k], a[k] = ra[n - 1 - k], b[k] = rb[n - 1 - k];
    return n;
}

static mp_status pad_bind(mp_node *n, pad_state *s, const int64_t *pre, const int64_t *post)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    size_t shape[MP_MAX_RANK], a[MP_MAX_RANK], b[MP_MAX_RANK];
    size_t r = pad_merge(in->rank, in->dims, pre, post, shape, a, b);
    enum xnn_status xs;
    switch (s->op_es) {
    case 1: xs = xnn_setup_constant_pad_nd_x8(s->op, r, shape, a, b, in->data, out->data,
                                              n->pool); break;
    case 2: xs = xnn_setup_constant_pad_nd_x16(s->op, r, shape, a, b, in->data, out->data,
                                               n->pool); break;
    default: xs = xnn_setup_constant_pad_nd_x32(s->op, r, shape, a, b, in->data, out->data,
                                                n->pool); break;
    }
    if (xs != xnn_status_success)
        return mp_node_xnn_fail(n, xs, "constant pad setup");
    s->rank = in->rank;
    memcpy(s->pre, pre, sizeof(int64_t) * (size_t)in->rank);
    memcpy(s->post, post, sizeof(int64_t) * (size_t)in->rank);
    s->in_ptr = in->data;
    s->out_ptr = out->data;
    s->bound = true;
    return MP_OK;
}

static mp_status pad_prepare(mp_node *n)
{
    const mp_tensor *in = n->in[0], *pads = n->in[1];
    pad_state *s = mp_node_state(n, sizeof *s);
    if (!s)
        return MP_ERR_NOMEM;
    s->bound = false;
    /* XNNPACK pads elements of 1, 2 or 4 bytes up to 6 dimensions with a value fixed at
     * creation; everything else (int64, rank 7-8, empty input, a PADV2 value computed at run
     * time) takes the C path. */
    size_t es = mp_dtype_size(in->dtype);
    uint8_t value[8];
    bool use_xnn = (es == 1 || es == 2 || es == 4) && in->rank >= 1 &&
                   in->rank <= XNN_MAX_TENSOR_DIMS && mp_tensor_elements(in) > 0 &&
                   pad_value(n, value);
    if (!use_xnn) {
        mp_xnn_delete(&s->op);
        return MP_OK;
    }
    if (s->op && (s->op_es != es || memcmp(s->op_value, value, es) != 0))
        mp_xnn_delete(&s->op);
    if (!s->op) {
        uint32_t v32 = 0;
        memcpy(&v32, value, es);
        enum xnn_status xs;
        if (es == 1)
            xs = xnn_create_constant_pad_nd_x8(&v32, 0, &s->op);
        else if (es == 2)
            xs = xnn_create_constant_pad_nd_x16(&v32, 0, &s->op);
        else
            xs = xnn_create_constant_pad_nd_x32(&v32, 0, &s->op);
        if ((xs = mp_xnn_created(xs, s->op)) != xnn_status_success) {
            s->op = NULL;
            return mp_node_xnn_fail(n, xs, "constant pad create");
        }
        s->op_es = es;
        memcpy(s->op_value, value, es);
    }
    /* Paddings computed while running are bound by run() once they exist. */
    if (!pads->value_known || !pads->data)
        return MP_OK;
    int64_t pre[MP_MAX_RANK], post[MP_MAX_RANK];
    mp_status st = pad_read(n, in, pads, pre, post);
    if (st != MP_OK || (st = pad_check_out(n, pre, post)) != MP_OK)
        return st;
    return pad_bind(n, s, pre, post);
}

/* Plain C pad: rows of the innermost dimension, recursing over the outer ones. */
static void pad_rows(const uint8_t **src, uint8_t **dst, int32_t d, int32_t rank,
                     const int32_t *in_dims, const int64_t *pre, const int64_t *post,
                     const size_t *out_block, size_t es, const uint8_t *value)
{
    if (d == rank - 1) {
        size_t len = (size_t)in_dims[d] * es;
        fill_pattern(*dst, (size_t)pre[d], es, value);
        *dst += (size_t)pre[d] * es;
        memcpy(*dst, *src, len);
        *dst += len;
        *src += len;
        fill_pattern(*dst, (size_t)post[d], es, value);
        *dst += (size_t)post[d] * es;
        return;
    }
    /* out_block[d] = output elements of one index of dimension d */
    fill_pattern(*dst, (size_t)pre[d] * out_block[d], es, value);
    *dst += (size_t)pre[d] * out_block[d] * es;
    for (int32_t i = 0; i < in_dims[d]; i++)
        pad_rows(src, dst, d + 1, rank, in_dims, pre, post, out_block, es, value);
    fill_pattern(*dst, (size_t)post[d] * out_block[d], es, value);
    *dst += (size_t)post[d] * out_block[d] * es;
}

static mp_status pad_run(mp_node *n)
{
    const mp_tensor *in = n->in[0], *pads = n->in[1];
    mp_tensor *out = n->out[0];
    pad_state *s = n->state;
    int64_t pre[MP_MAX_RANK], post[MP_MAX_RANK];
    mp_status st = pad_read(n, in, pads, pre, post);
    if (st != MP_OK || (st = pad_check_out(n, pre, post)) != MP_OK)
        return st;
    if (out->bytes == 0)
        return MP_OK;
    if (s && s->op) {
        /* Paddings computed while running may change without changing the output shape
         * (prepare is then not called again): rebind; setup does not allocate. */
        bool same = s->bound && s->rank == in->rank && s->in_ptr == in->data &&
                    s->out_ptr == out->data &&
                    memcmp(s->pre, pre, sizeof(int64_t) * (size_t)in->rank) == 0 &&
                    memcmp(s->post, post, sizeof(int64_t) * (size_t)in->rank) == 0;
        if (!same && (st = pad_bind(n, s, pre, post)) != MP_OK)
            return st;
        enum xnn_status xs = xnn_run_operator(s->op, n->pool);
        if (xs != xnn_status_success)
            return mp_node_xnn_fail(n, xs, "constant pad run");
        return MP_OK;
    }
    uint8_t value[8];
    pad_value(n, value);
    size_t es = mp_dtype_size(in->dtype);
    if (in->rank == 0) {
        memcpy(out->data, in->data, es);
        return MP_OK;
    }
    if (mp_tensor_elements(in) == 0) {
        fill_pattern(out->data, mp_tensor_elements(out), es, value);
        return MP_OK;
    }
    size_t out_block[MP_MAX_RANK];
    size_t blk = 1;
    for (int32_t d = in->rank - 1; d >= 0; d--) {
        out_block[d] = blk;
        blk *= (size_t)out->dims[d];
    }
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    pad_rows(&src, &dst, 0, in->rank, in->dims, pre, post, out_block, es, value);
    return MP_OK;
}

static void pad_release(mp_node *n)
{
    pad_state *s = n->state;
    if (s)
        mp_node_free_state(n, &s->op);
}

/* ---- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND --------------------------------------------- */

/* block_shape [M] and paddings / crops [M,2] for an input [batch, spatial(M)..., rest...]. */
typedef struct s2b_params {
    int32_t m;
    int64_t block[MP_MAX_RANK];
    int64_t before[MP_MAX_RANK], after[MP_MAX_RANK];
    int64_t block_count;
} s2b_params;

static mp_status s2b_check(mp_node *n, bool to_batch)
{
    mp_status st = mp_node_check_io(n, 3, 3, 0);
    if (st != MP_OK)
        return st;
    const mp_tensor *in = n->in[0], *blk = n->in[1], *pads = n->in[2];
    if ((st = mp_node_check_same_dtype(n, in, n->out[0])) != MP_OK ||
        (st = mp_node_check_same_qparams(n, in, n->out[0])) != MP_OK ||
        (to_batch && (st = check_pad_zero_point(n, n->out[0])) != MP_OK))
        return st;
    char b1[96], b2[96];
    if (in->rank < 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "input '%s' %s must have rank 2 or more", mp_tname(in),
                            SHAPE_STR(in, b1));
    if (!mp_dtype_is_index(blk->dtype) || blk->rank != 1 || blk->dims[0] < 1 ||
        blk->dims[0] > in->rank - 1)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "block_shape '%s' must be int32/int64 [M] with 1 <= M <= %d, is %s %s",
                            mp_tname(blk), in->rank - 1, mp_dtype_name(blk->dtype),
                            SHAPE_STR(blk, b1));
    if (!mp_dtype_is_index(pads->dtype) || pads->rank != 2 || pads->dims[0] != blk->dims[0] ||
        pads->dims[1] != 2)
        return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' must be int32/int64 [%d,2], is %s %s",
                            to_batch ? "paddings" : "crops", mp_tname(pads), blk->dims[0],
                            mp_dtype_name(pads->dtype), SHAPE_STR(pads, b2));
    return MP_OK;
}

static mp_status s2b_read(mp_node *n, bool to_batch, s2b_params *p)
{
    const mp_tensor *blk = n->in[1], *pads = n->in[2];
    p->m = blk->dims[0];
    p->block_count = 1;
    for (int32_t i = 0; i < p->m; i++) {
        p->block[i] = mp_tensor_index_at(blk, (size_t)i);
        p->before[i] = mp_tensor_index_at(pads, (size_t)i * 2);
        p->after[i] = mp_tensor_index_at(pads, (size_t)i * 2 + 1);
        if (p->block[i] < 1 || p->block[i] > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "block_shape '%s'[%d] = %lld must be >= 1",
                                mp_tname(blk), i, (long long)p->block[i]);
        if (p->before[i] < 0 || p->after[i] < 0 || p->before[i] > INT32_MAX ||
            p->after[i] > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "%s '%s' for dimension %d are [%lld,%lld]: "
                                "must be non-negative", to_batch ? "paddings" : "crops",
                                mp_tname(pads), i + 1, (long long)p->before[i],
                                (long long)p->after[i]);
        p->block_count *= p->block[i];
        if (p->block_count > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "block_shape '%s' too large", mp_tname(blk));
    }
    return MP_OK;
}

/* Output shape of either direction from the current input shape and parameters. */
static mp_status s2b_shape(mp_node *n, bool to_batch, const s2b_params *p, int32_t *dims)
{
    const mp_tensor *in = n->in[0];
    char b[96];
    memcpy(dims, in->dims, sizeof(int32_t) * (size_t)in->rank);
    if (to_batch) {
        int64_t batch = (int64_t)in->dims[0] * p->block_count;
        if (batch > INT32_MAX)
            return mp_node_fail(n, MP_ERR_SHAPE, "output batch too large");
        dims[0] = (int32_t)batch;
        for (int32_t i = 0; i < p->m; i++) {
            int64_t padded = in->dims[i + 1] + p->before[i] + p->after[i];
            if (padded % p->block[i] != 0)
                return mp_node_fail(n, MP_ERR_SHAPE,
                                    "padded dimension %d of '%s' %s (%lld) is not a multiple of "
                                    "block size %lld", i + 1, mp_tname(in), SHAPE_STR(in, b),
                                    (long long)padded, (long long)p->block[i]);
            dims[i + 1] = (int32_t)(padded / p->block[i]);
        }
    } else {
        if (in->dims[0] % p->block_count != 0)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "batch of '%s' %s is not a multiple of the block count %lld",
                                mp_tname(in), SHAPE_STR(in, b), (long long)p->block_count);
        dims[0] = (int32_t)(in->dims[0] / p->block_count);
        for (int32_t i = 0; i < p->m; i++) {
            int64_t full = (int64_t)in->dims[i + 1] * p->block[i];
            int64_t v = full - p->before[i] - p->after[i];
            if (v < 0 || full > INT32_MAX)
                return mp_node_fail(n, MP_ERR_SHAPE,
                                    "crops [%lld,%lld] exceed dimension %d of '%s' %s times block "
                                    "%lld", (long long)p->before[i], (long long)p->after[i], i + 1,
                                    mp_tname(in), SHAPE_STR(in, b), (long long)p->block[i]);
            dims[i + 1] = (int32_t)v;
        }
    }
    return MP_OK;
}

static mp_status s2b_infer_common(mp_node *n, bool to_batch)
{
    mp_status st = s2b_check(n, to_batch);
    if (st != MP_OK)
        return st;
    if (!n->in[1]->value_known || !n->in[2]->value_known || !n->in[1]->data || !n->in[2]->data)
        return MP_ERR_DEFERRED;
    s2b_params p;
    int32_t dims[MP_MAX_RANK];
    if ((st = s2b_read(n, to_batch, &p)) != MP_OK ||
        (st = s2b_shape(n, to_batch, &p, dims)) != MP_OK)
        return st;
    return mp_node_set_output_shape(n, n->in[0]->rank, dims);
}

static mp_status s2b_infer(mp_node *n)
{
    return s2b_infer_common(n, true);
}

static mp_status b2s_infer(mp_node *n)
{
    return s2b_infer_common(n, false);
}

/* Both directions move "pixels" of `rest` contiguous elements between the batched tensor
 * [block_count * B, small spatial..., rest] and the spatial one [B, big spatial..., rest]:
 * batched[(s_0 .. s_{M-1}) * B + b, x_0 .. x_{M-1}] <-> spatial[b, x_i * block_i + s_i -
 * before_i] (row-major over the block offsets s). We walk the batched tensor in order with
 * an odometer over its spatial positions (no division per pixel); positions that fall in
 * the padding are filled (space to batch) or skipped (cropped away, batch to space). */
static mp_status s2b_run_common(mp_node *n, bool to_batch)
{
    const mp_tensor *in = n->in[0];
    mp_tensor *out = n->out[0];
    s2b_params p;
    int32_t dims[MP_MAX_RANK];
    mp_status st;
    if ((st = s2b_read(n, to_batch, &p)) != MP_OK ||
        (st = s2b_shape(n, to_batch, &p, dims)) != MP_OK)
        return st;
    if (out->rank != in->rank || memcmp(out->dims, dims, sizeof(int32_t) * (size_t)in->rank))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match block shape and %s",
                            mp_tname(out), to_batch ? "paddings" : "crops");
    if (out->bytes == 0)
        return MP_OK;
    const mp_tensor *big = to_batch ? in : out;   /* spatial layout */
    const mp_tensor *small = to_batch ? out : in; /* batched layout */
    size_t es = mp_dtype_size(in->dtype);
    size_t pixel = es;
    for (int32_t d = p.m + 1; d < in->rank; d++)
        pixel *= (size_t)in->dims[d];
    int32_t m = p.m;
    int64_t batch = big->dims[0];
    /* element strides (in pixels) of the spatial dimensions of the big tensor */
    size_t big_stride[MP_MAX_RANK], big_batch_stride = 1;
    for (int32_t i = m - 1; i >= 0; i--) {
        big_stride[i] = big_batch_stride;
        big_batch_stride *= (size_t)big->dims[i + 1];
    }
    uint8_t value[8];
    zero_pad_value(out, value);
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    size_t small_at = 0; /* byte offset: walks the batched tensor in order */
    int64_t sb = small->dims[0];
    int64_t off[MP_MAX_RANK] = {0}; /* block offset s_i of the current batched batch */
    size_t positions = 1;
    for (int32_t i = 0; i < m; i++)
        positions *= (size_t)small->dims[i + 1];
    for (int64_t ob = 0; ob < sb; ob++) {
        int64_t bi = ob % batch; /* batch > 0: an empty output returned above */
        if (ob > 0 && bi == 0) { /* next block offset, row-major */
            for (int32_t i = m - 1; i >= 0; i--) {
                if (++off[i] < p.block[i])
                    break;
                off[i] = 0;
            }
        }
        /* odometer over the batched spatial positions x_i, tracking big-tensor
         * coordinates y_i = x_i * block_i + s_i - before_i */
        int64_t x[MP_MAX_RANK] = {0}, y[MP_MAX_RANK];
        for (int32_t i = 0; i < m; i++)
            y[i] = off[i] - p.before[i];
        for (size_t k = 0; k < positions; k++, small_at += pixel) {
            bool inside = true;
            size_t big_at = (size_t)bi * big_batch_stride;
            for (int32_t i = 0; i < m && inside; i++) {
                inside = y[i] >= 0 && y[i] < big->dims[i + 1];
                big_at += inside ? (size_t)y[i] * big_stride[i] : 0;
            }
            if (to_batch) {
                if (inside)
                    memcpy(dst + small_at, src + big_at * pixel, pixel);
                else
                    fill_pattern(dst + small_at, pixel / es, es, value);
            } else if (inside) {
                memcpy(dst + big_at * pixel, src + small_at, pixel);
            }
            for (int32_t i = m - 1; i >= 0; i--) {
                y[i] += p.block[i];
                if (++x[i] < small->dims[i + 1])
                    break;
                x[i] = 0;
                y[i] = off[i] - p.before[i];
            }
        }
    }
    return MP_OK;
}

static mp_status s2b_run(mp_node *n)
{
    return s2b_run_common(n, true);
}

static mp_status b2s_run(mp_node *n)
{
    return s2b_run_common(n, false);
}

/* ---- SPLIT / SPLIT_V -------------------------------------------------------------------- */

/* SPLIT (axis, input) cuts the input into num_splits equal parts along axis; SPLIT_V (input,
 * size_splits, axis) into parts of the given sizes, one of which may be -1 (the rest). One
 * output per part, each the input's dtype (moved as bytes; quantized outputs keep the
 * input's values, as TFLite, which does not requantize either). */

static bool split_dtype_ok(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_FLOAT32: case MP_DT_INT32: case MP_DT_INT64: case MP_DT_UINT8:
    case MP_DT_INT8: case MP_DT_INT16:
        return true;
    default:
        return false;
    }
}

/* The input, the axis tensor and the checks every split shares: as many outputs as
 * num_splits, each of the input's dtype. */
static mp_status split_io(mp_node *n, const mp_tensor **in, const mp_tensor **ax)
{
    bool v = n->opcode == MP_OP_SPLIT_V;
    int32_t want_in = v ? 3 : 2;
    if (n->n_in != want_in)
        return mp_node_fail(n, MP_ERR_FORMAT, "expects %d inputs, has %d", want_in, n->n_in);
    for (int32_t i = 0; i < n->n_in; i++)
        if (!n->in[i])
            return mp_node_fail(n, MP_ERR_FORMAT, "input %d is required but omitted", i);
    *in = v ? n->in[0] : n->in[1];
    *ax = v ? n->in[2] : n->in[0];
    if (n->n_out < 1 || n->opt->num_splits != n->n_out)
        return mp_node_fail(n, MP_ERR_FORMAT, "num_splits is %d but the operator has %d outputs",
                            n->opt->num_splits, n->n_out);
    if (!split_dtype_ok((*in)->dtype))
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s (supported: f32, i32, i64, u8, i8, i16)",
                            mp_tname(*in), mp_dtype_name((*in)->dtype));
    for (int32_t j = 0; j < n->n_out; j++) {
        if (!n->out[j])
            return mp_node_fail(n, MP_ERR_FORMAT, "output %d is omitted", j);
        mp_status st = mp_node_check_same_dtype(n, *in, n->out[j]);
        if (st != MP_OK)
            return st;
    }
    char b[96];
    if (!mp_dtype_is_index((*ax)->dtype) || mp_tensor_elements(*ax) != 1)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis '%s' must be one int32 value, is %s %s",
                            mp_tname(*ax), mp_dtype_name((*ax)->dtype), SHAPE_STR(*ax, b));
    return MP_OK;
}

/* The axis value, made non-negative (its value must be known). */
static mp_status split_axis(mp_node *n, const mp_tensor *in, const mp_tensor *ax, int32_t *axis)
{
    int64_t a = mp_tensor_index_at(ax, 0);
    char b[96];
    if (a < -(int64_t)in->rank || a >= in->rank)
        return mp_node_fail(n, MP_ERR_SHAPE, "axis %lld out of range for '%s' %s", (long long)a,
                            mp_tname(in), SHAPE_STR(in, b));
    *axis = (int32_t)(a < 0 ? a + in->rank : a);
    return MP_OK;
}

/* The size of every part along the axis (n_out entries). */
static mp_status split_sizes(mp_node *n, const mp_tensor *in, int32_t axis, int32_t *size)
{
    int32_t dim = in->dims[axis];
    char b[96];
    if (n->opcode == MP_OP_SPLIT) {
        if (dim % n->n_out != 0)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "dimension %d of '%s' %s (%d) does not split into %d equal parts",
                                axis, mp_tname(in), SHAPE_STR(in, b), dim, n->n_out);
        for (int32_t j = 0; j < n->n_out; j++)
            size[j] = dim / n->n_out;
        return MP_OK;
    }
    const mp_tensor *ss = n->in[1];
    int64_t sum = 0;
    int32_t rest = -1;
    for (int32_t j = 0; j < n->n_out; j++) {
        int64_t v = mp_tensor_index_at(ss, (size_t)j);
        if (v == -1 && rest < 0) {
            rest = j;
            continue;
        }
        if (v < 0 || v > dim)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "size_splits '%s'[%d] = %lld is not valid (sizes are >= 0, with "
                                "at most one -1)", mp_tname(ss), j, (long long)v);
        size[j] = (int32_t)v;
        sum += v;
    }
    if (rest >= 0 && sum <= dim)
        size[rest] = (int32_t)(dim - sum);
    else if (rest >= 0 || sum != dim)
        return mp_node_fail(n, MP_ERR_SHAPE,
                            "size_splits '%s' add up to %lld, dimension %d of '%s' %s is %d",
                            mp_tname(ss), (long long)sum, axis, mp_tname(in), SHAPE_STR(in, b),
                            dim);
    return MP_OK;
}

/* The axis and the part sizes from the current values (infer and run). */
static mp_status split_plan(mp_node *n, const mp_tensor **in, int32_t *axis, int32_t *size)
{
    const mp_tensor *ax;
    mp_status st = split_io(n, in, &ax);
    if (st != MP_OK)
        return st;
    if (n->opcode == MP_OP_SPLIT_V) {
        const mp_tensor *ss = n->in[1];
        char b[96];
        if (!mp_dtype_is_index(ss->dtype) || ss->rank != 1 || ss->dims[0] != n->n_out)
            return mp_node_fail(n, MP_ERR_SHAPE,
                                "size_splits '%s' must be an int32 vector of %d sizes, is %s %s",
                                mp_tname(ss), n->n_out, mp_dtype_name(ss->dtype),
                                SHAPE_STR(ss, b));
        if (!ss->value_known || !ss->data)
            return MP_ERR_DEFERRED;
    }
    if (!ax->value_known || !ax->data)
        return MP_ERR_DEFERRED;
    if ((st = split_axis(n, *in, ax, axis)) != MP_OK)
        return st;
    return split_sizes(n, *in, *axis, size);
}

static mp_status split_infer(mp_node *n)
{
    const mp_tensor *in;
    int32_t axis = 0, *size = NULL;
    int32_t small[64];
    /* one size per output: a stack array up to 64 outputs, else the node's state */
    if (n->n_out > 64 && !(size = mp_node_state(n, sizeof(int32_t) * (size_t)n->n_out)))
        return MP_ERR_NOMEM;
    if (!size)
        size = small;
    mp_status st = split_plan(n, &in, &axis, size);
    if (st != MP_OK)
        return st;
    int32_t dims[MP_MAX_RANK];
    memcpy(dims, in->dims, sizeof(int32_t) * (size_t)in->rank);
    for (int32_t j = 0; j < n->n_out; j++) {
        dims[axis] = size[j];
        if (!mp_tensor_set_shape(n->out[j], in->rank, dims))
            return mp_node_fail(n, MP_ERR_SHAPE, "invalid output shape for '%s'",
                                mp_tname(n->out[j]));
    }
    return MP_OK;
}

static mp_status split_run(mp_node *n)
{
    const mp_tensor *in, *ax;
    int32_t axis = 0;
    mp_status st = split_io(n, &in, &ax);
    if (st != MP_OK || (st = split_axis(n, in, ax, &axis)) != MP_OK)
        return st;
    /* infer gave the outputs their parts of the axis: check they tile the input */
    int64_t total = 0;
    for (int32_t j = 0; j < n->n_out; j++) {
        const mp_tensor *o = n->out[j];
        bool ok = o->rank == in->rank;
        for (int32_t d = 0; ok && d < in->rank; d++)
            ok = d == axis || o->dims[d] == in->dims[d];
        if (!ok)
            return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' does not match input '%s'",
                                mp_tname(o), mp_tname(in));
        total += o->dims[axis];
    }
    if (total != in->dims[axis])
        return mp_node_fail(n, MP_ERR_SHAPE, "the outputs do not add up to dimension %d of '%s'",
                            axis, mp_tname(in));
    size_t outer = 1, inner = mp_dtype_size(in->dtype);
    for (int32_t d = 0; d < axis; d++)
        outer *= (size_t)in->dims[d];
    for (int32_t d = axis + 1; d < in->rank; d++)
        inner *= (size_t)in->dims[d];
    const uint8_t *src = in->data;
    for (size_t o = 0; o < outer; o++)
        for (int32_t j = 0; j < n->n_out; j++) {
            size_t chunk = (size_t)n->out[j]->dims[axis] * inner;
            if (chunk)
                memcpy((uint8_t *)n->out[j]->data + o * chunk, src, chunk);
            src += chunk;
        }
    return MP_OK;
}

static void split_release(mp_node *n)
{
    mp_node_free_state(n, NULL);
}

/* ---- table ------------------------------------------------------------------------------ */

#define MANY_INPUTS (1 << 20)

/* A stateless kernel: infer + run. */
#define PLAIN(code, opt, lo, hi, inf, rn)                                                      \
    {.opcode = (code), .optional_inputs = (opt), .min_inputs = (lo), .max_inputs = (hi),       \
     .n_outputs = 1, .infer = (inf), .run = (rn)}

const mp_kernel mp_kernels_layout[] = {
    PLAIN(MP_OP_RESHAPE, 1u << 1, 1, 2, reshape_infer, run_copy),
    PLAIN(MP_OP_SQUEEZE, 0, 1, 1, squeeze_infer, run_copy),
    PLAIN(MP_OP_EXPAND_DIMS, 0, 2, 2, expand_dims_infer, run_copy),
    PLAIN(MP_OP_CONCATENATION, 0, 1, MANY_INPUTS, concat_infer, concat_run),
    {.opcode = MP_OP_PAD, .min_inputs = 2, .max_inputs = 2, .n_outputs = 1, .infer = pad_infer,
     .prepare = pad_prepare, .run = pad_run, .release = pad_release},
    {.opcode = MP_OP_PADV2, .optional_inputs = 1u << 2, .min_inputs = 2, .max_inputs = 3,
     .n_outputs = 1, .infer = pad_infer, .prepare = pad_prepare, .run = pad_run,
     .release = pad_release},
    PLAIN(MP_OP_SPACE_TO_BATCH_ND, 0, 3, 3, s2b_infer, s2b_run),
    PLAIN(MP_OP_BATCH_TO_SPACE_ND, 0, 3, 3, b2s_infer, b2s_run),
    {.opcode = MP_OP_SPLIT, .min_inputs = 2, .max_inputs = 2, .n_outputs = -1,
     .infer = split_infer, .run = split_run, .release = split_release},
    {.opcode = MP_OP_SPLIT_V, .min_inputs = 3, .max_inputs = 3, .n_outputs = -1,
     .infer = split_infer, .run = split_run, .release = split_release},
    {.opcode = -1},
};
