/* .tflite writer: collects buffers, tensors and operators, then serializes them as a
 * FlatBuffer following the TensorFlow Lite schema (see tflite_writer.h).
 *
 * FlatBuffers in brief: the file starts with a uint32 offset to the root table. A table
 * starts with an int32 "soffset"; its vtable lives at (table - soffset) and holds uint16s:
 * vtable size, table size, then one offset per field id (0 = field absent, read as the
 * schema default). Offsets to strings, vectors and sub-tables are uint32 relative to the
 * field's own position and must point forward. Vectors and strings are a uint32 count
 * followed by the elements (strings add a NUL). Everything is little-endian.
 *
 * This serializer writes top-down: a table is written with placeholder offsets, its
 * children follow, and each placeholder is patched once its child's position is known.
 * A union field takes two ids: id N holds the uint8 type, id N+1 the table offset. */
#include "engine/model/tflite_writer.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- schema numbers ------------------------------------------------------------------ */

/* BuiltinOptions union member numbers (0 = NONE), from schema.fbs's union order. */
enum {
    OPT_NONE = 0,
    OPT_CONV2D = 1,
    OPT_DEPTHWISE_CONV2D = 2,
    OPT_POOL2D = 5,
    OPT_FULLY_CONNECTED = 8,
    OPT_SOFTMAX = 9,
    OPT_CONCATENATION = 10,
    OPT_ADD = 11,
    OPT_L2NORM = 12,
    OPT_RESIZE_BILINEAR = 15,
    OPT_RESHAPE = 17,
    OPT_MUL = 21,
    OPT_PAD = 22,
    OPT_TRANSPOSE = 26,
    OPT_REDUCER = 27,
    OPT_SUB = 28,
    OPT_DIV = 29,
    OPT_SQUEEZE = 30,
    OPT_STRIDED_SLICE = 32,
    OPT_EXP = 33,
    OPT_LOG_SOFTMAX = 36,
    OPT_TOPK_V2 = 34,
    OPT_ONE_HOT = 61,
    OPT_FLOOR_DIV = 65,
    OPT_COS = 84,
    OPT_CUMSUM = 102,
    OPT_SPARSE_TO_DENSE = 50,
    OPT_UNIQUE = 80,
    OPT_WHERE = 85,
    OPT_RANK = 86,
    OPT_REVERSE_SEQUENCE = 87,
    OPT_MATRIX_DIAG = 88,
    OPT_MATRIX_SET_DIAG = 90,
    OPT_SCATTER_ND = 97,
    OPT_SEGMENT_SUM = 100,
    OPT_BUCKETIZE = 115,
    OPT_DYNAMIC_UPDATE_SLICE = 117,
    OPT_UNSORTED_SEGMENT_PROD = 118,
    OPT_UNSORTED_SEGMENT_MAX = 119,
    OPT_UNSORTED_SEGMENT_MIN = 120,
    OPT_UNSORTED_SEGMENT_SUM = 121,
    OPT_CALL_ONCE = 103,
    OPT_VAR_HANDLE = 111,
    OPT_LSH_PROJECTION = 4,
    OPT_SKIP_GRAM = 18,
    OPT_EMBEDDING_LOOKUP_SPARSE = 20,
    OPT_HASHTABLE = 107,
    OPT_HASHTABLE_FIND = 108,
    OPT_HASHTABLE_IMPORT = 109,
    OPT_HASHTABLE_SIZE = 110,
    OPT_READ_VARIABLE = 112,
    OPT_ASSIGN_VARIABLE = 113,
    OPT_CAST = 37,
    OPT_DEQUANTIZE = 38,
    OPT_MAXIMUM_MINIMUM = 39,
    OPT_PADV2 = 43,
    OPT_SLICE = 48,
    OPT_EXPAND_DIMS = 52,
    OPT_SHAPE = 55,
    OPT_PACK = 59,
    OPT_RESIZE_NEAREST_NEIGHBOR = 74,
    OPT_QUANTIZE = 89,
    OPT_HARD_SWISH = 91,
    OPT_LSTM = 14,
    OPT_GATHER = 23,
    OPT_SPLIT = 35,
    OPT_ARG_MAX = 40,
    OPT_NEG = 42,
    OPT_LESS = 41,
    OPT_GREATER = 44,
    OPT_GREATER_EQUAL = 45,
    OPT_LESS_EQUAL = 46,
    OPT_SELECT = 47,
    OPT_TILE = 51,
    OPT_EQUAL = 53,
    OPT_NOT_EQUAL = 54,
    OPT_POW = 56,
    OPT_ARG_MIN = 57,
    OPT_LOGICAL_OR = 60,
    OPT_LOGICAL_AND = 62,
    OPT_LOGICAL_NOT = 63,
    OPT_SQUARE = 66,
    OPT_ZEROS_LIKE = 67,
    OPT_FILL = 68,
    OPT_UNI_SEQUENCE_LSTM = 71,
    OPT_SVDF = 6,
    OPT_RNN = 7,
    OPT_SEQUENCE_RNN = 31,
    OPT_BIDI_SEQUENCE_LSTM = 69,
    OPT_BIDI_SEQUENCE_RNN = 70,
    OPT_RANGE = 73,
    OPT_LEAKY_RELU = 75,
    OPT_SQUARED_DIFFERENCE = 76,
    OPT_ABS = 78,
    OPT_SPLIT_V = 79,
    OPT_GATHER_ND = 83,
    OPT_IF = 92,
    OPT_WHILE = 93,
    OPT_SELECT_V2 = 98,
    OPT_BATCH_MATMUL = 101,
    OPT_GELU = 116,
    OPT_LRN = 13,
    OPT_ADD_N = 82,
    OPT_CONV3D = 106,
    OPT_ATAN2 = 122,
    OPT_SIGN = 123,
    OPT_BITWISE_XOR = 125,
    OPT_RIGHT_SHIFT = 126,
    OPT_SPACE_TO_DEPTH = 19,
    OPT_TRANSPOSE_CONV = 49,
    OPT_UNPACK = 64,
    OPT_MIRROR_PAD = 77,
    OPT_REVERSE_V2 = 81,
    OPT_DEPTH_TO_SPACE = 94,
    OPT_BROADCAST_TO = 104,
    OPT_FAKE_QUANT = 58,
    OPT_NMS_V4 = 95,
    OPT_NMS_V5 = 96,
    OPT_RFFT2D = 105,
    OPT_RANDOM = 114, /* RandomOptions: RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL */
};

/* Field ids of the tables we write (position in the schema's table, unions taking two). */
enum { MODEL_VERSION = 0, MODEL_OPERATOR_CODES = 1, MODEL_SUBGRAPHS = 2, MODEL_DESCRIPTION = 3,
       MODEL_BUFFERS = 4 };
enum { OPCODE_DEPRECATED_BUILTIN_CODE = 0, OPCODE_CUSTOM_CODE = 1, OPCODE_VERSION = 2,
       OPCODE_BUILTIN_CODE = 3 };
enum { SUBGRAPH_TENSORS = 0, SUBGRAPH_INPUTS = 1, SUBGRAPH_OUTPUTS = 2, SUBGRAPH_OPERATORS = 3,
       SUBGRAPH_NAME = 4 };
enum { TENSOR_SHAPE = 0, TENSOR_TYPE = 1, TENSOR_BUFFER = 2, TENSOR_NAME = 3,
       TENSOR_QUANTIZATION = 4, TENSOR_IS_VARIABLE = 5, TENSOR_SPARSITY = 6,
       TENSOR_SHAPE_SIGNATURE = 7 };
/* SparsityParameters, DimensionMetadata (its unions taking two ids) and the SparseIndexVector
 * members Int32Vector, Uint16Vector, Uint8Vector (union numbers 1..3, one field each). */
enum { SPARSITY_TRAVERSAL_ORDER = 0, SPARSITY_BLOCK_MAP = 1, SPARSITY_DIM_METADATA = 2 };
enum { DIM_FORMAT = 0, DIM_DENSE_SIZE = 1, DIM_SEGMENTS_TYPE = 2, DIM_SEGMENTS = 3,
       DIM_INDICES_TYPE = 4, DIM_INDICES = 5 };
enum { QUANT_SCALE = 2, QUANT_ZERO_POINT = 3, QUANT_QUANTIZED_DIMENSION = 6 };
enum { BUFFER_DATA = 0 };
enum { OPERATOR_OPCODE_INDEX = 0, OPERATOR_INPUTS = 1, OPERATOR_OUTPUTS = 2,
       OPERATOR_BUILTIN_OPTIONS_TYPE = 3, OPERATOR_BUILTIN_OPTIONS = 4,
       OPERATOR_CUSTOM_OPTIONS = 5, OPERATOR_INTERMEDIATES = 8,
       OPERATOR_BUILTIN_OPTIONS_2_TYPE = 11, OPERATOR_BUILTIN_OPTIONS_2 = 12 };
/* BuiltinOptions2 union member numbers (0 = NONE) of the tables the writer writes. */
enum { OPT2_NONE = 0, OPT2_SCATTER = 7, OPT2_PAD = 10, OPT2_REDUCE_WINDOW = 13, OPT2_GATHER = 16,
       OPT2_DILATE = 18, OPT2_RNG_BIT_GENERATOR = 19, OPT2_REDUCE_WINDOW_TFL = 20,
       OPT2_COMPOSITE = 21, OPT2_SHIFT_LEFT = 22, OPT2_CASE = 23 };

#define SCHEMA_VERSION 3
#define PLACEHOLDER_FOR_GREATER_OP_CODES 127

/* ---- the model being collected --------------------------------------------------------- */

typedef struct tfw_buffer {
    uint8_t *data;
    size_t bytes;
} tfw_buffer;

typedef struct tfw_tensor {
    char *name;
    int dtype;
    int rank;
    int32_t dims[MP_MAX_RANK];
    bool has_signature;
    int32_t signature[MP_MAX_RANK];
    bool is_variable;
    int buffer;
    int q_count;       /* 0: no quantization table */
    float *q_scale;
    int64_t *q_zero_point;
    int q_dim;
    struct tfw_sparse *sparse; /* NULL: dense */
} tfw_tensor;

/* A sparse tensor's SparsityParameters: s's arrays point into dims and ints. */
typedef struct tfw_sparse {
    mp_tfw_sparsity s;
    mp_tfw_sparse_dim *dims;
    int32_t *ints;
} tfw_sparse;

typedef struct tfw_op {
    int opcode;
    int code_index;    /* into operator_codes */
    int n_in, n_out;
    int32_t *ins, *outs;
    mp_op_options opt;
    uint8_t *custom_options;   /* CUSTOM operators: raw custom_options (NULL: none) */
    size_t custom_options_size;
    char *var_names[2];        /* copies of opt.var_container, var_shared_name (NULL: none) */
    int n_inter;               /* intermediates (integer LSTMs); inter NULL when none */
    int32_t *inter;
} tfw_op;

typedef struct tfw_code {
    int code;
    int version;
    char *custom;      /* CUSTOM: the custom_code (code is MP_OP_CUSTOM), else NULL */
} tfw_code;

/* A finished subgraph (the writer collects one at a time: see mp_tfw_subgraph). */
typedef struct tfw_sub {
    tfw_tensor *tensors;
    int n_tensors;
    tfw_op *ops;
    int n_ops;
    int32_t *ins, *outs;
    int n_ins, n_outs;
    char *name;
} tfw_sub;

struct mp_tfw {
    tfw_sub *done;     /* subgraphs 0 .. n_done - 1; the one being collected is below */
    int n_done, cap_done;
    tfw_buffer *bufs;
    int n_bufs, cap_bufs;
    tfw_tensor *tensors;
    int n_tensors, cap_tensors;
    tfw_op *ops;
    int n_ops, cap_ops;
    tfw_code *codes;
    int n_codes, cap_codes;
    int32_t *ins, *outs;
    int n_ins, n_outs;
    char *description;
    char *subgraph_name;
    mp_status fault;   /* first fault of an adding call (MP_OK: none) */
    char fault_msg[400];
};

static int fail(mp_tfw *w, mp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(mp_tfw *w, mp_status st, const char *fmt, ...)
{
    if (w && w->fault == MP_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->fault_msg, sizeof w->fault_msg, fmt, ap);
        va_end(ap);
        w->fault = st;
    }
    return -1;
}

/* Make room for `need` elements of `elem` bytes in *arr (capacity *cap). */
static bool grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return true;
    int n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = n;
    return true;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

mp_tfw *mp_tfw_create(void)
{
    mp_tfw *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->description = dup_str("memprof tflite writer");
    w->subgraph_name = dup_str("main");
    if (!w->description || !w->subgraph_name || mp_tfw_buffer(w, NULL, 0) != 0) {
        mp_tfw_free(w);
        return NULL;
    }
    return w;
}

static void free_sparse(tfw_sparse *sp)
{
    if (sp) {
        free(sp->dims);
        free(sp->ints);
        free(sp);
    }
}

static void free_sub(tfw_sub *g)
{
    for (int i = 0; i < g->n_tensors; i++) {
        free(g->tensors[i].name);
        free(g->tensors[i].q_scale);
        free(g->tensors[i].q_zero_point);
        free_sparse(g->tensors[i].sparse);
    }
    for (int i = 0; i < g->n_ops; i++) {
        free(g->ops[i].ins);
        free(g->ops[i].outs);
        free(g->ops[i].custom_options);
        free(g->ops[i].var_names[0]);
        free(g->ops[i].var_names[1]);
        free(g->ops[i].inter);
    }
    free(g->tensors);
    free(g->ops);
    free(g->ins);
    free(g->outs);
    free(g->name);
}

/* The subgraph being collected, as a tfw_sub (a view of the writer's fields). */
static tfw_sub current_sub(const mp_tfw *w)
{
    return (tfw_sub){w->tensors, w->n_tensors, w->ops, w->n_ops, w->ins, w->outs, w->n_ins,
                     w->n_outs, w->subgraph_name};
}

void mp_tfw_free(mp_tfw *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->n_bufs; i++)
        free(w->bufs[i].data);
    tfw_sub cur = current_sub(w);
    free_sub(&cur);
    for (int i = 0; i < w->n_done; i++)
        free_sub(&w->done[i]);
    free(w->done);
    for (int i = 0; i < w->n_codes; i++)
        free(w->codes[i].custom);
    free(w->bufs);
    free(w->codes);
    free(w->description);
    free(w);
}

int mp_tfw_subgraph(mp_tfw *w, const char *name)
{
    if (w->n_ops == 0 && w->n_tensors == 0)
        return fail(w, MP_ERR_ARG, "subgraph %d is empty: add its tensors before starting the next",
                    w->n_done);
    char *nm = dup_str(name ? name : "");
    if (!nm || !grow((void **)&w->done, &w->cap_done, w->n_done + 1, sizeof *w->done)) {
        free(nm);
        return fail(w, MP_ERR_NOMEM, "out of memory");
    }
    w->done[w->n_done++] = current_sub(w);
    w->tensors = NULL;
    w->ops = NULL;
    w->ins = w->outs = NULL;
    w->n_tensors = w->cap_tensors = w->n_ops = w->cap_ops = w->n_ins = w->n_outs = 0;
    w->subgraph_name = nm;
    return w->n_done;
}

static void set_string(mp_tfw *w, char **dst, const char *text)
{
    char *p = dup_str(text ? text : "");
    if (!p) {
        fail(w, MP_ERR_NOMEM, "out of memory");
        return;
    }
    free(*dst);
    *dst = p;
}

void mp_tfw_description(mp_tfw *w, const char *text)
{
    set_string(w, &w->description, text);
}

void mp_tfw_subgraph_name(mp_tfw *w, const char *name)
{
    set_string(w, &w->subgraph_name, name);
}

int mp_tfw_buffer(mp_tfw *w, const void *data, size_t bytes)
{
    if (bytes > 0x7fff0000u)
        return fail(w, MP_ERR_ARG, "buffer %d: %zu bytes is too large for a flatbuffer", w->n_bufs,
                    bytes);
    if (bytes && !data)
        return fail(w, MP_ERR_ARG, "buffer %d: no data", w->n_bufs);
    if (!grow((void **)&w->bufs, &w->cap_bufs, w->n_bufs + 1, sizeof *w->bufs))
        return fail(w, MP_ERR_NOMEM, "out of memory");
    tfw_buffer *b = &w->bufs[w->n_bufs];
    b->data = NULL;
    b->bytes = bytes;
    if (bytes) {
        b->data = malloc(bytes);
        if (!b->data)
            return fail(w, MP_ERR_NOMEM, "out of memory for a %zu-byte buffer", bytes);
        memcpy(b->data, data, bytes);
    }
    return w->n_bufs++;
}

int mp_tfw_tensor(mp_tfw *w, const char *name, mp_dtype dtype, int rank, const int32_t *dims,
                  int buffer, const int32_t *signature)
{
    int idx = w->n_tensors;
    const char *nm = name ? name : "";
    if (rank < 0 || rank > MP_MAX_RANK || (rank > 0 && !dims))
        return fail(w, MP_ERR_ARG, "tensor %d '%s': bad rank %d", idx, nm, rank);
    if ((int)dtype < 0 || dtype >= MP_DT_COUNT)
        return fail(w, MP_ERR_ARG, "tensor %d '%s': bad dtype %d", idx, nm, (int)dtype);
    if (buffer < 0 || buffer >= w->n_bufs)
        return fail(w, MP_ERR_ARG, "tensor %d '%s': buffer %d does not exist", idx, nm, buffer);
    size_t n;
    if (!mp_shape_elements(rank, dims, &n))
        return fail(w, MP_ERR_ARG, "tensor %d '%s': bad shape", idx, nm);
    size_t esize = mp_dtype_size(dtype);
    if (buffer > 0 && esize > 0 && n * esize != w->bufs[buffer].bytes)
        return fail(w, MP_ERR_ARG, "tensor %d '%s': %zu elements of %zu bytes but buffer %d has %zu",
                    idx, nm, n, esize, buffer, w->bufs[buffer].bytes);
    if (!grow((void **)&w->tensors, &w->cap_tensors, idx + 1, sizeof *w->tensors))
        return fail(w, MP_ERR_NOMEM, "out of memory");
    tfw_tensor *t = &w->tensors[idx];
    memset(t, 0, sizeof *t);
    t->name = dup_str(nm);
    if (!t->name)
        return fail(w, MP_ERR_NOMEM, "out of memory");
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    t->has_signature = signature != NULL;
    for (int i = 0; signature && i < rank; i++)
        t->signature[i] = signature[i];
    t->buffer = buffer;
    return w->n_tensors++;
}

int mp_tfw_tensor_quant(mp_tfw *w, int tensor, int count, const float *scale,
                        const int64_t *zero_point, int quantized_dimension)
{
    if (tensor < 0 || tensor >= w->n_tensors)
        return fail(w, MP_ERR_ARG, "quantization for tensor %d: no such tensor", tensor);
    if (count < 1 || !scale)
        return fail(w, MP_ERR_ARG, "quantization for tensor %d: no scales", tensor);
    tfw_tensor *t = &w->tensors[tensor];
    float *s = malloc((size_t)count * sizeof *s);
    int64_t *z = calloc((size_t)count, sizeof *z);
    if (!s || !z) {
        free(s);
        free(z);
        return fail(w, MP_ERR_NOMEM, "out of memory");
    }
    memcpy(s, scale, (size_t)count * sizeof *s);
    if (zero_point)
        memcpy(z, zero_point, (size_t)count * sizeof *z);
    free(t->q_scale);
    free(t->q_zero_point);
    t->q_scale = s;
    t->q_zero_point = z;
    t->q_count = count;
    t->q_dim = quantized_dimension;
    return tensor;
}

/* Copy n ints of src to *at, advancing it; returns where they went. */
static const int32_t *take_ints(int32_t **at, int n, const int32_t *src)
{
    int32_t *p = *at;
    if (n > 0)
        memcpy(p, src, (size_t)n * sizeof *p);
    *at += n > 0 ? n : 0;
    return p;
}

int mp_tfw_tensor_sparsity(mp_tfw *w, int tensor, int buffer, const mp_tfw_sparsity *s)
{
    if (tensor < 0 || tensor >= w->n_tensors || buffer < 0 || buffer >= w->n_bufs || !s)
        return fail(w, MP_ERR_ARG, "sparsity for tensor %d: no such tensor or buffer %d", tensor,
                    buffer);
    size_t n_ints = 0;
    bool ok = s->n_order >= 0 && s->n_block_map >= 0 && s->n_dims >= 0 && s->n_dims <= 64 &&
              (s->n_order == 0 || s->traversal_order) && (s->n_block_map == 0 || s->block_map) &&
              (s->n_dims == 0 || s->dims);
    for (int k = 0; ok && k < s->n_dims; k++) {
        const mp_tfw_sparse_dim *d = &s->dims[k];
        ok = d->n_segments >= 0 && d->n_indices >= 0 && (d->n_segments == 0 || d->segments) &&
             (d->n_indices == 0 || d->indices) &&
             (d->sparse != 1 || d->index_bits == 8 || d->index_bits == 16 || d->index_bits == 32);
        n_ints += (size_t)d->n_segments + (size_t)d->n_indices;
    }
    if (!ok)
        return fail(w, MP_ERR_ARG, "sparsity for tensor %d: bad arrays", tensor);
    n_ints += (size_t)s->n_order + (size_t)s->n_block_map;
    tfw_sparse *sp = calloc(1, sizeof *sp);
    if (sp) {
        sp->dims = malloc(((size_t)s->n_dims + 1) * sizeof *sp->dims);
        sp->ints = malloc((n_ints + 1) * sizeof *sp->ints);
    }
    if (!sp || !sp->dims || !sp->ints) {
        free_sparse(sp);
        return fail(w, MP_ERR_NOMEM, "out of memory");
    }
    int32_t *at = sp->ints;
    sp->s = *s;
    sp->s.traversal_order = take_ints(&at, s->n_order, s->traversal_order);
    sp->s.block_map = take_ints(&at, s->n_block_map, s->block_map);
    for (int k = 0; k < s->n_dims; k++) {
        sp->dims[k] = s->dims[k];
        sp->dims[k].segments = take_ints(&at, s->dims[k].n_segments, s->dims[k].segments);
        sp->dims[k].indices = take_ints(&at, s->dims[k].n_indices, s->dims[k].indices);
    }
    sp->s.dims = sp->dims;
    tfw_tensor *t = &w->tensors[tensor];
    free_sparse(t->sparse);
    t->sparse = sp;
    t->buffer = buffer;
    return tensor;
}

int mp_tfw_tensor_variable(mp_tfw *w, int tensor)
{
    if (tensor < 0 || tensor >= w->n_tensors)
        return fail(w, MP_ERR_ARG, "is_variable for tensor %d: no such tensor", tensor);
    w->tensors[tensor].is_variable = true;
    return tensor;
}

mp_op_options mp_tfw_options_default(void)
{
    mp_op_options o;
    memset(&o, 0, sizeof o);
    o.dilation_w = o.dilation_h = 1;
    o.depth_multiplier = 1;
    o.in_data_type = o.out_data_type = -1;
    o.out_type = MP_DT_INT32;
    return o;
}

int mp_tfw_options_type(int opcode)
{
    switch (opcode) {
    case MP_OP_CONV_2D: return OPT_CONV2D;
    case MP_OP_DEPTHWISE_CONV_2D: return OPT_DEPTHWISE_CONV2D;
    case MP_OP_AVERAGE_POOL_2D: case MP_OP_MAX_POOL_2D: case MP_OP_L2_POOL_2D: return OPT_POOL2D;
    case MP_OP_FULLY_CONNECTED: return OPT_FULLY_CONNECTED;
    case MP_OP_SOFTMAX: return OPT_SOFTMAX;
    case MP_OP_CONCATENATION: return OPT_CONCATENATION;
    case MP_OP_ADD: return OPT_ADD;
    case MP_OP_L2_NORMALIZATION: return OPT_L2NORM;
    case MP_OP_RESIZE_BILINEAR: return OPT_RESIZE_BILINEAR;
    case MP_OP_RESHAPE: return OPT_RESHAPE;
    case MP_OP_MUL: return OPT_MUL;
    case MP_OP_PAD: return OPT_PAD;
    case MP_OP_TRANSPOSE: return OPT_TRANSPOSE;
    case MP_OP_MEAN: case MP_OP_SUM: case MP_OP_REDUCE_PROD: case MP_OP_REDUCE_MAX:
    case MP_OP_REDUCE_MIN: case MP_OP_REDUCE_ANY: case MP_OP_REDUCE_ALL: return OPT_REDUCER;
    case MP_OP_SUB: return OPT_SUB;
    case MP_OP_DIV: return OPT_DIV;
    case MP_OP_SQUEEZE: return OPT_SQUEEZE;
    case MP_OP_STRIDED_SLICE: return OPT_STRIDED_SLICE;
    case MP_OP_EXP: return OPT_EXP;
    case MP_OP_LOG_SOFTMAX: return OPT_LOG_SOFTMAX;
    case MP_OP_TOPK_V2: return OPT_TOPK_V2;
    case MP_OP_ONE_HOT: return OPT_ONE_HOT;
    case MP_OP_FLOOR_DIV: return OPT_FLOOR_DIV;
    case MP_OP_COS: return OPT_COS;
    case MP_OP_CUMSUM: return OPT_CUMSUM;
    case MP_OP_SPARSE_TO_DENSE: return OPT_SPARSE_TO_DENSE;
    case MP_OP_UNIQUE: return OPT_UNIQUE;
    case MP_OP_WHERE: return OPT_WHERE;
    case MP_OP_RANK: return OPT_RANK;
    case MP_OP_REVERSE_SEQUENCE: return OPT_REVERSE_SEQUENCE;
    case MP_OP_MATRIX_DIAG: return OPT_MATRIX_DIAG;
    case MP_OP_MATRIX_SET_DIAG: return OPT_MATRIX_SET_DIAG;
    case MP_OP_SCATTER_ND: return OPT_SCATTER_ND;
    case MP_OP_SEGMENT_SUM: return OPT_SEGMENT_SUM;
    case MP_OP_BUCKETIZE: return OPT_BUCKETIZE;
    case MP_OP_DYNAMIC_UPDATE_SLICE: return OPT_DYNAMIC_UPDATE_SLICE;
    case MP_OP_UNSORTED_SEGMENT_PROD: return OPT_UNSORTED_SEGMENT_PROD;
    case MP_OP_UNSORTED_SEGMENT_MAX: return OPT_UNSORTED_SEGMENT_MAX;
    case MP_OP_UNSORTED_SEGMENT_MIN: return OPT_UNSORTED_SEGMENT_MIN;
    case MP_OP_UNSORTED_SEGMENT_SUM: return OPT_UNSORTED_SEGMENT_SUM;
    case MP_OP_CAST: return OPT_CAST;
    case MP_OP_DEQUANTIZE: return OPT_DEQUANTIZE;
    case MP_OP_MAXIMUM: case MP_OP_MINIMUM: return OPT_MAXIMUM_MINIMUM;
    case MP_OP_PADV2: return OPT_PADV2;
    case MP_OP_SLICE: return OPT_SLICE;
    case MP_OP_EXPAND_DIMS: return OPT_EXPAND_DIMS;
    case MP_OP_SHAPE: return OPT_SHAPE;
    case MP_OP_PACK: return OPT_PACK;
    case MP_OP_RESIZE_NEAREST_NEIGHBOR: return OPT_RESIZE_NEAREST_NEIGHBOR;
    case MP_OP_QUANTIZE: return OPT_QUANTIZE;
    case MP_OP_HARD_SWISH: return OPT_HARD_SWISH;
    case MP_OP_LSTM: return OPT_LSTM;
    case MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM: return OPT_UNI_SEQUENCE_LSTM;
    case MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM: return OPT_BIDI_SEQUENCE_LSTM;
    case MP_OP_SVDF: return OPT_SVDF;
    case MP_OP_RNN: return OPT_RNN;
    case MP_OP_UNIDIRECTIONAL_SEQUENCE_RNN: return OPT_SEQUENCE_RNN;
    case MP_OP_BIDIRECTIONAL_SEQUENCE_RNN: return OPT_BIDI_SEQUENCE_RNN;
    case MP_OP_GATHER: return OPT_GATHER;
    case MP_OP_GATHER_ND: return OPT_GATHER_ND;
    case MP_OP_SPLIT: return OPT_SPLIT;
    case MP_OP_SPLIT_V: return OPT_SPLIT_V;
    case MP_OP_ARG_MAX: return OPT_ARG_MAX;
    case MP_OP_ARG_MIN: return OPT_ARG_MIN;
    case MP_OP_NEG: return OPT_NEG;
    case MP_OP_ABS: return OPT_ABS;
    case MP_OP_SQUARE: return OPT_SQUARE;
    case MP_OP_POW: return OPT_POW;
    case MP_OP_LESS: return OPT_LESS;
    case MP_OP_LESS_EQUAL: return OPT_LESS_EQUAL;
    case MP_OP_GREATER: return OPT_GREATER;
    case MP_OP_GREATER_EQUAL: return OPT_GREATER_EQUAL;
    case MP_OP_EQUAL: return OPT_EQUAL;
    case MP_OP_NOT_EQUAL: return OPT_NOT_EQUAL;
    case MP_OP_LOGICAL_OR: return OPT_LOGICAL_OR;
    case MP_OP_LOGICAL_AND: return OPT_LOGICAL_AND;
    case MP_OP_LOGICAL_NOT: return OPT_LOGICAL_NOT;
    case MP_OP_SELECT: return OPT_SELECT;
    case MP_OP_SELECT_V2: return OPT_SELECT_V2;
    case MP_OP_TILE: return OPT_TILE;
    case MP_OP_ZEROS_LIKE: return OPT_ZEROS_LIKE;
    case MP_OP_FILL: return OPT_FILL;
    case MP_OP_RANGE: return OPT_RANGE;
    case MP_OP_LEAKY_RELU: return OPT_LEAKY_RELU;
    case MP_OP_SQUARED_DIFFERENCE: return OPT_SQUARED_DIFFERENCE;
    case MP_OP_IF: return OPT_IF;
    case MP_OP_CALL_ONCE: return OPT_CALL_ONCE;
    case MP_OP_VAR_HANDLE: return OPT_VAR_HANDLE;
    case MP_OP_LSH_PROJECTION: return OPT_LSH_PROJECTION;
    case MP_OP_SKIP_GRAM: return OPT_SKIP_GRAM;
    case MP_OP_EMBEDDING_LOOKUP_SPARSE: return OPT_EMBEDDING_LOOKUP_SPARSE;
    case MP_OP_HASHTABLE: return OPT_HASHTABLE;
    case MP_OP_HASHTABLE_FIND: return OPT_HASHTABLE_FIND;
    case MP_OP_HASHTABLE_IMPORT: return OPT_HASHTABLE_IMPORT;
    case MP_OP_HASHTABLE_SIZE: return OPT_HASHTABLE_SIZE;
    case MP_OP_READ_VARIABLE: return OPT_READ_VARIABLE;
    case MP_OP_ASSIGN_VARIABLE: return OPT_ASSIGN_VARIABLE;
    case MP_OP_WHILE: return OPT_WHILE;
    case MP_OP_BATCH_MATMUL: return OPT_BATCH_MATMUL;
    case MP_OP_GELU: return OPT_GELU;
    case MP_OP_LOCAL_RESPONSE_NORMALIZATION: return OPT_LRN;
    case MP_OP_ADD_N: return OPT_ADD_N;
    case MP_OP_CONV_3D: case MP_OP_CONV_3D_TRANSPOSE: return OPT_CONV3D;
    case MP_OP_ATAN2: return OPT_ATAN2;
    case MP_OP_SIGN: return OPT_SIGN;
    case MP_OP_BITWISE_XOR: return OPT_BITWISE_XOR;
    case MP_OP_RIGHT_SHIFT: return OPT_RIGHT_SHIFT;
    case MP_OP_SPACE_TO_DEPTH: return OPT_SPACE_TO_DEPTH;
    case MP_OP_DEPTH_TO_SPACE: return OPT_DEPTH_TO_SPACE;
    case MP_OP_TRANSPOSE_CONV: return OPT_TRANSPOSE_CONV;
    case MP_OP_UNPACK: return OPT_UNPACK;
    case MP_OP_MIRROR_PAD: return OPT_MIRROR_PAD;
    case MP_OP_REVERSE_V2: return OPT_REVERSE_V2;
    case MP_OP_BROADCAST_TO: return OPT_BROADCAST_TO;
    case MP_OP_FAKE_QUANT: return OPT_FAKE_QUANT;
    case MP_OP_NON_MAX_SUPPRESSION_V4: return OPT_NMS_V4;
    case MP_OP_NON_MAX_SUPPRESSION_V5: return OPT_NMS_V5;
    case MP_OP_RFFT2D: return OPT_RFFT2D;
    case MP_OP_RANDOM_UNIFORM: case MP_OP_RANDOM_STANDARD_NORMAL: case MP_OP_MULTINOMIAL:
        return OPT_RANDOM;
    default: return OPT_NONE;
    }
}

/* Options type actually written for an operator (RESHAPE without new_shape gets none). */
static int op_options_type(const tfw_op *op)
{
    if (op->opcode == MP_OP_RESHAPE && !op->opt.has_new_shape)
        return OPT_NONE;
    return mp_tfw_options_type(op->opcode);
}

static int32_t *dup_indices(int n, const int32_t *src)
{
    int32_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (p && n > 0)
        memcpy(p, src, (size_t)n * sizeof *p);
    return p;
}

/* The operator code version TensorFlow Lite's converter writes (op_version.cc): an operator
 * on int8 activations is version 2, except CONV_2D and DEPTHWISE_CONV_2D (3: per-channel
 * weights) and FULLY_CONNECTED (4); everything else version 1, as the float models always
 * were. A reader that dispatches on versions then finds the int8 kernels. */
static int op_version(const mp_tfw *w, int opcode, int n_in, const int32_t *ins)
{
    if (n_in < 1 || ins[0] < 0 || w->tensors[ins[0]].dtype != MP_DT_INT8)
        return 1;
    switch (opcode) {
    case MP_OP_CONV_2D:
    case MP_OP_DEPTHWISE_CONV_2D: return 3;
    case MP_OP_FULLY_CONNECTED: return 4;
    case MP_OP_RESHAPE: return 1;
    default: return 2;
    }
}

/* The inputs and outputs of operator idx (named `label`) exist; -1 when not (recorded). */
static int check_op_lists(mp_tfw *w, int idx, const char *label, int n_in, const int32_t *ins,
                          int n_out, const int32_t *outs)
{
    if (n_in < 0 || n_out < 0 || (n_in > 0 && !ins) || (n_out > 0 && !outs))
        return fail(w, MP_ERR_ARG, "operator %d (%s): bad input/output lists", idx, label);
    for (int i = 0; i < n_in; i++)
        if (ins[i] < -1 || ins[i] >= w->n_tensors)
            return fail(w, MP_ERR_ARG, "operator %d (%s): input %d is tensor %d, which does not exist",
                        idx, label, i, (int)ins[i]);
    for (int i = 0; i < n_out; i++)
        if (outs[i] < 0 || outs[i] >= w->n_tensors)
            return fail(w, MP_ERR_ARG, "operator %d (%s): output %d is tensor %d, which does not exist",
                        idx, label, i, (int)outs[i]);
    return 0;
}

/* Append operator w->n_ops (lists checked) with operator code entry ci; returns its index. */
static int add_op(mp_tfw *w, int opcode, int ci, int n_in, const int32_t *ins, int n_out,
                  const int32_t *outs, const mp_op_options *opt, const void *custom_options,
                  size_t custom_options_size)
{
    int idx = w->n_ops;
    if (!grow((void **)&w->ops, &w->cap_ops, idx + 1, sizeof *w->ops))
        return fail(w, MP_ERR_NOMEM, "out of memory");
    tfw_op *op = &w->ops[idx];
    op->opcode = opcode;
    op->code_index = ci;
    op->n_in = n_in;
    op->n_out = n_out;
    op->ins = dup_indices(n_in, ins);
    op->outs = dup_indices(n_out, outs);
    op->opt = opt ? *opt : mp_tfw_options_default();
    op->custom_options = NULL;
    op->custom_options_size = 0;
    op->n_inter = 0;
    op->inter = NULL;
    if (custom_options_size && (op->custom_options = malloc(custom_options_size)) != NULL) {
        memcpy(op->custom_options, custom_options, custom_options_size);
        op->custom_options_size = custom_options_size;
    }
    /* VAR_HANDLE's names: the writer's own copies, the caller's need not outlive the call */
    const char *names[2] = {op->opt.var_container, op->opt.var_shared_name};
    bool names_ok = true;
    for (int k = 0; k < 2; k++) {
        op->var_names[k] = names[k] ? dup_str(names[k]) : NULL;
        names_ok = names_ok && (!names[k] || op->var_names[k]);
    }
    op->opt.var_container = op->var_names[0];
    op->opt.var_shared_name = op->var_names[1];
    if (!op->ins || !op->outs || (custom_options_size && !op->custom_options) || !names_ok) {
        free(op->ins);
        free(op->outs);
        free(op->custom_options);
        free(op->var_names[0]);
        free(op->var_names[1]);
        return fail(w, MP_ERR_NOMEM, "out of memory");
    }
    return w->n_ops++;
}

int mp_tfw_op(mp_tfw *w, int opcode, int n_in, const int32_t *ins, int n_out, const int32_t *outs,
              const mp_op_options *opt)
{
    int idx = w->n_ops;
    if (opcode < 0 || opcode >= MP_OP_CODE_COUNT || opcode == MP_OP_CUSTOM)
        return fail(w, MP_ERR_ARG, "operator %d: bad builtin code %d", idx, opcode);
    if (check_op_lists(w, idx, mp_op_name(opcode), n_in, ins, n_out, outs) < 0)
        return -1;
    if (opt && opt->has_new_shape && (opt->n_new_shape < 0 || opt->n_new_shape > MP_MAX_RANK))
        return fail(w, MP_ERR_ARG, "operator %d: bad new_shape length %d", idx, opt->n_new_shape);
    if (opt && (opt->n_squeeze_dims < 0 || opt->n_squeeze_dims > MP_MAX_RANK))
        return fail(w, MP_ERR_ARG, "operator %d: bad squeeze_dims length %d", idx,
                    opt->n_squeeze_dims);

    /* operator code table entry (deduplicated by code and version) */
    const int version = op_version(w, opcode, n_in, ins);
    int ci = 0;
    while (ci < w->n_codes && !(w->codes[ci].code == opcode && w->codes[ci].version == version &&
                                !w->codes[ci].custom))
        ci++;
    if (ci == w->n_codes) {
        if (!grow((void **)&w->codes, &w->cap_codes, w->n_codes + 1, sizeof *w->codes))
            return fail(w, MP_ERR_NOMEM, "out of memory");
        w->codes[ci].code = opcode;
        w->codes[ci].version = version;
        w->codes[ci].custom = NULL;
        w->n_codes++;
    }

    return add_op(w, opcode, ci, n_in, ins, n_out, outs, opt, NULL, 0);
}

int mp_tfw_custom_op(mp_tfw *w, const char *custom_code, const void *options, size_t size,
                     int n_in, const int32_t *ins, int n_out, const int32_t *outs)
{
    int idx = w->n_ops;
    if (!custom_code || !custom_code[0])
        return fail(w, MP_ERR_ARG, "operator %d: a custom operator needs a custom code", idx);
    if ((size && !options) || size > 0x7fff0000u)
        return fail(w, MP_ERR_ARG, "operator %d (%s): bad custom options", idx, custom_code);
    if (check_op_lists(w, idx, custom_code, n_in, ins, n_out, outs) < 0)
        return -1;
    int ci = 0;
    while (ci < w->n_codes && !(w->codes[ci].custom && strcmp(w->codes[ci].custom, custom_code) == 0))
        ci++;
    if (ci == w->n_codes) {
        if (!grow((void **)&w->codes, &w->cap_codes, w->n_codes + 1, sizeof *w->codes))
            return fail(w, MP_ERR_NOMEM, "out of memory");
        char *name = dup_str(custom_code);
        if (!name)
            return fail(w, MP_ERR_NOMEM, "out of memory");
        w->codes[ci] = (tfw_code){.code = MP_OP_CUSTOM, .version = 1, .custom = name};
        w->n_codes++;
    }
    return add_op(w, MP_OP_CUSTOM, ci, n_in, ins, n_out, outs, NULL, options, size);
}

int mp_tfw_op_intermediates(mp_tfw *w, int op, int n, const int32_t *tensors)
{
    if (op < 0 || op >= w->n_ops || n < 1 || !tensors)
        return fail(w, MP_ERR_ARG, "intermediates of operator %d: bad operator or list", op);
    for (int i = 0; i < n; i++)
        if (tensors[i] < 0 || tensors[i] >= w->n_tensors)
            return fail(w, MP_ERR_ARG, "operator %d: intermediate %d is tensor %d, which does "
                        "not exist", op, i, (int)tensors[i]);
    int32_t *copy = dup_indices(n, tensors);
    if (!copy)
        return fail(w, MP_ERR_NOMEM, "out of memory");
    free(w->ops[op].inter);
    w->ops[op].inter = copy;
    w->ops[op].n_inter = n;
    return op;
}

int mp_tfw_io(mp_tfw *w, int n_in, const int32_t *ins, int n_out, const int32_t *outs)
{
    if (n_in < 0 || n_out < 0 || (n_in > 0 && !ins) || (n_out > 0 && !outs))
        return fail(w, MP_ERR_ARG, "subgraph inputs/outputs: bad lists");
    for (int i = 0; i < n_in; i++)
        if (ins[i] < 0 || ins[i] >= w->n_tensors)
            return fail(w, MP_ERR_ARG, "subgraph input %d is tensor %d, which does not exist", i,
                        (int)ins[i]);
    for (int i = 0; i < n_out; i++)
        if (outs[i] < 0 || outs[i] >= w->n_tensors)
            return fail(w, MP_ERR_ARG, "subgraph output %d is tensor %d, which does not exist", i,
                        (int)outs[i]);
    int32_t *a = dup_indices(n_in, ins), *b = dup_indices(n_out, outs);
    if (!a || !b) {
        free(a);
        free(b);
        return fail(w, MP_ERR_NOMEM, "out of memory");
    }
    free(w->ins);
    free(w->outs);
    w->ins = a;
    w->outs = b;
    w->n_ins = n_in;
    w->n_outs = n_out;
    return 0;
}

/* ---- the byte-level FlatBuffer builder --------------------------------------------------- */

typedef struct fbb {
    uint8_t *p;
    size_t len, cap;
    bool oom;
    size_t *vtables;   /* positions of vtables written so far, for sharing */
    int n_vtables, cap_vtables;
} fbb;

static bool fb_reserve(fbb *b, size_t n)
{
    if (b->oom)
        return false;
    if (b->len + n <= b->cap)
        return true;
    size_t c = b->cap ? b->cap : 4096;
    while (c < b->len + n)
        c *= 2;
    uint8_t *p = realloc(b->p, c);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = c;
    return true;
}

/* Append n bytes (zeros when src is NULL); returns their position. */
static size_t fb_put(fbb *b, const void *src, size_t n)
{
    size_t at = b->len;
    if (!fb_reserve(b, n))
        return at;
    if (src)
        memcpy(b->p + at, src, n);
    else
        memset(b->p + at, 0, n);
    b->len += n;
    return at;
}

static void fb_align(fbb *b, size_t a)
{
    while (b->len % a)
        fb_put(b, NULL, 1);
}

static void fb_le32_at(fbb *b, size_t at, uint32_t v)
{
    if (b->oom)
        return;
    b->p[at] = (uint8_t)v;
    b->p[at + 1] = (uint8_t)(v >> 8);
    b->p[at + 2] = (uint8_t)(v >> 16);
    b->p[at + 3] = (uint8_t)(v >> 24);
}

static void fb_le32(fbb *b, uint32_t v)
{
    size_t at = fb_put(b, NULL, 4);
    fb_le32_at(b, at, v);
}

static void fb_le16(fbb *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    fb_put(b, x, 2);
}

static void fb_le64(fbb *b, uint64_t v)
{
    fb_le32(b, (uint32_t)v);
    fb_le32(b, (uint32_t)(v >> 32));
}

/* Point the uoffset field at `at` to the object at `target` (always later in the file). */
static void fb_link(fbb *b, size_t at, size_t target)
{
    fb_le32_at(b, at, (uint32_t)(target - at));
}

/* Start a vector of `count` elements whose first element is aligned to `align` (>= 4 for the
 * length prefix); returns the vector's position (that of its length). */
static size_t fb_vector(fbb *b, uint32_t count, size_t align)
{
    if (align < 4)
        align = 4;
    fb_align(b, 4);
    while ((b->len + 4) % align)
        fb_put(b, NULL, 4);
    size_t at = b->len;
    fb_le32(b, count);
    return at;
}

static size_t fb_int_vector(fbb *b, int n, const int32_t *v)
{
    size_t at = fb_vector(b, (uint32_t)n, 4);
    for (int i = 0; i < n; i++)
        fb_le32(b, (uint32_t)v[i]);
    return at;
}

static size_t fb_string(fbb *b, const char *s)
{
    size_t n = strlen(s);
    size_t at = fb_vector(b, (uint32_t)n, 4);
    fb_put(b, s, n);
    fb_put(b, NULL, 1);
    return at;
}

/* Vector of `n` uoffsets to be linked later: returns the position of element 0. */
static size_t fb_offset_vector(fbb *b, int n, size_t *vec_pos)
{
    *vec_pos = fb_vector(b, (uint32_t)n, 4);
    return fb_put(b, NULL, 4 * (size_t)n);
}

/* A table under construction: up to TB_SLOTS field ids, each a 1-, 4- or 8-byte scalar or a
 * uoffset (a 4-byte placeholder linked after the table is written). */
#define TB_SLOTS 16

typedef struct tb {
    int n_slots;
    struct {
        uint8_t size;     /* 0: absent */
        uint64_t bits;
        size_t pos;       /* position in the file once written */
    } f[TB_SLOTS];
} tb;

static void tb_init(tb *t)
{
    memset(t, 0, sizeof *t);
}

static void tb_set(tb *t, int id, uint8_t size, uint64_t bits)
{
    t->f[id].size = size;
    t->f[id].bits = bits;
    if (id + 1 > t->n_slots)
        t->n_slots = id + 1;
}

/* Scalars are written only when they differ from the schema default. */
static void tb_i32(tb *t, int id, int32_t v, int32_t def)
{
    if (v != def)
        tb_set(t, id, 4, (uint32_t)v);
}

static void tb_i64(tb *t, int id, int64_t v, int64_t def)
{
    if (v != def)
        tb_set(t, id, 8, (uint64_t)v);
}

static void tb_u8(tb *t, int id, int v, int def)
{
    if (v != def)
        tb_set(t, id, 1, (uint32_t)(uint8_t)v);
}

static void tb_f32(tb *t, int id, float v, float def)
{
    if (v != def) {
        uint32_t bits;
        memcpy(&bits, &v, 4);
        tb_set(t, id, 4, bits);
    }
}

static void tb_ref(tb *t, int id)
{
    tb_set(t, id, 4, 0);
}

/* Write the table (and its vtable, unless an identical one exists); returns its position.
 * Fields are laid out 8-byte ones first (the table placed so that they fall on multiples of
 * 8), then 4-byte ones, then 1-byte ones, so all are naturally aligned. */
static size_t tb_write(fbb *b, tb *t)
{
    uint16_t vt[2 + TB_SLOTS];
    int vt_n = 2 + t->n_slots;
    uint16_t off = 4;
    bool wide = false;
    for (int pass = 8; pass >= 1; pass = pass == 8 ? 4 : pass - 3) {
        for (int id = 0; id < t->n_slots; id++) {
            if (t->f[id].size == pass) {
                wide |= pass == 8;
                vt[2 + id] = off;
                off = (uint16_t)(off + pass);
            } else if (t->f[id].size == 0) {
                vt[2 + id] = 0;
            }
        }
    }
    vt[0] = (uint16_t)(2 * vt_n);
    vt[1] = off;

    /* share an identical earlier vtable, else write this one */
    size_t vt_pos = 0;
    bool found = false;
    for (int i = 0; i < b->n_vtables && !found && !b->oom; i++) {
        const uint8_t *q = b->p + b->vtables[i];
        if ((size_t)(q[0] | q[1] << 8) != (size_t)vt[0])
            continue;
        found = true;
        for (int k = 0; k < vt_n && found; k++)
            found = (uint16_t)(q[2 * k] | q[2 * k + 1] << 8) == vt[k];
        if (found)
            vt_pos = b->vtables[i];
    }
    if (!found) {
        fb_align(b, 2);
        vt_pos = b->len;
        for (int k = 0; k < vt_n; k++)
            fb_le16(b, vt[k]);
        if (grow((void **)&b->vtables, &b->cap_vtables, b->n_vtables + 1, sizeof *b->vtables))
            b->vtables[b->n_vtables++] = vt_pos;
    }

    fb_align(b, 4);
    if (wide && b->len % 8 != 4)
        fb_put(b, NULL, 4);
    size_t at = b->len;
    fb_le32(b, (uint32_t)(int32_t)(at - vt_pos));
    fb_put(b, NULL, (size_t)off - 4);
    for (int id = 0; id < t->n_slots && !b->oom; id++) {
        if (!t->f[id].size)
            continue;
        size_t pos = at + vt[2 + id];
        t->f[id].pos = pos;
        if (t->f[id].size == 8) {
            fb_le32_at(b, pos, (uint32_t)t->f[id].bits);
            fb_le32_at(b, pos + 4, (uint32_t)(t->f[id].bits >> 32));
        } else if (t->f[id].size == 4)
            fb_le32_at(b, pos, (uint32_t)t->f[id].bits);
        else
            b->p[pos] = (uint8_t)t->f[id].bits;
    }
    return at;
}

/* ---- serializing the schema's tables --------------------------------------------------- */

static size_t write_operator_code(fbb *b, const tfw_code *c)
{
    tb t;
    tb_init(&t);
    int deprecated = c->code < PLACEHOLDER_FOR_GREATER_OP_CODES ? c->code
                                                                : PLACEHOLDER_FOR_GREATER_OP_CODES;
    tb_u8(&t, OPCODE_DEPRECATED_BUILTIN_CODE, deprecated, 0);
    if (c->custom)
        tb_ref(&t, OPCODE_CUSTOM_CODE);
    tb_i32(&t, OPCODE_VERSION, c->version, 1);
    tb_i32(&t, OPCODE_BUILTIN_CODE, c->code, 0);
    size_t at = tb_write(b, &t);
    if (c->custom)
        fb_link(b, t.f[OPCODE_CUSTOM_CODE].pos, fb_string(b, c->custom));
    return at;
}

static size_t write_quantization(fbb *b, const tfw_tensor *x)
{
    tb t;
    tb_init(&t);
    tb_ref(&t, QUANT_SCALE);
    tb_ref(&t, QUANT_ZERO_POINT);
    tb_i32(&t, QUANT_QUANTIZED_DIMENSION, x->q_dim, 0);
    size_t at = tb_write(b, &t);

    size_t v = fb_vector(b, (uint32_t)x->q_count, 4);
    for (int i = 0; i < x->q_count; i++) {
        uint32_t bits;
        memcpy(&bits, &x->q_scale[i], 4);
        fb_le32(b, bits);
    }
    fb_link(b, t.f[QUANT_SCALE].pos, v);
    v = fb_vector(b, (uint32_t)x->q_count, 8);
    for (int i = 0; i < x->q_count; i++)
        fb_le64(b, (uint64_t)x->q_zero_point[i]);
    fb_link(b, t.f[QUANT_ZERO_POINT].pos, v);
    return at;
}

/* A SparseIndexVector member table (Int32Vector, Uint16Vector or Uint8Vector by `bits`): its
 * one field, the values. */
static size_t write_index_vector(fbb *b, int bits, int n, const int32_t *v)
{
    tb t;
    tb_init(&t);
    tb_ref(&t, 0);
    size_t at = tb_write(b, &t);
    size_t vec = fb_vector(b, (uint32_t)n, 4);
    for (int i = 0; i < n; i++) {
        if (bits == 32) {
            fb_le32(b, (uint32_t)v[i]);
        } else if (bits == 16) {
            fb_le16(b, (uint16_t)v[i]);
        } else {
            uint8_t x = (uint8_t)v[i];
            fb_put(b, &x, 1);
        }
    }
    fb_link(b, t.f[0].pos, vec);
    return at;
}

static size_t write_sparse_dim(fbb *b, const mp_tfw_sparse_dim *d)
{
    const int type = d->index_bits == 32 ? 1 : d->index_bits == 16 ? 2 : 3;
    tb t;
    tb_init(&t);
    tb_u8(&t, DIM_FORMAT, d->sparse, 0);
    tb_i32(&t, DIM_DENSE_SIZE, d->dense_size, 0);
    if (d->sparse == 1) {
        tb_u8(&t, DIM_SEGMENTS_TYPE, type, 0);
        tb_ref(&t, DIM_SEGMENTS);
        tb_u8(&t, DIM_INDICES_TYPE, type, 0);
        tb_ref(&t, DIM_INDICES);
    }
    size_t at = tb_write(b, &t);
    if (d->sparse == 1) {
        fb_link(b, t.f[DIM_SEGMENTS].pos,
                write_index_vector(b, d->index_bits, d->n_segments, d->segments));
        fb_link(b, t.f[DIM_INDICES].pos,
                write_index_vector(b, d->index_bits, d->n_indices, d->indices));
    }
    return at;
}

static size_t write_sparsity(fbb *b, const mp_tfw_sparsity *s)
{
    tb t;
    tb_init(&t);
    tb_ref(&t, SPARSITY_TRAVERSAL_ORDER);
    if (s->n_block_map > 0)
        tb_ref(&t, SPARSITY_BLOCK_MAP);
    tb_ref(&t, SPARSITY_DIM_METADATA);
    size_t at = tb_write(b, &t);
    fb_link(b, t.f[SPARSITY_TRAVERSAL_ORDER].pos,
            fb_int_vector(b, s->n_order, s->traversal_order));
    if (s->n_block_map > 0)
        fb_link(b, t.f[SPARSITY_BLOCK_MAP].pos, fb_int_vector(b, s->n_block_map, s->block_map));
    size_t vec, elem = fb_offset_vector(b, s->n_dims, &vec);
    fb_link(b, t.f[SPARSITY_DIM_METADATA].pos, vec);
    for (int k = 0; k < s->n_dims; k++)
        fb_link(b, elem + 4 * (size_t)k, write_sparse_dim(b, &s->dims[k]));
    return at;
}

static size_t write_tensor(fbb *b, const tfw_tensor *x)
{
    tb t;
    tb_init(&t);
    tb_ref(&t, TENSOR_SHAPE);
    tb_u8(&t, TENSOR_TYPE, x->dtype, MP_DT_FLOAT32);
    tb_i32(&t, TENSOR_BUFFER, x->buffer, 0);
    tb_ref(&t, TENSOR_NAME);
    if (x->q_count > 0)
        tb_ref(&t, TENSOR_QUANTIZATION);
    tb_u8(&t, TENSOR_IS_VARIABLE, x->is_variable, 0);
    if (x->sparse)
        tb_ref(&t, TENSOR_SPARSITY);
    if (x->has_signature)
        tb_ref(&t, TENSOR_SHAPE_SIGNATURE);
    size_t at = tb_write(b, &t);

    fb_link(b, t.f[TENSOR_SHAPE].pos, fb_int_vector(b, x->rank, x->dims));
    fb_link(b, t.f[TENSOR_NAME].pos, fb_string(b, x->name));
    if (x->q_count > 0)
        fb_link(b, t.f[TENSOR_QUANTIZATION].pos, write_quantization(b, x));
    if (x->sparse)
        fb_link(b, t.f[TENSOR_SPARSITY].pos, write_sparsity(b, &x->sparse->s));
    if (x->has_signature)
        fb_link(b, t.f[TENSOR_SHAPE_SIGNATURE].pos, fb_int_vector(b, x->rank, x->signature));
    return at;
}

/* The builtin options table of `op` (type from op_options_type). Ids follow the schema. */
static size_t write_options(fbb *b, const tfw_op *op, int type)
{
    const mp_op_options *o = &op->opt;
    tb t;
    tb_init(&t);
    switch (type) {
    case OPT_CONV2D:
        /* padding, stride_w, stride_h, fused_activation_function, dilation_w, dilation_h */
        tb_u8(&t, 0, o->padding, MP_PAD_SAME);
        tb_i32(&t, 1, o->stride_w, 0);
        tb_i32(&t, 2, o->stride_h, 0);
        tb_u8(&t, 3, o->activation, MP_ACT_NONE);
        tb_i32(&t, 4, o->dilation_w ? o->dilation_w : 1, 1);
        tb_i32(&t, 5, o->dilation_h ? o->dilation_h : 1, 1);
        break;
    case OPT_DEPTHWISE_CONV2D:
        /* padding, stride_w, stride_h, depth_multiplier, activation, dilation_w, dilation_h */
        tb_u8(&t, 0, o->padding, MP_PAD_SAME);
        tb_i32(&t, 1, o->stride_w, 0);
        tb_i32(&t, 2, o->stride_h, 0);
        tb_i32(&t, 3, o->depth_multiplier, 0);
        tb_u8(&t, 4, o->activation, MP_ACT_NONE);
        tb_i32(&t, 5, o->dilation_w ? o->dilation_w : 1, 1);
        tb_i32(&t, 6, o->dilation_h ? o->dilation_h : 1, 1);
        break;
    case OPT_POOL2D:
        /* padding, stride_w, stride_h, filter_width, filter_height, activation */
        tb_u8(&t, 0, o->padding, MP_PAD_SAME);
        tb_i32(&t, 1, o->stride_w, 0);
        tb_i32(&t, 2, o->stride_h, 0);
        tb_i32(&t, 3, o->filter_w, 0);
        tb_i32(&t, 4, o->filter_h, 0);
        tb_u8(&t, 5, o->activation, MP_ACT_NONE);
        break;
    case OPT_FULLY_CONNECTED:
        /* activation, weights_format, keep_num_dims, asymmetric_quantize_inputs */
        tb_u8(&t, 0, o->activation, MP_ACT_NONE);
        tb_u8(&t, 1, o->weights_format, 0);
        tb_u8(&t, 2, o->keep_num_dims, 0);
        break;
    case OPT_SOFTMAX:
        tb_f32(&t, 0, o->beta, 0.0f);
        break;
    case OPT_ONE_HOT:
        tb_i32(&t, 0, o->axis, 0);
        break;
    case OPT_CUMSUM:
        tb_u8(&t, 0, o->exclusive, 0);
        tb_u8(&t, 1, o->reverse, 0);
        break;
    case OPT_SPARSE_TO_DENSE:
        tb_u8(&t, 0, o->validate_indices, 0);
        break;
    case OPT_UNIQUE: /* idx_out_type (kept in out_type) */
        tb_u8(&t, 0, o->out_type, MP_DT_INT32);
        break;
    case OPT_REVERSE_SEQUENCE:
        tb_i32(&t, 0, o->seq_dim, 0);
        tb_i32(&t, 1, o->batch_dim, 0);
        break;
    case OPT_BUCKETIZE:
        if (o->n_boundaries > 0)
            tb_ref(&t, 0); /* boundaries */
        break;
    case OPT_CONCATENATION:
        /* axis, activation */
        tb_i32(&t, 0, o->axis, 0);
        tb_u8(&t, 1, o->activation, MP_ACT_NONE);
        break;
    case OPT_ADD: case OPT_MUL: case OPT_SUB: case OPT_DIV: case OPT_L2NORM:
        /* activation first in all of these */
        tb_u8(&t, 0, o->activation, MP_ACT_NONE);
        if (type == OPT_ADD || type == OPT_SUB) /* pot_scale_int16, default true */
            tb_u8(&t, 1, !o->int16_general_scale, 1);
        break;
    case OPT_RESIZE_BILINEAR:
        /* new_height (deprecated), new_width (deprecated), align_corners, half_pixel_centers */
        tb_u8(&t, 2, o->align_corners, 0);
        tb_u8(&t, 3, o->half_pixel_centers, 0);
        break;
    case OPT_RESIZE_NEAREST_NEIGHBOR:
        tb_u8(&t, 0, o->align_corners, 0);
        tb_u8(&t, 1, o->half_pixel_centers, 0);
        break;
    case OPT_RESHAPE:
        tb_ref(&t, 0); /* new_shape */
        break;
    case OPT_REDUCER:
        tb_u8(&t, 0, o->keep_dims, 0);
        break;
    case OPT_SQUEEZE:
        if (o->n_squeeze_dims > 0)
            tb_ref(&t, 0);
        break;
    case OPT_STRIDED_SLICE:
        tb_i32(&t, 0, o->begin_mask, 0);
        tb_i32(&t, 1, o->end_mask, 0);
        tb_i32(&t, 2, o->ellipsis_mask, 0);
        tb_i32(&t, 3, o->new_axis_mask, 0);
        tb_i32(&t, 4, o->shrink_axis_mask, 0);
        tb_u8(&t, 5, o->offset, 0);
        break;
    case OPT_CAST:
        /* -1 means absent; 0 (FLOAT32) is the default anyway */
        if (o->in_data_type > 0)
            tb_u8(&t, 0, o->in_data_type, 0);
        if (o->out_data_type > 0)
            tb_u8(&t, 1, o->out_data_type, 0);
        break;
    case OPT_SHAPE:
        /* always written: readers disagree on what an absent out_type means */
        tb_set(&t, 0, 1, (uint8_t)o->out_type);
        break;
    case OPT_PACK:
        tb_i32(&t, 0, o->values_count, 0);
        tb_i32(&t, 1, o->axis, 0);
        break;
    case OPT_LSTM:
    case OPT_UNI_SEQUENCE_LSTM:
        /* activation, cell_clip, proj_clip, then LSTM: kernel_type, asymmetric_quantize_inputs;
         * UNIDIRECTIONAL_SEQUENCE_LSTM: time_major, asymmetric_quantize_inputs,
         * diagonal_recurrent_tensors */
        tb_u8(&t, 0, o->activation, MP_ACT_NONE);
        tb_f32(&t, 1, o->cell_clip, 0.0f);
        tb_f32(&t, 2, o->proj_clip, 0.0f);
        tb_u8(&t, 3, type == OPT_LSTM ? o->lstm_kernel_type : o->time_major, 0);
        tb_u8(&t, 4, o->asymmetric_quantize_inputs, 0);
        if (type == OPT_UNI_SEQUENCE_LSTM)
            tb_u8(&t, 5, o->diagonal_recurrent_tensors, 0);
        break;
    case OPT_BIDI_SEQUENCE_LSTM:
        /* activation, cell_clip, proj_clip, merge_outputs, time_major (default true),
         * asymmetric_quantize_inputs */
        tb_u8(&t, 0, o->activation, MP_ACT_NONE);
        tb_f32(&t, 1, o->cell_clip, 0.0f);
        tb_f32(&t, 2, o->proj_clip, 0.0f);
        tb_u8(&t, 3, o->merge_outputs, 0);
        tb_u8(&t, 4, o->time_major, 1);
        tb_u8(&t, 5, o->asymmetric_quantize_inputs, 0);
        break;
    case OPT_RNN:
        tb_u8(&t, 0, o->activation, MP_ACT_NONE);
        tb_u8(&t, 1, o->asymmetric_quantize_inputs, 0);
        break;
    case OPT_SVDF:
    case OPT_SEQUENCE_RNN:
    case OPT_BIDI_SEQUENCE_RNN:
        /* SVDF: rank, SequenceRNN and BidirectionalSequenceRNN: time_major; then activation;
         * BidirectionalSequenceRNN: merge_outputs; asymmetric_quantize_inputs last */
        if (type == OPT_SVDF)
            tb_i32(&t, 0, o->svdf_rank, 0);
        else
            tb_u8(&t, 0, o->time_major, 0);
        tb_u8(&t, 1, o->activation, MP_ACT_NONE);
        if (type == OPT_BIDI_SEQUENCE_RNN)
            tb_u8(&t, 2, o->merge_outputs, 0);
        tb_u8(&t, type == OPT_BIDI_SEQUENCE_RNN ? 3 : 2, o->asymmetric_quantize_inputs, 0);
        break;
    case OPT_GATHER:
        tb_i32(&t, 0, o->axis, 0);
        tb_i32(&t, 1, o->batch_dims, 0);
        break;
    case OPT_SPLIT:
    case OPT_SPLIT_V:
        tb_i32(&t, 0, o->num_splits, 0);
        break;
    case OPT_ARG_MAX:
    case OPT_ARG_MIN:
        if (o->out_type >= 0)
            tb_set(&t, 0, 1, (uint8_t)o->out_type);
        break;
    case OPT_LEAKY_RELU:
        tb_f32(&t, 0, o->alpha, 0.0f);
        break;
    case OPT_IF:
    case OPT_WHILE:
        tb_i32(&t, 0, o->subgraph_a, 0);
        tb_i32(&t, 1, o->subgraph_b, 0);
        break;
    case OPT_CALL_ONCE:
        tb_i32(&t, 0, o->subgraph_a, 0); /* init_subgraph_index */
        break;
    case OPT_VAR_HANDLE: /* container, shared_name: strings, linked below */
        if (o->var_container)
            tb_ref(&t, 0);
        if (o->var_shared_name)
            tb_ref(&t, 1);
        break;
    case OPT_BATCH_MATMUL:
        tb_u8(&t, 0, o->adj_x, 0);
        tb_u8(&t, 1, o->adj_y, 0);
        tb_u8(&t, 2, o->asymmetric_quantize_inputs, 0);
        break;
    case OPT_GELU:
        tb_u8(&t, 0, o->approximate, 0);
        break;
    case OPT_SPACE_TO_DEPTH:
    case OPT_DEPTH_TO_SPACE:
        tb_i32(&t, 0, o->block_size, 0);
        break;
    case OPT_TRANSPOSE_CONV:
        /* padding, stride_w, stride_h, fused_activation_function */
        tb_u8(&t, 0, o->padding, MP_PAD_SAME);
        tb_i32(&t, 1, o->stride_w, 0);
        tb_i32(&t, 2, o->stride_h, 0);
        tb_u8(&t, 3, o->activation, MP_ACT_NONE);
        break;
    case OPT_LRN:
        /* radius, bias, alpha, beta */
        tb_i32(&t, 0, o->lrn_radius, 0);
        tb_f32(&t, 1, o->lrn_bias, 0.0f);
        tb_f32(&t, 2, o->lrn_alpha, 0.0f);
        tb_f32(&t, 3, o->lrn_beta, 0.0f);
        break;
    case OPT_CONV3D:
        /* padding, stride_d, stride_w, stride_h, activation, dilation_d, _w, _h (0 read as 1) */
        tb_u8(&t, 0, o->padding, MP_PAD_SAME);
        tb_i32(&t, 1, o->stride_d, 0);
        tb_i32(&t, 2, o->stride_w, 0);
        tb_i32(&t, 3, o->stride_h, 0);
        tb_u8(&t, 4, o->activation, MP_ACT_NONE);
        tb_i32(&t, 5, o->dilation_d ? o->dilation_d : 1, 1);
        tb_i32(&t, 6, o->dilation_w ? o->dilation_w : 1, 1);
        tb_i32(&t, 7, o->dilation_h ? o->dilation_h : 1, 1);
        break;
    case OPT_UNPACK:
        /* num (kept in values_count), axis */
        tb_i32(&t, 0, o->values_count, 0);
        tb_i32(&t, 1, o->axis, 0);
        break;
    case OPT_MIRROR_PAD:
        tb_u8(&t, 0, o->mirror_pad_mode, 0);
        break;
    case OPT_RANDOM:
        tb_i64(&t, 0, o->random_seed, 0);
        tb_i64(&t, 1, o->random_seed2, 0);
        break;
    case OPT_FAKE_QUANT:
        /* min, max, num_bits, narrow_range */
        tb_f32(&t, 0, o->fq_min, 0.0f);
        tb_f32(&t, 1, o->fq_max, 0.0f);
        tb_i32(&t, 2, o->fq_num_bits, 0);
        tb_u8(&t, 3, o->fq_narrow_range, 0);
        break;
    case OPT_LSH_PROJECTION:
        tb_u8(&t, 0, o->lsh_type, 0);
        break;
    case OPT_SKIP_GRAM: /* ngram_size, max_skip_size, include_all_ngrams */
        tb_i32(&t, 0, o->ngram_size, 0);
        tb_i32(&t, 1, o->max_skip_size, 0);
        tb_u8(&t, 2, o->include_all_ngrams, 0);
        break;
    case OPT_EMBEDDING_LOOKUP_SPARSE:
        tb_u8(&t, 0, o->combiner, 0);
        break;
    case OPT_HASHTABLE: /* table_id, key_dtype, value_dtype */
        tb_i32(&t, 0, o->table_id, 0);
        tb_u8(&t, 1, (uint8_t)o->key_dtype, 0);
        tb_u8(&t, 2, (uint8_t)o->value_dtype, 0);
        break;
    default: /* option tables without fields */
        break;
    }
    size_t at = tb_write(b, &t);
    if (type == OPT_RESHAPE)
        fb_link(b, t.f[0].pos, fb_int_vector(b, o->n_new_shape, o->new_shape));
    if (type == OPT_SQUEEZE && o->n_squeeze_dims > 0)
        fb_link(b, t.f[0].pos, fb_int_vector(b, o->n_squeeze_dims, o->squeeze_dims));
    if (type == OPT_BUCKETIZE && o->n_boundaries > 0) {
        size_t v = fb_vector(b, (uint32_t)o->n_boundaries, 4);
        fb_put(b, o->boundaries, 4 * (size_t)o->n_boundaries);
        fb_link(b, t.f[0].pos, v);
    }
    if (type == OPT_VAR_HANDLE && o->var_container)
        fb_link(b, t.f[0].pos, fb_string(b, o->var_container));
    if (type == OPT_VAR_HANDLE && o->var_shared_name)
        fb_link(b, t.f[1].pos, fb_string(b, o->var_shared_name));
    return at;
}

int mp_tfw_options2_type(int opcode)
{
    switch (opcode) {
    case MP_OP_STABLEHLO_SCATTER: return OPT2_SCATTER;
    case MP_OP_STABLEHLO_PAD: return OPT2_PAD;
    case MP_OP_STABLEHLO_REDUCE_WINDOW: return OPT2_REDUCE_WINDOW;
    case MP_OP_STABLEHLO_GATHER: return OPT2_GATHER;
    case MP_OP_DILATE: return OPT2_DILATE;
    case MP_OP_STABLEHLO_RNG_BIT_GENERATOR: return OPT2_RNG_BIT_GENERATOR;
    case MP_OP_REDUCE_WINDOW: return OPT2_REDUCE_WINDOW_TFL;
    case MP_OP_STABLEHLO_COMPOSITE: return OPT2_COMPOSITE;
    case MP_OP_STABLEHLO_SHIFT_LEFT: return OPT2_SHIFT_LEFT;
    case MP_OP_STABLEHLO_CASE: return OPT2_CASE;
    default: return OPT2_NONE;
    }
}

/* A list as a vector of int64: n values (a count above MP_SHLO_LIST, a fault for the reader
 * to refuse, is written with zeros past the list's values). */
static size_t fb_i64_list(fbb *b, const mp_shlo_list *l)
{
    size_t at = fb_vector(b, (uint32_t)l->n, 8);
    for (int32_t k = 0; k < l->n; k++)
        fb_le64(b, k < MP_SHLO_LIST ? (uint64_t)l->v[k] : 0);
    return at;
}

/* The BuiltinOptions2 table of `op` (type from mp_tfw_options2_type), from opt.shlo (NULL: every
 * field its default) and, for STABLEHLO_COMPOSITE, opt.subgraph_a. Ids follow the schema;
 * empty lists are not written. */
static size_t write_options2(fbb *b, const tfw_op *op, int type)
{
    static const mp_shlo_options none = {.body = 0};
    const mp_shlo_options *s = op->opt.shlo ? op->opt.shlo : &none;
    /* list fields: slot id of lists a..e (-1: not in this table) */
    int ids[5] = {-1, -1, -1, -1, -1};
    tb t;
    tb_init(&t);
    switch (type) {
    case OPT2_SCATTER: /* indices_are_sorted, update_window_dims, inserted_window_dims,
                          scatter_dims_to_operand_dims, index_vector_dim, unique_indices,
                          update_computation_subgraph_index */
        tb_u8(&t, 0, s->indices_are_sorted, 0);
        ids[0] = 1, ids[1] = 2, ids[2] = 3;
        tb_i64(&t, 4, s->index_vector_dim, 0);
        tb_u8(&t, 5, s->unique_indices, 0);
        tb_i32(&t, 6, s->body, 0);
        break;
    case OPT2_PAD:
        ids[0] = 0, ids[1] = 1, ids[2] = 2;
        break;
    case OPT2_REDUCE_WINDOW: /* window_dimensions, strides, base and window dilations, padding */
        ids[0] = 0, ids[1] = 1, ids[2] = 2, ids[3] = 3, ids[4] = 4;
        tb_i32(&t, 5, s->body, 0);
        break;
    case OPT2_GATHER: /* offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim,
                         slice_sizes, indices_are_sorted */
        ids[0] = 0, ids[1] = 1, ids[2] = 2, ids[3] = 4;
        tb_i64(&t, 3, s->index_vector_dim, 0);
        tb_u8(&t, 5, s->indices_are_sorted, 0);
        break;
    case OPT2_RNG_BIT_GENERATOR:
        tb_u8(&t, 0, s->rng_algorithm, 0);
        break;
    case OPT2_REDUCE_WINDOW_TFL:
        tb_i32(&t, 0, s->reduce_function, 0);
        break;
    case OPT2_COMPOSITE: /* name, decomposition_subgraph_index, ..., version */
        if (s->name && s->name[0])
            tb_ref(&t, 0);
        tb_i32(&t, 1, op->opt.subgraph_a, 0);
        tb_i32(&t, 4, s->version, 0);
        break;
    case OPT2_CASE:
        if (s->n_branches > 0)
            tb_ref(&t, 0);
        break;
    default: /* DilateOptions, StablehloShiftLeftOptions: no fields */
        break;
    }
    const mp_shlo_list *lists[5] = {&s->a, &s->b, &s->c, &s->d, &s->e};
    for (int k = 0; k < 5; k++)
        if (ids[k] >= 0 && lists[k]->n > 0)
            tb_ref(&t, ids[k]);
    size_t at = tb_write(b, &t);
    for (int k = 0; k < 5; k++)
        if (ids[k] >= 0 && lists[k]->n > 0)
            fb_link(b, t.f[ids[k]].pos, fb_i64_list(b, lists[k]));
    if (type == OPT2_COMPOSITE && s->name && s->name[0])
        fb_link(b, t.f[0].pos, fb_string(b, s->name));
    if (type == OPT2_CASE && s->n_branches > 0)
        fb_link(b, t.f[0].pos, fb_int_vector(b, s->n_branches, s->branches));
    return at;
}

static size_t write_operator(fbb *b, const tfw_op *op)
{
    int type2 = mp_tfw_options2_type(op->opcode);
    int type = op_options_type(op);
    tb t;
    tb_init(&t);
    tb_i32(&t, OPERATOR_OPCODE_INDEX, op->code_index, 0);
    tb_ref(&t, OPERATOR_INPUTS);
    tb_ref(&t, OPERATOR_OUTPUTS);
    tb_u8(&t, OPERATOR_BUILTIN_OPTIONS_TYPE, type, OPT_NONE);
    if (type != OPT_NONE)
        tb_ref(&t, OPERATOR_BUILTIN_OPTIONS);
    if (op->custom_options)
        tb_ref(&t, OPERATOR_CUSTOM_OPTIONS); /* custom_options_format: FLEXBUFFERS, the default */
    if (op->n_inter > 0)
        tb_ref(&t, OPERATOR_INTERMEDIATES);
    tb_u8(&t, OPERATOR_BUILTIN_OPTIONS_2_TYPE, type2, OPT2_NONE);
    if (type2 != OPT2_NONE)
        tb_ref(&t, OPERATOR_BUILTIN_OPTIONS_2);
    size_t at = tb_write(b, &t);
    fb_link(b, t.f[OPERATOR_INPUTS].pos, fb_int_vector(b, op->n_in, op->ins));
    fb_link(b, t.f[OPERATOR_OUTPUTS].pos, fb_int_vector(b, op->n_out, op->outs));
    if (type != OPT_NONE)
        fb_link(b, t.f[OPERATOR_BUILTIN_OPTIONS].pos, write_options(b, op, type));
    if (op->custom_options) {
        size_t v = fb_vector(b, (uint32_t)op->custom_options_size, 4);
        fb_put(b, op->custom_options, op->custom_options_size);
        fb_link(b, t.f[OPERATOR_CUSTOM_OPTIONS].pos, v);
    }
    if (op->n_inter > 0)
        fb_link(b, t.f[OPERATOR_INTERMEDIATES].pos, fb_int_vector(b, op->n_inter, op->inter));
    if (type2 != OPT2_NONE)
        fb_link(b, t.f[OPERATOR_BUILTIN_OPTIONS_2].pos, write_options2(b, op, type2));
    return at;
}

static size_t write_subgraph(fbb *b, const tfw_sub *w)
{
    tb t;
    tb_init(&t);
    tb_ref(&t, SUBGRAPH_TENSORS);
    tb_ref(&t, SUBGRAPH_INPUTS);
    tb_ref(&t, SUBGRAPH_OUTPUTS);
    tb_ref(&t, SUBGRAPH_OPERATORS);
    tb_ref(&t, SUBGRAPH_NAME);
    size_t at = tb_write(b, &t);

    size_t vec, elem = fb_offset_vector(b, w->n_tensors, &vec);
    fb_link(b, t.f[SUBGRAPH_TENSORS].pos, vec);
    for (int i = 0; i < w->n_tensors; i++)
        fb_link(b, elem + 4 * (size_t)i, write_tensor(b, &w->tensors[i]));

    fb_link(b, t.f[SUBGRAPH_INPUTS].pos, fb_int_vector(b, w->n_ins, w->ins));
    fb_link(b, t.f[SUBGRAPH_OUTPUTS].pos, fb_int_vector(b, w->n_outs, w->outs));

    elem = fb_offset_vector(b, w->n_ops, &vec);
    fb_link(b, t.f[SUBGRAPH_OPERATORS].pos, vec);
    for (int i = 0; i < w->n_ops; i++)
        fb_link(b, elem + 4 * (size_t)i, write_operator(b, &w->ops[i]));

    fb_link(b, t.f[SUBGRAPH_NAME].pos, fb_string(b, w->name));
    return at;
}

mp_status mp_tfw_finish(mp_tfw *w, void **bytes, size_t *size, mp_error *err)
{
    *bytes = NULL;
    *size = 0;
    if (w->fault != MP_OK)
        return mp_fail(err, w->fault, "tflite writer: %s", w->fault_msg);
    int ops0 = w->n_done ? w->done[0].n_ops : w->n_ops;
    int outs0 = w->n_done ? w->done[0].n_outs : w->n_outs;
    if (ops0 == 0 || outs0 == 0)
        return mp_fail(err, MP_ERR_ARG, "tflite writer: the model has no %s",
                       ops0 == 0 ? "operators" : "outputs (call mp_tfw_io)");

    fbb b;
    memset(&b, 0, sizeof b);
    /* header: root table offset, then the file identifier */
    fb_put(&b, NULL, 4);
    fb_put(&b, "TFL3", 4);

    tb m;
    tb_init(&m);
    tb_i32(&m, MODEL_VERSION, SCHEMA_VERSION, 0);
    tb_ref(&m, MODEL_OPERATOR_CODES);
    tb_ref(&m, MODEL_SUBGRAPHS);
    tb_ref(&m, MODEL_DESCRIPTION);
    tb_ref(&m, MODEL_BUFFERS);
    fb_link(&b, 0, tb_write(&b, &m));

    size_t vec, elem = fb_offset_vector(&b, w->n_codes, &vec);
    fb_link(&b, m.f[MODEL_OPERATOR_CODES].pos, vec);
    for (int i = 0; i < w->n_codes; i++)
        fb_link(&b, elem + 4 * (size_t)i, write_operator_code(&b, &w->codes[i]));

    elem = fb_offset_vector(&b, w->n_done + 1, &vec);
    fb_link(&b, m.f[MODEL_SUBGRAPHS].pos, vec);
    for (int k = 0; k <= w->n_done; k++) {
        tfw_sub cur = current_sub(w);
        fb_link(&b, elem + 4 * (size_t)k, write_subgraph(&b, k < w->n_done ? &w->done[k] : &cur));
    }

    fb_link(&b, m.f[MODEL_DESCRIPTION].pos, fb_string(&b, w->description));

    /* buffers: all Buffer tables first, then the data, so the constants form one block at
     * the end of the file with every buffer 16-byte aligned */
    elem = fb_offset_vector(&b, w->n_bufs, &vec);
    fb_link(&b, m.f[MODEL_BUFFERS].pos, vec);
    size_t *data_field = calloc((size_t)w->n_bufs, sizeof *data_field);
    if (!data_field)
        b.oom = true;
    for (int i = 0; i < w->n_bufs && !b.oom; i++) {
        tb t;
        tb_init(&t);
        if (w->bufs[i].bytes)
            tb_ref(&t, BUFFER_DATA);
        fb_link(&b, elem + 4 * (size_t)i, tb_write(&b, &t));
        data_field[i] = t.f[BUFFER_DATA].pos;
    }
    for (int i = 0; i < w->n_bufs && !b.oom; i++) {
        if (!w->bufs[i].bytes)
            continue;
        size_t v = fb_vector(&b, (uint32_t)w->bufs[i].bytes, 16);
        fb_put(&b, w->bufs[i].data, w->bufs[i].bytes);
        fb_link(&b, data_field[i], v);
    }
    free(data_field);
    fb_align(&b, 16);
    free(b.vtables);

    if (b.oom || b.len > 0x7fffffffu) {
        free(b.p);
        return b.oom ? mp_fail(err, MP_ERR_NOMEM, "tflite writer: out of memory")
                     : mp_fail(err, MP_ERR_ARG, "tflite writer: model exceeds 2 GiB");
    }
    *bytes = b.p;
    *size = b.len;
    return MP_OK;
}
