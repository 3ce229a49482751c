/* .tflite reader: maps a TensorFlow Lite model, verifies it, and builds an mp_model.
 *
 * The file is never trusted. Every structure is reached through the bounds-checked
 * FlatBuffers helpers in flatbuf.h, and every index the rest of the engine will follow
 * (tensor, operator code, buffer) is range-checked here, so code above the reader can
 * index without checking again. Constant tensor data is not copied: tensors point into
 * the read-only file mapping (load_file) or into one owned anonymous mapping holding a
 * copy (load_memory).
 * The one exception is data not aligned for its element type (an 8-byte type on a 4-byte
 * boundary, which converters do produce): it is copied into aligned model memory so
 * kernels can read it through typed pointers, and left out of const_bytes.
 *
 * Faults are reported as one line naming the file and the fault; the status tells what
 * kind: MP_ERR_IO (cannot open or map), MP_ERR_FORMAT (malformed, truncated, empty,
 * several subgraphs), MP_ERR_UNSUPPORTED (a valid model using something memprof does not
 * read: custom or unknown operators, sparse tensors, rank above MP_MAX_RANK...).
 *
 * All bookkeeping (tensor and operator tables, names, index arrays) lives in a small
 * arena owned by the model, so every error path just frees the whole model. */
#include "engine/model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine_limits.h"
#include "engine/model/flatbuf.h"

/* Schema version this reader understands (the "3" in the TFL3 identifier). */
#define TFL_SCHEMA_VERSION 3

/* ---- field ids of the tables we read (schema.fbs order; unions take two ids) ----------- */
enum { MODEL_VERSION = 0, MODEL_OPERATOR_CODES = 1, MODEL_SUBGRAPHS = 2, MODEL_DESCRIPTION = 3,
       MODEL_BUFFERS = 4 };
enum { OPCODE_DEPRECATED_BUILTIN = 0, OPCODE_CUSTOM = 1, OPCODE_VERSION = 2, OPCODE_BUILTIN = 3 };
enum { SG_TENSORS = 0, SG_INPUTS = 1, SG_OUTPUTS = 2, SG_OPERATORS = 3, SG_NAME = 4 };
enum { BUF_DATA = 0, BUF_OFFSET = 1, BUF_SIZE = 2 };
enum { T_SHAPE = 0, T_TYPE = 1, T_BUFFER = 2, T_NAME = 3, T_QUANT = 4, T_IS_VARIABLE = 5,
       T_SPARSITY = 6, T_SHAPE_SIGNATURE = 7 };
enum { Q_MIN = 0, Q_MAX = 1, Q_SCALE = 2, Q_ZERO_POINT = 3, Q_DETAILS_TYPE = 4, Q_DETAILS = 5,
       Q_QUANTIZED_DIMENSION = 6 };
enum { OP_OPCODE_INDEX = 0, OP_INPUTS = 1, OP_OUTPUTS = 2, OP_OPTIONS_TYPE = 3, OP_OPTIONS = 4,
       OP_INTERMEDIATES = 8 };

/* BuiltinOptions union members we map (their union type numbers in schema.fbs). */
enum {
    BO_NONE = 0,
    BO_CONV2D = 1,
    BO_DEPTHWISE_CONV2D = 2,
    BO_POOL2D = 5,
    BO_SVDF = 6,
    BO_RNN = 7,
    BO_FULLY_CONNECTED = 8,
    BO_SOFTMAX = 9,
    BO_CONCATENATION = 10,
    BO_ADD = 11,
    BO_L2NORM = 12,
    BO_LSTM = 14,
    BO_RESIZE_BILINEAR = 15,
    BO_RESHAPE = 17,
    BO_MUL = 21,
    BO_GATHER = 23,
    BO_REDUCER = 27,
    BO_SUB = 28,
    BO_DIV = 29,
    BO_SQUEEZE = 30,
    BO_SEQUENCE_RNN = 31,
    BO_STRIDED_SLICE = 32,
    BO_CAST = 37,
    BO_TRANSPOSE_CONV = 49,
    BO_SHAPE = 55,
    BO_PACK = 59,
    BO_ONE_HOT = 61,
    BO_UNPACK = 64,
    BO_BIDI_SEQUENCE_LSTM = 69,
    BO_BIDI_SEQUENCE_RNN = 70,
    BO_UNI_SEQUENCE_LSTM = 71,
    BO_RESIZE_NEAREST = 74,
    BO_CONV3D = 106,
};

/* Which options table an operator carries, and its name for messages. */
typedef struct opt_kind {
    int code;
    uint8_t type;
    const char *table;
} opt_kind;

static const opt_kind k_opt_kinds[] = {
    {MP_OP_CONV_2D, BO_CONV2D, "Conv2DOptions"},
    {MP_OP_DEPTHWISE_CONV_2D, BO_DEPTHWISE_CONV2D, "DepthwiseConv2DOptions"},
    {MP_OP_AVERAGE_POOL_2D, BO_POOL2D, "Pool2DOptions"},
    {MP_OP_MAX_POOL_2D, BO_POOL2D, "Pool2DOptions"},
    {MP_OP_L2_POOL_2D, BO_POOL2D, "Pool2DOptions"},
    {MP_OP_SVDF, BO_SVDF, "SVDFOptions"},
    {MP_OP_RNN, BO_RNN, "RNNOptions"},
    {MP_OP_FULLY_CONNECTED, BO_FULLY_CONNECTED, "FullyConnectedOptions"},
    {MP_OP_SOFTMAX, BO_SOFTMAX, "SoftmaxOptions"},
    {MP_OP_CONCATENATION, BO_CONCATENATION, "ConcatenationOptions"},
    {MP_OP_ADD, BO_ADD, "AddOptions"},
    {MP_OP_L2_NORMALIZATION, BO_L2NORM, "L2NormOptions"},
    {MP_OP_LSTM, BO_LSTM, "LSTMOptions"},
    {MP_OP_RESIZE_BILINEAR, BO_RESIZE_BILINEAR, "ResizeBilinearOptions"},
    {MP_OP_RESHAPE, BO_RESHAPE, "ReshapeOptions"},
    {MP_OP_MUL, BO_MUL, "MulOptions"},
    {MP_OP_GATHER, BO_GATHER, "GatherOptions"},
    {MP_OP_MEAN, BO_REDUCER, "ReducerOptions"},
    {MP_OP_SUM, BO_REDUCER, "ReducerOptions"},
    {MP_OP_REDUCE_PROD, BO_REDUCER, "ReducerOptions"},
    {MP_OP_REDUCE_MAX, BO_REDUCER, "ReducerOptions"},
    {MP_OP_REDUCE_MIN, BO_REDUCER, "ReducerOptions"},
    {MP_OP_REDUCE_ANY, BO_REDUCER, "ReducerOptions"},
    {MP_OP_REDUCE_ALL, BO_REDUCER, "ReducerOptions"},
    {MP_OP_SUB, BO_SUB, "SubOptions"},
    {MP_OP_DIV, BO_DIV, "DivOptions"},
    {MP_OP_SQUEEZE, BO_SQUEEZE, "SqueezeOptions"},
    {MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN, BO_SEQUENCE_RNN, "SequenceRNNOptions"},
    {MP_OP_STRIDED_SLICE, BO_STRIDED_SLICE, "StridedSliceOptions"},
    {MP_OP_CAST, BO_CAST, "CastOptions"},
    {MP_OP_TRANSPOSE_CONV, BO_TRANSPOSE_CONV, "TransposeConvOptions"},
    {MP_OP_SHAPE, BO_SHAPE, "ShapeOptions"},
    {MP_OP_PACK, BO_PACK, "PackOptions"},
    {MP_OP_ONE_HOT, BO_ONE_HOT, "OneHotOptions"},
    {MP_OP_UNPACK, BO_UNPACK, "UnpackOptions"},
    {MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM, BO_BIDI_SEQUENCE_LSTM, "BidirectionalSequenceLSTMOptions"},
    {MP_OP_BIDIRECTIONAL_SEQUENCE_RNN, BO_BIDI_SEQUENCE_RNN, "BidirectionalSequenceRNNOptions"},
    {MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, BO_UNI_SEQUENCE_LSTM, "UnidirectionalSequenceLSTMOptions"},
    {MP_OP_RESIZE_NEAREST_NEIGHBOR, BO_RESIZE_NEAREST, "ResizeNearestNeighborOptions"},
    {MP_OP_CONV_3D, BO_CONV3D, "Conv3DOptions"},
    {MP_OP_CONV_3D_TRANSPOSE, BO_CONV3D, "Conv3DOptions"},
};

static const opt_kind *find_opt_kind(int code)
{
    for (size_t i = 0; i < sizeof k_opt_kinds / sizeof k_opt_kinds[0]; i++)
        if (k_opt_kinds[i].code == code)
            return &k_opt_kinds[i];
    return NULL;
}

/* Whether input `idx` of an operator may be -1 (omitted optional input). These are the
 * operators whose TensorFlow Lite kernels document optional inputs; for the recurrent
 * families almost every input after the first is optional, so the kernel decides. */
static bool optional_input(int code, uint32_t idx)
{
    switch (code) {
    case MP_OP_CONV_2D:
    case MP_OP_DEPTHWISE_CONV_2D:
    case MP_OP_FULLY_CONNECTED:
    case MP_OP_CONV_3D:
    case MP_OP_LSH_PROJECTION:
        return idx == 2; /* bias (LSH_PROJECTION: weight) */
    case MP_OP_TRANSPOSE_CONV:
    case MP_OP_CONV_3D_TRANSPOSE:
    case MP_OP_SVDF:
        return idx == 3; /* bias */
    case MP_OP_LSTM:
    case MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM:
    case MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM:
    case MP_OP_BIDIRECTIONAL_SEQUENCE_RNN:
        return idx >= 1;
    default:
        return false;
    }
}

/* ---- model-owned memory -------------------------------------------------------------- */

/* Arena chunk: allocations are bumped out of `data`, all freed together. */
typedef struct rd_chunk {
    struct rd_chunk *next;
    size_t cap, used;
    max_align_t data[];
} rd_chunk;

#define RD_CHUNK_BYTES ((size_t)64 * 1024)
#define RD_ALIGN ((size_t)16)

/* Reader-private part of an mp_model (mp_model.impl). */
typedef struct rd_impl {
    void *map;          /* read-only file mapping (load_file), or NULL */
    size_t map_len;
    rd_chunk *chunks;   /* bookkeeping arena; the first chunk is the one being filled */
    size_t used;        /* arena bytes handed out */
    size_t heap;        /* bytes of the chunks (malloc'ed) */
    size_t budget;      /* limit on `used` (see budget_for) */
    bool over_budget;   /* an allocation was refused because of the budget */
} rd_impl;

/* FlatBuffers may share one sub-object between many parents: a file of n bytes can list
 * n/4 operators that all point at the same n/4-entry input vector, or n/4 tensors sharing
 * one long name. Copying those naively needs memory quadratic in the file size, so the
 * bookkeeping of a model is capped at a generous multiple of its size; real models use a
 * small fraction of this. */
static size_t budget_for(size_t file_bytes)
{
    size_t b;
    if (__builtin_mul_overflow(file_bytes, (size_t)16, &b) ||
        __builtin_add_overflow(b, (size_t)16 << 20, &b))
        return SIZE_MAX;
    return b;
}

/* Allocate n bytes (16-aligned; n == 0 gives a valid pointer). NULL when out of memory or
 * over budget. */
static void *arena_alloc(rd_impl *im, size_t n)
{
    size_t need;
    if (__builtin_add_overflow(n, RD_ALIGN - 1, &need))
        return NULL;
    need &= ~(RD_ALIGN - 1);
    if (need == 0)
        need = RD_ALIGN;
    if (need > im->budget - im->used) {
        im->over_budget = true;
        return NULL;
    }
    im->used += need;
    rd_chunk *c = im->chunks;
    if (c && c->cap - c->used >= need) {
        void *p = (unsigned char *)c->data + c->used;
        c->used += need;
        return p;
    }
    /* Big requests get a chunk of their own so the current chunk's tail is not wasted. */
    size_t cap = need > RD_CHUNK_BYTES / 4 ? need : RD_CHUNK_BYTES;
    size_t total;
    if (__builtin_add_overflow(sizeof(rd_chunk), cap, &total))
        return NULL;
    rd_chunk *nc = malloc(total);
    if (!nc)
        return NULL;
    im->heap += total;
    nc->cap = cap;
    nc->used = need;
    if (c && cap != RD_CHUNK_BYTES) {
        nc->next = c->next; /* keep the partly filled chunk first */
        c->next = nc;
    } else {
        nc->next = c;
        im->chunks = nc;
    }
    return nc->data;
}

static void *arena_array(rd_impl *im, size_t n, size_t elem)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, elem, &bytes))
        return NULL;
    void *p = arena_alloc(im, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

/* Copy a string from the file. Control characters become '?': names end up in one-line
 * error messages and terminal tables, which a crafted file must not be able to break. */
static char *arena_strdup(rd_impl *im, const char *s, size_t len)
{
    char *p = arena_alloc(im, len + 1);
    if (p) {
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)s[i];
            p[i] = (c < 0x20 && c != 0) || c == 0x7f ? '?' : (char)c;
        }
        p[len] = '\0';
    }
    return p;
}

void mp_model_free(mp_model *m)
{
    if (!m)
        return;
    rd_impl *im = m->impl;
    if (im) {
        if (im->map)
            munmap(im->map, im->map_len);
        rd_chunk *c = im->chunks;
        while (c) {
            rd_chunk *next = c->next;
            free(c);
            c = next;
        }
        free(im);
    }
    free(m);
}

/* ---- reading context and messages ---------------------------------------------------- */

typedef struct rd {
    mp_fb_reader fb;
    const char *path;   /* for messages */
    mp_error *err;
    mp_model *m;
    rd_impl *im;
    mp_fb_vec opcodes;     /* Model.operator_codes */
    mp_fb_vec buffers;     /* Model.buffers */
    uint8_t *counted;   /* one bit per buffer: already added to const_bytes */
} rd;

static mp_status rd_fail(rd *r, mp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static mp_status rd_fail(rd *r, mp_status st, const char *fmt, ...)
{
    char msg[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_fail(r->err, st, "%s: %s", r->path, msg);
}

/* A fault found by the FlatBuffers helpers. */
static mp_status rd_fb(rd *r)
{
    return rd_fail(r, MP_ERR_FORMAT, "%s", r->fb.msg[0] ? r->fb.msg : "malformed model");
}

static mp_status rd_nomem(rd *r)
{
    if (r->im->over_budget)
        return rd_fail(r, MP_ERR_FORMAT,
                       "malformed: the model's tables would need over %zu MB of bookkeeping for a %zu-byte file "
                       "(sub-objects shared implausibly often)",
                       r->im->budget >> 20, r->fb.size);
    return rd_fail(r, MP_ERR_NOMEM, "out of memory while reading the model");
}

/* A name from the file, made safe for a one-line message: non-printable bytes become '?'
 * and long names are cut. */
static const char *safe(const char *s, char *buf, size_t cap)
{
    size_t i = 0, max = cap - 1;
    if (!s)
        s = "";
    for (; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    buf[i] = '\0';
    if (s[i] && max >= 3)
        memcpy(buf + max - 3, "...", 3);
    return buf;
}

static const char *op_label(int code)
{
    const char *n = mp_op_name(code);
    return n ? n : "?";
}

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
        return rd_fb(r);
    /* Models over 2 GB keep data outside the FlatBuffer: offset (from the start of the
     * file) and size, with offset > 1 meaning "in use" per the schema. */
    if (off > 1) {
        uint64_t end;
        if (__builtin_add_overflow(off, size, &end) || end > (uint64_t)fb->size)
            return rd_fail(r, MP_ERR_FORMAT,
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
        return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string data is %zu bytes, too short", i, nm, bytes);
    memcpy(&count, d, 4);
    if (count < 0 || (size_t)count != elements)
        return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string data holds %d strings but the shape has %zu",
                       i, nm, count, elements);
    size_t header = 4 * ((size_t)count + 2);
    if (header > bytes)
        return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string offsets end past its data (%zu bytes)",
                       i, nm, bytes);
    int32_t prev = (int32_t)header;
    for (int32_t k = 0; k <= count; k++) {
        int32_t o;
        memcpy(&o, d + 4 + 4 * (size_t)k, 4);
        if (o < prev || (size_t)o > bytes || (k == 0 && (size_t)o != header))
            return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': string offset %d is %d, out of order or past its data",
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
        return rd_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s' has rank %u; memprof supports up to %d dimensions",
                       i, nm, shape->n, MP_MAX_RANK);
    ti->rank = (int32_t)shape->n;
    for (uint32_t k = 0; k < shape->n; k++) {
        ti->shape[k] = mp_fb_vec_i32(fb, shape, k);
        if (ti->shape[k] < 0)
            return rd_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s' has dimension %u = %d in its shape (negative dimensions belong in shape_signature)",
                           i, nm, k, ti->shape[k]);
    }
    /* Signature: same rank, each dimension -1 (dynamic) or equal to the shape. Without
     * one, the signature is the shape itself. */
    ti->has_signature = sig->present;
    if (sig->present && sig->n != shape->n)
        return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': shape_signature has rank %u but shape has rank %u",
                       i, nm, sig->n, shape->n);
    for (int32_t k = 0; k < ti->rank; k++) {
        int32_t s = sig->present ? mp_fb_vec_i32(fb, sig, (uint32_t)k) : ti->shape[k];
        if (s != -1 && s != ti->shape[k])
            return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': shape_signature[%d] = %d does not match shape[%d] = %d",
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
        return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s' is larger than memprof's limit of %llu bytes per tensor (MP_MAX_TENSOR_BYTES)",
                       i, nm, (unsigned long long)MP_MAX_TENSOR_BYTES);
    return MP_OK;
}

/* The quantization parameters of tensor i (table q, present): per-tensor or per-channel
 * scales and zero points, used in place when aligned. */
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
        return rd_fb(r);
    if (details != 0)
        return rd_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s' uses custom quantization, which is not supported",
                       i, nm);
    if (scale.n > 0) {
        if (scale.n > INT32_MAX)
            return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s' has %u quantization scales", i, nm, scale.n);
        if (zp.n != 0 && zp.n != scale.n)
            return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s' has %u quantization scales but %u zero points",
                           i, nm, scale.n, zp.n);
        /* Some TOCO files (tfmicro person_detect) give a rank-1 bias the filter's
         * quantized_dimension (3); the only dimension it can mean is 0. */
        if (scale.n > 1 && ti->rank == 1 && (uint32_t)ti->shape[0] == scale.n)
            qdim = 0;
        if (scale.n > 1 && (qdim < 0 || qdim >= ti->rank || (uint32_t)ti->shape[qdim] != scale.n))
            return rd_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s' has %u per-channel scales along dimension %d, which does not match its shape",
                           i, nm, scale.n, qdim);
        ti->quant.count = (int32_t)scale.n;
        ti->quant.quantized_dimension = qdim;
        /* Use the file's arrays in place when aligned, else copy them (unaligned loads
         * through float or int64 pointers are undefined behaviour). */
        const void *sp = mp_fb_vec_data(fb, &scale);
        if ((uintptr_t)sp % _Alignof(float) == 0) {
            ti->quant.scale = sp;
        } else {
            float *c = arena_array(r->im, scale.n, sizeof(float));
            if (!c)
                return rd_nomem(r);
            memcpy(c, sp, (size_t)scale.n * sizeof(float));
            ti->quant.scale = c;
        }
        if (zp.n) {
            const void *zpp = mp_fb_vec_data(fb, &zp);
            if ((uintptr_t)zpp % _Alignof(int64_t) == 0) {
                ti->quant.zero_point = zpp;
            } else {
                int64_t *c = arena_array(r->im, zp.n, sizeof(int64_t));
                if (!c)
                    return rd_nomem(r);
                memcpy(c, zpp, (size_t)zp.n * sizeof(int64_t));
                ti->quant.zero_point = c;
            }
        }
    }
    return MP_OK;
}

/* Tensor i's constant data (bytes at data) against its dtype and element count. */
static mp_status check_const_size(rd *r, int32_t i, const char *nm, const mp_tensor_info *ti,
                                  const uint8_t *data, size_t bytes, bool counted, size_t elements)
{
    size_t esize = mp_dtype_size(ti->dtype);
    if (!counted)
        return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': element count overflows", i, nm);
    if (ti->dtype == MP_DT_STRING) {
        return check_string_data(r, i, nm, data, bytes, elements);
    } else if (ti->dtype == MP_DT_INT4) {
        size_t need = elements / 2 + (elements & 1); /* two values per byte */
        if (need != bytes)
            return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': constant data is %zu bytes but %zu i4 values need %zu",
                           i, nm, bytes, elements, need);
    } else if (esize == 0) {
        return rd_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s': constant %s data is not supported",
                       i, nm, mp_dtype_name(ti->dtype));
    } else {
        size_t need;
        if (__builtin_mul_overflow(elements, esize, &need))
            return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s': %zu %s elements overflow the address space",
                           i, nm, elements, mp_dtype_name(ti->dtype));
        if (need != bytes)
            return rd_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s': constant data is %zu bytes but %zu %s elements need %zu",
                           i, nm, bytes, elements, mp_dtype_name(ti->dtype), need);
    }
    return MP_OK;
}

/* Tensor i's constant data, from buffer buf: checked against its dtype and shape, used in
 * place when aligned (and counted once in const_bytes), else copied. */
static mp_status read_tensor_data(rd *r, int32_t i, const char *nm, uint32_t buf, bool counted,
                                  size_t elements, mp_tensor_info *ti)
{
    /* Constant data. Buffer 0 is the schema's empty sentinel; an empty buffer means the
     * tensor is computed at run time. */
    uint32_t n_buffers = r->buffers.n;
    if (buf != 0 && (buf >= n_buffers || buf > INT32_MAX))
        return rd_fail(r, MP_ERR_FORMAT, "tensor %d '%s' refers to buffer %u but the model has %u buffers",
                       i, nm, buf, n_buffers);
    ti->buffer = (int32_t)buf;
    if (buf == 0)
        return MP_OK;
    const uint8_t *data;
    size_t bytes;
    mp_status st = read_buffer(r, buf, &data, &bytes);
    if (st != MP_OK)
        return st;
    if (bytes == 0)
        return MP_OK;

    st = check_const_size(r, i, nm, ti, data, bytes, counted, elements);
    if (st != MP_OK)
        return st;
    /* Kernels read constants in place through typed pointers, so the data must have its
     * element's natural alignment. Converters only guarantee 4 bytes in practice (the
     * schema's force_align 16 is often not honoured), so an 8-byte type can land on a
     * 4-byte boundary: such data (rare, and always small in real models) is copied into
     * aligned model memory instead of being refused. Only data used in place counts in
     * const_bytes. */
    ti->data_bytes = bytes;
    if ((uintptr_t)data % dtype_align(ti->dtype) != 0) {
        void *copy = arena_alloc(r->im, bytes);
        if (!copy)
            return rd_nomem(r);
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
static mp_status read_tensor(rd *r, const mp_fb_vec *tensors, int32_t i, mp_tensor_info *ti)
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
        return rd_fb(r);

    ti->name = arena_strdup(r->im, name ? name : "", name_len);
    if (!ti->name)
        return rd_nomem(r);
    safe(ti->name, nm, sizeof nm);

    if (type < 0 || type >= MP_DT_COUNT)
        return rd_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s' has unknown dtype %d", i, nm, type);
    ti->dtype = (mp_dtype)type;
    if (sparsity.present)
        return rd_fail(r, MP_ERR_UNSUPPORTED, "tensor %d '%s' is sparse; sparse tensors are not supported", i, nm);

    mp_status st = read_tensor_shape(r, i, nm, &shape, &sig, ti);
    bool counted = false;
    size_t elements = 0;
    if (st == MP_OK)
        st = check_tensor_size(r, i, nm, ti, &counted, &elements);
    if (st == MP_OK && q.present)
        st = read_tensor_quant(r, i, nm, &q, ti);
    if (st != MP_OK)
        return st;
    return read_tensor_data(r, i, nm, buf, counted, elements, ti);
}

/* ---- operator options ---------------------------------------------------------------- */

static mp_status check_act(rd *r, int32_t i, int code, uint8_t act)
{
    if (act > MP_ACT_SIGN_BIT)
        return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): fused activation %u is not valid (0..5)",
                       i, op_label(code), act);
    return MP_OK;
}

static mp_status check_padding(rd *r, int32_t i, int code, uint8_t pad)
{
    if (pad != MP_PAD_SAME && pad != MP_PAD_VALID)
        return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): padding %u is not valid (SAME or VALID)",
                       i, op_label(code), pad);
    return MP_OK;
}

static mp_status check_pair(rd *r, int32_t i, int code, const char *what, int32_t w, int32_t h)
{
    if (w < 1 || h < 1)
        return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): %s %dx%d is not valid (must be >= 1)",
                       i, op_label(code), what, w, h);
    return MP_OK;
}

#define TRY_FB(x) do { if (!(x)) return rd_fb(r); } while (0)
#define TRY(x) do { mp_status st_ = (x); if (st_ != MP_OK) return st_; } while (0)

/* Defaults every operator starts from: the schema defaults of the fields that have one,
 * and the documented "absent" values. */
static void default_options(mp_op_options *o)
{
    memset(o, 0, sizeof *o);
    o->padding = MP_PAD_SAME;
    o->dilation_w = o->dilation_h = 1;
    o->activation = MP_ACT_NONE;
    o->beta = 0.0f;                  /* SoftmaxOptions.beta has no explicit default */
    o->out_type = MP_DT_INT32;       /* ShapeOptions: "Defaults to int32" */
    o->in_data_type = o->out_data_type = -1; /* CAST without CastOptions */
}

/* The options of the windowed operators (convolutions, pooling, transposed convolution):
 * padding, strides, dilations, filter, activation; their table is required. */
static mp_status read_window_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                    const mp_fb_table *ot, mp_op_options *o, uint8_t *pad,
                                    uint8_t *act)
{
    mp_fb_reader *fb = &r->fb;
    if (!ot->present)
        return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s) has no %s", i, op_label(code), k->table);
    switch (k->type) {
    case BO_CONV2D:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "padding", pad) && mp_fb_i32(fb, ot, 1, 0, "stride_w", &o->stride_w) &&
               mp_fb_i32(fb, ot, 2, 0, "stride_h", &o->stride_h) &&
               mp_fb_u8(fb, ot, 3, 0, "fused_activation_function", act) &&
               mp_fb_i32(fb, ot, 4, 1, "dilation_w_factor", &o->dilation_w) &&
               mp_fb_i32(fb, ot, 5, 1, "dilation_h_factor", &o->dilation_h));
        break;
    case BO_DEPTHWISE_CONV2D:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "padding", pad) && mp_fb_i32(fb, ot, 1, 0, "stride_w", &o->stride_w) &&
               mp_fb_i32(fb, ot, 2, 0, "stride_h", &o->stride_h) &&
               mp_fb_i32(fb, ot, 3, 0, "depth_multiplier", &o->depth_multiplier) &&
               mp_fb_u8(fb, ot, 4, 0, "fused_activation_function", act) &&
               mp_fb_i32(fb, ot, 5, 1, "dilation_w_factor", &o->dilation_w) &&
               mp_fb_i32(fb, ot, 6, 1, "dilation_h_factor", &o->dilation_h));
        break;
    case BO_POOL2D:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "padding", pad) && mp_fb_i32(fb, ot, 1, 0, "stride_w", &o->stride_w) &&
               mp_fb_i32(fb, ot, 2, 0, "stride_h", &o->stride_h) &&
               mp_fb_i32(fb, ot, 3, 0, "filter_width", &o->filter_w) &&
               mp_fb_i32(fb, ot, 4, 0, "filter_height", &o->filter_h) &&
               mp_fb_u8(fb, ot, 5, 0, "fused_activation_function", act));
        break;
    case BO_TRANSPOSE_CONV:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "padding", pad) && mp_fb_i32(fb, ot, 1, 0, "stride_w", &o->stride_w) &&
               mp_fb_i32(fb, ot, 2, 0, "stride_h", &o->stride_h) &&
               mp_fb_u8(fb, ot, 3, 0, "fused_activation_function", act));
        break;
    case BO_CONV3D: {
        /* Depth stride and dilation have no slot in mp_op_options; checked, not kept. */
        int32_t sd, dd;
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "padding", pad) && mp_fb_i32(fb, ot, 1, 0, "stride_d", &sd) &&
               mp_fb_i32(fb, ot, 2, 0, "stride_w", &o->stride_w) &&
               mp_fb_i32(fb, ot, 3, 0, "stride_h", &o->stride_h) &&
               mp_fb_u8(fb, ot, 4, 0, "fused_activation_function", act) &&
               mp_fb_i32(fb, ot, 5, 1, "dilation_d_factor", &dd) &&
               mp_fb_i32(fb, ot, 6, 1, "dilation_w_factor", &o->dilation_w) &&
               mp_fb_i32(fb, ot, 7, 1, "dilation_h_factor", &o->dilation_h));
        TRY(check_pair(r, i, code, "depth stride and dilation", sd, dd));
        break;
    }
    default:
        break;
    }
    return MP_OK;
}

/* The options that are lists of dimensions (RESHAPE's new_shape, SQUEEZE's dims). */
static mp_status read_dims_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                  const mp_fb_table *ot, mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_vec v;
    switch (k->type) {
    case BO_RESHAPE:
        TRY_FB(mp_fb_vector(fb, ot, 0, 4, "new_shape", &v));
        if (v.n > MP_MAX_RANK)
            return rd_fail(r, MP_ERR_UNSUPPORTED, "operator %d (%s): new_shape has %u dimensions; memprof supports up to %d",
                           i, op_label(code), v.n, MP_MAX_RANK);
        o->has_new_shape = v.present;
        o->n_new_shape = (int32_t)v.n;
        for (uint32_t d = 0; d < v.n; d++)
            o->new_shape[d] = mp_fb_vec_i32(fb, &v, d);
        break;
    case BO_SQUEEZE:
        TRY_FB(mp_fb_vector(fb, ot, 0, 4, "squeeze_dims", &v));
        if (v.n > MP_MAX_RANK)
            return rd_fail(r, MP_ERR_UNSUPPORTED, "operator %d (%s): squeeze_dims has %u entries; memprof supports up to %d",
                           i, op_label(code), v.n, MP_MAX_RANK);
        o->n_squeeze_dims = (int32_t)v.n;
        for (uint32_t d = 0; d < v.n; d++)
            o->squeeze_dims[d] = mp_fb_vec_i32(fb, &v, d);
        break;
    default:
        break;
    }
    return MP_OK;
}

/* The options of CAST, SHAPE, PACK and UNPACK: types and value counts. */
static mp_status read_type_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                  const mp_fb_table *ot, mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    switch (k->type) {
    case BO_CAST:
        /* Without CastOptions both types stay -1 (unknown: take them from the tensors).
         * Inside the table an absent field is the schema default, FLOAT32. */
        if (ot->present) {
            int8_t in, out;
            TRY_FB(mp_fb_i8(fb, ot, 0, MP_DT_FLOAT32, "in_data_type", &in) &&
                   mp_fb_i8(fb, ot, 1, MP_DT_FLOAT32, "out_data_type", &out));
            if (in < 0 || in >= MP_DT_COUNT || out < 0 || out >= MP_DT_COUNT)
                return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): cast types %d -> %d are not valid dtypes",
                               i, op_label(code), in, out);
            o->in_data_type = in;
            o->out_data_type = out;
        }
        break;
    case BO_SHAPE:
        /* The schema comment says int32 by default; the enum's implicit 0 (FLOAT32) is
         * never a valid shape type, so an absent field means int32 as well. */
        if (mp_fb_has(fb, ot, 0)) {
            int8_t ty;
            TRY_FB(mp_fb_i8(fb, ot, 0, MP_DT_INT32, "out_type", &ty));
            if (ty != MP_DT_INT32 && ty != MP_DT_INT64)
                return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): output type %d is not i32 or i64",
                               i, op_label(code), ty);
            o->out_type = ty;
        }
        break;
    case BO_PACK:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "values_count", &o->values_count) &&
               mp_fb_i32(fb, ot, 1, 0, "axis", &o->axis));
        if (o->values_count < 0)
            return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): values_count %d is negative",
                           i, op_label(code), o->values_count);
        break;
    case BO_UNPACK: /* num goes to values_count: the same role mirrored */
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "num", &o->values_count) && mp_fb_i32(fb, ot, 1, 0, "axis", &o->axis));
        if (o->values_count < 0)
            return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): num %d is negative",
                           i, op_label(code), o->values_count);
        break;
    default:
        break;
    }
    return MP_OK;
}

/* The windowed operators' padding, strides, dilations and filter, checked and kept. */
static mp_status check_window_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                     mp_op_options *o, uint8_t pad)
{
    switch (k->type) {
    case BO_CONV2D:
    case BO_DEPTHWISE_CONV2D:
    case BO_CONV3D:
        TRY(check_padding(r, i, code, pad));
        TRY(check_pair(r, i, code, "stride", o->stride_w, o->stride_h));
        TRY(check_pair(r, i, code, "dilation", o->dilation_w, o->dilation_h));
        if (k->type == BO_DEPTHWISE_CONV2D && o->depth_multiplier < 1)
            return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): depth multiplier %d is not valid (must be >= 1)",
                           i, op_label(code), o->depth_multiplier);
        o->padding = pad;
        break;
    case BO_POOL2D:
        TRY(check_padding(r, i, code, pad));
        TRY(check_pair(r, i, code, "stride", o->stride_w, o->stride_h));
        TRY(check_pair(r, i, code, "filter", o->filter_w, o->filter_h));
        o->padding = pad;
        break;
    case BO_TRANSPOSE_CONV:
        TRY(check_padding(r, i, code, pad));
        TRY(check_pair(r, i, code, "stride", o->stride_w, o->stride_h));
        o->padding = pad;
        break;
    default:
        break;
    }
    return MP_OK;
}

static mp_status read_options(rd *r, int32_t i, int code, uint8_t type, const mp_fb_table *t,
                              mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    const opt_kind *k = find_opt_kind(code);
    uint8_t pad = 0, act = 0, u8v;

    default_options(o);
    if (!k)
        return MP_OK; /* options memprof does not map: structurally checked by the caller */
    if (type != BO_NONE && type != k->type)
        return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s) carries options of union type %u, expected %s",
                       i, op_label(code), type, k->table);
    const mp_fb_table *ot = (type == k->type && t->present) ? t : NULL;
    mp_fb_table none = {0};
    if (!ot)
        ot = &none; /* absent table: every field takes its default */
    mp_fb_where(fb, "operator %d %s", i, k->table);

    switch (k->type) {
    case BO_CONV2D:
    case BO_DEPTHWISE_CONV2D:
    case BO_POOL2D:
    case BO_TRANSPOSE_CONV:
    case BO_CONV3D:
        TRY(read_window_fields(r, i, code, k, ot, o, &pad, &act));
        break;
    case BO_FULLY_CONNECTED:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "fused_activation_function", &act) &&
               mp_fb_u8(fb, ot, 1, 0, "weights_format", &u8v) &&
               mp_fb_bool(fb, ot, 2, false, "keep_num_dims", &o->keep_num_dims));
        if (u8v > 1)
            return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s): weights format %u is not valid",
                           i, op_label(code), u8v);
        o->weights_format = u8v;
        break;
    case BO_SOFTMAX:
        TRY_FB(mp_fb_f32(fb, ot, 0, 0.0f, "beta", &o->beta));
        break;
    case BO_CONCATENATION:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "axis", &o->axis) &&
               mp_fb_u8(fb, ot, 1, 0, "fused_activation_function", &act));
        break;
    case BO_ADD: case BO_MUL: case BO_SUB: case BO_DIV: case BO_L2NORM: case BO_RNN:
    case BO_LSTM: case BO_UNI_SEQUENCE_LSTM: case BO_BIDI_SEQUENCE_LSTM:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "fused_activation_function", &act));
        break;
    case BO_SVDF: case BO_SEQUENCE_RNN: case BO_BIDI_SEQUENCE_RNN:
        TRY_FB(mp_fb_u8(fb, ot, 1, 0, "fused_activation_function", &act));
        break;
    case BO_RESIZE_BILINEAR: /* fields 0 and 1 are the deprecated new_height/new_width */
        TRY_FB(mp_fb_bool(fb, ot, 2, false, "align_corners", &o->align_corners) &&
               mp_fb_bool(fb, ot, 3, false, "half_pixel_centers", &o->half_pixel_centers));
        break;
    case BO_RESIZE_NEAREST:
        TRY_FB(mp_fb_bool(fb, ot, 0, false, "align_corners", &o->align_corners) &&
               mp_fb_bool(fb, ot, 1, false, "half_pixel_centers", &o->half_pixel_centers));
        break;
    case BO_RESHAPE:
    case BO_SQUEEZE:
        TRY(read_dims_fields(r, i, code, k, ot, o));
        break;
    case BO_REDUCER:
        TRY_FB(mp_fb_bool(fb, ot, 0, false, "keep_dims", &o->keep_dims));
        break;
    case BO_STRIDED_SLICE:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "begin_mask", &o->begin_mask) &&
               mp_fb_i32(fb, ot, 1, 0, "end_mask", &o->end_mask) &&
               mp_fb_i32(fb, ot, 2, 0, "ellipsis_mask", &o->ellipsis_mask) &&
               mp_fb_i32(fb, ot, 3, 0, "new_axis_mask", &o->new_axis_mask) &&
               mp_fb_i32(fb, ot, 4, 0, "shrink_axis_mask", &o->shrink_axis_mask) &&
               mp_fb_bool(fb, ot, 5, false, "offset", &o->offset));
        break;
    case BO_CAST:
    case BO_SHAPE:
    case BO_PACK:
    case BO_UNPACK:
        TRY(read_type_fields(r, i, code, k, ot, o));
        break;
    case BO_GATHER:
    case BO_ONE_HOT:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "axis", &o->axis));
        break;
    default:
        break;
    }

    TRY(check_act(r, i, code, act));
    o->activation = act;
    return check_window_fields(r, i, code, k, o, pad);
}

/* ---- operators ----------------------------------------------------------------------- */

/* Copy a verified index vector into dst, checking every entry against the tensor count. */
static mp_status read_indices(rd *r, int32_t i, int code, const mp_fb_vec *v, const char *what,
                              bool inputs, int32_t n_tensors, int32_t *dst)
{
    for (uint32_t k = 0; k < v->n; k++) {
        int32_t t = mp_fb_vec_i32(&r->fb, v, k);
        if (t == -1 && inputs && optional_input(code, k)) {
            dst[k] = -1; /* an omitted optional input */
            continue;
        }
        if (t == -1)
            return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s) %s %u is -1 (omitted), which is not allowed there",
                           i, op_label(code), what, k);
        if (t < 0 || t >= n_tensors)
            return rd_fail(r, MP_ERR_FORMAT, "operator %d (%s) %s %u is tensor %d, out of range (%d tensors)",
                           i, op_label(code), what, k, t, n_tensors);
        dst[k] = t;
    }
    return MP_OK;
}

static mp_status read_operator(rd *r, const mp_fb_vec *ops, int32_t i, int32_t n_tensors, mp_op_info *op)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_table t, oc, opts;
    mp_fb_vec in, out, inter;
    uint32_t opcode_index;
    uint8_t opt_type;

    mp_fb_where(fb, "operator %d", i);
    if (!mp_fb_vec_table(fb, ops, (uint32_t)i, "table", &t) ||
        !mp_fb_u32(fb, &t, OP_OPCODE_INDEX, 0, "opcode_index", &opcode_index) ||
        !mp_fb_vector(fb, &t, OP_INPUTS, 4, "inputs", &in) ||
        !mp_fb_vector(fb, &t, OP_OUTPUTS, 4, "outputs", &out) ||
        !mp_fb_u8(fb, &t, OP_OPTIONS_TYPE, 0, "builtin_options_type", &opt_type) ||
        !mp_fb_sub_table(fb, &t, OP_OPTIONS, "builtin_options", &opts) ||
        !mp_fb_vector(fb, &t, OP_INTERMEDIATES, 4, "intermediates", &inter))
        return rd_fb(r);
    if (opcode_index >= r->opcodes.n)
        return rd_fail(r, MP_ERR_FORMAT, "operator %d uses operator code %u but the model has %u",
                       i, opcode_index, r->opcodes.n);

    /* Resolve the operator code: builtin = max(deprecated_builtin_code, builtin_code),
     * the schema's rule for files written before and after the code space grew. */
    int8_t dep;
    int32_t builtin, version;
    const char *custom;
    uint32_t custom_len;
    mp_fb_where(fb, "operator code %u", opcode_index);
    if (!mp_fb_vec_table(fb, &r->opcodes, opcode_index, "table", &oc) ||
        !mp_fb_i8(fb, &oc, OPCODE_DEPRECATED_BUILTIN, 0, "deprecated_builtin_code", &dep) ||
        !mp_fb_string(fb, &oc, OPCODE_CUSTOM, "custom_code", &custom, &custom_len) ||
        !mp_fb_i32(fb, &oc, OPCODE_VERSION, 1, "version", &version) ||
        !mp_fb_i32(fb, &oc, OPCODE_BUILTIN, 0, "builtin_code", &builtin))
        return rd_fb(r);
    int code = builtin > dep ? builtin : dep;
    if (code == MP_OP_CUSTOM) {
        char cn[80];
        return rd_fail(r, MP_ERR_UNSUPPORTED, "operator %d: custom operator '%s' is not supported",
                       i, safe(custom ? custom : "(unnamed)", cn, sizeof cn));
    }
    if (code < 0 || !mp_op_name(code))
        return rd_fail(r, MP_ERR_UNSUPPORTED, "operator %d uses unknown builtin operator code %d", i, code);
    op->opcode = code;
    op->version = version;
    if (custom) {
        op->custom_code = arena_strdup(r->im, custom, custom_len);
        if (!op->custom_code)
            return rd_nomem(r);
    }

    /* Inputs, outputs and intermediates share one array, in that order: the
     * intermediates are op->outputs + op->n_outputs (mp_op_info has no field for them). */
    size_t total = (size_t)in.n + out.n + inter.n;
    if (total > INT32_MAX)
        return rd_fail(r, MP_ERR_FORMAT, "operator %d has too many tensors", i);
    int32_t *idx = arena_array(r->im, total, sizeof(int32_t));
    if (!idx)
        return rd_nomem(r);
    TRY(read_indices(r, i, code, &in, "input", true, n_tensors, idx));
    TRY(read_indices(r, i, code, &out, "output", false, n_tensors, idx + in.n));
    TRY(read_indices(r, i, code, &inter, "intermediate", false, n_tensors, idx + in.n + out.n));
    op->n_inputs = (int32_t)in.n;
    op->n_outputs = (int32_t)out.n;
    op->n_intermediates = (int32_t)inter.n;
    op->inputs = idx;
    op->outputs = idx + in.n;
    op->intermediates = idx + in.n + out.n;

    return read_options(r, i, code, opt_type, &opts, &op->opt);
}

/* ---- model --------------------------------------------------------------------------- */

/* Subgraph input or output list: copy and range-check. */
static mp_status read_io(rd *r, const mp_fb_vec *v, const char *what, int32_t n_tensors, int32_t *n_out,
                         const int32_t **out)
{
    int32_t *dst = arena_array(r->im, v->n, sizeof(int32_t));
    if (!dst)
        return rd_nomem(r);
    for (uint32_t k = 0; k < v->n; k++) {
        int32_t t = mp_fb_vec_i32(&r->fb, v, k);
        if (t < 0 || t >= n_tensors)
            return rd_fail(r, MP_ERR_FORMAT, "subgraph %s %u is tensor %d, out of range (%d tensors)",
                           what, k, t, n_tensors);
        dst[k] = t;
    }
    *n_out = (int32_t)v->n;
    *out = dst;
    return MP_OK;
}

static mp_status parse(rd *r)
{
    mp_fb_reader *fb = &r->fb;
    mp_model *m = r->m;
    const uint8_t *b = fb->base;

    if (fb->size == 0)
        return rd_fail(r, MP_ERR_FORMAT, "empty file (0 bytes), not a TensorFlow Lite model");
    if (fb->size < 8)
        return rd_fail(r, MP_ERR_FORMAT, "truncated: file is %zu bytes, too short for a TensorFlow Lite model",
                       fb->size);
    if (memcmp(b + 4, "TFL3", 4) != 0)
        return rd_fail(r, MP_ERR_FORMAT,
                       "not a TensorFlow Lite model (file identifier is %02x %02x %02x %02x, expected TFL3)",
                       b[4], b[5], b[6], b[7]);

    mp_fb_table root;
    mp_fb_vec subgraphs;
    const char *desc;
    uint32_t desc_len;
    mp_fb_where(fb, "model");
    if (!mp_fb_root(fb, &root) ||
        !mp_fb_u32(fb, &root, MODEL_VERSION, 0, "version", &m->version) ||
        !mp_fb_vector(fb, &root, MODEL_OPERATOR_CODES, 4, "operator_codes", &r->opcodes) ||
        !mp_fb_vector(fb, &root, MODEL_SUBGRAPHS, 4, "subgraphs", &subgraphs) ||
        !mp_fb_string(fb, &root, MODEL_DESCRIPTION, "description", &desc, &desc_len) ||
        !mp_fb_vector(fb, &root, MODEL_BUFFERS, 4, "buffers", &r->buffers))
        return rd_fb(r);
    if (m->version != TFL_SCHEMA_VERSION)
        return rd_fail(r, MP_ERR_UNSUPPORTED, "schema version %u is not supported (memprof reads version %d)",
                       m->version, TFL_SCHEMA_VERSION);
    m->description = arena_strdup(r->im, desc ? desc : "", desc_len);
    if (!m->description)
        return rd_nomem(r);
    if (subgraphs.n == 0)
        return rd_fail(r, MP_ERR_FORMAT, "model has no subgraphs");
    if (subgraphs.n > 1)
        return rd_fail(r, MP_ERR_FORMAT, "model has %u subgraphs; memprof runs single-subgraph models",
                       subgraphs.n);

    mp_fb_table sg;
    mp_fb_vec tensors, inputs, outputs, operators;
    const char *sg_name;
    uint32_t sg_name_len;
    mp_fb_where(fb, "subgraph 0");
    if (!mp_fb_vec_table(fb, &subgraphs, 0, "table", &sg) ||
        !mp_fb_vector(fb, &sg, SG_TENSORS, 4, "tensors", &tensors) ||
        !mp_fb_vector(fb, &sg, SG_INPUTS, 4, "inputs", &inputs) ||
        !mp_fb_vector(fb, &sg, SG_OUTPUTS, 4, "outputs", &outputs) ||
        !mp_fb_vector(fb, &sg, SG_OPERATORS, 4, "operators", &operators) ||
        !mp_fb_string(fb, &sg, SG_NAME, "name", &sg_name, &sg_name_len))
        return rd_fb(r);
    if (tensors.n == 0 && operators.n == 0)
        return rd_fail(r, MP_ERR_FORMAT, "empty model: subgraph 0 has no operators and no tensors");
    /* Each element is a 4-byte offset inside the file, so these counts are bounded by the
     * file size; the INT32_MAX check only matters for files over 8 GB. */
    if (tensors.n > INT32_MAX || operators.n > INT32_MAX)
        return rd_fail(r, MP_ERR_FORMAT, "subgraph 0 has too many tensors or operators");
    if (operators.n > MP_MAX_OPS)
        return rd_fail(r, MP_ERR_FORMAT, "subgraph 0 has %u operators, above memprof's limit of %d (MP_MAX_OPS)",
                       operators.n, MP_MAX_OPS);
    if (tensors.n > MP_MAX_TENSORS)
        return rd_fail(r, MP_ERR_FORMAT, "subgraph 0 has %u tensors, above memprof's limit of %d (MP_MAX_TENSORS)",
                       tensors.n, MP_MAX_TENSORS);
    m->subgraph_name = arena_strdup(r->im, sg_name ? sg_name : "", sg_name_len);
    if (!m->subgraph_name)
        return rd_nomem(r);

    r->counted = arena_array(r->im, (size_t)r->buffers.n / 8 + 1, 1);
    m->tensors = arena_array(r->im, tensors.n, sizeof(mp_tensor_info));
    m->ops = arena_array(r->im, operators.n, sizeof(mp_op_info));
    if (!r->counted || !m->tensors || !m->ops)
        return rd_nomem(r);
    m->n_tensors = (int32_t)tensors.n;
    m->n_ops = (int32_t)operators.n;

    for (int32_t i = 0; i < m->n_tensors; i++)
        TRY(read_tensor(r, &tensors, i, &m->tensors[i]));
    for (int32_t i = 0; i < m->n_ops; i++)
        TRY(read_operator(r, &operators, i, m->n_tensors, &m->ops[i]));
    TRY(read_io(r, &inputs, "input", m->n_tensors, &m->n_inputs, &m->inputs));
    TRY(read_io(r, &outputs, "output", m->n_tensors, &m->n_outputs, &m->outputs));
    return MP_OK;
}

/* Build a model over bytes already placed in im (mapping or owned copy). */
static mp_status load(const char *label, const uint8_t *bytes, size_t size, rd_impl *im,
                      mp_model **out, mp_error *err)
{
    mp_model *m = calloc(1, sizeof *m);
    if (!m) {
        /* Release what the caller handed over before reporting. */
        if (im->map)
            munmap(im->map, im->map_len);
        free(im);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", label);
    }
    m->impl = im;
    m->file_bytes = size;
    im->budget = budget_for(size);

    rd r;
    memset(&r, 0, sizeof r);
    mp_fb_init(&r.fb, bytes, size);
    r.path = label;
    r.err = err;
    r.m = m;
    r.im = im;

    char *path = arena_strdup(im, label, strlen(label));
    if (!path) {
        mp_model_free(m);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", label);
    }
    m->path = path;
    r.path = path;

    mp_status st = parse(&r);
    if (st != MP_OK) {
        /* The message was formatted from r.path, which lives in the arena: it is already
         * copied into err, so freeing now is safe. */
        mp_model_free(m);
        return st;
    }
    m->heap_bytes = im->heap + sizeof *im + sizeof *m;
    *out = m;
    return MP_OK;
}

mp_status mp_model_load_file(const char *path, mp_model **out, mp_error *err)
{
    *out = NULL;
    if (!path)
        return mp_fail(err, MP_ERR_ARG, "no model path given");
    /* Non-blocking: a FIFO without writer must not hang the open (it is refused below). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return mp_fail(err, MP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: not a regular file", path);
    }
    if (sb.st_size <= 0) {
        close(fd);
        return mp_fail(err, MP_ERR_FORMAT, "%s: empty file (0 bytes), not a TensorFlow Lite model", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: file too large to map", path);
    }
    size_t size = (size_t)sb.st_size;
    /* Reserve the file's size plus MP_MODEL_TAIL_SLACK of zero pages, then map the file over
     * the start: a constant that ends the file stays readable 16 bytes past its end (a plain
     * file mapping would fault there when the file size is a multiple of the page size). */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - MP_MODEL_TAIL_SLACK - page) {
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: file too large to map", path);
    }
    size_t map_len = (size + MP_MODEL_TAIL_SLACK + page - 1) / page * page;
    void *map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map != MAP_FAILED && mmap(map, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
        int e2 = errno;
        munmap(map, map_len);
        map = MAP_FAILED;
        errno = e2;
    }
    int e = errno;
    close(fd); /* the mapping keeps the file alive */
    if (map == MAP_FAILED)
        return mp_fail(err, MP_ERR_IO, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
    rd_impl *im = calloc(1, sizeof *im);
    if (!im) {
        munmap(map, map_len);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", path);
    }
    im->map = map;
    im->map_len = map_len;
    return load(path, map, size, im, out, err);
}

mp_status mp_model_load_memory(const void *bytes, size_t size, const char *label, mp_model **out,
                               mp_error *err)
{
    *out = NULL;
    if (!label)
        label = "<memory>";
    if (!bytes && size)
        return mp_fail(err, MP_ERR_ARG, "%s: no model bytes given", label);
    if (size == 0)
        return mp_fail(err, MP_ERR_FORMAT, "%s: empty file (0 bytes), not a TensorFlow Lite model", label);
    /* One owned copy in an anonymous mapping (page-aligned, so constant data keeps the
     * alignment it has relative to the start of the file), like a file's mapping: the
     * weights are "mapped" memory for the trace, not heap. */
    long page = sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - MP_MODEL_TAIL_SLACK - (size_t)page)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory copying %zu bytes", label, size);
    size_t map_len = (size + MP_MODEL_TAIL_SLACK + (size_t)page - 1) / (size_t)page * (size_t)page;
    void *copy = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory copying %zu bytes", label, size);
    memcpy(copy, bytes, size); /* the tail stays zero: see MP_MODEL_TAIL_SLACK */
    mprotect(copy, map_len, PROT_READ);
    rd_impl *im = calloc(1, sizeof *im);
    if (!im) {
        munmap(copy, map_len);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", label);
    }
    im->map = copy;
    im->map_len = map_len;
    return load(label, copy, size, im, out, err);
}
