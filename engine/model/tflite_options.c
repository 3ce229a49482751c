/* The options of a .tflite model's operators (part of the reader, see tflite_reader.c):
 * the BuiltinOptions tables memprof maps into mp_op_options, every field checked (padding,
 * strides, dilations, activations, shapes, types). */
#include "engine/model/tflite_reader_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine/engine_limits.h"
#include "engine/model/flatbuf.h"
#include "engine/model/model.h"

/* BuiltinOptions union types of SplitOptions and SplitVOptions (schema.fbs). */
enum { BO_SPLIT = 35, BO_SPLIT_V = 79 };
/* ... of SparseToDenseOptions, UniqueOptions, ReverseSequenceOptions and BucketizeOptions. */
enum { BO_SPARSE_TO_DENSE = 50, BO_UNIQUE = 80, BO_REVERSE_SEQUENCE = 87, BO_BUCKETIZE = 115 };
/* ... of SpaceToDepthOptions, MirrorPadOptions and DepthToSpaceOptions. */
enum { BO_SPACE_TO_DEPTH = 19, BO_MIRROR_PAD = 77, BO_DEPTH_TO_SPACE = 94 };
/* ... of LocalResponseNormalizationOptions. */
enum { BO_LRN = 13 };

/* ... of CumsumOptions. */
enum { BO_CUMSUM = 102 };

/* ... of FakeQuantOptions, NonMaxSuppressionV4Options / V5Options and Rfft2dOptions (the last
 * three without fields). */
enum { BO_FAKE_QUANT = 58, BO_NMS_V4 = 95, BO_NMS_V5 = 96, BO_RFFT2D = 105 };

/* ... of CallOnceOptions and VarHandleOptions. */
enum { BO_CALL_ONCE = 103, BO_VAR_HANDLE = 111 };
/* ... of LSHProjectionOptions, SkipGramOptions, EmbeddingLookupSparseOptions and
 * HashtableOptions (the text and hashing operators). */
enum { BO_LSH_PROJECTION = 4, BO_SKIP_GRAM = 18, BO_EMBEDDING_LOOKUP_SPARSE = 20,
       BO_HASHTABLE = 107 };
/* ... of RandomOptions (RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL). */
enum { BO_RANDOM = 114 };
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
    {MP_OP_LOCAL_RESPONSE_NORMALIZATION, BO_LRN, "LocalResponseNormalizationOptions"},
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
    {MP_OP_SPARSE_TO_DENSE, BO_SPARSE_TO_DENSE, "SparseToDenseOptions"},
    {MP_OP_UNIQUE, BO_UNIQUE, "UniqueOptions"},
    {MP_OP_REVERSE_SEQUENCE, BO_REVERSE_SEQUENCE, "ReverseSequenceOptions"},
    {MP_OP_BUCKETIZE, BO_BUCKETIZE, "BucketizeOptions"},
    {MP_OP_CUMSUM, BO_CUMSUM, "CumsumOptions"},
    {MP_OP_UNPACK, BO_UNPACK, "UnpackOptions"},
    {MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM, BO_BIDI_SEQUENCE_LSTM, "BidirectionalSequenceLSTMOptions"},
    {MP_OP_BIDIRECTIONAL_SEQUENCE_RNN, BO_BIDI_SEQUENCE_RNN, "BidirectionalSequenceRNNOptions"},
    {MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, BO_UNI_SEQUENCE_LSTM, "UnidirectionalSequenceLSTMOptions"},
    {MP_OP_RESIZE_NEAREST_NEIGHBOR, BO_RESIZE_NEAREST, "ResizeNearestNeighborOptions"},
    {MP_OP_CONV_3D, BO_CONV3D, "Conv3DOptions"},
    {MP_OP_CONV_3D_TRANSPOSE, BO_CONV3D, "Conv3DOptions"},
    {MP_OP_SPLIT, BO_SPLIT, "SplitOptions"},
    {MP_OP_SPLIT_V, BO_SPLIT_V, "SplitVOptions"},
    {MP_OP_ARG_MAX, BO_ARG_MAX, "ArgMaxOptions"},
    {MP_OP_ARG_MIN, BO_ARG_MIN, "ArgMinOptions"},
    {MP_OP_LEAKY_RELU, BO_LEAKY_RELU, "LeakyReluOptions"},
    {MP_OP_IF, BO_IF, "IfOptions"},
    {MP_OP_WHILE, BO_WHILE, "WhileOptions"},
    {MP_OP_CALL_ONCE, BO_CALL_ONCE, "CallOnceOptions"},
    {MP_OP_VAR_HANDLE, BO_VAR_HANDLE, "VarHandleOptions"},
    {MP_OP_BATCH_MATMUL, BO_BATCH_MATMUL, "BatchMatMulOptions"},
    {MP_OP_GELU, BO_GELU, "GeluOptions"},
    {MP_OP_SPACE_TO_DEPTH, BO_SPACE_TO_DEPTH, "SpaceToDepthOptions"},
    {MP_OP_DEPTH_TO_SPACE, BO_DEPTH_TO_SPACE, "DepthToSpaceOptions"},
    {MP_OP_MIRROR_PAD, BO_MIRROR_PAD, "MirrorPadOptions"},
    {MP_OP_FAKE_QUANT, BO_FAKE_QUANT, "FakeQuantOptions"},
    {MP_OP_NON_MAX_SUPPRESSION_V4, BO_NMS_V4, "NonMaxSuppressionV4Options"},
    {MP_OP_NON_MAX_SUPPRESSION_V5, BO_NMS_V5, "NonMaxSuppressionV5Options"},
    {MP_OP_RFFT2D, BO_RFFT2D, "Rfft2dOptions"},
    {MP_OP_LSH_PROJECTION, BO_LSH_PROJECTION, "LSHProjectionOptions"},
    {MP_OP_SKIP_GRAM, BO_SKIP_GRAM, "SkipGramOptions"},
    {MP_OP_EMBEDDING_LOOKUP_SPARSE, BO_EMBEDDING_LOOKUP_SPARSE, "EmbeddingLookupSparseOptions"},
    {MP_OP_HASHTABLE, BO_HASHTABLE, "HashtableOptions"},
    {MP_OP_RANDOM_UNIFORM, BO_RANDOM, "RandomOptions"},
    {MP_OP_RANDOM_STANDARD_NORMAL, BO_RANDOM, "RandomOptions"},
    {MP_OP_MULTINOMIAL, BO_RANDOM, "RandomOptions"},
};

static const opt_kind *find_opt_kind(int code)
{
    for (size_t i = 0; i < sizeof k_opt_kinds / sizeof k_opt_kinds[0]; i++)
        if (k_opt_kinds[i].code == code)
            return &k_opt_kinds[i];
    return NULL;
}

/* ---- operator options ---------------------------------------------------------------- */

static mp_status check_act(rd *r, int32_t i, int code, uint8_t act)
{
    if (act > MP_ACT_SIGN_BIT)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): fused activation %u is not valid (0..5)",
                       i, mp_tfl_op_label(code), act);
    return MP_OK;
}

static mp_status check_padding(rd *r, int32_t i, int code, uint8_t pad)
{
    if (pad != MP_PAD_SAME && pad != MP_PAD_VALID)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): padding %u is not valid (SAME or VALID)",
                       i, mp_tfl_op_label(code), pad);
    return MP_OK;
}

static mp_status check_pair(rd *r, int32_t i, int code, const char *what, int32_t w, int32_t h)
{
    if (w < 1 || h < 1)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): %s %dx%d is not valid (must be >= 1)",
                       i, mp_tfl_op_label(code), what, w, h);
    return MP_OK;
}


/* LSTMOptions (fused_activation_function, cell_clip, proj_clip, kernel_type,
 * asymmetric_quantize_inputs) and UnidirectionalSequenceLSTMOptions (fused_activation_function,
 * cell_clip, proj_clip, time_major, asymmetric_quantize_inputs, diagonal_recurrent_tensors),
 * BidirectionalSequenceLSTMOptions (fused_activation_function, cell_clip, proj_clip,
 * merge_outputs, time_major = true, asymmetric_quantize_inputs). Clips are >= 0 (0: none). */
static mp_status read_lstm_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                  const mp_fb_table *ot, mp_op_options *o, uint8_t *act)
{
    mp_fb_reader *fb = &r->fb;
    TRY_FB(mp_fb_u8(fb, ot, 0, 0, "fused_activation_function", act) &&
           mp_fb_f32(fb, ot, 1, 0.0f, "cell_clip", &o->cell_clip) &&
           mp_fb_f32(fb, ot, 2, 0.0f, "proj_clip", &o->proj_clip));
    if (k->type == BO_LSTM) {
        uint8_t kt;
        TRY_FB(mp_fb_u8(fb, ot, 3, 0, "kernel_type", &kt) &&
               mp_fb_bool(fb, ot, 4, false, "asymmetric_quantize_inputs",
                          &o->asymmetric_quantize_inputs));
        if (kt > 1)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): LSTM kernel type %u is not valid (FULL or BASIC)",
                           i, mp_tfl_op_label(code), kt);
        o->lstm_kernel_type = kt;
    } else if (k->type == BO_BIDI_SEQUENCE_LSTM) { /* time_major defaults to true */
        TRY_FB(mp_fb_bool(fb, ot, 3, false, "merge_outputs", &o->merge_outputs) &&
               mp_fb_bool(fb, ot, 4, true, "time_major", &o->time_major) &&
               mp_fb_bool(fb, ot, 5, false, "asymmetric_quantize_inputs",
                          &o->asymmetric_quantize_inputs));
    } else {
        TRY_FB(mp_fb_bool(fb, ot, 3, false, "time_major", &o->time_major) &&
               mp_fb_bool(fb, ot, 4, false, "asymmetric_quantize_inputs",
                          &o->asymmetric_quantize_inputs) &&
               mp_fb_bool(fb, ot, 5, false, "diagonal_recurrent_tensors",
                          &o->diagonal_recurrent_tensors));
    }
    if (!(o->cell_clip >= 0.0f) || !(o->proj_clip >= 0.0f))
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): clip %g / %g is not valid (must be >= 0)",
                       i, mp_tfl_op_label(code), (double)o->cell_clip, (double)o->proj_clip);
    return MP_OK;
}

/* RNNOptions (fused_activation_function, asymmetric_quantize_inputs), SequenceRNNOptions
 * (time_major, fused_activation_function, asymmetric_quantize_inputs),
 * BidirectionalSequenceRNNOptions (the same with merge_outputs before
 * asymmetric_quantize_inputs) and SVDFOptions (rank >= 1, fused_activation_function,
 * asymmetric_quantize_inputs). */
static mp_status read_rnn_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                 const mp_fb_table *ot, mp_op_options *o, uint8_t *act)
{
    mp_fb_reader *fb = &r->fb;
    int aq = 2; /* field of asymmetric_quantize_inputs */
    switch (k->type) {
    case BO_RNN:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "fused_activation_function", act));
        aq = 1;
        break;
    case BO_SVDF:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "rank", &o->svdf_rank) &&
               mp_fb_u8(fb, ot, 1, 0, "fused_activation_function", act));
        if (o->svdf_rank < 1)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): rank %d is not valid (must be >= 1)",
                           i, mp_tfl_op_label(code), o->svdf_rank);
        break;
    default: /* SequenceRNNOptions, BidirectionalSequenceRNNOptions */
        TRY_FB(mp_fb_bool(fb, ot, 0, false, "time_major", &o->time_major) &&
               mp_fb_u8(fb, ot, 1, 0, "fused_activation_function", act));
        if (k->type == BO_BIDI_SEQUENCE_RNN) {
            TRY_FB(mp_fb_bool(fb, ot, 2, false, "merge_outputs", &o->merge_outputs));
            aq = 3;
        }
        break;
    }
    TRY_FB(mp_fb_bool(fb, ot, aq, false, "asymmetric_quantize_inputs",
                      &o->asymmetric_quantize_inputs));
    return MP_OK;
}

/* ArgMaxOptions / ArgMinOptions (output_type), LeakyReluOptions (alpha), IfOptions and
 * WhileOptions (two subgraph indices, non-negative; the operator checks them against the
 * model's subgraphs),
 * BatchMatMulOptions (adj_x, adj_y, asymmetric_quantize_inputs), GeluOptions (approximate). */
static mp_status read_misc_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                  const mp_fb_table *ot, mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    switch (k->type) {
    case BO_ARG_MAX:
    case BO_ARG_MIN:
        o->out_type = -1;
        if (mp_fb_has(fb, ot, 0)) {
            int8_t ty;
            TRY_FB(mp_fb_i8(fb, ot, 0, MP_DT_INT64, "output_type", &ty));
            if (ty != MP_DT_INT32 && ty != MP_DT_INT64)
                return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): output type %d is not i32 or i64",
                               i, mp_tfl_op_label(code), ty);
            o->out_type = ty;
        }
        break;
    case BO_LEAKY_RELU:
        TRY_FB(mp_fb_f32(fb, ot, 0, 0.0f, "alpha", &o->alpha));
        if (!isfinite(o->alpha))
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): alpha is not finite", i,
                           mp_tfl_op_label(code));
        break;
    case BO_IF:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "then_subgraph_index", &o->subgraph_a) &&
               mp_fb_i32(fb, ot, 1, 0, "else_subgraph_index", &o->subgraph_b));
        break;
    case BO_WHILE:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "cond_subgraph_index", &o->subgraph_a) &&
               mp_fb_i32(fb, ot, 1, 0, "body_subgraph_index", &o->subgraph_b));
        break;
    case BO_BATCH_MATMUL:
        TRY_FB(mp_fb_bool(fb, ot, 0, false, "adj_x", &o->adj_x) &&
               mp_fb_bool(fb, ot, 1, false, "adj_y", &o->adj_y) &&
               mp_fb_bool(fb, ot, 2, false, "asymmetric_quantize_inputs",
                          &o->asymmetric_quantize_inputs));
        break;
    case BO_GELU:
        TRY_FB(mp_fb_bool(fb, ot, 0, false, "approximate", &o->approximate));
        break;
    default:
        break;
    }
    if ((k->type == BO_IF || k->type == BO_WHILE) && (o->subgraph_a < 0 || o->subgraph_b < 0))
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): subgraph index %d / %d is negative",
                       i, mp_tfl_op_label(code), o->subgraph_a, o->subgraph_b);
    return MP_OK;
}

/* SparseToDenseOptions (validate_indices), UniqueOptions (idx_out_type: i32 or i64, kept in
 * out_type), ReverseSequenceOptions (seq_dim, batch_dim: >= 0) and BucketizeOptions
 * (boundaries: float32, ascending, no NaN; the vector stays in the model's bytes). */
static mp_status read_index_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                   const mp_fb_table *ot, mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    switch (k->type) {
    case BO_SPARSE_TO_DENSE:
        TRY_FB(mp_fb_bool(fb, ot, 0, false, "validate_indices", &o->validate_indices));
        break;
    case BO_UNIQUE: {
        int8_t ty;
        TRY_FB(mp_fb_i8(fb, ot, 0, MP_DT_INT32, "idx_out_type", &ty));
        if (ty != MP_DT_INT32 && ty != MP_DT_INT64)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): idx_out_type %d is not i32 or i64",
                           i, mp_tfl_op_label(code), ty);
        o->out_type = ty;
        break;
    }
    case BO_REVERSE_SEQUENCE:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "seq_dim", &o->seq_dim) &&
               mp_fb_i32(fb, ot, 1, 0, "batch_dim", &o->batch_dim));
        if (o->seq_dim < 0 || o->batch_dim < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): seq_dim %d / batch_dim %d is negative",
                           i, mp_tfl_op_label(code), o->seq_dim, o->batch_dim);
        break;
    case BO_BUCKETIZE: {
        mp_fb_vec v;
        TRY_FB(mp_fb_vector(fb, ot, 0, 4, "boundaries", &v));
        if (v.n > INT32_MAX)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): %u boundaries are too many",
                           i, mp_tfl_op_label(code), v.n);
        for (uint32_t b = 0; b < v.n; b++) {
            const float x = mp_fb_vec_f32(fb, &v, b);
            if (isnan(x) || (b > 0 && x < mp_fb_vec_f32(fb, &v, b - 1)))
                return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): boundaries must be sorted ascending (boundary %u is %g)",
                               i, mp_tfl_op_label(code), b, (double)x);
        }
        o->n_boundaries = (int32_t)v.n;
        o->boundaries = v.n ? mp_fb_vec_data(fb, &v) : NULL;
        break;
    }
    default:
        break;
    }
    return MP_OK;
}

/* LSHProjectionOptions (type: SPARSE or DENSE), SkipGramOptions (ngram_size >= 1,
 * max_skip_size >= 0, include_all_ngrams), EmbeddingLookupSparseOptions (combiner: SUM, MEAN
 * or SQRTN) and HashtableOptions (table_id, key_dtype, value_dtype: i64 -> string or
 * string -> i64, the tables TensorFlow Lite makes). */
static mp_status read_text_fields(rd *r, int32_t i, int code, const opt_kind *k,
                                  const mp_fb_table *ot, mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    uint8_t u8v;
    int8_t kd, vd;
    switch (k->type) {
    case BO_LSH_PROJECTION:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "type", &u8v));
        if (u8v != 1 && u8v != 2)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): type %u is not valid (SPARSE or DENSE)",
                           i, mp_tfl_op_label(code), u8v);
        o->lsh_type = u8v;
        break;
    case BO_SKIP_GRAM:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "ngram_size", &o->ngram_size) &&
               mp_fb_i32(fb, ot, 1, 0, "max_skip_size", &o->max_skip_size) &&
               mp_fb_bool(fb, ot, 2, false, "include_all_ngrams", &o->include_all_ngrams));
        if (o->ngram_size < 1 || o->max_skip_size < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): ngram_size %d / max_skip_size %d is not valid (>= 1, >= 0)",
                           i, mp_tfl_op_label(code), o->ngram_size, o->max_skip_size);
        break;
    case BO_EMBEDDING_LOOKUP_SPARSE:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "combiner", &u8v));
        if (u8v > 2)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): combiner %u is not valid (SUM, MEAN or SQRTN)",
                           i, mp_tfl_op_label(code), u8v);
        o->combiner = u8v;
        break;
    case BO_HASHTABLE:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "table_id", &o->table_id) &&
               mp_fb_i8(fb, ot, 1, 0, "key_dtype", &kd) &&
               mp_fb_i8(fb, ot, 2, 0, "value_dtype", &vd));
        if (!((kd == MP_DT_INT64 && vd == MP_DT_STRING) || (kd == MP_DT_STRING && vd == MP_DT_INT64)))
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): key and value dtypes %d -> %d are not valid (i64 -> string or string -> i64)",
                           i, mp_tfl_op_label(code), kd, vd);
        o->key_dtype = kd;
        o->value_dtype = vd;
        break;
    default:
        break;
    }
    return MP_OK;
}

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
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) has no %s", i, mp_tfl_op_label(code), k->table);
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
        o->stride_d = sd;
        o->dilation_d = dd;
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
            return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "operator %d (%s): new_shape has %u dimensions; memprof supports up to %d",
                           i, mp_tfl_op_label(code), v.n, MP_MAX_RANK);
        o->has_new_shape = v.present;
        o->n_new_shape = (int32_t)v.n;
        for (uint32_t d = 0; d < v.n; d++)
            o->new_shape[d] = mp_fb_vec_i32(fb, &v, d);
        break;
    case BO_SQUEEZE:
        TRY_FB(mp_fb_vector(fb, ot, 0, 4, "squeeze_dims", &v));
        if (v.n > MP_MAX_RANK)
            return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "operator %d (%s): squeeze_dims has %u entries; memprof supports up to %d",
                           i, mp_tfl_op_label(code), v.n, MP_MAX_RANK);
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
                return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): cast types %d -> %d are not valid dtypes",
                               i, mp_tfl_op_label(code), in, out);
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
                return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): output type %d is not i32 or i64",
                               i, mp_tfl_op_label(code), ty);
            o->out_type = ty;
        }
        break;
    case BO_PACK:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "values_count", &o->values_count) &&
               mp_fb_i32(fb, ot, 1, 0, "axis", &o->axis));
        if (o->values_count < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): values_count %d is negative",
                           i, mp_tfl_op_label(code), o->values_count);
        break;
    case BO_UNPACK: /* num goes to values_count: the same role mirrored */
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "num", &o->values_count) && mp_fb_i32(fb, ot, 1, 0, "axis", &o->axis));
        if (o->values_count < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): num %d is negative",
                           i, mp_tfl_op_label(code), o->values_count);
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
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): depth multiplier %d is not valid (must be >= 1)",
                           i, mp_tfl_op_label(code), o->depth_multiplier);
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

mp_status mp_tfl_read_options(rd *r, int32_t i, int code, uint8_t type, const mp_fb_table *t,
                              mp_op_options *o)
{
    mp_fb_reader *fb = &r->fb;
    const opt_kind *k = find_opt_kind(code);
    uint8_t pad = 0, act = 0, u8v;

    default_options(o);
    if (!k)
        return MP_OK; /* options memprof does not map: structurally checked by the caller */
    if (type != BO_NONE && type != k->type)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) carries options of union type %u, expected %s",
                       i, mp_tfl_op_label(code), type, k->table);
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
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): weights format %u is not valid",
                           i, mp_tfl_op_label(code), u8v);
        o->weights_format = u8v;
        break;
    case BO_SOFTMAX:
        TRY_FB(mp_fb_f32(fb, ot, 0, 0.0f, "beta", &o->beta));
        break;
    case BO_CONCATENATION:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "axis", &o->axis) &&
               mp_fb_u8(fb, ot, 1, 0, "fused_activation_function", &act));
        break;
    case BO_ADD: case BO_MUL: case BO_SUB: case BO_DIV: case BO_L2NORM:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "fused_activation_function", &act));
        if (k->type == BO_ADD || k->type == BO_SUB) { /* pot_scale_int16, default true */
            bool pot = true;
            TRY_FB(mp_fb_bool(fb, ot, 1, true, "pot_scale_int16", &pot));
            o->int16_general_scale = !pot;
        }
        break;
    case BO_LSTM:
    case BO_UNI_SEQUENCE_LSTM:
    case BO_BIDI_SEQUENCE_LSTM:
        TRY(read_lstm_fields(r, i, code, k, ot, o, &act));
        break;
    case BO_ARG_MAX:
    case BO_ARG_MIN:
    case BO_LEAKY_RELU:
    case BO_IF:
    case BO_WHILE:
    case BO_BATCH_MATMUL:
    case BO_GELU:
        TRY(read_misc_fields(r, i, code, k, ot, o));
        break;
    case BO_SVDF: case BO_RNN: case BO_SEQUENCE_RNN: case BO_BIDI_SEQUENCE_RNN:
        TRY(read_rnn_fields(r, i, code, k, ot, o, &act));
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
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "axis", &o->axis) &&
               mp_fb_i32(fb, ot, 1, 0, "batch_dims", &o->batch_dims));
        break;
    case BO_ONE_HOT:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "axis", &o->axis));
        break;
    case BO_CUMSUM:
        TRY_FB(mp_fb_bool(fb, ot, 0, false, "exclusive", &o->exclusive) &&
               mp_fb_bool(fb, ot, 1, false, "reverse", &o->reverse));
        break;
    case BO_SPARSE_TO_DENSE:
    case BO_UNIQUE:
    case BO_REVERSE_SEQUENCE:
    case BO_BUCKETIZE:
        TRY(read_index_fields(r, i, code, k, ot, o));
        break;
    case BO_LRN:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "radius", &o->lrn_radius) &&
               mp_fb_f32(fb, ot, 1, 0.0f, "bias", &o->lrn_bias) &&
               mp_fb_f32(fb, ot, 2, 0.0f, "alpha", &o->lrn_alpha) &&
               mp_fb_f32(fb, ot, 3, 0.0f, "beta", &o->lrn_beta));
        if (o->lrn_radius < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): radius %d is not valid (must be >= 0)",
                           i, mp_tfl_op_label(code), o->lrn_radius);
        if (!isfinite(o->lrn_bias) || !isfinite(o->lrn_alpha) || !isfinite(o->lrn_beta))
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): bias, alpha and beta must be finite",
                           i, mp_tfl_op_label(code));
        break;
    case BO_SPACE_TO_DEPTH:
    case BO_DEPTH_TO_SPACE:
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "block_size", &o->block_size));
        if (o->block_size < 1)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): block_size %d is not valid (must be >= 1)",
                           i, mp_tfl_op_label(code), o->block_size);
        break;
    case BO_MIRROR_PAD:
        TRY_FB(mp_fb_u8(fb, ot, 0, 0, "mode", &u8v));
        if (u8v > 1)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): mode %u is not valid (REFLECT or SYMMETRIC)",
                           i, mp_tfl_op_label(code), u8v);
        o->mirror_pad_mode = u8v;
        break;
    case BO_CALL_ONCE: /* the one callee in both slots: checked as a WHILE's (tflite_reader.c) */
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "init_subgraph_index", &o->subgraph_a));
        if (o->subgraph_a < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): init subgraph index %d is negative",
                           i, mp_tfl_op_label(code), o->subgraph_a);
        o->subgraph_b = o->subgraph_a;
        break;
    case BO_VAR_HANDLE: { /* the names that identify the variable, "" when absent */
        const char *c, *sn;
        uint32_t cl = 0, sl = 0;
        TRY_FB(mp_fb_string(fb, ot, 0, "container", &c, &cl) &&
               mp_fb_string(fb, ot, 1, "shared_name", &sn, &sl));
        o->var_container = mp_tfl_strdup(r->im, c ? c : "", c ? cl : 0);
        o->var_shared_name = mp_tfl_strdup(r->im, sn ? sn : "", sn ? sl : 0);
        if (!o->var_container || !o->var_shared_name)
            return mp_tfl_nomem(r);
        break;
    }
    case BO_FAKE_QUANT:
        TRY_FB(mp_fb_f32(fb, ot, 0, 0.0f, "min", &o->fq_min) &&
               mp_fb_f32(fb, ot, 1, 0.0f, "max", &o->fq_max) &&
               mp_fb_i32(fb, ot, 2, 0, "num_bits", &o->fq_num_bits) &&
               mp_fb_bool(fb, ot, 3, false, "narrow_range", &o->fq_narrow_range));
        if (o->fq_num_bits < 2 || o->fq_num_bits > 16)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): num_bits %d is not valid (2 to 16)",
                           i, mp_tfl_op_label(code), o->fq_num_bits);
        if (!isfinite(o->fq_min) || !isfinite(o->fq_max) || !(o->fq_min <= o->fq_max))
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): range [%g, %g] is not valid (finite, min <= max)",
                           i, mp_tfl_op_label(code), (double)o->fq_min, (double)o->fq_max);
        break;
    case BO_RANDOM: { /* seed, seed2: any value (both 0: memprof's seed) */
        uint64_t s = 0, s2 = 0;
        TRY_FB(mp_fb_u64(fb, ot, 0, 0, "seed", &s) && mp_fb_u64(fb, ot, 1, 0, "seed2", &s2));
        o->random_seed = (int64_t)s;
        o->random_seed2 = (int64_t)s2;
        break;
    }
    case BO_LSH_PROJECTION:
    case BO_SKIP_GRAM:
    case BO_EMBEDDING_LOOKUP_SPARSE:
    case BO_HASHTABLE:
        TRY(read_text_fields(r, i, code, k, ot, o));
        break;
    case BO_SPLIT:
    case BO_SPLIT_V: /* checked against the outputs by the kernel */
        TRY_FB(mp_fb_i32(fb, ot, 0, 0, "num_splits", &o->num_splits));
        if (o->num_splits < 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): num_splits %d is negative",
                           i, mp_tfl_op_label(code), o->num_splits);
        break;
    default:
        break;
    }

    TRY(check_act(r, i, code, act));
    o->activation = act;
    return check_window_fields(r, i, code, k, o, pad);
}
