/* Helpers shared by all kernels: the kernel registry, operator-naming errors, a stable sort
 * of positions, fused activations, and float32 views of (possibly quantized) constant
 * weights. */
#include "engine/kernels/kernel.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const mp_kernel *const k_tables[] = {
    mp_kernels_conv,   mp_kernels_fc,     mp_kernels_pool,   mp_kernels_binary,
    mp_kernels_unary,  mp_kernels_softmax, mp_kernels_layout, mp_kernels_reduce,
    mp_kernels_resize, mp_kernels_convert, mp_kernels_shape, mp_kernels_activation_lut,
    mp_kernels_fill,
    mp_kernels_resource,
    mp_kernels_compare,
    mp_kernels_binary_math,
    mp_kernels_unary_math,
    mp_kernels_normalization, mp_kernels_conv3d,
    mp_kernels_detection,
    mp_kernels_audio, mp_kernels_numeric_verify,
    mp_kernels_control_flow,
    mp_kernels_lstm, mp_kernels_rnn, mp_kernels_svdf,
    mp_kernels_gather, mp_kernels_movement, mp_kernels_matmul,
    mp_kernels_sequence,
    mp_kernels_text,
    mp_kernels_hashtable,
    mp_kernels_indexing, mp_kernels_scatter, mp_kernels_segment,
    mp_kernels_transpose_conv, mp_kernels_space,
    mp_kernels_nms, mp_kernels_signal, mp_kernels_fake_quant,
    mp_kernels_random, mp_kernels_bitcast,
    mp_kernels_pool_argmax,
    mp_kernels_stablehlo, mp_kernels_stablehlo_gather, mp_kernels_stablehlo_rng,
};

const mp_kernel *mp_kernel_find(int32_t opcode)
{
    for (size_t t = 0; t < sizeof k_tables / sizeof k_tables[0]; t++)
        for (const mp_kernel *k = k_tables[t]; k->opcode >= 0; k++)
            if (k->opcode == opcode)
                return k;
    return NULL;
}

void mp_sort_positions(int32_t *idx, int32_t *tmp, size_t count,
                       bool (*before)(const void *ctx, int32_t a, int32_t b), const void *ctx)
{
    int32_t *a = idx, *b = tmp;
    for (size_t width = 1; width < count; width *= 2) {
        for (size_t lo = 0; lo < count; lo += 2 * width) {
            size_t mid = lo + width < count ? lo + width : count;
            size_t hi = lo + 2 * width < count ? lo + 2 * width : count;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                b[k++] = before(ctx, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid)
                b[k++] = a[i++];
            while (j < hi)
                b[k++] = a[j++];
        }
        int32_t *t = a;
        a = b;
        b = t;
    }
    if (a != idx)
        memcpy(idx, a, count * sizeof *idx);
}

mp_status mp_node_fail(mp_node *n, mp_status st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = mp_op_name(n->opcode);
    return mp_fail(n->err, st, "%s: operator #%d %s: %s", n->model_path ? n->model_path : "model",
                   n->index, name ? name : "?", msg);
}

const char *mp_tname(const mp_tensor *t)
{
    return t && t->info && t->info->name ? t->info->name : "?";
}

mp_status mp_node_check_io(mp_node *n, int32_t min_in, int32_t max_in, uint32_t optional)
{
    if (n->n_in < min_in || n->n_in > max_in)
        return mp_node_fail(n, MP_ERR_FORMAT, "expects %d to %d inputs, has %d", min_in, max_in,
                            n->n_in);
    for (int32_t i = 0; i < n->n_in; i++)
        if (!n->in[i] && !(i < 32 && (optional >> i) & 1))
            return mp_node_fail(n, MP_ERR_FORMAT, "input %d is required but omitted", i);
    if (n->n_out != 1 || !n->out[0])
        return mp_node_fail(n, MP_ERR_FORMAT, "expects 1 output, has %d", n->n_out);
    return MP_OK;
}

mp_status mp_node_check_same_dtype(mp_node *n, const mp_tensor *in, const mp_tensor *out)
{
    if (mp_dtype_size(in->dtype) == 0)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "tensor '%s' has unsupported dtype %s",
                            mp_tname(in), mp_dtype_name(in->dtype));
    if (out->dtype != in->dtype)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is %s",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_tname(in),
                            mp_dtype_name(in->dtype));
    return MP_OK;
}

mp_status mp_node_check_same_dtype_or_string(mp_node *n, const mp_tensor *in,
                                             const mp_tensor *out)
{
    if (in->dtype != MP_DT_STRING)
        return mp_node_check_same_dtype(n, in, out);
    if (out->dtype != MP_DT_STRING)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s but input '%s' is string",
                            mp_tname(out), mp_dtype_name(out->dtype), mp_tname(in));
    return MP_OK;
}

mp_status mp_node_check_f32_io(mp_node *n)
{
    const mp_tensor *in = n->in[0], *out = n->out[0];
    if (in->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "input '%s' has dtype %s (supported: f32)",
                            mp_tname(in), mp_dtype_name(in->dtype));
    if (out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "output '%s' is %s, expected f32",
                            mp_tname(out), mp_dtype_name(out->dtype));
    return MP_OK;
}

mp_status mp_node_check_f32_weighted(mp_node *n, const char *weights_word)
{
    const mp_tensor *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL, *out = n->out[0];
    size_t len = strlen(weights_word);
    bool plural = len > 1 && weights_word[len - 1] == 's';
    if (w->dtype != MP_DT_FLOAT32 && w->dtype != MP_DT_FLOAT16 && w->dtype != MP_DT_INT8 &&
        w->dtype != MP_DT_UINT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "%s '%s' %s %s; expected float32, float16, int8 or uint8",
                            weights_word, w->info->name, plural ? "are" : "is",
                            mp_dtype_name(w->dtype));
    if (b && b->dtype != MP_DT_FLOAT32 && b->dtype != MP_DT_FLOAT16)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "bias '%s' is %s; expected float32",
                            b->info->name, mp_dtype_name(b->dtype));
    if (out->dtype != MP_DT_FLOAT32)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "output '%s' is %s; an f32 input gives an f32 output",
                            out->info->name, mp_dtype_name(out->dtype));
    return MP_OK;
}

bool mp_dtype_is_index(mp_dtype dt)
{
    return dt == MP_DT_INT32 || dt == MP_DT_INT64;
}

int64_t mp_tensor_index_at(const mp_tensor *t, size_t i)
{
    if (t->dtype == MP_DT_INT64) {
        int64_t v;
        memcpy(&v, (const char *)t->data + i * 8, 8);
        return v;
    }
    if (t->dtype == MP_DT_INT16) {
        int16_t v;
        memcpy(&v, (const char *)t->data + i * 2, 2);
        return v;
    }
    int32_t v;
    memcpy(&v, (const char *)t->data + i * 4, 4);
    return v;
}

size_t mp_tensor_find_int_zero(const mp_tensor *t)
{
    const size_t count = mp_tensor_elements(t), size = mp_dtype_size(t->dtype);
    const uint8_t *d = t->data;
    for (size_t i = 0; i < count; i++) {
        uint8_t any = 0;
        for (size_t k = 0; k < size; k++)
            any |= d[i * size + k];
        if (!any)
            return i;
    }
    return SIZE_MAX;
}

bool mp_activation_range(int32_t act, float *lo, float *hi)
{
    switch (act) {
    case MP_ACT_NONE: *lo = -INFINITY; *hi = INFINITY; return true;
    case MP_ACT_RELU: *lo = 0.0f; *hi = INFINITY; return true;
    case MP_ACT_RELU_N1_TO_1: *lo = -1.0f; *hi = 1.0f; return true;
    case MP_ACT_RELU6: *lo = 0.0f; *hi = 6.0f; return true;
    default: return false;
    }
}

void mp_apply_activation_f32(float *x, size_t n, int32_t act)
{
    switch (act) {
    case MP_ACT_NONE:
        return;
    case MP_ACT_TANH:
        for (size_t i = 0; i < n; i++)
            x[i] = tanhf(x[i]);
        return;
    case MP_ACT_SIGN_BIT:
        for (size_t i = 0; i < n; i++)
            x[i] = signbit(x[i]) ? 1.0f : 0.0f;
        return;
    default: {
        float lo = -INFINITY, hi = INFINITY;
        if (!mp_activation_range(act, &lo, &hi))
            return;
        for (size_t i = 0; i < n; i++)
            x[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
    }
    }
}

float mp_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

mp_status mp_const_as_f32(mp_node *n, const mp_tensor *t, const float **out, void **owned)
{
    *owned = NULL;
    if (!t->data)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "tensor '%s' must be constant",
                            t->info->name);
    if (t->dtype == MP_DT_FLOAT32) {
        *out = t->data;
        return MP_OK;
    }
    const mp_quant *q = &t->info->quant;
    if (t->dtype != MP_DT_FLOAT16 && t->dtype != MP_DT_INT8 && t->dtype != MP_DT_UINT8)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED, "weights '%s' have unsupported dtype %s",
                            t->info->name, mp_dtype_name(t->dtype));
    if (t->dtype != MP_DT_FLOAT16 && q->count < 1)
        return mp_node_fail(n, MP_ERR_UNSUPPORTED,
                            "weights '%s' are %s without quantization parameters",
                            t->info->name, mp_dtype_name(t->dtype));
    if (t->dtype != MP_DT_FLOAT16 && q->count > 1 &&
        (q->quantized_dimension < 0 || q->quantized_dimension >= t->rank ||
         t->dims[q->quantized_dimension] != q->count))
        return mp_node_fail(n, MP_ERR_FORMAT, "weights '%s': %d scales do not match dimension %d",
                            t->info->name, q->count, q->quantized_dimension);
    size_t count = mp_tensor_elements(t);
    float *f = mp_mem_alloc(n->mem, count * sizeof(float) + 16, 0, MP_MEM_KERNEL,
                            MP_OWNER_OP(n->index));
    if (!f)
        return mp_node_fail(n, MP_ERR_NOMEM, "out of memory dequantizing '%s'", t->info->name);
    mp_dequantize_to_f32(t, f);
    *out = f;
    *owned = f;
    return MP_OK;
}

bool mp_dequantize_to_f32(const mp_tensor *t, float *f)
{
    size_t count = mp_tensor_elements(t);
    if (t->dtype == MP_DT_FLOAT16) {
        const uint16_t *h = t->data;
        for (size_t i = 0; i < count; i++)
            f[i] = mp_half_to_float(h[i]);
        return true;
    }
    const mp_quant *q = &t->info->quant;
    if ((t->dtype != MP_DT_INT8 && t->dtype != MP_DT_UINT8) || q->count < 1)
        return false;
    /* per-channel along quantized_dimension: index -> channel */
    size_t inner = 1, channels = 1;
    if (q->count > 1) {
        int32_t d = q->quantized_dimension;
        if (d < 0 || d >= t->rank || t->dims[d] != q->count)
            return false;
        channels = (size_t)q->count;
        for (int32_t i = d + 1; i < t->rank; i++)
            inner *= (size_t)t->dims[i];
    }
    for (size_t i = 0; i < count; i++) {
        size_t c = channels > 1 ? (i / inner) % channels : 0;
        float scale = q->scale[c];
        int64_t zp = q->zero_point ? q->zero_point[c] : 0;
        int32_t v = t->dtype == MP_DT_INT8 ? ((const int8_t *)t->data)[i]
                                           : ((const uint8_t *)t->data)[i];
        f[i] = scale * (float)(v - zp);
    }
    return true;
}

mp_status mp_xnn_status(enum xnn_status xs)
{
    switch (xs) {
    case xnn_status_success: return MP_OK;
    case xnn_status_out_of_memory: return MP_ERR_NOMEM;
    case xnn_status_invalid_parameter:
    case xnn_status_unsupported_parameter:
    case xnn_status_unsupported_hardware: return MP_ERR_UNSUPPORTED;
    default: return MP_ERR_BACKEND;
    }
}

const char *mp_xnn_status_text(enum xnn_status xs)
{
    switch (xs) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "XNNPACK is not initialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
    default: return "failed";
    }
}

enum xnn_status mp_xnn_created(enum xnn_status xs, const void *obj)
{
    return xs == xnn_status_success && !obj ? xnn_status_out_of_memory : xs;
}

mp_status mp_node_xnn_fail(mp_node *n, enum xnn_status xs, const char *what)
{
    return mp_node_fail(n, mp_xnn_status(xs), "XNNPACK %s: %s (status %d)", what,
                        mp_xnn_status_text(xs), (int)xs);
}

void mp_xnn_delete(xnn_operator_t *op)
{
    if (*op)
        xnn_delete_operator(*op);
    *op = NULL;
}

void mp_node_free_state(mp_node *n, xnn_operator_t *op)
{
    if (op)
        mp_xnn_delete(op);
    mp_mem_free(n->mem, n->state);
    n->state = NULL;
}

mp_status mp_node_set_output_shape(mp_node *n, int32_t rank, const int32_t *dims)
{
    if (!mp_tensor_set_shape(n->out[0], rank, dims))
        return mp_node_fail(n, MP_ERR_SHAPE, "output '%s' is too large", mp_tname(n->out[0]));
    return MP_OK;
}

void *mp_node_state(mp_node *n, size_t size)
{
    if (!n->state) {
        n->state = mp_mem_calloc(n->mem, size, 0, MP_MEM_KERNEL, MP_OWNER_OP(n->index));
        if (!n->state)
            mp_node_fail(n, MP_ERR_NOMEM, "out of memory for kernel state");
    }
    return n->state;
}
