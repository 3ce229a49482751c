/* The in-memory form of a TensorFlow Lite model, produced by the .tflite reader.
 *
 * An mp_model is immutable after loading. Constant tensor data points straight into the
 * mapped file (copied only when misaligned, and a sparse constant is expanded at load into
 * its dense form in model memory, so kernels see dense constants only). Every index in it
 * has been verified: tensor indices are in range (or -1 where the operator allows an
 * optional input), buffers fit the file, shapes times dtype size match their constant data.
 * Code above the reader can trust it. */
#ifndef MP_MODEL_H
#define MP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/status.h"
#include "engine/model/ops.h"

#define MP_MAX_RANK 8

/* Bytes readable (zeros) past the end of a loaded model's bytes: constants are used in place
 * and XNNPACK kernels may read up to XNN_EXTRA_BYTES (16) past the end of an input. */
#define MP_MODEL_TAIL_SLACK 16

/* TensorFlow Lite TensorType numbering. */
typedef enum mp_dtype {
    MP_DT_FLOAT32 = 0,
    MP_DT_FLOAT16 = 1,
    MP_DT_INT32 = 2,
    MP_DT_UINT8 = 3,
    MP_DT_INT64 = 4,
    MP_DT_STRING = 5,
    MP_DT_BOOL = 6,
    MP_DT_INT16 = 7,
    MP_DT_COMPLEX64 = 8,
    MP_DT_INT8 = 9,
    MP_DT_FLOAT64 = 10,
    MP_DT_COMPLEX128 = 11,
    MP_DT_UINT64 = 12,
    MP_DT_RESOURCE = 13,
    MP_DT_VARIANT = 14,
    MP_DT_UINT32 = 15,
    MP_DT_UINT16 = 16,
    MP_DT_INT4 = 17,
    MP_DT_COUNT
} mp_dtype;

/* Bytes per element; 0 for types without a fixed size (string, variant, int4). A resource
 * is a handle: the 4-byte id of a resource variable (VAR_HANDLE). */
size_t mp_dtype_size(mp_dtype dt);
/* Short name: "f32", "i32", "u8", ... ("?" when out of range). */
const char *mp_dtype_name(mp_dtype dt);

/* Quantization parameters (per-tensor when count == 1, per-channel otherwise). Arrays
 * point into the mapped file when the file stores them aligned, else into model memory.
 * Verified by the reader (TensorFlow Lite's quantization specification): quantized_dimension
 * is a dimension of the tensor (a rank-1 tensor's is 0) and per-channel arrays have one entry
 * per slice along it; on integer tensors every scale is positive and finite and every zero
 * point lies in its dtype's range (uint8 0..255, int8 -128..127, int4 -8..7; 0 for int16,
 * int32 and int64); the int8 constant weights of CONV_2D, DEPTHWISE_CONV_2D and
 * FULLY_CONNECTED have zero point 0. Float tensors keep what they carry, unchecked. */
typedef struct mp_quant {
    int32_t count;             /* number of scales (0: not quantized) */
    const float *scale;
    const int64_t *zero_point; /* count entries, or NULL when absent (all zero) */
    int32_t quantized_dimension;
} mp_quant;

typedef struct mp_tensor_info {
    const char *name;          /* NUL-terminated copy, never NULL ("" when absent) */
    mp_dtype dtype;
    int32_t rank;
    int32_t shape[MP_MAX_RANK];
    bool has_signature;        /* shape_signature present */
    int32_t signature[MP_MAX_RANK]; /* -1 = dynamic dimension */
    int32_t buffer;            /* buffer index (0 = none) */
    const void *data;          /* constant data in the mapped file (or its dense copy in
                                  model memory, for a sparse tensor), or NULL */
    size_t data_bytes;         /* size of that data */
    bool packed_int4;          /* the file stores it as int4, two values to a byte: dtype is
                                  int8 and data its unpacking into model memory */
    bool is_variable;
    mp_quant quant;
} mp_tensor_info;

/* Flattened builtin options. Only the fields an operator's options table defines are
 * meaningful for it; the reader fills schema defaults for absent fields. */
typedef enum { MP_PAD_SAME = 0, MP_PAD_VALID = 1 } mp_padding;
typedef enum {
    MP_ACT_NONE = 0,
    MP_ACT_RELU = 1,
    MP_ACT_RELU_N1_TO_1 = 2,
    MP_ACT_RELU6 = 3,
    MP_ACT_TANH = 4,
    MP_ACT_SIGN_BIT = 5
} mp_activation;

/* TFLite_Detection_PostProcess's options (its FlexBuffer custom options, checked by the
 * reader: counts positive, iou_threshold in (0, 1], score_threshold a number, scales
 * non-zero and finite). */
typedef struct mp_detection_options {
    int32_t max_detections;
    int32_t max_classes_per_detection; /* fast NMS: classes kept per box */
    int32_t detections_per_class;      /* regular NMS (default 100) */
    int32_t num_classes;               /* without the background class */
    bool use_regular_nms;              /* default false: fast NMS */
    float score_threshold;             /* nms_score_threshold: kept when score >= it */
    float iou_threshold;               /* nms_iou_threshold: suppressed when IoU > it */
    float y_scale, x_scale, h_scale, w_scale;
} mp_detection_options;

/* The StableHLO operators' options (schema.fbs's builtin_options_2, a BuiltinOptions2 table),
 * read into model memory and pointed at by mp_op_options.shlo (NULL for other operators).
 * Lists hold at most 2 * MP_MAX_RANK values (checked by the reader); what they mean is the
 * StableHLO spec's, per operator:
 *   STABLEHLO_PAD: a = edge_padding_low, b = edge_padding_high, c = interior_padding;
 *   STABLEHLO_REDUCE_WINDOW: a = window_dimensions, b = window_strides, c = base_dilations,
 *     d = window_dilations, e = padding (low, high pairs), body the reducer's subgraph;
 *   STABLEHLO_GATHER: a = offset_dims, b = collapsed_slice_dims, c = start_index_map,
 *     d = slice_sizes, index_vector_dim, indices_are_sorted;
 *   STABLEHLO_SCATTER: a = update_window_dims, b = inserted_window_dims,
 *     c = scatter_dims_to_operand_dims, index_vector_dim, indices_are_sorted, unique_indices,
 *     body the update computation's subgraph;
 *   STABLEHLO_COMPOSITE: name, version (its decomposition subgraph is subgraph_a and b);
 *   STABLEHLO_RNG_BIT_GENERATOR: rng_algorithm (0 DEFAULT, 1 PHILOX, 2 THREEFRY);
 *   REDUCE_WINDOW (ReduceWindowOptions): reduce_function (1 ADD .. 6 ANY);
 *   STABLEHLO_CASE: n_branches subgraph indices at branches.
 * body_op: what the body subgraph of a REDUCE_WINDOW or SCATTER computes, found by the reader
 * (TensorFlow Lite's kernels look at it the same way): MP_OP_ADD, MP_OP_MUL, MP_OP_MAXIMUM,
 * MP_OP_MINIMUM, MP_OP_LOGICAL_AND, MP_OP_LOGICAL_OR (or their STABLEHLO_ codes, mapped
 * to those), or -1 for a body that gives its second input (SCATTER's replacement). */
#define MP_SHLO_LIST (2 * MP_MAX_RANK)
/* Most branches of a STABLEHLO_CASE memprof reads. */
#define MP_MAX_CASE_BRANCHES 1024
typedef struct mp_shlo_list {
    int32_t n;
    int64_t v[MP_SHLO_LIST];
} mp_shlo_list;

typedef struct mp_shlo_options {
    mp_shlo_list a, b, c, d, e;
    int64_t index_vector_dim;
    bool indices_are_sorted, unique_indices;
    int32_t body;              /* subgraph index, -1 when the options have none */
    int32_t body_op;
    int32_t rng_algorithm;
    int32_t reduce_function;
    const char *name;          /* STABLEHLO_COMPOSITE ("" when absent) */
    int32_t version;
    int32_t n_branches;
    const int32_t *branches;
} mp_shlo_options;

typedef struct mp_op_options {
    int32_t padding;           /* mp_padding: CONV_2D, DEPTHWISE_CONV_2D, pools */
    int32_t stride_w, stride_h;
    int32_t dilation_w, dilation_h;   /* default 1 */
    int32_t filter_w, filter_h;       /* pools */
    int32_t depth_multiplier;         /* DEPTHWISE_CONV_2D */
    int32_t activation;        /* mp_activation: fused activation of any op that has one */
    float beta;                /* SOFTMAX */
    int32_t axis;              /* CONCATENATION, PACK, ONE_HOT (-1: last) */
    int32_t values_count;      /* PACK */
    int32_t num_splits;        /* SPLIT, SPLIT_V: number of outputs */
    bool keep_dims;            /* MEAN and other reducers */
    bool keep_num_dims;        /* FULLY_CONNECTED */
    int32_t weights_format;    /* FULLY_CONNECTED: 0 = DEFAULT */
    bool align_corners, half_pixel_centers; /* RESIZE_BILINEAR */
    int32_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask; /* STRIDED_SLICE */
    bool offset;               /* STRIDED_SLICE */
    int32_t out_type;          /* SHAPE, ARG_MAX, ARG_MIN: mp_dtype of the output (default
                                  INT32; ARG_MAX/ARG_MIN without the field: -1, the output
                                  tensor's dtype) */
    int32_t in_data_type, out_data_type; /* CAST (may be absent: -1) */
    bool has_new_shape;        /* RESHAPE: new_shape option present */
    int32_t n_new_shape;
    int32_t new_shape[MP_MAX_RANK];
    int32_t n_squeeze_dims;    /* SQUEEZE */
    int32_t squeeze_dims[MP_MAX_RANK];
    int32_t batch_dims;        /* GATHER */
    float alpha;               /* LEAKY_RELU */
    bool adj_x, adj_y;         /* BATCH_MATMUL: transpose the last two dims of x, of y */
    bool approximate;          /* GELU: the tanh approximation */
    bool exclusive, reverse;   /* CUMSUM: sum before the element; from the end of the axis */
    bool asymmetric_quantize_inputs; /* hybrid FULLY_CONNECTED, BATCH_MATMUL, LSTMs */
    float cell_clip, proj_clip; /* LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM: 0 = no clipping */
    int32_t lstm_kernel_type;  /* LSTM: 0 FULL, 1 BASIC */
    bool time_major;           /* UNIDIRECTIONAL_SEQUENCE_LSTM: [time, batch, ...] */
    bool diagonal_recurrent_tensors; /* UNIDIRECTIONAL_SEQUENCE_LSTM */
    int32_t subgraph_a, subgraph_b; /* WHILE: cond, body; IF: then, else (subgraph indices) */
    mp_detection_options detection; /* TFLite_Detection_PostProcess */
    int32_t block_size;        /* DEPTH_TO_SPACE, SPACE_TO_DEPTH (>= 1 when read) */
    int32_t mirror_pad_mode;   /* MIRROR_PAD: 0 REFLECT, 1 SYMMETRIC */
    /* BIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_LSTM: one output [.., fw + bw units]
     * (time_major and asymmetric_quantize_inputs above serve the RNNs and SVDF too) */
    bool merge_outputs;
    int32_t svdf_rank;         /* SVDF: rank (>= 1 when read) */
    /* CONV_3D, CONV_3D_TRANSPOSE: depth stride and dilation (>= 1 when read; stride_w/h,
     * dilation_w/h, padding and activation as for CONV_2D); LOCAL_RESPONSE_NORMALIZATION:
     * radius (>= 0), bias, alpha, beta (finite) */
    int32_t stride_d, dilation_d;
    int32_t lrn_radius;
    float lrn_bias, lrn_alpha, lrn_beta;
    /* VAR_HANDLE (VarHandleOptions): the resource variable's container and shared_name (""
     * when absent; NULL in the options of other operators). CALL_ONCE's init_subgraph_index
     * is kept in subgraph_a and subgraph_b alike (one callee, checked as a WHILE's). */
    const char *var_container, *var_shared_name;
    float fq_min, fq_max;      /* FAKE_QUANT: the range (checked finite, min <= max) */
    int32_t fq_num_bits;       /* FAKE_QUANT: 2..16 */
    bool fq_narrow_range;      /* FAKE_QUANT */
    /* SPARSE_TO_DENSE, REVERSE_SEQUENCE, BUCKETIZE (UNIQUE's idx_out_type goes to out_type) */
    bool validate_indices;     /* SPARSE_TO_DENSE: read; not enforced, as in TensorFlow Lite */
    int32_t seq_dim, batch_dim; /* REVERSE_SEQUENCE (>= 0 when read) */
    int32_t n_boundaries;      /* BUCKETIZE: that many ascending float32 boundaries, */
    const void *boundaries;    /* little-endian, maybe unaligned (in the model's bytes) */
    /* HASHTABLE (HashtableOptions): the table's id and its key and value dtypes (mp_dtype:
     * i64 -> string or string -> i64, checked); LSH_PROJECTION: lsh_type 1 SPARSE, 2 DENSE;
     * SKIP_GRAM: ngram_size (>= 1), max_skip_size (>= 0), include_all_ngrams;
     * EMBEDDING_LOOKUP_SPARSE: combiner 0 SUM, 1 MEAN, 2 SQRTN */
    int32_t table_id, key_dtype, value_dtype;
    int32_t lsh_type;
    int32_t ngram_size, max_skip_size;
    bool include_all_ngrams;
    int32_t combiner;
    /* RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL (RandomOptions): the generator's
     * seeds (both 0: a seed of memprof's choosing, engine/kernels/random.c) */
    int64_t random_seed, random_seed2;
    /* ADD, SUB (16x8): the schema's pot_scale_int16 negated, so zeroed options keep its
     * default (true): set when the file says false (int16 inputs take the general path) */
    bool int16_general_scale;
    /* AudioSpectrogram (custom): window_size and stride in samples (>= 2, >= 1 when read),
     * magnitude_squared (else the magnitude) */
    int32_t spec_window, spec_stride;
    bool spec_magnitude_squared;
    /* Mfcc (custom): the filterbank's frequency limits in Hz (whole numbers, as TensorFlow Lite
     * reads them; 0 <= lower < upper when read), filterbank_channel_count (>= 1) and
     * dct_coefficient_count (1..filterbank_channel_count) */
    float mfcc_lower_hz, mfcc_upper_hz;
    int32_t mfcc_channels, mfcc_dct_count;
    /* NumericVerify (custom): tolerance (a fraction of the input's scale), log_if_failed */
    float nv_tolerance;
    bool nv_log_if_failed;
    /* The StableHLO operators' builtin_options_2 (the reader gives every operator whose table
     * it maps one, defaults when the file has none; NULL for the others, and read as all
     * defaults by the kernels); see mp_shlo_options above. */
    const mp_shlo_options *shlo;
} mp_op_options;

typedef struct mp_op_info {
    int32_t opcode;            /* builtin code (mp_op_code), resolved from the operator code
                                  table; a custom operator memprof runs has a code of its own
                                  (MP_OP_DETECTION_POSTPROCESS ..., ops.h) */
    int32_t version;
    const char *custom_code;   /* non-NULL for CUSTOM operators */
    const uint8_t *custom_options; /* the operator's raw custom_options bytes (in the mapped
                                      file), NULL when absent */
    size_t custom_options_size;
    int32_t n_inputs, n_outputs, n_intermediates;
    const int32_t *inputs;     /* tensor indices, -1 = optional input omitted */
    const int32_t *outputs;
    const int32_t *intermediates; /* n_intermediates tensor indices (LSTM-style operators) */
    mp_op_options opt;
} mp_op_info;

/* Deepest chain of subgraph calls (a WHILE whose body holds an IF ...) memprof runs. */
#define MP_MAX_SUBGRAPH_DEPTH 32

typedef struct mp_model {
    const char *path;          /* file name for messages ("<memory>" when loaded from bytes) */
    uint32_t version;          /* schema version */
    const char *description;
    int32_t n_tensors;
    mp_tensor_info *tensors;
    int32_t n_ops;
    mp_op_info *ops;           /* in execution order */
    int32_t n_inputs, n_outputs;
    const int32_t *inputs;     /* subgraph input tensor indices */
    const int32_t *outputs;
    const char *subgraph_name;
    size_t file_bytes;
    size_t const_bytes;        /* sum of constant tensor data used in place */
    size_t heap_bytes;         /* heap the model's own tables and names hold */
    size_t dense_bytes;        /* of heap_bytes: the dense copies of sparse constants */
    size_t unpacked_bytes;     /* of heap_bytes: the int8 unpacking of int4 constants */
    void *impl;                /* reader-private: mapping and owned arrays */
    /* A model of several subgraphs (WHILE, IF and CALL_ONCE call them by index): the
     * fields above are subgraph 0's, the one that runs; n_subgraphs counts it too, and
     * sub[k - 1] is subgraph k, a view with its own tensors, ops, inputs, outputs and
     * subgraph_name, a path for messages naming it ("PATH (subgraph K)"), and the rest
     * (version, description, sizes) as this model's,
     * owns nothing (impl NULL, n_subgraphs 0) and is freed with it (never mp_model_free it).
     * Verified by the reader: every WHILE / IF / CALL_ONCE names subgraphs in range, their
     * input and output counts and dtypes match the operator's (a WHILE's cond ends in one bool,
     * a CALL_ONCE's subgraph takes and gives nothing), and no subgraph calls itself, directly
     * or not, nor nests deeper than MP_MAX_SUBGRAPH_DEPTH. */
    int32_t n_subgraphs;
    const struct mp_model *sub;
} mp_model;

/* Subgraph k of m (0 = m itself), or NULL when out of range. */
const mp_model *mp_model_subgraph(const mp_model *m, int32_t k);

/* The subgraphs operator op calls (model_calls.c): how many (WHILE, IF 2; CALL_ONCE,
 * STABLEHLO_COMPOSITE 1; STABLEHLO_CASE its branches; others 0), and the q-th (-1 when q is
 * not one of them). The same subgraph may come twice (an IF whose branches are one). */
int32_t mp_op_n_callees(const mp_op_info *op);
int32_t mp_op_callee(const mp_op_info *op, int32_t q);

/* Load and verify a .tflite file (mapped read-only; constants stay in the mapping).
 * Errors: MP_ERR_IO (cannot open/map), MP_ERR_FORMAT (malformed, truncated, empty model,
 * a WHILE, IF or CALL_ONCE calling a subgraph that does not exist, does not fit it or calls
 * itself; malformed custom options of a custom operator memprof runs), MP_ERR_UNSUPPORTED
 * (a custom operator memprof does not run (ops.h), an unknown builtin operator, an
 * unsupported feature such as a sparse tensor of a dtype without a fixed size, subgraphs
 * nested deeper than MP_MAX_SUBGRAPH_DEPTH; malformed sparsity parameters are
 * MP_ERR_FORMAT). The message names the file and the fault. */
mp_status mp_model_load_file(const char *path, mp_model **out, mp_error *err);
/* Same from bytes in memory; the bytes are copied once into an owned aligned buffer. */
mp_status mp_model_load_memory(const void *bytes, size_t size, const char *label, mp_model **out,
                               mp_error *err);
void mp_model_free(mp_model *m);
/* Open a model by spec: a .tflite path, or "zoo:NAME" for a built-in model (model/zoo.h). */
mp_status mp_model_open(const char *spec, mp_model **out, mp_error *err);

/* Element count of a shape (returns false on overflow or negative dims). */
bool mp_shape_elements(int32_t rank, const int32_t *shape, size_t *out);

#endif
