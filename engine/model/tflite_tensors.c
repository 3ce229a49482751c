/* The tensors of a .tflite model (part of the reader, see tflite_reader.c): name, dtype,
 * shape and signature, quantization, and constant data located in the file, checked against
 * the dtype and shape, used in place when aligned and counted once in const_bytes; a sparse
 * constant is expanded to its dense form by tflite_sparsity.c. */
#include "engine/model/tflite_reader_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_limits.h"
#include "engine/model/flatbuf.h"
#include "engine/model/model.h"

/* ---- buffers and constant data ------------------------------------------------------- */

/* Locate the bytes of buffer `b` (already range-checked, b != 0). */
static mp_status read_buffer(rd *r, uint32_t b, const uint8_t **data, size_t *bytes)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_table t;
    mp_fb_vec v;
    uint64_t off, size;
    *data = NULL;
    *bytes = 0;
    mp_fb_where(fb, "buffer %u", b);
    if (!mp_fb_vec_table(fb, &r->buffers, b, "table", &t) ||
        !mp_fb_vector(fb, &t, BUF_DATA, 1, "data", &v) ||
        !mp_fb_u64(fb, &t, BUF_OFFSET, 0, "offset", &off) ||
        !mp_fb_u64(fb, &t, BUF_SIZE, 0, "size", &size))
        return mp_tfl_fb_fault(r);
    /* Models over 2 GB keep data outside the FlatBuffer: offset (from the start of the
     * file) and size, with offset > 1 meaning "in use" per the schema. */
    if (off > 1) {
        uint64_t end;
        if (__builtin_add_overflow(off, size, &end) || end > (uint64_t)fb->size)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "truncated: buffer %u data (offset %llu, %llu bytes) ends past end of file (%zu bytes)",
                           b, (unsigned long long)off, (unsigned long long)size, fb->size);
        *data = fb->base + off;
        *bytes = (size_t)size;
        return MP_OK;
    }
    if (v.n) {
        *data = mp_fb_vec_data(fb, &v);
        *bytes = v.n;
    }
    return MP_OK;
}

/* Natural alignment of one element: constant data must honour it because kernels read
 * it in place through typed pointers. */
static size_t dtype_align(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_COMPLEX64: return 4;
    case MP_DT_COMPLEX128: return 8;
    default: {
        size_t s = mp_dtype_size(dt);
        return s ? s : 1;
    }
    }
}

/* A constant string tensor holds: int32 count, int32 offsets[count + 1], then the bytes;
 * offsets are from the start of the data. */
static mp_status check_string_data(rd *r, int32_t i, const char *nm, const uint8_t *d, size_t bytes,
                                   size_t elements)
{
    int32_t count;
    if (bytes < 4)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string data is %zu bytes, too short", i, nm, bytes);
    memcpy(&count, d, 4);
    if (count < 0 || (size_t)count != elements)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string data holds %d strings but the shape has %zu",
                       i, nm, count, elements);
    size_t header = 4 * ((size_t)count + 2);
    if (header > bytes)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string offsets end past its data (%zu bytes)",
                       i, nm, bytes);
    int32_t prev = (int32_t)header;
    for (int32_t k = 0; k <= count; k++) {
        int32_t o;
        memcpy(&o, d + 4 + 4 * (size_t)k, 4);
        if (o < prev || (size_t)o > bytes || (k == 0 && (size_t)o != header))
            return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string offset %d is %d, out of order or past its data",
                           i, nm, k, o);
        prev = o;
    }
    return MP_OK;
}

/* ---- tensors ------------------------------------------------------------------------- */

/* The shape and signature of tensor i, checked. */
static mp_status read_tensor_shape(rd *r, int32_t i, const char *nm, const mp_fb_vec *shape,
                                   const mp_fb_vec *sig, mp_tensor_info *ti)
{
    mp_fb_reader *fb = &r->fb;
    /* Shape: rank bounded by MP_MAX_RANK, no negative dimensions (those belong in the
     * signature). */
    if (shape->n > MP_MAX_RANK)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s' has rank %u; memprof supports up to %d dimensions",
                       i, nm, shape->n, MP_MAX_RANK);
    ti->rank = (int32_t)shape->n;
    for (uint32_t k = 0; k < shape->n; k++) {
        ti->shape[k] = mp_fb_vec_i32(fb, shape, k);
        if (ti->shape[k] < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s' has dimension %u = %d in its shape (negative dimensions belong in shape_signature)",
                           i, nm, k, ti->shape[k]);
    }
    /* Signature: same rank, each dimension -1 (dynamic) or equal to the shape. Without
     * one, the signature is the shape itself. */
    ti->has_signature = sig->present;
    if (sig->present && sig->n != shape->n)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': shape_signature has rank %u but shape has rank %u",
                       i, nm, sig->n, shape->n);
    for (int32_t k = 0; k < ti->rank; k++) {
        int32_t s = sig->present ? mp_fb_vec_i32(fb, sig, (uint32_t)k) : ti->shape[k];
        if (s != -1 && s != ti->shape[k])
            return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': shape_signature[%d] = %d does not match shape[%d] = %d",
                           i, nm, k, s, k, ti->shape[k]);
        ti->signature[k] = s;
    }
    return MP_OK;
}

/* Tensor i's element count (*counted false when it overflows) and its declared size against
 * MP_MAX_TENSOR_BYTES (strings have no fixed size). */
static mp_status check_tensor_size(rd *r, int32_t i, const char *nm, const mp_tensor_info *ti,
                                   bool *counted, size_t *elements)
{
    size_t esize = mp_dtype_size(ti->dtype);
    *counted = mp_shape_elements(ti->rank, ti->shape, elements);
    unsigned long long declared = ti->dtype == MP_DT_INT4 ? *elements / 2 + (*elements & 1)
                                                          : (unsigned long long)*elements * esize;
    if (ti->dtype != MP_DT_STRING &&
        (!*counted || (esize > 0 && *elements > MP_MAX_TENSOR_BYTES / esize) ||
         declared > MP_MAX_TENSOR_BYTES))
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s' is larger than memprof's limit of %llu bytes per tensor (MP_MAX_TENSOR_BYTES)",
                       i, nm, (unsigned long long)MP_MAX_TENSOR_BYTES);
    return MP_OK;
}

/* The file's array of n elements at p, used in place when aligned, else copied into model
 * memory (unaligned loads through float or int64 pointers are undefined behaviour). NULL
 * when out of memory. */
static const void *in_place_or_copy(rd *r, const void *p, size_t n, size_t elem, size_t align)
{
    if ((uintptr_t)p % align == 0)
        return p;
    void *c = mp_tfl_array(r->im, n, elem);
    if (c)
        memcpy(c, p, n * elem);
    return c;
}

/* The zero points TensorFlow Lite's quantization specification allows for a dtype: the
 * type's range for uint8 and int8 (int4 too), 0 for int16 activations and for int32/int64
 * biases. False for dtypes it says nothing about (floats carry min/max or scales that no
 * kernel reads as integers; unsigned wide types are not used quantized). */
static bool zero_point_range(mp_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case MP_DT_UINT8: *lo = 0; *hi = 255; return true;
    case MP_DT_INT8: *lo = -128; *hi = 127; return true;
    case MP_DT_INT4: *lo = -8; *hi = 7; return true;
    case MP_DT_INT16:
    case MP_DT_INT32:
    case MP_DT_INT64: *lo = 0; *hi = 0; return true;
    default: return false;
    }
}

/* Integer dtypes whose scales are used in integer arithmetic: their scales must be
 * positive and finite (a zero scale divides by zero in requantization). */
static bool quantized_integer(mp_dtype dt)
{
    switch (dt) {
    case MP_DT_UINT8: case MP_DT_INT8: case MP_DT_INT4: case MP_DT_INT16: case MP_DT_UINT16:
    case MP_DT_INT32: case MP_DT_UINT32: case MP_DT_INT64: case MP_DT_UINT64:
        return true;
    default:
        return false;
    }
}

/* The values of tensor i's quantization parameters (arrays already read, lengths and
 * dimension checked) against the specification: every scale positive and finite, every zero
 * point inside its dtype's range (0 for int16, int32 and int64). Float tensors keep whatever
 * they carry (TensorFlow Lite ignores it for them). */
static mp_status check_quant_values(rd *r, int32_t i, const char *nm, const mp_tensor_info *ti)
{
    const mp_quant *q = &ti->quant;
    if (!quantized_integer(ti->dtype))
        return MP_OK;
    char where[40] = "";
    for (int32_t k = 0; k < q->count; k++) {
        float s = q->scale[k];
        if (q->count > 1)
            snprintf(where, sizeof where, " (channel %d)", k);
        if (!(s > 0.0f) || !isfinite(s))
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s' has quantization scale %g%s; a scale must be positive and finite",
                               i, nm, (double)s, where);
    }
    int64_t lo, hi;
    if (!q->zero_point || !zero_point_range(ti->dtype, &lo, &hi))
        return MP_OK;
    for (int32_t k = 0; k < q->count; k++) {
        int64_t z = q->zero_point[k];
        if (q->count > 1)
            snprintf(where, sizeof where, " (channel %d)", k);
        if (z < lo || z > hi) {
            if (lo == hi)
                return mp_tfl_fail(r, MP_ERR_FORMAT,
                                   "tensor %d '%s' has zero point %lld%s; %s tensors are quantized symmetrically (zero point 0)",
                                   i, nm, (long long)z, where, mp_dtype_name(ti->dtype));
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                               "tensor %d '%s' has zero point %lld%s, outside the %s range %lld..%lld",
                               i, nm, (long long)z, where, mp_dtype_name(ti->dtype), (long long)lo,
                               (long long)hi);
        }
    }
    return MP_OK;
}

/* The quantization parameters of tensor i (table q, present): per-tensor or per-channel
 * scales and zero points, used in place when aligned, and checked (see model.h, mp_quant).
 * As in TensorFlow Lite, a table without scales (min/max only, or zero points alone) means
 * "not quantized", and absent zero points mean all zero. */
static mp_status read_tensor_quant(rd *r, int32_t i, const char *nm, const mp_fb_table *q,
                                   mp_tensor_info *ti)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_vec scale, zp;
    uint8_t details;
    int32_t qdim;
    mp_fb_where(fb, "tensor %d quantization", i);
    if (!mp_fb_vector(fb, q, Q_SCALE, 4, "scale", &scale) ||
        !mp_fb_vector(fb, q, Q_ZERO_POINT, 8, "zero_point", &zp) ||
        !mp_fb_u8(fb, q, Q_DETAILS_TYPE, 0, "details_type", &details) ||
        !mp_fb_i32(fb, q, Q_QUANTIZED_DIMENSION, 0, "quantized_dimension", &qdim))
        return mp_tfl_fb_fault(r);
    if (details != 0)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s' uses custom quantization, which is not supported",
                       i, nm);
    if (scale.n == 0)
        return MP_OK;
    if (scale.n > INT32_MAX)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s' has %u quantization scales", i, nm, scale.n);
    if (zp.n != 0 && zp.n != scale.n)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s' has %u quantization scales but %u zero points",
                       i, nm, scale.n, zp.n);
    /* Some TOCO files (tfmicro person_detect) give a rank-1 bias the filter's
     * quantized_dimension (3); the only dimension it can mean is 0. */
    if (ti->rank == 1 && qdim > 0 && qdim < MP_MAX_RANK &&
        (scale.n == 1 || (uint32_t)ti->shape[0] == scale.n))
        qdim = 0;
    /* The dimension must exist (TensorFlow Lite's rule, a scalar aside), and per-channel
     * parameters need one entry per slice along it. */
    if (qdim < 0 || (ti->rank > 0 && qdim >= ti->rank) || (ti->rank == 0 && scale.n > 1))
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s' has quantized_dimension %d, out of range for its rank %d",
                           i, nm, qdim, ti->rank);
    if (scale.n > 1 && (uint32_t)ti->shape[qdim] != scale.n)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s' has %u per-channel scales along dimension %d, which has %d channels",
                           i, nm, scale.n, qdim, ti->shape[qdim]);
    ti->quant.count = (int32_t)scale.n;
    ti->quant.quantized_dimension = qdim;
    ti->quant.scale = in_place_or_copy(r, mp_fb_vec_data(fb, &scale), scale.n, sizeof(float),
                                       _Alignof(float));
    if (!ti->quant.scale)
        return mp_tfl_nomem(r);
    if (zp.n) {
        ti->quant.zero_point = in_place_or_copy(r, mp_fb_vec_data(fb, &zp), zp.n,
                                                sizeof(int64_t), _Alignof(int64_t));
        if (!ti->quant.zero_point)
            return mp_tfl_nomem(r);
    }
    return check_quant_values(r, i, nm, ti);
}

/* Tensor i's constant data (bytes at data) against its dtype and element count. */
static mp_status check_const_size(rd *r, int32_t i, const char *nm, const mp_tensor_info *ti,
                                  const uint8_t *data, size_t bytes, bool counted, size_t elements)
{
    size_t esize = mp_dtype_size(ti->dtype);
    if (!counted)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': element count overflows", i, nm);
    if (ti->dtype == MP_DT_STRING) {
        return check_string_data(r, i, nm, data, bytes, elements);
    } else if (ti->dtype == MP_DT_INT4) {
        size_t need = elements / 2 + (elements & 1); /* two values per byte */
        if (need != bytes)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': constant data is %zu bytes but %zu i4 values need %zu",
                           i, nm, bytes, elements, need);
    } else if (esize == 0 || ti->dtype == MP_DT_RESOURCE) { /* a handle is made by VAR_HANDLE */
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s': constant %s data is not supported",
                       i, nm, mp_dtype_name(ti->dtype));
    } else {
        size_t need;
        if (__builtin_mul_overflow(elements, esize, &need))
            return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s': %zu %s elements overflow the address space",
                           i, nm, elements, mp_dtype_name(ti->dtype));
        if (need != bytes)
            return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': constant data is %zu bytes but %zu %s elements need %zu",
                           i, nm, bytes, elements, mp_dtype_name(ti->dtype), need);
    }
    return MP_OK;
}

/* The bytes of tensor i's buffer buf, range-checked (*data NULL, *bytes 0 for buffer 0, the
 * schema's empty sentinel). */
static mp_status locate_data(rd *r, int32_t i, const char *nm, uint32_t buf, mp_tensor_info *ti,
                             const uint8_t **data, size_t *bytes)
{
    uint32_t n_buffers = r->buffers.n;
    *data = NULL;
    *bytes = 0;
    if (buf != 0 && (buf >= n_buffers || buf > INT32_MAX))
        return mp_tfl_fail(r, MP_ERR_FORMAT, "tensor %d '%s' refers to buffer %u but the model has %u buffers",
                       i, nm, buf, n_buffers);
    ti->buffer = (int32_t)buf;
    return buf == 0 ? MP_OK : read_buffer(r, buf, data, bytes);
}

/* An int4 constant of `elements` values packed two to a byte, the first in the low nibble
 * (TensorFlow Lite's layout; an odd count leaves the last high nibble unused), unpacked into
 * int8 model memory: every kernel then reads int8 weights with the same quantization, as
 * TensorFlow Lite's kernels unpack them before computing. The copy counts in heap_bytes and
 * unpacked_bytes, not in const_bytes. */
static mp_status unpack_int4(rd *r, const uint8_t *data, size_t elements, mp_tensor_info *ti)
{
    int8_t *out = mp_tfl_data(r->im, elements);
    if (!out)
        return mp_tfl_nomem(r);
    for (size_t k = 0; k < elements; k++) {
        unsigned nib = (k % 2 == 0 ? data[k / 2] : data[k / 2] >> 4) & 15u;
        out[k] = (int8_t)((int)nib - (nib >= 8 ? 16 : 0));
    }
    ti->data = out;
    ti->data_bytes = elements;
    ti->dtype = MP_DT_INT8;
    ti->packed_int4 = true;
    r->m->unpacked_bytes += elements;
    return MP_OK;
}

/* Tensor i's constant data, from buffer buf: checked against its dtype and shape, used in
 * place when aligned (and counted once in const_bytes), else copied (int4: unpacked). */
static mp_status read_tensor_data(rd *r, int32_t i, const char *nm, uint32_t buf, bool counted,
                                  size_t elements, mp_tensor_info *ti)
{
    /* Constant data. Buffer 0 is the schema's empty sentinel; an empty buffer means the
     * tensor is computed at run time. */
    const uint8_t *data;
    size_t bytes;
    mp_status st = locate_data(r, i, nm, buf, ti, &data, &bytes);
    if (st == MP_OK && bytes == 0 && ti->dtype == MP_DT_INT4)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED,
                           "tensor %d '%s' is i4 without constant data: memprof runs int4 only "
                           "as packed constant weights", i, nm);
    if (st != MP_OK || bytes == 0)
        return st;

    st = check_const_size(r, i, nm, ti, data, bytes, counted, elements);
    if (st != MP_OK)
        return st;
    if (ti->dtype == MP_DT_INT4)
        return unpack_int4(r, data, elements, ti);
    /* Kernels read constants in place through typed pointers, so the data must have its
     * element's natural alignment. Converters only guarantee 4 bytes in practice (the
     * schema's force_align 16 is often not honoured), so an 8-byte type can land on a
     * 4-byte boundary: such data (rare, and always small in real models) is copied into
     * aligned model memory instead of being refused. Only data used in place counts in
     * const_bytes. */
    ti->data_bytes = bytes;
    if ((uintptr_t)data % dtype_align(ti->dtype) != 0) {
        void *copy = mp_tfl_alloc(r->im, bytes);
        if (!copy)
            return mp_tfl_nomem(r);
        memcpy(copy, data, bytes);
        ti->data = copy;
        return MP_OK;
    }
    ti->data = data;
    /* A buffer shared by several tensors is mapped once: count it once. */
    if (!(r->counted[buf / 8] & (1u << (buf % 8)))) {
        r->counted[buf / 8] |= (uint8_t)(1u << (buf % 8));
        r->m->const_bytes += bytes;
    }
    return MP_OK;
}

/* Tensor i of the subgraph: its name, dtype, shape and signature, quantization and constant
 * data, each checked. */
mp_status mp_tfl_read_tensor(rd *r, const mp_fb_vec *tensors, int32_t i, mp_tensor_info *ti)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_table t, q, sparsity;
    mp_fb_vec shape, sig;
    int8_t type;
    uint32_t buf, name_len;
    const char *name;
    char nm[80];

    mp_fb_where(fb, "tensor %d", i);
    if (!mp_fb_vec_table(fb, tensors, (uint32_t)i, "table", &t) ||
        !mp_fb_vector(fb, &t, T_SHAPE, 4, "shape", &shape) ||
        !mp_fb_i8(fb, &t, T_TYPE, 0, "type", &type) ||
        !mp_fb_u32(fb, &t, T_BUFFER, 0, "buffer", &buf) ||
        !mp_fb_string(fb, &t, T_NAME, "name", &name, &name_len) ||
        !mp_fb_sub_table(fb, &t, T_QUANT, "quantization", &q) ||
        !mp_fb_bool(fb, &t, T_IS_VARIABLE, false, "is_variable", &ti->is_variable) ||
        !mp_fb_sub_table(fb, &t, T_SPARSITY, "sparsity", &sparsity) ||
        !mp_fb_vector(fb, &t, T_SHAPE_SIGNATURE, 4, "shape_signature", &sig))
        return mp_tfl_fb_fault(r);

    ti->name = mp_tfl_strdup(r->im, name ? name : "", name_len);
    if (!ti->name)
        return mp_tfl_nomem(r);
    mp_tfl_safe(ti->name, nm, sizeof nm);

    if (type < 0 || type >= MP_DT_COUNT)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s' has unknown dtype %d", i, nm, type);
    ti->dtype = (mp_dtype)type;

    mp_status st = read_tensor_shape(r, i, nm, &shape, &sig, ti);
    bool counted = false;
    size_t elements = 0;
    if (st == MP_OK)
        st = check_tensor_size(r, i, nm, ti, &counted, &elements);
    if (st == MP_OK && q.present)
        st = read_tensor_quant(r, i, nm, &q, ti);
    if (st != MP_OK)
        return st;
    if (sparsity.present) { /* a sparse constant: its dense form (tflite_sparsity.c) */
        const uint8_t *data;
        size_t bytes;
        if ((st = locate_data(r, i, nm, buf, ti, &data, &bytes)) != MP_OK)
            return st;
        return mp_tfl_read_sparse(r, i, nm, &sparsity, data, bytes, elements, ti);
    }
    return read_tensor_data(r, i, nm, buf, counted, elements, ti);
}
