/* What the .tflite reader's files share, private to them (tflite_reader.c reads the model
 * and its operators, tflite_tensors.c its tensors and constant data, tflite_sparsity.c the
 * sparse ones, tflite_options.c the operators' options, tflite_custom.c the custom options of
 * the custom operators memprof runs): the schema's field ids, the reading context, the
 * model-owned arena and the messages. Nothing else includes this. */
#ifndef MP_TFLITE_READER_INTERNAL_H
#define MP_TFLITE_READER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model/flatbuf.h"
#include "engine/model/model.h"

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
       OP_CUSTOM_OPTIONS = 5, OP_CUSTOM_OPTIONS_FORMAT = 6, OP_INTERMEDIATES = 8,
       OP_OPTIONS2_TYPE = 11, OP_OPTIONS2 = 12 };

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
    BO_ARG_MAX = 40,
    BO_ARG_MIN = 57,
    BO_LEAKY_RELU = 75,
    BO_IF = 92,
    BO_WHILE = 93,
    BO_BATCH_MATMUL = 101,
    BO_GELU = 116,
};

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

/* ---- reading context and messages ---------------------------------------------------- */

typedef struct rd {
    mp_fb_reader fb;
    const char *path;   /* for messages */
    mp_error *err;
    mp_model *m;        /* the model (subgraph 0) */
    rd_impl *im;
    int32_t sg;         /* the subgraph being read: messages name it when it is not 0 */
    const mp_tensor_info *tensors; /* its tensors (read before its operators) */
    mp_fb_vec opcodes;     /* Model.operator_codes */
    mp_fb_vec buffers;     /* Model.buffers */
    uint8_t *counted;   /* one bit per buffer: already added to const_bytes */
    size_t densified;   /* bytes of the dense copies of sparse tensors made so far */
} rd;

/* ---- model-owned memory (tflite_reader.c) ---- */

/* Allocate n bytes (16-aligned; n == 0 gives a valid pointer). NULL when out of memory or
 * over budget. */
void *mp_tfl_alloc(rd_impl *im, size_t n);
/* n zeroed elements of elem bytes; NULL on overflow, out of memory or over budget. */
void *mp_tfl_array(rd_impl *im, size_t n, size_t elem);
/* Zeroed model memory for `bytes` of constant data the reader makes (a sparse tensor's dense
 * form, an int4 tensor's unpacking), with MP_MODEL_TAIL_SLACK readable bytes after it as
 * after the file's constants; outside the bookkeeping budget (it is data, not tables), which
 * grows by what it takes. NULL on overflow or out of memory. */
void *mp_tfl_data(rd_impl *im, size_t bytes);
/* Copy a string from the file. Control characters become '?'. */
char *mp_tfl_strdup(rd_impl *im, const char *s, size_t len);

/* ---- messages (tflite_reader.c) ---- */

/* Fail with st and a message "PATH: ...". */
mp_status mp_tfl_fail(rd *r, mp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A fault found by the FlatBuffers helpers. */
mp_status mp_tfl_fb_fault(rd *r);
/* Out of memory, or over the bookkeeping budget (a malformed file). */
mp_status mp_tfl_nomem(rd *r);
/* A name from the file, made safe for a one-line message. */
const char *mp_tfl_safe(const char *s, char *buf, size_t cap);
/* An operator's name for messages ("?" when unknown). */
const char *mp_tfl_op_label(int code);

/* Return at once on a FlatBuffers fault (x false) or a failed status (in a function with an
 * rd *r in scope). */
#define TRY_FB(x) do { if (!(x)) return mp_tfl_fb_fault(r); } while (0)
#define TRY(x) do { mp_status st_ = (x); if (st_ != MP_OK) return st_; } while (0)

/* ---- parts read in their own files ---- */

/* Tensor i of the subgraph's tensors into ti (tflite_tensors.c). */
mp_status mp_tfl_read_tensor(rd *r, const mp_fb_vec *tensors, int32_t i, mp_tensor_info *ti);
/* Sparse tensor i (Tensor.sparsity: table sp, present) whose buffer holds `bytes` bytes at
 * data (NULL: buffer 0): its SparsityParameters verified against the shape (`elements`
 * elements) and the stored values, then expanded into ti->data, dense and row-major, in model
 * memory (tflite_sparsity.c). */
mp_status mp_tfl_read_sparse(rd *r, int32_t i, const char *nm, const mp_fb_table *sp,
                             const uint8_t *data, size_t bytes, size_t elements,
                             mp_tensor_info *ti);
/* The options of operator i (builtin code, union type and table t) into o
 * (tflite_options.c). */
mp_status mp_tfl_read_options(rd *r, int32_t i, int code, uint8_t type, const mp_fb_table *t,
                              mp_op_options *o);
/* The builtin_options_2 of operator i (builtin code, BuiltinOptions2 union type and table t)
 * into o->shlo, for the StableHLO operators whose table memprof maps (tflite_options2.c);
 * every list's length and every value checked, subgraph indices only for being >= 0 (their
 * range and what a body computes: mp_tfl_check_shlo_calls). */
mp_status mp_tfl_read_options2(rd *r, int32_t i, int code, uint8_t type, const mp_fb_table *t,
                               mp_op_options *o);
/* Operator i of subgraph `caller`, a StableHLO operator naming a subgraph that is looked at,
 * not called (a REDUCE_WINDOW's or SCATTER's body): index in range, and the body's computation
 * into shlo->body_op (tflite_options2.c). */
mp_status mp_tfl_check_shlo_calls(rd *r, const mp_model *caller, int32_t i);
/* The custom options of operator i, a custom operator memprof runs (op->opcode), read into
 * op->opt and checked (tflite_custom.c). */
mp_status mp_tfl_read_custom_options(rd *r, int32_t i, mp_op_info *op);
/* MediaPipe's Convolution2DTransposeBias (TfLiteTransposeConvParams) and MaxPoolingWithArgmax2D
 * / MaxUnpooling2D (TfLitePoolParams) raw custom options into op->opt, checked
 * (tflite_custom_mediapipe.c). */
mp_status mp_tfl_read_tconv_bias_options(rd *r, int32_t i, mp_op_info *op);
mp_status mp_tfl_read_mediapipe_pool_options(rd *r, int32_t i, mp_op_info *op);

#endif
